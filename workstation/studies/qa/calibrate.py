"""Find a RAM map's addresses and transforms from real frames (how the maps were fitted).

    python -m workstation.studies.qa.calibrate GAME --rgb R,G,B [--region Y0,Y1,X0,X1] [--frames N]

plays a seeded random agent, finds the box of the colour's pixels in the region
on every frame, and for each RAM address fits ``screen = scale * value + offset``
by least squares, printing the addresses whose fit lands within 1.5 px most
often. A public annotation names the address; this gives the offset (and shows
when an address is not linear, as Assault's coarse/fine bytes are not).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np


def play(game_key: str, frames: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """RAM (N x 128) and RGB frames (N x H x W x 3) of a seeded random agent."""
    from workstation.game.clock import GameClock
    from workstation.game.games import get_game
    from workstation.game.protocol import Protocol

    game = get_game(game_key)
    rams, rgbs = [], []

    def sink(screen: Any, rgb: Any, ram: Any) -> None:
        rams.append(np.array(ram))
        rgbs.append(np.array(rgb() if callable(rgb) else rgb))

    clock = GameClock(game, Protocol(frames=frames), seed=seed, sink=sink)
    clock.start()
    rng = np.random.default_rng(seed + 1)
    allowed = list(game.allowed)
    while not clock.done:
        clock.act(int(rng.choice(allowed)), frames=int(rng.integers(3, 12)))
    clock.close()
    return np.array(rams), np.array(rgbs)


def boxes(rgbs: np.ndarray, colour: tuple[int, ...], region: tuple[int, ...]
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per frame: (has pixels, x0, y0, width, height) of the colour inside region (y0, y1, x0, x1)."""
    y0, y1, x0, x1 = region
    m = (rgbs[:, y0:y1, x0:x1] == np.array(colour, np.uint8)).all(-1)
    cols, rows = m.any(1), m.any(2)
    ok = cols.any(1)
    xs = np.where(cols, np.arange(m.shape[2])[None], 10**6).min(1) + x0
    ys = np.where(rows, np.arange(m.shape[1])[None], 10**6).min(1) + y0
    xe = np.where(cols, np.arange(m.shape[2])[None], -1).max(1) + x0
    ye = np.where(rows, np.arange(m.shape[1])[None], -1).max(1) + y0
    return ok, xs, ys, xe - xs + 1, ye - ys + 1


def fit(rams: np.ndarray, screen: np.ndarray, top: int = 4) -> list[tuple[float, int, float, float]]:
    """(share within 1.5 px, address, scale, offset) of the best affine fits, best first."""
    out = []
    for a in range(rams.shape[1]):
        r = rams[:, a].astype(float)
        if r.std() == 0:
            continue
        design = np.c_[r, np.ones_like(r)]
        coef, *_ = np.linalg.lstsq(design, screen, rcond=None)
        out.append((float(np.mean(np.abs(design @ coef - screen) <= 1.5)), a, float(coef[0]), float(coef[1])))
    return sorted(out, reverse=True)[:top]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m workstation.studies.qa.calibrate", description=__doc__.split("\n")[0])
    p.add_argument("game")
    p.add_argument("--rgb", required=True, help="the object's colour, R,G,B")
    p.add_argument("--region", default="0,250,0,160", help="Y0,Y1,X0,X1 to look in (default the screen)")
    p.add_argument("--frames", type=int, default=1500)
    p.add_argument("--max-width", type=int, default=999, help="ignore frames where the box is wider")
    a = p.parse_args(argv)
    colour = tuple(int(v) for v in a.rgb.split(","))
    region = tuple(int(v) for v in a.region.split(","))
    rams, rgbs = play(a.game, a.frames)
    ok, xs, ys, ws, hs = boxes(rgbs, colour, region)
    ok &= ws <= a.max_width
    print(f"{ok.sum()} of {len(ok)} frames show the colour; box width {np.median(ws[ok]):g}, height {np.median(hs[ok]):g}")
    for name, s in (("x", xs), ("y", ys)):
        t = s[ok].astype(float)
        if t.std() < 0.5:
            print(f"{name}: constant {np.median(t):g}")
            continue
        for share, addr, scale, offset in fit(rams[ok], t):
            print(f"{name}: ram[{addr}] * {scale:.3f} + {offset:.2f}  within 1.5 px on {100 * share:.0f}% of frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
