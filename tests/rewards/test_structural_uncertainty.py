"""Tests of reasonshape.rewards.structural_uncertainty (paper B; METHOD.md §E).

Judges are scripted fake backends (a consistent, a random, an always-"A" and a garbage judge) except one end-to-end
test on the tiny local model. Hand-derived values show their arithmetic in comments.
"""

from __future__ import annotations

import itertools
import math
import re
from types import SimpleNamespace

import choix
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from reasonshape.errors import ConfigError
from reasonshape.rewards.structural_uncertainty import (
    Group,
    PairwiseJudge,
    answer_dispersion,
    auroc,
    bradley_terry_win_matrix,
    candidate_parts,
    canonical_answer,
    decompose,
    fit_bradley_terry,
    fit_bradley_terry_trials,
    flagging_auroc,
    parse_verdict,
    preference_mass,
    random_spanning_tree,
    rank_stability,
    ranking_distribution,
    sample_spanning_trees,
    score_group,
    score_groups,
    structural_uncertainty,
    trueskill_ratings,
    trueskill_win_matrix,
    truncate_middle,
    verdict_probability_from_logprobs,
)
from reasonshape.training.backends import Sample, TokenLogprob

FAST = settings(max_examples=40, deadline=None)


def _tree_case(seed: int, n: int, m: int = 1):
    rng = np.random.default_rng(seed)
    pairs = sample_spanning_trees(n, m, rng)
    return rng, pairs


# ============================================================================================ spanning trees
class TestSpanningTrees:
    @pytest.mark.parametrize("n", [1, 2, 3, 7, 16])
    def test_is_a_spanning_tree(self, n):
        edges = random_spanning_tree(n, np.random.default_rng(n))
        assert edges.shape == (n - 1, 2)
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from(edges.tolist())
        assert nx.is_tree(g)

    def test_uniform_over_the_16_trees_on_4_nodes(self):
        # Cayley: 4^(4-2) = 16 labelled trees; 3200 draws -> 200 expected each; chi-square goodness of fit.
        rng = np.random.default_rng(0)
        counts: dict[tuple, int] = {}
        for _ in range(3200):
            key = tuple(map(tuple, random_spanning_tree(4, rng).tolist()))
            counts[key] = counts.get(key, 0) + 1
        assert len(counts) == 16
        assert stats.chisquare(list(counts.values())).pvalue > 1e-3

    def test_trials_are_reproducible(self):
        a = sample_spanning_trees(6, 5, np.random.default_rng(1))
        b = sample_spanning_trees(6, 5, np.random.default_rng(1))
        assert a.shape == (5, 5, 2) and np.array_equal(a, b)

    @pytest.mark.parametrize("n, m", [(0, 1), (3, 0), (-1, 2)])
    def test_bad_sizes(self, n, m):
        with pytest.raises(ConfigError):
            sample_spanning_trees(n, m, np.random.default_rng(0))


# ============================================================================================ Bradley–Terry
class TestBradleyTerry:
    def test_two_candidates_hand_value(self):
        # One comparison won by 0, C = 1: by symmetry θ = (t, -t); stationarity t/C - (1 - σ(2t)) = 0, i.e.
        # t + σ(2t) = 1. t = 0.3374: 0.3374 + σ(0.6748) = 0.3374 + 0.66257 = 1.0000.
        theta = fit_bradley_terry(2, [(0, 1)])
        t = theta[0]
        assert theta[1] == pytest.approx(-t, abs=1e-12)
        assert t + special.expit(2 * t) == pytest.approx(1.0, abs=1e-10)
        assert t == pytest.approx(0.3374, abs=1e-4)

    def test_tie_gives_zero(self):
        assert np.allclose(fit_bradley_terry(3, [(0, 1), (1, 2)], [0.5, 0.5]), 0.0, atol=1e-12)

    @FAST
    @given(seed=st.integers(0, 10_000), n=st.integers(2, 12), C=st.sampled_from([0.25, 1.0, 4.0]))
    def test_matches_choix_on_hard_outcomes(self, seed, n, C):
        rng, pairs = _tree_case(seed, n)
        won = rng.random(n - 1) < 0.5
        data = [(i, j) if w else (j, i) for (i, j), w in zip(pairs[0].tolist(), won, strict=True)]
        ours = fit_bradley_terry(n, pairs[0], won.astype(float), C=C)
        ref = choix.opt_pairwise(n, data, alpha=1.0 / (2.0 * C), tol=1e-12)
        assert np.allclose(ours, ref, atol=1e-6)

    @FAST
    @given(seed=st.integers(0, 10_000), n=st.integers(2, 10))
    def test_soft_newton_matches_scipy(self, seed, n):
        rng, pairs = _tree_case(seed, n)
        extra = rng.integers(0, n, size=(3, 2))
        extra = extra[extra[:, 0] != extra[:, 1]]  # non-tree pairs too
        p = np.concatenate([pairs[0], extra])
        y = rng.random(len(p))
        assert np.allclose(fit_bradley_terry(n, p, y), fit_bradley_terry(n, p, y, method="scipy"), atol=1e-6)

    def test_outcome_of_reversed_pair_is_complement(self):
        a = fit_bradley_terry(3, [(0, 1), (2, 1)], [0.8, 0.3])
        b = fit_bradley_terry(3, [(1, 0), (1, 2)], [0.2, 0.7])
        assert np.allclose(a, b, atol=1e-12)

    def test_nan_outcome_drops_the_pair(self):
        a = fit_bradley_terry(3, [(0, 1), (1, 2)], [1.0, math.nan])
        b = fit_bradley_terry(3, [(0, 1)], [1.0])
        assert np.allclose(a, b, atol=1e-12)

    def test_batched_equals_one_by_one(self):
        rng, pairs = _tree_case(3, 9, m=4)
        y = rng.random((4, 8))
        batched = fit_bradley_terry_trials(9, pairs, y)
        for m in range(4):
            assert np.allclose(batched[m], fit_bradley_terry(9, pairs[m], y[m]), atol=1e-12)

    def test_strongly_separated_data_converges(self):
        # a chain 0 > 1 > ... > 15 with tiny regularisation: large θ, still a finite maximiser
        pairs = np.array([(i, i + 1) for i in range(15)])
        theta = fit_bradley_terry(16, pairs, C=100.0)
        assert np.all(np.isfinite(theta)) and np.all(np.diff(theta) < 0)
        ref = choix.opt_pairwise(16, [tuple(p) for p in pairs.tolist()], alpha=1 / 200, tol=1e-12)
        assert np.allclose(theta, ref, atol=1e-5)

    @pytest.mark.parametrize("pairs, outcomes, C, match", [
        ([(0, 0)], None, 1.0, "different candidates"),
        ([(0, 3)], None, 1.0, r"indices in \[0, 2\]"),
        ([(0, 1)], [1.5], 1.0, "probabilities"),
        ([(0, 1)], [1.0, 0.0], 1.0, "one per pair"),
        ([(0, 1)], None, 0.0, "C "),
        ([(0, 1, 2)], None, 1.0, "shape"),
    ])
    def test_bad_input(self, pairs, outcomes, C, match):
        with pytest.raises(ConfigError, match=match):
            fit_bradley_terry(3, pairs, outcomes, C=C)


# ============================================================================================ ranking distributions
def _pagerank_python(W: np.ndarray, damping: float, iters: int = 5000) -> np.ndarray:
    """Slow, obvious reference: power iteration on the loser -> winner graph, row-normalised."""
    n = len(W)
    pi = [1.0 / n] * n
    for _ in range(iters):
        new = [(1.0 - damping) / n] * n
        for j in range(n):  # j loses to i with weight W[i][j]
            out = sum(W[i][j] for i in range(n) if i != j)
            for i in range(n):
                if i != j:
                    new[i] += damping * pi[j] * W[i][j] / out
        pi = new
    return np.array(pi)


class TestRankingDistribution:
    @FAST
    @given(theta=st.lists(st.floats(-4, 4), min_size=1, max_size=12))
    def test_rank_centrality_equals_softmax(self, theta):
        th = np.array(theta)
        pi = ranking_distribution(bradley_terry_win_matrix(th), method="rank_centrality")
        assert np.allclose(pi, special.softmax(th), atol=1e-12, rtol=0)

    @pytest.mark.parametrize("damping", [0.0, 0.5, 0.85])
    def test_pagerank_matches_networkx_and_reference(self, damping):
        th = np.random.default_rng(0).normal(size=6)
        W = bradley_terry_win_matrix(th)
        ours = ranking_distribution(W, damping=damping)
        assert np.allclose(ours, ranking_distribution(W, damping=damping, impl="networkx"), atol=1e-9)
        assert np.allclose(ours, _pagerank_python(W, damping), atol=1e-9)

    def test_pagerank_orders_like_theta(self):
        th = np.array([0.3, -1.0, 2.0, 0.0])
        assert np.array_equal(np.argsort(ranking_distribution(bradley_terry_win_matrix(th))), np.argsort(th))

    def test_two_candidates_pagerank_is_uniform(self):
        # each node has one out-edge, so row normalisation erases the weights: π = (1/2, 1/2) for any θ
        assert np.allclose(ranking_distribution(bradley_terry_win_matrix([3.0, -3.0])), [0.5, 0.5])
        # rank centrality keeps them: softmax(3, -3) = (1, e^-6) / (1 + e^-6)
        rc = ranking_distribution(bradley_terry_win_matrix([3.0, -3.0]), method="rank_centrality")
        assert rc[0] == pytest.approx(1 / (1 + math.exp(-6)))

    def test_batched_and_single(self):
        W = bradley_terry_win_matrix(np.random.default_rng(1).normal(size=(3, 5)))
        batched = ranking_distribution(W)
        assert batched.shape == (3, 5)
        for m in range(3):
            assert np.allclose(batched[m], ranking_distribution(W[m]))

    def test_one_candidate(self):
        assert ranking_distribution(np.array([[0.5]])).tolist() == [1.0]

    @pytest.mark.parametrize("W, kwargs, match", [
        (np.ones((2, 3)) / 2, {}, "square"),
        (np.full((2, 2), 1.5), {}, r"\[0, 1\]"),
        (np.full((2, 2), 0.5), {"damping": 1.0}, "damping"),
        (np.full((2, 2), 0.5), {"method": "hits"}, "method"),
        (np.full((2, 2), 0.5), {"impl": "igraph"}, "impl"),
    ])
    def test_bad_input(self, W, kwargs, match):
        with pytest.raises(ConfigError, match=match):
            ranking_distribution(W, **kwargs)


# ============================================================================================ decomposition
prob_rows = st.integers(2, 8).flatmap(lambda n: st.lists(
    st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n).filter(lambda r: sum(r) > 1e-3), min_size=1, max_size=6))


class TestDecomposition:
    def test_hand_values(self):
        # π^(1) = (1, 0), π^(2) = (0, 1): π̄ = (1/2, 1/2), U = ln 2, A = 0, I = ln 2
        U, A, I = decompose([[1.0, 0.0], [0.0, 1.0]])  # noqa: E741
        assert (U, A, I) == pytest.approx((math.log(2), 0.0, math.log(2)))
        assert preference_mass([[1.0, 0.0], [0.0, 1.0]]).tolist() == [0.0, 0.0]
        # one trial (3/4, 1/4): mass N·π̄ - 1 = (0.5, -0.5)
        assert preference_mass([[0.75, 0.25]]).tolist() == pytest.approx([0.5, -0.5])

    def test_a_subnormal_probability_whose_mean_underflows_gives_finite_instability(self):
        # column 2's mean, 5e-324 / 2, rounds to 0: rel_entr(5e-324, 0) alone would make I infinite
        U, A, I = decompose([[0.0, 0.0, 1.0], [0.0, 5e-324, 1.0]])  # noqa: E741
        assert math.isfinite(I) and I == 0.0 and U == pytest.approx(A + I, abs=1e-12)

    @FAST
    @given(rows=prob_rows)
    def test_identity_and_bounds(self, rows):
        P = np.array(rows)
        P = P / P.sum(axis=1, keepdims=True)
        U, A, I = decompose(P)  # noqa: E741
        n = P.shape[1]
        assert I >= 0.0 and -1e-12 <= A <= U + 1e-12 and U <= math.log(n) + 1e-12
        assert U == pytest.approx(A + I, abs=1e-10)
        assert preference_mass(P).sum() == pytest.approx(0.0, abs=1e-9)
        stab = rank_stability(P)
        assert stab.shape == (n,) and np.all((stab >= 0) & (stab <= 1))

    @FAST
    @given(rows=prob_rows)
    def test_one_trial_has_zero_instability_exactly(self, rows):
        P = np.array(rows[:1])
        P = P / P.sum()
        U, A, I = decompose(P)  # noqa: E741
        assert I == 0.0 and U == A
        assert np.all(rank_stability(P) == 1.0)

    def test_rank_stability_hand_values(self):
        # ranks (normalised) of candidate 0: 0, 1 -> std 0.5 -> stability 1 - 2·0.5 = 0; same for candidate 1
        assert rank_stability([[0.7, 0.3], [0.3, 0.7]]).tolist() == [0.0, 0.0]
        # same order in every trial -> 1
        assert rank_stability([[0.5, 0.3, 0.2], [0.6, 0.3, 0.1]]).tolist() == [1.0, 1.0, 1.0]
        # candidate 2 ranks 2, 2, 0 over three trials (normalised 1, 1, 0): std = sqrt(2)/3 -> 1 - 2·0.4714
        stab = rank_stability([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
        assert stab[2] == pytest.approx(1 - 2 * math.sqrt(2) / 3)

    def test_bad_pis(self):
        with pytest.raises(ConfigError):
            decompose([[0.5, 0.6]])
        with pytest.raises(ConfigError):
            decompose([0.5, 0.5])


# ============================================================================================ judges, pure scoring
def _soft_consistent(theta_star, pairs):
    """A perfectly consistent judge: P(i beats j) from one fixed Bradley–Terry model, in every trial."""
    return special.expit(theta_star[pairs[..., 0]] - theta_star[pairs[..., 1]])


class TestJudgeRegimes:
    @pytest.mark.parametrize("aggregation", ["pagerank", "rank_centrality"])
    def test_consistent_judge_has_near_zero_instability(self, aggregation):
        n, m = 12, 8
        rng, pairs = _tree_case(5, n, m)
        theta_star = rng.normal(size=n)
        cons = structural_uncertainty(n, pairs, _soft_consistent(theta_star, pairs), aggregation=aggregation)
        rand = structural_uncertainty(n, pairs, (rng.random((m, n - 1)) < 0.5).astype(float),
                                      aggregation=aggregation)
        assert cons.instability_norm < 5e-3
        assert cons.instability < rand.instability / 5
        # the only source of instability left is the L2 shrinkage; without it the fit recovers θ* on any tree
        no_l2 = structural_uncertainty(n, pairs, _soft_consistent(theta_star, pairs), aggregation=aggregation,
                                       C=1e6)
        assert no_l2.instability < 1e-9

    @pytest.mark.parametrize("aggregation", ["pagerank", "rank_centrality"])
    def test_random_judge_is_unstable_and_ambiguous(self, aggregation):
        n, m = 10, 8
        rng, pairs = _tree_case(6, n, m)
        r = structural_uncertainty(n, pairs, (rng.random((m, n - 1)) < 0.5).astype(float), aggregation=aggregation)
        assert r.instability_norm > 1e-3
        assert r.ambiguity > 0.9 * math.log(n)
        assert r.total == pytest.approx(r.ambiguity + r.instability, abs=1e-10)

    def test_one_trial_gives_zero_instability(self):
        rng, pairs = _tree_case(7, 8, 1)
        r = structural_uncertainty(8, pairs, rng.random((1, 7)))
        assert r.instability == 0.0 and r.instability_norm == 0.0
        assert np.all(r.rank_stability == 1.0)

    def test_result_fields(self):
        rng, pairs = _tree_case(8, 5, 3)
        r = structural_uncertainty(5, pairs, rng.random((3, 4)))
        assert r.pi.shape == (3, 5) and r.theta.shape == (3, 5) and r.n_candidates == 5 and r.n_trials == 3
        assert np.allclose(r.pibar, r.pi.mean(axis=0))
        assert np.allclose(r.preference_mass, 5 * r.pibar - 1)
        assert r.total_norm == pytest.approx(r.total / math.log(5))

    def test_single_candidate(self):
        r = structural_uncertainty(1, np.zeros((4, 0, 2), dtype=int), np.zeros((4, 0)))
        assert (r.total, r.ambiguity, r.instability, r.total_norm) == (0.0, 0.0, 0.0, 0.0)
        assert r.pi.tolist() == [[1.0]] * 4

    def test_pagerank_networkx_impl_agrees(self):
        rng, pairs = _tree_case(9, 7, 4)
        y = rng.random((4, 6))
        a = structural_uncertainty(7, pairs, y)
        b = structural_uncertainty(7, pairs, y, impl="networkx")
        assert np.allclose(a.pi, b.pi, atol=1e-9)

    def test_trueskill_option(self):
        # star tree with centre 0 winning every comparison: 0 gets the largest μ and the largest π
        pairs = np.array([[(0, j) for j in range(1, 5)]] * 2)
        r = structural_uncertainty(5, pairs, np.ones((2, 4)), model="trueskill")
        assert np.argmax(r.pibar) == 0 and np.argmax(r.theta[0]) == 0
        assert np.allclose(r.pi.sum(axis=1), 1.0)
        mu, sigma = trueskill_ratings(2, [(0, 1)], [0.5])
        assert mu[0] == pytest.approx(mu[1])  # a draw between equals keeps them equal
        assert trueskill_win_matrix(mu, sigma)[0, 1] == pytest.approx(0.5)

    def test_unknown_model(self):
        with pytest.raises(ConfigError, match="model must be"):
            structural_uncertainty(2, [[(0, 1)]], [[1.0]], model="elo")


# ============================================================================================ judge I/O
class TestVerdictParsing:
    @pytest.mark.parametrize("text, expected", [
        ("Verdict: A", "A"),
        ("**Verdict:** B", "B"),
        ("verdict = tie", "tie"),
        ("A looks fine.\nVerdict: B", "B"),
        ("Verdict: A ... on reflection, Verdict: B", "B"),
        ("<think>Verdict: A</think>\nVerdict: B", "B"),
        ("My choice: [[A]]", "A"),
        ("<verdict>TIE</verdict>", "tie"),
        ("Candidate B is better because it checks row 2.", "B"),
        ("A", "A"),
        ("  tie.  ", "tie"),
        ("Verdict: C", None),
        ("I cannot decide", None),
        ("", None),
    ])
    def test_parse(self, text, expected):
        assert parse_verdict(text) == expected

    def test_long_garbage_is_linear(self):
        assert parse_verdict("verdict " * 200_000) is None

    def test_soft_probability_from_logprobs(self):
        # masses at the verdict token: A 0.7, B 0.2, tie 0.1 -> (0.7 + 0.1/2) / 1.0 = 0.75
        lps = (TokenLogprob("Verdict", -0.1, {}), TokenLogprob(":", -0.1, {}),
               TokenLogprob(" A", math.log(0.7), {" A": math.log(0.7), " B": math.log(0.2), " tie": math.log(0.1)}))
        assert verdict_probability_from_logprobs(lps) == pytest.approx(0.75)
        assert verdict_probability_from_logprobs(None) is None
        assert verdict_probability_from_logprobs((TokenLogprob("x", -1.0, {}),)) is None

    @staticmethod
    def _reply(*tokens: str, verdict_at: int, p_a: float) -> tuple:
        """Logprobs of a reply written token by token; the token at ``verdict_at`` has A / B masses p_a, 1 - p_a;
        every other token is certain."""
        top = {" A": math.log(p_a), " B": math.log(1 - p_a)}
        return tuple(TokenLogprob(t, top[t] if i == verdict_at else 0.0, top if i == verdict_at else {})
                     for i, t in enumerate(tokens))

    @pytest.mark.parametrize("tokens, verdict_at, p_a, verdict", [
        # words after the verdict line that are verdict letters too: the verdict's own token decides
        (("Verdict", ":", " B", "\n", "A", " places", " two", " tents"), 2, 0.1, "B"),
        (("Verdict", ":", " A", "\n", "B", " is", " weaker", "."), 2, 0.8, "A"),
        # a think block before the reply, which names the other candidate
        (("<think>", "Verdict", ":", " A", "?", "</think>", "Verdict", ":", " B"), 8, 0.3, "B"),
    ])
    def test_soft_probability_is_read_at_the_parsed_verdict(self, tokens, verdict_at, p_a, verdict):
        lps = self._reply(*tokens, verdict_at=verdict_at, p_a=p_a)
        text = "".join(tokens)
        assert parse_verdict(text) == verdict
        assert verdict_probability_from_logprobs(lps, verdict) == pytest.approx(p_a)
        judge = PairwiseJudge(backend=SimpleNamespace(generate=None))
        out = judge.outcome(Sample(text, None, 0, len(tokens), "stop", lps))
        assert (out.verdict, out.soft) == (verdict, True) and out.p_first == pytest.approx(p_a)

    def test_tokens_that_do_not_give_the_parsed_verdict_leave_the_hard_one(self):
        # the verdict came from the separate reasoning text; the reply's tokens hold none: no soft value
        lps = self._reply("I", " pick", " A", verdict_at=2, p_a=0.9)
        assert verdict_probability_from_logprobs(lps, "B") is None
        judge = PairwiseJudge(backend=SimpleNamespace(generate=None))
        out = judge.outcome(Sample("I pick", "Verdict: B", 0, 3, "stop", lps))
        assert (out.verdict, out.soft, out.p_first) == ("B", False, 0.0)


class TestCandidateRendering:
    def test_parts(self):
        assert candidate_parts("<think>R</think>so <answer>\nT .\n</answer>") == ("T .", "R")
        assert candidate_parts("steps here <answer>1 2</answer>") == ("1 2", "steps here")
        msg = [{"role": "assistant", "content": "<answer>X</answer>", "reasoning_content": "because"}]
        assert candidate_parts(msg) == ("X", "because")
        assert candidate_parts("no block at all") == ("(no <answer> block)", "no block at all")
        with pytest.raises(ConfigError):
            candidate_parts(42)

    def test_truncate_words(self):
        text = " ".join(f"w{i}" for i in range(100))
        assert truncate_middle(text, 100) == text
        # budget 10: head int(10/3) = 3 words, tail 7 words, 90 cut
        assert truncate_middle(text, 10) == "w0 w1 w2\n[... 90 tokens cut ...]\nw93 w94 w95 w96 w97 w98 w99"
        with pytest.raises(ConfigError):
            truncate_middle(text, 0)

    def test_truncate_with_tokenizer(self, tiny_model_dir):
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tiny_model_dir)
        text = "cell (3,4) is a tent. " * 50
        out = truncate_middle(text, 30, tok)
        head, tail = out.split("\n[... ")[0], out.split(" tokens cut ...]\n")[1]
        assert len(tok.encode(head, add_special_tokens=False)) + len(tok.encode(tail, add_special_tokens=False)) <= 32
        n_cut = int(re.search(r"\[\.\.\. (\d+) tokens cut", out).group(1))
        assert n_cut == len(tok.encode(text, add_special_tokens=False)) - 30

    def test_judge_prompt_contains_both_candidates_and_budget(self):
        judge = PairwiseJudge(backend=_FakeJudge("always_a"), max_candidate_tokens=20)
        a = judge.render_candidate("<think>" + "blah " * 100 + "</think><answer>CAND1</answer>")
        msgs = judge.messages("Solve the puzzle.", a, judge.render_candidate("<answer>CAND2</answer>"))
        user = msgs[-1]["content"]
        assert msgs[-1]["role"] == "user" and "Solve the puzzle." in user
        assert user.index("CAND1") < user.index("CAND2") and "tokens cut" in user

    def test_standard_judge_prompt_is_one_string(self):
        # a base model judging itself (prompt_format: standard) gets the same comparison as one string
        chat = PairwiseJudge(backend=_FakeJudge("always_a"), system_prompt="Be fair.")
        std = PairwiseJudge(backend=_FakeJudge("always_a"), system_prompt="Be fair.", prompt_format="standard")
        a, b = chat.render_candidate("<answer>CAND1</answer>"), chat.render_candidate("<answer>CAND2</answer>")
        msgs = chat.messages("Solve.", a, b)
        assert std.messages("Solve.", a, b) == f"Be fair.\n\n{msgs[-1]['content']}"
        assert PairwiseJudge(backend=_FakeJudge("always_a"), prompt_format="standard").messages("Solve.", a, b) == \
            msgs[-1]["content"]
        with pytest.raises(ConfigError, match="prompt_format must be 'conversational' or 'standard', got 'chat'"):
            PairwiseJudge(backend=_FakeJudge("always_a"), prompt_format="chat")

    def test_bad_judge_config(self):
        with pytest.raises(ConfigError, match="unparsed"):
            PairwiseJudge(backend=_FakeJudge("always_a"), unparsed="skip")
        with pytest.raises(ConfigError, match="placeholder"):
            PairwiseJudge(backend=_FakeJudge("always_a"), template="{puzzle}")
        with pytest.raises(ConfigError, match="generate"):
            PairwiseJudge(backend=object())


# ============================================================================================ batch scoring
_CAND = re.compile(r"# Candidate ([AB])\n## Final answer\nCAND(\d+)")


class _FakeJudge:
    """A scripted judge backend. Candidates are completions whose final answer is ``CAND<k>``; quality = k."""

    def __init__(self, mode: str, seed: int = 0):
        self.mode, self.calls, self.rng = mode, [], np.random.default_rng(seed)

    def generate(self, prompts, n=1, temperature=1.0, top_p=1.0, max_tokens=256, seed=None, logprobs=None):
        self.calls.append(len(prompts))
        out = []
        for p in prompts:
            shown = dict(_CAND.findall(p[-1]["content"]))
            qa, qb = int(shown.get("A", 0)), int(shown.get("B", 0))
            lps = None
            if self.mode == "consistent_soft":
                pa = special.expit(0.5 * (qa - qb))
                text = "Verdict: A" if pa >= 0.5 else "Verdict: B"
                lps = (TokenLogprob(text[-1], math.log(max(pa, 1 - pa)), {"A": math.log(pa), "B": math.log(1 - pa)}),)
            elif self.mode == "consistent_hard":
                text = "Verdict: A" if qa > qb else ("Verdict: B" if qb > qa else "Verdict: tie")
            elif self.mode == "random":
                text = f"Verdict: {'AB'[int(self.rng.integers(2))]}"
            elif self.mode == "always_a":
                text = "Verdict: A"
            else:
                text = "lorem ipsum"
            out.append([Sample(text, None, 10, 3, "stop", lps)])
        return out


def _group(n: int, answers=None) -> Group:
    answers = answers or [f"CAND{k}" for k in range(n)]
    return Group("Puzzle: place the tents.", [f"I reason about rows.\n<answer>{a}</answer>" for a in answers])


class TestScoreGroups:
    def test_one_batched_call_for_all_groups(self):
        judge = _FakeJudge("random")
        scores = score_groups([_group(4), _group(5), _group(1)], judge, m=3)
        assert judge.calls == [3 * 3 + 3 * 4]  # M·(N-1) per group, N = 1 adds none, ONE call
        assert [s.n_judge_prompts for s in scores] == [9, 12, 0]
        both = _FakeJudge("random")
        score_groups([_group(4), _group(5)], PairwiseJudge(both, both_orders=True), m=3)
        assert both.calls == [2 * 21]

    def test_no_call_when_nothing_to_judge(self):
        judge = _FakeJudge("random")
        (s,) = score_groups([_group(1)], judge, m=4)
        assert judge.calls == [] and s.total == 0.0

    def test_edge_outcomes_are_mapped_back_to_tree_pairs(self):
        # hard consistent judge: P(i beats j) must be 1 exactly when quality i > j, whatever the shown order
        s = score_group(_group(7).prompt, _group(7).completions, _FakeJudge("consistent_hard"), m=5, seed=3)
        i, j = s.pairs[..., 0], s.pairs[..., 1]
        assert np.array_equal(s.outcomes, (i > j).astype(float))

    def test_consistent_soft_judge(self):
        judge = _FakeJudge("consistent_soft")
        s = score_group("Puzzle", _group(8).completions, judge, m=8, seed=1)
        assert s.n_soft == s.n_judge_prompts == 8 * 7
        assert s.su.instability_norm < 5e-3
        # preferences follow quality (L2 shrinkage on sparse trees may swap close neighbours)
        assert int(np.argmax(s.preference_mass)) in (6, 7) and int(np.argmin(s.preference_mass)) in (0, 1)
        assert stats.spearmanr(s.su.pibar, np.arange(8)).statistic > 0.9

    def test_random_judge(self):
        s = score_group("Puzzle", _group(8).completions, _FakeJudge("random"), m=8)
        assert s.su.instability_norm > 1e-3 and s.su.ambiguity > 0.9 * math.log(8)

    def test_always_a_judge_is_exposed_by_both_orders(self):
        single = score_group("P", _group(6).completions, _FakeJudge("always_a"), m=6, seed=2)
        assert single.instability > 1e-4  # random orientation turns position bias into noise
        both = score_group("P", _group(6).completions, PairwiseJudge(_FakeJudge("always_a"), both_orders=True),
                           m=6, seed=2)
        # (p1 + 1 - p2) / 2 = (1 + 0) / 2: every edge is a tie, so θ = 0 and π is uniform in every trial
        assert np.all(both.outcomes == 0.5)
        assert both.instability == pytest.approx(0.0, abs=1e-12)
        assert both.ambiguity == pytest.approx(math.log(6))
        assert both.position_consistency == 0.0
        honest = score_group("P", _group(6).completions,
                             PairwiseJudge(_FakeJudge("consistent_hard"), both_orders=True), m=2)
        assert honest.position_consistency == 1.0
        assert np.array_equal(honest.outcomes, (honest.pairs[..., 0] > honest.pairs[..., 1]).astype(float))
        assert single.position_consistency is None

    def test_unparseable_replies(self):
        tie = score_group("P", _group(5).completions, _FakeJudge("garbage"), m=3)
        assert tie.n_unparsed == 12 and np.all(tie.outcomes == 0.5)
        drop = score_group("P", _group(5).completions, PairwiseJudge(_FakeJudge("garbage"), unparsed="drop"), m=3)
        assert np.all(np.isnan(drop.outcomes))
        assert drop.total == pytest.approx(math.log(5)) and drop.instability == pytest.approx(0.0, abs=1e-15)

    def test_one_trial_gives_zero_instability(self):
        s = score_group("P", _group(6).completions, _FakeJudge("random"), m=1)
        assert s.instability == 0.0

    def test_seeded(self):
        a = score_group("P", _group(6).completions, _FakeJudge("consistent_hard"), m=4, seed=5)
        b = score_group("P", _group(6).completions, _FakeJudge("consistent_hard"), m=4, seed=5)
        c = score_group("P", _group(6).completions, _FakeJudge("consistent_hard"), m=4, seed=6)
        assert np.array_equal(a.pairs, b.pairs) and np.array_equal(a.outcomes, b.outcomes)
        assert not np.array_equal(a.pairs, c.pairs)

    def test_group_forms_and_conversational_completions(self):
        convo = [[{"role": "assistant", "content": f"<answer>CAND{k}</answer>"}] for k in range(3)]
        judge = _FakeJudge("consistent_hard")
        scores = score_groups([("P", convo), {"prompt": "P", "completions": convo}, Group("P", convo)], judge, m=2)
        assert len(scores) == 3 and judge.calls == [3 * 2 * 2]

    def test_dispersion_and_metrics(self):
        same = score_group("P", _group(4, ["X", "X", "X", "X"]).completions, _FakeJudge("always_a"), m=2)
        assert same.dispersion == 0.0
        mixed = score_group("P", _group(4).completions, _FakeJudge("always_a"), m=2)
        assert mixed.dispersion == pytest.approx(math.log(4))
        metrics = mixed.metrics()
        assert set(metrics) >= {"su/total", "su/ambiguity", "su/instability", "su/instability_norm",
                                "su/dispersion", "su/unparsed_rate"}
        assert all(math.isfinite(v) for v in metrics.values())

    @pytest.mark.parametrize("groups, m, match", [
        ([_group(3)], 0, "m "), (["just text"], 2, r"groups\[0\]"), ([("P", [])], 2, "non-empty"),
        ([(3, ["a"])], 2, "prompt"),
    ])
    def test_bad_input(self, groups, m, match):
        with pytest.raises(ConfigError, match=match):
            score_groups(groups, _FakeJudge("random"), m=m)

    def test_end_to_end_on_the_tiny_model(self, tiny_model_dir):
        from reasonshape.training.backends import TransformersBackend

        backend = TransformersBackend(tiny_model_dir, device="cpu", batch_size=8)
        judge = PairwiseJudge(backend, max_candidate_tokens=24, max_tokens=4, both_orders=True, logprobs=3)
        s = score_group("Place the tents.", [f"row {k} <answer>T .</answer>" for k in range(3)], judge, m=2)
        assert s.n_judge_prompts == 2 * 2 * 2
        assert all(math.isfinite(v) for v in s.metrics().values())
        assert 0.0 <= s.su.ambiguity <= s.su.total <= math.log(3) + 1e-12
        assert s.dispersion == 0.0  # all three answers are "T ."


# ============================================================================================ baselines
class TestBaselines:
    def test_canonical_answer(self):
        assert canonical_answer("<answer>T . .\n. T .</answer>") == canonical_answer("<answer>t,.,.\n.,T,.</answer>")
        assert canonical_answer("<answer>\n```\n1 2\n```\n</answer>") == "1 2"
        assert canonical_answer("no block") is None
        assert canonical_answer([{"role": "assistant", "content": "<answer>x</answer>"}]) == "X"

    def test_answer_dispersion(self):
        assert answer_dispersion(["x", "x", "y", "y"]) == pytest.approx(math.log(2))
        assert answer_dispersion(["x"] * 5) == 0.0
        assert answer_dispersion([None, None]) == pytest.approx(math.log(2))  # failures never agree
        # counts (2, 1, 1): H = -(1/2 ln 1/2 + 2 · 1/4 ln 1/4) = 1.5 ln 2; normalised by ln 4 = 2 ln 2 -> 0.75
        assert answer_dispersion(["a", "a", "b", "c"], normalize=True) == pytest.approx(0.75)
        assert answer_dispersion(["a"], normalize=True) == 0.0
        with pytest.raises(ConfigError):
            answer_dispersion([])

    @FAST
    @given(data=st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=2, max_size=30))
    def test_auroc_equals_pair_counting(self, data):
        scores = [float(s) for s, _ in data]
        pos = [p for _, p in data]
        P = [s for s, p in data if p]
        N = [s for s, p in data if not p]
        got = auroc(scores, pos)
        if not P or not N:
            assert got is None
            return
        # brute force: share of (positive, negative) pairs ordered correctly, ties count 1/2
        expect = sum((a > b) + 0.5 * (a == b) for a, b in itertools.product(P, N)) / (len(P) * len(N))
        assert got == pytest.approx(expect, abs=1e-12)

    def test_auroc_errors(self):
        with pytest.raises(ConfigError):
            auroc([0.1, 0.2], [True])
        with pytest.raises(ConfigError):
            auroc([0.1, math.nan], [True, False])

    def test_flagging_auroc(self):
        incorrect = [True, True, False, False]
        # structural separates perfectly (1.0); dispersion is reversed (0.0)
        out = flagging_auroc(incorrect, dispersion=[0.1, 0.2, 0.8, 0.9], structural=[0.9, 0.8, 0.1, 0.2])
        assert out["structural"] == 1.0 and out["dispersion"] == 0.0
        # rank percentiles (0, 1/3, 2/3, 1) and (1, 2/3, 0, 1/3), averaged: (1/2, 1/2, 1/3, 2/3)
        # positives {1/2, 1/2} vs negatives {1/3, 2/3}: 2 wins + 2 losses of 4 pairs -> 0.5
        assert out["combined"] == pytest.approx(0.5)
        assert flagging_auroc([True, True], [0.1, 0.2], [0.3, 0.4])["combined"] is None
