"""TRL reward functions for GRPO on Tatham puzzles: accuracy, format, eta, self-preference and one shaped sum.

Every reward here is a thin adapter from TRL's batch format to one shared :class:`RewardScorer`, which scores each
completion ONCE per step (parse -> verify -> extract -> claim graph -> eta, through
:class:`reasonshape.rewards.scorer.Scorer`) and each group of completions once (structural uncertainty, through
:func:`reasonshape.rewards.structural_uncertainty.score_groups`), however many reward functions read the result.

The rewards (each a private callable class with a class-level ``__name__``, the key TRL logs under
``rewards/<__name__>/mean``; classes rather than closures so they pickle, e.g. to an async rollout worker):

==========================  ====================================================================================
``accuracy_reward``         1.0 when the final answer satisfies every rule of the puzzle, else 0.0 (binary, by
                            the puzzle's rules, never by a diff against a stored solution; paper A §A).
``format_reward``           1.0 when the completion has an ``<answer>`` block that reads as a grid of the
                            puzzle's shape, else 0.0 (reasonshape choice).
``eta_reward``              eta clipped to [0, 1] (paper A §C); by default only a correct answer earns it, a
                            wrong one gets 0.0 (reasonshape choice against the gameability paper A reports).
``self_preference_reward``  the consensus preference mass ``N·π̄_i - 1`` of the completion within its group,
                            in [-1, N - 1] (paper B), the policy judging its own group.
``shaped_reward``           ``w_acc·accuracy + w_fmt·format + w_eta·eta + w_sp·(N·π̄_i - 1)/(N - 1)``
                            (:class:`ShapingWeights`; reasonshape choice).
==========================  ====================================================================================

TRL contract (trl 1.16, ``GRPOTrainer._calculate_rewards``): each function is called with the keywords
``prompts``, ``completions``, ``completion_ids``, every dataset column repeated per completion (``puzzle`` and
``game_id`` rebuild the instance), ``trainer_state``, ``log_extra`` and ``log_metric``, and returns one
``float | None`` per completion. ``None`` means "cannot judge this completion" (TRL skips the function for that
sample). No reward returns NaN, and none raises into the trainer after its first call: a failure gives the
documented fallback (usually ``None``) and a :class:`RewardWarning` naming the cause. A malformed *call* (missing
``puzzle`` / ``game_id`` columns, lengths that differ, a batch that does not hold whole groups) raises
:class:`~reasonshape.errors.ConfigError` on the function's first call (in each process: an unpickled reward
counts its calls afresh), where it is a set-up error.

The module-level instances (``accuracy_reward``, ...) share one default scorer, for ``trl grpo --reward_funcs
reasonshape.rewards.functions.accuracy_reward``; ``self_preference_reward`` then reads its judge endpoint from the
environment (:meth:`JudgeSettings.from_env`) and G from ``REASONSHAPE_NUM_GENERATIONS``
(:func:`num_generations_from_env`; without G the judged reward raises on its first call).
``reasonshape train`` builds its own set with :func:`get_reward_functions`, passing ``num_generations``.

References
----------
Paper A: Berdoz et al., "Reasoning Structure of Large Language Models", ICML 2026, arXiv 2606.03883 (§A accuracy,
§C eta and its gameability). Paper B: Chaudhury et al., structural uncertainty, arXiv 2606.17312 (§3.1-3.2).
METHOD.md §C and §E.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import threading
import time
import warnings
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from reasonshape.envs.dataset import PROMPT_FORMATS
from reasonshape.errors import ConfigError
from reasonshape.extraction.segment import trace_text
from reasonshape.rewards.scorer import CompletionScore, Scorer
from reasonshape.rewards.structural_uncertainty import UNPARSED_POLICIES

__all__ = [
    "REWARD_NAMES",
    "RewardWarning",
    "ShapingWeights",
    "check_weight",
    "JudgeSettings",
    "process_rank",
    "RewardScorer",
    "find_groups",
    "NUM_GENERATIONS_ENV",
    "num_generations_from_env",
    "format_ok",
    "get_accuracy_reward",
    "get_format_reward",
    "get_eta_reward",
    "get_self_preference_reward",
    "get_shaped_reward",
    "get_reward_functions",
    "accuracy_reward",
    "format_reward",
    "eta_reward",
    "self_preference_reward",
    "shaped_reward",
]

#: Short names of the rewards, in the order :func:`get_reward_functions` accepts them.
REWARD_NAMES: tuple[str, ...] = ("accuracy", "format", "eta", "self_preference", "shaped")

RewardName = Literal["accuracy", "format", "eta", "self_preference", "shaped"]
JudgeKind = Literal["policy", "transformers", "openai", "vllm"]

#: Prefix of every metric the scorer logs through TRL's ``log_metric``.
METRIC_PREFIX = "reasonshape/"


class RewardWarning(UserWarning):
    """A reward could not judge some completions (the message names the cause); they got the documented fallback."""


def _warn(message: str) -> None:
    warnings.warn(message, RewardWarning, stacklevel=3)


# ===================================================================================================== settings
def check_weight(value: Any, name: str, label: str) -> None:
    """Raise ``ConfigError "<label> must be ..., got <value>"`` unless ``value`` is a valid weight of the reward
    ``name`` (``accuracy`` / ``format`` / ``eta`` / ``self_preference``): a finite number >= 0, and > 0 for accuracy
    (the task). ``label`` is how the caller names it: ``"eta weight"`` (:class:`ShapingWeights`), ``"eta_weight"``
    (a training config's field)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{label} must be a finite number >= 0, got {value!r}")
    if name == "accuracy" and value <= 0:
        raise ConfigError(f"{label} must be > 0 (accuracy is the task), got {value!r}")


@dataclass(frozen=True)
class ShapingWeights:
    """Weights of the shaped reward, with the anti-gaming rule checked when they are built.

    ``shaped = accuracy·acc + format·fmt + eta·eta_term + self_preference·sp_term`` where ``acc``, ``fmt`` are in
    {0, 1}, ``eta_term`` is eta clipped to [0, 1] (0 for a wrong answer when ``eta_only_correct``) and
    ``sp_term = (N·π̄_i - 1) / (N - 1)`` is the preference mass scaled into [-1/(N-1), 1].

    Parameters
    ----------
    accuracy, format, eta, self_preference : float
        Non-negative finite weights; ``accuracy`` > 0. Defaults 1.0 / 0.1 / 0.2 / 0.0: accuracy dominates, eta is
        a small bonus for correct answers only, format is small and self-preference is opt-in (the policy judges
        itself, so it can be gamed too).
    eta_only_correct : bool
        Only a correct answer earns the eta term (default True).
    allow_gaming : bool
        Accept weights that break the anti-gaming rule (for ablations that study gaming on purpose).

    Raises
    ------
    ConfigError
        A weight is negative or not finite, ``accuracy <= 0``, or (unless ``allow_gaming``) the anti-gaming rule
        fails: ``accuracy - self_preference > format + self_preference + (0 if eta_only_correct else eta)``, i.e.
        the worst a correct completion can score must beat the best a wrong one can (:meth:`gaming_margin` > 0).

    Notes
    -----
    Source: reasonshape choice. Binary accuracy dominant and shaping terms small and opt-in follows the TRL
    maintainers' experience that binary rewards train more cleanly (ECOSYSTEM.md) and paper A's warning that eta
    alone rewards "skip verification, jump to an answer".

    Examples
    --------
    >>> ShapingWeights().gaming_margin()
    0.9
    """

    accuracy: float = 1.0
    format: float = 0.1
    eta: float = 0.2
    self_preference: float = 0.0
    eta_only_correct: bool = True
    allow_gaming: bool = False

    def __post_init__(self):
        for name in ("accuracy", "format", "eta", "self_preference"):
            check_weight(getattr(self, name), name, f"{name} weight")
        if not self.allow_gaming and self.gaming_margin() <= 0:
            raise self.gaming_error()

    def gaming_error(self, switch: str = "pass allow_gaming=True to ShapingWeights") -> ConfigError:
        """The error for weights that break the anti-gaming rule; ``switch`` says how to accept them anyway in the
        caller's terms (``reasonshape train`` names its ``allow_gaming_weights`` field)."""
        return ConfigError(
            "shaping weights must keep every correct answer above every wrong one: need accuracy - "
            "self_preference > format + self_preference" + ("" if self.eta_only_correct else " + eta")
            + f", got accuracy={self.accuracy}, format={self.format}, eta={self.eta}, self_preference="
            f"{self.self_preference}, eta_only_correct={self.eta_only_correct} "
            f"(margin {self.gaming_margin():.3g}); lower the shaping weights or {switch}"
        )

    def gaming_margin(self) -> float:
        """Worst correct score minus best wrong score; > 0 means no wrong completion can outscore a correct one."""
        worst_correct = self.accuracy - self.self_preference
        best_wrong = self.format + self.self_preference + (0.0 if self.eta_only_correct else self.eta)
        return round(worst_correct - best_wrong, 12)

    @property
    def needs_eta(self) -> bool:
        return self.eta > 0

    @property
    def needs_judge(self) -> bool:
        return self.self_preference > 0


@dataclass(frozen=True)
class JudgeSettings:
    """How the self-preference judge is reached and how structural uncertainty is scored (picklable settings).

    Parameters
    ----------
    kind : {"policy", "transformers", "openai", "vllm"}
        ``"policy"``: the live policy being trained, in process (bound with :meth:`RewardScorer.bind_policy`; the
        CPU / single-GPU choice). ``"transformers"``: a checkpoint loaded with
        :class:`~reasonshape.training.backends.TransformersBackend` (``model`` = its path). ``"openai"``: an
        OpenAI-compatible endpoint (``base_url``, ``model``), e.g. the ``vllm serve`` of TRL's server mode, whose
        weights are the current policy's. ``"vllm"``: a colocated ``vllm.LLM`` (bound with
        :meth:`RewardScorer.bind_judge_backend`).
    model : str, optional
        Checkpoint path (``transformers``) or served model name (``openai``).
    base_url : str, optional
        ``http(s)://host:port/v1`` for ``openai``.
    api_key_env : str
        Environment variable holding the endpoint's API key (never logged).
    trials : int
        M, spanning-tree trials per group (M·(N-1) judge prompts per group), >= 1.
    max_tokens, temperature, max_candidate_tokens, both_orders, logprobs, unparsed
        Passed to :class:`~reasonshape.rewards.structural_uncertainty.PairwiseJudge` (``unparsed``: a reply without
        a readable verdict is a tie, or dropped from the fit).
    pair_model, aggregation, damping, C
        Passed to :func:`~reasonshape.rewards.structural_uncertainty.score_groups` (paper B §3.2 defaults:
        Bradley–Terry, C = 1, PageRank with damping 0.85).
    seed : int
        Base seed of the trees and the judge's sampling, >= 0; each (step, process rank) draws its own seed from it
        (:meth:`step_seed`).
    chat_template_kwargs : dict, optional
        Keywords for the judge's chat template, e.g. ``{"enable_thinking": False}`` for a model that thinks by
        default (Qwen3), whose verdict would otherwise come after a ``<think>`` block likely cut by ``max_tokens``
        (an unparsed reply counts as a tie). Given to every judge backend built or bound from these settings:
        ``apply_chat_template`` (``policy``, ``transformers``), ``LLM.chat`` (``vllm``, :meth:`RewardScorer.bind_vllm`)
        and the request's ``extra_body["chat_template_kwargs"]`` (``openai``; vLLM's server reads it). Names map to
        JSON values; stored as a plain copy, left out of the hash. Source: reasonshape choice.
    prompt_format : {"conversational", "standard"}
        How the judge's comparisons are sent (:class:`~reasonshape.rewards.structural_uncertainty.PairwiseJudge`):
        chat messages, or one string for a judge without a chat template. ``reasonshape train`` sets it to the
        run's ``prompt_format`` when the policy judges itself (``policy``, ``vllm``, the vLLM server), else
        ``"conversational"``.

    Raises
    ------
    ConfigError
        Unknown ``kind``; ``openai`` without ``base_url`` and ``model``; ``transformers`` without ``model``;
        ``trials < 1``; ``seed`` not an integer >= 0; ``chat_template_kwargs`` not a mapping of names to JSON values;
        an unknown ``prompt_format``.
    """

    kind: JudgeKind = "policy"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    trials: int = 4
    max_tokens: int = 256
    temperature: float = 1.0
    max_candidate_tokens: int = 1024
    both_orders: bool = False
    logprobs: int | None = 5
    unparsed: Literal["tie", "drop"] = "tie"
    pair_model: Literal["bradley_terry", "trueskill"] = "bradley_terry"
    aggregation: Literal["pagerank", "rank_centrality"] = "pagerank"
    damping: float = 0.85
    C: float = 1.0
    seed: int = 0
    chat_template_kwargs: dict[str, Any] | None = field(default=None, hash=False)
    prompt_format: Literal["conversational", "standard"] = "conversational"

    def __post_init__(self):
        from reasonshape.training.backends import chat_template_kwargs_from

        object.__setattr__(self, "chat_template_kwargs",
                           chat_template_kwargs_from(self.chat_template_kwargs, "judge chat_template_kwargs"))
        if self.kind not in ("policy", "transformers", "openai", "vllm"):
            raise ConfigError(f"judge kind must be one of policy, transformers, openai, vllm, got {self.kind!r}")
        if self.unparsed not in UNPARSED_POLICIES:
            raise ConfigError(f"judge unparsed must be 'tie' or 'drop', got {self.unparsed!r}")
        if self.prompt_format not in PROMPT_FORMATS:
            raise ConfigError("judge prompt_format must be 'conversational' or 'standard', got "
                              f"{self.prompt_format!r}")
        if self.kind == "openai" and not (self.base_url and self.model):
            raise ConfigError(f"judge kind 'openai' needs base_url and model, got base_url={self.base_url!r}, "
                              f"model={self.model!r}")
        if self.kind == "transformers" and not self.model:
            raise ConfigError("judge kind 'transformers' needs model (a checkpoint path), got None")
        if isinstance(self.trials, bool) or not isinstance(self.trials, int) or self.trials < 1:
            raise ConfigError(f"judge trials must be an integer >= 1, got {self.trials!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"judge seed must be an integer >= 0, got {self.seed!r}")

    def step_seed(self, step: int, rank: int) -> int:
        """The seed of the judge's trees and sampling at training step ``step`` in the process of rank ``rank``.

        Drawn from ``numpy.random.SeedSequence(seed, spawn_key=(step, rank))``, numpy's documented way to derive
        independent child streams from one seed: deterministic, and distinct (up to a 2**-62 chance of a collision)
        for every (seed, step, rank), where ``seed + step`` was the same for step ``s + 1`` of one run and step ``s``
        of a run seeded ``seed + 1``, and the same in every process at a step. The result is in [0, 2**62): the
        backends add the prompt index (:func:`~reasonshape.training.backends.request_seed`), and an OpenAI-compatible
        server (vLLM) takes a signed 64-bit seed. Source: reasonshape choice.

        Parameters
        ----------
        step : int
            Training step (``trainer_state.global_step``), >= 0.
        rank : int
            The process's global rank (:func:`process_rank`), >= 0.

        Raises
        ------
        ConfigError
            ``step`` or ``rank`` not an integer >= 0.

        >>> JudgeSettings(seed=0).step_seed(1, 0) == JudgeSettings(seed=0).step_seed(1, 0)
        True
        >>> JudgeSettings(seed=0).step_seed(1, 0) == JudgeSettings(seed=1).step_seed(0, 0)
        False
        """
        for v, name in ((step, "step"), (rank, "rank")):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"judge seed {name} must be an integer >= 0, got {v!r}")
        state = np.random.SeedSequence(self.seed, spawn_key=(step, rank)).generate_state(1, dtype=np.uint64)
        return int(state[0]) >> 2

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> JudgeSettings | None:
        """Settings for an OpenAI-compatible judge from ``REASONSHAPE_JUDGE_BASE_URL`` and ``REASONSHAPE_JUDGE_MODEL``
        (plus optional ``REASONSHAPE_JUDGE_TRIALS``, ``REASONSHAPE_JUDGE_CHAT_TEMPLATE_KWARGS``, a JSON object such
        as ``{"enable_thinking": false}``, ``REASONSHAPE_JUDGE_UNPARSED`` (``tie`` / ``drop``) and
        ``REASONSHAPE_JUDGE_PROMPT_FORMAT`` (``conversational`` / ``standard``: a base model served as its own
        judge)); ``None`` when the URL is unset. Used by the module-level ``self_preference_reward`` (``trl grpo``
        passes no arguments to a reward).

        Raises
        ------
        ConfigError
            ``REASONSHAPE_JUDGE_TRIALS`` is not an integer >= 1, ``REASONSHAPE_JUDGE_CHAT_TEMPLATE_KWARGS`` is not
            a JSON object, or ``REASONSHAPE_JUDGE_UNPARSED`` / ``REASONSHAPE_JUDGE_PROMPT_FORMAT`` is not one of its
            values."""
        from reasonshape.training.backends import chat_template_kwargs_from

        env = os.environ if environ is None else environ
        url = env.get("REASONSHAPE_JUDGE_BASE_URL")
        if not url:
            return None
        trials = env.get("REASONSHAPE_JUDGE_TRIALS", "4")
        try:
            m = int(trials)
        except ValueError as e:
            raise ConfigError(f"REASONSHAPE_JUDGE_TRIALS must be an integer >= 1, got {trials!r}") from e
        kwargs = chat_template_kwargs_from(env.get("REASONSHAPE_JUDGE_CHAT_TEMPLATE_KWARGS"),
                                           "REASONSHAPE_JUDGE_CHAT_TEMPLATE_KWARGS")
        return cls(kind="openai", base_url=url, model=env.get("REASONSHAPE_JUDGE_MODEL"), trials=m,
                   chat_template_kwargs=kwargs or None, unparsed=env.get("REASONSHAPE_JUDGE_UNPARSED", "tie"),
                   prompt_format=env.get("REASONSHAPE_JUDGE_PROMPT_FORMAT", "conversational"))

    def build_backend(self):
        """The generation backend for ``transformers`` / ``openai`` judges (``policy`` / ``vllm`` are bound live).

        Raises
        ------
        ConfigError
            ``kind`` is ``policy`` or ``vllm`` (nothing to build: bind the live model).
        """
        from reasonshape.training.backends import OpenAICompatibleBackend, TransformersBackend

        kwargs = self.chat_template_kwargs
        if self.kind == "openai":
            return OpenAICompatibleBackend(base_url=self.base_url, model=self.model, api_key_env=self.api_key_env,
                                           extra_body={"chat_template_kwargs": kwargs} if kwargs else None)
        if self.kind == "transformers":
            return TransformersBackend(self.model, chat_template_kwargs=kwargs)
        raise ConfigError(f"judge kind {self.kind!r} uses the live policy: call RewardScorer.bind_policy / "
                          "bind_judge_backend before training")


def process_rank(environ: Mapping[str, str] | None = None) -> int:
    """This process's global rank: ``torch.distributed.get_rank()`` once a process group is initialised, else the
    ``RANK`` environment variable that ``torchrun`` and ``accelerate launch`` set, else 0 (a single process).

    torch is not imported here: a process that has not imported it has no process group.

    Raises
    ------
    ConfigError
        ``RANK`` is set but not an integer >= 0.
    """
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    env = os.environ if environ is None else environ
    raw = env.get("RANK", "0")
    try:
        rank = int(raw)
    except ValueError:
        rank = -1
    if rank < 0:
        raise ConfigError(f"RANK must be an integer >= 0, got {raw!r}")
    return rank


# ===================================================================================================== groups
#: Environment variable giving G (``num_generations``) to the module-level rewards (``trl grpo`` passes no G).
NUM_GENERATIONS_ENV = "REASONSHAPE_NUM_GENERATIONS"

#: How to give G, for the errors that need it.
_PASS_G = ("pass get_reward_functions(..., num_generations=G) or RewardScorer(num_generations=G) (reasonshape train "
           f"does), or set {NUM_GENERATIONS_ENV}=G for the module-level rewards (trl grpo)")

#: The completions TRL gives each process per generation, in the fields a user sets (``GRPOConfig.__post_init__``
#: sets ``steps_per_generation`` to ``gradient_accumulation_steps`` when neither it nor ``generation_batch_size`` is
#: given). The batch-size errors (here and in :mod:`reasonshape.training.train`) state their rules with it.
PER_PROCESS_BATCH = "per_device_train_batch_size * steps_per_generation (default gradient_accumulation_steps)"

#: The batch-size rule of a judged reward (every reward call holds whole groups), as the errors state it.
BATCH_RULE = (f"TRL gives each process {PER_PROCESS_BATCH} consecutive completions, so that product must be a "
              "multiple of num_generations")


def num_generations_from_env(environ: Mapping[str, str] | None = None) -> int | None:
    """G from ``REASONSHAPE_NUM_GENERATIONS`` (for the module-level rewards, which ``trl grpo`` builds without
    arguments); ``None`` when unset.

    Raises
    ------
    ConfigError
        The variable is set but is not an integer >= 2.
    """
    env = os.environ if environ is None else environ
    raw = env.get(NUM_GENERATIONS_ENV)
    if raw is None or not raw.strip():
        return None
    try:
        g = int(raw)
    except ValueError:
        g = 0
    if g < 2:
        raise ConfigError(f"{NUM_GENERATIONS_ENV} must be an integer >= 2 (GRPO's num_generations), got {raw!r}")
    return g


def _prompt_key(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    try:
        return json.dumps(prompt, sort_keys=True, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(prompt)


def find_groups(prompts: Sequence[Any], num_generations: int | None = None) -> list[tuple[int, int]]:
    """Split a GRPO batch into its groups: runs of consecutive equal prompts.

    Parameters
    ----------
    prompts : sequence, length B
        The batch's prompts as TRL passes them (strings or message lists); GRPO repeats each prompt
        ``num_generations`` times in a row.
    num_generations : int, optional
        G, the group size. When given, a run of ``k·G`` equal prompts (the same prompt drawn twice in a row) is
        split into ``k`` groups. When ``None``, every run must have the same length (>= 2), which is taken as G: a
        batch whose runs differ (a group split across processes, or a prompt drawn twice in a row) raises, as G
        cannot be inferred. A batch holding part of ONE group per prompt (e.g. runs of 2 with G = 4) looks whole,
        so the check is complete only when G is given.

    Returns
    -------
    list of (start, stop)
        Half-open index ranges covering ``0..B`` in order, each of length G.

    Raises
    ------
    ConfigError
        A run length is not a multiple of G, or G < 2: the batch does not hold whole groups; or G is ``None`` and
        the runs have different lengths. The message states the batch-size rule.

    Examples
    --------
    >>> find_groups(["a", "a", "b", "b", "b", "b"], num_generations=2)
    [(0, 2), (2, 4), (4, 6)]
    """
    keys = [_prompt_key(p) for p in prompts]
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(keys) + 1):
        if i == len(keys) or keys[i] != keys[start]:
            runs.append((start, i))
            start = i
    if not runs:
        return []
    lengths = [b - a for a, b in runs]
    if num_generations is None and len(set(lengths)) > 1:
        raise ConfigError(
            f"self-preference cannot infer num_generations (G) from this batch: its runs of equal prompts have "
            f"lengths {lengths}, so a group may be split (or a prompt repeated). To give G, {_PASS_G}. "
            f"Rule: {BATCH_RULE}."
        )
    g = num_generations if num_generations is not None else lengths[0]
    if g < 2 or any(n % g for n in lengths):
        raise ConfigError(
            "self-preference needs whole groups in every reward call: each process must receive all "
            f"num_generations completions of a prompt, got runs of equal prompts of lengths {lengths}"
            + (f" with num_generations={num_generations}" if num_generations is not None else "")
            + f". Rule: {BATCH_RULE}."
        )
    return [(a + k * g, a + (k + 1) * g) for a, b in runs for k in range((b - a) // g)]


def _judge_prompt_text(prompt: Any) -> str:
    """The puzzle text shown to the judge: the last user message of a conversational prompt, or the string."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        users = [m for m in prompt if isinstance(m, Mapping) and m.get("role") == "user"]
        msgs = users or [m for m in prompt if isinstance(m, Mapping)]
        if msgs:
            content = msgs[-1].get("content", "")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
            return str(content)
    return str(prompt)


def format_ok(score: CompletionScore) -> bool:
    """The format criterion: an ``<answer>`` block that reads as a grid of the puzzle's shape (not the fallback)."""
    return bool(score.has_answer_block and score.parsed and score.answer_source == "answer_block")


# ===================================================================================================== the scorer
@dataclass
class _Batch:
    """One reward call's batch, scored once and shared by every reward function of the step."""

    key: Any
    n: int
    prompts: list
    completions: list
    scores: list[CompletionScore]
    step: int | None
    score_s: float
    groups: list[tuple[int, int]] | None = None
    group_error: ConfigError | None = None
    su: list | None = None
    su_error: str | None = None
    su_done: bool = False
    preference: list[float | None] = field(default_factory=list)


class _PolicyJudgeBackend:
    """The live policy as a judge: a :class:`TransformersBackend` on the training model that puts the model in eval
    mode only while it generates, then restores the train/eval mode it found (the trainer's model keeps
    training)."""

    kind = "policy"

    def __init__(self, model: Any, tokenizer: Any, chat_template_kwargs: Mapping[str, Any] | None = None):
        from reasonshape.training.backends import TransformersBackend

        was_training = bool(getattr(model, "training", False))
        self._inner = TransformersBackend(model, tokenizer=tokenizer, chat_template_kwargs=chat_template_kwargs)
        model.train(was_training)
        self.model, self.tokenizer = model, tokenizer

    def generate(self, prompts, **kwargs):
        was_training = bool(self.model.training)
        try:
            return self._inner.generate(prompts, **kwargs)
        finally:
            self.model.train(was_training)

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)


class RewardScorer:
    """The one scorer behind a trainer's reward functions: each completion and each group is scored once per step.

    Parameters
    ----------
    scorer : Scorer, optional
        The completion scorer (parse, verify, extract, eta); default ``Scorer(extract=extract,
        llm_backend=llm_backend)``.
    extract : bool
        Build claim graphs and eta (needed by ``eta`` and ``shaped`` with an eta weight).
    llm_backend : GenerationBackend, optional
        LLM-assisted claim extraction (default deterministic).
    judge : JudgeSettings, optional
        The self-preference judge; ``None``: self-preference is unavailable (its reward returns ``None`` with a
        warning).
    num_generations : int, optional
        G, used to split runs of equal prompts into groups and check they are whole (:func:`find_groups`);
        required with a ``judge`` (self-preference raises :class:`ConfigError` on its first call without it; the
        module-level rewards read it from ``REASONSHAPE_NUM_GENERATIONS``).

    Notes
    -----
    The batch of the latest call is memoised under (global step, every completion's puzzle, game ID and text
    hash), so the second and later reward functions of a step reuse it; per-completion scores are also kept in
    the :class:`Scorer`'s LRU. Metrics are logged once per batch through ``log_metric`` (names prefixed
    ``reasonshape/``): ``accuracy``, ``format``, ``eta`` (mean clipped eta over completions where it is defined,
    right or wrong: the measurement, not the correctness-gated ``eta_reward``), ``eta_defined``,
    ``claim_accuracy``, ``extraction_fallback`` (share of completions whose extraction fell back or failed),
    ``reward_time_s`` (scoring seconds per completion), ``error`` (share that could not be scored) and, once the
    group scores exist, ``su/total``, ``su/ambiguity``, ``su/instability`` (U, A, I in nats, means over groups),
    their ``_norm`` versions, ``su/dispersion``, ``su/unparsed_rate`` and ``su_time_s``. Per-completion columns go
    to ``log_extra``: ``eta`` (the raw measured eta, not gated by correctness), ``correct``, ``claim_labels`` and,
    with the judge, ``preference_mass`` (``None`` for every completion of a batch the judge could not score, so no
    column is ever left stale).
    Thread-safe (one lock around batch scoring). Picklable: caches, the lock and live bound backends are dropped.
    Source: reasonshape choice.
    """

    def __init__(self, scorer: Scorer | None = None, *, extract: bool = True, llm_backend: Any = None,
                 judge: JudgeSettings | None = None, num_generations: int | None = None):
        if judge is not None and not isinstance(judge, JudgeSettings):
            raise ConfigError(f"judge must be a JudgeSettings or None, got {type(judge).__name__}")
        if num_generations is not None and (isinstance(num_generations, bool) or not isinstance(num_generations, int)
                                            or num_generations < 2):
            raise ConfigError(f"num_generations must be an integer >= 2 or None, got {num_generations!r}")
        self.scorer = scorer if scorer is not None else Scorer(extract=extract, llm_backend=llm_backend)
        self.judge_settings = judge
        self.num_generations = num_generations
        if judge is not None and num_generations == 2 and judge.aggregation == "pagerank":
            warnings.warn("self-preference with num_generations=2 and aggregation='pagerank' is 0 for every "
                          "completion: on two candidates the row-normalised PageRank is uniform whatever the judge "
                          "says (docs/backends_su.md); use aggregation='rank_centrality' (su_aggregation in configs) "
                          "or num_generations >= 3", RewardWarning, stacklevel=2)
        self._lock = threading.RLock()
        self._batch: _Batch | None = None
        self._judge = None  # PairwiseJudge, built lazily or bound live

    # ------------------------------------------------------------------------------------------ pickling
    def __getstate__(self):
        return {"scorer": self.scorer, "judge_settings": self.judge_settings, "num_generations": self.num_generations}

    def __setstate__(self, state):
        self.__init__(state["scorer"], judge=state["judge_settings"], num_generations=state["num_generations"])

    # ------------------------------------------------------------------------------------------ judge
    def bind_judge_backend(self, backend: Any) -> None:
        """Use ``backend`` (any object with the backends' ``generate``) as the judge's backend from now on.

        Raises
        ------
        ConfigError
            No :class:`JudgeSettings` was given (they hold the judge's sampling settings).
        """
        from reasonshape.rewards.structural_uncertainty import PairwiseJudge

        if self.judge_settings is None:
            raise ConfigError("bind_judge_backend needs judge settings: build the RewardScorer with judge=...")
        s = self.judge_settings
        self._judge = PairwiseJudge(backend, max_candidate_tokens=s.max_candidate_tokens, both_orders=s.both_orders,
                                    temperature=s.temperature, max_tokens=s.max_tokens, logprobs=s.logprobs,
                                    unparsed=s.unparsed, prompt_format=s.prompt_format)

    def bind_policy(self, model: Any, tokenizer: Any) -> None:
        """Judge with the live policy ``model`` (a ``transformers`` model, unwrapped) and its ``tokenizer``.

        Call it once the trainer is built, on the model it trains: ``scorer.bind_policy(trainer.accelerator.
        unwrap_model(trainer.model), trainer.processing_class)`` (``reasonshape train`` does). A ``policy`` judge
        that was never bound raises :class:`ConfigError` on a self-preference reward's first call. The judge's
        prompts are rendered with the settings' ``chat_template_kwargs``.
        """
        s = self.judge_settings
        self.bind_judge_backend(_PolicyJudgeBackend(model, tokenizer,
                                                    chat_template_kwargs=s.chat_template_kwargs if s else None))

    def bind_vllm(self, llm: Any) -> None:
        """Judge with an existing ``vllm.LLM`` engine, e.g. TRL's colocated one: ``scorer.bind_vllm(trainer.
        vllm_generation.llm)`` (``reasonshape train`` does, for a ``vllm`` judge), through a
        :class:`~reasonshape.training.backends.VLLMBackend` that passes the settings' ``chat_template_kwargs`` to
        ``LLM.chat``."""
        from reasonshape.training.backends import VLLMBackend

        s = self.judge_settings
        self.bind_judge_backend(VLLMBackend(llm=llm, chat_template_kwargs=s.chat_template_kwargs if s else None))

    def _check_bound(self) -> None:
        """A live judge (``policy`` / ``vllm``) must have been bound before the first reward call: forgetting to is
        a set-up error, raised as such (not a per-step judge failure that would leave a whole run without
        self-preference)."""
        s = self.judge_settings
        if self._judge is not None or s is None or s.kind not in ("policy", "vllm"):
            return
        how = ("scorer.bind_policy(trainer.accelerator.unwrap_model(trainer.model), trainer.processing_class)"
               if s.kind == "policy" else
               "scorer.bind_vllm(trainer.vllm_generation.llm)")
        raise ConfigError(f"the self-preference judge (kind {s.kind!r}) is the live policy and was never bound: call "
                          f"{how} once the trainer is built, before training (reasonshape train does this; a "
                          "scorer unpickled in another process must be bound again)")

    def _get_judge(self):
        if self._judge is None:
            if self.judge_settings is None:
                raise ConfigError("no self-preference judge configured (pass judge=JudgeSettings(...), or set "
                                  "REASONSHAPE_JUDGE_BASE_URL for the module-level reward)")
            self.bind_judge_backend(self.judge_settings.build_backend())
        return self._judge

    # ------------------------------------------------------------------------------------------ batches
    def batch(self, prompts: Any, completions: Any, puzzle: Any, game_id: Any, completion_ids: Any = None,
              trainer_state: Any = None, log_metric: Callable | None = None,
              log_extra: Callable | None = None) -> _Batch:
        """Score a reward call's batch (memoised: the same batch in the same step is scored once).

        Raises
        ------
        ConfigError
            ``completions`` is not a list, ``puzzle`` / ``game_id`` columns are missing, or lengths differ.
        """
        comps = _as_list(completions, "completions")
        n = len(comps)
        puzzles = _column(puzzle, "puzzle", n)
        game_ids = _column(game_id, "game_id", n)
        plist = [None] * n if prompts is None else _as_list(prompts, "prompts")
        if len(plist) != n:
            raise ConfigError(f"prompts must have one entry per completion ({n}), got {len(plist)}")
        ids = None if completion_ids is None else _as_list(completion_ids, "completion_ids")
        step = getattr(trainer_state, "global_step", None)
        texts = [trace_text(c) for c in comps]
        key = (step, tuple((str(p), str(g), hashlib.blake2b(t.encode("utf-8", "replace"), digest_size=16).digest())
                           for p, g, t in zip(puzzles, game_ids, texts, strict=True)))
        with self._lock:
            if self._batch is not None and self._batch.key == key:
                return self._batch
            t0 = time.perf_counter()
            scores = []
            for i, c in enumerate(comps):
                tokens = _length(ids[i]) if ids is not None and i < len(ids) else None
                scores.append(self._score_one(puzzles[i], game_ids[i], c, tokens))
            b = _Batch(key=key, n=n, prompts=plist, completions=comps, scores=scores, step=step,
                       score_s=time.perf_counter() - t0)
            self._batch = b
            self._log_batch(b, log_metric, log_extra)
            _warn_batch(b)
            return b

    def _score_one(self, puzzle: Any, game_id: Any, completion: Any, tokens: int | None) -> CompletionScore:
        try:
            return self.scorer.score(str(puzzle), str(game_id), completion, tokens=tokens)
        except Exception as e:  # the scorer should not raise; a reward must not either
            _warn(f"scoring failed for {puzzle}:{str(game_id)[:60]} ({type(e).__name__}: {e}); "
                  "the completion gets the fallback rewards")
            return CompletionScore(puzzle=str(puzzle), game_id=str(game_id), error=f"{type(e).__name__}: {e}")

    def group_scores(self, b: _Batch, log_metric: Callable | None = None,
                     log_extra: Callable | None = None) -> list[float | None]:
        """Per-completion consensus preference mass ``N·π̄_i - 1`` for the batch (computed once per batch).

        Returns ``None`` entries when the judge is unavailable or failed, and for the completions of a group in which
        no judge reply had a readable verdict (each with a :class:`RewardWarning`; a group with some readable
        verdicts counts the others as the judge settings say, a tie by default).

        Raises
        ------
        ConfigError
            The batch does not hold whole groups (:func:`find_groups`), G (``num_generations``) is unknown while a
            judge is set, or a ``policy`` / ``vllm`` judge was never bound (:meth:`bind_policy`,
            :meth:`bind_judge_backend`).
        """
        with self._lock:
            if b.groups is None and b.group_error is None and self.judge_settings is None:
                b.groups = []  # no judge: nothing to group (the reward warns that it has none, below)
            if b.groups is None and b.group_error is None:
                try:
                    if self.num_generations is None:
                        raise ConfigError(
                            f"self-preference needs num_generations (G): {_PASS_G}. Inferring G from the batch "
                            "cannot tell a group split across processes from a prompt drawn twice in a row "
                            "(frequent on small datasets)")
                    b.groups = find_groups(b.prompts, self.num_generations)
                    self._check_bound()
                except ConfigError as e:  # set-up errors: raised on a reward's first call, warned after
                    b.group_error = e
            if b.group_error is not None:
                if not b.su_done:  # once per batch: the completions table gets no stale preference_mass column
                    b.su_done, b.preference = True, [None] * b.n
                    if log_extra is not None and b.n:
                        _emit_extra(log_extra, "preference_mass", list(b.preference))
                raise b.group_error
            if b.su_done:
                return b.preference
            b.su_done = True
            b.preference = [None] * b.n
            t0 = time.perf_counter()
            try:
                judge = self._get_judge()
                from reasonshape.rewards.structural_uncertainty import Group, score_groups

                s = self.judge_settings
                canon = {id(b.completions[i]): (b.scores[i].canonical_answer if b.scores[i].parsed else None)
                         for i in range(b.n)}
                groups = [Group(_judge_prompt_text(b.prompts[a]), b.completions[a:z]) for a, z in b.groups]
                seed = s.step_seed(b.step or 0, process_rank())
                b.su = score_groups(groups, judge, m=s.trials, seed=seed, model=s.pair_model, C=s.C,
                                    aggregation=s.aggregation, damping=s.damping,
                                    canonicalize=lambda c: canon.get(id(c)))
                mute = 0
                for (a, _), gs in zip(b.groups, b.su, strict=True):
                    if gs.no_verdict:
                        mute += 1
                        continue
                    for k, v in enumerate(gs.preference_mass.tolist()):
                        b.preference[a + k] = float(v) if math.isfinite(v) else None
                if mute:
                    _warn(f"self-preference: the judge gave no readable verdict in {mute} of {len(b.su)} group(s) "
                          "(reasonshape/su/unparsed_rate); self_preference_reward returns None for their completions "
                          "and shaped_reward drops its self-preference term for them")
            except Exception as e:  # judge down, malformed reply...: no self-preference this step
                b.su, b.su_error = None, f"{type(e).__name__}: {e}"
                _warn(f"self-preference unavailable this step ({b.su_error}); self_preference_reward returns None "
                      "and shaped_reward drops its self-preference term")
            self._log_su(b, time.perf_counter() - t0, log_metric, log_extra)
            return b.preference

    # ------------------------------------------------------------------------------------------ logging
    def _log_batch(self, b: _Batch, log_metric: Callable | None, log_extra: Callable | None) -> None:
        ok = [s for s in b.scores if s.error is None]
        metrics: dict[str, float] = {}
        if b.n:
            metrics["error"] = (b.n - len(ok)) / b.n
            metrics["reward_time_s"] = b.score_s / b.n
        if ok:
            metrics["accuracy"] = sum(s.correct for s in ok) / len(ok)
            metrics["format"] = sum(format_ok(s) for s in ok) / len(ok)
            metrics["answer_in_reasoning"] = sum(s.answer_in_reasoning for s in ok) / len(ok)
            etas = [s.eta_clipped for s in ok if s.eta_clipped is not None]
            metrics["eta_defined"] = len(etas) / len(ok)
            if etas:
                metrics["eta"] = sum(etas) / len(etas)
            cas = [s.claim_accuracy for s in ok if s.claim_accuracy is not None]
            if cas:
                metrics["claim_accuracy"] = sum(cas) / len(cas)
            if self.scorer.extract:
                metrics["extraction_fallback"] = sum(s.extraction_fallback is not None for s in ok) / len(ok)
        _emit_metrics(metrics, log_metric)
        if log_extra is not None and b.n:
            _emit_extra(log_extra, "eta", [_finite(s.eta) for s in b.scores])
            _emit_extra(log_extra, "correct", [None if s.error else bool(s.correct) for s in b.scores])
            _emit_extra(log_extra, "claim_labels", [_labels_text(s) for s in b.scores])

    def _log_su(self, b: _Batch, seconds: float, log_metric: Callable | None, log_extra: Callable | None) -> None:
        metrics: dict[str, float] = {"su_time_s": seconds}
        if b.su:
            # a group without a readable verdict counts in the unparsed rate only: its U / A / I come from ties alone
            per_group = [(gs.metrics(), gs.no_verdict) for gs in b.su]
            keys = sorted({k for m, _ in per_group for k in m})
            for k in keys:
                vals = [m[k] for m, mute in per_group if k in m and (k == "su/unparsed_rate" or not mute)]
                vals = [v for v in vals if v is not None and math.isfinite(v)]
                if vals:
                    metrics[k] = sum(vals) / len(vals)
        _emit_metrics(metrics, log_metric)
        # also when the judge failed (all None): TRL keeps each log_extra column in a deque of generation_batch_size
        # entries, so a batch that logs nothing would show the previous batch's values next to its completions
        if log_extra is not None and b.n:
            _emit_extra(log_extra, "preference_mass", list(b.preference))


def _emit_metrics(metrics: Mapping[str, float], log_metric: Callable | None) -> None:
    if log_metric is None:
        return
    for k, v in metrics.items():
        if v is not None and math.isfinite(v):
            try:
                log_metric(METRIC_PREFIX + k, float(v))
            except Exception as e:  # a logging failure must not cost the rewards
                _warn(f"log_metric({METRIC_PREFIX + k!r}) failed: {type(e).__name__}: {e}")
                return


def _emit_extra(log_extra: Callable, column: str, values: list) -> None:
    try:
        log_extra(column, values)
    except Exception as e:
        _warn(f"log_extra({column!r}) failed: {type(e).__name__}: {e}")


def _labels_text(s: CompletionScore) -> str:
    if s.error:
        return f"error: {s.error[:80]}"
    if not s.labels:
        return "no graph" if s.extraction_fallback is None else f"no graph ({s.extraction_fallback[:80]})"
    return " ".join(f"{k}={v}" for k, v in s.labels.items())


def _as_list(x: Any, name: str) -> list:
    if isinstance(x, str | bytes) or not isinstance(x, Sequence):
        raise ConfigError(f"{name} must be a list (one entry per completion), got {type(x).__name__}")
    return list(x)


def _column(x: Any, name: str, n: int) -> list:
    if x is None:
        raise ConfigError(
            f"the reward call has no {name!r} column: the dataset must carry 'puzzle' and 'game_id' (build it with "
            "reasonshape.envs.dataset.build_dataset) and GRPOConfig.remove_unused_columns must be False")
    if isinstance(x, str):
        return [x] * n
    out = _as_list(x, name)
    if len(out) != n:
        raise ConfigError(f"{name} must have one entry per completion ({n}), got {len(out)}")
    return out


def _length(ids: Any) -> int | None:
    try:
        return len(ids)
    except TypeError:
        return None


def _finite(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


# ===================================================================================================== rewards
class _Reward(ABC):
    """Base of the reward callables: batch scoring through the shared scorer, the no-raise / no-NaN guarantees."""

    __name__ = "reward"

    def __init__(self, scorer: RewardScorer | None = None):
        if scorer is not None and not isinstance(scorer, RewardScorer):
            raise ConfigError(f"scorer must be a RewardScorer, got {type(scorer).__name__}")
        self.scorer = scorer if scorer is not None else RewardScorer()
        self._calls = 0

    def __repr__(self) -> str:
        return f"<{self.__name__}>"

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._calls = 0  # an unpickled reward (a new process: an async rollout worker) validates its first call again

    def __call__(self, prompts: Any = None, completions: Any = None, completion_ids: Any = None, *,
                 puzzle: Any = None, game_id: Any = None, trainer_state: Any = None, log_metric: Any = None,
                 log_extra: Any = None, **kwargs: Any) -> list[float | None]:
        first = self._calls == 0
        self._calls += 1
        try:
            n = len(completions)  # type: ignore[arg-type]
        except TypeError:
            n = 0
        try:
            b = self.scorer.batch(prompts, completions, puzzle, game_id, completion_ids, trainer_state,
                                  log_metric, log_extra)
            values = self._values(b, log_metric, log_extra)
        except ConfigError as e:
            if first or n == 0:
                raise
            _warn(f"{self.__name__}: {e}; returning None for the batch")
            return [None] * n
        except Exception as e:  # never raise into the trainer mid-run
            _warn(f"{self.__name__} failed ({type(e).__name__}: {e}); returning None for the batch")
            return [None] * n
        return [_finite(v) for v in values]

    @abstractmethod
    def _values(self, b: _Batch, log_metric, log_extra) -> list[float | None]:
        """One value per completion of the batch (each subclass's reward)."""


class _AccuracyReward(_Reward):
    """1.0 when the answer satisfies every rule, 0.0 otherwise (unparseable answers included), ``None`` when the
    instance cannot be rebuilt from ``puzzle`` / ``game_id``."""

    __name__ = "accuracy_reward"

    def _values(self, b, log_metric, log_extra):
        out = []
        for s in b.scores:
            if s.error is not None:
                out.append(None)
            else:
                out.append(1.0 if s.correct else 0.0)
        return out


class _FormatReward(_Reward):
    """1.0 for an ``<answer>`` block that reads as a grid of the puzzle's shape, else 0.0; ``None`` when the
    instance cannot be rebuilt."""

    __name__ = "format_reward"

    def _values(self, b, log_metric, log_extra):
        return [None if s.error is not None else (1.0 if format_ok(s) else 0.0) for s in b.scores]


class _EtaReward(_Reward):
    """Eta clipped to [0, 1] (paper A §C); see :func:`get_eta_reward`."""

    __name__ = "eta_reward"

    def __init__(self, scorer: RewardScorer | None = None, only_correct: bool = True, undefined: float = 0.0):
        super().__init__(scorer)
        if not isinstance(only_correct, bool):
            raise ConfigError(f"only_correct must be a bool, got {only_correct!r}")
        if isinstance(undefined, bool) or not isinstance(undefined, int | float) or not 0 <= undefined <= 1:
            raise ConfigError(f"undefined must be a number in [0, 1], got {undefined!r}")
        self.only_correct = only_correct
        self.undefined = float(undefined)

    def _values(self, b, log_metric, log_extra):
        return [_eta_value(s, self.only_correct, self.undefined, self.scorer.scorer.extract, self.__name__)
                for s in b.scores]


def _eta_value(s: CompletionScore, only_correct: bool, undefined: float, extract: bool, who: str) -> float | None:
    if s.error is not None:
        return None
    if only_correct and not s.correct:
        return 0.0
    if s.metrics is None:
        if not extract:
            return None
        _warn(f"{who}: no claim graph for a completion of {s.puzzle} ({s.extraction_fallback or 'no C*'}); "
              "returning None for it")
        return None
    v = s.metrics.eta_clipped
    return undefined if v is None else v


class _SelfPreferenceReward(_Reward):
    """Consensus preference mass ``N·π̄_i - 1`` from the structural-uncertainty scorer (paper B)."""

    __name__ = "self_preference_reward"

    def _values(self, b, log_metric, log_extra):
        if self.scorer.judge_settings is None and self.scorer._judge is None:
            _warn(f"{self.__name__}: no judge configured (JudgeSettings, or REASONSHAPE_JUDGE_BASE_URL for the "
                  "module-level reward); returning None")
            return [None] * b.n
        return self.scorer.group_scores(b, log_metric, log_extra)


class _ShapedReward(_Reward):
    """``w_acc·acc + w_fmt·fmt + w_eta·eta + w_sp·(N·π̄_i - 1)/(N - 1)``; see :func:`get_shaped_reward`."""

    __name__ = "shaped_reward"

    def __init__(self, scorer: RewardScorer | None = None, weights: ShapingWeights | None = None):
        super().__init__(scorer)
        if weights is not None and not isinstance(weights, ShapingWeights):
            raise ConfigError(f"weights must be a ShapingWeights, got {type(weights).__name__}")
        self.weights = weights or ShapingWeights()
        if self.weights.needs_eta and not self.scorer.scorer.extract:
            raise ConfigError("shaped reward has eta weight > 0 but the scorer does not extract claim graphs; "
                              "set eta weight 0 or extract=True")

    def _values(self, b, log_metric, log_extra):
        w = self.weights
        pref: list[float | None] = [None] * b.n
        sizes = [0] * b.n
        if w.needs_judge:
            pref = self.scorer.group_scores(b, log_metric, log_extra)
            for a, z in b.groups or []:
                for i in range(a, z):
                    sizes[i] = z - a
        out: list[float | None] = []
        for i, s in enumerate(b.scores):
            if s.error is not None:
                out.append(None)
                continue
            v = w.accuracy * float(s.correct) + w.format * float(format_ok(s))
            if w.needs_eta:
                e = _eta_value(s, w.eta_only_correct, 0.0, True, self.__name__)
                v += w.eta * (e or 0.0)
            if w.needs_judge and pref[i] is not None and sizes[i] > 1:
                v += w.self_preference * pref[i] / (sizes[i] - 1)
            out.append(v)
        return out


def _warn_batch(b: _Batch) -> None:
    """The warnings of a newly scored batch, once per batch whichever rewards read it: completions whose instance
    cannot be rebuilt (every reward returns None for them), and a batch where no completion has a final answer
    but some wrote ``<answer>`` only inside their reasoning (the signature of a server that puts whole replies into
    ``reasoning_content``, or of a model that never closes its ``<think>``)."""
    errs = Counter(s.error for s in b.scores if s.error is not None)
    if errs:
        causes = "; ".join(f"{e} (x{k})" if k > 1 else e for e, k in sorted(errs.items())[:3])
        more = f"; and {len(errs) - 3} other cause(s)" if len(errs) > 3 else ""
        _warn(f"{errs.total()} completion(s) cannot be judged, the instance cannot be rebuilt ({causes}{more}); "
              "every reward returns None for them")
    ok = [s for s in b.scores if s.error is None]
    drafts = sum(s.answer_in_reasoning for s in ok)
    if drafts and not any(s.has_answer_block for s in ok):
        _warn(f"no completion of the batch has a final <answer> block, and {drafts} of {len(ok)} have one only "
              "inside their reasoning (<think> or reasoning_content), which is read as a draft: they score as "
              "unanswered. If the server puts whole replies into reasoning_content, check its reasoning parser.")


# ===================================================================================================== factories
def get_accuracy_reward(scorer: RewardScorer | None = None) -> _AccuracyReward:
    r"""Binary accuracy by the puzzle's rules (paper A §A).

    .. math:: r_i = \mathbb{1}[\text{the final answer of completion } i \text{ satisfies every rule}]

    Parameters
    ----------
    scorer : RewardScorer, optional
        Shared scorer (default: a private one).

    Returns
    -------
    callable
        ``f(prompts, completions, puzzle, game_id, **kwargs) -> list[float | None]`` with ``__name__ ==
        "accuracy_reward"``: 1.0 / 0.0 per completion (a malformed or missing answer is 0.0); ``None`` when the
        instance cannot be rebuilt from ``puzzle`` / ``game_id`` (unknown puzzle, malformed game ID).

    Examples
    --------
    >>> f = get_accuracy_reward()
    >>> f(completions=["no answer"], puzzle=["tents"], game_id=["4x4de:aafe,1,0,1,1,1,1,0,1"])
    [0.0]
    """
    return _AccuracyReward(scorer)


def get_format_reward(scorer: RewardScorer | None = None) -> _FormatReward:
    """Format reward: 1.0 when the completion's last ``<answer>`` block reads as a grid of the puzzle's shape.

    A grid found only without an ``<answer>`` block (the parser's fallback) and an unreadable block score 0.0;
    ``None`` when the instance cannot be rebuilt. Source: reasonshape choice.

    Returns
    -------
    callable with ``__name__ == "format_reward"``
    """
    return _FormatReward(scorer)


def get_eta_reward(scorer: RewardScorer | None = None, only_correct: bool = True,
                   undefined: float = 0.0) -> _EtaReward:
    r"""Reasoning-flow efficiency reward: eta clipped to [0, 1] (paper A §C).

    .. math:: r_i = \operatorname{clip}(\eta_i, 0, 1) \cdot \mathbb{1}[\text{correct}_i]

    Parameters
    ----------
    scorer : RewardScorer, optional
        Shared scorer; must extract claim graphs.
    only_correct : bool
        Only a correct answer earns eta; a wrong one gets 0.0 (default True: paper A shows eta alone rewards
        skipping verification, reasonshape choice).
    undefined : float
        Value in [0, 1] when eta is undefined (|V| < 2 or |V| <= |C*|: a completion stating no more claims than
        the solution has, such as one that lists only some solution cells), default 0.0. A bare answer with no
        reasoning is not such a case: its answer grid is read as one claim per cell, a graph without edges whose
        eta is 0.0.

    Returns
    -------
    callable with ``__name__ == "eta_reward"``
        One value in [0, 1] or ``None`` per completion: ``None`` when the instance cannot be rebuilt or the claim
        graph could not be built (with a :class:`RewardWarning`).

    Raises
    ------
    ConfigError
        ``undefined`` outside [0, 1] or ``only_correct`` not a bool.
    """
    return _EtaReward(scorer, only_correct=only_correct, undefined=undefined)


def get_self_preference_reward(scorer: RewardScorer | None = None) -> _SelfPreferenceReward:
    r"""Self-preference reward: the completion's consensus preference mass within its group (paper B §3).

    .. math:: r_i = N \bar\pi_i - 1 \in [-1, N - 1]

    with :math:`\bar\pi` the mean over M spanning-tree trials of the PageRank distribution of a Bradley–Terry fit
    on the policy's own pairwise verdicts (:func:`reasonshape.rewards.structural_uncertainty.score_groups`). 0 for
    every completion when the judge has no preference; it sums to 0 over a group.

    Whole groups are required: the batch's consecutive equal prompts are the groups (:func:`find_groups`), and a
    batch that does not hold whole groups raises :class:`ConfigError` on the first call (rule: TRL gives each
    process ``per_device_train_batch_size * steps_per_generation`` consecutive completions, so that product must be
    a multiple of ``num_generations``). With a judge the scorer must know G (``RewardScorer(num_generations=G)``,
    ``get_reward_functions(..., num_generations=G)``, or ``REASONSHAPE_NUM_GENERATIONS`` for the module-level
    reward): without it the first call raises :class:`ConfigError`, as a batch cannot tell a split group from a
    prompt drawn twice in a row. Later failures (judge down, ...) return ``None`` for the batch with a
    :class:`RewardWarning`.

    Parameters
    ----------
    scorer : RewardScorer, optional
        Shared scorer with :class:`JudgeSettings`; without a judge the reward returns ``None`` with a warning.

    Returns
    -------
    callable with ``__name__ == "self_preference_reward"``
    """
    return _SelfPreferenceReward(scorer)


def get_shaped_reward(scorer: RewardScorer | None = None, weights: ShapingWeights | None = None) -> _ShapedReward:
    r"""One combined reward (reasonshape choice; default weights in :class:`ShapingWeights`).

    .. math:: r_i = w_{acc} a_i + w_{fmt} f_i + w_{\eta} \operatorname{clip}(\eta_i, 0, 1) a_i
              + w_{sp} \frac{N\bar\pi_i - 1}{N - 1}

    (the :math:`a_i` factor on eta applies with ``eta_only_correct``). Under the default weights
    (1.0, 0.1, 0.2, 0.0) a correct completion scores in [1.0, 1.3] and a wrong one in [0.0, 0.1]: no wrong
    completion, however short or "efficient-looking", outscores a correct one, and a wrong answer earns no eta.

    Parameters
    ----------
    scorer : RewardScorer, optional
        Shared scorer (needs extraction when the eta weight is > 0, a judge when the self-preference weight is).
    weights : ShapingWeights, optional

    Returns
    -------
    callable with ``__name__ == "shaped_reward"``
        One float or ``None`` (instance cannot be rebuilt) per completion. A missing eta or self-preference term
        (no graph, judge failure) counts as 0 for that term, with a :class:`RewardWarning`.

    Raises
    ------
    ConfigError
        Eta weight > 0 with a scorer that does not extract.
    """
    return _ShapedReward(scorer, weights)


_FACTORIES: dict[str, Callable[..., _Reward]] = {
    "accuracy": get_accuracy_reward,
    "format": get_format_reward,
    "eta": get_eta_reward,
    "self_preference": get_self_preference_reward,
    "shaped": get_shaped_reward,
}


def get_reward_functions(names: Sequence[str] = ("shaped", "accuracy", "format", "eta"), *,
                         weights: ShapingWeights | None = None, eta_only_correct: bool | None = None,
                         scorer: RewardScorer | None = None, judge: JudgeSettings | None = None,
                         extract: bool = True, llm_backend: Any = None,
                         num_generations: int | None = None) -> list[_Reward]:
    """The reward functions for one trainer, sharing ONE :class:`RewardScorer`.

    Parameters
    ----------
    names : sequence of {"accuracy", "format", "eta", "self_preference", "shaped"}
        Which rewards, in order (TRL's ``reward_weights`` follow this order). Non-empty, no duplicates.
    weights : ShapingWeights, optional
        For ``shaped`` (default :class:`ShapingWeights`).
    eta_only_correct : bool, optional
        For ``eta``; default ``weights.eta_only_correct`` (True).
    scorer : RewardScorer, optional
        Use this scorer (then ``judge``, ``extract``, ``llm_backend`` and ``num_generations`` must be left unset).
    judge, extract, llm_backend, num_generations
        Build the shared :class:`RewardScorer` with these.

    Returns
    -------
    list of callables
        Picklable (together they unpickle sharing one scorer), each with ``__name__`` ``<name>_reward``.

    Raises
    ------
    ConfigError
        Unknown or duplicate name, an empty list, ``self_preference`` (or a shaped self-preference weight > 0)
        without a judge, or ``scorer`` combined with scorer options.
    """
    if isinstance(names, str):
        names = [names]
    names = list(names)
    if not names:
        raise ConfigError("names must list at least one reward, got []")
    bad = [n for n in names if n not in _FACTORIES]
    if bad:
        raise ConfigError(f"reward names must be among {list(REWARD_NAMES)}, got {bad}")
    if len(set(names)) != len(names):
        raise ConfigError(f"reward names must not repeat, got {names}")
    weights = weights or ShapingWeights()
    if scorer is None:
        scorer = RewardScorer(extract=extract, llm_backend=llm_backend, judge=judge, num_generations=num_generations)
    elif judge is not None or llm_backend is not None or num_generations is not None or not extract:
        raise ConfigError("pass either scorer or the options to build one (judge, extract, llm_backend, "
                          "num_generations), not both")
    wants_judge = "self_preference" in names or ("shaped" in names and weights.needs_judge)
    if wants_judge and scorer.judge_settings is None:
        raise ConfigError("self-preference needs a judge: pass judge=JudgeSettings(...) (kind 'policy' on CPU, "
                          "'openai' against the vLLM server)")
    out: list[_Reward] = []
    for name in names:
        if name == "shaped":
            out.append(get_shaped_reward(scorer, weights))
        elif name == "eta":
            only = weights.eta_only_correct if eta_only_correct is None else eta_only_correct
            out.append(get_eta_reward(scorer, only_correct=only))
        else:
            out.append(_FACTORIES[name](scorer))
    return out


# Module-level rewards for ``trl grpo --reward_funcs reasonshape.rewards.functions.<name>`` (dotted paths): they
# share one default scorer; self-preference reads its judge from REASONSHAPE_JUDGE_BASE_URL / _MODEL and G from
# REASONSHAPE_NUM_GENERATIONS.
def _default_scorer() -> RewardScorer:
    try:
        judge = JudgeSettings.from_env()
    except ConfigError as e:  # a bad environment must not break ``import``; the reward then warns and gives None
        _warn(f"ignoring the REASONSHAPE_JUDGE_* environment: {e}")
        judge = None
    try:
        g = num_generations_from_env()
    except ConfigError as e:  # likewise: a judged self-preference then raises on its first call
        _warn(f"ignoring {NUM_GENERATIONS_ENV}: {e}")
        g = None
    return RewardScorer(judge=judge, num_generations=g)


_DEFAULT_SCORER = _default_scorer()
accuracy_reward = get_accuracy_reward(_DEFAULT_SCORER)
format_reward = get_format_reward(_DEFAULT_SCORER)
eta_reward = get_eta_reward(_DEFAULT_SCORER)
self_preference_reward = get_self_preference_reward(_DEFAULT_SCORER)
shaped_reward = get_shaped_reward(_DEFAULT_SCORER)
