"""Graded deduction for Singles (Hitori): the collection's solving techniques, used to grade native instances.

The collection's generator keeps a Singles puzzle at difficulty ``e`` (Easy) when its solver finishes it with the
easy techniques, and at ``k`` (Tricky) when the tricky techniques finish it but the easy ones do not even after a
"sneaky" first step. :func:`grade_solve` reimplements that solver from the technique descriptions in ``singles.c``
(facts carried over, our own code), so native instances get the collection's own difficulty grades.

Techniques (0-based ``x`` = column, ``y`` = row; "circle" = known white):

* propagation: a black cell circles its four neighbours; a circled cell blackens every other cell of its row and
  column showing the same number;
* once at the start: a cell between two equal numbers is circled (one of the two must be black); an adjacent pair
  of equal numbers blackens every other equal number of that line; corner patterns of equal numbers in the 2x2
  corners (four equal: corner and inner cell black; three in an L: its apex black; two: the cell beside the pair
  circled); with ``k`` also the offset-pair pattern (two equal pairs offset by one cell circle two cells);
* repeatedly: a white cell whose neighbours are all black but one circles that one; with ``k`` also any cell
  diagonal to a black cell that would split the white cells if blackened is circled.

Every technique is sound, so a complete fill proves the solution unique. Source: ``singles.c`` (rules and
technique set); reasonshape's own implementation.
"""

from __future__ import annotations

__all__ = ["grade_solve", "EASY", "TRICKY"]

EASY, TRICKY = 0, 1
_BLACK, _CIRCLE = "B", "W"


class _Impossible(Exception):
    """A contradiction: the deductions reached an impossible state."""


class _State:
    def __init__(self, nums, w: int, h: int):
        self.nums, self.w, self.h = nums, w, h
        self.flag: list[str | None] = [None] * (w * h)  # "B", "W" (circled) or None
        self.ops: list[tuple[int, str]] = []

    def inside(self, x: int, y: int) -> bool:
        return 0 <= x < self.w and 0 <= y < self.h

    def num(self, i: int) -> int:
        return self.nums[i // self.w][i % self.w]

    def nbrs(self, i: int):
        x, y = i % self.w, i // self.w
        for dx, dy in ((0, -1), (1, 0), (0, 1), (-1, 0)):
            if self.inside(x + dx, y + dy):
                yield (y + dy) * self.w + x + dx

    def add(self, x: int, y: int, op: str) -> None:
        self.ops.append((y * self.w + x, op))

    def do_ops(self) -> None:
        """Apply the queued operations with their propagation (black -> neighbours white; white -> equal numbers in
        its row and column black)."""
        k = 0
        while k < len(self.ops):
            i, op = self.ops[k]
            k += 1
            cur = self.flag[i]
            if cur is not None and cur != op:
                raise _Impossible
            if cur == op:
                continue
            self.flag[i] = op
            x, y = i % self.w, i // self.w
            if op == _BLACK:
                for j in self.nbrs(i):
                    if self.flag[j] == _BLACK:
                        raise _Impossible
                    if self.flag[j] is None:
                        self.ops.append((j, _CIRCLE))
            else:
                n = self.num(i)
                line = [(xx, y) for xx in range(self.w) if xx != x] + [(x, yy) for yy in range(self.h) if yy != y]
                for xx, yy in line:
                    j = yy * self.w + xx
                    if self.num(j) != n:
                        continue
                    if self.flag[j] == _CIRCLE:
                        raise _Impossible
                    if self.flag[j] is None:
                        self.ops.append((j, _BLACK))
        self.ops.clear()

    def whites_connected(self) -> bool:
        cells = [i for i in range(self.w * self.h) if self.flag[i] != _BLACK]
        if not cells:
            return False
        seen, stack = {cells[0]}, [cells[0]]
        while stack:
            for j in self.nbrs(stack.pop()):
                if self.flag[j] != _BLACK and j not in seen:
                    seen.add(j)
                    stack.append(j)
        return len(seen) == len(cells)


def _singlesep(s: _State) -> None:
    for y in range(s.h):
        for x in range(s.w):
            if x + 2 < s.w and s.nums[y][x] == s.nums[y][x + 2]:
                s.add(x + 1, y, _CIRCLE)
            if y + 2 < s.h and s.nums[y][x] == s.nums[y + 2][x]:
                s.add(x, y + 1, _CIRCLE)


def _doubles(s: _State) -> None:
    for y in range(s.h):
        for x in range(s.w):
            n = s.nums[y][x]
            if x + 1 < s.w and s.nums[y][x + 1] == n:
                for xx in range(s.w):
                    if xx not in (x, x + 1) and s.nums[y][xx] == n:
                        s.add(xx, y, _BLACK)
            if y + 1 < s.h and s.nums[y + 1][x] == n:
                for yy in range(s.h):
                    if yy not in (y, y + 1) and s.nums[yy][x] == n:
                        s.add(x, yy, _BLACK)


def _corners(s: _State) -> None:
    for x, y, dx, dy in ((0, 0, 1, 1), (s.w - 1, 0, -1, 1), (s.w - 1, s.h - 1, -1, -1), (0, s.h - 1, 1, -1)):
        pos = [(x + dx * xx, y + dy * yy) for yy in (0, 1) for xx in (0, 1)]  # corner, side 1, side 2, inner
        n = [s.nums[py][px] for px, py in pos]
        if n[0] == n[1] == n[2] == n[3]:
            s.add(*pos[0], _BLACK)
            s.add(*pos[3], _BLACK)
        elif n[0] == n[1] == n[2]:
            s.add(*pos[0], _BLACK)
        elif n[1] == n[2] == n[3]:
            s.add(*pos[3], _BLACK)
        elif n[0] == n[1] or n[1] == n[3]:
            s.add(*pos[2], _CIRCLE)
        elif n[0] == n[2] or n[2] == n[3]:
            s.add(*pos[1], _CIRCLE)


def _offsetpair_pair(s: _State, x1: int, y1: int, x2: int, y2: int) -> None:
    ox, oy = (1, 0) if x1 == x2 else (0, 1)
    ax, ay = x1 + ox, y1 + oy
    an = s.nums[ay][ax]
    for ddx, ddy in ((x2 + ox + oy, y2 + oy + ox), (x2 + ox - oy, y2 + oy - ox)):
        if s.inside(ddx, ddy) and (ddx, ddy) != (ax, ay) and s.nums[ddy][ddx] == an:
            xd, yd = ddx - x2, ddy - y2
            s.add(x2 + xd, y2, _CIRCLE)
            s.add(x2, y2 + yd, _CIRCLE)


def _offsetpair(s: _State) -> None:
    for x in range(s.w - 1):
        for y in range(s.h):
            for yy in range(y + 1, s.h):
                if s.nums[y][x] == s.nums[yy][x]:
                    _offsetpair_pair(s, x, y, x, yy)
                    _offsetpair_pair(s, x, yy, x, y)
    for y in range(s.h - 1):
        for x in range(s.w):
            for xx in range(x + 1, s.w):
                if s.nums[y][x] == s.nums[y][xx]:
                    _offsetpair_pair(s, x, y, xx, y)
                    _offsetpair_pair(s, xx, y, x, y)


def _allblackbutone(s: _State) -> int:
    added = 0
    for i in range(s.w * s.h):
        if s.flag[i] == _BLACK:
            continue
        free = None
        skip = False
        for j in s.nbrs(i):
            if s.flag[j] == _CIRCLE:
                skip = True
                break
            if s.flag[j] != _BLACK:
                if free is not None:
                    skip = True
                    break
                free = j
        if skip:
            continue
        if free is None:
            raise _Impossible
        s.ops.append((free, _CIRCLE))
        added += 1
    return added


def _removesplits(s: _State) -> int:
    if not s.whites_connected():
        raise _Impossible
    added = 0
    for i in range(s.w * s.h):
        if s.flag[i] != _BLACK:
            continue
        x, y = i % s.w, i // s.w
        for xx, yy in ((x - 1, y - 1), (x + 1, y - 1), (x + 1, y + 1), (x - 1, y + 1)):
            j = yy * s.w + xx
            if not s.inside(xx, yy) or s.flag[j] is not None:
                continue
            s.flag[j] = _BLACK
            split = not s.whites_connected()
            s.flag[j] = None
            if split:
                s.ops.append((j, _CIRCLE))
                added += 1
    return added


def _sneaky(s: _State) -> None:
    for y in range(s.h):
        for x in range(s.w):
            n = s.nums[y][x]
            if sum(s.nums[y][xx] == n for xx in range(s.w)) == 1 and sum(s.nums[yy][x] == n for yy in range(s.h)) == 1:
                s.add(x, y, _CIRCLE)


def grade_solve(nums, level: int, sneaky: bool = False) -> tuple[tuple[str, ...], ...] | None:
    """Solve a Singles grid with the collection's techniques up to ``level`` (:data:`EASY` or :data:`TRICKY`).

    Parameters
    ----------
    nums : sequence of sequences of int
        The numbers, ``H`` rows of ``W`` (0-based, rows top to bottom).
    level : int
        0 = Easy techniques, 1 = Tricky techniques (a superset).
    sneaky : bool
        First circle every cell whose number is unique in its row and column (the collection uses this only to
        make sure a Tricky puzzle is not Easy with it).

    Returns
    -------
    tuple of tuples of str or None
        The grid of ``"B"``/``"W"`` when the techniques decide every cell and the result obeys the rules (then it is
        the unique solution), else None (stuck or contradictory).
    """
    h, w = len(nums), len(nums[0])
    s = _State(nums, w, h)
    try:
        if sneaky:
            _sneaky(s)
        _singlesep(s)
        _doubles(s)
        _corners(s)
        if level >= TRICKY:
            _offsetpair(s)
        while True:
            if s.ops:
                s.do_ops()
            if _allblackbutone(s):
                continue
            if level >= TRICKY and _removesplits(s):
                continue
            break
    except _Impossible:
        return None
    if any(f is None for f in s.flag) or not s.whites_connected():
        return None
    grid = tuple(tuple(s.flag[y * w + x] for x in range(w)) for y in range(h))
    for line in [list(range(y * w, (y + 1) * w)) for y in range(h)] + [list(range(x, w * h, w)) for x in range(w)]:
        whites = [s.num(i) for i in line if s.flag[i] == _CIRCLE]
        if len(whites) != len(set(whites)):
            return None
    return grid  # type: ignore[return-value]
