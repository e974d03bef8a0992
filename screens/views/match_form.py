"""Start a two-player match from the home screen: a small form (game, opponent, your side, mode, seed, frames).

The home screen's command palette has "Start a two-player match"; ``v`` there
opens this form too. It checks the match exactly as `workstation play --game G
--vs SPEC` does (the same parser and checks, so the two never disagree); a bad
field is marked and named, and the form stays open. Side "both" seats two people
on one keyboard (the opponent field is then ignored). A good match opens the
match screen; leaving it comes back to home; Cancel or Esc closes the form and says so.

A model opponent (``compat:MODEL`` on a server of your own) gets its own base URL, taken from the home
screen's base URL setting by default; the form hands it on as ``p1_base_url`` / ``p2_base_url`` (the side
the opponent plays), so each side of a match can talk to its own server. Errors name the form's fields,
not the command line's flags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, Select, Static

from screens.messages import PaletteCommand
from screens.widgets.alive import SafeSelect
from workstation.base.errors import UserError
from workstation.game.twoplayer import TWO_PLAYER_GAMES

SIDE_CHOICES = (("1 (you play side 1)", "1"), ("2 (you play side 2)", "2"), ("both: two people", "both"))
MODE_CHOICES = (("paused", "paused"), ("real time", "realtime"))
# which field an error from `play --vs` is about, by the flag it names first
FIELD_OF_FLAG = {"--vs": "#mf-vs", "--side": "#mf-side", "--seed": "#mf-seed", "--frames": "#mf-frames",
                 "--mode": "#mf-mode", "--base-url": "#mf-url"}
# which field an error is about, by the setting it carries (UserError.field)
FIELD_OF_SETTING = {"agent": "#mf-vs", "seed": "#mf-seed", "frames": "#mf-frames", "mode": "#mf-mode",
                    "base_url": "#mf-url", "p1_base_url": "#mf-url", "p2_base_url": "#mf-url"}
# the form's own name for each flag an error may name: the form has fields, not flags
FORM_NAME = {"needs --base-url": "needs a URL in the opponent's base URL field",
             "--p1-base-url": "the opponent's base URL field", "--p2-base-url": "the opponent's base URL field",
             "--base-url": "the opponent's base URL field", "--vs": "the opponent field", "--seed": "the seed field",
             "--frames": "the frames field", "--side": "the side field", "--mode": "the mode field"}
URL_LABEL = "opponent's base URL (a model on its own server; empty: none)"


def in_form_words(message: str) -> str:
    """The message with each command-line flag replaced by the form field it stands for."""
    for flag, name in FORM_NAME.items():  # the longer phrase first
        message = message.replace(flag, name)
    return message


def field_for(message: str) -> str:
    """The form field a one-line error names (the game field when it names no flag of the form)."""
    hits = [(message.find(flag), wid) for flag, wid in FIELD_OF_FLAG.items() if flag in message]
    return min(hits)[1] if hits else "#mf-game"


class MatchForm(ModalScreen[Any]):
    """Game, opponent spec, side, mode, seed and frames; enter or Start checks and opens the match."""

    CSS = """
    MatchForm { align: center middle; }
    #mf-box { width: 72; height: auto; max-height: 100%; padding: 1 2; background: $panel; border: round $accent; }
    #mf-box Label { margin-top: 1; }
    #mf-error { color: $error; margin-top: 1; }
    #mf-buttons { height: auto; margin-top: 1; }
    .-invalid { border: tall $error; height: 3; }
    """
    BINDINGS: ClassVar = [
        Binding("escape", "cancel", "Cancel"),
        Binding("f1", "app.help", "Help"),  # a modal screen hides the app's keys: its own F1
    ]

    def __init__(self, out: str | Path, game: str | None = None, base_url: str | None = None) -> None:
        super().__init__()
        self.out = str(out)
        self.game = game if game in TWO_PLAYER_GAMES else "boxing"
        self.base_url = (base_url or "").strip()  # the home screen's base URL setting: the field's default
        self.invalid: str | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="mf-box"):
            yield Static("[b]A two-player match[/b]  (you against an agent, or two people)")
            yield Static("", id="mf-error")  # at the top: in view however small the terminal
            yield Label("game")
            yield SafeSelect([(k, k) for k in TWO_PLAYER_GAMES], value=self.game, allow_blank=False, id="mf-game", compact=True)
            yield Label("opponent (random, replay:PATH, openai:MODEL, ...)")
            yield Input("random", id="mf-vs", compact=True)
            yield Label("your side")
            yield SafeSelect(SIDE_CHOICES, value="1", allow_blank=False, id="mf-side", compact=True)
            yield Label("mode")
            yield SafeSelect(MODE_CHOICES, value="paused", allow_blank=False, id="mf-mode", compact=True)
            yield Label("seed")
            yield Input("0", id="mf-seed", compact=True)
            yield Label("frames (empty: the protocol's budget)")
            yield Input("", id="mf-frames", compact=True)
            yield Label(URL_LABEL)  # last: only a model opponent on a server of its own needs it
            yield Input(self.base_url, placeholder="empty; e.g. http://localhost:11434/v1", id="mf-url", compact=True)
            with Horizontal(id="mf-buttons"):
                yield Button("Start", id="mf-start", variant="primary")
                yield Button("Cancel", id="mf-cancel")
        yield Footer()  # this form's keys, not those of the screen under it

    def on_mount(self) -> None:
        self.query_one("#mf-error", Static).display = False
        self.query_one("#mf-vs", Input).focus()

    def values(self) -> dict[str, str]:
        return {"game": str(self.query_one("#mf-game", Select).value),
                "vs": self.query_one("#mf-vs", Input).value.strip(),
                "url": self.query_one("#mf-url", Input).value.strip(),
                "side": str(self.query_one("#mf-side", Select).value),
                "mode": str(self.query_one("#mf-mode", Select).value),
                "seed": self.query_one("#mf-seed", Input).value.strip(),
                "frames": self.query_one("#mf-frames", Input).value.strip()}

    def check(self) -> dict[str, Any]:
        """The match the form describes, checked as `play --vs` checks it (UserError: one line)."""
        import argparse

        from workstation.run.agents.registry import is_model
        from workstation.run.match_vs import play_vs
        from workstation.run.options import add_play_arguments

        v = self.values()
        for name in ("seed", "frames"):
            if v[name] and not v[name].isdigit():
                raise UserError(f"--{name} must be a whole number 0 or more (got {v[name]!r})", name)
        if not v["seed"]:
            raise UserError("--seed: give a seed, e.g. 0", "seed")
        if not v["vs"] and v["side"] != "both":
            raise UserError("--vs: name the opponent, e.g. random", "agent")
        vs = "human" if v["side"] == "both" else v["vs"]
        side = "1" if v["side"] == "both" else v["side"]
        url = v["url"] if is_model(vs) else ""  # a URL means nothing to random, replay or a person: not passed on
        argv = ["play", "--game", v["game"], "--vs", vs, "--side", side, "--mode", v["mode"], "--seed", v["seed"],
                "--out", self.out] + (["--frames", v["frames"]] if v["frames"] else []) + \
            (["--base-url", url] if url else [])
        try:
            parser = argparse.ArgumentParser(prog="play", exit_on_error=False, add_help=False)
            add_play_arguments(parser)
            parsed = parser.parse_args(argv[1:])
        except (SystemExit, argparse.ArgumentError):
            raise UserError("the form's values do not make a match; check each field") from None
        # one URL per player: the opponent's side gets the field's URL, the person's side none (None: base_url)
        opponent = 3 - int(side)
        urls = {f"p{s}_base_url": (url or None) if s == opponent else None for s in (1, 2)}
        return play_vs(argparse.Namespace(**vars(parsed), **urls))

    def start(self) -> None:
        self._clear()
        try:
            launch = self.check()
        except UserError as e:
            self.mark(self.field_at_fault(e), in_form_words(str(e)))
            return
        self.dismiss(launch)

    def field_at_fault(self, e: UserError) -> str:
        """The field an error is about: by the setting it carries, else by the flag it names.

        A model opponent with no base URL is the opponent's fault (pick one that needs no server, or fill in
        its URL); a URL that is there but wrong is the URL field's.
        """
        field = FIELD_OF_SETTING.get(e.field or "") or field_for(str(e))
        if field == "#mf-url" and not self.values()["url"]:
            return "#mf-vs"
        return field

    def mark(self, field: str, message: str) -> None:
        self.invalid = field
        self.query_one(field).add_class("-invalid")
        error = self.query_one("#mf-error", Static)
        error.update(message)
        error.display = True

    def _clear(self) -> None:
        for node in self.query(".-invalid"):
            node.remove_class("-invalid")
        self.query_one("#mf-error", Static).display = False
        self.invalid = None

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.start()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "mf-start":
            self.start()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        self.app.notify("match form closed: no match started", title="two-player match")
        self.dismiss(None)


def open_match_form(app: Any, out: str | Path, game: str | None = None, base_url: str | None = None) -> None:
    """Push the form; a good match opens its screen (two people: the hotseat screen)."""

    def started(launch: dict[str, Any] | None) -> None:
        if not launch:
            return
        if launch["person"] == 0:
            from screens.views.hotseat import HotseatScreen

            app.push_screen(HotseatScreen(launch["spec"], launch["pace"]))
        else:
            from screens.views.match import MatchScreen

            app.push_screen(MatchScreen(launch["spec"], launch["person"], launch["mode"], launch["pace"]))

    app.push_screen(MatchForm(out, game, base_url), callback=started)


def match_commands(home: Any) -> list[PaletteCommand]:
    """The home palette's entry (a two-player game highlighted on home is the form's first game)."""
    game = getattr(home, "selected_game", None)
    return [("Start a two-player match", "you against an agent, or two people on one keyboard (v)",
             lambda: open_match_form(home.app, home.out, game, home_base_url(home)))]


def home_base_url(home: Any) -> str | None:
    """The home screen's base URL setting (the match form's default for a model opponent), if it has one."""
    from textual.css.query import NoMatches

    try:
        return str(home.query_one("#m-base_url", Input).value).strip() or None
    except NoMatches:
        return None
