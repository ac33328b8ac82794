"""Extraction quality and speed against traces with a known graph (issue 4's benchmark).

For every implemented puzzle, every level and every style of the deduction engine, ``--n`` instances: claim
precision/recall and edge precision/recall/F1 of the deterministic extractor (micro-averaged per puzzle), the median
|eta_extracted - eta_true|, and the share of instances where eta orders the styles focused > verbose > exploratory.
Then the time to extract and score a 32k-token trace (about 128k characters at 4 characters per token), next to the
time `str.split` + `re.findall` take to scan the same text once (a lower bound reference measured in the same run).

Usage: ``python benchmarks/bench_extraction.py [--n 2] [--levels trivial,easy,normal,hard] [--markdown]``
Targets: claim P and R >= 0.95, edge F1 >= 0.80, median eta error <= 0.05, ordering >= 90%, 32k trace < 100 ms.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

from reasonshape import envs
from reasonshape.extraction import STYLES, deduce_trace, extract_deterministic
from reasonshape.extraction.deterministic import PuzzleContext
from reasonshape.extraction.quality import _edges, _nodes
from reasonshape.rewards.eta import eta
from reasonshape.rewards.scorer import score_completion


def bench_puzzle(name: str, levels: list[str], n: int) -> dict:
    p = envs.get(name)
    hits = {"nodes": [0, 0, 0], "edges": [0, 0, 0]}  # matched, extracted, true
    errs, ordered, total = [], 0, 0
    for level in levels:
        for i in range(n):
            inst = p.generate(level, seed=100, index=i)
            c_star = p.solution_claims(inst)
            e = {}
            for style in STYLES:
                kt = deduce_trace(p, inst, style, seed=i)
                ext = extract_deterministic(p, inst, kt.text).graph
                for key, fn in (("nodes", _nodes), ("edges", _edges)):
                    t, x = fn(kt.graph), fn(ext)
                    hits[key][0] += len(t & x)
                    hits[key][1] += len(x)
                    hits[key][2] += len(t)
                e[style] = eta(kt.graph, c_star)
                ex = eta(ext, c_star)
                if e[style] is not None and ex is not None:
                    errs.append(abs(e[style] - ex))
            total += 1
            ordered += None not in e.values() and e["focused"] > e["verbose"] > e["exploratory"]
    cp, cr = hits["nodes"][0] / max(1, hits["nodes"][1]), hits["nodes"][0] / max(1, hits["nodes"][2])
    ep, er = hits["edges"][0] / max(1, hits["edges"][1]), hits["edges"][0] / max(1, hits["edges"][2])
    f1 = 0.0 if ep + er == 0 else 2 * ep * er / (ep + er)
    return {"puzzle": name, "claim_p": cp, "claim_r": cr, "edge_p": ep, "edge_r": er, "edge_f1": f1,
            "eta_err": statistics.median(errs) if errs else float("nan"), "order": ordered / max(1, total),
            "instances": total}


def bench_32k() -> dict:
    """Extract + score a ~32k-token trace (sudoku 9x9, exploratory style, repeated to 128k characters)."""
    p = envs.get("solo")
    inst = p.generate("normal", seed=1)
    kt = deduce_trace(p, inst, "exploratory")
    body, answer = kt.text.split("<answer>")
    text = body
    while len(text) < 128_000:
        text += "\n" + body
    text += "<answer>" + answer
    ctx = PuzzleContext(p, inst)
    score_completion(p, inst, text, context=ctx, paths=False)  # warm-up: the per-claim caches stay warm ...
    ts, refs = [], []
    for _ in range(5):
        ctx.clear_sentence_memos()  # ... but every sentence is read again (the trace was read in this context)
        t0 = time.perf_counter()
        sc = score_completion(p, inst, text, context=ctx, paths=False)
        ts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        text.split()
        re.findall(r"\(\d+,\d+\)", text)
        refs.append(time.perf_counter() - t0)
    return {"chars": len(text), "nodes": sc.metrics.n_nodes, "score_ms": statistics.median(ts) * 1e3,
            "scan_ms": statistics.median(refs) * 1e3}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2, help="instances per (puzzle, level)")
    ap.add_argument("--levels", default="trivial,easy,normal,hard")
    ap.add_argument("--puzzles", default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    names = args.puzzles.split(",") if args.puzzles else envs.list_puzzles()
    levels = args.levels.split(",")
    rows = []
    if args.markdown:
        print("| puzzle | claim P | claim R | edge P | edge R | edge F1 | median abs eta error | styles ordered |")
        print("|---|---|---|---|---|---|---|---|")
    for name in names:
        r = bench_puzzle(name, levels, args.n)
        rows.append(r)
        if args.markdown:
            print(f"| {name} | {r['claim_p']:.3f} | {r['claim_r']:.3f} | {r['edge_p']:.2f} | {r['edge_r']:.2f} | "
                  f"{r['edge_f1']:.2f} | {r['eta_err']:.3f} | {r['order']:.0%} |", flush=True)
        else:
            print(f"{name:9s} claimP {r['claim_p']:.3f} R {r['claim_r']:.3f} edgeP {r['edge_p']:.2f} "
                  f"R {r['edge_r']:.2f} F1 {r['edge_f1']:.2f} eta_err {r['eta_err']:.3f} ordered {r['order']:.0%}",
                  flush=True)
    allf = statistics.mean(r["edge_f1"] for r in rows)
    print(f"\nall puzzles: min claim P {min(r['claim_p'] for r in rows):.3f}, min claim R "
          f"{min(r['claim_r'] for r in rows):.3f}, mean edge F1 {allf:.2f}, median eta error "
          f"{statistics.median(r['eta_err'] for r in rows):.3f}, styles ordered "
          f"{statistics.mean(r['order'] for r in rows):.0%}")
    b = bench_32k()
    print(f"32k-token trace ({b['chars']} chars, {b['nodes']} claim nodes): extract + score {b['score_ms']:.0f} ms; "
          f"one regex scan of the text {b['scan_ms']:.1f} ms (ratio {b['score_ms'] / b['scan_ms']:.0f}x)")


if __name__ == "__main__":
    main()
