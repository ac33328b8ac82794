"""Keen (KenKen): a Latin square split into cages, each with an arithmetic clue.

Rules (Simon Tatham's Portable Puzzle Collection, ``keen.c``): fill a ``w x w`` grid with ``1..w`` so that every
row and every column holds each number exactly once, and the numbers of each cage combine to the cage's target
with its operation: ``+`` sum, ``*`` product, ``-`` difference and ``/`` quotient (the last two only for cages of
two cells, larger number first). A one-cell cage simply gives its number.

Game IDs
--------
``params`` is ``<w>`` (short) or ``<w>d<diff>[m]`` (full), ``diff`` one of ``e`` (Easy), ``n`` (Normal), ``h``
(Hard), ``x`` (Extreme), ``u`` (Unreasonable), ``m`` = multiplication-only clues, ``3 <= w <= 9``; the short form
means Normal (``keen.c`` ``decode_params`` / ``encode_params`` / ``default_params``); trailing characters, which
the collection ignores, are rejected. ``desc`` is
``<block structure>,<clues>``. The block structure walks the ``w(w-1)`` internal vertical edges in reading order
and then the ``w(w-1)`` internal horizontal edges column by column, plus one virtual edge at the end; each letter
gives the number of non-walls before the next wall (``_`` = 0, ``a``..``x`` = 1..24), except that ``y`` means 25
non-walls with no wall after it and ``z`` 26 non-walls followed by a wall (exactly what ``parse_block_structure``
does); a letter followed by a decimal count is repeated that many times. The clues follow, one per cage in
row-major order of the cages' first cells: ``a`` (add), ``m`` (multiply), ``s`` (subtract), ``d`` (divide), then
the target in decimal (``validate_desc`` / ``new_game``). The collection's ``SOLVE`` move is ``S`` followed by the
``w*w`` digits row-major (``solve_game``).

Answer and claims
-----------------
The answer is the full grid, one row per line, numbers separated by spaces. A solution is a tuple of ``w`` tuples
of ``w`` ints. Claim kinds:

* ``"value"``: ``Claim("value", ((r, c),), v)`` "(r,c) is v" (negated "(r,c) is not v");
* ``"cage"``: ``Claim("cage", cells, (op, target))`` with ``cells`` the cage's cells in row-major order and ``op``
  one of ``+ - * /``, "the cage at (r,c) has clue 6+": a static fact (a given). ``target`` is an integer from 1
  to :func:`cage_target_max` (``k*w`` for a sum over ``k`` cells, ``w**k`` for a product, ``w - 1`` for a
  difference, ``w`` for a quotient); a target past it raises :class:`ClaimError`.

C* (paper A §C; definition a reasonshape choice after paper A's solo example): one value claim per cell that is
not a one-cell cage (one-cell cages state their number, like solo's givens). Given claims are the cage claims.

Constraint view
---------------
Variables are the cells (1-based), domain ``1..w``. Units: ``row r`` and ``column c`` (``alldiff``) and one per
cage, "the cage 6+ at (r,c)", which allows exactly the assignments meeting the clue; its premise is the cage
claim. Keen has no global rule: the units define the solutions exactly.

Levels
------
=======  ======  =========================================================
level    params  native generator
=======  ======  =========================================================
trivial  3de     3x3 grid
easy     4de     4x4 grid
normal   5dn     5x5 grid
hard     6dh     6x6 grid
=======  ======  =========================================================

The native generator draws a random Latin square, partitions it into cages the way ``keen.c`` does (random
dominoes with probability 3/4, then leftover cells folded into neighbouring cages of fewer than 6 cells), picks
one operation per cage at random among those that fit, and keeps the layout if CP-SAT proves the solution unique.
After 20 rejected layouts it repairs instead: while CP-SAT finds a second solution, one cell where the two
solutions differ becomes a one-cell cage (the rest of its old cage re-clued), so generation always terminates.
Difficulty therefore comes from the grid size (and the cage density), never from rule changes; the collection's
technique grades are kept in the params but not reproduced (use ``backend="sgt"`` for graded puzzles). Source:
reasonshape choice after paper A §A.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from reasonshape.envs._solver import enumerate_solutions, new_model
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
    read_difficulty,
    read_int,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["KeenParams", "KeenCage", "KeenData", "Keen", "PUZZLE", "cage_ok", "cage_target_max"]

_DIFFS = "enhxu"
_DIFF_NAMES = {"e": "Easy", "n": "Normal", "h": "Hard", "x": "Extreme", "u": "Unreasonable"}
#: desc clue letter -> operation symbol used in prompts, answers and claims
OPS = {"a": "+", "m": "*", "s": "-", "d": "/"}
_OP_LETTER = {v: k for k, v in OPS.items()}
_OP_WORDS = {"a": "sum", "m": "product", "s": "difference", "d": "quotient"}
_MAXBLK = 6
#: Non-unique layouts are redrawn this many times before the generator starts repairing them with one-cell cages.
_REJECT_FIRST = 20


@dataclass(frozen=True)
class KeenParams:
    """Keen params: grid size ``w`` (3..9), the difficulty letter and the multiplication-only flag."""

    w: int
    diff: str = "n"
    multiplication_only: bool = False


@dataclass(frozen=True)
class KeenCage:
    """One cage: ``cells`` (1-based, row-major order; ``cells[0]`` is where the clue is shown), the desc letter
    ``op`` (``a``/``m``/``s``/``d``) and the ``target``."""

    cells: tuple[tuple[int, int], ...]
    op: str
    target: int

    @property
    def label(self) -> str:
        """The clue as written in prompts, e.g. ``"6+"``."""
        return f"{self.target}{OPS[self.op]}"


@dataclass(frozen=True)
class KeenData:
    """A parsed keen desc: the cages (ordered by first cell, row-major) and ``cage_at[r][c]`` (0-based) = index."""

    cages: tuple[KeenCage, ...]
    cage_at: tuple[tuple[int, ...], ...]


def cage_target_max(op: str, k: int, w: int) -> int:
    """The largest target a cage clue ``op`` (``+ - * /``, or the desc letters ``a m s d``) over ``k`` cells of a
    ``w x w`` grid can have: each cell holds at most ``w``, so a sum is at most ``k*w``, a product ``w**k``, a
    difference (larger minus smaller) ``w - 1`` and a quotient ``w``. The bound of a cage claim's target (with
    1 below); a clue past it is no statement about any instance. Source: reasonshape choice (what the digits
    ``1..w`` allow, after ``keen.c``'s clue rules)."""
    return {"+": k * w, "*": w ** k, "-": w - 1, "/": w}[OPS.get(op, op)]


def cage_ok(op: str, target: int, values: Sequence[int]) -> bool:
    """Whether ``values`` meet a cage clue (``op`` a desc letter ``a``/``m``/``s``/``d`` or ``+ * - /``).

    >>> cage_ok("s", 2, (1, 3)), cage_ok("d", 2, (3, 6)), cage_ok("a", 6, (1, 2, 3))
    (True, True, True)
    """
    op = _OP_LETTER.get(op, op)
    if op == "a":
        return sum(values) == target
    if op == "m":
        return math.prod(values) == target
    if len(values) != 2:
        return False
    lo, hi = sorted(values)
    if op == "s":
        return hi - lo == target
    return lo > 0 and hi % lo == 0 and hi // lo == target


# ---------------------------------------------------------------------- block structure (keen.c)
def _edge_cells(w: int, pos: int) -> tuple[int, int]:
    """The two 0-based row-major cells on either side of internal edge ``pos`` (``parse_block_structure``)."""
    if pos < w * (w - 1):
        y, x = divmod(pos, w - 1)
        return y * w + x, y * w + x + 1
    x, y = pos // (w - 1) - w, pos % (w - 1)
    return y * w + x, (y + 1) * w + x


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _parse_blocks(desc: str, w: int) -> tuple[list[int], int]:
    """Parse the block structure; returns (component root per cell, index of the ``,`` after it)."""
    n_edges = 2 * w * (w - 1)
    parent = list(range(w * w))
    pos, i, repn, repc, letter = 0, 0, 0, 0, 0
    while i < len(desc) and (repn > 0 or desc[i] != ","):
        if repn > 0:
            repn -= 1
            c = repc
        elif desc[i] == "_" or "a" <= desc[i] <= "z":
            c = 0 if desc[i] == "_" else ord(desc[i]) - ord("a") + 1
            letter = i
            i += 1
            if i < len(desc) and "0" <= desc[i] <= "9":
                j = digits_end(desc, i)
                repc, repn = c, int(desc[i:j]) - 1
                i = j
        else:
            raise GameIdError(desc, i, "a block-structure letter ('_' or 'a'..'z'), a repeat count or ','")
        adv = c != 25
        for _ in range(c):
            if pos >= n_edges:
                raise GameIdError(desc, letter, f"the block structure to end (too much for {n_edges} edges)")
            a, b = _edge_cells(w, pos)
            ra, rb = _find(parent, a), _find(parent, b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
            pos += 1
        if adv:
            pos += 1
            if pos > n_edges + 1:
                raise GameIdError(desc, letter, f"the block structure to end (too much for {n_edges} edges)")
    if pos != n_edges + 1:
        raise GameIdError(desc, i, f"more block-structure data (it covers {pos} of {n_edges + 1} edges)")
    return [_find(parent, k) for k in range(w * w)], i


def _encode_blocks(w: int, cage_at: Sequence[Sequence[int]]) -> str:
    """Block structure as ``encode_block_structure`` writes it, except that runs of 25 or more non-walls are
    written with ``y`` (25 non-walls, no wall), which is how the collection's parser reads them."""
    flat = [cage_at[r][c] for r in range(w) for c in range(w)]
    n_edges = 2 * w * (w - 1)
    raw: list[str] = []
    run = 0
    for pos in range(n_edges + 1):
        if pos == n_edges:
            edge = True
        else:
            a, b = _edge_cells(w, pos)
            edge = flat[a] != flat[b]
        if edge:
            while run >= 25:
                raw.append("y")
                run -= 25
            raw.append("_" if run == 0 else chr(ord("a") - 1 + run))
            run = 0
        else:
            run += 1
    out, k = [], 0
    while k < len(raw):
        j = k
        while j < len(raw) and raw[j] == raw[k]:
            j += 1
        count = j - k
        out.append(raw[k] * 2 if count == 2 else raw[k] + (str(count) if count > 2 else ""))
        k = j
    return "".join(out)


def _encode_desc(w: int, cages: Sequence[KeenCage], cage_at) -> str:
    return _encode_blocks(w, cage_at) + "," + "".join(f"{cg.op}{cg.target}" for cg in cages)


def _build_data(w: int, groups: Sequence[Sequence[tuple[int, int]]], clues: Sequence[tuple[str, int]]) -> KeenData:
    """Cages from cell groups (1-based cells) and their clues, ordered by first cell row-major."""
    order = sorted(range(len(groups)), key=lambda k: min(groups[k]))
    cages = tuple(KeenCage(tuple(sorted(groups[k])), clues[k][0], clues[k][1]) for k in order)
    cage_at = [[-1] * w for _ in range(w)]
    for idx, cg in enumerate(cages):
        for r, c in cg.cells:
            cage_at[r - 1][c - 1] = idx
    return KeenData(cages, tuple(tuple(row) for row in cage_at))


# ---------------------------------------------------------------------- generation helpers
def _random_latin(w: int, rng: random.Random) -> list[list[int]]:
    """A random Latin square by randomised backtracking, cell by cell (fast for w <= 9)."""
    grid = [[0] * w for _ in range(w)]
    rows = [set() for _ in range(w)]
    cols = [set() for _ in range(w)]
    orders = [rng.sample(range(1, w + 1), w) for _ in range(w * w)]

    def fill(k: int) -> bool:
        if k == w * w:
            return True
        r, c = divmod(k, w)
        for v in orders[k]:
            if v not in rows[r] and v not in cols[c]:
                grid[r][c] = v
                rows[r].add(v)
                cols[c].add(v)
                if fill(k + 1):
                    return True
                rows[r].discard(v)
                cols[c].discard(v)
        return False

    fill(0)
    return grid


def _random_blocks(w: int, rng: random.Random) -> list[list[int]] | None:
    """Cell groups (0-based row-major indices) made as ``keen.c`` does: dominoes, then singletons folded in."""
    a = w * w
    order = list(range(a))
    rng.shuffle(order)
    rev = [0] * a
    for k, i in enumerate(order):
        rev[i] = k
    parent = list(range(a))
    size = [1] * a
    single = [True] * a

    def nbrs(i):
        x, y = i % w, i // w
        if x > 0:
            yield i - 1
        if x + 1 < w:
            yield i + 1
        if y > 0:
            yield i - w
        if y + 1 < w:
            yield i + w

    def merge(i, j):
        ri, rj = _find(parent, i), _find(parent, j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
            size[min(ri, rj)] = size[ri] + size[rj]

    for i in range(a):
        if single[i]:
            best = min((j for j in nbrs(i) if single[j]), key=lambda j: rev[j], default=-1)
            if best >= 0 and rng.randrange(4):
                single[i] = single[best] = False
                merge(i, best)
    for i in range(a):
        if single[i]:
            best = min((j for j in nbrs(i) if size[_find(parent, j)] < _MAXBLK), key=lambda j: rev[j], default=-1)
            if best >= 0:
                single[i] = single[best] = False
                merge(i, best)
    if any(single):
        return None
    groups: dict[int, list[int]] = {}
    for i in range(a):
        groups.setdefault(_find(parent, i), []).append(i)
    return list(groups.values())


def _choose_clue(values: Sequence[int], w: int, mult_only: bool, rng: random.Random) -> tuple[str, int]:
    if mult_only:
        return "m", math.prod(values)
    if len(values) == 1:
        return "a", values[0]
    if len(values) == 2:
        lo, hi = sorted(values)
        opts = ["a", "m", "s"] + (["d", "d"] if hi % lo == 0 else [])
        op = rng.choice(opts)
        return op, {"a": lo + hi, "m": lo * hi, "s": hi - lo, "d": hi // lo if hi % lo == 0 else 0}[op]
    op = rng.choice("am")
    return op, (sum(values) if op == "a" else math.prod(values))


def _components(cells: set[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    left, out = set(cells), []
    while left:
        start = left.pop()
        comp, stack = [start], [start]
        while stack:
            r, c = stack.pop()
            for nb in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if nb in left:
                    left.discard(nb)
                    comp.append(nb)
                    stack.append(nb)
        out.append(sorted(comp))
    return sorted(out)


class _CageUnit:
    """Unit predicate of one cage (picklable, no closure)."""

    def __init__(self, op: str, target: int):
        self.op, self.target = op, target

    def __call__(self, values: tuple) -> bool:
        return cage_ok(self.op, self.target, values)


def _all_distinct(values: tuple) -> bool:
    return len(set(values)) == len(values)


class Keen(Puzzle):
    """Keen (``keen.c``). See the module docstring for game IDs, answers, claims, C* and levels."""

    name = "keen"
    LEVELS = {"trivial": "3de", "easy": "4de", "normal": "5dn", "hard": "6dh"}
    ANSWER_SYMBOLS = {str(v): f"the number {v} (a w x w grid uses the numbers 1..w)" for v in range(1, 10)}
    CLAIM_KINDS = ("value", "cage")
    VALUE_WORDS: dict[str, Hashable] = {}

    # ------------------------------------------------------------------ params
    def parse_params(self, text: str) -> KeenParams:
        """Parse ``"<w>"`` or ``"<w>d<diff>[m]"`` (also ``"<w>m"``). Raises :class:`GameIdError`."""
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '5dn'")
        w, i = read_int(text, 0, "the grid size w (digits)")
        mult = False
        diff, i = read_difficulty(text, i, _DIFFS, "n", f"a difficulty letter, one of {list(_DIFFS)}")
        if i < len(text) and text[i] == "m":
            mult, i = True, i + 1
        if i != len(text):
            raise GameIdError(text, i, "'d<difficulty>', 'm' or the end of the params")
        if not 3 <= w <= 9:
            raise GameIdError(text, 0, f"a grid size between 3 and 9 (got {w})")
        return KeenParams(w, diff, mult)

    def format_params(self, params: KeenParams, full: bool = True) -> str:
        """``"<w>d<diff>[m]"`` (full) or ``"<w>"`` (short), as ``encode_params``."""
        if not full:
            return f"{params.w}"
        return f"{params.w}d{params.diff}{'m' if params.multiplication_only else ''}"

    # ------------------------------------------------------------------ desc
    def parse_desc(self, params: KeenParams, desc: str) -> Instance:
        """Parse a desc as ``validate_desc`` / ``new_game`` do. Raises :class:`GameIdError` (position, expectation)."""
        w = params.w
        roots, i = _parse_blocks(desc, w)
        if i >= len(desc) or desc[i] != ",":
            raise GameIdError(desc, i, "',' after the block structure")
        i += 1
        members: dict[int, list[tuple[int, int]]] = {}
        for k, root in enumerate(roots):
            members.setdefault(root, []).append((k // w + 1, k % w + 1))
        groups, clues = [], []
        for k in range(w * w):
            if roots[k] != k:
                continue
            if i >= len(desc):
                raise GameIdError(desc, i, f"a clue for the cage at ({k // w + 1},{k % w + 1}) "
                                           "(too few clues for the block structure)")
            op = desc[i]
            if op not in OPS:
                raise GameIdError(desc, i, "a clue type letter: 'a' (add), 'm' (multiply), 's' (subtract) or "
                                           "'d' (divide)")
            if op in "sd" and len(members[k]) != 2:
                raise GameIdError(desc, i, "a cage of 2 cells for a subtraction or division clue")
            j = digits_end(desc, i + 1)
            target = int(desc[i + 1:j]) if j > i + 1 else 0  # the collection's atol reads no digits as 0
            groups.append(members[k])
            clues.append((op, target))
            i = j
        if i != len(desc):
            raise GameIdError(desc, i, "the end of the description (too many clues for the block structure)")
        return Instance(self.name, params, desc, _build_data(w, groups, clues))

    # ------------------------------------------------------------------ generation
    def _generate(self, params: KeenParams, rng: random.Random) -> Instance:
        w = params.w
        for attempt in range(200):
            sol = _random_latin(w, rng)
            blocks = _random_blocks(w, rng)
            if blocks is None:
                continue
            groups = [sorted((i // w + 1, i % w + 1) for i in g) for g in blocks]
            clues = [_choose_clue([sol[r - 1][c - 1] for r, c in g], w, params.multiplication_only, rng)
                     for g in groups]
            for _fix in range(w * w):
                data = _build_data(w, groups, clues)
                inst = Instance(self.name, params, _encode_desc(w, data.cages, data.cage_at), data)
                res = self.solve(inst, 2)
                if res.unique:
                    return inst
                if attempt < _REJECT_FIRST or len(res.solutions) < 2:
                    break  # early attempts: draw a fresh layout rather than add a one-cell cage
                a, b = res.solutions[:2]
                diff = [(r + 1, c + 1) for r in range(w) for c in range(w) if a[r][c] != b[r][c]]
                cell = rng.choice(diff)
                k = next(k for k, g in enumerate(groups) if cell in g)
                rest = set(groups[k]) - {cell}
                del groups[k], clues[k]
                for g in [[cell]] + _components(rest):
                    groups.append(g)
                    clues.append(_choose_clue([sol[r - 1][c - 1] for r, c in g], w, params.multiplication_only,
                                              rng))
        raise GenerationError(f"keen: no unique puzzle for {self.format_params(params)} in 200 attempts")

    # ------------------------------------------------------------------ text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, a cage map (letters), the list of cages with their clues, and the answer format."""
        w, cages = instance.params.w, instance.data.cages
        labels = [_cage_name(k) for k in range(len(cages))]
        width = max(len(x) for x in labels) + 1
        width = max(width, 3)
        lines = ["column |" + "".join(str(c + 1).rjust(width) for c in range(w)),
                 "-------+" + "-" * (width * w)]
        for r in range(w):
            lines.append(f"row {r + 1:>2} |" + "".join(labels[instance.data.cage_at[r][c]].rjust(width)
                                                      for c in range(w)))
        cage_lines = []
        for k, cg in enumerate(cages):
            cells = ", ".join(f"({r},{c})" for r, c in cg.cells)
            if len(cg.cells) == 1:
                what = f"target {cg.label}: the cell holds {cg.target}"
            else:
                what = f"target {cg.label}: the {_OP_WORDS[cg.op]} of its numbers is {cg.target}"
            cage_lines.append(f"- cage {labels[k]}: cells {cells}; {what}")
        example = format_grid([[(r + c) % w + 1 for c in range(w)] for r in range(w)])
        return "\n".join([
            f"Solve this Keen puzzle (also called KenKen) on a {w}x{w} grid.",
            "",
            "Rules:",
            f"1. Write a number from 1 to {w} in every cell.",
            f"2. Every row and every column contains each number 1 to {w} exactly once.",
            "3. The grid is divided into cages. Each cage has a target and an operation: '+' means the numbers in "
            "the cage add up to the target, '*' means they multiply to the target, '-' (two-cell cages only) means "
            "the larger number minus the smaller one equals the target, and '/' (two-cell cages only) means the "
            "larger number divided by the smaller one equals the target. A number may repeat inside a cage if the "
            "copies are in different rows and columns.",
            "",
            "Coordinates are (row, column), 1-based: rows are numbered from the top (1) to the bottom "
            f"({w}), columns from the left (1) to the right ({w}).",
            "",
            "Cage map (each cell shows the name of its cage; row and column numbers are labels):",
            *lines,
            "",
            "Cages:",
            *cage_lines,
            "",
            f"Answer format: the complete grid, {w} lines (row 1 first), each with the {w} numbers of that row "
            "separated by spaces. For example, a grid shaped like this (not the solution):",
            example,
            "",
            "Put your final answer inside <answer>...</answer>, with nothing but the grid in the block.",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the number grid (digits run together or separated by spaces, commas, pipes).

        Raises
        ------
        AnswerParseError
            No answer block and no grid-shaped block, wrong size, or a symbol outside ``1..w``.
        """
        w = instance.params.w
        grid, source, notes = read_grid_answer(text, w, w, digits_symbols(w))
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The number grid, numbers separated by spaces."""
        return format_grid(solution)

    # ------------------------------------------------------------------ rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: values in ``1..w`` (``range``), no repeat in a row (``row_repeat``) or column
        (``column_repeat``), every cage meets its clue (``cage``)."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        w = instance.params.w
        if not (isinstance(grid, tuple | list) and len(grid) == w and
                all(isinstance(row, tuple | list) and len(row) == w for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be {w} rows of {w} numbers"),))
        out: list[Violation] = []
        for r in range(w):
            for c in range(w):
                v = grid[r][c]
                if not (isinstance(v, int) and 1 <= v <= w):
                    out.append(Violation("range", f"({r + 1},{c + 1}) holds {v!r}, not a number 1..{w}",
                                         ((r + 1, c + 1),)))
        if out:
            return CheckResult(False, tuple(out))
        for r in range(w):
            if len(set(grid[r])) != w:
                cells = tuple((r + 1, c + 1) for c in range(w) if grid[r].count(grid[r][c]) > 1)
                out.append(Violation("row_repeat", f"row {r + 1} repeats a number", cells))
        for c in range(w):
            col = [grid[r][c] for r in range(w)]
            if len(set(col)) != w:
                cells = tuple((r + 1, c + 1) for r in range(w) if col.count(col[r]) > 1)
                out.append(Violation("column_repeat", f"column {c + 1} repeats a number", cells))
        for cg in instance.data.cages:
            vals = [grid[r - 1][c - 1] for r, c in cg.cells]
            if not cage_ok(cg.op, cg.target, vals):
                r, c = cg.cells[0]
                out.append(Violation("cage", f"the cage {cg.label} at ({r},{c}) holds {vals}", cg.cells))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        w = instance.params.w
        model = new_model()
        x = [[model.NewIntVar(1, w, f"x{r}{c}") for c in range(w)] for r in range(w)]
        for k in range(w):
            model.AddAllDifferent(x[k])
            model.AddAllDifferent([x[r][k] for r in range(w)])
        for cg in instance.data.cages:
            vs = [x[r - 1][c - 1] for r, c in cg.cells]
            if cg.op == "a":
                model.Add(sum(vs) == cg.target)
            elif cg.op == "m":
                if len(vs) == 1:
                    model.Add(vs[0] == cg.target)
                else:
                    model.AddMultiplicationEquality(cg.target, vs)
            else:
                pairs = [(p, q) for p in range(1, w + 1) for q in range(1, w + 1) if cage_ok(cg.op, cg.target, (p, q))]
                model.AddAllowedAssignments(vs, pairs)
        flat = [v for row in x for v in row]
        sols, exhausted = enumerate_solutions(model, flat, max_solutions)
        return SolveResult(tuple(tuple(tuple(s[r * w:(r + 1) * w]) for r in range(w)) for s in sols), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[int, ...], ...]:
        """``S`` + ``w*w`` digits ``1..w`` row-major (``keen.c`` ``execute_move``) -> the grid.

        Raises
        ------
        ConfigError
            Anything else (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        w = instance.params.w
        if not (isinstance(move, str) and re.fullmatch(f"S[1-{w}]{{{w * w}}}", move)):
            raise bad_solve_move(self.name, move, f"it must be 'S' and {w * w} digits 1-{w}")
        d = [int(ch) for ch in move[1:]]
        return tuple(tuple(d[r * w:(r + 1) * w]) for r in range(w))

    # ------------------------------------------------------------------ claims
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        w = instance.params.w
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"keen: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        if not claim.cells:
            raise ClaimError("keen: a claim needs at least one cell")
        for cell in claim.cells:
            self._check_cell(instance, cell, w, w)
        if claim.kind == "value":
            if len(claim.cells) != 1:
                raise ClaimError(f"keen: a value claim has one cell, got {claim.cells}")
            self._claim_number(claim, 1, w, "a number")
        v = claim.value
        if claim.kind == "cage":
            if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) and v[0] in _OP_LETTER):
                raise ClaimError(f"keen: a cage claim's value is (op, target) with op in + - * /, got {v!r}")
            k = len(claim.cells)
            self._claim_number(claim, 1, cage_target_max(v[0], k, w), f"a {v[0]} target over {k} cell(s)", item=1)

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value claims: the cell's number in ``solution``; cage claims: whether the puzzle has that cage with
        that clue (static).

        Raises
        ------
        ClaimError
            A claim outside the vocabulary: unknown kind, no cell or a cell off the grid, a value claim that is not
            one cell and an integer 1..w (``"3"``, ``99``), a cage value that is not ``(op, target)`` with ``op`` in
            ``+ - * /`` and an integer target in ``1..``:func:`cage_target_max` (for the claim's number of cells);
            for either polarity."""
        self._validate_claim(instance, claim)
        if claim.kind == "value":
            (r, c), = claim.cells
            truth = solution[r - 1][c - 1] == claim.value
        else:
            truth = any(cg.cells == tuple(claim.cells) and (OPS[cg.op], cg.target) == tuple(claim.value)
                        for cg in instance.data.cages)
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per cell outside one-cell cages."""
        sol = self.unique_solution(instance) if solution is None else solution
        single = {cg.cells[0] for cg in instance.data.cages if len(cg.cells) == 1}
        w = instance.params.w
        return frozenset(Claim("value", ((r, c),), sol[r - 1][c - 1]) for r in range(1, w + 1)
                         for c in range(1, w + 1) if (r, c) not in single)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One cage claim per cage."""
        return tuple(_cage_claim(cg) for cg in instance.data.cages)

    def claim_text(self, claim: Claim) -> str:
        """"(3,4) is 2" / "(3,4) is not 2"; "the cage at (1,1) has clue 6+" / "... does not have clue 6+"."""
        if claim.kind == "cage":
            r, c = claim.cells[0]
            op, target = claim.value
            verb = "has clue" if claim.positive else "does not have clue"
            return f"the cage at ({r},{c}) {verb} {target}{op}"
        return super().claim_text(claim)

    _CAGE_RE = re.compile(r"the cage at \(\s*(\d+)\s*,\s*(\d+)\s*\) (has clue|does not have clue) (\d+)\s?([-+*/x×÷])",
                          re.IGNORECASE)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read cage claims ("the cage at (1,1) has clue 6+", ``x``/``×`` read as ``*`` and ``÷`` as ``/``).
        The anchor cell is mapped to its whole cage; an anchor that starts no cage gives a one-cell claim (which
        then does not hold). Linear time (one regex scan, no nested quantifiers)."""
        text = mask_long_numbers(text)
        w = instance.params.w
        by_anchor = {cg.cells[0]: cg for cg in instance.data.cages}
        out = []
        for m in self._CAGE_RE.finditer(text):
            r, c = int(m.group(1)), int(m.group(2))
            if not (1 <= r <= w and 1 <= c <= w):
                continue
            op = {"x": "*", "×": "*", "÷": "/"}.get(m.group(5).lower(), m.group(5))
            cg = by_anchor.get((r, c))
            cells = cg.cells if cg is not None else ((r, c),)
            pos = m.group(3).lower() == "has clue"
            out.append((Claim("cage", cells, (op, int(m.group(4))), pos), m.start(), m.end()))
        return out

    # ------------------------------------------------------------------ constraint view
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Cell -> ``(1, ..., w)``."""
        w = instance.params.w
        dom = tuple(range(1, w + 1))
        return {(r, c): dom for r in range(1, w + 1) for c in range(1, w + 1)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """``row r`` and ``column c`` (alldiff) and one unit per cage (premise: its cage claim)."""
        w = instance.params.w
        out = [Unit(f"row {r}", tuple((r, c) for c in range(1, w + 1)), _all_distinct, (), "alldiff")
               for r in range(1, w + 1)]
        out += [Unit(f"column {c}", tuple((r, c) for r in range(1, w + 1)), _all_distinct, (), "alldiff")
                for c in range(1, w + 1)]
        for cg in instance.data.cages:
            r, c = cg.cells[0]
            out.append(Unit(f"the cage {cg.label} at ({r},{c})", cg.cells, _CageUnit(cg.op, cg.target),
                            (_cage_claim(cg),)))
        return tuple(out)


def _cage_claim(cg: KeenCage) -> Claim:
    return Claim("cage", cg.cells, (OPS[cg.op], cg.target))


def _cage_name(k: int) -> str:
    """Cage labels A..Z, then AA, AB, ... (a 9x9 grid has at most 81 cages)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return letters[k] if k < 26 else letters[k // 26 - 1] + letters[k % 26]


PUZZLE = register_puzzle(Keen())
