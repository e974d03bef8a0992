"""A verdict's evidence checked against the RAM (beyond the paper).

The rule, clause by clause (a clause ends at . ; , or at "and", "but", "while", "whereas"):

- a clause that names exactly one object of the game's RAM map (``workstation/studies/qa/ram_maps``: its
  name, e.g. "ball", "paddle", "chicken"; an object with several instances is never named
  unambiguously and is skipped) and has no negation (not, n't, never, no longer) may state
- a **motion**: a motion verb (moving, moves, heading, going, travelling, drifting, flying,
  coming) followed by left/right/up/down, or falling/dropping/descending (down) or
  rising/climbing/ascending (up). Checked on the object's RAM position from the turn's start
  frame to ``MOTION_FRAMES`` later (or the turn's end): a stated direction agrees when the
  object moved at least ``MIN_MOVE`` px that way, disagrees when it moved that far the other
  way, else it is unknown;
- a **position**: "on/at/to the left|right", "left|right side|half", "at the top|bottom",
  "top|bottom half". Checked at the turn's start frame (the screen the player decided on): the
  object's centre must lie outside the middle band (``BAND`` px either side of the screen's
  centre line) to agree or disagree, else it is unknown.

A verdict's ``truth_agrees`` is false when any checked claim disagrees, true when at least one
agrees and none disagrees, and "unknown" when no claim could be checked (no map for the game,
no object named, the object off screen).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workstation.store.recording import Recording

MOTION_FRAMES = 9
MIN_MOVE = 2.0
BAND = 8.0
if TYPE_CHECKING:
    from workstation.studies.qa.truth import Obj, RamMap

UNKNOWN = "unknown"

_SPLIT = re.compile(r"[.;,:!?()]|\band\b|\bbut\b|\bwhile\b|\bwhereas\b", re.IGNORECASE)
_NEG = re.compile(r"\bnot\b|n't\b|\bnever\b|\bno longer\b", re.IGNORECASE)
_MOVE = re.compile(r"\b(?:moving|moves|moved|heading|heads|headed|going|goes|travel+ing|travels|drifting|"
                   r"flying|flies|coming|comes|bouncing|bounces)\b(?:\s+\w+){0,3}?\s+(?:to\s+the\s+|towards?\s+the\s+)?"
                   r"(left|right|up|down|upwards?|downwards?)\b", re.IGNORECASE)
_FALL = re.compile(r"\b(falling|falls|dropping|drops|descending|descends|rising|rises|climbing|climbs|"
                   r"ascending|ascends)\b", re.IGNORECASE)
_POS = re.compile(r"\b(?:on|at|to|in)\s+the\s+(?:far\s+)?(left|right|top|bottom)\b(?!\s*(?:wall|edge))"
                  r"|\b(left|right|top|bottom)\s+(?:side|half)\b", re.IGNORECASE)
_DOWN = {"falling", "falls", "dropping", "drops", "descending", "descends"}


@dataclass(frozen=True)
class Claim:
    obj: str
    kind: str  # motion | position
    value: str  # left | right | up | down | top | bottom
    agrees: bool | None = None
    measured: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"object": self.obj, "claim": self.kind, "value": self.value,
                "agrees": UNKNOWN if self.agrees is None else self.agrees, "ram": self.measured}


def _norm(word: str) -> str:
    w = word.lower()
    return {"upward": "up", "upwards": "up", "downward": "down", "downwards": "down"}.get(w, w)


def claims(evidence: str, names: list[str]) -> list[Claim]:
    """The motion and position claims the rule reads in ``evidence`` about the named objects."""
    out = []
    for clause in _SPLIT.split(evidence or ""):
        if not clause or _NEG.search(clause):
            continue
        low = clause.lower()
        named = [n for n in names if re.search(rf"(?<!\w){re.escape(n.lower())}s?(?!\w)", low)]
        if len(named) != 1:
            continue
        obj = named[0]
        m = _MOVE.search(clause)
        f = _FALL.search(clause)
        if m:
            out.append(Claim(obj, "motion", _norm(m.group(1))))
        elif f:
            out.append(Claim(obj, "motion", "down" if f.group(1).lower() in _DOWN else "up"))
        else:
            p = _POS.search(clause)
            if p:
                out.append(Claim(obj, "position", (p.group(1) or p.group(2)).lower()))
    return out


def _single_objects(game: str) -> RamMap | None:
    from workstation.base.errors import UserError
    from workstation.studies.qa.truth import load_map, supported_games

    if game not in supported_games():
        return None
    try:
        return load_map(game)
    except UserError:
        return None


def _find(ram_map: RamMap, ram: Any, name: str) -> Obj | None:
    objs = [o for o in ram_map.objects(ram) if o.name.lower() == name.lower()]
    return objs[0] if len(objs) == 1 else None


def check(rec: Recording, turn: int, evidence: str) -> tuple[bool | str, list[dict[str, Any]]]:
    """(truth_agrees, the claims with what the RAM says) for a verdict on ``turn`` of ``rec``."""
    game = rec.manifest_record.game or ""
    ram_map = _single_objects(game)
    if ram_map is None:
        return UNKNOWN, []
    names = [s.name for s in ram_map.specs if s.count == 1]
    found = claims(evidence, names)
    if not found:
        return UNKNOWN, []
    t = rec.turn_records[turn]
    frames = rec.frames
    last = len(frames) - 1
    start = min(t.start_frame, last)
    later = min(t.end_frame, start + MOTION_FRAMES, last)
    height = (rec.manifest_record.frame_shape or [210, 160])[0]
    checked = []
    for c in found:
        a = _find(ram_map, frames.ram(start), c.obj)
        if c.kind == "position":
            if a is None:
                checked.append(c)
                continue
            if c.value in ("left", "right"):
                off, where = a.cx - 80, f"centre x {a.cx:g}"
            else:
                off, where = a.cy - height / 2, f"centre y {a.cy:g}"
            side = None if abs(off) <= BAND else (c.value in ("right", "bottom")) == (off > 0)
            checked.append(Claim(c.obj, c.kind, c.value, side, where))
            continue
        b = _find(ram_map, frames.ram(later), c.obj) if later > start else None
        if a is None or b is None:
            checked.append(c)
            continue
        d = (b.cx - a.cx) if c.value in ("left", "right") else (b.cy - a.cy)
        sign = 1 if c.value in ("right", "down") else -1
        agrees = True if sign * d >= MIN_MOVE else False if sign * d <= -MIN_MOVE else None
        checked.append(Claim(c.obj, c.kind, c.value, agrees,
                             f"dx {b.cx - a.cx:+g}, dy {b.cy - a.cy:+g} over frames {start}-{later}"))
    verdicts = [c.agrees for c in checked if c.agrees is not None]
    overall: bool | str = UNKNOWN if not verdicts else all(verdicts)
    return overall, [c.to_json() for c in checked]
