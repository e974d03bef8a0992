"""A seed and a judge verdict keep one shape: one rule each, held by the records that carry them."""

from __future__ import annotations

import pytest

from workstation.base.errors import UserError
from workstation.game.seed import SEED_MAX, check_seed, is_seed, seed_problem
from workstation.store.records import Manifest, RecordError, Summary
from workstation.studies.judge.records import FieldError, JudgeAnswer, VerdictLine
from workstation.studies.judge.verdict import Verdict, VerdictError, parse_verdict


@pytest.mark.parametrize("value", [0, 3, SEED_MAX])
def test_a_seed_is_an_int_in_range(value: int) -> None:
    assert is_seed(value) and seed_problem(value) is None and check_seed(value) == value


@pytest.mark.parametrize("value, says", [(-1, "--seed must be 0..4294967295 (got -1)"),
                                         (2**32, "--seed must be 0..4294967295 (got 4294967296)"),
                                         (True, "--seed must be a whole number"), ("3", "--seed must be a whole number")])
def test_no_seed_is_one_line_naming_the_flag(value: object, says: str) -> None:
    assert not is_seed(value)
    with pytest.raises(UserError, match=says.replace("(", r"\(").replace(")", r"\)")) as e:
        check_seed(value)
    assert e.value.field == "seed"


@pytest.mark.parametrize("record", [Manifest, Summary])
def test_a_record_reads_its_seed_by_the_one_rule(record: type) -> None:
    assert record.from_json({"seed": 7}).seed == 7
    assert record.from_json({"seed": 7.0}).seed == 7  # JSON's whole number, as every int field reads it
    for bad in (-1, 2**32, "7", True):
        with pytest.raises(RecordError, match="'seed'"):
            record.from_json({"seed": bad})


def test_a_verdict_is_made_whole_or_not_at_all() -> None:
    v = parse_verdict('{"failure": true, "category": "Decision/Control", "subtype": " none ", "evidence": " x "}')
    assert v == Verdict(True, "decision/control", None, "x", None) and v.group == "decision"
    for args, key in (((True, None, None, None, None), "category"), ((False, "rule", None, None, None), "category"),
                      ((True, "banana", None, None, None), "category"), ((True, "rule", 3, None, None), "subtype"),
                      ((True, "rule", None, None, "yes"), "text_cue_followed")):
        with pytest.raises(VerdictError) as e:
            Verdict(*args)
        assert e.value.key == key


def _line(**answer: object) -> dict[str, object]:
    return {"run_id": "r", "setting": "s", "game": "breakout", "seed": 0, "turn": 1, "parsed": True,
            "failure": True, "category": "rule", "group": "rule", **answer}


def test_a_verdict_line_reads_back_by_the_same_rule() -> None:
    made = JudgeAnswer.of(Verdict(True, "spatio-temporal", "late", "e", False), "raw", None, None, 1, False)
    line = VerdictLine("r", "s", "breakout", 0, 1, made)
    assert VerdictLine.from_json(line.to_json(), "verdicts.jsonl line 1") == line
    assert made.verdict == Verdict(True, "spatio-temporal", "late", "e", False)
    for bad, field in (({"group": "decision"}, "group"), ({"category": "banana", "group": "banana"}, "category"),
                       ({"failure": False}, "category"), ({"failure": None}, "failure"),
                       ({"seed": 2**32}, "seed")):
        data = {**_line(), **bad}
        with pytest.raises(FieldError, match=f"field '{field}'"):
            VerdictLine.from_json(data, "verdicts.jsonl line 1")
    unparsed = {**_line(), "parsed": False, "failure": None, "category": None, "group": None}
    assert VerdictLine.from_json(unparsed, "x").answer.verdict is None


def test_the_summary_seed_is_the_manifest_seed(tmp_path) -> None:
    import json
    import shutil

    from workstation.game.protocol import Protocol
    from workstation.run.drive import drive
    from workstation.run.start import RunSpec, start_run
    from workstation.store.integrity import problems
    from workstation.store.recording import Recording

    engine = start_run(RunSpec("breakout", seed=3, protocol=Protocol(frames=60), out=str(tmp_path)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    path = engine.writer.path
    rec = Recording(path)
    assert rec.manifest_record.seed == rec.summary_record.seed == 3 and problems(rec) == []
    forged = tmp_path / "forged"
    shutil.copytree(path, forged)
    s = json.loads((forged / "summary.json").read_text())
    (forged / "summary.json").write_text(json.dumps({**s, "seed": 4}, indent=1))
    assert "the summary says seed 4; the manifest's seed is 3" in problems(Recording(forged))


def test_an_idc_curve_reads_its_seeds_by_the_rule() -> None:
    from workstation.store.records import RecordFileError
    from workstation.studies.idc.curve import Curve

    Curve.from_json({"rounds": [], "seeds": [[0, 1], [2, 3]]}, "curve.json")
    for bad in ([[0, -1]], [[2**32]], [3], [["1"]]):
        with pytest.raises(RecordFileError, match="field 'seeds' item 0"):
            Curve.from_json({"rounds": [], "seeds": bad}, "curve.json")
