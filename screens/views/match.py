"""A person against a model (`workstation play --game boxing --vs SPEC`): the live view of a match.

The person plays one side with the play screen's keys (paused: queue and commit a
plan; real time: hold keys while both sides play), the model the other. The side
panel shows both scores, the plans of the turn (the model's is shown once both
are in, so neither side sees the other's before committing) and what each side
is playing now. Escape stops the match (the recording stays, marked incomplete);
escape again leaves.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Key
from textual.screen import Screen
from textual.widgets import Footer, Static

from screens.drivers.match_driver import MatchDriver, MatchUpdate
from screens.drivers.play_driver import WallPacer, action_seconds
from screens.input.keys import HeldKeys, PlanQueue, action_for, commit_refusal, take_play_key
from screens.views.run_layout import leave
from screens.widgets.alive import unless_leaving
from screens.widgets.frame_view import FrameView, frame_beside
from workstation.game.twoplayer import get_two_player_game
from workstation.game.vocabulary import normal_name
from workstation.run.match_start import MatchSpec


class MatchScreen(Screen[Any]):
    CSS = """
    MatchScreen { layout: vertical; }
    #match-body { height: 1fr; }
    #match-frame { width: 1fr; }
    #match-side { width: 50; padding: 0 1; background: $panel; }
    #match-title { text-style: bold; color: $accent; margin-bottom: 1; }
    #match-banner, #match-scores, #match-plans, #match-queue { margin-bottom: 1; }
    #match-help { color: $text-muted; }
    """
    BINDINGS: ClassVar = [Binding("escape", "stop_or_leave", "Stop / leave"), Binding("f1", "app.help", "Help")]

    def __init__(self, spec: MatchSpec, person: int, mode: str = "paused", pace: str = "paper",
                 pacer: Any = None, can_go_back: bool = True) -> None:
        super().__init__()
        self.spec, self.person, self.mode, self.pace = spec, person, mode, pace
        self.tp = get_two_player_game(spec.game)
        self.model = spec.specs[2 - person]
        self.pacer = pacer or WallPacer()
        self.period = action_seconds(pace, spec.protocol.repeat)
        self.can_go_back = can_go_back
        self.queue = PlanQueue(self.tp.game, spec.protocol.max_actions)
        self.awaiting_plan = False
        self.scores = [0.0, 0.0]
        self.plans: list[list[str]] = [[], []]
        self.now_playing = ["-", "-"]
        self.summary: dict[str, Any] | None = None
        self.recording: Path | None = None
        self.error: str | None = None
        self._held = HeldKeys()
        self.done = threading.Event()
        self.driver: MatchDriver | None = None

    # -- layout ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Footer()
        yield frame_beside("match", Static(self._title(), id="match-title"),
                           Static("starting the match...", id="match-banner"),
                           *(Static("", id=f"match-{name}") for name in ("scores", "plans", "queue")),
                           Static(self._help(), id="match-help"))

    def _who(self, side: int) -> str:
        return "you" if side == self.person else self.model

    def _title(self) -> str:
        mode = "paused: both plans, then played" if self.mode == "paused" else "real time: steer while plans play"
        return (f"{self.tp.game.ale_name}  seed {self.spec.seed}\nyou are side {self.person} against {self.model}\n"
                f"{mode}")

    def _help(self) -> str:
        allowed = f"allowed: {', '.join(self.tp.game.action_names)}"
        if self.mode == "realtime":
            return f"arrows / WASD  move    space  fire\n{allowed}\nesc  quit (the recording stays)"
        return ("arrows / WASD / space  queue an action\n+ then a key  join it to the last\nn  noop    "
                f"backspace  remove\nenter  commit the plan\n{allowed}\nesc  quit (the recording stays)")

    def on_mount(self) -> None:
        view = self.query_one("#match-frame", FrameView)
        self.driver = MatchDriver(self.spec, self.person, self.mode, self.post_message, view.post_frame,
                                  self.pacer, self.period, held=self._held_action)
        self._show()
        self._play()

    def on_unmount(self) -> None:
        if self.driver is not None:
            self._stop_driver()
        self.done.wait(2.0)

    # -- the worker ----------------------------------------------------------
    @work(thread=True, exclusive=True, group="match", exit_on_error=False)
    def _play(self) -> None:
        assert self.driver is not None
        try:
            self.driver.run()
        finally:
            self.done.set()

    def _held_action(self, t: float) -> str:
        held = self._held.held(t)
        name = action_for(held, self.tp.game)
        if name == "noop" and held:  # a game's own words for the keys (Pong: up moves the paddle with "right")
            found = self.tp.game.vocabulary.get(normal_name("".join(held)))
            name = name if found is None else self.tp.game.action_name(found)
        return name

    def _stop_driver(self) -> None:
        assert self.driver is not None
        self.driver.quit.set()
        if self.driver.engine is not None:
            self.driver.engine.cancel.cancel("play was cancelled")  # a model call under way ends too

    # -- messages ------------------------------------------------------------
    @unless_leaving
    def on_match_update(self, m: MatchUpdate) -> None:
        self.handle_update(m)  # Textual calls every class's on_* handler: subclasses override handle_update

    def handle_update(self, m: MatchUpdate) -> None:
        d = m.data
        if m.kind == "awaiting":
            self.awaiting_plan = True
            self._banner(f"turn {d['turn']}: your move (the game waits)")
        elif m.kind == "asking" and self.mode == "realtime":
            self._banner(f"turn {d['turn']}: {self.model} is thinking (the game waits)")
        elif m.kind == "plans":
            self.plans = [list(p) for p in d["plans"]]
            self._banner(f"turn {d['turn']}: playing both plans")
        elif m.kind == "action":
            self.now_playing = list(d["actions"])
            self.scores = list(d["scores"])
        elif m.kind == "turn":
            self.scores = list(d["scores"])
        elif m.kind == "finished":
            self.summary, self.recording = d["summary"], d["path"]
            self.awaiting_plan = False
            self._banner(self._result())
        self._show()

    @unless_leaving
    def on_worker_state_changed(self, event: Any) -> None:
        if event.worker.group == "match" and event.worker.error is not None:
            error = event.worker.error
            self.error = str(error).splitlines()[0] if str(error) else type(error).__name__
            self.notify(self.error, title="cannot play the match", severity="error", timeout=10)
            self._banner(f"[b]could not play[/b]\n{self.error}\nesc  leave")

    def _result(self) -> str:
        s = self.summary or {}
        state = "complete" if s.get("complete") else f"incomplete ({s.get('stopped') or 'stopped'})"
        winner = s.get("winner")
        if not s.get("complete"):  # stopped before the end: no result, whoever led (never "a draw")
            a, b = self.scores
            verdict = f"no result, stopped at {a:g} to {b:g}"
        else:
            verdict = ("team score " + f"{s.get('team_score', 0):g}" if self.tp.team else "a draw" if winner is None
                       else "you win" if winner == self.person else f"{self.model} wins")
        return f"[b]result: {escape(state)}, {escape(verdict)}[/b]\n{escape(str(self.recording))}\nesc  leave"

    # -- keys ----------------------------------------------------------------
    def on_key(self, event: Key) -> None:
        self.take_key(event)

    def take_key(self, event: Key) -> None:
        take_play_key(event.key, event.character, self.summary is not None or self.error is not None,
                      self.mode == "realtime", stop=event.stop, leave=self.action_stop_or_leave,
                      hold=lambda button: self._held.press(button, self.pacer.now()), plan=self._edit_plan)

    def _edit_plan(self, what: str, button: str) -> None:
        if what == "commit":
            self._commit()
        elif not self.queue.edit(what, button):
            self.notify(f"the plan holds at most {self.queue.max_actions} actions", severity="warning")
        self._show()

    def _commit(self) -> None:
        why = commit_refusal(self.awaiting_plan and self.driver is not None, self.queue,
                             "the plans are still playing; commit when the game waits")
        if why is not None:
            self.notify(why, severity="warning")
            return
        assert self.driver is not None  # ready means a driver is playing
        self.awaiting_plan = False
        self.driver.plans.put(self.queue.take())
        self._banner(f"waiting for {self.model}...")

    def action_stop_or_leave(self) -> None:
        if self.summary is not None or self.error is not None:
            result = {"summary": self.summary, "path": self.recording}
            leave(self, self.can_go_back, result)
        elif self.driver is not None:
            self._stop_driver()
            self._banner("stopping...")

    # -- display -------------------------------------------------------------
    def _banner(self, text: str) -> None:
        self.query_one("#match-banner", Static).update(text)

    def _show(self) -> None:
        lines = []
        for side in (1, 2):
            lines.append(f"side {side} {self._who(side):<22} score {self.scores[side - 1]:g}")
        if self.tp.team:
            lines.append(f"team score {sum(self.scores):g}")
        self.query_one("#match-scores", Static).update("\n".join(lines))
        plans = [f"side {s} plan: [{', '.join(self.plans[s - 1]) or '-'}]  now {self.now_playing[s - 1]}"
                 for s in (1, 2)]
        self.query_one("#match-plans", Static).update(escape("\n".join(plans)))
        q = self.query_one("#match-queue", Static)
        if self.mode == "realtime":
            q.display = False
            return
        state = "enter commits" if self.awaiting_plan else "waiting for the game"
        q.update(f"{self.queue.listing('your plan')}\n{state}")
