"""`workstation report` end to end: a CSV, a batch directory with real recordings, bad input."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from workstation.cli import main
from workstation.studies.analysis import behaviour

HEADER = ["setting", "game", "seed", "score"]


def write_csv(path: Path, rows: list[list], header: list[str] = HEADER) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def sample(tmp_path: Path) -> Path:
    cols = HEADER + ["turns", "invalid_turns", "failed_turns", "calls", "input_tokens", "output_tokens",
                     "reasoning_tokens", "cost_usd", "complete", "feedback"]
    rows = []
    for s, lift, fb in (("random", 0, "true"), ("m|feedback=true", 8, "true"), ("m|feedback=false", 4, "false")):
        for g in ("breakout", "pong"):
            for seed in range(4):
                calls = 0 if s == "random" else 140
                rows.append([s, g, seed, lift + seed % 3, 150, seed % 2, 0, calls, calls * 5000, calls * 100,
                             calls * 600, calls * 0.0186, "true", fb])
    rows.append(["m|feedback=true", "pong", 9, "", 40, 0, 0, 10, 1, 1, 1, 0.1, "false", "true"])  # incomplete
    return write_csv(tmp_path / "results.csv", rows, cols)


def test_report_on_a_csv_writes_json_md_and_plots(tmp_path, capsys):
    src = sample(tmp_path)
    out_json, out_md, plots = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "plots"
    assert main(["report", str(src), "--json", str(out_json), "--md", str(out_md), "--plots", str(plots)]) == 0
    text = capsys.readouterr().out
    assert "Separability per game" in text and "1 incomplete run left out" in text
    d = json.loads(out_json.read_text())
    assert d["runs"] == 24 and d["incomplete_left_out"] == 1
    for g in ("breakout", "pong"):
        sep = d["games"][g]["separability"]
        assert {"d_best", "q_best", "d_quartile", "q_anova", "eta2", "criteria", "label"} <= set(sep)
        assert len(sep["criteria"]) == 3 and sep["label"] in ("strong", "weak", "none")
        cell = d["games"][g]["settings"]["random"]
        assert cell["n"] == 4 and cell["mean"] == pytest.approx(0.75) and cell["se"] > 0
    assert {c["setting"] for c in d["cells"]} == {"random", "m|feedback=true", "m|feedback=false"}
    ab = d["ablations"]
    assert {(a["field"], a["variant"], a["game"]) for a in ab} == {("feedback", "m|feedback=false", g)
                                                                     for g in ("breakout", "pong", "(all games)")}
    assert all(a["mean_diff"] == -4 and a["ci95"] == [-4, -4] for a in ab)
    assert next(a for a in ab if a["game"] == "(all games)")["n"] == 8  # every (game, seed) pair
    fp = d["footprint"]["all"]
    assert fp["runs"] == 24 and fp["totals"]["calls"] == 16 * 140 and fp["input_tokens_per_call"] == 5000
    assert "2,240 calls" in text and "about 5.0k input tokens per call" in text
    assert out_md.read_text().startswith("# Report:") and "| game |" in out_md.read_text()
    assert sorted(p.name for p in plots.iterdir()) == ["rank_heatmap.png", "scores.png"]
    assert (plots / "scores.png").read_bytes()[:4] == b"\x89PNG"


def test_plots_without_matplotlib_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    assert main(["report", str(sample(tmp_path)), "--plots", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "matplotlib" in err and "[plots]" in err


def test_batch_directory_reads_stagnation_from_its_recordings(tmp_path, capsys):
    runs = tmp_path / "b" / "runs"
    rows = []
    for seed in (0, 1):
        subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--agent", "random",
                        "--seed", str(seed), "--frames", "120", "--out", str(runs), "--quiet"], check=True, capture_output=True)
    for rec in sorted(runs.iterdir()):
        m, s = json.loads((rec / "manifest.json").read_text()), json.loads((rec / "summary.json").read_text())
        rows.append([m["run_id"], "random", "breakout", m["seed"], s["total_reward"], s["turns"]])
        rows.append(["x" + m["run_id"], "other", "breakout", m["seed"], s["total_reward"] + 1, s["turns"]])
    write_csv(tmp_path / "b" / "results.csv", rows, ["run_id", *HEADER, "turns"])
    assert main(["report", str(tmp_path / "b"), "--json", str(tmp_path / "r.json")]) == 0
    got = json.loads((tmp_path / "r.json").read_text())["behaviour"]["random"]
    expect = []
    for rec in sorted(runs.iterdir()):
        turns = [json.loads(line) for line in (rec / "turns.jsonl").read_text().splitlines() if line.strip()]
        second = turns[len(turns) // 2:]
        expect.append(sum(all(a == "noop" for a in t["actions"]) for t in second) / len(second))
    assert got["stagnation_runs"] == 2 and got["stagnation"] == pytest.approx(sum(expect) / 2)
    assert json.loads((tmp_path / "r.json").read_text())["behaviour"]["other"]["stagnation_runs"] == 0


def test_noop_share_counts_the_second_half():
    from workstation.store.records import TurnRecord

    t = lambda *a: TurnRecord(actions=list(a))
    assert behaviour.noop_share([t("noop"), t("fire"), t("noop", "noop"), t("left", "noop")]) == 0.5
    assert behaviour.noop_share([t("fire"), t("noop"), t("noop")]) == 1.0  # turns 1..2 of 3


@pytest.mark.parametrize("content, needle", [
    ("", "is empty"),
    ("setting,game,score\nrandom,pong,1\n", "line 1: missing column(s) seed"),
    ("setting,game,seed,score\nrandom,pong,0,abc\n", "line 2: score 'abc' is not a number"),
    ("setting,game,seed,score\nrandom,pong,0,1\nrandom,pong,0,2\n", "line 3: setting 'random' game 'pong' seed '0' also on line 2"),
    ("setting,game,seed,score\nrandom,pong,0\n", "line 2: 3 fields where the header has 4"),
    ("setting,game,seed,score,complete\nrandom,pong,0,1,maybe\n", "complete 'maybe' is not true or false"),
    ("setting,game,seed,score\n,pong,0,1\n", "line 2: setting is empty"),
    ("setting,game,seed,score\nrandom,pong,0,nan\n", "not a finite number"),
    ("setting,game,seed,score,complete\nrandom,pong,0,1,false\n", "no complete runs (1 incomplete"),
    ("setting,game,seed,score\na,pong,0,1\na,pong,1,2\n", "baseline setting 'random' has no runs"),
    ("setting,game,seed,score\nrandom,pong,0,\"1\n", "not a readable CSV"),
    # the one seed rule (workstation.game.seed) and the games: the CSV line named
    ("setting,game,seed,score\nrandom,pong,-1,1\n", "line 2: seed must be 0..4294967295 (got -1)"),
    ("setting,game,seed,score\nrandom,pong,99999999999999,1\n", "line 2: seed must be 0..4294967295 (got 99999999999999)"),
    ("setting,game,seed,score\nrandom,pong,0,1\nrandom,pong,1.5,1\n", "line 3: seed must be a whole number (got '1.5')"),
    ("setting,game,seed,score\nrandom,nogame,0,1\n", "line 2: unknown game 'nogame'"),
])
def test_bad_csv_is_one_line_exit_2(tmp_path, content, needle):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    p = subprocess.run([sys.executable, "-m", "workstation", "report", str(path)], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and needle in p.stderr and p.stdout == ""


def test_paths_after_report_options_are_paths_too():
    """`report BATCH --paper judged/` (the documented order): a path after an option is one of the paths."""
    from workstation.cli import build_parser

    args = build_parser().parse_args(["report", "b2", "--paper", "judged", "--md", "p.md", "qa/eval"])
    assert args.results == ["b2", "judged", "qa/eval"] and args.paper and args.md == "p.md"
    p = subprocess.run([sys.executable, "-m", "workstation", "report", "b2", "--paper", "judged", "--bogus"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "unrecognized arguments: judged --bogus" in p.stderr, p.stderr


def test_missing_paths_are_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.csv")]) == 2
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "does not exist" in err[0] and "has no results.csv" in err[1]


def test_other_baseline_by_name(tmp_path, capsys):
    src = write_csv(tmp_path / "r.csv", [["human", "pong", s, s] for s in range(3)] + [["m", "pong", s, 9 + s] for s in range(3)])
    assert main(["report", str(src), "--baseline", "human", "--json", str(tmp_path / "o.json")]) == 0
    sep = json.loads((tmp_path / "o.json").read_text())["games"]["pong"]["separability"]
    assert sep["best"] == "m" and sep["criteria"][0] is True and sep["lacking"] == {"2": "fewer than two settings besides the baseline"}


def test_baseline_name_matches_regardless_of_case(tmp_path, capsys):
    src = write_csv(tmp_path / "r.csv", [["Random", "Pong", s, s] for s in range(3)] + [["m", "Pong", s, 9 + s] for s in range(3)])
    assert main(["report", str(src), "--json", str(tmp_path / "o.json")]) == 0
    assert json.loads((tmp_path / "o.json").read_text())["baseline"] == "Random"


def test_a_batch_results_table_with_protocol_columns(tmp_path):
    """The columns `workstation batch` writes: the run columns, then the expanded protocol fields."""
    cols = ["run_id", "setting", "game", "seed", "score", "lives_lost", "turns", "invalid_turns", "failed_turns",
            "frames", "complete", "calls", "input_tokens", "output_tokens", "reasoning_tokens", "cost_usd", "wall_s",
            "repeat", "max_actions", "memory", "history", "reward_history", "feedback", "clock", "start", "guide"]
    rows = []
    for label, fb, ma, lift in (("random|feedback=true|max_actions=1", True, 1, 0), ("random|feedback=true|max_actions=10", True, 10, 0),
                                ("m|feedback=true|max_actions=1", True, 1, 6), ("m|feedback=false|max_actions=1", False, 1, 3),
                                ("m|feedback=true|max_actions=10", True, 10, 9), ("m|feedback=false|max_actions=10", False, 10, 5)):
        for seed in range(5):
            rows.append([f"{label}-{seed}", label, "breakout", seed, lift + seed, 1, 150, 0, 0, 900, "true", 0, 0, 0, 0,
                         "", 0.3, 3, ma, "structured", 3, 3, str(fb).lower(), "paused", "noops:30", "full"])
    rows.append(["cut", "m|feedback=true|max_actions=1", "breakout", 9, 2, 0, 40, 0, 0, 120, "false", 0, 0, 0, 0, "", 0.1,
                 3, 1, "structured", 3, 3, "true", "paused", "noops:30", "full"])
    src = write_csv(tmp_path / "results.csv", rows, cols)
    assert main(["report", str(src), "--baseline", "random|feedback=true|max_actions=10", "--json", str(tmp_path / "o.json")]) == 0
    d = json.loads((tmp_path / "o.json").read_text())
    assert d["runs"] == 30 and d["incomplete_left_out"] == 1
    pairs = {(a["variant"], a["reference"], a["field"]) for a in d["ablations"]}
    assert pairs == {
        ("m|feedback=false|max_actions=1", "m|feedback=true|max_actions=1", "feedback"),
        ("m|feedback=false|max_actions=10", "m|feedback=true|max_actions=10", "feedback"),
        ("m|feedback=true|max_actions=1", "m|feedback=true|max_actions=10", "max_actions"),
        ("m|feedback=false|max_actions=1", "m|feedback=false|max_actions=10", "max_actions"),
        ("random|feedback=true|max_actions=1", "random|feedback=true|max_actions=10", "max_actions"),
    }
    fb = next(a for a in d["ablations"] if a["variant"] == "m|feedback=false|max_actions=10")
    assert fb["mean_diff"] == -4 and fb["ci95"] == [-4, -4] and fb["verdict"] == "variant lower"
    sep = d["games"]["breakout"]["separability"]
    assert sep["best"] == "m|feedback=true|max_actions=10" and sep["label"] == "strong"
    assert "footprint" in d and d["footprint"]["all"]["totals"]["calls"] == 0 and "cost_usd" not in d["footprint"]["all"]["totals"]


def test_a_tiny_p_value_is_shown_as_below_a_bound_never_as_zero(tmp_path):
    """Separability's q-values to four decimals; one under 0.0001 reads `<0.0001`, not `0.0000` (it is not zero)."""
    import subprocess
    import sys

    md = tmp_path / "r.md"
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-m", "workstation", "report", str(root / "docs" / "sample_results.csv"),
                        "--md", str(md)], capture_output=True, text=True, cwd=root)
    assert r.returncode == 0, r.stderr
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in md.read_text().splitlines()
            if line.startswith("| breakout | model-a") or line.startswith("| boxing | model-a")}
    assert rows["breakout"][4] == "<0.0001" and rows["breakout"][6] == "<0.0001", rows
    assert rows["boxing"][4] == "0.7133" and rows["boxing"][6] == "0.7780", rows
