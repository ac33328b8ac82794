"""Tests of reasonshape.envs.slant (dev instances: Simon Tatham's Portable Puzzle Collection, MIT, via shared/data)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer, get
from reasonshape.envs.slant import BACK, FWD, SlantParams
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows

P = get("slant")
ROWS = dev_rows("slant")
# 2x2de:a0e0a -> points: row 1 ". 0 .", row 2 ". . .", row 3 ". 0 ." (hand-decoded: a=1 blank, e=5 blanks)
SMALL = "2x2de:a0e0a"
SMALL_SOL = ((BACK, FWD), (FWD, BACK))  # from its tatham_solve "S;\0,0;/1,0;/0,1;\1,1"


def sgt_solve(game_id: str):
    """The collection's own solution of a game ID (sgt-slant --generate 1 with a fixed desc), or a skip."""
    binary = P.sgt_binary()
    if binary is None:
        pytest.skip("sgt-slant not installed")
    prefix = f"/tmp/rs_slant_{os.getpid()}_"
    proc = subprocess.run([binary, "--generate", "1", "--save", prefix, "--with-solutions", game_id],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "DISPLAY": ""})
    assert "error" not in proc.stderr.lower(), proc.stderr
    text = Path(prefix + "0").read_text()
    Path(prefix + "0").unlink()
    return next(ln.split(":", 2)[2] for ln in text.splitlines() if ln.startswith("SOLVE"))


class TestParams:
    def test_full_and_short(self):
        assert P.parse_params("5x5dh") == SlantParams(5, 5, "h")
        assert P.parse_params("4x3") == SlantParams(4, 3, "e")
        assert P.parse_params("6") == SlantParams(6, 6, "e")
        assert P.format_params(SlantParams(5, 5, "h")) == "5x5dh"
        assert P.format_params(SlantParams(5, 5, "h"), full=False) == "5x5"

    @pytest.mark.parametrize("text,pos", [("x5", 0), ("5x", 2), ("5x5dq", 4), ("5x5dh!", 5), ("1x1", 0)])
    def test_bad_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos


class TestGameIds:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_dev_instance_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_small_decoded_by_hand(self):
        inst = P.parse_game_id(SMALL)
        assert inst.data == ((None, 0, None), (None, None, None), (None, 0, None))
        assert P.unique_solution(inst) == SMALL_SOL

    @pytest.mark.parametrize("gid,pos", [
        ("2x2de:a0e0ab", 11),   # one point too many: the 'b' overflows (6 + 5 = 11th char)
        ("2x2de:a0e0", 10),     # one point short: reported at the end of the desc
        ("2x2de:a5e0a", 7),     # 5 is not a clue digit
        ("2x2de:a0E0a", 8),     # upper-case letters are not runs
        ("2x2dq:a0e0a", 4),     # unknown difficulty
        ("2x2de", 5),           # no ':'
    ])
    def test_malformed(self, gid, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(gid)
        assert e.value.position == pos
        assert e.value.expected

    def test_long_runs_split_like_the_collection(self):
        # 9x9 has 100 points; all blank = 26+26+26+22 -> "zzzv"
        inst = P.parse_game_id("9x9de:zzzv")
        assert all(v is None for row in inst.data for v in row)
        assert P.format_game_id(inst) == "9x9de:zzzv"


class TestGenerate:
    @pytest.mark.parametrize("level", ["trivial", "easy", "normal", "hard"])
    def test_deterministic_unique_and_accepted_by_the_collection(self, level):
        a = P.generate(level, seed=3)
        b = P.generate(level, seed=3)
        assert a.game_id == b.game_id
        assert P.solve(a, 2).unique
        assert P.format_params(a.params) == P.LEVELS[level]
        if P.sgt_binary() is not None:  # the collection parses our desc and finds our solution
            assert P.decode_tatham_solution(a, sgt_solve(a.game_id)) == P.unique_solution(a)

    def test_hard_is_minimal_and_sparser_than_easy(self):
        inst = P.generate("hard", seed=5)
        clues = [(r, c) for r, row in enumerate(inst.data) for c, v in enumerate(row) if v is not None]
        for r, c in clues:  # removing any clue breaks uniqueness
            data = [list(row) for row in inst.data]
            data[r][c] = None
            from reasonshape.envs.slant import encode_desc
            other = P.parse_game_id(f"5x5dh:{encode_desc(data)}")
            assert not P.solve(other, 2).unique
        easy = P.generate("normal", seed=5)
        assert sum(v is not None for row in easy.data for v in row) > len(clues)

    def test_sgt_backend(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-slant not installed")
        inst = P.generate("easy", seed=1, backend="sgt")
        assert P.solve(inst, 2).unique
        assert inst.game_id.startswith("4x4de:")


class TestText:
    def test_prompt(self):
        inst = P.parse_game_id(SMALL)
        text = P.render_prompt(inst)
        assert ". 0 .\n. . .\n. 0 ." in text
        assert "<answer>" in text and "1-based" in text and "loop" in text
        for sym in P.ANSWER_SYMBOLS:
            assert sym in text

    @pytest.mark.parametrize("body", [
        "\\ /\n/ \\", "\\/\n/\\", "```\n\\ /\n/ \\\n```", "\\\\ /\n/ \\\\", "\\, /\n/, \\", "| \\ | / |\n| / | \\ |",
    ])
    def test_parse_variants(self, body):
        inst = P.parse_game_id(SMALL)
        ans = P.parse_answer(f"Let me think.\n<answer>\n{body}\n</answer>\nDone.", inst)
        assert ans.value == SMALL_SOL and ans.source == "answer_block"

    def test_fallback_grid(self):
        inst = P.parse_game_id(SMALL)
        ans = P.parse_answer("The final grid is:\n\\ /\n/ \\\nThat's it.", inst)
        assert ans.value == SMALL_SOL and ans.source == "fallback_grid"

    @pytest.mark.parametrize("text,reason", [
        ("no grid here", "no answer block"), ("<answer>\\ /</answer>", "wrong size"),
        ("<answer>\\ x\n/ \\</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, text, reason):
        with pytest.raises(AnswerParseError, match=reason):
            P.parse_answer(text, P.parse_game_id(SMALL))

    def test_format_answer_inverse(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        assert P.parse_answer(f"<answer>{P.format_answer(inst, sol)}</answer>", inst).value == sol

    def test_one_megabyte_answer_is_linear(self):
        inst = P.parse_game_id(SMALL)
        text = "x" * 1_000_000 + "<answer>\\ /\n/ \\</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, inst).value == SMALL_SOL
        assert time.perf_counter() - t < 1.0


class TestCheck:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_every_single_cell_corruption_is_rejected(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        assert P.check(inst, sol).ok and P.check(inst, ParsedAnswer(sol)).ok
        for r in range(len(sol)):
            for c in range(len(sol[0])):
                bad = [list(x) for x in sol]
                bad[r][c] = FWD if sol[r][c] == BACK else BACK
                res = P.check(inst, tuple(map(tuple, bad)))
                assert not res.ok and set(res.rules) <= {"clue", "loop"}

    def test_loop_named(self):
        inst = P.parse_game_id("2x2de:i")  # no clues at all
        res = P.check(inst, ((FWD, BACK), (BACK, FWD)))  # a diamond around the centre point
        assert res.rules == ("loop",)
        assert set(res.violations[0].cells) == {(1, 1), (1, 2), (2, 1), (2, 2)}

    def test_clue_named_with_point(self):
        inst = P.parse_game_id(SMALL)
        res = P.check(inst, ((FWD, FWD), (FWD, BACK)))
        assert "clue" in res.rules and "point (1,2)" in res.violations[0].detail

    def test_any_valid_solution_passes(self):
        inst = P.parse_game_id("2x2de:i")  # 2^4 fillings minus the one loop: 15 solutions, all pass
        res = P.solve(inst, 100)
        assert res.exhausted and len(res.solutions) == 15
        assert all(P.check(inst, s).ok for s in res.solutions)

    def test_shape_and_symbol(self):
        inst = P.parse_game_id(SMALL)
        assert P.check(inst, ((BACK,),)).rules == ("shape",)
        assert P.check(inst, ((BACK, "x"), (FWD, BACK))).rules == ("symbol",)

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 1e-3


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ROWS), st.data())
def test_random_corruptions_rejected_and_round_trip(row, data):
    inst = P.parse_game_id(row["game_id"])
    sol = P.unique_solution(inst)
    assert P.parse_answer(P.format_answer(inst, sol), inst).value == sol
    cells = [(r, c) for r in range(len(sol)) for c in range(len(sol[0]))]
    flip = data.draw(st.lists(st.sampled_from(cells), min_size=1, unique=True))
    bad = [list(x) for x in sol]
    for r, c in flip:
        bad[r][c] = FWD if bad[r][c] == BACK else BACK
    assert not P.check(inst, tuple(map(tuple, bad))).ok  # the solution is unique, so any change breaks a rule


class TestClaims:
    def test_claims(self):
        inst = P.parse_game_id(SMALL)
        cstar = P.solution_claims(inst)
        assert cstar == {Claim("value", ((1, 1),), BACK), Claim("value", ((1, 2),), FWD),
                         Claim("value", ((2, 1),), FWD), Claim("value", ((2, 2),), BACK)}
        assert P.given_claims(inst) == (Claim("clue", ((1, 2),), 0), Claim("clue", ((3, 2),), 0))
        assert P.verify_claim(inst, Claim("value", ((1, 1),), BACK)) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((1, 1),), FWD)) == ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("value", ((1, 1),), FWD, False)) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("clue", ((1, 2),), 0)) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("clue", ((1, 2),), 1)) == ClaimLabel.WRONG
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("value", ((3, 1),), BACK))
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("tent", ((1, 1),), "T"))

    def test_text(self):
        assert P.claim_text(Claim("value", ((2, 3),), BACK)) == "(2,3) is \\"
        assert P.claim_text(Claim("value", ((2, 3),), FWD, False)) == "(2,3) is not /"
        inst = P.parse_game_id(SMALL)
        for c in P.given_claims(inst) + (Claim("clue", ((1, 1),), 3, False),):
            text = "So " + P.claim_text(c) + "."
            found = P.parse_claim_text(inst, text)
            assert [f[0] for f in found] == [c]
            assert text[found[0][1]:found[0][2]].endswith(str(c.value))
        assert P.VALUE_WORDS["backslash"] == BACK and P.VALUE_WORDS["/"] == FWD
        assert P.value_claim((1, 1), BACK) == Claim("value", ((1, 1),), BACK)


class TestUnits:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_units_exact(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        var = P.variables(inst)
        assert len(var) == inst.params.w * inst.params.h
        units = P.units(inst)
        assert len(units) == sum(v is not None for r in inst.data for v in r)
        for u in units:
            vals = tuple(P.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            flipped = (FWD if vals[0] == BACK else BACK,) + vals[1:]
            assert not u.allowed(flipped), u.name  # changing one cell changes the count by one
            assert u.premises[0].kind == "clue" and u.name.startswith("the clue")
