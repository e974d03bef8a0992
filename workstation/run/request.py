"""Rebuild the prompt a recorded turn was asked, and show the request that carried it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workstation.engine.memory import clips_from_turns
from workstation.engine.prompt import ImagePart, Prompt
from workstation.engine.prompt_builder import PromptBuilder
from workstation.engine.promptpack import PromptPack, PromptPackError, load_pack
from workstation.game.games import get_game
from workstation.game.protocol import Protocol
from workstation.run.agents import PROVIDER_KINDS
from workstation.store.recording import Recording
from workstation.store.records import Manifest, RecordingError


def rebuild_prompt(rec: Recording, turn: int) -> Prompt:
    """The Prompt of ``turn``: stored verbatim when edited, else rebuilt from the turns before it.

    The rebuilt prompt's digest is checked against the recorded one, so a changed
    prompt pack or a bug cannot silently show a different prompt.
    """
    turns = rec.turn_records
    if not 0 <= turn < len(turns):
        held = f"it has turns 0..{len(turns) - 1}" if turns else "it has no turns yet"
        raise RecordingError(f"{rec.path}: no turn {turn}; {held}")
    t = turns[turn]
    ref = t.prompt
    if "messages" in ref:
        return Prompt.from_json(ref["messages"], rec.frames, edited=t.variant == "edited")
    builder = prompt_builder(rec)
    from workstation.engine.experience import read_updates, rules_at

    experience = rec.manifest_record.experience
    rules = rules_at(rec.manifest_record, read_updates(rec.path), turn)
    if experience is not None and rules is not None:  # the library the turn's prompt carried, by the run's slot
        from dataclasses import replace

        builder.pack = replace(builder.pack, experience_slot=experience.slot or builder.pack.experience_slot)
        builder.set_experience(rules)
    prompt = builder.build(clips_from_turns(turns[:turn]), t.start_frame)
    if ref.get("digest") and prompt.digest() != ref["digest"]:
        raise RecordingError(
            f"{rec.path}: turn {turn}'s prompt cannot be rebuilt exactly (prompt pack {builder.pack.digest} differs "
            f"from the recorded {rec.manifest_record.prompt_pack.get('digest')}); point the manifest's prompt pack "
            "path at the original"
        )
    return prompt


def recorded_pack(m: Manifest) -> PromptPack:
    """The prompt pack a recording was made with while its directory is still there, else the built-in one."""
    path = m.prompt_pack.get("path")
    try:
        return load_pack(path if path and Path(path).is_dir() else None)
    except PromptPackError:
        return load_pack(None)


def prompt_builder(rec: Recording) -> PromptBuilder:
    """The builder that made the recording's prompts: its game, protocol and prompt pack, over its frames."""
    m = rec.manifest_record
    if m.game is None or not isinstance(m.protocol, dict):
        raise RecordingError(f"{rec.path}: the manifest names no game or protocol; the prompt cannot be rebuilt")
    game = get_game(m.game)
    protocol = Protocol.from_json(m.protocol)
    pack = recorded_pack(m)
    skill = (m.skill or {}).get("text")
    if skill:  # the slot the run was made with, as recorded
        from dataclasses import replace

        pack = replace(pack, skill_slot=(m.skill or {}).get("slot") or pack.skill_slot)
    return PromptBuilder(pack.game(game), protocol, pack, rec.frames, skill=skill)


def dump_request(rec: Recording, turn: int) -> str:
    """Text for ``workstation request``: the exact payload for providers, the neutral prompt otherwise."""
    prompt = rebuild_prompt(rec, turn)
    agent = rec.manifest_record.agent
    spec = rec.manifest_record.agent_spec or ""
    kind = spec.split(":", 1)[0].strip().lower()
    header = f"# turn {turn} of {rec.path} (agent {spec}, {len(prompt.images)} images)\n"
    if kind in PROVIDER_KINDS:
        from workstation.run.providers import options_from_description
        from workstation.run.providers.payload import describe_request

        body = describe_request(prompt, spec, options_from_description(agent))
        return header + json.dumps(body, indent=2)
    images = "\n".join(
        f"  [{i}] frame {p.frame} @ {p.time} {p.label}" for i, p in enumerate(prompt.images)
    )
    return header + "# this agent is not a model provider; the neutral prompt it was given:\n\n" + \
        prompt.render_text() + "\n\n# images:\n" + images


def request_json(rec: Recording, turn: int) -> dict[str, Any]:
    """The neutral request of ``turn`` as plain data (``workstation request --json``).

    ``{"messages": [{"role": ..., "content": [{"type": "text", "text": ...},
    {"type": "image", "frame": N}, ...]}, ...]}``; ``frame`` is the recording's
    budget frame the image shows (0 = the first frame of the budget).
    """
    return prompt_json(rebuild_prompt(rec, turn))


def prompt_json(prompt: Prompt) -> dict[str, Any]:
    """A neutral prompt as plain data: its messages, each part text or the budget frame an image shows."""
    return {"messages": [
        {"role": m.role, "content": [
            {"type": "image", "frame": p.frame} if isinstance(p, ImagePart) else {"type": "text", "text": p.text}
            for p in m.parts
        ]}
        for m in prompt.messages
    ]}
