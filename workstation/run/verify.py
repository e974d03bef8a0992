"""Re-execute a recording through the turn engine and check everything it claims.

The recorded actions of each turn are played again by the engine itself (so the
frame schedule, game-over cuts, resets and the budget are the engine's own, not
restated here), under the game-over rule the recording was made with. Checked
against the re-execution: every frame's pixels (through the frame index), its
RAM, the palette colours, each turn's start frame, actions, per-action rewards,
life losses and frames, game overs and reset frames, and the summary's totals.
The first mismatch names the file and the item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from workstation.engine.calls import Reply, TurnContext
from workstation.engine.promptpack import load_pack
from workstation.engine.turn_engine import Event, TurnEnded, TurnEngine
from workstation.game.clock import GAME_OVER_RULE
from workstation.game.games import FPS_PAPER, get_game
from workstation.game.protocol import Protocol
from workstation.run.frame_check import FrameCheck, Mismatch, TurnCheck, check_fields, same
from workstation.store.recording import Recording
from workstation.store.records import RecordingError, TurnRecord

G = TypeVar("G")

# per-turn fields re-execution must reproduce, and those only rule-2 recordings carry
_TURN_KEYS = ("start_frame", "actions", "action_frames", "action_rewards", "action_life_lost", "reward",
              "lives_lost")
_RULE2_KEYS = ("game_over", "reset_frame")
_SUMMARY_KEYS = ("total_reward", "frames", "turns", "lives_lost")


@dataclass
class VerifyResult:
    frames_checked: int
    first_mismatch: int | None = None
    detail: str = ""
    turns_checked: int = 0
    unchecked_frames: int = 0  # a killed run's frames after its last recorded turn

    @property
    def ok(self) -> bool:
        return self.first_mismatch is None and not self.detail


class _EndOfTurns(Exception):
    """The recorded turns are used up while the budget goes on."""


class _ScriptAgent:
    """Answers each turn with the actions the recording executed in it (and, on the
    latency clock, the thinking time that gives the same NOOP frames)."""

    spec = "verify"
    reads_prompt = False

    def __init__(self, turns: list[TurnRecord]) -> None:
        self._turns = {t.turn: t for t in turns}

    def act(self, prompt: Any, ctx: TurnContext, on_text: Any = None, **_: Any) -> Reply:
        t = self._turns.get(ctx.turn)
        if t is None:
            raise _EndOfTurns()
        planned = [*t.actions, *t.dropped]
        return Reply(text="move: [" + ", ".join(planned or ["noop"]) + "]", latency_s=t.noop_frames / FPS_PAPER)

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "verify", "spec": self.spec}


def _num(value: Any) -> float:
    return float(value or 0)


def replay_basis(rec: Recording, get: Callable[[str], G], lacks: str) -> tuple[G, Protocol, int]:
    """The game (through ``get``), protocol and seed a recording's manifest names to replay it; a
    RecordingError, ``lacks`` with ``{e}`` filled in, when it lacks one."""
    m = rec.manifest_record
    try:
        if m.game is None or m.seed is None:
            raise ValueError("no game" if m.game is None else "no seed")
        return get(m.game), Protocol.from_json(m.protocol), m.seed
    except (KeyError, ValueError, TypeError) as e:
        raise RecordingError(f"{rec.path}: " + lacks.format(e=e)) from e


def verify(rec: Recording) -> VerifyResult:
    game, protocol, seed = replay_basis(rec, get_game, "manifest lacks what verify needs ({e}); it cannot be "
                                        "re-executed")
    m = rec.manifest_record
    rules = m.rule_version  # recordings made before rule 2 carry no version
    if rules not in (1, 2):
        raise RecordingError(f"{rec.path}: made under game-over rule {rules!r}, which this version "
                             f"(rules 1..{GAME_OVER_RULE}) does not know; verify it with a newer workstation")
    frames = rec.frames
    n = len(frames)
    turns = rec.turn_records
    if n == 0:
        return VerifyResult(0, 0, f"{rec.path / 'frames.idx'}: the recording holds no frames; nothing to verify")
    if not turns and n > 1:
        return VerifyResult(0, 0, f"{rec.path / 'turns.jsonl'}: no turns, but {n} frames; the turns are missing")

    check = FrameCheck(frames)
    keys = _TURN_KEYS + (_RULE2_KEYS if rules >= 2 else ())
    replayed = TurnCheck(turns, check, lambda want, got, where: check_fields(want, got, keys, got.start_frame, where))
    ending = False

    def on_event(ev: Event) -> None:
        # a killed run: its last turn never got recorded
        if isinstance(ev, TurnEnded) and not (ending and ev.record.turn >= len(turns)):
            replayed.see(ev.record)

    engine = TurnEngine(game, protocol, _ScriptAgent(turns), seed, load_pack(None), writer=None,
                        observers=[on_event], rewindable=False, rules=rules, sink=check)
    trailing = 0
    try:
        try:
            engine.start()
            while not engine.done:
                if check.checked >= n and not engine.clock.done:  # the recording stops here: a stopped or killed run
                    ending = True
                    engine.stop("end of the recording")
                    break
                engine.step_frame()
        except Mismatch as e:
            return VerifyResult(check.checked, e.frame, e.detail, replayed.checked)
        except _EndOfTurns:
            checked = check.checked
            if rec.summary_record is not None:
                return VerifyResult(checked, checked, f"turns.jsonl ends after turn {len(turns) - 1}, but the "
                                                      f"budget goes on at frame {checked}", replayed.checked)
            trailing = n - checked  # killed mid-turn: those frames have no recorded actions
            one_turn = protocol.max_actions * protocol.repeat + 1  # a whole plan and a reset frame
            if protocol.clock == "paused" and trailing > one_turn:
                return VerifyResult(checked, checked, f"turns.jsonl ends after turn {len(turns) - 1} but "
                                                      f"{trailing} frames follow, more than one turn can make "
                                                      f"({one_turn}): turns are missing", replayed.checked)
    finally:
        engine.close()
    checked = check.checked
    if trailing:
        return VerifyResult(checked, turns_checked=replayed.checked, unchecked_frames=trailing)
    if checked < n:
        return VerifyResult(checked, checked, f"frames.idx holds {n} frames but the recorded actions reproduce "
                                              f"only {checked}")
    if replayed.checked < len(turns):
        return VerifyResult(checked, checked, f"turns.jsonl has {len(turns)} turns but re-execution plays only "
                                              f"{replayed.checked}")
    from workstation.engine.experience import read_updates, recording_problems

    problem = recording_problems(rec.manifest_record, read_updates(rec.path), len(turns))
    if problem:  # the library's updates, replayed from their recorded replies (no model)
        return VerifyResult(checked, checked, problem, replayed.checked)
    stored, s = rec.summary_record, engine.summary
    if stored is not None and s is not None:
        keys = _SUMMARY_KEYS + (("games_ended",) if rules >= 2 and stored.games_ended is not None else ())
        for key in keys:
            recorded, value = getattr(stored, key), getattr(s, key)
            if not same(_num(recorded), _num(value)):
                return VerifyResult(checked, checked, f"summary.json {key}: recorded {recorded!r}, "
                                                      f"re-execution gives {value!r}")
        if stored.complete and not s.complete and engine.stopped:
            return VerifyResult(checked, checked, "summary.json says complete, but the recorded turns end early")
    return VerifyResult(checked, turns_checked=replayed.checked)
