"""Import a public AtariBench harness run: re-execute it through our engine and compare.

The harness's executed action ids are played again under our protocol by the
normal ``TurnEngine``, driven by an agent that answers each turn with the
harness's original reply (so the recording keeps the raw reply, its thought
and token counts). The plan is the harness's own: if our parser reads the reply
differently, the plan is overridden with the harness's action ids, and a plan
the harness cut (game over, budget) is cut by our engine under the same rule.
The result is a normal recording (frames, RAM, turns; the source path in the
manifest) that ``workstation verify`` re-executes like any other.

While it plays, every turn is compared with the harness's: start frame, the
executed actions, and per action the end frame, reward and life loss, the game
over; then the totals (score, lives lost, turns, frames) and every stored PNG.
The first difference, or "identical", is one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workstation.base.errors import UserError
from workstation.base.words import plural
from workstation.engine.calls import CancelToken, Deadline, OnText, Reply, TurnContext, Usage
from workstation.engine.prompt import Prompt
from workstation.engine.promptpack import load_pack
from workstation.engine.turn_engine import Phase, TurnEngine
from workstation.game.games import Game, UnknownGame, get_game
from workstation.game.protocol import Protocol, ProtocolError
from workstation.run.importers.harness_run import HarnessRun, HarnessTurn, game_key_of, read_run
from workstation.run.start import manifest_for, new_run_dir
from workstation.store.recording import RecordingWriter
from workstation.store.records import Summary

SOURCE_KIND = "atari-bench"


@dataclass
class ImportResult:
    source: Path
    recording: Path
    mismatch: str | None  # the first difference, None when identical
    turns: int
    frames: int

    @property
    def identical(self) -> bool:
        return self.mismatch is None

    def line(self) -> str:
        what = "identical" if self.identical else f"MISMATCH {self.mismatch}"
        return (f"{self.source}: {what} ({plural(self.turns, 'turn')}, {plural(self.frames, 'frame')}) -> "
                f"{self.recording}")


def _usage(t: HarnessTurn) -> Usage | None:
    tok = t.tokens
    if tok["input_tokens"] is None and tok["output_tokens"] is None:
        return None
    cached = tok["cached_input_tokens"] or 0
    thinking = tok["thinking_tokens"] or 0
    return Usage(input_tokens=max(0, (tok["input_tokens"] or 0) - cached), cache_read_tokens=cached,
                 output_tokens=(tok["output_tokens"] or 0) + thinking, reasoning_tokens=thinking)


class HarnessReplyAgent:
    """Answers our turn N with the harness's turn N+1: its raw reply and token counts."""

    reads_prompt = False

    def __init__(self, run: HarnessRun):
        self.run = run
        self.spec = f"{SOURCE_KIND}:{run.model}"

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None, *,
            deadline: Deadline | None = None, cancel: CancelToken | None = None) -> Reply:
        if ctx.turn >= len(self.run.turns):
            return Reply(text="thought: the imported run has no more turns\nmove: [noop]")
        t = self.run.turns[ctx.turn]
        return Reply(text=t.raw, usage=_usage(t), model=self.run.model)

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "import", "spec": self.spec, "source": SOURCE_KIND, "model": self.run.model}


def _name(game: Game, action_id: int) -> str:
    try:
        return game.action_name(action_id)
    except (IndexError, KeyError, ValueError):
        return f"id {action_id}"


def turn_difference(rec: dict[str, Any], h: HarnessTurn, game: Game) -> str | None:
    """How our turn record differs from the harness's turn, in one line, or None."""
    where = f"turn_index {h.index}"
    if rec["start_frame"] != h.start:
        return f"{where}: starts on frame {rec['start_frame']}, harness {h.start}"
    ours = list(rec.get("actions", []))
    theirs = [_name(game, a.action_id) for a in h.actions]
    for k, h_act in enumerate(h.actions):
        if k >= len(ours):
            return f"{where}: executed {len(ours)} actions {ours}, harness {len(theirs)} {theirs}"
        if ours[k] != theirs[k]:
            return f"{where} action {k + 1}: executed {ours[k]}, harness {theirs[k]}"
        w = f"{where} action {k + 1} ({theirs[k]})"
        if rec["action_frames"][k] != h_act.end:
            return f"{w}: ends on frame {rec['action_frames'][k]}, harness {h_act.end}"
        if rec["action_rewards"][k] != h_act.reward:
            return f"{w}: reward {rec['action_rewards'][k]:g}, harness {h_act.reward:g}"
        lost = bool(rec["action_life_lost"][k])
        if lost != h_act.lost_life:
            return f"{w}: life lost {lost}, harness {h_act.lost_life}"
    if len(ours) > len(theirs):
        return f"{where}: executed {len(ours)} actions {ours}, harness {len(theirs)} {theirs}"
    if rec["end_frame"] != h.end:
        return f"{where}: ends on frame {rec['end_frame']}, harness {h.end}"
    if "game_over" in rec and bool(rec["game_over"]) != h.new_game:
        return f"{where}: game over {bool(rec['game_over'])}, harness new_game_started {h.new_game}"
    return None


def totals_difference(summary: Summary, n_frames: int, run: HarnessRun) -> str | None:
    """How our run's totals differ from the harness summary's (turns, score, lives lost, frames), or None."""
    s = run.summary
    if not summary.complete:
        return f"our run did not complete ({summary.stopped or 'stopped'})"
    if summary.turns != len(run.turns):
        return f"our run has {summary.turns} turns, harness {len(run.turns)}"
    for ours, theirs, label in ((summary.total_reward, s.total_reward, "score"),
                                (summary.lives_lost, s.total_lost_lives, "lives lost")):
        if theirs is not None and float(ours) != float(theirs):
            return f"run total {label} {ours:g}, harness {theirs:g}"
    if s.frame_count is not None and n_frames != s.frame_count:
        return f"our run has {n_frames} frames, harness frame_count {s.frame_count}"
    return None


def first_difference(records: list[dict[str, Any]], summary: Summary, n_frames: int, run: HarnessRun, game: Game) -> str | None:
    """The first way a finished recording differs from the harness run (turn by turn, then totals)."""
    for rec in records:
        n = rec["turn"]
        if n >= len(run.turns):
            return (f"our run has a turn {n + 1} (from frame {rec['start_frame']}); the harness's ended after "
                    f"{len(run.turns)} turns")
        diff = turn_difference(rec, run.turns[n], game)
        if diff:
            return diff
    return totals_difference(summary, n_frames, run)


class _Checker:
    """Compares our turn records with the harness's as they are written; keeps the first difference."""

    def __init__(self, run: HarnessRun, game: Game):
        self.run = run
        self.game = game
        self.mismatch: str | None = None
        self._pngs = sorted(run.pngs)

    def _fail(self, text: str | None) -> None:
        if self.mismatch is None and text:
            self.mismatch = text

    def on_turn(self, rec: dict[str, Any], frames: Any) -> None:
        if self.mismatch is None:
            n = rec["turn"]
            if n >= len(self.run.turns):
                self._fail(f"our run has a turn {n + 1} (from frame {rec['start_frame']}); the harness's ended "
                           f"after {len(self.run.turns)} turns")
            else:
                self._fail(turn_difference(rec, self.run.turns[n], self.game))
        if self.mismatch is None:
            self._check_pngs(frames, upto=len(frames) - 1)

    def _check_pngs(self, frames: Any, upto: int) -> None:
        from PIL import Image

        while self._pngs and self._pngs[0] <= upto:
            i = self._pngs.pop(0)
            try:
                with Image.open(self.run.pngs[i]) as im:
                    theirs = np.asarray(im.convert("RGB"))
            except OSError as e:
                self._fail(f"frame {i}: the stored PNG cannot be read ({e})")
                return
            ours = frames.rgb(i)
            if theirs.shape != ours.shape:
                self._fail(f"frame {i}: stored PNG is {theirs.shape[1]}x{theirs.shape[0]}, ours {ours.shape[1]}x{ours.shape[0]}")
                return
            if not np.array_equal(theirs, ours):
                diff = int(np.count_nonzero(np.any(theirs != ours, axis=-1)))
                self._fail(f"frame {i}: differs from the stored PNG in {diff} pixels")
                return

    def on_finish(self, summary: Summary, frames: Any) -> None:
        if self.mismatch is None:
            self._fail(totals_difference(summary, len(frames), self.run))
        if self.mismatch is None:
            self._check_pngs(frames, upto=len(frames) - 1)
        if self.mismatch is None and self._pngs:
            self._fail(f"the harness stored frame {self._pngs[0]}, past our run's last frame {len(frames) - 1}")


class _ImportWriter(RecordingWriter):
    """A recording writer that keeps each turn's source fields and checks it against the harness."""

    def __init__(self, directory: Path, manifest: dict[str, Any], height: int, run: HarnessRun,
                 checker: _Checker) -> None:
        super().__init__(directory, manifest, height)
        self.run = run
        self.checker = checker

    def add_turn(self, record: Any) -> None:
        record = record.to_json() if hasattr(record, "to_json") else record  # the engine writes TurnRecords
        n = record["turn"]
        if n < len(self.run.turns):
            h = self.run.turns[n]
            record = {**record, "source": {
                "turn_index": h.index, "thought": h.thought, "planned": h.planned_names,
                "planned_ids": h.planned_ids, "parse_errors": h.parse_errors, "tokens": h.tokens,
                "start_frame": h.start, "end_frame": h.end, "new_game_started": h.new_game}}
        super().add_turn(record)
        self.checker.on_turn(record, self.frames)

    def _import_summary(self, summary: Any) -> dict[str, Any]:
        summary = summary.to_json() if hasattr(summary, "to_json") else summary  # the engine writes a Summary
        self.checker.on_finish(Summary.from_json(summary), self.frames)
        return {**summary, "import": {"source": SOURCE_KIND, "path": str(self.run.path.resolve()),
                                      "result": self.checker.mismatch or "identical"}}

    def finish(self, summary: dict[str, Any] | Summary) -> None:
        super().finish(self._import_summary(summary))

    def abort(self, summary: dict[str, Any] | Summary) -> None:
        super().abort(self._import_summary(summary))


def protocol_of(run: HarnessRun) -> Protocol:
    """Our protocol for the harness run's settings (frame budget, frames per action, history)."""
    s = run.summary
    kw: dict[str, Any] = {}
    if s.frame_count is not None and s.frame_count > 1:
        kw["frames"] = s.frame_count - 1  # the harness counts frame 0 too
    elif s.duration_seconds is not None:
        kw["frames"] = int(round(s.duration_seconds * 30))
    if s.frames_per_action is not None:
        kw["repeat"] = s.frames_per_action
    if s.prompt_mode == "append_only":
        kw["memory"] = "append"
    else:
        if s.history_clips is not None and s.history_clips >= 0:
            kw["history"] = s.history_clips
        if s.non_zero_reward_clips is not None and s.non_zero_reward_clips >= 0:
            kw["reward_history"] = s.non_zero_reward_clips
    try:
        return Protocol(**kw)
    except ProtocolError as e:
        raise UserError(f"{run.path}: the harness settings do not fit our protocol ({e})") from None


def _wanted_plan(t: HarnessTurn) -> list[int]:
    """The harness's plan when what it executed is a prefix of it, else what it executed."""
    done = t.executed_ids
    if t.planned_ids and t.planned_ids[: len(done)] == done:
        return list(t.planned_ids)
    return done


def check_run(path: Path, game_key: str | None = None) -> tuple[HarnessRun, Game, Protocol]:
    """The run at ``path``, its game and our protocol for it; ``UserError`` for anything that would stop its
    import (no game, an unknown one, an action the game lacks, settings our protocol cannot take), so that a
    command checks every run before it imports the first."""
    run = read_run(Path(path))
    key = game_key or game_key_of(run)
    if key is None:
        raise UserError(f"{run.path}: cannot tell which game this run is; give --game")
    try:
        game = get_game(key)
    except UnknownGame as e:
        raise UserError(f"{run.path}: {e}") from None
    for t in run.turns:
        for a in t.actions:
            if a.action_id not in game.allowed:
                raise UserError(f"{run.path}: turn_index {t.index} executed action id {a.action_id}, "
                                f"not one of {game.key}'s actions {list(game.allowed)}")
    return run, game, protocol_of(run)


def import_run(path: Path, out: Path, game_key: str | None = None) -> ImportResult:
    """Import one harness run directory into a new recording under ``out``."""
    run, game, protocol = check_run(path, game_key)
    seed: int = run.summary.seed if run.summary.seed is not None else 0
    pack = load_pack(None)
    agent = HarnessReplyAgent(run)
    manifest = manifest_for(game, protocol, seed, agent, pack)
    manifest["source"] = {"kind": SOURCE_KIND, "path": str(run.path.resolve()), "model": run.model,
                          "turns": len(run.turns), "stored_pngs": len(run.pngs),
                          "summary": run.summary.source()}
    checker = _Checker(run, game)
    directory = new_run_dir(Path(out), game, agent.spec, seed, run_id=manifest["run_id"])
    writer = _ImportWriter(directory, manifest, game.height, run, checker)
    engine = TurnEngine(game, protocol, agent, seed, pack, writer, rewindable=False)
    try:
        engine.start()
        while engine.phase is not Phase.FINISHED:
            if engine.phase is Phase.PLAN and engine.turn < len(run.turns):
                wanted = _wanted_plan(run.turns[engine.turn])
                if wanted and engine.pending is not None and engine.pending.plan != wanted:
                    engine.override_plan([game.action_name(a) for a in wanted], by_hand=False)
            engine.step()
    except BaseException as e:
        if engine.phase is not Phase.FINISHED:
            engine.stop(f"import failed: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
        raise
    finally:
        engine.close()
    summary = engine.summary
    turns, frames = (summary.turns, summary.frames) if summary is not None else (0, 0)
    return ImportResult(run.path, directory, checker.mismatch, turns, frames + 1)
