"""The game registry: the 21 AtariBench games, their allowed actions and vocabulary.

Keys are the snake_case keys of the protocol's table; ALE names (``Breakout``,
``BeamRider``) and env ids (``ALE/Breakout-v5``) resolve too. Action ids are
indices into the game's minimal action set (``full_action_space=False``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from dataclasses import dataclass, field

from workstation.errors import UserError

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


class UnknownGame(UserError, ValueError):
    """A game name that is not in the registry (``field`` is ``"game"``)."""

    def __init__(self, message: str, field: str | None = "game", *, file: str | None = None) -> None:
        super().__init__(message, field, file=file)


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
    aliases: dict[str, int] = field(default_factory=dict)  # game-specific words -> action id

    @property
    def env_id(self) -> str:
        return f"ALE/{self.ale_name}-v5"

    @property
    def warmup_frames(self) -> int:
        return FPS_PAPER * self.warmup_seconds

    def action_name(self, action_id: int) -> str:
        """Lower-case ALE meaning of an action id (``upleftfire``)."""
        return self.minimal_set[action_id].lower()

    @property
    def action_names(self) -> tuple[str, ...]:
        """Lower-case ALE meanings of the allowed actions, in id order."""
        return tuple(self.action_name(a) for a in self.allowed)

    @property
    def vocabulary(self) -> dict[str, int]:
        """Every word a reply may use for an allowed action -> action id.

        Canonical names are the lower-case ALE meanings; aliases add the words
        models use for this game ("serve", "punch", "fire up"). Keys are in the
        parser's normal form (see ``normal_name``).
        """
        vocab = {normal_name(self.action_name(a)): a for a in self.allowed}
        for word, action in self.aliases.items():
            vocab.setdefault(normal_name(word), action)
        return vocab


_DIRECTIONS = ("up", "down", "left", "right")


def normal_name(name: str) -> str:
    """Normal form of an action word: lower case, no separators, compounds ordered.

    ``"Up-Left"``, ``"left_up"``, ``"LEFTUP"`` and ``"up left"`` all become
    ``"upleft"``; ``"fire right"`` becomes ``"rightfire"`` (ALE order is vertical,
    horizontal, then fire). Words that are not direction compounds are returned
    with separators removed (``"fire up"`` -> ``"fireup"`` unless it is a compound).
    """
    s = re.sub(r"[\s_\-'\"`*.+]+", "", name.strip().lower())
    if not s:
        return s
    # Try to read s as a bag of direction words plus optional "fire".
    rest, parts = s, []
    while rest:
        for word in ("fire", *_DIRECTIONS):
            if rest.startswith(word):
                parts.append(word)
                rest = rest[len(word):]
                break
        else:
            return s
    if len(set(parts)) != len(parts):
        return s
    vertical = [p for p in parts if p in ("up", "down")]
    horizontal = [p for p in parts if p in ("left", "right")]
    if len(vertical) > 1 or len(horizontal) > 1:
        return s
    return "".join(vertical + horizontal + (["fire"] if "fire" in parts else []))


def _g(key: str, ale: str, n_or_meanings: int | str, allowed: Iterable[int], genre: str, skill: str,
       warmup: int = 0, height: int = 210, in_paper: bool = True, **aliases: Any) -> Game:
    meanings = tuple(_ALL18[:n_or_meanings]) if isinstance(n_or_meanings, int) else tuple(n_or_meanings.split())
    return Game(
        key=key, ale_name=ale, minimal_set=meanings, allowed=tuple(allowed), genre=genre,
        skill=skill, warmup_seconds=warmup, height=height, in_paper=in_paper,
        aliases={k.replace("_", " "): v for k, v in aliases.items()},
    )


_FIRE_LR = "NOOP FIRE RIGHT LEFT RIGHTFIRE LEFTFIRE"
_SHOOT: dict[str, Any] = dict(shoot=1, shoot_right=4, shoot_left=5, stay=0, wait=0)
_ALL18_ALIASES: dict[str, Any] = dict(stay=0, wait=0, shoot=1)

GAMES: dict[str, Game] = {g.key: g for g in [
    _g("air_raid", "AirRaid", _FIRE_LR, range(6), "Shooter", "aiming & avoidance",
       height=250, **_SHOOT),
    _g("assault", "Assault", "NOOP FIRE UP RIGHT LEFT RIGHTFIRE LEFTFIRE", (0, 2, 3, 4, 5, 6),
       "Shooter", "aiming & avoidance", fire_up=2, shoot_up=2, fire=2, shoot=2,
       shoot_right=5, shoot_left=6, stay=0, wait=0),
    _g("beam_rider", "BeamRider", "NOOP FIRE UP RIGHT LEFT UPRIGHT UPLEFT RIGHTFIRE LEFTFIRE",
       (0, 1, 3, 4, 7, 8), "Shooter", "aiming & avoidance", warmup=8,
       shoot=1, shoot_right=7, shoot_left=8, stay=0, wait=0),
    _g("boxing", "Boxing", 18, range(18), "Sports", "rhythmic combat", punch=1, jab=1,
       punch_up=10, punch_right=11, punch_left=12, punch_down=13, stay=0, wait=0),
    _g("breakout", "Breakout", "NOOP FIRE RIGHT LEFT", range(4), "Action", "rebound control",
       serve=1, start=1, launch=1, stay=0, wait=0),
    _g("demon_attack", "DemonAttack", _FIRE_LR, range(6), "Shooter", "aiming & avoidance",
       **_SHOOT),
    _g("fishing_derby", "FishingDerby", 18, range(18), "Sports", "depth targeting",
       reel=1, reel_in=1, stay=0, wait=0),
    _g("freeway", "Freeway", "NOOP UP DOWN", range(3), "Action", "gap identification",
       forward=1, cross=1, back=2, stay=0, wait=0),
    _g("gopher", "Gopher", "NOOP FIRE UP RIGHT LEFT UPFIRE RIGHTFIRE LEFTFIRE",
       (0, 1, 3, 4, 6, 7), "Action", "reactive pathing", warmup=8,
       bonk=1, fill=1, shovel=1, bonk_right=6, bonk_left=7, stay=0, wait=0),
    _g("ice_hockey", "IceHockey", 18, range(18), "Sports", "puck control", in_paper=False,
       **_ALL18_ALIASES),
    _g("journey_escape", "JourneyEscape",
       "NOOP UP RIGHT LEFT DOWN UPRIGHT UPLEFT DOWNRIGHT DOWNLEFT RIGHTFIRE LEFTFIRE DOWNFIRE "
       "UPRIGHTFIRE UPLEFTFIRE DOWNRIGHTFIRE DOWNLEFTFIRE", range(15), "Action",
       "scrolling navigation", height=230, fast_right=9, fast_left=10, fast_down=11,
       fast_upright=12, fast_upleft=13, fast_downright=14, stay=0, wait=0),
    _g("laser_gates", "LaserGates", 18, range(18), "Shooter", "multi-task navigation",
       height=250, **_ALL18_ALIASES),
    _g("name_this_game", "NameThisGame", _FIRE_LR, range(6), "Shooter",
       "precision interception", warmup=15, **_SHOOT),
    _g("pacman", "Pacman", "NOOP UP RIGHT LEFT DOWN", range(5), "Maze", "route planning",
       height=250, warmup=4, stay=0, wait=0),
    _g("phoenix", "Phoenix", "NOOP FIRE RIGHT LEFT DOWN RIGHTFIRE LEFTFIRE DOWNFIRE", range(8),
       "Shooter", "aiming & avoidance", shield=4, shield_fire=7, shoot=1, shoot_right=5, shoot_left=6,
       stay=0, wait=0),
    _g("qbert", "Qbert", "NOOP FIRE UP RIGHT LEFT DOWN", (0, 2, 3, 4, 5), "Maze",
       "route planning", warmup=4, hop_up_right=2, up_right=2, upright=2, hop_down_right=3,
       down_right=3, downright=3, hop_up_left=4, up_left=4, upleft=4, hop_down_left=5,
       down_left=5, downleft=5, stay=0, wait=0),
    _g("riverraid", "Riverraid", 18, range(18), "Shooter", "scrolling navigation", warmup=2,
       accelerate=2, speed_up=2, slow_down=5, brake=5, **_ALL18_ALIASES),
    _g("robotank", "Robotank", 18, range(18), "Shooter", "first-person navigation",
       forward=2, back=5, turn_left=4, turn_right=3, **_ALL18_ALIASES),
    _g("seaquest", "Seaquest", 18, range(18), "Shooter", "multi-task navigation", warmup=4,
       surface=2, dive=5, torpedo=1, **_ALL18_ALIASES),
    _g("tennis", "Tennis", 18, range(10), "Sports", "predictive timing",
       swing=1, serve=1, hit=1, stay=0, wait=0),
    _g("time_pilot", "TimePilot", "NOOP FIRE UP RIGHT LEFT DOWN UPFIRE RIGHTFIRE LEFTFIRE DOWNFIRE",
       range(6), "Shooter", "360-degree navigation", warmup=4, stay=0, wait=0, shoot=1),
]}

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
