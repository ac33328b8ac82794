"""The puzzle registry: ``get(name)`` and ``list_puzzles()``.

Each puzzle lives in its own module ``reasonshape/envs/<name>.py`` and calls :func:`register_puzzle` at import.
:func:`get` imports the module on first use, so importing :mod:`reasonshape.envs` stays cheap.
"""

from __future__ import annotations

import importlib
import importlib.util

from reasonshape.errors import ConfigError, UnknownPuzzleError

__all__ = ["PUZZLE_NAMES", "register_puzzle", "get", "as_puzzle", "list_puzzles"]

#: The 21 puzzles of the benchmark (paper A §A; the list is reasonshape's, see METHOD.md).
PUZZLE_NAMES: tuple[str, ...] = (
    "solo", "keen", "towers", "unequal", "tents", "lightup", "magnets", "undead", "dominosa", "pattern",
    "mosaic", "singles", "range", "unruly", "filling", "bridges", "net", "slant", "signpost", "loopy", "tracks",
)

_REGISTRY: dict = {}


def register_puzzle(puzzle):
    """Register a puzzle instance under ``puzzle.name``.

    Raises
    ------
    TypeError
        ``puzzle`` is not a :class:`~reasonshape.envs.base.Puzzle` instance.
    ConfigError
        ``puzzle.name`` is not one of :data:`PUZZLE_NAMES`, or another class is registered under it.
    """
    from reasonshape.envs.base import Puzzle

    if not isinstance(puzzle, Puzzle):
        raise TypeError(f"register_puzzle expects a Puzzle instance, got {type(puzzle).__name__}")
    if puzzle.name not in PUZZLE_NAMES:
        raise ConfigError(f"puzzle name must be one of {PUZZLE_NAMES}, got {puzzle.name!r}")
    if puzzle.name in _REGISTRY and type(_REGISTRY[puzzle.name]) is not type(puzzle):
        raise ConfigError(f"puzzle {puzzle.name!r} is already registered")
    _REGISTRY[puzzle.name] = puzzle
    return puzzle


def _module_exists(name: str) -> bool:
    return importlib.util.find_spec(f"reasonshape.envs.{name}") is not None


def get(name: str):
    """The registered :class:`~reasonshape.envs.base.Puzzle` called ``name``.

    Raises
    ------
    UnknownPuzzleError
        ``name`` is not an implemented puzzle; the message lists the implemented ones.
    """
    if name not in _REGISTRY:
        if name in PUZZLE_NAMES and _module_exists(name):
            importlib.import_module(f"reasonshape.envs.{name}")
        if name not in _REGISTRY:
            raise UnknownPuzzleError(name, list_puzzles())
    return _REGISTRY[name]


def as_puzzle(puzzle):
    """``puzzle`` itself when it is a :class:`~reasonshape.envs.base.Puzzle`, else the registered puzzle of that
    name (:func:`get`): the entry points that take a puzzle (``extract_graph``, ``deduce_trace``,
    ``score_completion``...) accept either, as ``build_dataset`` and :func:`get` take names.

    Raises
    ------
    UnknownPuzzleError
        ``puzzle`` is a string that names no implemented puzzle.
    ConfigError
        ``puzzle`` is neither a Puzzle nor a string; the message names its type.
    """
    from reasonshape.envs.base import Puzzle

    if isinstance(puzzle, Puzzle):
        return puzzle
    if isinstance(puzzle, str):
        return get(puzzle)
    raise ConfigError(f"puzzle must be a Puzzle or a puzzle name such as 'tents', got {type(puzzle).__name__} "
                      f"{puzzle!r:.80}")


def list_puzzles(include_missing: bool = False) -> list[str]:
    """Names of the implemented puzzles in benchmark order (all 21 names when ``include_missing``)."""
    if include_missing:
        return list(PUZZLE_NAMES)
    return [n for n in PUZZLE_NAMES if n in _REGISTRY or _module_exists(n)]
