"""The one atomic write: a reader sees the old file or the new one, whole, never a part of one.

The bytes go to a temporary file of a unique name beside the target (two writers never share
one), are flushed and fsync-ed, then renamed over the target (``os.replace``), or linked to it
with ``exclusive`` (which refuses a target that exists). Whatever fails, the temporary file goes.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes, *, exclusive: bool = False, fsync: bool = True) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically.

    ``exclusive``: raise ``FileExistsError`` if ``path`` exists (then nothing is written).
    ``fsync=False`` for what can be rebuilt (a cache): the rename stays atomic, the bytes may
    wait in the OS's buffers.
    """
    path = Path(path)
    # unique, and created fresh ("x"), with the permissions any new file gets (mkstemp's are 0600)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        if exclusive:
            try:
                os.link(tmp, path)  # atomic, and refuses an existing file
            except FileExistsError:
                raise
            except OSError:  # a file system without hard links
                if path.exists():
                    raise FileExistsError(path) from None
                os.replace(tmp, path)
        else:
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def move_into(path: str | Path, directory: str | Path) -> Path:
    """Move the file or folder ``path`` into ``directory`` (made if missing) under its own name, or
    ``NAME-2``, ``NAME-3``... when that is taken; one rename, so it is there whole or still where it was."""
    path, directory = Path(path), Path(directory)
    directory.mkdir(exist_ok=True)
    n = 1
    while True:
        target = directory / (path.name if n == 1 else f"{path.name}-{n}")
        if not target.exists() and not target.is_symlink():
            try:
                os.rename(path, target)
            except FileExistsError:  # taken between the look and the rename: the next name
                n += 1
                continue
            return target
        n += 1


def put_in_place(tmp: str | Path, path: str | Path) -> None:
    """A file some other writer made whole under a temporary name beside ``path`` (a video the encoder wrote)
    takes its place in one rename: a reader sees the old file or the new one."""
    os.replace(tmp, path)


__all__ = ["move_into", "put_in_place", "write_atomic"]
