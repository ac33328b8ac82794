"""Range (Kurodoko): shade cells so that every number sees exactly that many white cells.

Rules (the collection's ``range.c``): some cells of a ``w x h`` grid hold numbers. Shade some cells black so that
(1) no numbered cell is black, (2) no two black cells share an edge, (3) all white cells form one orthogonally
connected area, and (4) a number ``n`` equals the count of white cells it sees: itself plus the white cells in the
four straight lines from it up to the first black cell or the grid edge.

Game IDs: params ``WxH`` (no difficulty; full and short forms coincide, ``"7"`` reads as ``7x7``); desc: row-major
cells where a letter ``a``-``z`` is a run of 1-26 cells without a number, a decimal number ``1..w+h-1`` is a clue,
and ``_`` separates two adjacent numbers (``3x3:a3_4c4_2a``). SOLVE moves: ``S`` then ``B,r,c`` / ``W,r,c``
(0-based row, column).

Answer: one row per line, ``#`` black, ``.`` white (a numbered cell may also be written as its own number;
a number in any other cell is a parse error).
Solution value: tuple of row tuples of ``"B"`` / ``"W"``.

Claims: ``value`` claims "(r,c) is black" / "(r,c) is white" (values ``"B"``/``"W"``), and static ``clue`` claims
"(r,c) has the clue n" (:meth:`given_claims`). C* = one ``value`` claim "(r,c) is black" per black cell of the
solution (every other cell is white), as tents has one claim per tent.

Constraint view: variables are the 1-based cells (clue cells have the domain ``("W",)``); units are each clue's
visibility count ("the clue n at (r,c)", over its row and column) and each pair of adjacent cells ("adjacent
cells (r,c) and (r,c+1)": not both black). Global rule (not a unit): white connectivity, enforced exactly by lazy
cuts in the solver and by :meth:`RangePuzzle.check`.

LEVELS (reasonshape choice, the data README's proposal; the collection has no difficulty grades for Range, so
difficulty is grid size with a minimal clue set): trivial ``3x3``, easy ``5x5``, normal ``7x7``, hard ``9x6``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

from ortools.sat.python import cp_model

from reasonshape.envs._solver import lazy_enumerate, new_solver
from reasonshape.envs.answer import format_grid, read_grid_answer
from reasonshape.envs.base import (
    MOVE_NUM,
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
    parse_wxh,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError, GenerationError

__all__ = ["RangeParams", "RangePuzzle", "PUZZLE"]

_DIRS = ((1, 0), (0, 1), (-1, 0), (0, -1))


@dataclass(frozen=True)
class RangeParams:
    """Range params: grid width ``w`` (columns) and height ``h`` (rows), both >= 1 and w*h >= 2."""

    w: int
    h: int


def _neighbours(r: int, c: int, h: int, w: int):
    for dr, dc in _DIRS:
        rr, cc = r + dr, c + dc
        if 0 <= rr < h and 0 <= cc < w:
            yield rr, cc


def _white_components(grid, h: int, w: int) -> list[list[tuple[int, int]]]:
    """Connected components of non-black cells (0-based), largest first."""
    seen = [[False] * w for _ in range(h)]
    comps = []
    for r in range(h):
        for c in range(w):
            if grid[r][c] == "B" or seen[r][c]:
                continue
            comp, stack = [], [(r, c)]
            seen[r][c] = True
            while stack:
                cr, cc = stack.pop()
                comp.append((cr, cc))
                for nr, nc in _neighbours(cr, cc, h, w):
                    if not seen[nr][nc] and grid[nr][nc] != "B":
                        seen[nr][nc] = True
                        stack.append((nr, nc))
            comps.append(comp)
    comps.sort(key=len, reverse=True)
    return comps


def _seen_count(grid, r: int, c: int, h: int, w: int) -> int:
    n = 1
    for dr, dc in _DIRS:
        rr, cc = r + dr, c + dc
        while 0 <= rr < h and 0 <= cc < w and grid[rr][cc] != "B":
            n += 1
            rr += dr
            cc += dc
    return n


def _rays(r: int, c: int, h: int, w: int) -> list[list[tuple[int, int]]]:
    out = []
    for dr, dc in _DIRS:
        ray, rr, cc = [], r + dr, c + dc
        while 0 <= rr < h and 0 <= cc < w:
            ray.append((rr, cc))
            rr += dr
            cc += dc
        out.append(ray)
    return out


def encode_range_desc(clues, h: int, w: int) -> str:
    """The collection's desc for a clue grid, as ``range.c``'s ``newdesc_encode_game_description`` writes it.

    Parameters
    ----------
    clues : sequence of sequences of int, shape (h, w)
        Clue per cell, 0 = no number.
    h, w : int
        Grid height (rows) and width (columns).

    Returns
    -------
    str
        Runs of empty cells as ``a``-``z`` (longer runs split at 26), numbers in decimal, ``_`` between two
        numbers with no run between them.
    """
    out: list[str] = []
    run = 0
    flat = [clues[r][c] for r in range(h) for c in range(w)] + [-1]
    for n in flat:
        if n == 0:
            run += 1
            continue
        if run:
            while run > 0:
                k = min(run, 26)
                out.append(chr(ord("a") - 1 + k))
                run -= k
        elif out and n > 0:
            out.append("_")
        if n > 0:
            out.append(str(n))
        run = 0
    return "".join(out)


class RangePuzzle(Puzzle):
    """Range (Kurodoko) on the :class:`~reasonshape.envs.base.Puzzle` protocol. See the module docstring."""

    name: ClassVar[str] = "range"
    LEVELS: ClassVar[dict[str, str]] = {"trivial": "3x3", "easy": "5x5", "normal": "7x7", "hard": "9x6"}
    ANSWER_SYMBOLS: ClassVar[dict[str, str]] = {
        "#": "black (shaded) cell",
        ".": "white cell (a numbered cell may also be written as its number)",
    }
    CLAIM_KINDS: ClassVar[tuple[str, ...]] = ("value", "clue")
    VALUE_WORDS: ClassVar[dict[str, Hashable]] = {
        "black": "B", "shaded": "B", "#": "B", "white": "W", "unshaded": "W", ".": "W",
    }

    # ----------------------------------------------------------------- params and game IDs
    def parse_params(self, text: str) -> RangeParams:
        """Parse ``WxH`` (or ``N`` for ``NxN``). Raises :class:`GameIdError` with the position of the problem."""
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '7x7'")
        w, h, end = parse_wxh(text)
        if end != len(text):
            raise GameIdError(text, end, "end of params after WxH (Range has no other params)")
        if w * h < 2:
            raise GameIdError(text, 0, "a grid of at least 2 cells")
        return RangeParams(w, h)

    def format_params(self, params: RangeParams, full: bool = True) -> str:
        """``"WxH"``; the full and short forms are the same (``range.c`` ``encode_params``)."""
        return f"{params.w}x{params.h}"

    def parse_desc(self, params: RangeParams, desc: str) -> Instance:
        """Parse the desc as ``range.c``'s ``validate_desc``/``new_game``; ``Instance.data`` is the clue grid
        (tuple of rows, 0 = no number).

        Raises
        ------
        GameIdError
            Invalid character, a number outside ``1..w+h-1``, or too little / too much data (with position).
        """
        w, h = params.w, params.h
        n, vmax = w * h, w + h - 1
        cells: list[int] = []
        i, L = 0, len(desc)
        while i < L:
            ch = desc[i]
            if "a" <= ch <= "z":
                cells.extend([0] * (ord(ch) - ord("a") + 1))
                i += 1
            elif ch == "_":
                i += 1
            elif "1" <= ch <= "9":
                j = digits_end(desc, i)
                val = int(desc[i:j])
                if val > vmax:
                    raise GameIdError(desc, i, f"a number between 1 and {vmax} (w+h-1), got {val}")
                cells.append(val)
                i = j
            else:
                raise GameIdError(desc, i, "a letter a-z (run of empty cells), a number 1-9..., or '_'")
            if len(cells) > n:
                raise GameIdError(desc, i - 1, f"no more data: the grid has only {n} cells")
        if len(cells) < n:
            raise GameIdError(desc, L, f"more data: {len(cells)} of {n} cells described")
        clues = tuple(tuple(cells[r * w:(r + 1) * w]) for r in range(h))
        return Instance(self.name, params, desc, clues)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: RangeParams, rng: random.Random) -> Instance:
        """Native generator: random black cells (never adjacent, whites connected, about one cell in four), every
        white cell numbered, then numbers removed in random order while CP-SAT proves the solution stays unique
        (reasonshape's own, after ``range.c``'s remove-while-unique design)."""
        w, h = params.w, params.h
        for _attempt in range(50):
            grid = [["W"] * w for _ in range(h)]
            cells = [(r, c) for r in range(h) for c in range(w)]
            rng.shuffle(cells)
            target = max(1, (w * h) // 4)
            nblack = 0
            for r, c in cells:
                if nblack >= target:
                    break
                if any(grid[nr][nc] == "B" for nr, nc in _neighbours(r, c, h, w)):
                    continue
                grid[r][c] = "B"
                if len(_white_components(grid, h, w)) != 1:
                    grid[r][c] = "W"
                    continue
                nblack += 1
            sol = tuple(tuple(row) for row in grid)
            full = [[0 if sol[r][c] == "B" else _seen_count(sol, r, c, h, w) for c in range(w)] for r in range(h)]
            clues = _minimise_clues(full, sol, h, w, rng)
            if clues is None:
                continue
            desc = encode_range_desc(clues, h, w)
            return Instance(self.name, params, desc, tuple(tuple(row) for row in clues))
        raise GenerationError(f"range: no unique {w}x{h} instance after 50 attempts")

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid (numbers in place, ``.`` for a cell without a number), the answer format."""
        p = instance.params
        clues = instance.data
        width = max(len(str(v)) for row in clues for v in row)
        rows = "\n".join(" ".join((str(v) if v else ".").rjust(width) for v in row) for row in clues)
        return (
            f"Range puzzle ({p.h} rows x {p.w} columns).\n\n"
            "Rules: shade some cells black so that\n"
            "1. no cell with a number is black;\n"
            "2. no two black cells are orthogonally adjacent (sharing an edge);\n"
            "3. all white cells form one connected area (moving up, down, left, right through white cells);\n"
            "4. each number equals the number of white cells it sees: the cell itself plus every white cell in a "
            "straight line up, down, left and right, up to the first black cell or the edge of the grid.\n\n"
            "Coordinates are (row, column), 1-based, rows numbered top to bottom and columns left to right.\n\n"
            f"Grid ('.' = a cell without a number):\n{rows}\n\n"
            "Answer format: the full grid, one row per line, top row first, cells separated by spaces, "
            "using '#' for a black cell and '.' for a white cell (a numbered cell may be written as '.' or as its "
            "number). Put the final answer inside <answer>...</answer>, for example (shape only):\n"
            f"<answer>\n{self._example_grid(p)}\n</answer>"
        )

    @staticmethod
    def _example_grid(p: RangeParams) -> str:
        return "\n".join(" ".join("." for _ in range(p.w)) for _ in range(p.h))

    def _symbols(self, instance: Instance) -> dict[str, str | int]:
        """Answer token -> ``"B"``/``"W"``, or the number ``v`` for a number token (any clue value ``1..w+h-1``, so
        that a grid-shaped block is found by its tokens; :meth:`parse_answer` then checks the cell)."""
        p = instance.params
        sym: dict[str, str | int] = {"#": "B", ".": "W", "B": "B", "W": "W", "X": "B", "O": "W"}
        for v in range(1, p.w + p.h):
            sym[str(v)] = v
        return sym

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``h x w`` grid of ``#``/``.`` from the last answer block; a numbered cell may be written as its
        own number (white), as the prompt allows.

        Raises
        ------
        AnswerParseError
            No answer block and no grid-shaped block, wrong size, unknown symbol, or a number in a cell that is
            not numbered with it (the cell and the number named).
        """
        p, clues = instance.params, instance.data
        grid, source, notes = read_grid_answer(text, p.h, p.w, self._symbols(instance), single_chars=True)
        for r, row in enumerate(grid):
            for c, v in enumerate(row):
                if isinstance(v, int) and v != clues[r][c]:
                    what = f"holds the number {clues[r][c]}" if clues[r][c] else "has no number"
                    raise AnswerParseError(f"number {v} at ({r + 1},{c + 1}), a cell that {what}; only a numbered "
                                           "cell may be written as its number, else '#' or '.'")
        grid = tuple(tuple("W" if isinstance(v, int) else v for v in row) for row in grid)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """``#`` / ``.`` rows separated by spaces (inverse of :meth:`parse_answer`)."""
        return format_grid([["#" if v == "B" else "." for v in row] for row in solution])

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the four rules; violations ``shape``, ``bad_value``, ``clue_black``, ``adjacent_black``,
        ``clue_count``, ``white_disconnected`` (cells 1-based). O(w*h*(w+h))."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, clues = instance.params, instance.data
        h, w = p.h, p.w
        if not (isinstance(grid, (tuple, list)) and len(grid) == h and all(
                isinstance(row, (tuple, list)) and len(row) == w for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be {h} rows of {w} cells"),))
        out: list[Violation] = []
        for r in range(h):
            for c in range(w):
                if grid[r][c] not in ("B", "W"):
                    out.append(Violation("bad_value", f"({r + 1},{c + 1}) is neither black nor white",
                                         ((r + 1, c + 1),)))
        if out:
            return CheckResult(False, tuple(out))
        for r in range(h):
            for c in range(w):
                if grid[r][c] == "B":
                    if clues[r][c]:
                        out.append(Violation("clue_black", f"numbered cell ({r + 1},{c + 1}) is black",
                                             ((r + 1, c + 1),)))
                    for nr, nc in ((r + 1, c), (r, c + 1)):
                        if nr < h and nc < w and grid[nr][nc] == "B":
                            out.append(Violation("adjacent_black",
                                                 f"black cells ({r + 1},{c + 1}) and ({nr + 1},{nc + 1}) touch",
                                                 ((r + 1, c + 1), (nr + 1, nc + 1))))
                elif clues[r][c]:
                    seen = _seen_count(grid, r, c, h, w)
                    if seen != clues[r][c]:
                        out.append(Violation("clue_count", f"the clue {clues[r][c]} at ({r + 1},{c + 1}) sees "
                                             f"{seen} white cells", ((r + 1, c + 1),)))
        comps = _white_components(grid, h, w)
        if len(comps) > 1:
            for comp in comps[1:]:
                cells = tuple(sorted((r + 1, c + 1) for r, c in comp))
                out.append(Violation("white_disconnected",
                                     f"white cells {', '.join(map(str, cells[:6]))} are cut off from the rest",
                                     cells))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        """CP-SAT: one Boolean per cell (black), adjacency and visibility counts as constraints, white
        connectivity by lazy cuts (:func:`~reasonshape.envs._solver.lazy_enumerate`)."""
        p, clues = instance.params, instance.data
        model, black = _build_model(clues, p.h, p.w)
        flat = [black[r][c] for r in range(p.h) for c in range(p.w)]
        cut = _connectivity_cut(black, clues, p.h, p.w)
        sols, exhausted = lazy_enumerate(model, flat, max_solutions, cut)
        grids = tuple(tuple(tuple("B" if v[r * p.w + c] else "W" for c in range(p.w)) for r in range(p.h))
                      for v in sols)
        return SolveResult(grids, exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> Any:
        """``S`` then items ``B,r,c`` / ``W,r,c`` / ``E,r,c`` with no separator (0-based row, column; ``E`` clears a
        cell), as ``range.c`` ``execute_move``. The collection's solve names every cell without a number once and
        never a numbered cell; so must ``move``: every such cell must end ``B`` or ``W`` (numbered cells are white).

        Raises
        ------
        ConfigError
            A wrong prefix, a malformed item or trailing text, a cell off the grid or numbered, a cell left
            undecided (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p, clues = instance.params, instance.data
        if not (isinstance(move, str) and re.fullmatch(rf"S(?:[BWE],{MOVE_NUM[1:-1]},{MOVE_NUM[1:-1]})+", move)):
            raise bad_solve_move(self.name, move, "it must be 'S' and items B,<r>,<c> / W,<r>,<c> / E,<r>,<c>")
        grid: list[list[str | None]] = [["W" if v else None for v in row] for row in clues]
        for m in re.finditer(r"([BWE]),([0-9]+),([0-9]+)", move[1:]):
            r, c = int(m.group(2)), int(m.group(3))
            if not (0 <= r < p.h and 0 <= c < p.w):
                raise bad_solve_move(self.name, move, f"item {m.group(0)!r} is off the grid")
            if clues[r][c]:
                raise bad_solve_move(self.name, move, f"item {m.group(0)!r} names a numbered cell")
            grid[r][c] = None if m.group(1) == "E" else m.group(1)
        for r, row in enumerate(grid):
            if None in row:
                raise bad_solve_move(self.name, move, f"cell {r},{row.index(None)} (row, column) is left undecided")
        return tuple(tuple(row) for row in grid)

    # ----------------------------------------------------------------- claims
    def _cell(self, instance: Instance, claim: Claim) -> tuple[int, int]:
        if len(claim.cells) != 1:
            raise ClaimError(f"range: a {claim.kind!r} claim is about one cell, got {claim.cells}")
        self._check_cell(instance, claim.cells[0], instance.params.h, instance.params.w)
        return claim.cells[0]

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """``value``: the cell's colour; ``clue``: whether the instance has that clue (static, same for every
        solution). Raises :class:`ClaimError` for other kinds, off-grid cells, a value outside ``B``/``W`` or a clue
        that is not an integer ``1..W+H-1``."""
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"range: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        r, c = self._cell(instance, claim)
        if claim.kind == "value":
            if claim.value not in ("B", "W"):
                raise ClaimError(f"range: value must be 'B' or 'W', got {claim.value!r}")
            truth = solution[r - 1][c - 1] == claim.value
        else:
            self._claim_number(claim, 1, instance.params.w + instance.params.h - 1, "a clue")
            truth = instance.data[r - 1][c - 1] == claim.value
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one claim "(r,c) is black" per black cell."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), "B") for r, row in enumerate(sol)
                         for c, v in enumerate(row) if v == "B")

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One ``clue`` claim per number, row-major."""
        return tuple(Claim("clue", ((r + 1, c + 1),), v) for r, row in enumerate(instance.data)
                     for c, v in enumerate(row) if v)

    def claim_text(self, claim: Claim) -> str:
        """``"(3,4) is black"``, ``"(3,4) is not white"``, ``"(2,5) has the clue 3"``."""
        (r, c), = claim.cells
        if claim.kind == "clue":
            return f"({r},{c}) {'has' if claim.positive else 'does not have'} the clue {claim.value}"
        word = "black" if claim.value == "B" else "white"
        return f"({r},{c}) {'is' if claim.positive else 'is not'} {word}"

    _CLUE_RE = re.compile(r"\((\d+),\s?(\d+)\) (has|does not have) the clue (\d+)")

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Reads the ``clue`` sentences :meth:`claim_text` writes (value claims use the generic patterns)."""
        text = mask_long_numbers(text)
        out = []
        for m in self._CLUE_RE.finditer(text):
            out.append((Claim("clue", ((int(m.group(1)), int(m.group(2))),), int(m.group(4)),
                              m.group(3) == "has"), m.start(), m.end()))
        return out

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """1-based cell -> ``("B", "W")``; numbered cells -> ``("W",)``."""
        return {(r + 1, c + 1): (("W",) if v else ("B", "W")) for r, row in enumerate(instance.data)
                for c, v in enumerate(row)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Clue units (visibility count over the clue's row and column) and adjacent-pair units (pairs of cells
        without numbers; a numbered cell is white by its domain)."""
        p, clues = instance.params, instance.data
        h, w = p.h, p.w
        out = []
        for r in range(h):
            for c in range(w):
                v = clues[r][c]
                if not v:
                    continue
                rays = _rays(r, c, h, w)
                cells = [(r + 1, c + 1)] + [(rr + 1, cc + 1) for ray in rays for rr, cc in ray]
                lens = [len(ray) for ray in rays]
                out.append(Unit(f"the clue {v} at ({r + 1},{c + 1})", tuple(cells), _ClueAllowed(v, lens),
                                (Claim("clue", ((r + 1, c + 1),), v),)))
        for r in range(h):
            for c in range(w):
                for nr, nc in ((r, c + 1), (r + 1, c)):
                    # a numbered cell is always white (its domain), so its pairs constrain nothing
                    if nr < h and nc < w and not clues[r][c] and not clues[nr][nc]:
                        out.append(Unit(f"adjacent cells ({r + 1},{c + 1}) and ({nr + 1},{nc + 1})",
                                        ((r + 1, c + 1), (nr + 1, nc + 1)), _not_both_black))
        return tuple(out)


def _not_both_black(values: tuple) -> bool:
    return not (values[0] == "B" and values[1] == "B")


class _ClueAllowed:
    """``allowed`` of a clue unit: values = (clue cell, then each ray's cells outward, rays down/right/up/left)."""

    def __init__(self, clue: int, lens: list[int]):
        self.clue, self.lens = clue, lens

    def __call__(self, values: tuple) -> bool:
        if values[0] != "W":
            return False
        seen, i = 1, 1
        for n in self.lens:
            k = 0
            while k < n and values[i + k] != "B":
                k += 1
            seen += k
            i += n
        return seen == self.clue


def _build_model(clues, h: int, w: int, model=None, lits=None):
    """CP-SAT model of the local rules: ``(model, black)`` with ``black[r][c]`` a Boolean. ``lits``: None (every
    number's rules always hold) or a dict 0-based cell -> literal enforcing that number's rules (the generator's
    assumption solves)."""
    model = cp_model.CpModel() if model is None else model
    black = [[model.NewBoolVar(f"b{r}_{c}") for c in range(w)] for r in range(h)]
    for r in range(h):
        for c in range(w):
            if c + 1 < w:
                model.AddBoolOr([black[r][c].Not(), black[r][c + 1].Not()])
            if r + 1 < h:
                model.AddBoolOr([black[r][c].Not(), black[r + 1][c].Not()])
    for r in range(h):
        for c in range(w):
            v = clues[r][c]
            if not v:
                continue
            terms = []
            for ray in _rays(r, c, h, w):
                prev = None
                for rr, cc in ray:
                    # reach <-> (prev reach) and not black: the cell is seen from the number
                    reach = model.NewBoolVar("")
                    b = black[rr][cc]
                    model.AddImplication(reach, b.Not())
                    if prev is not None:
                        model.AddImplication(reach, prev)
                        model.AddBoolOr([reach, b, prev.Not()])
                    else:
                        model.AddBoolOr([reach, b])
                    terms.append(reach)
                    prev = reach
            c1 = model.Add(black[r][c] == 0)
            c2 = model.Add(sum(terms) == v - 1)
            if lits is not None:
                c1.OnlyEnforceIf(lits[(r, c)])
                c2.OnlyEnforceIf(lits[(r, c)])
    return model, black


def _connectivity_cut(black, clues, h: int, w: int):
    """Lazy cut for white connectivity: for a white component C with black boundary B and a white cell v
    outside, "some cell of B is white, or every cell of C is black, or v is black" (exact: it excludes only
    assignments where C is cut off from v)."""

    def cut(values):
        grid = [["B" if values[r * w + c] else "W" for c in range(w)] for r in range(h)]
        comps = _white_components(grid, h, w)
        if len(comps) <= 1:
            return []
        builders = []
        for comp in comps[1:]:
            inside = set(comp)
            boundary = {n for cell in comp for n in _neighbours(*cell, h, w) if n not in inside}
            outside = [cell for other in comps if other is not comp for cell in other]
            v = next((cell for cell in outside if clues[cell[0]][cell[1]]), outside[0])
            lits = [black[r][c].Not() for r, c in boundary]
            if not clues[v[0]][v[1]]:
                lits.append(black[v[0]][v[1]])
            u = next((cell for cell in comp if clues[cell[0]][cell[1]]), None)
            if u is not None:
                builders.append(lambda m, lits=lits: m.AddBoolOr(lits))
            else:
                for r, c in comp:
                    builders.append(lambda m, lits=lits, b=black[r][c]: m.AddBoolOr(lits + [b]))
        return builders

    return cut


def _minimise_clues(full, sol, h: int, w: int, rng: random.Random, time_limit_s: float = 10.0):
    """Remove numbers from ``full`` in random order while ``sol`` stays the only solution.

    One CP-SAT model holds every number's rules behind an enforcement literal plus the constraint "differs from
    ``sol``"; each test is one solve under the assumptions of the kept numbers (infeasible = unique). Lazy
    connectivity cuts are the clue-free form, valid whatever numbers are kept. Returns ``None`` when ``full``
    itself is not unique or a solve timed out.
    """
    cells = [(r, c) for r in range(h) for c in range(w) if full[r][c]]
    model = cp_model.CpModel()
    lits = {cell: model.NewBoolVar("") for cell in cells}
    model, black = _build_model(full, h, w, model, lits)
    model.AddBoolOr([black[r][c].Not() if sol[r][c] == "B" else black[r][c] for r in range(h) for c in range(w)])
    solver = new_solver(time_limit_s)
    solver.parameters.cp_model_presolve = False  # many tiny solves: presolve costs more than it saves (3x here)
    # measured on 7x7 generation: LP relaxation, probing and symmetry detection cost more than they prune here
    solver.parameters.linearization_level = 0
    solver.parameters.cp_model_probing_level = 0
    solver.parameters.symmetry_level = 0
    flat = [black[r][c] for r in range(h) for c in range(w)]
    cut = _connectivity_cut(black, [[0] * w for _ in range(h)], h, w)
    kept = set(cells)
    if _has_other(model, solver, flat, lits, kept, cut) is not False:
        return None
    order = cells[:]
    rng.shuffle(order)
    for cell in order:
        kept.discard(cell)
        if _has_other(model, solver, flat, lits, kept, cut) is not False:
            kept.add(cell)
    return [[full[r][c] if (r, c) in kept else 0 for c in range(w)] for r in range(h)]


def _has_other(model, solver, flat, lits, kept, cut) -> bool | None:
    """Whether another valid solution exists with the numbers in ``kept`` (None: undecided in time)."""
    while True:
        model.ClearAssumptions()
        model.AddAssumptions([lit for cell, lit in lits.items() if cell in kept])
        status = solver.Solve(model)
        if status == cp_model.INFEASIBLE:
            return False
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        values = tuple(int(solver.Value(v)) for v in flat)
        builders = cut(values)
        if not builders:
            return True
        for add in builders:
            add(model)


PUZZLE = register_puzzle(RangePuzzle())
