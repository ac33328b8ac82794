"""Slant (Gokigen Naname) from Simon Tatham's Portable Puzzle Collection.

Rules
-----
Draw one diagonal in every cell of a ``W x H`` grid: ``\\`` (from the cell's top-left corner to its bottom-right
corner) or ``/`` (from its bottom-left corner to its top-right corner). Clues sit on some of the ``(W+1) x (H+1)``
grid points (cell corners): a clue ``n`` says exactly ``n`` diagonals touch that point. The diagonals must never
form a closed loop. Source: the collection's ``slant.c`` (``check_completion``: vertex degrees and ``findloop``).

Game IDs
--------
Params ``<W>x<H>d<c>`` with difficulty ``c`` in ``e`` (easy) or ``h`` (hard); the short form omits ``d<c>`` (then
easy). Desc: the ``(W+1)*(H+1)`` points in row-major order; a digit ``0``..``4`` is a clue, a letter ``a``..``z``
is a run of 1..26 points without a clue (longer runs are split as ``z`` + rest, as ``new_game_desc`` writes them).
The collection's ``SOLVE`` move is ``S`` followed by ``;\\x,y`` or ``;/x,y`` per cell (0-based column ``x``, row
``y``).

Coordinates
-----------
Cells are 1-based ``(row, column)``, ``1..H`` x ``1..W``. Points are 1-based ``(row, column)`` too, ``1..H+1`` x
``1..W+1``; point ``(r, c)`` is the top-left corner of cell ``(r, c)``. A ``\\`` in cell ``(r, c)`` joins points
``(r, c)`` and ``(r+1, c+1)``; a ``/`` joins ``(r, c+1)`` and ``(r+1, c)``.

Answer format
-------------
``H`` lines of ``W`` symbols, ``\\`` or ``/``, separated by spaces or not.

Claims and C*
-------------
* ``"value"``: ``Claim("value", ((r, c),), "\\\\")`` "(r,c) is \\\\" / "(r,c) is not /" (cells).
* ``"clue"``: ``Claim("clue", ((r, c),), n)`` "the clue at point (r,c) is n" (points; given, static).

C* (reasonshape choice): one positive value claim per cell. Every cell holds a diagonal and neither symbol is a
default, so no smaller set states the solution.

Constraint view
---------------
Variables: the 1-based cells, domain ``("\\\\", "/")``. Units: one per clue point, ``"the clue n at point (r,c)"``
(the number of touching diagonals equals ``n``), premise its clue claim. Global rule, not a unit: **no loop** (the
diagonals, as edges between points, form a forest). The solver enforces it exactly with lazy cuts (a cycle found in
a candidate is forbidden as a whole), and :meth:`Slant.check` with union-find.

Levels
------
=========  ==========  ===================================================================
level      params      native generator
=========  ==========  ===================================================================
trivial    ``2x2de``   2x2, keeps at least 55% of the points as clues
easy       ``4x4de``   4x4, keeps at least 55% of the points as clues
normal     ``5x5de``   5x5, keeps at least 55% of the points as clues
hard       ``5x5dh``   5x5, minimal clue set (no clue can be removed)
=========  ==========  ===================================================================

The native generator draws a random loop-free filling (each cell in random order takes a diagonal that closes no
loop; one always exists, as in ``slant.c``), writes every clue, then removes clues in random order while CP-SAT
proves the solution unique, down to the clue density of the difficulty letter (``e``: 55% of the points, ``h``:
minimal). Difficulty comes from grid size and clue density, never from rule changes (reasonshape choice).
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

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
from reasonshape.errors import ClaimError, GameIdError

__all__ = ["SlantParams", "Slant", "PUZZLE"]

BACK, FWD = "\\", "/"
_DIFFS = {"e": "easy", "h": "hard"}
#: Fraction of points kept as clues by the native generator, per difficulty letter (reasonshape choice).
_KEEP = {"e": 0.55, "h": 0.0}


@dataclass(frozen=True)
class SlantParams:
    """Slant params: ``w`` columns and ``h`` rows of cells (each >= 2), difficulty ``diff`` in ``"e"``/``"h"``."""

    w: int
    h: int
    diff: str = "e"


def _run_length(text: str, clue_chars: str) -> tuple[list, int]:
    """Decode a clue run-length string: clue chars one cell each, ``a``..``z`` runs of 1..26 blanks.

    Returns ``(cells, bad_position)``: ``cells`` as ints or ``None``; ``bad_position`` is -1 when all chars are valid.
    """
    cells: list = []
    for i, ch in enumerate(text):
        if ch in clue_chars:
            cells.append(int(ch, 16))
        elif "a" <= ch <= "z":
            cells.extend([None] * (ord(ch) - ord("a") + 1))
        else:
            return cells, i
    return cells, -1


def _encode_runs(cells, to_char) -> str:
    """Run-length encode as the collection does: blanks as letters (runs past 26 split into ``z`` + rest)."""
    out, run = [], 0
    for v in list(cells) + ["END"]:
        if v is None:
            run += 1
            continue
        while run > 0:
            k = min(run, 26)
            out.append(chr(ord("a") + k - 1))
            run -= k
        if v != "END":
            out.append(to_char(v))
    return "".join(out)


class _ClueAllowed:
    """``allowed`` of a clue unit: the number of touching diagonals equals the clue (picklable)."""

    def __init__(self, touching_values: tuple, clue: int):
        self.touching_values = touching_values
        self.clue = clue

    def __call__(self, values: tuple) -> bool:
        return sum(v == t for v, t in zip(values, self.touching_values, strict=True)) == self.clue


class Slant(Puzzle):
    """Slant: one diagonal per cell, point clues count touching diagonals, no loops. See the module docstring."""

    name = "slant"
    LEVELS = {"trivial": "2x2de", "easy": "4x4de", "normal": "5x5de", "hard": "5x5dh"}
    ANSWER_SYMBOLS = {
        BACK: "a diagonal from the cell's top-left corner to its bottom-right corner",
        FWD: "a diagonal from the cell's bottom-left corner to its top-right corner",
    }
    CLAIM_KINDS = ("value", "clue")
    VALUE_WORDS = {"\\": BACK, "/": FWD, "backslash": BACK, "back slash": BACK, "slash": FWD,
                   "forward slash": FWD}

    # ----------------------------------------------------------------- params and game IDs
    def parse_params(self, text: str) -> SlantParams:
        """Parse ``"5x5dh"`` / ``"5x5"`` (a lone ``"5"`` means ``5x5``) into :class:`SlantParams`.

        Raises
        ------
        GameIdError
            Malformed text, a side outside 2..99, or an unknown difficulty letter (position and expectation named).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '5x5dh'")
        w, h, i = parse_wxh(text, min_side=2)
        diff, i = read_difficulty(text, i, _DIFFS, "e", "a difficulty letter 'e' (easy) or 'h' (hard) after 'd'")
        if i != len(text):
            raise GameIdError(text, i, "end of params (format <W>x<H>d<e|h>)")
        return SlantParams(w, h, diff)

    def format_params(self, params: SlantParams, full: bool = True) -> str:
        """``"5x5dh"`` (full) or ``"5x5"`` (short), as the collection's ``encode_params``."""
        base = f"{params.w}x{params.h}"
        return f"{base}d{params.diff}" if full else base

    def parse_desc(self, params: SlantParams, desc: str) -> Instance:
        """Parse the clue string (see the module docstring); ``data`` is the ``(H+1) x (W+1)`` tuple of clues.

        Raises
        ------
        GameIdError
            An unexpected character (position named), or too few / too many points for the grid.
        """
        W, H = params.w + 1, params.h + 1
        cells, bad = _run_length(desc, "01234")
        if bad >= 0:
            raise GameIdError(desc, bad, "a clue digit 0-4 or a run letter a-z")
        if len(cells) != W * H:
            pos = len(desc) if len(cells) < W * H else _overflow_pos(desc, W * H)
            raise GameIdError(desc, pos, f"exactly {W * H} points for a {params.w}x{params.h} grid, "
                                         f"got {len(cells)}")
        clues = tuple(tuple(cells[r * W:(r + 1) * W]) for r in range(H))
        return Instance(self.name, params, desc, clues)

    def format_desc(self, instance: Instance) -> str:
        """The collection's desc for the instance's clues (identical to ``instance.desc`` for canonical descs)."""
        return encode_desc(instance.data)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: SlantParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        sol = _random_filling(w, h, rng)
        clues = [list(row) for row in _all_clues(sol)]
        points = [(r, c) for r in range(h + 1) for c in range(w + 1)]
        rng.shuffle(points)
        floor = int(round(_KEEP[params.diff] * len(points)))
        cuts: list[tuple[tuple[int, int], ...]] = []
        n_clues = len(points)
        for r, c in points:
            if n_clues <= floor:
                break
            v = clues[r][c]
            clues[r][c] = None
            if _has_other_solution(w, h, clues, sol, cuts):
                clues[r][c] = v
            else:
                n_clues -= 1
        data = tuple(tuple(row) for row in clues)
        return Instance(self.name, params, encode_desc(data), data)

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the clue points as text, the answer format and the ``<answer>`` instruction."""
        p = instance.params
        pts = "\n".join(" ".join("." if v is None else str(v) for v in row) for row in instance.data)
        ex = format_grid([[BACK if (r + c) % 2 == 0 else FWD for c in range(p.w)] for r in range(p.h)])
        return (
            f"Solve this Slant puzzle: a grid of {p.h} rows and {p.w} columns of cells.\n\n"
            "Rules:\n"
            "- Draw exactly one diagonal line in every cell: either \\ (from the cell's top-left corner to its "
            "bottom-right corner) or / (from its bottom-left corner to its top-right corner).\n"
            "- Some corners (grid points) carry a number: exactly that many diagonals must touch that point.\n"
            "- The diagonals must never form a closed loop.\n\n"
            f"Coordinates are 1-based (row, column), rows from top to bottom, columns from left to right. "
            f"There are {p.h + 1} rows and {p.w + 1} columns of points; point (r,c) is the top-left corner of "
            "cell (r,c), so cell (r,c) has the corners (r,c), (r,c+1), (r+1,c) and (r+1,c+1). A \\ in cell (r,c) "
            "touches points (r,c) and (r+1,c+1); a / touches points (r,c+1) and (r+1,c).\n\n"
            f"The points ('.' = no number, a digit = the number of diagonals that must touch that point):\n"
            f"{pts}\n\n"
            f"Answer format: {p.h} lines, one per row of cells from top to bottom, each with {p.w} symbols "
            "separated by spaces: \\ or /. For example, the layout of a correct answer (not its content) is:\n"
            f"{ex}\n\n"
            "Think it through, then put only the final grid inside <answer>...</answer>."
        )

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``H x W`` grid of ``\\`` and ``/`` from the last ``<answer>`` block (or the last grid).

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong size, or an unknown symbol.
        """
        p = instance.params
        # A doubled backslash (escaped, as in code or JSON) is read as one "\\" when cells are separated.
        grid, source, notes = read_grid_answer(text, p.h, p.w, {BACK: BACK, FWD: FWD, BACK * 2: BACK},
                                               single_chars=True)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """One row per line, symbols separated by spaces (inverse of :meth:`parse_answer`)."""
        return format_grid(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: ``shape``/``symbol``, ``clue`` (touching count) and ``loop`` (no closed loop).

        Runs in O(W*H) with union-find over the points.
        """
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p = instance.params
        w, h = p.w, p.h
        if (not isinstance(grid, (tuple, list)) or len(grid) != h
                or any(not isinstance(row, (tuple, list)) or len(row) != w for row in grid)):
            return CheckResult(False, (Violation("shape", f"expected {h} rows of {w} cells"),))
        bad = [(r + 1, c + 1) for r in range(h) for c in range(w) if grid[r][c] not in (BACK, FWD)]
        if bad:
            return CheckResult(False, (Violation("symbol", "every cell needs \\ or /", tuple(bad)),))
        out = []
        for (r, c), n in _clue_items(instance.data):
            got = _touching(grid, w, h, r, c)
            if got != n:
                out.append(Violation("clue", f"the clue {n} at point ({r + 1},{c + 1}) is touched by {got} "
                                             "diagonals", tuple(_cells_at_point(w, h, r, c))))
        loop = _loop_cells(grid, w, h)
        if loop:
            out.append(Violation("loop", "the diagonals form a closed loop", tuple(loop)))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p = instance.params
        model, xs = _model(p.w, p.h, instance.data)
        sols, exhausted = lazy_enumerate(model, [x for row in xs for x in row], max_solutions,
                                         _LoopCut(p.w, p.h, xs))
        return SolveResult(tuple(_to_grid(s, p.w, p.h) for s in sols), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """``S;\\0,0;/1,0;...`` (0-based ``x,y``; ``slant.c`` ``execute_move`` also knows ``C`` to clear a cell)
        -> the ``H x W`` grid of ``\\`` / ``/``. The collection's solve names every cell, so every cell must end
        with a slash.

        Raises
        ------
        ConfigError
            A malformed item, a cell off the grid, a cell left empty (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p = instance.params
        grid = [[None] * p.w for _ in range(p.h)]
        for letter, x, y, _ in solve_move_cells(self.name, move, "\\/C", p.w, p.h):
            grid[y][x] = None if letter == "C" else letter
        for y, row in enumerate(grid):
            if None in row:
                raise bad_solve_move(self.name, move, f"cell {row.index(None)},{y} (x, y) is left empty")
        return tuple(tuple(row) for row in grid)

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value claims against the solution; clue claims against the instance (static facts). Raises
        :class:`ClaimError` for an unknown kind, a cell or point off the grid, a value other than ``\\`` / ``/``
        or a clue that is not an integer 0..4."""
        p = instance.params
        if claim.kind == "value":
            if len(claim.cells) != 1:
                raise ClaimError(f"slant: a value claim names one cell, got {claim.cells}")
            self._check_cell(instance, claim.cells[0], p.h, p.w)
            if claim.value not in (BACK, FWD):
                raise ClaimError(f"slant: a cell value is '\\\\' or '/', got {claim.value!r}")
            r, c = claim.cells[0]
            return (solution[r - 1][c - 1] == claim.value) == claim.positive
        if claim.kind == "clue":
            if len(claim.cells) != 1:
                raise ClaimError(f"slant: a clue claim names one point, got {claim.cells}")
            self._check_cell(instance, claim.cells[0], p.h + 1, p.w + 1)
            self._claim_number(claim, 0, 4, "a clue")
            r, c = claim.cells[0]
            return (instance.data[r - 1][c - 1] == claim.value) == claim.positive
        raise ClaimError(f"slant: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per cell (see the module docstring)."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), v) for r, row in enumerate(sol) for c, v in enumerate(row))

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One ``clue`` claim per clue point (1-based point coordinates)."""
        return tuple(Claim("clue", ((r + 1, c + 1),), n) for (r, c), n in _clue_items(instance.data))

    def claim_text(self, claim: Claim) -> str:
        """``"(2,3) is \\\\"``, ``"(2,3) is not /"``, ``"the clue at point (1,2) is 3"``."""
        (r, c), = claim.cells
        if claim.kind == "clue":
            return f"the clue at point ({r},{c}) is {'' if claim.positive else 'not '}{claim.value}"
        return f"({r},{c}) is {'' if claim.positive else 'not '}{claim.value}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read clue claims, ``"the clue at point (r,c) is [not] n"``, in one linear regex scan."""
        text = mask_long_numbers(text)
        out = []
        for m in _CLUE_RE.finditer(text):
            r, c, neg, n = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))
            out.append((Claim("clue", ((r, c),), n, not neg), m.start(), m.end()))
        return out

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every 1-based cell -> ``("\\\\", "/")``."""
        p = instance.params
        return {(r, c): (BACK, FWD) for r in range(1, p.h + 1) for c in range(1, p.w + 1)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """One unit per clue point: ``"the clue n at point (r,c)"`` over the cells around it."""
        p = instance.params
        out = []
        for (r, c), n in _clue_items(instance.data):
            cells, touching = [], []
            for (cr, cc), sym in _around(p.w, p.h, r, c):
                cells.append((cr + 1, cc + 1))
                touching.append(sym)
            out.append(Unit(f"the clue {n} at point ({r + 1},{c + 1})", tuple(cells),
                            _ClueAllowed(tuple(touching), n), (Claim("clue", ((r + 1, c + 1),), n),)))
        return tuple(out)


_CLUE_RE = re.compile(r"clue at point \((\d+),\s*(\d+)\) is (not )?([0-4])", re.I)


def encode_desc(clues) -> str:
    """The collection's desc for an ``(H+1) x (W+1)`` clue array (``None`` = no clue)."""
    return _encode_runs([v for row in clues for v in row], str)


def _overflow_pos(desc: str, area: int) -> int:
    n = 0
    for i, ch in enumerate(desc):
        n += (ord(ch) - ord("a") + 1) if "a" <= ch <= "z" else 1
        if n > area:
            return i
    return len(desc)


def _clue_items(clues):
    for r, row in enumerate(clues):
        for c, v in enumerate(row):
            if v is not None:
                yield (r, c), v


def _around(w: int, h: int, r: int, c: int):
    """Cells around 0-based point (r, c) with the symbol that touches the point: ((cell_r, cell_c), sym)."""
    if r > 0 and c > 0:
        yield (r - 1, c - 1), BACK
    if r > 0 and c < w:
        yield (r - 1, c), FWD
    if r < h and c > 0:
        yield (r, c - 1), FWD
    if r < h and c < w:
        yield (r, c), BACK


def _cells_at_point(w, h, r, c):
    return [(cr + 1, cc + 1) for (cr, cc), _ in _around(w, h, r, c)]


def _touching(grid, w, h, r, c) -> int:
    return sum(grid[cr][cc] == sym for (cr, cc), sym in _around(w, h, r, c))


def _ends(w: int, r: int, c: int, sym: str) -> tuple[int, int]:
    """The two 0-based point indices (row-major over W+1 columns) a diagonal joins."""
    W = w + 1
    if sym == BACK:
        return r * W + c, (r + 1) * W + c + 1
    return r * W + c + 1, (r + 1) * W + c


def _find(parent, a):
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def _loop_cells(grid, w, h) -> list[tuple[int, int]]:
    """1-based cells whose diagonals lie on a closed loop (empty when loop-free). Union-find, then peel leaves."""
    n_pts = (w + 1) * (h + 1)
    parent = list(range(n_pts))
    closing = False
    for r in range(h):
        for c in range(w):
            a, b = _ends(w, r, c, grid[r][c])
            ra, rb = _find(parent, a), _find(parent, b)
            if ra == rb:
                closing = True
            else:
                parent[ra] = rb
    if not closing:
        return []
    # Edges on a cycle are exactly those left after repeatedly removing degree-1 points (the 2-core).
    adj: dict[int, list[tuple[int, tuple[int, int]]]] = {}
    for r in range(h):
        for c in range(w):
            a, b = _ends(w, r, c, grid[r][c])
            adj.setdefault(a, []).append((b, (r, c)))
            adj.setdefault(b, []).append((a, (r, c)))
    deg = {v: len(e) for v, e in adj.items()}
    removed: set[tuple[int, int]] = set()
    stack = [v for v, d in deg.items() if d == 1]
    while stack:
        v = stack.pop()
        if deg[v] != 1:
            continue
        for u, cell in adj[v]:
            if cell not in removed:
                removed.add(cell)
                deg[v] -= 1
                deg[u] -= 1
                if deg[u] == 1:
                    stack.append(u)
    return sorted((r + 1, c + 1) for r in range(h) for c in range(w) if (r, c) not in removed)


def _all_clues(sol) -> tuple[tuple[int, ...], ...]:
    h, w = len(sol), len(sol[0])
    return tuple(tuple(_touching(sol, w, h, r, c) for c in range(w + 1)) for r in range(h + 1))


def _random_filling(w: int, h: int, rng: random.Random):
    """A random loop-free filling: each cell (random order) takes a diagonal closing no loop (one always fits)."""
    parent = list(range((w + 1) * (h + 1)))
    grid = [[None] * w for _ in range(h)]
    order = [(r, c) for r in range(h) for c in range(w)]
    rng.shuffle(order)
    for r, c in order:
        options = []
        for sym in (BACK, FWD):
            a, b = _ends(w, r, c, sym)
            if _find(parent, a) != _find(parent, b):
                options.append(sym)
        sym = rng.choice(options)  # never empty: the two diagonals of a cell cannot both close a loop
        a, b = _ends(w, r, c, sym)
        parent[_find(parent, a)] = _find(parent, b)
        grid[r][c] = sym
    return tuple(tuple(row) for row in grid)


def _model(w: int, h: int, clues):
    """CP-SAT model: x[r][c] = 1 iff cell (r, c) holds ``\\``; clue sums. The no-loop rule comes as lazy cuts."""
    model = new_model()
    xs = [[model.NewBoolVar(f"b{r}_{c}") for c in range(w)] for r in range(h)]
    for (r, c), n in _clue_items(clues):
        lits = [xs[cr][cc] if sym == BACK else xs[cr][cc].Not() for (cr, cc), sym in _around(w, h, r, c)]
        model.Add(sum(lits) == n)
    return model, xs


def _to_grid(values, w, h):
    return tuple(tuple(BACK if values[r * w + c] else FWD for c in range(w)) for r in range(h))


def _cycle_cells(grid, w, h):
    """One cycle's cells with their symbols ((r, c), sym), 0-based, or ``None``."""
    loop = _loop_cells(grid, w, h)
    if not loop:
        return None
    # _loop_cells returns the 2-core, possibly several cycles; forbidding the whole 2-core is still a valid cut
    # (any filling containing it contains a cycle), and it is small.
    return [((r - 1, c - 1), grid[r - 1][c - 1]) for r, c in loop]


class _LoopCut:
    """Lazy cut for :func:`lazy_enumerate`: forbid the candidate's loop cells taking the same diagonals again."""

    def __init__(self, w, h, xs, sink: list | None = None):
        self.w, self.h, self.xs, self.sink = w, h, xs, sink

    def __call__(self, values):
        grid = _to_grid(values, self.w, self.h)
        cyc = _cycle_cells(grid, self.w, self.h)
        if cyc is None:
            return []
        if self.sink is not None:
            self.sink.append(tuple(cyc))
        xs = self.xs

        def add(model, cyc=cyc):
            model.AddBoolOr([xs[r][c].Not() if s == BACK else xs[r][c] for (r, c), s in cyc])

        return [add]


def _has_other_solution(w, h, clues, sol, cuts: list) -> bool:
    """Whether the clue array admits a valid solution other than ``sol`` (CP-SAT with lazy loop cuts, cached)."""
    model, xs = _model(w, h, clues)
    for cyc in cuts:
        model.AddBoolOr([xs[r][c].Not() if s == BACK else xs[r][c] for (r, c), s in cyc])
    flat = [x for row in xs for x in row]
    model.AddBoolOr([x.Not() if sol[i // w][i % w] == BACK else x for i, x in enumerate(flat)])
    found, _ = lazy_enumerate(model, flat, 1, _LoopCut(w, h, xs, cuts))
    return bool(found)


PUZZLE = register_puzzle(Slant())
