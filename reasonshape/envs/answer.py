"""Reading a model's final answer out of free text: shared by every puzzle's ``parse_answer``.

Rules (reasonshape choice, written for what real models emit):

* ``<think>...</think>`` blocks are removed first (an unclosed ``<think>`` hides everything after it, unless the
  answer block comes after the last ``</think>``): an answer written inside the reasoning is a draft, not the final
  answer. Reasoning a server separated (``reasoning_content``) reads the same way: ``trace_text`` returns it as a
  ``<think>`` block;
* the LAST ``<answer>...</answer>`` block is read (an unclosed final ``<answer>`` runs to the end of the text);
* code fences (```` ``` ````) and surrounding blank lines inside the block are dropped;
* a Markdown table's separator line (``|---|:---:|``: pipes between two or more cells of 3 or more dashes, with
  optional colons) is skipped, also where ``-`` is a symbol (magnets, tracks); a row of single ``-`` cells is a row;
* one ``.`` at the very end of the grid (a full stop after the last row, ``5 2 1 3 6 4.``) is dropped when ``.`` is
  not an answer symbol of the puzzle; where it is one (tents, lightup, ...) it stays a cell, and two are not dropped;
* when there is no answer block at all, the last grid-shaped block of the text (consecutive non-empty lines
  that tokenise into the expected number of cells) is used, and :class:`~reasonshape.envs.base.ParsedAnswer`
  says so with ``source="fallback_grid"``.

Everything here runs in time linear in the text length: ``str.find``/``rfind`` scans and one pass over lines,
no backtracking regular expressions (a 1 MB answer is a test).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from reasonshape.errors import AnswerParseError

__all__ = [
    "strip_think", "extract_answer_block", "answer_only_in_reasoning", "read_answer_block", "split_tokens",
    "parse_symbol_grid", "find_last_grid", "read_grid_answer", "digits_symbols", "format_grid",
]

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_ANS_OPEN, _ANS_CLOSE = "<answer>", "</answer>"
# Separators tolerated between cells: whitespace, commas, pipes, semicolons, brackets and quotes.
_SEP = re.compile(r"[\s,|;\[\]()\"'`]+")


def strip_think(text: str) -> str:
    """Remove ``<think>...</think>`` blocks (case-insensitive). Linear time."""
    low = text.lower()
    if _THINK_OPEN not in low and _THINK_CLOSE not in low:
        return text
    last_close = low.rfind(_THINK_CLOSE)
    if last_close >= 0 and low.find(_THINK_OPEN, last_close) < 0:
        # Everything up to the last </think> is reasoning (also covers a missing opening tag).
        return text[last_close + len(_THINK_CLOSE):]
    out, i = [], 0
    while True:
        j = low.find(_THINK_OPEN, i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        k = low.find(_THINK_CLOSE, j)
        if k < 0:  # unclosed think: the rest is reasoning
            break
        i = k + len(_THINK_CLOSE)
    return "".join(out)


def extract_answer_block(text: str) -> str | None:
    """Content of the last ``<answer>`` block (case-insensitive), code fences removed; ``None`` if there is none.

    An unclosed final ``<answer>`` runs to the end of the text.
    """
    if not isinstance(text, str):
        raise AnswerParseError(f"expected text, got {type(text).__name__}")
    body = strip_think(text)
    low = body.lower()
    start = low.rfind(_ANS_OPEN)
    if start < 0:
        return None
    start += len(_ANS_OPEN)
    end = low.find(_ANS_CLOSE, start)
    block = body[start:] if end < 0 else body[start:end]
    return _strip_fences(block)


def answer_only_in_reasoning(text: str) -> bool:
    """True when ``text`` has ``<answer>`` blocks only inside its reasoning (``<think>`` blocks): drafts, so no final
    answer block is read (:func:`extract_answer_block` gives ``None``). Linear time."""
    return _ANS_OPEN in text.lower() and read_answer_block(text)[1]


def read_answer_block(text: str) -> tuple[str | None, bool]:
    """``(extract_answer_block(text), answer_only_in_reasoning(text))`` from ONE extraction: the final block (or
    ``None``) and whether ``<answer>`` blocks exist only inside the reasoning. Linear time.

    Raises
    ------
    AnswerParseError
        ``text`` is not a string (as :func:`extract_answer_block`).
    """
    block = extract_answer_block(text)
    return block, block is None and _ANS_OPEN in text.lower()


def _strip_fences(block: str) -> str:
    lines = [ln for ln in block.splitlines() if not ln.strip().startswith("```")]
    return "\n".join(lines).strip()


def split_tokens(line: str, single_chars: bool = False) -> list[str]:
    """Split one grid row into cell tokens.

    Separators are whitespace, ``,``, ``|``, ``;`` and brackets. With ``single_chars``, a run without separators
    (``"T..T"``) is split into characters, so both ``T . . T`` and ``T..T`` read as four cells.
    """
    parts = [p for p in _SEP.split(line) if p]
    if single_chars:
        return [ch for p in parts for ch in p]
    return parts


def parse_symbol_grid(
    block: str,
    rows: int,
    cols: int,
    symbols: dict[str, object],
    single_chars: bool = True,
    normalise: Callable[[str], str] = str.upper,
) -> tuple[tuple, ...]:
    """Parse a ``rows x cols`` grid of symbols from an answer block.

    Parameters
    ----------
    block : str
        The answer text (one grid row per non-empty line).
    rows, cols : int
        Expected size.
    symbols : dict
        Accepted token (after ``normalise``) -> cell value.
    single_chars : bool
        Also accept rows written without separators (only safe when every symbol is one character).

    Returns
    -------
    tuple of tuples
        ``rows`` tuples of ``cols`` values.

    Raises
    ------
    AnswerParseError
        Wrong number of rows or cells in a row (named), or an unknown symbol (named with its row).
    """
    lines = [ln for ln in _drop_full_stop(block, symbols, normalise).splitlines()
             if ln.strip() and not _is_table_rule(ln)]
    grid_lines = [ln for ln in lines if _row_tokens(ln, symbols, single_chars, normalise) is not None]
    if len(grid_lines) != rows:
        # Tolerate a header line such as "Final grid:" only when the rest is exactly the grid.
        if len(lines) != rows:
            raise AnswerParseError(f"wrong size: {len(grid_lines) or len(lines)} rows, expected {rows}")
        grid_lines = lines
    out = []
    for i, ln in enumerate(grid_lines, 1):
        toks = split_tokens(ln, single_chars=False)
        if len(toks) != cols and single_chars:
            toks = split_tokens(ln, single_chars=True)
        if len(toks) != cols:
            raise AnswerParseError(f"wrong size: row {i} has {len(toks)} cells, expected {cols}")
        vals = []
        for t in toks:
            key = normalise(t)
            if key not in symbols:
                raise AnswerParseError(f"unknown symbol {t!r} in row {i}; expected one of {sorted(symbols)}")
            vals.append(symbols[key])
        out.append(tuple(vals))
    return tuple(out)


def _is_table_rule(line: str) -> bool:
    """Whether ``line`` is a Markdown table's separator line: at least one ``|`` and two cells, each ``-`` x 3 or
    more with an optional ``:`` at either end (``|---|:--:|``, ``---|---``)."""
    if "|" not in line:
        return False
    cells = line.strip().strip("|").split("|")
    if len(cells) < 2:
        return False
    for cell in cells:
        core = cell.strip()
        core = core[1:] if core.startswith(":") else core
        core = core[:-1] if core.endswith(":") else core
        if len(core) < 3 or core.strip("-"):
            return False
    return True


def _drop_full_stop(text: str, symbols, normalise) -> str:
    """``text`` without the one ``.`` that ends it (after trailing whitespace), when ``.`` is not a symbol and the
    character before it is no ``.`` either; else ``text`` unchanged."""
    end = text.rstrip()
    if end.endswith(".") and not end.endswith("..") and normalise(".") not in symbols:
        return end[:-1]
    return text


def _row_tokens(line, symbols, single_chars, normalise):
    toks = split_tokens(line, single_chars=False)
    if toks and all(normalise(t) in symbols for t in toks):
        return toks
    if single_chars:
        chars = split_tokens(line, single_chars=True)
        if chars and all(normalise(t) in symbols for t in chars):
            return chars
    return None


def find_last_grid(
    text: str, rows: int, cols: int, symbols: dict[str, object], single_chars: bool = True,
    normalise: Callable[[str], str] = str.upper,
) -> str | None:
    """The last block of ``rows`` consecutive lines that each tokenise into ``cols`` known symbols, or ``None``.

    One backwards pass over the lines; used only when no ``<answer>`` block exists.
    """
    lines = strip_think(text).splitlines()
    run: list[str] = []
    for ln in reversed(lines):
        # the last row of a grid may end with a full stop (see parse_symbol_grid)
        toks = _row_tokens(_drop_full_stop(ln, symbols, normalise) if not run else ln, symbols, single_chars,
                           normalise)
        if toks is not None and len(toks) == cols:
            run.append(ln)
            if len(run) == rows:
                return "\n".join(reversed(run))
        else:
            run = []
    return None


def read_grid_answer(
    text: str, rows: int, cols: int, symbols: dict[str, object], single_chars: bool = True,
    normalise: Callable[[str], str] = str.upper,
):
    """Answer block (or fallback grid) -> ``(grid, source, notes)``; the common body of grid ``parse_answer``.

    Raises
    ------
    AnswerParseError
        ``"no answer block"`` when neither an answer block nor a grid-shaped block exists; else as
        :func:`parse_symbol_grid`.
    """
    block = extract_answer_block(text)
    source, notes = "answer_block", ()
    if block is None:
        block = find_last_grid(text, rows, cols, symbols, single_chars, normalise)
        if block is None:
            raise AnswerParseError("no answer block (<answer>...</answer>) and no grid-shaped block in the text")
        source, notes = "fallback_grid", ("no <answer> block; used the last grid-shaped block",)
    grid = parse_symbol_grid(block, rows, cols, symbols, single_chars, normalise)
    return grid, source, notes


def digits_symbols(n: int) -> dict[str, int]:
    """``{"1": 1, ..., str(n): n}`` for Latin-square puzzles (``n`` up to 9: single characters)."""
    return {str(i): i for i in range(1, n + 1)}


def format_grid(grid: Sequence[Sequence[object]], sep: str = " ") -> str:
    """Rows of symbols joined by ``sep``, one row per line (the answer format in prompts)."""
    return "\n".join(sep.join(str(x) for x in row) for row in grid)
