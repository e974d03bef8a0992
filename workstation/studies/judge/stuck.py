"""Stuck stretches from the RAM (PokeGym's deadlocks), no judge needed.

A turn **stalls** when it scores nothing, loses no life, does not end the game, and either
- the player's position does not change over it (the player object of the game's RAM map,
  ``workstation/studies/qa/ram_maps``, at the turn's first and last frame), or
- it repeats the previous turn's executed actions and its last screen is the same as its first.

A **stuck stretch** is a run of at least ``min_turns`` consecutive stalled turns (the first rule
needs a RAM map; games without one have only the second). It is **aware** when a thought of the
model in it matches ``AWARE`` (words saying it is stuck or not progressing: "stuck", "nothing
happens", "not moving", "no progress", "same position", "try something else", ...), else
**unaware**; when a judge is given (``judge stuck --judge SPEC``) the judge reads the thoughts and
answers instead, and the word rule decides only where its answer is unreadable (``aware_by``). It is **recovered** when a turn of the same game follows it (the run went on and
something changed) rather than the run or the game ending in it.

Per setting: stuck stretches per run, the share of frames in stretches, aware and unaware
stretches, the recovery rate, and Spearman's correlation of a run's stuck share with its score.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from workstation.base.text_table import text_table
from workstation.store.ledger import write_json
from workstation.store.recording import Recording
from workstation.store.seal import check_seal, seal
from workstation.studies.judge.records import Fields, read_file
from workstation.studies.judge.sample import RunRef, read_sources

STUCK_FILE = "stuck.json"
STUCK_KIND = "stuck-report"
Ask = Callable[[Recording, list[str]], "bool | None"]

DEFAULT_MIN_TURNS = 8
AWARE = re.compile(
    r"\bstuck\b|\bnot (?:moving|progressing|changing|working)\b|\b(?:isn't|is not|hasn't|has not|didn't|did not|"
    r"doesn't|does not) (?:move|moved|moving|change|changed|work|worked|respond|progress)\b|\bno progress\b|"
    r"\bnothing (?:is )?(?:happen|happens|happened|happening|changes|changed)\b|\bsame (?:position|place|spot|screen)\b|"
    r"\bno (?:change|effect|response)\b|\bunchanged\b|\btry (?:something|another|a different)\b|"
    r"\bdifferent (?:approach|strategy|action)\b|\bstill (?:waiting|nothing|no)\b", re.IGNORECASE)


@dataclass
class Stretch:
    run_id: str
    first_turn: int
    last_turn: int
    turns: int
    frames: int
    rule: str  # position | repeat
    aware: bool
    recovered: bool
    cue: str  # the words that made it aware ("" if unaware)
    aware_by: str = "words"  # words | judge


def _player_positions(rec: Recording) -> Callable[[int], tuple[float, float] | None] | None:
    """frame -> (x, y) of the player, or None when the game has no RAM map with a player."""
    from workstation.base.errors import UserError
    from workstation.studies.qa.truth import load_map, supported_games

    game = rec.manifest_record.game
    if game not in supported_games():
        return None
    try:
        ram_map = load_map(game)
    except UserError:
        return None
    spec = ram_map.player
    if spec is None:
        return None
    frames = rec.frames

    def at(frame: int) -> tuple[float, float] | None:
        objs = spec.instances(frames.ram(min(frame, len(frames) - 1)))
        return (objs[0].x, objs[0].y) if objs else None

    return at


def stalled_turns(rec: Recording) -> list[str | None]:
    """Per turn: the rule it stalled by (position | repeat), or None."""
    at = _player_positions(rec)
    frames = rec.frames
    out: list[str | None] = []
    prev = None
    for t in rec.turn_records:
        rule = None
        quiet = t.reward == 0 and not t.lives_lost and not t.reset
        if quiet:
            end = min(t.end_frame, len(frames) - 1)
            if at is not None:
                a, b = at(t.start_frame), at(end)
                if a is not None and a == b:
                    rule = "position"
            if rule is None and prev is not None and t.actions == prev.actions and t.end_frame > t.start_frame \
                    and np.array_equal(frames.indices(t.start_frame), frames.indices(end)):
                rule = "repeat"
        out.append(rule)
        prev = t
    return out


def stretches(rec: Recording, min_turns: int, ask: Ask | None = None) -> list[Stretch]:
    """The stuck stretches of a run; ``ask(rec, thoughts)`` -> True | False | None is the judge, if any."""
    turns = rec.turn_records
    marks = stalled_turns(rec)
    out: list[Stretch] = []
    i = 0
    while i < len(turns):
        if marks[i] is None:
            i += 1
            continue
        j = i
        while j + 1 < len(turns) and marks[j + 1] is not None:
            j += 1
        if j - i + 1 >= min_turns:
            thoughts = " ".join(t.thought for t in turns[i:j + 1])
            m = AWARE.search(thoughts)
            said = ask(rec, [t.thought for t in turns[i:j + 1]]) if ask is not None else None
            recovered = j + 1 < len(turns) and not turns[j].reset
            rule = "position" if marks[i:j + 1].count("position") >= marks[i:j + 1].count("repeat") else "repeat"
            aware = (m is not None) if said is None else said
            out.append(Stretch(rec.manifest_record.run_id or "", turns[i].turn, turns[j].turn, j - i + 1,
                               turns[j].end_frame - turns[i].start_frame, rule, aware, recovered,
                               m.group(0) if m else "", "words" if said is None else "judge"))
        i = j + 1
    return out


def _spearman(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    from scipy.stats import spearmanr

    return float(spearmanr(xs, ys).statistic)


def is_baseline(agent: str) -> bool:
    """A run of a known agent kind that is no model (random, replay, human): it has no reasoning to judge."""
    from workstation.run.agents import AgentSpecError, parse_agent

    try:
        return not parse_agent(agent).is_model
    except AgentSpecError:
        return False


@dataclass(frozen=True)
class SettingStuck:
    runs: int
    stretches: int
    stretches_per_run: float
    stuck_share: float
    aware: int
    unaware: int
    recovery_rate: float | None
    spearman_stuck_vs_score: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def read(cls, f: Fields) -> SettingStuck:
        return cls(f.whole("runs"), f.whole("stretches"), f.num("stretches_per_run"), f.num("stuck_share", 0.0, 1.0),
                   f.whole("aware"), f.whole("unaware"), f.num_or_none("recovery_rate", 0.0, 1.0),
                   f.num_or_none("spearman_stuck_vs_score", -1.0, 1.0))


@dataclass(frozen=True)
class StuckReport:
    """A stuck report (``judge stuck --json`` / ``--out DIR``): per setting, and every stretch found."""

    min_turns: int | None
    settings: dict[str, SettingStuck]
    stretches: list[dict[str, Any]]
    judge: dict[str, Any] | None = None
    left_out: int = 0  # baseline runs not sent to the judge
    extra: dict[str, Any] = field(default_factory=dict)

    def with_judge(self, spec: str, calls: int, cost_usd: float) -> StuckReport:
        return replace(self, judge={"spec": spec, "calls": calls, "cost_usd": cost_usd,
                                    **({"baseline_runs_not_asked": self.left_out} if self.left_out else {})})

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"min_turns": self.min_turns,
                               "settings": {k: v.to_json() for k, v in self.settings.items()},
                               "stretches": self.stretches}
        if self.judge is not None:
            out["judge"] = self.judge
        return out

    @classmethod
    def read(cls, f: Fields) -> StuckReport:
        mt: int | None = None
        if "min_turns" not in f.data or f.data["min_turns"] is not None:
            mt = f.whole("min_turns", 2)
        sf = f.sub("settings")
        settings = {k: SettingStuck.read(sf.sub(k)) for k in sf.data}
        found = f.items("stretches")
        if not all(isinstance(x, dict) for x in found):
            raise f._bad("stretches", "holds something that is not an object")
        return cls(mt, settings, found, f.obj_or_none("judge"))


def read_report(path: Path) -> StuckReport:
    """A stuck report file, checked: its directory's seal when it has one (exit 1 when it fails), then every field
    (one line naming the file and field)."""
    if path.is_dir():
        path = path / STUCK_FILE
    from workstation.studies.qa.qset import readable

    readable(path.parent)
    if (path.parent / "seal.json").is_file():
        check_seal(path.parent, STUCK_KIND, what="stuck report")
    return read_file(path, StuckReport.read)


def write_report(out: Path, result: StuckReport) -> None:
    """``DIR/stuck.json``, sealed."""
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / STUCK_FILE, result.to_json())
    seal(out, STUCK_KIND)


def report(sources: list[str], min_turns: int = DEFAULT_MIN_TURNS, ask: Ask | None = None) -> StuckReport:
    runs: list[RunRef] = read_sources(sources)
    per: dict[str, dict[str, Any]] = {}
    found: list[dict[str, Any]] = []
    left_out = 0
    for r in runs:
        rec = Recording(r.path)
        judged = ask
        if ask is not None and is_baseline(r.agent):
            judged = None  # a baseline has no reasoning: the word rule decides, the judge is not asked
            left_out += 1
        st = stretches(rec, min_turns, judged)
        total = max(rec.turn_records[-1].end_frame if rec.turn_records else 0, 1)
        share = sum(s.frames for s in st) / total
        found += [{"setting": r.setting, "game": r.game, **asdict(s)} for s in st]
        p = per.setdefault(r.setting, {"runs": 0, "stretches": 0, "stuck_frames": 0, "frames": 0, "aware": 0,
                                       "unaware": 0, "recovered": 0, "_shares": [], "_scores": []})
        p["runs"] += 1
        p["stretches"] += len(st)
        p["stuck_frames"] += sum(s.frames for s in st)
        p["frames"] += total
        p["aware"] += sum(s.aware for s in st)
        p["unaware"] += sum(not s.aware for s in st)
        p["recovered"] += sum(s.recovered for s in st)
        p["_shares"].append(share)
        p["_scores"].append(r.score)
    settings = {}
    for name, p in sorted(per.items()):
        settings[name] = SettingStuck(
            p["runs"], p["stretches"], p["stretches"] / p["runs"], p["stuck_frames"] / max(p["frames"], 1),
            p["aware"], p["unaware"], None if not p["stretches"] else p["recovered"] / p["stretches"],
            _spearman(p["_shares"], p["_scores"]))
    return StuckReport(min_turns, settings, found, left_out=left_out)


def stuck_table(result: StuckReport) -> str:
    rows: list[list[object]] = [["setting", "runs", "stretches/run", "stuck frames", "aware", "unaware", "recovered",
                                 "rho(stuck, score)"]]
    for name, s in result.settings.items():
        rr = "-" if s.recovery_rate is None else f"{100 * s.recovery_rate:.0f}%"
        rho = "-" if s.spearman_stuck_vs_score is None else f"{s.spearman_stuck_vs_score:+.2f}"
        rows.append([name, s.runs, f"{s.stretches_per_run:.2f}", f"{100 * s.stuck_share:.1f}%", s.aware, s.unaware,
                     rr, rho])
    lines = text_table(rows)
    lines.append(f"stuck: at least {result.min_turns} turns in a row with no reward and the player's RAM position "
                 "unchanged, or the same plan repeated with the screen unchanged")
    return "\n".join(lines)
