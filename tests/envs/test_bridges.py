"""Bridges (Hashiwokakero): game IDs, solver, generator, prompt, bridge-list answers, rules, claims, units.

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
from reasonshape.envs.bridges import encode_bridges_desc
from reasonshape.errors import AnswerParseError, ClaimError, ConfigError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_accepts, unit_bites

P = get("bridges")
ROWS = dev_rows("bridges")

# 3x3i30e10m2d0:2a1c1b: '2' at (1,1), 'a' one water cell, '1' at (1,3), 'c' three water cells (row 2), '1' at
# (3,1), 'b' two water cells. SOLVE S;L0,0,2,0,1;L0,0,0,2,1 (x = column, y = row, 0-based) puts one bridge
# (1,1)-(1,3) and one bridge (1,1)-(3,1): the 2 gets two ends, each 1 gets one, and all three islands connect.
SMALL = "3x3i30e10m2d0:2a1c1b"
SMALL_SOL = ((((1, 1), (1, 3)), 1), (((1, 1), (3, 1)), 1))


@pytest.fixture(scope="module")
def small():
    return P.parse_game_id(SMALL)


def _with(sol, key, n):
    d = dict(sol)
    if n:
        d[key] = n
    else:
        d.pop(key, None)
    return tuple(sorted(d.items()))


class TestGameIds:
    def test_desc_decodes_by_hand(self, small):
        assert small.data.islands == {(1, 1): 2, (1, 3): 1, (3, 1): 1}
        assert small.data.edges == (((1, 1), (1, 3)), ((1, 1), (3, 1)))
        assert small.data.caps == (1, 1)  # min(maxb 2, the two numbers)

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:30])
    def test_dev_round_trip_and_unique_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert encode_bridges_desc(inst.data.islands, inst.params) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_params_forms(self):
        full = P.parse_params("7x7i30e10m2d1")
        assert P.format_params(full) == "7x7i30e10m2d1" and P.format_params(full, full=False) == "7x7m2"
        assert P.parse_params("7x7") == P.parse_params("7x7i30e10m2d0")
        no_loops = P.parse_params("10x10i25e0m3Ld2")
        assert not no_loops.allowloops and no_loops.maxb == 3 and no_loops.islands == 25
        assert P.format_params(no_loops) == "10x10i25e0m3Ld2" and P.format_params(no_loops, False) == "10x10m3L"

    @pytest.mark.parametrize("gid,pos", [
        ("3x3i30e10m2d0:2a1c1", 19),     # 8 of 9 cells: error at the end (14 + 5)
        ("3x3i30e10m2d0:2a1c1c", 19),    # the final run overflows the grid
        ("3x3i30e10m2d0:2a1c1bV", 20),   # 'V' passes validate_desc but new_game cannot read it
        ("3x3i30e10m2d0:2a0c1b", 16),    # '0' is not an island number
        ("3x3i30e10m5d0:2a1c1b", 9),     # maxb 5 > 4: position of 'm'
        ("3x3q:2a1c1b", 3),              # unknown params letter
        ("2x3:2a1c", 0),                 # width below 3
    ])
    def test_malformed_raise_with_position(self, gid, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(gid)
        assert e.value.position == pos
        if P.sgt_binary() is not None and pos > gid.find(":") >= 0:  # desc errors: the collection agrees
            assert not sgt_print_accepts(P, gid)


class TestSolverAndGenerator:
    def test_solution_by_hand(self, small):
        assert P.decode_tatham_solution(small, "S;L0,0,2,0,1;L0,0,0,2,1;M0,0;M2,0;M0,2") == SMALL_SOL
        assert P.unique_solution(small) == SMALL_SOL

    def test_no_loops_param_is_enforced(self):
        # Four 2s at the corners of a 3x3 grid: with loops allowed the unique answer is the square of single
        # bridges; with 'L' no solution remains (each island then needs a double bridge, which disconnects).
        loops = P.parse_game_id("3x3i30e10m2d0:2a2c2a2")
        assert P.solve(loops, 3).unique
        assert len(P.unique_solution(loops)) == 4
        no_loops = P.parse_game_id("3x3i30e10m2Ld0:2a2c2a2")
        res = P.solve(no_loops, 3)
        assert res.exhausted and not res.solutions
        assert "loop" in P.check(no_loops, P.unique_solution(loops)).rules

    @pytest.mark.parametrize("level", list(P.LEVELS))
    def test_generation_deterministic_unique_valid(self, level):
        a = P.generate(level, seed=2, index=0)
        b = P.generate(level, seed=2, index=0)
        assert a.game_id == b.game_id
        again = P.parse_game_id(a.game_id)
        assert encode_bridges_desc(again.data.islands, again.params) == a.desc
        res = P.solve(again, 2)
        assert res.unique and P.check(again, res.solutions[0]).ok
        if P.sgt_binary() is not None:  # the collection itself accepts the native game ID
            assert sgt_print_accepts(P, a.game_id)

    def test_generation_without_loops(self):
        inst = P.generate("6x6i30e10m2Ld0", seed=1)
        sol = P.unique_solution(inst)
        assert P.check(inst, sol).ok and len(sol) == len(inst.data.islands) - 1  # a spanning tree

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-bridges not installed")
    def test_sgt_backend(self):
        inst = P.generate("easy", seed=0, backend="sgt")
        assert P.solve(inst, 2).unique

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-bridges not installed")
    def test_collection_descs_reencode(self):
        out = subprocess.run([P.sgt_binary(), "--generate", "3", "10x10i30e10m3Ld1"], capture_output=True,
                             text=True, env={"DISPLAY": ""}, timeout=60).stdout.split()
        assert len(out) == 3
        for gid in out:
            inst = P.parse_desc(P.parse_params("10x10i30e10m3Ld1"), gid.split(":", 1)[1])
            assert encode_bridges_desc(inst.data.islands, inst.params) == inst.desc
            assert P.solve(inst, 2).unique


class TestText:
    def test_prompt_is_self_contained(self, small):
        text = P.render_prompt(small)
        for needle in ("at most 2 bridges", "never cross", "connected", "(r1,c1)-(r2,c2) n", "(row, column)",
                       "1-based", "<answer>", "2 . 1\n. . .\n1 . ."):
            assert needle in text

    def test_format_parse_round_trip(self, small):
        assert P.format_answer(small, SMALL_SOL) == "(1,1)-(1,3) 1\n(1,1)-(3,1) 1"
        assert P.parse_answer(f"<answer>{P.format_answer(small, SMALL_SOL)}</answer>", small).value == SMALL_SOL

    @pytest.mark.parametrize("body", [
        "```\n(1,1)-(1,3) 1\n(1,1)-(3,1) 1\n```",
        "(1,3) - (1,1): 1\n(3,1) to (1,1) = 1",
        "| (1,1) | (1,3) | 1 |\n| (1,1) | (3,1) | 1 |",
        "Bridges:\n(1,1)-(1,3)\n(1,1)-(3,1), x1,",
    ])
    def test_wrapped_answers_parse(self, small, body):
        assert P.parse_answer(f"Let me think.\n<answer>\n{body}\n</answer>", small).value == SMALL_SOL

    def test_fallback_block(self, small):
        parsed = P.parse_answer("So:\n(1,1)-(1,3) 1\n(1,1)-(3,1) 1\nDone.", small)
        assert parsed.source == "fallback_grid" and parsed.value == SMALL_SOL

    @pytest.mark.parametrize("text,reason", [
        ("nothing here", "no answer block"),
        ("<answer>(1,1)-(1,3) 1 2</answer>", "found 6 numbers"),
        ("<answer>(1,1)-(1,3) 1\n(1,3)-(1,1) 1</answer>", "listed twice"),
        ("<answer>(1,1)-(1,3) 0</answer>", "at least 1 bridge"),
        ("<answer>none</answer>", "no bridges"),
        ("<answer>(1,1)-(1,3) " + "9" * 4301 + "</answer>", "a number of more than 18 digits"),  # int() refuses
    ])
    def test_parse_errors(self, small, text, reason):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(text, small)
        assert reason in str(e.value)

    def test_one_megabyte_parses_in_linear_time(self, small):
        text = "(1,2) maybe 3 " * 80_000 + "\n<answer>\n(1,1)-(1,3) 1\n(1,1)-(3,1) 1\n</answer>"
        assert len(text) > 1_000_000
        t = time.perf_counter()
        assert P.parse_answer(text, small).value == SMALL_SOL
        assert time.perf_counter() - t < 2.0


class TestCheck:
    def test_rules_named(self, small):
        assert P.check(small, SMALL_SOL).ok
        assert "island_count" in P.check(small, SMALL_SOL[:1]).rules
        assert "islands_disconnected" in P.check(small, SMALL_SOL[:1]).rules
        assert "too_many_bridges" in P.check(small, _with(SMALL_SOL, ((1, 1), (1, 3)), 3)).rules
        assert "not_an_island" in P.check(small, ((((1, 2), (3, 2)), 1),)).rules
        assert "not_straight" in P.check(small, ((((1, 3), (3, 1)), 1),)).rules
        assert P.check(small, ("junk",)).rules == ("shape",)  # a malformed value; text is refused
        with pytest.raises(ConfigError, match="expects a ParsedAnswer or a solution value"):
            P.check(small, "junk")

    def test_crossing_and_blocking(self):
        # a plus sign: islands (1,2),(3,2) vertical and (2,1),(2,3) horizontal cross at (2,2)
        inst = P.parse_game_id("3x3i30e10m2d0:a1a1a1a1a")
        crossing = ((((1, 2), (3, 2)), 1), (((2, 1), (2, 3)), 1))
        assert "bridges_cross" in P.check(inst, crossing).rules
        assert P.solve(inst, 2).solutions == ()  # no way to connect all four
        line = P.parse_game_id("5x3i30e10m2d0:1a2a1j")
        assert "blocked" in P.check(line, ((((1, 1), (1, 5)), 1),)).rules  # jumps over the 2 at (1,3)

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"][:30])
    def test_every_single_variable_corruption_is_rejected(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        for key, dom in P.variables(inst).items():
            cur = P.solution_value(inst, sol, key)
            for v in dom:
                if v != cur:
                    assert not P.check(inst, _with(sol, key, v)).ok, (key, v)

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-3]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.002

    @settings(max_examples=40, deadline=None)
    @given(st.sampled_from(ROWS), st.integers(0, 10_000))
    def test_random_corruptions_rejected_and_round_trip(self, row, seed):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        assert P.parse_answer(f"<answer>{P.format_answer(inst, sol)}</answer>", inst).value == sol
        rng = random.Random(seed)
        doms = P.variables(inst)
        key = rng.choice(sorted(doms))
        v = rng.choice([x for x in doms[key] if x != P.solution_value(inst, sol, key)])
        assert not P.check(inst, _with(sol, key, v)).ok


class TestClaims:
    def test_c_star_and_givens(self, small):
        assert P.solution_claims(small) == {Claim("bridge", ((1, 1), (1, 3)), 1),
                                            Claim("bridge", ((1, 1), (3, 1)), 1)}
        assert P.given_claims(small)[0] == Claim("island", ((1, 1),), 2)

    def test_verify_claim(self, small):
        assert P.verify_claim(small, Claim("bridge", ((1, 1), (1, 3)), 1)) is ClaimLabel.CORRECT
        assert P.verify_claim(small, Claim("bridge", ((1, 1), (1, 3)), 2)) is ClaimLabel.WRONG
        assert P.verify_claim(small, Claim("bridge", ((1, 1), (1, 3)), 0, False)) is ClaimLabel.CORRECT
        assert P.verify_claim(small, P.value_claim(((3, 1), (1, 1)), 1)) is ClaimLabel.CORRECT
        with pytest.raises(ClaimError):
            P.verify_claim(small, Claim("bridge", ((1, 1),), 1))

    @pytest.mark.parametrize("positive", [True, False])
    @pytest.mark.parametrize("claim", [
        Claim("bridge", ((1, 1), (1, 3)), 3), Claim("bridge", ((1, 1), (1, 3)), -1),
        Claim("bridge", ((1, 1), (1, 3)), "1"), Claim("island", ((1, 1),), "2"), Claim("island", ((1, 1),), 0),
        Claim("island", ((1, 1),), 17),
    ])
    def test_values_outside_the_vocabulary_raise(self, small, claim, positive):
        # maxb is 2 here; island numbers are 1..16 (what a desc can write)
        with pytest.raises(ClaimError, match="claims need"):
            P.verify_claim(small, Claim(claim.kind, claim.cells, claim.value, positive))

    def test_claim_text_reads_back(self, small):
        claims = [Claim("bridge", ((1, 1), (1, 3)), 2), Claim("bridge", ((1, 1), (3, 1)), 1, False),
                  Claim("bridge", ((1, 1), (3, 1)), 0), Claim("island", ((1, 1),), 2),
                  Claim("island", ((3, 1),), 1, False)]
        assert P.claim_text(claims[0]) == "(1,1) and (1,3) are joined by 2 bridges"
        assert P.claim_text(claims[3]) == "the island at (1,1) needs 2 bridges"
        text = " Then ".join(P.claim_text(c) for c in claims) + "."
        assert [c for c, _, _ in P.parse_claim_text(small, text)] == claims
        (c, s, e), = P.parse_claim_text(small, "so there is no bridge between (1,3) and (1,1)")
        assert c == Claim("bridge", ((1, 1), (1, 3)), 0)
        # a sentence may begin with any of them
        capital = "No bridge between (1,3) and (1,1). The island at (1,1) Needs 2 bridges. (1,1) and (3,1) Are Not " \
                  "joined by 2 bridges."
        assert [c for c, _, _ in P.parse_claim_text(small, capital)] == [
            Claim("bridge", ((1, 1), (1, 3)), 0), Claim("island", ((1, 1),), 2),
            Claim("bridge", ((1, 1), (3, 1)), 2, False)]

    @pytest.mark.parametrize("cells", [((1, 1), (1, 2)), ((1, 2), (3, 2)), ((1, 1), (1, 1))])
    def test_a_bridge_claim_names_two_distinct_islands(self, small, cells):
        for positive in (True, False):
            with pytest.raises(ClaimError, match="a bridge claim names two distinct islands"):
                P.verify_claim(small, Claim("bridge", cells, 0, positive))


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
        u, = [u for u in P.units(small) if u.name == "the island 2 at (1,1)"]
        assert u.variables == (((1, 1), (1, 3)), ((1, 1), (3, 1)))
        assert u.premises == (Claim("island", ((1, 1),), 2),)
        plus = P.parse_game_id("3x3i30e10m2d0:a1a1a1a1a")
        assert any(u.name.startswith("the crossing of") for u in P.units(plus))


def test_claim_texts_read_back_through_the_trace_reader():
    """Everything ``claim_text`` writes is read back as the same claim by the deterministic trace reader (generic
    cell-value patterns + this puzzle's ``parse_claim_text``)."""
    schema = pytest.importorskip("reasonshape.extraction.schema")
    for row in ROWS[::3]:
        inst = P.parse_game_id(row["game_id"])
        reader = schema.SchemaReader(P, inst)
        c_star = sorted(P.solution_claims(inst))
        island = P.given_claims(inst)[0].cells[0]
        extra = [Claim("bridge", c_star[0].cells, 0), Claim("island", (island,), 4, False)]
        for claim in c_star + [c.negated() for c in c_star] + list(P.given_claims(inst)) + extra:
            assert [m.claim for m in reader.read(P.claim_text(claim))] == [claim], P.claim_text(claim)
