"""The performance shortcuts of reasonshape.rewards (eta.py, metrics.py) compute exactly what the library routines
they replace compute: bit-identical entropy (scipy.stats.entropy), the same depth/width as
networkx.topological_generations, the same logical mass from the small-graph loop as from the sparse triangular
solve, and unchanged metrics on random DAGs with arbitrary node labels."""

from __future__ import annotations

import importlib
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy as scipy_entropy

from reasonshape.rewards.eta import _entropy, _entropy_of, _flatten, _mass
from reasonshape.rewards.metrics import _layers, structural_metrics

# the module (reasonshape.rewards exports a function of the same name)
eta_module = importlib.import_module("reasonshape.rewards.eta")


@st.composite
def dags(draw, max_nodes=40):
    """A random DAG on shuffled, non-contiguous int ids (so _flatten takes its reordering paths too)."""
    n = draw(st.integers(1, max_nodes))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=3 * n, unique=True)) if pairs else []
    ids = draw(st.permutations([3 * i + 1 for i in range(n)]))
    g = nx.DiGraph()
    g.add_nodes_from(draw(st.permutations(ids)))
    g.add_edges_from((ids[i], ids[j]) for i, j in edges)
    return g


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-9, 1e6, allow_nan=False), min_size=1, max_size=300))
def test_entropy_is_bit_identical_to_scipy(values):
    m = np.asarray(values, dtype=np.float64)
    assert _entropy(m) == float(scipy_entropy(m))


def test_entropy_hand_value():
    # uniform over 4: ln 4; masses (1, 1, 2) -> p = (1/4, 1/4, 1/2): 2 * (1/4) ln 4 + (1/2) ln 2 = 1.5 ln 2
    assert _entropy(np.ones(4)) == float(scipy_entropy(np.ones(4)))
    assert math.isclose(_entropy(np.array([1.0, 1.0, 2.0])), 1.5 * math.log(2), rel_tol=1e-15)
    assert _entropy_of(np.array([5.0])) == 0.0


@settings(max_examples=200, deadline=None)
@given(dags())
def test_layers_match_topological_generations(g):
    gens = [len(layer) for layer in nx.topological_generations(g)]
    assert _layers(_flatten(g)) == (len(gens) - 1, max(gens))
    assert _mass(_flatten(g)).shape == (len(g),)


def _mass_with_threshold(flat, threshold: int) -> np.ndarray:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(eta_module, "_LOOP_MAX_NODES", threshold)
        return _mass(flat)


@settings(max_examples=200, deadline=None)
@given(dags())
def test_mass_loop_equals_sparse_solve(g):
    flat = _flatten(g)
    loop, sparse = _mass_with_threshold(flat, 10**9), _mass_with_threshold(flat, 0)
    np.testing.assert_allclose(loop, sparse, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n", [511, 512, 513, 1500])
def test_mass_loop_and_sparse_solve_around_the_threshold(n):
    # a random DAG on shuffled ids: _flatten reorders it, so the loop also meets edges not grouped by source
    rng = np.random.default_rng(n)
    src = rng.integers(0, n - 1, 3 * n)
    dst = np.minimum(n - 1, src + 1 + rng.integers(0, 40, 3 * n))
    ids = rng.permutation(n) * 7 + 3
    g = nx.DiGraph()
    g.add_nodes_from(ids.tolist()[::-1])
    g.add_edges_from(zip(ids[src].tolist(), ids[dst].tolist(), strict=True))
    flat = _flatten(g)
    m = _mass(flat)
    sources = np.bincount(flat.dst, minlength=n) == 0
    assert m.shape == (n,) and math.isclose(m[sources].sum(), 1.0) and bool(np.all(m > 0))
    np.testing.assert_allclose(m, _mass_with_threshold(flat, 0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m, _mass_with_threshold(flat, 10**9), rtol=1e-12, atol=1e-15)


def test_layers_hand_value():
    # 0 -> 1 -> 3, 0 -> 2 -> 3, 0 -> 3, 4 alone: layers {0, 4}, {1, 2}, {3}: depth 2, width 2
    g = nx.DiGraph([(0, 1), (1, 3), (0, 2), (2, 3), (0, 3)])
    g.add_node(4)
    assert _layers(_flatten(g)) == (2, 2)


@settings(max_examples=100, deadline=None)
@given(dags(), st.data())
def test_metrics_depth_width_on_random_dags(g, data):
    c_star = data.draw(st.lists(st.sampled_from(list(g)), min_size=1, max_size=3, unique=True))
    for _, d in g.nodes(data=True):
        d["sentence"] = 0
    sm = structural_metrics(g, c_star, 1)
    gens = [len(layer) for layer in nx.topological_generations(g)]
    assert (sm.depth, sm.width, sm.n_nodes) == (len(gens) - 1, max(gens), len(g))
    if g.number_of_edges():
        lengths = [d for s, t in dict(nx.all_pairs_shortest_path_length(g)).items() for d in t.values() if d > 0]
        assert sm.diameter == (max(lengths) if lengths else 0)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_claim_metrics_from_the_index_equal_the_general_path(data):
    """On a claim graph, the claim statistics read off the claim index (no claim hashed) equal those of the general
    path over node attributes: random claims (repeated), labels, placeholders and non-decreasing sentences."""
    from reasonshape.envs.base import Claim, ClaimLabel
    from reasonshape.extraction.graph import ClaimGraph
    from reasonshape.rewards.metrics import _claim_metrics

    n = data.draw(st.integers(1, 30))
    g = ClaimGraph()
    sentence = 0
    for _ in range(n):
        sentence += data.draw(st.integers(0, 2))
        claim = Claim("value", ((data.draw(st.integers(1, 3)), 1),), data.draw(st.integers(1, 3)))
        g.add_claim(claim, sentence, label=data.draw(st.sampled_from(list(ClaimLabel))),
                    origin=data.draw(st.sampled_from(["stated", "directly_stated", "placeholder"])))
    n_sentences = sentence + 1
    assert _claim_metrics(g.graph, n_sentences, g._index) == _claim_metrics(g.graph, n_sentences)
    g.graph.nodes[0]["label"] = "wrong"  # a label that is not a ClaimLabel: the general path decides
    assert _claim_metrics(g.graph, n_sentences, g._index) == _claim_metrics(g.graph, n_sentences)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_reward_only_metrics_on_the_graph_equal_those_of_the_merged_copy(data):
    """The reward-only metrics of a claim graph computed on the graph and its static merge map
    (metrics._reward_only_metrics) equal the general path's on the merged copy, field for field (floats
    bit-identical): random claims (static ones restated), labels, placeholders, inference and restatement edges."""
    from reasonshape.envs.base import Claim, ClaimLabel
    from reasonshape.extraction.graph import ClaimGraph
    from reasonshape.rewards import metrics as metrics_module

    n = data.draw(st.integers(1, 30))
    g = ClaimGraph()
    sentence = 0
    static_of: dict = {}
    for _ in range(n):
        sentence += data.draw(st.integers(0, 2))
        claim = Claim("value", ((data.draw(st.integers(1, 4)), 1),), data.draw(st.integers(1, 3)))
        static = static_of.setdefault(claim, data.draw(st.booleans()))
        g.add_claim(claim, sentence, label=data.draw(st.sampled_from(list(ClaimLabel))),
                    origin=data.draw(st.sampled_from(["stated", "directly_stated", "placeholder"])), static=static)
    for u, v in data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n)):
        if u < v and not g.graph.has_edge(u, v):
            if g.node(u).claim == g.node(v).claim and data.draw(st.booleans()):
                g.add_restatement(u, v)
            else:
                g.add_inference(u, v)
    claims = list(g._index)
    extra = [Claim("value", ((9, 9),), 1)]
    c_star = frozenset(data.draw(st.lists(st.sampled_from(claims + extra), min_size=1, max_size=5)))
    n_sentences = sentence + 1 + data.draw(st.integers(0, 2))
    for c_star_count in ("given", "present"):
        for merge_static in (True, False):
            fast = metrics_module._reward_only_metrics(g, c_star, n_sentences, 5, c_star_count, merge_static)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(metrics_module, "_reward_only_metrics", lambda *a: None)
                general = structural_metrics(g, c_star, n_sentences, 5, c_star_count=c_star_count,
                                             merge_static=merge_static, paths=False, reward_only=True)
            assert fast is not None
            assert repr(fast) == repr(general)
            assert structural_metrics(g, c_star, n_sentences, 5, c_star_count=c_star_count,
                                      merge_static=merge_static, paths=False, reward_only=True) == general


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_reward_only_metrics_of_a_pending_extractor_graph(data):
    """A graph from ClaimGraph._from_trusted (the extractor's) whose DiGraph is not built yet: the reward-only
    metrics read off its node and edge lists (the logical mass pulled along edges sorted by (target, source)) equal
    the general path's on the built graph, field for field; edges in another order fall back to the built graph.
    Building the DiGraph later gives the same graph as building it at once (and pickling builds it)."""
    import pickle

    from reasonshape.envs.base import Claim, ClaimLabel
    from reasonshape.extraction.graph import ClaimGraph
    from reasonshape.rewards import metrics as metrics_module

    n = data.draw(st.integers(1, 30))
    nodes, static_of, sentence = [], {}, 0
    for _ in range(n):
        sentence += data.draw(st.integers(0, 2))
        claim = Claim("value", ((data.draw(st.integers(1, 4)), 1),), data.draw(st.integers(1, 3)))
        nodes.append({"claim": claim, "sentence": sentence, "span": None,
                      "label": data.draw(st.sampled_from(list(ClaimLabel))),
                      "origin": data.draw(st.sampled_from(["stated", "directly_stated", "placeholder"])),
                      "static": static_of.setdefault(claim, data.draw(st.booleans()))})
    pairs = sorted({(u, v) for u, v in data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                                                          max_size=3 * n)) if u < v}, key=lambda e: (e[1], e[0]))
    edges = [(u, v, data.draw(st.sampled_from(["inference", "restatement"]))) for u, v in pairs]
    if data.draw(st.booleans()):
        edges.sort()  # by source: not the pull loop's order
    index: dict = {}
    for i, d in enumerate(nodes):
        index.setdefault(d["claim"], []).append(i)

    def make():
        return ClaimGraph._from_trusted([dict(d) for d in nodes], list(edges), {c: list(v) for c, v in index.items()})

    built = make()
    built.graph  # noqa: B018
    assert make() == built and pickle.loads(pickle.dumps(make())) == built
    assert sorted(make().edges()) == sorted(built.edges()) and make().to_json() == built.to_json()
    c_star = frozenset(data.draw(st.lists(st.sampled_from(list(index)), min_size=1, max_size=5)))
    n_sentences = sentence + 1
    for c_star_count in ("given", "present"):
        for merge_static in (True, False):
            pending = make()
            fast = metrics_module._reward_only_metrics(pending, c_star, n_sentences, None, c_star_count,
                                                       merge_static)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(metrics_module, "_reward_only_metrics", lambda *a: None)
                general = structural_metrics(built, c_star, n_sentences, c_star_count=c_star_count,
                                             merge_static=merge_static, paths=False, reward_only=True)
            assert fast is not None and repr(fast) == repr(general)


def _extracted_graph():
    from reasonshape.envs import get
    from reasonshape.extraction import deduce_trace, extract_deterministic

    p = get("tents")
    inst = p.generate("easy", seed=0, index=0)
    return p, inst, extract_deterministic(p, inst, deduce_trace(p, inst, "verbose", 0).text).graph


def test_reward_only_metrics_refuse_unhashable_c_star_items_as_the_general_path_does():
    """The fast path hands a C* it cannot read to the general path, which raises ConfigError (a ValueError)."""
    from reasonshape.errors import ConfigError

    _, _, g = _extracted_graph()
    for c_star in ([[1, 2]], [next(iter(g.claims())), {"a": 1}]):
        for reward_only in (True, False):
            with pytest.raises(ConfigError, match="hashable"):
                structural_metrics(g, c_star, 5, paths=False, reward_only=reward_only)


def test_an_extracted_graph_pickles_in_the_state_layout_it_always_had(monkeypatch):
    """The DiGraph is built lazily (``_nx`` / ``_pending``), but the pickled state keeps the keys ``_g``, ``_index``,
    ``meta`` and ``merged_into``, so a pickle written before the lazy graph loads, and one written now loads in
    older code."""
    import copy
    import pickle

    from reasonshape.extraction.graph import ClaimGraph
    from reasonshape.rewards.eta import eta

    p, inst, g = _extracted_graph()
    assert g._trusted_parts() is not None  # not built yet
    state = g.__getstate__()
    assert set(state) == {"_g", "_index", "meta", "merged_into"} and isinstance(state["_g"], nx.DiGraph)
    old = ClaimGraph.__new__(ClaimGraph)
    old.__dict__.update({"_g": g.graph.copy(), "_index": g._index, "meta": {}, "merged_into": {}})
    with monkeypatch.context() as mp:  # the class as it was: no __getstate__, its __dict__ pickled as the state
        mp.delattr(ClaimGraph, "__getstate__")
        mp.delattr(ClaimGraph, "__setstate__")
        old_pickle = pickle.dumps(old)
    for h in (pickle.loads(pickle.dumps(g)), pickle.loads(old_pickle), copy.deepcopy(g), copy.copy(g)):
        assert h == g and h.graph.number_of_edges() == g.graph.number_of_edges()
        assert eta(h, p.solution_claims(inst)) == eta(g, p.solution_claims(inst))
