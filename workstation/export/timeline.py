"""Per-frame figures of a run: score, lives, and the turn and action executing at each frame.

Frame ``f`` is budget frame ``f`` (0 = the observation after reset and warm-up). The
action "executing at f" is the one that moves the game from frame f to f + 1, so a
turn's first action is marked on the frame the model saw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workstation.store.recording import Recording

NO_ACTION = -1  # latency NOOP frames before a plan applies, or frames after the last turn


@dataclass
class Timeline:
    n_frames: int  # frames stored (budget frames 0..n_frames-1)
    budget: int  # frames the run was meant to have (protocol), for "frame 372/900"
    score: np.ndarray  # float64 per frame: score shown at that frame
    lives: np.ndarray  # int16 per frame (-1 when unknown)
    turn: np.ndarray  # int32 per frame: index into turns, -1 before the first / after the last
    action: np.ndarray  # int16 per frame: index into the turn's actions, NO_ACTION when none
    turns: list[dict]


def build_timeline(rec: Recording) -> Timeline:
    n = len(rec.frames)
    turns = rec.turns
    budget = int((rec.manifest.get("protocol") or {}).get("frames") or max(n - 1, 0))
    score = np.zeros(n, np.float64)
    lives = np.full(n, -1, np.int16)
    turn_at = np.full(n, -1, np.int32)
    action_at = np.full(n, NO_ACTION, np.int16)
    total = 0.0
    live = None
    if turns:
        first = turns[0]
        if first.get("lives") is not None:
            resets = any(first.get("action_reset") or [])
            live = int(first["lives"]) + (0 if resets else int(first.get("lives_lost") or 0))
    pos = 0  # frames before ``pos`` are filled
    for ti, t in enumerate(turns):
        start = int(t.get("start_frame", pos))
        if start > pos:  # a gap: hold what we had
            _fill(score, lives, pos, min(start, n), total, live)
        frames = [int(f) for f in t.get("action_frames") or []]
        rewards = list(t.get("action_rewards") or [0.0] * len(frames))
        lost = list(t.get("action_life_lost") or [False] * len(frames))
        reset = list(t.get("action_reset") or [False] * len(frames))
        first_start = start + int(t.get("noop_frames") or 0)
        a_start = first_start
        lo = max(start, 0)
        turn_at[lo:min(max(int(t.get("end_frame", start)), start), n)] = ti
        _fill(score, lives, lo, min(first_start, n), total, live)
        for k, end in enumerate(frames):
            a, b = max(a_start, 0), min(end, n)
            if a < b:
                action_at[a:b] = k
                _fill(score, lives, a, b, total, live)
            total += float(rewards[k] if k < len(rewards) else 0.0)
            if k < len(lost) and lost[k] and live is not None:
                live -= 1
            if k < len(reset) and reset[k]:
                live = t.get("lives", live)
            a_start = end
        if t.get("lives") is not None:
            live = int(t["lives"])
        if t.get("score") is not None:
            total = float(t["score"])
        pos = max(pos, int(t.get("end_frame", a_start)))
    if pos < n:
        _fill(score, lives, pos, n, total, live)
    return Timeline(n_frames=n, budget=budget, score=score, lives=lives, turn=turn_at, action=action_at, turns=turns)


def _fill(score: np.ndarray, lives: np.ndarray, a: int, b: int, total: float, live: int | None) -> None:
    if a < b:
        score[a:b] = total
        lives[a:b] = -1 if live is None else live


def video_frames(rec: Recording) -> int:
    """Frames a full export shows: one per budget step, frames 0..n-1 of the n steps recorded."""
    n = len(rec.frames)
    return n - 1 if n > 1 else n
