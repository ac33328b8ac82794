"""Pattern (nonogram) from Simon Tatham's Portable Puzzle Collection.

Rules
-----
Fill some cells of a ``W x H`` grid. Each row and each column has a clue: the lengths of its runs of consecutive
filled cells, in order (left to right for rows, top to bottom for columns); runs are separated by at least one
empty cell; an empty clue (written ``0``) means the line has no filled cell. A game ID may also fix some cells
(the collection's optional "clue squares" section). Source: the collection's ``pattern.c``.

Game IDs
--------
Params ``<W>x<H>`` (or ``<W>`` for a square); the full and the short form are the same (the collection has no
difficulty for Pattern). Desc: ``W + H`` clues separated by ``/``, columns left to right then rows top to bottom;
a clue is its run lengths separated by ``.`` (positive integers), an empty clue is empty text. Optionally a ``,``
then a run-length code of fixed cells over the ``W*H`` cells row-major: a letter ``a``..``y`` (``A``..``Y``) skips
``k = letter - 'a'`` free cells then fixes one cell empty (filled); ``z``/``Z`` skips 25 cells. The collection's
``SOLVE`` move is ``S`` followed by ``W*H`` digits, row-major, ``1`` = filled.

Answer format
-------------
One grid row per line, ``W`` symbols each: ``#`` for a filled cell, ``.`` for an empty cell.

Claims and C*
-------------
Kinds: ``"value"`` (``Claim("value", ((r, c),), "#")`` "(r,c) is filled", ``"."`` "(r,c) is empty"), and the
static clue facts ``"row_clue"`` (``Claim("row_clue", ((r, 1),), (2, 1))``, "row r has clue 2 1") and
``"column_clue"`` (anchor cell ``(1, c)``, "column c has clue 3"; an empty clue is the value ``()``, written "0").
Given claims: every row and column clue, plus a value claim per fixed cell. C* (reasonshape choice, as tents' "one
claim per tent"): one positive value claim ``"#"`` per filled cell that is not fixed by the game ID.

Constraint view
---------------
Variables: the 1-based cells, domain ``("#", ".")`` (a fixed cell: its value only). Units (exact): ``"row r"`` and
``"column c"``, whose runs of filled cells equal the clue (premise: that clue claim). There is no global rule.

Levels
------
=========  ==========  ==========================================
level      params      native generator
=========  ==========  ==========================================
trivial    ``3x3``     3x3
easy       ``5x5``     5x5
normal     ``8x8``     8x8
hard       ``10x10``   10x10
=========  ==========  ==========================================

The native generator draws a random picture as the collection does (uniform noise averaged over each cell's 3x3
neighbourhood, thresholded at the median so about half the cells are filled), computes its clues, and keeps it when
line-at-a-time deduction (every arrangement of one row or column consistent with what is known, as the collection's
solver) fills the whole grid, which proves the solution unique (CP-SAT confirms it in :meth:`Puzzle.generate`);
otherwise it draws again. Like the collection's, native puzzles never need more than one line at a time. Every clue
is always given, so the difficulty comes from grid size alone.
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
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["PatternParams", "PatternData", "Pattern", "PUZZLE", "runs"]

# "row 3 has clue 2 1" / "column 2 does not have clue 0": one linear scan, no nested ambiguity.
_CLUE_RE = re.compile(r"\b(row|column) (\d+) (has|does not have) clue (\d+(?: \d+)*)")


@dataclass(frozen=True)
class PatternParams:
    """Pattern params: grid width ``w`` and height ``h`` (each 1..99)."""

    w: int
    h: int


@dataclass(frozen=True)
class PatternData:
    """Parsed desc: column clues (left to right), row clues (top to bottom), each a tuple of run lengths, and the
    fixed cells ``fixed[r][c]`` (``"#"``, ``"."`` or ``None``; 0-based)."""

    cols: tuple[tuple[int, ...], ...]
    rows: tuple[tuple[int, ...], ...]
    fixed: tuple[tuple[str | None, ...], ...]


def runs(line) -> tuple[int, ...]:
    """Lengths of the runs of ``"#"`` in ``line`` (a sequence of ``"#"``/``"."``), in order.

    >>> runs("##.#..###")
    (2, 1, 3)
    """
    out, n = [], 0
    for v in line:
        if v == "#":
            n += 1
        elif n:
            out.append(n)
            n = 0
    if n:
        out.append(n)
    return tuple(out)


def _clue_text(clue: tuple[int, ...]) -> str:
    return " ".join(map(str, clue)) if clue else "0"


class Pattern(Puzzle):
    """Pattern / nonogram: the :class:`~reasonshape.envs.base.Puzzle` protocol for the collection's ``pattern``.

    Instances hold :class:`PatternParams` and :class:`PatternData`; solutions are ``H`` tuples of ``W`` symbols
    ``"#"`` (filled) / ``"."`` (empty), rows top to bottom. See the module docstring for the rules, the game-ID
    grammar, the claim vocabulary, C* and the levels.

    Notes
    -----
    The solver states each row and column clue as a CP-SAT automaton (regular) constraint over the line's 0/1
    cells and enumerates with blocking clauses; ``check`` recomputes the runs of every line (O(W*H)).

    References
    ----------
    .. [1] S. Tatham et al., Simon Tatham's Portable Puzzle Collection, ``pattern.c`` (MIT licence).
    .. [2] Paper A (METHOD.md §A-C): the benchmark's 21 puzzles, claims and C*.
    """

    name = "pattern"
    LEVELS = {"trivial": "3x3", "easy": "5x5", "normal": "8x8", "hard": "10x10"}
    ANSWER_SYMBOLS = {"#": "a filled (black) cell", ".": "an empty (white) cell"}
    CLAIM_KINDS = ("value", "row_clue", "column_clue")
    VALUE_WORDS = {"filled": "#", "black": "#", "full": "#", "shaded": "#", "empty": ".", "white": ".",
                   "blank": ".", "unshaded": "."}

    # ----------------------------------------------------------------- params
    def parse_params(self, text: str) -> PatternParams:
        """Parse ``"10x10"`` or ``"10"`` (square).

        Raises
        ------
        GameIdError
            Naming the position and what was expected (also a width or height outside 1..99).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string like '10x10'")
        w, h, i = parse_wxh(text)
        if i != len(text):
            raise GameIdError(text, i, "'x<height>' or the end of the params")
        return PatternParams(w, h)

    def format_params(self, params: PatternParams, full: bool = True) -> str:
        """``"<w>x<h>"`` (the collection writes the same full and short form)."""
        return f"{params.w}x{params.h}"

    # ----------------------------------------------------------------- desc
    def parse_desc(self, params: PatternParams, desc: str) -> Instance:
        """Parse clues (and optional fixed cells) as the collection's ``validate_desc``/``new_game``.

        Raises
        ------
        GameIdError
            A zero clue, runs that do not fit their line, too many or too few clues, an unexpected character, or
            a fixed-cell section of the wrong length (each with its position in ``desc``).
        """
        w, h = params.w, params.h
        n_lines = w + h
        clues: list[tuple[int, ...]] = []
        i, n = 0, len(desc)
        fixed_start = None
        for k in range(n_lines):
            what = f"column {k + 1}" if k < w else f"row {k - w + 1}"
            space = (h if k < w else w) + 1
            clue: list[int] = []
            if i < n and desc[i].isdigit():
                while True:
                    j = i
                    while j < n and desc[j].isascii() and desc[j].isdigit():
                        j += 1
                    if j == i:
                        raise GameIdError(desc, i, f"a run length (digits) in the clue of {what}")
                    val = int(desc[i:j])
                    if val <= 0:
                        raise GameIdError(desc, i, f"a positive run length in the clue of {what}")
                    space -= val + 1
                    if space < 0:
                        raise GameIdError(desc, i, f"runs that fit in {what} ({h if k < w else w} cells)")
                    clue.append(val)
                    i = j
                    if i < n and desc[i] == ".":
                        i += 1
                        continue
                    break
            clues.append(tuple(clue))
            last = k + 1 == n_lines
            if i >= n:
                if not last:
                    raise GameIdError(desc, i, f"'/' and {n_lines - k - 1} more clues (got {k + 1} of {n_lines})")
                break
            ch = desc[i]
            if ch == "/":
                if last:
                    raise GameIdError(desc, i, f"the end of the clues: there are only {n_lines} lines")
                i += 1
            elif ch == ",":
                if not last:
                    raise GameIdError(desc, i, f"'/' and {n_lines - k - 1} more clues (got {k + 1} of {n_lines})")
                fixed_start = i + 1
                break
            else:
                raise GameIdError(desc, i, "a digit, '.', '/' or ','")
        fixed: list[str | None] = [None] * (w * h)
        if fixed_start is not None:
            pos, i = 0, fixed_start
            while pos < w * h:
                if i >= n:
                    raise GameIdError(desc, i, f"more fixed-cell letters (covered {pos} of {w * h} cells)")
                ch = desc[i]
                if not (ch.isascii() and ch.isalpha()):
                    raise GameIdError(desc, i, "a letter a-z or A-Z in the fixed-cell section")
                skip = ord(ch.lower()) - ord("a")
                pos += skip
                if skip < 25 and pos < w * h:
                    fixed[pos] = "#" if ch.isupper() else "."
                    pos += 1
                if pos > w * h:
                    raise GameIdError(desc, i, f"a fixed-cell section covering exactly {w * h} cells")
                i += 1
            if i < n:
                raise GameIdError(desc, i, "the end of the description")
        data = PatternData(tuple(clues[:w]), tuple(clues[w:]),
                           tuple(tuple(fixed[r * w:(r + 1) * w]) for r in range(h)))
        return Instance(self.name, params, desc, data)

    @staticmethod
    def encode_desc(cols, rows, fixed=None) -> str:
        """The collection's desc for clues (and optional fixed cells, ``"#"``/``"."``/``None``), as
        ``new_game_desc`` writes it."""
        text = "/".join(".".join(map(str, clue)) for clue in list(cols) + list(rows))
        flat = [v for row in fixed for v in row] if fixed is not None else []
        if not any(v is not None for v in flat):
            return text
        out, run = [], 0
        for v in flat:
            if v is None:
                run += 1
                if run == 25:
                    out.append("z")
                    run = 0
            else:
                out.append(chr(run + (ord("A") if v == "#" else ord("a"))))
                run = 0
        if run:
            out.append(chr(run + ord("a")))
        return text + "," + "".join(out)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: PatternParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        for _ in range(500):
            grid = _random_picture(w, h, rng)
            cols = tuple(runs([grid[r][c] for r in range(h)]) for c in range(w))
            rows = tuple(runs(row) for row in grid)
            if not any(rows):
                continue
            if _line_solve(w, h, cols, rows) is not None:  # solved by forced steps only: unique
                return self.parse_desc(params, self.encode_desc(cols, rows))
        raise GenerationError(f"pattern: no unique {w}x{h} picture within the attempt budget")

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """The task text: rules, the clues (one line each), fixed cells if any, answer format and coordinates."""
        p: PatternParams = instance.params
        d: PatternData = instance.data
        lines = [
            "Solve this Pattern (nonogram) puzzle.",
            "",
            f"The grid has {p.h} rows and {p.w} columns; every cell is either filled or empty. Each row and each "
            "column has a clue: the lengths of its blocks of consecutive filled cells, in order (rows left to "
            "right, columns top to bottom). Blocks are separated by at least one empty cell. A clue of 0 means the "
            "line has no filled cell.",
            "",
            "Cells are named by 1-based coordinates (row, column): rows are numbered top to bottom, columns left "
            "to right, so (1,1) is the top-left cell.",
            "",
            "Column clues (top to bottom):",
            *[f"column {c + 1}: {_clue_text(clue)}" for c, clue in enumerate(d.cols)],
            "",
            "Row clues (left to right):",
            *[f"row {r + 1}: {_clue_text(clue)}" for r, clue in enumerate(d.rows)],
        ]
        if any(v is not None for row in d.fixed for v in row):
            lines += ["", "Some cells are already known ('#' filled, '.' empty, '?' unknown):",
                      *[" ".join("?" if v is None else v for v in row) for row in d.fixed]]
        lines += [
            "",
            f"Answer format: the completed grid, {p.h} lines of {p.w} symbols separated by spaces, using # for a "
            "filled cell and . for an empty cell. Put the final answer inside <answer>...</answer>, for example "
            "(first two rows of some grid):",
            "<answer>",
            " ".join("#" if c % 3 == 0 else "." for c in range(p.w)),
            " ".join("." for _ in range(p.w)),
            "...",
            "</answer>",
        ]
        return "\n".join(lines)

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read an ``H x W`` grid of ``#``/``.`` from the last ``<answer>`` block (or the last grid-shaped block).

        Parameters
        ----------
        text : str
            The model's completion (any length; read in linear time).
        instance : Instance
            The instance the answer is for (gives the expected ``H x W`` size).

        Returns
        -------
        ParsedAnswer
            ``value``: ``H`` tuples of ``W`` values (``"#"``/``"."``);
            ``source``: ``"answer_block"`` or ``"fallback_grid"``.

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or an unknown symbol.
        """
        p: PatternParams = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, {"#": "#", ".": "."})
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The answer text for ``solution``: rows of ``#``/``.`` separated by spaces."""
        return format_grid(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check an answer by the rules.

        Parameters
        ----------
        instance : Instance
            The puzzle instance.
        answer : ParsedAnswer or tuple of tuples
            A parsed answer or a solution value: ``H`` rows of ``W`` symbols (``"#"``/``"."``).

        Returns
        -------
        CheckResult
            Violations with rule ids ``"shape"``, ``"fixed_cell"``, ``"row_clue"``, ``"column_clue"``; cells are
            1-based.
        """
        p: PatternParams = instance.params
        d: PatternData = instance.data
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        bad = _shape_violation(grid, p.h, p.w, ("#", "."))
        if bad is not None:
            return CheckResult(False, (bad,))
        out: list[Violation] = []
        for r in range(p.h):
            for c in range(p.w):
                f = d.fixed[r][c]
                if f is not None and grid[r][c] != f:
                    out.append(Violation("fixed_cell", f"({r + 1},{c + 1}) is fixed as {f!r}", ((r + 1, c + 1),)))
        for r in range(p.h):
            got = runs(grid[r])
            if got != d.rows[r]:
                out.append(Violation("row_clue", f"row {r + 1} has blocks {_clue_text(got)}, clue is "
                                     f"{_clue_text(d.rows[r])}", tuple((r + 1, c + 1) for c in range(p.w))))
        for c in range(p.w):
            got = runs([grid[r][c] for r in range(p.h)])
            if got != d.cols[c]:
                out.append(Violation("column_clue", f"column {c + 1} has blocks {_clue_text(got)}, clue is "
                                     f"{_clue_text(d.cols[c])}", tuple((r + 1, c + 1) for r in range(p.h))))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p: PatternParams = instance.params
        d: PatternData = instance.data
        model, x = _model(p, d.cols, d.rows)
        for r in range(p.h):
            for c in range(p.w):
                if d.fixed[r][c] is not None:
                    model.Add(x[r][c] == (1 if d.fixed[r][c] == "#" else 0))
        flat = [v for row in x for v in row]
        sols, exhausted = enumerate_solutions(model, flat, max_solutions)
        grids = tuple(tuple(tuple("#" if s[r * p.w + c] else "." for c in range(p.w)) for r in range(p.h))
                      for s in sols)
        return SolveResult(grids, exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """``"S" + W*H digits`` (row-major, ``1`` = filled), the collection's solve move, -> grid of ``#``/``.``.

        Raises
        ------
        ConfigError
            The move is not ``S`` followed by exactly ``W*H`` digits ``0``/``1``.
        """
        p: PatternParams = instance.params
        body = move[1:] if isinstance(move, str) and move.startswith("S") else None
        if body is None or len(body) != p.w * p.h or set(body) - {"0", "1"}:
            raise bad_solve_move(self.name, move, f"it must be 'S' and {p.w * p.h} digits 0/1")
        return tuple(tuple("#" if ch == "1" else "." for ch in body[r * p.w:(r + 1) * p.w]) for r in range(p.h))

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool:
        """Whether ``claim`` is true: value claims of ``solution``, clue claims of the instance's clues.

        Raises
        ------
        ClaimError
            Unknown kind, a cell off the grid, a value outside ``#``/``.``, a clue claim not anchored at ``(r, 1)``
            (rows) / ``(1, c)`` (columns), or a clue value that is not a tuple of integer run lengths >= 1 that fit
            the line (``()`` is the empty clue; ``(0,)``, ``(9,)`` in a row of 8 cells are refused); for either
            polarity.
        """
        p: PatternParams = instance.params
        d: PatternData = instance.data
        if claim.kind not in self.CLAIM_KINDS or len(claim.cells) != 1:
            raise ClaimError(f"pattern: claim kind must be one of {self.CLAIM_KINDS} about one cell, got {claim!r}")
        self._check_cell(instance, claim.cells[0], p.h, p.w)
        (r, c), = claim.cells
        if claim.kind == "value":
            if claim.value not in ("#", "."):
                raise ClaimError(f"pattern: a cell is '#' (filled) or '.' (empty), got {claim.value!r}")
            return (solution[r - 1][c - 1] == claim.value) == claim.positive
        self._claim_line(claim, p.h, p.w, row=claim.kind == "row_clue")
        v, line = claim.value, p.w if claim.kind == "row_clue" else p.h
        if not (isinstance(v, tuple) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in v)
                and sum(v) + len(v) - 1 <= line):  # the runs and the gaps between them fit the line
            raise ClaimError(f"pattern: {claim.kind} claims need a tuple of run lengths >= 1 that fit the line's "
                             f"{line} cells, got {v!r}")
        actual = d.rows[r - 1] if claim.kind == "row_clue" else d.cols[c - 1]
        return (tuple(claim.value) == actual) == claim.positive

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim ``"#"`` per filled cell that is not fixed (see the module docstring)."""
        sol = self.unique_solution(instance) if solution is None else solution
        fixed = instance.data.fixed
        return frozenset(Claim("value", ((r + 1, c + 1),), "#")
                         for r, row in enumerate(sol) for c, v in enumerate(row) if v == "#" and fixed[r][c] is None)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """Every column clue, every row clue, then a value claim per fixed cell."""
        d: PatternData = instance.data
        out = [Claim("column_clue", ((1, c + 1),), clue) for c, clue in enumerate(d.cols)]
        out += [Claim("row_clue", ((r + 1, 1),), clue) for r, clue in enumerate(d.rows)]
        out += [Claim("value", ((r + 1, c + 1),), v) for r, row in enumerate(d.fixed) for c, v in enumerate(row)
                if v is not None]
        return tuple(out)

    def claim_text(self, claim: Claim) -> str:
        """``"(r,c) is filled"`` / ``"(r,c) is not empty"`` / ``"row r has clue 2 1"`` / ``"column c has clue 0"``."""
        if claim.kind in ("row_clue", "column_clue"):
            (r, c), = claim.cells
            line = f"row {r}" if claim.kind == "row_clue" else f"column {c}"
            verb = "has" if claim.positive else "does not have"
            return f"{line} {verb} clue {_clue_text(tuple(claim.value))}"
        (r, c), = claim.cells
        word = {"#": "filled", ".": "empty"}.get(claim.value, str(claim.value))
        return f"({r},{c}) {'is' if claim.positive else 'is not'} {word}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read clue claims ("row 3 has clue 2 1", "column 2 does not have clue 0") from ``text``; value claims
        are left to the generic "(r,c) is <value word>" reader with :attr:`VALUE_WORDS`. Linear time."""
        text = mask_long_numbers(text)
        p: PatternParams = instance.params
        out = []
        for m in _CLUE_RE.finditer(text):
            k = int(m.group(2))
            is_row = m.group(1) == "row"
            if not 1 <= k <= (p.h if is_row else p.w):
                continue
            nums = tuple(int(t) for t in m.group(4).split())
            value = () if nums == (0,) else nums
            if 0 in value:
                continue
            claim = Claim("row_clue" if is_row else "column_clue", ((k, 1) if is_row else (1, k),), value,
                          m.group(3) == "has")
            out.append((claim, m.start(), m.end()))
        return out

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """1-based cell -> ``("#", ".")`` (a fixed cell: its fixed value only)."""
        d: PatternData = instance.data
        return {(r + 1, c + 1): (("#", ".") if v is None else (v,))
                for r, row in enumerate(d.fixed) for c, v in enumerate(row)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """``"row r"`` and ``"column c"``: the line's runs equal its clue (premise: the clue claim)."""
        p: PatternParams = instance.params
        d: PatternData = instance.data
        out = []
        for r in range(1, p.h + 1):
            clue = d.rows[r - 1]
            out.append(Unit(f"row {r}", tuple((r, c) for c in range(1, p.w + 1)), _RunsEqual(clue),
                            (Claim("row_clue", ((r, 1),), clue),)))
        for c in range(1, p.w + 1):
            clue = d.cols[c - 1]
            out.append(Unit(f"column {c}", tuple((r, c) for r in range(1, p.h + 1)), _RunsEqual(clue),
                            (Claim("column_clue", ((1, c),), clue),)))
        return tuple(out)


class _RunsEqual:
    """A line whose runs of ``"#"`` must equal ``clue`` (a picklable callable)."""

    def __init__(self, clue: tuple[int, ...]):
        self.clue = clue

    def __call__(self, values: tuple) -> bool:
        return runs(values) == self.clue


def _shape_violation(grid, rows: int, cols: int, domain) -> Violation | None:
    try:
        ok = len(grid) == rows and all(len(row) == cols for row in grid)
    except TypeError:
        ok = False
    if not ok:
        return Violation("shape", f"the answer must be a {rows}x{cols} grid", ())
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            if v not in domain:
                return Violation("shape", f"({r + 1},{c + 1}) holds {v!r}, expected one of {list(domain)}",
                                 ((r + 1, c + 1),))
    return None


def _clue_automaton(clue: tuple[int, ...]) -> tuple[list[tuple[int, int, int]], list[int]]:
    """The deterministic automaton of the 0/1 lines whose runs of 1s are ``clue``: ``(transitions, finals)`` with
    transitions ``(state, symbol, next_state)`` from start state 0.

    States: 0 = before the first run; for run ``i`` of length ``L`` the next ``L`` states count its filled cells;
    after a run that is not the last, one state is "at least one gap seen"; after the last run, one state absorbs
    trailing empty cells. An empty clue is state 0 looping on 0.
    """
    transitions = [(0, 0, 0)]
    if not clue:
        return transitions, [0]
    state = 0
    finals: list[int] = []
    for i, length in enumerate(clue):
        for _ in range(length):
            transitions.append((state, 1, state + 1))
            state += 1
        if i + 1 < len(clue):
            transitions.append((state, 0, state + 1))  # the mandatory gap
            state += 1
            transitions.append((state, 0, state))  # further gap cells
        else:
            finals = [state]
            transitions.append((state, 0, state + 1))
            state += 1
            transitions.append((state, 0, state))
            finals.append(state)
    return transitions, finals


def _line_automaton(model, line, clue) -> None:
    """Constrain the 0/1 ``line`` to have runs ``clue`` with CP-SAT's automaton (regular) constraint."""
    if not clue:
        for v in line:
            model.Add(v == 0)
        return
    transitions, finals = _clue_automaton(clue)
    model.AddAutomaton(line, 0, finals, transitions)


def _line_deduce(known: list, clue: tuple[int, ...]) -> list | None:
    """Every cell of one line that all arrangements of ``clue`` consistent with ``known`` agree on.

    ``known`` holds 1, 0 or None per cell. Forward and backward reachable state sets of :func:`_clue_automaton`
    give, per cell, the symbols some full arrangement allows: O(len * states). Returns the refined line, or None
    when no arrangement fits (a contradiction).
    """
    transitions, finals = _clue_automaton(clue)
    step: dict[tuple[int, int], int] = {(a, v): b for a, v, b in transitions}
    n = len(known)
    fwd = [set() for _ in range(n + 1)]
    fwd[0] = {0}
    for i in range(n):
        for a in fwd[i]:
            for v in (0, 1):
                if known[i] in (None, v) and (a, v) in step:
                    fwd[i + 1].add(step[(a, v)])
    bwd = [set() for _ in range(n + 1)]
    bwd[n] = set(finals) & fwd[n]
    if not bwd[n]:
        return None
    allowed = [set() for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for a in fwd[i]:
            for v in (0, 1):
                if known[i] in (None, v) and step.get((a, v)) in bwd[i + 1]:
                    bwd[i].add(a)
                    allowed[i].add(v)
    return [next(iter(vals)) if len(vals) == 1 else None for vals in allowed]


def _line_solve(w: int, h: int, cols, rows) -> list[list[int]] | None:
    """Solve by line-at-a-time deduction (as the collection's own solver does); the grid of 0/1 when that fully
    solves it (then the solution is unique, since every step was forced), else None."""
    grid: list[list[int | None]] = [[None] * w for _ in range(h)]
    dirty = {("r", r) for r in range(h)} | {("c", c) for c in range(w)}
    while dirty:
        kind, k = dirty.pop()
        line = grid[k] if kind == "r" else [grid[r][k] for r in range(h)]
        new = _line_deduce(line, rows[k] if kind == "r" else cols[k])
        if new is None:
            return None
        for i, (old, v) in enumerate(zip(line, new, strict=True)):
            if old is None and v is not None:
                if kind == "r":
                    grid[k][i] = v
                    dirty.add(("c", i))
                else:
                    grid[i][k] = v
                    dirty.add(("r", i))
    if any(v is None for row in grid for v in row):
        return None
    return grid  # type: ignore[return-value]


def _model(p: PatternParams, cols, rows):
    model = new_model()
    x = [[model.NewIntVar(0, 1, f"x{r}_{c}") for c in range(p.w)] for r in range(p.h)]
    for r in range(p.h):
        _line_automaton(model, x[r], rows[r])
    for c in range(p.w):
        _line_automaton(model, [x[r][c] for r in range(p.h)], cols[c])
    return model, x


def _random_picture(w: int, h: int, rng: random.Random) -> list[list[str]]:
    """Noise averaged over each cell's 3x3 neighbourhood (not across a dimension of size 2), thresholded so about
    half the cells are filled. Facts from the collection's ``pattern.c`` generator; own code."""
    noise = [[rng.random() for _ in range(w)] for _ in range(h)]
    smooth = [[0.0] * w for _ in range(h)]
    for r in range(h):
        for c in range(w):
            total, n = 0.0, 0
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    rr, cc = r + dr, c + dc
                    if not (0 <= rr < h and 0 <= cc < w):
                        continue
                    if (h == 2 and dr) or (w == 2 and dc):
                        continue
                    total += noise[rr][cc]
                    n += 1
            smooth[r][c] = total / n
    flat = sorted(v for row in smooth for v in row)
    index = w * h // 2 + (rng.randrange(2) if (w * h) % 2 else 0)
    threshold = flat[index] if index < w * h else flat[-1] + 1
    return [["#" if smooth[r][c] >= threshold else "." for c in range(w)] for r in range(h)]


PUZZLE = register_puzzle(Pattern())
