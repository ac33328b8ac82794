"""Filling (Fillomino): fill the grid with numbers so that every region of equal numbers has that many cells.

Rules (the collection's ``filling.c``): write a number in every empty cell of the ``w x h`` grid (given numbers
stay). Call a *region* a maximal orthogonally connected group of cells holding the same number; every region must
contain exactly as many cells as the number written in it (so two different regions of the same size never share
an edge). Numbers range over ``1..N`` with ``N = min(9, max(w, h, 3))``, the largest region the collection's
generator makes and its input accepts.

Game IDs: params ``WxH`` (no difficulty: full and short forms coincide); desc: row-major cells, a digit is a given
number (``0`` = empty), a letter ``a``-``z`` a run of 1-26 empty cells (``4x4:c3a4441b4c2``). SOLVE move: ``s``
then ``w*h`` digits, row-major.

Answer: one row per line, one digit per cell. Solution value: tuple of row tuples of ints.

Claims: ``value`` claims "(r,c) is 4" (given numbers are ``value`` claims too, :meth:`given_claims`). C* = one
``value`` claim per empty cell (as solo), stating its number.

Constraint view: variables are the 1-based cells (domain ``1..N``; given cells ``(v,)``); one unit per cell, "the
region of (r,c)": its variables are the cells within Manhattan distance ``N`` of (r,c), and it allows an assignment
iff the region of (r,c) in it has exactly as many cells as (r,c)'s number. A region of size ``k <= N`` lies within
distance ``k - 1`` of each of its cells and its border within ``k``, so the unit decides the rule exactly; all units
together are exactly the rules (no global rule is left over). Premises: the given number of the cell, if any.

LEVELS (reasonshape choice, the data README's proposal; the collection has no difficulty grades for Filling, so
difficulty is grid size with a minimal set of given numbers): trivial ``2x3``, easy ``4x4``, normal ``5x5``, hard
``7x7``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

from ortools.sat.python import cp_model

from reasonshape.envs._solver import lazy_enumerate, new_solver
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
    parse_wxh,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["FillingParams", "FillingPuzzle", "PUZZLE", "max_number"]


@dataclass(frozen=True)
class FillingParams:
    """Filling params: grid width ``w`` (columns) and height ``h`` (rows), both >= 1."""

    w: int
    h: int


def max_number(params: FillingParams) -> int:
    """The largest number a cell may hold: ``N = min(9, max(w, h, 3))`` (``filling.c``'s ``maxsize``: the largest
    region its generator makes; its desc and input accept one digit up to ``max(w, h, 3)``).

    Returns
    -------
    int
        ``N`` in ``3..9``.
    """
    return min(9, max(params.w, params.h, 3))


def _nbrs(i: int, w: int, h: int):
    r, c = divmod(i, w)
    if r > 0:
        yield i - w
    if r + 1 < h:
        yield i + w
    if c > 0:
        yield i - 1
    if c + 1 < w:
        yield i + 1


def _regions(flat, w: int, h: int) -> list[list[int]]:
    """Maximal connected groups of equal numbers (flat 0-based indices)."""
    seen = [False] * (w * h)
    out = []
    for s in range(w * h):
        if seen[s]:
            continue
        seen[s] = True
        comp, stack = [s], [s]
        while stack:
            i = stack.pop()
            for j in _nbrs(i, w, h):
                if not seen[j] and flat[j] == flat[s]:
                    seen[j] = True
                    comp.append(j)
                    stack.append(j)
        out.append(comp)
    return out


def encode_filling_desc(clues, w: int, h: int) -> str:
    """The collection's desc for a grid of given numbers, as ``filling.c``'s ``new_game_desc`` writes it.

    Parameters
    ----------
    clues : sequence of sequences of int, shape (h, w)
        Given number per cell (1-9), 0 = empty.
    w, h : int
        Grid width (columns) and height (rows).

    Returns
    -------
    str
        One digit per given, ``a``-``z`` for runs of 1-26 empty cells (``z`` repeated for longer runs).
    """
    out, run = [], 0
    for row in clues:
        for v in row:
            if v == 0:
                run += 1
                continue
            while run > 26:
                out.append("z")
                run -= 26
            if run:
                out.append(chr(ord("a") - 1 + run))
            run = 0
            out.append(str(v))
    while run > 26:
        out.append("z")
        run -= 26
    if run:
        out.append(chr(ord("a") - 1 + run))
    return "".join(out)


class FillingPuzzle(Puzzle):
    """Filling (Fillomino) on the :class:`~reasonshape.envs.base.Puzzle` protocol. See the module docstring."""

    name: ClassVar[str] = "filling"
    LEVELS: ClassVar[dict[str, str]] = {"trivial": "2x3", "easy": "4x4", "normal": "5x5", "hard": "7x7"}
    ANSWER_SYMBOLS: ClassVar[dict[str, str]] = {str(d): f"the cell holds the number {d}" for d in range(1, 10)}
    CLAIM_KINDS: ClassVar[tuple[str, ...]] = ("value",)
    VALUE_WORDS: ClassVar[dict[str, Hashable]] = {
        w: i for i, w in enumerate(("one", "two", "three", "four", "five", "six", "seven", "eight", "nine"), 1)}

    # ----------------------------------------------------------------- params and game IDs
    def parse_params(self, text: str) -> FillingParams:
        """Parse ``WxH`` (or ``N`` for ``NxN``). Raises :class:`GameIdError` with the position of the problem."""
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '5x5'")
        w, h, end = parse_wxh(text)
        if end != len(text):
            raise GameIdError(text, end, "end of params after WxH (Filling has no other params)")
        return FillingParams(w, h)

    def format_params(self, params: FillingParams, full: bool = True) -> str:
        """``"WxH"`` for both forms (``filling.c`` ``encode_params``)."""
        return f"{params.w}x{params.h}"

    def parse_desc(self, params: FillingParams, desc: str) -> Instance:
        """Parse as ``filling.c``'s ``validate_desc``/``new_game``; ``Instance.data`` = grid of givens (0 = empty).

        Raises
        ------
        GameIdError
            A character other than a-z or a digit ``0..max(w,h,3)`` (capped at 9), or too little / too much data.
        """
        w, h = params.w, params.h
        sz, top = w * h, min(9, max(w, h, 3))
        cells: list[int] = []
        for i, ch in enumerate(desc):
            if "a" <= ch <= "z":
                cells.extend([0] * (ord(ch) - ord("a") + 1))
            elif "0" <= ch <= "9" and int(ch) <= top:
                cells.append(int(ch))
            else:
                raise GameIdError(desc, i, f"a letter a-z (run of empty cells) or a digit 0-{top}")
            if len(cells) > sz:
                raise GameIdError(desc, i, f"no more data: the grid has only {sz} cells")
        if len(cells) < sz:
            raise GameIdError(desc, len(desc), f"more data: {len(cells)} of {sz} cells described")
        clues = tuple(tuple(cells[r * w:(r + 1) * w]) for r in range(h))
        return Instance(self.name, params, desc, clues)

    # ----------------------------------------------------------------- generation
    def _generate(self, params: FillingParams, rng: random.Random) -> Instance:
        """Native generator: a random valid filled board (regions grown at random, then same-size neighbours merged,
        region sizes <= N), then givens removed in random order while CP-SAT proves uniqueness (reasonshape's own,
        after ``filling.c``'s ``make_board`` + ``minimize_clue_set`` design)."""
        w, h = params.w, params.h
        nmax = max_number(params)
        for _attempt in range(100):
            board = _random_board(w, h, nmax, rng)
            if board is None:
                continue
            clues = _minimise_givens(board, w, h, nmax, rng)
            if clues is None:
                continue
            grid = tuple(tuple(clues[r * w:(r + 1) * w]) for r in range(h))
            return Instance(self.name, params, encode_filling_desc(grid, w, h), grid)
        raise GenerationError(f"filling: no unique {w}x{h} instance after 100 attempts")

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid (givens in place, ``.`` for an empty cell), the answer format."""
        p = instance.params
        n = max_number(p)
        rows = "\n".join(" ".join(str(v) if v else "." for v in row) for row in instance.data)
        example = "\n".join(" ".join("1" for _ in range(p.w)) for _ in range(p.h))
        return (
            f"Filling puzzle ({p.h} rows x {p.w} columns).\n\n"
            f"Rules: write a number from 1 to {n} in every empty cell; the given numbers stay as they are. "
            "A region is a largest group of cells holding the same number that are connected through shared "
            "edges (up, down, left, right). Every region must contain exactly as many cells as the number written "
            "in it: a 1 is alone, a 2 pairs with exactly one neighbouring 2, a 3 forms a group of three 3s, and so "
            "on. Consequently two different regions of the same size may not touch along an edge.\n\n"
            "Coordinates are (row, column), 1-based, rows numbered top to bottom and columns left to right.\n\n"
            f"Grid ('.' = empty cell):\n{rows}\n\n"
            "Answer format: the full grid with every cell filled (given numbers included), one row per line, top "
            "row first, numbers separated by spaces. Put the final answer inside <answer>...</answer>, for example "
            f"(shape only):\n<answer>\n{example}\n</answer>"
        )

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``h x w`` digit grid from the last answer block (or the last digit grid in the text).

        Raises
        ------
        AnswerParseError
            No answer block and no grid-shaped block, wrong size, a symbol that is not a digit ``1..N``.
        """
        p = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, digits_symbols(max_number(p)), single_chars=True)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """Digits separated by spaces, one row per line."""
        return format_grid(solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: ``shape``, ``bad_value`` (not an int in 1..N), ``given_changed``, ``region_too_big``,
        ``region_too_small`` (cells of the offending region). O(w*h)."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, clues = instance.params, instance.data
        w, h, n = p.w, p.h, max_number(p)
        if not (isinstance(grid, (tuple, list)) and len(grid) == h and all(
                isinstance(row, (tuple, list)) and len(row) == w for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be {h} rows of {w} numbers"),))
        out = []
        for r in range(h):
            for c in range(w):
                v = grid[r][c]
                if not (isinstance(v, int) and 1 <= v <= n):
                    out.append(Violation("bad_value", f"({r + 1},{c + 1}) holds {v!r}, not a number 1-{n}",
                                         ((r + 1, c + 1),)))
                elif clues[r][c] and v != clues[r][c]:
                    out.append(Violation("given_changed", f"({r + 1},{c + 1}) must keep the given {clues[r][c]}",
                                         ((r + 1, c + 1),)))
        if any(v.rule == "bad_value" for v in out):
            return CheckResult(False, tuple(out))
        flat = [grid[r][c] for r in range(h) for c in range(w)]
        for comp in _regions(flat, w, h):
            k = flat[comp[0]]
            if len(comp) != k:
                rule = "region_too_big" if len(comp) > k else "region_too_small"
                cells = tuple(sorted((i // w + 1, i % w + 1) for i in comp))
                out.append(Violation(rule, f"a region of {k}s has {len(comp)} cells: {cells[:8]}", cells))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        """CP-SAT: one-hot number per cell, local implied constraints, region sizes by exact lazy cuts."""
        p = instance.params
        w, h, n = p.w, p.h, max_number(p)
        flat_clues = [v for row in instance.data for v in row]
        model = cp_model.CpModel()
        x, is_k = _cell_vars(model, w, h, n)
        for i, v in enumerate(flat_clues):
            if v:
                model.Add(x[i] == v)
        cut = _region_cut(is_k, w, h)
        sols, exhausted = lazy_enumerate(model, x, max_solutions, cut)
        return SolveResult(tuple(tuple(tuple(s[r * w:(r + 1) * w]) for r in range(h)) for s in sols), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> Any:
        """``s`` followed by exactly ``w*h`` digits ``1``-``9``, row-major (``filling.c`` ``solve_game``).

        Raises
        ------
        ConfigError
            Anything else (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p = instance.params
        if not (isinstance(move, str) and re.fullmatch(f"s[1-9]{{{p.w * p.h}}}", move)):
            raise bad_solve_move(self.name, move, f"it must be 's' and {p.w * p.h} digits 1-9")
        return tuple(tuple(int(d) for d in move[1 + r * p.w:1 + (r + 1) * p.w]) for r in range(p.h))

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Whether the cell holds the claimed number.

        Raises
        ------
        ClaimError
            Another kind, not one cell, a cell off the grid, or a value that is not an integer ``1..N`` (``N`` =
            :func:`max_number`; ``"3"``, ``99``), for either polarity.
        """
        if claim.kind != "value":
            raise ClaimError(f"filling: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        if len(claim.cells) != 1:
            raise ClaimError(f"filling: a value claim is about one cell, got {claim.cells}")
        r, c = claim.cells[0]
        self._check_cell(instance, (r, c), instance.params.h, instance.params.w)
        self._claim_number(claim, 1, max_number(instance.params), "a number")
        truth = solution[r - 1][c - 1] == claim.value
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per empty cell."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), sol[r][c]) for r, row in enumerate(instance.data)
                         for c, v in enumerate(row) if not v)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One value claim per given number, row-major."""
        return tuple(Claim("value", ((r + 1, c + 1),), v) for r, row in enumerate(instance.data)
                     for c, v in enumerate(row) if v)

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """1-based cell -> ``(1..N)``; given cells -> ``(v,)``."""
        n = max_number(instance.params)
        return {(r + 1, c + 1): ((v,) if v else tuple(range(1, n + 1))) for r, row in enumerate(instance.data)
                for c, v in enumerate(row)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """One "region of (r,c)" unit per cell over the cells within distance N (see the module docstring)."""
        p = instance.params
        w, h, n = p.w, p.h, max_number(p)
        out = []
        for r in range(h):
            for c in range(w):
                cells = [(rr, cc) for rr in range(h) for cc in range(w) if abs(rr - r) + abs(cc - c) <= n]
                cells.sort(key=lambda rc: (abs(rc[0] - r) + abs(rc[1] - c), rc))  # (r,c) first
                v = instance.data[r][c]
                prem = (Claim("value", ((r + 1, c + 1),), v),) if v else ()
                out.append(Unit(f"the region of ({r + 1},{c + 1})", tuple((a + 1, b + 1) for a, b in cells),
                                _RegionAllowed(cells), prem))
        return tuple(out)


class _RegionAllowed:
    """``allowed`` of a region unit: BFS from the first cell through equal numbers; size must equal the number."""

    def __init__(self, cells):
        self.index = {cell: i for i, cell in enumerate(cells)}
        self.cells = cells

    def __call__(self, values: tuple) -> bool:
        k = values[0]
        seen = {self.cells[0]}
        stack = [self.cells[0]]
        while stack:
            r, c = stack.pop()
            for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                j = self.index.get(nb)
                if j is not None and nb not in seen and values[j] == k:
                    seen.add(nb)
                    if len(seen) > k:
                        return False
                    stack.append(nb)
        return len(seen) == k


def _cell_vars(model, w: int, h: int, n: int):
    """Integer number per cell plus one-hot Booleans, with exact local consequences of the region rule:
    a 1 has no neighbouring 1; a k >= 2 has a neighbouring k; a 2 has exactly one neighbouring 2."""
    x = [model.NewIntVar(1, n, f"x{i}") for i in range(w * h)]
    is_k = [[None] * (n + 1) for _ in range(w * h)]
    for i in range(w * h):
        for k in range(1, n + 1):
            b = model.NewBoolVar("")
            model.Add(x[i] == k).OnlyEnforceIf(b)
            model.Add(x[i] != k).OnlyEnforceIf(b.Not())
            is_k[i][k] = b
        model.AddExactlyOne(is_k[i][1:])
    for i in range(w * h):
        nb = list(_nbrs(i, w, h))
        for j in nb:
            if j > i:
                model.AddBoolOr([is_k[i][1].Not(), is_k[j][1].Not()])
        for k in range(2, n + 1):
            if nb:
                model.AddBoolOr([is_k[i][k].Not()] + [is_k[j][k] for j in nb])
            else:
                model.Add(is_k[i][k] == 0)
        if n >= 2 and nb:
            model.Add(sum(is_k[j][2] for j in nb) == 1).OnlyEnforceIf(is_k[i][2])
    # The lazy "region too small" cut written out in advance for every connected pair and triple of cells (the
    # small closed regions the lazy loop otherwise meets most often): for k above the set's size, not all of the
    # set is k while none of its border is.
    for group in _small_groups(w, h):
        inside = set(group)
        border = {j for i in group for j in _nbrs(i, w, h) if j not in inside}
        for k in range(len(group) + 1, n + 1):
            model.AddBoolOr([is_k[i][k].Not() for i in group] + [is_k[j][k] for j in border])
    return x, is_k


def _small_groups(w: int, h: int) -> list[tuple[int, ...]]:
    """All connected sets of two or three cells (flat indices, sorted), each once."""
    out = set()
    for i in range(w * h):
        for j in _nbrs(i, w, h):
            out.add(tuple(sorted((i, j))))
            for k in list(_nbrs(i, w, h)) + list(_nbrs(j, w, h)):
                if k not in (i, j):
                    out.add(tuple(sorted((i, j, k))))
    return sorted(out)


def _region_cut(is_k, w: int, h: int):
    """Lazy cuts for the region rule, exact: a region of k's with more than k cells yields "not all of these k+1
    connected cells are k"; a region with fewer than k cells yields "some cell of it is not k, or some cell on its
    border is k"."""

    def cut(values):
        builders = []
        for comp in _regions(values, w, h):
            k = values[comp[0]]
            if len(comp) > k:
                inside = set(comp)
                sub, stack, seen = [], [comp[0]], {comp[0]}
                while stack and len(sub) < k + 1:
                    i = stack.pop(0)
                    sub.append(i)
                    for j in _nbrs(i, w, h):
                        if j in inside and j not in seen:
                            seen.add(j)
                            stack.append(j)
                lits = [is_k[i][k].Not() for i in sub]
                builders.append(lambda m, lits=lits: m.AddBoolOr(lits))
            elif len(comp) < k:
                inside = set(comp)
                border = {j for i in comp for j in _nbrs(i, w, h) if j not in inside}
                lits = [is_k[i][k].Not() for i in comp] + [is_k[j][k] for j in border]
                builders.append(lambda m, lits=lits: m.AddBoolOr(lits))
        return builders

    return cut


def _random_board(w: int, h: int, nmax: int, rng: random.Random):
    """A random valid filled board (flat list) or None: grow regions of random target sizes over unassigned
    cells, then merge any two touching regions of equal size while the merged size stays <= nmax."""
    sz = w * h
    owner = [-1] * sz
    regions: list[list[int]] = []
    order = list(range(sz))
    rng.shuffle(order)
    for s in order:
        if owner[s] >= 0:
            continue
        target = rng.randint(1, nmax)
        rid = len(regions)
        owner[s] = rid
        cells, frontier = [s], [j for j in _nbrs(s, w, h) if owner[j] < 0]
        while len(cells) < target and frontier:
            j = frontier.pop(rng.randrange(len(frontier)))
            if owner[j] >= 0:
                continue
            owner[j] = rid
            cells.append(j)
            frontier.extend(x for x in _nbrs(j, w, h) if owner[x] < 0)
        regions.append(cells)
    for _ in range(4 * sz):
        sizes = [len(cells) for cells in regions]
        clash = None
        idx = list(range(sz))
        rng.shuffle(idx)
        for i in idx:
            for j in _nbrs(i, w, h):
                a, b = owner[i], owner[j]
                if a != b and sizes[a] == sizes[b]:
                    clash = (a, b)
                    break
            if clash:
                break
        if clash is None:
            board = [len(regions[owner[i]]) for i in range(sz)]
            return board
        a, b = clash
        if sizes[a] + sizes[b] > nmax:
            # merge a smaller neighbour of a into a instead, if that fits; else give up on this board
            options = sorted({owner[j] for i in regions[a] for j in _nbrs(i, w, h) if owner[j] != a},
                             key=lambda o: (sizes[o], o))
            b = next((o for o in options if sizes[a] + sizes[o] <= nmax and o != clash[1]), None)
            if b is None:
                return None
        for i in regions[b]:
            owner[i] = a
        regions[a] = regions[a] + regions[b]
        regions[b] = []
        # compact region ids
        keep = [cells for cells in regions if cells]
        regions = keep
        for rid, cells in enumerate(regions):
            for i in cells:
                owner[i] = rid
    return None


def _minimise_givens(board, w: int, h: int, n: int, rng: random.Random, time_limit_s: float = 10.0):
    """Remove givens from the full ``board`` in random order while it stays the only solution (one CP-SAT model,
    one assumption literal per given, "differs from board" as a constraint, exact lazy region cuts)."""
    model = cp_model.CpModel()
    x, is_k = _cell_vars(model, w, h, n)
    lits = [model.NewBoolVar("") for _ in range(w * h)]
    for i in range(w * h):
        model.AddImplication(lits[i], is_k[i][board[i]])
    model.AddBoolOr([is_k[i][board[i]].Not() for i in range(w * h)])
    solver = new_solver(time_limit_s)
    solver.parameters.cp_model_presolve = False  # many tiny solves: presolve costs more than it saves
    # measured on 7x7 generation: LP relaxation, probing and symmetry detection cost more than they prune here
    solver.parameters.linearization_level = 0
    solver.parameters.cp_model_probing_level = 0
    solver.parameters.symmetry_level = 0
    cut = _region_cut(is_k, w, h)
    kept = set(range(w * h))
    order = list(range(w * h))
    rng.shuffle(order)
    for i in order:
        kept.discard(i)
        res = _other_exists(model, solver, x, [lits[j] for j in sorted(kept)], cut)
        if res is None:
            return None
        if res:
            kept.add(i)
    return [board[i] if i in kept else 0 for i in range(w * h)]


def _other_exists(model, solver, x, assumptions, cut) -> bool | None:
    while True:
        model.ClearAssumptions()
        model.AddAssumptions(assumptions)
        status = solver.Solve(model)
        if status == cp_model.INFEASIBLE:
            return False
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        values = [int(solver.Value(v)) for v in x]
        builders = cut(values)
        if not builders:
            return True
        for add in builders:
            add(model)


PUZZLE = register_puzzle(FillingPuzzle())
