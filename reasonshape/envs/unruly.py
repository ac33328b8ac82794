"""Unruly (binary puzzle, Tohu-Wa-Vohu / Binairo / Takuzu) from Simon Tatham's Portable Puzzle Collection.

Rules
-----
Fill every cell of a ``W x H`` grid (both even) with ``1`` (black) or ``0`` (white) so that

* no row or column contains three equal values in a row (horizontally or vertically adjacent);
* every row holds exactly ``W/2`` ones and ``W/2`` zeros, every column ``H/2`` of each;
* with the ``u`` option of the params ("unique rows and columns"), no two rows are equal and no two columns are
  equal.

Some cells are given. Source: the collection's ``unruly.c`` (rules, params and desc grammar).

Game IDs
--------
Params ``<W>x<H>[u]d<c>`` with difficulty ``c`` in ``t`` (trivial), ``e`` (easy), ``n`` (normal); the short form
omits ``d<c>`` (it then means trivial, the collection's default). Desc: a run-length code over the ``W*H`` cells in
row-major order plus one terminator position: a letter ``a``..``y`` skips ``k = letter - 'a'`` empty cells then
places a given ``0`` (``A``..``Y``: a given ``1``); ``z``/``Z`` skips 25 empty cells; the letters must cover
exactly ``W*H + 1`` positions (the last letter is the terminator and places nothing). The encoder writes the
fillers in the case of the letter that follows them and a lower-case terminator, as ``new_game_desc`` does.

Answer format
-------------
One grid row per line, ``W`` symbols each: ``1`` for a black cell, ``0`` for a white cell (given cells included).

Claims and C*
-------------
Claim kind ``"value"``: ``Claim("value", ((r, c),), v)`` with ``v`` in ``{0, 1}``, written "(r,c) is 1" /
"(r,c) is not 0". Given claims: one value claim per given cell. C* (reasonshape choice, as solo's "one value
claim per empty cell"): one positive value claim per cell that is not given.

Constraint view
---------------
Variables: the 1-based cells, domain ``(0, 1)`` (a given cell's domain is its given value only). Units: ``"row r"``
and ``"column c"`` (balanced counts and no three equal adjacent values, exact), and with the ``u`` option one unit
``"rows i and j"`` / ``"columns i and j"`` per pair (the two lines differ). There is no global rule outside the
units.

Levels
------
=========  ===========  ==========================================================
level      params       native generator
=========  ===========  ==========================================================
trivial    ``6x6dt``    6x6, solvable by the trivial deductions
easy       ``6x6de``    6x6, needs the easy deductions (trivial ones do not finish)
normal     ``8x8de``    8x8, needs the easy deductions
hard       ``10x10dn``  10x10, needs the normal deductions (easy ones do not finish)
=========  ===========  ==========================================================

The native generator follows the collection's scheme and grades: a random valid grid (randomised backtracking), then
givens removed in random order while the graded deductions of the difficulty letter (:func:`_deduce`, the
collection's technique set for ``t``/``e``/``n``) still fill the grid, which also proves uniqueness (CP-SAT confirms
it in :meth:`Puzzle.generate`); a result that one grade lower also solves is drawn again. Difficulty comes from grid
size and the collection's own grades (our deductions reproduce the grade of every dev instance); clue density
follows from them.
"""

from __future__ import annotations

import random
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
    parse_wxh,
    read_difficulty,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["UnrulyParams", "UnrulyData", "Unruly", "PUZZLE"]

_DIFFS = ("t", "e", "n")


@dataclass(frozen=True)
class UnrulyParams:
    """Unruly params: grid width ``w`` and height ``h`` (even, 6..98), ``unique`` rows/columns, difficulty letter.

    Source: the collection's ``unruly.c`` ``game_params`` (``w2``, ``h2``, ``unique``, ``diff``).
    """

    w: int
    h: int
    unique: bool = False
    diff: str = "t"


@dataclass(frozen=True)
class UnrulyData:
    """Parsed desc: ``givens[r][c]`` is ``0``, ``1`` or ``None`` (0-based indices, rows top to bottom)."""

    givens: tuple[tuple[int | None, ...], ...]




class Unruly(Puzzle):
    """Unruly / binary puzzle: the :class:`~reasonshape.envs.base.Puzzle` protocol for the collection's ``unruly``.

    Instances hold :class:`UnrulyParams` and :class:`UnrulyData`; solutions are ``H`` tuples of ``W`` ints ``1``
    (black) / ``0`` (white), rows top to bottom. See the module docstring for the rules, the game-ID grammar, the
    claim vocabulary, C* and the levels.

    Notes
    -----
    The solver is a CP-SAT model (a cardinality constraint per line, two clauses per three adjacent cells, and with
    ``u`` one "differs somewhere" clause per pair of lines) enumerated with blocking clauses; ``check`` scans every
    line once (O(W*H), plus O(H^2 + W^2) line comparisons with ``u``).

    References
    ----------
    .. [1] S. Tatham et al. (Unruly by L. Sprong), Simon Tatham's Portable Puzzle Collection, ``unruly.c`` (MIT).
    .. [2] Paper A (METHOD.md §A-C): the benchmark's 21 puzzles, claims and C*.
    """

    name = "unruly"
    LEVELS = {"trivial": "6x6dt", "easy": "6x6de", "normal": "8x8de", "hard": "10x10dn"}
    ANSWER_SYMBOLS = {"1": "a black cell (a one)", "0": "a white cell (a zero)"}
    CLAIM_KINDS = ("value",)
    VALUE_WORDS = {"one": 1, "black": 1, "zero": 0, "white": 0}

    # ----------------------------------------------------------------- params
    def parse_params(self, text: str) -> UnrulyParams:
        """Parse ``"8x8de"``, ``"8x8ude"`` or the short ``"8x8"`` / ``"8"`` (height = width, difficulty ``t``).

        Raises
        ------
        GameIdError
            Naming the position and what was expected (also for a width or height outside 6..99 or odd, an
            unknown difficulty).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string like '8x8de'")
        w, h, i = parse_wxh(text, min_side=6)
        n = len(text)
        unique = i < n and text[i] == "u"
        i += unique
        diff, i = read_difficulty(text, i, _DIFFS, "t", "a difficulty letter t, e or n after 'd'")
        if i != n:
            raise GameIdError(text, i, "'x<height>', 'u' or 'd<t|e|n>' (or the end of the params)")
        if w % 2 or h % 2:
            raise GameIdError(text, 0, f"an even width and height, got {w}x{h}")
        return UnrulyParams(w, h, unique, diff)

    def format_params(self, params: UnrulyParams, full: bool = True) -> str:
        """``"<w>x<h>[u]d<c>"`` (full) or ``"<w>x<h>[u]"`` (short), as the collection's ``encode_params``."""
        s = f"{params.w}x{params.h}" + ("u" if params.unique else "")
        return s + f"d{params.diff}" if full else s

    # ----------------------------------------------------------------- desc
    def parse_desc(self, params: UnrulyParams, desc: str) -> Instance:
        """Parse the run-length desc (see the module docstring) exactly as the collection's ``validate_desc``.

        Raises
        ------
        GameIdError
            An invalid character, or a desc covering more or fewer than ``W*H + 1`` positions (with the position).
        """
        w, h = params.w, params.h
        s = w * h
        grid: list[int | None] = [None] * s
        pos = 0
        for i, ch in enumerate(desc):
            if "a" <= ch < "z" or "A" <= ch < "Z":
                pos += ord(ch.lower()) - ord("a")
                if pos < s:
                    grid[pos] = 0 if ch.islower() else 1
                pos += 1
            elif ch in "zZ":
                pos += 25
            else:
                raise GameIdError(desc, i, "a letter a-z or A-Z")
            if pos > s + 1:
                raise GameIdError(desc, i, f"a description covering exactly {s + 1} positions (too long)")
        if pos < s + 1:
            raise GameIdError(desc, len(desc), f"more letters: the description covers {pos} of {s + 1} positions")
        givens = tuple(tuple(grid[r * w:(r + 1) * w]) for r in range(h))
        return Instance(self.name, params, desc, UnrulyData(givens))

    @staticmethod
    def encode_desc(givens) -> str:
        """The collection's desc for a grid of givens (``0``/``1``/``None``), as ``new_game_desc`` encodes it."""
        flat = [v for row in givens for v in row]
        out, run = [], 0
        for i in range(len(flat) + 1):
            v = 0 if i == len(flat) else flat[i]
            if v is None:
                run += 1
                continue
            filler, base = ("z", "a") if v == 0 else ("Z", "A")
            while run > 24:
                out.append(filler)
                run -= 25
            out.append(chr(ord(base) + run))
            run = 0
        return "".join(out)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: UnrulyParams, rng: random.Random) -> Instance:
        level = _DIFFS.index(params.diff)
        for _ in range(200):
            full = _random_full_grid(params, rng)
            if full is None:
                continue
            givens = _winnow(params, full, rng, level)
            if level > 0 and _deduce(params, givens, level - 1) is not None:
                continue  # too easy: deduction one grade lower also solves it (as the collection rejects it)
            return self.parse_desc(params, self.encode_desc(givens))
        raise GenerationError(f"unruly: no {params.w}x{params.h} grid of grade {params.diff!r} within the budget")

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """The task text: rules, the grid (``1``/``0`` givens, ``.`` empty), answer format and coordinates."""
        p: UnrulyParams = instance.params
        rows = [" ".join("." if v is None else str(v) for v in row) for row in instance.data.givens]
        rules = [
            f"Fill every empty cell of this {p.h}-row by {p.w}-column grid with 1 (black) or 0 (white) so that:",
            "- no row and no column contains three equal values next to each other (three in a row horizontally "
            "or vertically is forbidden);",
            f"- every row contains exactly {p.w // 2} ones and {p.w // 2} zeros, and every column exactly "
            f"{p.h // 2} ones and {p.h // 2} zeros;",
        ]
        if p.unique:
            rules.append("- no two rows are identical and no two columns are identical;")
        rules.append("- the given 1s and 0s stay as they are.")
        return "\n".join([
            "Solve this Unruly (binary) puzzle.",
            "",
            *rules,
            "",
            "Cells are named by 1-based coordinates (row, column): rows are numbered top to bottom, columns left "
            "to right, so (1,1) is the top-left cell.",
            "",
            "The grid ('.' = empty cell to fill):",
            *rows,
            "",
            f"Answer format: the completed grid, {p.h} lines of {p.w} symbols separated by spaces, using "
            "1 for a black cell and 0 for a white cell (given cells included). Put the final answer inside "
            "<answer>...</answer>, for example:",
            "<answer>",
            *[" ".join("1" if (r + c) % 2 else "0" for c in range(p.w)) for r in range(2)],
            "...",
            "</answer>",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read an ``H x W`` grid of ``1``/``0`` from the last ``<answer>`` block (or the last grid-shaped block).

        Parameters
        ----------
        text : str
            The model's completion (any length; read in linear time).
        instance : Instance
            The instance the answer is for (gives the expected ``H x W`` size).

        Returns
        -------
        ParsedAnswer
            ``value``: ``H`` tuples of ``W`` values (``1``/``0``);
            ``source``: ``"answer_block"`` or ``"fallback_grid"``.

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or an unknown symbol.
        """
        p: UnrulyParams = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, {"1": 1, "0": 0})
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The answer text for ``solution``: rows of ``1``/``0`` separated by spaces."""
        return format_grid(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check an answer by the rules: shape, givens, three-in-a-row, counts, and (``u``) distinct lines.

        Parameters
        ----------
        instance : Instance
            The puzzle instance.
        answer : ParsedAnswer or tuple of tuples
            A parsed answer or a solution value: ``H`` rows of ``W`` symbols (``1``/``0``).

        Returns
        -------
        CheckResult
            Violations with rule ids ``"shape"``, ``"given"``, ``"three_in_a_row"``, ``"row_count"``,
            ``"column_count"``, ``"duplicate_rows"``, ``"duplicate_columns"``; cells are 1-based.
        """
        p: UnrulyParams = instance.params
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        bad = _shape_violation(grid, p.h, p.w, (0, 1))
        if bad is not None:
            return CheckResult(False, (bad,))
        out: list[Violation] = []
        for r, row in enumerate(instance.data.givens):
            for c, g in enumerate(row):
                if g is not None and grid[r][c] != g:
                    out.append(Violation("given", f"({r + 1},{c + 1}) is given as {g}, got {grid[r][c]}",
                                         ((r + 1, c + 1),)))
        cols = [tuple(grid[r][c] for r in range(p.h)) for c in range(p.w)]
        for kind, lines, half in (("row", grid, p.w // 2), ("column", cols, p.h // 2)):
            for i, line in enumerate(lines):
                cells = [((i + 1, k + 1) if kind == "row" else (k + 1, i + 1)) for k in range(len(line))]
                for k in range(len(line) - 2):
                    if line[k] == line[k + 1] == line[k + 2]:
                        out.append(Violation("three_in_a_row", f"three {line[k]}s in a row in {kind} {i + 1}",
                                             tuple(cells[k:k + 3])))
                ones = sum(line)
                if ones != half:
                    out.append(Violation(f"{kind}_count", f"{kind} {i + 1} has {ones} ones and "
                                         f"{len(line) - ones} zeros, expected {half} of each", tuple(cells)))
        if p.unique:
            for kind, lines in (("rows", grid), ("columns", cols)):
                seen: dict[tuple, int] = {}
                for i, line in enumerate(lines):
                    if tuple(line) in seen:
                        j = seen[tuple(line)]
                        n = len(line)
                        cells = tuple(sorted(((a + 1, k + 1) if kind == "rows" else (k + 1, a + 1))
                                             for a in (j, i) for k in range(n)))
                        out.append(Violation(f"duplicate_{kind}", f"{kind} {j + 1} and {i + 1} are identical",
                                             cells))
                    else:
                        seen[tuple(line)] = i
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p: UnrulyParams = instance.params
        model, x = _base_model(p)
        for r, row in enumerate(instance.data.givens):
            for c, g in enumerate(row):
                if g is not None:
                    model.Add(x[r][c] == g)
        flat = [v for row in x for v in row]
        sols, exhausted = enumerate_solutions(model, flat, max_solutions)
        grids = tuple(tuple(tuple(s[r * p.w:(r + 1) * p.w]) for r in range(p.h)) for s in sols)
        return SolveResult(grids, exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[int, ...], ...]:
        """``"S" + W*H digits`` (row-major, ``1`` = one, ``0`` = zero), the collection's solve move, -> grid.

        Raises
        ------
        ConfigError
            The move is not ``S`` followed by exactly ``W*H`` digits ``0``/``1``.
        """
        p: UnrulyParams = instance.params
        body = move[1:] if isinstance(move, str) and move.startswith("S") else None
        if body is None or len(body) != p.w * p.h or set(body) - {"0", "1"}:
            raise bad_solve_move(self.name, move, f"it must be 'S' and {p.w * p.h} digits 0/1")
        return tuple(tuple(int(ch) for ch in body[r * p.w:(r + 1) * p.w]) for r in range(p.h))

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool:
        """Whether a value claim is true of ``solution``. Raises ClaimError outside the vocabulary."""
        (r, c) = self._claim_cell(instance, claim)
        return (solution[r - 1][c - 1] == claim.value) == claim.positive

    def _claim_cell(self, instance: Instance, claim: Claim):
        if claim.kind != "value" or len(claim.cells) != 1:
            raise ClaimError(f"unruly: claim kind must be 'value' about one cell, got {claim!r}")
        self._claim_number(claim, 0, 1, "a colour")  # 0 or 1; not 1.0 or True
        p: UnrulyParams = instance.params
        self._check_cell(instance, claim.cells[0], p.h, p.w)
        return claim.cells[0]

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per cell that is not given (see the module docstring)."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), sol[r][c])
                         for r, row in enumerate(instance.data.givens) for c, g in enumerate(row) if g is None)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One value claim per given cell, row-major."""
        return tuple(Claim("value", ((r + 1, c + 1),), g)
                     for r, row in enumerate(instance.data.givens) for c, g in enumerate(row) if g is not None)

    def claim_text(self, claim: Claim) -> str:
        """``"(r,c) is 1"`` / ``"(r,c) is not 0"``."""
        (r, c), = claim.cells
        return f"({r},{c}) {'is' if claim.positive else 'is not'} {claim.value}"

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """1-based cell -> ``(0, 1)``, or ``(g,)`` for a cell given as ``g``."""
        return {(r + 1, c + 1): ((0, 1) if g is None else (g,))
                for r, row in enumerate(instance.data.givens) for c, g in enumerate(row)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """``"row r"`` and ``"column c"`` (counts and no three in a row), plus pairwise-distinct lines with ``u``."""
        p: UnrulyParams = instance.params
        rows = [tuple((r, c) for c in range(1, p.w + 1)) for r in range(1, p.h + 1)]
        cols = [tuple((r, c) for r in range(1, p.h + 1)) for c in range(1, p.w + 1)]
        out = [Unit(f"row {i + 1}", cells, _LineRule(len(cells) // 2)) for i, cells in enumerate(rows)]
        out += [Unit(f"column {i + 1}", cells, _LineRule(len(cells) // 2)) for i, cells in enumerate(cols)]
        if p.unique:
            for kind, lines in (("rows", rows), ("columns", cols)):
                for i in range(len(lines)):
                    for j in range(i + 1, len(lines)):
                        out.append(Unit(f"{kind} {i + 1} and {j + 1}", lines[i] + lines[j],
                                        _DistinctPair(len(lines[i]))))
        return tuple(out)


class _LineRule:
    """A row or column: exactly ``half`` ones and no three equal adjacent values (a picklable callable)."""

    def __init__(self, half: int):
        self.half = half

    def __call__(self, values: tuple) -> bool:
        if sum(values) != self.half or len(values) != 2 * self.half:
            return False
        return not any(values[k] == values[k + 1] == values[k + 2] for k in range(len(values) - 2))


class _DistinctPair:
    """Two lines of length ``n`` given one after the other differ somewhere."""

    def __init__(self, n: int):
        self.n = n

    def __call__(self, values: tuple) -> bool:
        return tuple(values[:self.n]) != tuple(values[self.n:])


def _shape_violation(grid, rows: int, cols: int, domain) -> Violation | None:
    try:
        ok = len(grid) == rows and all(len(row) == cols for row in grid)
    except TypeError:
        ok = False
    if not ok:
        return Violation("shape", f"the answer must be a {rows}x{cols} grid", ())
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            if v not in domain or isinstance(v, bool):
                return Violation("shape", f"({r + 1},{c + 1}) holds {v!r}, expected one of {list(domain)}",
                                 ((r + 1, c + 1),))
    return None


def _base_model(p: UnrulyParams):
    """CP-SAT model of the rules without givens: ``x[r][c]`` is 1 for a one."""
    model = new_model()
    x = [[model.NewBoolVar(f"x{r}_{c}") for c in range(p.w)] for r in range(p.h)]
    lines = [x[r] for r in range(p.h)] + [[x[r][c] for r in range(p.h)] for c in range(p.w)]
    for line in lines:
        model.Add(sum(line) == len(line) // 2)
        for k in range(len(line) - 2):
            model.AddBoolOr(line[k:k + 3])
            model.AddBoolOr([v.Not() for v in line[k:k + 3]])
    if p.unique:
        for group in ([x[r] for r in range(p.h)], [[x[r][c] for r in range(p.h)] for c in range(p.w)]):
            for i in range(len(group)):
                for j in range(i + 1, len(group)):
                    diffs = []
                    for a, b in zip(group[i], group[j], strict=True):
                        d = model.NewBoolVar("")
                        model.Add(a != b).OnlyEnforceIf(d)
                        model.Add(a == b).OnlyEnforceIf(d.Not())
                        diffs.append(d)
                    model.AddBoolOr(diffs)
    return model, x


def _random_full_grid(p: UnrulyParams, rng: random.Random, max_steps: int = 200_000):
    """A random valid filled grid by randomised backtracking (row-major), or None when the step budget runs out.

    Own code rather than CP-SAT with a random objective: a plain backtracking fill (random value order per cell;
    not uniform over all grids, which generation does not need) takes milliseconds and depends on ``rng`` alone
    (reasonshape choice; the collection also fills at random, with its solver propagating forced cells).
    """
    w, h = p.w, p.h
    n = w * h
    grid = [[-1] * w for _ in range(h)]
    row_ones, row_zeros = [0] * h, [0] * h
    col_ones, col_zeros = [0] * w, [0] * w
    orders = [None] * n
    k, steps = 0, 0

    def fits(r, c, v):
        if v == 1 and (row_ones[r] >= w // 2 or col_ones[c] >= h // 2):
            return False
        if v == 0 and (row_zeros[r] >= w // 2 or col_zeros[c] >= h // 2):
            return False
        if c >= 2 and grid[r][c - 1] == v and grid[r][c - 2] == v:
            return False
        if r >= 2 and grid[r - 1][c] == v and grid[r - 2][c] == v:
            return False
        if p.unique and c == w - 1:
            row = grid[r][:w - 1] + [v]
            if any(grid[q] == row for q in range(r)):
                return False
        if p.unique and r == h - 1:
            col = [grid[q][c] for q in range(h - 1)] + [v]
            if any([grid[q][d] for q in range(h - 1)] + [grid[r][d]] == col for d in range(c)):
                return False
        return True

    def setv(r, c, v, delta):
        if v == 1:
            row_ones[r] += delta
            col_ones[c] += delta
        else:
            row_zeros[r] += delta
            col_zeros[c] += delta

    while 0 <= k < n:
        steps += 1
        if steps > max_steps:
            return None
        r, c = divmod(k, w)
        if orders[k] is None:
            orders[k] = [0, 1] if rng.random() < 0.5 else [1, 0]
        if grid[r][c] != -1:
            setv(r, c, grid[r][c], -1)
            grid[r][c] = -1
        placed = False
        while orders[k]:
            v = orders[k].pop(0)
            if fits(r, c, v):
                grid[r][c] = v
                setv(r, c, v, +1)
                placed = True
                break
        if placed:
            k += 1
        else:
            orders[k] = None
            k -= 1
    if k < 0:
        return None
    return tuple(tuple(row) for row in grid)


def _lines(p: UnrulyParams) -> list[list[int]]:
    """Row-major cell indices of every row, then every column."""
    return [[r * p.w + c for c in range(p.w)] for r in range(p.h)] + \
        [[r * p.w + c for r in range(p.h)] for c in range(p.w)]


def _deduce(p: UnrulyParams, givens, level: int):
    """Solve by the collection's graded deductions; the row-major 0/1 list when they fill every cell, else None
    (see :func:`_deduce_partial`)."""
    cells = _deduce_partial(p, givens, level)
    return None if any(v is None for v in cells) else cells


def _deduce_partial(p: UnrulyParams, givens, level: int) -> list[int | None]:
    """What the collection's graded deductions fill in: the row-major list of 0, 1 or None (still empty).

    ``level`` 0 (``t``): a pair of equal values, or two equal values around a gap, forces the other value next to
    them; a line with one empty cell left takes the value its count needs. ``level`` 1 (``e``): a line that has all
    of one value gets the other value everywhere else (and with ``u``, a line that can only copy a completed line
    gets the differing value). ``level`` 2 (``n``): in a line that needs exactly one more of a value and at least
    two of the other, if some three adjacent cells would otherwise all become the other value, that last value must
    go among them, so every empty cell outside them takes the other value. Every step is forced (sound for every
    solution), so a complete fill proves the solution unique. The rule set and order follow ``unruly.c``'s solver;
    the code is our own.
    """
    cells: list[int | None] = [v for row in givens for v in row]
    lines = _lines(p)

    def count(line, v):
        return sum(1 for i in line if cells[i] == v)

    def fill(line, v, skip=()):
        n = 0
        for i in line:
            if cells[i] is None and i not in skip:
                cells[i] = v
                n += 1
        return n

    def threes():
        n = 0
        for line in lines:
            for k in range(len(line) - 2):
                a, b, c = (cells[i] for i in line[k:k + 3])
                trio = line[k:k + 3]
                for gap, x, y in ((2, a, b), (1, a, c), (0, b, c)):
                    if x is not None and x == y and cells[trio[gap]] is None:
                        cells[trio[gap]] = 1 - x
                        n += 1
        return n

    def single_gap():
        n = 0
        for line in lines:
            half = len(line) // 2
            for v in (0, 1):
                if count(line, v) == half and count(line, 1 - v) == half - 1:
                    n += fill(line, 1 - v)
        return n

    def complete_nums():
        n = 0
        for line in lines:
            half = len(line) // 2
            for v in (0, 1):
                if count(line, v) == half and count(line, 1 - v) < half:
                    n += fill(line, 1 - v)
        return n

    def uniques():
        n = 0
        for group in (lines[:p.h], lines[p.h:]):
            for v in (0, 1):
                for a in group:
                    if count(a, v) != len(a) // 2:
                        continue
                    for b in group:
                        if count(b, v) != len(a) // 2 - 1:
                            continue
                        missing = [k for k in range(len(a)) if cells[a[k]] == v and cells[b[k]] != v]
                        if len(missing) == 1 and cells[b[missing[0]]] is None:
                            cells[b[missing[0]]] = 1 - v
                            n += 1
        return n

    def near_complete():
        n = 0
        for line in lines:
            half = len(line) // 2
            for v in (0, 1):  # v: the value with one left to place; 1 - v: at least two left
                if count(line, v) != half - 1 or count(line, 1 - v) > half - 2:
                    continue
                for k in range(len(line) - 2):
                    trio = line[k:k + 3]
                    vals = [cells[i] for i in trio]
                    if any(x == v for x in vals) or sum(x is None for x in vals) < 2:
                        continue
                    n += fill(line, 1 - v, skip=set(trio))
        return n

    while True:
        if threes() or single_gap():
            continue
        if level < 1:
            break
        if complete_nums() or (p.unique and uniques()):
            continue
        if level < 2:
            break
        if near_complete():
            continue
        break
    return cells


def _winnow(p: UnrulyParams, full, rng: random.Random, level: int):
    """Empty the given cells of ``full`` in random order while :func:`_deduce` at ``level`` still fills the grid
    (as the collection's generator). Returns the grid of givens (``None`` = empty)."""
    grid = [list(row) for row in full]
    order = [(r, c) for r in range(p.h) for c in range(p.w)]
    rng.shuffle(order)
    for r, c in order:
        saved, grid[r][c] = grid[r][c], None
        if _deduce(p, grid, level) is None:
            grid[r][c] = saved
    return tuple(tuple(row) for row in grid)


PUZZLE = register_puzzle(Unruly())
