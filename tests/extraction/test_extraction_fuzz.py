"""Extraction never fails on any text: for every puzzle, texts mixing the puzzle's own answer rows, claim sentences,
cue words, odd characters and random unicode are scored with a claim graph (no extraction fallback).

A failure here is a crash inside the reader or the builder that the reward layer would only have turned into a
fallback value and a warning (e.g. a superscript digit read as a value: ``"²".isdigit()`` is True, ``int("²")``
raises)."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonshape import envs
from reasonshape.extraction import PuzzleContext
from reasonshape.rewards.scorer import score_completion
from tests.envs._tatham import dev_rows

ODD = ["²", "①", "٣", "¹²", "İ", "\u212a", "ſ", "\x00", "\u200b", "𝟙", "３", "½", "∧", "∨", "≠", "→", "✓", "`", "'",
       '"', "_"]
CUES = ["Suppose", "If", "Wait,", "contradiction", "so", "Therefore", "Let's try", "that's wrong", "Double-checking:",
        "<think>", "</think>", "<answer>", "</answer>", "Row 1:", "Column 2:", "the third row", "position 2",
        "can be", "is not", "must be", "or", "and"]
SEPARATORS = [" ", "\n", "\n\n", ". ", ", ", ": ", ""]


def _pieces(name: str) -> tuple:
    """(puzzle, instance, text pieces) from the puzzle's first dev instance (real collection data)."""
    p = envs.get(name)
    row = next(r for r in dev_rows() if r["puzzle"] == name)
    inst = p.parse_game_id(row["game_id"])
    sol = p.decode_tatham_solution(inst, row["tatham_solve"])
    rows = [ln for ln in p.format_answer(inst, sol).splitlines() if ln.strip()]
    claims = sorted(p.solution_claims(inst))[:12]
    texts = [p.claim_text(c) for c in claims] + [p.claim_text(c.negated()) for c in claims[:4]]
    return p, inst, rows + texts + [tok for r in rows for tok in r.split()][:30]


PIECES = {name: _pieces(name) for name in envs.list_puzzles()}
CONTEXTS = {name: PuzzleContext(p, inst) for name, (p, inst, _) in PIECES.items()}  # shared, as in a GRPO group


def _text(name: str):
    own = st.sampled_from(PIECES[name][2])
    # own sentences with a number swapped for 0 (0-based), 99 (off the grid) or a digit run int() refuses
    swapped = st.tuples(own, st.sampled_from(["0", "99", "9" * 4400])).map(
        lambda tn: re.sub(r"\d+", tn[1], tn[0], count=1))
    part = st.one_of(own, own.map(lambda t: t.replace("1", "²")), swapped, st.sampled_from(ODD + CUES),
                     st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12))
    return st.lists(st.tuples(part, st.sampled_from(SEPARATORS)), max_size=40).map(
        lambda xs: "".join(a + b for a, b in xs))


@pytest.mark.parametrize("name", envs.list_puzzles())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_extraction_never_falls_back(name, data):
    p, inst, _ = PIECES[name]
    text = data.draw(_text(name))
    sc = score_completion(p, inst, text, context=CONTEXTS[name], paths=False)
    assert sc.extraction_fallback is None, (text, sc.extraction_fallback)
    assert sc.metrics is not None or not p.solution_claims(inst)


@pytest.mark.parametrize("name", envs.list_puzzles())
def test_degenerate_repetition_is_read_in_linear_time(name):
    # a policy that degenerates into one token repeated: 100k characters of digits, digit lists, cell openings or
    # line names are scored in well under a second each (a pattern retried at every position of a digit run, as
    # towers' "N towers are visible" was, took 8 s at 40k digits and grows with the square of the length)
    p, inst, _ = PIECES[name]
    for unit in ("9", "9 ", "1,", "(1,", "row 1 ", "1x", "1-"):
        text = unit * (100_000 // len(unit))
        t0 = time.perf_counter()
        sc = score_completion(p, inst, text, context=CONTEXTS[name], paths=False)
        assert time.perf_counter() - t0 < 5.0, unit
        assert sc.extraction_fallback is None
