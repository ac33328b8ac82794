r"""η, reasoning-flow efficiency: logical mass, structural entropy, G_sol and G_ver (paper A §C).

The claim graph G = (V, E) is read as an absorbing Markov chain: every node with out-degree 0 gets an edge to one
absorbing node; the transition matrix is the row-normalised adjacency, with Q (transient -> transient) and
R (transient -> absorbing). Initial mass π is uniform over the nodes of in-degree 0 (it sums to 1). The logical
mass is m = π N with the fundamental matrix N = (I - Q)^{-1}; on a DAG it is, in topological order,

.. math:: m(v) = \pi(v) + \sum_{u \to v} m(u) / \mathrm{outdeg}(u).

Structural entropy and η:

.. math:: H_{str} = -\sum_v p(v) \ln p(v), \quad p = m / \textstyle\sum m, \qquad
          \eta = \frac{\ln|V| - H_{str}}{\ln|V| - \ln|C^*|}.

Edge-case policy (METHOD C; reasonshape choices where the paper is silent):

* natural logarithm; H_str in nats, ``0 <= H_str <= ln|V|`` (rounding is clamped into that range);
* η is ``None`` (undefined) when |V| < 2, |C*| < 1, or |V| <= |C*|;
* η >= 0 always (H_str <= ln|V|); it exceeds 1 when H_str < ln|C*|. Evaluation reports the raw value, the reward
  uses the value clipped to [0, 1] (``clip=True``). η is exactly 0 when H_str is within ``1e-12 ln|V|`` of ln|V|
  (a uniform mass, e.g. a pure chain or claims without edges, whose entropy sum rounds to ln|V| ± ~1e-15);
* |C*| is, by default, the number of distinct C* claims passed in (``c_star_count="given"``): the size of the
  instance's minimal solution claim set, a property of the instance (paper A: "the minimal number of claims that
  state the solution"), so every trace of one instance is normalised by the same ln|C*|. With
  ``c_star_count="present"`` it is the number of C* claims whose first occurrence is in the graph (reasonshape
  option, for ablations). The same count is used for η on G and on G_sol;
* the first occurrence of a C* claim is its first occurrence whose label is not ``tentative`` (a hypothesis does
  not state the solution; reasonshape choice); placeholders count;
* with a :class:`~reasonshape.extraction.graph.ClaimGraph`, :func:`eta`, :func:`eta_scores` (and the metrics) first
  merge restated static claims into their first occurrence (paper A §B, "merged for metrics";
  ``merge_static=False`` turns it off). :func:`logical_mass`, :func:`structural_entropy`, :func:`g_sol` and
  :func:`g_ver` work on the graph exactly as given.

Every function accepts a ``ClaimGraph`` or a plain :class:`networkx.DiGraph` (any hashable nodes). With a plain
DiGraph, C* is given as node ids (or, for :func:`eta` only, as the integer |C*|).

Implementation: the graph is flattened to integer arrays in a topological order (node-id order for a claim graph,
which its invariants make topological; insertion order when that is already topological; else Kahn's algorithm
on the edge arrays), and the recurrence above is solved by forward substitution, which visits each node and edge
once: O(V + E) time and memory; up to 512 nodes as a loop, above as the sparse unit-lower-triangular system
(I - Q^T) m = π (:func:`scipy.sparse.linalg.spsolve_triangular`, compiled; see :func:`_mass` for why both).
G_sol/G_ver are multi-source searches with :func:`scipy.sparse.csgraph.breadth_first_order` (one search from a
virtual root instead of one :func:`networkx.ancestors` call per C* node, which would be O(|C*| (V + E))). The
dense (I - Q)^{-1} exists only in the tests, as the oracle.

References
----------
Paper A: Berdoz et al., "Reasoning Structure of Large Language Models", ICML 2026, arXiv 2606.03883, §3 (claim
graphs, absorbing chain, structural entropy, η). See ``docs/METHOD.md`` §B-C.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from itertools import chain
from typing import Any, Literal

import networkx as nx
import numpy as np
from scipy import sparse, special
from scipy.sparse import csgraph
from scipy.sparse.linalg import spsolve_triangular

from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.errors import ConfigError, NotADAGError

__all__ = [
    "EtaScores",
    "logical_mass",
    "structural_entropy",
    "solution_nodes",
    "g_sol",
    "g_ver",
    "eta_from_entropy",
    "eta",
    "eta_scores",
]

CStar = Iterable[Claim] | Iterable[Any] | int
CStarCount = Literal["given", "present"]


# ---------------------------------------------------------------------- flattening
@dataclass(frozen=True)
class _Flat:
    """A DAG as arrays: ``nodes[i]`` is the node at topological position i; edges ``src[k] -> dst[k]`` are
    positions with ``src < dst``."""

    nodes: list
    src: np.ndarray
    dst: np.ndarray

    @property
    def n(self) -> int:
        return len(self.nodes)

    def position(self) -> dict:
        return dict(zip(self.nodes, range(len(self.nodes)), strict=True))


def _as_digraph(graph: Any) -> nx.DiGraph:
    from reasonshape.extraction.graph import ClaimGraph

    if isinstance(graph, ClaimGraph):
        return graph.graph
    if not isinstance(graph, nx.Graph):
        raise TypeError(f"expected a ClaimGraph or a networkx DiGraph, got {type(graph).__name__}")
    if not graph.is_directed() or graph.is_multigraph():
        raise TypeError(f"expected a directed graph without parallel edges (networkx DiGraph), got "
                        f"{type(graph).__name__}")
    return graph


def _cycle_error(g: nx.DiGraph) -> NotADAGError:
    cycle = nx.find_cycle(g)
    u, v = cycle[0][0], cycle[0][1]
    err = NotADAGError(f"the graph has a cycle through edge ({u!r}, {v!r}): {[e[:2] for e in cycle]}; a claim graph "
                       f"must be a DAG")
    err.edge = (u, v)
    return err


def _flatten(graph: Any) -> _Flat:
    g = _as_digraph(graph)
    # The successor dict-of-dicts itself (networkx's documented internal store; views of subgraphs provide the same
    # mapping interface). Iterating it creates no per-node tuples: on a 100k-node graph, G.adjacency() allocates
    # 100k tuples, whose garbage collections traverse every edge dict and cost 10-100x the pass itself.
    succ = getattr(g, "_succ", None)
    if succ is None:
        succ = g.succ
    nodes = list(succ)
    n = len(nodes)
    counts = np.fromiter(map(len, succ.values()), dtype=np.int64, count=n)
    e = int(counts.sum())
    if nodes == list(range(n)):
        dst = np.fromiter(chain.from_iterable(succ.values()), dtype=np.int64, count=e)
    elif n and all(type(v) is int for v in nodes) and 0 <= min(nodes) and max(nodes) < 4 * n:
        # Small non-negative int ids in any order (e.g. a merged claim graph): an array lookup, not a dict.
        pos_of = np.full(max(nodes) + 1, -1, dtype=np.int64)
        pos_of[np.array(nodes, dtype=np.int64)] = np.arange(n, dtype=np.int64)
        dst = pos_of[np.fromiter(chain.from_iterable(succ.values()), dtype=np.int64, count=e)]
    else:
        pos = dict(zip(nodes, range(n), strict=True))
        dst = np.fromiter(map(pos.__getitem__, chain.from_iterable(succ.values())), dtype=np.int64, count=e)
    src = np.repeat(np.arange(n, dtype=np.int64), counts)
    if e and not bool(np.all(src < dst)):
        order = _kahn_order(n, src, dst)
        if order is None:
            raise _cycle_error(g)
        new_of_old = np.empty(n, dtype=np.int64)
        new_of_old[order] = np.arange(n, dtype=np.int64)
        nodes, src, dst = [nodes[i] for i in order.tolist()], new_of_old[src], new_of_old[dst]
    return _Flat(nodes, src, dst)


def _kahn_order(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """A topological order of positions 0..n-1 (Kahn's algorithm), or ``None`` if the graph has a cycle.

    Own code rather than :func:`networkx.topological_sort` because the edges are already integer arrays here, and
    networkx's version, which works on the dict-of-dicts, measured ~1.5 s on a 100k-node, 200k-edge DAG against
    ~0.1 s for this loop (O(V + E) both).
    """
    by_src = np.argsort(src, kind="stable")
    targets = dst[by_src].tolist()
    starts = np.searchsorted(src[by_src], np.arange(n + 1)).tolist()
    indeg = np.bincount(dst, minlength=n).tolist()
    stack = [i for i in range(n) if indeg[i] == 0]
    order = []
    while stack:
        u = stack.pop()
        order.append(u)
        for k in range(starts[u], starts[u + 1]):
            v = targets[k]
            indeg[v] -= 1
            if indeg[v] == 0:
                stack.append(v)
    return np.array(order, dtype=np.int64) if len(order) == n else None


def _restrict(flat: _Flat, keep: np.ndarray) -> _Flat:
    """The induced subgraph on positions where ``keep`` is True (still in topological order)."""
    new = np.cumsum(keep) - 1
    emask = keep[flat.src] & keep[flat.dst]
    nodes = [v for v, k in zip(flat.nodes, keep.tolist(), strict=True) if k]
    return _Flat(nodes, new[flat.src[emask]], new[flat.dst[emask]])


#: Up to this many nodes :func:`_mass` runs the recurrence as a Python loop; above, as a sparse triangular solve.
_LOOP_MAX_NODES = 512


def _mass(flat: _Flat) -> np.ndarray:
    """m = π (I - Q)^{-1} by forward substitution in topological order, shape (n,): m(v) = π(v) + Σ_{u->v}
    m(u) / outdeg(u) (METHOD §C), O(V + E) either way.

    Up to ``_LOOP_MAX_NODES`` nodes the recurrence runs as a plain loop that pushes each node's mass to its
    successors; above, as :func:`scipy.sparse.linalg.spsolve_triangular`. Own loop because building and checking
    the sparse matrix costs ~150 us whatever the size, about three times the loop on a 2k-token trace's graph
    (~200 nodes); the solve wins from ~600 nodes on (measured; reasonshape choice). Same values up to rounding
    (a test compares the two).
    """
    n, src, dst = flat.n, flat.src, flat.dst
    if n == 0:
        return np.zeros(0)
    indeg = np.bincount(dst, minlength=n)
    pi = (indeg == 0).astype(np.float64)
    pi /= pi.sum()  # a non-empty DAG has a source
    if src.size == 0:
        return pi
    if n <= _LOOP_MAX_NODES:
        return _mass_loop(n, src, dst, pi)
    outdeg = np.bincount(src, minlength=n)
    ar = np.arange(n, dtype=np.int64)
    # Row v of (I - Q^T): m(v) - sum_{u->v} m(u)/outdeg(u) = pi(v); lower triangular because src < dst.
    a = sparse.csr_array((np.concatenate([-1.0 / outdeg[src], np.ones(n)]),
                          (np.concatenate([dst, ar]), np.concatenate([src, ar]))), shape=(n, n))
    return spsolve_triangular(a, pi, lower=True, unit_diagonal=True, overwrite_A=True, overwrite_b=True)


def _mass_loop(n: int, src: np.ndarray, dst: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """The recurrence of :func:`_mass` as a loop: in topological order (positions 0..n-1, ``src < dst``), each node's
    final mass is split evenly among its successors."""
    if not bool(np.all(src[1:] >= src[:-1])):  # edges grouped by source (the order _flatten gives them)
        by_src = np.argsort(src, kind="stable")
        src, dst = src[by_src], dst[by_src]
    targets = dst.tolist()
    starts = np.searchsorted(src, np.arange(n + 1)).tolist()
    m = pi.tolist()
    for u in range(n):
        a, b = starts[u], starts[u + 1]
        if a != b:
            share = m[u] / (b - a)
            for k in range(a, b):
                m[targets[k]] += share
    return np.array(m)


def _entropy_of(m: np.ndarray) -> float | None:
    n = m.size
    if n == 0:
        return None
    if n == 1:
        return 0.0
    h = _entropy(m)
    return min(max(h, 0.0), math.log(n))


def _entropy(m: np.ndarray) -> float:
    """Shannon entropy (nats) of the 1-d mass vector ``m`` normalised to sum 1, computed exactly as
    :func:`scipy.stats.entropy` does for one 1-d input (normalise, :func:`scipy.special.entr`, sum), so the value is
    bit-identical (a test checks it), without that function's input-validation wrapper, which costs more than the
    computation on trace-sized graphs (reasonshape choice)."""
    with np.errstate(invalid="ignore"):
        p = m / np.sum(m, axis=0, keepdims=True)
    return float(np.sum(special.entr(p), axis=0))


def _reach(flat: _Flat, seeds: np.ndarray, reverse: bool) -> np.ndarray:
    """Boolean mask of positions reachable from ``seeds`` (seeds included); ``reverse`` follows edges backwards."""
    n = flat.n
    mask = np.zeros(n, dtype=bool)
    if seeds.size == 0:
        return mask
    a, b = (flat.dst, flat.src) if reverse else (flat.src, flat.dst)
    root = np.full(seeds.size, n, dtype=np.int64)
    rows, cols = np.concatenate([a, root]), np.concatenate([b, seeds])
    adj = sparse.csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
    found = csgraph.breadth_first_order(adj, n, directed=True, return_predecessors=False)
    mask[found[found < n]] = True
    return mask


# ---------------------------------------------------------------------- C*
def _prepare(graph: Any, merge_static: bool) -> Any:
    from reasonshape.extraction.graph import ClaimGraph

    if merge_static and isinstance(graph, ClaimGraph):
        mapping = graph.static_restatements()
        if mapping:
            return graph._merged(mapping)  # = merge_static_restatements(), without computing the map twice
    return graph


def _resolve(graph: Any, c_star: CStar) -> tuple[tuple | None, int]:
    """(C* nodes present in ``graph`` in first-occurrence form, number of distinct C* items given).

    The nodes are ``None`` when ``c_star`` is an int."""
    from reasonshape.extraction.graph import ClaimGraph

    if isinstance(c_star, bool) or c_star is None or isinstance(c_star, (str, bytes, Claim)):
        raise ConfigError(f"c_star must be an iterable of Claims or node ids (or an int |C*|), got {c_star!r}")
    if isinstance(c_star, (int, np.integer)):
        if c_star < 0:
            raise ConfigError(f"c_star as a count must be >= 0, got {c_star}")
        return None, int(c_star)
    try:
        items = list(dict.fromkeys(c_star))
    except TypeError:
        raise ConfigError(f"c_star must be an iterable of hashable Claims or node ids, got "
                          f"{type(c_star).__name__}") from None
    n_claims = sum(isinstance(x, Claim) for x in items)
    if n_claims and n_claims != len(items):
        raise ConfigError("c_star mixes Claims and node ids; pass one kind")
    if n_claims:
        if not isinstance(graph, ClaimGraph):
            raise ConfigError("c_star given as Claims needs a ClaimGraph; pass node ids for a plain DiGraph")
        g = graph.graph
        found = []
        for c in items:
            for v in graph.occurrences(c):
                if g.nodes[v]["label"] != ClaimLabel.TENTATIVE:
                    found.append(v)
                    break
        return tuple(found), len(items)
    g = _as_digraph(graph)
    merged = getattr(graph, "merged_into", {}) if isinstance(graph, ClaimGraph) else {}
    nodes = list(dict.fromkeys(merged.get(v, v) for v in items))
    missing = [v for v in nodes if v not in g]
    if missing:
        raise ConfigError(f"c_star names nodes that are not in the graph: {missing[:5]!r}")
    return tuple(nodes), len(nodes)


def _count(nodes: tuple | None, given: int, c_star_count: str) -> int:
    if c_star_count == "given":
        return given
    if c_star_count == "present":
        if nodes is None:
            raise ConfigError("c_star_count='present' needs C* as Claims or node ids, not an int")
        return len(nodes)
    raise ConfigError(f"c_star_count must be 'given' or 'present', got {c_star_count!r}")


def solution_nodes(graph: Any, c_star: Iterable[Any]) -> tuple:
    """The C* nodes of ``graph``: the first occurrence of each C* claim that the graph contains.

    Parameters
    ----------
    graph : ClaimGraph or networkx.DiGraph
    c_star : iterable of Claim (ClaimGraph only) or of node ids
        C*, the minimal claim set stating the solution (``Puzzle.solution_claims``). For a claim, its first
        occurrence whose label is not ``tentative`` is taken (reasonshape choice); claims that never occur are
        skipped. Node ids are taken as they are (ids merged away by static merging map to their target).

    Returns
    -------
    tuple
        Node ids, in the order of ``c_star``, without duplicates.

    Raises
    ------
    ConfigError
        ``c_star`` is not an iterable of Claims or node ids, mixes both, names absent nodes, or gives Claims for a
        plain DiGraph.
    """
    if isinstance(c_star, (int, np.integer)) and not isinstance(c_star, bool):
        raise ConfigError("solution_nodes needs C* as Claims or node ids, not a count")
    return _resolve(graph, c_star)[0]


def _sol_ver_masks(flat: _Flat, pos: dict, nodes: tuple) -> tuple[np.ndarray, np.ndarray]:
    seeds = np.fromiter((pos[v] for v in nodes), dtype=np.int64, count=len(nodes))
    sol = _reach(flat, seeds, reverse=True)
    desc = _reach(flat, seeds, reverse=False)
    outside = desc & ~sol
    ver = outside | (_reach(flat, np.flatnonzero(outside), reverse=True) & ~sol)
    ver[seeds] = True
    return sol, ver


# ---------------------------------------------------------------------- public API
def logical_mass(graph: Any) -> dict[Any, float]:
    """Logical mass m(v) of every node: expected visits of the absorbing chain (paper A §C).

    Parameters
    ----------
    graph : ClaimGraph or networkx.DiGraph
        A DAG (no parallel edges). Edge attributes (weights) are ignored: transitions are uniform over out-edges.

    Returns
    -------
    dict
        node -> m(v) > 0. The initial mass π sums to 1 (uniform over in-degree-0 nodes), so every source has
        ``m >= 1/#sources`` and ``sum(m) >= 1``; a pure chain has m = 1 everywhere. Empty graph: ``{}``.

    Raises
    ------
    NotADAGError
        The graph has a cycle (the message names an edge on it).
    TypeError
        Not a ClaimGraph / DiGraph, or undirected, or a multigraph.

    Notes
    -----
    One forward substitution in topological order, O(V + E) (see the module docstring).

    Examples
    --------
    >>> import networkx as nx
    >>> m = logical_mass(nx.DiGraph([(0, 1), (0, 2), (1, 3), (2, 3)]))
    >>> [round(m[v], 6) for v in range(4)]
    [1.0, 0.5, 0.5, 1.0]
    """
    flat = _flatten(graph)
    return dict(zip(flat.nodes, _mass(flat).tolist(), strict=True))


def structural_entropy(graph: Any) -> float | None:
    """H_str = -Σ p ln p with p = m / Σm (paper A §C), in nats.

    Returns
    -------
    float or None
        In ``[0, ln|V|]`` (float rounding is clamped into it); ``0.0`` for one node; ``None`` for an empty graph.

    Raises
    ------
    NotADAGError, TypeError
        As :func:`logical_mass`.

    Examples
    --------
    >>> import networkx as nx, math
    >>> math.isclose(structural_entropy(nx.path_graph(4, create_using=nx.DiGraph)), math.log(4))
    True
    """
    return _entropy_of(_mass(_flatten(graph)))


def g_sol(graph: Any, c_star: Iterable[Any]) -> frozenset:
    """Nodes of G_sol: the first occurrences of the C* claims and all their ancestors (paper A §C).

    Parameters
    ----------
    graph : ClaimGraph or networkx.DiGraph
    c_star : iterable of Claim (ClaimGraph) or node ids
        See :func:`solution_nodes`.

    Returns
    -------
    frozenset
        Node ids; empty when no C* claim occurs. ``graph.subgraph(...)`` gives the subgraph.

    Raises
    ------
    ConfigError
        Bad ``c_star`` (see :func:`solution_nodes`).
    NotADAGError, TypeError
        As :func:`logical_mass`.

    Notes
    -----
    O(V + E): one multi-source reverse search.
    """
    nodes = solution_nodes(graph, c_star)
    flat = _flatten(graph)
    pos = flat.position()
    seeds = np.fromiter((pos[v] for v in nodes), dtype=np.int64, count=len(nodes))
    mask = _reach(flat, seeds, reverse=True)
    return frozenset(v for v, k in zip(flat.nodes, mask.tolist(), strict=True) if k)


def g_ver(graph: Any, c_star: Iterable[Any]) -> frozenset:
    """Nodes of G_ver, the verification subgraph (paper A §C).

    With S = V(G_sol) and D = the descendants of the C* nodes: G_ver = (D \\ S) ∪ (ancestors(D \\ S) \\ S) ∪ C*
    nodes. So V(G_ver) ∩ V(G_sol) = the C* nodes.

    Parameters
    ----------
    graph : ClaimGraph or networkx.DiGraph
    c_star : iterable of Claim (ClaimGraph) or node ids
        See :func:`solution_nodes`.

    Returns
    -------
    frozenset
        Node ids; empty when no C* claim occurs.

    Raises
    ------
    ConfigError, NotADAGError, TypeError
        As :func:`g_sol`.

    Notes
    -----
    O(V + E): three multi-source searches.
    """
    nodes = solution_nodes(graph, c_star)
    flat = _flatten(graph)
    _, ver = _sol_ver_masks(flat, flat.position(), nodes)
    return frozenset(v for v, k in zip(flat.nodes, ver.tolist(), strict=True) if k)


#: Relative distance of H_str below ln|V| under which η is exactly 0 (see the module docstring).
_UNIFORM_RTOL = 1e-12


def eta_from_entropy(h_str: float | None, n_nodes: int, c_star_size: int, clip: bool = False) -> float | None:
    """η = (ln|V| - H_str) / (ln|V| - ln|C*|) with the edge-case policy of the module docstring.

    Parameters
    ----------
    h_str : float or None
        Structural entropy in nats.
    n_nodes : int
        |V|.
    c_star_size : int
        |C*|.
    clip : bool, optional
        Clip to [0, 1] (the reward's form); default raw (the evaluation's form, may exceed 1).

    Returns
    -------
    float or None
        ``None`` when ``h_str`` is None, |V| < 2, |C*| < 1 or |V| <= |C*|.

    Examples
    --------
    >>> import math
    >>> eta_from_entropy(math.log(5), 5, 1)
    0.0
    >>> eta_from_entropy(0.0, 5, 2) > 1, eta_from_entropy(0.0, 5, 2, clip=True)
    (True, 1.0)
    """
    if h_str is None or n_nodes < 2 or c_star_size < 1 or n_nodes <= c_star_size:
        return None
    ln_v = math.log(n_nodes)
    gap = ln_v - h_str  # >= 0: H_str <= ln|V|
    if gap <= _UNIFORM_RTOL * ln_v:  # a uniform mass, up to the rounding of the entropy sum (also gap < 0)
        return 0.0
    value = gap / (ln_v - math.log(c_star_size))
    return min(value, 1.0) if clip else value


def eta(graph: Any, c_star: CStar, clip: bool = False, *, c_star_count: CStarCount = "given",
        merge_static: bool = True) -> float | None:
    """Reasoning-flow efficiency η of a claim graph (paper A §C).

    Parameters
    ----------
    graph : ClaimGraph or networkx.DiGraph
        A DAG.
    c_star : iterable of Claim, iterable of node ids, or int
        C* (``Puzzle.solution_claims``), its node ids, or directly |C*|.
    clip : bool, optional
        Clip to [0, 1] (reward); default False (raw, evaluation).
    c_star_count : {"given", "present"}, optional
        What |C*| counts (module docstring); default the distinct items of ``c_star``.
    merge_static : bool, optional
        Merge restated static claims of a ClaimGraph first (default True; no effect on a plain DiGraph).

    Returns
    -------
    float or None
        η >= 0 (raw) or in [0, 1] (clipped); ``None`` when undefined: |V| < 2, |C*| < 1 or |V| <= |C*|.

    Raises
    ------
    ConfigError
        Bad ``c_star`` or ``c_star_count``.
    NotADAGError, TypeError
        As :func:`logical_mass`.

    Notes
    -----
    O(V + E) time and memory.

    Examples
    --------
    >>> import networkx as nx
    >>> abs(eta(nx.path_graph(5, create_using=nx.DiGraph), [4])) < 1e-12  # a pure chain: uniform mass, eta = 0
    True
    >>> round(eta(nx.DiGraph([(1, 0), (2, 0), (3, 0), (4, 0)]), [0]), 6)  # funnel: (ln5 - ln4) / ln5
    0.138647
    """
    g = _prepare(graph, merge_static)
    nodes, given = _resolve(g, c_star)
    size = _count(nodes, given, c_star_count)
    flat = _flatten(g)
    return eta_from_entropy(_entropy_of(_mass(flat)), flat.n, size, clip)


@dataclass(frozen=True)
class EtaScores:
    """η and its parts for one claim graph, on G and on G_sol (paper A §C; see :func:`eta_scores`).

    Attributes
    ----------
    eta, eta_clipped : float or None
        η on G, raw (>= 0, may exceed 1) and clipped to [0, 1]; ``None`` when undefined.
    eta_sol, eta_sol_clipped : float or None
        η on the induced subgraph G_sol (its own sources, sinks and mass), with |V| = |V_sol| and the same |C*|.
    h_str, h_str_sol : float or None
        Structural entropy of G and of G_sol, nats; ``None`` for an empty (sub)graph.
    n_nodes : int
        |V| (after static merging when it applies).
    n_sol_nodes, n_ver_nodes : int or None
        |V(G_sol)|, |V(G_ver)| (``None`` only in the reward-only metrics, which skip G_sol and G_ver).
    c_star_size : int
        |C*| used in the denominator (per ``c_star_count``).
    c_star_present : int
        Number of C* claims whose first occurrence is in the graph.
    """

    eta: float | None
    eta_clipped: float | None
    eta_sol: float | None
    eta_sol_clipped: float | None
    h_str: float | None
    h_str_sol: float | None
    n_nodes: int
    n_sol_nodes: int | None
    n_ver_nodes: int | None
    c_star_size: int
    c_star_present: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for logging / JSON)."""
        return asdict(self)


def eta_scores(graph: Any, c_star: Iterable[Any], *, c_star_count: CStarCount = "given",
               merge_static: bool = True) -> EtaScores:
    """η on G and on G_sol, H_str, |V|, |V_sol|, |V_ver| and |C*| in one pass over the graph.

    Parameters
    ----------
    graph : ClaimGraph or networkx.DiGraph
    c_star : iterable of Claim (ClaimGraph) or node ids
        C*; see :func:`solution_nodes` (an int is not enough here: G_sol needs the nodes).
    c_star_count : {"given", "present"}, optional
        What |C*| counts; see the module docstring.
    merge_static : bool, optional
        Merge restated static claims of a ClaimGraph first (default True).

    Returns
    -------
    EtaScores

    Raises
    ------
    ConfigError, NotADAGError, TypeError
        As :func:`eta`; also ConfigError for an int ``c_star``.

    Notes
    -----
    O(V + E). η on G_sol recomputes the mass on the induced subgraph G_sol (paper A §C computes η "on G and
    optionally on G_sol"; the induced-subgraph reading is a reasonshape choice).
    """
    return _eta_scores_flat(graph, c_star, c_star_count, merge_static)[0]


def _eta_scores_flat(graph: Any, c_star: Iterable[Any], c_star_count: CStarCount,
                     merge_static: bool, subgraphs: bool = True) -> tuple[EtaScores, _Flat]:
    """:func:`eta_scores` plus the flattened (merged) graph it was computed on, for callers that need more
    statistics of the same arrays (:func:`reasonshape.rewards.metrics.structural_metrics`). With
    ``subgraphs=False`` only η on G is computed: the G_sol / G_ver fields are ``None``."""
    if isinstance(c_star, (int, np.integer)) and not isinstance(c_star, bool):
        raise ConfigError("eta_scores needs C* as Claims or node ids (G_sol needs the nodes), not a count")
    g = _prepare(graph, merge_static)
    nodes, given = _resolve(g, c_star)
    size = _count(nodes, given, c_star_count)
    flat = _flatten(g)
    h = _entropy_of(_mass(flat))
    if not subgraphs:
        return EtaScores(
            eta=eta_from_entropy(h, flat.n, size), eta_clipped=eta_from_entropy(h, flat.n, size, clip=True),
            eta_sol=None, eta_sol_clipped=None, h_str=h, h_str_sol=None, n_nodes=flat.n, n_sol_nodes=None,
            n_ver_nodes=None, c_star_size=size, c_star_present=len(nodes)), flat
    sol, ver = _sol_ver_masks(flat, flat.position(), nodes)
    sub = _restrict(flat, sol)
    h_sol = _entropy_of(_mass(sub))
    scores = EtaScores(
        eta=eta_from_entropy(h, flat.n, size), eta_clipped=eta_from_entropy(h, flat.n, size, clip=True),
        eta_sol=eta_from_entropy(h_sol, sub.n, size), eta_sol_clipped=eta_from_entropy(h_sol, sub.n, size, True),
        h_str=h, h_str_sol=h_sol, n_nodes=flat.n, n_sol_nodes=int(sol.sum()), n_ver_nodes=int(ver.sum()),
        c_star_size=size, c_star_present=len(nodes))
    return scores, flat
