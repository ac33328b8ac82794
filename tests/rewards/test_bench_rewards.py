"""benchmarks/bench_rewards.py, part 1b (real completions): which completions it times and what it reports."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "real_traces_sample.jsonl"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_rewards", ROOT / "benchmarks" / "bench_rewards.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_rewards", mod)
    spec.loader.exec_module(mod)
    return mod


def _expected_counts(tiny_model_dir: Path, sizes: list[int]) -> dict[int, int]:
    """Completions of the sample with a sibling (same question, same model) within 25% of each size."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    groups: dict[tuple, list[int]] = defaultdict(list)
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        groups[(row["task"], row["question"], row["model"])].append(
            len(tok(row["completion"], add_special_tokens=False)["input_ids"]))
    counts = dict.fromkeys(sizes, 0)
    for lengths in groups.values():
        if len(lengths) < 2:
            continue
        for n in lengths:
            for s in sizes:
                if 0.75 * s <= n <= 1.25 * s:
                    counts[s] += 1
                    break
    return counts


def test_real_traces_rows(tiny_model_dir, capsys):
    sizes = [2000, 8000, 32000]
    expected = _expected_counts(tiny_model_dir, sizes)
    assert expected[2000] >= 2 and expected[32000] >= 1 and expected[8000] == 0  # the sample's shape
    rows = _bench().bench_real_traces(SAMPLE, sizes, tiny_model_dir)
    assert [r["target_tokens"] for r in rows] == [2000, 32000]  # a size with no completion gets no row ...
    assert "8000 tokens +-25%: none" in capsys.readouterr().out  # ... and says so
    for r in rows:
        assert r["completions"] == expected[r["target_tokens"]]
        assert 0.75 * r["target_tokens"] <= r["mean_tokens"] <= 1.25 * r["target_tokens"]
        assert r["reward_s"] > 0 and r["encode_s"] > 0
        assert math.isclose(r["ratio"], r["reward_s"] / r["encode_s"])


@pytest.mark.parametrize("argv, default_exists, called_with", [
    ([], False, None),                      # no shared file, no --traces: skipped, with a note
    ([], True, "default"),                  # the shared file when present
    (["--no-traces"], True, None),
    (["--traces", "mine.jsonl"], False, "mine.jsonl"),
])
def test_main_part_1b_wiring(tmp_path, monkeypatch, capsys, argv, default_exists, called_with):
    bench = _bench()
    default = tmp_path / "default"
    if default_exists:
        default.write_text("", encoding="utf-8")
    monkeypatch.setattr(bench, "DEFAULT_TRACES", default)
    monkeypatch.setattr(bench, "bench_sizes", lambda *a: [{"target_tokens": 2000, "ratio": 1.5}])
    calls = []

    def real(path, sizes, model_dir):
        calls.append(Path(path).name)
        return [{"target_tokens": 2000, "ratio": 2.5}]  # over the target: exit status 1, named as real traces

    monkeypatch.setattr(bench, "bench_real_traces", real)
    monkeypatch.setattr("reasonshape.training.tiny.build_tiny_model", lambda path, seed=0: path)
    status = bench.main(["--skip-step", *argv])
    out = capsys.readouterr().out
    assert calls == ([] if called_with is None else [called_with])
    if called_with is None:
        assert status == 0
        assert ("real traces skipped" in out) == (argv == [])
    else:
        assert status == 1 and "2000 (real traces)" in out
