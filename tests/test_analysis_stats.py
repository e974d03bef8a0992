"""The report's statistics against hand-computed small cases, scipy as the oracle."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from workstation.studies.analysis import stats
from workstation.studies.analysis.table import Results, Row


def results(data: dict) -> Results:
    """{setting: {game: [scores by seed]}} -> Results."""
    rows = [Row(0, s, g, str(i), float(v)) for s, games in data.items() for g, vs in games.items() for i, v in enumerate(vs)]
    return Results(source="test", rows=rows, columns=["setting", "game", "seed", "score"])


def sep(data: dict, baseline: str = "random") -> dict:
    return stats.separability(stats.cells(results(data)), baseline)


def test_cohen_d_pooled_sd_by_hand():
    assert stats.cohen_d(np.array([4.0, 5, 6]), np.array([1.0, 2, 3])) == pytest.approx(3.0)
    # unequal n: s1^2 = 6.667 (n=4), s2^2 = 2 (n=2): pooled = (3*20/3 + 1*2) / 4 = 5.5
    assert stats.cohen_d(np.array([2.0, 4, 6, 8]), np.array([1.0, 3])) == pytest.approx(3 / math.sqrt(5.5))


def test_cohen_d_zero_variance():
    assert stats.cohen_d(np.array([2.0, 2]), np.array([1.0, 1])) == math.inf
    assert stats.cohen_d(np.array([1.0, 1]), np.array([2.0, 2])) == -math.inf
    assert math.isnan(stats.cohen_d(np.array([1.0, 1]), np.array([1.0, 1])))
    assert math.isnan(stats.cohen_d(np.array([1.0]), np.array([2.0])))  # no degrees of freedom


def test_anova_and_eta2_by_hand_and_scipy():
    groups = [np.array([1.0, 2, 3]), np.array([4.0, 5, 6])]
    # SS_between = 3*1.5^2*2 = 13.5, SS_within = 4, F = 13.5 / (4/4)
    assert stats.eta_squared(groups) == pytest.approx(13.5 / 17.5)
    assert stats.anova_p(groups) == pytest.approx(sps.f.sf(13.5, 1, 4))
    assert stats.anova_p(groups) == pytest.approx(sps.f_oneway(*groups).pvalue)
    assert math.isnan(stats.anova_p([np.array([1.0, 1]), np.array([1.0, 1])]))
    assert math.isnan(stats.eta_squared([np.array([1.0, 1]), np.array([1.0, 1])]))
    assert math.isnan(stats.anova_p([np.array([1.0]), np.array([2.0])]))


def test_bh_by_hand():
    q = stats.bh({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.5, "e": math.nan})
    # sorted 0.01, 0.03, 0.04, 0.5 (m = 4, NaN left out): 0.04, min(0.06, 0.0533), 0.0533, 0.5
    assert q["a"] == pytest.approx(0.04)
    assert q["c"] == pytest.approx(0.16 / 3)
    assert q["b"] == pytest.approx(0.16 / 3)
    assert q["d"] == pytest.approx(0.5)
    assert math.isnan(q["e"])


def test_cells_mean_se_and_single_seed():
    c = stats.cells(results({"a": {"g": [1, 2, 3, 6]}, "b": {"g": [5]}}))
    assert c[("a", "g")].n == 4 and c[("a", "g")].mean == 3
    assert c[("a", "g")].se == pytest.approx(np.std([1, 2, 3, 6], ddof=1) / 2)
    assert c[("b", "g")].n == 1 and math.isnan(c[("b", "g")].se)


def test_ranks_ties_and_average():
    per, avg = stats.ranks(stats.cells(results({"a": {"g": [3], "h": [1]}, "b": {"g": [3], "h": [2]}, "c": {"g": [1]}})))
    assert per["g"] == {"a": 1.5, "b": 1.5, "c": 3.0}
    assert per["h"] == {"a": 2.0, "b": 1.0}
    assert avg["a"] == (1.75, 2) and avg["c"] == (3.0, 1)


def test_separability_matches_an_independent_computation():
    rng = np.random.default_rng(7)
    data = {s: {g: list(np.round(rng.normal(mu + k * 0.7, 1.0, 6), 2)) for k, g in enumerate(["g1", "g2", "g3"])}
            for s, mu in {"random": 0.0, "a": 0.4, "b": 1.5, "c": 0.9, "d": 0.2, "e": 1.1}.items()}
    got = sep(data)
    p1, p3, d1, d2, eta, tops = {}, {}, {}, {}, {}, {}
    for g in ["g1", "g2", "g3"]:
        groups = {s: np.array(data[s][g]) for s in data}
        others = sorted((s for s in groups if s != "random"), key=lambda s: -groups[s].mean())
        best, base = groups[others[0]], groups["random"]
        tops[g] = (others[0], others[:2], others[-2:])
        sp = math.sqrt(((len(best) - 1) * best.var(ddof=1) + (len(base) - 1) * base.var(ddof=1)) / (len(best) + len(base) - 2))
        d1[g] = (best.mean() - base.mean()) / sp
        p1[g] = sps.f_oneway(best, base).pvalue
        top, bot = np.concatenate([groups[s] for s in others[:2]]), np.concatenate([groups[s] for s in others[-2:]])
        sp = math.sqrt(((len(top) - 1) * top.var(ddof=1) + (len(bot) - 1) * bot.var(ddof=1)) / (len(top) + len(bot) - 2))
        d2[g] = (top.mean() - bot.mean()) / sp
        p3[g] = sps.f_oneway(*groups.values()).pvalue
        allv = np.concatenate(list(groups.values()))
        eta[g] = sum(len(v) * (v.mean() - allv.mean()) ** 2 for v in groups.values()) / ((allv - allv.mean()) ** 2).sum()
    q1 = dict(zip(p1, sps.false_discovery_control(list(p1.values()))))
    q3 = dict(zip(p3, sps.false_discovery_control(list(p3.values()))))
    for g, s in got.items():
        assert (s.best, s.top, s.bottom) == tops[g]  # N = 5 -> ceil(5/4) = 2 each
        assert s.d_best == pytest.approx(d1[g]) and s.q_best == pytest.approx(q1[g])
        assert s.d_quartile == pytest.approx(d2[g])
        assert s.q_anova == pytest.approx(q3[g]) and s.eta2 == pytest.approx(eta[g])
        assert s.criteria == [d1[g] >= 0.8 and q1[g] < 0.05, d2[g] >= 0.8, q3[g] < 0.05 and eta[g] >= 0.14]


def test_labels_strong_weak_none():
    strong = sep({"random": {"g": [0, 1, 0, 1, 0]}, "a": {"g": [10, 11, 10, 11, 10]}, "b": {"g": [5, 6, 5, 6, 5]}})["g"]
    assert strong.criteria == [True, True, True] and strong.label == "strong"
    # (2) only: top vs bottom far apart, but the noisy baseline sinks (1) and the ANOVA's p sinks (3)
    weak = sep({"random": {"g": [0, 10]}, "a": {"g": [6, 8]}, "b": {"g": [4, 6]}, "c": {"g": [2, 4]}})["g"]
    assert weak.criteria == [False, True, False] and weak.label == "weak"
    assert weak.eta2 == pytest.approx(16 / 72)  # passes eta^2, fails q
    none = sep({"random": {"g": [1, 2, 3]}, "a": {"g": [1, 2, 3]}, "b": {"g": [3, 2, 1]}})["g"]
    assert none.criteria == [False, False, False] and none.label == "none"


def test_zero_variance_groups_pass_on_a_positive_gap():
    s = sep({"random": {"g": [0, 0, 0]}, "a": {"g": [5, 5, 5]}, "b": {"g": [0, 0, 0]}})["g"]
    assert s.d_best == math.inf and s.q_best == 0 and s.d_quartile == math.inf
    assert s.label == "strong"
    flat = sep({"random": {"g": [0, 0]}, "a": {"g": [0, 0]}, "b": {"g": [0, 0]}})["g"]
    assert math.isnan(flat.d_best) and math.isnan(flat.q_anova) and flat.label == "none" and not flat.lacking


def test_lacking_data_is_named_per_criterion():
    got = sep({"random": {"g": [0, 1]}, "a": {"g": [3, 4], "h": [1, 2]}, "b": {"g": [5]}})
    assert set(got["h"].lacking) == {1, 2, 3}  # no baseline in h, one other setting
    assert "baseline" in got["h"].lacking[1] and got["h"].label == "none"
    assert got["g"].lacking == {}
    single = sep({"random": {"g": [0]}, "a": {"g": [3]}, "b": {"g": [1]}})["g"]
    assert set(single.lacking) == {1, 2, 3}


def test_a_label_on_few_runs_a_cell_is_called_provisional():
    """Two runs a cell and zero variance make d infinite and the game strong: the report says how few runs the
    label rests on (the fewest in any cell), below MIN_RUNS (5); at 5 it says nothing."""
    from workstation.studies.analysis.report import _sep_json

    assert stats.MIN_RUNS == 5
    two = sep({"random": {"g": [0, 0]}, "a": {"g": [5, 5]}, "b": {"g": [0, 0]}})["g"]
    assert two.label == "strong" and two.min_n == 2 and two.small_sample
    notes = _sep_json(two)["notes"]
    assert any("strong on 2 runs a cell at the fewest" in n and "fewer than 5" in n for n in notes), notes
    assert _sep_json(two)["min_n"] == 2
    four = sep({"random": {"g": [0, 0, 0, 0, 0]}, "a": {"g": [5, 5, 5, 5]}, "b": {"g": [0, 0, 0, 0, 0]}})["g"]
    assert four.min_n == 4 and four.small_sample  # the fewest runs in any cell, not the most
    five = sep({"random": {"g": [0, 0, 0, 0, 0]}, "a": {"g": [5, 5, 5, 5, 5]}, "b": {"g": [0, 0, 0, 0, 0]}})["g"]
    assert five.label == "strong" and five.min_n == 5 and not five.small_sample
    assert not any("runs a cell" in n for n in _sep_json(five)["notes"])
    flat = sep({"random": {"g": [0, 0]}, "a": {"g": [0, 0]}, "b": {"g": [0, 0]}})["g"]
    assert flat.label == "none" and not flat.small_sample  # no label to doubt


# -- rules the mutation run (bench/mutation_kill_rate.py) found unstated ------------------------------------------
def test_sd_and_se_from_two_runs_and_none_from_one_without_a_warning():
    """Two runs have an SD (ddof 1) and an SE; one run has neither, and says so without numpy's warning."""
    import warnings

    two = stats.cells(results({"a": {"g": [1, 3]}}))[("a", "g")]
    assert two.sd == pytest.approx(math.sqrt(2)) and two.se == pytest.approx(1.0)
    one = stats.cells(results({"a": {"g": [4]}}))[("a", "g")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(one.sd) and math.isnan(one.se)


def test_numeric_seeds_sort_by_value_before_named_ones():
    rows = [Row(0, "a", "g", seed, float(score)) for seed, score in (("x", 4), ("10", 3), ("9", 2), ("b", 5))]
    cell = stats.cells(Results(source="t", rows=rows, columns=["setting", "game", "seed", "score"]))[("a", "g")]
    assert list(cell.scores) == [2.0, 3.0, 5.0, 4.0]  # 9, 10 (by value), then b, x (by name)


def test_cohen_d_with_three_runs_and_none_from_two_without_a_warning():
    """n1 + n2 = 3 has one degree of freedom: d is defined; n1 + n2 = 2 has none: NaN, quietly."""
    import warnings

    # a = [1, 3] (mean 2, SS 2), b = [5] (SS 0): pooled SD sqrt(2 / 1); d = (2 - 5) / sqrt(2)
    assert stats.cohen_d(np.array([1.0, 3]), np.array([5.0])) == pytest.approx(-3 / math.sqrt(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(stats.cohen_d(np.array([1.0]), np.array([2.0])))


def test_anova_needs_two_groups():
    assert math.isnan(stats.anova_p([np.array([1.0, 2, 3])]))
    assert math.isnan(stats.anova_p([]))


def test_two_criteria_are_strong_one_is_weak():
    assert stats.Separability("g", criteria=[True, True, False]).label == "strong"
    assert stats.Separability("g", criteria=[False, True, True]).label == "strong"
    assert stats.Separability("g", criteria=[False, False, True]).label == "weak"


def test_the_quarter_gap_is_top_minus_bottom():
    s = sep({"random": {"g": [0, 1]}, "a": {"g": [9, 11]}, "b": {"g": [5, 7]}, "c": {"g": [1, 3]}})["g"]
    assert (s.top, s.bottom) == (["a"], ["c"]) and s.gap_quartile == pytest.approx(10 - 2)


def test_two_settings_are_enough_for_the_anova():
    s = sep({"random": {"g": [0, 1, 2]}, "a": {"g": [5, 6, 7]}})["g"]
    assert 3 not in s.lacking and s.p_anova == pytest.approx(sps.f_oneway([0, 1, 2], [5, 6, 7]).pvalue)
    alone = sep({"random": {"g": [0, 1, 2]}})["g"]
    assert alone.lacking[3] == "only one setting"


def test_q_must_be_strictly_below_its_bound(monkeypatch):
    """Criteria (1) and (3) pass on q < 0.05, not q <= 0.05: at q exactly the bound they fail."""
    data = {"random": {"g": [0, 1, 2, 1]}, "a": {"g": [5, 6, 7, 6]}, "b": {"g": [2, 3, 4, 3]}}
    s = sep(data)["g"]
    assert s.criteria[0] and s.criteria[2]
    monkeypatch.setattr(stats, "Q_MAX", s.q_best)
    assert not sep(data)["g"].criteria[0]
    monkeypatch.setattr(stats, "Q_MAX", s.q_anova)
    assert not sep(data)["g"].criteria[2]


def test_d_and_eta2_pass_at_their_bound():
    """d >= 0.8 and eta^2 >= 0.14 are inclusive: at exactly the bound the criterion passes."""
    data = {"random": {"g": [0, 1, 2, 1]}, "a": {"g": [5, 6, 7, 6]}, "b": {"g": [2, 3, 4, 3]}}
    s = sep(data)["g"]
    for name, value, i in (("D_MIN", s.d_best, 0), ("D_MIN", s.d_quartile, 1), ("ETA2_MIN", s.eta2, 2)):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(stats, name, value)
            assert sep(data)["g"].criteria[i], (name, value)
            m.setattr(stats, name, np.nextafter(value, np.inf))
            assert not sep(data)["g"].criteria[i], (name, value)


def test_each_criterion_stands_on_its_own_data():
    """A criterion is judged on its own data: (1) passes when (2) lacks data (one setting besides the baseline),
    and (2) passes when (1) and (3) lack the baseline."""
    two = sep({"random": {"g": [0, 1, 0, 1]}, "a": {"g": [9, 10, 9, 10]}})["g"]
    assert set(two.lacking) == {2} and two.criteria == [True, False, True]
    assert two.gap_best == pytest.approx(9.5 - 0.5)  # best minus baseline
    no_base = sep({"a": {"g": [9, 10, 9]}, "b": {"g": [5, 6, 5]}, "c": {"g": [0, 1, 0]}})["g"]
    assert set(no_base.lacking) == {1, 3} and no_base.criteria == [False, True, False]
    alone = sep({"random": {"g": [0, 1]}})["g"]
    assert alone.lacking[1] == "no setting besides the baseline"
    assert alone.lacking[2] == "fewer than two settings besides the baseline"
    blank = stats.Separability("g")  # before any data: no criterion passed, no runs
    assert blank.criteria == [False, False, False] and blank.label == "none" and blank.min_n == 0
