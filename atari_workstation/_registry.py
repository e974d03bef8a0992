"""Loaded by Inspect through the ``inspect_ai`` entry point: registers the task ``atari_workstation/atari``."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.util import registry_info

NAME = "atari_workstation/atari"


def _atari(game: str = "breakout", seeds: Any = 0, out: str | None = None, prompts: str | None = None,
           **protocol: Any) -> Task:
    """Play GAME for each of SEEDS through the workstation's engine with the Inspect model; our recordings go
    to OUT (default: atari-recordings beside the logs, under INSPECT_LOG_DIR or ./logs), and any protocol
    setting (frames, max_actions, memory, history, feedback, clock, start...) is a -T."""
    from workstation.studies.inspect_task.play import make_task

    made: Task = make_task(game=game, seeds=seeds, out=out, prompts=prompts, **protocol)
    return made


_atari.__name__ = _atari.__qualname__ = "atari"
atari = task(_atari)
# Inspect prefixes the package name only when it finds the package installed; run from a checkout that holds
# an atari_workstation.egg-info (an editable install's leftover) it does not, so the name is given in full.
if registry_info(atari).name != NAME:
    atari = task(name=NAME)(_atari)
