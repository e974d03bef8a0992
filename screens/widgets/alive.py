"""Late messages on a widget being taken down: dropped, never read into children that are already gone.

A run's engine, a match or a timer posts to its screen from another thread; when the app closes (or the
screen is popped) Textual removes the children first and the screen last, so a message already queued
can reach a handler whose children were removed: ``NoMatches: '#label' on SelectCurrent``, seen under
load. Every handler fed by a worker or a timer is wrapped in ``@unless_leaving``; every ``Select`` is a
``SafeSelect`` (Textual's own mount handler writes into its children).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.widgets import Select
from textual.widgets.select import NoSelection

F = TypeVar("F", bound=Callable[..., None])
T = TypeVar("T")


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


class SafeSelect(Select[T]):
    """A ``Select`` that survives being taken down while it mounts.

    Textual's ``Select`` sets its value in its own mount handler, which writes into its ``SelectCurrent``'s
    ``#label``; when the screen is closed at that moment (the app quits while a screen is still mounting, seen
    under load) the label is already gone and ``NoMatches`` would crash the app. Being removed, the value has
    nowhere to show: the error is dropped then, and only then.
    """

    def _watch_value(self, value: T | NoSelection) -> None:
        try:
            super()._watch_value(value)
        except NoMatches:
            if not leaving(self):
                raise
