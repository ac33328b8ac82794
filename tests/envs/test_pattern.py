"""Tests of the Pattern (nonogram) puzzle (reasonshape/envs/pattern.py).

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
from reasonshape.envs.pattern import PUZZLE, PatternParams, _line_deduce, _line_solve, runs
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_errors

ROWS = dev_rows("pattern")
P = PUZZLE
FLIP = {"#": ".", ".": "#"}


def _id(r):
    return f"{r['level']}-{r['tatham_seed'][:6]}"


@pytest.fixture(scope="module")
def normal():
    row = next(r for r in ROWS if r["level"] == "normal")
    inst = P.parse_game_id(row["game_id"])
    return inst, P.unique_solution(inst)


def test_runs():
    assert runs("##.#..###") == (2, 1, 3)
    assert runs("....") == () and runs("####") == (4,)


# ----------------------------------------------------------------------------------------------- params, game IDs
class TestParams:
    def test_forms(self):
        assert P.parse_params("10x8") == PatternParams(10, 8)
        assert P.parse_params("7") == PatternParams(7, 7)
        # The collection has no difficulty for Pattern: full and short forms coincide.
        assert P.format_params(PatternParams(10, 8)) == P.format_params(PatternParams(10, 8), full=False) == "10x8"
        assert P.LEVELS == {"trivial": "3x3", "easy": "5x5", "normal": "8x8", "hard": "10x10"}

    @pytest.mark.parametrize("text,pos", [("", 0), ("x3", 0), ("3x3d", 3), ("3x", 2), ("0x3", 0)])
    def test_malformed_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        d = inst.data
        assert P.encode_desc(d.cols, d.rows, d.fixed) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_hand_decoded_desc(self):
        # 3x3 "1/2/2//2/3": columns 1, 2, 2; rows (empty), 2, 3. The empty clue is empty text between slashes.
        inst = P.parse_game_id("3x3:1/2/2//2/3")
        assert inst.data.cols == ((1,), (2,), (2,)) and inst.data.rows == ((), (2,), (3,))
        assert P.unique_solution(inst) == ((".", ".", "."), (".", "#", "#"), ("#", "#", "#"))
        # An empty last clue leaves a trailing slash, as the collection writes it.
        assert P.encode_desc(((1,), (1,)), ((1,), ())) == "1/1/1/"
        assert P.parse_game_id("2x2:1/1/1/").data.rows == ((1,), ())

    def test_fixed_cells_section(self):
        # ",cAe": 'c' skips 2 free cells and fixes index 2 empty; 'A' fixes index 3 filled; 'e' skips 4 free
        # cells (4..7) and fixes index 8 empty: 3 + 1 + 5 = 9 cells, exactly the 3x3 grid.
        inst = P.parse_game_id("3x3:1/2/2//2/3,cAe")
        assert inst.data.fixed[0][2] == "." and inst.data.fixed[1][0] == "#" and inst.data.fixed[2][2] == "."
        assert sum(v is not None for row in inst.data.fixed for v in row) == 3
        # A fixed cell that contradicts the clues makes the instance unsolvable: row 2 is ". # #", not "# . .".
        assert P.solve(inst, 2).solutions == ()
        assert P.encode_desc(inst.data.cols, inst.data.rows, inst.data.fixed) == "1/2/2//2/3,cAe"
        assert P.variables(inst)[(2, 1)] == ("#",)
        # C* leaves out fixed cells. ",EAAc": 'E' skips 4 cells and fixes index 4 = (2,2) filled, 'A' fixes (2,3),
        # 'A' fixes (3,1), 'c' skips the last 2 cells (reaching 9, nothing more is fixed).
        ok = P.parse_game_id("3x3:1/2/2//2/3,EAAc")
        assert sum(v == "#" for row in ok.data.fixed for v in row) == 3
        sol = P.unique_solution(ok)
        assert sol == ((".", ".", "."), (".", "#", "#"), ("#", "#", "#"))
        assert P.solution_claims(ok) == {Claim("value", ((3, 2),), "#"), Claim("value", ((3, 3),), "#")}

    @settings(max_examples=60, deadline=None)
    @given(pic=st.lists(st.sampled_from("#."), min_size=35, max_size=35),
           fixed=st.lists(st.sampled_from([None, None, None, "#", "."]), min_size=35, max_size=35))
    def test_desc_round_trip_property(self, pic, fixed):
        # Clues of any 7x5 picture (plus any fixed cells) encode to a desc that parses back to the same data.
        w, h = 7, 5
        grid = [pic[r * w:(r + 1) * w] for r in range(h)]
        cols = tuple(runs([grid[r][c] for r in range(h)]) for c in range(w))
        rows = tuple(runs(row) for row in grid)
        fx = tuple(tuple(fixed[r * w:(r + 1) * w]) for r in range(h))
        data = P.parse_desc(P.parse_params("7x5"), P.encode_desc(cols, rows, fx)).data
        assert (data.cols, data.rows) == (cols, rows)
        assert data.fixed == (fx if any(v is not None for v in fixed) else ((None,) * w,) * h)

    @pytest.mark.parametrize("desc,pos,what", [
        ("1/2/2//2", 8, "more clues"),        # only 5 of 6 clues
        ("1/2/2//2/3/1", 10, "end of the clues"),
        ("1/2/2//4/3", 7, "fit"),             # a run of 4 in a 3-cell row
        ("1/2/2//1.2/3", 9, "fit"),           # 1 + gap + 2 = 4 > 3 cells
        ("1/0/2//2/3", 2, "positive"),
        ("1/2/2//2/3x", 10, "a digit"),
        ("1/2./2//2/3", 4, "run length"),
        ("1/2/2//2/3,cA", 13, "more fixed-cell"),
        ("1/2/2//2/3,c1", 12, "letter"),
        ("1/2/2//2/3,cAea", 14, "end of the description"),
    ])
    def test_malformed_desc(self, desc, pos, what):
        with pytest.raises(GameIdError) as e:
            P.parse_desc(P.parse_params("3x3"), desc)
        assert e.value.position == pos and what in e.value.expected


# ----------------------------------------------------------------------------------------------- solver
class TestSolve:
    def test_solver_agrees_with_brute_force(self):
        # All 2^12 fillings of a 4x3 grid: every clue set the check accepts must be CP-SAT's solution set.
        w, h = 4, 3
        pics = list(itertools.product("#.", repeat=w * h))
        for k in (5, 1234, 2047, 4000):
            pic = [pics[k][r * w:(r + 1) * w] for r in range(h)]
            cols = tuple(runs([pic[r][c] for r in range(h)]) for c in range(w))
            rows = tuple(runs(row) for row in pic)
            inst = P.parse_game_id(f"{w}x{h}:" + P.encode_desc(cols, rows))
            brute = {g for g in (tuple(tuple(p[r * w:(r + 1) * w]) for r in range(h)) for p in pics)
                     if P.check(inst, g).ok}
            res = P.solve(inst, 64)
            assert res.exhausted and set(res.solutions) == brute and tuple(map(tuple, pic)) in brute

    def test_ambiguous_clues(self):
        # 2x2 with every clue 1: the two diagonals are both valid; check accepts either.
        inst = P.parse_game_id("2x2:1/1/1/1")
        res = P.solve(inst, 5)
        assert res.exhausted and len(res.solutions) == 2
        assert P.check(inst, (("#", "."), (".", "#"))).ok and P.check(inst, ((".", "#"), ("#", "."))).ok

    def test_bella_image_example(self):
        # The collection's comment cites 4x4:2/1/2/1/1.1/2/1/1 as unique but beyond a line-at-a-time solver.
        inst = P.parse_game_id("4x4:2/1/2/1/1.1/2/1/1")
        assert P.solve(inst, 2).unique and P.unique_solution(inst)[0][0] == "#"
        assert _line_solve(4, 4, inst.data.cols, inst.data.rows) is None

    def test_line_deduction_by_hand(self):
        # Clue 3 in 5 cells: the middle cell is filled in every arrangement (overlap of ###.. and ..###).
        assert _line_deduce([None] * 5, (3,)) == [None, None, 1, None, None]
        # Clue 2 2 in 5 cells has one arrangement: ##.##.
        assert _line_deduce([None] * 5, (2, 2)) == [1, 1, 0, 1, 1]
        # Clue 1 with the second cell known filled: everything else is empty.
        assert _line_deduce([None, 1, None, None], (1,)) == [0, 1, 0, 0]
        assert _line_deduce([1, 1, None], (1,)) is None  # contradiction
        assert _line_deduce([None, None], ()) == [0, 0]

    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_line_solver_solves_the_collections_instances(self, row):
        # The collection only emits puzzles its line solver can finish; ours must finish them too.
        inst = P.parse_game_id(row["game_id"])
        grid = _line_solve(inst.params.w, inst.params.h, inst.data.cols, inst.data.rows)
        assert tuple(tuple("#" if v else "." for v in r) for r in grid) == P.unique_solution(inst)

    def test_decode_rejects_bad_move(self, normal):
        with pytest.raises(ValueError):
            P.decode_tatham_solution(normal[0], "S0101")


# ----------------------------------------------------------------------------------------------- generation
class TestGenerate:
    @pytest.mark.parametrize("level", list(envs.LEVEL_NAMES))
    def test_unique_and_deterministic(self, level):
        a = P.generate(level, seed=11)
        assert a.game_id == P.generate(level, seed=11).game_id
        assert P.solve(a, 2).unique
        assert a.game_id.startswith(P.LEVELS[level] + ":")
        d = P.parse_game_id(a.game_id).data
        assert d == a.data and P.encode_desc(d.cols, d.rows) == a.desc
        assert _line_solve(a.params.w, a.params.h, d.cols, d.rows) is not None  # line-solvable, as the collection's

    def test_seed_changes_instance(self):
        assert len({P.generate("normal", seed=s).game_id for s in range(3)}) == 3

    def test_native_descs_are_accepted_by_the_collection(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-pattern is not installed")
        assert 'too many' in sgt_print_errors(P, "3x3:1/2/2//2/3/")  # the oracle does reject a bad desc
        for level in envs.LEVEL_NAMES:
            game_id = P.generate(level, seed=9).game_id
            assert sgt_print_errors(P, game_id) == "", game_id

    def test_sgt_backend(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-pattern is not installed")
        inst = P.generate("easy", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique and inst.game_id.startswith("5x5:")


# ----------------------------------------------------------------------------------------------- text
class TestText:
    def test_prompt_is_self_contained(self, normal):
        inst, _ = normal
        text = P.render_prompt(inst)
        for needle in ("blocks of consecutive filled cells", "(row, column)", "top to bottom", "<answer>",
                       "# for a filled cell", ". for an empty cell", "column 1: ", "row 8: "):
            assert needle in text
        d = inst.data
        assert f"column 1: {' '.join(map(str, d.cols[0]))}\n" in text
        assert "row 3: 0" in P.render_prompt(P.parse_game_id("3x3:1/1/1/1/1/"))  # empty clue shown as 0

    def test_fixed_cells_are_rendered(self):
        text = P.render_prompt(P.parse_game_id("3x3:1/2/2//2/3,cAe"))
        assert "? ? .\n# ? ?\n? ? ." in text

    def test_answer_round_trip(self, normal):
        inst, sol = normal
        assert P.parse_answer(f"<answer>\n{P.format_answer(inst, sol)}\n</answer>", inst).value == sol

    def test_prose_fences_commas_and_pipes(self, normal):
        inst, sol = normal
        body = "\n".join("|" + "|".join(row) + "|" for row in sol)
        text = f"Thinking...\n<answer>\nFinal grid:\n```\n{body}\n```\n</answer>"
        assert P.parse_answer(text, inst).value == sol
        commas = "\n".join(", ".join(row) + "," for row in sol)
        assert P.parse_answer(f"<answer>{commas}</answer>", inst).value == sol
        compact = "\n".join("".join(row) for row in sol)
        assert P.parse_answer(f"<think>scratch</think><answer>\n{compact}\n</answer>", inst).value == sol

    def test_fallback_grid(self, normal):
        inst, sol = normal
        parsed = P.parse_answer("The picture is\n" + P.format_answer(inst, sol) + "\nas required.", inst)
        assert parsed.source == "fallback_grid" and parsed.value == sol

    @pytest.mark.parametrize("text,reason", [
        ("nothing", "no answer block"),
        ("<answer>\n# # # # # # # #\n</answer>", "wrong size"),
        ("<answer>\n" + "\n".join(["# . # . # . # O"] * 8) + "\n</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, normal, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, normal[0])
        assert reason in str(e.value)

    def test_megabyte_answer_parses_in_linear_time(self, normal):
        inst, sol = normal
        text = ("# . step | , " * 90_000)[:1_000_000] + "<answer>\n" + P.format_answer(inst, sol) + "\n</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, inst).value == sol
        assert time.perf_counter() - t < 2.0


# ----------------------------------------------------------------------------------------------- rules
class TestCheck:
    def test_every_single_cell_corruption_is_rejected(self, normal):
        inst, sol = normal
        assert P.check(inst, sol).ok and P.check(inst, ParsedAnswer(sol)).ok
        for r in range(8):
            for c in range(8):
                bad = [list(row) for row in sol]
                bad[r][c] = FLIP[bad[r][c]]
                res = P.check(inst, tuple(map(tuple, bad)))
                # One flipped cell changes the runs of its row and of its column.
                assert set(res.rules) == {"row_clue", "column_clue"}
                assert any(v.rule == "row_clue" and (r + 1, 1) in v.cells for v in res.violations)

    def test_rules_are_named(self):
        inst = P.parse_game_id("3x3:1/2/2//2/3,cAe")
        res = P.check(inst, ((".", ".", "."), (".", "#", "#"), ("#", "#", "#")))
        assert res.rules == ("fixed_cell",)  # the clue-correct picture breaks the fixed cell (2,1) = '#'
        assert P.check(inst, (("#",),)).rules == ("shape",)

    def test_check_is_fast(self):
        inst = P.parse_game_id(next(r for r in ROWS if r["level"] == "hard")["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.005  # target < 1 ms; generous bound for a loaded machine

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(cells=st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), min_size=1, max_size=10))
    def test_random_corruption_is_rejected(self, normal, cells):
        inst, sol = normal
        bad = [list(row) for row in sol]
        for r, c in cells:
            bad[r][c] = FLIP[bad[r][c]]
        assert not P.check(inst, tuple(map(tuple, bad))).ok

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(grid=st.lists(st.lists(st.sampled_from("#."), min_size=8, max_size=8), min_size=8, max_size=8))
    def test_format_parse_round_trip(self, normal, grid):
        inst, _ = normal
        g = tuple(map(tuple, grid))
        assert P.parse_answer("<answer>" + P.format_answer(inst, g) + "</answer>", inst).value == g


# ----------------------------------------------------------------------------------------------- claims
class TestClaims:
    def test_c_star_is_one_claim_per_filled_cell(self, normal):
        inst, sol = normal
        assert P.solution_claims(inst) == {Claim("value", ((r + 1, c + 1),), "#") for r in range(8)
                                           for c in range(8) if sol[r][c] == "#"}
        givens = P.given_claims(inst)
        assert len(givens) == 16 and givens[0] == Claim("column_clue", ((1, 1),), inst.data.cols[0])
        assert givens[8] == Claim("row_clue", ((1, 1),), inst.data.rows[0])

    def test_verify_claim(self, normal):
        inst, sol = normal
        filled = next(iter(P.solution_claims(inst)))
        assert P.verify_claim(inst, filled) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", filled.cells, ".")) is ClaimLabel.WRONG
        clue = Claim("row_clue", ((2, 1),), inst.data.rows[1])
        assert P.verify_claim(inst, clue) is ClaimLabel.CORRECT
        other = (8,) if inst.data.rows[1] != (8,) else (7,)
        assert P.verify_claim(inst, Claim("row_clue", ((2, 1),), other)) is ClaimLabel.WRONG
        diag = P.parse_game_id("2x2:1/1/1/1")  # two solutions disagree on (1,1)
        assert P.verify_claim(diag, Claim("value", ((1, 1),), "#")) is ClaimLabel.UNVERIFIABLE

    def test_claim_text_round_trip(self, normal):
        inst, _ = normal
        assert P.claim_text(Claim("value", ((3, 4),), "#")) == "(3,4) is filled"
        assert P.claim_text(Claim("row_clue", ((3, 1),), (2, 1))) == "row 3 has clue 2 1"
        assert P.claim_text(Claim("column_clue", ((1, 2),), (), False)) == "column 2 does not have clue 0"
        claims = P.given_claims(inst) + (Claim("column_clue", ((1, 2),), ()),)
        for claim in claims + tuple(c.negated() for c in claims):
            text = "We know that " + P.claim_text(claim) + "; next."
            (got, start, end), = P.parse_claim_text(inst, text)
            assert got == claim and text[start:end] == P.claim_text(claim)
        for claim in P.solution_claims(inst):
            m = re.fullmatch(r"\((\d+),(\d+)\) is (\w+)", P.claim_text(claim))
            assert P.VALUE_WORDS[m.group(3)] == claim.value

    def test_parse_claim_text_skips_out_of_range(self, normal):
        assert P.parse_claim_text(normal[0], "row 9 has clue 1 and column 0 has clue 2") == []

    @pytest.mark.parametrize("claim", [
        Claim("count", ((1, 1),), 2), Claim("value", ((9, 1),), "#"), Claim("value", ((1, 1),), "T"),
        Claim("row_clue", ((1, 1),), 3),
        # run lengths are integers >= 1 whose runs and gaps fit the line's 8 cells (was: (9,) labelled wrong)
        Claim("row_clue", ((1, 1),), (9,)), Claim("column_clue", ((1, 1),), (4, 4)),
        Claim("row_clue", ((1, 1),), (0,)),
        Claim("row_clue", ((1, 1),), (2, True)), Claim("row_clue", ((1, 1),), ("2",)),
    ])
    def test_bad_claims_raise(self, normal, claim):
        with pytest.raises(ClaimError):
            P.claim_holds(normal[0], normal[1], claim)


# ----------------------------------------------------------------------------------------------- constraint view
class TestUnits:
    def test_units_are_exact(self, normal):
        inst, sol = normal
        doms = P.variables(inst)
        assert len(doms) == 64 and set(doms.values()) == {("#", ".")}
        givens = set(P.given_claims(inst))
        units = P.units(inst)
        assert [u.name for u in units[:1]] == ["row 1"] and units[8].name == "column 1"
        for u in units:
            vals = tuple(sol[r - 1][c - 1] for r, c in u.variables)
            assert u.allowed(vals), u.name
            assert not u.allowed((FLIP[vals[0]],) + vals[1:]), u.name
            assert len(u.premises) == 1 and u.premises[0] in givens

    def test_line_unit_by_hand(self):
        inst = P.parse_game_id("5x1:1/1/1/1/1/2.1")  # one row of 5 cells with clue 2 1
        row = next(u for u in P.units(inst) if u.name == "row 1")
        assert row.allowed(tuple("##.#.")) and row.allowed(tuple(".##.#"))
        assert not row.allowed(tuple("###.#")) and not row.allowed(tuple("#.##."))


def test_instances_and_units_pickle():
    # Workers (TRL reward processes, multiprocessing generation) receive instances and units by pickle.
    inst = P.parse_game_id(ROWS[0]["game_id"])
    again = pickle.loads(pickle.dumps(inst))
    assert again == inst and again.data == inst.data
    sol = P.unique_solution(inst)
    for unit in pickle.loads(pickle.dumps(P.units(inst))):
        assert unit.allowed(tuple(sol[r - 1][c - 1] for r, c in unit.variables))
