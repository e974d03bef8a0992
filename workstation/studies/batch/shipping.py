"""A finished recording's trip home: packed into bytes on the node that played it, unpacked into DIR/runs/ by the driver.

A run on a cluster node records into that node's own scratch space (``scratch()``); when
it ends (complete, stopped or failed) ``pack`` turns its folder into one uncompressed
tar (the frames are compressed already; a finished recording is ~0.3-0.5 MB), which
travels back as the run's task result through Ray's object store. The driver's
``unpack`` writes it to a hidden folder beside its place and renames it in, so DIR/runs/
only ever holds whole recordings, named as ``new_run_dir`` would name them.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

SCRATCH_ENV = "WORKSTATION_SCRATCH"  # where a node's runs record (default: the system's temp directory)
INCOMING = ".incoming"


def scratch() -> Path:
    """A new, empty scratch folder on this node for one run."""
    root = os.environ.get(SCRATCH_ENV) or None
    if root:
        Path(root).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="workstation-run-", dir=root))


def pack(run_dir: str | Path) -> bytes:
    """The recording folder as tar bytes (its files under the folder's name)."""
    run_dir = Path(run_dir)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(run_dir, arcname=run_dir.name)
    return buf.getvalue()


def unpack(data: bytes, runs_dir: str | Path) -> Path:
    """Put a packed recording into ``runs_dir`` atomically; returns its path there.

    The tar goes into ``runs_dir/.incoming/`` first (same file system) and is renamed into
    place under its own name, or ``NAME-2``, ``NAME-3``... if that is taken (as two runs with
    one run id get two folders locally)."""
    runs_dir = Path(runs_dir)
    incoming = runs_dir / INCOMING
    incoming.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="unpack-", dir=incoming))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            names = {m.name.split("/", 1)[0] for m in tar.getmembers()}
            if len(names) != 1:
                raise ValueError(f"a shipped recording holds {len(names)} folders, not one")
            tar.extractall(tmp, filter="data")
        (name,) = names
        for f in (tmp / name).iterdir():  # durable before it is visible
            if f.is_file():
                fd = os.open(f, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        for n in range(1, 100_000):
            target = runs_dir / (name if n == 1 else f"{name}-{n}")
            try:
                os.rename(tmp / name, target)  # fails if target exists and is not empty
            except OSError:
                if target.exists():
                    continue
                raise
            return target
        raise ValueError(f"{runs_dir} already holds 100000 runs named {name}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def remove(path: str | Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


__all__ = ["INCOMING", "SCRATCH_ENV", "pack", "remove", "scratch", "unpack"]
