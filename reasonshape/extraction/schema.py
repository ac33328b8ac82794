"""The deterministic claim schema: recognising claims in a sentence, for every puzzle.

Generic recognisers cover the conventions of the prompt and what real models write, for every puzzle whose
variables are grid cells. Cell references (all 1-based, row first, row 1 at the top, as the model writes them):

* explicit: ``(3,4)``, ``r3c4`` / ``R3C4``, ``[3][4]``, ``[3,4]``, optionally after "cell" / "position" / "square"
  ("cell (5,4)", "position [3,2]");
* a row and a column, cardinal or ordinal: "row 3, column 4", "row 3 col 4", "row 3 and column 4", "the third row,
  fourth column", "the third row's fourth column", "column 4 of row 3", "the 4th column in the 3rd row", "column 4,
  row 3", "the fourth column's third row";
* a position inside a named line: "row 3 position 4", "Row 3, pos 4", "position 4 in row 3", "the fourth cell of
  the third row", "the third row's fourth cell", and "position N" / "the N-th cell" after a row (or column) named
  earlier in the same sentence ("Row 4: position 1 < position 2 = 6": (4,1), (4,2); "Column 2: position 3" is
  (3,2), a position in a column being its row).

Claims: value claims ("(3,4) is 5", "(3,4) = 5", "r3c4 must be a tent", "the third row, fourth column is '3'",
"place 5 at (3,4)", "Row 6: 6 in position 1"), eliminations ("(2,5) is not 3", "(2,5) can't be 3"), candidate lists
("(2,5) can be 1 or 6"), count claims ("row 3 needs 2 more tents", "column 2 has 3 lights"), row and column listings
("Row 4: 1 3 4 2", "Second row: _ 4 3 2.", "So, the first column is \"1, 4, 3, 2\".") and grids written out
mid-trace. Values are digits or the puzzle's ``VALUE_WORDS``, optionally in quotes or backticks. Each puzzle adds
recognisers for its own claim kinds through :meth:`~reasonshape.envs.base.Puzzle.parse_claim_text` (edges,
bridges, inequalities...); those recognisers read the ``(r,c)`` form, so the reader also hands them the sentence
with every other cell reference rewritten as ``(r,c)`` ("row 4, column 2 > row 3, column 2" -> "(4,2) > (3,2)")
and maps the spans back.

Precision comes first (a false claim costs more than a missed one): an ordinal is read only right before "row",
"column" or a cell word ("the first thing", "the first row 3" are not references), "position N" only after a line
named in the same sentence, a plural ("positions 1, 2") never, and a bracket pair never where it reads as a value
list ("can be [1, 2]", "grid[2][3]").

Every pattern is a flat regular expression without nested unbounded quantifiers, and every predicate is matched
in a bounded window after (or before) a cell reference, so recognition is linear in the trace length (1 MB traces
are tests). Source: paper A §B step (1), deterministic templates; the patterns and conventions are reasonshape's,
taken from 1,040 real traces (``docs/real_traces.md``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import NamedTuple

from reasonshape.envs.answer import split_tokens
from reasonshape.envs.base import MAX_DIGITS, Claim, ClaimLabel, Instance, Puzzle, ascii_lower
from reasonshape.errors import ClaimError
from reasonshape.extraction.labels import label_claim

__all__ = ["Mention", "SchemaReader", "CELL_REF", "CellRef", "cell_refs", "ordinal"]

#: The explicit cell references ``(r,c)``, ``r3c4``, ``row r, column c`` (kept for callers that need only these;
#: :func:`cell_refs` reads every convention).
CELL_REF = re.compile(
    r"\(\s*(?P<r1>\d{1,2})\s*,\s*(?P<c1>\d{1,2})\s*\)"
    r"|\b[rR](?P<r2>\d{1,2})\s?[cC](?P<c2>\d{1,2})\b"
    r"|\brow\s+(?P<r3>\d{1,2})\s*,?\s*(?:and\s+)?col(?:umn)?\.?\s+(?P<c3>\d{1,2})\b",
    re.IGNORECASE,
)
_WINDOW = 64  # characters examined after a cell reference for its predicate
_PREDICATE_MEMO_MAX = 4096  # windows whose predicate a reader keeps (emptied when full: at most ~1 MB)
_TAGS = re.compile(r"</?answer>", re.IGNORECASE)
_SIGNS = set("<>")
_SEPARATOR_CHARS = set("∧∨^vV|-+=<>")
_BLANKS = {"_", "?", "-", "*"}
_BLANK = object()  # a blank cell in a row listing
_PLACE = re.compile(r"\b(?:place|put|write|fill(?:\s+in)?|enter|mark|draw)\s+(?:an?\s+|the\s+)?", re.IGNORECASE)
_QUOTES = "\"'`‘’“”"
_OPEN_Q = "[\"'`‘“]?"

# ------------------------------------------------------------------------------------------ cell references
_ORD_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
              "eleventh", "twelfth")
_ORD_INDEX = {w: i for i, w in enumerate(_ORD_WORDS, 1)}
_ORD = r"(?:" + "|".join(_ORD_WORDS) + r"|\d{1,2}(?:st|nd|rd|th))"
_CELL_WORD = r"(?:cell|position|spot|square|entry)"


def ordinal(token: str) -> int | None:
    """An ordinal word or numeral -> its 1-based index ("third" -> 3, "3rd" -> 3, "12th" -> 12), else ``None``.

    Only the suffix that English uses for the number is accepted ("3th", "1nd" are ``None``). Source: reasonshape
    choice (the words real models write: first ... twelfth and numerals).
    """
    t = token.strip().lower()
    if t in _ORD_INDEX:
        return _ORD_INDEX[t]
    m = re.fullmatch(r"(\d{1,2})(st|nd|rd|th)", t)
    if not m:
        return None
    n = int(m.group(1))
    want = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return n if n >= 1 and m.group(2) == want else None


def _row(g: str) -> str:
    """A named row: "row 3" or "the third row" (an ordinal row never right before a number: "first row 3")."""
    return (rf"(?:\b(?:the\s{{1,3}})?(?P<{g}_o>{_ORD})\s{{1,3}}row\b(?!'?s?\s{{0,3}}\d)"
            rf"|\brow\s{{0,3}}(?P<{g}_n>\d{{1,2}})\b)")


def _col(g: str) -> str:
    """A named column: "column 4", "col 4", "col. 4" or "the fourth column"."""
    return (rf"(?:\b(?:the\s{{1,3}})?(?P<{g}_o>{_ORD})\s{{1,3}}col(?:umn)?\b(?!'?s?\s{{0,3}}\d)"
            rf"|\bcol(?:umn)?\.?\s{{0,3}}(?P<{g}_n>\d{{1,2}})\b)")


def _pos(g: str) -> str:
    """A position inside a line: "position 4", "pos 4", "pos4" or "the fourth cell / position / spot"."""
    return (rf"(?:\b(?:the\s{{1,3}})?(?P<{g}_o>{_ORD})\s{{1,3}}{_CELL_WORD}\b"
            rf"|\b(?:position|pos)\.?\s{{0,2}}(?P<{g}_n>\d{{1,2}})\b)")


_S = r"\s{0,3}"
# Alternatives, tried in this order at each position; each is wrapped in a named group whose name says its form.
_REF_FORMS = (
    # explicit, optionally after a cell word ("cell (5,4)", "position [3,2]")
    ("EX", rf"(?:\b(?:cell|square|position|pos)\.?\s{{0,2}})?(?P<EXcore>\({_S}(?P<EXr1>\d{{1,2}}){_S},{_S}"
           rf"(?P<EXc1>\d{{1,2}}){_S}\)|(?<![\w\]])\[{_S}(?P<EXr2>\d{{1,2}}){_S}(?:\]\s{{0,2}}\[|,){_S}"
           rf"(?P<EXc2>\d{{1,2}}){_S}\]|\b[rR](?P<EXr3>\d{{1,2}})\s?[cC](?P<EXc3>\d{{1,2}})\b)"),
    # "row 3 and column 4" (cardinal only: "the first row and first column" names two lines)
    ("RA", rf"\brow\s{{0,3}}(?P<RAr>\d{{1,2}}){_S},?{_S}and\s{{1,3}}col(?:umn)?\.?\s{{0,3}}(?P<RAc>\d{{1,2}})\b"),
    # "row 3, column 4", "the third row's fourth column"
    ("RC", rf"{_row('RCa')}(?:'s)?{_S},?{_S}{_col('RCb')}"),
    # "row 3 position 4", "the third row's second cell" (also sets the row context)
    ("RP", rf"{_row('RPa')}(?:'s)?{_S},?{_S}{_pos('RPb')}"),
    # "column 4, row 3", "the fourth column's third row"; not when that row starts its own reference ("taken in
    # column 1, row 2 column 1 = 2")
    ("CR", rf"{_col('CRa')}(?:'s\s{{1,3}}|{_S},{_S}){_row('CRb')}(?!(?:'s)?{_S},?{_S}(?:and\s{{1,3}})?"
           rf"(?:col|pos|(?:the\s{{1,3}})?{_ORD}\s{{1,3}}(?:col|{_CELL_WORD})))"),
    # "column 2, position 3" / "column 2's third cell": position in a column = row (also sets the column context)
    ("CP", rf"{_col('CPa')}(?:'s)?{_S},?{_S}{_pos('CPb')}"),
    # "column 4 of row 3", "the 4th column in the 3rd row"
    ("CO", rf"{_col('COa')}\s{{1,3}}(?:of|in)\s{{1,3}}{_row('COb')}"),
    # "row 3 of column 4", "the third row in column 4"
    ("RO", rf"{_row('ROa')}\s{{1,3}}(?:of|in)\s{{1,3}}{_col('ROb')}"),
    # "position 4 in row 3", "the fourth cell of the third row"
    ("PR", rf"{_pos('PRa')}\s{{1,3}}(?:of|in)\s{{1,3}}{_row('PRb')}"),
    # "position 3 in column 2", "the third cell of column 2"
    ("PC", rf"{_pos('PCa')}\s{{1,3}}(?:of|in)\s{{1,3}}{_col('PCb')}"),
    # a line alone: sets the context for later positions
    ("LR", _row("LR")),
    ("LC", _col("LC")),
    # a position alone: a cell only inside a context
    ("PO", _pos("PO")),
)
_REF = re.compile("|".join(rf"(?P<{name}>{pat})" for name, pat in _REF_FORMS), re.IGNORECASE)
_SUBJECT_START = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])?\s*(?:(?:in|for|on)\s{1,3})?$", re.IGNORECASE)
_LINE_LIST = re.compile(r"\s{0,3}(?:and|or|,|&|-|–|to)\s{0,3}\d", re.IGNORECASE)
# A bracket pair right after these words is a value list, not a cell ("can be [1, 2]", "∈ [3,4]").
_LIST_BEFORE = re.compile(r"(?:∈|=|:|\{|\bbe|\bin|\bare|\bof|\bfrom|\bor|\bvalues?|\bcandidates?|\boptions?|"
                          r"\bnot|\bnumbers?)\s{0,3}$", re.IGNORECASE)


# Where a reference can start (first characters of every form), for a fast scan of ASCII-lowercased text: every
# alternative begins with a literal (or a digit), so the regex engine skips to candidate positions in C; the full
# alternation is tried only there. Same matches as ``_REF.finditer``, several times faster on prose. Each word anchor
# also carries what its forms need around it, so prose words are no anchors ("other", "arrow", "possible", "the
# cell", "first, we"): a word form starts at a word boundary (``\b``: no word character before it), an ordinal is
# followed by a line or cell word, "(" / "[" by a number, "pos" / "position" by a number or an explicit cell, "cell"
# / "square" by an explicit cell (scoped ``(?i:...)``: the forms ignore case, so these lookarounds do too). "spot"
# and "entry" begin no form (they follow an ordinal).
_AFTER_ORD = rf"(?=(?i:\s{{1,3}}(?:row|col|{_CELL_WORD})))"


def _word_start(word: str) -> str:
    """``word`` where no word character precedes it. The look-behind follows the word's first character, so the
    alternative still begins with a literal (a leading look-behind would make the engine try each position)."""
    return rf"{word[0]}(?<!\w{word[0]}){word[1:]}"


_ANCHOR_ALTS = (
    [r"\((?=\s{0,3}\d)", r"\[(?=\s{0,3}\d)", r"r\d", _word_start("row"), _word_start("col"),
     _word_start("pos") + r"(?=(?i:(?:ition)?\.?\s{0,2}[\d(\[r]))",
     *(_word_start(w) + r"(?=(?i:\.?\s{0,2}[(\[r]))" for w in ("cell", "square")),
     _word_start("the") + rf"\s(?=(?i:\s{{0,2}}{_ORD}\s{{1,3}}(?:row|col|{_CELL_WORD})))"]
    + [rf"\d(?<!\w\d)\d?(?:st|nd|rd|th){_AFTER_ORD}"]
    + [_word_start(w) + _AFTER_ORD for w in _ORD_WORDS])
_ANCHOR = re.compile("|".join(_ANCHOR_ALTS))


def _by_first_char(alts: list[str]) -> re.Pattern:
    """The alternation of ``alts`` for ASCII text, its alternatives grouped by their first literal (``\\d`` spelt
    as the ten ASCII digits), each group in ``alts``' order: alternatives with different first characters never
    match at the same position, so it finds the same matches as ``"|".join(alts)``. Every alternative now begins
    with a plain literal, so the engine skips in C to the positions holding one of these characters, and tries one
    group there instead of each of ~20 alternatives: the anchor scan of ASCII text (almost every sentence) in about
    three quarters of the time."""
    groups: dict[str, list[str]] = {}
    for alt in alts:
        n = 2 if alt[0] == "\\" else 1
        for first in ("0123456789" if alt[:n] == r"\d" else [alt[:n]]):
            groups.setdefault(first, []).append(alt[n:])
    return re.compile("|".join(f"{first}(?:{'|'.join(rests)})" for first, rests in groups.items()))


_ANCHOR_ASCII = _by_first_char(_ANCHOR_ALTS)
# The anchors of an explicit cell ("(", "[" before a number, "r3"): the only ones in a text without "row", "col",
# "pos", "cell", "square", "spot" or "entry" (lowered): every other anchor is one of these words or needs one after
# it (an ordinal or "the" before a line or cell word). Most prose sentences have none, and this scan tries 3
# characters instead of ~20 (one "in" test each is cheaper than the positions the full scan tries).
_EXPLICIT_ANCHOR = re.compile(r"\((?=\s{0,3}\d)|\[(?=\s{0,3}\d)|r\d")

# The ASCII-lowered copy the anchors scan (same offsets, :func:`~reasonshape.envs.base.ascii_lower`): ASCII capitals
# in lower case, and the four non-ASCII letters that the forms' re.IGNORECASE equates with an ASCII letter ("İ",
# "ı", "ſ", the Kelvin sign) as that letter.
_lowered = ascii_lower


def _forms(*names: str) -> re.Pattern:
    """The alternation of ``_REF`` restricted to the forms ``names``, in ``_REF``'s order (same group names)."""
    return re.compile("|".join(rf"(?P<{name}>{pat})" for name, pat in _REF_FORMS if name in names), re.IGNORECASE)


# The forms that can start at an anchor, by the anchor's first characters: "(" "[" "r3" "cell" "square" only an
# explicit cell (EX); "row" the forms that begin with a cardinal row; "col" those that begin with a cardinal column;
# "pos" EX ("position (3,4)") and the forms that begin with a cardinal position; "the" and ordinals the forms that
# begin with an ordinal line or position. Trying only those, in _REF's order, finds the match _REF finds (the other
# forms cannot match there) at a fraction of the cost.
_EXPLICIT_FORMS = _forms("EX")
_ORDINAL_FORMS = _forms("RC", "RP", "CR", "CP", "CO", "RO", "PR", "PC", "LR", "LC", "PO")
_FORMS_AT = {"ce": _EXPLICIT_FORMS, "sq": _EXPLICIT_FORMS, "ro": _forms("RA", "RC", "RP", "RO", "LR"),
             "co": _forms("CR", "CP", "CO", "LC"), "po": _forms("EX", "PR", "PC", "PO"), "th": _ORDINAL_FORMS}


# At a "row" / "col" anchor the forms that go on past the line ("row 3, column 4", "column 4 of row 3"...) are tried
# before the line alone (LR / LC). Each of them continues right after the line with one of these words (or an
# ordinal), so where none follows, the line alone is the match and the compound forms need not be tried (the same
# match, at a fraction of the cost: most "row 3" in traces stand alone). Where the line alone does not match
# ("row 12and column 3"), every form is tried as before. These patterns match the lowered text (``_lowered``):
# written in lower case without re.IGNORECASE, they match there exactly where their re.IGNORECASE forms match the
# text (their letters are ASCII, and ascii_lower folds what re.IGNORECASE equates with an ASCII letter), about
# three times faster where they fail (re.IGNORECASE folds each character tried); the look-ahead for the first
# characters of the alternatives (ordinals: f s t e n and digits) turns most failures into one class test.
_ROW_GOES_ON = re.compile(rf"(?:'s)?{_S},?{_S}(?=[acpotifsen\d])(?:and\s|col|pos|the\s|of\s|in\s|{_ORD})")
_COL_GOES_ON = re.compile(rf"(?:'s)?{_S},?{_S}(?=[rpotifsen\d])(?:row|pos|the\s|of\s|in\s|{_ORD})")
_LINE_ALONE = {"row": (_forms("LR"), _ROW_GOES_ON), "col": (_forms("LC"), _COL_GOES_ON)}

# At an ordinal anchor ("the ", "third", "3rd": _ORDINAL_FORMS, eleven forms) only the forms whose first line or
# position is the word after the ordinal can match: the anchor's look-ahead makes that word "row", "col" or a cell
# word, and it is the first of these words after the anchor (no ordinal or "the" holds one), so _LINE_WORD finds it
# in the lowered text. The others fail there at once, so trying only these, in _REF's order, gives the same match;
# the line (or position) alone is the match where nothing after it goes on into a compound form, as at a "row"
# anchor (a position goes on only with "of" / "in": "the second cell of row 2"). Same matches, about a fifth of
# the cost at these anchors ("the first row" took ~5 us in the eleven forms).
_LINE_WORD = re.compile(rf"row|col|{_CELL_WORD}")
_ORDINAL_PLANS = {"row": (_forms("LR"), _ROW_GOES_ON, _forms("RC", "RP", "RO", "LR")),
                  "col": (_forms("LC"), _COL_GOES_ON, _forms("CR", "CP", "CO", "LC"))}
_ORDINAL_CELL_PLAN = (_forms("PO"), re.compile(r"\s{1,3}(?:of|in)\s"), _forms("PR", "PC", "PO"))  # goes on: lowered


def _forms_at(anchor: str) -> re.Pattern:
    """The pattern to try at an anchor (its lower-cased text), see ``_FORMS_AT``."""
    if anchor[0] in "([" or (anchor[0] == "r" and anchor[1].isdigit()):
        return _EXPLICIT_FORMS
    if anchor[0].isdigit() or anchor in _ORD_INDEX:
        return _ORDINAL_FORMS
    return _FORMS_AT.get(anchor[:2], _REF)


# anchor text -> _forms_at(anchor), filled on first use for ASCII anchors only (a few hundred distinct strings; with
# every Unicode digit and whitespace character there would be millions)
_FORMS_OF_ANCHOR: dict[str, re.Pattern] = {}


def _ref_matches(text: str, low: str | None = None):
    """``_REF.finditer(text)``, tried only at anchor positions (non-overlapping, left to right); ``low`` is
    ``_lowered(text)`` where the caller has it."""
    if low is None:
        low = _lowered(text)
    if ("row" in low or "col" in low or "pos" in low or "cell" in low or "square" in low or "spot" in low
            or "entry" in low):
        search = _ANCHOR_ASCII.search if low.isascii() else _ANCHOR.search
    else:
        search = _EXPLICIT_ANCHOR.search
    pos, n = 0, len(text)
    while pos < n:
        a = search(low, pos)
        if a is None:
            return
        anchor = a.group()
        line = _LINE_ALONE.get(anchor)
        m = line[0].match(text, a.start()) if line else None
        if m is None or line[1].match(low, m.end()):
            m = None
            forms = _FORMS_OF_ANCHOR.get(anchor)
            if forms is None:
                forms = _forms_at(anchor)
                if anchor.isascii():  # non-ASCII digits and spaces would make the table unbounded
                    _FORMS_OF_ANCHOR[anchor] = forms
            w = _LINE_WORD.search(low, a.end()) if forms is _ORDINAL_FORMS else None
            if w is not None:
                alone, goes_on, forms = _ORDINAL_PLANS.get(w.group(), _ORDINAL_CELL_PLAN)
                m = alone.match(text, a.start())
                if m is not None and goes_on.match(low, m.end()):
                    m = None
            if m is None:
                m = forms.match(text, a.start())
        if m is None or m.end() == m.start():
            pos = a.start() + 1
            continue
        yield m
        pos = m.end()


class CellRef(NamedTuple):
    """A cell reference found in a text.

    Attributes
    ----------
    start, end : int
        ``[start, end)`` of the reference itself (for "cell (5,4)": of "(5,4)").
    cell : tuple of int
        ``(row, column)``, 1-based as written; not checked against a grid.
    outer : int
        Start of the whole phrase including a leading cell word ("cell", "position"), ``<= start``.
    positional : bool
        The column (or row) index came from a position inside a line ("position 5", "the fifth cell").
    """

    start: int
    end: int
    cell: tuple[int, int]
    outer: int
    positional: bool


# CellRef(...) / Mention(...) in the loops that build many: the named tuples' constructors call
# tuple.__new__(cls, fields) (every field given here), without the Python-level __new__ call
_new = tuple.__new__


def _line(m: re.Match, g: str) -> int | None:
    o = m.group(g + "_o")
    return ordinal(o) if o else int(m.group(g + "_n"))


def cell_refs(text: str) -> list[CellRef]:
    """Every cell reference in ``text`` (one sentence), left to right, in the conventions of the module docstring.

    Parameters
    ----------
    text : str
        One sentence (the line context of "position N" does not cross sentences).

    Returns
    -------
    list of CellRef
        Non-overlapping references; cells are 1-based ``(row, column)`` and may lie off the grid (the caller checks).
        A row or column index of 0 is kept as written (0-based coordinates were not seen in real traces).

    Notes
    -----
    One left-to-right pass of one alternation of bounded patterns: O(len(text)). A named line ("Row 4", "the
    second row", "row 3 position 1") sets the context; "position N" / "the N-th cell" alone is read in it (a row:
    column N; a column: row N) and skipped without one. Source: reasonshape choice, from real traces.
    """
    return _cell_refs(text, _lowered(text))


def _cell_refs(text: str, low: str) -> list[CellRef]:
    """:func:`cell_refs` of ``text``, given ``low = _lowered(text)``."""
    out: list[CellRef] = []
    ctx: tuple[str, int] | None = None
    named = False  # a line was named alone before
    for m in _ref_matches(text, low):
        kind = m.lastgroup
        if kind == "EX":
            core = m.start("EXcore")
            if text[core] == "[" and _LIST_BEFORE.search(text, max(0, core - 16), core):
                continue
            r = m.group("EXr1") or m.group("EXr2") or m.group("EXr3")
            c = m.group("EXc1") or m.group("EXc2") or m.group("EXc3")
            out.append(_new(CellRef, (core, m.end(), (int(r), int(c)), m.start(), False)))
            continue
        cell, positional = None, False
        if kind == "RA":
            cell = (int(m.group("RAr")), int(m.group("RAc")))
        elif kind in ("RC", "CR", "CO", "RO"):
            a, b = _line(m, kind + "a"), _line(m, kind + "b")
            cell = (a, b) if kind in ("RC", "RO") else (b, a)
        elif kind == "RP":
            row, i = _line(m, "RPa"), _line(m, "RPb")
            cell, positional = ((row, i) if row and i else None), True
            ctx, named = (("row", row) if row else ctx), True
        elif kind == "CP":
            col, i = _line(m, "CPa"), _line(m, "CPb")
            cell, positional = ((i, col) if col and i else None), True
            ctx, named = (("col", col) if col else ctx), True
        elif kind in ("PR", "PC"):
            i, line = _line(m, kind + "a"), _line(m, kind + "b")
            cell, positional = ((line, i) if kind == "PR" else (i, line)), True
        elif kind in ("LR", "LC"):
            line = ("row" if kind == "LR" else "col", _line(m, kind))
            # Only the first line named alone opens a context; a second, different one ("from Column 2 (needs 1,
            # 2), position 2 ...") or a list of lines ("Column 3 and 4:") makes "position N" ambiguous: none.
            # A column opens one only as the sentence's subject ("- Column 2: position 2 ∨ position 3"): models
            # number positions inside rows, and "from Column 4 (needs 1, 3), position 4" means a row's position 4.
            if named or not line[1] or _LINE_LIST.match(text, m.end()) or (
                    kind == "LC" and not _SUBJECT_START.match(text[:m.start()])):
                ctx = ctx if ctx == line else None
            else:
                ctx = line
            named = True
            continue
        elif kind == "PO":
            i = _line(m, "PO")
            if ctx is None or not i or (ctx[0] == "col" and m.group("PO_o")):
                continue  # "the third cell" in a column context: models mean a row's cell
            cell, positional = ((ctx[1], i) if ctx[0] == "row" else (i, ctx[1])), True
        if cell is None or None in cell:
            continue
        out.append(_new(CellRef, (m.start(), m.end(), cell, m.start(), positional)))
    return out


def _new_spans(old: list, new: list) -> list:
    """The ``(claim, start, end)`` of ``new`` that no span of the same claim in ``old`` overlaps (``old``'s spans of
    one claim come from one left-to-right scan, so checking the two neighbours in start order suffices).
    O((n + m) log n)."""
    by_claim: dict = {}
    for claim, s, e in old:
        by_claim.setdefault(claim, []).append((s, e))
    for spans in by_claim.values():
        spans.sort()
    out = []
    for claim, s, e in new:
        spans = by_claim.get(claim, ())
        k = bisect.bisect_left(spans, (e, -1))  # spans[:k] start before e
        if not any(s2 < e and s < e2 for s2, e2 in spans[max(0, k - 2):k]):
            out.append((claim, s, e))
    return out


def _pair(ref: CellRef) -> str:
    """``ref``'s cell written as ``(r,c)``, the form :class:`_Canon` rewrites references to."""
    return f"({ref.cell[0]},{ref.cell[1]})"


def _rewritten(text: str, refs: list[CellRef]) -> bool:
    """Whether :class:`_Canon` rewrites any of ``refs`` (``_Canon(text, refs).changed``: some reference is not
    written as its ``(r,c)``), without building the rewritten text."""
    for ref in refs:
        if text[ref.outer:ref.end] != _pair(ref):
            return True
    return False


class _Canon:
    """``text`` with every cell reference not already written ``(r,c)`` rewritten as ``(r,c)``, and the map of
    offsets back (so the puzzles' own recognisers, which read ``(r,c)``, see every convention)."""

    def __init__(self, text: str, refs: list[CellRef]):
        parts, self._cs, self._table = [], [], []
        pos = out = 0
        for ref in refs:
            rep = _pair(ref)
            if text[ref.outer:ref.end] == rep:  # the test _rewritten makes
                continue
            parts.append(text[pos:ref.outer])
            out += ref.outer - pos
            self._cs.append(out)
            self._table.append((out, out + len(rep), ref.outer, ref.end))
            parts.append(rep)
            out += len(rep)
            pos = ref.end
        parts.append(text[pos:])
        self.changed = bool(self._table)
        self.text = "".join(parts)

    def start(self, x: int) -> int:
        i = bisect.bisect_right(self._cs, x) - 1
        if i < 0:
            return x
        cs, ce, os_, oe = self._table[i]
        return os_ if x < ce else oe + (x - ce)

    def end(self, x: int) -> int:
        i = bisect.bisect_left(self._cs, x) - 1
        if i < 0:
            return x
        cs, ce, os_, oe = self._table[i]
        return oe if x <= ce else oe + (x - ce)


# ------------------------------------------------------------------------------------------ listings
# Words that may open a listing sentence ("So, the second row is: 1 3 4 2.", "Looking at the fourth row: 3 1 4 2",
# "Corrected 8th row: ..."). Hypothetical openers ("if", "suppose", "let's try") are deliberately absent.
_LIST_OPEN = (r"(?:(?:so|thus|then|now|therefore|hence|finally|and|also)\s{0,2}[,:]?\s{1,3}){0,2}"
              r"(?:(?:for|in|with|looking\s+at|focusing\s+on|considering|consider|checking|analy[sz]ing|"
              r"let'?s\s+(?:analy[sz]e|look\s+at|check|consider|examine)|start(?:ing)?\s+with)\s{1,3})?"
              r"(?:the\s{1,3})?(?:(?:correct|corrected|updated|final|new|completed|complete|current|"
              r"resulting|filled)\s{1,3})?")
_LISTING = re.compile(
    rf"^\s*(?:[-*•]\s*)?{_LIST_OPEN}(?:{_row('Lr')}|{_col('Lc')}|\br\s{{0,2}}(?P<Lrr>\d{{1,2}}))"
    rf"\s{{0,3}}(?:is\s+now|is|becomes|must\s+be|[:=→])\s{{0,3}}:?\s*(?P<body>.+)$", re.IGNORECASE)
_R_NUMBER = re.compile(r"r\s{0,2}\d")  # _LISTING's "r3" line, lowered
# What every _LISTING match holds, lowered: a line word, its number (not after an ordinal), and the verb.
_LISTING_HEAD = re.compile(r"(?:row|col(?:umn)?\.?|r)\s{0,3}(?:\d{1,2})?\s{0,3}(?:is|becomes|must|[:=→])")
# What the predicates other than a value claim need in their window, lowered: a negation (neg: "is not", "isn't",
# "is never", "cannot be", "won't be", "≠", "!=", "=/="), a separator between two values (cand: ",", "or", "/",
# "|"), "or" (cand_or). Where none occurs, only a value claim ("pos") can match (letters as re.IGNORECASE reads them).
_NOT_ONLY_POS = re.compile(r"not|n't|never|≠|!=|=/=|,|or|/|\|")
_COMPARE_AFTER = re.compile(r"[\"'`’”]?\s{0,3}(?:[<>≤≥]|!=|≠)")
_TICKS = re.compile(r"\s*[✓✔]+\s*$")
# "V in position N" (value before a positional reference): what may stand right before the value, and what
# makes the phrase no claim (negation, a list of values, a list of positions after it).
_VAL_IN_BEFORE = re.compile(r"(?:^|[:;(,]|\b(?:has|have|had|with|and|missing|needs?|so|then))\s*$", re.IGNORECASE)
_VAL_IN_NEG = re.compile(r"\b(?:not|no|never|cannot|can'?t|won'?t|isn'?t|without|other\s+than|except)\b|n't\b",
                         re.IGNORECASE)
_VAL_LIST = re.compile(r"(?P<w>\b[a-z]+\.?)?\s*(?<![\w)\]])\d{1,2}\s*(?:,|and|or|&)\s*$", re.IGNORECASE)
# The look-back patterns ``_place_val`` ("5 at ") and ``_val_in`` ("3 in ") end with one of these words and
# whitespace (``(?:at|in|into|on)\s+(?:cell\s+)?$``, ``(?:in|at)\s+$``), and scan up to _WINDOW characters, trying a
# value at each (~9 us with number words): where the text before a reference does not end so, neither can match.
_PLACE_WORDS = ("at", "in", "into", "on", "cell")
_IN_AT = ("in", "at")


def _ends_in_word(before: str, words: tuple[str, ...]) -> bool:
    """Whether ``before`` ends with one of ``words`` (lower-case ASCII) and whitespace, read as re.IGNORECASE reads
    letters (:func:`~reasonshape.envs.base.ascii_lower`; ``str.rstrip`` strips what ``\\s`` matches)."""
    t = before.rstrip()
    return len(t) < len(before) and ascii_lower(t[-4:]).endswith(words)


_REF_WORDS = {"row", "column", "col", "col.", "position", "pos", "pos.", "cell", "box", "block", "cage", "region"}
_POS_LIST_AFTER = re.compile(r"\s*(?:or|and|/|&|,)\s*(?:the\s+)?\d{1,2}\b(?!\s*(?:is\s+)?(?:in|at)\b)",
                             re.IGNORECASE)


class Mention(NamedTuple):
    """A claim found in a sentence: the claim and its ``[start, end)`` span in the trace; ``listing`` is True for
    claims read from a row listing or a written-out grid (these are not premises of each other).

    A named tuple: immutable, and built by one tuple allocation where a frozen dataclass runs one
    ``object.__setattr__`` per field; several are built per sentence (reasonshape choice, for speed)."""

    claim: Claim
    start: int
    end: int
    listing: bool = False


_KEYED_TYPES = (int, str)  # value types of the claims SchemaReader._claim keeps
_SPAN = itemgetter(1, 2)  # a Mention's (start, end), its order in a sentence


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
        self._labels: dict[Claim, ClaimLabel | ClaimError] = {}  # claim -> its label or the puzzle's refusal
        self._value_claims: dict[tuple, Claim] = {}  # (cell, value, positive) -> its claim (:meth:`_claim`)
        self._predicates: dict[str, tuple] = {}  # window after a reference -> its predicate (:meth:`_predicate`)
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
        qv = rf"{_OPEN_Q}{v}[\"'`’”]?"  # a value, optionally quoted: '2', "4", `3`
        art = r"(?:an?\s+|the\s+|value\s+|the\s+value\s+|number\s+|digit\s+)?"
        self._neg = re.compile(
            rf"\s*(?:is\s+not|isn't|is\s+never|cannot\s+be|can't\s+be|can\s+not\s+be|must\s+not\s+be|"
            rf"should\s+not\s+be|won't\s+be|≠|!=|=/=)\s*{art}{_OPEN_Q}(?P<v>{v})(?![\w-])", re.IGNORECASE)
        self._cand = re.compile(
            rf"\s*(?:can\s+only\s+be|can\s+be|could\s+be|could\s+only\s+be|is\s+either|must\s+be\s+either|"
            rf"candidates?\s*(?:are|is|:)|∈|in)\s*(?:either\s+)?[{{\[]?\s*(?P<vs>{qv}(?:\s*(?:,|or|/|\|)\s*"
            rf"(?:or\s+)?{qv}){{1,8}})(?![\w-])", re.IGNORECASE)
        # "must be 3 or 4", "= 4, 5, 6, or 7": a value list with "or" is a candidate list, not a value.
        self._cand_or = re.compile(
            rf"\s*(?:must\s+be|has\s+to\s+be|should\s+be|is|=|needs\s+to\s+be)\s*(?P<vs>{qv}(?:\s*,\s*{qv}){{0,8}}"
            rf"\s*,?\s*or\s+{qv})(?![\w-])", re.IGNORECASE)
        self._pos = re.compile(
            rf"\s*(?P<p>=|:|->|→|is|must\s+be|has\s+to\s+be|should\s+be|needs\s+to\s+be|becomes|gets|contains|"
            rf"holds|will\s+be|would\s+be|has)\s*{art}{_OPEN_Q}(?P<v>{v})(?![\w-])", re.IGNORECASE)
        # The four predicates above as one alternation, tried in the same order at the same position (one regex
        # call per cell reference instead of up to four; group names get a prefix: neg_, cand_, cor_ (cand_or), pos_).
        self._pred = re.compile("|".join(
            f"(?P<{name}>{pat.pattern.replace('(?P<', f'(?P<{name}_')})" for name, pat in
            (("neg", self._neg), ("cand", self._cand), ("cor", self._cand_or), ("pos", self._pos))), re.IGNORECASE)
        # The "pos" alternative of _pred alone (same group names): where the window holds none of what the other
        # three need (_NOT_ONLY_POS), it is what _pred matches, at a third of the cost.
        self._pos_only = re.compile(f"(?P<pos>{self._pos.pattern.replace('(?P<', '(?P<pos_')})", re.IGNORECASE)
        self._place_val = re.compile(rf"(?P<v>{v})\s+(?:at|in|into|on)\s+(?:cell\s+)?$", re.IGNORECASE)
        # "Row 6: 6 in position 1", "We have 3 in position 4": the value right before a positional reference.
        self._val_in = re.compile(rf"{_OPEN_Q}(?P<v>{v})[\"'`’”]?\s+(?:is\s+)?(?:in|at)\s+$", re.IGNORECASE)
        # Count claims need a value WORD ("2 tents"); "row 3 has 2 3s" is not read (too ambiguous with digits).
        self._count = re.compile(
            rf"\b(?P<line>row|column)\s+(?P<i>\d{{1,2}})\s+(?:needs|has|contains|requires|must\s+have|gets|"
            rf"will\s+have|should\s+have)\s+(?P<n>\d{{1,2}})\s+(?P<more>more\s+|remaining\s+|other\s+)?"
            rf"(?P<w>{'|'.join(alts)})(?:e?s)?(?![\w-])", re.IGNORECASE) if alts else None
        self.fixed_tokens: set[str] = set()
        self.symbols = self._answer_symbols() if self.grid else {}
        self._sign_table = str.maketrans({ch: " " for ch in _SIGNS
                                          if ch not in self.symbols and ch not in self.fixed_tokens})
        self._quote_table = str.maketrans({ch: " " for ch in _QUOTES
                                           if ch not in self.symbols and ch not in self.fixed_tokens})
        self._max_row_chars = 16 * max(1, self.cols) + 40  # a written-out grid row is never longer
        # A row token -> its reading (:meth:`_token_value`), for the symbols, blanks, value words and numbers up to
        # 99: one dict lookup per token of a grid row instead of up to three set lookups and a :meth:`value` call.
        # A token not in the table is neither a symbol nor a blank, so its reading is ``value(token)``. A number that
        # is no symbol, blank or value word reads as its int (``value``), so those entries need no call.
        self._token_values: dict[str, Hashable | None] = {str(i): i for i in range(100)}
        self._token_values.update({t: self._token_value(t) for t in (*self.symbols, *_BLANKS, *words)})
        # Every character a grid row can hold (:meth:`_tokens`): its separators, the characters of the tokens it
        # accepts (symbols, fixed tokens, blanks, value words and their plural "s", decimal digits), and what
        # :meth:`_clean_row_text` removes (answer tags, quotes, signs, check marks, a final period). A character
        # outside this set (case-insensitively) rejects a row in one C-level scan; most sentences are prose and
        # fail on their first letters (reasonshape choice, for speed).
        row_chars = set("".join(self.symbols)) | set("".join(self.fixed_tokens)) | set("".join(_BLANKS))
        row_chars |= set("".join(words)) | ({"s"} if words else set()) | set(",|;[]()")
        row_chars |= set(_QUOTES) | _SIGNS | set("</answer>") | set("✓✔.")
        self._not_row_char = re.compile(r"[^\s\d" + "".join(re.escape(ch) for ch in sorted(row_chars)) + "]",
                                        re.IGNORECASE)
        # A separator row (:meth:`is_separator_row`) in one C-level match: whitespace and at least one separator
        # character that is not an answer symbol (reasonshape choice, for speed, as above).
        sep = "".join(re.escape(ch) for ch in sorted(_SEPARATOR_CHARS - set(self.symbols)))
        self._separator_line = re.compile(rf"\s*[{sep}][\s{sep}]*") if sep else None

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
        t = token.strip().strip(_QUOTES).lower()
        if t in self.words:
            return self.words[t]
        if t.isdecimal() and len(t) <= MAX_DIGITS:  # not isdigit(): int() rejects superscripts such as "²"
            return int(t)
        if t.endswith("s") and t[:-1] in self.words:  # plurals: "tents"
            return self.words[t[:-1]]
        return None

    def _claim(self, cell, value, positive=True) -> Claim | None:
        # Claims are immutable values, so one object per (cell, value, polarity) serves every sentence (a claim is a
        # frozen dataclass: building one costs more than the lookup). Keyed only for int and str values, which
        # never compare equal to a value of another type (1 == True == 1.0 would share an entry).
        keyed = type(value) in _KEYED_TYPES
        if keyed:
            cl = self._value_claims.get((cell, value, positive))
            if cl is not None:
                return cl
        dom = self.domains.get(cell)
        if dom is None or value not in dom:
            return None
        cl = self.puzzle.value_claim(cell, value, positive)
        if keyed:
            self._value_claims[(cell, value, positive)] = cl
        return cl

    # --------------------------------------------------------------------------------------------- sentences
    def read(self, text: str, offset: int = 0) -> list[Mention]:
        """Claims in one sentence ``text`` (``offset`` = its start in the trace), in order of appearance.

        Returns
        -------
        list of Mention
            A row / column listing gives only its cell claims; otherwise the generic cell claims and the puzzle's own
            claims (:meth:`Puzzle.parse_claim_text` on the sentence and on its ``(r,c)``-normalised form). Where a
            puzzle claim covers a generic claim's predicate words, the puzzle claim wins; one that only shares the
            cell reference ("(5,4) > (5,5) = 3") leaves the value claim standing.
        """
        if self.grid:
            low = _lowered(text)
            refs = _cell_refs(text, low)
            # a sentence that names a cell ("(1,3) > (1,2)") is a statement about cells, not a bare grid row. A listing
            # is the whole reading, so it is looked for before the puzzle's own claims, which it would discard.
            listing = self._row_listing(text, offset, not refs, low)
            if listing:
                return listing
        else:
            refs = []
        own_raw = self._own_claims(text)
        if refs and _rewritten(text, refs):  # (most references are written "(r,c)": no _Canon to build)
            canon = _Canon(text, refs)
            own_raw += _new_spans(own_raw, [(claim, canon.start(s), canon.end(e)) for claim, s, e in
                                            self._own_claims(canon.text)])
        own = [Mention(claim, offset + s, offset + e) for claim, s, e in own_raw]
        if not self.grid:
            found = own
        elif not own:  # no own claim to win over a generic one: every generic claim stands
            found = [g for g, _ in self._cell_claims(text, offset, refs, low)] if refs else []
            # a count claim names "row" or "column" and one of its verbs, which ``low`` has in lower case (as
            # :func:`~reasonshape.envs.base.ascii_lower` says): without them there is none to look for
            if self._count is not None and ("row" in low or "column" in low) and (
                    "has" in low or "have" in low or "need" in low or "contain" in low or "require" in low
                    or "gets" in low):
                found += self._count_claims(text, offset)
        else:
            generic = self._cell_claims(text, offset, refs, low)
            generic += [(m, m.start) for m in self._count_claims(text, offset)]
            # The puzzle's own recognisers win where they read the same predicate words (e.g. a clue "column 2 has 1
            # tent"); sharing only the cell reference is no conflict. Sorted sweep: O((G + O) log O).
            own_sorted = sorted(own, key=lambda o: o.start)
            starts = [o.start for o in own_sorted]
            max_end, best = [], -1
            for o in own_sorted:
                best = max(best, o.end)
                max_end.append(best)
            found = []
            for g, ref_end in generic:
                k = bisect.bisect_left(starts, g.end)  # own[:k] start before g ends
                if not (k and max_end[k - 1] > ref_end):
                    found.append(g)
            found.extend(own)
        if len(found) > 1:
            found.sort(key=_SPAN)
        return found

    def _own_claims(self, text: str) -> list:
        """The puzzle's own claims in ``text`` (:meth:`Puzzle.parse_claim_text`) that the puzzle can label.

        A recogniser reads the claim's form; a claim the puzzle then refuses to label (:class:`ClaimError`: a cell
        off the grid, as 0-based coordinates give, or a clue no cell can hold, "the clue 7 at (3,1)" in Light Up)
        is not a claim about this instance, and is skipped as the generic patterns skip a cell outside the
        domains. A digit run longer than any number of a claim (``MAX_DIGITS``) is read by no recogniser
        (:func:`~reasonshape.envs.base.mask_long_numbers`, which every ``parse_claim_text`` applies). Either way
        the sentence loses only those claims, not the whole claim graph (reasonshape choice: precision first).
        """
        return [t for t in self.puzzle.parse_claim_text(self.instance, text) if self._admitted(t[0])]

    def _admitted(self, claim: Claim) -> bool:
        try:
            self.label(claim)
        except ClaimError:
            return False
        return True

    def label(self, claim: Claim) -> ClaimLabel:
        """The puzzle's label of ``claim`` (:func:`~reasonshape.extraction.labels.label_claim`), cached per instance:
        the one label cache of extraction (:meth:`PuzzleContext.label_of` reads it too).

        Raises
        ------
        ClaimError
            The puzzle refuses the claim (not a claim about this instance); the refusal is cached too.
        """
        lab = self._labels.get(claim)
        if lab is None:
            try:
                lab = label_claim(self.puzzle, self.instance, claim)
            except ClaimError as e:
                lab = e
            self._labels[claim] = lab
        if isinstance(lab, ClaimError):
            raise lab
        return lab

    def _cell_claims(self, text: str, offset: int, refs: list[CellRef],
                     low: str | None = None) -> list[tuple[Mention, int]]:
        """Generic value / elimination / candidate claims after (or, for "place 5 at", before) each cell reference,
        as ``(mention, end of its cell reference in the trace)``; ``low`` is ``_lowered(text)`` where the caller has
        it."""
        if low is None:
            low = _lowered(text)
        out = []
        predicates = self._predicates
        for ref in refs:
            cell = ref.cell
            if cell not in self.domains:
                continue
            a, b = ref.start, ref.end
            ref_end = offset + b
            end = min(len(text), b + _WINDOW)
            window = text[b:end]
            pred = predicates.get(window)
            if pred is None:
                pred = self._predicate(text, b, end, low)
                if len(predicates) >= _PREDICATE_MEMO_MAX:
                    predicates.clear()
                predicates[window] = pred
            kind, pm_end, got = pred
            pm_end += b
            sign = value = None  # of a value claim ("pos"): its sign and value (a value of the puzzle, or None)
            if kind == "neg":
                cl = self._claim(cell, got, False)
                if cl:
                    out.append((_new(Mention, (cl, offset + a, offset + pm_end, False)), ref_end))
                continue
            if kind == "cand" or kind == "cor":
                vals = [self.value(t) for t in re.split(r"\s*(?:,|or|/|\|)\s*", got) if t.strip()]
                vals = tuple(sorted({x for x in vals if x is not None and x in self.domains[cell]}, key=str))
                if len(vals) >= 2:
                    out.append((Mention(Claim("candidates", (cell,), vals), offset + a, offset + pm_end), ref_end))
                    continue
                if len(vals) == 1:
                    out.append((Mention(self._claim(cell, vals[0]), offset + a, offset + pm_end), ref_end))
                    continue
                pm = self._pos.match(text, b, end)  # no usable value in the list: a value claim?
                kind = "pos" if pm else None
                if pm:
                    sign, value, pm_end = pm.group("p"), self.value(pm.group("v")), pm.end()
            elif kind == "pos":
                sign, value = got
            if kind == "pos" and sign in (":", "->", "→") and _COMPARE_AFTER.match(text, pm_end):
                kind = None  # "(1,1) > (2,1): 3 > 2": a check of values, not a value claim
            if kind == "pos":
                cl = self._claim(cell, value)
                if cl:
                    out.append((_new(Mention, (cl, offset + a, offset + pm_end, False)), ref_end))
                continue
            # "place 5 at (3,4)" / "put a tent in (3,4)": look back a bounded window
            start = max(0, ref.outer - _WINDOW)
            before = text[start:ref.outer]
            pv = self._place_val.search(before) if _ends_in_word(before, _PLACE_WORDS) else None
            if pv and _PLACE.search(before[: pv.start()][-24:] + " "):
                cl = self._claim(cell, self.value(pv.group("v")))
                if cl:
                    out.append((Mention(cl, offset + start + pv.start(), offset + b), ref_end))
                continue
            if ref.positional:
                m = self._value_in(text, ref, cell)
                if m is not None:
                    out.append((Mention(m[0], offset + m[1], offset + b), ref_end))
        return out

    def clear_predicate_memo(self) -> None:
        """Forget the predicates read after cell references (the memo of :meth:`_cell_claims`, by window text; at
        most ``_PREDICATE_MEMO_MAX`` windows). :meth:`PuzzleContext.clear_sentence_memos
        <reasonshape.extraction.deterministic.PuzzleContext.clear_sentence_memos>` calls it with the per-sentence
        memos, so a :class:`~reasonshape.rewards.scorer.Scorer` keeps it only for its most recent instances."""
        self._predicates.clear()

    def _predicate(self, text: str, b: int, end: int, low: str) -> tuple:
        """The predicate right after a cell reference ending at ``b`` (``text[b:end]``, ``low = _lowered(text)``):
        ``(kind, end of the match - b, what it read)`` for the first of neg / cand / cand_or / pos that matches
        (neg: the value, :meth:`value` of the token; cand, cor: the values' text; pos: ``(sign, value)``), or
        ``(None, 0, None)``. The patterns have no look-behind, ``^`` or ``\\b`` and ``end`` bounds them, so this is a
        function of the window ``text[b:end]`` alone, which :meth:`_cell_claims` memoises (templated traces repeat
        windows: " is grass." after most references of a tents trace)."""
        # pos alone where the others cannot match (_NOT_ONLY_POS)
        pm = (self._pred if _NOT_ONLY_POS.search(low, b, end) else self._pos_only).match(text, b, end)
        if pm is None:
            return (None, 0, None)
        kind = pm.lastgroup
        if kind == "pos":
            got = (pm.group("pos_p"), self.value(pm.group("pos_v")))
        elif kind == "neg":
            got = self.value(pm.group("neg_v"))
        else:
            got = pm.group(kind + "_vs")
        return (kind, pm.end() - b, got)

    def _value_in(self, text: str, ref: CellRef, cell) -> tuple[Claim, int] | None:
        """"Row 6: 6 in position 1, 3 in position 2" / "We have 3 in position 4": the value before a positional
        reference, unless the clause negates it ("can't have 3 in position 2"), the value ends a list of values
        ("needs 1 and 4 in position 3") or positions follow ("5 in position 5 or 8")."""
        start = max(0, ref.outer - _WINDOW)
        before = text[start:ref.outer]
        pv = self._val_in.search(before) if _ends_in_word(before, _IN_AT) else None
        if not pv:
            return None
        head = before[: pv.start()]
        if not _VAL_IN_BEFORE.search(head):
            return None
        lm = _VAL_LIST.search(head)  # "1 and 4 in position 3": a list of values; "position 1, 3 in ..." is not
        if lm and (lm.group("w") or "").lower() not in _REF_WORDS:
            return None
        clause = re.split(r"[,;:.(]", head)[-1]
        if _VAL_IN_NEG.search(clause) or _POS_LIST_AFTER.match(text, ref.end, min(len(text), ref.end + 24)):
            return None
        if re.search(r"(?:row|column|col|position|pos|cell|box|block|cage|region)\s*$", head, re.IGNORECASE):
            return None
        cl = self._claim(cell, self.value(pv.group("v")))
        return None if cl is None else (cl, start + pv.start())

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

    def _row_listing(self, text: str, offset: int, bare: bool = True, low: str | None = None) -> list[Mention]:
        """A row or column listing ("Row 4: 1 3 4 2", "Second row: _ 4 3 2.", "Column 2: 3, 2, _, _") -> its cell
        claims (blanks skipped); a bare grid row (only with ``bare``) -> one ``_grid_row`` placeholder for
        :meth:`resolve_grid_rows`. ``low`` is ``_lowered(text)`` where the caller has it."""
        if low is None:
            low = _lowered(text)
        # A listing names its line with "row", "col" or "r" and a number, and its verb right after the line (in
        # ``low`` in lower case, as re.IGNORECASE reads them, see :func:`~reasonshape.envs.base.ascii_lower`): most
        # prose has no line word, and most sentences naming a line have no verb after it ("In row 4, (4,1) ...").
        m = (_LISTING.match(text) if ("row" in low or "col" in low or _R_NUMBER.search(low))
             and _LISTING_HEAD.search(low) else None)
        if m:
            if m.group("Lc_o") or m.group("Lc_n"):
                col = _line(m, "Lc")
                vals = self._tokens(m.group("body"), self.rows)
                if vals is not None and col and 1 <= col <= self.cols:
                    cells = [(r, col) for r in range(1, self.rows + 1)]
                    return self._listing_line(cells, vals, offset + m.start("body"), offset + m.end())
                return []
            r = int(m.group("Lrr")) if m.group("Lrr") else _line(m, "Lr")
            vals = self._tokens(m.group("body"), self.cols)
            if vals is not None and r and 1 <= r <= self.rows:
                return self._listing_row(r, vals, offset + m.start("body"), offset + m.end())
            return []
        if not bare or len(text) > self._max_row_chars:
            return []
        vals = self._tokens(text)
        return [] if vals is None else [Mention(Claim("_grid_row", (), tuple(vals)), offset, offset + len(text), True)]

    def _clean_row_text(self, text: str) -> str:
        """A row's text without answer tags glued to it, quotes / backticks around it or its values, check marks,
        a final period, or in-row inequality signs (futoshiki rows such as ``3 < 6   1   2 < 4 < 5``) unless those
        characters are the puzzle's own symbols."""
        t = (_TAGS.sub(" ", text) if "<" in text else text).translate(self._quote_table).strip()  # a tag has "<"
        if "✓" in t or "✔" in t:
            t = _TICKS.sub("", t)
        if t.endswith(".") and "." not in self.symbols and "." not in self.fixed_tokens:
            t = t[:-1]
        return t.translate(self._sign_table)

    def _token_value(self, t: str) -> Hashable | None:
        """A row token's reading: ``_BLANK`` for a blank that is no symbol, the symbol's value, else :meth:`value`."""
        if t in _BLANKS and t not in self.symbols and t not in self.fixed_tokens:
            return _BLANK
        return self.symbols[t] if t in self.symbols else self.value(t)

    def _tokens(self, text: str, n: int | None = None) -> list | None:
        n = self.cols if n is None else n
        if self._not_row_char.search(text):  # a character no accepted token holds: the row would be rejected below
            return None
        text = self._clean_row_text(text)
        toks = split_tokens(text)
        if len(toks) != n:
            toks = [ch for t in toks for ch in t]  # = split_tokens(text, single_chars=True)
            if len(toks) != n:
                return None
        table, value = self._token_values, self.value
        vals = [table[t] if t in table else value(t) for t in toks]  # = map(self._token_value, toks)
        # (list.count and ``in`` compare by identity first; no value equals _BLANK or None without being it)
        if vals.count(_BLANK) == n:
            return None
        # Tokens of non-variable positions (walls '#', clues, mirrors) read as None and are skipped later; the row is
        # rejected if a None stands at a variable. Any other unknown token: not a grid row.
        if None in vals and any(v is None and t not in self.fixed_tokens for v, t in zip(vals, toks, strict=True)):
            return None
        return vals

    def is_separator_row(self, text: str) -> bool:
        """A line of only inequality signs / bars between grid rows (futoshiki's vertical signs, box rules): it
        does not break a grid written out over several lines."""
        return self._separator_line is not None and self._separator_line.fullmatch(
            _TAGS.sub(" ", text) if "<" in text else text) is not None  # an answer tag has "<"

    def _listing_row(self, r: int, vals: list, start: int, end: int) -> list[Mention]:
        return self._listing_line([(r, c) for c in range(1, len(vals) + 1)], vals, start, end)

    def _listing_line(self, cells: list, vals: list, start: int, end: int) -> list[Mention]:
        """Cell claims of one listed line (``cells`` in listing order); all or nothing: a value outside a cell's
        domain rejects the line."""
        out = []
        for cell, v in zip(cells, vals, strict=True):
            if cell not in self.domains:  # a wall / clue / mirror position: not a claim
                continue
            if v is _BLANK:  # "_" in a row listing: no claim about this cell
                continue
            cl = None if v is None else self._claim(cell, v)
            if cl is None:
                return []
            out.append(_new(Mention, (cl, start, end, True)))
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
