"""The benchmark manifest: paper A's 21 puzzles x 4 levels x 5 instances = 420, shipped inside the package.

The manifest (``reasonshape/data/benchmark_manifest.jsonl``) was generated once by ``benchmarks/make_manifest.py``
with the collection's own generator (Debian ``sgt-puzzles`` 20230122) and is the record of the benchmark: each line
holds the puzzle, level, index, full params, game ID (``params:desc``), the collection's seed and its ``SOLVE``
move string. Instances of puzzles that reasonshape does not implement yet stay in the manifest;
:func:`split_implemented` separates them so that eval can skip them and say so.

>>> entries = load_manifest(puzzles="tents", levels=["easy"])
>>> len(entries), entries[0].id
(5, 'tents/easy/0')

Source: paper A §A (21 puzzles, 4 levels, 5 fixed instances per (puzzle, level)); the puzzle list, the params and
the file format are reasonshape choices (METHOD.md §A, reasonshape/data/README.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from reasonshape.envs.base import LEVEL_NAMES, Instance
from reasonshape.envs.registry import PUZZLE_NAMES, get
from reasonshape.errors import ConfigError, UnknownPuzzleError

__all__ = ["MANIFEST_RESOURCE", "ManifestEntry", "manifest_path", "load_manifest", "check_puzzle_names",
           "split_implemented", "skipped_summary"]

#: Package-relative path of the shipped manifest.
MANIFEST_RESOURCE = "data/benchmark_manifest.jsonl"

_FIELDS = ("puzzle", "level", "index", "params", "game_id", "tatham_seed", "tatham_solve")


@dataclass(frozen=True)
class ManifestEntry:
    """One benchmark instance, as recorded in the manifest.

    Attributes
    ----------
    puzzle : str
        One of :data:`reasonshape.envs.PUZZLE_NAMES`.
    level : str
        One of :data:`reasonshape.envs.LEVEL_NAMES` (``"trivial"``, ``"easy"``, ``"normal"``, ``"hard"``).
    index : int
        0-based instance number within (puzzle, level); 0-4 in the shipped manifest.
    params : str
        The collection's full params string, difficulty included (e.g. ``"8x8dt"``).
    game_id : str
        ``params:desc``, as :meth:`reasonshape.envs.Puzzle.parse_game_id` accepts.
    tatham_seed : str
        The seed the collection generated this instance from; ``sgt-<puzzle> --generate 1 PARAMS#SEED``
        reproduces it.
    tatham_solve : str
        The collection's solution as its ``SOLVE`` move string (decoded by ``Puzzle.decode_tatham_solution``).
    """

    puzzle: str
    level: str
    index: int
    params: str
    game_id: str
    tatham_seed: str
    tatham_solve: str

    @property
    def id(self) -> str:
        """A stable instance id, ``"puzzle/level/index"`` (e.g. ``"tents/easy/3"``)."""
        return f"{self.puzzle}/{self.level}/{self.index}"

    def instance(self) -> Instance:
        """The parsed instance.

        Raises
        ------
        UnknownPuzzleError
            The puzzle is not implemented.
        GameIdError
            The game ID does not parse (a bug in the puzzle module: the collection wrote it).
        """
        return get(self.puzzle).parse_game_id(self.game_id)

    def to_dict(self) -> dict[str, Any]:
        """The manifest line as a dict (the fields in file order)."""
        return asdict(self)


def manifest_path() -> Path:
    """Filesystem path of the shipped manifest (``importlib.resources``; the package is installed unzipped)."""
    return Path(str(resources.files("reasonshape").joinpath(MANIFEST_RESOURCE)))


def _as_list(value: str | Iterable[str] | None, name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    out = list(value)
    if not all(isinstance(v, str) for v in out):
        raise ConfigError(f"{name} must be a string or a list of strings, got {value!r}")
    return out


def _entry(obj: Any, where: str) -> ManifestEntry:
    if not isinstance(obj, dict):
        raise ConfigError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    missing = [f for f in _FIELDS if f not in obj]
    if missing:
        raise ConfigError(f"{where}: missing fields {missing}")
    if obj["puzzle"] not in PUZZLE_NAMES:
        raise ConfigError(f"{where}: puzzle must be one of the 21 benchmark puzzles, got {obj['puzzle']!r}")
    if obj["level"] not in LEVEL_NAMES:
        raise ConfigError(f"{where}: level must be one of {list(LEVEL_NAMES)}, got {obj['level']!r}")
    if isinstance(obj["index"], bool) or not isinstance(obj["index"], int) or obj["index"] < 0:
        raise ConfigError(f"{where}: index must be an integer >= 0, got {obj['index']!r}")
    for f in ("params", "game_id", "tatham_seed", "tatham_solve"):
        if not isinstance(obj[f], str) or not obj[f]:
            raise ConfigError(f"{where}: {f} must be a non-empty string, got {obj[f]!r}")
    if not obj["game_id"].startswith(obj["params"] + ":"):
        raise ConfigError(f"{where}: game_id must start with params + ':', got {obj['game_id'][:60]!r}")
    return ManifestEntry(*(obj[f] for f in _FIELDS))


def check_puzzle_names(names: Sequence[str] | None) -> None:
    """Raise :class:`UnknownPuzzleError` (listing the 21 benchmark puzzles) for the first of ``names`` that is not
    one of them; ``None`` checks nothing."""
    for name in names or ():
        if name not in PUZZLE_NAMES:
            raise UnknownPuzzleError(name, list(PUZZLE_NAMES))


def load_manifest(puzzles: str | Sequence[str] | None = None, levels: str | Sequence[str] | None = None,
                  path: str | Path | None = None) -> list[ManifestEntry]:
    """Read the benchmark manifest, optionally restricted to some puzzles and levels.

    Parameters
    ----------
    puzzles : str or sequence of str, optional
        Puzzle names to keep (default: all 21). Names of unimplemented puzzles are allowed: their entries are
        returned too (see :func:`split_implemented`).
    levels : str or sequence of str, optional
        Levels to keep, from ``("trivial", "easy", "normal", "hard")`` (default: all four).
    path : str or Path, optional
        Read another manifest in the same format instead of the shipped one.

    Returns
    -------
    list of ManifestEntry
        In file order (the shipped file: benchmark puzzle order, then level, then index); 420 entries unfiltered.

    Raises
    ------
    UnknownPuzzleError
        A name in ``puzzles`` is not one of the 21 benchmark puzzles (the message lists them).
    ConfigError
        A level is unknown, the file is missing, or a line is not a valid manifest row (the message names the
        line number and the field).
    """
    want_p = _as_list(puzzles, "puzzles")
    want_l = _as_list(levels, "levels")
    check_puzzle_names(want_p)
    for lv in want_l or ():
        if lv not in LEVEL_NAMES:
            raise ConfigError(f"levels must be among {list(LEVEL_NAMES)}, got {lv!r}")
    src = manifest_path() if path is None else Path(path)
    try:
        text = src.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read the manifest {str(src)!r}: {e}") from e
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{src}:{lineno}: not JSON: {e}") from e
        entry = _entry(obj, f"{src}:{lineno}")
        if (want_p is None or entry.puzzle in want_p) and (want_l is None or entry.level in want_l):
            out.append(entry)
    return out


def split_implemented(entries: Iterable[ManifestEntry]) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
    """Split entries into those of implemented puzzles and those eval must skip.

    A puzzle counts as implemented when :func:`reasonshape.envs.get` returns it (its module exists and registers
    the puzzle). Order is kept within each part.

    Parameters
    ----------
    entries : iterable of ManifestEntry

    Returns
    -------
    (implemented, skipped) : tuple of two lists of ManifestEntry
    """
    status: dict[str, bool] = {}
    implemented, skipped = [], []
    for e in entries:
        if e.puzzle not in status:
            try:
                get(e.puzzle)
                status[e.puzzle] = True
            except UnknownPuzzleError:
                status[e.puzzle] = False
        (implemented if status[e.puzzle] else skipped).append(e)
    return implemented, skipped


def skipped_summary(skipped: Iterable[ManifestEntry]) -> str:
    """One line saying which puzzles were skipped and how many instances, e.g.
    ``"skipped 40 instances of 2 unimplemented puzzles: loopy (20), tracks (20)"``; ``""`` when none."""
    counts: dict[str, int] = {}
    for e in skipped:
        counts[e.puzzle] = counts.get(e.puzzle, 0) + 1
    if not counts:
        return ""
    total = sum(counts.values())
    parts = ", ".join(f"{p} ({n})" for p, n in counts.items())
    noun = "puzzle" if len(counts) == 1 else "puzzles"
    return f"skipped {total} instances of {len(counts)} unimplemented {noun}: {parts}"
