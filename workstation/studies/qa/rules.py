"""Decision rules whose answer follows from RAM: what a good player does next.

Each rule looks at a short sequence of frames of one scene and returns a
``Decision`` or None when the situation is not clear-cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from workstation.studies.qa.scene import Scene, describe
from workstation.studies.qa.truth import Obj, ObjectSpec

BREAKOUT_WALLS = (8.0, 152.0)  # the ball's centre bounces between these x (the side walls' inner edges)
FREEWAY_CROSS_FRAMES = 24  # the chicken climbs 1 px a frame: 16 px of lane plus its own 8 px
MARGIN = 12  # px: closer than this the answer is not clear-cut


@dataclass
class Decision:
    ahead: bool  # needs a prediction several steps ahead (a wall bounce first)
    question: str
    choices: list[str]
    answer: str
    objects: list[tuple[ObjectSpec, Obj]]  # the objects used, on the last frame
    note: str


def _track(scene: Scene, frames: list[int], spec: ObjectSpec, index: int = 0) -> list[Obj] | None:
    track = [o for o in (scene.find(i, spec, index) for i in frames) if o is not None]
    return None if len(track) < len(frames) else track


def breakout_catch(scene: Scene, frames: list[int]) -> Decision | None:
    m = scene.map
    ball, paddle = m.spec("ball"), m.spec("paddle")
    bt, pt = _track(scene, frames, ball), _track(scene, frames, paddle)
    if not bt or not pt:
        return None
    dys = [b.cy - a.cy for a, b in zip(bt, bt[1:])]
    dxs = [b.cx - a.cx for a, b in zip(bt, bt[1:])]
    span = frames[-1] - frames[0]
    if min(dys) <= 0 or max(abs(d) for d in dxs + dys) > 30:  # not falling, or a serve/reset in between
        return None
    vx, vy = (bt[-1].cx - bt[0].cx) / span, (bt[-1].cy - bt[0].cy) / span
    if vx == 0:
        return None
    p = pt[-1]
    steps = (p.y - bt[-1].cy) / vy
    if steps <= 0:
        return None
    x, bounces = bt[-1].cx + vx * steps, 0
    lo, hi = BREAKOUT_WALLS
    while not lo <= x <= hi:
        x = 2 * lo - x if x < lo else 2 * hi - x
        bounces += 1
    off = x - p.cx
    if abs(off) < MARGIN or bounces > 1:
        return None
    answer = "left" if off < 0 else "right"
    return Decision(
        ahead=bounces == 1,
        question=("The ball is falling. To be under it when it reaches the paddle, should the paddle "
                  "move left or right?" + (" (It will bounce off a side wall first.)" if bounces else "")),
        choices=["left", "right"], answer=answer,
        objects=[(ball, bt[-1]), (paddle, p)],
        note=f"predicted landing x={x:.0f} vs paddle centre {p.cx:.0f}, {bounces} wall bounce(s)",
    )


def freeway_cross(scene: Scene, frames: list[int]) -> Decision | None:
    m = scene.map
    chicken, car = m.spec("chicken"), m.spec("car")
    ct = _track(scene, frames, chicken)
    if not ct:
        return None
    c = ct[-1]
    lane_y = [car.y["const"] + car.y.get("step", 0) * i for i in range(car.count)]
    above = [i for i, y in enumerate(lane_y) if y + car.size[1] <= c.y + 1]
    if not above:
        return None
    lane = max(above, key=lambda i: lane_y[i])
    if c.y - (lane_y[lane] + car.size[1]) > 10:  # not at the edge of the next lane yet
        return None
    track = _track(scene, frames, car, lane)
    if not track:
        return None
    v = (track[-1].cx - track[0].cx) / (frames[-1] - frames[0])
    if abs(v) < 0.1 or max(abs(b.cx - a.cx) for a, b in zip(track, track[1:])) > 40:
        return None
    car_now = track[-1]
    reach = (c.w + car_now.w) / 2 + 2  # centres closer than this along x: the car hits the chicken
    hits = []  # frames from now during which the car is in the chicken's column (wrapping at 160)
    for k in (-1, 0, 1):
        x0 = car_now.cx + 160 * k - c.cx
        hits.append(tuple(sorted(((-reach - x0) / v, (reach - x0) / v))))
    def meets(lo: float, hi: float) -> bool:
        return any(a < hi and b > lo for a, b in hits)
    if meets(0, FREEWAY_CROSS_FRAMES):
        answer = "wait"
    elif not meets(-6, FREEWAY_CROSS_FRAMES + 16):
        answer = "up"
    else:
        return None
    first = min((a for a, b in hits if b > 0), default=float("inf"))
    return Decision(
        ahead=False,
        question=("Should the chicken step up into the next lane now, or wait for the car in that lane "
                  "to pass?"),
        choices=["up", "wait"], answer=answer,
        objects=[(chicken, c), (car, track[-1])],
        note=(f"car in lane {lane + 1} moves {v:+.2f} px/frame and reaches the chicken's column in "
              f"{max(first, 0):.0f} frames; crossing the lane takes about {FREEWAY_CROSS_FRAMES} frames"),
    )


def _toward(scene: Scene, frames: list[int], mover: str, target: str, question: str,
            axis: str = "x", margin: int = 20) -> Decision | None:
    m = scene.map
    ms = m.spec(mover)
    ts = m.spec(target)
    last = frames[-1]
    me = scene.find(last, ms, 0)
    if me is None:
        return None
    targets = [o for s, o in scene.visible(last) if s is ts]
    if not targets:
        return None
    t = min(targets, key=lambda o: abs(o.cy - me.cy)) if ts.count > 1 else targets[0]
    d = (t.cx - me.cx) if axis == "x" else (t.cy - me.cy)
    if abs(d) < margin:
        return None
    choices = ["left", "right"] if axis == "x" else ["up", "down"]
    answer = choices[0] if d < 0 else choices[1]
    return Decision(False, question.format(mover=describe(ms, me), target=describe(ts, t)), choices, answer,
                    [(ms, me), (ts, t)], f"{target} is {d:+.0f} px from the {mover} along {axis}")


def gopher_chase(scene: Scene, frames: list[int]) -> Decision | None:
    return _toward(scene, frames, "farmer", "gopher",
                   "To get above the gopher and bonk it, should the farmer move left or right?")


def name_this_game_shark(scene: Scene, frames: list[int]) -> Decision | None:
    return _toward(scene, frames, "diver", "shark",
                   "To get under the shark and shoot it, should the diver move left or right?")


def assault_aim(scene: Scene, frames: list[int]) -> Decision | None:
    return _toward(scene, frames, "cannon", "enemy",
                   "To get under {target} and shoot it, should the cannon move left or right?")


def boxing_line_up(scene: Scene, frames: list[int]) -> Decision | None:
    return _toward(scene, frames, "white boxer", "black boxer",
                   "To line up with the black boxer for a punch, should the white boxer move up or down?",
                   axis="y", margin=16)


RULES = {
    "breakout": breakout_catch,
    "freeway": freeway_cross,
    "gopher": gopher_chase,
    "name_this_game": name_this_game_shark,
    "assault": assault_aim,
    "boxing": boxing_line_up,
}
