"""Deterministic extraction: a reasoning trace -> its claim graph, with no LLM and no network (the default).

Pipeline (paper A §B, with deterministic stand-ins for its LLM steps; the rules below are reasonshape's):

1. The trace (reasoning and final answer alike, :func:`~reasonshape.extraction.segment.trace_text`) is split into
   sentences with offsets; each sentence is read by the puzzle's claim schema
   (:class:`~reasonshape.extraction.schema.SchemaReader`).
2. Hypotheses and retractions. A sentence with a tentative cue ("suppose", "assume", "let's try", "what if", "if we
   put"...) opens a hypothesis: its claims and every claim until the hypothesis closes are labelled ``tentative``.
   A retraction cue ("wait", "contradiction", "impossible", "let me recalculate", "that's wrong", "duplicate"...)
   closes it, as does a paragraph break or 12 sentences without one. A conditional sentence ("If (4,1) = 4, then
   (3,1) = 1") has tentative claims but opens no hypothesis. Claims inside the hypothesis do not update the committed
   state below.
3. Nodes and restatements. Each claim occurrence is a node. A claim seen before gets a restatement edge from its
   previous occurrence and no inference premises (paper A §B step 3). Givens of the instance (the puzzle's
   ``given_claims``) are static source nodes.
4. Dependencies (the deterministic rule). For a new, non-tentative-head claim ``c`` in sentence ``s``:

   a. refutation: in the sentence that closes a hypothesis, the negation of the hypothesis gets the hypothesis and
      the claims of the block's last sentence as premises;
   b. local premises: claims of sentence ``s`` that are restatements or givens, plus every claim of sentence
      ``s-1`` when ``s`` starts with a consequence cue ("so", "therefore", "thus", "hence", "then", "this means"),
      kept when the puzzle's rules make them relevant to ``c`` (they share a unit: row, column, box, cage, clue
      neighbourhood...; see :meth:`Puzzle.units`);
   c. otherwise, the unit context: the units named in ``s`` (or in ``s-1``), else every unit containing ``c``'s
      variables; premises are, for every other variable of those units, its committed value claim (else its given
      value, else its committed eliminations), the committed eliminations of ``c``'s own variable, each claim at
      its latest occurrence (a restatement supersedes the original), and the units' given premises. A given that
      the trace never states becomes a ``placeholder`` node just before ``c`` (paper A §B step 3).

   A new claim without premises is ``directly_stated``; so is a new claim read from a grid or row listing (a
   listing states values, it does not derive them).
5. Labels: every claim is checked by the puzzle (:func:`~reasonshape.extraction.labels.label_claim`);
   hypothesis claims are ``tentative``.

Everything is linear in the trace length for a fixed puzzle size.

Performance (reasonshape choice, behaviour unchanged): per-claim facts (variables, units, effects, given or not) are
computed once per instance and claim and cached in :class:`PuzzleContext`; so are a sentence's reading, cues and
named units, by its text (traces repeat sentences, and so do the completions of a group sharing the context; at most
``SENTENCE_MEMO_MAX`` sentences and ``SENTENCE_MEMO_CHARS`` characters between traces); a sentence without claims
costs only its cue checks; cue regexes run only on sentences that contain one of their key words (ASCII text,
searched lower-cased by case-sensitive forms of the patterns; other text is always searched with the patterns
themselves); named units are looked up only when a claim reaches the unit-context rule (4c); and the cyclic garbage
collector is paused while one trace is built (:func:`gc_paused`): the build allocates ~10 objects per claim that all
stay alive until the graph is returned, so every collection in between would traverse them (and, in a training
process, the whole model heap) for nothing. ``tests/extraction/test_extraction_golden.py`` checks that the
graphs equal those of the plain reference implementation kept in ``tests/extraction/_reference_builder.py``.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from reasonshape.envs.base import Claim, ClaimLabel, Instance, Puzzle, check_instance
from reasonshape.envs.registry import as_puzzle
from reasonshape.extraction.schema import Mention, SchemaReader
from reasonshape.extraction.segment import Sentence, split_sentences, trace_text

__all__ = ["TENTATIVE_CUE", "RETRACTION_CUE", "ExtractionResult", "PuzzleContext", "extract_deterministic",
           "gc_paused"]

#: Sentences, and characters of their text, that a context's per-sentence memos may keep between traces
#: (:meth:`PuzzleContext.trim_sentence_memos`): about 1 MB at most (~8 bytes per character of sentence text kept).
SENTENCE_MEMO_MAX = 2048
SENTENCE_MEMO_CHARS = 131_072

TENTATIVE_CUE = re.compile(
    r"\b(?:suppose|supposing|assume|assuming|let'?s\s+(?:say|assume|suppose)|let\s+(?:us|me)\s+(?:assume|suppose)|"
    r"what\s+if|if\s+we\s+(?:put|place|try|assume|say|set)|try\s+(?:putting|placing|setting)|hypothes[ie]s|"
    r"hypothetically|as\s+a\s+guess|trial\b|"
    # "let's try" / "let me try" count only when a cell reference follows right away ("let me try (2,3) = 4",
    # "let's try a tent at (2,3)"), not for "let me try another interpretation".
    r"let(?:'?s|\s+me|\s+us)\s+(?:try|test|guess)\b(?=\s*(?:with\s+|putting\s+|placing\s+|setting\s+|:\s*)?"
    r"(?:an?\s+\w+\s+(?:at|in)\s+)?(?:\(\s*\d|r\d+c\d|row\s+\d|cell\b|\d+\s+(?:at|in)\b)))",
    re.IGNORECASE)
#: A conditional ("If (4,1) = 4, then (3,1) = 1"): the sentence's claims are tentative, no hypothesis block opens.
CONDITIONAL_CUE = re.compile(r"(?:^|[.;:]\s*|\b(?:and|but|so)\s+)if\s+(?:\(|r\d|row\b|cell\b|column\b|col\b)",
                             re.IGNORECASE)
RETRACTION_CUE = re.compile(
    r"\b(?:wait|contradiction|contradicts|contradictory|impossible|let\s+me\s+(?:re-?calculate|re-?check|"
    r"reconsider|start\s+over|redo|re-?think|re-?examine)|that'?s\s+(?:wrong|not\s+right|incorrect)|mistake|"
    r"backtrack|doesn'?t\s+work|does\s+not\s+work|not\s+possible|can'?t\s+be\s+right|conflict|"
    r"this\s+is\s+wrong|duplicate|invalid)", re.IGNORECASE)
CONSEQUENCE_START = re.compile(
    r"^\W*(?:so|therefore|thus|hence|then|this\s+means|which\s+means|that\s+means|consequently|it\s+follows|"
    r"this\s+forces|this\s+gives|as\s+a\s+result)\b", re.IGNORECASE)
# Matched against lower-cased text (no IGNORECASE: case-folding every character costs a third of the scan). The
# look-ahead names the first characters a match can start with, so the regex engine skips other positions (~1.4x).
_UNIT_TOKEN = re.compile(r"(?=[(rcbilg])(?:\b(row|column|col|box|block|cage|region|clue|island|line|group)\s*"
                         r"(\d{1,3})\b|\(\s*(\d{1,2})\s*,\s*(\d{1,2})\s*\))")
_HYPOTHESIS_MAX_SENTENCES = 12

# Key words of the cue patterns, for a cheap pre-check: on ASCII text, a sentence that a cue pattern matches contains
# (lower-cased) one of its key words, because every alternative of the pattern contains one literally. The pattern
# itself still decides. Keep these in step with the patterns (the golden tests compare against a reference that
# searches every sentence).
_TENTATIVE_KEYS = ("suppos", "assum", "let", "if", "try", "hypothe", "guess", "trial")
_RETRACTION_KEYS = ("wait", "contradict", "possible", "let", "that", "mistake", "backtrack", "does", "can",
                    "conflict", "wrong", "duplicate", "invalid")
_CONDITIONAL_KEYS = ("if",)


# The cue patterns for lower-cased ASCII text: the same patterns without IGNORECASE (every letter in them is lower
# case, and lower-casing ASCII text changes only A-Z, one for one, so a search of the lower-cased text matches exactly
# where the case-folding search of the text does; ~2.5x faster), each behind a look-ahead for the first letters of
# its alternatives (a match starts with one of them), which lets the regex engine skip other positions (~1.4x).
_TENTATIVE_LOW = re.compile(r"(?=[salwith])" + TENTATIVE_CUE.pattern)
_RETRACTION_LOW = re.compile(r"(?=[wciltmbdn])" + RETRACTION_CUE.pattern)
_CONDITIONAL_LOW = re.compile(CONDITIONAL_CUE.pattern)


def _sentence_cues(text: str) -> tuple[bool, bool, bool]:
    """(tentative, retraction, conditional): whether ``TENTATIVE_CUE``, ``RETRACTION_CUE``, ``CONDITIONAL_CUE``
    match ``text``. On ASCII text, a pattern runs only when a key word of it occurs (inlined
    :func:`_may_match` of ``_TENTATIVE_KEYS``, ``_RETRACTION_KEYS``, ``_CONDITIONAL_KEYS``: keep in step), in its
    lower-case form on the lower-cased text; other text is searched with the patterns themselves."""
    if not text.isascii():
        return (TENTATIVE_CUE.search(text) is not None, RETRACTION_CUE.search(text) is not None,
                CONDITIONAL_CUE.search(text) is not None)
    low = text.lower()
    has_if = "if" in low
    has_let = "let" in low
    tent = ((has_if or has_let or "suppos" in low or "assum" in low or "try" in low or "hypothe" in low
             or "guess" in low or "trial" in low) and _TENTATIVE_LOW.search(low) is not None)
    retr = ((has_let or "wait" in low or "contradict" in low or "possible" in low or "that" in low
             or "mistake" in low or "backtrack" in low or "does" in low or "can" in low or "conflict" in low
             or "wrong" in low or "duplicate" in low or "invalid" in low) and _RETRACTION_LOW.search(low) is not None)
    return tent, retr, has_if and _CONDITIONAL_LOW.search(low) is not None


def _may_match(low: str | None, keys: tuple[str, ...]) -> bool:
    """False only when ``low`` (a lower-cased ASCII sentence; ``None`` for non-ASCII text) contains no key word."""
    if low is None:
        return True
    for k in keys:
        if k in low:
            return True
    return False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block, then restore it (reference counting still frees
    everything that is not in a cycle).

    Building one claim graph allocates a few hundred thousand small objects for a 32k-token trace, nearly all alive
    until the block ends; automatic collections in between only traverse them (and, in a training process, the
    model's Python heap): measured at 30-60% of the extraction time. Nesting and threads are safe: only the block
    that found the collector enabled re-enables it. Source: reasonshape choice.
    """
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _unit_tokens(low: str) -> set:
    """The unit tokens of a lower-cased text: ("row", 3) for "row 3", ("cell", 2, 5) for "(2,5)"..."""
    toks = set()
    for word, num, row, col in _UNIT_TOKEN.findall(low):  # the groups as strings, "" where unmatched
        if word:
            toks.add(("column" if word == "col" else word, int(num)))
        else:
            toks.add(("cell", int(row), int(col)))
    return toks


def _contains_phrase(text: str, phrase: str) -> bool:
    """``phrase`` occurs in ``text`` not followed by a letter or digit ("row 1" is not in "row 12")."""
    i = text.find(phrase)
    while i >= 0:
        j = i + len(phrase)
        if j >= len(text) or not text[j].isalnum():
            return True
        i = text.find(phrase, i + 1)
    return False


@dataclass
class PuzzleContext:
    """Everything the extractor derives once per instance: schema reader, units, claim -> variable index.

    ``puzzle`` may be given as a Puzzle or its registry name (resolved here, so every extraction entry point
    accepts both). Raises :class:`~reasonshape.errors.ConfigError` when ``instance`` is not an instance of
    ``puzzle`` or ``puzzle`` is neither a Puzzle nor a string, :class:`~reasonshape.errors.UnknownPuzzleError`
    for an unknown name.
    """

    puzzle: Puzzle
    instance: Instance
    reader: SchemaReader = field(init=False)

    def __post_init__(self):
        self.puzzle = as_puzzle(self.puzzle)
        check_instance(self.puzzle, self.instance)
        self.reader = SchemaReader(self.puzzle, self.instance)
        self.units = self.puzzle.units(self.instance)
        self.units_of: dict[Any, list[int]] = defaultdict(list)
        for i, u in enumerate(self.units):
            for v in u.variables:
                self.units_of[v].append(i)
        # What a claim says about the variables: ``assigns[c]`` = [(var, value)] it asserts, ``denies[c]`` =
        # [(var, value)] it rules out. A claim may touch several variables (a domino fixes both its cells) and a
        # "positive=False" claim may be an assignment (an edge that is absent).
        self.assigns: dict[Claim, list] = defaultdict(list)
        self.denies: dict[Claim, list] = defaultdict(list)
        for var, dom in self.reader.domains.items():
            for val in dom:
                self.assigns[self.puzzle.value_claim(var, val, True)].append((var, val))
                self.denies[self.puzzle.value_claim(var, val, False)].append((var, val))
        self.assigns, self.denies = dict(self.assigns), dict(self.denies)
        self.unit_names = [u.name.lower() for u in self.units]
        self.unit_keys = [frozenset(_unit_tokens(name)) for name in self.unit_names]
        self.tokenless_units = {i for i, k in enumerate(self.unit_keys) if not k}
        self.units_by_token: dict[Any, list[int]] = defaultdict(list)
        for i, keys in enumerate(self.unit_keys):
            for k in keys:
                self.units_by_token[k].append(i)
        self.givens = frozenset(self.puzzle.given_claims(self.instance))
        #: variable -> the given claim fixing its value (given digits of Latin squares, fixed cells...)
        self.given_value = {}
        for g in self.givens:
            for var, _ in self.assigns.get(g, ()):
                self.given_value[var] = g
        self._info: dict[Claim, _ClaimInfo] = {}
        self._label_by_id: list[ClaimLabel | None] = []
        self._claim_units: dict[Claim, set[int]] | None = None
        #: What a sentence's text alone decides, kept across the completions that share this context (a GRPO
        #: group, and later steps on the instance): sentence -> (offset it was read at, its mentions, separator
        #: row?), sentence -> (tentative, retraction, conditional cue), sentence -> units it names. Emptied when
        #: they hold more than ``SENTENCE_MEMO_MAX`` sentences or ``SENTENCE_MEMO_CHARS`` characters after a trace
        #: (see :meth:`trim_sentence_memos`).
        self.sentence_readings: dict[str, tuple[int, tuple[Mention, ...], bool]] = {}
        self.sentence_cues: dict[str, tuple[bool, bool, bool]] = {}
        self.sentence_units: dict[str, frozenset[int]] = {}
        self._memo_chars = 0  # characters of the sentences in sentence_readings

    def info(self, claim: Claim) -> _ClaimInfo:
        """The cached per-claim facts the dependency rule reads (computed on first use, then kept). Equal claims
        get the same record, so its ``cid`` (a dense int id per instance) can key the builder's tables."""
        inf = self._info.get(claim)
        if inf is None:
            a, d = self.effects(claim)
            variables = self.variables_of(claim)
            inf = self._info[claim] = _ClaimInfo(len(self._label_by_id), claim, claim in self.givens, a, d,
                                                 variables, frozenset(variables),
                                                 frozenset(self.units_of_claim(claim)))
            self._label_by_id.append(None)
        return inf

    def label_of(self, inf: _ClaimInfo) -> ClaimLabel:
        """The puzzle's label of ``inf.claim`` (:func:`~reasonshape.extraction.labels.label_claim`), computed once
        per instance and claim (:meth:`SchemaReader.label`, which the reader's own claims went through already),
        then kept by claim id. Raises :class:`ClaimError` where the puzzle refuses the claim."""
        lab = self._label_by_id[inf.cid]
        if lab is None:
            lab = self._label_by_id[inf.cid] = self.reader.label(inf.claim)
        return lab

    def effects(self, claim: Claim) -> tuple[list, list]:
        """``(assigned, denied)``: the (variable, value) pairs ``claim`` asserts and rules out."""
        a = self.assigns.get(claim)
        if a:
            return a, []
        return [], self.denies.get(claim, [])

    def variables_of(self, claim: Claim) -> tuple:
        a, d = self.effects(claim)
        if a or d:
            return tuple(dict.fromkeys(v for v, _ in a + d))
        return tuple(c for c in claim.cells if c in self.reader.domains)

    def units_of_claim(self, claim: Claim) -> set[int]:
        out: set[int] = set()
        for v in self.variables_of(claim):
            out.update(self.units_of.get(v, ()))
        if not out:  # static clue claims: units whose premises include the claim
            if self._claim_units is None:
                by_premise: dict[Claim, set[int]] = {}
                for i, u in enumerate(self.units):
                    for g in u.premises:
                        by_premise.setdefault(g, set()).add(i)
                self._claim_units = by_premise
            out.update(self._claim_units.get(claim, ()))
        return out

    def named_units(self, text: str) -> set[int]:
        """Units whose name (e.g. "row 3", "the clue 2 at (5,4)") appears in ``text`` as a whole phrase."""
        low = text.lower()
        by_token, names = self.units_by_token, self.unit_names
        out = set()
        for t in _unit_tokens(low):
            for i in by_token.get(t, ()):
                if i not in out and _contains_phrase(low, names[i]):
                    out.add(i)
        for i in self.tokenless_units:
            if _contains_phrase(low, names[i]):
                out.add(i)
        return out

    def label(self, claim: Claim) -> ClaimLabel:
        """:meth:`label_of` the claim's :meth:`info` (one cache for both)."""
        return self.label_of(self.info(claim))

    def clear_sentence_memos(self) -> None:
        """Empty the per-sentence memos (``sentence_readings``, ``sentence_cues``, ``sentence_units``)."""
        self.sentence_readings.clear()
        self.sentence_cues.clear()
        self.sentence_units.clear()
        self._memo_chars = 0

    def trim_sentence_memos(self) -> None:
        """Empty the per-sentence memos when they hold more than ``SENTENCE_MEMO_MAX`` sentences or
        ``SENTENCE_MEMO_CHARS`` characters. Called before and after each trace, so between traces a context keeps
        at most that; while one trace is built, its own sentences come on top."""
        if (self._memo_chars > SENTENCE_MEMO_CHARS
                or max(len(self.sentence_readings), len(self.sentence_cues), len(self.sentence_units))
                > SENTENCE_MEMO_MAX):
            self.clear_sentence_memos()


class _ClaimInfo(NamedTuple):
    """What the builder needs to know about one claim (cached per instance in :meth:`PuzzleContext.info`)."""

    cid: int
    claim: Claim
    given: bool
    assigned: list
    denied: list
    variables: tuple
    var_set: frozenset
    units: frozenset


@dataclass
class ExtractionResult:
    """A trace's claim graph plus what extraction saw.

    Attributes
    ----------
    graph : ClaimGraph
        Nodes are claim occurrences in trace order; see :mod:`reasonshape.extraction.graph`.
    sentences : list of Sentence
        The segmentation (offsets into ``text``).
    text : str
        The trace that was read (reasoning then answer).
    tentative_sentences, retraction_sentences : list of int
        Sentence indices with a tentative / retraction cue.
    mode : str
        ``"deterministic"`` or ``"llm"``.
    fallback : str | None
        Why the LLM-assisted path fell back to the deterministic graph, if it did.
    """

    graph: Any
    sentences: list[Sentence]
    text: str
    tentative_sentences: list[int]
    retraction_sentences: list[int]
    mode: str = "deterministic"
    fallback: str | None = None

    @property
    def n_sentences(self) -> int:
        return len(self.sentences)


def extract_deterministic(puzzle: Puzzle, instance: Instance, completion: Any,
                          context: PuzzleContext | None = None) -> ExtractionResult:
    """The claim graph of ``completion`` (string, message or message list) for ``instance``, with no LLM.

    Parameters
    ----------
    puzzle, instance
        The puzzle and instance the completion answers.
    completion
        The completion; reasoning (``reasoning_content`` / ``<think>``) and answer are read alike.
    context : PuzzleContext, optional
        Reuse a context across completions of the same instance (a GRPO group) to skip re-deriving units.

    Returns
    -------
    ExtractionResult
        Never raises on odd text: an empty or claim-free trace gives an empty graph.
    """
    with gc_paused():
        ctx = context or PuzzleContext(puzzle, instance)
        text = trace_text(completion)
        sentences = split_sentences(text)
        mentions = read_mentions(ctx, sentences)
        return build_graph(ctx, text, sentences, mentions)


def read_mentions(ctx: PuzzleContext, sentences: list[Sentence]) -> list[list[Mention]]:
    """The schema's claims per sentence (grids written out mid-trace resolved into cell claims).

    A sentence whose exact text was already read in this context (earlier in the trace, or in another completion
    sharing ``ctx``) is not read again: the earlier reading is reused with its offsets shifted
    (:meth:`SchemaReader.read` reads one sentence on its own; ``offset`` only shifts the spans). Real traces repeat
    many sentences verbatim (rewritten grids, re-checks): 57% of the sentences of
    ``tests/data/real_traces_sample.jsonl``; completions of one group share more. Source: reasonshape choice.
    """
    reader = ctx.reader
    ctx.trim_sentence_memos()
    seen = ctx.sentence_readings
    mentions: list[list[Mention]] = []
    separators: list[bool] = []
    for s in sentences:
        hit = seen.get(s.text)
        if hit is None:
            ms = reader.read(s.text, s.start)
            sep = bool(reader.grid and reader.is_separator_row(s.text))
            seen[s.text] = (s.start, tuple(ms), sep)
            ctx._memo_chars += len(s.text)
        else:
            delta = s.start - hit[0]
            ms = [Mention(m.claim, m.start + delta, m.end + delta, m.listing) for m in hit[1]]
            sep = hit[2]
        mentions.append(ms)
        separators.append(sep)
    ctx.reader.resolve_grid_rows(mentions, separators)
    return mentions


def build_graph(ctx: PuzzleContext, text: str, sentences: list[Sentence], mentions: list[list[Mention]],
                premises: dict[tuple[int, int], tuple[list[tuple[int, int]], list[Claim]]] | None = None,
                mode: str = "deterministic") -> ExtractionResult:
    """Steps 2-5 of the module docstring over given mentions.

    ``premises`` optionally overrides step 4 for some claim occurrences: ``(sentence, k) -> (premise keys,
    unstated claims)`` where keys are ``(sentence, k)`` of earlier mentions (``k`` = position in that sentence's
    mention list) and unstated claims become placeholders (the LLM-assisted path, paper A §B step 3).
    """
    with gc_paused():
        b = _Builder(ctx, premises)
        tentative_s, retract_s = [], []
        prev_end = 0
        cue_memo = ctx.sentence_cues  # sentence text -> its cues (traces and their siblings repeat sentences)
        for s, ms in zip(sentences, mentions, strict=True):
            st = s.text
            start = s.start
            cues = cue_memo.get(st)
            if cues is None:
                cues = cue_memo[st] = _sentence_cues(st)
            is_tent, is_retr, is_cond = cues
            if is_tent:
                tentative_s.append(s.index)
            if is_retr:
                retract_s.append(s.index)
            if b.hyp_open and (s.index - b.hyp_start >= _HYPOTHESIS_MAX_SENTENCES
                               or text.find("\n\n", prev_end, start) >= 0):
                b.close_hypothesis(refuted=False)
            prev_end = s.end
            if is_retr and b.hyp_open:
                b.close_hypothesis(refuted=True)
                b.sentence(s, ms, refutation=True)
            elif is_tent and ms:
                b.open_hypothesis(s.index)
                b.sentence(s, ms, head=True)
            elif ms and is_cond:
                tentative_s.append(s.index)
                b.sentence(s, ms, conditional=True)
            elif ms:
                b.sentence(s, ms)
            else:  # no claims: only the sentence-to-sentence state moves on (see _Builder.sentence)
                b.prev_sentence_nodes = []
                b.prev_text = st
        ctx.trim_sentence_memos()
        return ExtractionResult(b.to_graph(), sentences, text, tentative_s, retract_s, mode=mode)


class _Builder:
    """Incremental graph construction in trace order (one pass).

    Nodes are tuples ``(claim, sentence, span, label, origin, static, order)``; ``node_info[i]`` is node i's
    :class:`_ClaimInfo`. Occurrence tables are keyed by claim id (:meth:`PuzzleContext.info`), so each mention's
    claim is hashed once."""

    def __init__(self, ctx: PuzzleContext, overrides=None):
        self.ctx = ctx
        self.overrides = overrides or {}
        self.node_of_key: dict[tuple[int, int], int] = {}
        self.nodes: list[tuple] = []
        self.node_info: list[_ClaimInfo] = []
        # (premise, conclusion, kind); unique by construction: a node gets its in-edges once, when it is created
        self.edges: list[tuple[int, int, str]] = []
        self.last_occ: dict[int, int] = {}  # claim id -> node of its latest occurrence
        self.value_node: dict[Any, int] = {}  # committed: variable -> node of its latest positive value claim
        # committed: variable -> {claim id: node of the latest occurrence of that elimination}
        self.neg_nodes: dict[Any, dict[int, int]] = defaultdict(dict)
        self.hyp_open = False
        self.hyp_start = -1
        self.hyp_heads: list[int] = []
        self.hyp_value: dict[Any, int] = {}
        self.hyp_last_sentence: list[int] = []
        self.refutable: list[int] = []
        self.prev_sentence_nodes: list[int] = []
        self.prev_text = ""
        self.named_memo = ctx.sentence_units

    # ------------------------------------------------------------------ hypotheses
    def open_hypothesis(self, sentence: int) -> None:
        if self.hyp_open:
            self.close_hypothesis(refuted=False)
        self.hyp_open, self.hyp_start = True, sentence
        self.hyp_heads, self.hyp_value, self.hyp_last_sentence = [], {}, []

    def close_hypothesis(self, refuted: bool) -> None:
        self.refutable = (self.hyp_heads + self.hyp_last_sentence) if refuted else []
        self.hyp_open = False
        self.hyp_value = {}

    # ------------------------------------------------------------------ nodes
    def _add(self, inf: _ClaimInfo, sentence, span, origin, static, tentative, order) -> int:
        label = ClaimLabel.TENTATIVE if tentative else self.ctx.label_of(inf)
        self.nodes.append((inf.claim, sentence, span, label, origin, static, order))
        self.node_info.append(inf)
        return len(self.nodes) - 1

    def _occurrence(self, claim: Claim, sentence: int, order: tuple) -> int:
        """The node standing for ``claim`` as a premise: its latest occurrence, or a new placeholder."""
        inf = self.ctx.info(claim)
        i = self.last_occ.get(inf.cid)
        if i is not None:
            return i
        i = self._add(inf, sentence, None, "placeholder", inf.given, False, order)
        self.last_occ[inf.cid] = i
        return i

    def sentence(self, s: Sentence, ms: list[Mention], head: bool = False, refutation: bool = False,
                 conditional: bool = False) -> None:
        info_of = self.ctx.info
        last_occ = self.last_occ
        tentative = self.hyp_open or conditional
        # Premise-type mentions (restatements, givens) are placed before the sentence's conclusions.
        infos = [info_of(m.claim) for m in ms]
        seen_before = [inf.cid in last_occ for inf in infos]
        if len(ms) > 1:
            ordered = sorted(range(len(ms)), key=lambda j: (0 if (seen_before[j] or infos[j].given) else 1,
                                                             ms[j].start))
        else:
            ordered = range(len(ms))
        this_nodes: list[int] = []
        # local premise pool (step 4b): the previous sentence's nodes after a consequence cue (looked up on first
        # use), then this sentence's restatements and givens
        pool_state = [None, []]  # [consequence cue matched (None: not looked up yet), this sentence's pool nodes]
        named_cache: list = []  # the named units of step 4c, computed on first use
        index = s.index
        overrides = self.overrides
        for k, j in enumerate(ordered):
            m = ms[j]
            inf = infos[j]
            order = (index, 1, k)
            static = inf.given
            prev = last_occ.get(inf.cid)
            if prev is not None:  # restatement
                i = self._add(inf, index, (m.start, m.end), "stated", static, tentative, order)
                self.edges.append((prev, i, "restatement"))
            elif static:
                i = self._add(inf, index, (m.start, m.end), "stated", True, False, order)
            elif head and tentative and not self.hyp_heads_done(index):
                i = self._add(inf, index, (m.start, m.end), "stated", False, True, order)
                self.hyp_heads.append(i)
            else:
                if overrides and (index, j) in overrides:
                    keys, unstated = overrides[(index, j)]
                    premises = [self.node_of_key[key] for key in keys if key in self.node_of_key]
                    premises += [self._occurrence(u, index, (index, 0, len(self.nodes))) for u in unstated]
                    premises = list(dict.fromkeys(premises))
                elif m.listing:  # a grid or row listing states values without reasoning: directly stated
                    premises = []
                else:
                    premises = self._premises(inf, s, named_cache, pool_state, refutation)
                origin = "stated" if premises else "directly_stated"
                i = self._add(inf, index, (m.start, m.end), origin, False, tentative, order)
                self.edges.extend([(p, i, "inference") for p in premises])
            last_occ[inf.cid] = i
            if overrides:  # premise keys of the overrides name earlier mentions
                self.node_of_key[(index, j)] = i
            this_nodes.append(i)
            if not m.listing and (seen_before[j] or static):  # only restatements and givens are local premises
                pool_state[1].append(i)
            self._update_state(inf, i, tentative)
        if self.hyp_open:
            if this_nodes:
                self.hyp_last_sentence = this_nodes
        if refutation:
            self.refutable = []
        self.prev_sentence_nodes = this_nodes
        self.prev_text = s.text

    def _named(self, text: str) -> frozenset[int]:
        """:meth:`PuzzleContext.named_units`, memoised in the context (a sentence is looked up again as the next
        sentence's previous text, and traces and their siblings repeat sentences)."""
        named = self.named_memo.get(text)
        if named is None:
            named = self.named_memo[text] = frozenset(self.ctx.named_units(text))
        return named

    def hyp_heads_done(self, sentence: int) -> bool:
        # Only the sentence that opened the hypothesis supplies heads.
        return sentence != self.hyp_start

    def _update_state(self, inf: _ClaimInfo, node: int, tentative: bool) -> None:
        if inf.assigned:
            target = self.hyp_value if tentative else self.value_node
            for var, _ in inf.assigned:
                target[var] = node
        elif inf.denied and not tentative:
            neg = self.neg_nodes
            for var, _ in inf.denied:
                neg[var][inf.cid] = node  # a restated elimination supersedes its earlier occurrence

    def _premises(self, inf, s, named_cache, pool_state, refutation) -> list[int]:
        ctx = self.ctx
        if refutation and self.refutable:
            heads = [self.nodes[h][0] for h in self.hyp_heads]
            if not heads or inf.claim.negated() in heads:
                return list(dict.fromkeys(self.refutable))
        units = inf.units
        own_vars = inf.var_set
        if pool_state[0] is None:
            pool_state[0] = CONSEQUENCE_START.search(s.text) is not None
        pool = (self.prev_sentence_nodes + pool_state[1]) if pool_state[0] else pool_state[1]
        if pool:
            local = []
            node_info, cid = self.node_info, inf.cid
            for p in pool:
                pinf = node_info[p]
                if pinf.cid == cid:
                    continue
                if not units.isdisjoint(pinf.units) or not own_vars.isdisjoint(pinf.var_set):
                    local.append(p)
            if local:
                return list(dict.fromkeys(local))
        if not named_cache:
            named_cache.append(self._named(s.text) or self._named(self.prev_text))
        named = named_cache[0]
        scope = (named & units) if named else units
        if not scope:
            scope = units
        out: list[int] = []
        value_node, neg_nodes, given_value = self.value_node, self.neg_nodes, ctx.given_value
        hyp_value = self.hyp_value if self.hyp_open else None
        for ui in sorted(scope):
            unit = ctx.units[ui]
            for v in unit.variables:
                if v in own_vars:
                    continue
                n = hyp_value.get(v) if hyp_value else None
                if n is None:
                    n = value_node.get(v)
                if n is not None:
                    out.append(n)
                elif v in given_value:
                    out.append(self._occurrence(given_value[v], s.index, (s.index, 0, len(self.nodes))))
                elif v in neg_nodes:
                    out.extend(neg_nodes[v].values())
            for g in unit.premises:
                out.append(self._occurrence(g, s.index, (s.index, 0, len(self.nodes))))
        for v in inf.variables:
            if v in neg_nodes:
                out.extend(neg_nodes[v].values())
        return list(dict.fromkeys(out))

    # ------------------------------------------------------------------ output
    def to_graph(self):
        from reasonshape.extraction.graph import ClaimGraph

        nodes_in = self.nodes
        order = sorted(range(len(nodes_in)), key=lambda i: nodes_in[i][6])
        if order == list(range(len(order))):  # no placeholder inserted: ids are already trace order
            nodes = [n[:6] for n in nodes_in]
            edges = sorted(self.edges)
        else:
            # (the sort key sees new ids, so this is the sorted edge list of the renumbered graph)
            new_id = [0] * len(order)
            for new, old in enumerate(order):
                new_id[old] = new
            nodes = [nodes_in[i][:6] for i in order]
            edges = sorted((new_id[a], new_id[b], kind) for a, b, kind in self.edges)
        return ClaimGraph.from_records(nodes, edges)
