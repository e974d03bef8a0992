"""A human baseline session: for each game, instructions, practice, a countdown, the run, its result, the next.

This screen conducts; the runs are the play screen's (``screens.views.play.PlayScreen``,
pushed on top with the session's settings) and the record is
``workstation.studies.session.Session``, saved after every step. Stages:

``instructions`` (the game's guide as the model gets it, the keys, the pace;
enter starts) -> ``countdown`` (paused mode; in real time the play screen
counts down itself once the emulator is up) -> ``run`` -> ``result`` (enter:
the next step; a run that stopped early is played again) -> ... ->
``finished``. Escape or q leaves; opening the same session again resumes at
the first run not yet complete.

The countdown reads an injected clock (the play screen's ``Pacer``), so tests
never wait on the wall clock.
"""

from __future__ import annotations

import math
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Digits, Footer, Static

from screens.drivers.play_driver import Pacer, WallPacer
from screens.views.play import PlayScreen
from screens.views.run_layout import leave
from screens.widgets.alive import unless_leaving
from workstation.engine.promptpack import display_title
from workstation.game.games import get_game
from workstation.studies.session import Session, SessionStep

STAGES = ("instructions", "countdown", "run", "result", "finished")

KEYS_REALTIME = ("hold arrows or W A S D to move, space to fire; keys held together make a diagonal. "
                 "The game samples the held keys once per action and never waits.")
KEYS_PAUSED = ("arrows / W A S D / space queue an action, + then a key joins it to the last, n queues a noop, "
               "backspace removes, enter commits your plan; the game waits for each plan.")


class SessionScreen(Screen[Any]):
    """Runs a ``Session`` step by step."""

    AUTO_FOCUS = ""
    DEFAULT_CSS = """
    SessionScreen #sess-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    SessionScreen #sess-body { height: 1fr; padding: 1 2; }
    SessionScreen #sess-count { width: auto; height: 3; margin: 1 2; color: $warning; }
    SessionScreen #sess-hint { height: 2; padding: 0 2; background: $boost; }
    """
    BINDINGS = [
        Binding("enter", "proceed", "Continue"),
        Binding("escape,q", "leave", "Leave (resumable)"),
    ]

    def __init__(self, session: Session, *, clock: Pacer | None = None, countdown: int | None = None,
                 can_go_back: bool = True, tick_s: float = 0.05) -> None:
        super().__init__()
        self.session = session
        self.clock: Pacer = clock or WallPacer()
        self.countdown = session.countdown if countdown is None else countdown
        self.can_go_back = can_go_back
        self.tick_s = tick_s
        self.stage = "instructions"
        self.step: SessionStep | None = None
        self.shown_game: str | None = None  # the game whose instructions were shown in this sitting
        self.last_result: tuple[SessionStep, bool, dict[str, Any]] | None = None
        self.play: PlayScreen | None = None
        self._count_end = 0.0
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="sess-title")
        yield Digits("", id="sess-count")
        with VerticalScroll(id="sess-body"):
            yield Static("", id="sess-text")
        yield Static("", id="sess-hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#sess-count", Digits).display = False
        self._advance()

    # -- stages ---------------------------------------------------------------------
    def _title(self) -> None:
        s = self.session
        where = f"step {self.step.index + 1}/{len(s.steps)}" if self.step else "done"
        resumed = "  (resumed)" if s.resumed else ""
        self.query_one("#sess-title", Static).update(
            f"session {s.settings.participant} · {s.settings.setting} · {s.progress_text()} · {where}{resumed}"
            f" · {s.path}")

    def _show(self, stage: str, body: Text | str, hint: str) -> None:
        self.stage = stage
        self._title()
        self.query_one("#sess-text", Static).update(body)
        self.query_one("#sess-hint", Static).update(hint)

    def _advance(self) -> None:
        """On to the next step: its game's instructions first, if not shown yet in this sitting."""
        self.step = self.session.next_step()
        if self.step is None:
            self._finished()
            return
        if self.step.game != self.shown_game:
            self._instructions(self.step.game)
        else:
            self._ready()

    def _instructions(self, game: str) -> None:
        s = self.session
        g = get_game(game)
        steps = [st for st in s.steps if st.game == game]
        practice = sum(1 for st in steps if st.practice and not st.done)
        scored = [st.seed for st in steps if not st.practice and not st.done]
        body = Text()
        body.append(f"{display_title(g)}\n\n", style="bold underline")
        body.append("What the model is told (the prompt pack's instructions, word for word):\n", style="bold")
        body.append(s.instructions(game) + "\n\n")
        body.append("How you play\n", style="bold")
        body.append(f"{s.pace_text()}.\n")
        body.append(f"Keys: {KEYS_REALTIME if s.settings.mode == 'realtime' else KEYS_PAUSED}\n")
        body.append(f"Allowed actions: {', '.join(g.action_names)}\n\n")
        body.append(f"Coming up: {practice} practice run{'s' if practice != 1 else ''} (recorded, not scored), then "
                    f"{len(scored)} scored run{'s' if len(scored) != 1 else ''} (seeds {', '.join(map(str, scored))}).")
        self.shown_game = game
        self.session.event("instructions shown", game=game)
        self._show("instructions", body, "enter  begin    esc  leave (the session resumes here)")

    def _ready(self) -> None:
        """The countdown (paused mode) or straight to the run (real time counts down on the play screen)."""
        if self.session.settings.mode == "paused" and self.countdown > 0:
            self._count_end = self.clock.now() + self.countdown
            step = self._current()
            what = "practice run" if step.practice else "scored run"
            self._show("countdown", Text(f"{get_game(step.game).ale_name}: {what}, seed {step.seed}\nget ready",
                                         style="bold"), "esc  leave")
            count = self.query_one("#sess-count", Digits)
            count.display = True
            count.update(str(self.countdown))
            self._timer = self.set_interval(self.tick_s, self._tick)
        else:
            self._start_run()

    @unless_leaving
    def _tick(self) -> None:
        left = math.ceil(self._count_end - self.clock.now())
        if left > 0:
            self.query_one("#sess-count", Digits).update(str(left))
            return
        self._stop_timer()
        self._start_run()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.query_one("#sess-count", Digits).display = False

    def _start_run(self) -> None:
        s, step = self.session, self._current()
        st = s.settings
        self.session.begin(step)
        self.play = PlayScreen(step.game, step.seed, st.mode, st.pace, str(s.runs_dir(step)), st.protocol,
                               countdown=self.countdown if st.mode == "realtime" else 0, pacer=self.clock,
                               can_go_back=True, prompts=st.prompts)
        self._show("run", f"playing {step.game} seed {step.seed}", "")
        self.app.push_screen(self.play, callback=self._run_done)

    def _run_done(self, result: dict[str, Any] | None) -> None:
        result = result or {}
        step = self._current()
        summary = result.get("summary") or {}
        complete = self.session.finish(step, result.get("path"), summary)
        self.last_result = (step, complete, summary)
        self.play = None
        self._result(step, complete, summary)

    def _current(self) -> SessionStep:
        """The step under way (the screen only counts down, runs and shows results while there is one)."""
        if self.step is None:
            raise RuntimeError("the session has no step under way")
        return self.step

    def _result(self, step: SessionStep, complete: bool, summary: dict[str, Any]) -> None:
        body = Text()
        kind = "practice run" if step.practice else "scored run"
        budget = self.session.settings.protocol.frames
        if complete:
            body.append(f"{get_game(step.game).ale_name} {kind}, seed {step.seed}: done\n\n", style="bold green")
            body.append(f"score {step.score:g}   frames {step.frames}/{budget}   lives lost {step.lives_lost}   "
                        f"turns {step.turns}\n")
            if step.practice:
                body.append("(practice: recorded, not scored)\n")
            body.append(f"recording {step.recording}\n")
        else:
            why = summary.get("stopped") or "stopped"
            body.append(f"{get_game(step.game).ale_name} {kind}, seed {step.seed}: stopped before the end ({why})\n\n",
                        style="bold yellow")
            body.append(f"the recording is set aside in {step.incomplete[-1] if step.incomplete else '-'}; "
                        "this run is played again.\n")
        nxt = self.session.next_step()
        body.append("\n")
        if nxt is None:
            body.append("that was the last run of the session.")
        else:
            body.append(f"next: {nxt.game} {'practice run' if nxt.practice else 'scored run'}, seed {nxt.seed}"
                        f"{'  (new game: its instructions first)' if nxt.game != step.game else ''}")
        self._show("result", body, "enter  continue    esc  leave (the session resumes here)")

    def _finished(self) -> None:
        s = self.session
        body = Text()
        body.append(f"session complete: {s.progress_text()}\n\n", style="bold green")
        body.append("game            seed  score  frames  lives lost\n", style="bold")
        for st in s.steps:
            if st.done and not st.practice:
                body.append(f"{st.game:<15} {st.seed:>4}  {st.score:>5g}  {st.frames:>6}  {st.lives_lost:>10}\n")
        body.append(f"\nresults: {s.path / 'results.csv'} (setting {s.settings.setting})\n")
        body.append(f"workstation report {s.path} --baseline '{s.settings.setting}'  (or join results.csv to a "
                    "batch's)\n", style="dim")
        body.append(f"workstation compare {s.path}/runs/<run> <a model's run of the same seed>\n", style="dim")
        self.step = None
        self._show("finished", body, "esc or q  leave")

    # -- keys ------------------------------------------------------------------------
    def action_proceed(self) -> None:
        if self.stage == "instructions":
            self._ready()
        elif self.stage == "result":
            self._advance()
        elif self.stage == "finished":
            self.action_leave()

    def action_leave(self) -> None:
        self._stop_timer()
        if self.stage in ("countdown",):
            self.session.event("left during the countdown", step=self.step.index if self.step else None)
        leave(self, self.can_go_back, self.session.complete)
