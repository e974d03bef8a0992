"""The error types that mean "bad input": the CLI prints them as one line and exits 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: printed as one line, exit status 2."""


def user_error_types() -> tuple[type[BaseException], ...]:
    from workstation.agents import AgentSpecError
    from workstation.game.games import UnknownGame
    from workstation.turn.promptpack import PromptPackError
    from workstation.game.protocol import ProtocolError
    from workstation.store.recording import RecordingError

    types: list[type[BaseException]] = [UserError, UnknownGame, ProtocolError, PromptPackError, RecordingError, AgentSpecError]
    try:
        from workstation.providers import ProviderConfigError

        types.append(ProviderConfigError)
    except ImportError:
        pass
    return tuple(types)
