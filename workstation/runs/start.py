"""Start a recorded run: the one place the CLI, the TUI and the batch runner make engines."""

from __future__ import annotations

import hashlib
import json
import platform
import re
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from workstation.agents import make_agent
from workstation.turn.engine import Observer, TurnEngine
from workstation.game.games import Game, get_game
from workstation.turn.promptpack import default_pack_dir, load_pack
from workstation.game.protocol import Protocol
from workstation.store.recording import Recording, RecordingWriter

FORMAT = "atari-workstation/1"
GENERATION_KEYS = ("effort", "temperature", "max_output_tokens")  # provider options that change replies


def _version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict:
    return {
        "workstation": _version("atari-workstation") or "dev",
        "ale-py": _version("ale-py"),
        "gymnasium": _version("gymnasium"),
        "python": platform.python_version(),
    }


@dataclass
class RunSpec:
    """What determines a run's outcome (plus where it is written)."""

    game: str
    agent: str = "random"
    seed: int = 0
    protocol: Protocol = field(default_factory=Protocol)
    prompts: str | None = None  # prompt pack directory (None = the built-in pack)
    out: str = "recordings"
    max_cost: float | None = None
    provider_options: Any = None


def run_identity(game: Game, protocol: Protocol, seed: int, agent_desc: dict, pack_digest: str) -> str:
    """Hash of what determines the outcome, so a re-run finds finished work.

    The agent counts by its spec and generation settings only: transport
    (base URL, timeout, retries), SDK version and prices do not change a run.
    """
    options = agent_desc.get("options") or {}
    agent = {"spec": agent_desc.get("spec"), "mode": agent_desc.get("mode"), "pace": agent_desc.get("pace"),
             **{k: options.get(k) for k in GENERATION_KEYS}}
    blob = json.dumps([game.key, protocol.to_json(), seed, agent, pack_digest], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:48] or "agent"


def new_run_dir(out: Path, game: Game, agent_spec: str, seed: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    kind, _, model = agent_spec.partition(":")
    name = f"{game.key}-{_slug(kind if kind == 'replay' else agent_spec)}-s{seed}-{stamp}"
    path = out / name
    n = 1
    while path.exists():
        n += 1
        path = out / f"{name}-{n}"
    return path


def manifest_for(game: Game, protocol: Protocol, seed: int, agent, pack, parent: dict | None = None) -> dict:
    desc = agent.describe()
    m = {
        "format": FORMAT,
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
    path = new_run_dir(Path(spec.out), game, spec.agent, spec.seed)
    writer = RecordingWriter(path, manifest_for(game, spec.protocol, spec.seed, agent, pack), game.height)
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
    snap = engine._snapshots.get(turn)
    if snap is None:
        raise ValueError(f"cannot branch at turn {turn}: {engine._rewind_points()}")
    if engine.summary is None:
        engine.stop(reason=f"left for a branch at turn {turn}")
    parent = Recording(parent_writer.path)
    manifest = dict(parent.manifest)
    manifest["parent"] = {"path": str(parent.path), "run_id": parent.manifest.get("run_id"), "turn": turn,
                          "frame": snap.clock.frame}
    manifest["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    root = Path(out) if out else parent.path.parent
    path = new_run_dir(root, engine.game, f"{engine.agent.spec}-branch-t{turn}", engine.seed)
    writer = RecordingWriter.branch_from(path, manifest, parent, snap.clock.frame + 1, turn)
    engine.rewind(turn, writer)
    return path
