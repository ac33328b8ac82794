"""Tests of the Unruly puzzle (reasonshape/envs/unruly.py).

Dev instances come from tests/data/tatham_dev_instances.jsonl (Simon Tatham's Portable Puzzle Collection, MIT, via
shared/data). Hand-derived values show their arithmetic in comments.
"""

import itertools
import pickle
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonshape import envs
from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs.unruly import _DIFFS, PUZZLE, UnrulyParams, _deduce, _deduce_partial
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_errors

ROWS = dev_rows("unruly")
P = PUZZLE


def _id(r):
    return f"{r['level']}-{r['tatham_seed'][:6]}"


@pytest.fixture(scope="module")
def easy():
    row = next(r for r in ROWS if r["level"] == "easy")
    inst = P.parse_game_id(row["game_id"])
    return inst, P.unique_solution(inst)


# ----------------------------------------------------------------------------------------------- params, game IDs
class TestParams:
    def test_full_and_short_forms(self):
        assert P.parse_params("8x8de") == UnrulyParams(8, 8, False, "e")
        assert P.parse_params("10x6udn") == UnrulyParams(10, 6, True, "n")
        # Short forms: no difficulty means trivial (the collection's default preset), no 'x' means square.
        assert P.parse_params("8x8") == UnrulyParams(8, 8, False, "t")
        assert P.parse_params("6") == UnrulyParams(6, 6, False, "t")
        assert P.format_params(UnrulyParams(10, 6, True, "n")) == "10x6udn"
        assert P.format_params(UnrulyParams(10, 6, True, "n"), full=False) == "10x6u"

    def test_levels_table(self):
        assert P.LEVELS == {"trivial": "6x6dt", "easy": "6x6de", "normal": "8x8de", "hard": "10x10dn"}
        for text in P.LEVELS.values():
            assert P.format_params(P.parse_params(text)) == text

    @pytest.mark.parametrize("text,pos", [
        ("", 0),          # no width
        ("x8", 0),        # no width
        ("8x8dq", 4),     # 'q' is not a difficulty: position of the letter
        ("8x8de!", 5),    # trailing junk after the full form
        ("7x8de", 0),     # odd width
        ("4x4de", 0),     # below 6
    ])
    def test_malformed_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos

    def test_game_id_positions_count_in_the_whole_id(self):
        # "6x6dt:" is 6 characters, so the '!' at desc index 2 is at game-ID position 8.
        with pytest.raises(GameIdError) as e:
            P.parse_game_id("6x6dt:aa!")
        assert e.value.position == 8 and "letter" in e.value.expected
        with pytest.raises(GameIdError) as e:
            P.parse_game_id("6x6dt")
        assert e.value.position == 5


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert P.encode_desc(inst.data.givens) == inst.desc  # our encoder writes the collection's desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_hand_decoded_desc(self):
        # 6x6: 36 cells + terminator = 37 positions. "Ca": 'C' skips 2 cells then a given 1 at index 2;
        # "z" skips 25 (indices 3..27); "i" skips 8 (28..35) then the terminator at 36 places nothing.
        inst = P.parse_game_id("6x6dt:Czi")
        givens = [v for row in inst.data.givens for v in row]
        assert givens[2] == 1 and sum(v is not None for v in givens) == 1
        assert P.encode_desc(inst.data.givens) == "Czi"
        # Fillers take the case of the letter that follows: a run of 30 before a 1 is "Z" + "F" (25 + 5).
        grid = [[None] * 6 for _ in range(6)]
        grid[5][0] = 1  # index 30
        assert P.encode_desc(grid) == "ZFf"  # then 5 empty cells (31..35) before the terminator: 'a' + 5

    @pytest.mark.parametrize("desc,pos", [
        ("zl!", 2),        # invalid character
        ("zk", 2),         # 25 + 11 = 36 positions, one short: reported at the end
        ("zlzz", 2),       # 37 positions reached at index 1; index 2 overflows
    ])
    def test_malformed_desc(self, desc, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_desc(P.parse_params("6x6dt"), desc)
        assert e.value.position == pos


# ----------------------------------------------------------------------------------------------- solver
class TestSolve:
    def test_empty_grid_has_many_solutions(self):
        inst = P.parse_game_id("6x6dt:zl")  # no givens: 25 + 12 = 37 positions
        res = P.solve(inst, 3)
        assert len(res.solutions) == 3 and not res.exhausted and not res.unique
        for sol in res.solutions:
            assert P.check(inst, sol).ok  # any valid solution passes, not only a stored one

    def test_solver_agrees_with_check_by_brute_force(self, easy):
        # Blank 12 cells of the solution (as extra unknowns on top of the instance's givens kept as desc givens),
        # enumerate the 2^12 fillings with check, and compare with CP-SAT's complete enumeration.
        inst, sol = easy
        blanks = [(r, c) for r in range(6) for c in range(6)][::3]  # 12 cells
        givens = [[None if (r, c) in blanks else sol[r][c] for c in range(6)] for r in range(6)]
        sub = P.parse_game_id("6x6de:" + P.encode_desc(givens))
        brute = set()
        for bits in itertools.product((0, 1), repeat=len(blanks)):
            g = [list(row) for row in sol]
            for (r, c), b in zip(blanks, bits, strict=True):
                g[r][c] = b
            g = tuple(tuple(row) for row in g)
            if P.check(sub, g).ok:
                brute.add(g)
        res = P.solve(sub, 100)
        assert res.exhausted and set(res.solutions) == brute and sol in brute

    def test_unique_rows_option(self):
        # With 'u' the solver must never return two equal rows or columns.
        inst = P.parse_game_id("6x6udt:zl")
        for sol in P.solve(inst, 5).solutions:
            assert len(set(sol)) == 6 and len(set(zip(*sol, strict=True))) == 6
            assert P.check(inst, sol).ok

    @settings(max_examples=60, deadline=None)
    @given(cells=st.lists(st.sampled_from([None, None, None, 0, 1]), min_size=64, max_size=64))
    def test_desc_round_trip_property(self, cells):
        # Any grid of givens encodes to a desc that parses back to the same givens (8x8: 65 positions).
        grid = tuple(tuple(cells[r * 8:(r + 1) * 8]) for r in range(8))
        desc = P.encode_desc(grid)
        assert P.parse_desc(P.parse_params("8x8de"), desc).data.givens == grid

    def test_decode_rejects_bad_move(self, easy):
        with pytest.raises(ValueError):
            P.decode_tatham_solution(easy[0], "S0101")


# ----------------------------------------------------------------------------------------------- generation
class TestGenerate:
    @pytest.mark.parametrize("level", list(envs.LEVEL_NAMES))
    def test_unique_and_deterministic(self, level):
        a = P.generate(level, seed=7)
        b = P.generate(level, seed=7)
        assert a.game_id == b.game_id
        assert P.solve(a, 2).unique
        assert P.parse_game_id(a.game_id).data == a.data
        assert P.encode_desc(a.data.givens) == a.desc
        assert a.game_id.startswith(P.LEVELS[level] + ":")

    def test_seed_changes_instance(self):
        assert P.generate("easy", seed=1).game_id != P.generate("easy", seed=2).game_id

    @pytest.mark.parametrize("level", list(envs.LEVEL_NAMES))
    def test_grade_is_the_collections(self, level):
        # Solvable by the deductions of its difficulty letter, and (above trivial) not by the grade below.
        inst = P.generate(level, seed=3)
        grade = _DIFFS.index(inst.params.diff)
        cells = _deduce(inst.params, inst.data.givens, grade)
        sol = P.unique_solution(inst)
        assert cells == [v for row in sol for v in row]
        if grade:
            assert _deduce(inst.params, inst.data.givens, grade - 1) is None

    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_deductions_reproduce_the_collections_grades(self, row):
        # Each dev instance is solved at its own grade and not one grade lower, as the collection generated it.
        inst = P.parse_game_id(row["game_id"])
        grade = _DIFFS.index(inst.params.diff)
        assert _deduce(inst.params, inst.data.givens, grade) is not None
        if grade:
            assert _deduce(inst.params, inst.data.givens, grade - 1) is None

    @pytest.mark.parametrize("row,level,expected", [
        # Trivial: a pair forces the other value on both sides; "1 . 1" forces a 0 between.
        ([None, 1, 1, None, None, None], 0, [0, 1, 1, 0, None, None]),
        ([1, None, 1, None, None, None], 0, [1, 0, 1, None, None, None]),
        # Trivial "single gap": three 1s and two 0s placed, the last cell is a 0.
        ([1, 0, 1, None, 0, 1], 0, [1, 0, 1, 0, 0, 1]),
        # Easy: three 1s placed, the rest are 0s (trivial rules alone cannot do it).
        ([1, 1, 0, None, 1, None], 0, [1, 1, 0, None, 1, None]),
        ([1, 1, 0, None, 1, None], 1, [1, 1, 0, 0, 1, 0]),
        # Normal, the collection's own example: "1 1 0 . . ." needs one 1 and two 0s; a 1 at the end would leave
        # "0 0" after the 0, three 0s in a row, so the last cell is a 0.
        ([1, 1, 0, None, None, None], 1, [1, 1, 0, None, None, None]),
        ([1, 1, 0, None, None, None], 2, [1, 1, 0, None, None, 0]),
    ])
    def test_deductions_by_hand(self, row, level, expected):
        # One 6-cell row on top of an empty 6x6 grid (columns add nothing with a single known row).
        grid = [row] + [[None] * 6 for _ in range(5)]
        assert _deduce_partial(P.parse_params("6x6dt"), grid, level)[:6] == expected

    def test_native_descs_are_accepted_by_the_collection(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-unruly is not installed")
        assert 'Description too long' in sgt_print_errors(P, "6x6dt:zlzz")  # the oracle does reject a bad desc
        for level in envs.LEVEL_NAMES:
            game_id = P.generate(level, seed=9).game_id
            assert sgt_print_errors(P, game_id) == "", game_id

    def test_sgt_backend(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-unruly is not installed")
        inst = P.generate("trivial", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique
        assert P.format_game_id(P.parse_game_id(inst.game_id)) == inst.game_id


# ----------------------------------------------------------------------------------------------- text
class TestText:
    def test_prompt_is_self_contained(self, easy):
        inst, _ = easy
        text = P.render_prompt(inst)
        for needle in ("three", "exactly 3 ones and 3 zeros", "(row, column)", "top to bottom", "<answer>",
                       "1 for a black cell", "0 for a white cell"):
            assert needle in text
        for row in inst.data.givens:  # the grid appears row by row
            assert " ".join("." if v is None else str(v) for v in row) in text

    def test_unique_option_is_explained(self):
        assert "no two rows are identical" in P.render_prompt(P.parse_game_id("6x6udt:zl"))

    def test_answer_round_trip(self, easy):
        inst, sol = easy
        assert P.parse_answer(f"<answer>\n{P.format_answer(inst, sol)}\n</answer>", inst).value == sol

    def test_prose_fences_commas_and_pipes(self, easy):
        inst, sol = easy
        body = "\n".join("| " + ", ".join(map(str, row)) + " |" for row in sol)
        text = f"I reason a lot.\n\nFinal:\n<answer>\n```\n{body}\n```\n</answer>\nDone."
        parsed = P.parse_answer(text, inst)
        assert parsed.value == sol and parsed.source == "answer_block"
        compact = "\n".join("".join(map(str, row)) for row in sol)  # "101100" rows without separators
        assert P.parse_answer(f"<answer>{compact}</answer>", inst).value == sol

    def test_fallback_grid(self, easy):
        inst, sol = easy
        text = "Let me think.\nThe grid is:\n" + P.format_answer(inst, sol) + "\nThat is all."
        parsed = P.parse_answer(text, inst)
        assert parsed.source == "fallback_grid" and parsed.value == sol and parsed.notes

    @pytest.mark.parametrize("text,reason", [
        ("no grid here", "no answer block"),
        ("<answer>1 0 1 0 1 0</answer>", "wrong size"),
        ("<answer>\n" + "\n".join(["1 0 1 0 1 x"] * 6) + "\n</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, easy, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, easy[0])
        assert reason in str(e.value)

    def test_megabyte_answer_parses_in_linear_time(self, easy):
        inst, sol = easy
        answer = "\n<answer>\n" + P.format_answer(inst, sol) + "\n</answer>"
        text = ("reasoning 0 1 | , " * 60_000)[:1_000_000] + answer
        t = time.perf_counter()
        assert P.parse_answer(text, inst).value == sol
        assert time.perf_counter() - t < 2.0


# ----------------------------------------------------------------------------------------------- rules
class TestCheck:
    def test_every_single_cell_corruption_is_rejected(self, easy):
        inst, sol = easy
        assert P.check(inst, sol).ok and P.check(inst, ParsedAnswer(sol)).ok
        for r in range(6):
            for c in range(6):
                bad = [list(row) for row in sol]
                bad[r][c] = 1 - bad[r][c]
                res = P.check(inst, tuple(map(tuple, bad)))
                assert not res.ok
                # Flipping one cell unbalances its row and its column.
                assert {"row_count", "column_count"} <= set(res.rules)

    def test_rules_are_named(self):
        inst = P.parse_game_id("6x6dt:zl")
        grid = ((1, 1, 1, 0, 0, 0),) * 6  # balanced rows but three 1s in a row; columns all-1 or all-0
        res = P.check(inst, grid)
        assert {"three_in_a_row", "column_count"} <= set(res.rules)
        given = P.parse_game_id("6x6dt:Czi")  # (1,3) given as 1
        sol = next(s for s in P.solve(P.parse_game_id("6x6dt:zl"), 20).solutions if s[0][2] == 0)
        assert "given" in P.check(given, sol).rules
        uniq = P.parse_game_id("6x6udt:zl")
        rep = ((0, 0, 1, 1, 0, 1), (1, 1, 0, 0, 1, 0)) * 3  # rows 1, 3, 5 equal
        dup = next(v for v in P.check(uniq, rep).violations if v.rule == "duplicate_rows")
        assert dup.detail == "rows 1 and 3 are identical" and len(dup.cells) == 12 and (3, 6) in dup.cells
        assert P.check(inst, ((0, 1),)).rules == ("shape",)
        assert P.check(inst, tuple((2,) * 6 for _ in range(6))).rules == ("shape",)

    def test_check_is_fast(self):
        inst = P.parse_game_id(next(r for r in ROWS if r["level"] == "hard")["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.005  # target < 1 ms; generous bound for a loaded machine

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(cells=st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=8))
    def test_random_corruption_is_rejected(self, easy, cells):
        inst, sol = easy
        bad = [list(row) for row in sol]
        for r, c in cells:
            bad[r][c] = 1 - bad[r][c]
        assert not P.check(inst, tuple(map(tuple, bad))).ok  # the solution is unique

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(grid=st.lists(st.lists(st.sampled_from([0, 1]), min_size=6, max_size=6), min_size=6, max_size=6))
    def test_format_parse_round_trip(self, easy, grid):
        inst, _ = easy
        g = tuple(map(tuple, grid))
        assert P.parse_answer("<answer>" + P.format_answer(inst, g) + "</answer>", inst).value == g


# ----------------------------------------------------------------------------------------------- claims
class TestClaims:
    def test_c_star_is_one_claim_per_empty_cell(self, easy):
        inst, sol = easy
        c_star = P.solution_claims(inst)
        empties = sum(v is None for row in inst.data.givens for v in row)
        assert len(c_star) == empties
        assert all(c.kind == "value" and c.positive and c.value == sol[c.cells[0][0] - 1][c.cells[0][1] - 1]
                   for c in c_star)
        givens = P.given_claims(inst)
        assert len(givens) == 36 - empties and not set(givens) & c_star

    def test_verify_claim(self, easy):
        inst, sol = easy
        claim = Claim("value", ((1, 1),), sol[0][0])
        assert P.verify_claim(inst, claim) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((1, 1),), 1 - sol[0][0])) is ClaimLabel.WRONG
        assert P.verify_claim(inst, claim.negated()) is ClaimLabel.WRONG
        # The easy dev solution with its first two rows blanked has exactly 4 solutions: a cell on which they
        # disagree is unverifiable, one on which they agree is judged.
        loose = P.parse_game_id("6x6de:mAaAaAAaAaAaaAaaAAAAaAaaa")
        sols = P.solve(loose, 256).solutions
        assert len(sols) == 4
        cells = [(r, c) for r in range(2) for c in range(6)]
        varying = next((r, c) for r, c in cells if len({s[r][c] for s in sols}) == 2)
        claim = Claim("value", ((varying[0] + 1, varying[1] + 1),), 1)
        assert P.verify_claim(loose, claim) is ClaimLabel.UNVERIFIABLE

    def test_claim_text(self):
        assert P.claim_text(Claim("value", ((3, 4),), 1)) == "(3,4) is 1"
        assert P.claim_text(Claim("value", ((2, 5),), 0, False)) == "(2,5) is not 0"
        assert P.value_claim((2, 3), 1) == Claim("value", ((2, 3),), 1)
        assert P.VALUE_WORDS["black"] == 1 and P.VALUE_WORDS["white"] == 0
        assert P.parse_claim_text(None, "(3,4) is 1") == []  # value claims are read by the generic reader

    @pytest.mark.parametrize("claim", [
        Claim("tent", ((1, 1),), 1), Claim("value", ((7, 1),), 1), Claim("value", ((1, 1),), 2),
        Claim("value", ((1, 1), (1, 2)), 1),
    ])
    def test_bad_claims_raise(self, easy, claim):
        with pytest.raises(ClaimError):
            P.claim_holds(easy[0], easy[1], claim)


# ----------------------------------------------------------------------------------------------- constraint view
class TestUnits:
    def test_variables_and_units_are_exact(self, easy):
        inst, sol = easy
        doms = P.variables(inst)
        assert len(doms) == 36
        for (r, c), dom in doms.items():
            g = inst.data.givens[r - 1][c - 1]
            assert dom == ((0, 1) if g is None else (g,))
        units = P.units(inst)
        assert [u.name for u in units[:2]] == ["row 1", "row 2"] and units[6].name == "column 1"
        for u in units:
            vals = tuple(sol[r - 1][c - 1] for r, c in u.variables)
            assert u.allowed(vals), u.name
            # Corrupting one cell of the line unbalances it.
            assert not u.allowed((1 - vals[0],) + vals[1:]), u.name
        # Exactness on a hand example: "110100" is balanced with no triple; "111000" has a triple.
        assert units[0].allowed((1, 1, 0, 1, 0, 0)) and not units[0].allowed((1, 1, 1, 0, 0, 0))

    def test_unique_option_adds_pair_units(self):
        inst = P.parse_game_id("6x6udt:zl")
        pairs = [u for u in P.units(inst) if " and " in u.name]
        assert len(pairs) == 2 * 15  # C(6,2) row pairs + C(6,2) column pairs
        u = next(u for u in pairs if u.name == "rows 1 and 2")
        assert not u.allowed((0, 0, 1, 1, 0, 1) * 2) and u.allowed((0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0))


def test_instances_and_units_pickle():
    # Workers (TRL reward processes, multiprocessing generation) receive instances and units by pickle.
    inst = P.parse_game_id(ROWS[0]["game_id"])
    again = pickle.loads(pickle.dumps(inst))
    assert again == inst and again.data == inst.data
    sol = P.unique_solution(inst)
    for unit in pickle.loads(pickle.dumps(P.units(inst))):
        assert unit.allowed(tuple(sol[r - 1][c - 1] for r, c in unit.variables))
