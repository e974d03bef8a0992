"""Find recordings: list them under a root, look one up by run id, filter by what they are.

Listing reads each recording's manifest and summary once and keeps what a
listing shows in a small index file at the root (``.workstation-index.json``).
Every later listing checks each entry against its files' signatures (size,
modification and change times, inode of ``manifest.json`` and
``summary.json``, and of ``turns.jsonl`` while a run has no summary) and
re-reads any that changed, so a stale index never gives a wrong answer: it
only saves reading files that did not change. A root that cannot be written
is listed all the same (nothing is cached).
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from workstation.store.atomic import write_atomic
from workstation.store.recording import MANIFEST, SUMMARY, TURNS, Recording
from workstation.store.records import RecordingError

INDEX_FILE = ".workstation-index.json"
INDEX_VERSION = 3  # 2: entries carry the changes made by hand, run ids include them; 3: hand verdict checked
MAX_DEPTH = 4  # recordings nested this deep under the root are found (batches keep runs/ inside)


@dataclass(frozen=True)
class Entry:
    """One recording as a listing shows it."""

    path: str
    run_id: str | None = None
    game: str | None = None
    agent: str | None = None
    seed: int | None = None
    protocol: dict[str, Any] = field(default_factory=dict[str, Any])
    created: str | None = None
    state: str = "unreadable"  # complete | stopped | killed | unreadable
    score: float | None = None
    turns: int | None = None
    frames: int | None = None
    stopped: str | None = None
    branch_of: str | None = None
    error: str | None = None  # why an unreadable recording cannot be read
    changes: dict[str, Any] | None = None  # changes made by hand, per kind (workstation.store.changes); None: plain

    @property
    def complete(self) -> bool:
        return self.state == "complete"

    @property
    def changed(self) -> bool:
        """A person changed this run by hand (an override, an edited prompt, a branch...)."""
        return bool(self.changes)

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in ENTRY_FIELDS}

    @property
    def date(self) -> str:
        """``YYYY-MM-DD HH:MM`` of the manifest's creation time."""
        return (self.created or "")[:16].replace("T", " ")

    def setting(self, key: str) -> str | None:
        """A protocol setting as text (``frames`` -> ``"900"``), None if the manifest has none."""
        if key not in self.protocol:
            return None
        value = self.protocol[key]
        return str(value).lower() if isinstance(value, bool) else str(value)


ENTRY_FIELDS = fields(Entry)


def _read(path: Path, rel: str) -> Entry:
    try:
        rec = Recording(path)
        m = rec.manifest_record
        s = rec.outcome()
    except RecordingError as e:
        return Entry(path=rel, error=str(e))
    if rec.hand.problems:  # edited to look otherwise than it was: damaged, and never taken for a plain run
        return Entry(path=rel, error=f"damaged recording: {rec.hand.problems[0]}", changes=rec.interventions or None)
    protocol = m.protocol if isinstance(m.protocol, dict) else {}
    parent = m.parent.get("path") if isinstance(m.parent, dict) else None
    return Entry(path=rel, run_id=rec.run_id, game=m.game, agent=m.agent_spec, seed=m.seed, protocol=protocol,
                 created=m.created, state=s.state, score=s.total_reward, turns=s.turns, frames=s.frames,
                 stopped=s.stopped, branch_of=parent, changes=rec.interventions or None)


def _sig(path: str) -> list[Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _signature(directory: str) -> list[Any] | None:
    """What an entry depends on; None when the directory holds no manifest."""
    manifest = _sig(os.path.join(directory, MANIFEST))
    if manifest is None:
        return None
    summary = _sig(os.path.join(directory, SUMMARY))
    turns = _sig(os.path.join(directory, TURNS)) if summary is None else None  # a running or killed run
    return [manifest, summary, turns]


def walk(root: str, depth: int = 0) -> Iterator[tuple[str, list[Any]]]:
    """Recording directories under ``root`` (relative paths), with their signatures."""
    sig = _signature(root)
    if sig is not None:
        yield root, sig
        return
    if depth >= MAX_DEPTH:
        return
    try:
        with os.scandir(root) as it:
            subdirs = [e.path for e in it if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for sub in subdirs:
        yield from walk(sub, depth + 1)


class Index:
    """The recordings under ``root``; ``entries()`` lists them, newest first."""

    def __init__(self, root: str | Path, cache: bool = True) -> None:
        from workstation.store.local_paths import refuse_uri

        refuse_uri(root, "", "recordings are listed from a local directory")
        self.root = Path(root)
        if self.root.is_file():
            raise RecordingError(f"{self.root} is a file, not a directory of recordings")
        if not self.root.is_dir():
            raise RecordingError(f"no recordings at {self.root}: the directory does not exist")
        try:
            with os.scandir(self.root):
                pass
        except OSError as e:
            raise RecordingError(f"cannot read the directory {self.root} ({e.strerror or e})") from None
        self.cache = cache
        self.read_count = 0  # recordings read from their files in the last listing (the rest came from the index)

    def _load(self) -> dict[str, Any]:
        if not self.cache:
            return {}
        try:
            data = json.loads((self.root / INDEX_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != INDEX_VERSION or not isinstance(data.get("runs"), dict):
            return {}
        runs: dict[str, Any] = data["runs"]
        return runs

    def _save(self, runs: dict[str, Any]) -> None:
        path = self.root / INDEX_FILE
        try:  # a cache, rebuilt when lost: no fsync
            write_atomic(path, json.dumps({"version": INDEX_VERSION, "runs": runs}, separators=(",", ":")), fsync=False)
        except OSError:  # a read-only root is listed all the same
            pass

    def entries(self) -> list[Entry]:
        """Every recording under the root, newest first (index entries checked, changed ones re-read)."""
        enabled = gc.isenabled()
        gc.disable()  # tens of thousands of small dicts: the collector's passes would double the time
        try:
            return self._entries()
        finally:
            if enabled:
                gc.enable()

    def _entries(self) -> list[Entry]:
        cached = self._load()
        root = str(self.root)
        runs: dict[str, Any] = {}
        out: list[Entry] = []
        self.read_count = 0
        changed = False
        cut = len(root.rstrip(os.sep)) + 1
        for directory, sig in walk(root):
            rel = directory[cut:] if directory != root else "."
            hit = cached.get(rel)
            entry = None
            if hit is not None and hit.get("sig") == sig:
                try:
                    entry = Entry(**hit["entry"])
                except (TypeError, KeyError):
                    entry = None
            if entry is None:
                entry = _read(Path(directory), rel)
                hit = {"sig": sig, "entry": entry.to_json()}
                self.read_count += 1
                changed = True
            runs[rel] = hit
            out.append(entry)
        if self.cache and "." not in runs and (changed or set(runs) != set(cached)):  # never inside a recording
            self._save(runs)
        out.sort(key=lambda e: (e.created or "", e.path), reverse=True)
        return out

    def path_of(self, entry: Entry) -> Path:
        return self.root / entry.path if entry.path != "." else self.root

    def find(self, run_id: str) -> list[Entry]:
        """Recordings whose run id starts with ``run_id`` (newest first; re-runs of one spec share an id)."""
        prefix = run_id.strip().lower()
        if not prefix:
            return []
        return [e for e in self.entries() if e.run_id and e.run_id.lower().startswith(prefix)]

    def one(self, run_id: str) -> Entry:
        """The newest recording of the run ``run_id`` (a prefix that names one run id)."""
        found = self.find(run_id)
        if not found:
            raise RecordingError(f"no recording under {self.root} has a run id starting {run_id!r}")
        ids = sorted({e.run_id or "" for e in found})
        if len(ids) > 1:
            raise RecordingError(f"run id {run_id!r} is ambiguous under {self.root}: it starts "
                                 f"{', '.join(ids[:5])}{'...' if len(ids) > 5 else ''}; give more characters")
        return found[0]


def select(entries: list[Entry], *, game: str | None = None, agent: str | None = None, seed: int | None = None,
           settings: dict[str, str] | None = None, state: str | None = None, complete: bool | None = None,
           run_id: str | None = None) -> list[Entry]:
    """The entries matching every filter given (``agent`` matches the spec or its kind, ``random``/``openai``)."""
    out = []
    for e in entries:
        if game is not None and e.game != game:
            continue
        if agent is not None and e.agent != agent and (e.agent or "").split(":", 1)[0] != agent:
            continue
        if seed is not None and e.seed != seed:
            continue
        if settings and any(e.setting(k) != str(v).lower() if isinstance(v, bool) else e.setting(k) != str(v)
                            for k, v in settings.items()):
            continue
        if state is not None and e.state != state:
            continue
        if complete is not None and e.complete != complete:
            continue
        if run_id is not None and not (e.run_id or "").lower().startswith(run_id.lower()):
            continue
        out.append(e)
    return out


def find_recordings(root: Path) -> list[Path]:
    """Recording directories under ``root`` (itself included, nested ones to a depth of 4), newest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    # walk stops at each recording: it never lists its frame files
    found = [(sig[0][1], Path(directory)) for directory, sig in walk(str(root))]
    found.sort(key=lambda item: (item[0], str(item[1])), reverse=True)
    return [path for _, path in found]

