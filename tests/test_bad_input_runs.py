"""Bad input for runs and matches: a run changed by hand edited to pass as plain (digests redone, so only the
rules on changes can tell), and damaged two-player matches. Each is refused in one line with exit 1 (damage),
no traceback, and nothing on disk changed."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.bad_input_world import snapshot
from tests.fake_provider import fake_server  # noqa: F401 - the fixture
from workstation.cli import main
from workstation.engine.turn_engine import Phase
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.options import RunSpec
from workstation.run.start import start_run
from workstation.store.integrity import file_digests
from workstation.store.recording import Recording

FRAMES = 60


def _run(out: Path, change: Callable[[Any], None] | None = None) -> Recording:
    """A random run of breakout seed 5; with ``change(engine)`` applied at turn 1's prompt."""
    e = start_run(RunSpec(game="breakout", agent="random", seed=5, out=str(out), protocol=Protocol(frames=FRAMES)))
    try:
        e.start()
        e.run_turn()
        if change is not None:
            e.step()
            assert e.phase is Phase.PROMPT
            change(e)
        drive(e)
    finally:
        e.close()
    assert e.writer is not None
    return Recording(e.writer.path)


def _override(e: Any) -> None:
    e.step()  # ask
    e.override_plan(["left", "left", "fire"])


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return code, out.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Recording, Recording]:
    base = tmp_path_factory.mktemp("runs")
    return _run(base / "plain"), _run(base / "changed", _override)


def _edit(path: Path, fn: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(fn(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")


def _turns(rec: Path, fn: Callable[[dict[str, Any]], None]) -> None:
    lines = [json.loads(line) for line in (rec / "turns.jsonl").read_text().splitlines()]
    for t in lines:
        fn(t)
    (rec / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))


def _redo_digests(rec: Path) -> None:
    _edit(rec / "summary.json", lambda s: {**s, "files": file_digests(rec)})


def _manifest(**changes: Any) -> Callable[[Path], None]:
    def forge(rec: Path) -> None:
        _edit(rec / "manifest.json", lambda m: {**m, **changes})

    return forge


def _plain_id(rec: Path) -> None:
    _edit(rec / "manifest.json", lambda m: {**m, "run_id": m["plain_run_id"]})


def _drop_interventions(rec: Path) -> None:
    _edit(rec / "summary.json", lambda s: {k: v for k, v in s.items()
                                           if k not in ("interventions", "changed_by_hand", "overridden_turns")})


def _all_plain(rec: Path) -> None:
    """Every mark of the change removed: manifest, summary and the turn's own flag."""
    _edit(rec / "manifest.json", lambda m: {**{k: v for k, v in m.items() if k != "plain_run_id"},
                                            "changes": [], "run_id": m["plain_run_id"]})
    _drop_interventions(rec)
    _turns(rec, lambda t: t.update(overridden=False))


def _all_plain_reply_too(rec: Path) -> None:
    """As above, and the turn's reply and parsed plan rewritten to say what was played."""
    _all_plain(rec)

    def fix(t: dict[str, Any]) -> None:
        if t["turn"] == 1:
            t.update(raw="thought: random baseline\nmove: [" + ", ".join(t["actions"] + t["dropped"]) + "]",
                     planned=t["actions"] + t["dropped"])

    _turns(rec, fix)


FORGERIES: dict[str, Callable[[Path], None]] = {
    "changes emptied": _manifest(changes=[]),
    "changes emptied, turns rewritten with spaces": lambda rec: (_manifest(changes=[])(rec),
                                                                 _turns(rec, lambda t: None)),
    "changes as text": _manifest(changes="none"),
    "changes null": _manifest(changes=None),
    "changes naming no kind": _manifest(changes=[{"turn": 1}]),
    "run_id set back to plain_run_id": _plain_id,
    "interventions dropped": _drop_interventions,
    "every mark removed": _all_plain,
    "every mark removed, the reply rewritten": _all_plain_reply_too,
}


@pytest.fixture(params=list(FORGERIES))
def forged(request: pytest.FixtureRequest, runs: tuple[Recording, Recording], tmp_path: Path) -> Path:
    _, changed = runs
    rec = tmp_path / "root" / changed.path.name
    shutil.copytree(changed.path, rec)
    FORGERIES[request.param](rec)
    _redo_digests(rec)
    return rec


@pytest.mark.parametrize("command", [("verify", "--quick"), ("verify",), ("info",), ("info", "--json")])
def test_a_changed_run_edited_to_look_plain_is_damaged(forged: Path, command: tuple[str, ...]) -> None:
    before = snapshot(forged)
    code, out = cli(*command, str(forged))
    assert code == 1, out
    assert "Traceback" not in out and len(out.splitlines()) <= 3, out
    assert "plain (not changed by hand)" not in out
    assert snapshot(forged) == before


def test_ls_never_lists_it_as_plain(forged: Path) -> None:
    code, out = cli("ls", str(forged.parent), "--plain")
    assert code == 0, out
    assert forged.name not in out and "0 recordings" in out


def test_the_untouched_runs_pass(runs: tuple[Recording, Recording]) -> None:
    plain, changed = runs
    for rec in (plain, changed):
        for command in (("verify", "--quick"), ("verify",), ("info",)):
            code, out = cli(*command, str(rec.path))
            assert code == 0, out
    assert "plain (not changed by hand)" in cli("info", str(plain.path))[1]
    assert "CHANGED BY HAND: 1 plan overridden" in cli("info", str(changed.path))[1]


GRID = f"""\
name = "one"
games = ["breakout"]
seeds = [5]

[protocol]
frames = {FRAMES}

[[settings]]
label = "random"
spec = "random"
"""


def test_a_batch_resume_does_not_count_it_as_its_cell(forged: Path, tmp_path: Path) -> None:
    out = tmp_path / "batch"
    (out / "runs").mkdir(parents=True)
    shutil.copytree(forged, out / "runs" / forged.name)
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    code, text = cli("batch", str(grid), "--out", str(out), "--dry-run")
    assert code == 0, text
    assert "changed by hand: not counted" in text, text


# -- two-player matches ---------------------------------------------------------------
@pytest.fixture(scope="module")
def match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from workstation.run.match_start import MatchSpec, start_match

    engine = start_match(MatchSpec("boxing", "random", "random", 3, Protocol(frames=900),
                                   str(tmp_path_factory.mktemp("match"))))
    try:
        engine.run()
    finally:
        engine.close()
    assert engine.writer is not None
    path = engine.writer.path
    scores = [p["score"] for p in Recording(path).summary_record.players]
    assert scores[0] != scores[1]  # seed 3 has a winner: editing a score changes the result
    return path


def _side_score(k: int, delta: float) -> Callable[[Path], None]:
    def forge(rec: Path) -> None:
        def edit(s: dict[str, Any]) -> dict[str, Any]:
            s["players"][k]["score"] += delta
            return s

        _edit(rec / "summary.json", edit)

    return forge


def _summary(**values: Any) -> Callable[[Path], None]:
    def forge(rec: Path) -> None:
        _edit(rec / "summary.json", lambda s: {**s, **values})

    return forge


def _flip_result(rec: Path) -> None:
    def edit(s: dict[str, Any]) -> dict[str, Any]:
        winner = 3 - s["winner"]
        return {**s, "winner": winner, "result": f"side {winner} wins"}

    _edit(rec / "summary.json", edit)


def _turn_side_score(rec: Path) -> None:
    _turns(rec, lambda t: t["players"][1].update(score=t["players"][1]["score"] + 1))


MATCH_DAMAGE: dict[str, Callable[[Path], None]] = {
    "side 2's score edited": _side_score(1, 5),
    "side 1's score edited": _side_score(0, -3),
    "winner and result swapped": _flip_result,
    "players: []": _manifest(players=[]),
    "one player": lambda rec: _edit(rec / "manifest.json", lambda m: {**m, "players": m["players"][:1]}),
    "players as text": _manifest(players="two"),
    "sides swapped": lambda rec: _edit(rec / "manifest.json", lambda m: {**m, "players": m["players"][::-1]}),
    "summary players: []": _summary(players=[]),
    "summary complete as text": _summary(complete="yes"),  # a field of the wrong type: damage, not bad input
    "a turn's side score edited": _turn_side_score,
    "a turn with one side": lambda rec: _turns(rec, lambda t: t.update(players=t["players"][:1])),
    "a turn's side score as text": lambda rec: _turns(rec, lambda t: t["players"][0].update(score="many")),
}


@pytest.fixture(params=list(MATCH_DAMAGE))
def damaged_match(request: pytest.FixtureRequest, match: Path, tmp_path: Path) -> Path:
    rec = tmp_path / match.name
    shutil.copytree(match, rec)
    MATCH_DAMAGE[request.param](rec)
    _redo_digests(rec)
    return rec


@pytest.mark.parametrize("command", [("verify", "--quick"), ("info",), ("info", "--json"),
                                     ("request", "--turn", "1", "--side", "2", "--json"),
                                     ("request", "--turn", "1")])
def test_a_damaged_match_is_refused_in_one_line(damaged_match: Path, command: tuple[str, ...]) -> None:
    before = snapshot(damaged_match)
    code, out = cli(*command[:1], str(damaged_match), *command[1:])
    assert code == 1, out
    assert "Traceback" not in out and len(out.splitlines()) <= 3, out
    assert snapshot(damaged_match) == before


def test_a_sound_match_passes_and_its_request_is_json(match: Path) -> None:
    for command in (("verify", "--quick"), ("verify",), ("info",)):
        code, out = cli(command[0], str(match), *command[1:])
        assert code == 0, out
    code, out = cli("request", str(match), "--turn", "2", "--side", "2", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["side"] == 2 and data["messages"][0]["role"] in ("system", "user")
    text = " ".join(p.get("text", "") for m in data["messages"] for p in m["content"])
    assert "black boxer" in text
    frames = [p["frame"] for m in data["messages"] for p in m["content"] if p["type"] == "image"]
    assert frames and all(isinstance(f, int) for f in frames)


def test_a_run_whose_manifest_drops_its_changes_is_read_as_an_older_changed_run(runs: tuple[Recording, Recording],
                                                                                 tmp_path: Path) -> None:
    """No list of changes at all (as written before they were tracked): they are read from the turns, so the run
    keeps its changed id and marks and never passes as plain."""
    plain, changed = runs
    rec = tmp_path / "root" / changed.path.name
    shutil.copytree(changed.path, rec)
    _edit(rec / "manifest.json", lambda m: {**{k: v for k, v in m.items() if k not in ("changes", "plain_run_id")},
                                            "run_id": plain.run_id})
    _redo_digests(rec)
    again = Recording(rec)
    assert again.interventions == {"override": 1} and again.run_id == changed.run_id != plain.run_id
    code, out = cli("info", str(rec))
    assert code == 0 and "CHANGED BY HAND: 1 plan overridden" in out, out
    assert cli("ls", str(rec.parent), "--plain")[1].endswith("0 recordings\n")


def test_a_co_operative_match_s_team_score_is_the_sum_of_the_sides(tmp_path: Path) -> None:
    """The fast check states the rule: team_score is side 1's score plus side 2's (a max would not do)."""
    from workstation.run.match_start import MatchSpec, start_match

    engine = start_match(MatchSpec("mario_bros", "random", "random", 2, Protocol(frames=60), str(tmp_path / "m")))
    try:
        engine.run()
    finally:
        engine.close()
    assert engine.writer is not None
    rec = engine.writer.path

    def points(t: dict[str, Any]) -> None:  # the last turn scores 800 for side 1 and 300 for side 2
        if t["turn"] == len(Recording(rec).match_turns) - 1:
            for side, pts in zip(t["players"], (800.0, 300.0)):
                side.update(reward=side["reward"] + pts, score=side["score"] + pts)
            t.update(reward=t["reward"] + 800.0, score=t["score"] + 800.0)

    _turns(rec, points)

    def summary(team: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def edit(s: dict[str, Any]) -> dict[str, Any]:
            s["players"][0]["score"], s["players"][1]["score"] = 800.0, 300.0
            return {**s, "total_reward": 800.0, "team_score": team}

        return edit

    for team, code in ((1100.0, 0), (800.0, 1), (500.0, 1)):
        _edit(rec / "summary.json", summary(team))
        _redo_digests(rec)
        got, out = cli("verify", "--quick", str(rec))
        assert got == code, out


def test_a_model_run_s_plans_are_re_derived_by_the_parser(fake_server: Any, tmp_path: Path,  # noqa: F811
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A model's turn must play what the parser reads in its recorded reply, unless a change says otherwise."""
    from tests.fake_provider import KEYS, SPECS

    fake_server.reset()
    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    code, out = cli("run", "--game", "breakout", "--agent", SPECS["openai"], "--base-url",
                    fake_server.url("openai"), "--seed", "0", "--frames", "60", "--out", str(tmp_path / "m"), "--quiet")
    assert code == 0, out
    rec = Path(out.splitlines()[0])
    assert cli("verify", "--quick", str(rec))[0] == 0  # the untouched model run: every plan is the reply's
    assert Recording(rec).manifest_record.agent.get("kind") not in ("random", "replay")

    def other_plan(t: dict[str, Any]) -> None:
        if t["turn"] == 1:
            t.update(actions=["fire" if a != "fire" else "left" for a in t["actions"]], dropped=[])

    _turns(rec, other_plan)
    _redo_digests(rec)
    code, out = cli("verify", "--quick", str(rec))
    assert code == 1 and "turn 1 played" in out and len(out.splitlines()) == 1, out


def test_a_replay_s_plans_are_re_derived_from_its_source(runs: tuple[Recording, Recording], tmp_path: Path) -> None:
    plain, _ = runs
    code, out = cli("run", "--game", "breakout", "--agent", f"replay:{plain.path}", "--seed", "5", "--frames", "60",
                    "--out", str(tmp_path / "r"), "--quiet")
    assert code == 0, out
    rec = Path(out.splitlines()[0])
    assert cli("verify", "--quick", str(rec))[0] == 0

    def other_plan(t: dict[str, Any]) -> None:  # reply and plan rewritten to agree with the forged actions
        if t["turn"] == 2:
            t.update(actions=["right"] * len(t["actions"]), planned=["right"] * len(t["actions"]), dropped=[],
                     raw="thought: x\nmove: [" + ", ".join(["right"] * len(t["actions"])) + "]")

    _turns(rec, other_plan)
    _redo_digests(rec)
    code, out = cli("verify", "--quick", str(rec))
    assert code == 1 and "turn 2 played" in out, out


def test_a_match_is_replayed_as_one_player(match: Path, tmp_path: Path) -> None:
    """``match --p1 replay:MATCH_DIR`` is supported: side 1 plays the plans side 1 of that match planned."""
    code, out = cli("match", "--game", "boxing", "--p1", f"replay:{match}", "--p2", "random", "--frames", "30",
                    "--out", str(tmp_path / "out"), "--quiet")
    assert code == 0, out
    (played,) = (tmp_path / "out").iterdir()
    assert Recording(played).manifest_record.players[0]["agent"]["kind"] == "replay"


@pytest.mark.parametrize("side", [1, 2])
def test_a_damaged_match_is_never_replayed_as_a_player(damaged_match: Path, tmp_path: Path, side: int) -> None:
    """A damaged match as one side's player is named in one line, exit 1, before anything is written."""
    specs = {1: "random", 2: "random"}
    specs[side] = f"replay:{damaged_match}"
    code, out = cli("match", "--game", "boxing", "--p1", specs[1], "--p2", specs[2], "--frames", "30",
                    "--out", str(tmp_path / "out"))
    assert code == 1, out
    assert "Traceback" not in out and len(out.splitlines()) <= 3 and f"--p{side}" in out, out
    assert not (tmp_path / "out").exists()
