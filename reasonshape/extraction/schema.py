"""The deterministic claim schema: recognising claims in a sentence, for every puzzle.

Generic recognisers cover the conventions of the prompt and what real models write, for every puzzle whose
variables are grid cells: cell references ``(3,4)``, ``r3c4``, ``R3C4``, ``row 3, column 4``, ``cell at row 3
col 4``; value claims ("(3,4) is 5", "(3,4) = 5", "r3c4 must be a tent", "place 5 at (3,4)"), eliminations
("(2,5) is not 3", "(2,5) can't be 3"), candidate lists ("(2,5) can be 1 or 6"), count claims ("row 3 needs 2 more
tents", "column 2 has 3 lights"), row listings ("Row 4: 1 3 4 2") and grids written out mid-trace. Values are
digits or the puzzle's ``VALUE_WORDS``. Each puzzle adds recognisers for its own claim kinds through
:meth:`~reasonshape.envs.base.Puzzle.parse_claim_text` (edges, bridges...).

Every pattern is a flat regular expression without nested unbounded quantifiers, and every predicate is matched
in a bounded window after (or before) a cell reference, so recognition is linear in the trace length (a 1 MB trace
is a test). Source: paper A §B step (1), deterministic templates; the patterns are reasonshape's.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass, field

from reasonshape.envs.answer import split_tokens
from reasonshape.envs.base import Claim, Instance, Puzzle

__all__ = ["Mention", "SchemaReader", "CELL_REF"]

CELL_REF = re.compile(
    r"\(\s*(?P<r1>\d{1,2})\s*,\s*(?P<c1>\d{1,2})\s*\)"
    r"|\b[rR](?P<r2>\d{1,2})\s?[cC](?P<c2>\d{1,2})\b"
    r"|\brow\s+(?P<r3>\d{1,2})\s*,?\s*(?:and\s+)?col(?:umn)?\.?\s+(?P<c3>\d{1,2})\b",
    re.IGNORECASE,
)
_WINDOW = 64  # characters examined after a cell reference for its predicate
_TAGS = re.compile(r"</?answer>", re.IGNORECASE)
_SIGNS = set("<>")
_SEPARATOR_CHARS = set("∧∨^vV|-+=<>")
_BLANKS = {"_", "?", "-", "*"}
_BLANK = object()  # a blank cell in a row listing
_PLACE = re.compile(r"\b(?:place|put|write|fill(?:\s+in)?|enter|mark|draw)\s+(?:an?\s+|the\s+)?", re.IGNORECASE)


@dataclass(frozen=True)
class Mention:
    """A claim found in a sentence: the claim and its ``[start, end)`` span in the trace; ``listing`` is True for
    claims read from a row listing or a written-out grid (these are not premises of each other)."""

    claim: Claim
    start: int
    end: int
    listing: bool = False


@dataclass
class SchemaReader:
    """Claim recogniser for one instance (compiled once per instance, then reused for every sentence).

    Parameters
    ----------
    puzzle, instance
        The puzzle and the instance the trace is about (variables, domains and value words come from them).
    """

    puzzle: Puzzle
    instance: Instance
    domains: dict = field(init=False)
    rows: int = field(init=False, default=0)
    cols: int = field(init=False, default=0)

    def __post_init__(self):
        self.domains = self.puzzle.variables(self.instance)
        cells = [v for v in self.domains if _is_cell(v)]
        self.grid = bool(cells) and len(cells) == len(self.domains)
        if cells:
            self.rows = max(r for r, _ in cells)
            self.cols = max(c for _, c in cells)
        words = {k.lower(): v for k, v in self.puzzle.VALUE_WORDS.items()}
        self.words = words
        alts = sorted((re.escape(w) for w in words), key=len, reverse=True)
        value_alt = r"\d{1,2}" + ("|" + "|".join(alts) if alts else "")
        v = rf"(?:{value_alt})"
        art = r"(?:an?\s+|the\s+|value\s+|the\s+value\s+|number\s+|digit\s+)?"
        self._neg = re.compile(
            rf"\s*(?:is\s+not|isn't|is\s+never|cannot\s+be|can't\s+be|can\s+not\s+be|must\s+not\s+be|"
            rf"should\s+not\s+be|won't\s+be|≠|!=|=/=)\s*{art}(?P<v>{v})(?![\w-])", re.IGNORECASE)
        self._cand = re.compile(
            rf"\s*(?:can\s+only\s+be|can\s+be|could\s+be|could\s+only\s+be|is\s+either|must\s+be\s+either|"
            rf"candidates?\s*(?:are|is|:)|∈|in)\s*(?:either\s+)?[{{\[]?\s*(?P<vs>{v}(?:\s*(?:,|or|/|\|)\s*"
            rf"(?:or\s+)?{v}){{1,8}})(?![\w-])", re.IGNORECASE)
        # "must be 3 or 4", "= 4, 5, 6, or 7": a value list with "or" is a candidate list, not a value.
        self._cand_or = re.compile(
            rf"\s*(?:must\s+be|has\s+to\s+be|should\s+be|is|=|needs\s+to\s+be)\s*(?P<vs>{v}(?:\s*,\s*{v}){{0,8}}"
            rf"\s*,?\s*or\s+{v})(?![\w-])", re.IGNORECASE)
        self._pos = re.compile(
            rf"\s*(?:=|:|->|→|is|must\s+be|has\s+to\s+be|should\s+be|needs\s+to\s+be|becomes|gets|contains|"
            rf"holds|will\s+be|would\s+be|has)\s*{art}(?P<v>{v})(?![\w-])", re.IGNORECASE)
        self._place_val = re.compile(rf"(?P<v>{v})\s+(?:at|in|into|on)\s+(?:cell\s+)?$", re.IGNORECASE)
        # Count claims need a value WORD ("2 tents"); "row 3 has 2 3s" is not read (too ambiguous with digits).
        self._count = re.compile(
            rf"\b(?P<line>row|column)\s+(?P<i>\d{{1,2}})\s+(?:needs|has|contains|requires|must\s+have|gets|"
            rf"will\s+have|should\s+have)\s+(?P<n>\d{{1,2}})\s+(?P<more>more\s+|remaining\s+|other\s+)?"
            rf"(?P<w>{'|'.join(alts)})(?:e?s)?(?![\w-])", re.IGNORECASE) if alts else None
        self._value_re = re.compile(rf"^(?:{value_alt})$", re.IGNORECASE)
        self.fixed_tokens: set[str] = set()
        self.symbols = self._answer_symbols() if self.grid else {}
        self._sign_table = str.maketrans({ch: " " for ch in _SIGNS
                                          if ch not in self.symbols and ch not in self.fixed_tokens})
        self._max_row_chars = 16 * max(1, self.cols) + 40  # a written-out grid row is never longer

    def _answer_symbols(self) -> dict[str, Hashable]:
        """The answer format's symbol -> value map, learned from the puzzle's own ``format_answer`` of a solution
        (so grids written in the answer notation, e.g. ``B W . #``, read as claims without per-puzzle code). The
        grid's size is taken from that layout too (a row without variables still has a line); tokens standing at
        non-variable positions (walls, clues, mirrors) are remembered as ``fixed_tokens``."""
        sols = self.puzzle.solve(self.instance, 1).solutions
        if not sols:
            return {}
        lines = [ln for ln in self.puzzle.format_answer(self.instance, sols[0]).splitlines() if ln.strip()]
        rows = [split_tokens(ln) for ln in lines]
        if len({len(t) for t in rows}) != 1:
            rows = [split_tokens(ln, single_chars=True) for ln in lines]
        if not rows or len({len(t) for t in rows}) != 1:
            return {}
        if any(r > len(rows) or c > len(rows[0]) for r, c in self.domains):
            return {}
        self.rows, self.cols = len(rows), len(rows[0])
        out: dict[str, Hashable] = {}
        for r, toks in enumerate(rows, 1):
            for c, t in enumerate(toks, 1):
                if (r, c) not in self.domains:
                    self.fixed_tokens.add(t)
                    continue
                v = self.puzzle.solution_value(self.instance, sols[0], (r, c))
                if out.setdefault(t, v) != v:
                    return {}
        return out

    # --------------------------------------------------------------------------------------------- values
    def value(self, token: str) -> Hashable | None:
        """A value token (digit or value word, case-insensitive) -> the puzzle's value, or ``None``."""
        t = token.strip().lower()
        if t in self.words:
            return self.words[t]
        if t.isdigit():
            return int(t)
        if t.endswith("s") and t[:-1] in self.words:  # plurals: "tents"
            return self.words[t[:-1]]
        return None

    def _claim(self, cell, value, positive=True) -> Claim | None:
        dom = self.domains.get(cell)
        if dom is None or value not in dom:
            return None
        return self.puzzle.value_claim(cell, value, positive)

    # --------------------------------------------------------------------------------------------- sentences
    def read(self, text: str, offset: int = 0) -> list[Mention]:
        """Claims in one sentence ``text`` (``offset`` = its start in the trace), in order of appearance."""
        own = [Mention(claim, offset + s, offset + e) for claim, s, e in self.puzzle.parse_claim_text(self.instance, text)]
        found: list[Mention] = []
        if self.grid:
            listing = self._row_listing(text, offset)
            if listing:
                return listing
            generic = self._cell_claims(text, offset) + self._count_claims(text, offset)
            # The puzzle's own recognisers win where they read the same words (e.g. a clue "column 2 has 1 tent").
            found = [g for g in generic if not any(o.start < g.end and g.start < o.end for o in own)]
        found.extend(own)
        found.sort(key=lambda m: (m.start, m.end))
        return found

    def _cell_claims(self, text: str, offset: int) -> list[Mention]:
        out = []
        for m in CELL_REF.finditer(text):
            r = int(m.group("r1") or m.group("r2") or m.group("r3"))
            c = int(m.group("c1") or m.group("c2") or m.group("c3"))
            cell = (r, c)
            if cell not in self.domains:
                continue
            end = min(len(text), m.end() + _WINDOW)
            pm = self._neg.match(text, m.end(), end)
            if pm:
                val = self.value(pm.group("v"))
                cl = self._claim(cell, val, False)
                if cl:
                    out.append(Mention(cl, offset + m.start(), offset + pm.end()))
                continue
            pm = self._cand.match(text, m.end(), end) or self._cand_or.match(text, m.end(), end)
            if pm:
                vals = [self.value(t) for t in re.split(r"\s*(?:,|or|/|\|)\s*", pm.group("vs")) if t.strip()]
                vals = tuple(sorted({x for x in vals if x is not None and x in self.domains[cell]}, key=str))
                if len(vals) >= 2:
                    out.append(Mention(Claim("candidates", (cell,), vals), offset + m.start(), offset + pm.end()))
                    continue
                if len(vals) == 1:
                    out.append(Mention(self._claim(cell, vals[0]), offset + m.start(), offset + pm.end()))
                    continue
            pm = self._pos.match(text, m.end(), end)
            if pm:
                cl = self._claim(cell, self.value(pm.group("v")))
                if cl:
                    out.append(Mention(cl, offset + m.start(), offset + pm.end()))
                continue
            # "place 5 at (3,4)" / "put a tent in (3,4)": look back a bounded window
            start = max(0, m.start() - _WINDOW)
            before = text[start:m.start()]
            pv = self._place_val.search(before)
            if pv and _PLACE.search(before[: pv.start()][-24:] + " "):
                cl = self._claim(cell, self.value(pv.group("v")))
                if cl:
                    out.append(Mention(cl, offset + start + pv.start(), offset + m.end()))
        return out

    def _count_claims(self, text: str, offset: int) -> list[Mention]:
        out = []
        if self._count is None:
            return out
        for m in self._count.finditer(text):
            i, n = int(m.group("i")), int(m.group("n"))
            val = self.value(m.group("w"))
            if val is None:
                continue
            if m.group("line").lower() == "row":
                if not 1 <= i <= self.rows:
                    continue
                cells = tuple((i, c) for c in range(1, self.cols + 1))
            else:
                if not 1 <= i <= self.cols:
                    continue
                cells = tuple((r, i) for r in range(1, self.rows + 1))
            kind = "count_remaining" if m.group("more") else "count"
            out.append(Mention(Claim(kind, cells, (n, val)), offset + m.start(), offset + m.end()))
        return out

    _LISTING = re.compile(r"^\s*(?:[-*]\s*)?(?:row|r)\s*(\d{1,2})\s*(?:is|[:=])\s*(.+)$", re.IGNORECASE)

    def _row_listing(self, text: str, offset: int) -> list[Mention]:
        m = self._LISTING.match(text)
        if m:
            r = int(m.group(1))
            vals = self._tokens(m.group(2))
            if vals is not None and 1 <= r <= self.rows:
                return self._listing_row(r, vals, offset + m.start(2), offset + m.end())
            return []
        if len(text) > self._max_row_chars:
            return []
        vals = self._tokens(text)
        return [] if vals is None else [Mention(Claim("_grid_row", (), tuple(vals)), offset, offset + len(text), True)]

    def _clean_row_text(self, text: str) -> str:
        """A row's text without answer tags glued to it, a final period, or in-row inequality signs (futoshiki rows
        such as ``3 < 6   1   2 < 4 < 5``) unless those characters are the puzzle's own symbols."""
        t = _TAGS.sub(" ", text).strip()
        if t.endswith(".") and "." not in self.symbols and "." not in self.fixed_tokens:
            t = t[:-1]
        return t.translate(self._sign_table)

    def _tokens(self, text: str) -> list | None:
        text = self._clean_row_text(text)
        toks = split_tokens(text)
        if len(toks) != self.cols:
            toks = split_tokens(text, single_chars=True)
            if len(toks) != self.cols:
                return None
        vals = [_BLANK if (t in _BLANKS and t not in self.symbols and t not in self.fixed_tokens)
                else self.symbols[t] if t in self.symbols else self.value(t) for t in toks]
        if all(v is _BLANK for v in vals):
            return None
        # Tokens of non-variable positions (walls '#', clues, mirrors) read as None and are skipped later; the row is
        # rejected if a None stands at a variable. Any other unknown token: not a grid row.
        if any(v is None and t not in self.fixed_tokens for v, t in zip(vals, toks, strict=True)):
            return None
        return vals

    def is_separator_row(self, text: str) -> bool:
        """A line of only inequality signs / bars between grid rows (futoshiki's vertical signs, box rules): it
        does not break a grid written out over several lines."""
        t = _TAGS.sub(" ", text).strip()
        return bool(t) and all(ch.isspace() or (ch in _SEPARATOR_CHARS and ch not in self.symbols) for ch in t)

    def _listing_row(self, r: int, vals: list, start: int, end: int) -> list[Mention]:
        out = []
        for c, v in enumerate(vals, 1):
            if (r, c) not in self.domains:  # a wall / clue / mirror position: not a claim
                continue
            if v is _BLANK:  # "_" in a row listing: no claim about this cell
                continue
            cl = None if v is None else self._claim((r, c), v)
            if cl is None:
                return []
            out.append(Mention(cl, start, end, True))
        return out

    def resolve_grid_rows(self, sentences_mentions: list[list[Mention]], separators: list[bool] | None = None) -> None:
        """Turn runs of exactly ``rows`` consecutive bare grid-row sentences into value claims for every cell
        (a grid written out mid-trace or in the answer); bare rows outside such a run are dropped. Sentences
        flagged in ``separators`` (sign-only lines between rows) do not break a run. In place."""
        sep = separators or [False] * len(sentences_mentions)
        i, n = 0, len(sentences_mentions)
        while i < n:
            if _is_bare_row(sentences_mentions[i]):
                rows_at, j = [], i
                while j < n and (_is_bare_row(sentences_mentions[j]) or (sep[j] and not sentences_mentions[j])):
                    if _is_bare_row(sentences_mentions[j]):
                        rows_at.append(j)
                    j += 1
                for r, k in enumerate(rows_at, 1):
                    m0 = sentences_mentions[k][0]
                    if len(rows_at) == self.rows:
                        sentences_mentions[k] = self._listing_row(r, list(m0.claim.value), m0.start, m0.end)
                    else:
                        sentences_mentions[k] = []
                i = j
            else:
                i += 1


def _is_bare_row(ms: list[Mention]) -> bool:
    return len(ms) == 1 and ms[0].claim.kind == "_grid_row"


def _is_cell(v) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, int) for x in v)
