"""Agents: built-in (random, replay, human) and provider models, made from a spec string."""

from __future__ import annotations

from typing import Any

from workstation.agents.base import Agent, FatalAgentError, Reply, TurnContext, Usage
from workstation.game.games import Game

PROVIDER_KINDS = ("openai", "compat", "anthropic", "gemini")


class AgentSpecError(ValueError):
    """An agent spec the workstation cannot make an agent from."""


def make_agent(spec: str, game: Game, seed: int, provider_options: Any = None, plan_source=None) -> Agent:
    """``random`` | ``replay:PATH`` | ``human`` | ``openai:M`` | ``compat:M`` | ``anthropic:M`` | ``gemini:M``."""
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "random" and not rest:
        from workstation.agents.random_agent import RandomAgent

        return RandomAgent(game, seed)
    if kind == "replay":
        if not rest:
            raise AgentSpecError("replay needs a recording: --agent replay:PATH")
        from workstation.agents.replay_agent import ReplayAgent

        agent = ReplayAgent(rest)
        source_game = agent.source.manifest.get("game")
        if source_game != game.key:
            raise AgentSpecError(f"the replayed recording is a {source_game} run but --game is {game.key}; "
                                 f"replay it with --game {source_game}")
        return agent
    if kind == "human" and not rest:
        from workstation.agents.human_agent import HumanAgent

        if plan_source is None:
            raise AgentSpecError("the human agent plays in the TUI: use `workstation play --game G`")
        return HumanAgent(plan_source)
    if kind in PROVIDER_KINDS:
        if not rest:
            raise AgentSpecError(f"{kind} needs a model name: --agent {kind}:MODEL")
        from workstation.providers import ProviderOptions, make_provider_agent

        return make_provider_agent(spec, provider_options or ProviderOptions())
    raise AgentSpecError(
        f"unknown agent {spec!r}: use random, replay:PATH, human, or openai:/compat:/anthropic:/gemini:MODEL"
    )


__all__ = ["Agent", "AgentSpecError", "FatalAgentError", "Reply", "TurnContext", "Usage", "make_agent"]
