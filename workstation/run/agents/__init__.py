"""Agents: built-in (random, replay, human) and provider models, made from a spec string.

The kinds and the parsing of specs live in ``workstation.run.agents.registry``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workstation.run.agents.registry import KINDS, PROVIDER_KINDS, AgentRef, AgentSpecError, parse_agent

if TYPE_CHECKING:
    from workstation.engine.agent import Agent
    from workstation.game.games import Game


def make_agent(spec: str, game: Game, seed: int, provider_options: Any = None, plan_source: Any = None) -> Agent:
    """``random`` | ``replay:PATH`` | ``human`` | ``openai:M`` | ``compat:M`` | ``anthropic:M`` | ``gemini:M``."""
    ref = parse_agent(spec)
    if ref.kind == "random":
        from workstation.run.agents.random_agent import RandomAgent

        return RandomAgent(game, seed)
    if ref.kind == "replay":
        from workstation.run.agents.replay_agent import ReplayAgent

        agent = ReplayAgent(ref.arg, game)
        source_game = agent.source.manifest_record.game
        if source_game != game.key:
            raise AgentSpecError(f"the replayed recording is a {source_game} run but --game is {game.key}; "
                                 f"replay it with --game {source_game}")
        return agent
    if ref.kind == "human":
        from workstation.run.agents.human_agent import HumanAgent

        if plan_source is None:
            raise AgentSpecError("the human agent plays in the TUI: use `workstation play --game G`")
        return HumanAgent(plan_source)
    from workstation.run.providers import ProviderOptions, make_provider_agent

    return make_provider_agent(spec, provider_options or ProviderOptions())


__all__ = ["KINDS", "PROVIDER_KINDS", "AgentRef", "AgentSpecError", "make_agent", "parse_agent"]
