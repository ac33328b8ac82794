"""Regression tests of deterministic claim extraction on real model traces (issue 4, "Real traces").

Data (offline, in ``tests/data``):

* ``real_traces_regression.jsonl``: 20 real traces (reasoning-gym futoshiki / sudoku / mini_sudoku; Claude Sonnet 4,
  Llama-3.3-70B, Llama-4-Maverick; right and wrong answers), rows copied unchanged from
  ``shared/data/real_traces/reasoning_gym_eval_dev.jsonl`` (open-thought/reasoning-gym-eval, Apache-2.0; provenance
  in each row's ``source``);
* ``real_traces_regression_expected.json``: for each trace, claims a careful reader sees in a quoted sentence, in
  the claim schema (1-based (row, column)), with the label worked out by hand from the instance's solution
  (``correct`` / ``wrong``) or from the trace's wording (``tentative``). They were written by reading the traces,
  not by copying extractor output; :class:`TestExpectationsAgainstSolver` re-checks every correct/wrong label with
  the solver, independently of the extractor.

A claim marked ``known_miss`` is one the deterministic schema does not produce yet: its case is a strict xfail, so
a schema fix flips it (and the marker must then go).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import get
from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.envs.interop import REASONING_GYM_TASKS, load_reasoning_gym_traces
from reasonshape.extraction.segment import split_sentences, trace_text
from reasonshape.rewards.scorer import Scorer, score_completion

DATA = Path(__file__).resolve().parents[1] / "data"
REGRESSION = DATA / "real_traces_regression.jsonl"
EXPECTED = DATA / "real_traces_regression_expected.json"
SAMPLE = DATA / "real_traces_sample.jsonl"
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "real_traces_summary.py"
LABELS = {lab.value for lab in ClaimLabel}


# ----------------------------------------------------------------------------------------------- helpers
@functools.lru_cache(maxsize=1)
def _expected() -> dict:
    return json.loads(EXPECTED.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _traces() -> dict:
    return {t.source: t for t in load_reasoning_gym_traces(REGRESSION)}


@functools.cache
def _scored(source: str):
    """The trace, its sentences and its score (graph kept), computed once per trace."""
    tr = _traces()[source]
    puzzle = get(REASONING_GYM_TASKS[tr.task])
    score = score_completion(puzzle, tr.instance, tr.completion, keep_graph=True)
    return tr, puzzle, split_sentences(trace_text(tr.completion)), score


def _claim(spec: dict) -> Claim:
    value = spec["value"]
    if isinstance(value, list):
        value = tuple(value)
    return Claim(spec["kind"], tuple(tuple(c) for c in spec["cells"]), value, spec["positive"])


def _sentences_of(spec: dict, sentences) -> list[int]:
    """Indices of the sentences the expectation points at (see the expectations file's ``_about``)."""
    if spec.get("exact"):
        hits = [s.index for s in sentences if s.text == spec["sentence"]]
    else:
        hits = [s.index for s in sentences if spec["sentence"] in s.text]
    if "nth" in spec and hits:
        hits = [hits[spec["nth"]]]
    return hits


def _cases(xfail: bool = True):
    """One pytest case per expected claim; known misses are strict xfails when ``xfail``."""
    out = []
    for t in _expected()["traces"]:
        for k, spec in enumerate(t["claims"]):
            miss = xfail and "known_miss" in spec
            marks = [pytest.mark.xfail(strict=True, reason=spec["known_miss"])] if miss else []
            tag = t["source"].rsplit("/", 1)[-1]
            out.append(pytest.param(t["source"], spec, id=f"{t['model'].split('_')[-1]}:{tag}:{k}", marks=marks))
    return out


def _truths(puzzle, instance, claim: Claim) -> set[bool]:
    """Truth of ``claim`` in each solution (at most 64), computed here from the solution grids, not by the
    puzzle's ``verify_claim``: value, candidates and greater claims on 1-based (row, column) cells."""
    sols = puzzle.solve(instance, 64).solutions
    out = set()
    for s in sols:
        vals = [s[r - 1][c - 1] for r, c in claim.cells]
        if claim.kind == "value":
            t = vals[0] == claim.value
        elif claim.kind == "candidates":
            t = vals[0] in claim.value
        elif claim.kind == "greater":
            t = vals[0] > vals[1]
        else:
            raise AssertionError(f"no oracle for claim kind {claim.kind!r}")
        out.add(t == claim.positive)
    return out


@functools.cache
def _bench():
    """benchmarks/real_traces_summary.py as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("real_traces_summary", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["real_traces_summary"] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod


# ----------------------------------------------------------------------------------------------- data files
class TestRegressionData:
    def test_every_expected_trace_is_shipped_and_vice_versa(self):
        shipped = [json.loads(line)["source"] for line in REGRESSION.read_text(encoding="utf-8").splitlines()
                   if line.strip()]
        expected = [t["source"] for t in _expected()["traces"]]
        assert len(shipped) == len(set(shipped)) == 20
        assert sorted(shipped) == sorted(expected)

    def test_spread_of_tasks_models_and_verdicts(self):
        trs = list(_traces().values())
        assert {t.task for t in trs} == {"futoshiki", "sudoku", "mini_sudoku"}
        models = Counter(t.model for t in trs)
        assert set(models) == {"anthropic_claude-sonnet-4", "meta-llama_llama-3.3-70b-instruct",
                               "meta-llama_llama-4-maverick"}
        assert min(models.values()) >= 3
        rg = Counter(t.reasoning_gym_score == 1.0 for t in trs)
        assert rg[True] >= 5 and rg[False] >= 5

    def test_records_keep_their_attribution(self):
        for line in REGRESSION.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            assert row["license"] == "Apache-2.0"
            assert row["source"].startswith("open-thought/reasoning-gym-eval@")

    def test_expectations_are_well_formed(self):
        n = 0
        for t in _expected()["traces"]:
            assert 2 <= len(t["claims"]) <= 7, t["source"]
            for spec in t["claims"]:
                assert spec["label"] in LABELS
                assert spec["kind"] in ("value", "candidates", "greater")
                assert all(len(c) == 2 and min(c) >= 1 for c in spec["cells"])
                n += 1
        known = sum("known_miss" in s for t in _expected()["traces"] for s in t["claims"])
        assert n >= 60 and known <= n // 5  # misses stay few

    @pytest.mark.parametrize(("source", "spec"), _cases(xfail=False))
    def test_quoted_sentence_exists(self, source, spec):
        _, _, sentences, _ = _scored(source)
        assert _sentences_of(spec, sentences), f"no sentence matches {spec['sentence']!r}"


class TestExpectationsAgainstSolver:
    """The hand-derived correct / wrong labels agree with the solver's solutions (extractor not involved)."""

    @pytest.mark.parametrize(("source", "spec"), _cases(xfail=False))
    def test_label_matches_solutions(self, source, spec):
        tr, puzzle, _, _ = _scored(source)
        claim = _claim(spec)
        truths = _truths(puzzle, tr.instance, claim)
        assert truths, "instance without a solution"
        if spec["label"] == "correct":
            assert truths == {True}, spec
        elif spec["label"] == "wrong":
            assert truths == {False}, spec


# ----------------------------------------------------------------------------------------------- extraction
@pytest.mark.parametrize(("source", "spec"), _cases())
def test_expected_claim_is_extracted_with_its_label(source, spec):
    """The claim occurs in the quoted sentence(s) (every match, or the ``nth``) with the hand-derived label."""
    _, _, sentences, score = _scored(source)
    assert score.graph is not None, score.extraction_fallback
    want, label = _claim(spec), spec["label"]
    hits = _sentences_of(spec, sentences)
    assert hits
    for s in hits:
        got = [(n.claim, str(n.label)) for n in score.graph.nodes() if n.sentence == s and n.origin != "placeholder"]
        assert (want, label) in got, f"sentence {s} {sentences[s].text!r}: expected {want} {label}, got {got}"


# ----------------------------------------------------------------------------------------------- whole files
@pytest.mark.parametrize("path", [SAMPLE, REGRESSION], ids=["sample", "regression"])
def test_whole_file_scores_without_crash_and_graphs_validate(path):
    n = 0
    for tr in load_reasoning_gym_traces(path):
        puzzle = get(REASONING_GYM_TASKS[tr.task])
        sc = score_completion(puzzle, tr.instance, tr.completion, keep_graph=True)
        n += 1
        assert sc.error is None
        assert not (sc.extraction_fallback or "").startswith("extraction failed"), sc.extraction_fallback
        assert sc.graph is not None
        sc.graph.validate()  # raises NotADAGError on any broken invariant
        stated = sum(1 for node in sc.graph.nodes() if node.origin != "placeholder")
        assert sum(sc.labels.values()) == stated
        assert sc.eta is None or math.isfinite(sc.eta)
        assert sc.eta_clipped is None or 0.0 <= sc.eta_clipped <= 1.0
        # a parsed answer that breaks no rule is accepted, and only then
        assert sc.correct == (sc.parsed and not sc.violations)
    assert n == (31 if path == SAMPLE else 20)


def test_scorer_and_score_completion_agree_on_the_regression_file():
    scorer = Scorer()
    for tr in load_reasoning_gym_traces(REGRESSION):
        name = REASONING_GYM_TASKS[tr.task]
        a = scorer.score(name, tr.instance.game_id, tr.completion)
        _, _, _, b = _scored(tr.source)
        assert (a.correct, a.labels, a.n_sentences) == (b.correct, b.labels, b.n_sentences)
        assert (a.eta is None and b.eta is None) or a.eta == pytest.approx(b.eta)


# ----------------------------------------------------------------------------------------------- the benchmark
class TestSummaryBenchmark:
    def _row(self, mod, i, *, task="sudoku", model="m", claims=(0, 0, 0, 0), eta=None, accepted=False, rg=False,
             crashed=False, failed=False, ms=1.0):
        labels = dict(zip(("correct", "wrong", "unverifiable", "tentative"), claims, strict=True))
        return mod.TraceRow(i, task, model, f"s{i}", crashed, failed, accepted, rg, True, labels, eta, ms)

    def test_summarise_hand_computed(self):
        mod = _bench()
        rows = [
            self._row(mod, 0, claims=(3, 1, 0, 0), eta=0.2, accepted=True, rg=True, ms=2.0),
            self._row(mod, 1, claims=(1, 1, 0, 2), eta=None, accepted=True, rg=False, ms=4.0),
            self._row(mod, 2, claims=(0, 0, 0, 0), eta=0.6, accepted=False, rg=False, ms=6.0),
        ]
        s = mod.summarise(rows)
        # claims per trace 4, 4, 0 -> median 4; p10 = 0 + 0.2 * (4 - 0) = 0.8 (linear interpolation)
        assert s["claims"]["median"] == 4 and s["claims"]["p10"] == pytest.approx(0.8)
        assert s["claims"]["total"] == 8
        # label shares over 8 occurrences: 4 correct, 2 wrong, 2 tentative
        assert s["label_shares"] == pytest.approx({"correct": 0.5, "wrong": 0.25, "unverifiable": 0.0,
                                                   "tentative": 0.25})
        # eta defined for 0.2 and 0.6: median 0.4, q1 = 0.2 + 0.25 * 0.4 = 0.3, one of three undefined
        assert s["eta"]["median"] == pytest.approx(0.4) and s["eta"]["q1"] == pytest.approx(0.3)
        assert s["eta"]["undefined_share"] == pytest.approx(1 / 3)
        assert s["agreement"] == {"both": 1, "ours_only": 1, "rg_only": 0, "neither": 1}
        assert (s["accepted"], s["rg_accepted"], s["crashes"]) == (2, 1, 0)
        assert s["time_ms"] == {"median": 4.0, "max": 6.0}

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(st.lists(st.integers(0, 50), min_size=4, max_size=4),
                              st.one_of(st.none(), st.floats(-1, 2, allow_nan=False)), st.booleans(), st.booleans()),
                    min_size=1, max_size=30))
    def test_summarise_invariants(self, spec):
        mod = _bench()
        rows = [self._row(mod, i, claims=tuple(c), eta=e, accepted=a, rg=g) for i, (c, e, a, g) in enumerate(spec)]
        s = mod.summarise(rows)
        assert s["claims"]["p10"] <= s["claims"]["median"] <= s["claims"]["p90"]
        if s["label_shares"] is not None:
            assert sum(s["label_shares"].values()) == pytest.approx(1.0)
        assert 0.0 <= s["eta"]["undefined_share"] <= 1.0
        if s["eta"]["defined"]:
            assert s["eta"]["q1"] <= s["eta"]["median"] <= s["eta"]["q3"]
        assert sum(s["agreement"].values()) == len(rows)
        assert s["accepted"] == s["agreement"]["both"] + s["agreement"]["ours_only"]

    def test_summarise_empty_and_crashed(self):
        mod = _bench()
        s = mod.summarise([])
        assert s["traces"] == 0 and s["claims"]["median"] is None and s["label_shares"] is None
        s = mod.summarise([self._row(mod, 0, crashed=True)])
        assert s["crashes"] == 1 and s["eta"]["undefined_share"] is None

    def test_score_file_on_regression_data(self, tmp_path):
        mod = _bench()
        rows = mod.score_file(REGRESSION)
        assert len(rows) == 20 and not any(r.crashed or r.extraction_failed for r in rows)
        assert all(r.eta is None or math.isfinite(r.eta) for r in rows)
        groups = mod.summarise_groups(rows)
        assert set(groups["by_task"]) == {"futoshiki", "sudoku", "mini_sudoku"}
        assert sum(g["traces"] for g in groups["by_model"].values()) == 20
        md = mod.to_markdown(groups, REGRESSION, 1.0)
        assert "| all | 20 | 0 | 0 |" in md and "Per model" in md

    def test_main_writes_markdown_and_json(self, tmp_path, capsys):
        mod = _bench()
        args = mod.make_parser().parse_args([str(SAMPLE), "--limit", "5", "--quiet", "--markdown",
                                             str(tmp_path / "s.md"), "--json", str(tmp_path / "s.json")])
        assert mod.main(args) == 0
        data = json.loads((tmp_path / "s.json").read_text())
        assert data["all"]["traces"] == 5 and data["all"]["crashes"] == 0
        assert (tmp_path / "s.md").read_text().startswith("Input:")
        assert "| all | 5 | 0 |" in capsys.readouterr().out

    @pytest.mark.parametrize("limit", [0, -1, 2.5])
    def test_bad_limit_raises(self, limit):
        with pytest.raises(ValueError, match="limit must be a positive integer"):
            _bench().score_file(SAMPLE, limit=limit)

    def test_missing_file_raises(self, tmp_path):
        with pytest.raises(FileNotFoundError):
            _bench().score_file(tmp_path / "none.jsonl")

    def test_help(self, capsys):
        with pytest.raises(SystemExit) as e:
            _bench().make_parser().parse_args(["--help"])
        assert e.value.code == 0 and "--markdown" in capsys.readouterr().out
