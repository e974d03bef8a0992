"""The two-player clock: both players' actions applied in lockstep on the multi-agent ALE.

ale-py 0.12 takes one action per ``act``; ``multi-agent-ale-py`` (the emulator
PettingZoo's Atari games run on) takes one per player and returns one reward per
player. Its emulator state after a reset differs from ale-py's (27 RAM bytes in
Boxing), so two-player recordings have a backend and a verify rule of their own,
and one-player runs stay on ale-py unchanged. The ROMs are the ones ale-py ships.

The clock follows ``workstation.game.clock``'s rules: budget frame 0 is the
observation after reset and warm-up (warm-up NOOPs and ``noops:N`` start frames
run outside the budget), each budget step adds one frame, an action is held for
``protocol.repeat`` frames, and a game that ends waits in ``game_over`` for
``new_game()``, whose first frame is a budget frame of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from workstation.base.errors import UserError
from workstation.game.games import _ALL18, GAMES, Game
from workstation.game.protocol import Protocol

FrameSink = Callable[[np.ndarray, Callable[[], np.ndarray], np.ndarray], object]  # (screen, rgb, ram)
Pair = tuple[int, int]
SIDES = (1, 2)


class TwoPlayerGameError(UserError, ValueError):
    """A game or variant the two-player backend does not offer (the message names the ones it does)."""


@dataclass(frozen=True)
class TwoPlayerGame:
    """A game two players play at once: its actions (a ``Game``), its ROM and how it is scored."""

    game: Game  # action names, vocabulary and frame height, as the parser and prompt builder use them
    rom: str  # the ROM file's stem in ale-py's ROM folder
    team: bool = False  # co-operative: the two players' points add up to a team score

    @property
    def key(self) -> str:
        return self.game.key

    def ale_action(self, action_id: int) -> int:
        """The ALE action (0..17) of an index into the game's minimal action set."""
        return _ALL18.index(self.game.minimal_set[action_id])


def _extra(key: str, ale: str, meanings: str, genre: str, skill: str, height: int = 210, **aliases: int) -> Game:
    names = tuple(meanings.split())
    words = {n.lower(): i for i, n in enumerate(names)}  # a game's words are all its words: its own action names too
    words.update({k.replace("_", " "): v for k, v in aliases.items()})
    return Game(key=key, ale_name=ale, minimal_set=names, allowed=tuple(range(len(names))), genre=genre,
                skill=skill, height=height, in_paper=False, aliases=words)


# Games whose sides were checked by moving one player at a time and looking at the frames (docs/two-player.md).
TWO_PLAYER_GAMES: dict[str, TwoPlayerGame] = {g.key: g for g in (
    TwoPlayerGame(GAMES["boxing"], "boxing"),
    TwoPlayerGame(GAMES["tennis"], "tennis"),
    TwoPlayerGame(GAMES["ice_hockey"], "ice_hockey"),
    TwoPlayerGame(_extra("pong", "Pong", "NOOP FIRE RIGHT LEFT RIGHTFIRE LEFTFIRE", "Sports", "paddle timing",
                         up=2, down=3, stay=0, wait=0, serve=1), "pong"),
    TwoPlayerGame(_extra("combat", "Combat", " ".join(_ALL18), "Shooter", "aiming & avoidance",
                         height=256, shoot=1, stay=0, wait=0), "combat"),
    TwoPlayerGame(_extra("mario_bros", "MarioBros", " ".join(_ALL18), "Action", "co-operative clearing",
                         jump=2, stay=0, wait=0), "mario_bros", team=True),
)}


def two_player_keys() -> str:
    return ", ".join(TWO_PLAYER_GAMES)


def get_two_player_game(name: str) -> TwoPlayerGame:
    """The two-player game called ``name``; TwoPlayerGameError naming the ones there are."""
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    found = TWO_PLAYER_GAMES.get(key)
    if found is None:
        kind = "a one-player game here" if key in GAMES else "not a two-player game this version offers"
        raise TwoPlayerGameError(f"--game {name}: {kind}; the two-player games are {two_player_keys()}")
    return found


_LOGGER_SET = False


def emulator_seed(seed: int) -> int:
    """The emulator's seed for a match seed: 1..2**31-1. Its seed 0 is not a seed: the start state then
    varies from one emulator to the next (5 to 16 in 200 Boxing resets); every other seed gives the
    same start (tests/test_twoplayer.py), and drives the sticky-action draws."""
    return seed % (2**31 - 1) + 1


def make_ale(tp: TwoPlayerGame, protocol: Protocol, seed: int) -> Any:
    """A multi-agent ALE with the game's first two-player mode (or ``protocol.game_mode``), reset."""
    global _LOGGER_SET
    import multi_agent_ale_py
    from ale_py import roms

    if not _LOGGER_SET:
        multi_agent_ale_py.ALEInterface.setLoggerMode(2)  # errors only: no banner per emulator
        _LOGGER_SET = True
    ale = multi_agent_ale_py.ALEInterface()
    ale.setInt(b"random_seed", emulator_seed(seed))
    ale.setFloat(b"repeat_action_probability", protocol.start.repeat_action_probability)
    ale.loadROM(str(roms.get_rom_path(tp.rom)))
    modes = [int(m) for m in ale.getAvailableModes(2)]
    why = variant_problem(tp, protocol, (tuple(modes), tuple(int(d) for d in ale.getAvailableDifficulties())))
    if why:
        raise TwoPlayerGameError(why)
    mode = protocol.game_mode if protocol.game_mode is not None else modes[0]
    ale.setMode(mode)
    if protocol.game_difficulty is not None:
        ale.setDifficulty(protocol.game_difficulty)
    ale.reset_game()
    if ale.numPlayersActive() != 2:
        raise TwoPlayerGameError(f"{tp.key} mode {mode} is not a two-player mode")
    return ale


def variants(tp: TwoPlayerGame) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(two-player modes, difficulties) the game's ROM offers (the ROM is read; nothing is played)."""
    ale = make_ale(tp, Protocol(), 0)
    return tuple(int(m) for m in ale.getAvailableModes(2)), tuple(int(d) for d in ale.getAvailableDifficulties())


def variant_problem(tp: TwoPlayerGame, protocol: Protocol,
                    offered: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> str | None:
    """Why ``--game-mode`` / ``--game-difficulty`` do not exist for this game's two players, or None."""
    if protocol.game_mode is None and protocol.game_difficulty is None:
        return None
    modes, difficulties = offered or variants(tp)
    if protocol.game_mode is not None and protocol.game_mode not in modes:
        return f"--game-mode {protocol.game_mode}: {tp.key}'s two-player modes are {', '.join(map(str, modes))}"
    if protocol.game_difficulty is not None and protocol.game_difficulty not in difficulties:
        return (f"--game-difficulty {protocol.game_difficulty}: {tp.key} offers difficulties "
                f"{', '.join(map(str, difficulties))}")
    return None


@dataclass
class PlayerOutcome:
    """What one action did for one player."""

    action: int  # index into the game's minimal action set; -1 for a NOOP that pads a shorter plan
    reward: float = 0.0
    life_lost: bool = False


@dataclass
class LockstepOutcome:
    """One lockstep action of both players (``repeat`` frames, fewer if the budget ran out or a game ended)."""

    players: tuple[PlayerOutcome, PlayerOutcome]
    frames: int = 0
    reset: bool = False  # the game ended during this action
    last_frame: int = 0


@dataclass
class TwoPlayerState:
    """A snapshot of the clock (the emulator state and the counters)."""

    ale_state: Any
    frame: int
    scores: tuple[float, float]
    lives: tuple[int, int]
    lives_lost: tuple[int, int]
    episode: int
    noop_rng: dict[str, Any]
    over: bool
    game_over: bool


@dataclass
class TwoPlayerClock:
    """The emulator stepped frame by frame for two players inside a frame budget."""

    tp: TwoPlayerGame
    protocol: Protocol
    seed: int
    sink: FrameSink | None = None
    frame: int = 0
    scores: list[float] = field(default_factory=lambda: [0.0, 0.0])
    lives: list[int] = field(default_factory=lambda: [0, 0])
    lives_lost: list[int] = field(default_factory=lambda: [0, 0])
    episode: int = 0
    game_over: bool = False
    _over: bool = False

    def __post_init__(self) -> None:
        self.ale: Any = make_ale(self.tp, self.protocol, self.seed)
        self._noop_rng = np.random.default_rng(self.seed)
        width, height = self.ale.getScreenDims()
        self.shape: tuple[int, int] = (int(height), int(width))
        self._noop = np.zeros(2, dtype=np.intc)

    # -- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Warm up after the reset and emit budget frame 0."""
        self._after_reset()
        self._emit()

    def _after_reset(self) -> None:
        extra = 0
        if self.protocol.start.kind == "noops":
            extra = int(self._noop_rng.integers(0, int(self.protocol.start.value) + 1))
        for _ in range(self.tp.game.warmup_frames + extra):
            self.ale.act(self._noop)
            if self.ale.game_over():  # a game cannot end during warm-up; guard anyway
                self.ale.reset_game()
        self.lives = [int(v) for v in self.ale.allLives()]

    @property
    def remaining(self) -> int:
        return max(0, self.protocol.frames - self.frame)

    @property
    def done(self) -> bool:
        """No more budget frames now: the budget is used up, the match was stopped, or a game waits for new_game()."""
        return self.frame >= self.protocol.frames or self._over or self.game_over

    @property
    def finished(self) -> bool:
        return self.frame >= self.protocol.frames or self._over

    def new_game(self) -> bool:
        """After a game over: reset, warm up, and emit the new game's first frame as a budget frame."""
        if not self.game_over:
            raise RuntimeError("new_game() is only for after a game over")
        if self.finished:
            return False
        self.game_over = False
        self.ale.reset_game()
        self._after_reset()
        self.frame += 1
        self._emit()
        return True

    def stop(self) -> None:
        self._over = True

    # -- frames ----------------------------------------------------------
    def screen(self) -> npt.NDArray[np.uint8]:
        flat: npt.NDArray[np.uint8] = self.ale.getScreen()
        return flat.reshape(self.shape)

    def rgb(self) -> npt.NDArray[np.uint8]:
        flat: npt.NDArray[np.uint8] = self.ale.getScreenRGB()
        return flat.reshape((*self.shape, 3))

    def ram(self) -> npt.NDArray[np.uint8]:
        ram: npt.NDArray[np.uint8] = self.ale.getRAM()
        return ram

    def _emit(self) -> None:
        if self.sink is not None:
            self.sink(self.screen(), self.rgb, self.ram())

    def step_frame(self, actions: Pair) -> tuple[tuple[float, float], tuple[bool, bool], bool]:
        """One budget frame with both players' ALE actions: (rewards, lives lost, the game ended)."""
        if self.done:
            raise RuntimeError("a game ended: call new_game()" if self.game_over and not self.finished
                               else "the frame budget is used up")
        rewards = self.ale.act(np.array(actions, dtype=np.intc))
        r = (float(rewards[0]), float(rewards[1]))
        lives = [int(v) for v in self.ale.allLives()]
        lost = (lives[0] < self.lives[0], lives[1] < self.lives[1])
        for i in (0, 1):
            self.scores[i] += r[i]
            self.lives_lost[i] += int(lost[i])
        self.lives = lives
        self.frame += 1
        ended = bool(self.ale.game_over())
        if ended:
            self.episode += 1
            self.game_over = True
        self._emit()
        return r, lost, ended

    def act(self, a1: int | None, a2: int | None, frames: int | None = None) -> LockstepOutcome:
        """Hold each player's action (an index into the minimal set; None pads with NOOP) for ``repeat`` frames."""
        n = self.protocol.repeat if frames is None else frames
        ale_actions = (0 if a1 is None else self.tp.ale_action(a1), 0 if a2 is None else self.tp.ale_action(a2))
        players = (PlayerOutcome(-1 if a1 is None else a1), PlayerOutcome(-1 if a2 is None else a2))
        out = LockstepOutcome(players)
        for _ in range(n):
            if self.done:
                break
            r, lost, ended = self.step_frame(ale_actions)
            for i in (0, 1):
                players[i].reward += r[i]
                players[i].life_lost |= lost[i]
            out.reset |= ended
            out.frames += 1
        out.last_frame = self.frame
        return out

    # -- snapshots -------------------------------------------------------
    def snapshot(self) -> TwoPlayerState:
        return TwoPlayerState(self.ale.cloneState(), self.frame, (self.scores[0], self.scores[1]),
                              (self.lives[0], self.lives[1]), (self.lives_lost[0], self.lives_lost[1]),
                              self.episode, dict(self._noop_rng.bit_generator.state), self._over, self.game_over)

    def restore(self, s: TwoPlayerState) -> None:
        self.ale.restoreState(s.ale_state)
        self.frame, self.scores, self.lives = s.frame, list(s.scores), list(s.lives)
        self.lives_lost, self.episode = list(s.lives_lost), s.episode
        self._noop_rng.bit_generator.state = s.noop_rng
        self._over, self.game_over = s.over, s.game_over

    def close(self) -> None:
        self.ale = None
