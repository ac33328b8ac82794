"""Tests of the Singles (Hitori) puzzle (reasonshape/envs/singles.py).

Dev instances come from tests/data/tatham_dev_instances.jsonl (Simon Tatham's Portable Puzzle Collection, MIT, via
shared/data). Hand-derived values show their arithmetic in comments.
"""

import itertools
import pickle
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonshape import envs
from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs._singles_grade import EASY, TRICKY, grade_solve
from reasonshape.envs.singles import PUZZLE, SinglesParams
from reasonshape.errors import AnswerParseError, ClaimError, ConfigError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_errors

ROWS = dev_rows("singles")
P = PUZZLE
FLIP = {"B": "W", "W": "B"}


def _id(r):
    return f"{r['level']}-{r['tatham_seed'][:6]}"


@pytest.fixture(scope="module")
def normal():
    row = next(r for r in ROWS if r["level"] == "normal")
    inst = P.parse_game_id(row["game_id"])
    return inst, P.unique_solution(inst)


# ----------------------------------------------------------------------------------------------- params, game IDs
class TestParams:
    def test_full_and_short_forms(self):
        assert P.parse_params("5x5dk") == SinglesParams(5, 5, "k")
        assert P.parse_params("6x4de") == SinglesParams(6, 4, "e")
        assert P.parse_params("5x5") == SinglesParams(5, 5, "e")  # no difficulty: easy (collection default)
        assert P.parse_params("7") == SinglesParams(7, 7, "e")
        assert P.format_params(SinglesParams(6, 4, "k")) == "6x4dk"
        assert P.format_params(SinglesParams(6, 4, "k"), full=False) == "6x4"

    def test_levels_table(self):
        assert P.LEVELS == {"trivial": "3x3de", "easy": "4x4de", "normal": "5x5dk", "hard": "6x6dk"}

    @pytest.mark.parametrize("text,pos", [("", 0), ("x5", 0), ("5x5dz", 4), ("5x5dk?", 5), ("1x5", 0),
                                          ("63x2", 0)])
    def test_malformed_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos

    def test_game_id_position(self):
        # "3x3de:" is 6 characters; '0' (not a number 1..3) is desc index 4, game-ID position 10.
        with pytest.raises(GameIdError) as e:
            P.parse_game_id("3x3de:12310")
        assert e.value.position == 10 and "number 1..3" in e.value.expected


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert P.encode_desc(inst.data.nums) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_numbers_past_nine(self):
        # 10 -> 'a', 35 -> 'z', 36 -> 'A' (the collection's n2c); a 10x2 grid allows numbers up to 10.
        inst = P.parse_desc(P.parse_params("10x2de"), "123456789a" * 2)
        assert inst.data.nums[0][9] == 10
        assert P.encode_desc(((10, 35, 36, 61),)) == "azAZ"

    @pytest.mark.parametrize("desc,pos", [("12312312", 8), ("1231231231", 9), ("12341231", 3), ("12 312312", 2)])
    def test_malformed_desc(self, desc, pos):
        # 3x3 needs 9 characters, each a number 1..3.
        with pytest.raises(GameIdError) as e:
            P.parse_desc(P.parse_params("3x3de"), desc)
        assert e.value.position == pos

    @settings(max_examples=60, deadline=None)
    @given(nums=st.lists(st.integers(1, 40), min_size=80, max_size=80))
    def test_desc_round_trip_property(self, nums):
        grid = tuple(tuple(nums[r * 40:(r + 1) * 40]) for r in range(2))
        params = P.parse_params("40x2de")  # numbers up to max(w, h) = 40 use digits, a-z and A-Z
        assert P.parse_desc(params, P.encode_desc(grid)).data.nums == grid

    def test_decode_move(self):
        inst = P.parse_game_id("3x3de:221231322")
        # B<x>,<y>: x is the column. "B2,0" blackens row 1, column 3; C circles (white); E erases, and a cell
        # left erased or never named is an incomplete move (the collection's solve names every cell).
        whites = ";".join(f"C{x},{y}" for y in range(3) for x in range(3) if (x, y) not in ((2, 0), (0, 1)))
        sol = P.decode_tatham_solution(inst, f"S;B2,0;B0,1;E0,1;C0,1;{whites};")
        assert sol == (("W", "W", "B"), ("W", "W", "W"), ("W", "W", "W"))
        with pytest.raises(ConfigError, match="left undecided"):
            P.decode_tatham_solution(inst, f"S;B2,0;B0,1;E0,1;{whites};")
        with pytest.raises(ConfigError, match="left undecided"):
            P.decode_tatham_solution(inst, "S;B2,0;B0,1;")
        with pytest.raises(ValueError):
            P.decode_tatham_solution(inst, "S;X1,1")
        with pytest.raises(ValueError):
            P.decode_tatham_solution(inst, "S;B3,0")


# ----------------------------------------------------------------------------------------------- solver
class TestSolve:
    @pytest.mark.parametrize("desc", ["221231322", "1211", "2112", "334412114434"])
    def test_solver_agrees_with_brute_force(self, desc):
        # Every B/W colouring of a small grid is checked by the rules; CP-SAT (with connectivity cuts) must find
        # exactly the colourings that pass.
        n = len(desc)
        w, h = {9: (3, 3), 4: (2, 2), 12: (4, 3)}[n]
        inst = P.parse_game_id(f"{w}x{h}de:{desc}")
        brute = set()
        for bits in itertools.product("BW", repeat=n):
            g = tuple(tuple(bits[r * w:(r + 1) * w]) for r in range(h))
            if P.check(inst, g).ok:
                brute.add(g)
        res = P.solve(inst, 64)
        assert res.exhausted and set(res.solutions) == brute

    def test_connectivity_is_enforced(self):
        # 2x2 "1212": columns hold 1,1 and 2,2 so one cell of each column is black; the only non-adjacent choices
        # are the two diagonals, which split the whites: no solution.
        res = P.solve(P.parse_game_id("2x2de:1212"), 2)
        assert res.exhausted and res.solutions == ()

    def test_latin_square_is_not_unique(self):
        # No repeated number: all-white is valid and so is blacking out one corner (blacks are never forbidden).
        inst = P.parse_game_id("3x3de:123231312")
        sols = P.solve(inst, 3).solutions
        assert len(sols) == 3 and all(P.check(inst, s).ok for s in sols)
        assert P.check(inst, (("B", "W", "W"), ("W", "W", "W"), ("W", "W", "W"))).ok


# ----------------------------------------------------------------------------------------------- generation
class TestGenerate:
    @pytest.mark.parametrize("level", list(envs.LEVEL_NAMES))
    def test_unique_and_deterministic(self, level):
        a = P.generate(level, seed=5)
        assert a.game_id == P.generate(level, seed=5).game_id
        assert P.solve(a, 2).unique
        assert a.game_id.startswith(P.LEVELS[level] + ":")
        assert P.parse_game_id(a.game_id).data == a.data and P.encode_desc(a.data.nums) == a.desc
        assert any("B" in row for row in P.unique_solution(a))  # C* is never empty

    @pytest.mark.parametrize("level", list(envs.LEVEL_NAMES))
    def test_grade_is_the_collections(self, level):
        inst = P.generate(level, seed=6)
        sol = P.unique_solution(inst)
        grade = EASY if inst.params.diff == "e" else TRICKY
        assert grade_solve(inst.data.nums, grade) == sol
        if grade == TRICKY:
            assert grade_solve(inst.data.nums, EASY, sneaky=True) is None

    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_techniques_reproduce_the_collections_grades(self, row):
        # Easy dev instances are finished by the easy techniques; tricky ones need the tricky techniques and are
        # not finished by the easy ones even after the sneaky step, exactly as the collection generated them.
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        if inst.params.diff == "e":
            assert grade_solve(inst.data.nums, EASY) == sol
        else:
            assert grade_solve(inst.data.nums, TRICKY) == sol
            assert grade_solve(inst.data.nums, EASY, sneaky=True) is None

    def test_techniques_by_hand(self):
        # 3x3 "221 / 231 / 322": the corner cells (1,1), (1,2), (2,1) show 2 2 2 in an L, so its apex (1,1) is
        # black; its neighbours turn white; the white 2 at (1,2) blackens the 2 at (3,2) of its column, whose
        # neighbours turn white; the white (3,3) then has one non-black neighbour left, (2,3), which turns white
        # and blackens the other 1 of column 3, (1,3).
        nums = ((2, 2, 1), (2, 3, 1), (3, 2, 2))
        assert grade_solve(nums, EASY) == (("B", "W", "B"), ("W", "W", "W"), ("W", "B", "W"))
        # A Latin square has several solutions: no technique applies and nothing is decided.
        assert grade_solve(((1, 2, 3), (2, 3, 1), (3, 1, 2)), TRICKY) is None
        # Contradictory numbers (2x2 all 1s would need two adjacent blacks) give None, not an exception.
        assert grade_solve(((1, 1), (1, 1)), TRICKY) is None

    def test_seed_changes_instance(self):
        ids = {P.generate("hard", seed=s).game_id for s in range(3)}
        assert len(ids) == 3

    def test_native_descs_are_accepted_by_the_collection(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-singles is not installed")
        assert 'unexpected characters' in sgt_print_errors(P, "3x3de:221231324")  # the oracle does reject a bad desc
        for level in envs.LEVEL_NAMES:
            game_id = P.generate(level, seed=9).game_id
            assert sgt_print_errors(P, game_id) == "", game_id

    def test_sgt_backend(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-singles is not installed")
        inst = P.generate("easy", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique and inst.game_id.startswith("4x4de:")


# ----------------------------------------------------------------------------------------------- text
class TestText:
    def test_prompt_is_self_contained(self, normal):
        inst, _ = normal
        text = P.render_prompt(inst)
        for needle in ("more than once", "next to each other", "connected", "(row, column)", "top to bottom",
                       "<answer>", "B for a", "W for a white cell"):
            assert needle in text
        for row in inst.data.nums:
            assert " ".join(map(str, row)) in text

    def test_answer_round_trip(self, normal):
        inst, sol = normal
        assert P.parse_answer(f"<answer>\n{P.format_answer(inst, sol)}\n</answer>", inst).value == sol

    def test_prose_fences_commas_pipes_and_case(self, normal):
        inst, sol = normal
        body = "\n".join("| " + " | ".join(row).lower() + " |" for row in sol)
        text = f"Reasoning...\n<answer>\n```text\n{body}\n```\n</answer>\nThanks."
        assert P.parse_answer(text, inst).value == sol
        commas = "\n".join("[" + ", ".join(row) + "]," for row in sol)
        assert P.parse_answer(f"<answer>{commas}</answer>", inst).value == sol
        compact = "\n".join("".join(row) for row in sol)
        assert P.parse_answer(f"<answer>\n{compact}\n</answer>", inst).value == sol

    def test_fallback_grid(self, normal):
        inst, sol = normal
        parsed = P.parse_answer("So the final grid:\n\n" + P.format_answer(inst, sol) + "\n\nDone.", inst)
        assert parsed.source == "fallback_grid" and parsed.value == sol

    @pytest.mark.parametrize("text,reason", [
        ("I give up.", "no answer block"),
        ("<answer>\nB W B W B\nW W W W W\n</answer>", "wrong size"),
        ("<answer>\n" + "\n".join(["B W B W X"] * 5) + "\n</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, normal, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, normal[0])
        assert reason in str(e.value)

    def test_megabyte_answer_parses_in_linear_time(self, normal):
        inst, sol = normal
        text = ("B W think | , " * 80_000)[:1_000_000] + "<answer>\n" + P.format_answer(inst, sol) + "\n</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, inst).value == sol
        assert time.perf_counter() - t < 2.0


# ----------------------------------------------------------------------------------------------- rules
class TestCheck:
    def test_every_single_cell_corruption_is_rejected(self, normal):
        inst, sol = normal
        assert P.check(inst, sol).ok and P.check(inst, ParsedAnswer(sol)).ok
        for r in range(5):
            for c in range(5):
                bad = [list(row) for row in sol]
                bad[r][c] = FLIP[bad[r][c]]
                res = P.check(inst, tuple(map(tuple, bad)))
                assert not res.ok
                if sol[r][c] == "B":  # un-blackening repeats a number in the row or column
                    assert {"row_repeat", "column_repeat"} & set(res.rules)
                else:  # blackening touches another black or cuts the whites
                    assert {"adjacent_black", "white_connected"} & set(res.rules)

    def test_rules_are_named(self):
        inst = P.parse_game_id("3x3de:221231322")
        all_white = (("W",) * 3,) * 3
        assert set(P.check(inst, all_white).rules) == {"row_repeat", "column_repeat"}
        adjacent = (("B", "B", "W"), ("W", "W", "W"), ("W", "W", "W"))
        assert "adjacent_black" in P.check(inst, adjacent).rules
        cut = (("W", "B", "W"), ("B", "W", "W"), ("W", "W", "W"))  # (1,1) is walled off
        res = P.check(inst, cut)
        assert "white_connected" in res.rules
        assert next(v for v in res.violations if v.rule == "white_connected").cells == ((1, 1),)
        assert P.check(inst, (("W", "W"),)).rules == ("shape",)
        assert P.check(inst, (("W", "W", "?"),) * 3).rules == ("shape",)

    def test_check_is_fast(self):
        inst = P.parse_game_id(next(r for r in ROWS if r["level"] == "hard")["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.005  # target < 1 ms; generous bound for a loaded machine

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(cells=st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=6))
    def test_random_corruption_is_rejected(self, normal, cells):
        inst, sol = normal
        bad = [list(row) for row in sol]
        for r, c in cells:
            bad[r][c] = FLIP[bad[r][c]]
        assert not P.check(inst, tuple(map(tuple, bad))).ok

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(grid=st.lists(st.lists(st.sampled_from("BW"), min_size=5, max_size=5), min_size=5, max_size=5))
    def test_format_parse_round_trip(self, normal, grid):
        inst, _ = normal
        g = tuple(map(tuple, grid))
        assert P.parse_answer("<answer>" + P.format_answer(inst, g) + "</answer>", inst).value == g


# ----------------------------------------------------------------------------------------------- claims
class TestClaims:
    def test_c_star_is_one_claim_per_black_cell(self, normal):
        inst, sol = normal
        c_star = P.solution_claims(inst)
        assert c_star == {Claim("value", ((r + 1, c + 1),), "B") for r in range(5) for c in range(5)
                          if sol[r][c] == "B"}
        givens = P.given_claims(inst)
        assert len(givens) == 25 and givens[0] == Claim("number", ((1, 1),), inst.data.nums[0][0])

    def test_verify_claim(self, normal):
        inst, sol = normal
        black = next(c for c in P.solution_claims(inst))
        assert P.verify_claim(inst, black) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", black.cells, "W")) is ClaimLabel.WRONG
        number = Claim("number", ((1, 1),), inst.data.nums[0][0])
        assert P.verify_claim(inst, number) is ClaimLabel.CORRECT
        other = next(n for n in range(1, 10) if n != inst.data.nums[0][0])
        assert P.verify_claim(inst, Claim("number", ((1, 1),), other)) is ClaimLabel.WRONG
        with pytest.raises(ClaimError, match="number claims need a number 1..5, got 99"):  # no number of the grid
            P.verify_claim(inst, Claim("number", ((1, 1),), 99))
        latin = P.parse_game_id("3x3de:123231312")  # several solutions: (1,1) may or may not be black
        assert P.verify_claim(latin, Claim("value", ((1, 1),), "B")) is ClaimLabel.UNVERIFIABLE

    def test_claim_text_round_trip(self, normal):
        inst, _ = normal
        assert P.claim_text(Claim("value", ((3, 4),), "B")) == "(3,4) is black"
        assert P.claim_text(Claim("value", ((3, 4),), "W", False)) == "(3,4) is not white"
        for claim in P.given_claims(inst) + tuple(c.negated() for c in P.given_claims(inst)):
            text = "So " + P.claim_text(claim) + ", hence..."
            (got, start, end), = P.parse_claim_text(inst, text)
            assert got == claim and text[start:end] == P.claim_text(claim)
        # Value claims use the generic "(r,c) is <word>" form with a word of VALUE_WORDS.
        for claim in P.solution_claims(inst):
            m = re.fullmatch(r"\((\d+),(\d+)\) is (\w+)", P.claim_text(claim))
            assert P.VALUE_WORDS[m.group(3)] == claim.value

    @pytest.mark.parametrize("claim", [
        Claim("tent", ((1, 1),), "B"), Claim("value", ((6, 1),), "B"), Claim("value", ((1, 1),), 3),
    ])
    def test_bad_claims_raise(self, normal, claim):
        with pytest.raises(ClaimError):
            P.claim_holds(normal[0], normal[1], claim)


# ----------------------------------------------------------------------------------------------- constraint view
class TestUnits:
    def test_units_are_exact(self, normal):
        inst, sol = normal
        doms = P.variables(inst)
        assert len(doms) == 25 and set(doms.values()) == {("B", "W")}
        givens = set(P.given_claims(inst))
        units = P.units(inst)
        for u in units:
            vals = tuple(sol[r - 1][c - 1] for r, c in u.variables)
            assert u.allowed(vals), u.name
            assert not u.allowed(tuple("W" if len(vals) > 2 else "B" for _ in vals)), u.name
            assert set(u.premises) <= givens
        names = {u.name for u in units}
        assert "cells (1,1) and (1,2)" in names and "cells (1,1) and (2,1)" in names
        # 5x5 has 2 * 5 * 4 = 40 adjacent pairs.
        assert sum(u.name.startswith("cells") for u in units) == 40

    def test_line_unit_by_hand(self):
        inst = P.parse_game_id("3x3de:221231322")
        row1 = next(u for u in P.units(inst) if u.name == "row 1")  # numbers 2 2 1
        assert row1.allowed(("B", "W", "W")) and row1.allowed(("W", "B", "W"))
        assert not row1.allowed(("W", "W", "B"))
        assert [c.value for c in row1.premises] == [2, 2, 1]


def test_instances_and_units_pickle():
    # Workers (TRL reward processes, multiprocessing generation) receive instances and units by pickle.
    inst = P.parse_game_id(ROWS[0]["game_id"])
    again = pickle.loads(pickle.dumps(inst))
    assert again == inst and again.data == inst.data
    sol = P.unique_solution(inst)
    for unit in pickle.loads(pickle.dumps(P.units(inst))):
        assert unit.allowed(tuple(sol[r - 1][c - 1] for r, c in unit.variables))
