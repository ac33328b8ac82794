"""The eval report: paper A's tables and more, from a ``results.jsonl`` of scored completions.

:func:`build_report` reads ``results.jsonl`` (one JSON object per completion, see :func:`load_results` for the
schema) and writes ``report.md`` and ``report.html`` into one folder, with the plots saved as PNG files beside
``report.md`` (which links them) and embedded as base64 in ``report.html`` (self-contained). Sections:

1. run summary (completions, parse errors, truncations, extraction modes, frequent rule violations);
2. Table 1: accuracy % and mean completion tokens per level x model, with paper A's reference rows, and per
   puzzle x level for each model (paper A §A, Table 1);
3. structure by level (mean η, claim accuracy, |V|, H_str);
4. Table 2: Pearson r [p] of depth, diameter, average path length, width, |V|, tokens and η vs claim accuracy and
   vs η, paper A's r beside (paper A §C, Table 2);
5. other findings: η vs tokens, tokens vs |V_ver|/|V_sol|, first-error position vs η, restatements per claim vs η,
   paper A's figures beside;
6. structural uncertainty (paper B): mean U / A / I of groups whose answer is correct vs wrong, Pearson r of each
   with group accuracy, and the AUROC of flagging wrong answers by dispersion, by structural instability I and by
   both combined; per completion, the AUROC of low preference mass / rank stability for flagging wrong ones;
7. example claim graphs (2-3 records that carry a ``graph``);
8. skipped instances (manifest entries of unimplemented puzzles, ``meta["skipped"]``);
9. run metadata (the ``meta`` dict, the sampling / scoring time split, the median scoring overhead per completion).

Missing values (``None``, absent keys, non-finite numbers) are left out of every statistic and never raise; a
statistic without enough data prints as "—". An empty results file gives a report that says so.

References
----------
Paper A: Berdoz et al., "Reasoning Structure of Large Language Models", ICML 2026, arXiv 2606.03883, Table 1
(accuracy / tokens), Table 2 (correlations) and §4 findings. Paper B: Chaudhury et al., structural uncertainty,
arXiv 2606.17312. Reference figures as transcribed in ``docs/METHOD.md`` §A and §C.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from reasonshape.envs.base import LEVEL_NAMES
from reasonshape.envs.registry import PUZZLE_NAMES
from reasonshape.errors import ConfigError
from reasonshape.rewards.structural_uncertainty import auroc, flagging_auroc

__all__ = [
    "PAPER_A_TABLE1",
    "PAPER_A_TABLE2",
    "PAPER_A_FINDINGS",
    "TABLE2_METRICS",
    "OTHER_FINDINGS",
    "Correlation",
    "LevelCell",
    "GroupSU",
    "load_results",
    "pearson",
    "accuracy_by_level",
    "accuracy_by_puzzle",
    "correlation_table",
    "other_findings",
    "su_groups",
    "su_judge_counts",
    "su_summary",
    "build_report",
    "markdown_cell",
]

# ============================================================================================ reference figures
#: Paper A Table 1: model -> ((accuracy %, mean completion tokens) for trivial, easy, normal, hard).
PAPER_A_TABLE1: dict[str, tuple[tuple[float, float], ...]] = {
    "GPT-5": ((83.8, 4200), (69.5, 10200), (58.1, 17300), (5.7, 19900)),
    "Qwen3-235B": ((69.5, 10300), (44.8, 19000), (21.0, 23100), (0.0, 23600)),
    "DeepSeek-V3.2": ((77.1, 7700), (53.3, 20600), (44.8, 27000), (0.0, 36800)),
    "Kimi-K2": ((77.1, 10600), (56.2, 29700), (41.0, 43800), (1.0, 61300)),
}

#: Table 2 rows: (label, metrics key) in paper A's order.
TABLE2_METRICS: tuple[tuple[str, str], ...] = (
    ("depth", "depth"),
    ("diameter", "diameter"),
    ("avg path length", "avg_path_length"),
    ("width", "width"),
    ("|V|", "n_nodes"),
    ("tokens", "tokens"),
    ("η", "eta"),
)

#: Paper A Table 2: metrics key -> (Pearson r vs claim accuracy, Pearson r vs η); ``None`` = not reported.
PAPER_A_TABLE2: dict[str, tuple[float | None, float | None]] = {
    "depth": (-0.263, 0.046),
    "diameter": (-0.329, 0.010),
    "avg_path_length": (-0.182, 0.051),
    "width": (-0.618, -0.431),
    "n_nodes": (-0.666, -0.419),
    "tokens": (-0.576, -0.120),
    "eta": (0.368, None),
}

#: Other findings: (label, x key, y key) of the Pearson correlations paper A reports in its text.
OTHER_FINDINGS: tuple[tuple[str, str, str], ...] = (
    ("η vs tokens", "eta", "tokens"),
    ("tokens vs |V_ver|/|V_sol|", "tokens", "ver_sol_ratio"),
    ("first-error position vs η", "first_error_position", "eta"),
    ("restatements per claim vs η", "restatements_per_claim", "eta"),
)

#: Paper A's figures for :data:`OTHER_FINDINGS`: label -> (r, p or None).
PAPER_A_FINDINGS: dict[str, tuple[float, float | None]] = {
    "η vs tokens": (-0.05, 0.64),
    "tokens vs |V_ver|/|V_sol|": (0.53, None),
    "first-error position vs η": (0.28, None),
    "restatements per claim vs η": (0.27, None),
}

_DASH = "—"
_FIGURES = {"levels": "fig_levels.png", "correlations": "fig_correlations.png", "su": "fig_su.png"}
_MAX_GRAPHS = 3
_GRAPH_NODE_LIMIT = 150


# ============================================================================================ reading
def load_results(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Read a ``results.jsonl``: one JSON object per completion.

    Record schema (every field may be missing or null)::

        {"id", "puzzle", "level", "game_id", "model", "sample", "tokens", "finish_reason", "correct",
         "parse_error", "violations": [str], "n_sentences",
         "metrics": {"n_nodes", "depth", "diameter", "avg_path_length", "width", "tokens", "claim_accuracy",
                     "ver_sol_ratio", "first_error_position", "restatements_per_claim", "eta", "eta_clipped",
                     "eta_sol", "h_str", ...},
         "labels": {"correct", "wrong", "unverifiable", "tentative"},
         "extraction": {"mode": "deterministic" | "llm", "fallback": str | null},
         "su": {"U", "A", "I", "preference_mass", "rank_stability", "judge_prompts", "unparsed"} | null,
         "dispersion": float | null, "timing": {"sample_s", "score_s"}, "graph": node-link JSON | null}

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    (records, notes) : (list of dict, list of str)
        ``notes`` says what was tolerated: a last line cut short (a run interrupted while appending) is dropped
        and reported there.

    Raises
    ------
    ConfigError
        The file cannot be read, or a line other than the last is not a JSON object (the message gives its
        number).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read the results file {str(p)!r}: {e}") from e
    lines = text.splitlines()
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1)
    records, notes = [], []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            if i == last and not text.endswith("\n"):
                notes.append(f"line {i + 1} of {p.name} is cut short (interrupted run?) and was left out")
                continue
            raise ConfigError(f"{p}:{i + 1}: not JSON: {e}") from e
        if not isinstance(obj, dict):
            raise ConfigError(f"{p}:{i + 1}: expected a JSON object per line, got {type(obj).__name__}")
        records.append(obj)
    return records, notes


def _num(value: Any) -> float | None:
    """A finite number as float, else ``None`` (bools count as 0/1)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def _metric(rec: Mapping[str, Any], key: str) -> float | None:
    """``rec["metrics"][key]`` as a number; ``tokens`` falls back to the record's own ``tokens``."""
    m = rec.get("metrics")
    v = _num(m.get(key)) if isinstance(m, Mapping) else None
    if v is None and key == "tokens":
        v = _num(rec.get("tokens"))
    return v


def _tokens(rec: Mapping[str, Any]) -> float | None:
    v = _num(rec.get("tokens"))
    return v if v is not None else _metric(rec, "tokens")


def _correct(rec: Mapping[str, Any]) -> bool | None:
    v = rec.get("correct")
    return v if isinstance(v, bool) else None


def _model(rec: Mapping[str, Any]) -> str:
    m = rec.get("model")
    return str(m) if m not in (None, "") else "unknown"


def _field(rec: Mapping[str, Any], key: str) -> str:
    """``rec[key]`` as a string; ``"unknown"`` when missing or empty."""
    v = rec.get(key)
    return str(v) if v not in (None, "") else "unknown"


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    vals = set(values)
    return [v for v in order if v in vals] + sorted(vals - set(order))


def _mean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return float(np.mean(vals)) if vals else None


# ============================================================================================ statistics
class Correlation(NamedTuple):
    """A Pearson correlation: ``r`` in [-1, 1], two-sided ``p`` in [0, 1], ``n`` pairs used."""

    r: float
    p: float
    n: int


def pearson(x: Sequence[Any], y: Sequence[Any]) -> Correlation | None:
    """Pearson's r and its two-sided p-value over the pairs where both values are finite numbers.

    Parameters
    ----------
    x, y : sequence of float or None, same length
        Pairs with a ``None`` or non-finite value on either side are dropped.

    Returns
    -------
    Correlation or None
        ``None`` when fewer than 3 pairs remain or either side is constant (r undefined). Computed by
        :func:`scipy.stats.pearsonr`.

    Raises
    ------
    ConfigError
        ``x`` and ``y`` differ in length.

    Examples
    --------
    >>> c = pearson([1, 2, 3, None], [2, 4, 6, 1])
    >>> round(c.r, 6), c.n
    (1.0, 3)
    >>> pearson([1, 2], [3, 4]) is None
    True
    """
    if len(x) != len(y):
        raise ConfigError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    pairs = [(a, b) for a, b in ((_num(u), _num(v)) for u, v in zip(x, y, strict=True))
             if a is not None and b is not None]
    if len(pairs) < 3:
        return None
    xs = np.array([a for a, _ in pairs])
    ys = np.array([b for _, b in pairs])
    if np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return None
    res = stats.pearsonr(xs, ys)
    r, p = float(res.statistic), float(res.pvalue)
    if not (math.isfinite(r) and math.isfinite(p)):
        return None
    return Correlation(max(-1.0, min(1.0, r)), p, len(pairs))


@dataclass(frozen=True)
class LevelCell:
    """Accuracy and tokens of one cell of Table 1.

    Attributes
    ----------
    n : int
        Completions in the cell (with a boolean ``correct``).
    accuracy : float or None
        Percent correct in [0, 100]; ``None`` when ``n == 0``.
    mean_tokens : float or None
        Mean completion tokens over the cell's completions that report tokens; ``None`` when none does.
    """

    n: int
    accuracy: float | None
    mean_tokens: float | None


def _cell(recs: Sequence[Mapping[str, Any]]) -> LevelCell:
    flags = [c for c in (_correct(r) for r in recs) if c is not None]
    acc = 100.0 * sum(flags) / len(flags) if flags else None
    return LevelCell(len(flags), acc, _mean(_tokens(r) for r in recs))


def accuracy_by_level(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, LevelCell]]:
    """Table 1 (paper A): model -> level -> :class:`LevelCell`, plus the pseudo-level ``"all"`` per model.

    Levels appear in benchmark order (``trivial``, ``easy``, ``normal``, ``hard``; unknown levels after them).
    A record without a model counts under ``"unknown"``.
    """
    by: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by[_model(r)][_field(r, "level")].append(r)
    out = {}
    for model in sorted(by):
        levels = _ordered(by[model], LEVEL_NAMES)
        out[model] = {lv: _cell(by[model][lv]) for lv in levels}
        out[model]["all"] = _cell([r for lv in levels for r in by[model][lv]])
    return out


def accuracy_by_puzzle(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, LevelCell]]]:
    """Table 1 per puzzle: model -> puzzle -> level -> :class:`LevelCell` (plus ``"all"`` per puzzle)."""
    by: dict[str, dict[str, dict[str, list]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for r in records:
        by[_model(r)][_field(r, "puzzle")][_field(r, "level")].append(r)
    out: dict[str, dict[str, dict[str, LevelCell]]] = {}
    for model in sorted(by):
        out[model] = {}
        for puzzle in _ordered(by[model], PUZZLE_NAMES):
            cells = by[model][puzzle]
            levels = _ordered(cells, LEVEL_NAMES)
            out[model][puzzle] = {lv: _cell(cells[lv]) for lv in levels}
            out[model][puzzle]["all"] = _cell([r for lv in levels for r in cells[lv]])
    return out


def correlation_table(records: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Correlation | None,
                                                                                 Correlation | None]]:
    """Table 2 (paper A §C): metrics key -> (Pearson vs claim accuracy, Pearson vs η), one point per completion.

    Keys are those of :data:`TABLE2_METRICS`. η vs η is ``None`` (not a finding). η here is raw η (it can exceed
    1), as METHOD.md §C prescribes for eval.
    """
    acc = [_metric(r, "claim_accuracy") for r in records]
    eta = [_metric(r, "eta") for r in records]
    out = {}
    for _, key in TABLE2_METRICS:
        xs = [_metric(r, key) for r in records]
        out[key] = (pearson(xs, acc), None if key == "eta" else pearson(xs, eta))
    return out


def other_findings(records: Sequence[Mapping[str, Any]]) -> dict[str, Correlation | None]:
    """Paper A's other findings: label -> Pearson correlation over completions (see :data:`OTHER_FINDINGS`)."""
    return {label: pearson([_metric(r, x) for r in records], [_metric(r, y) for r in records])
            for label, x, y in OTHER_FINDINGS}


# ============================================================================================ structural uncertainty
@dataclass(frozen=True)
class GroupSU:
    """One group of completions (same model and instance) with its structural-uncertainty values.

    Attributes
    ----------
    key : tuple
        (model, puzzle, level, game_id), missing values as ``"unknown"``; eval's records add their group id (the
        record ``id`` before ``#``), which tells apart two groups of one instance (a manifest listing it twice).
    n : int
        Completions in the group with a boolean ``correct``.
    accuracy : float
        Fraction of them correct, in [0, 1].
    answer_correct : bool
        Whether the group's answer is correct: the answer of its top-ranked candidate (largest ``preference_mass``;
        ties go to the lowest ``sample``), or, when no candidate has a preference mass, the majority verdict
        (``accuracy > 0.5``). Reasonshape choice: paper B flags "the" answer of a query without fixing which.
    U, A, I : float
        Total uncertainty, ambiguity and instability of the group (nats), from its first record with ``su``.
    dispersion : float or None
        Answer dispersion (self-consistency entropy) of the group, from its first record that has one.
    """

    key: tuple
    n: int
    accuracy: float
    answer_correct: bool
    U: float
    A: float
    I: float  # noqa: E741 - paper B's name
    dispersion: float | None


def _su_group_key(r: Mapping[str, Any]) -> tuple:
    """A record's group: (model, puzzle, level, game_id), plus eval's group id (``id`` before ``#``) when it has one,
    so that two groups of the same instance (the manifest lists a few instances twice) stay apart."""
    key = (_model(r), _field(r, "puzzle"), _field(r, "level"), _field(r, "game_id"))
    rid = r.get("id")
    return (*key, rid.rsplit("#", 1)[0]) if isinstance(rid, str) and "#" in rid else key


def su_groups(records: Sequence[Mapping[str, Any]]) -> list[GroupSU]:
    """Group completions by (model, puzzle, level, game_id) (and eval's group id, :func:`_su_group_key`) and keep
    the groups with U, A and I.

    A group needs at least one completion with a boolean ``correct`` and one record whose ``su`` has finite
    ``U``, ``A`` and ``I``; other groups are left out. Order: first appearance in ``records``.
    """
    groups: dict[tuple, list] = {}
    for r in records:
        groups.setdefault(_su_group_key(r), []).append(r)
    out = []
    for key, recs in groups.items():
        judged = [r for r in recs if _correct(r) is not None]
        su = next((r["su"] for r in recs if isinstance(r.get("su"), Mapping)
                   and all(_num(r["su"].get(k)) is not None for k in ("U", "A", "I"))), None)
        if not judged or su is None:
            continue
        acc = sum(_correct(r) for r in judged) / len(judged)
        ranked = [r for r in judged if isinstance(r.get("su"), Mapping) and _num(r["su"].get("preference_mass"))
                  is not None]
        if ranked:
            def order(r: Mapping[str, Any]) -> tuple[float, float]:
                s = _num(r.get("sample"))
                return (-_num(r["su"]["preference_mass"]), s if s is not None else math.inf)

            answer_correct = bool(_correct(min(ranked, key=order)))
        else:
            answer_correct = acc > 0.5
        disp = next((d for d in (_num(r.get("dispersion")) for r in recs) if d is not None), None)
        out.append(GroupSU(key, len(judged), acc, answer_correct, _num(su["U"]), _num(su["A"]), _num(su["I"]), disp))
    return out


def su_judge_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The judge's bookkeeping, per group (:func:`_su_group_key`) from its first record whose ``su`` has
    ``judge_prompts``: ``groups`` judged, ``prompts`` sent, ``unparsed`` replies without a readable verdict, and
    ``no_verdict`` groups in which no reply was readable (their U / A / I are null: ties alone measure nothing, so
    :func:`su_groups` leaves them out)."""
    seen: dict[tuple, Mapping[str, Any]] = {}
    for r in records:
        su = r.get("su")
        if isinstance(su, Mapping) and _num(su.get("judge_prompts")) is not None:
            seen.setdefault(_su_group_key(r), su)
    return {"groups": len(seen), "prompts": int(sum(_num(su["judge_prompts"]) for su in seen.values())),
            "unparsed": int(sum(_num(su.get("unparsed")) or 0 for su in seen.values())),
            "no_verdict": sum(1 for su in seen.values() if _num(su.get("judge_prompts"))
                              and _num(su.get("U")) is None)}


def su_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The structural-uncertainty table (paper B), or ``None`` when no group has U, A and I.

    Returns
    -------
    dict or None
        ``n_groups``, ``n_correct``, ``n_wrong`` (groups by :attr:`GroupSU.answer_correct`);
        ``means``: {"U"|"A"|"I": (mean over correct groups or None, mean over wrong groups or None)};
        ``vs_accuracy``: {"U"|"A"|"I": Pearson correlation with group accuracy or None};
        ``auroc``: {"dispersion", "structural", "combined"} -> AUROC in [0, 1] or None for flagging wrong answers
        (groups with both signals; structural = I, higher = more suspicious; combined = mean rank percentile, see
        :func:`reasonshape.rewards.structural_uncertainty.flagging_auroc`), ``n_auroc`` groups used; when no group
        has a dispersion, ``structural`` alone is computed over all groups;
        ``completion_auroc``: {"preference_mass", "rank_stability"} -> AUROC of the negated per-completion signal
        for flagging wrong completions, or None.
    """
    groups = su_groups(records)
    if not groups:
        return None
    ok = [g for g in groups if g.answer_correct]
    bad = [g for g in groups if not g.answer_correct]
    means = {k: (_mean(getattr(g, k) for g in ok), _mean(getattr(g, k) for g in bad)) for k in ("U", "A", "I")}
    vs_acc = {k: pearson([getattr(g, k) for g in groups], [g.accuracy for g in groups]) for k in ("U", "A", "I")}
    both = [g for g in groups if g.dispersion is not None]
    if both:
        flags = flagging_auroc([not g.answer_correct for g in both], [g.dispersion for g in both],
                               [g.I for g in both])
        n_auc = len(both)
    else:
        flags = {"dispersion": None, "structural": auroc([g.I for g in groups],
                                                         [not g.answer_correct for g in groups]),
                 "combined": None}
        n_auc = len(groups)
    comp = {}
    for k in ("preference_mass", "rank_stability"):
        pts = [(-_num(r["su"].get(k)), not _correct(r)) for r in records
               if isinstance(r.get("su"), Mapping) and _num(r["su"].get(k)) is not None
               and _correct(r) is not None]
        comp[k] = auroc([s for s, _ in pts], [w for _, w in pts]) if pts else None
    return {"n_groups": len(groups), "n_correct": len(ok), "n_wrong": len(bad), "means": means,
            "vs_accuracy": vs_acc, "auroc": flags, "n_auroc": n_auc, "completion_auroc": comp}


# ============================================================================================ formatting
def _fmt_tokens(x: float | None) -> str:
    """Paper A's style: ``4.2k`` from 1,000 tokens on, else an integer."""
    if x is None:
        return _DASH
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def _fmt_acc(x: float | None) -> str:
    return _DASH if x is None else f"{x:.1f}"


def _fmt_cell(c: LevelCell | None) -> str:
    if c is None or c.n == 0:
        return _DASH
    return f"{_fmt_acc(c.accuracy)} / {_fmt_tokens(c.mean_tokens)}"


def _fmt_p(p: float) -> str:
    if p == 0.0:
        return "<1e-300"  # underflow of the t-distribution tail
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def _n_pairs(records: Sequence[Mapping[str, Any]], x: str, y: str) -> int:
    """Completions where metrics ``x`` and ``y`` are both present (the n of a correlation, defined or not)."""
    return sum(1 for r in records if _metric(r, x) is not None and _metric(r, y) is not None)


def _fmt_corr(c: Correlation | None) -> str:
    return _DASH if c is None else f"{c.r:+.3f} [{_fmt_p(c.p)}]"


def _fmt_ref(r: float | None, p: float | None = None, digits: int = 3) -> str:
    if r is None:
        return _DASH
    s = f"{r:+.{digits}f}"
    return s if p is None else f"{s} [{p:.2f}]"


def _fmt_float(x: float | None, digits: int = 3) -> str:
    return _DASH if x is None else f"{x:.{digits}f}"


def _fmt_value(v: Any, limit: int = 400) -> str:
    """A metadata value for a table cell: JSON for containers, cut to ``limit`` characters."""
    if isinstance(v, Mapping | list | tuple):
        try:
            text = json.dumps(v, sort_keys=True, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(v)
    else:
        text = _DASH if v is None else str(v)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def markdown_cell(text: Any, limit: int | None = None) -> str:
    """``text`` as one Markdown table cell: whitespace (newlines included) collapsed to single spaces, cut to
    ``limit`` characters (with "…") when given, and ``|`` escaped, so the row stays one row."""
    text = " ".join(str(text).split())
    if limit is not None and len(text) > limit:
        text = text[:max(limit - 1, 0)].rstrip() + "…"
    return text.replace("|", "\\|")


# ============================================================================================ document model
@dataclass
class _Doc:
    """A report as a list of blocks, rendered once to Markdown and once to HTML."""

    blocks: list

    def h(self, level: int, text: str) -> None:
        self.blocks.append(("h", level, text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.blocks.append(("table", list(header), [list(r) for r in rows]))

    def img(self, name: str, alt: str, png: bytes) -> None:
        self.blocks.append(("img", name, alt, png))

    def markdown(self) -> str:
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "table":
                esc = [[markdown_cell(c) for c in row] for row in [b[1], *b[2]]]
                lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(esc[0])]
                lines += ["| " + " | ".join(row) + " |" for row in esc[1:]]
                out.append("\n".join(lines))
            else:
                out.append(f"![{b[2]}]({b[1]})")
        return "\n\n".join(out) + "\n"

    def html(self, title: str) -> str:
        e = html.escape
        body = []
        for b in self.blocks:
            if b[0] == "h":
                body.append(f"<h{b[1]}>{e(b[2])}</h{b[1]}>")
            elif b[0] == "p":
                body.append(f"<p>{e(b[1])}</p>")
            elif b[0] == "table":
                head = "".join(f"<th>{e(c)}</th>" for c in b[1])
                rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in b[2])
                body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            else:
                data = base64.b64encode(b[3]).decode("ascii")
                body.append(f'<figure><img alt="{e(b[2])}" src="data:image/png;base64,{data}">'
                            f"<figcaption>{e(b[2])}</figcaption></figure>")
        style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
                 "table{border-collapse:collapse;margin:1em 0;font-size:0.9em}"
                 "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
                 "th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}"
                 "img{max-width:100%}figcaption{font-size:0.85em;color:#555}")
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>'
                f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


# ============================================================================================ plots
def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def _figure(w: float, h: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h))
    FigureCanvasAgg(fig)  # Agg canvas; pyplot's global state is never touched
    return fig


def _plot_levels(table: Mapping[str, Mapping[str, LevelCell]]) -> bytes:
    fig = _figure(11, 4)
    ax_acc, ax_tok = fig.subplots(1, 2)
    for name, ref in PAPER_A_TABLE1.items():
        xs = list(range(len(LEVEL_NAMES)))
        ax_acc.plot(xs, [a for a, _ in ref], linestyle="--", linewidth=1, alpha=0.6, label=f"paper A: {name}")
        ax_tok.plot(xs, [t for _, t in ref], linestyle="--", linewidth=1, alpha=0.6, label=f"paper A: {name}")
    for model, cells in table.items():
        pts = [(i, cells[lv]) for i, lv in enumerate(LEVEL_NAMES) if lv in cells and cells[lv].n]
        acc = [(i, c.accuracy) for i, c in pts if c.accuracy is not None]
        tok = [(i, c.mean_tokens) for i, c in pts if c.mean_tokens is not None]
        if acc:
            ax_acc.plot(*zip(*acc, strict=True), marker="o", linewidth=2.2, label=model)
        if tok:
            ax_tok.plot(*zip(*tok, strict=True), marker="o", linewidth=2.2, label=model)
    for ax, ylabel in ((ax_acc, "accuracy (%)"), (ax_tok, "mean completion tokens")):
        ax.set_xticks(range(len(LEVEL_NAMES)), LEVEL_NAMES)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    ax_acc.set_ylim(-3, 103)
    ax_tok.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return _png(fig)


_SCATTERS = (
    ("η", "eta", "claim accuracy", "claim_accuracy"),
    ("|V|", "n_nodes", "claim accuracy", "claim_accuracy"),
    ("tokens", "tokens", "η", "eta"),
    ("|V_ver|/|V_sol|", "ver_sol_ratio", "tokens", "tokens"),
    ("η", "eta", "first-error position", "first_error_position"),
    ("η", "eta", "restatements per claim", "restatements_per_claim"),
)


def _plot_correlations(records: Sequence[Mapping[str, Any]]) -> bytes | None:
    panels = []
    for xl, xk, yl, yk in _SCATTERS:
        pts = [(x, y) for x, y in ((_metric(r, xk), _metric(r, yk)) for r in records)
               if x is not None and y is not None]
        panels.append((xl, yl, pts, pearson([p[0] for p in pts], [p[1] for p in pts]) if pts else None))
    if not any(pts for _, _, pts, _ in panels):
        return None
    fig = _figure(12, 7)
    axes = fig.subplots(2, 3).ravel()
    for ax, (xl, yl, pts, corr) in zip(axes, panels, strict=True):
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, alpha=0.6)
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(f"r = {corr.r:+.3f} (n = {corr.n})" if corr else f"r undefined (n = {len(pts)})", fontsize=9)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return _png(fig)


def _plot_su(summary: Mapping[str, Any]) -> bytes:
    fig = _figure(6, 3.5)
    ax = fig.subplots()
    keys = ("U", "A", "I")
    xs = np.arange(len(keys))
    for off, idx, label in ((-0.2, 0, "answer correct"), (0.2, 1, "answer wrong")):
        vals = [summary["means"][k][idx] for k in keys]
        ax.bar(xs + off, [v if v is not None else 0.0 for v in vals], width=0.4, label=label)
    ax.set_xticks(xs, ["U (total)", "A (ambiguity)", "I (instability)"])
    ax.set_ylabel("mean (nats)")
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return _png(fig)


# ============================================================================================ sections
def _summary_section(doc: _Doc, records: Sequence[Mapping[str, Any]], notes: Sequence[str]) -> None:
    doc.h(2, "Run summary")
    n = len(records)
    models = sorted({_model(r) for r in records})
    instances = {(r.get("puzzle"), r.get("game_id")) for r in records}
    parse_err = sum(1 for r in records if r.get("parse_error"))
    truncated = sum(1 for r in records if r.get("finish_reason") == "length")
    judged = [c for c in (_correct(r) for r in records) if c is not None]
    modes = Counter(str((r.get("extraction") or {}).get("mode")) for r in records
                    if isinstance(r.get("extraction"), Mapping) and (r.get("extraction") or {}).get("mode"))
    fallbacks = Counter(str(r["extraction"]["fallback"]) for r in records
                        if isinstance(r.get("extraction"), Mapping) and r["extraction"].get("fallback"))
    with_graph = sum(1 for r in records if _has_graph(r))
    rows = [
        ["completions", str(n)],
        ["models", ", ".join(models)],
        ["instances", str(len(instances))],
        ["accuracy (all)", f"{100 * sum(judged) / len(judged):.1f} %" if judged else _DASH],
        ["unparseable answers", f"{parse_err} ({100 * parse_err / n:.1f} %)"],
        ["truncated (finish_reason = length)", f"{truncated} ({100 * truncated / n:.1f} %)"],
        ["completions with a claim graph (|V| >= 1)", f"{with_graph} ({100 * with_graph / n:.1f} %)"],
        ["extraction modes", ", ".join(f"{k}: {v}" for k, v in sorted(modes.items())) or _DASH],
        ["extraction fallbacks", ", ".join(f"{k}: {v}" for k, v in sorted(fallbacks.items())) or _DASH],
    ]
    viol = Counter(v for r in records if isinstance(r.get("violations"), list) for v in r["violations"]
                   if isinstance(v, str))
    if viol:
        rows.append(["most frequent rule violations", ", ".join(f"{k} ({v})" for k, v in viol.most_common(5))])
    doc.table(["", "value"], rows)
    for note in notes:
        doc.p(f"Note: {note}.")


def _table1_section(doc: _Doc, records: Sequence[Mapping[str, Any]], out_dir: Path, files: list[Path]) -> None:
    doc.h(2, "Table 1: accuracy and completion tokens")
    doc.p("Cells: accuracy % / mean completion tokens (paper A's format: 4.2k = 4,200 tokens). Rows marked "
          "'paper A' are the reference figures of paper A, Table 1.")
    t1 = accuracy_by_level(records)
    levels = _ordered({lv for cells in t1.values() for lv in cells if lv != "all"}, LEVEL_NAMES)
    rows = [[m, *(_fmt_cell(cells.get(lv)) for lv in levels), _fmt_cell(cells["all"]), str(cells["all"].n)]
            for m, cells in t1.items()]
    generated = [lv for lv in levels if lv in LEVEL_NAMES]
    for name, ref in PAPER_A_TABLE1.items() if generated else ():
        refd = dict(zip(LEVEL_NAMES, ref, strict=True))
        rows.append([f"paper A: {name}", *(f"{refd[lv][0]:.1f} / {_fmt_tokens(refd[lv][1])}" if lv in refd
                                           else _DASH for lv in levels), _DASH, _DASH])
    doc.table(["model", *levels, "all", "n"], rows)
    if not generated:
        doc.p(f"No completion is of a generated level ({', '.join(LEVEL_NAMES)}): paper A's rows and the figure "
              "by level are left out.")
    else:
        png = _plot_levels(t1)
        _save(out_dir, _FIGURES["levels"], png, files)
        doc.img(_FIGURES["levels"], "Accuracy and mean completion tokens by level (dashed: paper A, Table 1)", png)
    for model, puzzles in accuracy_by_puzzle(records).items():
        doc.h(3, f"Per puzzle: {model}")
        levels = _ordered({lv for cells in puzzles.values() for lv in cells if lv != "all"}, LEVEL_NAMES)
        doc.table(["puzzle", *levels, "all", "n"],
                  [[p, *(_fmt_cell(cells.get(lv)) for lv in levels), _fmt_cell(cells["all"]), str(cells["all"].n)]
                   for p, cells in puzzles.items()])


def _has_graph(rec: Mapping[str, Any]) -> bool:
    """The completion has a claim graph with at least one node (|V| = ``metrics.n_nodes`` >= 1)."""
    n = _metric(rec, "n_nodes")
    return n is not None and n >= 1


def _structure_section(doc: _Doc, records: Sequence[Mapping[str, Any]]) -> None:
    doc.h(2, "Structure by level")
    doc.p("Means over completions with a claim graph of at least one node (|V| = metrics.n_nodes, after static "
          "merging; raw η, which can exceed 1 when H_str < ln|C*|). A mean over fewer completions than n graphs "
          "(a metric undefined for some graphs, e.g. η without a solution claim) gives its own n in brackets.")
    by: dict[tuple[str, str], list] = defaultdict(list)
    for r in records:
        if _has_graph(r):
            by[(_model(r), _field(r, "level"))].append(r)
    rows = []
    for model in sorted({m for m, _ in by}):
        for lv in _ordered({lv for m, lv in by if m == model}, LEVEL_NAMES):
            recs = by[(model, lv)]
            cells = []
            for k, d in (("eta", 3), ("claim_accuracy", 3), ("n_nodes", 1), ("h_str", 3)):
                xs = [x for x in (_metric(r, k) for r in recs) if x is not None]
                cells.append(_fmt_float(_mean(xs), d) + (f" ({len(xs)})" if xs and len(xs) < len(recs) else ""))
            rows.append([model, lv, *cells, str(len(recs))])
    if not rows:  # e.g. an untrained model whose completions state no claim: say so rather than an empty table
        doc.p(f"No completion of the {len(records)} scored has a claim graph with a node: nothing to average.")
        return
    doc.table(["model", "level", "mean η", "mean claim accuracy", "mean |V|", "mean H_str (nats)", "n graphs"], rows)


def _table2_section(doc: _Doc, records: Sequence[Mapping[str, Any]]) -> None:
    doc.h(2, "Table 2: structural metrics vs claim accuracy and η")
    doc.p("Pearson r [two-sided p] over completions, pooled across models; paper A's r beside. '—': fewer than "
          "3 points or constant input.")
    t2 = correlation_table(records)
    rows = []
    for label, key in TABLE2_METRICS:
        vs_acc, vs_eta = t2[key]
        ref_acc, ref_eta = PAPER_A_TABLE2[key]
        n = _n_pairs(records, key, "claim_accuracy")
        rows.append([label, _fmt_corr(vs_acc), _fmt_ref(ref_acc), _fmt_corr(vs_eta), _fmt_ref(ref_eta), str(n)])
    doc.table(["metric", "r vs claim accuracy", "paper A", "r vs η", "paper A", "n (vs claim accuracy)"], rows)
    models = sorted({_model(r) for r in records})
    if len(models) > 1:
        for model in models:
            sub = [r for r in records if _model(r) == model]
            t2m = correlation_table(sub)
            doc.h(3, f"Table 2: {model}")
            doc.table(["metric", "r vs claim accuracy", "r vs η"],
                      [[label, _fmt_corr(t2m[key][0]), _fmt_corr(t2m[key][1])] for label, key in TABLE2_METRICS])


def _findings_section(doc: _Doc, records: Sequence[Mapping[str, Any]], out_dir: Path, files: list[Path]) -> None:
    doc.h(2, "Other findings")
    found = other_findings(records)
    rows = [[label, _fmt_corr(found[label]), str(_n_pairs(records, x, y)),
             _fmt_ref(*PAPER_A_FINDINGS[label], digits=2)] for label, x, y in OTHER_FINDINGS]
    doc.table(["finding", "r [p]", "n", "paper A r [p]"], rows)
    png = _plot_correlations(records)
    if png is not None:
        _save(out_dir, _FIGURES["correlations"], png, files)
        doc.img(_FIGURES["correlations"], "Structural metrics against each other, one point per completion", png)


def _su_section(doc: _Doc, records: Sequence[Mapping[str, Any]], out_dir: Path, files: list[Path],
                meta: Mapping[str, Any] | None = None) -> None:
    doc.h(2, "Structural uncertainty (paper B)")
    s = su_summary(records)
    jc = su_judge_counts(records)
    if s is None:
        if jc["groups"] and jc["no_verdict"] == jc["groups"]:  # judged, but no group measured anything
            doc.p(f"Structural uncertainty was computed, but the judge gave no readable verdict in any group: "
                  f"{jc['no_verdict']} of {jc['groups']} judged groups without one, {jc['unparsed']} of "
                  f"{jc['prompts']} replies unreadable (ties alone measure nothing), so no group has U, A or I.")
            return
        su_meta = (meta or {}).get("su")
        why = su_meta.get("not_computed") if isinstance(su_meta, Mapping) else None
        doc.p("No record carries structural-uncertainty values (su with U, A, I)"
              + (f"; not computed in this run: {why}" if why else "") + ": section left out.")
        return
    if jc["prompts"]:
        su_meta = (meta or {}).get("su")
        dropped = isinstance(su_meta, Mapping) and su_meta.get("unparsed_as") == "drop"
        how = "left out of the fit (--judge-unparsed drop)" if dropped else "counted as ties"
        doc.p(f"The judge's replies had no readable verdict in {jc['unparsed']} of {jc['prompts']} prompts "
              f"({100 * jc['unparsed'] / jc['prompts']:.1f} %, {how}); {jc['no_verdict']} of "
              f"{jc['groups']} judged groups had no readable verdict at all and are left out of every "
              "number below (ties alone measure nothing).")
    doc.p(f"{s['n_groups']} groups (a group: one model's completions of one instance): the answer (top-ranked "
          f"candidate, or majority verdict) is correct in {s['n_correct']} and wrong in {s['n_wrong']}. "
          "U = H(mean π), A = mean H(π^(m)), I = U - A, in nats. Paper B: I relates negatively, A positively, "
          "to accuracy on reasoning tasks.")
    rows = [[k, _fmt_float(s["means"][k][0]), _fmt_float(s["means"][k][1]), _fmt_corr(s["vs_accuracy"][k])]
            for k in ("U", "A", "I")]
    doc.table(["signal", "mean (answer correct)", "mean (answer wrong)", "r vs group accuracy [p]"], rows)
    a = s["auroc"]
    doc.table(["flagging wrong answers by", "AUROC", "groups"],
              [["dispersion (answer entropy)", _fmt_float(a["dispersion"]), str(s["n_auroc"])],
               ["structural (I)", _fmt_float(a["structural"]), str(s["n_auroc"])],
               ["combined (mean rank)", _fmt_float(a["combined"]), str(s["n_auroc"])]])
    c = s["completion_auroc"]
    doc.p(f"Per completion, AUROC of flagging wrong completions by low preference mass (N·π̄_i - 1): "
          f"{_fmt_float(c['preference_mass'])}; by low rank stability: {_fmt_float(c['rank_stability'])}.")
    png = _plot_su(s)
    _save(out_dir, _FIGURES["su"], png, files)
    doc.img(_FIGURES["su"], "Mean U, A, I of groups whose answer is correct vs wrong", png)


def _pick_graphs(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Up to 3 records with a graph: the first correct one, the first wrong one, then the next; small ones first (a
    label with no small graph takes its first graph of any size, so a kept correct example is always shown)."""
    cands = [r for r in records if isinstance(r.get("graph"), Mapping)]

    def size(r: Mapping[str, Any]) -> int:
        nodes = r["graph"].get("nodes")
        return len(nodes) if isinstance(nodes, list) else 0

    small = [r for r in cands if size(r) <= _GRAPH_NODE_LIMIT] or cands
    picked: list = []
    for want in (True, False):
        r = next((r for pool in (small, cands) for r in pool if _correct(r) is want
                  and not any(r is q for q in picked)), None)
        if r is not None:
            picked.append(r)
    for r in small:
        if len(picked) >= _MAX_GRAPHS:
            break
        if not any(r is q for q in picked):
            picked.append(r)
    return picked[:_MAX_GRAPHS]


def _c_star(rec: Mapping[str, Any]):
    """C* of the record's instance (highlights G_sol), or ``None`` when the puzzle or game ID is not usable."""
    from reasonshape.envs.registry import get
    from reasonshape.errors import ReasonshapeError

    try:
        p = get(str(rec.get("puzzle")))
        return p.solution_claims(p.parse_game_id(str(rec.get("game_id"))))
    except (ReasonshapeError, ValueError, KeyError):
        return None


def _graphs_section(doc: _Doc, records: Sequence[Mapping[str, Any]], out_dir: Path, files: list[Path]) -> None:
    picked = _pick_graphs(records)
    if not picked:
        return
    from reasonshape.errors import ReasonshapeError
    from reasonshape.extraction.graph import ClaimGraph

    doc.h(2, "Example claim graphs")
    doc.p("Fill colour by label (green correct, red wrong, grey unverifiable, orange tentative); hollow nodes are "
          "placeholders; dashed edges are restatements; thick outlines mark G_sol.")
    for k, rec in enumerate(picked, 1):
        name = f"graph_{k}.png"
        title = (f"{rec.get('puzzle')} {rec.get('level')} | {_model(rec)} | sample {rec.get('sample')} | "
                 f"{'correct' if _correct(rec) else 'wrong' if _correct(rec) is False else 'unjudged'}")
        eta, n_nodes = _metric(rec, "eta"), _metric(rec, "n_nodes")
        drawn = len(rec["graph"].get("nodes") or [])
        caption = (f"{title} | η = {_fmt_float(eta)} | |V| = {_fmt_float(n_nodes, 0)} after static merging, as in "
                   f"the tables and η (the drawing shows the {drawn} extracted nodes before merging)")
        try:
            graph = ClaimGraph.from_json(rec["graph"])
            path = graph.draw(out_dir / name, c_star=_c_star(rec), title=title)
        except (ReasonshapeError, ValueError, KeyError, TypeError) as e:
            doc.p(f"Graph of record {rec.get('id')!r} could not be drawn: {type(e).__name__}: {e}")
            continue
        files.append(path)
        doc.img(name, caption, path.read_bytes())


def _skipped_section(doc: _Doc, skipped: Any) -> None:
    doc.h(2, "Skipped instances")
    entries = []
    for e in skipped or ():
        d = e.to_dict() if hasattr(e, "to_dict") else e if isinstance(e, Mapping) else {"puzzle": str(e)}
        entries.append(d)
    unreadable = [d for d in entries if d.get("reason")]  # eval's traces whose game ID does not parse
    entries = [d for d in entries if not d.get("reason")]
    if unreadable:
        doc.p(f"{len(unreadable)} traces were skipped because their instance could not be read.")
        doc.table(["puzzle", "game ID", "model", "reason"],
                  [[str(d.get("puzzle")), str(d.get("game_id")), str(d.get("model")), str(d["reason"])]
                   for d in unreadable[:20]])
    if not entries:
        if not unreadable:
            doc.p("None: every manifest instance asked for belongs to an implemented puzzle.")
        return
    by: dict[str, list] = defaultdict(list)
    for d in entries:
        by[str(d.get("puzzle"))].append(d)
    noun = "puzzle" if len(by) == 1 else "puzzles"
    doc.p(f"{len(entries)} instances of {len(by)} unimplemented {noun} were skipped.")
    rows = []
    for p in _ordered(by, PUZZLE_NAMES):
        levels = Counter(str(d.get("level")) for d in by[p])
        rows.append([p, str(len(by[p])), ", ".join(f"{lv} ({levels[lv]})" for lv in _ordered(levels, LEVEL_NAMES))])
    doc.table(["puzzle", "instances", "levels"], rows)


def _meta_section(doc: _Doc, records: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> None:
    doc.h(2, "Run metadata")
    rows = [[str(k), _fmt_value(v)] for k, v in meta.items() if k != "skipped"]
    sample_s = [_num((r.get("timing") or {}).get("sample_s")) for r in records if isinstance(r.get("timing"), Mapping)]
    score_s = [_num((r.get("timing") or {}).get("score_s")) for r in records if isinstance(r.get("timing"), Mapping)]
    sample_s = [x for x in sample_s if x is not None]
    score_s = [x for x in score_s if x is not None]
    total_sample, total_score = sum(sample_s), sum(score_s)
    run_time = meta.get("time")
    total_judge = _num(run_time.get("judge_s")) if isinstance(run_time, Mapping) else None
    if sample_s or score_s:
        parts = [("sampling", total_sample), *([("judge", total_judge)] if total_judge else []),
                 ("scoring", total_score)]
        both = sum(t for _, t in parts)
        share = (" (" + " / ".join(f"{100 * t / both:.1f} %" for _, t in parts) + ")" if both > 0 else "")
        rows.append([f"time split {' / '.join(k for k, _ in parts)} (sampling and scoring from records, judge "
                     "from the run's sessions)" if total_judge else "time split sampling / scoring (from records)",
                     " / ".join(f"{t:.2f} s" for _, t in parts) + share])
    rows.append(["median scoring overhead per completion",
                 f"{1000 * statistics.median(score_s):.1f} ms" if score_s else _DASH])
    doc.table(["key", "value"], rows)


def _save(out_dir: Path, name: str, png: bytes, files: list[Path]) -> None:
    path = out_dir / name
    path.write_bytes(png)
    files.append(path)


# ============================================================================================ entry point
def _remove_stale_figures(out_dir: Path, written: Sequence[Path]) -> None:
    """Remove the figures an earlier report left in ``out_dir`` that this one did not write (a rebuild with fewer
    example graphs, or without a figure's data), so the folder holds only this report's files."""
    keep = {p.name for p in written}
    ours = [out_dir / name for name in _FIGURES.values()]
    ours += [p for p in out_dir.glob("graph_*.png") if re.fullmatch(r"graph_[0-9]+\.png", p.name)]
    for path in ours:
        if path.name not in keep:
            path.unlink(missing_ok=True)


def build_report(results_path: str | Path, out_dir: str | Path, meta: Mapping[str, Any] | None = None
                 ) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` (plus PNG figures) for a ``results.jsonl``.

    Parameters
    ----------
    results_path : str or Path
        The results file (schema in :func:`load_results`). May be empty.
    out_dir : str or Path
        Output folder, created if missing. Receives ``report.md``, ``report.html``, ``fig_levels.png``,
        ``fig_correlations.png`` and ``fig_su.png`` when they have data, and ``graph_<k>.png`` for the example
        claim graphs. Existing files of these names are overwritten, and those this report does not write (an
        earlier report's) are removed.
    meta : mapping, optional
        Run metadata printed as a key/value table (model, backend, versions, seeds, timings...: any JSON-able
        values). ``meta["skipped"]``, when present, is the list of skipped manifest entries
        (:class:`~reasonshape.training.manifest.ManifestEntry` or dicts) and gets its own section.

    Returns
    -------
    (md_path, html_path) : tuple of Path

    Raises
    ------
    ConfigError
        The results file cannot be read or has a malformed line (see :func:`load_results`), or ``meta`` is not a
        mapping.

    Notes
    -----
    Statistics are per completion (Table 1, Table 2, other findings) or per group (structural uncertainty). Plots
    use matplotlib's Agg canvas without pyplot, so building a report is thread-safe and leaves no global state.
    Source: the sections follow paper A (Tables 1-2, §4 findings) and paper B (U / A / I, AUROC); layout and
    formatting are reasonshape choices.
    """
    if meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        raise ConfigError(f"meta must be a mapping (dict), got {type(meta).__name__}")
    records, notes = load_results(results_path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    doc = _Doc([])
    title = f"reasonshape eval report: {meta.get('model') or ', '.join(sorted({_model(r) for r in records}))}"
    doc.h(1, title.rstrip(": "))
    doc.p(f"Results: {Path(results_path).name}, {len(records)} completions.")
    if not records:
        doc.p("The results file holds no completions: there is nothing to tabulate yet.")
        for note in notes:
            doc.p(f"Note: {note}.")
    else:
        _summary_section(doc, records, notes)
        _table1_section(doc, records, out, files)
        _structure_section(doc, records)
        _table2_section(doc, records)
        _findings_section(doc, records, out, files)
        _su_section(doc, records, out, files, meta)
        _graphs_section(doc, records, out, files)
    _skipped_section(doc, meta.get("skipped"))
    _meta_section(doc, records, meta)
    _remove_stale_figures(out, files)
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text(doc.markdown(), encoding="utf-8")
    html_path.write_text(doc.html(title), encoding="utf-8")
    return md_path, html_path
