"""Magnets: fill a domino layout with magnets and blanks to match the row and column pole counts.

Rules (Simon Tatham's Portable Puzzle Collection, ``magnets.c``): the grid is tiled by dominoes (with at most one
blank single cell). Each domino is either a magnet, one ``+`` end and one ``-`` end, or neutral (both ends
empty). Two orthogonally adjacent cells may not hold the same pole (``+`` next to ``+`` or ``-`` next to ``-``).
A number beside a row or column gives how many ``+`` cells (left of a row / above a column) or ``-`` cells (right
of a row / below a column) it has; a missing number is unconstrained.

Game IDs
--------
``params`` is ``<w>x<h>`` (short) or ``<w>x<h>d<diff>[S]`` (full), ``diff`` ``e`` (Easy) or ``t`` (Tricky),
``S`` = strip clues; a bare ``<n>`` means ``n x n``; the short form means Easy (``magnets.c`` ``decode_params``).
Sizes follow ``validate_params``: ``w, h >= 2``, Easy needs ``w >= 3`` or ``h >= 3``, Tricky ``w >= 5`` or
``h >= 5``. An unknown difficulty letter (which the collection silently reads as Easy) and trailing characters
are rejected. ``desc`` is four comma-terminated count strings: column ``+`` counts (left to right), row ``+`` counts
(top to bottom), column ``-`` counts, row ``-`` counts, each count one character (``.`` none, ``0``-``9``,
``a``-``z`` = 10-35, ``A``-``Z`` = 36-61), then ``w*h`` domino letters row-major: ``L``/``R`` left/right end,
``T``/``B`` top/bottom end, ``*`` a blank single cell (commas between them are skipped) (``new_game_int``). The
collection ignores characters after the layout; reasonshape rejects them. The ``SOLVE`` move is ``S`` followed by
``;+x,y`` / ``;-x,y`` / ``;.x,y`` (0-based column x, row y; the other end of the domino gets the opposite pole or
stays empty) (``execute_move``).

Answer and claims
-----------------
The answer is the full grid, one row per line, ``+``, ``-`` or ``.`` per cell (``ANSWER_SYMBOLS``); blank single
cells are ``.``. A solution is a tuple of ``h`` tuples of ``w`` such characters. Claim kinds:

* ``"value"``: ``Claim("value", ((r, c),), v)``, ``v`` in ``+ - .``: "(r,c) is positive / negative / neutral";
* ``"row_count"`` / ``"col_count"``: ``Claim(kind, (anchor,), (sign, n))`` with anchor ``(r, 1)`` / ``(1, c)``,
  "row r has n positive cells": true iff the solution's row has exactly ``n`` cells of that sign (so the given
  clues are true facts and derived counts are checkable);
* ``"domino"``: ``Claim("domino", (a, b))`` "(r,c) and (r,c') form a domino": a static fact of the layout.

C* (paper A §C; definition a reasonshape choice after paper A's tents example, where only tents are stated): one
value claim per cell holding a pole (``+`` or ``-``); neutral cells are implied. Given claims: the layout's domino
claims, the blank single cell as neutral, and the given counts.

Constraint view
---------------
Variables are the cells (1-based), domain ``('+', '-', '.')`` (a blank single cell: ``('.',)``). Units: one per
domino, "the domino (r,c)-(r',c')" (a magnet either way round, or neutral; premise: its domino claim); one per pair
of adjacent cells of different dominoes, "the neighbours (r,c) and (r',c')" (not the same pole); ``row r`` /
``column c`` for lines with a count clue (the clued counts hold; premises: the count claims). Magnets has no global
rule: the units define the solutions exactly.

Levels
------
=======  ======  ================================================================
level    params  native generator
=======  ======  ================================================================
trivial  3x3deS  3x3 (one blank cell); clues stripped while the solution stays unique
easy     4x4de   4x4, every count given
normal   6x5dt   6x5, every count given
hard     8x7dt   8x7, every count given
=======  ======  ================================================================

The native generator draws a random domino layout, lays magnets on it (about a tenth of the dominoes neutral
first, then magnets wherever the no-touching rule allows, as ``magnets.c`` ``lay_dominoes`` does), writes every
count, keeps the layout only if CP-SAT proves the solution unique, and with ``S`` removes counts in random order
while it stays unique. Difficulty comes from the grid size and the clue density; the collection's technique grades
(``e``/``t``) are kept in the params but not reproduced (``backend="sgt"`` gives graded puzzles). Source:
reasonshape choice after paper A §A.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from reasonshape.envs._dominosa_layout import random_domino_tiling
from reasonshape.envs._solver import enumerate_solutions, new_model
from reasonshape.envs.answer import format_grid, read_grid_answer
from reasonshape.envs.base import (
    CheckResult,
    Claim,
    Instance,
    ParsedAnswer,
    Puzzle,
    SolveResult,
    Unit,
    Violation,
    bad_solve_move,
    mask_long_numbers,
    parse_wxh,
    read_difficulty,
    solve_move_cells,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["MagnetsParams", "MagnetsData", "Magnets", "PUZZLE"]

_DIFFS = "et"
_VALUES = ("+", "-", ".")
_WORD = {"+": "positive", "-": "negative", ".": "neutral"}
_SIGN_WORDS = {"positive": "+", "negative": "-", "plus": "+", "minus": "-", "+": "+", "-": "-"}
_MAX_ATTEMPTS = 500


@dataclass(frozen=True)
class MagnetsParams:
    """Magnets params: width ``w``, height ``h``, difficulty letter (``e``/``t``) and the strip-clues flag."""

    w: int
    h: int
    diff: str = "e"
    stripclues: bool = False


@dataclass(frozen=True)
class MagnetsData:
    """A parsed magnets desc.

    ``col_plus``/``col_minus``: ``w`` counts (``None`` = no clue), ``row_plus``/``row_minus``: ``h`` counts.
    ``partner[r][c]`` (0-based indices) is the 1-based other cell of that cell's domino, or the cell itself for a
    blank single cell.
    """

    col_plus: tuple[int | None, ...]
    row_plus: tuple[int | None, ...]
    col_minus: tuple[int | None, ...]
    row_minus: tuple[int | None, ...]
    partner: tuple[tuple[tuple[int, int], ...], ...]

    def dominoes(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """The dominoes as pairs of 1-based cells ``(a, b)`` with ``a < b``, row-major by ``a``."""
        out = []
        for r, row in enumerate(self.partner, 1):
            for c, p in enumerate(row, 1):
                if (r, c) < p:
                    out.append(((r, c), p))
        return out


def _n2c(n: int | None) -> str:
    if n is None:
        return "."
    if n < 10:
        return str(n)
    if n < 36:
        return chr(ord("a") + n - 10)
    return chr(ord("A") + n - 36)


def _c2n(ch: str) -> int | None:
    """``magnets.c`` ``c2n``: digit, a-z = 10.., A-Z = 36..; -1 for anything else."""
    if "0" <= ch <= "9":
        return ord(ch) - ord("0")
    if "a" <= ch <= "z":
        return ord(ch) - ord("a") + 10
    if "A" <= ch <= "Z":
        return ord(ch) - ord("A") + 36
    return -1


def _encode_desc(d: MagnetsData, w: int, h: int) -> str:
    """The desc as ``magnets.c`` ``generate_desc`` writes it."""
    parts = ["".join(_n2c(x) for x in d.col_plus), "".join(_n2c(x) for x in d.row_plus),
             "".join(_n2c(x) for x in d.col_minus), "".join(_n2c(x) for x in d.row_minus)]
    lay = []
    for r in range(1, h + 1):
        for c in range(1, w + 1):
            p = d.partner[r - 1][c - 1]
            lay.append({(r, c): "*", (r, c + 1): "L", (r, c - 1): "R", (r + 1, c): "T", (r - 1, c): "B"}[p])
    return ",".join(parts) + "," + "".join(lay)


class _DominoUnit:
    def __call__(self, values: tuple) -> bool:
        return values in (("+", "-"), ("-", "+"), (".", "."))


class _NeighbourUnit:
    def __call__(self, values: tuple) -> bool:
        return not (values[0] == values[1] and values[0] != ".")


class _LineUnit:
    """A row or column with its clued counts: ``plus``/``minus`` are ints or ``None`` (no clue)."""

    def __init__(self, plus: int | None, minus: int | None):
        self.plus, self.minus = plus, minus

    def __call__(self, values: tuple) -> bool:
        return (self.plus is None or values.count("+") == self.plus) and \
            (self.minus is None or values.count("-") == self.minus)


def _plural(n: int, sign: str) -> str:
    return f"{n} {_WORD[sign]} cell{'s' if n != 1 else ''}"


def _label(k: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return letters[k] if k < len(letters) else letters[k // len(letters) - 1] + letters[k % len(letters)]


class Magnets(Puzzle):
    """Magnets (``magnets.c``). See the module docstring for game IDs, answers, claims, C* and levels."""

    name = "magnets"
    LEVELS = {"trivial": "3x3deS", "easy": "4x4de", "normal": "6x5dt", "hard": "8x7dt"}
    ANSWER_SYMBOLS = {
        "+": "a positive pole (the + end of a magnet)",
        "-": "a negative pole (the - end of a magnet)",
        ".": "a neutral cell (an empty domino half, or a blank single cell)",
    }
    CLAIM_KINDS = ("value", "row_count", "col_count", "domino")
    VALUE_WORDS: dict[str, Hashable] = {
        "positive": "+", "plus": "+", "+": "+", "a positive pole": "+", "positive pole": "+",
        "negative": "-", "minus": "-", "-": "-", "a negative pole": "-", "negative pole": "-",
        "neutral": ".", "blank": ".", "empty": ".", ".": ".",
    }

    # ------------------------------------------------------------------ params
    def parse_params(self, text: str) -> MagnetsParams:
        """Parse ``"<w>x<h>[d<diff>][S]"`` or ``"<n>"``. Raises :class:`GameIdError`."""
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '6x5dt'")
        w, h, i = parse_wxh(text, min_side=2)
        strip = False
        diff, i = read_difficulty(text, i, _DIFFS, "e", "a difficulty letter, 'e' (easy) or 't' (tricky)")
        if i < len(text) and text[i] == "S":
            strip, i = True, i + 1
        if i != len(text):
            raise GameIdError(text, i, "'d<difficulty>', 'S' or the end of the params")
        if w * h > 4096:
            raise GameIdError(text, 0, "at most 4096 cells")
        if diff == "t" and w < 5 and h < 5:
            raise GameIdError(text, 0, "width or height of at least five for Tricky")
        if diff == "e" and w < 3 and h < 3:
            raise GameIdError(text, 0, "width or height of at least three")
        return MagnetsParams(w, h, diff, strip)

    def format_params(self, params: MagnetsParams, full: bool = True) -> str:
        """``"<w>x<h>d<diff>[S]"`` (full) or ``"<w>x<h>"`` (short), as ``encode_params``."""
        base = f"{params.w}x{params.h}"
        return f"{base}d{params.diff}{'S' if params.stripclues else ''}" if full else base

    # ------------------------------------------------------------------ desc
    def parse_desc(self, params: MagnetsParams, desc: str) -> Instance:
        """Parse a desc as ``new_game_int`` does. Raises :class:`GameIdError` (position, expectation)."""
        w, h = params.w, params.h
        i = 0
        lines, starts = [], []  # the four count strings and where each begins in desc
        for what, n in (("column + counts", w), ("row + counts", h), ("column - counts", w), ("row - counts", h)):
            vals: list[int | None] = []
            starts.append(i)
            for _ in range(n):
                if i >= len(desc):
                    raise GameIdError(desc, i, f"{n} {what} (the description is too short)")
                ch = desc[i]
                if ch == ".":
                    vals.append(None)
                elif _c2n(ch) >= 0:
                    vals.append(_c2n(ch))
                else:
                    raise GameIdError(desc, i, f"one of the {n} {what}: '.', a digit or a letter")
                i += 1
            if i >= len(desc) or desc[i] != ",":
                raise GameIdError(desc, i, f"',' after the {n} {what}")
            i += 1
            lines.append(tuple(vals))
        col_plus, row_plus, col_minus, row_minus = lines
        for c in range(w):
            if col_plus[c] is not None and col_minus[c] is not None and col_plus[c] + col_minus[c] > h:
                raise GameIdError(desc, starts[2] + c,  # at the column's '-' count
                                  f"consistent column counts (column {c + 1} needs more than {h} poles)")
        for r in range(h):
            if row_plus[r] is not None and row_minus[r] is not None and row_plus[r] + row_minus[r] > w:
                raise GameIdError(desc, starts[3] + r,  # at the row's '-' count
                                  f"consistent row counts (row {r + 1} needs more than {w} poles)")
        partner: list[list[tuple[int, int]]] = [[(0, 0)] * w for _ in range(h)]
        letter_at = [[0] * w for _ in range(h)]  # where each cell's domino letter is in desc
        step = {"L": (0, 1), "R": (0, -1), "T": (1, 0), "B": (-1, 0), "*": (0, 0)}
        for k in range(w * h):
            while i < len(desc) and desc[i] == ",":
                i += 1
            if i >= len(desc):
                raise GameIdError(desc, i, f"{w * h} domino letters (the description is too short)")
            if desc[i] not in step:
                raise GameIdError(desc, i, "a domino letter: 'L', 'R', 'T', 'B' or '*'")
            r, c = divmod(k, w)
            dr, dc = step[desc[i]]
            partner[r][c] = (r + 1 + dr, c + 1 + dc)
            letter_at[r][c] = i
            i += 1
        if i != len(desc):
            raise GameIdError(desc, i, "the end of the description after the domino layout")
        for r in range(1, h + 1):
            for c in range(1, w + 1):
                pr, pc = partner[r - 1][c - 1]
                if not (1 <= pr <= h and 1 <= pc <= w) or partner[pr - 1][pc - 1] != (r, c):
                    raise GameIdError(desc, letter_at[r - 1][c - 1], f"a consistent domino layout (the domino at "
                                                                     f"({r},{c}) has no matching other end)")
        data = MagnetsData(col_plus, row_plus, col_minus, row_minus, tuple(tuple(row) for row in partner))
        return Instance(self.name, params, desc, data)

    # ------------------------------------------------------------------ generation
    def _lay(self, partner: list[int], w: int, h: int, rng: random.Random) -> list[str]:
        """Lay magnets on a layout like ``lay_dominoes``: a few neutrals first, then magnets where allowed."""
        wh = w * h
        grid = ["."] * wh
        dominoes = [(i, j) for i, j in enumerate(partner) if i < j]
        rng.shuffle(dominoes)
        n_neutral = 5 if wh > 100 else wh // 10

        def ok(i, v):
            x, y = i % w, i // w
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                if 0 <= nx < w and 0 <= ny < h and grid[ny * w + nx] == v:
                    return False
            return True

        for k, (i, j) in enumerate(dominoes):
            if k < n_neutral:
                continue
            for a, b in rng.sample([("+", "-"), ("-", "+")], 2):
                if ok(i, a) and ok(j, b):
                    grid[i], grid[j] = a, b
                    break
        return grid

    def _generate(self, params: MagnetsParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        for _ in range(_MAX_ATTEMPTS):
            partner = random_domino_tiling(w, h, rng)
            grid = self._lay(partner, w, h, rng)
            rows = [grid[r * w:(r + 1) * w] for r in range(h)]
            cols = [[grid[r * w + c] for r in range(h)] for c in range(w)]
            clues = [[col.count("+") for col in cols], [row.count("+") for row in rows],
                     [col.count("-") for col in cols], [row.count("-") for row in rows]]
            pcells = tuple(tuple((partner[r * w + c] // w + 1, partner[r * w + c] % w + 1) for c in range(w))
                           for r in range(h))

            def make(cl, pcells=pcells):
                data = MagnetsData(*(tuple(x) for x in cl), pcells)
                return Instance(self.name, params, _encode_desc(data, w, h), data)

            inst = make(clues)
            if not self.solve(inst, 2).unique:
                continue
            if params.stripclues:
                slots = [(k, i) for k in range(4) for i in range(len(clues[k]))]
                rng.shuffle(slots)
                for k, i in slots:
                    old = clues[k][i]
                    clues[k][i] = None
                    trial = make(clues)
                    if self.solve(trial, 2).unique:
                        inst = trial
                    else:
                        clues[k][i] = old
            return inst
        raise GenerationError(f"magnets: no unique puzzle for {self.format_params(params)} in {_MAX_ATTEMPTS} "
                              "attempts")

    # ------------------------------------------------------------------ text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the domino layout as a grid of labels with the counts beside it, and the answer format."""
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        lab: dict[tuple[int, int], str] = {}
        for k, (a, b) in enumerate(d.dominoes()):
            lab[a] = lab[b] = _label(k)
        width = max(3, max((len(x) for x in lab.values()), default=1) + 1)

        def cnt(v):
            return "?" if v is None else str(v)

        lines = [" " * 16 + "".join(str(c).rjust(width) for c in range(1, w + 1)) + "   <- column numbers",
                 "    + per column" + "".join(cnt(v).rjust(width) for v in d.col_plus),
                 "    - per column" + "".join(cnt(v).rjust(width) for v in d.col_minus)]
        for r in range(1, h + 1):
            cells = "".join(lab.get((r, c), "#").rjust(width) for c in range(1, w + 1))
            lines.append(f"row {r:>2} (+{cnt(d.row_plus[r - 1]):>2} -{cnt(d.row_minus[r - 1]):>2})"[:16].ljust(16)
                         + cells)
        counts = []
        for r in range(h):
            counts.append(f"- row {r + 1}: {cnt(d.row_plus[r])} positive, {cnt(d.row_minus[r])} negative")
        for c in range(w):
            counts.append(f"- column {c + 1}: {cnt(d.col_plus[c])} positive, {cnt(d.col_minus[c])} negative")
        blanks = [f"({r},{c})" for r in range(1, h + 1) for c in range(1, w + 1) if d.partner[r - 1][c - 1] == (r, c)]
        return "\n".join([
            f"Solve this Magnets puzzle on a grid of {h} rows and {w} columns.",
            "",
            "Rules:",
            "1. The grid is divided into dominoes (pairs of adjacent cells)" +
            (", plus blank single cells marked '#' that are always neutral." if blanks else "."),
            "2. Each domino is either a magnet, with one positive (+) end and one negative (-) end (either way "
            "round), or neutral, with both ends empty.",
            "3. Two cells that share a side may not hold the same pole: no + next to +, no - next to -. "
            "(+ next to - is fine, also across dominoes.)",
            "4. Each row and each column must contain exactly the given number of + cells and of - cells. '?' "
            "means that count is not given.",
            "",
            "Coordinates are (row, column), 1-based: rows are numbered from the top (1) to the bottom "
            f"({h}), columns from the left (1) to the right ({w}).",
            "",
            "The grid: two cells with the same letter form one domino. Before each row: its number and its "
            "(+ count, - count); above the grid: each column's + count and - count.",
            *lines,
            "",
            "Required counts:",
            *counts,
            *(["Blank single cells (always neutral): " + ", ".join(blanks)] if blanks else []),
            "",
            f"Answer format: the complete grid, {h} lines (row 1 first), each with {w} symbols separated by spaces: "
            "'+' for a positive pole, '-' for a negative pole, '.' for a neutral cell (also for blank cells). "
            "For example, a row could read: " + " ".join(("+", "-", ".")[k % 3] for k in range(w)),
            "",
            "Put your final answer inside <answer>...</answer>, with nothing but the grid in the block.",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``+``/``-``/``.`` grid (symbols run together or separated by spaces, commas, pipes).

        Raises
        ------
        AnswerParseError
            No answer block and no grid-shaped block, wrong size, or an unknown symbol.
        """
        p = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, {s: s for s in _VALUES})
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The ``+``/``-``/``.`` grid, symbols separated by spaces."""
        return format_grid(solution)

    # ------------------------------------------------------------------ rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: symbols (``symbol``), blank cells neutral (``blank_cell``), each domino a magnet or
        neutral (``domino``), no like poles side by side (``adjacent_same_pole``), the row and column counts
        (``row_count`` / ``column_count``)."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        if not (isinstance(grid, tuple | list) and len(grid) == h and
                all(isinstance(row, tuple | list) and len(row) == w for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be {h} rows of {w} cells"),))
        out: list[Violation] = []
        for r in range(h):
            for c in range(w):
                if grid[r][c] not in _VALUES:
                    out.append(Violation("symbol", f"({r + 1},{c + 1}) holds {grid[r][c]!r}, not + - .",
                                         ((r + 1, c + 1),)))
        if out:
            return CheckResult(False, tuple(out))
        for r in range(1, h + 1):
            for c in range(1, w + 1):
                pr, pc = d.partner[r - 1][c - 1]
                v = grid[r - 1][c - 1]
                if (pr, pc) == (r, c):
                    if v != ".":
                        out.append(Violation("blank_cell", f"({r},{c}) is a blank cell but holds {v}", ((r, c),)))
                elif (r, c) < (pr, pc) and (v, grid[pr - 1][pc - 1]) not in (("+", "-"), ("-", "+"), (".", ".")):
                    out.append(Violation("domino", f"the domino ({r},{c})-({pr},{pc}) holds {v} and "
                                                   f"{grid[pr - 1][pc - 1]}", ((r, c), (pr, pc))))
                for nr, nc in ((r + 1, c), (r, c + 1)):
                    if nr <= h and nc <= w and v != "." and grid[nr - 1][nc - 1] == v:
                        out.append(Violation("adjacent_same_pole", f"({r},{c}) and ({nr},{nc}) are both {v}",
                                             ((r, c), (nr, nc))))
        for r in range(h):
            for sign, clue in (("+", d.row_plus[r]), ("-", d.row_minus[r])):
                if clue is not None and grid[r].count(sign) != clue:
                    out.append(Violation("row_count", f"row {r + 1} has {grid[r].count(sign)} {sign} cells, "
                                                      f"needs {clue}", tuple((r + 1, c + 1) for c in range(w))))
        for c in range(w):
            col = [grid[r][c] for r in range(h)]
            for sign, clue in (("+", d.col_plus[c]), ("-", d.col_minus[c])):
                if clue is not None and col.count(sign) != clue:
                    out.append(Violation("column_count", f"column {c + 1} has {col.count(sign)} {sign} cells, "
                                                         f"needs {clue}", tuple((r + 1, c + 1) for r in range(h))))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        model = new_model()
        pos = {(r, c): model.NewBoolVar(f"p{r}_{c}") for r in range(1, h + 1) for c in range(1, w + 1)}
        neg = {(r, c): model.NewBoolVar(f"m{r}_{c}") for r in range(1, h + 1) for c in range(1, w + 1)}
        for cell in pos:
            model.Add(pos[cell] + neg[cell] <= 1)
            other = d.partner[cell[0] - 1][cell[1] - 1]
            if other == cell:
                model.Add(pos[cell] == 0)
                model.Add(neg[cell] == 0)
            else:
                model.Add(pos[cell] == neg[other])
            r, c = cell
            for nb in ((r + 1, c), (r, c + 1)):
                if nb in pos:
                    model.Add(pos[cell] + pos[nb] <= 1)
                    model.Add(neg[cell] + neg[nb] <= 1)
        for r in range(1, h + 1):
            if d.row_plus[r - 1] is not None:
                model.Add(sum(pos[(r, c)] for c in range(1, w + 1)) == d.row_plus[r - 1])
            if d.row_minus[r - 1] is not None:
                model.Add(sum(neg[(r, c)] for c in range(1, w + 1)) == d.row_minus[r - 1])
        for c in range(1, w + 1):
            if d.col_plus[c - 1] is not None:
                model.Add(sum(pos[(r, c)] for r in range(1, h + 1)) == d.col_plus[c - 1])
            if d.col_minus[c - 1] is not None:
                model.Add(sum(neg[(r, c)] for r in range(1, h + 1)) == d.col_minus[c - 1])
        cells = list(pos)
        sols, exhausted = enumerate_solutions(model, [pos[x] for x in cells] + [neg[x] for x in cells], max_solutions)
        out = []
        n = len(cells)
        for s in sols:
            g = [["."] * w for _ in range(h)]
            for k, (r, c) in enumerate(cells):
                g[r - 1][c - 1] = "+" if s[k] else "-" if s[n + k] else "."
            out.append(tuple(tuple(row) for row in g))
        return SolveResult(tuple(out), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """``S;+x,y;-x,y;.x,y;...`` (0-based column x, row y) -> the grid (the other end of each domino gets the
        opposite pole). The collection's solve (``game_state_diff``) names every domino cell and never a blank
        single cell; so must ``move``.

        Raises
        ------
        ConfigError
            A malformed item, a cell off the grid or not in a domino, a domino cell never named
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p, d = instance.params, instance.data
        g = [["."] * p.w for _ in range(p.h)]
        named: set[tuple[int, int]] = set()
        for v, x, y, part in solve_move_cells(self.name, move, "+-.", p.w, p.h):
            pr, pc = d.partner[y][x]
            if (pr, pc) == (y + 1, x + 1):
                raise bad_solve_move(self.name, move, f"item {part!r} names a blank single cell")
            g[y][x] = v
            g[pr - 1][pc - 1] = {"+": "-", "-": "+", ".": "."}[v]
            named.add((y + 1, x + 1))
        missing = [(r + 1, c + 1) for r in range(p.h) for c in range(p.w)
                   if d.partner[r][c] != (r + 1, c + 1) and (r + 1, c + 1) not in named]
        if missing:
            raise bad_solve_move(self.name, move, f"domino cell (row, column) {missing[0]} (1-based) is never named")
        return tuple(tuple(row) for row in g)

    # ------------------------------------------------------------------ claims
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        p = instance.params
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"magnets: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        if not claim.cells:
            raise ClaimError("magnets: a claim needs a cell")
        for cell in claim.cells:
            self._check_cell(instance, cell, p.h, p.w)
        if claim.kind == "value" and len(claim.cells) != 1:
            raise ClaimError(f"magnets: a value claim is about one cell, got {claim.cells}")
        if claim.kind == "value" and claim.value not in _VALUES:
            raise ClaimError(f"magnets: a value claim's value is one of + - ., got {claim.value!r}")
        if claim.kind in ("row_count", "col_count"):
            self._claim_line(claim, p.h, p.w, row=claim.kind == "row_count")
            if not (isinstance(claim.value, tuple) and len(claim.value) == 2 and claim.value[0] in ("+", "-")):
                raise ClaimError(f"magnets: a count claim's value is (sign, n), got {claim.value!r}")
            # a row holds w cells, a column h: no line holds more poles of one sign
            self._claim_number(claim, 0, p.w if claim.kind == "row_count" else p.h, "(sign, n) with n", item=1)
        if claim.kind == "domino":
            if len(claim.cells) != 2:
                raise ClaimError(f"magnets: a domino claim has two cells, got {claim.cells}")
            self._claim_no_value(claim)

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value claims: the cell's symbol in ``solution``; count claims: the number of cells of that sign in
        the solution's row/column; domino claims: whether the layout pairs the two cells (static). Raises
        :class:`ClaimError` for claims outside the vocabulary, for either polarity: an unknown kind, a cell off the
        grid, a value other than ``+ - .``, a count claim not anchored at ``(r, 1)`` (rows) / ``(1, c)`` (columns)
        or whose value is not ``(sign, n)`` with ``n`` an integer ``0..w`` (rows) / ``0..h`` (columns), a domino
        claim that is not two cells or has a value (it takes ``None``)."""
        self._validate_claim(instance, claim)
        if claim.kind == "value":
            (r, c), = claim.cells
            truth = solution[r - 1][c - 1] == claim.value
        elif claim.kind == "row_count":
            r = claim.cells[0][0]
            truth = list(solution[r - 1]).count(claim.value[0]) == claim.value[1]
        elif claim.kind == "col_count":
            c = claim.cells[0][1]
            truth = [row[c - 1] for row in solution].count(claim.value[0]) == claim.value[1]
        else:
            a, b = claim.cells
            truth = instance.data.partner[a[0] - 1][a[1] - 1] == tuple(b) and a != b
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per cell holding a pole (``+`` or ``-``)."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r, c),), v) for r, row in enumerate(sol, 1) for c, v in enumerate(row, 1)
                         if v != ".")

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """Domino claims of the layout, blank single cells as neutral, and the given counts."""
        d = instance.data
        out = [Claim("domino", (a, b)) for a, b in d.dominoes()]
        out += [Claim("value", ((r, c),), ".") for r, row in enumerate(d.partner, 1) for c, pc in enumerate(row, 1)
                if pc == (r, c)]
        for r, (pl, mi) in enumerate(zip(d.row_plus, d.row_minus, strict=True), 1):
            out += [Claim("row_count", ((r, 1),), (s, v)) for s, v in (("+", pl), ("-", mi)) if v is not None]
        for c, (pl, mi) in enumerate(zip(d.col_plus, d.col_minus, strict=True), 1):
            out += [Claim("col_count", ((1, c),), (s, v)) for s, v in (("+", pl), ("-", mi)) if v is not None]
        return tuple(out)

    def claim_text(self, claim: Claim) -> str:
        """"(2,3) is positive" / "(2,3) is not neutral"; "row 2 has 1 positive cell"; "(1,1) and (1,2) form a
        domino"."""
        if claim.kind == "value":
            (r, c), = claim.cells
            return f"({r},{c}) {'is' if claim.positive else 'is not'} {_WORD[claim.value]}"
        if claim.kind in ("row_count", "col_count"):
            line = f"row {claim.cells[0][0]}" if claim.kind == "row_count" else f"column {claim.cells[0][1]}"
            sign, n = claim.value
            return f"{line} {'has' if claim.positive else 'does not have'} {_plural(n, sign)}"
        if claim.kind == "domino":
            (r1, c1), (r2, c2) = claim.cells
            return f"({r1},{c1}) and ({r2},{c2}) {'form a domino' if claim.positive else 'do not form a domino'}"
        raise ClaimError(f"magnets: unknown claim kind {claim.kind!r}")

    _COUNT_RE = re.compile(r"\b(row|column) (\d+) (has|does not have|contains|needs) (\d+) "
                           r"(positive|negative|plus|minus|\+|-)( cells?| poles?)?", re.IGNORECASE)
    _DOMINO_RE = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*(?:and|-)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)\s+"
                            r"(form a domino|do not form a domino|are a domino|are not a domino)", re.IGNORECASE)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read count claims ("row 2 has 1 positive cell", "column 3 needs 2 negative cells") and domino claims
        ("(1,1) and (1,2) form a domino"). Linear time (regexes without nested quantifiers)."""
        text = mask_long_numbers(text)
        p = instance.params
        out = []
        for m in self._COUNT_RE.finditer(text):
            k, n = int(m.group(2)), int(m.group(4))
            is_row = m.group(1).lower() == "row"
            if not 1 <= k <= (p.h if is_row else p.w):
                continue
            sign = _SIGN_WORDS[m.group(5).lower()]
            claim = Claim("row_count" if is_row else "col_count", ((k, 1),) if is_row else ((1, k),), (sign, n),
                          "not" not in m.group(3).lower())
            out.append((claim, m.start(), m.end()))
        for m in self._DOMINO_RE.finditer(text):
            a, b = (int(m.group(1)), int(m.group(2))), (int(m.group(3)), int(m.group(4)))
            if all(1 <= x[0] <= p.h and 1 <= x[1] <= p.w for x in (a, b)) and a != b:
                out.append((Claim("domino", (min(a, b), max(a, b)), None, "not" not in m.group(5).lower()),
                            m.start(), m.end()))
        out.sort(key=lambda t: t[1])
        return out

    # ------------------------------------------------------------------ constraint view
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Cell -> ``('+', '-', '.')``; a blank single cell -> ``('.',)``."""
        d = instance.data
        return {(r, c): (("." ,) if pc == (r, c) else _VALUES) for r, row in enumerate(d.partner, 1)
                for c, pc in enumerate(row, 1)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Domino units, neighbour units (cells of different dominoes) and the clued rows and columns."""
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        out: list[Unit] = []
        for a, b in d.dominoes():
            out.append(Unit(f"the domino ({a[0]},{a[1]})-({b[0]},{b[1]})", (a, b), _DominoUnit(),
                            (Claim("domino", (a, b)),)))
        for r in range(1, h + 1):
            for c in range(1, w + 1):
                if d.partner[r - 1][c - 1] == (r, c):
                    continue
                for nb in ((r + 1, c), (r, c + 1)):
                    if nb[0] <= h and nb[1] <= w and d.partner[r - 1][c - 1] != nb and \
                            d.partner[nb[0] - 1][nb[1] - 1] != nb:
                        out.append(Unit(f"the neighbours ({r},{c}) and ({nb[0]},{nb[1]})", ((r, c), nb),
                                        _NeighbourUnit()))
        for r in range(1, h + 1):
            pl, mi = d.row_plus[r - 1], d.row_minus[r - 1]
            if pl is not None or mi is not None:
                prem = tuple(Claim("row_count", ((r, 1),), (s, v)) for s, v in (("+", pl), ("-", mi)) if v is not None)
                out.append(Unit(f"row {r}", tuple((r, c) for c in range(1, w + 1)), _LineUnit(pl, mi), prem))
        for c in range(1, w + 1):
            pl, mi = d.col_plus[c - 1], d.col_minus[c - 1]
            if pl is not None or mi is not None:
                prem = tuple(Claim("col_count", ((1, c),), (s, v)) for s, v in (("+", pl), ("-", mi)) if v is not None)
                out.append(Unit(f"column {c}", tuple((r, c) for r in range(1, h + 1)), _LineUnit(pl, mi), prem))
        return tuple(out)


PUZZLE = register_puzzle(Magnets())
