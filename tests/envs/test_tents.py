"""Tents: game IDs, solver vs the collection's solutions, generation, prompt, answers, rules, claims, units.

Instances come from tests/data/tatham_dev_instances.jsonl (Simon Tatham's Portable Puzzle Collection, MIT).
"""

import itertools
import random
import time

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs import Claim, ClaimLabel, ParsedAnswer
from reasonshape.envs.tents import PUZZLE as P
from reasonshape.envs.tents import TentsParams, _encode_desc, _max_matching
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError
from tests.envs._tatham import dev_rows, sgt_print_accepts

ROWS = dev_rows("tents")
SMALL = "4x4de:ebea,0,2,0,1,1,0,1,1"  # dev instance, solution S;T1,0;T1,2;T3,3
# 'e' = 5 blanks then a tree at 5 = (2,2); 'b' = 2 blanks, tree at 8 = (3,1); 'e' 5 blanks, tree at 14 = (4,3);
# 'a' = 1 blank then the end marker at 16.
SMALL_SOL = (
    (".", "T", ".", "."),
    (".", "Y", ".", "."),
    ("Y", "T", ".", "."),
    (".", ".", "Y", "T"),
)
SMALL_TEXT = ". T . .\n. Y . .\nY T . .\n. . Y T"


@pytest.fixture(scope="module")
def generated():
    return {lvl: P.generate(lvl, seed=11) for lvl in P.LEVELS}


class TestParams:
    def test_full_and_short_forms(self):
        assert P.parse_params("8x8dt") == TentsParams(8, 8, "t")
        assert P.parse_params("10x6") == TentsParams(10, 6, "e")
        assert P.parse_params("7") == TentsParams(7, 7, "e")  # tents.c: a single number is a square
        assert P.format_params(TentsParams(10, 6, "t")) == "10x6dt"
        assert P.format_params(TentsParams(10, 6, "t"), full=False) == "10x6"

    @pytest.mark.parametrize("text,pos", [("", 0), ("x8", 0), ("8x", 2), ("8x8dq", 4), ("8x8d", 4), ("8x8e", 3),
                                          ("3x8", 0), ("8x8dtt", 5)])
    def test_malformed_params_name_position(self, text, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_params(text)
        assert e.value.position == pos


class TestDesc:
    @pytest.mark.parametrize("row", ROWS, ids=lambda r: r["game_id"])
    def test_dev_round_trip_and_solution(self, row):
        inst = P.parse_game_id(row["game_id"])
        assert P.format_game_id(inst) == row["game_id"]
        d = inst.data
        assert _encode_desc(d.trees, d.col_counts, d.row_counts) == inst.desc
        res = P.solve(inst, 2)
        assert res.unique
        assert res.solutions[0] == P.decode_tatham_solution(inst, row["tatham_solve"])

    def test_parsed_content(self):
        inst = P.parse_game_id(SMALL)
        trees = [(r + 1, c + 1) for r in range(4) for c in range(4) if inst.data.trees[r][c]]
        assert trees == [(2, 2), (3, 1), (4, 3)]
        assert inst.data.col_counts == (0, 2, 0, 1) and inst.data.row_counts == (1, 0, 1, 1)

    def test_z_runs_and_empty_counts(self):
        # 5x6 = 30 cells: 'z' = 25 blanks, 'c' = 3 blanks + tree at 28, 'a' = 1 blank + end marker at 30.
        inst = P.parse_desc(TentsParams(5, 6), "zca,0,,1,0,0,0,0,0,0,0,1")
        assert inst.data.trees[5][3] and sum(map(sum, inst.data.trees)) == 1
        assert inst.data.col_counts == (0, 0, 1, 0, 0)  # the empty number reads as 0 (atoi)

    @pytest.mark.parametrize("game_id,pos", [
        ("4x4de:ebea,0,2,0,1,1,0,1", 24),          # 7 counts for 8
        ("4x4de:ebea,0,2,0,1,1,0,1,1,2", 26),      # 9 counts
        ("4x4de:ebeb,0,2,0,1,1,0,1,1", 9),         # tree data past the grid
        ("4x4de:eb,0,2,0,1,1,0,1,1", 8),           # tree data too short
        ("4x4de:eb!a,0,2,0,1,1,0,1,1", 8),         # player marker
        ("4x4de:ebea;0,2,0,1,1,0,1,1", 10),        # bad separator
        ("4x4de:ebea,0,2,0,1,1,0,1,1x", 26),       # trailing junk
        ("4x4de:ebeaa,0,2,0,1,1,0,1,1", 10),       # data after the end marker
    ])
    def test_malformed_desc_names_position(self, game_id, pos):
        with pytest.raises(GameIdError) as e:
            P.parse_game_id(game_id)
        assert e.value.position == pos, e.value

    def test_decode_rejects_bad_move(self):
        inst = P.parse_game_id(SMALL)
        with pytest.raises(ValueError):
            P.decode_tatham_solution(inst, "S;T1,1")  # (x=1, y=1) is a tree
        with pytest.raises(ValueError):
            P.decode_tatham_solution(inst, "S;X1,0")


class TestGeneration:
    def test_unique_and_deterministic_each_level(self, generated):
        for lvl, inst in generated.items():
            assert P.solve(inst, 2).unique
            assert P.format_params(inst.params) == P.LEVELS[lvl]
            p = inst.params
            assert sum(map(sum, inst.data.trees)) == p.w * p.h // 5
            assert P.parse_game_id(inst.game_id).data == inst.data
        assert P.generate("normal", seed=11).game_id == generated["normal"].game_id
        assert P.generate("normal", seed=12).game_id != generated["normal"].game_id

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-tents not installed")
    def test_collection_accepts_native_descs(self, generated):
        for inst in generated.values():
            assert sgt_print_accepts(P, inst.game_id), inst.game_id
        assert not sgt_print_accepts(P, "4x4de:ebea,0,2,0,1,1,0,1")

    @pytest.mark.skipif(P.sgt_binary() is None, reason="sgt-tents not installed")
    def test_sgt_backend(self):
        inst = P.generate("easy", seed=3, backend="sgt")
        assert P.solve(inst, 2).unique
        assert P.generate("easy", seed=3, backend="sgt").game_id == inst.game_id


class TestText:
    def test_prompt_is_self_contained(self):
        text = P.render_prompt(P.parse_game_id(SMALL))
        for needle in ("(row, column)", "<answer>", "not even diagonally", "Trees at: (2,2), (3,1), (4,3).",
                       "Tents per row, rows 1 to 4: 1, 0, 1, 1.", "Tents per column, columns 1 to 4: 0, 2, 0, 1."):
            assert needle in text, needle

    def test_answer_round_trip(self):
        inst = P.parse_game_id(SMALL)
        assert P.format_answer(inst, SMALL_SOL) == SMALL_TEXT
        assert P.parse_answer(f"<answer>{SMALL_TEXT}</answer>", inst).value == SMALL_SOL

    @pytest.mark.parametrize("body", [
        f"I reason a lot.\n<answer>\n```\n{SMALL_TEXT}\n```\n</answer>",
        "<answer>\n.,T,.,.\n.,Y,.,.\nY,T,.,.\n.,.,Y,T\n</answer>",
        "<answer>|.|T|.|.|\n|.|Y|.|.|\n|Y|T|.|.|\n|.|.|Y|T|</answer>",
        "<answer>.t..\n.y..\nyt..\n..yt</answer>",
        f"<think>T T T T</think>Here it is: <answer>\nGrid:\n{SMALL_TEXT}\n</answer>",
    ])
    def test_wrapped_answers_parse(self, body):
        assert P.parse_answer(body, P.parse_game_id(SMALL)).value == SMALL_SOL

    def test_fallback_grid(self):
        parsed = P.parse_answer(f"Final:\n{SMALL_TEXT}\nDone.", P.parse_game_id(SMALL))
        assert parsed.source == "fallback_grid" and parsed.value == SMALL_SOL

    @pytest.mark.parametrize("body,why", [("nothing", "no answer block"),
                                          ("<answer>. T . .\n. Y . .</answer>", "wrong size"),
                                          ("<answer>. T . .\n. Y . .\nY T . .\n. . Y X</answer>", "unknown symbol")])
    def test_parse_errors_say_why(self, body, why):
        with pytest.raises(AnswerParseError) as e:
            P.parse_answer(body, P.parse_game_id(SMALL))
        assert why in str(e.value)

    def test_one_megabyte_answer_parses_in_linear_time(self):
        text = "T . " * 250_000 + f"<answer>{SMALL_TEXT}</answer>"
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
            for v in ("T", ".", "Y"):
                if v != sol[r][c]:
                    bad = [list(x) for x in sol]
                    bad[r][c] = v
                    assert not P.check(inst, bad).ok, (r, c, v)

    def test_names_each_rule(self):
        inst = P.parse_game_id(SMALL)
        g = [list(r) for r in SMALL_SOL]
        g[0][1] = "."
        assert P.check(inst, g).rules == ("row_count", "column_count", "tree_matching")
        g = [list(r) for r in SMALL_SOL]
        g[1][1] = "."
        assert P.check(inst, g).rules == ("tree_changed",)
        g = [list(r) for r in SMALL_SOL]
        g[2][1], g[2][2] = ".", "T"  # tent moved next to nothing but the tree at (4,3)? (3,3) touches (4,4)
        assert "tents_touch" in P.check(inst, g).rules
        assert "column_count" in P.check(inst, g).rules
        assert P.check(inst, [["Q"] * 4] * 4).rules == ("bad_value",)
        assert P.check(inst, SMALL_SOL[:3]).rules == ("shape",)

    def test_tent_without_tree_and_matching(self):
        # 4x4, one tree at (1,1); counts ask for one tent at (3,3), far from the tree.
        inst = P.parse_desc(TentsParams(4, 4), "_o,0,0,1,0,0,0,1,0")
        g = [["Y", ".", ".", "."], [".", ".", ".", "."], [".", ".", "T", "."], [".", ".", ".", "."]]
        assert P.check(inst, g).rules == ("tent_without_tree", "tree_matching")

    def test_two_trees_sharing_one_tent_fail_matching(self):
        # trees at (1,1) and (1,3), a single tent at (1,2) touches both: counts say 1 tent but 2 trees
        inst = P.parse_desc(TentsParams(4, 4), "_am,0,1,0,0,1,0,0,0")
        g = [["Y", "T", "Y", "."], ["."] * 4, ["."] * 4, ["."] * 4]
        assert P.check(inst, g).rules == ("tree_matching",)

    def test_any_valid_solution_passes(self):
        # Find (deterministically) a tree layout with several solutions; every one of them passes check.
        rng = random.Random(5)
        for _ in range(500):
            tents = P._place_tents(5, 5, 5, rng)
            trees = P._place_trees(5, 5, tents, rng) if tents else None
            if trees is None:
                continue
            tree_grid = [[(r, c) in trees for c in range(5)] for r in range(5)]
            cols = [sum((r, c) in tents for r in range(5)) for c in range(5)]
            rows = [sum((r, c) in tents for c in range(5)) for r in range(5)]
            inst = P.parse_desc(TentsParams(5, 5), _encode_desc(tree_grid, cols, rows))
            sols = P.solve(inst, 10).solutions
            if len(sols) >= 2:
                break
        else:
            pytest.fail("no multi-solution instance found")
        assert all(P.check(inst, s).ok for s in sols)

    def test_check_is_fast(self):
        inst = P.parse_game_id(ROWS[-1]["game_id"])
        sol = P.unique_solution(inst)
        t = time.perf_counter()
        for _ in range(200):
            P.check(inst, sol)
        assert (time.perf_counter() - t) / 200 < 2e-3


def test_matching_beyond_the_greedy_pass():
    # greedy pairs tent 0 with tree "a" and then finds none for tent 1; the maximum pairs both
    assert _max_matching([0, 1], {0: ["a", "b"], 1: ["a"]}) == {"b": 0, "a": 1}
    assert _max_matching([0, 1], {0: ["a"], 1: ["a"]}) in ({"a": 0}, {"a": 1})
    assert _max_matching([], {}) == {} and _max_matching([0], {0: []}) == {}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32))
def test_matching_agrees_with_networkx(seed):
    rng = random.Random(seed)
    left = list(range(rng.randint(0, 8)))
    adj = {u: rng.sample(range(8), rng.randint(0, 3)) for u in left}
    g = nx.Graph()
    g.add_nodes_from(("L", u) for u in left)
    g.add_nodes_from(("R", v) for v in range(8))
    g.add_edges_from((("L", u), ("R", v)) for u in left for v in adj[u])
    ref = nx.bipartite.maximum_matching(g, top_nodes=[("L", u) for u in left])
    ours = _max_matching(left, adj)
    assert len(ours) == len(ref) // 2
    assert all(v in adj[u] for v, u in ours.items())


class TestClaims:
    def test_c_star_and_given_claims(self):
        inst = P.parse_game_id(SMALL)
        assert P.solution_claims(inst) == {Claim("value", ((1, 2),), "T"), Claim("value", ((3, 2),), "T"),
                                           Claim("value", ((4, 4),), "T")}
        givens = P.given_claims(inst)
        assert Claim("value", ((2, 2),), "Y") in givens
        assert Claim("row_count", ((2, 1),), 0) in givens and Claim("column_count", ((1, 2),), 2) in givens
        assert len(givens) == 3 + 8
        assert all(P.verify_claim(inst, g) is ClaimLabel.CORRECT for g in givens)

    def test_verify_claim(self):
        inst = P.parse_game_id(SMALL)
        assert P.verify_claim(inst, Claim("value", ((1, 2),), "T")) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("value", ((1, 1),), "T")) is ClaimLabel.WRONG
        assert P.verify_claim(inst, Claim("value", ((1, 1),), ".")) is ClaimLabel.CORRECT
        assert P.verify_claim(inst, Claim("row_count", ((1, 1),), 2)) is ClaimLabel.WRONG

    def test_claim_text_reads_back(self):
        inst = P.parse_game_id(SMALL)
        assert P.claim_text(Claim("value", ((3, 4),), "T")) == "(3,4) is a tent"
        assert P.claim_text(Claim("value", ((3, 4),), "T", False)) == "(3,4) is not a tent"
        assert P.claim_text(Claim("value", ((3, 4),), ".")) == "(3,4) is grass"
        assert P.claim_text(Claim("value", ((2, 2),), "Y")) == "(2,2) is a tree"
        # value claims: "(r,c) is <word>" with the word in VALUE_WORDS
        for v in ("T", ".", "Y"):
            text = P.claim_text(Claim("value", ((1, 1),), v))
            assert P.VALUE_WORDS[text.split(" is ", 1)[1]] == v
        # count claims: read back by parse_claim_text, also inside prose
        for claim in P.given_claims(inst)[3:]:
            for c in (claim, claim.negated()):
                text = P.claim_text(c)
                found = P.parse_claim_text(inst, f"Now {text}, so ...")
                assert [x[0] for x in found] == [c], text
        assert P.claim_text(Claim("row_count", ((3, 1),), 1)) == "row 3 has 1 tent"
        assert P.claim_text(Claim("column_count", ((1, 2),), 2, False)) == "column 2 does not have 2 tents"

    @pytest.mark.parametrize("claim", [Claim("visible", ((1, 1),), 2), Claim("value", ((5, 1),), "T"),
                                       Claim("value", ((1, 1),), "X"), Claim("row_count", ((1, 2),), 1)])
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
            assert all(x in doms[v] for v, x in zip(u.variables, vals, strict=True))
            flips = [vals[:i] + ("." if x == "T" else "T",) + vals[i + 1:] for i, x in enumerate(vals)]
            flips += [(".",) * len(vals), ("T",) * len(vals)]
            assert any(not u.allowed(f) for f in flips), u.name
            assert set(u.variables) <= set(doms)

    def test_unit_names_and_premises(self):
        inst = P.parse_game_id(SMALL)
        units = {u.name: u for u in P.units(inst)}
        assert units["row 1"].premises == (Claim("row_count", ((1, 1),), 1),)
        assert units["column 2"].variables == ((1, 2), (3, 2), (4, 2))  # (2,2) is a tree
        assert units["the tree at (2,2)"].variables == ((1, 2), (2, 1), (2, 3), (3, 2))
        assert units["the tree at (2,2)"].premises == (Claim("value", ((2, 2),), "Y"),)
        assert "the 2x2 block at (1,1)" in units and "no tree next to (1,4)" in units
        assert "no tree next to (1,2)" not in units

    def test_local_units_plus_matching_define_solutions(self):
        # Brute force on the 4x4 dev instance: assignments satisfying every unit AND the matching = the solutions.
        inst = P.parse_game_id(SMALL)
        doms = P.variables(inst)
        cells = sorted(doms)
        units = P.units(inst)
        found = []
        for bits in itertools.product((".", "T"), repeat=len(cells)):
            a = dict(zip(cells, bits, strict=True))
            if all(u.allowed(tuple(a[v] for v in u.variables)) for u in units):
                grid = tuple(tuple(a.get((r, c), "Y") for c in range(1, 5)) for r in range(1, 5))
                if P.check(inst, grid).ok:
                    found.append(grid)
        assert found == [SMALL_SOL]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_property_random_corruption_rejected(data):
    inst = P.parse_game_id(data.draw(st.sampled_from(ROWS))["game_id"])
    sol = P.unique_solution(inst)
    assert P.parse_answer("<answer>" + P.format_answer(inst, sol) + "</answer>", inst).value == sol
    r, c = data.draw(st.integers(0, inst.params.h - 1)), data.draw(st.integers(0, inst.params.w - 1))
    v = data.draw(st.sampled_from([x for x in "T.Y" if x != sol[r][c]]))
    bad = [list(x) for x in sol]
    bad[r][c] = v
    assert not P.check(inst, bad).ok


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32))
def test_property_desc_round_trip(seed):
    rng = random.Random(seed)
    w, h = rng.randint(4, 30), rng.randint(4, 30)
    trees = [[rng.random() < rng.choice([0.0, 0.05, 0.3]) for _ in range(w)] for _ in range(h)]
    cols, rows = [rng.randint(0, 12) for _ in range(w)], [rng.randint(0, 12) for _ in range(h)]
    inst = P.parse_desc(TentsParams(w, h), _encode_desc(trees, cols, rows))
    assert inst.data.trees == tuple(map(tuple, trees))
    assert inst.data.col_counts == tuple(cols) and inst.data.row_counts == tuple(rows)


def test_levels_grow_in_size():
    sizes = [P.level_params(lvl) for lvl in ("trivial", "easy", "normal", "hard")]
    areas = [getattr(p, "h", p.w) * p.w for p in sizes]
    assert areas == sorted(areas) and len(set(areas)) == 4
