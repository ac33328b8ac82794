"""Scores and TRL reward functions: eta (paper A §C), structural uncertainty (paper B), shaping.

Public names are imported lazily from their modules (one table below), so ``import reasonshape.rewards`` stays
cheap and each concept keeps one home:

* :mod:`~reasonshape.rewards.eta` — logical mass, H_str, eta, G_sol / G_ver;
* :mod:`~reasonshape.rewards.metrics` — the baseline structural metrics record;
* :mod:`~reasonshape.rewards.structural_uncertainty` — Bradley–Terry + PageRank over random spanning trees;
* :mod:`~reasonshape.rewards.scorer` — parse -> verify -> extract -> graph -> eta for one completion, cached;
* :mod:`~reasonshape.rewards.functions` — the TRL reward functions.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "eta": "reasonshape.rewards.eta",
    "eta_scores": "reasonshape.rewards.eta",
    "EtaScores": "reasonshape.rewards.eta",
    "logical_mass": "reasonshape.rewards.eta",
    "structural_entropy": "reasonshape.rewards.eta",
    "g_sol": "reasonshape.rewards.eta",
    "g_ver": "reasonshape.rewards.eta",
    "structural_metrics": "reasonshape.rewards.metrics",
    "StructuralMetrics": "reasonshape.rewards.metrics",
    "structural_uncertainty": "reasonshape.rewards.structural_uncertainty",
    "score_groups": "reasonshape.rewards.structural_uncertainty",
    "score_group": "reasonshape.rewards.structural_uncertainty",
    "PairwiseJudge": "reasonshape.rewards.structural_uncertainty",
    "GroupScore": "reasonshape.rewards.structural_uncertainty",
    "SUResult": "reasonshape.rewards.structural_uncertainty",
    "Scorer": "reasonshape.rewards.scorer",
    "CompletionScore": "reasonshape.rewards.scorer",
    "score_completion": "reasonshape.rewards.scorer",
    "get_reward_functions": "reasonshape.rewards.functions",
    "ShapingWeights": "reasonshape.rewards.functions",
    "accuracy_reward": "reasonshape.rewards.functions",
    "format_reward": "reasonshape.rewards.functions",
    "eta_reward": "reasonshape.rewards.functions",
    "self_preference_reward": "reasonshape.rewards.functions",
    "shaped_reward": "reasonshape.rewards.functions",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reasonshape.rewards' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
