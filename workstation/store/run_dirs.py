"""Run folder names, ``GAME-AGENT-sSEED-RUNID8``, and claiming or renaming one without a race."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:48] or "agent"


def dir_name(game_key: str, agent_spec: str, seed: int | None, run_id: str | None) -> str:
    """``GAME-AGENT-sSEED-RUNID8`` (a replay is named ``replay``; no run id: the time)."""
    kind, _, _model = (agent_spec or "agent").partition(":")
    tail = run_id[:8] if run_id else time.strftime("%Y%m%d-%H%M%S")
    return f"{game_key}-{slug(kind if kind == 'replay' else agent_spec or 'agent')}-s{seed}-{tail}"


def claim(out: Path, name: str) -> Path:
    """Make a new, empty folder ``out/name`` (then ``name-2``, ``-3``...); ``os.mkdir`` fails if it exists."""
    from workstation.store.records import RecordingError

    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RecordingError(f"cannot make the output directory {out}: {e.strerror or e}") from None
    for n in range(1, 100_000):
        path = out / (name if n == 1 else f"{name}-{n}")
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        except OSError as e:
            raise RecordingError(f"cannot make a run folder in {out}: {e.strerror or e}") from None
        return path
    raise RecordingError(f"{out} already holds 100000 runs named {name}; choose another --out")


def rename_to(path: Path, name: str) -> Path:
    """Move the folder ``path`` to ``name`` (or ``name-2``...) beside it; on any failure it stays where it is."""
    path = Path(path)
    if path.name == name or path.name.startswith(name + "-"):
        return path
    for n in range(1, 1000):
        target = path.parent / (name if n == 1 else f"{name}-{n}")
        if target.exists():
            continue
        try:
            os.rename(path, target)
        except OSError:
            return path
        return target
    return path


__all__ = ["claim", "dir_name", "rename_to", "slug"]
