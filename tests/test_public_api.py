"""Every name a subpackage's ``__all__`` lists resolves; the CLI's --help works for every subcommand."""

import importlib
import subprocess
import sys

import pytest

from reasonshape.cli import build_parser


@pytest.mark.parametrize("mod", ["reasonshape.envs", "reasonshape.extraction", "reasonshape.rewards",
                                 "reasonshape.training", "reasonshape.errors"])
def test_all_names_resolve(mod):
    m = importlib.import_module(mod)
    assert m.__all__
    for name in m.__all__:
        assert getattr(m, name) is not None, name


def test_help_of_every_subcommand():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"puzzles", "graph", "train", "ablate", "eval", "demo"} <= set(sub.choices)
    for name, p in sub.choices.items():
        assert p.format_help(), name


def test_cli_runs_as_a_program():
    out = subprocess.run([sys.executable, "-m", "reasonshape.cli", "puzzles", "list"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and "tents" in out.stdout and "not implemented" not in out.stdout


def test_functions_sharing_a_submodule_name_stay_functions():
    # `reasonshape.rewards.eta` is both a submodule and a function; importing the submodule must not shadow it.
    import reasonshape.extraction  # noqa: F401  (imports the eta submodule indirectly)
    import reasonshape.rewards.eta  # noqa: F401
    import reasonshape.rewards.structural_uncertainty  # noqa: F401
    from reasonshape import rewards

    assert callable(rewards.eta) and callable(rewards.structural_uncertainty)
