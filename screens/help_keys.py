"""F1 on any screen: that screen's keys, generated from its ``BINDINGS`` (and the app's), so help cannot drift.

``help_markdown(screen, app)`` walks the screen's class and its bases for bindings (a key bound twice to one
action is one row), adds the screen's notes (``NOTES``: what the bindings cannot say, such as the play keys
read by ``on_key``) and the keys that work everywhere. A screen missing from ``SCREEN_NOTES`` still gets its
own table of keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

EVERYWHERE = "`F1` or `?` this help · `ctrl+p` command palette · `ctrl+q` quit (`q` quits too, except while you play)."

NOTES: dict[str, str] = {
    'Home': """\
`↑` `↓` pick a game, `enter` goes on to its settings · `w` watch · `s` step mode · `p` play yourself · `v` a two-player match ·
`tab` moves through the settings to the recordings list, where `o` or `enter` opens the highlighted one,
`m` marks it and `c` compares the marked ones side by side ·
`esc` leaves a field (so `w` `s` `p` work again). A refused setting is marked and the reason shown above
the form.
Agents: `random`, `human`, `replay:PATH`, or a provider spec such as `openai:gpt-5.1`
(`openai`, `anthropic` and `gemini` need their key in the environment; `compat` needs a server's
`--base-url`, the base URL setting here, and a key only if that server asks for one).
Protocol settings start at the paper's values; a changed one is highlighted.
""",
    'Live view': """\
`space` pause / resume · `f` speed: paper pace (0.1 s per action), fast, instant ·
`s` step mode on / off · `x` stop the run (kept, marked incomplete) · `esc` back (from a focused field,
such as the prompt text or the override box, `esc` first leaves the field). While a run you would lose
is live (step mode, a model agent, or changed by hand), `q` and `esc` ask first (No is the default);
a finished run leaves at once.
The prompt pane shows the prompt exactly as sent; pick an image in its list to preview that frame.
""",
    'Step mode': """\
The run holds **before each prompt is sent** and **after each reply is parsed**.
Before sending: edit the text (`e` or `tab` into the prompt pane) then `ctrl+s` apply, `g` send (applies an
unapplied edit first), `c` swap in the current-frame-only prompt; a plan typed and `o` before sending
is set by hand (the agent is not asked).
After the reply: `r` re-send, type actions in the override box (`o` or `tab` into it; letters there are text)
and `enter` (or `o`) to override the plan, `esc` abandons the typed plan (the run stays plain),
`a` one action, `.` one frame, `t` the rest of the turn.
Pick a turn and `b` to rewind to its start and branch: the run goes on in a new recording that
copies the parent's frames and turns up to that point. Once a run is over only this is left (its panel
shows, step mode or not); such a branch holds before the turn's prompt, in step mode (`s` runs it out).
""",
    'Play yourself': """\
**Real time**: hold `←` `↑` `→` `↓` (or `w` `a` `s` `d`) to move and `space` to fire; keys held
together make a diagonal. The game samples the held keys once per action and never waits.

**Paused**: the game waits for your plan. The same keys queue actions (up to max actions), `+` then a
key joins it to the last action (`↑` `+` `←` is upleft), `n` (or `.`) queues a noop, `backspace`
removes the last, `enter` commits.

`esc` stops the game (the recording stays, marked incomplete); then `esc`, `enter` or `q` leaves.
""",
    'Open a recording': """\
`←` `→` or `[` `]` previous / next turn · `,` `.` previous / next frame · `space` play / pause ·
`home` `end` first / last frame · `r` `l` `g` next reward / life loss / game over (`R` `L` `G`: the one before) ·
`j` `k` next / previous judged failure (when `workstation judge` judged this run) ·
`e` export it as an MP4 beside the recording ·
`m` marks a frame (`m` again at another frame: a range) and `n` sends the marked frames to a
question set (`qa/<game>-hand/`) as a new proposed question, to finish with `workstation qa curate` ·
`esc` back (or out of a focused field first).
""",
    'Compare runs': """\
On the home screen `m` marks recordings and `c` compares them (or `workstation compare A B`).
`,` `.` a frame · `<` `>` a second · `←` `→` a turn of the focused run (its number picks it) ·
`r` `l` `g` next reward / life loss / game over in any run (shifted: back) · `d` first differing
frame · `t` first differing plan · `space` play · `e` export the runs side by side as an MP4.
""",
    "Match": """\
You play one side against a model (or `random`): the game holds each turn for both sides' plans.
The game keys above play your side (**Play yourself** below says how); the side panel shows both
sides' plans and scores.
`esc` stops the match (the recording stays, marked incomplete); then `esc`, `enter` or `q` leaves.
""",
    "Hotseat": """\
Two people on one keyboard, each queuing a plan on their own half (the game keys above) and committing it;
when both are in, the two plans play in lockstep. `esc` stops the match; then `esc`, `enter` or `q` leaves.
""",
    "Match form": """\
Game, opponent, your side, mode, seed, frames, then the opponent's base URL (only a model on a server of its
own needs one): `tab` and `shift+tab` move through them top to bottom, `enter` in a field (or the Start
button) checks the match as `workstation play --vs` does and starts it; a refused field is marked and the
reason shown at the top. `esc` closes the form, starting nothing.
""",
    "Match replay": """\
A recorded two-player match: both sides' plans and the scores at the frame on screen.
""",
    "Batch": """\
The batch's groups and runs as they stand on disk, refreshed twice a second. `enter` or `o` opens the
highlighted run's recording; `r` runs what is left (or resumes); `x` asks the batch to stop after the runs
under way; leaving never stops the batch.
""",
    "QA curator": """\
Each proposed question of the set with its frames: `a` accepts, `r` rejects, `n` `p` next / previous;
`tab` into the fields to edit them (letters there are text; `esc` leaves the field). `w` drafts a new
question from the frame on show, `ctrl+s` saves it.
""",
    "Session": """\
A participant session, step by step: `enter` goes on to the next game when you are ready; leaving keeps the
session resumable (`workstation session --resume`).
""",
    "IDC": """\
The improvement rounds as they stand on disk: each round's normalised mean, the skill's diff between rounds;
`enter` or `o` opens the highlighted episode, `r` reads the directory again.
""",
}

# The screen class (by name) -> its title and the notes shown under its keys.
SCREEN_NOTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "HomeScreen": ("Home", ("Home",)),
    "LiveScreen": ("Live view", ("Live view", "Step mode")),
    "PlayScreen": ("Play yourself", ("Play yourself",)),
    "MatchScreen": ("Two-player match", ("Match", "Play yourself")),
    "HotseatScreen": ("Two-player match, two people", ("Hotseat",)),
    "ReplayScreen": ("Open a recording", ("Open a recording",)),
    "MatchForm": ("Two-player match: the form", ("Match form",)),
    "ConfirmScreen": ("A question", ()),
    "MatchReplayScreen": ("Match replay", ("Match replay",)),
    "CompareScreen": ("Compare runs", ("Compare runs",)),
    "BatchScreen": ("Batch", ("Batch",)),
    "CurateScreen": ("QA curator", ("QA curator",)),
    "SessionScreen": ("Session", ("Session",)),
    "IdcScreen": ("IDC rounds", ("IDC",)),
}


def screen_bindings(screen_class: type[Screen[Any]]) -> list[Binding]:
    """The bindings a screen class declares itself or inherits from its bases (not Textual's own)."""
    found: list[Binding] = []
    for cls in reversed(screen_class.__mro__):
        if cls.__module__.split(".")[0] == "textual" or "BINDINGS" not in cls.__dict__:
            continue
        bindings: Iterable[BindingType] = cls.__dict__["BINDINGS"]
        found.extend(Binding.make_bindings(bindings))
    return found


def absent(screen: Screen[Any], binding: Binding) -> bool:
    """A key this screen says it does not have at all (its ``absent_key``): compare's `4` over three runs."""
    check = getattr(screen, "absent_key", None)
    return bool(check(binding)) if callable(check) else False


def key_rows(bindings: Iterable[Binding], app: App[Any]) -> list[tuple[str, str]]:
    """(keys, what they do), one row per action and description, in the order declared."""
    rows: dict[tuple[str, str], list[str]] = {}
    for b in bindings:
        what = str(b.description or b.tooltip or b.action.replace("_", " "))
        key = app.get_key_display(b)
        shown = rows.setdefault((b.action, what), [])
        if key not in shown:
            shown.append(key)
    return [(" ".join(f"`{k}`" for k in keys), what) for (_, what), keys in rows.items()]


PUNCTUATION = {"slash": "/", "plus": "+", "equals_sign": "=", "full_stop": "."}  # key names as typed


def _keys(keys: list[str] | tuple[str, ...]) -> str:
    return " ".join(f"`{PUNCTUATION.get(k, k)}`" for k in keys)


def game_key_rows(screen_class: type[Screen[Any]]) -> list[tuple[str, str]]:
    """The keys a play or match screen reads itself (``on_key``), from the key maps they read."""
    names = {c.__name__ for c in screen_class.__mro__}
    if "HotseatScreen" in names:
        from screens.views.hotseat import CONTROLS, MOVES

        rows = []
        for side, moves in MOVES.items():
            by_button: dict[str, list[str]] = {}
            for key, button in moves.items():
                by_button.setdefault(button, []).append(key)
            rows += [(_keys(keys), f"side {side}: {button}") for button, keys in by_button.items()]
            controls: dict[str, list[str]] = {}
            for key, (s, what) in CONTROLS.items():
                if s == side:
                    controls.setdefault(what, []).append(key)
            rows += [(_keys(keys), f"side {side}: {what}") for what, keys in controls.items()]
        return rows
    if "PlayScreen" in names or "MatchScreen" in names:
        from screens.input.keys import KEY_BUTTONS, PLAN_KEY_HELP, PLAN_KEYS

        by_button = {}
        for key, button in KEY_BUTTONS.items():
            by_button.setdefault(button, []).append(key)
        rows = [(_keys(keys), button) for button, keys in by_button.items()]
        rows += [(_keys(PLAN_KEYS[what]), f"paused: {PLAN_KEY_HELP[what]}") for what in PLAN_KEYS]
        return rows
    return []


def help_markdown(screen: Screen[Any] | type[Screen[Any]], app: App[Any]) -> str:
    """The help for ``screen`` (or a screen class): its keys (from its bindings, less those the screen says it has
    not got), its notes, then the app's keys."""
    screen_class = screen if isinstance(screen, type) else type(screen)
    name = screen_class.__name__
    title, notes = SCREEN_NOTES.get(name, (name, ()))
    lines = [f"# Keys: {title}", ""]
    bindings = screen_bindings(screen_class)
    if not isinstance(screen, type):
        bindings = [b for b in bindings if not absent(screen, b)]
    for keys, what in key_rows(bindings, app):
        lines.append(f"- {keys}  {what}")
    game_keys = game_key_rows(screen_class)
    if game_keys:
        lines += ["", "**Game keys**", ""] + [f"- {keys}  {what}" for keys, what in game_keys]
    lines += ["", "*Generated from this screen's bindings and key maps; `esc` closes this help.*", ""]
    for note in notes:
        lines += [f"## {note}", NOTES[note].strip(), ""]
    lines += ["## Everywhere", EVERYWHERE, ""]
    for keys, what in key_rows(Binding.make_bindings(type(app).BINDINGS), app):
        lines.append(f"- {keys}  {what}")
    return "\n".join(lines) + "\n"


def all_notes() -> str:
    """Every screen's notes in one text (the README's list of keys is built from the same notes)."""
    return "\n".join(f"## {title}\n{text.strip()}\n" for title, text in NOTES.items())
