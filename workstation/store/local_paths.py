"""The local paths a command reads and writes: an object-store URI refused, an output file checked first.

Only ``batch --out URI`` and ``report URI`` speak to object storage (``workstation.batch.out_uri``); every
other path is a local one, and ``s3://b/p`` given there would become the folder ``s3:`` (a ``Path`` folds
``//`` into ``/``). ``refuse_uri`` says so in one line, before anything is made. ``check_out_file`` is the
one check of a file a command is about to write (``export -o``, ``report --json/--md``): run before anything
is computed or printed, so a bad path costs nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from workstation.errors import UserError

# ``scheme://`` as typed; ``scheme:/`` is what a Path made of it (``Path("s3://b/x")`` is ``s3:/b/x``).
# Two letters at least, so that a drive letter (``C:/``) is never taken for a scheme.
URI_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
_FOLDED = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/(?!/)")
WHERE_URIS_WORK = "object storage is for `workstation batch --out URI` and `workstation report URI`"


class LocalPathError(UserError):
    """A URI where a local path is needed, or an output file that cannot be written: one line, exit 2."""


def uri_of(path: str | Path | None) -> str | None:
    """The URI ``path`` is (``s3://b/x``; also when a Path folded it to ``s3:/b/x``), or None for a local path."""
    if path is None:
        return None
    text = os.fspath(path)
    if URI_SCHEME.match(text):
        return text
    m = _FOLDED.match(text)
    if m and isinstance(path, Path):  # only a Path folds: a typed ``x:/y`` stays a (strange) local name
        return f"{m.group(1)}://{text[m.end():]}"
    return None


def refuse_uri(path: str | Path | None, flag: str, does: str) -> None:
    """``LocalPathError`` if ``path`` is a URI: ``FLAG URI: DOES; object storage is for ...``.

    ``flag`` is the option (``--out``; empty for an argument), ``does`` what the command does with the path
    (``run writes to a local directory``). A ``file://`` URI is told to give its path.
    """
    uri = uri_of(path)
    if uri is None:
        return
    shown = f"{flag} {uri}" if flag else uri
    if uri.lower().startswith("file://"):
        local = uri[len("file://"):] or "/"
        raise LocalPathError(f"{shown}: {does}; give the path itself ({local}), not a file:// URI", file=uri)
    raise LocalPathError(f"{shown}: {does}; {WHERE_URIS_WORK}", file=uri)


def check_out_file(path: str | Path, flag: str, does: str) -> Path:
    """The file ``path`` a command will write, checked before it computes anything; ``LocalPathError`` if
    it is a URI, a directory, in a directory that does not exist (none is made), or not writable."""
    refuse_uri(path, flag, does)
    out = Path(path).expanduser()
    shown = f"{flag} {path}" if flag else str(path)
    if out.is_dir():
        raise LocalPathError(f"cannot write {shown}: it is a directory; give a file name", file=out)
    parent = out.parent if str(out.parent) else Path(".")
    probe = parent
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise LocalPathError(f"cannot write {shown}: {probe} is a file, not a directory; choose another place",
                             file=out)
    if not parent.is_dir():
        raise LocalPathError(f"cannot write {shown}: the directory {parent} does not exist (none is made); make "
                             "it first or choose another place", file=out)
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise LocalPathError(f"cannot write {shown}: permission denied; choose another place", file=out)
    return out
