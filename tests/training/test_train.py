"""Tests of ``reasonshape train`` / ``reasonshape ablate`` (reasonshape.training.train): argument validation, the
CLI wiring, and a real 2-step GRPO run on CPU with every reward active (the slowest test of the suite).

The GRPO run uses configs/grpo_cpu_smoke.yaml on the session's tiny random model. A random model never solves a
puzzle, so every reward would be constant within each group, every advantage 0 and the update empty. The run
therefore injects rollouts (TRL's ``rollout_func``): in each group half of the completions are the policy's own
samples and half are the instance's correct answer, tokenised. Rewards, logging, the policy judge and the optimizer
then run exactly as in training, on rewards that differ inside each group.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import warnings
from pathlib import Path

import pytest

from reasonshape.errors import ConfigError
from reasonshape.rewards.functions import ShapingWeights
from reasonshape.training import train as T

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "grpo_cpu_smoke.yaml"
ABLATIONS = sorted((ROOT / "configs" / "ablations").glob("*.yaml"))
REWARD_KEYS = ("shaped_reward", "accuracy_reward", "format_reward", "eta_reward", "self_preference_reward")


# ===================================================================================================== arguments
class TestReasonshapeArguments:
    def test_defaults_are_valid(self):
        a = T.ReasonshapeArguments()
        assert a.reward_funcs == ["shaped", "accuracy", "format", "eta"]
        assert a.weights.gaming_margin() == pytest.approx(0.9)
        assert not a.uses_judge

    @pytest.mark.parametrize("kw, match", [
        (dict(puzzles=["nosuch"]), "puzzles must be"),
        (dict(levels=["medium"]), "levels must be"),
        (dict(dataset_size=0), "dataset_size must be an integer >= 1, got 0"),
        (dict(reward_funcs=["accuracy", "length"]), "reward_funcs must be"),
        (dict(reward_funcs=["eta", "eta"]), "must not repeat"),
        (dict(eta_weight=-0.5), "eta_weight must be a finite number >= 0, got -0.5"),
        (dict(accuracy_weight=0.0), "accuracy_weight must be > 0"),
        (dict(self_preference_weight=float("inf")), "self_preference_weight must be a finite number"),
        (dict(format_weight=1.0), "correct answer above every wrong one"),
        (dict(extraction="llm"), "extraction_base_url and extraction_model must be set"),
        (dict(extraction="off"), "extraction must not be 'off'"),
        (dict(judge="openai"), "judge_base_url and judge_model must be set"),
        (dict(judge_trials=0), "judge_trials must be an integer >= 1"),
        (dict(judge_logprobs=21), "judge_logprobs must be None or an integer in"),
        (dict(judge_temperature=-1.0), "judge_temperature must be"),
        (dict(prompt_format="chat"), "prompt_format must be 'conversational' or 'standard', got 'chat'"),
        (dict(judge_unparsed="skip"), "judge_unparsed must be 'tie' or 'drop', got 'skip'"),
    ])
    def test_invalid_fields_raise_config_error(self, kw, match):
        with pytest.raises(ConfigError, match=match):
            T.ReasonshapeArguments(**kw)

    def test_every_field_has_help(self):
        from dataclasses import fields

        for f in fields(T.ReasonshapeArguments):
            assert f.metadata.get("help"), f.name

    def test_docs_table_in_sync(self):
        doc = (ROOT / "docs" / "training.md").read_text()
        block = doc.split("<!-- fields:start -->\n")[1].split("<!-- fields:end -->")[0]
        assert block == T.fields_markdown()
        for row in block.splitlines():  # four cells per row: a '|' inside a cell ("str | None") is escaped
            assert len(re.split(r"(?<!\\)\|", row)) == 6, row

    def test_gaming_weights_error_names_the_config_field(self):
        # the Python argument is ShapingWeights(allow_gaming=...); a config / CLI user sets allow_gaming_weights
        # (audit finding 9)
        with pytest.raises(ConfigError, match="set allow_gaming_weights: true") as e:
            T.parse_train_args(["--config", str(SMOKE), "--self_preference_weight", "0.6"])
        assert "allow_gaming=True" not in str(e.value)
        with pytest.raises(ConfigError, match="pass allow_gaming=True to ShapingWeights"):
            ShapingWeights(self_preference=0.6)

    def test_gaming_weights_allowed_explicitly(self):
        a = T.ReasonshapeArguments(format_weight=2.0, allow_gaming_weights=True)
        assert a.weights.gaming_margin() < 0


class TestParsing:
    def test_smoke_config_parses(self):
        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE), "--max_steps", "3"])
        assert rs.reward_funcs == ["shaped", "accuracy", "format", "eta", "self_preference"]
        assert grpo.max_steps == 3 and grpo.use_cpu and not grpo.bf16 and grpo.num_generations == 4
        assert model.model_name_or_path == "runs/tiny-model" and rs.build_tiny_model_if_missing
        assert T.default_reward_weights(rs, grpo) == [1.0, 0.0, 0.0, 0.0, 0.0]
        judge = T.resolve_judge(rs, grpo, model)
        assert judge.kind == "policy" and judge.trials == 2

    def test_literal_fields_become_choices(self):
        with pytest.raises(ConfigError, match="invalid choice: 'magic' \\(choose from 'deterministic', 'llm'"):
            T.parse_train_args(["--config", str(SMOKE), "--extraction", "magic"])

    def test_remove_unused_columns_rejected(self):
        with pytest.raises(ConfigError, match="remove_unused_columns must be False"):
            T.parse_train_args(["--config", str(SMOKE), "--remove_unused_columns", "true"])

    @pytest.mark.parametrize("strategy", ["steps", "epoch"])
    def test_eval_strategy_rejected_before_any_model_is_loaded(self, strategy):
        # reasonshape train builds no eval split: TRL failed with a traceback after loading the model (audit finding 8)
        with pytest.raises(ConfigError, match=f"eval_strategy must be 'no'.*reasonshape eval.*got eval_strategy="
                                              f"'{strategy}'"):
            T.parse_train_args(["--config", str(SMOKE), "--eval_strategy", strategy, "--eval_steps", "1"])

    def test_reward_weights_length_checked(self):
        with pytest.raises(ConfigError, match="one weight per reward"):
            T.parse_train_args(["--config", str(SMOKE), "--reward_weights", "1.0", "0.0"])

    @staticmethod
    def _two_processes(grpo):
        class TwoProcesses:
            def __getattr__(self, k):
                return 2 if k == "world_size" else getattr(grpo, k)

        return TwoProcesses()

    def test_whole_group_rule_on_several_processes(self):
        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE)])
        grpo.per_device_train_batch_size = 6  # 6 * steps_per_generation 1: not a multiple of num_generations = 4
        T.check_compatible(rs, grpo, model)  # one process: the generation batch holds whole groups
        with pytest.raises(ConfigError, match=r"per_device_train_batch_size \* steps_per_generation .*multiple of "
                                              "num_generations.*steps_per_generation=1"):
            T.check_compatible(rs, self._two_processes(grpo), model)

    @pytest.mark.parametrize("extra", [["--gradient_accumulation_steps", "2"], ["--steps_per_generation", "2"]])
    def test_whole_groups_per_process_count_steps_per_generation(self, extra):
        # TRL gives each process per_device_train_batch_size * steps_per_generation consecutive completions: 2 * 2
        # holds one whole group of 4 (audit finding 4: this layout was refused)
        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE), "--per_device_train_batch_size", "2", *extra])
        assert grpo.steps_per_generation == 2
        T.check_compatible(rs, self._two_processes(grpo), model)

    @pytest.mark.parametrize("bs, g, product", [("2", "4", "2"), ("6", "4", "6"), ("8", "3", "8")])
    def test_generation_batch_rule_in_the_fields_the_user_sets(self, bs, g, product):
        # TRL says "generation_batch_size (2) must be divisible by num_generations (4)", a field the user never set
        # (audit finding 7)
        with pytest.raises(ConfigError) as e:
            T.parse_train_args(["--config", str(SMOKE), "--per_device_train_batch_size", bs, "--num_generations", g])
        msg = str(e.value)
        assert msg.startswith("per_device_train_batch_size * steps_per_generation (default "
                              "gradient_accumulation_steps) * processes must be a multiple of num_generations")
        assert f"got {product} (generation_batch_size) and num_generations={g}" in msg and "\n" not in msg

    def test_the_batch_errors_share_one_wording_of_the_rule(self):
        from reasonshape.rewards.functions import BATCH_RULE, PER_PROCESS_BATCH, find_groups

        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE)])
        grpo.per_device_train_batch_size = 6
        with pytest.raises(ConfigError) as per_process:
            T.check_compatible(rs, self._two_processes(grpo), model)
        with pytest.raises(ConfigError) as trl:
            T.parse_train_args(["--config", str(SMOKE), "--per_device_train_batch_size", "2"])
        with pytest.raises(ConfigError) as reward_call:
            find_groups(["p", "p", "q"], 2)
        assert BATCH_RULE in str(per_process.value) and BATCH_RULE in str(reward_call.value)
        assert str(trl.value).startswith(f"{PER_PROCESS_BATCH} * processes must be a multiple of num_generations")
        assert BATCH_RULE.startswith(f"TRL gives each process {PER_PROCESS_BATCH} consecutive completions")

    def test_vllm_server_judge_url(self):
        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE), "--judge", "auto", "--use_vllm", "true",
                                              "--vllm_mode", "server", "--vllm_server_port", "8123"])
        judge = T.resolve_judge(rs, grpo, model)
        assert (judge.kind, judge.base_url, judge.model) == ("openai", "http://127.0.0.1:8123/v1", "runs/tiny-model")

    def test_a_self_judge_sends_prompts_in_the_runs_prompt_format(self):
        # the policy judging itself (in process, TRL's colocated engine, the vLLM server) is the same model: a base
        # model trained on standard prompts gets its comparisons as strings too; a separate judge gets chat messages
        for extra, fmt in ((["--judge", "policy"], "standard"),
                           (["--judge", "auto", "--use_vllm", "true", "--vllm_mode", "server"], "standard"),
                           (["--judge", "auto", "--use_vllm", "true", "--vllm_mode", "colocate"], "standard"),
                           (["--judge", "transformers", "--judge_model", "runs/judge"], "conversational"),
                           (["--judge", "openai", "--judge_base_url", "http://127.0.0.1:1/v1", "--judge_model", "m"],
                            "conversational")):
            rs, grpo, model = T.parse_train_args(["--config", str(SMOKE), "--prompt_format", "standard", *extra])
            assert T.resolve_judge(rs, grpo, model).prompt_format == fmt, extra
        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE)])
        assert T.resolve_judge(rs, grpo, model).prompt_format == "conversational"

    def test_judge_unparsed_reaches_the_judge(self):
        from reasonshape.rewards.functions import RewardScorer

        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE), "--judge_unparsed", "drop"])
        settings = T.resolve_judge(rs, grpo, model)
        assert settings.unparsed == "drop"
        scorer = RewardScorer(judge=settings, num_generations=4)
        scorer.bind_judge_backend(object.__new__(type("B", (), {"generate": lambda self, *a, **k: []})))
        assert scorer._judge.unparsed == "drop"
        assert T.resolve_judge(*T.parse_train_args(["--config", str(SMOKE)])).unparsed == "tie"

    def test_seed_out_of_numpy_range_is_refused_when_parsed(self):
        for seed in ("-1", str(2**32)):
            with pytest.raises(ConfigError, match=f"seed must be an integer in \\[0, 2\\*\\*32\\).*got {seed}"):
                T.parse_train_args(["--config", str(SMOKE), "--seed", seed])

    def test_judge_chat_template_kwargs_from_yaml_and_from_a_json_string(self, tmp_path):
        import yaml

        config = yaml.safe_load(SMOKE.read_text()) | {"judge_chat_template_kwargs": {"enable_thinking": False}}
        path = tmp_path / "judged.yaml"
        path.write_text(yaml.safe_dump(config))
        rs, grpo, model = T.parse_train_args(["--config", str(path)])
        assert rs.judge_chat_template_kwargs == {"enable_thinking": False}
        assert T.resolve_judge(rs, grpo, model).chat_template_kwargs == {"enable_thinking": False}
        assert T.run_settings(rs, grpo, model)["reasonshape"]["judge_chat_template_kwargs"] == {
            "enable_thinking": False}
        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE), "--judge_chat_template_kwargs",
                                              '{"enable_thinking": false, "depth": 2}'])
        assert rs.judge_chat_template_kwargs == {"enable_thinking": False, "depth": 2}
        assert T.resolve_judge(rs, grpo, model).chat_template_kwargs == {"enable_thinking": False, "depth": 2}
        # every judge kind gets them: the served ones too
        for extra in (["--judge", "auto", "--use_vllm", "true", "--vllm_mode", "server"],
                      ["--judge", "openai", "--judge_base_url", "http://127.0.0.1:1/v1", "--judge_model", "m"]):
            rs, grpo, model = T.parse_train_args(["--config", str(SMOKE), *extra, "--judge_chat_template_kwargs",
                                                  '{"enable_thinking": false}'])
            judge = T.resolve_judge(rs, grpo, model)
            assert judge.kind == "openai" and judge.chat_template_kwargs == {"enable_thinking": False}
        rs, grpo, model = T.parse_train_args(["--config", str(SMOKE)])
        assert rs.judge_chat_template_kwargs is None and T.resolve_judge(rs, grpo, model).chat_template_kwargs is None

    @pytest.mark.parametrize("value, match", [
        ('{"enable_thinking": False}', "must be a JSON object such as"),  # Python, not JSON
        ("enable_thinking=false", "must be a JSON object such as"),
        ("[1, 2]", "must be a mapping of keyword names to JSON values .*got list"),
    ])
    def test_judge_chat_template_kwargs_errors_are_one_line(self, value, match):
        with pytest.raises(ConfigError, match=f"^judge_chat_template_kwargs {match}") as e:
            T.parse_train_args(["--config", str(SMOKE), "--judge_chat_template_kwargs", value])
        assert "\n" not in str(e.value)
        with pytest.raises(ConfigError, match="^judge_chat_template_kwargs must be a mapping"):
            T.ReasonshapeArguments(judge_chat_template_kwargs=["enable_thinking"])

    def test_vllm_judge_needs_vllm_mode(self):
        with pytest.raises(ConfigError, match="vllm_server"):
            T.parse_train_args(["--config", str(SMOKE), "--judge", "vllm_server"])

    # GPU colocate config with a self-preference judge; bf16 off only because this machine has no GPU
    COLOCATE_JUDGED = ["--config", str(ROOT / "configs" / "grpo_vllm_colocate.yaml"), "--bf16", "false",
                       "--reward_funcs", "shaped", "accuracy", "format", "eta", "self_preference",
                       "--self_preference_weight", "0.05"]

    @pytest.mark.parametrize("extra, setting, fix", [
        # TRL sleeps its colocated engine at level 2 (weights discarded) before the rewards are computed
        ([], "vllm_enable_sleep_mode=True", "set vllm_enable_sleep_mode: false"),
        # each rank would send its own judge prompts to the two halves of one TP engine
        (["--vllm_enable_sleep_mode", "false", "--vllm_tensor_parallel_size", "2"], "vllm_tensor_parallel_size=2",
         "set vllm_tensor_parallel_size: 1"),
    ])
    def test_vllm_colocate_judge_refused_where_the_engine_cannot_judge(self, extra, setting, fix):
        with pytest.raises(ConfigError) as e:
            T.parse_train_args([*self.COLOCATE_JUDGED, "--judge", "vllm_colocate", *extra])
        msg = str(e.value)
        assert msg.startswith(f"judge must not be 'vllm_colocate' with {setting} (") and "\n" not in msg
        assert fix in msg and "judge: policy" in msg and "judge: openai" in msg

    @pytest.mark.parametrize("extra", [[], ["--vllm_enable_sleep_mode", "false", "--vllm_tensor_parallel_size", "2"]])
    def test_auto_judge_is_the_policy_where_the_colocated_engine_cannot_judge(self, extra, caplog):
        rs, grpo, model = T.parse_train_args([*self.COLOCATE_JUDGED, "--judge", "auto", *extra])
        with caplog.at_level("INFO", logger=T.__name__):
            judge = T.resolve_judge(rs, grpo, model)
        assert judge.kind == "policy"
        lines = [r for r in caplog.records if r.name == T.__name__]
        assert len(lines) == 1 and lines[0].levelname == "INFO" and "policy" in lines[0].getMessage()

    def test_colocated_engine_judges_without_sleep_mode_or_tensor_parallelism(self, caplog):
        rs, grpo, model = T.parse_train_args([*self.COLOCATE_JUDGED, "--vllm_enable_sleep_mode", "false"])
        with caplog.at_level("INFO", logger=T.__name__):
            assert T.resolve_judge(rs, grpo, model).kind == "vllm"
        assert not [r for r in caplog.records if r.name == T.__name__]
        rs, grpo, model = T.parse_train_args([*self.COLOCATE_JUDGED, "--vllm_enable_sleep_mode", "false", "--judge",
                                              "vllm_colocate"])
        assert T.resolve_judge(rs, grpo, model).kind == "vllm"

    @pytest.mark.parametrize("report_to, package", [("tensorboard", "tensorboard"), ("wandb", "wandb"),
                                                    ("comet_ml", "comet-ml")])
    def test_report_to_a_missing_integration_is_refused(self, monkeypatch, report_to, package):
        # transformers would raise a bare RuntimeError when the trainer is built (after loading the model)
        from transformers.integrations import integration_utils

        monkeypatch.setattr(integration_utils, "get_available_reporting_integrations", lambda: [])
        monkeypatch.setattr(integration_utils, "is_azureml_available", lambda: False)
        with pytest.raises(ConfigError) as e:
            T.parse_train_args(["--config", str(SMOKE), "--report_to", report_to])
        msg = str(e.value)
        assert msg.startswith(f"report_to must name installed integrations: pip install {package}, or set "
                              "report_to: none") and f"({report_to} not installed)" in msg and "\n" not in msg

    def test_report_to_an_installed_integration_or_none_passes(self, monkeypatch):
        from transformers.integrations import integration_utils

        monkeypatch.setattr(integration_utils, "get_available_reporting_integrations", lambda: ["tensorboard"])
        T.parse_train_args(["--config", str(SMOKE), "--report_to", "tensorboard"])
        monkeypatch.setattr(integration_utils, "get_available_reporting_integrations", lambda: [])
        T.parse_train_args(["--config", str(SMOKE), "--report_to", "none"])

    def test_final_metrics_window(self):
        hist = [{"reward": float(i), "rewards/x/mean": 1.0, "step": i} for i in range(1, 8)] + [{"train_runtime": 3}]
        fm = T.final_metrics(hist, window=5)
        assert fm["reward"] == pytest.approx((3 + 4 + 5 + 6 + 7) / 5) and fm["rewards/x/mean"] == 1.0

    def test_a_reward_logged_without_values_keeps_its_column(self):
        # TRL logs None for the mean of a reward that returned None throughout (self-preference without a verdict)
        hist = [{"reward": 1.0, "rewards/self_preference_reward/mean": None, "rewards/x/mean": v}
                for v in (float("nan"), 0.5)]
        fm = T.final_metrics(hist)
        assert fm["rewards/self_preference_reward/mean"] is None and fm["rewards/x/mean"] == 0.5
        table = T.comparison_table([("a", "done", {"global_step": 2, "runtime_s": 1.0, "final_metrics": fm})])
        header, _, row = table.splitlines()
        cols = [c.strip() for c in header.strip("|").split("|")]
        assert row.split("|")[1 + cols.index("self_preference_reward")].strip() == "-"


# ===================================================================================================== CLI
class TestCli:
    def _parser(self):
        p = argparse.ArgumentParser(prog="reasonshape")
        sub = p.add_subparsers(dest="command")
        T.add_parser(sub)
        return p

    def test_train_passes_everything_to_trl(self):
        args = self._parser().parse_args(["train", "--config", "x.yaml", "--max_steps", "3"])
        assert args.trl_args == ["--config", "x.yaml", "--max_steps", "3"] and args.func is T.train_main

    def test_train_help_lists_all_dataclasses(self, capsys):
        assert T.train_main(argparse.Namespace(trl_args=["--help"])) == 0
        out = capsys.readouterr().out
        for flag in ("--puzzles", "--eta_weight", "--judge_trials", "--num_generations", "--model_name_or_path",
                     "--judge_chat_template_kwargs"):
            assert flag in out

    def test_train_without_args_is_an_error(self, capsys):
        assert T.train_main(argparse.Namespace(trl_args=[])) == 2

    def test_through_the_reasonshape_command(self, monkeypatch, capsys, tmp_path):
        from reasonshape import cli

        monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", ("reasonshape.training.train",))
        assert cli.main(["train", "--help"]) == 0
        assert "--judge_trials" in capsys.readouterr().out
        assert cli.main(["train", "--config", str(tmp_path / "missing.yaml")]) == 2
        assert "missing.yaml" in capsys.readouterr().err
        assert cli.main(["train", "--config", str(SMOKE), "--dataset_size", "0"]) == 2
        assert "dataset_size must be an integer >= 1, got 0" in capsys.readouterr().err
        assert cli.main(["train", "--config", str(SMOKE), "--max_steps", "abc"]) == 2
        err = capsys.readouterr().err
        assert "invalid int value: 'abc'" in err and "usage:" not in err

    def test_ablate_arguments(self):
        args = self._parser().parse_args(["ablate", "--configs", "a.yaml", "b.yaml", "--out", "o", "--set",
                                          "max_steps=1"])
        assert args.configs == ["a.yaml", "b.yaml"] and args.set == ["max_steps=1"] and args.func is T.ablate_main
        assert T._override_args(args.set) == ["--max_steps", "1"]
        with pytest.raises(ConfigError, match="KEY=VALUE"):
            T._override_args(["max_steps"])

    @pytest.mark.parametrize("sets, field, want", [
        (["levels=trivial easy"], "levels", ["trivial", "easy"]),
        (["levels=[trivial, easy]"], "levels", ["trivial", "easy"]),
        (["puzzles=[tents, lightup]"], "puzzles", ["tents", "lightup"]),
        (["puzzles=tents  lightup "], "puzzles", ["tents", "lightup"]),
        (["reward_funcs=[accuracy, format]", "reward_weights=1.0 0.0"], "reward_weights", [1.0, 0.0]),
        (["reward_weights=[1, 0.5, 0, 0]"], "reward_weights", [1.0, 0.5, 0.0, 0.0]),
        (["judge_model=a b"], "judge_model", "a b"),  # not a list field: the value stays one argument
    ])
    def test_set_takes_lists_for_list_fields(self, sets, field, want):
        rs, grpo, _ = T.parse_train_args(["--config", str(ABLATIONS[0]), *T._override_args(sets)])
        got = getattr(rs, field) if hasattr(rs, field) else getattr(grpo, field)
        assert got == want

    @pytest.mark.parametrize("sets, match", [
        (["levels=trivial", "levels=easy"], r"--set must give each field once, got levels twice \('levels=trivial' "
                                           r"and 'levels=easy'\): give all its values in one"),
        (["max_steps=1", "max-steps=2"], "got max_steps twice .*keep one"),
        (["levels=[]"], "--set levels must give at least one value"),
        (["levels=[trivial, [easy]]"], "--set levels must be a YAML list such as"),
    ])
    def test_set_refuses_a_field_twice_and_bad_lists(self, sets, match):
        with pytest.raises(ConfigError, match=match):
            T._override_args(sets)

    def test_ablation_configs_are_valid(self):
        assert len(ABLATIONS) >= 4
        for cfg in ABLATIONS:
            rs, grpo, _ = T.parse_train_args(["--config", str(cfg)])
            assert grpo.use_cpu and grpo.max_steps <= 4, cfg.name

    @pytest.mark.parametrize("name", ["grpo_vllm_colocate.yaml", "grpo_vllm_server.yaml"])
    def test_gpu_configs_parse(self, name):
        # bf16 off only because this machine has no GPU (TrainingArguments rejects bf16 on CPU); every other key
        # must be a known field (TrlParser rejects unknown YAML keys)
        rs, grpo, model = T.parse_train_args(["--config", str(ROOT / "configs" / name), "--bf16", "false"])
        assert grpo.use_vllm and grpo.vllm_mode == name.split("_")[-1].split(".")[0]
        judge = T.resolve_judge(rs, grpo, model)
        if grpo.vllm_mode == "server":
            assert judge.kind == "openai" and judge.base_url == "http://127.0.0.1:8000/v1"
            # Qwen3 thinks by default: the judge's replies (judge_max_tokens) must not be spent inside <think>
            assert judge.chat_template_kwargs == {"enable_thinking": False}
            assert judge.build_backend().extra_body == {"chat_template_kwargs": {"enable_thinking": False}}
        # they must train after the documented install (pip install -e '.[vllm]'), which has no tensorboard
        assert grpo.report_to == []

    @pytest.mark.parametrize("name", ["multi_gpu", "deepspeed_zero2", "deepspeed_zero3", "fsdp"])
    def test_accelerate_configs_load(self, name):
        from accelerate.commands.config.config_args import ClusterConfig

        cfg = ClusterConfig.from_yaml_file(str(ROOT / "configs" / "accelerate" / f"{name}.yaml"))
        expected = {"multi_gpu": "MULTI_GPU", "fsdp": "FSDP"}.get(name, "DEEPSPEED")
        assert str(cfg.distributed_type).endswith(expected)

    def test_ablation_rejects_duplicate_names_and_missing_files(self, tmp_path):
        with pytest.raises(ConfigError, match="distinct"):
            T.run_ablation([str(SMOKE), str(SMOKE)], tmp_path)
        with pytest.raises(ConfigError, match="existing files"):
            T.run_ablation([str(tmp_path / "none.yaml")], tmp_path)

    @pytest.mark.parametrize("argv, match", [
        (["--max_steps", "abc"], "argument --max_steps.*: invalid int value: 'abc'"),
        (["--max_step", "1"], "max_step"),  # a prefix of --max_steps: not taken for it
        (["--no_such_field", "1"], "no_such_field"),
    ])
    def test_bad_options_raise_config_error_without_the_usage(self, argv, match, capsys):
        with pytest.raises(ConfigError, match=match):
            T.parse_train_args(["--config", str(SMOKE), *argv])
        assert "usage:" not in capsys.readouterr().err

    def test_an_unknown_config_key_names_the_closest_field_and_the_file(self, tmp_path):
        cfg = tmp_path / "x.yaml"
        cfg.write_text("dataset_sise: 4\n" + SMOKE.read_text())
        with pytest.raises(ConfigError) as e:
            T.parse_train_args(["--config", str(cfg)])
        assert str(e.value) == (f"unknown field dataset_sise (did you mean dataset_size?) in config file {cfg} "
                                "('reasonshape train --help' lists every field)")

    @pytest.mark.parametrize("case, want", [
        ("bad_yaml", r"^config file {cfg} is not valid YAML: while parsing a flow sequence in .*line 1, column 10"),
        ("missing", r"^cannot read config file {cfg}: No such file or directory$"),
        ("directory", r"^cannot read config file {cfg}: Is a directory$"),
        ("no_path", r"^--config needs the path of a YAML file"),
        ("option_as_path", r"^--config needs the path of a YAML file"),
    ])
    def test_an_unusable_config_file_is_one_config_error(self, tmp_path, case, want):
        # before: PyYAML's ParserError / TRL's IndexError reached the user as a traceback; a missing file: "[Errno 2]"
        cfg = tmp_path / "x.yaml"
        argv = ["--config", str(cfg)]
        if case == "bad_yaml":
            cfg.write_text("puzzles: [tents\n")
        elif case == "directory":
            cfg.mkdir()
        elif case == "no_path":
            argv = ["--config"]
        elif case == "option_as_path":
            argv = ["--config", "--max_steps", "2"]
        with pytest.raises(ConfigError, match=want.format(cfg=re.escape(str(cfg)))) as e:
            T.parse_train_args(argv)
        assert "\n" not in str(e.value)

    def test_a_bad_config_in_ablate_is_named_before_any_run(self, tmp_path):
        cfg = tmp_path / "broken.yaml"
        cfg.write_text("puzzles: [tents\n")
        with pytest.raises(ConfigError, match=f"(?s)no run started.*{re.escape(str(cfg))} is not valid YAML"):
            T.run_ablation([str(ABLATIONS[0]), str(cfg)], tmp_path / "abl")
        assert not (tmp_path / "abl").exists()

    def test_a_config_key_must_be_a_field_not_an_argparse_dest(self, tmp_path):
        # argparse's own --help action has the dest "help": TRL would set that action's default from the key
        cfg = tmp_path / "x.yaml"
        cfg.write_text("help: 1\n" + SMOKE.read_text())
        with pytest.raises(ConfigError, match=f"^unknown field help in config file {cfg} "):
            T.parse_train_args(["--config", str(cfg)])

    @pytest.mark.parametrize("argv, field, want", [
        (["--dataset-size", "5"], "dataset_size", 5),  # HfArgumentParser's dashed alias
        (["--max_steps=2"], "max_steps", 2),
        (["--use_vllm"], "use_vllm", True),  # a bool field's bare flag
        (["--no_eta_only_correct"], "eta_only_correct", False),  # the complement of a bool field that defaults to True
    ])
    def test_option_aliases_are_known_fields(self, argv, field, want):
        parsed = T.parse_train_args(["--config", str(SMOKE), "--judge", "policy", *argv])
        assert any(getattr(a, field, None) == want for a in parsed)

    @pytest.mark.parametrize("argv, want", [
        (["--max_step", "3"], "unknown field max_step (did you mean max_steps?) in the command-line options"),
        (["--max-step=3"], "unknown field max-step (did you mean max_steps?) in the command-line options"),
        (["--no_such_field", "1"], "unknown field no_such_field in the command-line options"),
        # reported before the values are validated (judge=transformers would want judge_model)
        (["--judge", "transformers", "--judge_modle", "x"], "unknown field judge_modle (did you mean judge_model?)"),
        (["--gradient_acumulation_steps", "2"], "(did you mean gradient_accumulation_steps?)"),  # GRPOConfig
        (["--model_revison", "main"], "(did you mean model_revision?)"),  # ModelConfig
    ])
    def test_an_unknown_option_names_the_closest_field(self, argv, want):
        with pytest.raises(ConfigError) as e:
            T.parse_train_args(["--config", str(SMOKE), *argv])
        assert want in str(e.value) and "\n" not in str(e.value) and "HfArgumentParser" not in str(e.value)

    def test_each_ablation_run_shows_its_own_reward_warnings(self, tmp_path, monkeypatch):
        # Python shows a warning once per text and place per process: before, a cause already warned about in an
        # earlier config of the same `ablate` (e.g. the judge's unreadable verdicts) printed nothing in a later one
        from reasonshape.rewards.functions import RewardWarning

        def fake_run(rs, grpo, model, config_path=None):  # the trainer itself is not the subject here
            warnings.warn("self-preference: the judge gave no readable verdict", RewardWarning, stacklevel=1)
            return T.TrainResult(output_dir=Path(grpo.output_dir), final_metrics={}, log_history=[], runtime_s=0.0,
                                 global_step=1)

        monkeypatch.setattr(T, "run_training", fake_run)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")  # Python's own action for UserWarning outside pytest
            table = T.run_ablation([str(c) for c in ABLATIONS[:3]], tmp_path / "abl").read_text().splitlines()
        assert [row.split(" | ")[1] for row in table[2:]] == ["done"] * 3
        assert [str(w.message) for w in caught if w.category is RewardWarning] == [
            "self-preference: the judge gave no readable verdict"] * 3

    def test_an_unknown_set_field_in_ablate_names_the_closest_field(self, tmp_path):
        with pytest.raises(ConfigError, match=r"unknown field max_step \(did you mean max_steps\?\)"):
            T.run_ablation([str(ABLATIONS[0])], tmp_path / "abl", overrides=T._override_args(["max_step=3"]))

    @pytest.mark.parametrize("bad", ["max_steps=abc", "max_step=1", "foo=1"])
    def test_ablation_checks_every_config_before_the_first_run(self, tmp_path, bad):
        # the same error whatever is wrong, before anything trains: no run folder, no table
        cfgs = [str(c) for c in ABLATIONS[:2]]
        with pytest.raises(ConfigError, match="no run started") as e:
            T.run_ablation(cfgs, tmp_path / "abl", overrides=T._override_args([bad]))
        assert all(c in str(e.value) for c in cfgs)
        assert not (tmp_path / "abl").exists()

    @pytest.mark.parametrize("model", ["runs/tiny-modle", "./runs/tiny-modle", "runs/x/tiny-modle", "MISSING"])
    def test_a_missing_model_directory_is_refused_before_anything_runs(self, tmp_path, monkeypatch, model):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "runs").mkdir()  # runs/tiny-modle beside runs/: a path with a typo, not a hub id
        model = str(tmp_path / "no" / "such") if model == "MISSING" else model
        argv = ["--config", str(SMOKE), "--model_name_or_path", model, "--build_tiny_model_if_missing", "false"]
        with pytest.raises(ConfigError, match=f"model_name_or_path: model directory {model!r} does not exist "
                                              r"\(give a local model directory, or a hub id"):
            T.parse_train_args(argv)
        # ablate's check of every config before the first run catches it too
        with pytest.raises(ConfigError, match=f"(?s)no run started.*model directory {model!r} does not exist"):
            T.run_ablation([str(ABLATIONS[0])], tmp_path / "abl", overrides=argv[2:])
        assert not (tmp_path / "abl").exists()
        # the tiny model is built there: nothing to check
        T.parse_train_args([*argv[:-1], "true"])

    @pytest.mark.parametrize("model", ["gpt2", "Qwen/Qwen2.5-0.5B"])
    def test_hub_ids_are_not_taken_for_missing_directories(self, tmp_path, monkeypatch, model):
        monkeypatch.chdir(tmp_path)
        rs, _, m = T.parse_train_args(["--config", str(SMOKE), "--model_name_or_path", model,
                                       "--build_tiny_model_if_missing", "false"])
        assert m.model_name_or_path == model and not rs.build_tiny_model_if_missing

    def test_comparison_table(self):
        fm = {"reward": 1.0, "rewards/accuracy_reward/mean": 0.5, "reasonshape/accuracy": 0.5, "reasonshape/eta": 0.25}
        rows = [("a", "done", {"global_step": 2, "runtime_s": 3.0, "final_metrics": fm}), ("b", "failed: X", {})]
        table = T.comparison_table(rows)
        lines = table.strip().splitlines()
        assert lines[0] == ("| config | status | steps | reward | accuracy_reward | accuracy | eta | claim accuracy | "
                            "reward s/completion | runtime s |")
        assert lines[2] == "| a | done | 2 | 1.000 | 0.500 | 0.500 | 0.250 | - | - | 3.0 |"
        assert lines[3].startswith("| b | failed: X | - |")

    def test_a_failed_run_with_a_multi_line_error_keeps_its_table_row(self, tmp_path, monkeypatch):
        error = ("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them\n\n"
                 "  in the cached files.\nCheck your connection | or see " + "x" * 400)

        def fail(*args, **kwargs):
            raise OSError(error)

        monkeypatch.setattr(T, "run_training", fail)
        path = T.run_ablation([str(ABLATIONS[0])], tmp_path)
        lines = path.read_text().splitlines()
        assert len(lines) == 3  # header, rule, one row: the error did not split it
        row = lines[2]
        status = row.split(" | ")[1]
        assert status.startswith("failed: OSError: We couldn't connect to 'https://huggingface.co' to load the "
                                 "files, and couldn't find them in the cached files. Check your connection \\| or")
        assert len(status) <= T.STATUS_LIMIT + 1 and status.endswith("…")  # + 1: the escaped pipe's backslash
        # the same number of unescaped cell separators as the header
        assert row.replace("\\|", "").count("|") == lines[0].count("|")
        assert T.ablate_main(argparse.Namespace(configs=[str(ABLATIONS[0])], out=str(tmp_path), set=None,
                                                rerun=False)) == 1


# ===================================================================================================== GRPO on CPU
def _mixed_rollout(answers: dict[str, str]):
    """A rollout_func: per group, even positions are the policy's own samples, odd ones the correct answer."""

    def rollout(prompts, trainer):
        import torch

        tok = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        eos = tok.convert_tokens_to_ids("<|im_end|>")
        prompt_ids, completion_ids = [], []
        for k, p in enumerate(prompts):
            ids = list(tok.apply_chat_template(p, add_generation_prompt=True, tokenize=True)["input_ids"])
            prompt_ids.append(ids)
            if k % 2:
                answer = answers[p[-1]["content"]]
                completion_ids.append(tok(f"<answer>\n{answer}\n</answer>", add_special_tokens=False)["input_ids"]
                                      + [eos])
            else:
                with torch.no_grad():
                    out = model.generate(torch.tensor([ids]), do_sample=True, max_new_tokens=16, top_k=0,
                                         pad_token_id=tok.pad_token_id)
                completion_ids.append(out[0, len(ids):].tolist() or [eos])
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None}

    return rollout


@pytest.fixture(scope="module")
def grpo_run(tiny_model_dir, tmp_path_factory):
    from safetensors.torch import load_file

    from reasonshape.envs import get
    from reasonshape.envs.dataset import build_records

    rs, grpo, model = T.parse_train_args([
        "--config", str(SMOKE), "--model_name_or_path", str(tiny_model_dir),
        "--output_dir", str(tmp_path_factory.mktemp("grpo") / "out")])
    puzzle = get("tents")
    answers = {}
    for rec in build_records(rs.puzzles, rs.levels, n=rs.dataset_size, seed=rs.dataset_seed):
        inst = puzzle.parse_game_id(rec["game_id"])
        answers[rec["prompt"][-1]["content"]] = puzzle.format_answer(inst, puzzle.unique_solution(inst))
    before = load_file(str(Path(tiny_model_dir) / "model.safetensors"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = T.run_training(rs, grpo, model, config_path=str(SMOKE),
                                trainer_kwargs={"rollout_func": _mixed_rollout(answers)})
    after = load_file(str(result.output_dir / "model.safetensors"))
    return result, before, after


@pytest.mark.slow
class TestGrpoCpuRun:
    def test_two_steps_with_every_reward_logged(self, grpo_run):
        result, _, _ = grpo_run
        assert result.global_step == 2
        steps = [h for h in result.log_history if "reward" in h]
        assert len(steps) == 2
        for h in steps:
            for name in REWARD_KEYS:
                assert f"rewards/{name}/mean" in h and f"rewards/{name}/std" in h
            for key in ("accuracy", "format", "eta", "reward_time_s", "extraction_fallback", "su/unparsed_rate",
                        "su_time_s"):
                assert f"reasonshape/{key}" in h
            # U / A / I are logged for groups in which the judge (here the tiny policy) gave a readable verdict
            heard = h["reasonshape/su/unparsed_rate"] < 1
            for key in ("su/total", "su/ambiguity", "su/instability"):
                assert (f"reasonshape/{key}" in h) == heard

    def test_rewards_differ_within_groups_and_match_the_injection(self, grpo_run):
        result, _, _ = grpo_run
        for h in (h for h in result.log_history if "reward" in h):
            # half of every group is the correct answer: accuracy and format means are 1/2 (the tiny model's own
            # 16-token samples never solve a puzzle), shaped = 1/2 * (1 + 0.1 + 0.2 * eta(bare answer) ~ 0) + sp
            assert h["rewards/accuracy_reward/mean"] == pytest.approx(0.5)
            assert h["reasonshape/accuracy"] == pytest.approx(0.5)
            assert h["rewards/format_reward/mean"] == pytest.approx(0.5)
            # shaped: correct 1.1 + 0.05 * sp_i / 3, wrong 0 + 0.05 * sp_j / 3; the preference masses of a group sum
            # to 0, so the mean is (1.1 + 0) / 2 = 0.55 whatever the judge said
            assert h["rewards/shaped_reward/mean"] == pytest.approx(0.55, abs=1e-6)
            assert h["frac_reward_zero_std"] == 0.0

    def test_per_completion_columns_reach_the_completions_table(self, grpo_run):
        result, _, _ = grpo_run
        extra = result.trainer._logs["extra"]  # TRL's buffer behind log_extra (private; checked for the wiring)
        for column in ("eta", "correct", "claim_labels", "preference_mass"):
            assert column in extra and len(extra[column]) > 0

    def test_parameters_changed(self, grpo_run):
        _, before, after = grpo_run
        changed = [k for k in before if k in after and not (before[k] == after[k]).all()]
        assert len(changed) >= len(before) // 2, f"only {len(changed)} of {len(before)} tensors changed"

    def test_result_file(self, grpo_run):
        result, _, _ = grpo_run
        rec = json.loads((result.output_dir / T.RESULT_FILE).read_text())
        assert rec["completed"] and rec["global_step"] == 2
        assert rec["reward_weights"] == [1.0, 0.0, 0.0, 0.0, 0.0]
        assert rec["final_metrics"]["rewards/accuracy_reward/mean"] == pytest.approx(0.5)
        assert set(rec) == {"completed", "config", "runtime_s", "global_step", "final_metrics", "reward_funcs",
                            "reward_weights", "shaping_weights", "settings", "log_history"}
        assert set(rec["settings"]) == {"reasonshape", "grpo", "model"}
        assert rec["settings"]["reasonshape"]["reward_funcs"] == rec["reward_funcs"]


@pytest.mark.slow
def test_standard_prompts_reach_the_trainer_as_strings(tiny_model_dir, tmp_path):
    # prompt_format: standard (a base model without a chat template): TRL gets one string per prompt, and the
    # rewards score the completions as for chat prompts (every completion here is the correct answer)
    from reasonshape.envs import get
    from reasonshape.envs.dataset import build_records

    rs, grpo, model = T.parse_train_args([
        "--config", str(SMOKE), "--model_name_or_path", str(tiny_model_dir), "--output_dir", str(tmp_path / "out"),
        "--prompt_format", "standard", "--max_steps", "1", "--reward_funcs", "accuracy", "format"])
    puzzle = get("tents")
    answers = {rec["prompt"]: puzzle.format_answer(inst, puzzle.unique_solution(inst))
               for rec in build_records(rs.puzzles, rs.levels, n=rs.dataset_size, seed=rs.dataset_seed,
                                        prompt_format="standard")
               for inst in [puzzle.parse_game_id(rec["game_id"])]}
    seen = []

    def rollout(prompts, trainer):
        tok = trainer.processing_class
        seen.extend(prompts)
        return {"prompt_ids": [tok(p, add_special_tokens=False)["input_ids"] for p in prompts],
                "completion_ids": [tok(f"<answer>\n{answers[p]}\n</answer>", add_special_tokens=False)["input_ids"]
                                   + [tok.eos_token_id] for p in prompts], "logprobs": None}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = T.run_training(rs, grpo, model, trainer_kwargs={"rollout_func": rollout})
    assert result.global_step == 1 and seen and all(isinstance(p, str) and p in answers for p in seen)
    rec = json.loads((result.output_dir / T.RESULT_FILE).read_text())
    assert rec["final_metrics"]["rewards/accuracy_reward/mean"] == pytest.approx(1.0)
    assert rec["settings"]["reasonshape"]["prompt_format"] == "standard"


@pytest.mark.slow
def test_a_base_model_needs_standard_prompts_and_then_judges_itself_in_them(base_model_dir, tmp_path, monkeypatch):
    # a tokenizer without a chat template: conversational prompts are refused before the first step, with the fix;
    # with prompt_format: standard the run trains, and the policy judge sends its comparisons as strings (no
    # "chat template" failure turning self-preference off for the whole run)
    args = ["--config", str(SMOKE), "--model_name_or_path", str(base_model_dir), "--max_steps", "1"]
    rs, grpo, model = T.parse_train_args([*args, "--output_dir", str(tmp_path / "conv")])
    import trl

    class NotBuilt:  # the refusal comes before the trainer (and the model) is built
        def __init__(self, *args, **kwargs):
            raise AssertionError("GRPOTrainer was built")

    with monkeypatch.context() as m:
        m.setattr(trl, "GRPOTrainer", NotBuilt)
        with pytest.raises(ConfigError, match="has no chat template.*set prompt_format: standard"):
            T.run_training(rs, grpo, model)
    assert not (tmp_path / "conv" / T.RESULT_FILE).exists()
    rs, grpo, model = T.parse_train_args([*args, "--output_dir", str(tmp_path / "std"), "--prompt_format", "standard"])
    assert "self_preference" in rs.reward_funcs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = T.run_training(rs, grpo, model)
    assert result.global_step == 1
    assert not [w for w in caught if "chat template" in str(w.message)], [str(w.message) for w in caught]
    assert "reasonshape/su/unparsed_rate" in result.final_metrics  # the judge was asked and replied


@pytest.mark.slow
def test_ablation_runs_resumes_and_writes_one_table(tiny_model_dir, tmp_path):
    cfgs = [str(ROOT / "configs" / "ablations" / "accuracy_only.yaml"),
            str(ROOT / "configs" / "ablations" / "accuracy_eta.yaml")]
    overrides = ["--model_name_or_path", str(tiny_model_dir), "--max_steps", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = T.run_ablation(cfgs[:1], tmp_path, overrides=overrides)
    first = json.loads((tmp_path / "accuracy_only" / T.RESULT_FILE).read_text())
    assert first["global_step"] == 1
    # pretend the second one finished earlier with these settings: it is skipped (resumable), the first is read
    # back, not re-run
    (tmp_path / "accuracy_eta").mkdir()
    settings = T.run_settings(*T.parse_train_args(["--config", cfgs[1], *overrides,
                                                   "--output_dir", str(tmp_path / "accuracy_eta")]))
    (tmp_path / "accuracy_eta" / T.RESULT_FILE).write_text(json.dumps({
        "completed": True, "global_step": 7, "runtime_s": 1.5, "settings": settings,
        "final_metrics": {"reward": 0.25, "rewards/accuracy_reward/mean": 0.25, "reasonshape/eta": 0.5}}))
    mtime = (tmp_path / "accuracy_only" / T.RESULT_FILE).stat().st_mtime
    path = T.run_ablation(cfgs, tmp_path, overrides=overrides)
    assert (tmp_path / "accuracy_only" / T.RESULT_FILE).stat().st_mtime == mtime
    table = path.read_text().strip().splitlines()
    assert path.name == T.COMPARISON_FILE and len(table) == 4
    assert table[2].startswith("| accuracy_only | done (cached) | 1 |")
    assert table[3].startswith("| accuracy_eta | done (cached) | 7 | 0.250 | 0.250 |")
    assert "accuracy_reward" in table[0] and "eta" in table[0]


@pytest.mark.slow
def test_ablation_reruns_a_finished_run_whose_settings_changed(tiny_model_dir, tmp_path, capsys):
    cfg = [str(ROOT / "configs" / "ablations" / "accuracy_only.yaml")]
    base = ["--model_name_or_path", str(tiny_model_dir)]
    result = tmp_path / "accuracy_only" / T.RESULT_FILE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        T.run_ablation(cfg, tmp_path, overrides=[*base, "--max_steps", "1"])
        mtime = result.stat().st_mtime
        # the same settings: skipped, as before
        path = T.run_ablation(cfg, tmp_path, overrides=[*base, "--max_steps", "1"])
        assert result.stat().st_mtime == mtime
        assert path.read_text().splitlines()[2].startswith("| accuracy_only | done (cached) | 1 |")
        capsys.readouterr()
        # other settings: trained again, and the message names what changed
        path = T.run_ablation(cfg, tmp_path, overrides=[*base, "--max_steps", "2", "--eta_weight", "0.5"])
    err = capsys.readouterr().err
    assert "finished earlier with other settings (eta_weight 0.2 -> 0.5, max_steps 1 -> 2), training again" in err
    assert json.loads(result.read_text())["global_step"] == 2
    assert path.read_text().splitlines()[2].startswith("| accuracy_only | done | 2 |")



_PROBE = '''
import os, sys
from reasonshape.rewards import functions as F

step_seed = F.JudgeSettings.step_seed
find_groups = F.find_groups


def probe_seed(self, step, rank):
    print(f"PROBE seed rank={rank} step={step} seed={step_seed(self, step, rank)}", flush=True)
    return step_seed(self, step, rank)


def probe_groups(prompts, num_generations=None):
    groups = find_groups(prompts, num_generations)
    print(f"PROBE groups rank={os.environ['RANK']} sizes={sorted({end - start for start, end in groups})}", flush=True)
    return groups


F.JudgeSettings.step_seed, F.find_groups = probe_seed, probe_groups
from reasonshape.cli import main
sys.exit(main(sys.argv[1:]))
'''


@pytest.mark.slow
def test_two_processes_get_whole_groups_their_own_judge_seeds_and_one_summary(tmp_path):
    # a real two-process run (torchrun, gloo on CPU): each process's reward calls hold whole groups, each rank judges
    # with its own seed, and the summary and result file are written once
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    probe = tmp_path / "probe.py"
    probe.write_text(_PROBE)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", str(port), str(probe), "train", "--config", str(SMOKE),
           "--output_dir", str(tmp_path / "out")]  # the smoke config's tiny model, built in this run (runs/...)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the two processes share stdout, so their lines may interleave: read the probes by pattern, not by line
    seeds = {tuple(map(int, m)) for m in re.findall(r"PROBE seed rank=(\d+) step=(\d+) seed=(\d+)", proc.stdout)}
    assert {(r, s) for r, s, _ in seeds} == {(0, 0), (1, 0), (0, 1), (1, 1)}
    assert len({seed for _, _, seed in seeds}) == 4  # per (step, rank)
    sizes = re.findall(r"PROBE groups rank=(\d) sizes=(\[[\d, ]*\])", proc.stdout)
    assert {r for r, _ in sizes} == {"0", "1"} and {s for _, s in sizes} == {"[4]"}  # whole groups of G = 4
    assert proc.stdout.count('"global_step": 2') == 1
    assert json.loads((tmp_path / "out" / T.RESULT_FILE).read_text())["global_step"] == 2
    # the main process built the tiny model while the other waited: whole, readable, nothing left beside it
    built = tmp_path / "runs" / "tiny-model"
    assert (built / "model.safetensors").exists() and [p.name for p in built.parent.iterdir()] == ["tiny-model"]
    assert built.stat().st_mode & 0o055 == 0o055 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
