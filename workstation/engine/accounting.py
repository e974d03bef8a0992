"""What a player's calls and turns cost and count: the one account both engines keep.

The one-player engine (``workstation.engine.turn_engine``) keeps one ``Accounting``; the two-player engine
(``workstation.engine.match_engine``) one per side. Each counts the same way: every request sent (failed tries
included; built-in agents send none), the tokens, the cost (unknown once any reply with usage has no price),
the turns whose reply was invalid and those lost to provider errors, in a row for the stop rule. The stop
reasons for the cost cap and for too many failed turns in a row are written here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from workstation.engine.calls import Reply, Usage


@dataclass
class Accounting:
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    priced: bool = True  # False once a reply with usage came without a price
    calls: int = 0
    invalid_turns: int = 0
    failed_turns: int = 0  # turns lost to provider errors (no usable reply after every retry)
    failed_in_a_row: int = 0

    def add_reply(self, reply: Reply) -> None:
        """Count one reply's requests, tokens and cost."""
        self.calls += len(reply.attempts) or (1 if reply.usage is not None else 0)
        if reply.usage is not None:
            self.usage = self.usage + reply.usage
        if reply.cost_usd is not None:
            self.cost_usd += reply.cost_usd
        elif reply.usage is not None:
            self.priced = False

    def end_turn(self, invalid: bool, lost: bool) -> None:
        """Count a finished turn: its reply was invalid; it was lost to a provider error."""
        self.invalid_turns += int(invalid)
        self.failed_turns += int(lost)
        self.failed_in_a_row = self.failed_in_a_row + 1 if lost else 0

    @property
    def cost(self) -> float | None:
        """The cost as a summary gives it: rounded, None when some reply had no price."""
        return round(self.cost_usd, 6) if self.priced else None

    def failing(self, max_failed_turns: int) -> bool:
        """Too many turns in a row lost to provider errors (``max_failed_turns`` 0: never)."""
        return bool(max_failed_turns) and self.failed_in_a_row >= max_failed_turns

    def copy(self) -> Accounting:
        return replace(self, usage=self.usage + Usage())


def cost_cap_reason(spent: float, max_cost: float | None) -> str | None:
    """Why a run stops for its cost cap (None: it does not)."""
    if max_cost is None or spent < max_cost:
        return None
    return f"cost cap reached: ${spent:.4f} >= --max-cost ${max_cost:g}"


__all__ = ["Accounting", "cost_cap_reason"]
