"""The two-player turn engine: both plans collected, then played in lockstep on the paused clock.

One turn: each side's prompt is built (its own clips, its own score and feedback),
both agents are asked at once (two threads), both replies are parsed, and the two
plans are played action by action, both players' actions in the same frames. A
shorter plan is padded with NOOP; the turn ends when both plans are spent. A game
over cuts the action in progress and drops the rest of both plans (as one-player
runs do); the new game's first frame is a budget frame of its own.

Each side keeps the one-player engine's account (``workstation.engine.accounting``): calls, usage, cost,
invalid and failed turns. Observers get typed events (``workstation.engine.turn_engine.Event`` subclasses): both
prompts built, both plans parsed, each lockstep action, each turn's record (a ``MatchTurn``), the end.
It stands beside the one-player engine and knows no match words: the caller hands it each side's prompt
builder (``workstation.run.match_start.side_builders``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from workstation.engine.accounting import Accounting, cost_cap_reason
from workstation.engine.agent import Agent
from workstation.engine.calls import CancelToken, FatalAgentError, Reply, TurnContext, Usage, call_agent
from workstation.engine.memory import Clip, Step
from workstation.engine.parser import ParseResult, parse_reply
from workstation.engine.prompt import Prompt
from workstation.engine.turn_engine import Event
from workstation.game.protocol import Protocol as GameProtocol
from workstation.game.twoplayer import SIDES, FrameSink, TwoPlayerClock, TwoPlayerGame
from workstation.store.recording import RecordingWriter
from workstation.store.records import MatchTurn, SideTurn

PAD = "noop"  # the name a padding NOOP is recorded under


@dataclass
class MatchPrompts(Event):
    """Both sides' prompts are built; both agents are about to be asked."""

    prompts: list[Prompt]


@dataclass
class MatchPlans(Event):
    """Both replies are in and parsed: each side's plan (action names)."""

    replies: list[Reply]
    plans: list[list[str]]


@dataclass
class MatchAction(Event):
    """One lockstep action of both sides was played."""

    index: int  # position in the longer plan
    frame: int
    actions: list[str]
    scores: list[float]


@dataclass
class MatchTurnEnded(Event):
    record: MatchTurn


@dataclass
class MatchEnded(Event):
    summary: dict[str, Any]


MatchObserver = Callable[[Event], Any]


class SideBuilder(Protocol):
    """What builds one side's prompt (``workstation.run.match_sides.SidePromptBuilder``): told the scores
    (its own first) before each build."""

    scores: tuple[float, float]

    def build(self, clips: list[Clip], frame: int) -> Prompt: ...
LiveSource = Callable[[int], str]  # real time: the action name a person holds at lockstep slot i


@dataclass
class Player:
    side: int
    agent: Agent
    builder: SideBuilder
    clips: list[Clip] = field(default_factory=list[Clip])
    account: Accounting = field(default_factory=Accounting)  # calls, usage, cost, invalid and failed turns
    live: LiveSource | None = None  # a person steering in real time: asked per action, not per turn


def ask(player: Player, prompt: Prompt, ctx: TurnContext, cancel: CancelToken) -> tuple[Reply, str | None]:
    """One side's reply (and why the match must stop, if it must)."""
    try:
        reply = call_agent(player.agent, prompt, ctx, None, cancel=cancel)
    except FatalAgentError as e:
        return (e.reply or Reply("", error=str(e))), str(e)
    return reply, (cancel.reason or "cancelled") if reply.cancelled else None


class MatchEngine:
    def __init__(self, tp: TwoPlayerGame, protocol: GameProtocol, agents: tuple[Agent, Agent], seed: int,
                 builders: tuple[SideBuilder, SideBuilder], writer: RecordingWriter | None = None,
                 observers: list[MatchObserver] | None = None, max_cost: float | None = None,
                 cancel: CancelToken | None = None, live: dict[int, LiveSource] | None = None,
                 max_failed_turns: int = 3, sink: FrameSink | None = None) -> None:
        if protocol.clock != "paused":
            raise ValueError("two-player matches run on the paused clock")
        self.tp, self.game, self.protocol, self.seed = tp, tp.game, protocol, seed
        self.writer = writer
        self.observers: list[MatchObserver] = list(observers or [])
        self.max_cost = max_cost
        self.max_failed_turns = max_failed_turns  # stop after this many turns in a row a side lost to errors
        self.cancel = cancel or CancelToken()
        self.clock = TwoPlayerClock(tp, protocol, seed, sink=sink or (writer.add_frame if writer else None))
        self.players = tuple(Player(side, agent, builder, live=(live or {}).get(side))
                             for side, agent, builder in zip(SIDES, agents, builders))
        self.turn = 0
        self.summary: dict[str, Any] | None = None
        self.stopped: str | None = None
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="match-call")
        self._t0 = time.perf_counter()
        self._started = False

    @property
    def done(self) -> bool:
        return self.summary is not None

    def start(self) -> None:
        if not self._started:
            self.clock.start()
            self._started = True

    def run(self) -> dict[str, Any]:
        self.start()
        try:
            while not self.done:
                if self.cancel.cancelled:
                    self.finish(self.cancel.reason or "cancelled")
                    break
                self.play_turn()
        except BaseException as e:
            detail = (str(e).splitlines() or [""])[0]
            why = "interrupted" if isinstance(e, KeyboardInterrupt) else f"{type(e).__name__}: {detail}".rstrip(": ")
            self.cancel.cancel(why)  # a call still in flight ends too
            if not self.done:
                self.finish(why)
            raise
        assert self.summary is not None
        return self.summary

    def _emit(self, ev: Event) -> None:
        for obs in self.observers:
            obs(ev)

    # -- one turn ----------------------------------------------------------
    def play_turn(self) -> None:
        self.start()
        if self.clock.done:
            self.finish()
            return
        start = self.clock.frame
        prompts = []
        for p in self.players:
            mine = self.clock.scores[p.side - 1]
            p.builder.scores = (mine, self.clock.scores[2 - p.side])
            prompts.append(p.builder.build(p.clips, start))
        self._emit(MatchPrompts(self.turn, prompts))
        ctx = TurnContext(self.game, self.turn, self.protocol.max_actions, start)
        futures = [None if p.live else self._pool.submit(ask, p, pr, ctx, self.cancel)
                   for p, pr in zip(self.players, prompts)]
        answers = [(Reply(""), None) if f is None else f.result() for f in futures]
        for p, (reply, _) in zip(self.players, answers):
            p.account.add_reply(reply)
        stop = next((why for _, why in answers if why), None)
        if stop is not None:
            self.finish(stop)
            return
        parses = [self._parse(reply) for reply, _ in answers]
        self._emit(MatchPlans(self.turn, [r for r, _ in answers], [p.names for p in parses]))
        replies = [r for r, _ in answers]
        self._play(start, prompts, replies, parses)

    def _parse(self, reply: Reply) -> ParseResult:
        parse = parse_reply(reply.text if reply.error is None else "", self.game, self.protocol.max_actions)
        if reply.error is not None:
            parse = replace(parse, errors=[f"no usable reply: {reply.error}"])
        return parse

    def _play(self, start: int, prompts: list[Prompt], replies: list[Reply], parses: list[ParseResult]) -> None:
        live = [p.live for p in self.players]
        plans: list[list[int]] = [[] if live[k] else list(parses[k].actions) for k in (0, 1)]
        steps: list[list[Step]] = [[], []]
        frames_after: list[int] = []
        padded = [0, 0]
        for i in range(max([len(plans[k]) for k in (0, 1) if not live[k]] or [1])):
            if self.clock.done:
                break
            for k, source in enumerate(live):
                if source is not None:  # the person's held keys at this slot
                    plans[k].append(self.game.vocabulary.get(source(i)) or 0)  # an unknown name: NOOP
            acts = [plan[i] if i < len(plan) else None for plan in plans]
            out = self.clock.act(acts[0], acts[1])
            for k in (0, 1):
                padded[k] += acts[k] is None
                name = PAD if acts[k] is None else self.game.action_name(plans[k][i])
                o = out.players[k]
                steps[k].append(Step(name, self.clock.frame, o.reward, o.life_lost, out.reset))
            frames_after.append(self.clock.frame)
            self._emit(MatchAction(self.turn, i, self.clock.frame, [s[-1].action for s in steps],
                                   list(self.clock.scores)))
        for k, source in enumerate(live):
            if source is not None:  # a real-time turn is recorded as the plan the person played
                names = [self.game.action_name(a) for a in plans[k]] or ["noop"]
                replies[k] = Reply(f"thought: human (real time)\nmove: [{', '.join(names)}]")
                parses[k] = self._parse(replies[k])
        self._record(start, prompts, replies, parses, steps, frames_after, padded)

    def _record(self, start: int, prompts: list[Prompt], replies: list[Reply], parses: list[ParseResult],
                steps: list[list[Step]], frames_after: list[int], padded: list[int]) -> None:
        end = self.clock.frame
        game_over = self.clock.game_over
        reset_frame = self.clock.frame if game_over and self.clock.new_game() else None
        sides: list[SideTurn] = []
        for k, p in enumerate(self.players):
            parse, reply, st = parses[k], replies[k], steps[k]
            clip = Clip(self.turn, start, st, reply.text)
            p.clips.append(clip)
            valid = parse.valid and reply.error is None
            p.account.end_turn(invalid=not valid, lost=reply.error is not None and not reply.cancelled)
            played = len(st) - padded[k]
            sides.append(SideTurn(
                side=p.side, raw=reply.text, thought=parse.thought, planned=parse.names,
                actions=[s.action for s in st], padded=padded[k], dropped=parse.names[played:],
                valid=valid, rule=parse.rule, errors=parse.errors,
                reward=clip.reward, action_rewards=[s.reward for s in st],
                action_life_lost=[s.life_lost for s in st],
                lives_lost=sum(s.life_lost for s in st), score=self.clock.scores[k],
                lives=self.clock.lives[k],
                prompt={"digest": prompts[k].digest(), "images": prompts[k].image_frames},
                usage=reply.usage.to_json() if reply.usage else None, latency_s=round(reply.latency_s, 4),
                cost_usd=reply.cost_usd, attempts=[a.to_json() for a in reply.attempts],
                error=reply.error,
            ))
        record = MatchTurn(
            # the fields a one-player reader knows (side 1's reward and score), so `ls`, `info` and
            # `verify --quick` read a match; "players" holds both sides
            turn=self.turn, start_frame=start, end_frame=end,
            reward=sides[0].reward, score=self.clock.scores[0], lives=self.clock.lives[0],
            lives_lost=sum(len([lost for lost in st if lost.life_lost]) for st in steps),
            game_over=game_over, reset_frame=reset_frame, lockstep_frames=frames_after,
            players=sides,
        )
        if self.writer is not None:
            self.writer.add_turn(record)
        self.turn += 1
        self._emit(MatchTurnEnded(record.turn, record))
        cost = sum(p.account.cost_usd for p in self.players)
        failing = next((p for p in self.players if p.account.failing(self.max_failed_turns)), None)
        if (capped := cost_cap_reason(cost, self.max_cost)) is not None:
            self.finish(capped)
        elif failing is not None:
            last = sides[failing.side - 1].error
            self.finish(f"side {failing.side}: {failing.account.failed_in_a_row} turns in a row lost to provider "
                        f"errors; last: {last}")
        elif self.clock.done:
            self.finish()

    # -- the end -----------------------------------------------------------
    def winner(self) -> int | None:
        s1, s2 = self.clock.scores
        if self.tp.team or s1 == s2:
            return None
        return 1 if s1 > s2 else 2

    def finish(self, stopped: str | None = None) -> None:
        if self.summary is not None:
            return
        self.stopped = stopped
        if stopped:
            self.clock.stop()
        accounts = [p.account for p in self.players]
        usage = sum((a.usage for a in accounts), Usage())
        priced = all(a.priced for a in accounts)
        players = [{"side": p.side, "agent": getattr(p.agent, "spec", "?"), "score": self.clock.scores[p.side - 1],
                    "lives_lost": self.clock.lives_lost[p.side - 1], "invalid_turns": p.account.invalid_turns,
                    "failed_turns": p.account.failed_turns,
                    "calls": p.account.calls, "usage": p.account.usage.to_json(),
                    "cost_usd": p.account.cost} for p in self.players]
        s1, s2 = self.clock.scores
        self.summary = {
            "kind": "match", "game": self.game.key, "seed": self.seed,
            "agent": f"{players[0]['agent']} vs {players[1]['agent']}",
            "players": players, "winner": self.winner(),
            "result": "team" if self.tp.team else ("draw" if s1 == s2 else f"side {self.winner()} wins"),
            **({"team_score": s1 + s2} if self.tp.team else {}),
            "total_reward": s1,  # side 1's score, for readers of one-player summaries
            "frames": self.clock.frame, "turns": self.turn, "lives_lost": sum(self.clock.lives_lost),
            "invalid_turns": sum(a.invalid_turns for a in accounts), "games_ended": self.clock.episode,
            "calls": sum(a.calls for a in accounts), "usage": usage.to_json(),
            "cost_usd": round(sum(a.cost_usd for a in accounts), 6) if priced else None,
            "wall_s": round(time.perf_counter() - self._t0, 3),
            "complete": stopped is None and self.clock.frame >= self.protocol.frames, "stopped": stopped,
        }
        if self.writer is not None and not self.writer.closed:
            if self.summary["complete"]:
                self.writer.finish(self.summary)
            else:
                self.writer.abort(self.summary)
        self._emit(MatchEnded(self.turn, self.summary))

    def stop(self, reason: str = "stopped by the user") -> None:
        self.cancel.cancel(reason)
        self.finish(reason)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.clock.close()
        for p in self.players:
            p.agent.close()
