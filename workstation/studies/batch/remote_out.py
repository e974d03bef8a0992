"""``batch --out URI``: a batch kept in object storage (``s3://``, ``gs://``, ... through fsspec), run in a local stage.

The batch itself runs, resumes and locks exactly as with a local ``--out DIR``, in a
*stage*: ``$XDG_CACHE_HOME/workstation/out/<hash of the URI>/`` (``~/.cache/...``).
Around it this module

- before the run, checks the URI (fsspec installed, the scheme known, the endpoint
  reachable, the bucket there) and brings down what the URI holds: its ``grid.toml``
  (so another grid is refused as for a directory), its ``placement.jsonl`` and every
  recording the URI holds as uploaded that the stage lacks, so resume skips those runs;
- while it runs, uploads each recording the driver counts done (a background thread,
  fed by ``Batch.on_settled``), and every ``RESULTS_EVERY_S`` the results table;
- at the end, uploads every complete recording of the stage not yet up (also those a
  killed driver left), then ``results.csv``, ``results.jsonl``, ``placement.jsonl``
  and ``grid.toml``.

A reader of the bucket never takes half a recording for a whole one: the files of
``runs/NAME/`` go up first and the marker ``uploaded/NAME.json`` (its file list and
sizes) last; a folder without its marker is an upload under way or cut short (it is
replaced on the next upload). Credentials come from the environment (``AWS_*``, the
fsspec config); an S3 stand-in is reached through ``AWS_ENDPOINT_URL`` /
``AWS_ENDPOINT_URL_S3``, as botocore reads them. No message carries a credential.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty, Queue
from typing import Any

from workstation.base.errors import UserError
from workstation.studies.batch import placement, results
from workstation.studies.batch.out_uri import (
    BUCKETED,
    STAGE_ENV,
    check_uri,
    is_remote,
    local_out,
    open_fs,
    scheme_of,
    stage_of,
    unreachable,
    why,
)

MARKER_DIR = "uploaded"  # URI/uploaded/NAME.json: written last, once every file of URI/runs/NAME/ is up
RESULTS_EVERY_S = 60.0  # the results table goes up this often while the batch runs (when something new is up)
LOCK = ".remote.lock"
BULK = 64  # recordings uploaded in one bulk put (their markers in one bulk pipe after)


class RemoteOut:
    """A batch's URI and its local stage; ``open`` checks both before anything is written."""

    def __init__(self, uri: str, fs: Any, root: str, stage: Path) -> None:
        self.uri, self.fs, self.root, self.stage = uri.rstrip("/"), fs, root.rstrip("/"), Path(stage)
        self.marked: dict[str, dict[str, Any]] = {}  # folder name -> its marker, as the URI holds them
        self.failed: dict[str, str] = {}  # folder name -> why its upload failed (retried at the end)
        self._lock_fd: int | None = None
        self._mutex = threading.Lock()
        self.has_dirs = scheme_of(uri) not in BUCKETED | {"memory"}  # local://, sftp://...: folders made first
        self.leftovers: set[str] = set()  # folders under URI/runs/ without a marker (uploads cut short)

    # -- where things are -------------------------------------------------------------
    def remote(self, *parts: str) -> str:
        return "/".join((self.root, *parts)) if self.root else "/".join(parts)

    def shown(self, *parts: str) -> str:
        return "/".join((self.uri, *parts))

    # -- before the batch ---------------------------------------------------------------
    @classmethod
    def open(cls, uri: str) -> RemoteOut:
        scheme, bucket = check_uri(uri)
        fs, root = open_fs(uri, scheme)
        out = cls(uri, fs, root, stage_of(uri))
        out._probe(scheme, bucket)
        out._lock()
        return out

    def _probe(self, scheme: str, bucket: str) -> None:
        try:
            if scheme in BUCKETED:
                try:
                    self.fs.info(bucket)
                except FileNotFoundError:
                    raise UserError(f"--out {self.uri}: no bucket {bucket!r} there; create it first, or give "
                                    "another URI") from None
            self.marked = self._markers()
            self.leftovers = self._folders_there() - set(self.marked)
        except UserError:
            raise
        except PermissionError as e:
            raise UserError(f"--out {self.uri}: access denied ({why(e)}); check the credentials in the "
                            "environment") from None
        except Exception as e:  # unreachable endpoint, bad credentials, any backend's error
            raise unreachable(f"--out {self.uri}", e) from None

    def _lock(self) -> None:
        """One command per stage at a time (the batch's own lock comes later, in ``prepare``)."""
        try:
            self.stage.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.stage / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise UserError(f"--out {self.uri}: cannot make its local stage {self.stage} ({e.strerror or e}); "
                            f"set {STAGE_ENV} to a writable directory") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(f"another batch is running into {self.uri} from this machine (its stage "
                            f"{self.stage} is locked); wait for it") from None
        self._lock_fd = fd

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _markers(self) -> dict[str, dict[str, Any]]:
        found = self.fs.find(self.remote(MARKER_DIR), maxdepth=1)
        names = [p for p in found if p.endswith(".json")]
        out: dict[str, dict[str, Any]] = {}
        if names:
            for path, data in self.fs.cat(names, on_error="omit").items():
                try:
                    m = json.loads(data)
                except ValueError:
                    continue
                if isinstance(m, dict) and isinstance(m.get("files"), dict):
                    out[path.rsplit("/", 1)[-1][: -len(".json")]] = m
        return out

    def _folders_there(self) -> set[str]:
        try:
            return {p.rstrip("/").rsplit("/", 1)[-1] for p in self.fs.ls(self.remote("runs"), detail=False)}
        except FileNotFoundError:
            return set()

    def pull_grid(self) -> None:
        """The URI's grid.toml into the stage (the grid a resume must match)."""
        try:
            data = self.fs.cat_file(self.remote("grid.toml"))
        except FileNotFoundError:
            return
        except Exception as e:
            raise UserError(f"--out {self.uri}: cannot read its grid.toml ({why(e)})") from None
        (self.stage / "grid.toml").write_bytes(data)

    def pull(self) -> int:
        """Every recording the URI holds as uploaded and the stage lacks, into the stage's runs/; returns how many.

        One bulk download into runs/.incoming/, then each folder renamed into place once its files are the
        sizes its marker says. A marked recording that cannot be had whole is dropped (its run is played
        and uploaded again), never half brought in."""
        runs = results.runs_dir(self.stage)
        runs.mkdir(parents=True, exist_ok=True)
        try:
            self._merge_placement()
            wanted = {name: m for name, m in sorted(self.marked.items()) if not (runs / name / "summary.json").is_file()}
            if not wanted:
                return 0
            (runs / ".incoming").mkdir(exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix="pull-", dir=runs / ".incoming"))
            try:
                try:
                    self._get(tmp, wanted)
                except FileNotFoundError:  # some file is gone: one recording at a time, keeping the whole ones
                    for name in list(wanted):
                        try:
                            self._get(tmp, {name: wanted[name]})
                        except FileNotFoundError:
                            self._drop(name)
                            del wanted[name]
                n = 0
                for name, marker in wanted.items():
                    if all((tmp / name / rel).is_file() and (tmp / name / rel).stat().st_size == size
                           for rel, size in marker["files"].items()):
                        self._place(tmp / name, runs)
                        n += 1
                    else:
                        self._drop(name)
                return n
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        except Exception as e:
            raise UserError(f"--out {self.uri}: cannot bring its recordings down to {self.stage} ({why(e)}); "
                            "run the command again") from None

    def _get(self, tmp: Path, wanted: dict[str, dict[str, Any]]) -> None:
        pairs = [(self.remote("runs", name, rel), tmp / name / rel) for name, m in wanted.items() for rel in sorted(m["files"])]
        for _, local in pairs:
            local.parent.mkdir(parents=True, exist_ok=True)
        self.fs.get([r for r, _ in pairs], [str(local) for _, local in pairs])

    def forget(self, name: str) -> None:
        """A recording the resume set aside as damaged: its marker removed, so the run played again goes up."""
        self._drop(name)

    def _drop(self, name: str) -> None:
        """A marker whose recording is not whole in the URI: removed, not counted (the run is played again)."""
        self.marked.pop(name, None)
        self.leftovers.add(name)
        try:
            self.fs.rm_file(self.remote(MARKER_DIR, f"{name}.json"))
        except Exception:  # replaced when the run is uploaded again
            pass

    @staticmethod
    def _place(folder: Path, runs: Path) -> None:
        here = runs / folder.name
        if here.exists():  # a partial run of the same name in the stage: kept, aside, as prepare would
            aside = runs / ".incomplete"
            aside.mkdir(exist_ok=True)
            n = 1
            while (aside / (folder.name if n == 1 else f"{folder.name}-{n}")).exists():
                n += 1
            os.rename(here, aside / (folder.name if n == 1 else f"{folder.name}-{n}"))
        os.rename(folder, here)

    def _merge_placement(self) -> None:
        try:
            remote = self.fs.cat_file(self.remote(placement.LEDGER)).decode("utf-8", "replace")
        except FileNotFoundError:
            return
        path = self.stage / placement.LEDGER
        local = path.read_text(encoding="utf-8") if path.is_file() else ""
        have = set(local.splitlines())
        extra = [line for line in remote.splitlines() if line and line not in have]
        if extra:
            path.write_text("\n".join(extra) + "\n" + local, encoding="utf-8")  # the stage's own lines win (newest)

    # -- uploading ------------------------------------------------------------------------
    def push_recording(self, path: str | Path) -> bool:
        """Upload one complete recording folder, files first, marker last; True once it is up."""
        return self.push_recordings([Path(path)]) == 1

    def push_recordings(self, paths: list[Path]) -> int:
        """Upload complete recording folders: all their files in one bulk put, then their markers; how many are up.

        A folder the URI already holds without its marker (an upload cut short, by this machine or another)
        loses its stray files first. A failure leaves the markers out (said at the end, tried again then)."""
        with self._mutex:
            todo = [p for p in paths if p.name not in self.marked]
        if not todo:
            return len(paths)
        try:
            files = {p.name: {str(f.relative_to(p)): f.stat().st_size for f in sorted(p.rglob("*")) if f.is_file()}
                     for p in todo}
            for p in todo:
                if p.name in self.leftovers:
                    target = self.remote("runs", p.name)
                    stale = [r for r in self.fs.find(target) if r.split(target + "/", 1)[-1] not in files[p.name]]
                    if stale:
                        self.fs.rm(stale)
            lpaths = [str(p / rel) for p in todo for rel in sorted(files[p.name])]
            rpaths = [self.remote("runs", p.name, rel) for p in todo for rel in sorted(files[p.name])]
            self._folders(rpaths + [self.remote(MARKER_DIR, "x")])
            self.fs.put(lpaths, rpaths)
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            markers = {p.name: {"folder": p.name, "files": files[p.name], "uploaded": now} for p in todo}
            self.fs.pipe({self.remote(MARKER_DIR, f"{name}.json"): json.dumps(m, sort_keys=True).encode()
                          for name, m in markers.items()})
        except Exception as e:  # the batch goes on; the end of the batch tries again
            with self._mutex:
                for p in todo:
                    self.failed[p.name] = why(e)
                    self.leftovers.add(p.name)
            return len(paths) - len(todo)
        with self._mutex:
            for name, m in markers.items():
                self.marked[name] = m
                self.failed.pop(name, None)
                self.leftovers.discard(name)
        return len(paths)

    def complete_here(self) -> list[Path]:
        """The stage's complete, sound recordings in runs/ (what the URI should hold)."""
        from workstation.store.integrity import quick_verdict
        from workstation.store.recording import Recording
        from workstation.store.records import RecordingError

        runs = results.runs_dir(self.stage)
        out = []
        for p in sorted(runs.iterdir()) if runs.is_dir() else []:
            if p.name.startswith(".") or not (p / "summary.json").is_file():
                continue
            if p.name not in self.marked:  # only the ones to upload are checked
                try:
                    rec = Recording(p)
                    if not rec.complete or not quick_verdict(rec)[0]:
                        continue
                except RecordingError:
                    continue
            out.append(p)
        return out

    def push_results(self, rows: list[dict[str, Any]]) -> None:
        """results.csv and results.jsonl (``path`` naming the recording in the URI), placement.jsonl, grid.toml."""
        shown = []
        for r in rows:
            r = dict(r)
            name = Path(r.get("path") or "").name
            r["path"] = self.shown("runs", name) if name in self.marked else None
            shown.append(r)
        with tempfile.TemporaryDirectory(prefix="results-", dir=self.stage) as tmp:
            results.write(tmp, shown)
            lpaths = [str(Path(tmp) / "results.csv"), str(Path(tmp) / "results.jsonl")]
            for name in (placement.LEDGER, "grid.toml"):
                if (self.stage / name).is_file():
                    lpaths.append(str(self.stage / name))
            self._folders([self.remote("x")])
            self.fs.put(lpaths, [self.remote(Path(p).name) for p in lpaths])

    def _folders(self, paths: list[str]) -> None:
        """The parent folders of ``paths``, on a file system that has folders (object stores have none)."""
        if self.has_dirs:
            for parent in sorted({p.rsplit("/", 1)[0] for p in paths}):
                self.fs.makedirs(parent, exist_ok=True)

    def sync(self, cells: list[Any]) -> tuple[int, str | None]:
        """Upload what is not up yet, then the results; (recordings uploaded now, why something failed or None)."""
        n = 0
        todo = [p for p in self.complete_here() if p.name not in self.marked]
        for i in range(0, len(todo), BULK):
            n += self.push_recordings(todo[i:i + BULK])
        problems = []
        with self._mutex:
            if self.failed:
                name, reason = next(iter(sorted(self.failed.items())))
                more = f" (and {len(self.failed) - 1} more)" if len(self.failed) > 1 else ""
                problems.append(f"runs/{name}{more}: {reason}")
        try:
            self.push_results(results.collect(self.stage, cells))
        except Exception as e:
            problems.append(f"the results table: {why(e)}")
        return n, "; ".join(problems) or None


class Uploads:
    """The background uploader of one batch: recordings as the driver counts them done, the results every so often."""

    def __init__(self, out: RemoteOut, cells: list[Any], every_s: float = RESULTS_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.out, self.cells, self.every_s, self.clock = out, cells, every_s, clock
        self.queue: Queue[Path | None] = Queue()
        self.uploaded = 0
        self._thread = threading.Thread(target=self._work, name="batch-uploads", daemon=True)

    def start(self, batch: Any) -> None:
        from workstation.studies.batch.progress import DONE

        def settled(run: Any) -> None:
            if run.status == DONE and run.path:
                self.queue.put(Path(run.path))

        batch.on_settled = settled
        for p in self.out.complete_here():  # what a killed driver left in the stage un-uploaded
            if p.name not in self.out.marked:
                self.queue.put(p)
        self._thread.start()

    def _work(self) -> None:
        last, fresh = self.clock(), False
        while True:
            item: Path | None | bool
            try:
                item = self.queue.get(timeout=1.0)
            except Empty:
                item = False  # nothing came: the results may be due
            batch = [item] if isinstance(item, Path) else []
            while item is not None and len(batch) < BULK:  # what else has come meanwhile goes up with it
                try:
                    item = self.queue.get_nowait()
                except Empty:
                    break
                if isinstance(item, Path):
                    batch.append(item)
            if batch:
                n = self.out.push_recordings(batch)
                self.uploaded += n
                fresh = fresh or n > 0
            if item is None:
                return
            if fresh and self.clock() - last >= self.every_s:
                last, fresh = self.clock(), False
                try:
                    self.out.push_results(results.collect(self.out.stage, self.cells))
                except Exception:  # tried again at the next interval and at the end
                    pass

    def finish(self) -> tuple[int, str | None]:
        """Drain the queue, then upload whatever is still missing and the results."""
        if self._thread.is_alive():
            self.queue.put(None)
            self._thread.join()
        n, why = self.out.sync(self.cells)
        return self.uploaded + n, why


def out_dir(out: str | None, default: Path) -> tuple[Path, RemoteOut | None]:
    """The batch directory for ``--out``: a local one, or the stage of a URI (checked, its grid brought down)."""
    if not out:
        return default, None
    if not is_remote(out):
        return Path(local_out(out)), None
    remote = RemoteOut.open(out)
    try:
        remote.pull_grid()
    except BaseException:
        remote.close()
        raise
    return remote.stage, remote


__all__ = ["LOCK", "MARKER_DIR", "RESULTS_EVERY_S", "RemoteOut", "Uploads", "out_dir"]
