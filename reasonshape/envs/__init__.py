"""Puzzle environments: Simon Tatham's grid puzzles with game IDs, generation, prompts, answers, rules, claims.

>>> from reasonshape import envs
>>> tents = envs.get("tents")          # doctest: +SKIP
>>> inst = tents.generate("easy", seed=0)  # doctest: +SKIP
"""

from reasonshape.envs.base import (
    LEVEL_NAMES,
    CheckResult,
    Claim,
    ClaimLabel,
    Instance,
    ParsedAnswer,
    Puzzle,
    SolveResult,
    Unit,
    Violation,
)
from reasonshape.envs.dataset import RepeatedInstanceWarning, build_dataset  # imports ``datasets`` only when called
from reasonshape.envs.registry import PUZZLE_NAMES, get, list_puzzles, register_puzzle

__all__ = [
    "LEVEL_NAMES", "PUZZLE_NAMES", "CheckResult", "Claim", "ClaimLabel", "Instance", "ParsedAnswer", "Puzzle",
    "SolveResult", "Unit", "Violation", "get", "list_puzzles", "register_puzzle", "build_dataset",
    "instance_from_game_id", "RepeatedInstanceWarning",
]


def instance_from_game_id(puzzle: str, game_id: str) -> Instance:
    """Parse ``game_id`` for the puzzle called ``puzzle`` (raises ``UnknownPuzzleError`` / ``GameIdError``)."""
    return get(puzzle).parse_game_id(game_id)

