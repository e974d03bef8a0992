"""Action vocabularies: the words a reply may use in each game, and the action each one means.

A vocabulary is data (a prompt pack's ``vocabulary.toml``): for every game a table
``word = "meaning"``, where the meaning is one lower-case ALE action name of that
game's minimal action set (``"upfire"``, ``"downleftfire"``). Several words may
share a meaning (aliases). The distinct meanings are the actions the pack offers.

Matching, ``matching = "normal"`` (the default pack's): a word and a table entry
match when their normal forms are equal (``normal_name``):

- case does not matter, and ``_``, ``-``, spaces, quotes and dots are dropped
  (``Move_Left``, ``move-left`` and ``move left`` are one word);
- a compound of at most one vertical direction (up, down), at most one horizontal
  one (left, right) and at most one suffix (fire, punch, shoot) is put in the ALE
  order vertical, horizontal, suffix, whatever order it was written in:
  ``leftup`` = ``upleft``, ``fire right`` = ``rightfire``, ``punch up`` = ``uppunch``,
  ``left-down-shoot`` = ``downleftshoot``.

``matching = "harness"`` (packs made by ``prompts from-atari-bench``) follows the
public harness's stricter rule instead: the word in lower case with ``_`` read as
a space and runs of blanks collapsed, looked up as written, then without hyphens,
then as a reordered compound (suffix fire/punch/shoot kept last), then that
without hyphens. Nothing else matches.

A top-level table ``[taught]`` may list, per game, the words the pack's prompt
teaches as its actions, in the prompt's order (``breakout = ["noop", "start",
"left", "right"]``); each must be one of the game's words. The built-in agents
(random, replay) answer with these words. Without it they use the ALE names
(``matching = "normal"``) or every word of the game (``"harness"``).
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field

from workstation.base.locations import default_pack_dir

MATCHING = ("normal", "harness")
_DIRECTIONS = ("up", "down", "left", "right")
_SUFFIXES = ("fire", "punch", "shoot")


class VocabularyError(ValueError):
    """A vocabulary file that cannot be used; the message names the game, word and fix."""


def normal_name(name: str) -> str:
    """Normal form of an action word (see the module doc): ``"Left-Up"`` -> ``"upleft"``.

    Words that are not direction compounds come back lower-cased with separators
    removed (``"move left"`` -> ``"moveleft"``).
    """
    s = re.sub(r"[\s_\-'\"`*.+]+", "", name.strip().lower())
    if not s:
        return s
    rest, parts = s, []
    while rest:
        for word in (*_SUFFIXES, *_DIRECTIONS):
            if rest.startswith(word):
                parts.append(word)
                rest = rest[len(word):]
                break
        else:
            return s
    vertical = [p for p in parts if p in ("up", "down")]
    horizontal = [p for p in parts if p in ("left", "right")]
    suffix = [p for p in parts if p in _SUFFIXES]
    if len(set(parts)) != len(parts) or len(vertical) > 1 or len(horizontal) > 1 or len(suffix) > 1:
        return s
    return "".join(vertical + horizontal + suffix)


_cached_normal = functools.lru_cache(maxsize=8192)(normal_name)


def harness_form(word: str) -> str:
    """The harness's spelling of a word: stripped of blanks and quotes, lower case, ``_`` as a space."""
    return " ".join(word.strip().strip("\"'").lower().replace("_", " ").split())


def harness_key(word: str) -> str:
    """How the harness spells a word of its own map: lower case, blanks collapsed."""
    return " ".join(word.strip().lower().split())


def _reordered(name: str) -> str | None:
    """The harness's compound reordering: ``leftup`` -> ``upleft``, ``leftuppunch`` -> ``upleftpunch``."""
    rest, suffix = name, ""
    for s in _SUFFIXES:
        if rest.endswith(s) and rest != s:
            suffix, rest = s, rest[: -len(s)]
            break
    found = []
    for group in (("up", "down"), ("right", "left")):
        for d in group:
            if d in rest:
                found.append(d)
                rest = rest.replace(d, "", 1)
                break
    if rest:
        return None
    parts = found + ([suffix] if suffix else [])
    return "".join(parts) if len(parts) >= 2 else None


@dataclass(frozen=True)
class GameWords:
    """One game's words: a lookup table built once, and the ids the words mean."""

    table: dict[str, int]  # matching form -> minimal-set id
    matching: str

    def get(self, form: str, default: int | None = None) -> int | None:
        """The id of a word already in matching form (``normal_name``), as a dict lookup."""
        return self.table.get(form, default)

    def __getitem__(self, form: str) -> int:
        return self.table[form]

    def __contains__(self, form: str) -> bool:
        return form in self.table

    def lookup(self, word: str) -> int | None:
        """The id ``word`` means in this game, or None (the rules are in the module doc)."""
        if self.matching == "normal":
            return self.table.get(_cached_normal(word))
        name = harness_form(word)
        for candidate in (name, name.replace("-", "")):
            if candidate in self.table:
                return self.table[candidate]
        again = _reordered(name)
        if again is not None:
            for candidate in (again, again.replace("-", "")):
                if candidate in self.table:
                    return self.table[candidate]
        return None


@dataclass(frozen=True)
class Vocabulary:
    """Every game's words -> ALE meanings, and how replies are matched against them."""

    games: dict[str, dict[str, str]]  # game key -> {word as written: lower-case ALE meaning}
    matching: str = "normal"
    taught: dict[str, tuple[str, ...]] = field(default_factory=dict)  # game key -> the words its prompt lists

    def ids(self, key: str, minimal_set: tuple[str, ...]) -> dict[str, int]:
        """word -> index into the minimal action set."""
        index = {m.lower(): i for i, m in enumerate(minimal_set)}
        return {w: index[m] for w, m in self.games[key].items()}

    def offered(self, key: str, minimal_set: tuple[str, ...]) -> tuple[int, ...]:
        return tuple(sorted(set(self.ids(key, minimal_set).values())))

    def canonical(self) -> str:
        """A stable text of the whole vocabulary (what a pack's digest covers)."""
        lines = [f"matching={self.matching}"]
        for key in sorted(self.games):
            lines += [f"{key}\0{w}\0{m}" for w, m in sorted(self.games[key].items())]
        for key in sorted(self.taught):  # absent from the default pack, whose digest stays as it was
            lines.append(f"taught\0{key}\0" + "\0".join(self.taught[key]))
        return "\n".join(lines)

    def to_toml(self, header: str = "") -> str:
        out = [header.rstrip() + "\n"] if header else []
        out.append(f'matching = "{self.matching}"\n')
        for key in self.games:
            out.append(f"\n[{key}]\n")
            for word, meaning in self.games[key].items():
                out.append(f"{_toml_key(word)} = \"{meaning}\"\n")
        if self.taught:
            out.append("\n# The words each game's prompt lists as its actions, in its order (what built-in agents say).\n")
            out.append("[taught]\n")
            for key, words in self.taught.items():
                out.append(f"{key} = [{', '.join(_toml_string(w) for w in words)}]\n")
        return "".join(out)


def _toml_key(word: str) -> str:
    return word if re.fullmatch(r"[A-Za-z0-9_-]+", word) else '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_string(word: str) -> str:
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_vocabulary(text: str, minimal_sets: dict[str, tuple[str, ...]], where: str) -> Vocabulary:
    """Read and check a ``vocabulary.toml`` text against every game's minimal action set."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise VocabularyError(f"{where}: not valid TOML ({exc}); quote words with spaces or hyphens") from None
    matching = data.pop("matching", "normal")
    if matching not in MATCHING:
        raise VocabularyError(f"{where}: matching = {matching!r} is unknown; use \"normal\" or \"harness\"")
    taught_data = data.pop("taught", {})
    if not isinstance(taught_data, dict):
        raise VocabularyError(f"{where}: taught must be a table of game = [\"word\", ...]")
    unknown = sorted(set(data) - set(minimal_sets))
    if unknown:
        raise VocabularyError(f"{where}: [{unknown[0]}] is not a game key; `workstation games` lists the 21 keys")
    games: dict[str, dict[str, str]] = {}
    for key, minimal in minimal_sets.items():
        table = data.get(key)
        if not isinstance(table, dict) or not table:
            raise VocabularyError(f"{where}: [{key}] is missing or empty; list its words as word = \"meaning\"")
        meanings = {m.lower() for m in minimal}
        words: dict[str, str] = {}
        for word, meaning in table.items():
            if not isinstance(meaning, str) or meaning.lower() not in meanings:
                raise VocabularyError(
                    f"{where}: [{key}] {word} = {meaning!r}: the meaning must be one of {key}'s actions "
                    f"({', '.join(sorted(meanings))})"
                )
            if not word.strip():
                raise VocabularyError(f"{where}: [{key}] has an empty word; remove it")
            words[word] = meaning.lower()
        if "noop" not in words.values():
            raise VocabularyError(f"{where}: [{key}] has no word for noop; an invalid turn plays noop, so one is needed")
        games[key] = words
    taught: dict[str, tuple[str, ...]] = {}
    for key, listed in taught_data.items():
        if key not in games:
            raise VocabularyError(f"{where}: [taught] {key} is not a game key; `workstation games` lists the 21 keys")
        if not isinstance(listed, list) or not listed or not all(isinstance(w, str) for w in listed):
            raise VocabularyError(f"{where}: [taught] {key} must be a non-empty list of words, e.g. [\"noop\"]")
        form = normal_name if matching == "normal" else harness_key
        known = {form(w) for w in games[key]}
        for w in listed:
            if form(w) not in known:
                raise VocabularyError(f"{where}: [taught] {key} lists {w!r}, which is not one of {key}'s words; "
                                      "add it to the game's table or remove it")
        taught[key] = tuple(listed)
    return Vocabulary(games, matching, taught)


def builtin_text() -> str:
    """The default pack's ``vocabulary.toml``."""
    return (default_pack_dir() / "vocabulary.toml").read_text(encoding="utf-8")
