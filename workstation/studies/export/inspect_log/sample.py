"""One recording as one Inspect sample: per turn a model event (the exact prompt, frames as attachments,
the reply, usage, time) and an info event (what the plan did in the emulator); scores and metadata.

Everything is plain JSON in the shape of inspect-ai's ``EvalSample`` (checked against 0.3.285 by the
tests, which read what we write with inspect-ai's own ``read_eval_log``).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from workstation.base.errors import UserError
from workstation.engine.memory import clips_from_turns
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.run.request import prompt_builder
from workstation.store.recording import Recording
from workstation.store.records import RecordingError, TurnRecord

JSON = dict[str, Any]
SOURCE = "atari_workstation"
SCORERS = ("total_reward", "lives_lost", "random_normalised", "human_normalised")
# our finish reasons (each SDK's word) -> Inspect's StopReason
_STOPS = {"completed": "stop", "stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "STOP": "stop",
          "max_tokens": "max_tokens", "length": "max_tokens", "incomplete": "max_tokens", "MAX_TOKENS": "max_tokens",
          "content_filter": "content_filter", "blocked": "content_filter", "refusal": "content_filter",
          "SAFETY": "content_filter", "tool_calls": "tool_calls", "tool_use": "tool_calls"}


def inspect_model(spec: str | None) -> str:
    """Our agent spec as an Inspect model name: ``openai:gpt-5`` -> ``openai/gpt-5``; ``random`` -> ``none/random``."""
    spec = spec or "unknown"
    kind, sep, rest = spec.partition(":")
    if not sep:
        return f"none/{spec}"
    return f"{kind}/{rest}"


def model_usage(usage: dict[str, Any] | None, cost: float | None = None) -> JSON:
    """Our usage object as Inspect's ``ModelUsage``: input is uncached input, cache read and write apart, output
    includes reasoning (both conventions agree), total the sum of all four."""
    u = usage or {}
    n_in, n_out = int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0)
    read, write = int(u.get("cache_read_tokens") or 0), int(u.get("cache_write_tokens") or 0)
    out: JSON = {"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out + read + write,
                 "input_tokens_cache_write": write, "input_tokens_cache_read": read,
                 "reasoning_tokens": int(u.get("reasoning_tokens") or 0)}
    if cost is not None:
        out["total_cost"] = round(cost, 6)
    return out


def add_model_usage(a: JSON | None, b: JSON) -> JSON:
    """The sum of two ``ModelUsage`` objects (cost kept only while both have one)."""
    if a is None:
        return dict(b)
    out: JSON = {k: int(a.get(k) or 0) + int(b.get(k) or 0) for k in
           ("input_tokens", "output_tokens", "total_tokens", "input_tokens_cache_write", "input_tokens_cache_read",
            "reasoning_tokens")}
    if "total_cost" in a and "total_cost" in b:
        out["total_cost"] = round(float(a["total_cost"]) + float(b["total_cost"]), 6)
    return out


def parse_time(text: str | None) -> datetime:
    """A manifest's ``created`` (``2026-12-05T04:38:34+0000``) as an aware datetime; the epoch if missing."""
    if text:
        for fmt in ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S.%f%z"):
            try:
                return datetime.strptime(text, fmt)
            except ValueError:
                continue
        try:
            parsed = datetime.fromisoformat(text)
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        except ValueError:
            pass
    return datetime(1970, 1, 1, tzinfo=UTC)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat()


def short_id(*parts: object) -> str:
    """A stable id (22 characters, like Inspect's) from what identifies the thing."""
    return hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()[:22]


@dataclass
class Attachments:
    """A sample's images, each PNG stored once under its digest (``attachment://KEY`` in the events)."""

    data: dict[str, str] = field(default_factory=dict)

    def ref(self, png: bytes) -> str:
        key = hashlib.md5(png, usedforsecurity=False).hexdigest()
        if key not in self.data:
            self.data[key] = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        return f"attachment://{key}"


def _message(m: Message, prompt: Prompt, images: Attachments, mid: str) -> JSON:
    parts: list[JSON] = []
    for p in m.parts:
        if isinstance(p, TextPart):
            parts.append({"type": "text", "text": p.text})
        elif isinstance(p, ImagePart):
            parts.append({"type": "image", "image": images.ref(prompt.png(p)), "detail": "auto"})
    role = m.role if m.role in ("system", "user", "assistant") else "user"
    out: JSON = {"id": mid, "role": role, "source": "input"}
    if role == "system" and all(part["type"] == "text" for part in parts):
        out["content"] = "".join(str(part["text"]) for part in parts)
    else:
        out["content"] = parts
    return out


def turn_prompts(rec: Recording) -> list[Prompt]:
    """The exact prompt of every turn: stored verbatim when edited, else rebuilt from the turns before it,
    each checked against the digest the recording holds (``workstation request`` does the same, per turn)."""
    from workstation.engine.experience import read_updates, rules_at

    turns = rec.turn_records
    updates = read_updates(rec.path)
    builder = None
    out = []
    for n, t in enumerate(turns):
        ref = t.prompt
        if "messages" in ref:
            out.append(Prompt.from_json(ref["messages"], rec.frames, edited=t.variant == "edited"))
            continue
        if builder is None:
            builder = prompt_builder(rec)
            experience = rec.manifest_record.experience
            if experience is not None:  # the slot the run recorded, as ``workstation request`` takes it
                builder.pack = replace(builder.pack, experience_slot=experience.slot
                                       or builder.pack.experience_slot)
        rules = rules_at(rec.manifest_record, updates, n)
        if rules is not None:  # the experience library this turn's prompt carried
            builder.set_experience(rules)
        prompt = builder.build(clips_from_turns(turns[:n]), t.start_frame)
        if t.prompt_digest and prompt.digest() != t.prompt_digest:
            recorded = rec.manifest_record.prompt_pack.get("digest")
            why = (f"prompt pack {builder.pack.digest} differs from the recorded {recorded}; point the manifest's "
                   "prompt pack path at the original" if builder.pack.digest != recorded else
                   f"its digest differs from the recorded {t.prompt_digest} though the prompt pack is the recorded "
                   "one; the recording's turns or its experience updates are not what made it")
            raise RecordingError(f"{rec.path}: turn {n}'s prompt cannot be rebuilt exactly ({why})")
        out.append(prompt)
    return out


def wire_requests(rec: Recording) -> Callable[[Prompt], JSON] | None:
    """For a provider model's run: the turn's request as that provider's SDK sent it (``workstation request``'s
    payload: URL, headers with the key redacted, body with each image as its size and SHA-256); None otherwise."""
    from workstation.run.agents import PROVIDER_KINDS

    spec = rec.manifest_record.agent_spec or ""
    if spec.split(":", 1)[0].strip().lower() not in PROVIDER_KINDS:
        return None
    from workstation.run.providers import options_from_description
    from workstation.run.providers.payload import describe_request

    try:
        options = options_from_description(rec.manifest_record.agent)
    except (UserError, ValueError, KeyError, TypeError):
        return None

    def request(prompt: Prompt) -> JSON:
        described: JSON = describe_request(prompt, spec, options)
        return described

    return request


def _output(t: TurnRecord, model: str) -> JSON:
    out: JSON = {"model": model, "choices": [{
        "message": {"role": "assistant", "content": t.raw, "source": "generate", "model": model},
        "stop_reason": _STOPS.get(t.finish_reason or "", "unknown" if t.finish_reason or t.error else "stop")}],
        "completion": t.raw, "time": t.latency_s,
        "usage": model_usage(t.usage, t.cost_usd)}  # no call (random, replay, a failed call): zero, as counted
    if t.error is not None:
        out["error"] = t.error
    return out


def _info(t: TurnRecord) -> JSON:
    """What the turn's plan did: frames played, reward, life loss, the parse result."""
    return {
        "turn": t.turn, "frames": [t.start_frame, t.end_frame], "frames_played": t.end_frame - t.start_frame,
        "planned": t.planned, "actions": t.actions, "action_frames": t.action_frames,
        "reward": t.reward, "action_rewards": t.action_rewards, "score": t.score,
        "lives_lost": t.lives_lost, "life_lost": any(t.action_life_lost), "lives": t.lives,
        "parse": {"valid": t.valid, "rule": t.rule, "errors": t.errors, "thought": t.thought},
        "overridden": t.overridden, "game_over": t.game_over, "dropped": t.dropped,
        "noop_frames": t.noop_frames, "error": t.error,
    }


@dataclass
class SampleOut:
    """One sample's JSON, its summary (``summaries.json``), and its usage by model."""

    sample: JSON
    summary: JSON
    model: str
    usage: JSON | None
    score: float
    started: datetime
    completed: datetime


def make_sample(rec: Recording, sample_id: str, epoch: int, setting: str,
                baseline: tuple[float | None, float | None] = (None, None)) -> SampleOut:
    """The Inspect sample of ``rec`` (a sound recording: the caller checked it). ``baseline`` is the (random mean,
    human mean) of the runs exported of its game and budget (``export.baseline_key``), for the normalised scores
    (None: no such runs)."""
    m = rec.manifest_record
    s = rec.outcome()
    turns = rec.turn_records
    prompts = turn_prompts(rec)
    model = inspect_model(m.agent_spec)
    run_id = rec.run_id or ""
    images = Attachments()
    start = parse_time(m.created)
    clock = 0.0
    events: list[JSON] = []
    usage: JSON | None = None
    wire = wire_requests(rec)
    for n, (t, prompt) in enumerate(zip(turns, prompts)):
        when = start + timedelta(seconds=clock)
        msgs = [_message(msg, prompt, images, short_id(run_id, n, i)) for i, msg in enumerate(prompt.messages)]
        event: JSON = {
            "uuid": short_id(run_id, n, "model"), "span_id": None, "timestamp": iso(when), "working_start": clock,
            "event": "model", "model": model, "input": msgs, "tools": [], "tool_choice": "none", "config": {},
            "output": _output(t, model), "retries": max(0, len(t.attempts) - 1) if t.attempts else None,
            "error": t.error, "completed": iso(when + timedelta(seconds=t.latency_s)), "working_time": t.latency_s,
            "metadata": {"turn": t.turn, "prompt_digest": t.prompt_digest, "variant": t.variant,
                         "attempts": t.attempts, "cost_usd": t.cost_usd},
        }
        try:
            request = wire(prompt) if wire is not None else None
        except (UserError, ValueError, KeyError, TypeError):  # an agent description this version cannot rebuild
            request = None
        if request is not None:
            event["call"] = {"request": request, "time": t.latency_s,
                             "response": {"text": t.raw, "usage": t.usage, "finish_reason": t.finish_reason,
                                          "note": "the reply as recorded (the wire response is not kept)"}}
        events.append(event)
        clock += t.latency_s
        events.append({"uuid": short_id(run_id, n, "info"), "span_id": None,
                       "timestamp": iso(start + timedelta(seconds=clock)), "working_start": clock,
                       "event": "info", "source": SOURCE, "data": _info(t)})
        usage = add_model_usage(usage, model_usage(t.usage, t.cost_usd))
    done = start + timedelta(seconds=clock)
    scores = _scores(s.total_reward, s.lives_lost, baseline)
    changed = rec.interventions
    metadata: JSON = {
        "game": m.game, "seed": m.seed, "setting": setting, "agent": m.agent_spec, "protocol": m.protocol,
        "prompt_pack": m.prompt_pack, "run_id": run_id, "plain_run_id": rec.plain_run_id,
        "changed_by_hand": changed or None, "complete": s.complete, "stopped": s.stopped, "frames": s.frames,
        "turns": s.turns, "invalid_turns": s.invalid_turns, "failed_turns": s.failed_turns, "calls": s.calls,
        "cost_usd": s.cost_usd, "recording": str(rec.path), "env_id": m.env_id, "versions": m.versions,
    }
    text = (f"Play {m.game} (seed {m.seed}) for {m.budget or s.frames} frames under the AtariBench protocol "
            f"(run {run_id}{', CHANGED BY HAND' if changed else ''}).")
    last = turns[-1] if turns else None
    output: JSON = _output(last, model) if last is not None else {"model": model, "choices": []}
    uuid = short_id(run_id, epoch, "sample")
    messages: list[JSON] = [{"id": short_id(run_id, "input"), "role": "user", "content": text, "source": "input"}]
    if last is not None:
        messages.append({"id": short_id(run_id, "last"), "role": "assistant", "content": last.raw,
                         "source": "generate", "model": model})
    model_usage_map = {model: usage or model_usage(None)}
    sample: JSON = {
        "id": sample_id, "epoch": epoch, "input": text, "target": "", "messages": messages, "output": output,
        "scores": scores, "metadata": metadata, "store": {}, "events": events, "model_usage": model_usage_map,
        "started_at": iso(start), "completed_at": iso(done), "total_time": round(clock, 6),
        "working_time": round(clock, 6), "uuid": uuid, "attachments": images.data,
    }
    if not s.complete:
        sample["error"] = {"message": f"the run did not finish: {s.stopped or 'stopped'}", "traceback": "",
                           "traceback_ansi": ""}
    summary: JSON = {
        "id": sample_id, "epoch": epoch, "input": text, "target": "", "metadata": metadata, "scores": scores,
        "model_usage": model_usage_map, "started_at": iso(start), "completed_at": iso(done),
        "total_time": round(clock, 6), "working_time": round(clock, 6), "uuid": uuid, "completed": True,
        "message_count": len(messages),
    }
    if "error" in sample:
        summary["error"] = sample["error"]["message"]
    return SampleOut(sample, summary, model, usage, s.total_reward, start, done)


def _scores(total: float, lives_lost: int, baseline: tuple[float | None, float | None]) -> JSON:
    rnd, human = baseline
    out: JSON = {
        "total_reward": {"value": total, "explanation": "the game's reward summed over the frame budget"},
        "lives_lost": {"value": lives_lost, "explanation": "lives lost inside the budget"},
    }
    if rnd is not None:
        out["random_normalised"] = {"value": total - rnd,
                                    "explanation": f"total reward minus the random runs' mean for this game and budget "
                                                   f"({rnd:g})"}
        if human is not None and abs(human - rnd) > 1e-12:
            out["human_normalised"] = {"value": (total - rnd) / (human - rnd),
                                       "explanation": f"(score - random {rnd:g}) / (human {human:g} - random {rnd:g})"}
    return out
