"""The protocol clock on the real emulator: warm-up, budget, resets, start options, snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from workstation.game.clock import GameClock
from workstation.game.games import get_game
from workstation.game.protocol import Protocol, ProtocolError, StartOption


class Frames:
    def __init__(self):
        self.screens: list[np.ndarray] = []
        self.ram: list[bytes] = []

    def __call__(self, screen, rgb, ram):
        rgb = rgb() if callable(rgb) else rgb
        assert rgb.shape[:2] == screen.shape
        self.screens.append(screen.copy())
        self.ram.append(bytes(ram))


def play(game: str, actions, protocol=Protocol(), seed=0):
    sink = Frames()
    clock = GameClock(get_game(game), protocol, seed, sink)
    clock.start()
    for a in actions:
        if clock.game_over:
            clock.new_game()  # what the engine does at the end of the turn that ended the game
        if clock.done:
            break
        clock.act(a)
    return clock, sink


def test_warmup_runs_outside_the_budget():
    # BeamRider warms up 8 s = 240 NOOP frames before budget frame 0.
    clock, sink = play("beam_rider", [])
    assert clock.frame == 0 and len(sink.screens) == 1
    assert clock.ale.getEpisodeFrameNumber() == 240
    clock2, _ = play("breakout", [])
    assert clock2.ale.getEpisodeFrameNumber() == 0


def test_budget_is_cut_at_900_frames_and_every_frame_is_emitted():
    clock, sink = play("breakout", [1, 2, 3] * 400)
    assert clock.frame == 900 and clock.done
    assert len(sink.screens) == 901
    with pytest.raises(RuntimeError):
        clock.step_frame(0)


def test_last_action_is_cut_at_the_budget():
    clock, _ = play("breakout", [0] * 2, Protocol(frames=7))
    out = clock.act(0)
    assert out.frames == 1 and clock.frame == 7


def test_reset_inside_the_budget_keeps_playing():
    # Freeway ends after ~2 min of game time; with a long budget of NOOP on a game
    # that ends quickly we see a reset. Breakout with NOOP never serves, so use
    # Pacman doing nothing: ghosts eat it and the game ends within the budget.
    clock, sink = play("pacman", [0] * 3100, Protocol(frames=9000))
    assert clock.episode >= 1, "the game should have ended and restarted inside the budget"
    assert clock.frame == 9000 and len(sink.screens) == 9001
    assert clock.lives_lost >= 3


def test_fixed_start_seeds_are_identical_noops_seeds_differ():
    acts = [2, 3, 1] * 20
    _, a = play("breakout", acts, seed=0)
    _, b = play("breakout", acts, seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(a.ram, b.ram)), "paper protocol: seed changes nothing"
    noops = Protocol(start=StartOption.parse("noops:30"))
    _, c = play("breakout", acts, noops, seed=0)
    _, c2 = play("breakout", acts, noops, seed=0)
    _, d = play("breakout", acts, noops, seed=3)
    assert c.ram == c2.ram, "same seed, same start"
    assert c.ram != d.ram, "noops:30 seeds must differ"


def test_sticky_actions_are_seeded():
    sticky = Protocol(start=StartOption.parse("sticky:0.25"))
    acts = [2, 3] * 60
    _, a = play("breakout", acts, sticky, seed=1)
    _, b = play("breakout", acts, sticky, seed=1)
    _, c = play("breakout", acts, sticky, seed=2)
    assert a.ram == b.ram
    assert a.ram != c.ram


def test_snapshot_restore_gives_identical_frames():
    clock, sink = play("seaquest", [3, 1, 5, 2] * 10)
    snap = clock.snapshot()
    n = len(sink.screens)
    for a in [4, 1, 2, 5, 0, 11] * 10:
        clock.act(a)
    first = sink.screens[n:]
    clock.restore(snap)
    for a in [4, 1, 2, 5, 0, 11] * 10:
        clock.act(a)
    second = sink.screens[n + len(first):]
    assert len(first) == len(second) == 180
    assert all(np.array_equal(x, y) for x, y in zip(first, second))


def test_snapshot_restore_with_sticky_actions_is_exact():
    clock, sink = play("breakout", [1, 2] * 5, Protocol(start=StartOption.parse("sticky:0.25")), seed=4)
    snap = clock.snapshot()
    n = len(sink.ram)
    for a in [2, 3] * 30:
        clock.act(a)
    first = sink.ram[n:]
    clock.restore(snap)
    for a in [2, 3] * 30:
        clock.act(a)
    assert sink.ram[n + len(first):] == first


@pytest.mark.parametrize("text", ["random", "noops:-1", "sticky:1.5", "noops", ""])
def test_bad_start_option_is_a_clear_error(text):
    with pytest.raises(ProtocolError, match="--start"):
        StartOption.parse(text)


def test_protocol_validation():
    with pytest.raises(ProtocolError, match="max-actions"):
        Protocol(max_actions=11)
    assert Protocol(max_actions=5, feedback=False).changed() == {"max_actions": 5, "feedback": False}
    p = Protocol(start=StartOption.parse("noops:30"), memory="append")
    assert Protocol.from_json(p.to_json()) == p


@pytest.mark.parametrize("key", ["breakout", "seaquest", "pacman", "qbert"])
def test_clock_steps_exactly_like_gymnasium_env_step(key):
    """The clock skips the RGB observation it may not need; the emulator must not notice."""
    from workstation.game.clock import make_env

    game = get_game(key)
    rng = np.random.default_rng(5)
    actions = [int(game.allowed[i]) for i in rng.integers(0, len(game.allowed), 400)]
    env = make_env(game)
    env.reset(seed=0)
    for _ in range(game.warmup_frames):
        env.step(0)
    ref_rgb, ref_rewards, ref_lives = [], [], []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        assert not (term or trunc)
        ref_rgb.append(obs)
        ref_rewards.append(r)
        ref_lives.append(info["lives"])
    sink = Frames()
    clock = GameClock(game, Protocol(frames=len(actions)), 0, sink)
    clock.start()
    for i, a in enumerate(actions):
        r, _, reset = clock.step_frame(a)
        assert not reset
        assert r == ref_rewards[i] and clock.lives == ref_lives[i]
        assert np.array_equal(clock.rgb, ref_rgb[i]), f"frame {i + 1} differs"


@pytest.mark.parametrize("key", sorted(__import__("workstation.game.games", fromlist=["GAMES"]).GAMES))
def test_without_sticky_actions_the_emulator_seed_changes_nothing(key):
    """Why a fixed or noops start resets without reseeding (which would load the ROM again)."""
    from workstation.game.clock import make_env

    game = get_game(key)
    seeded, plain = make_env(game), make_env(game)
    a, _ = seeded.reset(seed=12345)
    b, _ = plain.reset()
    assert np.array_equal(a, b)
    rng = np.random.default_rng(1)
    for act in rng.integers(0, seeded.action_space.n, 300):
        a, _, end, _, _ = seeded.step(act)
        b, _, _, _, _ = plain.step(act)
        assert np.array_equal(a, b) and np.array_equal(seeded.unwrapped.ale.getRAM(), plain.unwrapped.ale.getRAM())
        if end:
            break
    seeded.close()
    plain.close()
