"""Signpost (Arrow Path) from Simon Tatham's Portable Puzzle Collection.

Rules
-----
Number the ``N = W*H`` cells of a ``W x H`` grid with ``1..N``, each number once, so that they form one chain:
every cell except the one holding ``N`` has an arrow (one of eight compass directions), and the cell holding
``k + 1`` lies somewhere along the arrow of the cell holding ``k`` (in that direction, at any distance). Some numbers
are given (always ``1`` and ``N``). Source: the collection's ``signpost.c`` (``ispointing``, ``check_completion``).
Because the numbers are a permutation and each step follows an arrow, the chain 1..N is automatically one path
through all cells.

Game IDs
--------
Params ``<W>x<H>[c]``; ``c`` (full form only) means the generator put 1 and ``N`` in opposite corners (the short
form ``"4x4"`` therefore reads as "free ends", as in the collection). Desc: one item per cell in row-major order,
an optional given number (decimal) followed by the arrow letter ``a``..``h`` = N, NE, E, SE, S, SW, W, NW (the
cell holding ``N`` carries ``a``). The collection's ``SOLVE`` move is ``S`` followed by the same grammar with every
number present.

Coordinates
-----------
Cells are 1-based ``(row, column)``; N points up (to row 1), E to the right.

Answer format
-------------
``H`` lines of ``W`` numbers separated by spaces (the full numbering, given numbers included).

Claims and C*
-------------
* ``"value"``: ``Claim("value", ((r, c),), k)`` "(r,c) is k" / "(r,c) is not k".
* ``"arrow"``: ``Claim("arrow", ((r, c),), "NE")`` "the arrow at (r,c) points NE" (given, static).
* ``"link"``: ``Claim("link", ((r1, c1), (r2, c2)))`` "(r1,c1) is followed by (r2,c2)": the number in the second
  cell is one more than in the first (ordered cells, not sorted).

Given claims: the arrows and the given numbers. C* (reasonshape choice, as solo's "one value claim per empty
cell"): one positive value claim per cell whose number is not given.

Constraint view
---------------
Variables: the 1-based cells, domain ``1..N`` minus the given numbers (a given cell's domain is its number). Units:
``"all cells"`` (all numbers distinct, kind ``alldiff``) and one ``"the arrow at (r,c)"`` per cell: the cell holds
``N``, or its number plus one is held by a cell along its arrow (variables: the cell, then the cells along the
arrow), premises its arrow claim (and its given number). There is no global rule outside these units.

Levels
------
=========  ==========  =============================================================
level      params      native generator
=========  ==========  =============================================================
trivial    ``2x3``     2 columns x 3 rows, free ends, minimal givens besides 1 and N
easy       ``3x3``     3x3, free ends, minimal givens besides 1 and N
normal     ``4x4c``    4x4, 1 and N in opposite corners, minimal givens
hard       ``5x5c``    5x5, 1 and N in opposite corners, minimal givens
=========  ==========  =============================================================

The native generator draws a random Hamiltonian chain of queen moves (randomised depth-first search with
backtracking; with ``c`` from the top-left to the bottom-right corner), sets each arrow to the direction of the
next cell, gives 1 and N, adds the number of a cell where another solution differs until CP-SAT proves the numbering
unique, then removes every removable given number in random order. Difficulty comes from grid size (the
collection has no difficulty setting for Signpost). Source: reasonshape choice.
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
    read_int,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["SignpostParams", "SignpostData", "Signpost", "PUZZLE"]

DIRS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_DELTA = {"N": (-1, 0), "NE": (-1, 1), "E": (0, 1), "SE": (1, 1), "S": (1, 0), "SW": (1, -1), "W": (0, -1),
          "NW": (-1, -1)}
_WORDS = {"N": "north", "NE": "north-east", "E": "east", "SE": "south-east", "S": "south", "SW": "south-west",
          "W": "west", "NW": "north-west"}


@dataclass(frozen=True)
class SignpostParams:
    """Signpost params: ``w`` columns, ``h`` rows (``w*h >= 2``), ``corners`` (the ``c`` flag)."""

    w: int
    h: int
    corners: bool = False


@dataclass(frozen=True)
class SignpostData:
    """A parsed desc: ``arrows`` (``H x W`` direction names) and ``given`` (``H x W`` numbers or ``None``)."""

    arrows: tuple[tuple[str, ...], ...]
    given: tuple[tuple[int | None, ...], ...]


def _ray(w: int, h: int, r: int, c: int, d: str) -> list[tuple[int, int]]:
    dr, dc = _DELTA[d]
    out, rr, cc = [], r + dr, c + dc
    while 0 <= rr < h and 0 <= cc < w:
        out.append((rr, cc))
        rr, cc = rr + dr, cc + dc
    return out


class _ArrowAllowed:
    """``allowed`` of an arrow unit: values[0] is N, or values[0] + 1 is among the cells along the arrow."""

    def __init__(self, n: int):
        self.n = n

    def __call__(self, values: tuple) -> bool:
        return values[0] == self.n or (values[0] + 1) in values[1:]


class _AllDiff:
    def __call__(self, values: tuple) -> bool:
        return len(set(values)) == len(values)


class Signpost(Puzzle):
    """Signpost: number the cells 1..N along the arrows. See the module docstring."""

    name = "signpost"
    LEVELS = {"trivial": "2x3", "easy": "3x3", "normal": "4x4c", "hard": "5x5c"}
    ANSWER_SYMBOLS = {"1..N": "the number of the cell in the chain (N = number of cells)"}
    CLAIM_KINDS = ("value", "arrow", "link")
    VALUE_WORDS: dict = {}

    # ----------------------------------------------------------------- params and game IDs
    def parse_params(self, text: str) -> SignpostParams:
        """Parse ``"4x4c"`` / ``"4x4"`` into :class:`SignpostParams`.

        Raises
        ------
        GameIdError
            Malformed text or a grid of fewer than 2 cells.
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '4x4c'")
        w, h, i = parse_wxh(text)
        corners = False
        if i < len(text) and text[i] == "c":
            corners, i = True, i + 1
        if i != len(text):
            raise GameIdError(text, i, "end of params (format <W>x<H>[c])")
        if w * h < 2:
            raise GameIdError(text, 0, "a grid of at least 2 cells")
        return SignpostParams(w, h, corners)

    def format_params(self, params: SignpostParams, full: bool = True) -> str:
        """``"4x4c"`` (full) or ``"4x4"`` (short), as the collection's ``encode_params``."""
        return f"{params.w}x{params.h}{'c' if full and params.corners else ''}"

    def parse_desc(self, params: SignpostParams, desc: str) -> Instance:
        """Parse the per-cell ``[number]letter`` items into :class:`SignpostData`.

        Raises
        ------
        GameIdError
            A number outside ``1..N`` or repeated, a character other than a digit or ``a``..``h``, a number without
            its arrow letter, or a wrong number of cells.
        """
        w, h = params.w, params.h
        n = w * h
        arrows, given, seen = [], [], {}
        i = 0
        while i < len(desc):
            if len(arrows) >= n:
                raise GameIdError(desc, i, f"end of desc after {n} cells")
            num = None
            if "0" <= desc[i] <= "9":
                start = i
                num, i = read_int(desc, i, "a number")
                if not 1 <= num <= n:
                    raise GameIdError(desc, start, f"a number from 1 to {n}")
                if num in seen:
                    raise GameIdError(desc, start, f"a number not given twice ({num} is already given)")
                seen[num] = start
            if i >= len(desc) or not ("a" <= desc[i] <= "h"):
                raise GameIdError(desc, i, "an arrow letter a-h (N, NE, E, SE, S, SW, W, NW)")
            arrows.append(DIRS[ord(desc[i]) - ord("a")])
            given.append(num)
            i += 1
        if len(arrows) != n:
            raise GameIdError(desc, len(desc), f"{n} cells for a {w}x{h} grid, got {len(arrows)}")
        data = SignpostData(tuple(tuple(arrows[r * w:(r + 1) * w]) for r in range(h)),
                            tuple(tuple(given[r * w:(r + 1) * w]) for r in range(h)))
        return Instance(self.name, params, desc, data)

    def format_desc(self, instance: Instance) -> str:
        """The collection's desc (``generate_desc``) for the instance's arrows and given numbers."""
        return encode_desc(instance.data)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: SignpostParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        chain = _random_chain(w, h, params.corners, rng)
        sol = [[0] * w for _ in range(h)]
        for k, (r, c) in enumerate(chain, 1):
            sol[r][c] = k
        arrows = [["N"] * w for _ in range(h)]
        for (r, c), (r2, c2) in zip(chain, chain[1:], strict=False):
            dr, dc = (r2 > r) - (r2 < r), (c2 > c) - (c2 < c)
            arrows[r][c] = next(d for d, v in _DELTA.items() if v == (dr, dc))
        arrows_t = tuple(map(tuple, arrows))
        sol_t = tuple(map(tuple, sol))
        given = {chain[0], chain[-1]}
        while True:
            other = _other_solution(w, h, _data(arrows_t, sol_t, given), sol_t)
            if other is None:
                break
            diff = [(r, c) for r in range(h) for c in range(w) if other[r][c] != sol_t[r][c] and (r, c) not in given]
            given.add(rng.choice(diff))
        removable = sorted(given - {chain[0], chain[-1]})
        rng.shuffle(removable)
        for cell in removable:
            given.discard(cell)
            if _other_solution(w, h, _data(arrows_t, sol_t, given), sol_t) is not None:
                given.add(cell)
        data = _data(arrows_t, sol_t, given)
        return Instance(self.name, params, encode_desc(data), data)

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid of arrows and given numbers, the answer format and the ``<answer>`` instruction."""
        p, d = instance.params, instance.data
        n = p.w * p.h
        cells = [[(f"{d.given[r][c]}:" if d.given[r][c] else "") + ("*" if d.given[r][c] == n else d.arrows[r][c])
                  for c in range(p.w)] for r in range(p.h)]
        width = max(len(x) for row in cells for x in row) + 1
        grid = "\n".join(" ".join(f"{x:<{width}}" for x in row).rstrip() for row in cells)
        ex = format_grid([[r * p.w + c + 1 for c in range(p.w)] for r in range(p.h)])
        return (
            f"Solve this Signpost puzzle on a grid of {p.h} rows and {p.w} columns ({n} cells).\n\n"
            "Rules:\n"
            f"- Write the numbers 1 to {n} in the cells, each number exactly once.\n"
            f"- Every cell except the one holding {n} has an arrow pointing in one of eight directions: N (up), "
            "NE, E (right), SE, S (down), SW, W (left), NW. For every k, the cell holding k+1 must lie somewhere "
            "along the arrow of the cell holding k (in exactly that direction, at any distance, skipping over "
            f"other cells). So 1, 2, ..., {n} form one chain through all cells that always follows the arrows.\n"
            "- Numbers shown in the grid are given and must be kept.\n\n"
            "Coordinates are 1-based (row, column), rows from top to bottom, columns from left to right; N points "
            "towards row 1.\n\n"
            f"The grid: each cell shows its arrow, preceded by its given number and a colon when the number is "
            f"given (e.g. '1:SE' is the cell holding 1 with a south-east arrow); '{n}:*' is the end cell holding "
            f"{n}, which has no arrow:\n"
            f"{grid}\n\n"
            f"Answer format: {p.h} lines, one per row from top to bottom, each with the {p.w} numbers of that row "
            "separated by spaces (given numbers included). For example, the layout (not the content) is:\n"
            f"{ex}\n\n"
            "Think it through, then put only the final grid of numbers inside <answer>...</answer>."
        )

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``H x W`` numbers from the last ``<answer>`` block (or the last grid of numbers).

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong size, or a token that is not a number ``1..N``.
        """
        p = instance.params
        n = p.w * p.h
        symbols = {str(k): k for k in range(1, n + 1)}
        grid, source, notes = read_grid_answer(text, p.h, p.w, symbols, single_chars=n <= 9)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """Numbers separated by spaces, one row per line (inverse of :meth:`parse_answer`)."""
        return format_grid(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: ``shape``, ``range``, ``duplicate``, ``given`` and ``arrow`` (k+1 not along k's
        arrow). O(N * max(W, H))."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, d = instance.params, instance.data
        w, h, n = p.w, p.h, p.w * p.h
        if (not isinstance(grid, (tuple, list)) or len(grid) != h
                or any(not isinstance(row, (tuple, list)) or len(row) != w for row in grid)):
            return CheckResult(False, (Violation("shape", f"expected {h} rows of {w} numbers"),))
        out = []
        bad = tuple((r + 1, c + 1) for r in range(h) for c in range(w)
                    if not isinstance(grid[r][c], int) or isinstance(grid[r][c], bool) or not 1 <= grid[r][c] <= n)
        if bad:
            return CheckResult(False, (Violation("range", f"every cell needs a number from 1 to {n}", bad),))
        where: dict[int, list] = {}
        for r in range(h):
            for c in range(w):
                where.setdefault(grid[r][c], []).append((r, c))
        for k, cells in sorted(where.items()):
            if len(cells) > 1:
                out.append(Violation("duplicate", f"{k} appears {len(cells)} times",
                                     tuple((r + 1, c + 1) for r, c in cells)))
        for r in range(h):
            for c in range(w):
                g = d.given[r][c]
                if g is not None and grid[r][c] != g:
                    out.append(Violation("given", f"({r + 1},{c + 1}) must keep its given {g}", ((r + 1, c + 1),)))
        for k in range(1, n):
            for r, c in where.get(k, ()):
                ray = _ray(w, h, r, c, d.arrows[r][c])
                if not any(grid[rr][cc] == k + 1 for rr, cc in ray):
                    out.append(Violation("arrow", f"{k + 1} is not along the {d.arrows[r][c]} arrow of {k} at "
                                                  f"({r + 1},{c + 1})", ((r + 1, c + 1),)))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p = instance.params
        model, num = _model(p.w, p.h, instance.data)
        flat = [x for row in num for x in row]
        sols, exhausted = enumerate_solutions(model, flat, max_solutions)
        return SolveResult(tuple(tuple(tuple(s[r * p.w:(r + 1) * p.w]) for r in range(p.h)) for s in sols),
                           exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[int, ...], ...]:
        """``S1d3f...`` (the desc grammar with every number, ``signpost.c`` ``solve_game``) -> the ``H x W``
        numbers. The arrows must be those of ``instance``.

        Raises
        ------
        ConfigError
            A wrong prefix, a body that is no valid desc, other arrows, a cell without its number
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        if not (isinstance(move, str) and move.startswith("S")):
            raise bad_solve_move(self.name, move, "it must start with 'S'")
        try:
            solved = self.parse_desc(instance.params, move[1:]).data
        except GameIdError as e:
            raise bad_solve_move(self.name, move, f"the body is no desc: expected {e.expected}") from None
        if solved.arrows != instance.data.arrows:
            raise bad_solve_move(self.name, move, "its arrows are not the instance's")
        if any(not x for row in solved.given for x in row):
            raise bad_solve_move(self.name, move, "a cell without its number")
        return tuple(tuple(int(x) for x in row) for row in solved.given)

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value and link claims against the solution, arrow claims against the instance.

        Raises
        ------
        ClaimError
            A claim outside the vocabulary, for either polarity: unknown kind, a cell off the grid, a wrong number
            of cells, a value that is not an integer ``1..W*H`` (``"3"``, ``99``), an arrow not in ``DIRS``, a
            link claim with a value (it takes ``None``).
        """
        p, d = instance.params, instance.data
        for cell in claim.cells:
            self._check_cell(instance, cell, p.h, p.w)
        if claim.kind == "value":
            if len(claim.cells) != 1:
                raise ClaimError(f"signpost: a value claim names one cell, got {claim.cells}")
            self._claim_number(claim, 1, p.w * p.h, "a number")
            (r, c), = claim.cells
            return (solution[r - 1][c - 1] == claim.value) == claim.positive
        if claim.kind == "arrow":
            if len(claim.cells) != 1 or claim.value not in DIRS:
                raise ClaimError(f"signpost: an arrow claim names one cell and one of {DIRS}, got {claim}")
            (r, c), = claim.cells
            return (d.arrows[r - 1][c - 1] == claim.value) == claim.positive
        if claim.kind == "link":
            if len(claim.cells) != 2:
                raise ClaimError(f"signpost: a link claim names two cells, got {claim.cells}")
            self._claim_no_value(claim)
            (r1, c1), (r2, c2) = claim.cells
            return (solution[r2 - 1][c2 - 1] == solution[r1 - 1][c1 - 1] + 1) == claim.positive
        raise ClaimError(f"signpost: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per cell whose number is not given."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), v) for r, row in enumerate(sol) for c, v in enumerate(row)
                         if instance.data.given[r][c] is None)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """The arrow of every cell but the end cell, then the given numbers."""
        d, n = instance.data, instance.params.w * instance.params.h
        arrows = [Claim("arrow", ((r + 1, c + 1),), a) for r, row in enumerate(d.arrows) for c, a in enumerate(row)
                  if d.given[r][c] != n]
        nums = [Claim("value", ((r + 1, c + 1),), g) for r, row in enumerate(d.given) for c, g in enumerate(row)
                if g is not None]
        return tuple(arrows + nums)

    def claim_text(self, claim: Claim) -> str:
        """``"(2,3) is 7"``, ``"the arrow at (1,1) points SE"``, ``"(1,1) is followed by (2,2)"``."""
        neg = not claim.positive
        if claim.kind == "arrow":
            (r, c), = claim.cells
            return f"the arrow at ({r},{c}) {'does not point' if neg else 'points'} {claim.value}"
        if claim.kind == "link":
            (r1, c1), (r2, c2) = claim.cells
            return f"({r1},{c1}) is {'not ' if neg else ''}followed by ({r2},{c2})"
        (r, c), = claim.cells
        return f"({r},{c}) is {'not ' if neg else ''}{claim.value}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read arrow and link claims as :meth:`claim_text` writes them (also direction words such as
        "south-east"). Linear regex scans."""
        text = mask_long_numbers(text)
        out = []
        for m in _ARROW_RE.finditer(text):
            word, end = m.group(4).lower(), m.end()
            d = _WORD_TO_DIR.get(word)
            if d is None:  # "points E and ...": only the first word names the direction
                first = word.split(" ")[0]
                d, end = _WORD_TO_DIR.get(first), m.start(4) + len(first)
            if d is None:
                continue
            out.append((Claim("arrow", ((int(m.group(1)), int(m.group(2))),), d, not m.group(3)), m.start(), end))
        for m in _LINK_RE.finditer(text):
            out.append((Claim("link", ((int(m.group(1)), int(m.group(2))), (int(m.group(4)), int(m.group(5)))),
                              None, not m.group(3)), m.start(), m.end()))
        return sorted(out, key=lambda t: t[1])

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every 1-based cell -> its possible numbers (the given number, or 1..N minus all given numbers)."""
        p, d = instance.params, instance.data
        n = p.w * p.h
        used = {g for row in d.given for g in row if g is not None}
        free = tuple(k for k in range(1, n + 1) if k not in used)
        return {(r + 1, c + 1): ((d.given[r][c],) if d.given[r][c] is not None else free)
                for r in range(p.h) for c in range(p.w)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """``"all cells"`` (alldiff) and ``"the arrow at (r,c)"`` per cell (see the module docstring)."""
        p, d = instance.params, instance.data
        n = p.w * p.h
        cells = tuple((r + 1, c + 1) for r in range(p.h) for c in range(p.w))
        out = [Unit("all cells", cells, _AllDiff(), (), "alldiff")]
        for r in range(p.h):
            for c in range(p.w):
                if d.given[r][c] == n:
                    continue  # the end cell has no arrow: nothing to constrain
                ray = tuple((rr + 1, cc + 1) for rr, cc in _ray(p.w, p.h, r, c, d.arrows[r][c]))
                prem = (Claim("arrow", ((r + 1, c + 1),), d.arrows[r][c]),)
                if d.given[r][c] is not None:
                    prem += (Claim("value", ((r + 1, c + 1),), d.given[r][c]),)
                out.append(Unit(f"the arrow at ({r + 1},{c + 1})", ((r + 1, c + 1),) + ray, _ArrowAllowed(n), prem))
        return tuple(out)


_WORD_TO_DIR = {**{d.lower(): d for d in DIRS}, **{v: k for k, v in _WORDS.items()},
                **{v.replace("-", " "): k for k, v in _WORDS.items()},
                **{v.replace("-", ""): k for k, v in _WORDS.items()},
                "up": "N", "down": "S", "left": "W", "right": "E"}
_ARROW_RE = re.compile(r"arrow (?:at|in) \((\d+),\s*(\d+)\) (?:(does not) point|points)(?: to the| towards?)? "
                       r"([a-z]+(?:[- ][a-z]+)?)", re.I)
_LINK_RE = re.compile(r"\((\d+),\s*(\d+)\) is (not )?followed by \((\d+),\s*(\d+)\)", re.I)


def encode_desc(data: SignpostData) -> str:
    """The collection's desc (``generate_desc``): ``[number]letter`` per cell."""
    out = []
    for arow, grow in zip(data.arrows, data.given, strict=True):
        for a, g in zip(arow, grow, strict=True):
            out.append(f"{g if g else ''}{chr(ord('a') + DIRS.index(a))}")
    return "".join(out)


def _data(arrows, sol, given) -> SignpostData:
    h, w = len(sol), len(sol[0])
    return SignpostData(arrows, tuple(tuple(sol[r][c] if (r, c) in given else None for c in range(w))
                                      for r in range(h)))


def _model(w: int, h: int, d: SignpostData):
    """CP-SAT: num[r][c] in 1..N, all different, given numbers, and for each cell a successor along its arrow
    (``succ`` booleans, exactly one per cell but the last) with num[succ] = num + 1."""
    n = w * h
    model = new_model()
    num = [[model.NewIntVar(1, n, f"n{r}_{c}") for c in range(w)] for r in range(h)]
    model.AddAllDifferent([x for row in num for x in row])
    preds: dict[tuple[int, int], list] = {(r, c): [] for r in range(h) for c in range(w)}
    for r in range(h):
        for c in range(w):
            if d.given[r][c] is not None:
                model.Add(num[r][c] == d.given[r][c])
            is_last = model.NewBoolVar("")
            model.Add(num[r][c] == n).OnlyEnforceIf(is_last)
            model.Add(num[r][c] != n).OnlyEnforceIf(is_last.Not())
            succ = []
            for rr, cc in _ray(w, h, r, c, d.arrows[r][c]):
                s = model.NewBoolVar("")
                model.Add(num[rr][cc] == num[r][c] + 1).OnlyEnforceIf(s)
                succ.append(s)
                preds[(rr, cc)].append(s)
            model.Add(sum(succ) + is_last == 1)
    for (r, c), ps in preds.items():
        is_first = model.NewBoolVar("")
        model.Add(num[r][c] == 1).OnlyEnforceIf(is_first)
        model.Add(num[r][c] != 1).OnlyEnforceIf(is_first.Not())
        model.Add(sum(ps) + is_first == 1)
    return model, num


def _other_solution(w, h, d: SignpostData, sol):
    model, num = _model(w, h, d)
    flat = [x for row in num for x in row]
    lits = []
    for r in range(h):
        for c in range(w):
            b = model.NewBoolVar("")
            model.Add(num[r][c] != sol[r][c]).OnlyEnforceIf(b)
            lits.append(b)
    model.AddBoolOr(lits)
    found, _ = enumerate_solutions(model, flat, 1)
    if not found:
        return None
    return tuple(tuple(found[0][r * w:(r + 1) * w]) for r in range(h))


def _random_chain(w: int, h: int, corners: bool, rng: random.Random, budget: int = 200_000):
    """A random Hamiltonian path of queen moves (randomised DFS, fewest-onward-moves first, with backtracking)."""
    cells = [(r, c) for r in range(h) for c in range(w)]
    moves = {cell: [x for d in DIRS for x in _ray(w, h, cell[0], cell[1], d)] for cell in cells}
    end = (h - 1, w - 1) if corners else None
    counter = [0]
    for _ in range(50):
        start = (0, 0) if corners else rng.choice(cells)
        path = [start]
        if _extend(path, {start}, moves, len(cells), end, rng, counter, budget):
            return path
    raise GenerationError(f"signpost: no Hamiltonian arrow chain found on {w}x{h}")


def _extend(path, used, moves, n, end, rng, counter, budget) -> bool:
    """Depth-first extension of ``path`` to ``n`` cells ending at ``end`` (any end when ``None``)."""
    counter[0] += 1
    if counter[0] > budget:
        return False
    if len(path) == n:
        return end is None or path[-1] == end
    options = [x for x in moves[path[-1]] if x not in used and (x != end or len(path) == n - 1)]
    rng.shuffle(options)
    options.sort(key=lambda x: sum(y not in used for y in moves[x]))
    for x in options:
        path.append(x)
        used.add(x)
        if _extend(path, used, moves, n, end, rng, counter, budget):
            return True
        path.pop()
        used.discard(x)
    return False


PUZZLE = register_puzzle(Signpost())
