"""Where an object's pixels are: the check that ties a RAM map to real frames."""

from __future__ import annotations

import numpy as np

from workstation.studies.qa.truth import Obj, ObjectSpec


def colour_mask(pixels: np.ndarray, colours: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """Which of ``pixels`` (H x W x 3) are one of ``colours``; with no colours, which are not black."""
    if not colours:
        out: np.ndarray = (pixels != 0).any(-1)
        return out
    mask = np.zeros(pixels.shape[:2], bool)
    for c in colours:
        mask |= (pixels == np.array(c, np.uint8)).all(-1)
    return mask


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
    return colour_mask(rgb[y0:y1, x0:x1], spec.colour_of(obj.index))


def drawn(spec: ObjectSpec, obj: Obj, rgb: np.ndarray) -> bool:
    """True when the object's colour covers at least an eighth of its box (3 pixels at
    least) within the box widened by the map's tolerance."""
    return int(box_mask(spec, obj, rgb).sum()) >= max(3, obj.w * obj.h // 8)


def aligned(spec: ObjectSpec, obj: Obj, rgb: np.ndarray, margin: int = 8) -> bool:
    """Stricter than ``drawn``: in a window ``margin`` px around the box, the object's pixels
    start or end within the tolerance of the box's edges, on both axes (either edge, as
    sprites animate). A box a few pixels off along a tall or wide object fails this."""
    if not drawn(spec, obj, rgb):
        return False
    t = spec.tolerance
    h, w = rgb.shape[:2]
    bx, by = int(round(obj.x)), int(round(obj.y))
    x0, y0 = max(0, bx - margin), max(0, by - margin)
    x1, y1 = min(w, bx + obj.w + margin), min(h, by + obj.h + margin)
    if spec.region:
        rx0, ry0, rx1, ry1 = spec.region
        x0, y0, x1, y1 = max(x0, rx0), max(y0, ry0), min(x1, rx1), min(y1, ry1)
    mask = colour_mask(rgb[y0:y1, x0:x1], spec.colour_of(obj.index))
    ys, xs = np.nonzero(mask)
    if not len(xs):
        return False
    px0, px1, py0, py1 = xs.min() + x0, xs.max() + x0 + 1, ys.min() + y0, ys.max() + y0 + 1

    def near(a0: float, a1: float, b0: float, b1: float, lo: float, hi: float) -> bool:
        # either edge matches, or the box is cut by the window's clip
        return bool(abs(a0 - b0) <= t or abs(a1 - b1) <= t or (b0 <= lo and a0 <= lo) or (b1 >= hi and a1 >= hi))

    return near(px0, px1, bx, bx + obj.w, x0, x1) and near(py0, py1, by, by + obj.h, y0, y1)


def blob_centre(spec: ObjectSpec, obj: Obj, rgb: np.ndarray) -> tuple[float, float] | None:
    """Centre of the bounding box of the object's coloured blobs that touch its box: how an
    extractor that reads only pixels would place it (arms, animation and all)."""
    from scipy import ndimage

    mask = colour_mask(rgb, spec.colour_of(obj.index))
    if spec.region:
        rx0, ry0, rx1, ry1 = spec.region
        keep = np.zeros_like(mask)
        keep[ry0:ry1, rx0:rx1] = True
        mask &= keep
    t = spec.tolerance
    bx, by = int(round(obj.x)), int(round(obj.y))
    y0, x0 = max(0, by - t), max(0, bx - t)
    win = (slice(max(0, by - 24), by + obj.h + 24), slice(max(0, bx - 24), bx + obj.w + 24))
    labels, _ = ndimage.label(mask[win], structure=np.ones((3, 3), bool))
    oy, ox = win[0].start, win[1].start
    inside = labels[y0 - oy:by + obj.h + t - oy, x0 - ox:bx + obj.w + t - ox]
    ids = np.unique(inside[inside > 0])
    if not len(ids):
        return None
    ys, xs = np.nonzero(np.isin(labels, ids))
    if xs.max() - xs.min() >= obj.w + 20 or ys.max() - ys.min() >= obj.h + 20:
        return None  # joined to something else of its colour (a fishing line across the shark)
    return (xs.min() + xs.max() + 1) / 2 + ox, (ys.min() + ys.max() + 1) / 2 + oy
