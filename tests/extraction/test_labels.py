"""label_claim: the puzzle's own kinds go to verify_claim; the extractor's generic kinds are judged here."""

import pytest

from reasonshape import envs
from reasonshape.envs import Claim, ClaimLabel
from reasonshape.errors import ClaimError
from reasonshape.extraction.labels import label_claim

SOLO = envs.get("solo")
# A 4x4 sudoku (2x2 boxes) from the collection's dev data.
INST = SOLO.parse_game_id("2x2:b3_1b2b2b1_3b")
SOL = SOLO.unique_solution(INST)
ROW1 = tuple((1, c) for c in range(1, 5))


class TestGenericKinds:
    def test_valid_claims_are_labelled(self):
        v = SOL[0][0]
        others = tuple(x for x in range(1, 5) if x != v)
        assert label_claim(SOLO, INST, Claim("candidates", ((1, 1),), (v, others[0]))) is ClaimLabel.CORRECT
        assert label_claim(SOLO, INST, Claim("candidates", ((1, 1),), others[:2])) is ClaimLabel.WRONG
        # a row of a 4x4 sudoku holds each digit once
        assert label_claim(SOLO, INST, Claim("count", ROW1, (1, 4))) is ClaimLabel.CORRECT
        assert label_claim(SOLO, INST, Claim("count", ROW1, (2, 4))) is ClaimLabel.WRONG
        assert label_claim(SOLO, INST, Claim("count_remaining", ROW1, (1, 4))) is ClaimLabel.UNVERIFIABLE

    @pytest.mark.parametrize("claim", [
        Claim("candidates", (), (1, 2)),            # IndexError before
        Claim("count", (), (0, 4)),                 # labelled correct before: no cell holds a 4
        Claim("count_remaining", (), (1, 4)),       # labelled unverifiable before
    ])
    def test_a_generic_claim_without_cells_raises_claim_error(self, claim):
        with pytest.raises(ClaimError, match="names at least one cell"):
            label_claim(SOLO, INST, claim)

    @pytest.mark.parametrize("claim", [
        Claim("candidates", ((1, 1), (1, 2)), (1, 2)),  # only (1,1) was read
        Claim("candidates", ((0, 0),), (1, 2)),         # read the last cell of the last row
        Claim("candidates", ((5, 1),), (1, 2)),         # IndexError
        Claim("candidates", ((1, 1),), 3),              # TypeError (3 is not a collection)
        Claim("count", ROW1, 4),                        # TypeError on unpacking
        Claim("count", ROW1, (-1, 4)),                  # labelled wrong
        Claim("count", ROW1, ("1", 4)),                 # labelled wrong
    ])
    def test_malformed_generic_claims_raise_claim_error(self, claim):
        with pytest.raises(ClaimError):
            label_claim(SOLO, INST, claim)
