"""The shared answer reader (reasonshape.envs.answer) on cases no single puzzle shows."""

import pytest

from reasonshape.envs.answer import parse_symbol_grid
from reasonshape.errors import AnswerParseError

SIGNS = {"+": "+", "-": "-", ".": "."}


def test_rows_of_single_dashes_are_rows_not_table_rules():
    # '-' is a symbol: a row of '-' cells, spaced, piped or unspaced, is a grid row, never a Markdown table rule
    block = "- - -\n|-|-|-|\n---\n| - | - | - |"
    assert parse_symbol_grid(block, 4, 3, SIGNS) == (("-",) * 3,) * 4


def test_a_table_rule_is_skipped_only_when_every_cell_is_three_dashes_or_more():
    assert parse_symbol_grid("| a | b |\n|---|---|\n| + | - |", 1, 2, SIGNS) == (("+", "-"),)
    with pytest.raises(AnswerParseError, match="2 rows, expected 1"):  # '|--|--|' is a row (of 4 cells)
        parse_symbol_grid("|--|--|\n| + | - | + | - |", 1, 4, SIGNS)
