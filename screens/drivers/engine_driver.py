"""Drive a TurnEngine from a worker thread; the UI talks to it only through a command queue.

The driver owns the engine while it runs: every engine call (stepping, step-mode
edits, rewind and branch) happens on the worker's thread. The UI puts commands
on a thread-safe queue with ``send`` and learns what happened from messages the
engine's observers post (``screens.messages``). No Textual import is needed
beyond those messages; the loop checks ``is_cancelled`` at least every 50 ms
and never blocks on the queue without a timeout.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from textual.message import Message

from screens import messages
from screens.widgets.frame_view import sent_image
from workstation.engine.calls import CancelToken
from workstation.engine.prompt import edit_problem
from workstation.engine.turn_engine import (
    ActionExecuted,
    Event,
    FrameStepped,
    Phase,
    PlanParsed,
    PromptReady,
    ReplyReceived,
    RunEnded,
    TextDelta,
    TurnEnded,
    TurnEngine,
)
from workstation.run.drive import drive
from workstation.run.start import branch_run
from workstation.store.records import RecordingError

SPEEDS = {"paper": 0.1, "fast": 0.02, "instant": 0.0}  # seconds per action (paper pace: 0.1 s)
SPEED_ORDER = ("paper", "fast", "instant")
_ACTING = (Phase.PLAN, Phase.ACTING)


def game_over_notice(record: dict[str, Any]) -> str:
    """One line for the turn that ended a game (the public harness's rule)."""
    cut = record.get("cut_frames")
    dropped = record.get("dropped") or []
    parts = [f"GAME OVER on frame {record.get('end_frame')} (turn {record.get('turn')})"]
    if cut:
        parts.append(f"the last action ran {cut} of its frames")
    if dropped:
        parts.append(f"{len(dropped)} planned action{'s' if len(dropped) != 1 else ''} dropped")
    reset = record.get("reset_frame")
    parts.append(f"new game from frame {reset}" if reset is not None else "the budget is used up")
    return "; ".join(parts)


class EngineDriver:
    """The worker-side loop: free run with pacing and pause, or step mode that holds at each stop."""

    def __init__(self, engine: TurnEngine, post: Callable[[Message], Any],
                 show_frame: Callable[[np.ndarray, int], Any], step_mode: bool = False, speed: str = "paper",
                 clock: Callable[[], float] = time.perf_counter,
                 next_command: Callable[[float], tuple[str, Any]] | None = None):
        """``clock`` and ``next_command`` (wait up to N s for a command, else ``queue.Empty``)
        are injectable so tests can check pacing without depending on wall-clock speed."""
        self.engine = engine
        self.commands: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._clock = clock
        self._next_command = next_command or (lambda timeout: self.commands.get(timeout=timeout))
        self.step_mode = step_mode
        self.paused = False
        self.speed = speed
        self.finished = False  # the run ended (a branch clears it)
        self.path: Path | None = engine.writer.path if engine.writer else None
        budget = engine.protocol.frames
        self.rewards = np.zeros(budget + 1)  # reward gained on each frame, for the timeline
        self.losses = np.zeros(budget + 1, dtype=bool)  # a life was lost on that frame
        self.resets = np.zeros(budget + 1, dtype=bool)  # a game ended on that frame
        self._post = post
        self._show_frame = show_frame
        self._finish_turn = False  # step mode: run on to the end of this turn
        self._held: tuple[Any, ...] | None = None
        self._branching = False
        engine.observers.append(self._observe)

    # -- UI side -----------------------------------------------------------
    def send(self, name: str, arg: Any = None) -> None:
        """Queue a command for the worker (thread-safe, never blocks). A stop also cancels the
        engine's call in flight at once (a backoff or a slow model), so it takes effect now."""
        if name == "stop":
            self.cancel_calls("stopped by the user")
        self.commands.put((name, arg))

    def cancel_calls(self, reason: str) -> None:
        """End any agent call in flight (thread-safe): the turn ends as cancelled, the run stops."""
        token = getattr(self.engine, "cancel", None)
        if token is not None and not self.engine.done:
            token.cancel(reason)

    # -- worker side -------------------------------------------------------
    def run(self, is_cancelled: Callable[[], bool]) -> None:
        """The worker's body: the one drive loop (``workstation.run.drive``) with a gate for
        commands, pause and step-mode holds, and pacing after each action; after the run ends
        it waits for commands (a rewind and branch drives on) until cancelled, then stops and
        closes the engine."""
        eng = self.engine
        reason = "the viewer was closed before the end of the run"
        token = CancelToken()
        t0 = 0.0

        def gate(engine: TurnEngine) -> bool:
            nonlocal t0
            if is_cancelled():
                token.cancel(reason)
                return False
            self._drain()
            if engine.done:
                return False
            if self.paused or self._holding():
                self._hold_notice()
                self._wait(0.1, is_cancelled, until_command=True)
                return False
            self._held = None
            if engine.phase is Phase.PROMPT:
                self._progress("asking")
            t0 = self._clock()
            return True

        def after_step(engine: TurnEngine, before: Phase) -> None:
            if engine.phase is Phase.READY:
                self._finish_turn = False
            self._progress()
            if before in _ACTING:
                self._wait(SPEEDS[self.speed] - (self._clock() - t0), is_cancelled)

        try:
            eng.start()
            self._show_frame(eng.clock.rgb, eng.clock.frame)
            self._progress()
            while not is_cancelled():
                if not eng.done:
                    drive(eng, cancel=token, gate=gate, after_step=after_step)
                    continue
                self._drain()  # finished: a branch command makes it playable again
                self._hold_notice()
                self._wait(0.1, is_cancelled, until_command=True)
        except Exception as e:
            reason = f"{type(e).__name__}: {e}"  # the recording says why it ends here
            raise
        finally:
            try:
                if not eng.done:
                    eng.stop(reason)
            finally:
                eng.close()

    def _holding(self) -> bool:
        if not self.step_mode:
            return False
        phase = self.engine.phase
        if phase is Phase.PROMPT:
            return True
        return phase in _ACTING and not self._finish_turn

    def _hold_notice(self) -> None:
        eng = self.engine
        if not self.step_mode or eng.done:
            return
        done = len(eng.pending.steps) if eng.pending else 0
        key = (eng.turn, eng.phase, done, eng.clock.frame)
        if key != self._held:
            self._held = key
            self._post(messages.EngineWaiting(eng.turn, eng.phase.value, done))

    def _wait(self, seconds: float, is_cancelled: Callable[[], bool], until_command: bool = False) -> None:
        """Wait up to ``seconds``, carrying out commands as they come (50 ms slices)."""
        end = self._clock() + seconds
        while not is_cancelled():
            left = end - self._clock()
            if left <= 0:
                return
            try:
                name, arg = self._next_command(min(left, 0.05))
            except queue.Empty:
                continue
            self._do(name, arg)
            if until_command:
                return

    def _drain(self) -> None:
        while True:
            try:
                name, arg = self.commands.get_nowait()
            except queue.Empty:
                return
            self._do(name, arg)

    def _do(self, name: str, arg: Any) -> None:
        """Carry out one command; a refusal becomes a notice, never an exception."""
        eng = self.engine
        try:
            if name == "pause":
                self.paused = (not self.paused) if arg is None else bool(arg)
            elif name == "speed":
                self.speed = arg
            elif name == "step_mode":
                self.step_mode, self._finish_turn, self._held = bool(arg), False, None
            elif name == "edit":
                self._need(Phase.PROMPT, "edit the prompt")
                prompt = eng.pending.prompt if eng.pending is not None else None
                if prompt is None:
                    raise ValueError("no prompt to edit: the run is not holding before one")
                why = edit_problem(arg, prompt)
                if why is not None:
                    raise ValueError(why)
                eng.set_prompt(prompt.with_text(arg))
            elif name == "current_only":
                eng.use_current_frame_only()
            elif name == "send":
                self._need(Phase.PROMPT, "send the prompt")
                self._progress("asking")
                eng.step()
                self._progress()
            elif name == "resend":
                eng.resend()
                self._progress("asking")
                eng.step()
                self._progress()
            elif name == "override":
                eng.override_plan(list(arg))
            elif name in ("action", "frame"):
                if eng.phase not in _ACTING:
                    raise RuntimeError(f"no plan to execute yet (phase: {eng.phase.value}); send the prompt first")
                eng.step() if name == "action" else eng.step_frame()
                if eng.phase is Phase.READY:
                    self._finish_turn = False
                self._progress()
            elif name == "turn":
                if eng.phase is Phase.PROMPT:
                    raise RuntimeError("the prompt is not sent yet: send it first, then finish the turn")
                self._finish_turn = True
            elif name == "branch":
                self._branch(int(arg))
            elif name == "stop":
                eng.stop("stopped by the user")
            else:
                raise RuntimeError(f"unknown command {name!r}")
        except (ValueError, RuntimeError, RecordingError) as e:
            self._post(messages.EngineNotice(str(e)))
        self._held = None  # whatever the command did, the next hold is announced

    def _need(self, phase: Phase, what: str) -> None:
        if self.engine.phase is not phase:
            raise RuntimeError(f"cannot {what} now (phase: {self.engine.phase.value})")

    def _branch(self, turn: int) -> None:
        eng = self.engine
        self._branching = True  # the parent's end is not news: the branch message says it all
        try:
            path = branch_run(eng, turn)
        finally:
            self._branching = False
        frame = eng.clock.frame
        self.rewards[frame + 1:] = 0
        self.losses[frame + 1:] = False
        self.resets[frame + 1:] = False
        self.path, self.finished, self._finish_turn, self._held = path, False, False, None
        self._post(messages.EngineBranched(turn, frame, path))
        self._show_frame(eng.clock.rgb, frame)
        self._progress()

    # -- observers (engine thread) --------------------------------------------
    def stats(self, phase: str | None = None) -> messages.BarStats:
        eng = self.engine
        usage, totals = eng.totals.usage, eng.totals
        return messages.BarStats(
            frame=eng.clock.frame, budget=eng.protocol.frames, score=eng.clock.score, lives=eng.clock.lives,
            lives_lost=eng.clock.lives_lost, turn=eng.turn, input_tokens=usage.total_input,
            output_tokens=usage.output_tokens, cost_usd=totals.cost_usd if totals.priced else None,
            calls=totals.calls, invalid_turns=totals.invalid_turns, phase=phase or eng.phase.value,
        )

    def _progress(self, phase: str | None = None) -> None:
        self._post(messages.EngineProgress(self.stats(phase)))

    def _observe(self, ev: Event) -> None:
        eng = self.engine
        if isinstance(ev, FrameStepped):
            if 0 <= ev.frame < len(self.rewards):
                self.rewards[ev.frame] += ev.reward
                self.losses[ev.frame] |= ev.life_lost
            self._show_frame(eng.clock.rgb, ev.frame)
            self._progress()
        elif isinstance(ev, PromptReady):
            variant = eng.pending.prompt_variant if eng.pending else "standard"
            self._post(messages.EnginePrompt(ev.turn, ev.prompt, variant, self._images(ev)))
        elif isinstance(ev, TextDelta):
            self._post(messages.EngineText(ev.turn, ev.text))
        elif isinstance(ev, ReplyReceived):
            self._post(messages.EngineReply(ev.turn, ev.reply))
        elif isinstance(ev, PlanParsed):
            by_hand = bool(eng.pending is not None and eng.pending.human_plan)
            self._post(messages.EnginePlan(ev.turn, ev.parse, list(ev.plan), ev.overridden, by_hand))
        elif isinstance(ev, ActionExecuted):
            self._post(messages.EngineAction(ev.turn, ev.index, ev.step))
        elif isinstance(ev, TurnEnded):
            record = ev.record.to_json()
            self._post(messages.EngineTurn(ev.turn, record))
            if ev.record.game_over:
                end = ev.record.end_frame
                if 0 <= end < len(self.resets):
                    self.resets[end] = True
                self._post(messages.EngineNotice(game_over_notice(record)))
        elif isinstance(ev, RunEnded) and not self._branching:
            self.finished = True
            if eng.writer is not None:  # a run changed by hand is renamed for its own run id as it closes
                self.path = eng.writer.path
            self._post(messages.EngineFinished(ev.turn, ev.summary.to_json(), self.path))

    def _images(self, ev: PromptReady) -> list[Any]:
        """Each image part with its pixels, read here on the engine's thread: the PNG the model is sent, decoded,
        so a preview is exactly the image the model got."""
        frames = self.engine.writer.frames if self.engine.writer else None
        cache: dict[int, np.ndarray | None] = {}
        out = []
        for part in ev.prompt.images:
            if part.frame not in cache:
                try:
                    cache[part.frame] = sent_image(frames.png(part.frame)) if frames is not None else None
                except Exception:  # a missing frame only costs its preview
                    cache[part.frame] = None
            out.append((part, cache[part.frame]))
        return out
