"""What the tests share: the fake provider's fixtures, registered here for every test file.

The helpers themselves live in ``tests/fake_provider.py`` (the local HTTP server that speaks
each SDK's wire format), ``tests/tui_helpers.py`` (Pilot helpers, recorded runs) and
``tests/agents_for_tests.py`` (scripted agents); test files import those by name.
"""

from tests.fake_provider import agent_cache, agents, fake, fake_server, frames, keys

__all__ = ["agent_cache", "agents", "fake", "fake_server", "frames", "keys"]
