"""The one atomic write (workstation.store.atomic): whole or not at all, no temporary file left."""

from __future__ import annotations

import pytest

from workstation.store.atomic import write_atomic


def test_replaces_whole_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "summary.json"
    write_atomic(target, "old\n")
    write_atomic(target, b"new\n", fsync=False)
    assert target.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_exclusive_refuses_an_existing_file_and_keeps_it(tmp_path):
    target = tmp_path / "manifest.json"
    write_atomic(target, "first", exclusive=True)
    with pytest.raises(FileExistsError):
        write_atomic(target, "second", exclusive=True)
    assert target.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "results.csv"
    write_atomic(target, "kept")
    with pytest.raises(TypeError):
        write_atomic(target, 42)  # type: ignore[arg-type]  # not text or bytes: fails mid-write
    assert target.read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]
