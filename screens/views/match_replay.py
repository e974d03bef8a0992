"""Open a match recording: the frame, both players' plans and both scores, turn by turn and frame by frame.

A match's turns hold one record per side (its reply, its plan, the actions it
played with the padding, its per-action rewards); the one-player replay screen
reads only the top level and so showed no actions. This screen reads the sides.
Nothing runs here but file reads. Keys as on the one-player replay screen:
left/right a turn, comma/full stop a frame, space plays at paper pace,
home/end, escape back, q quits.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static

from screens.views.frame_playback import END_BINDINGS, STEP_BINDINGS, FramePlaybackScreen
from screens.views.run_layout import leave, turn_label
from screens.widgets.frame_view import FrameView, frame_beside
from workstation.base.words import plural
from workstation.store.framestore import FrameStoreError
from workstation.store.recording import Recording
from workstation.store.records import MatchTurn, RecordingError, SideTurn


def side_scores(turns: list[MatchTurn]) -> list[tuple[int, float, float]]:
    """(frame, side 1's score, side 2's score) after each action that scored, in frame order."""
    events: list[tuple[int, float, float]] = []
    s = [0.0, 0.0]
    for t in turns:
        for i, end in enumerate(t.lockstep_frames):
            gained = [float(p.action_rewards[i]) if i < len(p.action_rewards) else 0.0 for p in t.players[:2]]
            if any(gained):
                s = [s[k] + (gained[k] if k < len(gained) else 0.0) for k in range(2)]
                events.append((int(end), s[0], s[1]))
    return events


class MatchReplayScreen(FramePlaybackScreen):
    """A match recording: both sides' plans and scores at the frame on screen."""

    AUTO_FOCUS = ""
    CSS = """
    MatchReplayScreen { layout: vertical; }
    #mr-body { height: 1fr; }
    #mr-frame { width: 1fr; }
    #mr-side { width: 56; padding: 0 1; background: $panel; }
    #mr-title { text-style: bold; color: $accent; margin-bottom: 1; }
    #mr-scores, #mr-side1, #mr-side2 { margin-bottom: 1; }
    #mr-status { height: 1; }
    """
    BINDINGS: ClassVar = [
        *STEP_BINDINGS,
        *END_BINDINGS,
        Binding("escape", "back", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, rec: Recording, *, can_go_back: bool = True) -> None:
        super().__init__()
        self.rec = rec
        self.can_go_back = can_go_back
        self.turns: list[MatchTurn] = rec.match_turns
        self.n_frames = len(rec.frames)
        self.starts = [t.start_frame for t in self.turns]
        self.score_events = side_scores(self.turns)
        self._event_frames = [e[0] for e in self.score_events]
        self.players = {p.get("side"): p for p in rec.manifest_record.players or []}
        self.frame = 0
        self.turn = -1
        self.playing = False
        self._timer: Timer | None = None

    # -- layout ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Footer()
        yield frame_beside("mr", Static(escape(self._title()), id="mr-title"),
                           *(Static("", id=f"mr-{name}") for name in ("scores", "side1", "side2")))
        yield Static("", id="mr-status")

    def agent_of(self, side: int) -> str:
        agent = (self.players.get(side) or {}).get("agent") or {}
        return str(agent.get("spec") or agent.get("kind") or "?") if isinstance(agent, dict) else str(agent)

    def _title(self) -> str:
        m = self.rec.manifest_record
        state = "complete" if self.rec.complete else "INCOMPLETE"
        return (f"match · {m.game} · seed {m.seed}\n"
                f"side 1 {self.agent_of(1)}  vs  side 2 {self.agent_of(2)}\n"
                f"{plural(len(self.turns), 'turn')}, {plural(self.n_frames, 'frame')} · {state}")

    def on_mount(self) -> None:
        if self.n_frames == 0:
            self.notify("this recording holds no frames", severity="warning")
        self.goto(0)

    # -- what is at a frame ---------------------------------------------------
    def turn_at(self, frame: int) -> int:
        """The last turn started at or before ``frame`` (-1 before the first; frames past the last stay on it)."""
        return bisect_right(self.starts, frame) - 1

    def scores_at(self, frame: int) -> tuple[float, float]:
        i = bisect_right(self._event_frames, frame) - 1
        return (0.0, 0.0) if i < 0 else self.score_events[i][1:]

    def actions_done(self, turn: int, frame: int) -> int:
        return bisect_right(self.turns[turn].lockstep_frames, frame)

    # -- navigation ------------------------------------------------------------
    def goto(self, frame: int) -> None:
        if self.n_frames == 0:
            self._show()
            return
        self.frame = max(0, min(self.n_frames - 1, frame))
        try:
            rgb = self.rec.frames.rgb(self.frame)
        except (FrameStoreError, RecordingError, IndexError) as e:
            self._stop_playback()
            self.notify(str(e), title="cannot show this frame", severity="error")
        else:
            self.query_one("#mr-frame", FrameView).show(rgb, self.frame)
        self.turn = self.turn_at(self.frame)
        self._show()

    def _side_text(self, side: int) -> str:
        who = f"[b]side {side}[/b] {escape(self.agent_of(side))}"
        if self.turn < 0:
            return f"{who}\n(before the first turn)"
        p: SideTurn = self.turns[self.turn].players[side - 1]  # typed: a match turn holds sides 1 and 2
        done = self.actions_done(self.turn, self.frame)
        shown = [f"[reverse]{escape(a)}[/reverse]" if i == done else escape(a) for i, a in enumerate(p.actions)]
        lines = [who, escape(f"plan: [{', '.join(p.planned) or '-'}]"),
                 f"played: {' '.join(shown) or '-'}" + (f"  ({p.padded} noop padding)" if p.padded else "")]
        if p.dropped:
            lines.append(f"dropped: {escape(', '.join(map(str, p.dropped)))}")
        if not p.valid:
            lines.append(f"[red]invalid reply[/red]: {escape('; '.join(map(str, p.errors)))}")
        if p.error:
            lines.append(f"[red]error[/red]: {escape(str(p.error))}")
        if p.thought:
            lines.append(f"thought: {escape(str(p.thought))}")
        lines.append(f"turn reward {float(p.reward):g}  lives lost {p.lives_lost}")
        return "\n".join(lines)

    def _show(self) -> None:
        s1, s2 = self.scores_at(self.frame)
        scores = f"score  side 1 {s1:g}  ·  side 2 {s2:g}"
        result = self.rec.summary_record.result if self.rec.summary_record is not None else None
        if result:
            scores += f"\nfinal: {escape(str(result))}"
        self.query_one("#mr-scores", Static).update(scores)
        self.query_one("#mr-side1", Static).update(self._side_text(1))
        self.query_one("#mr-side2", Static).update(self._side_text(2))
        frames = f"frame {self.frame}/{self.n_frames - 1}" if self.n_frames else "no frames"
        turns = turn_label(self.turn, len(self.turns)) if self.turn >= 0 else \
            "before the first turn" if self.turns else "no turns recorded"
        state = "PLAYING" if self.playing else "REPLAY"
        self.query_one("#mr-status", Static).update(
            f"[reverse] {state} [/reverse]  {frames}  {turns}  recording {escape(str(self.rec.path))}")

    # -- actions -----------------------------------------------------------------
    def action_turn(self, delta: int) -> None:
        if not self.turns:
            return
        target = max(0, min(len(self.turns) - 1, self.turn + delta))
        self.goto(self.starts[target])

    def _show_playing(self) -> None:
        self._show()

    def action_back(self) -> None:
        self._stop_playback()
        leave(self, self.can_go_back)


def replay_screen(rec: Recording, **kwargs: Any) -> Screen[Any]:
    """The screen that opens ``rec``: a match gets its own, anything else the one-player replay screen."""
    if rec.manifest_record.is_match:
        return MatchReplayScreen(rec, can_go_back=kwargs.get("can_go_back", True))
    from screens.views.replay_view import ReplayScreen

    return ReplayScreen(rec, **kwargs)
