"""No command writes inside what it reads: each reader (ls, report, compare, verify, info, request, export) over a
read-only copy of real recordings, a batch and a QA eval works, and leaves every byte, name and mode as it was.

The folder is made read-only (chmod -w) as a user's would be; the suite may run as root, whom the mode does not
stop, so the check is the tree itself: every path, mode, size and SHA-256 before and after. The listing's index
cache goes to the user's cache folder (a temporary HOME here: tests/conftest.py), never into the folder listed.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from pathlib import Path

import pytest

from tests.bad_input_world import copy_world, pristine_world, snapshot
from workstation.cli import main
from workstation.store.index import Index


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return int(code or 0), out.getvalue(), err.getvalue()


def _chmod_tree(root: Path, writable: bool) -> None:
    paths = [root, *root.rglob("*")]
    for p in (paths if writable else reversed(paths)):  # directories last when closing, first when opening
        if p.is_symlink():
            continue
        mode = p.stat().st_mode
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    w = copy_world(pristine_world(tmp_path_factory), tmp_path_factory.mktemp("readonly") / "w")
    _chmod_tree(w, writable=False)
    yield w
    _chmod_tree(w, writable=True)


READERS = [
    ("ls", "{w}/recs"), ("ls", "{w}"), ("ls", "{w}/batch"), ("ls", "{w}/batch/runs"), ("ls", "{w}/rec"),
    ("ls", "{w}", "--json"), ("ls", "{w}", "--plain"),
    ("report", "{w}/batch"), ("report", "{w}/qaeval"),
    ("compare", "--text", "{w}/rec", "{w}/rec1"),
    ("verify", "{w}/rec"), ("verify", "--quick", "{w}/batch"), ("verify", "--quick", "{w}/qaeval"),
    ("info", "{w}/rec"), ("info", "--json", "{w}/rec"),
    ("request", "{w}/rec", "--turn", "1"),
    ("export", "{w}/rec", "-o", "{out}/run.gif", "--to", "30", "--quiet"),
    ("export", "{w}", "--inspect", "{out}/logs"),
    ("export", "{w}/batch", "--inspect", "{out}/batch-logs"),
]


@pytest.mark.parametrize("argv", READERS, ids=lambda a: " ".join(a).replace("{w}", "W").replace("{out}", "OUT"))
def test_a_reader_over_a_read_only_folder_works_and_changes_nothing_in_it(world, tmp_path, argv):
    before = snapshot(world)
    args = [a.format(w=world, out=tmp_path) for a in argv]
    code, out, err = cli(*args)
    assert code == 0, err
    assert snapshot(world) == before
    if argv[0] == "ls":  # the listing's cache is the user's
        cache = Index(args[1]).cache_file
        assert cache is not None and cache.is_file() and world not in cache.parents


def test_ls_of_a_read_only_folder_prints_what_a_writable_copy_prints(world, tmp_path):
    import shutil

    copy = tmp_path / "w"
    shutil.copytree(world / "recs", copy, symlinks=True)
    _chmod_tree(copy, writable=True)
    code, ro, _ = cli("ls", str(world / "recs"), "--json")
    assert code == 0
    code, rw, _ = cli("ls", str(copy), "--json")
    assert code == 0 and ro.replace(str(world / "recs"), "DIR") == rw.replace(str(copy), "DIR")
    assert not any(p.name.startswith(".") for p in copy.iterdir())


def test_a_home_whose_cache_cannot_be_written_still_lists(world, tmp_path, monkeypatch):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    before = snapshot(world)
    code, out, err = cli("ls", str(world / "recs"))
    assert code == 0 and err == "" and "1 recording" in out
    assert snapshot(world) == before and os.path.isfile(blocked)
