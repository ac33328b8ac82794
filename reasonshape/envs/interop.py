"""Interoperability with reasoning-gym: its futoshiki, sudoku and mini_sudoku questions as our instances.

reasoning-gym (open-thought/reasoning-gym) renders its grid puzzles as text questions. This module reads the puzzle
back out of that text and builds the equivalent instance of the collection's game:

==============  ====================  ========================================================================
task            our puzzle            params
==============  ====================  ========================================================================
``futoshiki``   ``unequal``           ``NdR`` (order ``N``)
``sudoku``      ``solo``              ``3x3du``
``mini_sudoku`` ``solo``              ``2x2du``
==============  ====================  ========================================================================

The desc is written exactly as the collection writes it (``unequal.encode_desc`` / ``solo.encode_grid``), so the
game ID loads in the collection. The difficulty letter is a documented placeholder (reasonshape choice): these
puzzles were never graded by the collection's solver, so they get its most permissive grade (``r`` "Recursive"
for unequal, ``u`` "Unreasonable" for solo), the grade that admits any puzzle the solver can finish by guessing.
Many reasoning-gym puzzles have several solutions (its scorer compares with one stored solution; see
reasoning-gym issue #153): instances here are NOT required to be unique; use ``solve(max_solutions=k)``,
``check`` (by the rules) and ``verify_claim`` (which handles non-unique instances).

Futoshiki rendering read here (reasoning-gym ``games/futoshiki.py``): cell rows hold ``_`` (blank) or a digit per
cell, 4 characters apart, with ``<``/``>`` between two cells of a row; between two cell rows, a row with ``∧``
(upper < lower) or ``∨`` (upper > lower) under a cell. ASCII ``^``/``v`` are accepted too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from reasonshape.envs.base import Instance
from reasonshape.envs.registry import get
from reasonshape.errors import GameIdError, ReasonshapeError

__all__ = [
    "REASONING_GYM_TASKS",
    "ReasoningGymParseError",
    "TraceFileError",
    "ReasoningGymTrace",
    "from_reasoning_gym",
    "load_reasoning_gym_traces",
]

#: reasoning-gym task -> our puzzle name.
REASONING_GYM_TASKS: dict[str, str] = {"futoshiki": "unequal", "sudoku": "solo", "mini_sudoku": "solo"}
#: Placeholder difficulty of imported instances (see the module docstring).
IMPORT_DIFFICULTY: dict[str, str] = {"unequal": "r", "solo": "u"}

_BLANKS = {"_", ".", "0"}
_UP = {"∧", "^"}
_DOWN = {"∨", "v", "V"}


class ReasoningGymParseError(GameIdError):
    """A reasoning-gym question whose puzzle cannot be read.

    Attributes
    ----------
    task : str
        The reasoning-gym task name.
    position : int | None
        0-based character offset in the question where reading failed, when known.
    """

    def __init__(self, task: str, question: str, position: int | None, expected: str):
        self.task = task
        super().__init__(question, position, f"{expected} (reasoning-gym task {task!r})")


class TraceFileError(ReasonshapeError, ValueError):
    """A line of a traces file that is not a JSON object with the required fields; names the line."""


@dataclass(frozen=True)
class ReasoningGymTrace:
    """One real trace on a reasoning-gym question, with the question as our instance.

    Attributes
    ----------
    instance : Instance
        The puzzle as an ``unequal`` or ``solo`` instance (possibly with several solutions).
    completion : str
        The model's full response (final answer in ``<answer>`` tags).
    model, task, source : str
        Model id, reasoning-gym task, and provenance (``repo@commit:path#question.completion``).
    reasoning_gym_score : float | None
        reasoning-gym's own score (compares with ONE stored solution, with partial credit).
    question, expected_answer : str
        reasoning-gym's question text and its stored solution.
    """

    instance: Instance
    completion: str
    model: str
    task: str
    source: str
    reasoning_gym_score: float | None
    question: str = ""
    expected_answer: str = ""


def _lines_with_offsets(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out


def _sudoku(task: str, question: str) -> Instance:
    n, (c, r) = (9, (3, 3)) if task == "sudoku" else (4, (2, 2))
    symbols = {str(v): v for v in range(1, n + 1)}
    lines = _lines_with_offsets(question)
    run: list[list[int]] = []
    start = None
    for pos, line in lines:
        toks = line.split()
        if len(toks) == n and all(t in symbols or t in _BLANKS for t in toks):
            if not run:
                start = pos
            run.append([symbols.get(t, 0) for t in toks])
            if len(run) == n:
                break
        else:
            run, start = [], None
    if len(run) != n:
        raise ReasoningGymParseError(task, question, start, f"{n} consecutive rows of {n} cells (digits 1-{n} or _)")
    solo = get("solo")
    params = solo.parse_params(f"{c}x{r}d{IMPORT_DIFFICULTY['solo']}")
    return solo.make_instance(params, run)


def _futoshiki(task: str, question: str) -> Instance:
    m = re.search(r"(\d+)x(\d+) Futoshiki", question)
    lines = _lines_with_offsets(question)
    first = None
    for idx, (_, line) in enumerate(lines):
        toks = line.split()
        if toks and (toks[0] in _BLANKS or toks[0].isdigit()) and all(
                t in _BLANKS or t.isdigit() or t in "<>" for t in toks):
            first = idx
            break
    if first is None:
        raise ReasoningGymParseError(task, question, None, "a futoshiki grid (rows of _ and digits with < >)")
    first_row = [t for t in lines[first][1].split() if t not in "<>"]
    n = int(m.group(1)) if m else len(first_row)
    if m and m.group(1) != m.group(2):
        raise ReasoningGymParseError(task, question, m.start(), "a square NxN futoshiki")
    if not 3 <= n <= 32:
        raise ReasoningGymParseError(task, question, lines[first][0], f"a grid order between 3 and 32, got {n}")
    if first + 2 * n - 1 > len(lines):
        raise ReasoningGymParseError(task, question, lines[-1][0], f"{2 * n - 1} grid lines (cell and sign rows)")
    nums = [[0] * n for _ in range(n)]
    flags = [[0] * n for _ in range(n)]
    from reasonshape.envs.unequal import D, L, R, U

    columns: list[int] = []
    for y in range(n):
        pos, line = lines[first + 2 * y]
        cells: list[tuple[int, str]] = []
        signs: list[tuple[int, str]] = []  # (index of the cell before the sign, sign)
        for mt in re.finditer(r"\S+", line):
            tok = mt.group()
            if tok in ("<", ">"):
                if not cells:
                    raise ReasoningGymParseError(task, question, pos + mt.start(), "a cell before a sign")
                signs.append((len(cells) - 1, tok))
            elif tok in _BLANKS or (tok.isascii() and tok.isdigit() and 1 <= int(tok) <= n):
                cells.append((mt.start(), tok))
            else:
                raise ReasoningGymParseError(task, question, pos + mt.start(),
                                             f"a cell (_ or a number 1-{n}) or a sign < >")
        if len(cells) != n:
            raise ReasoningGymParseError(task, question, pos, f"{n} cells in grid row {y + 1}, got {len(cells)}")
        if y == 0:
            columns = [p for p, _ in cells]
        for x, (_, tok) in enumerate(cells):
            nums[y][x] = 0 if tok in _BLANKS else int(tok)
        for x, sign in signs:
            if x + 1 >= n:
                raise ReasoningGymParseError(task, question, pos, "a sign between two cells, not after the last")
            if sign == ">":
                flags[y][x] |= R
            else:
                flags[y][x + 1] |= L
        if y + 1 < n:
            vpos, vline = lines[first + 2 * y + 1]
            for k, ch in enumerate(vline):
                if ch.isspace():
                    continue
                if ch not in _UP and ch not in _DOWN:
                    raise ReasoningGymParseError(task, question, vpos + k, "a vertical sign ∧ or ∨ (or spaces)")
                if k not in columns:
                    raise ReasoningGymParseError(task, question, vpos + k, "a vertical sign under a cell")
                x = columns.index(k)
                if ch in _UP:
                    flags[y + 1][x] |= U
                else:
                    flags[y][x] |= D
    unequal = get("unequal")
    params = unequal.parse_params(f"{n}d{IMPORT_DIFFICULTY['unequal']}")
    try:
        return unequal.make_instance(params, nums, flags)
    except GameIdError as e:
        raise ReasoningGymParseError(task, question, None, f"consistent signs: {e.expected}") from None


def from_reasoning_gym(task: str, question: str) -> Instance:
    """Read a reasoning-gym ``futoshiki`` / ``sudoku`` / ``mini_sudoku`` question into our instance.

    Parameters
    ----------
    task : str
        The reasoning-gym task name, a key of :data:`REASONING_GYM_TASKS`.
    question : str
        reasoning-gym's question text (the puzzle rendering with its instructions).

    Returns
    -------
    Instance
        An ``unequal`` (futoshiki, order N) or ``solo`` (sudoku 3x3 boxes, mini_sudoku 2x2 boxes) instance whose
        game ID the collection accepts. It may have several solutions.

    Raises
    ------
    ReasoningGymParseError
        (a :class:`~reasonshape.errors.GameIdError`) unknown task, or a question whose grid cannot be read; the
        message names the character offset and what was expected there.

    Examples
    --------
    >>> q = "Solve this 4x4 Mini Sudoku puzzle:\\n_ 4 _ 1\\n1 _ _ _\\n_ _ 2 3\\n_ 2 _ _\\n"
    >>> from_reasoning_gym("mini_sudoku", q).game_id
    '2x2du:a4a1_1e2_3a2b'
    """
    if task not in REASONING_GYM_TASKS:
        raise ReasoningGymParseError(str(task), str(question), None,
                                     f"a task among {sorted(REASONING_GYM_TASKS)}")
    if not isinstance(question, str):
        raise ReasoningGymParseError(task, repr(question), None, "the question as a string")
    if task == "futoshiki":
        return _futoshiki(task, question)
    return _sudoku(task, question)


def load_reasoning_gym_traces(path: str | Path) -> Iterator[ReasoningGymTrace]:
    """Yield :class:`ReasoningGymTrace` records from a JSON-lines file of reasoning-gym traces.

    Each line needs ``task``, ``question`` and ``completion``; ``model``, ``source``, ``reasoning_gym_score`` and
    ``expected_answer`` are read when present (the layout of ``shared/data/real_traces``). Blank lines are skipped.
    Records are read lazily, one line at a time.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist (raised at the first ``next()``, as for any generator).
    TraceFileError
        A line that is not a JSON object or lacks a required field (the line number is named).
    ReasoningGymParseError
        A question whose puzzle cannot be read.
    """
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise TraceFileError(f"{path}:{lineno}: not JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise TraceFileError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            missing = [k for k in ("task", "question", "completion") if k not in row]
            if missing:
                raise TraceFileError(f"{path}:{lineno}: missing field(s) {missing}")
            score = row.get("reasoning_gym_score")
            yield ReasoningGymTrace(
                instance=from_reasoning_gym(row["task"], row["question"]),
                completion=row["completion"],
                model=row.get("model", ""),
                task=row["task"],
                source=row.get("source", ""),
                reasoning_gym_score=None if score is None else float(score),
                question=row["question"],
                expected_answer=row.get("expected_answer", ""),
            )
