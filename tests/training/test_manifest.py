"""The shipped benchmark manifest (paper A §A: 21 puzzles x 4 levels x 5 = 420) and its loader.

The manifest's instances were made by Simon Tatham's Portable Puzzle Collection (MIT), see
reasonshape/data/README.md. Per row of an implemented puzzle: our game-ID parser accepts it and round-trips it,
and our CP-SAT unique solution equals the collection's own SOLVE move string decoded.
"""

import itertools
import json
import re
import shutil
import subprocess
from collections import Counter

import pytest

from reasonshape import envs
from reasonshape.errors import ConfigError, UnknownPuzzleError
from reasonshape.training import manifest as manifest_mod
from reasonshape.training.manifest import (
    ManifestEntry,
    load_manifest,
    manifest_path,
    skipped_summary,
    split_implemented,
)

ALL = load_manifest()
IMPLEMENTED, _ = split_implemented(ALL)


class TestShippedManifest:
    def test_420_rows_21_puzzles_4_levels_5_each(self):
        assert len(ALL) == 420
        counts = Counter((e.puzzle, e.level) for e in ALL)
        assert set(counts) == {(p, lv) for p in envs.PUZZLE_NAMES for lv in envs.LEVEL_NAMES}
        assert set(counts.values()) == {5}
        for (p, lv), _n in counts.items():
            assert sorted(e.index for e in ALL if e.puzzle == p and e.level == lv) == [0, 1, 2, 3, 4]

    def test_file_order_is_benchmark_order(self):
        keys = [(envs.PUZZLE_NAMES.index(e.puzzle), envs.LEVEL_NAMES.index(e.level), e.index) for e in ALL]
        assert keys == sorted(keys)

    def test_instances_are_distinct_except_dominosa_trivial(self):
        assert len({e.id for e in ALL}) == 420
        for p in envs.PUZZLE_NAMES:
            for lv in envs.LEVEL_NAMES:
                ids = [e.game_id for e in ALL if e.puzzle == p and e.level == lv]
                if (p, lv) != ("dominosa", "trivial"):
                    assert len(set(ids)) == 5, (p, lv)
        # Order 1 dominosa is a 2x3 grid of three 0s and three 1s tiled by 00, 01, 11; exactly 4 of the C(6,3) = 20
        # grids have a unique tiling (checked below with our solver), so one of the 5 instances repeats.
        dom = {e.game_id for e in ALL if e.puzzle == "dominosa" and e.level == "trivial"}
        assert dom == {"1dt:001110", "1dt:011100", "1dt:100011", "1dt:110001"}

    def test_dominosa_order_1_has_exactly_4_unique_puzzles(self):
        if "dominosa" not in envs.list_puzzles():
            pytest.skip("dominosa not implemented")
        p = envs.get("dominosa")
        unique = []
        for zeros in itertools.combinations(range(6), 3):
            desc = "".join("0" if i in zeros else "1" for i in range(6))
            if p.solve(p.parse_game_id(f"1dt:{desc}"), 2).unique:
                unique.append(desc)
        assert unique == ["001110", "011100", "100011", "110001"]

    def test_one_params_per_puzzle_level_matching_the_module_levels(self):
        for p in envs.PUZZLE_NAMES:
            for lv in envs.LEVEL_NAMES:
                params = {e.params for e in ALL if e.puzzle == p and e.level == lv}
                assert len(params) == 1
                if p in envs.list_puzzles():
                    puzzle = envs.get(p)
                    assert puzzle.parse_params(params.pop()) == puzzle.level_params(lv), (p, lv)

    def test_seeds_follow_the_collections_batch_numbering(self):
        # --generate K PARAMS#S gives seeds S, S-1, S-2, ...; repeats are dropped, so suffixes only increase.
        for p in envs.PUZZLE_NAMES:
            for lv in envs.LEVEL_NAMES:
                seeds = [e.tatham_seed for e in ALL if e.puzzle == p and e.level == lv]
                base = seeds[0]
                assert re.fullmatch(r"\d{1,15}", base)
                ks = [0] + [int(re.fullmatch(re.escape(base) + r"-(\d+)", x).group(1)) for x in seeds[1:]]
                assert ks == sorted(set(ks)), (p, lv, seeds)

    def test_file_lines_have_exactly_the_documented_fields(self):
        lines = manifest_path().read_text().splitlines()
        assert len(lines) == 420
        for line in lines:
            assert list(json.loads(line)) == ["puzzle", "level", "index", "params", "game_id", "tatham_seed",
                                              "tatham_solve"]

    @pytest.mark.skipif(shutil.which("sgt-tents", path="/usr/games") is None, reason="sgt-puzzles not installed")
    def test_a_row_is_reproducible_from_its_seed_with_the_collection(self):
        e = next(x for x in ALL if x.puzzle == "tents" and x.level == "normal" and x.index == 3)
        out = subprocess.run(["/usr/games/sgt-tents", "--generate", "1", f"{e.params}#{e.tatham_seed}"],
                             capture_output=True, text=True, timeout=60, env={"DISPLAY": ""}).stdout.strip()
        # The collection prints short params (no difficulty): compare the desc.
        assert out.split(":", 1)[1] == e.game_id.split(":", 1)[1]


@pytest.mark.parametrize("entry", IMPLEMENTED, ids=lambda e: e.id)
def test_row_parses_and_our_unique_solution_is_the_collections(entry):
    p = envs.get(entry.puzzle)
    inst = entry.instance()
    assert p.format_game_id(inst) == entry.game_id
    assert p.unique_solution(inst) == p.decode_tatham_solution(inst, entry.tatham_solve)


class TestLoadManifest:
    def test_filters_by_puzzle_and_level(self):
        got = load_manifest(puzzles=["tents", "solo"], levels="hard")
        assert [(e.puzzle, e.level, e.index) for e in got] == \
            [("solo", "hard", i) for i in range(5)] + [("tents", "hard", i) for i in range(5)]
        assert len(load_manifest(puzzles="net")) == 20
        assert len(load_manifest(levels=("trivial", "easy"))) == 210

    def test_unknown_puzzle_lists_the_21(self):
        with pytest.raises(UnknownPuzzleError, match="sudoku.*solo, keen"):
            load_manifest(puzzles=["sudoku"])

    def test_unknown_level(self):
        with pytest.raises(ConfigError, match="levels must be among.*'extreme'"):
            load_manifest(levels=["extreme"])

    def test_entry_round_trip_and_id(self):
        e = ALL[0]
        assert isinstance(e, ManifestEntry)
        assert ManifestEntry(**e.to_dict()) == e
        assert e.id == "solo/trivial/0"

    def test_custom_path(self, tmp_path):
        path = tmp_path / "m.jsonl"
        path.write_text(json.dumps(ALL[7].to_dict()) + "\n\n")
        assert load_manifest(path=path) == [ALL[7]]

    @pytest.mark.parametrize(("mutate", "message"), [
        (lambda d: d.pop("game_id"), r":1: missing fields \['game_id'\]"),
        (lambda d: d.update(level="medium"), "level must be one of"),
        (lambda d: d.update(puzzle="sudoku"), "puzzle must be one of the 21"),
        (lambda d: d.update(index=-1), "index must be an integer >= 0"),
        (lambda d: d.update(index=True), "index must be an integer >= 0"),
        (lambda d: d.update(tatham_solve=""), "tatham_solve must be a non-empty string"),
        (lambda d: d.update(game_id="9x9:abc"), "game_id must start with params"),
    ])
    def test_malformed_rows_raise_config_error(self, tmp_path, mutate, message):
        d = ALL[0].to_dict()
        mutate(d)
        path = tmp_path / "m.jsonl"
        path.write_text(json.dumps(d) + "\n")
        with pytest.raises(ConfigError, match=message):
            load_manifest(path=path)

    def test_not_json_names_the_line(self, tmp_path):
        path = tmp_path / "m.jsonl"
        path.write_text(json.dumps(ALL[0].to_dict()) + "\n{oops\n")
        with pytest.raises(ConfigError, match=r"m.jsonl:2: not JSON"):
            load_manifest(path=path)

    def test_missing_file(self, tmp_path):
        with pytest.raises(ConfigError, match="cannot read the manifest"):
            load_manifest(path=tmp_path / "absent.jsonl")


class TestSplitImplemented:
    def test_all_implemented_puzzles_kept_in_order(self):
        impl, skipped = split_implemented(ALL)
        pos = {e: i for i, e in enumerate(ALL)}
        assert sorted(impl + skipped, key=pos.get) == ALL
        assert [pos[e] for e in impl] == sorted(pos[e] for e in impl)
        assert [pos[e] for e in skipped] == sorted(pos[e] for e in skipped)
        assert {e.puzzle for e in impl} == set(envs.list_puzzles())

    def test_unimplemented_puzzles_are_skipped(self, monkeypatch):
        real_get = manifest_mod.get

        def fake_get(name):
            if name in ("loopy", "tracks"):
                raise UnknownPuzzleError(name, [])
            return real_get(name)

        monkeypatch.setattr(manifest_mod, "get", fake_get)
        entries = load_manifest(puzzles=["tents", "loopy", "tracks"], levels="easy")
        impl, skipped = split_implemented(entries)
        assert [e.puzzle for e in impl] == ["tents"] * 5
        assert [e.puzzle for e in skipped] == ["loopy"] * 5 + ["tracks"] * 5
        assert skipped_summary(skipped) == "skipped 10 instances of 2 unimplemented puzzles: loopy (5), tracks (5)"
        assert skipped_summary(skipped[:5]) == "skipped 5 instances of 1 unimplemented puzzle: loopy (5)"
        assert skipped_summary([]) == ""
