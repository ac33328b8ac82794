"""Scores and TRL reward functions: eta (paper A §C), structural uncertainty (paper B), shaping.

* :mod:`~reasonshape.rewards.eta` — logical mass, H_str, eta, G_sol / G_ver;
* :mod:`~reasonshape.rewards.metrics` — the baseline structural metrics record;
* :mod:`~reasonshape.rewards.structural_uncertainty` — Bradley–Terry + PageRank over random spanning trees;
* :mod:`~reasonshape.rewards.scorer` — parse -> verify -> extract -> graph -> eta for one completion, cached;
* :mod:`~reasonshape.rewards.functions` — the TRL reward functions.

The names are imported eagerly (none of these modules loads torch): two of them (``eta``,
``structural_uncertainty``) share their name with their submodule, and an eager import keeps the function bound.
"""

from reasonshape.rewards.eta import EtaScores, eta, eta_scores, g_sol, g_ver, logical_mass, structural_entropy
from reasonshape.rewards.functions import (
    ShapingWeights,
    accuracy_reward,
    eta_reward,
    format_reward,
    get_reward_functions,
    self_preference_reward,
    shaped_reward,
)
from reasonshape.rewards.metrics import StructuralMetrics, structural_metrics
from reasonshape.rewards.scorer import CompletionScore, Scorer, score_completion
from reasonshape.rewards.structural_uncertainty import (
    GroupScore,
    PairwiseJudge,
    SUResult,
    score_group,
    score_groups,
    structural_uncertainty,
)

__all__ = [
    "CompletionScore", "EtaScores", "GroupScore", "PairwiseJudge", "SUResult", "Scorer", "ShapingWeights",
    "StructuralMetrics", "accuracy_reward", "eta", "eta_reward", "eta_scores", "format_reward", "g_sol", "g_ver",
    "get_reward_functions", "logical_mass", "score_completion", "score_group", "score_groups",
    "self_preference_reward", "shaped_reward", "structural_entropy", "structural_metrics", "structural_uncertainty",
]
