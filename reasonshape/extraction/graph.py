"""The claim graph: claim occurrences of one reasoning trace and the inferences and restatements between them.

A claim graph G = (V, E) (paper A §B) has one node per claim *occurrence*: a :class:`~reasonshape.envs.base.Claim`
stated (or needed) at one place of the trace. Edges are ``"inference"`` (premise -> conclusion) and
``"restatement"`` (earlier occurrence -> later occurrence of the same claim). Premises always precede their
conclusions in the trace, so G is a DAG.

:class:`ClaimGraph` wraps a :class:`networkx.DiGraph` and keeps these invariants (reasonshape choice; the paper
states only the DAG property):

* node ids are ints in trace order: a graph built with :meth:`ClaimGraph.add_claim` has ids ``0..n-1`` in order of
  occurrence, and sentence indices never decrease along ids;
* every edge ``u -> v`` has ``u < v`` (so the graph is acyclic and node-id order is a topological order) and
  ``sentence(u) <= sentence(v)``;
* a restatement edge joins two occurrences of the same claim;
* node attributes: ``claim`` (Claim), ``sentence`` (int >= 0, 0-based sentence index), ``span`` (``(start, end)``
  character offsets into the trace, ``start <= end``, or ``None``), ``label``
  (:class:`~reasonshape.envs.base.ClaimLabel`), ``origin`` (``"stated"``, ``"directly_stated"`` or
  ``"placeholder"``), ``static`` (bool: a fact about the given puzzle, e.g. a clue); edge attribute ``kind``.

Any break raises :class:`~reasonshape.errors.NotADAGError` naming the offending node or edge (its ``edge``
attribute holds the ``(u, v)`` pair when an edge is at fault).

Placeholders
------------
Paper A §B step 3 adds a *placeholder* claim for every premise a rule needs but the trace never states. A
placeholder must precede the conclusion that needs it, so :meth:`ClaimGraph.add_placeholder` (and
``add_claim(..., before=k)``) *inserts* the node: it takes id ``k``, every node with id ``>= k`` moves up by one
(their edges move with them), and the placeholder gets the sentence index of the claim that needs it. Insertion
costs O(V + E) (the graph is rebuilt so that iteration order stays id order); callers that hold node ids across an
insertion must shift the ones ``>= k``. Source: reasonshape choice.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from reasonshape.envs.base import Claim, ClaimLabel
from reasonshape.errors import ConfigError, NotADAGError

__all__ = ["ORIGINS", "EDGE_KINDS", "SCHEMA", "ClaimNode", "ClaimGraph"]

#: Allowed values of the node attribute ``origin``.
ORIGINS: tuple[str, ...] = ("stated", "directly_stated", "placeholder")
#: Allowed values of the edge attribute ``kind``.
EDGE_KINDS: tuple[str, ...] = ("inference", "restatement")
#: Version tag written into the JSON form (``graph.schema``) and checked when reading it back.
SCHEMA = "reasonshape.claim_graph/1"

# Colours of the drawing, by label (colour-blind safe tab10 entries).
_LABEL_COLOURS = {
    ClaimLabel.CORRECT: "#2ca02c",
    ClaimLabel.WRONG: "#d62728",
    ClaimLabel.UNVERIFIABLE: "#7f7f7f",
    ClaimLabel.TENTATIVE: "#ff7f0e",
}


def _digraph_from_dicts(graph_attrs: Mapping[str, Any], node: dict, succ: dict, pred: dict) -> nx.DiGraph:
    """A DiGraph over ready-made inner dicts (networkx's documented dict-of-dicts store: ``_node`` node -> attribute
    dict, ``_succ``/``_pred`` node -> neighbour -> the SAME edge attribute dict). Assigning ``_node``/``_adj``/
    ``_pred`` goes through networkx's cache-resetting descriptors, the supported way to swap the store."""
    g = nx.DiGraph()
    g.graph.update(graph_attrs)
    g._node = node
    g._adj = succ
    g._pred = pred
    return g


def _error(message: str, edge: tuple[int, int] | None = None) -> NotADAGError:
    err = NotADAGError(message)
    err.edge = edge
    return err


@dataclass(frozen=True)
class ClaimNode:
    """A read-only view of one node (claim occurrence) of a :class:`ClaimGraph`.

    Attributes
    ----------
    id : int
        Node id: position in trace order.
    claim : Claim
        The claim stated (or, for a placeholder, needed).
    sentence : int
        0-based index of the sentence the occurrence belongs to.
    span : tuple of (int, int) or None
        ``[start, end)`` character offsets into the trace; ``None`` for placeholders.
    label : ClaimLabel
        correct / wrong / unverifiable / tentative (paper A §B step 4).
    origin : str
        ``"stated"``, ``"directly_stated"`` or ``"placeholder"``.
    static : bool
        A fact about the given puzzle (a clue, a given), merged across restatements for metrics.
    """

    id: int
    claim: Claim
    sentence: int
    span: tuple[int, int] | None
    label: ClaimLabel
    origin: str
    static: bool


class ClaimGraph:
    """A claim graph of one trace (paper A §B): nodes are claim occurrences, edges inferences and restatements.

    Build it incrementally in trace order with :meth:`add_claim`, :meth:`add_placeholder`, :meth:`add_inference`
    and :meth:`add_restatement`; every call checks the invariants listed in the module docstring, so a graph
    built through the API is always valid. :meth:`validate` re-checks everything (for graphs read from JSON or
    edited through :attr:`graph`).

    Parameters
    ----------
    meta : mapping, optional
        Free JSON-serialisable metadata kept with the graph (e.g. puzzle name, game ID, number of sentences).

    Examples
    --------
    >>> from reasonshape.envs.base import Claim
    >>> g = ClaimGraph()
    >>> a = g.add_claim(Claim("value", ((1, 1),), 3), sentence=0, origin="directly_stated")
    >>> b = g.add_claim(Claim("value", ((1, 2),), 1), sentence=1)
    >>> g.add_inference(a, b)
    >>> p = g.add_placeholder(Claim("value", ((1, 3),), 2), needed_by=b)
    >>> (p, len(g), g.premises(p + 1))
    (1, 3, (0, 1))

    Notes
    -----
    Node ids of a freshly built graph are ``0..n-1``. :meth:`merge_static_restatements` keeps the surviving ids
    (so they may have gaps) and records where merged nodes went in :attr:`merged_into`.
    """

    def __init__(self, meta: Mapping[str, Any] | None = None):
        self._g = nx.DiGraph()
        self._index: dict[Claim, list[int]] = {}
        self.meta: dict[str, Any] = dict(meta or {})
        self.merged_into: dict[int, int] = {}

    # The DiGraph of a graph made by _from_trusted is built on first use (reasonshape choice, for speed: the rewards
    # read only the node attribute dicts and the edges, :meth:`_trusted_parts`, and building the successor and
    # predecessor rows and one attribute dict per edge cost ~20% of the extractor's graph step on a 2k-token trace).
    # ``_nx`` holds the DiGraph once built; ``_pending`` the (nodes, edges) it is built from until then. Every
    # method reads the graph through ``_g``, so it behaves as if built at once; pickling and copying build it first
    # and keep the state the class always had (``_g``, ``_index``, ``meta``, ``merged_into``), so pickles load across
    # versions. (Like the rest of the class, not thread-safe: the rewards' scorer holds a lock.)
    @property
    def _g(self) -> nx.DiGraph:
        g = self._nx
        if g is None:
            nodes, edges = self._pending
            n = len(nodes)
            node = dict(enumerate(nodes))
            succ: dict[int, dict] = {i: {} for i in range(n)}
            pred: dict[int, dict] = {i: {} for i in range(n)}
            for u, v, k in edges:
                succ[u][v] = pred[v][u] = {"kind": k}
            g = self._nx = _digraph_from_dicts({}, node, succ, pred)
            self._pending = None
        return g

    @_g.setter
    def _g(self, g: nx.DiGraph) -> None:
        self._nx = g
        self._pending = None

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_nx", "_pending")}
        state["_g"] = self._g  # built first: the state holds the DiGraph, as it always did
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        g = state.pop("_g")
        self.__dict__.update(state)
        self._g = g

    def _trusted_parts(self) -> tuple[list[dict], list[tuple[int, int, str]]] | None:
        """``(nodes, edges)`` of a graph from :meth:`_from_trusted` whose DiGraph is not built yet: the node
        attribute dicts in id order (ids 0..n-1) and the ``(u, v, kind)`` edges in the order the DiGraph takes them;
        ``None`` once it is built (or for any other graph): then read :attr:`graph`."""
        return self._pending

    # ------------------------------------------------------------------ views
    @property
    def graph(self) -> nx.DiGraph:
        """The underlying :class:`networkx.DiGraph` (nodes iterate in id order). Edit it only through the
        builder methods, or call :meth:`validate` afterwards."""
        return self._g

    def to_networkx(self) -> nx.DiGraph:
        """A copy of the underlying DiGraph, attributes included."""
        return self._g.copy()

    def __len__(self) -> int:
        return self._g.number_of_nodes()

    def __iter__(self) -> Iterator[int]:
        return iter(self._g)

    def __contains__(self, node: object) -> bool:
        return node in self._g

    def __repr__(self) -> str:
        return (f"<ClaimGraph: {len(self)} nodes, {self._g.number_of_edges()} edges, "
                f"{len(self._index)} distinct claims>")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClaimGraph):
            return NotImplemented
        return (list(self._g.nodes(data=True)) == list(other._g.nodes(data=True))
                and sorted(self.edges()) == sorted(other.edges()) and self.meta == other.meta)

    __hash__ = None  # mutable

    def node(self, node: int) -> ClaimNode:
        """The :class:`ClaimNode` view of ``node``. Raises :class:`NotADAGError` if it is not in the graph."""
        self._need(node)
        d = self._g.nodes[node]
        return ClaimNode(node, d["claim"], d["sentence"], d["span"], d["label"], d["origin"], d["static"])

    def nodes(self) -> Iterator[ClaimNode]:
        """All nodes as :class:`ClaimNode` views, in trace (id) order."""
        for v, d in self._g.nodes(data=True):
            yield ClaimNode(v, d["claim"], d["sentence"], d["span"], d["label"], d["origin"], d["static"])

    def edges(self, kind: str | None = None) -> list[tuple[int, int, str]]:
        """``(u, v, kind)`` triples, optionally only those of one ``kind`` (``"inference"``/``"restatement"``)."""
        if kind is not None and kind not in EDGE_KINDS:
            raise _error(f"edge kind must be one of {EDGE_KINDS}, got {kind!r}")
        return [(u, v, k) for u, v, k in self._g.edges(data="kind") if kind is None or k == kind]

    def premises(self, node: int) -> tuple[int, ...]:
        """The premises of ``node``: sources of its incoming inference edges, in id order."""
        self._need(node)
        return tuple(sorted(u for u, k in self._g.pred[node].items() if k["kind"] == "inference"))

    def conclusions(self, node: int) -> tuple[int, ...]:
        """The conclusions drawn from ``node``: targets of its outgoing inference edges, in id order."""
        self._need(node)
        return tuple(sorted(v for v, k in self._g.succ[node].items() if k["kind"] == "inference"))

    def claims(self) -> list[Claim]:
        """The distinct claims, in order of first occurrence."""
        return sorted(self._index, key=lambda c: self._index[c][0])

    def occurrences(self, claim: Claim) -> tuple[int, ...]:
        """Node ids of every occurrence of ``claim``, in trace order (empty if it never occurs)."""
        return tuple(self._index.get(claim, ()))

    def first_occurrence(self, claim: Claim) -> int | None:
        """Node id of the first occurrence of ``claim`` (any origin or label), or ``None`` if it never occurs."""
        occ = self._index.get(claim)
        return occ[0] if occ else None

    # ------------------------------------------------------------------ building
    def add_claim(self, claim: Claim, sentence: int, span: tuple[int, int] | None = None,
                  label: ClaimLabel | str = ClaimLabel.UNVERIFIABLE, origin: str = "stated", static: bool = False,
                  *, before: int | None = None) -> int:
        """Add one claim occurrence and return its node id.

        Parameters
        ----------
        claim : Claim
            The claim.
        sentence : int
            0-based sentence index, >= 0. Without ``before`` it must be >= the sentence of the last node (trace
            order).
        span : (int, int), optional
            ``[start, end)`` character offsets into the trace, ``0 <= start <= end``.
        label : ClaimLabel or str, optional
            Defaults to ``unverifiable`` (not labelled yet; set it later with :meth:`set_label`).
        origin : {"stated", "directly_stated", "placeholder"}, optional
        static : bool, optional
            A fact about the given puzzle (clue, given).
        before : int, optional
            Insert at this existing id instead of appending: nodes with id >= ``before`` move up by one.
            ``sentence`` must lie between the sentences of the neighbours in trace order.

        Returns
        -------
        int
            The new node's id (``len(graph) - 1`` when appending, ``before`` when inserting).

        Raises
        ------
        NotADAGError
            An attribute out of range, or a position that breaks trace order.
        """
        attrs = self._check_attrs(claim, sentence, span, label, origin, static, where="new node")
        if before is None:
            last = self._last()
            if last >= 0 and self._g.nodes[last]["sentence"] > sentence:
                raise _error(f"claim {claim} of sentence {sentence} cannot follow node {last} of sentence "
                             f"{self._g.nodes[last]['sentence']}: nodes are appended in trace order; pass "
                             f"before=<id> to insert it earlier")
            node = last + 1
            self._g.add_node(node, **attrs)
            self._index.setdefault(claim, []).append(node)
            return node
        if isinstance(before, bool) or not isinstance(before, int) or before not in self._g:
            raise _error(f"before must be the id of a node in the graph, got {before!r}")
        prev = max((v for v in self._g if v < before), default=None)
        lo = self._g.nodes[prev]["sentence"] if prev is not None else 0
        hi = self._g.nodes[before]["sentence"]
        if not lo <= sentence <= hi:
            raise _error(f"cannot insert a claim of sentence {sentence} before node {before}: its sentence must lie "
                         f"in [{lo}, {hi}] to keep trace order")
        self._insert(before, attrs)
        return before

    def add_placeholder(self, claim: Claim, needed_by: int, label: ClaimLabel | str = ClaimLabel.UNVERIFIABLE,
                        static: bool = False) -> int:
        """Insert a placeholder premise of ``needed_by`` and the inference edge placeholder -> ``needed_by``.

        A placeholder is a premise a rule needs but the trace never states (paper A §B step 3). It takes the
        sentence index of ``needed_by`` and the id just before it: it is inserted at id ``needed_by``, so the
        conclusion (and every later node) moves up by one.

        Parameters
        ----------
        claim : Claim
            The needed premise.
        needed_by : int
            Node id of the conclusion that needs it.
        label : ClaimLabel or str, optional
            Defaults to ``unverifiable``.
        static : bool, optional
            The placeholder is a fact about the given puzzle.

        Returns
        -------
        int
            The placeholder's id (= ``needed_by``); the conclusion's id is now that plus one.

        Raises
        ------
        NotADAGError
            ``needed_by`` is not in the graph, or an attribute is out of range.
        """
        self._need(needed_by)
        sentence = self._g.nodes[needed_by]["sentence"]
        node = self.add_claim(claim, sentence, None, label, "placeholder", static, before=needed_by)
        self._g.add_edge(node, node + 1, kind="inference")
        return node

    def add_inference(self, premise: int, conclusion: int) -> None:
        """Add the inference edge ``premise -> conclusion``.

        Raises
        ------
        NotADAGError
            A node is missing, ``premise`` does not precede ``conclusion`` (id and sentence), or the pair is
            already joined by a restatement edge.
        """
        self._add_edge(premise, conclusion, "inference")

    def add_restatement(self, earlier: int, later: int) -> None:
        """Add the restatement edge ``earlier -> later`` between two occurrences of the same claim.

        Raises
        ------
        NotADAGError
            A node is missing, ``earlier`` does not precede ``later``, the two claims differ, or the pair is
            already joined by an inference edge.
        """
        self._add_edge(earlier, later, "restatement")

    def set_label(self, node: int, label: ClaimLabel | str) -> None:
        """Set the label of ``node`` (paper A §B step 4). Raises :class:`NotADAGError` on an unknown label."""
        self._need(node)
        self._g.nodes[node]["label"] = self._check_label(label, f"node {node}")

    # ------------------------------------------------------------------ checking
    def validate(self) -> ClaimGraph:
        """Check every invariant of the module docstring in O(V + E); return ``self``.

        Raises
        ------
        NotADAGError
            Naming the first offending node or edge (``.edge`` holds the pair for an edge).
        """
        g = self._g
        if g.is_multigraph() or not g.is_directed():
            raise _error("a claim graph is a networkx DiGraph (directed, no parallel edges)")
        for v in g:
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise _error(f"node ids are ints >= 0, got {v!r}")
        prev_node, prev_sentence = None, 0
        for v in sorted(g):
            d = g.nodes[v]
            if "claim" not in d or "sentence" not in d:
                raise _error(f"node {v} lacks the 'claim' or 'sentence' attribute")
            d.update(self._check_attrs(d["claim"], d["sentence"], d.get("span"),
                                       d.get("label", ClaimLabel.UNVERIFIABLE), d.get("origin", "stated"),
                                       d.get("static", False), where=f"node {v}"))
            if prev_node is not None and d["sentence"] < prev_sentence:
                raise _error(f"nodes are in trace order: node {v} (sentence {d['sentence']}) follows node "
                             f"{prev_node} (sentence {prev_sentence})")
            prev_node, prev_sentence = v, d["sentence"]
        for u, v, kind in g.edges(data="kind"):
            self._check_edge(u, v, kind)
        self._reorder()
        self._index = {}
        for v, c in g.nodes(data="claim"):
            self._index.setdefault(c, []).append(v)
        return self

    # ------------------------------------------------------------------ derived graphs
    def copy(self) -> ClaimGraph:
        """A deep-enough copy (new DiGraph, same immutable claims)."""
        out = ClaimGraph(self.meta)
        out._g = self._g.copy()
        out._index = {c: list(v) for c, v in self._index.items()}
        out.merged_into = dict(self.merged_into)
        return out

    def static_restatements(self) -> dict[int, int]:
        """The merge :meth:`merge_static_restatements` would apply: later static occurrence -> first static
        occurrence of the same claim (empty when no static claim is restated). O(V)."""
        mapping: dict[int, int] = {}
        parts = self._trusted_parts()
        # the node attribute dicts by id (no view lookups: this runs on every eta call)
        nodes = self._g._node if parts is None else parts[0]
        for occ in self._index.values():
            if len(occ) < 2:
                continue
            statics = [v for v in occ if nodes[v]["static"]]
            for v in statics[1:]:
                mapping[v] = statics[0]
        return mapping

    def merge_static_restatements(self) -> ClaimGraph:
        """A new graph where every restated static claim is merged into its first occurrence (paper A §B).

        For each static claim with several static occurrences, the first (smallest id) is kept and the later ones
        are removed; their edges are re-pointed to the first occurrence:

        * out-edges ``later -> w`` become ``first -> w`` (the clue is a premise of ``w``);
        * in-edges ``u -> later`` become ``u -> first`` when ``u`` precedes ``first``, and are dropped otherwise
          (a fact about the given puzzle needs no premise from later in the trace, and keeping the edge would
          break trace order);
        * edges between occurrences of the merged claim vanish (they would be self-loops);
        * when re-pointing meets an existing edge, ``"inference"`` wins over ``"restatement"``.

        Surviving nodes keep their ids and attributes; :attr:`merged_into` of the result maps each removed id to
        the id it was merged into (composed with this graph's own map). When nothing is to merge, the result is an
        unchanged copy. Cost O(V + E). Source: paper A §B (merging); the edge policy is a reasonshape choice.

        Returns
        -------
        ClaimGraph
        """
        return self._merged(self.static_restatements())

    def _merged(self, mapping: dict[int, int]) -> ClaimGraph:
        """:meth:`merge_static_restatements` with the merge map already computed (``static_restatements()``).

        The result's dicts are filled directly, in exactly the order successive ``add_node``/``add_edge`` calls
        would insert them (so iteration orders, and every float summed in that order downstream, are unchanged);
        the per-call overhead of the networkx builder methods dominated this method on 30k-token traces."""
        out = ClaimGraph(self.meta)
        out.merged_into = {k: mapping.get(t, t) for k, t in self.merged_into.items()}
        out.merged_into.update(mapping)
        if not mapping:
            out._g = self._g.copy()
            out._index = {c: list(v) for c, v in self._index.items()}
            return out
        old = self._g
        node = {v: dict(d) for v, d in old._node.items() if v not in mapping}
        succ: dict[int, dict] = {v: {} for v in node}
        pred: dict[int, dict] = {v: {} for v in node}
        get = mapping.get
        for u, nbrs in old._succ.items():
            u2 = get(u, u)
            for v, d in nbrs.items():
                v2 = get(v, v)
                if u2 >= v2:
                    continue
                kind = d.get("kind")
                row = succ[u2]
                e = row.get(v2)
                if e is not None:
                    if kind == "inference":
                        e["kind"] = "inference"
                    continue
                e = row[v2] = {"kind": kind}
                pred[v2][u2] = e
        out._g = _digraph_from_dicts(old.graph, node, succ, pred)
        index: dict[Claim, list[int]] = {}
        for v, d in node.items():
            index.setdefault(d["claim"], []).append(v)
        out._index = index
        return out

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        """The node-link form (:func:`networkx.node_link_data`, ``edges="edges"``), JSON-ready.

        Claims become :meth:`Claim.to_json` dicts, labels their string values, spans lists; ``graph`` holds
        ``schema`` (:data:`SCHEMA`), ``meta`` and ``merged_into``. Inverse: :meth:`from_json`.
        """
        h = nx.DiGraph()
        h.graph.update({"schema": SCHEMA, "meta": self.meta,
                        "merged_into": [[k, v] for k, v in sorted(self.merged_into.items())]})
        for v, d in self._g.nodes(data=True):
            h.add_node(v, claim=d["claim"].to_json(), sentence=d["sentence"],
                       span=None if d["span"] is None else list(d["span"]), label=str(d["label"]),
                       origin=d["origin"], static=d["static"])
        h.add_edges_from((u, v, {"kind": k}) for u, v, k in self._g.edges(data="kind"))
        return nx.node_link_data(h, edges="edges")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClaimGraph:
        """Rebuild a graph from :meth:`to_json` output and validate it.

        Raises
        ------
        NotADAGError
            Malformed data (wrong schema, missing fields) or a broken invariant.
        """
        try:
            if data.get("graph", {}).get("schema") != SCHEMA:
                raise _error(f"not a claim graph in schema {SCHEMA!r}: graph.schema is "
                             f"{data.get('graph', {}).get('schema')!r}")
            h = nx.node_link_graph(dict(data), directed=True, multigraph=False, edges="edges")
            out = cls(h.graph.get("meta") or {})
            out.merged_into = {int(k): int(v) for k, v in h.graph.get("merged_into", [])}
            g = nx.DiGraph()
            for v in sorted(h):
                d = h.nodes[v]
                span = d.get("span")
                g.add_node(v, claim=Claim.from_json(d["claim"]), sentence=d["sentence"],
                           span=None if span is None else tuple(span), label=d.get("label", "unverifiable"),
                           origin=d.get("origin", "stated"), static=d.get("static", False))
            g.add_edges_from((u, v, {"kind": k}) for u, v, k in h.edges(data="kind"))
        except NotADAGError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise _error(f"malformed claim-graph JSON: {type(e).__name__}: {e}") from e
        out._g = g
        return out.validate()

    @classmethod
    def from_digraph(cls, graph: nx.DiGraph, meta: Mapping[str, Any] | None = None) -> ClaimGraph:
        """Wrap a copy of a DiGraph whose nodes carry at least ``claim`` and ``sentence``; missing attributes get
        their defaults (``span=None``, ``label=unverifiable``, ``origin="stated"``, ``static=False``, edge
        ``kind="inference"``). Raises :class:`NotADAGError` if the result breaks an invariant."""
        if not isinstance(graph, nx.DiGraph) or graph.is_multigraph():
            raise _error(f"from_digraph needs a networkx DiGraph, got {type(graph).__name__}")
        out = cls(meta)
        g = graph.copy()
        for _, _, d in g.edges(data=True):
            d.setdefault("kind", "inference")
        out._g = g
        return out.validate()

    @classmethod
    def from_records(cls, nodes: Iterable[tuple], edges: Iterable[tuple[int, int, str]],
                     meta: Mapping[str, Any] | None = None, validate: bool = False) -> ClaimGraph:
        """Bulk construction for builders that guarantee the invariants themselves (the extractor, the deduction
        engine): ``nodes`` are ``(claim, sentence, span, label, origin, static)`` in id order (ids 0..n-1), ``edges``
        ``(u, v, kind)``. Per-call checks of :meth:`add_claim` are skipped (they dominate the cost on 30k-token
        traces); pass ``validate=True`` (tests do) to check everything once, in O(V + E)."""
        out = cls(meta)
        node = {i: {"claim": c, "sentence": s, "span": sp, "label": lab, "origin": o, "static": st}
                for i, (c, s, sp, lab, o, st) in enumerate(nodes)}
        succ: dict[int, dict] = {i: {} for i in node}
        pred: dict[int, dict] = {i: {} for i in node}
        # Filled directly, in the order networkx's add_nodes_from / add_edges_from would insert (same dicts, same
        # iteration order) without their per-item overhead. An edge naming an unknown node (not a builder's
        # output) takes the networkx path for the rest, which adds the node as add_edges_from does.
        rest: list = []
        it = iter(edges)
        for u, v, k in it:
            su, pv = succ.get(u), pred.get(v)
            if su is None or pv is None or u == v:
                rest = [(u, v, k), *it]
                break
            e = su.get(v)
            if e is None:
                e = su[v] = {}
                pv[u] = e
            e["kind"] = k
        g = out._g = _digraph_from_dicts({}, node, succ, pred)
        if rest:
            g.add_edges_from((u, v, {"kind": k}) for u, v, k in rest)
        index: dict[Claim, list[int]] = {}
        for i, d in node.items():
            index.setdefault(d["claim"], []).append(i)
        out._index = index
        return out.validate() if validate else out

    @classmethod
    def _from_trusted(cls, nodes: list[dict], edges: Iterable[tuple[int, int, str]],
                      index: dict[Claim, list[int]]) -> ClaimGraph:
        """:meth:`from_records` for the extractor's builder, which hands over what it already holds: ``nodes`` are
        the node attribute dicts in id order (ids 0..n-1; taken, not copied), ``index`` the claim index
        (claim -> its node ids, claims in order of first occurrence), ``edges`` unique ``(u, v, kind)`` between
        those nodes, inserted in the order given (which fixes the successor and predecessor rows' orders). The
        DiGraph is built from them on first use (see ``_g``)."""
        out = cls.__new__(cls)  # what __init__ sets, with the DiGraph left to the first use of ``_g``
        out._nx, out._pending = None, (nodes, edges if isinstance(edges, list) else list(edges))
        out._index = index
        out.meta = {}
        out.merged_into = {}
        return out

    # ------------------------------------------------------------------ drawing
    #: File formats :meth:`draw` writes, named by the path's suffix (a path without a suffix gets PNG).
    DRAW_FORMATS = ("png", "svg", "pdf")
    #: Most nodes :meth:`draw` puts in one column; a larger generation takes several adjacent columns.
    DRAW_COLUMN_NODES = 20

    @staticmethod
    def draw_format(path: str | Path) -> str:
        """The format :meth:`draw` writes to ``path``: its suffix (lower case) or ``"png"`` without one.

        Raises
        ------
        ConfigError
            Any other suffix (a ``.svg`` holding PNG bytes, as before, helps no one).
        """
        suffix = Path(path).suffix
        fmt = suffix.lower().lstrip(".") or "png"
        if fmt not in ClaimGraph.DRAW_FORMATS:
            raise ConfigError(f"cannot draw a claim graph to {str(path)!r}: the suffix must be one of "
                              f"{', '.join('.' + f for f in ClaimGraph.DRAW_FORMATS)}, got {suffix!r}")
        return fmt

    def draw(self, path_png: str | Path, c_star: Iterable[Claim | int] | None = None, *,
             title: str | None = None, dpi: int = 120) -> Path:
        """Draw the graph to a PNG, SVG or PDF file with matplotlib (Agg canvas; pyplot and its global state are not
        used); the format is the one the suffix names (:meth:`draw_format`).

        Layout: one column per topological generation (longest path from a source), nodes in id order within a
        column; a generation of more than :attr:`DRAW_COLUMN_NODES` nodes is wrapped into adjacent columns. Fill
        colour by label (correct green, wrong red, unverifiable grey, tentative orange); placeholders are hollow;
        with ``c_star`` the nodes of G_sol get a thick black outline and its edges are drawn bold; restatement edges
        are dashed.

        Parameters
        ----------
        path_png : str or Path
            Output file ``.png``, ``.svg`` or ``.pdf`` (no suffix: PNG); missing parent folders are created.
        c_star : iterable of Claim or node ids, optional
            C* (see :func:`reasonshape.rewards.eta.g_sol`); highlights G_sol.
        title : str, optional
        dpi : int, optional

        Returns
        -------
        Path
            ``path_png``.

        Raises
        ------
        ConfigError
            Another suffix (checked before anything is drawn).
        """
        fmt = self.draw_format(path_png)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D

        g = self._g
        sol: frozenset = frozenset()
        if c_star is not None:
            from reasonshape.rewards.eta import g_sol

            sol = g_sol(self, c_star)
        # one column per generation; a generation taller than DRAW_COLUMN_NODES (e.g. many unconnected claims) is
        # wrapped into adjacent columns, so the figure stays readable instead of one very tall column
        step = self.DRAW_COLUMN_NODES
        gens = [sorted(layer)[i:i + step] for layer in nx.topological_generations(g)
                for i in range(0, len(layer), step)] if len(g) else []
        pos = nx.multipartite_layout(g, subset_key=dict(enumerate(gens))) if len(g) else {}
        width = max((len(layer) for layer in gens), default=1)
        fig = Figure(figsize=(min(4 + 1.2 * len(gens), 40), min(3 + 0.6 * width, 40)))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.set_axis_off()
        inf = [(u, v) for u, v, k in g.edges(data="kind") if k == "inference"]
        res = [(u, v) for u, v, k in g.edges(data="kind") if k == "restatement"]
        for edges, style in ((inf, "solid"), (res, "dashed")):
            bold = [e for e in edges if e[0] in sol and e[1] in sol]
            thin = [e for e in edges if not (e[0] in sol and e[1] in sol)]
            if thin:
                nx.draw_networkx_edges(g, pos, edgelist=thin, ax=ax, style=style, edge_color="#9e9e9e", width=1.0,
                                       arrowsize=8, node_size=300)
            if bold:
                nx.draw_networkx_edges(g, pos, edgelist=bold, ax=ax, style=style, edge_color="black", width=2.5,
                                       arrowsize=10, node_size=300)
        for placeholder in (False, True):
            nodes = [v for v in g if (g.nodes[v]["origin"] == "placeholder") == placeholder]
            if not nodes:
                continue
            colours = [_LABEL_COLOURS[g.nodes[v]["label"]] for v in nodes]
            outline = ["black" if v in sol else c for v, c in zip(nodes, colours, strict=True)]
            nx.draw_networkx_nodes(g, pos, nodelist=nodes, ax=ax, node_size=300,
                                   node_color="white" if placeholder else colours, edgecolors=outline,
                                   linewidths=[3.0 if v in sol else 1.5 for v in nodes])
        if len(g) <= 200:
            nx.draw_networkx_labels(g, pos, ax=ax, font_size=7)
        handles = [Line2D([], [], marker="o", linestyle="", markerfacecolor=c, markeredgecolor=c, label=str(lab))
                   for lab, c in _LABEL_COLOURS.items()]
        handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="white", markeredgecolor="grey",
                              label="placeholder"))
        handles.append(Line2D([], [], color="grey", linestyle="dashed", label="restatement"))
        if sol:
            handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="white", markeredgecolor="black",
                                  markeredgewidth=3, label="G_sol"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
        if title:
            ax.set_title(title)
        fig.tight_layout()
        path = Path(path_png)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format=fmt, dpi=dpi)
        return path

    # ------------------------------------------------------------------ internals
    def _last(self) -> int:
        return next(reversed(self._g._node)) if len(self._g) else -1  # dict order = id order, O(1)

    def _need(self, node: int) -> None:
        if node not in self._g:
            raise _error(f"node {node!r} is not in the claim graph ({len(self._g)} nodes)")

    @staticmethod
    def _check_label(label: Any, where: str) -> ClaimLabel:
        try:
            return ClaimLabel(label)
        except ValueError:
            raise _error(f"{where}: label must be one of {[str(x) for x in ClaimLabel]}, got {label!r}") from None

    def _check_attrs(self, claim: Any, sentence: Any, span: Any, label: Any, origin: Any, static: Any,
                     where: str) -> dict[str, Any]:
        if not isinstance(claim, Claim):
            raise _error(f"{where}: claim must be a reasonshape Claim, got {type(claim).__name__}")
        if isinstance(sentence, bool) or not isinstance(sentence, int) or sentence < 0:
            raise _error(f"{where}: sentence must be an int >= 0, got {sentence!r}")
        if span is not None:
            ok = (isinstance(span, (tuple, list)) and len(span) == 2
                  and all(isinstance(x, int) and not isinstance(x, bool) for x in span) and 0 <= span[0] <= span[1])
            if not ok:
                raise _error(f"{where}: span must be None or (start, end) with 0 <= start <= end, got {span!r}")
            span = (span[0], span[1])
        if origin not in ORIGINS:
            raise _error(f"{where}: origin must be one of {ORIGINS}, got {origin!r}")
        if not isinstance(static, bool):
            raise _error(f"{where}: static must be a bool, got {static!r}")
        return {"claim": claim, "sentence": sentence, "span": span, "label": self._check_label(label, where),
                "origin": origin, "static": static}

    def _check_edge(self, u: Any, v: Any, kind: Any) -> None:
        g = self._g
        if kind not in EDGE_KINDS:
            raise _error(f"edge ({u}, {v}): kind must be one of {EDGE_KINDS}, got {kind!r}", (u, v))
        if not u < v:
            raise _error(f"edge ({u}, {v}): the premise must precede the conclusion (node id {u} >= {v}); a claim "
                         f"graph is a DAG in trace order", (u, v))
        su, sv = g.nodes[u]["sentence"], g.nodes[v]["sentence"]
        if su > sv:
            raise _error(f"edge ({u}, {v}): the premise's sentence {su} comes after the conclusion's sentence {sv}",
                         (u, v))
        if kind == "restatement" and g.nodes[u]["claim"] != g.nodes[v]["claim"]:
            raise _error(f"edge ({u}, {v}): a restatement joins two occurrences of the same claim, got "
                         f"{g.nodes[u]['claim']} and {g.nodes[v]['claim']}", (u, v))

    def _add_edge(self, u: int, v: int, kind: str) -> None:
        for x in (u, v):
            if x not in self._g:
                raise _error(f"edge ({u!r}, {v!r}): node {x!r} is not in the claim graph", (u, v))
        if self._g.has_edge(u, v):
            old = self._g.edges[u, v]["kind"]
            if old != kind:
                raise _error(f"edge ({u}, {v}) already exists as {old!r}; cannot add it as {kind!r}", (u, v))
            return
        self._check_edge(u, v, kind)
        self._g.add_edge(u, v, kind=kind)

    def _insert(self, k: int, attrs: dict[str, Any]) -> None:
        """Insert a node with id ``k``: every node with id >= k moves up by one (edges and the claim index
        follow). The DiGraph is rebuilt so that node iteration order stays id order."""
        old = self._g
        g = nx.DiGraph()
        g.graph.update(old.graph)
        g.add_nodes_from((v, d) for v, d in old.nodes(data=True) if v < k)
        g.add_node(k, **attrs)
        g.add_nodes_from((v + 1, d) for v, d in old.nodes(data=True) if v >= k)
        g.add_edges_from((u + 1 if u >= k else u, v + 1 if v >= k else v, d) for u, v, d in old.edges(data=True))
        self._g = g
        for occ in self._index.values():
            occ[:] = [v + 1 if v >= k else v for v in occ]
        bisect.insort(self._index.setdefault(attrs["claim"], []), k)

    def _reorder(self) -> None:
        """Make node iteration order id order (needed after an insertion or a load)."""
        g = self._g
        order = list(g)
        if all(order[i] < order[i + 1] for i in range(len(order) - 1)):
            return
        h = nx.DiGraph()
        h.graph.update(g.graph)
        h.add_nodes_from((v, g.nodes[v]) for v in sorted(order))
        h.add_edges_from(g.edges(data=True))
        self._g = h

