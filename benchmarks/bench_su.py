"""Benchmark of the structural-uncertainty scorer (reasonshape.rewards.structural_uncertainty).

1. The scoring maths for one group with N = 16 candidates and M = 8 trials (target: < 5 ms): the batched
   Bradley–Terry fit, PageRank, the U = A + I decomposition, preference mass and rank stability; with and without
   sampling the spanning trees; and the slower options (networkx PageRank, TrueSkill, per-trial scipy fits).
2. Judge calls per group: M·(N-1) with random spanning trees vs. the all-pairs alternatives.
3. ``score_groups`` overhead per group (prompt building + scoring, judge replies from an instant fake backend), and
   a check that a whole batch goes to the backend in ONE call.

Run: ``python benchmarks/bench_su.py`` (a few seconds on one CPU core). Prints markdown tables.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from reasonshape.rewards.structural_uncertainty import (
    Group,
    fit_bradley_terry,
    sample_spanning_trees,
    score_groups,
    structural_uncertainty,
)
from reasonshape.training.backends import Sample

N, M = 16, 8
TARGET_MS = 5.0


def _time_ms(fn, reps: int) -> float:
    """Median wall time of ``fn()`` over ``reps`` runs, in milliseconds (after 5 warm-up runs)."""
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


class _InstantJudge:
    """Answers every judge prompt immediately with a random verdict; counts calls and prompts."""

    def __init__(self):
        self.calls, self.prompts, self.rng = 0, 0, np.random.default_rng(0)

    def generate(self, prompts, n=1, temperature=1.0, top_p=1.0, max_tokens=256, seed=None, logprobs=None):
        self.calls += 1
        self.prompts += len(prompts)
        return [[Sample(f"Verdict: {'AB'[int(self.rng.integers(2))]}", None, 0, 2, "stop")] for _ in prompts]


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                            epilog="No options: run it to print the tables.").parse_args(argv)
    rng = np.random.default_rng(0)
    pairs = sample_spanning_trees(N, M, rng)
    outcomes = rng.random((M, N - 1))
    hard = (outcomes > 0.5).astype(float)

    rows = [
        ("BT + PageRank (numpy), outcomes given", 300, lambda: structural_uncertainty(N, pairs, outcomes)),
        ("  + sampling the M spanning trees", 300,
         lambda: structural_uncertainty(N, sample_spanning_trees(N, M, rng), outcomes)),
        ("BT + rank_centrality", 300,
         lambda: structural_uncertainty(N, pairs, outcomes, aggregation="rank_centrality")),
        ("BT + PageRank (networkx impl)", 30, lambda: structural_uncertainty(N, pairs, outcomes, impl="networkx")),
        ("TrueSkill + PageRank", 30, lambda: structural_uncertainty(N, pairs, hard, model="trueskill")),
        ("BT fit alone, M scipy.optimize calls", 30,
         lambda: [fit_bradley_terry(N, pairs[m], outcomes[m], method="scipy") for m in range(M)]),
    ]
    print(f"## Scoring maths, one group, N = {N}, M = {M} (median ms)\n")
    print("| variant | ms |")
    print("|---|---:|")
    results = {}
    for name, reps, fn in rows:
        results[name] = _time_ms(fn, reps)
        print(f"| {name} | {results[name]:.2f} |")
    main_ms = results["  + sampling the M spanning trees"]
    ok = main_ms < TARGET_MS
    print(f"\nTarget < {TARGET_MS} ms (default path incl. tree sampling): {'met' if ok else 'MISSED'} "
          f"({main_ms:.2f} ms)\n")

    print("## Judge calls per group (M = 8)\n")
    print("| N | spanning trees M·(N-1) | both orders | all pairs once N(N-1)/2 | all pairs x M |")
    print("|---:|---:|---:|---:|---:|")
    for n in (4, 8, 16, 32, 64):
        tree = M * (n - 1)
        allp = n * (n - 1) // 2
        print(f"| {n} | {tree} | {2 * tree} | {allp} | {M * allp} |")

    groups = [Group("Place the tents.", [f"row {k} ...\n<answer>CAND{k % 5}</answer>" for k in range(N)])
              for _ in range(32)]
    judge = _InstantJudge()
    t = time.perf_counter()
    scores = score_groups(groups, judge, m=M, seed=0)
    per_group = (time.perf_counter() - t) * 1e3 / len(groups)
    assert judge.calls == 1 and judge.prompts == len(groups) * M * (N - 1), (judge.calls, judge.prompts)
    assert len(scores) == len(groups)
    print(f"\n## score_groups, 32 groups x N = {N}, M = {M}, instant fake judge\n")
    print(f"backend calls: {judge.calls} (prompts: {judge.prompts}); overhead per group: {per_group:.2f} ms "
          "(prompt building + parsing + scoring)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
