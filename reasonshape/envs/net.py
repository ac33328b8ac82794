"""Net: rotate every tile so that all tiles form one connected network without loops or loose ends.

Rules (the collection's ``net.c``): each cell of a ``w x h`` grid holds a tile with wires leaving it towards some
of its four sides. Rotate tiles (by quarter turns; a tile cannot be reflected or left out) so that (1) every wire
end meets a wire end of the neighbouring tile (no wire points at the grid's edge, at a barrier, or at a neighbour
without a matching wire), (2) all tiles are connected through wires, and (3) the wires form no loop. With ``w``
(wrapping) params the grid's opposite edges are joined, so a wire may leave one edge and enter at the other.
(``net.c`` declares completion when all tiles are connected; for the collection's puzzles, whose tiles carry
exactly ``w*h - 1`` links, that is equivalent to (1)-(3).)

Game IDs: params ``WxH`` then ``w`` (wrapping), and in the full form ``b<probability>`` (barrier rate, ``%g``) and
``a`` (uniqueness not ensured); the short form keeps ``WxH[w]``. Desc: one hex digit per tile, row-major (bit 1
right, 2 up, 4 left, 8 down), each optionally followed by ``v`` (barrier on its right) and/or ``h`` (barrier
below). SOLVE moves: ``S`` then ``;A x,y`` (anticlockwise), ``;C x,y`` (clockwise), ``;F x,y`` (half turn),
``;L x,y`` (lock, ignored); 0-based column x, row y.

Answer: one row per line, one token per cell separated by spaces, the token listing the directions the tile's
wires point to after rotation with the letters ``U`` (up), ``R`` (right), ``D`` (down), ``L`` (left) in any order
(``UD`` = vertical straight, ``RD`` = corner right-down, ``URL`` = T without a down wire, ``URDL`` = cross, ``.``
= empty tile). Solution value: tuple of row tuples of ints (the tile bitmasks after rotation).

Claims: ``value`` claims "(r,c) is RD" (``value`` = the rotated tile's bitmask, an int ``0..15`` with the desc's
bits 1 right, 2 up, 4 left, 8 down: ``Claim("value", ((1, 1),), 8)`` is "(1,1) is D"; the letter token ``"D"`` is how
a trace writes it, not a claim value, and raises :class:`ClaimError`), ``link`` claims "(1,1) is linked
to (1,2)" (``cells`` = two neighbouring cells; ``positive=False``: "is not linked to"), static ``piece`` claims
"(2,3) holds a corner piece" (:meth:`given_claims`). C* = one ``value`` claim per tile that has more than one
distinct orientation, stating its orientation (the others, cross and empty tiles, are given).

Constraint view: variables are the 1-based cells, domain the tile's distinct rotations (bitmasks); units are each
pair of neighbouring cells ("the link between (r,c) and (r,c+1)": both wires or neither) and each cell next to the
grid's edge or a barrier ("the walls of (r,c)": no wire points there). Global rules (not units): connectivity and no
loops, enforced exactly by lazy cuts in the solver and by :meth:`NetPuzzle.check`.

LEVELS (reasonshape choice, the data README's proposal; the collection has no difficulty grades for Net, so
difficulty is grid size): trivial ``2x2``, easy ``3x3``, normal ``4x4``, hard ``5x5`` (no wrapping, no barriers,
unique).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

import networkx as nx
from ortools.sat.python import cp_model

from reasonshape.envs._solver import lazy_enumerate
from reasonshape.envs.answer import read_grid_answer
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
    solve_move_cells,
)
from reasonshape.envs.registry import register_puzzle
from reasonshape.errors import ClaimError, GameIdError, GenerationError

__all__ = ["NetParams", "NetData", "NetPuzzle", "PUZZLE", "PIECES", "rotations", "mask_token"]

R, U, L, D = 1, 2, 4, 8
_DELTA = {R: (0, 1), U: (-1, 0), L: (0, -1), D: (1, 0)}
_OPP = {R: L, L: R, U: D, D: U}
_LETTER = {U: "U", R: "R", D: "D", L: "L"}
_WORD = {U: "up", R: "right", D: "down", L: "left"}


def _anticlockwise(t: int) -> int:
    return ((t & 0x07) << 1) | ((t & 0x08) >> 3)


def rotations(tile: int) -> tuple[int, ...]:
    """The distinct quarter-turn rotations of a tile.

    Parameters
    ----------
    tile : int
        Bitmask in ``0..15`` (1 right, 2 up, 4 left, 8 down; ``net.c``'s encoding).

    Returns
    -------
    tuple of int
        1, 2 or 4 bitmasks: the tile itself, then successive anticlockwise turns (``net.c``'s ``A``), without
        repeats (a straight piece has 2, a cross 1).
    """
    out = [tile]
    t = tile
    for _ in range(3):
        t = _anticlockwise(t)
        if t not in out:
            out.append(t)
    return tuple(out)


def mask_token(mask: int) -> str:
    """The answer token of a tile bitmask (``0..15``): its wire directions as letters in the order U, R, D, L
    (``"RD"`` for 1 + 8), ``"."`` for an empty tile. Parsing accepts the letters in any order."""
    return "".join(_LETTER[d] for d in (U, R, D, L) if mask & d) or "."


#: The shapes a ``piece`` claim names (:func:`_piece`).
PIECES = ("empty", "end", "straight", "corner", "T", "cross")


def _piece(mask: int) -> str:
    n = bin(mask).count("1")
    if n == 2:
        return "straight" if mask in (R | L, U | D) else "corner"
    return {0: "empty", 1: "end", 3: "T", 4: "cross"}[n]


_TOKENS: dict[str, int] = {".": 0}
for _k in range(1, 5):
    for _perm in itertools.permutations((U, R, D, L), _k):
        _TOKENS["".join(_LETTER[d] for d in _perm)] = sum(_perm)


@dataclass(frozen=True)
class NetParams:
    """Net params (``net.c`` ``game_params``): ``w`` x ``h`` grid, ``wrapping`` (opposite edges joined),
    ``unique`` (False = ``a``), ``barrier`` probability in [0, 1]."""

    w: int
    h: int
    wrapping: bool = False
    unique: bool = True
    barrier: float = 0.0


@dataclass(frozen=True)
class NetData:
    """Parsed desc: ``tiles`` (rows of bitmasks, as scrambled in the desc), ``blocked`` (rows of bitmasks of the
    directions with a barrier or, without wrapping, the grid's edge), ``barriers`` (rows of bitmasks of the
    barriers alone), ``links`` (tuple of ``(cell_a, dir, cell_b)`` 0-based: every neighbouring pair not separated
    by a wall, ``dir`` pointing from a to b)."""

    tiles: tuple
    blocked: tuple
    barriers: tuple
    links: tuple


def _make_data(tiles, barriers, params: NetParams) -> NetData:
    w, h = params.w, params.h
    blocked = [list(row) for row in barriers]
    if not params.wrapping:
        for c in range(w):
            blocked[0][c] |= U
            blocked[h - 1][c] |= D
        for r in range(h):
            blocked[r][0] |= L
            blocked[r][w - 1] |= R
    links = []
    for r in range(h):
        for c in range(w):
            for d in (R, D):
                if blocked[r][c] & d:
                    continue
                dr, dc = _DELTA[d]
                links.append(((r, c), d, ((r + dr) % h, (c + dc) % w)))
    return NetData(tuple(tuple(row) for row in tiles), tuple(tuple(row) for row in blocked),
                   tuple(tuple(row) for row in barriers), tuple(links))


def encode_net_desc(tiles, barriers, params: NetParams) -> str:
    """The collection's desc, as ``net.c``'s ``new_game_desc`` writes it.

    Parameters
    ----------
    tiles : sequence of sequences of int, shape (h, w)
        Tile bitmasks.
    barriers : sequence of sequences of int, shape (h, w)
        Barrier bitmasks per cell (both sides of a barrier set).
    params : NetParams
        Grid size and wrapping (without wrapping, barriers on the grid's border are not written).

    Returns
    -------
    str
        One hex digit per tile, followed by ``v`` (barrier right) and/or ``h`` (barrier below).
    """
    out = []
    for r in range(params.h):
        for c in range(params.w):
            out.append("0123456789abcdef"[tiles[r][c]])
            if (params.wrapping or c < params.w - 1) and barriers[r][c] & R:
                out.append("v")
            if (params.wrapping or r < params.h - 1) and barriers[r][c] & D:
                out.append("h")
    return "".join(out)


class NetPuzzle(Puzzle):
    """Net on the :class:`~reasonshape.envs.base.Puzzle` protocol. See the module docstring."""

    name: ClassVar[str] = "net"
    LEVELS: ClassVar[dict[str, str]] = {"trivial": "2x2", "easy": "3x3", "normal": "4x4", "hard": "5x5"}
    ANSWER_SYMBOLS: ClassVar[dict[str, str]] = {
        "U": "a wire pointing up", "R": "a wire pointing right", "D": "a wire pointing down",
        "L": "a wire pointing left",
        "UD, RL, UR, RD, DL, UL, URD, ...": "a cell's token: all its wire directions written together, any order",
        ".": "an empty tile (no wires)",
    }
    CLAIM_KINDS: ClassVar[tuple[str, ...]] = ("value", "link", "piece")
    VALUE_WORDS: ClassVar[dict[str, Hashable]] = {k.lower(): v for k, v in _TOKENS.items() if k != "."}

    # ----------------------------------------------------------------- params and game IDs
    def parse_params(self, text: str) -> NetParams:
        """Parse ``WxH`` followed by any of ``w``, ``b<float>``, ``a``.

        Raises
        ------
        GameIdError
            Unknown character, bad barrier number, a 1x1 grid, a barrier rate outside [0, 1], or a unique wrapping
            puzzle with width or height 2 (``net.c`` ``validate_params``: such a puzzle cannot be unique).
        """
        if not isinstance(text, str):
            raise GameIdError(repr(text), None, "a params string such as '5x5'")
        w, h, i = parse_wxh(text)
        wrapping, unique, barrier = False, True, 0.0
        while i < len(text):
            ch = text[i]
            if ch == "w":
                wrapping = True
                i += 1
            elif ch == "a":
                unique = False
                i += 1
            elif ch == "b":
                j = i + 1
                while j < len(text) and ("0" <= text[j] <= "9" or text[j] == "."):
                    j += 1
                try:
                    barrier = float(text[i + 1:j])
                except ValueError:
                    raise GameIdError(text, i + 1, "a barrier probability (decimal number) after 'b'") from None
                if not 0.0 <= barrier <= 1.0:
                    raise GameIdError(text, i + 1, f"a barrier probability between 0 and 1, got {barrier}")
                i = j
            else:
                raise GameIdError(text, i, "'w' (wrapping), 'b<probability>' or 'a'")
        if w <= 1 and h <= 1:
            raise GameIdError(text, 0, "a grid with width or height greater than one")
        if unique and wrapping and (w == 2 or h == 2):
            raise GameIdError(text, 0, "no width or height of 2 in a unique wrapping puzzle (it cannot be unique)")
        return NetParams(w, h, wrapping, unique, barrier)

    def format_params(self, params: NetParams, full: bool = True) -> str:
        """``WxH[w]`` plus, in the full form, ``b%g`` and ``a`` (``net.c`` ``encode_params``)."""
        s = f"{params.w}x{params.h}" + ("w" if params.wrapping else "")
        if full and params.barrier:
            s += f"b{params.barrier:g}"
        if full and not params.unique:
            s += "a"
        return s

    def parse_desc(self, params: NetParams, desc: str) -> Instance:
        """Parse as ``net.c``'s ``validate_desc``/``new_game``; ``Instance.data`` is a :class:`NetData`.

        Raises :class:`GameIdError` (position, expectation): a character that is not a hex digit where a tile is
        expected, too few tiles, or data after the last tile.
        """
        w, h = params.w, params.h
        tiles = [[0] * w for _ in range(h)]
        barriers = [[0] * w for _ in range(h)]
        i = 0
        for k in range(w * h):
            r, c = divmod(k, w)
            if i >= len(desc):
                raise GameIdError(desc, i, f"a hex digit for tile {k + 1} of {w * h}")
            ch = desc[i]
            if ch not in "0123456789abcdefABCDEF":
                raise GameIdError(desc, i, "a hex digit 0-9 or a-f (a tile)")
            tiles[r][c] = int(ch, 16)
            i += 1
            while i < len(desc) and desc[i] in "hv":
                d = R if desc[i] == "v" else D
                dr, dc = _DELTA[d]
                barriers[r][c] |= d
                barriers[(r + dr) % h][(c + dc) % w] |= _OPP[d]
                i += 1
        if i != len(desc):
            raise GameIdError(desc, i, "end of desc after the last tile")
        return Instance(self.name, params, desc, _make_data(tiles, barriers, params))

    # ----------------------------------------------------------------- generation
    def _generate(self, params: NetParams, rng: random.Random) -> Instance:
        """Native generator: a uniform random spanning tree of the grid graph (networkx), its tiles, kept when
        CP-SAT proves the tile configuration unique, then barriers on a ``barrier`` fraction of
        the unused links and a random rotation of every tile, not already solved (reasonshape's own, after
        ``net.c``'s tree-then-shuffle design; ``net.c`` repairs ambiguous areas where this one redraws)."""
        w, h = params.w, params.h
        g = nx.Graph()
        g.add_nodes_from((r, c) for r in range(h) for c in range(w))
        for r in range(h):
            for c in range(w):
                if params.wrapping or c + 1 < w:
                    g.add_edge((r, c), (r, (c + 1) % w))
                if params.wrapping or r + 1 < h:
                    g.add_edge((r, c), ((r + 1) % h, c))
        for _attempt in range(1000):
            tree = nx.random_spanning_tree(g, seed=rng.randrange(2**32))
            sol = [[0] * w for _ in range(h)]
            for a, b in tree.edges():
                d = _dir(a, b, w, h)
                sol[a[0]][a[1]] |= d
                sol[b[0]][b[1]] |= _OPP[d]
            barriers = [[0] * w for _ in range(h)]
            if params.barrier:
                unused = [(a, _dir(a, b, w, h)) for a, b in sorted(g.edges()) if not tree.has_edge(a, b)]
                for a, d in rng.sample(unused, int(params.barrier * len(unused))):
                    dr, dc = _DELTA[d]
                    barriers[a[0]][a[1]] |= d
                    barriers[(a[0] + dr) % h][(a[1] + dc) % w] |= _OPP[d]
            # uniqueness is always required (the protocol's generate() proves it), 'a' params included
            probe = self.parse_desc(params, encode_net_desc(sol, barriers, params))
            if not self.solve(probe, 2).unique:
                continue
            for _ in range(20):
                tiles = [[rng.choice(rotations(t)) for t in row] for row in sol]
                if tiles != sol or w * h == 1:
                    break
            return self.parse_desc(params, encode_net_desc(tiles, barriers, params))
        raise GenerationError(f"net: no unique {self.format_params(params)} instance after 1000 attempts")

    # ----------------------------------------------------------------- text
    def render_prompt(self, instance: Instance) -> str:
        """Rules, the scrambled tiles as tokens (and barriers), the answer format."""
        p, d = instance.params, instance.data
        width = max(len(mask_token(t)) for row in d.tiles for t in row)
        rows = "\n".join(" ".join(mask_token(t).ljust(width) for t in row).rstrip() for row in d.tiles)
        bars = []
        for r in range(p.h):
            for c in range(p.w):
                for dd in (R, D):
                    inside = p.wrapping or (dd == R and c + 1 < p.w) or (dd == D and r + 1 < p.h)
                    if d.barriers[r][c] & dd and inside:
                        dr, dc = _DELTA[dd]
                        bars.append(f"({r + 1},{c + 1})|({(r + dr) % p.h + 1},{(c + dc) % p.w + 1})")
        wrap = ("The grid wraps around: the right edge is joined to the left edge and the bottom edge to the top, "
                "so a wire may leave one edge and continue on the opposite side.\n" if p.wrapping else
                "The grid does not wrap: no wire may point off the grid.\n")
        barrier_text = (f"Barriers (no wire may cross them) lie between these neighbouring cells: {', '.join(bars)}.\n"
                        if bars else "")
        example = "\n".join(" ".join("UD" for _ in range(p.w)) for _ in range(p.h))
        return (
            f"Net puzzle ({p.h} rows x {p.w} columns).\n\n"
            "Every cell holds a tile with wires pointing to some of its four sides. A tile is written as the "
            "letters of the directions its wires point to: U (up), R (right), D (down), L (left); for example UD is "
            "a straight vertical wire, RD a corner joining right and down, URL a T-piece, and a single letter an "
            "end piece.\n\n"
            "Rules: rotate each tile by any number of quarter turns (tiles cannot be flipped or moved) so that\n"
            "1. every wire meets a wire of the neighbouring tile pointing back at it (no loose ends);\n"
            "2. all tiles are connected into one network;\n"
            "3. the network has no loops.\n"
            f"{wrap}{barrier_text}\n"
            "Coordinates are (row, column), 1-based, rows numbered top to bottom and columns left to right.\n\n"
            f"Tiles as given (before rotation):\n{rows}\n\n"
            "Answer format: the full grid after rotation, one row per line, top row first, one token per cell "
            "separated by spaces, each token listing the cell's wire directions with the letters U, R, D, L. "
            f"Put the final answer inside <answer>...</answer>, for example (shape only):\n<answer>\n{example}\n"
            "</answer>"
        )

    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read the ``h x w`` grid of direction tokens (letters U/R/D/L in any order, ``.`` empty).

        Raises
        ------
        AnswerParseError
            No answer block and no grid of tokens, wrong size, unknown token.
        """
        p = instance.params
        grid, source, notes = read_grid_answer(text, p.h, p.w, _TOKENS, single_chars=False)
        return ParsedAnswer(grid, source, notes)

    def format_answer(self, instance: Instance, solution: Any) -> str:
        """Tokens in U, R, D, L order separated by spaces, one row per line."""
        return "\n".join(" ".join(mask_token(t) for t in row) for row in solution)

    # ----------------------------------------------------------------- rules
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check by the rules: ``shape``, ``not_a_rotation``, ``loose_end``, ``disconnected``, ``loop``. O(w*h)."""
        grid = answer.value if isinstance(answer, ParsedAnswer) else answer
        p, d = instance.params, instance.data
        w, h = p.w, p.h
        if not (isinstance(grid, (tuple, list)) and len(grid) == h and all(
                isinstance(row, (tuple, list)) and len(row) == w for row in grid)):
            return CheckResult(False, (Violation("shape", f"the answer must be {h} rows of {w} tiles"),))
        out = []
        for r in range(h):
            for c in range(w):
                t = grid[r][c]
                if isinstance(t, bool) or not isinstance(t, int) or t not in rotations(d.tiles[r][c]):
                    shown = mask_token(t) if isinstance(t, int) and 0 <= t < 16 else repr(t)
                    out.append(Violation("not_a_rotation", f"({r + 1},{c + 1}) {shown} is not a rotation of the "
                                         f"given {mask_token(d.tiles[r][c])}", ((r + 1, c + 1),)))
        if out:
            return CheckResult(False, tuple(out))
        for r in range(h):
            for c in range(w):
                t = grid[r][c]
                for dd in (R, U, L, D):
                    if not t & dd:
                        continue
                    dr, dc = _DELTA[dd]
                    if d.blocked[r][c] & dd:
                        out.append(Violation("loose_end", f"the {_WORD[dd]} wire of ({r + 1},{c + 1}) points at a "
                                             "wall", ((r + 1, c + 1),)))
                        continue
                    rr, cc = (r + dr) % h, (c + dc) % w
                    if not grid[rr][cc] & _OPP[dd]:
                        out.append(Violation("loose_end", f"the {_WORD[dd]} wire of ({r + 1},{c + 1}) meets no wire "
                                             f"of ({rr + 1},{cc + 1})", ((r + 1, c + 1), (rr + 1, cc + 1))))
        parent = list(range(w * h))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for (a, dd, b) in d.links:
            if grid[a[0]][a[1]] & dd and grid[b[0]][b[1]] & _OPP[dd]:
                ra, rb = find(a[0] * w + a[1]), find(b[0] * w + b[1])
                if ra == rb:
                    out.append(Violation("loop", f"the link ({a[0] + 1},{a[1] + 1})-({b[0] + 1},{b[1] + 1}) closes a "
                                         "loop", ((a[0] + 1, a[1] + 1), (b[0] + 1, b[1] + 1))))
                else:
                    parent[ra] = rb
        roots: dict[int, list] = {}
        for i in range(w * h):
            roots.setdefault(find(i), []).append((i // w + 1, i % w + 1))
        if len(roots) > 1:
            comps = sorted(roots.values(), key=len, reverse=True)
            for comp in comps[1:]:
                out.append(Violation("disconnected", f"tiles {comp[:6]} are not connected to the rest", tuple(comp)))
        return CheckResult(not out, tuple(out))

    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        """CP-SAT: one Boolean per (cell, distinct rotation), link equalities, walls; connectivity and no loops by
        exact lazy cuts. Solutions are distinct tile configurations."""
        model, idx, link_vars, rots = _model(instance.params, instance.data)
        cut = _cuts(instance.params, instance.data, link_vars, rots)
        sols, exhausted = lazy_enumerate(model, idx, max_solutions, cut)
        w, h = instance.params.w, instance.params.h
        return SolveResult(tuple(tuple(tuple(rots[r * w + c][s[r * w + c]] for c in range(w)) for r in range(h))
                                 for s in sols), exhausted)

    def decode_tatham_solution(self, instance: Instance, move: str) -> Any:
        """Apply the ``A``/``C``/``F`` rotations of a SOLVE move ``S;A x,y;L x,y;...`` (``net.c``
        ``execute_move``, 0-based column x, row y) to the given tiles. ``L`` (lock) changes no tile, but the
        collection's solve locks every tile, and a tile it need not turn is named by its lock alone: every tile
        must be locked.

        Raises
        ------
        ConfigError
            A malformed item, a tile off the grid, a tile never locked
            (:func:`~reasonshape.envs.base.bad_solve_move`).
        """
        p = instance.params
        grid = [list(row) for row in instance.data.tiles]
        locked: set[tuple[int, int]] = set()
        for letter, x, y, _ in solve_move_cells(self.name, move, "ACFL", p.w, p.h):
            if letter == "L":
                locked.add((x, y))
            else:
                turns = {"A": 1, "F": 2, "C": 3}[letter]
                t = grid[y][x]
                for _ in range(turns):
                    t = _anticlockwise(t)
                grid[y][x] = t
        if len(locked) < p.w * p.h:
            x, y = next((x, y) for y in range(p.h) for x in range(p.w) if (x, y) not in locked)
            raise bad_solve_move(self.name, move, f"tile L{x},{y} is never locked")
        return tuple(tuple(row) for row in grid)

    # ----------------------------------------------------------------- claims
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """``value``: the cell's rotated tile; ``link``: whether two neighbouring cells are joined by a wire;
        ``piece``: the given tile's shape (static).

        Raises
        ------
        ClaimError
            A claim outside the vocabulary, for either polarity: unknown kind, a cell off the grid, a wrong number
            of cells, cells that are not neighbours, a value that is not a bitmask ``0..15`` (an int; the answer
            token ``"D"`` is trace text, its value is ``8``), a piece not in ``PIECES``, a link claim with a value.
        """
        p, d = instance.params, instance.data
        if claim.kind not in self.CLAIM_KINDS:
            raise ClaimError(f"net: unknown claim kind {claim.kind!r}; known: {self.CLAIM_KINDS}")
        for cell in claim.cells:
            self._check_cell(instance, cell, p.h, p.w)
        if claim.kind == "link":
            if len(claim.cells) != 2:
                raise ClaimError(f"net: a link claim names two cells, got {claim.cells}")
            self._claim_no_value(claim)
            a, b = ((x - 1, y - 1) for x, y in claim.cells)
            dd = _dir(a, b, p.w, p.h, p.wrapping)
            if dd is None:
                raise ClaimError(f"net: {claim.cells[0]} and {claim.cells[1]} are not neighbours")
            truth = bool(solution[a[0]][a[1]] & dd and solution[b[0]][b[1]] & _OPP[dd]
                         and not d.blocked[a[0]][a[1]] & dd)
        else:
            if len(claim.cells) != 1:
                raise ClaimError(f"net: a {claim.kind} claim names one cell, got {claim.cells}")
            if claim.kind == "value":
                self._claim_number(claim, 0, 15, "a tile bitmask (1 right, 2 up, 4 left, 8 down)")
            elif claim.value not in PIECES:
                raise ClaimError(f"net: piece claims need one of {PIECES}, got {claim.value!r}")
            r, c = claim.cells[0]
            truth = (solution[r - 1][c - 1] == claim.value if claim.kind == "value"
                     else _piece(d.tiles[r - 1][c - 1]) == claim.value)
        return truth if claim.positive else not truth

    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: one value claim per tile with more than one distinct orientation."""
        sol = self.unique_solution(instance) if solution is None else solution
        return frozenset(Claim("value", ((r + 1, c + 1),), sol[r][c]) for r, row in enumerate(instance.data.tiles)
                         for c, t in enumerate(row) if len(rotations(t)) > 1)

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """One ``piece`` claim per cell (its tile's shape), row-major."""
        return tuple(Claim("piece", ((r + 1, c + 1),), _piece(t)) for r, row in enumerate(instance.data.tiles)
                     for c, t in enumerate(row))

    def claim_text(self, claim: Claim) -> str:
        """``"(2,3) is RD"``, ``"(2,3) is not UD"``, ``"(1,1) is linked to (1,2)"``, ``"(2,3) holds a corner
        piece"``."""
        if claim.kind == "link":
            (r1, c1), (r2, c2) = claim.cells
            return f"({r1},{c1}) is {'' if claim.positive else 'not '}linked to ({r2},{c2})"
        (r, c), = claim.cells
        if claim.kind == "piece":
            art = "an" if claim.value in ("end", "empty") else "a"
            return f"({r},{c}) {'holds' if claim.positive else 'does not hold'} {art} {claim.value} piece"
        return f"({r},{c}) {'is' if claim.positive else 'is not'} {mask_token(claim.value)}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Reads ``link`` and ``piece`` sentences (value claims use the generic patterns with VALUE_WORDS)."""
        text = mask_long_numbers(text)

        out = []
        for m in re.finditer(r"\((\d+),\s?(\d+)\) is (not )?linked to \((\d+),\s?(\d+)\)", text):
            a, b = (int(m.group(1)), int(m.group(2))), (int(m.group(4)), int(m.group(5)))
            out.append((Claim("link", (min(a, b), max(a, b)), None, m.group(3) is None), m.start(), m.end()))
        for m in re.finditer(r"\((\d+),\s?(\d+)\) (holds|does not hold) an? (empty|end|straight|corner|T|cross) "
                             r"piece", text):
            out.append((Claim("piece", ((int(m.group(1)), int(m.group(2))),), m.group(4), m.group(3) == "holds"),
                        m.start(), m.end()))
        out.sort(key=lambda t: t[1])
        return out

    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """1-based cell -> the tile's distinct rotations (bitmasks)."""
        return {(r + 1, c + 1): rotations(t) for r, row in enumerate(instance.data.tiles) for c, t in enumerate(row)}

    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """Link units (both wires or neither) for every neighbouring pair not separated by a wall, and wall units
        for every cell with a blocked side."""
        p, d = instance.params, instance.data
        out = []
        given = {(r + 1, c + 1): Claim("piece", ((r + 1, c + 1),), _piece(t))
                 for r, row in enumerate(d.tiles) for c, t in enumerate(row)}
        for a, dd, b in d.links:
            ca, cb = (a[0] + 1, a[1] + 1), (b[0] + 1, b[1] + 1)
            if ca == cb:
                out.append(Unit(f"the link between ({ca[0]},{ca[1]}) and itself", (ca,), _SelfLink(dd),
                                (given[ca],)))
                continue
            out.append(Unit(f"the link between ({ca[0]},{ca[1]}) and ({cb[0]},{cb[1]})", (ca, cb), _Link(dd),
                            (given[ca], given[cb])))
        for r in range(p.h):
            for c in range(p.w):
                if d.blocked[r][c]:
                    out.append(Unit(f"the walls of ({r + 1},{c + 1})", ((r + 1, c + 1),), _Walls(d.blocked[r][c]),
                                    (given[(r + 1, c + 1)],)))
        return tuple(out)


class _Link:
    def __init__(self, d: int):
        self.d, self.o = d, _OPP[d]

    def __call__(self, values: tuple) -> bool:
        return bool(values[0] & self.d) == bool(values[1] & self.o)


class _SelfLink:
    def __init__(self, d: int):
        self.d, self.o = d, _OPP[d]

    def __call__(self, values: tuple) -> bool:
        return bool(values[0] & self.d) == bool(values[0] & self.o)


class _Walls:
    def __init__(self, blocked: int):
        self.blocked = blocked

    def __call__(self, values: tuple) -> bool:
        return not values[0] & self.blocked


def _dir(a, b, w: int, h: int, wrapping: bool = True):
    """Direction from cell a to its neighbour b (0-based), or None; a direct neighbour is preferred to one
    across a wrapped edge, which counts only when ``wrapping``."""
    for d, (dr, dc) in _DELTA.items():
        if (a[0] + dr, a[1] + dc) == tuple(b):
            return d
    if wrapping:
        for d, (dr, dc) in _DELTA.items():
            if ((a[0] + dr) % h, (a[1] + dc) % w) == tuple(b):
                return d
    return None


def _model(params: NetParams, data: NetData):
    w, h = params.w, params.h
    model = cp_model.CpModel()
    rots, onehot, idx = [], [], []
    for r in range(h):
        for c in range(w):
            rs = rotations(data.tiles[r][c])
            bs = [model.NewBoolVar("") for _ in rs]
            model.AddExactlyOne(bs)
            for k, t in enumerate(rs):
                if t & data.blocked[r][c]:
                    model.Add(bs[k] == 0)
            iv = model.NewIntVar(0, len(rs) - 1, "")
            model.Add(iv == sum(k * b for k, b in enumerate(bs)))
            rots.append(rs)
            onehot.append(bs)
            idx.append(iv)

    def has(cell, d):
        i = cell[0] * w + cell[1]
        return sum(b for b, t in zip(onehot[i], rots[i], strict=True) if t & d)

    link_vars = []
    for a, d, b in data.links:
        e = model.NewBoolVar("")
        model.Add(e == has(a, d))
        model.Add(e == has(b, _OPP[d]))
        link_vars.append(e)
    return model, idx, link_vars, rots


def _cuts(params: NetParams, data: NetData, link_vars, rots):
    """Exact lazy cuts over a candidate (rotation index per cell): for a connected component C of the used links
    that is not every tile, "some link leaving C is used"; for a component with a loop, "at most |C| - 1 links
    inside C are used" (true of any tree)."""
    w, n = params.w, params.w * params.h

    def cut(values):
        masks = [rots[i][v] for i, v in enumerate(values)]
        parent = list(range(n))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        looped = []
        for a, d, b in data.links:
            if masks[a[0] * w + a[1]] & d:
                ra, rb = find(a[0] * w + a[1]), find(b[0] * w + b[1])
                if ra == rb:
                    looped.append(ra)
                else:
                    parent[ra] = rb
        comp = [find(i) for i in range(n)]
        roots = set(comp)
        builders = []
        if len(roots) > 1:
            for root in roots:
                leaving = [e for (a, _d, b), e in zip(data.links, link_vars, strict=True)
                           if (comp[a[0] * w + a[1]] == root) != (comp[b[0] * w + b[1]] == root)]
                builders.append(lambda m, lits=leaving: m.AddBoolOr(lits))
        for root in {find(x) for x in looped}:
            inside = [e for (a, _d, b), e in zip(data.links, link_vars, strict=True)
                      if comp[a[0] * w + a[1]] == root and comp[b[0] * w + b[1]] == root]
            size = comp.count(root)
            builders.append(lambda m, lits=inside, k=size: m.Add(sum(lits) <= k - 1))
        return builders

    return cut


PUZZLE = register_puzzle(NetPuzzle())
