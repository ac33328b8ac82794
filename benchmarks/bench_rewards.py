"""Benchmark of the TRL reward functions (reasonshape.rewards.functions): reward time against tokenizer time, and the
share of a CPU GRPO step spent in rewards.

Part 1, reward time per completion. Completions of about 2k, 8k and 32k tokens are built from real deduction
traces of a tents "hard" instance (reasonshape's deduction engine, METHOD.md §D): the focused, verbose and
exploratory traces are concatenated (the later ones read as re-checks) until the token target is reached, then the
correct answer block closes the completion. For each size, the four deterministic rewards (shaped, accuracy,
format, eta) are called on a one-completion batch through one shared scorer: the full parse -> verify -> extract
-> claim graph -> eta path runs once for the four. "warm" (the ratio's numerator) is the steady state of training:
the scorer has already scored a sibling completion of the instance (an exploratory trace the completion does not
contain), so the instance, its solution, its extraction context and the labels of the claims they share are cached,
as for every completion after the first of a GRPO group and on every later step; "cold" also builds those. "warm"
still reads every sentence: the sibling's sentence readings are dropped, as this engine's templated sentences recur
across its traces far more than a real model's do (97% of the completion's distinct sentences against 25%); the time
with them kept is printed beside it. Compared
with the time the tokenizer takes to encode the same text (the tiny model's byte-level BPE, built locally with
Qwen2's pre-tokenizer; nothing is downloaded).
Target: reward time <= 2x encode time. Times are medians of ``--repeats`` runs.

Part 1b, the same on real model completions (``--traces``: a JSON-lines file in reasoning-gym's layout; default
``../shared/data/real_traces/reasoning_gym_eval_dev.jsonl`` beside the repository when it exists, else this part is
skipped): every completion that has a sibling (another completion of the same question by the same model, as in a
GRPO group) and whose length is within 25% of a size is scored warm, after its sibling, as in part 1. Per size, the
ratio is the summed reward time over the summed encode time. Real traces state far fewer claims per token than the
deduction engine's (prose, restated grids), so part 1 is the harder case.

Part 2, share of a CPU smoke step spent in rewards: ``configs/grpo_cpu_smoke.yaml`` (tiny model, 2 steps, every
reward on, the live policy as the self-preference judge) with each reward call timed; the share is reward seconds
over the training steps' seconds (TRL's ``step_time``), reported with and without the judge's generation.

Usage::

    python benchmarks/bench_rewards.py [--repeats 3] [--sizes 2000 8000 32000] [--traces FILE | --no-traces]
                                       [--skip-step] [--json out.json]

Exit status 1 if a size misses the 2x target.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for _var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

TARGET_RATIO = 2.0
DEFAULT_TRACES = ROOT.parent / "shared" / "data" / "real_traces" / "reasoning_gym_eval_dev.jsonl"


def build_completion(tokenizer, puzzle, instance, target_tokens: int) -> tuple[str, int]:
    """A real-looking trace of about ``target_tokens`` tokens ending in the correct answer."""
    from reasonshape.extraction import deduce_trace

    parts = [deduce_trace(puzzle, instance, style, seed).text for seed in range(3)
             for style in ("focused", "verbose", "exploratory")]
    answer = parts[0][parts[0].rfind("<answer>"):]
    bodies = [p[:p.rfind("<answer>")].rstrip() for p in parts]
    text, i = "", 0
    while True:
        body = bodies[i % len(bodies)]
        candidate = (text + "\n\nWait, let me re-check everything from the start.\n\n" + body) if text else body
        if len(tokenizer(candidate + "\n\n" + answer, add_special_tokens=False)["input_ids"]) > target_tokens:
            break
        text, i = candidate, i + 1
    # fill the remainder sentence by sentence
    for sentence in bodies[i % len(bodies)].split(". "):
        candidate = text + " " + sentence + "."
        if len(tokenizer(candidate + "\n\n" + answer, add_special_tokens=False)["input_ids"]) > target_tokens:
            break
        text = candidate
    full = text + "\n\n" + answer
    return full, len(tokenizer(full, add_special_tokens=False)["input_ids"])


def call_all(fs: list, completion: str, kw: dict) -> dict:
    """Every reward function of ``fs`` on a one-completion batch: ``{reward name: value}``.

    The comprehension's own scope holds the loop variable: no reference to a reward function outlives the call, so
    an earlier scorer is freed when ``fs`` is rebound, outside the timed region (a loop variable left bound would free
    it inside the next timed region: ~0.5-1 ms of deallocation)."""
    return {f.__name__: f(completions=[completion], **kw)[0] for f in fs}


def time_rewards(full: str, sibling: str, puzzle_name: str, game_id: str,
                 repeats: int) -> tuple[float, float, float, dict]:
    """(cold, warm, warm_shared, values): median seconds for the four rewards on one completion with a fresh
    scorer (cold: the instance, its solution, its extraction context and the labels of every claim are built too)
    and with a scorer that has already scored ``sibling``, another completion of the same instance (warm: every
    completion after the first of a GRPO group, whose siblings state many of the same claims, and every later step
    on the instance). ``warm`` reads every sentence of the completion again (the scorer's per-sentence memos are
    emptied after the sibling); ``warm_shared`` keeps the sibling's sentence readings, which these templated traces
    share far more than real siblings do (97% of the completion's distinct sentences at 2k tokens, against 25% for
    the real completions of part 1b)."""
    from reasonshape.rewards.functions import get_reward_functions

    cold, warm, warm_shared, out = [], [], [], {}
    kw = dict(puzzle=[puzzle_name], game_id=[game_id])
    for _ in range(repeats):
        fs = get_reward_functions(["shaped", "accuracy", "format", "eta"])  # fresh scorer: nothing cached
        t0 = time.perf_counter()
        out = call_all(fs, full, kw)
        cold.append(time.perf_counter() - t0)
        for times, keep in ((warm, False), (warm_shared, True)):
            fs = get_reward_functions(["shaped", "accuracy", "format", "eta"])
            fs[0](completions=[sibling], **kw)
            if not keep:
                fs[0].scorer.scorer.clear_sentence_memos()
            t0 = time.perf_counter()
            call_all(fs, full, kw)
            times.append(time.perf_counter() - t0)
    return statistics.median(cold), statistics.median(warm), statistics.median(warm_shared), out


def time_encode(tokenizer, text: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        tokenizer(text, add_special_tokens=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_sizes(sizes: list[int], repeats: int, model_dir: Path) -> list[dict]:
    from transformers import AutoTokenizer

    from reasonshape.envs import get
    from reasonshape.extraction import deduce_trace

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    puzzle = get("tents")
    inst = puzzle.generate("hard", seed=0, index=0)
    game_id = puzzle.format_game_id(inst)
    # the warm state's sibling: an exploratory trace of the instance that the completion does not contain (its dead
    # ends depend on the seed; build_completion uses seeds 0-2), stating many of the completion's claims as a sibling
    # completion of a GRPO group does
    sibling = deduce_trace(puzzle, inst, "exploratory", 3).text
    rows = []
    for target in sizes:
        text, n_tok = build_completion(tok, puzzle, inst, target)
        t_cold, t_reward, t_shared, values = time_rewards(text, sibling, "tents", game_id, repeats)
        t_enc = time_encode(tok, text, max(repeats, 3))
        row = {"target_tokens": target, "tokens": n_tok, "chars": len(text), "reward_s": t_reward,
               "reward_cold_s": t_cold, "reward_shared_s": t_shared, "encode_s": t_enc, "ratio": t_reward / t_enc,
               "rewards": values}
        rows.append(row)
        print(f"{n_tok:>7} tokens {len(text):>8} chars | rewards (warm) {t_reward * 1e3:8.1f} ms (cold "
              f"{t_cold * 1e3:8.1f} ms, sibling's sentences kept {t_shared * 1e3:8.1f} ms) | encode "
              f"{t_enc * 1e3:7.1f} ms | ratio {row['ratio']:5.2f}x (target <= {TARGET_RATIO:g}x) | accuracy "
              f"{values['accuracy_reward']} eta {values['eta_reward']:.3f}", flush=True)
    return rows


def bench_real_traces(path: Path, sizes: list[int], model_dir: Path) -> list[dict]:
    """Part 1b: warm reward time against encode time on real completions within 25% of each size."""
    from collections import defaultdict

    from transformers import AutoTokenizer

    from reasonshape.envs.interop import load_reasoning_gym_traces
    from reasonshape.rewards.functions import get_reward_functions

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    # Start from a collected heap: a full collection left pending by part 1 (~0.25 s over this process's ~450k
    # objects) would otherwise land in some completion's timed window (~0.8 ms per completion at 2k tokens).
    gc.collect()
    groups: dict[tuple, list] = defaultdict(list)
    for t in load_reasoning_gym_traces(path):
        groups[(t.instance.puzzle, t.instance.game_id, t.model)].append(t)
    totals = {size: [0, 0, 0.0, 0.0] for size in sizes}  # completions, tokens, reward seconds, encode seconds
    for (puzzle, game_id, _), traces in groups.items():
        if len(traces) < 2:
            continue
        kw = dict(puzzle=[puzzle], game_id=[game_id])
        for i, t in enumerate(traces):
            n_tok = len(tok(t.completion, add_special_tokens=False)["input_ids"])
            size = next((s for s in sizes if 0.75 * s <= n_tok <= 1.25 * s), None)
            if size is None:
                continue
            fs = get_reward_functions(["shaped", "accuracy", "format", "eta"])
            fs[0](completions=[traces[(i + 1) % len(traces)].completion], **kw)  # the sibling
            t0 = time.perf_counter()
            call_all(fs, t.completion, kw)
            t_reward = time.perf_counter() - t0
            acc = totals[size]
            acc[0] += 1
            acc[1] += n_tok
            acc[2] += t_reward
            acc[3] += time_encode(tok, t.completion, 3)
    rows = []
    for size, (n, n_tok, t_reward, t_enc) in totals.items():
        if not n:
            print(f"real traces, {size} tokens +-25%: none in {path.name}", flush=True)
            continue
        row = {"target_tokens": size, "completions": n, "mean_tokens": n_tok / n, "reward_s": t_reward / n,
               "encode_s": t_enc / n, "ratio": t_reward / t_enc}
        rows.append(row)
        print(f"real traces, {size} tokens +-25%: {n:>4} completions (mean {n_tok / n:>7.0f} tokens) | rewards (warm) "
              f"{1e3 * t_reward / n:8.2f} ms | encode {1e3 * t_enc / n:7.2f} ms | ratio {row['ratio']:5.2f}x "
              f"(target <= {TARGET_RATIO:g}x)", flush=True)
    return rows


def bench_step(model_dir: Path) -> dict:
    from reasonshape.rewards import functions as F
    from reasonshape.training.train import parse_train_args, run_training

    spent = {"total": 0.0}
    original = F._Reward.__call__

    def timed(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent["total"] += time.perf_counter() - t0

    F._Reward.__call__ = timed
    try:
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rs, grpo, model = parse_train_args(["--config", str(ROOT / "configs" / "grpo_cpu_smoke.yaml"),
                                                "--model_name_or_path", str(model_dir), "--output_dir", tmp])
            result = run_training(rs, grpo, model)
    finally:
        F._Reward.__call__ = original
    steps = [h for h in result.log_history if "step_time" in h]
    step_s = sum(h["step_time"] for h in steps)
    judge_s = sum(h.get("reasonshape/su_time_s", 0.0) for h in steps)
    out = {"steps": len(steps), "step_s": step_s, "reward_s": spent["total"], "judge_s": judge_s,
           "share": spent["total"] / step_s if step_s else None,
           "share_without_judge": (spent["total"] - judge_s) / step_s if step_s else None}
    print(f"CPU smoke run: {out['steps']} steps, {step_s:.2f} s in steps, rewards {spent['total']:.2f} s "
          f"({100 * out['share']:.1f}% of the step time; judge generation {judge_s:.2f} s; without the judge "
          f"{100 * out['share_without_judge']:.1f}%)", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000, 32000])
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES if DEFAULT_TRACES.exists() else None,
                    help="real completions for part 1b (reasoning-gym JSON lines; default: %(default)s)")
    ap.add_argument("--no-traces", action="store_true", help="skip part 1b")
    ap.add_argument("--skip-step", action="store_true", help="skip the CPU smoke step measurement")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    from reasonshape.training.tiny import build_tiny_model

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_tiny_model(Path(tmp) / "tiny", seed=0)
        rows = bench_sizes(args.sizes, args.repeats, model_dir)
        real: list[dict] = []
        if args.traces is not None and not args.no_traces:
            real = bench_real_traces(args.traces, args.sizes, model_dir)
        elif not args.no_traces:
            print(f"real traces skipped: {DEFAULT_TRACES} not found (pass --traces FILE)", flush=True)
        step = None if args.skip_step else bench_step(model_dir)
    if args.json:
        args.json.write_text(json.dumps({"sizes": rows, "real_traces": real, "step": step}, indent=1, default=str))
    missed = [f"{r['target_tokens']}" for r in rows if r["ratio"] > TARGET_RATIO]
    missed += [f"{r['target_tokens']} (real traces)" for r in real if r["ratio"] > TARGET_RATIO]
    if missed:
        print(f"target missed (reward time > {TARGET_RATIO:g}x encode time) at {', '.join(missed)} tokens")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
