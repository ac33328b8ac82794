"""``reasonshape train`` (GRPO with TRL on Tatham puzzles) and ``reasonshape ablate`` (a grid of reward configs).

``reasonshape train --config configs/grpo_cpu_smoke.yaml [--flag value ...]`` parses three dataclasses with TRL's
``TrlParser`` (defaults, then the YAML file, then command-line flags): :class:`ReasonshapeArguments` (puzzles,
levels, dataset size and seed, rewards and shaping weights, extraction mode, judge), TRL's ``GRPOConfig`` and TRL's
``ModelConfig``. It builds the prompt dataset (:func:`reasonshape.envs.dataset.build_dataset`), the reward functions
sharing one scorer (:func:`reasonshape.rewards.functions.get_reward_functions`), a ``GRPOTrainer``, trains, saves
the model and writes ``<output_dir>/reasonshape_result.json`` (final metrics, runtime).

``reasonshape ablate --configs configs/ablations/*.yaml --out runs/ablations`` runs each config in sequence into
``<out>/<config name>/`` (skipping those already finished with the same settings), and writes
``<out>/comparison.md``: one table of final reward means per reward key, accuracy, mean eta, claim accuracy and
runtime.

The same reward functions work from ``trl grpo`` by dotted path (``reasonshape.rewards.functions.accuracy_reward``
...); see ``docs/training.md``. Heavy imports (torch, transformers, trl) happen inside the functions, so
``reasonshape --help`` stays fast. Source: reasonshape choice, following TRL's script layout (dataclasses, then
parser, then ``main(args)``).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
import time
import warnings
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from reasonshape.errors import ConfigError

_log = logging.getLogger(__name__)

__all__ = [
    "ReasonshapeArguments",
    "fields_markdown",
    "TrainResult",
    "make_parser",
    "parse_train_args",
    "check_compatible",
    "default_reward_weights",
    "resolve_judge",
    "run_training",
    "run_settings",
    "train_main",
    "run_ablation",
    "ablate_main",
    "add_parser",
    "RESULT_FILE",
    "COMPARISON_FILE",
]

#: File written into ``output_dir`` at the end of a run (read by ``reasonshape ablate``): ``completed``, ``config``,
#: ``runtime_s``, ``global_step``, ``final_metrics``, ``reward_funcs``, ``reward_weights``, ``shaping_weights``,
#: ``settings`` (every field the run trained with, :func:`run_settings`) and TRL's ``log_history``.
RESULT_FILE = "reasonshape_result.json"
#: The ablation's comparison table, written into ``--out``.
COMPARISON_FILE = "comparison.md"
#: Logged entries averaged for the "final" figures of the ablation table.
FINAL_WINDOW = 5
#: Characters kept of a status cell of the ablation table (a failed run's error, on one line).
STATUS_LIMIT = 200

_REWARD_NAMES = ("accuracy", "format", "eta", "self_preference", "shaped")
_LEVELS = ("trivial", "easy", "normal", "hard")


@dataclass
class ReasonshapeArguments:
    """reasonshape's training arguments, parsed beside TRL's ``GRPOConfig`` and ``ModelConfig``.

    Every field's documentation is its ``metadata["help"]`` (the text ``reasonshape train --help`` prints and
    ``docs/training.md`` lists). ``__post_init__`` validates each field and raises
    :class:`~reasonshape.errors.ConfigError` (a ``ValueError``) "<field> must be ..., got ...". Cross-checks with
    ``GRPOConfig`` are in :func:`check_compatible`.
    """

    # ---------------------------------------------------------------------------------------------- data
    puzzles: list[str] = field(
        default_factory=lambda: ["tents"],
        metadata={"help": "Puzzles to train on (registry names, e.g. tents solo lightup)."})
    levels: list[str] = field(
        default_factory=lambda: ["trivial"],
        metadata={"help": "Difficulty levels among trivial, easy, normal, hard (METHOD.md §A)."})
    dataset_size: int = field(
        default=64,
        metadata={"help": "Generated instances per (puzzle, level); the dataset has puzzles x levels x this rows."})
    dataset_seed: int = field(
        default=0, metadata={"help": "Seed of instance generation (item i depends only on seed, puzzle, level, i)."})
    dataset_backend: Literal["native", "sgt"] = field(
        default="native",
        metadata={"help": "Instance generator: reasonshape's own ('native') or the collection's sgt-<puzzle> binary."})
    prompt_format: Literal["conversational", "standard"] = field(
        default="conversational",
        metadata={"help": "Prompt column layout (TRL's terms): chat messages, the model's chat template applied; or "
                          "one string (system prompt, blank line, puzzle) for a base model without a chat template."})
    # ---------------------------------------------------------------------------------------------- rewards
    reward_funcs: list[str] = field(
        default_factory=lambda: ["shaped", "accuracy", "format", "eta"],
        metadata={"help": "Reward functions, in order, among accuracy, format, eta, self_preference, shaped. "
                          "GRPOConfig.reward_weights follows this order; when it is unset and 'shaped' is listed, "
                          "shaped gets weight 1 and the others 0 (logged, not trained on)."})
    accuracy_weight: float = field(default=1.0, metadata={"help": "Shaped reward: weight of binary accuracy (> 0)."})
    format_weight: float = field(default=0.1, metadata={"help": "Shaped reward: weight of the format term (>= 0)."})
    eta_weight: float = field(
        default=0.2, metadata={"help": "Shaped reward: weight of eta clipped to [0, 1] (>= 0)."})
    self_preference_weight: float = field(
        default=0.0,
        metadata={"help": "Shaped reward: weight of the scaled preference mass (N*pibar_i - 1)/(N - 1) (>= 0); "
                          "> 0 needs a judge."})
    eta_only_correct: bool = field(
        default=True, metadata={"help": "Only correct answers earn eta (shaped and eta rewards); wrong ones get 0."})
    allow_gaming_weights: bool = field(
        default=False,
        metadata={"help": "Accept shaping weights under which a wrong answer could outscore a correct one."})
    # ---------------------------------------------------------------------------------------------- extraction
    extraction: Literal["deterministic", "llm", "off"] = field(
        default="deterministic",
        metadata={"help": "Claim extraction for eta: deterministic (no LLM), llm (OpenAI-compatible endpoint, "
                          "falls back to deterministic), off (no claim graphs: no eta)."})
    extraction_base_url: str | None = field(
        default=None, metadata={"help": "OpenAI-compatible base URL (http(s)://host:port/v1) for extraction=llm."})
    extraction_model: str | None = field(default=None, metadata={"help": "Served model name for extraction=llm."})
    extraction_api_key_env: str = field(
        default="OPENAI_API_KEY", metadata={"help": "Environment variable holding the extraction endpoint's key."})
    # ---------------------------------------------------------------------------------------------- judge
    judge: Literal["auto", "policy", "vllm_server", "vllm_colocate", "openai", "transformers"] = field(
        default="auto",
        metadata={"help": "Self-preference judge: policy (the live policy in process), vllm_server (the vLLM server "
                          "of use_vllm/vllm_mode=server, which holds the current weights), vllm_colocate (TRL's "
                          "colocated engine; not with vllm_enable_sleep_mode or vllm_tensor_parallel_size > 1), "
                          "openai (judge_base_url + judge_model), transformers (checkpoint judge_model); auto picks "
                          "vllm_server / vllm_colocate / policy from GRPOConfig (policy where vllm_colocate cannot "
                          "judge)."})
    judge_base_url: str | None = field(
        default=None,
        metadata={"help": "Judge endpoint for judge=openai (or to override vllm_server's URL), e.g. "
                          "http://127.0.0.1:8000/v1."})
    judge_model: str | None = field(
        default=None,
        metadata={"help": "Judge model: served name (openai, vllm_server; default model_name_or_path) or checkpoint "
                          "path (transformers)."})
    judge_api_key_env: str = field(
        default="OPENAI_API_KEY", metadata={"help": "Environment variable holding the judge endpoint's key."})
    judge_trials: int = field(
        default=4, metadata={"help": "M, random spanning trees per group (M*(N-1) judge prompts per group), >= 1."})
    judge_max_tokens: int = field(default=256, metadata={"help": "Tokens the judge may generate per verdict, >= 1."})
    judge_temperature: float = field(default=1.0, metadata={"help": "Judge sampling temperature, >= 0."})
    judge_max_candidate_tokens: int = field(
        default=1024,
        metadata={"help": "Budget per candidate shown to the judge (cut in the middle), >= 2: tokens of the judge's "
                          "tokenizer for the policy, vllm_colocate and transformers judges; whitespace-separated "
                          "words for the served judges (vllm_server, openai), whose client has no tokenizer."})
    judge_both_orders: bool = field(
        default=False, metadata={"help": "Judge every pair in both orders to cancel position bias (2x prompts)."})
    judge_logprobs: int | None = field(
        default=5, metadata={"help": "Top-k logprobs for soft verdicts (0-20), or None for hard verdicts only."})
    judge_unparsed: Literal["tie", "drop"] = field(
        default="tie",
        metadata={"help": "A judge reply without a readable verdict: a tie (0.5), or dropped from the Bradley-Terry "
                          "fit (reasonshape choice; either way counted in reasonshape/su/unparsed_rate)."})
    judge_chat_template_kwargs: dict | str | None = field(
        default=None,
        metadata={"help": "Keywords for the judge's chat template, a mapping (a JSON object on the command line), "
                          "e.g. {enable_thinking: false} for Qwen3, which thinks by default: its verdict would come "
                          "after a thinking block likely cut at judge_max_tokens (an unread verdict is a tie). Passed "
                          "to every judge kind (the vLLM server reads extra_body chat_template_kwargs); unlike "
                          "GRPOConfig.chat_template_kwargs, which is the policy's."})
    su_pair_model: Literal["bradley_terry", "trueskill"] = field(
        default="bradley_terry", metadata={"help": "Pairwise model of structural uncertainty (paper B §3.2)."})
    su_aggregation: Literal["pagerank", "rank_centrality"] = field(
        default="pagerank", metadata={"help": "Ranking distribution from the win matrix (PageRank, damping 0.85)."})
    # ---------------------------------------------------------------------------------------------- model
    build_tiny_model_if_missing: bool = field(
        default=False,
        metadata={"help": "When model_name_or_path is a missing local directory, build reasonshape's tiny random "
                          "Qwen2 there first (CPU smoke runs; no download)."})
    tiny_model_seed: int = field(default=0, metadata={"help": "Seed of the tiny model built when missing."})

    def __post_init__(self):
        from reasonshape.envs.dataset import PROMPT_FORMATS
        from reasonshape.envs.registry import PUZZLE_NAMES
        from reasonshape.rewards.functions import ShapingWeights, check_weight
        from reasonshape.rewards.structural_uncertainty import UNPARSED_POLICIES

        self.puzzles = _as_str_list(self.puzzles, "puzzles")
        self.levels = _as_str_list(self.levels, "levels")
        self.reward_funcs = _as_str_list(self.reward_funcs, "reward_funcs")
        unknown = [p for p in self.puzzles if p not in PUZZLE_NAMES]
        if not self.puzzles or unknown:
            raise ConfigError(f"puzzles must be a non-empty list of {list(PUZZLE_NAMES)}, got {self.puzzles}")
        if not self.levels or any(lv not in _LEVELS for lv in self.levels):
            raise ConfigError(f"levels must be a non-empty list of {list(_LEVELS)}, got {self.levels}")
        _check_int(self.dataset_size, "dataset_size", 1)
        _check_int(self.dataset_seed, "dataset_seed", None)
        if self.dataset_backend not in ("native", "sgt"):
            raise ConfigError(f"dataset_backend must be 'native' or 'sgt', got {self.dataset_backend!r}")
        if self.prompt_format not in PROMPT_FORMATS:
            raise ConfigError(f"prompt_format must be 'conversational' or 'standard', got {self.prompt_format!r}")
        if not self.reward_funcs or any(r not in _REWARD_NAMES for r in self.reward_funcs):
            raise ConfigError(f"reward_funcs must be a non-empty list of {list(_REWARD_NAMES)}, "
                              f"got {self.reward_funcs}")
        if len(set(self.reward_funcs)) != len(self.reward_funcs):
            raise ConfigError(f"reward_funcs must not repeat a reward, got {self.reward_funcs}")
        for name in ("accuracy", "format", "eta", "self_preference"):  # named as the config names them
            check_weight(getattr(self, f"{name}_weight"), name, f"{name}_weight")
        weights = ShapingWeights(
            accuracy=self.accuracy_weight, format=self.format_weight, eta=self.eta_weight,
            self_preference=self.self_preference_weight, eta_only_correct=self.eta_only_correct, allow_gaming=True)
        if not self.allow_gaming_weights and weights.gaming_margin() <= 0:  # the anti-gaming rule, in our field names
            raise weights.gaming_error("set allow_gaming_weights: true (--allow_gaming_weights true)")
        self.weights = replace(weights, allow_gaming=self.allow_gaming_weights)
        if self.extraction not in ("deterministic", "llm", "off"):
            raise ConfigError(f"extraction must be one of deterministic, llm, off, got {self.extraction!r}")
        if self.extraction == "llm" and not (self.extraction_base_url and self.extraction_model):
            raise ConfigError("extraction_base_url and extraction_model must be set for extraction=llm, got "
                              f"{self.extraction_base_url!r} and {self.extraction_model!r}")
        if self.extraction == "off" and ("eta" in self.reward_funcs or ("shaped" in self.reward_funcs
                                                                        and self.eta_weight > 0)):
            raise ConfigError("extraction must not be 'off' when eta is rewarded (eta in reward_funcs, or shaped "
                              f"with eta_weight > 0), got extraction='off' with reward_funcs={self.reward_funcs}")
        judges = ("auto", "policy", "vllm_server", "vllm_colocate", "openai", "transformers")
        if self.judge not in judges:
            raise ConfigError(f"judge must be one of {list(judges)}, got {self.judge!r}")
        if self.judge == "openai" and not (self.judge_base_url and self.judge_model):
            raise ConfigError(f"judge_base_url and judge_model must be set for judge=openai, got "
                              f"{self.judge_base_url!r} and {self.judge_model!r}")
        if self.judge == "transformers" and not self.judge_model:
            raise ConfigError("judge_model must be a checkpoint path for judge=transformers, got None")
        from reasonshape.training.backends import chat_template_kwargs_from

        self.judge_chat_template_kwargs = chat_template_kwargs_from(self.judge_chat_template_kwargs,
                                                                    "judge_chat_template_kwargs")
        _check_int(self.judge_trials, "judge_trials", 1)
        _check_int(self.judge_max_tokens, "judge_max_tokens", 1)
        _check_int(self.judge_max_candidate_tokens, "judge_max_candidate_tokens", 2)
        if self.judge_logprobs is not None:
            _check_int(self.judge_logprobs, "judge_logprobs", 0)
            if self.judge_logprobs > 20:
                raise ConfigError(f"judge_logprobs must be None or an integer in [0, 20], got {self.judge_logprobs}")
        if self.judge_unparsed not in UNPARSED_POLICIES:
            raise ConfigError(f"judge_unparsed must be 'tie' or 'drop', got {self.judge_unparsed!r}")
        if not isinstance(self.judge_temperature, int | float) or not math.isfinite(self.judge_temperature) \
                or self.judge_temperature < 0:
            raise ConfigError(f"judge_temperature must be a finite number >= 0, got {self.judge_temperature!r}")
        _check_int(self.tiny_model_seed, "tiny_model_seed", None)

    @property
    def uses_judge(self) -> bool:
        """Whether any active reward needs the self-preference judge."""
        return "self_preference" in self.reward_funcs or ("shaped" in self.reward_funcs
                                                          and self.self_preference_weight > 0)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def fields_markdown() -> str:
    """The markdown table of :class:`ReasonshapeArguments` (field, type, default, help), generated from the
    dataclass so ``docs/training.md`` cannot drift from the code (a test compares them)."""
    import typing

    rows = ["| field | type | default | help |", "|---|---|---|---|"]
    hints = typing.get_type_hints(ReasonshapeArguments)
    for f in fields(ReasonshapeArguments):
        if f.default_factory is not MISSING:  # type: ignore[misc]
            default = f.default_factory()  # type: ignore[misc]
        else:
            default = f.default
        # From the resolved type hints, not ``f.type``: TrlParser rewrites ``f.type`` in place when it builds.
        hint = hints[f.name]
        if typing.get_origin(hint) is Literal:
            t = " \\| ".join(repr(a) for a in typing.get_args(hint))
        elif typing.get_args(hint):
            t = str(hint).replace("typing.", "").replace("NoneType", "None").replace("|", "\\|")
        else:
            t = getattr(hint, "__name__", str(hint))
        text = f.metadata["help"].replace("|", "\\|")
        rows.append(f"| `{f.name}` | {t} | `{default!r}` | {text} |")
    return "\n".join(rows) + "\n"


def _as_str_list(v: Any, name: str) -> list[str]:
    if isinstance(v, str):
        v = v.replace(",", " ").split()
    if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{name} must be a list of strings, got {v!r}")
    return list(v)


def _check_int(v: Any, name: str, minimum: int | None) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or (minimum is not None and v < minimum):
        what = "an integer" if minimum is None else f"an integer >= {minimum}"
        raise ConfigError(f"{name} must be {what}, got {v!r}")


# ===================================================================================================== parsing
def make_parser(prog: str = "reasonshape train"):
    """TRL's ``TrlParser`` over (:class:`ReasonshapeArguments`, ``GRPOConfig``, ``ModelConfig``).

    Two changes to argparse's defaults (reasonshape choice): only whole option names are taken (argparse would read
    ``--max_step 1`` as ``--max_steps 1``), and a bad option or value raises :class:`ConfigError` naming it instead of
    printing the whole usage (hundreds of lines) and exiting.
    """
    from trl import GRPOConfig, ModelConfig, TrlParser

    class Parser(TrlParser):
        def error(self, message: str):  # argparse's hook for every command-line error
            raise ConfigError(f"{message} ('{self.prog} --help' lists every option)")

    return Parser((ReasonshapeArguments, GRPOConfig, ModelConfig), prog=prog, allow_abbrev=False,
                  description="GRPO on Simon Tatham's puzzles with reasonshape's rewards (TRL GRPOTrainer).")


def parse_train_args(argv: list[str] | None = None):
    """Parse ``--config x.yaml`` plus flag overrides into ``(ReasonshapeArguments, GRPOConfig, ModelConfig)``.

    Raises
    ------
    ConfigError
        An unknown field in the config file or the options, before any value is checked ("unknown field dataset_sise
        (did you mean dataset_size?) in config file x.yaml"); a config file that is missing, unreadable or not valid
        YAML; an invalid field value (also TRL's ``ValueError`` for
        its own fields, re-raised as ConfigError; its generation-batch rule restated as "per_device_train_batch_size
        * steps_per_generation (...) * processes must be a multiple of num_generations", in the wording of
        :data:`reasonshape.rewards.functions.PER_PROCESS_BATCH`).
    """
    parser = make_parser()
    argv = list(argv or [])
    _check_known_fields(parser, argv)  # before any value is validated: a misspelt field explains what follows
    try:
        rs, grpo, model = parser.parse_args_and_config(args=argv)
    except ConfigError:
        raise
    except (ValueError, OSError) as e:
        raise _trl_error(e) from e
    check_compatible(rs, grpo, model)
    return rs, grpo, model


def _check_known_fields(parser: Any, argv: list[str]) -> None:
    """Raise ConfigError "unknown field dataset_sise in config file x.yaml (did you mean dataset_size?)" for each
    key of the ``--config`` file and each ``--option`` of ``argv`` that no dataclass field takes, with the closest
    field name (difflib over ReasonshapeArguments, GRPOConfig and ModelConfig). TRL's parser rejects them too,
    in its own words and only after every value was validated.

    Public interfaces only: a config key must be the name of a dataclass field (``dataclasses.fields`` of the
    parser's ``dataclass_types``: HfArgumentParser gives each init field one option whose dest is its name), and an
    unknown option is one that ``parse_known_args`` leaves over (it knows the ``--field-name`` and
    ``--no_<bool field>`` aliases). That converts the known options' values as it goes, so a malformed one
    (``--max_steps abc``) raises the parser's ConfigError first; the dataclasses' own checks come later.
    """
    import difflib

    import yaml

    names = [f.name for dc in parser.dataclass_types for f in fields(dc) if f.init]
    found: list[tuple[str, str]] = []  # (name, where)
    args = list(argv)
    if "--config" in args:  # TRL's parse_args_and_config takes it (and the path after it) out the same way
        i = args.index("--config")
        config = args[i + 1] if i + 1 < len(args) else None
        del args[i:i + 2]
        if config is None or config.startswith("--"):  # TRL's parser would fail with an IndexError
            raise ConfigError("--config needs the path of a YAML file, e.g. --config configs/grpo_cpu_smoke.yaml")
        try:
            with open(config) as f:
                keys = yaml.safe_load(f)
        except OSError as e:
            raise ConfigError(f"cannot read config file {config}: {e.strerror or e}") from None
        except yaml.YAMLError as e:
            # PyYAML's message spans lines ("while parsing ...\n  in ..., line 1, column 10"): one line here
            raise ConfigError(f"config file {config} is not valid YAML: {' '.join(str(e).split())}") from None
        if isinstance(keys, dict):
            known = set(names)
            found += [(str(k), f"config file {config}") for k in keys if k != "env" and k not in known]
    _, unknown = parser.parse_known_args(args)
    found += [(a[2:].partition("=")[0], "the command-line options") for a in unknown if a.startswith("--")]
    if not found:
        return
    parts = []
    for name, where in found:
        close = difflib.get_close_matches(name.replace("-", "_"), names, n=1)
        parts.append(f"unknown field {name}{f' (did you mean {close[0]}?)' if close else ''} in {where}")
    raise ConfigError("; ".join(parts) + " ('reasonshape train --help' lists every field)")


# GRPOConfig.__post_init__ (trl 1.16): "generation_batch_size (2) must be divisible by num_generations (4)."
_TRL_GENERATION_BATCH = re.compile(r"generation_batch_size \((\d+)\) must be divisible by num_generations \((\d+)\)")


def _trl_error(e: Exception) -> ConfigError:
    """TRL's error as a one-line ConfigError; its generation-batch rule restated in the fields a user sets
    (``generation_batch_size`` is derived, not set, in reasonshape's configs)."""
    from reasonshape.rewards.functions import PER_PROCESS_BATCH

    m = _TRL_GENERATION_BATCH.search(str(e))
    if m is None:
        return ConfigError(str(e))
    return ConfigError(
        f"{PER_PROCESS_BATCH} * processes must be a multiple of num_generations (each prompt's {m[2]} completions "
        f"are generated in one batch), got "
        f"{m[1]} (generation_batch_size) and num_generations={m[2]}: raise per_device_train_batch_size or "
        "gradient_accumulation_steps (steps_per_generation or generation_batch_size where you set one), or lower "
        "num_generations")


def default_reward_weights(rs: ReasonshapeArguments, grpo: Any) -> list[float] | None:
    """TRL ``reward_weights`` for ``rs.reward_funcs``: the config's when set, else 1 for ``shaped`` and 0 for the
    others when ``shaped`` is listed (they are then logged, not trained on), else ``None`` (TRL: all 1)."""
    if grpo.reward_weights is not None:
        return list(grpo.reward_weights)
    if "shaped" in rs.reward_funcs:
        return [1.0 if r == "shaped" else 0.0 for r in rs.reward_funcs]
    return None


def _colocate_judge_blocker(grpo: Any) -> tuple[str, str, str] | None:
    """Why TRL's colocated engine cannot serve as the judge under ``grpo``: ``(setting, reason, fix)``, e.g.
    ``("vllm_enable_sleep_mode=True", "TRL puts ...", "vllm_enable_sleep_mode: false")``; ``None`` when it can.

    * ``vllm_enable_sleep_mode``: TRL puts the engine to sleep at level 2 (weights discarded) at the end of each
      generation, and computes the rewards afterwards, so the judge would run on an engine without weights.
    * ``vllm_tensor_parallel_size > 1``: the ranks of one tensor-parallel engine must all submit the same prompts
      (TRL gathers them over the TP group before generating), while each rank judges its own groups.
    """
    if getattr(grpo, "vllm_enable_sleep_mode", False):
        return ("vllm_enable_sleep_mode=True", "TRL puts the colocated engine to sleep, weights discarded, after "
                "generating and before the rewards are computed", "vllm_enable_sleep_mode: false")
    tp = int(getattr(grpo, "vllm_tensor_parallel_size", 1) or 1)
    if tp > 1:
        return (f"vllm_tensor_parallel_size={tp}", "the ranks of one tensor-parallel engine must submit identical "
                "prompts, but each rank judges its own groups", "vllm_tensor_parallel_size: 1")
    return None


def resolve_judge(rs: ReasonshapeArguments, grpo: Any, model: Any) -> Any:
    """The :class:`~reasonshape.rewards.functions.JudgeSettings` for this run, or ``None`` when no reward needs it.

    ``auto`` becomes ``vllm_server`` with ``use_vllm`` and ``vllm_mode='server'`` (an OpenAI-compatible client to
    ``vllm_server_base_url`` or ``http://<vllm_server_host>:<vllm_server_port>``, ``/v1`` appended; host 0.0.0.0
    means this machine), ``vllm_colocate`` with ``vllm_mode='colocate'``, else ``policy``. In colocate mode with
    ``vllm_enable_sleep_mode`` on or ``vllm_tensor_parallel_size > 1``, where TRL's engine cannot judge (see
    :func:`check_compatible`), ``auto`` becomes ``policy`` instead, and says so in one INFO log line.
    """
    from reasonshape.rewards.functions import JudgeSettings

    if not rs.uses_judge:
        return None
    kind = rs.judge
    if kind == "auto":
        kind = ("vllm_server" if grpo.vllm_mode == "server" else "vllm_colocate") if grpo.use_vllm else "policy"
        blocker = _colocate_judge_blocker(grpo) if kind == "vllm_colocate" else None
        if blocker is not None:
            kind = "policy"
            _log.info("judge=auto: the self-preference judge is the policy in process, not TRL's colocated vLLM "
                      "engine, because of %s (%s)", blocker[0], blocker[1])
    common = dict(trials=rs.judge_trials, max_tokens=rs.judge_max_tokens, temperature=rs.judge_temperature,
                  max_candidate_tokens=rs.judge_max_candidate_tokens, both_orders=rs.judge_both_orders,
                  logprobs=rs.judge_logprobs, unparsed=rs.judge_unparsed, pair_model=rs.su_pair_model,
                  aggregation=rs.su_aggregation,
                  seed=grpo.seed, api_key_env=rs.judge_api_key_env, chat_template_kwargs=rs.judge_chat_template_kwargs)
    if kind in ("vllm_server", "vllm_colocate", "policy"):  # the policy judges itself: its prompt layout
        common["prompt_format"] = rs.prompt_format
    if kind == "vllm_server":
        url = rs.judge_base_url or grpo.vllm_server_base_url
        if not url:
            host = "127.0.0.1" if grpo.vllm_server_host in ("0.0.0.0", "::") else grpo.vllm_server_host
            url = f"http://{host}:{grpo.vllm_server_port}"
        url = url.rstrip("/")
        url = url if url.endswith("/v1") else url + "/v1"
        return JudgeSettings(kind="openai", base_url=url, model=rs.judge_model or model.model_name_or_path, **common)
    if kind == "openai":
        return JudgeSettings(kind="openai", base_url=rs.judge_base_url, model=rs.judge_model, **common)
    if kind == "transformers":
        return JudgeSettings(kind="transformers", model=rs.judge_model, **common)
    return JudgeSettings(kind="vllm" if kind == "vllm_colocate" else "policy", **common)


def check_compatible(rs: ReasonshapeArguments, grpo: Any, model: Any) -> None:
    """Cross-checks between reasonshape's arguments and TRL's, done when the config is built (not at step 1,000).

    Raises
    ------
    ConfigError
        ``model_name_or_path`` unset, or a local path that does not exist
        (:func:`reasonshape.training.backends.check_model_path`, as ``reasonshape eval`` checks ``--model``; not when
        ``build_tiny_model_if_missing`` builds the tiny model there); ``seed`` outside [0, 2**32) (transformers'
        ``set_seed``); ``remove_unused_columns`` true (the rewards need
        the ``puzzle`` and ``game_id`` columns); ``eval_strategy`` other than ``"no"`` (no eval split is built:
        ``reasonshape eval`` evaluates checkpoints); ``reward_weights`` of the wrong length; a self-preference judge
        while a process could receive part of a group (several processes and ``per_device_train_batch_size *
        steps_per_generation``, the consecutive completions TRL gives each process, not a multiple of
        ``num_generations``); ``judge=vllm_server`` / ``vllm_colocate`` without the matching vLLM mode;
        ``judge=vllm_colocate`` with ``vllm_enable_sleep_mode`` on (TRL's engine sleeps, weights discarded, while
        the rewards are computed) or ``vllm_tensor_parallel_size > 1`` (each rank would send its own judge prompts
        to one tensor-parallel engine); a ``report_to`` integration whose package is not installed
        (:func:`_check_report_to`).
    """
    if not model.model_name_or_path:
        raise ConfigError("model_name_or_path must be set (a local directory or hub id), got None")
    if not rs.build_tiny_model_if_missing:  # else the tiny model is built there (run_training)
        from reasonshape.training.backends import check_model_path

        check_model_path(model.model_name_or_path, "model_name_or_path",
                         ", or build_tiny_model_if_missing: true for reasonshape's tiny CPU model")
    if not 0 <= grpo.seed < 2**32:  # else transformers' set_seed fails inside the trainer, after the model loads
        raise ConfigError(f"seed must be an integer in [0, 2**32) (transformers' set_seed seeds numpy), got "
                          f"{grpo.seed}")
    if grpo.remove_unused_columns:
        raise ConfigError("remove_unused_columns must be False: the rewards read the dataset's 'puzzle' and "
                          "'game_id' columns, got True")
    eval_strategy = str(getattr(grpo.eval_strategy, "value", grpo.eval_strategy))
    if eval_strategy != "no":  # the trainer gets no eval_dataset: TRL would fail after the model is loaded
        raise ConfigError(f"eval_strategy must be 'no': reasonshape train builds no eval split; evaluate saved "
                          f"checkpoints with 'reasonshape eval --model <output_dir>/checkpoint-N' (docs/eval.md), "
                          f"got eval_strategy={eval_strategy!r}")
    if grpo.reward_weights is not None and len(grpo.reward_weights) != len(rs.reward_funcs):
        raise ConfigError(f"reward_weights must have one weight per reward in reward_funcs {rs.reward_funcs}, got "
                          f"{list(grpo.reward_weights)}")
    if rs.uses_judge:
        from reasonshape.rewards.functions import BATCH_RULE

        n_proc = int(getattr(grpo, "world_size", 1) or 1)
        # the per-process batch of BATCH_RULE (steps_per_generation as GRPOConfig.__post_init__ set it)
        spg = int(getattr(grpo, "steps_per_generation", None) or grpo.gradient_accumulation_steps or 1)
        if n_proc > 1 and (grpo.per_device_train_batch_size * spg) % grpo.num_generations:
            raise ConfigError(
                f"self-preference on several processes needs whole groups in each process's reward call: "
                f"{BATCH_RULE}; got per_device_train_batch_size={grpo.per_device_train_batch_size}, "
                f"steps_per_generation={spg}, "
                f"num_generations={grpo.num_generations}, processes={n_proc}")
        if rs.judge == "vllm_server" and not (grpo.use_vllm and grpo.vllm_mode == "server"):
            raise ConfigError(f"judge must not be 'vllm_server' without use_vllm=True and vllm_mode='server', got "
                              f"use_vllm={grpo.use_vllm}, vllm_mode={grpo.vllm_mode!r}")
        if rs.judge == "vllm_colocate" and not (grpo.use_vllm and grpo.vllm_mode == "colocate"):
            raise ConfigError(f"judge must not be 'vllm_colocate' without use_vllm=True and vllm_mode='colocate', "
                              f"got use_vllm={grpo.use_vllm}, vllm_mode={grpo.vllm_mode!r}")
        blocker = _colocate_judge_blocker(grpo) if rs.judge == "vllm_colocate" else None
        if blocker is not None:
            setting, why, fix = blocker
            raise ConfigError(f"judge must not be 'vllm_colocate' with {setting} ({why}): set {fix}, or judge: "
                              f"policy (judge: auto picks it here), or a served judge (judge: openai with "
                              f"judge_base_url and judge_model), got judge='vllm_colocate' with {setting}")
    _check_report_to(grpo)


#: ``report_to`` integration -> what to ``pip install`` for it (transformers' names; the package when it differs).
_REPORT_TO_PACKAGES = {"azure_ml": "azureml-core", "comet_ml": "comet-ml", "flyte": "flytekit"}


def _check_report_to(grpo: Any) -> None:
    """Refuse a ``report_to`` integration whose package is missing: transformers would raise a bare RuntimeError
    when the trainer is built (after the model is loaded). Availability is transformers' own
    (``get_available_reporting_integrations``); a name transformers does not know is left to it."""
    from transformers.integrations.integration_utils import (
        INTEGRATION_TO_CALLBACK,
        get_available_reporting_integrations,
        is_azureml_available,
    )

    wanted = grpo.report_to or []  # TrainingArguments.__post_init__ made it a list ("none" -> [])
    wanted = [wanted] if isinstance(wanted, str) else list(wanted)
    available = set(get_available_reporting_integrations())
    if is_azureml_available():  # transformers leaves azure_ml out of that list when mlflow is installed too
        available.add("azure_ml")
    missing = [r for r in wanted if r in INTEGRATION_TO_CALLBACK and r not in available]
    if missing:
        packages = " ".join(_REPORT_TO_PACKAGES.get(r, r) for r in missing)
        raise ConfigError(f"report_to must name installed integrations: pip install {packages}, or set report_to: "
                          f"none, got report_to={wanted} ({', '.join(missing)} not installed)")


# ===================================================================================================== training
@dataclass
class TrainResult:
    """What a training run produced.

    Attributes
    ----------
    output_dir : Path
        Where the model and :data:`RESULT_FILE` were written.
    final_metrics : dict of str to float or None
        Means over the last :data:`FINAL_WINDOW` logged steps of every logged metric (rewards, reasonshape/*...);
        ``None`` for a metric logged with no value in those steps (a reward that returned ``None`` throughout).
    log_history : list of dict
        TRL's ``trainer.state.log_history``.
    runtime_s : float
        Wall-clock seconds of the whole run (dataset, model, training, saving).
    global_step : int
    trainer : GRPOTrainer or None
        The trainer (kept in process; not serialised).
    """

    output_dir: Path
    final_metrics: dict[str, float | None]
    log_history: list[dict[str, Any]]
    runtime_s: float
    global_step: int
    trainer: Any = None


def final_metrics(log_history: list[dict[str, Any]], window: int = FINAL_WINDOW) -> dict[str, float | None]:
    """Mean of each numeric metric over the last ``window`` step logs (entries with a ``reward`` key), NaN and
    ``None`` values left out; ``None`` for a metric with no value left (TRL logs ``None`` for the mean of a reward
    that returned ``None`` for every completion, e.g. self-preference without judge verdicts).

    Examples
    --------
    >>> final_metrics([{"reward": 0.0, "step": 1}, {"reward": 1.0, "step": 2}], window=5)
    {'reward': 0.5, 'step': 1.5}
    """
    steps = [h for h in log_history if "reward" in h]
    tail = steps[-window:] if window > 0 else steps
    keys = sorted({k for h in tail for k, v in h.items()
                   if v is None or (isinstance(v, int | float) and not isinstance(v, bool))})
    out: dict[str, float | None] = {}
    for k in keys:
        vals = [float(h[k]) for h in tail if isinstance(h.get(k), int | float) and math.isfinite(float(h[k]))]
        out[k] = sum(vals) / len(vals) if vals else None
    return out


#: Fields left out of :func:`run_settings`: where a run writes, and the process's rank (not how it trains).
_NOT_SETTINGS = frozenset({"output_dir", "logging_dir", "local_rank"})


def run_settings(rs: ReasonshapeArguments, grpo: Any, model_args: Any) -> dict[str, dict[str, Any]]:
    """Every field of the three parsed dataclasses as JSON values, ``{"reasonshape": ..., "grpo": ..., "model":
    ...}``, without ``output_dir``, ``logging_dir`` and ``local_rank``: what a run trains with. Stored as
    ``settings`` in :data:`RESULT_FILE`; ``reasonshape ablate`` re-runs a finished run whose stored settings differ.
    """
    model = {f.name: getattr(model_args, f.name) for f in fields(model_args)}
    parts = {"reasonshape": rs.to_dict(), "grpo": grpo.to_dict(), "model": model}
    return json.loads(json.dumps({k: {n: v for n, v in d.items() if n not in _NOT_SETTINGS}
                                  for k, d in parts.items()}, default=str))


def _settings_changes(stored: Any, requested: dict[str, dict[str, Any]]) -> list[str]:
    """``"field old -> new"`` for each field whose stored value differs from the requested one (fields only one
    side knows, as after a library upgrade, are left out); one entry saying so when nothing was stored."""
    if not isinstance(stored, dict):
        return ["none stored"]
    out = []
    for part, fields_ in requested.items():
        old = stored.get(part) or {}
        out += [f"{name} {old[name]} -> {value}" for name, value in fields_.items()
                if name in old and old[name] != value]
    return sorted(out)


def _check_chat_template(model_path: str, model_args: Any, grpo: Any, processing_class: Any = None) -> None:
    """Raise :class:`ConfigError` when the policy's tokenizer has no chat template, before the model is loaded: the
    conversational prompts could not be rendered (a base model needs ``prompt_format: standard``). The tokenizer is
    the one given to the trainer, else ``AutoTokenizer.from_pretrained(model_path)`` (local files, or the hub's
    cache); one that cannot be loaded here is left to TRL, which reports it itself."""
    tok = processing_class
    if tok is None:
        from transformers import AutoTokenizer

        try:
            tok = AutoTokenizer.from_pretrained(model_path, revision=model_args.model_revision,
                                                trust_remote_code=grpo.trust_remote_code)
        except (OSError, ValueError):
            return
    if not getattr(tok, "chat_template", None):
        raise ConfigError(f"the tokenizer of {model_path!r} has no chat template, so the conversational prompts of "
                          "this run cannot be rendered: set prompt_format: standard (one string per prompt)")


def _bind_live_judge(scorer: Any, trainer: Any, judge_option: str) -> None:
    """Bind a ``policy`` judge to the trained model (``trainer.accelerator.unwrap_model(trainer.model)`` and
    ``trainer.processing_class``) or a ``vllm`` judge to TRL's colocated engine (``trainer.vllm_generation.llm``),
    with the judge settings' ``chat_template_kwargs``; nothing for the other kinds (built on first use).

    Raises
    ------
    ConfigError
        A ``policy`` judge on sharded weights (FSDP or DeepSpeed ZeRO-3).
    """
    judge = scorer.judge_settings
    if judge is not None and judge.kind == "policy":
        ds = getattr(trainer.accelerator.state, "deepspeed_plugin", None)
        if getattr(trainer, "is_fsdp_enabled", False) or (ds is not None and getattr(ds, "zero_stage", 0) == 3):
            raise ConfigError("judge must not be 'policy' with sharded weights (FSDP or DeepSpeed ZeRO-3): use "
                              "judge=vllm_server, or vllm_colocate (with vllm_enable_sleep_mode false and "
                              f"vllm_tensor_parallel_size 1), or a served judge (openai), got judge={judge_option} "
                              "(the policy)")
        scorer.bind_policy(trainer.accelerator.unwrap_model(trainer.model), trainer.processing_class)
    elif judge is not None and judge.kind == "vllm":
        scorer.bind_vllm(trainer.vllm_generation.llm)


def run_training(rs: ReasonshapeArguments, grpo: Any, model_args: Any, config_path: str | None = None,
                 trainer_kwargs: dict[str, Any] | None = None) -> TrainResult:
    """Build the dataset, rewards and trainer, train, save, and write :data:`RESULT_FILE`.

    Parameters
    ----------
    rs, grpo, model_args
        As returned by :func:`parse_train_args`.
    config_path : str, optional
        Recorded in the result file.
    trainer_kwargs : dict, optional
        Extra ``GRPOTrainer`` keyword arguments (e.g. ``callbacks``, or TRL's experimental ``rollout_func``).

    Returns
    -------
    TrainResult

    Raises
    ------
    ConfigError
        Invalid combination of arguments (:func:`check_compatible`).

    Notes
    -----
    With ``build_tiny_model_if_missing`` and a ``model_name_or_path`` that does not exist, reasonshape's tiny
    random Qwen2 (:func:`reasonshape.training.tiny.build_tiny_model`) is built there first: nothing is downloaded.
    """
    t0 = time.perf_counter()
    settings = run_settings(rs, grpo, model_args)  # before the fields set below (reward_weights, ...)
    check_compatible(rs, grpo, model_args)
    from trl import GRPOTrainer, get_peft_config

    from reasonshape.envs.dataset import build_dataset
    from reasonshape.rewards.functions import RewardScorer, get_reward_functions

    model_path = model_args.model_name_or_path
    if rs.build_tiny_model_if_missing:
        from accelerate import PartialState

        from reasonshape.training.tiny import build_tiny_model

        # the main process builds it while the others wait (under torch.distributed only rank 0 writes weights)
        with PartialState().main_process_first():
            if not Path(model_path).expanduser().exists():
                build_tiny_model(Path(model_path).expanduser(), seed=rs.tiny_model_seed)

    dataset = build_dataset(rs.puzzles, rs.levels, n=rs.dataset_size, seed=rs.dataset_seed,
                            backend=rs.dataset_backend, prompt_format=rs.prompt_format)
    llm_backend = None
    if rs.extraction == "llm":
        from reasonshape.training.backends import OpenAICompatibleBackend

        llm_backend = OpenAICompatibleBackend(base_url=rs.extraction_base_url, model=rs.extraction_model,
                                              api_key_env=rs.extraction_api_key_env)
    judge = resolve_judge(rs, grpo, model_args)
    scorer = RewardScorer(extract=rs.extraction != "off", llm_backend=llm_backend, judge=judge,
                          num_generations=grpo.num_generations)
    reward_funcs = get_reward_functions(rs.reward_funcs, weights=rs.weights, eta_only_correct=rs.eta_only_correct,
                                        scorer=scorer)
    grpo.reward_weights = default_reward_weights(rs, grpo)

    model_init_kwargs = dict(revision=model_args.model_revision, trust_remote_code=grpo.trust_remote_code,
                             attn_implementation=model_args.attn_implementation, dtype=model_args.dtype)
    if isinstance(grpo.model_init_kwargs, dict):
        model_init_kwargs.update(grpo.model_init_kwargs)
    grpo.model_init_kwargs = model_init_kwargs
    if rs.prompt_format == "conversational":
        _check_chat_template(model_path, model_args, grpo, (trainer_kwargs or {}).get("processing_class"))
    trainer = GRPOTrainer(model=model_path, reward_funcs=reward_funcs, args=grpo, train_dataset=dataset,
                          peft_config=get_peft_config(model_args), **(trainer_kwargs or {}))
    _bind_live_judge(scorer, trainer, rs.judge)

    trainer.train(resume_from_checkpoint=grpo.resume_from_checkpoint)
    trainer.save_model(grpo.output_dir)
    runtime = time.perf_counter() - t0
    history = list(trainer.state.log_history)
    result = TrainResult(output_dir=Path(grpo.output_dir), final_metrics=final_metrics(history),
                         log_history=history, runtime_s=runtime, global_step=int(trainer.state.global_step),
                         trainer=trainer)
    if trainer.accelerator.is_main_process:
        _write_result(result, rs, grpo, config_path, settings)
    return result


def _write_result(result: TrainResult, rs: ReasonshapeArguments, grpo: Any, config_path: str | None,
                  settings: dict[str, dict[str, Any]]) -> None:
    out = Path(grpo.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "completed": True, "config": config_path, "runtime_s": result.runtime_s, "global_step": result.global_step,
        "final_metrics": result.final_metrics, "reward_funcs": rs.reward_funcs,
        "reward_weights": grpo.reward_weights, "shaping_weights": asdict(rs.weights),
        "settings": settings,
        "log_history": result.log_history,
    }
    (out / RESULT_FILE).write_text(json.dumps(record, indent=1, default=str))


def train_main(args: argparse.Namespace) -> int:
    """``reasonshape train``: parse the TRL-style arguments in ``args.trl_args`` and train. Returns the exit code."""
    argv = list(getattr(args, "trl_args", None) or [])
    if any(a in ("-h", "--help") for a in argv):
        make_parser().print_help()
        return 0
    if not argv:
        print("reasonshape train: give a config, e.g. reasonshape train --config configs/grpo_cpu_smoke.yaml "
              "(reasonshape train --help lists every option)", file=sys.stderr)
        return 2
    rs, grpo, model = parse_train_args(argv)
    config = argv[argv.index("--config") + 1] if "--config" in argv[:-1] else None
    result = run_training(rs, grpo, model, config_path=config)
    if result.trainer is not None and not result.trainer.accelerator.is_main_process:
        return 0  # one summary per run, as one result file: the main process prints it
    fm = result.final_metrics
    shown = {k: None if v is None else round(v, 4) for k, v in fm.items()
             if k.startswith(("rewards/", "reasonshape/")) or k == "reward"}
    print(json.dumps({"output_dir": str(result.output_dir), "global_step": result.global_step,
                      "runtime_s": round(result.runtime_s, 2), "final": shown}, indent=1))
    return 0


# ===================================================================================================== ablation
def _override_args(sets: list[str] | None) -> list[str]:
    """``ablate --set KEY=VALUE`` items as ``--KEY VALUE ...`` arguments for :func:`parse_train_args`.

    A list field (one TRL's parser takes as several values: puzzles, levels, reward_funcs, reward_weights...) takes
    a YAML flow list (``levels=[trivial, easy]``) or space-separated values (``levels=trivial easy``), passed as
    separate arguments. A field given twice is a ConfigError (argparse would keep the last silently); an unknown
    field is left to :func:`parse_train_args`, which names the closest one.
    """
    if not sets:
        return []
    import yaml

    # argparse has no public way to get the action behind an option string, i.e. its dest (the field, also for the
    # --field-name alias) and nargs ("+" where HfArgumentParser reads a list type in the field's annotation);
    # recomputing them from dataclasses.fields would restate transformers' rules here, so the parser is asked
    options = make_parser()._option_string_actions
    out: list[str] = []
    seen: dict[str, str] = {}
    for s in sets:
        key, sep, value = s.partition("=")
        key = key.strip().lstrip("-")
        if not sep or not key:
            raise ConfigError(f"--set must be KEY=VALUE, got {s!r}")
        action = options.get(f"--{key}")
        field_name = action.dest if action is not None else key
        is_list = action is not None and action.nargs in ("+", "*")
        if field_name in seen:
            fix = f'give all its values in one, e.g. --set "{field_name}=[a, b]"' if is_list else "keep one"
            raise ConfigError(f"--set must give each field once, got {field_name} twice ({seen[field_name]!r} and "
                              f"{s!r}): {fix}")
        seen[field_name] = s
        if not is_list:
            out += [f"--{key}", value]
            continue
        text = value.strip()
        if text.startswith("["):
            try:
                items = yaml.safe_load(text)
            except yaml.YAMLError:
                items = None
            if not isinstance(items, list) or any(isinstance(x, dict | list) or x is None for x in items):
                raise ConfigError(f"--set {key} must be a YAML list such as [a, b] or space-separated values a b, "
                                  f"got {value!r}")
            items = [str(x) for x in items]
        else:
            items = text.split()
        if not items:
            raise ConfigError(f"--set {key} must give at least one value, got {value!r}")
        out += [f"--{key}", *items]
    return out


def run_ablation(configs: list[str], out: str | Path, overrides: list[str] | None = None,
                 rerun: bool = False) -> Path:
    """Run each config in sequence into ``<out>/<config stem>/`` and write ``<out>/comparison.md``.

    Parameters
    ----------
    configs : list of str
        YAML configs for ``reasonshape train`` (distinct file stems).
    out : str or Path
        Output root.
    overrides : list of str, optional
        Extra ``--flag value`` arguments applied to every run (after the config; ``output_dir`` is always set to
        the run's folder).
    rerun : bool
        Re-run configs that already finished (default: skip a run whose :data:`RESULT_FILE` says completed with
        the same :func:`run_settings` as now, so an interrupted ablation resumes where it stopped; a finished run
        with other settings, or none stored, is trained again and the changed fields are printed).

    Returns
    -------
    Path
        The comparison table's path.

    Raises
    ------
    ConfigError
        No configs, a missing config file, two configs with the same stem, or a config that does not parse with the
        overrides (an unknown field, a bad value): every config is parsed before the first run starts, and the
        error lists each one that fails. A run that fails while training is recorded in the table as failed (with
        the error) and the next config runs.

    Notes
    -----
    Runs are in process, one after another. Under ``accelerate launch -m reasonshape.cli ablate ...`` every rank
    runs the same sequence (each config is one distributed run) and rank 0 writes the table.
    """
    if not configs:
        raise ConfigError("configs must list at least one YAML file, got []")
    stems = [Path(c).stem for c in configs]
    if len(set(stems)) != len(stems):
        raise ConfigError(f"configs must have distinct file names (each names its run folder), got {stems}")
    missing = [c for c in configs if not Path(c).is_file()]
    if missing:
        raise ConfigError(f"configs must be existing files, got missing {missing}")
    root = Path(out)
    parsed, bad = [], []
    # every config first: a typo in the last one must not surface after hours of training
    for cfg, stem in zip(configs, stems, strict=True):
        try:
            parsed.append(parse_train_args(["--config", cfg, *(overrides or []), "--output_dir", str(root / stem)]))
        except ConfigError as e:
            bad.append(f"{cfg}: {e}")
    if bad:
        raise ConfigError("no run started, these configs do not parse with the overrides:\n  " + "\n  ".join(bad))
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for cfg, stem, (rs, grpo, model) in zip(configs, stems, parsed, strict=True):
        run_dir = root / stem
        record = _read_result(run_dir)
        if record is not None and not rerun:
            changes = _settings_changes(record.get("settings"), run_settings(rs, grpo, model))
            if not changes:
                print(f"[ablate] {stem}: finished earlier, skipped ({run_dir / RESULT_FILE})", file=sys.stderr)
                rows.append((stem, "done (cached)", record))
                continue
            print(f"[ablate] {stem}: finished earlier with other settings ({', '.join(changes)}), training again",
                  file=sys.stderr)
        print(f"[ablate] {stem}: training ({cfg})", file=sys.stderr)
        try:
            # Python shows a warning once per text and place per process; entering catch_warnings resets that
            # record, so each run shows its own RewardWarnings (the same cause in a later config is not hidden)
            with warnings.catch_warnings():
                result = run_training(rs, grpo, model, config_path=cfg)
            rows.append((stem, "done", {"global_step": result.global_step, "runtime_s": result.runtime_s,
                                        "final_metrics": result.final_metrics}))
        except Exception as e:  # one failed config must not lose the others
            print(f"[ablate] {stem}: failed: {type(e).__name__}: {e}", file=sys.stderr)
            rows.append((stem, f"failed: {type(e).__name__}: {e}", {}))  # one line in the table: comparison_table
    path = root / COMPARISON_FILE
    from reasonshape.rewards.functions import process_rank

    if process_rank() == 0:  # under `accelerate launch`, one rank writes the table
        path.write_text(comparison_table(rows))
    return path


def _read_result(run_dir: Path) -> dict | None:
    f = run_dir / RESULT_FILE
    if not f.is_file():
        return None
    try:
        rec = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    return rec if rec.get("completed") else None


def comparison_table(rows: list[tuple[str, str, dict]]) -> str:
    """The ablation's markdown table: one row per config.

    Columns: config, status, steps, trained reward (``reward``), each ``rewards/<name>/mean`` seen in any run
    (final means over the last :data:`FINAL_WINDOW` logged steps; ``-`` where a run did not log it), accuracy
    (``reasonshape/accuracy``), mean eta (``reasonshape/eta``), claim accuracy, reward time per completion and
    the run's wall-clock seconds. Every cell is one line with ``|`` escaped
    (:func:`reasonshape.training.report.markdown_cell`), a status (a failed run's error) cut to
    :data:`STATUS_LIMIT` characters, so a multi-line error cannot split its row.
    """
    from reasonshape.training.report import markdown_cell

    reward_keys = sorted({k for _, _, r in rows for k in (r.get("final_metrics") or {})
                          if k.startswith("rewards/") and k.endswith("/mean")})
    cols = ["config", "status", "steps", "reward"] + [k[len("rewards/"):-len("/mean")] for k in reward_keys] + [
        "accuracy", "eta", "claim accuracy", "reward s/completion", "runtime s"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for name, status, rec in rows:
        fm = rec.get("final_metrics") or {}

        def cell(key, fmt="{:.3f}", _fm=fm):
            v = _fm.get(key)
            return "-" if v is None else fmt.format(v)

        vals = [markdown_cell(name), markdown_cell(status, STATUS_LIMIT), str(rec.get("global_step", "-")),
                cell("reward")]
        vals += [cell(k) for k in reward_keys]
        vals += [cell("reasonshape/accuracy"), cell("reasonshape/eta"), cell("reasonshape/claim_accuracy"),
                 cell("reasonshape/reward_time_s", "{:.4f}")]
        rt = rec.get("runtime_s")
        vals.append("-" if rt is None else f"{rt:.1f}")
        lines.append("| " + " | ".join(vals) + " |")
    return "\n".join(lines) + "\n"


def ablate_main(args: argparse.Namespace) -> int:
    """``reasonshape ablate``: run the configs, print and write the comparison table. 1 if a run failed."""
    path = run_ablation(list(args.configs), args.out, overrides=_override_args(args.set), rerun=args.rerun)
    text = path.read_text()
    print(text)
    print(f"written to {path}", file=sys.stderr)
    return 1 if "| failed" in text else 0


# ===================================================================================================== CLI
def add_parser(subparsers: Any) -> None:
    """Register ``train`` and ``ablate`` on the ``reasonshape`` command's subparsers (no heavy imports here).

    ``train`` hands everything after it to TRL's parser (``--config FILE`` and any ``--<field> value`` of
    ReasonshapeArguments, GRPOConfig or ModelConfig), so its options are those dataclasses' fields.
    """
    p = subparsers.add_parser(
        "train", prefix_chars="+", add_help=False,
        help="GRPO training with reasonshape's rewards (TRL): train --config configs/grpo_cpu_smoke.yaml",
        description="GRPO training on Tatham puzzles. Usage: reasonshape train --config FILE [--FIELD VALUE ...]; "
                    "'reasonshape train --help' lists every field.")
    p.add_argument("trl_args", nargs=argparse.REMAINDER,
                   help="--config FILE and --FIELD VALUE overrides (ReasonshapeArguments, GRPOConfig, ModelConfig)")
    p.set_defaults(func=train_main)

    a = subparsers.add_parser(
        "ablate", help="run reward-ablation configs in sequence and write one comparison table",
        description="Run each config with 'reasonshape train' into OUT/<config name>/ (a run that finished with the "
                    "same settings is skipped unless --rerun; one with other settings is trained again) and write "
                    "OUT/comparison.md.")
    a.add_argument("--configs", nargs="+", required=True, metavar="YAML", help="training configs to compare")
    a.add_argument("--out", default="runs/ablations", help="output folder (default: runs/ablations)")
    a.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a field in every run, e.g. --set max_steps=2 (repeatable, each field once); a list "
                        "field takes a YAML list or space-separated values: --set 'levels=[trivial, easy]' or "
                        "--set 'levels=trivial easy'")
    a.add_argument("--rerun", action="store_true", help="re-run configs that already finished")
    a.set_defaults(func=ablate_main)
