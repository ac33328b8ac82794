"""Dominosa: place every domino of a double-n set on a grid of numbers.

Rules (Simon Tatham's Portable Puzzle Collection, ``dominosa.c``): a grid of ``n+1`` rows and ``n+2`` columns holds
numbers ``0..n``. Cover it completely with dominoes (each covers two orthogonally adjacent cells) so that every
domino of the double-n set, i.e. every unordered pair ``{a, b}`` with ``0 <= a <= b <= n``, is used exactly once.

Game IDs
--------
``params`` is ``<n>`` (short) or ``<n>d<diff>`` (full), ``diff`` one of ``t`` (Trivial), ``b`` (Basic), ``h``
(Hard), ``e`` (Extreme), ``a`` (Ambiguous); a bare ``a`` after ``n`` is the collection's legacy spelling of
Ambiguous; ``n >= 1``; the short form means Basic (``dominosa.c`` ``decode_params`` / ``default_params``); other
characters, which the collection skips, are rejected (reasonshape also caps ``n`` at 60).
``desc`` is the ``(n+1)(n+2)`` numbers in row-major order, one digit each, numbers above 9 as ``[k]``; every number
occurs exactly ``n+2`` times (``validate_desc``). The collection's ``SOLVE`` move is ``S`` followed by ``;D<i>,<j>``
(a domino on the 0-based row-major cells ``i`` and ``j``) and ``;E<i>,<j>`` (an edge mark, ignored here)
(``solve_game`` / ``execute_move``).

Answer and claims
-----------------
The answer is a grid of direction letters, one per cell, naming where the other half of the cell's domino lies:
``L`` left, ``R`` right, ``U`` up, ``D`` down (``ANSWER_SYMBOLS``). A solution is a tuple of ``n+1`` tuples of
``n+2`` such letters. Claim kinds:

* ``"domino"``: ``Claim("domino", (a, b))`` with ``a < b`` two adjacent cells, "(r,c) and (r,c') form a domino"
  (negated: "... do not form a domino"). The value claim of the constraint view, ``value_claim((r,c), "R")``, is
  the domino claim of ``(r,c)`` and its right neighbour.
* ``"number"``: ``Claim("number", ((r,c),), k)`` "(r,c) shows k": a static fact about the grid (a given).

C* (paper A §C; definition a reasonshape choice) is one domino claim per domino of the solution:
``(n+1)(n+2)/2`` claims. Given claims are the number claims of every cell.

Constraint view
---------------
Variables are the cells (1-based), domain the directions that stay on the grid. Units: one per pair of adjacent
cells, "(r,c) and (r,c')" (the two cells agree: one points at the other iff the other points back), and one per
domino of the set, "the a-b domino" over the cells that could hold it (exactly one placement of it is chosen;
premises: those cells' number claims). Dominosa has no global rule: the units define the solutions exactly.

Levels
------
=======  ======  ==================================================
level    params  grid
=======  ======  ==================================================
trivial  1dt     2x3, 3 dominoes
easy     2dt     3x4, 6 dominoes
normal   3db     4x5, 10 dominoes
hard     4db     5x6, 15 dominoes
=======  ======  ==================================================

The native generator draws a random tiling and a random assignment of the dominoes to it, and keeps the first
layout whose solution CP-SAT proves unique (the collection's own generator also works by rejection). Difficulty
comes from ``n`` only; the collection's technique grades (``t``/``b``/``h``/``e``) are kept in the params but
not reproduced natively (use ``backend="sgt"`` for graded puzzles). Source: reasonshape choice after paper A §A.
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
    read_int,
    solve_move_items,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["DominosaParams", "DominosaData", "Dominosa", "PUZZLE"]

_DIFFS = "tbhea"
_DIFF_NAMES = {"t": "Trivial", "b": "Basic", "h": "Hard", "e": "Extreme", "a": "Ambiguous"}
#: direction letter -> (drow, dcol)
_DIRS = {"L": (0, -1), "R": (0, 1), "U": (-1, 0), "D": (1, 0)}
_OPPOSITE = {"L": "R", "R": "L", "U": "D", "D": "U"}
_MAX_ATTEMPTS = 2000


@dataclass(frozen=True)
class DominosaParams:
    """Dominosa params: the largest number ``n`` (>= 1; grid ``(n+1) x (n+2)``) and the difficulty letter."""

    n: int
    diff: str = "b"

    @property
    def rows(self) -> int:
        return self.n + 1

    @property
    def cols(self) -> int:
        return self.n + 2


@dataclass(frozen=True)
class DominosaData:
    """A parsed dominosa desc: ``numbers`` is ``n+1`` rows of ``n+2`` ints in ``0..n``."""

    numbers: tuple[tuple[int, ...], ...]


def _neighbour(cell: tuple[int, int], d: str) -> tuple[int, int]:
    dr, dc = _DIRS[d]
    return (cell[0] + dr, cell[1] + dc)


def _direction(a: tuple[int, int], b: tuple[int, int]) -> str | None:
    """The direction letter from cell ``a`` to an adjacent cell ``b`` (``None`` if not adjacent)."""
    for d, (dr, dc) in _DIRS.items():
        if (a[0] + dr, a[1] + dc) == (b[0], b[1]):
            return d
    return None


def _encode_desc(numbers) -> str:
    """Numbers row-major as ``dominosa.c`` ``new_game_desc`` writes them (``[k]`` for ``k > 9``)."""
    return "".join(str(k) if k < 10 else f"[{k}]" for row in numbers for k in row)


def _dkey(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)


class _PairAgree:
    """Unit predicate: two adjacent cells agree on whether they form a domino (picklable, no closure)."""

    def __init__(self, d_ab: str):
        self.d_ab, self.d_ba = d_ab, _OPPOSITE[d_ab]

    def __call__(self, values: tuple) -> bool:
        return (values[0] == self.d_ab) == (values[1] == self.d_ba)


class _DominoOnce:
    """Unit predicate: among ``cells``, exactly one domino showing ``key`` is chosen (two half-cells point at a
    partner whose number completes the pair)."""

    def __init__(self, cells, numbers, key):
        self.cells, self.numbers, self.key = cells, numbers, key

    def __call__(self, values: tuple) -> bool:
        hits = 0
        rows, cols = len(self.numbers), len(self.numbers[0])
        for (r, c), d in zip(self.cells, values, strict=True):
            pr, pc = _neighbour((r, c), d)
            if 1 <= pr <= rows and 1 <= pc <= cols and \
                    _dkey(self.numbers[r - 1][c - 1], self.numbers[pr - 1][pc - 1]) == self.key:
                hits += 1
        return hits == 2


class Dominosa(Puzzle):
    """Dominosa (``dominosa.c``). See the module docstring for game IDs, answers, claims, C* and levels."""

    name = "dominosa"
    LEVELS = {"trivial": "1dt", "easy": "2dt", "normal": "3db", "hard": "4db"}
    ANSWER_SYMBOLS = {
        "L": "the other half of this cell's domino is the cell to the LEFT",
        "R": "the other half of this cell's domino is the cell to the RIGHT",
        "U": "the other half of this cell's domino is the cell ABOVE (up)",
        "D": "the other half of this cell's domino is the cell BELOW (down)",
    }
    CLAIM_KINDS = ("domino", "number")
    VALUE_WORDS: dict[str, Hashable] = {}

    # ------------------------------------------------------------------ params
    def parse_params(self, text: str) -> DominosaParams:
        """Parse ``"<n>"`` or ``"<n>d<diff>"`` (also the legacy ``"<n>a"``). Raises :class:`GameIdError`."""
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '3db'")
        n, i = read_int(text, 0, "the largest domino number n (digits)")
        diff = "b"
        while i < len(text):
            ch = text[i]
            if ch == "a":
                diff, i = "a", i + 1
            elif ch == "d":
                if i + 1 >= len(text) or text[i + 1] not in _DIFFS:
                    raise GameIdError(text, i + 1, f"a difficulty letter, one of {list(_DIFFS)}")
                diff, i = text[i + 1], i + 2
            else:
                raise GameIdError(text, i, "'d<difficulty>' or the end of the params")
        if n < 1:
            raise GameIdError(text, 0, "n >= 1 (maximum face number must be at least one)")
        if n > 60:
            raise GameIdError(text, 0, "n <= 60 (larger grids are out of scope)")
        return DominosaParams(n, diff)

    def format_params(self, params: DominosaParams, full: bool = True) -> str:
        """``"<n>d<diff>"`` (full) or ``"<n>"`` (short), as ``encode_params``."""
        return f"{params.n}d{params.diff}" if full else f"{params.n}"

    # ------------------------------------------------------------------ desc
    def parse_desc(self, params: DominosaParams, desc: str) -> Instance:
        """Parse a desc as ``validate_desc`` does. Raises :class:`GameIdError` with the position and expectation."""
        n, rows, cols = params.n, params.rows, params.cols
        vals: list[int] = []
        i = 0
        for _ in range(rows * cols):
            if i >= len(desc):
                raise GameIdError(desc, i, f"{rows * cols} numbers (the description is too short: "
                                           f"{len(vals)} read)")
            ch = desc[i]
            if "0" <= ch <= "9":
                k, start = int(ch), i
                i += 1
            elif ch == "[":
                start = i
                i += 1
                j = digits_end(desc, i)
                k = int(desc[i:j]) if j > i else 0  # the collection's atoi reads an empty number as 0
                if j >= len(desc) or desc[j] != "]":
                    raise GameIdError(desc, j, "']' closing a bracketed number")
                i = j + 1
            else:
                raise GameIdError(desc, i, "a digit or '[number]'")
            if k > n:
                raise GameIdError(desc, start, f"a number in 0..{n} (got {k})")
            vals.append(k)
        if i != len(desc):
            raise GameIdError(desc, i, f"the end of the description after {rows * cols} numbers")
        for k in range(n + 1):
            if vals.count(k) != n + 2:
                raise GameIdError(desc, None, f"each number 0..{n} exactly {n + 2} times "
                                              f"({k} occurs {vals.count(k)} times)")
        numbers = tuple(tuple(vals[r * cols:(r + 1) * cols]) for r in range(rows))
        return Instance(self.name, params, desc, DominosaData(numbers))

    # ------------------------------------------------------------------ generation
    def _generate(self, params: DominosaParams, rng: random.Random) -> Instance:
        rows, cols, n = params.rows, params.cols, params.n
        dominoes = [(a, b) for b in range(n + 1) for a in range(b + 1)]
        for _ in range(_MAX_ATTEMPTS):
            partner = random_domino_tiling(cols, rows, rng)
            pairs = sorted({(min(i, j), max(i, j)) for i, j in enumerate(partner)})
            order = dominoes[:]
            rng.shuffle(order)
            vals = [0] * (rows * cols)
            for (i, j), (a, b) in zip(pairs, order, strict=True):
                if rng.random() < 0.5:
                    a, b = b, a
                vals[i], vals[j] = a, b
            numbers = tuple(tuple(vals[r * cols:(r + 1) * cols]) for r in range(rows))
            inst = Instance(self.name, params, _encode_desc(numbers), DominosaData(numbers))
            if self.solve(inst, 2).unique:
                return inst
        raise GenerationError(f"dominosa: no unique layout for n={n} in {_MAX_ATTEMPTS} attempts")

    # ------------------------------------------------------------------ text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the number grid with row/column labels, and the direction-letter answer format."""
        p, nums = instance.params, instance.data.numbers
        n, rows, cols = p.n, p.rows, p.cols
        width = max(2, len(str(n)) + 1)
        header = "column |" + "".join(str(c + 1).rjust(width) for c in range(cols))
        rule = "-------+" + "-" * (width * cols)
        grid = [f"row {r + 1:>2} |" + "".join(str(v).rjust(width) for v in nums[r]) for r in range(rows)]
        n_dom = (n + 1) * (n + 2) // 2
        example = ("For example, the 2x3 grid\n  0 1 1\n  0 0 1\n"
                   "is solved by the dominoes (1,1)-(2,1) [0-0], (1,2)-(1,3) [1-1] and (2,2)-(2,3) [0-1], written as\n"
                   "  D R L\n  U R L")
        return "\n".join([
            f"Solve this Dominosa puzzle: a grid of {rows} rows and {cols} columns filled with numbers 0 to {n}.",
            "",
            "Rules:",
            "1. Cover the whole grid with dominoes. A domino covers exactly two cells that are next to each other "
            "horizontally or vertically, and no two dominoes overlap.",
            f"2. Each domino shows the two numbers of the cells it covers. The set has one domino for every pair of "
            f"numbers a-b with 0 <= a <= b <= {n} ({n_dom} dominoes, doubles such as 0-0 included), and every "
            "domino of the set must be used exactly once. Order does not matter: 1-2 and 2-1 are the same domino.",
            "",
            "Coordinates are (row, column), 1-based: rows are numbered from the top (1) to the bottom "
            f"({rows}), columns from the left (1) to the right ({cols}).",
            "",
            "The grid (row and column numbers are labels, not part of the puzzle):",
            header,
            rule,
            *grid,
            "",
            f"Answer format: {rows} lines (row 1 first), each with {cols} letters separated by spaces, one letter "
            "per cell saying where the other half of that cell's domino is:",
            *(f"  {s} = {m}" for s, m in self.ANSWER_SYMBOLS.items()),
            example,
            "",
            "Put your final answer inside <answer>...</answer>, with nothing but the grid in the block.",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the direction-letter grid (letters may be run together or separated by spaces, commas, pipes).

        Raises
        ------
        AnswerParseError
            No answer block and no grid-shaped block, wrong size, or an unknown symbol.
        """
        p = instance.params
        symbols = {s: s for s in _DIRS}
        grid, source, notes = read_grid_answer(text, p.rows, p.cols, symbols)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The direction-letter grid, letters separated by spaces."""
        return format_grid(solution)

    # ------------------------------------------------------------------ rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check a tiling by the rules: every cell's partner is on the grid and points back (``partner``), and
        every domino of the set is used exactly once (``duplicate_domino`` / ``missing_domino``)."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, nums = instance.params, instance.data.numbers
        rows, cols = p.rows, p.cols
        if not _is_grid(grid, rows, cols):
            return CheckResult(False, (Violation("shape", f"the answer must be {rows} rows of {cols} cells"),))
        out = [Violation("symbol", f"({r},{c}) holds {d!r}, not one of L/R/U/D", ((r, c),))
               for r in range(1, rows + 1) for c in range(1, cols + 1)
               if not isinstance(d := grid[r - 1][c - 1], str) or d not in _DIRS]
        if out:
            return CheckResult(False, tuple(out))
        used: dict[tuple[int, int], list[tuple[tuple[int, int], tuple[int, int]]]] = {}
        for r in range(1, rows + 1):
            for c in range(1, cols + 1):
                d = grid[r - 1][c - 1]
                pr, pc = _neighbour((r, c), d)
                if not (1 <= pr <= rows and 1 <= pc <= cols):
                    out.append(Violation("partner", f"({r},{c}) points off the grid ({d})", ((r, c),)))
                    continue
                if grid[pr - 1][pc - 1] != _OPPOSITE[d]:
                    out.append(Violation("partner", f"({r},{c}) points at ({pr},{pc}) which does not point back",
                                         ((r, c), (pr, pc))))
                    continue
                if (r, c) < (pr, pc):
                    key = _dkey(nums[r - 1][c - 1], nums[pr - 1][pc - 1])
                    used.setdefault(key, []).append(((r, c), (pr, pc)))
        if not out:
            for key, places in sorted(used.items()):
                if len(places) > 1:
                    cells = tuple(x for pl in places for x in pl)
                    out.append(Violation("duplicate_domino", f"the {key[0]}-{key[1]} domino is used {len(places)} "
                                                             "times", cells))
            for b in range(p.n + 1):
                for a in range(b + 1):
                    if (a, b) not in used:
                        out.append(Violation("missing_domino", f"the {a}-{b} domino is not used"))
        return CheckResult(not out, tuple(out))

    def _placements(self, instance: Instance) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        p = instance.params
        out = []
        for r in range(1, p.rows + 1):
            for c in range(1, p.cols + 1):
                if c < p.cols:
                    out.append(((r, c), (r, c + 1)))
                if r < p.rows:
                    out.append(((r, c), (r + 1, c)))
        return out

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p, nums = instance.params, instance.data.numbers
        model = new_model()
        places = self._placements(instance)
        xs = [model.NewBoolVar(f"p{k}") for k in range(len(places))]
        by_cell: dict[tuple[int, int], list] = {}
        by_key: dict[tuple[int, int], list] = {}
        for (a, b), x in zip(places, xs, strict=True):
            by_cell.setdefault(a, []).append(x)
            by_cell.setdefault(b, []).append(x)
            by_key.setdefault(_dkey(nums[a[0] - 1][a[1] - 1], nums[b[0] - 1][b[1] - 1]), []).append(x)
        for lits in by_cell.values():
            model.AddExactlyOne(lits)
        for b in range(p.n + 1):
            for a in range(b + 1):
                lits = by_key.get((a, b), [])
                if not lits:
                    return SolveResult((), True)
                model.AddExactlyOne(lits)
        sols, exhausted = enumerate_solutions(model, xs, max_solutions)
        out = []
        for vals in sols:
            g = [[""] * p.cols for _ in range(p.rows)]
            for (a, b), v in zip(places, vals, strict=True):
                if v:
                    g[a[0] - 1][a[1] - 1] = _direction(a, b)
                    g[b[0] - 1][b[1] - 1] = _direction(b, a)
            out.append(tuple(tuple(row) for row in g))
        return SolveResult(tuple(out), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """``S;D<i>,<j>;...`` (``E<i>,<j>`` edge marks checked and ignored; ``i``, ``j`` row-major 0-based cell
        indices of two adjacent cells) -> the direction grid.

        Raises
        ------
        ConfigError
            A malformed item, cells that are not adjacent, or cells left uncovered
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p = instance.params
        rows, cols = p.rows, p.cols
        g = [[""] * cols for _ in range(rows)]
        for part in solve_move_items(self.name, move):
            m = re.fullmatch(rf"([DE]){MOVE_NUM},{MOVE_NUM}", part)
            if not m:
                raise bad_solve_move(self.name, move, f"item {part!r} is not D<i>,<j> or E<i>,<j>")
            i, j = int(m[2]), int(m[3])
            a, b = (i // cols + 1, i % cols + 1), (j // cols + 1, j % cols + 1)
            d = _direction(a, b)
            if d is None or max(i, j) >= rows * cols:
                raise bad_solve_move(self.name, move, f"item {part!r} does not join two adjacent cells")
            if m[1] == "D":
                g[a[0] - 1][a[1] - 1], g[b[0] - 1][b[1] - 1] = d, _OPPOSITE[d]
        if any(not x for row in g for x in row):
            raise bad_solve_move(self.name, move, "cells left uncovered")
        return tuple(tuple(row) for row in g)

    # ------------------------------------------------------------------ claims
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        p = instance.params
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"dominosa: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        for cell in claim.cells:
            self._check_cell(instance, cell, p.rows, p.cols)
        if claim.kind == "domino":
            if len(claim.cells) != 2 or _direction(*claim.cells) is None:
                raise ClaimError(f"dominosa: a domino claim needs two adjacent cells, got {claim.cells}")
            self._claim_no_value(claim)
        if claim.kind == "number":
            if len(claim.cells) != 1:
                raise ClaimError(f"dominosa: a number claim has one cell, got {claim.cells}")
            self._claim_number(claim, 0, p.n, "a number")

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Domino claims: whether the two cells form a domino in ``solution``; number claims: whether the cell
        shows that number in the grid (static, independent of ``solution``). Raises :class:`ClaimError` for an
        unknown kind, an off-grid cell, cells that are not a domino's, a domino claim with a value (it takes
        ``None``), or a number that is not an integer 0..n; for either polarity."""
        self._validate_claim(instance, claim)
        if claim.kind == "number":
            (r, c), = claim.cells
            truth = instance.data.numbers[r - 1][c - 1] == claim.value
        else:
            a, b = claim.cells
            truth = solution[a[0] - 1][a[1] - 1] == _direction(a, b)
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one domino claim per domino of ``solution`` (default: the unique solution)."""
        sol = self.unique_solution(instance) if solution is None else solution
        out = set()
        for r, row in enumerate(sol, 1):
            for c, d in enumerate(row, 1):
                if d in ("R", "D"):
                    out.add(Claim("domino", ((r, c), _neighbour((r, c), d))))
        return frozenset(out)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """The number shown in every cell."""
        return tuple(Claim("number", ((r, c),), v) for r, row in enumerate(instance.data.numbers, 1)
                     for c, v in enumerate(row, 1))

    def value_claim(self, variable: Hashable, value: Any, positive: bool = True) -> Claim:
        """"``variable``'s domino goes towards ``value``" = the domino claim of the cell and that neighbour."""
        if value not in _DIRS:
            raise ClaimError(f"dominosa: direction must be one of L/R/U/D, got {value!r}")
        a, b = variable, _neighbour(variable, value)
        return Claim("domino", (min(a, b), max(a, b)), None, positive)

    def claim_text(self, claim: Claim) -> str:
        """"(1,1) and (1,2) form a domino" / "... do not form a domino"; "(2,3) shows 4" / "(2,3) does not show 4"."""
        if claim.kind == "domino":
            (r1, c1), (r2, c2) = claim.cells
            verb = "form a domino" if claim.positive else "do not form a domino"
            return f"({r1},{c1}) and ({r2},{c2}) {verb}"
        if claim.kind == "number":
            (r, c), = claim.cells
            return f"({r},{c}) {'shows' if claim.positive else 'does not show'} {claim.value}"
        raise ClaimError(f"dominosa: unknown claim kind {claim.kind!r}")

    _CELL = r"\(\s*(\d+)\s*,\s*(\d+)\s*\)"
    _DOMINO_RE = re.compile(_CELL + r"\s*(?:and|-|–|to)\s*" + _CELL +
                            r"\s+(form a domino|forms a domino|do not form a domino|don't form a domino|"
                            r"is a domino|is not a domino|are a domino|are not a domino)", re.IGNORECASE)
    _PAIRS_RE = re.compile(_CELL + r"\s+(pairs with|does not pair with|is paired with|is not paired with)\s+"
                           + _CELL, re.IGNORECASE)
    _NUMBER_RE = re.compile(_CELL + r"\s+(shows|does not show|contains|does not contain)\s+(\d+)", re.IGNORECASE)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read domino claims ("(1,1) and (1,2) form a domino", "(1,1)-(1,2) is a domino", "(1,1) pairs with
        (1,2)", and their negations) and number claims ("(2,3) shows 4"). Cells that are not adjacent or lie off
        the grid are skipped. Regexes with single quantifiers over separators: linear in ``text``."""
        text = mask_long_numbers(text)
        p = instance.params
        out: list[tuple[Claim, int, int]] = []

        def cell(m, i):
            rc = (int(m.group(i)), int(m.group(i + 1)))
            return rc if 1 <= rc[0] <= p.rows and 1 <= rc[1] <= p.cols else None

        for m in self._DOMINO_RE.finditer(text):
            a, b = cell(m, 1), cell(m, 3)
            if a and b and _direction(a, b):
                pos = "not" not in m.group(5).lower() and "n't" not in m.group(5).lower()
                out.append((Claim("domino", (min(a, b), max(a, b)), None, pos), m.start(), m.end()))
        for m in self._PAIRS_RE.finditer(text):
            a, b = cell(m, 1), cell(m, 4)
            if a and b and _direction(a, b):
                pos = "not" not in m.group(3).lower()
                out.append((Claim("domino", (min(a, b), max(a, b)), None, pos), m.start(), m.end()))
        for m in self._NUMBER_RE.finditer(text):
            a = cell(m, 1)
            if a:
                pos = "not" not in m.group(3).lower()
                out.append((Claim("number", (a,), int(m.group(4)), pos), m.start(), m.end()))
        out.sort(key=lambda t: t[1])
        return out

    # ------------------------------------------------------------------ constraint view
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Cell -> the directions (``L``/``R``/``U``/``D``) whose neighbour lies on the grid."""
        p = instance.params
        out = {}
        for r in range(1, p.rows + 1):
            for c in range(1, p.cols + 1):
                out[(r, c)] = tuple(d for d in "LRUD" if 1 <= _neighbour((r, c), d)[0] <= p.rows
                                    and 1 <= _neighbour((r, c), d)[1] <= p.cols)
        return out

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Pair-agreement units for adjacent cells and one exactly-once unit per domino of the set."""
        p, nums = instance.params, instance.data.numbers
        out: list[Unit] = []
        for a, b in self._placements(instance):
            out.append(Unit(f"({a[0]},{a[1]}) and ({b[0]},{b[1]})", (a, b), _PairAgree(_direction(a, b))))
        cand: dict[tuple[int, int], set] = {}
        for a, b in self._placements(instance):
            key = _dkey(nums[a[0] - 1][a[1] - 1], nums[b[0] - 1][b[1] - 1])
            cand.setdefault(key, set()).update((a, b))
        for hi in range(p.n + 1):
            for lo in range(hi + 1):
                cells = tuple(sorted(cand.get((lo, hi), ())))
                premises = tuple(Claim("number", (c,), nums[c[0] - 1][c[1] - 1]) for c in cells)
                out.append(Unit(f"the {lo}-{hi} domino", cells, _DominoOnce(cells, nums, (lo, hi)), premises))
        return tuple(out)


def _is_grid(grid: Any, rows: int, cols: int) -> bool:
    return isinstance(grid, tuple | list) and len(grid) == rows and all(
        isinstance(row, tuple | list) and len(row) == cols for row in grid)


PUZZLE = register_puzzle(Dominosa())
