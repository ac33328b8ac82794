"""Light Up: game IDs, solver vs the collection's solutions, generation, prompt, answers, rules, claims, units.

Instances come from tests/data/tatham_dev_instances.jsonl (Simon Tatham's Portable Puzzle Collection, MIT).
"""

import itertools
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs.lightup import PUZZLE as P
from reasonshape.envs.lightup import LightupParams, _encode_desc, _orbit
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_full_params, sgt_print_accepts

ROWS = dev_rows("lightup")
SMALL = "3x3b20s0d0:g3a"  # dev instance: 7 white cells, the 3 at (3,2), a white (3,3); S;L0,2;L1,1;L2,2
SMALL_SOL = ((".", ".", "."), (".", "L", "."), ("L", "3", "L"))  # lights at x,y
SMALL_TEXT = ". . .\n. L .\nL 3 L"
EASY = "5x5b20s4d0:fBa3g3a0f"  # dev instance with B, 3, 3 and 0


@pytest.fixture(scope="module")
def generated():
    return {lvl: P.generate(lvl, seed=5) for lvl in P.LEVELS}


class TestParams:
    def test_full_and_short_forms(self):
        assert P.parse_params("7x7b20s4d1") == LightupParams(7, 7, 20, 4, 1)
        assert P.parse_params("10x6") == LightupParams(10, 6, 20, 2, 0)
        assert P.parse_params("5") == LightupParams(5, 7, 20, 2, 0)  # lightup.c: height keeps its default 7
        assert P.parse_params("7x7r") == LightupParams(7, 7, 20, 4, 2)  # legacy 'r' = hard
        assert P.parse_params("7x7b30") == LightupParams(7, 7, 30, 4, 0)  # a square grid keeps the default s4
        assert P.parse_params("7x7") == LightupParams(7, 7, 20, 4, 0)
        assert P.format_params(LightupParams(10, 6, 25, 1, 2)) == "10x6b25s1d2"
        assert P.format_params(LightupParams(10, 6, 25, 1, 2), full=False) == "10x6"

    @pytest.mark.parametrize("text,pos", [("", 0), ("x7", 0), ("7x", 2), ("7x7b4s0d0", 4), ("7x7b20s5d0", 7),
                                          ("7x5b20s4d0", 7), ("7x7b20s2d3", 9), ("1x7", 0), ("7x7q", 3),
                                          ("7x7d0s2", 5)])
    def test_malformed_params_name_position(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"])
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert _encode_desc(inst.data.cells) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_parsed_content(self):
        inst = P.parse_game_id(EASY)
        # f = 6 whites, B at 6 = (2,2), a, 3 at 8 = (2,4), g = 7 whites, 3 at 16 = (4,2), a, 0 at 18 = (4,4), f
        assert inst.data.cells[1] == (".", "#", ".", "3", ".")
        assert inst.data.cells[3] == (".", "3", ".", "0", ".")
        # segments: row 2 splits into (2,1), (2,3), (2,5); a full row is one segment
        segs = {s for s in inst.data.segments if len(s) == 5}
        assert ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4)) in segs

    def test_runs_longer_than_26(self):
        cells = tuple(tuple("." for _ in range(8)) for _ in range(4))  # 32 white cells
        assert _encode_desc(cells) == "zf"
        assert P.parse_desc(LightupParams(8, 4), "zf").data.cells == cells

    @pytest.mark.parametrize("game_id,pos", [
        ("3x3b20s0d0:g3", 13),      # 8 of 9 cells
        ("3x3b20s0d0:g3b", 13),     # run past the end
        ("3x3b20s0d0:g3aB", 14),    # extra data
        ("3x3b20s0d0:g5a", 12),     # 5 is not a clue
        ("3x3b20s0d0:g3A", 13),     # bad character
    ])
    def test_malformed_desc_names_position(self, game_id, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(game_id)
        assert e.value.position == pos, e.value

    def test_decode_rejects_bad_move(self):
        inst = P.parse_game_id(SMALL)
        with pytest.raises(ValueError):
            P.decode_tatham_solution(inst, "S;L1,2")  # (x=1, y=2) is the black 3
        with pytest.raises(ValueError):
            P.decode_tatham_solution(inst, "S;Q0,0")


class TestGeneration:
    def test_unique_and_deterministic_each_level(self, generated):
        for lvl, inst in generated.items():
            assert P.solve(inst, 2).unique
            assert P.format_params(inst.params) == P.LEVELS[lvl]
            assert P.parse_game_id(inst.game_id).data == inst.data
        assert P.generate("normal", seed=5).game_id == generated["normal"].game_id
        assert P.generate("normal", seed=6).game_id != generated["normal"].game_id

    def test_symmetry_of_black_cells(self, generated):
        inst = generated["hard"]  # s4: four-way rotational
        cells = inst.data.cells
        for r, c in itertools.product(range(10), range(10)):
            black = cells[r][c] != "."
            assert all((cells[a][b] != ".") == black for a, b in _orbit(r, c, 10, 10, 4))

    def test_orbits(self):
        assert _orbit(0, 1, 4, 4, 4) == {(0, 1), (1, 3), (3, 2), (2, 0)}
        assert _orbit(0, 1, 4, 3, 2) == {(0, 1), (2, 2)}
        assert _orbit(0, 1, 4, 3, 1) == {(0, 1), (0, 2)}
        assert _orbit(0, 0, 4, 3, 3) == {(0, 0), (0, 3), (2, 0), (2, 3)}

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-lightup not installed")
    def test_collection_accepts_native_descs(self, generated):
        for inst in generated.values():
            assert sgt_print_accepts(P, inst.game_id), inst.game_id
        assert not sgt_print_accepts(P, "3x3b20s0d0:g3b")

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-lightup not installed")
    @pytest.mark.parametrize("short", ["7x7", "7x5", "5", "10x10", "7x7b30", "7x7r", "7x7d1", "7x7s0", "6x6s1"])
    def test_short_params_read_as_the_collection_does(self, short, tmp_path):
        assert P.format_params(P.parse_params(short)) == sgt_full_params(P, short, tmp_path)

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-lightup not installed")
    def test_sgt_backend(self):
        inst = P.generate("easy", seed=3, backend="sgt")
        assert P.solve(inst, 2).unique
        assert P.generate("easy", seed=3, backend="sgt").game_id == inst.game_id


class TestText:
    def test_prompt_is_self_contained(self):
        text = P.render_prompt(P.parse_game_id(EASY))
        for needle in ("(row, column)", "<answer>", "black cell", "Numbered black cells: (2,4) = 3, (4,2) = 3, "
                       "(4,4) = 0.", "L = a light", "diagonal"):
            assert needle in text, needle

    def test_answer_round_trip(self):
        inst = P.parse_game_id(SMALL)
        assert P.format_answer(inst, SMALL_SOL) == SMALL_TEXT
        assert P.parse_answer(f"<answer>{SMALL_TEXT}</answer>", inst).value == SMALL_SOL

    @pytest.mark.parametrize("body", [
        f"Reasoning...\n<answer>\n```text\n{SMALL_TEXT}\n```\n</answer>",
        "<answer>.,.,.\n.,L,.\nL,3,L</answer>",
        "<answer>| . | . | . |\n| . | L | . |\n| L | 3 | L |</answer>",
        "<answer>...\n.l.\nl3l</answer>",
        f"<think>L L L</think>\n<answer>\nFinal grid:\n{SMALL_TEXT}\n</answer>",
    ])
    def test_wrapped_answers_parse(self, body):
        assert P.parse_answer(body, P.parse_game_id(SMALL)).value == SMALL_SOL

    def test_fallback_grid(self):
        parsed = P.parse_answer(f"My grid:\n{SMALL_TEXT}\n", P.parse_game_id(SMALL))
        assert parsed.source == "fallback_grid" and parsed.value == SMALL_SOL

    @pytest.mark.parametrize("body,why", [("nope", "no answer block"), ("<answer>. . L</answer>", "wrong size"),
                                          ("<answer>. . .\n. L .\nL 3 *</answer>", "unknown symbol")])
    def test_parse_errors_say_why(self, body, why):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(body, P.parse_game_id(SMALL))
        assert why in str(e.value)

    def test_one_megabyte_answer_parses_in_linear_time(self):
        text = "L . # " * 170_000 + f"<answer>{SMALL_TEXT}</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, P.parse_game_id(SMALL)).value == SMALL_SOL
        assert time.perf_counter() - t < 1.0


class TestCheck:
    def test_accepts_solution_and_parsed_answer(self):
        inst = P.parse_game_id(SMALL)
        assert P.check(inst, SMALL_SOL).ok and P.check(inst, ParsedAnswer(SMALL_SOL)).ok

    @pytest.mark.parametrize("row", ROWS[::2], ids=lambda r: r["game_id"])
    def test_rejects_every_single_cell_corruption(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        for r, c in itertools.product(range(inst.params.h), range(inst.params.w)):
            for v in ("L", ".", "#", "0", "1", "2", "3", "4"):
                if v != sol[r][c]:
                    bad = [list(x) for x in sol]
                    bad[r][c] = v
                    assert not P.check(inst, bad).ok, (r, c, v)

    def test_names_each_rule(self):
        inst = P.parse_game_id(SMALL)
        g = [list(r) for r in SMALL_SOL]
        g[0][0] = "L"  # sees the light at (3,1) along column 1
        assert P.check(inst, g).rules == ("lights_see",)
        g = [list(r) for r in SMALL_SOL]
        g[1][1] = "."  # (1,2) and (2,2) go dark ((2,1), (2,3) keep their column lights); the 3 sees 2 lights
        res = P.check(inst, g)
        assert res.rules == ("unlit", "clue")
        assert [v for v in res.violations if v.rule == "unlit"][0].cells == ((1, 2), (2, 2))
        g = [list(r) for r in SMALL_SOL]
        g[2][1] = "#"
        assert P.check(inst, g).rules == ("black_changed",)
        assert P.check(inst, [["?"] * 3] * 3).rules == ("bad_value",)
        assert P.check(inst, SMALL_SOL[:2]).rules == ("shape",)

    def test_any_valid_solution_passes(self):
        # An all-white 3x3 grid: the solutions are exactly the 6 permutation matrices (one light per row and
        # column; a row without a light would need a light in every column).
        inst = P.parse_game_id("3x3b20s0d0:i")
        res = P.solve(inst, 20)
        assert res.exhausted and len(res.solutions) == 6
        assert all(P.check(inst, s).ok for s in res.solutions)
        assert all(sum(row.count("L") for row in s) == 3 for s in res.solutions)

    def test_all_black_grid(self):
        inst = P.parse_game_id("2x2b100s0d0:BB0B")
        assert P.solve(inst, 2).unique and P.check(inst, P.unique_solution(inst)).ok
        assert P.solve(P.parse_game_id("2x2b100s0d0:BB1B"), 2).solutions == ()  # a 1 with no white neighbour

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 2e-3


class TestClaims:
    def test_c_star_and_given_claims(self):
        inst = P.parse_game_id(SMALL)
        assert P.solution_claims(inst) == {Claim("value", ((3, 1),), "L"), Claim("value", ((2, 2),), "L"),
                                           Claim("value", ((3, 3),), "L")}
        easy = P.parse_game_id(EASY)
        givens = P.given_claims(easy)
        assert givens == (Claim("black", ((2, 2),)), Claim("clue", ((2, 4),), 3), Claim("clue", ((4, 2),), 3),
                          Claim("clue", ((4, 4),), 0))
        assert all(P.verify_claim(easy, g) is ClaimLabel.CORRECT for g in givens)

    def test_verify_claim(self):
        inst = P.parse_game_id(SMALL)
        assert P.verify_claim(inst, Claim("value", ((2, 2),), "L")) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((1, 1),), "L")) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("value", ((1, 1),), ".")) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("clue", ((3, 2),), 2)) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("black", ((1, 1),))) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("black", ((3, 2),))) is ClaimLabel.CORRECT

    def test_claim_text_reads_back(self):
        inst = P.parse_game_id(EASY)
        assert P.claim_text(Claim("value", ((3, 4),), "L")) == "(3,4) is a light"
        assert P.claim_text(Claim("value", ((3, 4),), "L", False)) == "(3,4) is not a light"
        assert P.claim_text(Claim("value", ((3, 4),), ".")) == "(3,4) is empty"
        assert P.claim_text(Claim("clue", ((2, 4),), 3)) == "(2,4) is a black cell with the number 3"
        for v in ("L", "."):
            text = P.claim_text(Claim("value", ((1, 1),), v))
            assert P.VALUE_WORDS[text.split(" is ", 1)[1]] == v
        for claim in P.given_claims(inst):
            for c in (claim, claim.negated()):
                text = P.claim_text(c)
                assert [x[0] for x in P.parse_claim_text(inst, f"We know {text}; hence")] == [c], text
        found = P.parse_claim_text(inst, "so the clue 3 at (2,4) needs lights")
        assert [x[0] for x in found] == [Claim("clue", ((2, 4),), 3)]

    @pytest.mark.parametrize("claim", [Claim("tent", ((1, 1),), "T"), Claim("value", ((4, 1),), "L"),
                                       Claim("value", ((1, 1),), "#"), Claim("clue", ((3, 2),), 5),
                                       Claim("black", ((3, 2),), 1)])
    def test_bad_claims_raise(self, claim):
        with pytest.raises(ClaimError):
            P.claim_holds(P.parse_game_id(SMALL), SMALL_SOL, claim)


class TestUnits:
    @pytest.mark.parametrize("row", ROWS[::2], ids=lambda r: r["game_id"])
    def test_units_exact(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        doms = P.variables(inst)
        for u in P.units(inst):
            vals = tuple(P.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            assert set(u.variables) <= set(doms)
            bad = [vals[:i] + ("." if x == "L" else "L",) + vals[i + 1:] for i, x in enumerate(vals)]
            bad += [("L",) * len(vals), (".",) * len(vals)]
            assert any(not u.allowed(b) for b in bad), u.name

    def test_unit_names(self):
        units = {u.name: u for u in P.units(P.parse_game_id(EASY))}
        assert "row 1" in units and "column 1" in units
        split = {u.name: u for u in P.units(P.parse_game_id("3x3b20s0d0:aBg"))}
        assert split["column 2 from (2,2) to (3,2)"].variables == ((2, 2), (3, 2))
        assert "row 1" not in split and "row 2" in split  # (1,1) and (1,3) are runs of one cell
        assert units["the clue 3 at (2,4)"].variables == ((1, 4), (2, 3), (2, 5), (3, 4))
        assert units["the clue 3 at (2,4)"].premises == (Claim("clue", ((2, 4),), 3),)
        assert "the clue 0 at (4,4)" in units
        assert units["(2,1) must be lit"].variables == ((1, 1), (2, 1), (3, 1), (4, 1), (5, 1))

    def test_units_define_the_solutions(self):
        # Brute force on the 3x3 dev instance: assignments satisfying every unit = the solver's solutions.
        inst = P.parse_game_id(SMALL)
        cells = sorted(P.variables(inst))
        units = P.units(inst)
        found = []
        for bits in itertools.product(("L", "."), repeat=len(cells)):
            a = dict(zip(cells, bits, strict=True))
            if all(u.allowed(tuple(a[v] for v in u.variables)) for u in units):
                found.append(tuple(tuple(a.get((r, c), "3") for c in range(1, 4)) for r in range(1, 4)))
        assert found == [SMALL_SOL]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_property_random_corruption_rejected(data):
    inst = P.parse_game_id(data.draw(st.sampled_from(ROWS))["game_id"])
    sol = P.unique_solution(inst)
    assert P.parse_answer("<answer>" + P.format_answer(inst, sol) + "</answer>", inst).value == sol
    r, c = data.draw(st.integers(0, inst.params.h - 1)), data.draw(st.integers(0, inst.params.w - 1))
    v = data.draw(st.sampled_from([x for x in "L.#01234" if x != sol[r][c]]))
    bad = [list(x) for x in sol]
    bad[r][c] = v
    assert not P.check(inst, bad).ok


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32))
def test_property_desc_round_trip(seed):
    rng = random.Random(seed)
    w, h = rng.randint(2, 30), rng.randint(2, 30)
    p = rng.choice([0.0, 0.05, 0.3, 0.9])
    cells = tuple(tuple(rng.choice("#01234") if rng.random() < p else "." for _ in range(w)) for _ in range(h))
    inst = P.parse_desc(LightupParams(w, h), _encode_desc(cells))
    assert inst.data.cells == cells


def test_levels_grow_in_size():
    sizes = [P.level_params(lvl) for lvl in ("trivial", "easy", "normal", "hard")]
    areas = [getattr(p, "h", p.w) * p.w for p in sizes]
    assert areas == sorted(areas) and len(set(areas)) == 4
