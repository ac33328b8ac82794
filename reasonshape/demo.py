"""``reasonshape demo``: the main jobs on embedded defaults, offline, on CPU, in under a minute.

1. every registered puzzle: generate an instance per level, render its prompt, solve it (uniqueness proven),
   check the solution by the rules and score a deduction-engine trace (claim graph, eta);
2. ``reasonshape eval`` on the real traces shipped with the package (report.md / report.html);
3. a CPU GRPO smoke run (tiny local model, every reward active) with ``configs/grpo_cpu_smoke.yaml``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

__all__ = ["add_parser", "main"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("demo", help="run the main jobs on embedded defaults (offline, CPU, under a minute)")
    p.add_argument("--out", default="runs/demo", help="output folder (default: runs/demo)")
    p.add_argument("--skip", nargs="*", default=[], choices=("puzzles", "eval", "train"),
                   help="steps to skip")
    p.set_defaults(func=main)
    return p


def puzzles_step(seed: int = 0) -> list[dict]:
    """Generate, render, solve, check and score one instance per (puzzle, level); returns one row per puzzle."""
    from reasonshape import envs
    from reasonshape.extraction import deduce_trace
    from reasonshape.rewards.scorer import score_completion

    rows = []
    for name in envs.list_puzzles():
        p = envs.get(name)
        t0 = time.perf_counter()
        etas = []
        for level in envs.LEVEL_NAMES:
            inst = p.generate(level, seed=seed)
            if "<answer>" not in p.render_prompt(inst):
                raise RuntimeError(f"{name} {level}: the prompt does not ask for an <answer> block")
            sol = p.unique_solution(inst)
            if not p.check(inst, sol).ok:
                raise RuntimeError(f"{name} {level}: the solver's solution fails the rules check")
            if level in ("trivial", "easy"):
                trace = deduce_trace(p, inst, "focused")
                sc = score_completion(p, inst, trace.text, paths=False)
                if not sc.correct:
                    raise RuntimeError(f"{name} {level}: the engine's trace does not end in a correct answer")
                etas.append(sc.eta)
        rows.append({"puzzle": name, "seconds": time.perf_counter() - t0,
                     "eta_focused": [None if e is None else round(e, 3) for e in etas]})
        print(f"  {name:9s} 4 levels generated, solved (unique), checked; eta of focused traces (trivial, easy) "
              f"{rows[-1]['eta_focused']}"
              f"  ({rows[-1]['seconds']:.1f}s)", flush=True)
    return rows


def smoke_config() -> Path | None:
    """``configs/grpo_cpu_smoke.yaml``: the source checkout's copy beside this package (an editable install or a
    checkout, wherever the demo runs from), else the current folder's, else ``None`` (a wheel ships no configs)."""
    for path in (Path(__file__).resolve().parents[1] / "configs" / "grpo_cpu_smoke.yaml",
                 Path("configs") / "grpo_cpu_smoke.yaml"):
        if path.is_file():
            return path
    return None


def main(args) -> int:
    from reasonshape.cli import main as cli_main

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if "puzzles" not in args.skip:
        print("[1/3] puzzles: generate, render, solve, check, score a trace", flush=True)
        puzzles_step()
    if "eval" not in args.skip:
        print("[2/3] eval on the shipped real traces", flush=True)
        rc = cli_main(["eval", "--embedded", "--out", str(out / "eval")])
        if rc:
            return rc
    if "train" not in args.skip:
        print("[3/3] GRPO smoke run on CPU (tiny local model, all rewards)", flush=True)
        config = smoke_config()
        if config is None:
            print("reasonshape demo: error: the training step needs configs/grpo_cpu_smoke.yaml of the source "
                  "checkout (not in the current folder nor beside the installed package); run it from the "
                  "repository root, or skip it with --skip train", file=sys.stderr)
            return 2
        rc = cli_main(["train", "--config", str(config), "--model_name_or_path", str(out / "tiny-model"),
                       "--output_dir", str(out / "grpo")])
        if rc:
            return rc
    print(f"demo finished in {time.perf_counter() - t0:.0f}s; outputs in {out}/")
    return 0
