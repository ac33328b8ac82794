"""Tests of reasonshape.envs.unequal (Futoshiki, with the Adjacent mode)."""

from __future__ import annotations

import itertools
import pickle
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonshape.envs import get
from reasonshape.envs.base import LEVEL_NAMES, Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs.unequal import PUZZLE, D, L, R, U, UnequalParams, encode_desc
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows

ROWS = dev_rows("unequal")
HARD = next(r for r in ROWS if r["level"] == "hard")
# Made by `sgt-unequal --generate 1 5ade` (Debian sgt-puzzles 20230122): an Adjacent-mode game.
ADJ = ("5ade:0D,0,1,0RD,0DL,0U,0RD,0L,0UD,0U,0RD,0UL,0RD,0UL,0,0UD,0RD,0UL,0D,0D,0U,1U,0R,0UL,0U,")
# A 3x3 game with no clues: the 12 Latin squares of order 3. With the one sign "(1,1) > (1,2)": half of them.
EMPTY3 = "3dt:" + "0," * 9
ONE_SIGN = "3dt:0R," + "0," * 8


@pytest.fixture(scope="module")
def hard():
    inst = PUZZLE.parse_game_id(HARD["game_id"])
    return inst, PUZZLE.unique_solution(inst)


def _bars(grid):
    """Adjacent-mode flags of a complete grid, computed independently of the module."""
    n = len(grid)
    flags = [[0] * n for _ in range(n)]
    for y in range(n):
        for x in range(n):
            if x + 1 < n and abs(grid[y][x] - grid[y][x + 1]) == 1:
                flags[y][x] |= R
                flags[y][x + 1] |= L
            if y + 1 < n and abs(grid[y][x] - grid[y + 1][x]) == 1:
                flags[y][x] |= D
                flags[y + 1][x] |= U
    return flags


class TestParams:
    def test_registered(self):
        assert get("unequal") is PUZZLE
        assert pickle.loads(pickle.dumps(PUZZLE)) is PUZZLE

    @pytest.mark.parametrize("text, params, full, short", [
        ("5dk", UnequalParams(5, "k"), "5dk", "5"),
        ("5", UnequalParams(5, "e"), "5de", "5"),  # no 'd': the collection keeps its default, Easy
        ("6dx", UnequalParams(6, "x"), "6dx", "6"),
        ("5adk", UnequalParams(5, "k", True), "5adk", "5a"),
        ("4a", UnequalParams(4, "e", True), "4ade", "4a"),
        ("10dr", UnequalParams(10, "r"), "10dr", "10"),
    ])
    def test_parse_format(self, text, params, full, short):
        p = PUZZLE.parse_params(text)
        assert p == params
        assert PUZZLE.format_params(p) == full
        assert PUZZLE.format_params(p, full=False) == short

    @pytest.mark.parametrize("text, pos", [
        ("", 0), ("d5", 0), ("5dq", 2), ("5d", 2), ("5x", 1), ("5dkx", 3), ("2de", 0), ("33", 0), ("4adk", 0),
    ])
    def test_bad_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            PUZZLE.parse_params(text)
        assert e.value.position == pos


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:16])
    def test_dev_round_trip_and_solution(self, row):
        inst = PUZZLE.parse_game_id(row["game_id"])
        assert PUZZLE.format_game_id(inst) == row["game_id"]
        assert encode_desc(inst.data.nums, inst.data.flags) == inst.desc
        res = PUZZLE.solve(inst)
        assert res.unique
        assert res.solutions[0] == PUZZLE.decode_tatham_solution(inst, row["tatham_solve"])

    def test_flags_by_hand(self):
        # 4de dev game: cell (1,3) has D, so (1,3) > (2,3); (4,3) has R and L: greater than both row neighbours.
        inst = PUZZLE.parse_game_id("4de:0,3,0D,0,0U,0,0D,0,0,0,0,0,0,0,0RL,0,")
        pairs = set(inst.data.greater_pairs())
        assert ((0, 2), (1, 2)) in pairs and ((3, 2), (3, 3)) in pairs and ((3, 2), (3, 1)) in pairs
        assert ((1, 0), (0, 0)) in pairs  # U on (2,1): greater than the cell above
        assert len(pairs) == 5 and inst.data.nums[0][1] == 3

    def test_letter_skips(self):
        # load_game accepts a run of lower-case letters before an entry: skip that many blank cells.
        a = PUZZLE.parse_game_id("3dt:1,c2,0,0,0,0,")
        assert a.data.nums == ((1, 0, 0), (0, 2, 0), (0, 0, 0))

    def test_decode_order_ten(self):
        inst = PUZZLE.parse_game_id("10de:" + "0," * 100)
        grid = tuple(tuple((x + y) % 10 + 1 for x in range(10)) for y in range(10))
        move = "S" + "".join(str(v - 1) for row in grid for v in row)  # order >= 10: '0' = 1 ... '9' = 10
        assert PUZZLE.decode_tatham_solution(inst, move) == grid
        assert PUZZLE.check(inst, grid).ok
        with pytest.raises(ValueError):
            PUZZLE.decode_tatham_solution(inst, move[:-1])

    @pytest.mark.parametrize("game_id, pos, what", [
        ("3dt:1,0,2,0,0,0,0,0", 19, "separator"),
        ("3dt:1,0,2,0,0,0,0,0,1,0,", 22, "too much"),
        ("3dt:1,0,5,0,0,0,0,0,0,", 8, "out-of-range"),
        ("3dt:1,X,2,0,0,0,0,0,0,", 6, "a number"),  # (lower-case letters are skips)
        ("3dt:1;0,2,0,0,0,0,0,0,", 5, "separator"),
        ("3dt:1U,0,2,0,0,0,0,0,0,", 4, "off the grid"),
        ("3dt:1R,0L,2,0,0,0,0,0,0,", 4, "greater than the other"),
        ("3adt:0R,0,0,0,0,0,0,0,0,", 5, "bars"),
    ])
    def test_bad_desc(self, game_id, pos, what):
        with pytest.raises(GameIdError) as e:
            PUZZLE.parse_game_id(game_id)
        assert e.value.position == pos
        assert what in str(e.value)


class TestGenerate:
    @pytest.mark.parametrize("level", LEVEL_NAMES)
    def test_native_unique_deterministic(self, level):
        a = PUZZLE.generate(level, seed=5)
        b = PUZZLE.generate(level, seed=5)
        assert a.game_id == b.game_id
        assert PUZZLE.solve(a).unique
        assert PUZZLE.format_params(a.params) == PUZZLE.LEVELS[level]
        assert PUZZLE.parse_game_id(a.game_id).data == a.data

    def test_density_falls_with_level(self):
        def clues(inst):
            return sum(v > 0 for r in inst.data.nums for v in r) + len(inst.data.greater_pairs())

        # floors: 3dt keeps >= 45% of its 9 numbers + 12 signs, 4de >= 30% of 16 + 24
        assert clues(PUZZLE.generate("trivial", seed=0)) >= 0.45 * 21
        assert clues(PUZZLE.generate("easy", seed=0)) >= 0.3 * 40

    def test_minimal_when_no_floor(self):
        inst = PUZZLE.generate("4dx", seed=1)
        nums = [list(r) for r in inst.data.nums]
        for y, x in itertools.product(range(4), range(4)):
            if nums[y][x]:
                v, nums[y][x] = nums[y][x], 0
                assert not PUZZLE.solve(PUZZLE.make_instance(inst.params, nums, inst.data.flags)).unique
                nums[y][x] = v

    def test_adjacent_mode(self):
        inst = PUZZLE.generate("5ade", seed=0)
        sol = PUZZLE.unique_solution(inst)
        assert [list(r) for r in inst.data.flags] == _bars(sol)

    @pytest.mark.skipif(PUZZLE.sgt_binary() is None, reason="sgt-unequal (Debian sgt-puzzles) is not installed")
    def test_sgt_backend(self):
        inst = PUZZLE.generate("normal", seed=0, backend="sgt")
        assert PUZZLE.solve(inst).unique
        assert encode_desc(inst.data.nums, inst.data.flags) == inst.desc
        assert inst.game_id.startswith("5dk:")


class TestText:
    def test_prompt(self, hard):
        inst, _ = hard
        text = PUZZLE.render_prompt(inst)
        for needle in ("<answer>", "(row, column)", "from 1 to 6", "∨", "∧", " > ", " < "):
            assert needle in text, needle
        assert PUZZLE._grid_text(inst) in text

    def test_prompt_signs_by_hand(self):
        inst = PUZZLE.parse_game_id("3dt:0R,0,0,0,0,0D,0,0,0,")  # (1,1) > (1,2); (2,3) > (3,3)
        assert PUZZLE._grid_text(inst) == ". > .   .\n\n.   .   .\n        ∨\n.   .   ."

    def test_prompt_adjacent(self):
        text = PUZZLE.render_prompt(PUZZLE.parse_game_id(ADJ))
        assert "differ by exactly 1" in text and "|" in text

    def test_round_trip(self, hard):
        inst, sol = hard
        assert PUZZLE.parse_answer(f"<answer>{PUZZLE.format_answer(inst, sol)}</answer>", inst).value == sol

    def test_copied_signs_are_ignored(self, hard):
        inst, sol = hard
        n = 6
        lines = []
        for y in range(n):
            lines.append("   ".join(str(v) for v in sol[y]).replace("   ", " > ", 1))
            if y + 1 < n:
                lines.append("    ∨       ^   v")
        text = "Here it is:\n<answer>\n" + "\n".join(lines) + "\n</answer>"
        assert PUZZLE.parse_answer(text, inst).value == sol

    def test_wrapped_variants(self, hard):
        inst, sol = hard
        rows = [" ".join(map(str, r)) for r in sol]
        for text in (
            "prose\n<answer>\n```\n" + "\n".join(rows) + "\n```\n</answer>",
            "<answer>" + "\n".join("|" + ",".join(map(str, r)) + "|," for r in sol) + "</answer>",
            "<answer>\n" + "\n".join("".join(map(str, r)) for r in sol) + "\n</answer>",
        ):
            assert PUZZLE.parse_answer(text, inst).value == sol

    def test_fallback_grid_with_signs(self, hard):
        inst, sol = hard
        body = "\n      \n".join("   ".join(map(str, r)) for r in sol)  # blank spacer rows, as reasoning-gym
        ans = PUZZLE.parse_answer("The final grid:\n" + body + "\nthat is all", inst)
        assert ans.value == sol and ans.source == "fallback_grid"

    @pytest.mark.parametrize("text, reason", [
        ("nothing", "no answer block"),
        ("<answer>1 2 3\n2 3 1</answer>", "wrong size"),
        ("<answer>1 2 3\n2 3 1\n3 1 4</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, text, reason):
        inst = PUZZLE.parse_game_id(EMPTY3)
        with pytest.raises(AnswerParseError) as e:
            PUZZLE.parse_answer(text, inst)
        assert reason in e.value.reason

    def test_megabyte_answer_is_linear(self, hard):
        inst, sol = hard
        text = "(1,2) > (1,3) so ∨ <" * 60_000 + "\n<answer>" + PUZZLE.format_answer(inst, sol) + "</answer>"
        assert len(text) > 1_000_000
        t = time.perf_counter()
        assert PUZZLE.parse_answer(text, inst).value == sol
        with pytest.raises(AnswerParseError):
            PUZZLE.parse_answer(text.replace("<answer>", "").replace("</answer>", "")[:1_000_000], inst)
        assert time.perf_counter() - t < 5.0


class TestCheck:
    def test_every_single_cell_corruption_rejected(self, hard):
        inst, sol = hard
        assert PUZZLE.check(inst, sol).ok and PUZZLE.check(inst, ParsedAnswer(sol)).ok
        for y, x in itertools.product(range(6), range(6)):
            for v in range(1, 7):
                if v == sol[y][x]:
                    continue
                bad = [list(r) for r in sol]
                bad[y][x] = v
                res = PUZZLE.check(inst, bad)
                assert not res.ok
                assert {"row_repeat", "column_repeat"} <= set(res.rules)
                assert ("given_changed" in res.rules) == bool(inst.data.nums[y][x])

    def test_sign_rule(self):
        inst = PUZZLE.parse_game_id(ONE_SIGN)
        res = PUZZLE.check(inst, ((1, 2, 3), (2, 3, 1), (3, 1, 2)))  # 1 > 2 is false
        assert res.rules == ("inequality",) and res.violations[0].cells == ((1, 1), (1, 2))
        assert PUZZLE.check(inst, ((2, 1, 3), (3, 2, 1), (1, 3, 2))).ok

    def test_any_valid_solution_passes(self):
        inst = PUZZLE.parse_game_id(EMPTY3)
        res = PUZZLE.solve(inst, max_solutions=20)
        assert len(res.solutions) == 12 and res.exhausted  # 12 Latin squares of order 3
        one = PUZZLE.solve(PUZZLE.parse_game_id(ONE_SIGN), max_solutions=20)
        assert len(one.solutions) == 6 and one.exhausted  # a > b in half of them, by swapping symbols
        assert all(PUZZLE.check(inst, s).ok for s in res.solutions)

    def test_adjacency_rule(self):
        grid = ((1, 2, 3), (2, 3, 1), (3, 1, 2))
        with_bars = PUZZLE.make_instance(PUZZLE.parse_params("3adt"), [[0] * 3] * 3, _bars(grid))
        assert PUZZLE.check(with_bars, grid).ok
        no_bars = PUZZLE.parse_game_id("3adt:" + "0," * 9)
        res = PUZZLE.check(no_bars, grid)
        assert res.rules == ("adjacency",)
        # pairs differing by 1: row1 (1,2),(2,3); row2 (2,3); row3 (1,2); columns: 1-2, 2-3 | 2-3 | 1-2 -> 8
        assert len(res.violations) == 8

    def test_adjacent_dev_corruption(self):
        inst = PUZZLE.parse_game_id(ADJ)
        sol = PUZZLE.unique_solution(inst)
        assert PUZZLE.check(inst, sol).ok
        bad = [list(r) for r in sol]
        bad[0][0], bad[0][1] = bad[0][1], bad[0][0]  # a swap keeps rows Latin, breaks columns/bars
        assert not PUZZLE.check(inst, bad).ok

    def test_shape(self):
        inst = PUZZLE.parse_game_id(EMPTY3)
        assert PUZZLE.check(inst, ((1, 2),)).rules == ("shape",)
        assert "value_range" in PUZZLE.check(inst, ((1, 2, 3), (2, 3, 1), (3, 1, "2"))).rules

    def test_fast(self, hard):
        inst, sol = hard
        t = time.perf_counter()
        for _ in range(200):
            PUZZLE.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.005


class TestClaims:
    def test_cstar_given(self, hard):
        inst, sol = hard
        cstar = PUZZLE.solution_claims(inst)
        n_num = sum(v > 0 for r in inst.data.nums for v in r)
        assert len(cstar) == 36 - n_num
        given = PUZZLE.given_claims(inst)
        assert sum(c.kind == "greater" for c in given) == len(inst.data.greater_pairs())
        assert all(PUZZLE.claim_holds(inst, sol, c) for c in set(given) | cstar)

    def test_claim_text_parse_round_trip(self, hard):
        inst, sol = hard
        claims = list(PUZZLE.given_claims(inst)) + [c.negated() for c in PUZZLE.given_claims(inst)]
        claims.append(Claim("adjacent", ((1, 1), (1, 2)), None, False))
        for c in claims:
            text = PUZZLE.claim_text(c)
            if c.kind == "value":
                continue  # read by the generic "(r,c) is v" patterns
            got = PUZZLE.parse_claim_text(inst, f"So {text}.")
            assert [g[0] for g in got] == [c], text
            assert got[0][1] == 3 and got[0][2] == 3 + len(text)

    @pytest.mark.parametrize("text, claim", [
        ("(1,2) < (1,3)", Claim("greater", ((1, 3), (1, 2)))),
        ("(2, 2) > (2,1)", Claim("greater", ((2, 2), (2, 1)))),
        ("(2,2) is less than (2,1)", Claim("greater", ((2, 1), (2, 2)))),
        ("(3,1) is not greater than (3,2)", Claim("greater", ((3, 1), (3, 2)), None, False)),
        ("(3,1) is not smaller than (3,2)", Claim("greater", ((3, 2), (3, 1)), None, False)),
        ("(1,2) and (1,3) are consecutive", Claim("adjacent", ((1, 2), (1, 3)))),
        ("(1,3) and (1,2) are not consecutive", Claim("adjacent", ((1, 2), (1, 3)), None, False)),
    ])
    def test_parse_claim_variants(self, hard, text, claim):
        inst, _ = hard
        assert [g[0] for g in PUZZLE.parse_claim_text(inst, text)] == [claim]

    def test_parse_claim_skips_off_grid(self, hard):
        inst, _ = hard
        assert PUZZLE.parse_claim_text(inst, "(7,1) > (1,1) and (1,1) < (1,1)") == []
        big = "(1,2) > (1,3); " * 70_000  # ~1 MB
        t = time.perf_counter()
        assert len(PUZZLE.parse_claim_text(inst, big)) == 70_000
        assert time.perf_counter() - t < 5.0

    def test_verify_claim(self, hard):
        inst, sol = hard
        a, b = (1, 1), (1, 2)
        big, small = (a, b) if sol[0][0] > sol[0][1] else (b, a)
        assert PUZZLE.verify_claim(inst, Claim("greater", (big, small))) == ClaimLabel.CORRECT
        assert PUZZLE.verify_claim(inst, Claim("greater", (small, big))) == ClaimLabel.WRONG
        assert PUZZLE.verify_claim(inst, Claim("value", ((1, 1),), sol[0][0])) == ClaimLabel.CORRECT
        non_unique = PUZZLE.parse_game_id(ONE_SIGN)
        assert PUZZLE.verify_claim(non_unique, Claim("greater", ((1, 1), (1, 2)))) == ClaimLabel.CORRECT
        assert PUZZLE.verify_claim(non_unique, Claim("value", ((1, 1),), 1)) == ClaimLabel.WRONG
        assert PUZZLE.verify_claim(non_unique, Claim("value", ((1, 1),), 3)) == ClaimLabel.UNVERIFIABLE

    def test_exact_labels_match_enumeration(self):
        # Non-unique instances: the exact labels agree with the generic enumeration of all solutions, for value,
        # greater (also between cells that are not neighbours) and adjacent claims of both polarities.
        from reasonshape.envs.base import Puzzle

        grid = ((1, 2, 3, 4), (2, 1, 4, 3), (3, 4, 1, 2), (4, 3, 2, 1))
        adjacent = PUZZLE.make_instance(PUZZLE.parse_params("4ade"), [[0] * 4] * 4, _bars(grid))
        for inst in (PUZZLE.parse_game_id(ONE_SIGN), adjacent):
            n = inst.params.order
            assert not PUZZLE.solve(inst, 2).unique
            cells = list(itertools.product(range(1, n + 1), repeat=2))
            claims = [Claim("value", (c,), v, pos)
                      for c in cells[::3] for v in range(1, n + 1) for pos in (True, False)]
            claims += [Claim(kind, (a, b), None, pos) for a in cells[:2] for b in cells[::2] if a != b
                       for kind in ("greater", "adjacent") for pos in (True, False)]
            seen = set()
            for claim in claims:
                label = PUZZLE.verify_claim(inst, claim)
                assert label == Puzzle.verify_claim(PUZZLE, inst, claim), claim
                seen.add(label)
            assert seen == {ClaimLabel.CORRECT, ClaimLabel.WRONG, ClaimLabel.UNVERIFIABLE}

    @pytest.mark.parametrize("claim", [
        Claim("tent", ((1, 1),)), Claim("greater", ((1, 1),)), Claim("greater", ((1, 1), (1, 1))),
        Claim("greater", ((1, 1), (9, 1))), Claim("value", ((1, 1), (1, 2)), 1),
    ])
    def test_bad_claims(self, hard, claim):
        inst, sol = hard
        with pytest.raises(ClaimError):
            PUZZLE.claim_holds(inst, sol, claim)


    @pytest.mark.parametrize("kind", ["greater", "adjacent"])
    @pytest.mark.parametrize("positive", [True, False])
    def test_two_cell_claims_take_no_value(self, hard, kind, positive):
        inst, _ = hard
        with pytest.raises(ClaimError, match="take no value, got 3"):
            PUZZLE.verify_claim(inst, Claim(kind, ((1, 1), (1, 2)), 3, positive))

class TestUnits:
    @pytest.mark.parametrize("game_id", [HARD["game_id"], ADJ])
    def test_units_exact(self, game_id):
        inst = PUZZLE.parse_game_id(game_id)
        sol = PUZZLE.unique_solution(inst)
        n = inst.params.order
        variables = PUZZLE.variables(inst)
        assert len(variables) == n * n
        units = PUZZLE.units(inst)
        assert len(units) == 2 * n + len(PUZZLE.given_claims(inst))
        for u in units:
            vals = tuple(PUZZLE.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            if u.kind == "alldiff":
                corrupt = (vals[1],) + vals[1:]
            elif u.name.startswith("the given"):
                corrupt = (vals[0] % n + 1,)
            elif u.name.startswith("the clue"):
                corrupt = (vals[1], vals[0])
            elif u.name.startswith("the bar"):
                corrupt = (vals[0], vals[0])
            else:  # no bar: make them consecutive
                corrupt = (vals[0], vals[0] + 1 if vals[0] < n else vals[0] - 1)
            assert not u.allowed(corrupt), u.name
            assert u.kind == "alldiff" or len(u.premises) == 1

    def test_unit_names(self):
        inst = PUZZLE.parse_game_id("3dt:2R,0,0,0,0,0,0,0,0,")
        names = [u.name for u in PUZZLE.units(inst)]
        assert names == ["row 1", "row 2", "row 3", "column 1", "column 2", "column 3", "the given 2 at (1,1)",
                         "the clue (1,1) > (1,2)"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), data=st.data())
def test_property_round_trips_and_corruption(seed, data):
    inst = PUZZLE.generate("easy", seed=seed)
    again = PUZZLE.parse_game_id(inst.game_id)
    assert again.data == inst.data and PUZZLE.format_game_id(again) == inst.game_id
    sol = PUZZLE.unique_solution(inst)
    assert PUZZLE.parse_answer(PUZZLE.format_answer(inst, sol), inst).value == sol
    y, x = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    v = data.draw(st.integers(1, 4).filter(lambda v: v != sol[y][x]))
    bad = [list(r) for r in sol]
    bad[y][x] = v
    assert not PUZZLE.check(inst, bad).ok
