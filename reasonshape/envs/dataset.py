"""Datasets of puzzle prompts for TRL trainers and eval.

Source: reasonshape choice, following TRL's conversational dataset format (a ``prompt`` column of message lists)
and reasoning-gym's per-item determinism (item ``i`` depends only on (seed, puzzle, level, i)).
"""

from __future__ import annotations

from collections.abc import Sequence

from reasonshape.envs.base import LEVEL_NAMES
from reasonshape.envs.registry import get
from reasonshape.errors import ConfigError

__all__ = ["DEFAULT_SYSTEM_PROMPT", "build_records", "build_dataset"]

#: One shared solver system prompt for every model (paper A §A: "one shared solver prompt").
DEFAULT_SYSTEM_PROMPT = (
    "You are an expert logic-puzzle solver. Reason step by step, stating each deduction about a cell "
    "with its (row, column) coordinates, then give the completed solution inside <answer></answer>."
)


def build_records(
    puzzles: Sequence[str],
    levels: Sequence[str] = LEVEL_NAMES,
    n: int = 8,
    seed: int = 0,
    backend: str = "native",
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
) -> list[dict]:
    """``n`` generated instances per (puzzle, level) as plain dicts, puzzle-major then level then index (see
    :func:`build_dataset` for the parameters, columns and errors)."""
    if isinstance(puzzles, str):
        puzzles = [puzzles]
    if isinstance(levels, str):
        levels = [levels]
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    if not puzzles:
        raise ConfigError(f"puzzles must name at least one puzzle, got {list(puzzles)}")
    if not levels:
        raise ConfigError(f"levels must name at least one level or params string, got {list(levels)}")
    records = []
    for name in puzzles:
        puzzle = get(name)
        for level in levels:
            for i in range(n):
                inst = puzzle.generate(level, seed=seed, index=i, backend=backend)
                records.append(make_record(puzzle, inst, level, system_prompt))
    return records


def make_record(puzzle, instance, level: str, system_prompt: str | None = DEFAULT_SYSTEM_PROMPT) -> dict:
    """One dataset row for ``instance``: conversational ``prompt`` plus the columns a reward needs."""
    messages = [] if system_prompt is None else [{"role": "system", "content": system_prompt}]
    messages.append({"role": "user", "content": puzzle.render_prompt(instance)})
    return {"prompt": messages, "puzzle": puzzle.name, "game_id": puzzle.format_game_id(instance), "level": level}


def build_dataset(
    puzzles: Sequence[str],
    levels: Sequence[str] = LEVEL_NAMES,
    n: int = 8,
    seed: int = 0,
    backend: str = "native",
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
):
    """A ``datasets.Dataset`` of ``len(puzzles) * len(levels) * n`` generated puzzles.

    Parameters
    ----------
    puzzles : str or sequence of str
        Registry names (``"tents"``); a single name is one puzzle. At least one.
    levels : str or sequence of str
        Level names (trivial / easy / normal / hard, the default all four) or the collection's params strings
        for the puzzle (``"7x7de"``; each puzzle must accept them, see :meth:`Puzzle.generate`). At least one.
    n : int
        Instances per (puzzle, level), >= 1.
    seed : int
        Row ``i`` of a (puzzle, level) depends only on (seed, puzzle, level, i).
    backend : {"native", "sgt"}
        Generator (:meth:`Puzzle.generate`).
    system_prompt : str or None
        First message of every prompt; ``None`` for none.

    Columns
    -------
    prompt : list of {"role", "content"} messages
        Conversational prompt (system prompt, if any, then the puzzle's rendered prompt).
    puzzle : str
        Registry name; with ``game_id`` it rebuilds the instance (``envs.get(puzzle).parse_game_id(game_id)``).
    game_id : str
        The collection's ``params:desc`` (full params).
    level : str
        The entry of ``levels`` the row was generated from, as given: a level name, or a params string such as
        ``"7x7de"`` (``game_id`` carries the params either way; rewards read only ``puzzle`` and ``game_id``).

    Raises
    ------
    ConfigError
        ``n < 1``; an empty ``puzzles`` or ``levels``; a level that is neither a level name nor the puzzle's
        params; an unknown backend.
    UnknownPuzzleError
        A name in ``puzzles`` that is not an implemented puzzle.
    GenerationError
        Generation failed (attempt budget, the ``sgt`` binary).

    Source: reasonshape choice (TRL's conversational dataset format).
    """
    from datasets import Dataset

    return Dataset.from_list(build_records(puzzles, levels, n, seed, backend, system_prompt))
