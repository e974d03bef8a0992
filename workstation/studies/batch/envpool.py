"""Emulators shared by the model runs of a batch: a few per game, lent for the frames of a turn.

Making an emulator (ALE's ``loadROM``) costs ~0.1 s, almost all of it computing a colour
table, and holds the GIL: sixty-four runs starting at once would each wait for the others'
(~7 s before the last run's first call). A model run needs its emulator only while it plays
its turn's frames, a few milliseconds a second, so the runs of a batch share a few:

- a run starting takes one (reset to the state it had when made) for ``GameClock.start``;
- before each model call it gives it back, keeping its own emulator state (``cloneState``);
- after the reply it takes any free one and restores its state there (``restoreState``),
  then plays the turn's frames.

The frames are those of a run with its own emulator (the recordings verify frame for frame:
tests/test_batch.py). Runs with sticky actions (the emulator's RNG matters) or the latency
clock (frames play during the call) keep an emulator of their own, as before.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import defaultdict
from typing import Any

from workstation.game.clock import make_env

MAKE_AFTER_S = 0.05  # how long a run waits for a free emulator before another is made
PER_GAME = 4  # emulators per (game, variant) and process: a run holds one ~1 ms a turn, and each costs ~0.1 s to make


def poolable(protocol: Any) -> bool:
    return bool(protocol.start.kind != "sticky" and protocol.clock != "latency")


def _key(game: Any, protocol: Any, sound: bool) -> tuple[Any, ...]:
    return (game.env_id, protocol.start.repeat_action_probability, sound, protocol.game_mode, protocol.game_difficulty)


class EnvPool:
    def __init__(self, per_game: int | None = None) -> None:
        self.per_game = per_game or PER_GAME
        self._cond = threading.Condition()
        self._free: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
        self._made: dict[tuple[Any, ...], int] = defaultdict(int)
        self._pristine: dict[int, Any] = {}  # id(env) -> its state when made
        self._after_reset: dict[int, tuple[Any, ...]] = {}  # id(env) -> (state, obs, info) after its first reset
        self._all: list[Any] = []
        self.waits = 0  # takes that waited for a free emulator

    def take(self, game: Any, protocol: Any, sound: bool = False, fresh: bool = True) -> Any:
        """A free emulator for this game and variant (made if fewer than ``per_game`` exist, else waits
        for one). ``fresh``: in the state it had when made (for a run's start); otherwise as it was
        left (the taker restores its own state)."""
        key = _key(game, protocol, sound)
        with self._cond:
            waited = False
            # a second emulator of a game only when none came free within MAKE_AFTER_S: making one costs
            # ~0.1 s of CPU holding the GIL, a turn holds one ~1 ms (and 21 games x 4 at a batch's start
            # would cost seconds)
            deadline = None if self._made[key] == 0 else time.monotonic() + MAKE_AFTER_S
            while not self._free[key] and (self._made[key] >= self.per_game or deadline is not None):
                waited = True
                if deadline is None or self._made[key] >= self.per_game:
                    self._cond.wait()
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            self.waits += waited
            if self._free[key]:
                env = self._free[key].pop()
                if fresh:
                    env.unwrapped.ale.restoreState(self._pristine[id(env)])
                return env
            self._made[key] += 1
        try:
            env = make_env(game, protocol.start.repeat_action_probability, sound, protocol.game_mode,
                           protocol.game_difficulty)
        except BaseException:
            with self._cond:
                self._made[key] -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._pristine[id(env)] = env.unwrapped.ale.cloneState(include_rng=True)
            self._all.append(env)
        return env

    def first_reset(self, env: Any) -> Any:
        """``(obs, info, screen)`` of ``env.unwrapped.reset()`` for an emulator just taken fresh, without
        playing it: the reset (the ROM's start-up frames, ~5 ms) from the state it had when made always
        ends in the same state, so it is played once an emulator and restored after (ALE's full state,
        its RNG with it). ``screen`` is the palette screen the reset left: a restored state does not
        redraw the emulator's screen buffer, which still shows the last run's frame."""
        known = self._after_reset.get(id(env))
        ale = env.unwrapped.ale
        if known is None:
            obs, info = env.unwrapped.reset()
            known = (ale.cloneState(include_rng=True), copy.deepcopy(obs), copy.deepcopy(info), ale.getScreen())
            with self._cond:
                self._after_reset[id(env)] = known
            return obs, info, known[3].copy()
        state, obs, info, screen = known
        ale.restoreState(state)
        return copy.deepcopy(obs), copy.deepcopy(info), screen.copy()

    def made(self) -> int:
        """How many emulators this pool has made (closed ones too)."""
        with self._cond:
            return sum(self._made.values())

    def prefill(self, game: Any, protocol: Any, sound: bool = False) -> None:
        """Make one emulator for this game now (in the batch's thread, before its runs start)."""
        if poolable(protocol):
            self.give(game, protocol, sound, self.take(game, protocol, sound))

    def give(self, game: Any, protocol: Any, sound: bool, env: Any) -> None:
        with self._cond:
            self._free[_key(game, protocol, sound)].append(env)
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            envs, self._all = self._all, []
            self._free.clear()
        for env in envs:
            try:
                env.close()
            except Exception:  # closing is best effort
                pass


class Lender:
    """A run's side of the pool: the clock's env source (``workstation.game.clock.ENV_SOURCE``), then
    ``release()`` before each model call and ``acquire()`` after it; ``end()`` when the run is over."""

    def __init__(self, pool: EnvPool) -> None:
        self.pool = pool
        self.clock: Any = None
        self.env: Any = None  # the pooled emulator this run holds now
        self.args: tuple[Any, Any, bool] | None = None  # (game, protocol, sound) of the emulator it took
        self.state: Any = None  # the run's emulator state while it holds none
        self._started = False  # the clock has had its first reset

    def __call__(self, game: Any, protocol: Any, sound: bool) -> Any:
        if not poolable(protocol) or self.args is not None:
            return None
        self.args = (game, protocol, sound)
        self.env = self.pool.take(game, protocol, sound, fresh=True)
        return self.env

    def first_reset(self, env: Any) -> Any:
        """The clock's reset at its start, when ``env`` is the fresh one this lender took (else None)."""
        if env is None or env is not self.env or self._started:
            return None
        self._started = True
        return self.pool.first_reset(env)

    def bind(self, clock: Any) -> None:
        self.clock = clock if self.env is not None and clock.env is self.env else None

    def release(self) -> None:
        c = self.clock
        if c is None or self.env is None:
            return
        env, self.state = c.detach()
        self.env = None
        self.pool.give(*self._args(), env)

    def acquire(self) -> None:
        c = self.clock
        if c is None or self.env is not None:
            return
        env = self.pool.take(*self._args(), fresh=False)
        c.attach(env, self.state)
        self.env = env

    def end(self) -> None:
        """The run is over (or never got its engine): the emulator goes back; the clock's close() closes nothing."""
        if self.env is None:
            return
        if self.clock is not None:
            self.release()
        else:
            env, self.env = self.env, None
            self.pool.give(*self._args(), env)

    def _args(self) -> tuple[Any, Any, bool]:
        if self.args is None:  # only a lender that took an emulator gives one back or takes one again
            raise RuntimeError("this lender took no emulator")
        return self.args


__all__ = ["EnvPool", "Lender", "poolable"]
