"""Benchmark of η: the linear pass of reasonshape.rewards.eta against the dense (I - Q)^-1 oracle.

Random DAGs with |V| = 100, 1k, 2k, 10k, 100k and average out-degree about 2: nodes 0..|V|-1 are inserted in
order (a topological order, as in a claim graph), and 2|V| random pairs are oriented from the smaller to the larger
id (duplicates collapse, so the mean out-degree is a little under 2). For each size it times η end to end
(``eta(graph, |V| // 10)``: flattening, logical mass, H_str, η) and, up to 2k nodes, the dense oracle of
``tests/rewards/test_eta.py`` in the same run, checks they agree to 1e-9, prints the speed-up, and fits the
scaling exponent b of t = a |V|^b by least squares on log-log (all sizes). Two more rows: 100k nodes inserted in
random order (the topological sort path) and a 100k-node ClaimGraph built through the builder API.

Targets (issue 3): >= 100x faster than dense at 2,000 nodes; 100k nodes in < 2 s; exponent <= 1.2. The garbage
collector stays on (as in real use). Times are the median of ``--repeats`` runs (1 for the dense 2k).

Usage::

    python benchmarks/bench_eta.py [--repeats 5] [--seed 0] [--json results.json]

Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reasonshape.envs.base import Claim  # noqa: E402
from reasonshape.extraction.graph import ClaimGraph  # noqa: E402
from reasonshape.rewards.eta import eta  # noqa: E402
from tests.rewards.test_eta import dense_eta  # noqa: E402  (the oracle lives only in the tests)

SIZES = (100, 1_000, 2_000, 10_000, 100_000)
DENSE_MAX = 2_000


def random_dag(n: int, seed: int, out_degree: float = 2.0, shuffled: bool = False) -> nx.DiGraph:
    """A random DAG on 0..n-1 with about ``out_degree * n`` edges u -> v, u < v."""
    rng = np.random.default_rng(seed)
    m = int(out_degree * n)
    u = rng.integers(0, n, size=m)
    v = rng.integers(0, n, size=m)
    keep = u != v
    lo, hi = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
    g = nx.DiGraph()
    nodes = list(range(n))
    if shuffled:
        random.Random(seed).shuffle(nodes)
    g.add_nodes_from(nodes)
    g.add_edges_from(zip(lo.tolist(), hi.tolist(), strict=True))
    return g


def as_claim_graph(g: nx.DiGraph) -> ClaimGraph:
    """The same DAG as a ClaimGraph built with the builder API (one claim per node, one sentence per node)."""
    cg = ClaimGraph()
    for v in range(g.number_of_nodes()):
        cg.add_claim(Claim("value", ((v // 1000 + 1, v % 1000 + 1),), 1), v)
    for u, v in g.edges():
        cg.add_inference(u, v)
    return cg


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs per timing (median); default 5")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)

    print(f"python {platform.python_version()}, networkx {nx.__version__}, numpy {np.__version__}, "
          f"{platform.machine()}")
    print(f"{'|V|':>8} {'|E|':>8} {'linear s':>10} {'dense s':>10} {'speed-up':>9} {'max |diff|':>11}")
    rows = []
    for n in SIZES:
        g = random_dag(n, args.seed)
        c = max(1, n // 10)
        t_lin, val = timed(lambda g=g, c=c: eta(g, c), args.repeats)
        row = {"n": n, "edges": g.number_of_edges(), "linear_s": t_lin, "eta": val}
        if n <= DENSE_MAX:
            t_dense, ref = timed(lambda g=g, c=c: dense_eta(g, c), 1 if n >= DENSE_MAX else min(3, args.repeats))
            row.update(dense_s=t_dense, speedup=t_dense / t_lin, diff=abs(val - ref))
        rows.append(row)
        dense = (f"{row['dense_s']:>10.4f} {row['speedup']:>8.0f}x {row['diff']:>11.1e}" if "dense_s" in row
                 else f"{'-':>10} {'-':>9} {'-':>11}")
        print(f"{n:>8} {row['edges']:>8} {t_lin:>10.4f} {dense}")

    xs = np.log([r["n"] for r in rows])
    ys = np.log([r["linear_s"] for r in rows])
    exponent = float(np.polyfit(xs, ys, 1)[0])
    local = math.log(rows[-1]["linear_s"] / rows[-2]["linear_s"]) / math.log(rows[-1]["n"] / rows[-2]["n"])

    g_shuf = random_dag(SIZES[-1], args.seed, shuffled=True)
    t_shuf, _ = timed(lambda: eta(g_shuf, SIZES[-1] // 10), max(1, args.repeats // 2))
    cg = as_claim_graph(random_dag(SIZES[-1], args.seed))
    t_cg, _ = timed(lambda: eta(cg, SIZES[-1] // 10), max(1, args.repeats // 2))
    print(f"100k nodes inserted in random order (topological-sort path): {t_shuf:.4f} s")
    print(f"100k-node ClaimGraph (builder API; static-merge check included): {t_cg:.4f} s")
    print(f"fitted exponent over {SIZES[0]}..{SIZES[-1]}: {exponent:.2f}; local 10k -> 100k: {local:.2f}")

    at2k = next(r for r in rows if r["n"] == DENSE_MAX)
    t100k = rows[-1]["linear_s"]
    checks = {
        f"speed-up at {DENSE_MAX} nodes >= 100x (got {at2k['speedup']:.0f}x)": at2k["speedup"] >= 100,
        f"100k nodes < 2 s (got {t100k:.3f} s; random order {t_shuf:.3f} s; ClaimGraph {t_cg:.3f} s)":
            max(t100k, t_shuf, t_cg) < 2.0,
        f"exponent <= 1.2 (got {exponent:.2f})": exponent <= 1.2,
        "linear pass equals dense to 1e-9": all(r.get("diff", 0.0) <= 1e-9 for r in rows),
    }
    for text, ok in checks.items():
        print(("PASS " if ok else "FAIL ") + text)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "exponent": exponent, "local_exponent": local,
                                         "shuffled_100k_s": t_shuf, "claim_graph_100k_s": t_cg,
                                         "checks": checks}, indent=2))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
