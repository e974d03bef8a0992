"""Late messages on a widget being taken down: dropped, never read into children that are already gone.

A run's engine, a match or a timer posts to its screen from another thread; when the app closes (or the
screen is popped) Textual removes the children first and the screen last, so a message already queued
can reach a handler whose children were removed: ``NoMatches: '#label' on SelectCurrent``, seen under
load. Every handler fed by a worker or a timer is wrapped in ``@unless_leaving``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from textual.dom import DOMNode

F = TypeVar("F", bound=Callable[..., None])


def leaving(node: DOMNode) -> bool:
    """True once ``node`` is being removed (or never was attached): its children may be gone."""
    return not node.is_attached or node._closing or node._closed or node._pruning


def unless_leaving(handler: F) -> F:
    """Run the handler (a method of a widget or screen) only while it is attached and not being removed."""

    @functools.wraps(handler)  # Textual reads the handler's signature through __wrapped__
    def guarded(self: DOMNode, *args: Any, **kwargs: Any) -> None:
        if not leaving(self):
            handler(self, *args, **kwargs)

    return cast(F, guarded)
