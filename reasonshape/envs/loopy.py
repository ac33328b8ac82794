"""Loopy (Slitherlink) on the square grid, from Simon Tatham's Portable Puzzle Collection.

Rules
-----
Draw lines along some edges of a ``W x H`` grid of square cells so that the lines form exactly one closed loop
(every dot touches 0 or 2 drawn edges, all drawn edges connected, at least one edge drawn). A cell with a clue ``n``
has exactly ``n`` of its four sides drawn. Source: the collection's ``loopy.c`` (``check_completion``).

Game IDs
--------
Params ``<W>x<H>t<type>d<c>``: ``type`` must be ``0`` (square grid; reasonshape implements only this grid type),
difficulty ``c`` in ``e`` (easy), ``n`` (normal), ``t`` (tricky), ``h`` (hard); the short form omits ``d<c>``
(then easy), and a missing ``t<type>`` means 0. Desc: the ``W*H`` cells in row-major order; a digit ``0``..``4`` is a
clue, a letter ``a``..``z`` is a run of 1..26 cells without a clue (longer runs are written ``z`` + rest, as
``state_to_text`` does). The collection's ``SOLVE`` move is ``S`` followed by ``<i>y`` (line) or ``<i>n`` (no line)
per edge ``i``, in the edge order of ``grid.c`` for a square grid: cells in row-major order, each cell's sides
top, right, bottom, left, an edge numbered when first met.

Coordinates
-----------
Cells are 1-based ``(row, column)``, ``1..H`` x ``1..W``. Dots are 1-based ``(row, column)``, ``1..H+1`` x
``1..W+1``; dot ``(r, c)`` is the top-left corner of cell ``(r, c)``. An edge is named by its two end dots, in
sorted order: ``((r, c), (r, c+1))`` (horizontal) or ``((r, c), (r+1, c))`` (vertical).

Answer format
-------------
``2H+1`` lines. Odd lines (1st, 3rd, ...) are rows of dots: ``+`` for each dot and, between two dots, ``-`` for a
drawn line or ``.`` (or ``x``) for no line, e.g. ``+-+.+``. Even lines are the vertical edges between two dot rows:
``W+1`` symbols, ``|`` for a drawn line or ``.`` (or ``x``) for none, optionally separated by spaces, e.g.
``| . |``. Spaces, commas and clue digits written inside cells are ignored; ``|`` is a symbol here, not a
separator. When that explicit reading fails, the drawing is read by character positions instead (dots at even
columns, spaces standing for "no line", as the collection's own text format draws it). The solution value is
``(horizontal, vertical)``: ``H+1`` rows of ``W`` 0/1 flags and ``H`` rows of ``W+1`` 0/1 flags.

Claims and C*
-------------
* ``"edge"``: ``Claim("edge", (dot1, dot2), None, positive)``: "there is a line between dots (1,2) and (1,3)"
  (``positive``) / "there is no line between dots (1,2) and (1,3)". Cells are the two 1-based end **dots**.
* ``"clue"``: ``Claim("clue", ((r, c),), n)``: "the clue at cell (r,c) is n" (cells; given, static).

C* (reasonshape choice, as tents' "one claim per tent"): one positive edge claim per drawn edge; undrawn edges
are implied.

Constraint view
---------------
Variables: every edge (its pair of dots), domain ``(0, 1)``. Units: ``"the clue n at (r,c)"`` (sum of the cell's
four sides equals ``n``, premise its clue claim) and ``"the dot (r,c)"`` (0 or 2 drawn edges at the dot). Global
rule, not a unit: **one loop** (the drawn edges are connected and not empty). The solver enforces it exactly with
lazy cuts (a candidate with several loops gets, per loop ``C``: "if every edge of ``C`` is drawn, no other edge is");
:meth:`Loopy.check` with a traversal.

Levels
------
=========  =============  =================================================================
level      params         native generator
=========  =============  =================================================================
trivial    ``3x3t0de``    3x3, keeps at least 50% of the cells as clues
easy       ``4x4t0de``    4x4, keeps at least 50% of the cells as clues
normal     ``5x5t0dn``    5x5, keeps at least 35% of the cells as clues
hard       ``7x7t0dt``    7x7, minimal clue set (no clue can be removed)
=========  =============  =================================================================

The native generator grows a random simply connected set of cells (the complement stays connected to the outside
and no two cells of the set touch only at a corner), takes its boundary as the loop, writes every clue (a loop
whose full clue set CP-SAT finds another solution for is redrawn, about 1% of 3x3 loops), then removes clues in
random order while CP-SAT proves the solution unique, down to the clue density of the difficulty letter (``e``
50%, ``n`` 35%, ``t``/``h`` minimal). Difficulty comes from grid size and clue density, never from rule changes
(reasonshape choice).
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from reasonshape.envs._loopy_solver import (
    LoopCut,
    all_clues,
    build_model,
    components,
    has_other_solution,
    random_loop,
    unflatten,
)
from reasonshape.envs._solver import lazy_enumerate
from reasonshape.envs.answer import extract_answer_block, strip_think
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
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import AnswerParseError, ClaimError, GameIdError, GenerationError

__all__ = ["LoopyParams", "Loopy", "PUZZLE"]

_DIFFS = {"e": "easy", "n": "normal", "t": "tricky", "h": "hard"}
#: Fraction of cells kept as clues by the native generator, per difficulty letter (reasonshape choice).
_KEEP = {"e": 0.5, "n": 0.35, "t": 0.0, "h": 0.0}
#: Random loops the native generator draws before giving up on one whose full clue set is unique.
_MAX_LOOPS = 100
_H_ON, _V_ON, _OFF = "-", "|", "."
_H_TOKENS = {"-": 1, "—": 1, "─": 1, ".": 0, "x": 0, "X": 0}
_V_TOKENS = {"|": 1, "│": 1, ".": 0, "x": 0, "X": 0}
_IGNORED = set(" \t\r,+0123456789")


@dataclass(frozen=True)
class LoopyParams:
    """Loopy params: ``w`` x ``h`` square cells (each >= 3), grid ``type`` 0 (square), ``diff`` in ``e/n/t/h``."""

    w: int
    h: int
    type: int = 0
    diff: str = "e"


class _SumIn:
    """``allowed`` of a unit: the number of drawn edges is in ``ok`` (picklable)."""

    def __init__(self, ok: tuple[int, ...]):
        self.ok = ok

    def __call__(self, values: tuple) -> bool:
        return sum(values) in self.ok


class Loopy(Puzzle):
    """Loopy (Slitherlink) on squares: one loop, cell clues count drawn sides. See the module docstring."""

    name = "loopy"
    LEVELS = {"trivial": "3x3t0de", "easy": "4x4t0de", "normal": "5x5t0dn", "hard": "7x7t0dt"}
    ANSWER_SYMBOLS = {
        "+": "a dot (grid corner), on the odd lines",
        "-": "a drawn line between two horizontally neighbouring dots (odd lines)",
        "|": "a drawn line between two vertically neighbouring dots (even lines)",
        ".": "no line on that edge (odd and even lines; 'x' is read the same)",
    }
    CLAIM_KINDS = ("edge", "clue")
    #: Empty on purpose: loopy has no cell values, and its edge claims are read by :meth:`parse_claim_text`.
    VALUE_WORDS: dict = {}

    # ----------------------------------------------------------------- params and game IDs
    def parse_params(self, text: str) -> LoopyParams:
        """Parse ``"7x7t0dt"`` / ``"7x7t0"`` into :class:`LoopyParams`.

        Raises
        ------
        GameIdError
            Malformed text, a grid type other than 0 (square), a side outside 3..99, or an unknown difficulty letter.
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '7x7t0dt'")
        w, h, i = parse_wxh(text, min_side=3)
        gtype = 0
        if i < len(text) and text[i] == "t":
            at = i + 1
            gtype, i = read_int(text, at, "the grid type (digits) after 't'")
            if gtype != 0:
                raise GameIdError(text, at, "grid type 0 (squares; reasonshape implements only the square grid)")
        diff, i = read_difficulty(text, i, _DIFFS, "e", "a difficulty letter e, n, t or h after 'd'")
        if i != len(text):
            raise GameIdError(text, i, "end of params (format <W>x<H>t0d<e|n|t|h>)")
        return LoopyParams(w, h, gtype, diff)

    def format_params(self, params: LoopyParams, full: bool = True) -> str:
        """``"7x7t0dt"`` (full) or ``"7x7t0"`` (short), as the collection's ``encode_params``."""
        base = f"{params.w}x{params.h}t{params.type}"
        return f"{base}d{params.diff}" if full else base

    def parse_desc(self, params: LoopyParams, desc: str) -> Instance:
        """Parse the clue string; ``data`` is the ``H x W`` tuple of clues (``None`` = no clue).

        Raises
        ------
        GameIdError
            An unexpected character (a clue above 4, a grid-desc ``_`` section...), or a wrong cell count.
        """
        n = params.w * params.h
        cells: list = []
        for i, ch in enumerate(desc):
            if "0" <= ch <= "4":
                cells.append(int(ch))
            elif "a" <= ch <= "z":
                cells.extend([None] * (ord(ch) - ord("a") + 1))
            else:
                raise GameIdError(desc, i, "a clue digit 0-4 or a run letter a-z")
            if len(cells) > n:
                raise GameIdError(desc, i, f"exactly {n} cells for a {params.w}x{params.h} grid")
        if len(cells) != n:
            raise GameIdError(desc, len(desc), f"exactly {n} cells for a {params.w}x{params.h} grid, "
                                               f"got {len(cells)}")
        w = params.w
        clues = tuple(tuple(cells[r * w:(r + 1) * w]) for r in range(params.h))
        return Instance(self.name, params, desc, clues)

    def format_desc(self, instance: Instance) -> str:
        """The collection's desc for the instance's clues."""
        return encode_desc(instance.data)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: LoopyParams, rng: random.Random) -> Instance:
        """Native generator (see the module docstring): a random loop whose full clue set CP-SAT proves unique
        (a loop whose every clue still allows another loop, e.g. ``3x3t0de:123222321``, is redrawn, up to
        ``_MAX_LOOPS`` times), then clue removal down to the difficulty's density.

        Raises
        ------
        GenerationError
            No loop with a unique full clue set within ``_MAX_LOOPS`` draws (or no random loop at all).
        """
        w, h = params.w, params.h
        cuts: list = []
        for _ in range(_MAX_LOOPS):
            sol = random_loop(w, h, rng)
            clues = [list(row) for row in all_clues(sol, w, h)]
            # Checked before any further draw from rng, so a loop that was unique already yields the same instance.
            if not has_other_solution(w, h, clues, sol, cuts):
                break
        else:
            raise GenerationError(f"loopy: no loop with a unique full clue set on {w}x{h} in {_MAX_LOOPS} draws")
        cells = [(r, c) for r in range(h) for c in range(w)]
        rng.shuffle(cells)
        floor = int(round(_KEEP[params.diff] * len(cells)))
        n_clues, cuts = len(cells), []
        for r, c in cells:
            if n_clues <= floor:
                break
            v = clues[r][c]
            clues[r][c] = None
            if has_other_solution(w, h, clues, sol, cuts):
                clues[r][c] = v
            else:
                n_clues -= 1
        data = tuple(tuple(row) for row in clues)
        return Instance(self.name, params, encode_desc(data), data)

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the clue grid, the dot-and-edge answer format and the ``<answer>`` instruction."""
        p = instance.params
        grid = "\n".join(" ".join("." if v is None else str(v) for v in row) for row in instance.data)
        empty = _format((tuple((0,) * p.w for _ in range(p.h + 1)), tuple((0,) * (p.w + 1) for _ in range(p.h))))
        return (
            f"Solve this Loopy (Slitherlink) puzzle on a grid of {p.h} rows and {p.w} columns of square cells.\n\n"
            "Rules:\n"
            "- Draw lines along some edges of the cells so that the lines form exactly one closed loop: every "
            "dot (grid corner) touches either 0 or 2 drawn lines, the loop never crosses or branches, and there "
            "is only one loop.\n"
            "- A cell with a number n has exactly n of its four sides drawn. Cells without a number can have "
            "any number of drawn sides.\n\n"
            "Coordinates are 1-based (row, column), rows from top to bottom, columns from left to right. Cell "
            f"(r,c) is in row r and column c. The dots form {p.h + 1} rows and {p.w + 1} columns; dot (r,c) is "
            "the top-left corner of cell (r,c), so cell (r,c) has the corners (r,c), (r,c+1), (r+1,c) and "
            "(r+1,c+1).\n\n"
            "The clues, one row of cells per line ('.' = no number):\n"
            f"{grid}\n\n"
            f"Answer format: {2 * p.h + 1} lines that draw the dots and edges.\n"
            f"- Lines 1, 3, ..., {2 * p.h + 1} are the {p.h + 1} rows of dots: '+' for each dot, and between two "
            "neighbouring dots '-' if the line between them is drawn or '.' if it is not.\n"
            f"- Lines 2, 4, ..., {2 * p.h} are the vertical edges between two rows of dots: {p.w + 1} symbols "
            "separated by spaces, '|' if that vertical edge is drawn or '.' if it is not.\n"
            "For example, this is the layout with no line drawn yet:\n"
            f"{empty}\n"
            "and a loop around one single cell of a 1x1 grid would be the three lines '+-+', '| |', '+-+'.\n\n"
            "Think it through, then put only the final drawing inside <answer>...</answer>."
        )

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``2H+1``-line dot drawing (see the module docstring) from the last ``<answer>`` block, or the
        last block of ``2H+1`` consecutive lines that reads as a drawing. Linear in the text length.

        Raises
        ------
        AnswerParseError
            No answer block and no drawing, wrong number of lines or symbols, or an unknown symbol.
        """
        p = instance.params
        block = extract_answer_block(text)
        source, notes = "answer_block", ()
        if block is None:
            body = strip_think(text)
            block = _find_last_drawing(body, p.w, p.h)
            if block is None:
                sol = _positional(body, p.w, p.h)
                if sol is None:
                    raise AnswerParseError("no answer block (<answer>...</answer>) and no dot drawing in the text")
                return ParsedAnswer(sol, "fallback_grid", ("no <answer> block; used the last dot drawing",
                                                           "read by character positions (spaces = no line)"))
            source, notes = "fallback_grid", ("no <answer> block; used the last dot drawing",)
        try:
            return ParsedAnswer(self._parse_strict(block, p.w, p.h), source, notes)
        except AnswerParseError:
            sol = _positional(block, p.w, p.h)
            if sol is None:
                raise
            return ParsedAnswer(sol, source, notes + ("read by character positions (spaces = no line)",))

    @staticmethod
    def _parse_strict(block: str, w: int, h: int):
        """The explicit format: every edge slot written as a symbol; spaces, commas, digits ignored."""
        lines = [ln for ln in block.splitlines() if _squeeze(ln)]
        if len(lines) != 2 * h + 1:
            # Tolerate prose lines around the drawing inside the block when the rest is exactly the drawing.
            found = _find_last_drawing(block, w, h)
            if found is None:
                raise AnswerParseError(f"wrong size: {len(lines)} non-empty lines, expected {2 * h + 1} "
                                       f"({h + 1} dot rows and {h} edge rows)")
            lines = found.splitlines()
        hs, vs = [], []
        for k, ln in enumerate(lines):
            sq = _squeeze(ln)
            if k % 2 == 0:
                hs.append(_read_row(sq, _H_TOKENS, w, f"dot row {k // 2 + 1} (line {k + 1})"))
            else:
                vs.append(_read_row(sq, _V_TOKENS, w + 1, f"edge row {k // 2 + 1} (line {k + 1})"))
        return (tuple(hs), tuple(vs))

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The dot drawing of ``solution`` (inverse of :meth:`parse_answer`)."""
        return _format(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: ``shape``, ``clue``, ``dead_end`` (a dot with 1 line), ``branch`` (3 or 4 lines),
        ``empty`` (nothing drawn) and ``several_loops``. O(W*H).

        ``Violation.cells`` are 1-based cells for ``clue`` and 1-based **dots** for the dot rules (``dead_end``,
        ``branch``, ``several_loops``: the dots of every piece but the first).
        """
        sol = answer.value if isinstance(answer, ParsedAnswer) else answer
        p = instance.params
        w, h = p.w, p.h
        if not _shape_ok(sol, w, h):
            return CheckResult(False, (Violation("shape", f"expected ({h + 1} rows of {w} horizontal flags, "
                                                          f"{h} rows of {w + 1} vertical flags) of 0/1"),))
        H, V = sol
        out = []
        for r in range(h):
            for c in range(w):
                n = instance.data[r][c]
                if n is not None:
                    got = H[r][c] + H[r + 1][c] + V[r][c] + V[r][c + 1]
                    if got != n:
                        out.append(Violation("clue", f"the clue {n} at ({r + 1},{c + 1}) has {got} sides drawn",
                                             ((r + 1, c + 1),)))
        deg = _degrees(H, V, w, h)
        for r in range(h + 1):
            for c in range(w + 1):
                d = deg[r][c]
                if d == 1:
                    out.append(Violation("dead_end", f"the line ends at dot ({r + 1},{c + 1})", ((r + 1, c + 1),)))
                elif d > 2:
                    out.append(Violation("branch", f"{d} lines meet at dot ({r + 1},{c + 1})", ((r + 1, c + 1),)))
        comps = components(H, V, w, h)
        if not comps:
            out.append(Violation("empty", "no line is drawn"))
        elif len(comps) > 1:
            out.append(Violation("several_loops", f"the lines form {len(comps)} separate pieces, not one loop",
                                 tuple(sorted({(r + 1, c + 1) for comp in comps[1:] for (r, c) in comp[0]}))))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        p = instance.params
        model, hv, vv = build_model(p.w, p.h, instance.data)
        flat = [x for row in hv for x in row] + [x for row in vv for x in row]
        sols, exhausted = lazy_enumerate(model, flat, max_solutions, LoopCut(p.w, p.h, hv, vv))
        return SolveResult(tuple(unflatten(s, p.w, p.h) for s in sols), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple:
        """``S0n1y2y...`` (edge ``i`` in ``grid.c`` order, ``y`` = line, ``n`` = no line, ``u`` = unknown, as
        ``loopy.c`` ``execute_move``) -> ``(horizontal, vertical)`` flags. The last item per edge counts; every edge
        must end as ``y`` or ``n`` (the collection's solve lists them all).

        Raises
        ------
        ConfigError
            Anything else: a wrong prefix, an edge index out of range, an edge left unknown, trailing text
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p = instance.params
        if not (isinstance(move, str) and re.fullmatch(rf"S(?:{MOVE_NUM[1:-1]}[ynu])+", move)):
            raise bad_solve_move(self.name, move, "it must be 'S' and items <edge index><y|n|u>")
        order = _edge_order(p.w, p.h)
        state: list[str] = ["u"] * len(order)
        for m in re.finditer(r"([0-9]+)([ynu])", move[1:]):
            i = int(m[1])
            if i >= len(order):
                raise bad_solve_move(self.name, move, f"edge {i} is out of range 0..{len(order) - 1}")
            state[i] = m[2]
        if "u" in state:
            raise bad_solve_move(self.name, move, f"edge {state.index('u')} is left unknown")
        H = [[0] * p.w for _ in range(p.h + 1)]
        V = [[0] * (p.w + 1) for _ in range(p.h)]
        for (kind, r, c), s in zip(order, state, strict=True):
            if s == "y":
                (H if kind == "h" else V)[r][c] = 1
        return (tuple(map(tuple, H)), tuple(map(tuple, V)))

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Edge claims against the solution, clue claims against the instance.

        Raises
        ------
        ClaimError
            Unknown kind, dots or a cell off the grid, dots that are not neighbours, an edge claim with a value (it
            takes ``None``), or a clue claim whose value is not an integer 0..4 (for either polarity).
        """
        p = instance.params
        if claim.kind == "edge":
            key = self._edge_key(instance, claim.cells)
            self._claim_no_value(claim)
            return (self.solution_value(instance, solution, key) == 1) == claim.positive
        if claim.kind == "clue":
            if len(claim.cells) != 1:
                raise ClaimError(f"loopy: a clue claim names one cell, got {claim.cells}")
            self._check_cell(instance, claim.cells[0], p.h, p.w)
            self._claim_number(claim, 0, 4, "a clue")
            r, c = claim.cells[0]
            return (instance.data[r - 1][c - 1] == claim.value) == claim.positive
        raise ClaimError(f"loopy: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")

    def _edge_key(self, instance: Instance, cells) -> tuple:
        p = instance.params
        if len(cells) != 2:
            raise ClaimError(f"loopy: an edge claim names its two end dots, got {cells}")
        a, b = sorted(tuple(x) for x in cells)
        for d in (a, b):
            self._check_cell(instance, d, p.h + 1, p.w + 1)
        if not ((a[0] == b[0] and b[1] == a[1] + 1) or (a[1] == b[1] and b[0] == a[0] + 1)):
            raise ClaimError(f"loopy: dots {a} and {b} are not neighbours")
        return (a, b)

    def solution_value(self, instance: Instance, solution: Any, variable: Hashable) -> int:
        """The 0/1 flag of the edge ``variable`` = ``(dot1, dot2)`` (1-based, sorted) in ``solution``."""
        (r1, c1), (r2, c2) = variable
        H, V = solution
        if r1 == r2:
            return H[r1 - 1][c1 - 1]
        return V[r1 - 1][c1 - 1]

    def value_claim(self, variable: Hashable, value: Any, positive: bool = True) -> Claim:
        """The edge claim "edge ``variable`` is ``value``" (1 = drawn), normalised to a drawn/undrawn polarity."""
        a, b = sorted(variable)
        return Claim("edge", (a, b), None, (int(value) == 1) == positive)

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one positive edge claim per drawn edge."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("edge", e, None, True) for e in _all_edges(instance.params.w, instance.params.h)
                         if self.solution_value(instance, sol, e) == 1)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One ``clue`` claim per clue cell."""
        return tuple(Claim("clue", ((r + 1, c + 1),), v) for r, row in enumerate(instance.data)
                     for c, v in enumerate(row) if v is not None)

    def claim_text(self, claim: Claim) -> str:
        """``"there is a line between dots (1,2) and (1,3)"`` / ``"there is no line ..."`` /
        ``"the clue at cell (2,3) is 3"``."""
        if claim.kind == "edge":
            a, b = claim.cells
            what = "a line" if claim.positive else "no line"
            return f"there is {what} between dots ({a[0]},{a[1]}) and ({b[0]},{b[1]})"
        (r, c), = claim.cells
        return f"the clue at cell ({r},{c}) is {'' if claim.positive else 'not '}{claim.value}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read edge claims ("there is [a|no] line between dots (a,b) and (c,d)", also "edge") and clue claims
        ("the clue at cell (r,c) is [not] n"). Linear regex scans; edges between non-neighbours are skipped."""
        text = mask_long_numbers(text)
        out = []
        for m in _EDGE_RE.finditer(text):
            a = (int(m.group(2)), int(m.group(3)))
            b = (int(m.group(4)), int(m.group(5)))
            try:
                key = self._edge_key(instance, (a, b))
            except ClaimError:
                continue
            out.append((Claim("edge", key, None, m.group(1) is None), m.start(), m.end()))
        for m in _CLUE_RE.finditer(text):
            out.append((Claim("clue", ((int(m.group(1)), int(m.group(2))),), int(m.group(4)), not m.group(3)),
                        m.start(), m.end()))
        return sorted(out, key=lambda t: t[1])

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every edge ``(dot1, dot2)`` (1-based dots, sorted) -> ``(0, 1)``."""
        return {e: (0, 1) for e in _all_edges(instance.params.w, instance.params.h)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """``"the clue n at (r,c)"`` per clue cell and ``"the dot (r,c)"`` per dot (degree 0 or 2)."""
        p = instance.params
        out = []
        for r in range(1, p.h + 1):
            for c in range(1, p.w + 1):
                n = instance.data[r - 1][c - 1]
                if n is not None:
                    sides = (((r, c), (r, c + 1)), ((r + 1, c), (r + 1, c + 1)),
                             ((r, c), (r + 1, c)), ((r, c + 1), (r + 1, c + 1)))
                    out.append(Unit(f"the clue {n} at ({r},{c})", sides, _SumIn((n,)),
                                    (Claim("clue", ((r, c),), n),)))
        for r in range(1, p.h + 2):
            for c in range(1, p.w + 2):
                es = []
                if c > 1:
                    es.append(((r, c - 1), (r, c)))
                if c <= p.w:
                    es.append(((r, c), (r, c + 1)))
                if r > 1:
                    es.append(((r - 1, c), (r, c)))
                if r <= p.h:
                    es.append(((r, c), (r + 1, c)))
                out.append(Unit(f"the dot ({r},{c})", tuple(es), _SumIn((0, 2))))
        return tuple(out)


_EDGE_RE = re.compile(r"(?:\b(no)|\ba)?\s*(?:line|edge) between dots \((\d+),\s*(\d+)\) and \((\d+),\s*(\d+)\)", re.I)
_CLUE_RE = re.compile(r"clue at cell \((\d+),\s*(\d+)\) is (not )?([0-4])", re.I)


def encode_desc(clues) -> str:
    """The collection's desc for an ``H x W`` clue array (``None`` = no clue)."""
    out, run = [], 0
    for v in [v for row in clues for v in row] + ["END"]:
        if v is None:
            run += 1
            continue
        while run > 0:
            k = min(run, 26)
            out.append(chr(ord("a") + k - 1))
            run -= k
        if v != "END":
            out.append(str(v))
    return "".join(out)


def _all_edges(w: int, h: int) -> list[tuple]:
    es = [((r, c), (r, c + 1)) for r in range(1, h + 2) for c in range(1, w + 1)]
    es += [((r, c), (r + 1, c)) for r in range(1, h + 1) for c in range(1, w + 2)]
    return es


def _edge_order(w: int, h: int) -> list[tuple[str, int, int]]:
    """Edges in ``grid.c``'s order for the square grid: ("h"|"v", row, col) 0-based into H / V."""
    seen, order = set(), []
    for y in range(h):
        for x in range(w):
            for e in (("h", y, x), ("v", y, x + 1), ("h", y + 1, x), ("v", y, x)):
                if e not in seen:
                    seen.add(e)
                    order.append(e)
    return order


def _squeeze(line: str) -> str:
    return "".join(ch for ch in line if ch not in _IGNORED)


def _read_row(sq: str, tokens: dict, n: int, where: str) -> tuple[int, ...]:
    if len(sq) != n:
        raise AnswerParseError(f"wrong size: {where} has {len(sq)} edge symbols, expected {n}")
    vals = []
    for ch in sq:
        if ch not in tokens:
            raise AnswerParseError(f"unknown symbol {ch!r} in {where}; expected one of {sorted(tokens)}")
        vals.append(tokens[ch])
    return tuple(vals)


def _line_kind(line: str, w: int) -> str | None:
    sq = _squeeze(line)
    if "+" in line and len(sq) == w and all(ch in _H_TOKENS for ch in sq):
        return "dots"
    if len(sq) == w + 1 and all(ch in _V_TOKENS for ch in sq):
        return "edges"
    return None


def _find_last_drawing(text: str, w: int, h: int) -> str | None:
    """The last ``2h+1`` consecutive non-empty lines alternating dot rows (with '+') and edge rows, or ``None``."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    need = 2 * h + 1
    run: list[str] = []
    for ln in reversed(lines):
        kind = _line_kind(ln, w)
        expect = "dots" if len(run) % 2 == 0 else "edges"
        if kind == expect:
            run.append(ln)
            if len(run) == need:
                return "\n".join(reversed(run))
        else:
            run = [ln] if kind == "dots" else []
    return None


def _dot_row(line: str, w: int) -> tuple[int, ...] | None:
    """Positional dot row ``+-+ +`` (exactly ``2w+1`` characters, surrounding spaces ignored): the ``w`` flags, or
    ``None``."""
    s = line.strip()
    if len(s) != 2 * w + 1:
        return None
    if any(s[i] != "+" for i in range(0, 2 * w + 1, 2)):
        return None
    flags = []
    for i in range(1, 2 * w, 2):
        if s[i] in _H_TOKENS:
            flags.append(_H_TOKENS[s[i]])
        elif s[i] == " ":
            flags.append(0)
        else:
            return None
    return tuple(flags)


def _positional(text: str, w: int, h: int):
    """Fallback reading by character positions, where a space may stand for "no line": the last ``h+1`` dot rows
    (``+`` at even columns, same indent, one line apart) and the edge lines between them (``|`` at even columns;
    odd columns are cell contents and ignored). One pass over the lines; ``None`` when no such drawing exists."""
    lines = text.splitlines()
    need = 2 * h + 1
    for end in range(len(lines) - 1, need - 2, -1):
        first = lines[end]
        indent = len(first) - len(first.lstrip(" "))
        if _dot_row(first, w) is None:
            continue
        start = end - need + 1
        hs, vs = [], []
        for k in range(need):
            ln = lines[start + k]
            if k % 2 == 0:
                row = _dot_row(ln, w)
                if row is None:
                    return None
                hs.append(row)
            else:
                s = ln[indent:].rstrip() if not ln[:indent].strip() else None
                if s is None or len(s) > 2 * w + 1:
                    return None
                s = s.ljust(2 * w + 1)
                flags = []
                for i in range(0, 2 * w + 1, 2):
                    if s[i] in _V_TOKENS:
                        flags.append(_V_TOKENS[s[i]])
                    elif s[i] == " ":
                        flags.append(0)
                    else:
                        return None
                vs.append(tuple(flags))
        return (tuple(hs), tuple(vs))
    return None


def _format(sol) -> str:
    H, V = sol
    lines = []
    for r in range(len(H)):
        lines.append("+" + "+".join(_H_ON if x else _OFF for x in H[r]) + "+")
        if r < len(V):
            lines.append(" ".join(_V_ON if x else _OFF for x in V[r]))
    return "\n".join(lines)


def _shape_ok(sol, w: int, h: int) -> bool:
    try:
        H, V = sol
    except (TypeError, ValueError):
        return False
    if len(H) != h + 1 or len(V) != h:
        return False
    if any(len(row) != w for row in H) or any(len(row) != w + 1 for row in V):
        return False
    return all(x in (0, 1) for row in H for x in row) and all(x in (0, 1) for row in V for x in row)


def _degrees(H, V, w, h):
    deg = [[0] * (w + 1) for _ in range(h + 1)]
    for r in range(h + 1):
        for c in range(w):
            if H[r][c]:
                deg[r][c] += 1
                deg[r][c + 1] += 1
    for r in range(h):
        for c in range(w + 1):
            if V[r][c]:
                deg[r][c] += 1
                deg[r + 1][c] += 1
    return deg


PUZZLE = register_puzzle(Loopy())
