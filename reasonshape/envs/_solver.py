"""Thin helpers over OR-Tools CP-SAT shared by the puzzle solvers: enumerate solutions with blocking clauses.

Why not CP-SAT's ``enumerate_all_solutions`` callback: it needs presolve off and cannot stop at exactly
``max_solutions`` across workers deterministically; re-solving with a blocking constraint is deterministic with
one worker and fast for grid puzzles (tens of ms). Source: reasonshape choice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ortools.sat.python import cp_model

__all__ = ["new_model", "new_solver", "enumerate_solutions", "lazy_enumerate"]


def new_model() -> cp_model.CpModel:
    return cp_model.CpModel()


def new_solver(time_limit_s: float) -> cp_model.CpSolver:
    """A CP-SAT solver as every puzzle uses it: one worker (deterministic), ``time_limit_s`` seconds at most, and
    Ctrl-C left to Python. CP-SAT's default ``catch_sigint_signal`` installs its own SIGINT handler for each solve
    and then resets SIGINT to the default action, so after the first solve a Ctrl-C killed the process outright
    instead of raising KeyboardInterrupt (eval, train and ablate record interrupted sessions from that exception).
    """
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.max_time_in_seconds = time_limit_s
    s.parameters.catch_sigint_signal = False
    return s


def enumerate_solutions(
    model: cp_model.CpModel,
    variables: Sequence[cp_model.IntVar],
    max_solutions: int,
    time_limit_s: float = 30.0,
) -> tuple[list[tuple[int, ...]], bool]:
    """Up to ``max_solutions`` distinct assignments of ``variables``, and whether that is all of them.

    Each found assignment is excluded by a blocking constraint (at least one variable differs) before the next
    solve. ``variables`` must determine the solution (every other variable functionally depends on them).

    Returns
    -------
    (solutions, exhausted)
        ``solutions`` as tuples of ints in ``variables`` order; ``exhausted`` is True iff no further solution
        exists (proven infeasible), False when the limit was reached or time ran out.
    """
    return lazy_enumerate(model, variables, max_solutions, None, time_limit_s)


def lazy_enumerate(
    model: cp_model.CpModel,
    variables: Sequence[cp_model.IntVar],
    max_solutions: int,
    cut: Callable[[tuple[int, ...]], list] | None,
    time_limit_s: float = 30.0,
) -> tuple[list[tuple[int, ...]], bool]:
    """Like :func:`enumerate_solutions`, with lazy constraints for global rules (connectivity, one loop).

    ``cut(values)`` inspects a candidate assignment and returns a list of CP-SAT constraint builders (callables
    taking the model) that exclude it and every assignment failing the same way, or ``[]`` when the candidate
    satisfies the global rule. Cuts are added and the model is solved again. Source: reasonshape choice (lazy
    cut generation, the usual way to enforce connectivity exactly on top of a local model).
    """
    solver = new_solver(time_limit_s)
    found: list[tuple[int, ...]] = []
    eq_cache: dict[tuple[int, int], cp_model.IntVar] = {}
    while len(found) < max_solutions:
        status = solver.Solve(model)
        if status == cp_model.INFEASIBLE:
            return found, True
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return found, False  # time limit: not proven
        values = tuple(int(solver.Value(v)) for v in variables)
        if cut is not None:
            cuts = cut(values)
            if cuts:
                for add in cuts:
                    add(model)
                continue
        found.append(values)
        _block(model, variables, values, eq_cache)
    return found, False


def _block(model: cp_model.CpModel, variables, values, eq_cache: dict) -> None:
    """Exclude one assignment: at least one variable differs. Boolean variables are used as literals directly;
    an integer variable gets one reified ``v == x`` literal per (variable, value), created once and reused by later
    blocking clauses (so enumerating many solutions does not grow the model quadratically)."""
    lits = []
    for v, x in zip(variables, values, strict=True):
        if v.is_boolean:
            try:
                lits.append(v.Not() if x == 1 else v)
                continue
            except TypeError:  # an IntVar with domain [0, 1] that CP-SAT does not treat as a literal
                pass
        key = (v.Index(), x)
        eq = eq_cache.get(key)
        if eq is None:
            eq = model.NewBoolVar("")
            model.Add(v == x).OnlyEnforceIf(eq)
            model.Add(v != x).OnlyEnforceIf(eq.Not())
            eq_cache[key] = eq
        lits.append(eq.Not())
    model.AddBoolOr(lits)
