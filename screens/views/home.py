"""Home: pick a game, seed, agent and protocol settings, then watch, step, play, or open a recording.

Everything here works offline and without a key: the game preview is the
emulator's own first frame after warm-up (computed in a thread worker and
cached), and random, human and replay agents need no network.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Button, Checkbox, DataTable, Footer, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from screens.messages import OpenRecording, PaletteCommand, StartRun
from screens.views.match_form import home_base_url, match_commands, open_match_form
from screens.widgets.alive import SafeSelect, unless_leaving
from screens.widgets.frame_view import FrameView
from workstation.base.locations import RECORDINGS
from workstation.base.words import plural
from workstation.game.clock import GameClock
from workstation.game.games import GAMES
from workstation.game.protocol import SETTINGS, Protocol, ProtocolError, StartOption
from workstation.run.options import MODEL_CLI, RUN_SETTING, RunSpec, SpecError, flat_values, preflight, spec_from_values
from workstation.store import integrity
from workstation.store.changes import mark
from workstation.store.index import find_recordings
from workstation.store.recording import Recording
from workstation.store.records import RecordingError

MAX_RECENT = 20
OPEN_HINT = "enter or o opens the highlighted recording (play it back turn by turn); m marks it for compare"
PROVIDER_EXAMPLES = ["openai:gpt-5.1", "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash", "compat:MODEL"]

# The form's protocol rows, generated from the protocol's declaration: field -> (label, kind),
# kind is "int", "text", "bool" or a tuple of choices.
PROTOCOL_FIELDS: dict[str, tuple[str, Any]] = {
    s.name: (s.title, s.choices or {int: "int", bool: "bool"}.get(s.type, "text")) for s in SETTINGS
    if s.cli and s.form
}
# Spec fields the form shows outside the protocol rows -> the widget that holds them
FIELD_WIDGETS = {"seed": "#seed", "agent": "#agent", "out": "#out", "mode": "#play-mode", "pace": "#play-pace",
                 **{name: f"#p-{name}" for name in PROTOCOL_FIELDS}, **{name: f"#m-{name}" for name in MODEL_CLI}}


def _arg(args: Any, name: str, default: Any) -> Any:
    value = getattr(args, name, None)
    return default if value is None else value


class _Initial:
    """The form's first values, read from a spec (None: the defaults)."""

    def __init__(self, spec: RunSpec | None) -> None:
        if spec is not None:
            self.seed, self.agent, self.mode = spec.seed, spec.agent, spec.mode
            self.pace = spec.pace if spec.pace in ("paper", "native") else None


def recent_label(path: Path) -> Text:
    """One line per recording: name, score, turns, state."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(path.name)
    try:
        rec = Recording(path)
        s = rec.outcome()  # typed: the stored summary, or one rebuilt from the turns of a killed run
        damage = integrity.problems(rec)  # digests and totals against the turns: a forged score shows here
    except RecordingError as e:
        text.append(f"  unreadable: {e}", style="red")
        return text
    if damage:
        text.append(f"  DAMAGED: {damage[0]}", style="bold red")
        return text
    text.append(f"  score {s.total_reward:g}  {plural(s.turns, 'turn')}", style="dim")
    # the word `workstation ls` prints: complete, stopped, or unfinished (killed or still running)
    text.append(f"  {s.state}", style={"complete": "green", "stopped": "yellow"}.get(s.state, "bold yellow"))
    if rec.interventions:
        text.append(f"  changed by hand ({mark(rec.interventions)})", style="bold yellow")
    return text


class HomeScreen(Screen[Any]):
    """The launcher."""

    # A refused field: its label and box in the error colour, the reason above the form.
    DEFAULT_CSS = """
    HomeScreen .field.-invalid .field-label { color: $error; text-style: bold; }
    HomeScreen .field.-invalid Input, HomeScreen .field.-invalid Select, HomeScreen .field.-invalid Checkbox {
        background: $error 30%;
    }
    HomeScreen #form-error { height: auto; color: $error; padding: 0 1; }
    HomeScreen #settings-col { scrollbar-size-vertical: 1; }
    """
    # Narrow or short terminals (app.tcss: HomeScreen.-narrow, HomeScreen.-short): below 120 columns the first
    # frame would be a sliver, so the game list takes its room; below 34 rows the start buttons stay in view.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (34, "-tall")]

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
        Binding("m", "mark", "Mark"),
        Binding("c", "compare", "Compare marked"),
        Binding("v", "match", "Match"),  # a two-player match: screens/views/match_form.py
        Binding("escape", "leave_field", "Leave field"),  # shown only while a field has the cursor
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, spec: RunSpec | None = None, out: str | Path | None = None) -> None:
        super().__init__()
        self.spec = spec  # the form starts from it (None: the paper's defaults)
        self.args = _Initial(spec)
        self.out = Path(out or (spec.out if spec else RECORDINGS))
        self.game_keys = list(GAMES)
        first = spec.game if spec else None
        self.selected_game = first if first in GAMES else "breakout"
        self.invalid: str | None = None  # the field the last start was refused for
        self.recent: list[Path] = []
        self.marked_for_compare: list[Path] = []  # recordings marked (m) to compare (c)
        self._previews: dict[tuple[str, str], Any] = {}
        self._preview_view = FrameView(id="preview")
        self.preview_game: str | None = None  # the game whose frame is on show

    # -- layout ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(Text.assemble(("Atari VLM workstation", "bold"), ("  AtariBench protocol · random, human and "
                     "replay agents need no key or network", "dim")), id="title")
        with Horizontal(id="home-body"):
            with Vertical(id="games-col"):
                yield DataTable(id="games", cursor_type="row", zebra_stripes=True)
            with Vertical(id="preview-col"):
                yield self._preview_view
                yield Static(id="game-info")
            with VerticalScroll(id="settings-col", can_focus=False):
                yield Static("run", classes="section")
                yield Static("", id="form-error")
                # type="text": a typed "-1" must reach the validation, which says why it is refused
                yield from self._row("seed", Input(str(_arg(self.args, "seed", 0)), id="seed", compact=True),
                                     name="seed")
                yield from self._row("agent", Input(
                    _arg(self.args, "agent", "random"), id="agent", compact=True,
                    suggester=SuggestFromList(["random", "human", *PROVIDER_EXAMPLES], case_sensitive=False)),
                    name="agent")
                yield from self._row("preset", SafeSelect([], prompt="pick an agent…", id="agent-preset", compact=True))
                yield from self._row("out", Input(str(self.out), id="out", compact=True), name="out")
                yield from self._row("play", SafeSelect([("real time", "realtime"), ("paused", "paused")],
                                                    value=_arg(self.args, "mode", "realtime"), allow_blank=False,
                                                    id="play-mode", compact=True), name="mode")
                yield from self._row("pace", SafeSelect([("paper 0.1 s/action", "paper"), ("native 60 fps", "native")],
                                                    value=_arg(self.args, "pace", "paper"), allow_blank=False,
                                                    id="play-pace", compact=True), name="pace")
                yield Static("protocol: paper defaults, changes in colour", classes="section")
                for name, (label, kind) in PROTOCOL_FIELDS.items():
                    yield from self._row(label, self._protocol_widget(name, kind), name=name)
                with Horizontal(id="start-buttons"):
                    yield Button("Watch w", id="watch", variant="primary", compact=True)
                    yield Button("Step s", id="step", compact=True)
                    yield Button("Play p", id="play", variant="success", compact=True)
                yield Static("model agents: empty = the provider's default", classes="section")
                for name in MODEL_CLI:
                    yield from self._row(RUN_SETTING[name].title, self._model_widget(name), name=name)
        with Vertical(id="recent-box"):
            with Horizontal(id="recent-head"):
                yield Label(OPEN_HINT, id="recent-hint")
                yield Button("Open o", id="open", compact=True)
            yield OptionList(id="recent")
        yield Footer()

    def _row(self, label: str, widget: Widget, name: str | None = None) -> Iterator[Horizontal]:
        row = Horizontal(Label(label, classes="field-label"), widget, classes="field")
        if name:
            row.add_class(f"field-{name}")
        yield row

    def _protocol_widget(self, name: str, kind: Any) -> Widget:
        value = getattr(self.spec.protocol if self.spec else Protocol(), name)
        if kind == "bool":
            return Checkbox("reward/life notices", value=bool(value), id=f"p-{name}", compact=True)
        if isinstance(kind, tuple):
            return SafeSelect([(c, c) for c in kind], value=str(value), allow_blank=False, id=f"p-{name}", compact=True)
        return Input(str(value), id=f"p-{name}", compact=True)

    def _model_widget(self, name: str) -> Widget:
        s = RUN_SETTING[name]
        value = flat_values(self.spec).get(name) if self.spec else None
        if s.choices:
            extra = {"value": value} if value in s.choices else {}  # else blank: the provider's default
            return SafeSelect([(c, c) for c in s.choices], prompt="default", id=f"m-{name}", compact=True, **extra)
        return Input("" if value is None else f"{value:g}" if isinstance(value, float) else str(value),
                     placeholder="default", id=f"m-{name}", compact=True)

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
        self.query_one("#form-error", Static).display = False
        self.refresh_recent()
        self._mark_changed()
        self._show_game(self.selected_game)

    # -- games and preview -------------------------------------------------
    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a game: it is chosen; on to its settings (w, s or p then starts it)."""
        if event.row_key is not None and event.row_key.value in GAMES:
            self.selected_game = event.row_key.value
            self.query_one("#seed", Input).focus()
            self.query_one("#settings-col").border_title = f"settings for {self.selected_game}"

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

    @unless_leaving
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
        """Re-read the recordings under the out directory (newest first); marks and the highlight stay on their
        recordings (a mark on one that is gone is dropped)."""
        box = self.query_one("#recent", OptionList)
        was = self.recent[box.highlighted] if self.recent and box.highlighted is not None else None
        self.recent = find_recordings(self.out)[:MAX_RECENT]
        self.marked_for_compare = [p for p in self.marked_for_compare if p in self.recent]
        box.clear_options()
        if self.recent:
            box.add_options([Option(self._recent_prompt(p)) for p in self.recent])
            box.highlighted = self.recent.index(was) if was in self.recent else 0
        else:
            box.add_option(Option(Text(f"no recordings in {self.out} yet: watch a run to make one", style="dim"),
                                  disabled=True))
        presets = [("random", "random"), ("human (play yourself)", "human")]
        presets += [(f"replay:{p.name}", f"replay:{p}") for p in self.recent[:5]]
        presets += [(f"{spec} (needs a key)", spec) for spec in PROVIDER_EXAMPLES[:3]]
        self.query_one("#agent-preset", Select).set_options(presets)

    def _recent_prompt(self, path: Path) -> Text:
        label = recent_label(path)
        return Text.assemble(("✓ ", "bold green"), label) if path in self.marked_for_compare else label

    @unless_leaving
    def on_screen_resume(self) -> None:
        self.refresh_recent()
        self._show_marked()

    @unless_leaving
    def recordings_changed(self) -> None:
        """A run's recording closed, maybe after its screen was left (a run changed by hand is renamed then)."""
        self.refresh_recent()
        self._show_marked()

    # -- settings --------------------------------------------------------------
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "agent-preset" and isinstance(event.value, str):
            self.query_one("#agent", Input).value = event.value
        self._clear_invalid()
        self._mark_changed()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "out":
            self.out = Path(event.value or RECORDINGS)
        self._clear_invalid()
        self._mark_changed()
        if event.input.id == "p-start":
            self._show_game(self.selected_game)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self._clear_invalid()
        self._mark_changed()

    def _field_value(self, name: str) -> Any:
        return getattr(self.query_one(f"#p-{name}"), "value", None)  # an Input, Select or Checkbox

    def _mark_changed(self) -> None:
        """Highlight protocol rows whose value is not the paper's."""
        base = Protocol()
        if not self.is_mounted:
            return
        for name in PROTOCOL_FIELDS:
            value = self._field_value(name)
            default = getattr(base, name)
            self.query_one(f".field-{name}").set_class(str(value).strip() != str(default), "-changed")

    def form_values(self, kind: str = "watch") -> dict[str, Any]:
        """The form's fields by spec field name, as typed (the spec reads and checks them)."""
        values: dict[str, Any] = {name: self._field_value(name) for name in PROTOCOL_FIELDS}
        agent = self.query_one("#agent", Input).value.strip() or "random"
        values.update(game=self.selected_game, seed=self.query_one("#seed", Input).value.strip() or "0",
                      agent=agent, out=str(self.out).strip(), prompts=self.spec.prompts if self.spec else None)
        if kind == "play" or agent.lower() == "human":
            values.update(agent="human", mode=self.query_one("#play-mode", Select).value,
                          pace=self.query_one("#play-pace", Select).value)
        for name in MODEL_CLI:  # set ones only: a model option for another agent is refused and marked
            raw = getattr(self.query_one(f"#m-{name}"), "value", None)  # an Input or a Select
            if isinstance(raw, str) and raw.strip():
                values[name] = raw.strip()
        return values

    def run_spec(self, kind: str = "watch") -> RunSpec:
        """The checked spec the form describes; ``SpecError`` names the field at fault."""
        spec = spec_from_values(self.form_values(kind))
        preflight(spec)
        return spec

    # -- actions -----------------------------------------------------------------
    def action_start(self, kind: str) -> None:
        try:
            spec = self.run_spec(kind)
        except SpecError as e:
            self.mark_invalid(e.field, str(e))
            return
        except ProtocolError as e:  # pragma: no cover - every form field is a spec field
            self.notify(str(e), title="cannot start", severity="error")
            return
        self._clear_invalid()
        self.post_message(StartRun(kind, {"spec": spec}))

    def mark_invalid(self, field: str | None, message: str) -> None:
        """Mark the field at fault, say why under the form and in a notice, and put the cursor on it."""
        self._clear_invalid()
        self.invalid = field
        error = self.query_one("#form-error", Static)
        error.update(Text(message, style="bold red"))
        error.display = True
        self.notify(message, title="cannot start", severity="error")
        selector = FIELD_WIDGETS.get(field or "")
        if selector is None:
            return
        widget = self.query_one(selector)
        widget.add_class("-invalid")
        if widget.parent is not None:
            widget.parent.add_class("-invalid")
        widget.focus()

    def _clear_invalid(self) -> None:
        if self.invalid is None or not self.is_mounted:
            return
        for node in self.query(".-invalid"):
            node.remove_class("-invalid")
        self.query_one("#form-error", Static).display = False
        self.invalid = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_field":
            return self.is_mounted and self.focused is not self.query_one("#games", DataTable)
        return True

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def action_leave_field(self) -> None:
        """Esc in a form field (or the recordings list) goes back to the game list, so w/s/p/o work again."""
        table = self.query_one("#games", DataTable)
        if self.focused is not table:
            table.focus()

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

    def palette_commands(self) -> list[PaletteCommand]:
        g = self.selected_game
        return [
            (f"Watch {g}", "start a live run with the chosen agent (w)", lambda: self.action_start("watch")),
            (f"Step through {g}", "start a run in step mode (s)", lambda: self.action_start("step")),
            (f"Play {g} yourself", "human play, recorded like a model run (p)", lambda: self.action_start("play")),
            ("Open the selected recording", "replay it turn by turn (o)", self.action_open),
            ("Refresh recordings", f"re-read {self.out}", self.refresh_recent),
        ] + _batch_commands(self.app) + match_commands(self)

    def action_match(self) -> None:
        open_match_form(self.app, self.out, self.selected_game, home_base_url(self))

    # -- compare: mark recordings (m), then open them side by side (c) in screens/views/compare.py --
    def _marked(self) -> list[Path]:
        return self.marked_for_compare

    def action_mark(self) -> None:
        """Mark or unmark the highlighted recording for compare."""
        box = self.query_one("#recent", OptionList)
        if not self.recent or box.highlighted is None:
            self.notify(f"no recording to mark in {self.out}", severity="warning")
            return
        marked, path = self._marked(), self.recent[box.highlighted]
        marked.remove(path) if path in marked else marked.append(path)
        box.replace_option_prompt_at_index(box.highlighted, self._recent_prompt(path))
        self._show_marked()

    def _show_marked(self) -> None:
        marked = self._marked()
        self.query_one("#recent-hint", Label).update(
            f"{len(marked)} marked: c compares them side by side (m unmarks)" if marked else OPEN_HINT)

    def action_compare(self) -> None:
        from screens.views.compare import open_compare

        marked = [p for p in self._marked() if p in self.recent]
        if len(marked) < 2:
            self.notify("mark two to four recordings of one game with m, then c compares them", severity="warning")
            return
        open_compare(self.app, marked)


def _batch_commands(app: App[Any]) -> list[PaletteCommand]:
    """One palette command per batch under batches/ (screens/views/batch.py)."""
    from screens.views.batch import batch_commands

    return batch_commands(app)
