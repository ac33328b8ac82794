"""Tests of the TRL reward functions (reasonshape.rewards.functions) on a real tents instance.

The instance is reasonshape's own native tents generator output (6x6, easy); its unique solution below was checked
by the puzzle's solver and rules (``Tents.check``), and is written out by hand so the test does not depend on the
solver.
"""

from __future__ import annotations

import concurrent.futures
import math
import os
import pickle
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonshape.envs import get
from reasonshape.errors import BackendError, ConfigError
from reasonshape.extraction import deduce_trace
from reasonshape.rewards import functions as F
from reasonshape.rewards.functions import (
    JudgeSettings,
    RewardScorer,
    RewardWarning,
    ShapingWeights,
    find_groups,
    get_accuracy_reward,
    get_eta_reward,
    get_format_reward,
    get_reward_functions,
    get_self_preference_reward,
    get_shaped_reward,
)
from reasonshape.rewards.scorer import Scorer
from reasonshape.rewards.structural_uncertainty import candidate_parts
from reasonshape.training.backends import GenerationBackend, Sample

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GID = "6x6de:bgabecha,1,2,1,1,0,2,1,1,1,1,1,2"
# Trees (Y) at (1,3) (2,5) (3,1) (3,4) (4,4) (5,2) (6,5); row counts 1 1 1 1 1 2, column counts 1 2 1 1 0 2.
CORRECT = ". T Y . . .\n. . . . Y T\nY . T Y . .\nT . . Y . .\n. Y . T . .\n. T . . Y T"
# Same grid with the row-5 tent moved from (5,4) to (5,5): column 4 then has 0 tents, column 5 has 1 (clue 0), and
# (5,5) touches (6,6): wrong by three rules.
WRONG = ". T Y . . .\n. . . . Y T\nY . T Y . .\nT . . Y . .\n. Y . . T .\n. T . . Y T"
ALL = ("accuracy", "format", "eta", "self_preference", "shaped")


def block(grid: str) -> str:
    return f"<answer>\n{grid}\n</answer>"


@pytest.fixture(scope="module")
def traces():
    """Real completions: a focused deduction trace ending in the correct answer, the same trace ending in the wrong
    answer (a long, 'efficient-looking' wrong completion), and bare answers."""
    p = get("tents")
    inst = p.parse_game_id(GID)
    focused = deduce_trace(p, inst, "focused", 0).text
    assert block(CORRECT) in focused
    return {
        "correct_long": focused,
        "correct_short": block(CORRECT),
        "wrong_long": focused.replace(block(CORRECT), block(WRONG)),
        "wrong_short": block(WRONG),
    }


def call(f, completions, **kw):
    n = len(completions)
    kw.setdefault("puzzle", ["tents"] * n)
    kw.setdefault("game_id", [GID] * n)
    kw.setdefault("prompts", ["Solve this tents puzzle"] * n)
    return f(completions=completions, **kw)


class AnswerJudge(GenerationBackend):
    """A judge that prefers the candidate whose shown final answer is the correct grid (or, adversarially, the
    wrong one); ties when both or neither are. Counts its calls."""

    kind = "fake"

    def __init__(self, prefer_correct: bool = True, fail: bool = False):
        self.prefer_correct = prefer_correct
        self.fail = fail
        self.calls = 0
        self.prompts = 0
        self.seeds = []

    def _generate(self, prompts, *, n, temperature, top_p, max_tokens, seed, logprobs):
        self.calls += 1
        self.prompts += len(prompts)
        self.seeds.append(seed)
        if self.fail:
            raise BackendError("judge endpoint down")
        out = []
        for p in prompts:
            user = p[-1]["content"]
            a = user.split("# Candidate A")[1].split("# Candidate B")[0]
            b = user.split("# Candidate B")[1].split("# Your verdict")[0]
            ga, gb = CORRECT in a, CORRECT in b
            verdict = "tie" if ga == gb else ("A" if ga == self.prefer_correct else "B")
            out.append([Sample(f"Verdict: {verdict}", None, 10, 3, "stop")] * n)
        return out


def judged_scorer(backend, trials=3, **kw) -> RewardScorer:
    rs = RewardScorer(judge=JudgeSettings(kind="policy", trials=trials, logprobs=None), **kw)
    rs.bind_judge_backend(backend)
    return rs


# ===================================================================================================== accuracy
class TestAccuracyReward:
    def test_correct_and_wrong_by_the_rules(self, traces):
        f = get_accuracy_reward()
        got = call(f, [traces["correct_long"], traces["correct_short"], traces["wrong_long"], traces["wrong_short"]])
        assert got == [1.0, 1.0, 0.0, 0.0]

    def test_valid_answer_without_tags_still_correct(self):
        # the parser's fallback reads the last grid-shaped block: accuracy 1, but format 0 (below)
        assert call(get_accuracy_reward(), [f"Final grid:\n{CORRECT}\n"]) == [1.0]

    def test_conversational_content_and_reasoning_content(self, traces):
        f = get_accuracy_reward()
        conv = [[{"role": "assistant", "content": block(CORRECT), "reasoning_content": "I placed tents."}],
                [{"role": "assistant", "content": "", "reasoning_content": traces["correct_long"]}],
                [{"role": "assistant", "content": block(WRONG)}]]
        # the answer inside reasoning_content is a draft, as inside <think>: the second completion has no final answer
        assert call(f, conv) == [1.0, 0.0, 0.0]

    @pytest.mark.parametrize("role", ["tool", "user", "system"])
    def test_an_answer_in_a_non_assistant_message_earns_nothing(self, traces, role):
        # TRL's tool calling appends {"role": "tool", ...} messages to a completion: a tool (or a user turn) that
        # prints the solution must not be credited to the policy (audit finding 5)
        conv = [{"role": "assistant", "content": "let me call the solver"},
                {"role": role, "content": traces["correct_long"]},
                {"role": "assistant", "content": "done"}]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RewardWarning)
            fs = get_reward_functions(["shaped", "accuracy", "format", "eta"])
            logged = {}
            got = [call(f, [conv], log_extra=lambda c, v: logged.__setitem__(c, v)) for f in fs]
        assert got == [[0.0], [0.0], [0.0], [0.0]]
        assert logged["correct"] == [False] and logged["claim_labels"][0].startswith("correct=0 wrong=0")
        # nor is it shown to the self-preference judge as the policy's answer
        assert candidate_parts([{"role": role, "content": block(CORRECT)}])[0] == "(no <answer> block)"
        # the same answer in the assistant's own message is credited
        own = [{"role": "user", "content": "solve it"}, {"role": "assistant", "content": traces["correct_long"]}]
        assert call(get_accuracy_reward(), [own]) == [1.0]

    @pytest.mark.parametrize("reasoning, content", [
        ("draft <answer>\n{c}\n</answer>", "I could not solve it."),  # the helper-found case: a draft only
        ("draft <answer>\n{w}\n</answer>", "<answer>\n{c}\n</answer>"),  # a wrong draft, then the final answer
        ("draft <answer>\n{c}\n</answer>", "<answer>\n{w}\n</answer>"),  # a right draft, then a wrong answer
        ("", "<answer>\n{c}\n</answer>"),
        ("{long}", ""),
        ("{long}", "So the answer is as above."),
        ("{c}", ""),  # a bare grid inside the reasoning: no fallback grid either
    ])
    def test_a_message_scores_as_the_raw_string_it_came_from(self, traces, reasoning, content):
        # A server with a reasoning parser turns the raw "<think>R</think>C" into {"reasoning_content": R,
        # "content": C}; the eval's transformers backend does the same. Every reward must agree on the two forms.
        fill = dict(c=CORRECT, w=WRONG, long=traces["correct_long"])
        reasoning, content = reasoning.format(**fill), content.format(**fill)
        raw = f"<think>\n{reasoning}\n</think>\n\n{content}" if reasoning else content
        msg = [{"role": "assistant", "content": content, **({"reasoning_content": reasoning} if reasoning else {})}]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RewardWarning)
            for name in ("accuracy", "format", "eta", "shaped"):
                f_raw, f_msg = get_reward_functions([name])[0], get_reward_functions([name])[0]
                assert call(f_raw, [raw]) == call(f_msg, [msg]), name
            expected = 1.0 if content.endswith(f"<answer>\n{CORRECT}\n</answer>") else 0.0
            assert call(get_accuracy_reward(), [msg]) == [expected]

    def test_a_batch_of_drafts_only_warns_and_logs_the_share(self):
        logged = {}
        draft = [{"role": "assistant", "content": "", "reasoning_content": block(CORRECT)}]
        with pytest.warns(RewardWarning, match="only inside their reasoning"):
            got = call(get_accuracy_reward(), [draft, "no answer at all"],
                       log_metric=lambda k, v: logged.__setitem__(k, v))
        assert got == [0.0, 0.0]
        assert logged["reasonshape/answer_in_reasoning"] == 0.5
        with warnings.catch_warnings():  # one final answer in the batch: a model drafting, not a misconfiguration
            warnings.simplefilter("error", RewardWarning)
            assert call(get_accuracy_reward(), [draft, block(CORRECT)]) == [0.0, 1.0]

    @pytest.mark.parametrize("name, first", [("accuracy", 1.0), ("format", 1.0), ("eta", 0.0), ("shaped", 1.1)])
    def test_unknown_puzzle_or_bad_game_id_gives_none_with_warning(self, name, first):
        # every reward warns, used alone too (the warning comes once per scored batch, not from one reward)
        f = get_reward_functions([name])[0]
        with pytest.warns(RewardWarning, match="cannot be rebuilt") as w:
            got = call(f, [block(CORRECT)] * 4, puzzle=["tents", "nopuzzle", "tents", "nopuzzle"],
                       game_id=[GID, GID, "6x6de:zz", GID])
        assert got == [pytest.approx(first), None, None, None]
        # both causes are named, the repeated one with its count
        msg = next(str(x.message) for x in w if "cannot be rebuilt" in str(x.message))
        assert msg.startswith("3 completion(s) cannot be judged") and "GameIdError" in msg
        assert "UnknownPuzzleError" in msg and "(x2)" in msg

    def test_extra_kwargs_are_ignored(self):
        got = call(get_accuracy_reward(), [block(CORRECT)], level=["easy"], completion_ids=[[1, 2, 3]],
                   trainer_state=SimpleNamespace(global_step=3), something_else=object())
        assert got == [1.0]

    def test_a_plain_string_column_applies_to_every_completion(self):
        f = get_accuracy_reward()
        assert f(completions=[block(CORRECT), block(WRONG)], puzzle="tents", game_id=GID) == [1.0, 0.0]

    def test_missing_columns_raise_on_first_call(self):
        f = get_accuracy_reward()
        with pytest.raises(ConfigError, match="game_id"):
            f(prompts=["p"], completions=[block(CORRECT)], puzzle=["tents"])

    def test_wrong_column_length_raises_on_first_call_then_none(self):
        f = get_accuracy_reward()
        with pytest.raises(ConfigError, match="one entry per completion"):
            f(completions=["a", "b"], puzzle=["tents"] * 3, game_id=[GID] * 2)
        assert call(f, [block(CORRECT)]) == [1.0]
        with pytest.warns(RewardWarning, match="one entry per completion"):
            got = f(completions=["a", "b"], puzzle=["tents"] * 3, game_id=[GID] * 2)
        assert got == [None, None]

    def test_name(self):
        assert get_accuracy_reward().__name__ == "accuracy_reward"
        assert F.accuracy_reward.__name__ == "accuracy_reward"


# ===================================================================================================== format
class TestFormatReward:
    def test_values(self, traces):
        got = call(get_format_reward(), [
            traces["correct_long"],  # answer block of the right shape
            traces["wrong_short"],  # wrong answer, well formatted
            f"Final grid:\n{CORRECT}",  # no <answer> block: only the fallback found it
            "<answer>\n. T\nY .\n</answer>",  # block of the wrong shape
            "",
        ])
        assert got == [1.0, 1.0, 0.0, 0.0, 0.0]


# ===================================================================================================== eta
class TestEtaReward:
    def test_correct_trace_earns_clipped_eta_from_the_scorer(self, traces):
        sc = Scorer().score("tents", GID, traces["correct_long"])
        assert sc.correct and sc.eta_clipped is not None and 0 < sc.eta_clipped <= 1
        got = call(get_eta_reward(), [traces["correct_long"]])
        assert got == [pytest.approx(sc.eta_clipped)]

    def test_wrong_answer_earns_no_eta_by_default(self, traces):
        gated = call(get_eta_reward(), [traces["wrong_long"]])
        ungated = call(get_eta_reward(only_correct=False), [traces["wrong_long"]])
        assert gated == [0.0]
        assert ungated[0] > 0.05  # the gate is what removes it: the wrong trace has real structure

    def test_bare_answer_has_no_structure_bonus(self, traces):
        # |V| = |C*| (only the answer's claims): eta is 0 up to rounding, or undefined -> `undefined` (0.0)
        got = call(get_eta_reward(), [traces["correct_short"]])
        assert got[0] == pytest.approx(0.0, abs=1e-9)

    def test_undefined_value_is_used_when_eta_is_undefined(self):
        # "T" alone parses nothing and yields no claim: |V| <= |C*| -> eta undefined; wrong answer -> gated 0.0
        assert call(get_eta_reward(only_correct=False, undefined=0.5), ["no claims here"]) == [0.5]

    def test_no_extraction_gives_none(self):
        f = get_eta_reward(RewardScorer(extract=False))
        assert call(f, [block(CORRECT)]) == [None]

    @pytest.mark.parametrize("bad", [-0.1, 1.5, True, "x"])
    def test_bad_undefined_raises(self, bad):
        with pytest.raises(ConfigError, match="undefined must be"):
            get_eta_reward(undefined=bad)


# ===================================================================================================== weights
class TestShapingWeights:
    def test_default_margin(self):
        # worst correct 1.0 - 0 = 1.0; best wrong 0.1 + 0 (eta gated) = 0.1 -> margin 0.9
        assert ShapingWeights().gaming_margin() == pytest.approx(0.9)

    def test_margin_with_self_preference_and_ungated_eta(self):
        # worst correct 1 - 0.1 = 0.9; best wrong 0.1 + 0.1 + 0.2 = 0.4 -> 0.5
        w = ShapingWeights(self_preference=0.1, eta_only_correct=False)
        assert w.gaming_margin() == pytest.approx(0.5)

    @pytest.mark.parametrize("kw, match", [
        (dict(eta=-1.0), "eta weight must be"),
        (dict(format=float("nan")), "format weight must be"),
        (dict(accuracy=0.0), "accuracy weight must be > 0"),
        (dict(format=0.6, self_preference=0.2), "correct answer above every wrong one"),
        (dict(eta=1.0, eta_only_correct=False), "correct answer above every wrong one"),
    ])
    def test_invalid_weights_raise(self, kw, match):
        with pytest.raises(ConfigError, match=match):
            ShapingWeights(**kw)

    def test_allow_gaming(self):
        assert ShapingWeights(format=2.0, allow_gaming=True).gaming_margin() == pytest.approx(-1.0)


# ===================================================================================================== shaped
class TestShapedReward:
    def test_default_values_hand_derived(self, traces):
        eta = Scorer().score("tents", GID, traces["correct_long"]).eta_clipped
        got = call(get_shaped_reward(), [traces["correct_long"], traces["correct_short"], traces["wrong_long"],
                                         traces["wrong_short"], f"Final grid:\n{CORRECT}", ""])
        # correct: 1 + 0.1 format + 0.2 eta; bare correct: 1 + 0.1 (+0.2 * ~0); wrong: 0.1 format only (no eta);
        # correct without tags: 1.0 (no format); empty: 0
        assert got == pytest.approx([1.1 + 0.2 * eta, 1.1, 0.1, 0.1, 1.0, 0.0], abs=1e-9)

    def test_anti_gaming_default_weights(self, traces):
        comps = list(traces.values()) + [f"Final grid:\n{CORRECT}", "", "<think>" + "cell (1,2) is a tent. " * 50]
        rewards = call(get_shaped_reward(), comps)
        acc = call(get_accuracy_reward(), comps)
        correct = [r for r, a in zip(rewards, acc, strict=True) if a == 1.0]
        wrong = [r for r, a in zip(rewards, acc, strict=True) if a == 0.0]
        assert correct and wrong and min(correct) > max(wrong)
        # a short wrong answer never outscores a correct one, and a wrong answer earns no eta
        assert call(get_shaped_reward(), [traces["wrong_long"]]) == call(get_shaped_reward(),
                                                                           [traces["wrong_short"]])

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(acc=st.floats(0.05, 5), fmt=st.floats(0, 2), eta=st.floats(0, 2), sp=st.floats(0, 1),
           gated=st.booleans())
    def test_validated_weights_never_let_wrong_beat_correct(self, traces, acc, fmt, eta, sp, gated):
        # Any weights that pass validation keep every correct completion above every wrong one, even with an
        # adversarial judge that prefers the wrong answers.
        try:
            w = ShapingWeights(accuracy=acc, format=fmt, eta=eta, self_preference=sp, eta_only_correct=gated)
        except ConfigError:
            return
        scorer = judged_scorer(AnswerJudge(prefer_correct=False), trials=2, num_generations=4)
        f = get_shaped_reward(scorer, w)
        comps = [traces["correct_long"], traces["correct_short"], traces["wrong_long"], traces["wrong_short"]]
        r = call(f, comps, prompts=["p"] * 4)
        assert min(r[:2]) > max(r[2:])

    def test_eta_weight_needs_extraction(self):
        with pytest.raises(ConfigError, match="does not extract"):
            get_shaped_reward(RewardScorer(extract=False))
        f = get_shaped_reward(RewardScorer(extract=False), ShapingWeights(eta=0.0))
        assert call(f, [block(CORRECT)]) == [pytest.approx(1.1)]


# ===================================================================================================== groups
class TestFindGroups:
    def test_known_size(self):
        assert find_groups(["a", "a", "b", "b"], 2) == [(0, 2), (2, 4)]

    def test_same_prompt_twice_in_a_row_is_split(self):
        assert find_groups(["a"] * 4 + ["b"] * 2, 2) == [(0, 2), (2, 4), (4, 6)]

    def test_inferred_size_needs_equal_runs(self):
        assert find_groups(["a"] * 3 + ["b"] * 3, None) == [(0, 3), (3, 6)]

    @pytest.mark.parametrize("prompts", [["a"] * 4 + ["b"] * 2, ["a"] * 2 + ["b"] * 4, ["a"] * 6 + ["b"] * 3])
    def test_unequal_runs_without_g_raise_instead_of_guessing(self, prompts):
        # runs [4, 2] are one whole group of 4 and half a group (a group split across processes): the old gcd rule
        # scored them as three groups of 2 (audit finding 1)
        with pytest.raises(ConfigError, match="cannot infer num_generations .*REASONSHAPE_NUM_GENERATIONS"):
            find_groups(prompts, None)
        assert find_groups(["a"] * 4 + ["b"] * 4, None) == [(0, 4), (4, 8)]

    @pytest.mark.parametrize("g, aggregation, warned", [(2, "pagerank", True), (2, "rank_centrality", False),
                                                         (3, "pagerank", False), (None, "pagerank", False)])
    def test_two_generations_with_pagerank_warn_that_self_preference_is_constant(self, g, aggregation, warned):
        # on two candidates the row-normalised PageRank is uniform: N * pi - 1 = 0 whatever the judge says
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            RewardScorer(judge=JudgeSettings(kind="policy", aggregation=aggregation), num_generations=g)
        msgs = [str(x.message) for x in w if issubclass(x.category, F.RewardWarning)]
        assert bool(msgs) is warned
        if warned:
            assert "num_generations=2 and aggregation='pagerank' is 0 for every completion" in msgs[0]

    def test_num_generations_from_env(self):
        assert F.num_generations_from_env({}) is None
        assert F.num_generations_from_env({"REASONSHAPE_NUM_GENERATIONS": "4"}) == 4
        for bad in ("1", "four", "2.5", "-3"):
            with pytest.raises(ConfigError, match="REASONSHAPE_NUM_GENERATIONS must be an integer >= 2"):
                F.num_generations_from_env({"REASONSHAPE_NUM_GENERATIONS": bad})

    @pytest.mark.parametrize("value, expected", [("4", 4), ("x", None), ("1", None), (None, None)])
    def test_module_level_rewards_read_g_from_the_environment(self, monkeypatch, value, expected):
        if value is None:
            monkeypatch.delenv("REASONSHAPE_NUM_GENERATIONS", raising=False)
        else:
            monkeypatch.setenv("REASONSHAPE_NUM_GENERATIONS", value)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            scorer = F._default_scorer()
        assert scorer.num_generations == expected
        assert any("ignoring REASONSHAPE_NUM_GENERATIONS" in str(x.message) for x in w) == (expected is None
                                                                                            and value is not None)

    def test_message_list_prompts(self):
        p1 = [{"role": "user", "content": "x"}]
        p2 = [{"role": "user", "content": "y"}]
        assert find_groups([p1, p1, p2, p2]) == [(0, 2), (2, 4)]

    @pytest.mark.parametrize("prompts, g", [(["a", "a", "b"], 2), (["a", "b"], None), (["a", "a", "a"], 2)])
    def test_partial_groups_raise_with_the_batch_rule(self, prompts, g):
        with pytest.raises(ConfigError, match="per_device_train_batch_size"):
            find_groups(prompts, g)


# ===================================================================================================== self-preference
class TestSelfPreferenceReward:
    def test_judge_preferring_correct_gives_positive_mass_to_correct(self, traces):
        judge = AnswerJudge()
        f = get_self_preference_reward(judged_scorer(judge, num_generations=4))
        comps = [traces["correct_long"], traces["wrong_long"], traces["correct_short"], traces["wrong_short"]]
        got = call(f, comps, prompts=["p"] * 4)
        assert len(got) == 4 and all(v is not None for v in got)
        assert min(got[0], got[2]) > 0 > max(got[1], got[3])
        assert sum(got) == pytest.approx(0.0, abs=1e-9)  # N*pibar - 1 sums to 0 over a group
        assert all(-1 <= v <= 3 for v in got)  # [-1, N - 1]
        assert judge.calls == 1 and judge.prompts == 3 * 3  # ONE batched call, M*(N-1) prompts

    def test_two_groups_one_judge_call(self, traces):
        judge = AnswerJudge()
        f = get_self_preference_reward(judged_scorer(judge, num_generations=2))
        comps = [traces["correct_short"], traces["wrong_short"], traces["wrong_long"], traces["correct_long"]]
        got = call(f, comps, prompts=["p", "p", "q", "q"])
        # N = 2: PageRank over two candidates is uniform (each has one out-edge), so the mass is 0 for all
        assert got == pytest.approx([0.0, 0.0, 0.0, 0.0])
        assert judge.calls == 1 and judge.prompts == 2 * 3 * 1

    def test_not_whole_groups_raises_on_first_call_then_none(self, traces):
        f = get_self_preference_reward(judged_scorer(AnswerJudge(), num_generations=2))
        with pytest.raises(ConfigError, match="multiple of num_generations"):
            call(f, [block(CORRECT)] * 3, prompts=["p", "p", "q"])
        with pytest.warns(RewardWarning, match="whole groups"):
            got = call(f, [block(WRONG)] * 3, prompts=["p", "p", "q"])
        assert got == [None, None, None]

    def test_a_judge_without_num_generations_raises_on_the_first_call(self, traces):
        # a batch cannot tell a group split across processes (runs [4, 2] with G = 4) from a prompt drawn twice in a
        # row (runs [4, 2] with G = 2): G must be given, not guessed
        f = get_self_preference_reward(judged_scorer(AnswerJudge()))
        comps = [block(CORRECT), block(WRONG)] * 3
        with pytest.raises(ConfigError, match="self-preference needs num_generations .*REASONSHAPE_NUM_GENERATIONS"):
            call(f, comps, prompts=["p"] * 4 + ["q"] * 2)
        # with G, the same batch is three whole groups of 2 (the prompt p drawn twice in a row)
        g = get_self_preference_reward(judged_scorer(AnswerJudge(), num_generations=2))
        assert all(v is not None for v in call(g, comps, prompts=["p"] * 4 + ["q"] * 2))

    def test_judge_failure_gives_none_and_warning(self, traces):
        f = get_self_preference_reward(judged_scorer(AnswerJudge(fail=True), num_generations=2))
        with pytest.warns(RewardWarning, match="judge endpoint down"):
            got = call(f, [block(CORRECT), block(WRONG)], prompts=["p", "p"])
        assert got == [None, None]

    def test_preference_mass_column_is_logged_as_none_when_not_computed(self, traces):
        # TRL keeps log_extra columns in a deque per generation batch: a step that logs no preference_mass would
        # show the previous step's values next to the new completions (audit finding 2)
        judge = AnswerJudge()
        f = get_self_preference_reward(judged_scorer(judge, num_generations=2))
        comps = [traces["correct_short"], traces["wrong_short"]]
        extra: list[tuple[str, list]] = []
        log_extra = lambda c, v: extra.append((c, list(v)))  # noqa: E731
        call(f, comps, prompts=["p", "p"], trainer_state=SimpleNamespace(global_step=1), log_extra=log_extra)
        assert [v for c, v in extra if c == "preference_mass"] == [[0.0, 0.0]]  # N = 2: uniform, logged
        judge.fail = True
        extra.clear()
        with pytest.warns(RewardWarning, match="judge endpoint down"):
            call(f, comps[::-1], prompts=["p", "p"], trainer_state=SimpleNamespace(global_step=2), log_extra=log_extra)
        assert [v for c, v in extra if c == "preference_mass"] == [[None, None]]
        # a batch without whole groups (after the first call): the column is logged as None once, too
        extra.clear()
        with pytest.warns(RewardWarning, match="whole groups"):
            call(f, comps + comps[:1], prompts=["p", "p", "q"], trainer_state=SimpleNamespace(global_step=3),
                 log_extra=log_extra)
        assert [v for c, v in extra if c == "preference_mass"] == [[None, None, None]]

    def test_a_group_without_any_readable_verdict_gets_none_not_zero(self, traces):
        class Mumbling(AnswerJudge):  # no verdict in the group whose query says MUTE
            def _generate(self, prompts, **kw):
                out = super()._generate(prompts, **kw)
                return [[Sample("I cannot decide.", None, 10, 3, "stop")] * len(o) if "MUTE" in p[-1]["content"]
                        else o for p, o in zip(prompts, out, strict=True)]

        scorer = judged_scorer(Mumbling(), num_generations=2)
        logged = {}
        comps = [traces["correct_short"], traces["wrong_short"], traces["correct_long"], traces["wrong_long"]]
        with pytest.warns(RewardWarning, match="no readable verdict in 1 of 2 group"):
            got = call(get_self_preference_reward(scorer), comps, prompts=["p", "p", "MUTE q", "MUTE q"],
                       log_metric=lambda k, v: logged.__setitem__(k, v))
        assert got[:2] == pytest.approx([0.0, 0.0]) and got[2:] == [None, None]
        # U / A / I of the mute group (ties only) are left out of the logged means; its unparsed rate is not
        assert logged["reasonshape/su/unparsed_rate"] == pytest.approx(0.5)
        assert logged["reasonshape/su/total"] == pytest.approx(scorer._batch.su[0].total)
        # shaped drops the term for the mute group (and N = 2 masses are 0): the values without self-preference
        shaped = get_shaped_reward(scorer, ShapingWeights(self_preference=0.1))
        plain = get_shaped_reward(RewardScorer(), ShapingWeights(self_preference=0.0))
        prompts = ["p", "p", "MUTE q", "MUTE q"]
        assert call(shaped, comps, prompts=prompts) == pytest.approx(call(plain, comps, prompts=prompts))

    @pytest.mark.parametrize("kind", ["policy", "vllm"])
    def test_an_unbound_live_judge_raises_on_the_first_call(self, traces, kind):
        # a forgotten bind_policy is a set-up error, not a judge failure that warns once and leaves the whole run
        # without self-preference (audit finding 6)
        sp, shaped = get_reward_functions(["self_preference", "shaped"], weights=ShapingWeights(self_preference=0.1),
                                          judge=JudgeSettings(kind=kind, trials=2, logprobs=None), num_generations=2)
        comps = [block(CORRECT), block(WRONG)]
        with pytest.raises(ConfigError, match=f"kind '{kind}'.*never bound: call scorer.bind_"):
            call(sp, comps, prompts=["p", "p"])
        with pytest.raises(ConfigError, match="never bound"):
            call(shaped, comps, prompts=["p", "p"])
        with pytest.warns(RewardWarning, match="never bound"):  # after the first call: None, never a raise
            assert call(sp, comps[::-1], prompts=["p", "p"]) == [None, None]
        judge = AnswerJudge()
        sp.scorer.bind_judge_backend(judge)
        assert call(sp, comps, prompts=["q", "q"]) == pytest.approx([0.0, 0.0]) and judge.calls == 1

    def test_no_judge_gives_none_and_warning(self):
        f = get_self_preference_reward(RewardScorer())
        with pytest.warns(RewardWarning, match="no judge"):
            assert call(f, [block(CORRECT), block(WRONG)], prompts=["p", "p"]) == [None, None]

    def test_shaped_keeps_working_when_the_judge_fails(self):
        scorer = judged_scorer(AnswerJudge(fail=True), num_generations=2)
        f = get_shaped_reward(scorer, ShapingWeights(self_preference=0.1))
        with pytest.warns(RewardWarning):
            got = call(f, [block(CORRECT), block(WRONG)], prompts=["p", "p"])
        assert got == pytest.approx([1.1, 0.1])

    def _judge_seed(self, seed, step, monkeypatch, rank="0"):
        monkeypatch.setenv("RANK", rank)
        judge = AnswerJudge()
        rs = RewardScorer(judge=JudgeSettings(kind="policy", trials=2, logprobs=None, seed=seed), num_generations=3)
        rs.bind_judge_backend(judge)
        call(get_self_preference_reward(rs), [block(CORRECT), block(WRONG), block(WRONG)], prompts=["p"] * 3,
             trainer_state=SimpleNamespace(global_step=step))
        assert len(judge.seeds) == 1
        return judge.seeds[0]

    def test_judge_seed_differs_per_seed_step_and_rank_and_is_reproducible(self, monkeypatch):
        # `seed + step` made step s + 1 of a run seeded 0 judge with the seed of step s of a run seeded 1, and gave
        # every process the same seed at a step
        base = self._judge_seed(0, 1, monkeypatch)
        assert base == self._judge_seed(0, 1, monkeypatch)  # deterministic
        assert base != self._judge_seed(1, 0, monkeypatch)
        assert base != self._judge_seed(0, 1, monkeypatch, rank="1")
        assert base != self._judge_seed(0, 2, monkeypatch)

    def test_step_seed_is_distinct_over_a_grid_and_leaves_headroom(self):
        seeds = {(sd, st, r): JudgeSettings(seed=sd).step_seed(st, r)
                 for sd in range(4) for st in range(50) for r in range(8)}
        assert len(set(seeds.values())) == len(seeds)
        # the backends add the prompt index; vLLM's server takes a signed 64-bit seed
        assert all(0 <= v < 2**62 for v in seeds.values())
        # numpy's documented child-stream derivation, so the value is stable across numpy versions
        expected = int(np.random.SeedSequence(3, spawn_key=(7, 2)).generate_state(1, dtype=np.uint64)[0]) >> 2
        assert seeds[(3, 7, 2)] == expected

    @pytest.mark.parametrize("kw, match", [({"seed": -1}, "seed must be an integer >= 0"),
                                           ({"seed": 1.5}, "seed must be an integer >= 0")])
    def test_judge_seed_must_be_a_non_negative_int(self, kw, match):
        with pytest.raises(ConfigError, match=match):
            JudgeSettings(**kw)
        with pytest.raises(ConfigError, match="step must be an integer >= 0"):
            JudgeSettings().step_seed(-1, 0)
        with pytest.raises(ConfigError, match="rank must be an integer >= 0"):
            JudgeSettings().step_seed(0, True)

    def test_process_rank_reads_rank_from_the_environment(self):
        assert F.process_rank({}) == 0
        assert F.process_rank({"RANK": "3"}) == 3
        for bad in ("x", "-1"):
            with pytest.raises(ConfigError, match="RANK must be an integer >= 0"):
                F.process_rank({"RANK": bad})

    def test_judge_settings_validation_and_env(self):
        with pytest.raises(ConfigError, match="base_url and model"):
            JudgeSettings(kind="openai", base_url="http://x/v1")
        with pytest.raises(ConfigError, match="trials must be"):
            JudgeSettings(trials=0)
        assert JudgeSettings.from_env({}) is None
        s = JudgeSettings.from_env({"REASONSHAPE_JUDGE_BASE_URL": "http://h:1/v1", "REASONSHAPE_JUDGE_MODEL": "m",
                                    "REASONSHAPE_JUDGE_TRIALS": "2"})
        assert (s.kind, s.base_url, s.model, s.trials) == ("openai", "http://h:1/v1", "m", 2)
        assert s.chat_template_kwargs is None
        env = {"REASONSHAPE_JUDGE_BASE_URL": "http://h:1/v1", "REASONSHAPE_JUDGE_MODEL": "m",
               "REASONSHAPE_JUDGE_CHAT_TEMPLATE_KWARGS": '{"enable_thinking": false}'}
        assert JudgeSettings.from_env(env).chat_template_kwargs == {"enable_thinking": False}
        with pytest.raises(ConfigError, match="REASONSHAPE_JUDGE_CHAT_TEMPLATE_KWARGS must be a JSON object"):
            JudgeSettings.from_env({**env, "REASONSHAPE_JUDGE_CHAT_TEMPLATE_KWARGS": "no"})
        assert (s.unparsed, s.prompt_format) == ("tie", "conversational")
        s = JudgeSettings.from_env({**env, "REASONSHAPE_JUDGE_UNPARSED": "drop",
                                    "REASONSHAPE_JUDGE_PROMPT_FORMAT": "standard"})
        assert (s.unparsed, s.prompt_format) == ("drop", "standard")
        with pytest.raises(ConfigError, match="judge unparsed must be 'tie' or 'drop', got 'skip'"):
            JudgeSettings.from_env({**env, "REASONSHAPE_JUDGE_UNPARSED": "skip"})
        with pytest.raises(ConfigError, match="judge prompt_format must be 'conversational' or 'standard'"):
            JudgeSettings.from_env({**env, "REASONSHAPE_JUDGE_PROMPT_FORMAT": "chat"})

    @pytest.mark.parametrize("value, match", [
        ("not json", "must be a JSON object such as"),
        ('["enable_thinking"]', "must be a mapping of keyword names to JSON values"),
        (True, "must be a mapping of keyword names to JSON values"),
        ({1: False}, "must have string keys, got 1"),
        ({"enable_thinking": object()}, "must map names to JSON values, got object"),
    ])
    def test_judge_chat_template_kwargs_must_be_a_json_mapping(self, value, match):
        with pytest.raises(ConfigError, match=f"^judge chat_template_kwargs {match}") as e:
            JudgeSettings(chat_template_kwargs=value)
        assert "\n" not in str(e.value)

    def test_judge_chat_template_kwargs_are_a_plain_copy_picklable_and_hashable(self):
        given = {"enable_thinking": False, "extra": {"depth": [1, 2]}}
        s = JudgeSettings(kind="openai", base_url="http://h:1/v1", model="m", chat_template_kwargs=given)
        given["enable_thinking"] = True  # the settings keep what they were given
        assert s.chat_template_kwargs == {"enable_thinking": False, "extra": {"depth": [1, 2]}}
        again = pickle.loads(pickle.dumps(s))
        assert again == s and again.chat_template_kwargs == s.chat_template_kwargs
        assert hash(s) == hash(JudgeSettings(kind="openai", base_url="http://h:1/v1", model="m"))  # left out of it
        assert s != JudgeSettings(kind="openai", base_url="http://h:1/v1", model="m")
        assert JudgeSettings(chat_template_kwargs='{"enable_thinking": false}').chat_template_kwargs == {
            "enable_thinking": False}
        assert JudgeSettings().chat_template_kwargs is None
        # a scorer with such settings pickles too (TRL may pickle reward functions to its workers)
        scorer = pickle.loads(pickle.dumps(RewardScorer(judge=s, num_generations=4)))
        assert scorer.judge_settings.chat_template_kwargs == {"enable_thinking": False, "extra": {"depth": [1, 2]}}

    def test_judge_chat_template_kwargs_reach_the_built_backends(self, tiny_model_dir):
        s = JudgeSettings(kind="openai", base_url="http://h:1/v1", model="m",
                          chat_template_kwargs={"enable_thinking": False})
        assert s.build_backend().extra_body == {"chat_template_kwargs": {"enable_thinking": False}}
        assert JudgeSettings(kind="openai", base_url="http://h:1/v1", model="m").build_backend().extra_body == {}
        t = JudgeSettings(kind="transformers", model=str(tiny_model_dir), chat_template_kwargs={"enable_thinking": 0})
        assert t.build_backend().chat_template_kwargs == {"enable_thinking": 0}


# ===================================================================================================== shared scorer
class TestSharedScorer:
    def test_each_completion_scored_once_and_metrics_logged_once(self, traces, monkeypatch):
        import reasonshape.rewards.scorer as scorer_module

        calls = []
        real = scorer_module.score_completion

        def counting(puzzle, instance, completion, **kw):
            calls.append(completion)
            return real(puzzle, instance, completion, **kw)

        monkeypatch.setattr(scorer_module, "score_completion", counting)
        fs = get_reward_functions(ALL, weights=ShapingWeights(self_preference=0.05),
                                  judge=JudgeSettings(kind="policy", trials=2, logprobs=None), num_generations=4)
        fs[0].scorer.bind_judge_backend(AnswerJudge())
        metrics, extra = [], {}
        comps = [traces["correct_long"], traces["wrong_long"], traces["correct_short"], traces["wrong_short"]]
        kw = dict(prompts=["p"] * 4, completion_ids=[[0] * 7] * 4, trainer_state=SimpleNamespace(global_step=1),
                  log_metric=lambda k, v: metrics.append((k, v)), log_extra=lambda c, v: extra.setdefault(c, v))
        outs = [call(f, comps, **kw) for f in fs]
        assert len(calls) == 4  # one score per completion for five reward functions
        names = [k for k, _ in metrics]
        assert len(names) == len(set(names))  # each metric once per batch
        for key in ("accuracy", "format", "eta", "claim_accuracy", "extraction_fallback", "reward_time_s",
                    "su/total", "su/ambiguity", "su/instability"):
            assert "reasonshape/" + key in names
        assert dict(metrics)["reasonshape/accuracy"] == pytest.approx(0.5)
        assert all(math.isfinite(v) for _, v in metrics)
        assert set(extra) == {"eta", "correct", "claim_labels", "preference_mass"}
        assert all(len(v) == 4 for v in extra.values())
        assert extra["correct"] == [True, False, True, False]
        assert outs[0] == [1.0, 0.0, 1.0, 0.0]  # accuracy
        assert outs[1] == [1.0, 1.0, 1.0, 1.0]  # format
        # next step, same completions: served by the Scorer's LRU (no new scoring), metrics logged for the new step
        metrics.clear()
        kw["trainer_state"] = SimpleNamespace(global_step=2)
        call(fs[1], comps, **kw)
        assert len(calls) == 4 and "reasonshape/accuracy" in [k for k, _ in metrics]

    def test_unknown_names_and_missing_judge_raise(self):
        with pytest.raises(ConfigError, match="reward names must be among"):
            get_reward_functions(["accuracy", "length"])
        with pytest.raises(ConfigError, match="must not repeat"):
            get_reward_functions(["accuracy", "accuracy"])
        with pytest.raises(ConfigError, match="needs a judge"):
            get_reward_functions(["self_preference"])


# ===================================================================================================== TRL conventions
class TestPicklingAndThreads:
    @pytest.mark.parametrize("name", ALL)
    def test_pickle_round_trip_keeps_name_and_output(self, name, traces):
        fs = get_reward_functions(ALL, judge=JudgeSettings(kind="openai", base_url="http://127.0.0.1:9/v1",
                                                           model="m"))
        f = fs[ALL.index(name)]
        g = pickle.loads(pickle.dumps(f))
        assert g.__name__ == f.__name__ == f"{name}_reward"
        if name != "self_preference":  # needs a live judge
            comps = [traces["correct_short"], traces["wrong_short"]]
            assert call(g, comps, prompts=["p", "p"]) == call(f, comps, prompts=["p", "p"])

    def test_an_unpickled_reward_raises_on_its_first_call_again(self, traces):
        # a used reward pickled to a new process must still treat a malformed first call as a set-up error
        # (audit finding 11)
        f = get_accuracy_reward()
        assert call(f, [traces["correct_short"]]) == [1.0]
        g = pickle.loads(pickle.dumps(f))
        with pytest.raises(ConfigError, match="no 'game_id' column"):
            g(completions=[traces["correct_short"]], puzzle=["tents"])
        with pytest.warns(RewardWarning, match="no 'game_id' column"):  # the original is past its first call
            assert f(completions=[traces["correct_short"]], puzzle=["tents"]) == [None]

    def test_list_unpickles_sharing_one_scorer(self):
        fs = pickle.loads(pickle.dumps(get_reward_functions(["shaped", "accuracy", "eta"])))
        assert fs[0].scorer is fs[1].scorer is fs[2].scorer

    def test_module_level_rewards_pickle(self):
        for f in (F.accuracy_reward, F.format_reward, F.eta_reward, F.self_preference_reward, F.shaped_reward):
            assert pickle.loads(pickle.dumps(f)).__name__ == f.__name__

    def test_runs_in_worker_threads(self, traces):
        f = get_shaped_reward()
        comps = [traces["correct_long"], traces["wrong_short"]]
        expected = call(f, comps)
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            results = list(ex.map(lambda _: call(f, comps), range(4)))
        assert all(r == expected for r in results)


# ===================================================================================================== fuzzing
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400)
_TAGS = st.lists(st.sampled_from(["<think>", "</think>", "<answer>", "</answer>", "\n", ". T Y", "cell (1,2) is a "
                                  "tent.", "Y . T", "```", "<answer><answer>", "</think></answer>"]), max_size=30)


def _assert_valid(out, n):
    assert isinstance(out, list) and len(out) == n
    for v in out:
        assert v is None or (isinstance(v, float) and math.isfinite(v))


@pytest.fixture(scope="module")
def fuzz_functions():
    fs = get_reward_functions(ALL, weights=ShapingWeights(self_preference=0.05),
                              judge=JudgeSettings(kind="policy", trials=1, logprobs=None), num_generations=2)
    fs[0].scorer.bind_judge_backend(AnswerJudge())
    return fs


class TestFuzz:
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(texts=st.lists(st.one_of(_TEXT, _TAGS.map("".join)), min_size=2, max_size=2),
           reasoning_only=st.booleans())
    def test_random_completions(self, fuzz_functions, texts, reasoning_only):
        comps = [[{"role": "assistant", "content": "", "reasoning_content": t}] if reasoning_only else t
                 for t in texts]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RewardWarning)
            for f in fuzz_functions:
                _assert_valid(call(f, comps, prompts=["p", "p"]), 2)

    def test_fixed_hard_cases(self, fuzz_functions):
        big = ("Cell (1,2) is a tent. " * 50000)[:1_000_000]
        comps = ["", big, "<think><answer><think>" * 200, "<answer>" + block(CORRECT),
                 [{"role": "assistant", "content": None, "reasoning_content": block(CORRECT)}],
                 [{"role": "assistant", "content": [{"type": "text", "text": block(WRONG)}]}]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RewardWarning)
            for f in fuzz_functions:
                out = call(f, comps, prompts=["p", "p", "q", "q", "r", "r"])
                _assert_valid(out, len(comps))
        acc = call(get_accuracy_reward(fuzz_functions[0].scorer), comps,
                   prompts=["p", "p", "q", "q", "r", "r"])
        # the fifth has its answer only in reasoning_content: a draft, no final answer
        assert acc == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
