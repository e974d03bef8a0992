"""Compare: up to four recordings of one game side by side, on one scrubber.

The runs are aligned on the budget clock (``workstation.studies.analysis.compare``):
the cursor is one budget frame and every run shows its frame there (a run that
ended shows its last one, marked ended), with its score, lives, the action
executing, and the thought and plan of its turn at the cursor. Below: the
score curves of all runs in one plot, the scrubber with the first frame where
the runs diverge, and the summary table. Turn steps follow the focused run
(``1``-``4``); event jumps look at every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.events import Click
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Static

from screens.messages import PaletteCommand
from screens.views.event_keys import EVENT_BINDINGS
from screens.views.export_key import export_in_background
from screens.views.frame_playback import END_BINDINGS, TURN_BINDINGS, FramePlaybackScreen
from screens.views.run_layout import leave, turn_label
from screens.widgets.frame_view import FrameView
from screens.widgets.score_plot import COLOURS, ScorePlot
from workstation.base.errors import UserError
from workstation.game.games import FPS_PAPER
from workstation.store.framestore import FrameStoreError
from workstation.store.records import RecordingError
from workstation.studies.analysis.compare import (
    MAX_RUNS,
    SUMMARY_COLUMNS,
    Comparison,
    Run,
    next_event,
    run_at,
    summary_cells,
)

RUN_ACTIONS = [f"focus_run({i})" for i in range(MAX_RUNS)]  # the run keys' actions: `1` focuses run 1...
EVENT_NAMES = {"reward": "reward", "life_lost": "life loss", "game_over": "game over"}


class Scrubber(Widget):
    """One bar over the aligned frames: rewards (+) and life losses (✖) of any run, the divergence (◆), the cursor."""

    DEFAULT_CSS = """
    Scrubber { height: 2; }
    """

    def __init__(self, comparison: Comparison, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.c = comparison
        self.frame = 0

    def move(self, frame: int) -> None:
        self.frame = frame
        self.refresh()

    def on_click(self, event: Click) -> None:
        """A click on the bar moves the cursor there."""
        n = self.c.end + 1
        frame = min(self.c.end, max(0, event.x * n // max(1, self.size.width)))
        screen = self.screen
        if isinstance(screen, CompareScreen):
            screen.goto(frame)

    def render(self) -> Text:
        width = max(1, self.size.width)
        n = self.c.end + 1

        def col(f: int) -> int:
            return min(width - 1, f * width // max(1, n))

        bar = ["─"] * width
        for run in self.c.runs:
            for f in run.event_frames("reward"):
                bar[col(f)] = "+" if bar[col(f)] == "─" else bar[col(f)]
        for run in self.c.runs:
            for f in run.event_frames("life_lost") + run.game_over_frames():
                bar[col(f)] = "✖"
        if self.c.divergent_frame is not None:
            bar[col(self.c.divergent_frame)] = "◆"
        out = Text(no_wrap=True)
        styles = {"+": "green", "✖": "bold red", "◆": "bold yellow", "─": "grey42"}
        for ch in bar:
            out.append(ch, style=styles[ch])
        out.append("\n")
        label = f"▲ frame {self.frame} ({self.frame / FPS_PAPER:.2f} s)"
        pos = col(self.frame)
        if pos + len(label) > width:
            label = f"frame {self.frame} ({self.frame / FPS_PAPER:.2f} s) ▲"
            pos = max(0, pos - len(label) + 1)
        out.append(" " * pos + label, style="bold")
        return out


class CompareScreen(FramePlaybackScreen):
    """Runs side by side; one cursor."""

    AUTO_FOCUS = ""
    DEFAULT_CSS = """
    CompareScreen #cmp-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    CompareScreen #cmp-start { height: 1; padding: 0 1; }
    CompareScreen #cmp-start.-differs { color: $warning; text-style: bold; }
    CompareScreen #cmp-runs { height: 1fr; }
    CompareScreen .cmp-run { width: 1fr; border: round $primary 40%; }
    CompareScreen .cmp-run.-focused { border: round $accent; }
    CompareScreen .cmp-frame { height: 1fr; }
    CompareScreen .cmp-info { height: 7; padding: 0 1; }
    CompareScreen #cmp-plot { height: 9; border-top: solid $primary 30%; }
    CompareScreen #cmp-scrub { height: 2; padding: 0 1 0 7; }
    CompareScreen #cmp-diverge { height: 1; padding: 0 1; color: $warning; }
    CompareScreen #cmp-table { height: auto; max-height: 6; }
    CompareScreen #cmp-status { height: 1; padding: 0 1; background: $panel; }
    """
    BINDINGS = [
        Binding("comma", "frame(-1)", "Frame -1"),
        Binding("full_stop", "frame(1)", "Frame +1"),
        Binding("less_than_sign", "frame(-30)", "-1 s", show=False),
        Binding("greater_than_sign", "frame(30)", "+1 s", show=False),
        *TURN_BINDINGS,
        *EVENT_BINDINGS,
        Binding("d", "divergence", "Divergence"),
        Binding("t", "divergent_turn", "Plans differ", show=False),
        *(Binding(str(i + 1), action, f"Run {i + 1}", show=False) for i, action in enumerate(RUN_ACTIONS)),
        Binding("space", "play", "Play/pause"),
        Binding("e", "export", "Export MP4", show=False),
        *END_BINDINGS,
        Binding("escape", "back", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, comparison: Comparison, *, can_go_back: bool = True) -> None:
        super().__init__()
        self.c = comparison
        self.runs: list[Run] = comparison.runs
        self.can_go_back = can_go_back
        self.frame = 0
        self.focus_index = 0
        self.playing = False
        self._timer: Timer | None = None

    @classmethod
    def of(cls, paths: Sequence[str | Path], **kw: Any) -> CompareScreen:
        return cls(Comparison.of(list(paths)), **kw)

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        game = self.runs[0].manifest.game
        yield Static(f"compare {len(self.runs)} runs of {game}  ·  " + "  |  ".join(r.label for r in self.runs),
                     id="cmp-title")
        start = Static(self.c.start, id="cmp-start")
        start.set_class(self.c.start.startswith("NOT") or "DAMAGED" in self.c.start or " · run " in self.c.start,
                        "-differs")
        yield start
        with Horizontal(id="cmp-runs"):
            for i, run in enumerate(self.runs):
                box = Vertical(classes="cmp-run", id=f"cmp-run-{i}")
                box.border_title = f"{i + 1} {run.label}"
                box.border_subtitle = run.path.name[-40:]
                with box:
                    yield FrameView(id=f"cmp-frame-{i}", classes="cmp-frame")
                    yield Static("", id=f"cmp-info-{i}", classes="cmp-info")
        yield ScorePlot(id="cmp-plot")
        yield Scrubber(self.c, id="cmp-scrub")
        yield Static(self.c.divergence_text(), id="cmp-diverge")
        yield DataTable(id="cmp-table", cursor_type="none", zebra_stripes=True)
        yield Static("", id="cmp-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#cmp-table", DataTable)
        table.can_focus = False
        table.add_columns(*SUMMARY_COLUMNS)
        for i, row in enumerate(self.c.rows):
            cells: list[str | Text] = list(summary_cells(row))
            cells[0] = Text(f"{i + 1} {cells[0]}", style=COLOURS[i % len(COLOURS)])
            table.add_row(*cells, key=str(i))
        for i in range(len(self.runs)):
            self.query_one(f"#cmp-run-{i}").styles.border_title_color = COLOURS[i % len(COLOURS)]
        self.query_one("#cmp-plot", ScorePlot).set_curves([r.series.score for r in self.runs],
                                                          [r.label for r in self.runs], self.c.divergent_frame)
        self._mark_focus()
        self.goto(0)

    # -- the cursor ------------------------------------------------------------------
    def goto(self, frame: int) -> None:
        self.frame = max(0, min(self.c.end, frame))
        for i, run in enumerate(self.runs):
            at = run_at(run, self.frame)
            try:
                rgb = run.rec.frames.rgb(at.frame)
            except (FrameStoreError, RecordingError, IndexError) as e:
                self._stop_playback()
                self.notify(str(e), title=f"cannot show a frame of run {i + 1}", severity="error")
            else:
                self.query_one(f"#cmp-frame-{i}", FrameView).show(rgb, at.frame)
            self.query_one(f"#cmp-info-{i}", Static).update(self._info(run, at))
        self.query_one("#cmp-plot", ScorePlot).set_cursor(self.frame)
        self.query_one("#cmp-scrub", Scrubber).move(self.frame)
        self._status()

    def _info(self, run: Run, at: Any) -> Text:
        t = Text(overflow="fold")
        t.append(f"score {at.score:g}", style="bold")
        t.append(f"   lives {at.lives} (lost {at.lives_lost})   frame {at.frame}")
        if at.ended:
            t.append("  ENDED", style="bold yellow")
        t.append("\n")
        t.append(f"turn {at.turn}   " if at.turn >= 0 else "before the first turn   ")
        t.append("action ", style="dim")
        t.append(at.action or "-", style="bold green")
        if not at.valid:
            t.append("   invalid reply", style="bold red")
        t.append("\n")
        t.append("thought ", style="dim")
        thought = " ".join(at.thought.split())
        t.append((thought[:150] + "…") if len(thought) > 150 else thought or "-", style="italic")
        t.append("\nplan ", style="dim")
        for k, name in enumerate(at.plan):
            style = "dim" if k < at.done else "bold reverse" if k == at.done else ""
            t.append(name, style=style)
            t.append(" ")
        return t

    def _status(self) -> None:
        run = self.runs[self.focus_index]
        turn = run.series.turn_at(run.frame_index(self.frame))
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" PLAYING " if self.playing else " COMPARE ", style="bold black on green" if self.playing
                 else "bold reverse")
        t.append(f"  frame {self.frame}/{self.c.end}  {self.frame / FPS_PAPER:.2f} s  ")
        t.append(f"turns follow run {self.focus_index + 1} ({run.label}): {turn_label(turn, len(run.turns))}  ",
                 style=COLOURS[self.focus_index % len(COLOURS)])
        t.append("r l g next reward / life loss / game over (shift: previous) · d t first differing frame / plan"
                 f" · 1-{len(self.runs)} run",
                 style="dim")
        self.query_one("#cmp-status", Static).update(t)

    def _mark_focus(self) -> None:
        for i in range(len(self.runs)):
            self.query_one(f"#cmp-run-{i}").set_class(i == self.focus_index, "-focused")

    # -- actions ---------------------------------------------------------------------
    def absent_key(self, binding: Binding) -> bool:
        """A run key past the runs compared (`4` over three runs): not in the help, and refused."""
        return binding.action in RUN_ACTIONS[len(self.runs):]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_run" and parameters and isinstance(parameters[0], int):
            return parameters[0] < len(self.runs)
        return True

    @property
    def last_frame(self) -> int:
        return self.c.end

    def action_turn(self, delta: int) -> None:
        """The focused run's previous / next turn start."""
        starts = self.runs[self.focus_index].series.starts
        if not starts:
            return
        if delta > 0:
            later = [s for s in starts if s > self.frame]
            target = later[0] if later else starts[-1]
        else:
            earlier = [s for s in starts if s < self.frame]
            target = earlier[-1] if earlier else starts[0]
        self.goto(target)

    def action_event(self, kind: str, direction: int = 1) -> None:
        hit = next_event(self.runs, self.frame, kind, direction)
        if hit is None:
            where = "after" if direction > 0 else "before"
            self.notify(f"no {EVENT_NAMES[kind]} {where} frame {self.frame} in any run", severity="warning")
            return
        frame, i = hit
        self.goto(frame)
        self.notify(f"{EVENT_NAMES[kind]} in run {i + 1} ({self.runs[i].label}) at frame {frame}", timeout=3)

    def action_divergence(self) -> None:
        if self.c.divergent_frame is None:
            self.notify("the runs show the same frames throughout", severity="warning")
            return
        self.goto(self.c.divergent_frame)

    def action_divergent_turn(self) -> None:
        """The start of the first turn whose plans differ (the earliest start among the runs)."""
        t = self.c.divergent_turn
        if t is None:
            self.notify("the runs planned the same throughout", severity="warning")
            return
        self.goto(min(r.turns[t].start_frame for r in self.runs if t < len(r.turns)))

    def action_focus_run(self, index: int) -> None:
        if index < len(self.runs):
            self.focus_index = index
            self._mark_focus()
            self._status()

    def _show_playing(self) -> None:
        self._status()

    def action_back(self) -> None:
        leave(self, self.can_go_back)

    def action_export(self) -> None:
        """Export the runs side by side as one MP4 beside the first recording, in a thread."""
        from workstation.studies.export.files import beside

        export_in_background(self, [r.path for r in self.runs], beside(self.runs[0].path, "-compare.mp4"))

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            ("Next life loss (any run)", "jump to the next frame where a run lost a life (l)",
             lambda: self.action_event("life_lost", 1)),
            ("Next reward (any run)", "jump to the next rewarded frame (r)", lambda: self.action_event("reward", 1)),
            ("Next game over (any run)", "jump to the next game over (g)", lambda: self.action_event("game_over", 1)),
            ("Divergence", "jump to the first frame where the runs differ (d)", self.action_divergence),
            ("Play / pause", "play all runs at paper pace (space)", self.action_play),
            ("Export MP4", "write the runs side by side as FIRST-compare.mp4 beside the first (e)",
             self.action_export),
            ("Back", "leave the comparison (escape)", self.action_back),
        ]


def open_compare(app: App[Any], paths: Sequence[str | Path]) -> bool:
    """Push a comparison of ``paths`` on ``app``; a bad set (other games, too many) is a notice. True if opened."""
    try:
        app.push_screen(CompareScreen.of(paths))
    except UserError as e:
        app.notify(str(e), title="cannot compare", severity="error")
        return False
    return True
