"""Range (Kurodoko): game IDs, solver, generator, prompt, answers, rules, claims, units.

Instances in tests/data/tatham_dev_instances.jsonl are from Simon Tatham's Portable Puzzle Collection (MIT), via
shared/data.
"""

import subprocess
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, get
from reasonshape.envs.range import encode_range_desc
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_accepts, unit_bites

P = get("range")
ROWS = dev_rows("range")

# 3x3:a3_4c4_2a decodes (a = one empty cell, '_' separates numbers) to
#   . 3 4
#   . . .
#   4 2 .
# and the collection's solution SB,1,1W,1,2W,1,0B,2,2W,0,0 (0-based r,c) blackens (2,2) and (3,3) (1-based):
#   . 3 4      the 3 at (1,2) sees (1,1), itself, (1,3) and not (2,2): 3;  the 4 at (1,3): (1,1..3) + (2,3) = 4;
#   . # .      the 4 at (3,1): (1..3,1) + (3,2) = 4;  the 2 at (3,2): (3,1) + itself, (2,2) and (3,3) black = 2.
#   4 2 #
SMALL = "3x3:a3_4c4_2a"
SMALL_SOL = (("W", "W", "W"), ("W", "B", "W"), ("W", "W", "B"))


@pytest.fixture(scope="module")
def small():
    return P.parse_game_id(SMALL)


class TestGameIds:
    def test_desc_decodes_by_hand(self, small):
        assert small.data == ((0, 3, 4), (0, 0, 0), (4, 2, 0))

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:24])
    def test_dev_round_trip_and_unique_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert encode_range_desc(inst.data, inst.params.h, inst.params.w) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_params_forms(self):
        assert P.parse_params("7") == P.parse_params("7x7")
        assert P.format_params(P.parse_params("9x6")) == "9x6" == P.format_params(P.parse_params("9x6"), full=False)

    @pytest.mark.parametrize("gid,pos", [
        ("3x3:a3_4c4_2", 12),       # one cell short: error at the end of the desc (4 + 8)
        ("3x3:a3_4c4_2ab", 13),     # one cell too many: the 'b' run overflows (4 + 9)
        ("3x3:a3_4c4_9a", 11),      # 9 > w+h-1 = 5; the '9' is desc index 7 (a,3,_,4,c,4,_,9): 4 + 7
        ("3x3:a3_4c4_2A", 12),      # invalid character at desc index 8: 4 + 8
        ("3x3:0a3_4c4_2a", 4),      # '0' is not a number start
        ("3y3:a3_4c4_2a", 1),       # bad params: 'y' after the width
        ("x3:a", 0),
        ("3x3", 3),                 # no ':'
    ])
    def test_malformed_raise_with_position(self, gid, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(gid)
        assert e.value.position == pos
        if P.sgt_binary() is not None and pos > gid.find(":") >= 0:  # desc errors: the collection agrees
            assert not sgt_print_accepts(P, gid)


class TestSolverAndGenerator:
    def test_decoded_solution_is_the_hand_one(self, small):
        assert P.decode_tatham_solution(small, "SB,1,1W,1,2W,1,0B,2,2W,0,0") == SMALL_SOL
        assert P.unique_solution(small) == SMALL_SOL

    @pytest.mark.parametrize("level", list(P.LEVELS))
    def test_generation_deterministic_unique_valid(self, level):
        a = P.generate(level, seed=3, index=1)
        b = P.generate(level, seed=3, index=1)
        assert a.game_id == b.game_id
        assert P.format_params(a.params) == P.LEVELS[level]
        again = P.parse_game_id(a.game_id)
        assert again.data == a.data
        assert encode_range_desc(a.data, a.params.h, a.params.w) == a.desc
        res = P.solve(again, 2)
        assert res.unique and P.check(again, res.solutions[0]).ok
        if P.sgt_binary() is not None:  # the collection itself accepts the native game ID
            assert sgt_print_accepts(P, a.game_id)

    def test_generation_differs_across_seeds(self):
        assert P.generate("easy", seed=0).game_id != P.generate("easy", seed=1).game_id

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-range not installed")
    def test_sgt_backend(self):
        inst = P.generate("trivial", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-range not installed")
    def test_collection_descs_reencode(self):
        out = subprocess.run([P.sgt_binary(), "--generate", "3", "7x7"], capture_output=True, text=True,
                             env={"DISPLAY": ""}, timeout=60).stdout.split()
        assert len(out) == 3
        for gid in out:
            inst = P.parse_game_id(gid)
            assert encode_range_desc(inst.data, 7, 7) == inst.desc


class TestText:
    def test_prompt_is_self_contained(self, small):
        text = P.render_prompt(small)
        for needle in ("black", "adjacent", "connected", "sees", "(row, column)", "1-based", "<answer>", "#",
                       ". 3 4", "4 2 ."):
            assert needle in text

    def test_format_parse_round_trip(self, small):
        assert P.format_answer(small, SMALL_SOL) == ". . .\n. # .\n. . #"
        assert P.parse_answer(f"<answer>{P.format_answer(small, SMALL_SOL)}</answer>", small).value == SMALL_SOL

    @pytest.mark.parametrize("body", [
        "Here it is:\n```\n. . .\n. # .\n. . #\n```\n",
        "| . | . | . |\n| . | # | . |\n| . | . | # |",
        ".,.,.\n.,#,.\n.,.,#",
        "...\n.#.\n..#",
        ". 3 4\n. # .\n4 2 #",          # numbers written in place count as white
    ])
    def test_wrapped_answers_parse(self, small, body):
        text = f"I reasoned a lot.\n<answer>\n{body}\n</answer>\nDone."
        assert P.parse_answer(text, small).value == SMALL_SOL

    def test_fallback_grid(self, small):
        parsed = P.parse_answer("so the grid is\n. . .\n. # .\n. . #\nthat's all", small)
        assert parsed.source == "fallback_grid" and parsed.value == SMALL_SOL

    @pytest.mark.parametrize("text,reason", [
        ("no grid here", "no answer block"),
        ("<answer>. . .\n. # .</answer>", "wrong size"),
        ("<answer>. . .\n. @ .\n. . #</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, small, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, small)
        assert reason in str(e.value)

    @pytest.mark.parametrize("text,reason", [
        # the prompt allows a number only in a numbered cell, and only its own number there
        ("<answer>3 . .\n. # .\n. . #</answer>", "number 3 at (1,1), a cell that has no number"),
        ("<answer>. . .\n. # 4\n. . #</answer>", "number 4 at (2,3), a cell that has no number"),
        ("<answer>. 4 3\n. # .\n. . #</answer>", "number 4 at (1,2), a cell that holds the number 3"),
        ("so the grid is\n. . .\n. # 2\n. . #\nthat's all", "number 2 at (2,3), a cell that has no number"),
    ])
    def test_number_outside_its_numbered_cell_is_a_parse_error(self, small, text, reason):
        assert "('.' = a cell without a number)" in P.render_prompt(small)
        assert "a numbered cell may be written as '.' or as its number" in P.render_prompt(small)
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, small)
        assert reason in str(e.value)

    def test_one_megabyte_parses_in_linear_time(self, small):
        text = ("blah . # " * 120_000) + "\n<answer>\n. . .\n. # .\n. . #\n</answer>"
        assert len(text) > 1_000_000
        t = time.perf_counter()
        assert P.parse_answer(text, small).value == SMALL_SOL
        assert time.perf_counter() - t < 2.0


class TestCheck:
    def test_accepts_solution_and_names_rules(self, small):
        assert P.check(small, SMALL_SOL).ok
        disconnected = (("W", "B", "W"), ("B", "W", "W"), ("W", "W", "B"))
        assert "white_disconnected" in P.check(small, disconnected).rules
        adjacent = (("W", "W", "W"), ("W", "B", "W"), ("W", "B", "B"))
        assert {"adjacent_black", "clue_black"} <= set(P.check(small, adjacent).rules)
        assert P.check(small, (("W",) * 3,) * 2).rules == ("shape",)

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:24])
    def test_every_single_cell_corruption_is_rejected(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        for r in range(inst.params.h):
            for c in range(inst.params.w):
                bad = [list(x) for x in sol]
                bad[r][c] = "W" if sol[r][c] == "B" else "B"
                res = P.check(inst, tuple(map(tuple, bad)))
                assert not res.ok and res.rules

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.002

    @settings(max_examples=40, deadline=None)
    @given(st.sampled_from(ROWS[3:]), st.integers(0, 10_000), st.integers(1, 4))
    def test_random_corruptions_rejected(self, row, seed, k):
        import random

        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        rng = random.Random(seed)
        cells = rng.sample([(r, c) for r in range(inst.params.h) for c in range(inst.params.w)], k)
        bad = [list(x) for x in sol]
        for r, c in cells:
            bad[r][c] = "W" if sol[r][c] == "B" else "B"
        assert not P.check(inst, tuple(map(tuple, bad))).ok


class TestClaims:
    def test_c_star_and_givens(self, small):
        assert P.solution_claims(small) == {Claim("value", ((2, 2),), "B"), Claim("value", ((3, 3),), "B")}
        assert P.given_claims(small)[0] == Claim("clue", ((1, 2),), 3)

    def test_verify_claim(self, small):
        assert P.verify_claim(small, Claim("value", ((2, 2),), "B")) is ClaimLabel.CORRECT
        assert P.verify_claim(small, Claim("value", ((1, 1),), "B")) is ClaimLabel.WRONG
        assert P.verify_claim(small, Claim("value", ((1, 1),), "B", False)) is ClaimLabel.CORRECT
        assert P.verify_claim(small, Claim("clue", ((1, 3),), 4)) is ClaimLabel.CORRECT
        with pytest.raises(ClaimError):
            P.verify_claim(small, Claim("value", ((4, 1),), "B"))
        with pytest.raises(ClaimError):
            P.verify_claim(small, Claim("tent", ((1, 1),), "B"))

    def test_claim_text_and_parse_back(self, small):
        assert P.claim_text(Claim("value", ((2, 2),), "B")) == "(2,2) is black"
        assert P.claim_text(Claim("value", ((2, 1),), "B", False)) == "(2,1) is not black"
        assert P.VALUE_WORDS["black"] == "B" and P.VALUE_WORDS["white"] == "W"
        for claim in (Claim("clue", ((1, 2),), 3), Claim("clue", ((1, 2),), 4, False)):
            text = "We know " + P.claim_text(claim) + "."
            (found, start, end), = P.parse_claim_text(small, text)
            assert found == claim and text[start:end] == P.claim_text(claim)


class TestUnits:
    @pytest.mark.parametrize("row", ROWS[::3], ids=lambda r: r["game_id"][:24])
    def test_solution_satisfies_units_and_eachunit_bites(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        domains = P.variables(inst)
        units = P.units(inst)
        assert any(u.name.startswith("the clue") for u in units)
        for unit in units:
            values = tuple(P.solution_value(inst, sol, v) for v in unit.variables)
            assert unit.allowed(values), unit.name
            assert unit_bites(unit, values, domains), unit.name
        assert domains[(1, 1)] in (("B", "W"), ("W",))

    def test_unit_names_and_premises(self, small):
        names = {u.name: u for u in P.units(small)}
        u = names["the clue 3 at (1,2)"]
        assert u.premises == (Claim("clue", ((1, 2),), 3),)
        assert "adjacent cells (2,2) and (2,3)" in names


EXTRA_CLAIMS = [Claim("value", ((1, 1),), "W"), Claim("clue", ((1, 1),), 5, False)]
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
