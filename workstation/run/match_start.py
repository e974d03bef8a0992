"""Start a recorded match: its spec, identity, manifest, recording and engine."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from workstation.base.locations import default_pack_dir
from workstation.engine.agent import Agent
from workstation.engine.match_engine import MatchEngine, MatchObserver
from workstation.engine.prompt import FrameSource
from workstation.engine.promptpack import PromptPack, load_pack
from workstation.game.clock import GAME_OVER_RULE
from workstation.game.protocol import Protocol
from workstation.game.twoplayer import SIDES, get_two_player_game
from workstation.run.match_players import check_players, make_side_agent, side_seed
from workstation.run.match_sides import MatchText, SidePromptBuilder, load_match_text, side_pack
from workstation.run.options import GENERATION_KEYS
from workstation.run.start import FORMAT, new_run_dir, versions
from workstation.store.recording import RecordingWriter

KIND = "match"  # the manifest's "kind": verify and info read a match by it


@dataclass(frozen=True)
class MatchSpec:
    game: str
    p1: str
    p2: str
    seed: int = 0
    protocol: Protocol = field(default_factory=Protocol)
    out: str = "recordings"
    prompts: str | None = None
    max_cost: float | None = None
    provider_options: tuple[Any, Any] = (None, None)  # each side's ProviderOptions (None: not a model)

    @property
    def specs(self) -> tuple[str, str]:
        return (self.p1, self.p2)


def _identity(desc: dict[str, Any]) -> dict[str, Any]:
    options = desc.get("options") or {}
    return {"spec": desc.get("spec"), "mode": desc.get("mode"), **{k: options.get(k) for k in GENERATION_KEYS}}


def match_identity(game: str, protocol: Protocol, seed: int, descs: list[dict[str, Any]], digest: str) -> str:
    """Hash of what decides a match: the same spec gives the same run id."""
    blob = json.dumps([KIND, game, protocol.to_json(), seed, [_identity(d) for d in descs], digest],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _backend() -> str:
    try:
        return f"multi-agent-ale-py {metadata.version('multi-agent-ale-py')}"
    except metadata.PackageNotFoundError:
        return "multi-agent-ale-py"


def side_builders(tp: Any, protocol: Protocol, pack: PromptPack, text: MatchText,
                  frames: FrameSource | None) -> tuple[SidePromptBuilder, SidePromptBuilder]:
    """Each side's prompt builder: its words, sprite and score line, over the match's frames."""
    one, two = (SidePromptBuilder(tp.game, protocol, side_pack(pack, text, side), text, side, tp.team, frames)
                for side in SIDES)
    return one, two


@dataclass
class Prepared:
    """A match ready to start: its game, words, agents and run id (nothing written yet)."""

    tp: Any
    pack: Any
    text: Any
    agents: tuple[Agent, Agent]
    run_id: str


def prepare_match(spec: MatchSpec, plan_source: Any = None, person_ok: bool = False,
                  agents: tuple[Agent, Agent] | None = None) -> Prepared:
    """Check the spec and make both agents; the run id is known before anything is played."""
    tp = get_two_player_game(spec.game)
    check_players(spec.specs, window=person_ok, person_ok=person_ok or agents is not None)  # the TUI seats two
    if spec.protocol.clock != "paused":
        from workstation.run.match_players import MatchSpecError

        raise MatchSpecError("--clock latency: two-player matches run on the paused clock (both plans are "
                             "collected, then played); leave --clock out")
    pack = load_pack(spec.prompts)
    text = load_match_text(pack, tp.key)
    if agents is None:
        sources = plan_source if isinstance(plan_source, dict) else {1: plan_source, 2: plan_source}  # per side
        agents = (make_side_agent(spec.p1, tp, spec.seed, 1, spec.provider_options[0], sources.get(1)),
                  make_side_agent(spec.p2, tp, spec.seed, 2, spec.provider_options[1], sources.get(2)))
    descs = [a.describe() for a in agents]
    return Prepared(tp, pack, text, agents, match_identity(tp.key, spec.protocol, spec.seed, descs, text.digest))


def start_match(spec: MatchSpec, observers: list[MatchObserver] | None = None, plan_source: Any = None,
                person_ok: bool = False, agents: tuple[Agent, Agent] | None = None,
                prepared: Prepared | None = None, live: dict[int, Any] | None = None) -> MatchEngine:
    """Check the spec, make both agents, the recording and the engine (not started)."""
    p = prepared or prepare_match(spec, plan_source, person_ok, agents)
    tp, pack, text, agents, run_id = p.tp, p.pack, p.text, p.agents, p.run_id
    descs = [a.describe() for a in agents]
    manifest = {
        "format": FORMAT, "kind": KIND, "rules": GAME_OVER_RULE, "run_id": run_id, "game": tp.key,
        "env_id": f"multi-agent-ale/{tp.rom}", "in_paper": False, "seed": spec.seed,
        "protocol": spec.protocol.to_json(),
        "agent": {"kind": KIND, "spec": f"{agents[0].spec} vs {agents[1].spec}"},
        "players": [{"side": s, "agent": d, "agent_seed": side_seed(spec.seed, s)} for s, d in zip(SIDES, descs)],
        "team": tp.team,
        "prompt_pack": {"name": pack.name, "digest": text.digest, "one_player_digest": pack.digest,
                        "path": None if pack.path == default_pack_dir().resolve() else str(pack.path)},
        "versions": {**versions(), "backend": _backend()},
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "frame_shape": [tp.game.height, 160],
        "clock": "paused: both plans are collected, then played in lockstep; a shorter plan is padded with NOOP",
    }
    slug = f"{parse_kind(agents[0].spec)}-vs-{parse_kind(agents[1].spec)}"
    path = new_run_dir(Path(spec.out), tp.game, slug, spec.seed, run_id=run_id)
    writer: RecordingWriter | None = None
    try:
        writer = RecordingWriter(path, manifest, tp.game.height)
        builders = side_builders(tp, spec.protocol, pack, text, writer.frames)
        return MatchEngine(tp, spec.protocol, agents, spec.seed, builders, writer, observers, spec.max_cost,
                           live=live)
    except BaseException:
        if writer is not None and not writer.closed:
            writer.abort({"stopped": "the match could not start"})
        raise


def parse_kind(spec: str) -> str:
    """A short name for a folder: ``random``, ``openai-gpt-5.1``, ``replay``."""
    kind, _, arg = spec.partition(":")
    return kind if kind in ("replay", "random", "human") else f"{kind}-{arg}"
