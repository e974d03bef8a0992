"""Open a recording: the live view's layout, scrubbed by turn and frame, with playback.

Nothing runs here but file reads: frames come from the recording's frame store,
each turn's prompt is rebuilt from the turns before it (or stored verbatim when
it was edited), and the thought, raw reply, plan and reward come from its typed
record. Score, lives, rewards and every figure at a frame come from the
recording's series (``workstation.store.series``). A recording that fails the
fast integrity check is opened, but its title says DAMAGED and why.

``m`` marks the frame on screen (a second ``m`` marks the end of a range) and
``n`` sends the marked frames to a question set (``qa/<game>-hand/`` unless the
screen was given one) as a new proposed question, to finish in the curator.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Static

from screens.messages import BarStats, PaletteCommand
from screens.views.event_keys import EVENT_BINDINGS
from screens.views.export_key import export_in_background
from screens.views.frame_playback import END_BINDINGS, STEP_BINDINGS, FramePlaybackScreen
from screens.views.run_layout import blur_or_leave, compose_run, protocol_label, turn_label
from screens.widgets.frame_view import FrameView, sent_image
from screens.widgets.plan_view import PlanView, end_note
from screens.widgets.prompt_view import PromptView
from screens.widgets.reply_view import ReplyView
from screens.widgets.stats_bar import StatsBar
from screens.widgets.timeline import TimelineBar
from workstation.base.words import plural
from workstation.engine.parser import ParseResult
from workstation.engine.prompt import ImagePart
from workstation.game.protocol import Protocol
from workstation.store.changes import CHANGE_KINDS, mark, of_turn
from workstation.store.framestore import FrameStoreError
from workstation.store.recording import Recording
from workstation.store.records import RecordingError, TurnRecord
from workstation.store.series import RunSeries
from workstation.studies.analysis.compare import event_frames, next_event_frame
from workstation.studies.judge.records import VerdictLine


def _verdicts(rec: Recording) -> dict[int, VerdictLine]:
    from workstation.studies.judge.lookup import verdicts_for

    try:
        return verdicts_for(rec.path, rec.manifest_record.run_id)
    except (OSError, ValueError, RecordingError):
        return {}


def _judgings(rec: Recording) -> int:
    """How many judge directories near the recording sampled this run (0: it was not judged at all)."""
    from workstation.studies.judge.lookup import judgings_of

    try:
        return judgings_of(rec.path, rec.manifest_record.run_id)
    except (OSError, ValueError, RecordingError):
        return 0


def _stuck_mask(rec: Recording, n: int) -> np.ndarray:
    """Per frame: inside a stuck stretch of the run (an all-false mask when it has none or cannot tell)."""
    import numpy as np

    from workstation.studies.judge.stuck import DEFAULT_MIN_TURNS, stretches

    mask = np.zeros(n, bool)
    try:
        found = stretches(rec, DEFAULT_MIN_TURNS)
    except (OSError, ValueError, IndexError, RecordingError, FrameStoreError):
        return mask
    turns = {t.turn: t for t in rec.turn_records}
    for s in found:
        mask[turns[s.first_turn].start_frame:min(n, turns[s.last_turn].end_frame + 1)] = True
    return mask


class ReplayScreen(FramePlaybackScreen):
    """A recording, turn by turn and frame by frame."""

    AUTO_FOCUS = ""  # nothing focused: the screen's keys work at once
    BINDINGS = [
        *STEP_BINDINGS,
        *EVENT_BINDINGS,
        *END_BINDINGS,
        Binding("e", "export", "Export MP4", show=False),
        Binding("m", "mark", "Mark frame", show=False),
        Binding("n", "to_qa", "To QA set", show=False),
        Binding("j", "judged(1)", "Next judged failure", show=False),
        Binding("k", "judged(-1)", "Prev judged failure", show=False),
        Binding("escape", "back", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, rec: Recording, *, can_go_back: bool = True, qa_set: str | Path | None = None) -> None:
        super().__init__()
        self.rec = rec
        self.qa_set = qa_set  # where `n` sends marked frames (None: qa/<game>-hand)
        self.marked: tuple[int, int] | None = None  # first and last marked frame
        self._mark_open = False  # True after one `m`: the next `m` ends the range
        self.can_go_back = can_go_back
        self.turns: list[TurnRecord] = rec.turn_records
        self.n_frames = len(rec.frames)
        self.frame = 0
        self.turn = -1
        self.playing = False
        self._timer: Timer | None = None
        self.series = RunSeries.from_turns(self.turns, rec.manifest_record, self.n_frames)
        self.budget = self.series.budget
        self.damage = rec.damage()
        self.verdicts = _verdicts(rec)  # turn -> the judge's verdict, from judge directories nearby
        self.judgings = _judgings(rec) if not self.verdicts else 1  # judge directories that sampled this run

    def compose(self) -> ComposeResult:
        m = self.rec.manifest_record
        changed = Protocol.from_json(m.protocol).changed() if isinstance(m.protocol, dict) and m.protocol else {}
        outcome = self.rec.outcome().state  # the word `workstation ls` and home print: complete, stopped, unfinished
        state = "DAMAGED" if self.damage else outcome if outcome == "complete" else outcome.upper()
        hand = f" · CHANGED BY HAND ({mark(self.rec.interventions)})" if self.rec.interventions else ""
        title = (f"{m.game} · agent {m.agent_spec} · seed {m.seed} · "
                 f"{protocol_label(changed)} · {plural(len(self.turns), 'turn')}, {plural(self.n_frames, 'frame')} "
                 f"· {state}{hand}")
        yield from compose_run(title, FrameView(id="frame"))

    def on_mount(self) -> None:
        if self.n_frames == 0:
            self.notify("this recording holds no frames", severity="warning")
            return
        self.goto(0)

    # -- navigation ----------------------------------------------------------
    def turn_at(self, frame: int) -> int:
        """The turn on screen at ``frame``: the last one started at or before it (-1 if none)."""
        return self.series.turn_at(frame)

    def turn_producing(self, frame: int) -> int:
        """The turn whose actions produced ``frame`` (its start < frame <= its end); else the turn on screen."""
        for k in (self.turn_at(frame), self.turn_at(frame) - 1):
            if 0 <= k < len(self.turns) and self.turns[k].start_frame < frame <= self.turns[k].end_frame:
                return k
        return self.turn_at(frame)

    def goto(self, frame: int, turn: int | None = None) -> None:
        """Show ``frame`` (clamped) and the turn it belongs to; a damaged frame is a notice, not a crash.

        A frame where one turn ends and the next starts shows the next one (its prompt's frame), unless ``turn``
        names the turn to show (an event jump: the turn whose action produced the frame).
        """
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
        turn = self.turn_at(self.frame) if turn is None else turn
        if turn != self.turn:
            self.turn = turn
            self._show_turn(turn)
        if turn >= 0:
            self.query_one(PlanView).mark(self.series.actions_done(turn, self.frame))
        timeline = self.query_one(TimelineBar)
        if timeline.stuck is None:
            timeline.stuck = _stuck_mask(self.rec, len(self.series.frames.rewards))
        timeline.show_series(self.series.frames, self.frame, known=self.n_frames - 1)
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
        reply.show_reply(t.raw, t.error)
        parse = ParseResult(thought=t.thought, names=list(t.planned), actions=[], valid=t.valid,
                            errors=list(t.errors), rule=t.rule)
        reply.show_parse(parse)
        if t.discarded_replies:
            reply.set_note(f"{len(t.discarded_replies)} earlier replies were discarded (re-sent in step mode)")
        plan.show_plan(t.shown_plan, overridden=t.overridden, valid=t.valid, errors=list(t.errors),
                       dropped=len(t.dropped) if t.shown_plan == list(t.planned) else 0,
                       note=end_note(t.to_json()))
        if turn in self.verdicts:
            from workstation.studies.judge.lookup import describe

            reply.set_note(describe(self.verdicts[turn]))

    def _show_prompt(self, turn: int, t: TurnRecord) -> None:
        view = self.query_one(PromptView)
        try:
            from workstation.run.request import rebuild_prompt
        except ImportError:
            view.show_reference(turn, t.prompt, "this version cannot rebuild prompts")
            return
        try:
            prompt = rebuild_prompt(self.rec, turn)
        except (RecordingError, FrameStoreError, ValueError, KeyError) as e:
            view.show_reference(turn, t.prompt, str(e))
            return
        variant = t.variant
        images: list[tuple[ImagePart, np.ndarray | None]] = []
        for part in prompt.images:
            try:
                images.append((part, sent_image(self.rec.frames.png(part.frame))))  # the image the model got
            except (RecordingError, FrameStoreError, IndexError, ValueError):
                images.append((part, None))
        view.show_prompt(turn, prompt.render_text(), variant, images)

    def _stats(self) -> BarStats:
        return BarStats(**vars(self.series.stats_at(self.frame)))

    def _status(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" PLAYING " if self.playing else " REPLAY ", style="bold black on green" if self.playing else "bold reverse")
        frames = f"frame {self.frame}/{self.n_frames - 1}" if self.n_frames else "no frames"
        turns = turn_label(self.turn, len(self.turns)) if self.turns and self.turn >= 0 else \
            "before the first turn" if self.turns else "no turns recorded"
        t.append(f"  {frames}  {turns}  ")
        if self.turn >= 0:
            t.append(f"turn reward {self.turns[self.turn].reward:g}  ")
        here = self.series.frames.rewards[self.frame] if 0 <= self.frame < len(self.series.frames.rewards) else 0
        if here:
            t.append(f"this frame {here:+g}  ", style="bold green")
        if self.marked:
            a, b = self.marked
            t.append(f"marked {a}" + (f"-{b}" if b != a else "") + "  ", style="bold magenta")
        t.append("recording ", style="dim")
        t.append(str(self.rec.path))
        parent = self.rec.manifest_record.parent
        if self.damage:
            t.append("  ⚠ DAMAGED: " + self.damage, style="bold red")
        if parent:
            t.append(f"  branch of turn {parent.get('turn')} of {parent.get('path')}", style="yellow")
        if self.turn >= 0:  # what a person changed in the turn on show
            here = [CHANGE_KINDS[c["kind"]][1] for c in of_turn(self.rec.turn_records[self.turn])]
            if here:
                t.append(f"  by hand: {', '.join(here)}", style="bold yellow")
        self.query_one("#status", Static).update(t)

    # -- actions -------------------------------------------------------------
    def action_turn(self, delta: int) -> None:
        if not self.turns:
            return
        target = max(0, min(len(self.turns) - 1, self.turn + delta))
        self.goto(self.turns[target].start_frame)

    def action_event(self, kind: str, direction: int = 1) -> None:
        """Jump to the next (or previous) reward, life loss or game over, as the compare screen does."""
        name = {"reward": "reward", "life_lost": "life loss", "game_over": "game over"}[kind]
        frame = next_event_frame(event_frames(self.series, self.turns, kind), self.frame, direction)
        if frame is None:
            self.notify(f"no {name} {'after' if direction > 0 else 'before'} frame {self.frame}", severity="warning")
            return
        self.goto(frame, self.turn_producing(frame))  # the turn that scored, not the one the frame then starts
        self.notify(f"{name} at frame {frame} (turn {self.turn})", timeout=3)

    def _show_playing(self) -> None:
        self._status()

    def action_judged(self, delta: int) -> None:
        """Jump to the next (or previous) turn the judge found a failure in."""
        failed = sorted(t for t, v in self.verdicts.items() if v.answer.failure and 0 <= t < len(self.turns))
        ahead = [t for t in failed if (t > self.turn if delta > 0 else t < self.turn)]
        if not ahead:
            self.notify(self._no_failure_note(bool(failed)))
            return
        self.goto(self.turns[ahead[0] if delta > 0 else ahead[-1]].start_frame)

    def _no_failure_note(self, failed: bool) -> str:
        """Why j or k found nothing: none that way, none found in the verdicts, no verdicts, or never judged."""
        if failed:
            return "no judged failure that way"
        if self.verdicts:
            n = len(self.verdicts)
            return f"the judge found no failure in this run ({n} turn{'s' if n != 1 else ''} judged)"
        if self.judgings:
            return "a judging sampled this run but holds no verdict on it yet (not finished, or its calls failed)"
        return "this run was not judged: no `workstation judge` directory near it sampled it"

    def action_back(self) -> None:
        blur_or_leave(self, self.can_go_back)

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            ("Play / pause", "play the recording at paper pace (space)", self.action_play),
            ("Next turn", "jump to the next turn (right or ])", lambda: self.action_turn(1)),
            ("Previous turn", "jump to the previous turn (left or [)", lambda: self.action_turn(-1)),
            ("Next frame", "one frame on (.)", lambda: self.action_frame(1)),
            ("Previous frame", "one frame back (,)", lambda: self.action_frame(-1)),
            ("Next reward", "jump to the next frame that scored (r)", lambda: self.action_event("reward", 1)),
            ("Previous reward", "jump back to the last frame that scored (R)", lambda: self.action_event("reward", -1)),
            ("Next life loss", "jump to the next life lost (l)", lambda: self.action_event("life_lost", 1)),
            ("Previous life loss", "jump back to the last life lost (L)", lambda: self.action_event("life_lost", -1)),
            ("Next game over", "jump to the next game over (g)", lambda: self.action_event("game_over", 1)),
            ("Previous game over", "jump back to the last game over (G)", lambda: self.action_event("game_over", -1)),
            ("First frame", "go to frame 0 (home)", lambda: self.action_goto(0)),
            ("Last frame", "go to the last frame (end)", lambda: self.action_goto(-1)),
            ("Next judged failure", "jump to the next turn a judge called a failure (j)", lambda: self.action_judged(1)),
            ("Previous judged failure", "jump back to the last judged failure (k)", lambda: self.action_judged(-1)),
            ("Export MP4", "write this recording as RECORDING.mp4 beside it (e)", self.action_export),
            ("Mark frame", "mark this frame; again at another frame: a range (m)", self.action_mark),
            ("Send marked frames to QA", "a new proposed question on the marked frames, to curate (n)",
             self.action_to_qa),
            ("Back", "leave the focused field, else this view (escape)", self.action_back),
        ]

    def action_mark(self) -> None:
        if self._mark_open and self.marked:
            self.marked = (min(self.marked[0], self.frame), max(self.marked[0], self.frame))
            self._mark_open = False
            self.notify(f"marked frames {self.marked[0]}-{self.marked[1]}; n sends them to a question set")
        else:
            self.marked = (self.frame, self.frame)
            self._mark_open = True
            self.notify(f"marked frame {self.frame}; m at another frame marks a range, n sends it to a question set")
        self._status()

    def action_to_qa(self) -> None:
        """Write a proposed question on the marked frames (or this one) and say how to curate it."""
        from workstation.base.errors import UserError
        from workstation.studies.qa.curate import hand_set, propose_from_recording, spread

        first, last = self.marked or (self.frame, self.frame)
        game = self.rec.manifest_record.game
        if game is None and not self.qa_set:
            self.notify("this recording names no game", title="not sent to a question set", severity="error")
            return
        root = Path(self.qa_set) if self.qa_set else hand_set(game or "")
        try:
            q = propose_from_recording(root, self.rec.path, spread(first, last))
        except UserError as e:
            self.notify(str(e), title="not sent to a question set", severity="error")
            return
        self.marked, self._mark_open = None, False
        self._status()
        self.notify(f"{q['id']} ({plural(len(q['frames']), 'frame')}) added to {root} as proposed; "
                    f"set its answer with: workstation qa curate {root}", title="new QA question", timeout=15)

    def action_export(self) -> None:
        """Export the recording as an MP4 beside its directory, in a thread; a notice says where."""
        from workstation.studies.export.files import beside

        export_in_background(self, [self.rec.path], beside(self.rec.path))
