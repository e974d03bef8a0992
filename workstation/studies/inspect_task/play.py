"""The Inspect task: a sample per seed, a solver that plays it through our engine, and our scores.

``make_task`` takes the task's ``-T`` arguments: ``game``, ``seeds`` (``0..4``, ``0,2,5`` or one number),
``out`` (where our recordings go), ``prompts`` (a prompt pack directory) and every protocol setting by its
name (``frames``, ``max_actions``, ``memory``, ``history``, ``reward_history``, ``feedback``, ``clock``,
``start``, ``guide``, ``game_mode``, ``game_difficulty``), checked as the CLI checks them.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.engine.promptpack import load_pack
from workstation.engine.turn_engine import TurnEngine
from workstation.game.games import get_game
from workstation.game.protocol import SETTING, Protocol
from workstation.run.drive import drive
from workstation.run.options import RunSpec
from workstation.run.start import manifest_for, new_run_dir
from workstation.store.recording import RecordingWriter
from workstation.studies.inspect_task.agent import Bridge, InspectAgent, Request, answer

RECORDINGS = "atari-recordings"  # under Inspect's log directory (INSPECT_LOG_DIR, else ./logs) unless out= says


def default_out() -> str:
    """``atari-recordings`` beside the running eval's log (a local one), else under INSPECT_LOG_DIR or ./logs."""
    try:  # not a public API: where it moves, the fallback holds
        from inspect_ai.log._samples import sample_active

        active = sample_active()
        where = str(active.log_location) if active is not None else ""
    except (ImportError, AttributeError):
        where = ""
    if where and "://" not in where:
        return str(Path(where).parent / RECORDINGS)
    return str(Path(os.environ.get("INSPECT_LOG_DIR") or "logs") / RECORDINGS)
MAX_SEEDS = 1000


def parse_seeds(value: Any) -> list[int]:
    """``0..4`` (both ends), ``0,2,5``, a number or a list of numbers."""
    if isinstance(value, bool):
        raise UserError(f"seeds={value!r}: give seeds as 0..4, 0,2,5 or one number")
    if isinstance(value, int):
        seeds = [value]
    elif isinstance(value, list | tuple):
        seeds = [int(v) for v in value if isinstance(v, int) and not isinstance(v, bool)]
        if len(seeds) != len(value):
            raise UserError(f"seeds={value!r}: every seed must be a whole number")
    else:
        text = str(value).strip()
        m = re.fullmatch(r"(\d+)\s*\.\.\s*(\d+)", text)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo or hi - lo >= MAX_SEEDS:
                raise UserError(f"seeds={text}: give LO..HI with LO <= HI and at most {MAX_SEEDS} seeds")
            seeds = list(range(lo, hi + 1))
        elif re.fullmatch(r"\d+(\s*,\s*\d+)*", text):
            seeds = [int(p) for p in text.split(",")]
        else:
            raise UserError(f"seeds={text!r}: give seeds as 0..4, 0,2,5 or one number")
    if any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise UserError(f"seeds={value!r}: seeds are whole numbers 0 or more, each once")
    return seeds


def make_protocol(settings: dict[str, Any]) -> Protocol:
    """A checked protocol from ``-T`` settings (values as Inspect parsed them, or text)."""
    unknown = sorted(k for k in settings if k not in SETTING)
    if unknown:
        raise UserError(f"unknown task argument {', '.join(unknown)}: use game, seeds, out, prompts or a protocol "
                        f"setting ({', '.join(SETTING)})")
    values: dict[str, Any] = {}
    for name, value in settings.items():
        s = SETTING[name]
        if isinstance(value, str) and s.type is int:
            if not re.fullmatch(r"-?\d+", value.strip()):
                raise UserError(f"{name}={value!r}: give a whole number")
            value = int(value)
        elif isinstance(value, str) and s.type is bool:
            if value.lower() not in ("true", "false"):
                raise UserError(f"{name}={value!r}: give true or false")
            value = value.lower() == "true"
        values[name] = str(value) if name == "start" else value
    return Protocol.from_json(values)


def start_engine(spec: RunSpec, agent: InspectAgent) -> TurnEngine:
    """An engine for ``spec`` with the Inspect agent: ``runs.start.start_run``'s steps, the folder named after the
    Inspect model (the spec's agent field only checks the rest of the spec)."""
    pack = load_pack(spec.prompts)
    game = pack.game(get_game(spec.game))
    manifest = manifest_for(game, spec.protocol, spec.seed, agent, pack)
    path = new_run_dir(Path(spec.out), game, agent.spec, spec.seed, run_id=manifest["run_id"])
    writer = RecordingWriter(path, manifest, game.height)
    return TurnEngine(game, spec.protocol, agent, spec.seed, pack, writer, None, spec.max_cost, False)


async def play_one(spec: RunSpec, model: Any) -> tuple[Path, dict[str, Any]]:
    """Play ``spec`` with ``model``: the engine in a worker thread, each model call on this task."""
    loop = asyncio.get_running_loop()
    bridge = Bridge(loop)
    engine = start_engine(spec, InspectAgent(str(model), bridge))
    path = Path(engine.recording_path)

    def run() -> dict[str, Any]:
        try:
            summary = drive(engine) or engine.summary
            return summary.to_json() if summary is not None else {}
        finally:
            engine.close()

    worker = asyncio.ensure_future(asyncio.to_thread(run))
    get: asyncio.Future[Request] | None = None
    try:
        while True:
            get = asyncio.ensure_future(bridge.queue.get())
            done, _ = await asyncio.wait({get, worker}, return_when=asyncio.FIRST_COMPLETED)
            if get in done:
                req: Request = get.result()
                await answer(bridge, model, req)
                continue
            get.cancel()
            break
    except BaseException:  # cancelled (a limit, an interrupt): the engine stops and writes its summary
        if get is not None:
            get.cancel()
        why = "the Inspect sample was cancelled"
        bridge.close(why)
        engine.cancel.cancel(why)
        raise
    summary = await worker
    return path, summary


def make_task(game: str = "breakout", seeds: Any = 0, out: str | None = None, prompts: str | None = None,
              **protocol: Any) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import Generate, TaskState, solver

    proto = make_protocol(protocol)
    seed_list = parse_seeds(seeds)
    key = get_game(game).key
    for seed in seed_list:  # every spec checked before anything runs
        RunSpec(game=key, agent="random", seed=seed, out=out or default_out(), protocol=proto, prompts=prompts)
    dataset = [Sample(id=f"{key}-s{seed}", input=f"Play {key} (seed {seed}) for {proto.frames} frames under the "
                      "AtariBench protocol.", target="", metadata={"game": key, "seed": seed})
               for seed in seed_list]

    def play() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            from inspect_ai.model import ChatMessageAssistant, ModelOutput, get_model

            model = get_model()
            seed = int(state.metadata["seed"])
            spec = RunSpec(game=key, agent="random", seed=seed, out=out or default_out(), protocol=proto,
                           prompts=prompts)
            path, summary = await play_one(spec, model)
            from workstation.store.recording import Recording

            rec = Recording(path)
            s = rec.outcome()
            state.metadata.update({"recording": str(path), "run_id": rec.run_id, "total_reward": s.total_reward,
                                   "lives_lost": s.lives_lost, "complete": s.complete, "stopped": s.stopped,
                                   "protocol": proto.to_json(), "prompt_pack": rec.manifest_record.prompt_pack})
            text = (f"score {s.total_reward:g}, lives lost {s.lives_lost}, {s.turns} turns, {s.frames} frames; "
                    f"recording {path}")
            state.messages.append(ChatMessageAssistant(content=text))
            state.output = ModelOutput.from_content(str(model), text)
            rec.close()
            if not s.complete:  # the sample fails, as Inspect's own do when the model fails; the recording stays
                raise RuntimeError(f"the run stopped: {s.stopped or 'stopped'} (recording {path}, kept)")
            return state

        return solve

    def total_reward() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(state.metadata.get("total_reward", 0.0)),
                         explanation=f"recording {state.metadata.get('recording')}")

        return score

    def lives_lost() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=int(state.metadata.get("lives_lost", 0)))

        return score

    # decorated by call, not with @: mypy --strict holds where inspect-ai is not installed (its decorators untyped)
    player = solver(name="play")(play)
    scorers = [scorer(metrics=[mean(), stderr()], name=n)(f) for n, f in
               (("total_reward", total_reward), ("lives_lost", lives_lost))]
    return Task(dataset=dataset, solver=player(), scorer=[s() for s in scorers],
                metadata={"game": key, "protocol": proto.to_json(), "out": out or "beside the log"})
