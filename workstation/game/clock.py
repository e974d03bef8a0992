"""The protocol clock: the emulator stepped frame by frame inside a frame budget.

Budget frame 0 is the observation after reset and warm-up; every budget step
adds one frame. Warm-up NOOPs (and ``noops:N`` start frames) run outside the
budget.

Game over follows the public AtariBench harness (rule 2, ``GAME_OVER_RULE``): the frame on
which the game ends (terminated or truncated) is recorded as it is, the life
lost on it counts, and the clock then waits in ``game_over``. The engine ends
the turn there (cutting the action in progress and dropping the rest of the
plan) and calls ``new_game()``: the reset observation, after the warm-up,
becomes a budget frame of its own, unless the budget is already used up.

Rule 1, kept only so that recordings made under it still verify: the game
reset inside the terminal step, and that step's recorded frame was the new
game's first frame.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from workstation.game.games import Game
from workstation.game.protocol import Protocol

FrameSink = Callable[[np.ndarray, Callable[[], np.ndarray], np.ndarray], object]  # (screen, rgb when asked, ram)

_ENV_READY = False

# A batch lends its runs emulators from a pool (workstation/studies/batch/envpool.py: loadROM costs ~0.1 s
# holding the GIL, so 64 runs starting at once would wait ~7 s for theirs). Set in a run's thread,
# ENV_SOURCE(game, protocol, sound) gives the env for the clock to use, or None for a new one.
ENV_SOURCE: ContextVar[Callable[[Game, Protocol, bool], Any] | None] = ContextVar("workstation_env_source", default=None)


def make_env(game: Game, repeat_action_probability: float = 0.0, sound: bool = False,
             mode: int | None = None, difficulty: int | None = None) -> Any:
    """The protocol's environment: ``gym.make`` exactly as the paper's harness does.

    ``sound``: also ``sound_obs=True`` (ale-py 0.12), so the emulator makes each frame's
    512 audio samples; the frames are the same either way (tests/test_sound.py)."""
    global _ENV_READY
    import ale_py
    import gymnasium as gym

    if not _ENV_READY:
        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no banner on every env
        gym.register_envs(ale_py)
        _ENV_READY = True
    variant: dict[str, Any] = {k: v for k, v in (("mode", mode), ("difficulty", difficulty)) if v is not None}
    return gym.make(game.env_id, frameskip=1, repeat_action_probability=repeat_action_probability,
                    full_action_space=False, **({"sound_obs": True} if sound else {}), **variant)


@cache
def game_variants(key: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(modes, difficulties) a game's ROM offers (read from the ROM; nothing is played)."""
    import ale_py
    from ale_py import ALEInterface, roms

    from workstation.game.games import get_game

    ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # before the constructor, which prints a banner
    ale = ALEInterface()
    rom = roms.get_rom_path(re.sub(r"(?<!^)(?=[A-Z])", "_", get_game(key).ale_name).lower())
    if rom is None:
        raise ValueError(f"no ROM for {key} in this ale-py")
    ale.loadROM(rom)
    return tuple(ale.getAvailableModes()), tuple(ale.getAvailableDifficulties())


def variant_problem(key: str, mode: int | None, difficulty: int | None) -> str | None:
    """Why this game has no such mode / difficulty (one line naming the flag), or None."""
    modes, difficulties = game_variants(key) if mode is not None or difficulty is not None else ((), ())
    if mode is not None and mode not in modes:
        return f"--game-mode {mode}: {key} offers modes {', '.join(map(str, modes))}"
    if difficulty is not None and difficulty not in difficulties:
        return f"--game-difficulty {difficulty}: {key} offers difficulties {', '.join(map(str, difficulties))}"
    return None


GAME_OVER_RULE = 2  # the game-over rule new runs are made under (recorded in the manifest)


@dataclass
class ActionOutcome:
    """What one action (``repeat`` frames, fewer if the budget ran out) did."""

    action: int
    frames: int  # budget frames executed
    reward: float
    life_lost: bool
    reset: bool  # the game ended during this action
    last_frame: int  # index of the frame after the action


@dataclass
class ClockState:
    ale_state: object
    frame: int
    score: float
    lives: int
    episode: int
    lives_lost: int
    noop_rng: dict[str, Any]
    rgb: np.ndarray
    over: bool
    game_over: bool = False


class _Detached:
    """Stands in for the clock's env while it has none (between turns of a batch run, and at close)."""

    def close(self) -> None:
        pass


class GameClock:
    def __init__(self, game: Game, protocol: Protocol, seed: int, sink: FrameSink | None = None,
                 rules: int = GAME_OVER_RULE, sound: bool = False):
        if rules not in (1, 2):
            raise ValueError(f"unknown game-over rule {rules!r}: this version knows rules 1 and 2")
        self.rules = rules
        self.game = game
        self.protocol = protocol
        self.seed = seed
        self.sink = sink
        self.sound = sound  # off by default: runs and their recordings never ask for it
        self._open_env()
        self._noop_rng = np.random.default_rng(seed)
        self.frame = 0
        self.score = 0.0
        self.lives = 0
        self.lives_lost = 0
        self.last_drop = 0
        self.episode = 0
        self._rgb: np.ndarray | None = None
        self._over = False
        self.game_over = False  # rule 2: the game ended on the last frame; new_game() starts the next
        # the emulator's RNG only drives sticky actions; cloning it doubles a snapshot's cost
        self._sticky = protocol.start.kind == "sticky"

    def _open_env(self) -> None:
        source = self._source = ENV_SOURCE.get()
        env = source(self.game, self.protocol, self.sound) if source is not None else None
        if env is None:
            env = make_env(self.game, self.protocol.start.repeat_action_probability, self.sound,
                           self.protocol.game_mode, self.protocol.game_difficulty)
        self.attach_env(env)

    def attach_env(self, env: Any) -> None:
        """Step ``env`` from now on (a batch's pooled emulator; the caller restores the run's state in it)."""
        self.env = env
        self._env = self.env.unwrapped
        self.ale = self._env.ale
        self._action_set = self._env._action_set  # minimal-set index -> ALE action

    def detach(self) -> tuple[Any, Any]:
        """Give up the emulator between turns (a batch lends it to another run): returns ``(env, state)``,
        the run's emulator state without its RNG; the current frame's RGB stays here. Until ``attach``
        the clock holds no emulator (its ``close()`` closes nothing)."""
        rgb = self.rgb  # the current frame's RGB stays with the clock
        state = self.ale.cloneState(include_rng=False)
        env = self.env
        self.env = self._env = self.ale = _Detached()
        self._rgb = rgb
        return env, state

    def attach(self, env: Any, state: Any) -> None:
        """Take an emulator back (any of the same game and settings) and restore ``state`` from ``detach`` in it."""
        rgb = self._rgb
        env.unwrapped.ale.restoreState(state)
        self.attach_env(env)
        self._rgb = rgb

    def enable_sound(self) -> None:
        """Make the emulator produce sound (before ``start()``: it makes the env anew)."""
        if not self.sound:
            self.env.close()
            self.sound = True
            self._open_env()

    def audio(self) -> np.ndarray | None:
        """The last frame's 512 sound samples (uint8, 128 is silence); None without sound."""
        return self.ale.getAudio() if self.sound else None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Reset with the run seed, warm up, and emit budget frame 0."""
        if self._sticky:
            obs, info = self._env.reset(seed=self.seed)  # the seed drives the sticky-action draws
        else:
            # Sticky actions off: the emulator's seed changes nothing (the same frames and RAM on all
            # 21 games, tests/test_clock.py), and reset(seed=) loads the ROM again (~0.09 s, holding
            # the GIL): a plain reset halves a run's start-up, which batches of many runs feel.
            # A batch's pooled emulator, taken fresh, restores the state its first reset ended in.
            first = getattr(self._source, "first_reset", None)
            again = first(self.env) if first is not None else None
            if again is not None:
                obs, info, screen = again
                played = self._after_reset(obs, info)
                self._emit(None if played else screen)  # none played since the restore: the reset's screen
                return
            obs, info = self._env.reset()
        self._after_reset(obs, info)
        self._emit()

    def _after_reset(self, obs: np.ndarray, info: dict[str, Any]) -> int:
        """Warm up (and the start's random no-ops); returns how many frames that played."""
        noop = 0
        extra = 0
        if self.protocol.start.kind == "noops":
            extra = int(self._noop_rng.integers(0, int(self.protocol.start.value) + 1))
        for _ in range(self.game.warmup_frames + extra):
            obs, _, term, trunc, info = self._env.step(noop)
            if term or trunc:  # a game cannot end during warm-up; guard anyway
                obs, info = self._env.reset()
        self._rgb = obs["image"] if self.sound else obs  # sound_obs makes it {"image", "sound"}
        self.lives = int(info["lives"])
        return self.game.warmup_frames + extra

    @property
    def rgb(self) -> np.ndarray:
        """The current frame as RGB, fetched from the emulator only when asked for."""
        if self._rgb is None:
            self._rgb = self.ale.getScreenRGB()
        return self._rgb

    def _rgb_now(self) -> np.ndarray:
        return self.rgb

    def _emit(self, screen: np.ndarray | None = None) -> None:
        if self.sink is not None:
            # the RGB goes as a callable: the frame store needs it only when a new colour appears
            self.sink(self.ale.getScreen() if screen is None else screen, self._rgb_now, self.ale.getRAM())

    @property
    def remaining(self) -> int:
        return max(0, self.protocol.frames - self.frame)

    @property
    def done(self) -> bool:
        """No more budget frames: the budget is used up, the run was stopped, or a game
        ended and waits for ``new_game()``."""
        return self.frame >= self.protocol.frames or self._over or self.game_over

    @property
    def finished(self) -> bool:
        """The run is over: budget used up or stopped (a pending game over with budget
        left is not the end)."""
        return self.frame >= self.protocol.frames or self._over

    def new_game(self) -> bool:
        """After a game over, reset (warm-up outside the budget) and emit the new game's
        first frame as a budget frame of its own. False (and nothing done) when the
        budget is already used up or the run was stopped."""
        if not self.game_over:
            raise RuntimeError("new_game() is only for after a game over")
        if self.finished:
            return False
        self.game_over = False
        obs, info = self._env.reset()
        self._after_reset(obs, info)
        self.frame += 1
        self._emit()
        return True

    def stop(self) -> None:
        """End the run early (cost cap, fatal error): no more frames."""
        self._over = True

    # -- stepping --------------------------------------------------------
    def step_frame(self, action: int) -> tuple[float, bool, bool]:
        """One budget frame: (reward, life lost, game ended on this frame)."""
        if self.done:
            raise RuntimeError("a game ended: call new_game()" if self.game_over and not self.finished
                               else "the frame budget is used up")
        # AtariEnv.step with frameskip=1, minus the RGB observation we may not need:
        # the same ALE calls in the same order (tests/test_clock.py checks it against env.step).
        ale = self.ale
        reward = ale.act(self._action_set[action], 1.0)
        term = ale.game_over(with_truncation=False)
        trunc = ale.game_truncated()
        lives = ale.lives()
        life_lost = lives < self.lives
        self.last_drop = self.lives - lives if life_lost else 0  # lives gone on this frame (the harness counts them all)
        self.lives_lost += self.last_drop
        self.lives = lives
        self.frame += 1
        self.score += reward
        ended = bool(term or trunc)
        self._rgb = None
        if ended:
            self.episode += 1
            if self.rules == 1:
                obs, info = self._env.reset()
                self._after_reset(obs, info)
            else:
                self.game_over = True
        self._emit()
        return float(reward), life_lost, ended

    def act(self, action: int, frames: int | None = None) -> ActionOutcome:
        """Hold ``action`` for ``repeat`` frames (cut at the budget)."""
        n = self.protocol.repeat if frames is None else frames
        total, lost, reset, done = 0.0, False, False, 0
        for _ in range(n):
            if self.done:
                break
            r, l, s = self.step_frame(action)
            total += r
            lost |= l
            reset |= s
            done += 1
        return ActionOutcome(action, done, total, lost, reset, self.frame)

    # -- snapshots -------------------------------------------------------
    def snapshot(self) -> ClockState:
        return ClockState(
            ale_state=self.ale.cloneState(include_rng=self._sticky), frame=self.frame, score=self.score,
            lives=self.lives, episode=self.episode, lives_lost=self.lives_lost,
            noop_rng=dict(self._noop_rng.bit_generator.state), rgb=self.rgb.copy(), over=self._over,
            game_over=self.game_over,
        )

    def restore(self, s: ClockState) -> None:
        self.ale.restoreState(s.ale_state)
        self.frame, self.score, self.lives = s.frame, s.score, s.lives
        self.episode, self.lives_lost, self._over = s.episode, s.lives_lost, s.over
        self.game_over = s.game_over
        self._noop_rng.bit_generator.state = s.noop_rng
        self._rgb = s.rgb.copy()

    def close(self) -> None:
        self.env.close()
