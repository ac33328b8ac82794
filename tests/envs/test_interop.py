"""Tests of reasonshape.envs.interop (reasoning-gym futoshiki / sudoku / mini_sudoku questions)."""

from __future__ import annotations

import collections
import itertools
import json
from pathlib import Path

import pytest

from reasonshape.envs import get
from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.envs.interop import (
    ReasoningGymParseError,
    ReasoningGymTrace,
    TraceFileError,
    from_reasoning_gym,
    load_reasoning_gym_traces,
)
from reasonshape.errors import AnswerParseError, GameIdError

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "real_traces_sample.jsonl"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real_traces" / \
    "reasoning_gym_eval_dev.jsonl"

# A 4x4 futoshiki in reasoning-gym's rendering, made by hand from the Latin square
#   1 4 2 3 / 3 2 4 1 / 2 1 3 4 / 4 3 1 2
# with the signs (1,2) > (1,3), (1,2) over (2,2) "∨" (4 > 2), (2,4) over (3,4) "∧" (1 < 4), (3,3) < (3,4).
FUTO_Q = "\n".join([
    "Solve the following 4x4 Futoshiki puzzle:",
    "",
    "_   _ > _   3",
    "    ∨        ",
    "_   2   _   _",
    "            ∧",
    "_   _   _ < _",
    "             ",
    "4   _   _   _",
    "",
    "Ensure your answer follows the same format as the puzzle above, just replace blanks (_) with the correct "
    "value for the cell.",
    "Use < and > for horizontal constraints. Use ∧ and ∨ for vertical constraints.",
    "Remember, in Futoshiki each row and column must contain each number from 1 to 4 exactly once.",
])
FUTO_SOL = ((1, 4, 2, 3), (3, 2, 4, 1), (2, 1, 3, 4), (4, 3, 1, 2))

MINI_Q = """In 4x4 Mini Sudoku:
- Each row must contain each number from 1-4 exactly once
Solve this 4x4 Mini Sudoku puzzle:
1 _ _ _
_ _ _ _
_ _ _ _
_ _ _ 4
Format your response as the puzzle above, with spaces separating each number within a row, and newlines
"""


def _read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class TestFromReasoningGym:
    def test_futoshiki_by_hand(self):
        inst = from_reasoning_gym("futoshiki", FUTO_Q)
        # R on (1,2); D on (1,2) ("∨" under it); U on (3,4) ("∧" above it); L on (3,4) ("<" on its left)
        assert inst.game_id == "4dr:0,0RD,0,3,0,2,0,0,0,0,0,0UL,4,0,0,0,"
        unequal = get("unequal")
        assert unequal.parse_game_id(inst.game_id).data == inst.data
        assert unequal.check(inst, FUTO_SOL).ok
        assert FUTO_SOL in unequal.solve(inst, max_solutions=50).solutions

    def test_mini_sudoku_by_hand_non_unique(self):
        inst = from_reasoning_gym("mini_sudoku", MINI_Q)
        assert inst.game_id == "2x2du:1n4"  # 1, 14 blanks (n), 4
        solo = get("solo")
        res = solo.solve(inst, max_solutions=50)
        # brute force: 4x4 grids with Latin rows/columns, 2x2 boxes, (1,1) = 1 and (4,4) = 4
        perms = list(itertools.permutations(range(1, 5)))
        count = 0
        for g in itertools.product(perms, repeat=4):
            if g[0][0] != 1 or g[3][3] != 4:
                continue
            cols_ok = all(len({g[y][x] for y in range(4)}) == 4 for x in range(4))
            boxes_ok = all(len({g[y][x] for y in (by, by + 1) for x in (bx, bx + 1)}) == 4
                           for by in (0, 2) for bx in (0, 2))
            count += cols_ok and boxes_ok
        assert res.exhausted and len(res.solutions) == count == 18
        sols = res.solutions
        assert all(solo.check(inst, s).ok for s in sols) and len(set(sols)) == 18
        # verify_claim on a non-unique instance: the given is correct, a cell that varies is unverifiable
        assert solo.verify_claim(inst, Claim("value", ((1, 1),), 1)) == ClaimLabel.CORRECT
        assert solo.verify_claim(inst, Claim("value", ((1, 2),), 1)) == ClaimLabel.WRONG
        assert solo.verify_claim(inst, Claim("value", ((1, 2),), 2)) == ClaimLabel.UNVERIFIABLE

    def test_sudoku(self):
        rows = [r for r in _read(SAMPLE) if r["task"] == "sudoku"]
        inst = from_reasoning_gym("sudoku", rows[0]["question"])
        assert inst.game_id.startswith("3x3du:")
        solo = get("solo")
        expected = solo.parse_answer(rows[0]["expected_answer"], inst)
        assert solo.check(inst, expected).ok

    @pytest.mark.parametrize("task, question, where", [
        ("kakurasu", "whatever", None),
        ("sudoku", "Solve this Sudoku puzzle:\n1 2 3\n", None),
        ("mini_sudoku", "1 _ _ _\n_ _ _ _\n_ _ _ _\n", None),
        ("futoshiki", "Solve the following 4x4 Futoshiki puzzle:\n\nno grid here\n", None),
        ("futoshiki", FUTO_Q.replace("4   _   _   _", "4   _   _   _   _"), "4   _   _   _   _"),
        ("futoshiki", FUTO_Q.replace("            ∧", "            x"), "x\n"),
        ("futoshiki", FUTO_Q.replace("    ∨        ", "      ∨      "), "∨"),
        ("futoshiki", FUTO_Q.replace("_   _ > _   3", "_   _ > _   7"), "7"),
        ("futoshiki", FUTO_Q.replace("_   _ > _   3", "_   _ > _   \u00b2"), "\u00b2"),  # isdigit() but not int()
    ])
    def test_unreadable(self, task, question, where):
        with pytest.raises(ReasoningGymParseError) as e:
            from_reasoning_gym(task, question)
        assert isinstance(e.value, GameIdError) and "expected" in str(e.value)
        if where is not None:
            assert e.value.position == question.index(where)

    def test_sign_after_last_cell(self):
        question = FUTO_Q.replace("_   _ > _   3", "_   _   _   3 >")
        with pytest.raises(ReasoningGymParseError) as e:
            from_reasoning_gym("futoshiki", question)
        assert e.value.position == question.index("_   _   _   3 >")


class TestLoadTraces:
    def test_sample(self):
        records = list(load_reasoning_gym_traces(SAMPLE))
        rows = _read(SAMPLE)
        assert len(records) == len(rows) >= 30
        assert {r.task for r in records} == {"futoshiki", "sudoku", "mini_sudoku"}
        for rec, row in zip(records, rows, strict=True):
            assert isinstance(rec, ReasoningGymTrace)
            assert rec.completion == row["completion"] and rec.model == row["model"]
            assert rec.source == row["source"] and rec.reasoning_gym_score == row["reasoning_gym_score"]
            assert rec.instance.puzzle == {"futoshiki": "unequal"}.get(rec.task, "solo")
            puzzle = get(rec.instance.puzzle)
            # every stored solution is valid by our rules, and the imported game ID round-trips
            assert puzzle.check(rec.instance, puzzle.parse_answer(rec.expected_answer, rec.instance)).ok
            assert puzzle.format_game_id(puzzle.parse_game_id(rec.instance.game_id)) == rec.instance.game_id

    def test_answers_checked_by_rules(self):
        # Every answer reasoning-gym scores 1.0 passes our rule check; ours also accepts correct answers it
        # penalises for layout (e.g. futoshiki answers without the sign rows score 0.9 there).
        for rec in load_reasoning_gym_traces(SAMPLE):
            puzzle = get(rec.instance.puzzle)
            try:
                ok = puzzle.check(rec.instance, puzzle.parse_answer(rec.completion, rec.instance)).ok
            except AnswerParseError:
                ok = False
            if rec.reasoning_gym_score == 1.0:
                assert ok, rec.source
            if ok and rec.reasoning_gym_score != 1.0:
                assert rec.task == "futoshiki" or "<answer>" not in rec.completion, rec.source

    def test_bad_files(self, tmp_path):
        p = tmp_path / "t.jsonl"
        p.write_text('{"task": "sudoku"}\n', encoding="utf-8")
        with pytest.raises(TraceFileError, match=r"t.jsonl:1: missing field"):
            list(load_reasoning_gym_traces(p))
        p.write_text('\n[1, 2]\n', encoding="utf-8")
        with pytest.raises(TraceFileError, match=r":2: expected a JSON object"):
            list(load_reasoning_gym_traces(p))
        p.write_text('{"task": ', encoding="utf-8")
        with pytest.raises(TraceFileError, match="not JSON"):
            list(load_reasoning_gym_traces(p))
        with pytest.raises(FileNotFoundError):
            list(load_reasoning_gym_traces(tmp_path / "missing.jsonl"))


@pytest.mark.skipif(not SHARED.exists(), reason="the project's shared data folder is not present")
def test_all_shared_questions_import_and_answers_check():
    counts = collections.Counter()
    uniques = set()
    for rec in load_reasoning_gym_traces(SHARED):
        puzzle = get(rec.instance.puzzle)
        if rec.instance.game_id not in uniques:
            uniques.add(rec.instance.game_id)
            assert puzzle.check(rec.instance, puzzle.parse_answer(rec.expected_answer, rec.instance)).ok
        try:
            ok = puzzle.check(rec.instance, puzzle.parse_answer(rec.completion, rec.instance)).ok
        except AnswerParseError:
            ok = False
        counts["records"] += 1
        counts["ours"] += ok
        counts["rg_full"] += rec.reasoning_gym_score == 1.0
        counts["both"] += ok and rec.reasoning_gym_score == 1.0
    assert counts["records"] == 1040 and len(uniques) == 150
    # measured: ours 255, reasoning-gym 1.0: 247, all 247 among ours
    assert counts["both"] == counts["rg_full"]
    assert counts["ours"] >= counts["rg_full"]
