"""Start a two-player match from the home screen: a small form (game, opponent, your side, mode, seed, frames).

The home screen's command palette has "Start a two-player match"; ``v`` there
opens this form too. It checks the match exactly as `workstation play --game G
--vs SPEC` does (the same parser and checks, so the two never disagree); a bad
field is marked and named, and the form stays open. Side "both" seats two people
on one keyboard (the opponent field is then ignored). A good match opens the
match screen; leaving it comes back to home.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from workstation.errors import UserError
from workstation.game.twoplayer import TWO_PLAYER_GAMES

SIDE_CHOICES = (("1 (you play side 1)", "1"), ("2 (you play side 2)", "2"), ("both: two people", "both"))
MODE_CHOICES = (("paused", "paused"), ("real time", "realtime"))
# which field an error from `play --vs` is about, by the flag it names first
FIELD_OF_FLAG = {"--vs": "#mf-vs", "--side": "#mf-side", "--seed": "#mf-seed", "--frames": "#mf-frames",
                 "--mode": "#mf-mode"}


def field_for(message: str) -> str:
    """The form field a one-line error names (the game field when it names no flag of the form)."""
    hits = [(message.find(flag), wid) for flag, wid in FIELD_OF_FLAG.items() if flag in message]
    return min(hits)[1] if hits else "#mf-game"


class MatchForm(ModalScreen):
    """Game, opponent spec, side, mode, seed and frames; enter or Start checks and opens the match."""

    CSS = """
    MatchForm { align: center middle; }
    #mf-box { width: 72; height: auto; padding: 1 2; background: $panel; border: round $accent; }
    #mf-box Label { margin-top: 1; }
    #mf-error { color: $error; margin-top: 1; }
    #mf-buttons { height: auto; margin-top: 1; }
    .-invalid { border: tall $error; }
    """
    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, out: str | Path, game: str | None = None) -> None:
        super().__init__()
        self.out = str(out)
        self.game = game if game in TWO_PLAYER_GAMES else "boxing"
        self.invalid: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="mf-box"):
            yield Static("[b]A two-player match[/b]  (you against an agent, or two people)")
            yield Label("game")
            yield Select([(k, k) for k in TWO_PLAYER_GAMES], value=self.game, allow_blank=False, id="mf-game")
            yield Label("opponent (random, replay:PATH, openai:MODEL, ...)")
            yield Input("random", id="mf-vs")
            yield Label("your side")
            yield Select(SIDE_CHOICES, value="1", allow_blank=False, id="mf-side")
            yield Label("mode")
            yield Select(MODE_CHOICES, value="paused", allow_blank=False, id="mf-mode")
            yield Label("seed")
            yield Input("0", id="mf-seed")
            yield Label("frames (empty: the protocol's budget)")
            yield Input("", id="mf-frames")
            yield Static("", id="mf-error")
            with Horizontal(id="mf-buttons"):
                yield Button("Start", id="mf-start", variant="primary")
                yield Button("Cancel", id="mf-cancel")

    def on_mount(self) -> None:
        self.query_one("#mf-error", Static).display = False
        self.query_one("#mf-vs", Input).focus()

    def values(self) -> dict[str, str]:
        return {"game": str(self.query_one("#mf-game", Select).value),
                "vs": self.query_one("#mf-vs", Input).value.strip(),
                "side": str(self.query_one("#mf-side", Select).value),
                "mode": str(self.query_one("#mf-mode", Select).value),
                "seed": self.query_one("#mf-seed", Input).value.strip(),
                "frames": self.query_one("#mf-frames", Input).value.strip()}

    def check(self) -> dict[str, Any]:
        """The match the form describes, checked as `play --vs` checks it (UserError: one line)."""
        from workstation.arena.command import play_vs
        import argparse

        from workstation.options import add_play_arguments

        v = self.values()
        for name in ("seed", "frames"):
            if v[name] and not v[name].isdigit():
                raise UserError(f"--{name} must be a whole number 0 or more (got {v[name]!r})")
        if not v["seed"]:
            raise UserError("--seed: give a seed, e.g. 0")
        if not v["vs"] and v["side"] != "both":
            raise UserError("--vs: name the opponent, e.g. random")
        argv = ["play", "--game", v["game"], "--vs", "human" if v["side"] == "both" else v["vs"],
                "--side", "1" if v["side"] == "both" else v["side"], "--mode", v["mode"], "--seed", v["seed"],
                "--out", self.out] + (["--frames", v["frames"]] if v["frames"] else [])
        try:
            parser = argparse.ArgumentParser(prog="play", exit_on_error=False, add_help=False)
            add_play_arguments(parser)
            args = parser.parse_args(argv[1:])
        except (SystemExit, argparse.ArgumentError):
            raise UserError("the form's values do not make a match; check each field") from None
        return play_vs(args)

    def start(self) -> None:
        self._clear()
        try:
            launch = self.check()
        except UserError as e:
            self.mark(field_for(str(e)), str(e))
            return
        self.dismiss(launch)

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
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


def open_match_form(app: Any, out: str | Path, game: str | None = None) -> None:
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

    app.push_screen(MatchForm(out, game), callback=started)


def match_commands(home: Any) -> list[tuple[str, str, object]]:
    """The home palette's entry (a two-player game highlighted on home is the form's first game)."""
    game = getattr(home, "selected_game", None)
    return [("Start a two-player match", "you against an agent, or two people on one keyboard (v)",
             lambda: open_match_form(home.app, home.out, game))]
