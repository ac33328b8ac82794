"""build_dataset: TRL's conversational and standard formats, columns that rebuild the instance, per-item determinism,
repeated instances."""

import warnings

import pytest

from reasonshape import envs
from reasonshape.envs.dataset import DEFAULT_SYSTEM_PROMPT, RepeatedInstanceWarning, build_records
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


def test_standard_prompt_format_is_one_string():
    conv = build_records(["tents"], ["easy"], n=2, seed=1)
    std = build_records(["tents"], ["easy"], n=2, seed=1, prompt_format="standard")
    for c, s in zip(conv, std, strict=True):
        assert isinstance(s["prompt"], str)
        assert s["prompt"] == f"{DEFAULT_SYSTEM_PROMPT}\n\n{c['prompt'][1]['content']}"
        assert {k: v for k, v in s.items() if k != "prompt"} == {k: v for k, v in c.items() if k != "prompt"}
    bare = build_records(["tents"], ["easy"], n=1, seed=1, system_prompt=None, prompt_format="standard")[0]
    assert bare["prompt"] == conv[0]["prompt"][1]["content"]
    assert envs.build_dataset(["tents"], ["easy"], n=1, prompt_format="standard").features["prompt"].dtype == "string"
    with pytest.raises(ConfigError, match="prompt_format must be one of conversational, standard, got 'chat'"):
        build_records(["tents"], ["easy"], n=1, prompt_format="chat")


def test_repeated_instances_are_warned_about():
    # dominosa 1dt (a 2x3 grid) has 4 unique-solution instances: 6 rows must repeat some
    with pytest.warns(RepeatedInstanceWarning, match="dominosa trivial: the 6 rows hold 3 distinct instances; rows "
                                                     "repeat") as caught:
        rows = build_records(["dominosa"], ["trivial"], n=6)
    assert len(rows) == 6 and len({r["game_id"] for r in rows}) == 3
    with pytest.warns(RepeatedInstanceWarning) as caught_ds:
        envs.build_dataset(["dominosa"], ["trivial"], n=6)
    assert [w.filename for w in caught] == [w.filename for w in caught_ds] == [__file__]  # the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error", RepeatedInstanceWarning)
        build_records(["tents"], ["easy"], n=4)
