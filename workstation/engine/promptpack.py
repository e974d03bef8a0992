"""Prompt packs: the words of every prompt, kept as data files.

A pack is a directory holding ``template.toml`` (the named strings of one turn's
prompt, with ``str.format`` placeholders) and ``games/<key>.md`` plus
``games/<key>.short.md`` (a full and a goal-only guide for each of the 21
games). The repository's ``prompts/`` directory is the default pack; a user
points ``--prompts DIR`` at a copy they edited. A pack is validated completely
when loaded, so a typo shows up as one clear line before any run starts, and
its digest (a hash of its contents) becomes part of a run's identity.

A pack also owns its action words: ``vocabulary.toml`` (see
``workstation.game.vocabulary``) maps each game's words to ALE actions; a pack
without one uses the default pack's. The digest covers the vocabulary only when
it differs from the default pack's, so the default pack (and any pack with the
default words) keeps the digest it had before vocabularies were data. An
optional ``warmup.toml`` (``game_key = seconds``) sets the NOOP seconds after each
reset; a value that differs from the game table is reported and used.
``layout = "document"`` in ``template.toml`` makes it a document pack
(``workstation.engine.document_pack``), the form ``prompts from-atari-bench`` writes.
The skill slot: an optional ``[skill]`` table at the end of ``template.toml``
whose ``slot`` string (placeholders ``{title}``, ``{skill}``) says how a skill
sits in the player's instructions. It is left out of the pack's digest, so
adding it changed no run id; it counts in the run id of a run that has a skill
(``skill_digest``). A pack without one gets ``DEFAULT_SKILL_SLOT``.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.base.locations import default_pack_dir
from workstation.engine.document_pack import check_document
from workstation.engine.template_strings import placeholder_list, placeholders, template_string
from workstation.game.games import GAMES, MINIMAL_SETS, Game, get_game
from workstation.game.vocabulary import Vocabulary, VocabularyError, builtin_text, parse_vocabulary

VARIANTS = ("full", "short")
# Instruction levels (issue 30, after PokeGym): ``visual`` = goal, how to play and what things look like
# on screen; ``steps`` = goal and how to play; ``goal`` = the goal only. Their files are
# ``games/<key>.steps.md``, ``games/<key>.looks.md`` (the appearance; ``visual`` is the steps text followed
# by it) and ``games/<key>.goal.md``. They are optional (all or none), left out of the pack's digest (so
# the default pack's digest did not change when they were added) and counted in the run id of a run at
# one of them (``level_digest``).
LEVELS = ("visual", "steps", "goal")
GUIDE_CHOICES = VARIANTS + LEVELS
LEVEL_FILES = ("steps", "looks", "goal")

# Every key of template.toml -> the placeholders it may use.
TEMPLATE_KEYS: dict[str, frozenset[str]] = {
    "instructions": frozenset(
        {"title", "guide", "actions", "max_actions", "action_seconds", "budget_seconds"}
    ),
    "reply_format": frozenset({"max_actions", "example"}),
    "reward_history_heading": frozenset(),
    "recent_history_heading": frozenset(),
    "clip_heading": frozenset({"turn", "time", "actions"}),
    "clip_step": frozenset({"time", "action"}),
    "current_frame": frozenset({"time", "remaining"}),
    "feedback_positive": frozenset({"reward"}),
    "feedback_negative": frozenset({"reward"}),
    "feedback_life_lost": frozenset(),
    "feedback_reset": frozenset(),
    "no_history": frozenset(),
    "append_result": frozenset({"time"}),
    "latency_note": frozenset({"seconds"}),
    "closing": frozenset(),
}

SKILL_TABLE = "skill"
SKILL_PLACEHOLDERS = frozenset({"title", "skill"})
EXPERIENCE_TABLE = "experience"
EXPERIENCE_PLACEHOLDERS = frozenset({"title", "rules"})
DEFAULT_EXPERIENCE_SLOT = ("Rules for {title} you kept from your own earlier play (your experience library); "
                           "follow them where they fit:\n{rules}")
DEFAULT_SKILL_SLOT = "A skill for {title}, written from earlier play of this game; use it where it helps:\n{skill}"

# Display names where splitting the ALE name at capitals is not the real title.
_TITLES = {"Pacman": "Pac-Man", "Qbert": "Q*bert", "Riverraid": "River Raid", "Robotank": "Robot Tank"}


class PromptPackError(UserError, ValueError):
    """A prompt pack that cannot be used; the message names the file or key and the fix."""


@dataclass(frozen=True)
class PromptPack:
    """A loaded, validated prompt pack."""

    path: Path
    name: str
    digest: str  # first 16 hex digits of sha256 over the pack's files, sorted by path
    strings: dict[str, str] = field(compare=False)
    guides: dict[tuple[str, str], str] = field(compare=False, repr=False)  # (key, variant) -> text
    layout: str = "turns"  # "turns" (named pieces, the default) or "document" (whole documents)
    vocabulary: Vocabulary | None = field(default=None, compare=False, repr=False)  # None: the default words
    warmup: dict[str, float] = field(default_factory=dict, compare=False)  # game key -> seconds, when set
    skill_slot: str = field(default=DEFAULT_SKILL_SLOT, compare=False)  # where a skill goes ([skill] slot)
    levels: tuple[str, ...] = ()  # the instruction levels the pack has (LEVELS, or none)
    experience_slot: str = field(default=DEFAULT_EXPERIENCE_SLOT, compare=False)  # where an experience library goes ([experience])

    def game(self, game: Game | str) -> Game:
        """The game as this pack plays it: its words, the actions they offer, its warm-up."""
        g = game if isinstance(game, Game) else get_game(game)
        g = GAMES.get(g.key, g)
        changes: dict[str, Any] = {}
        if self.vocabulary is not None:
            changes = dict(allowed=self.vocabulary.offered(g.key, g.minimal_set),
                           aliases=self.vocabulary.ids(g.key, g.minimal_set), matching=self.vocabulary.matching,
                           taught=self.vocabulary.taught.get(g.key, ()))
        if g.key in self.warmup:
            changes["warmup_seconds"] = self.warmup[g.key]
        return replace(g, **changes) if changes else g

    def warmup_notes(self) -> list[str]:
        """One line per game whose warm-up in this pack differs from the game table."""
        return [f"{key}: the pack's warm-up is {s:g} s, the game table's {GAMES[key].warmup_seconds:g} s; "
                "the pack's is used" for key, s in sorted(self.warmup.items()) if s != GAMES[key].warmup_seconds]


    def render_skill(self, game: Game, skill: str) -> str:
        """The skill as the player's instructions carry it."""
        return self.skill_slot.replace("{title}", display_title(game)).replace("{skill}", skill.strip())

    def guide(self, game: Game | str, variant: str = "full") -> str:
        """The guide text of a game (key, ALE name or Game): ``full``, ``short`` or a level (``LEVELS``)."""
        key = game.key if isinstance(game, Game) else get_game(game).key
        if variant not in GUIDE_CHOICES:
            raise PromptPackError(f"guide variant {variant!r} is unknown: use one of {', '.join(GUIDE_CHOICES)}")
        if variant in LEVELS:
            problem = self.level_problem(variant)
            if problem:
                raise PromptPackError(problem)
            steps = self.guides[(key, "steps")]
            if variant == "visual":
                return steps.rstrip() + "\n\n" + self.guides[(key, "looks")].strip()
            return self.guides[(key, variant)]
        return self.guides[(key, variant)]

    def level_problem(self, level: str) -> str | None:
        """Why this pack cannot play ``--guide level`` (one line), or None."""
        if level not in LEVELS or level in self.levels:
            return None
        return (f"--guide {level}: prompt pack {self.name} ({self.path}) has no instruction levels (it has the "
                f"guides full and short only); use --guide full or short, or add games/<key>.steps.md, "
                ".looks.md and .goal.md for every game (see prompts/README.md)")

    def render_experience(self, game: Game, rules: list[str]) -> str:
        """An experience library as the player's instructions carry it (its rules numbered from 1)."""
        listed = "\n".join(f"{i}. {r}" for i, r in enumerate(rules, 1)) or "(no rules yet)"
        slot = self.experience_slot or DEFAULT_EXPERIENCE_SLOT
        return slot.replace("{title}", display_title(game)).replace("{rules}", listed)

    def render(self, key: str, **values: object) -> str:
        """Fill the template string ``key`` with ``values`` (each shown with ``str``).

        Called thousands of times per run, so the checks are set operations and
        the placeholder scan runs only when formatting fails.
        """
        template = self.strings.get(key)
        if template is None:
            raise PromptPackError(
                f"prompt pack {self.path}: no template string {key!r}; known keys: "
                + ", ".join(TEMPLATE_KEYS)
            )
        allowed = TEMPLATE_KEYS[key]
        if not values.keys() <= allowed:
            extra = sorted(set(values) - allowed)
            raise PromptPackError(
                f"template string {key!r} takes {placeholder_list(allowed)}, not {placeholder_list(extra)}"
            )
        try:
            return template.format_map(values)
        except KeyError:
            missing = sorted(placeholders(template) - set(values))
            raise PromptPackError(
                f"template string {key!r} of prompt pack {self.path} needs a value for {placeholder_list(missing)}"
            ) from None


_CACHE: dict[Path, tuple[tuple[Any, ...], PromptPack]] = {}


def load_pack(directory: Path | str | None = None) -> PromptPack:
    """Load and validate a pack (the default pack when ``directory`` is None).

    Packs are cached per resolved path; a file changed on disk since the last
    load (size or modification time) is picked up on the next call.
    """
    path = Path(directory).expanduser().resolve() if directory is not None else default_pack_dir().resolve()
    if not path.is_dir():
        raise PromptPackError(
            f"prompt pack {path}: no such directory; pass --prompts a directory holding template.toml and games/"
        )
    stamp = _stamp(path)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    pack = _read(path, is_default=path == default_pack_dir().resolve())
    _CACHE[path] = (stamp, pack)
    return pack


def display_title(game: Game | str) -> str:
    """A game's name as people write it: ``BeamRider`` -> "Beam Rider", ``Pacman`` -> "Pac-Man"."""
    ale = game.ale_name if isinstance(game, Game) else get_game(game).ale_name
    return _TITLES.get(ale) or re.sub(r"(?<=[a-z])(?=[A-Z])", " ", ale)


def _read(path: Path, is_default: bool) -> PromptPack:
    where = f"prompt pack {path}"
    texts: dict[str, str] = {}  # relative path -> text, for the digest

    template_file = path / "template.toml"
    if not template_file.is_file():
        raise PromptPackError(f"{where}: template.toml is missing; copy it from the default pack and edit it")
    texts["template.toml"] = _text(template_file, where)
    try:
        data = tomllib.loads(texts["template.toml"])
    except tomllib.TOMLDecodeError as exc:
        raise PromptPackError(f"{where}: template.toml is not valid TOML ({exc}); fix the quoting there") from None
    skill_slot = _skill_slot(data.pop(SKILL_TABLE, None), where)
    experience_slot = _experience_slot(data.pop(EXPERIENCE_TABLE, None), where)
    layout = data.pop("layout", "turns")
    if layout not in ("turns", "document"):
        raise PromptPackError(f"{where}: template.toml layout = {layout!r} is unknown; use \"turns\" or \"document\"")
    document = layout == "document"
    strings = check_document(data, where, PromptPackError) if document else _check_template(data, where)

    vocabulary = None
    if (path / "vocabulary.toml").is_file():
        vtext = _text(path / "vocabulary.toml", where)
        try:
            vocabulary = parse_vocabulary(vtext, MINIMAL_SETS, f"{where}: vocabulary.toml")
        except VocabularyError as exc:
            raise PromptPackError(str(exc)) from None
        if vocabulary.canonical() != _builtin_vocabulary().canonical():
            texts["vocabulary.toml"] = vocabulary.canonical()
        else:
            vocabulary = None  # the default words: the pack plays as the default does
    warmup = _warmup(path, where, texts)

    guides: dict[tuple[str, str], str] = {}
    for key in GAMES:
        for variant in VARIANTS:
            rel = f"games/{key}.md" if variant == "full" else f"games/{key}.short.md"
            file = path / rel
            if document and variant == "short" and not file.is_file():
                guides[(key, variant)] = guides[(key, "full")]
                continue
            if not file.is_file():
                raise PromptPackError(
                    f"{where}: {rel} is missing; every game needs a {variant} guide ({_guide_files()})"
                )
            texts[rel] = _text(file, where)
            guide = texts[rel] if document else texts[rel].strip()
            if not guide.strip():
                raise PromptPackError(f"{where}: {rel} is empty; write the {variant} guide for {key} there")
            guides[(key, variant)] = guide

    levels = _levels(path, where, guides)
    texts["template.toml"] = without_table(without_table(texts["template.toml"], SKILL_TABLE), EXPERIENCE_TABLE)
    digest = hashlib.sha256()
    for rel in sorted(texts):
        digest.update(rel.encode() + b"\0" + texts[rel].encode() + b"\0")
    return PromptPack(
        path=path,
        name="default" if is_default else path.name,
        digest=digest.hexdigest()[:16],
        strings=strings,
        guides=guides,
        layout=layout,
        vocabulary=vocabulary,
        warmup=warmup,
        skill_slot=skill_slot,
        levels=levels,
        experience_slot=experience_slot,
    )


def _levels(path: Path, where: str, guides: dict[tuple[str, str], str]) -> tuple[str, ...]:
    """Read the level files into ``guides``: all of them (-> LEVELS) or none (-> ())."""
    found = [(key, part) for key in GAMES for part in LEVEL_FILES if (path / f"games/{key}.{part}.md").is_file()]
    if not found:
        return ()
    have = set(found)
    for key in GAMES:
        for part in LEVEL_FILES:
            rel = f"games/{key}.{part}.md"
            if (key, part) not in have:
                raise PromptPackError(f"{where}: {rel} is missing; a pack with instruction levels needs "
                                      f"games/<key>.steps.md, .looks.md and .goal.md for every game (or none)")
            text = _text(path / rel, where).strip()
            if not text:
                raise PromptPackError(f"{where}: {rel} is empty; write the {part} text for {key} there")
            guides[(key, part)] = text
    return LEVELS


def level_digest(pack: PromptPack, game: Game | str, level: str) -> str | None:
    """What a guide level adds to a run id: the text the player reads (None for ``full`` and ``short``, whose
    files the pack's digest covers, so every run id made before the levels stays the same)."""
    if level not in LEVELS:
        return None
    return hashlib.sha256(f"{level}\0{pack.guide(game, level)}".encode()).hexdigest()[:16]


def identity_extras(pack: PromptPack, game: Game | str, guide: str,
                    experience: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The run id's part for a guide level and an experience library (None for a plain run, whose id is as
    it always was). ``experience``: ``workstation.engine.experience.identity_part``."""
    extras: dict[str, Any] = {}
    digest = level_digest(pack, game, guide)
    if digest is not None:
        extras["guide"] = digest
    if experience is not None:
        extras["experience"] = experience
    return extras or None


def _experience_slot(table: Any, where: str) -> str:
    if table is None:
        return DEFAULT_EXPERIENCE_SLOT
    unknown = sorted(set(table) - {"slot"}) if isinstance(table, dict) else []
    if unknown:
        raise PromptPackError(f"{where}: template.toml has unknown key {unknown[0]!r} in its [experience] table, "
                              "which holds only slot; put the turn's keys above [skill] and [experience]")
    if not isinstance(table, dict) or not isinstance(table.get("slot"), str):
        raise PromptPackError(f"{where}: template.toml's [experience] table holds only slot = \"...{{rules}}...\" "
                              "(a string); put the turn's keys above it")
    try:
        used = placeholders(table["slot"])
    except ValueError as exc:
        raise PromptPackError(f"{where}: template.toml [experience] slot is not a valid format string ({exc})") \
            from None
    if used - EXPERIENCE_PLACEHOLDERS or "rules" not in used:
        raise PromptPackError(f"{where}: template.toml [experience] slot must use {{rules}} and may use {{title}} "
                              f"(it uses {placeholder_list(used)})")
    return str(table["slot"]).strip().replace("{{", "{").replace("}}", "}")


_BUILTIN: list[Vocabulary] = []


def _builtin_vocabulary() -> Vocabulary:
    if not _BUILTIN:
        _BUILTIN.append(parse_vocabulary(builtin_text(), MINIMAL_SETS, "the default pack's vocabulary.toml"))
    return _BUILTIN[0]


def _warmup(path: Path, where: str, texts: dict[str, str]) -> dict[str, float]:
    file = path / "warmup.toml"
    if not file.is_file():
        return {}
    text = _text(file, where)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PromptPackError(f"{where}: warmup.toml is not valid TOML ({exc}); write game_key = seconds") from None
    out: dict[str, float] = {}
    for key, value in data.items():
        if key not in GAMES:
            raise PromptPackError(f"{where}: warmup.toml names {key!r}, which is not a game key (`workstation games`)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 600:
            raise PromptPackError(f"{where}: warmup.toml {key} = {value!r}: give the seconds as a number 0..600")
        out[key] = float(value) if value != int(value) else int(value)
    texts["warmup.toml"] = "\n".join(f"{k}={v!r}" for k, v in sorted(out.items()))
    return out


def skill_digest(pack: PromptPack, skill: str) -> str:
    """What a skill adds to a run id: the skill's text and the slot that places it."""
    return hashlib.sha256(pack.skill_slot.encode() + b"\0" + skill.strip().encode()).hexdigest()[:16]


def without_table(text: str, name: str) -> str:
    """``text`` without the TOML table ``[name]`` (its header line to the next table or the end)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == f"[{name}]"), None)
    if start is None:
        return text
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\[[^\]]+\]\s*$", lines[i])), len(lines))
    while start > 0 and not lines[start - 1].strip():  # the blank lines that set it apart go with it
        start -= 1
    return "".join(lines[:start] + lines[end:])


def _skill_slot(table: Any, where: str) -> str:
    if table is None:
        return DEFAULT_SKILL_SLOT
    if not isinstance(table, dict):
        raise PromptPackError(f"{where}: template.toml key 'skill' is the skill slot's table; write it as [skill] "
                              "with slot = \"...{skill}...\"")
    unknown = sorted(set(table) - {"slot"})
    if unknown:
        raise PromptPackError(f"{where}: template.toml has unknown key {unknown[0]!r} in its [skill] table, which "
                              "holds only slot; put the turn's keys above [skill]")
    if not isinstance(table.get("slot"), str):
        raise PromptPackError(f"{where}: template.toml's [skill] table needs slot = \"...{{skill}}...\" (a string)")
    try:
        used = placeholders(table["slot"])
    except ValueError as exc:
        raise PromptPackError(f"{where}: template.toml [skill] slot is not a valid format string ({exc})") from None
    if used - SKILL_PLACEHOLDERS or "skill" not in used:
        raise PromptPackError(f"{where}: template.toml [skill] slot must use {{skill}} and may use {{title}} "
                              f"(it uses {placeholder_list(used)})")
    return str(table["slot"]).strip().replace("{{", "{").replace("}}", "}")


def _check_template(data: dict[str, Any], where: str) -> dict[str, str]:
    unknown = sorted(set(data) - set(TEMPLATE_KEYS))
    if unknown:
        raise PromptPackError(
            f"{where}: template.toml has unknown key {unknown[0]!r}; the keys are " + ", ".join(TEMPLATE_KEYS)
        )
    strings: dict[str, str] = {}
    for key, allowed in TEMPLATE_KEYS.items():
        value = template_string(data, key, allowed, where, PromptPackError)
        strings[key] = value.strip()  # the prompt builder owns the spacing between strings
    return strings


def _text(file: Path, where: str) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PromptPackError(f"{where}: {file.name} is not UTF-8 text; save it as UTF-8") from None
    except OSError as exc:
        raise PromptPackError(f"{where}: cannot read {file.name} ({exc.strerror})") from None


def _stamp(path: Path) -> tuple[Any, ...]:
    """Size and mtime of every file a pack reads: changes when any of them does. Plain ``os`` calls:
    a batch asks for it at every run's start (pathlib's glob and stat cost ~2 ms a call)."""
    root = os.fspath(path)
    games = os.path.join(root, "games")
    try:
        with os.scandir(games) as it:
            pages = sorted(e.path for e in it if e.name.endswith(".md"))
    except OSError:
        pages = []
    files = [os.path.join(root, "template.toml"), os.path.join(root, "vocabulary.toml"),
             os.path.join(root, "warmup.toml"), *pages]
    out: list[tuple[str, int | None, int | None]] = []
    for f in files:
        try:
            st = os.stat(f)
            out.append((f, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((f, None, None))
    return tuple(out)


def _guide_files() -> str:
    return "games/<key>.md and games/<key>.short.md for each key of `workstation games`"
