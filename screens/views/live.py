"""The live view: watch an agent play, pause, change speed, or step through turns and branch.

The engine runs in a thread worker (``EngineDriver.run``); its observers post
messages here. The UI never calls the engine: it sends commands through the
driver's queue, so a slow model call never freezes the screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from screens.drivers.engine_driver import SPEED_ORDER, SPEEDS, EngineDriver
from screens.messages import (
    BarStats,
    EngineAction,
    EngineBranched,
    EngineFinished,
    EngineNotice,
    EnginePlan,
    EngineProgress,
    EnginePrompt,
    EngineReply,
    EngineText,
    EngineTurn,
    EngineWaiting,
    PaletteCommand,
    RecordingClosed,
)
from screens.views.run_layout import blur_or_leave, compose_run, protocol_label, titled
from screens.widgets.alive import unless_leaving
from screens.widgets.confirm import ConfirmScreen
from screens.widgets.frame_view import FrameView
from screens.widgets.plan_view import PlanView, end_note
from screens.widgets.prompt_view import PromptView
from screens.widgets.reply_view import BY_HAND, NOT_SENT, ReplyView
from screens.widgets.stats_bar import StatsBar
from screens.widgets.step_panel import StepPanel
from screens.widgets.timeline import TimelineBar
from workstation.engine.prompt import Prompt, edit_problem
from workstation.engine.turn_engine import TurnEngine
from workstation.run.agents.registry import is_model
from workstation.store.changes import counts, mark
from workstation.store.series import FrameSeries, result_text

# The footer must fit 120 columns in step mode: apply (next to the edited prompt),
# override (next to its box) and one frame (the finest step) show on their buttons only.
STEP_BINDINGS = [  # what step mode adds; outside it these actions are hidden and refused
    Binding("g", "send", "Send"),
    Binding("ctrl+s", "apply_edit", "Apply edit", show=False),
    Binding("c", "current_only", "Frame only", show=False),
    Binding("r", "resend", "Re-send"),
    Binding("o", "override", "Override", show=False),
    Binding("e", "edit_prompt", "Edit prompt", show=False),  # focus the prompt text (before it is sent)
    Binding("a", "one_action", "Action"),
    Binding("full_stop", "one_frame", "Frame", show=False),
    Binding("t", "finish_turn", "Turn"),
    Binding("b", "branch", "Branch"),
]
STEP_ACTIONS = {b.action for b in STEP_BINDINGS}
# What a run that is over (finished or stopped) has no use for: hidden and refused until a branch makes it live.
# Rewind and branch is what is left to do: its panel shows then, in step mode or not.
OVER_ACTIONS = {"pause", "resume", "speed", "step_mode", "stop_run"} | (STEP_ACTIONS - {"branch"})

# The command palette's entries: (name, help text, the action it runs); those of STEP_ACTIONS only in step mode.
PALETTE = [
    ("Pause / resume", "stop or continue the run (space)", "pause"),
    ("Change speed", "paper pace, fast, instant (f)", "speed"),
    ("Toggle step mode", "hold before each prompt is sent and after each reply (s)", "step_mode"),
    ("Stop the run", "end now; the recording is kept, marked incomplete (x)", "stop_run"),
    ("Back", "leave the focused field, else this view (escape)", "back"),
    ("Quit", "end the app; while the run is live it asks first (q)", "quit"),
    ("Send the prompt", "apply any edit and ask the agent (g)", "send"),
    ("Apply the edit", "use the edited prompt text, not sent yet (ctrl+s)", "apply_edit"),
    ("Edit the prompt", "into the prompt text while it holds before sending (e)", "edit_prompt"),
    ("Current frame only", "swap in the prompt with just the current frame (c)", "current_only"),
    ("Re-send the prompt", "discard the reply and ask again (r)", "resend"),
    ("Override the plan", "run the actions typed in the override box (o); before the prompt is sent, the agent is "
     "not asked", "override"),
    ("Execute one action", "3 frames of the plan (a)", "one_action"),
    ("Execute one frame", "one emulator frame (.)", "one_frame"),
    ("Finish the turn", "run the rest of the plan (t)", "finish_turn"),
    ("Rewind and branch", "go back to the chosen turn and continue in a new recording (b)", "branch"),
]


def run_title(engine: TurnEngine) -> str:
    return (f"{engine.game.key} ({engine.game.genre}, {engine.game.skill}) · agent {engine.agent.spec} · "
            f"seed {engine.seed} · {protocol_label(engine.protocol.changed())}")


class LiveScreen(Screen[Any]):
    """One run, live. ``step_mode`` starts holding before each prompt is sent."""

    AUTO_FOCUS = ""  # nothing focused: the screen's keys work at once
    BINDINGS = [
        Binding("space", "pause", "Pause"),
        Binding("space", "resume", "Resume"),  # the footer says what space does now
        Binding("f", "speed", "Speed"),
        Binding("s", "step_mode", "Step"),
        *STEP_BINDINGS,
        Binding("x", "stop_run", "Stop"),
        Binding("escape", "back", "Back"),
        Binding("q", "quit", "Quit", show=False),  # room for x Stop in 120 columns; F1 lists q
    ]

    def __init__(self, engine: TurnEngine, *, step_mode: bool = False, speed: str = "paper",
                 can_go_back: bool = True) -> None:
        super().__init__()
        self.title_text = run_title(engine)
        self.budget = engine.protocol.frames
        self.step_mode = step_mode
        self.speed = speed if speed in SPEEDS else "paper"
        self.paused = False
        self.can_go_back = can_go_back
        self.phase = "ready"
        self.stats = BarStats(budget=self.budget)
        self.summary: dict[str, Any] | None = None
        self.error: str | None = None  # the run failed or stopped: stays on the status line
        self.notice: str | None = None  # a refused command: shown until the next turn ends
        self._user_stopped = False
        self.turn_records: list[dict[str, Any]] = []
        self.thoughts: dict[int, str] = {}
        self.prompt_texts: dict[int, str] = {}
        self.streamed: dict[int, str] = {}  # reply text as it streamed in, per turn
        self.last_turn = -1
        self.plan_by_hand: set[int] = set()  # turns whose plan a person typed before the prompt was sent
        self.holds = 0  # step-mode holds announced so far
        self.prompt_on_show: Prompt | None = None  # the Prompt the prompt view shows (an edit is checked against it)
        self._frame_view = FrameView(id="frame")
        self._app: App[Any] | None = None  # the app, kept at mount: the run ends after this screen is left
        self.driver = EngineDriver(engine, self._from_engine, self._frame_view.post_frame, step_mode, self.speed)
        self.recording_path = self.driver.path
        self.series = FrameSeries.over(self.driver.rewards, self.driver.losses,  # filled by the driver, in place
                                       self.driver.resets)
        self._worker: Worker[None] | None = None

    # -- layout ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield from compose_run(self.title_text, self._frame_view, titled(StepPanel(id="steps"), "step mode"))

    def on_mount(self) -> None:
        self._app = self.app
        self._show_step_panel()
        self._status()
        self._worker = self.run_engine()

    def on_unmount(self) -> None:
        if self._worker is not None:
            self.driver.cancel_calls("the viewer was closed before the end of the run")  # a call in flight ends now
            self._worker.cancel()

    def _from_engine(self, message: Message) -> None:
        """The driver's messages (from its thread): to this screen; the run's end to the app too, since a run
        left on purpose ends after this screen is gone, and its folder may have been renamed as it closed."""
        self.post_message(message)
        if isinstance(message, EngineFinished) and self._app is not None:
            self._app.post_message(RecordingClosed(message.path))

    @work(thread=True, exclusive=True, group="engine", exit_on_error=False)
    def run_engine(self) -> None:
        worker = get_current_worker()
        self.driver.run(lambda: worker.is_cancelled)

    @unless_leaving
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "engine" and event.state is WorkerState.ERROR:
            err = event.worker.error
            self._fail(f"the engine stopped: {type(err).__name__}: {err}", str(err))

    def _fail(self, text: str, cause: str | None = None) -> None:
        """Show a failure once: the worker's error and the run's end may both report the same cause."""
        repeated = bool(cause and self.error and cause in self.error)
        self.error = text if not repeated else self.error
        if not repeated:
            self.notify(text, title="error", severity="error", timeout=10)
        self._status()

    # -- engine messages ---------------------------------------------------
    @unless_leaving
    def on_engine_prompt(self, m: EnginePrompt) -> None:
        self.prompt_on_show = m.prompt
        text = m.prompt.render_text()
        self.prompt_texts[m.turn] = text
        self.query_one(PromptView).show_prompt(m.turn, text, m.variant, m.images)
        self.plan_by_hand.discard(m.turn)  # a re-sent prompt: asked again
        if self.step_mode:  # the driver holds before sending it
            self.query_one(ReplyView).begin(idle=NOT_SENT)
            self.query_one(PlanView).clear_plan("no plan yet: the prompt is not sent")
        else:
            self.query_one(ReplyView).begin()
            self.query_one(PlanView).clear_plan("waiting for the reply")
        if m.turn != self.last_turn:
            self.last_turn = m.turn
            self.query_one(StepPanel).set_turns(list(range(m.turn + 1)))

    @unless_leaving
    def on_engine_text(self, m: EngineText) -> None:
        self.streamed[m.turn] = self.streamed.get(m.turn, "") + m.text
        self.query_one(ReplyView).append(m.text)

    @unless_leaving
    def on_engine_reply(self, m: EngineReply) -> None:
        self.query_one(ReplyView).show_reply(m.reply.text, m.reply.error)

    @unless_leaving
    def on_engine_plan(self, m: EnginePlan) -> None:
        self.thoughts[m.turn] = m.parse.thought
        if m.by_hand:  # typed before the prompt was sent: no reply was asked for
            self.plan_by_hand.add(m.turn)
            self.query_one(ReplyView).begin(idle=BY_HAND)
        else:
            self.query_one(ReplyView).show_parse(m.parse)
        self.query_one(PlanView).show_plan(m.plan, overridden=m.overridden, valid=m.parse.valid, errors=m.parse.errors)

    @unless_leaving
    def on_engine_action(self, m: EngineAction) -> None:
        self.query_one(PlanView).mark(m.index + 1, m.step.action)

    @unless_leaving
    def on_engine_turn(self, m: EngineTurn) -> None:
        self.turn_records.append(m.record)
        if m.record.get("game_over") or m.record.get("dropped"):
            self.query_one(PlanView).end_early(len(m.record.get("dropped") or []), end_note(m.record))
        if self.notice:
            self.notice = None
        self._status()  # the changed-by-hand mark follows each turn written

    @unless_leaving
    def on_engine_progress(self, m: EngineProgress) -> None:
        self.stats = m.stats
        self.query_one(StatsBar).show_stats(m.stats)
        self.query_one(TimelineBar).show_series(self.series, m.stats.frame)
        if m.stats.phase != self.phase:
            self.phase = m.stats.phase
            if self.phase == "asking":
                self.query_one(ReplyView).set_note("waiting for the agent's reply…")
            self._status()

    @unless_leaving
    def on_engine_waiting(self, m: EngineWaiting) -> None:
        self.holds += 1
        self.phase = m.phase
        self.query_one(StepPanel).set_phase(m.phase, m.turn, by_hand=m.turn in self.plan_by_hand)
        self.query_one(PromptView).set_editable(self.step_mode and m.phase == "prompt")
        self._status()

    @unless_leaving
    def on_engine_finished(self, m: EngineFinished) -> None:
        s = self.summary = m.summary
        self.phase = "finished"
        self.recording_path = m.path or self.recording_path
        self.query_one(StepPanel).set_finished(int(s.get("turns") or 0), bool(s.get("stopped")))
        self.query_one(PromptView).set_editable(False)
        self._show_step_panel()  # and the footer: only what a run that is over can still do
        if s.get("stopped") and not s.get("complete") and not self._user_stopped:
            self._fail(f"run stopped: {s['stopped']}", s["stopped"].split(": ", 1)[-1])
        elif s.get("stopped"):
            self.notify(f"recording kept, marked incomplete: {m.path}", title="run stopped")
            self._status()
        else:
            self.notify(f"{result_text(s, self.budget)}; recording {m.path}", title="run finished")
            self._status()

    @unless_leaving
    def on_engine_branched(self, m: EngineBranched) -> None:
        self.summary, self.error, self.notice, self.phase = None, None, None, "ready"
        self._user_stopped = False
        self.recording_path = m.path
        self.turn_records = [r for r in self.turn_records if r["turn"] < m.turn]
        self.query_one(ReplyView).begin(f"rewound to the start of turn {m.turn}; continuing in a branch")
        self.query_one(PlanView).clear_plan()
        self.query_one(StepPanel).set_live(True)
        self._show_step_panel()  # live again: its keys are back
        self.notify(f"branch of turn {m.turn} (frame {m.frame}): {m.path}", title="rewound")
        self._status()

    @unless_leaving
    def on_engine_notice(self, m: EngineNotice) -> None:
        self.notify(m.text, severity=m.severity)
        self.notice = m.text
        self._status()

    # -- status ------------------------------------------------------------
    def _status(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        if self.summary is not None:
            t.append(" FINISHED " if self.summary.get("complete") else " STOPPED ", style="bold reverse")
        elif self.paused:
            t.append(" PAUSED ", style="bold black on yellow")
        elif self.step_mode:
            t.append(" STEP ", style="bold black on cyan")
        else:
            t.append(" RUNNING ", style="bold black on green")
        pace = {"paper": "paper pace 0.1 s/action", "fast": "fast 0.02 s/action", "instant": "instant"}[self.speed]
        t.append(f"  {pace}  phase {self.phase}  ")
        hand = self.driver.engine.changes
        if hand:
            t.append(f"changed by hand ({mark(counts(hand))})", style="bold yellow")
            t.append("  ")
        t.append("recording ", style="dim")
        t.append(str(self.recording_path))
        if self.error or self.notice:
            t.append("  ⚠ " + (self.error or self.notice or ""), style="bold red" if self.error else "yellow")
        self.query_one("#status", Static).update(t)

    @property
    def over(self) -> bool:
        """The run has ended (finished or stopped) and no branch goes on from it."""
        return self.summary is not None

    def _show_step_panel(self) -> None:
        panel = self.query_one(StepPanel)
        panel.display = self.step_mode or self.over  # over: the panel to pick a turn to branch from
        panel.border_title = "rewind and branch" if self.over else "step mode"
        if not self.step_mode:
            self.query_one(PromptView).set_editable(False)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.over:
            return action not in OVER_ACTIONS
        if action in STEP_ACTIONS and not self.step_mode:
            return False
        if action in ("pause", "resume"):
            return self.paused == (action == "resume")
        return True

    # -- actions -------------------------------------------------------------
    def action_pause(self) -> None:
        self.paused = not self.paused
        self.driver.send("pause", self.paused)
        self._status()
        self.refresh_bindings()

    def action_resume(self) -> None:
        self.action_pause()

    def action_speed(self) -> None:
        self.speed = SPEED_ORDER[(SPEED_ORDER.index(self.speed) + 1) % len(SPEED_ORDER)]
        self.driver.send("speed", self.speed)
        self._status()

    def action_step_mode(self) -> None:
        self.step_mode = not self.step_mode
        self.driver.send("step_mode", self.step_mode)
        self._show_step_panel()
        self._status()

    def _edited_text(self) -> str | None:
        """The editor's text when it differs from the prompt on show."""
        view = self.query_one(PromptView)
        text = view.editor.text
        return text if text != view.text else None

    def _refused_edit(self, text: str) -> bool:
        """Refuse an edit that lost the prompt's roles, saying why; the editor keeps the text to fix."""
        why = edit_problem(text, self.prompt_on_show) if self.prompt_on_show is not None else None
        if why is None:
            return False
        self.notice = f"not applied: {why}"
        self.notify(why, title="edit not applied", severity="error", timeout=10)
        self._status()
        return True

    def action_apply_edit(self) -> None:
        text = self._edited_text()
        if text is None:
            self.notify("the prompt text is unchanged", severity="information")
            return
        if self._refused_edit(text):
            return
        self.driver.send("edit", text)

    def action_send(self) -> None:
        text = self._edited_text()
        if text is not None:
            if self._refused_edit(text):
                return
            self.driver.send("edit", text)
        self.query_one(PromptView).set_editable(False)
        self.driver.send("send")

    def action_current_only(self) -> None:
        self.driver.send("current_only")

    def action_resend(self) -> None:
        self.driver.send("resend")

    def action_override(self) -> None:
        box = self.query_one("#override-input", Input)
        names = [n for n in re.split(r"[,\s\[\]]+", box.value) if n]
        if not names:
            box.focus()
            return
        self.driver.send("override", names)
        box.value = ""

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "override-input":  # enter commits the typed plan
            self.action_override()

    def action_edit_prompt(self) -> None:
        """``e``: into the prompt text, while it can be edited (holding before it is sent)."""
        view = self.query_one(PromptView)
        if view.editor.read_only:
            self.notify("the prompt can be edited only while the run holds before sending it", severity="warning")
            return
        view.editor.focus()

    def action_one_action(self) -> None:
        self.driver.send("action")

    def action_one_frame(self) -> None:
        self.driver.send("frame")

    def action_finish_turn(self) -> None:
        self.driver.send("turn")

    def action_branch(self, turn: int | None = None) -> None:
        """Rewind to the start of ``turn`` (the panel's choice) and go on in a branch. From a run that is over the
        branch holds before the turn's prompt, in step mode, for the change it was made for (`s` runs it out)."""
        if self.over and not self.step_mode:
            self.action_step_mode()
        self.driver.send("branch", self.query_one(StepPanel).branch_turn if turn is None else turn)

    def _ask_branch(self) -> None:
        """The Rewind+branch button asks first: a stray Enter on it must not end the run."""
        turn = self.query_one(StepPanel).branch_turn
        running = self.summary is None
        question = (f"Rewind to the start of turn {turn} and continue in a new recording (a branch)?\n"
                    + ("The run under way stops here; its recording is kept, marked incomplete."
                       if running else "The finished recording is kept as it is."))

        def answered(yes: bool | None) -> None:
            if yes:
                self.action_branch(turn)

        self.app.push_screen(ConfirmScreen(question, yes="Rewind and branch"), answered)

    def action_stop_run(self) -> None:
        self._user_stopped = True
        self.driver.send("stop")

    def action_back(self) -> None:
        if self.focused is not None:  # first out of the field (prompt text, override box)
            box = self.query_one("#override-input", Input)
            if self.focused is box:  # an abandoned override: nothing is sent, the run stays plain
                box.value = ""
            self.set_focus(None)
            return
        self._leave_asking(lambda: blur_or_leave(self, self.can_go_back),
                           "Leave" if self.can_go_back else "Quit")

    def action_quit(self) -> None:
        self._leave_asking(self.app.exit, "Quit")

    def _worth_asking(self) -> bool:
        """A live run one would lose by a stray key: stepped, costing model calls, or changed by hand."""
        if self.summary is not None:  # finished or stopped: the recording is whole as it is
            return False
        engine = self.driver.engine
        return self.step_mode or bool(engine.changes) or is_model(engine.agent.spec)

    def _leave_asking(self, leave: Callable[[], object], verb: str) -> None:
        """``q`` / ``escape`` while the run is live ask first (No is focused); a finished run leaves at once."""
        if not self._worth_asking():
            leave()
            return
        hand = " with your changes by hand" if self.driver.engine.changes else ""
        question = (f"The run is still going. {verb} now?\nIt stops here: its recording is kept{hand}, "
                    "marked INCOMPLETE.")

        def answered(yes: bool | None) -> None:
            if yes:
                leave()

        self.app.push_screen(ConfirmScreen(question, yes=verb), answered)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        action = {
            "apply-edit": self.action_apply_edit, "send": self.action_send, "current-only": self.action_current_only,
            "resend": self.action_resend, "override": self.action_override, "one-action": self.action_one_action,
            "one-frame": self.action_one_frame, "finish-turn": self.action_finish_turn, "branch": self._ask_branch,
        }.get(event.button.id or "")
        if action is not None:
            event.stop()
            action()

    def palette_commands(self) -> list[PaletteCommand]:
        """Commands this screen offers in the command palette (step mode's own only in step mode; once the run is
        over, only what is left to do)."""
        return [(name, what, getattr(self, f"action_{action}")) for name, what, action in PALETTE
                if ((action not in OVER_ACTIONS) if self.over else (self.step_mode or action not in STEP_ACTIONS))]
