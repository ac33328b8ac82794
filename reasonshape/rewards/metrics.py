"""The baseline structural metrics reported beside η (paper A §C, Table 2), in one typed record.

:func:`structural_metrics` computes, for one claim graph and its C*, every baseline of METHOD §C: depth, diameter,
average path length, width, |V|, tokens, claim accuracy, |V_ver|/|V_sol|, first-error position and restatements per
unique claim, plus the η fields of :func:`reasonshape.rewards.eta.eta_scores`. Definitions are in
:class:`StructuralMetrics`; the paper names the metrics without formulas, so each precise definition below is a
reasonshape choice unless marked "paper A".

As for η, a :class:`~reasonshape.extraction.graph.ClaimGraph` has its restated static claims merged into their
first occurrence first (paper A §B; ``merge_static=False`` turns it off). A plain :class:`networkx.DiGraph` works
too: claim-level metrics then read the node attributes ``claim`` (default: the node itself), ``label``,
``sentence`` and ``origin`` when present, and are ``None`` when the attributes they need are absent.

Cost: depth and width take O(V + E); diameter and average path length need all shortest paths, O(V (V + E)) time
(one breadth-first search per node, compiled: :func:`scipy.sparse.csgraph.shortest_path` on row blocks) and
O(V) memory per block row (blocks are sized to about 32 MB). Trace graphs have hundreds to a few thousand nodes,
where this is milliseconds; pass ``paths=False`` to skip these two on very large graphs.

References
----------
Paper A: Berdoz et al., "Reasoning Structure of Large Language Models", ICML 2026, arXiv 2606.03883, §3-4 and
Table 2. See ``docs/METHOD.md`` §C.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.errors import ConfigError
from reasonshape.extraction.graph import ClaimGraph
from reasonshape.rewards.eta import (
    _LOOP_MAX_NODES,
    CStarCount,
    _as_digraph,
    _count,
    _entropy_of,
    _eta_scores_flat,
    _Flat,
    _prepare,
    eta_from_entropy,
)

__all__ = ["StructuralMetrics", "structural_metrics"]

_BLOCK_BYTES = 32 * 2**20


@dataclass(frozen=True)
class StructuralMetrics:
    """Structural metrics of one claim graph (paper A §C baselines, plus η).

    Path lengths count edges. "Stated occurrences" are the nodes whose ``origin`` is not ``"placeholder"``
    (placeholders are premises the trace never states, so they are not the model's claims); "unique claims" are
    the distinct claims among them.

    Attributes
    ----------
    n_nodes : int
        |V|, after static merging when it applies (paper A).
    depth : int or None
        Longest directed path, in edges (0 for a graph without edges). ``None`` for an empty graph.
    diameter : int or None
        Longest *shortest* directed path over ordered pairs (u, v), u != v, with v reachable from u; 0 when no
        such pair exists (no edges). ``None`` for an empty graph or with ``paths=False``.
    avg_path_length : float or None
        Mean shortest directed path length over those reachable ordered pairs; ``None`` when there is none (no
        edges), for an empty graph, or with ``paths=False``.
    width : int or None
        Size of the largest longest-path layer: nodes are layered by the length of the longest path reaching them
        from a source (:func:`networkx.topological_generations`); width is the largest layer. ``None`` when empty.
    tokens : int or None
        Completion length in tokens, passed through (paper A reports it beside the graph metrics).
    claim_accuracy : float or None
        correct / (correct + wrong) over unique claims, in [0, 1]; a claim's label is that of its first stated
        occurrence not labelled ``tentative`` (claims stated only tentatively do not count). ``None`` when no
        unique claim is correct or wrong. Needs node ``label`` attributes.
    ver_sol_ratio : float or None
        |V(G_ver)| / |V(G_sol)| (paper A), >= 0; ``None`` when G_sol is empty (no C* claim occurs) or with
        ``reward_only=True``.
    first_error_position : float or None
        (0-based sentence index of the first stated occurrence labelled ``wrong``) / ``n_sentences``, in [0, 1):
        0 means the very first sentence is wrong. ``None`` when no stated occurrence is wrong. Needs ``label`` and
        ``sentence`` attributes.
    restatements_per_claim : float or None
        (stated occurrences - unique claims) / unique claims, >= 0: how often, on average, a claim is stated again
        after its first statement. Counted on occurrences, not on restatement edges, so it does not depend on
        which earlier occurrence an extractor links to. ``None`` when no claim is stated.
    eta, eta_clipped, eta_sol, eta_sol_clipped, h_str, h_str_sol, n_sol_nodes, n_ver_nodes, c_star_size, \
c_star_present
        As :class:`reasonshape.rewards.eta.EtaScores`; with ``reward_only=True`` the G_sol / G_ver fields
        (``eta_sol``, ``eta_sol_clipped``, ``h_str_sol``, ``n_sol_nodes``, ``n_ver_nodes``) are ``None``, and so
        are ``depth`` and ``width``.
    """

    n_nodes: int
    depth: int | None
    diameter: int | None
    avg_path_length: float | None
    width: int | None
    tokens: int | None
    claim_accuracy: float | None
    ver_sol_ratio: float | None
    first_error_position: float | None
    restatements_per_claim: float | None
    eta: float | None
    eta_clipped: float | None
    eta_sol: float | None
    eta_sol_clipped: float | None
    h_str: float | None
    h_str_sol: float | None
    n_sol_nodes: int | None
    n_ver_nodes: int | None
    c_star_size: int
    c_star_present: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for logging, JSON, a DataFrame row)."""
        return asdict(self)


def _paths(flat: _Flat) -> tuple[int, float | None]:
    """(diameter, average shortest path length) over reachable ordered pairs u != v of the flattened graph."""
    n = flat.n
    if flat.src.size == 0:
        return 0, None
    adj = sparse.csr_array((np.ones(flat.src.size), (flat.src, flat.dst)), shape=(n, n))
    block = max(1, _BLOCK_BYTES // (8 * n))
    longest, total, pairs = 0, 0.0, 0
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        d = csgraph.shortest_path(adj, method="D", directed=True, unweighted=True, indices=rows)
        ok = np.isfinite(d) & (d > 0)
        if ok.any():
            vals = d[ok]
            longest = max(longest, int(vals.max()))
            total += float(vals.sum())
            pairs += int(vals.size)
    return longest, (total / pairs if pairs else None)


def _layers(flat: _Flat) -> tuple[int, int]:
    """(depth, width) of a non-empty flattened DAG: the layer of a node is the length of the longest path reaching
    it from a source, which is its :func:`networkx.topological_generations` generation; depth is the largest layer,
    width the size of the largest layer. One pass over the edges in order of their targets (positions are
    topological, so every edge into ``u`` is seen before any edge out of ``u``): O(V + E) on the arrays the η
    computation already built, instead of a second traversal of the networkx graph (reasonshape choice)."""
    if flat.src.size == 0:
        return 0, flat.n
    by_dst = np.argsort(flat.dst, kind="stable")
    layer = [0] * flat.n
    for u, v in zip(flat.src[by_dst].tolist(), flat.dst[by_dst].tolist(), strict=True):
        x = layer[u] + 1
        if x > layer[v]:
            layer[v] = x
    counts = np.bincount(np.asarray(layer, dtype=np.int64))
    return len(counts) - 1, int(counts.max())


def _claim_metrics_indexed(node: Any, index: dict, n_sentences: int,
                           skip: dict | None = None) -> tuple[float | None, float | None, float | None] | None:
    """:func:`_claim_metrics` of a claim graph from its node attribute dicts (``node``, in id order) and its claim
    index (claim -> node ids in id order), hashing no claim: the distinct claims and each claim's first stated
    occurrence are read off the index instead of a set and a dict of claims (~half the cost of the claim metrics on
    a 2k-token trace). ``None`` where the general path must decide: a node without a sentence, sentences that
    decrease along the node order (the trace-order sort would move nodes), a sentence index out of range or a label
    that is not a :class:`ClaimLabel` (the general path raises the same error for it). Otherwise node order is
    trace order, so the index's first entries are the first occurrences: the same values. ``skip``: node ids to
    leave out (the ones static merging removes, :func:`_reward_only_metrics`), as if they were not in ``node`` and
    ``index``. Labels are compared by identity: the first loop returns unless every label it meets is a
    :class:`ClaimLabel` member (or ``None``), and the second reads the same nodes."""
    occurrences = 0
    first_wrong: int | None = None
    have_labels = False
    prev = -1
    label_type, wrong_label = ClaimLabel, ClaimLabel.WRONG
    tentative_label, correct_label = ClaimLabel.TENTATIVE, ClaimLabel.CORRECT
    for v, d in (enumerate(node) if type(node) is list else node.items()):
        if skip and v in skip:
            continue
        s = d.get("sentence")
        if s is None or s < prev or s >= n_sentences:
            return None
        prev = s
        if d.get("origin", "stated") == "placeholder":
            continue
        occurrences += 1
        label = d.get("label")
        if label is None:
            continue
        if type(label) is not label_type:
            return None
        have_labels = True
        if label is wrong_label and first_wrong is None:  # the first in trace order is the smallest sentence
            first_wrong = s
    unique = correct = wrong = 0
    for occ in index.values():
        stated = False
        for v in occ:
            if skip and v in skip:
                continue
            d = node[v]
            if d.get("origin", "stated") == "placeholder":
                continue
            stated = True
            label = d.get("label")
            if label is not None and label is not tentative_label:  # the claim's first non-tentative label
                if label is correct_label:
                    correct += 1
                elif label is wrong_label:
                    wrong += 1
                break
        unique += stated
    accuracy = correct / (correct + wrong) if have_labels and correct + wrong else None
    position = first_wrong / n_sentences if first_wrong is not None else None
    restated = (occurrences - unique) / unique if unique else None
    return accuracy, position, restated


def _claim_metrics(g: nx.DiGraph, n_sentences: int,
                   index: dict | None = None) -> tuple[float | None, float | None, float | None]:
    """(claim accuracy, first-error position, restatements per claim) from node attributes; ``index``: the claim
    index of the claim graph ``g`` belongs to (:func:`_claim_metrics_indexed`)."""
    if index is not None:
        out = _claim_metrics_indexed(g._node, index, n_sentences)
        if out is not None:
            return out
    first_label: dict[Any, Any] = {}
    occurrences = 0
    unique: set = set()
    first_wrong: int | None = None
    have_labels = False
    # Trace order: by sentence when every node has one (stable, so ties keep node order), else node order.
    items = list(g.nodes(data=True))
    if all("sentence" in d for _, d in items):
        items.sort(key=lambda vd: vd[1]["sentence"])
    for v, d in items:
        s = d.get("sentence")
        if s is not None and s >= n_sentences:
            raise ConfigError(f"n_sentences must exceed every sentence index; node {v!r} has sentence {s} but "
                              f"n_sentences={n_sentences}")
        if d.get("origin", "stated") == "placeholder":
            continue
        claim = d.get("claim", v)
        occurrences += 1
        unique.add(claim)
        label = d.get("label")
        if label is None:
            continue
        have_labels = True
        if type(label) is not ClaimLabel:
            try:
                label = ClaimLabel(label)
            except ValueError:
                raise ConfigError(f"node {v!r}: label must be one of {[str(x) for x in ClaimLabel]}, got "
                                  f"{label!r}") from None
        if label != ClaimLabel.TENTATIVE and claim not in first_label:
            first_label[claim] = label
        if label == ClaimLabel.WRONG and s is not None:
            first_wrong = s if first_wrong is None else min(first_wrong, s)
    correct = sum(lab == ClaimLabel.CORRECT for lab in first_label.values())
    wrong = sum(lab == ClaimLabel.WRONG for lab in first_label.values())
    accuracy = correct / (correct + wrong) if have_labels and correct + wrong else None
    position = first_wrong / n_sentences if first_wrong is not None else None
    restated = (occurrences - len(unique)) / len(unique) if unique else None
    return accuracy, position, restated


def _reward_only_metrics(graph: ClaimGraph, c_star: Any, n_sentences: int, tokens: int | None,
                         c_star_count: CStarCount, merge_static: bool) -> StructuralMetrics | None:
    """:func:`structural_metrics` with ``reward_only=True`` for a claim graph, computed on the graph itself and its
    static merge map instead of the merged copy and its arrays (reasonshape choice, for speed: the copy of every node
    dict and the numpy flattening cost more than the rest on a trace-sized graph). ``None`` where the general path
    must decide (it then raises its errors or takes its slower branches): node ids not ``0..n-1`` in order, an edge
    ``u -> v`` with ``u >= v`` in an unmerged graph, no node left, more than ``_LOOP_MAX_NODES`` nodes left (the
    sparse solve), C* not a non-empty collection of Claims, ``n_sentences < 1``, or the claim statistics' own
    fallbacks.

    Why the values are the same: the merged graph keeps the nodes not in the merge map, in id order, with copies of
    their attribute dicts, and its edges are ``(map(u), map(v))`` with ``map(u) < map(v)``, without duplicates
    (:meth:`ClaimGraph._merged`). Its flattening keeps that node order (positions ascend with ids, and every edge
    ascends), so its logical mass is the loop of :func:`reasonshape.rewards.eta._mass_loop`: π = 1/k on its k
    sources, then each node in id order adds ``m(u) / outdeg(u)`` to each successor, the same float operations in
    the same order (a node's successors are distinct, so their order within a row changes no sum). C* nodes and
    claim statistics read the graph's claim index without the merged ids, which is the merged graph's index."""
    if type(c_star) not in (frozenset, set, list, tuple) or not c_star or n_sentences < 1:
        return None
    try:
        items = list(dict.fromkeys(c_star))
    except TypeError:  # an unhashable item: the general path raises its ConfigError
        return None
    for c in items:
        if not isinstance(c, Claim):
            return None
    parts = graph._trusted_parts()
    if parts is not None:  # the extractor's graph, its DiGraph not built: its node list and edge list
        node, edge_list = parts
        succ = None
    else:
        g = graph._g
        node, succ = g._node, g._succ
        edge_list = None
    n0 = len(node)
    if not n0 or n0 > 4 * _LOOP_MAX_NODES:  # (a larger graph keeps more than _LOOP_MAX_NODES nodes: not worth a look)
        return None
    ids = list(range(n0))
    if succ is not None and (list(node) != ids or list(succ) != ids):  # ids 0..n-1 in order (nodes and rows)
        return None
    mapping = graph.static_restatements() if merge_static else {}
    n = n0 - len(mapping)
    if n > _LOOP_MAX_NODES:
        return None
    if edge_list is not None and not mapping:
        m = _mass_of_edge_list(n0, edge_list)
        if m is None:  # edges not in the order the pull loop needs: the DiGraph decides
            return _reward_only_metrics(_built(graph), c_star, n_sentences, tokens, c_star_count, merge_static)
    elif mapping:
        get = mapping.get
        rows: dict[int, set] = {}
        if edge_list is None:
            pairs = ((u, w) for u, nbrs in succ.items() for w in nbrs)
        else:  # the same edges (a DiGraph keeps one of a repeated pair; so does a row set)
            pairs = ((u, w) for u, w, _ in edge_list)
        for u, w in pairs:
            u2 = get(u, u)
            w2 = get(w, w)
            if u2 < w2:
                row = rows.get(u2)
                if row is None:
                    rows[u2] = {w2}
                else:
                    row.add(w2)
        targets = set()
        for row in rows.values():
            targets.update(row)
        # merged-away ids are no sources, stay 0 and are dropped
        m = _pushed_mass(ids, rows, [not (w in targets or w in mapping) for w in ids])
        m = [x for w, x in enumerate(m) if w not in mapping]
    else:
        pred = g._pred
        for u, nbrs in succ.items():
            if nbrs and min(nbrs) <= u:  # an edge against id order: the flattening reorders
                return None
        m = _pushed_mass(ids, succ, [not pred[w] for w in ids])
    h = _entropy_of(np.array(m))
    found = []
    index = graph._index
    for c in items:
        for w in index.get(c, ()):
            if w in mapping:
                continue
            if node[w]["label"] != ClaimLabel.TENTATIVE:
                found.append(w)
                break
    size = _count(tuple(found), len(items), c_star_count)
    claim_stats = _claim_metrics_indexed(node, index, int(n_sentences), mapping)
    if claim_stats is None:
        return None
    accuracy, position, restated = claim_stats
    eta = eta_from_entropy(h, n, size)
    return StructuralMetrics(
        n_nodes=n, depth=None, diameter=None, avg_path_length=None, width=None,
        tokens=None if tokens is None else int(tokens), claim_accuracy=accuracy, ver_sol_ratio=None,
        first_error_position=position, restatements_per_claim=restated, eta=eta,
        eta_clipped=eta_from_entropy(h, n, size, clip=True), eta_sol=None, eta_sol_clipped=None, h_str=h,
        h_str_sol=None, n_sol_nodes=None, n_ver_nodes=None, c_star_size=size, c_star_present=len(found))


def _pushed_mass(ids: list[int], rows: Mapping[int, Collection[int]], sources: list[bool]) -> list[float]:
    """The logical mass by id (:func:`reasonshape.rewards.eta._mass_loop`'s floats, in its order): π = 1/k on the k
    ``sources`` (a DAG has one), then each id of ``ids`` (ascending; every row's targets are above it) adds
    ``m(u) / outdeg(u)`` to each target in its row (distinct targets, so their order changes no sum)."""
    share0 = 1.0 / sources.count(True)
    m = [share0 if source else 0.0 for source in sources]
    for u in ids:
        row = rows.get(u)
        if row:
            share = m[u] / len(row)
            for w in row:
                m[w] += share
    return m


def _built(graph: ClaimGraph) -> ClaimGraph:
    graph.graph  # noqa: B018 (builds the DiGraph of a graph from the extractor)
    return graph


def _mass_of_edge_list(n: int, edges: list) -> list[float] | None:
    """The logical mass of an unmerged claim graph on ids ``0..n-1`` from its edge list, when the list is sorted
    by (target, source) strictly (so without duplicates) with every source below its target (the extractor's
    order: edges grouped by conclusion, in id order, premises ascending); else ``None``. The same floats as the
    push loop of :func:`reasonshape.rewards.eta._mass_loop`: m(v) starts at π(v), then gets
    ``m(u) / outdeg(u)`` added for each predecessor u in ascending order (the push loop adds them in the same order,
    as it visits u in ascending order), and m(u) is final when read (every edge into u comes earlier)."""
    outdeg = [0] * n
    has_pred = [False] * n
    last_v = last_u = -1
    for u, v, _ in edges:
        if not (u < v and (v > last_v or (v == last_v and u > last_u))):
            return None
        last_v, last_u = v, u
        outdeg[u] += 1
        has_pred[v] = True
    k = has_pred.count(False)  # sources (a DAG has one)
    share0 = 1.0 / k
    m = [0.0 if p else share0 for p in has_pred]
    for u, v, _ in edges:
        m[v] += m[u] / outdeg[u]
    return m


def structural_metrics(graph: Any, c_star: Iterable[Any], n_sentences: int, tokens: int | None = None, *,
                       c_star_count: CStarCount = "given", merge_static: bool = True,
                       paths: bool = True, reward_only: bool = False) -> StructuralMetrics:
    """All baseline structural metrics of METHOD §C and η for one claim graph.

    Parameters
    ----------
    graph : ClaimGraph or networkx.DiGraph
        The claim graph (a DAG).
    c_star : iterable of Claim (ClaimGraph) or node ids
        C*, see :func:`reasonshape.rewards.eta.solution_nodes`.
    n_sentences : int
        Number of sentences of the trace, >= 1 when the graph has nodes; must exceed every sentence index.
    tokens : int, optional
        Completion length in tokens (>= 0), passed through.
    c_star_count : {"given", "present"}, optional
        What |C*| counts for η (see :mod:`reasonshape.rewards.eta`).
    merge_static : bool, optional
        Merge restated static claims of a ClaimGraph first (default True, paper A §B).
    paths : bool, optional
        Compute diameter and average path length (O(V (V + E))); default True.
    reward_only : bool, optional
        Compute only what the reward functions read and log: η on G, H_str, |V|, |C*| and the claim statistics
        (claim accuracy, first-error position, restatements per claim). G_sol, G_ver, depth, width and the path
        fields are skipped and ``None``: one mass computation instead of two plus three graph searches
        (reasonshape choice, for speed in training). Default False.

    Returns
    -------
    StructuralMetrics

    Raises
    ------
    ConfigError
        ``n_sentences`` or ``tokens`` out of range, a sentence index >= ``n_sentences``, or a bad ``c_star``.
    NotADAGError, TypeError
        As :func:`reasonshape.rewards.eta.logical_mass`.

    Notes
    -----
    depth, width: O(V + E); diameter, average path length: O(V (V + E)) (see the module docstring); the rest
    O(V + E).
    """
    if isinstance(n_sentences, bool) or not isinstance(n_sentences, (int, np.integer)) or n_sentences < 0:
        raise ConfigError(f"n_sentences must be an int >= 0, got {n_sentences!r}")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, (int, np.integer)) or tokens < 0):
        raise ConfigError(f"tokens must be None or an int >= 0, got {tokens!r}")
    if reward_only and isinstance(graph, ClaimGraph):
        out = _reward_only_metrics(graph, c_star, n_sentences, tokens, c_star_count, merge_static)
        if out is not None:
            return out
    g_in = _prepare(graph, merge_static)
    scores, flat = _eta_scores_flat(g_in, c_star, c_star_count, False, subgraphs=not reward_only)
    g = _as_digraph(g_in)
    n = flat.n
    if n and n_sentences < 1:
        raise ConfigError(f"n_sentences must be >= 1 for a non-empty graph, got {n_sentences}")
    depth = width = diameter = None
    avg = None
    if n and not reward_only:
        depth, width = _layers(flat)
        if paths:
            diameter, avg = _paths(flat)
    accuracy, position, restated = _claim_metrics(g, int(n_sentences),
                                                  g_in._index if isinstance(g_in, ClaimGraph) else None)
    ratio = scores.n_ver_nodes / scores.n_sol_nodes if scores.n_sol_nodes else None
    return StructuralMetrics(
        n_nodes=n, depth=depth, diameter=diameter, avg_path_length=avg, width=width,
        tokens=None if tokens is None else int(tokens), claim_accuracy=accuracy, ver_sol_ratio=ratio,
        first_error_position=position, restatements_per_claim=restated, eta=scores.eta,
        eta_clipped=scores.eta_clipped, eta_sol=scores.eta_sol, eta_sol_clipped=scores.eta_sol_clipped,
        h_str=scores.h_str, h_str_sol=scores.h_str_sol, n_sol_nodes=scores.n_sol_nodes,
        n_ver_nodes=scores.n_ver_nodes, c_star_size=scores.c_star_size, c_star_present=scores.c_star_present)
