"""The arena's own record of the matches it played: a ledger (``DIR/arena.jsonl``) and a seal (kind ``arena``).

Each match the arena plays is one line of the workstation's one resumable ledger (``store/ledger.Ledger``):
its run id, its folder (relative to DIR), the pairing, whether it finished, what it cost, and the digest of
its ``summary.json`` (which holds every file's digest) as it was when the match ended. The arena directory
is sealed (``store/seal.py``, kind ``arena``): the seal covers the ledger (it may grow) and any other file the
arena did not write as a recording; the recordings carry digests of their own (``skip_recordings``).

So a reader (``arena --report``, a resume, ``verify DIR``) names, besides a recording's own damage:
a match the arena recorded whose folder is gone, or whose summary was changed since (even with its digests
redone), and a second copy of a match the arena recorded elsewhere. Each is left out of every figure and
played again by a resume, as a damaged match always was. An arena directory from before the ledger (no
``arena.jsonl``) is read as before: every sound, complete match it holds counts; it gets its ledger, with the
matches it holds, the next time the arena plays in it.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from workstation.store.atomic import write_atomic
from workstation.store.ledger import Ledger, dumps
from workstation.store.records import Summary, check_fields, json_fields, record_of
from workstation.store.seal import check_seal, seal

LEDGER = "arena.jsonl"
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


def open_ledger(out: str | Path) -> Ledger[PlayedMatch]:
    """The arena's ledger, checked: the directory's seal first (an arena from before seals has none), then every
    line (a damaged one is ``DamagedArtifact``, exit 1). A stopped match is played again (``redo``)."""
    if Path(out).is_dir():  # a new arena's directory is made when it starts playing
        check_seal(out, SEAL_KIND, what="arena", missing_ok=True)
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


__all__ = ["LEDGER", "SEAL_KIND", "PlayedMatch", "has_ledger", "open_ledger", "played", "record", "reseal",
           "start_ledger"]
