"""Datasets of puzzle prompts for TRL trainers and eval.

Source: reasonshape choice, following TRL's conversational dataset format (a ``prompt`` column of message lists)
and reasoning-gym's per-item determinism (item ``i`` depends only on (seed, puzzle, level, i)).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

from reasonshape.envs.base import LEVEL_NAMES
from reasonshape.envs.registry import get
from reasonshape.errors import ConfigError

__all__ = ["DEFAULT_SYSTEM_PROMPT", "PROMPT_FORMATS", "RepeatedInstanceWarning", "build_records", "build_dataset",
           "make_record"]

#: ``prompt`` column layouts, as TRL names them: a list of chat messages, or one string (for a model without a
#: chat template).
PROMPT_FORMATS = ("conversational", "standard")
PromptFormat = Literal["conversational", "standard"]


class RepeatedInstanceWarning(UserWarning):
    """Some rows of one (puzzle, level) hold the same instance. Each row is drawn on its own (item ``i`` depends only
    on (seed, puzzle, level, i)), so any level can repeat one by chance, and a small level must: dominosa ``1dt``, a
    2x3 grid, has 4 instances with a unique solution, towers trivial about a dozen. De-duplicate by ``game_id`` if
    repeats matter (an eval set)."""

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
    prompt_format: PromptFormat = "conversational",
    *,
    _stacklevel: int = 2,
) -> list[dict]:
    """``n`` generated instances per (puzzle, level) as plain dicts, puzzle-major then level then index (see
    :func:`build_dataset` for the parameters, columns, warnings and errors)."""
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
    _check_prompt_format(prompt_format)
    records = []
    for name in puzzles:
        puzzle = get(name)
        for level in levels:
            rows = [make_record(puzzle, puzzle.generate(level, seed=seed, index=i, backend=backend), level,
                                system_prompt, prompt_format) for i in range(n)]
            distinct = len({r["game_id"] for r in rows})
            if distinct < n:
                warnings.warn(f"{name} {level}: the {n} rows hold {distinct} distinct instances; rows repeat (each "
                              "row is drawn on its own, and small levels have few instances with a unique solution)",
                              RepeatedInstanceWarning, stacklevel=_stacklevel)
            records.extend(rows)
    return records


def make_record(puzzle, instance, level: str, system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
                prompt_format: PromptFormat = "conversational") -> dict:
    """One dataset row for ``instance``: the ``prompt`` plus the columns a reward needs (see :func:`build_dataset`).

    Raises
    ------
    ConfigError
        ``prompt_format`` is not one of :data:`PROMPT_FORMATS`.
    """
    _check_prompt_format(prompt_format)
    user = puzzle.render_prompt(instance)
    if prompt_format == "standard":
        prompt = user if system_prompt is None else f"{system_prompt}\n\n{user}"
    else:
        prompt = [] if system_prompt is None else [{"role": "system", "content": system_prompt}]
        prompt.append({"role": "user", "content": user})
    return {"prompt": prompt, "puzzle": puzzle.name, "game_id": puzzle.format_game_id(instance), "level": level}


def _check_prompt_format(prompt_format: str) -> None:
    if prompt_format not in PROMPT_FORMATS:
        raise ConfigError(f"prompt_format must be one of {', '.join(PROMPT_FORMATS)}, got {prompt_format!r}")


def build_dataset(
    puzzles: Sequence[str],
    levels: Sequence[str] = LEVEL_NAMES,
    n: int = 8,
    seed: int = 0,
    backend: str = "native",
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    prompt_format: PromptFormat = "conversational",
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
        First message of every prompt (``"standard"``: its first paragraph); ``None`` for none.
    prompt_format : {"conversational", "standard"}
        TRL's two prompt layouts: chat messages (the trainer applies the model's chat template), or one string
        (a base model without a chat template). The rewards read the completions of either.

    Columns
    -------
    prompt : list of {"role", "content"} messages, or str
        ``"conversational"``: the system prompt, if any, then the puzzle's rendered prompt as the user message.
        ``"standard"``: the same text as one string, the system prompt and the rendered prompt separated by a
        blank line.
    puzzle : str
        Registry name; with ``game_id`` it rebuilds the instance (``envs.get(puzzle).parse_game_id(game_id)``).
    game_id : str
        The collection's ``params:desc`` (full params).
    level : str
        The entry of ``levels`` the row was generated from, as given: a level name, or a params string such as
        ``"7x7de"`` (``game_id`` carries the params either way; rewards read only ``puzzle`` and ``game_id``).

    Warns
    -----
    RepeatedInstanceWarning
        A (puzzle, level) whose ``n`` rows hold fewer than ``n`` distinct instances (small trivial levels).

    Raises
    ------
    ConfigError
        ``n < 1``; an empty ``puzzles`` or ``levels``; a level that is neither a level name nor the puzzle's
        params; an unknown backend; an unknown ``prompt_format``.
    UnknownPuzzleError
        A name in ``puzzles`` that is not an implemented puzzle.
    GenerationError
        Generation failed (attempt budget, the ``sgt`` binary).

    Source: reasonshape choice (TRL's conversational dataset format).
    """
    from datasets import Dataset

    return Dataset.from_list(build_records(puzzles, levels, n, seed, backend, system_prompt, prompt_format,
                                           _stacklevel=3))
