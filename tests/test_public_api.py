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


def test_entry_points_document_parameters_returns_raises_and_source():
    from reasonshape.envs import build_dataset
    from reasonshape.extraction import compare_graphs, extract_graph, label_claim

    for fn, sections in [(extract_graph, ("Parameters", "Returns", "Raises")),
                         (label_claim, ("Parameters", "Returns", "Raises")),
                         (compare_graphs, ("Parameters", "Returns")),
                         (build_dataset, ("Parameters", "Columns", "Raises"))]:
        for section in sections:
            assert f"\n    {section}\n    {'-' * len(section)}\n" in fn.__doc__, (fn.__name__, section)
        assert "\n    Source: " in fn.__doc__, fn.__name__
    # compare_graphs says which graph is the reference and the range of its scores
    assert "The reference" in compare_graphs.__doc__ and "[0, 1]" in compare_graphs.__doc__
