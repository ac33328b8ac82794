"""The command line, in-process (``reasonshape.cli.main``) on real puzzles and traces."""

import json
import sys

import pytest

from reasonshape import envs
from reasonshape.cli import main
from reasonshape.extraction import deduce_trace


def test_puzzles_generate_render_solve_check(tmp_path, capsys):
    assert main(["puzzles", "generate", "tents", "--level", "easy", "-n", "2", "--seed", "4"]) == 0
    ids = capsys.readouterr().out.split()
    assert len(ids) == 2 and all(i.startswith("tents:6x6de:") for i in ids)

    assert main(["puzzles", "render", ids[0]]) == 0
    assert "<answer>" in capsys.readouterr().out

    assert main(["puzzles", "solve", ids[0], "--json"]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert solved["unique"] is True

    good = tmp_path / "good.txt"
    good.write_text(f"My answer:\n<answer>\n{solved['solution']}\n</answer>")
    assert main(["puzzles", "check", ids[0], str(good)]) == 0
    assert "all rules satisfied" in capsys.readouterr().out

    bad = tmp_path / "bad.txt"
    bad.write_text("<answer>\n" + solved["solution"].replace("T", ".", 1) + "\n</answer>")
    assert main(["puzzles", "check", ids[0], str(bad), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["ok"] is False and verdict["violations"]


def test_game_id_without_puzzle_name_is_a_clear_error(capsys):
    assert main(["puzzles", "render", "6x6de:_g_gcgda,0,1,1,2,0,3,2,1,1,1,1,1"]) == 2
    assert "puzzle name prefix" in capsys.readouterr().err
    assert main(["puzzles", "render", "6x6de:_g_gcgda,0,1,1,2,0,3,2,1,1,1,1,1", "--puzzle", "tents"]) == 0


def test_unknown_puzzle_prefix_names_the_puzzle(capsys):
    assert main(["puzzles", "render", "foo:6x6de:_g_gcgda,0,1,1,2,0,3,2,1,1,1,1,1"]) == 2
    err = capsys.readouterr().err
    assert "unknown puzzle 'foo'" in err and "tents" in err and "prefix" not in err


GAME_ID = "tents:6x6de:_g_gcgda,0,1,1,2,0,3,2,1,1,1,1,1"


@pytest.mark.parametrize("argv,what", [(["puzzles", "check", GAME_ID], "the answer file"),
                                      (["graph", "--game-id", GAME_ID], "the trace file")])
def test_unreadable_input_file_is_a_one_line_error(argv, what, tmp_path, capsys):
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    for name, cause in (("missing.txt", "No such file or directory"), (".", "Is a directory"),
                        ("latin1.txt", "can't decode")):
        assert main([*argv, str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"reasonshape {argv[0]}: error: cannot read {what} ") and cause in err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv,message", [
    (["puzzles", "generate", "tents", "-n", "0"], "reasonshape puzzles: error: generate: -n must be >= 1, got 0"),
    (["graph", "-", "--game-id", GAME_ID, "--llm-model", "m"],
     "reasonshape graph: error: --llm-base-url and --llm-model go together"),
])
def test_bad_options_are_one_line_errors(argv, message, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == message


@pytest.mark.parametrize("level,cause", [("0x0de", "(at position 0: expected a width between 4 and 99, got 0)"),
                                         ("100x100de", "a width between 4 and 99, got 100"),
                                         ("8y8de", "(at position 1: expected"),
                                         # a level name: no params parse detail, a suggestion when one is close
                                         ("extreme", "got 'extreme'\n"),
                                         ("Hrad", "got 'Hrad' (did you mean 'hard'?)")])
def test_bad_level_is_a_one_line_error(level, cause, capsys):
    assert main(["puzzles", "generate", "tents", "--level", level]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reasonshape puzzles: error: level must be one of ['trivial', 'easy', 'normal', 'hard'] "
                          f"or a tents params string (e.g. '4x4de'), got {level!r}") and cause in err
    assert "invalid game ID" not in err and len(err.strip().splitlines()) == 1


def test_bad_game_id_reports_the_position(capsys):
    assert main(["puzzles", "solve", "tents:6x6de:_g_gcgda,0,1"]) == 2
    assert "position" in capsys.readouterr().err


def test_graph_command(tmp_path, capsys):
    p = envs.get("solo")
    inst = p.generate("easy", seed=1)
    trace = tmp_path / "trace.txt"
    trace.write_text(deduce_trace(p, inst, "focused").text)
    out_json, out_png = tmp_path / "g.json", tmp_path / "g.png"
    game_id = f"solo:{p.format_game_id(inst)}"
    assert main(["graph", str(trace), "--game-id", game_id, "--json", str(out_json), "--plot", str(out_png)]) == 0
    text = capsys.readouterr().out
    assert "answer: correct" in text and "eta" in text
    rec = json.loads(out_json.read_text())
    assert rec["correct"] and rec["metrics"]["eta"] > 0 and rec["graph"]["nodes"]
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graph_outputs_into_new_folders_in_the_suffix_format(tmp_path, monkeypatch, capsys):
    # the parent folders of --json / --plot are created (as eval --out is); --plot writes what its suffix names
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.txt").write_text("(1,1) is empty.")
    argv = ["graph", "trace.txt", "--game-id", GAME_ID]
    assert main([*argv, "--json", "g/out.json", "--plot", "g/sub/out.png"]) == 0
    assert json.loads((tmp_path / "g" / "out.json").read_text())["game_id"]
    assert (tmp_path / "g" / "sub" / "out.png").read_bytes()[:4] == b"\x89PNG"
    assert main([*argv, "--plot", "g/out.svg"]) == 0
    assert (tmp_path / "g" / "out.svg").read_bytes().lstrip()[:5] == b"<?xml"
    capsys.readouterr()
    # another suffix is refused before any work: one line, exit status 2, nothing on stdout
    assert main([*argv, "--plot", "g/out.txt"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("reasonshape graph: error: cannot draw a claim graph to 'g/out.txt'")
    assert len(err.strip().splitlines()) == 1
    (tmp_path / "file").write_text("")
    assert main([*argv, "--json", "file/out.json"]) == 2
    assert capsys.readouterr().err.startswith("reasonshape graph: error: cannot write --json 'file/out.json'")


@pytest.mark.parametrize("argv", [["--help"], ["puzzles", "--help"], ["graph", "--help"], ["train", "--help"],
                                  ["eval", "--help"], ["demo", "--help"], ["ablate", "--help"]])
def test_help(argv, capsys):
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse exits after printing help
        rc = e.code
    assert rc == 0
    assert "usage" in capsys.readouterr().out.lower()


def test_demo_trains_from_any_working_directory(tmp_path, monkeypatch, capsys):
    # the smoke config is found beside the package, not only in the current folder (the repository root)
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--skip", "puzzles", "eval", "--out", "d"]) == 0
    assert (tmp_path / "d" / "grpo" / "model.safetensors").is_file()
    assert (tmp_path / "d" / "tiny-model" / "config.json").is_file() and not (tmp_path / "runs").exists()
    assert "demo finished" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["puzzles", "list"], ["eval", "--embedded"]])
def test_ctrl_c_is_exit_status_130_without_a_traceback(command, monkeypatch, capsys):
    import reasonshape.envs.cli as puzzles_cli
    import reasonshape.training.eval as eval_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(puzzles_cli, "main", interrupted)
    monkeypatch.setattr(eval_module, "run_eval", interrupted)
    assert main(command) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err == f"reasonshape {command[0]}: interrupted\n"


def test_python_m_eval_goes_through_the_cli(monkeypatch, capsys):
    # ``python -m reasonshape.training.eval`` is ``reasonshape eval``: Ctrl-C is one line and exit status 130 there too
    import runpy

    import reasonshape.training.eval as eval_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(eval_module, "run_eval", interrupted)
    monkeypatch.setattr(sys, "argv", ["reasonshape.training.eval", "--embedded"])
    with pytest.warns(RuntimeWarning, match="found in sys.modules"), pytest.raises(SystemExit) as exc:
        runpy.run_module("reasonshape.training.eval", run_name="__main__")
    assert exc.value.code == 130
    assert capsys.readouterr().err == "reasonshape eval: interrupted\n"


def test_ctrl_c_inside_the_eval_loop_is_reported_once(tmp_path, monkeypatch, capsys):
    import reasonshape.training.eval as eval_module

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(eval_module._BatchRunner, "run", interrupted)
    assert main(["eval", "--embedded", "--no-progress", "--out", str(tmp_path / "o")]) == 130
    err = capsys.readouterr().err
    assert err.count("interrupted") == 1 and "rerun the same command to resume" in err


def test_version_is_the_installed_distributions(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"reasonshape {version('reasonshape')}"


def _subparsers(parser):
    import argparse

    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_every_puzzles_and_eval_option_is_described_with_its_default():
    from dataclasses import MISSING, fields

    from reasonshape.cli import build_parser
    from reasonshape.training.eval import EvalConfig

    top = _subparsers(build_parser())
    commands = {f"puzzles {k}": v for k, v in _subparsers(top["puzzles"]).items()} | {"eval": top["eval"]}
    undescribed = [f"{name} {a.dest}" for name, p in commands.items() for a in p._actions
                   if a.dest != "help" and not a.help]
    assert not undescribed
    defaults = {f.name: f.default for f in fields(EvalConfig) if f.default not in (None, MISSING)}
    helps = {a.dest: a.help for a in top["eval"]._actions}
    assert defaults and all("default" in helps[name] for name in defaults), [
        name for name in defaults if "default" not in helps[name]]
