"""A changed run cannot pass as plain: each turn's plan re-derived and held against what the turn played.

The store's verdict (``workstation.store.changes.verdict``) holds the manifest's ``changes``, its run ids, the
turns' marks and the summary's counts against each other. This adds what only the engine's parts can say: the
plan each turn should have played, re-derived from what the run's agent gives (the parser on the recorded reply
for a model; the run seed for the random agent, whose replies are asked again in order; the source recording's
plans for a replay), and compared with the actions the turn played and the ones it dropped. A turn that played
another plan is flagged unless the run's changes list an override or a typed plan for it. ``verify`` (quick and
full) and ``info`` call ``problems``; a recording with any is damaged (exit 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from workstation.engine.calls import TurnContext
from workstation.engine.parser import parse_reply
from workstation.engine.promptpack import PromptPackError, load_pack
from workstation.game.games import Game, get_game
from workstation.game.protocol import Protocol
from workstation.run.agents.random_agent import RandomAgent
from workstation.run.agents.replay_agent import ReplayAgent
from workstation.store.recording import Recording
from workstation.store.records import RecordingError, TurnRecord

# the kinds of change that put another plan than the agent's on a turn
PLAN_CHANGES = ("override", "human_plan")
Replies = Callable[[TurnRecord], str | None]  # the reply the turn's plan came from; None: cannot be re-derived


def _game(rec: Recording) -> tuple[Game, int] | None:
    """The game as the run's prompt pack plays it, and the most actions a plan may hold (None: not re-derivable).

    A pack that is gone or differs from the recorded digest may read replies otherwise: nothing is re-derived.
    """
    m = rec.manifest_record
    if m.game is None or not isinstance(m.protocol, dict):
        return None
    try:
        game = get_game(m.game)
        protocol = Protocol.from_json(m.protocol)
        path = m.prompt_pack.get("path")
        pack = load_pack(path if isinstance(path, str) and Path(path).is_dir() else None)
    except (KeyError, ValueError, TypeError, PromptPackError):
        return None
    if pack.digest != m.prompt_pack.get("digest"):
        return None
    return pack.game(game), protocol.max_actions


def _random_replies(rec: Recording, game: Game, max_actions: int) -> Replies | None:
    """The random agent's replies, asked again from the run seed: once per reply the turn was given (none for a
    typed plan, one more per discarded reply), in turn order (a branch restores the generator it copies)."""
    desc = rec.manifest_record.agent
    per_turn = str(desc.get("actions_per_turn", "1..3")).rpartition("..")[2]
    seed = rec.manifest_record.seed  # the run seed, as the typed manifest holds it (the agent was made with it)
    if not per_turn.isdigit() or seed is None:
        return None
    agent = RandomAgent(game, seed, int(per_turn))

    def reply(t: TurnRecord) -> str | None:
        if t.human_plan:
            return None
        text = ""
        for _ in range(1 + len(t.discarded_replies)):
            text = agent.act(None, TurnContext(game, t.turn, max_actions, t.start_frame)).text  # type: ignore[arg-type]
        return text

    return reply


def _replay_replies(rec: Recording, game: Game, max_actions: int) -> Replies | None:
    spec = rec.manifest_record.agent_spec or ""
    try:
        agent = ReplayAgent(spec.removeprefix("replay:"), game)
    except (RecordingError, OSError):  # the source is gone or damaged: the recorded replies are read instead
        return None

    def reply(t: TurnRecord) -> str:
        return agent.act(None, TurnContext(game, t.turn, max_actions, t.start_frame)).text  # type: ignore[arg-type]

    return reply


def _recorded(t: TurnRecord) -> str:
    return t.raw if t.error is None else ""  # a failed call's plan is the parser's on nothing


def _plans(rec: Recording) -> Iterator[tuple[TurnRecord, list[str]]]:
    """Each turn with the plan re-derived for it (turns whose plan cannot be re-derived are left out)."""
    found = _game(rec)
    if found is None:
        return
    game, max_actions = found
    kind = rec.manifest_record.agent.get("kind")
    replies: Replies | None = None
    if kind == "random" and rec.manifest_record.experience is None:  # a library's requests would draw on its generator
        replies = _random_replies(rec, game, max_actions)
    elif kind == "replay":
        replies = _replay_replies(rec, game, max_actions)
    elif kind == "human":  # a person's keys: no plan to re-derive
        return
    for t in rec.turn_records:
        text = replies(t) if replies is not None else _recorded(t)
        if text is not None:
            yield t, parse_reply(text, game, max_actions).names


def replan_problems(rec: Recording) -> list[str]:
    """Each turn that played another plan than its agent's, where the run's changes do not say a person chose it."""
    if rec.manifest_record.is_match or rec.manifest_record.imported:
        return []  # a match has its own rule; an import replays the harness's recorded actions
    chosen = {c.get("turn") for c in rec.changes if c.get("kind") in PLAN_CHANGES}
    found = []
    try:
        for t, plan in _plans(rec):
            played = [str(a).lower() for a in [*t.actions, *t.dropped]]
            if played != plan and t.turn not in chosen:
                found.append(f"turn {t.turn} played [{', '.join(played)}] where its agent's plan is "
                             f"[{', '.join(plan)}], and the run's changes by hand do not account for it")
    except RecordingError as e:  # damaged turns are reported by the fast check
        return [str(e)]
    if len(found) > 1:
        return [f"{found[0]} (and {len(found) - 1} more turns)"]
    return found


def problems(rec: Recording) -> list[str]:
    """Everything that says a run's changes by hand are not what it claims (empty: its verdict holds)."""
    return [*rec.hand.problems, *replan_problems(rec)]


def counts_as_plain(rec: Recording) -> bool:
    """The one test ``ls --plain``, batch resume and the reports rely on: no change by hand, and none hidden."""
    return not rec.interventions and not problems(rec)


__all__ = ["counts_as_plain", "problems", "replan_problems"]
