"""Light Up (Akari): light every white cell with lights that do not see each other; numbers count adjacent lights.

Rules (Simon Tatham's Portable Puzzle Collection, ``lightup.c``): place lights in white cells; a light lights its own
cell and every white cell in its row and column up to the nearest black cell or the grid edge; every white cell
must be lit; no light may be lit by another light; a black cell with a number ``n`` has exactly ``n`` lights in its
(up to four) orthogonal neighbours.

Game IDs
--------
``params`` (``lightup.c`` ``decode_params``): ``<w>[x<h>][b<blackpc>][s<symm>][r][d<difficulty>]``, each part optional
and read on top of the collection's defaults (``7x7b20s4d0``; without ``s``, a grid that is not square gets ``s2``, so
``5`` alone is ``5x7b20s2d0`` and ``7x7`` is ``7x7b20s4d0``, as ``sgt-lightup`` writes them); the full form is
``<w>x<h>b<blackpc>s<symm>d<difficulty>``, the short form ``<w>x<h>``. ``symm``: 0 none, 1 two-way mirror, 2 two-way
rotational, 3 four-way mirror, 4 four-way rotational (square grids only); ``difficulty`` 0 easy, 1 tricky, 2 hard
(legacy ``r`` = 2); ``5 <= blackpc <= 100``, ``w, h >= 2``. ``desc`` (``validate_desc`` / ``new_game_desc``): the
cells row-major, ``B`` a black cell, ``0``..``4`` a black cell with that number, ``a``..``z`` a run of 1..26 white
cells. The collection's ``SOLVE`` move is ``S`` then ``;L<x>,<y>`` per light and ``;I<x>,<y>`` per cell marked as "no
light" (0-based column, row; ``execute_move``).

Answer and claims
-----------------
The answer is the full grid, one row per line: ``L`` a light, ``.`` a white cell without a light, and the black
cells copied (``#`` unnumbered, ``0``..``4`` numbered). A solution is a tuple of ``h`` tuples of ``w`` one-character
strings with those symbols. Claim kinds:

* ``"value"``: ``Claim("value", ((r, c),), v)``, ``v`` ``"L"`` ("(r,c) is a light") or ``"."`` ("(r,c) is empty");
* ``"black"``: ``Claim("black", ((r, c),))`` "(r,c) is a black cell" (static);
* ``"clue"``: ``Claim("clue", ((r, c),), n)`` "(r,c) is a black cell with the number n" (static).

C* (paper A §C; reasonshape's definition after its tents example): one claim per light, ``{(r,c) is a light}``.
Given claims: a ``black`` claim per unnumbered black cell and a ``clue`` claim per numbered one.

Constraint view
---------------
Variables: the white cells (1-based), domain ``("L", ".")``. Units: each maximal horizontal or vertical run of two
or more white cells holds at most one light (``"row r"`` / ``"column c"`` when the run spans the line, else
``"row r from (r,a) to (r,b)"``); ``"(r,c) must be lit"`` (at least one light among the cells that see (r,c),
itself included); ``"the clue n at (r,c)"`` (exactly ``n`` lights among its white orthogonal neighbours; premise the
clue claim). Light Up has no global rule: these units define the solutions exactly.

Levels
------
=======  =============  =========================================================
level    params         native generator
=======  =============  =========================================================
trivial  3x3b20s0d0     half of the numbers tried for removal (kept if needed)
easy     5x5b20s4d0     half of the numbers tried for removal
normal   7x7b20s4d1     three quarters of the numbers tried for removal
hard     10x10b20s4d2   every number tried for removal
=======  =============  =========================================================

The native generator follows ``lightup.c``'s construction (symmetric black cells at ``blackpc`` percent, lights
placed at random on unlit cells, every black cell numbered) and grades difficulty by grid size and clue density:
numbers are removed in random order while the solution stays unique, over a fraction of them set by the
difficulty (``_REMOVE_FRACTION``). It does not grade by the collection's solver techniques; the ``sgt`` backend
does. Source: reasonshape choice after paper A §A.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from reasonshape.envs._solver import enumerate_solutions, new_model, new_solver
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
    check_side,
    mask_long_numbers,
    read_int,
    solve_move_cells,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["LightupParams", "LightupData", "Lightup", "PUZZLE", "LIGHT", "EMPTY", "BLACK"]

LIGHT, EMPTY, BLACK = "L", ".", "#"
_NUMBERS = "01234"
_SYMBOLS = {s: s for s in (LIGHT, EMPTY, BLACK, *_NUMBERS)}
_ORTH = ((-1, 0), (1, 0), (0, -1), (0, 1))
#: Fraction of the numbered black cells the native generator tries to remove, by difficulty (reasonshape choice).
_REMOVE_FRACTION = {0: 0.5, 1: 0.75, 2: 1.0}
_DEFAULTS = (7, 7, 20, 4, 0)  # lightup.c default_params: 7x7, 20% black, 4-way rotational symmetry, easy


@dataclass(frozen=True)
class LightupParams:
    """Light Up params: width and height (each 2..99), percentage of black cells (5..100), symmetry (0..4),
    difficulty (0..2)."""

    w: int
    h: int
    blackpc: int = 20
    symm: int = 2
    difficulty: int = 0


@dataclass(frozen=True)
class LightupData:
    """A parsed desc: ``cells`` (``h`` rows of ``w`` symbols ``.``, ``#``, ``0``..``4``) and derived structure:
    ``segments`` (maximal runs of white cells, 0-based, horizontal ones first; each a tuple of cells) and
    ``seg_of`` (``{cell: (horizontal segment index, vertical segment index)}``)."""

    cells: tuple[tuple[str, ...], ...]
    segments: tuple[tuple[tuple[int, int], ...], ...]
    seg_of: dict

    def sees(self, r: int, c: int) -> tuple[tuple[int, int], ...]:
        """White cells a light at (r, c) lights, itself included (0-based)."""
        hs, vs = self.seg_of[(r, c)]
        return tuple(sorted(set(self.segments[hs]) | set(self.segments[vs])))


def _build_data(cells: tuple[tuple[str, ...], ...]) -> LightupData:
    h, w = len(cells), len(cells[0])
    segments: list[tuple[tuple[int, int], ...]] = []
    seg_of: dict = {}
    for r in range(h):
        run: list = []
        for c in range(w + 1):
            if c < w and cells[r][c] == EMPTY:
                run.append((r, c))
            elif run:
                for q in run:
                    seg_of[q] = [len(segments), -1]
                segments.append(tuple(run))
                run = []
    for c in range(w):
        run = []
        for r in range(h + 1):
            if r < h and cells[r][c] == EMPTY:
                run.append((r, c))
            elif run:
                for q in run:
                    seg_of[q][1] = len(segments)
                segments.append(tuple(run))
                run = []
    return LightupData(cells, tuple(segments), {q: tuple(v) for q, v in seg_of.items()})


def _encode_desc(cells) -> str:
    """The desc exactly as ``lightup.c`` ``new_game_desc`` writes it (runs of white cells capped at 26)."""
    out, run = [], 0
    for row in cells:
        for v in row:
            if v == EMPTY:
                if run == 26:
                    out.append("z")
                    run = 0
                run += 1
            else:
                if run:
                    out.append(chr(ord("a") - 1 + run))
                    run = 0
                out.append("B" if v == BLACK else v)
    if run:
        out.append(chr(ord("a") - 1 + run))
    return "".join(out)


def _orbit(r: int, c: int, w: int, h: int, symm: int) -> set:
    """Cells equivalent to (r, c) under the symmetry (1 left-right mirror, 2 half turn, 3 both mirrors, 4 quarter
    turns; square grids for 4)."""
    pts = {(r, c)}
    if symm == 1:
        pts.add((r, w - 1 - c))
    elif symm == 2:
        pts.add((h - 1 - r, w - 1 - c))
    elif symm == 3:
        pts |= {(r, w - 1 - c), (h - 1 - r, c), (h - 1 - r, w - 1 - c)}
    elif symm == 4:
        pts |= {(c, w - 1 - r), (h - 1 - r, w - 1 - c), (h - 1 - c, r)}
    return pts


class _UniquenessModel:
    """One CP-SAT model per candidate solution: each number is switched on by an assumption literal and a
    "differs from the solution" clause makes uniqueness one infeasibility proof (reasonshape choice)."""

    def __init__(self, data: LightupData, numbers: dict, solution_lights: set):
        m = cp_model.CpModel()
        x = {q: m.NewBoolVar("") for q in data.seg_of}
        _add_rules(m, x, data)
        self.lits = {}
        for (r, c), n in numbers.items():
            a = m.NewBoolVar("")
            nbs = [x[q] for q in _white_neighbours(data, r, c)]
            m.Add(sum(nbs) == n).OnlyEnforceIf(a)
            self.lits[(r, c)] = a
        m.AddBoolOr([x[q].Not() if q in solution_lights else x[q] for q in x] or [m.NewConstant(0)])
        self.model = m
        self.solver = new_solver(20.0)
        self.solver.parameters.cp_model_presolve = False  # presolve dominates on these tiny models

    def unique(self, active) -> bool:
        m = self.model
        m.ClearAssumptions()
        m.AddAssumptions([self.lits[q] for q in active])
        status = self.solver.Solve(m)
        if status == cp_model.INFEASIBLE:
            return True
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise GenerationError("lightup: uniqueness check timed out")
        return False


def _white_neighbours(data: LightupData, r: int, c: int) -> list:
    h, w = len(data.cells), len(data.cells[0])
    return [(r + dr, c + dc) for dr, dc in _ORTH
            if 0 <= r + dr < h and 0 <= c + dc < w and data.cells[r + dr][c + dc] == EMPTY]


def _add_rules(m: cp_model.CpModel, x: dict, data: LightupData) -> None:
    """Segments hold at most one light; every white cell sees a light."""
    for seg in data.segments:
        if len(seg) > 1:
            m.AddAtMostOne([x[q] for q in seg])
    for q in x:
        m.AddBoolOr([x[p] for p in data.sees(*q)])


class Lightup(Puzzle):
    """Light Up, see the module docstring for rules, formats, claims, C* and levels."""

    name = "lightup"
    LEVELS = {"trivial": "3x3b20s0d0", "easy": "5x5b20s4d0", "normal": "7x7b20s4d1", "hard": "10x10b20s4d2"}
    ANSWER_SYMBOLS = {LIGHT: "a light", EMPTY: "a white cell without a light",
                      BLACK: "a black cell without a number (copy it from the puzzle)",
                      **{n: f"a black cell with the number {n} (copy it from the puzzle)" for n in _NUMBERS}}
    CLAIM_KINDS = ("value", "black", "clue")
    VALUE_WORDS: dict[str, Hashable] = {
        "light": LIGHT, "a light": LIGHT, "lamp": LIGHT, "a lamp": LIGHT, "bulb": LIGHT, "a bulb": LIGHT,
        "l": LIGHT, "empty": EMPTY, "blank": EMPTY, ".": EMPTY,
    }

    # ------------------------------------------------------------------ params
    def parse_params(self, text: str) -> LightupParams:
        """Parse a params string as ``lightup.c`` ``decode_params`` (on top of its defaults) and check it as
        ``validate_params``.

        Raises
        ------
        GameIdError
            A missing number, a value out of range (width and height 2..99, ``b`` 5..100, ``s`` 0..4 with 4 only
            on square grids, ``d`` 0..2), or trailing characters.
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '7x7b20s2d0'")
        n = len(text)

        w, h, blackpc, symm, diff = _DEFAULTS
        w, i = read_int(text, 0, "the grid width (a number 2..99)")
        check_side(text, 0, "width", w, 2)
        starts = {}
        if i < n and text[i] == "x":
            starts["h"] = i + 1
            h, i = read_int(text, i + 1, "the grid height after 'x'")
            check_side(text, starts["h"], "height", h, 2)
        if i < n and text[i] == "b":
            starts["b"] = i + 1
            blackpc, i = read_int(text, i + 1, "the percentage of black cells after 'b'")
        if i < n and text[i] == "s":
            starts["s"] = i + 1
            symm, i = read_int(text, i + 1, "the symmetry (0..4) after 's'")
        elif symm == 4 and w != h:
            symm = 2
        diff = 0
        if i < n and text[i] == "r":
            diff, i = 2, i + 1
        if i < n and text[i] == "d":
            starts["d"] = i + 1
            diff, i = read_int(text, i + 1, "the difficulty (0..2) after 'd'")
        if i < n:
            raise GameIdError(text, i, "one of 'x', 'b', 's', 'r', 'd' in that order, or the end of the params")
        if not 5 <= blackpc <= 100:
            raise GameIdError(text, starts.get("b", 0), f"a black-cell percentage between 5 and 100, got {blackpc}")
        if not 0 <= symm <= 4:
            raise GameIdError(text, starts.get("s", 0), f"a symmetry between 0 and 4, got {symm}")
        if symm == 4 and w != h:
            raise GameIdError(text, starts.get("s", 0), "4-way rotational symmetry (s4) only on square grids")
        if not 0 <= diff <= 2:
            raise GameIdError(text, starts.get("d", 0), f"a difficulty between 0 and 2, got {diff}")
        return LightupParams(w, h, blackpc, symm, diff)

    def format_params(self, params: LightupParams, full: bool = True) -> str:
        """``"7x7b20s2d0"`` (full) or ``"7x7"`` (short), as ``lightup.c`` ``encode_params``."""
        if not full:
            return f"{params.w}x{params.h}"
        return f"{params.w}x{params.h}b{params.blackpc}s{params.symm}d{params.difficulty}"

    # ------------------------------------------------------------------ desc
    def parse_desc(self, params: LightupParams, desc: str) -> Instance:
        """Parse a Light Up desc (grammar in the module docstring), validating as ``lightup.c`` ``validate_desc``.

        Raises
        ------
        GameIdError
            Naming the 0-based position in ``desc``: an unexpected character, a desc shorter than the grid, or
            data past the end of the grid.
        """
        w, h = params.w, params.h
        area, n = w * h, len(desc)
        flat: list[str] = []
        p = 0
        while len(flat) < area:
            if p >= n:
                raise GameIdError(desc, p, f"more cells ({len(flat)} of {area} described)")
            ch = desc[p]
            if ch in _NUMBERS:
                flat.append(ch)
            elif ch == "B":
                flat.append(BLACK)
            elif "a" <= ch <= "z":
                run = ord(ch) - ord("a") + 1
                if len(flat) + run > area:
                    raise GameIdError(desc, p, f"a run of at most {area - len(flat)} white cells (the grid ends)")
                flat.extend([EMPTY] * run)
            else:
                raise GameIdError(desc, p, "'B', a digit 0-4 or a run letter a-z")
            p += 1
        if p < n:
            raise GameIdError(desc, p, f"the end of the desc (the {w}x{h} grid is complete)")
        cells = tuple(tuple(flat[r * w:(r + 1) * w]) for r in range(h))
        return Instance(self.name, params, desc, _build_data(cells))

    # ------------------------------------------------------------------ generation
    def _generate(self, params: LightupParams, rng: random.Random) -> Instance:
        """``lightup.c``'s construction: symmetric black cells (``blackpc`` percent), lights on random unlit cells
        until all is lit, every black cell numbered; numbers then removed in random order (a difficulty-dependent
        fraction of them) while CP-SAT proves the solution unique. Layouts whose full numbering is not unique
        are retried, and the black percentage rises by 5 every 20 layouts (as ``lightup.c``)."""
        w, h = params.w, params.h
        blackpc = params.blackpc
        for attempt in range(400):
            if attempt and attempt % 20 == 0 and blackpc < 90:
                blackpc += 5
            cells = self._random_blacks(w, h, blackpc, params.symm, rng)
            data = _build_data(tuple(tuple(row) for row in cells))
            lights = self._random_lights(data, rng)
            numbers = {}
            for r in range(h):
                for c in range(w):
                    if cells[r][c] == BLACK:
                        numbers[(r, c)] = sum(q in lights for q in _white_neighbours(data, r, c))
            um = _UniquenessModel(data, numbers, lights)
            active = set(numbers)
            if not um.unique(active):
                continue
            order = sorted(numbers)
            rng.shuffle(order)
            tries = order[:round(len(order) * _REMOVE_FRACTION[params.difficulty])]
            for q in tries:
                active.discard(q)
                if not um.unique(active):
                    active.add(q)
            final = [[str(numbers[(r, c)]) if (r, c) in active else cells[r][c] for c in range(w)]
                     for r in range(h)]
            return self.parse_desc(params, _encode_desc(final))
        raise GenerationError(f"lightup: no unique instance for {self.format_params(params)}")

    @staticmethod
    def _random_blacks(w, h, blackpc, symm, rng):
        cells = [[EMPTY] * w for _ in range(h)]
        target = round(w * h * blackpc / 100)
        orbits, seen = [], set()
        for r in range(h):
            for c in range(w):
                if (r, c) not in seen:
                    o = _orbit(r, c, w, h, symm)
                    seen |= o
                    orbits.append(sorted(o))
        rng.shuffle(orbits)
        count = 0
        for o in orbits:
            if count >= target:
                break
            for r, c in o:
                cells[r][c] = BLACK
            count += len(o)
        return cells

    @staticmethod
    def _random_lights(data: LightupData, rng) -> set:
        whites = sorted(data.seg_of)
        rng.shuffle(whites)
        lit: set = set()
        lights: set = set()
        for q in whites:
            if q not in lit:
                lights.add(q)
                lit.update(data.sees(*q))
        return lights

    # ------------------------------------------------------------------ text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid (``.`` white, ``#`` black, digits numbered black), and the answer format."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        cw = len(str(max(w, h)))
        lines = [" " * (cw + 3) + " ".join(str(c + 1).rjust(cw) for c in range(w)) + "   <- column numbers"]
        for r in range(h):
            lines.append(str(r + 1).rjust(cw) + " | " + " ".join(v.rjust(cw) for v in d.cells[r]))
        numbered = [f"({r + 1},{c + 1}) = {v}" for r in range(h) for c in range(w) if (v := d.cells[r][c]) in _NUMBERS]
        return "\n".join([
            f"Solve this Light Up puzzle (also called Akari) on a grid of {h} rows and {w} columns.",
            "",
            "Rules:",
            "1. The grid has white cells (.) and black cells (# or a number 0-4). Place lights in some white cells.",
            "2. A light illuminates its own cell and every white cell in its row and its column, in all four "
            "directions, until a black cell or the edge of the grid stops it.",
            "3. Every white cell must be illuminated by at least one light.",
            "4. No light may be illuminated by another light: two lights never share a row or column unless a "
            "black cell stands between them.",
            "5. A black cell with a number has exactly that many lights in the cells directly above, below, left "
            "and right of it (diagonal cells do not count). Black cells without a number may have any number of "
            "lights next to them.",
            "",
            "Coordinates are (row, column), 1-based: rows are numbered from the top (1) to the bottom "
            f"({h}), columns from the left (1) to the right ({w}).",
            "",
            "The grid (row numbers on the left):",
            *lines,
            "",
            "Numbered black cells: " + (", ".join(numbered) if numbered else "none") + ".",
            "",
            f"Answer format: the complete grid, {h} lines (row 1 first), each with {w} symbols separated by spaces: "
            "L = a light, . = a white cell without a light, and every black cell copied exactly as in the puzzle "
            "(# or its number).",
            "",
            "Put your final answer inside <answer>...</answer>, with nothing but the grid in the block.",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``h x w`` grid (``L``, ``.``, ``#``, ``0``..``4``; ``l`` accepted) from the last ``<answer>``
        block, or the last grid-shaped block.

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or an unknown symbol.
        """
        p = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, _SYMBOLS)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """Rows of symbols separated by spaces (the inverse of :meth:`parse_answer`)."""
        return format_grid(solution)

    # ------------------------------------------------------------------ rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check a grid by the rules. Rule ids: ``shape``, ``bad_value``, ``black_changed``, ``lights_see`` (two
        lights in one run of white cells), ``unlit`` (white cells no light reaches, one violation listing them),
        ``clue`` (a number with the wrong count of adjacent lights). O(w*h)."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        try:
            grid = [list(row) for row in grid]
        except TypeError:
            grid = []
        if len(grid) != h or any(len(row) != w for row in grid):
            return CheckResult(False, (Violation("shape", f"expected {h} rows of {w} cells"),))
        out = []
        for r in range(h):
            for c in range(w):
                v, want = grid[r][c], d.cells[r][c]
                if not isinstance(v, str) or v not in _SYMBOLS:
                    out.append(Violation("bad_value", f"({r + 1},{c + 1}) holds {v!r}, not L, ., # or 0-4",
                                         ((r + 1, c + 1),)))
                elif want == EMPTY and v not in (LIGHT, EMPTY):
                    out.append(Violation("black_changed", f"({r + 1},{c + 1}) is a white cell, the answer has "
                                                          f"{v!r}", ((r + 1, c + 1),)))
                elif want != EMPTY and v != want:
                    out.append(Violation("black_changed", f"({r + 1},{c + 1}) is the black cell {want!r}, the "
                                                          f"answer has {v!r}", ((r + 1, c + 1),)))
        if any(v.rule == "bad_value" for v in out):
            return CheckResult(False, tuple(out))
        lit_segments = set()
        for i, seg in enumerate(d.segments):
            lights = [q for q in seg if grid[q[0]][q[1]] == LIGHT]
            if lights:
                lit_segments.add(i)
            for a, b in zip(lights, lights[1:], strict=False):
                out.append(Violation("lights_see", f"the lights at ({a[0] + 1},{a[1] + 1}) and ({b[0] + 1},"
                                                   f"{b[1] + 1}) light each other", ((a[0] + 1, a[1] + 1),
                                                                                     (b[0] + 1, b[1] + 1))))
        unlit = tuple((r + 1, c + 1) for (r, c), (hs, vs) in sorted(d.seg_of.items())
                      if hs not in lit_segments and vs not in lit_segments)
        if unlit:
            out.append(Violation("unlit", f"{len(unlit)} white cell(s) are not lit: "
                                          + ", ".join(f"({r},{c})" for r, c in unlit[:12])
                                          + (" ..." if len(unlit) > 12 else ""), unlit))
        for r in range(h):
            for c in range(w):
                v = d.cells[r][c]
                if v in _NUMBERS:
                    n = sum(grid[a][b] == LIGHT for a, b in _white_neighbours(d, r, c))
                    if n != int(v):
                        out.append(Violation("clue", f"the clue {v} at ({r + 1},{c + 1}) has {n} adjacent lights",
                                             ((r + 1, c + 1),)))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        w, h, d = instance.params.w, instance.params.h, instance.data
        m = new_model()
        x = {q: m.NewBoolVar(f"l{q[0]}_{q[1]}") for q in sorted(d.seg_of)}
        _add_rules(m, x, d)
        for r in range(h):
            for c in range(w):
                if d.cells[r][c] in _NUMBERS:
                    m.Add(sum(x[q] for q in _white_neighbours(d, r, c)) == int(d.cells[r][c]))
        cells = sorted(x)
        if not cells:  # an all-black grid: one (empty) solution iff every number is 0 (no neighbour can be lit)
            ok = all(v in (BLACK, "0") for row in d.cells for v in row)
            return SolveResult((d.cells,) if ok else (), True)
        sols, exhausted = enumerate_solutions(m, [x[q] for q in cells], max_solutions)
        out = []
        for s in sols:
            lights = {q for q, v in zip(cells, s, strict=True) if v}
            out.append(tuple(tuple(LIGHT if (r, c) in lights else d.cells[r][c] for c in range(w))
                             for r in range(h)))
        return SolveResult(tuple(out), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """The collection's move string (``S;L<x>,<y>;I<x>,<y>;...``, as ``lightup.c`` ``execute_move``; ``C``
        clears a cell) applied to the empty puzzle -> solution grid.

        Raises
        ------
        ConfigError
            Not ``S;`` and at least one item, a malformed item, or a cell off the grid or on a black cell
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        w, h, d = instance.params.w, instance.params.h, instance.data
        grid = [list(row) for row in d.cells]
        for letter, x, y, item in solve_move_cells(self.name, move, "LIC", w, h):
            if d.cells[y][x] != EMPTY:
                raise bad_solve_move(self.name, move, f"item {item!r} is on a black cell")
            grid[y][x] = LIGHT if letter == "L" else EMPTY
        return tuple(tuple(row) for row in grid)

    # ------------------------------------------------------------------ claims
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        w, h = instance.params.w, instance.params.h
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"lightup: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        if len(claim.cells) != 1:
            raise ClaimError(f"lightup: a {claim.kind} claim names exactly one cell, got {claim.cells}")
        self._check_cell(instance, claim.cells[0], h, w)
        if claim.kind == "value" and claim.value not in (LIGHT, EMPTY):
            raise ClaimError(f"lightup: value claims take 'L' or '.', got {claim.value!r}")
        if claim.kind == "clue":
            self._claim_number(claim, 0, 4, "a number")
        if claim.kind == "black":
            self._claim_no_value(claim)

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value claims: the cell's symbol in ``solution``; black and clue claims: facts of the puzzle. Raises
        :class:`ClaimError` for a claim outside the vocabulary (unknown kind, not one cell, a cell off the grid, a
        value other than ``L`` / ``.``, a clue that is not an integer 0..4, a black claim with a value)."""
        self._validate_claim(instance, claim)
        r, c = claim.cells[0]
        given = instance.data.cells[r - 1][c - 1]
        if claim.kind == "value":
            truth = solution[r - 1][c - 1] == claim.value
        elif claim.kind == "black":
            truth = given != EMPTY
        else:
            truth = given == str(claim.value)
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one "(r,c) is a light" claim per light."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), LIGHT) for r, row in enumerate(sol)
                         for c, v in enumerate(row) if v == LIGHT)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """Row-major: a black claim per unnumbered black cell, a clue claim per numbered one."""
        out = []
        for r, row in enumerate(instance.data.cells):
            for c, v in enumerate(row):
                if v == BLACK:
                    out.append(Claim("black", ((r + 1, c + 1),)))
                elif v in _NUMBERS:
                    out.append(Claim("clue", ((r + 1, c + 1),), int(v)))
        return tuple(out)

    def claim_text(self, claim: Claim) -> str:
        """``"(3,4) is a light"``, ``"(3,4) is not a light"``, ``"(3,4) is empty"``, ``"(2,2) is a black cell"``,
        ``"(2,2) is a black cell with the number 3"``."""
        r, c = claim.cells[0]
        verb = "is" if claim.positive else "is not"
        if claim.kind == "value":
            return f"({r},{c}) {verb} {'a light' if claim.value == LIGHT else 'empty'}"
        if claim.kind == "black":
            return f"({r},{c}) {verb} a black cell"
        return f"({r},{c}) {verb} a black cell with the number {claim.value}"

    _BLACK_RE = re.compile(r"\((\d+),\s*(\d+)\) is (not )?a black cell(?: with the number (\d))?", re.IGNORECASE)
    _CLUE_RE = re.compile(r"the (?:clue|number) (\d) at \((\d+),\s*(\d+)\)", re.IGNORECASE)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read black and clue claims: ``"(r,c) is [not] a black cell [with the number n]"`` (as
        :meth:`claim_text` writes) and ``"the clue n at (r,c)"`` (as unit names say). Value claims are read by the
        generic "(r,c) is <word>" patterns through ``VALUE_WORDS``. Linear time; cells off the grid are skipped."""
        text = mask_long_numbers(text)
        w, h = instance.params.w, instance.params.h
        out = []
        for m in self._BLACK_RE.finditer(text):
            r, c = int(m[1]), int(m[2])
            if not (1 <= r <= h and 1 <= c <= w):
                continue
            claim = Claim("black", ((r, c),)) if m[4] is None else Claim("clue", ((r, c),), int(m[4]))
            out.append((claim.negated() if m[3] else claim, m.start(), m.end()))
        for m in self._CLUE_RE.finditer(text):
            r, c = int(m[2]), int(m[3])
            if 1 <= r <= h and 1 <= c <= w:
                out.append((Claim("clue", ((r, c),), int(m[1])), m.start(), m.end()))
        out.sort(key=lambda t: t[1])
        return out

    # ------------------------------------------------------------------ constraint view
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every white cell (1-based) -> ``("L", ".")``."""
        return {(r + 1, c + 1): (LIGHT, EMPTY) for r, c in sorted(instance.data.seg_of)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Runs of white cells (at most one light), visibility of each white cell (lit), numbered cells."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        units = []
        for seg in d.segments:
            if len(seg) < 2:
                continue
            (r0, c0), (r1, c1) = seg[0], seg[-1]
            if r0 == r1:
                name = f"row {r0 + 1}" if len(seg) == w else f"row {r0 + 1} from ({r0 + 1},{c0 + 1}) to " \
                                                             f"({r1 + 1},{c1 + 1})"
            else:
                name = f"column {c0 + 1}" if len(seg) == h else f"column {c0 + 1} from ({r0 + 1},{c0 + 1}) to " \
                                                                f"({r1 + 1},{c1 + 1})"
            units.append(Unit(name, tuple((r + 1, c + 1) for r, c in seg), _AtMostOneLight()))
        for r, c in sorted(d.seg_of):
            units.append(Unit(f"({r + 1},{c + 1}) must be lit", tuple((a + 1, b + 1) for a, b in d.sees(r, c)),
                              _AnyLight()))
        for r in range(h):
            for c in range(w):
                v = d.cells[r][c]
                if v in _NUMBERS:
                    nbs = tuple(sorted((a + 1, b + 1) for a, b in _white_neighbours(d, r, c)))
                    if nbs:
                        units.append(Unit(f"the clue {v} at ({r + 1},{c + 1})", nbs, _LightCount(int(v)),
                                          (Claim("clue", ((r + 1, c + 1),), int(v)),)))
        return tuple(units)


class _AtMostOneLight:
    """``allowed`` callables are classes, not lambdas, so units pickle."""

    def __call__(self, values: tuple) -> bool:
        return sum(v == LIGHT for v in values) <= 1


class _AnyLight:
    def __call__(self, values: tuple) -> bool:
        return LIGHT in values


class _LightCount:
    def __init__(self, n: int):
        self.n = n

    def __call__(self, values: tuple) -> bool:
        return sum(v == LIGHT for v in values) == self.n


PUZZLE = register_puzzle(Lightup())
