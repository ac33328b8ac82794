"""Undead: game IDs, solver vs the collection's solutions, generation, prompt, answers, rules, claims, units.

Instances come from tests/data/tatham_dev_instances.jsonl (Simon Tatham's Portable Puzzle Collection, MIT).
"""

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs.undead import PUZZLE as P
from reasonshape.envs.undead import UndeadParams, _encode_desc
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_generate_accepts, sgt_solution

ROWS = dev_rows("undead")
# Dev instance: 2 ghosts, 0 vampires, 3 zombies; grid L R b R R c = row 1: \ / .; row 2: . / /; row 3: . . .
# Monster cells in row-major order: 0 (1,3), 1 (2,1), 2 (3,1), 3 (3,2), 4 (3,3); SOLVE S;Z0;Z1;G2;Z3;G4.
# Counts clockwise from the top-left: top 0,0,2; right 2,1,1; bottom (right to left) 0,2,1; left (bottom up) 1,2,2.
SMALL = "3x3de:2,0,3,LRbRRc,0,0,2,2,1,1,0,2,1,1,2,2"
SMALL_SOL = (("\\", "/", "Z"), ("Z", "/", "/"), ("G", "Z", "G"))
# No mirrors: vampires and zombies both count 1 on every line, so the one vampire can sit in any of the 9 cells.
AMBIGUOUS = "3x3dn:0,1,8,i,3,3,3,3,3,3,3,3,3,3,3,3"
SGT = P.sgt_binary()


def _swap(sol, r, c, v):
    return tuple(tuple(v if (i, j) == (r, c) else x for j, x in enumerate(ln)) for i, ln in enumerate(sol))


@pytest.fixture(scope="module")
def generated():
    return {lvl: P.generate(lvl, seed=4) for lvl in P.LEVELS}


class TestParams:
    def test_full_and_short_forms(self):
        assert P.parse_params("4x4dt") == UndeadParams(4, 4, "t")
        assert P.parse_params("4x4") == UndeadParams(4, 4, "n")  # undead.c decode_params: Normal
        assert P.parse_params("5") == UndeadParams(5, 5, "n")
        assert P.format_params(UndeadParams(5, 4, "e")) == "5x4de"
        assert P.format_params(UndeadParams(5, 4, "e"), full=False) == "5x4"

    @pytest.mark.parametrize("text,pos", [("", 0), ("x", 0), ("3x", 2), ("3x3dq", 4), ("3x3d", 4), ("3x3e", 3),
                                          ("3x3deX", 5), ("2x3de", 0), ("9x9de", 0)])
    def test_malformed_params_name_position(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos

    def test_levels_table(self):
        assert P.LEVELS == {"trivial": "3x3de", "easy": "4x4de", "normal": "4x4dt", "hard": "5x5dt"}


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"])
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        assert _encode_desc(inst.data, inst.params.w, inst.params.h) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_parsed_content_and_lines_of_sight(self):
        d = P.parse_game_id(SMALL).data
        assert d.totals == (2, 0, 3)
        assert d.grid == (("\\", "/", "."), (".", "/", "/"), (".", ".", "."))
        assert d.clues == (0, 0, 2, 2, 1, 1, 0, 2, 1, 1, 2, 2)
        # top of column 1: \ turns the look right, / turns it up and out: no monster cell
        assert d.paths[0] == ()
        # top of column 3: (1,3) directly, then / at (2,3) turns left, / at (2,2) turns down, (3,2) in a mirror
        assert d.paths[2] == (((1, 3), False), ((3, 2), True))
        # left of row 3 (index 2w+h = 9): straight through (3,1), (3,2), (3,3)
        assert d.paths[9] == (((3, 1), False), ((3, 2), False), ((3, 3), False))
        # givens in the grid: G/V/Z letters break the empty runs
        g = P.parse_game_id("3x3de:2,0,3,LRbRRGb,0,0,2,2,1,1,0,2,1,1,2,2").data.grid
        assert g[2] == ("G", ".", ".")

    @pytest.mark.parametrize("game_id,pos", [
        ("3x3de:2,0,3,LRbRRb,0,0,2,2,1,1,0,2,1,1,2,2", 18),    # 8 cells for 9
        ("3x3de:2,0,3,LRbRRd,0,0,2,2,1,1,0,2,1,1,2,2", 17),    # 10 cells for 9
        ("3x3de:2,0,3,LRbRRcQ,0,0,2,2,1,1,0,2,1,1,2,2", 18),   # bad grid letter
        ("3x3de:2,0,4,LRbRRc,0,0,2,2,1,1,0,2,1,1,2,2", None),  # 6 monsters for 5 cells
        ("3x3de:2,0,3,LRbRRc,0,0,2,2,1,1,0,2,1,1,2", 40),      # 11 counts for 12
        ("3x3de:2,0,3,LRbRRc,0,0,2,2,1,1,0,2,1,1,2,2,7", 42),  # 13 counts
        ("3x3de:2,0,3,LRbRRc,0,0,2,2,1,1,0,2,1,1,2,x", 41),    # junk after the counts
        ("3x3de:2,0", 9),                                      # the zombie total is missing
        ("3x3de:2;0,3,LRbRRc,0,0,2,2,1,1,0,2,1,1,2,2", 7),     # ';' in the totals
    ])
    def test_malformed_desc_names_position(self, game_id, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(game_id)
        assert e.value.position == pos
        assert e.value.expected

    def test_decode_rejects_bad_move(self):
        inst = P.parse_game_id(SMALL)
        for bad in ("X;Z0", "S;Z0;Z1;G2;Z3", "S;Z9", "S;Q1"):
            with pytest.raises(ValueError):
                P.decode_tatham_solution(inst, bad)


class TestGenerate:
    def test_unique_and_deterministic_each_level(self, generated):
        for lvl, inst in generated.items():
            assert P.solve(inst, 2).unique
            assert inst.params == P.level_params(lvl)
            assert P.generate(lvl, seed=4).desc == inst.desc
            assert P.parse_game_id(P.format_game_id(inst)).data == inst.data
            n_monster = sum(v not in "/\\" for row in inst.data.grid for v in row)
            assert 0.48 <= n_monster / (inst.params.w * inst.params.h) <= 0.78

    @pytest.mark.skipif(SGT is None, reason="sgt-undead not installed")
    def test_collection_accepts_native_descs(self, generated):
        for inst in generated.values():
            assert sgt_generate_accepts(P, P.format_game_id(inst)), P.format_game_id(inst)

    @pytest.mark.skipif(SGT is None, reason="sgt-undead not installed")
    def test_collection_solver_agrees(self, generated, tmp_path):
        # an independent check of our CP-SAT model: the collection solves our native puzzles to the same grid
        agreed = 0
        for lvl, inst in generated.items():
            move = sgt_solution(P, P.format_game_id(inst), tmp_path / lvl)
            if move is None:
                raise AssertionError(f"sgt-undead gave no solution for {lvl}")
            assert P.decode_tatham_solution(inst, move) == P.unique_solution(inst), lvl
            agreed += 1
        assert agreed >= 4

    @pytest.mark.skipif(SGT is None, reason="sgt-undead not installed")
    def test_sgt_backend(self):
        inst = P.generate("trivial", seed=3, backend="sgt")
        assert inst.params == UndeadParams(3, 3, "e") and P.solve(inst, 2).unique
        assert P.generate("trivial", seed=3, backend="sgt").desc == inst.desc


class TestText:
    def test_prompt_is_self_contained(self):
        text = P.render_prompt(P.parse_game_id(SMALL))
        for needle in ("(row, column)", "<answer>", "exactly 2 ghosts, 0 vampires and 3 zombies",
                       "counted twice", "- from the top of column 3 (looking down, entering at (1,3)): 2 visible",
                       "- from the left of row 3 (looking right, entering at (3,1)): 1 visible",
                       "row  3:  1 |  .  .  . | 1", "Given monsters: none"):
            assert needle in text, needle

    def test_answer_round_trip(self):
        inst = P.parse_game_id(SMALL)
        body = P.format_answer(inst, SMALL_SOL)
        assert body == "\\ / Z\nZ / /\nG Z G"
        assert P.parse_answer(f"<answer>{body}</answer>", inst) == ParsedAnswer(SMALL_SOL, "answer_block", ())

    @pytest.mark.parametrize("body", [
        "Done:\n<answer>\n\\ / Z\nZ / /\nG Z G\n</answer>",
        "<answer>\n```\n\\/Z\nZ//\nGZG\n```\n</answer>",
        "<answer>\n\\, /, Z\nZ, /, /\nG, Z, G\n</answer>",
        "<answer>\n| \\ | / | z |\n| z | / | / |\n| g | z | g |\n</answer>",
    ])
    def test_wrapped_answers_parse(self, body):
        assert P.parse_answer(body, P.parse_game_id(SMALL)).value == SMALL_SOL

    def test_dot_in_mirror_cells(self):
        parsed = P.parse_answer("<answer>\n. . Z\nZ . .\nG Z G\n</answer>", P.parse_game_id(SMALL))
        assert parsed.value == SMALL_SOL and parsed.notes
        # a '.' in a monster cell stays '.' and check names the rule
        bad = P.parse_answer("<answer>\n. . .\nZ . .\nG Z G\n</answer>", P.parse_game_id(SMALL))
        assert P.check(P.parse_game_id(SMALL), bad).rules == ("monster",)

    def test_fallback_grid(self):
        parsed = P.parse_answer("Final grid\n\\ / Z\nZ / /\nG Z G\n", P.parse_game_id(SMALL))
        assert parsed.value == SMALL_SOL and parsed.source == "fallback_grid"

    @pytest.mark.parametrize("body,why", [
        ("no idea", "no answer block"),
        ("<answer>\\ / Z\nZ / /</answer>", "wrong size"),
        ("<answer>\\ / Z\nZ / /\nG Z W</answer>", "unknown symbol"),
    ])
    def test_parse_errors_say_why(self, body, why):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(body, P.parse_game_id(SMALL))
        assert why in str(e.value)

    def test_one_megabyte_answer_parses_in_linear_time(self):
        inst = P.parse_game_id(SMALL)
        text = ("2 monsters are visible from the top of column 3, so (1,3) is a zombie. " * 14000)[:1_000_000] + \
            "<answer>\\ / Z\nZ / /\nG Z G</answer>"
        t = time.perf_counter()
        assert P.parse_answer(text, inst).value == SMALL_SOL
        assert len(P.parse_claim_text(inst, text)) > 1000
        assert time.perf_counter() - t < 3.0


class TestCheck:
    def test_accepts_solution_and_parsed_answer(self):
        inst = P.parse_game_id(SMALL)
        assert P.check(inst, SMALL_SOL).ok and P.check(inst, ParsedAnswer(SMALL_SOL)).ok

    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"])
    def test_rejects_every_single_cell_corruption(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        for r, c in itertools.product(range(inst.params.h), range(inst.params.w)):
            for alt in "GVZ/\\":
                if alt == sol[r][c]:
                    continue
                res = P.check(inst, _swap(sol, r, c, alt))
                mirror = inst.data.grid[r][c] in "/\\"
                expect = "mirror" if mirror else "monster" if alt in "/\\" else "total"
                assert not res.ok and expect in res.rules, (r, c, alt, res.rules)

    def test_names_each_rule(self):
        inst = P.parse_game_id(SMALL)
        assert P.check(inst, (("G",) * 3,)).rules == ("shape",)
        # swap the zombie at (1,3) and the ghost at (3,1): totals hold, sight counts break
        res = P.check(inst, _swap(_swap(SMALL_SOL, 0, 2, "G"), 2, 0, "Z"))
        assert res.rules == ("sight",)
        # top of column 3 now sees nothing directly at (1,3) (a ghost) and the zombie at (3,2) in a mirror: 1
        details = [v.detail for v in res.violations]
        assert "1 monsters are visible from the top of column 3, the count is 2" in details
        given = P.parse_game_id("3x3de:2,0,3,LRaZRRc,0,0,2,2,1,1,0,2,1,1,2,2")
        assert P.check(given, SMALL_SOL).ok
        assert "given" in P.check(given, _swap(_swap(SMALL_SOL, 1, 0, "G"), 2, 0, "Z")).rules

    def test_any_valid_solution_passes(self):
        inst = P.parse_game_id(AMBIGUOUS)
        res = P.solve(inst, 20)
        assert len(res.solutions) == 9 and res.exhausted
        assert all(P.check(inst, s).ok for s in res.solutions)

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 0.001


class TestClaims:
    def test_c_star_and_given_claims(self):
        inst = P.parse_game_id(SMALL)
        assert P.solution_claims(inst) == {Claim("value", ((1, 3),), "Z"), Claim("value", ((2, 1),), "Z"),
                                           Claim("value", ((3, 1),), "G"), Claim("value", ((3, 2),), "Z"),
                                           Claim("value", ((3, 3),), "G")}
        givens = P.given_claims(inst)
        assert Claim("mirror", ((1, 1),), "\\") in givens and Claim("total", (), ("Z", 3)) in givens
        assert Claim("sight", ((1, 3),), ("top", 2)) in givens and Claim("sight", ((3, 1),), ("left", 1)) in givens
        assert len(givens) == 4 + 3 + 12
        assert all(P.claim_holds(inst, SMALL_SOL, g) for g in givens)

    def test_verify_claim(self):
        inst = P.parse_game_id(SMALL)
        assert P.verify_claim(inst, Claim("value", ((3, 1),), "G")) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((3, 1),), "V")) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("value", ((3, 1),), "V", False)) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("sight", ((1, 3),), ("top", 2))) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("sight", ((1, 3),), ("top", 3))) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("total", (), ("V", 1))) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("mirror", ((1, 2),), "/")) is ClaimLabel.CORRECT
        assert P.verify_claim(P.parse_game_id(AMBIGUOUS), Claim("value", ((1, 1),), "V")) is ClaimLabel.UNVERIFIABLE

    def test_claim_text_reads_back(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        claims = [c for c in P.given_claims(inst) if c.kind != "value"]
        claims += [c.negated() for c in claims[:3]]
        for claim in claims:
            text = "Note: " + P.claim_text(claim) + "."
            assert [c for c, _, _ in P.parse_claim_text(inst, text)] == [claim], text
        assert P.claim_text(Claim("sight", ((1, 3),), ("top", 2))) == "2 monsters are visible from the top of column 3"
        assert P.claim_text(Claim("total", (), ("G", 2))) == "there are 2 ghosts"
        # value claims are read by the generic "(r,c) is <value word>" pattern: their words are VALUE_WORDS keys
        for v in "GVZ":
            text = P.claim_text(Claim("value", ((2, 3),), v))
            assert P.VALUE_WORDS[text.split(" is ", 1)[1]] == v
            assert P.claim_text(Claim("value", ((2, 3),), v, False)).startswith("(2,3) is not a ")

    @pytest.mark.parametrize("claim", [Claim("tent", ((1, 1),), "T"), Claim("value", ((4, 1),), "G"),
                                       Claim("value", ((1, 1),), "X"), Claim("total", (), 3),
                                       Claim("sight", ((1, 1),), ("up", 2)), Claim("mirror", ((1, 1),), "|")])
    def test_bad_claims_raise(self, claim):
        with pytest.raises(ClaimError):
            P.claim_holds(P.parse_game_id(SMALL), SMALL_SOL, claim)


class TestUnits:
    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"])
    def test_units_exact(self, row):
        inst = P.parse_game_id(row["game_id"])
        sol = P.unique_solution(inst)
        doms = P.variables(inst)
        units = P.units(inst)
        assert len(units) == 2 * (inst.params.w + inst.params.h) + 3
        for u in units:
            vals = tuple(P.solution_value(inst, sol, v) for v in u.variables)
            assert u.allowed(vals), u.name
            if not u.variables:  # a line of sight through mirrors only: its count is 0 and it constrains nothing
                assert u.name.startswith("the count 0 ")
                continue
            rejected = any(not u.allowed(vals[:k] + (alt,) + vals[k + 1:])
                           for k, var in enumerate(u.variables) for alt in doms[var] if alt != vals[k])
            rejected = rejected or any(not u.allowed(a) for a in itertools.islice(
                itertools.product(*(doms[v] for v in u.variables)), 5000))
            assert rejected, u.name

    def test_unit_names_and_premises(self):
        inst = P.parse_game_id(SMALL)
        units = {u.name: u for u in P.units(inst)}
        u = units["the count 2 at the top of column 3"]
        assert u.variables == ((1, 3), (3, 2)) and u.premises == (Claim("sight", ((1, 3),), ("top", 2)),)
        assert u.allowed(("Z", "Z")) and u.allowed(("V", "G")) and not u.allowed(("G", "V"))
        assert units["the total of 3 zombies"].premises == (Claim("total", (), ("Z", 3)),)
        assert P.variables(inst) == {(1, 3): ("G", "V", "Z"), (2, 1): ("G", "V", "Z"), (3, 1): ("G", "V", "Z"),
                                     (3, 2): ("G", "V", "Z"), (3, 3): ("G", "V", "Z")}


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_property_random_corruption_rejected_and_round_trip(data):
    row = data.draw(st.sampled_from(ROWS))
    inst = P.parse_game_id(row["game_id"])
    sol = P.unique_solution(inst)
    assert P.parse_answer("<answer>\n" + P.format_answer(inst, sol) + "\n</answer>", inst).value == sol
    cells = [(r, c) for r in range(inst.params.h) for c in range(inst.params.w) if sol[r][c] in "GVZ"]
    r, c = data.draw(st.sampled_from(cells))
    alt = data.draw(st.sampled_from([v for v in "GVZ" if v != sol[r][c]]))
    assert P.check(inst, _swap(sol, r, c, alt)).rules[0] == "total"


@settings(max_examples=20, deadline=None)
@given(st.integers(3, 9), st.integers(3, 9), st.integers(0, 10**6))
def test_property_encode_parse_round_trip(w, h, seed):
    import random

    from reasonshape.envs.undead import _make_data

    if w > 54 // h:
        w = 54 // h
    rng = random.Random(seed)
    grid = [[rng.choice("\\/.......GVZ") for _ in range(w)] for _ in range(h)]
    n = sum(v not in "\\/" for row in grid for v in row)
    g = rng.randint(0, n)
    v = rng.randint(0, n - g)
    data = _make_data(grid, (g, v, n - g - v), [rng.randint(0, 20) for _ in range(2 * (w + h))], w, h)
    inst = P.parse_game_id(f"{w}x{h}dn:" + _encode_desc(data, w, h))
    assert inst.data == data


@pytest.mark.parametrize("text", ["9" * 1_000_000, "(1," * 333_334, "(1,1) and " * 100_000, "(" + " " * 999_999,
                                  "row 1 has " * 100_000, "there are " * 100_000])
def test_claim_reader_linear_on_adversarial_text(text):
    inst = P.parse_game_id(SMALL)
    t = time.perf_counter()
    P.parse_claim_text(inst, text)
    assert time.perf_counter() - t < 2.0
