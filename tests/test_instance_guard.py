"""A puzzle given another puzzle's instance (or no instance at all) raises ConfigError naming both, at every public
entry point; the extraction and scoring entry points take a puzzle name as well as a Puzzle."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonshape import envs
from reasonshape.envs import Claim, ClaimLabel
from reasonshape.envs.base import INSTANCE_METHODS
from reasonshape.errors import ClaimError, ConfigError, UnknownPuzzleError
from reasonshape.extraction import PuzzleContext, deduce_trace, extract_graph, label_claim
from reasonshape.rewards.scorer import score_completion
from tests.envs._tatham import dev_rows

NAMES = envs.list_puzzles()


def _inst(name: str):
    return envs.get(name).parse_game_id(dev_rows(name)[0]["game_id"])


TENTS, KEEN = envs.get("tents"), envs.get("keen")
TENTS_INST, KEEN_INST = _inst("tents"), _inst("keen")

#: The arguments after ``instance`` of each guarded method (``parse_answer`` takes the text first).
ARGS = {
    "format_desc": (), "format_game_id": (), "render_prompt": (), "format_answer": (None,), "check": (None,),
    "solve": (), "unique_solution": (), "decode_tatham_solution": ("S",), "solution_claims": (),
    "given_claims": (), "variables": (), "units": (),
    "verify_claim": (Claim("value", ((1, 1),), 1),), "parse_answer": ("<answer>1</answer>",),
}


def _call(puzzle, method, instance):
    args = list(ARGS[method])
    args.insert(INSTANCE_METHODS[method], instance)
    return getattr(puzzle, method)(*args)


def test_the_table_covers_every_guarded_method():
    assert set(ARGS) == set(INSTANCE_METHODS)


@pytest.mark.parametrize("name", NAMES)
def test_foreign_instance_is_refused_by_every_method(name):
    p = envs.get(name)
    other, inst = ("keen", KEEN_INST) if name == "tents" else ("tents", TENTS_INST)
    for method in INSTANCE_METHODS:
        with pytest.raises(ConfigError, match=f"a {other} instance was given to {name}.{method}"):
            _call(p, method, inst)


@pytest.mark.parametrize("name", NAMES)
def test_check_refuses_text_instead_of_a_plausible_violation(name):
    # a new user passing the completion (or the grid as text) got e.g. tents' "shape" violation for a correct grid
    p = envs.get(name)
    inst = _inst(name)
    sol = p.unique_solution(inst)
    text = p.format_answer(inst, sol)
    for answer in (text, f"<answer>{text}</answer>", text.encode()):
        with pytest.raises(ConfigError, match=rf"^{name}\.check expects a ParsedAnswer or a solution value, got "
                                              r"(str|bytes) .*: read text with parse_answer\(text, instance\) first"):
            p.check(inst, answer)
    with pytest.raises(ConfigError, match="got str"):
        p.check(instance=inst, answer=text)
    assert p.check(inst, sol).ok and p.check(inst, p.parse_answer(f"<answer>{text}</answer>", inst)).ok


def test_the_audit_cases():
    with pytest.raises(ConfigError, match="a tents instance was given to keen"):
        KEEN.render_prompt(TENTS_INST)  # was AttributeError: 'TentsData' object has no attribute 'cages'
    with pytest.raises(ConfigError, match="a tents instance was given to keen"):
        KEEN.check(TENTS_INST, TENTS.unique_solution(TENTS_INST))  # was a plausible verdict
    with pytest.raises(ConfigError, match="a keen instance was given to tents"):
        extract_graph(TENTS, KEEN_INST, "(1,1) is a tent.")
    with pytest.raises(ConfigError, match="a keen instance was given to tents"):
        deduce_trace(TENTS, KEEN_INST)
    with pytest.raises(ConfigError, match="a keen instance was given to tents"):
        score_completion(TENTS, KEEN_INST, "<answer>T</answer>")
    with pytest.raises(ConfigError, match="a keen instance was given to tents"):
        label_claim(TENTS, KEEN_INST, Claim("count_remaining", ((1, 1),), (1, "T")))


def test_keyword_arguments_and_missing_instance():
    with pytest.raises(ConfigError, match="a tents instance was given to keen.check"):
        KEEN.check(instance=TENTS_INST, answer=None)
    assert TENTS.check(answer=TENTS.unique_solution(TENTS_INST), instance=TENTS_INST).ok
    with pytest.raises(TypeError, match="instance"):
        TENTS.check(answer=None)


def test_a_game_id_string_is_not_an_instance():
    gid = TENTS.format_game_id(TENTS_INST)
    with pytest.raises(ConfigError, match="tents.render_prompt expects a tents Instance, got str"):
        TENTS.render_prompt(gid)
    with pytest.raises(ConfigError, match="expects a tents Instance, got str"):
        extract_graph(TENTS, gid, "text")


def test_subclasses_are_guarded_when_defined():
    class Variant(type(TENTS)):
        def render_prompt(self, instance):
            return "variant"

    assert Variant.render_prompt._instance_guarded
    assert Variant().render_prompt(TENTS_INST) == "variant"
    with pytest.raises(ConfigError, match="a keen instance was given to tents.render_prompt"):
        Variant().render_prompt(KEEN_INST)


@pytest.mark.parametrize("name", NAMES)
def test_every_puzzle_class_is_guarded(name):
    cls = type(envs.get(name))
    for method in INSTANCE_METHODS:
        assert getattr(cls, method)._instance_guarded, (name, method)


def test_entry_points_take_a_puzzle_name():
    text = deduce_trace("tents", TENTS_INST).text
    assert text == deduce_trace(TENTS, TENTS_INST).text
    by_name = extract_graph("tents", TENTS_INST, text).graph
    by_puzzle = extract_graph(TENTS, TENTS_INST, text).graph
    assert [n.claim for n in by_name.nodes()] == [n.claim for n in by_puzzle.nodes()] != []
    assert PuzzleContext("tents", TENTS_INST).puzzle is TENTS
    a, b = score_completion("tents", TENTS_INST, text), score_completion(TENTS, TENTS_INST, text)
    assert a.correct and b.correct and a.metrics.eta == b.metrics.eta


@pytest.mark.parametrize("entry", [extract_graph, deduce_trace, score_completion])
def test_entry_points_refuse_other_puzzle_types(entry):
    args = (TENTS_INST, "text") if entry is not deduce_trace else (TENTS_INST,)
    with pytest.raises(ConfigError, match="puzzle must be a Puzzle or a puzzle name such as 'tents', got int"):
        entry(3, *args)
    with pytest.raises(UnknownPuzzleError, match="sudoku"):
        entry("sudoku", *args)


def test_llm_options_need_a_backend():
    with pytest.raises(ConfigError, match=r"llm_options \['chunk_tokens'\] apply only with an llm_backend"):
        extract_graph(TENTS, TENTS_INST, "text", chunk_tokens=10)


def test_label_claim_is_exported_and_labels_generic_kinds():
    import reasonshape.extraction as extraction

    assert "label_claim" in extraction.__all__
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "label_claim" in readme
    sol = TENTS.unique_solution(TENTS_INST)
    r, c = next((r + 1, c + 1) for r, row in enumerate(sol) for c, v in enumerate(row) if v == "T")
    cand = Claim("candidates", ((r, c),), ("T", "."))
    with pytest.raises(ClaimError):
        TENTS.verify_claim(TENTS_INST, cand)
    assert label_claim(TENTS, TENTS_INST, cand) == ClaimLabel.CORRECT
    own = Claim("value", ((r, c),), "T")
    assert label_claim(TENTS, TENTS_INST, own) == TENTS.verify_claim(TENTS_INST, own)
