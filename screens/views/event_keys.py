"""The keys that jump to the next reward, life loss or game over (shifted: the previous one).

The replay and compare screens both bind them to their ``action_event(kind, direction)``.
"""

from __future__ import annotations

from textual.binding import Binding

EVENT_BINDINGS = [
    Binding("r", "event('reward', 1)", "Next reward"),
    Binding("R", "event('reward', -1)", "Prev reward", show=False),
    Binding("l", "event('life_lost', 1)", "Next life loss"),
    Binding("L", "event('life_lost', -1)", "Prev life loss", show=False),
    Binding("g", "event('game_over', 1)", "Next game over"),
    Binding("G", "event('game_over', -1)", "Prev game over", show=False),
]
