"""Generate the benchmark manifest ``reasonshape/data/benchmark_manifest.jsonl`` with the collection's binaries.

The benchmark (paper A §A; METHOD.md §A) is 21 puzzles x 4 levels x 5 instances = 420. Every instance is made by
Simon Tatham's own generator (Debian package ``sgt-puzzles``, binaries ``/usr/games/sgt-<puzzle>``), never by
reasonshape's native generators, so the benchmark does not depend on our code. For each (puzzle, level) one call

    sgt-<puzzle> --generate 5 --save DIR/i --with-solutions PARAMS#SEED

writes five save files; from each we keep the seed the collection used (``SEED``: ``SEED``, ``SEED-1``, ...;
``sgt-<puzzle> --generate 1 PARAMS#<tatham_seed>`` reproduces that instance alone), the desc (``DESC``) and the
collection's solution (``SOLVE``, a move string). Small levels repeat instances: then more are generated from the
same seeds and the first five distinct ones are kept (see :func:`generate`).

Params come from the puzzle module's ``LEVELS`` table when the module exists (``reasonshape.envs.get(name)``),
else from the proposed table in the shared data README (:data:`PROPOSED_LEVELS`). ``SEED`` is a fixed function of
(puzzle, level) (:func:`base_seed`), so a rerun with the same collection version writes the same file.

Each output line: ``puzzle``, ``level``, ``index`` (0-4), ``params`` (full params, difficulty included),
``game_id`` (``params:desc``, as ``Puzzle.parse_game_id`` accepts), ``tatham_seed``, ``tatham_solve``.

Usage::

    python benchmarks/make_manifest.py [--out reasonshape/data/benchmark_manifest.jsonl] [--n 5]
                                       [--puzzles tents,solo] [--check]

``--check`` also parses every implemented puzzle's game ID and compares our unique solution with the collection's
(what ``tests/training/test_manifest.py`` asserts), reporting mismatches instead of stopping.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reasonshape import envs
from reasonshape.errors import UnknownPuzzleError

#: Level -> the collection's full params, proposed in shared/data/README.md; used only for puzzles whose module
#: does not exist yet (the module's own ``LEVELS`` table wins otherwise).
PROPOSED_LEVELS: dict[str, tuple[str, str, str, str]] = {
    "solo": ("2x2", "2x3db", "3x3db", "3x3da"),
    "keen": ("3de", "4de", "5dn", "6dh"),
    "towers": ("3de", "4de", "5dh", "6dh"),
    "unequal": ("3dt", "4de", "5dk", "6dx"),
    "tents": ("4x4de", "6x6de", "8x8dt", "10x10dt"),
    "lightup": ("3x3b20s0d0", "5x5b20s4d0", "7x7b20s4d1", "10x10b20s4d2"),
    "magnets": ("3x3deS", "4x4de", "6x5dt", "8x7dt"),
    "undead": ("3x3de", "4x4de", "4x4dt", "5x5dt"),
    "dominosa": ("1dt", "2dt", "3db", "4db"),
    "pattern": ("3x3", "5x5", "8x8", "10x10"),
    "mosaic": ("3x3", "4x4", "6x6", "8x8"),
    "singles": ("3x3de", "4x4de", "5x5dk", "6x6dk"),
    "range": ("3x3", "5x5", "7x7", "9x6"),
    "unruly": ("6x6dt", "6x6de", "8x8de", "10x10dn"),
    "filling": ("2x3", "4x4", "5x5", "7x7"),
    "bridges": ("3x3", "5x5i30e10m2d0", "7x7i30e10m2d1", "7x7i30e10m2d2"),
    "net": ("2x2", "3x3", "4x4", "5x5"),
    "slant": ("2x2de", "4x4de", "5x5de", "5x5dh"),
    "signpost": ("2x3", "3x3", "4x4c", "5x5c"),
    "loopy": ("3x3t0de", "4x4t0de", "5x5t0dn", "7x7t0dt"),
    "tracks": ("4x4de", "5x5de", "6x6dt", "8x8dh"),
}

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "reasonshape" / "data" / "benchmark_manifest.jsonl"
#: Salt of the per-(puzzle, level) seeds; changing it changes every instance.
SEED_SALT = "reasonshape-benchmark-v1"


def base_seed(puzzle: str, level: str) -> str:
    """The collection seed of instance 0 of (puzzle, level): 15 decimal digits from SHA-256 (reasonshape choice)."""
    digest = hashlib.sha256(f"{SEED_SALT}|{puzzle}|{level}".encode()).digest()
    return str(int.from_bytes(digest[:8], "big") % 10**15)


def level_params(puzzle: str) -> dict[str, str]:
    """Level -> full params: the module's ``LEVELS`` (normalised by its ``format_params``) or the proposed table."""
    try:
        p = envs.get(puzzle)
    except UnknownPuzzleError:
        return dict(zip(envs.LEVEL_NAMES, PROPOSED_LEVELS[puzzle], strict=True))
    return {lv: p.format_params(p.parse_params(p.LEVELS[lv]), full=True) for lv in envs.LEVEL_NAMES}


def read_savefile(path: Path) -> dict[str, str]:
    """Fields of one save file of the collection (``KEY:LEN:VALUE`` records; VALUE is LEN bytes, may hold ':')."""
    data = path.read_bytes()
    out: dict[str, str] = {}
    i = 0
    while i < len(data):
        c1 = data.index(b":", i)
        c2 = data.index(b":", c1 + 1)
        key = data[i:c1].decode().strip()
        n = int(data[c1 + 1:c2])
        out.setdefault(key, data[c2 + 1:c2 + 1 + n].decode())
        i = c2 + 1 + n
        while i < len(data) and data[i:i + 1] in (b"\n", b"\r"):
            i += 1
    return out


def _run_sgt(puzzle: str, params: str, seed: str, count: int, timeout: float) -> list[dict[str, str]]:
    """The save files of one ``sgt-<puzzle> --generate COUNT --save ... --with-solutions PARAMS#SEED`` call."""
    binary = f"/usr/games/sgt-{puzzle}"
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [binary, "--generate", str(count), "--save", f"{tmp}/i", "--with-solutions", f"{params}#{seed}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, "DISPLAY": ""})
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-500:]}")
        saves = [read_savefile(Path(tmp) / f"i{i}") for i in range(count)]
    for save in saves:
        if not {"SEED", "DESC", "SOLVE"} <= save.keys():
            raise RuntimeError(f"sgt-{puzzle} {params}: a save file lacks SEED, DESC or SOLVE")
    return saves


def generate(puzzle: str, level: str, params: str, n: int, timeout: float) -> list[dict]:
    """``n`` manifest rows for (puzzle, level): the first ``n`` distinct instances the collection generates.

    Seeds run ``S, S-1, S-2, ...`` (the collection's batch numbering) from ``S = base_seed(puzzle, level)``; tiny
    levels repeat instances, so the pool grows (``n``, ``4n``, ``20n`` instances; the same seeds each time) until
    it holds ``n`` distinct descs. A level with fewer than ``n`` distinct instances in the largest pool (dominosa
    ``1dt``: a 2x3 grid has only 4 puzzles with a unique solution) is completed with the earliest repeats, in
    generation order.
    """
    seed = base_seed(puzzle, level)
    for count in (n, 4 * n, 20 * n):
        saves = _run_sgt(puzzle, params, seed, count, timeout)
        first: dict[str, int] = {}
        for i, save in enumerate(saves):
            first.setdefault(save["DESC"], i)
        if len(first) >= n:
            break
    chosen = sorted(first.values())[:n]
    if len(chosen) < n:
        chosen += [i for i in range(len(saves)) if i not in chosen][:n - len(chosen)]
        chosen.sort()
    return [{"puzzle": puzzle, "level": level, "index": k, "params": params,
             "game_id": f"{params}:{saves[i]['DESC']}", "tatham_seed": saves[i]["SEED"],
             "tatham_solve": saves[i]["SOLVE"]} for k, i in enumerate(chosen)]


def check_row(row: dict) -> str | None:
    """``None`` when our parse + unique solution agree with the collection's solution, else what went wrong."""
    try:
        p = envs.get(row["puzzle"])
    except UnknownPuzzleError:
        return None
    try:
        inst = p.parse_game_id(row["game_id"])
        if p.format_game_id(inst) != row["game_id"]:
            return f"format_game_id gives {p.format_game_id(inst)!r}"
        ours = p.unique_solution(inst)
        theirs = p.decode_tatham_solution(inst, row["tatham_solve"])
        return None if ours == theirs else "our unique solution differs from the collection's"
    except Exception as e:  # report every failure, keep going
        return f"{type(e).__name__}: {e}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--n", type=int, default=5, help="instances per (puzzle, level)")
    ap.add_argument("--puzzles", default=",".join(envs.PUZZLE_NAMES), help="comma-separated puzzle names")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per sgt call")
    ap.add_argument("--check", action="store_true", help="solve every implemented row and compare")
    args = ap.parse_args(argv)
    puzzles = [s for s in args.puzzles.split(",") if s]
    unknown = sorted(set(puzzles) - set(envs.PUZZLE_NAMES))
    if unknown:
        ap.error(f"--puzzles: unknown names {unknown}; known: {', '.join(envs.PUZZLE_NAMES)}")
    rows = []
    for puzzle in puzzles:
        for level, params in level_params(puzzle).items():
            t0 = time.perf_counter()
            got = generate(puzzle, level, params, args.n, args.timeout)
            rows.extend(got)
            print(f"{puzzle:9s} {level:8s} {params:15s} {time.perf_counter() - t0:7.2f}s", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"wrote {len(rows)} rows to {args.out}", file=sys.stderr)
    bad = 0
    if args.check:
        for row in rows:
            msg = check_row(row)
            if msg:
                bad += 1
                print(f"MISMATCH {row['puzzle']} {row['level']} #{row['index']} {row['game_id']}: {msg}",
                      file=sys.stderr)
        print(f"checked {len(rows)} rows: {bad} problems", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
