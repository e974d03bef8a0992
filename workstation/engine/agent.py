"""What the turn engine asks of an agent: prompt in, reply text out.

An agent never sees the emulator, the RAM or the score: only the Prompt. It
returns a Reply carrying the raw text plus how it was obtained (usage, latency,
cost, every attempt). The engine parses the text; agents never choose action ids.
The call types (Usage, Attempt, Reply, TurnContext, FatalAgentError, the cancel
token and deadline) live in ``workstation.engine.calls``; the agents themselves in
``workstation.run.agents`` (built-in kinds) and ``workstation.run.providers`` (models).
"""

from __future__ import annotations

from typing import Any, Protocol

from workstation.engine.calls import CancelToken, Deadline, OnText, Reply, TurnContext
from workstation.engine.prompt import Prompt


class Agent(Protocol):
    spec: str  # how it was named on the command line: "random", "openai:gpt-5.1"

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None, *,
            deadline: Deadline | None = None, cancel: CancelToken | None = None) -> Reply:
        """Answer one turn. ``on_text`` receives streamed text deltas, if any.

        An agent that waits (a model call) stops waiting within about a second
        of ``cancel`` being cancelled and returns ``Reply.cancelled_reply(...)``;
        it never waits past ``deadline``. Agents that answer at once may leave
        both out of their signature: ``workstation.engine.calls.call_agent`` then
        calls them without.
        """
        ...

    def close(self) -> None: ...

    def describe(self) -> dict[str, Any]:
        """What the manifest records about this agent (no secrets)."""
        ...
