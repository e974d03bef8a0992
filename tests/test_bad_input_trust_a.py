"""Bad input for improvement rounds and QA evals (issue 26, the trustA corpus): a relative --out, an --out inside
another artifact or the input set, every seed checked before the first write, bounded numbers, damaged evals
refused whatever their seal says. Each case: exit 2 (1 for a damaged artifact), at most 3 lines, no traceback,
every file before it unchanged, nothing new written or paid by a refused command.

Real parts: the fake provider on 127.0.0.1 through the real SDKs, the real emulator, real files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fake_provider import Step
from tests.test_idc import PLAYER, SKILLS, idc_args, in_process, reflection_script

pytestmark = pytest.mark.usefixtures("keys")  # the fake provider (`fake`, tests/conftest.py) with its keys set


def tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def one_line(r, code: int) -> None:
    assert r.returncode == code, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


# -- idc ---------------------------------------------------------------------------------------------------------
def test_a_relative_out_plays_and_finds_its_own_recordings(fake, tmp_path, capsys, monkeypatch):
    """`--out idcR` (relative) used to look for its episodes under idcR/idcR/... after paying for them."""
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]))
    monkeypatch.chdir(tmp_path)
    r = in_process(capsys, idc_args(fake, Path("idcR"), "--rounds", "1", "--episodes", "1"))
    assert r.returncode == 0, r.stdout + r.stderr
    curve = json.loads((tmp_path / "idcR" / "curve.json").read_text())
    assert [len(x["episodes"]) for x in curve["rounds"]] == [1, 1]
    for x in curve["rounds"]:
        ep = x["episodes"][0]
        assert Path(ep["recording"]).is_absolute() and (tmp_path / "idcR" / ep["in_dir"] / "summary.json").is_file()
    assert not (tmp_path / "idcR" / "idcR").exists()


def test_an_out_inside_another_idc_is_refused_before_anything(fake, tmp_path, capsys):
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]))
    idc = tmp_path / "idcA"
    assert in_process(capsys, idc_args(fake, idc, "--rounds", "1", "--episodes", "1")).returncode == 0
    (qaset := tmp_path / "qaset" / "frames").mkdir(parents=True)
    for name in ("set.json", "questions.jsonl"):
        (tmp_path / "qaset" / name).write_text("{}\n")
    before, asked = tree(tmp_path), len(fake.seen)
    for out in (idc / "round_0" / "runs" / "new", idc / "round_0" / "new", idc / "skills" / "x", qaset / "x"):
        r = in_process(capsys, idc_args(fake, out, "--rounds", "1", "--episodes", "1"))
        one_line(r, 2)
        assert "is inside" in r.stderr and "another artifact" in r.stderr, r.stderr
    prompts = tmp_path / "pack"
    shutil.copytree(Path(__file__).resolve().parents[1] / "prompts", prompts)
    before = tree(tmp_path)
    r = in_process(capsys, idc_args(fake, prompts / "idc", "--prompts", str(prompts)))
    assert r.returncode == 2 and "--prompts" in r.stderr and not (prompts / "idc").exists(), r.stderr
    assert tree(tmp_path) == before and len(fake.seen) == asked


@pytest.mark.parametrize("extra,needle", [
    (["--seed", "4294967295", "--episodes", "2"], "seeds up to 4294967300"),  # (2 rounds + 1) x 2 episodes
    (["--seed", "4294967290", "--rounds", "3"], "seeds up to"),
    (["--concurrency", "100000000"], "--concurrency must be 1..256"),
    (["--concurrency", "0"], "--concurrency must be 1..256"),
    (["--tool-calls", "100000000000"], "--tool-calls must be 1..500"),
    (["--rounds", "21"], "--rounds must be 1..20"),
    (["--episodes", "51"], "--episodes must be 1..50"),
    (["--max-cost", "-1"], "--max-cost"),
])
def test_every_idc_number_is_bounded_before_anything_is_written(fake, tmp_path, capsys, extra, needle):
    out = tmp_path / "idcN"
    r = in_process(capsys, idc_args(fake, out, *extra))
    one_line(r, 2)
    assert needle in r.stderr, r.stderr
    assert not out.exists() and not fake.seen


# -- qa eval -------------------------------------------------------------------------------------------------------
QA_SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "qa-sample"


@pytest.fixture
def qaset(tmp_path) -> Path:
    root = tmp_path / "qaset"
    shutil.copytree(QA_SAMPLE, root)
    return root


@pytest.mark.parametrize("where", ["ev", "frames", "evals/random", "."])
def test_an_eval_is_never_written_inside_its_set(qaset, tmp_path, capsys, where):
    before = tree(tmp_path)
    out = qaset / where
    r = in_process(capsys, ["qa", "eval", str(qaset), "--agent", "random", "--repeats", "1", "--out", str(out)])
    one_line(r, 2)
    assert "inside the question set" in r.stderr, r.stderr
    assert tree(tmp_path) == before


def test_an_eval_is_never_written_inside_the_prompt_pack(qaset, tmp_path, capsys):
    pack = tmp_path / "pack"
    shutil.copytree(Path(__file__).resolve().parents[1] / "prompts", pack)
    before = tree(tmp_path)
    r = in_process(capsys, ["qa", "eval", str(qaset), "--agent", "random", "--repeats", "1", "--prompts", str(pack),
                            "--out", str(pack / "ev")])
    one_line(r, 2)
    assert "inside --prompts" in r.stderr and tree(tmp_path) == before


def test_the_default_eval_place_is_beside_the_set(qaset, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sealed = tree(qaset)
    r = in_process(capsys, ["qa", "eval", "qaset", "--agent", "random", "--repeats", "1"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == str(Path("qaset-evals") / "random")
    assert (tmp_path / "qaset-evals" / "random" / "summary.json").is_file() and tree(qaset) == sealed
    monkeypatch.chdir(qaset)  # `qa eval .` goes beside the directory too, never into it
    r = in_process(capsys, ["qa", "eval", ".", "--agent", "random", "--repeats", "1", "--seed", "1"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == str(tmp_path / "qaset-evals" / "random") and tree(qaset) == sealed


def test_an_eval_at_the_old_default_place_is_read_where_it_is_and_never_appended(qaset, tmp_path, capsys):
    old = qaset / "evals" / "random"
    old.parent.mkdir()
    shutil.copytree(_eval(tmp_path / "made", qaset, capsys), old)
    before = tree(tmp_path)
    assert in_process(capsys, ["qa", "table", str(old)]).returncode == 0
    r = in_process(capsys, ["qa", "eval", str(qaset), "--agent", "random", "--repeats", "1"])
    one_line(r, 2)
    assert "old default place" in r.stderr and "qaset-evals" in r.stderr, r.stderr
    assert tree(tmp_path) == before


def _eval(out: Path, qaset: Path, capsys) -> Path:
    r = in_process(capsys, ["qa", "eval", str(qaset), "--agent", "random", "--repeats", "1", "--out", str(out)])
    assert r.returncode == 0, r.stderr
    return out


def _put_answer_line(ev: Path, text: str) -> None:
    lines = (ev / "answers.jsonl").read_text().splitlines()
    lines[0] = text
    (ev / "answers.jsonl").write_text("\n".join(lines) + "\n")


EVAL_EDITS = [
    ("eval.json a list", lambda ev: (ev / "eval.json").write_text("[]\n")),
    ("eval.json text", lambda ev: (ev / "eval.json").write_text('"an eval"\n')),
    ("eval.json agent a number", lambda ev: (ev / "eval.json").write_text(json.dumps(
        {**json.loads((ev / "eval.json").read_text()), "agent": 7}))),
    ("eval.json statuses of numbers", lambda ev: (ev / "eval.json").write_text(json.dumps(
        {**json.loads((ev / "eval.json").read_text()), "statuses": [1]}))),
    ("answer line a list", lambda ev: _put_answer_line(ev, "[]")),
    ("answer line a number", lambda ev: _put_answer_line(ev, "7")),
    ("answer with a field of no answer", lambda ev: _put_answer_line(ev, json.dumps(
        {**json.loads((ev / "answers.jsonl").read_text().splitlines()[0]), "turn": "zero"}))),
    ("answer correct text", lambda ev: _put_answer_line(ev, json.dumps(
        {**json.loads((ev / "answers.jsonl").read_text().splitlines()[0]), "correct": "yes"}))),
]


@pytest.mark.parametrize("name,edit", EVAL_EDITS, ids=[n for n, _ in EVAL_EDITS])
def test_an_eval_whose_records_are_edited_is_damaged_whatever_its_seal_says(qaset, tmp_path, capsys, name, edit):
    from workstation.store.seal import seal
    from workstation.studies.qa.evaluate import ANSWERS, EVAL_KIND

    ev = _eval(tmp_path / "ev", qaset, capsys)
    edit(ev)
    seal(ev, EVAL_KIND, appendable=[ANSWERS])  # the digests redone: the seal alone would pass it
    before = tree(tmp_path)
    for argv in (["qa", "table", str(ev)], ["report", str(ev)], ["report", str(ev), "--json", str(tmp_path / "r.json")],
                 ["qa", "eval", str(qaset), "--agent", "random", "--repeats", "1", "--out", str(ev)]):
        r = in_process(capsys, argv)
        one_line(r, 1)
        assert "damaged" in r.stderr and str(ev) in r.stderr, (argv, r.stderr)
    assert tree(tmp_path) == before


# -- an IDC's episodes, changed with their digests redone --------------------------------------------------------
def _reseal_recording(rec: Path) -> None:
    from workstation.store.integrity import sha256_of

    s = json.loads((rec / "summary.json").read_text())
    for name in s["files"]:
        s["files"][name] = {**s["files"][name], "bytes": (rec / name).stat().st_size, "sha256": sha256_of(rec / name)}
    (rec / "summary.json").write_text(json.dumps(s))


def _score_all(rec: Path) -> None:
    """The last turn's reward and the summary's total both +50, digests redone: consistent, only re-execution
    (or the pin) tells."""
    turns = [json.loads(line) for line in (rec / "turns.jsonl").read_text().splitlines()]
    turns[-1]["reward"] = float(turns[-1].get("reward") or 0) + 50
    (rec / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    s = json.loads((rec / "summary.json").read_text())
    s["total_reward"] = float(s["total_reward"]) + 50
    (rec / "summary.json").write_text(json.dumps(s))
    _reseal_recording(rec)


def _frames(rec: Path) -> None:
    b = bytearray((rec / "frames.bin").read_bytes())
    b[100:300] = b"\0" * 200
    (rec / "frames.bin").write_bytes(bytes(b))
    _reseal_recording(rec)


@pytest.mark.parametrize("change", [_score_all, _frames], ids=["score", "frames"])
@pytest.mark.parametrize("pinned", [True, False], ids=["pinned", "curve-before-pins"])
def test_an_idc_resume_refuses_an_episode_changed_with_digests_redone(fake, tmp_path, capsys, change, pinned):
    from workstation.store.seal import seal
    from workstation.studies.idc.curve import SEAL_KIND, SEAL_SKIP

    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]))
    out = tmp_path / "idc"
    assert in_process(capsys, idc_args(fake, out, "--rounds", "1", "--episodes", "1")).returncode == 0
    curve = json.loads((out / "curve.json").read_text())
    assert all(e["summary_sha256"] for r in curve["rounds"] for e in r["episodes"])
    if not pinned:  # a curve written before pins, sealed again
        for r in curve["rounds"]:
            for e in r["episodes"]:
                del e["summary_sha256"]
        (out / "curve.json").write_text(json.dumps(curve))
        seal(out, SEAL_KIND, skip=SEAL_SKIP)
    rec = Path(curve["rounds"][0]["episodes"][0]["recording"])
    change(rec)
    before, asked = tree(tmp_path), len(fake.seen)
    r = in_process(capsys, idc_args(fake, out, "--rounds", "2", "--episodes", "1"))
    one_line(r, 1)
    assert "round 0: an episode" in r.stderr and str(rec) in r.stderr, r.stderr
    assert tree(tmp_path) == before and len(fake.seen) == asked


def _summary_edit(change):
    def edit(ev: Path) -> None:
        s = json.loads((ev / "summary.json").read_text())
        change(s)
        (ev / "summary.json").write_text(json.dumps(s))
    return edit


def _all_correct(s: dict) -> None:
    for v in s["accuracy"].values():
        if isinstance(v, dict):
            v["correct"], v["accuracy"] = v["answers"], 1.0 if v["answers"] else None
    for g in ("perception", "motion", "decision", "overall"):
        s["accuracy"][g] = 1.0


SUMMARY_EDITS = [
    ("overall raised", _summary_edit(lambda s: s["accuracy"].update(overall=0.99))),
    ("every answer made correct", _summary_edit(_all_correct)),
    ("a category's accuracy alone", _summary_edit(lambda s: s["accuracy"]["motion-target"].update(accuracy=1.0))),
]


@pytest.mark.parametrize("name,edit", SUMMARY_EDITS, ids=[n for n, _ in SUMMARY_EDITS])
def test_an_eval_summary_its_answers_contradict_is_damaged_whatever_its_seal_says(qaset, tmp_path, capsys, name,
                                                                                   edit):
    from workstation.store.seal import seal
    from workstation.studies.qa.evaluate import ANSWERS, EVAL_KIND

    ev = _eval(tmp_path / "ev", qaset, capsys)
    assert in_process(capsys, ["qa", "table", str(ev)]).returncode == 0
    edit(ev)
    seal(ev, EVAL_KIND, appendable=[ANSWERS])
    before = tree(tmp_path)
    for argv in (["qa", "table", str(ev)], ["report", str(ev)]):
        r = in_process(capsys, argv)
        one_line(r, 1)
        assert "contradicts its answers" in r.stderr and str(ev) in r.stderr, (argv, r.stderr)
    assert tree(tmp_path) == before


def test_a_summary_behind_its_answers_still_reads(qaset, tmp_path, capsys):
    """A resume killed before it wrote the summary leaves one counting fewer answers than answers.jsonl: not
    damage."""
    from workstation.store.seal import seal
    from workstation.studies.qa.evaluate import ANSWERS, EVAL_KIND, answer_ledger, summarise
    from workstation.studies.qa.qset import read_set

    ev = _eval(tmp_path / "ev", qaset, capsys)
    meta = json.loads((ev / "eval.json").read_text())
    qs = [q for q in read_set(qaset) if q["status"] in meta["statuses"]]
    records = answer_ledger(ev).records
    half = {r.key: r for r in records[:len(records) // 2]}
    (ev / "summary.json").write_text(json.dumps(summarise(qs, half, 1, meta).to_json()))
    seal(ev, EVAL_KIND, appendable=[ANSWERS])
    r = in_process(capsys, ["qa", "table", str(ev)])
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("flag,where", [("--json", "qaset/x.json"), ("--md", "qaset/frames/x.md"),
                                        ("--json", "ev/x.json")])
def test_a_qa_report_is_never_written_inside_an_eval_or_its_set(qaset, tmp_path, capsys, flag, where):
    ev = _eval(tmp_path / "ev", qaset, capsys)
    before = tree(tmp_path)
    r = in_process(capsys, ["report", str(ev), flag, str(tmp_path / where)])
    one_line(r, 2)
    assert "input" in r.stderr and tree(tmp_path) == before, r.stderr


# -- qa gen --------------------------------------------------------------------------------------------------------
SAMPLE_REC = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"


@pytest.mark.parametrize("where,extra,needle", [
    ("recs/breakout-random-s0/qa", [], "inside --recordings"),
    ("recs/qa", [], "inside --recordings"),
    ("qaset/x", [], "another artifact"),
    ("recs2/breakout-random-s0/qa", [], "another artifact"),  # inside a recording that is not an input
    ("full", [], "not empty"),
    ("new", ["--seed", "4294967296"], "--seed must be 0..4294967295"),
    ("new", ["--per-game", "100000000000"], "--per-game must be 1..10000"),
])
def test_qa_gen_checks_its_out_and_numbers_before_anything(qaset, tmp_path, capsys, where, extra, needle):
    (tmp_path / "recs").mkdir()
    shutil.copytree(SAMPLE_REC, tmp_path / "recs" / "breakout-random-s0")
    shutil.copytree(SAMPLE_REC, tmp_path / "recs2" / "breakout-random-s0")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    before = tree(tmp_path)
    r = in_process(capsys, ["qa", "gen", "--recordings", str(tmp_path / "recs"), "--out", str(tmp_path / where),
                            *extra])
    one_line(r, 2)
    assert needle in r.stderr and tree(tmp_path) == before, r.stderr
