"""Tests of reasonshape.envs.solo (Sudoku with rectangular boxes)."""

from __future__ import annotations

import collections
import itertools
import pickle
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonshape.envs import get
from reasonshape.envs.base import LEVEL_NAMES, Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs.solo import PUZZLE, SoloParams, encode_grid
from reasonshape.errors import AnswerParseError, ClaimError, ConfigError, GameIdError
from tests.envs._tatham import dev_rows

ROWS = dev_rows("solo")
# 9x9 dev instance (3x3db) used in several tests.
NORMAL = next(r for r in ROWS if r["level"] == "normal")
# 4x4 grid whose first column is 1,2,3,4 (top to bottom), nothing else given: 288 4x4 sudokus / 4! relabellings
# of the first column = 12 solutions.
TWELVE = "2x2:1c2c3c4c"


@pytest.fixture(scope="module")
def normal():
    inst = PUZZLE.parse_game_id(NORMAL["game_id"])
    return inst, PUZZLE.unique_solution(inst)


class TestParams:
    def test_registered(self):
        assert get("solo") is PUZZLE
        assert pickle.loads(pickle.dumps(PUZZLE)) is PUZZLE

    @pytest.mark.parametrize("text, params", [
        ("3x3db", SoloParams(3, 3, False, "r2", "b")),
        ("2x2", SoloParams(2, 2, False, "r2", "t")),
        ("3", SoloParams(3, 3)),
        ("2x3da", SoloParams(2, 3, False, "r2", "a")),
        ("3x4", SoloParams(3, 4)),
        ("3x3xm4du", SoloParams(3, 3, True, "m4", "u")),
        ("3x3md2a", SoloParams(3, 3, False, "a", "t")),  # the later symmetry wins, as in decode_params
        ("3x3adi", SoloParams(3, 3, False, "a", "i")),
    ])
    def test_parse(self, text, params):
        assert PUZZLE.parse_params(text) == params

    @pytest.mark.parametrize("text, full, short", [
        ("3x3db", "3x3db", "3x3"),
        ("2x2dt", "2x2", "2x2"),  # the collection never writes dt (DIFF_BLOCK is its default)
        ("3x3r2da", "3x3da", "3x3"),  # nor r2
        ("3x3xm4du", "3x3xm4du", "3x3x"),
        ("2x3a", "2x3a", "2x3"),
    ])
    def test_format(self, text, full, short):
        p = PUZZLE.parse_params(text)
        assert PUZZLE.format_params(p) == full
        assert PUZZLE.format_params(p, full=False) == short
        assert PUZZLE.parse_params(full) == p

    @pytest.mark.parametrize("text, pos", [
        ("", 0), ("x3", 0), ("3x3j", 3), ("3x3k", 3), ("3x3dq", 4), ("3x3d", 4), ("3x3q", 3), ("3x3m3", 3),
        ("1x3", 0), ("6x6", 0),
    ])
    def test_bad_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            PUZZLE.parse_params(text)
        assert e.value.position == pos


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:20])
    def test_dev_round_trip_and_solution(self, row):
        inst = PUZZLE.parse_game_id(row["game_id"])
        assert PUZZLE.format_game_id(inst) == row["game_id"]
        # Our own encoder writes the collection's desc for the same grid.
        assert PUZZLE.make_instance(inst.params, inst.data.givens).desc == inst.desc
        res = PUZZLE.solve(inst)
        assert res.unique
        assert res.solutions[0] == PUZZLE.decode_tatham_solution(inst, row["tatham_solve"])

    def test_encode_by_hand(self):
        # 4x4: row 1 = 1 . . 2, then 10 blanks, then 3 4 -> "1" + "b" + "2" + "j" + "3" + "_4"
        grid = ((1, 0, 0, 2), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 3, 4))
        assert encode_grid(grid) == "1b2j3_4"
        assert encode_grid(((0,) * 6,) * 6) == "zj"  # 36 blanks = 26 + 10

    def test_multi_digit_givens(self):
        p = PUZZLE.parse_params("3x4")
        inst = PUZZLE.parse_desc(p, "12_10" + "z" * 5 + "l")  # 2 givens + 5*26 + 12 blanks = 144
        assert inst.data.givens[0][:3] == (12, 10, 0)

    @pytest.mark.parametrize("game_id, pos", [
        ("2x2:b3_1b2b2b1_3", 16),        # 14 cells only
        ("2x2:b3_1b2b2b1_3bz", 17),      # run past the grid
        ("2x2:b5_1b2b2b1_3b", 5),        # 5 > 4
        ("2x2:b3#1b2b2b1_3b", 6),        # invalid character
        ("2x2:0b3_1b2b2b1_3b", 4),       # leading zero is not a number
        ("2x2:b3_1b2b2b1_3b,abc", 17),   # trailing data (jigsaw/killer suffixes unsupported)
    ])
    def test_bad_desc(self, game_id, pos):
        with pytest.raises(GameIdError) as e:
            PUZZLE.parse_game_id(game_id)
        assert e.value.position == pos
        assert "expected" in str(e.value)

    def test_no_colon(self):
        with pytest.raises(GameIdError):
            PUZZLE.parse_game_id("2x2")

    def test_decode_rejects_bad_move(self):
        inst = PUZZLE.parse_game_id(ROWS[0]["game_id"])
        with pytest.raises(ValueError):
            PUZZLE.decode_tatham_solution(inst, "S1,2,3")
        with pytest.raises(ValueError):
            PUZZLE.decode_tatham_solution(inst, "X1")


class TestGenerate:
    @pytest.mark.parametrize("level", LEVEL_NAMES)
    def test_native_unique_deterministic(self, level):
        a = PUZZLE.generate(level, seed=3)
        b = PUZZLE.generate(level, seed=3)
        assert a.game_id == b.game_id
        assert PUZZLE.solve(a).unique
        # the desc we write is the one the collection's encoder writes, and it parses back
        assert PUZZLE.parse_game_id(a.game_id).data.givens == a.data.givens
        assert PUZZLE.format_params(a.params) == PUZZLE.LEVELS[level]

    def test_seeds_differ(self):
        assert PUZZLE.generate("easy", seed=1).desc != PUZZLE.generate("easy", seed=2).desc

    def test_clue_floor(self):
        # 3x3db keeps at least 40% of 81 cells (33 clues); 3x3da is clue-minimal: removing any clue breaks it.
        normal = PUZZLE.generate("normal", seed=0)
        assert sum(v > 0 for row in normal.data.givens for v in row) >= 33
        hard = PUZZLE.generate("2x2ada", seed=0)  # no symmetry: clue orbits are single cells
        g = [list(row) for row in hard.data.givens]
        for y in range(4):
            for x in range(4):
                if g[y][x]:
                    v, g[y][x] = g[y][x], 0
                    assert not PUZZLE.solve(PUZZLE.make_instance(hard.params, g)).unique
                    g[y][x] = v

    def test_symmetry(self):
        inst = PUZZLE.generate("3x3m4db", seed=0)  # 4-way mirror: clues symmetric left-right and up-down
        g = inst.data.givens
        assert all((g[y][x] > 0) == (g[y][8 - x] > 0) == (g[8 - y][x] > 0) for y in range(9) for x in range(9))

    def test_xtype(self):
        inst = PUZZLE.generate("2x2x", seed=0)
        sol = PUZZLE.unique_solution(inst)
        assert sorted(sol[i][i] for i in range(4)) == [1, 2, 3, 4]
        assert sorted(sol[i][3 - i] for i in range(4)) == [1, 2, 3, 4]

    @pytest.mark.skipif(PUZZLE.sgt_binary() is None, reason="sgt-solo (Debian sgt-puzzles) is not installed")
    def test_sgt_backend(self):
        inst = PUZZLE.generate("easy", seed=0, backend="sgt")
        assert PUZZLE.solve(inst).unique
        # the collection's desc equals what our encoder writes for the same grid
        assert encode_grid(inst.data.givens) == inst.desc
        assert inst.game_id.startswith("2x3db:")


class TestText:
    def test_prompt(self, normal):
        inst, _ = normal
        text = PUZZLE.render_prompt(inst)
        for needle in ("<answer>", "(row, column)", "from 1 to 9", "box", "top to bottom", "------+"):
            assert needle in text
        assert PUZZLE._grid_text(inst, inst.data.givens) in text

    def test_prompt_x(self):
        text = PUZZLE.render_prompt(PUZZLE.generate("2x2x", seed=0))
        assert "diagonal" in text

    def test_round_trip(self, normal):
        inst, sol = normal
        ans = PUZZLE.parse_answer(f"<answer>{PUZZLE.format_answer(inst, sol)}</answer>", inst)
        assert ans.value == sol and ans.source == "answer_block"

    def test_wrapped_variants(self, normal):
        inst, sol = normal
        rows = [" ".join(map(str, r)) for r in sol]
        boxed = []
        for i, r in enumerate(sol):
            boxed.append(" | ".join(" ".join(map(str, r[k:k + 3])) for k in (0, 3, 6)))
            if i in (2, 5):
                boxed.append("------+-------+------")
        variants = [
            "I think this is it.\n<answer>\n```\n" + "\n".join(rows) + "\n```\n</answer>\nDone.",
            "<answer>\n" + "\n".join(", ".join(map(str, r)) + "," for r in sol) + "\n</answer>",
            "<answer>\n" + "\n".join("| " + " | ".join(map(str, r)) + " |" for r in sol) + "\n</answer>",
            "<answer>\n" + "\n".join(boxed) + "\n</answer>",
            "<answer>Final grid:\n" + "\n".join("".join(map(str, r)) for r in sol) + "</answer>",
            "<think>" + "\n".join(rows) + "</think><answer>" + "\n".join(rows) + "</answer>",
        ]
        for text in variants:
            assert PUZZLE.parse_answer(text, inst).value == sol, text

    def test_fallback_grid(self, normal):
        inst, sol = normal
        text = "The solution is:\n" + PUZZLE.format_answer(inst, sol) + "\nThat's all."
        ans = PUZZLE.parse_answer(text, inst)
        assert ans.value == sol and ans.source == "fallback_grid" and ans.notes

    @pytest.mark.parametrize("text, reason", [
        ("no grid here", "no answer block"),
        ("<answer>1 2 3 4\n3 4 1 2</answer>", "wrong size"),
        ("<answer>\n1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 x\n</answer>", "unknown symbol"),
        ("<answer>\n1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2\n</answer>", "wrong size"),
    ])
    def test_parse_errors(self, text, reason):
        inst = PUZZLE.parse_game_id(ROWS[0]["game_id"])
        with pytest.raises(AnswerParseError) as e:
            PUZZLE.parse_answer(text, inst)
        assert reason in e.value.reason

    def test_megabyte_answer_is_linear(self, normal):
        inst, sol = normal
        text = "x = (1, 2) ; " * 80_000 + "<answer>" + PUZZLE.format_answer(inst, sol) + "</answer>"
        assert len(text) > 1_000_000
        t = time.perf_counter()
        assert PUZZLE.parse_answer(text, inst).value == sol
        no_block = "1 2 3 4 5 6 7 8 9 |\n" * 60_000  # 1.2 MB of grid-shaped lines, no answer block
        ans = PUZZLE.parse_answer(no_block, inst)
        assert ans.source == "fallback_grid" and not PUZZLE.check(inst, ans).ok
        assert time.perf_counter() - t < 5.0


class TestCheck:
    def test_accepts_solution_and_parsed_answer(self, normal):
        inst, sol = normal
        assert PUZZLE.check(inst, sol).ok
        assert PUZZLE.check(inst, ParsedAnswer(sol)).ok

    def test_every_single_cell_corruption_rejected(self, normal):
        inst, sol = normal
        givens = inst.data.givens
        for y in range(9):
            for x in range(9):
                for v in range(1, 10):
                    if v == sol[y][x]:
                        continue
                    bad = [list(r) for r in sol]
                    bad[y][x] = v
                    res = PUZZLE.check(inst, bad)
                    assert not res.ok
                    # a changed digit repeats in its row, its column and its box
                    assert {"row_repeat", "column_repeat", "box_repeat"} <= set(res.rules)
                    assert ("given_changed" in res.rules) == bool(givens[y][x])
                    assert (y + 1, x + 1) in {c for viol in res.violations for c in viol.cells}

    def test_any_valid_solution_passes(self):
        inst = PUZZLE.parse_game_id(TWELVE)
        res = PUZZLE.solve(inst, max_solutions=20)
        assert len(res.solutions) == 12 and res.exhausted and not res.unique
        assert len(set(res.solutions)) == 12
        assert all(PUZZLE.check(inst, s).ok for s in res.solutions)

    def test_shape_and_range(self, normal):
        inst, sol = normal
        assert PUZZLE.check(inst, sol[:8]).rules == ("shape",)
        assert PUZZLE.check(inst, ("garbage",)).rules == ("shape",)  # a malformed value; text is refused
        with pytest.raises(ConfigError, match="expects a ParsedAnswer or a solution value"):
            PUZZLE.check(inst, "garbage")
        bad = [list(r) for r in sol]
        bad[0][0] = 0
        assert "value_range" in PUZZLE.check(inst, bad).rules

    def test_diagonal_rule(self):
        # A valid plain 4x4 sudoku whose main diagonal repeats (1, 4, 4, 1): fine without X, wrong with X.
        grid = ((1, 2, 3, 4), (3, 4, 1, 2), (2, 1, 4, 3), (4, 3, 2, 1))
        plain = PUZZLE.parse_game_id("2x2:p")
        xinst = PUZZLE.parse_game_id("2x2x:p")
        assert PUZZLE.check(plain, grid).ok
        assert PUZZLE.check(xinst, grid).rules == ("diagonal_repeat",)

    def test_fast(self, normal):
        inst, sol = normal
        t = time.perf_counter()
        for _ in range(200):
            PUZZLE.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.005  # measured ~0.1 ms; bound loose for a loaded machine


class TestClaims:
    def test_cstar_and_given(self, normal):
        inst, sol = normal
        cstar = PUZZLE.solution_claims(inst)
        n_given = sum(v > 0 for r in inst.data.givens for v in r)
        assert len(cstar) == 81 - n_given
        assert all(c.kind == "value" and c.positive for c in cstar)
        given = PUZZLE.given_claims(inst)
        assert len(given) == n_given and not set(given) & cstar
        assert all(PUZZLE.claim_holds(inst, sol, c) for c in cstar | set(given))

    def test_claim_text_and_holds(self, normal):
        inst, sol = normal
        v = sol[2][3]
        assert PUZZLE.claim_text(Claim("value", ((3, 4),), v)) == f"(3,4) is {v}"
        assert PUZZLE.claim_text(Claim("value", ((2, 5),), 3, False)) == "(2,5) is not 3"
        assert PUZZLE.claim_holds(inst, sol, Claim("value", ((3, 4),), v))
        assert not PUZZLE.claim_holds(inst, sol, Claim("value", ((3, 4),), v, False))
        assert PUZZLE.VALUE_WORDS["nine"] == 9

    def test_verify_claim(self, normal):
        inst, sol = normal
        v = sol[0][0]
        assert PUZZLE.verify_claim(inst, Claim("value", ((1, 1),), v)) == ClaimLabel.CORRECT
        assert PUZZLE.verify_claim(inst, Claim("value", ((1, 1),), v % 9 + 1)) == ClaimLabel.WRONG
        assert PUZZLE.verify_claim(inst, Claim("value", ((1, 1),), v % 9 + 1, False)) == ClaimLabel.CORRECT

    def test_verify_claim_non_unique(self):
        inst = PUZZLE.parse_game_id(TWELVE)
        assert PUZZLE.verify_claim(inst, Claim("value", ((2, 1),), 2)) == ClaimLabel.CORRECT  # a given
        # (1,2) is never 1 (1 is given at (1,1)); it is 3 in some solutions, 4 in others
        assert PUZZLE.verify_claim(inst, Claim("value", ((1, 2),), 1)) == ClaimLabel.WRONG
        assert PUZZLE.verify_claim(inst, Claim("value", ((1, 2),), 3)) == ClaimLabel.UNVERIFIABLE

    def test_exact_labels_match_enumeration(self):
        # On a non-unique instance the exact label (two CP-SAT feasibility questions) equals the generic label
        # computed from all 12 enumerated solutions, for every value claim of both polarities.
        from reasonshape.envs.base import Puzzle

        inst = PUZZLE.parse_game_id(TWELVE)
        labels = collections.Counter()
        for r, c, v, pos in itertools.product(range(1, 5), range(1, 5), range(1, 5), (True, False)):
            claim = Claim("value", ((r, c),), v, pos)
            label = PUZZLE.verify_claim(inst, claim)
            assert label == Puzzle.verify_claim(PUZZLE, inst, claim), claim
            labels[label] += 1
        assert set(labels) == {ClaimLabel.CORRECT, ClaimLabel.WRONG, ClaimLabel.UNVERIFIABLE}
        with pytest.raises(ClaimError, match="need a digit 1..4, got 'x'"):  # outside the vocabulary (was: wrong)
            PUZZLE.verify_claim(inst, Claim("value", ((1, 2),), "x"))

    def test_verify_claim_no_solution(self):
        inst = PUZZLE.parse_game_id("2x2:1_1n")  # two 1s in row 1: no solution
        assert PUZZLE.verify_claim(inst, Claim("value", ((1, 3),), 2)) == ClaimLabel.UNVERIFIABLE

    @pytest.mark.parametrize("claim", [
        Claim("tent", ((1, 1),), 1), Claim("value", ((10, 1),), 1), Claim("value", ((0, 1),), 1),
        Claim("value", ((1, 1), (1, 2)), 1),
    ])
    def test_bad_claims(self, normal, claim):
        inst, sol = normal
        with pytest.raises(ClaimError):
            PUZZLE.claim_holds(inst, sol, claim)


class TestUnits:
    def test_units_exact(self, normal):
        inst, sol = normal
        variables = PUZZLE.variables(inst)
        assert len(variables) == 81 and variables[(1, 1)] == tuple(range(1, 10))
        units = PUZZLE.units(inst)
        n_given = sum(v > 0 for r in inst.data.givens for v in r)
        assert len(units) == 27 + n_given
        names = {u.name for u in units}
        assert {"row 3", "column 2", "box 9"} <= names
        for u in units:
            vals = tuple(PUZZLE.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            # each unit rejects a corrupted assignment: a repeated value (alldiff) or another value (given)
            if u.kind == "alldiff":
                corrupt = (vals[1],) + vals[1:]
            else:
                corrupt = (next(d for d in variables[u.variables[0]] if d != vals[0]),)
            assert not u.allowed(corrupt), u.name
        given_units = [u for u in units if u.name.startswith("the given")]
        assert all(len(u.premises) == 1 and u.premises[0] in PUZZLE.given_claims(inst) for u in given_units)
        assert all(u.kind == "alldiff" for u in units if not u.name.startswith("the given"))

    def test_units_define_solutions(self):
        # On the 12-solution grid, the assignments allowed by all units are exactly the solver's solutions.
        import itertools
        inst = PUZZLE.parse_game_id(TWELVE)
        units = PUZZLE.units(inst)
        cells = list(PUZZLE.variables(inst))
        count = 0
        perms = list(itertools.permutations(range(1, 5)))
        # row i starts with its given i+1 (pruning only what the given units would reject anyway)
        rows = [[p for p in perms if p[0] == i + 1] for i in range(4)]
        for grid in itertools.product(*rows):
            value = dict(zip(cells, [v for row in grid for v in row], strict=True))
            if all(u.allowed(tuple(value[c] for c in u.variables)) for u in units):
                count += 1
        assert count == 12


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), data=st.data())
def test_property_round_trips_and_corruption(seed, data):
    inst = PUZZLE.generate("trivial", seed=seed)
    assert PUZZLE.parse_game_id(inst.game_id).data.givens == inst.data.givens
    sol = PUZZLE.unique_solution(inst)
    assert PUZZLE.parse_answer(PUZZLE.format_answer(inst, sol), inst).value == sol
    y, x = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    v = data.draw(st.integers(1, 4).filter(lambda v: v != sol[y][x]))
    bad = [list(r) for r in sol]
    bad[y][x] = v
    assert not PUZZLE.check(inst, bad).ok
