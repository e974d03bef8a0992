"""Verify a match: re-execute it through the match engine and check every frame and both players.

Each side's agent is replaced by a script that answers each turn with the plan the
side's recorded turn played (its actions before the padding, then what was
dropped), so the padding, game-over cuts, resets and the budget are the engine's
own. Checked: every frame's pixels and RAM, each turn's start frame, both players'
actions, padding, per-action rewards and life losses, and the summary's scores.
"""

from __future__ import annotations

from typing import Any

from workstation.engine.calls import Reply, TurnContext
from workstation.engine.match_engine import MatchEngine, MatchTurnEnded
from workstation.engine.promptpack import load_pack
from workstation.engine.turn_engine import Event
from workstation.game.twoplayer import get_two_player_game
from workstation.run.frame_check import FrameCheck, Mismatch, TurnCheck, check_fields, same
from workstation.run.match_sides import load_match_text
from workstation.run.match_start import side_builders
from workstation.run.verify import VerifyResult, replay_basis
from workstation.store.recording import Recording
from workstation.store.records import MatchTurn, RecordingError

TURN_KEYS = ("start_frame", "end_frame", "game_over", "reset_frame", "lockstep_frames")
SIDE_KEYS = ("actions", "padded", "action_rewards", "action_life_lost", "reward", "lives_lost", "score")


class _Script:
    reads_prompt = False

    def __init__(self, turns: list[MatchTurn], side: int) -> None:
        self.spec = f"verify side {side}"
        self._plans: dict[int, list[str]] = {}
        for t in turns:
            p = t.players[side - 1]
            self._plans[t.turn] = list(p.actions[:len(p.actions) - p.padded]) + list(p.dropped)

    def act(self, prompt: Any, ctx: TurnContext, on_text: Any = None) -> Reply:
        plan = self._plans.get(ctx.turn)
        if plan is None:
            return Reply("", error="the recording has no more turns")
        return Reply("move: [" + ", ".join(plan or ["noop"]) + "]")

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "verify", "spec": self.spec}


def verify_match(rec: Recording) -> VerifyResult:
    tp, protocol, seed = replay_basis(rec, get_two_player_game, "the manifest lacks what verify needs ({e})")
    frames = rec.frames
    n = len(frames)
    if n == 0:
        return VerifyResult(0, 0, f"{rec.path / 'frames.idx'}: the recording holds no frames; nothing to verify")
    try:
        turns = rec.match_turns  # typed: each turn holds sides 1 and 2
    except RecordingError as e:
        return VerifyResult(0, 0, str(e))
    check = FrameCheck(frames)

    def compare(want: MatchTurn, got: MatchTurn, where: str) -> None:
        check_fields(want, got, TURN_KEYS, got.start_frame, where)
        for side in (0, 1):
            check_fields(want.players[side], got.players[side], SIDE_KEYS, got.start_frame,
                         f"{where} player {side + 1}")

    replayed = TurnCheck(turns, check, compare)

    def on_event(ev: Event) -> None:
        if isinstance(ev, MatchTurnEnded):
            replayed.see(ev.record)

    pack_path = rec.manifest_record.prompt_pack.get("path")
    pack = load_pack(pack_path if pack_path else None)
    builders = side_builders(tp, protocol, pack, load_match_text(pack, tp.key), None)
    engine = MatchEngine(tp, protocol, (_Script(turns, 1), _Script(turns, 2)), seed, builders,  # type: ignore[arg-type]
                         writer=None, observers=[on_event], sink=check)
    try:
        engine.start()
        while not engine.done:
            if engine.turn >= len(turns):
                break
            engine.play_turn()
    except Mismatch as e:
        return VerifyResult(check.checked, e.frame, e.detail, replayed.checked)
    finally:
        engine.close()
    checked = check.checked
    trailing = n - checked
    s = rec.summary_record
    stopped = not (s is not None and s.complete)
    if trailing > 0 and stopped and trailing <= protocol.max_actions * protocol.repeat + 1:
        # interrupted mid-turn (Ctrl-C): that turn's frames were stored, its record never written
        return VerifyResult(checked, turns_checked=replayed.checked, unchecked_frames=trailing)
    if checked < n:
        return VerifyResult(checked, checked, f"frames.idx holds {n} frames but the recorded actions reproduce "
                                              f"only {checked}")
    if replayed.checked < len(turns):
        return VerifyResult(checked, checked, f"turns.jsonl has {len(turns)} turns; re-execution plays {replayed.checked}")
    if s is not None:
        for side, p in enumerate(s.players if isinstance(s.players, list) else []):
            score = p.get("score") if isinstance(p, dict) else None
            if not same(score, engine.clock.scores[side]):
                return VerifyResult(checked, checked, f"summary.json player {side + 1} score: recorded "
                                                      f"{score!r}, re-execution gives {engine.clock.scores[side]!r}")
        if not same(s.frames, engine.clock.frame):
            return VerifyResult(checked, checked, f"summary.json frames: recorded {s.frames!r}, "
                                                  f"re-execution gives {engine.clock.frame}")
    return VerifyResult(checked, turns_checked=replayed.checked)
