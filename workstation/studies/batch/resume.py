"""Before a batch touches its directory: is DIR a batch this grid may resume, and can its files be written?

A directory that holds a batch keeps the grid it was run with (``DIR/grid.toml``). Running a *different*
grid into it would replace that file and drop the old rows from ``results.csv``: refused, naming what
differs, with nothing of the old batch changed. The files the batch rewrites (``results.csv``,
``results.jsonl``, ``grid.toml``) and ``runs/`` must be what they should be (a file, a directory), so a
refusal comes before anything is written, never halfway.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError

if TYPE_CHECKING:
    from workstation.studies.batch.grid import Grid

FILES = ("grid.toml", "results.csv", "results.jsonl")
DIRS = ("runs",)


def _shown(values: Any) -> str:
    values = list(values)
    text = ", ".join(map(str, values[:6])) + (f", ... ({len(values)} in all)" if len(values) > 6 else "")
    return f"[{text}]"


def differences(kept: Grid, given: Grid) -> list[str]:
    """What differs between two grids, in words (empty: the same batch)."""
    out = []
    if kept.name != given.name:
        out.append(f"name ({kept.name!r} kept, {given.name!r} given)")
    if kept.games != given.games:
        out.append(f"games ({_shown(kept.games)} kept, {_shown(given.games)} given)")
    if kept.seeds != given.seeds:
        out.append(f"seeds ({_shown(kept.seeds)} kept, {_shown(given.seeds)} given)")
    ks = [(s.label, s.spec, sorted(s.options.items())) for s in kept.settings]
    gs = [(s.label, s.spec, sorted(s.options.items())) for s in given.settings]
    if ks != gs:
        out.append(f"settings ({_shown(s.label for s in kept.settings)} kept, "
                   f"{_shown(s.label for s in given.settings)} given)")
    for key in sorted(set(kept.axes) | set(given.axes)):
        a, b = kept.axes.get(key), given.axes.get(key)
        if a != b:
            out.append(f"{key} ({'unset' if a is None else _shown(a)} kept, {'unset' if b is None else _shown(b)} given)")
    return out


def _kind(path: Path) -> str | None:
    """'file', 'dir', 'other', or None when absent; OSError (unreadable) as a UserError."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UserError(f"cannot use the batch directory: {path} ({e.strerror or e}); fix it or give --out "
                        "another directory") from None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def own_batch_dir(grid_path: str | Path) -> Path | None:
    """The batch directory whose own copy of its grid ``grid_path`` is (``DIR/grid.toml`` of a directory a batch
    ran in: sealed as a batch, or holding the lock file every batch leaves), or None. Running that grid without
    ``--out`` resumes that batch, as a user expects, rather than starting another under batches/<name>."""
    from workstation.store.seal import seal_kind
    from workstation.studies.batch.runner import LOCK, SEAL_KIND

    path = Path(grid_path)
    if path.name != "grid.toml" or not path.is_file():
        return None
    parent = path.parent
    if seal_kind(parent) == SEAL_KIND or (parent / LOCK).is_file():
        return parent
    return None


def check_batch_dir(out: Path, grid: Grid) -> None:
    """Refuse (UserError, one line) a batch directory this grid must not write into."""
    out = Path(out)
    kind = _kind(out)
    if kind is None:
        return
    if kind != "dir":
        raise UserError(f"--out {out} is a file, not a directory; give the batch a directory")
    try:
        with os.scandir(out):
            pass
    except OSError as e:
        raise UserError(f"cannot read the batch directory {out} ({e.strerror or e}); fix its permissions or "
                        "give --out another directory") from None
    for name in FILES:
        if _kind(out / name) not in (None, "file"):
            raise UserError(f"{out / name} should be a file and is not; move it away or give --out another directory")
    for name in DIRS:
        if _kind(out / name) not in (None, "dir"):
            raise UserError(f"{out / name} should be a directory and is not; move it away or give --out another "
                            "directory")
    kept_path = out / "grid.toml"
    if _kind(kept_path) is None:
        return
    if Path(grid.source).resolve() == kept_path.resolve():
        return
    from workstation.studies.batch.grid import load_grid

    try:
        kept = load_grid(kept_path)
    except UserError as e:
        raise UserError(f"{out} holds a batch whose grid.toml cannot be read ({e}); give --out another "
                        "directory") from None
    diff = differences(kept, grid)
    if diff:
        raise UserError(f"{out} holds another batch: {'; '.join(diff)}; resume it with `workstation batch "
                        f"{kept_path}` (its own grid), or give --out another directory (nothing was changed)")
