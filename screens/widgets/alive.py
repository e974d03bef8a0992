"""Late messages on a widget being taken down: dropped, never read into children that are already gone.

A run's engine, a match or a timer posts to its screen from another thread; when the app closes (or the
screen is popped) Textual removes the children first and the screen last, so a message already queued
can reach a handler whose children were removed: ``NoMatches: '#label' on SelectCurrent``, seen under
load. Every handler fed by a worker or a timer is wrapped in ``@unless_leaving``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from textual.dom import DOMNode

P = ParamSpec("P")
N = TypeVar("N", bound=DOMNode)


def leaving(node: DOMNode) -> bool:
    """True once ``node`` is being removed (or never was attached): its children may be gone."""
    return not node.is_attached or node._closing or node._closed or node._pruning


def unless_leaving(handler: Callable[Concatenate[N, P], None]) -> Callable[Concatenate[N, P], None]:
    """Run the handler only while its widget is attached and not being removed."""

    @functools.wraps(handler)
    def guarded(self: N, *args: P.args, **kwargs: P.kwargs) -> None:
        if not leaving(self):
            handler(self, *args, **kwargs)

    return guarded
