"""Open a recording: the live view's layout, scrubbed by turn and frame, with playback.

Nothing runs here but file reads: frames come from the recording's frame store,
each turn's prompt is rebuilt from the turns before it (or stored verbatim when
it was edited), and the thought, raw reply, plan and reward come from its record.
"""

from __future__ import annotations

import bisect

import numpy as np
from rich.text import Text
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from workstation.store.framestore import FrameStoreError
from workstation.turn.parser import ParseResult
from workstation.game.protocol import Protocol
from workstation.store.recording import Recording, RecordingError

from screens.widgets.frame_view import FrameView
from screens.messages import RunStats
from screens.widgets.plan_view import PlanView
from screens.widgets.prompt_view import PromptView
from screens.widgets.reply_view import ReplyView
from screens.views.run_layout import blur_or_leave, compose_run, protocol_label
from screens.widgets.stats_bar import StatsBar
from screens.widgets.timeline import Timeline

PLAY_FRAMES = 3  # frames per playback tick: one action
PLAY_TICK_S = 0.1  # paper pace: 0.1 s per action


class ReplayScreen(Screen):
    """A recording, turn by turn and frame by frame."""

    AUTO_FOCUS = ""  # nothing focused: the screen's keys work at once
    BINDINGS = [
        Binding("left,left_square_bracket", "turn(-1)", "Prev turn"),
        Binding("right,right_square_bracket", "turn(1)", "Next turn"),
        Binding("comma", "frame(-1)", "Prev frame"),
        Binding("full_stop", "frame(1)", "Next frame"),
        Binding("space", "play", "Play/pause"),
        Binding("home", "goto(0)", "Start", show=False),
        Binding("end", "goto(-1)", "End", show=False),
        Binding("escape", "back", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, rec: Recording, *, can_go_back: bool = True) -> None:
        super().__init__()
        self.rec = rec
        self.can_go_back = can_go_back
        self.turns = rec.turns
        self.n_frames = len(rec.frames)
        self.frame = 0
        self.turn = -1
        self.playing = False
        self._timer: Timer | None = None
        self._starts = [t["start_frame"] for t in self.turns]
        budget = int(rec.manifest.get("protocol", {}).get("frames", self.n_frames - 1) or 1)
        self.budget = max(budget, self.n_frames - 1)
        self.rewards = np.zeros(self.budget + 1)
        self.losses = np.zeros(self.budget + 1, dtype=bool)
        for t in self.turns:
            for f, r, lost in zip(t.get("action_frames", []), t.get("action_rewards", []), t.get("action_life_lost", [])):
                if 0 <= f <= self.budget:
                    self.rewards[f] += r
                    self.losses[f] |= bool(lost)
        self._score = np.cumsum(self.rewards)

    def compose(self):
        m = self.rec.manifest
        changed = Protocol.from_json(m.get("protocol", {})).changed() if m.get("protocol") else {}
        state = "complete" if self.rec.complete else "INCOMPLETE"
        title = (f"{m.get('game')} · agent {(m.get('agent') or {}).get('spec')} · seed {m.get('seed')} · "
                 f"{protocol_label(changed)} · {len(self.turns)} turns, {self.n_frames} frames · {state}")
        yield from compose_run(title, FrameView(id="frame"))

    def on_mount(self) -> None:
        if self.n_frames == 0:
            self.notify("this recording holds no frames", severity="warning")
            return
        self.goto(0)

    # -- navigation ----------------------------------------------------------
    def turn_at(self, frame: int) -> int:
        """The turn on screen at ``frame``: the last one started at or before it (-1 if none)."""
        return bisect.bisect_right(self._starts, frame) - 1

    def goto(self, frame: int) -> None:
        """Show ``frame`` (clamped) and the turn it belongs to; a damaged frame is a notice, not a crash."""
        if self.n_frames == 0:
            return
        self.frame = max(0, min(self.n_frames - 1, frame))
        try:
            rgb = self.rec.frames.rgb(self.frame)
        except (FrameStoreError, RecordingError, IndexError) as e:
            self._stop_playback()  # one notice, not one per tick
            self.notify(str(e), title="cannot show this frame", severity="error")
        else:
            self.query_one("#frame", FrameView).show(rgb, self.frame)
        turn = self.turn_at(self.frame)
        if turn != self.turn:
            self.turn = turn
            self._show_turn(turn)
        if turn >= 0:
            t = self.turns[turn]
            done = sum(1 for f in t.get("action_frames", []) if f <= self.frame)
            self.query_one(PlanView).mark(done)
        self.query_one(Timeline).set_data(self.rewards, self.losses, self.frame, known=self.n_frames - 1)
        self.query_one(StatsBar).show_stats(self._stats())
        self._status()

    def _show_turn(self, turn: int) -> None:
        reply, plan = self.query_one(ReplyView), self.query_one(PlanView)
        if turn < 0:
            reply.begin("before the first turn")
            plan.clear_plan()
            return
        t = self.turns[turn]
        self._show_prompt(turn, t)
        reply.begin()
        reply.show_reply(t.get("raw", ""), t.get("error"))
        parse = ParseResult(thought=t.get("thought", ""), names=list(t.get("planned", [])), actions=[],
                            valid=bool(t.get("valid", True)), errors=list(t.get("errors", [])), rule=t.get("rule"))
        reply.show_parse(parse)
        if t.get("discarded_replies"):
            reply.set_note(f"{len(t['discarded_replies'])} earlier replies were discarded (re-sent in step mode)")
        executed = t.get("overridden") or not t.get("valid", True)  # the plan that ran is not the parsed one
        shown = t.get("actions") if executed else t.get("planned")
        plan.show_plan(list(shown or t.get("actions", [])), overridden=bool(t.get("overridden")),
                       valid=bool(t.get("valid", True)), errors=list(t.get("errors", [])))

    def _show_prompt(self, turn: int, t: dict) -> None:
        view = self.query_one(PromptView)
        try:
            from workstation.runs.request import rebuild_prompt
        except ImportError:
            view.show_reference(turn, t.get("prompt") or {}, "this version cannot rebuild prompts")
            return
        try:
            prompt = rebuild_prompt(self.rec, turn)
        except (RecordingError, FrameStoreError, ValueError, KeyError) as e:
            view.show_reference(turn, t.get("prompt") or {}, str(e))
            return
        variant = (t.get("prompt") or {}).get("variant", "standard")
        images = []
        for part in prompt.images:
            try:
                images.append((part, self.rec.frames.rgb(part.frame)))
            except (RecordingError, FrameStoreError, IndexError, ValueError):
                images.append((part, None))
        view.show_prompt(turn, prompt.render_text(), variant, images)

    def _stats(self) -> RunStats:
        done = self.turns[: self.turn + 1] if self.turn >= 0 else []  # replies received by this frame
        ended = [t for t in self.turns if t.get("end_frame", 0) <= self.frame]
        first = self.turns[0] if self.turns else {}
        lives = ended[-1].get("lives", 0) if ended else first.get("lives", 0) + first.get("lives_lost", 0)
        tokens_in = sum(((t.get("usage") or {}).get("input_tokens", 0) + (t.get("usage") or {}).get("cache_read_tokens", 0)
                         + (t.get("usage") or {}).get("cache_write_tokens", 0)) for t in done)
        tokens_out = sum((t.get("usage") or {}).get("output_tokens", 0) for t in done)
        costs = [t.get("cost_usd") for t in done if t.get("usage")]
        cost = None if any(c is None for c in costs) else float(sum(costs))
        frame = min(self.frame, self.budget)
        return RunStats(frame=self.frame, budget=self.budget, score=float(self._score[frame]), lives=lives,
                        lives_lost=int(self.losses[: frame + 1].sum()),
                        turn=len(ended),
                        input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost,
                        calls=len(costs), invalid_turns=sum(1 for t in done if t.get("valid") is False))

    def _status(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" PLAYING " if self.playing else " REPLAY ", style="bold black on green" if self.playing else "bold reverse")
        t.append(f"  frame {self.frame}/{self.n_frames - 1}  turn {self.turn}/{len(self.turns) - 1}  ")
        if self.turn >= 0:
            r = self.turns[self.turn]
            t.append(f"turn reward {r.get('reward', 0):g}  ")
        t.append("recording ", style="dim")
        t.append(str(self.rec.path))
        parent = self.rec.manifest.get("parent")
        if parent:
            t.append(f"  branch of turn {parent.get('turn')} of {parent.get('path')}", style="yellow")
        self.query_one("#status", Static).update(t)

    # -- actions -------------------------------------------------------------
    def action_turn(self, delta: int) -> None:
        if not self.turns:
            return
        target = max(0, min(len(self.turns) - 1, self.turn + delta))
        self.goto(self.turns[target]["start_frame"])

    def action_frame(self, delta: int) -> None:
        self.goto(self.frame + delta)

    def action_goto(self, frame: int) -> None:
        self.goto(self.n_frames - 1 if frame < 0 else frame)

    def action_play(self) -> None:
        if self.playing:
            self._stop_playback()
        elif self.n_frames:
            self.playing = True
            self._timer = self.set_interval(PLAY_TICK_S, self._tick)
            if self.frame >= self.n_frames - 1:
                self.goto(0)
        self._status()

    def _stop_playback(self) -> None:
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _tick(self) -> None:
        if self.frame >= self.n_frames - 1:
            self.action_play()
            return
        self.goto(self.frame + PLAY_FRAMES)

    def action_back(self) -> None:
        blur_or_leave(self, self.can_go_back)

    def palette_commands(self) -> list[tuple[str, str, object]]:
        return [
            ("Play / pause", "play the recording at paper pace (space)", self.action_play),
            ("Next turn", "jump to the next turn (right or ])", lambda: self.action_turn(1)),
            ("Previous turn", "jump to the previous turn (left or [)", lambda: self.action_turn(-1)),
            ("Next frame", "one frame on (.)", lambda: self.action_frame(1)),
            ("Previous frame", "one frame back (,)", lambda: self.action_frame(-1)),
            ("First frame", "go to frame 0 (home)", lambda: self.action_goto(0)),
            ("Last frame", "go to the last frame (end)", lambda: self.action_goto(-1)),
            ("Back", "leave the focused field, else this view (escape)", self.action_back),
        ]
