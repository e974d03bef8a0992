"""The Textual app: one factory for the CLI and the tests, the command palette and the help screen.

``make_app(launch)`` is the only way in: ``run_app(Launch(...))`` is what ``workstation``
(home), ``watch``, ``play``, ``open``, ``compare``, ``session``, ``batch --watch`` and
``qa curate`` call (through ``workstation.tui.open_tui``), and the tests build the same app.
A ``Launch`` (``workstation.run.launch``: one small type per screen) carries the run spec
(``workstation.run.options.RunSpec``), the recording, the batch or the question set. ``make_app`` builds the app without running it; it checks the
inputs first (spec, files, recording), so a bad one fails as a one-line user
error before any screen is drawn. Nothing here imports ``workstation.cli``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown

from screens.help_keys import EVERYWHERE, all_notes, help_markdown
from screens.messages import OpenRecording, PaletteCommand, RecordingClosed, StartRun
from workstation.base.errors import UserError
from workstation.base.locations import RECORDINGS
from workstation.run.launch import (
    LAUNCHES,
    SCREENS,
    BatchLaunch,
    CompareLaunch,
    HomeLaunch,
    IdcLaunch,
    Launch,
    MatchLaunch,
    OpenLaunch,
    PlayLaunch,
    QaCurateLaunch,
    SessionLaunch,
    WatchLaunch,
)
from workstation.run.options import RunSpec, preflight, spec_from_args

if TYPE_CHECKING:
    from workstation.engine.turn_engine import TurnEngine

# Every screen's notes in one text; F1 shows the current screen's own keys (screens/help_keys.py).
HELP = "# Atari VLM workstation: keys\n\n**Everywhere**: " + EVERYWHERE + "\n\n" + all_notes()


class HelpScreen(ModalScreen[None]):
    """The keys of the screen it was opened on (``text``: its Markdown), generated from that screen's bindings."""

    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "Close")]

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text or HELP

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(self.text)


class WorkstationCommands(Provider):
    """Palette commands: the current screen's main actions plus the app's."""

    def _commands(self) -> list[PaletteCommand]:
        app = self.app
        screen = self.screen
        cmds: list[PaletteCommand] = []
        if hasattr(screen, "palette_commands"):
            cmds += screen.palette_commands()
        if isinstance(app, WorkstationApp):
            cmds.append(("Help: keys and screens", "what every key does (F1 or ?)", app.action_help))
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

    def __init__(self, first: Callable[[], Screen[Any]], launch: Launch | None = None) -> None:
        super().__init__()
        self._first = first
        self.launch = launch or HomeLaunch()
        self.out = Path(self.launch.out)
        self.speed = self.launch.speed

    def on_mount(self) -> None:
        self.push_screen(self._first())

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(help_markdown(self.screen, self)))

    # -- requests from home ----------------------------------------------------
    def on_start_run(self, m: StartRun) -> None:
        spec = m.settings["spec"]
        if m.kind == "play" or spec.agent_ref.kind == "human":
            if spec.agent_ref.kind != "human":
                spec = spec.with_values(agent="human", effort=None, temperature=None, max_output_tokens=None,
                                        base_url=None, timeout=None, max_cost=None)
            screen = play_screen(spec, on_missing=lambda text: self.notify(text, severity="warning"),
                                 window=bool(m.settings.get("window", False)))
            if screen is not None:
                self.push_screen(screen)
            return
        from workstation.base.errors import UserError

        try:
            engine = make_engine(spec)
        except UserError as e:
            field = e.field
            if field and hasattr(self.screen, "mark_invalid"):  # the home form: mark the field at fault
                self.screen.mark_invalid(field, str(e))
            else:
                self.notify(str(e), title="cannot start the run", severity="error", timeout=10)
            return
        except OSError as e:  # the output place went away between the check and the start
            self.notify(f"cannot write the recording: {e}", title="cannot start the run", severity="error",
                        timeout=10)
            return
        from screens.views.live import LiveScreen

        self.push_screen(LiveScreen(engine, step_mode=m.kind == "step", speed=self.speed))

    def on_open_recording(self, m: OpenRecording) -> None:
        from screens.views.match_replay import replay_screen
        from workstation.store.recording import Recording
        from workstation.store.records import RecordingError

        try:
            self.push_screen(replay_screen(Recording(m.path)))
        except RecordingError as e:
            self.notify(str(e), title="cannot open", severity="error")

    def on_recording_closed(self, m: RecordingClosed) -> None:
        """A run's recording closed (maybe renamed): home, wherever it is in the stack, lists the disk again."""
        from screens.views.home import HomeScreen

        for screen in self.screen_stack:
            if isinstance(screen, HomeScreen):
                screen.recordings_changed()

    def open_newest(self) -> None:
        from workstation.store.index import find_recordings

        found = find_recordings(self.out)
        if not found:
            self.notify(f"no recordings under {self.out}", severity="warning")
            return
        self.post_message(OpenRecording(found[0]))


def launch_from_args(which: str, args: Any = None) -> Launch:
    """A ``Launch`` from an argparse namespace (or anything with those attributes)."""
    common = {"speed": getattr(args, "speed", None) or "paper", "out": getattr(args, "out", None) or RECORDINGS}
    if which in ("watch", "play"):
        spec = spec_from_args(args, agent="human" if which == "play" else None)
        if which == "watch":
            return WatchLaunch(spec, step=bool(getattr(args, "step", False)), **common)
        return PlayLaunch(spec, window=bool(getattr(args, "window", False)), **common)
    if which == "home":
        return HomeLaunch(**common)
    if which == "open":
        recording = getattr(args, "recording", None)
        if recording is None:
            raise UserError("open needs a recording: workstation open RECORDING")
        return OpenLaunch(recording, **common)
    if which == "compare":
        return CompareLaunch((), **common)
    if which in NEEDS:
        raise UserError(NEEDS[which])
    raise ValueError(f"unknown screen {which!r}: use {', '.join(SCREENS)}")


# what a screen needs that a command line alone does not give
NEEDS = {"session": "the session screen needs a session: workstation session --out DIR",
         "batch": "the batch screen needs a prepared batch: workstation batch GRID --watch",
         "qa_curate": "the curator needs a question set: workstation qa curate SET",
         "match": "the match screen needs a match: workstation play --game G --vs SPEC",
         "idc": "the IDC view needs a directory: workstation idc --view DIR"}


def make_engine(spec: RunSpec) -> TurnEngine:
    """A started-later engine (and its recording) for a run spec."""
    from workstation.run.start import start_run

    return start_run(spec)


def play_screen(spec: RunSpec, on_missing: Callable[[str], Any], can_go_back: bool = True,
                window: bool = False) -> Screen[Any] | None:
    """The human-play screen, imported lazily; ``on_missing`` hears why when it is not there or cannot start."""
    try:
        from screens.views.play import PlayScreen
    except ImportError:
        on_missing("human play is not available in this build (screens/play.py is missing)")
        return None
    try:
        return PlayScreen.from_spec(spec, window=window, can_go_back=can_go_back)
    except ValueError as e:  # bad play settings: say so, do not crash
        on_missing(str(e))
        return None


def make_app(launch: Launch | str = "home", args: Any = None) -> WorkstationApp:
    """The app for a ``Launch`` (or a screen name and an argparse namespace); bad inputs raise one-line errors.

    Everything is checked here, before any screen is drawn: the spec (``SpecError``), the
    files it needs (``preflight``), the recording to open (``RecordingError``). The launch's
    type picks the builder (``BUILDERS``).
    """
    if isinstance(launch, str):
        launch = args if isinstance(args, LAUNCHES) and args.screen == launch else launch_from_args(launch, args)
    return BUILDERS[type(launch)](launch)


def _home(launch: HomeLaunch) -> WorkstationApp:
    from screens.views.home import HomeScreen

    return WorkstationApp(lambda: HomeScreen(None, out=launch.out), launch)


def _watch(launch: WatchLaunch) -> WorkstationApp:
    from screens.views.live import LiveScreen

    preflight(launch.spec)
    engine = make_engine(launch.spec)
    return WorkstationApp(lambda: LiveScreen(engine, step_mode=launch.step, speed=launch.speed,
                                             can_go_back=False), launch)


def _play(launch: PlayLaunch) -> WorkstationApp:
    preflight(launch.spec)

    def refuse(text: str) -> None:
        raise UserError(text)

    screen = play_screen(launch.spec, on_missing=refuse, can_go_back=False, window=launch.window)
    if screen is None:  # refuse() has raised already; kept for the type checker
        raise UserError("human play is not available in this build")
    return WorkstationApp(lambda: screen, launch)


def _open(launch: OpenLaunch) -> WorkstationApp:
    from screens.views.match_replay import replay_screen
    from workstation.store.recording import Recording

    rec = Recording(Path(launch.recording))
    # read now, typed as the screen reads them: a damaged recording is a one-line RecordingError, not a traceback
    _ = rec.match_turns if rec.manifest_record.is_match else rec.turn_records, rec.frames
    return WorkstationApp(lambda: replay_screen(rec, can_go_back=False), launch)


def _compare(launch: CompareLaunch) -> WorkstationApp:
    from screens.views.compare import CompareScreen

    compare = CompareScreen.of(list(launch.recordings), can_go_back=False)  # bad input: UserError now
    return WorkstationApp(lambda: compare, launch)


def _session(launch: SessionLaunch) -> WorkstationApp:
    from screens.views.session import SessionScreen
    from workstation.studies.session import Session

    session = _checked(launch.session, Session)
    return WorkstationApp(lambda: SessionScreen(session, can_go_back=False), launch)


def _batch(launch: BatchLaunch) -> WorkstationApp:
    from screens.views.batch import BatchScreen
    from workstation.studies.batch.runner import Batch

    batch_screen = BatchScreen(_checked(launch.batch, Batch), can_go_back=False)  # now: it starts the resource tracker
    return WorkstationApp(lambda: batch_screen, launch)


def _qa_curate(launch: QaCurateLaunch) -> WorkstationApp:
    from screens.views.qa_curate import CurateScreen

    curator = CurateScreen(launch.qa_set, can_go_back=False)  # an empty or malformed set: UserError now
    return WorkstationApp(lambda: curator, launch)


def _match(launch: MatchLaunch) -> WorkstationApp:
    from screens.views.match import MatchScreen
    from workstation.run.match_start import MatchSpec

    spec = _checked(launch.spec, MatchSpec)
    if launch.person == 0:  # two people on one keyboard
        from screens.views.hotseat import HotseatScreen

        return WorkstationApp(lambda: HotseatScreen(spec, launch.pace, pacer=launch.pacer, can_go_back=False), launch)
    return WorkstationApp(lambda: MatchScreen(spec, launch.person, launch.mode, launch.pace, pacer=launch.pacer,
                                              can_go_back=False), launch)


def _idc(launch: IdcLaunch) -> WorkstationApp:
    from screens.views.idc import IdcScreen

    idc_screen = IdcScreen.of_dir(launch.idc_dir, can_go_back=False)
    return WorkstationApp(lambda: idc_screen, launch)


T = TypeVar("T")
L = TypeVar("L", HomeLaunch, WatchLaunch, PlayLaunch, OpenLaunch, CompareLaunch, SessionLaunch, BatchLaunch,
            QaCurateLaunch, MatchLaunch, IdcLaunch)


def _checked(value: object, kind: type[T]) -> T:
    """A launch's study object (typed by a protocol in ``workstation.run.launch``) as the class its screen takes."""
    if not isinstance(value, kind):
        raise TypeError(f"expected a {kind.__name__}, got {type(value).__name__}")
    return value


def _row(kind: type[L], build: Callable[[L], WorkstationApp]) -> tuple[type[Launch], Callable[[Launch], WorkstationApp]]:
    """One row of ``BUILDERS``: the type checker holds ``kind`` and ``build`` to the same launch type."""
    return kind, cast("Callable[[Launch], WorkstationApp]", build)


# the launch's type -> the builder of its app: one row per screen
BUILDERS: dict[type[Launch], Callable[[Launch], WorkstationApp]] = dict([
    _row(HomeLaunch, _home), _row(WatchLaunch, _watch), _row(PlayLaunch, _play), _row(OpenLaunch, _open),
    _row(CompareLaunch, _compare), _row(SessionLaunch, _session), _row(BatchLaunch, _batch),
    _row(QaCurateLaunch, _qa_curate), _row(MatchLaunch, _match), _row(IdcLaunch, _idc),
])
assert set(BUILDERS) == set(LAUNCHES), "every launch type has its builder"


def match_app(spec: Any, person: int, mode: str, pace: str, pacer: Any = None) -> WorkstationApp:
    """The app on a match screen (person 0: two people on one keyboard); leaving the screen ends it."""
    return make_app(MatchLaunch(spec, person, mode, pace, pacer=pacer, out=spec.out))


def run_app(launch: Launch | str = "home", args: Any = None) -> int:
    """Run the TUI; returns the exit status."""
    app = make_app(launch, args)
    app.run()
    return app.return_code or 0
