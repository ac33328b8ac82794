"""Structural uncertainty: how stably a model ranks its own candidate solutions (paper B; METHOD.md §E).

For one query with N candidate completions (in GRPO: the group), M trials each draw a uniform random spanning tree
over the candidates and ask the SAME model, as a judge, which candidate of each tree edge is better. Per trial a
Bradley–Terry model with L2 penalty (or TrueSkill) is fitted on the N-1 outcomes, its win matrix W is turned into a
ranking distribution π^(m) by PageRank (or rank centrality), and the M distributions are decomposed BALD-style:

* total uncertainty U = H(π̄), with π̄ the mean of the π^(m);
* within-trial ambiguity A = mean_m H(π^(m));
* across-trial instability I = U - A = mean_m KL(π^(m) || π̄) >= 0.

All in nats; each is also reported divided by ln N (so in [0, 1]). Per candidate: the consensus preference mass
N·π̄_i - 1 (0 for a uniform π̄) and the rank stability across trials.

The module has three layers, kept apart:

1. pure scoring functions on numpy arrays (:func:`random_spanning_tree`, :func:`fit_bradley_terry`,
   :func:`ranking_distribution`, :func:`decompose`, :func:`structural_uncertainty`...): arrays in, floats out;
2. the judge I/O (:class:`PairwiseJudge`, :func:`parse_verdict`): prompts, verdicts, soft probabilities from
   logprobs, both-orders averaging against position bias;
3. :func:`score_groups` / :func:`score_group`: trees for every group, ALL judge prompts of the batch in ONE
   ``backend.generate`` call, then the scoring;

plus the dispersion baseline (:func:`answer_dispersion`, the entropy of canonicalised final answers) and
:func:`flagging_auroc` (AUROC of signals for flagging incorrect answers).

References
----------
Paper B: Chaudhury et al., structural uncertainty (arXiv 2606.17312, ICLR 2026 workshop), §3.1 (spanning-tree
self-preference), §3.2 (Bradley–Terry with L2, eq. 1-2, C = 1; TrueSkill; PageRank). The decomposition formula is
not public: METHOD.md §E states the BALD-style form implemented here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx
import numpy as np
from scipy import optimize, special, stats

from reasonshape.envs.answer import extract_answer_block, split_tokens, strip_think
from reasonshape.envs.dataset import PROMPT_FORMATS
from reasonshape.errors import ConfigError

__all__ = [
    "UNPARSED_POLICIES",
    # pure scoring
    "random_spanning_tree",
    "sample_spanning_trees",
    "fit_bradley_terry",
    "fit_bradley_terry_trials",
    "bradley_terry_win_matrix",
    "trueskill_ratings",
    "trueskill_win_matrix",
    "ranking_distribution",
    "decompose",
    "preference_mass",
    "rank_stability",
    "SUResult",
    "structural_uncertainty",
    # judge I/O
    "DEFAULT_JUDGE_TEMPLATE",
    "parse_verdict",
    "verdict_probability_from_logprobs",
    "candidate_parts",
    "truncate_middle",
    "PairwiseJudge",
    "JudgeOutcome",
    # batch scoring
    "Group",
    "GroupScore",
    "score_group",
    "score_groups",
    # baselines
    "canonical_answer",
    "answer_dispersion",
    "auroc",
    "flagging_auroc",
]

PairModel = Literal["bradley_terry", "trueskill"]
Aggregation = Literal["pagerank", "rank_centrality"]


# ===================================================================================================== trees
def random_spanning_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform random spanning tree over ``n`` candidates, from a uniform random Prüfer sequence.

    Parameters
    ----------
    n : int
        Number of candidates, >= 1.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int64, shape (n - 1, 2)
        The tree's edges ``(i, j)`` with ``i < j``, candidates indexed ``0..n-1``. Empty ``(0, 2)`` for ``n = 1``.

    Raises
    ------
    ConfigError
        ``n < 1``.

    Notes
    -----
    A Prüfer sequence of length n-2 over n labels is in bijection with the n^(n-2) labelled trees (Cayley), so a
    uniform sequence gives a uniform tree (paper B §3.1). Decoding uses ``networkx.from_prufer_sequence``, O(n log n).
    """
    _check_n(n)
    if n == 1:
        return np.zeros((0, 2), dtype=np.int64)
    seq = rng.integers(0, n, size=n - 2).tolist()
    edges = np.array(nx.from_prufer_sequence(seq).edges(), dtype=np.int64).reshape(n - 1, 2)
    edges.sort(axis=1)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))]


def sample_spanning_trees(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` independent uniform random spanning trees over ``n`` candidates.

    Returns
    -------
    numpy.ndarray of int64, shape (m, n - 1, 2)

    Raises
    ------
    ConfigError
        ``n < 1`` or ``m < 1``.
    """
    _check_n(n)
    _check_m(m)
    return np.stack([random_spanning_tree(n, rng) for _ in range(m)]).reshape(m, n - 1, 2)


def _check_n(n: int) -> None:
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 1:
        raise ConfigError(f"n (number of candidates) must be an integer >= 1, got {n!r}")


def _check_m(m: int) -> None:
    if not isinstance(m, int | np.integer) or isinstance(m, bool) or m < 1:
        raise ConfigError(f"m (number of trials) must be an integer >= 1, got {m!r}")


# ===================================================================================================== Bradley–Terry
def _check_pairs(n: int, pairs: Any, outcomes: Any, batched: bool) -> tuple[np.ndarray, np.ndarray]:
    _check_n(n)
    p = np.asarray(pairs)
    if p.size == 0:  # no comparisons (N = 1): normalise the empty shape
        p = np.zeros((p.shape[0] if batched and p.ndim >= 2 else 1, 0, 2) if batched else (0, 2), dtype=np.int64)
    want = 3 if batched else 2
    if p.ndim != want or p.shape[-1] != 2:
        raise ConfigError(f"pairs must have shape {'(M, E, 2)' if batched else '(E, 2)'}, got {p.shape}")
    if not np.issubdtype(p.dtype, np.integer):
        if p.size and not np.all(np.equal(np.mod(p, 1), 0)):
            raise ConfigError("pairs must hold integer candidate indices")
        p = p.astype(np.int64)
    if p.size and (p.min() < 0 or p.max() >= n):
        raise ConfigError(f"pairs must hold candidate indices in [0, {n - 1}], got values in [{p.min()}, {p.max()}]")
    if p.size and np.any(p[..., 0] == p[..., 1]):
        raise ConfigError("pairs must compare two different candidates (found a pair (i, i))")
    if outcomes is None:
        y = np.ones(p.shape[:-1])
    else:
        y = np.asarray(outcomes, dtype=float)
        if y.shape != p.shape[:-1]:
            raise ConfigError(f"outcomes must have shape {p.shape[:-1]} (one per pair), got {y.shape}")
        finite = y[~np.isnan(y)]
        if finite.size and (finite.min() < 0 or finite.max() > 1):
            raise ConfigError("outcomes must be probabilities P(i beats j) in [0, 1] (NaN = missing)")
    return p.astype(np.int64), y


def _check_c(C: float) -> float:
    if not isinstance(C, int | float) or isinstance(C, bool) or not math.isfinite(C) or C <= 0:
        raise ConfigError(f"C (inverse L2 strength) must be a finite number > 0, got {C!r}")
    return float(C)


def _bt_objective(theta: np.ndarray, B: np.ndarray, y: np.ndarray, w: np.ndarray, C: float) -> np.ndarray:
    d = (B @ theta[..., None])[..., 0]
    nll = w * (y * np.logaddexp(0.0, -d) + (1.0 - y) * np.logaddexp(0.0, d))
    return nll.sum(axis=1) + (theta ** 2).sum(axis=1) / (2.0 * C)


def fit_bradley_terry_trials(n: int, pairs: Any, outcomes: Any = None, C: float = 1.0, tol: float = 1e-10,
                             max_iter: int = 100) -> np.ndarray:
    """Fit one L2-penalised Bradley–Terry model per trial, all trials at once (vectorised Newton).

    Maximises, per trial m, ``Σ_e [y_e log σ(θ_i - θ_j) + (1 - y_e) log σ(θ_j - θ_i)] - ||θ||² / (2C)`` over the
    trial's pairs ``e = (i, j)`` (paper B eq. 2, with soft outcomes ``y_e``; for ``y_e ∈ {0, 1}`` it is eq. 2 and
    ``choix.opt_pairwise(n, data, alpha=1/(2C))``).

    Parameters
    ----------
    n : int
        Number of candidates, >= 1.
    pairs : array_like of int, shape (M, E, 2)
        Compared candidates ``(i, j)``, ``i != j``, in ``[0, n)``.
    outcomes : array_like of float, shape (M, E), optional
        Observed ``P(i beats j)`` in [0, 1]: 1 = i won, 0 = j won, 0.5 = tie, anything between = a soft verdict;
        NaN = missing (the pair is ignored). Default: all 1.
    C : float
        Inverse L2 strength, > 0 (paper B: C = 1).
    tol : float
        Stop when the largest Newton step is below ``tol``.
    max_iter : int
        Newton iterations at most.

    Returns
    -------
    numpy.ndarray of float, shape (M, n)
        The maximisers θ (log-strengths; unique since the objective is strictly concave).

    Raises
    ------
    ConfigError
        Malformed ``pairs`` / ``outcomes``, or ``C <= 0``.

    Notes
    -----
    Own code rather than ``choix`` / ``scipy.optimize``: the M small problems (N <= ~64) are solved together in one
    batched damped Newton iteration (einsum gradients and Hessians, ``numpy.linalg.solve`` on an (M, N, N) stack,
    step halving when the objective would rise), ~10 iterations, which keeps a 16 x 8 group well under a
    millisecond; per-trial ``scipy.optimize.minimize`` calls cost more in call overhead than the maths. Tests check
    equality with ``choix.opt_pairwise`` (hard outcomes) and with :func:`fit_bradley_terry` ``method="scipy"``.
    """
    C = _check_c(C)
    p, y = _check_pairs(n, pairs, outcomes, batched=True)
    M, E = p.shape[0], p.shape[1]
    w = (~np.isnan(y)).astype(float)
    y = np.nan_to_num(y, nan=0.5)
    B = np.zeros((M, E, n))
    if E:
        mi, ei = np.meshgrid(np.arange(M), np.arange(E), indexing="ij")
        B[mi, ei, p[..., 0]] = 1.0
        B[mi, ei, p[..., 1]] = -1.0
    Bt = np.swapaxes(B, 1, 2)
    theta = np.zeros((M, n))
    eye = np.eye(n) / C
    f = _bt_objective(theta, B, y, w, C)
    for _ in range(max_iter):
        s = special.expit((B @ theta[..., None])[..., 0])
        g = theta / C + (Bt @ (w * (s - y))[..., None])[..., 0]
        H = eye + Bt @ ((w * s * (1.0 - s))[..., None] * B)
        step = np.linalg.solve(H, g[..., None])[..., 0]
        t = np.ones((M, 1))
        for _ in range(40):
            cand = theta - t * step
            f_new = _bt_objective(cand, B, y, w, C)
            bad = f_new > f + 1e-12 * np.maximum(1.0, np.abs(f))
            if not bad.any():
                break
            t[bad] *= 0.5
        theta, f = cand, f_new
        if np.max(np.abs(t * step)) < tol:
            break
    return theta


def fit_bradley_terry(n: int, pairs: Any, outcomes: Any = None, C: float = 1.0,
                      method: Literal["newton", "scipy"] = "newton") -> np.ndarray:
    """Fit the L2-penalised Bradley–Terry model on one set of comparisons (paper B eq. 1-2).

    Parameters
    ----------
    n : int
        Number of candidates, >= 1.
    pairs : array_like of int, shape (E, 2)
        Compared candidates ``(i, j)``.
    outcomes : array_like of float, shape (E,), optional
        ``P(i beats j)`` in [0, 1] (1 = i won; 0.5 = tie; soft values allowed; NaN = missing). Default all 1.
    C : float
        Inverse L2 strength, > 0; the penalty is ``||θ||² / (2C)``, i.e. ``choix``'s ``alpha = 1 / (2C)``.
    method : {"newton", "scipy"}
        ``"newton"``: :func:`fit_bradley_terry_trials` with M = 1. ``"scipy"``: ``scipy.optimize.minimize``
        (``trust-exact`` with the analytic gradient and Hessian) on the same objective; a cross-check.

    Returns
    -------
    numpy.ndarray of float, shape (n,)
        θ, the log-strengths; ``P(i beats j) = σ(θ_i - θ_j)``.

    Raises
    ------
    ConfigError
        Malformed input, ``C <= 0`` or an unknown ``method``.

    Examples
    --------
    One comparison that 0 won, C = 1: θ_0 = -θ_1 = t with t + σ(2t) = 1 (stationarity), t ≈ 0.3374.

    >>> round(float(fit_bradley_terry(2, [(0, 1)])[0]), 4)
    0.3374
    """
    p, y = _check_pairs(n, pairs, outcomes, batched=False)
    if method == "newton":
        return fit_bradley_terry_trials(n, p[None], y[None], C=C)[0]
    if method != "scipy":
        raise ConfigError(f"method must be 'newton' or 'scipy', got {method!r}")
    C = _check_c(C)
    w = (~np.isnan(y)).astype(float)
    y = np.nan_to_num(y, nan=0.5)
    B = np.zeros((len(p), n))
    B[np.arange(len(p)), p[:, 0]] = 1.0
    B[np.arange(len(p)), p[:, 1]] = -1.0

    def fun(th):
        d = B @ th
        return float((w * (y * np.logaddexp(0, -d) + (1 - y) * np.logaddexp(0, d))).sum() + th @ th / (2 * C))

    def jac(th):
        s = special.expit(B @ th)
        return th / C + B.T @ (w * (s - y))

    def hess(th):
        s = special.expit(B @ th)
        return np.eye(n) / C + (B.T * (w * s * (1 - s))) @ B

    res = optimize.minimize(fun, np.zeros(n), jac=jac, hess=hess, method="trust-exact",
                            options={"gtol": 1e-12, "maxiter": 1000})
    return res.x


def bradley_terry_win_matrix(theta: Any) -> np.ndarray:
    """Win matrix ``W_ij = σ(θ_i - θ_j) = P(i beats j)`` for all pairs (paper B §3.2).

    Parameters
    ----------
    theta : array_like, shape (..., N)

    Returns
    -------
    numpy.ndarray, shape (..., N, N)
        Entries in (0, 1), ``W + W^T = 1``, diagonal 0.5.
    """
    th = np.asarray(theta, dtype=float)
    return special.expit(th[..., :, None] - th[..., None, :])


# ===================================================================================================== TrueSkill
def trueskill_ratings(n: int, pairs: Any, outcomes: Any = None, env: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """TrueSkill ratings from one trial's comparisons (paper B's alternative pairwise model).

    Parameters
    ----------
    n : int
        Number of candidates.
    pairs : array_like of int, shape (E, 2)
    outcomes : array_like of float, shape (E,), optional
        ``P(i beats j)``: > 0.5 is a win for i, < 0.5 a win for j, exactly 0.5 a draw, NaN skipped (TrueSkill takes
        hard outcomes only). Default: i won every pair.
    env : trueskill.TrueSkill, optional
        The environment (default ``trueskill.TrueSkill()``: μ = 25, σ = 25/3, β = 25/6, draw probability 0.1).

    Returns
    -------
    (mu, sigma) : two numpy.ndarray of shape (n,)

    Notes
    -----
    TrueSkill is an online update, so the result depends on the order of the pairs; they are applied in the order
    given (for a spanning tree: the tree's edge order). Uses the ``trueskill`` package's ``rate_1vs1``.
    """
    import trueskill

    p, y = _check_pairs(n, pairs, outcomes, batched=False)
    env = env or trueskill.TrueSkill()
    ratings = [env.create_rating() for _ in range(n)]
    for (i, j), o in zip(p.tolist(), y.tolist(), strict=True):
        if math.isnan(o):
            continue
        if o == 0.5:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], drawn=True, env=env)
        elif o > 0.5:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], env=env)
        else:
            ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i], env=env)
    return np.array([r.mu for r in ratings]), np.array([r.sigma for r in ratings])


def trueskill_win_matrix(mu: Any, sigma: Any, beta: float = 25.0 / 6.0) -> np.ndarray:
    """``W_ij = Φ((μ_i - μ_j) / sqrt(2β² + σ_i² + σ_j²))``, the TrueSkill win probability (diagonal 0.5).

    Returns
    -------
    numpy.ndarray, shape (N, N)
    """
    mu, sigma = np.asarray(mu, dtype=float), np.asarray(sigma, dtype=float)
    scale = np.sqrt(2 * beta ** 2 + sigma[:, None] ** 2 + sigma[None, :] ** 2)
    return special.ndtr((mu[:, None] - mu[None, :]) / scale)


# ===================================================================================================== ranking
def ranking_distribution(W: Any, method: Aggregation = "pagerank", damping: float = 0.85,
                         impl: Literal["numpy", "networkx"] = "numpy") -> np.ndarray:
    """Ranking distribution π from a win matrix (paper B §3.2; METHOD.md §E).

    Parameters
    ----------
    W : array_like, shape (N, N) or (M, N, N)
        ``W[i, j] = P(i beats j)`` in [0, 1]; the diagonal is ignored.
    method : {"pagerank", "rank_centrality"}
        ``"pagerank"``: PageRank over the complete graph with an edge loser -> winner of weight W(winner beats
        loser), i.e. ``j -> i`` with weight ``W[i, j]``, row-normalised, damping ``damping``, uniform teleport
        (networkx's conventions). ``"rank_centrality"``: the chain ``P[j, i] = W[i, j] / (N - 1)`` for ``i != j``
        with the rest of the mass on ``P[j, j]``, no damping; for a Bradley–Terry W its stationary distribution is
        exactly ``softmax(θ)`` (detailed balance).
    damping : float
        PageRank damping in [0, 1) (paper B does not publish it; 0.85 = networkx's default). Ignored by
        ``"rank_centrality"``.
    impl : {"numpy", "networkx"}
        ``"numpy"``: the exact linear solve ``(I - d P^T) π = (1 - d)/N``, batched over M. ``"networkx"``:
        ``networkx.pagerank`` per matrix (power iteration, tol 1e-12); a cross-check, slower. Rank centrality is
        always solved exactly with numpy.

    Returns
    -------
    numpy.ndarray, shape (N,) or (M, N)
        Probability vectors (non-negative, summing to 1).

    Raises
    ------
    ConfigError
        W not square, not finite or outside [0, 1]; ``damping`` outside [0, 1); unknown ``method`` / ``impl``.

    Notes
    -----
    A node whose out-weights are all 0 (it beats... nobody loses to it with positive weight; only possible with
    W entries exactly 0 or 1) teleports uniformly, as in networkx. For N = 2 PageRank is always uniform: each node
    has a single out-edge, so row normalisation erases the weights; rank centrality keeps them.
    """
    W = np.asarray(W, dtype=float)
    single = W.ndim == 2
    if single:
        W = W[None]
    if W.ndim != 3 or W.shape[-1] != W.shape[-2] or W.shape[-1] < 1:
        raise ConfigError(f"W must be a square (N, N) or (M, N, N) matrix, got shape {W.shape}")
    if not np.all(np.isfinite(W)) or W.min() < 0 or W.max() > 1:
        raise ConfigError("W must hold probabilities in [0, 1]")
    if method not in ("pagerank", "rank_centrality"):
        raise ConfigError(f"method must be 'pagerank' or 'rank_centrality', got {method!r}")
    if impl not in ("numpy", "networkx"):
        raise ConfigError(f"impl must be 'numpy' or 'networkx', got {impl!r}")
    M, N = W.shape[0], W.shape[-1]
    if N == 1:
        pi = np.ones((M, 1))
        return pi[0] if single else pi
    off = 1.0 - np.eye(N)
    if method == "rank_centrality":
        P = np.swapaxes(W, 1, 2) * off / (N - 1)  # P[j, i] = W[i, j] / (N - 1)
        P = P + np.eye(N) * (1.0 - P.sum(axis=2))[:, :, None]
        A = np.swapaxes(P, 1, 2) - np.eye(N)
        A[:, -1, :] = 1.0
        b = np.zeros((M, N, 1))
        b[:, -1, 0] = 1.0
        pi = np.linalg.solve(A, b)[..., 0]
    else:
        if not isinstance(damping, int | float) or not 0 <= damping < 1:
            raise ConfigError(f"damping must be in [0, 1), got {damping!r}")
        if impl == "networkx":
            pi = np.stack([_pagerank_networkx(w, damping) for w in W])
        else:
            S = np.swapaxes(W, 1, 2) * off  # S[j, i] = weight of edge j -> i
            rows = S.sum(axis=2, keepdims=True)
            P = np.where(rows > 0, S / np.where(rows > 0, rows, 1.0), 1.0 / N)
            A = np.eye(N) - damping * np.swapaxes(P, 1, 2)
            pi = np.linalg.solve(A, np.full((M, N, 1), (1.0 - damping) / N))[..., 0]
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum(axis=1, keepdims=True)
    return pi[0] if single else pi


def _pagerank_networkx(W: np.ndarray, damping: float) -> np.ndarray:
    N = W.shape[0]
    G = nx.DiGraph()
    G.add_nodes_from(range(N))
    G.add_weighted_edges_from((j, i, float(W[i, j])) for i in range(N) for j in range(N) if i != j and W[i, j] > 0)
    pr = nx.pagerank(G, alpha=damping, weight="weight", tol=1e-13, max_iter=100_000)
    return np.array([pr[i] for i in range(N)])


# ===================================================================================================== decomposition
def _check_pis(pis: Any) -> np.ndarray:
    P = np.asarray(pis, dtype=float)
    if P.ndim != 2 or P.shape[0] < 1 or P.shape[1] < 1:
        raise ConfigError(f"pis must have shape (M, N) with M, N >= 1, got {P.shape}")
    if not np.all(np.isfinite(P)) or P.min() < 0 or not np.allclose(P.sum(axis=1), 1.0, atol=1e-6):
        raise ConfigError("pis must hold probability vectors (non-negative rows summing to 1)")
    return P


def decompose(pis: Any) -> tuple[float, float, float]:
    """BALD-style decomposition of M ranking distributions (METHOD.md §E; paper B's stated intent).

    Parameters
    ----------
    pis : array_like, shape (M, N)
        The trials' ranking distributions π^(m).

    Returns
    -------
    (U, A, I) : three floats, nats
        ``U = H(π̄)`` total, ``A = mean_m H(π^(m))`` within-trial ambiguity, ``I = mean_m KL(π^(m) || π̄)``
        across-trial instability. ``0 <= A <= U <= ln N``, ``I >= 0`` and ``U = A + I`` (up to rounding).
        M = 1 gives I = 0 exactly.

    Raises
    ------
    ConfigError
        ``pis`` is not an (M, N) stack of probability vectors.
    """
    return _decompose(_check_pis(pis))


def _decompose(P: np.ndarray) -> tuple[float, float, float]:
    pbar = P.mean(axis=0)
    U = float(special.entr(pbar).sum())
    A = float(special.entr(P).sum(axis=1).mean())
    kl = special.rel_entr(P, pbar[None, :])
    # A column whose mean underflowed to 0 holds only subnormal entries (<= M * 5e-324): their true KL terms are ~0,
    # where rel_entr(p > 0, 0) would give inf.
    kl[:, pbar == 0.0] = 0.0
    I = float(max(kl.sum(axis=1).mean(), 0.0))  # noqa: E741
    return U, A, I


def preference_mass(pis: Any) -> np.ndarray:
    """Consensus preference mass ``N·π̄_i - 1`` per candidate (paper B's per-completion signal).

    Returns
    -------
    numpy.ndarray, shape (N,)
        In ``[-1, N - 1]``; 0 for every candidate when π̄ is uniform; sums to 0.
    """
    return _preference_mass(_check_pis(pis))


def _preference_mass(P: np.ndarray) -> np.ndarray:
    return P.shape[1] * P.mean(axis=0) - 1.0


def rank_stability(pis: Any) -> np.ndarray:
    """How stable each candidate's rank is across trials: ``1 - 2·std_m(r_i^(m) / (N - 1))``.

    ``r_i^(m)`` is candidate i's rank in trial m by π^(m) (0 = best; ties share their average rank,
    ``scipy.stats.rankdata``), std is the population std over the M trials. A variable in [0, 1] has std <= 1/2,
    so the stability lies in [0, 1]: 1 = the same rank in every trial, 0 = alternately first and last.
    Source: reasonshape choice (paper B names the signal, not its formula).

    Returns
    -------
    numpy.ndarray, shape (N,)
        All 1 when M = 1 or N = 1.
    """
    return _rank_stability(_check_pis(pis))


def _rank_stability(P: np.ndarray) -> np.ndarray:
    M, N = P.shape
    if N == 1 or M == 1:
        return np.ones(N)
    ranks = (stats.rankdata(-P, axis=1, method="average") - 1.0) / (N - 1)
    return np.clip(1.0 - 2.0 * ranks.std(axis=0), 0.0, 1.0)


@dataclass(frozen=True)
class SUResult:
    """Structural uncertainty of one group (all arrays are numpy, entropies in nats).

    Attributes
    ----------
    theta : ndarray, shape (M, N)
        Per-trial strengths (Bradley–Terry θ, or TrueSkill μ).
    pi : ndarray, shape (M, N)
        Per-trial ranking distributions π^(m).
    pibar : ndarray, shape (N,)
        Their mean π̄.
    total, ambiguity, instability : float
        U, A, I (see :func:`decompose`).
    total_norm, ambiguity_norm, instability_norm : float
        Each divided by ln N (in [0, 1]); 0.0 when N = 1.
    preference_mass : ndarray, shape (N,)
        ``N·π̄_i - 1``.
    rank_stability : ndarray, shape (N,)
        See :func:`rank_stability`.
    """

    theta: np.ndarray
    pi: np.ndarray
    pibar: np.ndarray
    total: float
    ambiguity: float
    instability: float
    total_norm: float
    ambiguity_norm: float
    instability_norm: float
    preference_mass: np.ndarray
    rank_stability: np.ndarray

    @property
    def n_candidates(self) -> int:
        return int(self.pi.shape[1])

    @property
    def n_trials(self) -> int:
        return int(self.pi.shape[0])


def structural_uncertainty(n: int, pairs: Any, outcomes: Any = None, *, model: PairModel = "bradley_terry",
                           C: float = 1.0, aggregation: Aggregation = "pagerank", damping: float = 0.85,
                           impl: Literal["numpy", "networkx"] = "numpy") -> SUResult:
    """Structural uncertainty from M trials of pairwise outcomes (pure: arrays in, floats out).

    Parameters
    ----------
    n : int
        Number of candidates N, >= 1.
    pairs : array_like of int, shape (M, E, 2)
        Each trial's compared pairs ``(i, j)`` (for paper B: the N - 1 edges of a random spanning tree).
    outcomes : array_like of float, shape (M, E), optional
        ``P(i beats j)`` per pair in [0, 1] (soft allowed; 0.5 = tie; NaN = missing). Default all 1.
    model : {"bradley_terry", "trueskill"}
        Pairwise model fitted per trial (paper B §3.2). Bradley–Terry uses the L2 penalty ``||θ||²/(2C)``;
        TrueSkill uses :func:`trueskill_ratings` and its probit win matrix.
    C : float
        Bradley–Terry inverse regularisation, > 0 (paper B: 1).
    aggregation : {"pagerank", "rank_centrality"}
        See :func:`ranking_distribution`.
    damping : float
        PageRank damping (default 0.85, reasonshape choice: paper B does not publish it).
    impl : {"numpy", "networkx"}
        PageRank implementation (see :func:`ranking_distribution`).

    Returns
    -------
    SUResult

    Raises
    ------
    ConfigError
        Malformed input or options.

    Notes
    -----
    Cost for N = 16, M = 8: well under 5 ms (``benchmarks/bench_su.py``): one batched Newton fit and one batched
    (M, N, N) linear solve.
    """
    p, y = _check_pairs(n, pairs, outcomes, batched=True)
    if model == "bradley_terry":
        theta = fit_bradley_terry_trials(n, p, y, C=C)
        W = bradley_terry_win_matrix(theta)
    elif model == "trueskill":
        import trueskill

        env = trueskill.TrueSkill()
        rated = [trueskill_ratings(n, p[m], y[m], env=env) for m in range(p.shape[0])]
        theta = np.stack([mu for mu, _ in rated])
        W = np.stack([trueskill_win_matrix(mu, sg, beta=env.beta) for mu, sg in rated])
    else:
        raise ConfigError(f"model must be 'bradley_terry' or 'trueskill', got {model!r}")
    pi = ranking_distribution(W, method=aggregation, damping=damping, impl=impl)
    U, A, I = _decompose(pi)  # noqa: E741
    ln_n = math.log(n)
    norm = (lambda v: v / ln_n) if n > 1 else (lambda v: 0.0)
    return SUResult(theta=theta, pi=pi, pibar=pi.mean(axis=0), total=U, ambiguity=A, instability=I,
                    total_norm=norm(U), ambiguity_norm=norm(A), instability_norm=norm(I),
                    preference_mass=_preference_mass(pi), rank_stability=_rank_stability(pi))


# ===================================================================================================== judge I/O
#: What a judge reply without a readable verdict becomes (:class:`PairwiseJudge` ``unparsed``): a tie (0.5), or
#: left out of the Bradley–Terry fit.
UNPARSED_POLICIES = ("tie", "drop")

#: The judge's user message. Placeholders: ``{puzzle}``, ``{answer_a}``, ``{reasoning_a}``, ``{answer_b}``,
#: ``{reasoning_b}``. Source: reasonshape choice (paper B's prompt is not public).
DEFAULT_JUDGE_TEMPLATE = """\
You are comparing two candidate solutions to the same puzzle. Decide which candidate is more likely to be \
correct and better reasoned. Check the final answers against the puzzle's rules; prefer sound reasoning over length.

# Puzzle
{puzzle}

# Candidate A
## Final answer
{answer_a}
## Reasoning
{reasoning_a}

# Candidate B
## Final answer
{answer_b}
## Reasoning
{reasoning_b}

# Your verdict
Think briefly if you need to, then end your reply with exactly one line: "Verdict: A", "Verdict: B" or \
"Verdict: tie".
"""

_VERDICT_PATTERNS = (
    # "Verdict: A", "**Verdict:** B", "verdict = tie" (bounded gap: linear time)
    re.compile(r"verdict\W{0,6}(A|B|tie)\b", re.IGNORECASE),
    re.compile(r"\[\[\s{0,3}(A|B|tie)\s{0,3}\]\]", re.IGNORECASE),
    re.compile(r"<verdict>\s{0,3}(A|B|tie)\s{0,3}</verdict>", re.IGNORECASE),
    re.compile(r"\b(?:candidate|answer|solution|response)\s{1,3}(A|B)\s{1,3}(?:is|was)\s{1,3}"
               r"(?:better|best|correct|preferred|more)\b", re.IGNORECASE),
)


def parse_verdict(text: str) -> Literal["A", "B", "tie"] | None:
    """Read the judge's verdict from its reply; ``None`` when there is none.

    Tried in order, each taking its LAST match after ``<think>`` blocks are removed: ``Verdict: X`` (any
    punctuation or markdown between, case-insensitive), ``[[X]]``, ``<verdict>X</verdict>``, "candidate X is
    better/correct/preferred"; finally a reply that is just ``A``, ``B`` or ``tie``. Linear time (bounded gaps).
    """
    if not isinstance(text, str):
        return None
    found = _find_verdict(strip_think(text))
    return None if found is None else found[0]


def _find_verdict(body: str) -> tuple[Literal["A", "B", "tie"], int] | None:
    """``(verdict, offset of its word in body)`` by :func:`parse_verdict`'s rules (``body``: think blocks removed)."""
    for pat in _VERDICT_PATTERNS:
        found = None
        for found in pat.finditer(body):  # noqa: B007 - keep the last match
            pass
        if found is not None:
            return _norm_verdict(found.group(1)), found.start(1)
    bare = body.strip().strip(".*:!\"' \n").strip()
    if bare.lower() in ("a", "b", "tie"):
        return _norm_verdict(bare), body.find(bare)
    return None


def _norm_verdict(v: str) -> Literal["A", "B", "tie"]:
    v = v.strip()
    return "tie" if v.lower() == "tie" else ("A" if v.upper() == "A" else "B")  # type: ignore[return-value]


def _verdict_token(logprobs: Sequence[Any], verdict: str) -> Any | None:
    """The logprob entry of the token that wrote ``verdict``: the verdict is read again from the generated tokens'
    text (:func:`parse_verdict`'s rules) and its word's offset mapped to the token holding it. ``None`` when the
    tokens' text gives no verdict or another one (e.g. the verdict came from a separate reasoning text)."""
    texts = [str(getattr(e, "token", "")) for e in logprobs]
    joined = "".join(texts)
    body = strip_think(joined)
    found = _find_verdict(body)
    if found is None or found[0] != verdict:
        return None
    if joined.endswith(body):  # no think block, or one before the reply: body is a suffix
        at = len(joined) - len(body) + found[1]
    else:  # think blocks inside the reply: locate the same word by its text after the last think block
        at = joined.rfind(body[found[1]:])
        if at < 0:
            return None
    pos = 0
    for entry, t in zip(logprobs, texts, strict=True):
        if pos <= at < pos + len(t):
            return entry
        pos += len(t)
    return None


def verdict_probability_from_logprobs(logprobs: Sequence[Any] | None, verdict: str | None = None) -> float | None:
    """Soft ``P(A better than B)`` from the logprobs at the verdict token.

    With ``verdict`` (the parsed verdict), the verdict token is the one that wrote it: the verdict is read again
    from the tokens' text by :func:`parse_verdict`'s rules and located there, so words after the verdict ("Verdict:
    B\nA places two tents ...") are never taken for it. Without ``verdict``, it is the LAST generated token whose
    text (stripped) is ``A``, ``B`` or ``tie`` (any case for tie). Its top alternatives (and the token itself) give
    the masses ``p_A``, ``p_B``, ``p_tie`` (tokens whose stripped text matches); the result is
    ``(p_A + p_tie/2) / (p_A + p_B + p_tie)``.

    Parameters
    ----------
    logprobs : sequence of TokenLogprob, or None
        A sample's per-token logprobs (:class:`reasonshape.training.backends.TokenLogprob`).
    verdict : {"A", "B", "tie"}, optional
        The verdict :func:`parse_verdict` read from the reply (what :class:`PairwiseJudge` passes).

    Returns
    -------
    float in [0, 1], or None
        ``None`` when there are no logprobs or no verdict token: no token's text is a verdict word, or, with
        ``verdict``, the tokens' text does not give that verdict or its token is not a verdict word ("B." as one
        token); the caller then uses the hard verdict. Source: reasonshape choice (paper B: "optionally with a
        confidence").
    """
    if not logprobs:
        return None
    if verdict is not None:
        entry = _verdict_token(logprobs, verdict)
        return None if entry is None else _soft_at(entry)
    for entry in reversed(logprobs):
        tok = str(getattr(entry, "token", "")).strip()
        if tok in ("A", "B") or tok.lower() == "tie":
            return _soft_at(entry)
    return None


def _soft_at(entry: Any) -> float | None:
    """``(p_A + p_tie/2) / (p_A + p_B + p_tie)`` at one token's logprobs; ``None`` when the token is no verdict word
    or the masses are zero."""
    tok = str(getattr(entry, "token", "")).strip()
    if not (tok in ("A", "B") or tok.lower() == "tie"):
        return None
    cands = dict(getattr(entry, "top", {}) or {})
    cands.setdefault(getattr(entry, "token", tok), float(entry.logprob))
    mass = {"A": 0.0, "B": 0.0, "tie": 0.0}
    for t, lp in cands.items():
        s = str(t).strip()
        key = s if s in ("A", "B") else ("tie" if s.lower() == "tie" else None)
        if key is not None and lp is not None and math.isfinite(lp):
            mass[key] += math.exp(lp)
    total = mass["A"] + mass["B"] + mass["tie"]
    if total <= 0:
        return None
    return (mass["A"] + 0.5 * mass["tie"]) / total


def _completion_text(completion: Any) -> tuple[str, str | None]:
    """``(content, separate reasoning)`` of a string or a TRL conversational completion (list of messages)."""
    if isinstance(completion, str):
        return completion, None
    if isinstance(completion, Mapping):
        completion = [completion]
    if isinstance(completion, Sequence) and completion and all(isinstance(m, Mapping) for m in completion):
        msgs = [m for m in completion if m.get("role", "assistant") == "assistant"]
        if not msgs:  # only tool / user messages: nothing the policy wrote (never show a tool's answer as its own)
            return "", None
        msg = msgs[-1]
        content = msg.get("content") or ""
        if not isinstance(content, str):  # multimodal content parts
            content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
        reasoning = msg.get("reasoning_content") or msg.get("thinking") or msg.get("reasoning")
        return content, reasoning if isinstance(reasoning, str) else None
    raise ConfigError(f"a completion must be a string or a list of message dicts, got {type(completion).__name__}")


def candidate_parts(completion: Any) -> tuple[str, str]:
    """``(final answer, reasoning)`` of a completion, as the judge shows them.

    The final answer is the last ``<answer>`` block (:func:`reasonshape.envs.answer.extract_answer_block`) or
    ``"(no <answer> block)"``. The reasoning is the server-separated reasoning (``reasoning_content`` /
    ``thinking``) or the ``<think>`` block, else the content before its last ``<answer>`` tag.
    """
    from reasonshape.training.backends import split_reasoning

    content, reasoning = _completion_text(completion)
    if reasoning is None:
        reasoning, content = split_reasoning(content)
    answer = extract_answer_block(content)
    if reasoning is None or not reasoning.strip():
        cut = content.lower().rfind("<answer>")
        reasoning = content[:cut] if cut >= 0 else content
    return (answer if answer else "(no <answer> block)"), reasoning.strip()


_PIECES = re.compile(r"\s*\S+")


def truncate_middle(text: str, budget: int, tokenizer: Any = None, head_fraction: float = 1 / 3) -> str:
    """Cut ``text`` to at most ``budget`` tokens, keeping its head and tail, and mark the cut.

    Parameters
    ----------
    text : str
    budget : int
        Tokens kept, >= 1.
    tokenizer : optional
        Anything with ``encode(text, add_special_tokens=False) -> ids`` and ``decode(ids)`` (a ``transformers``
        tokenizer). Default: whitespace-separated words count as tokens (an approximation, no model needed).
    head_fraction : float
        Share of the budget given to the head (the rest keeps the tail, where the conclusion is).

    Returns
    -------
    str
        ``text`` unchanged when it fits; else ``head + "\\n[... K tokens cut ...]\\n" + tail``.

    Raises
    ------
    ConfigError
        ``budget < 1``.
    """
    if not isinstance(budget, int) or budget < 1:
        raise ConfigError(f"budget must be an integer >= 1 (tokens), got {budget!r}")
    if tokenizer is not None:
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) <= budget:
            return text
        h = int(budget * head_fraction)
        t = budget - h
        head, tail = tokenizer.decode(ids[:h]), tokenizer.decode(ids[len(ids) - t:])
        cut = len(ids) - budget
    else:
        pieces = _PIECES.findall(text)
        if len(pieces) <= budget:
            return text
        h = int(budget * head_fraction)
        t = budget - h
        head, tail = "".join(pieces[:h]), "".join(pieces[len(pieces) - t:])
        cut = len(pieces) - budget
    return f"{head.rstrip()}\n[... {cut} tokens cut ...]\n{tail.lstrip()}"


@dataclass(frozen=True)
class JudgeOutcome:
    """One judged prompt: ``p_first`` = P(the candidate shown as A is better) in [0, 1], or NaN when dropped.

    ``verdict`` is the parsed verdict (None if unparseable); ``soft`` says whether ``p_first`` came from logprobs.
    """

    p_first: float
    verdict: str | None
    soft: bool


@dataclass
class PairwiseJudge:
    """The self-preference judge: a backend (serving the policy, with its chat template) plus prompt settings.

    Parameters
    ----------
    backend : GenerationBackend
        Any :mod:`reasonshape.training.backends` backend. The judge sends chat messages, so the backend applies
        the policy's own chat template (paper B: the SAME model judges).
    max_candidate_tokens : int
        Token budget per candidate (final answer + reasoning); the answer gets at most half, the reasoning the
        rest, cut in the middle with a marker (:func:`truncate_middle`).
    both_orders : bool
        Judge every edge in both orders (A, B) and (B, A) and average ``(p1 + 1 - p2) / 2``, cancelling position
        bias (doubles the calls). Otherwise each edge is shown once, in a random order.
    temperature, top_p, max_tokens : sampling of the judge's reply.
    logprobs : int or None
        Top-k logprobs to request for the soft probability (:func:`verdict_probability_from_logprobs`); ``None``
        = hard verdicts only.
    unparsed : {"tie", "drop"}
        An unparseable reply counts as a tie (0.5) or is dropped from the fit.
    tokenizer : optional
        For token-exact truncation; default: the backend's ``tokenizer`` attribute when it has one, else words.
    template : str
        User-message template (:data:`DEFAULT_JUDGE_TEMPLATE` placeholders).
    system_prompt : str or None
        Optional system message.
    prompt_format : {"conversational", "standard"}
        How a comparison is sent (:meth:`messages`): chat messages (the backend applies the judge's chat template),
        or one string, system prompt and comparison separated by a blank line, for a judge without a chat template
        (a base model trained or evaluated with ``prompt_format: standard`` judging itself).

    Notes
    -----
    Source: paper B §3.1 (same-model pairwise self-preference, optional confidence); prompt wording, truncation,
    parsing and the both-orders option are reasonshape choices.
    """

    backend: Any
    max_candidate_tokens: int = 1024
    both_orders: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 512
    logprobs: int | None = 5
    unparsed: Literal["tie", "drop"] = "tie"
    tokenizer: Any = None
    template: str = DEFAULT_JUDGE_TEMPLATE
    system_prompt: str | None = None
    prompt_format: Literal["conversational", "standard"] = "conversational"

    def __post_init__(self):
        if self.prompt_format not in PROMPT_FORMATS:
            raise ConfigError(f"prompt_format must be 'conversational' or 'standard', got {self.prompt_format!r}")
        if not hasattr(self.backend, "generate"):
            raise ConfigError(f"backend must have a generate(...) method, got {type(self.backend).__name__}")
        if not isinstance(self.max_candidate_tokens, int) or self.max_candidate_tokens < 2:
            raise ConfigError(f"max_candidate_tokens must be an integer >= 2, got {self.max_candidate_tokens!r}")
        if self.unparsed not in UNPARSED_POLICIES:
            raise ConfigError(f"unparsed must be 'tie' or 'drop', got {self.unparsed!r}")
        for key in ("{puzzle}", "{answer_a}", "{reasoning_a}", "{answer_b}", "{reasoning_b}"):
            if key not in self.template:
                raise ConfigError(f"template must contain the placeholder {key}")
        if self.tokenizer is None:
            self.tokenizer = getattr(self.backend, "tokenizer", None)

    def render_candidate(self, completion: Any) -> tuple[str, str]:
        """The candidate's ``(final answer, reasoning)``, truncated to the budget."""
        answer, reasoning = candidate_parts(completion)
        half = max(1, self.max_candidate_tokens // 2)
        answer = truncate_middle(answer, half, self.tokenizer, head_fraction=0.5)
        used = self._count(answer)
        reasoning = truncate_middle(reasoning or "(none)", max(1, self.max_candidate_tokens - used), self.tokenizer)
        return answer, reasoning

    def _count(self, text: str) -> int:
        if self.tokenizer is not None:
            return len(self.tokenizer.encode(text, add_special_tokens=False))
        return len(_PIECES.findall(text))

    def messages(self, puzzle: str, first: tuple[str, str], second: tuple[str, str]) -> list[dict[str, str]] | str:
        """The prompt asking to compare ``first`` (shown as A) with ``second`` (shown as B): chat messages, or one
        string when ``prompt_format`` is ``"standard"``."""
        user = self.template.format(puzzle=puzzle.strip(), answer_a=first[0], reasoning_a=first[1],
                                    answer_b=second[0], reasoning_b=second[1])
        if self.prompt_format == "standard":
            return f"{self.system_prompt}\n\n{user}" if self.system_prompt else user
        msgs = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return msgs + [{"role": "user", "content": user}]

    def outcome(self, sample: Any) -> JudgeOutcome:
        """Turn one judge reply (a :class:`~reasonshape.training.backends.Sample`) into a :class:`JudgeOutcome`."""
        verdict = parse_verdict(sample.text) or parse_verdict(sample.reasoning_text or "")
        soft = verdict_probability_from_logprobs(sample.logprobs, verdict) if verdict is not None else None
        if soft is not None:
            return JudgeOutcome(float(soft), verdict, True)
        if verdict is None:
            return JudgeOutcome(0.5 if self.unparsed == "tie" else math.nan, None, False)
        return JudgeOutcome({"A": 1.0, "B": 0.0, "tie": 0.5}[verdict], verdict, False)

    def judge(self, prompts: Sequence[Sequence[Mapping[str, str]]], seed: int | None = None) -> list[JudgeOutcome]:
        """Send all judge prompts in ONE ``backend.generate`` call and read the outcomes (one per prompt)."""
        if not prompts:
            return []
        samples = self.backend.generate(list(prompts), n=1, temperature=self.temperature, top_p=self.top_p,
                                        max_tokens=self.max_tokens, seed=seed, logprobs=self.logprobs)
        return [self.outcome(s[0]) for s in samples]


# ===================================================================================================== batch scoring
@dataclass(frozen=True)
class Group:
    """One query and its N candidate completions (strings or TRL conversational completions)."""

    prompt: str
    completions: Sequence[Any]


@dataclass(frozen=True)
class GroupScore:
    """Structural uncertainty of one group plus the judge's bookkeeping.

    Attributes
    ----------
    su : SUResult
        The scores (U, A, I, normalised, per-candidate preference mass and rank stability).
    pairs : ndarray of int, shape (M, N - 1, 2)
        The trials' spanning-tree edges.
    outcomes : ndarray of float, shape (M, N - 1)
        ``P(i beats j)`` per edge (NaN = dropped).
    n_judge_prompts : int
        Prompts sent for this group: ``M·(N-1)``, doubled with ``both_orders``.
    n_unparsed : int
        Replies without a readable verdict.
    n_soft : int
        Replies whose probability came from logprobs.
    position_consistency : float or None
        With ``both_orders``: share of edges whose two parsed verdicts name the same candidate (or both tie);
        1 = no position bias, 0 = e.g. an always-"A" judge. ``None`` otherwise or when nothing parsed.
    dispersion : float
        Entropy (nats) of the candidates' canonicalised final answers (:func:`answer_dispersion`).
    """

    su: SUResult
    pairs: np.ndarray
    outcomes: np.ndarray
    n_judge_prompts: int
    n_unparsed: int
    n_soft: int
    position_consistency: float | None
    dispersion: float

    @property
    def instability(self) -> float:
        return self.su.instability

    @property
    def ambiguity(self) -> float:
        return self.su.ambiguity

    @property
    def total(self) -> float:
        return self.su.total

    @property
    def preference_mass(self) -> np.ndarray:
        return self.su.preference_mass

    @property
    def rank_stability(self) -> np.ndarray:
        return self.su.rank_stability

    @property
    def no_verdict(self) -> bool:
        """The judge gave no readable verdict in the group (every reply unparsed): its preference masses and U / A /
        I come from the unparsed-reply fallback alone, so rewards and reports leave them out (ties alone measure
        nothing; reasonshape choice)."""
        return bool(self.n_judge_prompts) and self.n_unparsed == self.n_judge_prompts

    def metrics(self) -> dict[str, float]:
        """Group-level numbers for logging (NaN-free: ``position_consistency`` is left out when None)."""
        out = {
            "su/total": self.su.total, "su/ambiguity": self.su.ambiguity, "su/instability": self.su.instability,
            "su/total_norm": self.su.total_norm, "su/ambiguity_norm": self.su.ambiguity_norm,
            "su/instability_norm": self.su.instability_norm, "su/dispersion": self.dispersion,
            "su/unparsed_rate": self.n_unparsed / self.n_judge_prompts if self.n_judge_prompts else 0.0,
        }
        if self.position_consistency is not None:
            out["su/position_consistency"] = self.position_consistency
        return out


def _as_group(g: Any, i: int) -> Group:
    if isinstance(g, Group):
        grp = g
    elif isinstance(g, Sequence) and not isinstance(g, str) and len(g) == 2:
        grp = Group(g[0], g[1])
    elif isinstance(g, Mapping) and "prompt" in g and "completions" in g:
        grp = Group(g["prompt"], g["completions"])
    else:
        raise ConfigError(f"groups[{i}] must be a Group, a (prompt, completions) pair or a dict with those keys")
    if not isinstance(grp.prompt, str):
        raise ConfigError(f"groups[{i}].prompt must be the query text (str), got {type(grp.prompt).__name__}")
    if isinstance(grp.completions, str) or not isinstance(grp.completions, Sequence) or len(grp.completions) < 1:
        raise ConfigError(f"groups[{i}].completions must be a non-empty list of completions")
    return grp


def score_groups(
    groups: Sequence[Any],
    judge: Any,
    m: int = 8,
    seed: int = 0,
    *,
    model: PairModel = "bradley_terry",
    C: float = 1.0,
    aggregation: Aggregation = "pagerank",
    damping: float = 0.85,
    canonicalize: Callable[[Any], Hashable | None] | None = None,
) -> list[GroupScore]:
    """Structural uncertainty for a batch of groups, with ONE batched judge call for the whole batch.

    Parameters
    ----------
    groups : sequence
        Each a :class:`Group`, a ``(prompt, completions)`` pair or a ``{"prompt", "completions"}`` dict; the prompt
        is the puzzle text shown to the judge, the completions the N candidates (strings or TRL conversational
        completions; ``reasoning_content`` is read).
    judge : PairwiseJudge or GenerationBackend
        A backend is wrapped in ``PairwiseJudge(backend)`` with default settings.
    m : int
        Trials M per group, >= 1 (M·(N-1) judge prompts per group; doubled with ``both_orders``).
    seed : int
        Seeds the trees, the edge orientations (group g uses ``numpy.random.default_rng([seed, g])``) and the
        judge's sampling.
    model, C, aggregation, damping
        See :func:`structural_uncertainty`.
    canonicalize : callable, optional
        Completion -> hashable canonical final answer (None = unparseable) for the dispersion baseline; default
        :func:`canonical_answer`. Pass e.g. ``lambda c: puzzle.parse_answer(text_of(c), inst).value`` for
        puzzle-exact canonicalisation.

    Returns
    -------
    list of GroupScore
        One per group, in order. A group with N = 1 sends no prompt and gets U = A = I = 0.

    Raises
    ------
    ConfigError
        Malformed groups or options.
    BackendError
        The judge's backend failed.

    Notes
    -----
    Each edge is shown once in a random order (or in both orders with ``judge.both_orders``); outcomes are mapped
    back to ``P(i beats j)`` for the tree edge ``(i, j)``. The prompts of all groups, trials and edges go to
    ``judge.backend.generate`` in a single call, never one at a time (METHOD.md §E).
    """
    _check_m(m)
    judge = judge if isinstance(judge, PairwiseJudge) else PairwiseJudge(judge)
    canon = canonicalize or canonical_answer
    parsed = [_as_group(g, i) for i, g in enumerate(groups)]
    plans = []  # per group: (pairs (M,E,2), flips (M,E) bool, first prompt index)
    prompts: list[list[dict[str, str]]] = []
    for gi, grp in enumerate(parsed):
        n = len(grp.completions)
        rng = np.random.default_rng([seed, gi])
        pairs = sample_spanning_trees(n, m, rng)
        flips = rng.random(pairs.shape[:2]) < 0.5
        start = len(prompts)
        if n > 1:
            rendered = [judge.render_candidate(c) for c in grp.completions]
            for mi in range(m):
                for e in range(n - 1):
                    i, j = (int(x) for x in pairs[mi, e])
                    a, b = (j, i) if flips[mi, e] else (i, j)
                    prompts.append(judge.messages(grp.prompt, rendered[a], rendered[b]))
                    if judge.both_orders:
                        prompts.append(judge.messages(grp.prompt, rendered[b], rendered[a]))
        plans.append((pairs, flips, start, len(prompts)))
    results = judge.judge(prompts, seed=seed)
    scores = []
    for grp, (pairs, flips, start, stop) in zip(parsed, plans, strict=True):
        n = len(grp.completions)
        mine = results[start:stop]
        per_edge = 2 if judge.both_orders else 1
        y = np.full(pairs.shape[:2], 0.5)
        agree: list[bool] = []
        for k in range(pairs.shape[0] * pairs.shape[1] if n > 1 else 0):
            mi, e = divmod(k, n - 1)
            first = mine[k * per_edge]
            p_a = first.p_first  # P(candidate shown first beats the other)
            if judge.both_orders:
                second = mine[k * per_edge + 1]
                p_a = np.nanmean([first.p_first, 1.0 - second.p_first]) if not (
                    math.isnan(first.p_first) and math.isnan(second.p_first)) else math.nan
                if first.verdict is not None and second.verdict is not None:
                    agree.append((first.verdict, second.verdict) in (("A", "B"), ("B", "A"), ("tie", "tie")))
            y[mi, e] = (1.0 - p_a) if flips[mi, e] else p_a
        su = structural_uncertainty(n, pairs, y, model=model, C=C, aggregation=aggregation, damping=damping)
        scores.append(GroupScore(
            su=su, pairs=pairs, outcomes=y, n_judge_prompts=stop - start,
            n_unparsed=sum(r.verdict is None for r in mine), n_soft=sum(r.soft for r in mine),
            position_consistency=(sum(agree) / len(agree)) if (judge.both_orders and agree) else None,
            dispersion=answer_dispersion([canon(c) for c in grp.completions]),
        ))
    return scores


def score_group(prompt: str, completions: Sequence[Any], judge: Any, m: int = 8, seed: int = 0,
                **kwargs: Any) -> GroupScore:
    """:func:`score_groups` for a single group (one batched judge call for its M·(N-1) prompts)."""
    return score_groups([Group(prompt, completions)], judge, m=m, seed=seed, **kwargs)[0]


# ===================================================================================================== baselines
def canonical_answer(completion: Any) -> str | None:
    """A completion's final answer in canonical form, or ``None`` when it has no ``<answer>`` block.

    The last ``<answer>`` block (``<think>`` removed, fences dropped), each line re-tokenised with
    :func:`reasonshape.envs.answer.split_tokens` and re-joined with single spaces, empty lines dropped, cells
    upper-cased: ``"T . .\\n. T ."`` and ``"t,.,.\\n.,T,."`` canonicalise alike. Puzzle-exact canonicalisation
    (parsing the grid) can be passed to :func:`score_groups` instead.
    """
    content, _ = _completion_text(completion)
    block = extract_answer_block(content)
    if block is None:
        return None
    lines = [" ".join(split_tokens(ln)).upper() for ln in block.splitlines()]
    text = "\n".join(ln for ln in lines if ln)
    return text or None


def answer_dispersion(answers: Sequence[Hashable | None], normalize: bool = False) -> float:
    """Entropy of the empirical distribution of canonical final answers (the self-consistency dispersion baseline).

    Parameters
    ----------
    answers : sequence of hashable or None
        One canonical answer per candidate; ``None`` = unparseable, and each ``None`` counts as its own distinct
        answer (no agreement can be read from failures; reasonshape choice).
    normalize : bool
        Divide by ln N (N = number of answers); 0.0 when N = 1.

    Returns
    -------
    float
        In [0, ln N] nats (or [0, 1] normalised): 0 when all answers agree, ln N when all differ.

    Raises
    ------
    ConfigError
        ``answers`` is empty.
    """
    answers = list(answers)
    if not answers:
        raise ConfigError("answers must be non-empty")
    keys = [("__none__", i) if a is None else ("ans", a) for i, a in enumerate(answers)]
    counts = np.array(list(_count(keys).values()), dtype=float)
    h = float(special.entr(counts / counts.sum()).sum())
    if normalize:
        return h / math.log(len(answers)) if len(answers) > 1 else 0.0
    return h


def _count(keys: list) -> dict:
    out: dict = {}
    for k in keys:
        out[k] = out.get(k, 0) + 1
    return out


def auroc(scores: Any, positive: Any) -> float | None:
    """Area under the ROC curve of ``scores`` for separating ``positive`` items from the rest.

    Computed as the Mann–Whitney U statistic of the positives' scores against the negatives' divided by
    ``n_pos · n_neg`` (``scipy.stats.mannwhitneyu``; sklearn is not a dependency): the probability that a random
    positive scores above a random negative, ties counting 1/2.

    Parameters
    ----------
    scores : array_like of float, shape (K,)
        Higher = more likely positive. Must be finite.
    positive : array_like of bool, shape (K,)

    Returns
    -------
    float in [0, 1], or None
        ``None`` when either class is empty (AUROC undefined).

    Raises
    ------
    ConfigError
        Shapes differ, or a score is not finite.

    Examples
    --------
    >>> auroc([0.9, 0.8, 0.1, 0.2], [True, True, False, False])
    1.0
    >>> auroc([0.5, 0.5], [True, False])
    0.5
    """
    s = np.asarray(scores, dtype=float)
    pos = np.asarray(positive, dtype=bool)
    if s.shape != pos.shape or s.ndim != 1:
        raise ConfigError(f"scores and positive must be 1-D of the same length, got {s.shape} and {pos.shape}")
    if not np.all(np.isfinite(s)):
        raise ConfigError("scores must be finite")
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if n1 == 0 or n0 == 0:
        return None
    u = stats.mannwhitneyu(s[pos], s[~pos], alternative="two-sided", method="asymptotic").statistic
    return float(u) / (n1 * n0)


def flagging_auroc(incorrect: Any, dispersion: Any, structural: Any,
                   weights: tuple[float, float] = (0.5, 0.5)) -> dict[str, float | None]:
    """AUROC for flagging incorrect answers with the dispersion, structural and combined signals.

    Parameters
    ----------
    incorrect : array_like of bool, shape (K,)
        True where the item's answer (e.g. the group's majority or top-ranked answer) is wrong.
    dispersion : array_like of float, shape (K,)
        Answer dispersion per item (higher = more suspicious).
    structural : array_like of float, shape (K,)
        The structural signal per item, oriented so that higher = more suspicious (e.g. instability I or I/ln N;
        pass ``-A`` to use ambiguity, which paper B finds positively related to correctness on reasoning tasks).
    weights : (float, float)
        Weights of the two signals in the combination.

    Returns
    -------
    dict
        ``{"dispersion": ..., "structural": ..., "combined": ...}``, each a float in [0, 1] or None (one class
        empty). The combined signal is the weighted mean of the two signals' rank percentiles (ties averaged),
        so neither signal's scale dominates (reasonshape choice; paper B reports that combining helps on logic and
        math).

    Raises
    ------
    ConfigError
        Shapes differ or values are not finite.
    """
    d = np.asarray(dispersion, dtype=float)
    s = np.asarray(structural, dtype=float)
    if d.shape != s.shape:
        raise ConfigError(f"dispersion and structural must have the same shape, got {d.shape} and {s.shape}")
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(s))):
        raise ConfigError("dispersion and structural must be finite")
    k = max(len(d) - 1, 1)
    combined = weights[0] * (stats.rankdata(d) - 1) / k + weights[1] * (stats.rankdata(s) - 1) / k
    return {"dispersion": auroc(d, incorrect), "structural": auroc(s, incorrect), "combined": auroc(combined,
                                                                                                   incorrect)}

