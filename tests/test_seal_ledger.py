"""The one seal of every artifact kind and the one resumable ledger (workstation/store/seal.py, ledger.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from workstation.base.errors import DamagedArtifact, UserError
from workstation.store.ledger import Ledger, identity_problem, write_json
from workstation.store.seal import SEAL, check_seal, seal, seal_problems


def _artifact(tmp_path: Path) -> Path:
    d = tmp_path / "study"
    (d / "sub").mkdir(parents=True)
    (d / "summary.json").write_text('{"a": 1}\n')
    (d / "sub" / "rows.jsonl").write_text('{"x": 1}\n')
    (d / "rec").mkdir()
    (d / "rec" / "own.json").write_text("{}")
    return d


def test_a_sealed_artifact_holds_and_names_each_change(tmp_path: Path) -> None:
    d = _artifact(tmp_path)
    seal(d, "judge-study", skip=["rec"])
    assert seal_problems(d, "judge-study") == []
    assert json.loads((d / SEAL).read_text())["kind"] == "judge-study"
    (d / "rec" / "own.json").write_text("[]")  # skipped: checked by its own check
    assert seal_problems(d, "judge-study") == []
    (d / "summary.json").write_text('{"a": 2}\n')  # same size, other bytes
    assert seal_problems(d, "judge-study") == ["summary.json was changed after it was written (digest differs)"]
    (d / "summary.json").write_text('{"a": 1}\n')
    (d / "extra.txt").write_text("x")
    assert seal_problems(d, "judge-study") == ["extra.txt was added after it was sealed"]
    (d / "extra.txt").unlink()
    (d / "sub" / "rows.jsonl").unlink()
    assert seal_problems(d, "judge-study") == ["sub/rows.jsonl is missing"]


def test_the_kind_must_match_and_a_missing_seal_is_damage_unless_allowed(tmp_path: Path) -> None:
    d = _artifact(tmp_path)
    assert seal_problems(d, "arena") == ["it has no seal.json"]
    assert seal_problems(d, "arena", missing_ok=True) == []
    seal(d, "arena")
    assert seal_problems(d, "idc") == ["its seal.json seals a 'arena', not a 'idc'"]
    (d / SEAL).write_text("[1]")
    assert seal_problems(d, "arena", missing_ok=True) == ["its seal.json is not a seal of this workstation"]
    with pytest.raises(DamagedArtifact, match="arena .* is damaged: its seal.json"):
        check_seal(d, "arena")


def test_an_appendable_file_may_grow_but_not_change(tmp_path: Path) -> None:
    d = _artifact(tmp_path)
    seal(d, "qa-eval", appendable=["sub/rows.jsonl"])
    with open(d / "sub" / "rows.jsonl", "a") as f:
        f.write('{"x": 2}\n')
    assert seal_problems(d, "qa-eval") == []
    (d / "sub" / "rows.jsonl").write_text('{"x": 9}\n{"x": 2}\n')
    assert seal_problems(d, "qa-eval") == ["sub/rows.jsonl was changed after it was written (digest differs)"]
    (d / "sub" / "rows.jsonl").write_text('{"x"')
    assert seal_problems(d, "qa-eval") == ["sub/rows.jsonl has 4 bytes, sealed with 9"]


@dataclass
class Row:
    id: str
    cost: float
    error: str | None


def _read(data: dict[str, Any], where: str) -> Row:
    if not isinstance(data.get("id"), str) or not isinstance(data.get("cost"), (int, float)):
        raise UserError(f"{where}: field 'id' or 'cost' is missing or of the wrong type")
    return Row(data["id"], float(data["cost"]), data.get("error"))


def _ledger(path: Path) -> Ledger[Row]:
    return Ledger(path, _read, lambda r: r.id, cost=lambda r: r.cost, redo=lambda r: r.error is not None)


def test_the_ledger_resumes_spends_and_caps(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    led = _ledger(path)
    assert led.records == [] and led.spent == 0.0 and not led.over_cap(1.0) and not led.over_cap(None)
    led.append(Row("a", 0.25, None), {"id": "a", "cost": 0.25})
    led.append(Row("b", 0.5, "timeout"), {"id": "b", "cost": 0.5, "error": "timeout"})
    again = _ledger(path)
    assert [r.id for r in again.records] == ["a", "b"]
    assert set(again.done) == {"a"}  # a failed call is asked again
    assert again.todo(["a", "b", "c"]) == ["b", "c"]
    assert again.spent == 0.75
    assert again.over_cap(0.75) and not again.over_cap(0.76)


def test_a_torn_last_line_is_dropped_and_cut_before_the_next(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "a", "cost": 1}\n{"id": "b", "co')
    led = _ledger(path)
    assert led.torn and set(led.done) == {"a"}
    led.append(Row("b", 1.0, None), {"id": "b", "cost": 1.0})
    assert path.read_text() == '{"id": "a", "cost": 1}\n{"id":"b","cost":1.0}\n'
    assert not _ledger(path).torn


@pytest.mark.parametrize("text, why", [
    ('[1, 2]\n{"id": "a", "cost": 1}\n', "line 1 is list, not a record"),
    ('{"id": "a", "cost": 1}\n7\n', "line 2 is int, not a record"),
    ('{"id": "a", "cost": "lots"}\n', "line 1: field 'id' or 'cost'"),
    ('{"id": "a", "cost": 1}\nnot json\n{"id": "b", "cost": 1}\n', "line 2 is not JSON"),
])
def test_a_bad_line_is_damage_named_not_skipped(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    with pytest.raises(DamagedArtifact, match=why):
        _ledger(path)
    assert path.read_text() == text


def test_non_utf8_and_a_directory_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": "\xff"}\n')
    with pytest.raises(DamagedArtifact, match="not UTF-8"):
        _ledger(path)
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(UserError, match="is not a file"):
        _ledger(tmp_path / "dir.jsonl")


def test_identity_names_what_differs(tmp_path: Path) -> None:
    assert identity_problem({"judge": "random", "turns": 5}, {"turns": 5, "judge": "random"}) is None
    assert identity_problem({"judge": "a", "turns": 5}, {"judge": "b", "turns": 6}) == \
        "it was made with judge='a', this command has judge='b' (and 1 more: turns)"
    write_json(tmp_path / "s.json", {"a": 1})
    assert json.loads((tmp_path / "s.json").read_text()) == {"a": 1}
