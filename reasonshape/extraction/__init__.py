"""Claim extraction: from a reasoning trace to a verified claim graph (paper A §B), and traces with known graphs.

* :func:`extract_graph` — the entry point: deterministic by default, LLM-assisted when a backend is given;
* :class:`ClaimGraph` — the claim-graph type (networkx DiGraph underneath);
* :func:`deduce_trace` — the deduction engine (traces with their true graph, METHOD §D);
* :func:`compare_graphs` — extraction quality against a true graph;
* :func:`label_claim` — the label a graph node gets: the puzzle's :meth:`~reasonshape.envs.base.Puzzle.verify_claim`
  for its own claim kinds, and the extractor's generic kinds (``candidates``, ``count``, ``count_remaining``,
  which ``verify_claim`` refuses) judged from the solutions.
"""

from __future__ import annotations

from typing import Any

from reasonshape.envs.base import Instance, Puzzle
from reasonshape.envs.registry import as_puzzle
from reasonshape.errors import ConfigError
from reasonshape.extraction.deterministic import ExtractionResult, PuzzleContext, extract_deterministic
from reasonshape.extraction.engine import STYLES, KnownTrace, deduce_trace
from reasonshape.extraction.graph import ClaimGraph
from reasonshape.extraction.labels import GENERIC_KINDS, label_claim
from reasonshape.extraction.quality import ExtractionQuality, compare_graphs

__all__ = [
    "ClaimGraph", "ExtractionResult", "PuzzleContext", "extract_graph", "extract_deterministic", "STYLES",
    "KnownTrace", "deduce_trace", "ExtractionQuality", "compare_graphs", "GENERIC_KINDS", "label_claim",
]


def extract_graph(puzzle: Puzzle | str, instance: Instance, completion: Any, llm_backend: Any = None,
                  context: PuzzleContext | None = None, **llm_options: Any) -> ExtractionResult:
    """The verified claim graph of ``completion`` for ``instance``.

    With ``llm_backend=None`` (default) the deterministic extractor runs (no LLM, no network); with a backend the
    LLM-assisted pipeline runs and falls back to the deterministic graph on any endpoint failure
    (``result.fallback`` says why). See :mod:`reasonshape.extraction.deterministic` and
    :mod:`reasonshape.extraction.llm`.

    Parameters
    ----------
    puzzle : Puzzle or str
        The puzzle, or its registry name (``"tents"``; resolved with :func:`reasonshape.envs.get`).
    instance : Instance
        The instance the completion answers; must be an instance of ``puzzle``.
    completion : str, message dict or list of message dicts
        The trace: reasoning (``reasoning_content`` / ``<think>``) and answer are read alike
        (:func:`~reasonshape.extraction.segment.trace_text`; ``None`` and other types read as ``""``).
    llm_backend : GenerationBackend, optional
        Any backend of :mod:`reasonshape.training.backends`; ``None`` for the deterministic extractor.
    context : PuzzleContext, optional
        The per-instance context built by an earlier call for the same puzzle and instance (e.g. the other
        completions of a GRPO group), to skip re-deriving units and labels. It is trusted, not re-checked.
    **llm_options
        ``chunk_tokens`` (> 0, default 1500), ``max_tokens`` (default 2048), ``temperature`` (default 0.0) of
        :func:`~reasonshape.extraction.llm.extract_with_llm`; only with ``llm_backend`` (refused without one, as
        they would be silently ignored).

    Returns
    -------
    ExtractionResult
        ``graph`` (a :class:`ClaimGraph`: claim occurrences in trace order, inference / restatement edges, labels
        correct / wrong / unverifiable by the puzzle, tentative from the trace's wording), the sentences, the
        text read, ``mode`` (``"deterministic"`` / ``"llm"``) and ``fallback``. Odd or claim-free text gives an
        empty graph, never an error.

    Raises
    ------
    ConfigError
        ``puzzle`` neither a Puzzle nor a string; ``instance`` not an instance of ``puzzle`` ("a keen instance
        was given to tents"); ``llm_options`` without ``llm_backend``; ``chunk_tokens <= 0``.
    UnknownPuzzleError
        ``puzzle`` names no implemented puzzle.
    TypeError
        An ``llm_options`` key other than those above.

    Source: paper A §B (claims, rules, placeholders, labels); the deterministic reader and the dependency rule
    are reasonshape choices (METHOD.md).
    """
    puzzle = as_puzzle(puzzle)
    if llm_backend is None:
        if llm_options:
            raise ConfigError(f"llm_options {sorted(llm_options)} apply only with an llm_backend")
        return extract_deterministic(puzzle, instance, completion, context=context)
    from reasonshape.extraction.llm import extract_with_llm

    return extract_with_llm(puzzle, instance, completion, llm_backend, context=context, **llm_options)
