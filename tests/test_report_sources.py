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
    from workstation.qa.evaluate import wilson

    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-3) and hi == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 0) is None


def test_grid_cap_is_counted_before_expanding():
    from workstation.batch.grid import MAX_CELLS, GridError, parse_grid

    head = 'name = "g"\ngames = "all"\n[[settings]]\nlabel = "r"\nspec = "random"\n'
    with pytest.raises(GridError, match="cells"):
        parse_grid(head.replace('games = "all"\n', 'games = "all"\nseeds = "0..4294967295"\n'))
    n = MAX_CELLS // 21 + 1  # fits as seeds, too many as cells with 21 games
    with pytest.raises(GridError, match=f"{21 * n:,} cells"):
        parse_grid(head.replace('games = "all"\n', f'games = "all"\nseeds = "0..{n - 1}"\n'))
