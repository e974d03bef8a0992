"""Home: pick a game, seed, agent and protocol settings, then watch, step, play, or open a recording.

Everything here works offline and without a key: the game preview is the
emulator's own first frame after warm-up (computed in a thread worker and
cached), and random, human and replay agents need no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Checkbox, DataTable, Footer, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from workstation.game.clock import GameClock
from workstation.game.games import GAMES
from workstation.game.protocol import Protocol, ProtocolError, StartOption
from workstation.store.recording import Recording, RecordingError, find_recordings

from screens.widgets.frame_view import FrameView
from screens.messages import OpenRecording, StartRun

MAX_RECENT = 20
PROVIDER_EXAMPLES = ["openai:gpt-5.1", "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash", "compat:MODEL"]

# protocol field -> (label, kind); kind is "int", "text" or a tuple of choices
PROTOCOL_FIELDS: dict[str, tuple[str, Any]] = {
    "frames": ("frames", "int"),
    "max_actions": ("max actions", "int"),
    "memory": ("memory", ("structured", "append")),
    "history": ("history K", "int"),
    "reward_history": ("rewarded R", "int"),
    "feedback": ("feedback", "bool"),
    "clock": ("clock", ("paused", "latency")),
    "start": ("start", "text"),
    "guide": ("guide", ("full", "short")),
}


def _arg(args: Any, name: str, default: Any) -> Any:
    value = getattr(args, name, None)
    return default if value is None else value


def recent_label(path: Path) -> Text:
    """One line per recording: name, score, turns, state."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(path.name)
    try:
        s = Recording(path).summary_or_partial()
    except RecordingError as e:
        text.append(f"  unreadable: {e}", style="red")
        return text
    text.append(f"  score {s.get('total_reward', 0):g}  {s.get('turns', 0)} turns", style="dim")
    if s.get("complete"):
        text.append("  complete", style="green")
    else:
        text.append("  incomplete", style="yellow")
    return text


class HomeScreen(Screen):
    """The launcher."""

    class PreviewReady(Message):
        """A game's first frame is in the cache."""

        def __init__(self, key: str, start: str) -> None:
            super().__init__()
            self.key, self.start = key, start

    BINDINGS = [
        Binding("w", "start('watch')", "Watch"),
        Binding("s", "start('step')", "Step"),
        Binding("p", "start('play')", "Play"),
        Binding("o", "open", "Open"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, args: Any = None) -> None:
        super().__init__()
        self.args = args
        self.out = Path(_arg(args, "out", "recordings"))
        self.game_keys = list(GAMES)
        first = _arg(args, "game", None)
        self.selected_game = first if first in GAMES else "breakout"
        self.recent: list[Path] = []
        self._previews: dict[tuple[str, str], Any] = {}
        self._preview_view = FrameView(id="preview")
        self.preview_game: str | None = None  # the game whose frame is on show

    # -- layout ------------------------------------------------------------
    def compose(self):
        yield Static(Text.assemble(("Atari VLM workstation", "bold"), ("  AtariBench protocol · random, human and "
                     "replay agents need no key or network", "dim")), id="title")
        with Horizontal(id="home-body"):
            with Vertical(id="games-col"):
                yield DataTable(id="games", cursor_type="row", zebra_stripes=True)
            with Vertical(id="preview-col"):
                yield self._preview_view
                yield Static(id="game-info")
            with VerticalScroll(id="settings-col"):
                yield Static("run", classes="section")
                yield from self._row("seed", Input(str(_arg(self.args, "seed", 0)), type="integer", id="seed", compact=True))
                yield from self._row("agent", Input(
                    _arg(self.args, "agent", "random"), id="agent", compact=True,
                    suggester=SuggestFromList(["random", "human", *PROVIDER_EXAMPLES], case_sensitive=False)))
                yield from self._row("preset", Select([], prompt="pick an agent…", id="agent-preset", compact=True))
                yield from self._row("out", Input(str(self.out), id="out", compact=True))
                yield from self._row("play", Select([("real time", "realtime"), ("paused", "paused")],
                                                    value=_arg(self.args, "mode", "realtime"), allow_blank=False,
                                                    id="play-mode", compact=True))
                yield from self._row("pace", Select([("paper 0.1 s/action", "paper"), ("native 60 fps", "native")],
                                                    value=_arg(self.args, "pace", "paper"), allow_blank=False,
                                                    id="play-pace", compact=True))
                yield Static("protocol: paper defaults, changes in colour", classes="section")
                for name, (label, kind) in PROTOCOL_FIELDS.items():
                    yield from self._row(label, self._protocol_widget(name, kind), name=name)
                with Horizontal(id="start-buttons"):
                    yield Button("Watch w", id="watch", variant="primary", compact=True)
                    yield Button("Step s", id="step", compact=True)
                    yield Button("Play p", id="play", variant="success", compact=True)
        with Vertical(id="recent-box"):
            with Horizontal(id="recent-head"):
                yield Label("enter or o opens the highlighted recording; play it back turn by turn", id="recent-hint")
                yield Button("Open o", id="open", compact=True)
            yield OptionList(id="recent")
        yield Footer()

    def _row(self, label: str, widget, name: str | None = None):
        row = Horizontal(Label(label, classes="field-label"), widget, classes="field")
        if name:
            row.add_class(f"field-{name}")
        yield row

    def _protocol_widget(self, name: str, kind: Any):
        default = getattr(Protocol(), name)
        cli_name = {"feedback": "no_feedback"}.get(name, name)
        value = getattr(self.args, cli_name, None) if self.args is not None else None
        if name == "feedback":
            return Checkbox("reward/life notices", value=not bool(value), id=f"p-{name}",
                            compact=True)
        if value is None:
            value = default
        if isinstance(kind, tuple):
            return Select([(c, c) for c in kind], value=str(value), allow_blank=False, id=f"p-{name}", compact=True)
        return Input(str(value), type="integer" if kind == "int" else "text", id=f"p-{name}", compact=True)

    def on_mount(self) -> None:
        self.query_one("#games-col").border_title = "game"
        self.query_one("#games-col").border_subtitle = "* not among the paper's 20"
        self.query_one("#preview-col").border_title = "first frame"
        self.query_one("#settings-col").border_title = "settings"
        self.query_one("#recent-box").border_title = f"recent recordings in {self.out}/"
        table = self.query_one("#games", DataTable)
        table.add_columns("game", "genre", "primary skill")
        for key, g in GAMES.items():
            table.add_row(key if g.in_paper else f"{key}*", g.genre, g.skill, key=key)
        table.move_cursor(row=self.game_keys.index(self.selected_game))
        table.focus()
        self.refresh_recent()
        self._mark_changed()
        self._show_game(self.selected_game)

    # -- games and preview -------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value in GAMES:
            self.selected_game = event.row_key.value
            self._show_game(self.selected_game)

    def _show_game(self, key: str) -> None:
        g = GAMES[key]
        info = Text()
        info.append(f"{g.ale_name}", style="bold")
        info.append(f"  {g.genre} · {g.skill}\n", style="dim")
        info.append(f"actions: {', '.join(g.action_names)}\n")
        info.append(f"warm-up {g.warmup_seconds} s ({g.warmup_frames} frames) · {g.height}x160", style="dim")
        if not g.in_paper:
            info.append("\n* not among the paper's 20 games", style="yellow")
        self.query_one("#game-info", Static).update(info)
        start = self._start_text()
        if (key, start) in self._previews:
            self._show_preview(key, start)
        else:
            self.load_preview(key, start)

    def _show_preview(self, key: str, start: str) -> None:
        self._preview_view.show(self._previews[(key, start)], 0)
        self.preview_game = key

    def on_home_screen_preview_ready(self, m: PreviewReady) -> None:
        if m.key == self.selected_game and m.start == self._start_text():
            self._show_preview(m.key, m.start)

    def _start_text(self) -> str:
        try:
            return str(StartOption.parse(self.query_one("#p-start", Input).value))
        except ProtocolError:
            return "fixed"

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def load_preview(self, key: str, start: str) -> None:
        """The game's first budget frame, from a real emulator (seed 0)."""
        clock = GameClock(GAMES[key], Protocol(start=StartOption.parse(start)), seed=0)
        try:
            clock.start()
            rgb = clock.rgb.copy()
        finally:
            clock.close()
        self._previews[(key, start)] = rgb
        if not get_current_worker().is_cancelled:
            self.post_message(self.PreviewReady(key, start))

    # -- recordings ----------------------------------------------------------
    def refresh_recent(self) -> None:
        """Re-read the recordings under the out directory (newest first)."""
        self.recent = find_recordings(self.out)[:MAX_RECENT]
        box = self.query_one("#recent", OptionList)
        box.clear_options()
        if self.recent:
            box.add_options([Option(recent_label(p)) for p in self.recent])
            box.highlighted = 0
        else:
            box.add_option(Option(Text(f"no recordings in {self.out} yet: watch a run to make one", style="dim"),
                                  disabled=True))
        presets = [("random", "random"), ("human (play yourself)", "human")]
        presets += [(f"replay:{p.name}", f"replay:{p}") for p in self.recent[:5]]
        presets += [(f"{spec} (needs a key)", spec) for spec in PROVIDER_EXAMPLES[:3]]
        self.query_one("#agent-preset", Select).set_options(presets)

    def on_screen_resume(self) -> None:
        self.refresh_recent()

    # -- settings --------------------------------------------------------------
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "agent-preset" and isinstance(event.value, str):
            self.query_one("#agent", Input).value = event.value
        self._mark_changed()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "out":
            self.out = Path(event.value or "recordings")
        self._mark_changed()
        if event.input.id == "p-start":
            self._show_game(self.selected_game)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self._mark_changed()

    def _field_value(self, name: str) -> Any:
        return self.query_one(f"#p-{name}").value

    def _mark_changed(self) -> None:
        """Highlight protocol rows whose value is not the paper's."""
        base = Protocol()
        if not self.is_mounted:
            return
        for name in PROTOCOL_FIELDS:
            value = self._field_value(name)
            default = getattr(base, name)
            self.query_one(f".field-{name}").set_class(str(value).strip() != str(default), "-changed")

    def protocol(self) -> Protocol:
        """The protocol the form describes; raises ProtocolError with a one-line message."""
        values: dict[str, Any] = {}
        for name, (label, kind) in PROTOCOL_FIELDS.items():
            raw = self._field_value(name)
            if kind == "int":
                try:
                    values[name] = int(str(raw).strip())
                except ValueError:
                    raise ProtocolError(f"{label} must be a whole number (got {raw!r})") from None
            elif name == "start":
                values[name] = StartOption.parse(str(raw))
            else:
                values[name] = raw
        return Protocol(**values)

    def settings(self) -> dict[str, Any]:
        """What a run needs, read from the form (raises ProtocolError / ValueError on bad input)."""
        seed_text = self.query_one("#seed", Input).value.strip() or "0"
        try:
            seed = int(seed_text)
        except ValueError:
            raise ProtocolError(f"seed must be a whole number (got {seed_text!r})") from None
        return {
            "game": self.selected_game,
            "seed": seed,
            "agent": self.query_one("#agent", Input).value.strip() or "random",
            "out": str(self.out),
            "protocol": self.protocol(),
            "prompts": _arg(self.args, "prompts", None),
            "mode": self.query_one("#play-mode", Select).value,
            "pace": self.query_one("#play-pace", Select).value,
        }

    # -- actions -----------------------------------------------------------------
    def action_start(self, kind: str) -> None:
        try:
            settings = self.settings()
        except ProtocolError as e:
            self.notify(str(e), title="cannot start", severity="error")
            return
        self.post_message(StartRun(kind, settings))

    def action_open(self) -> None:
        box = self.query_one("#recent", OptionList)
        if not self.recent or box.highlighted is None:
            self.notify(f"no recording to open in {self.out}", severity="warning")
            return
        self.post_message(OpenRecording(self.recent[box.highlighted]))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "recent":
            self.action_open()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("watch", "step", "play"):
            self.action_start(event.button.id)
        elif event.button.id == "open":
            self.action_open()

    def palette_commands(self) -> list[tuple[str, str, object]]:
        g = self.selected_game
        return [
            (f"Watch {g}", "start a live run with the chosen agent (w)", lambda: self.action_start("watch")),
            (f"Step through {g}", "start a run in step mode (s)", lambda: self.action_start("step")),
            (f"Play {g} yourself", "human play, recorded like a model run (p)", lambda: self.action_start("play")),
            ("Open the selected recording", "replay it turn by turn (o)", self.action_open),
            ("Refresh recordings", f"re-read {self.out}", self.refresh_recent),
        ]
