"""The rules behind the judge's and QA's reported figures, stated so that a one-line change of the code fails:
exact McNemar (judge requery), Fisher's exact test (over-reliance), the re-query tally, the pooled groups,
the RAM-truth agreement rate of a judge summary, and the accuracy of a QA eval.

Each expected figure is computed here from its definition (binomial and hypergeometric sums with math.comb,
Clopper-Pearson bounds from the beta distribution), not copied from the code under test.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.judge_helpers import requery_line
from workstation.base.errors import UserError
from workstation.studies.judge.overreliance import compare_groups, parse_groups
from workstation.studies.judge.records import Fields, JudgeAnswer, JudgeSummary, SettingCounts, TruthCounts, VerdictLine
from workstation.studies.judge.requery import tally
from workstation.studies.judge.stats import fisher_exact, mcnemar_exact


# -- exact McNemar -------------------------------------------------------------------------
def binomial_two_sided(c: int, n: int) -> float:
    """Two-sided exact binomial test at 1/2: the outcomes no more likely than the one seen."""
    probs = [math.comb(n, k) / 2**n for k in range(n + 1)]
    return min(1.0, sum(p for p in probs if p <= probs[c] * (1 + 1e-7)))


def clopper_pearson(c: int, n: int) -> tuple[float, float]:
    from scipy.stats import beta

    lo = 0.0 if c == 0 else float(beta.ppf(0.025, c, n - c + 1))
    hi = 1.0 if c == n else float(beta.ppf(0.975, c + 1, n - c))
    return lo, hi


@pytest.mark.parametrize("b, c", [(10, 2), (2, 10), (3, 7), (1, 0), (5, 5), (0, 4), (12, 1)])
def test_mcnemar_is_the_exact_binomial_test_of_the_discordant_pairs(b, c):
    m = mcnemar_exact(b, c)
    assert (m.b, m.c) == (b, c)
    assert m.p == pytest.approx(binomial_two_sided(c, b + c), rel=1e-9)
    assert m.odds_ratio == (None if b == 0 else pytest.approx(c / b))  # current-only errors over full-only
    lo, hi = clopper_pearson(c, b + c)
    odds = (lambda q: None if q >= 1 else q / (1 - q))
    assert m.ci95[0] == pytest.approx(odds(lo), rel=1e-6, abs=1e-12)
    want_hi = odds(hi)
    assert (m.ci95[1] is None) == (want_hi is None)
    if want_hi is not None:
        assert m.ci95[1] == pytest.approx(want_hi, rel=1e-6)


def test_mcnemar_without_discordant_pairs_has_no_figures_and_is_written_as_json():
    m = mcnemar_exact(0, 0)
    assert (m.b, m.c, m.p, m.odds_ratio, m.ci95) == (0, 0, None, None, (None, None))
    assert mcnemar_exact(3, 0).odds_ratio == 0.0 and mcnemar_exact(3, 0).ci95[0] == 0.0
    assert mcnemar_exact(0, 3).to_json()["ci95"][1] is None  # an unbounded interval: null, never Infinity
    assert mcnemar_exact(10, 2).to_json() == {"b": 10, "c": 2, "p": mcnemar_exact(10, 2).p, "odds_ratio": 0.2,
                                              "ci95": list(mcnemar_exact(10, 2).ci95)}


def test_the_paper_figures():
    m = mcnemar_exact(10, 2)
    assert round(m.p or 0, 4) == 0.0386 and round(m.odds_ratio or 0, 2) == 0.20
    assert [round(x or 0, 2) for x in m.ci95] == [0.02, 0.94]


# -- Fisher's exact test ------------------------------------------------------------------------
def fisher_two_sided(k1: int, n1: int, k2: int, n2: int) -> float:
    """Hypergeometric: the tables with the same margins no more likely than the one seen."""
    k, n = k1 + k2, n1 + n2

    def prob(x: int) -> float:
        return math.comb(n1, x) * math.comb(n2, k - x) / math.comb(n, k)

    seen = prob(k1)
    return min(1.0, sum(prob(x) for x in range(max(0, k - n2), min(k, n1) + 1) if prob(x) <= seen * (1 + 1e-7)))


@pytest.mark.parametrize("k1, n1, k2, n2", [(2, 41, 15, 67), (2, 120, 15, 120), (5, 10, 1, 10), (1, 1, 0, 5),
                                            (3, 9, 3, 9), (0, 4, 4, 4)])
def test_fisher_is_the_two_sided_hypergeometric_test(k1, n1, k2, n2):
    f = fisher_exact(k1, n1, k2, n2)
    assert f.p == pytest.approx(fisher_two_sided(k1, n1, k2, n2), rel=1e-9)
    denominator = (n1 - k1) * k2
    sample_or = None if denominator == 0 else k1 * (n2 - k2) / denominator
    if sample_or is None:
        assert f.odds_ratio is None  # infinite (or undefined): null
    else:
        assert f.odds_ratio == pytest.approx(sample_or)


def test_fisher_needs_answers_on_both_sides():
    assert fisher_exact(0, 0, 3, 5).to_json() == {"p": None, "odds_ratio": None}
    assert fisher_exact(3, 5, 0, 0).p is None
    assert fisher_exact(1, 1, 0, 1).p == pytest.approx(1.0)  # one answer each is enough for a test


# -- the re-query tally -------------------------------------------------------------------------
def test_the_tally_pairs_both_conditions_of_a_turn_and_counts_each_cell():
    cells = [(True, False)] * 4 + [(False, True)] * 3 + [(True, True)] * 2 + [(False, False)] * 6
    rows = []
    for i, (full, cur) in enumerate(cells):
        rows += [requery_line(i, "full", full), requery_line(i, "current", cur)]
    rows += [requery_line(50, "full", True)]  # a turn with one condition only: no pair
    rows += [requery_line(51, "full", True), requery_line(51, "current", None)]  # unparsed: no pair
    rows += [requery_line(0, "full", True, run_id="other"), requery_line(0, "current", False, run_id="other")]
    t = tally(rows)
    assert t.pairs == len(cells) + 1
    assert (t.mcnemar.b, t.mcnemar.c) == (5, 3)  # b: full only (4 + the other run's), c: current only
    assert t.errors_full == 4 + 2 + 1 and t.errors_current == 3 + 2
    assert t.both == 2 and t.neither == 6
    assert t.both + t.neither + t.mcnemar.b + t.mcnemar.c == t.pairs
    assert t.mcnemar.p == mcnemar_exact(5, 3).p


# -- the over-reliance groups -------------------------------------------------------------------
def test_groups_pool_their_settings_counts():
    per = {"a": SettingCounts(10, 5, 0, 8, 3), "b": SettingCounts(10, 5, 0, 4, 1), "c": SettingCounts(10, 5, 0, 6, 6),
           "d": SettingCounts(10, 5, 0, 0, 0)}
    o = compare_groups(per, *parse_groups(" a , b / c,d "))
    assert (o.group_a.settings, o.group_a.followed, o.group_a.asked) == (["a", "b"], 4, 12)
    assert (o.group_b.settings, o.group_b.followed, o.group_b.asked) == (["c", "d"], 6, 6)
    assert o.group_a.share == pytest.approx(4 / 12) and o.group_b.share == 1.0
    assert o.fisher == fisher_exact(4, 12, 6, 6)
    assert compare_groups(per, ["d"], ["a"]).group_a.share is None
    with pytest.raises(UserError, match="no judged setting 'z'"):
        compare_groups(per, ["a"], ["z"])
    for bad in ("a,b", "a/", "/b", "a/a", ""):
        with pytest.raises(UserError, match="--groups"):
            parse_groups(bad)


# -- the judge summary: counts and the RAM-truth agreement rate ---------------------------------
def verdict(setting: str, turn: int, failure: bool | None, group: str | None = None, truth: bool | str = "unknown",
            cue: bool | None = None, cost: float | None = None) -> VerdictLine:
    parsed = failure is not None
    answer = JudgeAnswer(parsed, failure, group, group, None, "e", cue, "raw", None, cost, 1, False)
    return VerdictLine("r-" + setting, setting, "breakout", 0, turn, answer, truth)


def summary_of(verdicts: list[VerdictLine]) -> JudgeSummary:
    from workstation.studies.judge.run import JudgeJob, summarise
    from workstation.studies.judge.verdict import load_judge_prompt

    job = JudgeJob([], "compat:j", Path("."), load_judge_prompt())
    return summarise(verdicts, job, [], complete=True, stopped=None)


def test_the_summary_counts_each_verdict_once_in_its_setting():
    vs = [verdict("a", 0, True, "perception", True, True, 0.5), verdict("a", 1, True, "rule", False, False, 0.25),
          verdict("a", 2, False, None, "unknown", None), verdict("a", 3, None),
          verdict("b", 0, True, "perception", True, True), verdict("b", 1, True, "perception", True, None)]
    s = summary_of(vs)
    assert s.turns_judged == 6 and s.failures == 4 and s.unparsed == 1
    assert s.per_setting["a"] == SettingCounts(4, 2, 1, 2, 1)
    assert s.per_setting["b"] == SettingCounts(2, 2, 0, 1, 1)
    assert s.categories["a"] == {"perception": 1, "spatiotemporal": 0, "decision": 0, "exploration": 0, "rule": 1}
    assert s.categories["b"]["perception"] == 2 and s.counts["b"] == {"perception": 2}
    assert s.cost_usd == 0.75
    assert JudgeSummary.read(Fields(s.to_json(), "summary.json")) == s  # written and read back: the same record


@pytest.mark.parametrize("truths", [[True, True, False], [False, False, True, "unknown"], [True] * 7 + [False] * 2,
                                    ["unknown", "unknown"], [False]])
def test_the_agreement_rate_is_agreeing_over_checkable_verdicts(truths):
    s = summary_of([verdict("a", i, True, "perception", t) for i, t in enumerate(truths)])
    true, false = truths.count(True), truths.count(False)
    unknown = len(truths) - true - false
    assert s.truth == TruthCounts(true, false, unknown)
    assert s.truth.agreement_rate == (None if true + false == 0 else round(true / (true + false), 4))
    assert s.to_json()["truth"] == {"true": true, "false": false, "unknown": unknown,
                                    "agreement_rate": s.truth.agreement_rate}


# -- a QA eval's accuracy -------------------------------------------------------------------------
def test_qa_accuracy_per_group_category_and_agreement():
    from workstation.studies.qa.evaluate import Answer, summarise

    qs = [{"id": f"q{i}", "category": cat, "game": "breakout", "answer": "x"}
          for i, cat in enumerate(["perception-detection", "perception-spatial", "motion-target", "decision-long"])]
    right = {("q0", 0): True, ("q0", 1): True, ("q1", 0): False, ("q1", 1): True, ("q2", 0): False}
    done = {}
    for (qid, r), ok in right.items():
        q = next(q for q in qs if q["id"] == qid)
        parsed = "x" if ok else ("y" if r == 0 else "z")
        done[(qid, r)] = Answer(qid, r, "breakout", q["category"], "x", parsed, parsed, ok,
                                {"error": None, "cost_usd": 0.125})
    done[("q3", 0)] = Answer("q3", 0, "breakout", "decision-long", "x", None, None, False,
                             {"error": "timeout", "cost_usd": None})
    s = summarise(qs, done, 2, {"agent": "a"})
    acc = s.accuracy
    assert acc.perception == pytest.approx(3 / 4) and acc.motion == 0.0 and acc.decision == 0.0
    assert acc.overall == pytest.approx(3 / 6)
    assert acc.categories["perception-spatial"].to_json() == {"accuracy": 0.5, "correct": 1, "answers": 2}
    assert acc.categories["decision-short"].accuracy is None and acc.categories["decision-short"].answers == 0
    assert s.counts["overall"] == 6 and s.counts["perception"] == 4 and s.counts["decision-long"] == 1
    assert s.answers == 6 and s.errors == 1 and not s.complete and s.cost_usd == 0.625
    by_id = {p.id: p for p in s.per_question}
    assert by_id["q0"].agreement == 1.0 and by_id["q1"].agreement == 0.5 and by_id["q2"].agreement is None
    assert by_id["q1"].answers == {"y": 1, "x": 1} and by_id["q1"].correct == 1
    assert s.agreement == pytest.approx((1.0 + 0.5) / 2)  # only questions with two or more answers
    full = {**done, ("q2", 1): done[("q0", 0)], ("q3", 0): done[("q0", 0)], ("q3", 1): done[("q0", 0)]}
    assert summarise(qs, full, 2, {}).complete
    failed = {**full, ("q3", 1): done[("q3", 0)]}  # every question answered, one by a call that failed
    assert summarise(qs, failed, 2, {}).answers == 8 and not summarise(qs, failed, 2, {}).complete


def test_records_are_frozen_and_read_back_as_written():
    from dataclasses import FrozenInstanceError

    from workstation.studies.judge.records import GroupCounts, Overreliance

    g = GroupCounts(["a", "b"], 1, 2)
    t = TruthCounts(3, 1, 2)
    for record, name in ((g, "asked"), (t, "true")):
        with pytest.raises(FrozenInstanceError):
            setattr(record, name, 9)
    assert GroupCounts.read(Fields(g.to_json(), "o.json")) == g
    with pytest.raises(UserError, match="field 'settings' holds something that is not text"):
        GroupCounts.read(Fields({"settings": ["a", 1], "followed": 0, "asked": 0}, "o.json"))
    o = compare_groups({"a": SettingCounts(1, 1, 0, 2, 1), "b": SettingCounts(1, 1, 0, 3, 0)}, ["a"], ["b"])
    assert Overreliance.read(Fields(o.to_json(), "o.json")) == o
    assert TruthCounts.read(Fields(t.to_json(), "s.json")) == t and t.agreement_rate == 0.75
    with pytest.raises(UserError, match="agreement_rate"):
        TruthCounts.read(Fields({**t.to_json(), "agreement_rate": 0.5}, "s.json"))


def test_group_messages_name_the_first_shared_setting_and_the_settings_there_are():
    from workstation.base.errors import UserError
    from workstation.studies.judge.overreliance import check_groups

    with pytest.raises(UserError, match=": a is in both groups"):
        parse_groups("c,b,a/a,b")  # both shared: the first in sorted order is named
    with pytest.raises(UserError) as e:
        parse_groups("z,y/y,z")
    assert "y is in both groups" in str(e.value)
    with pytest.raises(UserError) as e:
        check_groups([], ["x"], ["y"])
    assert str(e.value).endswith("the settings are none")
    with pytest.raises(UserError) as e:
        check_groups(["s2", "s1"], ["s1"], ["nobody"])
    assert "no judged setting 'nobody'; the settings are s1, s2" in str(e.value)
