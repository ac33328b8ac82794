"""``reasonshape graph TRACE_FILE --game-id ID``: a trace's claim graph, eta, H_str and the structural metrics."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

__all__ = ["add_parser", "main"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("graph", help="extract a trace's claim graph and print eta, H_str and the metrics")
    p.add_argument("trace_file", help="text file holding the completion (reasoning and answer); - for stdin")
    p.add_argument("--game-id", required=True, help="PUZZLE:params:desc, or params:desc with --puzzle")
    p.add_argument("--puzzle", help="puzzle name when the game ID does not start with it")
    p.add_argument("--llm-base-url", help="OpenAI-compatible endpoint for LLM-assisted extraction")
    p.add_argument("--llm-model", help="model name at --llm-base-url")
    p.add_argument("--llm-api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the API key (default: OPENAI_API_KEY)")
    p.add_argument("--json", metavar="OUT", help="write the claim graph (node-link JSON) and metrics to OUT "
                   "(missing folders are created)")
    p.add_argument("--plot", metavar="OUT.png", help="draw the claim graph to OUT.png, .svg or .pdf (the suffix "
                   "names the format; missing folders are created)")
    p.set_defaults(func=main)
    return p


def _output(option: str, path: str | None) -> None:
    """Create the parent folders of an output file before any work; an error is one line (``ConfigError``)."""
    if path is None:
        return
    from reasonshape.errors import ConfigError

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"cannot write {option} {path!r}: {e.strerror or e}") from None


def main(args) -> int:
    from reasonshape.cli import read_input
    from reasonshape.envs.cli import resolve_game_id
    from reasonshape.errors import ConfigError
    from reasonshape.extraction.graph import ClaimGraph
    from reasonshape.rewards.scorer import score_completion

    if bool(args.llm_base_url) != bool(args.llm_model):
        raise ConfigError("--llm-base-url and --llm-model go together")
    if args.plot:
        ClaimGraph.draw_format(args.plot)  # a suffix draw cannot write: refused before any work
    puzzle, inst = resolve_game_id(args.game_id, args.puzzle)
    text = read_input(args.trace_file, "the trace file")
    _output("--json", args.json)
    _output("--plot", args.plot)
    backend = None
    if args.llm_base_url:
        from reasonshape.training.backends import OpenAICompatibleBackend

        backend = OpenAICompatibleBackend(base_url=args.llm_base_url, model=args.llm_model,
                                          api_key_env=args.llm_api_key_env)
    sc = score_completion(puzzle, inst, text, llm_backend=backend, keep_graph=True)
    m = sc.metrics
    print(f"puzzle {puzzle.name}  game ID {sc.game_id}")
    print(f"answer: {'correct' if sc.correct else 'not a solution'}"
          + (f" (parse error: {sc.parse_error})" if sc.parse_error else "")
          + (f" (violated: {', '.join(sc.violations)})" if sc.violations else ""))
    print(f"extraction: {sc.extraction_mode}" + (f" (fallback: {sc.extraction_fallback})" if sc.extraction_fallback
                                                   else ""))
    print("claim labels: " + ", ".join(f"{k} {v}" for k, v in sc.labels.items()))
    if m is None:
        print("eta: undefined (no claim graph metrics)")
    else:
        for key, val in asdict(m).items():
            print(f"{key:24s} {val if not isinstance(val, float) else round(val, 6)}")
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(sc.to_record(), f)
        except OSError as e:
            raise ConfigError(f"cannot write --json {args.json!r}: {e.strerror or e}") from None
    if args.plot and sc.graph is not None:
        c_star = puzzle.solution_claims(inst) if puzzle.solve(inst, 2).unique else None
        try:
            sc.graph.draw(args.plot, c_star=c_star)
        except OSError as e:
            raise ConfigError(f"cannot write --plot {args.plot!r}: {e.strerror or e}") from None
    return 0
