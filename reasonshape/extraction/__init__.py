"""Claim extraction: from a reasoning trace to a verified claim graph (paper A §B), and traces with known graphs.

* :func:`extract_graph` — the entry point: deterministic by default, LLM-assisted when a backend is given;
* :class:`ClaimGraph` — the claim-graph type (networkx DiGraph underneath);
* :func:`deduce_trace` — the deduction engine (traces with their true graph, METHOD §D);
* :func:`compare_graphs` — extraction quality against a true graph.
"""

from __future__ import annotations

from typing import Any

from reasonshape.extraction.deterministic import ExtractionResult, PuzzleContext, extract_deterministic
from reasonshape.extraction.engine import STYLES, KnownTrace, deduce_trace
from reasonshape.extraction.graph import ClaimGraph
from reasonshape.extraction.quality import ExtractionQuality, compare_graphs

__all__ = [
    "ClaimGraph", "ExtractionResult", "PuzzleContext", "extract_graph", "extract_deterministic", "STYLES",
    "KnownTrace", "deduce_trace", "ExtractionQuality", "compare_graphs",
]


def extract_graph(puzzle, instance, completion: Any, llm_backend: Any = None,
                  context: PuzzleContext | None = None, **llm_options: Any) -> ExtractionResult:
    """The verified claim graph of ``completion`` for ``instance``.

    With ``llm_backend=None`` (default) the deterministic extractor runs (no LLM, no network); with a backend the
    LLM-assisted pipeline runs and falls back to the deterministic graph on any endpoint failure
    (``result.fallback`` says why). See :mod:`reasonshape.extraction.deterministic` and
    :mod:`reasonshape.extraction.llm`.
    """
    if llm_backend is None:
        return extract_deterministic(puzzle, instance, completion, context=context)
    from reasonshape.extraction.llm import extract_with_llm

    return extract_with_llm(puzzle, instance, completion, llm_backend, context=context, **llm_options)
