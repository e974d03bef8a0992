"""Start a recorded run: the one place the CLI, the TUI and the batch runner make engines."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from workstation.agents import make_agent
from workstation.game.clock import RULES
from workstation.turn.engine import Observer, TurnEngine
from workstation.game.games import Game, get_game
from workstation.turn.promptpack import default_pack_dir, load_pack
from workstation.game.protocol import Protocol
from workstation.options import GENERATION_KEYS, RunSpec, run_identity  # noqa: F401 - RunSpec: importable here too
from workstation.store.recording import Recording, RecordingError, RecordingWriter

FORMAT = "atari-workstation/1"


def _version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def _versions() -> tuple:
    """Read once a process: each lookup parses package metadata (~10 ms, and a batch starts hundreds of runs)."""
    return tuple({
        "workstation": _version("atari-workstation") or "dev",
        "ale-py": _version("ale-py"),
        "gymnasium": _version("gymnasium"),
        "python": platform.python_version(),
    }.items())


def versions() -> dict:
    return dict(_versions())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:48] or "agent"


def new_run_dir(out: Path, game: Game, agent_spec: str, seed: int, run_id: str | None = None) -> Path:
    """Claim a new, empty run folder under ``out``, named ``GAME-AGENT-sSEED-RUNID8`` (then -2, -3...).

    The folder is made here with ``os.mkdir``, which fails if it exists, so two
    runs started at the same moment (the same spec gives the same run id) each
    get their own. Without a run id the name ends in the time, as before.
    """
    kind, _, _model = agent_spec.partition(":")
    tail = run_id[:8] if run_id else time.strftime("%Y%m%d-%H%M%S")
    name = f"{game.key}-{_slug(kind if kind == 'replay' else agent_spec)}-s{seed}-{tail}"
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


def manifest_for(game: Game, protocol: Protocol, seed: int, agent, pack, parent: dict | None = None) -> dict:
    desc = agent.describe()
    m = {
        "format": FORMAT,
        "rules": RULES,  # the game-over rule (workstation.game.clock); verify re-executes under it
        "run_id": run_identity(game, protocol, seed, desc, pack.digest),
        "game": game.key,
        "env_id": game.env_id,
        "in_paper": game.in_paper,
        "seed": seed,
        "protocol": protocol.to_json(),
        "agent": desc,
        "prompt_pack": {"name": pack.name, "digest": pack.digest,
                        "path": None if pack.path == default_pack_dir().resolve() else str(pack.path)},
        "versions": versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "frame_shape": [game.height, 160],
        "clock": "prompt timestamps are frame/30 s (the paper's convention); the Atari runs at 60 Hz, "
                 "so the 900-frame budget is 15 s of native game time",
    }
    if protocol.start.kind == "fixed":
        m["seed_note"] = ("sticky actions off and a fixed start: every seed starts from the same state; "
                          "the seed labels a repeat and seeds the agent only")
    if parent:
        m["parent"] = parent
    return m


def start_run(spec: RunSpec, observers: list[Observer] | None = None, plan_source=None,
              agent=None, rewindable: bool = True) -> TurnEngine:
    """Make the agent, the recording and the engine for ``spec`` (not started).

    ``rewindable=False`` (headless runs, batches) keeps no per-turn snapshots.
    """
    game = get_game(spec.game)
    pack = load_pack(spec.prompts)
    if agent is None:
        agent = make_agent(spec.agent, game, spec.seed, spec.provider_options, plan_source)
    manifest = manifest_for(game, spec.protocol, spec.seed, agent, pack)
    path = new_run_dir(Path(spec.out), game, spec.agent, spec.seed, run_id=manifest["run_id"])
    writer = RecordingWriter(path, manifest, game.height)
    return TurnEngine(game, spec.protocol, agent, spec.seed, pack, writer, observers, spec.max_cost, rewindable)


def branch_run(engine: TurnEngine, turn: int, out: Path | None = None) -> Path:
    """Rewind ``engine`` to the start of ``turn`` and continue in a new recording.

    The branch copies the parent's frames and turns up to that point and names
    its parent and the turn it left from. The parent recording is left as it
    was (marked incomplete if it was still running).
    """
    parent_writer = engine.writer
    if parent_writer is None:
        raise ValueError("this engine records nothing; there is no parent recording to branch from")
    try:
        frame = engine.rewind_frame(turn)
    except ValueError as e:
        raise ValueError(str(e).replace("cannot rewind to", "cannot branch at")) from None
    if engine.summary is None:
        engine.stop(reason=f"left for a branch at turn {turn}")
    parent = Recording(parent_writer.path)
    manifest = dict(parent.manifest)
    manifest["parent"] = {"path": str(parent.path), "run_id": parent.manifest.get("run_id"), "turn": turn,
                          "frame": frame}
    manifest["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    root = Path(out) if out else parent.path.parent
    path = new_run_dir(root, engine.game, f"{engine.agent.spec}-branch-t{turn}", engine.seed,
                       run_id=manifest.get("run_id"))
    writer = RecordingWriter.branch_from(path, manifest, parent, frame + 1, turn)
    engine.rewind(turn, writer)
    return path
