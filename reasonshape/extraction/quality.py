"""Extraction quality against traces with a known graph (METHOD.md §D uses; reasonshape's own measures).

Nodes are matched as (claim, sentence index) pairs, placeholders excluded (they have no text to find); edges are
matched by their endpoints' (claim, sentence) pairs and kind. Precision/recall are micro-averaged over a trace.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ExtractionQuality", "compare_graphs"]


@dataclass(frozen=True)
class ExtractionQuality:
    """Claim and edge precision/recall in [0, 1] of an extracted graph against the true one (1.0 when both are
    empty). ``edge_f1`` is the harmonic mean of edge precision and recall."""

    claim_precision: float
    claim_recall: float
    edge_precision: float
    edge_recall: float

    @property
    def edge_f1(self) -> float:
        p, r = self.edge_precision, self.edge_recall
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def _nodes(g) -> set:
    return {(n.claim, n.sentence) for n in g.nodes() if n.origin != "placeholder"}


def _edges(g) -> set:
    out = set()
    for u, v, kind in g.edges():
        a, b = g.node(u), g.node(v)
        out.add(((a.claim, a.sentence, a.origin == "placeholder"), (b.claim, b.sentence), kind))
    return out


def _pr(found: set, truth: set) -> tuple[float, float]:
    hit = len(found & truth)
    p = hit / len(found) if found else (1.0 if not truth else 0.0)
    r = hit / len(truth) if truth else (1.0 if not found else 0.0)
    return p, r


def compare_graphs(true_graph, extracted) -> ExtractionQuality:
    """Precision and recall of an extracted claim graph against the true graph of the same trace.

    Parameters
    ----------
    true_graph : ClaimGraph
        The reference: the graph the trace was written from (``deduce_trace(...).graph``) or a hand-labelled one.
        Recall is measured against it.
    extracted : ClaimGraph
        The graph under test (``extract_graph(...).graph`` of the same trace text, so sentence indices agree).
        Precision is measured on it.

    Returns
    -------
    ExtractionQuality
        ``claim_precision``, ``claim_recall``, ``edge_precision``, ``edge_recall`` (and ``edge_f1``), each in
        [0, 1], micro-averaged over the trace. Claims are matched as (claim, sentence index) pairs, placeholders
        left out; edges by their kind and their ends' (claim, sentence) pairs, a placeholder premise matching only
        a placeholder. An empty set against an empty set scores 1.0; a non-empty one against an empty one 0.0.

    Source: reasonshape choice (extraction quality on traces with a known graph, METHOD.md §D).
    """
    cp, cr = _pr(_nodes(extracted), _nodes(true_graph))
    ep, er = _pr(_edges(extracted), _edges(true_graph))
    return ExtractionQuality(cp, cr, ep, er)
