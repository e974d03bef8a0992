"""Human baseline sessions: the plan, the record (``session.json``), resuming, and the results table.

A session is what a lab runs to collect human baselines: for each game, an
instruction screen, optional practice runs, then one scored run per seed. Its
directory holds

- ``session.json``: the participant id as given, the settings, the order of
  the steps, and for each step its times, practice flag, result and
  recording; rewritten atomically (temporary file, then rename) after every
  step, so a crash leaves the last good state;
- ``runs/``: the scored runs, ordinary recordings (agent ``human``);
- ``practice/``: the practice runs, recorded like the others but marked
  practice in ``session.json`` and kept out of the results;
- ``incomplete/``: runs that stopped before the end (quit or crash); the step
  is played again;
- ``results.csv``: one row per finished scored run with setting
  ``human:ID``, in the columns ``workstation report`` reads, so ``report
  SESSION_DIR`` works and the rows join a batch's results.

Opening a directory that already holds a session resumes it at the first step
not yet complete (the settings must match). Headless: the screens drive it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from workstation.base.errors import UserError
from workstation.game.games import FPS_NATIVE, FPS_PAPER, GAMES, MODES, PACES, get_game
from workstation.game.protocol import Protocol
from workstation.store.atomic import move_into, write_atomic
from workstation.store.records import Manifest, RecordError, Summary, read_json
from workstation.store.seal import check_seal, seal

T = TypeVar("T")

FORMAT = "atari-workstation-session/1"
SESSION_FILE = "session.json"
RESULTS_FILE = "results.csv"
RUNS, PRACTICE, INCOMPLETE = "runs", "practice", "incomplete"
SESSIONS = "sessions"  # default root: sessions/<participant>/
SEAL_KIND = "session"  # its seal.json (workstation.store.seal)
OPTIONAL: dict[str, Any] = {"created": None, "events": None, "finished": None}  # session.json keys that may be absent
ORDERS = ("fixed", "shuffled")
PRACTICE_SEED = 1000  # practice runs use seeds 1000, 1001, ... (never a scored seed)
# the batch's results.csv order (workstation.studies.batch.results), for the columns a session has, then its own
RESULT_COLUMNS = ("run_id", "setting", "game", "seed", "score", "lives_lost", "turns", "invalid_turns", "frames",
                  "budget", "complete", "start", "prompt_pack", "pace", "play_mode", "participant")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "participant"


# -- settings ------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """What a session is: everything that must match to resume it."""

    participant: str
    games: tuple[str, ...]
    seeds: tuple[int, ...]
    practice: int = 0
    mode: str = "realtime"
    pace: str = "paper"
    order: str = "fixed"
    protocol: Protocol = field(default_factory=Protocol)
    prompts: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"participant": self.participant, "games": list(self.games), "seeds": list(self.seeds),
                "practice": self.practice, "mode": self.mode, "pace": self.pace, "order": self.order,
                "protocol": self.protocol.to_json(), "prompts": self.prompts}

    @property
    def setting(self) -> str:
        """The label of the session's runs in a results table."""
        return f"human:{self.participant}"


def _comma_list(text: str, flag: str, what: tuple[str, str, str], parse: Callable[[str], T]) -> tuple[T, ...]:
    """``text`` split at commas, each part through ``parse``; an empty list or one naming a value twice is a
    UserError. ``what``: the values in the plural, an example, one value in the singular."""
    plural, example, one = what
    parts = [p.strip() for p in (text or "").split(",") if p.strip()]
    if not parts:
        raise UserError(f"{flag} is empty; give {plural} separated by commas, e.g. {flag} {example}")
    out = tuple(parse(p) for p in parts)
    if len(set(out)) != len(out):
        raise UserError(f"{flag} names a {one} twice ({text}); list each {one} once")
    return out


def _game_key(k: str) -> str:
    try:
        return get_game(k).key
    except (KeyError, ValueError):
        examples = ", ".join(list(GAMES)[:3])
        raise UserError(f"unknown game {k!r} in --games; see `workstation games` (e.g. {examples})") from None


def _seed(p: str) -> int:
    if not re.fullmatch(r"\d+", p):
        raise UserError(f"seed {p!r} in --seeds is not a whole number 0 or more; e.g. --seeds 0,1,2")
    return int(p)


def parse_games(text: str) -> tuple[str, ...]:
    return _comma_list(text, "--games", ("game keys", "breakout,pacman", "game"), _game_key)


def parse_seeds(text: str) -> tuple[int, ...]:
    seeds = _comma_list(text, "--seeds", ("seeds", "0,1,2", "seed"), _seed)
    if any(s >= PRACTICE_SEED for s in seeds):
        raise UserError(f"seeds of {PRACTICE_SEED} or more are kept for practice runs; use smaller seeds")
    return seeds


MAX_PARTICIPANT = 64  # characters of a participant id (it names the session directory)
MAX_PRACTICE = 20


def check_participant(pid: str) -> None:
    """A participant id that can name a directory: no path parts, no control characters, not too long."""
    if any(ord(c) < 32 or ord(c) == 127 for c in pid):
        raise UserError("--participant holds a control character (a newline, tab or NUL); give a plain id such as P01")
    if "/" in pid or "\\" in pid:
        raise UserError(f"--participant {pid!r} holds a path separator; give a plain id such as P01")
    if set(pid.strip()) <= {"."}:
        raise UserError(f"--participant {pid!r} is not an id (it would name a directory above the session's); "
                        "give a plain id such as P01")
    if len(pid) > MAX_PARTICIPANT:
        raise UserError(f"--participant is {len(pid)} characters; at most {MAX_PARTICIPANT} (it names the session "
                        "directory)")


def make_settings(participant: str, games: str, seeds: str, practice: int = 0, mode: str = "realtime",
                  pace: str = "paper", order: str = "fixed", protocol: Protocol | None = None,
                  prompts: str | None = None) -> Settings:
    """Checked settings; bad input is one ``UserError`` line."""
    if participant is None or not participant.strip():
        raise UserError("--participant is empty; give the participant's id, e.g. --participant P01")
    check_participant(participant)
    if not 0 <= practice <= MAX_PRACTICE:
        raise UserError(f"--practice must be 0..{MAX_PRACTICE} practice runs per game (got {practice})")
    for name, value, allowed in (("mode", mode, MODES), ("pace", pace, PACES), ("order", order, ORDERS)):
        if value not in allowed:
            raise UserError(f"--{name} {value!r} is unknown: use {' or '.join(allowed)}")
    return Settings(participant, parse_games(games), parse_seeds(seeds), practice, mode, pace, order,
                    protocol or Protocol(), prompts)


# what session.json holds, checked as it is read (workstation.store.records.check_fields)
SESSION_FIELDS = {"format": ("str", False), "settings": ("dict", False), "steps": ("list", False),
                  "created": ("str", True), "events": ("list", True), "finished": ("str", True)}
STEP_FIELDS = {"index": ("int", False, 0, 10**6), "game": ("str", False), "seed": ("seed", False),
               "practice": ("bool", False), "state": ("str", True), "recording": ("str", True),
               "incomplete": ("list", True), "started": ("str", True), "ended": ("str", True),
               "score": ("num", True), "frames": ("int", True), "lives_lost": ("int", True), "turns": ("int", True),
               "run_id": ("str", True), "invalid_turns": ("int", True)}


# -- steps -----------------------------------------------------------------------------
@dataclass
class SessionStep:
    index: int
    game: str
    seed: int
    practice: bool
    state: str = "pending"  # pending | running | done
    recording: str | None = None  # relative to the session directory
    incomplete: list[Any] = field(default_factory=list)  # runs of this step that stopped before the end
    started: str | None = None
    ended: str | None = None
    score: float | None = None
    frames: int | None = None
    lives_lost: int | None = None
    turns: int | None = None
    run_id: str | None = None
    invalid_turns: int | None = None

    @property
    def done(self) -> bool:
        return self.state == "done"


def plan_steps(s: Settings) -> list[SessionStep]:
    """The session's steps in order: per game, its practice runs then one scored run per seed."""
    games, seeds = list(s.games), list(s.seeds)
    rng = random.Random(int(hashlib.sha256(s.participant.encode("utf-8")).hexdigest()[:16], 16))
    if s.order == "shuffled":  # seeded by the participant id: the same person gets the same order on resume
        rng.shuffle(games)
    steps: list[SessionStep] = []
    for g in games:
        for p in range(s.practice):
            steps.append(SessionStep(len(steps), g, PRACTICE_SEED + p, True))
        order = list(seeds)
        if s.order == "shuffled":
            rng.shuffle(order)
        for seed in order:
            steps.append(SessionStep(len(steps), g, seed, False))
    return steps


# -- the session ----------------------------------------------------------------------------
class Session:
    """One participant's session in one directory."""

    def __init__(self, path: Path, settings: Settings, steps: list[SessionStep], created: str, events: list[dict[str, Any]],
                 resumed: bool = False, countdown: int = 3) -> None:
        self.path = Path(path)
        self.settings = settings
        self.steps = steps
        self.created = created
        self.events = events
        self.resumed = resumed
        self.finished: str | None = None
        self.countdown = countdown  # seconds before each run (how this sitting runs; not part of the record)

    # -- open / resume ------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, settings: Settings, countdown: int = 3) -> Session:
        """A new session in ``path``, or the one there resumed (its settings must equal ``settings``)."""
        path = Path(path)
        f = path / SESSION_FILE
        if f.is_file():
            return cls._resume(path, settings, countdown)
        if path.exists() and not path.is_dir():
            raise UserError(f"{path} is a file; give --out a directory for the session")
        if f.exists() or f.is_symlink():
            raise UserError(f"{f} is not a file; move it away or give --out another directory")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot make the session directory {path}: {e.strerror or e}") from None
        s = cls(path, settings, plan_steps(settings), _now(), [], countdown=countdown)
        s.event("created")
        return s

    @classmethod
    def _resume(cls, path: Path, settings: Settings, countdown: int = 3) -> Session:
        f = path / SESSION_FILE
        from workstation.store.records import check_fields

        check_seal(path, SEAL_KIND, what="the session", missing_ok=True)  # edited by hand: exit 1, named
        try:
            data = {**OPTIONAL, **check_fields(read_json(f), SESSION_FIELDS, str(f))}
            if data["format"] != FORMAT:
                raise ValueError(f"format {data['format']!r}")
            steps = []
            for i, st in enumerate(data["steps"]):
                if not isinstance(st, dict):
                    raise ValueError(f"step {i} is not an object")
                steps.append(SessionStep(**check_fields(st, STEP_FIELDS, f"{f} step {i}")))
        except (UserError, ValueError, KeyError, TypeError) as e:
            raise UserError(f"{f} cannot be read as a session ({e}); give --out another directory") from None
        stored: dict[str, Any] = data["settings"]
        wanted = settings.to_json()
        if stored != wanted:
            diff = [k for k in wanted if k not in stored or stored[k] != wanted[k]]
            raise UserError(f"{path} holds another session ({', '.join(diff) or 'settings'} differ); resume it with "
                            "the same options or give --out another directory")
        s = cls(path, settings, steps, data["created"] or _now(), list(data["events"] or []), resumed=True,
                countdown=countdown)
        s.finished = data["finished"]
        s._adopt_or_set_aside()
        for st in s.steps:
            if st.state == "running":  # interrupted mid-run: played again
                st.state = "pending"
        s.event("resumed", at_step=s.next_index())
        return s

    def _adopt_or_set_aside(self) -> None:
        """Recordings under runs/ or practice/ that no finished step names: left by a crash.

        A complete one of the interrupted step's game and seed finishes that step (the run was
        over, only the session's record of it was lost); any other goes to incomplete/."""
        named = {st.recording for st in self.steps if st.recording}
        running = next((st for st in self.steps if st.state == "running"), None)
        for sub in (RUNS, PRACTICE):
            d = self.path / sub
            if not d.is_dir():
                continue
            for rec in sorted(d.iterdir()):
                if not rec.is_dir() or f"{sub}/{rec.name}" in named:
                    continue
                summary = _complete_summary(rec)
                if (running is not None and not running.done and summary is not None
                        and self.runs_dir(running) == d and summary.game == running.game
                        and summary.seed == running.seed):
                    self.finish(running, rec, summary, event="adopted after an interruption")
                    continue
                moved = self._set_aside(rec)
                if running is not None and not running.done:
                    running.incomplete.append(moved)

    def _set_aside(self, rec: Path) -> str:
        target = move_into(rec, self.path / INCOMPLETE)
        return f"{INCOMPLETE}/{target.name}"

    # -- progress --------------------------------------------------------------------
    def next_index(self) -> int | None:
        return next((st.index for st in self.steps if not st.done), None)

    def next_step(self) -> SessionStep | None:
        i = self.next_index()
        return None if i is None else self.steps[i]

    @property
    def complete(self) -> bool:
        return self.next_index() is None

    def runs_dir(self, step: SessionStep) -> Path:
        return self.path / (PRACTICE if step.practice else RUNS)

    def event(self, what: str, **data: Any) -> None:
        self.events.append({"time": _now(), "event": what, **data})
        self.save()

    def begin(self, step: SessionStep) -> None:
        step.state = "running"
        step.started = _now()
        self.event("run started", step=step.index, game=step.game, seed=step.seed, practice=step.practice)

    def finish(self, step: SessionStep, recording: str | Path | None, summary: Summary | dict[str, Any] | None,
               event: str = "run ended") -> bool:
        """Record a run's end; True when it completed (the step is done), else it is set aside to play again."""
        typed = _typed_summary(summary)
        step.ended = _now()
        rec = Path(recording) if recording else None
        complete = typed.complete and rec is not None
        if complete and rec is not None:
            step.state = "done"
            step.recording = os.path.relpath(rec, self.path)
            step.score = float(typed.total_reward)
            step.frames = typed.frames
            step.lives_lost = typed.lives_lost
            step.turns = typed.turns
            step.invalid_turns = typed.invalid_turns
            step.run_id = _run_id(rec)
        else:
            step.state = "pending"
            if rec is not None and rec.is_dir():
                step.incomplete.append(self._set_aside(rec))
        self.event(event, step=step.index, complete=complete, score=step.score if complete else None,
                   why=None if complete else typed.stopped or "stopped")
        if self.complete and self.finished is None:
            self.finished = _now()
            self.event("finished")
        self.write_results()
        return complete

    # -- files -------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "participant": self.settings.participant, "setting": self.settings.setting,
                "settings": self.settings.to_json(), "created": self.created, "updated": _now(),
                "finished": self.finished, "order": [[st.game, st.seed, st.practice] for st in self.steps],
                "steps": [asdict(st) for st in self.steps], "events": self.events}

    def save(self) -> None:
        write_atomic(self.path / SESSION_FILE, json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n")
        self.seal()

    def seal(self) -> None:
        """Seal session.json and results.csv (the recordings under runs/, practice/ and incomplete/ carry their
        own digests); re-sealed after every write, so a file edited by hand is caught when the session is read."""
        seal(self.path, SEAL_KIND, skip=(RUNS, PRACTICE, INCOMPLETE))

    def result_rows(self) -> list[dict[str, Any]]:
        s = self.settings
        proto = s.protocol
        pack = self.pack_label()
        return [{"setting": s.setting, "game": st.game, "seed": st.seed, "score": f"{st.score:g}",
                 "run_id": st.run_id or "", "complete": "true", "lives_lost": st.lives_lost, "turns": st.turns,
                 "invalid_turns": st.invalid_turns, "frames": st.frames, "budget": proto.frames,
                 "start": str(proto.start), "prompt_pack": pack, "pace": s.pace, "play_mode": s.mode,
                 "participant": s.participant}
                for st in self.steps if st.done and not st.practice]

    def pack_label(self) -> str:
        """``name@digest8`` of the session's prompt pack, as a batch's results.csv names it."""
        from workstation.engine.promptpack import load_pack

        try:
            pack = load_pack(self.settings.prompts)
        except Exception:  # the label only; the pack was checked when the session started
            return str(self.settings.prompts or "?")
        return f"{pack.name}@{str(pack.digest)[:8]}"

    def write_results(self) -> None:
        buf = io.StringIO(newline="")
        w = csv.DictWriter(buf, RESULT_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(self.result_rows())
        write_atomic(self.path / RESULTS_FILE, buf.getvalue())
        self.seal()

    # -- what the screens show --------------------------------------------------------------
    def instructions(self, game: str) -> str:
        """The game's instructions as a model gets them under the session's protocol (the prompt pack's text)."""
        from workstation.engine.promptpack import load_pack

        return _instructions_text(get_game(game), self.settings.protocol, load_pack(self.settings.prompts))

    def play_protocol(self) -> Protocol:
        """The protocol a run plays under (real time: one action per turn, as the play screen sets it)."""
        from dataclasses import replace

        p = self.settings.protocol
        return p if self.settings.mode == "paused" else replace(p, max_actions=1)

    def pace_text(self) -> str:
        fps = FPS_PAPER if self.settings.pace == "paper" else FPS_NATIVE
        seconds = self.settings.protocol.repeat / fps
        total = self.settings.protocol.frames / fps
        frames = self.settings.protocol.frames
        if self.settings.mode == "realtime":
            how = (f"real time: the game never waits; hold keys, and one action is sampled every {seconds:g} s; "
                   f"a run lasts {total:g} s ({frames} frames)")
        else:
            how = (f"paused: the game waits for your plan of 1 to {self.settings.protocol.max_actions} actions, then "
                   f"plays each for {seconds:g} s; a run is {frames} frames ({total:g} s of play)")
        return f"{self.settings.pace} pace ({fps} frames per second); {how}"

    def progress_text(self) -> str:
        scored = [st for st in self.steps if not st.practice]
        done = sum(1 for st in scored if st.done)
        return f"{done} of {len(scored)} scored runs done"


def _instructions_text(game: Any, protocol: Protocol, pack: Any) -> str:
    from workstation.engine.promptpack import display_title

    seconds = protocol.repeat / FPS_PAPER
    text: str = pack.render("instructions", title=display_title(game), guide=pack.guide(game.key, protocol.guide).strip(),
                       actions=", ".join(game.action_names), max_actions=protocol.max_actions,
                       action_seconds=f"{seconds:g}", budget_seconds=f"{protocol.frames / FPS_PAPER:g}").strip()
    return text


def _typed_summary(summary: Summary | dict[str, Any] | None) -> Summary:
    """A run's summary as the typed record; none, or one that does not read as a summary, is an unfinished run."""
    if isinstance(summary, Summary):
        return summary
    try:
        typed: Summary = Summary.from_json(summary or {})
        return typed
    except RecordError:
        return Summary()


def _complete_summary(rec: Path) -> Summary | None:
    """The summary of a complete recording left in ``rec``, or None (missing, unreadable, not complete)."""
    try:
        s = Summary.from_json(read_json(rec / "summary.json"))
    except (UserError, OSError, ValueError):
        return None
    return s if s.complete else None


def _run_id(rec: Path) -> str | None:
    try:
        return Manifest.from_json(read_json(rec / "manifest.json")).run_id
    except (UserError, OSError, ValueError):
        return None

