"""Tests of reasonshape.extraction.graph.ClaimGraph: builder, invariants, placeholders, JSON, merging, drawing."""

from __future__ import annotations

import json
import pickle

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.errors import ConfigError, NotADAGError
from reasonshape.extraction.graph import SCHEMA, ClaimGraph, ClaimNode
from reasonshape.rewards.eta import eta


def c(r: int, col: int, v=1, positive: bool = True) -> Claim:
    return Claim("value", ((r, col),), v, positive)


def small() -> ClaimGraph:
    """0 clue (static) -> 1 a -> 2 b (wrong); 3 restates the clue and is the premise of 4, a restatement of a."""
    g = ClaimGraph(meta={"puzzle": "toy", "n_sentences": 5})
    g.add_claim(c(1, 1, 3), 0, (0, 10), ClaimLabel.CORRECT, "directly_stated", static=True)  # 0
    g.add_claim(c(1, 2), 1, (11, 20), ClaimLabel.CORRECT)  # 1
    g.add_claim(c(1, 3, 2), 2, (21, 30), ClaimLabel.WRONG)  # 2
    g.add_claim(c(1, 1, 3), 3, (31, 40), ClaimLabel.CORRECT, "directly_stated", static=True)  # 3
    g.add_claim(c(1, 2), 4, (41, 50), ClaimLabel.CORRECT)  # 4
    g.add_inference(0, 1)
    g.add_inference(1, 2)
    g.add_restatement(0, 3)
    g.add_inference(3, 4)
    g.add_restatement(1, 4)
    return g


class TestBuilder:
    def test_ids_in_trace_order_and_views(self):
        g = small()
        assert list(g) == [0, 1, 2, 3, 4]
        assert len(g) == 5 and 3 in g and 7 not in g
        n = g.node(2)
        assert n == ClaimNode(2, c(1, 3, 2), 2, (21, 30), ClaimLabel.WRONG, "stated", False)
        assert [x.id for x in g.nodes()] == [0, 1, 2, 3, 4]
        assert g.premises(4) == (3,)
        assert g.conclusions(0) == (1,)
        assert sorted(g.edges("restatement")) == [(0, 3, "restatement"), (1, 4, "restatement")]
        assert len(g.edges()) == 5
        assert g.claims() == [c(1, 1, 3), c(1, 2), c(1, 3, 2)]
        assert g.occurrences(c(1, 2)) == (1, 4)
        assert g.first_occurrence(c(1, 2)) == 1
        assert g.first_occurrence(c(9, 9)) is None
        assert g.occurrences(c(9, 9)) == ()
        assert "5 nodes" in repr(g)

    def test_add_claim_defaults(self):
        g = ClaimGraph()
        v = g.add_claim(c(1, 1), 0)
        d = g.node(v)
        assert (d.span, d.label, d.origin, d.static) == (None, ClaimLabel.UNVERIFIABLE, "stated", False)

    def test_labels_given_as_strings_and_set_later(self):
        g = ClaimGraph()
        v = g.add_claim(c(1, 1), 0, label="wrong")
        assert g.node(v).label is ClaimLabel.WRONG
        g.set_label(v, "correct")
        assert g.node(v).label is ClaimLabel.CORRECT
        with pytest.raises(NotADAGError, match="label"):
            g.set_label(v, "maybe")

    def test_append_out_of_trace_order_raises(self):
        g = ClaimGraph()
        g.add_claim(c(1, 1), 3)
        with pytest.raises(NotADAGError, match="trace order"):
            g.add_claim(c(1, 2), 2)

    @pytest.mark.parametrize("kwargs, match", [
        ({"claim": "not a claim", "sentence": 0}, "Claim"),
        ({"claim": c(1, 1), "sentence": -1}, "sentence"),
        ({"claim": c(1, 1), "sentence": True}, "sentence"),
        ({"claim": c(1, 1), "sentence": 0, "span": (5, 2)}, "span"),
        ({"claim": c(1, 1), "sentence": 0, "span": (1, 2, 3)}, "span"),
        ({"claim": c(1, 1), "sentence": 0, "origin": "guessed"}, "origin"),
        ({"claim": c(1, 1), "sentence": 0, "label": "sure"}, "label"),
        ({"claim": c(1, 1), "sentence": 0, "static": "yes"}, "static"),
    ])
    def test_bad_attributes(self, kwargs, match):
        with pytest.raises(NotADAGError, match=match):
            ClaimGraph().add_claim(**kwargs)

    def test_edge_invariants(self):
        g = small()
        with pytest.raises(NotADAGError, match="precede") as e:
            g.add_inference(4, 2)  # conclusion before premise: would close a cycle 2 ... 4 -> 2
        assert e.value.edge == (4, 2)
        with pytest.raises(NotADAGError, match="precede"):
            g.add_inference(2, 2)
        with pytest.raises(NotADAGError, match="not in the claim graph"):
            g.add_inference(0, 17)
        with pytest.raises(NotADAGError, match="same claim"):
            g.add_restatement(0, 2)
        with pytest.raises(NotADAGError, match="already exists"):
            g.add_inference(0, 3)  # 0 -> 3 is a restatement already
        g.add_inference(0, 1)  # re-adding the same edge with the same kind is a no-op
        assert len(g.edges()) == 5

    def test_same_sentence_premise_is_allowed(self):
        g = ClaimGraph()
        a = g.add_claim(c(1, 1), 4)
        b = g.add_claim(c(1, 2), 4)
        g.add_inference(a, b)
        assert g.premises(b) == (a,)


class TestPlaceholders:
    def test_placeholder_takes_conclusion_sentence_and_id_before_it(self):
        g = small()
        p = g.add_placeholder(c(2, 2, 4), needed_by=2)
        # Inserted at id 2: the old nodes 2, 3, 4 are now 3, 4, 5.
        assert p == 2
        assert g.node(2).origin == "placeholder"
        assert g.node(2).sentence == g.node(3).sentence == 2
        assert g.node(2).span is None
        assert g.node(3).claim == c(1, 3, 2)
        assert g.premises(3) == (1, 2)
        assert sorted(g.edges()) == [(0, 1, "inference"), (0, 4, "restatement"), (1, 3, "inference"),
                                     (1, 5, "restatement"), (2, 3, "inference"), (4, 5, "inference")]
        assert list(g) == list(range(6))  # iteration order stays id order
        assert g.occurrences(c(1, 2)) == (1, 5)
        assert g.first_occurrence(c(2, 2, 4)) == 2
        g.validate()

    def test_two_placeholders_for_one_conclusion(self):
        g = ClaimGraph()
        x = g.add_claim(c(1, 1), 0)
        p1 = g.add_placeholder(c(2, 1), x)
        p2 = g.add_placeholder(c(2, 2), p1 + 1)
        assert (p1, p2) == (0, 1)
        assert g.node(2).claim == c(1, 1)
        assert g.premises(2) == (0, 1)

    def test_insert_before_must_respect_sentences(self):
        g = small()
        with pytest.raises(NotADAGError, match="lie in"):
            g.add_claim(c(5, 5), 4, before=2)  # between sentences 1 and 2
        with pytest.raises(NotADAGError, match="before"):
            g.add_claim(c(5, 5), 0, before=99)
        v = g.add_claim(c(5, 5), 1, before=2)
        assert v == 2 and g.node(3).claim == c(1, 3, 2)

    def test_inserted_nodes_are_indexed_once(self):
        # an unstated static clue as a placeholder: one occurrence, so static merging and eta do not trip over it
        clue, x = Claim("clue", ((1, 1),), 3), c(1, 2)
        g = ClaimGraph()
        b = g.add_claim(x, 0, label="correct")
        p = g.add_placeholder(clue, needed_by=b, static=True)
        assert g.occurrences(clue) == (p,) and g.static_restatements() == {}
        assert eta(g, [x]) == 0.0
        v = g.add_claim(c(5, 5), 0, before=0)
        assert g.occurrences(c(5, 5)) == (v,) and g.occurrences(clue) == (1,)

    def test_placeholder_needs_existing_conclusion(self):
        with pytest.raises(NotADAGError):
            ClaimGraph().add_placeholder(c(1, 1), 0)


class TestValidate:
    def test_built_graph_is_valid(self):
        g = small()
        assert g.validate() is g

    def test_direct_edit_is_caught(self):
        g = small()
        g.graph.add_edge(4, 0, kind="inference")
        with pytest.raises(NotADAGError, match="precede") as e:
            g.validate()
        assert e.value.edge == (4, 0)

    def test_bad_kind_is_caught(self):
        g = small()
        g.graph.edges[0, 1]["kind"] = "because"
        with pytest.raises(NotADAGError, match="kind"):
            g.validate()

    def test_sentence_order_is_caught(self):
        g = small()
        g.graph.nodes[2]["sentence"] = 0
        with pytest.raises(NotADAGError, match="trace order"):
            g.validate()

    def test_from_digraph(self):
        d = nx.DiGraph()
        d.add_node(0, claim=c(1, 1), sentence=0)
        d.add_node(1, claim=c(1, 2), sentence=1, label="wrong")
        d.add_edge(0, 1)
        g = ClaimGraph.from_digraph(d)
        assert g.edges() == [(0, 1, "inference")]
        assert g.node(1).label is ClaimLabel.WRONG
        d.add_edge(1, 0)
        with pytest.raises(NotADAGError):
            ClaimGraph.from_digraph(d)
        with pytest.raises(NotADAGError, match="ints"):
            ClaimGraph.from_digraph(nx.relabel_nodes(nx.DiGraph([(0, 1)]), {0: "a", 1: "b"}))


class TestJSON:
    def test_round_trip(self):
        g = small()
        g.add_placeholder(Claim("count", ((3, 1),), (2, "T"), False), 2)
        data = json.loads(json.dumps(g.to_json()))
        assert data["graph"]["schema"] == SCHEMA
        assert {"source", "target", "kind"} <= set(data["edges"][0])
        h = ClaimGraph.from_json(data)
        assert h == g
        assert h.node(2).claim.value == (2, "T")  # tuple values survive
        assert h.meta == {"puzzle": "toy", "n_sentences": 5}
        assert list(h) == list(g)

    def test_pickle_round_trip(self):
        g = small()
        h = pickle.loads(pickle.dumps(g))
        assert h == g and h.occurrences(c(1, 2)) == (1, 4)

    def test_round_trip_keeps_merge_map(self):
        m = small().merge_static_restatements()
        h = ClaimGraph.from_json(json.loads(json.dumps(m.to_json())))
        assert h.merged_into == {3: 0}
        assert h == m

    def test_malformed(self):
        with pytest.raises(NotADAGError, match="schema"):
            ClaimGraph.from_json({"nodes": [], "edges": []})
        data = small().to_json()
        del data["nodes"][1]["claim"]
        with pytest.raises(NotADAGError, match="malformed"):
            ClaimGraph.from_json(data)
        data = small().to_json()
        data["edges"].append({"source": 4, "target": 1, "kind": "inference"})
        with pytest.raises(NotADAGError, match="precede"):
            ClaimGraph.from_json(data)


class TestMergeStatic:
    def test_restated_clue_is_merged_and_edges_repointed(self):
        g = small()
        m = g.merge_static_restatements()
        # Node 3 (restated static clue) is merged into 0: its out-edge 3 -> 4 becomes 0 -> 4, the restatement
        # 0 -> 3 vanishes. Non-static restatements (1 -> 4) stay.
        assert list(m) == [0, 1, 2, 4]
        assert sorted(m.edges()) == [(0, 1, "inference"), (0, 4, "inference"), (1, 2, "inference"),
                                     (1, 4, "restatement")]
        assert m.merged_into == {3: 0}
        assert m.occurrences(c(1, 1, 3)) == (0,)
        assert len(g) == 5  # the original is untouched
        m.validate()

    def test_in_edge_from_later_node_is_dropped_earlier_is_kept(self):
        clue = Claim("clue", ((1, 1),), 5)
        g = ClaimGraph()
        g.add_claim(c(1, 2), 0)  # 0
        g.add_claim(clue, 1, static=True)  # 1
        g.add_claim(c(1, 3), 2)  # 2
        g.add_claim(clue, 3, static=True)  # 3
        g.add_inference(0, 3)  # premise before the first occurrence: kept as 0 -> 1
        g.add_inference(2, 3)  # premise after the first occurrence: dropped
        g.add_inference(0, 1)  # already there: 0 -> 3 becomes a duplicate of it
        m = g.merge_static_restatements()
        assert sorted(m.edges()) == [(0, 1, "inference")]
        assert list(m) == [0, 1, 2]

    def test_nothing_to_merge_is_a_copy(self):
        g = ClaimGraph()
        g.add_claim(c(1, 1), 0)
        g.add_claim(c(1, 1), 1)  # restated but not static
        g.add_restatement(0, 1)
        m = g.merge_static_restatements()
        assert m == g and m is not g and m.merged_into == {}

    def test_merge_maps_compose(self):
        g = small()
        m = g.merge_static_restatements().merge_static_restatements()
        assert m.merged_into == {3: 0}


class TestDraw:
    def test_png_written_and_g_sol_changes_it(self, tmp_path):
        g = small()
        g.add_placeholder(c(4, 4), 2)
        plain = g.draw(tmp_path / "g.png", title="toy")
        sol = g.draw(tmp_path / "g_sol.png", c_star=[c(1, 2)])
        for p in (plain, sol):
            data = p.read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
        assert plain.read_bytes() != sol.read_bytes()

    def test_a_wide_generation_is_wrapped_into_columns(self, tmp_path):
        # 59 unconnected claims are one generation: before, one column 4,320 px tall and ~1,000 px wide
        import matplotlib.image

        g = ClaimGraph()
        for i in range(59):
            g.add_claim(c(1 + i // 9, 1 + i % 9, 1 + i % 3), i)
        height, width = matplotlib.image.imread(g.draw(tmp_path / "wide.png", dpi=100)).shape[:2]
        assert height <= 100 * (3 + 0.6 * ClaimGraph.DRAW_COLUMN_NODES) and width > height / 2

    def test_empty_graph_draws(self, tmp_path):
        p = ClaimGraph().draw(tmp_path / "empty.png")
        assert p.read_bytes()[:4] == b"\x89PNG"

    def test_format_follows_the_suffix_and_parents_are_created(self, tmp_path):
        g = small()
        assert g.draw(tmp_path / "new" / "g.svg").read_bytes().lstrip()[:5] == b"<?xml"
        assert g.draw(tmp_path / "g.PDF").read_bytes()[:5] == b"%PDF-"
        assert g.draw(tmp_path / "g").read_bytes()[:4] == b"\x89PNG"  # no suffix: PNG
        with pytest.raises(ConfigError, match=r"suffix must be one of \.png, \.svg, \.pdf.*got '\.txt'"):
            g.draw(tmp_path / "g.txt")
        assert not (tmp_path / "g.txt").exists()


# ---------------------------------------------------------------------- properties
@st.composite
def built_graphs(draw):
    """Random graphs built through the API: claims from a small pool, random forward edges, placeholders."""
    pool = [c(1, i, v) for i in range(1, 4) for v in (1, 2)]
    g = ClaimGraph()
    sentence = 0
    for _ in range(draw(st.integers(1, 12))):
        sentence += draw(st.integers(0, 2))
        g.add_claim(draw(st.sampled_from(pool)), sentence, static=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 20)) if len(g) > 1 else 0):
        u, v = sorted(draw(st.lists(st.integers(0, len(g) - 1), min_size=2, max_size=2, unique=True)))
        if g.graph.has_edge(u, v):
            continue
        if g.node(u).claim == g.node(v).claim and draw(st.booleans()):
            g.add_restatement(u, v)
        else:
            g.add_inference(u, v)
    for _ in range(draw(st.integers(0, 3))):
        g.add_placeholder(draw(st.sampled_from(pool)), draw(st.integers(0, len(g) - 1)))
    return g


@given(built_graphs())
@settings(max_examples=60, deadline=None)
def test_built_graphs_keep_invariants_and_round_trip(g):
    # the claim index as built (validate() rebuilds it): every node once, under its claim, in id order
    for claim in {g.node(v).claim for v in g}:
        assert g.occurrences(claim) == tuple(v for v in g if g.node(v).claim == claim)
    g.validate()
    assert nx.is_directed_acyclic_graph(g.graph)
    assert list(g) == list(range(len(g)))
    for u, v, _ in g.edges():
        assert u < v and g.node(u).sentence <= g.node(v).sentence
    assert ClaimGraph.from_json(json.loads(json.dumps(g.to_json()))) == g
    m = g.merge_static_restatements().validate()
    # After merging, every static claim occurs once (as a static node), and nothing else changed count.
    statics = [x.claim for x in m.nodes() if x.static]
    assert len(statics) == len(set(statics))
    assert len(m) + len(m.merged_into) == len(g)
