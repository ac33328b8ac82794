"""Summary of the deterministic claim extraction over real model traces (issue 4, "Real traces").

Every record of a JSON-lines file of reasoning-gym traces (default: ``../shared/data/real_traces/
reasoning_gym_eval_dev.jsonl`` when it exists, else ``tests/data/real_traces_sample.jsonl``) is imported with the
reasoning-gym interop (:func:`reasonshape.envs.interop.load_reasoning_gym_traces`: futoshiki -> ``unequal``,
sudoku / mini_sudoku -> ``solo``) and scored by :class:`reasonshape.rewards.scorer.Scorer` (parse the answer,
check it by the rules, extract the claim graph with no LLM, label the claims, compute η). The summary reports,
overall, per reasoning-gym task and per model:

* traces, crashes (an exception escaping the interop or the scorer; must be 0) and extraction failures (the
  scorer caught an exception inside extraction and recorded it in ``extraction_fallback``);
* answers accepted by our rules (:attr:`CompletionScore.correct`) against reasoning-gym's own verdict
  (``reasoning_gym_score == 1``; reasoning-gym compares with ONE stored solution, so a valid alternative solution
  of a non-unique puzzle scores below 1 there and is accepted here);
* claims per trace (stated claim occurrences, placeholders excluded): median, 10th and 90th percentile;
* label shares over all stated claim occurrences: correct / wrong / unverifiable / tentative;
* η (raw, paper A §C): median and quartiles over the traces where it is defined, and the share of traces where it
  is undefined (``None``: no C* claims, |V| <= |C*|, |V| < 2, or extraction failed);
* time per trace (the scorer's ``score_s``: parse, check, extract, metrics), median and maximum, in milliseconds.

Percentiles use numpy's default linear interpolation. Source: reasonshape (issue 4); η and labels: paper A §B-§C.

Usage::

    python benchmarks/real_traces_summary.py [PATH] [--markdown docs/real_traces.md] [--json summary.json]
                                             [--limit N]

Exit status 1 if any trace crashed.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
import traceback
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reasonshape.envs.interop import REASONING_GYM_TASKS, load_reasoning_gym_traces  # noqa: E402
from reasonshape.rewards.scorer import Scorer  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "real_traces" / "reasoning_gym_eval_dev.jsonl"
SAMPLE = ROOT / "tests" / "data" / "real_traces_sample.jsonl"
LABELS = ("correct", "wrong", "unverifiable", "tentative")

__all__ = ["TraceRow", "default_path", "score_file", "summarise", "summarise_groups", "to_markdown", "make_parser",
           "main"]


@dataclass(frozen=True)
class TraceRow:
    """What the summary keeps of one trace.

    Attributes
    ----------
    index : int
        0-based position among the file's records (blank lines skipped).
    task, model, source : str
        reasoning-gym task, model id and provenance of the record.
    crashed : bool
        An exception escaped the scorer (``error`` holds its type and message).
    extraction_failed : bool
        The scorer caught an exception inside extraction (its ``extraction_fallback`` says which).
    accepted : bool
        The final answer satisfies every rule of the puzzle (our check).
    rg_accepted : bool or None
        ``reasoning_gym_score == 1``; ``None`` when the record has no score.
    parsed : bool
        The final answer was read as a grid.
    labels : dict of str to int
        Stated claim occurrences per label (placeholders excluded).
    eta : float or None
        Raw η (paper A §C); ``None`` when undefined.
    score_ms : float
        Scoring time in milliseconds (>= 0).
    error : str or None
        Why the trace crashed or extraction failed.
    """

    index: int
    task: str
    model: str
    source: str
    crashed: bool
    extraction_failed: bool
    accepted: bool
    rg_accepted: bool | None
    parsed: bool
    labels: dict[str, int]
    eta: float | None
    score_ms: float
    error: str | None = None

    @property
    def n_claims(self) -> int:
        """Stated claim occurrences of the trace (sum of :attr:`labels`)."""
        return sum(self.labels.values())


def default_path() -> Path:
    """The shared file of 1,040 traces when it exists next to the checkout, else the 31-trace test sample."""
    return SHARED if SHARED.exists() else SAMPLE


def score_file(path: str | Path, limit: int | None = None, scorer: Scorer | None = None,
               progress: bool = False) -> list[TraceRow]:
    """Score every trace of ``path`` (a reasoning-gym traces JSONL file) and return one :class:`TraceRow` each.

    Parameters
    ----------
    path : str or Path
        JSON-lines file in the layout of ``shared/data/real_traces`` (``task``, ``question``, ``completion``...).
    limit : int, optional
        Score only the first ``limit`` records (> 0).
    scorer : Scorer, optional
        The scorer to use (default: a fresh deterministic ``Scorer(extract=True)``).
    progress : bool
        Print a dot per 50 traces to stderr.

    Returns
    -------
    list of TraceRow
        In file order. A record that the interop cannot import ends the run with one crashed row (the loader is
        a generator, so reading cannot continue past it); a scorer exception gives a crashed row and the run
        continues.

    Raises
    ------
    ValueError
        ``limit`` is not a positive integer.
    FileNotFoundError
        ``path`` does not exist.
    """
    if limit is not None and (not isinstance(limit, int) or limit <= 0):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no traces file at {path}")
    scorer = scorer or Scorer(extract=True)
    rows: list[TraceRow] = []
    records = iter(load_reasoning_gym_traces(path))
    i = 0
    while limit is None or i < limit:
        try:
            tr = next(records)
        except StopIteration:
            break
        except Exception as e:  # an import crash: counted, and reading stops (generator is finished)
            rows.append(TraceRow(i, "?", "?", f"{path}#record{i}", True, False, False, None, False, {}, None, 0.0,
                                 f"import: {type(e).__name__}: {e}"))
            break
        rg = None if tr.reasoning_gym_score is None else tr.reasoning_gym_score == 1.0
        t0 = time.perf_counter()
        try:
            sc = scorer.score(REASONING_GYM_TASKS[tr.task], tr.instance.game_id, tr.completion)
        except Exception as e:
            rows.append(TraceRow(i, tr.task, tr.model, tr.source, True, False, False, rg, False, {}, None,
                                 1000 * (time.perf_counter() - t0),
                                 f"score: {type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"))
        else:
            failed = sc.error is not None or (sc.extraction_fallback or "").startswith("extraction failed")
            labels = {lab: int(sc.labels.get(lab, 0)) for lab in LABELS}
            eta = sc.eta
            if eta is not None and not math.isfinite(eta):
                failed, eta = True, None
            rows.append(TraceRow(i, tr.task, tr.model, tr.source, False, failed, bool(sc.correct), rg,
                                 bool(sc.parsed), labels, eta, 1000 * sc.score_s,
                                 sc.error or (sc.extraction_fallback if failed else None)))
        i += 1
        if progress and i % 50 == 0:
            print(".", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return rows


def _q(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else None


def summarise(rows: Iterable[TraceRow]) -> dict[str, Any]:
    """Summary figures of a set of scored traces (the module docstring lists them).

    Parameters
    ----------
    rows : iterable of TraceRow

    Returns
    -------
    dict
        ``traces``, ``crashes``, ``extraction_failures``, ``parsed``, ``accepted`` (our rules),
        ``rg_accepted`` (reasoning-gym score 1), ``agreement`` (counts of ``both`` / ``ours_only`` /
        ``rg_only`` / ``neither``), ``claims`` (``median``, ``p10``, ``p90``, ``mean``, ``total``), ``labels``
        (counts) and ``label_shares`` (fractions in [0, 1] summing to 1, or ``None`` with no claims), ``eta``
        (``median``, ``q1``, ``q3``, ``defined``, ``undefined_share`` in [0, 1]), ``time_ms`` (``median``,
        ``max``). Empty input gives zero counts and ``None`` statistics.
    """
    rows = list(rows)
    n = len(rows)
    ok = [r for r in rows if not r.crashed]
    claims = [r.n_claims for r in ok]
    counts = {lab: sum(r.labels.get(lab, 0) for r in ok) for lab in LABELS}
    total = sum(counts.values())
    etas = [r.eta for r in ok if r.eta is not None]
    agree = {"both": 0, "ours_only": 0, "rg_only": 0, "neither": 0}
    for r in ok:
        if r.rg_accepted is None:
            continue
        key = ("both" if r.rg_accepted else "ours_only") if r.accepted else ("rg_only" if r.rg_accepted else
                                                                            "neither")
        agree[key] += 1
    times = [r.score_ms for r in ok]
    return {
        "traces": n,
        "crashes": sum(r.crashed for r in rows),
        "extraction_failures": sum(r.extraction_failed for r in ok),
        "parsed": sum(r.parsed for r in ok),
        "accepted": sum(r.accepted for r in ok),
        "rg_accepted": sum(bool(r.rg_accepted) for r in ok),
        "agreement": agree,
        "claims": {"median": _q(claims, 50), "p10": _q(claims, 10), "p90": _q(claims, 90),
                   "mean": float(np.mean(claims)) if claims else None, "total": int(sum(claims))},
        "labels": counts,
        "label_shares": {lab: counts[lab] / total for lab in LABELS} if total else None,
        "eta": {"median": _q(etas, 50), "q1": _q(etas, 25), "q3": _q(etas, 75), "defined": len(etas),
                "undefined_share": (len(ok) - len(etas)) / len(ok) if ok else None},
        "time_ms": {"median": _q(times, 50), "max": max(times) if times else None},
    }


def summarise_groups(rows: Sequence[TraceRow]) -> dict[str, Any]:
    """:func:`summarise` overall, per reasoning-gym task and per model.

    Returns
    -------
    dict
        ``{"all": summary, "by_task": {task: summary}, "by_model": {model: summary}}``, keys sorted.
    """
    by_task, by_model = defaultdict(list), defaultdict(list)
    for r in rows:
        by_task[r.task].append(r)
        by_model[r.model].append(r)
    return {"all": summarise(rows),
            "by_task": {k: summarise(v) for k, v in sorted(by_task.items())},
            "by_model": {k: summarise(v) for k, v in sorted(by_model.items())}}


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "n/a" if x is None else format(x, fmt)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _table(title: str, groups: dict[str, dict[str, Any]]) -> list[str]:
    out = [f"| {title} | traces | crashes | extraction failures | accepted (ours) | accepted (reasoning-gym) | "
           "claims/trace median [p10, p90] | correct | wrong | unverifiable | tentative | "
           "eta median [q1, q3] | eta undefined | ms/trace median (max) |",
           "|---|" + "---:|" * 13]
    for name, s in groups.items():
        sh = s["label_shares"] or {}
        c, e, t = s["claims"], s["eta"], s["time_ms"]
        out.append(
            f"| {name} | {s['traces']} | {s['crashes']} | {s['extraction_failures']} | {s['accepted']} | "
            f"{s['rg_accepted']} | {_f(c['median'], '.0f')} [{_f(c['p10'], '.0f')}, {_f(c['p90'], '.0f')}] | "
            f"{_pct(sh.get('correct'))} | {_pct(sh.get('wrong'))} | {_pct(sh.get('unverifiable'))} | "
            f"{_pct(sh.get('tentative'))} | {_f(e['median'])} [{_f(e['q1'])}, {_f(e['q3'])}] | "
            f"{_pct(e['undefined_share'])} | {_f(t['median'], '.1f')} ({_f(t['max'], '.0f')}) |")
    return out


def to_markdown(summary: dict[str, Any], path: str | Path, seconds: float | None = None) -> str:
    """The summary as a markdown section (tables overall, per task, per model; agreement of the two verdicts).

    Parameters
    ----------
    summary : dict
        The output of :func:`summarise_groups`.
    path : str or Path
        The traces file, named in the first line.
    seconds : float, optional
        Wall time of the run, reported with the machine when given.

    Returns
    -------
    str
        Markdown text ending in a newline.
    """
    a = summary["all"]
    ag = a["agreement"]
    lines = [
        f"Input: `{path}`. Scorer: deterministic extraction (no LLM), `reasonshape.rewards.scorer.Scorer`.",
        "",
        *_table("set", {"all": a}),
        "",
        "Per reasoning-gym task (futoshiki -> `unequal`, sudoku / mini_sudoku -> `solo`):",
        "",
        *_table("task", summary["by_task"]),
        "",
        "Per model:",
        "",
        *_table("model", summary["by_model"]),
        "",
        f"Answer verdicts, ours (by the rules) vs reasoning-gym (score == 1, one stored solution): both accept "
        f"{ag['both']}, only ours {ag['ours_only']}, only reasoning-gym {ag['rg_only']}, neither {ag['neither']}; "
        f"answers parsed as a grid: {a['parsed']} of {a['traces']}.",
        f"Claims: {a['claims']['total']} stated claim occurrences in all (mean {_f(a['claims']['mean'], '.1f')} per "
        f"trace); eta defined for {a['eta']['defined']} traces.",
    ]
    if seconds is not None:
        lines.append(f"Wall time: {seconds:.1f} s for {a['traces']} traces on {platform.machine()} "
                     f"(Python {platform.python_version()}).")
    return "\n".join(lines) + "\n"


def make_parser(subparsers: Any = None) -> argparse.ArgumentParser:
    """The command-line parser (standalone, or a sub-command of ``subparsers``)."""
    kw = {"description": "Score every real trace of a reasoning-gym JSONL file and summarise extraction."}
    p = subparsers.add_parser("real-traces-summary", **kw) if subparsers is not None else \
        argparse.ArgumentParser(**kw)
    p.add_argument("path", nargs="?", default=None,
                   help=f"traces JSONL (default: {SHARED} if it exists, else {SAMPLE})")
    p.add_argument("--markdown", default=None, help="also write the markdown summary to this file")
    p.add_argument("--json", default=None, help="also write the summary figures as JSON to this file")
    p.add_argument("--limit", type=int, default=None, help="score only the first N traces (N > 0)")
    p.add_argument("--quiet", action="store_true", help="no progress dots")
    return p


def main(args: argparse.Namespace | None = None) -> int:
    """Run the summary; returns the exit status (1 when a trace crashed)."""
    if args is None:
        args = make_parser().parse_args()
    path = Path(args.path) if args.path else default_path()
    t0 = time.perf_counter()
    rows = score_file(path, limit=args.limit, progress=not args.quiet)
    seconds = time.perf_counter() - t0
    summary = summarise_groups(rows)
    md = to_markdown(summary, path, seconds)
    print(md)
    for r in rows:
        if r.crashed or r.extraction_failed:
            print(f"{'CRASH' if r.crashed else 'extraction failure'} #{r.index} {r.source}: {r.error}",
                  file=sys.stderr)
    if args.markdown:
        Path(args.markdown).write_text(md, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps({"path": str(path), "seconds": seconds, **summary}, indent=1),
                                   encoding="utf-8")
    return 1 if summary["all"]["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
