"""Mosaic (Fill-a-Pix) from Simon Tatham's Portable Puzzle Collection.

Rules
-----
Fill some cells of a ``W x H`` grid black. Some cells show a clue ``0``-``9``: the number of black cells in the 3x3
block centred on that cell, the cell itself included (fewer cells at the edges and corners of the grid). Source: the
collection's ``mosaic.c``.

Game IDs
--------
Params ``<W>x<H>`` (or ``<W>``), each side 3..99 (99: reasonshape's bound); the collection's full form appends
``h0`` when its "aggressive generation" option is off (``h1``, the default, is not written). Desc, row-major over
the ``W*H`` cells: a digit is a clue cell; a letter ``a``..``z`` stands for 1..26 cells without a clue. The
collection's ``SOLVE`` move is ``s`` followed by hex bytes, 8 cells per byte, most significant bit first,
row-major, ``1`` = black, the last byte padded with zero bits.

Answer format
-------------
One grid row per line, ``W`` symbols each: ``#`` for a black cell, ``.`` for a white cell.

Claims and C*
-------------
Kinds: ``"value"`` (``Claim("value", ((r, c),), "#")`` "(r,c) is black", ``"."`` "(r,c) is white") and the static
``"clue"`` (``Claim("clue", ((r, c),), 4)``, "(r,c) has clue 4"). Given claims: one clue claim per clue cell. C*
(reasonshape choice, as tents' "one claim per tent"): one positive value claim ``"#"`` per black cell.

Constraint view
---------------
Variables: the 1-based cells, domain ``("#", ".")``. Units (exact): one per clue, named ``"the clue 4 at (2,3)"``,
over the clue's 3x3 block (clipped to the grid): exactly that many black cells (premise: the clue claim). There is
no global rule.

Levels
------
=========  ==========  ===============================================
level      params      native generator
=========  ==========  ===============================================
trivial    ``3x3``     3x3, clues hidden while deduction-solvable
easy       ``4x4``     4x4, same
normal     ``6x6``     6x6, same
hard       ``8x8``     8x8, same
=========  ==========  ===============================================

The native generator follows the collection's scheme: a random picture (each cell black with probability 1/2, at
least one black cell), every clue shown and required to be solvable by single-clue deduction, then clues hidden
in random order while that deduction still colours the whole grid (which proves uniqueness; CP-SAT confirms it in
:meth:`Puzzle.generate`). With the default "aggressive" option every clue is tried; with ``h0`` only half of them
(a denser, easier puzzle; reasonshape choice for the collection's milder mode). Difficulty comes from grid size and
clue density, and no native puzzle needs more than one clue at a time. Runs of more than 26 clue-less cells are
written as ``z`` followed by the rest, which the collection's ``validate_desc`` and ``new_game`` accept.
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
    digits_end,
    mask_long_numbers,
    parse_wxh,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["MosaicParams", "MosaicData", "Mosaic", "PUZZLE"]

_CLUE_RE = re.compile(r"\((\d+),\s*(\d+)\) (has|does not have) clue (\d+)")


@dataclass(frozen=True)
class MosaicParams:
    """Mosaic params: width ``w``, height ``h`` (>= 3) and the collection's ``aggressive`` generation flag."""

    w: int
    h: int
    aggressive: bool = True


@dataclass(frozen=True)
class MosaicData:
    """Parsed desc: ``clues[r][c]`` is the clue ``0``-``9`` or ``None`` (0-based indices, rows top to bottom)."""

    clues: tuple[tuple[int | None, ...], ...]


def _block(r: int, c: int, h: int, w: int) -> list[tuple[int, int]]:
    """0-based cells of the 3x3 block centred on (r, c), clipped to the grid, row-major."""
    return [(rr, cc) for rr in range(r - 1, r + 2) for cc in range(c - 1, c + 2) if 0 <= rr < h and 0 <= cc < w]


class Mosaic(Puzzle):
    """Mosaic / Fill-a-Pix: the :class:`~reasonshape.envs.base.Puzzle` protocol for the collection's ``mosaic``.

    Instances hold :class:`MosaicParams` and :class:`MosaicData`; solutions are ``H`` tuples of ``W`` symbols
    ``"#"`` (black) / ``"."`` (white), rows top to bottom. See the module docstring for the rules, the game-ID
    grammar, the claim vocabulary, C* and the levels.

    Notes
    -----
    The solver is a CP-SAT model with one linear equality per clue (enumerated with blocking clauses); ``check``
    recounts every clue's 3x3 block in pure Python (O(W*H)).

    References
    ----------
    .. [1] S. Tatham et al., Simon Tatham's Portable Puzzle Collection, ``mosaic.c`` (MIT licence).
    .. [2] Paper A (METHOD.md §A-C): the benchmark's 21 puzzles, claims and C*.
    """

    name = "mosaic"
    LEVELS = {"trivial": "3x3", "easy": "4x4", "normal": "6x6", "hard": "8x8"}
    ANSWER_SYMBOLS = {"#": "a black (filled) cell", ".": "a white (empty) cell"}
    CLAIM_KINDS = ("value", "clue")
    VALUE_WORDS = {"black": "#", "filled": "#", "shaded": "#", "marked": "#", "white": ".", "empty": ".",
                   "blank": ".", "unshaded": "."}

    # ----------------------------------------------------------------- params
    def parse_params(self, text: str) -> MosaicParams:
        """Parse ``"8x8"``, ``"8"`` (square) or ``"8x8h0"`` (aggressive generation off).

        Raises
        ------
        GameIdError
            Naming the position and what was expected (also a width or height outside 3..99).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string like '8x8'")
        w, h, i = parse_wxh(text, min_side=3)
        aggressive = True
        if i < len(text) and text[i] == "h":
            j = digits_end(text, i + 1)
            if text[i + 1:j] not in ("0", "1"):
                raise GameIdError(text, i + 1, "0 or 1 after 'h'")
            aggressive, i = text[i + 1:j] == "1", j
        if i != len(text):
            raise GameIdError(text, i, "'x<height>', 'h0'/'h1' or the end of the params")
        return MosaicParams(w, h, aggressive)

    def format_params(self, params: MosaicParams, full: bool = True) -> str:
        """``"<w>x<h>"``, plus ``"h0"`` in the full form when aggressive generation is off (``encode_params``)."""
        s = f"{params.w}x{params.h}"
        return s + "h0" if full and not params.aggressive else s

    # ----------------------------------------------------------------- desc
    def parse_desc(self, params: MosaicParams, desc: str) -> Instance:
        """Parse digits (clues) and letters (runs of 1..26 clue-less cells), as the collection's ``validate_desc``.

        Raises
        ------
        GameIdError
            An invalid character or a desc that does not cover exactly ``W*H`` cells (with its position).
        """
        w, h = params.w, params.h
        cells: list[int | None] = []
        for i, ch in enumerate(desc):
            if "a" <= ch <= "z":
                cells.extend([None] * (ord(ch) - ord("a") + 1))
            elif "0" <= ch <= "9":
                cells.append(int(ch))
            else:
                raise GameIdError(desc, i, "a clue digit 0-9 or a letter a-z (a run of cells without clue)")
            if len(cells) > w * h:
                raise GameIdError(desc, i, f"a description covering exactly {w * h} cells (too long)")
        if len(cells) < w * h:
            raise GameIdError(desc, len(desc), f"more cells: the description covers {len(cells)} of {w * h}")
        clues = tuple(tuple(cells[r * w:(r + 1) * w]) for r in range(h))
        return Instance(self.name, params, desc, MosaicData(clues))

    @staticmethod
    def encode_desc(clues) -> str:
        """The collection's desc for a grid of clues (``None`` = no clue), as ``new_game_desc`` compresses it."""
        out, run = [], 0
        for v in (v for row in clues for v in row):
            if v is None:
                run += 1
                if run == 26:
                    out.append("z")
                    run = 0
                continue
            if run:
                out.append(chr(ord("a") + run - 1))
                run = 0
            out.append(str(v))
        if run:
            out.append(chr(ord("a") + run - 1))
        return "".join(out)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: MosaicParams, rng: random.Random) -> Instance:
        w, h = params.w, params.h
        for _ in range(200):
            image = [[rng.getrandbits(1) for _ in range(w)] for _ in range(h)]
            if not any(any(row) for row in image):
                continue
            full = [[sum(image[rr][cc] for rr, cc in _block(r, c, h, w)) for c in range(w)] for r in range(h)]
            shown = _hide_clues(params, image, full, rng)
            if shown is None:
                continue
            clues = tuple(tuple(full[r][c] if shown[r][c] else None for c in range(w)) for r in range(h))
            return self.parse_desc(params, self.encode_desc(clues))
        raise GenerationError(f"mosaic: no unique {w}x{h} picture within the attempt budget")

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """The task text: rules, the clue grid (``-`` = no clue), answer format (``#``/``.``) and coordinates."""
        p: MosaicParams = instance.params
        rows = [" ".join("-" if v is None else str(v) for v in row) for row in instance.data.clues]
        return "\n".join([
            "Solve this Mosaic (Fill-a-Pix) puzzle.",
            "",
            f"The grid has {p.h} rows and {p.w} columns. Colour every cell black or white. A number in a cell is "
            "a clue: it tells how many black cells there are in the 3x3 square centred on that cell, the cell "
            "itself included (at the edges and corners of the grid the square is cut off, so it has only 6 or 4 "
            "cells). Cells without a number ('-') may be black or white, as long as every clue is satisfied.",
            "",
            "Cells are named by 1-based coordinates (row, column): rows are numbered top to bottom, columns left "
            "to right, so (1,1) is the top-left cell.",
            "",
            "The grid ('-' = no clue):",
            *rows,
            "",
            f"Answer format: the coloured grid, {p.h} lines of {p.w} symbols separated by spaces, using # for a "
            "black cell and . for a white cell. Put the final answer inside <answer>...</answer>, for example "
            "(first two rows of some grid):",
            "<answer>",
            " ".join("#" if c % 2 == 0 else "." for c in range(p.w)),
            " ".join("." for _ in range(p.w)),
            "...",
            "</answer>",
        ])

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
        p: MosaicParams = instance.params
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
            Violations with rule ids ``"shape"`` and ``"clue"`` (the clue's block cells, 1-based).
        """
        p: MosaicParams = instance.params
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        bad = _shape_violation(grid, p.h, p.w, ("#", "."))
        if bad is not None:
            return CheckResult(False, (bad,))
        out: list[Violation] = []
        for r, row in enumerate(instance.data.clues):
            for c, clue in enumerate(row):
                if clue is None:
                    continue
                block = _block(r, c, p.h, p.w)
                got = sum(grid[rr][cc] == "#" for rr, cc in block)
                if got != clue:
                    out.append(Violation("clue", f"the clue {clue} at ({r + 1},{c + 1}) sees {got} black cells",
                                         tuple((rr + 1, cc + 1) for rr, cc in block)))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p: MosaicParams = instance.params
        model = new_model()
        x = [[model.NewBoolVar(f"x{r}_{c}") for c in range(p.w)] for r in range(p.h)]
        for r, row in enumerate(instance.data.clues):
            for c, clue in enumerate(row):
                if clue is not None:
                    model.Add(sum(x[rr][cc] for rr, cc in _block(r, c, p.h, p.w)) == clue)
        flat = [v for row in x for v in row]
        sols, exhausted = enumerate_solutions(model, flat, max_solutions)
        grids = tuple(tuple(tuple("#" if s[r * p.w + c] else "." for c in range(p.w)) for r in range(p.h))
                      for s in sols)
        return SolveResult(grids, exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """The collection's solve move ``s<hex>`` (8 cells a byte, MSB first, row-major, 1 = black) -> grid.

        Raises
        ------
        ConfigError
            Not ``s`` followed by ``2 * ceil(W*H / 8)`` hex digits (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p: MosaicParams = instance.params
        n = p.w * p.h
        if not (isinstance(move, str) and re.fullmatch(f"s[0-9a-fA-F]{{{2 * ((n + 7) // 8)}}}", move)):
            raise bad_solve_move(self.name, move, f"it must be 's' and {2 * ((n + 7) // 8)} hex digits")
        body = move[1:]
        bits = []
        for k in range(0, len(body), 2):
            byte = int(body[k:k + 2], 16)
            bits.extend((byte >> (7 - b)) & 1 for b in range(8))
        return tuple(tuple("#" if bits[r * p.w + c] else "." for c in range(p.w)) for r in range(p.h))

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool:
        """Whether ``claim`` is true: value claims of ``solution``, clue claims of the instance's clues.

        Raises
        ------
        ClaimError
            Unknown kind, a cell off the grid, a value outside ``#``/``.`` (value claims) or a clue that is not an
            integer 0..9 (clue claims).
        """
        p: MosaicParams = instance.params
        if claim.kind not in self.CLAIM_KINDS or len(claim.cells) != 1:
            raise ClaimError(f"mosaic: claim kind must be one of {self.CLAIM_KINDS} about one cell, got {claim!r}")
        self._check_cell(instance, claim.cells[0], p.h, p.w)
        (r, c), = claim.cells
        if claim.kind == "clue":
            self._claim_number(claim, 0, 9, "a clue")
            return (instance.data.clues[r - 1][c - 1] == claim.value) == claim.positive
        if claim.value not in ("#", "."):
            raise ClaimError(f"mosaic: a cell is '#' (black) or '.' (white), got {claim.value!r}")
        return (solution[r - 1][c - 1] == claim.value) == claim.positive

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim ``"#"`` per black cell (see the module docstring)."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), "#")
                         for r, row in enumerate(sol) for c, v in enumerate(row) if v == "#")

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One ``clue`` claim per clue cell, row-major: "(r,c) has clue n"."""
        return tuple(Claim("clue", ((r + 1, c + 1),), v)
                     for r, row in enumerate(instance.data.clues) for c, v in enumerate(row) if v is not None)

    def claim_text(self, claim: Claim) -> str:
        """``"(r,c) is black"`` / ``"(r,c) is not white"`` / ``"(r,c) has clue 4"``."""
        (r, c), = claim.cells
        if claim.kind == "clue":
            return f"({r},{c}) {'has' if claim.positive else 'does not have'} clue {claim.value}"
        word = {"#": "black", ".": "white"}.get(claim.value, str(claim.value))
        return f"({r},{c}) {'is' if claim.positive else 'is not'} {word}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read ``clue`` claims ("(r,c) has clue n") from ``text``; value claims are left to the generic
        "(r,c) is <value word>" reader with :attr:`VALUE_WORDS`. Linear time (one regex scan)."""
        text = mask_long_numbers(text)
        p: MosaicParams = instance.params
        out = []
        for m in _CLUE_RE.finditer(text):
            r, c = int(m.group(1)), int(m.group(2))
            if 1 <= r <= p.h and 1 <= c <= p.w:
                out.append((Claim("clue", ((r, c),), int(m.group(4)), m.group(3) == "has"), m.start(), m.end()))
        return out

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """1-based cell -> ``("#", ".")``."""
        p: MosaicParams = instance.params
        return {(r, c): ("#", ".") for r in range(1, p.h + 1) for c in range(1, p.w + 1)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """One unit per clue, ``"the clue n at (r,c)"``: exactly ``n`` black cells in its 3x3 block."""
        p: MosaicParams = instance.params
        out = []
        for r, row in enumerate(instance.data.clues):
            for c, clue in enumerate(row):
                if clue is None:
                    continue
                cells = tuple((rr + 1, cc + 1) for rr, cc in _block(r, c, p.h, p.w))
                out.append(Unit(f"the clue {clue} at ({r + 1},{c + 1})", cells, _CountBlack(clue),
                                (Claim("clue", ((r + 1, c + 1),), clue),)))
        return tuple(out)


class _CountBlack:
    """Exactly ``n`` of the values are ``"#"`` (a picklable callable)."""

    def __init__(self, n: int):
        self.n = n

    def __call__(self, values: tuple) -> bool:
        return sum(v == "#" for v in values) == self.n


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


def _propagate(clues, h: int, w: int) -> list[int] | None:
    """Single-clue deduction, as the collection's Mosaic solver: a clue whose block already holds that many black
    cells makes the rest white; one whose black and unknown cells just reach it makes the unknown cells black.

    Returns the row-major 0/1 grid when deduction alone colours every cell (then the solution is unique, every step
    being forced), else None (stuck, or a contradiction). O(clues * 9) per sweep.
    """
    blocks = [(clue, [rr * w + cc for rr, cc in _block(r, c, h, w)])
              for r, row in enumerate(clues) for c, clue in enumerate(row) if clue is not None]
    known: list[int | None] = [None] * (h * w)
    changed = True
    while changed:
        changed = False
        for clue, cells in blocks:
            black = sum(1 for i in cells if known[i] == 1)
            unknown = [i for i in cells if known[i] is None]
            if black > clue or black + len(unknown) < clue:
                return None
            if unknown and black == clue:
                for i in unknown:
                    known[i] = 0
                changed = True
            elif unknown and black + len(unknown) == clue:
                for i in unknown:
                    known[i] = 1
                changed = True
    if any(v is None for v in known):
        return None
    return known  # type: ignore[return-value]


def _hide_clues(params: MosaicParams, image, full, rng: random.Random):
    """Which clues to show (``shown[r][c]``), or None when even all clues do not let deduction colour the picture.

    As the collection: start from every clue, then hide clues in random order as long as single-clue deduction
    (:func:`_propagate`) still colours the whole grid, which keeps the solution unique and the puzzle solvable
    without search. With ``aggressive`` off only half of the clues are tried (reasonshape choice for the collection's
    milder mode).
    """
    w, h = params.w, params.h
    shown = [[full[r][c] for c in range(w)] for r in range(h)]
    if _propagate(shown, h, w) is None:
        return None
    order = [(r, c) for r in range(h) for c in range(w)]
    rng.shuffle(order)
    if not params.aggressive:
        order = order[:len(order) // 2]
    for r, c in order:
        saved, shown[r][c] = shown[r][c], None
        if _propagate(shown, h, w) is None:
            shown[r][c] = saved
    return [[shown[r][c] is not None for c in range(w)] for r in range(h)]


PUZZLE = register_puzzle(Mosaic())
