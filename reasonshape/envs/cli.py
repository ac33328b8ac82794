"""``reasonshape puzzles ...``: list, generate, render, solve and check puzzle instances from the shell."""

from __future__ import annotations

import argparse
import json

__all__ = ["add_parser", "main"]

_GAME_ID_HELP = "PUZZLE:params:desc, or params:desc with --puzzle"
_PUZZLE_HELP = "puzzle name when the game ID does not start with it"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("puzzles", help="list, generate, render, solve and check puzzles")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    sub.add_parser("list", help="the implemented puzzles with their level params")

    g = sub.add_parser("generate", help="print N game IDs of unique-solution instances")
    g.add_argument("puzzle", help="puzzle name, e.g. tents (reasonshape puzzles list names all 21)")
    g.add_argument("--level", default="easy", help="trivial, easy, normal, hard, or a params string (default: easy)")
    g.add_argument("-n", type=int, default=1, help="number of instances (default: 1)")
    g.add_argument("--seed", type=int, default=0,
                   help="generator seed: the same seed, level and -n give the same game IDs (default: 0)")
    g.add_argument("--backend", choices=("native", "sgt"), default="native",
                   help="native generator, or the collection's sgt-<puzzle> binary (default: native)")

    r = sub.add_parser("render", help="print the prompt for a game ID")
    r.add_argument("game_id", help=_GAME_ID_HELP)
    r.add_argument("--puzzle", help=_PUZZLE_HELP)

    s = sub.add_parser("solve", help="print the solution and whether it is unique")
    s.add_argument("game_id", help=_GAME_ID_HELP)
    s.add_argument("--puzzle", help=_PUZZLE_HELP)
    s.add_argument("--json", action="store_true", help="machine-readable output")

    c = sub.add_parser("check", help="check an answer file against the rules; exit 1 when it is not a solution")
    c.add_argument("game_id", help=_GAME_ID_HELP)
    c.add_argument("answer_file", help="text holding the answer (an <answer> block, or a bare grid); - for stdin")
    c.add_argument("--puzzle", help=_PUZZLE_HELP)
    c.add_argument("--json", action="store_true", help="machine-readable verdict (ok, violations, parse error)")
    p.set_defaults(func=main)
    return p


def resolve_game_id(game_id: str, puzzle: str | None):
    """``(puzzle object, instance)`` from ``PUZZLE:params:desc`` or ``params:desc`` plus ``--puzzle``."""
    from reasonshape import envs
    from reasonshape.errors import GameIdError

    name = puzzle
    text = game_id.strip()
    if name is None:
        head, sep, rest = text.partition(":")
        if sep and head in envs.PUZZLE_NAMES:
            name, text = head, rest
        elif sep and head.isalpha():  # a name prefix, but not a puzzle's (params always start with a digit)
            envs.get(head)  # raises UnknownPuzzleError, listing the known names
        else:
            raise GameIdError(game_id, 0, "a puzzle name prefix ('tents:8x8dt:...') or the --puzzle option")
    p = envs.get(name)
    return p, p.parse_game_id(text)  # it takes the name prefix too


def main(args) -> int:
    from reasonshape import envs

    if args.action == "list":
        for name in envs.list_puzzles():
            p = envs.get(name)
            print(f"{name:10s} " + "  ".join(f"{lv}={p.LEVELS[lv]}" for lv in envs.LEVEL_NAMES))
        missing = [n for n in envs.PUZZLE_NAMES if n not in envs.list_puzzles()]
        if missing:
            print(f"(not implemented: {', '.join(missing)})")
        return 0
    if args.action == "generate":
        if args.n < 1:
            from reasonshape.errors import ConfigError

            raise ConfigError(f"generate: -n must be >= 1, got {args.n}")
        p = envs.get(args.puzzle)
        for i in range(args.n):
            inst = p.generate(args.level, seed=args.seed, index=i, backend=args.backend)
            print(f"{p.name}:{p.format_game_id(inst)}")
        return 0
    p, inst = resolve_game_id(args.game_id, args.puzzle)
    if args.action == "render":
        print(p.render_prompt(inst))
        return 0
    if args.action == "solve":
        res = p.solve(inst, max_solutions=2)
        if args.json:
            print(json.dumps({"puzzle": p.name, "game_id": p.format_game_id(inst), "n_solutions_found":
                              len(res.solutions), "unique": res.unique,
                              "solution": p.format_answer(inst, res.solutions[0]) if res.solutions else None}))
        else:
            if not res.solutions:
                print("no solution")
                return 1
            print(p.format_answer(inst, res.solutions[0]))
            print("unique: yes" if res.unique else "unique: no (several solutions)")
        return 0
    # check
    from reasonshape.cli import read_input

    text = read_input(args.answer_file, "the answer file")
    from reasonshape.errors import AnswerParseError

    try:
        parsed = p.parse_answer(text, inst)
    except AnswerParseError as e:
        out = {"ok": False, "parse_error": e.reason, "violations": []}
    else:
        verdict = p.check(inst, parsed)
        out = {"ok": verdict.ok, "source": parsed.source,
               "violations": [{"rule": v.rule, "detail": v.detail, "cells": [list(c) for c in v.cells]}
                              for v in verdict.violations]}
    if args.json:
        print(json.dumps(out))
    else:
        if "parse_error" in out:
            print(f"not a solution: cannot parse answer: {out['parse_error']}")
        elif out["ok"]:
            print("solution: all rules satisfied")
        else:
            print("not a solution; violated rules:")
            for v in out["violations"]:
                print(f"  - {v['rule']}: {v['detail']}")
    return 0 if out["ok"] else 1
