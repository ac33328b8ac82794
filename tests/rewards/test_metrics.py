"""Tests of reasonshape.rewards.metrics.structural_metrics: hand-derived values and a networkx reference."""

from __future__ import annotations

import math
import pickle
from collections import Counter

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.errors import ConfigError
from reasonshape.extraction.graph import ClaimGraph
from reasonshape.rewards.eta import eta_scores
from reasonshape.rewards.metrics import StructuralMetrics, structural_metrics
from tests.rewards.test_eta import EXAMPLE_C_STAR_NODES, example_claim_graph, example_digraph

C, W, U, T = ClaimLabel.CORRECT, ClaimLabel.WRONG, ClaimLabel.UNVERIFIABLE, ClaimLabel.TENTATIVE


def labelled_example() -> tuple[ClaimGraph, list[Claim]]:
    # The hand-drawn example of test_eta (9 distinct claims, sentences 0, 0, 1, ..., 7) with labels:
    # 0 C, 1 C, 2 C, 3 W, 4 C, 5 U, 6 T, 7 W, 8 C.
    g, c_star = example_claim_graph()
    for v, lab in enumerate([C, C, C, W, C, U, T, W, C]):
        g.set_label(v, lab)
    return g, c_star


class TestHandDrawnExample:
    def test_all_fields(self):
        g, c_star = labelled_example()
        m = structural_metrics(g, c_star, n_sentences=10, tokens=123)
        assert isinstance(m, StructuralMetrics)
        assert m.n_nodes == 9
        assert m.depth == 3  # 0 -> 2 -> 4 -> 5
        # Longest-path layers: {0, 1, 6, 8}, {2, 3}, {4, 7}, {5}.
        assert m.width == 4
        # Shortest paths over the 15 reachable ordered pairs: from 0: 1,1,2,2,2; from 1: 1,1,2,2; from 2: 1,1,2;
        # from 3, 4, 6: 1 each. Longest 2; sum 21, mean 21 / 15 = 1.4.
        assert m.diameter == 2
        assert m.avg_path_length == pytest.approx(1.4)
        assert m.tokens == 123
        # Unique claims with a non-tentative label: correct {0, 1, 2, 4, 8}, wrong {3, 7}; 5 is unverifiable,
        # 6 only tentative: 5 / 7.
        assert m.claim_accuracy == pytest.approx(5 / 7)
        # |G_ver| / |G_sol| = |{2, 3, 4, 5, 6, 7}| / |{0, 1, 2, 4}| = 6 / 4.
        assert m.ver_sol_ratio == pytest.approx(1.5)
        assert m.first_error_position == pytest.approx(2 / 10)  # node 3, sentence 2
        assert m.restatements_per_claim == 0.0
        s = eta_scores(g, c_star)
        assert (m.eta, m.eta_clipped, m.eta_sol, m.h_str, m.n_sol_nodes, m.n_ver_nodes, m.c_star_size) == (
            s.eta, s.eta_clipped, s.eta_sol, s.h_str, s.n_sol_nodes, s.n_ver_nodes, s.c_star_size)

    def test_plain_digraph_has_structure_but_no_claim_metrics(self):
        m = structural_metrics(example_digraph(), EXAMPLE_C_STAR_NODES, n_sentences=10)
        assert (m.depth, m.width, m.diameter, m.ver_sol_ratio) == (3, 4, 2, 1.5)
        assert m.claim_accuracy is None and m.first_error_position is None and m.tokens is None
        assert m.restatements_per_claim == 0.0  # every node is its own claim

    def test_paths_off(self):
        g, c_star = labelled_example()
        m = structural_metrics(g, c_star, 10, paths=False)
        assert m.diameter is None and m.avg_path_length is None and m.depth == 3

    @pytest.mark.parametrize("c_star_count", ["given", "present"])
    def test_reward_only_keeps_eta_and_claim_statistics(self, c_star_count):
        g, c_star = labelled_example()
        full = structural_metrics(g, c_star, 10, tokens=5, c_star_count=c_star_count).to_dict()
        m = structural_metrics(g, c_star, 10, tokens=5, c_star_count=c_star_count, reward_only=True).to_dict()
        skipped = {"depth", "width", "diameter", "avg_path_length", "ver_sol_ratio", "eta_sol", "eta_sol_clipped",
                   "h_str_sol", "n_sol_nodes", "n_ver_nodes"}
        assert all(full[k] is not None for k in skipped) and all(m[k] is None for k in skipped)
        assert {k: v for k, v in m.items() if k not in skipped} == {k: v for k, v in full.items() if k not in skipped}

    def test_record_round_trips(self):
        g, c_star = labelled_example()
        m = structural_metrics(g, c_star, 10)
        assert pickle.loads(pickle.dumps(m)) == m
        assert StructuralMetrics(**m.to_dict()) == m


def restating_graph() -> tuple[ClaimGraph, Claim]:
    """Restatements, a restated static clue, a wrong placeholder, a tentative-only claim.

    Final ids: 0 K (s0, static), 1 P (s1, placeholder, wrong), 2 a (s1), 3 K (s2, static), 4 b (s3, wrong),
    5 a (s4), 6 q (s5, tentative), 7 b (s6, wrong).
    """
    k, a, b, q, p = (Claim("value", ((1, i),), 1) for i in range(1, 6))
    g = ClaimGraph()
    g.add_claim(k, 0, label=C, origin="directly_stated", static=True)
    g.add_claim(a, 1, label=C)
    g.add_claim(k, 2, label=C, origin="directly_stated", static=True)
    g.add_claim(b, 3, label=W)
    g.add_claim(a, 4, label=C)
    g.add_claim(q, 5, label=T)
    g.add_claim(b, 6, label=W)
    g.add_inference(0, 1)
    g.add_restatement(0, 2)
    g.add_inference(2, 3)
    g.add_inference(1, 3)
    g.add_restatement(1, 4)
    g.add_restatement(3, 6)
    g.add_inference(5, 6)
    g.add_placeholder(p, needed_by=1, label=W)
    return g, a


class TestRestatingGraph:
    def test_merged_metrics(self):
        g, a = restating_graph()
        m = structural_metrics(g, [a], n_sentences=8)
        # Static merge removes node 3 (K again): 7 nodes; edges 0->2, 1->2, 0->4, 2->4, 2->5 (restatement),
        # 4->7 (restatement), 6->7.
        assert m.n_nodes == 7
        assert m.depth == 3  # 1 -> 2 -> 4 -> 7
        assert m.width == 3  # layers {0, 1, 6}, {2}, {4, 5}, {7}
        # Pairs: from 0: 2,4 (1), 5,7 (2); from 1: 2 (1), 4,5 (2), 7 (3); from 2: 4,5 (1), 7 (2); 4->7; 6->7.
        # 13 pairs, sum 20, longest 3.
        assert m.diameter == 3
        assert m.avg_path_length == pytest.approx(20 / 13)
        # Stated occurrences 0, 2, 4, 5, 6, 7 (placeholder 1 excluded), unique claims K, a, b, q:
        # (6 - 4) / 4 = 0.5.
        assert m.restatements_per_claim == pytest.approx(0.5)
        # K correct, a correct, b wrong, q only tentative, placeholder P excluded: 2 / 3.
        assert m.claim_accuracy == pytest.approx(2 / 3)
        # First stated wrong occurrence: b at sentence 3 (the wrong placeholder at sentence 1 does not count).
        assert m.first_error_position == pytest.approx(3 / 8)
        # C* = {a}, first occurrence 2: G_sol = {0, 1, 2}; G_ver = {4, 5, 7} + ancestor 6 + C* {2}: 5 / 3.
        assert (m.n_sol_nodes, m.n_ver_nodes) == (3, 5)
        assert m.ver_sol_ratio == pytest.approx(5 / 3)

    def test_unmerged_counts_the_clue_restatement(self):
        g, a = restating_graph()
        m = structural_metrics(g, [a], n_sentences=8, merge_static=False)
        assert m.n_nodes == 8
        assert m.restatements_per_claim == pytest.approx((7 - 4) / 4)


class TestEdgeCases:
    def test_empty_graph(self):
        m = structural_metrics(ClaimGraph(), [], n_sentences=0)
        assert m.n_nodes == 0
        assert all(getattr(m, f) is None for f in ("depth", "diameter", "avg_path_length", "width", "claim_accuracy",
                                                    "ver_sol_ratio", "first_error_position",
                                                    "restatements_per_claim", "eta", "h_str"))

    def test_chain(self):
        # 0 -> 1 -> 2 -> 3: depth = diameter = 3, width 1, 6 pairs with lengths 1,1,1,2,2,3: mean 10 / 6.
        m = structural_metrics(nx.path_graph(4, create_using=nx.DiGraph), [3], n_sentences=1)
        assert (m.depth, m.diameter, m.width) == (3, 3, 1)
        assert m.avg_path_length == pytest.approx(10 / 6)
        assert m.eta == pytest.approx(0.0, abs=1e-12)

    def test_no_edges(self):
        g = nx.DiGraph()
        g.add_nodes_from(range(3))
        m = structural_metrics(g, [0], n_sentences=1)
        assert (m.depth, m.diameter, m.avg_path_length, m.width) == (0, 0, None, 3)

    @pytest.mark.parametrize("kwargs, match", [
        ({"n_sentences": 0}, "n_sentences"),
        ({"n_sentences": -1}, "n_sentences"),
        ({"n_sentences": "10"}, "n_sentences"),
        ({"n_sentences": 7}, "node 8 has sentence 7"),
        ({"n_sentences": 10, "tokens": -5}, "tokens"),
        ({"n_sentences": 10, "tokens": 1.5}, "tokens"),
    ])
    def test_bad_arguments(self, kwargs, match):
        g, c_star = labelled_example()
        with pytest.raises(ConfigError, match=match):
            structural_metrics(g, c_star, **kwargs)

    def test_bad_label_on_plain_digraph(self):
        g = nx.DiGraph([(0, 1)])
        g.nodes[0]["label"] = "sure"
        with pytest.raises(ConfigError, match="label"):
            structural_metrics(g, [1], n_sentences=1)


@st.composite
def random_dags(draw):
    n = draw(st.integers(1, 20))
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1])
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((min(u, v), max(u, v)) for u, v in draw(st.lists(pairs, max_size=3 * n)))
    return g


@given(random_dags())
@settings(max_examples=60, deadline=None)
def test_path_metrics_match_networkx(g):
    m = structural_metrics(g, [], n_sentences=1)
    lengths = [d for _, row in nx.all_pairs_shortest_path_length(g) for d in row.values() if d > 0]
    assert m.diameter == max(lengths, default=0)
    if lengths:
        assert m.avg_path_length == pytest.approx(sum(lengths) / len(lengths))
    else:
        assert m.avg_path_length is None
    assert m.depth == nx.dag_longest_path_length(g)
    # Width: layer of v = longest path from any source to v.
    layer = {}
    for v in nx.topological_sort(g):
        layer[v] = max((layer[u] + 1 for u in g.pred[v]), default=0)
    assert m.width == max(Counter(layer.values()).values())
    assert math.isfinite(m.h_str)
