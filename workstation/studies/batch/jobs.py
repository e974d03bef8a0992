"""The runs of a batch: each grid cell (``workstation.studies.batch.grid``) with its run id and concurrency class.

The run id comes from the cell's ``RunSpec`` alone (``RunSpec.identity``: no agent built,
no key read); it names the run's recording folder and is how a resumed batch finds
finished work. Two cells with one run id (settings that differ only in ``base_url`` or
``timeout``, which do not change a run) are refused, naming the setting and its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workstation.run.options import RunSpec
from workstation.store.forward import Forward
from workstation.studies.batch.grid import Grid, GridCell, GridError, key_lines

CPU = "cpu"  # the concurrency class of runs that need no provider (random, replay)


@dataclass(frozen=True)
class Job:
    cell: GridCell
    run_id: str
    provider: str  # "openai", "compat", ... or "cpu"

    label = Forward[str]("cell", "setting")  # the expanded setting label: "gpt-5.4-mini|feedback=false"
    setting = Forward[str]("cell", "base")  # the [[settings]] label
    game = Forward[str]("cell")
    seed = Forward[int]("cell")
    spec = Forward[RunSpec]("cell")
    varied = Forward[dict[str, Any]]("cell")

    @property
    def is_model(self) -> bool:
        return self.provider != CPU


def line_of(grid: Grid, path: tuple[Any, ...]) -> str:
    """' line N' of a key of the grid's file (the nearest enclosing key or table that has one), or ''."""
    try:
        lines = key_lines(Path(grid.source).read_text(encoding="utf-8"))
    except OSError:
        return ""
    while path:
        if path in lines:
            return f" line {lines[path]}"
        path = path[:-1]
    return ""


def jobs_of(grid: Grid) -> list[Job]:
    """Every cell as a job, seeds outermost (a batch stopped half-way has every setting and game)."""
    from workstation.engine.promptpack import load_pack

    digests: dict[str, Any] = {}
    seen: dict[str, str] = {}
    out: list[Job] = []
    games = {g: i for i, g in enumerate(grid.games)}
    seeds = {s: i for i, s in enumerate(grid.seeds)}
    labels = [s.label for s in grid.settings]
    order = sorted(range(len(grid.cells)), key=lambda i: (seeds[grid.cells[i].seed], games[grid.cells[i].game], i))
    for i in order:
        cell = grid.cells[i]
        spec = cell.spec
        if spec.prompts not in digests:
            digests[spec.prompts] = load_pack(spec.prompts).digest
        run_id = spec.identity(digests[spec.prompts])
        if run_id in seen:
            n = labels.index(cell.base)
            raise GridError(f"{grid.source}{line_of(grid, ('settings', n))}: settings[{n}]: {cell.setting!r} gives the "
                            f"same runs as {seen[run_id]!r} (they differ only in base_url or timeout, which do not "
                            "change a run); drop one", "settings")
        seen[run_id] = cell.setting
        ref = spec.agent_ref
        out.append(Job(cell, run_id, ref.kind if ref.is_model else CPU))
    return out


__all__ = ["CPU", "Job", "jobs_of", "line_of"]
