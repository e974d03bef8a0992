"""Start a recorded run: the one place the CLI, the TUI and the batch runner make engines."""

from __future__ import annotations

import functools
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from workstation.base.locations import default_pack_dir
from workstation.engine.agent import Agent
from workstation.engine.promptpack import PromptPack, load_pack
from workstation.engine.turn_engine import Observer, TurnEngine
from workstation.game.clock import GAME_OVER_RULE
from workstation.game.games import Game, get_game
from workstation.game.protocol import Protocol
from workstation.run.agents import make_agent
from workstation.run.options import GENERATION_KEYS, RunSpec, run_identity  # noqa: F401 - RunSpec: importable here too
from workstation.store import changes, run_dirs
from workstation.store.recording import Recording, RecordingWriter

FORMAT = "atari-workstation/1"


def _version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str | None], ...]:
    """Read once a process: each lookup parses package metadata (~10 ms, and a batch starts hundreds of runs)."""
    return tuple({
        "workstation": _version("atari-workstation") or "dev",
        "ale-py": _version("ale-py"),
        "gymnasium": _version("gymnasium"),
        "python": platform.python_version(),
    }.items())


def versions() -> dict[str, str | None]:
    return dict(_versions())


def new_run_dir(out: Path, game: Game, agent_spec: str, seed: int, run_id: str | None = None) -> Path:
    """Claim a new, empty run folder under ``out``, named ``GAME-AGENT-sSEED-RUNID8`` (then -2, -3...).

    The folder is made with ``os.mkdir``, which fails if it exists, so two
    runs started at the same moment (the same spec gives the same run id) each
    get their own. Without a run id the name ends in the time, as before.
    """
    return run_dirs.claim(Path(out), run_dirs.dir_name(game.key, agent_spec, seed, run_id))


def manifest_for(game: Game, protocol: Protocol, seed: int, agent: Agent, pack: PromptPack,
                 parent: dict[str, Any] | None = None, skill: str | None = None,
                 experience: Any = None) -> dict[str, Any]:
    from workstation.engine.promptpack import identity_extras, skill_digest

    desc = agent.describe()
    digest = skill_digest(pack, skill) if skill else None
    m = {
        "format": FORMAT,
        "rules": GAME_OVER_RULE,  # the game-over rule (workstation.game.clock); verify re-executes under it
        "run_id": run_identity(game, protocol, seed, desc, pack.digest, digest,
                               identity_extras(pack, game, protocol.guide,
                                               experience.identity() if experience else None)),
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
    if skill:  # only runs with a skill carry one (the prompt is rebuilt from it)
        m["skill"] = {"digest": digest, "text": skill, "slot": pack.skill_slot}
    if experience is not None:  # an experience library (workstation.engine.experience): its start and K
        m["experience"] = experience.manifest()
    if parent:
        m["parent"] = parent
    m["changes"] = []  # what a person changed, kept up to date by the writer (workstation.store.changes)
    return m


def start_run(spec: RunSpec, observers: list[Observer] | None = None, plan_source: Any = None,
              agent: Agent | None = None, rewindable: bool = True, max_failed_turns: int = 3) -> TurnEngine:
    """Make the agent, the recording and the engine for ``spec`` (not started).

    ``rewindable=False`` (headless runs, batches) keeps no per-turn snapshots. ``max_failed_turns``: stop after
    this many turns in a row lost to provider errors (0: never).
    """
    pack = load_pack(spec.prompts)
    game = pack.game(get_game(spec.game))  # the pack's words and warm-up
    if agent is None:
        agent = make_agent(spec.agent, game, spec.seed, spec.provider_options, plan_source)
    experience = None
    if spec.experience is not None and spec.reflect_every is not None:
        from workstation.engine.experience import ExperienceRun

        experience = ExperienceRun.open(spec.experience, spec.agent_ref.canonical, game, spec.reflect_every,
                                        pack.experience_slot)
    manifest = manifest_for(game, spec.protocol, spec.seed, agent, pack, skill=spec.skill, experience=experience)
    note = replay_difference(agent, spec)
    if note:
        manifest["replay_note"] = note  # recorded: the replay plays the plans on another start than they were made on
    path = new_run_dir(Path(spec.out), game, spec.agent, spec.seed, run_id=manifest["run_id"])
    writer = RecordingWriter(path, manifest, game.height)
    engine = TurnEngine(game, spec.protocol, agent, spec.seed, pack, writer, observers, spec.max_cost, rewindable,
                        skill=spec.skill, max_failed_turns=max_failed_turns, replay_note=note,
                        experience=experience)
    if experience is not None:
        experience.attach(engine)
    return engine


def replay_difference(agent: Agent, spec: RunSpec) -> str | None:
    """For a replay: how this run's start differs from the replayed recording's (seed, start), or None."""
    source = getattr(agent, "source", None)
    if source is None or not str(getattr(agent, "spec", "")).startswith("replay:"):
        return None
    m = source.manifest_record
    theirs = m.protocol if isinstance(m.protocol, dict) else {}
    ours = spec.protocol.to_json()
    diffs = []
    if m.seed != spec.seed and spec.protocol.start.kind != "fixed":
        diffs.append(f"seed {spec.seed} (the recording's is {m.seed})")
    for key in ("start", "repeat", "game_mode", "game_difficulty"):
        if key in theirs and theirs.get(key) != ours.get(key):
            diffs.append(f"{key} {ours.get(key)} (the recording's is {theirs.get(key)})")
    if not diffs:
        return None
    return ("replayed under another start than it was recorded on: " + ", ".join(diffs)
            + "; the plans play on as recorded, so the run differs from the original")


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
    manifest = dict(parent.raw_manifest())  # the parent's manifest as written, copied; then the branch's own
    manifest["parent"] = {"path": str(parent.path), "run_id": parent.run_id, "turn": turn,
                          "frame": frame}
    manifest["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    plain = parent.plain_run_id
    kept = changes.inherited(parent.changes, turn) + [changes.branch_entry(parent.run_id, turn)]
    manifest.update(plain_run_id=plain, changes=kept, run_id=changes.changed_run_id(plain, kept))
    root = Path(out) if out else parent.path.parent
    path = new_run_dir(root, engine.game, engine.agent.spec, engine.seed, run_id=manifest["run_id"])
    writer = RecordingWriter.branch_from(path, manifest, parent, frame + 1, turn)
    engine.rewind(turn, writer)
    return path
