"""The import paths from before the layer folders, still importable for scripts written against them.

The tree moved into one folder per layer (docs/house.md): ``workstation.turn.engine`` is now
``workstation.engine.turn_engine``, ``workstation.analysis`` is ``workstation.studies.analysis``, and
so on. A script or notebook that imports an old path gets the module at its new place (the same
module object, under both names). Nothing in the tree uses an old path (tests/test_house.py checks).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

_STUDIES = ("analysis", "judge", "idc", "arena", "export", "qa", "batch", "packs", "inspect_task", "doctor",
            "session")

# old path below workstation -> new path below workstation; the longest old prefix wins
MOVED: dict[str, str] = {
    "analysis.command": "commands.report",
    "analysis.compare_command": "commands.compare",
    "arena.command": "commands.arena",
    "batch.command": "commands.batch",
    "doctor.command": "commands.doctor",
    "export.command": "commands.export",
    "idc.command": "commands.idc",
    "judge.command": "commands.judge",
    "packs.command": "commands.prompts",
    "qa.command": "commands.qa",
    "qa.eval_command": "commands.qa_eval",
    "runs.ls_command": "commands.ls",
    "runs.importers.command": "commands.import_runs",
    "runs.run_command": "commands.run",
    "session_command": "commands.session",
    "recording_command": "commands.recording",
    "screen_command": "commands.screen",
    "errors": "base.errors",
    "locations": "base.locations",
    "text_table": "base.text_table",
    "turn.engine": "engine.turn_engine",
    "turn": "engine",
    "calls": "engine.calls",
    "runs": "run",
    "launch": "run.launch",
    "options": "run.options",
    "agents": "run.agents",
    "providers": "run.providers",
    "arena.start": "run.match_start",
    "arena.verify": "run.match_verify",
    "arena.request": "run.match_request",
    "arena.sides": "run.match_sides",
    "arena.players": "run.match_players",
    "arena.match_args": "run.match_args",
    "arena.play_vs": "run.match_vs",
    **{name: f"studies.{name}" for name in _STUDIES},
}


def new_name(fullname: str) -> str | None:
    """The module's name today for an old ``workstation.X`` name, or None if the name did not move."""
    parts = fullname.split(".")
    if parts[0] != "workstation":
        return None
    for n in range(len(parts) - 1, 0, -1):
        new = MOVED.get(".".join(parts[1:n + 1]))
        if new is not None:
            return ".".join(["workstation", new, *parts[n + 1:]])
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        pass  # the module at its new place has run already


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        try:
            if importlib.util.find_spec(new) is None:
                return None
        except ModuleNotFoundError:  # its package does not exist either
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
