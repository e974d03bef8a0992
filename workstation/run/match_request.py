"""Rebuild the prompt one side of a recorded match was asked, and show the request that carried it."""

from __future__ import annotations

import json
from typing import Any

from workstation.base.errors import UserError
from workstation.engine.memory import Clip, Step
from workstation.engine.prompt import Prompt
from workstation.game.protocol import Protocol
from workstation.game.twoplayer import get_two_player_game
from workstation.run.agents import PROVIDER_KINDS
from workstation.run.match_sides import SidePromptBuilder, load_match_text, side_pack
from workstation.run.request import recorded_pack
from workstation.store.recording import Recording
from workstation.store.records import MatchTurn, RecordingError


def side_clips(turns: list[MatchTurn], side: int) -> list[Clip]:
    """One side's clips (its steps, padding included, on the lockstep frames) from the turn records."""
    clips = []
    for t in turns:
        p = t.players[side - 1]
        frames = t.lockstep_frames
        last = len(frames) - 1
        steps = [Step(a, f, r, bool(lost), t.game_over and i == last) for i, (a, f, r, lost) in
                 enumerate(zip(p.actions, frames, p.action_rewards, p.action_life_lost))]
        clips.append(Clip(t.turn, t.start_frame, steps, p.raw))
    return clips


def rebuild_side_prompt(rec: Recording, turn: int, side: int) -> Prompt:
    turns = rec.match_turns
    if not 0 <= turn < len(turns):
        held = f"it has turns 0..{len(turns) - 1}" if turns else "it has no turns yet"
        raise RecordingError(f"{rec.path}: no turn {turn}; {held}")
    if side not in (1, 2):
        raise UserError(f"--side {side}: a match has sides 1 and 2")
    m = rec.manifest_record
    tp = get_two_player_game(str(m.game))
    protocol = Protocol.from_json(m.protocol)
    pack = recorded_pack(m)
    text = load_match_text(pack, tp.key)
    builder = SidePromptBuilder(tp.game, protocol, side_pack(pack, text, side), text, side, tp.team, rec.frames)
    before = turns[turn - 1].players if turn else None
    builder.scores = ((before[side - 1].score, before[2 - side].score) if before else (0.0, 0.0))
    prompt = builder.build(side_clips(turns[:turn], side), turns[turn].start_frame)
    want = turns[turn].players[side - 1].prompt.get("digest")
    if want and prompt.digest() != want:
        raise RecordingError(f"{rec.path}: turn {turn}'s side {side} prompt cannot be rebuilt exactly (the words "
                             f"differ from the recorded {m.prompt_pack.get('digest')})")
    return prompt


def dump_side_request(rec: Recording, turn: int, side: int) -> str:
    prompt = rebuild_side_prompt(rec, turn, side)
    agent = rec.manifest_record.players[side - 1]["agent"]
    spec = agent.get("spec") or ""
    header = f"# turn {turn}, side {side} of {rec.path} (agent {spec}, {len(prompt.images)} images)\n"
    if spec.split(":", 1)[0].strip().lower() in PROVIDER_KINDS:
        from workstation.run.providers import options_from_description
        from workstation.run.providers.payload import describe_request

        return header + json.dumps(describe_request(prompt, spec, options_from_description(agent)), indent=2)
    return header + "# this agent is not a model provider; the neutral prompt it was given:\n\n" + prompt.render_text()


def side_request_json(rec: Recording, turn: int, side: int) -> dict[str, Any]:
    """The neutral request one side was asked at ``turn``, as plain data (``workstation request --json``)."""
    from workstation.run.request import prompt_json

    return {"side": side, **prompt_json(rebuild_side_prompt(rec, turn, side))}
