"""Labelling claims by the puzzle: correct / wrong / unverifiable (paper A §B step 4).

Claims of the puzzle's own kinds go to :meth:`Puzzle.verify_claim`. The extractor's generic kinds are judged here
from the puzzle's solutions, by the same rule (correct iff true in every solution, wrong iff false in every
solution):

* ``candidates`` — "(2,5) can be 1 or 6": true iff the solution value is among the listed values;
* ``count`` — "row 3 has 2 tents": true iff the cells hold exactly ``n`` of that value;
* ``count_remaining`` — "row 3 needs 2 more tents": depends on the solver's partial state, not on the solution:
  always ``unverifiable`` (reasonshape choice).
"""

from __future__ import annotations

from reasonshape.envs.base import Claim, ClaimLabel, Instance, Puzzle

__all__ = ["GENERIC_KINDS", "label_claim"]

GENERIC_KINDS = ("candidates", "count", "count_remaining")


def label_claim(puzzle: Puzzle, instance: Instance, claim: Claim) -> ClaimLabel:
    """The puzzle's verdict on ``claim`` (never ``tentative``; that label comes from the trace's wording)."""
    if claim.kind not in GENERIC_KINDS:
        return puzzle.verify_claim(instance, claim)
    if claim.kind == "count_remaining":
        return ClaimLabel.UNVERIFIABLE
    sols = puzzle.solve(instance, puzzle.CLAIM_SOLUTION_LIMIT).solutions
    if not sols:
        return ClaimLabel.UNVERIFIABLE
    seen = set()
    for s in sols:
        if claim.kind == "candidates":
            truth = puzzle.solution_value(instance, s, claim.cells[0]) in claim.value
        else:
            n, val = claim.value
            truth = sum(puzzle.solution_value(instance, s, c) == val for c in claim.cells) == n
        seen.add(truth if claim.positive else not truth)
    if len(seen) == 2:
        return ClaimLabel.UNVERIFIABLE
    return ClaimLabel.CORRECT if seen == {True} else ClaimLabel.WRONG
