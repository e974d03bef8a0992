"""A run as series: per frame and per turn, for every reader (screens, CLI, compare, export, report, QA).

``FrameSeries`` holds the per-frame arrays over the budget (reward gained on
each frame, life lost, game reset) and can be filled frame by frame while a
run plays. ``RunSeries.from_turns`` builds the full picture from a
recording's turn records: score and lives at every frame, which turn and which
action was on at any frame, tokens, cost and calls per turn and cumulated.
``stats_at(frame)`` gives the stats bar's figures at one frame,
``run_stats()`` the whole run's, and ``summary_line`` the one-line account of
a summary the CLI prints. Headless: numpy only, no Textual.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from workstation.base.words import plural
from workstation.store.changes import mark
from workstation.store.forward import Forward
from workstation.store.records import Manifest, Summary, TurnRecord

if TYPE_CHECKING:
    from workstation.store.integrity import Recording

LATENCY_NOOP = "noop"  # the action on frames the game ran while the agent thought (latency clock)
NEW_GAME = "reset"  # rule 2: the new game's first frame after a game over, a budget frame of its own


# -- per-frame arrays ----------------------------------------------------------------
class FrameSeries:
    """Reward, life loss and reset on each budget frame ``0..budget``; fillable as a run plays."""

    def __init__(self, budget: int) -> None:
        self.budget = max(0, int(budget))
        n = self.budget + 1
        self.rewards = np.zeros(n)
        self.losses = np.zeros(n, dtype=bool)
        self.resets = np.zeros(n, dtype=bool)

    @classmethod
    def over(cls, rewards: np.ndarray, losses: np.ndarray, resets: np.ndarray | None = None) -> FrameSeries:
        """A series over arrays someone else fills in place (the TUI's engine driver, frame by frame)."""
        self = cls.__new__(cls)
        self.budget = len(rewards) - 1
        self.rewards, self.losses = rewards, losses
        self.resets = resets if resets is not None else np.zeros(len(rewards), dtype=bool)
        return self

    def add(self, frame: int, reward: float = 0.0, life_lost: bool = False, reset: bool = False) -> None:
        """What happened on ``frame`` (frames outside the budget are ignored)."""
        if 0 <= frame <= self.budget:
            self.rewards[frame] += reward
            self.losses[frame] |= bool(life_lost)
            self.resets[frame] |= bool(reset)

    def truncate(self, frame: int) -> None:
        """Forget everything after ``frame`` (a rewind)."""
        self.rewards[frame + 1:] = 0
        self.losses[frame + 1:] = False
        self.resets[frame + 1:] = False

    @property
    def score(self) -> np.ndarray:
        """The score after each frame (cumulated over games, as the run's total is)."""
        return np.cumsum(self.rewards)

    def events(self) -> list[tuple[int, str, float]]:
        """(frame, "reward" | "life_lost" | "reset", value) in frame order."""
        out: list[tuple[int, str, float]] = []
        for at in np.flatnonzero((self.rewards != 0) | self.losses | self.resets):
            f = int(at)
            if self.rewards[f]:
                out.append((f, "reward", float(self.rewards[f])))
            if self.losses[f]:
                out.append((f, "life_lost", 1.0))
            if self.resets[f]:
                out.append((f, "reset", 1.0))
        return out

    def cells(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """(reward sum, any life lost) per cell when the budget is drawn ``width`` cells wide."""
        return buckets(self.rewards, width), buckets(self.losses.astype(np.int64), width) > 0


def buckets(values: np.ndarray, n: int, reduce: Any = np.add) -> np.ndarray:
    """Reduce ``values`` into ``n`` near-equal consecutive buckets."""
    values = np.asarray(values)
    if n <= 0 or len(values) == 0:
        return np.zeros(0, dtype=values.dtype)
    starts = (np.arange(n) * len(values)) // n
    starts = np.unique(np.minimum(starts, len(values) - 1))
    out: np.ndarray = reduce.reduceat(values, starts)
    if len(out) < n:  # fewer frames than cells: pad
        out = np.concatenate([out, np.zeros(n - len(out), dtype=out.dtype)])
    return out


# -- figures ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FrameStats:
    """A run's figures at one frame (the stats bar's fields)."""

    frame: int = 0
    budget: int = 900
    score: float = 0.0
    lives: int = 0
    lives_lost: int = 0
    turn: int = 0  # turns completed by this frame
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    calls: int = 0
    invalid_turns: int = 0


@dataclass(frozen=True)
class RunStats:
    """A whole run's figures, from its turns (what compare, report and QA tabulate)."""

    frames: int
    budget: int
    turns: int
    score: float
    lives_lost: int
    resets: int  # games that ended and restarted inside the budget
    game_overs: int  # turns that recorded a game over (rule 2)
    invalid_turns: int
    error_turns: int  # turns whose reply failed (provider error)
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    actions: int
    mean_actions: float
    mean_latency_s: float
    rewarded_turns: int
    first_reward_frame: int | None


@dataclass
class RunSeries:
    """Per-frame and per-turn series of one recording."""

    frames: FrameSeries
    turns: list[TurnRecord]
    known: int  # the last recorded frame (-1: none)
    lives: np.ndarray  # lives shown at each frame
    action_of_frame: np.ndarray  # index into ``action_names`` of the action that produced each frame (-1: none)
    action_names: list[str]
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    @classmethod
    def from_recording(cls, rec: Recording) -> RunSeries:
        """From a ``workstation.store.recording.Recording`` (its typed turns and manifest)."""
        n_frames = None
        try:
            n_frames = len(rec.frames)
        except Exception:  # a damaged frame store only costs the frame count
            pass
        return cls.from_turns(rec.turn_records, rec.manifest_record, n_frames)

    @classmethod
    def from_turns(cls, turns: list[TurnRecord], manifest: Manifest | None = None,
                   n_frames: int | None = None) -> RunSeries:
        known = turns[-1].last_frame if turns else (n_frames - 1 if n_frames else -1)
        budget = max((manifest.budget if manifest else None) or 0, known, (n_frames or 0) - 1, 0)
        fs = FrameSeries(budget)
        names: list[str] = []
        index: dict[str, int] = {}
        action_of = np.full(budget + 1, -1, dtype=np.int32)
        lives = np.zeros(budget + 1, dtype=np.int32)
        first_lives = (turns[0].lives + turns[0].lives_lost) if turns and not turns[0].reset else \
            (turns[0].lives if turns else 0)
        running = first_lives
        lives[:] = running
        for t in turns:
            pos = t.start_frame
            lives[max(0, pos):] = running
            if t.noop_frames:
                k = index.setdefault(LATENCY_NOOP, len(names))
                if k == len(names):
                    names.append(LATENCY_NOOP)
                action_of[pos + 1: pos + 1 + t.noop_frames] = k
                pos += t.noop_frames
            for i, name in enumerate(t.actions):
                end = t.action_frames[i] if i < len(t.action_frames) else pos
                k = index.setdefault(name, len(names))
                if k == len(names):
                    names.append(name)
                action_of[pos + 1: end + 1] = k
                lost = bool(t.action_life_lost[i]) if i < len(t.action_life_lost) else False
                reset = bool(t.action_reset[i]) if i < len(t.action_reset) else False
                reward = t.action_rewards[i] if i < len(t.action_rewards) else 0.0
                fs.add(end, reward, lost, reset)
                if lost:
                    running -= 1
                if reset and t.reset_frame is None:  # rule 1: a new game at once; the turn's end says its lives
                    running = t.lives + sum(1 for x in t.action_life_lost[i + 1:] if x)
                lives[max(0, end):] = running
                pos = end
            extra = t.reward - sum(t.action_rewards)
            if abs(extra) > 1e-9:  # reward during latency NOOP frames: counted at the turn's first frame
                fs.add(min(budget, t.start_frame + max(1, t.noop_frames)), extra)
            if t.game_over and not any(t.action_reset):
                fs.add(t.end_frame, reset=True)
            if t.reset_frame is not None and 0 <= t.reset_frame <= budget:
                k = index.setdefault(NEW_GAME, len(names))
                if k == len(names):
                    names.append(NEW_GAME)
                action_of[t.reset_frame] = k
                lives[max(0, t.end_frame):] = running
                lives[t.reset_frame:] = t.lives
            else:
                lives[max(0, t.end_frame):] = t.lives
            running = t.lives
        return cls(fs, list(turns), known, lives, action_of, names,
                   [t.start_frame for t in turns], [t.end_frame for t in turns])

    # -- lookups ---------------------------------------------------------------------
    budget = Forward[int]("frames")
    rewards = Forward[np.ndarray]("frames")
    losses = Forward[np.ndarray]("frames")
    resets = Forward[np.ndarray]("frames")
    score = Forward[np.ndarray]("frames")

    def turn_at(self, frame: int) -> int:
        """The turn on screen at ``frame``: the last one started at or before it (-1 if none)."""
        return bisect.bisect_right(self.starts, frame) - 1

    def turns_ended_by(self, frame: int) -> int:
        return bisect.bisect_right(self.ends, frame)

    def action_at(self, frame: int) -> str | None:
        """The action whose step produced ``frame`` (None for frame 0 or an unplayed frame)."""
        if not 0 <= frame <= self.budget:
            return None
        k = int(self.action_of_frame[frame])
        return self.action_names[k] if k >= 0 else None

    def actions_done(self, turn: int, frame: int) -> int:
        """How many of ``turn``'s actions had finished by ``frame``."""
        return sum(1 for f in self.turns[turn].action_frames if f <= frame) if 0 <= turn < len(self.turns) else 0

    # -- per turn --------------------------------------------------------------------
    def turn_tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """(input, output) tokens of each turn."""
        pairs = [t.tokens for t in self.turns]
        return (np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64))

    def turn_costs(self) -> np.ndarray:
        """Cost of each turn (NaN where a priced call's cost is unknown)."""
        return np.array([np.nan if (t.cost_usd is None and t.usage is not None) else (t.cost_usd or 0.0)
                         for t in self.turns], dtype=float)

    def turn_rewards(self) -> np.ndarray:
        return np.array([t.reward for t in self.turns], dtype=float)

    # -- figures ---------------------------------------------------------------------
    def stats_at(self, frame: int) -> FrameStats:
        """The figures at ``frame``: replies received by then count (tokens, cost, calls, invalid)."""
        f = max(0, min(frame, self.budget))
        done = self.turns[: self.turn_at(frame) + 1]
        n_in = sum(t.tokens[0] for t in done)
        n_out = sum(t.tokens[1] for t in done)
        priced = [t for t in done if t.usage is not None]
        cost = None if any(t.cost_usd is None for t in priced) else float(sum(t.cost_usd or 0.0 for t in priced))
        return FrameStats(
            frame=frame, budget=self.budget, score=float(self.score[f]), lives=int(self.lives[f]),
            lives_lost=int(self.losses[: f + 1].sum()), turn=self.turns_ended_by(frame), input_tokens=n_in,
            output_tokens=n_out, cost_usd=cost, calls=sum(t.calls for t in done),
            invalid_turns=sum(1 for t in done if not t.valid and not t.overridden),
        )

    def run_stats(self) -> RunStats:
        turns = self.turns
        n_in, n_out = self.turn_tokens()
        costs = self.turn_costs()
        n_actions = sum(len(t.actions) for t in turns)
        rewarded = np.flatnonzero(self.rewards)
        return RunStats(
            frames=max(0, self.known), budget=self.budget, turns=len(turns), score=float(self.rewards.sum()),
            lives_lost=int(self.losses.sum()), resets=int(sum(any(t.action_reset) for t in turns)),
            game_overs=sum(1 for t in turns if t.game_over),
            invalid_turns=sum(1 for t in turns if not t.valid and not t.overridden),
            error_turns=sum(1 for t in turns if t.error is not None),
            calls=sum(t.calls for t in turns), input_tokens=int(n_in.sum()), output_tokens=int(n_out.sum()),
            cost_usd=None if np.isnan(costs).any() else round(float(costs.sum()), 6),
            actions=n_actions, mean_actions=n_actions / len(turns) if turns else 0.0,
            mean_latency_s=float(np.mean([t.latency_s for t in turns])) if turns else 0.0,
            rewarded_turns=sum(1 for t in turns if t.reward != 0),
            first_reward_frame=int(rewarded[0]) if len(rewarded) else None,
        )


# -- text ------------------------------------------------------------------------------
def tokens_text(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def cost_text(cost: float | None) -> str:
    return "n/a" if cost is None else f"${cost:.4f}"


def state_text(s: Summary, damage: str | None = None) -> str:
    """complete | INCOMPLETE (why) | DAMAGED (what)."""
    if damage:
        return f"DAMAGED ({damage})"
    if s.complete:
        return "complete"
    return f"INCOMPLETE ({s.stopped or 'killed'})"


def summary_line(summary: Summary | dict[str, Any], damage: str | None = None) -> str:
    """The one-line account of a run the CLI prints after a run and in ``info``."""
    s = summary if isinstance(summary, Summary) else Summary.from_json(summary)
    cost = f" cost=${s.cost_usd:.4f}" if s.cost_usd else ""
    hand = f", changed by hand ({mark(s.interventions)})" if s.interventions else ""
    return (f"{s.game} seed={s.seed} agent={s.agent} score={s.total_reward:g} frames={s.frames} turns={s.turns} "
            f"lives_lost={s.lives_lost} invalid={s.invalid_turns}{cost} {state_text(s, damage)}{hand}")


def result_text(summary: Summary | dict[str, Any], budget: int) -> str:
    """A finished run's result in a few words (the live view's notice, play's result)."""
    s = summary if isinstance(summary, Summary) else Summary.from_json(summary)
    hand = f"; changed by hand ({mark(s.interventions)})" if s.interventions else ""
    return (f"score {s.total_reward:g} in {s.frames}/{budget} frames, {plural(s.turns, 'turn')}, "
            f"{plural(s.lives_lost, 'life', 'lives')} lost{hand}")
