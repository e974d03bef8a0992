"""Export never writes into what it reads: an output inside (or equal to) any input, at any depth, is refused.

Both sides are resolved (symlinks and ``..``) as far as they exist, so ``lnk/x.gif`` with ``lnk`` a link to a
recording, or ``recs/../recs/REC/x.gif``, is seen for what it is. Checked before anything is read or written.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from workstation.base.errors import UserError


def _real(path: str | Path) -> Path | None:
    """``path`` with every symlink and ``..`` resolved (as far as it exists), or None if it cannot be."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def inside_input(out: str | Path, sources: Iterable[str | Path]) -> str | Path | None:
    """The first of ``sources`` that ``out`` is, or lies inside at any depth (symlinks and ``..`` resolved on
    both sides), or None: export never writes into what it reads."""
    target = _real(out)
    if target is None:
        return None
    for source in sources:
        src = _real(source)
        if src is not None and (target == src or target.is_relative_to(src)):
            return source
    return None


def check_outside(out: str | Path, sources: Iterable[str | Path], flag: str = "-o") -> None:
    """``UserError`` (exit 2) if the file ``out`` is one of ``sources`` or inside one, before anything is read."""
    source = inside_input(out, sources)
    if source is not None:
        raise UserError(f"{flag} {out} is inside the input {source}; export never writes into what it "
                        "reads: choose a place outside it", file=str(out))
