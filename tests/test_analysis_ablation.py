"""Ablation pairs (one protocol field apart) and their seeded paired bootstrap CIs."""

import math

import numpy as np

from workstation.studies.analysis import ablation
from workstation.studies.analysis.table import Results, Row


def rows(spec: dict, protocol: dict | None = None) -> Results:
    out = []
    for setting, games in spec.items():
        for game, scores in games.items():
            for seed, v in enumerate(scores):
                out.append(Row(0, setting, game, str(seed), float(v), protocol=dict((protocol or {}).get(setting, {}))))
    cols = ["setting", "game", "seed", "score", *sorted({k for p in (protocol or {}).values() for k in p})]
    return Results("test", out, cols)


def test_bootstrap_is_deterministic_for_a_seed():
    diffs = np.array([1.0, -2, 3, 0.5, 4, -1, 2, 2.5])
    a, b = ablation.paired_ci(diffs, seed=3), ablation.paired_ci(diffs, seed=3)
    assert a == b
    assert a[0] == diffs.mean() and a[1] < a[0] < a[2]
    assert ablation.paired_ci(diffs, seed=4) != a
    mean, lo, hi = ablation.paired_ci(np.array([2.0]), seed=0)
    assert mean == 2 and math.isnan(lo) and math.isnan(hi)


def test_pairing_by_seed_sees_a_constant_gain_through_noisy_seeds():
    ref = [0, 50, 3, 80, 20, 7, 64, 1, 33, 90]
    r = rows({"m|feedback=true": {"g": ref}, "m|feedback=false": {"g": [x + 5 for x in ref]}})
    (ci,) = ablation.ablations(r, seed=0)
    assert ci.pair.field == "feedback" and ci.pair.reference == "m|feedback=true"  # the paper's default is the reference
    assert (ci.n, ci.mean_diff, ci.lo, ci.hi, ci.verdict) == (10, 5, 5, 5, "variant higher")


def test_pairs_need_one_field_apart_and_the_same_base():
    proto = {"m|a": {"max_actions": "10", "memory": "structured"}, "m|b": {"max_actions": "1", "memory": "structured"},
             "m|c": {"max_actions": "1", "memory": "append"}, "n|a": {"max_actions": "5", "memory": "structured"}}
    r = rows({s: {"g": [1, 2]} for s in proto}, proto)
    got = {(p.variant, p.reference, p.field) for p in ablation.pairs(r)}
    assert got == {("m|b", "m|a", "max_actions"), ("m|c", "m|b", "memory")}


def test_labels_supply_fields_when_no_column_does():
    r = rows({"x|guide=short|max_actions=1": {"g": [1, 2]}, "x|guide=full|max_actions=1": {"g": [1, 3]},
              "x|guide=short|max_actions=5": {"g": [0, 0]}})
    got = sorted((p.field, p.variant_value, p.reference_value) for p in ablation.pairs(r))
    assert got == [("guide", "short", "full"), ("max_actions", "5", "1")]


def test_a_field_that_varies_within_a_setting_is_not_a_descriptor():
    r = rows({"m1": {"g": [1, 2]}, "m2": {"g": [1, 2]}})
    r.rows[0].protocol = {"frames": "450"}
    for row in r.rows[1:]:
        row.protocol = {"frames": "900"}
    r.rows[2].protocol = {"frames": "450"}  # m2 mixes budgets
    assert ablation.pairs(r) == []
