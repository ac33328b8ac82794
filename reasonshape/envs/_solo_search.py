"""A small bitmask backtracking search for Latin-square puzzles, shared by ``solo`` and ``unequal``.

The public solvers of these puzzles (``Puzzle._solve``) are CP-SAT models. This module exists for the native
generators only: they ask hundreds of tiny questions per instance ("is there a solution in which cell 17 is not
5?"), and one CP-SAT call costs milliseconds of model transfer before any search starts, which would make a 9x9
generation take seconds. A propagating bitmask search answers these questions in well under a millisecond for
typical grids. Every generated instance is still proven unique by CP-SAT in :meth:`Puzzle.generate`.
Source: reasonshape choice.

Model
-----
* ``n`` values ``1..n``; a cell's domain is a bitmask (bit ``v-1`` set iff ``v`` is possible).
* ``groups``: lists of exactly ``n`` cells that hold a permutation of ``1..n`` (rows, columns, boxes, diagonals).
  Propagation: naked singles (an assigned value leaves every peer) and hidden singles (a value with one place).
* ``binary``: constraints ``(a, b, support)`` where ``support[v]`` is the bitmask of values cell ``a`` may take
  when cell ``b`` is ``v`` (``v`` in ``1..n``); propagated by arc consistency in both directions (the reverse
  table is derived). Inequalities (``a > b``) and adjacency bars are binary constraints.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["LatinSearch", "greater_support", "consecutive_support", "SearchBudgetExceeded", "cp_feasible"]


class SearchBudgetExceeded(RuntimeError):
    """The node budget of one search ran out (the caller restarts with a new random order)."""


def cp_feasible(model, time_limit_s: float = 30.0) -> bool | None:
    """Whether a CP-SAT model has a solution: ``True`` / ``False`` (proven), ``None`` when time ran out.

    Used by the exact :meth:`verify_claim` of solo and unequal on instances with several solutions: one
    feasibility question per polarity instead of enumerating up to ``CLAIM_SOLUTION_LIMIT`` solutions.
    """
    from ortools.sat.python import cp_model

    from reasonshape.envs._solver import new_solver

    solver = new_solver(time_limit_s)
    status = solver.Solve(model)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    if status == cp_model.INFEASIBLE:
        return False
    return None


def greater_support(n: int) -> list[int]:
    """``support[v]`` = values ``a`` with ``a > v`` (for a constraint "cell a is greater than cell b")."""
    full = (1 << n) - 1
    return [0] + [full & ~((1 << v) - 1) for v in range(1, n + 1)]


def consecutive_support(n: int, adjacent: bool) -> list[int]:
    """``support[v]`` = values ``a`` with ``|a - v| == 1`` (``adjacent``) or ``|a - v| != 1`` (not adjacent)."""
    full = (1 << n) - 1
    out = [0]
    for v in range(1, n + 1):
        m = 0
        for a in (v - 1, v + 1):
            if 1 <= a <= n:
                m |= 1 << (a - 1)
        out.append(m if adjacent else full & ~m)
    return out


#: Largest ``n`` for which a support table is expanded to every domain mask (``2**n`` entries).
_EXPAND_MAX_N = 12
_MEMO: dict[tuple, tuple[list[int], list[int] | None]] = {}


def _prepare(support: Sequence[int], n: int) -> tuple[list[int], list[int] | None]:
    """``(table, expanded)``: the support table and, for ``n <= 12``, ``expanded[mask]`` = OR of ``table[v]``
    over the values in ``mask`` (one lookup per arc revision instead of a loop over the bits). Memoised."""
    key = (n, tuple(support))
    hit = _MEMO.get(key)
    if hit is None:
        table = list(support)
        expanded = None
        if n <= _EXPAND_MAX_N:
            expanded = [0] * (1 << n)
            for m in range(1, 1 << n):
                low = m & -m
                expanded[m] = expanded[m ^ low] | table[low.bit_length()]
        hit = _MEMO[key] = (table, expanded)
    return hit


def _reverse(support: Sequence[int], n: int) -> list[int]:
    # rev[w] = values b such that (a=w, b) is allowed, i.e. w in support[b]
    rev = [0] * (n + 1)
    for b in range(1, n + 1):
        m = support[b]
        for w in range(1, n + 1):
            if m >> (w - 1) & 1:
                rev[w] |= 1 << (b - 1)
    return rev


class LatinSearch:
    """Depth-first search with propagation over permutation groups and binary constraints.

    Parameters
    ----------
    n : int
        Number of values (``1..n``), at most 31.
    n_cells : int
        Number of cells (0-based indices ``0..n_cells-1``).
    groups : sequence of sequence of int
        Permutation groups, each exactly ``n`` cells.
    binary : sequence of (int, int, list of int)
        ``(a, b, support)`` as in the module docstring.
    """

    def __init__(self, n: int, n_cells: int, groups: Sequence[Sequence[int]],
                 binary: Sequence[tuple[int, int, Sequence[int]]] = ()):
        self.n = n
        self.full = (1 << n) - 1
        self.n_cells = n_cells
        self.groups = [tuple(g) for g in groups]
        peers: list[set[int]] = [set() for _ in range(n_cells)]
        for g in self.groups:
            for c in g:
                peers[c].update(g)
        for c in range(n_cells):
            peers[c].discard(c)
        self.peers = [tuple(sorted(p)) for p in peers]
        # arcs[c] = list of (other, table, expanded): d[c] &= OR_{v in d[other]} table[v] (= expanded[d[other]])
        arcs: list[list[tuple[int, list[int], list[int] | None]]] = [[] for _ in range(n_cells)]
        reverse_memo: dict[tuple, list[int]] = {}
        for a, b, support in binary:
            arcs[a].append((b, *_prepare(support, n)))
            key = tuple(support)
            if key not in reverse_memo:
                reverse_memo[key] = _reverse(support, n)
            arcs[b].append((a, *_prepare(reverse_memo[key], n)))
        self.arcs = arcs
        self.nodes = 0

    # ------------------------------------------------------------------ propagation
    def _propagate(self, d: list[int], done: list[bool]) -> bool:
        n_cells, peers, arcs, groups, full = self.n_cells, self.peers, self.arcs, self.groups, self.full
        changed = True
        while changed:
            changed = False
            for c in range(n_cells):
                m = d[c]
                if not m:
                    return False
                if not done[c] and not (m & (m - 1)):
                    done[c] = True
                    keep = ~m
                    for p in peers[c]:
                        dp = d[p]
                        if dp & m:
                            dp &= keep
                            if not dp:
                                return False
                            d[p] = dp
                            changed = True
            for c in range(n_cells):
                if not arcs[c]:
                    continue
                m = d[c]
                for other, table, expanded in arcs[c]:
                    if expanded is not None:
                        allowed = expanded[d[other]]
                    else:
                        allowed = 0
                        o = d[other]
                        while o:
                            low = o & -o
                            allowed |= table[low.bit_length()]
                            o ^= low
                    nm = m & allowed
                    if nm != m:
                        if not nm:
                            return False
                        m = nm
                        changed = True
                d[c] = m
            for g in groups:
                once = twice = 0
                for c in g:
                    m = d[c]
                    twice |= once & m
                    once |= m
                if once != full:
                    return False
                singles = once & ~twice
                if singles:
                    for c in g:
                        m = d[c] & singles
                        if m and d[c] != m:
                            if m & (m - 1):
                                return False
                            d[c] = m
                            changed = True
        return True

    # ------------------------------------------------------------------ search
    def solutions(self, domains: Sequence[int], limit: int, rng: random.Random | None = None,
                  max_nodes: int | None = None) -> list[tuple[int, ...]]:
        """Up to ``limit`` solutions (tuples of values, one per cell) of the given starting domains.

        ``rng`` randomises the branching order (used to draw random complete grids). ``max_nodes`` bounds the
        search; past it :class:`SearchBudgetExceeded` is raised.
        """
        self.nodes = 0
        out: list[tuple[int, ...]] = []
        self._budget = max_nodes
        self._search(list(domains), [False] * self.n_cells, limit, out, rng)
        return out

    def _search(self, d, done, limit, out, rng):
        self.nodes += 1
        if self._budget is not None and self.nodes > self._budget:
            raise SearchBudgetExceeded(f"search exceeded {self._budget} nodes")
        if not self._propagate(d, done):
            return
        best, best_k = -1, self.n + 1
        for c in range(self.n_cells):
            m = d[c]
            if m & (m - 1):
                k = m.bit_count()
                if k < best_k:
                    best, best_k = c, k
                    if k == 2:
                        break
        if best < 0:
            out.append(tuple(m.bit_length() for m in d))
            return
        m = d[best]
        values = []
        while m:
            low = m & -m
            values.append(low)
            m ^= low
        if rng is not None:
            rng.shuffle(values)
        for bit in values:
            d2 = d[:]
            d2[best] = bit
            self._search(d2, done[:], limit, out, rng)
            if len(out) >= limit:
                return

    def has_solution(self, domains: Sequence[int], max_nodes: int | None = None) -> bool:
        """Whether the domains admit at least one solution.

        With ``max_nodes``, a search that runs out of nodes answers ``True`` ("a solution may exist"): the
        generators then keep the clue they were trying to remove, which can never break uniqueness.
        """
        try:
            return bool(self.solutions(domains, 1, max_nodes=max_nodes))
        except SearchBudgetExceeded:
            return True

    def random_solution(self, rng: random.Random, domains: Sequence[int] | None = None,
                        max_nodes: int = 20000, attempts: int = 50) -> tuple[int, ...]:
        """One uniformly-branching random solution (restarts when a search exceeds ``max_nodes``).

        Raises
        ------
        RuntimeError
            No solution found within ``attempts`` restarts.
        """
        start = list(domains) if domains is not None else [self.full] * self.n_cells
        for _ in range(attempts):
            try:
                sols = self.solutions(start, 1, rng=rng, max_nodes=max_nodes)
            except SearchBudgetExceeded:
                continue
            if sols:
                return sols[0]
            raise RuntimeError("the constraints admit no solution")
        raise RuntimeError(f"no random solution within {attempts} restarts of {max_nodes} nodes")
