"""The judge's and QA's bad-input corpus (issue 26): hand-edited study files, refused arguments, bounds, writes
inside inputs. Each case: exit 2 (1 for a damaged artifact, named), at most 3 lines, no traceback, and every
file before it unchanged (nothing written by a refused command).

Real parts: a two-setting batch played through the OpenAI SDK against the fake provider on 127.0.0.1, a real
judge study, re-query, over-reliance and stuck report written by the commands themselves, a real two-player
match, the real emulator.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bad_input_world import snapshot
from tests.fake_provider import FakeProvider, fake_server  # noqa: F401
from tests.judge_helpers import JUDGE, MODELS, ScriptedJudge, make_batch, model_of
from workstation.cli import main


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def world(fake_server, tmp_path_factory):  # noqa: F811
    """A batch, a finished judge study (with --groups, re-query and over-reliance), a stuck report, a QA eval
    and a two-player match."""
    fake_server.reset()
    base = tmp_path_factory.mktemp("judgeworld")
    batch = make_batch(fake_server, base / "batch")
    fake_server.responder = ScriptedJudge()
    study = base / "study"
    judge = ["judge", str(batch), "--judge", f"compat:{JUDGE}", "--base-url", fake_server.url("compat"),
             "--out", str(study)]
    assert run_cli([*judge, "--groups", "alpha/beta"])[0] == 0
    assert run_cli(["judge", "requery", str(study)])[0] == 0
    assert run_cli(["judge", "overreliance", str(study), "--groups", "alpha/beta"])[0] == 0
    assert run_cli(["judge", "stuck", str(batch), "--out", str(base / "stuck")])[0] == 0
    assert run_cli(["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--frames", "30", "--quiet",
                    "--out", str(base / "matches")])[0] == 0
    (match,) = [p for p in (base / "matches").iterdir() if (p / "manifest.json").is_file()]
    qaset = Path(__file__).resolve().parents[1] / "recordings" / "qa-sample"
    shutil.copytree(qaset, base / "qaset")
    assert run_cli(["qa", "eval", str(base / "qaset"), "--agent", "random", "--repeats", "1",
                    "--out", str(base / "qaeval")])[0] == 0
    fake_server.reset()
    return {"base": base, "batch": batch, "study": study, "judge": judge, "match": match, "url": fake_server.url("compat")}


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _put_line(path: Path, n: int, text: str) -> None:
    lines = _lines(path)
    lines[n] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit(path: Path, fn: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    fn(data)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _verdict(fn: Callable[[dict], None]) -> Callable[[Path], None]:
    def damage(study: Path) -> None:
        lines = _lines(study / "verdicts.jsonl")
        v = json.loads(lines[1])
        fn(v)
        _put_line(study / "verdicts.jsonl", 1, json.dumps(v))
    return damage


def _unseal(damage: Callable[[Path], None]) -> Callable[[Path], None]:
    """The same damage with the seal taken away too: the typed readers must still refuse it (one line)."""
    def both(study: Path) -> None:
        damage(study)
        (study / "seal.json").unlink()
    return both


# (name, damage to a copy of the study) -- every command that reads a study must name it and set it aside
STUDY_DAMAGE: list[tuple[str, Callable[[Path], None]]] = [
    ("verdict line is a list", lambda d: _put_line(d / "verdicts.jsonl", 1, "[1, 2]")),
    ("verdict line is a number", lambda d: _put_line(d / "verdicts.jsonl", 1, "7")),
    ("verdict turn is text", _verdict(lambda v: v.update(turn="five"))),
    ("verdict without run_id", _verdict(lambda v: v.pop("run_id"))),
    ("verdict parsed is text", _verdict(lambda v: v.update(parsed="yes"))),
    ("verdict group unknown", _verdict(lambda v: v.update(failure=True, group="luck", category="luck"))),
    ("verdict truth_agrees odd", _verdict(lambda v: v.update(truth_agrees="maybe"))),
    ("verdicts not UTF-8", lambda d: (d / "verdicts.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")),
    ("judge.json a list", lambda d: (d / "judge.json").write_text("[]")),
    ("judge.json not UTF-8", lambda d: (d / "judge.json").write_bytes(b"{\"format\": \"\xff\"}")),
    ("judge.json turns text", lambda d: _edit(d / "judge.json", lambda m: m.update(turns="x"))),
    ("judge.json samples missing", lambda d: _edit(d / "judge.json", lambda m: m.pop("samples"))),
    ("judge.json sample turns text", lambda d: _edit(d / "judge.json", lambda m: m["samples"][0].update(turns="1"))),
    ("summary a number", lambda d: (d / "summary.json").write_text("3")),
    ("summary per_setting text", lambda d: _edit(d / "summary.json", lambda s: s.update(per_setting="x"))),
    ("summary failures text", lambda d: _edit(d / "summary.json",
                                              lambda s: s["per_setting"]["alpha"].update(failures="many"))),
    ("summary truth missing", lambda d: _edit(d / "summary.json", lambda s: s.pop("truth"))),
    ("summary agreement forged", lambda d: _edit(d / "summary.json", lambda s: s["truth"].update(agreement_rate=1.0))),
    ("summary not UTF-8", lambda d: (d / "summary.json").write_bytes(b"\xc3\x28")),
    ("requery.json mcnemar missing", lambda d: _edit(d / "requery.json", lambda r: r.pop("mcnemar"))),
    ("requery.json pairs text", lambda d: _edit(d / "requery.json", lambda r: r.update(pairs="ten"))),
    ("requery.jsonl list line", lambda d: _put_line(d / "requery.jsonl", 0, "[]")),
    ("requery.jsonl condition odd", lambda d: _put_line(
        d / "requery.jsonl", 0, json.dumps({**json.loads(_lines(d / "requery.jsonl")[0]), "condition": "half"}))),
    ("overreliance.json a number", lambda d: (d / "overreliance.json").write_text("1")),
    ("overreliance p text", lambda d: _edit(d / "overreliance.json", lambda o: o["fisher"].update(p="low"))),
]
STUDY_DAMAGE += [(f"{name}, unsealed", _unseal(fn)) for name, fn in STUDY_DAMAGE[:]
                 if "requery" not in name and "overreliance" not in name]


def _readers(w: dict, study: Path) -> list[list[str]]:
    return [["judge", "requery", str(study)], ["judge", "overreliance", str(study), "--groups", "alpha/beta"],
            ["report", str(study), "--paper"], [*w["judge"][:-1], str(study)]]


def _refused(code: int, err: str, want: int, before: dict, root: Path) -> None:
    assert code == want, err
    assert "Traceback" not in err and 1 <= len(err.strip().splitlines()) <= 3, err
    assert snapshot(root) == before, "a refused command changed a file"


@pytest.mark.parametrize("name, damage", STUDY_DAMAGE, ids=[n for n, _ in STUDY_DAMAGE])
def test_a_damaged_study_is_named_and_set_aside_by_every_reader(name, damage, world, tmp_path, fake_server):  # noqa: F811
    study = tmp_path / "study"
    shutil.copytree(world["study"], study)
    damage(study)
    before = snapshot(tmp_path)
    fake_server.reset()
    for argv in _readers(world, study):
        if argv[0] == "judge" and argv[1] not in ("requery", "overreliance"):
            if name.startswith("summary") and "unsealed" in name:
                continue  # a resume rewrites summary.json from the verdicts: nothing in it is read
        code, _, err = run_cli(argv)
        if argv[1] not in ("requery", "overreliance") and name.startswith("judge.json") and code == 2:
            _refused(code, err, 2, before, tmp_path)  # a judge.json that does not read at all is no judging to resume
            assert "is not a judge directory" in err and "unsealed" in name
            continue
        _refused(code, err, 1, before, tmp_path)
        assert "damaged" in err and str(study) in err, err
    assert not fake_server.seen, "a damaged study was asked about"


def test_an_intact_study_reads_and_an_unsealed_one_still_checks(world, tmp_path):
    study = tmp_path / "study"
    shutil.copytree(world["study"], study)
    code, out, err = run_cli(["report", str(study), "--paper"])
    assert code == 0, err
    (study / "seal.json").unlink()  # a study written before seals: read, each record checked
    assert run_cli(["report", str(study), "--paper"])[1] == out


BAD_ARGS: list[tuple[list[str], str]] = [
    (["--turns", "1001"], "--turns must be at most 1000"),
    (["--turns", "0"], "--turns must be at least 1"),
    (["--gap", "1000000"], "--gap must be at most 100000"),
    (["--seed", "-1"], "--seed must be at least 0"),
    (["--seed", str(2**32)], "--seed must be at most 4294967295"),
    (["--max-cost", "inf"], "--max-cost must be a finite number"),
    (["--max-cost", "nan"], "--max-cost must be a finite number"),
    (["--max-cost", "-1"], "--max-cost must be 0 or more"),
    (["--concurrency", "1000"], "--concurrency must be at most 256"),
    (["--calibrate-repeats", "0"], "--calibrate-repeats must be at least 1"),
    (["--calibrate-repeats", "101"], "--calibrate-repeats must be at most 100"),
    (["--min-turns", "10000000"], "--min-turns must be at most 1000000"),
    (["--timeout", "0"], "--timeout must be more than 0"),
    (["--temperature", "7"], "--temperature must be 0..2"),
    (["--groups", "alpha/nobody"], "no judged setting 'nobody'"),
    (["--groups", "alpha/alpha"], "alpha is in both groups"),
]


@pytest.mark.parametrize("extra, message", BAD_ARGS, ids=[" ".join(a) for a, _ in BAD_ARGS])
def test_bad_arguments_are_refused_before_anything_is_paid_or_written(extra, message, world, tmp_path,
                                                                     fake_server):  # noqa: F811
    fake_server.reset()
    fake_server.responder = ScriptedJudge()
    before = snapshot(world["base"])
    out = tmp_path / "o"
    code, _, err = run_cli([*world["judge"][:-1], str(out), *extra])
    _refused(code, err, 2, before, world["base"])
    assert message in err
    assert not out.exists() and not [s for s in fake_server.seen if model_of(s) == JUDGE], "paid before refusing"
    fake_server.reset()


def test_requery_of_a_finished_study_with_another_judge_writes_nothing(world, tmp_path):
    study = tmp_path / "study"
    shutil.copytree(world["study"], study)
    before = snapshot(tmp_path)
    for judge, why in (("random", "is not a model"), (f"compat:{MODELS[0]}", "re-queried with the judge")):
        code, _, err = run_cli(["judge", "requery", str(study), "--judge", judge, "--base-url", world["url"]])
        _refused(code, err, 2, before, tmp_path)
        assert why in err
    code, _, err = run_cli(["judge", "requery", str(study)])  # the same judge: finished, nothing asked or written
    assert code == 0 and snapshot(tmp_path) == before, err


def test_a_two_player_match_is_refused(world, tmp_path):
    before = snapshot(world["base"])
    match = str(world["match"])
    for argv in (["judge", match, "--judge", f"compat:{JUDGE}", "--base-url", world["url"], "--out", str(tmp_path / "o")],
                 ["judge", "stuck", match], ["judge", "stuck", str(world["match"].parent)]):
        code, _, err = run_cli(argv)
        _refused(code, err, 2, before, world["base"])
        assert "two-player match; judge works on one-player runs" in err
    assert not (tmp_path / "o").exists()


def test_the_judge_never_writes_inside_its_sources(world):
    before = snapshot(world["base"])
    for out in (world["batch"] / "judged", world["batch"] / "runs" / "deep" / "er"):
        code, _, err = run_cli([*world["judge"][:-1], str(out)])
        _refused(code, err, 2, before, world["base"])
        assert "is inside the source" in err
    code, _, err = run_cli(["judge", "stuck", str(world["batch"]), "--out", str(world["batch"] / "stuck")])
    _refused(code, err, 2, before, world["base"])


@pytest.mark.parametrize("flag", [["--base-url", "http://127.0.0.1:9/v1"], ["--timeout", "5"], ["--effort", "low"]])
def test_stuck_refuses_judge_transport_flags_without_a_judge(flag, world):
    before = snapshot(world["base"])
    code, _, err = run_cli(["judge", "stuck", str(world["batch"]), *flag])
    _refused(code, err, 2, before, world["base"])
    assert f"{flag[0]} is for the judge model; add --judge SPEC" in err


def test_stuck_out_writes_a_sealed_report_that_report_paper_checks(world, tmp_path):
    stuck = tmp_path / "stuck"
    shutil.copytree(world["base"] / "stuck", stuck)
    report = json.loads((stuck / "stuck.json").read_text())
    assert report["min_turns"] == 8 and "settings" in report and (stuck / "seal.json").is_file()
    assert run_cli(["report", str(stuck), "--paper"])[0] == 0
    _edit(stuck / "stuck.json", lambda r: r.update(min_turns=3))
    before = snapshot(tmp_path)
    code, _, err = run_cli(["report", str(stuck), "--paper"])
    _refused(code, err, 1, before, tmp_path)
    assert "stuck report" in err and "damaged" in err
    # a stuck report kept as a plain file (--json > FILE) is checked field by field
    loose = tmp_path / "loose.json"
    loose.write_text(json.dumps({**report, "settings": {"a": {"runs": "two"}}}))
    code, _, err = run_cli(["report", str(loose), "--paper"])
    _refused(code, err, 2, snapshot(tmp_path), tmp_path)
    assert "'runs'" in err and "loose.json" in err


def test_stuck_with_a_judge_leaves_baselines_out_and_blinds_only_model_names(world, tmp_path, fake_server):  # noqa: F811
    from tests.fake_provider import Step
    from workstation.store.recording import Recording
    from workstation.studies.judge.evidence import NEUTRAL, Blinder

    rec = Recording(Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0")
    blind = Blinder.for_runs([rec], [])
    assert blind.names == () and blind.own_words("a random guess") == "a random guess"
    model = next(p for p in (world["batch"] / "runs").iterdir() if (p / "manifest.json").is_file())
    assert NEUTRAL in Blinder.for_runs([Recording(model)], []).text(f"I am {MODELS[0]}") or \
        NEUTRAL in Blinder.for_runs([Recording(model)], []).text(f"I am {MODELS[1]}")
    fake_server.reset()
    fake_server.responder = lambda seen: Step(text="yes")
    code, _, err = run_cli(["judge", "stuck", str(rec.path), "--min-turns", "2", "--judge", "compat:j",
                            "--base-url", world["url"], "--json"])
    fake_server.reset()
    assert code == 0, err
    assert not fake_server.seen, "a baseline run was sent to the judge"
    assert "1 baseline run(s)" in err and "not sent to the judge" in err


QA_DAMAGE: list[tuple[str, Callable[[Path], None]]] = [
    ("answer line a list", lambda d: _put_line(d / "answers.jsonl", 0, "[]")),
    ("answer correct text", lambda d: _put_line(
        d / "answers.jsonl", 0, json.dumps({**json.loads(_lines(d / "answers.jsonl")[0]), "correct": "yes"}))),
    ("summary edited", lambda d: _edit(d / "summary.json", lambda s: s.update(answers=999))),
]


@pytest.mark.parametrize("name, damage", QA_DAMAGE, ids=[n for n, _ in QA_DAMAGE])
def test_a_damaged_qa_eval_is_named_by_its_readers(name, damage, world, tmp_path):
    ev = tmp_path / "qaeval"
    shutil.copytree(world["base"] / "qaeval", ev)
    damage(ev)
    before = snapshot(tmp_path)
    for argv in (["qa", "table", str(ev)], ["report", str(ev)],
                 ["qa", "eval", str(world["base"] / "qaset"), "--agent", "random", "--repeats", "1", "--out", str(ev)]):
        code, _, err = run_cli(argv)
        _refused(code, err, 1, before, tmp_path)
        assert "damaged" in err and str(ev) in err, err


@pytest.mark.parametrize("extra, message", [(["--repeats", "1001"], "--repeats must be at most 1000"),
                                            (["--seed", "-1"], "--seed must be 0..4294967295"),
                                            (["--concurrency", "300"], "--concurrency must be at most 256")])
def test_qa_eval_bounds(extra, message, world, tmp_path):
    before = snapshot(world["base"])
    code, _, err = run_cli(["qa", "eval", str(world["base"] / "qaset"), "--agent", "random", "--out",
                            str(tmp_path / "e"), *extra])
    _refused(code, err, 2, before, world["base"])
    assert message in err and not (tmp_path / "e").exists()


@pytest.mark.parametrize("line", [b"[1, 2]\n", b"7\n", b"\xff\xfe\n"])
def test_a_batch_whose_results_do_not_read_is_one_line(line, world, tmp_path):
    batch = tmp_path / "batch"
    shutil.copytree(world["batch"], batch)
    with open(batch / "results.jsonl", "ab") as f:
        f.write(line)
    before = snapshot(tmp_path)
    for argv in (["judge", str(batch), *world["judge"][2:-1], str(tmp_path / "o")], ["judge", "stuck", str(batch)]):
        code, _, err = run_cli(argv)
        _refused(code, err, 2, before, tmp_path)
        assert "results.jsonl" in err


def test_requery_checks_where_the_players_answer_before_anything_is_written(world, tmp_path, fake_server):  # noqa: F811
    from workstation.studies.judge.run import seal_study

    study = tmp_path / "study"
    shutil.copytree(world["study"], study)
    (study / "requery.jsonl").unlink()
    (study / "requery.json").unlink()
    seal_study(study)  # a study not re-queried yet
    before = snapshot(tmp_path)
    fake_server.reset()
    code, _, err = run_cli(["judge", "requery", str(study), "--model-base-url", "notaurl"])
    _refused(code, err, 2, before, tmp_path)
    assert "--model-base-url 'notaurl' is not an http:// or https:// URL" in err and not fake_server.seen


@pytest.mark.parametrize("extra, message", [(["--groups", "alpha/nobody"], "no judged setting 'nobody'"),
                                            ([], "needs --groups"), (["--groups", "alpha"], "two groups")])
def test_overreliance_checks_its_groups_before_writing(extra, message, world, tmp_path):
    study = tmp_path / "study"
    shutil.copytree(world["study"], study)
    before = snapshot(tmp_path)
    code, _, err = run_cli(["judge", "overreliance", str(study), *extra])
    _refused(code, err, 2, before, tmp_path)
    assert message in err


@pytest.mark.parametrize("damage", ["edited", "seal removed", "report removed"])
def test_stuck_out_over_a_damaged_report_is_refused_not_replaced(world, tmp_path, damage):
    """``judge stuck --out DIR`` over an earlier report that fails its seal: named (exit 1), left as it is."""
    stuck = tmp_path / "stuck"
    shutil.copytree(world["base"] / "stuck", stuck)
    if damage == "edited":
        _edit(stuck / "stuck.json", lambda r: r.update(min_turns=3))
    elif damage == "report removed":
        (stuck / "stuck.json").unlink()
    else:  # a report without its seal is one from before seals: replaced, as before
        (stuck / "seal.json").unlink()
        assert run_cli(["judge", "stuck", str(world["batch"]), "--out", str(stuck)])[0] == 0
        assert (stuck / "seal.json").is_file()
        return
    before = snapshot(tmp_path)
    code, _, err = run_cli(["judge", "stuck", str(world["batch"]), "--out", str(stuck)])
    _refused(code, err, 1, before, tmp_path)
    assert "stuck report" in err and "damaged" in err and str(stuck) in err
    # a sound earlier report is replaced
    shutil.rmtree(stuck)
    shutil.copytree(world["base"] / "stuck", stuck)
    assert run_cli(["judge", "stuck", str(world["batch"]), "--out", str(stuck)])[0] == 0
