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
from pathlib import Path
from typing import Any, Protocol

from workstation.store.changes import HandVerdict
from workstation.store.framestore import FrameReader, FrameStoreError
from workstation.store.records import Manifest, MatchTurn, RecordingError, Summary, TurnRecord


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
    from workstation.store.series import plural

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
