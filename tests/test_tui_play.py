"""Human play in the TUI: the real emulator and real recordings, paced by a hand-moved clock."""

from __future__ import annotations

import asyncio
import threading
import time
from itertools import chain

import pytest
from textual.app import App

from screens.drivers.play_driver import PlaySettingsError, WallPacer, action_seconds
from screens.views.play import PlayScreen
from tests.tui_helpers import run_async, wait_until
from workstation.game.protocol import Protocol
from workstation.store.recording import Recording


class ManualPacer:
    """A clock the test moves; the worker's waits return only when it gets there."""

    def __init__(self) -> None:
        self.t = 0.0
        self.waiting: float | None = None  # the slot the worker waits for
        self._cond = threading.Condition()

    def now(self) -> float:
        return self.t

    def wait_until(self, t: float, cancelled) -> None:
        with self._cond:
            self.waiting = t
            while self.t < t and not cancelled():
                self._cond.wait(0.01)
            self.waiting = None

    async def _worker_idle(self, screen: PlayScreen) -> bool:
        """Wait until the worker waits for a slot later than now; False once it has finished."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if screen.done.is_set():
                return False
            waiting = self.waiting
            if waiting is not None and waiting > self.t:
                return True
            await asyncio.sleep(0.001)
        raise AssertionError("the play worker neither waited nor finished")

    async def advance_to(self, target: float, screen: PlayScreen) -> None:
        """Move the clock slot by slot, so every slot runs at its own time."""
        while await self._worker_idle(screen) and self.waiting <= target:
            with self._cond:
                self.t = self.waiting
                self._cond.notify_all()
        self.t = max(self.t, target)


class PlayApp(App):
    def __init__(self, screen: PlayScreen) -> None:
        super().__init__()
        self.play = screen
        self.notes: list[str] = []
        self.left_with = "not yet"

    def on_mount(self) -> None:
        self.push_screen(self.play, callback=self._left)

    def _left(self, result) -> None:
        self.left_with = result

    def notify(self, message, **kwargs) -> None:
        self.notes.append(str(message))
        super().notify(message, **kwargs)


def actions_of(path) -> list[str]:
    return list(chain.from_iterable(t.actions for t in Recording(path).turn_records))


@run_async
async def test_real_time_play_records_the_keys_held_at_each_slot(tmp_path):
    pacer = ManualPacer()
    screen = PlayScreen("breakout", 0, "realtime", "paper", str(tmp_path), Protocol(frames=60),
                        countdown=0, pacer=pacer)
    app = PlayApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        assert await pacer._worker_idle(screen)
        await pilot.press("left")  # t=0: held 0.55 s -> slots 0.1..0.5
        await pacer.advance_to(0.52, screen)
        await pilot.press("left")  # an auto-repeat: held until 0.64 -> slot 0.6
        await pacer.advance_to(1.05, screen)  # slots 0.7..1.0: nothing held
        await pilot.press("space")  # fire for slots 1.1..1.5
        await pacer.advance_to(1.55, screen)
        await pilot.press("d")  # fire still lingers; Breakout has no rightfire: the newest key wins
        await wait_until(pilot, lambda: "fire+right" in str(screen.query_one("#play-keys").render()),
                         what="the keys panel to show fire+right")
        await pacer.advance_to(3.0, screen)
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        path = screen.recording
        banner = str(screen.query_one("#play-banner").render())
        stats = str(screen.query_one("#play-stats").render())
        keys = str(screen.query_one("#play-keys").render())
        assert "applying" not in keys and "held now" not in keys and "the run is over" in keys  # nothing applies now
        assert screen.query_one("#play-frame").frame_index == 60
        await pilot.press("escape")
        assert app.left_with == {"summary": screen.summary, "path": path}
    assert actions_of(path) == ["left"] * 6 + ["noop"] * 4 + ["fire"] * 5 + ["right"] * 5
    rec = Recording(path)
    assert rec.complete and rec.summary_record.frames == 60 and rec.summary_record.agent == "human"
    assert rec.manifest_record.agent["mode"] == "realtime" and rec.manifest_record.protocol["max_actions"] == 1
    assert rec.manifest_record.agent["pace"] == screen.pace
    assert "complete" in banner and str(path) in banner.replace("\n", "")
    assert "frames 60/60" in stats and "paper clock   2.00 s / 2 s" in stats and "native clock  1.00 s" in stats


@run_async
async def test_paused_play_records_exactly_the_committed_plans(tmp_path):
    screen = PlayScreen("seaquest", 3, "paused", "instant", str(tmp_path), Protocol(frames=300))
    app = PlayApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: screen.awaiting_plan, what="the first plan prompt")
        for key in ("up", "plus", "left", "space", "x", "n", "s", "backspace", "right"):
            await pilot.press(key)
        queue_text = str(screen.query_one("#play-queue").render())
        assert "1.upleft 2.fire 3.noop 4.right" in queue_text
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.awaiting_plan and screen.stats.turn == 1, what="turn 1")
        await pilot.press("enter")  # an empty plan is refused, not sent
        assert screen.awaiting_plan and any("at least one action" in n for n in app.notes)
        for key in ("w", "plus", "d", "plus", "space"):
            await pilot.press(key)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.awaiting_plan and screen.stats.turn == 2, what="turn 2")
        assert screen.stats.frame == 15 and screen.applied == "uprightfire"
        await pilot.press("escape")  # quit: the recording stays, marked incomplete
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to stop")
        path = screen.recording
        keys, queue = (str(screen.query_one(f"#play-{name}").render()) for name in ("keys", "queue"))
        assert "applying" not in keys and "waiting for the game" not in queue and "the run is over" in queue
    rec = Recording(path)
    assert [t.actions for t in rec.turn_records] == [["upleft", "fire", "noop", "right"], ["uprightfire"]]
    assert all(t.valid for t in rec.turn_records)
    assert all(t.latency_s > 0 for t in rec.turn_records)  # the person's thinking time is the agent's latency
    assert rec.summary_record.complete is False and rec.summary_record.stopped == "play was cancelled"
    assert rec.manifest_record.seed == 3 and rec.manifest_record.protocol["max_actions"] == 10


@run_async
async def test_window_without_a_display_falls_back_to_the_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("SDL_VIDEODRIVER", raising=False)  # SDL's dummy driver counts as a display
    pacer = ManualPacer()
    screen = PlayScreen("freeway", 0, "realtime", "native", str(tmp_path), Protocol(frames=30),
                        countdown=2, window=True, pacer=pacer)
    app = PlayApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: screen.query_one("#play-count").display, what="the countdown")
        assert any("no play window: no display" in n for n in app.notes)
        await pacer.advance_to(2.0, screen)  # countdown over
        await pilot.press("up")
        await pacer.advance_to(2.22, screen)  # native pace: 0.05 s a slot -> 4 slots
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to stop")
        assert "incomplete (play was cancelled)" in str(screen.query_one("#play-banner").render())
        path = screen.recording
    assert actions_of(path) == ["up"] * 4
    assert sum(1 for n in app.notes if "no play window" in n) == 1


def test_paces_and_settings():
    assert action_seconds("paper", 3) == pytest.approx(0.1)
    assert action_seconds("native", 3) == pytest.approx(0.05)
    assert action_seconds("instant", 3) == 0
    with pytest.raises(PlaySettingsError, match="unknown pace"):
        action_seconds("fast", 3)
    with pytest.raises(PlaySettingsError, match="use realtime or paused"):
        PlayScreen("breakout", 0, mode="turbo")


def test_wall_pacer_sleeps_until_the_slot_and_stops_on_cancel():
    pacer = WallPacer()
    t0 = pacer.now()
    pacer.wait_until(t0 + 0.03, lambda: False)
    assert pacer.now() - t0 >= 0.03
    t1 = pacer.now()
    pacer.wait_until(t1 + 5.0, lambda: True)
    assert pacer.now() - t1 < 0.1


class LatePacer:
    """A clock that is already past every slot the worker asks for."""

    def __init__(self, t: float) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    def wait_until(self, t: float, cancelled) -> None:
        pass


def test_a_late_slot_restarts_the_schedule_instead_of_catching_up():
    pacer = LatePacer(1.0)
    screen = PlayScreen("breakout", 0, pace="paper", pacer=pacer)
    assert screen.driver.next_slot(0.5, lambda: False) == 1.0  # 0.4 s late: the next slots count from now
    pacer.t = 0.62
    assert screen.driver.next_slot(0.5, lambda: False) == pytest.approx(0.6)  # a little late: schedule kept


@run_async
async def test_the_keys_panel_redraws_only_when_it_changes(tmp_path):
    pacer = ManualPacer()
    screen = PlayScreen("breakout", 0, "realtime", "paper", str(tmp_path), Protocol(frames=30),
                        countdown=0, pacer=pacer)
    app = PlayApp(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await pacer._worker_idle(screen)
        panel = screen.query_one("#play-keys")
        texts: list[str] = []
        update = panel.update
        panel.update = lambda content="", **kw: (texts.append(str(content)), update(content, **kw))[1]
        await pilot.pause(0.3)  # six ticks of the 50 ms refresh, nothing held, the clock stopped
        assert texts == []
        await pilot.press("left")
        await wait_until(pilot, lambda: texts, what="the keys panel to redraw")  # the next tick, however late
        assert len(texts) == 1 and "held now left -> left" in texts[0]
        assert "held now left" in str(panel.render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to stop")


def test_make_app_play_builds_a_screen_that_ends_the_app(tmp_path):
    from screens.app import PlayLaunch, make_app
    from workstation.base.errors import UserError
    from workstation.run.options import RunSpec, SpecError

    spec = RunSpec("freeway", agent="human", mode="paused", out=str(tmp_path))
    screen = make_app(PlayLaunch(spec))._first()
    assert isinstance(screen, PlayScreen) and not screen.can_go_back
    assert (screen.game.key, screen.mode, screen.protocol.max_actions) == ("freeway", "paused", 10)
    with pytest.raises(SpecError, match="--mode must be realtime or paused") as e:
        RunSpec("freeway", agent="human", mode="turbo")  # past the CLI's own check: still one line, no screen
    assert e.value.field == "mode" and isinstance(e.value, UserError)
    with pytest.raises(SpecError, match="--prompts") as e:  # a missing pack is refused before any screen
        make_app(PlayLaunch(RunSpec("freeway", agent="human", prompts=str(tmp_path / "nope"), out=str(tmp_path))))
    assert e.value.field == "prompts" and not any(tmp_path.iterdir())


@run_async
async def test_real_time_play_says_it_is_starting_while_the_emulator_warms_up(tmp_path, monkeypatch):
    import screens.views.play as play

    release = threading.Event()
    real_start_run = play.start_run

    def slow_start_run(*args, **kwargs):  # the setup, held until the test has looked
        release.wait(30)
        return real_start_run(*args, **kwargs)

    monkeypatch.setattr(play, "start_run", slow_start_run)
    pacer = ManualPacer()
    screen = PlayScreen("breakout", 0, "realtime", "paper", str(tmp_path), Protocol(frames=6), countdown=1,
                        pacer=pacer)
    app = PlayApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        banner = screen.query_one("#play-banner")
        assert banner.display and "starting Breakout" in str(banner.render())
        release.set()
        await wait_until(pilot, lambda: "get ready" in str(banner.render()), what="the countdown")
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.summary is not None, what="the stop")


@run_async
async def test_space_in_qbert_says_it_queued_a_noop(tmp_path):
    screen = PlayScreen("qbert", 0, "paused", "instant", str(tmp_path), Protocol(frames=30))
    app = PlayApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: screen.awaiting_plan, what="the first plan prompt")
        await pilot.press("space")
        assert screen.queue.names == ["noop"]
        assert any("Qbert has no fire action: space queued noop" in n for n in app.notes), app.notes
        await pilot.press("up")
        assert len([n for n in app.notes if "queued noop" in n]) == 1  # a real action says nothing
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.summary is not None, what="the stop")


def test_the_result_keeps_the_recording_name_on_one_line(tmp_path):
    screen = PlayScreen("breakout", 0, "paused", "instant", str(tmp_path), Protocol(frames=30))
    screen.summary = {"complete": True, "total_reward": 3, "frames": 30, "lives_lost": 0}
    screen.recording = tmp_path / "breakout-human-s0-0123abcd"
    lines = screen._result_text().splitlines()
    assert f"recording in {tmp_path}/" in lines and "breakout-human-s0-0123abcd" in lines
