"""The Textual app: one factory for the CLI and the tests, the command palette and the help screen.

``run_app(which, args)`` is what ``workstation`` (home), ``workstation watch``,
``workstation play`` and ``workstation open`` call. ``make_app`` builds the app
without running it; it checks the inputs first (game, agent, recording), so a
bad one fails as a one-line user error before any screen is drawn.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

from screens.messages import OpenRecording, StartRun

HELP = """\
# Atari VLM workstation: keys

**Everywhere**: `F1` or `?` this help · `ctrl+p` command palette · `ctrl+q` quit
(`q` quits too, except while you play).

## Home
`↑` `↓` pick a game · `w` watch · `s` step mode · `p` play yourself · `o` or `enter` open the highlighted
recording.
Agents: `random`, `human`, `replay:PATH`, or a provider spec such as `openai:gpt-5.1`
(`openai`, `anthropic`, `gemini`, `compat` need their key in the environment).
Protocol settings start at the paper's values; a changed one is highlighted.

## Live view
`space` pause / resume · `f` speed: paper pace (0.1 s per action), fast, instant ·
`s` step mode on / off · `x` stop the run (kept, marked incomplete) · `esc` back (from a focused field,
such as the prompt text or the override box, `esc` first leaves the field).
The prompt pane shows the prompt exactly as sent; pick an image in its list to preview that frame.

## Step mode
The run holds **before each prompt is sent** and **after each reply is parsed**.
Before sending: edit the text (the prompt pane is editable) then `ctrl+s` apply, `g` send (applies an
unapplied edit first), `c` swap in the current-frame-only prompt.
After the reply: `r` re-send, type actions in the override box and `o` (or enter) to override the plan,
`a` one action, `.` one frame, `t` the rest of the turn.
Pick a turn and `b` to rewind to its start and branch: the run goes on in a new recording that
copies the parent's frames and turns up to that point.

## Play yourself
**Real time**: hold `←` `↑` `→` `↓` (or `w` `a` `s` `d`) to move and `space` to fire; keys held
together make a diagonal. The game samples the held keys once per action and never waits.

**Paused**: the game waits for your plan. The same keys queue actions (up to max actions), `+` then a
key joins it to the last action (`↑` `+` `←` is upleft), `n` (or `.`) queues a noop, `backspace`
removes the last, `enter` commits.

`esc` stops the game (the recording stays, marked incomplete); then `esc`, `enter` or `q` leaves.

## Open a recording
`←` `→` or `[` `]` previous / next turn · `,` `.` previous / next frame · `space` play / pause ·
`home` `end` first / last frame · `esc` back (or out of a focused field first).
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "Close")]

    def compose(self):
        with VerticalScroll(id="help"):
            yield Markdown(HELP)


class WorkstationCommands(Provider):
    """Palette commands: the current screen's main actions plus the app's."""

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        app = self.app
        screen = self.screen
        cmds: list[tuple[str, str, Callable[[], Any]]] = []
        if hasattr(screen, "palette_commands"):
            cmds += screen.palette_commands()
        cmds.append(("Help: keys and screens", "what every key does (F1 or ?)", app.action_help))
        if isinstance(app, WorkstationApp):
            cmds.append(("Open the newest recording", f"replay the latest run under {app.out}", app.open_newest))
        return cmds

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)


class WorkstationApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "Atari VLM workstation"
    COMMANDS = App.COMMANDS | {WorkstationCommands}
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
    ]

    def __init__(self, first: Callable[[], Screen], args: Any = None) -> None:
        super().__init__()
        self._first = first
        self.args = args
        self.out = Path(getattr(args, "out", None) or "recordings")
        self.speed = getattr(args, "speed", None) or "paper"

    def on_mount(self) -> None:
        self.push_screen(self._first())

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # -- requests from home ----------------------------------------------------
    def on_start_run(self, m: StartRun) -> None:
        s = m.settings
        if m.kind == "play" or s.get("agent") == "human":
            screen = play_screen(s, on_missing=lambda text: self.notify(text, severity="warning"))
            if screen is not None:
                self.push_screen(screen)
            return
        from workstation.errors import user_error_types

        try:
            engine = make_engine(s)
        except user_error_types() as e:
            self.notify(str(e), title="cannot start the run", severity="error", timeout=10)
            return
        from screens.views.live import LiveScreen

        self.push_screen(LiveScreen(engine, step_mode=m.kind == "step", speed=self.speed))

    def on_open_recording(self, m: OpenRecording) -> None:
        from workstation.store.recording import Recording, RecordingError

        from screens.views.replay_view import ReplayScreen

        try:
            self.push_screen(ReplayScreen(Recording(m.path)))
        except RecordingError as e:
            self.notify(str(e), title="cannot open", severity="error")

    def open_newest(self) -> None:
        from workstation.store.recording import find_recordings

        found = find_recordings(self.out)
        if not found:
            self.notify(f"no recordings under {self.out}", severity="warning")
            return
        self.post_message(OpenRecording(found[0]))


def make_engine(s: dict):
    """A started-later engine (and its recording) for the settings of a run."""
    from workstation.runs.start import RunSpec, start_run

    spec = RunSpec(game=s["game"], agent=s.get("agent", "random"), seed=int(s.get("seed", 0)),
                   protocol=s["protocol"], prompts=s.get("prompts"), out=s.get("out", "recordings"),
                   max_cost=s.get("max_cost"), provider_options=s.get("provider_options"))
    return start_run(spec)


def play_screen(s: dict, on_missing: Callable[[str], Any], can_go_back: bool = True) -> Screen | None:
    """The human-play screen, imported lazily; ``on_missing`` hears why when it is not there or cannot start."""
    try:
        from screens.views.play import PlayScreen
    except ImportError:
        on_missing("human play is not available in this build (screens/play.py is missing)")
        return None
    try:
        return PlayScreen(s["game"], s.get("seed", 0), s.get("mode", "realtime"), s.get("pace", "paper"),
                          s.get("out", "recordings"), s["protocol"], window=bool(s.get("window", False)),
                          can_go_back=can_go_back)
    except ValueError as e:  # bad play settings: say so, do not crash
        on_missing(str(e))
        return None


def _settings_from_args(args: argparse.Namespace) -> dict:
    from workstation.cli import _protocol_from, _provider_options
    from workstation.game.games import get_game

    game = get_game(args.game).key
    agent = getattr(args, "agent", "random")
    return {
        "game": game, "seed": args.seed, "agent": agent, "out": args.out, "protocol": _protocol_from(args),
        "prompts": getattr(args, "prompts", None), "max_cost": getattr(args, "max_cost", None),
        "provider_options": _provider_options(args) if hasattr(args, "base_url") else None,
        "mode": getattr(args, "mode", "realtime"), "pace": getattr(args, "pace", "paper"),
        "window": bool(getattr(args, "window", False)),
    }


def make_app(which: str, args: Any = None) -> WorkstationApp:
    """The app for ``which`` in {home, watch, play, open}; bad inputs raise one-line user errors."""
    if which == "home":
        from screens.views.home import HomeScreen

        return WorkstationApp(lambda: HomeScreen(args), args)
    if which == "watch":
        from screens.views.live import LiveScreen

        engine = make_engine(_settings_from_args(args))
        speed = getattr(args, "speed", None) or "paper"
        return WorkstationApp(lambda: LiveScreen(engine, step_mode=bool(getattr(args, "step", False)), speed=speed,
                                                 can_go_back=False), args)
    if which == "open":
        from workstation.store.recording import Recording

        from screens.views.replay_view import ReplayScreen

        rec = Recording(Path(args.recording))
        rec.turns, rec.frames  # read now: a damaged recording is a one-line RecordingError, not a traceback
        return WorkstationApp(lambda: ReplayScreen(rec, can_go_back=False), args)
    if which == "play":
        from workstation.cli import UserError

        def refuse(text: str) -> None:
            raise UserError(text)

        screen = play_screen(_settings_from_args(args), on_missing=refuse, can_go_back=False)
        return WorkstationApp(lambda: screen, args)
    raise ValueError(f"unknown screen {which!r}: use home, watch, play or open")


def run_app(which: str, args: argparse.Namespace) -> int:
    """Run the TUI; returns the exit status."""
    app = make_app(which, args)
    app.run()
    return app.return_code or 0
