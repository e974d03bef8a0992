"""The local paths a command reads and writes: an object-store URI refused, an output file checked first.

Only ``batch --out URI`` and ``report URI`` speak to object storage (``workstation.studies.batch.out_uri``); every
other path is a local one, and ``s3://b/p`` given there would become the folder ``s3:`` (a ``Path`` folds
``//`` into ``/``). ``refuse_uri`` says so in one line, before anything is made. ``check_out_file`` is the
one check of a file a command is about to write (``export -o``, ``report --json/--md``): run before anything
is computed or printed, so a bad path costs nothing. ``refuse_inside_inputs`` is the one check that an output
(file or directory) is not one of the command's inputs nor anywhere inside one, at any depth, resolved through
symlinks (a link inside an input counts as the input too).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from workstation.base.errors import UserError

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


# A link inside an input directory makes its target an input too; the walk that finds them stops here (a tree
# this big is a recording store, not an input a report or an export names).
LINK_WALK_LIMIT = 200_000


def refuse_file_inside_artifacts(path: str | Path, flag: str, command: str) -> None:
    """``refuse_inside_artifacts`` for a file a command writes (its folder must not be, or lie in, another sealed
    artifact or a recording); run it after the command's own inputs are checked, so an input is named as one."""
    parent = Path(path).expanduser().parent
    refuse_inside_artifacts(parent if str(parent) else Path("."), flag, command, shown=f"{flag} {path}")


def refuse_inside_inputs(out: str | Path, inputs: Iterable[str | Path], flag: str, command: str) -> None:
    """``LocalPathError`` if the output ``out`` is an input file, an input directory, or anywhere inside an input
    directory, at any depth, every path resolved through symlinks (links inside an input directory included).

    ``flag`` names the option (``--json``; empty for an argument), ``command`` the command (``report``). Inputs
    that are URIs or do not exist are skipped (their reader reports them). Run it before the first write.
    """
    if uri_of(out) is not None:
        return
    target = Path(out).expanduser().resolve()
    shown = f"{flag} {out}" if flag else str(out)
    for given in inputs:
        if uri_of(given) is not None:
            continue
        path = Path(given).expanduser()
        try:
            if not path.exists():
                continue
            real = path.resolve()
            if path.is_dir():
                roots = [real, *_link_targets(real)]
            else:
                roots = [real]
        except OSError:  # an unreadable input is its reader's to report
            continue
        for around in _enclosing_artifacts(real):  # strictly inside one (a resume writes into its own directory)
            if target != around and target.is_relative_to(around):
                raise LocalPathError(f"{shown} is inside {around}, the sealed artifact that holds {command}'s input "
                                     f"{given}; write outside it", file=out)
        for root in roots:
            if target == root:
                raise LocalPathError(f"{shown} is one of {command}'s inputs ({given}); choose another place",
                                     file=out)
            if target.is_relative_to(root) and root.is_dir():
                raise LocalPathError(f"{shown} is inside {command}'s input {given}; write outside its inputs",
                                     file=out)


def refuse_inside_artifacts(out: str | Path, flag: str, command: str, *, own: str | None = None,
                            shown: str | None = None, holds_recordings: bool = False) -> None:
    """``LocalPathError`` if the output directory ``out`` lies inside a sealed artifact (a batch, a judge study, an
    IDC, an arena...: a seal of this workstation) or a recording (a ``manifest.json`` beside a ``turns.jsonl``), at
    any depth, resolved through symlinks: what the command writes there would change that artifact without a word.

    ``own``: the kind of the command's own sealed artifact (``batch``, ``judge-study``, ``arena``...): ``out``
    itself may be one of that kind (resumed, or replaced), never of another.

    ``holds_recordings``: ``out`` only receives new recordings (``run``, ``match``, ``import``): an artifact whose
    seal leaves recordings out (an arena's: the arena counts only the matches its ledger holds, and names any other,
    docs/two-player.md) admits them, since a recording added there changes nothing it pins. An arena's directory is
    often the shared default ``recordings``. Any other output (a log, a report file, an eval) is refused there too.
    Run it before the first write; an input's own check is ``refuse_inside_inputs``."""
    if uri_of(out) is not None:
        return
    try:
        target = Path(out).expanduser().resolve()
    except (OSError, RuntimeError):  # a link loop: the output check names it
        return
    from workstation.store.seal import admits_recordings, seal_kind

    shown = shown or (f"{flag} {out}" if flag else str(out))
    itself = own is not None and seal_kind(target) == own
    for around in ([] if itself else [target]) + list(target.parents):
        kind = seal_kind(around)
        if holds_recordings and kind is not None and admits_recordings(around):
            continue
        if kind is not None:
            what = f"a sealed {kind} (seal.json)"
        elif (around / "manifest.json").is_file() and (around / "turns.jsonl").is_file():
            what = "a recording"
        else:
            continue
        where = "is" if around == target else f"is inside {around},"
        raise LocalPathError(f"{shown} {where} {what}; {command} never writes inside another artifact: choose a "
                             "directory outside it", file=out)


def _enclosing_artifacts(path: Path) -> list[Path]:
    """The sealed artifacts an input stands inside (an IDC round inside its IDC, a batch's recording inside its
    batch): writing anywhere in them would change what their seal covers, so they count as inputs too."""
    return [p for p in path.parents if (p / "seal.json").is_file()]


def _link_targets(root: Path) -> list[Path]:
    """The resolved targets of the symbolic links under the directory ``root`` (not followed further)."""
    found: list[Path] = []
    stack = [root]
    seen = 0
    while stack and seen < LINK_WALK_LIMIT:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for e in entries:
            seen += 1
            if e.is_symlink():
                try:
                    found.append(Path(e.path).resolve())
                except (OSError, RuntimeError):
                    continue
            elif e.is_dir(follow_symlinks=False):
                stack.append(Path(e.path))
    return found
