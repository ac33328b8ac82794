"""Puzzle-layer benchmark: generation, solving and checking speed per puzzle and level.

Prints, per puzzle and level: median native generation time per instance, median solve+uniqueness time, median
parse+check time per answer, and (when ``sgt-<puzzle>`` is installed) the collection's own generation time and the
ratio native/sgt measured in the same run. Targets (issue 2): check < 1 ms per answer; native generation median
< 0.5 s per instance through level normal.

Usage: ``python benchmarks/bench_envs.py [--n 5] [--puzzles tents,solo] [--markdown]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from reasonshape import envs


def _median_time(fn, n):
    ts = []
    out = None
    for i in range(n):
        t0 = time.perf_counter()
        out = fn(i)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def bench_puzzle(name: str, n: int, seed: int = 0) -> list[dict]:
    p = envs.get(name)
    rows = []
    for level in envs.LEVEL_NAMES:
        gen_t, _ = _median_time(lambda i, level=level: p.generate(level, seed=seed + 1000, index=i), n)
        insts = [p.generate(level, seed=seed + 1000, index=i) for i in range(n)]

        def solve(i, insts=insts):
            # a fresh instance object bypasses the solve cache
            inst = p.parse_game_id(p.format_game_id(insts[i]))
            return p._solve(inst, 2)

        solve_t, _ = _median_time(solve, n)
        texts = [f"Reasoning...\n<answer>\n{p.format_answer(inst, p.unique_solution(inst))}\n</answer>"
                 for inst in insts]
        reps = 50

        def check(i, insts=insts, texts=texts, reps=reps):
            inst = insts[i]
            for _ in range(reps):
                assert p.check(inst, p.parse_answer(texts[i], inst)).ok

        check_t, _ = _median_time(check, n)
        row = {"puzzle": name, "level": level, "params": p.LEVELS[level], "gen_s": gen_t, "solve_s": solve_t,
               "check_ms": check_t / reps * 1e3, "sgt_s": None}
        binary = p.sgt_binary()
        if binary:
            def sgt(i, binary=binary, level=level):
                subprocess.run([binary, "--generate", "1", f"{p.LEVELS[level]}#{seed + i}"], capture_output=True,
                               check=True)
            row["sgt_s"], _ = _median_time(sgt, n)
        rows.append(row)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5, help="instances per (puzzle, level)")
    ap.add_argument("--puzzles", default=None, help="comma-separated subset (default: all implemented)")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args(argv)
    names = args.puzzles.split(",") if args.puzzles else envs.list_puzzles()
    if args.markdown:
        print("| puzzle | level | params | native gen (s) | sgt gen (s) | native/sgt | solve+unique (ms) | "
              "parse+check (ms) |")
        print("|---|---|---|---|---|---|---|---|")
    for name in names:
        for r in bench_puzzle(name, args.n):
            ratio = f"{r['gen_s'] / r['sgt_s']:.1f}x" if r["sgt_s"] else "n/a"
            sgt = f"{r['sgt_s']:.3f}" if r["sgt_s"] else "n/a"
            if args.markdown:
                print(f"| {r['puzzle']} | {r['level']} | `{r['params']}` | {r['gen_s']:.3f} | {sgt} | {ratio} | "
                      f"{r['solve_s'] * 1e3:.1f} | {r['check_ms']:.3f} |", flush=True)
            else:
                print(f"{r['puzzle']:9s} {r['level']:8s} {r['params']:16s} gen {r['gen_s']:.3f}s  sgt {sgt}s "
                      f"({ratio})  solve {r['solve_s'] * 1e3:.1f}ms  check {r['check_ms']:.3f}ms", flush=True)


if __name__ == "__main__":
    main()
