"""Shared pytest fixtures and markers for reasonshape's tests. Everything here runs offline.

Session fixtures:

* ``tiny_model_dir``: the tiny chat model of :func:`reasonshape.training.tiny.build_tiny_model` (random-init Qwen2,
  locally trained tokenizer, ChatML template), built once per session into a temporary directory;
* ``serve_url``: a real ``transformers serve`` process on 127.0.0.1 (free port) serving ``tiny_model_dir``, started
  once, waited for (``/health``), terminated at the end of the session. Its OpenAI base URL is
  ``http://127.0.0.1:<port>/v1``; the model name for requests is ``str(tiny_model_dir)``.

Function fixture:

* ``fake_vllm``: a labelled FAKE ``vllm`` module in ``sys.modules`` (vLLM is not installed on the test machines),
  recording the calls :class:`reasonshape.training.backends.VLLMBackend` makes.

Markers: ``require_vllm`` skips a test when ``vllm`` cannot be imported.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import types
import urllib.error
import urllib.request
from pathlib import Path

import pytest

# No hub access anywhere in the test suite.
for _var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

require_vllm = pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm extra (GPU)")

_SERVE_START_TIMEOUT_S = 180.0


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """Directory of the tiny chat model (seed 0), built once per test session."""
    from reasonshape.training.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_model") / "tiny-qwen2", seed=0)


@pytest.fixture(scope="session")
def base_model_dir(tiny_model_dir, tmp_path_factory) -> Path:
    """A copy of the tiny model whose tokenizer has no chat template: a base model (``prompt_format: standard``)."""
    import json
    import shutil

    from transformers import AutoTokenizer

    out = tmp_path_factory.mktemp("base_model") / "tiny-base"
    shutil.copytree(tiny_model_dir, out)
    (out / "chat_template.jinja").unlink(missing_ok=True)
    cfg_path = out / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.pop("chat_template", None)
    cfg_path.write_text(json.dumps(cfg))
    assert AutoTokenizer.from_pretrained(str(out)).chat_template is None
    return out


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_command(model_dir: Path, port: int) -> list[str]:
    """``transformers serve MODEL --host 127.0.0.1 --port PORT --device cpu``.

    The ``transformers`` console script imports the ``chat`` command, which needs ``requests``; when ``requests``
    is missing the same ``Serve`` command object is run through ``typer`` directly (identical server code).
    """
    args = [str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    script = shutil.which("transformers", path=str(Path(sys.executable).parent))
    if script and importlib.util.find_spec("requests") is not None:
        return [script, "serve", *args]
    return [sys.executable, "-c", "import typer; from transformers.cli.serve import Serve; typer.run(Serve)", *args]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 - local URL
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _unavailable(reason: str):
    """Skip locally, but FAIL under CI (CI=true): there the real HTTP server must run, a skip would hide it."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def serve_url(tiny_model_dir, tmp_path_factory):
    """OpenAI base URL of a ``transformers serve`` subprocess serving ``tiny_model_dir`` (session-scoped)."""
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
        _unavailable("transformers serve cannot start here: fastapi/uvicorn missing (install transformers[serving])")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(_serve_command(tiny_model_dir, port), stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + _SERVE_START_TIMEOUT_S
        while not _healthy(f"http://127.0.0.1:{port}/health"):
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-1500:]
                _unavailable(f"transformers serve exited with code {proc.returncode} before serving:\n{tail}")
            if time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-1500:]
                _unavailable(f"transformers serve did not answer /health within {_SERVE_START_TIMEOUT_S:.0f}s:"
                             f"\n{tail}")
            time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


@pytest.fixture
def fake_vllm(monkeypatch):
    """A labelled FAKE ``vllm`` module (vLLM is not installed here): ``LLM`` and ``SamplingParams`` with vLLM's
    documented call signatures (``LLM.chat`` / ``LLM.generate`` take one ``SamplingParams`` or a list of one per
    prompt). Returns the dict in which it records its calls: ``init`` (engine kwargs), ``chat`` / ``generate``
    (prompts), ``chat_params`` / ``generate_params`` (each prompt's SamplingParams kwargs), ``chat_kwargs`` (the
    other keywords of the last ``LLM.chat`` call, e.g. ``chat_template_kwargs``); put a tokenizer under
    ``tokenizer`` for ``LLM.get_tokenizer()``."""
    calls = {}

    class Logprob:  # vllm.logprobs.Logprob
        def __init__(self, logprob, rank, decoded_token):
            self.logprob, self.rank, self.decoded_token = logprob, rank, decoded_token

    class SamplingParams:
        def __init__(self, **kw):
            self.kw, self.n = kw, kw["n"]

    def one_per_prompt(prompts, sampling_params):
        if isinstance(sampling_params, list):
            assert len(sampling_params) == len(prompts)
            return sampling_params
        return [sampling_params] * len(prompts)

    def request_output(n_prompt_tokens, n):
        outs = [types.SimpleNamespace(
            text=f"<think>r{k}</think>ans{k}", token_ids=[5, 6], finish_reason="length",
            logprobs=[{5: Logprob(-0.5, 1, "x"), 9: Logprob(-1.5, 2, "y")},
                      {6: Logprob(-2.0, 2, "z"), 7: Logprob(-0.2, 1, "w")}]) for k in range(n)]
        return types.SimpleNamespace(prompt_token_ids=list(range(n_prompt_tokens)), outputs=outs)

    class LLM:
        def __init__(self, model, seed=0, **kw):
            calls["init"] = dict(model=model, seed=seed, **kw)

        def chat(self, messages, sampling_params=None, use_tqdm=True, **kw):
            params = one_per_prompt(messages, sampling_params)
            calls["chat"], calls["chat_params"], calls["chat_kwargs"] = messages, [p.kw for p in params], kw
            return [request_output(4, p.n) for p in params]

        def generate(self, prompts, sampling_params=None, use_tqdm=True):
            params = one_per_prompt(prompts, sampling_params)
            calls["generate"], calls["generate_params"] = prompts, [p.kw for p in params]
            return [request_output(2, p.n) for p in params]

        def get_tokenizer(self):
            return calls["tokenizer"]

    fake = types.ModuleType("vllm")
    fake.LLM, fake.SamplingParams = LLM, SamplingParams
    monkeypatch.setitem(sys.modules, "vllm", fake)
    return calls


@pytest.fixture
def rendered(monkeypatch):
    """The chat prompts :class:`~reasonshape.training.backends.TransformersBackend` renders for its model, in order
    (its ``render`` is wrapped to record them)."""
    from reasonshape.training.backends import TransformersBackend

    seen: list[str] = []
    real = TransformersBackend.render

    def render(self, prompt):
        text = real(self, prompt)
        seen.append(text)
        return text

    monkeypatch.setattr(TransformersBackend, "render", render)
    return seen
