"""Singles (Hitori) from Simon Tatham's Portable Puzzle Collection.

Rules
-----
A ``W x H`` grid of numbers (1..max(W, H)). Black out some cells so that

* no number appears twice among the white (not blacked-out) cells of any row or column;
* no two black cells are orthogonally adjacent;
* the white cells form one orthogonally connected region (a global rule).

Source: the collection's ``singles.c`` (rules, params, desc and solve-move grammars).

Game IDs
--------
Params ``<W>x<H>d<c>`` with difficulty ``c`` in ``e`` (easy), ``k`` (tricky); the short form ``<W>x<H>`` (or ``<W>``)
means easy, the collection's default. Desc: exactly ``W*H`` characters, row-major, one per cell: ``1``-``9``, then
``a``-``z`` for 10-35 and ``A``-``Z`` for 36-61; every number must lie in ``1..max(W, H)``. The collection's
``SOLVE`` move is ``S;`` followed by ``B<x>,<y>;`` (black) / ``C<x>,<y>;`` (circled, i.e. white) / ``E<x>,<y>;``
(erase) items with 0-based column ``x`` and row ``y``.

Answer format
-------------
One grid row per line, ``W`` symbols each: ``B`` for a blacked-out cell, ``W`` for a white cell.

Claims and C*
-------------
Kinds: ``"value"`` (``Claim("value", ((r, c),), "B")`` "(r,c) is black", ``"W"`` "(r,c) is white") and ``"number"``
(a static fact: ``Claim("number", ((r, c),), 4)``, "(r,c) shows 4"). Given claims: one ``number`` claim per cell.
C* (reasonshape choice, as tents' "one claim per tent"): one positive ``value`` claim ``"B"`` per black cell.

Constraint view
---------------
Variables: the 1-based cells, domain ``("B", "W")``. Units (exact): ``"row r"`` / ``"column c"`` (no number twice
among white cells; premises: the number claims of that line, only lines with a repeated number get a unit) and
``"cells (r,c) and (r',c')"`` for each pair of orthogonal neighbours (not both black). Global rule outside the
units: the white cells are connected (enforced by lazy cuts in the solver and checked by :meth:`Singles.check`).

Levels
------
=========  ==========  ================================================================
level      params      native generator
=========  ==========  ================================================================
trivial    ``3x3de``   3x3, finished by the collection's easy techniques
easy       ``4x4de``   4x4, same
normal     ``5x5dk``   5x5, needs the tricky techniques (easy ones do not finish it)
hard       ``6x6dk``   6x6, same as normal
=========  ==========  ================================================================

The native generator follows the collection's scheme and grades: a random Latin rectangle (order ``max(W, H)``),
random black cells (never two adjacent, whites kept connected) until no more fit, then under each black cell a
number that a white cell of its row or column already shows (so the cell must be black). The instance is kept when
the collection's techniques for its difficulty letter finish it (:func:`~reasonshape.envs._singles_grade.grade_solve`,
which proves uniqueness; CP-SAT confirms it in :meth:`Puzzle.generate`) and, for ``k``, the easy techniques do not,
even after the "sneaky" first step. Difficulty comes from grid size and the collection's own grades (our techniques
reproduce the grade of every dev instance).
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from reasonshape.envs._singles_grade import grade_solve
from reasonshape.envs._solver import lazy_enumerate, new_model
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

__all__ = ["SinglesParams", "SinglesData", "Singles", "PUZZLE"]

_DIFFS = ("e", "k")
_NUMBER_RE = re.compile(r"\((\d+),\s*(\d+)\) (shows|does not show) (\d+)")


@dataclass(frozen=True)
class SinglesParams:
    """Singles params: width ``w``, height ``h`` (2..62) and difficulty letter ``diff`` (``e`` or ``k``)."""

    w: int
    h: int
    diff: str = "e"


@dataclass(frozen=True)
class SinglesData:
    """Parsed desc: ``nums[r][c]`` is the number in the cell (0-based indices, rows top to bottom)."""

    nums: tuple[tuple[int, ...], ...]


def _n2c(n: int) -> str:
    return str(n) if n < 10 else chr(ord("a") + n - 10) if n < 36 else chr(ord("A") + n - 36)


def _c2n(ch: str) -> int:
    if ch.isdigit() and ch.isascii():
        return int(ch)
    if "a" <= ch <= "z":
        return ord(ch) - ord("a") + 10
    if "A" <= ch <= "Z":
        return ord(ch) - ord("A") + 36
    return -1


class Singles(Puzzle):
    """Singles / Hitori: the :class:`~reasonshape.envs.base.Puzzle` protocol for the collection's ``singles``.

    Instances hold :class:`SinglesParams` and :class:`SinglesData`; solutions are ``H`` tuples of ``W`` symbols
    ``"B"`` (blacked out) / ``"W"`` (white), rows top to bottom. See the module docstring for the rules, the game-ID
    grammar, the claim vocabulary, C* and the levels.

    Notes
    -----
    The solver is a CP-SAT model of the local rules (a clause per repeated pair in a line, a clause per adjacent
    pair) plus lazy connectivity cuts: when a candidate's white cells fall apart, for a component ``C`` and a white
    cell ``t`` outside it, "``s`` in ``C`` and ``t`` white imply some black neighbour of ``C`` is white" is added and
    the model is solved again. The cut is valid for every solution, so connectivity is enforced exactly.

    References
    ----------
    .. [1] S. Tatham et al., Simon Tatham's Portable Puzzle Collection, ``singles.c`` (MIT licence).
    .. [2] Paper A (METHOD.md §A-C): the benchmark's 21 puzzles, claims and C*.
    """

    name = "singles"
    LEVELS = {"trivial": "3x3de", "easy": "4x4de", "normal": "5x5dk", "hard": "6x6dk"}
    ANSWER_SYMBOLS = {"B": "a blacked-out (shaded) cell", "W": "a white (kept) cell"}
    CLAIM_KINDS = ("value", "number")
    VALUE_WORDS = {"black": "B", "shaded": "B", "blacked out": "B", "white": "W", "unshaded": "W", "circled": "W"}

    # ----------------------------------------------------------------- params
    def parse_params(self, text: str) -> SinglesParams:
        """Parse ``"5x5dk"`` or the short ``"5x5"`` / ``"5"`` (square, easy).

        Raises
        ------
        GameIdError
            Naming the position and what was expected (also a width or height outside 2..62, an unknown
            difficulty).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string like '5x5dk'")
        w, h, i = parse_wxh(text, max_side=62, min_side=2)
        diff, i = read_difficulty(text, i, _DIFFS, "e", "a difficulty letter e or k after 'd'")
        if i != len(text):
            raise GameIdError(text, i, "'x<height>' or 'd<e|k>' (or the end of the params)")
        return SinglesParams(w, h, diff)

    def format_params(self, params: SinglesParams, full: bool = True) -> str:
        """``"<w>x<h>d<c>"`` (full) or ``"<w>x<h>"`` (short), as the collection's ``encode_params``."""
        return f"{params.w}x{params.h}" + (f"d{params.diff}" if full else "")

    # ----------------------------------------------------------------- desc
    def parse_desc(self, params: SinglesParams, desc: str) -> Instance:
        """Parse ``W*H`` number characters (see the module docstring), as the collection's ``unpick_desc``.

        Raises
        ------
        GameIdError
            Wrong length, or a character that is not a number in ``1..max(W, H)`` (with its position).
        """
        w, h = params.w, params.h
        o = max(w, h)
        for i, ch in enumerate(desc[:w * h]):
            n = _c2n(ch)
            if not 1 <= n <= o:
                raise GameIdError(desc, i, f"a number 1..{o} written as {_n2c(1)}..{_n2c(o)}")
        if len(desc) != w * h:
            raise GameIdError(desc, min(len(desc), w * h), f"exactly {w * h} number characters, got {len(desc)}")
        nums = tuple(tuple(_c2n(desc[r * w + c]) for c in range(w)) for r in range(h))
        return Instance(self.name, params, desc, SinglesData(nums))

    @staticmethod
    def encode_desc(nums) -> str:
        """The collection's desc for a grid of numbers (``generate_desc``)."""
        return "".join(_n2c(n) for row in nums for n in row)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: SinglesParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        level = _DIFFS.index(params.diff)
        for _ in range(400):
            nums = _latin_rectangle(w, h, rng)
            black = _random_blacks(w, h, rng)
            if not black:
                continue
            for _retry in range(20):
                grid = [list(row) for row in nums]
                if not _fill_under_blacks(grid, black, rng):
                    break
                if grade_solve(grid, level) is None:
                    continue  # the techniques of this grade do not finish it
                if level > 0 and grade_solve(grid, level - 1, sneaky=True) is not None:
                    continue  # too easy: the grade below finishes it (even with the "sneaky" first step)
                return self.parse_desc(params, self.encode_desc(grid))
        raise GenerationError(f"singles: no {w}x{h} instance of grade {params.diff!r} within the attempt budget")

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """The task text: rules, the number grid, answer format (``B``/``W``) and coordinates."""
        p: SinglesParams = instance.params
        width = max(len(str(n)) for row in instance.data.nums for n in row)
        rows = [" ".join(str(n).rjust(width) for n in row) for row in instance.data.nums]
        return "\n".join([
            "Solve this Singles (Hitori) puzzle.",
            "",
            f"The grid below has {p.h} rows and {p.w} columns of numbers. Black out some cells so that:",
            "- no number appears more than once among the white (not blacked-out) cells of any row or any column;",
            "- no two black cells are next to each other horizontally or vertically (diagonal contact is allowed);",
            "- all white cells form one connected area, moving horizontally or vertically between white cells.",
            "",
            "Cells are named by 1-based coordinates (row, column): rows are numbered top to bottom, columns left "
            "to right, so (1,1) is the top-left cell.",
            "",
            "The grid:",
            *rows,
            "",
            f"Answer format: {p.h} lines of {p.w} symbols separated by spaces, one per cell, using B for a "
            "blacked-out cell and W for a white cell. Put the final answer inside <answer>...</answer>, for "
            "example (first two rows of some grid):",
            "<answer>",
            " ".join("B" if c == 1 else "W" for c in range(p.w)),
            " ".join("W" for _ in range(p.w)),
            "...",
            "</answer>",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read an ``H x W`` grid of ``B``/``W`` (case-insensitive) from the last ``<answer>`` block (or the last
        grid-shaped block of the text).

        Parameters
        ----------
        text : str
            The model's completion (any length; read in linear time).
        instance : Instance
            The instance the answer is for (gives the expected ``H x W`` size).

        Returns
        -------
        ParsedAnswer
            ``value``: ``H`` tuples of ``W`` values (``"B"``/``"W"``);
            ``source``: ``"answer_block"`` or ``"fallback_grid"``.

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or an unknown symbol.
        """
        p: SinglesParams = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, {"B": "B", "W": "W"})
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The answer text for ``solution``: rows of ``B``/``W`` separated by spaces."""
        return format_grid(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check an answer by the rules.

        Parameters
        ----------
        instance : Instance
            The puzzle instance.
        answer : ParsedAnswer or tuple of tuples
            A parsed answer or a solution value: ``H`` rows of ``W`` symbols (``"B"``/``"W"``).

        Returns
        -------
        CheckResult
            Violations with rule ids ``"shape"``, ``"row_repeat"``, ``"column_repeat"``, ``"adjacent_black"``,
            ``"white_connected"``; cells are 1-based.
        """
        p: SinglesParams = instance.params
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        bad = _shape_violation(grid, p.h, p.w, ("B", "W"))
        if bad is not None:
            return CheckResult(False, (bad,))
        nums = instance.data.nums
        out: list[Violation] = []
        for r in range(p.h):
            seen: dict[int, int] = {}
            for c in range(p.w):
                if grid[r][c] == "W":
                    n = nums[r][c]
                    if n in seen:
                        out.append(Violation("row_repeat", f"row {r + 1} has two white {n}s",
                                             ((r + 1, seen[n] + 1), (r + 1, c + 1))))
                    else:
                        seen[n] = c
        for c in range(p.w):
            seen = {}
            for r in range(p.h):
                if grid[r][c] == "W":
                    n = nums[r][c]
                    if n in seen:
                        out.append(Violation("column_repeat", f"column {c + 1} has two white {n}s",
                                             ((seen[n] + 1, c + 1), (r + 1, c + 1))))
                    else:
                        seen[n] = r
        for r in range(p.h):
            for c in range(p.w):
                if grid[r][c] == "B":
                    for rr, cc in ((r, c + 1), (r + 1, c)):
                        if rr < p.h and cc < p.w and grid[rr][cc] == "B":
                            out.append(Violation("adjacent_black", f"({r + 1},{c + 1}) and ({rr + 1},{cc + 1}) "
                                                 "are adjacent black cells", ((r + 1, c + 1), (rr + 1, cc + 1))))
        comps = _white_components(grid, p.h, p.w)
        if len(comps) > 1:
            rest = sorted(comps, key=len, reverse=True)[1:]
            cells = tuple(sorted((r + 1, c + 1) for comp in rest for (r, c) in comp))
            out.append(Violation("white_connected", f"the white cells form {len(comps)} separate areas", cells))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p: SinglesParams = instance.params
        w, h, nums = p.w, p.h, instance.data.nums
        model = new_model()
        b = [[model.NewBoolVar(f"b{r}_{c}") for c in range(w)] for r in range(h)]
        for r in range(h):
            for c in range(w):
                if c + 1 < w:
                    model.AddBoolOr([b[r][c].Not(), b[r][c + 1].Not()])
                if r + 1 < h:
                    model.AddBoolOr([b[r][c].Not(), b[r + 1][c].Not()])
        for cells in _lines(w, h):
            for i in range(len(cells)):
                for j in range(i + 1, len(cells)):
                    (r1, c1), (r2, c2) = cells[i], cells[j]
                    if nums[r1][c1] == nums[r2][c2]:
                        model.AddBoolOr([b[r1][c1], b[r2][c2]])
        flat = [v for row in b for v in row]

        def cut(values):
            grid = [["B" if values[r * w + c] else "W" for c in range(w)] for r in range(h)]
            comps = _white_components(grid, h, w)
            if len(comps) <= 1:
                return []
            cuts = []
            for k, comp in enumerate(comps):
                other = comps[(k + 1) % len(comps)]
                t = next(iter(other))
                s = next(iter(comp))
                border = {(rr, cc) for (r, c) in comp for rr, cc in _nbrs(r, c, h, w) if (rr, cc) not in comp}
                lits = [b[s[0]][s[1]], b[t[0]][t[1]]] + [b[rr][cc].Not() for rr, cc in sorted(border)]
                # If s and t are both white, some black cell around s's component must be white (a path leaves it).
                cuts.append(lambda m, lits=lits: m.AddBoolOr(lits))
            return cuts

        sols, exhausted = lazy_enumerate(model, flat, max_solutions, cut)
        grids = tuple(tuple(tuple("B" if s[r * w + c] else "W" for c in range(w)) for r in range(h)) for s in sols)
        return SolveResult(grids, exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """The collection's solve move (``S;B0,0;C1,0;...;``, x = column, y = row, 0-based; ``B`` black, ``C``
        circled = white, ``E`` clears a cell) -> grid of ``B``/``W``. The collection's solve (``game_state_diff``)
        names every cell, so every cell must end ``B`` or ``C``.

        Raises
        ------
        ConfigError
            A malformed item, a cell off the grid, a cell left undecided
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p: SinglesParams = instance.params
        grid: list[list[str | None]] = [[None] * p.w for _ in range(p.h)]
        for letter, x, y, _ in solve_move_cells(self.name, move, "BCE", p.w, p.h):
            grid[y][x] = {"B": "B", "C": "W", "E": None}[letter]
        for y, row in enumerate(grid):
            if None in row:
                raise bad_solve_move(self.name, move, f"cell {row.index(None)},{y} (x, y) is left undecided")
        return tuple(tuple(row) for row in grid)

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool:
        """Whether ``claim`` is true: ``value`` claims of ``solution``, ``number`` claims of the grid itself.

        Raises
        ------
        ClaimError
            Unknown kind, a cell off the grid, a value outside ``B``/``W`` (value claims) or a number that is not an
            integer ``1..max(W, H)`` (number claims).
        """
        p: SinglesParams = instance.params
        if claim.kind not in self.CLAIM_KINDS or len(claim.cells) != 1:
            raise ClaimError(f"singles: claim kind must be one of {self.CLAIM_KINDS} about one cell, got {claim!r}")
        self._check_cell(instance, claim.cells[0], p.h, p.w)
        (r, c), = claim.cells
        if claim.kind == "number":
            self._claim_number(claim, 1, max(p.w, p.h), "a number")
            return (instance.data.nums[r - 1][c - 1] == claim.value) == claim.positive
        if claim.value not in ("B", "W"):
            raise ClaimError(f"singles: a cell is 'B' (black) or 'W' (white), got {claim.value!r}")
        return (solution[r - 1][c - 1] == claim.value) == claim.positive

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim ``"B"`` per black cell (see the module docstring)."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), "B")
                         for r, row in enumerate(sol) for c, v in enumerate(row) if v == "B")

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One ``number`` claim per cell, row-major: "(r,c) shows n"."""
        return tuple(Claim("number", ((r + 1, c + 1),), n)
                     for r, row in enumerate(instance.data.nums) for c, n in enumerate(row))

    def claim_text(self, claim: Claim) -> str:
        """``"(r,c) is black"`` / ``"(r,c) is not white"`` / ``"(r,c) shows 4"`` / ``"(r,c) does not show 4"``."""
        (r, c), = claim.cells
        if claim.kind == "number":
            return f"({r},{c}) {'shows' if claim.positive else 'does not show'} {claim.value}"
        word = {"B": "black", "W": "white"}.get(claim.value, str(claim.value))
        return f"({r},{c}) {'is' if claim.positive else 'is not'} {word}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read ``number`` claims ("(r,c) shows n", "(r,c) does not show n") from ``text``; value claims are left
        to the generic "(r,c) is <value word>" reader with :attr:`VALUE_WORDS`. Linear time (one regex scan)."""
        text = mask_long_numbers(text)
        p: SinglesParams = instance.params
        out = []
        for m in _NUMBER_RE.finditer(text):
            r, c, n = int(m.group(1)), int(m.group(2)), int(m.group(4))
            if 1 <= r <= p.h and 1 <= c <= p.w:
                out.append((Claim("number", ((r, c),), n, m.group(3) == "shows"), m.start(), m.end()))
        return out

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """1-based cell -> ``("B", "W")``."""
        p: SinglesParams = instance.params
        return {(r, c): ("B", "W") for r in range(1, p.h + 1) for c in range(1, p.w + 1)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Rows and columns with a repeated number ("row r", "column c"), and adjacent pairs of cells."""
        p: SinglesParams = instance.params
        nums = instance.data.nums
        out = []
        for k, cells in enumerate(_lines(p.w, p.h)):
            values = [nums[r][c] for r, c in cells]
            if len(set(values)) == len(values):
                continue  # no repeated number: the line constrains nothing
            name = f"row {k + 1}" if k < p.h else f"column {k - p.h + 1}"
            one_based = tuple((r + 1, c + 1) for r, c in cells)
            premises = tuple(Claim("number", (cell,), n) for cell, n in zip(one_based, values, strict=True))
            out.append(Unit(name, one_based, _NoWhiteRepeat(tuple(values)), premises))
        for r in range(1, p.h + 1):
            for c in range(1, p.w + 1):
                for rr, cc in ((r, c + 1), (r + 1, c)):
                    if rr <= p.h and cc <= p.w:
                        out.append(Unit(f"cells ({r},{c}) and ({rr},{cc})", ((r, c), (rr, cc)), _NotBothBlack()))
        return tuple(out)


class _NoWhiteRepeat:
    """A line whose cells hold ``numbers``: no number twice among the white cells (a picklable callable)."""

    def __init__(self, numbers: tuple[int, ...]):
        self.numbers = numbers

    def __call__(self, values: tuple) -> bool:
        whites = [n for n, v in zip(self.numbers, values, strict=True) if v == "W"]
        return len(whites) == len(set(whites))


class _NotBothBlack:
    """Two neighbouring cells are not both black."""

    def __call__(self, values: tuple) -> bool:
        return not (values[0] == "B" and values[1] == "B")


def _lines(w: int, h: int) -> list[list[tuple[int, int]]]:
    """0-based cells of every row (top to bottom), then every column (left to right)."""
    return [[(r, c) for c in range(w)] for r in range(h)] + [[(r, c) for r in range(h)] for c in range(w)]


def _nbrs(r: int, c: int, h: int, w: int):
    for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= rr < h and 0 <= cc < w:
            yield rr, cc


def _white_components(grid, h: int, w: int) -> list[set[tuple[int, int]]]:
    """Orthogonally connected components of the ``W`` cells (0-based), in row-major order of first cell."""
    seen: set[tuple[int, int]] = set()
    comps = []
    for r in range(h):
        for c in range(w):
            if grid[r][c] != "W" or (r, c) in seen:
                continue
            comp = {(r, c)}
            stack = [(r, c)]
            seen.add((r, c))
            while stack:
                cr, cc = stack.pop()
                for nr, nc in _nbrs(cr, cc, h, w):
                    if grid[nr][nc] == "W" and (nr, nc) not in seen:
                        seen.add((nr, nc))
                        comp.add((nr, nc))
                        stack.append((nr, nc))
            comps.append(comp)
    return comps


def _shape_violation(grid, rows: int, cols: int, domain) -> Violation | None:
    try:
        ok = len(grid) == rows and all(len(row) == cols for row in grid)
    except TypeError:
        ok = False
    if not ok:
        return Violation("shape", f"the answer must be a {rows}x{cols} grid", ())
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            if v not in domain:
                return Violation("shape", f"({r + 1},{c + 1}) holds {v!r}, expected one of {list(domain)}",
                                 ((r + 1, c + 1),))
    return None


def _latin_rectangle(w: int, h: int, rng: random.Random) -> list[list[int]]:
    """The top-left ``h x w`` corner of a random Latin square of order ``max(w, h)``: a cyclic square with rows,
    columns and symbols permuted (own code: a few lines, not uniform over Latin squares, which is not needed)."""
    o = max(w, h)
    rows, cols, syms = list(range(o)), list(range(o)), list(range(1, o + 1))
    rng.shuffle(rows)
    rng.shuffle(cols)
    rng.shuffle(syms)
    return [[syms[(rows[r] + cols[c]) % o] for c in range(w)] for r in range(h)]


def _random_blacks(w: int, h: int, rng: random.Random) -> set[tuple[int, int]]:
    """A maximal random set of black cells: never two adjacent, the white cells stay connected."""
    order = [(r, c) for r in range(h) for c in range(w)]
    rng.shuffle(order)
    black: set[tuple[int, int]] = set()
    for r, c in order:
        if any(n in black for n in _nbrs(r, c, h, w)):
            continue
        black.add((r, c))
        grid = [["B" if (rr, cc) in black else "W" for cc in range(w)] for rr in range(h)]
        if len(_white_components(grid, h, w)) != 1:
            black.discard((r, c))
    return black


def _fill_under_blacks(grid: list[list[int]], black: set[tuple[int, int]], rng: random.Random) -> bool:
    """Write under each black cell (row-major) a number that the white cells of its row or column already show, so
    the cell cannot be white; numbers shown exactly once in both its row and its column are preferred (facts from
    the collection's generator, which finds this gives fewer shortcuts; own code). Counts include numbers already
    written under earlier black cells. False when some black cell has no such number."""
    h, w = len(grid), len(grid[0])
    o = max(w, h)
    rownums = [[0] * (o + 1) for _ in range(h)]
    colnums = [[0] * (o + 1) for _ in range(w)]
    for r in range(h):
        for c in range(w):
            if (r, c) not in black:
                rownums[r][grid[r][c]] += 1
                colnums[c][grid[r][c]] += 1
    for r, c in sorted(black):
        order = list(range(1, o + 1))
        rng.shuffle(order)
        pick = next((n for n in order if rownums[r][n] == 1 and colnums[c][n] == 1), None)
        if pick is None:
            pick = next((n for n in order if rownums[r][n] or colnums[c][n]), None)
        if pick is None:
            return False  # no white cell in its row or column: this black set cannot be forced
        grid[r][c] = pick
        rownums[r][pick] += 1
        colnums[c][pick] += 1
    return True


PUZZLE = register_puzzle(Singles())
