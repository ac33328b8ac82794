"""The eval report builder: tables with hand-derived numbers, empty and null-ridden inputs, plots and graphs."""

import base64
import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape import envs
from reasonshape.envs.base import Claim
from reasonshape.errors import ConfigError
from reasonshape.extraction.graph import ClaimGraph
from reasonshape.training.manifest import load_manifest
from reasonshape.training.report import (
    PAPER_A_TABLE2,
    accuracy_by_level,
    accuracy_by_puzzle,
    build_report,
    correlation_table,
    load_results,
    other_findings,
    pearson,
    su_groups,
    su_judge_counts,
    su_summary,
)

LEVELS = ("trivial", "easy", "normal", "hard")
PUZZLES = ("tents", "solo")
PREF = (-0.5, -0.2, 0.1, 0.6)  # preference mass by sample: sample 3 is every group's top-ranked candidate


def synthetic_records():
    """32 completions of model m1: 2 puzzles x 4 levels x 4 samples, with values chosen so every statistic is known.

    * level i (0..3): samples s < 4 - i are correct -> accuracy 100 / 75 / 50 / 25 %, 62.5 % overall;
    * tokens 1000 (i + 1) + 200 s - 300 -> mean 1000 (i + 1) per level ("1.0k".."4.0k"), 2.5k overall;
    * claim accuracy a_k = (k mod 7) / 10; eta = 2 a_k - 0.5 (r = +1); depth = 10 - 5 a_k (r = -1);
      first-error position = 1 - a_k (r vs eta = -1); width constant 4 (r undefined); diameter null;
      ver_sol_ratio = tokens / 1000 (tokens vs ratio r = +1); restatements per claim null;
    * su per group: A = 1, I = 0.05 at trivial else 0.3, U = A + I; dispersion 0.5 at trivial else 0.2;
      preference mass PREF[s], so the top candidate is sample 3, correct only at trivial;
    * score_s = 10, 20, 30 ms cyclically (median 20 ms); sample_s = 1 s.
    """
    recs, k = [], 0
    for p_i, puzzle in enumerate(PUZZLES):
        for i, level in enumerate(LEVELS):
            for s in range(4):
                a = (k % 7) / 10
                tokens = 1000 * (i + 1) + 200 * s - 300
                I = 0.05 if i == 0 else 0.3  # noqa: E741
                recs.append({
                    "id": f"{puzzle}/{level}/0#{s}", "puzzle": puzzle, "level": level, "game_id": f"g{p_i}{i}",
                    "model": "m1", "sample": s, "tokens": tokens, "finish_reason": "length" if k == 0 else "stop",
                    "correct": s < 4 - i, "parse_error": "no answer block" if k == 1 else None,
                    "violations": ["row_repeat"] if s >= 4 - i else [], "n_sentences": 10,
                    "metrics": {"n_nodes": 20 + k, "depth": 10 - 5 * a, "diameter": None,
                                "avg_path_length": 1.5 if k % 2 else None, "width": 4, "tokens": tokens,
                                "claim_accuracy": a, "ver_sol_ratio": tokens / 1000, "first_error_position": 1 - a,
                                "restatements_per_claim": None, "eta": 2 * a - 0.5, "h_str": 1.0},
                    "labels": {"correct": 3, "wrong": 1, "unverifiable": 0, "tentative": 0},
                    "extraction": {"mode": "deterministic", "fallback": None},
                    "su": {"U": 1.0 + I, "A": 1.0, "I": I, "preference_mass": PREF[s], "rank_stability": 0.5},
                    "dispersion": 0.5 if i == 0 else 0.2,
                    "timing": {"sample_s": 1.0, "score_s": 0.010 * (k % 3 + 1)},
                    "graph": None,
                })
                k += 1
    return recs


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def md_row(md, first_cell):
    """The cells of the first Markdown table row starting with ``first_cell``."""
    for line in md.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row {first_cell!r}")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    res = write_jsonl(out / "results.jsonl", synthetic_records())
    meta = {"model": "m1", "backend": "transformers", "versions": {"torch": "2.13.0"}, "seeds": [0, 1],
            "system_prompt": "Solve it.\nThink | then answer.", "notes": "x" * 1000, "judge": None,
            "skipped": load_manifest(puzzles=["loopy"], levels=["easy", "hard"])}
    md_path, html_path = build_report(res, out, meta)
    return out, md_path.read_text(), html_path.read_text()


class TestPearson:
    def test_hand_computed(self):
        # x = 1,2,3; y = 1,2,4: dx = -1,0,1; dy = -4/3,-1/3,5/3; r = 3 / sqrt(2 * 42/9) = 0.981981...
        c = pearson([1, 2, 3], [1, 2, 4])
        assert c.r == pytest.approx(3 / math.sqrt(2 * 42 / 9))
        assert c.n == 3
        # n = 3: t = r sqrt(1 / (1 - r^2)) with 1 df; p = 2 (1 - F_t1(|t|)) = 1 - (2/pi) atan(|t|)
        t = c.r / math.sqrt(1 - c.r**2)
        assert c.p == pytest.approx(1 - 2 / math.pi * math.atan(t))

    def test_nulls_dropped_and_degenerate_cases(self):
        assert pearson([1, None, 2, 3, float("nan")], [2, 5, 4, 6, 1]).n == 3
        assert pearson([1, 2], [1, 2]) is None  # fewer than 3 points
        assert pearson([1, 1, 1], [1, 2, 3]) is None  # constant input
        assert pearson([None] * 4, [1, 2, 3, 4]) is None
        assert pearson([], []) is None

    def test_length_mismatch(self):
        with pytest.raises(ConfigError, match="same length"):
            pearson([1, 2, 3], [1, 2])

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(st.integers(-1000, 1000), st.integers(-1000, 1000)), min_size=3, max_size=30),
           st.floats(0.1, 10), st.floats(-100, 100))
    def test_bounded_symmetric_affine_invariant(self, pairs, scale, shift):
        x = [a for a, _ in pairs]
        y = [b for _, b in pairs]
        c = pearson(x, y)
        if c is None:
            return
        assert -1 <= c.r <= 1 and 0 <= c.p <= 1
        assert pearson(y, x).r == pytest.approx(c.r, abs=1e-9)
        c2 = pearson([scale * a + shift for a in x], y)
        if c2 is not None:  # scaling can make a nearly constant column exactly constant in floating point
            assert c2.r == pytest.approx(c.r, abs=1e-6)


class TestTables:
    def test_table1_by_level(self):
        t = accuracy_by_level(synthetic_records())
        assert list(t) == ["m1"]
        assert list(t["m1"]) == [*LEVELS, "all"]
        assert [t["m1"][lv].accuracy for lv in LEVELS] == [100.0, 75.0, 50.0, 25.0]
        assert [t["m1"][lv].mean_tokens for lv in LEVELS] == [1000.0, 2000.0, 3000.0, 4000.0]
        assert t["m1"]["all"].accuracy == 62.5 and t["m1"]["all"].mean_tokens == 2500.0 and t["m1"]["all"].n == 32

    def test_table1_by_puzzle(self):
        t = accuracy_by_puzzle(synthetic_records())
        assert list(t["m1"]) == ["solo", "tents"]  # benchmark order: solo before tents
        assert t["m1"]["tents"]["easy"].accuracy == 75.0 and t["m1"]["tents"]["easy"].n == 4
        assert t["m1"]["solo"]["all"].accuracy == 62.5

    def test_table2(self):
        recs = synthetic_records()
        t = correlation_table(recs)
        assert t["eta"][0].r == pytest.approx(1.0) and t["eta"][1] is None
        assert t["depth"][0].r == pytest.approx(-1.0) and t["depth"][1].r == pytest.approx(-1.0)
        assert t["width"] == (None, None)  # constant
        assert t["diameter"] == (None, None)  # all null
        assert t["avg_path_length"] == (None, None)  # constant where present
        a = [r["metrics"]["claim_accuracy"] for r in recs]
        tok = [r["tokens"] for r in recs]
        assert t["tokens"][0].r == pytest.approx(np.corrcoef(tok, a)[0, 1])
        assert t["tokens"][0].n == 32

    def test_other_findings(self):
        f = other_findings(synthetic_records())
        assert f["first-error position vs η"].r == pytest.approx(-1.0)
        assert f["tokens vs |V_ver|/|V_sol|"].r == pytest.approx(1.0)
        assert f["restatements per claim vs η"] is None

    def test_su_summary(self):
        recs = synthetic_records()
        groups = su_groups(recs)
        assert len(groups) == 8
        assert [g.answer_correct for g in groups] == [True, False, False, False] * 2
        s = su_summary(recs)
        assert (s["n_correct"], s["n_wrong"]) == (2, 6)
        assert s["means"]["I"] == (pytest.approx(0.05), pytest.approx(0.3))
        assert s["means"]["U"] == (pytest.approx(1.05), pytest.approx(1.3))
        assert s["vs_accuracy"]["A"] is None  # A is constant
        acc = [1.0, 0.75, 0.5, 0.25] * 2
        i_vals = [0.05, 0.3, 0.3, 0.3] * 2
        assert s["vs_accuracy"]["I"].r == pytest.approx(np.corrcoef(i_vals, acc)[0, 1])
        # I is higher on every wrong group -> 1; dispersion is lower on every wrong group -> 0; their rank
        # percentiles sum to the same value for every group -> all ties -> 0.5.
        assert s["auroc"] == {"structural": 1.0, "dispersion": 0.0, "combined": 0.5}
        # Per completion: flag by -preference mass. Wrong completions (s >= 4 - i) have the larger masses.
        wrong = [not r["correct"] for r in recs]
        score = [-r["su"]["preference_mass"] for r in recs]
        pos = [x for x, w in zip(score, wrong, strict=True) if w]
        neg = [x for x, w in zip(score, wrong, strict=True) if not w]
        expect = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg) / (len(pos) * len(neg))
        assert s["completion_auroc"]["preference_mass"] == pytest.approx(expect)
        assert s["completion_auroc"]["rank_stability"] == 0.5  # constant signal

    def test_su_without_preference_mass_uses_majority(self):
        recs = synthetic_records()
        for r in recs:
            r["su"].pop("preference_mass")
        # majority verdict: accuracy > 0.5 only at trivial (1.0) and easy (0.75)
        assert [g.answer_correct for g in su_groups(recs)] == [True, True, False, False] * 2
        for r in recs:
            r["dispersion"] = None
        s = su_summary(recs)
        assert s["auroc"]["dispersion"] is None and s["auroc"]["combined"] is None
        # wrong groups (normal, hard) all have I = 0.3; correct ones have 0.05 (trivial) and 0.3 (easy): each wrong
        # group beats half the correct ones and ties the other half -> (1 + 1 + 0.5 + 0.5) / 4 = 0.75
        assert s["auroc"]["structural"] == pytest.approx(0.75)

    def test_no_su(self):
        recs = synthetic_records()
        for r in recs:
            r["su"] = None
        assert su_summary(recs) is None


class TestReportFile:
    def test_files_written(self, report):
        out, md, html = report
        for name in ("report.md", "report.html", "fig_levels.png", "fig_correlations.png", "fig_su.png"):
            assert (out / name).is_file(), name
            if name.endswith(".png"):
                assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "![" in md and "(fig_levels.png)" in md and "(fig_su.png)" in md

    def test_html_is_self_contained(self, report):
        _, _, html = report
        srcs = re.findall(r'src="([^"]*)"', html)
        assert len(srcs) == 3 and all(s.startswith("data:image/png;base64,") for s in srcs)
        assert base64.b64decode(srcs[0].split(",", 1)[1])[:4] == b"\x89PNG"
        assert "<table>" in html and "62.5 / 2.5k" in html

    def test_table1_numbers(self, report):
        _, md, _ = report
        assert md_row(md, "m1") == ["m1", "100.0 / 1.0k", "75.0 / 2.0k", "50.0 / 3.0k", "25.0 / 4.0k", "62.5 / 2.5k",
                                    "32"]
        assert md_row(md, "paper A: GPT-5")[1:5] == ["83.8 / 4.2k", "69.5 / 10.2k", "58.1 / 17.3k", "5.7 / 19.9k"]
        assert md_row(md, "tents")[1:] == ["100.0 / 1.0k", "75.0 / 2.0k", "50.0 / 3.0k", "25.0 / 4.0k",
                                           "62.5 / 2.5k", "16"]

    def test_table2_numbers_with_paper_reference(self, report):
        _, md, _ = report
        eta = md_row(md, "η")
        assert eta[1].startswith("+1.000 [") and eta[2] == "+0.368" and eta[3] == "—" and eta[5] == "32"
        depth = md_row(md, "depth")
        assert depth[1].startswith("-1.000 [") and depth[2] == f"{PAPER_A_TABLE2['depth'][0]:+.3f}"
        assert depth[3].startswith("-1.000 [") and depth[4] == "+0.046"
        assert md_row(md, "width")[1] == "—" and md_row(md, "width")[5] == "32"  # constant: r undefined, 32 pairs
        assert md_row(md, "diameter")[3] == "—" and md_row(md, "diameter")[5] == "0"
        assert md_row(md, "avg path length")[5] == "16"  # present on odd k only
        assert md_row(md, "\\|V\\|")[2] == "-0.666"

    def test_other_findings_and_su_rows(self, report):
        _, md, _ = report
        assert md_row(md, "η vs tokens")[3] == "-0.05 [0.64]"
        assert md_row(md, "first-error position vs η")[1].startswith("-1.000 [")
        assert md_row(md, "restatements per claim vs η")[1:3] == ["—", "0"]
        assert md_row(md, "I")[1:3] == ["0.050", "0.300"]
        assert md_row(md, "structural (I)")[1:] == ["1.000", "8"]
        assert md_row(md, "dispersion (answer entropy)")[1] == "0.000"

    def test_summary_skipped_and_metadata(self, report):
        _, md, _ = report
        assert md_row(md, "unparseable answers")[1] == "1 (3.1 %)"
        assert md_row(md, "truncated (finish_reason = length)")[1] == "1 (3.1 %)"
        assert md_row(md, "extraction modes")[1] == "deterministic: 32"
        assert md_row(md, "most frequent rule violations")[1] == "row_repeat (12)"
        assert "10 instances of 1 unimplemented puzzle were skipped" in md
        assert md_row(md, "loopy")[1:] == ["10", "easy (5), hard (5)"]
        assert md_row(md, "median scoring overhead per completion")[1] == "20.0 ms"
        assert md_row(md, "backend")[1] == "transformers"
        assert md_row(md, "versions")[1] == '{"torch": "2.13.0"}'
        assert md_row(md, "system_prompt")[1] == "Solve it. Think \\| then answer."  # one table line, pipe escaped
        assert md_row(md, "notes")[1] == "x" * 400 + "… (1000 characters)"
        assert md_row(md, "judge")[1] == "—"
        # 32 s sampling; scoring 10, 20, 30 ms cycling over 32 records: 11 x 10 + 11 x 20 + 10 x 30 ms = 0.63 s
        assert md_row(md, "time split sampling / scoring (from records)")[1] == "32.00 s / 0.63 s (98.1 % / 1.9 %)"


    def test_groups_without_a_verdict_are_left_out_and_counted(self, tmp_path):
        recs = synthetic_records()
        for r in recs:
            r["su"].update(judge_prompts=6, unparsed=1)
            if r["level"] == "hard":  # the judge read nothing in these groups: eval writes null values
                r["su"].update(U=None, A=None, I=None, preference_mass=None, rank_stability=None, unparsed=6)
        assert len(su_groups(recs)) == 6 and su_summary(recs)["n_groups"] == 6
        assert su_judge_counts(recs) == {"groups": 8, "prompts": 48, "unparsed": 18, "no_verdict": 2}
        md = build_report(write_jsonl(tmp_path / "results.jsonl", recs), tmp_path / "out")[0].read_text()
        assert "no readable verdict in 18 of 48 prompts (37.5 %" in md
        assert "2 of 8 judged groups had no readable verdict at all and are left out" in md

    def test_no_group_with_a_verdict_says_so_without_pointing_below(self, tmp_path):
        recs = synthetic_records()
        for r in recs:  # SU computed, but the judge read nothing in any group
            r["su"].update(U=None, A=None, I=None, preference_mass=None, rank_stability=None, judge_prompts=6,
                           unparsed=6)
        md = build_report(write_jsonl(tmp_path / "results.jsonl", recs), tmp_path / "out")[0].read_text()
        section = md.split("## Structural uncertainty (paper B)")[1].split("\n## ")[0]
        assert ("Structural uncertainty was computed, but the judge gave no readable verdict in any group: 8 of 8 "
                "judged groups without one, 48 of 48 replies unreadable (ties alone measure nothing)" in section)
        assert "No record carries" not in section and "below" not in section

    def test_empty_graphs_do_not_count_and_short_means_give_their_n(self, tmp_path):
        recs = synthetic_records()
        recs[0]["metrics"] = {**recs[0]["metrics"], "n_nodes": 0, "eta": None, "claim_accuracy": None}
        recs[1]["metrics"] = {**recs[1]["metrics"], "eta": None}  # a graph without eta (no solution claim)
        md = build_report(write_jsonl(tmp_path / "results.jsonl", recs), tmp_path / "out")[0].read_text()
        assert md_row(md, "completions with a claim graph (\\|V\\| >= 1)")[1] == "31 (96.9 %)"
        # Structure by level, trivial: 8 completions of 2 puzzles, one with an empty graph
        structure = [ln for ln in md.splitlines() if ln.startswith("| m1 | trivial |")][0]
        cells = [c.strip() for c in structure.strip("|").split("|")]
        assert cells[-1] == "7" and cells[2].endswith("(6)") and not cells[3].endswith(")")  # eta over 6 of 7

    def test_no_graph_at_all_says_so_instead_of_an_empty_structure_table(self, tmp_path):
        recs = synthetic_records()
        for r in recs:  # e.g. an untrained model: no completion states a claim
            r["metrics"] = {**r["metrics"], "n_nodes": 0, "eta": None, "claim_accuracy": None}
        md = build_report(write_jsonl(tmp_path / "results.jsonl", recs), tmp_path / "out")[0].read_text()
        section = md.split("## Structure by level")[1].split("\n## ")[0]
        assert "No completion of the 32 scored has a claim graph with a node: nothing to average." in section
        assert "| model | level |" not in section

    def test_time_split_counts_the_judge(self, tmp_path):
        res = write_jsonl(tmp_path / "results.jsonl", synthetic_records())
        md = build_report(res, tmp_path / "out", {"time": {"sampling_s": 32.0, "judge_s": 8.0, "scoring_s": 0.63}}
                          )[0].read_text()
        row = md_row(md, "time split sampling / judge / scoring (sampling and scoring from records, judge from the "
                         "run's sessions)")
        assert row[1] == "32.00 s / 8.00 s / 0.63 s (78.8 % / 19.7 % / 1.6 %)"

    def test_external_levels_leave_out_paper_rows_and_level_figure(self, tmp_path):
        recs = synthetic_records()
        for r in recs:
            r["level"] = "external"
        meta = {"su": {"enabled": False, "not_computed": "no judge: give --judge-model"}}
        for r in recs:
            r["su"] = None
        out = tmp_path / "out"
        out.mkdir()
        (out / "fig_levels.png").write_bytes(b"an earlier report's figure")
        md = build_report(write_jsonl(tmp_path / "results.jsonl", recs), out, meta)[0].read_text()
        assert md_row(md, "m1")[1:] == ["62.5 / 2.5k", "62.5 / 2.5k", "32"]
        assert "paper A: GPT-5" not in md and "No completion is of a generated level" in md
        assert not (out / "fig_levels.png").exists() and "(fig_levels.png)" not in md
        assert "not computed in this run: no judge: give --judge-model" in md

    def test_a_rebuild_removes_an_earlier_reports_figures_only(self, tmp_path):
        out = tmp_path / "out"
        out.mkdir()
        earlier = ["graph_1.png", "graph_12.png", "fig_su.png"]  # no graph and no SU figure in this report
        mine = ["graph_notes.png", "graph_1.png.bak", "plot.png"]  # not names the report writes: kept
        for name in earlier + mine:
            (out / name).write_bytes(b"x")
        recs = synthetic_records()
        for r in recs:
            r["su"] = None
        build_report(write_jsonl(tmp_path / "results.jsonl", recs), out)
        assert sorted(p.name for p in out.iterdir()) == sorted(
            ["report.md", "report.html", "fig_levels.png", "fig_correlations.png", *mine])


class TestDegenerateInputs:
    def test_empty_file(self, tmp_path):
        res = tmp_path / "results.jsonl"
        res.write_text("")
        md_path, html_path = build_report(res, tmp_path / "out", {"model": "m"})
        md = md_path.read_text()
        assert "holds no completions" in md and "Table 1" not in md
        assert "holds no completions" in html_path.read_text()
        assert not list((tmp_path / "out").glob("*.png"))
        assert md_row(md, "median scoring overhead per completion")[1] == "—"

    def test_records_full_of_nulls(self, tmp_path):
        recs = [
            {"id": "a", "violations": "row_repeat"},  # not a list: ignored, not counted letter by letter
            {"id": "b", "puzzle": "tents", "level": "easy", "model": None, "correct": None, "tokens": None,
             "metrics": None, "labels": None, "extraction": None, "su": None, "dispersion": None, "timing": None,
             "graph": None, "violations": None},
            {"id": "c", "puzzle": "tents", "level": "easy", "model": "m", "correct": True, "tokens": "many",
             "metrics": {k: None for k in ("n_nodes", "depth", "eta", "claim_accuracy", "tokens")},
             "su": {"U": None, "A": 1.0, "I": float("nan")}, "timing": {"sample_s": None, "score_s": None}},
            {"id": "d", "puzzle": "tents", "level": "weird", "model": "m", "correct": False, "tokens": 1500,
             "su": {"U": 1.0, "A": 0.5, "I": 0.5}, "timing": {"score_s": 0.004}},
        ]
        md_path, _ = build_report(write_jsonl(tmp_path / "r.jsonl", recs), tmp_path / "out", None)
        md = md_path.read_text()
        # levels: easy, then the missing one ("unknown") and the unknown name "weird", sorted
        assert md_row(md, "model")[1:4] == ["easy", "unknown", "weird"]
        assert md_row(md, "m") == ["m", "100.0 / —", "—", "0.0 / 1.5k", "50.0 / 1.5k", "2"]
        assert md_row(md, "unknown")[1:] == ["—", "—", "—", "—", "0"]  # correct=None: no accuracy
        assert md_row(md, "η")[1] == "—"
        assert md_row(md, "median scoring overhead per completion")[1] == "4.0 ms"
        assert "Structural uncertainty" in md  # the one group with U, A, I
        assert "most frequent rule violations" not in md

    def test_cut_short_last_line_is_tolerated_but_not_a_middle_one(self, tmp_path):
        res = tmp_path / "r.jsonl"
        res.write_text(json.dumps(synthetic_records()[0]) + "\n" + '{"id": "x", "puz')
        recs, notes = load_results(res)
        assert len(recs) == 1 and "line 2" in notes[0]
        md = build_report(res, tmp_path / "o")[0].read_text()
        assert "cut short" in md
        res.write_text('{"id": "x", "puz\n' + json.dumps(synthetic_records()[0]) + "\n")
        with pytest.raises(ConfigError, match=r"r.jsonl:1: not JSON"):
            load_results(res)
        res.write_text("[1, 2]\n")
        with pytest.raises(ConfigError, match="JSON object"):
            load_results(res)

    def test_missing_file_and_bad_meta(self, tmp_path):
        with pytest.raises(ConfigError, match="cannot read the results file"):
            build_report(tmp_path / "absent.jsonl", tmp_path)
        res = write_jsonl(tmp_path / "r.jsonl", [])
        with pytest.raises(ConfigError, match="meta must be a mapping"):
            build_report(res, tmp_path, meta=["model"])


class TestClaimGraphs:
    def test_example_graphs_drawn_and_embedded(self, tmp_path):
        entry = load_manifest(puzzles="tents", levels="trivial")[0]
        tents = envs.get("tents")
        c_star = sorted(tents.solution_claims(entry.instance()))
        g = ClaimGraph({"puzzle": "tents"})
        prev = None
        for i, claim in enumerate(c_star):
            v = g.add_claim(claim, sentence=i, label="correct")
            if prev is not None:
                g.add_inference(prev, v)
            prev = v
        g.add_claim(Claim("value", ((1, 1),), "T", False), sentence=len(c_star), label="wrong")
        recs = synthetic_records()[:8]  # tents trivial samples 0-3 (all correct), easy samples 0-3 (3 is wrong)
        for r in recs:
            r.update(game_id=entry.game_id)
        for k in (0, 1, 7):
            recs[k]["graph"] = g.to_json()
        md_path, html_path = build_report(write_jsonl(tmp_path / "r.jsonl", recs), tmp_path)
        md = md_path.read_text()
        assert "Example claim graphs" in md
        # first correct (trivial sample 0), first wrong (easy sample 3), then the next one in order (sample 1)
        assert [p.name for p in sorted(tmp_path.glob("graph_*.png"))] == ["graph_1.png", "graph_2.png",
                                                                            "graph_3.png"]
        assert "(graph_1.png)" in md and "sample 3" in md
        assert html_path.read_text().count("data:image/png;base64,") == 3 + 3  # 3 figures + 3 graphs
        assert md.count("| correct |") == 2 and md.count("| wrong |") == 1

    def test_caption_gives_the_tables_v_after_merging(self, tmp_path):
        entry = load_manifest(puzzles="tents", levels="trivial")[0]
        g = ClaimGraph({"puzzle": "tents"})
        for i, claim in enumerate(sorted(envs.get("tents").solution_claims(entry.instance()))[:3]):
            g.add_claim(claim, sentence=i, label="correct")
        recs = synthetic_records()[:1]  # metrics.n_nodes = 20: the |V| of the tables and of η
        recs[0].update(game_id=entry.game_id, graph=g.to_json())
        md = build_report(write_jsonl(tmp_path / "r.jsonl", recs), tmp_path)[0].read_text()
        assert "|V| = 20 after static merging, as in the tables and η (the drawing shows the 3 extracted nodes" in md

    def test_malformed_graph_is_reported_not_fatal(self, tmp_path):
        recs = synthetic_records()[:2]
        recs[0]["graph"] = {"nodes": "garbage"}
        md = build_report(write_jsonl(tmp_path / "r.jsonl", recs), tmp_path)[0].read_text()
        assert "could not be drawn: NotADAGError" in md
        assert not list(tmp_path.glob("graph_*.png"))


def test_pick_graphs_shows_a_kept_correct_example_even_when_it_is_large():
    # eval keeps the first correct graph whatever its size; the report's preference for small graphs must not hide it
    from reasonshape.training import report as R

    def rec(correct, n):
        return {"correct": correct, "graph": {"nodes": [{"id": i} for i in range(n)]}}

    big_correct, small_wrong = rec(True, R._GRAPH_NODE_LIMIT + 50), [rec(False, 10) for _ in range(3)]
    picked = R._pick_graphs([*small_wrong, big_correct])
    assert picked[0] is big_correct and picked[1] is small_wrong[0] and len(picked) == R._MAX_GRAPHS


def test_two_groups_of_one_instance_stay_apart():
    # the manifest lists a few instances twice (dominosa trivial): eval judges them as two groups, told apart by id
    def rec(gid, sample, correct):
        return {"id": f"dominosa/trivial/{gid}#{sample}", "model": "m", "puzzle": "dominosa", "level": "trivial",
                "game_id": "1dt:011100", "sample": sample, "correct": correct,
                "su": {"U": 1.0, "A": 0.5, "I": 0.5, "preference_mass": 0.1 * sample, "judge_prompts": 1,
                       "unparsed": 0}}

    records = [rec(0, 0, True), rec(0, 1, False), rec(2, 0, False), rec(2, 1, False)]
    assert len(su_groups(records)) == 2
    assert su_judge_counts(records) == {"groups": 2, "prompts": 2, "unparsed": 0, "no_verdict": 0}
    # records without an id (not written by eval) are grouped by instance as before
    assert len(su_groups([{k: v for k, v in r.items() if k != "id"} for r in records])) == 1
