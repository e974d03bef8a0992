"""Where episodes start: seeds that give every episode of an IDC its own start, and random play on them."""

from __future__ import annotations

from typing import Any

import numpy as np

from workstation.run.drive import drive
from workstation.run.options import RunSpec

DISTINCT_TRIES = 10_000  # seeds tried to give every episode its own start


def noop_start(seed: int, most: int) -> int:
    """The NOOP frames a ``noops:N`` start plays for ``seed`` (the clock's own draw)."""
    return int(np.random.default_rng(seed).integers(0, most + 1))


def episode_seeds(first: int, start: Any, count: int) -> list[int]:
    """``count`` distinct seeds from ``first`` on; with ``noops:N`` starts, seeds whose starts differ
    (while there are starts left: N + 1 of them)."""
    if start.kind != "noops":
        return list(range(first, first + count))
    most = int(start.value)
    seeds: list[int] = []
    used: set[int] = set()
    s = first
    while len(seeds) < count:
        n = noop_start(s, most)
        if n not in used or len(used) > most or s - first > DISTINCT_TRIES:
            seeds.append(s)
            used.add(n)
        s += 1
    return seeds


def random_scores(base: RunSpec, seeds: list[int]) -> list[float]:
    """The random baseline on the same starts and budget (played in memory: nothing recorded)."""
    from workstation.engine.promptpack import load_pack
    from workstation.engine.turn_engine import TurnEngine
    from workstation.game.games import get_game
    from workstation.run.agents import make_agent

    game, pack = get_game(base.game), load_pack(base.prompts)
    scores = []
    for s in seeds:
        engine = TurnEngine(game, base.protocol, make_agent("random", game, s), s, pack, rewindable=False)
        try:
            summary = drive(engine)
            scores.append(float(summary.total_reward) if summary is not None else 0.0)
        finally:
            engine.close()
    return scores


__all__ = ["episode_seeds", "noop_start", "random_scores"]
