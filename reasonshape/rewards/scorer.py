"""Scoring one completion: parse -> verify -> extract -> claim graph -> eta and metrics, in one place.

Rewards (:mod:`reasonshape.rewards.functions`) and the eval (:mod:`reasonshape.training.eval`) both read
:class:`CompletionScore`; :class:`Scorer` caches scores so each completion is scored ONCE per step however many
reward functions read it, and caches per-instance extraction contexts so a GRPO group shares them.
Source: reasonshape choice.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from reasonshape.envs import get
from reasonshape.envs.answer import read_answer_block
from reasonshape.envs.base import ClaimLabel, Instance, Puzzle, check_instance
from reasonshape.envs.registry import as_puzzle
from reasonshape.errors import AnswerParseError, ConfigError, GameIdError, UnknownPuzzleError
from reasonshape.extraction.deterministic import PuzzleContext, extract_deterministic, gc_paused
from reasonshape.extraction.segment import trace_text
from reasonshape.rewards.metrics import StructuralMetrics, structural_metrics

__all__ = ["CompletionScore", "score_completion", "Scorer"]

log = logging.getLogger(__name__)

#: Instances whose contexts keep their per-sentence memos in a :class:`Scorer` (the most recently scored ones).
SENTENCE_MEMO_INSTANCES = 16


@dataclass(frozen=True)
class CompletionScore:
    """Everything reasonshape measures about one completion.

    Attributes
    ----------
    puzzle, game_id : str
        The instance the completion answers.
    error : str or None
        Why the completion could not be scored at all (unknown puzzle, malformed game ID); then every other field
        is empty and rewards use their fallback.
    has_answer_block : bool
        An ``<answer>`` block exists (after ``<think>`` blocks are removed).
    answer_in_reasoning : bool
        ``<answer>`` blocks exist only inside the reasoning (``<think>`` / ``reasoning_content``): drafts, so the
        completion has no final answer (:func:`reasonshape.envs.answer.answer_only_in_reasoning`).
    parsed : bool
        The final answer was read as a grid for this puzzle.
    parse_error : str or None
        Why not (:class:`~reasonshape.errors.AnswerParseError` reason).
    answer_source : str or None
        ``"answer_block"`` or ``"fallback_grid"``.
    correct : bool
        The answer satisfies every rule of the puzzle (binary accuracy, paper A §A).
    violations : tuple of str
        Violated rule ids.
    canonical_answer : str or None
        The parsed answer re-formatted by the puzzle (for answer dispersion), ``None`` when unparsed.
    metrics : StructuralMetrics or None
        Claim-graph metrics and eta (raw and clipped); ``None`` when extraction was skipped or failed.
    labels : dict
        Counts of claim-occurrence labels (correct / wrong / unverifiable / tentative).
    n_sentences : int
        Sentences of the trace.
    extraction_mode : str or None
        ``"deterministic"`` or ``"llm"``.
    extraction_fallback : str or None
        Why the LLM path fell back, or why extraction failed.
    graph : ClaimGraph or None
        The claim graph (kept only when asked, it is large).
    score_s : float
        Seconds spent scoring.
    """

    puzzle: str
    game_id: str
    error: str | None = None
    has_answer_block: bool = False
    answer_in_reasoning: bool = False
    parsed: bool = False
    parse_error: str | None = None
    answer_source: str | None = None
    correct: bool = False
    violations: tuple[str, ...] = ()
    canonical_answer: str | None = None
    metrics: StructuralMetrics | None = None
    labels: dict[str, int] = field(default_factory=dict)
    n_sentences: int = 0
    extraction_mode: str | None = None
    extraction_fallback: str | None = None
    graph: Any = None
    score_s: float = 0.0

    @property
    def eta(self) -> float | None:
        """Raw eta (eval), ``None`` when undefined or not computed."""
        return None if self.metrics is None else self.metrics.eta

    @property
    def eta_clipped(self) -> float | None:
        """Eta clipped to [0, 1] (rewards)."""
        return None if self.metrics is None else self.metrics.eta_clipped

    @property
    def claim_accuracy(self) -> float | None:
        return None if self.metrics is None else self.metrics.claim_accuracy

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict (the eval's ``results.jsonl`` fields; the graph as node-link JSON when kept)."""
        from dataclasses import asdict

        return {
            "puzzle": self.puzzle, "game_id": self.game_id, "error": self.error, "correct": self.correct,
            "parsed": self.parsed, "parse_error": self.parse_error, "answer_source": self.answer_source,
            "answer_in_reasoning": self.answer_in_reasoning, "violations": list(self.violations),
            "n_sentences": self.n_sentences,
            "metrics": None if self.metrics is None else asdict(self.metrics), "labels": dict(self.labels),
            "extraction": {"mode": self.extraction_mode, "fallback": self.extraction_fallback},
            "canonical_answer": self.canonical_answer,
            "graph": None if self.graph is None else self.graph.to_json(), "score_s": self.score_s,
        }


def score_completion(puzzle: Puzzle | str, instance: Instance, completion: Any, *, extract: bool = True,
                     llm_backend: Any = None, context: PuzzleContext | None = None, tokens: int | None = None,
                     keep_graph: bool = False, paths: bool = True, reward_only: bool = False) -> CompletionScore:
    """Score one completion of ``instance``; never raises on odd completion text.

    Parameters
    ----------
    puzzle, instance
        The puzzle (a Puzzle or its registry name, e.g. ``"tents"``) and an instance of it.
    completion : str, message dict or list of messages
        TRL standard or conversational completion; ``content`` and ``reasoning_content`` are both read.
    extract : bool
        Build the claim graph and its metrics (False: accuracy and format only).
    llm_backend : GenerationBackend, optional
        Use the LLM-assisted extraction through this backend (falls back to deterministic on failure).
    context : PuzzleContext, optional
        Shared per-instance extraction context (a GRPO group).
    tokens : int, optional
        Completion length in tokens, reported in the metrics.
    keep_graph : bool
        Keep the claim graph in the result.
    paths : bool
        Compute diameter and average path length (all-pairs shortest paths; off for rewards).
    reward_only : bool
        Compute only the metrics the reward functions read and log (η on G, claim statistics; see
        :func:`~reasonshape.rewards.metrics.structural_metrics`); the :class:`Scorer` of the rewards sets it.

    Raises
    ------
    ConfigError
        ``puzzle`` neither a Puzzle nor a name, or ``instance`` not an instance of ``puzzle``.
    UnknownPuzzleError
        ``puzzle`` names no implemented puzzle.
    """
    t0 = time.perf_counter()
    puzzle = as_puzzle(puzzle)
    check_instance(puzzle, instance)
    with gc_paused():  # see gc_paused: one trace allocates many long-lived small objects
        return _score(puzzle, instance, completion, extract, llm_backend, context, tokens, keep_graph, paths,
                      reward_only, t0)


def _score(puzzle, instance, completion, extract, llm_backend, context, tokens, keep_graph, paths, reward_only,
           t0) -> CompletionScore:
    """The body of :func:`score_completion` (same arguments; ``t0`` is its start time)."""
    text = trace_text(completion)
    game_id = puzzle.format_game_id(instance)
    block, in_reasoning = read_answer_block(text) if text else (None, False)
    has_block = block is not None
    parsed = correct = False
    parse_error = source = canonical = None
    violations: tuple[str, ...] = ()
    answer_value = None
    try:
        ans = puzzle.parse_answer(text, instance)
        parsed, source, answer_value = True, ans.source, ans.value
        verdict = puzzle.check(instance, ans)
        correct, violations = verdict.ok, verdict.rules
        canonical = puzzle.format_answer(instance, ans.value)
    except AnswerParseError as e:
        parse_error = e.reason
    except Exception as e:  # a puzzle bug must not kill a training run; report it
        log.warning("%s: answer check failed (%s: %s)", puzzle.name, type(e).__name__, e)
        parse_error = f"{type(e).__name__}: {e}"
    metrics, labels, n_sent, mode, fallback, graph = None, {}, 0, None, None, None
    if extract:
        try:
            ctx = context or PuzzleContext(puzzle, instance)
            if llm_backend is not None:
                from reasonshape.extraction.llm import extract_with_llm

                res = extract_with_llm(puzzle, instance, text, llm_backend, context=ctx)
            else:
                res = extract_deterministic(puzzle, instance, text, context=ctx)  # the joined trace, read once
            graph, n_sent, mode, fallback = res.graph, res.n_sentences, res.mode, res.fallback
            c_star = _c_star(puzzle, instance, answer_value if correct else None)
            metrics = structural_metrics(graph, c_star, max(1, n_sent), tokens=tokens, paths=paths,
                                         reward_only=reward_only) \
                if c_star else None
            labels = {lab.value: 0 for lab in ClaimLabel}
            # counted on the node attribute dicts, without a ClaimNode view (or a str()) per node (nor the DiGraph of
            # the extractor's graph: its node list, in the same order)
            parts = graph._trusted_parts()
            node_dicts = graph.graph._node.values() if parts is None else parts[0]
            counts = Counter(d["label"] for d in node_dicts if d["origin"] != "placeholder")
            for lab, k in counts.items():
                labels[str(lab)] += k
        except Exception as e:  # extraction must never crash a reward: record why
            log.warning("%s: extraction failed (%s: %s)", puzzle.name, type(e).__name__, e)
            fallback = f"extraction failed: {type(e).__name__}: {e}"
            metrics, graph = None, None
    return CompletionScore(
        puzzle=puzzle.name, game_id=game_id, has_answer_block=has_block, answer_in_reasoning=in_reasoning,
        parsed=parsed, parse_error=parse_error, answer_source=source, correct=correct, violations=violations,
        canonical_answer=canonical, metrics=metrics, labels=labels, n_sentences=n_sent, extraction_mode=mode,
        extraction_fallback=fallback, graph=graph if keep_graph else None, score_s=time.perf_counter() - t0)


def _c_star(puzzle: Puzzle, instance: Instance, correct_answer: Any) -> frozenset:
    """C* for eta: the unique solution's; on a non-unique instance (e.g. imported reasoning-gym puzzles) the
    completion's own solution when it is correct, else the solver's first solution (reasonshape choice)."""
    res = puzzle.solve(instance, 2)
    if res.unique:
        return puzzle.solution_claims(instance)
    if correct_answer is not None:
        return puzzle.solution_claims(instance, correct_answer)
    return puzzle.solution_claims(instance, res.solutions[0]) if res.solutions else frozenset()


class Scorer:
    """Caching scorer shared by all reward functions of a trainer.

    Scores are cached by (puzzle, game ID, completion text) in an LRU of ``cache_size`` entries; instances and
    extraction contexts by (puzzle, game ID). A context also remembers how each sentence was read, so the
    completions of a group read a sentence they share once; those per-sentence memos are kept for the
    ``SENTENCE_MEMO_INSTANCES`` most recently scored instances (a group's completions arrive together) and emptied
    for older ones, ~2 MB each at most (``SENTENCE_MEMO_MAX`` / ``SENTENCE_MEMO_CHARS`` of
    :mod:`~reasonshape.extraction.deterministic`, and the schema reader's memo of at most 4,096 predicate windows).
    Not thread-safe. Picklable (caches are dropped on pickling). Its
    metrics are the reward-only set (:func:`score_completion` with ``reward_only=True``: η on G and the claim
    statistics; the G_sol / G_ver, depth / width and path fields are ``None``); the eval scores with the full set.

    Parameters
    ----------
    extract : bool
        Compute claim graphs and eta (needed by the ``eta`` and ``shaped`` rewards).
    llm_backend : GenerationBackend, optional
        LLM-assisted extraction (default: deterministic).
    cache_size : int
        Completions remembered, > 0.
    """

    def __init__(self, extract: bool = True, llm_backend: Any = None, cache_size: int = 4096):
        if cache_size <= 0:
            raise ConfigError(f"cache_size must be > 0, got {cache_size}")
        self.extract = extract
        self.llm_backend = llm_backend
        self.cache_size = cache_size
        self._scores: OrderedDict[Hashable, CompletionScore] = OrderedDict()
        self._instances: dict[tuple[str, str], tuple[Puzzle, Instance, PuzzleContext | None]] = {}
        self._memo_holders: OrderedDict[tuple[str, str], PuzzleContext] = OrderedDict()

    def __getstate__(self):
        return {"extract": self.extract, "llm_backend": self.llm_backend, "cache_size": self.cache_size}

    def __setstate__(self, state):
        self.__init__(**state)

    def instance(self, puzzle: str, game_id: str) -> tuple[Puzzle, Instance]:
        """The puzzle and parsed instance (cached). Raises UnknownPuzzleError / GameIdError."""
        key = (puzzle, game_id)
        if key not in self._instances:
            p = get(puzzle)
            if len(self._instances) > 1024:
                self._instances.clear()
            self._instances[key] = (p, p.parse_game_id(game_id), None)
        p, inst, _ = self._instances[key]
        return p, inst

    def _context(self, puzzle: str, game_id: str) -> PuzzleContext:
        key = (puzzle, game_id)
        p, inst, ctx = self._instances[key]
        if ctx is None:
            ctx = PuzzleContext(p, inst)
            self._instances[key] = (p, inst, ctx)
        holders = self._memo_holders
        holders[key] = ctx
        holders.move_to_end(key)
        if len(holders) > SENTENCE_MEMO_INSTANCES:
            holders.popitem(last=False)[1].clear_sentence_memos()
        return ctx

    def clear_sentence_memos(self) -> None:
        """Forget how every instance's sentences were read (memory; or to time reading from scratch, as
        ``benchmarks/bench_rewards.py`` does). Scores and the other per-instance caches are kept."""
        while self._memo_holders:
            self._memo_holders.popitem()[1].clear_sentence_memos()

    def score(self, puzzle: str, game_id: str, completion: Any, tokens: int | None = None) -> CompletionScore:
        """The (cached) :class:`CompletionScore`; an unusable puzzle/game ID gives a score with ``error`` set."""
        text = trace_text(completion)
        key = (puzzle, game_id, hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).digest())
        hit = self._scores.get(key)
        if hit is not None:
            self._scores.move_to_end(key)
            return hit
        try:
            p, inst = self.instance(puzzle, game_id)
        except (UnknownPuzzleError, GameIdError, TypeError) as e:
            return CompletionScore(puzzle=str(puzzle), game_id=str(game_id), error=f"{type(e).__name__}: {e}")
        ctx = self._context(puzzle, game_id) if self.extract else None
        sc = score_completion(p, inst, text, extract=self.extract, llm_backend=self.llm_backend,
                              context=ctx, tokens=tokens, paths=False, reward_only=True)
        self._scores[key] = sc
        if len(self._scores) > self.cache_size:
            self._scores.popitem(last=False)
        return sc
