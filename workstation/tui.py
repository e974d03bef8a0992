"""The one hand-off from the headless side to the TUI: ``open_tui(launch)``.

Imported by ``workstation.cli`` only, and the TUI only now: headless commands never import
Textual. The command modules that open a screen get this door as ``args.open_tui``. A screen
is refused (one line, exit 2) when stdin or stdout is not a terminal.
"""

from __future__ import annotations

from workstation.base.errors import UserError
from workstation.run.launch import Launch, require_terminal

# what the user typed, for each screen whose name is not its command's
COMMANDS = {"home": "", "batch": "batch --watch", "qa_curate": "qa curate", "match": "play --vs", "idc": "idc --view"}


def open_tui(launch: Launch) -> int:
    """Run the TUI on ``launch`` (``screens.app.make_app``, the only way in); returns the exit status."""
    require_terminal(COMMANDS.get(launch.screen, launch.screen))
    return _launch(launch)


def _launch(launch: Launch) -> int:
    try:
        from screens.app import run_app
    except ImportError as e:  # pragma: no cover - textual is a declared dependency
        raise UserError(f"the TUI cannot start ({e}); reinstall with `pip install -e .`") from e
    return run_app(launch)


__all__ = ["open_tui", "require_terminal"]
