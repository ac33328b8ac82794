"""Labelling claims by the puzzle: correct / wrong / unverifiable (paper A §B step 4).

Claims of the puzzle's own kinds go to :meth:`Puzzle.verify_claim`. The extractor's generic kinds are judged here
from the puzzle's solutions, by the same rule (correct iff true in every solution, wrong iff false in every
solution):

* ``candidates`` — ``Claim("candidates", (cell,), values)`` "(2,5) can be 1 or 6": true iff the solution value
  is among the listed values (``cell`` one of the puzzle's variables, ``values`` a tuple);
* ``count`` — ``Claim("count", cells, (n, value))`` "row 3 has 2 tents": true iff the cells hold exactly ``n``
  (an integer >= 0) of that value;
* ``count_remaining`` — "row 3 needs 2 more tents": depends on the solver's partial state, not on the solution:
  always ``unverifiable`` (reasonshape choice).

Every generic claim names at least one cell; a claim outside these shapes raises :class:`ClaimError`, like a
puzzle's own claim outside its vocabulary.
"""

from __future__ import annotations

import numbers

from reasonshape.envs.base import Claim, ClaimLabel, Instance, Puzzle, check_instance, label_over_solutions
from reasonshape.errors import ClaimError

__all__ = ["GENERIC_KINDS", "label_claim"]

GENERIC_KINDS = ("candidates", "count", "count_remaining")


def label_claim(puzzle: Puzzle, instance: Instance, claim: Claim) -> ClaimLabel:
    """The puzzle's verdict on ``claim``: the label a claim-graph node gets (never ``tentative``; that label comes
    from the trace's wording).

    Parameters
    ----------
    puzzle, instance
        A puzzle and an instance of it (unique or not: up to ``puzzle.CLAIM_SOLUTION_LIMIT`` solutions are read).
    claim : Claim
        A claim of the puzzle's own ``CLAIM_KINDS`` (delegated to :meth:`Puzzle.verify_claim`) or of the
        extractor's :data:`GENERIC_KINDS` (judged here, see the module docstring).

    Returns
    -------
    ClaimLabel
        ``correct`` iff true in every solution, ``wrong`` iff false in every solution, else ``unverifiable``
        (also for ``count_remaining``, and when the instance has no solution).

    Raises
    ------
    ClaimError
        ``verify_claim`` refuses the claim (a kind outside the vocabulary, a cell off the grid), or a generic claim
        is malformed: no cell, a ``candidates`` claim that is not one variable of the instance and a tuple of
        values, a ``count`` value that is not ``(n, value)`` with ``n`` an integer >= 0 (see the module docstring).
    ConfigError
        ``instance`` is not an instance of ``puzzle``.

    Source: paper A §B step 4 (labels); the generic kinds' rules are reasonshape choices.
    """
    check_instance(puzzle, instance)
    if claim.kind not in GENERIC_KINDS:
        return puzzle.verify_claim(instance, claim)
    _check_generic(puzzle, instance, claim)
    if claim.kind == "count_remaining":
        return ClaimLabel.UNVERIFIABLE

    def holds(s) -> bool:
        if claim.kind == "candidates":
            truth = puzzle.solution_value(instance, s, claim.cells[0]) in claim.value
        else:
            n, val = claim.value
            truth = sum(puzzle.solution_value(instance, s, c) == val for c in claim.cells) == n
        return truth if claim.positive else not truth

    return label_over_solutions(puzzle, instance, holds)


def _check_generic(puzzle: Puzzle, instance: Instance, claim: Claim) -> None:
    """Raise :class:`ClaimError` unless ``claim`` has the shape of its generic kind (module docstring)."""
    if not claim.cells:
        raise ClaimError(f"{puzzle.name}: a {claim.kind} claim names at least one cell, got none")
    if claim.kind == "candidates":
        if len(claim.cells) != 1 or claim.cells[0] not in puzzle.variables(instance):
            raise ClaimError(f"{puzzle.name}: a candidates claim names one cell of the grid, got {claim.cells}")
        if not isinstance(claim.value, tuple):
            raise ClaimError(f"{puzzle.name}: a candidates claim's value is a tuple of values, got {claim.value!r}")
    elif claim.kind == "count":
        v = claim.value
        if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], numbers.Integral)
                and not isinstance(v[0], bool) and v[0] >= 0):
            raise ClaimError(f"{puzzle.name}: a count claim's value is (n, value) with n an integer >= 0, got {v!r}")
