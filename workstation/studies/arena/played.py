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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workstation.store.ledger import Ledger
from workstation.store.records import Summary, check_fields
from workstation.store.seal import check_seal, seal

LEDGER = "arena.jsonl"
SEAL_KIND = "arena"

FIELDS: dict[str, tuple[Any, ...]] = {"run_id": ("str", False), "path": ("str", False), "game": ("str", False),
                                      "seed": ("int", False),
                                      "p1": ("str", False), "p2": ("str", False), "complete": ("bool", False),
                                      "cost_usd": ("num", True), "summary_sha256": ("str", True)}


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
        d = check_fields(data, FIELDS, where)
        return cls(d["run_id"], d["path"], d["game"], d["seed"], d["p1"], d["p2"], d["complete"], d.get("cost_usd"),
                   d.get("summary_sha256"))

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "path": self.path, "game": self.game, "seed": self.seed, "p1": self.p1, "p2": self.p2,
                "complete": self.complete, "cost_usd": self.cost_usd, "summary_sha256": self.summary_sha256}


def has_ledger(out: str | Path) -> bool:
    return (Path(out) / LEDGER).is_file()


def open_ledger(out: str | Path) -> Ledger[PlayedMatch]:
    """The arena's ledger, checked: the directory's seal first (an arena from before seals has none), then every
    line (a damaged one is ``DamagedArtifact``, exit 1). A stopped match is played again (``redo``)."""
    if Path(out).is_dir():  # a new arena's directory is made when it starts playing
        check_seal(out, SEAL_KIND, what="arena", missing_ok=True)
    return Ledger(Path(out) / LEDGER, PlayedMatch.from_json, lambda m: m.run_id, cost=lambda m: m.cost_usd or 0.0,
                  redo=lambda m: not m.complete, what="arena ledger")


def record(book: Ledger[PlayedMatch], out: str | Path, path: str | Path, run_id: str, game: str,
           sides: tuple[str, str], seed: int, summary: Summary) -> PlayedMatch:
    """One played match into the ledger (its summary.json pinned by digest), as its typed summary says."""
    from workstation.store.integrity import sha256_of

    summary_file = Path(path) / "summary.json"
    m = PlayedMatch(run_id, os.path.relpath(path, out), game, seed, sides[0], sides[1], summary.complete,
                    summary.cost_usd, sha256_of(summary_file) if summary_file.is_file() else None)
    book.append(m, m.to_json())
    return m


def reseal(out: str | Path) -> None:
    """Seal the arena directory: its ledger (which may grow) and whatever else is there that is not a recording."""
    seal(out, SEAL_KIND, appendable=[LEDGER], skip_recordings=True)


__all__ = ["LEDGER", "SEAL_KIND", "PlayedMatch", "has_ledger", "open_ledger", "record", "reseal"]
