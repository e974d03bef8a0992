"""`report A B ...` joins batches, sessions and CSVs, warns when settings were played under different budgets,
starts or packs, adds human-normalised scores; the default baseline finds `random|k=v`; numbers never print in
exponent form. And `qa table`'s Wilson intervals, and a grid's cell cap counted before expanding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workstation.cli import main

HEAD = "run_id,setting,game,seed,score,lives_lost,turns,invalid_turns,frames,budget,complete,start,prompt_pack\n"


def csv(path: Path, rows: list[tuple], budget: int = 900, start: str = "fixed", pack: str = "default@b12d1468") -> Path:
    path.write_text(HEAD + "".join(f"{s}{g}{n},{s},{g},{n},{v},0,{t},0,{budget},{budget},true,{start},{pack}\n"
                                   for s, g, n, v, t in rows))
    return path


def test_sources_join_and_mixed_budgets_warn(tmp_path, capsys):
    a = csv(tmp_path / "a.csv", [("random", "breakout", i, i, 12040) for i in range(3)]
            + [("model", "breakout", i, 10 + i, 150) for i in range(3)])
    h = csv(tmp_path / "h.csv", [("human:P1", "breakout", i, 30 + i, 90) for i in range(3)], budget=600)
    assert main(["report", str(a), str(h), "--json", str(tmp_path / "r.json")]) == 0
    out, err = capsys.readouterr()
    assert "different budgets" in err and "human:P1: 600" in err and err.count("\n") == 1
    assert "Human-normalised" in out and "e+0" not in out
    r = json.loads((tmp_path / "r.json").read_text())
    # model mean 11, random 1, human 31: (11 - 1) / (31 - 1)
    assert r["human_normalised"]["model"]["games"]["breakout"] == pytest.approx(10 / 30)
    assert r["human_normalised"]["model"]["overall"] == pytest.approx(10 / 30)
    assert "36120" in out  # the turns (3 x 12040) as a whole number, not 3.612e+04
    assert "+- 0.58 (3)" in out  # SE at 2 decimals


def test_same_budgets_no_warning_and_varied_baseline_found(tmp_path, capsys):
    a = csv(tmp_path / "a.csv", [("random|history=3", "breakout", i, i, 10) for i in range(3)]
            + [("random|history=0", "breakout", i, 2 * i, 10) for i in range(3)]
            + [("model|history=3", "breakout", i, 5 + i, 10) for i in range(3)])
    assert main(["report", str(a)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "baseline 'random|history=3'" in out


def test_different_starts_and_packs_warn(tmp_path, capsys):
    a = csv(tmp_path / "a.csv", [("random", "breakout", i, i, 10) for i in range(2)])
    b = csv(tmp_path / "b.csv", [("model", "breakout", i, i, 10) for i in range(2)], start="noops:30",
            pack="mine@00000000")
    assert main(["report", str(a), str(b)]) == 0
    err = capsys.readouterr().err
    assert "different starts" in err and "different prompt packs" in err and err.count("\n") == 2


def test_qa_table_wilson_interval():
    from workstation.studies.qa.evaluate import wilson

    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-3) and hi == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 0) is None


def test_grid_cap_is_counted_before_expanding():
    from workstation.studies.batch.grid import MAX_CELLS, GridError, parse_grid

    head = 'name = "g"\ngames = "all"\n[[settings]]\nlabel = "r"\nspec = "random"\n'
    with pytest.raises(GridError, match="cells"):
        parse_grid(head.replace('games = "all"\n', 'games = "all"\nseeds = "0..4294967295"\n'))
    n = MAX_CELLS // 21 + 1  # fits as seeds, too many as cells with 21 games
    with pytest.raises(GridError, match=f"{21 * n:,} cells"):
        parse_grid(head.replace('games = "all"\n', f'games = "all"\nseeds = "0..{n - 1}"\n'))


# -- the report's own rules (bench/mutation_kill_rate.py analysis/report) --------------------------------------
def _results(data: dict[str, list[float]]):
    from workstation.studies.analysis.table import Results, Row

    rows = [Row(0, s, "breakout", str(i), float(v)) for s, vs in data.items() for i, v in enumerate(vs)]
    return Results(source=Path("t.csv"), rows=rows, columns=["setting", "game", "seed", "score"])


def test_the_baseline_is_found_whatever_its_case_and_the_bootstrap_seed_defaults_to_0():
    from workstation.studies.analysis import report

    r = report.build(_results({"Random": [0, 1, 0], "model": [5, 6, 7]}))
    assert r.baseline == "Random" and r.bootstrap_seed == 0 and r.separability["breakout"].best == "model"


def test_a_missing_baseline_names_the_settings_or_is_left_out_when_asked():
    from workstation.base.errors import UserError
    from workstation.studies.analysis import report

    res = _results({"a": [0, 1], "b": [5, 6]})
    with pytest.raises(UserError, match=r"baseline setting 'random' has no runs .*settings: a, b\)"):
        report.build(res)
    many = _results({f"s{i}": [i, i + 1] for i in range(9)})
    with pytest.raises(UserError, match=r"settings: s0, s1, s2, s3, s4, s5, s6, s7, \.\.\.\)"):
        report.build(many)
    r = report.build(res, without_baseline=True)
    assert r.separability == {} and r.ranks["breakout"] == {"b": 1.0, "a": 2.0}


def test_no_anova_note_for_a_game_that_lacks_the_anova():
    from workstation.studies.analysis import report

    r = report.build(_results({"random": [0, 0]}))  # one setting: criterion (3) lacks data, no p to speak of
    notes = report._sep_json(r.separability["breakout"])["notes"]
    assert 3 in r.separability["breakout"].lacking and not any("ANOVA" in n for n in notes), notes


def test_human_normalised_leaves_out_a_game_where_human_and_baseline_tie_and_averages_the_rest():
    from workstation.studies.analysis import report
    from workstation.studies.analysis.table import Results, Row

    rows = [Row(0, s, g, str(i), float(v)) for s, g, vs in (
        ("random", "a", [0, 2]), ("human:P", "a", [10, 10]), ("m", "a", [6, 6]),  # (6 - 1) / (10 - 1)
        ("random", "b", [1, 1]), ("human:P", "b", [3, 5]), ("m", "b", [4, 4]),  # (4 - 1) / (4 - 1) = 1
        ("random", "c", [2, 2]), ("human:P", "c", [2, 2]), ("m", "c", [9, 9])) for i, v in enumerate(vs)]
    res = Results(source=Path("t.csv"), rows=rows, columns=["setting", "game", "seed", "score"])
    r = report.build(res)
    assert r.human is not None and set(r.human) == {"m"}  # neither the humans nor the baseline
    games = r.human["m"]["games"]
    assert set(games) == {"a", "b"} and games["a"] == pytest.approx(5 / 9) and games["b"] == pytest.approx(1.0)
    assert r.human["m"]["overall"] == pytest.approx((5 / 9 + 1.0) / 2)
    assert report.human_normalised(res, r.cells, "human:P") is None  # a human baseline: nothing to normalise by


def test_the_notes_say_why_d_or_the_anova_is_not_a_number():
    from workstation.studies.analysis import report

    notes = lambda data: report._sep_json(report.build(_results(data)).separability["breakout"])["notes"]
    assert notes({"random": [0, 0], "m": [3, 3]})[0] == "d_best is +infinite: both groups have zero variance"
    assert notes({"random": [3, 3], "m": [0, 0]})[0] == "d_best is -infinite: both groups have zero variance"
    flat = notes({"random": [1, 1], "m": [1, 1]})
    assert "d_best undefined: the best setting and the baseline score the same on every run" in flat
    assert "ANOVA undefined: every setting scores the same on every run" in flat
    assert notes({"random": [0, 1, 2, 1, 0], "m": [3, 5, 4, 4, 3]}) == []  # finite d, a p value, 5 runs: nothing
    assert not any(n.startswith("d_best undefined") for n in notes({"random": [1], "m": [2]}))  # lacking, not undefined


def _rows(*cells: tuple[str, str, list[float]]):
    from workstation.studies.analysis.table import Results, Row

    rows = [Row(0, s, g, str(i), float(v)) for s, g, vs in cells for i, v in enumerate(vs)]
    return Results(source=Path("t.csv"), rows=rows, columns=["setting", "game", "seed", "score"])


def test_human_normalised_needs_both_the_humans_and_the_baseline_on_a_game_and_takes_a_human_below_random():
    from workstation.studies.analysis import report

    res = _rows(("random", "a", [0, 2]), ("human:P", "a", [5, 5]), ("m", "a", [3, 3]),  # (3 - 1) / (5 - 1)
                ("random", "b", [1, 1]), ("m", "b", [4, 4]),  # no human runs on b: left out, not a division by 0
                ("human:P", "c", [7, 7]), ("m", "c", [9, 9]),  # no baseline runs on c: left out
                ("random", "d", [10, 10]), ("human:P", "d", [4, 4]), ("m", "d", [7, 7]),  # (7 - 10) / (4 - 10)
                ("random", "e", [1, 1]), ("human:P", "e", [1.5, 1.5]), ("m", "e", [2, 2]))  # (2 - 1) / (1.5 - 1)
    r = report.build(res)
    games = {"a": pytest.approx(0.5), "d": pytest.approx(0.5), "e": pytest.approx(2.0)}
    assert r.human == {"m": {"games": games, "overall": pytest.approx(1.0)}}


def test_no_human_normalised_with_a_human_baseline_even_beside_other_humans():
    from workstation.studies.analysis import report

    res = _rows(("human:P", "a", [2, 2]), ("human:Q", "a", [8, 8]), ("m", "a", [4, 4]))
    r = report.build(res, baseline="human:P")
    assert r.human is None  # not (4 - 2) / (5 - 2) against the mean of both humans
    assert report.build(_rows(("random", "a", [0, 1]), ("m", "a", [4, 4]))).human is None  # no humans at all


def test_of_several_expanded_baselines_the_one_at_the_papers_values_else_the_first():
    from workstation.studies.analysis import report

    def baseline(*settings: str) -> str:
        return report.build(_results({**{s: [0, 1] for s in settings}, "m": [5, 6]})).baseline

    assert baseline("random|history=0", "random|history=3") == "random|history=3"  # the paper's history
    assert baseline("random|history=0", "random|history=5") == "random|history=0"  # neither: the first
    assert report.varied_baseline(["random|history=5", "Random|history=0"], "random") == "random|history=5"
    assert baseline("random|feedback=False|history=3", "random|feedback=true|history=3") == \
        "random|feedback=true|history=3"  # every value at the paper's, whatever its case
    assert baseline("random|history=3") == "random|history=3"  # the one variant
    assert report.varied_baseline(["randomly|history=3", "m|history=3", "random"], "random") is None
    assert report.varied_baseline(["random|note=a=b", "random|history=3"], "random") == "random|history=3"  # "=" in a value


def test_a_missing_baseline_lists_eight_settings_in_full():
    from workstation.base.errors import UserError
    from workstation.studies.analysis import report

    with pytest.raises(UserError, match=r"settings: s0, s1, s2, s3, s4, s5, s6, s7\); name one"):
        report.build(_results({f"s{i}": [i, i + 1] for i in range(8)}))  # no ", ..." when nothing is left out
