"""Datasets of puzzle prompts for TRL trainers and eval.

Source: reasonshape choice, following TRL's conversational dataset format (a ``prompt`` column of message lists)
and reasoning-gym's per-item determinism (item ``i`` depends only on (seed, puzzle, level, i)).
"""

from __future__ import annotations

from collections.abc import Sequence

from reasonshape.envs.base import LEVEL_NAMES
from reasonshape.envs.registry import get

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
    """``n`` generated instances per (puzzle, level) as plain dicts (see :func:`build_dataset` for columns).

    Raises
    ------
    UnknownPuzzleError, ValueError, GenerationError
        From :func:`reasonshape.envs.get` and :meth:`Puzzle.generate`; ``ValueError`` when ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if isinstance(puzzles, str):
        puzzles = [puzzles]
    if isinstance(levels, str):
        levels = [levels]
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

    Columns
    -------
    prompt : list of {"role", "content"} messages
        Conversational prompt (system prompt, if any, then the puzzle's rendered prompt).
    puzzle : str
        Registry name; with ``game_id`` it rebuilds the instance (``envs.get(puzzle).parse_game_id(game_id)``).
    game_id : str
        The collection's ``params:desc`` (full params).
    level : str
        One of trivial / easy / normal / hard.
    """
    from datasets import Dataset

    return Dataset.from_list(build_records(puzzles, levels, n, seed, backend, system_prompt))
