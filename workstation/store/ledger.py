"""The one resumable JSONL ledger: every job that asks, pays and may be killed halfway writes through it.

A job (a QA eval, a judge study, a requery, IDC rounds, an arena) keeps one line per item done in
``DIR/<name>.jsonl``. The ledger gives each of them the same rules:

- **identity**: ``identity_problem`` compares what the job is (its settings) with what the
  directory was made for, so a resume with other settings is refused before anything is asked;
- **done set**: each line is read into a typed record by the job's ``read`` (which names the file,
  line and field on a bad one) and keyed by the job's ``key``; an item with a record is never
  asked again (a job may leave an item out of the done set, e.g. a call that failed, with ``redo``);
- **torn last line**: a last line a kill cut off (no newline, not JSON) is dropped and the item
  asked again; it is cut away before the next line is written. Any other bad line is damage:
  ``DamagedArtifact`` (exit 1), never skipped silently;
- **spend and cost cap**: ``spent`` is the cost of every line, ``over_cap`` says whether a cap is
  reached (a rerun with a higher cap resumes);
- **append**: one whole line per record, flushed and fsync-ed, under a lock (jobs run items in
  threads);
- **summary**: ``write_json`` writes a result file through the one atomic writer.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

from workstation.base.errors import DamagedArtifact, UserError
from workstation.store.atomic import write_atomic

T = TypeVar("T")


def dumps(record: dict[str, Any]) -> str:
    """A record as one JSON line (no newline)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_json(path: str | Path, data: dict[str, Any] | list[Any]) -> None:
    """A result file (judge.json, summary.json, curve.json ...), whole or not at all."""
    write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def identity_problem(recorded: dict[str, Any], wanted: dict[str, Any]) -> str | None:
    """What differs between the identity a directory was made for and this job's (None: the same)."""
    keys = sorted(set(recorded) | set(wanted), key=str)
    differ = [k for k in keys if recorded.get(k) != wanted.get(k)]
    if not differ:
        return None
    k = differ[0]
    more = f" (and {len(differ) - 1} more: {', '.join(map(str, differ[1:4]))})" if len(differ) > 1 else ""
    return f"it was made with {k}={recorded.get(k)!r}, this command has {k}={wanted.get(k)!r}{more}"


class Ledger(Generic[T]):
    """The done items of a job, read from its JSONL file, and the one way to add to it."""

    def __init__(self, path: str | Path, read: Callable[[dict[str, Any], str], T], key: Callable[[T], Hashable],
                 *, cost: Callable[[T], float] | None = None, redo: Callable[[T], bool] | None = None,
                 what: str = "ledger") -> None:
        self.path = Path(path)
        self._read, self._key = read, key
        self._cost = cost or (lambda _r: 0.0)
        self._redo = redo or (lambda _r: False)
        self._what = what
        self._lock = threading.Lock()
        self._torn_at: int | None = None  # byte offset where a torn last line starts
        self.records: list[T] = []  # every line, in file order
        self.done: dict[Hashable, T] = {}
        self._spent = 0.0
        self._load()

    # -- reading ---------------------------------------------------------------------------
    def _damaged(self, why: str) -> DamagedArtifact:
        return DamagedArtifact(f"{self._what} {self.path} is damaged: {why}; it is left as it is (move it away to "
                               "start again)", file=self.path)

    def _load(self) -> None:
        if not self.path.exists():
            return
        if not self.path.is_file():
            raise UserError(f"{self.path} is not a file; give a directory whose {self.path.name} is one",
                            file=self.path)
        try:
            raw = self.path.read_bytes()
        except OSError as e:
            raise UserError(f"{self.path} cannot be read ({e.strerror or e})", file=self.path) from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._damaged("it is not UTF-8 text") from None
        lines = text.split("\n")
        offset = 0
        for number, line in enumerate(lines, 1):
            last = number == len(lines)
            start = offset
            offset += len(line.encode("utf-8")) + 1
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                if last:  # no newline after it: a line a kill cut off; that item is asked again
                    self._torn_at = start
                    continue
                raise self._damaged(f"line {number} is not JSON") from None
            if not isinstance(data, dict):
                raise self._damaged(f"line {number} is {type(data).__name__}, not a record")
            try:
                record = self._read(data, f"{self.path} line {number}")
            except UserError as e:
                raise self._damaged(str(e)) from None
            self._keep(record)

    def _keep(self, record: T) -> None:
        self.records.append(record)
        self._spent += self._cost(record)
        if not self._redo(record):
            self.done[self._key(record)] = record

    # -- questions ---------------------------------------------------------------------------
    @property
    def torn(self) -> bool:
        """Whether a last line cut off by a kill was dropped."""
        return self._torn_at is not None

    @property
    def spent(self) -> float:
        return self._spent

    def over_cap(self, max_cost: float | None) -> bool:
        return max_cost is not None and self._spent >= max_cost

    def is_done(self, key: Hashable) -> bool:
        return key in self.done

    def todo(self, keys: Iterable[Hashable]) -> list[Hashable]:
        return [k for k in keys if k not in self.done]

    # -- writing -----------------------------------------------------------------------------
    def append(self, record: T, as_json: dict[str, Any]) -> None:
        """Add one record (and its JSON form) as one whole line."""
        line = (dumps(as_json) + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as f:
                if self._torn_at is not None:  # cut the torn tail away first
                    f.truncate(self._torn_at)
                    self._torn_at = None
                elif f.tell() and not self._ends_with_newline():
                    f.write(b"\n")
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
            self._keep(record)

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            return f.read(1) == b"\n"


__all__ = ["Ledger", "dumps", "identity_problem", "write_json"]
