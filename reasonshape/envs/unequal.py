"""Unequal: Futoshiki (Simon Tatham's "Unequal"), with the collection's optional Adjacent mode.

Rules
-----
Fill an ``n x n`` grid with the numbers ``1..n`` so that every row and every column holds each number exactly
once, keeping the given numbers. Unequal mode: an inequality sign between two neighbouring cells must hold
(``a > b`` means the cell on the open side of the sign is larger). Adjacent mode (params flag ``a``): a bar
between two neighbouring cells means their numbers differ by exactly 1, and two neighbours WITHOUT a bar must not
differ by 1 (every bar is shown).

Game IDs (source: the collection's ``unequal.c``, ``decode_params`` / ``encode_params`` / ``load_game``)
---------------------------------------------------------------------------------------------------------
* params ``N[a][dD]``: order ``N`` (3..32), ``a`` for Adjacent mode, difficulty ``d`` + ``t`` trivial, ``e``
  easy, ``k`` tricky, ``x`` extreme, ``r`` recursive. The short form (no ``d``) keeps the default difficulty
  ``e``; the full form always writes ``d`` + letter.
* desc: one entry per cell in reading order, each a decimal number (0 = blank) followed by flags ``U``, ``R``,
  ``D``, ``L`` and a comma (``new_game_desc`` writes a trailing comma). Flag ``R`` on a cell means "this cell is
  greater than its right neighbour" (Unequal mode) or "differs by 1 from its right neighbour" (Adjacent mode);
  likewise ``U``/``D``/``L``. A run of lower-case letters before an entry skips that many blank cells (``a`` = 1),
  as ``load_game`` accepts. Validation: flags must not point off the grid; in Unequal mode two cells must not both
  be greater than each other, in Adjacent mode bars must be set on both cells.
* ``SOLVE`` move: ``S`` followed by one character per cell (``1``-``9``; for order >= 10, ``0``-``9`` = 1-10 then
  ``A``... = 11...), as ``latin_desc`` writes.

Answer format: the filled grid, one row per line, numbers separated by spaces; rows written without spaces are
accepted for ``n <= 9``; copied inequality signs (``<``, ``>``, ``∧``/``^``, ``∨``/``v``) and bar rows are ignored.

Claims (paper A §B/§C)
----------------------
``CLAIM_KINDS = ("value", "greater", "adjacent")``:

* ``Claim("value", ((r, c),), v)``: "(r,c) is v" / "(r,c) is not v";
* ``Claim("greater", (a, b))``: "a is greater than b" (order matters) / "a is not greater than b"; traces'
  "b is less than a", "a > b", "b < a" are read as the same claim;
* ``Claim("adjacent", (a, b))`` (cells sorted): "a and b are consecutive" / "are not consecutive".

Given claims: the given numbers (value claims), each inequality sign (a ``greater`` claim, larger cell first) and,
in Adjacent mode, every neighbouring pair (an ``adjacent`` claim, negative where there is no bar). **C*** = one
positive value claim per EMPTY cell.

Constraint view: variables are the 1-based cells with domain ``1..n``; units are ``row i`` and ``column j``
(``alldiff``), ``the given v at (r,c)``, ``the clue (r,c) > (r,c)`` for every sign, and in Adjacent mode
``the bar between (r,c) and (r,c)`` / ``no bar between (r,c) and (r,c)`` for every neighbouring pair. No global
rules.

Levels (reasonshape choice, from the proposal in ``shared/data/README.md``)
---------------------------------------------------------------------------
========  ======  ======================================================================
level     params  native generator (clue floor = fraction of all possible clues kept)
========  ======  ======================================================================
trivial   3dt     3x3, floor 0.45
easy      4de     4x4, floor 0.30
normal    5dk     5x5, floor 0.15
hard      6dx     6x6, no floor (clues removed until minimal)
========  ======  ======================================================================

The native generator draws a random Latin square, starts from every clue (all numbers and every inequality
between neighbours), and removes clues in one random order (each clue gets a uniform key in [0, 1), signs offset
by 0.5, so numbers tend to go first, as in the collection's ``game_strip``) while the puzzle stays unique, down to
the clue floor of its difficulty letter (``t`` 0.45, ``e`` 0.3, ``k`` 0.15, ``x``/``r`` 0). In Adjacent mode
every bar is part of the rules' display, so only numbers are removed. Difficulty comes from grid size and clue
density; the collection's solver grade is not reproduced (use ``backend="sgt"`` for that). A removal check that
needs more than ``CHECK_NODES`` (300) search nodes keeps its clue (bounds the time on large grids; it never
triggered at the four levels, 15 seeds each).
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

from reasonshape.envs._solo_search import LatinSearch, consecutive_support, cp_feasible, greater_support
from reasonshape.envs._solver import enumerate_solutions, new_model
from reasonshape.envs.answer import extract_answer_block, find_last_grid, parse_symbol_grid, strip_think
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
    mask_long_numbers,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError, GenerationError

__all__ = ["UnequalParams", "UnequalData", "Unequal", "PUZZLE"]

#: Difficulty letters in the collection's order (unequal.c ``DIFFLIST``).
DIFFICULTIES: tuple[str, ...] = ("t", "e", "k", "x", "r")
#: Node budget of one uniqueness question in the native generator; past it the clue is kept (reasonshape choice:
#: bounds generation time on large grids, where a few removal checks can otherwise explode).
CHECK_NODES = 300
#: Clue floor (fraction of all possible clues) of the native generator per difficulty (reasonshape choice).
CLUE_FLOOR: dict[str, float] = {"t": 0.45, "e": 0.3, "k": 0.15, "x": 0.0, "r": 0.0}

# Flag bits of a cell, as unequal.c's F_ADJ_UP/RIGHT/DOWN/LEFT; (dy, dx) of the neighbour each points to.
U, R, D, L = 1, 2, 4, 8
_DIRS = ((U, -1, 0, "U"), (R, 0, 1, "R"), (D, 1, 0, "D"), (L, 0, -1, "L"))
_OPPOSITE = {U: D, D: U, L: R, R: L}

_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen")

_CELL = r"\(\s*(\d+)\s*,\s*(\d+)\s*\)"
# The second cell may follow a cell word ("cell (5,4) > cell (6,4)", "Position (1,4) > Position (2,4)"); other
# conventions ("row 4, column 2 > row 3, column 2") reach this pattern normalised to "(r,c)" by the schema reader.
_REL_RE = re.compile(_CELL + r"\s*(is not greater than|is greater than|is not less than|is less than|"
                     r"is not larger than|is larger than|is not smaller than|is smaller than|>|<)\s*"
                     r"(?:(?:the\s+)?(?:cell|square|position|pos)\.?\s{0,2})?" + _CELL, re.IGNORECASE)
_ADJ_RE = re.compile(_CELL + r"\s*and\s*" + _CELL + r"\s*are\s+(not\s+)?consecutive", re.IGNORECASE)
# Characters of a copied constraint row (vertical signs, bars) and of in-row signs.
_VERTICAL = set("∧∨^vV-|")
_TRANSLATE = str.maketrans({"<": " ", ">": " "})


@dataclass(frozen=True)
class UnequalParams:
    """Params of an Unequal game.

    Attributes
    ----------
    order : int
        Grid side ``n`` and number of values (3..32).
    diff : str
        Difficulty letter, one of :data:`DIFFICULTIES`.
    adjacent : bool
        Adjacent mode (bars for consecutive neighbours) instead of inequality signs.
    """

    order: int
    diff: str = "e"
    adjacent: bool = False

    @property
    def n(self) -> int:
        """Grid side, ``order``."""
        return self.order


@dataclass(frozen=True)
class UnequalData:
    """Parsed desc (0-based ``[y][x]``): ``nums`` givens (0 = blank) and ``flags`` (bits ``U``/``R``/``D``/``L``)."""

    nums: tuple[tuple[int, ...], ...]
    flags: tuple[tuple[int, ...], ...]

    def greater_pairs(self) -> tuple[tuple[tuple[int, int], tuple[int, int]], ...]:
        """``((big_y, big_x), (small_y, small_x))`` for every flag, 0-based, reading order (Unequal mode)."""
        n = len(self.nums)
        out = []
        for y in range(n):
            for x in range(n):
                f = self.flags[y][x]
                for bit, dy, dx, _ in _DIRS:
                    if f & bit:
                        out.append(((y, x), (y + dy, x + dx)))
        return tuple(out)

    def neighbour_pairs(self) -> tuple[tuple[tuple[int, int], tuple[int, int], bool], ...]:
        """``(cell, right-or-down neighbour, has_bar)`` for every neighbouring pair (Adjacent mode)."""
        n = len(self.nums)
        out = []
        for y in range(n):
            for x in range(n):
                if x + 1 < n:
                    out.append(((y, x), (y, x + 1), bool(self.flags[y][x] & R)))
                if y + 1 < n:
                    out.append(((y, x), (y + 1, x), bool(self.flags[y][x] & D)))
        return tuple(out)


def encode_desc(nums, flags) -> str:
    """The collection's desc (unequal.c ``new_game_desc``): ``%d`` + flags ``URDL`` + ``,`` per cell."""
    parts = []
    for row_n, row_f in zip(nums, flags, strict=True):
        for v, f in zip(row_n, row_f, strict=True):
            parts.append(str(v) + "".join(ch for bit, _, _, ch in _DIRS if f & bit) + ",")
    return "".join(parts)


def _c2n(ch: str, order: int) -> int:
    """unequal.c ``c2n``: a SOLVE-move character -> number (-1 if invalid)."""
    if order < 10:
        return ord(ch) - ord("0") if "0" <= ch <= "9" else -1
    if "0" <= ch <= "9":
        return ord(ch) - ord("0") + 1
    if "A" <= ch <= "Z":
        return ord(ch) - ord("A") + 11
    if "a" <= ch <= "z":
        return ord(ch) - ord("a") + 11
    return -1


class Unequal(Puzzle):
    """Unequal (Futoshiki), optional Adjacent mode. See the module docstring."""

    name: ClassVar[str] = "unequal"
    LEVELS: ClassVar[dict[str, str]] = {"trivial": "3dt", "easy": "4de", "normal": "5dk", "hard": "6dx"}
    ANSWER_SYMBOLS: ClassVar[dict[str, str]] = {
        **{str(i): f"the number {i}" for i in range(1, 10)},
        "10..n": "the numbers 10 and up, written in decimal, on grids larger than 9x9",
        "< > ∧ ∨ ^ v | -": "inequality signs and bars copied from the puzzle: allowed, ignored",
    }
    CLAIM_KINDS: ClassVar[tuple[str, ...]] = ("value", "greater", "adjacent")
    VALUE_WORDS: ClassVar[dict[str, Hashable]] = {w: i for i, w in enumerate(_NUMBER_WORDS, 1)}

    # ----------------------------------------------------------------- params
    def parse_params(self, text: str) -> UnequalParams:
        """Parse unequal params: full ``5dk`` / ``5adk``, short ``5`` / ``5a``.

        Raises
        ------
        GameIdError
            Missing order, unknown difficulty letter, trailing characters, order outside 3..32, or an Adjacent
            game below order 5 at difficulty ``k`` or above (the collection's ``validate_params``).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '5dk'")
        s = text
        m = re.match(r"[0-9]+", s)
        if not m:
            raise GameIdError(s, 0, "the grid order (digits), e.g. '5dk'")
        order = int(m.group())
        i = m.end()
        adjacent = False
        diff = "e"
        if i < len(s) and s[i] == "a":
            adjacent = True
            i += 1
        if i < len(s) and s[i] == "d":
            if i + 1 >= len(s) or s[i + 1] not in DIFFICULTIES:
                raise GameIdError(s, i + 1, "a difficulty letter t, e, k, x or r after 'd'")
            diff = s[i + 1]
            i += 2
        if i < len(s):
            raise GameIdError(s, i, "end of params (order, optional 'a', optional 'd' + difficulty)")
        if not 3 <= order <= 32:
            raise GameIdError(s, 0, f"an order between 3 and 32, got {order}")
        if adjacent and order < 5 and DIFFICULTIES.index(diff) >= DIFFICULTIES.index("k"):
            raise GameIdError(s, 0, "order at least 5 for Adjacent games of difficulty k or above")
        return UnequalParams(order, diff, adjacent)

    def format_params(self, params: UnequalParams, full: bool = True) -> str:
        """The collection's params string (``encode_params``)."""
        return f"{params.order}" + ("a" if params.adjacent else "") + (f"d{params.diff}" if full else "")

    # ----------------------------------------------------------------- desc
    def parse_desc(self, params: UnequalParams, desc: str) -> Instance:
        """Parse an unequal desc as ``load_game`` does.

        Raises
        ------
        GameIdError
            With the position: too much or too little data, a missing number or separator, a number above the
            order, a flag pointing off the grid, or contradicting flags.
        """
        if not isinstance(desc, str):
            raise GameIdError(repr(desc), None, "a desc string")
        o = params.order
        area = o * o
        nums = [0] * area
        flags = [0] * area
        where = [0] * area  # position of each cell's entry, for error messages
        i = p = 0
        while p < len(desc):
            while p < len(desc) and "a" <= desc[p] <= "z":
                i += ord(desc[p]) - ord("a") + 1
                p += 1
            if i >= area:
                raise GameIdError(desc, p, f"no more than {area} cells (too much data to fill grid)")
            if p >= len(desc) or not "0" <= desc[p] <= "9":
                raise GameIdError(desc, p, "a number (0 for a blank cell)")
            where[i] = q = p
            while q < len(desc) and "0" <= desc[q] <= "9":
                q += 1
            n = int(desc[p:q])
            if n > o:
                raise GameIdError(desc, p, f"a number from 0 to {o} (out-of-range number {n})")
            nums[i] = n
            p = q
            while p < len(desc) and desc[p] in "URDL":
                flags[i] |= {"U": U, "R": R, "D": D, "L": L}[desc[p]]
                p += 1
            i += 1
            if i < area and (p >= len(desc) or desc[p] != ","):
                raise GameIdError(desc, p, "',' after the cell (missing separator) or a flag U/R/D/L")
            if p < len(desc) and desc[p] == ",":
                p += 1
        if i < area:
            raise GameIdError(desc, len(desc), f"{area} cells (not enough data to fill grid: got {i})")
        for k in range(area):
            y, x = divmod(k, o)
            for bit, dy, dx, ch in _DIRS:
                if not flags[k] & bit:
                    continue
                ny, nx = y + dy, x + dx
                if not (0 <= ny < o and 0 <= nx < o):
                    raise GameIdError(desc, where[k], f"flags that stay on the grid ({ch} at cell ({y + 1},{x + 1}) "
                                                  "points off the grid)")
                back = bool(flags[ny * o + nx] & _OPPOSITE[bit])
                if params.adjacent and not back:
                    raise GameIdError(desc, where[k], f"matching bars (({y + 1},{x + 1}) has {ch} but its neighbour "
                                                  "lacks the opposite flag)")
                if not params.adjacent and back:
                    raise GameIdError(desc, where[k], f"consistent signs (({y + 1},{x + 1}) and ({ny + 1},{nx + 1}) "
                                                  "are each greater than the other)")
        data = UnequalData(tuple(tuple(nums[y * o:(y + 1) * o]) for y in range(o)),
                           tuple(tuple(flags[y * o:(y + 1) * o]) for y in range(o)))
        return Instance(self.name, params, desc, data)

    def make_instance(self, params: UnequalParams, nums, flags) -> Instance:
        """An instance from 0-based grids of givens (0 = blank) and flag bits, desc encoded as the collection
        does; the desc is re-parsed, so invalid flags raise :class:`GameIdError`."""
        return self.parse_desc(params, encode_desc(nums, flags))

    # ----------------------------------------------------------------- generation
    def _groups(self, n: int) -> list[list[int]]:
        return [[y * n + x for x in range(n)] for y in range(n)] + [[y * n + x for y in range(n)] for x in range(n)]

    def _generate(self, params: UnequalParams, rng: random.Random) -> Instance:
        n = params.order
        groups = self._groups(n)
        full = (1 << n) - 1
        try:
            sol = LatinSearch(n, n * n, groups).random_solution(rng)
        except RuntimeError as e:
            raise GenerationError(f"unequal: no Latin square for order {n}: {e}") from e
        gt = greater_support(n)
        number_clues = list(range(n * n))
        rng.shuffle(number_clues)
        pairs = []  # (big, small) 0-based flat indices for every neighbouring pair
        for y in range(n):
            for x in range(n):
                k = y * n + x
                for k2 in ((k + 1) if x + 1 < n else None, (k + n) if y + 1 < n else None):
                    if k2 is not None:
                        pairs.append((k, k2) if sol[k] > sol[k2] else (k2, k))
        adj_binary = []
        if params.adjacent:
            for y in range(n):
                for x in range(n):
                    k = y * n + x
                    for k2 in ((k + 1) if x + 1 < n else None, (k + n) if y + 1 < n else None):
                        if k2 is not None:
                            bar = abs(sol[k] - sol[k2]) == 1
                            adj_binary.append((k, k2, consecutive_support(n, bar)))
        given = set(number_clues)
        signs = set() if params.adjacent else set(pairs)
        total = len(given) + len(signs)
        floor = CLUE_FLOOR[params.diff] * total

        def search(extra=()):
            binary = [(b, s, gt) for b, s in signs] + adj_binary + list(extra)
            return LatinSearch(n, n * n, groups, binary)

        def domains():
            return [(1 << (sol[k] - 1)) if k in given else full for k in range(n * n)]

        # Numbers tend to go before signs (a random key, signs offset by 0.5), so that puzzles keep mostly signs
        # as the collection's do, without removing every number first.
        keyed = [(rng.random(), 0, ("num", k)) for k in number_clues]
        keyed += [(rng.random() + 0.5, 1, ("sign", pair)) for pair in sorted(signs)]
        candidates = [c for _, _, c in sorted(keyed)]
        count = total
        for what, item in candidates:
            if count - 1 < floor:
                break
            if what == "num":
                given.discard(item)
                trial = domains()
                trial[item] = full & ~(1 << (sol[item] - 1))
                still_unique = not search().has_solution(trial, CHECK_NODES)
                if not still_unique:
                    given.add(item)
            else:
                signs.discard(item)
                big, small = item
                still_unique = not search([(small, big, gt)]).has_solution(domains(), CHECK_NODES)
                if not still_unique:
                    signs.add(item)
            if still_unique:
                count -= 1
        nums = [[sol[y * n + x] if (y * n + x) in given else 0 for x in range(n)] for y in range(n)]
        flags = [[0] * n for _ in range(n)]
        if params.adjacent:
            for k, k2, _ in adj_binary:
                if abs(sol[k] - sol[k2]) == 1:
                    self._set_flag(flags, n, k, k2)
                    self._set_flag(flags, n, k2, k)
        else:
            for big, small in signs:
                self._set_flag(flags, n, big, small)
        return self.make_instance(params, nums, flags)

    @staticmethod
    def _set_flag(flags, n: int, k: int, k2: int) -> None:
        y, x = divmod(k, n)
        y2, x2 = divmod(k2, n)
        for bit, dy, dx, _ in _DIRS:
            if (y + dy, x + dx) == (y2, x2):
                flags[y][x] |= bit

    # ----------------------------------------------------------------- text
    def _grid_text(self, instance: Instance) -> str:
        p: UnequalParams = instance.params
        d: UnequalData = instance.data
        n = p.order
        w = len(str(n))
        lines = []
        for y in range(n):
            row = []
            for x in range(n):
                v = d.nums[y][x]
                row.append((str(v) if v else ".").rjust(w))
                if x + 1 < n:
                    if p.adjacent:
                        sign = "|" if d.flags[y][x] & R else " "
                    elif d.flags[y][x] & R:
                        sign = ">"
                    elif d.flags[y][x + 1] & L:
                        sign = "<"
                    else:
                        sign = " "
                    row.append(f" {sign} ")
            lines.append("".join(row))
            if y + 1 < n:
                below = []
                for x in range(n):
                    if p.adjacent:
                        sign = "-" if d.flags[y][x] & D else " "
                    elif d.flags[y][x] & D:
                        sign = "∨"
                    elif d.flags[y + 1][x] & U:
                        sign = "∧"
                    else:
                        sign = " "
                    below.append(sign.rjust(w))
                lines.append("   ".join(below).rstrip())
        return "\n".join(lines)

    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid with its signs (``.`` = empty), coordinates, and the answer format with symbols."""
        p: UnequalParams = instance.params
        n = p.order
        example = " ".join(str(v) for v in range(1, n + 1))
        if p.adjacent:
            sign_rules = [
                "- A bar between two neighbouring cells (| between cells in a row, - below a cell for the cell "
                "under it) means their numbers differ by exactly 1 (for example 3 and 4).",
                "- Two neighbouring cells WITHOUT a bar between them must NOT differ by exactly 1. Every bar is "
                "shown.",
            ]
        else:
            sign_rules = [
                "- A sign between two cells in a row must hold: 'a < b' means the left number is smaller, "
                "'a > b' means the left number is larger.",
                "- A sign below a cell compares it with the cell directly under it: ∧ means the upper number is "
                "smaller than the lower one, ∨ means the upper number is larger than the lower one.",
                "- Cells with no sign between them can hold any numbers allowed by the other rules.",
            ]
        return "\n".join([
            f"This is a Futoshiki puzzle (Simon Tatham's \"Unequal\"{', Adjacent mode' if p.adjacent else ''}) "
            f"on a {n}x{n} grid.",
            "Rules:",
            f"- Fill every empty cell (shown as .) with a whole number from 1 to {n}.",
            f"- Every row and every column must contain each number from 1 to {n} exactly once.",
            *sign_rules,
            "- The numbers already in the grid are given and must stay as they are.",
            "",
            "Cells are named (row, column), counted from 1: rows from top to bottom, columns from left to right.",
            "",
            "Puzzle:",
            self._grid_text(instance),
            "",
            f"Answer format: write the completed grid inside <answer>...</answer>: {n} lines, one per row from top "
            f"to bottom, each with the {n} numbers of that row from left to right separated by spaces "
            f"(for example \"{example}\"). You may copy the signs and bars; they are ignored. "
            f"Use only the numbers 1 to {n}.",
            "Put your final answer in an <answer>...</answer> block at the end of your response.",
        ])

    @staticmethod
    def _clean(text: str) -> str:
        """Drop in-row signs and lines made only of vertical signs or bars (one pass, linear time)."""
        out = []
        for line in text.splitlines():
            stripped = line.strip()
            if stripped and all(ch in _VERTICAL or ch.isspace() for ch in stripped):
                continue
            out.append(line.translate(_TRANSLATE))
        return "\n".join(out)

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the completed grid from the last ``<answer>`` block (or the last grid-shaped block of the text).

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or an unknown symbol.
        """
        if not isinstance(text, str):
            raise AnswerParseError(f"expected text, got {type(text).__name__}")
        n = instance.params.order
        symbols = {str(i): i for i in range(1, n + 1)}
        block = extract_answer_block(text)
        source, notes = "answer_block", ()
        if block is not None:
            block = self._clean(block)
        else:
            body = "\n".join(ln for ln in self._clean(strip_think(text)).splitlines() if ln.strip())
            block = find_last_grid(body, n, n, symbols, single_chars=n <= 9)
            if block is None:
                raise AnswerParseError("no answer block (<answer>...</answer>) and no grid-shaped block in the text")
            source, notes = "fallback_grid", ("no <answer> block; used the last grid-shaped block",)
        grid = parse_symbol_grid(block, n, n, symbols, single_chars=n <= 9)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution) -> str:
        """One row per line, numbers separated by single spaces (no signs)."""
        return "\n".join(" ".join(str(v) for v in row) for row in solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check a grid by the rules. Rules: ``shape``, ``value_range``, ``given_changed``, ``row_repeat``,
        ``column_repeat``, ``inequality`` (a sign does not hold), ``adjacency`` (a bar without a difference of 1,
        or a difference of 1 without a bar, Adjacent mode)."""
        p: UnequalParams = instance.params
        d: UnequalData = instance.data
        n = p.order
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        if (not isinstance(grid, (tuple, list)) or len(grid) != n
                or any(not isinstance(row, (tuple, list)) or len(row) != n for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be a {n}x{n} grid"),))
        viol: list[Violation] = []
        ok = [[False] * n for _ in range(n)]
        for y in range(n):
            for x in range(n):
                v = grid[y][x]
                if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= n:
                    viol.append(Violation("value_range", f"({y + 1},{x + 1}) holds {v!r}, not a number 1-{n}",
                                          ((y + 1, x + 1),)))
                else:
                    ok[y][x] = True
                gv = d.nums[y][x]
                if gv and v != gv:
                    viol.append(Violation("given_changed", f"({y + 1},{x + 1}) is given as {gv} but holds {v!r}",
                                          ((y + 1, x + 1),)))
        for rule, what, cells_of in (("row_repeat", "row", lambda i: [(i, j) for j in range(n)]),
                                     ("column_repeat", "column", lambda j: [(i, j) for i in range(n)])):
            for i in range(n):
                where: dict[int, list[tuple[int, int]]] = {}
                for y, x in cells_of(i):
                    if ok[y][x]:
                        where.setdefault(grid[y][x], []).append((y + 1, x + 1))
                for v, at in where.items():
                    if len(at) > 1:
                        viol.append(Violation(rule, f"{v} appears {len(at)} times in {what} {i + 1}", tuple(at)))
        if p.adjacent:
            for (y, x), (y2, x2), bar in d.neighbour_pairs():
                if ok[y][x] and ok[y2][x2] and (abs(grid[y][x] - grid[y2][x2]) == 1) != bar:
                    what = "a bar, so they must differ by 1" if bar else "no bar, so they must not differ by 1"
                    viol.append(Violation("adjacency", f"({y + 1},{x + 1}) = {grid[y][x]} and ({y2 + 1},{x2 + 1}) = "
                                          f"{grid[y2][x2]} have {what}", ((y + 1, x + 1), (y2 + 1, x2 + 1))))
        else:
            for (y, x), (y2, x2) in d.greater_pairs():
                if ok[y][x] and ok[y2][x2] and not grid[y][x] > grid[y2][x2]:
                    viol.append(Violation("inequality", f"({y + 1},{x + 1}) = {grid[y][x]} must be greater than "
                                          f"({y2 + 1},{x2 + 1}) = {grid[y2][x2]}",
                                          ((y + 1, x + 1), (y2 + 1, x2 + 1))))
        return CheckResult(not viol, tuple(viol))

    def _model(self, instance: Instance):
        """CP-SAT model: one ``1..n`` integer per cell (``cell[y][x]``), ``AllDifferent`` rows and columns, givens,
        ``a > b`` per sign, allowed pairs per neighbour pair in Adjacent mode."""
        p: UnequalParams = instance.params
        d: UnequalData = instance.data
        n = p.order
        model = new_model()
        cell = [[model.NewIntVar(1, n, f"v{y}_{x}") for x in range(n)] for y in range(n)]
        for i in range(n):
            model.AddAllDifferent(cell[i])
            model.AddAllDifferent([cell[y][i] for y in range(n)])
        for y in range(n):
            for x in range(n):
                if d.nums[y][x]:
                    model.Add(cell[y][x] == d.nums[y][x])
        if p.adjacent:
            near = [(a, b) for a in range(1, n + 1) for b in range(1, n + 1) if abs(a - b) == 1]
            far = [(a, b) for a in range(1, n + 1) for b in range(1, n + 1) if abs(a - b) != 1]
            for (y, x), (y2, x2), bar in d.neighbour_pairs():
                model.AddAllowedAssignments([cell[y][x], cell[y2][x2]], near if bar else far)
        else:
            for (y, x), (y2, x2) in d.greater_pairs():
                model.Add(cell[y][x] > cell[y2][x2])
        return model, cell

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        n = instance.params.order
        model, cell = self._model(instance)
        order = [cell[y][x] for y in range(n) for x in range(n)]
        sols, exhausted = enumerate_solutions(model, order, max_solutions)
        out = tuple(tuple(tuple(s[y * n:(y + 1) * n]) for y in range(n)) for s in sols)
        return SolveResult(out, exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[int, ...], ...]:
        """``S`` + one character per cell (unequal.c ``execute_move`` / ``c2n``).

        Raises
        ------
        ConfigError
            Not an ``S`` move, a bad character, or the wrong length.
        """
        n = instance.params.order
        if not isinstance(move, str) or not move.startswith("S") or len(move) != n * n + 1:
            raise bad_solve_move(self.name, move, f"it must be 'S' and {n * n} characters")
        vals = [_c2n(ch, n) for ch in move[1:]]
        if any(not 1 <= v <= n for v in vals):
            raise bad_solve_move(self.name, move, f"a character outside 1..{n}")
        return tuple(tuple(vals[y * n:(y + 1) * n]) for y in range(n))

    # ----------------------------------------------------------------- claims
    def _claim_cells(self, instance: Instance, claim: Claim) -> tuple:
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"unequal: unknown claim kind {claim.kind!r}; expected one of {self.CLAIM_KINDS}")
        want = 1 if claim.kind == "value" else 2
        if len(claim.cells) != want:
            raise ClaimError(f"unequal: a {claim.kind} claim names {want} cell(s), got {claim.cells}")
        n = instance.params.order
        for cell in claim.cells:
            self._check_cell(instance, cell, n, n)
        if want == 2 and claim.cells[0] == claim.cells[1]:
            raise ClaimError(f"unequal: a {claim.kind} claim needs two different cells, got {claim.cells}")
        if claim.kind == "value":
            self._claim_number(claim, 1, n, "a number")
        else:
            self._claim_no_value(claim)
        return claim.cells

    def claim_holds(self, instance: Instance, solution, claim: Claim) -> bool | None:
        """Truth of a value / greater / adjacent claim in ``solution``.

        Raises
        ------
        ClaimError
            Unknown kind, wrong number of cells, a cell off the grid, a value claim whose value is not an integer
            1..n (``"3"``, ``99``), or a greater / adjacent claim with a value (they take ``None``); for either
            polarity.
        """
        cells = self._claim_cells(instance, claim)
        vals = [solution[r - 1][c - 1] for r, c in cells]
        if claim.kind == "value":
            truth = vals[0] == claim.value
        elif claim.kind == "greater":
            truth = vals[0] > vals[1]
        else:
            truth = abs(vals[0] - vals[1]) == 1
        return truth == claim.positive

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
            A claim outside the vocabulary (see :meth:`claim_holds`).
        """
        cells = self._claim_cells(instance, claim)
        if self.solve(instance, 2).unique:
            return super().verify_claim(instance, claim)
        n = instance.params.order
        found = []
        for want in (True, False):
            model, cell = self._model(instance)
            a = cell[cells[0][0] - 1][cells[0][1] - 1]
            holds = want == claim.positive
            if claim.kind == "value":
                if holds:
                    model.Add(a == claim.value)
                else:
                    model.Add(a != claim.value)
            else:
                b = cell[cells[1][0] - 1][cells[1][1] - 1]
                if claim.kind == "greater":
                    if holds:
                        model.Add(a > b)
                    else:
                        model.Add(a <= b)
                else:
                    pairs = [(u, v) for u in range(1, n + 1) for v in range(1, n + 1) if (abs(u - v) == 1) == holds]
                    model.AddAllowedAssignments([a, b], pairs)
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
        d: UnequalData = instance.data
        n = instance.params.order
        return frozenset(Claim("value", ((y + 1, x + 1),), sol[y][x])
                         for y in range(n) for x in range(n) if not d.nums[y][x])

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """Given numbers, then every sign as a ``greater`` claim (or every neighbour pair as an ``adjacent``
        claim, negative without a bar, in Adjacent mode)."""
        d: UnequalData = instance.data
        n = instance.params.order
        out = [Claim("value", ((y + 1, x + 1),), d.nums[y][x]) for y in range(n) for x in range(n) if d.nums[y][x]]
        if instance.params.adjacent:
            out += [Claim("adjacent", ((y + 1, x + 1), (y2 + 1, x2 + 1)), None, bar)
                    for (y, x), (y2, x2), bar in d.neighbour_pairs()]
        else:
            out += [Claim("greater", ((y + 1, x + 1), (y2 + 1, x2 + 1))) for (y, x), (y2, x2) in d.greater_pairs()]
        return tuple(out)

    def claim_text(self, claim: Claim) -> str:
        """``"(3,4) is 2"``, ``"(1,3) is greater than (1,2)"``, ``"(1,2) and (1,3) are not consecutive"``..."""
        if claim.kind == "greater":
            (a, b), (c, d) = claim.cells
            return f"({a},{b}) is {'' if claim.positive else 'not '}greater than ({c},{d})"
        if claim.kind == "adjacent":
            (a, b), (c, d) = claim.cells
            return f"({a},{b}) and ({c},{d}) are {'' if claim.positive else 'not '}consecutive"
        return super().claim_text(claim)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read ``greater`` claims ("(1,3) is greater than (1,2)", "is less than", "is not greater than",
        "(1,3) > (1,2)", "(1,2) < (1,3)", "cell (5,4) > cell (6,4)"...) and ``adjacent`` claims ("(1,2) and (1,3)
        are [not] consecutive"). Cells are 1-based ``(row, column)``; cells off the grid are skipped. Other cell
        conventions ("row 4, column 2", "[4][2]", "Row 4: position 2") are rewritten to ``(r,c)`` by
        :class:`~reasonshape.extraction.schema.SchemaReader` before this is called. Linear time: two non-nested
        regular expressions."""
        if text.count("(") < 2:  # both patterns read two "(r,c)" cells: most sentences skip them
            return []
        text = mask_long_numbers(text)
        n = instance.params.order
        out: list[tuple[Claim, int, int]] = []
        for m in _REL_RE.finditer(text):
            a = (int(m.group(1)), int(m.group(2)))
            b = (int(m.group(4)), int(m.group(5)))
            if a == b or not all(1 <= v <= n for v in a + b):
                continue
            rel = " ".join(m.group(3).lower().split())
            negative = " not " in f" {rel} "
            larger = rel in (">",) or "greater" in rel or "larger" in rel
            big, small = (a, b) if larger else (b, a)
            out.append((Claim("greater", (big, small), None, not negative), m.start(), m.end()))
        for m in _ADJ_RE.finditer(text):
            a = (int(m.group(1)), int(m.group(2)))
            b = (int(m.group(3)), int(m.group(4)))
            if a == b or not all(1 <= v <= n for v in a + b):
                continue
            out.append((Claim("adjacent", tuple(sorted((a, b))), None, m.group(5) is None), m.start(), m.end()))
        out.sort(key=lambda t: t[1])
        return out

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every 1-based cell -> ``(1, ..., n)``."""
        n = instance.params.order
        dom = tuple(range(1, n + 1))
        return {(y, x): dom for y in range(1, n + 1) for x in range(1, n + 1)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Rows and columns (``alldiff``), one unit per given number, per sign, and per neighbour pair (Adjacent)."""
        n = instance.params.order
        out = [Unit(f"row {y}", tuple((y, x) for x in range(1, n + 1)), _all_distinct, (), "alldiff")
               for y in range(1, n + 1)]
        out += [Unit(f"column {x}", tuple((y, x) for y in range(1, n + 1)), _all_distinct, (), "alldiff")
                for x in range(1, n + 1)]
        for claim in self.given_claims(instance):
            if claim.kind == "value":
                (r, c), v = claim.cells[0], claim.value
                out.append(Unit(f"the given {v} at ({r},{c})", ((r, c),), _Equals(v), (claim,)))
            elif claim.kind == "greater":
                (a, b), (c, d) = claim.cells
                out.append(Unit(f"the clue ({a},{b}) > ({c},{d})", claim.cells, _greater, (claim,)))
            else:
                (a, b), (c, d) = claim.cells
                name = f"the bar between ({a},{b}) and ({c},{d})" if claim.positive else \
                    f"no bar between ({a},{b}) and ({c},{d})"
                out.append(Unit(name, claim.cells, _Consecutive(claim.positive), (claim,)))
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


def _greater(values: tuple) -> bool:
    return values[0] > values[1]


class _Equals:
    """``allowed`` of a given's unit (picklable, unlike a closure)."""

    def __init__(self, value: int):
        self.value = value

    def __call__(self, values: tuple) -> bool:
        return len(values) == 1 and values[0] == self.value


class _Consecutive:
    """``allowed`` of an Adjacent-mode pair: ``|a - b| == 1`` iff ``bar``."""

    def __init__(self, bar: bool):
        self.bar = bar

    def __call__(self, values: tuple) -> bool:
        return (abs(values[0] - values[1]) == 1) == self.bar


PUZZLE = register_puzzle(Unequal())
