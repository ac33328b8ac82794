"""score_completion reads the final answer block once per completion (reasonshape.rewards.scorer)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasonshape.envs import answer as A
from reasonshape.envs import get
from reasonshape.errors import AnswerParseError
from reasonshape.rewards import scorer as S
from reasonshape.rewards.scorer import score_completion

GID = "6x6de:bgabecha,1,2,1,1,0,2,1,1,1,1,1,2"  # the tents instance of test_reward_functions
GRID = ". T Y . . .\n. . . . Y T\nY . T Y . .\nT . . Y . .\n. Y . T . .\n. T . . Y T"

TEXTS = {
    "final block": f"I reason.\n<answer>\n{GRID}\n</answer>",
    "draft only": f"<think>try\n<answer>\n{GRID}\n</answer>\n</think>\nDone.",
    "no tag": "no answer here",
    "unclosed think": f"<think>\n<answer>{GRID}</answer>",
}


@pytest.mark.parametrize("name", TEXTS)
def test_the_scorer_extracts_the_block_once(monkeypatch, name):
    calls = []
    real = A.extract_answer_block

    def counting(text):
        calls.append(text)
        return real(text)

    monkeypatch.setattr(A, "extract_answer_block", counting)
    monkeypatch.setattr(S, "extract_answer_block", counting, raising=False)  # the name the scorer imported before
    puzzle = get("tents")
    inst = puzzle.parse_game_id(GID)

    def no_parse(text, instance):  # the puzzle's own reading is the puzzle's: counted out here
        raise AnswerParseError("stub")

    monkeypatch.setattr(puzzle, "parse_answer", no_parse)
    s = score_completion(puzzle, inst, TEXTS[name], extract=False)
    assert len(calls) == 1
    assert s.has_answer_block == (name == "final block")
    assert s.answer_in_reasoning == (name in ("draft only", "unclosed think"))


_PIECES = st.sampled_from(["<think>", "</think>", "<answer>", "</answer>", "<ANSWER>", "x", "\n", "```", " "])


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_read_answer_block_is_both_readings_at_once(text):
    assert A.read_answer_block(text) == (A.extract_answer_block(text), A.answer_only_in_reasoning(text))


def test_the_scorer_keeps_sentence_memos_for_its_most_recent_instances_only(monkeypatch):
    """A group's completions share one context's per-sentence memos; older instances' memos are emptied, so the
    memory they hold is bounded by SENTENCE_MEMO_INSTANCES contexts."""
    monkeypatch.setattr(S, "SENTENCE_MEMO_INSTANCES", 2)
    tents = get("tents")
    game_ids = [tents.format_game_id(tents.generate("easy", seed=0, index=i)) for i in range(3)]
    scorer = S.Scorer()
    text = "Row 1 has one tent. So (1,2) is a tent. Then (2,2) is not a tent.\n<answer>\nT\n</answer>"
    for gid in game_ids:
        scorer.score("tents", gid, text)
    contexts = [scorer._instances[("tents", gid)][2] for gid in game_ids]
    assert [bool(c.sentence_readings) for c in contexts] == [False, True, True]
    # the schema reader's predicate memo (by window text) is filled by sentences too, and emptied with them
    assert [bool(c.reader._predicates) for c in contexts] == [False, True, True]
    scorer.score("tents", game_ids[0], text + " Done.")  # the first instance again: the least recent one is emptied
    assert [bool(c.sentence_readings) for c in contexts] == [True, False, True]
    assert [bool(c.reader._predicates) for c in contexts] == [True, False, True]
    scorer.clear_sentence_memos()
    assert not any(c.sentence_readings or c.sentence_cues or c.sentence_units or c.reader._predicates
                   for c in contexts)
