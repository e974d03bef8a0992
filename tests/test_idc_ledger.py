"""The IDC's ledger (DIR/rounds.jsonl, through store/ledger.Ledger): one line a step done (a round played, the
reflection after it, a transfer), what a resume reads back; curve.json is the summary written from it. A curve from
before the ledger is read as before and starts its ledger on the next run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_provider import Step
from tests.test_idc import PLAYER, SKILLS, _made_idc, _tree, idc_args, in_process, reflection_script
from workstation.store.seal import seal
from workstation.studies.idc import curve as C

pytestmark = pytest.mark.usefixtures("keys")  # the fake provider (`fake`, tests/conftest.py) with its keys set


def lines(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / C.STEPS).read_text().splitlines()]


def _reseal(out: Path) -> None:
    seal(out, C.SEAL_KIND, skip=C.SEAL_SKIP, appendable=[C.STEPS])


def test_each_step_is_a_ledger_line_and_the_curve_is_written_from_them(fake, tmp_path, capsys):
    out = _made_idc(fake, tmp_path, capsys)
    assert [(x["step"], x.get("round")) for x in lines(out)] == [("round", 0), ("reflection", 0), ("round", 1)]
    curve = json.loads((out / "curve.json").read_text())
    book = C.steps(out)
    assert book.spent == sum(e["cost_usd"] or 0.0 for r in curve["rounds"] for e in r["episodes"]) + sum(
        (r.get("reflection") or {}).get("cost_usd") or 0.0 for r in curve["rounds"])
    rebuilt = {**curve}
    C.apply_steps(rebuilt, book.records)
    assert [{k: v for k, v in r.items() if k != "rolled_back"} for r in rebuilt["rounds"]] == \
        [{k: v for k, v in r.items() if k != "rolled_back"} for r in curve["rounds"]]
    assert json.loads((out / "seal.json").read_text())["files"][C.STEPS]["appendable"] is True
    assert in_process(capsys, ["verify", "--quick", str(out)]).returncode == 0


def test_a_resume_reads_the_steps_the_curve_had_not_caught_up_with(fake, tmp_path, capsys):
    """Killed after a round was recorded, before curve.json was rewritten: the round is not played again."""
    out = _made_idc(fake, tmp_path, capsys)
    curve = json.loads((out / "curve.json").read_text())
    curve["rounds"] = curve["rounds"][:1]
    curve["rounds"][0] = {k: v for k, v in curve["rounds"][0].items()
                          if k not in ("reflection", "notebook", "next_skill")}
    C.save(out, curve)  # the curve as it stood after round 0 (sealed again, as the driver leaves it)
    asked = len(fake.seen)
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(fake.seen) == asked  # nothing played, nothing reflected again
    assert len(json.loads((out / "curve.json").read_text())["rounds"]) == 2 and len(lines(out)) == 3


def test_a_torn_last_line_is_dropped_and_cut(fake, tmp_path, capsys):
    out = _made_idc(fake, tmp_path, capsys)
    with open(out / C.STEPS, "a") as f:
        f.write('{"step": "transfer", "mo')  # a kill in the middle of a line
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))  # nothing left to do: the line is not read
    assert r.returncode == 0, r.stdout + r.stderr
    book = C.steps(out)
    assert book.torn and len(book.records) == 3
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[1]))
    r = in_process(capsys, idc_args(fake, out, "--rounds", "2"))  # the next step cuts it away first
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / C.STEPS).read_text().endswith("}\n") and len(lines(out)) == 5


def test_a_damaged_ledger_line_is_named_exit_1_and_nothing_is_written(fake, tmp_path, capsys):
    out = _made_idc(fake, tmp_path, capsys)
    text = (out / C.STEPS).read_text().splitlines()
    text[1] = json.dumps({**json.loads(text[1]), "reflection": "good"})
    (out / C.STEPS).write_text("\n".join(text) + "\n")
    _reseal(out)  # even with its seal redone
    before = _tree(out)
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    assert r.returncode == 1 and C.STEPS in r.stderr and "line 2" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert _tree(out) == before
    assert in_process(capsys, ["verify", "--quick", str(out)]).returncode == 1


@pytest.mark.parametrize("damage", ["garbage appended", "a field of the wrong type"])
def test_report_checks_the_ledger_as_verify_and_a_resume_do(fake, tmp_path, capsys, damage):
    """`report IDC` never prints the curve of an IDC whose ledger is damaged: one line naming it, exit 1."""
    out = _made_idc(fake, tmp_path, capsys)
    if damage == "garbage appended":
        with open(out / C.STEPS, "a") as f:
            f.write("x\n")  # a whole line, not torn: damage
    else:
        text = (out / C.STEPS).read_text().splitlines()
        text[0] = json.dumps({**json.loads(text[0]), "round": "zero"})
        (out / C.STEPS).write_text("\n".join(text) + "\n")
        _reseal(out)
    for argv in (["report", str(out)], ["verify", "--quick", str(out)]):
        r = in_process(capsys, argv)
        assert r.returncode == 1, (argv, r.stdout, r.stderr)
    r = in_process(capsys, ["report", str(out)])
    assert C.STEPS in r.stderr and len(r.stderr.strip().splitlines()) == 1 and r.stdout == "", (r.stdout, r.stderr)


def test_an_idc_from_before_the_ledger_is_read_as_before_and_starts_its_ledger(fake, tmp_path, capsys):
    out = _made_idc(fake, tmp_path, capsys)
    made = lines(out)
    (out / C.STEPS).unlink()
    _reseal(out)
    assert in_process(capsys, ["report", str(out)]).returncode == 0
    assert not (out / C.STEPS).exists()  # a report only reads
    asked = len(fake.seen)
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(fake.seen) == asked and [(x["step"], x.get("round")) for x in lines(out)] == \
        [(x["step"], x.get("round")) for x in made]


class Killed(BaseException):
    """The process killed at this instant (no handler sees it)."""


def _old_idc(fake, tmp_path, capsys) -> tuple[Path, list[dict]]:
    """An IDC as one from before the ledger is: curve.json sealed, no rounds.jsonl."""
    out = _made_idc(fake, tmp_path, capsys)
    made = lines(out)
    (out / C.STEPS).unlink()
    _reseal(out)
    return out, made


def test_a_kill_between_starting_the_ledger_and_sealing_again_leaves_an_idc_that_reads_and_resumes(fake, tmp_path,
                                                                                                  capsys):
    """Adopting an IDC from before the ledger writes rounds.jsonl whole (one rename), then seals again: killed in
    between, the ledger is exactly the one its sealed curve makes, so it is read, verified and resumed, not damaged."""
    out, made = _old_idc(fake, tmp_path, capsys)
    C.start_ledger(out)  # the adoption's first step, and the kill right after it: the seal does not name the ledger
    assert "rounds.jsonl" not in json.loads((out / "seal.json").read_text())["files"]
    for argv in (["report", str(out)], ["verify", "--quick", str(out)], ["verify", str(out)]):
        r = in_process(capsys, argv)
        assert r.returncode == 0, r.stdout + r.stderr
    asked = len(fake.seen)
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(fake.seen) == asked and [(x["step"], x.get("round")) for x in lines(out)] == \
        [(x["step"], x.get("round")) for x in made]
    assert "rounds.jsonl" in json.loads((out / "seal.json").read_text())["files"]
    assert in_process(capsys, ["verify", str(out)]).returncode == 0


def test_a_kill_as_the_adopting_idc_seals_again_is_resumed(fake, tmp_path, capsys, monkeypatch):
    """The kill itself: the process dies as it seals the IDC with a ledger the seal did not name yet."""
    out, made = _old_idc(fake, tmp_path, capsys)
    real = C.seal

    def dies_sealing_a_new_ledger(where, *args, **kwargs):
        if (out / C.STEPS).exists() and C.STEPS not in json.loads((out / "seal.json").read_text())["files"]:
            raise Killed  # as a kill: nothing after it runs
        real(where, *args, **kwargs)

    monkeypatch.setattr(C, "seal", dies_sealing_a_new_ledger)
    with pytest.raises(Killed):
        in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    monkeypatch.setattr(C, "seal", real)
    assert (out / C.STEPS).is_file()
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert [(x["step"], x.get("round")) for x in lines(out)] == [(x["step"], x.get("round")) for x in made]
    assert in_process(capsys, ["verify", str(out)]).returncode == 0


@pytest.mark.parametrize("edit", ["a line dropped", "a line added", "empty"])
def test_a_ledger_added_to_a_sealed_idc_other_than_its_curve_makes_is_damage(fake, tmp_path, capsys, edit):
    out, _ = _old_idc(fake, tmp_path, capsys)
    C.start_ledger(out)
    text = (out / C.STEPS).read_text().splitlines(keepends=True)
    text = text[:-1] if edit == "a line dropped" else text + [text[-1]] if edit == "a line added" else []
    (out / C.STEPS).write_text("".join(text))
    before = _tree(out)
    for argv in (["report", str(out)], idc_args(fake, out, "--rounds", "1")):
        r = in_process(capsys, argv)
        assert r.returncode == 1 and "rounds.jsonl was added after it was sealed" in r.stderr, r.stderr
    assert in_process(capsys, ["verify", "--quick", str(out)]).returncode == 1
    assert _tree(out) == before
