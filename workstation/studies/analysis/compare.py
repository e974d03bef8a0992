"""Compare up to four recordings of one game: alignment, divergence, events and the summary table.

Runs are aligned on the budget clock: budget frame ``f`` of one run sits beside
budget frame ``f`` of the others (a shorter run shows its last frame). Every
per-frame and per-turn figure comes from each run's ``RunSeries``
(``workstation.store.series``); this module only lines them up. Headless:
no Textual. The compare screen, ``workstation compare`` and the tests read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workstation.base.errors import UserError
from workstation.game.games import FPS_PAPER
from workstation.store.changes import mark
from workstation.store.forward import Forward
from workstation.store.recording import Recording
from workstation.store.records import Manifest, RecordingError, TurnRecord
from workstation.store.series import RunSeries

MAX_RUNS = 4
NOOP = "noop"
EVENT_KINDS = ("reward", "life_lost", "game_over")
SESSION_FILE = "session.json"  # a human baseline session's record (workstation.studies.session)


@dataclass
class Run:
    """One recording lined up for comparison."""

    path: Path
    rec: Recording
    series: RunSeries
    label: str
    human: bool
    n_frames: int
    damage: str | None = None  # the fast integrity check's first problem (None: sound)
    state: str = "complete"  # complete | stopped | killed

    turns = Forward[list[TurnRecord]]("series")
    manifest = Forward[Manifest]("rec", "manifest_record")

    @property
    def last_frame(self) -> int:
        return self.n_frames - 1

    def frame_index(self, frame: int) -> int:
        """The stored frame shown at aligned ``frame`` (a run that ended shows its last one)."""
        return max(0, min(frame, self.last_frame))

    def game_over_frames(self) -> list[int]:
        """Frames where a game ended: the recorded resets and the turns that recorded a game over."""
        return event_frames(self.series, self.turns, "game_over")

    def event_frames(self, kind: str) -> list[int]:
        return event_frames(self.series, self.turns, kind)


def event_frames(series: Any, turns: list[TurnRecord], kind: str) -> list[int]:
    """The frames of one kind of event in a run (its series and turns): reward, life_lost or game_over."""
    if kind == "reward":
        return [int(f) for f in np.flatnonzero(series.rewards)]
    if kind == "life_lost":
        return [int(f) for f in np.flatnonzero(series.losses)]
    if kind == "game_over":
        frames = {int(f) for f in np.flatnonzero(series.resets)}
        frames |= {t.end_frame for t in turns if t.game_over}
        return sorted(frames)
    raise ValueError(f"unknown event kind {kind!r}: use {', '.join(EVENT_KINDS)}")


def next_event_frame(frames: list[int], frame: int, direction: int = 1) -> int | None:
    """The first of ``frames`` after ``frame`` (before it, for ``direction`` -1), None if there is none."""
    later = [f for f in frames if (f > frame if direction > 0 else f < frame)]
    return (min(later) if direction > 0 else max(later)) if later else None


def session_participant(path: Path) -> str | None:
    """The participant id when ``path`` is a run of a human baseline session (its session.json one or two levels up)."""
    for parent in (path.parent, path.parent.parent):
        f = parent / SESSION_FILE
        if f.is_file():
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            pid = data.get("participant") if isinstance(data, dict) else None
            return pid if isinstance(pid, str) else None
    return None


def run_label(rec: Recording) -> str:
    """``AGENT sSEED``; a session's human runs read ``human:ID``; a run changed by hand ends ``by hand O1``."""
    m = rec.manifest_record
    agent = m.agent_spec or "?"
    if m.agent.get("kind") == "human":
        pid = session_participant(rec.path)
        if pid is not None:
            agent = f"human:{pid}"
    start = m.protocol.get("start", "fixed") if isinstance(m.protocol, dict) else "fixed"
    hand = f" by hand {mark(rec.interventions)}" if rec.interventions else ""
    return f"{agent} s{m.seed}" + ("" if str(start) == "fixed" else f" {start}") + hand


def load_run(path: str | Path) -> Run:
    try:
        rec = Recording(Path(path))
        turns = rec.turn_records
        n_frames = len(rec.frames)
    except RecordingError as e:
        raise UserError(str(e)) from None
    series = RunSeries.from_turns(turns, rec.manifest_record, n_frames)
    return Run(Path(path), rec, series, run_label(rec), rec.manifest_record.agent.get("kind") == "human", n_frames,
               rec.damage(), rec.outcome().state)


def load_runs(paths: list[str | Path]) -> list[Run]:
    """2..4 recordings of one game; anything else is a one-line ``UserError``."""
    if not 2 <= len(paths) <= MAX_RUNS:
        raise UserError(f"compare takes 2 to {MAX_RUNS} recordings, not {len(paths)}; e.g. workstation compare A B")
    runs = [load_run(p) for p in paths]
    games = [r.manifest.game for r in runs]
    if len(set(games)) > 1:
        raise UserError(f"the recordings are of different games ({', '.join(str(g) for g in games)}); "
                        "compare runs of one game")
    for r in runs:
        if r.n_frames == 0:
            raise UserError(f"{r.path} holds no frames; nothing to compare")
    return runs


# -- same start? ------------------------------------------------------------------------
def _protocol(run: Run) -> dict[str, Any]:
    p = run.manifest.protocol
    return p if isinstance(p, dict) else {}


def _start(run: Run) -> str:
    return str(_protocol(run).get("start", "fixed"))


def start_notes(runs: list[Run]) -> list[str]:
    """What differs in how the runs started (seed, start option) and in their protocols; [] = nothing."""
    notes = []
    seeds = [r.manifest.seed for r in runs]
    if len(set(seeds)) > 1:
        notes.append("seeds differ (" + ", ".join(str(s) for s in seeds) + ")")
    starts = [_start(r) for r in runs]
    if len(set(starts)) > 1:
        notes.append("start options differ (" + ", ".join(starts) + ")")
    keys = sorted({k for r in runs for k in _protocol(r)} - {"start"})
    for k in keys:
        values = [_protocol(r).get(k) for r in runs]
        if len({json.dumps(v, sort_keys=True) for v in values}) > 1:
            notes.append(f"{k} differs (" + ", ".join(str(v) for v in values) + ")")
    return notes


def same_start(runs: list[Run]) -> bool:
    """One start option, and one seed unless that option is the fixed start (every seed's first state is one)."""
    starts = {_start(r) for r in runs}
    return len(starts) == 1 and (starts == {"fixed"} or len({r.manifest.seed for r in runs}) == 1)


def state_notes(runs: list[Run]) -> list[str]:
    """Runs that are not sound and complete: damaged, stopped or killed."""
    out = []
    for i, r in enumerate(runs):
        if r.damage:
            out.append(f"run {i + 1} DAMAGED ({r.damage})")
        elif r.state != "complete":
            out.append(f"run {i + 1} {r.state.upper()} at frame {r.last_frame}")
        if r.rec.interventions:
            out.append(f"run {i + 1} CHANGED BY HAND ({mark(r.rec.interventions)})")
    return out


def start_text(runs: list[Run]) -> str:
    """One line for the screen: the same start, or how the starts differ; then any run that is not sound."""
    notes = start_notes(runs)
    if same_start(runs) and len({r.manifest.seed for r in runs}) > 1:  # the fixed start: the seed labels a repeat
        text = ("same start (the fixed start gives every seed the same first frame; the seeds seed the agents "
                "only)" + (f"; {'; '.join(notes)}" if notes else ""))
    elif same_start(runs):
        text = "same start (seed and start option)" + (f"; {'; '.join(notes)}" if notes else "")
    else:
        fixed = all(_start(r) == "fixed" for r in runs)
        tail = " (the fixed start gives every seed the same first frame; the seed labels a repeat)" if fixed else ""
        text = "NOT the same start: " + "; ".join(notes) + tail
    states = state_notes(runs)
    return text + (" · " + "; ".join(states) if states else "")


# -- divergence -------------------------------------------------------------------------
def first_divergent_frame(runs: list[Run]) -> int | None:
    """The first aligned frame whose pixels differ between any two runs; None if all frames agree.

    Runs of different lengths that agree on every common frame diverge at the
    first frame the shorter one lacks.
    """
    common = min(r.n_frames for r in runs)
    first = runs[0].rec.frames
    others = [r.rec.frames for r in runs[1:]]
    for f in range(common):
        a = first.indices(f)
        if any(not np.array_equal(a, o.indices(f)) for o in others):
            return f
    if len({r.n_frames for r in runs}) > 1:
        return common
    return None


def divergence_from_first(runs: list[Run]) -> list[int | None]:
    """For each run after the first: the first frame where it differs from run 1 (None: never)."""
    return [first_divergent_frame([runs[0], r]) for r in runs[1:]]


def first_plan_divergence(runs: list[Run]) -> int | None:
    """The first turn (counted from 0) whose start frame or plan differs between runs; None if all agree."""
    n = max(len(r.turns) for r in runs)
    for i in range(n):
        here = {(r.turns[i].start_frame, tuple(r.turns[i].shown_plan)) if i < len(r.turns) else None for r in runs}
        if len(here) > 1:
            return i
    return None


# -- events -----------------------------------------------------------------------------
def next_event(runs: list[Run], frame: int, kind: str, direction: int = 1) -> tuple[int, int] | None:
    """(frame, run index) of the next ``kind`` event after ``frame`` in any run (the one before, direction < 0)."""
    found = [(f, i) for i, r in enumerate(runs) for f in r.event_frames(kind)
             if (f > frame if direction > 0 else f < frame)]
    if not found:
        return None
    return min(found) if direction > 0 else max(found, key=lambda fi: (fi[0], -fi[1]))


def end_frame(runs: list[Run]) -> int:
    """The last aligned frame (the longest run's last)."""
    return max(r.last_frame for r in runs)


# -- one run at a frame -------------------------------------------------------------------
@dataclass(frozen=True)
class RunAt:
    """One run at an aligned frame: what its panel shows."""

    frame: int  # the stored frame shown
    ended: bool  # the cursor is past this run's last frame
    score: float
    lives: int
    lives_lost: int
    action: str | None  # the action whose step produced the frame
    turn: int  # -1 before the first turn
    thought: str
    plan: list[str]
    done: int  # actions of the plan finished by this frame
    valid: bool


def run_at(run: Run, frame: int) -> RunAt:
    f = run.frame_index(frame)
    s = run.series
    stats = s.stats_at(f)
    turn = s.turn_at(f)
    t = run.turns[turn] if 0 <= turn < len(run.turns) else None
    return RunAt(frame=f, ended=frame > run.last_frame, score=stats.score, lives=stats.lives,
                 lives_lost=stats.lives_lost, action=s.action_at(f), turn=turn,
                 thought=t.thought if t else "", plan=t.shown_plan if t else [],
                 done=s.actions_done(turn, f), valid=t.valid if t else True)


# -- the summary table ----------------------------------------------------------------------
@dataclass(frozen=True)
class SummaryRow:
    label: str
    score: float
    lives_lost: int
    games_ended: int
    turns: int
    mean_actions: float
    invalid_turns: int
    failed_turns: int
    action_mix: dict[str, float] = field(default_factory=dict)  # share of executed actions, largest first
    noop_share: float = 0.0
    latency_s: float | None = None  # models: mean decision latency per turn
    inputs_per_s: float | None = None  # people: see ``inputs_per_second``

    def mix_text(self, top: int = 4) -> str:
        items = list(self.action_mix.items())
        text = " ".join(f"{name} {share:.0%}" for name, share in items[:top])
        return text + (" …" if len(items) > top else "")

    def pace_text(self) -> str:
        if self.inputs_per_s is not None:
            return f"{self.inputs_per_s:.1f} inputs/s"
        return f"{self.latency_s:.2f} s/turn" if self.latency_s is not None else "-"


def inputs_per_second(turns: list[TurnRecord], frames: int) -> float:
    """A person's inputs per second of game time (paper clock, frame/30): actions that are not NOOP and
    differ from the action before them (a new key or key combination), over the frames played."""
    seconds = max(1, frames) / FPS_PAPER
    previous = NOOP
    n = 0
    for t in turns:
        for a in t.actions:
            if a != NOOP and a != previous:
                n += 1
            previous = a
    return n / seconds


def summary_row(run: Run) -> SummaryRow:
    st = run.series.run_stats()
    counts: dict[str, int] = {}
    for t in run.turns:
        for a in t.actions:
            counts[a] = counts.get(a, 0) + 1
    total = sum(counts.values())
    mix = {k: v / total for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))} if total else {}
    games = st.game_overs if run.manifest.rule_version >= 2 else st.resets
    return SummaryRow(
        label=run.label, score=st.score, lives_lost=st.lives_lost, games_ended=games, turns=st.turns,
        mean_actions=st.mean_actions, invalid_turns=st.invalid_turns, failed_turns=st.error_turns,
        action_mix=mix, noop_share=mix.get(NOOP, 0.0),
        latency_s=None if run.human else st.mean_latency_s,
        inputs_per_s=inputs_per_second(run.turns, st.frames) if run.human else None,
    )


SUMMARY_COLUMNS = ("run", "score", "lives lost", "games ended", "turns", "actions/turn", "invalid", "failed",
                   "NOOP", "latency / inputs", "action mix")


def summary_cells(row: SummaryRow) -> tuple[str, ...]:
    return (row.label, f"{row.score:g}", str(row.lives_lost), str(row.games_ended), str(row.turns),
            f"{row.mean_actions:.2f}", str(row.invalid_turns), str(row.failed_turns), f"{row.noop_share:.0%}",
            row.pace_text(), row.mix_text())


@dataclass
class Comparison:
    """Everything headless about a comparison, computed once."""

    runs: list[Run]
    divergent_frame: int | None
    divergent_turn: int | None
    rows: list[SummaryRow]
    start: str
    pairs: list[int | None] = field(default_factory=list)  # run 2, 3, 4 against run 1

    @classmethod
    def of(cls, paths: list[str | Path]) -> Comparison:
        runs = load_runs(paths)
        pairs = divergence_from_first(runs) if len(runs) > 2 else []
        return cls(runs, first_divergent_frame(runs), first_plan_divergence(runs), [summary_row(r) for r in runs],
                   start_text(runs), pairs)

    @property
    def end(self) -> int:
        return end_frame(self.runs)

    def divergence_text(self) -> str:
        f, t = self.divergent_frame, self.divergent_turn
        frame = "no frame differs" if f is None else f"runs diverge at frame {f} ({f / FPS_PAPER:.2f} s)"
        turn = "no plan differs" if t is None else f"plans first differ at turn {t}"
        pairs = ", ".join(f"{i + 2} vs 1: {'never' if p is None else f'frame {p}'}" for i, p in enumerate(self.pairs))
        return f"{frame}; {turn}" + (f"  ({pairs})" if pairs else "")

    def table_text(self) -> str:
        from workstation.base.text_table import text_table

        return "\n".join(text_table([SUMMARY_COLUMNS] + [summary_cells(r) for r in self.rows]))
