"""Tests of reasonshape.envs.signpost (dev instances: Simon Tatham's Portable Puzzle Collection, MIT, via
shared/data)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer, get
from reasonshape.envs.signpost import SignpostData, SignpostParams
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows

P = get("signpost")
ROWS = dev_rows("signpost")
# 2x3 = 2 columns, 3 rows. "1d" = 1 with arrow d (SE), "f" (SW), "e" (S), "a" (N), "c" (E), "6a" = the end cell.
SMALL = "2x3:1dfeac6a"
SMALL_SOL = ((1, 3), (4, 2), (5, 6))  # from its tatham_solve "S1d3f4e2a5c6a"; 1 SE-> 2 N-> 3 SW-> 4 S-> 5 E-> 6


def sgt_move(game_id: str) -> str:
    binary = P.sgt_binary()
    if binary is None:
        pytest.skip("sgt-signpost not installed")
    prefix = f"/tmp/rs_signpost_{os.getpid()}_"
    proc = subprocess.run([binary, "--generate", "1", "--save", prefix, "--with-solutions", game_id],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "DISPLAY": ""})
    assert "error parsing" not in proc.stderr.lower(), proc.stderr
    path = Path(prefix + "0")
    if not path.exists():  # the collection parsed the desc but its deductive solver gave up
        assert "unable to" in proc.stderr.lower(), proc.stderr
        return ""
    text = path.read_text()
    path.unlink()
    return next(ln.split(":", 2)[2] for ln in text.splitlines() if ln.startswith("SOLVE"))


def replace(sol, r, c, v):
    g = [list(x) for x in sol]
    g[r][c] = v
    return tuple(map(tuple, g))


class TestParams:
    def test_full_and_short(self):
        assert P.parse_params("4x4c") == SignpostParams(4, 4, True)
        assert P.parse_params("2x3") == SignpostParams(2, 3, False)
        assert P.parse_params("5") == SignpostParams(5, 5, False)
        assert P.format_params(SignpostParams(4, 4, True)) == "4x4c"
        assert P.format_params(SignpostParams(4, 4, True), full=False) == "4x4"

    @pytest.mark.parametrize("text,pos", [("x4", 0), ("4x", 2), ("4x4d", 3), ("4x4cc", 4), ("1x1", 0)])
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
        assert inst.data == SignpostData((("SE", "SW"), ("S", "N"), ("E", "N")),
                                         ((1, None), (None, None), (None, 6)))
        assert P.unique_solution(inst) == SMALL_SOL

    @pytest.mark.parametrize("gid,pos", [
        ("2x3:1dfeac6ab", 12),  # a 7th cell
        ("2x3:1dfeac6", 11),    # a number without its arrow letter
        ("2x3:1dfeac", 10),     # 5 cells for 6
        ("2x3:1dfeac7a", 10),   # 7 > N = 6
        ("2x3:1dfe1ac6a", 8),   # 1 given twice
        ("2x3:1dfiac6a", 7),    # 'i' is not a direction
        ("2x3:0dfeac6a", 4),    # 0 is not a number of the chain
    ])
    def test_malformed(self, gid, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(gid)
        assert e.value.position == pos and e.value.expected


class TestGenerate:
    @pytest.mark.parametrize("level", ["trivial", "easy", "normal", "hard"])
    def test_deterministic_unique_and_accepted_by_the_collection(self, level):
        a = P.generate(level, seed=6)
        assert a.game_id == P.generate(level, seed=6).game_id
        assert P.solve(a, 2).unique
        assert P.format_params(a.params) == P.LEVELS[level]
        sol = P.unique_solution(a)
        n = a.params.w * a.params.h
        if a.params.corners:
            assert sol[0][0] == 1 and sol[-1][-1] == n
        if P.sgt_binary() is not None and level in ("easy", "hard"):
            move = sgt_move(a.game_id)  # parsed by the collection; its solver may give up on minimal givens
            if move:
                assert P.decode_tatham_solution(a, move) == sol

    def test_minimal_givens(self):
        inst = P.generate("normal", seed=3)
        n = 16
        for r in range(4):
            for c in range(4):
                g = inst.data.given[r][c]
                if g not in (None, 1, n):
                    given = [list(x) for x in inst.data.given]
                    given[r][c] = None
                    other = SignpostData(inst.data.arrows, tuple(map(tuple, given)))
                    from reasonshape.envs.signpost import encode_desc
                    assert not P.solve(P.parse_game_id(f"4x4c:{encode_desc(other)}"), 2).unique

    def test_sgt_backend(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-signpost not installed")
        inst = P.generate("easy", seed=2, backend="sgt")
        assert P.solve(inst, 2).unique and inst.game_id.startswith("3x3:")


class TestText:
    def test_prompt(self):
        text = P.render_prompt(P.parse_game_id(SMALL))
        assert "1:SE  SW\nS     N\nE     6:*" in text
        assert "<answer>" in text and "1-based" in text and "1 to 6" in text

    @pytest.mark.parametrize("body", [
        "1 3\n4 2\n5 6", "13\n42\n56", "```\n1 3\n4 2\n5 6\n```", "1, 3\n4, 2\n5, 6",
        "| 1 | 3 |\n| 4 | 2 |\n| 5 | 6 |",
        "[1, 3]\n[4, 2]\n[5, 6]",
    ])
    def test_parse_variants(self, body):
        ans = P.parse_answer(f"Chain found.\n<answer>\n{body}\n</answer>", P.parse_game_id(SMALL))
        assert ans.value == SMALL_SOL and ans.source == "answer_block"

    def test_multi_digit_and_fallback(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        text = "So the grid is\n" + P.format_answer(inst, sol) + "\nDone."
        ans = P.parse_answer(text, inst)
        assert ans.value == sol and ans.source == "fallback_grid"

    @pytest.mark.parametrize("text,reason", [
        ("nothing", "no answer block"), ("<answer>1 3\n4 2</answer>", "wrong size"),
        ("<answer>1 3\n4 2\n5 7</answer>", "unknown symbol"), ("<answer>1 3\n4 2\n5 x</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, text, reason):
        with pytest.raises(AnswerParseError, match=reason):
            P.parse_answer(text, P.parse_game_id(SMALL))

    def test_one_megabyte_is_linear(self):
        text = "12 " * 333_333 + "<answer>1 3\n4 2\n5 6</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, P.parse_game_id(SMALL)).value == SMALL_SOL
        assert time.perf_counter() - t < 2.0


class TestCheck:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_every_single_cell_corruption_is_rejected(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        assert P.check(inst, sol).ok and P.check(inst, ParsedAnswer(sol)).ok
        n = inst.params.w * inst.params.h
        for r in range(inst.params.h):
            for c in range(inst.params.w):
                for v in range(1, n + 1):
                    if v != sol[r][c]:
                        res = P.check(inst, replace(sol, r, c, v))
                        assert not res.ok and "duplicate" in res.rules and set(res.rules) <= {
                            "duplicate", "given", "arrow"}

    def test_rules_named(self):
        inst = P.parse_game_id(SMALL)
        swapped = ((1, 2), (4, 3), (5, 6))  # 1 SE -> 2? 2 is now at (1,2): not along SE; 3 at (2,2)
        res = P.check(inst, swapped)
        assert res.rules == ("arrow",)
        assert P.check(inst, ((2, 3), (4, 1), (5, 6))).rules[0] == "given"
        assert P.check(inst, ((1, 3), (4, 2), (5, 9))).rules == ("range",)
        assert P.check(inst, ((1, 3),)).rules == ("shape",)

    def test_any_valid_solution_passes(self):
        inst = P.parse_game_id("4x4c:1ecegcefacaagacb16a")  # a dev instance with only 1 and 16 kept: 3 numberings
        res = P.solve(inst, 10)
        assert res.exhausted and len(res.solutions) == 3
        assert all(P.check(inst, s).ok for s in res.solutions)
        assert P.verify_claim(inst, Claim("value", ((1, 1),), 1)) == ClaimLabel.CORRECT

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 1e-3


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ROWS), st.data())
def test_random_permutations_rejected_and_round_trip(row, data):
    inst = P.parse_game_id(row["game_id"])
    sol = P.unique_solution(inst)
    assert P.parse_answer(P.format_answer(inst, sol), inst).value == sol
    w, h = inst.params.w, inst.params.h
    flat = [v for r in sol for v in r]
    perm = data.draw(st.permutations(flat))
    cand = tuple(tuple(perm[r * w:(r + 1) * w]) for r in range(h))
    assert P.check(inst, cand).ok == (cand == sol)  # unique: every other numbering breaks a rule


class TestClaims:
    def test_claims(self):
        inst = P.parse_game_id(SMALL)
        assert P.solution_claims(inst) == {Claim("value", ((1, 2),), 3), Claim("value", ((2, 1),), 4),
                                           Claim("value", ((2, 2),), 2), Claim("value", ((3, 1),), 5)}
        g = P.given_claims(inst)
        assert Claim("arrow", ((1, 1),), "SE") in g and Claim("value", ((3, 2),), 6) in g and len(g) == 7
        assert P.verify_claim(inst, Claim("value", ((2, 2),), 2)) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((2, 2),), 3)) == ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("link", ((1, 1), (2, 2)))) == ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("link", ((2, 2), (1, 1)))) == ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("arrow", ((2, 1),), "S")) == ClaimLabel.CORRECT
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("arrow", ((2, 1),), "UP"))
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("value", ((4, 1),), 1))
        with pytest.raises(ClaimError):
            P.claim_holds(inst, SMALL_SOL, Claim("edge", ((1, 1), (1, 2))))

    @pytest.mark.parametrize("positive", [True, False])
    def test_link_claims_take_no_value(self, positive):
        with pytest.raises(ClaimError, match="take no value, got 2"):
            P.verify_claim(P.parse_game_id(SMALL), Claim("link", ((1, 1), (2, 2)), 2, positive))

    def test_text_round_trip(self):
        inst = P.parse_game_id(SMALL)
        claims = [Claim("arrow", ((1, 1),), "SE"), Claim("arrow", ((2, 1),), "N", False),
                  Claim("link", ((1, 1), (2, 2))), Claim("link", ((2, 2), (1, 1)), None, False)]
        for c in claims:
            text = f"We see that {P.claim_text(c)}."
            assert [f[0] for f in P.parse_claim_text(inst, text)] == [c], text
        assert P.claim_text(Claim("value", ((2, 3),), 7)) == "(2,3) is 7"
        words = P.parse_claim_text(inst, "The arrow at (1,1) points south-east and the arrow in (3,1) points east.")
        assert [f[0] for f in words] == [Claim("arrow", ((1, 1),), "SE"), Claim("arrow", ((3, 1),), "E")]
        short = P.parse_claim_text(inst, "the arrow at (3,1) points E and so on")
        assert [f[0] for f in short] == [Claim("arrow", ((3, 1),), "E")]
        assert "the arrow at (3,1) points E and so on"[short[0][1]:short[0][2]].endswith("points E")


class TestUnits:
    @pytest.mark.parametrize("row", ROWS, ids=[r["game_id"] for r in ROWS])
    def test_units_exact(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        var = P.variables(inst)
        for cell, dom in var.items():
            assert P.solution_value(inst, sol, cell) in dom
        units = P.units(inst)
        n = inst.params.w * inst.params.h
        assert units[0].kind == "alldiff" and len(units[0].variables) == n
        assert len(units) == 1 + n - 1  # one arrow unit per cell but the given end cell
        for u in units:
            vals = tuple(P.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            if u.kind == "alldiff":
                assert not u.allowed((vals[1],) + vals[1:])
            else:
                k = vals[0]
                broken = (k,) + tuple(0 if v == k + 1 else v for v in vals[1:])
                assert not u.allowed(broken), u.name
                assert u.premises[0].kind == "arrow"
