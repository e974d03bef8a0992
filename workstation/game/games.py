"""The game registry: the 21 AtariBench games, their allowed actions and vocabulary.

Keys are the snake_case keys of the protocol's table; ALE names (``Breakout``,
``BeamRider``) and env ids (``ALE/Breakout-v5``) resolve too. Action ids are
indices into the game's minimal action set (``full_action_space=False``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from workstation.base.errors import FieldedError
from workstation.game.vocabulary import GameWords, Vocabulary, builtin_text, harness_key, normal_name, parse_vocabulary

# ALE meaning of each index of every game's minimal action set (ale-py 0.12.1).
_ALL18 = (
    "NOOP FIRE UP RIGHT LEFT DOWN UPRIGHT UPLEFT DOWNRIGHT DOWNLEFT UPFIRE RIGHTFIRE "
    "LEFTFIRE DOWNFIRE UPRIGHTFIRE UPLEFTFIRE DOWNRIGHTFIRE DOWNLEFTFIRE"
).split()

FPS_PAPER = 30  # the paper's clock convention: timestamps are frame / 30
FPS_NATIVE = 60  # the Atari 2600 really runs at 60 Hz
# How fast a person plays, a session runs and a video plays: frames a second (declared once, here).
PACES: dict[str, int] = {"paper": FPS_PAPER, "native": FPS_NATIVE}
MODES = ("realtime", "paused")  # human play: the game never waits, or it waits for each plan


class UnknownGame(FieldedError, ValueError):
    """A game name that is not in the registry (``field`` is ``"game"``)."""

    FIELD = "game"


@dataclass(frozen=True)
class Game:
    key: str
    ale_name: str
    minimal_set: tuple[str, ...]  # ALE meanings of the minimal action set, by index
    allowed: tuple[int, ...]  # action ids the protocol lets an agent use
    genre: str
    skill: str
    warmup_seconds: int = 0
    height: int = 210
    in_paper: bool = True
    aliases: dict[str, int] = field(default_factory=dict)  # every word a reply may use -> action id
    matching: str = "normal"  # how replies match the words (workstation.game.vocabulary)
    taught: tuple[str, ...] = ()  # the words the pack's prompt lists as its actions, when it says

    @property
    def env_id(self) -> str:
        return f"ALE/{self.ale_name}-v5"

    @property
    def warmup_frames(self) -> int:
        return int(round(FPS_PAPER * self.warmup_seconds))

    def action_name(self, action_id: int) -> str:
        """Lower-case ALE meaning of an action id (``upleftfire``)."""
        return self.minimal_set[action_id].lower()

    @property
    def action_names(self) -> tuple[str, ...]:
        """Lower-case ALE meanings of the allowed actions, in id order."""
        return tuple(self.action_name(a) for a in self.allowed)

    @property
    def offered_words(self) -> tuple[str, ...]:
        """The words a built-in agent answers with: the pack's taught list, else the ALE names
        (normal matching), else every word of the vocabulary (harness matching)."""
        if self.taught:
            return self.taught
        return self.action_names if self.matching == "normal" else tuple(self.aliases)

    def word_for(self, action_id: int) -> str:
        """A word of this game's vocabulary that plays ``action_id``: the ALE name when it does, else the first
        offered word, else the first word; the ALE name when no word does."""
        name = self.action_name(action_id)
        words = self.vocabulary
        if words.lookup(name) == action_id:
            return name
        for w in (*self.offered_words, *self.aliases):
            if words.lookup(w) == action_id:
                return w
        return name

    @property
    def vocabulary(self) -> GameWords:
        """The words a reply may use, with the lookup rule of ``matching``: ``.lookup(word)`` -> id or None.

        The words are data: the default pack's ``vocabulary.toml`` for the games of
        this registry, a pack's own for the games ``PromptPack.game`` returns.
        """
        words = self.__dict__.get("_words")
        if words is None:
            table: dict[str, int] = {}
            form = normal_name if self.matching == "normal" else harness_key
            for word, action in self.aliases.items():
                table.setdefault(form(word), action)
            words = GameWords(table, self.matching)
            object.__setattr__(self, "_words", words)
        return words


def _g(key: str, ale: str, n_or_meanings: int | str, allowed: Iterable[int], genre: str, skill: str,
       warmup: int = 0, height: int = 210, in_paper: bool = True) -> Game:
    meanings = tuple(_ALL18[:n_or_meanings]) if isinstance(n_or_meanings, int) else tuple(n_or_meanings.split())
    return Game(
        key=key, ale_name=ale, minimal_set=meanings, allowed=tuple(allowed), genre=genre,
        skill=skill, warmup_seconds=warmup, height=height, in_paper=in_paper,
    )


_FIRE_LR = "NOOP FIRE RIGHT LEFT RIGHTFIRE LEFTFIRE"

GAMES: dict[str, Game] = {g.key: g for g in [
    _g("air_raid", "AirRaid", _FIRE_LR, range(6), "Shooter", "aiming & avoidance",
       height=250),
    _g("assault", "Assault", "NOOP FIRE UP RIGHT LEFT RIGHTFIRE LEFTFIRE", (0, 2, 3, 4, 5, 6),
       "Shooter", "aiming & avoidance"),
    _g("beam_rider", "BeamRider", "NOOP FIRE UP RIGHT LEFT UPRIGHT UPLEFT RIGHTFIRE LEFTFIRE",
       (0, 1, 3, 4, 7, 8), "Shooter", "aiming & avoidance", warmup=8),
    _g("boxing", "Boxing", 18, range(18), "Sports", "rhythmic combat"),
    _g("breakout", "Breakout", "NOOP FIRE RIGHT LEFT", range(4), "Action", "rebound control"),
    _g("demon_attack", "DemonAttack", _FIRE_LR, range(6), "Shooter", "aiming & avoidance"),
    _g("fishing_derby", "FishingDerby", 18, range(18), "Sports", "depth targeting"),
    _g("freeway", "Freeway", "NOOP UP DOWN", range(3), "Action", "gap identification"),
    _g("gopher", "Gopher", "NOOP FIRE UP RIGHT LEFT UPFIRE RIGHTFIRE LEFTFIRE",
       (0, 1, 3, 4, 6, 7), "Action", "reactive pathing", warmup=8),
    _g("ice_hockey", "IceHockey", 18, range(18), "Sports", "puck control", in_paper=False),
    _g("journey_escape", "JourneyEscape",
       "NOOP UP RIGHT LEFT DOWN UPRIGHT UPLEFT DOWNRIGHT DOWNLEFT RIGHTFIRE LEFTFIRE DOWNFIRE "
       "UPRIGHTFIRE UPLEFTFIRE DOWNRIGHTFIRE DOWNLEFTFIRE", range(16), "Action",
       "scrolling navigation", height=230),
    _g("laser_gates", "LaserGates", 18, range(18), "Shooter", "multi-task navigation",
       height=250),
    _g("name_this_game", "NameThisGame", _FIRE_LR, range(6), "Shooter",
       "precision interception", warmup=15),
    _g("pacman", "Pacman", "NOOP UP RIGHT LEFT DOWN", range(5), "Maze", "route planning",
       height=250, warmup=4),
    _g("phoenix", "Phoenix", "NOOP FIRE RIGHT LEFT DOWN RIGHTFIRE LEFTFIRE DOWNFIRE", range(8),
       "Shooter", "aiming & avoidance"),
    _g("qbert", "Qbert", "NOOP FIRE UP RIGHT LEFT DOWN", (0, 2, 3, 4, 5), "Maze",
       "route planning", warmup=4),
    _g("riverraid", "Riverraid", 18, range(18), "Shooter", "scrolling navigation", warmup=2),
    _g("robotank", "Robotank", 18, range(18), "Shooter", "first-person navigation"),
    _g("seaquest", "Seaquest", 18, range(18), "Shooter", "multi-task navigation", warmup=4),
    _g("tennis", "Tennis", 18, range(10), "Sports", "predictive timing"),
    _g("time_pilot", "TimePilot", "NOOP FIRE UP RIGHT LEFT DOWN UPFIRE RIGHTFIRE LEFTFIRE DOWNFIRE",
       range(6), "Shooter", "360-degree navigation", warmup=4),
]}

def _with_words(games: dict[str, Game], vocabulary: Vocabulary) -> dict[str, Game]:
    """The games with the actions and words of ``vocabulary`` (the default pack's, at import)."""
    out = {}
    for key, g in games.items():
        out[key] = replace(g, allowed=vocabulary.offered(key, g.minimal_set),
                           aliases=vocabulary.ids(key, g.minimal_set), matching=vocabulary.matching)
    return out


MINIMAL_SETS = {k: g.minimal_set for k, g in GAMES.items()}
GAMES = _with_words(GAMES, parse_vocabulary(builtin_text(), MINIMAL_SETS, "the default pack's vocabulary.toml"))

_LOOKUP: dict[str, str] = {}
for _game in GAMES.values():
    for _name in (_game.key, _game.ale_name, _game.env_id):
        _LOOKUP[re.sub(r"[\s_\-]", "", _name.lower())] = _game.key


def get_game(name: str) -> Game:
    """Resolve a key, ALE name or env id to its Game, or raise UnknownGame."""
    found = _LOOKUP.get(re.sub(r"[\s_\-]", "", name.strip().lower()))
    if found is None:
        raise UnknownGame(
            f"unknown game {name!r}: run `workstation games` for the 21 keys (e.g. breakout, beam_rider)"
        )
    return GAMES[found]


def paper_games() -> list[Game]:
    """The 20 games the paper reports (IceHockey is in the harness but not the paper)."""
    return [g for g in GAMES.values() if g.in_paper]


def is_atari_game(name: str) -> bool:
    """Whether ``name`` names an Atari game: one of the workstation's (a key, ALE name or env id) or any game the
    ALE has a ROM id for (``pong``), as a results CSV from elsewhere may hold; ``nogame`` is none."""
    key = re.sub(r"[\s_\-]", "", name.strip().lower())
    return key in _LOOKUP or key in _rom_ids()


@functools.cache
def _rom_ids() -> frozenset[str]:
    """The ALE's ROM ids, as ``_LOOKUP``'s keys are written (lower case, no spaces, dashes or underscores)."""
    from ale_py import roms

    return frozenset(re.sub(r"[\s_\-]", "", r.lower()) for r in roms.get_all_rom_ids())
