"""The stats bar: one line of a run's figures (score, lives, budget, paper time, turn, tokens, cost)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from screens.messages import BarStats
from workstation.game.games import FPS_PAPER
from workstation.store.series import cost_text, tokens_text


def stats_text(s: BarStats) -> Text:
    """The bar's text; labels dim, values bold."""
    cost = cost_text(s.cost_usd)
    items = [
        ("score", f"{s.score:g}"),
        ("lives", f"{s.lives}" + (f" (-{s.lives_lost})" if s.lives_lost else "")),
        ("frames", f"{s.frame}/{s.budget}"),
        ("paper time", f"{s.frame / FPS_PAPER:.2f}s/{s.budget / FPS_PAPER:.1f}s"),
        ("turns", str(s.turn)),
        ("tokens", f"{tokens_text(s.input_tokens)} in {tokens_text(s.output_tokens)} out"),
        ("cost", cost),
        ("invalid", str(s.invalid_turns)),
    ]
    text = Text(no_wrap=True, overflow="ellipsis")
    for i, (label, value) in enumerate(items):
        if i:
            text.append("  ")
        text.append(f"{label} ", style="dim")
        text.append(value, style="bold")
    return text


class StatsBar(Static):
    """Shows a BarStats; updated from EngineProgress (low rate after replacement)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(stats_text(BarStats()), id=id)
        self.stats = BarStats()

    def show_stats(self, stats: BarStats) -> None:
        if stats != self.stats:
            self.stats = stats
            self.update(stats_text(stats))
