"""Build a document pack from a user's own checkout of the public AtariBench harness.

The harness keeps its prompts in Python modules (``games/prompts/``: shared
templates, a time-budget text, and per game a guide, a timing text, an action
map and the warm-up seconds; a few notices sit in ``games/prompt_builder.py``).
They are read here as data: each file is parsed with ``ast`` and only literal
values are taken (strings, the action-map dict, numbers). Nothing is imported or
executed. The harness's placeholders are renamed to the document pack's and its
image marker becomes ``{image}`` (``workstation.engine.document_pack``); action ids,
indices into each game's minimal action set as the harness maps them, become the
ALE meanings they select, so the pack plays exactly the harness's actions.

None of the harness's text is in this repository: the pack is written where the
user asks, from the checkout they have.
"""

from __future__ import annotations

import ast
import json
import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.game.games import GAMES
from workstation.game.vocabulary import Vocabulary, harness_key

PROMPTS = Path("games/prompts")
BUILDER = Path("games/prompt_builder.py")
_HELPERS = {"__init__", "common_prompt", "game_clip", "termination"}
_MARKER = "IMG_HOLDER"

# document key -> (harness module, its variable, placeholder renames)
_SHARED = {
    "structured": ("common_prompt", "SINGLE_TURN_PROMPT_TEMPLATE", {
        "GAME_PROMPT": "guide", "GAME_OVER_PROMPT": "budget_rule", "LIST_OF_REWARD_CLIPS_TEMPLATE": "reward_history",
        "LIST_OF_CLIPS_TEMPLATE": "recent_clips", "CURRENT_TIME": "time"}),
    "reward_history": ("common_prompt", "REWARD_CLIPS_TEMPLATE", {"LIST_OF_CLIPS_TEMPLATE": "clips"}),
    "clip": ("common_prompt", "SINGLE_TURN_CLIP_TEMPLATE", {
        "START_TIME": "start_time", "END_TIME": "end_time", "ACTIONS_STR": "actions",
        "LIST_OF_STATE_REWARD_TEMPLATE": "steps"}),
    "clip_step": ("common_prompt", "STATE_REWARD_TEMPLATE", {"TIME": "time"}),
    "budget_rule": ("termination", "MAX_TIME_PROMPT", {"MAX_TIME": "budget_seconds"}),
    "append_header": ("common_prompt", "APPEND_ONLY_HEADER_TEMPLATE", {
        "GAME_PROMPT": "guide", "GAME_OVER_PROMPT": "budget_rule"}),
    "append_first": ("common_prompt", "APPEND_ONLY_INITIAL_USER_TEMPLATE", {"CURRENT_TIME": "time"}),
    "append_update": ("common_prompt", "APPEND_ONLY_UPDATED_USER_TEMPLATE", {"CLIP_TEMPLATE": "clip"}),
}
_NOTICES = ("feedback_positive", "feedback_negative", "feedback_life_lost", "clip_reset_note", "reset_note")
SKILL_SLOT = "A skill for {title}, written from your own earlier play of this game; use it where it helps:\n{skill}"


class NotAHarness(UserError):
    """The directory is not a checkout of the public harness."""


@dataclass
class Harness:
    """What was read from a checkout."""

    strings: dict[str, str] = field(default_factory=dict)  # document key -> format string (our placeholders)
    guides: dict[str, str] = field(default_factory=dict)  # game key -> guide text
    words: dict[str, dict[str, str]] = field(default_factory=dict)  # game key -> word -> ALE meaning
    warmup: dict[str, float] = field(default_factory=dict)
    taught: dict[str, tuple[str, ...]] = field(default_factory=dict)  # game key -> words its guide lists
    unread: list[str] = field(default_factory=list)  # what could not be read, one short phrase each


def literals(path: Path) -> dict[str, object]:
    """The module-level ``NAME = literal`` values of a Python file, parsed, never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: dict[str, object] = {}
    for node in tree.body:
        target: ast.expr
        value: ast.expr | None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and value is not None:
            try:
                out[target.id] = ast.literal_eval(value)
            except ValueError:
                continue  # not a literal (a call, a name): not data
    return out


def _refs(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def notices(path: Path) -> dict[str, str]:
    """The notices the harness's prompt builder appends (``text += "..."`` under an ``if``), by what they test."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, str] = {}
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        used = _refs(fn)
        for branch in (n for n in ast.walk(fn) if isinstance(n, ast.If)):
            for stmt in branch.body:
                if not (isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add)):
                    continue
                try:
                    text = ast.literal_eval(stmt.value)
                except ValueError:
                    continue
                if not isinstance(text, str):
                    continue
                test = branch.test
                tested = _refs(test)
                ops = [type(op) for c in ast.walk(test) if isinstance(c, ast.Compare) for op in c.ops]
                if "new_game_started" in tested:
                    key = "reset_note" if "SINGLE_TURN_PROMPT_TEMPLATE" in used else (
                        "clip_reset_note" if "SINGLE_TURN_CLIP_TEMPLATE" in used else None)
                elif "lost_life" in tested:
                    key = "feedback_life_lost"
                elif ast.Gt in ops:
                    key = "feedback_positive"
                elif ast.Lt in ops:
                    key = "feedback_negative"
                else:
                    key = None
                if key and key not in found:
                    found[key] = text
    return found


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def convert(template: str, renames: dict[str, str]) -> str:
    """A harness format string with our placeholder names and ``{image}`` for the image marker.

    ValueError names a placeholder that has no rename.
    """
    out = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        out.append(_escape(literal).replace(_MARKER, "{image}"))
        if name is None:
            continue
        if name not in renames or spec or conversion:
            raise ValueError(f"placeholder {{{name}}}")
        out.append("{" + renames[name] + "}")
    return "".join(out)


def check_checkout(root: Path) -> None:
    need = [PROMPTS / "common_prompt.py", PROMPTS / "termination.py", BUILDER]
    if root.is_file():
        raise NotAHarness(f"{root} is a file; pass the directory of your AtariBench checkout "
                          "(git clone https://github.com/mignonjia/AtariBench)")
    if not root.is_dir():
        raise NotAHarness(f"{root}: no such directory; pass the directory of your AtariBench checkout "
                          "(git clone https://github.com/mignonjia/AtariBench)")
    missing = [str(p) for p in need if not (root / p).is_file()]
    if missing:
        raise NotAHarness(f"{root} is not a checkout of the public AtariBench harness ({missing[0]} is missing); "
                          "pass the directory you cloned github.com/mignonjia/AtariBench into")


def read_harness(root: Path) -> Harness:
    """Everything a document pack needs, from the checkout at ``root`` (checked first)."""
    check_checkout(root)
    h = Harness()
    modules: dict[str, dict[str, Any]] = {}
    for name in ("common_prompt", "termination"):
        try:
            modules[name] = literals(root / PROMPTS / f"{name}.py")
        except (SyntaxError, UnicodeDecodeError, OSError) as exc:
            raise NotAHarness(f"{root / PROMPTS / name}.py cannot be parsed ({type(exc).__name__}); "
                              "check out a clean copy of the harness") from None
    for key, (module, var, renames) in _SHARED.items():
        value = modules[module].get(var)
        if not isinstance(value, str):
            h.unread.append(f"{module}.{var}")
            continue
        try:
            h.strings[key] = convert(value, renames)
        except ValueError as exc:
            h.unread.append(f"{module}.{var} ({exc})")
    for key in ("structured", "append_header"):  # the skill slot: empty unless a run has a skill
        if key in h.strings:
            h.strings[key] = h.strings[key].replace("{guide}", "{guide}{skill}", 1)
    try:
        found = notices(root / BUILDER)
    except (SyntaxError, UnicodeDecodeError, OSError):
        found = {}
    for key in _NOTICES:
        if key in found:
            h.strings[key] = _escape(found[key])
        else:
            h.unread.append(f"prompt_builder notice {key}")
    stems = {p.stem for p in (root / PROMPTS).glob("*.py")} - _HELPERS
    for stray in sorted(stems - set(GAMES)):
        h.unread.append(f"{stray}.py (not one of the 21 games)")
    for key, game in GAMES.items():
        if key not in stems:
            h.unread.append(f"{key}.py (missing)")
            h.words[key] = {"noop": "noop"}  # a game the checkout lacks can only idle
            h.warmup[key] = game.warmup_seconds
            continue
        _read_game(root / PROMPTS / f"{key}.py", key, game.minimal_set, h)
    if not h.guides:  # a pack of no guides would teach nothing: refused, not written
        raise NotAHarness(f"{root} holds no readable game prompt module (expected {root / PROMPTS}/GAME.py for "
                          f"the {len(GAMES)} games, e.g. breakout.py); pass a complete checkout of "
                          "github.com/mignonjia/AtariBench")
    return h


def _read_game(path: Path, key: str, minimal: tuple[str, ...], h: Harness) -> None:
    try:
        values = literals(path)
    except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
        h.unread.append(f"{key}.py (cannot be parsed)")
        h.words[key] = {"noop": "noop"}  # as for a missing game: it can only idle
        h.warmup[key] = GAMES[key].warmup_seconds
        return
    guide, timing = values.get("GAME_PROMPT"), values.get("FPS_10_PROMPT")
    if isinstance(guide, str) and isinstance(timing, str):
        try:
            h.guides[key] = guide.format(FPS_SPECIFIC_PROMPT=timing)
        except (KeyError, IndexError, ValueError):
            h.unread.append(f"{key} guide (a placeholder other than the timing text)")
    else:
        h.unread.append(f"{key} guide")
    action_map = values.get("ACTION_MAP")
    words: dict[str, str] = {}
    if isinstance(action_map, dict):
        for word, index in action_map.items():
            if isinstance(word, str) and isinstance(index, int) and 0 <= index < len(minimal):
                words[word] = minimal[index].lower()
            else:
                h.unread.append(f"{key} action {word!r}")
    if not words or "noop" not in words.values():
        h.unread.append(f"{key} ACTION_MAP")
        words = {"noop": "noop"}
    h.words[key] = words
    listed = [w for w in listed_actions(h.guides.get(key, "")) if harness_key(w) in {harness_key(k) for k in words}]
    if listed:
        h.taught[key] = tuple(listed)
    skip = values.get("SKIP_SECONDS", 0)
    if isinstance(skip, (int, float)) and not isinstance(skip, bool) and 0 <= skip <= 600:
        h.warmup[key] = float(skip) if skip != int(skip) else int(skip)
    else:
        h.unread.append(f"{key} SKIP_SECONDS")
        h.warmup[key] = GAMES[key].warmup_seconds


_LISTED = re.compile(r"^\s*-\s+([^:]+):")
_SECTION = re.compile(r"^[A-Z][^:]+:$")


def listed_actions(guide: str) -> list[str]:
    """The words a guide lists as its actions: the ``- word: ...`` lines after the first line that
    mentions "available actions", up to the next ``Heading:`` line or one starting "Your Task"
    (the lines the harness's random client reads its words from)."""
    out: list[str] = []
    inside = False
    for line in guide.splitlines():
        if not inside:
            inside = "available actions" in line.lower()
            continue
        m = _LISTED.match(line)
        if m:
            out.append(m.group(1).strip())
        elif _SECTION.match(line.strip()) or line.strip().startswith("Your Task"):
            break
    return out


def toml_string(value: str) -> str:
    """A TOML string that reads back as exactly ``value``: a literal block where it can be, else escaped."""
    if "'''" not in value and "\r" not in value and all(c in "\n\t" or c.isprintable() for c in value):
        candidate = "'''\n" + value + "'''"
        try:
            if tomllib.loads("k = " + candidate)["k"] == value:
                return candidate
        except tomllib.TOMLDecodeError:
            pass
    return json.dumps(value).replace("\x7f", "\\u007f")


def write_pack(h: Harness, out: Path, source: Path) -> None:
    """Write the document pack (template, guides, vocabulary, warm-up) into ``out``."""
    games_dir = out / "games"
    games_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"# A document pack made by `workstation prompts from-atari-bench` from {source}.",
             "# Its text is the harness's; keep it out of any repository you publish.", "",
             'layout = "document"', ""]
    for key, value in h.strings.items():
        lines += [f"{key} = {toml_string(value)}", ""]
    lines += ["[skill]", f"slot = {toml_string(SKILL_SLOT)}", ""]
    (out / "template.toml").write_text("\n".join(lines), encoding="utf-8")
    for key in GAMES:
        text = h.guides.get(key, f"\n(The guide of {key} could not be read from the harness checkout.)\n")
        (games_dir / f"{key}.md").write_text(text, encoding="utf-8", newline="")
    vocab = Vocabulary(h.words, "harness", dict(h.taught))
    (out / "vocabulary.toml").write_text(vocab.to_toml(
        "# Each game's words as the harness's prompts teach them -> the ALE action the harness plays for it.\n"
        "# Matching follows the harness's rules (workstation.game.vocabulary)."), encoding="utf-8")
    warm = ["# NOOP seconds after each reset (the harness's SKIP_SECONDS; 0 where it sets none)."]
    warm += [f"{key} = {h.warmup.get(key, 0)!r}" for key in GAMES]
    (out / "warmup.toml").write_text("\n".join(warm) + "\n", encoding="utf-8")
