"""The one exception tree of reasonshape.

Every error raised on bad input derives from :class:`ReasonshapeError` and also from the builtin a caller would
catch (``ValueError``, ``KeyError``, ``ImportError``), and carries the offending value. Source: reasonshape choice
(modelled on networkx's exception module and vLLM's ``VLLMValidationError``).
"""

from __future__ import annotations

import re

__all__ = [
    "ReasonshapeError",
    "GameIdError",
    "UnknownPuzzleError",
    "AnswerParseError",
    "NoUniqueSolutionError",
    "GenerationError",
    "ClaimError",
    "NotADAGError",
    "BackendError",
    "MissingExtraError",
    "ConfigError",
]


class ReasonshapeError(Exception):
    """Base class of every error reasonshape raises on purpose."""


class GameIdError(ReasonshapeError, ValueError):
    """A game ID (``params:desc``) or a params string is malformed.

    The message shows at most the first :data:`SHOWN_CHARS` characters of the ID (then ``...`` and its length)
    and of each word of ``expected`` (which may quote the ID), so it stays short for an ID of any length; the
    attributes keep the full text.

    Attributes
    ----------
    game_id : str
        The text that failed to parse.
    position : int | None
        0-based character position in ``game_id`` where parsing failed, when known.
    expected : str
        What the parser expected there.
    """

    #: How many characters of the ID (and of any one word of ``expected``) the message shows.
    SHOWN_CHARS = 60

    def __init__(self, game_id: str, position: int | None, expected: str):
        self.game_id = game_id
        self.position = position
        self.expected = expected
        where = f" at position {position}" if position is not None else ""
        n = self.SHOWN_CHARS
        shown = repr(game_id) if len(game_id) <= n else f"{game_id[:n]!r}... ({len(game_id)} characters)"
        expected = re.sub(rf"\S{{{n + 1},}}", lambda m: m[0][:n] + "...", expected)
        super().__init__(f"invalid game ID {shown}{where}: expected {expected}")


class UnknownPuzzleError(ReasonshapeError, KeyError):
    """A puzzle name that is not registered. The message lists the known names."""

    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = known
        super().__init__(f"unknown puzzle {name!r}; known puzzles: {', '.join(known)}")

    def __str__(self) -> str:  # KeyError would quote the whole message
        return self.args[0]


class AnswerParseError(ReasonshapeError, ValueError):
    """A model's answer could not be read as a grid for this puzzle.

    Attributes
    ----------
    reason : str
        Why, e.g. ``"no answer block"``, ``"wrong size: 3 rows, expected 4"``, ``"unknown symbol 'x' in row 2"``.
    """

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"cannot parse answer: {reason}")


class NoUniqueSolutionError(ReasonshapeError, ValueError):
    """An instance has no solution, or more than one where exactly one is required."""

    def __init__(self, game_id: str, n_solutions: int):
        self.game_id = game_id
        self.n_solutions = n_solutions
        what = "no solution" if n_solutions == 0 else f"at least {n_solutions} solutions"
        super().__init__(f"instance {game_id!r} has {what}; a unique solution is required")


class GenerationError(ReasonshapeError, RuntimeError):
    """Generation of a unique-solution instance failed (e.g. the attempt budget ran out, or `sgt-*` failed)."""


class ClaimError(ReasonshapeError, ValueError):
    """A claim that does not belong to the puzzle's claim vocabulary (unknown kind, cell off the grid...)."""


class NotADAGError(ReasonshapeError, ValueError):
    """A claim graph that breaks an invariant: a cycle, or a premise that comes after its conclusion."""


class BackendError(ReasonshapeError, RuntimeError):
    """A generation backend failed after its retries (endpoint down, timeout, malformed response)."""


class MissingExtraError(ReasonshapeError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str):
        self.package = package
        self.extra = extra
        super().__init__(f"{package!r} is required for this feature: pip install 'reasonshape[{extra}]'")


class ConfigError(ReasonshapeError, ValueError):
    """A configuration field has an invalid value: the message names the field, the value and the fix."""
