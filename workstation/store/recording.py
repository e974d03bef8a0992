"""A run on disk: written as it plays, readable at any point, even after a crash.

Layout of a recording directory:

- ``manifest.json``: what the run is (game, seed, agent, settings); written
  first, atomically. It is rewritten (atomically) only when a person changes
  the run by hand: its ``changes`` list and run id then say so
  (``workstation.store.changes``); at the end such a run's folder is renamed
  to carry its own run id.
- ``turns.jsonl``: one JSON object per turn, appended and flushed each turn.
- ``frames.*``: the frame store (see ``workstation.store.framestore``).
- ``summary.json``: the outcome, written last by atomic rename. Its presence
  with ``"complete": true`` is the only sign that a run finished.

Nothing is rewritten: a killed run leaves a readable prefix, and
``Recording.summary_or_partial`` rebuilds a summary from its turns.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from workstation.store import changes as hand_changes
from workstation.store import integrity
from workstation.store.atomic import write_atomic
from workstation.store.framestore import FrameReader, FrameStoreError, FrameWriter
from workstation.store.records import (
    Manifest,
    MatchTurn,
    RecordError,
    RecordingError,
    Summary,
    TurnRecord,
    rebuild_summary,
)

# what a turn record changed by hand carries (workstation.store.changes.of_turn), in any JSON spacing
_HAND_MARK = re.compile(rb'"(?:overridden|human_plan|current_only)"\s*:\s*true|"variant"\s*:\s*"(?:edited|current_only)"'
                        rb'|"discarded_replies"\s*:\s*\[\s*[^\]\s]')
MANIFEST = "manifest.json"
TURNS = "turns.jsonl"
SUMMARY = "summary.json"
T = TypeVar("T")
UNFINISHED = "unfinished: no summary.json (the run was killed, or is still running)"


class RecordingWriteError(Exception):
    """Writing a recording failed (disk full, permission lost, directory removed): the run
    stops with this one line, exit status 1; what was written before stays readable."""


class DamagedRecording(RecordingError):
    """A recording that reads but fails the fast integrity check: one line, exit status 1 (as ``verify``)."""


def _not_a_file(path: Path) -> str | None:
    """Why ``path``, which exists or is a link, cannot be read as a file (None: a file, or absent)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "a broken link" if os.path.islink(path) else None
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    import stat

    if stat.S_ISDIR(st.st_mode):
        return "a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    return None


def _plain(value: Any) -> Any:
    """JSON fallback for numpy scalars and arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(record: dict[str, Any]) -> str:
    """Compact JSON of one record (no spaces, UTF-8 kept as is)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False, default=_plain)


def _write_atomic(path: Path, record: dict[str, Any], exclusive: bool = False) -> None:
    """Write JSON to ``path`` via a temporary file; with ``exclusive``, fail if it exists."""
    write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False, default=_plain) + "\n", exclusive=exclusive)


class RecordingWriter:
    """Writes one run: manifest now, a line per turn, frames as they come, summary last."""

    def __init__(self, directory: Path, manifest: dict[str, Any], height: int, width: int = 160) -> None:
        self._start(directory, manifest)
        try:
            self.frames = FrameWriter(self.path, height, width)
        except FrameStoreError as e:
            self._turns.close()
            raise RecordingError(str(e)) from None

    def _start(self, directory: Path, manifest: dict[str, Any]) -> None:
        self.path = Path(directory)
        self.manifest = dict(manifest)
        self.record = self._typed_manifest(manifest)
        self.changes: list[dict[str, Any]] = list(self.record.changes or [])
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            _write_atomic(self.path / MANIFEST, manifest, exclusive=True)
        except FileExistsError:
            raise RecordingError(
                f"{self.path} already holds a recording (manifest.json); choose a new directory"
            ) from None
        self._turns = open(self.path / TURNS, "ab")
        self.closed = False

    @classmethod
    def branch_from(
        cls, directory: Path, manifest: dict[str, Any], parent: Recording, n_frames: int, n_turns: int
    ) -> RecordingWriter:
        """A new recording that starts as a copy of ``parent``'s first frames and turns.

        For rewind-and-branch: frames ``0..n_frames-1`` (with RAM) and the first
        ``n_turns`` turn records are copied; the run then continues from there.
        The manifest gets a ``branch`` entry naming the parent unless it has one.
        """
        if not 0 <= n_frames <= len(parent.frames):
            raise RecordingError(f"cannot branch at frame {n_frames}: {parent.path} holds {len(parent.frames)} frames")
        copied = parent.raw_turns()  # the parent's turn records as written, copied line for line
        if not 0 <= n_turns <= len(copied):
            raise RecordingError(f"cannot branch at turn {n_turns}: {parent.path} holds {len(copied)} turns")
        manifest = {**manifest}
        manifest.setdefault("branch", {"parent": str(parent.path), "frames": n_frames, "turns": n_turns})
        self = cls.__new__(cls)
        self._start(directory, manifest)
        try:
            self.frames = FrameWriter.branch(self.path, parent.frames, n_frames)
        except FrameStoreError as e:
            self._turns.close()
            raise RecordingError(str(e)) from None
        self._turns.write("".join(dumps(t) + "\n" for t in copied[:n_turns]).encode("utf-8"))
        self.frames.flush()
        self._turns.flush()
        return self

    @staticmethod
    def _typed_manifest(manifest: dict[str, Any]) -> Manifest:
        try:
            return Manifest.from_json(manifest)
        except RecordError as e:
            raise RecordingError(f"cannot write a recording whose manifest is not one: {e}") from None

    def _check_open(self) -> None:
        if self.closed:
            raise RecordingError(f"the recording {self.path} is already finished; start a new one")

    def add_frame(self, screen: np.ndarray, rgb: np.ndarray | Callable[[], np.ndarray], ram: np.ndarray) -> int:
        """Store one emulator frame; returns its index."""
        if self.closed:
            self._check_open()
        try:
            return self.frames.append(screen, rgb, ram)
        except OSError as e:
            raise self._write_error(e) from e

    def add_turn(self, record: dict[str, Any] | TurnRecord | MatchTurn) -> None:
        """Append one turn record, flushing frames first so every turn's frames are on disk."""
        self._check_open()
        if isinstance(record, (TurnRecord, MatchTurn)):
            record = record.to_json()
        line = (dumps(record) + "\n").encode("utf-8")
        try:
            self.frames.flush()
            self._turns.write(line)
            self._turns.flush()
        except OSError as e:
            raise self._write_error(e) from e

    def add_changes(self, new: list[dict[str, Any]]) -> None:
        """Note changes made by hand: the manifest's ``changes`` and run id are rewritten at once."""
        if not new:
            return
        self._check_open()
        self.changes.extend(new)
        plain = self.record.plain_run_id or self.record.run_id
        manifest = {**self.manifest, "plain_run_id": plain, "changes": list(self.changes),
                    "run_id": hand_changes.changed_run_id(plain, self.changes)}
        try:
            _write_atomic(self.path / MANIFEST, manifest)
        except OSError as e:
            raise self._write_error(e) from e
        self.manifest, self.record = manifest, self._typed_manifest(manifest)

    def _rename_for_changes(self) -> None:
        """A changed run's folder carries its own run id (``GAME-AGENT-sSEED-RUNID8``), as a new run's does."""
        m = self.record
        run_id = m.run_id
        if not self.changes or not run_id or run_id[:8] in self.path.name:
            return
        from workstation.store import run_dirs

        name = run_dirs.dir_name(str(m.game), m.agent_spec or "agent", m.seed, run_id)
        self.path = run_dirs.rename_to(self.path, name)

    def _write_error(self, e: OSError) -> RecordingWriteError:
        reason = e.strerror or str(e) or type(e).__name__
        where = e.filename or self.path
        return RecordingWriteError(f"cannot write the recording {where}: {reason}; free space, fix the "
                                   f"permissions or choose another --out (what was written so far is kept)")

    def finish(self, summary: dict[str, Any] | Summary) -> None:
        """Close the run and write its summary (complete unless the summary says otherwise)."""
        self._close({"complete": True, **_as_dict(summary)})

    def abort(self, summary: dict[str, Any] | Summary) -> None:
        """Close a run that did not finish; the summary records why (``stopped``)."""
        self._close({"stopped": "aborted", **_as_dict(summary), "complete": False})

    def _close(self, summary: dict[str, Any]) -> None:
        """Close the files, then write the summary with every file's size and digest (``files``)."""
        self._check_open()
        self.closed = True
        failed: list[OSError] = []
        for close in (self.frames.close, self._turns.close):  # each file is closed, whatever the other did
            try:
                close()
            except OSError as e:
                failed.append(e)
        try:
            summary = {**summary, "files": integrity.file_digests(self.path)}
        except OSError as e:  # the directory went away or cannot be read: the summary goes without digests
            failed.append(e)
        try:  # the summary is still written where the disk allows it: it says why the run stopped
            _write_atomic(self.path / SUMMARY, summary)
        except OSError as e:
            failed.append(e)
        if failed:
            raise self._write_error(failed[0]) from failed[0]
        self._rename_for_changes()

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        if not self.closed:
            reason = f"error: {exc_type.__name__}" if exc_type else "not finished"
            self.abort({"stopped": reason})


def _as_dict(summary: dict[str, Any] | Summary) -> dict[str, Any]:
    return summary.to_json() if isinstance(summary, Summary) else dict(summary)


class Recording:
    """Reads a recording directory, finished or not.

    Read it through its typed records: ``manifest_record``, ``summary_record``, ``turn_records`` (a
    two-player match's: ``match_turns``), checked (``workstation.store.records``); ``outcome()`` is the
    summary, rebuilt for a run that wrote none. Opening checks the manifest's format.

    ``raw_manifest()``, ``raw_summary()`` and ``raw_turns()`` are the JSON as written, for output and
    copying only (``info --json``, the HTML page, a branch's copy); a field is never read out of them.
    ``manifest``, ``summary`` and ``turns`` are their aliases, kept for outside code (scripts, older tests)
    and hidden from the type checker: code in workstation/ and screens/ cannot use them.
    """

    def __init__(self, directory: str | Path) -> None:
        from workstation.store.local_paths import refuse_uri

        refuse_uri(directory, "", "a recording is read from a local directory")
        self.path = Path(directory)
        if self.path.is_file():
            raise RecordingError(f"{self.path} is a file, not a recording; pass the directory that holds "
                                 "manifest.json")
        if not self.path.is_dir():
            raise RecordingError(f"no recording at {self.path}: the directory does not exist")
        manifest_path = self.path / MANIFEST
        for name in (MANIFEST, SUMMARY, TURNS, "frames.bin", "frames.idx", "frames.pal", "frames.ram"):
            why = _not_a_file(self.path / name)
            if why:
                raise RecordingError(f"damaged recording: {self.path / name} is {why}")
        if not manifest_path.is_file():
            raise RecordingError(
                f"not a recording: {self.path} (no manifest.json); pass a directory written by 'workstation run'"
            )
        self._manifest_json = self._load(manifest_path)
        self.manifest_record: Manifest = self._typed(Manifest, self._manifest_json, manifest_path)
        summary_path = self.path / SUMMARY
        self._summary_json: dict[str, Any] | None = self._load(summary_path) if summary_path.is_file() else None
        self.summary_record: Summary | None = None
        if self._summary_json is not None:  # written by the workstation alone: a field of the wrong type is damage
            try:  # (exit 1)
                self.summary_record = Summary.from_json(self._summary_json)
            except RecordError as e:
                raise DamagedRecording(f"damaged recording {self.path}: cannot read {summary_path}: {e}") from None
        self.cut_off_line: int | None = None  # the last line of turns.jsonl, cut off mid-write

    @staticmethod
    def _typed(cls: Any, data: dict[str, Any], path: Path) -> Any:
        try:
            return cls.from_json(data)
        except RecordError as e:
            raise RecordingError(f"cannot read {path}: {e}") from None

    @staticmethod
    def _load(path: Path) -> dict[str, Any]:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:  # the system will not let it be read: bad input (exit 2), not damage
            raise RecordingError(f"damaged recording: {path} cannot be read ({e.strerror or e})") from None
        except UnicodeDecodeError as e:  # written by the workstation as UTF-8 JSON: anything else is damage (exit 1)
            raise DamagedRecording(f"damaged recording: {path} cannot be read ({str(e).splitlines()[0]})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise DamagedRecording(f"damaged recording: {path} cannot be read ({str(e).splitlines()[0]})") from None
        if not isinstance(data, dict):
            raise DamagedRecording(f"damaged recording: {path} holds {type(data).__name__}, not a JSON object")
        return data

    def raw_manifest(self) -> dict[str, Any]:
        """manifest.json as written (the JSON object, checked as ``manifest_record``): for output and copying
        only, never to read a field from (read ``manifest_record``). Not to be changed."""
        return self._manifest_json

    def raw_summary(self) -> dict[str, Any] | None:
        """summary.json as written (None: the run wrote none), checked as ``summary_record``: for output and
        copying only, never to read a field from (read ``summary_record`` or ``outcome()``). Not to be changed."""
        return self._summary_json

    def raw_turns(self) -> list[dict[str, Any]]:
        """turns.jsonl's records as written (a cut-off last line left out): for output and copying only, never
        to read a field from (read ``turn_records`` or ``match_turns``). Not to be changed."""
        return self._turns_json

    if not TYPE_CHECKING:  # kept for outside code (scripts, older tests); hidden from the type checker, so that
        # workstation/ and screens/ (mypy-checked) cannot read a field out of them: they read the typed records

        @property
        def manifest(self) -> dict[str, Any]:
            """Alias of ``raw_manifest()`` for outside code; read ``manifest_record``."""
            return self.raw_manifest()

        @property
        def summary(self) -> dict[str, Any] | None:
            """Alias of ``raw_summary()`` for outside code; read ``summary_record`` or ``outcome()``."""
            return self.raw_summary()

        @property
        def turns(self) -> list[dict[str, Any]]:
            """Alias of ``raw_turns()`` for outside code; read ``turn_records`` (a match's: ``match_turns``)."""
            return self.raw_turns()

    @property
    def complete(self) -> bool:
        return self.summary_record is not None and self.summary_record.complete

    @cached_property
    def hand(self) -> hand_changes.HandVerdict:
        """The one verdict on what a person changed (``workstation.store.changes.verdict``): the changes, and
        where the manifest, turns and summary disagree about them (then the recording is damaged)."""
        try:
            turns = self.turn_records if self._may_show_changes() else []
        except RecordingError:  # damaged turns: the damage is reported where the turns are read
            turns = []
        return hand_changes.verdict(self.manifest_record, self.summary_record, turns)

    def _may_show_changes(self) -> bool:
        """Whether turns.jsonl holds any mark of a change by hand: a search of its bytes, so a listing of many
        plain runs need not read their turns (a file it cannot read is read, and reported, as turns)."""
        if "turn_records" in self.__dict__:
            return True
        try:
            raw = (self.path / TURNS).read_bytes()
        except OSError:
            return True
        return _HAND_MARK.search(raw) is not None

    @property
    def changes(self) -> list[dict[str, Any]]:
        """What a person changed (``workstation.store.changes``); older recordings': read from their turns."""
        return self.hand.changes

    @property
    def interventions(self) -> dict[str, int]:
        """The changes by hand per kind (``{}`` for a plain run)."""
        return self.hand.counts

    @property
    def plain_run_id(self) -> str | None:
        """The run id of the same spec played untouched."""
        m = self.manifest_record
        return m.plain_run_id if m.plain_run_id is not None else m.run_id

    @property
    def run_id(self) -> str | None:
        """This run's id: the plain id, or for a run changed by hand, one that includes what was changed."""
        if self.manifest_record.changes is not None:
            rid = self.manifest_record.run_id
            return rid if isinstance(rid, str) else None
        return hand_changes.changed_run_id(self.manifest_record.run_id, self.changes)

    @cached_property
    def _turns_json(self) -> list[dict[str, Any]]:
        """turns.jsonl read once: the records in order; a cut-off last line (killed writer) is left out."""
        try:
            raw = (self.path / TURNS).read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise RecordingError(f"damaged recording: {self.path / TURNS} cannot be read ({e.strerror or e})") from None
        lines = raw.split(b"\n")
        out = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if number == len(lines):  # the last line, without its newline: cut off mid-write
                    self.cut_off_line = number
                    break
                raise DamagedRecording(
                    f"damaged recording: {self.path / TURNS} line {number} is not valid JSON"
                ) from None
            if not isinstance(record, dict):
                raise DamagedRecording(f"damaged recording: {self.path / TURNS} line {number} holds "
                                     f"{type(record).__name__}, not a JSON object (a turn record)")
            out.append(record)
        return out

    def turns_tail(self) -> tuple[int, TurnRecord | None]:
        """How many turn records turns.jsonl holds, and the last one typed, without typing the others: what a
        listing holds the summary against once the turns' digest says they are as written."""
        if "turn_records" in self.__dict__:
            turns = self.turn_records
            return len(turns), (turns[-1] if turns else None)
        try:
            raw = (self.path / TURNS).read_bytes()
        except FileNotFoundError:
            return 0, None
        except OSError as e:
            raise RecordingError(f"damaged recording: {self.path / TURNS} cannot be read ({e.strerror or e})") from None
        lines = [line for line in raw.split(b"\n") if line.strip()]
        if not lines:
            return 0, None
        try:
            return len(lines), TurnRecord.from_json(json.loads(lines[-1]))
        except (json.JSONDecodeError, UnicodeDecodeError, RecordError) as e:
            raise RecordingError(f"damaged recording: {self.path / TURNS} turn record {len(lines)}: "
                                 f"{e if isinstance(e, RecordError) else 'not valid JSON'}") from None

    @cached_property
    def turn_records(self) -> list[TurnRecord]:
        """The turn records, typed; a record with a field of the wrong type is a one-line error."""
        return self._typed_turns(TurnRecord.from_json)

    @cached_property
    def match_turns(self) -> list[MatchTurn]:
        """A two-player match's turn records, typed (both sides); a malformed one is a one-line error."""
        return self._typed_turns(MatchTurn.from_json)

    def _typed_turns(self, parse: Callable[[dict[str, Any]], T]) -> list[T]:
        """Each turn record through ``parse``; a malformed one is a one-line error naming its number."""
        out = []
        for number, t in enumerate(self._turns_json, 1):
            try:
                out.append(parse(t))
            except RecordError as e:
                raise DamagedRecording(f"damaged recording: {self.path / TURNS} turn record {number}: {e}") from None
        return out

    @cached_property
    def frames(self) -> FrameReader:
        try:
            return FrameReader(self.path)
        except FrameStoreError as e:
            raise DamagedRecording(f"damaged recording: {e}") from None
        except OSError as e:
            raise RecordingError(f"damaged recording: {e.filename or self.path} cannot be read "
                                 f"({e.strerror or e})") from None

    def outcome(self) -> Summary:
        """The summary, typed; for a run that wrote none (killed), rebuilt from its turn records.

        A rebuilt summary has every field a finished run's has (usage, cost, calls,
        invalid turns, why it stopped); a stored one missing some (written by an
        older version, or an abort that knew only why) gets them from the turns.
        """
        if self.summary_record is None:
            rebuilt = rebuild_summary(self.manifest_record, self.turn_records, UNFINISHED)
            return replace(rebuilt, interventions=self.interventions or None)
        stored = self._summary_json or {}
        missing = [k for k in (*Summary.CORE, "failed_turns") if k not in stored]
        if "episodes_ended" not in stored and "games_ended" not in stored:
            missing.append("games_ended" if self.manifest_record.rule_version >= 2 else "episodes_ended")
        if not missing:
            return self.summary_record
        s = self.summary_record
        rebuilt = rebuild_summary(self.manifest_record, self.turn_records, None if s.complete else s.stopped or "aborted")
        filled: Summary = Summary.from_json({**{k: getattr(rebuilt, k) for k in missing}, **stored})
        return filled

    def summary_or_partial(self) -> dict[str, Any]:
        """``outcome()`` as JSON, for output (``info --json``, the HTML page): summary.json as written
        (``raw_summary()``) where it lacks no field, else the one filled in or rebuilt from the turns."""
        raw = self.raw_summary()
        if raw is not None and self.outcome() is self.summary_record:
            return raw
        return self.outcome().to_json()

    def problems(self, digests: bool = True) -> list[str]:
        """What the fast integrity check finds wrong (file digests, summary against turns and frames)."""
        return integrity.problems(self, digests)

    def require_sound(self) -> Recording:
        """``self`` when the fast integrity check finds nothing; else ``DamagedRecording`` (one line, exit 1)."""
        damage = self.damage()
        if damage:
            raise DamagedRecording(f"{damage}; `workstation verify --quick {self.path}` says more")
        return self

    def damage(self) -> str | None:
        """The first problem found, as one line, or None for a sound recording."""
        found = self.problems()
        if not found:
            return None
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return f"damaged recording {self.path}: {found[0]}{more}"

    def close(self) -> None:
        """Release the frame file handle (a later read opens it again)."""
        if "frames" in self.__dict__:
            self.frames.close()

    def size_bytes(self) -> int:
        """Bytes on disk of every file in the recording."""
        total = 0
        for p in self.path.rglob("*"):
            try:
                total += p.stat().st_size if p.is_file() else 0
            except OSError:  # a link loop or an unreadable entry: counted as nothing
                pass
        return total

    def __repr__(self) -> str:
        state = "complete" if self.complete else "partial"
        return f"Recording({str(self.path)!r}, {state})"
