"""Undead (Haunted Mirror Maze): place ghosts, vampires and zombies among diagonal mirrors.

Rules (Simon Tatham's Portable Puzzle Collection, ``undead.c``): every grid cell without a mirror holds exactly one
monster: a ghost, a vampire or a zombie, with given totals of each. A number outside the grid counts the monsters
visible along the line of sight that enters the grid there and bounces off the mirrors until it leaves. Monsters
do not block the view. A vampire is visible only directly (before the line has hit any mirror), a ghost only in a
mirror (after at least one reflection), a zombie always; a monster passed twice is counted twice.

Game IDs
--------
``params`` is ``<w>x<h>`` (short) or ``<w>x<h>d<diff>`` (full), ``diff`` ``e`` (Easy), ``n`` (Normal), ``t``
(Tricky); a bare ``<n>`` means ``n x n``; the short form means Normal; ``w, h >= 3`` and ``w <= 54 // h``
(``undead.c`` ``decode_params`` / ``validate_params``); an unknown difficulty letter and trailing characters,
which the collection ignores, are rejected. ``desc`` is ``<ghosts>,<vampires>,<zombies>,<grid>`` and
then ``2(w+h)`` comma-separated sighting counts. The grid is row-major: ``L`` a ``\\`` mirror, ``R`` a ``/``
mirror, ``G``/``V``/``Z`` a given monster, ``a``..``z`` a run of 1..26 empty cells; the number of non-mirror
cells must equal the three totals' sum. The counts go clockwise from the top-left corner: the top side left to
right (looking down), the right side top to bottom (looking left), the bottom side right to left (looking up),
the left side bottom to top (looking right) (``validate_desc`` / ``new_game`` / ``range2grid``). The ``SOLVE``
move is ``S`` followed by ``;G<k>`` / ``;V<k>`` / ``;Z<k>`` for the k-th non-mirror cell in row-major order
(``solve_game``).

Answer and claims
-----------------
The answer is the full grid, one row per line: ``G``, ``V`` or ``Z`` in every monster cell and the mirror copied
(``/`` or ``\\``; ``.`` is also accepted in a mirror cell). A solution is a tuple of ``h`` tuples of ``w`` symbols
from ``G V Z / \\``. Claim kinds:

* ``"value"``: ``Claim("value", ((r, c),), m)``, ``m`` in ``G V Z``: "(r,c) is a ghost / a vampire / a zombie";
* ``"sight"``: ``Claim("sight", (anchor,), (side, n))``, "3 monsters are visible from the top of column 2", with
  ``side`` in ``top/right/bottom/left`` and ``anchor`` the grid cell next to the count; true iff the solution
  shows ``n`` monsters there (so the given counts are true facts);
* ``"total"``: ``Claim("total", (), (m, n))``, "there are 2 ghosts": true iff the solution has ``n`` of ``m``;
* ``"mirror"``: ``Claim("mirror", ((r, c),), "/")``, "(r,c) holds a / mirror": a static fact of the grid.

C* (paper A §C; definition a reasonshape choice after paper A's solo example): one value claim per monster cell
that is not given. Given claims: the mirrors, the given monsters (value claims), the three totals and every
sighting count.

Constraint view
---------------
Variables are the non-mirror cells (1-based), domain ``('G', 'V', 'Z')`` (a given monster: that one value).
Units: one per sighting count, "the count 3 at the top of column 2", over the distinct monster cells of its line
of sight in viewing order, allowing exactly the assignments that show that many monsters (premise: the sight
claim); and "the total of 2 ghosts" / vampires / zombies over all monster cells (premise: the total claim).
Undead has no global rule: the units define the solutions exactly.

Levels
------
=======  ======  ==========================================================
level    params  native generator
=======  ======  ==========================================================
trivial  3x3de   3x3 grid
easy     4x4de   4x4 grid
normal   4x4dt   4x4 grid
hard     5x5dt   5x5 grid
=======  ======  ==========================================================

The native generator places mirrors at random (each cell a mirror with probability 2/5, keeping 48-78 % monster
cells, as ``undead.c`` does), fills the other cells with random monsters (at least two kinds), writes every
sighting count and the totals, and, while CP-SAT finds a second solution, turns one cell where the two solutions
differ into a given monster (the collection's desc supports givens). Difficulty comes from the grid size and the
number of givens, never from rule changes; the collection's grades are kept in the params but not reproduced
(``backend="sgt"`` gives graded puzzles). Source: reasonshape choice after paper A §A.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from reasonshape.envs._solver import enumerate_solutions, new_model
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
    read_difficulty,
    solve_move_items,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["UndeadParams", "UndeadData", "Undead", "PUZZLE", "SIDES"]

_DIFFS = "ent"
MONSTERS = ("G", "V", "Z")
MIRRORS = ("\\", "/")
_NAMES = {"G": "ghost", "V": "vampire", "Z": "zombie"}
SIDES = ("top", "right", "bottom", "left")
_MAX_ATTEMPTS = 2000


@dataclass(frozen=True)
class UndeadParams:
    """Undead params: width ``w``, height ``h`` (both >= 3, ``w <= 54 // h``) and the difficulty letter."""

    w: int
    h: int
    diff: str = "n"


@dataclass(frozen=True)
class UndeadData:
    """A parsed undead desc.

    ``totals``: ``(ghosts, vampires, zombies)``. ``grid``: ``h`` rows of ``w`` symbols, ``\\`` or ``/`` for a
    mirror, ``G``/``V``/``Z`` for a given monster, ``.`` for an empty cell. ``clues``: the ``2(w+h)`` sighting
    counts in the collection's clockwise order. ``paths[k]``: the line of sight of clue ``k`` as
    ``((row, col), after_mirror)`` visits of monster cells (1-based), in viewing order, repeats included.
    """

    totals: tuple[int, int, int]
    grid: tuple[tuple[str, ...], ...]
    clues: tuple[int, ...]
    paths: tuple[tuple[tuple[tuple[int, int], bool], ...], ...]


def _clue_start(k: int, w: int, h: int) -> tuple[str, int, int, int, int]:
    """(side, row, col, drow, dcol) of clue ``k``: the 1-based position just outside the grid and the direction
    (``undead.c`` ``range2grid``)."""
    if k < w:
        return "top", 0, k + 1, 1, 0
    k -= w
    if k < h:
        return "right", k + 1, w + 1, 0, -1
    k -= h
    if k < w:
        return "bottom", h + 1, w - k, -1, 0
    k -= w
    return "left", h - k, 0, 0, 1


def _trace(grid, k: int, w: int, h: int) -> tuple[tuple[tuple[int, int], bool], ...]:
    _, r, c, dr, dc = _clue_start(k, w, h)
    out = []
    mirror = False
    while True:
        r, c = r + dr, c + dc
        if not (1 <= r <= h and 1 <= c <= w):
            return tuple(out)
        v = grid[r - 1][c - 1]
        if v == "\\":
            dr, dc, mirror = dc, dr, True
        elif v == "/":
            dr, dc, mirror = -dc, -dr, True
        else:
            out.append(((r, c), mirror))


def _seen(path, values: dict) -> int:
    n = 0
    for cell, after in path:
        m = values[cell]
        if m == "Z" or (m == "V" and not after) or (m == "G" and after):
            n += 1
    return n


def _anchor(k: int, w: int, h: int) -> tuple[str, tuple[int, int]]:
    side, r, c, dr, dc = _clue_start(k, w, h)
    return side, (r + dr, c + dc)


def _clue_phrase(side: str, anchor: tuple[int, int]) -> str:
    return f"the {side} of column {anchor[1]}" if side in ("top", "bottom") else f"the {side} of row {anchor[0]}"


def _encode_desc(d: UndeadData, w: int, h: int) -> str:
    """The desc as ``undead.c`` ``new_game_desc`` writes it (plus given monsters, which its parser accepts)."""
    out = [f"{d.totals[0]},{d.totals[1]},{d.totals[2]},"]
    run = 0

    def flush():
        nonlocal run
        while run > 26:
            out.append("z")
            run -= 26
        if run:
            out.append(chr(ord("a") + run - 1))
        run = 0

    for r in range(h):
        for c in range(w):
            v = d.grid[r][c]
            if v == ".":
                run += 1
                continue
            flush()
            out.append({"\\": "L", "/": "R"}.get(v, v))
    flush()
    out.extend(f",{n}" for n in d.clues)
    return "".join(out)


def _make_data(grid, totals, clues, w, h) -> UndeadData:
    g = tuple(tuple(row) for row in grid)
    return UndeadData(tuple(totals), g, tuple(clues), tuple(_trace(g, k, w, h) for k in range(2 * (w + h))))


class _SightUnit:
    """Unit predicate of one sighting count over the distinct monster cells of its line (picklable)."""

    def __init__(self, cells, path, n):
        self.cells, self.path, self.n = cells, path, n

    def __call__(self, values: tuple) -> bool:
        return _seen(self.path, dict(zip(self.cells, values, strict=True))) == self.n


class _TotalUnit:
    def __init__(self, monster: str, n: int):
        self.monster, self.n = monster, n

    def __call__(self, values: tuple) -> bool:
        return values.count(self.monster) == self.n


class Undead(Puzzle):
    """Undead (``undead.c``). See the module docstring for game IDs, answers, claims, C* and levels."""

    name = "undead"
    LEVELS = {"trivial": "3x3de", "easy": "4x4de", "normal": "4x4dt", "hard": "5x5dt"}
    ANSWER_SYMBOLS = {
        "G": "a ghost (visible only in a mirror, i.e. after the line of sight has been reflected)",
        "V": "a vampire (visible only directly, before any reflection)",
        "Z": "a zombie (always visible)",
        "/": "a mirror cell, copied from the puzzle ('.' is also accepted in a mirror cell)",
        "\\": "a mirror cell, copied from the puzzle ('.' is also accepted in a mirror cell)",
    }
    CLAIM_KINDS = ("value", "sight", "total", "mirror")
    VALUE_WORDS: dict[str, Hashable] = {
        "ghost": "G", "a ghost": "G", "g": "G",
        "vampire": "V", "a vampire": "V", "v": "V",
        "zombie": "Z", "a zombie": "Z", "z": "Z",
    }

    # ------------------------------------------------------------------ params
    def parse_params(self, text: str) -> UndeadParams:
        """Parse ``"<w>x<h>[d<diff>]"`` or ``"<n>"``. Raises :class:`GameIdError`."""
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '4x4dt'")
        w, h, i = parse_wxh(text, min_side=3)
        diff, i = read_difficulty(text, i, _DIFFS, "n", "a difficulty letter, one of 'e', 'n', 't'")
        if i != len(text):
            raise GameIdError(text, i, "'d<difficulty>' or the end of the params")
        if w > 54 // h:
            raise GameIdError(text, 0, "a grid that is not too big (w <= 54 // h)")
        return UndeadParams(w, h, diff)

    def format_params(self, params: UndeadParams, full: bool = True) -> str:
        """``"<w>x<h>d<diff>"`` (full) or ``"<w>x<h>"`` (short), as ``encode_params``."""
        return f"{params.w}x{params.h}d{params.diff}" if full else f"{params.w}x{params.h}"

    # ------------------------------------------------------------------ desc
    def parse_desc(self, params: UndeadParams, desc: str) -> Instance:
        """Parse a desc as ``validate_desc`` / ``new_game`` do. Raises :class:`GameIdError` (position, expectation)."""
        w, h = params.w, params.h
        i = 0
        totals = []
        for what in ("ghosts", "vampires", "zombies"):
            if i >= len(desc):
                raise GameIdError(desc, i, f"the number of {what}")
            j = digits_end(desc, i)
            if j >= len(desc) or desc[j] != ",":
                raise GameIdError(desc, j, f"digits and ',' for the number of {what}")
            totals.append(int(desc[i:j]) if j > i else 0)  # the collection's atoi reads no digits as 0
            i = j + 1
        cells: list[str] = []
        while i < len(desc) and desc[i] != ",":
            ch = desc[i]
            if "a" <= ch <= "z":
                cells.extend("." * (ord(ch) - ord("a") + 1))
            elif ch in "GVZ":
                cells.append(ch)
            elif ch in "LR":
                cells.append("\\" if ch == "L" else "/")
            else:
                raise GameIdError(desc, i, "a grid letter: 'a'..'z' (empty run), 'G', 'V', 'Z' or 'L', 'R' (mirror)")
            if len(cells) > w * h:
                raise GameIdError(desc, i, f"no more grid data ({w * h} cells in all)")
            i += 1
        if len(cells) < w * h:
            raise GameIdError(desc, i, f"more grid data ({len(cells)} of {w * h} cells given)")
        n_monster = sum(ch not in MIRRORS for ch in cells)
        if n_monster != sum(totals):
            raise GameIdError(desc, None, f"monster totals that add up to the {n_monster} non-mirror cells "
                                          f"(got {sum(totals)})")
        clues = []
        for k in range(2 * (w + h)):
            if i >= len(desc):
                raise GameIdError(desc, i, f"{2 * (w + h)} sighting counts after the grid ({k} given)")
            if desc[i] != ",":
                raise GameIdError(desc, i, "',' before a sighting count")
            j = digits_end(desc, i + 1)
            clues.append(int(desc[i + 1:j]) if j > i + 1 else 0)
            i = j
        if i != len(desc):
            raise GameIdError(desc, i, "the end of the description after the sighting counts")
        grid = [cells[r * w:(r + 1) * w] for r in range(h)]
        return Instance(self.name, params, desc, _make_data(grid, totals, clues, w, h))

    # ------------------------------------------------------------------ generation
    def _generate(self, params: UndeadParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        for _ in range(_MAX_ATTEMPTS):
            layout = []
            for _k in range(w * h):
                x = rng.randrange(5)
                layout.append("\\" if x == 0 else "/" if x == 1 else ".")
            n = layout.count(".")
            if n <= 4 or not 0.48 <= n / (w * h) <= 0.78:
                continue
            monsters = [rng.choice(MONSTERS) for _k in range(n)]
            if len(set(monsters)) < 2:
                continue
            it = iter(monsters)
            full = [[ch if ch != "." else next(it) for ch in layout[r * w:(r + 1) * w]] for r in range(h)]
            totals = [monsters.count(m) for m in MONSTERS]
            probe = _make_data(full, totals, [0] * (2 * (w + h)), w, h)
            values = {(r + 1, c + 1): full[r][c] for r in range(h) for c in range(w)}
            clues = [_seen(path, values) for path in probe.paths]
            grid = [[ch for ch in layout[r * w:(r + 1) * w]] for r in range(h)]
            for _fix in range(n + 1):
                data = _make_data(grid, totals, clues, w, h)
                inst = Instance(self.name, params, _encode_desc(data, w, h), data)
                res = self.solve(inst, 2)
                if res.unique:
                    return inst
                if len(res.solutions) < 2:
                    break
                a, b = res.solutions[:2]
                diff = [(r, c) for r in range(h) for c in range(w) if a[r][c] != b[r][c]]
                r, c = rng.choice(diff)
                grid[r][c] = full[r][c]
        raise GenerationError(f"undead: no unique puzzle for {self.format_params(params)} in {_MAX_ATTEMPTS} "
                              "attempts")

    # ------------------------------------------------------------------ text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid with the counts around it, an explicit list of the counts, and the answer format."""
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        top = d.clues[:w]
        right = d.clues[w:w + h]
        bottom = d.clues[w + h:2 * w + h][::-1]
        left = d.clues[2 * w + h:][::-1]
        lines = ["column:     " + "".join(f"{c:>3}" for c in range(1, w + 1)),
                 "top count:  " + "".join(f"{v:>3}" for v in top) + "   (seen looking down)",
                 "           +" + "-" * (3 * w + 1) + "+"]
        for r in range(h):
            lines.append(f"row {r + 1:>2}: {left[r]:>2} |" + "".join(f"{x:>3}" for x in d.grid[r]) + f" | {right[r]}")
        lines.append("           +" + "-" * (3 * w + 1) + "+")
        lines.append("bottom:     " + "".join(f"{v:>3}" for v in bottom) + "   (seen looking up)")
        counts = []
        for k, n in enumerate(d.clues):
            side, anchor = _anchor(k, w, h)
            look = {"top": "looking down", "bottom": "looking up", "left": "looking right",
                    "right": "looking left"}[side]
            counts.append(f"- from {_clue_phrase(side, anchor)} ({look}, entering at ({anchor[0]},{anchor[1]})): "
                          f"{n} visible")
        givens = [f"({r + 1},{c + 1}) is a {_NAMES[v]}" for r in range(h) for c in range(w)
                  if (v := d.grid[r][c]) in MONSTERS]
        g, v, z = d.totals
        return "\n".join([
            f"Solve this Undead puzzle (a haunted mirror maze) on a grid of {h} rows and {w} columns.",
            "",
            "Rules:",
            "1. Cells with '/' or '\\' hold diagonal two-sided mirrors. Every other cell holds exactly one monster: "
            "a ghost (G), a vampire (V) or a zombie (Z).",
            f"2. There are exactly {g} ghosts, {v} vampires and {z} zombies.",
            "3. Each number outside the grid is the number of monsters visible from that spot, looking straight "
            "into the grid along that row or column. The line of sight travels through the cells (monsters do not "
            "block it); when it reaches a mirror it turns by 90 degrees as a light ray would ('/' sends a ray "
            "moving right upwards and a ray moving down to the left; '\\' sends a ray moving right downwards and a "
            "ray moving up to the left), and it ends where it leaves the grid.",
            "4. A zombie is always visible. A vampire is visible only directly, i.e. before the line of sight has "
            "hit any mirror. A ghost is visible only in a mirror, i.e. after the line of sight has been reflected "
            "at least once. A monster passed twice by the same line of sight is counted twice.",
            "",
            "Coordinates are (row, column), 1-based: rows are numbered from the top (1) to the bottom "
            f"({h}), columns from the left (1) to the right ({w}).",
            "",
            "The grid ('.' = a cell whose monster you must find). Each grid line shows the row number, then the "
            "count seen looking right from the left edge, the cells, and the count seen looking left from the right "
            "edge; above and below are the counts seen looking down and up each column:",
            *lines,
            "",
            "All counts:",
            *counts,
            "Given monsters: " + ("; ".join(givens) if givens else "none"),
            "",
            f"Answer format: the complete grid, {h} lines (row 1 first), each with {w} symbols separated by spaces: "
            "G, V or Z in every monster cell and the mirror ('/' or '\\') copied in every mirror cell. "
            "For example, a row could read: " + " ".join(("G", "/", "Z", "V", "\\")[k % 5] for k in range(w)),
            "",
            "Put your final answer inside <answer>...</answer>, with nothing but the grid in the block.",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the grid of ``G``/``V``/``Z`` and mirrors (lower case accepted; ``.`` in a mirror cell is read as
        that mirror).

        Raises
        ------
        AnswerParseError
            No answer block and no grid-shaped block, wrong size, or an unknown symbol.
        """
        p, d = instance.params, instance.data
        symbols = {s: s for s in MONSTERS + MIRRORS + (".",)}
        grid, source, notes = read_grid_answer(text, p.h, p.w, symbols)
        fixed = []
        out = []
        for r in range(p.h):
            row = []
            for c in range(p.w):
                v = grid[r][c]
                if v == "." and d.grid[r][c] in MIRRORS:
                    v = d.grid[r][c]
                    fixed.append((r + 1, c + 1))
                row.append(v)
            out.append(tuple(row))
        if fixed:
            notes = notes + ("'.' read as the puzzle's mirror in mirror cells",)
        return ParsedAnswer(tuple(out), source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The grid of monsters and mirrors, symbols separated by spaces."""
        return format_grid(solution)

    # ------------------------------------------------------------------ rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: mirrors in place and a monster in every other cell (``mirror`` / ``monster``),
        given monsters kept (``given``), the totals (``total``) and every sighting count (``sight``)."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        if not (isinstance(grid, tuple | list) and len(grid) == h and
                all(isinstance(row, tuple | list) and len(row) == w for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be {h} rows of {w} cells"),))
        out: list[Violation] = []
        for r in range(h):
            for c in range(w):
                want, v = d.grid[r][c], grid[r][c]
                if want in MIRRORS:
                    if v != want:
                        out.append(Violation("mirror", f"({r + 1},{c + 1}) is a {want} mirror, not {v!r}",
                                             ((r + 1, c + 1),)))
                elif v not in MONSTERS:
                    out.append(Violation("monster", f"({r + 1},{c + 1}) needs a monster (G, V or Z), got {v!r}",
                                         ((r + 1, c + 1),)))
                elif want in MONSTERS and v != want:
                    out.append(Violation("given", f"({r + 1},{c + 1}) is a given {_NAMES[want]}, not {v}",
                                         ((r + 1, c + 1),)))
        if out:
            return CheckResult(False, tuple(out))
        flat = [grid[r][c] for r in range(h) for c in range(w)]
        for m, n in zip(MONSTERS, d.totals, strict=True):
            if flat.count(m) != n:
                out.append(Violation("total", f"there are {flat.count(m)} {_NAMES[m]}s, the puzzle says {n}"))
        values = {(r + 1, c + 1): grid[r][c] for r in range(h) for c in range(w)}
        for k, (path, n) in enumerate(zip(d.paths, d.clues, strict=True)):
            seen = _seen(path, values)
            if seen != n:
                side, anchor = _anchor(k, w, h)
                out.append(Violation("sight", f"{seen} monsters are visible from {_clue_phrase(side, anchor)}, "
                                              f"the count is {n}", tuple(dict.fromkeys(cell for cell, _ in path))))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        model = new_model()
        cells = [(r, c) for r in range(1, h + 1) for c in range(1, w + 1) if d.grid[r - 1][c - 1] not in MIRRORS]
        x = {(cell, m): model.NewBoolVar(f"{m}{cell}") for cell in cells for m in MONSTERS}
        for cell in cells:
            model.AddExactlyOne([x[(cell, m)] for m in MONSTERS])
            given = d.grid[cell[0] - 1][cell[1] - 1]
            if given in MONSTERS:
                model.Add(x[(cell, given)] == 1)
        for m, n in zip(MONSTERS, d.totals, strict=True):
            model.Add(sum(x[(cell, m)] for cell in cells) == n)
        for path, n in zip(d.paths, d.clues, strict=True):
            terms = [x[(cell, "Z")] for cell, _ in path]
            terms += [x[(cell, "G" if after else "V")] for cell, after in path]
            model.Add(sum(terms) == n)
        keys = [x[(cell, "G")] for cell in cells] + [x[(cell, "V")] for cell in cells]
        sols, exhausted = enumerate_solutions(model, keys, max_solutions)
        out = []
        for s in sols:
            g = [list(row) for row in d.grid]
            for k, (r, c) in enumerate(cells):
                g[r - 1][c - 1] = "G" if s[k] else "V" if s[len(cells) + k] else "Z"
            out.append(tuple(tuple(row) for row in g))
        return SolveResult(tuple(out), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """``S;G0;V1;Z2;...`` (k = index of the non-mirror cell in row-major order) -> the grid.

        Raises
        ------
        ConfigError
            A malformed item, an index out of range, a cell left without a monster
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p, d = instance.params, instance.data
        cells = [(r, c) for r in range(p.h) for c in range(p.w) if d.grid[r][c] not in MIRRORS]
        g = [list(row) for row in d.grid]
        for part in solve_move_items(self.name, move):
            m = re.fullmatch(rf"([GVZ]){MOVE_NUM}", part)
            if not m or int(m.group(2)) >= len(cells):
                raise bad_solve_move(self.name, move, f"item {part!r} is not G<k>, V<k> or Z<k> with k < {len(cells)}")
            r, c = cells[int(m.group(2))]
            g[r][c] = m.group(1)
        if any(ch == "." for row in g for ch in row):
            raise bad_solve_move(self.name, move, "cells left without a monster")
        return tuple(tuple(row) for row in g)

    # ------------------------------------------------------------------ claims
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        p = instance.params
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"undead: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        for cell in claim.cells:
            self._check_cell(instance, cell, p.h, p.w)
        if claim.kind == "value" and (len(claim.cells) != 1 or claim.value not in MONSTERS):
            raise ClaimError(f"undead: a value claim is one cell and one of G V Z, got {claim.cells} {claim.value!r}")
        if claim.kind == "total":
            if not (isinstance(claim.value, tuple) and len(claim.value) == 2 and claim.value[0] in MONSTERS):
                raise ClaimError(f"undead: a total claim's value is (monster, n), got {claim.value!r}")
            self._claim_number(claim, 0, p.w * p.h, "(monster, n) with n", item=1)  # no more monsters than cells
        if claim.kind == "sight":
            if not (len(claim.cells) == 1 and isinstance(claim.value, tuple) and len(claim.value) == 2
                    and claim.value[0] in SIDES):
                raise ClaimError(f"undead: a sight claim is (anchor,), (side, n), got {claim.cells} {claim.value!r}")
            # a line of sight crosses a cell at most twice (once across, once along: mirrors turn it)
            self._claim_number(claim, 0, 2 * p.w * p.h, "(side, n) with n", item=1)
        if claim.kind == "mirror" and (len(claim.cells) != 1 or claim.value not in MIRRORS):
            raise ClaimError(f"undead: a mirror claim is one cell and '/' or '\\\\', got {claim.value!r}")

    def _clue_index(self, instance: Instance, side: str, anchor) -> int | None:
        p = instance.params
        for k in range(2 * (p.w + p.h)):
            if _anchor(k, p.w, p.h) == (side, tuple(anchor)):
                return k
        return None

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value, total and sight claims are evaluated on ``solution``; mirror claims on the grid (static). A
        sight claim whose anchor is not next to that side is false. Raises :class:`ClaimError` for a claim outside
        the vocabulary, for either polarity: an unknown kind, a cell off the grid, a value that is not one cell and
        one of ``G V Z``, a total that is not ``(monster, n)`` with ``n`` an integer ``0..w*h``, a sight claim that
        is not one anchor and ``(side, n)`` with ``n`` an integer ``0..2*w*h``, a mirror that is not one cell and
        ``/`` or ``\\``."""
        self._validate_claim(instance, claim)
        p, d = instance.params, instance.data
        if claim.kind == "value":
            (r, c), = claim.cells
            truth = solution[r - 1][c - 1] == claim.value
        elif claim.kind == "mirror":
            (r, c), = claim.cells
            truth = d.grid[r - 1][c - 1] == claim.value
        elif claim.kind == "total":
            m, n = claim.value
            truth = sum(row.count(m) for row in solution) == n
        else:
            side, n = claim.value
            k = self._clue_index(instance, side, claim.cells[0])
            values = {(r + 1, c + 1): solution[r][c] for r in range(p.h) for c in range(p.w)}
            truth = k is not None and _seen(d.paths[k], values) == n
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per monster cell that is not given."""
        sol = self.unique_solution(instance) if solution is None else solution
        d = instance.data
        return frozenset(Claim("value", ((r, c),), v) for r, row in enumerate(sol, 1) for c, v in enumerate(row, 1)
                         if d.grid[r - 1][c - 1] == ".")

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """Mirrors, given monsters, the three totals and every sighting count."""
        p, d = instance.params, instance.data
        out = []
        for r, row in enumerate(d.grid, 1):
            for c, v in enumerate(row, 1):
                if v in MIRRORS:
                    out.append(Claim("mirror", ((r, c),), v))
                elif v in MONSTERS:
                    out.append(Claim("value", ((r, c),), v))
        out += [Claim("total", (), (m, n)) for m, n in zip(MONSTERS, d.totals, strict=True)]
        for k, n in enumerate(d.clues):
            side, anchor = _anchor(k, p.w, p.h)
            out.append(Claim("sight", (anchor,), (side, n)))
        return tuple(out)

    def claim_text(self, claim: Claim) -> str:
        """"(2,3) is a ghost"; "3 monsters are visible from the top of column 2"; "there are 2 ghosts";
        "(1,2) holds a / mirror"; negations with "not"."""
        neg = not claim.positive
        if claim.kind == "value":
            (r, c), = claim.cells
            return f"({r},{c}) {'is not' if neg else 'is'} a {_NAMES[claim.value]}"
        if claim.kind == "mirror":
            (r, c), = claim.cells
            return f"({r},{c}) {'does not hold' if neg else 'holds'} a {claim.value} mirror"
        if claim.kind == "total":
            m, n = claim.value
            return f"there {'are not' if neg else 'are'} {n} {_NAMES[m]}s"
        if claim.kind == "sight":
            side, n = claim.value
            verb = "are not" if neg else "are"
            return f"{n} monsters {verb} visible from {_clue_phrase(side, claim.cells[0])}"
        raise ClaimError(f"undead: unknown claim kind {claim.kind!r}")

    # (?<!\d): a match starts only at the first digit of a number, so a long digit run is scanned once (linear time)
    _SIGHT_RE = re.compile(r"(?<!\d)(\d+) monsters? (are|is|are not|is not) visible from the "
                           r"(top|bottom|left|right) of (row|column) (\d+)", re.IGNORECASE)
    _TOTAL_RE = re.compile(r"there (are|is|are not|is not) (\d+) (ghost|vampire|zombie)s?", re.IGNORECASE)
    _MIRROR_RE = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\) (holds|does not hold|has|does not have) a ([/\\]) mirror",
                            re.IGNORECASE)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read sight claims ("3 monsters are visible from the top of column 2"), totals ("there are 2 ghosts")
        and mirror claims ("(1,2) holds a / mirror"). Linear time (regexes without nested quantifiers)."""
        text = mask_long_numbers(text)
        p = instance.params
        out = []
        for m in self._SIGHT_RE.finditer(text):
            side, line, k = m.group(3).lower(), m.group(4).lower(), int(m.group(5))
            if (side in ("top", "bottom")) != (line == "column"):
                continue
            if not 1 <= k <= (p.w if line == "column" else p.h):
                continue
            anchor = {"top": (1, k), "bottom": (p.h, k), "left": (k, 1), "right": (k, p.w)}[side]
            out.append((Claim("sight", (anchor,), (side, int(m.group(1))), "not" not in m.group(2).lower()),
                        m.start(), m.end()))
        for m in self._TOTAL_RE.finditer(text):
            monster = {"ghost": "G", "vampire": "V", "zombie": "Z"}[m.group(3).lower()]
            out.append((Claim("total", (), (monster, int(m.group(2))), "not" not in m.group(1).lower()),
                        m.start(), m.end()))
        for m in self._MIRROR_RE.finditer(text):
            r, c = int(m.group(1)), int(m.group(2))
            if 1 <= r <= p.h and 1 <= c <= p.w:
                out.append((Claim("mirror", ((r, c),), m.group(4), "not" not in m.group(3).lower()),
                            m.start(), m.end()))
        out.sort(key=lambda t: t[1])
        return out

    # ------------------------------------------------------------------ constraint view
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Non-mirror cell -> ``('G', 'V', 'Z')`` (a given monster: that one value)."""
        d = instance.data
        return {(r, c): ((v,) if v in MONSTERS else MONSTERS) for r, row in enumerate(d.grid, 1)
                for c, v in enumerate(row, 1) if v not in MIRRORS}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """One unit per sighting count and one per monster total."""
        p, d = instance.params, instance.data
        out = []
        for k, (path, n) in enumerate(zip(d.paths, d.clues, strict=True)):
            side, anchor = _anchor(k, p.w, p.h)
            cells = tuple(dict.fromkeys(cell for cell, _ in path))
            out.append(Unit(f"the count {n} at {_clue_phrase(side, anchor)}", cells, _SightUnit(cells, path, n),
                            (Claim("sight", (anchor,), (side, n)),)))
        cells = tuple(self.variables(instance))
        for m, n in zip(MONSTERS, d.totals, strict=True):
            out.append(Unit(f"the total of {n} {_NAMES[m]}s", cells, _TotalUnit(m, n), (Claim("total", (), (m, n)),)))
        return tuple(out)


PUZZLE = register_puzzle(Undead())
