"""Tents: pair every tree with a tent next to it, tents never touching, row and column tent counts given.

Rules (Simon Tatham's Portable Puzzle Collection, ``tents.c``): place tents in empty cells so that the tents can be
matched one-to-one with the trees, each tent orthogonally adjacent to its own tree; no two tents are adjacent, even
diagonally; the number beside each row and column is the number of tents in it.

Game IDs
--------
``params`` is ``<w>x<h>`` (short) or ``<w>x<h>d<diff>`` (full), ``diff`` ``e`` (Easy) or ``t`` (Tricky); ``w, h >= 4``
(``<n>`` alone means ``n x n``). ``desc`` (``tents.c`` ``validate_desc`` / ``new_game_desc``): the trees in row-major
order, each written as the number ``j`` of empty cells before it (``_`` for ``j = 0``, ``a``..``y`` for ``j = 1..25``;
``z`` stands for 25 empty cells without a tree), closed by one such character for the virtual tree at the end of the
grid; then ``w + h`` numbers each after a ``,``: the tent counts of columns 1..w, then rows 1..h (an empty number
reads as 0). The collection also reads ``!``/``-`` markers for tents and non-tents placed by a player; they are
not part of a puzzle and are rejected here. The collection's ``SOLVE`` move is ``S`` followed by ``;T<x>,<y>`` per
tent (0-based column, row; ``execute_move`` also knows ``N``/``B``).

Answer and claims
-----------------
The answer is the full grid, one row per line: ``T`` tent, ``.`` no tent (grass), ``Y`` tree (copied from the
puzzle). A solution is a tuple of ``h`` tuples of ``w`` of those one-letter strings. Claim kinds:

* ``"value"``: ``Claim("value", ((r, c),), v)``, ``v`` in ``T`` / ``.`` / ``Y``: "(r,c) is a tent", "(r,c) is grass",
  "(r,c) is a tree" (tree claims are static givens);
* ``"row_count"`` ``Claim("row_count", ((r, 1),), n)`` "row r has n tents" and ``"column_count"``
  ``Claim("column_count", ((1, c),), n)`` "column c has n tents" (the anchor cell names the line; static givens).

C* (paper A §C, its own tents example): one claim per tent, ``{(r,c) is a tent}``. Given claims: one tree claim
per tree and the ``w + h`` count claims.

Constraint view
---------------
Variables: every non-tree cell (1-based), domain ``("T", ".")``. Units: ``row r`` / ``column c`` (exactly ``n`` tents;
premise the count claim), ``the tree at (r,c)`` (at least one tent among its orthogonal non-tree neighbours;
premise the tree claim), ``the 2x2 block at (r,c)`` (at most one tent among the non-tree cells of the block whose
top-left cell is (r,c): this is exactly "no two tents touch"), and ``no tree next to (r,c)`` (a cell with no
orthogonal tree holds no tent). Global rule, not a unit: the one-to-one tent-tree matching (checked by the
solver with explicit pairing variables and by :meth:`Tents.check` with an augmenting-path matching).

Levels
------
=======  ========  =================================================
level    params    native generator
=======  ========  =================================================
trivial  4x4de     3 trees (w*h/5, as ``tents.c``)
easy     6x6de     7 trees
normal   8x8dt     12 trees
hard     10x10dt   20 trees
=======  ========  =================================================

Difficulty comes from the grid size (the tree density is the collection's ``w*h/5``; all counts are always given).
The native generator does not grade ``e`` against ``t`` by human techniques (it requires a unique solution only);
the ``sgt`` backend gives the collection's graded puzzles. Source: reasonshape choice after paper A §A.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_bipartite_matching

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
    ascii_lower,
    bad_solve_move,
    digits_end,
    mask_long_numbers,
    parse_wxh,
    solve_move_cells,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["TentsParams", "TentsData", "Tents", "PUZZLE", "TENT", "GRASS", "TREE"]

TENT, GRASS, TREE = "T", ".", "Y"
_SYMBOLS = {TENT: TENT, GRASS: GRASS, TREE: TREE}
_ORTH = ((-1, 0), (1, 0), (0, -1), (0, 1))


@dataclass(frozen=True)
class TentsParams:
    """Tents params: width ``w`` and height ``h`` (>= 4), difficulty letter ``e`` (Easy) or ``t`` (Tricky)."""

    w: int
    h: int
    diff: str = "e"


@dataclass(frozen=True)
class TentsData:
    """A parsed tents desc: ``trees`` (``h`` rows of ``w`` bools), ``col_counts`` (``w``), ``row_counts`` (``h``)."""

    trees: tuple[tuple[bool, ...], ...]
    col_counts: tuple[int, ...]
    row_counts: tuple[int, ...]


def _encode_desc(trees, col_counts, row_counts) -> str:
    """The desc exactly as ``tents.c`` ``new_game_desc`` writes it."""
    flat = [t for row in trees for t in row]
    out, j = [], 0
    for i in range(len(flat) + 1):
        if i == len(flat) or flat[i]:
            out.append("_" if j == 0 else chr(ord("a") + j - 1))
            j = 0
        else:
            j += 1
            while j > 25:
                out.append("z")
                j -= 25
    out.extend(f",{n}" for n in (*col_counts, *row_counts))
    return "".join(out)


def _neighbours(r: int, c: int, h: int, w: int):
    for dr, dc in _ORTH:
        rr, cc = r + dr, c + dc
        if 0 <= rr < h and 0 <= cc < w:
            yield rr, cc


def _max_matching(left: list, adj: dict) -> dict:
    """A maximum bipartite matching between ``left`` and the right vertices that ``adj[u]`` lists for each ``u``:
    ``{right: left}``. SciPy's ``maximum_bipartite_matching`` (Hopcroft–Karp) on the biadjacency matrix: ~80 µs on
    a hard instance's few dozen tents, where building a networkx graph alone would exceed :meth:`Tents.check`'s 1 ms
    budget. A greedy pass comes first: when it pairs every left vertex the matching is maximum (no matching is larger
    than ``left``), which is the case for most answers (each tent beside a tree of its own), in ~10 µs."""
    greedy: dict = {}
    for u in left:
        v = next((v for v in adj.get(u, ()) if v not in greedy), None)
        if v is None:
            break
        greedy[v] = u
    else:
        return greedy
    right = sorted({v for u in left for v in adj.get(u, ())})
    if not left or not right:
        return {}
    col = {v: j for j, v in enumerate(right)}
    rows = [i for i, u in enumerate(left) for _ in adj.get(u, ())]
    cols = [col[v] for u in left for v in adj.get(u, ())]
    graph = csr_array((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(len(left), len(right)))
    # perm_type="column": entry i is the column (right vertex) matched to row i, or -1
    matched = maximum_bipartite_matching(graph, perm_type="column")
    return {right[j]: left[i] for i, j in enumerate(matched.tolist()) if j >= 0}


class Tents(Puzzle):
    """Tents, see the module docstring for rules, formats, claims, C* and levels."""

    name = "tents"
    LEVELS = {"trivial": "4x4de", "easy": "6x6de", "normal": "8x8dt", "hard": "10x10dt"}
    ANSWER_SYMBOLS = {TENT: "a tent", GRASS: "no tent (an empty grass cell)", TREE: "a tree (copy it from the puzzle)"}
    CLAIM_KINDS = ("value", "row_count", "column_count")
    VALUE_WORDS: dict[str, Hashable] = {
        "tent": TENT, "a tent": TENT, "t": TENT, "grass": GRASS, "empty": GRASS, "no tent": GRASS, ".": GRASS,
        "tree": TREE, "a tree": TREE, "y": TREE,
    }

    # ------------------------------------------------------------------ params
    def parse_params(self, text: str) -> TentsParams:
        """Parse ``"8x8"``, ``"8x8dt"`` or ``"8"`` (``tents.c`` ``decode_params`` + ``validate_params``).

        Raises
        ------
        GameIdError
            Missing size, a side outside 4..99, an unknown difficulty letter, or trailing characters.
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '8x8dt'")
        w, h, i = parse_wxh(text, min_side=4)
        n = len(text)
        diff = "e"
        if i < n:
            if text[i] != "d":
                raise GameIdError(text, i, "'d' and a difficulty letter, or the end of the params")
            if i + 1 >= n or text[i + 1] not in "et":
                raise GameIdError(text, i + 1, "a difficulty letter: e (easy) or t (tricky)")
            diff = text[i + 1]
            if i + 2 != n:
                raise GameIdError(text, i + 2, "the end of the params")
        return TentsParams(w, h, diff)

    def format_params(self, params: TentsParams, full: bool = True) -> str:
        """``"8x8dt"`` (full) or ``"8x8"`` (short), as ``tents.c`` ``encode_params``."""
        base = f"{params.w}x{params.h}"
        return f"{base}d{params.diff}" if full else base

    # ------------------------------------------------------------------ desc
    def parse_desc(self, params: TentsParams, desc: str) -> Instance:
        """Parse a tents desc (grammar in the module docstring), validating as ``tents.c`` ``validate_desc``.

        Raises
        ------
        GameIdError
            Naming the 0-based position in ``desc``: a bad character, tree data that does not cover exactly
            ``w*h + 1`` cells, a missing or malformed count, or extra data.
        """
        w, h = params.w, params.h
        area, n, p = w * h, len(desc), 0
        trees = [False] * area
        i = 0
        while p < n and desc[p] != ",":
            ch = desc[p]
            if ch == "_":
                run, tree = 0, True
            elif "a" <= ch < "z":
                run, tree = ord(ch) - ord("a") + 1, True
            elif ch == "z":
                run, tree = 25, False
            elif ch in "!-":
                raise GameIdError(desc, p, "a tree-run letter a-z or '_' (player tent markers '!'/'-' are not part "
                                           "of a puzzle)")
            else:
                raise GameIdError(desc, p, "a tree-run letter a-z, '_' or ','")
            i += run
            if i > area or (i == area and not tree):
                raise GameIdError(desc, p, f"less tree data (it runs past the {w}x{h} grid)")
            if i == area:
                p += 1
                break
            if tree:
                trees[i] = True
                i += 1
            p += 1
        else:
            raise GameIdError(desc, p, f"more tree data ({i} of {area} cells and the end marker covered)")
        counts = []
        for k in range(w + h):
            if p >= n:
                raise GameIdError(desc, p, f"',' and count {k + 1} of {w + h} (column counts, then row counts)")
            if desc[p] != ",":
                raise GameIdError(desc, p, "',' before the next count" if k else
                                  f"',' after the tree data (it already covers the {w}x{h} grid)")
            q = digits_end(desc, p + 1)
            counts.append(int(desc[p + 1:q]) if q > p + 1 else 0)
            p = q
        if p < n:
            raise GameIdError(desc, p, "the end of the desc")
        data = TentsData(tuple(tuple(trees[r * w:(r + 1) * w]) for r in range(h)), tuple(counts[:w]),
                         tuple(counts[w:]))
        return Instance(self.name, params, desc, data)

    # ------------------------------------------------------------------ generation
    def _generate(self, params: TentsParams, rng: random.Random) -> Instance:
        """``tents.c``'s construction: ``w*h/5`` non-touching tents at random, one tree per tent on a random free
        orthogonal neighbour, every row and column non-empty, counts from the tents; retried until the CP-SAT
        solver proves the solution unique."""
        w, h = params.w, params.h
        ntrees = w * h // 5
        for _ in range(2000):
            tents = self._place_tents(w, h, ntrees, rng)
            if tents is None:
                continue
            trees = self._place_trees(w, h, tents, rng)
            if trees is None:
                continue
            occupied = tents | trees
            if any(all((r, c) not in occupied for c in range(w)) for r in range(h)) or \
                    any(all((r, c) not in occupied for r in range(h)) for c in range(w)):
                continue
            tree_grid = tuple(tuple((r, c) in trees for c in range(w)) for r in range(h))
            cols = tuple(sum((r, c) in tents for r in range(h)) for c in range(w))
            rows = tuple(sum((r, c) in tents for c in range(w)) for r in range(h))
            inst = self.parse_desc(params, _encode_desc(tree_grid, cols, rows))
            if self._solve(inst, 2).unique:
                return inst
        raise GenerationError(f"tents: no unique instance for {self.format_params(params)} in 2000 attempts")

    @staticmethod
    def _place_tents(w, h, k, rng):
        cells = [(r, c) for r in range(h) for c in range(w)]
        rng.shuffle(cells)
        tents: set = set()
        for r, c in cells:
            if len(tents) == k:
                break
            if all((r + dr, c + dc) not in tents for dr in (-1, 0, 1) for dc in (-1, 0, 1)):
                tents.add((r, c))
        return tents if len(tents) == k else None

    @staticmethod
    def _place_trees(w, h, tents, rng):
        trees: set = set()
        order = sorted(tents)
        rng.shuffle(order)
        for r, c in order:
            opts = [x for x in _neighbours(r, c, h, w) if x not in tents and x not in trees]
            if not opts:
                return None
            trees.add(rng.choice(opts))
        return trees

    # ------------------------------------------------------------------ text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the grid with trees and counts, and the answer format."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        width = max(len(str(w)), max(len(str(x)) for x in d.col_counts))

        def cell(x):
            return str(x).rjust(width)

        lines = ["    " + " ".join(cell(c + 1) for c in range(w)) + "   <- column numbers",
                 "   +" + "-" * ((width + 1) * w + 1) + "+"]
        for r in range(h):
            body = " ".join(cell(TREE if d.trees[r][c] else GRASS) for c in range(w))
            lines.append(f"{str(r + 1).rjust(2)} | {body} | {d.row_counts[r]}")
        lines.append("   +" + "-" * ((width + 1) * w + 1) + "+")
        lines.append("    " + " ".join(cell(x) for x in d.col_counts) + "   <- tents in each column")
        trees = [f"({r + 1},{c + 1})" for r in range(h) for c in range(w) if d.trees[r][c]]
        return "\n".join([
            f"Solve this Tents puzzle on a grid of {h} rows and {w} columns.",
            "",
            "Rules:",
            "1. Some cells hold trees (Y). Place tents in some of the other cells.",
            "2. Every tree has exactly one tent of its own in a cell directly above, below, left or right of it (not "
            "diagonally), and every tent belongs to exactly one such tree: tents and trees form pairs, so there are "
            "exactly as many tents as trees. A tent may touch several trees but is paired with only one.",
            "3. No two tents touch each other, not even diagonally.",
            "4. The number right of each row and below each column is how many tents that row or column contains.",
            "",
            "Coordinates are (row, column), 1-based: rows are numbered from the top (1) to the bottom "
            f"({h}), columns from the left (1) to the right ({w}).",
            "",
            "The grid (Y = tree, . = empty cell; row numbers on the left, tent counts of the rows on the right):",
            *lines,
            "",
            "Trees at: " + ", ".join(trees) + ".",
            "Tents per row, rows 1 to " + f"{h}: " + ", ".join(map(str, d.row_counts)) + ".",
            "Tents per column, columns 1 to " + f"{w}: " + ", ".join(map(str, d.col_counts)) + ".",
            "",
            f"Answer format: the complete grid, {h} lines (row 1 first), each with {w} symbols separated by spaces: "
            "T = a tent, . = no tent (grass), Y = a tree (copy the trees exactly where they are). Example of the "
            "layout for a 2x3 corner of a grid: \"Y T .\" then \". . .\".",
            "",
            "Put your final answer inside <answer>...</answer>, with nothing but the grid in the block.",
        ])

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``h x w`` grid of ``T`` / ``.`` / ``Y`` (case-insensitive) from the last ``<answer>`` block, or
        the last grid-shaped block.

        Raises
        ------
        AnswerParseError
            No answer block and no grid, wrong number of rows or cells, or an unknown symbol.
        """
        p = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, _SYMBOLS)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """Rows of ``T`` / ``.`` / ``Y`` separated by spaces (the inverse of :meth:`parse_answer`)."""
        return format_grid(solution)

    # ------------------------------------------------------------------ rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check a grid by the rules. Rule ids: ``shape``, ``bad_value``, ``tree_changed``, ``row_count``,
        ``column_count``, ``tents_touch``, ``tent_without_tree``, ``tree_matching`` (no one-to-one pairing of tents
        with orthogonally adjacent trees). O(w*h) plus the matching."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        try:
            grid = [list(row) for row in grid]
        except TypeError:
            grid = []
        if len(grid) != h or any(len(row) != w for row in grid):
            return CheckResult(False, (Violation("shape", f"expected {h} rows of {w} cells"),))
        out = []
        tents = []
        for r in range(h):
            for c in range(w):
                v = grid[r][c]
                if not isinstance(v, str) or v not in _SYMBOLS:
                    out.append(Violation("bad_value", f"({r + 1},{c + 1}) holds {v!r}, not T, . or Y",
                                         ((r + 1, c + 1),)))
                elif (v == TREE) != d.trees[r][c]:
                    what = "a tree" if d.trees[r][c] else "not a tree"
                    out.append(Violation("tree_changed", f"({r + 1},{c + 1}) is {what} in the puzzle, the answer "
                                                         f"has {v!r}", ((r + 1, c + 1),)))
                elif v == TENT:
                    tents.append((r, c))
        if any(v.rule == "bad_value" for v in out):
            return CheckResult(False, tuple(out))
        tent_set = set(tents)
        for r in range(h):
            n = sum((r, c) in tent_set for c in range(w))
            if n != d.row_counts[r]:
                out.append(Violation("row_count", f"row {r + 1} has {n} tents, the clue says {d.row_counts[r]}",
                                     tuple((r + 1, c + 1) for c in range(w))))
        for c in range(w):
            n = sum((r, c) in tent_set for r in range(h))
            if n != d.col_counts[c]:
                out.append(Violation("column_count", f"column {c + 1} has {n} tents, the clue says "
                                                     f"{d.col_counts[c]}", tuple((r + 1, c + 1) for r in range(h))))
        for r, c in tents:
            for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)):
                if (r + dr, c + dc) in tent_set:
                    a, b = (r + 1, c + 1), (r + dr + 1, c + dc + 1)
                    out.append(Violation("tents_touch", f"the tents at ({a[0]},{a[1]}) and ({b[0]},{b[1]}) touch",
                                         (a, b)))
        adj = {}
        for r, c in tents:
            adj[(r, c)] = [x for x in _neighbours(r, c, h, w) if d.trees[x[0]][x[1]]]
            if not adj[(r, c)]:
                out.append(Violation("tent_without_tree", f"the tent at ({r + 1},{c + 1}) has no tree directly "
                                                          "above, below, left or right of it", ((r + 1, c + 1),)))
        trees = [(r, c) for r in range(h) for c in range(w) if d.trees[r][c]]
        match = _max_matching(tents, adj)
        if len(match) < len(trees) or len(match) < len(tents):
            lone_trees = [t for t in trees if t not in match]
            lone_tents = [t for t in tents if t not in set(match.values())]
            out.append(Violation(
                "tree_matching",
                f"tents and trees cannot be paired one-to-one ({len(tents)} tents, {len(trees)} trees, at most "
                f"{len(match)} pairs)", tuple((r + 1, c + 1) for r, c in lone_trees + lone_tents)))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        w, h, d = instance.params.w, instance.params.h, instance.data
        m = new_model()
        x = {}
        for r in range(h):
            for c in range(w):
                if not d.trees[r][c]:
                    x[(r, c)] = m.NewBoolVar(f"t{r}_{c}")
        pair_of_tree: dict = {}
        pair_of_cell: dict = {cell: [] for cell in x}
        for r in range(h):
            for c in range(w):
                if d.trees[r][c]:
                    pairs = []
                    for nb in _neighbours(r, c, h, w):
                        if nb in x:
                            e = m.NewBoolVar("")
                            pairs.append(e)
                            pair_of_cell[nb].append(e)
                    pair_of_tree[(r, c)] = pairs
                    m.AddBoolOr(pairs)  # a tree without a free neighbour makes the model infeasible
                    m.AddAtMostOne(pairs)
        for cell, pairs in pair_of_cell.items():
            m.Add(sum(pairs) == x[cell])
        for r in range(h):
            m.Add(sum(x[(r, c)] for c in range(w) if (r, c) in x) == d.row_counts[r])
        for c in range(w):
            m.Add(sum(x[(r, c)] for r in range(h) if (r, c) in x) == d.col_counts[c])
        for r in range(h - 1):
            for c in range(w - 1):
                block = [x[q] for q in ((r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)) if q in x]
                if len(block) > 1:
                    m.AddAtMostOne(block)
        cells = sorted(x)
        sols, exhausted = enumerate_solutions(m, [x[q] for q in cells], max_solutions)
        out = []
        for s in sols:
            tents = {q for q, v in zip(cells, s, strict=True) if v}
            out.append(tuple(tuple(TREE if d.trees[r][c] else TENT if (r, c) in tents else GRASS for c in range(w))
                             for r in range(h)))
        return SolveResult(tuple(out), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> tuple[tuple[str, ...], ...]:
        """The collection's move string (``S;T<x>,<y>;...``, also ``N``/``B`` items, as ``tents.c``
        ``execute_move``) applied to the empty puzzle -> solution grid.

        Raises
        ------
        ConfigError
            Not ``S;`` and at least one item, a malformed item, a cell off the grid, or a move on a tree
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        w, h, d = instance.params.w, instance.params.h, instance.data
        grid = [[TREE if d.trees[r][c] else GRASS for c in range(w)] for r in range(h)]
        for letter, x, y, item in solve_move_cells(self.name, move, "TNB", w, h):
            if d.trees[y][x]:
                raise bad_solve_move(self.name, move, f"item {item!r} is on a tree")
            grid[y][x] = TENT if letter == "T" else GRASS
        return tuple(tuple(row) for row in grid)

    # ------------------------------------------------------------------ claims
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        w, h = instance.params.w, instance.params.h
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"tents: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        if len(claim.cells) != 1:
            raise ClaimError(f"tents: a {claim.kind} claim names exactly one cell, got {claim.cells}")
        self._check_cell(instance, claim.cells[0], h, w)
        if claim.kind == "value":
            if claim.value not in _SYMBOLS:
                raise ClaimError(f"tents: value claims take T, . or Y, got {claim.value!r}")
        else:
            self._claim_line(claim, h, w, row=claim.kind == "row_count")
            # a row holds w cells, a column h: no line holds more tents
            self._claim_number(claim, 0, w if claim.kind == "row_count" else h, "a count")

    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Value claims: the cell's symbol; count claims: the number of tents in that row or column. Raises
        :class:`ClaimError` for a claim outside the vocabulary, for either polarity: an unknown kind, not one cell,
        a cell off the grid, a value other than ``T . Y``, a count claim not anchored at column 1 / row 1 or whose
        count is not an integer ``0..w`` (rows) / ``0..h`` (columns)."""
        self._validate_claim(instance, claim)
        r, c = claim.cells[0]
        if claim.kind == "value":
            truth = solution[r - 1][c - 1] == claim.value
        elif claim.kind == "row_count":
            truth = sum(v == TENT for v in solution[r - 1]) == claim.value
        else:
            truth = sum(row[c - 1] == TENT for row in solution) == claim.value
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one "(r,c) is a tent" claim per tent."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), TENT) for r, row in enumerate(sol)
                         for c, v in enumerate(row) if v == TENT)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One tree claim per tree (row-major), then the row counts and the column counts."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        out = [Claim("value", ((r + 1, c + 1),), TREE) for r in range(h) for c in range(w) if d.trees[r][c]]
        out += [Claim("row_count", ((r + 1, 1),), n) for r, n in enumerate(d.row_counts)]
        out += [Claim("column_count", ((1, c + 1),), n) for c, n in enumerate(d.col_counts)]
        return tuple(out)

    _VALUE_TEXT = {TENT: "a tent", GRASS: "grass", TREE: "a tree"}

    def claim_text(self, claim: Claim) -> str:
        """``"(3,4) is a tent"``, ``"(3,4) is not grass"``, ``"(1,2) is a tree"``, ``"row 3 has 2 tents"``,
        ``"column 2 does not have 1 tent"``."""
        if claim.kind == "value":
            r, c = claim.cells[0]
            verb = "is" if claim.positive else "is not"
            return f"({r},{c}) {verb} {self._VALUE_TEXT.get(claim.value, claim.value)}"
        r, c = claim.cells[0]
        line = f"row {r}" if claim.kind == "row_count" else f"column {c}"
        verb = "has" if claim.positive else "does not have"
        return f"{line} {verb} {claim.value} tent{'' if claim.value == 1 else 's'}"

    _COUNT_RE = re.compile(r"\b(row|column) (\d+) (has|contains|does not have|doesn't have|does not contain) "
                           r"(\d+) tents?\b", re.IGNORECASE)

    _TREE_RE = re.compile(r"\((\d+),(\d+)\) (is not|isn't|is) (?:a )?tree\b", re.IGNORECASE)

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Read count claims, ``"row r has n tents"`` / ``"column c contains n tents"`` and their negations
        (``"does not have"``), and tree claims, ``"(r,c) is a tree"`` / ``"(r,c) is not a tree"``, as
        :meth:`claim_text` writes them (the generic "(r,c) is <word>" patterns read tent and grass claims through
        ``VALUE_WORDS``, but only for the variables, which tree cells are not). Linear time; cells and lines off
        the grid are skipped."""
        # A count claim names its line, a verb and "tent", a tree claim "tree" (in ``ascii_lower(text)`` wherever
        # the case-insensitive patterns match): without them a pattern cannot match, and most sentences skip both.
        low = ascii_lower(text)
        counts = ("tent" in low and ("row" in low or "column" in low)
                  and ("has" in low or "contain" in low or "have" in low))
        trees = "tree" in low
        if not (counts or trees):
            return []
        text = mask_long_numbers(text)
        w, h = instance.params.w, instance.params.h
        out = []
        for m in self._COUNT_RE.finditer(text) if counts else ():
            kind, k, verb, n = m[1].lower(), int(m[2]), m[3].lower(), int(m[4])
            if not 1 <= k <= (h if kind == "row" else w):
                continue
            claim = Claim("row_count", ((k, 1),), n) if kind == "row" else Claim("column_count", ((1, k),), n)
            out.append((claim if verb in ("has", "contains") else claim.negated(), m.start(), m.end()))
        for m in self._TREE_RE.finditer(text) if trees else ():
            r, c = int(m[1]), int(m[2])
            if 1 <= r <= h and 1 <= c <= w:
                out.append((Claim("value", ((r, c),), TREE, m[3].lower() == "is"), m.start(), m.end()))
        return out

    # ------------------------------------------------------------------ constraint view
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """Every non-tree cell (1-based) -> ``("T", ".")``."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        return {(r + 1, c + 1): (TENT, GRASS) for r in range(h) for c in range(w) if not d.trees[r][c]}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Row and column counts, tree neighbourhoods, 2x2 blocks and tree-less cells (module docstring)."""
        w, h, d = instance.params.w, instance.params.h, instance.data
        free = {(r, c) for r in range(h) for c in range(w) if not d.trees[r][c]}
        units = []
        for r in range(h):
            cells = tuple((r + 1, c + 1) for c in range(w) if (r, c) in free)
            if cells:
                units.append(Unit(f"row {r + 1}", cells, _TentCount(d.row_counts[r]),
                                  (Claim("row_count", ((r + 1, 1),), d.row_counts[r]),)))
        for c in range(w):
            cells = tuple((r + 1, c + 1) for r in range(h) if (r, c) in free)
            if cells:
                units.append(Unit(f"column {c + 1}", cells, _TentCount(d.col_counts[c]),
                                  (Claim("column_count", ((1, c + 1),), d.col_counts[c]),)))
        for r in range(h):
            for c in range(w):
                if d.trees[r][c]:
                    cells = tuple((a + 1, b + 1) for a, b in _neighbours(r, c, h, w) if (a, b) in free)
                    units.append(Unit(f"the tree at ({r + 1},{c + 1})", tuple(sorted(cells)), _AnyTent(),
                                      (Claim("value", ((r + 1, c + 1),), TREE),)))
        for r in range(h - 1):
            for c in range(w - 1):
                cells = tuple((a + 1, b + 1) for a, b in ((r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1))
                              if (a, b) in free)
                if len(cells) > 1:
                    units.append(Unit(f"the 2x2 block at ({r + 1},{c + 1})", cells, _AtMostOneTent()))
        for r, c in sorted(free):
            if not any(d.trees[a][b] for a, b in _neighbours(r, c, h, w)):
                units.append(Unit(f"no tree next to ({r + 1},{c + 1})", ((r + 1, c + 1),), _NoTent()))
        return tuple(units)


class _TentCount:
    """``allowed``: exactly ``n`` tents (classes, not lambdas, so units pickle)."""

    def __init__(self, n: int):
        self.n = n

    def __call__(self, values: tuple) -> bool:
        return sum(v == TENT for v in values) == self.n


class _AnyTent:
    def __call__(self, values: tuple) -> bool:
        return TENT in values


class _AtMostOneTent:
    def __call__(self, values: tuple) -> bool:
        return sum(v == TENT for v in values) <= 1


class _NoTent:
    def __call__(self, values: tuple) -> bool:
        return values[0] != TENT


PUZZLE = register_puzzle(Tents())
