"""Towers (Skyscrapers): a Latin square of tower heights seen from the four sides.

Rules (Simon Tatham's Portable Puzzle Collection, ``towers.c``): fill a ``w x w`` grid with heights ``1..w`` so that
every row and every column holds each height exactly once; a clue outside the grid gives how many towers are
visible from that side looking along the row or column (a tower hides every shorter tower behind it); given
heights inside the grid are fixed.

Game IDs
--------
``params`` is ``<w>`` (short) or ``<w>d<diff>`` (full), ``diff`` one of ``e`` (Easy), ``h`` (Hard), ``x`` (Extreme),
``u`` (Unreasonable); ``3 <= w <= 9``. ``desc`` is ``4w`` clues separated by ``/`` (empty = no clue), in the order
top (columns left to right), bottom (columns left to right), left (rows top to bottom), right (rows top to bottom),
then optionally ``,`` and the given heights in row-major order: a digit is a given, ``a``..``z`` a run of 1..26
empty cells, ``_`` separates two adjacent digits (``towers.c`` ``validate_desc`` / ``new_game_desc``). The
collection's ``SOLVE`` move is ``S`` followed by the ``w*w`` heights row-major (``solve_game``).

Answer and claims
-----------------
The answer is the full grid, one row per line, heights separated by spaces (``ANSWER_SYMBOLS``). A solution is a
tuple of ``w`` tuples of ``w`` ints. Claim kinds:

* ``"value"``: ``Claim("value", ((r, c),), h)`` "(r,c) is h" (negated: "(r,c) is not h");
* ``"visible"``: a clue, ``Claim("visible", (anchor,), (side, n))`` "n towers are visible from the top of column
  c", ``side`` in ``top/bottom/left/right`` and ``anchor`` the 1-based cell next to the clue. Static (a given).

C* (paper A §C; the definition is a reasonshape choice following paper A's solo example) is one value claim per
cell that is not given: ``{(r,c) is solution[r][c] : (r,c) empty in the puzzle}``. Given claims are the given
heights (value claims) and the clues (visible claims).

Constraint view
---------------
Variables are all cells (1-based), domain ``1..w``. Units: ``row r`` and ``column c`` (``alldiff``); one unit per
clue, ``"the clue n above column c"`` / ``below column c`` / ``left of row r`` / ``right of row r``, whose
variables are the line's cells in viewing order and which allows exactly the assignments with ``n`` visible
towers (premise: the clue's ``visible`` claim); and ``"the given v at (r,c)"`` per given height (premise: the
given's value claim), as solo does. Towers has no global rule: the units define the solutions exactly.

Levels
------
=======  ======  ==========================================================
level    params  native generator
=======  ======  ==========================================================
trivial  3de     all 12 clues, givens only where needed for uniqueness
easy     4de     all 16 clues, givens only where needed
normal   5dh     clues and givens removed in random order while unique
hard     6dh     clues and givens removed in random order while unique
=======  ======  ==========================================================

The native generator grades difficulty by grid size and clue density (``e``: every clue kept; ``h``, ``x``, ``u``:
clues removed while the solution stays unique), never by rule changes and without the collection's human-technique
grading; the ``sgt`` backend gives the collection's graded puzzles. Source: reasonshape choice after paper A §A.
"""

from __future__ import annotations

import numbers
import random
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from reasonshape.envs._solver import enumerate_solutions, new_model, new_solver
from reasonshape.envs.answer import digits_symbols, format_grid, read_grid_answer
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
    digits_end,
    mask_long_numbers,
    read_int,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["TowersParams", "TowersData", "Towers", "PUZZLE", "visible_count"]

_DIFFS = "ehxu"
SIDES = ("top", "bottom", "left", "right")
_SIDE_PHRASE = {"top": "above column", "bottom": "below column", "left": "left of row", "right": "right of row"}


@dataclass(frozen=True)
class TowersParams:
    """Towers params: grid size ``w`` (3..9) and the collection's difficulty letter (``e``, ``h``, ``x``, ``u``)."""

    w: int
    diff: str = "e"


@dataclass(frozen=True)
class TowersData:
    """A parsed towers desc.

    ``clues``: ``4w`` ints (0 = no clue) in the collection's order top, bottom, left, right (each left to right or
    top to bottom). ``givens``: ``w`` rows of ``w`` ints (0 = empty cell).
    """

    clues: tuple[int, ...]
    givens: tuple[tuple[int, ...], ...]


def visible_count(heights: Sequence[int]) -> int:
    """Number of towers visible looking along ``heights`` (first element nearest): the count of prefix maxima.

    >>> visible_count([2, 1, 3, 4])
    3
    """
    best = n = 0
    for h in heights:
        if h > best:
            best, n = h, n + 1
    return n


def _line_cells(w: int, index: int) -> list[tuple[int, int]]:
    """0-based (row, col) cells of clue ``index`` (0..4w-1) in viewing order (``towers.c`` STARTSTEP)."""
    side, k = divmod(index, w)
    if side == 0:
        return [(i, k) for i in range(w)]
    if side == 1:
        return [(w - 1 - i, k) for i in range(w)]
    if side == 2:
        return [(k, i) for i in range(w)]
    return [(k, w - 1 - i) for i in range(w)]


def _clue_name(w: int, index: int, n: int) -> str:
    side, k = divmod(index, w)
    return f"the clue {n} {_SIDE_PHRASE[SIDES[side]]} {k + 1}"


def _clue_index(w: int, side: str, anchor: tuple[int, int]) -> int:
    r, c = anchor
    s = SIDES.index(side)
    if s == 0 and r == 1:
        return c - 1
    if s == 1 and r == w:
        return w + c - 1
    if s == 2 and c == 1:
        return 2 * w + r - 1
    if s == 3 and c == w:
        return 3 * w + r - 1
    raise ClaimError(f"towers: anchor {anchor} is not the cell next to the {side} clue of its line")


def _anchor(w: int, index: int) -> tuple[int, int]:
    r, c = _line_cells(w, index)[0]
    return (r + 1, c + 1)


def _encode_desc(w: int, clues: Sequence[int], givens: Sequence[Sequence[int]]) -> str:
    """The desc exactly as ``towers.c`` ``new_game_desc`` writes it."""
    out = ["/".join(str(c) if c else "" for c in clues)]
    flat = [v for row in givens for v in row]
    if any(flat):
        out.append(",")
        run = 0
        for i in range(len(flat) + 1):
            n = flat[i] if i < len(flat) else -1
            if n == 0:
                run += 1
                continue
            if run:
                while run > 0:
                    this = min(run, 26)
                    out.append(chr(ord("a") + this - 1))
                    run -= this
            elif i > 0 and n > 0:
                out.append("_")
            if n > 0:
                out.append(str(n))
            run = 0
    return "".join(out)


def _add_visibility(model: cp_model.CpModel, line: Sequence[Any], w: int) -> list[Any]:
    """Visibility literals of ``line`` (IntVars in viewing order): ``b_j`` iff cell j equals the prefix maximum
    (heights are distinct in a line, so this is exactly "taller than every tower before it")."""
    lits = [model.NewConstant(1)]
    prev = line[0]
    for j in range(1, len(line)):
        m = model.NewIntVar(1, w, "")
        model.AddMaxEquality(m, [prev, line[j]])
        b = model.NewBoolVar("")
        model.Add(line[j] == m).OnlyEnforceIf(b)
        model.Add(line[j] != m).OnlyEnforceIf(b.Not())
        lits.append(b)
        prev = m
    return lits


def _random_latin(w: int, rng: random.Random) -> list[list[int]]:
    """A random Latin square by randomised backtracking (cell by cell, random value order).

    Own code: a uniform Latin-square sampler (Jacobson-Matthews) is not in the allowed libraries and
    backtracking is instant for ``w <= 9``; reasonshape choice.
    """
    grid = [[0] * w for _ in range(w)]
    rows = [set() for _ in range(w)]
    cols = [set() for _ in range(w)]
    cells = [(r, c) for r in range(w) for c in range(w)]
    full = list(range(1, w + 1))

    def fill(i: int) -> bool:
        if i == len(cells):
            return True
        r, c = cells[i]
        vals = [v for v in full if v not in rows[r] and v not in cols[c]]
        rng.shuffle(vals)
        for v in vals:
            grid[r][c] = v
            rows[r].add(v)
            cols[c].add(v)
            if fill(i + 1):
                return True
            rows[r].discard(v)
            cols[c].discard(v)
        grid[r][c] = 0
        return False

    fill(0)
    return grid


class _UniquenessModel:
    """One CP-SAT model per candidate solution, reused for every uniqueness test of the generator: each clue and
    each given is switched on by an assumption literal, and a "differs from the solution somewhere" constraint
    makes uniqueness one infeasibility proof (reasonshape choice)."""

    def __init__(self, w: int, solution: list[list[int]], clues: list[int]):
        m = cp_model.CpModel()
        x = [[m.NewIntVar(1, w, "") for _ in range(w)] for _ in range(w)]
        for i in range(w):
            m.AddAllDifferent(x[i])
            m.AddAllDifferent([x[r][i] for r in range(w)])
        self.clue_lits = []
        for idx in range(4 * w):
            line = [x[r][c] for r, c in _line_cells(w, idx)]
            a = m.NewBoolVar("")
            m.Add(sum(_add_visibility(m, line, w)) == clues[idx]).OnlyEnforceIf(a)
            self.clue_lits.append(a)
        self.given_lits = []
        diffs = []
        for r in range(w):
            for c in range(w):
                g = m.NewBoolVar("")
                m.Add(x[r][c] == solution[r][c]).OnlyEnforceIf(g)
                self.given_lits.append(g)
                d = m.NewBoolVar("")
                m.Add(x[r][c] != solution[r][c]).OnlyEnforceIf(d)
                m.Add(x[r][c] == solution[r][c]).OnlyEnforceIf(d.Not())
                diffs.append(d)
        m.AddBoolOr(diffs)
        self.model, self.x, self.w = m, x, w
        self.solver = new_solver(20.0)
        # Presolve costs more than the search on these tiny models (measured: 5x slower generation with it).
        self.solver.parameters.cp_model_presolve = False

    def other_solution(self, clue_on: Sequence[bool], given_on: Sequence[bool]) -> list[list[int]] | None:
        """A second solution under the active clues and givens, or ``None`` if the solution is unique."""
        m = self.model
        m.ClearAssumptions()
        m.AddAssumptions([lit for lit, on in zip(self.clue_lits, clue_on, strict=True) if on]
                         + [lit for lit, on in zip(self.given_lits, given_on, strict=True) if on])
        status = self.solver.Solve(m)
        if status == cp_model.INFEASIBLE:
            return None
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise GenerationError("towers: uniqueness check timed out")
        return [[int(self.solver.Value(v)) for v in row] for row in self.x]


class Towers(Puzzle):
    """Towers (Skyscrapers), see the module docstring for rules, formats, claims, C* and levels."""

    name = "towers"
    LEVELS = {"trivial": "3de", "easy": "4de", "normal": "5dh", "hard": "6dh"}
    ANSWER_SYMBOLS = {str(h): f"a tower of height {h} (a w x w grid uses the heights 1..w)" for h in range(1, 10)}
    CLAIM_KINDS = ("value", "visible")
    VALUE_WORDS: dict[str, Hashable] = {}

    # ------------------------------------------------------------------ params
    def parse_params(self, text: str) -> TowersParams:
        """Parse ``"<w>"`` or ``"<w>d<diff>"`` (``towers.c`` ``decode_params`` + ``validate_params``).

        Raises
        ------
        GameIdError
            Missing or out-of-range size (3..9), unknown difficulty letter, or trailing characters.
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '4de'")
        w, i = read_int(text, 0, "the grid size (a number 3..9)")
        if not 3 <= w <= 9:
            raise GameIdError(text, 0, f"grid size between 3 and 9, got {w}")
        diff = "e"
        if i < len(text):
            if text[i] != "d":
                raise GameIdError(text, i, "'d' and a difficulty letter, or the end of the params")
            if i + 1 >= len(text) or text[i + 1] not in _DIFFS:
                raise GameIdError(text, i + 1, "a difficulty letter: e (easy), h (hard), x (extreme), "
                                               "u (unreasonable)")
            diff = text[i + 1]
            if i + 2 != len(text):
                raise GameIdError(text, i + 2, "the end of the params")
        return TowersParams(w, diff)

    def format_params(self, params: TowersParams, full: bool = True) -> str:
        """``"4de"`` (full) or ``"4"`` (short), as ``towers.c`` ``encode_params``."""
        return f"{params.w}d{params.diff}" if full else f"{params.w}"

    # ------------------------------------------------------------------ desc
    def parse_desc(self, params: TowersParams, desc: str) -> Instance:
        """Parse a towers desc (grammar in the module docstring), validating as ``towers.c`` ``validate_desc``.

        Raises
        ------
        GameIdError
            Naming the 0-based position in ``desc``: too few/many clues, a clue outside ``1..w``, a bad character in
            the givens, or givens that do not fill the grid exactly.
        """
        w = params.w
        p, n = 0, len(desc)
        clues = []
        for i in range(4 * w):
            if i > 0:
                if p >= n:
                    raise GameIdError(desc, p, f"'/' and clue {i + 1} of {4 * w} (too few clues for size {w})")
                if desc[p] != "/":
                    raise GameIdError(desc, p, "'/' between clues")
                p += 1
            q = digits_end(desc, p)
            if q > p:
                v = int(desc[p:q])
                if not 1 <= v <= w:
                    raise GameIdError(desc, p, f"a clue between 1 and {w}, got {v}")
                clues.append(v)
            else:
                clues.append(0)
            p = q
        if p < n and desc[p] == "/":
            raise GameIdError(desc, p, f"',' or the end of the desc (too many clues: {4 * w} expected)")
        givens = [0] * (w * w)
        if p < n:
            if desc[p] != ",":
                raise GameIdError(desc, p, "',' before the given heights, or the end of the desc")
            p += 1
            pos = 0
            while p < n:
                ch = desc[p]
                if "a" <= ch <= "z":
                    pos += ord(ch) - ord("a") + 1
                    p += 1
                elif ch == "_":
                    p += 1
                elif "1" <= ch <= "9":
                    q = digits_end(desc, p)
                    v = int(desc[p:q])
                    if not 1 <= v <= w:
                        raise GameIdError(desc, p, f"a given height between 1 and {w}, got {v}")
                    if pos >= w * w:
                        raise GameIdError(desc, p, f"no more data: the {w * w} cells are already filled")
                    givens[pos] = v
                    pos += 1
                    p = q
                else:
                    raise GameIdError(desc, p, "a letter a-z (run of empty cells), '_' or a digit 1-9")
                if pos > w * w:
                    raise GameIdError(desc, p - 1, f"no more data: the {w * w} cells are already filled")
            if pos < w * w:
                raise GameIdError(desc, p, f"more grid data ({pos} of {w * w} cells given)")
        data = TowersData(tuple(clues), tuple(tuple(givens[r * w:(r + 1) * w]) for r in range(w)))
        return Instance(self.name, params, desc, data)

    # ------------------------------------------------------------------ generation
    def _generate(self, params: TowersParams, rng: random.Random) -> Instance:
        """Random Latin square, all ``4w`` clues; givens added where a second solution differs until unique, then
        (difficulty ``h``/``x``/``u``) clues and givens removed in random order while the solution stays unique."""
        w = params.w
        for _ in range(50):
            sol = _random_latin(w, rng)
            clues = [visible_count([sol[r][c] for r, c in _line_cells(w, i)]) for i in range(4 * w)]
            um = _UniquenessModel(w, sol, clues)
            clue_on = [True] * (4 * w)
            given_on = [False] * (w * w)
            other = um.other_solution(clue_on, given_on)
            while other is not None:
                diff_cells = [r * w + c for r in range(w) for c in range(w) if other[r][c] != sol[r][c]]
                given_on[rng.choice(diff_cells)] = True
                other = um.other_solution(clue_on, given_on)
            order = [("g", i) for i in range(w * w) if given_on[i]]
            if params.diff != "e":
                order += [("c", i) for i in range(4 * w)]
            rng.shuffle(order)
            for kind, i in order:
                flags = given_on if kind == "g" else clue_on
                flags[i] = False
                if um.other_solution(clue_on, given_on) is not None:
                    flags[i] = True
            final_clues = [v if on else 0 for v, on in zip(clues, clue_on, strict=True)]
            givens = [[sol[r][c] if given_on[r * w + c] else 0 for c in range(w)] for r in range(w)]
            return self.parse_desc(params, _encode_desc(w, final_clues, givens))
        raise GenerationError(f"towers: no unique instance for {self.format_params(params)}")

    # ------------------------------------------------------------------ text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid with its clues (``.`` = empty cell, ``-`` = no clue), and the answer format."""
        w, d = instance.params.w, instance.data
        top, bottom = d.clues[:w], d.clues[w:2 * w]
        left, right = d.clues[2 * w:3 * w], d.clues[3 * w:]

        def cl(v):
            return str(v) if v else "-"

        lines = ["     " + " ".join(str(c + 1) for c in range(w)) + "      <- column numbers",
                 "     " + " ".join(cl(v) for v in top) + "      <- clues seen from the top",
                 "    +" + "-" * (2 * w - 1) + "+"]
        for r in range(w):
            cells = " ".join(str(v) if v else "." for v in d.givens[r])
            lines.append(f"{r + 1} {cl(left[r])} |{cells}| {cl(right[r])}")
        lines.append("    +" + "-" * (2 * w - 1) + "+")
        lines.append("     " + " ".join(cl(v) for v in bottom) + "      <- clues seen from the bottom")
        clue_list = []
        for idx, v in enumerate(d.clues):
            if v:
                side, k = divmod(idx, w)
                clue_list.append(f"- {v} visible from the {SIDES[side]} of {'column' if side < 2 else 'row'} {k + 1}")
        givens = [f"({r + 1},{c + 1}) = {v}" for r in range(w) for c in range(w) if (v := d.givens[r][c])]
        example = format_grid([list(range(1, w + 1)) for _ in range(w)])
        return "\n".join([
            f"Solve this Towers puzzle (also called Skyscrapers) on a {w}x{w} grid.",
            "",
            "Rules:",
            f"1. Put a tower in every cell, with a height from 1 to {w}.",
            f"2. Every row and every column contains each height 1 to {w} exactly once.",
            "3. A clue outside the grid says how many towers you can see from that side, looking along its row or "
            "column: a tower is visible only if it is taller than every tower in front of it.",
            "4. Heights already written in the grid are given and must stay.",
            "",
            "Coordinates are (row, column), 1-based: rows are numbered from the top (1) to the bottom "
            f"({w}), columns from the left (1) to the right ({w}).",
            "",
            "The grid: '.' is an empty cell, '-' means no clue on that side. Left of each row: its row number and "
            "the clue seen from the left; right of it: the clue seen from the right.",
            *lines,
            "",
            "Clues:",
            *(clue_list or ["- (none)"]),
            "Given heights: " + (", ".join(givens) if givens else "none"),
            "",
            f"Answer format: the complete grid, {w} lines (row 1 first), each with the {w} heights of that row "
            "separated by spaces. The layout looks like this (the numbers here only show the format):",
            example,
            "",
            "Put your final answer inside <answer>...</answer>, with nothing but the grid in the block.",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``w x w`` height grid from the last ``<answer>`` block (or the last grid-shaped block).

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or a symbol other than ``1..w``.
        """
        w = instance.params.w
        grid, source, notes = read_grid_answer(text, w, w, digits_symbols(w))
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """Heights row by row, separated by spaces (the inverse of :meth:`parse_answer`)."""
        return format_grid(solution)

    # ------------------------------------------------------------------ rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check a grid by the rules: shape and range, givens kept, no repeat in a row or column, every clue's
        visible count. Rule ids: ``shape``, ``bad_value``, ``given_changed``, ``row_repeat``, ``column_repeat``,
        ``clue``. Runs in O(w^2)."""
        w, d = instance.params.w, instance.data
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        try:
            grid = [list(row) for row in grid]
        except TypeError:
            return CheckResult(False, (Violation("shape", f"expected {w} rows of {w} heights"),))
        if len(grid) != w or any(len(row) != w for row in grid):
            return CheckResult(False, (Violation("shape", f"expected {w} rows of {w} heights"),))
        out = []
        for r in range(w):
            for c in range(w):
                v = grid[r][c]
                if not isinstance(v, numbers.Integral) or isinstance(v, bool) or not 1 <= v <= w:
                    out.append(Violation("bad_value", f"({r + 1},{c + 1}) holds {v!r}, not a height 1..{w}",
                                         ((r + 1, c + 1),)))
                elif d.givens[r][c] and v != d.givens[r][c]:
                    out.append(Violation("given_changed", f"({r + 1},{c + 1}) is given as {d.givens[r][c]}, "
                                                          f"the answer has {v}", ((r + 1, c + 1),)))
        if out and any(v.rule == "bad_value" for v in out):
            return CheckResult(False, tuple(out))
        for r in range(w):
            seen: dict[int, int] = {}
            for c in range(w):
                v = grid[r][c]
                if v in seen:
                    out.append(Violation("row_repeat", f"row {r + 1} has {v} twice",
                                         ((r + 1, seen[v] + 1), (r + 1, c + 1))))
                seen[v] = c
        for c in range(w):
            seen = {}
            for r in range(w):
                v = grid[r][c]
                if v in seen:
                    out.append(Violation("column_repeat", f"column {c + 1} has {v} twice",
                                         ((seen[v] + 1, c + 1), (r + 1, c + 1))))
                seen[v] = r
        for idx, clue in enumerate(d.clues):
            if clue:
                cells = _line_cells(w, idx)
                n = visible_count([grid[r][c] for r, c in cells])
                if n != clue:
                    out.append(Violation("clue", f"{_clue_name(w, idx, clue)}: {n} towers are visible",
                                         tuple((r + 1, c + 1) for r, c in cells)))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        w, d = instance.params.w, instance.data
        m = new_model()
        x = [[m.NewIntVar(1, w, f"h{r}_{c}") for c in range(w)] for r in range(w)]
        for i in range(w):
            m.AddAllDifferent(x[i])
            m.AddAllDifferent([x[r][i] for r in range(w)])
        for r in range(w):
            for c in range(w):
                if d.givens[r][c]:
                    m.Add(x[r][c] == d.givens[r][c])
        for idx, clue in enumerate(d.clues):
            if clue:
                line = [x[r][c] for r, c in _line_cells(w, idx)]
                m.Add(sum(_add_visibility(m, line, w)) == clue)
        flat = [v for row in x for v in row]
        sols, exhausted = enumerate_solutions(m, flat, max_solutions)
        return SolveResult(tuple(tuple(tuple(s[r * w:(r + 1) * w]) for r in range(w)) for s in sols), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[int, ...], ...]:
        """``S`` + ``w*w`` heights row-major (``towers.c`` ``solve_game``) -> solution grid.

        Raises
        ------
        ConfigError
            The move is not ``S`` followed by exactly ``w*w`` digits ``1..w``.
        """
        w = instance.params.w
        if not (isinstance(move, str) and len(move) == w * w + 1 and move[0] == "S"
                and all("1" <= ch <= str(w) for ch in move[1:])):
            raise bad_solve_move(self.name, move, f"it must be 'S' and {w * w} digits 1-{w}")
        return tuple(tuple(int(ch) for ch in move[1 + r * w:1 + (r + 1) * w]) for r in range(w))

    # ------------------------------------------------------------------ claims
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        w = instance.params.w
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"towers: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        if len(claim.cells) != 1:
            raise ClaimError(f"towers: a {claim.kind} claim names exactly one cell, got {claim.cells}")
        self._check_cell(instance, claim.cells[0], w, w)
        if claim.kind == "value":
            self._claim_number(claim, 1, w, "a height")
        else:
            v = claim.value
            if not (isinstance(v, tuple) and len(v) == 2 and v[0] in SIDES):
                raise ClaimError(f"towers: visible claims have value (side, count), got {v!r}")
            _clue_index(w, v[0], claim.cells[0])
            # a line of w towers shows at least the first and at most all w
            self._claim_number(claim, 1, w, "(side, count) with count", item=1)

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value claims: the cell's height; visible claims: the number of towers seen from that side. Raises
        :class:`ClaimError` for a claim outside the vocabulary (unknown kind, not one cell, a cell off the grid, a
        height that is not an integer 1..w, a visible value that is not ``(side, count)`` at that side's clue with
        ``count`` an integer 1..w), for either polarity."""
        self._validate_claim(instance, claim)
        w = instance.params.w
        if claim.kind == "value":
            r, c = claim.cells[0]
            truth = solution[r - 1][c - 1] == claim.value
        else:
            side, n = claim.value
            idx = _clue_index(w, side, claim.cells[0])
            truth = visible_count([solution[r][c] for r, c in _line_cells(w, idx)]) == n
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per non-given cell (module docstring)."""
        sol = self.unique_solution(instance) if solution is None else solution
        w, g = instance.params.w, instance.data.givens
        return frozenset(Claim("value", ((r + 1, c + 1),), sol[r][c])
                         for r in range(w) for c in range(w) if not g[r][c])

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """The given heights (value claims, row-major) and the clues (visible claims, collection order)."""
        w, d = instance.params.w, instance.data
        out = [Claim("value", ((r + 1, c + 1),), d.givens[r][c]) for r in range(w) for c in range(w)
               if d.givens[r][c]]
        out += [self._clue_claim(w, idx, v) for idx, v in enumerate(d.clues) if v]
        return tuple(out)

    @staticmethod
    def _clue_claim(w: int, idx: int, n: int) -> Claim:
        return Claim("visible", (_anchor(w, idx),), (SIDES[idx // w], n))

    def claim_text(self, claim: Claim) -> str:
        """``"(3,4) is 2"``, ``"(3,4) is not 2"``, ``"3 towers are visible from the top of column 2"``."""
        if claim.kind != "visible":
            return super().claim_text(claim)
        side, n = claim.value
        r, c = claim.cells[0]
        line = f"column {c}" if side in ("top", "bottom") else f"row {r}"
        noun = "tower is" if n == 1 else "towers are"
        verb = "" if claim.positive else "not "
        return f"{n} {noun} {verb}visible from the {side} of {line}"

    # (?<!\d): a match starts only where a digit run starts; without it a long run of digits made finditer try
    # every position of the run and scan to its end (quadratic: 40k digits took 8 s)
    _VIS_RE = re.compile(r"(?<!\d)(\d+) towers? (?:is|are) (not )?visible from the (top|bottom|left|right) of "
                         r"(row|column) (\d+)", re.IGNORECASE)
    _CLUE_RE = re.compile(r"the clue (\d+) (above|below) column (\d+)|the clue (\d+) (left|right) of row (\d+)",
                          re.IGNORECASE)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read visible claims: ``"n tower(s) is/are [not] visible from the <side> of <row|column> k"`` (as
        :meth:`claim_text` writes) and clue names ``"the clue n above column k"`` (as unit names say). Linear
        time (regexes without nested quantifiers); mentions that do not fit the grid are skipped."""
        text = mask_long_numbers(text)
        w = instance.params.w
        out = []
        for m in self._VIS_RE.finditer(text):
            n, neg, side, kind, k = int(m[1]), bool(m[2]), m[3].lower(), m[4].lower(), int(m[5])
            if (kind == "column") != (side in ("top", "bottom")) or not 1 <= k <= w:
                continue
            idx = SIDES.index(side) * w + k - 1
            claim = self._clue_claim(w, idx, n)
            out.append((claim if not neg else claim.negated(), m.start(), m.end()))
        for m in self._CLUE_RE.finditer(text):
            if m[1]:
                n, side, k = int(m[1]), "top" if m[2].lower() == "above" else "bottom", int(m[3])
            else:
                n, side, k = int(m[4]), m[5].lower(), int(m[6])
            if not 1 <= k <= w:
                continue
            out.append((self._clue_claim(w, SIDES.index(side) * w + k - 1, n), m.start(), m.end()))
        out.sort(key=lambda t: t[1])
        return out

    # ------------------------------------------------------------------ constraint view
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every cell (1-based) -> ``(1, ..., w)`` (givens are units, see :meth:`units`)."""
        w = instance.params.w
        full = tuple(range(1, w + 1))
        return {(r + 1, c + 1): full for r in range(w) for c in range(w)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Rows and columns (``alldiff``), one unit per clue (visible count in viewing order), one per given."""
        w, d = instance.params.w, instance.data
        units = []
        for r in range(w):
            units.append(Unit(f"row {r + 1}", tuple((r + 1, c + 1) for c in range(w)), _all_distinct, (), "alldiff"))
        for c in range(w):
            units.append(Unit(f"column {c + 1}", tuple((r + 1, c + 1) for r in range(w)), _all_distinct, (),
                              "alldiff"))
        for idx, clue in enumerate(d.clues):
            if clue:
                cells = tuple((r + 1, c + 1) for r, c in _line_cells(w, idx))
                units.append(Unit(_clue_name(w, idx, clue), cells, _VisibleIs(clue),
                                  (self._clue_claim(w, idx, clue),)))
        for r in range(w):
            for c in range(w):
                if v := d.givens[r][c]:
                    units.append(Unit(f"the given {v} at ({r + 1},{c + 1})", ((r + 1, c + 1),), _Is(v),
                                      (Claim("value", ((r + 1, c + 1),), v),)))
        return tuple(units)


def _all_distinct(values: tuple) -> bool:
    return len(set(values)) == len(values)


class _Is:
    """``allowed`` of a given's unit: the given height."""

    def __init__(self, v: int):
        self.v = v

    def __call__(self, values: tuple) -> bool:
        return values[0] == self.v


class _VisibleIs:
    """``allowed`` of a clue unit: exactly ``n`` towers visible (a class so units pickle)."""

    def __init__(self, n: int):
        self.n = n

    def __call__(self, values: tuple) -> bool:
        return visible_count(values) == self.n

PUZZLE = register_puzzle(Towers())
