"""build_dataset: TRL's conversational format, columns that rebuild the instance, per-item determinism."""

import pytest

from reasonshape import envs
from reasonshape.envs.dataset import DEFAULT_SYSTEM_PROMPT, build_records
from reasonshape.errors import ConfigError


def test_columns_and_rebuild():
    ds = envs.build_dataset(["tents", "solo"], ["trivial", "easy"], n=2, seed=3)
    assert len(ds) == 8
    assert set(ds.column_names) == {"prompt", "puzzle", "game_id", "level"}
    row = ds[0]
    assert row["prompt"][0] == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    assert row["prompt"][1]["role"] == "user" and "<answer>" in row["prompt"][1]["content"]
    for r in ds:
        p = envs.get(r["puzzle"])
        inst = p.parse_game_id(r["game_id"])
        assert p.render_prompt(inst) == r["prompt"][-1]["content"]
        assert p.solve(inst, 2).unique


def test_items_are_reproducible_and_independent_of_n():
    a = build_records(["unruly"], ["easy"], n=3, seed=9)
    b = build_records(["unruly"], ["easy"], n=1, seed=9)
    assert a[0] == b[0]
    assert len({r["game_id"] for r in a}) == 3
    assert build_records(["unruly"], ["easy"], n=1, seed=10)[0] != b[0]


def test_no_system_prompt_and_bad_arguments():
    rec = build_records("tents", "trivial", n=1, system_prompt=None)[0]
    assert [m["role"] for m in rec["prompt"]] == ["user"]
    with pytest.raises(ValueError, match="n must be >= 1"):
        build_records(["tents"], ["easy"], n=0)
    with pytest.raises(ValueError, match="level must be one of"):
        build_records(["tents"], ["impossible"], n=1)
    with pytest.raises(KeyError, match="unknown puzzle"):
        build_records(["sudoku"], ["easy"], n=1)


def test_levels_may_be_params_strings_and_must_not_be_empty():
    params = envs.get("tents").LEVELS["trivial"]
    rec = build_records(["tents"], [params], n=1)[0]
    assert rec["level"] == params and rec["game_id"].startswith(params + ":")
    with pytest.raises(ConfigError, match="puzzles must name at least one puzzle"):
        envs.build_dataset([], ["easy"])
    with pytest.raises(ConfigError, match="levels must name at least one level"):
        envs.build_dataset(["tents"], [])
