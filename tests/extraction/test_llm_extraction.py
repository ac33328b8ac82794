"""LLM-assisted extraction: fallback on endpoint failure, a real HTTP endpoint, and the merge/rule logic.

The tiny local model cannot follow the JSON instructions, so the logic that reads good LLM answers is tested with
``_ScriptedLLM`` below: a FAKE standing in for a capable extractor LLM (none can run on this CPU-only, offline
machine). Everything else here is real: the deterministic path, a real ``transformers serve`` HTTP server, and a
real closed port for the failure path.
"""

import json
import re
import socket

from reasonshape import envs
from reasonshape.extraction import extract_deterministic, extract_graph
from reasonshape.extraction.llm import parse_json
from reasonshape.training.backends import GenerationBackend, OpenAICompatibleBackend, Sample

P = envs.get("solo")
INST = P.parse_game_id("2x2:b3_1b2b2b1_3b")
SOL = P.unique_solution(INST)
TRACE = (f"Row 1 needs its missing values. So (1,1) is {SOL[0][0]}. "
         f"Then that corner cell must take the last value, a {SOL[1][3]}. Therefore (2,2) is {SOL[1][1]}.")


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class _ScriptedLLM(GenerationBackend):
    """FAKE extractor LLM (labelled: a capable model cannot run here). Answers each prompt type with JSON."""

    kind = "scripted"

    def __init__(self, claims):
        self.claims = claims
        self.calls = []

    def _generate(self, prompts, *, n, temperature, top_p, max_tokens, seed, logprobs):
        self.calls.append(len(prompts))
        out = []
        for conv in prompts:
            user = conv[-1]["content"]
            if "List every atomic claim" in user:
                text = json.dumps({"claims": self.claims})
            elif "Candidate claims" in user:
                ids = [int(i) for i in re.findall(r"^(\d+): ", user, re.MULTILINE)]
                text = "```json\n" + json.dumps({"supported": ids}) + "\n```"
            else:
                text = 'Sure: {"premises": [0], "directly_stated": false, "unstated": ["(1,2) is 4"]}'
            out.append([Sample(text, None, 10, 10, "stop")])
        return out


def test_parse_json_finds_the_first_value():
    assert parse_json('noise {"a": [1, 2]} tail') == {"a": [1, 2]}
    assert parse_json("x [3] y") == [3]


def test_endpoint_failure_falls_back_to_deterministic_graph():
    backend = OpenAICompatibleBackend(f"http://127.0.0.1:{_closed_port()}/v1", "m", max_retries=0, timeout=2)
    res = extract_graph(P, INST, TRACE, llm_backend=backend)
    assert res.mode == "deterministic" and res.fallback and "BackendError" in res.fallback
    assert res.graph == extract_deterministic(P, INST, TRACE).graph


def test_scripted_llm_adds_supported_claims_and_rules():
    llm_claim = {"sentence": 2, "row": 2, "column": 4, "value": SOL[1][3], "positive": True}
    backend = _ScriptedLLM([llm_claim])
    res = extract_graph(P, INST, TRACE, llm_backend=backend)
    assert res.mode == "llm" and res.fallback is None
    claims = [n.claim for n in res.graph.nodes() if n.origin != "placeholder"]
    # the deterministic schema cannot place "that corner cell" on the grid; the LLM adds it after support check
    assert P.value_claim((2, 4), SOL[1][3]) in claims
    deterministic = [n.claim for n in extract_deterministic(P, INST, TRACE).graph.nodes()]
    assert P.value_claim((2, 4), SOL[1][3]) not in deterministic
    # the rule step's unstated premise became a placeholder
    assert any(n.origin == "placeholder" and n.claim == P.value_claim((1, 2), 4) for n in res.graph.nodes())
    # each step went to the backend as ONE batched call
    assert len(backend.calls) == 3
    res.graph.validate()


def test_a_context_shared_with_other_completions_changes_neither_path():
    # A GRPO group shares one context and its per-sentence memos: the LLM path on a warm context builds the graph a
    # fresh one builds, and the claims it adds do not leak into the memos the deterministic path reads next.
    from reasonshape.extraction.deterministic import PuzzleContext

    llm_claim = {"sentence": 2, "row": 2, "column": 4, "value": SOL[1][3], "positive": True}
    ctx = PuzzleContext(P, INST)
    extract_deterministic(P, INST, TRACE + " Row 1 needs its missing values.", context=ctx)
    warm = extract_graph(P, INST, TRACE, llm_backend=_ScriptedLLM([llm_claim]), context=ctx)
    fresh = extract_graph(P, INST, TRACE, llm_backend=_ScriptedLLM([llm_claim]))
    assert warm.mode == fresh.mode == "llm" and warm.graph == fresh.graph
    assert extract_deterministic(P, INST, TRACE, context=ctx).graph == extract_deterministic(P, INST, TRACE).graph


def test_real_endpoint_never_loses_the_trace(serve_url, tiny_model_dir):
    backend = OpenAICompatibleBackend(serve_url, str(tiny_model_dir), max_retries=1, timeout=60)
    res = extract_graph(P, INST, TRACE, llm_backend=backend, max_tokens=8)
    # the tiny model's output is not valid JSON: claims and rules fall back per item, the trace is kept
    assert res.mode in ("llm", "deterministic")
    det = {n.claim for n in extract_deterministic(P, INST, TRACE).graph.nodes()}
    assert det <= {n.claim for n in res.graph.nodes()}
    res.graph.validate()
