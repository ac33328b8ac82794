"""Tests of the Mosaic (Fill-a-Pix) puzzle (reasonshape/envs/mosaic.py).

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
from reasonshape.envs.mosaic import PUZZLE, MosaicParams, _propagate
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows

ROWS = dev_rows("mosaic")
P = PUZZLE
FLIP = {"#": ".", ".": "#"}


def _id(r):
    return f"{r['level']}-{r['tatham_seed'][:6]}"


@pytest.fixture(scope="module")
def normal():
    row = next(r for r in ROWS if r["level"] == "normal")
    inst = P.parse_game_id(row["game_id"])
    return inst, P.unique_solution(inst)


# ----------------------------------------------------------------------------------------------- params, game IDs
class TestParams:
    def test_forms(self):
        assert P.parse_params("8x6") == MosaicParams(8, 6, True)
        assert P.parse_params("5") == MosaicParams(5, 5, True)
        assert P.parse_params("5x5h0") == MosaicParams(5, 5, False)
        assert P.parse_params("5x5h1") == MosaicParams(5, 5, True)
        # The full form writes h0 only when aggressive generation is off (the default h1 is implied).
        assert P.format_params(MosaicParams(5, 5, False)) == "5x5h0"
        assert P.format_params(MosaicParams(5, 5, False), full=False) == "5x5"
        assert P.format_params(MosaicParams(8, 8, True)) == "8x8"
        assert P.LEVELS == {"trivial": "3x3", "easy": "4x4", "normal": "6x6", "hard": "8x8"}

    @pytest.mark.parametrize("text,pos", [("", 0), ("x3", 0), ("3x3h2", 4), ("3x3q", 3), ("2x3", 0)])
    def test_malformed_params(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert P.encode_desc(inst.data.clues) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_hand_decoded_instance(self):
        # 3x3:4c6c1 -> clue 4 at (1,1), 6 at (2,2), 1 at (3,3); 'c' = 3 cells without a clue.
        inst = P.parse_game_id("3x3:4c6c1")
        assert inst.data.clues == ((4, None, None), (None, 6, None), (None, None, 1))
        # The collection's solve move "sfa00": 0xfa = 11111010 -> cells 1..8, 0x00 -> cell 9 is white.
        sol = P.decode_tatham_solution(inst, "sfa00")
        assert sol == (("#", "#", "#"), ("#", "#", "."), ("#", ".", "."))
        # Clue 4 at (1,1) sees (1,1),(1,2),(2,1),(2,2): all black = 4; clue 1 at (3,3) sees only (2,2) black.
        assert P.unique_solution(inst) == sol

    def test_long_runs(self):
        # Runs of at most 26 clue-less cells use one letter; a longer run is 'z' then the rest.
        clues = [[None] * 6 for _ in range(6)]
        clues[5][5] = 3  # 35 cells without a clue before it: 26 ('z') + 9 ('i')
        assert P.encode_desc(clues) == "zi3"
        assert P.parse_game_id("6x6:zi3").data.clues[5][5] == 3

    @pytest.mark.parametrize("desc,pos", [("4c6c", 4), ("4c6c12", 5), ("4c6C1", 3), ("z", 0)])
    def test_malformed_desc(self, desc, pos):
        # 3x3 needs exactly 9 cells: "4c6c" covers 8 (reported at the end); in "4c6c12" the '2' is the 10th cell;
        # 'C' is not a valid character; 'z' alone is 26 cells.
        with pytest.raises(GameIdError) as e:
            P.parse_desc(P.parse_params("3x3"), desc)
        assert e.value.position == pos

    @settings(max_examples=60, deadline=None)
    @given(cells=st.lists(st.one_of(st.none(), st.integers(0, 9)), min_size=70, max_size=70))
    def test_desc_round_trip_property(self, cells):
        grid = tuple(tuple(cells[r * 10:(r + 1) * 10]) for r in range(7))
        assert P.parse_desc(P.parse_params("10x7"), P.encode_desc(grid)).data.clues == grid

    def test_decode_rejects_bad_move(self):
        inst = P.parse_game_id("3x3:4c6c1")
        for bad in ("sfa", "Sfa00", "sfg00"):
            with pytest.raises(ValueError):
                P.decode_tatham_solution(inst, bad)


# ----------------------------------------------------------------------------------------------- solver
class TestSolve:
    @pytest.mark.parametrize("game_id", ["3x3:4c6c1", "3x3:b4a4d", "3x3:d1d", "3x3:2a2c2a2", "3x3:a4a5e"])
    def test_solver_agrees_with_brute_force(self, game_id):
        inst = P.parse_game_id(game_id)
        brute = {g for g in (tuple(tuple(bits[r * 3:(r + 1) * 3]) for r in range(3))
                             for bits in itertools.product("#.", repeat=9)) if P.check(inst, g).ok}
        res = P.solve(inst, 600)
        assert res.exhausted and set(res.solutions) == brute

    def test_alternative_solutions_pass(self):
        # A single centre clue 1: exactly one black cell anywhere (9 solutions), each accepted by the rules.
        inst = P.parse_game_id("3x3:d1d")
        sols = P.solve(inst, 20).solutions
        assert len(sols) == 9 and all(P.check(inst, s).ok for s in sols)


# ----------------------------------------------------------------------------------------------- generation
class TestGenerate:
    @pytest.mark.parametrize("level", list(envs.LEVEL_NAMES))
    def test_unique_and_deterministic(self, level):
        a = P.generate(level, seed=2)
        assert a.game_id == P.generate(level, seed=2).game_id
        assert P.solve(a, 2).unique
        assert a.game_id.startswith(P.LEVELS[level] + ":")
        assert P.parse_game_id(a.game_id).data == a.data and P.encode_desc(a.data.clues) == a.desc

    def test_clues_hidden_while_deduction_solves(self):
        # Aggressive (default): single-clue deduction colours the whole grid, and hiding any remaining clue stops it.
        inst = P.generate("easy", seed=4)
        clues = [list(row) for row in inst.data.clues]
        grid = _propagate(clues, 4, 4)
        assert tuple(tuple("#" if grid[r * 4 + c] else "." for c in range(4)) for r in range(4)) == \
            P.unique_solution(inst)
        for r in range(4):
            for c in range(4):
                if clues[r][c] is None:
                    continue
                saved, clues[r][c] = clues[r][c], None
                assert _propagate(clues, 4, 4) is None
                clues[r][c] = saved

    @pytest.mark.parametrize("row", ROWS, ids=_id)
    def test_collection_instances_are_deduction_solvable(self, row):
        # The collection keeps only puzzles its single-clue solver finishes; our deduction finishes them too.
        inst = P.parse_game_id(row["game_id"])
        assert _propagate(inst.data.clues, inst.params.h, inst.params.w) is not None

    def test_propagate_by_hand(self):
        # 3x3:4c6c1: the corner 4 sees exactly 4 cells -> all black; then the centre 6 and the corner 1 finish it.
        assert _propagate(((4, None, None), (None, 6, None), (None, None, 1)), 3, 3) == [1, 1, 1, 1, 1, 0, 1, 0, 0]
        assert _propagate(((5, None, None), (None, None, None), (None, None, None)), 3, 3) is None  # 5 > 4 cells
        assert _propagate(((None, None, None), (None, 1, None), (None, None, None)), 3, 3) is None  # stuck

    def test_non_aggressive_keeps_more_clues(self):
        # h0 tries only half of the clues for removal, so at least half of the 16 stay.
        inst = P.generate("4x4h0", seed=4)
        assert inst.game_id.startswith("4x4h0:")
        assert sum(v is not None for row in inst.data.clues for v in row) >= 8

    def test_sgt_backend(self):
        if P.sgt_binary() is None:
            pytest.skip("sgt-mosaic is not installed")
        inst = P.generate("easy", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique and inst.game_id.startswith("4x4:")
        # sgt-mosaic cannot print, so its parser cannot be asked directly; instead our encoder must rewrite the
        # collection's own descs byte for byte (it is the encoder native instances use).
        for seed in range(3):
            other = P.generate("hard", seed=seed, backend="sgt")
            assert P.encode_desc(other.data.clues) == other.desc


# ----------------------------------------------------------------------------------------------- text
class TestText:
    def test_prompt_is_self_contained(self, normal):
        inst, _ = normal
        text = P.render_prompt(inst)
        for needle in ("3x3 square centred on that cell", "itself included", "(row, column)", "top to bottom",
                       "<answer>", "# for a black cell", ". for a white cell"):
            assert needle in text
        for row in inst.data.clues:
            assert " ".join("-" if v is None else str(v) for v in row) in text

    def test_answer_round_trip(self, normal):
        inst, sol = normal
        assert P.parse_answer(f"<answer>\n{P.format_answer(inst, sol)}\n</answer>", inst).value == sol

    def test_prose_fences_commas_and_pipes(self, normal):
        inst, sol = normal
        body = "\n".join("| " + " | ".join(row) + " |" for row in sol)
        assert P.parse_answer(f"Done!\n<answer>\n```\n{body}\n```\n</answer>", inst).value == sol
        commas = "\n".join("[" + ",".join(row) + "]" for row in sol)
        assert P.parse_answer(f"<answer>{commas}</answer>", inst).value == sol

    def test_fallback_grid(self, normal):
        inst, sol = normal
        parsed = P.parse_answer("My final colouring:\n" + P.format_answer(inst, sol), inst)
        assert parsed.source == "fallback_grid" and parsed.value == sol

    @pytest.mark.parametrize("text,reason", [
        ("", "no answer block"),
        ("<answer>\n# . # . # .\n# . # . #\n</answer>", "wrong size"),
        ("<answer>\n" + "\n".join(["# . # . # *"] * 6) + "\n</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, normal, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, normal[0])
        assert reason in str(e.value)

    def test_megabyte_answer_parses_in_linear_time(self, normal):
        inst, sol = normal
        text = ("# . hmm | , " * 90_000)[:1_000_000] + "<answer>\n" + P.format_answer(inst, sol) + "\n</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, inst).value == sol
        assert time.perf_counter() - t < 2.0


# ----------------------------------------------------------------------------------------------- rules
class TestCheck:
    def test_every_single_cell_corruption_is_rejected(self, normal):
        inst, sol = normal
        assert P.check(inst, sol).ok and P.check(inst, ParsedAnswer(sol)).ok
        for r in range(6):
            for c in range(6):
                bad = [list(row) for row in sol]
                bad[r][c] = FLIP[bad[r][c]]
                res = P.check(inst, tuple(map(tuple, bad)))
                assert res.rules == ("clue",)
                assert all((r + 1, c + 1) in v.cells for v in res.violations)  # only clues that see the cell

    def test_rule_detail(self):
        inst = P.parse_game_id("3x3:4c6c1")
        res = P.check(inst, ((".",) * 3,) * 3)
        assert [v.detail for v in res.violations][0] == "the clue 4 at (1,1) sees 0 black cells"
        assert len(res.violations) == 3
        assert P.check(inst, ((".",) * 3,) * 2).rules == ("shape",)

    def test_check_is_fast(self):
        inst = P.parse_game_id(next(r for r in ROWS if r["level"] == "hard")["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.005  # target < 1 ms; generous bound for a loaded machine

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(cells=st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=8))
    def test_random_corruption_is_rejected(self, normal, cells):
        inst, sol = normal
        bad = [list(row) for row in sol]
        for r, c in cells:
            bad[r][c] = FLIP[bad[r][c]]
        assert not P.check(inst, tuple(map(tuple, bad))).ok

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(grid=st.lists(st.lists(st.sampled_from("#."), min_size=6, max_size=6), min_size=6, max_size=6))
    def test_format_parse_round_trip(self, normal, grid):
        inst, _ = normal
        g = tuple(map(tuple, grid))
        assert P.parse_answer("<answer>" + P.format_answer(inst, g) + "</answer>", inst).value == g


# ----------------------------------------------------------------------------------------------- claims
class TestClaims:
    def test_c_star_is_one_claim_per_black_cell(self, normal):
        inst, sol = normal
        assert P.solution_claims(inst) == {Claim("value", ((r + 1, c + 1),), "#") for r in range(6)
                                           for c in range(6) if sol[r][c] == "#"}
        givens = P.given_claims(inst)
        assert len(givens) == sum(v is not None for row in inst.data.clues for v in row)
        assert all(g.kind == "clue" for g in givens)

    def test_verify_claim(self, normal):
        inst, _ = normal
        black = next(iter(P.solution_claims(inst)))
        assert P.verify_claim(inst, black) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", black.cells, ".")) is ClaimLabel.WRONG
        clue = P.given_claims(inst)[0]
        assert P.verify_claim(inst, clue) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("clue", clue.cells, 9)) is ClaimLabel.WRONG
        loose = P.parse_game_id("3x3:d1d")
        assert P.verify_claim(loose, Claim("value", ((2, 2),), "#")) is ClaimLabel.UNVERIFIABLE

    def test_claim_text_round_trip(self, normal):
        inst, _ = normal
        assert P.claim_text(Claim("value", ((3, 4),), "#")) == "(3,4) is black"
        assert P.claim_text(Claim("clue", ((2, 3),), 4)) == "(2,3) has clue 4"
        for claim in P.given_claims(inst) + tuple(c.negated() for c in P.given_claims(inst)):
            text = "Note " + P.claim_text(claim) + "."
            (got, start, end), = P.parse_claim_text(inst, text)
            assert got == claim and text[start:end] == P.claim_text(claim)
        for claim in P.solution_claims(inst):
            m = re.fullmatch(r"\((\d+),(\d+)\) is (\w+)", P.claim_text(claim))
            assert P.VALUE_WORDS[m.group(3)] == claim.value

    @pytest.mark.parametrize("claim", [
        Claim("tent", ((1, 1),), "#"), Claim("value", ((7, 1),), "#"), Claim("value", ((1, 1),), 1),
    ])
    def test_bad_claims_raise(self, normal, claim):
        with pytest.raises(ClaimError):
            P.claim_holds(normal[0], normal[1], claim)


# ----------------------------------------------------------------------------------------------- constraint view
class TestUnits:
    def test_units_are_exact(self, normal):
        inst, sol = normal
        doms = P.variables(inst)
        assert len(doms) == 36 and set(doms.values()) == {("#", ".")}
        givens = set(P.given_claims(inst))
        units = P.units(inst)
        assert len(units) == len(givens)
        for u in units:
            vals = tuple(sol[r - 1][c - 1] for r, c in u.variables)
            assert u.allowed(vals), u.name
            assert not u.allowed((FLIP[vals[0]],) + vals[1:]), u.name
            assert u.premises[0] in givens

    def test_unit_by_hand(self):
        inst = P.parse_game_id("3x3:4c6c1")
        corner = next(u for u in P.units(inst) if u.name == "the clue 4 at (1,1)")
        assert corner.variables == ((1, 1), (1, 2), (2, 1), (2, 2))  # the clipped 3x3 block of a corner
        centre = next(u for u in P.units(inst) if u.name == "the clue 6 at (2,2)")
        assert len(centre.variables) == 9
        assert centre.allowed(tuple("######...")) and not centre.allowed(tuple("#####...."))


def test_instances_and_units_pickle():
    # Workers (TRL reward processes, multiprocessing generation) receive instances and units by pickle.
    inst = P.parse_game_id(ROWS[0]["game_id"])
    again = pickle.loads(pickle.dumps(inst))
    assert again == inst and again.data == inst.data
    sol = P.unique_solution(inst)
    for unit in pickle.loads(pickle.dumps(P.units(inst))):
        assert unit.allowed(tuple(sol[r - 1][c - 1] for r, c in unit.variables))
