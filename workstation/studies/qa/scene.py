"""One recording seen through its game's RAM map: the objects visible on each frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.store.index import find_recordings
from workstation.store.recording import Recording
from workstation.store.records import RecordingError
from workstation.studies.qa.pixels import aligned, blob_centre
from workstation.studies.qa.truth import Obj, ObjectSpec, RamMap, load_map

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def describe(spec: ObjectSpec, obj: Obj) -> str:
    """How a question names the object: 'the ball', 'the car in the third lane from the top'."""
    if spec.count == 1:  # a capitalised name is a character's own name: no article
        return spec.name if spec.name[:1].isupper() else f"the {spec.name}"
    step = spec.y.get("step", 0) if "const" in spec.y else 0
    where = "lane" if spec.lane else "row"
    side = "top" if step >= 0 else "bottom"
    return f"the {spec.name} in the {_ORDINALS[obj.index]} {where} from the {side}"


def _touches_lookalike(item: tuple[ObjectSpec, Obj], others: list[tuple[ObjectSpec, Obj]]) -> bool:
    """True when another object drawn in a shared colour overlaps this one's box (with the
    tolerances): on that frame the pixels cannot tell the two apart (a ball on the paddle)."""
    s, o = item
    for t, p in others:
        if p is o or (s.colors and t.colors and not set(s.colour_of(o.index)) & set(t.colour_of(p.index))):
            continue
        m = s.tolerance + t.tolerance
        if o.x - m < p.x + p.w and p.x - m < o.x + o.w and o.y - m < p.y + p.h and p.y - m < o.y + o.h:
            return True
    return False


class Scene:
    """A recording with its RAM map; ``visible(i)`` is cached per frame."""

    def __init__(self, rec: Recording, ram_map: RamMap) -> None:
        self.rec = rec
        self.map = ram_map
        self.game = ram_map.game
        self.run_id = str(rec.manifest_record.run_id or rec.path.name)
        self.frames = rec.frames
        self.n = len(self.frames)
        self._visible: dict[int, list[tuple[ObjectSpec, Obj]]] = {}
        self._blobs: dict[tuple[Any, ...], tuple[float, float] | None] = {}
        self._lookalikes: dict[int, list[tuple[ObjectSpec, Obj]]] = {}

    def visible(self, i: int) -> list[tuple[ObjectSpec, Obj]]:
        """Objects the RAM puts on screen on frame ``i`` whose pixels are where it says (``aligned``)."""
        hit = self._visible.get(i)
        if hit is None:
            ram = self.frames.ram(i)
            rgb = self.frames.rgb(i)
            hit = [(s, o) for s in self.map.specs for o in s.instances(ram) if aligned(s, o, rgb)]
            self._lookalikes[i] = [h for h in hit if _touches_lookalike(h, hit)]
            self._visible[i] = [h for h in hit if h not in self._lookalikes[i]]
            hit = self._visible[i]
        return hit

    def crowded(self, i: int, spec: ObjectSpec) -> bool:
        """True when some drawn instance of ``spec`` was left out of ``visible(i)`` for touching
        a lookalike (so a count on that frame would be off)."""
        self.visible(i)
        return any(s is spec for s, _ in self._lookalikes[i])

    def blob(self, i: int, spec: ObjectSpec, obj: Obj) -> tuple[float, float] | None:
        """Where a pixels-only reading puts the object's centre on frame ``i``."""
        key = (i, spec.name, obj.index)
        if key not in self._blobs:
            self._blobs[key] = blob_centre(spec, obj, self.frames.rgb(i))
        return self._blobs[key]

    def find(self, i: int, spec: ObjectSpec, index: int) -> Obj | None:
        return next((o for s, o in self.visible(i) if s is spec and o.index == index), None)


def open_scenes(dirs: list[str]) -> tuple[list[Scene], list[str]]:
    """Every recording under the given directories whose game has a RAM map, in path order,
    and a note for each recording left out."""
    from workstation.studies.qa.truth import supported_games

    paths: list[Path] = []
    for d in dirs:
        found = find_recordings(Path(d))
        if not found:
            raise UserError(f"no recordings under {d}; pass recording directories (made by `workstation run`)")
        paths.extend(found)
    scenes, skipped = [], []
    supported = set(supported_games())
    for p in sorted(set(paths), key=str):
        try:
            rec = Recording(p)
        except RecordingError as e:
            raise UserError(str(e)) from None
        rec.require_sound()  # damaged frames or RAM would give questions with wrong answers: refused, exit 1
        game = rec.manifest_record.game or ""
        if game not in supported:
            skipped.append(f"{p}: no RAM map for {game}")
            continue
        scenes.append(Scene(rec, load_map(game)))
    return scenes, skipped
