"""Where an object's pixels are: the check that ties a RAM map to real frames."""

from __future__ import annotations

import numpy as np

from workstation.qa.truth import Obj, ObjectSpec


def box_mask(spec: ObjectSpec, obj: Obj, rgb: np.ndarray) -> np.ndarray:
    """Pixels of the object's colours (any non-black pixel when it has none) in its box
    widened by the map's tolerance."""
    t = spec.tolerance
    h, w = rgb.shape[:2]
    x0, y0 = max(0, int(round(obj.x)) - t), max(0, int(round(obj.y)) - t)
    x1, y1 = min(w, int(round(obj.x)) + obj.w + t), min(h, int(round(obj.y)) + obj.h + t)
    if spec.region:  # the part of the screen where the object's colour means the object
        rx0, ry0, rx1, ry1 = spec.region
        x0, y0, x1, y1 = max(x0, rx0), max(y0, ry0), min(x1, rx1), min(y1, ry1)
    if x1 <= x0 or y1 <= y0:
        return np.zeros((0, 0), bool)
    patch = rgb[y0:y1, x0:x1]
    colours = spec.colour_of(obj.index)
    if not colours:
        return (patch != 0).any(-1)
    mask = np.zeros(patch.shape[:2], bool)
    for c in colours:
        mask |= (patch == np.array(c, np.uint8)).all(-1)
    return mask


def drawn(spec: ObjectSpec, obj: Obj, rgb: np.ndarray) -> bool:
    """True when the object's colour covers at least an eighth of its box (3 pixels at
    least) within the box widened by the map's tolerance."""
    return int(box_mask(spec, obj, rgb).sum()) >= max(3, obj.w * obj.h // 8)
