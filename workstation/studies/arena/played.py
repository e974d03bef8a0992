"""The arena's own record of the matches it played: a ledger (``DIR/arena.jsonl``) and a seal (kind ``arena``).

Each match the arena plays is one line of the workstation's one resumable ledger (``store/ledger.Ledger``):
its run id, its folder (relative to DIR), the pairing, whether it finished, what it cost, and the digest of
its ``summary.json`` (which holds every file's digest) as it was when the match ended. The arena directory
is sealed (``store/seal.py``, kind ``arena``): the seal covers the ledger (it may grow) and any other file the
arena did not write as a recording; the recordings carry digests of their own (``skip_recordings``).

The arena's identity (``DIR/arena.json``, sealed with the rest): the game and the protocol (the frame budget and
every other setting) its matches are played under. A resume with another game or protocol is refused in one line
naming the setting (exit 2), as ``batch`` refuses a changed grid: matches of different budgets or games are never
pooled into one table. An arena from before the identity is read as before; it is pinned to the game and protocol
its ledger's matches share (the identity then written is exactly theirs) the next time the arena plays in it.

So a reader (``arena --report``, a resume, ``verify DIR``) names, besides a recording's own damage:
a match the arena recorded whose folder is gone, or whose summary was changed since (even with its digests
redone), and a second copy of a match the arena recorded elsewhere. Each is left out of every figure and
played again by a resume, as a damaged match always was. An arena directory from before the ledger (no
``arena.jsonl``) is read as before: every sound, complete match it holds counts; it gets its ledger, with the
matches it holds, the next time the arena plays in it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.store.atomic import write_atomic
from workstation.store.ledger import Ledger, dumps, identity_problem
from workstation.store.records import (
    RecordFileError,
    RecordingError,
    Summary,
    check_fields,
    json_fields,
    read_json,
    record_of,
)
from workstation.store.seal import check_seal, seal

LEDGER = "arena.jsonl"
IDENTITY = "arena.json"
SEAL_KIND = "arena"

@dataclass(frozen=True)
class PlayedMatch:
    """One line of the arena's ledger: a match it played."""

    run_id: str
    path: str  # the match's folder, relative to the arena directory
    game: str
    seed: int
    p1: str
    p2: str
    complete: bool
    cost_usd: float | None = None
    summary_sha256: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> PlayedMatch:
        return record_of(cls, check_fields(data, FIELDS, where))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


FIELDS = json_fields(PlayedMatch)  # a ledger line's checks, from the fields above


def has_ledger(out: str | Path) -> bool:
    return (Path(out) / LEDGER).is_file()


def identity(game: str, protocol: dict[str, Any]) -> dict[str, Any]:
    """What an arena is: its game and each protocol setting (``frames``, ``repeat``, ...), flat, so a difference
    names the setting; as JSON holds it (a tuple a list), so a stored one compares equal."""
    ident: dict[str, Any] = json.loads(json.dumps({"game": game, **protocol}))
    return ident


def _identity_bytes(ident: dict[str, Any]) -> bytes:
    return (json.dumps(ident, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def ledger_identity(out: str | Path) -> dict[str, Any] | None:
    """The identity the matches of an arena's ledger share (their lines' game, their manifests' protocol); None when
    it has none, or they differ (an arena from before the identity that pooled them)."""
    from workstation.store.recording import Recording

    path = Path(out) / LEDGER
    if not path.is_file():
        return None
    found = set()
    for m in Ledger(path, PlayedMatch.from_json, lambda m: m.run_id, what="arena ledger").records:
        try:
            protocol = Recording(Path(out) / m.path).manifest_record.protocol
        except (RecordingError, OSError):
            continue  # a match gone or damaged: named where the matches are read
        found.add(json.dumps(identity(m.game, protocol), sort_keys=True))
    return json.loads(found.pop()) if len(found) == 1 else None


def _derived_identity(out: str | Path) -> bytes | None:
    """The bytes DIR/arena.json may be added with before the arena is sealed again: its ledger's identity."""
    ident = ledger_identity(out)
    return None if ident is None else _identity_bytes(ident)


def adding(out: str | Path) -> dict[str, Callable[[], bytes | None]]:
    """The file the seal of an arena may not name yet: its identity, as its ledger's matches make it (an arena from
    before the identity, killed after pinning it and before it was sealed again)."""
    return {IDENTITY: lambda: _derived_identity(out)}


def recorded_identity(out: str | Path) -> dict[str, Any] | None:
    """DIR/arena.json (None: an arena from before the identity, or none yet), checked as the seal allows it."""
    path = Path(out) / IDENTITY
    if not path.exists():
        return None
    data: dict[str, Any] = read_json(path)
    if not isinstance(data.get("game"), str) or not isinstance(data.get("frames"), int):
        raise RecordFileError(f"{path}: not an arena's identity (its game and protocol); move it aside")
    return data


def check_identity(out: str | Path, wanted: dict[str, Any]) -> None:
    """Refuse (one line naming the setting, exit 2) to play into an arena made for another game or protocol: its
    arena.json, or for an arena from before it, the game and protocol its ledger's matches share."""
    recorded = recorded_identity(out)
    if recorded is None:
        recorded = ledger_identity(out)
    why = None if recorded is None else identity_problem(recorded, wanted)
    if why:
        raise UserError(f"{out} is an arena of other matches: {why}; resume it with its own --game and protocol "
                        "settings, or choose another --out for these", field="out", file=out)


def write_identity(out: str | Path, wanted: dict[str, Any]) -> None:
    """Pin the arena to its game and protocol (before it is sealed again), once."""
    if not (Path(out) / IDENTITY).exists():
        write_atomic(Path(out) / IDENTITY, _identity_bytes(wanted))


def open_ledger(out: str | Path) -> Ledger[PlayedMatch]:
    """The arena's ledger, checked: the directory's seal first (an arena from before seals has none), then every
    line (a damaged one is ``DamagedArtifact``, exit 1). A stopped match is played again (``redo``)."""
    if Path(out).is_dir():  # a new arena's directory is made when it starts playing
        check_seal(out, SEAL_KIND, what="arena", missing_ok=True, added_ok=adding(out))
    return Ledger(Path(out) / LEDGER, PlayedMatch.from_json, lambda m: m.run_id, cost=lambda m: m.cost_usd or 0.0,
                  redo=lambda m: not m.complete, what="arena ledger")


def played(out: str | Path, path: str | Path, run_id: str, game: str, sides: tuple[str, str], seed: int,
           summary: Summary | None) -> PlayedMatch:
    """The ledger line of a match played into ``out`` (its summary.json pinned by digest; no summary: not
    complete, cost unknown)."""
    from workstation.store.integrity import sha256_of

    summary_file = Path(path) / "summary.json"
    return PlayedMatch(run_id, os.path.relpath(path, out), game, seed, sides[0], sides[1],
                       summary is not None and summary.complete, None if summary is None else summary.cost_usd,
                       sha256_of(summary_file) if summary_file.is_file() else None)


def record(book: Ledger[PlayedMatch], out: str | Path, path: str | Path, run_id: str, game: str,
           sides: tuple[str, str], seed: int, summary: Summary | None) -> PlayedMatch:
    """One played match into the ledger (its summary.json pinned by digest)."""
    m = played(out, path, run_id, game, sides, seed, summary)
    book.append(m, m.to_json())
    return m


def start_ledger(out: str | Path, adopted: list[PlayedMatch]) -> None:
    """The ledger of a new arena (empty), or of one from before the ledger (a line for each sound, complete match
    it holds), written whole in one rename before the arena is sealed with it: a kill at any instant leaves no
    ledger (the arena read as before) or the whole one, never a part of the matches adopted."""
    write_atomic(Path(out) / LEDGER, "".join(dumps(m.to_json()) + "\n" for m in adopted))


def reseal(out: str | Path) -> None:
    """Seal the arena directory: its ledger (which may grow) and whatever else is there that is not a recording."""
    seal(out, SEAL_KIND, appendable=[LEDGER], skip_recordings=True)


__all__ = ["IDENTITY", "LEDGER", "SEAL_KIND", "PlayedMatch", "adding", "check_identity", "has_ledger", "identity",
           "ledger_identity", "open_ledger", "played", "record", "recorded_identity", "reseal", "start_ledger",
           "write_identity"]
