"""Solo: Sudoku with rectangular boxes (Simon Tatham's "Solo"), X-diagonal variant included.

Rules
-----
An ``n x n`` grid, ``n = c*r``, is divided into ``n`` boxes of ``c`` rows by ``r`` columns (the collection's params
``CxR``: ``c`` columns of boxes, each ``r`` cells wide and ``c`` cells tall). Fill every cell with a number
``1..n`` so that every row, every column and every box holds each number exactly once, keeping the givens. In the
X variant (params flag ``x``) the two main diagonals must also hold each number exactly once.
Jigsaw (``j``, ``r == 1``) and Killer (``k``) games are not supported: their params raise :class:`GameIdError`.

Game IDs (source: the collection's ``solo.c``, ``decode_params`` / ``encode_params`` / ``validate_desc``)
---------------------------------------------------------------------------------------------------------------
* params ``C[xR][x][symmetry][dD]``; ``C`` alone means ``CxC``. Symmetry: ``r2`` (default, not written), ``r4``,
  ``m2``, ``md2``, ``m4``, ``md4``, ``m8``, ``a`` (none). Difficulty ``d`` + ``t`` trivial (default, NOT written
  in the full form), ``b`` basic, ``i`` intermediate, ``a`` advanced, ``e`` extreme, ``u`` unreasonable. The
  short form is ``CxR`` plus ``x`` for the X variant. So the collection's "full" form of a trivial 2x2 game is
  ``2x2`` and :meth:`Solo.format_params` writes it that way (``2x2dt`` parses, and formats back as ``2x2``).
* desc: the grid in reading order; a lower-case letter is a run of blanks (``a`` = 1 ... ``z`` = 26), a decimal
  number is a given, ``_`` separates two adjacent givens (it is ignored elsewhere, as the collection does).

Answer format: the completed grid, one row per line, numbers separated by spaces (``|`` and ``-`` box rules are
tolerated); rows written without spaces (``534678912``) are accepted when ``n <= 9``.

Claims (paper A §B/§C)
----------------------
``CLAIM_KINDS = ("value",)``: ``Claim("value", ((r, c),), v, positive)``, "(r,c) is v" / "(r,c) is not v".
Given claims: one positive value claim per given. **C*** = one positive value claim per EMPTY cell (the givens
are static facts, not part of the solution statement): ``|C*| = n*n - #givens``.

Constraint view: variables are the 1-based cells with domain ``1..n``; units are ``row i``, ``column j``,
``box k`` (boxes numbered 1..n in reading order), ``the main diagonal`` / ``the anti-diagonal`` (X only), all
``alldiff``, plus one unit per given (``the given 5 at (2,3)``, premise: its given claim). There are no global
rules.

Levels (reasonshape choice, from the proposal in ``shared/data/README.md``)
---------------------------------------------------------------------------
========  ========  ====================================================
level     params    native generator (clue floor = fraction of cells)
========  ========  ====================================================
trivial   2x2       4x4, floor 0.50
easy      2x3db     6x6, floor 0.40
normal    3x3db     9x9, floor 0.40
hard      3x3da     9x9, no floor (clues removed until minimal)
========  ========  ====================================================

The native generator draws a random solved grid, then removes clues in random symmetric orbits (the params'
symmetry, as the collection does) while the puzzle stays unique, down to the clue floor of its difficulty letter
(``t`` 0.5, ``b`` 0.4, ``i`` 0.35, ``a``/``e``/``u`` 0). Difficulty comes from grid size and clue density; the
collection's solver grade is not reproduced (use ``backend="sgt"`` for that). A removal check that needs more
than ``CHECK_NODES`` (300) search nodes keeps its clue (bounds the time on 16x16 grids; it never triggered at the
four levels, 15 seeds each).
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

from reasonshape.envs._solo_search import LatinSearch, cp_feasible
from reasonshape.envs._solver import enumerate_solutions, new_model
from reasonshape.envs.answer import read_grid_answer
from reasonshape.envs.base import (
    CheckResult,
    Claim,
    ClaimLabel,
    Instance,
    ParsedAnswer,
    Puzzle,
    SolveResult,
    Unit,
    Violation,
    bad_solve_move,
    digits_end,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["SoloParams", "SoloData", "Solo", "PUZZLE"]

#: Difficulty letters in the collection's order (solo.c ``DIFF_BLOCK`` ... ``DIFF_RECURSIVE``).
DIFFICULTIES: tuple[str, ...] = ("t", "b", "i", "a", "e", "u")
#: Symmetry codes as the collection writes them; ``r2`` is the default and is not written.
SYMMETRIES: tuple[str, ...] = ("a", "r2", "r4", "m2", "md2", "m4", "md4", "m8")
#: Node budget of one uniqueness question in the native generator; past it the clue is kept (reasonshape choice:
#: bounds generation time on large grids, where a few removal checks can otherwise explode).
CHECK_NODES = 300
#: Clue floor (fraction of cells) of the native generator per difficulty letter (reasonshape choice).
CLUE_FLOOR: dict[str, float] = {"t": 0.5, "b": 0.4, "i": 0.35, "a": 0.0, "e": 0.0, "u": 0.0}

_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen")


@dataclass(frozen=True)
class SoloParams:
    """Params of a Solo game.

    Attributes
    ----------
    c : int
        Columns of boxes = rows per box (``>= 2``).
    r : int
        Rows of boxes = columns per box (``>= 2``; ``1`` would be Jigsaw, unsupported).
    xtype : bool
        X variant: both main diagonals hold every number.
    symm : str
        Clue symmetry code (one of :data:`SYMMETRIES`), used by generators only.
    diff : str
        Difficulty letter (one of :data:`DIFFICULTIES`).
    """

    c: int
    r: int
    xtype: bool = False
    symm: str = "r2"
    diff: str = "t"

    @property
    def n(self) -> int:
        """Side of the grid and number of values, ``c*r``."""
        return self.c * self.r


@dataclass(frozen=True)
class SoloData:
    """Parsed desc: ``givens[i][j]`` is the given number of 0-based cell ``(i, j)``, 0 when blank."""

    givens: tuple[tuple[int, ...], ...]


def _boxes(p: SoloParams) -> list[list[tuple[int, int]]]:
    """0-based cells of each box, boxes in reading order (box height ``c``, width ``r``, as solo.c)."""
    n = p.n
    out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for y in range(n):
        for x in range(n):
            out[(y // p.c) * p.c + x // p.r].append((y, x))
    return out


def _groups(p: SoloParams) -> list[tuple[str, str, list[tuple[int, int]]]]:
    """``(rule, name, cells)`` for every alldiff group: rows, columns, boxes, diagonals (X)."""
    n = p.n
    out = [("row_repeat", f"row {i + 1}", [(i, j) for j in range(n)]) for i in range(n)]
    out += [("column_repeat", f"column {j + 1}", [(i, j) for i in range(n)]) for j in range(n)]
    out += [("box_repeat", f"box {k + 1}", cells) for k, cells in enumerate(_boxes(p))]
    if p.xtype:
        out.append(("diagonal_repeat", "the main diagonal", [(i, i) for i in range(n)]))
        out.append(("diagonal_repeat", "the anti-diagonal", [(i, n - 1 - i) for i in range(n)]))
    return out


def _symmetric_orbit(p: SoloParams, x: int, y: int) -> list[tuple[int, int]]:
    """0-based ``(x, y)`` images of a cell under the params' symmetry (solo.c ``symmetries``)."""
    m = p.n - 1
    images = [(x, y)]
    s = p.symm
    if s == "r2":
        images += [(m - x, m - y)]
    elif s == "r4":
        images += [(m - y, x), (y, m - x), (m - x, m - y)]
    elif s == "m2":
        images += [(m - x, y)]
    elif s == "md2":
        images += [(y, x)]
    elif s == "m4":
        images += [(m - x, y), (x, m - y), (m - x, m - y)]
    elif s == "md4":
        images += [(y, x), (m - x, m - y), (m - y, m - x)]
    elif s == "m8":
        images += [(m - x, y), (x, m - y), (m - x, m - y), (y, x), (y, m - x), (m - y, x), (m - y, m - x)]
    return sorted(set(images))


def encode_grid(grid: tuple[tuple[int, ...], ...]) -> str:
    """The collection's grid encoding (solo.c ``encode_grid``): runs of blanks as letters, ``_`` between givens."""
    out: list[str] = []
    run = 0
    flat = [v for row in grid for v in row] + [-1]
    for v in flat:
        if v == 0:
            run += 1
            continue
        if run:
            while run > 0:
                k = min(run, 26)
                out.append(chr(ord("a") - 1 + k))
                run -= k
        elif out and v > 0:
            out.append("_")
        if v > 0:
            out.append(str(v))
        run = 0
    return "".join(out)


class Solo(Puzzle):
    """Solo (Sudoku with ``c x r`` boxes, optional X diagonals). See the module docstring."""

    name: ClassVar[str] = "solo"
    LEVELS: ClassVar[dict[str, str]] = {"trivial": "2x2", "easy": "2x3db", "normal": "3x3db", "hard": "3x3da"}
    ANSWER_SYMBOLS: ClassVar[dict[str, str]] = {
        **{str(i): f"the number {i}" for i in range(1, 10)},
        "10..n": "the numbers 10 and up, written in decimal, on grids larger than 9x9",
    }
    CLAIM_KINDS: ClassVar[tuple[str, ...]] = ("value",)
    VALUE_WORDS: ClassVar[dict[str, Hashable]] = {w: i for i, w in enumerate(_NUMBER_WORDS, 1)}

    # ----------------------------------------------------------------- params
    def parse_params(self, text: str) -> SoloParams:
        """Parse solo params (full ``3x3db``, ``3x3xm4da``... or short ``3x3`` / ``3``).

        Raises
        ------
        GameIdError
            Unknown or malformed character (position named), Jigsaw/Killer flags (unsupported), box sides below
            2, or more than 31 symbols (the collection's limit).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '3x3db'")
        s = text
        m = re.match(r"[0-9]+", s)
        if not m:
            raise GameIdError(s, 0, "the number of box columns (digits), e.g. '3x3'")
        c = r = int(m.group())
        i = m.end()
        if i < len(s) and s[i] == "x" and i + 1 < len(s) and "0" <= s[i + 1] <= "9":
            m2 = re.match(r"[0-9]+", s[i + 1:])
            r = int(m2.group())
            i += 1 + m2.end()
        xtype, symm, diff = False, "r2", "t"
        while i < len(s):
            ch = s[i]
            if ch == "x":
                xtype = True
                i += 1
            elif ch == "j":
                raise GameIdError(s, i, "a standard-box Solo (Jigsaw 'j' games are not supported by reasonshape)")
            elif ch == "k":
                raise GameIdError(s, i, "a standard Solo (Killer 'k' games are not supported by reasonshape)")
            elif ch in "rma":
                j = i + 1
                if ch == "a":
                    symm = "a"
                    i = j
                    continue
                diag = ch == "m" and j < len(s) and s[j] == "d"
                if diag:
                    j += 1
                m3 = re.match(r"[0-9]+", s[j:])
                code = ch + ("d" if diag else "") + (m3.group() if m3 else "")
                if code not in SYMMETRIES:
                    raise GameIdError(s, i, "a symmetry code r2, r4, m2, md2, m4, md4, m8 or a")
                symm = code
                i = j + (m3.end() if m3 else 0)
            elif ch == "d":
                if i + 1 >= len(s) or s[i + 1] not in DIFFICULTIES:
                    raise GameIdError(s, i + 1, "a difficulty letter t, b, i, a, e or u after 'd'")
                diff = s[i + 1]
                i += 2
            else:
                raise GameIdError(s, i, "'x', a symmetry (r/m/a) or a difficulty ('d' + letter)")
        if c < 2 or r < 2:
            raise GameIdError(s, 0, "both box dimensions at least 2 (r == 1 would be Jigsaw, unsupported)")
        if c * r > 31:
            raise GameIdError(s, 0, "at most 31 distinct symbols (c*r <= 31), as the collection allows")
        if xtype and c * r < 4:
            raise GameIdError(s, 0, "an X-type grid of side at least 4")
        return SoloParams(c, r, xtype, symm, diff)

    def format_params(self, params: SoloParams, full: bool = True) -> str:
        """The collection's params string (``encode_params``): ``r2`` symmetry and ``dt`` are never written."""
        out = f"{params.c}x{params.r}" + ("x" if params.xtype else "")
        if full:
            if params.symm != "r2":
                out += params.symm
            if params.diff != "t":
                out += "d" + params.diff
        return out

    # ----------------------------------------------------------------- desc
    def parse_desc(self, params: SoloParams, desc: str) -> Instance:
        """Parse a solo desc as ``validate_grid_desc`` does.

        Raises
        ------
        GameIdError
            Invalid character, a number out of ``1..n`` or with a leading zero, too little or too much data, or
            trailing data (Jigsaw/Killer suffixes are unsupported) -- each with its position in the desc.
        """
        if not isinstance(desc, str):
            raise GameIdError(repr(desc), None, "a desc string")
        n = params.n
        area = n * n
        cells: list[int] = []
        i = 0
        while i < len(desc) and desc[i] != ",":
            ch = desc[i]
            if "a" <= ch <= "z":
                run = ord(ch) - ord("a") + 1
                if len(cells) + run > area:
                    raise GameIdError(desc, i, f"no more than {area} cells (too much data to fit in grid)")
                cells.extend([0] * run)
                i += 1
            elif ch == "_":
                i += 1
            elif "1" <= ch <= "9":
                j = digits_end(desc, i)
                val = int(desc[i:j])
                if val > n:
                    raise GameIdError(desc, i, f"a number from 1 to {n} (out-of-range number {val})")
                if len(cells) + 1 > area:
                    raise GameIdError(desc, i, f"no more than {area} cells (too much data to fit in grid)")
                cells.append(val)
                i = j
            else:
                raise GameIdError(desc, i, "a run letter a-z, a number 1-n or '_' (invalid character)")
        if len(cells) < area:
            raise GameIdError(desc, i, f"{area} cells (not enough data to fill grid: got {len(cells)})")
        if i < len(desc):
            raise GameIdError(desc, i, "end of desc (Jigsaw/Killer block data is not supported)")
        grid = tuple(tuple(cells[y * n:(y + 1) * n]) for y in range(n))
        return Instance(self.name, params, desc, SoloData(grid))

    def make_instance(self, params: SoloParams, givens) -> Instance:
        """An instance from a ``n x n`` grid of givens (0 = blank), desc encoded as the collection does.

        Raises
        ------
        GameIdError
            Wrong grid size or a value outside ``0..n``.
        """
        n = params.n
        grid = tuple(tuple(int(v) for v in row) for row in givens)
        if len(grid) != n or any(len(row) != n for row in grid):
            raise GameIdError(repr(givens)[:80], None, f"a {n}x{n} grid of givens")
        if any(not 0 <= v <= n for row in grid for v in row):
            raise GameIdError(repr(givens)[:80], None, f"givens in 0..{n} (0 = blank)")
        return Instance(self.name, params, encode_grid(grid), SoloData(grid))

    # ----------------------------------------------------------------- generation
    def _generate(self, params: SoloParams, rng: random.Random) -> Instance:
        n = params.n
        idx = {(y, x): y * n + x for y in range(n) for x in range(n)}
        groups = [[idx[cell] for cell in cells] for _, _, cells in _groups(params)]
        search = LatinSearch(n, n * n, groups)
        try:
            solution = search.random_solution(rng)
        except RuntimeError as e:
            raise GenerationError(f"solo: no solved grid for {self.format_params(params)}: {e}") from e
        full = (1 << n) - 1
        orbits, seen = [], set()
        for y in range(n):
            for x in range(n):
                if (x, y) in seen:
                    continue
                orb = _symmetric_orbit(params, x, y)
                seen.update(orb)
                orbits.append([y2 * n + x2 for x2, y2 in orb])
        rng.shuffle(orbits)
        given = [True] * (n * n)
        n_clues = n * n
        floor = CLUE_FLOOR[params.diff] * n * n
        for orb in orbits:
            if n_clues - len(orb) < floor:
                continue
            for k in orb:
                given[k] = False
            doms = [(1 << (solution[k] - 1)) if given[k] else full for k in range(n * n)]
            unique = True
            for k in orb:
                trial = doms[:]
                trial[k] = full & ~(1 << (solution[k] - 1))
                if search.has_solution(trial, CHECK_NODES):
                    unique = False
                    break
            if unique:
                n_clues -= len(orb)
            else:
                for k in orb:
                    given[k] = True
        grid = tuple(tuple(solution[y * n + x] if given[y * n + x] else 0 for x in range(n)) for y in range(n))
        return self.make_instance(params, grid)

    # ----------------------------------------------------------------- text
    def _grid_text(self, instance: Instance, grid) -> str:
        p: SoloParams = instance.params
        n = p.n
        w = len(str(n))
        lines = []
        for y in range(n):
            parts = []
            for x in range(n):
                v = grid[y][x]
                parts.append((str(v) if v else ".").rjust(w))
                if x < n - 1 and (x + 1) % p.r == 0:
                    parts.append("|")
            row = " ".join(parts)
            lines.append(row)
            if y < n - 1 and (y + 1) % p.c == 0:
                lines.append("".join("+" if ch == "|" else "-" for ch in row))
        return "\n".join(lines)

    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid (``.`` = empty, ``|``/``-`` box borders), coordinates, answer format with symbols."""
        p: SoloParams = instance.params
        n = p.n
        g = instance.data.givens
        example = " ".join(str(v) for v in range(1, n + 1))
        rules = [
            f"This is a Sudoku puzzle on a {n}x{n} grid, divided into {n} boxes of {p.c} rows by {p.r} columns.",
            "Rules:",
            f"- Fill every empty cell (shown as .) with a whole number from 1 to {n}.",
            f"- Every row must contain each number from 1 to {n} exactly once.",
            f"- Every column must contain each number from 1 to {n} exactly once.",
            f"- Every box ({p.c} rows by {p.r} columns, separated by | and - lines) must contain each number from "
            f"1 to {n} exactly once.",
        ]
        if p.xtype:
            rules.append(f"- Each of the two main diagonals (from (1,1) to ({n},{n}) and from (1,{n}) to ({n},1)) "
                         f"must also contain each number from 1 to {n} exactly once.")
        rules.append("- The numbers already in the grid are given and must stay as they are.")
        return "\n".join(rules + [
            "",
            "Cells are named (row, column), counted from 1: rows from top to bottom, columns from left to right.",
            "",
            "Puzzle:",
            self._grid_text(instance, g),
            "",
            f"Answer format: write the completed grid inside <answer>...</answer>: {n} lines, one per row from top "
            f"to bottom, each with the {n} numbers of that row from left to right separated by spaces "
            f"(for example \"{example}\"). Box separators are optional. Use only the numbers 1 to {n}.",
            "Put your final answer in an <answer>...</answer> block at the end of your response.",
        ])

    def _symbols(self, instance: Instance) -> dict[str, int]:
        return {str(i): i for i in range(1, instance.params.n + 1)}

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the completed grid from the last ``<answer>`` block (or the last grid-shaped block).

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or an unknown symbol.
        """
        n = instance.params.n
        grid, source, notes = read_grid_answer(text, n, n, self._symbols(instance), single_chars=n <= 9)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution) -> str:
        """One row per line, numbers separated by single spaces."""
        return "\n".join(" ".join(str(v) for v in row) for row in solution)

    # ----------------------------------------------------------------- rules
    def _as_grid(self, answer: Any):
        return answer.value if isinstance(answer, ParsedAnswer) else answer

    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check a grid by the rules: shape, values in ``1..n``, givens kept, no repeat in any row, column, box
        (or diagonal in the X variant). Rules: ``shape``, ``value_range``, ``given_changed``, ``row_repeat``,
        ``column_repeat``, ``box_repeat``, ``diagonal_repeat``."""
        p: SoloParams = instance.params
        n = p.n
        grid = self._as_grid(answer)
        if (not isinstance(grid, (tuple, list)) or len(grid) != n
                or any(not isinstance(row, (tuple, list)) or len(row) != n for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be a {n}x{n} grid"),))
        viol: list[Violation] = []
        bad = set()
        for y in range(n):
            for x in range(n):
                v = grid[y][x]
                if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= n:
                    viol.append(Violation("value_range", f"({y + 1},{x + 1}) holds {v!r}, not a number 1-{n}",
                                          ((y + 1, x + 1),)))
                    bad.add((y, x))
        givens = instance.data.givens
        for y in range(n):
            for x in range(n):
                gv = givens[y][x]
                if gv and grid[y][x] != gv:
                    viol.append(Violation("given_changed", f"({y + 1},{x + 1}) is given as {gv} but holds "
                                          f"{grid[y][x]!r}", ((y + 1, x + 1),)))
        for rule, name, cells in _groups(p):
            where: dict[int, list[tuple[int, int]]] = {}
            for y, x in cells:
                if (y, x) not in bad:
                    where.setdefault(grid[y][x], []).append((y + 1, x + 1))
            for v, at in where.items():
                if len(at) > 1:
                    viol.append(Violation(rule, f"{v} appears {len(at)} times in {name}", tuple(at)))
        return CheckResult(not viol, tuple(viol))

    def _model(self, instance: Instance):
        """CP-SAT model: one ``1..n`` integer per cell, ``AllDifferent`` per group, givens fixed."""
        p: SoloParams = instance.params
        n = p.n
        model = new_model()
        cell = {(y, x): model.NewIntVar(1, n, f"v{y}_{x}") for y in range(n) for x in range(n)}
        for _, _, cells in _groups(p):
            model.AddAllDifferent([cell[c] for c in cells])
        for y, row in enumerate(instance.data.givens):
            for x, v in enumerate(row):
                if v:
                    model.Add(cell[(y, x)] == v)
        return model, cell

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        n = instance.params.n
        model, cell = self._model(instance)
        order = [cell[(y, x)] for y in range(n) for x in range(n)]
        sols, exhausted = enumerate_solutions(model, order, max_solutions)
        out = tuple(tuple(tuple(s[y * n:(y + 1) * n]) for y in range(n)) for s in sols)
        return SolveResult(out, exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[int, ...], ...]:
        """``S`` followed by ``n*n`` comma-separated numbers in reading order (solo.c ``encode_solve_move``).

        Raises
        ------
        ConfigError
            Not ``S`` and ``n*n`` comma-separated numbers ``1..n`` (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        n = instance.params.n
        if not (isinstance(move, str) and re.fullmatch(r"S[0-9]{1,9}(?:,[0-9]{1,9})*", move)):
            raise bad_solve_move(self.name, move, "it must be 'S' and comma-separated numbers")
        vals = [int(t) for t in move[1:].split(",")]
        if len(vals) != n * n:
            raise bad_solve_move(self.name, move, f"{len(vals)} numbers, expected {n * n}")
        if any(not 1 <= v <= n for v in vals):
            raise bad_solve_move(self.name, move, f"a number outside 1..{n}")
        return tuple(tuple(vals[y * n:(y + 1) * n]) for y in range(n))

    # ----------------------------------------------------------------- claims
    def _cell_of(self, instance: Instance, claim: Claim) -> tuple[int, int]:
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"solo: unknown claim kind {claim.kind!r}; expected one of {self.CLAIM_KINDS}")
        if len(claim.cells) != 1:
            raise ClaimError(f"solo: a value claim names exactly one cell, got {claim.cells}")
        n = instance.params.n
        self._check_cell(instance, claim.cells[0], n, n)
        self._claim_number(claim, 1, n, "a digit")
        return claim.cells[0]

    def claim_holds(self, instance: Instance, solution, claim: Claim) -> bool | None:
        """``(r,c) is v`` holds iff the solution has ``v`` at ``(r,c)`` (negated for ``positive=False``).

        Raises
        ------
        ClaimError
            Unknown kind, a cell off the grid, or a value that is not an integer 1..n (``"3"``, ``99``), for either
            polarity.
        """
        r, c = self._cell_of(instance, claim)
        return (solution[r - 1][c - 1] == claim.value) == claim.positive

    def verify_claim(self, instance: Instance, claim: Claim) -> ClaimLabel:
        """Label a claim: ``correct`` iff it holds in every solution, ``wrong`` iff in none, else
        ``unverifiable`` (also when the instance has no solution).

        Unique instances use the generic rule of :meth:`Puzzle.verify_claim` (one cached solve). On instances with
        several solutions (e.g. imported reasoning-gym puzzles) the label is EXACT: two CP-SAT feasibility
        questions ("is there a solution where the claim holds / fails?") replace the enumeration of up to
        ``CLAIM_SOLUTION_LIMIT`` solutions. Source: paper A §B step 4 (labels); the method is a reasonshape choice.

        Raises
        ------
        ClaimError
            A claim outside the vocabulary (unknown kind, cell off the grid, a value not an integer 1..n).
        """
        r, c = self._cell_of(instance, claim)
        if self.solve(instance, 2).unique:
            return super().verify_claim(instance, claim)
        found = []
        for want in (True, False):
            model, cell = self._model(instance)
            var = cell[(r - 1, c - 1)]
            if want == claim.positive:
                model.Add(var == claim.value)
            else:
                model.Add(var != claim.value)
            found.append(cp_feasible(model))
        return _label(*found)

    def solution_claims(self, instance: Instance, solution=None) -> frozenset[Claim]:
        """C*: one positive value claim per empty (non-given) cell of ``solution``.

        Raises
        ------
        NoUniqueSolutionError
            ``solution`` is omitted and the instance has no unique solution.
        """
        sol = self.unique_solution(instance) if solution is None else solution
        g = instance.data.givens
        n = instance.params.n
        return frozenset(Claim("value", ((y + 1, x + 1),), sol[y][x])
                         for y in range(n) for x in range(n) if not g[y][x])

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One positive value claim per given, in reading order."""
        g = instance.data.givens
        n = instance.params.n
        return tuple(Claim("value", ((y + 1, x + 1),), g[y][x]) for y in range(n) for x in range(n) if g[y][x])

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every 1-based cell -> ``(1, ..., n)``."""
        n = instance.params.n
        dom = tuple(range(1, n + 1))
        return {(y, x): dom for y in range(1, n + 1) for x in range(1, n + 1)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Rows, columns, boxes (and diagonals) as ``alldiff`` units, then one unit per given."""
        p: SoloParams = instance.params
        out = [Unit(name, tuple((y + 1, x + 1) for y, x in cells), _all_distinct, (), "alldiff")
               for _, name, cells in _groups(p)]
        for claim in self.given_claims(instance):
            (r, c), v = claim.cells[0], claim.value
            out.append(Unit(f"the given {v} at ({r},{c})", ((r, c),), _equals(v), (claim,), "generic"))
        return tuple(out)


def _label(can_hold: bool | None, can_fail: bool | None) -> ClaimLabel:
    """Label from "a solution where the claim holds / fails exists" (``None``: not proven either way)."""
    if can_hold is True and can_fail is False:
        return ClaimLabel.CORRECT
    if can_hold is False and can_fail is True:
        return ClaimLabel.WRONG
    return ClaimLabel.UNVERIFIABLE


def _all_distinct(values: tuple) -> bool:
    return len(set(values)) == len(values)


class _equals:
    """``allowed`` of a given's unit (a picklable callable, not a closure)."""

    def __init__(self, value: int):
        self.value = value

    def __call__(self, values: tuple) -> bool:
        return len(values) == 1 and values[0] == self.value


PUZZLE = register_puzzle(Solo())
