"""The recording index: list, find by run id among many, filter, never stale; `workstation ls`; its cache kept in
the user's cache folder (a temporary one in the suite: tests/conftest.py), sealed, never inside the folder listed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_input_world import snapshot
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.index import CACHE_ENV, Index, cache_dir, select
from workstation.store.integrity import sha256_of
from workstation.store.recording import RecordingError

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}
N = 300


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True,
                          timeout=120, env=ENV)


def _run(out: Path, game: str = "breakout", seed: int = 0, frames: int = 30) -> Path:
    engine = start_run(RunSpec(game, seed=seed, protocol=Protocol(frames=frames), out=str(out)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    return engine.writer.path


@pytest.fixture()
def many(tmp_path) -> tuple[Path, list[str]]:
    """N small recordings: one real run copied with its own seed and run id (its summary's seed and manifest digest
    made to match, so each is sound), plus two other real runs."""
    root = tmp_path / "recs"
    src = _run(tmp_path / "src")
    manifest = json.loads((src / "manifest.json").read_text())
    summary = json.loads((src / "summary.json").read_text())
    ids = []
    for i in range(N):
        run_id = f"{i:06x}{'b' * 10}"
        d = root / "batch" / "runs" / f"copy-{i}"  # nested, as a batch keeps its runs
        shutil.copytree(src, d)
        (d / "manifest.json").write_text(json.dumps({**manifest, "seed": i, "run_id": run_id,
                                                     "created": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+0000"}))
        files = {**summary["files"], "manifest.json": {"bytes": (d / "manifest.json").stat().st_size,
                                                        "sha256": sha256_of(d / "manifest.json")}}
        (d / "summary.json").write_text(json.dumps({**summary, "seed": i, "files": files}, indent=1))
        ids.append(run_id)
    _run(root, "pacman", seed=7, frames=60)
    _run(root, "breakout", seed=2, frames=45)
    return root, ids


def test_the_index_lists_and_finds_a_run_by_id_among_many(many):
    root, ids = many
    index = Index(root)
    entries = index.entries()
    assert len(entries) == N + 2 and index.read_count == N + 2
    assert index.cache_file is not None and index.cache_file.is_file() and index.cache_file.parent == cache_dir()
    again = Index(root)
    assert again.entries() == entries and again.read_count == 0  # all from the cache
    hit = again.one(ids[123][:8])
    assert hit.run_id == ids[123] and hit.seed == 123 and again.path_of(hit) == root / "batch/runs/copy-123"
    assert [e.seed for e in again.find(ids[5])] == [5]
    with pytest.raises(RecordingError, match="ambiguous"):
        again.one("00")
    with pytest.raises(RecordingError, match="no recording"):
        again.one("ffffffff")


def test_filters(many):
    root, _ = many
    entries = Index(root).entries()
    assert [e.game for e in select(entries, game="pacman")] == ["pacman"]
    assert len(select(entries, game="breakout")) == N + 1
    assert sorted(e.game for e in select(entries, seed=7)) == ["breakout", "pacman"]  # copy-7 has seed 7 too
    assert [e.game for e in select(entries, seed=7, game="pacman")] == ["pacman"]
    assert len(select(entries, agent="random")) == N + 2 and select(entries, agent="openai") == []
    assert [e.seed for e in select(entries, settings={"frames": "45"})] == [2]
    assert len(select(entries, settings={"frames": "30", "memory": "structured"})) == N
    assert select(entries, settings={"feedback": "false"}) == []
    assert len(select(entries, complete=True)) == N + 2 and select(entries, state="unfinished") == []


def test_a_changed_recording_is_never_read_from_a_stale_index(many):
    root, ids = many
    Index(root).entries()
    path = root / "batch/runs/copy-10"
    s = json.loads((path / "summary.json").read_text())
    text = json.dumps({**s, "total_reward": 8.0}, indent=1)
    assert len(text) == len(json.dumps(s, indent=1))  # same size: only the times tell
    (path / "summary.json").write_text(text)
    (root / "batch/runs/copy-11/summary.json").unlink()  # now reads as a killed run
    shutil.rmtree(root / "batch/runs/copy-12")
    new = _run(root, "seaquest", seed=3)
    index = Index(root)
    by_path = {e.path: e for e in index.entries()}
    assert index.read_count == 3  # the changed, the killed and the new one; the rest from the index
    assert by_path["batch/runs/copy-10"].state == "damaged"  # its summary no longer agrees with its turns
    assert "total_reward 8 contradicts" in (by_path["batch/runs/copy-10"].error or "")
    assert by_path["batch/runs/copy-11"].state == "unfinished"
    assert "batch/runs/copy-12" not in by_path and by_path[new.name].game == "seaquest"


def test_a_damaged_cache_is_rebuilt_and_never_changes_a_listing(many, tmp_path):
    root, _ = many
    first = Index(root).entries()
    cache = Index(root).cache_file
    assert cache is not None
    good = cache.read_bytes()
    head, body = good.split(b"\n", 1)
    other = tmp_path / "other"
    _run(other)
    Index(other).entries()
    edited = body.replace(b'"score":0', b'"score":9', 1)
    assert edited != body
    for damage in (b"{not json", good[: len(good) // 2], head + b"\n" + edited, head + b"\n" + body + b" ",
                   json.dumps({"version": 3, "runs": json.loads(body)}).encode(),  # the old unsealed shape
                   Index(other).cache_file.read_bytes()):  # another folder's cache, sound in itself
        cache.write_bytes(damage)
        index = Index(root)
        assert index.entries() == first and index.read_count == len(first), damage[:60]
        assert cache.read_bytes() == good  # rebuilt as it was
    again = Index(root)
    assert again.entries() == first and again.read_count == 0


def test_the_cache_is_never_written_inside_the_folder_listed(many, tmp_path, monkeypatch):
    root, _ = many
    before = snapshot(root)
    assert Index(root).entries() and snapshot(root) == before
    monkeypatch.setenv(CACHE_ENV, str(root / ".cache"))  # a cache folder inside the folder listed: nothing cached
    index = Index(root)
    assert index.cache_file is None and index.entries() and snapshot(root) == before
    monkeypatch.setenv(CACHE_ENV, "off")
    assert Index(root).cache_file is None


def test_ls_prints_the_same_from_no_cache_a_cold_one_a_warm_one_and_a_damaged_one(many, tmp_path):
    root, _ = many
    secret = "sk-test-never-in-the-cache-0123456789"
    env = {**ENV, "OPENAI_API_KEY": secret, "ANTHROPIC_API_KEY": secret, "GEMINI_API_KEY": secret}
    cache = Index(root).cache_file
    assert cache is not None
    cache.unlink(missing_ok=True)
    before = snapshot(root)

    def ls(**more: str) -> str:
        r = subprocess.run([sys.executable, "-m", "workstation", "ls", str(root)], capture_output=True, text=True,
                           timeout=120, env={**env, **more})
        assert r.returncode == 0 and r.stderr == "", r.stderr
        return r.stdout

    plain = ls(**{CACHE_ENV: "off"})
    assert not cache.exists()
    assert ls() == plain and cache.is_file()  # cold: written to the user's cache
    assert ls() == plain  # warm
    data = cache.read_bytes()
    assert secret.encode() not in data
    assert (cache.parent.stat().st_mode & 0o077) == 0 and str(root) not in cache.name  # its own, by digest
    entries = json.loads(data.split(b"\n", 1)[1])
    assert all(set(v) == {"sig", "entry"} for v in entries.values())
    cache.write_bytes(data.replace(b'"game":"pacman"', b'"game":"tennis"'))
    assert ls() == plain
    assert snapshot(root) == before


def test_an_unreadable_recording_is_listed_as_such(tmp_path):
    path = _run(tmp_path)
    (path / "summary.json").write_text("[1, 2")
    (e,) = Index(tmp_path).entries()
    assert e.state == "unreadable" and "summary.json" in e.error


def _score(rec: Path) -> None:
    s = json.loads((rec / "summary.json").read_text())
    (rec / "summary.json").write_text(json.dumps({**s, "total_reward": 500.0}, indent=1))


def _cut_turns(rec: Path) -> None:
    lines = (rec / "turns.jsonl").read_text().splitlines(keepends=True)
    (rec / "turns.jsonl").write_text("".join(lines[:-1]))


def _turn_thought(rec: Path) -> None:  # the same size and totals: only the digest can tell
    text = (rec / "turns.jsonl").read_text()
    assert '"thought":"random baseline"' in text
    (rec / "turns.jsonl").write_text(text.replace('"thought":"random baseline"', '"thought":"random BASELINE"', 1))


def _manifest_seed(rec: Path) -> None:
    m = json.loads((rec / "manifest.json").read_text())
    (rec / "manifest.json").write_text(json.dumps({**m, "seed": 99}))


LS_DAMAGE = {"score edited": (_score, "total_reward 500 contradicts"), "turns cut": (_cut_turns, "turns.jsonl is"),
             "a turn's thought edited": (_turn_thought, "turns.jsonl differs from the digest"),
             "manifest edited": (_manifest_seed, "manifest.json is")}


def test_ls_lists_an_edited_recording_as_damaged_never_complete(tmp_path):
    """The cheap check on every recording read (manifest and turns against their digests, the summary against the
    turns), its verdict cached under the same signatures as the rest: never `complete` with a forged value."""
    root = tmp_path / "recs"
    sound = _run(root, seed=0)
    victims = {name: _run(root, seed=i + 1) for i, name in enumerate(LS_DAMAGE)}
    flipped = _run(root, seed=9)
    assert {e.state for e in Index(root).entries()} == {"complete"}  # listed (and cached) while sound
    for name, (damage, _) in LS_DAMAGE.items():
        damage(victims[name])
    data = bytearray((flipped / "frames.bin").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (flipped / "frames.bin").write_bytes(bytes(data))

    index = Index(root)
    by_path = {e.path: e for e in index.entries()}
    assert index.read_count == len(LS_DAMAGE)  # the edited ones are re-read, whatever file was edited
    for name, (_, says) in LS_DAMAGE.items():
        e = by_path[victims[name].name]
        assert e.state == "damaged" and not e.complete and says in (e.error or ""), (name, e)
    assert by_path[sound.name].state == "complete"
    assert by_path[flipped.name].state == "complete"  # frames are not hashed on a listing: verify checks them
    assert cli("verify", "--quick", str(flipped)).returncode == 1
    warm = Index(root)
    assert {e.path: e for e in warm.entries()} == by_path and warm.read_count == 0  # the verdict is cached

    r = cli("ls", str(root), "--complete")
    assert r.returncode == 0 and r.stdout.strip().endswith("2 recordings"), r.stdout
    assert all(v.name not in r.stdout for v in victims.values())
    r = cli("ls", str(root), "--state", "damaged")
    assert r.stdout.strip().endswith(f"{len(LS_DAMAGE)} recordings") and " damaged " in r.stdout, r.stdout
    states = {Path(j["path"]).name: j["state"] for j in map(json.loads, cli("ls", str(root), "--json").stdout.splitlines())}
    assert states == {sound.name: "complete", flipped.name: "complete", **{v.name: "damaged" for v in victims.values()}}
    r = cli("ls", str(root), "--incomplete")  # stopped, killed or still running: a damaged run is none of these
    assert r.returncode == 0 and r.stdout.strip().endswith("0 recordings"), r.stdout


def test_ls_prints_a_table_and_filters(many):
    root, ids = many
    r = cli("ls", str(root), "--game", "pacman")
    assert r.returncode == 0, r.stderr
    header, rule, row, count = r.stdout.splitlines()
    assert header.split() == ["game", "agent", "seed", "score", "turns", "state", "changed", "date", "run", "id", "path"]
    assert row.split()[:3] == ["pacman", "random", "7"] and "complete" in row and count == "1 recording"
    r = cli("ls", str(root), "--id", ids[42][:8])
    assert r.returncode == 0 and ids[42] in r.stdout and str(root / "batch/runs/copy-42") in r.stdout
    r = cli("ls", str(root), "--setting", "frames=45", "--json")
    (line,) = r.stdout.splitlines()
    assert json.loads(line)["seed"] == 2
    assert cli("ls", str(root), "--incomplete").stdout.strip().endswith("0 recordings")


@pytest.mark.parametrize("bad", ["missing", "file"])
def test_ls_of_a_bad_directory_is_one_line(tmp_path, bad):
    target = tmp_path / "nothing-here"
    if bad == "file":
        target.write_text("x")
    r = cli("ls", str(target))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = cli("ls", str(tmp_path), "--setting", "frames")
    assert r.returncode == 2 and "KEY=VALUE" in r.stderr
