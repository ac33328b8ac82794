"""Helpers shared by the per-puzzle tests: the collection's dev instances and the collection's own binaries.

Dev instances: tests/data/tatham_dev_instances.jsonl (Simon Tatham's Portable Puzzle Collection, MIT, via
shared/data; see tests/data/README.md). The ``sgt_*`` helpers run the puzzle's ``sgt-<name>`` binary (tests that use
them skip when :meth:`Puzzle.sgt_binary` is None).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "tatham_dev_instances.jsonl"


def dev_rows(puzzle: str | None = None) -> list[dict]:
    """The dev-instance records of ``puzzle`` (all puzzles with None), in file order."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    return rows if puzzle is None else [r for r in rows if r["puzzle"] == puzzle]


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, env={**os.environ, "DISPLAY": ""},
                          **kwargs)


def sgt_print_accepts(puzzle, game_id: str) -> bool:
    """The collection's own parser: ``sgt-<name> --print 1x1`` reads a game ID on stdin and fails on an invalid one."""
    return _run([puzzle.sgt_binary(), "--print", "1x1"], input=game_id + "\n").returncode == 0


def sgt_print_errors(puzzle, game_id: str) -> str:
    """The "error parsing" lines ``sgt-<name> --print 1x1`` writes for ``game_id`` (empty string: accepted)."""
    proc = _run([puzzle.sgt_binary(), "--print", "1x1"], input=game_id + "\n")
    return "\n".join(line for line in proc.stderr.splitlines() if "error parsing" in line)


def sgt_generate_accepts(puzzle, game_id: str) -> bool:
    """``sgt-<name> --generate 1 GAME_ID`` runs without an error (the collection parses and validates the ID)."""
    proc = _run([puzzle.sgt_binary(), "--generate", "1", game_id])
    return proc.returncode == 0 and "error" not in proc.stderr


def sgt_solution(puzzle, game_id: str, tmp_path: Path) -> str | None:
    """The collection's own SOLVE move for ``game_id`` (its save file with solutions), or None if it has none."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    _run([puzzle.sgt_binary(), "--generate", "1", "--save", str(tmp_path / "s"), "--with-solutions", game_id])
    for f in tmp_path.glob("s*"):
        for line in f.read_text().splitlines():
            if line.startswith("SOLVE"):
                return line.split(":", 2)[2]
    return None


def sgt_full_params(puzzle, params: str, tmp_path: Path) -> str | None:
    """The full params the collection writes for ``params`` (the ``PARAMS`` line of ``sgt-<name> --generate 1 --save``
    on it), or None if it wrote none."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    _run([puzzle.sgt_binary(), "--generate", "1", "--save", str(tmp_path / "p"), params])
    for f in tmp_path.glob("p*"):
        for line in f.read_text().splitlines():
            if line.startswith("PARAMS"):
                return line.split(":", 2)[2]
    return None


def unit_bites(unit, values, domains) -> bool:
    """Whether some assignment differing from ``values`` in one or two variables (domain values) is rejected."""
    n = len(unit.variables)
    for i in range(n):
        for a in domains[unit.variables[i]]:
            if a == values[i]:
                continue
            changed = values[:i] + (a,) + values[i + 1:]
            if not unit.allowed(changed):
                return True
            for j in range(i + 1, n):
                for b in domains[unit.variables[j]]:
                    if b != values[j] and not unit.allowed(changed[:j] + (b,) + changed[j + 1:]):
                        return True
    return False
