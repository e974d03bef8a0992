"""Per-frame figures of a run: score, lives, and the turn and action executing at each frame.

Frame ``f`` is budget frame ``f`` (0 = the observation after reset and warm-up). The
action "executing at f" is the one that moves the game from frame f to f + 1, so a
turn's first action is marked on the frame the model saw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workstation.store.recording import Recording
from workstation.store.records import TurnRecord

NO_ACTION = -1  # latency NOOP frames before a plan applies


@dataclass
class Timeline:
    n_frames: int  # frames stored (budget frames 0..n_frames-1)
    budget: int  # frames the run was meant to have (protocol), for "frame 372/900"
    score: np.ndarray  # float64 per frame: score shown at that frame
    lives: np.ndarray  # int16 per frame (-1 when unknown)
    turn: np.ndarray  # int32 per frame: index into turns, -1 before the first
    action: np.ndarray  # int16 per frame: index into the turn's actions, NO_ACTION when none
    turns: list[TurnRecord]


def build_timeline(rec: Recording) -> Timeline:
    """Score and lives from the run's series (the one place per-frame figures are computed);
    the turn and the index of the executing action within it from the turn records."""
    from workstation.store.series import RunSeries

    n = len(rec.frames)
    turns = rec.turn_records
    series = RunSeries.from_recording(rec)
    budget = int((rec.manifest_record.protocol or {}).get("frames") or series.budget)
    score = np.zeros(n, np.float64)
    lives = np.full(n, -1, np.int16)
    m = min(n, len(series.score))
    score[:m] = series.score[:m]
    if turns:
        lives[:m] = series.lives[:m]
    if m < n and m:
        score[m:], lives[m:] = score[m - 1], lives[m - 1]
    starts = np.array([t.start_frame for t in turns], np.int64)
    turn_at = (np.searchsorted(starts, np.arange(n), side="right") - 1).astype(np.int32)
    action_at = np.full(n, NO_ACTION, np.int16)
    for t in turns:
        start = max(0, t.start_frame)
        a_start = start + t.noop_frames
        action_at[start:] = len(t.action_frames)  # past its end: every action done (later turns overwrite)
        action_at[start:min(a_start, n)] = NO_ACTION
        for k, end in enumerate(t.action_frames):
            a, b = max(a_start, 0), min(end, n)
            if a < b:
                action_at[a:b] = k
            a_start = end
    return Timeline(n_frames=n, budget=budget, score=score, lives=lives, turn=turn_at, action=action_at, turns=turns)


def video_frames(rec: Recording) -> int:
    """Frames a full export shows: one per budget step, frames 0..n-1 of the n steps recorded."""
    n = len(rec.frames)
    return n - 1 if n > 1 else n
