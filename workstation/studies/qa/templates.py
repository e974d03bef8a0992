"""Question templates per category, named with a game's own objects (from its RAM map).

The curator starts a hand-written question from one of these: the text names the
game and one or two of its objects, the choices are the category's usual ones, and
the answer starts at the first choice for the person to set. A game without a RAM
map gets the generic names "player" and "object".
"""

from __future__ import annotations

from typing import Any

from workstation.engine.promptpack import display_title
from workstation.studies.qa.gen import CARDINAL, plural_noun
from workstation.studies.qa.qset import QA_CATEGORIES
from workstation.studies.qa.truth import MAPS_DIR, load_map


def object_names(game: str) -> list[str]:
    """The game's object names, the player's object first (its RAM map's order otherwise)."""
    if not (MAPS_DIR / f"{game}.toml").is_file():
        return ["player", "object"]
    specs = load_map(game).specs
    ordered = sorted(specs, key=lambda s: s.kind != "player")
    return list(dict.fromkeys(s.name for s in ordered))


def _the(name: str) -> str:
    return name if name[:1].isupper() else f"the {name}"  # a character's own name takes no article


def default_objects(game: str, category: str) -> tuple[str, str]:
    """Object A and object B the template starts with for this category."""
    names = object_names(game)
    player = names[0]
    others = names[1:] or names
    if category == "perception-detection":
        counted = [s.name for s in load_map(game).specs if s.count > 1] if (MAPS_DIR / f"{game}.toml").is_file() else []
        return (counted or others)[0], player
    if category in ("motion-controlled", "decision-short", "decision-long"):
        return player, others[0]
    return others[0], player  # spatial, motion-target: another object, relative to the player's


MAX_COUNT_CHOICES = 10  # a count template offers 0..N for up to this many objects


def fixed_axes(game: str, name: str) -> set[str]:
    """The axes ("x", "y") along which the object never moves in this game (a constant in its RAM map)."""
    if not (MAPS_DIR / f"{game}.toml").is_file():
        return set()
    spec = next((s for s in load_map(game).specs if s.name == name), None)
    if spec is None:
        return set()
    return {axis for axis in ("x", "y") if "const" in getattr(spec, axis)}


def fill(game: str, category: str, a: str, b: str) -> dict[str, Any]:
    """The template's ``question``, ``choices`` and ``answer`` (the first choice) for objects a and b."""
    if category not in QA_CATEGORIES:
        raise ValueError(f"unknown category {category!r}")
    title = display_title(game)
    count = 3
    if (MAPS_DIR / f"{game}.toml").is_file():
        count = max(3, next((s.count for s in load_map(game).specs if s.name == a), 3))
    if category == "perception-detection":
        q = f"In {title}, how many {plural_noun(a)} are visible?"
        choices = [str(k) for k in range(0, min(count, MAX_COUNT_CHOICES) + 1)]  # Freeway's 10 cars: 0..10
    elif category == "perception-spatial":
        q = f"In {title}, is {_the(a)} to the left or to the right of {_the(b)}?"
        choices = ["left", "right"]
    elif category == "motion-target":
        q = f"In {title}, across these frames, in which direction is {_the(a)} moving?"
        choices = list(CARDINAL)
    elif category == "motion-controlled":
        q = f"In {title}, across these frames, in which direction is {_the(a)} (the object you control) moving?"
        fixed = fixed_axes(game, a)
        choices = [c for c in CARDINAL if not ((c in ("left", "right") and "x" in fixed)
                                               or (c in ("up", "down") and "y" in fixed))]
    else:  # decision-short / decision-long: the same text; the eval prepends the guide for -long
        if "x" in fixed_axes(game, a) and "y" not in fixed_axes(game, a):  # Freeway: the chicken goes up or down
            q = f"In {title}, with {_the(b)} where it is, should {_the(a)} move up or down now?"
            choices = ["up", "down"]
        else:
            q = f"In {title}, to reach {_the(b)}, should {_the(a)} move left or right now?"
            choices = ["left", "right"]
    return {"question": q, "choices": choices, "answer": choices[0]}

