"""Find recordings: list them under a root, look one up by run id, filter by what they are.

Listing reads each recording's manifest and summary once and keeps what a
listing shows in a small index cache of this user, never inside the folder
listed: ``$XDG_CACHE_HOME/workstation/index/<sha256 of the resolved root>.json``
(``~/.cache/...``; ``WORKSTATION_INDEX_CACHE`` names another folder, ``off``
none). Every later listing checks each entry against its files' signatures
(size, modification and change times, inode of ``manifest.json``,
``summary.json`` and ``turns.jsonl``) and re-reads any that changed, so a stale
cache never gives a wrong answer: it only saves reading files that did not change.
Each recording read is held to the cheap check (``store.integrity.cheap_problems``:
the digests of its manifest and turns, its summary against its turns); one that
fails it is listed as ``damaged``, never ``complete``, and that verdict is cached
with the rest under the same signatures. The frames are not hashed on a listing
(too big to read every time): ``verify --quick`` and ``verify`` check them. The cache is sealed: its first line
names its format, the root it lists and the size and SHA-256 of the rest; a
cache that fails any of them (cut, edited, another root's, another version's)
is not read, and the listing rebuilds it, so a damaged cache never changes what
a listing shows. A cache that cannot be written (a read-only home) is skipped,
and one that would fall inside the folder listed is never written.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from workstation.store import integrity
from workstation.store.atomic import write_atomic
from workstation.store.integrity import cheap_problems
from workstation.store.recording import MANIFEST, SUMMARY, TURNS, Recording
from workstation.store.records import RecordingError

CACHE_ENV = "WORKSTATION_INDEX_CACHE"  # the folder of index caches (default $XDG_CACHE_HOME/workstation/index)
CACHE_FORMAT = "atari-workstation-index/5"  # 2: changes made by hand; 3: hand verdict checked; 4: out of the root,
# sealed; 5: the cheap integrity check's verdict and the summary held to its manifest (state "damaged"),
# turns.jsonl always in the signature
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
    state: str = "unreadable"  # complete | stopped | unfinished | damaged | unreadable
    score: float | None = None
    turns: int | None = None
    frames: int | None = None
    stopped: str | None = None
    branch_of: str | None = None
    error: str | None = None  # why an unreadable recording cannot be read, or what a damaged one fails
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
        found = cheap_problems(rec, every_turn=False)  # edited since it was written (a score, cut turns, changes hidden): damaged
    except RecordingError as e:
        return Entry(path=rel, error=str(e))
    if not found:  # a summary that contradicts its manifest (agent, complete, a key or number no writer makes)
        try:
            found = integrity.summary_claim_problems(rec)
        except RecordingError as e:
            found = [str(e)]
    protocol = m.protocol if isinstance(m.protocol, dict) else {}
    parent = m.parent.get("path") if isinstance(m.parent, dict) else None
    return Entry(path=rel, run_id=rec.run_id, game=m.game, agent=m.agent_spec, seed=m.seed, protocol=protocol,
                 created=m.created, state="damaged" if found else s.state, score=s.total_reward, turns=s.turns,
                 frames=s.frames, stopped=s.stopped, branch_of=parent, changes=rec.interventions or None,
                 error=f"damaged recording: {found[0]}" if found else None)


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
    # the turns too: the cheap check holds the summary against them, and a run without a summary is read from them
    return [manifest, _sig(os.path.join(directory, SUMMARY)), _sig(os.path.join(directory, TURNS))]


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


def cache_dir() -> Path | None:
    """Where this user's index caches go (None: ``WORKSTATION_INDEX_CACHE=off``)."""
    given = os.environ.get(CACHE_ENV)
    if given is not None and given.strip().lower() in ("off", "none", "0", ""):
        return None
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home: nothing cached
            return None
    return Path(base).expanduser() / "workstation" / "index"


def cache_file(resolved_root: str) -> Path | None:
    """The cache of the listing of ``resolved_root``; None when there is none to keep, or when it would lie inside
    the root itself (a listing never writes inside what it lists)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        folder = folder.resolve()
    except (OSError, RuntimeError):
        return None
    root = Path(resolved_root)
    if folder == root or root in folder.parents:
        return None
    return folder / (hashlib.sha256(resolved_root.encode("utf-8", "surrogateescape")).hexdigest() + ".json")


def read_cache(path: Path, resolved_root: str) -> dict[str, Any]:
    """The entries of a sealed cache of ``resolved_root``; empty (rebuilt) when it is missing or fails its seal."""
    try:
        with open(path, "rb") as f:
            head = f.readline(4096)
            body = f.read()
        seal = json.loads(head)
    except (OSError, ValueError):
        return {}
    if not isinstance(seal, dict) or seal.get("format") != CACHE_FORMAT or seal.get("root") != resolved_root \
            or seal.get("bytes") != len(body) or seal.get("sha256") != hashlib.sha256(body).hexdigest():
        return {}
    try:
        runs = json.loads(body)
    except ValueError:
        return {}
    return runs if isinstance(runs, dict) else {}


def write_cache(path: Path, resolved_root: str, runs: dict[str, Any]) -> None:
    """The cache, sealed (format, root, size and digest of the entries), written whole, readable by this user only."""
    body = json.dumps(runs, separators=(",", ":")).encode("utf-8")
    head = json.dumps({"format": CACHE_FORMAT, "root": resolved_root, "bytes": len(body),
                       "sha256": hashlib.sha256(body).hexdigest()}, ensure_ascii=True).encode("ascii")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the folders a user lists are theirs to know
    write_atomic(path, head + b"\n" + body, fsync=False)


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
        self.resolved = str(self.root.resolve())
        self.cache_file = cache_file(self.resolved) if cache else None
        self.read_count = 0  # recordings read from their files in the last listing (the rest came from the index)

    def _load(self) -> dict[str, Any]:
        if self.cache_file is None:
            return {}
        return read_cache(self.cache_file, self.resolved)

    def _save(self, runs: dict[str, Any]) -> None:
        if self.cache_file is None:
            return
        try:  # a cache, rebuilt when lost: no fsync
            write_cache(self.cache_file, self.resolved, runs)
        except OSError:  # a read-only home: listed all the same
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
            if isinstance(hit, dict) and hit.get("sig") == sig:
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
        if changed or set(runs) != set(cached):
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

