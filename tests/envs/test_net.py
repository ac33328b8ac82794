"""Net: game IDs (wrapping, barriers), solver, generator, prompt, token answers, rules, claims, units.

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
from reasonshape.envs.net import encode_net_desc, mask_token, rotations
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_accepts, unit_bites

P = get("net")
ROWS = dev_rows("net")

# 2x2:4836: hex tiles with bits 1 right, 2 up, 4 left, 8 down: (1,1) = 4 = L, (1,2) = 8 = D, (2,1) = 3 = U+R,
# (2,2) = 6 = U+L. The SOLVE move S;A0,0;L... turns (1,1) anticlockwise once: L -> D. Result:
#   D  D      (1,1)-(2,1) and (1,2)-(2,2) vertical links, (2,1)-(2,2) horizontal: 3 links, 4 tiles, a tree.
#   UR UL
SMALL = "2x2:4836"
SMALL_SOL = ((8, 8), (3, 6))


@pytest.fixture(scope="module")
def small():
    return P.parse_game_id(SMALL)


class TestGameIds:
    def test_desc_decodes_by_hand(self, small):
        assert small.data.tiles == ((4, 8), (3, 6))
        assert [mask_token(t) for t in (4, 8, 3, 6)] == ["L", "D", "UR", "UL"]
        assert rotations(4) == (4, 8, 1, 2) and rotations(5) == (5, 10) and rotations(15) == (15,)

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:30])
    def test_dev_round_trip_and_unique_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert encode_net_desc(inst.data.tiles, inst.data.barriers, inst.params) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_params_forms(self):
        p = P.parse_params("5x4wb0.3a")
        assert (p.w, p.h, p.wrapping, p.unique, p.barrier) == (5, 4, True, False, 0.3)
        assert P.format_params(p) == "5x4wb0.3a" and P.format_params(p, full=False) == "5x4w"
        assert P.parse_params("5") == P.parse_params("5x5")

    def test_barriers_and_wrapping_parse(self):
        # 'v' after tile (1,1) puts a barrier on its right (R=1 there, L=4 on (1,2)); 'h' after (1,2) one below
        # it (D=8 on (1,2), U=2 on (2,2)): barriers (1, 4+8) / (0, 2).
        inst = P.parse_game_id("2x2:1v2h48")
        assert inst.data.barriers == ((1, 12), (0, 2))
        assert inst.data.blocked[0][0] == 1 | 2 | 4  # right barrier + top and left grid edges (no wrapping)
        wrap = P.parse_game_id("3x3w:123456789")
        assert len(wrap.data.links) == 18  # every cell links right and down on a torus

    @pytest.mark.parametrize("gid,pos", [
        ("2x2:483", 7),        # three tiles of four: error at the end of the desc
        ("2x2:48366", 8),      # a fifth tile
        ("2x2:48g6", 6),       # 'g' is not hex
        ("2x2x:4836", 3),      # junk in params
        ("1x1:4", 0),          # a 1x1 grid
        ("2x4w:12345678", 0),  # unique wrapping puzzles cannot have a side of 2
    ])
    def test_malformed_raise_with_position(self, gid, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(gid)
        assert e.value.position == pos
        if P.sgt_binary() is not None and pos > gid.find(":") >= 0:  # desc errors: the collection agrees
            assert not sgt_print_accepts(P, gid)


class TestSolverAndGenerator:
    def test_solution_by_hand(self, small):
        assert P.decode_tatham_solution(small, "S;A0,0;L0,0;L1,0;L0,1;L1,1") == SMALL_SOL
        assert P.unique_solution(small) == SMALL_SOL

    def test_loop_and_disconnection_are_excluded(self):
        # four corners can close a loop; the rules need a tree, so a 2x2 of corners has no solution
        inst = P.parse_game_id("2x2:3333")
        assert P.solve(inst, 2).solutions == ()
        loop = ((9, 12), (3, 6))  # RD DL / UR UL: a closed square
        assert "loop" in P.check(inst, loop).rules

    @pytest.mark.parametrize("level", list(P.LEVELS))
    def test_generation_deterministic_unique_valid(self, level):
        a = P.generate(level, seed=4, index=0)
        assert a.game_id == P.generate(level, seed=4, index=0).game_id
        again = P.parse_game_id(a.game_id)
        assert encode_net_desc(again.data.tiles, again.data.barriers, again.params) == a.desc
        res = P.solve(again, 2)
        assert res.unique and P.check(again, res.solutions[0]).ok
        if P.sgt_binary() is not None:  # the collection itself accepts the native game ID
            assert sgt_print_accepts(P, a.game_id)
        assert res.solutions[0] != a.data.tiles  # scrambled: something to do

    @pytest.mark.parametrize("params", ["4x4w", "4x4b0.5"])
    def test_generation_with_wrapping_or_barriers(self, params):
        inst = P.generate(params, seed=1)
        assert P.format_params(inst.params) == params
        res = P.solve(inst, 2)
        assert res.unique and P.check(inst, res.solutions[0]).ok

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-net not installed")
    def test_sgt_backend(self):
        inst = P.generate("easy", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-net not installed")
    @pytest.mark.parametrize("params", ["5x5w", "4x4b0.5"])
    def test_collection_descs_reencode(self, params):
        out = subprocess.run([P.sgt_binary(), "--generate", "2", params], capture_output=True, text=True,
                             env={"DISPLAY": ""}, timeout=60).stdout.split()
        assert len(out) == 2
        for gid in out:
            inst = P.parse_desc(P.parse_params(params), gid.split(":", 1)[1])
            assert encode_net_desc(inst.data.tiles, inst.data.barriers, inst.params) == inst.desc
            assert P.solve(inst, 2).unique


class TestText:
    def test_prompt_is_self_contained(self, small):
        text = P.render_prompt(small)
        for needle in ("quarter turns", "loose ends", "one network", "no loops", "U (up)", "(row, column)",
                       "1-based", "<answer>", "L  D\nUR UL"):
            assert needle in text, needle

    def test_format_parse_round_trip(self, small):
        assert P.format_answer(small, SMALL_SOL) == "D D\nUR UL"
        assert P.parse_answer(f"<answer>{P.format_answer(small, SMALL_SOL)}</answer>", small).value == SMALL_SOL

    @pytest.mark.parametrize("body", [
        "```\nD D\nRU LU\n```", "| D | D |\n| UR | UL |", "d, d\nur, ul", "Final:\nD D\nUR UL",
    ])
    def test_wrapped_answers_parse(self, small, body):
        assert P.parse_answer(f"Working...\n<answer>\n{body}\n</answer>", small).value == SMALL_SOL

    def test_fallback_grid(self, small):
        parsed = P.parse_answer("I get\nD D\nUR UL\n", small)
        assert parsed.source == "fallback_grid" and parsed.value == SMALL_SOL

    @pytest.mark.parametrize("text,reason", [
        ("no tokens", "no answer block"), ("<answer>D D</answer>", "wrong size"),
        ("<answer>D D\nUR UX</answer>", "unknown symbol"),
    ])
    def test_parse_errors(self, small, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, small)
        assert reason in str(e.value)

    def test_one_megabyte_parses_in_linear_time(self, small):
        text = "UR and then D, " * 70_000 + "<answer>\nD D\nUR UL\n</answer>"
        assert len(text) > 1_000_000
        t = time.perf_counter()
        assert P.parse_answer(text, small).value == SMALL_SOL
        assert time.perf_counter() - t < 2.0


class TestCheck:
    def test_rules_named(self, small):
        assert P.check(small, SMALL_SOL).ok
        assert P.check(small, ((8, 8), (3, 5))).rules == ("not_a_rotation",)
        assert "loose_end" in P.check(small, ((1, 8), (3, 6))).rules        # (1,1) R meets (1,2)'s D tile
        assert P.check(small, ((8,),)).rules == ("shape",)

    def test_disconnected_named(self):
        inst = P.parse_game_id("3x1:140")  # R, L and an empty tile: the R-L pair is cut off from the empty tile
        assert P.check(inst, ((1, 4, 0),)).rules == ("disconnected",)
        assert P.solve(inst, 2).solutions == ()

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:30])
    def test_every_single_tile_corruption_is_rejected(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        for r in range(inst.params.h):
            for c in range(inst.params.w):
                for t in rotations(inst.data.tiles[r][c]):
                    if t != sol[r][c]:
                        bad = [list(x) for x in sol]
                        bad[r][c] = t
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
        cells = [(r, c) for r in range(inst.params.h) for c in range(inst.params.w)
                 if len(rotations(inst.data.tiles[r][c])) > 1]
        r, c = rng.choice(cells)
        bad = [list(x) for x in sol]
        bad[r][c] = rng.choice([t for t in rotations(sol[r][c]) if t != sol[r][c]])
        assert not P.check(inst, tuple(map(tuple, bad))).ok


class TestClaims:
    def test_c_star_and_givens(self, small):
        assert P.solution_claims(small) == {Claim("value", ((1, 1),), 8), Claim("value", ((1, 2),), 8),
                                            Claim("value", ((2, 1),), 3), Claim("value", ((2, 2),), 6)}
        assert P.given_claims(small) == (Claim("piece", ((1, 1),), "end"), Claim("piece", ((1, 2),), "end"),
                                         Claim("piece", ((2, 1),), "corner"), Claim("piece", ((2, 2),), "corner"))

    def test_verify_claim(self, small):
        assert P.verify_claim(small, Claim("value", ((1, 1),), 8)) is ClaimLabel.CORRECT
        assert P.verify_claim(small, Claim("value", ((1, 1),), 4)) is ClaimLabel.WRONG
        assert P.verify_claim(small, Claim("link", ((1, 1), (2, 1)))) is ClaimLabel.CORRECT
        assert P.verify_claim(small, Claim("link", ((1, 1), (1, 2)))) is ClaimLabel.WRONG
        assert P.verify_claim(small, Claim("link", ((1, 1), (1, 2)), None, False)) is ClaimLabel.CORRECT
        with pytest.raises(ClaimError):
            P.verify_claim(small, Claim("link", ((1, 1), (2, 2))))

    @pytest.mark.parametrize("positive", [True, False])
    @pytest.mark.parametrize("claim", [
        Claim("value", ((1, 1),), "D"),  # claim_text writes value 8 as "(1,1) is D"; the value itself is 8
        Claim("value", ((1, 1),), 16), Claim("piece", ((1, 1),), "elbow"), Claim("piece", ((1, 1),), 1),
        Claim("link", ((1, 1), (2, 1)), 1),
    ])
    def test_values_outside_the_vocabulary_raise(self, small, claim, positive):
        assert P.claim_text(Claim("value", ((1, 1),), 8)) == "(1,1) is D"
        with pytest.raises(ClaimError):
            P.verify_claim(small, Claim(claim.kind, claim.cells, claim.value, positive))

    def test_claim_text_reads_back(self, small):
        assert P.claim_text(Claim("value", ((2, 1),), 3)) == "(2,1) is UR"
        assert P.VALUE_WORDS["ru"] == 3 and P.VALUE_WORDS["ud"] == 10
        claims = [Claim("link", ((1, 1), (2, 1))), Claim("link", ((1, 1), (1, 2)), None, False),
                  Claim("piece", ((2, 2),), "corner"), Claim("piece", ((1, 1),), "end")]
        assert P.claim_text(claims[1]) == "(1,1) is not linked to (1,2)"
        assert P.claim_text(claims[3]) == "(1,1) holds an end piece"
        text = "; ".join(P.claim_text(c) for c in claims)
        assert [c for c, _, _ in P.parse_claim_text(small, text)] == claims


class TestUnits:
    @pytest.mark.parametrize("row", ROWS[::2], ids=lambda r: r["game_id"][:30])
    def test_solution_satisfies_units_and_eachunit_bites(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        domains = P.variables(inst)
        for unit in P.units(inst):
            values = tuple(P.solution_value(inst, sol, v) for v in unit.variables)
            assert unit.allowed(values), unit.name
            assert unit_bites(unit, values, domains), unit.name

    def test_unit_names_and_premises(self, small):
        names = {u.name: u for u in P.units(small)}
        link = names["the link between (1,1) and (2,1)"]
        assert link.premises == (Claim("piece", ((1, 1),), "end"), Claim("piece", ((2, 1),), "corner"))
        assert link.allowed((8, 3)) and not link.allowed((1, 3))
        assert names["the walls of (1,1)"].allowed((8,)) and not names["the walls of (1,1)"].allowed((4,))


EXTRA_CLAIMS = [Claim("link", ((1, 1), (1, 2))), Claim("link", ((1, 1), (2, 1)), None, False)]
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
