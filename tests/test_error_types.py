"""Every deliberate error on bad input is a ReasonshapeError (README: "every deliberate error is a
reasonshape.errors.ReasonshapeError that is also a ValueError / KeyError / ImportError")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from reasonshape import envs
from reasonshape.errors import ConfigError, ReasonshapeError
from tests.envs._tatham import dev_rows

ROOT = Path(__file__).resolve().parents[1]


def _first_instance(name: str):
    row = next(r for r in dev_rows(name))
    return envs.get(name).parse_game_id(row["game_id"])


TENTS = envs.get("tents")
TENTS_INST = _first_instance("tents")


def _llm_chunk_tokens():
    from reasonshape.extraction.llm import extract_with_llm

    extract_with_llm(TENTS, TENTS_INST, "text", backend=None, chunk_tokens=0)


def _scorer_cache():
    from reasonshape.rewards.scorer import Scorer

    Scorer(cache_size=0)


def _register_bad_name():
    class Renamed(type(TENTS)):
        name = "sudoku"

    envs.register_puzzle(Renamed())


def _deduce_fast():
    from reasonshape.extraction import deduce_trace

    deduce_trace(TENTS, TENTS_INST, "fast")


CALLS = {
    "level_params(medium)": lambda: TENTS.level_params("medium"),
    "generate(3)": lambda: TENTS.generate(3),
    "generate(backend=x)": lambda: TENTS.generate("easy", backend="x"),
    "solve(max_solutions=0)": lambda: TENTS.solve(TENTS_INST, 0),
    "build_dataset(n=0)": lambda: envs.build_dataset(["tents"], ["easy"], n=0),
    "build_dataset(no puzzles)": lambda: envs.build_dataset([], ["easy"]),
    "build_dataset(no levels)": lambda: envs.build_dataset(["tents"], []),
    "deduce_trace(style=fast)": _deduce_fast,
    "extract_with_llm(chunk_tokens=0)": _llm_chunk_tokens,
    "Scorer(cache_size=0)": _scorer_cache,
    "register_puzzle(bad name)": _register_bad_name,
}


@pytest.mark.parametrize("call", list(CALLS))
def test_bad_arguments_raise_config_error(call):
    with pytest.raises(ReasonshapeError) as e:
        CALLS[call]()
    assert isinstance(e.value, ConfigError) and isinstance(e.value, ValueError)


#: Puzzles whose SOLVE move need not name every cell (tents, lights, bridges, track pieces): dropping an item of a
#: real move still leaves a well-formed move, so the "incomplete" case does not apply to them.
PARTIAL_MOVES = {"bridges", "lightup", "tents", "tracks"}


def _incomplete(name: str, move: str) -> str:
    """``move`` with its last item (cell, edge, number) dropped."""
    if ";" in move:
        items = [x for x in move.split(";") if x]
        return ";".join(items[:-1])
    pattern = {"signpost": r"[0-9]+(?=[a-h]$)", "loopy": r"[0-9]+[yn]$", "range": r"[BWE],[0-9]+,[0-9]+$",
               "solo": r",[0-9]+$"}.get(name, r".$")
    return re.sub(pattern, "", move)


def _malformed(name: str, move: str) -> dict[str, object]:
    """Malformed variants of the real SOLVE move ``move`` of puzzle ``name``, by what is wrong with them."""
    cases = {
        "garbage": "garbage", "empty": "", "bare prefix": move[0], "bare prefix and ;": move[0] + ";",
        "not a string": None, "wrong prefix": "X" + move[1:], "trailing garbage": move + "x",
        "trailing item": move.rstrip(";") + ";Q0,0", "letters for digits": move[0] + "xyz",
        # the first number of the move made 999 (off the grid, out of range, or the wrong length)
        "number out of range": re.sub(r"[0-9]+", "999", move, count=1),
        "5,000 digits": move[0] + ";T" + "1" * 5000 + ",0" if ";" in move else move[0] + "1" * 5000,
    }
    if name not in PARTIAL_MOVES:
        cases["incomplete"] = _incomplete(name, move)
    return cases


MALFORMED = [(name, case) for name in envs.list_puzzles()
             for case in _malformed(name, dev_rows(name)[0]["tatham_solve"])]


@pytest.mark.parametrize(("name", "case"), MALFORMED, ids=[f"{n}-{c}" for n, c in MALFORMED])
def test_malformed_solve_move_is_a_config_error(name, case):
    """Every decoder is strict and raises the one documented type (Puzzle.decode_tatham_solution), with the move
    shortened in the message; the real move it was made from still decodes."""
    p = envs.get(name)
    inst = _first_instance(name)
    real = dev_rows(name)[0]["tatham_solve"]
    assert p.decode_tatham_solution(inst, real) == p.unique_solution(inst)
    move = _malformed(name, real)[case]
    assert move != real
    with pytest.raises(ConfigError) as e:
        p.decode_tatham_solution(inst, move)
    assert len(str(e.value)) < 300


#: ``raise ValueError`` sites kept on purpose: (file, enclosing function) -> why.
ALLOWED_VALUE_ERRORS = {
    # Reads the extractor LLM's reply (not user input); every caller catches ValueError and keeps the trace.
    ("reasonshape/extraction/llm.py", "parse_json"),
}


def _bare_value_errors(path: Path) -> list[tuple[str, int]]:
    """(enclosing function, line) of every ``raise ValueError`` / ``raise ValueError(...)`` in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            f = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.Raise) and child.exc is not None:
                exc = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
                if isinstance(exc, ast.Name) and exc.id == "ValueError":
                    out.append((func, child.lineno))
            visit(child, f)

    visit(tree, "<module>")
    return out


def test_no_bare_value_error_in_the_package():
    found = []
    for path in sorted((ROOT / "reasonshape").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for func, line in _bare_value_errors(path):
            if (rel, func) not in ALLOWED_VALUE_ERRORS:
                found.append(f"{rel}:{line} ({func})")
    assert not found, "raise a ReasonshapeError subclass (e.g. ConfigError) instead of ValueError at: " + ", ".join(
        found)
