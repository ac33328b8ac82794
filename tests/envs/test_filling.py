"""Filling (Fillomino): game IDs, solver, generator, prompt, answers, rules, claims, units.

Instances in tests/data/tatham_dev_instances.jsonl are from Simon Tatham's Portable Puzzle Collection (MIT), via
shared/data.
"""

import random
import subprocess
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, get
from reasonshape.envs.filling import encode_filling_desc, max_number
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_accepts, unit_bites

P = get("filling")
ROWS = dev_rows("filling")

# 2x3:a13a3a (w=2, h=3): a = one empty cell, so the rows are (., 1), (3, .), (3, .). The collection's solution
# s313232 reads row-major: (3,1), (3,2), (3,2) -- a column of three 3s, a lone 1, and a vertical pair of 2s.
SMALL = "2x3:a13a3a"
SMALL_SOL = ((3, 1), (3, 2), (3, 2))


@pytest.fixture(scope="module")
def small():
    return P.parse_game_id(SMALL)


class TestGameIds:
    def test_desc_decodes_by_hand(self, small):
        assert small.data == ((0, 1), (3, 0), (3, 0))
        assert max_number(small.params) == 3  # min(9, max(2, 3, 3))

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:24])
    def test_dev_round_trip_and_unique_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert encode_filling_desc(inst.data, inst.params.w, inst.params.h) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_params_forms(self):
        assert P.parse_params("5") == P.parse_params("5x5")
        assert P.format_params(P.parse_params("7x5"), full=False) == "7x5" == P.format_params(P.parse_params("7x5"))

    @pytest.mark.parametrize("gid,pos", [
        ("2x3:a13a3", 9),      # 5 of 6 cells: error at the end, 4 + len("a13a3")
        ("2x3:a13a3ab", 10),   # the final 'b' overflows: desc index 6
        ("2x3:a13a4a", 8),     # 4 > max(w, h, 3) = 3: desc index 4
        ("2x3:a1-3a3a", 6),    # '-' is not allowed
        ("2x3x:a13a3a", 3),    # params: junk after WxH
    ])
    def test_malformed_raise_with_position(self, gid, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(gid)
        assert e.value.position == pos
        if P.sgt_binary() is not None and pos > gid.find(":") >= 0:  # desc errors: the collection agrees
            assert not sgt_print_accepts(P, gid)


class TestSolverAndGenerator:
    def test_solution_by_hand(self, small):
        assert P.decode_tatham_solution(small, "s313232") == SMALL_SOL
        assert P.unique_solution(small) == SMALL_SOL

    @pytest.mark.parametrize("level", list(P.LEVELS))
    def test_generation_deterministic_unique_valid(self, level):
        a = P.generate(level, seed=5, index=0)
        if level == "hard":
            # one 7x7 generation is ~1.5 s of CPU: pin the output instead of generating twice. The generator's
            # choices depend only on the RNG and on uniqueness verdicts, never on the solver's search path.
            assert a.game_id == "7x7:f43b567a4a55a7b77a6a7a7d2a5a7e515b"
        else:
            assert a.game_id == P.generate(level, seed=5, index=0).game_id
        again = P.parse_game_id(a.game_id)
        assert again.data == a.data and encode_filling_desc(a.data, a.params.w, a.params.h) == a.desc
        res = P.solve(again, 2)
        assert res.unique and P.check(again, res.solutions[0]).ok
        if P.sgt_binary() is not None:  # the collection itself accepts the native game ID
            assert sgt_print_accepts(P, a.game_id)
        # givens are a strict subset of the cells (something to solve)
        assert any(v == 0 for row in a.data for v in row)

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-filling not installed")
    def test_sgt_backend(self):
        inst = P.generate("trivial", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-filling not installed")
    def test_collection_descs_reencode(self):
        out = subprocess.run([P.sgt_binary(), "--generate", "3", "5x5"], capture_output=True, text=True,
                             env={"DISPLAY": ""}, timeout=60).stdout.split()
        assert len(out) == 3
        for gid in out:
            inst = P.parse_game_id(gid)
            assert encode_filling_desc(inst.data, 5, 5) == inst.desc
            assert P.solve(inst, 2).unique


class TestText:
    def test_prompt_is_self_contained(self, small):
        text = P.render_prompt(small)
        for needle in ("region", "exactly as many cells", "1 to 3", "(row, column)", "1-based", "<answer>",
                       ". 1\n3 .\n3 ."):
            assert needle in text

    def test_format_parse_round_trip(self, small):
        assert P.format_answer(small, SMALL_SOL) == "3 1\n3 2\n3 2"
        assert P.parse_answer(f"<answer>{P.format_answer(small, SMALL_SOL)}</answer>", small).value == SMALL_SOL

    @pytest.mark.parametrize("body", [
        "```\n3 1\n3 2\n3 2\n```", "| 3 | 1 |\n| 3 | 2 |\n| 3 | 2 |", "3,1\n3,2,\n3,2", "31\n32\n32",
        "Final grid:\n3 1\n3 2\n3 2",
    ])
    def test_wrapped_answers_parse(self, small, body):
        assert P.parse_answer(f"Thinking...\n<answer>\n{body}\n</answer> ok", small).value == SMALL_SOL

    def test_fallback_grid(self, small):
        parsed = P.parse_answer("the answer:\n3 1\n3 2\n3 2\n", small)
        assert parsed.source == "fallback_grid" and parsed.value == SMALL_SOL

    @pytest.mark.parametrize("text,reason", [
        ("nothing", "no answer block"), ("<answer>3 1\n3 2</answer>", "wrong size"),
        ("<answer>3 1\n3 2\n3 7</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, small, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, small)
        assert reason in str(e.value)

    def test_one_megabyte_parses_in_linear_time(self, small):
        text = "3 1 2 words " * 90_000 + "<answer>\n3 1\n3 2\n3 2\n</answer>"
        assert len(text) > 1_000_000
        t = time.perf_counter()
        assert P.parse_answer(text, small).value == SMALL_SOL
        assert time.perf_counter() - t < 2.0


class TestCheck:
    def test_rules_named(self, small):
        assert P.check(small, SMALL_SOL).ok
        assert "region_too_big" in P.check(small, ((3, 1), (3, 3), (3, 2))).rules   # four 3s touch
        assert "region_too_small" in P.check(small, ((3, 1), (3, 2), (3, 1))).rules  # a lone 2
        assert "given_changed" in P.check(small, ((3, 2), (3, 2), (3, 1))).rules
        assert P.check(small, ((3, 1), (3, 2), (3, 0))).rules == ("bad_value",)
        assert P.check(small, ((3, 1),)).rules == ("shape",)

    def test_accepts_valid_alternative_of_a_non_unique_grid(self):
        inst = P.parse_game_id("2x2:d")  # no givens: many solutions, e.g. two vertical 2-dominoes
        assert P.check(inst, ((2, 2), (2, 2))).ok is False  # the four 2s touch: one region of 4
        assert P.check(inst, ((1, 3), (3, 3))).ok
        assert P.check(inst, ((3, 3), (3, 1))).ok

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:24])
    def test_every_single_cell_corruption_is_rejected(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        n = max_number(inst.params)
        for r in range(inst.params.h):
            for c in range(inst.params.w):
                for v in range(1, n + 1):
                    if v == sol[r][c]:
                        continue
                    bad = [list(x) for x in sol]
                    bad[r][c] = v
                    assert not P.check(inst, tuple(map(tuple, bad))).ok

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.002

    @settings(max_examples=40, deadline=None)
    @given(st.sampled_from(ROWS[3:]), st.integers(0, 10_000))
    def test_random_corruptions_rejected(self, row, seed):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        rng = random.Random(seed)
        r, c = rng.randrange(inst.params.h), rng.randrange(inst.params.w)
        bad = [list(x) for x in sol]
        bad[r][c] = rng.choice([v for v in range(1, max_number(inst.params) + 1) if v != sol[r][c]])
        assert not P.check(inst, tuple(map(tuple, bad))).ok


class TestClaims:
    def test_c_star_and_givens(self, small):
        # empty cells (1,1), (2,2), (3,2) hold 3, 2, 2
        assert P.solution_claims(small) == {Claim("value", ((1, 1),), 3), Claim("value", ((2, 2),), 2),
                                            Claim("value", ((3, 2),), 2)}
        assert P.given_claims(small) == (Claim("value", ((1, 2),), 1), Claim("value", ((2, 1),), 3),
                                         Claim("value", ((3, 1),), 3))

    def test_verify_claim(self, small):
        assert P.verify_claim(small, Claim("value", ((2, 2),), 2)) is ClaimLabel.CORRECT
        assert P.verify_claim(small, Claim("value", ((2, 2),), 3)) is ClaimLabel.WRONG
        assert P.verify_claim(small, Claim("value", ((2, 2),), 3, False)) is ClaimLabel.CORRECT
        with pytest.raises(ClaimError):
            P.verify_claim(small, Claim("value", ((0, 1),), 3))

    def test_claim_text(self):
        assert P.claim_text(Claim("value", ((2, 2),), 2)) == "(2,2) is 2"
        assert P.claim_text(Claim("value", ((2, 2),), 3, False)) == "(2,2) is not 3"
        assert P.VALUE_WORDS["three"] == 3


class TestUnits:
    @pytest.mark.parametrize("row", ROWS[::4], ids=lambda r: r["game_id"][:24])
    def test_solution_satisfies_units_and_eachunit_bites(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        domains = P.variables(inst)
        units = P.units(inst)
        assert len(units) == inst.params.w * inst.params.h
        for unit in units:
            values = tuple(P.solution_value(inst, sol, v) for v in unit.variables)
            assert unit.allowed(values), unit.name
            assert unit_bites(unit, values, domains), unit.name

    def test_units_are_exact_on_a_small_grid(self, small):
        """Every full assignment accepted by all units is a valid solution and vice versa (2x3: 3^6 grids)."""
        import itertools

        units = P.units(small)
        doms = P.variables(small)
        cells = sorted(doms)
        for combo in itertools.product(*(doms[c] for c in cells)):
            val = dict(zip(cells, combo, strict=True))
            ok_units = all(u.allowed(tuple(val[v] for v in u.variables)) for u in units)
            grid = tuple(tuple(val[(r, c)] for c in (1, 2)) for r in (1, 2, 3))
            assert ok_units == P.check(small, grid).ok, grid

    def test_unit_names_and_premises(self, small):
        names = {u.name: u for u in P.units(small)}
        assert names["the region of (2,1)"].premises == (Claim("value", ((2, 1),), 3),)
        assert names["the region of (2,2)"].premises == ()
        assert names["the region of (2,1)"].variables[0] == (2, 1)


EXTRA_CLAIMS: list = []  # negated C* claims already cover "(r,c) is not n"
def test_claim_texts_read_back_through_the_trace_reader():
    """Everything ``claim_text`` writes is read back as the same claim by the deterministic trace reader (generic
    cell-value patterns + this puzzle's ``parse_claim_text``)."""
    schema = pytest.importorskip("reasonshape.extraction.schema")
    for row in ROWS[::3]:
        inst = P.parse_game_id(row["game_id"])
        reader = schema.SchemaReader(P, inst)
        c_star = sorted(P.solution_claims(inst))
        for claim in c_star + [c.negated() for c in c_star] + list(P.given_claims(inst)) + EXTRA_CLAIMS:
            assert [m.claim for m in reader.read(P.claim_text(claim))] == [claim], P.claim_text(claim)
