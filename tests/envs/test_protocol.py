"""Conformance of every registered puzzle to the protocol, on the collection's own instances.

Per-puzzle behaviour (generation, corruption, prose answers...) is tested in tests/envs/test_<puzzle>.py; this file
checks what must hold uniformly, so a puzzle that drifts from the protocol fails here.
"""

import pickle

import pytest

from reasonshape import envs
from reasonshape.envs import ClaimLabel, Instance, ParsedAnswer
from reasonshape.errors import UnknownPuzzleError
from tests.envs._tatham import dev_rows

ROWS = dev_rows()
IMPLEMENTED = envs.list_puzzles()
DEV = [r for r in ROWS if r["puzzle"] in IMPLEMENTED]


def _id(r):
    return f"{r['puzzle']}-{r['level']}-{r['tatham_seed'][:6]}"


def test_registry_names_all_21():
    assert len(envs.PUZZLE_NAMES) == 21
    assert set(r["puzzle"] for r in ROWS) == set(envs.PUZZLE_NAMES)


def test_unknown_puzzle_lists_known():
    with pytest.raises(UnknownPuzzleError) as e:
        envs.get("sudokuu")
    assert "sudokuu" in str(e.value)


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_puzzle_declares_protocol_constants(name):
    p = envs.get(name)
    assert p.name == name
    assert tuple(p.LEVELS) == envs.LEVEL_NAMES
    for level in envs.LEVEL_NAMES:
        params = p.level_params(level)
        assert p.parse_params(p.format_params(params)) == params
        assert p.parse_params(p.format_params(params, full=False)) is not None
    assert p.ANSWER_SYMBOLS, "ANSWER_SYMBOLS documents the answer format"
    assert pickle.loads(pickle.dumps(p)) is p


@pytest.mark.parametrize("row", DEV, ids=_id)
def test_dev_instance_conforms(row):
    p = envs.get(row["puzzle"])
    inst = p.parse_game_id(row["game_id"])
    assert isinstance(inst, Instance) and inst.puzzle == p.name
    assert p.format_game_id(inst) == row["game_id"]
    assert inst.game_id == row["game_id"]

    res = p.solve(inst, max_solutions=2)
    assert res.unique
    sol = res.solutions[0]
    assert sol == p.decode_tatham_solution(inst, row["tatham_solve"])
    assert p.check(inst, sol).ok

    text = "Some reasoning first.\n<answer>\n" + p.format_answer(inst, sol) + "\n</answer>"
    parsed = p.parse_answer(text, inst)
    assert isinstance(parsed, ParsedAnswer) and parsed.source == "answer_block"
    assert parsed.value == sol
    assert p.check(inst, parsed).ok

    prompt = p.render_prompt(inst)
    assert "<answer>" in prompt and "(row, column)" in prompt.replace("(row,column)", "(row, column)")

    c_star = p.solution_claims(inst)
    assert c_star, "C* is never empty"
    for claim in sorted(c_star)[:40]:
        assert p.verify_claim(inst, claim) is ClaimLabel.CORRECT, claim
        assert p.verify_claim(inst, claim.negated()) is ClaimLabel.WRONG, claim

    domains = p.variables(inst)
    for unit in p.units(inst):
        assert set(unit.variables) <= set(domains), unit.name
        values = tuple(p.solution_value(inst, sol, v) for v in unit.variables)
        assert unit.allowed(values), f"solution violates unit {unit.name}"
