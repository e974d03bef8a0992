"""The turn engine: one AtariBench turn as steppable phases.

    READY -> (build prompt) -> PROMPT -> (ask agent) -> REPLY -> (parse) -> PLAN
          -> (execute actions, frame by frame) -> READY ... -> FINISHED

``step()`` advances exactly one phase (or one whole action while acting), so a
screen can stop anywhere: read or edit the prompt, re-send it, override the
plan, advance frame by frame, rewind to an earlier turn and branch. A batch or
the CLI drives it to the end with ``workstation.run.drive.drive(engine)``. The engine has no threads and no asyncio: callers
drive it (the TUI from a thread worker). Observers get events.

Game over (the public harness's rule, see ``workstation.game.clock``): the frame
on which a game ends cuts the action in progress and ends the turn; the rest of
the plan is dropped and recorded as such. The new game's first frame takes a
budget frame of its own and the next turn starts there, with a fresh prompt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from workstation.engine.accounting import Accounting, cost_cap_reason
from workstation.engine.agent import Agent
from workstation.engine.calls import CancelToken, FatalAgentError, Reply, TurnContext, call_agent
from workstation.engine.memory import Clip, Step
from workstation.engine.parser import ParseResult, parse_reply
from workstation.engine.prompt import Prompt
from workstation.engine.prompt_builder import PromptBuilder
from workstation.engine.promptpack import PromptPack
from workstation.game.clock import GAME_OVER_RULE, ClockState, FrameSink, GameClock
from workstation.game.games import FPS_PAPER, Game
from workstation.game.protocol import Protocol
from workstation.store import changes as hand_changes
from workstation.store.recording import RecordingWriter
from workstation.store.records import Summary, TurnRecord


class Phase(str, Enum):
    READY = "ready"  # between turns; next step builds the prompt
    PROMPT = "prompt"  # prompt built, not sent
    REPLY = "reply"  # reply received, not parsed
    PLAN = "plan"  # plan parsed; no action executed yet
    ACTING = "acting"  # part of the plan executed
    FINISHED = "finished"


# -- events ----------------------------------------------------------------
@dataclass
class Event:
    turn: int


@dataclass
class PromptReady(Event):
    prompt: Prompt


@dataclass
class TextDelta(Event):
    text: str


@dataclass
class ReplyReceived(Event):
    reply: Reply


@dataclass
class PlanParsed(Event):
    parse: ParseResult
    plan: list[str]
    overridden: bool


@dataclass
class FrameStepped(Event):
    frame: int
    action: str
    reward: float
    life_lost: bool


@dataclass
class ActionExecuted(Event):
    index: int  # position in the plan
    step: Step


@dataclass
class TurnEnded(Event):
    record: TurnRecord


@dataclass
class RunEnded(Event):
    summary: Summary


Observer = Callable[[Event], Any]


@dataclass
class _Snapshot:
    clock: ClockState
    n_clips: int
    agent_state: Any
    totals: Accounting


@dataclass
class _Pending:
    """The turn in progress."""

    start_frame: int
    prompt: Prompt | None = None
    prompt_variant: str = "standard"
    reply: Reply | None = None
    parse: ParseResult | None = None
    plan: list[int] = field(default_factory=list)
    plan_names: list[str] = field(default_factory=list)
    overridden: bool = False
    by_hand: bool = True  # an override is a person's (an importer's replay of recorded actions is not)
    human_plan: bool = False  # a person typed the plan instead of asking the agent
    asked_current_only: bool = False  # the current-frame-only prompt was swapped in (then maybe edited)
    discarded: list[dict[str, Any]] = field(default_factory=list)
    noop_frames: int = 0
    noop_left: int = 0
    steps: list[Step] = field(default_factory=list)
    action_frames_done: int = 0
    cur_reward: float = 0.0
    cur_lost: bool = False
    cur_reset: bool = False
    extra_reward: float = 0.0  # reward during latency NOOP frames
    extra_lost: int = 0
    lives_dropped: int = 0  # lives lost in the turn's action frames, each drop counted by its size

    @property
    def built_prompt(self) -> Prompt:
        """The prompt of this turn (built when the turn began)."""
        if self.prompt is None:
            raise RuntimeError("this turn has no prompt yet")
        return self.prompt

    @property
    def received_reply(self) -> Reply:
        """The reply being parsed (there is one from REPLY on)."""
        if self.reply is None:
            raise RuntimeError("this turn has no reply yet")
        return self.reply

    @property
    def noops_done(self) -> int:
        """Latency NOOP frames run so far (fewer than planned when the budget ran out)."""
        return self.noop_frames - self.noop_left


class TurnEngine:
    def __init__(self, game: Game, protocol: Protocol, agent: Agent, seed: int, pack: PromptPack,
                 writer: RecordingWriter | None = None, observers: list[Observer] | None = None,
                 max_cost: float | None = None, rewindable: bool = True, rules: int = GAME_OVER_RULE,
                 cancel: CancelToken | None = None, max_failed_turns: int = 3, skill: str | None = None,
                 replay_note: str | None = None, experience: Any = None, sink: FrameSink | None = None) -> None:
        """``sink`` takes each frame instead of the writer (``verify`` checks them as they are made)."""
        game = pack.game(game)  # the pack's words, offered actions and warm-up
        self.game = game
        self.protocol = protocol
        self.agent = agent
        self.seed = seed
        self.pack = pack
        self.writer = writer
        self.observers: list[Observer] = list(observers or [])
        self.max_cost = max_cost
        self.cancel = cancel or CancelToken()  # cancel(reason) from any thread ends the call under way
        self.max_failed_turns = max_failed_turns  # stop after this many turns in a row lost to errors (0: never)
        self.replay_note = replay_note  # a replay on another start than its source's: said once, in the manifest too
        self._stopped_call: dict[str, Any] | None = None  # the call a cancel or a fatal failure ended (summary)
        self.rewindable = rewindable  # keep a snapshot per turn (about 110 KB each) for rewind
        self.clock = GameClock(game, protocol, seed, sink=sink or (writer.add_frame if writer else None), rules=rules)
        self.builder = PromptBuilder(game, protocol, pack, writer.frames if writer else None, skill=skill)
        self.clips: list[Clip] = []
        self.phase = Phase.READY
        self.turn = 0
        self.pending: _Pending | None = None
        self.summary: Summary | None = None
        self.stopped: str | None = None
        self.totals = Accounting()  # calls, usage, cost, invalid and failed turns (workstation.engine.accounting)
        self._snapshots: dict[int, _Snapshot] = {}
        self.changes: list[dict[str, Any]] = list(writer.changes) if writer is not None else []  # made by hand
        self._t_start = time.perf_counter()
        self._started = False
        self.experience = experience  # an experience library (workstation.engine.experience.ExperienceRun)

    # -- driving ---------------------------------------------------------
    def start(self) -> None:
        if not self._started:
            self.clock.start()
            self._started = True

    @property
    def done(self) -> bool:
        return self.phase is Phase.FINISHED

    @property
    def recording_path(self) -> Path:
        """The folder this engine records into (a run changed by hand is renamed for its own id as it ends)."""
        if self.writer is None:
            raise RuntimeError("this engine records nothing")
        return self.writer.path

    def run_turn(self) -> None:
        """Advance until the current turn has ended (or the run finished)."""
        self.start()
        first = self.turn
        while self.phase is not Phase.FINISHED and (self.turn == first or self.phase is not Phase.READY):
            self.step()

    def step(self) -> Event | None:
        """Advance one phase (a whole action while acting)."""
        self.start()
        if self.phase is Phase.READY:
            return self._prepare()
        if self.phase is Phase.PROMPT:
            return self._ask()
        if self.phase is Phase.REPLY:
            return self._parse()
        if self.phase in (Phase.PLAN, Phase.ACTING):
            return self._act_one()
        return None

    def step_frame(self) -> Event | None:
        """Advance one emulator frame (stops inside an action); earlier phases step as usual."""
        self.start()
        if self.phase not in (Phase.PLAN, Phase.ACTING):
            return self.step()
        return self._frame()

    @property
    def _turn_now(self) -> _Pending:
        """The turn in progress (there is one from READY's prompt until the turn's record is written)."""
        if self.pending is None:
            raise RuntimeError(f"no turn in progress (now: {self.phase.value})")
        return self.pending

    # -- step-mode controls ----------------------------------------------
    def set_prompt(self, prompt: Prompt) -> None:
        """Replace the prompt about to be sent (edited in step mode)."""
        self._require(Phase.PROMPT, "edit the prompt")
        p = self._turn_now
        p.prompt = prompt
        p.prompt_variant = "edited"
        self._emit(PromptReady(self.turn, prompt))

    def use_current_frame_only(self) -> None:
        """Swap in the current-frame-only prompt (the paper's temporal misgrounding probe)."""
        self._require(Phase.PROMPT, "switch to the current-frame-only prompt")
        p = self._turn_now
        p.prompt = self.builder.current_only(p.start_frame)
        p.prompt_variant = "current_only"
        p.asked_current_only = True
        self._emit(PromptReady(self.turn, p.prompt))

    def resend(self) -> None:
        """Discard the reply and go back to the prompt, to send it again."""
        if self.phase not in (Phase.REPLY, Phase.PLAN):
            raise RuntimeError(f"can only re-send after a reply and before acting (now: {self.phase.value})")
        p = self._turn_now
        if p.reply is not None:
            p.discarded.append({"raw": p.reply.text, "error": p.reply.error, "latency_s": round(p.reply.latency_s, 3),
                                "cost_usd": p.reply.cost_usd})
        p.reply, p.parse, p.plan, p.plan_names, p.overridden = None, None, [], [], False
        self.phase = Phase.PROMPT
        self._emit(PromptReady(self.turn, p.built_prompt))

    def override_plan(self, names: list[str], by_hand: bool = True) -> ParseResult:
        """Replace the parsed plan with these action names (before any of it runs).

        Before the prompt is sent, the plan stands in for the agent's reply: the
        agent is not asked (a person's plan in a model's turn). ``by_hand=False``
        (an importer replaying what a recorded run did) does not mark the run as
        changed by hand.
        """
        if self.phase is Phase.REPLY:
            self._parse()
        if self.phase is not Phase.PROMPT:
            self._require(Phase.PLAN, "override the plan")
        result = parse_reply("move: [" + ", ".join(names) + "]", self.game, self.protocol.max_actions)
        if not result.valid:
            raise ValueError("; ".join(result.errors))
        p = self._turn_now
        if self.phase is Phase.PROMPT:
            p.human_plan, p.parse = True, result
            self.phase = Phase.PLAN
        p.plan, p.plan_names, p.overridden, p.by_hand = list(result.actions), list(result.names), True, by_hand
        self._emit(PlanParsed(self.turn, p.parse or result, p.plan_names, True))
        return result

    # -- rewind and branch -----------------------------------------------
    @property
    def turns_available(self) -> list[int]:
        """Turns whose start can be rewound to."""
        return sorted(self._snapshots)

    def rewind_frame(self, turn: int) -> int:
        """The budget frame turn ``turn`` started on (a rewind point); ValueError if there is none."""
        snap = self._snapshots.get(turn)
        if snap is None:
            raise ValueError(f"cannot rewind to turn {turn}: {self._rewind_points()}")
        return snap.clock.frame

    def rewind(self, turn: int, writer: RecordingWriter | None) -> None:
        """Go back to the start of ``turn``; later frames go to ``writer`` (the branch)."""
        if turn not in self._snapshots:
            raise ValueError(f"cannot rewind to turn {turn}: {self._rewind_points()}")
        snap = self._snapshots[turn]
        self.clock.restore(snap.clock)
        self.clips = self.clips[: snap.n_clips]
        if snap.agent_state is not None and hasattr(self.agent, "restore"):
            self.agent.restore(snap.agent_state)
        self.totals = snap.totals.copy()
        self._snapshots = {t: s for t, s in self._snapshots.items() if t <= turn}
        self.writer = writer
        self.changes = list(writer.changes) if writer is not None else list(self.changes)
        self.clock.sink = writer.add_frame if writer else None
        self.builder.frames = writer.frames if writer else None
        self.turn, self.pending, self.phase, self.summary, self.stopped = turn, None, Phase.READY, None, None
        self._stopped_call = None
        if self.cancel.cancelled:  # a cancel ended the run left behind, not the branch
            self.cancel = CancelToken()

    def _rewind_points(self) -> str:
        if not self._snapshots:
            return "this engine keeps no rewind points (headless runs keep none)"
        return f"the rewind points are turns 0..{max(self._snapshots)}"

    # -- phases ----------------------------------------------------------
    def _prepare(self) -> Event | None:
        if self.clock.done:
            return self._finish()
        if self.rewindable:
            self._snapshots[self.turn] = _Snapshot(
                self.clock.snapshot(), len(self.clips),
                self.agent.snapshot() if hasattr(self.agent, "snapshot") else None,
                self.totals.copy(),
            )
        frame = self.clock.frame
        pending = _Pending(start_frame=frame)
        pending.prompt = self.builder.build(self.clips, frame)
        self.pending = pending
        self.phase = Phase.PROMPT
        return self._emit(PromptReady(self.turn, pending.prompt))

    def _ask(self) -> Event | None:
        p = self._turn_now
        ctx = TurnContext(self.game, self.turn, self.protocol.max_actions, self.clock.frame)

        def on_text(delta: str) -> None:
            self._emit(TextDelta(self.turn, delta))

        stop = None
        try:
            reply = call_agent(self.agent, p.built_prompt, ctx, on_text if self.observers else None,
                               cancel=self.cancel)
            if reply.cancelled:
                stop = self.cancel.reason or "cancelled"
        except FatalAgentError as e:
            if e.reply is None:
                return self._finish(stopped=str(e))
            reply, stop = e.reply, str(e)
        p.reply = reply
        self.totals.add_reply(reply)  # every request sent counts; built-in agents make none
        if stop is not None:  # the call's account goes in the summary; the turn played no frame
            self._emit(ReplyReceived(self.turn, reply))
            self._stopped_call = {"turn": self.turn, "error": reply.error, "cancelled": reply.cancelled,
                                  "attempts": [a.to_json() for a in reply.attempts],
                                  "usage": reply.usage.to_json() if reply.usage else None, "cost_usd": reply.cost_usd}
            return self._finish(stopped=stop)
        self.phase = Phase.REPLY
        return self._emit(ReplyReceived(self.turn, reply))

    def _parse(self) -> Event | None:
        p = self._turn_now
        reply = p.received_reply
        error = reply.error
        p.parse = parse_reply(reply.text if error is None else "", self.game, self.protocol.max_actions)
        if error is not None:  # the agent's own one-line account replaces the parser's "empty reply"
            p.parse = replace(p.parse, errors=[error if error.startswith("no usable reply")
                                               else f"no usable reply: {error}"])
        p.plan, p.plan_names = list(p.parse.actions), list(p.parse.names)
        if self.protocol.clock == "latency":
            p.noop_frames = p.noop_left = round(reply.latency_s * FPS_PAPER)
        self.phase = Phase.PLAN
        return self._emit(PlanParsed(self.turn, p.parse, p.plan_names, False))

    def _frame(self) -> Event | None:
        """Execute one emulator frame of the plan (latency NOOPs first)."""
        p = self._turn_now
        self.phase = Phase.ACTING
        if self.clock.done:
            return self._end_turn()
        if p.noop_left > 0:
            r, lost, _ = self.clock.step_frame(0)
            p.noop_left -= 1
            p.extra_reward += r
            p.extra_lost += self.clock.last_drop
            return self._emit(FrameStepped(self.turn, self.clock.frame, "noop", r, lost)) if self.observers else None
        i = len(p.steps)
        action = p.plan[i]
        r, lost, reset = self.clock.step_frame(action)
        p.lives_dropped += self.clock.last_drop
        p.cur_reward += r
        p.cur_lost |= lost
        p.cur_reset |= reset
        p.action_frames_done += 1
        ev = (self._emit(FrameStepped(self.turn, self.clock.frame, self.game.action_name(action), r, lost))
              if self.observers else None)
        if p.action_frames_done >= self.protocol.repeat or self.clock.done:
            ev = self._close_action()
            if len(p.steps) >= len(p.plan) or self.clock.done:
                return self._end_turn()
        return ev

    def _close_action(self) -> Event:
        """Record the action in progress as a step (whole, or cut by the budget or a stop)."""
        p = self._turn_now
        i = len(p.steps)
        step = Step(self.game.action_name(p.plan[i]), self.clock.frame, p.cur_reward, p.cur_lost, p.cur_reset)
        p.steps.append(step)
        p.action_frames_done, p.cur_reward, p.cur_lost, p.cur_reset = 0, 0.0, False, False
        return self._emit(ActionExecuted(self.turn, i, step))

    def _act_one(self) -> Event | None:
        p = self._turn_now
        n = len(p.steps)
        ev = None
        while self.phase in (Phase.PLAN, Phase.ACTING) and len(p.steps) == n:
            ev = self._frame()
        return ev

    def _end_turn(self) -> Event | None:
        ev = self._record_turn()
        if self.experience is not None:  # every K turns: one extra request, the library's edits
            self.experience.maybe_reflect(self)
        if (capped := cost_cap_reason(self.totals.cost_usd, self.max_cost)) is not None:
            self._finish(stopped=capped)
        elif self.totals.failing(self.max_failed_turns):
            self._finish(stopped=f"{self.totals.failed_in_a_row} turns in a row lost to provider errors "
                                 f"(--max-failed-turns {self.max_failed_turns}); last: {ev.record.error}")
        elif self.clock.done:
            self._finish()
        return ev

    def _record_turn(self) -> TurnEnded:
        """Write the pending turn's record and its clip; the engine is READY for the next turn.

        A turn that ended a game records the cut action's frame count, the dropped
        rest of the plan and the new game's first frame (a budget frame of its own,
        made here, unless the budget is used up).
        """
        p = self._turn_now
        end_frame = self.clock.frame
        game_over = self.clock.game_over
        cut_frames, reset_frame = None, None
        if p.steps:  # the last action ran fewer frames than the protocol's repeat: cut
            before = p.steps[-2].frame if len(p.steps) > 1 else p.start_frame + p.noops_done
            if p.steps[-1].frame - before < self.protocol.repeat:
                cut_frames = p.steps[-1].frame - before
        dropped = p.plan_names[len(p.steps):]  # planned but never started (game over, budget, stop)
        if game_over and self.clock.new_game():
            reset_frame = self.clock.frame
            if self.observers:  # the new game's first frame, for anyone showing frames
                self._emit(FrameStepped(self.turn, reset_frame, "reset", 0.0, False))
        clip = Clip(self.turn, p.start_frame, p.steps, p.reply.text if p.reply else "", p.noops_done)
        self.clips.append(clip)
        parse = p.parse
        valid = bool(parse and parse.valid and (p.reply is None or p.reply.error is None))
        reply = p.reply or Reply("")
        lost = reply.error is not None and not reply.cancelled and not p.overridden  # lost to a provider error
        self.totals.end_turn(invalid=not valid and not p.overridden, lost=lost)
        record = TurnRecord(
            turn=self.turn,
            start_frame=p.start_frame,
            end_frame=end_frame,
            raw=reply.text,
            thought=parse.thought if parse else "",
            planned=parse.names if parse else [],
            actions=[s.action for s in p.steps],
            valid=valid,
            rule=parse.rule if parse else None,
            errors=parse.errors if parse else [],
            overridden=p.overridden,
            reward=clip.reward + p.extra_reward,
            action_rewards=[s.reward for s in p.steps],
            action_life_lost=[s.life_lost for s in p.steps],
            action_reset=[s.reset for s in p.steps],
            action_frames=[s.frame for s in p.steps],
            lives_lost=p.lives_dropped + p.extra_lost,
            noop_frames=p.noops_done,
            score=self.clock.score,
            lives=self.clock.lives,
            prompt=self._prompt_ref(p),
            usage=reply.usage.to_json() if reply.usage else None,
            latency_s=round(reply.latency_s, 4),
            cost_usd=reply.cost_usd,
            attempts=[a.to_json() for a in reply.attempts],
            error=reply.error,
            finish_reason=reply.finish_reason,
            game_over=game_over,
            cut_frames=cut_frames,
            dropped=dropped,
            reset_frame=reset_frame,
            discarded_replies=p.discarded,
            human_plan=True if p.human_plan else None,
            # the current-frame-only prompt, then edited: both changes count
            current_only=True if p.asked_current_only and p.prompt_variant != "current_only" else None,
            override_source="import" if p.overridden and not p.by_hand else None,
        )
        made = hand_changes.of_turn(record) if (p.by_hand or not p.overridden) else []
        if self.writer is not None:
            self.writer.add_turn(record)
            self.writer.add_changes(made)
        self.changes.extend(made)
        self.turn += 1
        self.pending = None
        self.phase = Phase.READY
        ended = TurnEnded(record.turn, record)
        self._emit(ended)
        return ended

    def _prompt_ref(self, p: _Pending) -> dict[str, Any]:
        prompt = p.built_prompt
        ref: dict[str, Any] = {"digest": prompt.digest(), "variant": p.prompt_variant, "images": prompt.image_frames}
        if p.prompt_variant != "standard":
            ref["messages"] = prompt.to_json()
        return ref

    def _finish(self, stopped: str | None = None) -> RunEnded:
        self.stopped = stopped
        if stopped:
            self.clock.stop()
        t = self.totals
        summary = Summary(
            complete=stopped is None and self.clock.frame >= self.protocol.frames,
            game=self.game.key, seed=self.seed, agent=getattr(self.agent, "spec", "?"),
            total_reward=self.clock.score, frames=self.clock.frame, turns=self.turn,
            lives_lost=self.clock.lives_lost, invalid_turns=t.invalid_turns, failed_turns=t.failed_turns,
            games_ended=self.clock.episode, calls=t.calls, usage=t.usage.to_json(), cost_usd=t.cost,
            wall_s=round(time.perf_counter() - self._t_start, 3), stopped=stopped,
            stopped_call=self._stopped_call,
            # one count per kind of change made by hand (workstation.store.changes)
            interventions=hand_changes.counts(self.changes) if self.changes else None,
            changed_by_hand=True if self.changes else None,
            overridden_turns=len({c.get("turn") for c in self.changes if c.get("kind") in ("override", "human_plan")})
            if self.changes else None,
        )
        self.summary = summary
        ended = RunEnded(self.turn, summary)
        try:
            if self.writer is not None:
                if summary.complete:
                    self.writer.finish(summary)
                else:
                    self.writer.abort(summary)
        finally:  # a summary the disk refused still ends the run (the error goes on to the caller)
            self.phase = Phase.FINISHED
            self._emit(ended)
        return ended

    def stop(self, reason: str = "stopped by the user") -> None:
        """End the run now; the recording is kept and marked incomplete.

        A turn stopped while acting is recorded with what it executed (its last
        action possibly cut short), so every recorded frame belongs to a turn and
        the recording still verifies.
        """
        if self.phase is Phase.FINISHED:
            return
        p = self.pending
        try:
            if self.phase is Phase.ACTING and p is not None:
                done_to = p.steps[-1].frame if p.steps else p.start_frame + p.noops_done
                if self.clock.frame > done_to and len(p.steps) < len(p.plan):
                    self._close_action()
                self._record_turn()
        finally:  # even when the turn cannot be written (a full disk), the run is closed as stopped
            self._finish(stopped=reason)

    def close(self) -> None:
        self.clock.close()
        self.agent.close()

    # -- helpers ---------------------------------------------------------
    def _require(self, phase: Phase, what: str) -> None:
        if self.phase is not phase:
            raise RuntimeError(f"cannot {what} now (phase: {self.phase.value})")

    def _emit(self, ev: Event) -> Event:
        for obs in self.observers:
            obs(ev)
        return ev
