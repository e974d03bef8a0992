"""Ground truth from RAM: the objects a question asks about, with screen positions.

Each supported game has a RAM map in ``ram_maps/<game>.toml`` (our own data files,
written from public RAM annotations and checked against real frames in
tests/test_qa_truth.py). A map lists objects; an object has a name, a kind
(player, ball, enemy, car, fish...), a box size, the colours it is drawn in, and
how its top-left screen pixel follows from the 128 bytes of RAM:

- ``{ const = C, step = S }``: C + S * instance (a fixed row or column);
- ``{ ram = A, step = S, scale = K, offset = B, wrap = W }``: K * ram[A + S*i] + B
  (modulo W when given);
- ``{ coarse_fine = A, step = S, offset = B }``: the Atari horizontal-position byte
  (low nibble a 15-pixel column, high nibble a signed fine shift);
- ``{ first_nonzero = [A...], scale = K, offset = B }``: B + K * (index of the first
  address holding a non-zero value).

``present`` lists conditions that must all hold for the object to be on screen:
``{ ram = A, step = S, min = m, max = M }`` or ``{ any_nonzero = [A...] }``.
``region = [x0, y0, x1, y1]`` limits where the object's colour counts as the object
(the shark's black is also the piers' black). ``count = N`` makes N instances (``step`` moves each address or constant).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from workstation.base.errors import UserError

if TYPE_CHECKING:
    import numpy as np

MAPS_DIR = Path(__file__).with_name("ram_maps")
MAP_FORMAT = 1
WIDTH = 160

DIRECTIONS = ("right", "down-right", "down", "down-left", "left", "up-left", "up", "up-right")
STILL = "still"

_TRANSFORM_KEYS = {
    "const": {"const", "step"},
    "ram": {"ram", "step", "scale", "offset", "wrap"},
    "coarse_fine": {"coarse_fine", "step", "offset"},
    "first_nonzero": {"first_nonzero", "scale", "offset"},
}
_OBJECT_KEYS = {"name", "kind", "count", "colors", "size", "x", "y", "present", "tolerance", "flicker", "lane", "region"}


Ram: TypeAlias = "Sequence[int] | np.ndarray[Any, Any]"  # the console's 128 bytes


@dataclass(frozen=True)
class Obj:
    """One object on one frame: its box (top-left x, y; width, height) and the RAM it came from."""

    name: str
    kind: str
    index: int  # instance number (0 for single objects)
    x: float
    y: float
    w: int
    h: int
    ram: tuple[tuple[int, int], ...]  # (address, value) pairs used

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2

    @property
    def label(self) -> str:
        return self.name

    def ram_dict(self) -> dict[str, int]:
        return {str(a): v for a, v in self.ram}


@dataclass(frozen=True)
class ObjectSpec:
    name: str
    kind: str
    count: int
    colors: tuple[tuple[int, int, int], ...]
    size: tuple[int, int]
    x: dict[str, Any]
    y: dict[str, Any]
    present: tuple[dict[str, Any], ...]
    tolerance: int
    flicker: bool
    lane: bool
    region: tuple[int, int, int, int] | None = None  # x0, y0, x1, y1: where its colour counts

    def instances(self, ram: Ram) -> list[Obj]:
        out = []
        for i in range(self.count):
            used: dict[int, int] = {}
            if not all(_holds(c, ram, i, used) for c in self.present):
                continue
            x = _value(self.x, ram, i, used)
            y = _value(self.y, ram, i, used)
            out.append(Obj(self.name, self.kind, i, x, y, self.size[0], self.size[1], tuple(sorted(used.items()))))
        return out

    def colour_of(self, i: int) -> tuple[tuple[int, int, int], ...]:
        """Colours to look for on screen (a lane's own colour when each instance has one)."""
        if self.lane and len(self.colors) == self.count:
            return (self.colors[i],)
        return self.colors


@dataclass(frozen=True)
class RamMap:
    game: str
    specs: tuple[ObjectSpec, ...] = field(default=())

    def objects(self, ram: Ram) -> list[Obj]:
        """Every object the RAM says is on screen."""
        return [o for s in self.specs for o in s.instances(ram)]

    def spec(self, name: str) -> ObjectSpec:
        return next(s for s in self.specs if s.name == name)

    @property
    def player(self) -> ObjectSpec | None:
        return next((s for s in self.specs if s.kind == "player"), None)


def _read(ram: Ram, addr: int, used: dict[int, int]) -> int:
    v = int(ram[addr])
    used[addr] = v
    return v


def _value(t: dict[str, Any], ram: Ram, i: int, used: dict[int, int]) -> float:
    value: float  # an int where the map's numbers are whole (pixels), as read
    if "const" in t:
        value = t["const"] + t.get("step", 0) * i
        return value
    if "ram" in t:
        v = t.get("scale", 1) * _read(ram, t["ram"] + t.get("step", 0) * i, used) + t.get("offset", 0)
        value = v % t["wrap"] if "wrap" in t else v
        return value
    if "coarse_fine" in t:
        c = _read(ram, t["coarse_fine"] + t.get("step", 0) * i, used)
        lo, hi = c & 15, c >> 4
        fine = hi if hi < 8 else hi - 16
        value = 15 * lo + t.get("offset", 0) - fine
        return value
    addrs = t["first_nonzero"]
    for k, a in enumerate(addrs):
        if _read(ram, a, used):
            value = t.get("offset", 0) + t.get("scale", 1) * k
            return value
    value = t.get("offset", 0) + t.get("scale", 1) * len(addrs)
    return value


def _holds(c: dict[str, Any], ram: Ram, i: int, used: dict[int, int]) -> bool:
    if "any_nonzero" in c:
        return any([_read(ram, a, used) for a in c["any_nonzero"]])
    v = _read(ram, c["ram"] + c.get("step", 0) * i, used)
    return bool(c.get("min", 0) <= v <= c.get("max", 255))


# -- loading ---------------------------------------------------------------

def supported_games() -> list[str]:
    return sorted(p.stem for p in MAPS_DIR.glob("*.toml"))


@cache
def load_map(game: str) -> RamMap:
    """The RAM map of a game key (see ``workstation games``); UserError if missing or malformed."""
    path = MAPS_DIR / f"{game}.toml"
    if not path.is_file():
        raise UserError(f"no RAM map for {game!r}: questions from RAM exist for {', '.join(supported_games())}")
    return parse_map(path)


def _ints(c: Any, n: int, what: str) -> list[int]:
    if not isinstance(c, list) or len(c) != n or not all(isinstance(v, int) for v in c):
        raise UserError(f"a RAM map's {what} must be {n} whole numbers (got {c!r})")
    return [int(v) for v in c]


def _rgb(c: Any) -> tuple[int, int, int]:
    r, g, b = _ints(c, 3, "colour")
    return r, g, b


def _box(c: Any) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = _ints(c, 4, "region")
    return x0, y0, x1, y1


def parse_map(path: Path) -> RamMap:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UserError(f"{path}: not a readable TOML file ({e}); fix the file") from None

    def bad(where: str, what: str) -> UserError:
        return UserError(f"{path}: {where}: {what}; see the format in workstation/studies/qa/truth.py")

    if data.get("format") != MAP_FORMAT:
        raise bad("format", f"expected format = {MAP_FORMAT}")
    specs = []
    for n, o in enumerate(data.get("objects", [])):
        where = f"objects[{n}]"
        unknown = set(o) - _OBJECT_KEYS
        if unknown:
            raise bad(where, f"unknown key(s) {sorted(unknown)}")
        for key in ("name", "kind", "size", "x", "y"):
            if key not in o:
                raise bad(where, f"missing {key!r}")
        for axis in ("x", "y"):
            t = o[axis]
            kinds = [k for k in _TRANSFORM_KEYS if k in t] if isinstance(t, dict) else []
            if len(kinds) != 1 or set(t) - _TRANSFORM_KEYS[kinds[0]]:
                raise bad(f"{where}.{axis}", f"expected one of {sorted(_TRANSFORM_KEYS)} with its keys, got {t!r}")
        for c in o.get("present", []):
            if not isinstance(c, dict) or not ({"ram", "any_nonzero"} & set(c)) or set(c) - {"ram", "step", "min", "max", "any_nonzero"}:
                raise bad(f"{where}.present", f"bad condition {c!r}")
        size = o["size"]
        if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
            raise bad(f"{where}.size", "expected [width, height] in pixels")
        specs.append(ObjectSpec(
            name=str(o["name"]), kind=str(o["kind"]), count=int(o.get("count", 1)),
            colors=tuple(_rgb(c) for c in o.get("colors", [])), size=(size[0], size[1]),
            x=dict(o["x"]), y=dict(o["y"]), present=tuple(dict(c) for c in o.get("present", [])),
            tolerance=int(o.get("tolerance", 2)), flicker=bool(o.get("flicker", False)), lane=bool(o.get("lane", False)),
            region=_box(o["region"]) if "region" in o else None,
        ))
    if data.get("game") != path.stem or not specs:
        raise bad("game", "the file must name its game (its file name) and list at least one object")
    return RamMap(game=path.stem, specs=tuple(specs))


# -- motion ------------------------------------------------------------------

def direction(dx: float, dy: float, threshold: float = 2.0) -> str:
    """One of the 8 screen directions (y grows downwards), or ``still`` below ``threshold`` pixels."""
    if math.hypot(dx, dy) < threshold:
        return STILL
    sector = round(math.degrees(math.atan2(dy, dx)) / 45) % 8
    return DIRECTIONS[sector]


def clear_direction(dx: float, dy: float, threshold: float = 2.0, margin_deg: float = 12.0) -> str | None:
    """The direction when it is unambiguous: moved at least ``threshold`` px and not within
    ``margin_deg`` of a boundary between two directions; ``still`` for no movement at all."""
    if dx == 0 and dy == 0:
        return STILL
    if math.hypot(dx, dy) < threshold:
        return None
    angle = math.degrees(math.atan2(dy, dx)) % 45
    if abs(angle - 22.5) < margin_deg:
        return None
    return direction(dx, dy, threshold)


def motion(a: Obj, b: Obj, threshold: float = 2.0) -> str:
    """Direction from object ``a`` (earlier frame) to ``b`` (later frame)."""
    return direction(b.cx - a.cx, b.cy - a.cy, threshold)
