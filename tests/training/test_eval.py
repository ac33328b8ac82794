"""Tests of ``reasonshape eval`` (reasonshape/training/eval.py): traces mode on hand-made and shipped real traces,
sampling through the transformers backend and through ``transformers serve`` + the OpenAI-compatible backend,
crash-safe resume (a real ``kill -9``), the results-log invariants (hypothesis), the reasoning-gym-eval importer and
the CLI. Everything runs offline on CPU."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonshape.envs import get
from reasonshape.envs.dataset import DEFAULT_SYSTEM_PROMPT
from reasonshape.envs.interop import TraceFileError
from reasonshape.errors import ConfigError, UnknownPuzzleError
from reasonshape.training.eval import (
    RESULT_KEYS,
    EvalConfig,
    ResultsLog,
    TraceRecord,
    embedded_traces_path,
    import_reasoning_gym_eval,
    load_traces,
    main,
    make_parser,
    read_traces,
    run_eval,
)
from reasonshape.training.manifest import load_manifest

REPO = Path(__file__).resolve().parents[2]
SU_KEYS = {"U", "A", "I", "preference_mass", "rank_stability", "judge_prompts", "unparsed"}


# --------------------------------------------------------------------------------------------------- helpers
def _solo_trivial():
    """solo/trivial/0 of the shipped manifest (a 4x4 sudoku with 2x2 boxes) and its unique solution's text."""
    entry = load_manifest("solo", "trivial")[0]
    puzzle = get("solo")
    inst = entry.instance()
    return entry, puzzle.format_answer(inst, puzzle.unique_solution(inst))


def _write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _handmade_traces(tmp_path: Path) -> Path:
    entry, good = _solo_trivial()
    rows = good.splitlines()
    first = rows[0].split()
    first[1], first[2] = first[2], first[1]  # swap two cells of row 1: breaks two columns
    bad = "\n".join([" ".join(first)] + rows[1:])
    traces = [
        {"puzzle": "solo", "game_id": entry.game_id, "model": "m", "tokens": 40,
         "completion": f"Row 1 needs 2, 3 and 4. Cell (1,2) is {good.split()[1]}.\n<answer>\n{good}\n</answer>"},
        {"puzzle": "solo", "game_id": entry.game_id, "model": "m", "completion": f"<answer>{good}</answer>"},
        {"puzzle": "solo", "game_id": entry.game_id, "model": "m", "finish_reason": "stop",
         "completion": f"I think (1,2) is {first[1]}.\n<answer>\n{bad}\n</answer>"},
        {"puzzle": "solo", "game_id": entry.game_id, "model": "other", "completion": "no idea"},
        {"puzzle": "flip", "game_id": "3x3:abc", "model": "m", "completion": "<answer>x</answer>"},
        {"puzzle": "solo", "game_id": "2x2:zzzz", "model": "m", "completion": "<answer>1</answer>"},
    ]
    return _write_jsonl(tmp_path / "traces.jsonl", traces)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------------------------------- traces mode
class TestTracesMode:
    def test_handmade_traces_hand_derived_values(self, tmp_path):
        path = _handmade_traces(tmp_path)
        summary = run_eval(EvalConfig(out=str(tmp_path / "out"), traces=str(path), progress=False))
        recs = _read(summary.results_path)
        assert [tuple(r) for r in recs] == [RESULT_KEYS] * 4  # exactly the schema's keys, in order
        by = {(r["model"], r["sample"]): r for r in recs}
        # the game ID is solo/trivial/0 of the manifest, so the level comes from the manifest
        assert {r["level"] for r in recs} == {"trivial"}
        assert [by[("m", i)]["correct"] for i in range(3)] == [True, True, False]
        assert by[("m", 2)]["violations"] and by[("m", 0)]["violations"] == []
        assert by[("m", 0)]["tokens"] == 40 and by[("m", 1)]["tokens"] is None
        assert by[("m", 2)]["finish_reason"] == "stop"
        # answers A, A, B: dispersion = -(2/3 ln 2/3 + 1/3 ln 1/3) = ln 3 - (2/3) ln 2 = 0.636514...
        for i in range(3):
            assert by[("m", i)]["dispersion"] == pytest.approx(math.log(3) - 2 / 3 * math.log(2), abs=1e-12)
        # a group of one completion: no dispersion, no structural uncertainty; no answer -> a parse error
        lone = by[("other", 0)]
        assert lone["dispersion"] is None and lone["su"] is None and lone["parse_error"] and not lone["correct"]
        assert all(r["su"] is None for r in recs)  # traces mode without a judge
        for r in recs:
            assert set(r["labels"]) == {"correct", "wrong", "unverifiable", "tentative"}
            assert r["timing"]["sample_s"] is None and r["timing"]["score_s"] > 0
        assert len({r["id"] for r in recs}) == 4
        # skipped: one trace of an unknown puzzle, one with an unreadable game ID
        assert "flip (1)" in summary.skipped and "1 traces whose game ID does not parse" in summary.skipped
        assert summary.meta["skipped"][0] == {"puzzle": "flip", "level": "external", "game_id": "3x3:abc",
                                              "model": "m"}
        bad_id = summary.meta["skipped"][1]  # the trace whose game ID does not parse is listed too, with why
        assert len(summary.meta["skipped"]) == 2 and bad_id["game_id"] == "2x2:zzzz"
        assert bad_id["reason"].startswith("game ID does not parse: ")
        md = summary.report_paths[0].read_text()
        assert "1 traces were skipped because their instance could not be read" in md and "2x2:zzzz" in md
        assert summary.meta["n_records"] == 4 and summary.meta["scoring_overhead_ms"]["n"] == 4

    def test_skips_are_printed_once(self, tmp_path, capsys, caplog):
        run_eval(EvalConfig(out=str(tmp_path / "out"), traces=str(_handmade_traces(tmp_path)), progress=False,
                            report=False))
        err = capsys.readouterr().err
        assert err.count("does not parse") == 1 and err.startswith("reasonshape eval: skipped 1 traces of unknown")
        assert not [r for r in caplog.records if r.levelname == "WARNING" and "skipped" in r.getMessage()]

    @pytest.mark.parametrize("filters", [{"puzzles": ["solo"]}, {"levels": ["trivial"]}])
    def test_traces_the_filters_leave_out_are_not_listed_as_skipped(self, tmp_path, filters):
        # the flip trace (unknown puzzle, level "external") and the unreadable solo game ID (not in the manifest:
        # level "external") are filtered out by either filter: neither scored nor reported as skipped
        path = _handmade_traces(tmp_path)
        if "puzzles" in filters:  # the unreadable solo game ID passes a puzzle filter: drop it
            path.write_text("".join(ln for ln in path.read_text().splitlines(True) if "2x2:zzzz" not in ln))
        summary = run_eval(EvalConfig(out=str(tmp_path / "out"), traces=str(path), progress=False, report=False,
                                      **filters))
        assert summary.skipped == "" and summary.meta["skipped"] == []
        assert summary.meta["n_records"] == 4

    @pytest.mark.parametrize("model", ["./no_such_dir", "MISSING"])
    def test_missing_model_directory_says_so(self, tmp_path, model):
        model = str(tmp_path / "no" / "such" / "dir") if model == "MISSING" else model
        cfg = EvalConfig(out=str(tmp_path / "o"), model=model, backend="transformers", puzzles=["solo"],
                         levels=["trivial"], limit=1, progress=False)
        with pytest.raises(ConfigError, match=f"model directory {model!r} does not exist"):
            run_eval(cfg)

    def test_a_hub_id_is_not_taken_for_a_missing_directory(self, tmp_path, monkeypatch):
        # "gpt2" (a hub id without an organisation) goes to transformers, which looks it up in the local cache
        import reasonshape.training.backends as backends

        seen = []
        monkeypatch.setattr(backends, "get_backend", lambda kind, **kw: seen.append(kw["model"]) or 1 / 0)
        cfg = EvalConfig(out=str(tmp_path / "o"), model="gpt2", backend="transformers", puzzles=["solo"],
                         levels=["trivial"], limit=1, progress=False)
        with pytest.raises(ZeroDivisionError):
            run_eval(cfg)
        assert seen == ["gpt2"]

    def test_embedded_real_traces_give_a_report(self, tmp_path):
        summary = run_eval(EvalConfig(out=str(tmp_path / "out"), progress=False))
        recs = _read(summary.results_path)
        assert len(recs) == 24 == summary.n_new
        assert {r["puzzle"] for r in recs} == {"solo", "unequal"}
        assert {r["model"] for r in recs} == {"anthropic_claude-sonnet-4", "meta-llama_llama-4-maverick",
                                              "meta-llama_llama-3.3-70b-instruct"}
        assert any(r["correct"] for r in recs) and not all(r["correct"] for r in recs)
        assert any(r["metrics"] is not None and r["metrics"]["n_nodes"] > 0 for r in recs)
        # the first 3 non-empty graphs (all wrong, one group) plus the first correct one (--keep-graphs 3)
        graphs = [r for r in recs if r["graph"] is not None]
        assert len(graphs) == 4 and all(g["graph"]["nodes"] for g in graphs)
        assert [g["correct"] for g in graphs] == [False, False, False, True]
        md, html = summary.report_paths
        assert md.read_text().startswith("# ") and "<html" in html.read_text().lower()
        meta = json.loads(summary.meta_path.read_text())
        assert meta["source"] == "embedded" and meta["scoring_overhead_ms"]["median"] > 0
        # 9 groups (one model's completions of one instance) of 7 instances; no judge in traces mode (the report says)
        assert (meta["n_groups"], meta["n_instances"]) == (9, len({(r["puzzle"], r["game_id"]) for r in recs})) \
            == (9, 7)
        assert meta["su"]["enabled"] is False and "give --judge-model" in meta["su"]["not_computed"]
        assert "not computed in this run: no judge" in md.read_text()
        assert set(meta["versions"]) >= {"reasonshape", "torch", "transformers", "trl"}
        # a rerun resumes: nothing new, nothing duplicated
        again = run_eval(EvalConfig(out=str(tmp_path / "out"), progress=False, report=False))
        assert again.n_new == 0 and again.n_skipped_done == 9 and len(_read(again.results_path)) == 24
        assert len(json.loads(again.meta_path.read_text())["sessions"]) == 2

    @pytest.mark.parametrize("keep, want", [(0, []), (1, [False, True]), (5, [False] * 3 + [True, False])])
    def test_keep_graphs_keeps_the_reports_first_correct_and_first_wrong(self, tmp_path, keep, want):
        summary = run_eval(EvalConfig(out=str(tmp_path / "o"), keep_graphs=keep, progress=False, report=keep == 1))
        graphs = [r for r in _read(summary.results_path) if r["graph"] is not None]
        assert [r["correct"] for r in graphs] == want
        if keep == 1:  # the report shows the first correct and the first wrong completion, as docs promise
            md = summary.report_paths[0].read_text()
            assert md.count("| correct | η =") == 1 and md.count("| wrong | η =") == 1

    def test_embedded_traces_file_is_our_schema_with_attribution(self):
        traces = load_traces(embedded_traces_path())
        assert len(traces) == 24
        assert all(t.license == "Apache-2.0" and t.source.startswith("open-thought/reasoning-gym-eval@")
                   for t in traces)
        assert Counter(t.puzzle for t in traces) == {"solo": 16, "unequal": 8}
        readme = (REPO / "reasonshape" / "data" / "README.md").read_text()
        assert "embedded_traces.jsonl" in readme and "Apache-2.0" in readme

    def test_subset_and_limit_in_traces_mode(self, tmp_path):
        summary = run_eval(EvalConfig(out=str(tmp_path / "o"), puzzles=["unequal"], limit=2, progress=False,
                                      report=False))
        recs = _read(summary.results_path)
        assert {r["puzzle"] for r in recs} == {"unequal"}
        assert len({r["id"].rsplit("#", 1)[0] for r in recs}) == 2

    def test_rerun_with_other_settings_is_refused(self, tmp_path):
        out = str(tmp_path / "out")
        path = _handmade_traces(tmp_path)
        run_eval(EvalConfig(out=out, traces=str(path), progress=False, report=False))
        with pytest.raises(ConfigError, match="other settings") as e:
            run_eval(EvalConfig(out=out, progress=False, report=False))
        assert f"traces: {str(path.resolve())!r} (this run: 'embedded')" in str(e.value)  # names what differs
        with pytest.raises(ConfigError, match=r"su_trials: 8 \(this run: 3\)"):
            run_eval(EvalConfig(out=out, traces=str(path), su_trials=3, progress=False, report=False))

    @pytest.mark.parametrize("kwargs, match", [
        ({"embedded": True, "puzzles": ["tent"]}, "unknown puzzle 'tent'; known puzzles: solo"),
        ({"embedded": True, "levels": ["easy"]}, r"none of the 24 traces of the embedded traces matches --levels "
                                                 r"easy \(their puzzles: solo, unequal; their levels: external\)"),
        ({"embedded": True, "puzzles": ["tents"]}, "none of the 24 traces .* matches --puzzles tents"),
        ({"traces": "EMPTY", "traces_format": "reasonshape"}, "empty.jsonl' holds no trace"),
        ({"traces": "EMPTY"}, r"empty.jsonl' is empty \(no non-blank line\)"),
        ({"traces": "DIR"}, "holds no trace .*a directory is read as reasoning-gym-eval results"),
        ({"traces": "FLIP"}, "none of the 1 traces .* can be scored; skipped 1 traces of unknown or unimplemented"),
    ])
    def test_nothing_to_score_is_a_config_error(self, tmp_path, kwargs, match):
        paths = {"EMPTY": tmp_path / "empty.jsonl", "DIR": tmp_path / "dir", "FLIP": tmp_path / "flip.jsonl"}
        paths["EMPTY"].write_text("\n")
        paths["DIR"].mkdir()
        _write_jsonl(paths["DIR"] / "ours.jsonl", [{"puzzle": "solo", "game_id": "2x2:1c2f3c1", "completion": "x"}])
        _write_jsonl(paths["FLIP"], [{"puzzle": "flip", "game_id": "3x3:abc", "completion": "x"}])
        if kwargs.get("traces") in paths:
            kwargs = {**kwargs, "traces": str(paths[kwargs["traces"]])}
        out = tmp_path / "out"
        with pytest.raises(UnknownPuzzleError if "unknown puzzle" in match else ConfigError, match=match):
            run_eval(EvalConfig(out=str(out), progress=False, **kwargs))
        assert not out.exists()  # nothing written, nothing locked

    def test_nothing_to_score_on_the_cli_is_one_line_with_status_2(self, tmp_path, capsys):
        from reasonshape.cli import main as cli_main

        assert cli_main(["eval", "--embedded", "--levels", "easy", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("reasonshape eval: error: no completion to score") and "\n" not in err

    def test_a_run_that_wrote_no_record_does_not_lock_the_out_directory(self, tmp_path):
        out = tmp_path / "out"
        bad = _write_jsonl(tmp_path / "bad.jsonl", [{"puzzle": "solo", "game_id": "2x2:1c2f3c1", "completion": "x"},
                                                    {"puzzle": "solo", "completion": "x"}])
        with pytest.raises(TraceFileError):
            run_eval(EvalConfig(out=str(out), traces=str(bad), progress=False, report=False))
        # a failed run may have left its settings (and an empty or torn results file) behind: a served run that
        # failed on its first request, or an earlier version that wrote run_meta.json before reading the traces
        out.mkdir(exist_ok=True)
        (out / "results.jsonl").write_bytes(b'{"id": "solo/external/x#0", "pu')
        from reasonshape.training.eval import _write_json

        _write_json(out / "run_meta.json", {"fingerprint": EvalConfig(traces=str(bad)).fingerprint(),
                                            "sessions": []})
        summary = run_eval(EvalConfig(out=str(out), traces=str(_handmade_traces(tmp_path)), progress=False,
                                      report=False))
        assert summary.n_new == 4 and len(summary.meta["sessions"]) == 1
        assert summary.meta["fingerprint"]["traces"] == str((tmp_path / "traces.jsonl").resolve())


# --------------------------------------------------------------------------------------------------- sampling
def _check_sampled(summary, n_instances: int, k: int, max_tokens: int) -> None:
    recs = _read(summary.results_path)
    assert len(recs) == n_instances * k and all(tuple(r) == RESULT_KEYS for r in recs)
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(r["id"].rsplit("#", 1)[0], []).append(r)
        assert 1 <= r["tokens"] <= max_tokens
        assert r["finish_reason"] in ("stop", "length")
        assert r["timing"]["sample_s"] > 0 and r["level"] == "trivial"
        assert set(r["su"]) == SU_KEYS and r["dispersion"] is not None
    assert len(groups) == n_instances
    for g in groups.values():
        assert sorted(r["sample"] for r in g) == list(range(k))
        if g[0]["su"]["U"] is None:  # the tiny model's replies hold no readable verdict: the group measures nothing
            assert g[0]["su"]["unparsed"] == g[0]["su"]["judge_prompts"] > 0
            assert all(r["su"]["preference_mass"] is None for r in g)
            continue
        _check_su_group(g, k)
    meta = json.loads(summary.meta_path.read_text())
    assert meta["k"] == k and meta["temperature"] == 1.0 and meta["su"]["enabled"] is True
    assert meta["time"]["sampling_s"] > 0 and meta["time"]["judge_s"] > 0
    assert all(p.exists() for p in summary.report_paths) and len(summary.report_paths) == 2


def _check_su_group(g: list[dict], k: int) -> None:
    U, A, I = g[0]["su"]["U"], g[0]["su"]["A"], g[0]["su"]["I"]  # noqa: E741
    assert U == pytest.approx(A + I, abs=1e-9) and -1e-12 <= A <= U <= math.log(k) + 1e-9 and I >= -1e-12
    # consensus preference mass N*pibar_i - 1 sums to 0 over the group; rank stability lies in [0, 1]
    assert sum(r["su"]["preference_mass"] for r in g) == pytest.approx(0.0, abs=1e-9)
    assert all(0.0 <= r["su"]["rank_stability"] <= 1.0 for r in g)


class TestSampling:
    def test_tiny_model_through_transformers_backend(self, tiny_model_dir, tmp_path):
        cfg = EvalConfig(out=str(tmp_path / "out"), model=str(tiny_model_dir), backend="transformers", device="cpu",
                         puzzles=["solo"], levels=["trivial"], limit=2, k=2, max_tokens=12, su_trials=2,
                         judge_max_tokens=6, progress=False)
        summary = run_eval(cfg)
        _check_sampled(summary, 2, 2, 12)
        assert summary.meta["backend"] == "transformers" and summary.meta["model"] == str(tiny_model_dir)

    def test_tiny_model_through_transformers_serve(self, tiny_model_dir, serve_url, tmp_path):
        cfg = EvalConfig(out=str(tmp_path / "out"), model=str(tiny_model_dir), base_url=serve_url,
                         puzzles=["solo"], levels=["trivial"], limit=2, k=2, max_tokens=12, su_trials=2,
                         judge_max_tokens=6, progress=False)
        summary = run_eval(cfg)
        _check_sampled(summary, 2, 2, 12)
        assert summary.meta["backend"] == "openai" and summary.meta["base_url"] == serve_url

    def test_a_base_model_is_evaluated_and_judges_itself_with_standard_prompts(self, base_model_dir, tmp_path):
        # no chat template: conversational prompts are refused before anything is sampled, naming the option
        def cfg(out, **kw):
            return EvalConfig(out=str(tmp_path / out), model=str(base_model_dir), backend="transformers",
                              device="cpu", puzzles=["solo"], levels=["trivial"], limit=2, k=2, max_tokens=12,
                              su_trials=2, judge_max_tokens=6, progress=False, **kw)

        with pytest.raises(ConfigError, match="has no chat template.*--prompt-format standard"):
            run_eval(cfg("conv"))
        conv = tmp_path / "conv" / "results.jsonl"
        assert not conv.exists() or not _read(conv)
        # standard prompts: sampled, and the model judges its own samples in the same layout
        summary = run_eval(cfg("std", prompt_format="standard"))
        _check_sampled(summary, 2, 2, 12)
        assert summary.meta["su"]["enabled"] and summary.meta["prompt_format"] == "standard"
        # a base model as a separate judge cannot take the judge's chat messages
        with pytest.raises(ConfigError, match="--judge-model .* has no chat template"):
            run_eval(cfg("judged", prompt_format="standard", judge_model=str(base_model_dir)))

    def test_traces_with_a_judge_get_structural_uncertainty(self, tiny_model_dir, tmp_path):
        cfg = EvalConfig(out=str(tmp_path / "out"), traces=str(_handmade_traces(tmp_path)),
                         judge_model=str(tiny_model_dir), device="cpu", su_trials=3, judge_max_tokens=4,
                         progress=False, report=False)
        summary = run_eval(cfg)
        recs = {(r["model"], r["sample"]): r for r in _read(summary.results_path)}
        group = [recs[("m", i)] for i in range(3)]
        assert all(set(r["su"]) == SU_KEYS for r in group) and recs[("other", 0)]["su"] is None
        assert len({(r["su"]["U"], r["su"]["A"], r["su"]["I"]) for r in group}) == 1  # group-level values
        if group[0]["su"]["U"] is not None:  # else the tiny judge gave no readable verdict (see TestJudgeWithout...)
            _check_su_group(group, 3)
        assert summary.meta["judge"] == str(tiny_model_dir) and summary.meta["time"]["judge_s"] > 0
        assert summary.meta["su"]["enabled"] and "not_computed" not in summary.meta["su"]
        # a rerun with nothing left to do builds no judge, and still reports the run's settings
        again = run_eval(cfg)
        assert again.n_new == 0 and again.meta["judge"] == str(tiny_model_dir)
        assert again.meta["su"]["enabled"] and "not_computed" not in again.meta["su"]


class TestCheckpointIdentity:
    """A checkpoint replaced at the same path (``reasonshape ablate`` retrains into ``OUT/<config>``) is another
    model: resuming its results is refused (a fake backend samples; the directory only has to look like one)."""

    @staticmethod
    def _checkpoint(path: Path, weights: bytes) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        (path / "config.json").write_text('{"model_type": "qwen2"}')
        (path / "model.safetensors").write_bytes(weights)
        return path

    def _cfg(self, tmp_path: Path, model: Path, limit: int = 1) -> EvalConfig:
        return EvalConfig(out=str(tmp_path / "o"), model=str(model), backend="transformers", puzzles=["solo"],
                          levels=["trivial"], limit=limit, su=False, progress=False, report=False)

    def test_a_replaced_checkpoint_is_refused(self, tmp_path):
        model = self._checkpoint(tmp_path / "runs" / "accuracy_only", b"old weights")
        first = run_eval(self._cfg(tmp_path, model), backend=_InterruptedBackend(10))
        assert first.n_new == 1 and first.meta["fingerprint"]["checkpoint"].startswith("2 files, ")
        assert run_eval(self._cfg(tmp_path, model), backend=_InterruptedBackend(10)).n_new == 0  # unchanged: resumes
        self._checkpoint(model, b"new weights, retrained")  # the same path, another checkpoint
        for limit in (1, 2):  # neither "0 new" on the old results nor new results appended to them
            with pytest.raises(ConfigError, match=f"the checkpoint at {str(model)!r} changed since those results "
                                                  "were written .*use another --out") as e:
                run_eval(self._cfg(tmp_path, model, limit), backend=_InterruptedBackend(10))
            assert "\n" not in str(e.value)
        assert len(_read(tmp_path / "o" / "results.jsonl")) == 1
        assert run_eval(self._cfg(tmp_path / "other", model), backend=_InterruptedBackend(10)).n_new == 1

    def test_results_written_before_the_identity_existed_still_resume(self, tmp_path):
        model = self._checkpoint(tmp_path / "ckpt", b"weights")
        run_eval(self._cfg(tmp_path, model), backend=_InterruptedBackend(10))
        meta_path = tmp_path / "o" / "run_meta.json"
        meta = json.loads(meta_path.read_text())
        del meta["fingerprint"]["checkpoint"]  # as an earlier version wrote it
        meta_path.write_text(json.dumps(meta))
        again = run_eval(self._cfg(tmp_path, model, limit=2), backend=_InterruptedBackend(10))
        assert (again.n_new, again.n_records) == (1, 2)
        assert again.meta["fingerprint"]["checkpoint"] == EvalConfig(model=str(model)).fingerprint()["checkpoint"]

    def test_another_spelling_of_the_same_directory_resumes(self, tmp_path, monkeypatch):
        # "./runs/ckpt", "runs/ckpt/" and the absolute path are one model: its identity tells whether it changed
        model = self._checkpoint(tmp_path / "runs" / "ckpt", b"weights")
        other = self._checkpoint(tmp_path / "runs" / "other", b"weights")
        monkeypatch.chdir(tmp_path)
        assert run_eval(self._cfg(tmp_path, model), backend=_InterruptedBackend(10)).n_new == 1
        for spelling in ("./runs/ckpt", "runs/ckpt/", "runs/../runs/ckpt"):
            assert run_eval(self._cfg(tmp_path, Path(spelling), limit=1), backend=_InterruptedBackend(10)).n_new == 0
        with pytest.raises(ConfigError, match="model: .*ckpt' \\(this run: .*other'\\)"):
            run_eval(self._cfg(tmp_path, other), backend=_InterruptedBackend(10))

    def test_only_local_directories_have_an_identity(self, tmp_path):
        model = self._checkpoint(tmp_path / "ckpt", b"weights")
        assert "checkpoint" not in EvalConfig(model="Qwen/Qwen3-8B").fingerprint()
        assert "checkpoint" not in EvalConfig(model=str(model), base_url="http://127.0.0.1:1/v1").fingerprint()
        assert "checkpoint" not in EvalConfig(model=str(tmp_path)).fingerprint()  # no config.json, no weights

    def _judged(self, tmp_path: Path, judge: Path) -> EvalConfig:
        return EvalConfig(out=str(tmp_path / "o"), traces=str(_handmade_traces(tmp_path)), judge_model=str(judge),
                          su_trials=2, progress=False, report=False)

    def test_a_replaced_judge_checkpoint_is_refused(self, tmp_path):
        judge = self._checkpoint(tmp_path / "judge", b"old judge")
        first = run_eval(self._judged(tmp_path, judge), judge=_ScriptedJudge("Verdict: A"))
        n = first.n_records
        assert n > 0 and first.meta["fingerprint"]["judge_checkpoint"].startswith("2 files, ")
        assert run_eval(self._judged(tmp_path, judge), judge=_ScriptedJudge("Verdict: A")).n_new == 0  # resumes
        self._checkpoint(judge, b"judge retrained at the same path")
        with pytest.raises(ConfigError, match=f"the judge checkpoint at {str(judge)!r} changed since those results "
                                              "were written .*judge_checkpoint.*use another --out") as e:
            run_eval(self._judged(tmp_path, judge), judge=_ScriptedJudge("Verdict: A"))
        assert "\n" not in str(e.value)
        assert len(_read(tmp_path / "o" / "results.jsonl")) == n

    def test_results_written_before_the_judge_identity_existed_still_resume(self, tmp_path):
        judge = self._checkpoint(tmp_path / "judge", b"judge")
        run_eval(self._judged(tmp_path, judge), judge=_ScriptedJudge("Verdict: A"))
        meta_path = tmp_path / "o" / "run_meta.json"
        meta = json.loads(meta_path.read_text())
        del meta["fingerprint"]["judge_checkpoint"]  # as an earlier version wrote it
        meta_path.write_text(json.dumps(meta))
        again = run_eval(self._judged(tmp_path, judge), judge=_ScriptedJudge("Verdict: A"))
        assert again.n_new == 0 and "judge_checkpoint" in again.meta["fingerprint"]

    def test_only_a_local_judge_directory_has_an_identity(self, tmp_path):
        judge = self._checkpoint(tmp_path / "judge", b"judge")
        assert "judge_checkpoint" in EvalConfig(traces="t.jsonl", judge_model=str(judge)).fingerprint()
        assert "judge_checkpoint" in EvalConfig(model="m", judge_model=str(judge)).fingerprint()
        assert "judge_checkpoint" not in EvalConfig(traces="t.jsonl", judge_model="Qwen/Qwen3-8B").fingerprint()
        assert "judge_checkpoint" not in EvalConfig(traces="t.jsonl", judge_model=str(judge),
                                                    judge_base_url="http://127.0.0.1:1/v1").fingerprint()
        assert "judge_checkpoint" not in EvalConfig(traces="t.jsonl").fingerprint()


class _ScriptedJudge:
    """A judge backend whose every reply is ``text`` (no readable verdict for ``"lorem ipsum"``)."""

    def __init__(self, text: str):
        self.text = text

    def generate(self, prompts, n=1, temperature=1.0, top_p=1.0, max_tokens=256, seed=None, logprobs=None):
        from reasonshape.training.backends import Sample

        return [[Sample(self.text, None, 10, 3, "stop", None)] for _ in prompts]


class _AlternatingJudge:
    """A judge backend whose replies alternate between a readable "Verdict: A" and an unreadable one."""

    def generate(self, prompts, n=1, temperature=1.0, top_p=1.0, max_tokens=256, seed=None, logprobs=None):
        from reasonshape.training.backends import Sample

        return [[Sample("Verdict: A" if i % 2 else "lorem ipsum", None, 10, 3, "stop", None)]
                for i in range(len(prompts))]


def test_judge_unparsed_drop_leaves_unreadable_replies_out_of_the_fit(tmp_path):
    def run(out, unparsed):
        cfg = EvalConfig(out=str(tmp_path / out), traces=str(_handmade_traces(tmp_path)), su_trials=2,
                         progress=False, judge_unparsed=unparsed)
        return run_eval(cfg, judge=_AlternatingJudge())

    tie, drop = run("tie", "tie"), run("drop", "drop")
    su = {name: next(r["su"] for r in _read(s.results_path) if r["model"] == "m")
          for name, s in (("tie", tie), ("drop", drop))}
    assert su["tie"]["unparsed"] == su["drop"]["unparsed"] == 2 and su["tie"]["judge_prompts"] == 4
    assert su["tie"]["U"] != su["drop"]["U"]  # the same replies, another fit
    assert drop.meta["su"]["unparsed_as"] == "drop" and drop.meta["fingerprint"]["judge_unparsed"] == "drop"
    assert "judge_unparsed" not in tie.meta["fingerprint"]  # the default: runs from before the option resume
    assert "left out of the fit" in (tmp_path / "drop" / "report.md").read_text()
    assert "counted as ties" in (tmp_path / "tie" / "report.md").read_text()
    with pytest.raises(ConfigError, match="judge_unparsed: 'drop' \\(this run: 'tie'\\)"):
        run("drop", "tie")
    with pytest.raises(ConfigError, match="judge_unparsed must be 'tie' or 'drop', got 'skip'"):
        EvalConfig(traces="t.jsonl", judge_unparsed="skip")


class TestJudgeWithoutVerdict:
    def test_groups_without_a_readable_verdict_are_left_out_and_counted(self, tmp_path):
        cfg = EvalConfig(out=str(tmp_path / "out"), traces=str(_handmade_traces(tmp_path)), su_trials=2,
                         progress=False)
        summary = run_eval(cfg, judge=_ScriptedJudge("lorem ipsum"))
        recs = {(r["model"], r["sample"]): r for r in _read(summary.results_path)}
        group = [recs[("m", i)] for i in range(3)]
        # every reply unparsed: U / A / I and the per-candidate signals are null (ties alone measure nothing)
        for r in group:
            assert r["su"] == {"U": None, "A": None, "I": None, "preference_mass": None, "rank_stability": None,
                               "judge_prompts": 4, "unparsed": 4}
        su = summary.meta["su"]
        assert (su["groups_judged"], su["groups_without_verdict"]) == (1, 1)
        assert (su["judge_prompts"], su["judge_unparsed"], su["judge_unparsed_rate"]) == (4, 4, 1.0)
        md = summary.report_paths[0].read_text()
        assert ("Structural uncertainty was computed, but the judge gave no readable verdict in any group: 1 of 1 "
                "judged groups without one, 4 of 4 replies unreadable" in md)
        assert "AUROC" not in md  # no group measured anything: no SU table
        # nothing below to point at, and no claim that no record carries structural uncertainty
        assert "below" not in md.split("Structural uncertainty (paper B)")[1].split("\n#")[0]
        assert "No record carries structural-uncertainty values" not in md

    def test_readable_verdicts_give_values(self, tmp_path):
        cfg = EvalConfig(out=str(tmp_path / "out"), traces=str(_handmade_traces(tmp_path)), su_trials=2,
                         progress=False, report=False)
        summary = run_eval(cfg, judge=_ScriptedJudge("Verdict: A"))
        group = [r for r in _read(summary.results_path) if r["model"] == "m"]
        assert all(set(r["su"]) == SU_KEYS and r["su"]["U"] is not None and r["su"]["unparsed"] == 0
                   for r in group)
        _check_su_group(group, 3)
        assert summary.meta["su"]["groups_without_verdict"] == 0
        assert summary.meta["su"]["judge_unparsed_rate"] == 0.0


# --------------------------------------------------------------------------------------------------- kill -9 / resume
def _start_eval_subprocess(tmp_path: Path, copies: int) -> tuple[subprocess.Popen, Path, list[TraceRecord]]:
    """``reasonshape eval`` on ``copies`` copies of the embedded traces (one group per batch) in a real subprocess,
    returned once its results file holds a first complete group: (process, trace file, traces)."""
    base = load_traces(embedded_traces_path())
    traces = [TraceRecord(**{**t.to_json(), "model": f"{t.model}-{j}"}) for j in range(copies) for t in base]
    path = _write_jsonl(tmp_path / "many.jsonl", [t.to_json() for t in traces])
    out = tmp_path / "out"
    results = out / "results.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "reasonshape.cli", "eval", "--traces", str(path), "--out", str(out),
           "--batch-instances", "1", "--no-progress", "--no-report"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (results.exists() and results.read_bytes().count(b"\n") >= 1):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "no group written within 120 s"
            time.sleep(0.01)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, path, traces


def test_kill_9_then_resume_loses_and_duplicates_nothing(tmp_path):
    proc, path, traces = _start_eval_subprocess(tmp_path, 4)
    out = tmp_path / "out"
    results = out / "results.jsonl"
    try:
        still_running = proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert still_running, "the run finished before it could be killed"
    n_before = len(_read(results))
    assert 1 <= n_before < len(traces)
    with open(results, "ab") as f:  # also simulate a write torn by the kill
        f.write(b'{"id": "solo/external/torn#0", "puzzle": "so')
    summary = run_eval(EvalConfig(out=str(out), traces=str(path), progress=False, report=False))
    recs = _read(results)
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)) == len(traces) == summary.n_records
    assert Counter((r["model"], r["game_id"]) for r in recs) == Counter((t.model, t.game_id) for t in traces)
    assert summary.n_new == len(traces) - n_before


def _without_timing(recs: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "timing"} for r in recs]


def test_resume_after_a_cut_at_any_byte_gives_the_uninterrupted_records(tmp_path):
    """A results file cut anywhere (torn line, partial group, group boundary) resumes to the same records as an
    uninterrupted run (timing aside), example graphs included: a removed partial group's kept graphs no longer
    count against --keep-graphs."""
    ref = run_eval(EvalConfig(out=str(tmp_path / "ref"), progress=False, report=False))
    data = ref.results_path.read_bytes()
    want = _without_timing(_read(ref.results_path))
    assert sum(r["graph"] is not None for r in want) == 4
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    cuts = {starts[1] + 10, starts[1], starts[2] + 5, starts[3] - 1, starts[3], len(data) // 2, len(data) - 3}
    for cut in sorted(cuts):
        out = tmp_path / f"cut{cut}"
        out.mkdir()
        (out / "results.jsonl").write_bytes(data[:cut])
        (out / "run_meta.json").write_bytes(ref.meta_path.read_bytes())
        again = run_eval(EvalConfig(out=str(out), progress=False, report=False))
        assert _without_timing(_read(again.results_path)) == want, f"cut at byte {cut}"


class _InterruptedBackend:
    """A sampling backend that answers ``n_ok`` calls, then raises KeyboardInterrupt (a Ctrl-C during sampling)."""

    def __init__(self, n_ok: int):
        self.n_ok = n_ok

    def generate(self, prompts, n=1, temperature=1.0, top_p=1.0, max_tokens=256, seed=None, logprobs=None):
        from reasonshape.training.backends import Sample

        if self.n_ok == 0:
            raise KeyboardInterrupt
        self.n_ok -= 1
        return [[Sample("<answer>1</answer>", None, 10, 3, "stop", None) for _ in range(n)] for _ in prompts]

    def close(self):
        pass


def test_sigint_session_is_recorded_and_says_how_to_resume(tmp_path, capsys):
    cfg = EvalConfig(out=str(tmp_path / "o"), model="fake", puzzles=["solo"], levels=["trivial"], limit=4,
                     batch_instances=1, su=False, progress=False, report=False)
    with pytest.raises(KeyboardInterrupt):
        run_eval(cfg, backend=_InterruptedBackend(2))
    assert "interrupted by SIGINT after 2 new records" in capsys.readouterr().err
    meta = json.loads((tmp_path / "o" / "run_meta.json").read_text())
    assert [(s["ended"], s["new_records"]) for s in meta["sessions"]] == [("SIGINT", 2)]
    assert meta["n_records"] == 2 and meta["time"]["sampling_s"] > 0
    done = run_eval(cfg, backend=_InterruptedBackend(10))
    sessions = done.meta["sessions"]
    assert [(s["ended"], s["new_records"]) for s in sessions] == [("SIGINT", 2), ("completed", 2)]
    # the metadata's time totals add up every session, the interrupted one included
    assert done.meta["time"]["scoring_s"] == pytest.approx(sum(s["scoring_s"] for s in sessions))


def test_sigterm_is_caught_only_where_it_has_its_default_action():
    # a caller that ignores or handles SIGTERM keeps its behaviour; the default action is restored afterwards
    from reasonshape.training import eval as E

    old = signal.getsignal(signal.SIGTERM)
    try:
        for handler in (signal.SIG_IGN, lambda signum, frame: None):
            signal.signal(signal.SIGTERM, handler)
            restore = E._catch_sigterm()
            assert signal.getsignal(signal.SIGTERM) is handler
            restore()
            assert signal.getsignal(signal.SIGTERM) is handler
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        restore = E._catch_sigterm()
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
        restore()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, old)


def test_sigterm_session_is_recorded(tmp_path):
    proc, _, _ = _start_eval_subprocess(tmp_path, 6)
    out = tmp_path / "out"
    try:
        os.kill(proc.pid, signal.SIGTERM)
        err = proc.communicate(timeout=60)[1].decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGTERM, err  # still ends as a SIGTERM would
    assert "interrupted by SIGTERM" in err and "rerun the same command to resume" in err
    meta = json.loads((out / "run_meta.json").read_text())
    (session,) = meta["sessions"]
    assert session["ended"] == "SIGTERM" and session["new_records"] == meta["n_records"] >= 1


# --------------------------------------------------------------------------------------------------- results log
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=6), cut=st.floats(0.0, 1.0))
def test_results_log_cut_anywhere_resumes_to_the_same_file(tmp_path_factory, sizes, cut):
    d = tmp_path_factory.mktemp("log")
    groups = [[{"id": f"p/trivial/{g}#{i}", "payload": "é" * (g + i)} for i in range(n)] for g, n in
              enumerate(sizes)]
    full = ResultsLog(d / "full.jsonl")
    bounds = []
    for grp in groups:
        full.append_group(grp)
        bounds.append(full.path.stat().st_size)
    data = full.path.read_bytes()
    p = int(cut * len(data))
    (d / "cut.jsonl").write_bytes(data[:p])
    log = ResultsLog(d / "cut.jsonl")
    log.drop_partial_tail({f"p/trivial/{g}": n for g, n in enumerate(sizes)})
    kept = [g for g, b in enumerate(bounds) if b <= p]  # groups whose last line ended before the cut
    assert kept == list(range(len(kept)))
    assert log.ids == {r["id"] for g in kept for r in groups[g]}
    for g in range(len(kept), len(groups)):  # resume: append what is missing
        log.append_group(groups[g])
    assert log.path.read_bytes() == data


class TestResultsLog:
    def test_append_refuses_duplicates(self, tmp_path):
        log = ResultsLog(tmp_path / "r.jsonl")
        log.append_group([{"id": "a#0"}, {"id": "a#1"}])
        with pytest.raises(ConfigError, match="duplicate"):
            log.append_group([{"id": "a#1"}])
        assert ResultsLog(tmp_path / "r.jsonl").ids == {"a#0", "a#1"}

    def test_corrupt_middle_line_is_an_error(self, tmp_path):
        p = tmp_path / "r.jsonl"
        p.write_text('{"id": "a#0"}\nnot json\n{"id": "b#0"}\n')
        with pytest.raises(ConfigError, match=":2:"):
            ResultsLog(p)

    def test_group_with_other_k_is_an_error(self, tmp_path):
        log = ResultsLog(tmp_path / "r.jsonl")
        log.append_group([{"id": "a#0"}, {"id": "a#1"}])
        log.append_group([{"id": "b#0"}, {"id": "b#1"}])
        with pytest.raises(ConfigError, match="'a' has 2 records where this run expects 3"):
            log.drop_partial_tail({"a": 3, "b": 3})


# --------------------------------------------------------------------------------------------------- importers
_Q = ("In 4x4 Mini Sudoku:\n- Each row must contain each number from 1-4 exactly once\nSolve this 4x4 Mini Sudoku "
      "puzzle:\n_ 4 _ 1\n1 _ _ _\n_ _ 2 3\n_ 2 _ _\nFormat your response as the puzzle above.\n")


class TestImporters:
    def test_reasoning_gym_eval_result_files(self, tmp_path):
        run = tmp_path / "acme_model-7b_20250101_120000"
        (run / "games").mkdir(parents=True)
        new = {"name": "mini_sudoku", "results": [{"question": _Q, "completions": [
            {"full_model_response": "a <answer>2 4 3 1</answer>", "score": 0.1},
            {"full_model_response": "b", "score": 0.0}]}]}
        (run / "games" / "mini_sudoku.json").write_text(json.dumps(new))
        old = {"name": "mini_sudoku", "model": "old-model", "results": [
            {"question": _Q, "full_model_response": "c", "score": 1.0},
            {"question": "no grid here", "full_model_response": "d", "score": 0.0}]}
        (tmp_path / "old.json").write_text(json.dumps(old))
        (run / "games" / "maze.json").write_text(json.dumps({"name": "maze", "results": []}))
        recs = import_reasoning_gym_eval(tmp_path / "acme_model-7b_20250101_120000")
        # the interop doctest gives this game ID for the same grid
        assert [(r.puzzle, r.game_id, r.model, r.completion) for r in recs] == [
            ("solo", "2x2du:a4a1_1e2_3a2b", "acme_model-7b", "a <answer>2 4 3 1</answer>"),
            ("solo", "2x2du:a4a1_1e2_3a2b", "acme_model-7b", "b")]
        assert recs[1].source.endswith("mini_sudoku.json#0.1")
        olds = read_traces(tmp_path / "old.json")  # auto: a .json file is a reasoning-gym-eval result
        assert [(r.model, r.completion) for r in olds] == [("old-model", "c")]  # the unreadable question is skipped

    def test_shared_jsonl_layout_is_detected(self, tmp_path):
        row = {"task": "mini_sudoku", "question": _Q, "completion": "x", "model": "m", "source": "s",
               "license": "Apache-2.0"}
        recs = read_traces(_write_jsonl(tmp_path / "rg.jsonl", [row]))
        assert recs == [TraceRecord("solo", "2x2du:a4a1_1e2_3a2b", "x", "m", source="s", license="Apache-2.0")]

    def test_bad_traces_lines_name_the_line(self, tmp_path):
        p = _write_jsonl(tmp_path / "t.jsonl", [{"puzzle": "solo", "game_id": "2x2:1c2f3c1", "completion": "x"},
                                                {"puzzle": "solo", "completion": "x"}])
        with pytest.raises(TraceFileError, match=r"t.jsonl:2: missing field\(s\) \['game_id'\]"):
            load_traces(p)
        with pytest.raises(ConfigError, match=r"u.jsonl':1 has fields \['bar', 'foo'\], matching neither our schema"):
            read_traces(_write_jsonl(tmp_path / "u.jsonl", [{"foo": 1, "bar": 2}]))
        # auto mode says what is wrong with the file itself (before: only "pass --traces-format")
        bad = tmp_path / "n.jsonl"
        bad.write_text("\n\nnot json\n")
        with pytest.raises(ConfigError, match=r"n.jsonl':3: not JSON \(Expecting value\); each line must be one JSON"):
            read_traces(bad)
        with pytest.raises(ConfigError, match=r"l.jsonl':1 has a JSON list, matching neither"):
            read_traces(_write_jsonl(tmp_path / "l.jsonl", [[1, 2]]))


# --------------------------------------------------------------------------------------------------- config and CLI
class TestConfigAndCli:
    @pytest.mark.parametrize("kwargs, match", [
        ({"k": 0}, "k must be an integer >= 1"),
        ({"traces": "x.jsonl", "model": "m"}, "exclude each other"),
        ({"base_url": "http://127.0.0.1:1/v1"}, "model must"),
        ({"temperature": -1.0}, "temperature must be"),
        ({"levels": ["medium"]}, "levels must be among"),
        ({"model": "m", "backend": "openai"}, "base_url must be given"),
        ({"keep_graphs": -1}, "keep_graphs must be"),
        ({"embedded": True, "model": "m"}, "embedded excludes"),
    ])
    def test_bad_settings_raise_config_error(self, kwargs, match):
        with pytest.raises(ConfigError, match=match):
            EvalConfig(**kwargs)

    def test_base_url_selects_the_openai_backend(self):
        cfg = EvalConfig(model="served", base_url="http://127.0.0.1:8000/v1")
        assert cfg.backend == "openai" and cfg.mode == "sample"
        assert EvalConfig().mode == "traces"

    def test_help_and_parse(self):
        parser = make_parser()
        assert "--traces" in parser.format_help() and "--k" in parser.format_help()
        args = parser.parse_args(["--model", "m", "--k", "4", "--puzzles", "solo", "tents", "--no-su"])
        assert (args.model, args.k, args.puzzles, args.su, args.temperature) == ("m", 4, ["solo", "tents"], False,
                                                                                 1.0)

    def test_cli_embedded_flag_as_make_demo_calls_it(self, tmp_path, capsys):
        from reasonshape.cli import main as cli_main

        assert cli_main(["eval", "--embedded", "--out", str(tmp_path / "e"), "--no-progress", "--no-report"]) == 0
        assert "24 records, 24 new" in capsys.readouterr().out

    def test_main_in_process(self, tmp_path, capsys):
        path = _handmade_traces(tmp_path)
        assert main(["--traces", str(path), "--out", str(tmp_path / "o"), "--no-progress", "--no-report"]) == 0
        assert "4 records, 4 new" in capsys.readouterr().out


# ============================================================================================ seeds and vLLM engines
class _SeedRecorder:
    """A sampling backend that records the seed of each (instance, sample), by the scheme the vLLM and
    OpenAI-compatible backends follow (:func:`~reasonshape.training.backends.request_seed`)."""

    def __init__(self):
        self.seeds: dict[str, list[int]] = {}

    def generate(self, prompts, n=1, temperature=1.0, top_p=1.0, max_tokens=256, seed=None, logprobs=None):
        from reasonshape.training.backends import Sample, request_seed

        for i, p in enumerate(prompts):
            self.seeds[p[-1]["content"]] = [request_seed(seed, i, n, k) for k in range(n)]
        return [[Sample("<answer>1</answer>", None, 10, 3, "stop", None) for _ in range(n)] for _ in prompts]

    def close(self):
        pass


@pytest.mark.parametrize("k", [2, 3])
def test_every_sample_of_the_run_has_its_own_seed_whatever_the_batching(tmp_path, k):
    # a batch was seeded seed + (index of its first instance): with per-prompt seeds seed + i*k + s, consecutive
    # batches overlapped (instance 1's samples had instance 2's streams when batch_instances = 2 = k)
    got = []
    for batch in (1, 2, 4):
        rec = _SeedRecorder()
        cfg = EvalConfig(out=str(tmp_path / f"o{batch}"), model="fake", puzzles=["solo"], levels=["trivial"],
                         limit=4, k=k, seed=10, batch_instances=batch, su=False, progress=False, report=False)
        run_eval(cfg, backend=rec)
        got.append(rec.seeds)
    assert got[0] == got[1] == got[2]
    seeds = [s for row in got[0].values() for s in row]
    assert sorted(seeds) == list(range(10, 10 + 4 * k))


class TestGpuMemoryUtilization:
    def test_one_vllm_engine_gets_the_option_or_vllms_default(self, fake_vllm):
        from reasonshape.training.eval import _build_backend

        cfg = EvalConfig(model="m", backend="vllm", gpu_memory_utilization=0.6)
        _build_backend("vllm", "m", None, cfg)
        assert fake_vllm["init"] == {"model": "m", "seed": 0, "gpu_memory_utilization": 0.6}
        _build_backend("vllm", "m", None, EvalConfig(model="m", backend="vllm"))
        assert "gpu_memory_utilization" not in fake_vllm["init"]  # vLLM's own default
        judge_only = EvalConfig(traces="t.jsonl", judge_model="j", judge_backend="vllm", gpu_memory_utilization=0.7)
        _build_backend("vllm", "j", None, judge_only)
        assert fake_vllm["init"]["gpu_memory_utilization"] == 0.7

    def test_a_vllm_policy_and_a_vllm_judge_share_the_gpu(self, fake_vllm):
        # both engines at vLLM's default 0.9 asked for 1.8 of one GPU
        from reasonshape.training.eval import _build_backend

        cfg = EvalConfig(model="m", backend="vllm", judge_model="j", judge_backend="vllm")
        assert cfg.vllm_engines == 2 and cfg.vllm_gpu_memory() == 0.45
        for model in ("m", "j"):
            _build_backend("vllm", model, None, cfg)
            assert fake_vllm["init"]["gpu_memory_utilization"] == 0.45
        EvalConfig(model="m", backend="vllm", judge_model="j", judge_backend="vllm", gpu_memory_utilization=0.4)
        with pytest.raises(ConfigError, match=r"^gpu_memory_utilization must be at most 0.475 when the policy and "
                                              r"the judge are both vLLM engines .*got 0.9$"):
            EvalConfig(model="m", backend="vllm", judge_model="j", judge_backend="vllm", gpu_memory_utilization=0.9)

    @pytest.mark.parametrize("kw, match", [
        (dict(model="m", backend="vllm", gpu_memory_utilization=0), r"must be a number in \(0, 1\], got 0"),
        (dict(model="m", backend="vllm", gpu_memory_utilization=1.5), r"must be a number in \(0, 1\], got 1.5"),
        (dict(model="m", gpu_memory_utilization=0.5), "none is built: use it with --backend vllm or --judge-backend "
                                                     "vllm, or drop it, got backend=None"),
    ])
    def test_bad_values_and_no_vllm_engine_are_refused(self, kw, match):
        with pytest.raises(ConfigError, match=match):
            EvalConfig(**kw)

    def test_the_cli_option(self):
        from reasonshape.training.eval import config_from_args, make_parser

        args = make_parser().parse_args(["--model", "m", "--backend", "vllm", "--gpu-memory-utilization", "0.5"])
        assert config_from_args(args).gpu_memory_utilization == 0.5


# ============================================================================================ chat-template keywords
#: The tiny ChatML template plus Qwen3's ``enable_thinking=False`` behaviour: an empty think block opens the turn.
_THINK_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)
_NO_THINK = {"enable_thinking": False}
_OPEN = "<|im_start|>assistant\n"
_CLOSED = _OPEN + "<think>\n\n</think>\n\n"


@pytest.fixture
def thinking_tiny(tiny_model_dir, tmp_path):
    """A copy of the tiny checkpoint whose chat template reads ``enable_thinking``."""
    import shutil

    from transformers import AutoTokenizer

    ckpt = shutil.copytree(tiny_model_dir, tmp_path / "thinking-tiny")
    tok = AutoTokenizer.from_pretrained(ckpt)
    tok.chat_template = _THINK_TEMPLATE
    tok.save_pretrained(ckpt)
    return ckpt


def _kinds(rendered: list[str]) -> list[tuple[str, str]]:
    """``(kind, text)`` of the rendered chat prompts (conftest's ``rendered``), kind ``judge`` or ``sample``."""
    return [("judge" if "# Candidate A" in text else "sample", text) for text in rendered]


class TestChatTemplateKwargs:
    def _cfg(self, out, model, **kw):
        return EvalConfig(out=str(out), model=str(model), backend="transformers", device="cpu", puzzles=["solo"],
                          levels=["trivial"], limit=1, k=2, max_tokens=4, su_trials=1, judge_max_tokens=2,
                          progress=False, report=False, **kw)

    @pytest.mark.parametrize("kw, sample_end, judge_end", [
        ({}, _OPEN, _OPEN),
        # the judge alone without thinking (the GPU configs' case: Qwen3 samples with thinking)
        ({"judge_chat_template_kwargs": '{"enable_thinking": false}'}, _OPEN, _CLOSED),
        # the model's keywords also serve it as its own judge, unless the judge's are given
        ({"chat_template_kwargs": '{"enable_thinking": false}'}, _CLOSED, _CLOSED),
        ({"chat_template_kwargs": _NO_THINK, "judge_chat_template_kwargs": {"enable_thinking": True}}, _CLOSED,
         _OPEN),
    ])
    def test_sampling_and_self_judging_render_with_their_keywords(self, thinking_tiny, tmp_path, rendered, kw,
                                                                   sample_end, judge_end):
        summary = run_eval(self._cfg(tmp_path / "o", thinking_tiny, **kw))
        kinds = Counter(k for k, _ in _kinds(rendered))
        assert kinds["sample"] == 1 and kinds["judge"] == 1  # one instance, one judge prompt (M = 1, k = 2)
        assert all(text.endswith(sample_end if k == "sample" else judge_end) for k, text in _kinds(rendered))
        meta = summary.meta
        assert meta["chat_template_kwargs"] == EvalConfig(**kw).chat_template_kwargs
        assert meta["su"]["judge_chat_template_kwargs"] == ({"enable_thinking": False} if judge_end == _CLOSED
                                                            else EvalConfig(**kw).judge_chat_template_kwargs)

    def test_a_judge_model_gets_only_the_judges_keywords(self, thinking_tiny, tmp_path, rendered):
        traces = _handmade_traces(tmp_path)
        cfg = EvalConfig(out=str(tmp_path / "o"), traces=str(traces), judge_model=str(thinking_tiny), device="cpu",
                         su_trials=1, judge_max_tokens=2, progress=False, report=False,
                         judge_chat_template_kwargs='{"enable_thinking": false}')
        summary = run_eval(cfg)
        assert rendered and all(k == "judge" and text.endswith(_CLOSED) for k, text in _kinds(rendered))
        assert summary.meta["su"]["judge_chat_template_kwargs"] == _NO_THINK
        assert summary.meta["chat_template_kwargs"] is None

    def test_the_models_keywords_are_a_resume_setting_the_judges_are_recorded(self, tmp_path):
        from reasonshape.training.eval import _fingerprint_diff

        base = EvalConfig(model="m", chat_template_kwargs='{"enable_thinking": false}')
        assert base.fingerprint()["chat_template_kwargs"] == _NO_THINK
        assert "chat_template_kwargs" in _fingerprint_diff(base.fingerprint(), EvalConfig(model="m").fingerprint())
        # results written before the option existed (no such key) resume when it is not given
        old = {k: v for k, v in EvalConfig(model="m").fingerprint().items() if k != "chat_template_kwargs"}
        assert _fingerprint_diff(old, EvalConfig(model="m").fingerprint()) == ""
        # the judge's keywords, like --judge-max-tokens, are recorded in run_meta.json, not a resume setting
        judged = EvalConfig(model="m", judge_chat_template_kwargs=_NO_THINK)
        assert judged.fingerprint() == EvalConfig(model="m").fingerprint()

    def test_each_backend_kind_is_built_with_them(self, fake_vllm, tiny_model_dir):
        from reasonshape.training.eval import _build_backend

        cfg = EvalConfig(model="m", backend="vllm")
        assert _build_backend("vllm", "m", None, cfg, _NO_THINK).chat_template_kwargs == _NO_THINK
        assert "chat_template_kwargs" not in fake_vllm["init"]  # LLM.chat's argument, not the engine's
        served = _build_backend("openai", "m", "http://127.0.0.1:1/v1", cfg, _NO_THINK)
        assert served.extra_body == {"chat_template_kwargs": _NO_THINK}
        assert _build_backend("openai", "m", "http://127.0.0.1:1/v1", cfg).extra_body == {}
        local = _build_backend("transformers", str(tiny_model_dir), None, EvalConfig(device="cpu"), _NO_THINK)
        assert local.chat_template_kwargs == _NO_THINK

    def test_cli_options(self):
        from reasonshape.training.eval import config_from_args

        parser = make_parser()
        assert "--chat-template-kwargs JSON" in parser.format_help()
        assert "--judge-chat-template-kwargs JSON" in parser.format_help()
        args = parser.parse_args(["--model", "m", "--chat-template-kwargs", '{"enable_thinking": false}',
                                  "--judge-chat-template-kwargs", '{"enable_thinking": false, "depth": 1}'])
        cfg = config_from_args(args)
        assert cfg.chat_template_kwargs == _NO_THINK
        assert cfg.judge_chat_template_kwargs == {"enable_thinking": False, "depth": 1}

    @pytest.mark.parametrize("field, value, match", [
        ("chat_template_kwargs", "{enable_thinking: false}", "must be a JSON object such as"),
        ("judge_chat_template_kwargs", "false", "must be a mapping of keyword names to JSON values"),
        ("judge_chat_template_kwargs", {"a": float("inf")}, "must map names to JSON values, got inf at a"),
    ])
    def test_bad_values_are_one_line_config_errors(self, field, value, match, capsys):
        with pytest.raises(ConfigError, match=f"^{field} {match}") as e:
            EvalConfig(model="m", **{field: value})
        assert "\n" not in str(e.value)
        from reasonshape.cli import main as cli_main

        if isinstance(value, str):
            flag = "--" + field.replace("_", "-")
            assert cli_main(["eval", "--model", "m", flag, value, "--out", "unused"]) == 2
            assert f"{field} {match.split(' such')[0]}" in capsys.readouterr().err


def test_standard_prompts_reach_the_backend_as_strings_and_are_part_of_the_fingerprint(tmp_path):
    class Recording(_InterruptedBackend):
        def generate(self, prompts, **kw):
            self.prompts = list(prompts)
            return super().generate(prompts, **kw)

    def cfg(fmt):
        return EvalConfig(out=str(tmp_path / "o"), model="fake", puzzles=["solo"], levels=["trivial"], limit=1,
                          su=False, progress=False, report=False, prompt_format=fmt)

    backend = Recording(10)
    summary = run_eval(cfg("standard"), backend=backend)
    puzzle = get("solo")
    inst = puzzle.parse_game_id(_read(summary.results_path)[0]["game_id"])
    assert backend.prompts == [f"{DEFAULT_SYSTEM_PROMPT}\n\n{puzzle.render_prompt(inst)}"]
    assert summary.meta["prompt_format"] == "standard" and summary.meta["fingerprint"]["prompt_format"] == "standard"
    with pytest.raises(ConfigError, match="prompt_format: 'standard' \\(this run: 'conversational'\\)"):
        run_eval(cfg("conversational"), backend=Recording(10))  # other prompts: not the same run
    # the default layout adds nothing to the fingerprint: runs written before the option resume
    assert "prompt_format" not in EvalConfig(model="m").fingerprint()
    with pytest.raises(ConfigError, match="prompt_format must be one of conversational, standard, got 'chat'"):
        EvalConfig(model="m", prompt_format="chat")
