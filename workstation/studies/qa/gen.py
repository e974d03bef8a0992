"""Propose questions from recordings, with answers from RAM (``workstation qa gen``).

Candidates are made on every eligible frame (or short sequence) of every scene:
the objects named are visible (the RAM puts them on screen and their pixels are
there), motion is above a threshold and clear of the boundary between two
directions, relations have a margin. Then, per game, a quota per category is
filled by taking answers in turn (so answers are balanced across choices),
never two questions on nearby frames of one run. Everything random comes from
one generator seeded by ``--seed``: the same recordings and seed give the same set.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workstation.engine.promptpack import display_title
from workstation.studies.qa.pixels import box_mask, colour_mask
from workstation.studies.qa.qset import QA_CATEGORIES, SetWriter, paper_time
from workstation.studies.qa.rules import RULES
from workstation.studies.qa.scene import Scene, describe
from workstation.studies.qa.truth import STILL, Obj, ObjectSpec, clear_direction, direction

SCREEN_LEFT = 8  # the Atari blanks the first 8 columns
STRIDE = 5  # frames between candidate frames
SEQ_STEP = 4  # frames between the frames of a motion sequence (0.13 s on the paper clock)
SEQ_LEN = 3
MIN_GAP = 15  # no two questions of a category from frames closer than this in one run
SPATIAL_MARGIN = 12  # px between centres for left/right and above/below (and the boxes apart)
PIXEL_MARGIN = 4  # px: the pixels-only reading (blob centres) must agree with this much to spare
HALF_MARGIN = 16  # px from the screen's middle for the which-half questions
MOTION_THRESHOLD = 2.0  # px per step
MIN_TOTAL = 6  # px over the sequence along each axis a direction names
MAX_STEP = 30  # px per step: more is a jump (wrap-around, reset), not motion
CARDINAL = ["up", "down", "left", "right", STILL]
DIAGONAL = ["up-left", "up-right", "down-left", "down-right", STILL]


@dataclass
class Candidate:
    scene: Scene
    category: str
    question: str
    choices: list[str]
    answer: str
    frames: list[int]
    objects: list[tuple[int, ObjectSpec, Obj]]  # (frame, spec, object) used
    rule: str
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


def plural_noun(name: str) -> str:
    if name.endswith("fish"):
        return name
    return name[:-1] + "ies" if name.endswith("y") else name + "s"


def _title(scene: Scene) -> str:
    return display_title(scene.game)


def _ref(s: ObjectSpec, o: Obj) -> dict[str, Any]:
    return {"name": s.name, "index": o.index}


def _span(frames: list[int]) -> str:
    """The frames' paper-clock times as the question names them: each text is then its own."""
    if len(frames) == 1:
        return f"frame at {paper_time(frames[0])}"
    return f"frames {paper_time(frames[0])} to {paper_time(frames[-1])}"


def _truth(c: Candidate) -> dict[str, Any]:
    used = [{"frame": f, "object": describe(s, o), "name": s.name, "index": o.index, "x": o.x, "y": o.y,
             "w": o.w, "h": o.h, "values": o.ram_dict()} for f, s, o in c.objects]
    return {"ram": used, "rule": c.rule, **c.extra}


# -- perception ---------------------------------------------------------------

def detection(scene: Scene) -> list[Candidate]:
    out = []
    counts: dict[str, list[tuple[int, int]]] = defaultdict(list)
    h = scene.frames.height
    for i in range(0, scene.n, STRIDE):
        vis = scene.visible(i)
        for s in scene.map.specs:
            if s.count > 1:
                counts[s.name].append((i, sum(1 for t, _ in vis if t is s)))
        for s, o in vis:
            if s.count > 1:
                continue
            b = scene.blob(i, s, o)
            if b is None:
                continue
            # an object whose column never changes (Freeway's chicken) has one answer in every frame: not asked
            if ("const" not in s.x and abs(o.cx - 80) >= HALF_MARGIN and abs(b[0] - 80) >= PIXEL_MARGIN
                    and (b[0] < 80) == (o.cx < 80)):
                out.append(Candidate(scene, "perception-detection",
                                     f"Is {describe(s, o)} in the left half or the right half of the screen?",
                                     ["left", "right"], "left" if o.cx < 80 else "right",
                                     [i], [(i, s, o)], "centre x vs 80",
                                     {"ask": {"kind": "half", "axis": "x", "object": _ref(s, o)}}))
            if ("const" not in s.y and abs(o.cy - h / 2) >= HALF_MARGIN and abs(b[1] - h / 2) >= PIXEL_MARGIN
                    and (b[1] < h / 2) == (o.cy < h / 2)):
                out.append(Candidate(scene, "perception-detection",
                                     f"Is {describe(s, o)} in the top half or the bottom half of the screen?",
                                     ["top", "bottom"], "top" if o.cy < h / 2 else "bottom",
                                     [i], [(i, s, o)], f"centre y vs {h / 2:g}",
                                     {"ask": {"kind": "half", "axis": "y", "object": _ref(s, o)}}))
    for name, seen in counts.items():
        s = scene.map.spec(name)
        # flickering objects (and fish on a line, drawn off their row) make a count unreliable
        if s.flicker or len({n for _, n in seen}) < 2:  # always the same number: not a question
            continue
        for i, n in seen:
            if scene.crowded(i, s) or not _clear_count(scene, i, s):
                continue
            on_screen = [o for o in s.instances(scene.frames.ram(i)) if o.x >= SCREEN_LEFT and o.x + o.w <= 160]
            if n != len(on_screen):  # RAM and pixels must tell the same number
                continue
            lo = max(0, min(n - 1, s.count - 3))
            choices = [str(k) for k in range(lo, min(s.count, lo + 3) + 1)]
            objs = [(i, t, o) for t, o in scene.visible(i) if t is s]
            out.append(Candidate(scene, "perception-detection",
                                 f"How many {plural_noun(name)} can you see in this frame?",
                                 choices, str(n), [i], objs, "objects in RAM whose pixels show",
                                 {"ask": {"kind": "count", "object": {"name": name}}}))
    return out


def _clear_count(scene: Scene, i: int, s: ObjectSpec) -> bool:
    """Every instance either off (RAM), drawn whole-ish, or not drawn at all: no half-visible cars."""
    rgb = scene.frames.rgb(i)
    for o in s.instances(scene.frames.ram(i)):
        if o.x < SCREEN_LEFT < o.x + o.w or o.x < 160 < o.x + o.w:  # cut by the screen's edge
            return False
        n = int(box_mask(s, o, rgb).sum())
        if 0 < n < o.w * o.h // 3:
            return False
    if "const" in s.y:  # a row the RAM calls empty must look empty (no enemy half-way to appearing)
        present = {o.index for o in s.instances(scene.frames.ram(i))}
        others = [(t, o) for t, o in scene.visible(i) if t is not s]
        for k in range(s.count):
            if k in present:
                continue
            y = int(s.y["const"] + s.y.get("step", 0) * k)
            band = rgb[max(0, y - s.tolerance):y + s.size[1] + s.tolerance, SCREEN_LEFT:]
            mask = colour_mask(band, s.colour_of(k))
            for t, o in others:  # pixels of other objects crossing the row are theirs
                y0 = max(0, y - s.tolerance)
                r0, r1 = int(o.y) - t.tolerance - y0, int(o.y) + o.h + t.tolerance - y0
                c0, c1 = int(o.x) - t.tolerance - SCREEN_LEFT, int(o.x) + o.w + t.tolerance - SCREEN_LEFT
                mask[max(0, r0):max(0, r1), max(0, c0):max(0, c1)] = False
            if mask.sum() > 2:
                return False
    return True


def _apart(a0: float, aw: int, b0: float, bw: int, d: float) -> bool:
    """Clearly on one side: the boxes do not overlap on this axis (with 2 px to spare) and the
    centres are SPATIAL_MARGIN apart, so a sprite's animation cannot flip the answer."""
    gap = b0 - (a0 + aw) if d < 0 else a0 - (b0 + bw)
    return gap >= 2 and abs(d) >= SPATIAL_MARGIN


# axis -> how the question puts the relation, and its answers (a before b on the axis, a after b)
RELATIONS = {"x": ("to the left or to the right of", ("left", "right")), "y": ("above or below", ("above", "below"))}


def spatial(scene: Scene) -> list[Candidate]:
    out = []
    for i in range(0, scene.n, STRIDE):
        vis = scene.visible(i)
        for a in range(len(vis)):
            for b in range(len(vis)):
                (sa, oa), (sb, ob) = vis[a], vis[b]
                if a == b or (sa is sb and sa.count == 1):
                    continue
                if sa.kind != "player" and sb.kind != "player" and sa is sb and a > b:
                    continue
                used = [(i, sa, oa), (i, sb, ob)]
                ba, bb = scene.blob(i, sa, oa), scene.blob(i, sb, ob)
                if ba is None or bb is None:
                    continue
                axes = (("x", oa.x, oa.w, ob.x, ob.w, oa.cx - ob.cx, ba[0] - bb[0]),
                        ("y", oa.y, oa.h, ob.y, ob.h, oa.cy - ob.cy, ba[1] - bb[1]))
                for axis, a0, aw, b0, bw, d, p in axes:  # p: the same relation read from the pixels alone
                    if (_apart(a0, aw, b0, bw, d) and p * d > 0 and abs(p) >= PIXEL_MARGIN
                            and not ("const" in getattr(sa, axis) and "const" in getattr(sb, axis))):
                        relation, (before, after) = RELATIONS[axis]
                        out.append(Candidate(scene, "perception-spatial",
                                             f"In this frame, is {describe(sa, oa)} {relation} {describe(sb, ob)}?",
                                             [before, after], before if d < 0 else after, [i], used, f"centre {axis}",
                                             {"ask": {"kind": "relation", "axis": axis, "a": _ref(sa, oa),
                                                      "b": _ref(sb, ob)}}))
    return out


# -- motion ---------------------------------------------------------------------

def _sequence_motion(scene: Scene, frames: list[int], s: ObjectSpec, index: int) -> tuple[str, list[Obj]] | None:
    track = [o for o in (scene.find(f, s, index) for f in frames) if o is not None]
    if len(track) < len(frames):
        return None
    steps = [(b.cx - a.cx, b.cy - a.cy) for a, b in zip(track, track[1:])]
    if any(abs(dx) > MAX_STEP or abs(dy) > MAX_STEP for dx, dy in steps):
        return None
    dirs = {clear_direction(dx, dy, MOTION_THRESHOLD) for dx, dy in steps}
    if len(dirs) != 1 or None in dirs:
        return None
    d = dirs.pop()
    blobs = [b for b in (scene.blob(f, s, o) for f, o in zip(frames, track)) if b is not None]
    if len(blobs) < len(track):
        return None
    bx, by = blobs[-1][0] - blobs[0][0], blobs[-1][1] - blobs[0][1]
    if d == STILL and (abs(bx) > 1 or abs(by) > 1):  # the pixels moved: not still to the eye
        return None
    if d != STILL and direction(bx, by, MOTION_THRESHOLD) != d:  # the pixels tell another story
        return None
    if d != STILL:  # over the whole sequence: big enough that a sprite's animation cannot change it
        tx, ty = abs(track[-1].cx - track[0].cx), abs(track[-1].cy - track[0].cy)
        major, minor = max(tx, ty), min(tx, ty)
        if "-" in d and not (minor >= MIN_TOTAL and major <= 2 * minor):
            return None
        if "-" not in d and not (major >= MIN_TOTAL and minor <= major / 4):
            return None
    return d, track


def motion(scene: Scene) -> list[Candidate]:
    out = []
    span = SEQ_STEP * (SEQ_LEN - 1)
    for i in range(0, scene.n - span, STRIDE):
        frames = [i + SEQ_STEP * k for k in range(SEQ_LEN)]
        for s, o in scene.visible(i):
            got = _sequence_motion(scene, frames, s, o.index)
            if got is None:
                continue
            d, track = got
            controlled = s.kind == "player"
            choices = DIAGONAL if "-" in d else CARDINAL
            cat = "motion-controlled" if controlled else "motion-target"
            who = describe(s, o) + (" (the object you control)" if controlled else "")
            out.append(Candidate(scene, cat,
                                 f"Across these frames, in which direction is {who} moving?",
                                 list(choices), d, frames, [(f, s, t) for f, t in zip(frames, track)],
                                 f"centre displacement per {SEQ_STEP} frames, threshold {MOTION_THRESHOLD:g} px",
                                 {"ask": {"kind": "motion", "object": _ref(s, o)}}))
    return out


def decision(scene: Scene) -> list[Candidate]:
    rule = RULES.get(scene.game)
    if rule is None:
        return []
    out = []
    span = SEQ_STEP * (SEQ_LEN - 1)
    for i in range(0, scene.n - span, STRIDE):
        frames = [i + SEQ_STEP * k for k in range(SEQ_LEN)]
        d = rule(scene, frames)
        if d is None:
            continue
        # the same situation makes both variants: decision-long differs in the prompt (the eval
        # prepends the game's guide, as the paper's long variant does), not in the question
        for cat in ("decision-short", "decision-long"):
            out.append(Candidate(scene, cat, d.question, d.choices, d.answer, frames,
                                 [(frames[-1], s, o) for s, o in d.objects], rule.__name__,
                                 {"note": d.note, "ask": {"kind": "decision", "rule": rule.__name__}}))
    return out


GENERATORS = (detection, spatial, motion, decision)


# -- selection and writing ------------------------------------------------------

def _quotas(per_game: int, available: dict[str, int], categories: list[str]) -> dict[str, int]:
    """Spread ``per_game`` over the categories that have candidates, in order; leftovers move on."""
    quota = {c: 0 for c in categories}
    left = per_game
    while left > 0:
        open_ = [c for c in categories if available.get(c, 0) > quota[c]]
        if not open_:
            break
        for c in open_:
            if left == 0:
                break
            quota[c] += 1
            left -= 1
    return quota


def select(cands: list[Candidate], n: int, rng: np.random.Generator) -> list[Candidate]:
    """Up to ``n`` candidates taking answers in turn; no two from nearby frames of one run."""
    by_answer: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        by_answer[c.answer].append(c)
    pools = {a: [by_answer[a][k] for k in rng.permutation(len(by_answer[a]))] for a in sorted(by_answer)}
    picked: list[Candidate] = []
    taken: dict[str, list[int]] = defaultdict(list)
    answers = list(pools)
    rng.shuffle(answers)
    # balance: no answer more than once over the rarest one (a short category beats a lopsided one)
    cap = min(len(p) for p in pools.values()) + 1 if len(pools) > 1 else n
    count: dict[str, int] = defaultdict(int)
    while len(picked) < n and any(pools[a] and count[a] < cap for a in answers):
        for a in answers:
            pool = pools[a]
            while pool and count[a] < cap:
                c = pool.pop()
                if all(abs(c.frames[0] - f) >= MIN_GAP for f in taken[c.scene.run_id]):
                    picked.append(c)
                    count[a] += 1
                    taken[c.scene.run_id].append(c.frames[0])
                    break
            if len(picked) >= n:
                break
    return picked


def generate(scenes: list[Scene], per_game: int, categories: list[str], seed: int) -> list[Candidate]:
    rng = np.random.default_rng(seed)
    by_game: dict[str, list[Candidate]] = defaultdict(list)
    for scene in scenes:
        for gen in GENERATORS:
            by_game[scene.game].extend(c for c in gen(scene) if c.category in categories)
    chosen = []
    for game in sorted(by_game):
        cands = by_game[game]
        per_cat: dict[str, list[Candidate]] = defaultdict(list)
        for c in cands:
            per_cat[c.category].append(c)
        quota = _quotas(per_game, {c: len(v) for c, v in per_cat.items()}, categories)
        for cat in categories:
            if quota[cat]:
                chosen.extend(select(per_cat[cat], quota[cat], rng))
    return chosen


def write(cands: list[Candidate], writer: SetWriter) -> list[dict[str, Any]]:
    out = []
    numbers: dict[str, int] = defaultdict(int)
    said: dict[str, str] = {}  # question text -> answer: one text never has two answers in a set
    for c in cands:
        text = f"{_title(c.scene)} ({_span(c.frames)}). {c.question}"
        if said.setdefault(text, c.answer) != c.answer:
            continue
        numbers[c.scene.game] += 1
        frames = [writer.frame(c.scene.run_id, i, c.scene.frames.png(i)) for i in c.frames]
        q = {
            "id": f"{c.scene.game}-{numbers[c.scene.game]:03d}",
            "game": c.scene.game,
            "category": c.category,
            "question": text,
            "choices": c.choices,
            "answer": c.answer,
            "frames": frames,
            "source": {"run_id": c.scene.run_id, "recording": str(c.scene.rec.path), "frames": c.frames},
            "truth": _truth(c),
            "status": "proposed",
        }
        writer.add(q)
        out.append(q)
    return out


def parse_categories(text: list[str] | None) -> list[str]:
    from workstation.base.errors import UserError

    if not text:
        return list(QA_CATEGORIES)
    cats: list[str] = []
    for part in text:
        for c in part.split(","):
            c = c.strip()
            if not c:
                continue
            match = [k for k in QA_CATEGORIES if k == c or k.startswith(c + "-") or k.split("-")[0] == c]
            if not match:
                raise UserError(f"unknown category {c!r}: use {', '.join(QA_CATEGORIES)} (or perception, motion, decision)")
            cats.extend(m for m in match if m not in cats)
    return [c for c in QA_CATEGORIES if c in cats]
