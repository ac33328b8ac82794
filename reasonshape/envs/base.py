"""The puzzle protocol: what every one of the 21 puzzle modules implements.

A puzzle module (``reasonshape/envs/<name>.py``) defines a subclass of :class:`Puzzle` and registers one
instance of it with :func:`reasonshape.envs.registry.register_puzzle`. The protocol is organised in the order a
module is written in:

1. constants: ``name``, ``LEVELS`` (level -> Tatham params, one data table), ``ANSWER_SYMBOLS`` and the claim
   vocabulary (``CLAIM_KINDS``), plus the definition of C* in the module docstring;
2. params: ``parse_params`` / ``format_params`` (the collection's full and short forms);
3. desc: ``parse_desc`` / ``format_desc`` (``params:desc`` game IDs, byte-compatible with the collection);
4. ``generate`` (native generator, unique solution proven by the solver);
5. text: ``render_prompt``, ``parse_answer``, ``format_answer``;
6. rules: ``check`` (by the rules, never a diff against a stored answer) and ``solve`` (CP-SAT);
7. claims: ``claim_holds`` (is a claim true of one solution), ``solution_claims`` (C*), ``given_claims``
   (static facts of the instance), and the constraint view ``variables`` / ``units`` the deduction engine and
   the extractor's dependency rule read;
8. ``decode_tatham_solution`` (the collection's ``SOLVE`` move string -> our solution), used in tests.

Coordinates everywhere in the public API (prompts, answers, claims) are 1-based ``(row, column)``, rows top to
bottom, columns left to right. Internally puzzles may use 0-based indices. Source: reasonshape choice.
"""

from __future__ import annotations

import difflib
import enum
import functools
import numbers
import os
import random
import re
import shutil
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Container, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reasonshape.errors import ClaimError, ConfigError, GameIdError, GenerationError, NoUniqueSolutionError

__all__ = [
    "LEVEL_NAMES",
    "Claim",
    "ClaimLabel",
    "Instance",
    "ParsedAnswer",
    "Violation",
    "CheckResult",
    "SolveResult",
    "Unit",
    "Puzzle",
    "INSTANCE_METHODS",
    "check_instance",
    "instance_rng",
    "MOVE_NUM",
    "mask_long_numbers",
    "ascii_lower",
    "bad_solve_move",
    "solve_move_items",
    "solve_move_cells",
    "label_over_solutions",
]

#: The four difficulty levels, easiest first (paper A §A: "Trivial", "Human easy/normal/hard").
LEVEL_NAMES: tuple[str, ...] = ("trivial", "easy", "normal", "hard")

Cell = tuple[int, int]


class ClaimLabel(enum.StrEnum):
    """A claim occurrence's label (paper A §B step 4). ``tentative`` is given by extraction, never by a puzzle."""

    CORRECT = "correct"
    WRONG = "wrong"
    UNVERIFIABLE = "unverifiable"
    TENTATIVE = "tentative"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, order=True)
class Claim:
    """One atomic statement in a puzzle's claim schema.

    Parameters
    ----------
    kind : str
        The puzzle's claim kind, one of its ``CLAIM_KINDS`` (e.g. ``"value"`` for "cell (3,4) contains 9",
        ``"tent"``, ``"count"`` for "row 3 needs 2 more tents", ``"edge"`` for line puzzles).
    cells : tuple of (row, col)
        What the claim is about: 1-based cells, in a canonical order (sorted unless order matters, e.g. the
        two ends of a bridge). Row/column claims list one anchor cell and say so in ``kind``.
    value : hashable, optional
        What it asserts (a digit, a symbol such as ``"T"``, a count). ``None`` for kinds without a value.
    positive : bool
        Polarity: ``True`` asserts ("(2,5) is 3"), ``False`` denies ("(2,5) is not 3").

    Notes
    -----
    Claims are value objects: equal claims are the same statement, which is what restatement edges and C*
    membership are defined by. Source: paper A §B (claim schema), representation is a reasonshape choice.
    """

    kind: str
    cells: tuple[Cell, ...]
    value: Hashable = None
    positive: bool = True

    def negated(self) -> Claim:
        """The same claim with opposite polarity."""
        return Claim(self.kind, self.cells, self.value, not self.positive)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (``cells`` as lists); inverse of :meth:`from_json`."""
        return {"kind": self.kind, "cells": [list(c) for c in self.cells], "value": self.value,
                "positive": self.positive}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Claim:
        """Rebuild a claim from :meth:`to_json` output."""
        value = d.get("value")
        if isinstance(value, list):
            value = tuple(value)
        return cls(d["kind"], tuple(tuple(c) for c in d["cells"]), value, bool(d.get("positive", True)))


@dataclass(frozen=True)
class Instance:
    """One puzzle instance: the puzzle's name, its params and its parsed desc.

    ``params`` is the puzzle's own frozen params dataclass; ``data`` holds the puzzle's parsed desc (clues,
    givens, regions...) as immutable values; ``desc`` is the desc string exactly as the collection writes it.
    Use :attr:`game_id` to get ``params:desc``. Instances are hashable and used as cache keys.
    """

    puzzle: str
    params: Any
    desc: str
    data: Any = field(compare=False, hash=False, repr=False)

    @property
    def game_id(self) -> str:
        from reasonshape.envs.registry import get

        return get(self.puzzle).format_game_id(self)


@dataclass(frozen=True)
class ParsedAnswer:
    """A model's answer read from its text.

    ``value`` has the puzzle's solution type (what :meth:`Puzzle.solve` returns). ``source`` is
    ``"answer_block"`` when read from the last ``<answer>`` block, ``"fallback_grid"`` when no answer block
    existed and the last grid-shaped block of the text was used instead. ``notes`` lists tolerated oddities.
    """

    value: Any
    source: str = "answer_block"
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``rule`` is a short stable id (e.g. ``"row_repeat"``), ``detail`` a sentence for humans,
    ``cells`` the 1-based cells involved."""

    rule: str
    detail: str
    cells: tuple[Cell, ...] = ()


@dataclass(frozen=True)
class CheckResult:
    """The verdict of :meth:`Puzzle.check`: ``ok`` iff no rule is violated."""

    ok: bool
    violations: tuple[Violation, ...] = ()

    def __bool__(self) -> bool:
        return self.ok

    @property
    def rules(self) -> tuple[str, ...]:
        """The ids of the violated rules, de-duplicated, in order."""
        return tuple(dict.fromkeys(v.rule for v in self.violations))


@dataclass(frozen=True)
class SolveResult:
    """Solutions found by the solver, at most ``max_solutions`` of them.

    ``unique`` is True iff exactly one solution exists (proven: the search for a second one was exhausted).
    ``exhausted`` is True iff ``solutions`` is the complete set of solutions.
    """

    solutions: tuple[Any, ...]
    exhausted: bool

    @property
    def unique(self) -> bool:
        return self.exhausted and len(self.solutions) == 1


@dataclass(frozen=True)
class Unit:
    """One local constraint of an instance, as the deduction engine and the extractor's dependency rule see it.

    Parameters
    ----------
    name : str
        How a trace names it: ``"row 3"``, ``"box 2"``, ``"cage at (1,1)"``, ``"clue at (2,4)"``.
    variables : tuple
        The variables it constrains (keys of :meth:`Puzzle.variables`; for cell puzzles, 1-based cells).
    allowed : callable
        ``allowed(values) -> bool`` for a complete assignment of ``variables`` (values in the same order).
        Must be exact: it accepts exactly the local assignments the rules allow.
    premises : tuple of Claim
        The static given claims this constraint comes from (the clue, the cage total...). May be empty.
    kind : str
        ``"alldiff"`` (all values distinct, candidates = domain) lets engines use a fast path; else ``"generic"``.
    """

    name: str
    variables: tuple[Hashable, ...]
    allowed: Callable[[tuple], bool] = field(compare=False)
    premises: tuple[Claim, ...] = ()
    kind: str = "generic"


def digits_end(text: str, i: int) -> int:
    """The index after the run of ASCII digits starting at ``text[i]`` (``i`` itself when there is none), for the
    game-ID parsers. Only ``0``-``9`` are digits: ``str.isdigit()`` also accepts "²", which ``int()`` rejects, and
    the collection writes ASCII only."""
    while i < len(text) and "0" <= text[i] <= "9":
        i += 1
    return i


#: Longest digit run :func:`read_int` reads as a number. The collection reads numbers with ``atoi`` into a C
#: ``int`` (at most 10 digits); a longer run is malformed, and from 4,301 digits ``int()`` itself refuses the string
#: with a bare ``ValueError`` (CPython's conversion limit). Source: reasonshape choice.
MAX_DIGITS = 18


_LONG_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


def mask_long_numbers(text: str) -> str:
    """``text`` with every run of more than :data:`MAX_DIGITS` decimal digits (``\\d``, any script) replaced by as
    many ``#`` (offsets unchanged), for :meth:`Puzzle.parse_claim_text`: such a run is the number of no claim, so a
    recogniser must not match it, and from 4,301 digits ``int()`` would refuse it with a bare ``ValueError``. Cost:
    one regex search when there is none. Source: reasonshape choice."""
    if _LONG_NUMBER.search(text) is None:
        return text
    return _LONG_NUMBER.sub(lambda m: "#" * (m.end() - m.start()), text)


# ASCII capitals -> lower case, and the four non-ASCII letters that re.IGNORECASE equates with an ASCII letter ("İ",
# "ı", "ſ", the Kelvin sign) -> that letter (:func:`ascii_lower`)
_ASCII_LOWER = str.maketrans({**{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)},
                              "\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def ascii_lower(text: str) -> str:
    """``text`` with ASCII capitals in lower case and the four non-ASCII letters that ``re.IGNORECASE`` equates with
    an ASCII letter ("İ", "ı", "ſ", the Kelvin sign) as that letter; every other character unchanged, so offsets are
    those of ``text``. Where a case-insensitive pattern matches a word of ASCII letters, the word is in the result
    in lower case at the same place: a cheap pre-check (``"tent" in ascii_lower(text)``) before a scan, for
    :meth:`Puzzle.parse_claim_text` and the schema reader. Source: reasonshape choice, for speed."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def read_difficulty(text: str, i: int, letters: Container[str], default: str, expected: str) -> tuple[str, int]:
    """The difficulty of a params string's optional ``d<letter>`` at ``text[i]`` and the index after it, as the
    collection's ``decode_params`` read it: ``(default, i)`` when ``text[i]`` is not ``d``.

    Raises
    ------
    GameIdError
        ``d`` followed by nothing or by a letter not in ``letters``, at the letter's position, saying ``expected``.
    """
    if i < len(text) and text[i] == "d":
        if i + 1 >= len(text) or text[i + 1] not in letters:
            raise GameIdError(text, i + 1, expected)
        return text[i + 1], i + 2
    return default, i


def read_int(text: str, i: int, what: str) -> tuple[int, int]:
    """The decimal number of ASCII digits starting at ``text[i]`` and the index after it, for game-ID parsers.

    Raises
    ------
    GameIdError
        No digit at ``i`` (:func:`digits_end`), or more than :data:`MAX_DIGITS` of them; the message names the
        offset and ``what`` was expected.
    """
    j = digits_end(text, i)
    if j == i:
        raise GameIdError(text, i, what)
    if j - i > MAX_DIGITS:
        raise GameIdError(text, i, f"{what}, a number of at most {MAX_DIGITS} digits (got {j - i})")
    return int(text[i:j]), j


def parse_wxh(text: str, max_side: int = 99, min_side: int = 1) -> tuple[int, int, int]:
    """Read the ``W[xH]`` prefix of a params string, as the collection's ``decode_params`` do.

    Parameters
    ----------
    text : str
        A params string such as ``"7x7"``, ``"9x6"``, ``"5"`` or ``"7x7i30e10m2d1"``.
    max_side : int
        Largest accepted width or height (reasonshape choice: a bound against absurd IDs).
    min_side : int
        Smallest accepted width or height (the puzzle's ``validate_params`` minimum; at least 1).

    Returns
    -------
    (w, h, end) : tuple of int
        Width (columns), height (rows; ``h = w`` when ``xH`` is absent) and the index just after the prefix.

    Raises
    ------
    GameIdError
        No leading digits, no digits after ``x``, or a side outside ``min_side..max_side``: the message names the
        side ("a height between 4 and 99, got 0") and the position is that of its digits.
    """
    w, i = read_int(text, 0, "a width (decimal digits)")
    check_side(text, 0, "width", w, min_side, max_side)
    h = w
    if i < len(text) and text[i] == "x":
        h, j = read_int(text, i + 1, "a height (decimal digits) after 'x'")
        check_side(text, i + 1, "height", h, min_side, max_side)
        i = j
    return w, h, i


#: One decimal number in a SOLVE move: ASCII digits only (``[0-9]``, not ``\\d``, which also matches "٣"), at most
#: 9 of them (the collection writes grid coordinates and indices with ``%d``), so ``int()`` never meets a run past
#: its conversion limit. Source: reasonshape choice.
MOVE_NUM = r"([0-9]{1,9})"


def bad_solve_move(puzzle: str, move: Any, why: str) -> ConfigError:
    """The error every :meth:`Puzzle.decode_tatham_solution` raises: ``"<puzzle>: not a SOLVE move for this
    instance (<why>): <move>"``, the move shown as its first 60 characters and any longer word of ``why`` (an item
    quoted from the move) cut to 60 too, so the message stays short for any input. Source: reasonshape choice."""
    shown = repr(move[:60]) + ("..." if len(move) > 60 else "") if isinstance(move, str) else repr(move)[:60]
    why = re.sub(r"\S{61,}", lambda m: m[0][:60] + "...", why)
    return ConfigError(f"{puzzle}: not a SOLVE move for this instance ({why}): {shown}")


def solve_move_items(puzzle: str, move: Any, prefix: str = "S") -> list[str]:
    """The items of a ``;``-separated SOLVE move ``S;item;item...``, for the decoders that read one.

    One trailing ``;`` is allowed (magnets and singles write one: their ``execute_move`` skips a ``;`` after each
    item); the items must be non-empty and there must be at least one (every instance's solution is stated by
    some move: a bare ``S`` states nothing).

    Raises
    ------
    ConfigError
        ``move`` is not a string, does not start with ``prefix;``, has an empty item, or has no item.
    """
    if not isinstance(move, str):
        raise bad_solve_move(puzzle, move, "not a string")
    parts = move.split(";")
    if parts[0] != prefix:
        raise bad_solve_move(puzzle, move, f"it must start with {prefix + ';'!r}")
    items = parts[1:]
    if items and items[-1] == "":
        items.pop()
    if not items:
        raise bad_solve_move(puzzle, move, f"no move after {prefix!r}")
    if "" in items:
        raise bad_solve_move(puzzle, move, "an empty item between two ';'")
    return items


_CELL_ITEM = re.compile(rf"(.){MOVE_NUM},{MOVE_NUM}", re.DOTALL)


def solve_move_cells(puzzle: str, move: Any, letters: str, w: int, h: int) -> list[tuple[str, int, int, str]]:
    """``(letter, x, y, item)`` for each item ``<letter><x>,<y>`` of a SOLVE move (:func:`solve_move_items`), the
    form of the decoders whose every item names one cell by 0-based column ``x`` and row ``y``.

    Raises
    ------
    ConfigError
        As :func:`solve_move_items`; an item not of that form or whose letter is not in ``letters`` ("item 'Q1,2'
        is not A<x>,<y> or B<x>,<y>"); a cell outside the ``w x h`` grid.
    """
    forms = [f"{c}<x>,<y>" for c in letters]
    expected = forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]
    out = []
    for item in solve_move_items(puzzle, move):
        m = _CELL_ITEM.fullmatch(item)
        if m is None or m[1] not in letters:
            raise bad_solve_move(puzzle, move, f"item {item!r} is not {expected}")
        x, y = int(m[2]), int(m[3])
        if not (0 <= x < w and 0 <= y < h):
            raise bad_solve_move(puzzle, move, f"item {item!r} is off the grid")
        out.append((m[1], x, y, item))
    return out


def check_side(text: str, position: int, side: str, n: int, min_side: int, max_side: int = 99) -> None:
    """Raise :class:`GameIdError` "a <side> between <min_side> and <max_side>, got <n>" at ``position`` (where the
    side's digits start in ``text``) unless ``min_side <= n <= max_side``: the one side check of the params
    parsers, through :func:`parse_wxh` or directly (lightup, whose height defaults to 7 rather than ``W``)."""
    if not min_side <= n <= max_side:
        raise GameIdError(text, position, f"a {side} between {min_side} and {max_side}, got {n}")


def label_over_solutions(puzzle: Puzzle, instance: Instance, holds: Callable[[Any], bool | None]) -> ClaimLabel:
    """The label of a claim whose truth in one solution is ``holds(solution)`` (``None``: undecidable there), over
    the first ``puzzle.CLAIM_SOLUTION_LIMIT`` solutions of ``instance``: ``correct`` if true in all, ``wrong`` if
    false in all, else ``unverifiable`` (also when there is no solution). The one rule of :meth:`Puzzle.verify_claim`
    and of the extractor's generic claims (:func:`~reasonshape.extraction.labels.label_claim`). Source: paper A §B
    step 4; the non-unique rule is a reasonshape choice."""
    sols = puzzle.solve(instance, puzzle.CLAIM_SOLUTION_LIMIT).solutions
    if not sols:
        return ClaimLabel.UNVERIFIABLE
    seen = set()
    for s in sols:
        v = holds(s)
        if v is None:
            return ClaimLabel.UNVERIFIABLE
        seen.add(bool(v))
        if len(seen) == 2:
            return ClaimLabel.UNVERIFIABLE
    return ClaimLabel.CORRECT if seen == {True} else ClaimLabel.WRONG


def instance_rng(seed: int, puzzle: str, level: str, index: int = 0) -> random.Random:
    """The RNG of one generated instance, seeded from (seed, puzzle, level, index) so that every instance is
    reproducible alone and generation is order-independent (reasonshape choice, after reasoning-gym)."""
    return random.Random(f"{seed}|{puzzle}|{level}|{index}")


class Puzzle(ABC):
    """The protocol every puzzle implements. Subclasses fill the abstract methods; the rest is shared.

    Class attributes
    ----------------
    name : str
        Registry name, the collection's name for the game (``"tents"``).
    LEVELS : dict[str, str]
        Level name -> the collection's params string (full form, difficulty included).
    ANSWER_SYMBOLS : dict[str, str]
        Symbol a model writes in the answer -> meaning; rendered into the prompt and the README.
    CLAIM_KINDS : tuple[str, ...]
        The claim kinds this puzzle's claims may have.

    Instance guard
    --------------
    The public methods that take an instance (those of :data:`INSTANCE_METHODS`) raise :class:`ConfigError`
    naming both puzzles when given another puzzle's instance ("a tents instance was given to keen"), or a value
    that is not an :class:`Instance`, instead of failing somewhere inside with an ``AttributeError`` or, worse,
    returning a plausible verdict. Puzzles override these methods directly (they are not template methods), so
    :meth:`__init_subclass__` wraps every override once, when the subclass is created, and the shared
    implementations here are wrapped the same way: one guard for all 21 puzzles and for puzzles added later,
    with no change to their code. The cost is one extra Python call, an attribute read and a string comparison
    (well under a microsecond) per call.
    ``claim_holds`` and ``solution_value`` are not guarded: they run in inner loops (once per solution and
    claim) and every path to them in reasonshape goes through a guarded method first (``verify_claim``,
    ``solve``, ``unique_solution``); nor is ``parse_claim_text``, which extraction calls once or twice per sentence
    of a trace after checking the instance once (:func:`~reasonshape.extraction.deterministic.PuzzleContext`).
    Source: reasonshape choice.
    """

    name: ClassVar[str]
    LEVELS: ClassVar[dict[str, str]]
    ANSWER_SYMBOLS: ClassVar[dict[str, str]] = {}
    CLAIM_KINDS: ClassVar[tuple[str, ...]] = ("value",)
    #: Words and symbols a trace may use for the values of value claims -> value (lower-case keys), read by the
    #: deterministic extractor, e.g. tents ``{"tent": "T", "grass": ".", "empty": "."}``; digits need no entry.
    VALUE_WORDS: ClassVar[dict[str, Hashable]] = {}
    #: Largest number of solutions :meth:`verify_claim` enumerates on a non-unique instance.
    CLAIM_SOLUTION_LIMIT: ClassVar[int] = 256

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the subclass's own definitions of :data:`INSTANCE_METHODS` with the instance guard (see the class
        docstring); inherited methods are wrapped already."""
        super().__init_subclass__(**kwargs)
        _guard_instance_methods(cls)

    # ----------------------------------------------------------------- params and game IDs
    @abstractmethod
    def parse_params(self, text: str) -> Any:
        """Parse a params string (full or short form, e.g. ``"8x8dt"`` / ``"8x8"``) into the params dataclass.

        Raises
        ------
        GameIdError
            Naming the position and what was expected.
        """

    @abstractmethod
    def format_params(self, params: Any, full: bool = True) -> str:
        """The collection's params string: ``full=True`` includes the difficulty (``"8x8dt"``), ``False`` not."""

    @abstractmethod
    def parse_desc(self, params: Any, desc: str) -> Instance:
        """Parse the desc part of a game ID for ``params`` and validate it as the collection's ``validate_desc``.

        Raises
        ------
        GameIdError
            Naming the position in the desc and what was expected.
        """

    def format_desc(self, instance: Instance) -> str:
        """The desc string, as the collection writes it."""
        return instance.desc

    def parse_game_id(self, game_id: str) -> Instance:
        """Parse ``params:desc``, also written ``name:params:desc`` (this puzzle's name first, the form of the
        command line: ``tents:8x8dt:...``). Raises :class:`GameIdError` when malformed (position counts in the
        stripped ``game_id``)."""
        if not isinstance(game_id, str):
            raise GameIdError(repr(game_id), None, "a string 'params:desc'")
        text = game_id.strip()
        if text.startswith(self.name + ":"):  # params begin with a digit: the name cannot be part of them
            text = text[len(self.name) + 1:]
        colon = text.find(":")
        if colon < 0:
            raise GameIdError(text, len(text), "':' separating params from desc")
        if text[:colon].isascii() and text[:colon].isalpha():  # "solo:..." given to tents
            raise GameIdError(text, 0, f"{self.name} params (a name prefix must be '{self.name}:', got "
                                       f"'{text[:colon]}:')")
        # Both parsers raise only GameIdError (a parser's own ValueError is turned into one by
        # _typed_parse_errors); here its position is made relative to the whole game ID.
        try:
            params = self.parse_params(text[:colon])
        except GameIdError as e:
            raise GameIdError(text, e.position, e.expected) from e.__cause__
        try:
            return self.parse_desc(params, text[colon + 1:])
        except GameIdError as e:
            pos = None if e.position is None else colon + 1 + e.position
            raise GameIdError(text, pos, e.expected) from e.__cause__

    def format_game_id(self, instance: Instance, full: bool = True) -> str:
        """``params:desc`` as the collection writes it."""
        return f"{self.format_params(instance.params, full=full)}:{self.format_desc(instance)}"

    def level_params(self, level: str) -> Any:
        """Params of a named level (one of ``LEVELS``: trivial / easy / normal / hard).

        Raises
        ------
        ConfigError
            ``level`` is not a level name; the message names the known levels.
        """
        if not isinstance(level, str) or level not in self.LEVELS:
            raise ConfigError(f"level must be one of {list(self.LEVELS)}, got {level!r}")
        return self.parse_params(self.LEVELS[level])

    # ----------------------------------------------------------------- generation
    def generate(self, level_or_params: str | Any, seed: int = 0, index: int = 0, backend: str = "native") -> Instance:
        """A unique-solution instance at a level (``"trivial"``...) or for explicit params (dataclass or string).

        Deterministic in (seed, level, index) for both backends. ``backend="native"`` uses this module's own
        generator; ``backend="sgt"`` runs the collection's ``sgt-<name> --generate`` binary (Debian package
        ``sgt-puzzles``) with a random seed derived the same way. Uniqueness is proven by :meth:`solve`.

        Raises
        ------
        ConfigError
            A string that is neither a level nor this puzzle's params, ``level_or_params`` neither a string nor
            this puzzle's params dataclass, or a backend other than ``"native"`` / ``"sgt"`` (a ``ValueError``;
            the CLI prints it as one line).
        GenerationError
            The attempt budget ran out, the ``sgt`` binary is missing or failed, or the result is not unique.
        """
        if isinstance(level_or_params, str):
            if level_or_params in self.LEVELS:
                params = self.level_params(level_or_params)
            else:
                try:
                    params = self.parse_params(level_or_params)
                except GameIdError as e:
                    example = self.format_params(self.level_params(next(iter(self.LEVELS))))
                    head = (f"level must be one of {list(self.LEVELS)} or a {self.name} params string (e.g. "
                            f"{example!r}), got {level_or_params!r}")
                    if not any(ch.isdigit() for ch in level_or_params):  # a level name, not params: say which
                        close = difflib.get_close_matches(level_or_params.lower(), list(self.LEVELS), n=1)
                        raise ConfigError(head + (f" (did you mean {close[0]!r}?)" if close else "")) from None
                    where = "" if e.position is None else f"at position {e.position}: "
                    raise ConfigError(f"{head} ({where}expected {e.expected})") from None
            tag = level_or_params
        else:
            params_type = type(self.level_params(next(iter(self.LEVELS))))
            if not isinstance(level_or_params, params_type):
                raise ConfigError(f"level_or_params must be a level ({', '.join(self.LEVELS)}), a {self.name} "
                                  f"params string or a {params_type.__name__}, got {type(level_or_params).__name__} "
                                  f"{level_or_params!r}")
            params, tag = level_or_params, self.format_params(level_or_params)
        rng = instance_rng(seed, self.name, tag, index)
        if backend == "native":
            inst = self._generate(params, rng)
        elif backend == "sgt":
            inst = self._generate_sgt(params, rng)
        else:
            raise ConfigError(f"backend must be 'native' or 'sgt', got {backend!r}")
        if not self.solve(inst, max_solutions=2).unique:
            raise GenerationError(f"{self.name}: {backend} generator produced a non-unique instance for {tag!r}")
        return inst

    def sgt_binary(self) -> str | None:
        """Path of the collection's ``sgt-<name>`` binary (PATH, then ``/usr/games``), or ``None``."""
        return shutil.which(f"sgt-{self.name}") or shutil.which(f"sgt-{self.name}", path="/usr/games")

    def _generate_sgt(self, params: Any, rng: random.Random) -> Instance:
        binary = self.sgt_binary()
        if binary is None:
            raise GenerationError(f"sgt-{self.name} not found on PATH or in /usr/games (apt-get install sgt-puzzles)")
        full = self.format_params(params, full=True)
        seed = str(rng.getrandbits(48))
        try:
            proc = subprocess.run([binary, "--generate", "1", f"{full}#{seed}"], capture_output=True, text=True,
                                  timeout=120, env={**os.environ, "DISPLAY": ""})
        except (OSError, subprocess.TimeoutExpired) as e:
            raise GenerationError(f"sgt-{self.name} failed: {e}") from e
        line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        if proc.returncode != 0 or ":" not in line:
            raise GenerationError(f"sgt-{self.name} --generate failed (exit {proc.returncode}): {proc.stderr[-300:]}")
        # The collection prints short params; keep ours (with difficulty) and parse its desc.
        return self.parse_desc(params, line.split(":", 1)[1])

    @abstractmethod
    def _generate(self, params: Any, rng: random.Random) -> Instance:
        """Build one instance with a unique solution from ``rng`` (puzzle-specific)."""

    # ----------------------------------------------------------------- text
    @abstractmethod
    def render_prompt(self, instance: Instance) -> str:
        """The task text: rules in plain words, the grid as text, the answer format (symbols, one row per line),
        coordinates as 1-based (row, column), and the instruction to put the final answer in
        ``<answer>...</answer>``."""

    @abstractmethod
    def parse_answer(self, text: str, instance: Instance) -> ParsedAnswer:
        """Read a model's final answer for ``instance`` from free text (see :mod:`reasonshape.envs.answer`).

        Raises
        ------
        AnswerParseError
            Saying why (no answer block and no grid, wrong size, unknown symbol).
        """

    @abstractmethod
    def format_answer(self, instance: Instance, solution: Any) -> str:
        """The text a model should put inside ``<answer>`` for ``solution`` (``parse_answer`` inverts it)."""

    # ----------------------------------------------------------------- rules
    @abstractmethod
    def check(self, instance: Instance, answer: Any) -> CheckResult:
        """Check ``answer`` (a :class:`ParsedAnswer` or a solution value) by the puzzle's rules.

        Any valid solution passes; each violated rule is named. Never compares with a stored solution. Text (a
        completion, a grid written out) raises :class:`ConfigError`: read it with :meth:`parse_answer` first.
        """

    @abstractmethod
    def _solve(self, instance: Instance, max_solutions: int) -> SolveResult:
        """Enumerate up to ``max_solutions`` solutions with the solver library (puzzle-specific model)."""

    def solve(self, instance: Instance, max_solutions: int = 2) -> SolveResult:
        """Solutions of ``instance`` (at most ``max_solutions``, an int >= 1) and whether they are all of them.
        Cached. Raises :class:`ConfigError` when ``max_solutions < 1``."""
        if max_solutions < 1:
            raise ConfigError(f"max_solutions must be >= 1, got {max_solutions}")
        return _cached_solve(self, instance, max_solutions)

    def unique_solution(self, instance: Instance) -> Any:
        """The unique solution. Raises :class:`NoUniqueSolutionError` when there is none or several."""
        res = self.solve(instance, 2)
        if not res.unique:
            raise NoUniqueSolutionError(self.format_game_id(instance), len(res.solutions))
        return res.solutions[0]

    @abstractmethod
    def decode_tatham_solution(self, instance: Instance, move: str) -> Any:
        """The collection's ``SOLVE`` move string (``tatham_solve`` in the dev data) -> our solution value.

        Strict: ``move`` is read by the grammar of the puzzle's ``execute_move`` (its C source), restricted to
        what a ``SOLVE`` move from the start position can hold, and must state a whole solution of ``instance``.
        Each puzzle's docstring gives its grammar.

        Raises
        ------
        ConfigError
            For every puzzle, the same type, built by :func:`bad_solve_move`: not a string, a wrong prefix, an
            unknown item letter, a number outside the grid (or the instance's range of values or indices), an
            item on a cell the move may not name (a tree, a black cell, a clue), cells missing where the
            collection's solve lists all of them, no item at all, or trailing text. ``ConfigError`` because the
            move is a data field (a manifest's ``tatham_solve``) with an invalid value, not a game ID or a
            model's answer.
        """

    # ----------------------------------------------------------------- claims
    @abstractmethod
    def claim_holds(self, instance: Instance, solution: Any, claim: Claim) -> bool | None:
        """Whether ``claim`` is true of ``solution``; ``None`` when the claim is not a statement about solutions
        (then it is unverifiable). Raises :class:`ClaimError` for a claim outside the vocabulary."""

    @abstractmethod
    def solution_claims(self, instance: Instance, solution: Any | None = None) -> frozenset[Claim]:
        """C*: the minimal claim set stating ``solution`` (default: the unique solution). Defined per puzzle in
        the module docstring (e.g. tents: one claim per tent; solo: one value claim per empty cell)."""

    def given_claims(self, instance: Instance) -> tuple[Claim, ...]:
        """Static claims: facts about the given puzzle (clues, givens). Restatements of these are merged."""
        return ()

    @abstractmethod
    def variables(self, instance: Instance) -> dict[Hashable, tuple]:
        """The constraint view: variable -> its domain (a tuple of values). Cell puzzles use 1-based cells as
        variables; line puzzles use their own hashable keys and document them. Together with :meth:`units` and
        the puzzle's global rules (connectivity, single loop), it defines exactly the solutions."""

    @abstractmethod
    def units(self, instance: Instance) -> tuple[Unit, ...]:
        """The local constraints (rows, columns, boxes, cages, clues...), see :class:`Unit`."""

    def solution_value(self, instance: Instance, solution: Any, variable: Hashable) -> Any:
        """The value ``variable`` takes in ``solution`` (cell puzzles: grid lookup at a 1-based cell)."""
        r, c = variable
        return solution[r - 1][c - 1]

    def value_claim(self, variable: Hashable, value: Any, positive: bool = True) -> Claim:
        """The claim "variable has value" in this puzzle's vocabulary (cell puzzles: kind ``"value"``)."""
        return Claim("value", (variable,), value, positive)

    def claim_text(self, claim: Claim) -> str:
        """The claim as one plain sentence in the prompt's conventions, e.g. ``"(3,4) is 9"``."""
        cells = " and ".join(f"({r},{c})" for r, c in claim.cells)
        verb = "is" if claim.positive else "is not"
        return f"{cells} {verb} {claim.value}"

    def parse_claim_text(self, instance: Instance, text: str) -> list[tuple[Claim, int, int]]:
        """Puzzle-specific claim recognisers for claims the generic cell-value patterns cannot read (edges,
        bridges, counts...): ``[(claim, start, end), ...]`` with character offsets into ``text``. Must run in
        linear time (no backtracking regexes). Default: none.

        Text a recogniser cannot read gives no claim, never an error: in particular a number of more than
        :data:`MAX_DIGITS` digits is no claim's number, and every override reads ``mask_long_numbers(text)``
        (:func:`mask_long_numbers`), so such a run matches no pattern. A claim the recogniser reads but that is
        not about the instance (a cell off the grid) is returned; :meth:`claim_holds` refuses it with
        :class:`ClaimError`, and extraction skips it."""
        return []

    def verify_claim(self, instance: Instance, claim: Claim) -> ClaimLabel:
        """Label a claim by the puzzle: ``correct`` iff true in every solution, ``wrong`` iff false in every
        solution, else ``unverifiable`` (also for claims not about solutions). Non-unique instances are allowed:
        up to ``CLAIM_SOLUTION_LIMIT`` solutions are enumerated; past that, a claim that differs among the
        solutions seen is unverifiable and one constant over them is judged on them (documented limit).

        The claim is validated first (:meth:`_validate_claim`), so an invalid claim raises on every instance, also
        on one without a solution, where a valid claim is ``unverifiable``.

        Source: paper A §B step 4 (labels); the non-unique rule is a reasonshape choice.

        Raises
        ------
        ClaimError
            A claim outside the puzzle's vocabulary (see the puzzle's :meth:`claim_holds`), for either polarity.
        """
        self._validate_claim(instance, claim)
        return label_over_solutions(self, instance, lambda s: self.claim_holds(instance, s, claim))

    # ----------------------------------------------------------------- helpers for subclasses
    def _validate_claim(self, instance: Instance, claim: Claim) -> None:
        """Raise :class:`ClaimError` when ``claim`` is outside this puzzle's vocabulary, without a solution.

        Puzzles that validate in a helper of this name override it. The default runs :meth:`claim_holds` on
        :data:`_UNREAD_SOLUTION`, a stand-in that raises :class:`_SolutionRead` as soon as it is read: every
        ``claim_holds`` validates the claim before it reads the solution (the 21 puzzles do, and
        ``tests/envs/test_protocol.py`` checks it), so a :class:`ClaimError` is the claim's own, and reaching the
        solution (or a static claim's verdict) means the claim is valid. Source: reasonshape choice.
        """
        try:
            self.claim_holds(instance, _UNREAD_SOLUTION, claim)
        except _SolutionRead:
            pass

    def _check_cell(self, instance: Instance, cell: Sequence[int], rows: int, cols: int) -> None:
        r, c = cell
        if not (1 <= r <= rows and 1 <= c <= cols):
            raise ClaimError(f"{self.name}: cell {tuple(cell)} is outside the {rows}x{cols} grid")

    def _claim_number(self, claim: Claim, lo: int, hi: int | None, what: str, *, item: int | None = None) -> int:
        """``claim.value`` when it is an integer (not a bool) in ``lo..hi`` (``hi=None``: no upper bound). Raises
        :class:`ClaimError` "<puzzle>: <kind> claims need <what> lo..hi, got <value>" otherwise: a value outside the
        vocabulary (``"3"``, ``99``) is no statement about the instance, for either polarity. ``item``: check
        ``claim.value[item]`` instead (a count inside a tuple value such as ``(sign, n)``; the caller has checked
        the tuple's shape); the message still shows the whole value."""
        v = claim.value if item is None else claim.value[item]
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo or (hi is not None and v > hi):
            span = f">= {lo}" if hi is None else f"{lo}..{hi}"
            raise ClaimError(f"{self.name}: {claim.kind} claims need {what} {span}, got {claim.value!r}")
        return int(v)

    def _claim_line(self, claim: Claim, rows: int, cols: int, *, row: bool) -> int:
        """The 1-based line a row or column claim names through its one anchor cell, ``(r, 1)`` for row ``r`` and
        ``(1, c)`` for column ``c`` (``row`` says which), the form its puzzle builds and reads. Raises
        :class:`ClaimError` for another number of cells, an anchor off the ``rows x cols`` grid, or one outside
        column 1 (row claims) / row 1 (column claims): its other coordinate would otherwise be ignored."""
        if len(claim.cells) != 1:
            raise ClaimError(f"{self.name}: a {claim.kind} claim names one anchor cell, got {claim.cells}")
        self._check_cell(None, claim.cells[0], rows, cols)
        r, c = claim.cells[0]
        if (c if row else r) != 1:
            where = "(r, 1) in column 1 for row r" if row else "(1, c) in row 1 for column c"
            raise ClaimError(f"{self.name}: a {claim.kind} claim is anchored at {where}, got {claim.cells}")
        return r if row else c

    def _claim_no_value(self, claim: Claim) -> None:
        """Raise :class:`ClaimError` unless ``claim.value`` is ``None`` (kinds that assert no value)."""
        if claim.value is not None:
            raise ClaimError(f"{self.name}: {claim.kind} claims take no value, got {claim.value!r}")

    def __repr__(self) -> str:
        return f"<puzzle {self.name}>"

    # Puzzles are registered singletons: pickle them by name so TRL can ship reward functions to workers.
    def __reduce__(self):
        from reasonshape.envs import registry

        return (registry.get, (self.name,))


class _SolutionRead(Exception):
    """Raised by :data:`_UNREAD_SOLUTION` when read: the claim passed validation (see
    :meth:`Puzzle._validate_claim`)."""


class _UnreadSolution:
    """A solution stand-in that raises :class:`_SolutionRead` on any read (index, iteration, length, membership,
    attribute), for :meth:`Puzzle._validate_claim`."""

    def _read(self, *args: Any) -> Any:
        raise _SolutionRead

    __getitem__ = __iter__ = __len__ = __contains__ = __eq__ = __bool__ = _read
    __hash__ = None

    def __getattr__(self, name: str) -> Any:
        raise _SolutionRead


_UNREAD_SOLUTION = _UnreadSolution()


#: The public :class:`Puzzle` methods that take an instance -> the position of ``instance`` among their arguments
#: after ``self``. Each is wrapped with the instance guard (see :class:`Puzzle`). Source: reasonshape choice.
INSTANCE_METHODS: dict[str, int] = {
    "format_desc": 0, "format_game_id": 0, "render_prompt": 0, "parse_answer": 1, "format_answer": 0, "check": 0,
    "solve": 0, "unique_solution": 0, "decode_tatham_solution": 0, "solution_claims": 0, "given_claims": 0,
    "variables": 0, "units": 0, "verify_claim": 0,
}

_MISSING = object()


def check_instance(puzzle: Puzzle, instance: Any, method: str = "") -> None:
    """Raise :class:`ConfigError` unless ``instance`` is an :class:`Instance` of ``puzzle``.

    The one check behind the instance guard of :class:`Puzzle`'s public methods; ``method`` (e.g. ``"check"``)
    is named in the message. Source: reasonshape choice.

    Raises
    ------
    ConfigError
        ``instance`` belongs to another puzzle ("a tents instance was given to keen.check"), or is not an
        :class:`Instance` at all (e.g. a game-ID string: parse it with :meth:`Puzzle.parse_game_id` first).
    """
    owner = getattr(instance, "puzzle", None)
    if owner == puzzle.name:
        return
    where = f"{puzzle.name}.{method}" if method else puzzle.name
    if isinstance(instance, Instance):
        raise ConfigError(f"a {owner} instance was given to {where}; use reasonshape.envs.get({owner!r}) for it")
    raise ConfigError(f"{where} expects a {puzzle.name} Instance, got {type(instance).__name__} {instance!r:.80}"
                      f" (parse a game ID with reasonshape.envs.get({puzzle.name!r}).parse_game_id)")


def _guarded(fn: Callable, pos: int) -> Callable:
    """``fn`` (a method taking an instance at argument ``pos`` after ``self``) behind :func:`check_instance`."""

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if len(args) > pos:
            inst = args[pos]
        else:
            inst = kwargs.get("instance", _MISSING)
            if inst is _MISSING:  # let Python report the missing argument
                return fn(self, *args, **kwargs)
        if getattr(inst, "puzzle", None) != self.name:
            check_instance(self, inst, fn.__name__)
        return fn(self, *args, **kwargs)

    method._instance_guarded = True
    return method


def _typed_parse_errors(fn: Callable, what: str) -> Callable:
    """``fn`` (``parse_params(text)`` or ``parse_desc(params, desc)``) with any other ``ValueError`` it raises (e.g.
    ``int()`` refusing a digit run of 4,301+ characters, CPython's conversion limit) turned into a
    :class:`GameIdError` at position 0, the cause chained: malformed text is a :class:`GameIdError`, always, whether
    the parser is called directly or through :meth:`Puzzle.parse_game_id`. Source: reasonshape choice."""

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except GameIdError:
            raise
        except ValueError as e:
            text = args[-1] if args and isinstance(args[-1], str) else ""
            cause = str(e).split(";")[0]
            if "integer string conversion" in cause:  # CPython's digit limit: say what is wrong, not how int() failed
                cause = f"numbers of at most {MAX_DIGITS} digits"
            raise GameIdError(text, 0, f"a well-formed {self.name} {what} ({cause})") from e

    method._parse_guarded = True
    return method


def _text_answer_refused(fn: Callable) -> Callable:
    """``check(instance, answer)`` refusing text for ``answer``: a completion or a grid written as text is read by
    :meth:`Puzzle.parse_answer` first. No puzzle's solution value is a string, so without this a correct grid passed
    as text would come back as a plausible rule violation ("shape") rather than as the caller's mistake.
    Source: reasonshape choice."""

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        answer = args[1] if len(args) > 1 else kwargs.get("answer")
        if isinstance(answer, str | bytes):
            raise ConfigError(f"{self.name}.check expects a ParsedAnswer or a solution value, got "
                              f"{type(answer).__name__} {answer!r:.60}: read text with parse_answer(text, instance) "
                              "first")
        return fn(self, *args, **kwargs)

    method._text_refused = True
    return method


def _guard_instance_methods(cls: type) -> None:
    """Wrap the :data:`INSTANCE_METHODS` that ``cls`` itself defines (not abstract, not wrapped yet), its own
    ``parse_params`` / ``parse_desc`` (:func:`_typed_parse_errors`) and its own ``check``
    (:func:`_text_answer_refused`)."""
    fn = cls.__dict__.get("check")
    if callable(fn) and not getattr(fn, "_text_refused", False) and not getattr(fn, "__isabstractmethod__", False):
        cls.check = _text_answer_refused(fn)
    for name, pos in INSTANCE_METHODS.items():
        fn = cls.__dict__.get(name)
        if (callable(fn) and not getattr(fn, "_instance_guarded", False)
                and not getattr(fn, "__isabstractmethod__", False)):
            setattr(cls, name, _guarded(fn, pos))
    for name, what in (("parse_params", "params"), ("parse_desc", "desc")):
        fn = cls.__dict__.get(name)
        if (callable(fn) and not getattr(fn, "_parse_guarded", False)
                and not getattr(fn, "__isabstractmethod__", False)):
            setattr(cls, name, _typed_parse_errors(fn, what))


_guard_instance_methods(Puzzle)


@functools.lru_cache(maxsize=4096)
def _cached_solve(puzzle: Puzzle, instance: Instance, max_solutions: int) -> SolveResult:
    return puzzle._solve(instance, max_solutions)

