"""CP-SAT model, lazy one-loop cuts and the random-loop generator of :mod:`reasonshape.envs.loopy` (private).

Split out of ``loopy.py`` because it passes ~300 lines (STYLE.md). Edges are addressed as ``("h", r, c)`` (between
0-based dots ``(r, c)`` and ``(r, c+1)``) and ``("v", r, c)`` (between ``(r, c)`` and ``(r+1, c)``); a solution is
``(H, V)``, ``H+1`` rows of ``W`` 0/1 flags and ``H`` rows of ``W+1`` flags. Source: reasonshape choice.
"""

from __future__ import annotations

import random

from reasonshape.envs._solver import lazy_enumerate, new_model
from reasonshape.errors import GenerationError

__all__ = ["components", "all_clues", "build_model", "unflatten", "LoopCut", "has_other_solution", "random_loop"]


def components(H, V, w, h):
    """Connected pieces of the drawn edges: a list of (dots, edges), edges as ("h"|"v", r, c), 0-based."""
    adj: dict[tuple[int, int], list] = {}
    for r in range(h + 1):
        for c in range(w):
            if H[r][c]:
                adj.setdefault((r, c), []).append(((r, c + 1), ("h", r, c)))
                adj.setdefault((r, c + 1), []).append(((r, c), ("h", r, c)))
    for r in range(h):
        for c in range(w + 1):
            if V[r][c]:
                adj.setdefault((r, c), []).append(((r + 1, c), ("v", r, c)))
                adj.setdefault((r + 1, c), []).append(((r, c), ("v", r, c)))
    seen: set = set()
    comps = []
    for start in sorted(adj):
        if start in seen:
            continue
        dots, edges, stack = {start}, set(), [start]
        seen.add(start)
        while stack:
            v = stack.pop()
            for u, e in adj[v]:
                edges.add(e)
                if u not in seen:
                    seen.add(u)
                    dots.add(u)
                    stack.append(u)
        comps.append((dots, edges))
    return comps


def all_clues(sol, w, h):
    """The ``h x w`` clue of every cell (number of drawn sides, 0..4) for a solution ``(H, V)``."""
    H, V = sol
    return tuple(tuple(H[r][c] + H[r + 1][c] + V[r][c] + V[r][c + 1] for c in range(w)) for r in range(h))


def build_model(w: int, h: int, clues):
    """CP-SAT model: one bool per edge, clue sums, dot degree 0 or 2, at least one edge. One loop = lazy cuts."""
    model = new_model()
    hv = [[model.NewBoolVar(f"h{r}_{c}") for c in range(w)] for r in range(h + 1)]
    vv = [[model.NewBoolVar(f"v{r}_{c}") for c in range(w + 1)] for r in range(h)]
    for r in range(h):
        for c in range(w):
            if clues[r][c] is not None:
                model.Add(hv[r][c] + hv[r + 1][c] + vv[r][c] + vv[r][c + 1] == clues[r][c])
    for r in range(h + 1):
        for c in range(w + 1):
            es = []
            if c > 0:
                es.append(hv[r][c - 1])
            if c < w:
                es.append(hv[r][c])
            if r > 0:
                es.append(vv[r - 1][c])
            if r < h:
                es.append(vv[r][c])
            on = model.NewBoolVar("")
            model.Add(sum(es) == 2 * on)
    model.Add(sum(x for row in hv for x in row) + sum(x for row in vv for x in row) >= 4)
    return model, hv, vv


def unflatten(values, w, h):
    nh = (h + 1) * w
    H = tuple(tuple(values[r * w:(r + 1) * w]) for r in range(h + 1))
    V = tuple(tuple(values[nh + r * (w + 1):nh + (r + 1) * (w + 1)]) for r in range(h))
    return (H, V)


def _cut_for(comps, hv, vv):
    """Per loop C of a several-loop candidate: if every edge of C is drawn, no edge outside C is drawn."""
    def lit(e):
        k, r, c = e
        return hv[r][c] if k == "h" else vv[r][c]

    all_vars = [x for row in hv for x in row] + [x for row in vv for x in row]
    adds = []
    for _, edges in comps:
        inside = [lit(e) for e in sorted(edges)]
        inside_ids = {id(x) for x in inside}
        outside = [x for x in all_vars if id(x) not in inside_ids]

        def add(model, inside=inside, outside=outside):
            model.Add(sum(outside) == 0).OnlyEnforceIf(inside)

        adds.append((tuple(sorted(edges)), add))
    return adds


class LoopCut:
    """Lazy cut for :func:`lazy_enumerate`: rejects candidates made of several loops (see :func:`_cut_for`)."""

    def __init__(self, w, h, hv, vv, sink: list | None = None):
        self.w, self.h, self.hv, self.vv, self.sink = w, h, hv, vv, sink

    def __call__(self, values):
        H, V = unflatten(values, self.w, self.h)
        comps = components(H, V, self.w, self.h)
        if len(comps) <= 1:
            return []
        cuts = _cut_for(comps, self.hv, self.vv)
        if self.sink is not None:
            self.sink.extend(key for key, _ in cuts)
        return [add for _, add in cuts]


def has_other_solution(w, h, clues, sol, cuts: list) -> bool:
    """Whether the clues admit a valid solution other than ``sol`` (lazy loop cuts, cached across calls)."""
    model, hv, vv = build_model(w, h, clues)
    for edges in cuts:
        _cut_for([(None, set(edges))], hv, vv)[0][1](model)
    flat = [x for row in hv for x in row] + [x for row in vv for x in row]
    known = [x for row in sol[0] for x in row] + [x for row in sol[1] for x in row]
    model.AddBoolOr([x.Not() if k else x for x, k in zip(flat, known, strict=True)])
    found, _ = lazy_enumerate(model, flat, 1, LoopCut(w, h, hv, vv, cuts))
    return bool(found)


def random_loop(w: int, h: int, rng: random.Random, max_tries: int = 200):
    """A random single loop: the boundary of a random simply connected set of cells (see the module docstring)."""
    n = w * h
    for _ in range(max_tries):
        inside = [[False] * w for _ in range(h)]
        r0, c0 = rng.randrange(h), rng.randrange(w)
        inside[r0][c0] = True
        size, target = 1, rng.randint(max(2, int(0.3 * n)), max(2, int(0.6 * n)))
        while size < target:
            frontier = [(r, c) for r in range(h) for c in range(w) if not inside[r][c]
                        and any(0 <= r + dr < h and 0 <= c + dc < w and inside[r + dr][c + dc]
                                for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)))]
            rng.shuffle(frontier)
            for r, c in frontier:
                inside[r][c] = True
                if _simple(inside, w, h, r, c):
                    size += 1
                    break
                inside[r][c] = False
            else:
                break
        H = tuple(tuple(int(_in(inside, w, h, r - 1, c) != _in(inside, w, h, r, c)) for c in range(w))
                  for r in range(h + 1))
        V = tuple(tuple(int(_in(inside, w, h, r, c - 1) != _in(inside, w, h, r, c)) for c in range(w + 1))
                  for r in range(h))
        if len(components(H, V, w, h)) == 1 and size >= 2:
            return (H, V)
    raise GenerationError(f"loopy: no random loop found on {w}x{h} after {max_tries} tries")


def _in(inside, w, h, r, c) -> bool:
    return 0 <= r < h and 0 <= c < w and inside[r][c]


def _simple(inside, w, h, r, c) -> bool:
    """After adding (r, c): no corner where the set touches itself only diagonally, and the outside is connected."""
    for dr in (0, 1):
        for dc in (0, 1):
            a = _in(inside, w, h, r - 1 + dr, c - 1 + dc)
            b = _in(inside, w, h, r - 1 + dr, c + dc)
            d = _in(inside, w, h, r + dr, c - 1 + dc)
            e = _in(inside, w, h, r + dr, c + dc)
            if (a and e and not b and not d) or (b and d and not a and not e):
                return False
    # the cells outside the set, plus the area beyond the border, stay connected
    seen = set()
    stack = [(r0, c0) for r0 in range(h) for c0 in range(w)
             if not inside[r0][c0] and (r0 in (0, h - 1) or c0 in (0, w - 1))]
    seen.update(stack)
    while stack:
        rr, cc = stack.pop()
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            q = (rr + dr, cc + dc)
            if 0 <= q[0] < h and 0 <= q[1] < w and not inside[q[0]][q[1]] and q not in seen:
                seen.add(q)
                stack.append(q)
    n_out = sum(not x for row in inside for x in row)
    return len(seen) == n_out
