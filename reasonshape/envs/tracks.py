"""Tracks (Train Tracks) from Simon Tatham's Portable Puzzle Collection.

Rules
-----
Lay a railway track through some cells of a ``W x H`` grid. It enters the grid through the left side of the
entrance cell A (in column 1) and leaves it through the bottom side of the exit cell B (in row ``H``). Each cell is
either empty or holds one track piece joining two of its four sides: straight (left-right, up-down) or curved
(left-up, left-down, right-up, right-down). Pieces join up with their neighbours (a side used by a piece is used by
the neighbouring cell's piece too), the track never leaves the grid except at A and B, and all track cells form one
single path from A to B (no separate loops). The number beside each row / column is how many of its cells hold
track. Some pieces are given. Source: the collection's ``tracks.c`` (``check_completion``).

Game IDs
--------
Params ``<W>x<H>d<c>[o]``: difficulty ``c`` in ``e`` (easy), ``t`` (tricky), ``h`` (hard); ``o`` (full form only)
allows consecutive 1 clues in generation. The short form omits ``d<c>[o]`` (then tricky, the collection's
default). Desc: the ``W*H`` cells in row-major order, a letter ``a``..``z`` being a run of 1..26 cells without a
given piece and a hex digit ``0``..``9``/``A``..``F`` a given piece as a bit set (R = 1, U = 2, L = 4, D = 8;
two bits); then ``W`` column counts and ``H`` row counts, each as ``,<n>``, with ``S`` before the count of the exit
column and of the entrance row (``,S4``). The collection's ``SOLVE`` move is ``S`` then ``;``-separated moves
``T<d>x,y`` (track on side ``d`` in ``RULD`` of cell ``x,y``, 0-based), ``N<d>x,y`` (no track there), ``TSx,y`` /
``NSx,y`` (the cell has / has no track).

Coordinates
-----------
Cells are 1-based ``(row, column)``, ``1..H`` x ``1..W``. Sides: ``L`` left, ``R`` right, ``U`` up, ``D`` down.

Answer format
-------------
``H`` lines of ``W`` tokens separated by spaces: ``.`` for an empty cell, or a piece named by the two sides it
joins: ``LR`` (horizontal), ``UD`` (vertical), ``LU``, ``LD``, ``RU``, ``RD`` (corners); the letters may come in
either order, and the box-drawing characters ``─ │ ┘ ┐ └ ┌`` are read as the same pieces. The solution value is
the ``H x W`` tuple of canonical tokens (``"."``, ``"LR"``, ``"LU"``, ``"LD"``, ``"RU"``, ``"RD"``, ``"UD"``).

Claims and C*
-------------
* ``"value"``: ``Claim("value", ((r, c),), "LR")`` "(r,c) is LR" / "(r,c) is empty" / "(r,c) is not RD".
* ``"track"``: ``Claim("track", ((r, c),))`` "(r,c) has track" / "(r,c) has no track".
* ``"edge"``: ``Claim("edge", (cell1, cell2))`` "the track runs between (r,c) and (r,c+1)" / "... does not run
  between ..." (cells are the two neighbouring 1-based cells, sorted).
* ``"row_count"`` / ``"col_count"``: ``Claim("row_count", ((r, 1),), n)`` "row r has n track cells" (anchor cell
  in column 1; columns: anchor in row 1). Given, static.
* ``"entrance"`` / ``"exit"``: ``Claim("entrance", ((r, 1),))`` "the track enters at (r,1)" /
  ``Claim("exit", ((H, c),))`` "the track exits at (H,c)". Given, static.

C* (reasonshape choice, as tents' "one claim per tent"): one positive value claim per track cell whose piece is not
given; empty cells are implied.

Constraint view
---------------
Variables: the 1-based cells; domain: the tokens whose sides stay inside the grid (the entrance cell must use ``L``,
the exit cell ``D``; a given cell's domain is its piece). Units: ``"row r"`` / ``"column c"`` (number of track
cells equals the count, premise the count claim) and ``"the side between (r,c) and (r,c+1)"`` / ``"... and
(r+1,c)"`` (both cells use the shared side, or neither). Global rule, not a unit: **one path** (no track cell off
the path from A to B, i.e. no separate loop). The solver enforces it exactly with lazy cuts (a loop found in a
candidate is forbidden as a whole); :meth:`Tracks.check` by walking the track from A.

Levels
------
=========  ==========  ====================================================================
level      params      native generator
=========  ==========  ====================================================================
trivial    ``4x4de``   4x4, keeps at least 30% of the track cells as given pieces
easy       ``5x5de``   5x5, keeps at least 30% of the track cells as given pieces
normal     ``6x6dt``   6x6, keeps at least 15% of the track cells as given pieces
hard       ``8x8dh``   8x8, minimal set of given pieces (besides A and B)
=========  ==========  ====================================================================

The native generator lays a random self-avoiding path from A to the bottom edge (as ``lay_path`` does; grids with
an empty row or column, or consecutive 1 counts unless ``o``, are redrawn as in ``new_game_desc``), gives the A and
B pieces, adds given pieces where another solution differs until CP-SAT proves the solution unique, then removes
given pieces in random order while it stays unique, down to the density of the difficulty letter (``e`` 30%,
``t`` 15%, ``h`` minimal). Difficulty comes from grid size and clue density, never from rule changes (reasonshape
choice).
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
    mask_long_numbers,
    parse_wxh,
    read_difficulty,
    read_int,
    solve_move_items,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["TracksParams", "TracksData", "Tracks", "PUZZLE"]

_DIFFS = {"e": "easy", "t": "tricky", "h": "hard"}
#: Fraction of track cells kept as given pieces by the native generator (reasonshape choice).
_KEEP = {"e": 0.3, "t": 0.15, "h": 0.0}
_BIT = {"R": 1, "U": 2, "L": 4, "D": 8}
_DELTA = {"R": (0, 1), "L": (0, -1), "U": (-1, 0), "D": (1, 0)}
_OPP = {"R": "L", "L": "R", "U": "D", "D": "U"}
EMPTY = "."
PIECES = ("LR", "LU", "LD", "RU", "RD", "UD")
_ORDER = "LRUD"


def _canon(sides) -> str:
    return "".join(sorted(sides, key=_ORDER.index))


_SYMBOLS: dict[str, str] = {EMPTY: EMPTY, "X": EMPTY, "-": "LR", "─": "LR", "│": "UD", "┘": "LU", "┐": "LD",
                            "└": "RU", "┌": "RD"}
for _p in PIECES:
    _SYMBOLS[_p] = _p
    _SYMBOLS[_p[::-1]] = _p


@dataclass(frozen=True)
class TracksParams:
    """Tracks params: ``w`` x ``h`` cells (each >= 4), ``diff`` in ``e/t/h``, ``single_ones`` (no ``o`` flag)."""

    w: int
    h: int
    diff: str = "t"
    single_ones: bool = True


@dataclass(frozen=True)
class TracksData:
    """A parsed desc: ``clues`` (``H x W`` tokens or ``None``), ``col_counts`` (``W``), ``row_counts`` (``H``),
    ``col_s`` (0-based exit column) and ``row_s`` (0-based entrance row)."""

    clues: tuple[tuple[str | None, ...], ...]
    col_counts: tuple[int, ...]
    row_counts: tuple[int, ...]
    col_s: int
    row_s: int


class _CountAllowed:
    def __init__(self, n: int):
        self.n = n

    def __call__(self, values: tuple) -> bool:
        return sum(v != EMPTY for v in values) == self.n


class _SideAllowed:
    def __init__(self, a: str, b: str):
        self.a, self.b = a, b

    def __call__(self, values: tuple) -> bool:
        return (self.a in values[0]) == (self.b in values[1])


class Tracks(Puzzle):
    """Tracks: one path of track pieces from A to B matching row/column counts. See the module docstring."""

    name = "tracks"
    LEVELS = {"trivial": "4x4de", "easy": "5x5de", "normal": "6x6dt", "hard": "8x8dh"}
    ANSWER_SYMBOLS = {
        ".": "an empty cell (no track)",
        "LR": "a straight piece joining the left and right sides (─)",
        "UD": "a straight piece joining the top and bottom sides (│)",
        "LU": "a curve joining the left and top sides (┘)",
        "LD": "a curve joining the left and bottom sides (┐)",
        "RU": "a curve joining the right and top sides (└)",
        "RD": "a curve joining the right and bottom sides (┌)",
    }
    CLAIM_KINDS = ("value", "track", "edge", "row_count", "col_count", "entrance", "exit")
    VALUE_WORDS = {**{k.lower(): v for k, v in _SYMBOLS.items() if k not in ".X"},
                   "horizontal": "LR", "vertical": "UD", "empty": EMPTY, "blank": EMPTY}

    # ----------------------------------------------------------------- params and game IDs
    def parse_params(self, text: str) -> TracksParams:
        """Parse ``"8x8dh"`` / ``"8x8dto"`` / ``"8x8"`` into :class:`TracksParams`.

        Raises
        ------
        GameIdError
            Malformed text, a side outside 4..99, or an unknown difficulty letter.
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '8x8dt'")
        w, h, i = parse_wxh(text, min_side=4)
        single = True
        diff, i = read_difficulty(text, i, _DIFFS, "t", "a difficulty letter e, t or h after 'd'")
        if i < len(text) and text[i] == "o":
            single, i = False, i + 1
        if i != len(text):
            raise GameIdError(text, i, "end of params (format <W>x<H>d<e|t|h>[o])")
        return TracksParams(w, h, diff, single)

    def format_params(self, params: TracksParams, full: bool = True) -> str:
        """``"8x8dh"`` (full, ``o`` appended when ``single_ones`` is off) or ``"8x8"`` (short)."""
        base = f"{params.w}x{params.h}"
        return f"{base}d{params.diff}{'' if params.single_ones else 'o'}" if full else base

    def parse_desc(self, params: TracksParams, desc: str) -> Instance:
        """Parse the cells and the counts (see the module docstring) into :class:`TracksData`.

        Raises
        ------
        GameIdError
            An unexpected character, a given piece without exactly two sides, a wrong cell or count number, or
            not exactly one entrance row and one exit column marked ``S``.
        """
        w, h = params.w, params.h
        cells: list = []
        i = 0
        while len(cells) < w * h:
            if i >= len(desc):
                raise GameIdError(desc, i, f"{w * h} cells, got {len(cells)}")
            ch = desc[i]
            if "a" <= ch <= "z":
                cells.extend([None] * (ord(ch) - ord("a") + 1))
            elif ch in "0123456789ABCDEF":
                f = int(ch, 16)
                if f == 0:
                    cells.append(None)
                else:
                    sides = [s for s, b in _BIT.items() if f & b]
                    if len(sides) != 2:
                        raise GameIdError(desc, i, "a given piece with exactly two sides (hex 3,5,6,9,A,C)")
                    cells.append(_canon(sides))
            else:
                raise GameIdError(desc, i, "a run letter a-z or a piece hex digit 0-9/A-F")
            if len(cells) > w * h:
                raise GameIdError(desc, i, f"exactly {w * h} cells")
            i += 1
        counts, s_marks = [], []
        for k in range(w + h):
            if i >= len(desc) or desc[i] != ",":
                raise GameIdError(desc, i, f"',' before count {k + 1} of {w + h} (columns, then rows)")
            i += 1
            if i < len(desc) and desc[i] == "S":
                s_marks.append(k)
                i += 1
            n, i = read_int(desc, i, "a track count (digits)")
            counts.append(n)
        if i != len(desc):
            raise GameIdError(desc, i, "end of desc after the counts")
        cols = [k for k in s_marks if k < w]
        rows = [k - w for k in s_marks if k >= w]
        if len(cols) != 1 or len(rows) != 1:
            raise GameIdError(desc, len(desc), "exactly one 'S' among the column counts (exit) and one among the "
                                               "row counts (entrance)")
        data = TracksData(tuple(tuple(cells[r * w:(r + 1) * w]) for r in range(h)), tuple(counts[:w]),
                          tuple(counts[w:]), cols[0], rows[0])
        return Instance(self.name, params, desc, data)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: TracksParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        for _ in range(500):
            sol, row_s, col_s = _lay_path(w, h, rng)
            cols = tuple(sum(sol[r][c] != EMPTY for r in range(h)) for c in range(w))
            rows = tuple(sum(sol[r][c] != EMPTY for c in range(w)) for r in range(h))
            counts = cols + rows
            if 0 in counts:
                continue  # "too boring", as the collection
            if params.single_ones and (_consecutive_ones(counts) or counts[-1] == 1):
                continue
            break
        else:
            raise GenerationError(f"tracks: no acceptable path on {w}x{h}")
        fixed = {(row_s, 0), (h - 1, col_s)}
        given = set(fixed)
        track_cells = [(r, c) for r in range(h) for c in range(w) if sol[r][c] != EMPTY]
        cuts: list = []
        while True:
            other = _other_solution(w, h, _data(sol, given, cols, rows, col_s, row_s), sol, cuts)
            if other is None:
                break
            diff = [cell for cell in track_cells if other[cell[0]][cell[1]] != sol[cell[0]][cell[1]]
                    and cell not in given]
            if not diff:  # the other solution only adds track where ours has none: give a neighbour piece
                diff = [cell for cell in track_cells if cell not in given]
            given.add(rng.choice(sorted(diff)))
        floor = int(round(_KEEP[params.diff] * len(track_cells)))
        removable = sorted(given - fixed)
        rng.shuffle(removable)
        for cell in removable:
            if len(given) - 2 <= floor:
                break
            given.discard(cell)
            if _other_solution(w, h, _data(sol, given, cols, rows, col_s, row_s), sol, cuts) is not None:
                given.add(cell)
        data = _data(sol, given, cols, rows, col_s, row_s)
        return Instance(self.name, params, encode_desc(data), data)

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid with counts and given pieces, the answer tokens and the ``<answer>`` instruction."""
        p, d = instance.params, instance.data
        width = 3
        head = " " * 4 + "".join(f"{n:<{width}}" for n in d.col_counts)
        lines = [head]
        for r in range(p.h):
            row = "".join(f"{(v or '?'):<{width}}" for v in d.clues[r])
            mark = "  <- A: the track enters here from the left" if r == d.row_s else ""
            lines.append(f"{d.row_counts[r]:>2}  {row.rstrip()}{mark}")
        lines.append(" " * (4 + width * d.col_s) + "B  (the track leaves through the bottom of this column)")
        grid = "\n".join(lines)
        sym = "\n".join(f"- {k}: {v}" for k, v in self.ANSWER_SYMBOLS.items())
        return (
            f"Solve this Train Tracks puzzle on a grid of {p.h} rows and {p.w} columns.\n\n"
            "Rules:\n"
            f"- Lay one railway track that enters the grid from the left side of cell ({d.row_s + 1},1) (A) and "
            f"leaves it through the bottom side of cell ({p.h},{d.col_s + 1}) (B).\n"
            "- Every cell is either empty or holds one piece of track that joins two of its four sides: a straight "
            "piece (left-right or up-down) or a curve (left-up, left-down, right-up, right-down).\n"
            "- Pieces must connect: if a piece uses a side of its cell, the neighbouring cell across that side "
            "holds a piece that uses the same side. The track may leave the grid only at A and B.\n"
            "- All track cells form one single path from A to B: no separate loops, no branches, no crossings.\n"
            "- The number left of each row and above each column is how many cells of that row or column hold "
            "track.\n"
            "- Pieces shown in the grid are given and must be kept.\n\n"
            "Coordinates are 1-based (row, column), rows from top to bottom, columns from left to right.\n\n"
            "The grid (column counts on top, row counts on the left; '?' = unknown cell, a letter pair = a given "
            "piece named by the sides it joins: L left, R right, U up, D down):\n"
            f"{grid}\n\n"
            f"Answer format: {p.h} lines, one per row from top to bottom, each with {p.w} tokens separated by "
            f"spaces:\n{sym}\n"
            "For example, a row could read: . RD LR LD\n\n"
            "Think it through, then put only the final grid inside <answer>...</answer>."
        )

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``H x W`` grid of tokens (see the module docstring) from the last ``<answer>`` block or the
        last grid-shaped block.

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong size, or an unknown token.
        """
        p = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, _SYMBOLS, single_chars=True)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """Tokens separated by spaces, one row per line (inverse of :meth:`parse_answer`)."""
        return format_grid(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: ``shape``/``symbol``, ``given_piece``, ``entrance``, ``exit``, ``off_grid``,
        ``dangling`` (a piece whose neighbour does not connect back), ``row_count``, ``col_count`` and
        ``disconnected`` (track cells off the single path from A to B: a separate loop or piece). O(W*H)."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        if (not isinstance(grid, (tuple, list)) or len(grid) != h
                or any(not isinstance(row, (tuple, list)) or len(row) != w for row in grid)):
            return CheckResult(False, (Violation("shape", f"expected {h} rows of {w} cells"),))
        bad = [(r + 1, c + 1) for r in range(h) for c in range(w)
               if not isinstance(grid[r][c], str) or grid[r][c] not in _VALID]
        if bad:
            return CheckResult(False, (Violation("symbol", "each cell is '.' or a piece LR/UD/LU/LD/RU/RD",
                                                 tuple(bad)),))
        out = []
        for r in range(h):
            for c in range(w):
                g = d.clues[r][c]
                if g is not None and grid[r][c] != g:
                    out.append(Violation("given_piece", f"({r + 1},{c + 1}) must keep its given piece {g}",
                                         ((r + 1, c + 1),)))
        if "L" not in grid[d.row_s][0]:
            out.append(Violation("entrance", f"the track must enter ({d.row_s + 1},1) from the left",
                                 ((d.row_s + 1, 1),)))
        if "D" not in grid[h - 1][d.col_s]:
            out.append(Violation("exit", f"the track must leave ({h},{d.col_s + 1}) through the bottom",
                                 ((h, d.col_s + 1),)))
        for r in range(h):
            for c in range(w):
                for s in grid[r][c] if grid[r][c] != EMPTY else "":
                    dr, dc = _DELTA[s]
                    rr, cc = r + dr, c + dc
                    if not (0 <= rr < h and 0 <= cc < w):
                        if not ((r, c, s) == (d.row_s, 0, "L") or (r, c, s) == (h - 1, d.col_s, "D")):
                            out.append(Violation("off_grid", f"the piece at ({r + 1},{c + 1}) leaves the grid "
                                                             f"through side {s}", ((r + 1, c + 1),)))
                    elif _OPP[s] not in grid[rr][cc]:
                        out.append(Violation("dangling", f"the piece at ({r + 1},{c + 1}) uses side {s} but "
                                                         f"({rr + 1},{cc + 1}) does not connect back",
                                             ((r + 1, c + 1), (rr + 1, cc + 1))))
        for r in range(h):
            n = sum(v != EMPTY for v in grid[r])
            if n != d.row_counts[r]:
                out.append(Violation("row_count", f"row {r + 1} has {n} track cells, needs {d.row_counts[r]}",
                                     tuple((r + 1, c + 1) for c in range(w))))
        for c in range(w):
            n = sum(grid[r][c] != EMPTY for r in range(h))
            if n != d.col_counts[c]:
                out.append(Violation("col_count", f"column {c + 1} has {n} track cells, needs {d.col_counts[c]}",
                                     tuple((r + 1, c + 1) for r in range(h))))
        on_path = _walk(grid, w, h, d.row_s)
        off = tuple((r + 1, c + 1) for r in range(h) for c in range(w)
                    if grid[r][c] != EMPTY and (r, c) not in on_path)
        if off:
            out.append(Violation("disconnected", "track cells not on the single path from A to B "
                                                 "(a separate loop or piece)", off))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p = instance.params
        model, eh, ev, flat = _model(p.w, p.h, instance.data)
        sols, exhausted = lazy_enumerate(model, flat, max_solutions, _LoopCut(p.w, p.h, instance.data, eh, ev))
        return SolveResult(tuple(_pieces(s, p.w, p.h, instance.data) for s in sols), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """``S;TR0,0;NU0,0;...`` (``tracks.c`` ``execute_move``: ``T``/``t`` lays / removes track on side ``R``/
        ``U``/``L``/``D`` of cell x,y (0-based column, row), ``N``/``n`` marks no track, side ``S`` flags the square)
        applied to the given pieces -> the ``H x W`` grid of tokens.

        Raises
        ------
        ConfigError
            Not ``S;`` and at least one item, a malformed item, a cell off the grid
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        sides = [[set() for _ in range(w)] for _ in range(h)]
        for r, row in enumerate(d.clues):  # a given piece also marks the neighbour's side, as new_game does
            for c, g in enumerate(row):
                for s in g or "":
                    sides[r][c].add(s)
                    rr, cc = r + _DELTA[s][0], c + _DELTA[s][1]
                    if 0 <= rr < h and 0 <= cc < w:
                        sides[rr][cc].add(_OPP[s])
        for part in solve_move_items(self.name, move):
            m = re.fullmatch(rf"([TtNn])([RULDS]){MOVE_NUM},{MOVE_NUM}", part)
            if m is None:
                raise bad_solve_move(self.name, move, f"item {part!r} is not [TtNn][RULDS]<x>,<y>")
            kind, s, x, y = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
            if not (0 <= x < w and 0 <= y < h):
                raise bad_solve_move(self.name, move, f"item {part!r} is off the grid")
            if s == "S" or kind in "Nn":
                continue  # square flags and no-track marks do not change the laid track
            add = kind == "T"
            dr, dc = _DELTA[s]
            for (r, c, side) in ((y, x, s), (y + dr, x + dc, _OPP[s])):
                if 0 <= r < h and 0 <= c < w:
                    (sides[r][c].add if add else sides[r][c].discard)(side)
        return tuple(tuple(_canon(s) if s else EMPTY for s in row) for row in sides)

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Cell, track and edge claims against the solution; counts, entrance and exit against the instance.
        Raises :class:`ClaimError` for an unknown kind, a cell off the grid, a wrong number of cells, a cell value
        outside ``.`` and the pieces, a count claim not anchored at ``(r, 1)`` (rows) / ``(1, c)`` (columns) or
        whose count is not an integer ``0..w`` (rows) / ``0..h`` (columns), or a track, edge, entrance or exit
        claim with a value (they take ``None``); for either polarity."""
        p, d = instance.params, instance.data
        for cell in claim.cells:
            self._check_cell(instance, cell, p.h, p.w)
        k = claim.kind
        if k in ("value", "track", "row_count", "col_count", "entrance", "exit") and len(claim.cells) != 1:
            raise ClaimError(f"tracks: a {k} claim names one cell, got {claim.cells}")
        if k == "value":
            if claim.value not in _VALID:
                raise ClaimError(f"tracks: a cell value is '.' or one of {PIECES}, got {claim.value!r}")
            (r, c), = claim.cells
            return (solution[r - 1][c - 1] == claim.value) == claim.positive
        if k == "track":
            self._claim_no_value(claim)
            (r, c), = claim.cells
            return (solution[r - 1][c - 1] != EMPTY) == claim.positive
        if k == "edge":
            a, b = self._edge(claim.cells)
            self._claim_no_value(claim)
            side = "R" if a[0] == b[0] else "D"
            return (side in solution[a[0] - 1][a[1] - 1]) == claim.positive
        if k in ("row_count", "col_count"):
            self._claim_line(claim, p.h, p.w, row=k == "row_count")
            # a row holds w cells, a column h: no line holds more track cells
            self._claim_number(claim, 0, p.w if k == "row_count" else p.h, "a count")
        if k in ("entrance", "exit"):
            self._claim_no_value(claim)
        if k == "row_count":
            (r, _), = claim.cells
            return (d.row_counts[r - 1] == claim.value) == claim.positive
        if k == "col_count":
            (_, c), = claim.cells
            return (d.col_counts[c - 1] == claim.value) == claim.positive
        if k == "entrance":
            (r, c), = claim.cells
            return ((r - 1, c) == (d.row_s, 1)) == claim.positive
        if k == "exit":
            (r, c), = claim.cells
            return ((r, c - 1) == (p.h, d.col_s)) == claim.positive
        raise ClaimError(f"tracks: unknown claim kind {k!r}; known: {self.CLAIM_KINDS}")

    @staticmethod
    def _edge(cells):
        if len(cells) != 2:
            raise ClaimError(f"tracks: an edge claim names two neighbouring cells, got {cells}")
        a, b = sorted(tuple(x) for x in cells)
        if not ((a[0] == b[0] and b[1] == a[1] + 1) or (a[1] == b[1] and b[0] == a[0] + 1)):
            raise ClaimError(f"tracks: cells {a} and {b} are not neighbours")
        return a, b

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per track cell whose piece is not given."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), v) for r, row in enumerate(sol) for c, v in enumerate(row)
                         if v != EMPTY and instance.data.clues[r][c] is None)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """Given pieces (value claims), row and column counts, entrance and exit."""
        p, d = instance.params, instance.data
        out = [Claim("value", ((r + 1, c + 1),), g) for r, row in enumerate(d.clues) for c, g in enumerate(row)
               if g is not None]
        out += [Claim("row_count", ((r + 1, 1),), n) for r, n in enumerate(d.row_counts)]
        out += [Claim("col_count", ((1, c + 1),), n) for c, n in enumerate(d.col_counts)]
        out += [Claim("entrance", ((d.row_s + 1, 1),)), Claim("exit", ((p.h, d.col_s + 1),))]
        return tuple(out)

    def claim_text(self, claim: Claim) -> str:
        """One sentence per claim, e.g. ``"(2,3) is LR"``, ``"(2,3) has no track"``, ``"the track runs between
        (2,3) and (2,4)"``, ``"row 2 has 3 track cells"``, ``"the track enters at (3,1)"``."""
        k, neg = claim.kind, not claim.positive
        if k == "value":
            (r, c), = claim.cells
            word = "empty" if claim.value == EMPTY else claim.value
            return f"({r},{c}) is {'not ' if neg else ''}{word}"
        if k == "track":
            (r, c), = claim.cells
            return f"({r},{c}) has {'no ' if neg else ''}track"
        if k == "edge":
            (a, b) = claim.cells
            return f"the track {'does not run' if neg else 'runs'} between ({a[0]},{a[1]}) and ({b[0]},{b[1]})"
        if k in ("row_count", "col_count"):
            (r, c), = claim.cells
            line = f"row {r}" if k == "row_count" else f"column {c}"
            return f"{line} has {'not ' if neg else ''}{claim.value} track cells"
        (r, c), = claim.cells
        verb = "enters" if k == "entrance" else "exits"
        return f"the track {'does not ' + verb[:-1] if neg else verb} at ({r},{c})"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read track, edge, count, entrance and exit claims as :meth:`claim_text` writes them (linear scans)."""
        text = mask_long_numbers(text)
        out = []
        for m in _TRACK_RE.finditer(text):
            out.append((Claim("track", ((int(m.group(1)), int(m.group(2))),), None, not m.group(3)),
                        m.start(), m.end()))
        for m in _EDGE_RE.finditer(text):
            try:
                a, b = self._edge(((int(m.group(2)), int(m.group(3))), (int(m.group(4)), int(m.group(5)))))
            except ClaimError:
                continue
            out.append((Claim("edge", (a, b), None, m.group(1) is None), m.start(), m.end()))
        for m in _COUNT_RE.finditer(text):
            kind = "row_count" if m.group(1).lower() == "row" else "col_count"
            i = int(m.group(2))
            cell = (i, 1) if kind == "row_count" else (1, i)
            out.append((Claim(kind, (cell,), int(m.group(4)), not m.group(3)), m.start(), m.end()))
        for m in _ENDS_RE.finditer(text):
            kind = "entrance" if m.group(2).lower().startswith("enter") else "exit"
            out.append((Claim(kind, ((int(m.group(3)), int(m.group(4))),), None, not m.group(1)),
                        m.start(), m.end()))
        return sorted(out, key=lambda t: t[1])

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every 1-based cell -> the tokens allowed there by the grid border, A, B and the given pieces."""
        p, d = instance.params, instance.data
        return {(r + 1, c + 1): _domain(p.w, p.h, d, r, c) for r in range(p.h) for c in range(p.w)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """``"row r"`` / ``"column c"`` count units and one unit per shared side of two neighbouring cells."""
        p, d = instance.params, instance.data
        out = []
        for r in range(p.h):
            out.append(Unit(f"row {r + 1}", tuple((r + 1, c + 1) for c in range(p.w)), _CountAllowed(d.row_counts[r]),
                            (Claim("row_count", ((r + 1, 1),), d.row_counts[r]),)))
        for c in range(p.w):
            out.append(Unit(f"column {c + 1}", tuple((r + 1, c + 1) for r in range(p.h)),
                            _CountAllowed(d.col_counts[c]), (Claim("col_count", ((1, c + 1),), d.col_counts[c]),)))
        for r in range(1, p.h + 1):
            for c in range(1, p.w + 1):
                if c < p.w:
                    out.append(Unit(f"the side between ({r},{c}) and ({r},{c + 1})", ((r, c), (r, c + 1)),
                                    _SideAllowed("R", "L")))
                if r < p.h:
                    out.append(Unit(f"the side between ({r},{c}) and ({r + 1},{c})", ((r, c), (r + 1, c)),
                                    _SideAllowed("D", "U")))
        return tuple(out)


_VALID = frozenset((EMPTY,) + PIECES)
_TRACK_RE = re.compile(r"\((\d+),\s*(\d+)\) has (no )?track\b", re.I)
_EDGE_RE = re.compile(r"track (?:(does not) run|runs) between \((\d+),\s*(\d+)\) and \((\d+),\s*(\d+)\)", re.I)
_COUNT_RE = re.compile(r"\b(row|column) (\d+) has (not )?(\d+) track cells", re.I)
_ENDS_RE = re.compile(r"track (does not )?(enters?|exits?|enter|exit) at \((\d+),\s*(\d+)\)", re.I)


def encode_desc(data: TracksData) -> str:
    """The collection's desc for :class:`TracksData` (as ``new_game_desc`` writes it)."""
    out: list[str] = []
    for row in data.clues:
        for g in row:
            if g is None:
                if out and "a" <= out[-1] < "z":
                    out[-1] = chr(ord(out[-1]) + 1)
                else:
                    out.append("a")
            else:
                f = sum(_BIT[s] for s in g)
                out.append(str(f) if f < 10 else chr(ord("A") + f - 10))
    for c, n in enumerate(data.col_counts):
        out.append(f",{'S' if c == data.col_s else ''}{n}")
    for r, n in enumerate(data.row_counts):
        out.append(f",{'S' if r == data.row_s else ''}{n}")
    return "".join(out)


def _consecutive_ones(counts) -> bool:
    last = True  # the collection also refuses a 1 as the first count
    for n in counts:
        if n == 1 and last:
            return True
        last = n == 1
    return False


def _data(sol, given, cols, rows, col_s, row_s) -> TracksData:
    h, w = len(sol), len(sol[0])
    clues = tuple(tuple(sol[r][c] if (r, c) in given else None for c in range(w)) for r in range(h))
    return TracksData(clues, tuple(cols), tuple(rows), col_s, row_s)


def _lay_path(w: int, h: int, rng: random.Random):
    """A random self-avoiding walk from the left of a random row to below the bottom row (``lay_path``)."""
    while True:
        row_s = rng.randrange(h)
        sides = [[set() for _ in range(w)] for _ in range(h)]
        r, c = row_s, 0
        sides[r][c].add("L")
        used = {(r, c)}
        while True:
            dirs = ["U", "D", "L", "R"]
            rng.shuffle(dirs)
            step = None
            for s in dirs:
                rr, cc = r + _DELTA[s][0], c + _DELTA[s][1]
                if rr == h and 0 <= cc < w:
                    step = (s, None)
                    break
                if 0 <= rr < h and 0 <= cc < w and (rr, cc) not in used:
                    step = (s, (rr, cc))
                    break
            if step is None:
                break  # stuck: restart
            s, nxt = step
            sides[r][c].add(s)
            if nxt is None:
                grid = tuple(tuple(_canon(x) if x else EMPTY for x in row) for row in sides)
                return grid, row_s, c
            sides[nxt[0]][nxt[1]].add(_OPP[s])
            used.add(nxt)
            r, c = nxt


def _walk(grid, w, h, row_s) -> set[tuple[int, int]]:
    """Cells reached by following the pieces from A (stops at a broken connection)."""
    seen: set[tuple[int, int]] = set()
    r, c, came = row_s, 0, "L"
    while 0 <= r < h and 0 <= c < w and (r, c) not in seen:
        piece = grid[r][c]
        if piece == EMPTY or came not in piece:
            break
        seen.add((r, c))
        out = piece.replace(came, "", 1)
        dr, dc = _DELTA[out]
        r, c, came = r + dr, c + dc, _OPP[out]
    return seen


def _domain(w, h, d: TracksData, r: int, c: int) -> tuple[str, ...]:
    if d.clues[r][c] is not None:
        return (d.clues[r][c],)
    out = []
    entrance, exit_ = (r, c) == (d.row_s, 0), (r, c) == (h - 1, d.col_s)
    for tok in (EMPTY,) + PIECES:
        if tok == EMPTY:
            if not (entrance or exit_):
                out.append(tok)
            continue
        if entrance and "L" not in tok or exit_ and "D" not in tok:
            continue
        ok = True
        for s in tok:
            rr, cc = r + _DELTA[s][0], c + _DELTA[s][1]
            if not (0 <= rr < h and 0 <= cc < w) and not ((entrance and s == "L") or (exit_ and s == "D")):
                ok = False
        if ok:
            out.append(tok)
    return tuple(out)


def _model(w: int, h: int, d: TracksData):
    """CP-SAT: one bool per inner side, cell degree 2*track (A and B sides fixed on), counts, given pieces."""
    model = new_model()
    eh = [[model.NewBoolVar(f"h{r}_{c}") for c in range(w - 1)] for r in range(h)]
    ev = [[model.NewBoolVar(f"v{r}_{c}") for c in range(w)] for r in range(h - 1)]
    t = [[model.NewBoolVar(f"t{r}_{c}") for c in range(w)] for r in range(h)]
    for r in range(h):
        for c in range(w):
            side = {}
            if c > 0:
                side["L"] = eh[r][c - 1]
            if c < w - 1:
                side["R"] = eh[r][c]
            if r > 0:
                side["U"] = ev[r - 1][c]
            if r < h - 1:
                side["D"] = ev[r][c]
            const = int((r, c) == (d.row_s, 0)) + int((r, c) == (h - 1, d.col_s))
            model.Add(sum(side.values()) + const == 2 * t[r][c])
            g = d.clues[r][c]
            if g is not None:
                model.Add(t[r][c] == 1)
                for s, var in side.items():
                    model.Add(var == int(s in g))
                if (r, c) == (d.row_s, 0) and "L" not in g or (r, c) == (h - 1, d.col_s) and "D" not in g:
                    model.Add(t[r][c] == 0)  # a given piece that cannot take the border side: infeasible
    for r in range(h):
        model.Add(sum(t[r]) == d.row_counts[r])
    for c in range(w):
        model.Add(sum(t[r][c] for r in range(h)) == d.col_counts[c])
    flat = [x for row in eh for x in row] + [x for row in ev for x in row]
    return model, eh, ev, flat


def _pieces(values, w, h, d: TracksData):
    nh = h * (w - 1)
    sides = [[set() for _ in range(w)] for _ in range(h)]
    sides[d.row_s][0].add("L")
    sides[h - 1][d.col_s].add("D")
    for r in range(h):
        for c in range(w - 1):
            if values[r * (w - 1) + c]:
                sides[r][c].add("R")
                sides[r][c + 1].add("L")
    for r in range(h - 1):
        for c in range(w):
            if values[nh + r * w + c]:
                sides[r][c].add("D")
                sides[r + 1][c].add("U")
    return tuple(tuple(_canon(s) if s else EMPTY for s in row) for row in sides)


class _LoopCut:
    """Lazy cut: a candidate with track cells off the A-B path has loops there; forbid each loop's sides."""

    def __init__(self, w, h, d, eh, ev, sink: list | None = None):
        self.w, self.h, self.d, self.eh, self.ev, self.sink = w, h, d, eh, ev, sink

    def __call__(self, values):
        grid = _pieces(values, self.w, self.h, self.d)
        on = _walk(grid, self.w, self.h, self.d.row_s)
        rest = {(r, c) for r in range(self.h) for c in range(self.w) if grid[r][c] != EMPTY} - on
        if not rest:
            return []
        sides = sorted({("h", r, c) if s == "R" else ("v", r, c) for r, c in rest for s in grid[r][c] if s in "RD"})
        if self.sink is not None:
            self.sink.append(tuple(sides))
        return [_cut_adder(sides, self.eh, self.ev)]


def _cut_adder(sides, eh, ev):
    lits = [eh[r][c] if k == "h" else ev[r][c] for k, r, c in sides]

    def add(model):
        model.AddBoolOr([x.Not() for x in lits])

    return add


def _other_solution(w, h, d: TracksData, sol, cuts: list):
    """A valid solution other than ``sol`` for ``d``, or ``None`` (lazy loop cuts cached in ``cuts``)."""
    model, eh, ev, flat = _model(w, h, d)
    for sides in cuts:
        _cut_adder(sides, eh, ev)(model)
    known = [int("R" in sol[r][c]) for r in range(h) for c in range(w - 1)] + \
        [int("D" in sol[r][c]) for r in range(h - 1) for c in range(w)]
    model.AddBoolOr([x.Not() if k else x for x, k in zip(flat, known, strict=True)])
    found, _ = lazy_enumerate(model, flat, 1, _LoopCut(w, h, d, eh, ev, cuts))
    return _pieces(found[0], w, h, d) if found else None


PUZZLE = register_puzzle(Tracks())
