"""Tests of reasonshape.training.tiny and reasonshape.training.backends (all offline, CPU).

The OpenAI-compatible backend is tested against a real ``transformers serve`` process (``serve_url`` fixture) and
against a small scripted HTTP server in a thread (retries, concurrency limit, API key, reasoning_content, logprobs).
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import json
import os
import sys
import threading
import time

import pytest
import torch

from reasonshape.errors import BackendError, ConfigError, MissingExtraError
from reasonshape.training.backends import (
    OpenAICompatibleBackend,
    Sample,
    TokenLogprob,
    TransformersBackend,
    VLLMBackend,
    get_backend,
    request_seed,
    split_reasoning,
    validate_sampling,
)
from reasonshape.training.tiny import TINY_CHAT_TEMPLATE, build_tiny_model, build_tiny_tokenizer

CHAT = [{"role": "user", "content": "cell (3,4) is a tent. Which row needs more tents?"}]


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ============================================================================================ tiny model
class TestTinyModel:
    def test_build_is_deterministic_and_seed_dependent(self, tiny_model_dir, tmp_path):
        again = build_tiny_model(tmp_path / "again", seed=0)
        other = build_tiny_model(tmp_path / "other", seed=1)
        for name in ("model.safetensors", "tokenizer.json", "config.json"):
            assert _digest(again / name) == _digest(tiny_model_dir / name), name
        assert _digest(other / "model.safetensors") != _digest(tiny_model_dir / "model.safetensors")

    def test_a_missing_directory_appears_whole_or_not_at_all(self, tiny_model_dir, tmp_path, monkeypatch):
        # built under a temporary name and renamed: a crash mid-build leaves nothing at the path (a rerun builds it
        # again instead of loading half a model), and no temporary directory stays behind
        import reasonshape.training.tiny as tiny

        def crash(self, *args, **kwargs):
            raise RuntimeError("killed while saving")

        with monkeypatch.context() as m:
            m.setattr("transformers.PreTrainedModel.save_pretrained", crash)
            with pytest.raises(RuntimeError, match="killed while saving"):
                tiny.build_tiny_model(tmp_path / "runs" / "tiny", seed=0)
        assert list((tmp_path / "runs").iterdir()) == []
        built = tiny.build_tiny_model(tmp_path / "fresh" / "tiny", seed=0)
        umask = os.umask(0)
        os.umask(umask)
        assert built.stat().st_mode & 0o777 == 0o777 & ~umask  # not mkdtemp's 0700
        # two builders of one path (the ranks of a multi-process run): the other one renames its build into place
        # while this one is building; this one's rename then fails, and it returns the model that is there
        import shutil
        import tempfile

        target = tmp_path / "runs" / "tiny"
        real_mkdtemp = tempfile.mkdtemp

        def other_rank_finishes_first(*args, **kwargs):
            made = real_mkdtemp(*args, **kwargs)
            shutil.copytree(tiny_model_dir, target)
            return made

        monkeypatch.setattr(tiny.tempfile, "mkdtemp", other_rank_finishes_first)
        assert tiny.build_tiny_model(target, seed=0) == target
        assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["tiny"]  # no temporary directory left
        assert _digest(target / "model.safetensors") == _digest(tiny_model_dir / "model.safetensors")

    def test_build_leaves_global_torch_rng_alone(self, tmp_path):
        torch.manual_seed(123)
        expected = torch.rand(3)
        torch.manual_seed(123)
        build_tiny_model(tmp_path / "m", seed=5)
        assert torch.equal(torch.rand(3), expected)

    def test_loads_with_auto_classes_and_is_tiny(self, tiny_model_dir):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tiny_model_dir)
        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        assert type(model).__name__ == "Qwen2ForCausalLM"
        assert len(tok) <= 1024 and model.config.vocab_size >= len(tok)
        assert sum(p.numel() for p in model.parameters()) < 500_000
        assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
        assert model.generation_config.eos_token_id == tok.eos_token_id

    def test_saved_tokenizer_encodes_like_the_built_one_and_round_trips(self, tiny_model_dir):
        from transformers import AutoTokenizer

        built, loaded = build_tiny_tokenizer(0), AutoTokenizer.from_pretrained(tiny_model_dir)
        text = "Cell (3,4) is a tent; row 2 needs 1 more.\n<answer>\nT . .\n</answer> héllo <think>x</think>"
        assert built(text)["input_ids"] == loaded(text)["input_ids"]
        assert loaded.decode(loaded(text)["input_ids"]) == text

    def test_chat_template_chatml_with_generation_prompt(self, tiny_model_dir):
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tiny_model_dir)
        msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
        with_gen = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        without = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=False)
        assert without == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
        assert with_gen == without + "<|im_start|>assistant\n"
        assert tok.chat_template == TINY_CHAT_TEMPLATE

    def test_bad_tokenizer_settings(self):
        from reasonshape.training.tiny import tiny_corpus

        with pytest.raises(ConfigError, match="vocab_size must be >= 300"):
            build_tiny_tokenizer(0, vocab_size=100)
        with pytest.raises(ConfigError, match="n_lines"):
            tiny_corpus(0, n_lines=0)
        assert tiny_corpus(3, 50) == tiny_corpus(3, 50) != tiny_corpus(4, 50)

    def test_special_tokens_are_single_tokens(self, tiny_model_dir):
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tiny_model_dir)
        for t in ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<answer>"):
            assert len(tok(t, add_special_tokens=False)["input_ids"]) == 1, t


# ============================================================================================ helpers
class TestValidationAndSplit:
    @pytest.mark.parametrize("kwargs, field", [
        (dict(n=0), "n"), (dict(temperature=-0.1), "temperature"), (dict(temperature=float("nan")), "temperature"),
        (dict(top_p=0.0), "top_p"), (dict(top_p=1.5), "top_p"), (dict(max_tokens=0), "max_tokens"),
        (dict(seed=1.5), "seed"), (dict(logprobs=21), "logprobs"), (dict(logprobs=-1), "logprobs"),
    ])
    def test_bad_sampling_names_the_field(self, kwargs, field):
        args = dict(n=1, temperature=1.0, top_p=1.0, max_tokens=8, seed=None, logprobs=None) | kwargs
        with pytest.raises(ConfigError, match=rf"^{field} must"):
            validate_sampling(**args)

    def test_config_error_is_a_value_error(self):
        with pytest.raises(ValueError):
            validate_sampling(0, 1.0, 1.0, 8, None, None)

    @pytest.mark.parametrize("text, expected", [
        ("<think>R</think>C", ("R", "C")),
        ("R</think>\nC", ("R", "C")),  # opening tag in the prompt (Qwen3-style templates)
        ("<think>a</think>b</think>c", ("a</think>b", "c")),  # last close wins
        ("<think>unfinished", ("unfinished", "")),
        ("plain answer", (None, "plain answer")),
    ])
    def test_split_reasoning(self, text, expected):
        assert split_reasoning(text) == expected


# ============================================================================================ transformers backend
@pytest.fixture(scope="module")
def hf_backend(tiny_model_dir):
    return TransformersBackend(tiny_model_dir, device="cpu", batch_size=4)


class TestTransformersBackend:
    def test_shapes_and_fields(self, hf_backend):
        prompts = [CHAT, "cell (1,2) is", [{"role": "user", "content": "hi"}]]
        out = hf_backend.generate(prompts, n=2, max_tokens=6, seed=0)
        assert len(out) == 3 and all(len(row) == 2 for row in out)
        for p, row in zip(prompts, out, strict=True):
            n_prompt = hf_backend.count_tokens(hf_backend.render(p))
            for s in row:
                assert isinstance(s, Sample) and isinstance(s.text, str)
                assert s.prompt_tokens == n_prompt
                assert 1 <= s.completion_tokens <= 6
                assert s.finish_reason in ("stop", "length")
                if s.finish_reason == "length":
                    assert s.completion_tokens == 6
                assert s.logprobs is None

    def test_render_applies_chat_template(self, hf_backend):
        assert hf_backend.render(CHAT).endswith("<|im_end|>\n<|im_start|>assistant\n")
        assert hf_backend.render("raw text") == "raw text"

    def test_seed_reproducible_and_different_seeds_differ(self, hf_backend):
        a = hf_backend.generate([CHAT, "x"], n=2, max_tokens=8, seed=7)
        b = hf_backend.generate([CHAT, "x"], n=2, max_tokens=8, seed=7)
        c = hf_backend.generate([CHAT, "x"], n=2, max_tokens=8, seed=8)
        assert a == b
        assert [s.text for row in a for s in row] != [s.text for row in c for s in row]

    def test_left_padding_does_not_change_greedy_output(self, hf_backend):
        short = "row"
        long = "a much longer prompt about tents, trees and the rules of the puzzle grid"
        alone = hf_backend.generate([short], temperature=0.0, max_tokens=8)[0][0]
        batched = hf_backend.generate([long, short], temperature=0.0, max_tokens=8)[1][0]
        assert alone.text == batched.text and alone.prompt_tokens == batched.prompt_tokens

    def test_micro_batches_cover_all_prompts_in_order(self, hf_backend):
        prompts = [f"row {i}" for i in range(6)]  # batch_size 4: two micro-batches
        greedy_each = [hf_backend.generate([p], temperature=0.0, max_tokens=4)[0][0].text for p in prompts]
        greedy_all = [row[0].text for row in hf_backend.generate(prompts, temperature=0.0, max_tokens=4)]
        assert greedy_all == greedy_each

    def test_logprobs_are_consistent(self, hf_backend):
        (s,), = hf_backend.generate(["cell"], temperature=0.0, max_tokens=5, logprobs=3)
        assert s.logprobs is not None and len(s.logprobs) == s.completion_tokens
        for t in s.logprobs:
            assert isinstance(t, TokenLogprob) and t.logprob <= 0.0 and len(t.top) <= 3
            # greedy: the chosen token is the most likely one
            assert t.logprob == pytest.approx(max(t.top.values()), abs=1e-5)
        assert "".join(t.token for t in s.logprobs) == s.text

    def test_logprobs_zero_gives_chosen_only(self, hf_backend):
        (s,), = hf_backend.generate(["cell"], max_tokens=3, seed=0, logprobs=0)
        assert all(t.top == {} and t.logprob <= 0 for t in s.logprobs)

    def test_eos_gives_stop_and_is_counted(self, tiny_model_dir):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tiny_model_dir)
        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        head = torch.nn.Linear(model.config.hidden_size, model.config.vocab_size, bias=True)
        with torch.no_grad():
            head.weight.copy_(model.lm_head.weight)
            head.bias.zero_()
            head.bias[tok.eos_token_id] = 1e4  # EOS always wins
        model.lm_head = head
        backend = TransformersBackend(model, tokenizer=tok)
        (s,), = backend.generate([CHAT], max_tokens=5, seed=0)
        assert (s.text, s.completion_tokens, s.finish_reason) == ("", 1, "stop")

    def test_think_block_is_split_out(self, tiny_model_dir):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tiny_model_dir)
        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        script = tok("<think>so</think> row 2<|im_end|>", add_special_tokens=False)["input_ids"]

        class Scripted(torch.nn.Module):  # logits that spell out `script`, one token per step
            def __init__(self, vocab):
                super().__init__()
                self.vocab, self.step = vocab, 0

            def forward(self, hidden):
                out = torch.full((*hidden.shape[:2], self.vocab), -1e4)
                out[..., script[min(self.step, len(script) - 1)]] = 1e4
                self.step += 1
                return out

        model.lm_head = Scripted(model.config.vocab_size)
        (s,), = TransformersBackend(model, tokenizer=tok).generate(["x"], temperature=0.0, max_tokens=20)
        assert (s.reasoning_text, s.text, s.finish_reason) == ("so", "row 2", "stop")
        assert s.completion_tokens == len(script)

    def test_decodes_with_the_kv_cache_even_when_the_checkpoint_turns_it_off(self, tiny_model_dir):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        model.config.use_cache = False  # as a GRPO checkpoint saves it
        model.generation_config.use_cache = False
        fed = []  # tokens fed per forward call: the whole prefix once, then one per step with the cache
        model.model.register_forward_pre_hook(lambda mod, args, kwargs: fed.append(
            (kwargs.get("input_ids") if kwargs.get("input_ids") is not None else args[0]).shape[1]),
            with_kwargs=True)
        backend = TransformersBackend(model, tokenizer=AutoTokenizer.from_pretrained(tiny_model_dir))
        (s,), = backend.generate(["a prompt of several tokens"], temperature=0.0, max_tokens=6)
        assert s.completion_tokens > 1 and fed[0] > 1 and fed[1:] == [1] * (len(fed) - 1)

    def test_bad_prompts_raise(self, hf_backend):
        with pytest.raises(ConfigError, match=r"prompts\[1\]"):
            hf_backend.generate(["ok", [{"role": "user"}]])
        with pytest.raises(ConfigError, match="prompts must be a list"):
            hf_backend.generate("not a list")
        assert hf_backend.generate([]) == []

    def test_loaded_model_requires_tokenizer(self, hf_backend):
        with pytest.raises(ConfigError, match="tokenizer must be given"):
            TransformersBackend(hf_backend.model)

    def test_missing_model_dir_is_backend_error(self, tmp_path):
        with pytest.raises(BackendError, match="cannot load model"):
            TransformersBackend(tmp_path / "nope", device="cpu")


# ============================================================================================ OpenAI-compatible
@pytest.mark.slow
class TestOpenAIAgainstTransformersServe:
    def test_chat_batch_with_n(self, serve_url, tiny_model_dir):
        backend = OpenAICompatibleBackend(serve_url, str(tiny_model_dir), max_concurrency=2, timeout=60)
        out = backend.generate([CHAT, [{"role": "user", "content": "hi"}]], n=2, max_tokens=6, seed=3)
        assert len(out) == 2 and all(len(r) == 2 for r in out)
        for row in out:
            for s in row:
                assert isinstance(s.text, str) and s.prompt_tokens > 0
                assert 1 <= s.completion_tokens <= 6 and s.finish_reason in ("stop", "length")
        # per-request seeds seed + i*n + k differ, so the two samples of a prompt differ
        assert out[0][0].text != out[0][1].text

    def test_seeded_requests_are_reproducible(self, serve_url, tiny_model_dir):
        backend = OpenAICompatibleBackend(serve_url, str(tiny_model_dir), max_concurrency=1, timeout=60)
        a = backend.generate([CHAT], n=2, max_tokens=6, seed=11)
        b = backend.generate([CHAT], n=2, max_tokens=6, seed=11)
        assert [s.text for s in a[0]] == [s.text for s in b[0]]

    def test_string_prompt_uses_completions_endpoint(self, serve_url, tiny_model_dir):
        backend = OpenAICompatibleBackend(serve_url, str(tiny_model_dir), timeout=60)
        (s,), = backend.generate(["cell (1,2) is"], max_tokens=5, seed=0)
        assert s.prompt_tokens > 0 and 1 <= s.completion_tokens <= 5

    def test_works_inside_a_running_event_loop(self, serve_url, tiny_model_dir):
        backend = OpenAICompatibleBackend(serve_url, str(tiny_model_dir), timeout=60)

        async def main():
            sync = backend.generate([CHAT], max_tokens=3, seed=0)
            coro = await backend.agenerate([CHAT], max_tokens=3, seed=0)
            return sync, coro

        sync, coro = asyncio.run(main())
        assert len(sync[0]) == 1 and len(coro[0]) == 1


class _Scripted(http.server.ThreadingHTTPServer):
    """A local OpenAI-style server: fails the first ``fail_first`` requests with ``status``, then answers."""

    daemon_threads = True

    def __init__(self, fail_first=0, status=503, delay=0.0, honour_n=False):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail_first, self.status, self.delay = fail_first, status, delay
        self.honour_n = honour_n  # answer n choices, as vLLM does (else one, as transformers serve)
        self.requests, self.auth, self.bodies = 0, [], []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def do_POST(self):  # noqa: N802 - http.server API
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with srv.lock:
            srv.requests += 1
            n_req = srv.requests
            srv.auth.append(self.headers.get("Authorization"))
            srv.bodies.append(body)
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            time.sleep(srv.delay)
            if n_req <= srv.fail_first:
                payload, code = {"error": {"message": "busy", "type": "server_error"}}, srv.status
            else:
                payload, code = self._answer(body, srv.honour_n), 200
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            with srv.lock:
                srv.in_flight -= 1

    @staticmethod
    def _answer(body, honour_n=False):
        text = body["messages"][-1]["content"][::-1]
        msg = {"role": "assistant", "content": text, "reasoning_content": "because"}
        choices = [{"index": k, "message": msg, "finish_reason": "stop"}
                   for k in range(body.get("n", 1) if honour_n else 1)]
        if body.get("logprobs"):
            for choice in choices:
                choice["logprobs"] = {"content": [
                    {"token": "A", "logprob": -0.1, "bytes": None,
                     "top_logprobs": [{"token": "A", "logprob": -0.1, "bytes": None},
                                      {"token": "B", "logprob": -2.4, "bytes": None}]}]}
        return {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"], "choices": choices,
                "usage": {"prompt_tokens": 7, "completion_tokens": len(choices), "total_tokens": 7 + len(choices)}}


@pytest.fixture
def scripted():
    servers = []

    def make(**kw):
        srv = _Scripted(**kw)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.shutdown()
        srv.server_close()


class TestOpenAIScripted:
    def test_retries_then_succeeds(self, scripted):
        srv = scripted(fail_first=1, status=503)
        backend = OpenAICompatibleBackend(srv.url, "m", max_retries=2, timeout=10)
        (s,), = backend.generate([[{"role": "user", "content": "abc"}]])
        assert srv.requests == 2 and s.text == "cba"

    def test_no_retries_left_is_backend_error(self, scripted):
        srv = scripted(fail_first=10, status=500)
        backend = OpenAICompatibleBackend(srv.url, "m", max_retries=0, timeout=10)
        with pytest.raises(BackendError, match="HTTP 500"):
            backend.generate([CHAT])
        assert srv.requests == 1

    def test_bad_request_is_not_retried(self, scripted):
        srv = scripted(fail_first=10, status=400)
        with pytest.raises(BackendError, match="HTTP 400"):
            OpenAICompatibleBackend(srv.url, "m", max_retries=3, timeout=10).generate([CHAT])
        assert srv.requests == 1

    def test_concurrency_is_bounded(self, scripted):
        srv = scripted(delay=0.05)
        backend = OpenAICompatibleBackend(srv.url, "m", max_concurrency=2, timeout=10)
        out = backend.generate([[{"role": "user", "content": str(i)}] for i in range(8)])
        assert [row[0].text for row in out] == [str(i) for i in range(8)]  # prompt order kept
        assert srv.max_in_flight == 2

    def test_api_key_from_env_sent_but_never_shown(self, scripted, monkeypatch):
        secret = "sk-test-do-not-log-123"
        monkeypatch.setenv("RS_TEST_KEY", secret)
        srv = scripted()
        backend = OpenAICompatibleBackend(srv.url, "m", api_key_env="RS_TEST_KEY", timeout=10)
        backend.generate([CHAT])
        assert srv.auth == [f"Bearer {secret}"]
        assert secret not in repr(backend) and secret not in str(vars(backend))
        dead = OpenAICompatibleBackend("http://127.0.0.1:9/v1", "m", api_key_env="RS_TEST_KEY", max_retries=0,
                                       timeout=2)
        with pytest.raises(BackendError) as info:
            dead.generate([CHAT])
        assert secret not in str(info.value)

    def test_reasoning_logprobs_and_per_request_seeds(self, scripted):
        srv = scripted()
        backend = OpenAICompatibleBackend(srv.url, "m", timeout=10)
        out = backend.generate([CHAT, CHAT], n=2, seed=100, logprobs=2, temperature=0.5, top_p=0.9, max_tokens=4)
        s = out[0][0]
        assert s.reasoning_text == "because" and s.prompt_tokens == 7 and s.completion_tokens == 1
        assert s.logprobs[0].token == "A" and s.logprobs[0].top == {"A": -0.1, "B": -2.4}
        assert sorted(b["seed"] for b in srv.bodies) == [100, 101, 102, 103]
        body = srv.bodies[0]
        assert (body["temperature"], body["top_p"], body["max_tokens"], body["top_logprobs"]) == (0.5, 0.9, 4, 2)
        assert "n" not in body  # n separate requests unless use_n

    def test_use_n_sends_one_request(self, scripted):
        srv = scripted()
        backend = OpenAICompatibleBackend(srv.url, "m", use_n=True, timeout=10)
        with pytest.raises(BackendError, match="1 choices, expected 3"):  # the scripted server ignores n
            backend.generate([CHAT], n=3)
        assert srv.bodies[0]["n"] == 3

    def test_use_n_seeds_match_the_per_sample_scheme(self, scripted):
        # a vLLM server seeds sample k of a request with seed s as s + k: prompt i's request must carry seed + i*n,
        # not seed + i (which gave prompt i's sample 1 the stream of prompt i+1's sample 0)
        srv = scripted(honour_n=True)
        backend = OpenAICompatibleBackend(srv.url, "m", use_n=True, timeout=10)
        out = backend.generate([CHAT, CHAT, CHAT], n=3, seed=10)
        assert [len(row) for row in out] == [3, 3, 3]
        assert sorted(b["seed"] for b in srv.bodies) == [request_seed(10, i, 3) for i in range(3)] == [10, 13, 16]

    @pytest.mark.parametrize("kwargs, field", [
        (dict(base_url="localhost:8000"), "base_url"), (dict(model=""), "model"),
        (dict(max_concurrency=0), "max_concurrency"), (dict(max_retries=-1), "max_retries"),
        (dict(timeout=0), "timeout"), (dict(api_key_env=""), "api_key_env"),
    ])
    def test_bad_config(self, kwargs, field):
        args = dict(base_url="http://127.0.0.1:1/v1", model="m") | kwargs
        with pytest.raises(ConfigError, match=rf"^{field} must"):
            OpenAICompatibleBackend(**args)


# ============================================================================================ vLLM (offline)
class TestVLLMBackend:
    def test_missing_vllm_names_the_extra(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` raise ImportError
        with pytest.raises(MissingExtraError) as info:
            VLLMBackend("some/model")
        assert isinstance(info.value, ImportError)
        assert "pip install 'reasonshape[vllm]'" in str(info.value) and info.value.extra == "vllm"
        with pytest.raises(MissingExtraError):
            get_backend("vllm", model="some/model")

    def test_against_vllm_documented_api(self, fake_vllm):
        calls = fake_vllm
        backend = get_backend("vllm", model="m", tensor_parallel_size=1)
        out = backend.generate(["raw", CHAT], n=2, temperature=0.7, top_p=0.8, max_tokens=2, seed=3, logprobs=1)
        assert calls["init"] == {"model": "m", "seed": 0, "tensor_parallel_size": 1}
        # prompt i of the batch gets seed + i*n (vLLM adds the sample index): "raw" is prompt 0, CHAT prompt 1
        assert calls["generate_params"] == [dict(n=2, temperature=0.7, top_p=0.8, max_tokens=2, seed=3, logprobs=1)]
        assert calls["chat_params"] == [dict(n=2, temperature=0.7, top_p=0.8, max_tokens=2, seed=5, logprobs=1)]
        assert calls["chat"] == [CHAT] and calls["generate"] == ["raw"]
        assert [s.prompt_tokens for s in out[0]] == [2, 2] and [s.prompt_tokens for s in out[1]] == [4, 4]
        s = out[1][1]
        assert (s.text, s.reasoning_text, s.completion_tokens, s.finish_reason) == ("ans1", "r1", 2, "length")
        assert s.logprobs[0] == TokenLogprob("x", -0.5, {"x": -0.5})
        assert s.logprobs[1] == TokenLogprob("z", -2.0, {"w": -0.2})

    def test_each_prompt_gets_its_own_seed(self, fake_vllm):
        # one SamplingParams(seed=s) for the whole batch gave every prompt the same random stream (the judge
        # prompts of a step; sample k of every eval instance)
        calls = fake_vllm
        backend = VLLMBackend(model="m")
        prompts = [CHAT, "a", [{"role": "user", "content": "b"}], "c"]
        backend.generate(prompts, n=4, seed=100)
        assert [p["seed"] for p in calls["chat_params"]] == [request_seed(100, i, 4) for i in (0, 2)] == [100, 108]
        assert [p["seed"] for p in calls["generate_params"]] == [104, 112]
        seeds = [s + k for s in (100, 104, 108, 112) for k in range(4)]  # vLLM's per-sample seeds: all distinct
        assert len(set(seeds)) == len(seeds)
        backend.generate(prompts, n=2)  # unseeded: nothing to keep apart
        assert [p["seed"] for p in calls["chat_params"] + calls["generate_params"]] == [None] * 4

    def test_engine_tokenizer_sets_the_judge_budget_in_tokens(self, fake_vllm, tiny_model_dir):
        # the judge's max_candidate_tokens counted whitespace words with a vLLM backend (no tokenizer attribute)
        from transformers import AutoTokenizer

        from reasonshape.rewards.structural_uncertainty import PairwiseJudge

        tok = fake_vllm["tokenizer"] = AutoTokenizer.from_pretrained(tiny_model_dir)
        backend = VLLMBackend(llm=sys.modules["vllm"].LLM("m"))  # an existing engine, as TRL's colocated one
        assert backend.tokenizer is tok
        text = "cell(r3,c6)=T"
        assert backend.count_tokens(text) == len(tok.encode(text, add_special_tokens=False)) > 1
        judge = PairwiseJudge(backend, max_candidate_tokens=64)
        assert judge.tokenizer is tok
        reasoning = " ".join(f"cell(r{i % 9},c{i % 7})=T" for i in range(200))
        answer, shown = judge.render_candidate(f"<think>{reasoning}</think><answer>x</answer>")
        budget = 64 - len(tok.encode(answer, add_special_tokens=False))
        marker = len(tok.encode("\n[... 9999 tokens cut ...]\n", add_special_tokens=False))
        assert len(tok.encode(shown, add_special_tokens=False)) <= budget + marker + 2  # + re-tokenising the seams


class TestFactory:
    def test_unknown_kind_lists_known(self):
        with pytest.raises(ConfigError, match="kind must be one of .*'openai'.*'transformers'.*'vllm'"):
            get_backend("tgi")

    def test_builds_each_kind(self, tiny_model_dir):
        assert isinstance(get_backend("transformers", model=tiny_model_dir, device="cpu"), TransformersBackend)
        assert isinstance(get_backend("openai", base_url="http://127.0.0.1:1/v1", model="m"),
                          OpenAICompatibleBackend)


# ============================================================================================ judge's chat template
#: The tiny ChatML template plus what Qwen3's does with ``enable_thinking=False``: an empty think block opens the
#: assistant turn (so the model answers without thinking).
THINK_TEMPLATE = TINY_CHAT_TEMPLATE.replace(
    "{{- '<|im_start|>assistant\\n' }}",
    "{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}")
NO_THINK = {"enable_thinking": False}
TENTS_GID = "6x6de:bgabecha,1,2,1,1,0,2,1,1,1,1,1,2"


def _self_preference(scorer):
    """One self-preference reward call on a group of two (one judge prompt with trials=1); the tiny / scripted
    judges give no readable verdict, which warns."""
    import warnings

    from reasonshape.rewards.functions import get_self_preference_reward

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return get_self_preference_reward(scorer)(
            completions=["<answer>x</answer>", "<answer>y</answer>"], prompts=["Solve it"] * 2,
            puzzle=["tents"] * 2, game_id=[TENTS_GID] * 2)


def _judged(kind="policy", **kw):
    from reasonshape.rewards.functions import JudgeSettings, RewardScorer

    settings = JudgeSettings(kind=kind, trials=1, max_tokens=2, logprobs=None, aggregation="rank_centrality", **kw)
    return RewardScorer(extract=False, judge=settings, num_generations=2)


class TestJudgeChatTemplateKwargs:
    def test_think_template_reads_the_keyword(self, tiny_model_dir):
        tok = build_tiny_tokenizer()
        tok.chat_template = THINK_TEMPLATE
        plain = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
        off = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True, **NO_THINK)
        assert plain.endswith("<|im_start|>assistant\n") and off == plain + "<think>\n\n</think>\n\n"

    def test_policy_judge_renders_with_the_keywords(self, tiny_model_dir, rendered):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        tok = AutoTokenizer.from_pretrained(tiny_model_dir)
        tok.chat_template = THINK_TEMPLATE
        for kwargs, tail in ((None, "<|im_start|>assistant\n"), (NO_THINK, "assistant\n<think>\n\n</think>\n\n")):
            scorer = _judged(chat_template_kwargs=kwargs)
            scorer.bind_policy(model, tok)
            rendered.clear()
            _self_preference(scorer)
            assert len(rendered) == 1 and "# Candidate A" in rendered[0] and rendered[0].endswith(tail)

    def test_transformers_judge_renders_with_the_keywords(self, tiny_model_dir, tmp_path, rendered):
        import shutil

        from transformers import AutoTokenizer

        ckpt = shutil.copytree(tiny_model_dir, tmp_path / "thinking-tiny")  # a checkpoint whose template thinks
        tok = AutoTokenizer.from_pretrained(ckpt)
        tok.chat_template = THINK_TEMPLATE
        tok.save_pretrained(ckpt)
        scorer = _judged("transformers", model=str(ckpt), chat_template_kwargs=NO_THINK)
        _self_preference(scorer)
        assert len(rendered) == 1 and rendered[0].endswith("assistant\n<think>\n\n</think>\n\n")

    def test_openai_judge_sends_them_in_the_request_body(self, scripted):
        srv = scripted()
        _self_preference(_judged("openai", base_url=srv.url, model="m", chat_template_kwargs=NO_THINK))
        assert len(srv.bodies) == 1 and srv.bodies[0]["chat_template_kwargs"] == NO_THINK
        srv.bodies.clear()
        _self_preference(_judged("openai", base_url=srv.url, model="m"))  # none: the request has no such field
        assert len(srv.bodies) == 1 and "chat_template_kwargs" not in srv.bodies[0]

    def test_vllm_judge_passes_them_to_llm_chat(self, fake_vllm, tiny_model_dir):
        from transformers import AutoTokenizer

        fake_vllm["tokenizer"] = AutoTokenizer.from_pretrained(tiny_model_dir)
        scorer = _judged("vllm", chat_template_kwargs=NO_THINK)
        scorer.bind_vllm(sys.modules["vllm"].LLM("m"))  # an existing engine, as TRL's colocated one
        _self_preference(scorer)
        assert len(fake_vllm["chat"]) == 1 and fake_vllm["chat_kwargs"] == {"chat_template_kwargs": NO_THINK}

    def test_train_binds_the_colocated_engine_and_the_policy_with_them(self, fake_vllm, tiny_model_dir, rendered):
        # reasonshape train's binding of the live judges (TRL's colocated engine; the trained model)
        from types import SimpleNamespace

        from transformers import AutoModelForCausalLM, AutoTokenizer

        from reasonshape.training.train import _bind_live_judge

        tok = fake_vllm["tokenizer"] = AutoTokenizer.from_pretrained(tiny_model_dir)
        tok.chat_template = THINK_TEMPLATE
        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
        trainer = SimpleNamespace(vllm_generation=SimpleNamespace(llm=sys.modules["vllm"].LLM("m")), model=model,
                                  processing_class=tok, accelerator=SimpleNamespace(
                                      state=SimpleNamespace(deepspeed_plugin=None), unwrap_model=lambda m: m))
        scorer = _judged("vllm", chat_template_kwargs=NO_THINK)
        _bind_live_judge(scorer, trainer, "vllm_colocate")
        _self_preference(scorer)
        assert fake_vllm["chat_kwargs"] == {"chat_template_kwargs": NO_THINK}
        scorer = _judged("policy", chat_template_kwargs=NO_THINK)
        _bind_live_judge(scorer, trainer, "policy")
        _self_preference(scorer)
        assert len(rendered) == 1 and rendered[0].endswith("assistant\n<think>\n\n</think>\n\n")

    def test_a_backend_view_with_other_keywords(self, scripted, fake_vllm, hf_backend):
        from reasonshape.training.backends import with_chat_template_kwargs

        policy = TransformersBackend(hf_backend.model, tokenizer=hf_backend.tokenizer, chat_template_kwargs={"a": 1})
        view = with_chat_template_kwargs(policy, NO_THINK)
        assert view.chat_template_kwargs == NO_THINK and policy.chat_template_kwargs == {"a": 1}
        assert view.model is policy.model and with_chat_template_kwargs(policy, None) is policy
        served = OpenAICompatibleBackend("http://127.0.0.1:1/v1", "m", extra_body={"top_k": 20,
                                                                                   "chat_template_kwargs": {"a": 1}})
        assert with_chat_template_kwargs(served, NO_THINK).extra_body == {"top_k": 20,
                                                                          "chat_template_kwargs": NO_THINK}
        assert served.extra_body["chat_template_kwargs"] == {"a": 1}
        assert with_chat_template_kwargs(served, {}).extra_body == {"top_k": 20}
        engine = VLLMBackend(model="m", chat_template_kwargs={"a": 1})
        assert with_chat_template_kwargs(engine, NO_THINK).llm is engine.llm
        with pytest.raises(ConfigError, match="cannot be set on a object"):
            with_chat_template_kwargs(object(), NO_THINK)

    @pytest.mark.parametrize("value, match", [
        ('{"enable_thinking": ', r"^chat_template_kwargs must be a JSON object such as .*got '\{\"enable_thinking"),
        ("[1]", r"^chat_template_kwargs must be a mapping .*got list \[1\]$"),
        ({1: True}, r"^chat_template_kwargs must have string keys, got 1$"),
        ({"a": {"b": float("nan")}}, r"^chat_template_kwargs must map names to JSON values, got nan at a.b$"),
        ({"a": [object]}, r"^chat_template_kwargs must map names to JSON values, got type .* at a\[0\]$"),
    ])
    def test_bad_keywords(self, value, match):
        from reasonshape.training.backends import chat_template_kwargs_from

        with pytest.raises(ConfigError, match=match):
            chat_template_kwargs_from(value)

    def test_keywords_from_json_or_a_mapping(self):
        from reasonshape.training.backends import chat_template_kwargs_from

        given = {"enable_thinking": False, "tags": ("a", "b")}
        got = chat_template_kwargs_from(given)
        assert got == {"enable_thinking": False, "tags": ["a", "b"]} and got is not given
        assert chat_template_kwargs_from('{"enable_thinking": false}') == NO_THINK
        assert chat_template_kwargs_from(None) is None
