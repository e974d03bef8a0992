"""`workstation report EVAL_DIR...`: several `qa eval` results side by side, as `qa table` prints them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workstation.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "qa-sample"


@pytest.fixture(scope="module")
def evals(tmp_path_factory):
    root = tmp_path_factory.mktemp("evals")
    out = []
    for seed in (0, 1):
        d = root / f"random-{seed}"
        assert main(["qa", "eval", str(SAMPLE), "--agent", "random", "--repeats", "1", "--seed", str(seed),
                     "--out", str(d)]) == 0
        out.append(d)
    return out


def test_report_on_eval_dirs_prints_qa_tables_table(evals, tmp_path, capsys):
    capsys.readouterr()
    assert main(["qa", "table", *map(str, evals)]) == 0
    expected = capsys.readouterr().out
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    assert main(["report", *map(str, evals), "--json", str(js), "--md", str(md)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(expected)  # the same table, then the files it wrote
    assert f"wrote {js}" in out and f"wrote {md}" in out
    rows = json.loads(js.read_text())
    summaries = [json.loads((d / "summary.json").read_text()) for d in evals]
    assert [r["accuracy"] for r in rows] == [s["accuracy"] for s in summaries]
    text = md.read_text()
    assert "| model | perception | motion | decision | overall | agreement |" in text
    assert text.count("| random |") == 4  # two models, in the group table and the category table
    overall = f"{100 * summaries[1]['accuracy']['overall']:.1f}% ({summaries[1]['counts']['overall']})"
    assert overall in text


def test_a_mix_of_eval_and_batch_dirs_is_one_line(evals, tmp_path, capsys):
    csv = tmp_path / "results.csv"
    csv.write_text("setting,game,seed,score\nrandom,breakout,0,1\n")
    capsys.readouterr()
    assert main(["report", str(evals[0]), str(csv)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a mix" in err and str(csv) in err
    assert main(["report", str(csv), str(evals[0])]) == 2
    assert "not a mix" in capsys.readouterr().err
    assert main(["report", str(csv), str(csv)]) == 2  # several sources join, but one given twice is one line
    assert "given twice" in capsys.readouterr().err
    assert main(["report", str(evals[0]), "--plots", str(tmp_path / "p")]) == 2
    assert main(["report", str(csv)]) == 0  # one batch CSV still reports as before
