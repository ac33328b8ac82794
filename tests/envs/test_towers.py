"""Towers: game IDs, solver vs the collection's solutions, generation, prompt, answers, rules, claims, units.

Instances come from tests/data/tatham_dev_instances.jsonl (Simon Tatham's Portable Puzzle Collection, MIT).
"""

import itertools
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs.towers import PUZZLE as P
from reasonshape.envs.towers import TowersParams, _encode_desc, visible_count
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows

ROWS = dev_rows("towers")
SMALL = "3de:2/3/1/2/1/2/2/1/2/1/3/2"  # dev instance, solution S213321132
SMALL_SOL = ((2, 1, 3), (3, 2, 1), (1, 3, 2))
WITH_GIVENS = "5dh:2/2/4////3/1///4/////////2,o1i"  # dev instance: one given 1 at cell 16 = (4,2)


@pytest.fixture(scope="module")
def generated():
    return {lvl: P.generate(lvl, seed=7) for lvl in P.LEVELS}


class TestParams:
    def test_full_and_short_forms(self):
        assert P.parse_params("5dh") == TowersParams(5, "h")
        assert P.parse_params("5") == TowersParams(5, "e")  # towers.c default difficulty is Easy
        assert P.format_params(TowersParams(6, "x")) == "6dx"
        assert P.format_params(TowersParams(6, "x"), full=False) == "6"

    @pytest.mark.parametrize("text,pos", [("", 0), ("x", 0), ("2de", 0), ("10de", 0), ("5dq", 2), ("5d", 2),
                                          ("5e", 1), ("5deX", 3)])
    def test_malformed_params_name_position(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos

    def test_levels_table(self):
        assert P.LEVELS == {"trivial": "3de", "easy": "4de", "normal": "5dh", "hard": "6dh"}


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"])
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        w = inst.params.w
        # Our encoder writes exactly what the collection wrote for the same clues and givens.
        assert _encode_desc(w, inst.data.clues, inst.data.givens) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_parsed_content(self):
        inst = P.parse_game_id(WITH_GIVENS)
        # 'o' = 15 empty cells, then 1 at flat index 15 = (row 4, col 1) 1-based -> givens[3][0]
        assert inst.data.givens[3][0] == 1
        assert sum(v != 0 for row in inst.data.givens for v in row) == 1
        assert inst.data.clues[:3] == (2, 2, 4) and inst.data.clues[6] == 3

    @pytest.mark.parametrize("game_id,pos", [
        ("3de:2/3/1/2/1/2/2/1/2/1/3", 25),         # 11 clues: too few (position = end of text)
        ("3de:2/3/1/2/1/2/2/1/2/1/3/2/1", 27),     # 13 clues: too many
        ("3de:2/3/1/2/1/4/2/1/2/1/3/2", 14),       # clue 4 > w
        ("3de:2/3/1/2/1/2/2/1/2/1/3/2,a", 29),     # 1 of 9 cells given
        ("3de:2/3/1/2/1/2/2/1/2/1/3/2,j", 28),     # 10 cells for 9
        ("3de:2/3/1/2/1/2/2/1/2/1/3/2,h4", 29),    # given 4 > w
        ("3de:2/3/1/2/1/2/2/1/2/1/3/2,h!", 29),    # bad character
        ("3de:2/3/1/2/1/2/2/1/2/1/3/2x", 27),      # junk after the clues
        ("3de", 3),                                # no ':'
    ])
    def test_malformed_desc_names_position(self, game_id, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(game_id)
        assert e.value.position == pos, e.value

    def test_decode_rejects_bad_move(self):
        inst = P.parse_game_id(SMALL)
        with pytest.raises(ValueError):
            P.decode_tatham_solution(inst, "S21332113")


class TestGeneration:
    def test_unique_and_deterministic_each_level(self, generated):
        for lvl, inst in generated.items():
            assert P.solve(inst, 2).unique
            assert P.format_params(inst.params) == P.LEVELS[lvl]
            # the desc is one the collection's grammar accepts: it re-parses to the same data
            assert P.parse_game_id(inst.game_id).data == inst.data
        assert P.generate("easy", seed=7).game_id == generated["easy"].game_id
        assert P.generate("easy", seed=8).game_id != generated["easy"].game_id

    def test_easy_keeps_every_clue_hard_removes_some(self, generated):
        assert all(generated["easy"].data.clues)
        assert not all(generated["hard"].data.clues)

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-towers not installed")
    def test_sgt_backend(self):
        inst = P.generate("easy", seed=3, backend="sgt")
        assert P.solve(inst, 2).unique
        assert P.generate("easy", seed=3, backend="sgt").game_id == inst.game_id


class TestText:
    def test_prompt_is_self_contained(self):
        inst = P.parse_game_id(WITH_GIVENS)
        text = P.render_prompt(inst)
        for needle in ("(row, column)", "<answer>", "visible", "exactly once", "2 visible from the top of column 1",
                       "(4,1) = 1", "1 to 5"):
            assert needle in text, needle

    def test_answer_round_trip(self):
        inst = P.parse_game_id(SMALL)
        text = P.format_answer(inst, SMALL_SOL)
        assert text == "2 1 3\n3 2 1\n1 3 2"
        assert P.parse_answer(f"<answer>{text}</answer>", inst).value == SMALL_SOL

    @pytest.mark.parametrize("body", [
        "Let me think.\n<answer>\n```\n2 1 3\n3 2 1\n1 3 2\n```\n</answer>\nDone.",
        "<answer>\nFinal grid:\n2,1,3\n3,2,1\n1,3,2\n</answer>",
        "<answer>| 2 | 1 | 3 |\n| 3 | 2 | 1 |\n| 1 | 3 | 2 |</answer>",
        "<answer>213\n321\n132</answer>",
        "<answer>[2, 1, 3],\n[3, 2, 1],\n[1, 3, 2]</answer>",
        "<think>maybe 1 1 1</think><answer>2 1 3\n3 2 1\n1 3 2</answer>",
    ])
    def test_wrapped_answers_parse(self, body):
        assert P.parse_answer(body, P.parse_game_id(SMALL)).value == SMALL_SOL

    def test_fallback_grid(self):
        parsed = P.parse_answer("So the grid is:\n\n2 1 3\n3 2 1\n1 3 2\n\nThat's it.", P.parse_game_id(SMALL))
        assert parsed.source == "fallback_grid" and parsed.value == SMALL_SOL

    @pytest.mark.parametrize("body,why", [("no grid here", "no answer block"),
                                          ("<answer>2 1 3\n3 2 1</answer>", "wrong size"),
                                          ("<answer>2 1 3\n3 2 1\n1 3 4</answer>", "unknown symbol")])
    def test_parse_errors_say_why(self, body, why):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(body, P.parse_game_id(SMALL))
        assert why in str(e.value)

    def test_one_megabyte_answer_parses_in_linear_time(self):
        inst = P.parse_game_id(SMALL)
        text = "x " * 500_000 + "<answer>2 1 3\n3 2 1\n1 3 2</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, inst).value == SMALL_SOL
        assert time.perf_counter() - t < 1.0


class TestCheck:
    def test_accepts_solution_and_parsed_answer(self):
        inst = P.parse_game_id(SMALL)
        assert P.check(inst, SMALL_SOL).ok
        assert P.check(inst, ParsedAnswer(SMALL_SOL)).ok

    @pytest.mark.parametrize("row", ROWS[::3], ids=lambda r: r["game_id"])
    def test_rejects_every_single_cell_corruption(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        w = inst.params.w
        for r, c in itertools.product(range(w), range(w)):
            for v in range(1, w + 1):
                if v == sol[r][c]:
                    continue
                bad = [list(x) for x in sol]
                bad[r][c] = v
                res = P.check(inst, bad)
                assert not res.ok
                assert "row_repeat" in res.rules and "column_repeat" in res.rules

    def test_names_each_rule(self):
        inst = P.parse_game_id(SMALL)
        # Swap two rows: still a Latin square, but clues fail.
        res = P.check(inst, (SMALL_SOL[1], SMALL_SOL[0], SMALL_SOL[2]))
        assert res.rules == ("clue",)
        assert P.check(inst, ((2, 1, 3), (3, 2, 1), (1, 3, 9))).rules == ("bad_value",)
        assert P.check(inst, ((2, 1, 3),)).rules == ("shape",)
        given = P.parse_game_id(WITH_GIVENS)
        sol = [list(r) for r in P.unique_solution(given)]
        sol[3] = sol[3][1:] + sol[3][:1]  # rotate row 4: the given 1 at (4,1) moves
        assert "given_changed" in P.check(given, sol).rules

    def test_any_valid_solution_passes(self):
        # No clues at all: every Latin square is a solution, not just one stored grid.
        inst = P.parse_game_id("3de:" + "/" * 11)
        sols = P.solve(inst, 20).solutions
        assert len(sols) == 12  # there are 12 Latin squares of order 3
        assert all(P.check(inst, s).ok for s in sols)

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 2e-3


class TestClaims:
    def test_c_star_and_given_claims(self):
        inst = P.parse_game_id(WITH_GIVENS)
        sol = P.unique_solution(inst)
        cstar = P.solution_claims(inst)
        assert len(cstar) == 24  # 25 cells, one given
        assert Claim("value", ((4, 1),), 1) not in cstar
        assert Claim("value", ((1, 1),), sol[0][0]) in cstar
        givens = P.given_claims(inst)
        assert Claim("value", ((4, 1),), 1) in givens
        assert Claim("visible", ((1, 1),), ("top", 2)) in givens
        assert all(P.verify_claim(inst, g) is ClaimLabel.CORRECT for g in givens)

    def test_verify_claim(self):
        inst = P.parse_game_id(SMALL)
        assert P.verify_claim(inst, Claim("value", ((1, 1),), 2)) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((1, 1),), 3)) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("value", ((1, 1),), 3, False)) is ClaimLabel.CORRECT
        # column 1 from the bottom reads 1,3,2 -> 2 visible
        assert P.verify_claim(inst, Claim("visible", ((3, 1),), ("bottom", 2))) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("visible", ((3, 1),), ("bottom", 3))) is ClaimLabel.WRONG

    def test_claim_text_reads_back(self):
        inst = P.parse_game_id(WITH_GIVENS)
        assert P.claim_text(Claim("value", ((3, 4),), 2)) == "(3,4) is 2"
        assert P.claim_text(Claim("value", ((3, 4),), 2, False)) == "(3,4) is not 2"
        for claim in P.given_claims(inst):
            if claim.kind == "visible":
                for c in (claim, claim.negated()):
                    text = P.claim_text(c)
                    assert [x[0] for x in P.parse_claim_text(inst, "So " + text + ".")] == [c], text
        assert P.claim_text(Claim("visible", ((1, 1),), ("top", 2))) == "2 towers are visible from the top of column 1"

    def test_unit_names_read_as_clue_claims(self):
        inst = P.parse_game_id(WITH_GIVENS)
        found = P.parse_claim_text(inst, "By the clue 2 above column 1 and the clue 3 left of row 1, ...")
        assert [c for c, _, _ in found] == [Claim("visible", ((1, 1),), ("top", 2)),
                                            Claim("visible", ((1, 1),), ("left", 3))]

    @pytest.mark.parametrize("claim", [Claim("tent", ((1, 1),), "T"), Claim("value", ((4, 1),), 1),
                                       Claim("value", ((1, 1),), 7), Claim("visible", ((2, 2),), ("top", 1))])
    def test_bad_claims_raise(self, claim):
        with pytest.raises(ClaimError):
            P.claim_holds(P.parse_game_id(SMALL), SMALL_SOL, claim)


class TestUnits:
    @pytest.mark.parametrize("row", ROWS[::2], ids=lambda r: r["game_id"])
    def test_units_exact(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        doms = P.variables(inst)
        units = P.units(inst)
        w = inst.params.w
        assert len([u for u in units if u.kind == "alldiff"]) == 2 * w
        for u in units:
            vals = tuple(P.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            assert all(x in doms[v] for v, x in zip(u.variables, vals, strict=True))
            # some corrupted assignment of the same variables is rejected
            assert any(not u.allowed(tuple(c)) for c in _corruptions(vals, w)), u.name
        given_units = [u for u in units if u.name.startswith("the given")]
        assert len(given_units) == sum(1 for row in inst.data.givens for v in row if v)
        assert all(u.premises[0].kind == "value" for u in given_units)
        clue_units = [u for u in units if u.name.startswith("the clue")]
        assert len(clue_units) == sum(1 for c in inst.data.clues if c)
        assert all(len(u.premises) == 1 and u.premises[0].kind == "visible" for u in clue_units)

    def test_units_define_the_solutions(self):
        # Brute force over all 3^9 grids of the 3x3 dev instance: those satisfying every unit = the solver's.
        inst = P.parse_game_id(SMALL)
        cells = sorted(P.variables(inst))
        units = P.units(inst)
        found = []
        for vals in itertools.product((1, 2, 3), repeat=9):
            a = dict(zip(cells, vals, strict=True))
            if all(u.allowed(tuple(a[v] for v in u.variables)) for u in units):
                found.append(tuple(tuple(vals[r * 3:(r + 1) * 3]) for r in range(3)))
        assert found == [SMALL_SOL]

    def test_given_unit(self):
        units = {u.name: u for u in P.units(P.parse_game_id(WITH_GIVENS))}
        u = units["the given 1 at (4,1)"]
        assert u.variables == ((4, 1),) and u.premises == (Claim("value", ((4, 1),), 1),)
        assert u.allowed((1,)) and not u.allowed((2,))

    def test_unit_names(self):
        names = {u.name for u in P.units(P.parse_game_id(SMALL))}
        assert {"row 1", "column 3", "the clue 2 above column 1", "the clue 1 below column 2",
                "the clue 2 left of row 1", "the clue 2 right of row 3"} <= names


def _corruptions(vals, w):
    for i in range(len(vals)):
        for v in range(1, w + 1):
            if v != vals[i]:
                yield vals[:i] + (v,) + vals[i + 1:]
    yield tuple(reversed(vals))


def test_visible_count_hand_values():
    assert visible_count([1, 2, 3, 4]) == 4
    assert visible_count([4, 3, 2, 1]) == 1
    assert visible_count([2, 1, 4, 3]) == 2
    assert visible_count([3, 1, 2, 5, 4]) == 2


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_property_random_corruption_rejected_and_round_trip(data):
    row = data.draw(st.sampled_from(ROWS))
    inst = P.parse_game_id(row["game_id"])
    sol = P.unique_solution(inst)
    w = inst.params.w
    assert P.parse_answer("<answer>" + P.format_answer(inst, sol) + "</answer>", inst).value == sol
    r, c = data.draw(st.integers(0, w - 1)), data.draw(st.integers(0, w - 1))
    v = data.draw(st.integers(1, w).filter(lambda x: x != sol[r][c]))
    bad = [list(x) for x in sol]
    bad[r][c] = v
    assert not P.check(inst, bad).ok


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32))
def test_property_encode_parse_round_trip(seed):
    rng = random.Random(seed)
    w = rng.randint(3, 9)
    clues = [rng.choice([0, rng.randint(1, w)]) for _ in range(4 * w)]
    givens = [[rng.choice([0, 0, rng.randint(1, w)]) for _ in range(w)] for _ in range(w)]
    desc = _encode_desc(w, clues, givens)
    inst = P.parse_desc(TowersParams(w, "h"), desc)
    assert inst.data.clues == tuple(clues)
    assert inst.data.givens == tuple(map(tuple, givens))


def test_levels_grow_in_size():
    sizes = [P.level_params(lvl) for lvl in ("trivial", "easy", "normal", "hard")]
    areas = [getattr(p, "h", p.w) * p.w for p in sizes]
    assert areas == sorted(areas) and len(set(areas)) == 4
