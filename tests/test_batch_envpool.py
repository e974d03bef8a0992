"""The batch's shared emulators (workstation/studies/batch/envpool.py): runs that take turns on a few
emulators, restoring their own state, see exactly the frames of runs with one each."""

from __future__ import annotations

import random

import numpy as np

from workstation.game.clock import ENV_SOURCE, GameClock
from workstation.game.games import get_game
from workstation.game.protocol import Protocol, StartOption
from workstation.studies.batch.envpool import EnvPool, Lender


def _clock(game, protocol, seed, lender=None):
    frames: list[tuple[bytes, bytes]] = []

    def sink(screen, rgb, ram):
        frames.append((screen.tobytes(), np.asarray(rgb() if callable(rgb) else rgb).tobytes() + ram.tobytes()))

    token = ENV_SOURCE.set(lender) if lender is not None else None
    try:
        clock = GameClock(game, protocol, seed, sink=sink)
    finally:
        if token is not None:
            ENV_SOURCE.reset(token)
    if lender is not None:
        lender.bind(clock)
    return clock, frames


def _turns(seed: int, n: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(4) for _ in range(rng.randrange(1, 6))] for _ in range(n)]


def _play_turn(clock, plan) -> None:
    for a in plan:
        if clock.done:
            break
        clock.act(a)
    if clock.game_over:
        clock.new_game()


def test_runs_sharing_one_emulator_see_the_frames_of_runs_with_their_own():
    game = get_game("breakout")
    protocol = Protocol(frames=2400, start=StartOption.parse("noops:30"))
    pool = EnvPool(per_game=1)  # three runs, one emulator: every turn plays on a state restored into it
    runs = []
    for seed in range(3):
        lender = Lender(pool)
        clock, frames = _clock(game, protocol, seed, lender)
        clock.start()
        lender.release()
        runs.append((lender, clock, frames, _turns(seed, 2000)))
    for t in range(2000):
        for lender, clock, _, plans in runs:
            if clock.finished:
                continue
            lender.acquire()
            _play_turn(clock, plans[t])
            lender.release()
    assert len(pool._all) == 1
    for seed, (lender, clock, frames, plans) in enumerate(runs):
        lender.end()
        clock.close()  # closes nothing: the emulator is the pool's
        own, want = _clock(game, protocol, seed)
        own.start()
        for plan in plans:
            if own.finished:
                break
            _play_turn(own, plan)
        own.close()
        assert clock.frame == own.frame == protocol.frames
        assert clock.episode == own.episode and clock.score == own.score and clock.lives_lost == own.lives_lost
        assert frames == want
    assert any(clock.episode >= 1 for _, clock, _, _ in runs)  # a game over and new_game() on a shared emulator
    pool.close()


def test_sticky_or_latency_runs_keep_an_emulator_of_their_own():
    pool = EnvPool(per_game=1)
    game = get_game("seaquest")
    for protocol in (Protocol(frames=9, start=StartOption.parse("sticky:0.25")), Protocol(frames=9, clock="latency")):
        lender = Lender(pool)
        clock, _ = _clock(game, protocol, 0, lender)
        assert lender.env is None and clock.env is not None and not pool._all
        clock.close()


def test_a_model_batch_on_shared_emulators_verifies_frame_for_frame(tmp_path, fake_server, monkeypatch):
    import itertools

    from tests.fake_provider import KEYS, Step
    from tests.test_batch import batch
    from workstation.run.verify import verify
    from workstation.store.recording import Recording
    from workstation.studies.batch import envpool

    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(envpool, "PER_GAME", 1)  # four runs of a game, one emulator each game
    moves = ["left, fire", "right, right, fire", "noop", "fire, left, left, right", "right"]
    fake_server.reset()
    fake_server.push(*[Step(text=f"thought: t\nmove: [{m}]") for m in itertools.islice(itertools.cycle(moves), 400)])
    b = batch(tmp_path, f"""\
        name = "pooled"
        games = ["breakout", "seaquest"]
        seeds = "0..3"
        [protocol]
        frames = 150
        [[settings]]
        label = "mini"
        spec = "openai:gpt-5.4-mini"
        base_url = "{fake_server.url("openai")}"
        """, concurrency=4)
    b.prepare()
    assert b.run() == 0
    assert b.executor.envs.made() == 2  # eight runs played on one emulator per game
    paths = [p for p in (b.dir / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(paths) == 8
    for p in paths:
        result = verify(Recording(p))
        assert result.ok, (p.name, result.detail)
    fake_server.reset()


def test_a_fresh_emulator_starts_as_a_reset_one_after_another_run_played_on_it():
    """The pool restores the state a fresh emulator's first reset ended in, screen included: the
    restored state does not redraw the screen buffer, which still shows the last run's frame."""
    from workstation.game.games import GAMES

    pool = EnvPool(per_game=1)
    protocol = Protocol()
    for key in sorted(GAMES)[:6] + ["breakout"]:
        game = get_game(key)
        seen = []
        for _ in range(3):
            frames = []
            lender = Lender(pool)
            token = ENV_SOURCE.set(lender)
            try:
                clock = GameClock(game, protocol, seed=1, sink=lambda screen, rgb, ram: frames.append(
                    (screen.copy(), rgb().copy(), ram.copy())))
                lender.bind(clock)
                clock.start()
                for a in range(40):  # leave the emulator somewhere else for the next run
                    clock.step_frame(a % len(clock._action_set))
            finally:
                lender.end()
                ENV_SOURCE.reset(token)
            seen.append(frames)
        own = []
        alone = GameClock(game, protocol, seed=1, sink=lambda screen, rgb, ram: own.append(
            (screen.copy(), rgb().copy(), ram.copy())))
        alone.start()
        for a in range(40):
            alone.step_frame(a % len(alone._action_set))
        for frames in seen:
            assert len(frames) == len(own)
            for (s, r, m), (s2, r2, m2) in zip(frames, own):
                assert (s == s2).all() and (r == r2).all() and (m == m2).all(), key
