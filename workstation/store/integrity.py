"""The fast integrity check: is a recording what its summary says, without re-executing it?

At finish or abort the writer records the size and SHA-256 of every file of
the recording in the summary (``files``). ``problems`` checks them, and checks
that the summary agrees with the turns and frames (a cut-off or emptied
``turns.jsonl``, a summary whose totals were edited). Recordings written
before digests existed get the agreement checks only. ``verify --quick``,
``info``, ``open`` and ``--agent replay:`` use it; ``verify`` re-executes.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, Protocol

from workstation.store.changes import HandVerdict
from workstation.store.framestore import FrameReader, FrameStoreError
from workstation.store.records import (
    USAGE_KEYS,
    Manifest,
    MatchTurn,
    RecordingError,
    Summary,
    TurnRecord,
    rebuild_summary,
)


class Recording(Protocol):
    """What the check reads of a ``workstation.store.recording.Recording`` (which calls it: so no import back)."""

    @property
    def path(self) -> Path: ...

    @property
    def summary_record(self) -> Summary | None: ...

    @property
    def turn_records(self) -> list[TurnRecord]: ...

    @property
    def cut_off_line(self) -> int | None: ...

    def turns_tail(self) -> tuple[int, TurnRecord | None]: ...

    @property
    def frames(self) -> FrameReader: ...

    @property
    def hand(self) -> HandVerdict: ...

    @property
    def manifest_record(self) -> Manifest: ...

    @property
    def match_turns(self) -> list[MatchTurn]: ...

    def outcome(self) -> Summary: ...

SUMMARY = "summary.json"
CHEAP_FILES = ("manifest.json", "turns.jsonl")  # the files whose digests the cheap check holds (not the frames)
CHUNK = 1 << 20


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def file_digests(directory: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file of a recording, by name (the summary and hidden files left out)."""
    out = {}
    for p in sorted(Path(directory).iterdir()):
        if p.is_file() and p.name != SUMMARY and not p.name.startswith("."):
            out[p.name] = {"bytes": p.stat().st_size, "sha256": sha256_of(p)}
    return out


def digest_problems(directory: Path, files: dict[str, Any]) -> list[str]:
    """Each file that is missing, or differs in size or digest from what the summary recorded."""
    found = []
    for name, want in sorted(files.items()):
        path = Path(directory) / name
        if not isinstance(want, dict):
            found.append(f"the summary's entry for {name} is not an object")
            continue
        try:
            if not path.is_file():
                found.append(f"{name} is missing" if not path.exists() else f"{name} is not a file")
                continue
            size = path.stat().st_size
            if size != want.get("bytes"):
                found.append(f"{name} is {size} bytes; the summary recorded {want.get('bytes')}")
            elif sha256_of(path) != want.get("sha256"):
                found.append(f"{name} differs from the digest the summary recorded")
        except OSError as e:
            found.append(f"{name} cannot be read ({e.strerror or e})")
    return found


def interrupted_tail(rec: Recording) -> int:
    """Frames after a match's last recorded turn that a turn interrupted mid-way made (0: none, or not allowed).

    A match stopped in the middle of a turn (Ctrl-C) has stored that turn's frames and its
    summary counts them, but the turn's record was never written. ``verify`` re-executes the
    recorded turns and names those frames as unchecked; the fast check and ``info`` take the
    same rule: an incomplete match, at most one turn's frames (a whole plan and a reset frame).
    """
    from workstation.game.protocol import Protocol

    s, turns = rec.summary_record, rec.turn_records
    if s is None or not turns or not rec.manifest_record.is_match or s.complete:
        return 0
    try:
        protocol = Protocol.from_json(rec.manifest_record.protocol or {})
    except (TypeError, ValueError, KeyError):
        return 0
    trailing = s.frames - turns[-1].last_frame
    return trailing if 0 < trailing <= protocol.max_actions * protocol.repeat + 1 else 0


def agreement_problems(rec: Recording, frames: bool = True) -> list[str]:
    """Where the summary contradicts the turns or the frames (a summary-less run has nothing to contradict);
    ``frames=False``: the frame store is not read (the listing's cheap check)."""
    s = rec.summary_record
    if s is None:
        return []
    found = []
    seed = rec.manifest_record.seed  # the seed is stored twice: the summary's must be the manifest's
    if s.seed is not None and seed is not None and s.seed != seed:
        found.append(f"the summary says seed {s.seed}; the manifest's seed is {seed}")
    turns = rec.turn_records
    if rec.cut_off_line is not None:
        found.append(f"turns.jsonl is cut off at line {rec.cut_off_line}, though the summary says the run ended")
    if not turns and s.turns:
        found.append(f"turns.jsonl holds no turns; the summary says {s.turns}")
    elif s.turns != len(turns):
        found.append(f"the summary says {s.turns} turns; turns.jsonl holds {len(turns)}")
    if turns:
        last = turns[-1]
        reward = sum(t.reward for t in turns)
        tail = interrupted_tail(rec)  # the unrecorded turn's frames (and any reward in them) are not the turns'
        if tail == 0 and (abs(s.total_reward - reward) > 1e-6 or abs(s.total_reward - last.score) > 1e-6):
            found.append(f"the summary's total_reward {s.total_reward:g} contradicts the turns' "
                         f"rewards {reward:g}")
        elif abs(reward - last.score) > 1e-6:
            found.append(f"the turns' rewards {reward:g} contradict the last turn's score {last.score:g}")
        if tail == 0 and s.frames != last.last_frame:
            found.append(f"the summary says {s.frames} frames; the last turn ends at frame {last.last_frame}")
        lost = sum(t.lives_lost for t in turns)
        if tail == 0 and s.lives_lost != lost:
            found.append(f"the summary says {s.lives_lost} lives lost; the turns lose {lost}")
    if not frames:
        return found
    try:
        n = len(rec.frames)
    except RecordingError as e:
        found.append(str(e))
    else:
        if (turns or s.frames) and n != s.frames + 1:
            found.append(f"the frame store holds {n} frames; the summary says frames 0..{s.frames}")
    found += summary_problems(rec)
    return found


WALL_MAX_S = 366 * 24 * 3600  # no run lasts a year: a longer wall_s is an edit, not a measurement
TOLERANCE = 1e-6  # a summary's cost is the sum of its calls' rounded to 6 places


def summary_problems(rec: Recording) -> list[str]:
    """Where summary.json contradicts the manifest or the turns, field by field (the totals and the frames are
    held against the turns above). What each field must agree with:

    - its keys: the summary's own fields (``Summary.spec()``), and ``import`` for an imported run: any other key
      was not written by the workstation;
    - every number finite; ``wall_s`` (how long the run took) 0..a year, or null;
    - ``agent``: the manifest's agent spec (a match: ``SIDE1 vs SIDE2``, the manifest's seats);
    - ``complete``: true exactly when the run was not stopped (``stopped`` null) and played its whole frame budget
      (the manifest's protocol); an interrupted run (fewer turns, ``stopped`` set) stays false;
    - ``invalid_turns``, ``failed_turns``, ``games_ended``/``episodes_ended``: counted from the turns;
    - ``calls``, ``usage`` and ``cost_usd``: the turns' replies (and ``stopped_call``, the call that ended the
      run); where the turns do not hold every call (a step-mode re-send, an experience library's requests, a
      match stopped mid-call) at least the turns'. A match holds each side's account against that side's turns.
    """
    if rec.summary_record is None:
        return []
    found = summary_claim_problems(rec)
    if rec.manifest_record.is_match:
        return found + _match_account_problems(rec)
    return found + _account_and_count_problems(rec)


def summary_claim_problems(rec: Recording) -> list[str]:
    """The part of ``summary_problems`` that reads no turn (its keys, numbers, agent and complete against the
    manifest): cheap enough for a listing (``ls``) of many recordings."""
    if rec.summary_record is None:
        return []
    s, m = rec.outcome(), rec.manifest_record  # a field an older writer left out: filled in from the turns
    found = []
    allowed = ("import",) if m.imported else ()
    unknown = [k for k in s.extra if k not in allowed]
    if unknown:
        found.append(f"summary.json holds {', '.join(repr(k) for k in unknown)}, which the workstation never "
                     "writes in a summary")
    for key in ("total_reward", "cost_usd", "wall_s"):
        value = getattr(s, key)
        if value is not None and not math.isfinite(value):
            found.append(f"summary.json's {key} is {value}, not a finite number")
    if s.wall_s is not None and math.isfinite(s.wall_s) and not 0 <= s.wall_s <= WALL_MAX_S:
        found.append(f"summary.json's wall_s is {s.wall_s:g}, outside 0..{WALL_MAX_S} seconds (a year)")
    if s.cost_usd is not None and s.cost_usd < 0:
        found.append(f"summary.json's cost_usd is {s.cost_usd:g}, below 0")
    if m.is_match:
        seats = [p.get("agent", {}).get("spec") if isinstance(p, dict) and isinstance(p.get("agent"), dict) else None
                 for p in (m.players if isinstance(m.players, list) else [])]
        want_agent = f"{seats[0]} vs {seats[1]}" if len(seats) == 2 and all(seats) else None
    else:
        want_agent = m.agent_spec
    if want_agent is not None and s.agent is not None and s.agent != want_agent:
        found.append(f"summary.json's agent {s.agent!r} is not the manifest's {want_agent!r}")
    budget = m.budget
    if budget is not None:
        played = s.stopped is None and s.frames >= budget
        if s.complete and not played:
            why = f"stopped: {s.stopped}" if s.stopped is not None else f"{s.frames} of {budget} frames"
            found.append(f"summary.json says complete, but the run did not play its budget ({why})")
        elif not s.complete and played:
            found.append(f"summary.json says complete false, but the run played its whole budget of {budget} "
                         "frames and was not stopped")
    return found


def _account_and_count_problems(rec: Recording) -> list[str]:
    """A one-player summary's counts and account (calls, usage, cost) against its turns."""
    s, m = rec.outcome(), rec.manifest_record
    found: list[str] = []
    turns = rec.turn_records
    ref = rebuild_summary(m, turns, None)
    counts = [("invalid_turns", s.invalid_turns, ref.invalid_turns), ("failed_turns", s.failed_turns, ref.failed_turns)]
    if m.rule_version >= 2:
        counts.append(("games_ended", s.games_ended, ref.games_ended))
    else:
        counts.append(("episodes_ended", s.episodes_ended, ref.episodes_ended))
    for key, stored, want in counts:
        if stored is not None and want is not None and stored != want:
            found.append(f"summary.json's {key} is {stored}; the turns count {want}")
    calls, usage = ref.calls, dict(ref.usage)
    costs = [t.cost_usd for t in turns if t.cost_usd is not None]
    priced = all(t.cost_usd is not None for t in turns if t.usage is not None)
    stop = s.stopped_call or {}
    if stop:  # the call that ended the run: counted in the summary, in no turn
        attempts = stop.get("attempts")
        calls += len(attempts) if isinstance(attempts, list) and attempts else (1 if stop.get("usage") is not None else 0)
        stop_usage = stop.get("usage")
        if isinstance(stop_usage, dict):
            usage = {k: usage.get(k, 0) + _count(stop_usage.get(k)) for k in USAGE_KEYS}
        if _is_number(stop.get("cost_usd")):
            costs.append(float(stop["cost_usd"]))
        elif stop_usage is not None:
            priced = False
    whole = m.experience is None and not any(t.discarded_replies for t in turns)
    return found + _account_problems("summary.json", s.calls, s.usage, s.cost_usd,
                                     calls, usage, sum(costs), priced, whole)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> int:
    return int(value) if _is_number(value) and math.isfinite(value) else 0


def _account_problems(where: str, calls: Any, usage: Any, cost: Any, want_calls: int, want_usage: dict[str, Any],
                      want_cost: float, priced: bool, whole: bool) -> list[str]:
    """Where an account (calls, usage, cost) contradicts its turns' sums: equal where the turns hold every call
    (``whole``), else at least them."""
    found = []
    if not _is_number(calls) or (calls != want_calls if whole else calls < want_calls):
        found.append(f"{where}'s calls {calls!r} contradict the turns' {want_calls} "
                     f"{'calls' if whole else 'calls (at least)'}")
    usage = usage if isinstance(usage, dict) else {}
    for key in USAGE_KEYS:
        got, want = usage.get(key, 0), want_usage.get(key, 0)
        if not _is_number(got) or not math.isfinite(got) or (got != want if whole else got < want):
            found.append(f"{where}'s usage {key} {got!r} contradicts the turns' {want}")
            break
    if cost is None:
        if whole and priced:
            found.append(f"{where}'s cost_usd is null (unpriced), but every reply in the turns has its price "
                         f"(${want_cost:.6f})")
    elif not _is_number(cost) or not math.isfinite(cost):
        found.append(f"{where}'s cost_usd {cost!r} is not a finite number")
    elif not priced:
        found.append(f"{where}'s cost_usd is {cost:g}, but a reply in the turns has no price (the cost is unknown)")
    elif abs(cost - want_cost) > TOLERANCE if whole else cost < want_cost - TOLERANCE:
        found.append(f"{where}'s cost_usd {cost:g} contradicts the turns' ${want_cost:.6f}")
    return found


def _match_account_problems(rec: Recording) -> list[str]:
    """A match's account: each side's calls, usage and cost against its turns (at least them when the match was
    stopped, maybe mid-call), and the summary's totals against the sides'."""
    s = rec.summary_record
    if s is None or _sides(s.players, "summary.json's players") is not None:
        return []  # match_problems names it
    try:
        turns = rec.match_turns
    except RecordingError:
        return []  # match_problems names it
    found = []
    whole = s.complete
    for k, p in enumerate(s.players):
        sides = [t.players[k] for t in turns]
        calls = sum(len(t.attempts) or (1 if t.usage is not None else 0) for t in sides)
        usage = {key: sum(_count((t.usage or {}).get(key)) for t in sides) for key in USAGE_KEYS}
        cost = sum(t.cost_usd for t in sides if t.cost_usd is not None)
        priced = all(t.cost_usd is not None for t in sides if t.usage is not None)
        found += _account_problems(f"summary.json's side {k + 1}", p.get("calls"), p.get("usage"),
                                   p.get("cost_usd"), calls, usage, cost, priced, whole)
    side_calls = [p.get("calls") for p in s.players]
    if all(_is_number(c) for c in side_calls) and s.calls != sum(side_calls):
        found.append(f"summary.json's calls {s.calls} are not its sides' {sum(side_calls)}")
    side_costs = [p.get("cost_usd") for p in s.players]
    if all(_is_number(c) for c in side_costs) and (s.cost_usd is None or abs(s.cost_usd - sum(side_costs)) > TOLERANCE):
        found.append(f"summary.json's cost_usd {s.cost_usd!r} is not its sides' {sum(side_costs):g}")
    return found


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _sides(value: Any, where: str) -> str | None:
    """Why ``value`` is not the two sides of a match (None: it is): a list of two objects, sides 1 and 2."""
    if not isinstance(value, list) or len(value) != 2:
        what = f"{len(value)} entries" if isinstance(value, list) else type(value).__name__
        return f"{where} holds {what}, not the match's two sides"
    if not all(isinstance(p, dict) for p in value) or [p.get("side") for p in value] != [1, 2]:
        return f"{where} are not sides 1 and 2, in order"
    return None


def match_problems(rec: Recording) -> list[str]:
    """Where a two-player match's manifest, turns and summary disagree (its scores, sides, result and winner).

    A one-player reader's checks see side 1 only (a match's ``total_reward`` is side 1's score): this holds
    both sides' scores in the summary against their turns, and the result and winner against the scores.
    """
    m = rec.manifest_record
    why = _sides(m.players, "manifest.json's players")
    if why is None and not all(isinstance(p.get("agent"), dict) for p in m.players):
        why = "manifest.json's players do not each name their agent"
    if why:
        return [why]
    try:
        turns = rec.match_turns  # typed: a turn without its two sides, or a score that is not a number, is named
    except RecordingError as e:
        return [str(e)]
    s = rec.summary_record
    if s is None:
        return []
    why = _sides(s.players, "summary.json's players")
    if why is None and not all(_number(p.get("score")) for p in s.players):
        why = "summary.json's players lack a score"
    if why:
        return [why]
    found = []
    for k in (0, 1):  # each side of the summary is the side the manifest seated
        seated = m.players[k]["agent"].get("spec")
        if s.players[k].get("agent") != seated:
            found.append(f"the summary's side {k + 1} agent {s.players[k].get('agent')!r} is not the manifest's "
                         f"{seated!r}")
    scores = [float(p["score"]) for p in s.players]
    if turns and interrupted_tail(rec) == 0:
        for k in (0, 1):
            last = turns[-1].players[k].score
            rewards = sum(t.players[k].reward for t in turns)
            if abs(scores[k] - last) > 1e-6 or abs(scores[k] - rewards) > 1e-6:
                found.append(f"the summary's side {k + 1} score {scores[k]:g} contradicts its turns "
                             f"(score {last:g}, rewards {rewards:g})")
    team = m.team is True
    if team and (not _number(s.team_score) or abs(float(s.team_score) - sum(scores)) > 1e-6):
        found.append(f"the summary's team_score {s.team_score!r} is not the sides' sum {sum(scores):g}")
    winner = None if team or scores[0] == scores[1] else (1 if scores[0] > scores[1] else 2)
    result = "team" if team else ("draw" if winner is None else f"side {winner} wins")
    if s.winner != winner or s.result != result:
        found.append(f"the summary's result {s.result!r} (winner {s.winner!r}) contradicts the "
                     f"scores {scores[0]:g} : {scores[1]:g}")
    return found


def problems(rec: Recording, digests: bool = True) -> list[str]:
    """Everything the fast check finds wrong with ``rec`` (empty: nothing found)."""
    found: list[str] = []
    s = rec.summary_record
    if digests and s is not None and s.files:
        found += digest_problems(rec.path, s.files)
    return found + _record_problems(rec, frames=True)


def cheap_problems(rec: Recording, every_turn: bool = True) -> list[str]:
    """The fast check without the frames (a batch's ``verify --quick``; ``ls`` with ``every_turn=False``): the
    digests of ``manifest.json`` and ``turns.jsonl``, the summary against the turns and the manifest, the verdict
    on changes by hand and a match's sides. The frame store is neither hashed nor read (``verify --quick`` hashes
    it, ``verify`` re-executes it): flipped frame bytes are found there, not here.

    ``every_turn=False`` (a listing, once per recording and cached): when the turns' digest holds, they are as the
    writer wrote them, and the summary is held against their count and their last turn only (its score, its last
    frame), not typed turn by turn; what a listing shows (score, turns, frames) is covered, a summary's other
    totals are the full checks'. A match, and a recording without digests, get every turn checked."""
    found: list[str] = []
    s = rec.summary_record
    if s is not None and s.files:
        found += digest_problems(rec.path, {name: want for name, want in s.files.items() if name in CHEAP_FILES})
        if not every_turn and not found and not rec.manifest_record.is_match:
            return _written_turns_problems(rec, s) + rec.hand.problems
    return found + _record_problems(rec, frames=False)


def _written_turns_problems(rec: Recording, s: Summary) -> list[str]:
    """The summary against turns known to be as written: the seed, their count, the last turn's score and frame."""
    found = []
    seed = rec.manifest_record.seed
    if s.seed is not None and seed is not None and s.seed != seed:
        found.append(f"the summary says seed {s.seed}; the manifest's seed is {seed}")
    try:
        n, last = rec.turns_tail()
    except RecordingError as e:
        return [*found, str(e)]
    if s.turns != n:
        found.append(f"the summary says {s.turns} turns; turns.jsonl holds {n}")
    if last is not None:
        if abs(s.total_reward - last.score) > 1e-6:
            found.append(f"the summary's total_reward {s.total_reward:g} contradicts the turns' "
                         f"rewards {last.score:g}")
        if s.frames != last.last_frame:
            found.append(f"the summary says {s.frames} frames; the last turn ends at frame {last.last_frame}")
    return found


def _record_problems(rec: Recording, frames: bool) -> list[str]:
    """The records' own agreement (summary, turns, manifest, changes, a match's sides); the frames' with ``frames``."""
    found: list[str] = []
    try:
        found += agreement_problems(rec, frames=frames)
    except RecordingError as e:
        found.append(str(e))
    found += rec.hand.problems  # a run changed by hand whose manifest, turns and summary disagree about it
    if rec.manifest_record.is_match:
        try:
            found += match_problems(rec)
        except RecordingError as e:
            found.append(str(e))
    return found


def _decode_all(rec: Recording) -> list[str]:
    """Read every frame back (for recordings without digests): the first one that fails."""
    try:
        frames = rec.frames
        for i in range(len(frames)):
            frames.indices(i)
            frames.ram(i)
    except (FrameStoreError, RecordingError, IndexError, ValueError) as e:
        return [str(e)]
    return []


def quick_verdict(rec: Recording) -> tuple[bool, str]:
    """(sound, one line) for ``workstation verify --quick``: no re-execution."""
    found = problems(rec)
    s = rec.summary_record
    has_digests = bool(s is not None and s.files)
    if not found and not has_digests:
        found = _decode_all(rec)
    if found:
        more = f" (and {len(found) - 1} more: {'; '.join(found[1:3])})" if len(found) > 1 else ""
        return False, f"DAMAGED: {found[0]}{more} ({rec.path})"
    n_turns, n_frames = len(rec.turn_records), len(rec.frames)
    if n_turns == 0 and n_frames == 0:
        return False, f"NOTHING TO CHECK: {rec.path} holds no frames and no turns"
    from workstation.base.words import plural

    turns_, frames_ = plural(n_turns, "turn"), plural(n_frames, "frame")
    tail = interrupted_tail(rec)
    if tail:
        frames_ += (f" (the last {plural(tail, 'frame')} belong to a turn interrupted before its record was "
                    "written: `workstation verify` leaves them unchecked)")
    if has_digests and s is not None and s.files:
        what = f"{len(s.files)} files match their digests; the summary agrees with {turns_} and {frames_}"
    elif s is not None:
        what = (f"the summary agrees with {turns_} and {frames_}, all frames read back "
                "(written before digests: `workstation verify` re-executes it)")
    else:
        what = (f"{turns_} and {frames_} read back; no summary (killed, or still running), so no digests "
                "to check")
    return True, f"OK (quick): {what} ({rec.path})"
