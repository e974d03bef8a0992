"""Seal any artifact directory with digests, and check the seal: the one integrity check of every kind.

A recording keeps its digests in its summary (``store/integrity.py``). Every other artifact the
workstation writes (a match, a batch, a judge study, a requery or over-reliance result, a stuck
report, an IDC directory, an arena, a QA set or eval, a session, a pack, an experience library)
is sealed here: ``DIR/seal.json`` names the artifact's kind and the size and SHA-256 of each of
its files. A reader calls ``check_seal`` (or ``seal_problems``) before it trusts anything in the
directory; a file edited, cut, added or removed by hand is named, and the reader sets the
artifact aside (exit 1 from the CLI) instead of counting it.

Append-only files (a resumable job's JSONL ledger) may be ``appendable``: a seal then holds for
the file as long as its first sealed bytes are unchanged, so a job killed after the seal and
resumed later still checks; the ledger reads the lines past the seal one by one.

A file a writer adds in two steps (an artifact from before its ledger gets one: the ledger written whole, then the
seal again) may be ``added_ok``: a file the seal does not name yet passes when its bytes are exactly the ones the
sealed files make (``added_ok[rel]()``), so a kill between the two steps leaves an artifact that reads and resumes,
while any other file added, or that file with other bytes, is named as before.

Sub-directories that carry a seal or digests of their own (a recording inside a batch) are left
out with ``skip``: the reader checks them with their own check. ``skip_recordings`` leaves out every
recording (a directory holding a ``manifest.json``) found at check time too: an artifact whose recordings
come and go as it runs (an arena) keeps them in a ledger of its own, which the seal covers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workstation.base.errors import DamagedArtifact
from workstation.store.atomic import write_atomic

SEAL = "seal.json"
FORMAT = "atari-workstation-seal/1"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Sealed:
    """One file as sealed: its size, its digest, and whether it may grow past them."""

    bytes: int
    sha256: str
    appendable: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"bytes": self.bytes, "sha256": self.sha256}
        if self.appendable:
            out["appendable"] = True
        return out


def _digest(path: Path, limit: int | None = None) -> tuple[int, str]:
    """(bytes read, SHA-256) of ``path``, or of its first ``limit`` bytes."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while True:
            want = CHUNK if limit is None else min(CHUNK, limit - n)
            if want <= 0:
                break
            chunk = f.read(want)
            if not chunk:
                break
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def _files(directory: Path, skip: Iterable[str], recordings: bool = False) -> Iterator[tuple[str, Path]]:
    """(relative POSIX path, path) of every file to seal, in a fixed order: hidden files, the seal and
    anything under a skipped relative path (or, with ``recordings``, inside a recording) left out."""
    skipped = tuple(s.strip("/") for s in skip)
    if recordings:
        skipped += tuple(p.parent.relative_to(directory).as_posix() for p in directory.rglob("manifest.json")
                         if p.parent != directory)
    for p in sorted(directory.rglob("*")):
        rel = p.relative_to(directory).as_posix()
        if any(part.startswith(".") for part in rel.split("/")) or rel == SEAL:
            continue
        if any(rel == s or rel.startswith(s + "/") for s in skipped):
            continue
        if p.is_file():
            yield rel, p


def seal(directory: str | Path, kind: str, *, skip: Iterable[str] = (), appendable: Iterable[str] = (),
         skip_recordings: bool = False) -> None:
    """Write ``DIR/seal.json``: the kind, and the size and digest of every file (atomically)."""
    directory = Path(directory)
    grow = set(appendable)
    files: dict[str, Any] = {}
    for rel, p in _files(directory, skip, skip_recordings):
        size, digest = _digest(p)
        files[rel] = Sealed(size, digest, rel in grow).to_json()
    record: dict[str, Any] = {"format": FORMAT, "kind": kind, "skip": sorted(set(skip)), "files": files}
    if skip_recordings:
        record["skip_recordings"] = True
    write_atomic(directory / SEAL, json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def is_sealed(directory: str | Path) -> bool:
    return (Path(directory) / SEAL).is_file()


def _own_seal(directory: str | Path) -> dict[str, Any] | None:
    """The seal of this workstation at ``directory`` (None: no such seal there; any other seal.json is not one)."""
    try:
        data = json.loads((Path(directory) / SEAL).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def seal_kind(directory: str | Path) -> str | None:
    """The kind a seal of this workstation at ``directory`` names (None: no such seal there)."""
    kind = (_own_seal(directory) or {}).get("kind")
    return kind if isinstance(kind, str) else None


def admits_recordings(directory: str | Path) -> bool:
    """Whether the seal at ``directory`` leaves every recording in it out (``skip_recordings``: an arena's), so that
    a new recording there changes nothing it covers (any other file added would)."""
    return (_own_seal(directory) or {}).get("skip_recordings") is True


def _read_seal(directory: Path, kind: str) -> tuple[dict[str, Sealed], list[str], bool] | str:
    path = directory / SEAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"it has no {SEAL}"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return f"its {SEAL} cannot be read"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return f"its {SEAL} is not a seal of this workstation"
    if data.get("kind") != kind:
        return f"its {SEAL} seals a {data.get('kind')!r}, not a {kind!r}"
    files, skip, recordings = data.get("files"), data.get("skip", []), data.get("skip_recordings", False)
    if not isinstance(files, dict) or not isinstance(skip, list) or not all(isinstance(s, str) for s in skip) \
            or not isinstance(recordings, bool):
        return f"its {SEAL} is damaged"
    out: dict[str, Sealed] = {}
    for rel, f in files.items():
        if not (isinstance(f, dict) and isinstance(f.get("bytes"), int) and isinstance(f.get("sha256"), str)):
            return f"its {SEAL} is damaged (entry {rel!r})"
        out[rel] = Sealed(f["bytes"], f["sha256"], f.get("appendable") is True)
    return out, skip, recordings


Derived = Mapping[str, Callable[[], bytes | None]]  # a file's relative path -> the bytes it may be added with


def _added_as_derived(p: Path, derive: Callable[[], bytes | None]) -> bool:
    want = derive()
    if want is None:
        return False
    try:
        return p.read_bytes() == want
    except OSError:
        return False


def seal_problems(directory: str | Path, kind: str, *, missing_ok: bool = False,
                  added_ok: Derived | None = None) -> list[str]:
    """What is wrong with the artifact at ``directory`` against its seal (empty: it holds).

    ``missing_ok``: an artifact written before seals existed (no seal.json) passes; a seal that is
    there must hold. ``added_ok``: files the seal does not name yet that pass with exactly the bytes given."""
    directory = Path(directory)
    if not directory.is_dir():
        return [f"{directory} is not a directory"]
    read = _read_seal(directory, kind)
    if isinstance(read, str):
        return [] if missing_ok and not (directory / SEAL).exists() else [read]
    sealed, skip, recordings = read
    problems: list[str] = []
    present = dict(_files(directory, skip, recordings))
    for rel, want in sealed.items():
        p = present.get(rel)
        if p is None:
            problems.append(f"{rel} is missing")
            continue
        try:
            size = p.stat().st_size
            if want.appendable and size >= want.bytes:
                n, digest = _digest(p, want.bytes)
            else:
                n, digest = _digest(p)
        except OSError as e:
            problems.append(f"{rel} cannot be read ({e.strerror or e})")
            continue
        if n != want.bytes:
            problems.append(f"{rel} has {size} bytes, sealed with {want.bytes}")
        elif digest != want.sha256:
            problems.append(f"{rel} was changed after it was written (digest differs)")
    for rel, p in present.items():
        if rel not in sealed and not (added_ok and rel in added_ok and _added_as_derived(p, added_ok[rel])):
            problems.append(f"{rel} was added after it was sealed")
    return problems


def check_seal(directory: str | Path, kind: str, *, what: str | None = None, missing_ok: bool = False,
               added_ok: Derived | None = None) -> None:
    """Raise ``DamagedArtifact`` (one line, exit 1) naming the first problem, if any."""
    problems = seal_problems(directory, kind, missing_ok=missing_ok, added_ok=added_ok)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DamagedArtifact(f"{what or kind} {directory} is damaged: {problems[0]}{more}; it is left as it is "
                              "(write a new one, or remove it)", file=directory)


__all__ = ["SEAL", "Derived", "check_seal", "is_sealed", "seal", "seal_kind", "seal_problems"]
