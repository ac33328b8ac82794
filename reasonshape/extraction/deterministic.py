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
themselves); named units are looked up only when a claim reaches the unit-context rule (4c), which reads the
builder's per-variable state by dense variable id (lists; no variable is hashed); the builder makes the claim graph's
own node dicts and its edge list in trace order (``ClaimGraph._from_trusted``, which builds the DiGraph on first use;
re-sorted only when a placeholder must move);
and the cyclic garbage collector is paused while one trace is built (:func:`gc_paused`): the build allocates ~10
objects per claim that all stay alive until the graph is returned, so every collection in between would traverse them
(and, in a training process, the whole model heap) for nothing. ``tests/extraction/test_extraction_golden.py`` checks
that the graphs equal those of the plain reference implementation kept in ``tests/extraction/_reference_builder.py``.
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
    match ``text``. On ASCII text, a pattern runs only when a key word of it occurs (:func:`_may_match` of
    ``_TENTATIVE_KEYS``, ``_RETRACTION_KEYS``, ``_CONDITIONAL_KEYS``), in its lower-case form on the lower-cased
    text; other text is searched with the patterns themselves."""
    if not text.isascii():
        return (TENTATIVE_CUE.search(text) is not None, RETRACTION_CUE.search(text) is not None,
                CONDITIONAL_CUE.search(text) is not None)
    low = text.lower()
    return (_may_match(low, _TENTATIVE_KEYS) and _TENTATIVE_LOW.search(low) is not None,
            _may_match(low, _RETRACTION_KEYS) and _RETRACTION_LOW.search(low) is not None,
            _may_match(low, _CONDITIONAL_KEYS) and _CONDITIONAL_LOW.search(low) is not None)


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
    return {_unit_token(raw) for raw in _UNIT_TOKEN.findall(low)}


def _unit_token(raw: tuple[str, str, str, str]) -> tuple:
    """The unit token of one ``_UNIT_TOKEN`` match given as its groups (strings, "" where unmatched)."""
    word, num, row, col = raw
    if word:
        return ("column" if word == "col" else word, int(num))
    return ("cell", int(row), int(col))


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
        #: raw ``_UNIT_TOKEN`` groups -> the units of their token (:meth:`named_units`); at most the distinct
        #: groups of 11 words with 1-3 digits and of cells with 1-2 digit coordinates
        self._units_of_raw: dict[tuple[str, str, str, str], tuple[int, ...]] = {}
        self.givens = frozenset(self.puzzle.given_claims(self.instance))
        #: variable -> the given claim fixing its value (given digits of Latin squares, fixed cells...)
        self.given_value = {}
        for g in self.givens:
            for var, _ in self.assigns.get(g, ()):
                self.given_value[var] = g
        self._info: dict[Claim, _ClaimInfo] = {}
        self._label_by_id: list[ClaimLabel | None] = []
        self._claim_units: dict[Claim, set[int]] | None = None
        # Dense int ids of the variables (domains, then unit variables), so the builder's per-variable state is a
        # list indexed by id and the unit-context rule (4c) hashes no variable tuple: ``unit_var_ids[u]`` = the ids
        # of unit u's variables in its order; ``given_info_by_var[id]`` = the info of the given claim fixing that
        # variable (else None); ``unit_premise_infos[u]`` = the infos of unit u's premises, in order (None until the
        # unit-context rule first reaches unit u: most units of a small instance are never reached, and building
        # every unit's infos up front took about a sixth of the context's construction).
        self.var_id: dict[Any, int] = {}
        for v in self.reader.domains:
            self.var_id.setdefault(v, len(self.var_id))
        for u in self.units:
            for v in u.variables:
                self.var_id.setdefault(v, len(self.var_id))
        self.unit_var_ids = [tuple(self.var_id[v] for v in u.variables) for u in self.units]
        self.given_info_by_var: list[_ClaimInfo | None] = [None] * len(self.var_id)
        for var, g in self.given_value.items():
            self.given_info_by_var[self.var_id[var]] = self.info(g)
        self.unit_premise_infos: list[tuple[_ClaimInfo, ...] | None] = [None] * len(self.units)
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
            var_id = self.var_id
            var_ids = tuple(var_id[v] for v in variables)
            units = frozenset(self.units_of_claim(claim))
            inf = self._info[claim] = _ClaimInfo(len(self._label_by_id), claim, claim in self.givens, a, d,
                                                 variables, frozenset(variables), units, var_ids,
                                                 frozenset(var_ids), tuple(var_id[v] for v, _ in a),
                                                 tuple(var_id[v] for v, _ in d), tuple(sorted(units)))
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
        # The candidates of each unit token, memoised by the token's raw findall groups (the strings _unit_tokens
        # turns into a token: the same groups give the same token, so the same candidates); a candidate is checked
        # once (a set of indices does not change when an index is added twice, and the phrase test depends on the
        # text alone) and only where its name occurs at all (``_contains_phrase`` is False otherwise).
        low = text.lower()
        names, memo = self.unit_names, self._units_of_raw
        out = set()
        for raw in _UNIT_TOKEN.findall(low):
            cands = memo.get(raw)
            if cands is None:
                cands = tuple(self.units_by_token.get(_unit_token(raw), ()))
                # kept for ASCII groups only: with the ASCII digits the keys are bounded (~24k), with every Unicode
                # decimal digit that \d matches they would not be
                if "".join(raw).isascii():
                    memo[raw] = cands
            for i in cands:
                if i not in out:
                    name = names[i]
                    if name in low and _contains_phrase(low, name):
                        out.add(i)
        for i in self.tokenless_units:
            if _contains_phrase(low, names[i]):
                out.add(i)
        return out

    def label(self, claim: Claim) -> ClaimLabel:
        """:meth:`label_of` the claim's :meth:`info` (one cache for both)."""
        return self.label_of(self.info(claim))

    def clear_sentence_memos(self) -> None:
        """Empty the per-sentence memos (``sentence_readings``, ``sentence_cues``, ``sentence_units``) and the
        reader's memo of predicates by window text (:meth:`SchemaReader.clear_predicate_memo`), which sentences
        fill as well."""
        self.reader.clear_predicate_memo()
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
    #: the same facts with variables as :attr:`PuzzleContext.var_id` ids, and the units in ascending order
    var_ids: tuple
    var_id_set: frozenset
    assigned_ids: tuple
    denied_ids: tuple
    units_sorted: tuple


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

    ``nodes[i]`` is node i's attribute dict (``claim``, ``sentence``, ``span``, ``label``, ``origin``, ``static``:
    the claim graph's own, handed over by :meth:`to_graph`) and ``node_info[i]`` its :class:`_ClaimInfo`, in order of
    creation; a placeholder created after a mention of its sentence is moved before that sentence's mentions by
    :meth:`to_graph`. Occurrence tables are keyed by claim id (:meth:`PuzzleContext.info`), so each mention's claim
    is hashed once; per-variable state is kept by variable id (:attr:`PuzzleContext.var_id`)."""

    def __init__(self, ctx: PuzzleContext, overrides=None):
        self.ctx = ctx
        self.overrides = overrides or {}
        self.node_of_key: dict[tuple[int, int], int] = {}
        self.nodes: list[dict] = []
        self.node_info: list[_ClaimInfo] = []
        # 2 * sentence for a placeholder, 2 * sentence + 1 for a mention: a stable sort by it is trace order
        self.node_key: list[int] = []
        self.reorder = False  # a placeholder followed a mention of its sentence (creation order is not trace order)
        # (premise, conclusion, kind), grouped by conclusion in order of creation, premises ascending; unique by
        # construction: a node gets its in-edges once, right after it is created
        self.edges: list[tuple[int, int, str]] = []
        self.last_occ: dict[int, int] = {}  # claim id -> node of its latest occurrence
        n_vars = len(ctx.var_id)
        self.value_node: list[int | None] = [None] * n_vars  # committed: variable id -> node of its latest value claim
        # committed: variable id -> {claim id: node of the latest occurrence of that elimination} (None: none yet)
        self.neg_nodes: list[dict[int, int] | None] = [None] * n_vars
        self.hyp_open = False
        self.hyp_start = -1
        self.hyp_heads: list[int] = []
        self.hyp_value: dict[int, int] = {}
        self.hyp_last_sentence: list[int] = []
        self.refutable: list[int] = []
        self.prev_sentence_nodes: list[int] = []
        self.prev_text = ""
        self.this_nodes: list[int] = []  # the mention nodes of the sentence being built
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
    def _occurrence(self, inf: _ClaimInfo, sentence: int) -> int:
        """The node standing for ``inf.claim`` as a premise: its latest occurrence, or a new placeholder (placed
        before the mentions of ``sentence``)."""
        i = self.last_occ.get(inf.cid)
        if i is not None:
            return i
        i = len(self.nodes)
        self.nodes.append({"claim": inf.claim, "sentence": sentence, "span": None, "label": self.ctx.label_of(inf),
                           "origin": "placeholder", "static": inf.given})
        self.node_info.append(inf)
        self.node_key.append(2 * sentence)
        if self.this_nodes:
            self.reorder = True
        self.last_occ[inf.cid] = i
        return i

    def sentence(self, s: Sentence, ms: list[Mention], head: bool = False, refutation: bool = False,
                 conditional: bool = False) -> None:
        ctx = self.ctx
        info_of, label_of = ctx.info, ctx.label_of
        last_occ = self.last_occ
        nodes, node_info, node_key, edges = self.nodes, self.node_info, self.node_key, self.edges
        tentative = self.hyp_open or conditional
        index = s.index
        key = 2 * index + 1
        # Premise-type mentions (restatements, givens: group 0) are placed before the sentence's conclusions, each
        # group by start; the mention's position j breaks ties, as the stable sort by (group, start) did, so the
        # mention and its info are never compared.
        entries = []
        for j, m in enumerate(ms):
            inf = info_of(m.claim)
            entries.append((0 if (inf.cid in last_occ or inf.given) else 1, m.start, j, m, inf))
        if len(entries) > 1:
            entries.sort()
        this_nodes: list[int] = []
        self.this_nodes = this_nodes
        # local premise pool (step 4b): the previous sentence's nodes after a consequence cue (looked up on first
        # use), then this sentence's restatements and givens
        pool_nodes: list[int] = []
        pool_state = [None, pool_nodes]  # [consequence cue matched (None: not looked up yet), this sentence's pool]
        named_cache: list = []  # the named units of step 4c, computed on first use
        overrides = self.overrides
        value_node, neg_nodes = self.value_node, self.neg_nodes
        for group, start, j, m, inf in entries:
            static = inf.given
            cid = inf.cid
            span = (start, m.end)
            prev = last_occ.get(cid)
            if prev is not None:  # restatement
                i = len(nodes)
                nodes.append({"claim": inf.claim, "sentence": index, "span": span,
                              "label": ClaimLabel.TENTATIVE if tentative else label_of(inf), "origin": "stated",
                              "static": static})
                edges.append((prev, i, "restatement"))
            elif static:
                i = len(nodes)
                nodes.append({"claim": inf.claim, "sentence": index, "span": span, "label": label_of(inf),
                              "origin": "stated", "static": True})
            elif head and tentative and not self.hyp_heads_done(index):
                i = len(nodes)
                nodes.append({"claim": inf.claim, "sentence": index, "span": span, "label": ClaimLabel.TENTATIVE,
                              "origin": "stated", "static": False})
                self.hyp_heads.append(i)
            else:
                if overrides and (index, j) in overrides:
                    keys, unstated = overrides[(index, j)]
                    premises = [self.node_of_key[k] for k in keys if k in self.node_of_key]
                    premises += [self._occurrence(info_of(u), index) for u in unstated]
                    premises = list(dict.fromkeys(premises))
                elif m.listing:  # a grid or row listing states values without reasoning: directly stated
                    premises = []
                else:
                    premises = self._premises(inf, s, named_cache, pool_state, refutation)
                i = len(nodes)  # after the placeholders the premises may have added
                nodes.append({"claim": inf.claim, "sentence": index, "span": span,
                              "label": ClaimLabel.TENTATIVE if tentative else label_of(inf),
                              "origin": "stated" if premises else "directly_stated", "static": False})
                if premises:
                    premises.sort()
                    edges.extend([(p, i, "inference") for p in premises])
            node_info.append(inf)
            node_key.append(key)
            last_occ[cid] = i
            if overrides:  # premise keys of the overrides name earlier mentions
                self.node_of_key[(index, j)] = i
            this_nodes.append(i)
            if not group and not m.listing:  # only restatements and givens are local premises
                pool_nodes.append(i)
            # the committed (or hypothesis) state
            if inf.assigned_ids:
                target = self.hyp_value if tentative else value_node
                for v in inf.assigned_ids:
                    target[v] = i
            elif inf.denied_ids and not tentative:
                for v in inf.denied_ids:
                    negs = neg_nodes[v]
                    if negs is None:
                        negs = neg_nodes[v] = {}
                    negs[cid] = i  # a restated elimination supersedes its earlier occurrence
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

    def _premises(self, inf, s, named_cache, pool_state, refutation) -> list[int]:
        ctx = self.ctx
        if refutation and self.refutable:
            heads = [self.node_info[h].claim for h in self.hyp_heads]
            if not heads or inf.claim.negated() in heads:
                return list(dict.fromkeys(self.refutable))
        units = inf.units
        own_vars = inf.var_id_set
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
                if not units.isdisjoint(pinf.units) or not own_vars.isdisjoint(pinf.var_id_set):
                    local.append(p)
            if local:
                return list(dict.fromkeys(local))
        if not named_cache:
            named_cache.append(self._named(s.text) or self._named(self.prev_text))
        named = named_cache[0]
        scope = (named & units) if named else None
        # (inf.units_sorted is sorted(units), the scope when no named unit is one of c's)
        scope = sorted(scope) if scope else inf.units_sorted
        out: list[int] = []
        value_node, neg_nodes, given_info = self.value_node, self.neg_nodes, ctx.given_info_by_var
        unit_var_ids, unit_premise_infos = ctx.unit_var_ids, ctx.unit_premise_infos
        hyp_value = self.hyp_value if self.hyp_open else None
        last_occ, index = self.last_occ, s.index
        for ui in scope:
            for v in unit_var_ids[ui]:
                if v in own_vars:
                    continue
                n = hyp_value.get(v) if hyp_value else None
                if n is None:
                    n = value_node[v]
                if n is not None:
                    out.append(n)
                    continue
                ginf = given_info[v]
                if ginf is not None:
                    n = last_occ.get(ginf.cid)
                    out.append(self._occurrence(ginf, index) if n is None else n)
                else:
                    negs = neg_nodes[v]
                    if negs is not None:
                        out.extend(negs.values())
            premise_infos = unit_premise_infos[ui]
            if premise_infos is None:
                premise_infos = unit_premise_infos[ui] = tuple(ctx.info(g) for g in ctx.units[ui].premises)
            for ginf in premise_infos:
                n = last_occ.get(ginf.cid)
                out.append(self._occurrence(ginf, index) if n is None else n)
        for v in inf.var_ids:
            negs = neg_nodes[v]
            if negs is not None:
                out.extend(negs.values())
        return list(dict.fromkeys(out))

    # ------------------------------------------------------------------ output
    def to_graph(self):
        from reasonshape.extraction.graph import ClaimGraph

        nodes, infos, edges = self.nodes, self.node_info, self.edges
        if self.reorder:
            # trace order: a stable sort by node_key (placeholders of a sentence before its mentions, each in order
            # of creation); the edges renumbered and sorted (the order ClaimGraph.from_records inserts them in)
            order = sorted(range(len(nodes)), key=self.node_key.__getitem__)
            new_id = [0] * len(order)
            for new, old in enumerate(order):
                new_id[old] = new
            nodes = [nodes[i] for i in order]
            infos = [infos[i] for i in order]
            edges = sorted((new_id[a], new_id[b], kind) for a, b, kind in edges)
        # Otherwise creation order is trace order, and the edges come grouped by conclusion in ascending order with
        # ascending premises: inserting them in that order fills each successor row in ascending order and each
        # predecessor row in ascending order, as the sorted edge list of from_records does.
        # The claim index (claim -> its nodes), grouped by claim id: equal claims share one id, and the first node of
        # a group holds the claim object the index is keyed by (every node of a claim holds the same object).
        by_cid: dict[int, list[int]] = {}
        for i, inf in enumerate(infos):
            occ = by_cid.get(inf.cid)
            if occ is None:
                by_cid[inf.cid] = [i]
            else:
                occ.append(i)
        index = {infos[occ[0]].claim: occ for occ in by_cid.values()}
        return ClaimGraph._from_trusted(nodes, edges, index)
