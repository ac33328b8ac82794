"""The ``reasonshape`` command line: one parser, one module per subcommand.

Each subcommand module exposes ``add_parser(subparsers)`` that registers its parser and sets ``func`` to a
``main(args) -> int`` callable; heavy imports happen inside ``main`` so that ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

__all__ = ["build_parser", "main", "read_input"]

#: Subcommand modules, in the order ``--help`` lists them.
SUBCOMMAND_MODULES = (
    "reasonshape.envs.cli",  # puzzles
    "reasonshape.extraction.cli",  # graph
    "reasonshape.training.train",  # train, ablate
    "reasonshape.training.eval",  # eval
    "reasonshape.demo",  # demo
)


def read_input(path: str, what: str) -> str:
    """The text of the file ``path`` (UTF-8), or of stdin for ``"-"``; ``what`` names it in errors.

    Raises
    ------
    ConfigError
        The file cannot be read (missing, a directory, no permission) or is not UTF-8; the message names the file
        and the cause, and :func:`main` prints it as one line with exit status 2.
    """
    from reasonshape.errors import ConfigError

    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        cause = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ConfigError(f"cannot read {what} {path!r}: {cause}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reasonshape",
        description="RLVR on Simon Tatham's grid logic puzzles: puzzles, claim graphs, eta, GRPO and eval.",
    )
    from reasonshape import __version__

    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    parser.add_argument("--version", action="version", version=f"reasonshape {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for mod in SUBCOMMAND_MODULES:
        importlib.import_module(mod).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    from reasonshape.errors import ReasonshapeError

    try:
        return int(args.func(args) or 0)
    except ReasonshapeError as e:
        print(f"reasonshape {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C: one line, no traceback (unless the command said what it kept already)
        if not getattr(e, "reasonshape_reported", False):
            print(f"reasonshape {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
