"""Human play: a person is the agent, and the run is recorded like a model's.

Real time: one action per slot, one slot every ``repeat`` frames of the chosen
clock (paper pace: 3/30 s, so 900 frames take 30 s of wall clock; native pace:
3/60 s, the Atari's own 60 Hz). At each slot the held keys (``screens.input.keys``)
are mapped to the game's nearest allowed action, which becomes a one-action
turn (``max_actions=1``). A late slot is not made up: the schedule restarts
from now and the recording keeps what was applied.

Paused: the model's own protocol. The game waits while the person queues
1..max_actions actions and commits them with enter; they run at the chosen
pace, then the game waits again.

The engine runs in a thread worker that waits for the slots on a ``Pacer``
(wall clock in play, a hand-moved clock in tests) and reports only through
``post_message``. Escape stops the run (the recording stays, marked
incomplete) and shows the result; escape again leaves the screen, which is
dismissed with ``{"summary": dict | None, "path": Path | None}`` (or ends the
app when it was made with ``can_go_back=False``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Key
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Digits, Footer, Static
from textual.worker import Worker, WorkerState, get_current_worker

from screens.drivers.play_driver import (
    PLAY_PACES,
    QUIT_REASON,
    Pacer,
    PlayDriver,
    PlaySettingsError,
    WallPacer,
    action_seconds,
)
from screens.input.keys import HeldKeys, PlanQueue, action_for, commit_refusal, take_play_key
from screens.input.play_window import PlayWindow, window_unavailable
from screens.messages import BarStats, EngineFinished, EngineNotice, EngineProgress
from screens.views.run_layout import leave
from screens.widgets.alive import unless_leaving
from screens.widgets.frame_view import FrameView, frame_beside
from workstation.engine.turn_engine import Event, FrameStepped, TurnEngine
from workstation.game.games import FPS_NATIVE, FPS_PAPER, MODES, get_game
from workstation.game.protocol import Protocol
from workstation.run.agents.human_agent import HumanAgent
from workstation.run.options import RunSpec
from workstation.run.start import start_run
from workstation.store.series import result_text


class PlayScreen(Screen[Any]):
    """Play a game with the keyboard; the run is recorded with agent ``human``."""

    CSS = """
    PlayScreen { layout: vertical; }
    #play-body { height: 1fr; }
    #play-frame { width: 1fr; }
    #play-side { width: 44; padding: 0 1; background: $panel; }
    #play-title { text-style: bold; color: $accent; margin-bottom: 1; }
    #play-count { width: auto; height: 3; margin: 1 0; color: $warning; }
    #play-banner { margin-bottom: 1; }
    #play-stats { margin-bottom: 1; }
    #play-keys { margin-bottom: 1; }
    #play-queue { margin-bottom: 1; }
    #play-help { color: $text-muted; }
    """

    class Countdown(Message):
        """Seconds left before real-time play starts (0: go)."""

        def __init__(self, left: int) -> None:
            super().__init__()
            self.left = left

    class Applied(Message):
        """The action being applied now, with the buttons that chose it (real time)."""

        def __init__(self, action: str, buttons: tuple[str, ...] | None, index: int) -> None:
            super().__init__()
            self.action, self.buttons, self.index = action, buttons, index

    class Started(Message):
        """The emulator is up and the first frame is on screen."""

    class AwaitingPlan(Message):
        """Paused mode: the game waits for the person's plan for ``turn``."""

        def __init__(self, turn: int) -> None:
            super().__init__()
            self.turn = turn

    def __init__(self, game: str, seed: int, mode: str = "realtime", pace: str = "paper",
                 out: str = "recordings", protocol: Protocol | None = None, *, countdown: int = 3,
                 window: bool = False, pacer: Pacer | None = None, can_go_back: bool = True,
                 prompts: str | None = None) -> None:
        super().__init__()
        if mode not in MODES:
            raise PlaySettingsError(f"unknown mode {mode!r}: use realtime or paused", "mode")
        self.game = get_game(game)
        self.prompts, self.seed, self.mode, self.pace, self.out = prompts, seed, mode, pace, out
        base = protocol or Protocol()
        self.protocol = base if mode == "paused" else replace(base, max_actions=1)
        self.period = action_seconds(pace, self.protocol.repeat)
        self.countdown = countdown
        self.want_window = window
        self.can_go_back = can_go_back  # False: leaving ends the app (`workstation play`)
        self.pacer: Pacer = pacer or WallPacer()
        self.driver = PlayDriver(self.game, mode, self.period, self.pacer, buttons=self._buttons,
                                 on_applied=lambda action, buttons, index: self.post_message(
                                     self.Applied(action, buttons, index)),
                                 on_awaiting=lambda turn: self.post_message(self.AwaitingPlan(turn)),
                                 on_progress=lambda eng: self.post_message(EngineProgress(self._stats(eng))))
        # UI-thread state
        self.stats = BarStats(budget=self.protocol.frames)
        self.applied = "-"
        self.applied_buttons: tuple[str, ...] = ()
        self.queue = PlanQueue(self.game, self.protocol.max_actions)
        self.awaiting_plan = False
        self.summary: dict[str, Any] | None = None
        self.recording: Path | None = None
        self.error: str | None = None
        self._keys_text: str | None = None  # what the keys panel shows
        # shared with the worker
        self._held = HeldKeys()
        self._plans: queue.Queue[list[str]] = queue.Queue()
        self._quit = threading.Event()
        self.done = threading.Event()  # set when the worker has closed the recording
        # worker-only
        self._engine: TurnEngine | None = None
        self._frame_view: FrameView | None = None
        self._window: PlayWindow | None = None
        self._cancelled: Callable[[], bool] = self._quit.is_set

    @classmethod
    def from_spec(cls, spec: RunSpec, **kw: Any) -> PlayScreen:
        """The screen for a human run spec (``mode`` and ``pace`` default to real time at paper pace)."""
        return cls(spec.game, spec.seed, spec.mode or "realtime", spec.pace or "paper", spec.out, spec.protocol,
                   prompts=spec.prompts, **kw)

    # -- layout ------------------------------------------------------------
    # Game keys are read raw in on_key (held-key model); these only put the screen's
    # own keys in the footer, like every other screen (and make them clickable).
    BINDINGS = [Binding("escape", "stop_or_leave", "Stop / leave"), Binding("f1", "app.help", "Help")]

    def compose(self) -> ComposeResult:
        yield Footer()
        yield frame_beside("play", Static(self._title(), id="play-title"), Digits("", id="play-count"),
                           *(Static("", id=f"play-{name}") for name in ("banner", "stats", "keys", "queue")),
                           Static(self._help(), id="play-help"))

    def _title(self) -> str:
        fps = PLAY_PACES[self.pace]
        pace = f"{self.pace} pace ({fps} fps, {self.period:g} s per action)" if fps else "instant pace (no waiting)"
        mode = "real time" if self.mode == "realtime" else f"paused, 1..{self.protocol.max_actions} actions a turn"
        return f"{self.game.ale_name}  seed {self.seed}\n{mode}\n{pace}"

    def _help(self) -> str:
        allowed = f"allowed: {', '.join(self.game.action_names)}"
        if self.want_window:  # the window's own keys, and a gamepad there
            allowed += "\nin the window: a gamepad too\nm  mute the window's sound"
        if self.mode == "realtime":
            return (f"arrows / WASD  move    space  fire\nhold keys together for diagonals\n{allowed}\n"
                    "esc  quit (the recording stays)")
        return ("arrows / WASD / space  queue an action\n+ then a key  join it to the last\n"
                "  (up + left queues upleft)\nn  noop    backspace  remove\nenter  commit the plan\n"
                f"{allowed}\nesc  quit (the recording stays)")

    def on_mount(self) -> None:
        self._frame_view = self.query_one("#play-frame", FrameView)
        self.query_one("#play-count", Digits).display = False
        self._banner(f"starting {self.game.ale_name}: warming up the emulator...")  # setup takes a few seconds
        self._show_stats()
        self._show_keys()
        self._show_queue()
        if self.mode == "realtime":
            self.set_interval(0.05, self._show_keys)
        self._play()

    def on_unmount(self) -> None:
        self._quit.set()
        self.workers.cancel_group(self, "play")
        self.done.wait(2.0)  # let the worker close the recording before the app goes

    # -- the worker ----------------------------------------------------------
    @work(thread=True, exclusive=True, group="play", exit_on_error=False)
    def _play(self) -> None:
        worker = get_current_worker()

        def cancelled() -> bool:
            return worker.is_cancelled or self._quit.is_set()

        engine = None
        try:
            self._open_window()
            spec = RunSpec(self.game.key, agent="human", seed=self.seed, protocol=self.protocol, out=self.out,
                           prompts=self.prompts, mode=self.mode, pace=self.pace)
            engine = self._engine = start_run(spec, observers=[self._observe],
                                              agent=HumanAgent(self._plan_source, mode=self.mode, pace=self.pace,
                                                                   window=self._window is not None))
            if self._window is not None and self._window.sound:
                engine.clock.enable_sound()  # the window plays the game's sound
            engine.start()
            self._send_frame(engine, 0)
            self.post_message(EngineProgress(self._stats(engine)))
            self.post_message(self.Started())
            if self.mode == "realtime":
                self.driver.count_down(self.countdown, cancelled, lambda left: self.post_message(self.Countdown(left)))
            self._cancelled = cancelled
            self.driver.run(engine, cancelled)  # screens/drivers/play_driver.py: the one loop, paced
        finally:
            try:
                if engine is not None:
                    if engine.summary is None:
                        engine.stop(QUIT_REASON)
                    engine.close()
                    summary = engine.summary.to_json() if engine.summary is not None else {}
                    self.post_message(EngineFinished(engine.turn, summary, engine.recording_path))
                if self._window is not None:
                    self._window.close()
            finally:
                self.done.set()

    def _wait_plan(self, cancelled: Callable[[], bool]) -> list[str] | None:
        while not cancelled():
            try:
                return self._plans.get(timeout=0.05)
            except queue.Empty:
                pass
        return None

    def _plan_source(self, ctx: Any) -> list[str] | None:
        """The human agent's answer; in paused mode the wait counts as its decision time."""
        if self.mode == "paused":
            return self._wait_plan(self._cancelled)  # None (quit) stops the run
        return self.driver.take_plan()

    def _buttons(self, t: float) -> tuple[str, ...]:
        held = self._held.held(t)
        if self._window is not None:
            held = tuple(dict.fromkeys(held + self._window.held()))
        return held

    def _observe(self, ev: Event) -> None:
        if isinstance(ev, FrameStepped) and self._engine is not None:
            self._send_frame(self._engine, ev.frame)

    def _send_frame(self, engine: TurnEngine, index: int) -> None:
        rgb = engine.clock.rgb
        if rgb is None:
            return
        if self._frame_view is not None:
            self._frame_view.post_frame(rgb, index)
        if self._window is not None:
            self._window.send_frame(rgb, engine.clock.audio())
            for text, severity in self._window.notices():  # e.g. no audio device, said once
                self.post_message(EngineNotice(text, severity))

    def _stats(self, engine: TurnEngine) -> BarStats:
        c = engine.clock
        return BarStats(frame=c.frame, budget=self.protocol.frames, score=c.score, lives=c.lives,
                        lives_lost=c.lives_lost, turn=engine.turn, phase=engine.phase.value)

    def _open_window(self) -> None:
        if not self.want_window:
            return
        reason = window_unavailable()
        if reason is None:
            try:
                self._window = PlayWindow(f"{self.game.ale_name} (workstation play)", self.game.height,
                                          fps=PLAY_PACES[self.pace])  # the sound's pace (none at instant)
                return
            except (OSError, ValueError) as e:
                reason = f"no play window: it could not start ({e}); playing in the terminal"
        self.post_message(EngineNotice(reason, "warning"))

    # -- messages from the worker ------------------------------------------------
    @unless_leaving
    def on_engine_progress(self, message: EngineProgress) -> None:
        self.stats = message.stats
        self._show_stats()

    @unless_leaving
    def on_play_screen_applied(self, message: Applied) -> None:
        self.applied = message.action
        if message.buttons is not None:
            self.applied_buttons = message.buttons
        self._show_keys()

    @unless_leaving
    def on_play_screen_countdown(self, message: Countdown) -> None:
        count = self.query_one("#play-count", Digits)
        count.display = message.left > 0
        count.update(str(message.left) if message.left > 0 else "")
        self._banner("get ready" if message.left > 0 else "")

    @unless_leaving
    def on_play_screen_started(self, message: Started) -> None:
        if self.mode == "paused" and not self.awaiting_plan:
            self._banner("")

    @unless_leaving
    def on_play_screen_awaiting_plan(self, message: AwaitingPlan) -> None:
        self.awaiting_plan = True
        self._banner(f"turn {message.turn}: your move (the game waits)")
        self._show_queue()

    @unless_leaving
    def on_engine_notice(self, message: EngineNotice) -> None:
        self.notify(message.text, severity=message.severity)

    @unless_leaving
    def on_engine_finished(self, message: EngineFinished) -> None:
        self.summary = message.summary
        self.recording = message.path
        self.awaiting_plan = False
        self.query_one("#play-count", Digits).display = False
        self._banner(self._result_text())
        self._show_keys()
        self._show_queue()

    @unless_leaving
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "play" and event.state is WorkerState.ERROR:
            error = event.worker.error
            self.error = f"{type(error).__name__}: {error}" if error else "the game stopped"
            self.notify(self.error, severity="error", timeout=10)
            self._banner(f"[b]could not play[/b]\n{self.error}\nesc  leave")
            self._show_keys()
            self._show_queue()

    def _result_text(self) -> str:
        s = self.summary or {}
        state = "complete" if s.get("complete") else f"incomplete ({s.get('stopped') or 'stopped'})"
        path = Path(self.recording) if self.recording else None
        where = f"recording in {path.parent}/\n{path.name}" if path else "no recording"
        ended = s.get("games_ended") or 0
        games = f", {ended} game{'s' if ended != 1 else ''} over" if ended else ""
        return (f"[b]result: {state}[/b]\n{result_text(s, self.protocol.frames)}{games}\n"
                f"{where}\nesc  leave")

    @property
    def over(self) -> bool:
        """The game has ended (finished, stopped, or it could not go on)."""
        return self.summary is not None or self.error is not None

    # -- keys -----------------------------------------------------------------------
    def on_key(self, event: Key) -> None:
        key = event.key
        finished = self.over
        taken = take_play_key(key, event.character, finished, self.mode == "realtime", stop=event.stop,
                              leave=self.action_stop_or_leave, hold=self._hold,
                              plan=lambda what, button: self._edit_plan(what, button, key))
        if not taken and key == "m" and self._window is not None and not finished:  # mute the window's sound
            event.stop()
            self._window.toggle_mute()

    def _hold(self, button: str) -> None:
        self._held.press(button, self.pacer.now())
        self._show_keys()

    def _edit_plan(self, what: str, button: str, key: str) -> None:
        if what == "commit":
            self._commit()
        elif not self.queue.edit(what, button):
            self.notify(f"the plan holds at most {self.queue.max_actions} actions: enter commits it, "
                        "backspace removes the last", severity="warning")
        elif what == "move" and not self.queue.combining and self.queue.names and self.queue.names[-1] == "noop":
            self.notify(f"{self.game.ale_name} has no {button} action: {key} queued noop "
                        f"(allowed: {', '.join(self.game.action_names)})", severity="warning")
        self._show_queue()

    def action_stop_or_leave(self) -> None:
        """Stop a running game (the recording stays, marked incomplete); leave a finished one."""
        if self.summary is not None or self.error is not None:
            self._leave()
        else:
            self._quit.set()
            self._banner("stopping...")

    def _leave(self) -> None:
        result = {"summary": self.summary, "path": self.recording}
        leave(self, self.can_go_back, result)

    def _commit(self) -> None:
        why = commit_refusal(self.awaiting_plan, self.queue, "the last plan is still running; commit when the game waits")
        if why is not None:
            self.notify(why, severity="warning")
            return
        self.awaiting_plan = False
        self._plans.put(self.queue.take())
        self._banner("running your plan...")

    # -- display --------------------------------------------------------------------
    def _banner(self, text: str) -> None:
        banner = self.query_one("#play-banner", Static)
        banner.update(text)
        banner.display = bool(text)

    def _show_stats(self) -> None:
        s = self.stats
        self.query_one("#play-stats", Static).update(
            f"score  {s.score:g}\nlives  {s.lives}   lost {s.lives_lost}\n"
            f"frames {s.frame}/{s.budget}   turn {s.turn}\n"
            f"paper clock  {s.frame / FPS_PAPER:5.2f} s / {s.budget / FPS_PAPER:g} s\n"
            f"native clock {s.frame / FPS_NATIVE:5.2f} s / {s.budget / FPS_NATIVE:g} s"
        )

    @unless_leaving
    def _show_keys(self) -> None:
        """Update the keys panel; called 20 times a second in real time, it redraws only on a change."""
        if self.over:  # nothing is applied any more: say what the last action was
            text = f"the run is over\nlast action [b]{self.applied}[/b]"
        elif self.mode == "realtime":
            held = self._held.held(self.pacer.now())
            text = (f"held now {'+'.join(held) or '-'} -> {action_for(held, self.game)}\n"
                    f"sampled  {'+'.join(self.applied_buttons) or '-'}\napplying [b]{self.applied}[/b]")
        else:
            text = f"applying [b]{self.applied}[/b]"
        if text != self._keys_text:
            self._keys_text = text
            self.query_one("#play-keys", Static).update(text)

    def _show_queue(self) -> None:
        widget = self.query_one("#play-queue", Static)
        if self.mode == "realtime":
            widget.display = False
            return
        join = "  [+ joins the next key]" if self.queue.combining else ""
        state = ("the run is over: esc leaves" if self.over else "enter commits" if self.awaiting_plan
                 else "waiting for the game")
        widget.update(f"{self.queue.listing('plan')}{join}\n{state}")
