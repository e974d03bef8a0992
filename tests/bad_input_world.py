"""A small world of real files for the bad-input corpora: recordings, a batch, a session, a QA set and eval,
a harness run to import. Built once per test process (``pristine_world``: every corpus module of the process
shares the one pristine copy, about 3 s of real runs, a batch and a QA eval) and copied once per module into the
world its cases share; a case may damage it, and ``restore`` puts back, from the pristine copy, every top-level entry that is
no longer as it was. ``snapshot`` says what is on disk, to check that a refused command changed nothing."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
from pathlib import Path

from workstation.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample" / "breakout-random-s0"
QA_SAMPLE = ROOT / "recordings" / "qa-sample"

GRID = """\
name = "tiny"
games = ["breakout"]
seeds = [0]

[protocol]
frames = 30

[[settings]]
label = "random"
spec = "random"
"""


def _quiet_main(args: list[str]) -> int:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            code = main(args)
        except SystemExit as e:
            code = e.code
    if code != 0:
        raise RuntimeError(f"building the world: {args} gave {code}: {err.getvalue()}")
    return code


def build_world(base: Path) -> Path:
    """The pristine world under ``base``: every case copies it."""
    from tests.test_import_atari_bench import write_harness_run
    from workstation.store.recording import Recording

    base.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SAMPLE, base / "rec")
    recs = base / "recs"
    recs.mkdir()
    shutil.copytree(SAMPLE, recs / "breakout-random-s0")
    for game, seed, name in (("freeway", 0, "other"), ("breakout", 1, "rec1")):
        _quiet_main(["run", "--game", game, "--agent", "random", "--seed", str(seed), "--frames", "30",
                     "--quiet", "--out", str(base / "made")])
        (made,) = (base / "made").iterdir()
        shutil.move(str(made), base / name)
        (base / "made").rmdir()
    (base / "grid.toml").write_text(GRID, encoding="utf-8")
    _quiet_main(["batch", str(base / "grid.toml"), "--out", str(base / "batch"), "--plain", "--concurrency", "1"])
    shutil.copytree(QA_SAMPLE, base / "qaset")
    _quiet_main(["qa", "eval", str(base / "qaset"), "--agent", "random", "--repeats", "1",
                 "--out", str(base / "qaeval")])
    from workstation.studies.session import Session, make_settings

    s = Session.open(base / "session", make_settings("p1", "breakout", "0"))
    s.save()
    s.write_results()
    write_harness_run(Recording(base / "rec"), base / "harness")
    return base


_PRISTINE: list[Path] = []  # the pristine world of this test process, once built


def pristine_world(tmp_path_factory) -> Path:
    """The pristine world, built on first use in this process (pytest's session temp directory) and shared by
    every corpus module after it: copy it (``copy_world``) and never write in it."""
    if not _PRISTINE:
        _PRISTINE.append(build_world(tmp_path_factory.mktemp("pristine") / "w"))
    return _PRISTINE[0]


def copy_world(pristine: Path, dest: Path) -> Path:
    shutil.copytree(pristine, dest, symlinks=True)
    return dest


def restore(world: Path, pristine: Path, now: dict[str, tuple], clean: dict[str, tuple]) -> None:
    """Make ``world`` (whose snapshot is ``now``) the pristine world again (whose snapshot is ``clean``): every
    top-level entry with a path added, removed or changed under it is replaced by the pristine one."""
    if now == clean:
        return
    changed = {rel for rel in set(now) | set(clean) if now.get(rel) != clean.get(rel)}
    for top in sorted({Path(rel).parts[0] for rel in changed}):
        p = world / top
        for dirpath, dirnames, _ in os.walk(p):  # a case may have left a directory unreadable
            for d in dirnames:
                if not os.path.islink(os.path.join(dirpath, d)):
                    os.chmod(os.path.join(dirpath, d), 0o755)
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.is_dir():
            shutil.rmtree(p)
        src = pristine / top
        if src.is_dir() and not src.is_symlink():
            shutil.copytree(src, p, symlinks=True)
        elif src.exists() or src.is_symlink():
            shutil.copy2(src, p, follow_symlinks=False)
    after = snapshot(world)
    assert after == clean, sorted(rel for rel in set(after) | set(clean) if after.get(rel) != clean.get(rel))


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root``: (kind, mode, size, sha256 of a file's bytes)."""
    out: dict[str, tuple] = {}
    top = os.fspath(root)
    cut = len(top) + 1
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = p[cut:]
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", st.st_mode)
            else:
                try:
                    with open(p, "rb") as f:
                        digest = hashlib.file_digest(f, "sha256").hexdigest()
                except OSError:
                    digest = "unreadable"
                out[rel] = ("file", st.st_mode, st.st_size, digest)
    return out


def edit_json(path: Path, fn) -> None:
    """Rewrite a JSON file through ``fn(data) -> data``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(fn(data)), encoding="utf-8")


def call(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run the CLI in ``cwd``: (exit status, stdout and stderr together)."""
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                code = main(args)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
    finally:
        os.chdir(here)
    return int(code or 0), out.getvalue()


def refused(world: Path, args: list[str], code: int = 2, says: str = "") -> str:
    """``args`` refused with ``code`` in at most 3 lines, no traceback, nothing under ``world`` changed."""
    before = snapshot(world)
    got, text = call(args, world)
    assert got == code, text
    assert len(text.splitlines()) <= 3 and "Traceback" not in text, text
    assert says in text, text
    after = snapshot(world)
    assert after == before, sorted(k for k in set(after) | set(before) if after.get(k) != before.get(k))
    return text
