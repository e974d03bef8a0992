"""The arena's own ledger (arena.jsonl, through store/ledger.Ledger) and seal (kind ``arena``): every match it
played, pinned; read by ``arena --report``, a resume and ``verify DIR``; an arena from before them read as before."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from tests.bad_input_world import snapshot
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.match_start import MatchSpec, start_match
from workstation.store.integrity import file_digests


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return int(code or 0), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """An arena of two players (random, and a replay of a short match), one seed: two matches."""
    base = tmp_path_factory.mktemp("arena_ledger")
    engine = start_match(MatchSpec("pong", "random", "random", 5, Protocol(frames=30), str(base / "src")))
    try:
        engine.run()
    finally:
        engine.close()
    assert engine.writer is not None
    code, _, err = cli(*arena(base / "arena", engine.writer.path))
    assert code == 0, err
    (base / "source").write_text(str(engine.writer.path))
    return base


def arena(out: Path, source: Path | str, *extra: str) -> list[str]:
    return ["arena", "--game", "pong", "--players", f"random,replay:{source}", "--frames", "30", "--out", str(out),
            "--bootstrap", "0", *extra]


@pytest.fixture
def world(played, tmp_path) -> tuple[Path, list[str]]:
    shutil.copytree(played / "arena", tmp_path / "arena")
    return tmp_path / "arena", arena(tmp_path / "arena", (played / "source").read_text())


def matches(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.is_dir())


def lines(d: Path) -> list[dict]:
    return [json.loads(x) for x in (d / "arena.jsonl").read_text().splitlines()]


def test_an_arena_keeps_a_ledger_of_its_matches_and_a_seal_that_verify_checks(world):
    d, again = world
    book = lines(d)
    assert sorted(m["path"] for m in book) == [p.name for p in matches(d)]
    assert all(m["complete"] and m["game"] == "pong" and len(m["summary_sha256"]) == 64 for m in book)
    assert json.loads((d / "seal.json").read_text())["kind"] == "arena"
    for quick in ((), ("--quick",)):
        code, out, _ = cli("verify", *quick, str(d))
        assert code == 0 and out.startswith("OK: arena"), out
    code, _, err = cli(*again)
    assert code == 0 and "2 already finished, 0 to play now" in err, err
    assert len(lines(d)) == 2


def _redigest(rec: Path, **change) -> None:
    s = json.loads((rec / "summary.json").read_text())
    (rec / "summary.json").write_text(json.dumps({**s, **change, "files": file_digests(rec)}))


@pytest.mark.parametrize("damage", ["summary changed, digests redone", "match folder removed"])
def test_a_match_changed_or_removed_after_the_arena_recorded_it_is_named_and_played_again(world, damage):
    d, again = world
    bad = matches(d)[0]
    if damage == "match folder removed":
        shutil.rmtree(bad)
    else:
        _redigest(bad, wall_s=12.5)  # a field nothing else holds: sound to its own check
        assert cli("verify", "--quick", str(bad))[0] == 0  # the recording's own check passes: only the pin sees it
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["matches"] == 1 and [x["path"] for x in report["damaged"]] == [str(bad)]
    code, out, _ = cli("verify", str(d))
    assert code == 1 and out.startswith("DAMAGED: arena") and str(bad) in out, out
    code, _, err = cli(*again)
    assert code == 0 and "1 already finished, 1 to play now" in err and str(bad) in err, err
    assert len(lines(d)) == 3  # the match played again: the ledger's last line for its run id is the new one
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d), "--json")
    assert json.loads(out)["matches"] == 2


@pytest.mark.parametrize("damage", ["a file added", "a ledger line edited", "a ledger line cut"])
def test_an_arena_failing_its_seal_is_named_in_one_line_exit_1_and_nothing_is_written(world, damage):
    d, again = world
    if damage == "a file added":
        (d / "notes.json").write_text("{}")
    elif damage == "a ledger line edited":
        text = (d / "arena.jsonl").read_text()
        (d / "arena.jsonl").write_text(text.replace('"complete":true', '"complete":false', 1))
    else:
        text = (d / "arena.jsonl").read_text()
        (d / "arena.jsonl").write_text(text.splitlines()[1] + "\n")
    before = snapshot(d)
    for argv in (["arena", "--game", "pong", "--report", "--out", str(d)], again):
        code, out, err = cli(*argv)
        assert code == 1 and "Traceback" not in err and len(err.splitlines()) == 1, err
        assert f"arena {d} is damaged" in err, err
    code, out, _ = cli("verify", str(d))
    assert code == 1 and out.startswith(f"DAMAGED: arena {d}"), out
    assert snapshot(d) == before


def test_an_arena_from_before_its_ledger_is_read_as_before_and_adopted_when_played_in(world):
    d, again = world
    (d / "arena.jsonl").unlink()
    (d / "seal.json").unlink()
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d), "--json")
    assert code == 0 and json.loads(out)["matches"] == 2
    assert not (d / "arena.jsonl").exists()  # a report only reads
    code, _, err = cli(*again[:-2], "--bootstrap", "0", "--seeds", "2")  # seed 1 is new: the arena plays in it
    assert code == 0 and "2 already finished, 2 to play now" in err, err
    assert len(lines(d)) == 4 and (d / "seal.json").is_file()
    assert cli("verify", str(d))[0] == 0


class Killed(BaseException):
    """The process killed at this instant (no handler sees it)."""


def test_runs_and_matches_still_go_into_an_arena_s_folder_and_the_arena_rates_only_its_own(world):
    """An arena's folder is often the shared default `recordings`: a run and a match played there by hand are written
    (the arena's seal leaves recordings out, so it still holds), the match is named and left out of the ratings, and
    the arena neither counts nor adopts it."""
    d, again = world
    for argv in (["match", "--game", "pong", "--p1", "random", "--p2", "random", "--frames", "30", "--seed", "7"],
                 ["run", "--game", "breakout", "--agent", "random", "--frames", "30"]):
        code, _, err = cli(*argv, "--out", str(d), "--quiet")
        assert code == 0, err
    assert cli("verify", str(d), "--quick")[0] == 0
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d), "--json")
    report = json.loads(out)
    assert code == 0 and report["matches"] == 2 and len(report["not_own"]) == 1, report
    code, _, err = cli(*again)
    assert code == 0 and "2 already finished, 0 to play now" in err and len(lines(d)) == 2, err


def test_a_match_the_arena_did_not_play_is_left_out_of_its_ratings_in_one_line(world, tmp_path):
    """A match copied into the arena's folder (or played there by hand with an older workstation) is not in its
    ledger: named in one line, left out of every figure, and the arena neither counts nor adopts it."""
    d, again = world
    code, _, err = cli("match", "--game", "pong", "--p1", "random", "--p2", "random", "--frames", "30", "--seed", "7",
                       "--out", str(tmp_path / "elsewhere"), "--quiet")
    assert code == 0, err
    (made,) = (tmp_path / "elsewhere").iterdir()
    shutil.copytree(made, d / made.name)
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d), "--json")
    report = json.loads(out)
    assert code == 0 and report["matches"] == 2 and report["not_own"] == [str(d / made.name)]
    assert len(report["players"]) == 2
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d))
    said = [x for x in out.splitlines() if "did not play" in x]
    assert code == 0 and len(said) == 1 and str(d / made.name) in said[0] and "not rated" in said[0], out
    code, out, err = cli(*again)
    assert code == 0 and "2 already finished, 0 to play now" in err and len(lines(d)) == 2, err
    assert sum("did not play" in x for x in (out + err).splitlines()) == 1, out + err


def test_an_old_arena_adopts_its_matches_whole_and_a_kill_before_the_seal_resumes(world, monkeypatch):
    """Adopting an arena from before its ledger writes the whole ledger in one rename, then seals: killed in
    between, the next run reads every match (none left out as not the arena's), seals, and plays on."""
    import workstation.studies.arena.played as played

    d, again = world
    (d / "arena.jsonl").unlink()
    (d / "seal.json").unlink()
    real = played.reseal

    def killed(out):
        raise Killed

    monkeypatch.setattr(played, "reseal", killed)
    with pytest.raises(Killed):
        cli(*again[:-2], "--bootstrap", "0", "--seeds", "2")  # seed 1 is new: the arena adopts, then plays in it
    monkeypatch.setattr(played, "reseal", real)
    assert len(lines(d)) == 2 and not (d / "seal.json").exists()  # the whole ledger, no seal yet
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d), "--json")
    assert code == 0 and json.loads(out)["matches"] == 2 and "not_own" not in json.loads(out)
    code, _, err = cli(*again[:-2], "--bootstrap", "0", "--seeds", "2")
    assert code == 0 and "2 already finished, 2 to play now" in err, err
    assert len(lines(d)) == 4 and cli("verify", str(d))[0] == 0


def test_a_new_arena_killed_after_its_first_match_resumes(played, tmp_path, monkeypatch):
    """A new arena's ledger is there (empty) when it is first sealed, so a kill after a match, before the arena is
    sealed again, leaves an arena that reads and resumes (it used to be named damaged: a ledger added after)."""
    import workstation.studies.arena.played as played_mod

    d = tmp_path / "arena"
    argv = arena(d, (played / "source").read_text())
    real, seals = played_mod.reseal, []

    def dies_on_the_second_seal(out):
        seals.append(out)
        if len(seals) == 2:
            raise Killed
        real(out)

    monkeypatch.setattr(played_mod, "reseal", dies_on_the_second_seal)
    with pytest.raises(Killed):
        cli(*argv, "--max-matches", "1")
    monkeypatch.setattr(played_mod, "reseal", real)
    assert len(lines(d)) == 1
    code, _, err = cli(*argv)
    assert code == 0 and "1 already finished, 1 to play now" in err, err
    assert len(lines(d)) == 2 and cli("verify", str(d))[0] == 0


def test_an_arena_is_pinned_to_its_game_and_protocol_and_a_resume_with_others_is_refused(world):
    """Matches of another budget or game are never pooled into one arena: its identity (arena.json, sealed) names
    the setting that differs, in one line, exit 2, and nothing is written."""
    d, again = world
    assert json.loads((d / "arena.json").read_text())["game"] == "pong"
    assert json.loads((d / "arena.json").read_text())["frames"] == 30
    before = snapshot(d)
    frames = again.index("--frames") + 1
    for changed, says in (({frames: "60"}, "frames=30"), ({again.index("--game") + 1: "boxing"}, "game='pong'")):
        argv = [changed.get(i, x) for i, x in enumerate(again)]
        code, out, err = cli(*argv)
        assert code == 2 and len(err.strip().splitlines()) == 1 and says in err, err
        assert "is an arena of other matches" in err and "Traceback" not in err
        assert snapshot(d) == before
    code, _, err = cli(*again)  # its own settings: resumed
    assert code == 0 and "2 already finished, 0 to play now" in err, err


def test_an_arena_from_before_its_identity_reads_as_before_and_is_pinned_to_what_its_matches_share(world,
                                                                                                   monkeypatch):
    import workstation.studies.arena.played as played_mod

    d, again = world
    (d / "arena.json").unlink()
    played_mod.reseal(d)  # sealed as an arena from before the identity was
    assert cli("verify", str(d))[0] == 0
    code, out, _ = cli("arena", "--game", "pong", "--report", "--out", str(d), "--json")
    assert code == 0 and json.loads(out)["matches"] == 2 and not (d / "arena.json").exists()
    argv = [("60" if again[i - 1] == "--frames" else x) for i, x in enumerate(again)]
    code, _, err = cli(*argv)  # its matches were played with 30 frames: refused
    assert code == 2 and "frames=30" in err and "frames=60" in err, err
    real = played_mod.reseal

    def killed(out):
        raise Killed

    monkeypatch.setattr(played_mod, "reseal", killed)  # killed after pinning it, before sealing again
    with pytest.raises(Killed):
        cli(*again[:-2], "--bootstrap", "0", "--seeds", "2")
    monkeypatch.setattr(played_mod, "reseal", real)
    assert (d / "arena.json").is_file() and cli("verify", str(d))[0] == 0  # it reads: the identity its matches make
    code, _, err = cli(*again[:-2], "--bootstrap", "0", "--seeds", "2")
    assert code == 0 and "2 already finished, 2 to play now" in err, err
    assert cli("verify", str(d))[0] == 0 and json.loads((d / "arena.json").read_text())["frames"] == 30
