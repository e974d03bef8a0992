"""The open screen shows the judge's verdict on a judged turn and jumps between judged failures."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

from screens.app import make_app
from screens.views.replay_view import ReplayScreen
from screens.widgets.reply_view import ReplyView
from tests.fake_provider import fake_server  # noqa: F401
from tests.judge_helpers import JUDGE, ScriptedJudge, make_batch
from tests.tui_helpers import run_async, wait_until
from workstation.cli import main


@pytest.fixture(scope="module")
def judged(fake_server, tmp_path_factory):  # noqa: F811
    fake_server.reset()
    root = tmp_path_factory.mktemp("judged")
    batch = make_batch(fake_server, root / "batch", frames=200)
    fake_server.responder = ScriptedJudge()
    try:
        assert main(["judge", str(batch), "--judge", f"compat:{JUDGE}", "--base-url", fake_server.url("compat"),
                     "--out", str(root / "j"), "--turns", "3"]) == 0
    finally:
        fake_server.reset()
    return root / "j"


@run_async
async def test_open_shows_the_verdict_and_jumps_between_judged_failures(judged, monkeypatch):
    monkeypatch.setenv("WORKSTATION_JUDGED", str(judged))
    sample = json.loads((judged / "judge.json").read_text())["samples"][0]
    verdicts = {v["turn"]: v for v in map(json.loads, (judged / "verdicts.jsonl").read_text().splitlines())
                if v["run_id"] == sample["run_id"]}
    failed = sorted(t for t, v in verdicts.items() if v["failure"])
    app = make_app("open", Namespace(recording=sample["path"]))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen) and set(screen.verdicts) == set(verdicts)
        await pilot.press("j")
        assert screen.turn == failed[0]
        note = screen.query_one(ReplyView).note
        v = verdicts[failed[0]]
        assert note.startswith(f"judge: {v['group']}") and v["evidence"] in note and "RAM" in note
        await pilot.press("j")
        assert screen.turn == failed[1]
        await pilot.press("k")
        assert screen.turn == failed[0]
        await pilot.press("left")
        if screen.turn not in verdicts:
            assert not screen.query_one(ReplyView).note.startswith("judge:")


@run_async
async def test_open_without_a_judging_has_no_verdicts(judged, monkeypatch, tmp_path):
    monkeypatch.setenv("WORKSTATION_JUDGED", str(tmp_path))
    sample = json.loads((judged / "judge.json").read_text())["samples"][0]
    app = make_app("open", Namespace(recording=sample["path"]))
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.screen.verdicts == {}
        await pilot.press("j")
        assert app.screen.turn == 0


def _notes(app) -> list[str]:
    return [n.message for n in app._notifications]


@run_async
async def test_j_tells_not_judged_from_no_verdicts_from_no_failures(judged, monkeypatch, tmp_path):
    import shutil

    sample = json.loads((judged / "judge.json").read_text())["samples"][0]
    monkeypatch.setenv("WORKSTATION_JUDGED", str(tmp_path / "nothing"))  # not sampled by any judging
    app = make_app("open", Namespace(recording=sample["path"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("j")
        await wait_until(pilot, lambda: _notes(app), what="the note")
        assert "this run was not judged" in _notes(app)[-1]

    copy = tmp_path / "j"
    shutil.copytree(judged, copy)
    (copy / "seal.json").unlink(missing_ok=True)  # edited by hand below: a study as written before seals
    lines = (copy / "verdicts.jsonl").read_text().splitlines()
    mine = [v for v in map(json.loads, lines) if v["run_id"] == sample["run_id"]]
    others = [line for line in lines if json.loads(line)["run_id"] != sample["run_id"]]
    (copy / "verdicts.jsonl").write_text("".join(f"{line}\n" for line in others))  # sampled, no verdict on it
    monkeypatch.setenv("WORKSTATION_JUDGED", str(copy))
    app = make_app("open", Namespace(recording=sample["path"]))
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.screen.verdicts == {}
        await pilot.press("j")
        await wait_until(pilot, lambda: _notes(app), what="the note")
        assert "sampled this run but holds no verdict" in _notes(app)[-1]

    passed = [json.dumps({**v, "failure": False, "category": None, "group": None, "subtype": None})  # judged, nothing failed
              for v in mine]
    (copy / "seal.json").unlink(missing_ok=True)  # edited by hand again
    (copy / "verdicts.jsonl").write_text("".join(f"{line}\n" for line in [*others, *passed]))
    app = make_app("open", Namespace(recording=sample["path"]))
    async with app.run_test(size=(120, 40)) as pilot:
        assert set(app.screen.verdicts) == {v["turn"] for v in mine}
        await pilot.press("j")
        await wait_until(pilot, lambda: _notes(app), what="the note")
        assert f"found no failure in this run ({len(mine)} turn" in _notes(app)[-1]
