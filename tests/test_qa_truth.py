"""The RAM maps against the pixels of real frames.

For each supported game the real emulator plays a seeded random agent; on every
frame where the map says an object is on screen, the object's colour must show
inside its predicted box widened by the map's stated tolerance (2-4 px), and the
coloured pixels near it must start or end within that tolerance of the box's
edges on both axes (``workstation.studies.qa.pixels.aligned``), on at least 90 % of those
frames (50 % for objects the game flickers). A map with a
wrong address must fail: the same check with the address moved to a neighbour
holding other values (not another instance's) matches far less often.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workstation.base.errors import UserError
from workstation.game.clock import GameClock
from workstation.game.games import get_game
from workstation.game.protocol import Protocol
from workstation.studies.qa.pixels import aligned
from workstation.studies.qa.truth import (
    DIRECTIONS,
    STILL,
    Obj,
    clear_direction,
    direction,
    load_map,
    parse_map,
    supported_games,
)

QA_GAMES = ["assault", "boxing", "breakout", "fishing_derby", "freeway", "gopher", "name_this_game",
            "pacman", "qbert", "riverraid"]
FRAMES = 700


@pytest.fixture(scope="module")
def played() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def play(key: str):
        if key not in cache:
            game = get_game(key)
            rams, rgbs = [], []

            def sink(screen, rgb, ram):
                rams.append(np.array(ram))
                rgbs.append(np.array(rgb() if callable(rgb) else rgb))

            clock = GameClock(game, Protocol(frames=FRAMES), seed=0, sink=sink)
            clock.start()
            rng = np.random.default_rng(7)
            allowed = list(game.allowed)
            while not clock.done:
                clock.act(int(rng.choice(allowed)), frames=int(rng.integers(3, 12)))
            clock.close()
            cache[key] = (np.array(rams), np.array(rgbs))
        return cache[key]

    return play


def match_rate(spec, index: int, rams: np.ndarray, rgbs: np.ndarray) -> tuple[int, int]:
    seen = hit = 0
    for ram, rgb in zip(rams, rgbs):
        objs = [o for o in spec.instances(ram) if o.index == index]
        if objs:
            seen += 1
            hit += aligned(spec, objs[0], rgb)
    return hit, seen


def ram_axes(spec) -> list[str]:
    return [axis for axis in ("x", "y") if "const" not in spec.__dict__[axis]]


def wrong_address(spec, rams: np.ndarray, axis: str):
    """The spec with one axis's address moved to the nearest one (not another instance's)
    whose values would put the box elsewhere on most frames."""
    t = spec.__dict__[axis]
    key = "ram" if "ram" in t else "coarse_fine" if "coarse_fine" in t else None
    if key is None:  # first_nonzero: shift the row list by one address
        return dataclasses.replace(spec, **{axis: {**t, "first_nonzero": [a - 1 for a in t["first_nonzero"]]}})
    true = t[key]
    own = {true + t.get("step", 0) * i for i in range(spec.count)}  # the other instances' addresses
    size = spec.size[0 if axis == "x" else 1]
    for d in (1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6):
        a = true + d
        if not (0 <= a < 128) or a in own:
            continue
        # a wrong address that would put the box somewhere else on most frames
        moved = np.abs(rams[:, a].astype(int) - rams[:, true].astype(int)) * abs(t.get("scale", 1))
        if np.mean(moved > size / 2 + spec.tolerance + 2) > 0.7:
            return dataclasses.replace(spec, **{axis: {**t, key: a}})
    raise AssertionError(f"no neighbour address differs from {true}")


def test_every_qa_game_has_a_map():
    assert set(QA_GAMES) <= set(supported_games())


@pytest.mark.parametrize("game", QA_GAMES)
def test_map_matches_pixels(game, played):
    rams, rgbs = played(game)
    for spec in load_map(game).specs:
        need = 0.5 if spec.flicker else 0.9
        total_hit = total_seen = 0
        for i in range(spec.count):
            hit, seen = match_rate(spec, i, rams, rgbs)
            assert seen >= 50, f"{game} {spec.name} {i}: on screen in only {seen} frames"
            assert hit / seen >= need, f"{game} {spec.name} {i}: drawn where RAM says on {hit}/{seen} frames"
            total_hit, total_seen = total_hit + hit, total_seen + seen
        for axis in ram_axes(spec):
            bad = wrong_address(spec, rams, axis)
            counts = [match_rate(bad, i, rams, rgbs) for i in range(spec.count)]
            bad_hit, bad_seen = sum(h for h, _ in counts), sum(n for _, n in counts)
            assert bad_hit / max(bad_seen, 1) < min(0.6, total_hit / total_seen - 0.25), \
                f"{game} {spec.name}: a wrong {axis} address still matches {bad_hit}/{bad_seen}"


def test_directions():
    assert direction(5, 0) == "right" and direction(-5, 0) == "left"
    assert direction(0, 5) == "down" and direction(0, -5) == "up"  # screen y grows downwards
    assert direction(4, -4) == "up-right" and direction(-4, 4) == "down-left"
    assert direction(1, 1) == STILL
    assert clear_direction(10, 4.2) is None  # 22.8 degrees: between right and down-right
    assert clear_direction(10, 1) == "right" and clear_direction(0, 0) == STILL
    assert clear_direction(1, 0) is None  # moved, but under the threshold
    assert len(set(DIRECTIONS)) == 8


def test_objects_from_ram_carry_the_values_used():
    ram = np.zeros(128, np.uint8)
    ram[72], ram[99], ram[101] = 100, 90, 120
    objs = {o.name: o for o in load_map("breakout").objects(ram)}
    assert (objs["paddle"].x, objs["paddle"].y) == (52, 189)
    assert (objs["ball"].x, objs["ball"].y) == (41, 129)
    assert objs["ball"].ram_dict() == {"99": 90, "101": 120}
    ram[101] = 0  # no ball in play
    assert [o.name for o in load_map("breakout").objects(ram)] == ["paddle"]
    assert isinstance(objs["ball"], Obj)


def test_malformed_map_is_one_line(tmp_path):
    p = tmp_path / "breakout.toml"
    p.write_text('game = "breakout"\nformat = 1\n[[objects]]\nname = "ball"\nkind = "ball"\nsize = [2, 4]\n'
                 'x = { ram = 99, bogus = 1 }\ny = { const = 3 }\n')
    with pytest.raises(UserError) as e:
        parse_map(p)
    assert "objects[0].x" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(UserError):
        load_map("tennis")


def test_calibration_finds_the_ball_addresses(played):
    from workstation.studies.qa.calibrate import boxes, fit

    rams, rgbs = played("breakout")
    ok, xs, ys, ws, hs = boxes(rgbs, (200, 72, 72), (100, 185, 0, 160))
    (share, addr, scale, offset), *_ = fit(rams[ok], xs[ok].astype(float))
    assert (addr, round(scale, 2)) == (99, 1.0) and abs(offset + 49) <= 1 and share > 0.9
    (share, addr, scale, offset), *_ = fit(rams[ok], ys[ok].astype(float))
    assert (addr, round(scale, 2)) == (101, 1.0) and abs(offset - 9) <= 1 and share > 0.9
