"""Side bias of each two-player game under random play: random against random, both seeded, N seeds a game.

    PYTHONPATH=. python bench/side_bias.py [SEEDS] [FRAMES] [GAME:MODE ...]

Nothing is recorded (the engine runs without a writer). Prints, per game, the mode played, each
seed's scores (side 1 - side 2), the wins of each side and the draws, and each side's win share
(draws half). Also two NOOP-only players (the `replay`-free way: both agents answer `noop`), which
shows whether a game is zero-sum when nobody plays.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

from workstation.engine.calls import Reply, TurnContext
from workstation.engine.match_engine import MatchEngine
from workstation.game.protocol import Protocol
from workstation.game.twoplayer import TWO_PLAYER_GAMES, make_ale
from workstation.run.match_start import MatchSpec, prepare_match, side_builders


class Noop:
    spec = "noop"
    reads_prompt = False

    def act(self, prompt: Any, ctx: TurnContext, on_text: Any = None) -> Reply:
        return Reply("move: [noop]")

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "noop", "spec": "noop"}


def play(key: str, seed: int, protocol: Protocol, noop: bool = False) -> tuple[float, float]:
    prep = prepare_match(MatchSpec(key, "random", "random", seed, protocol, "/nonexistent"))
    agents = (Noop(), Noop()) if noop else prep.agents
    builders = side_builders(prep.tp, protocol, prep.pack, prep.text, None)
    engine = MatchEngine(prep.tp, protocol, agents, seed, builders)  # type: ignore[arg-type]
    try:
        engine.run()
    finally:
        engine.close()
    s1, s2 = engine.clock.scores
    return s1, s2


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    protocol = Protocol(frames=int(sys.argv[2])) if len(sys.argv) > 2 else Protocol()
    print(f"random vs random, seeds 0..{seeds - 1}, {protocol.frames} frames, repeat {protocol.repeat}")
    picked = [(g.partition(":")[0], int(g.partition(":")[2])) for g in sys.argv[3:]]
    for key, mode in picked or [(k, int(make_ale(tp, Protocol(), 0).getAvailableModes(2)[0]))
                                for k, tp in TWO_PLAYER_GAMES.items()]:
        protocol = replace(protocol, game_mode=mode if picked else None)
        scores = [play(key, s, protocol) for s in range(seeds)]
        w1 = sum(a > b for a, b in scores)
        w2 = sum(a < b for a, b in scores)
        d = seeds - w1 - w2
        share = (w1 + d / 2) / seeds
        noop = play(key, 0, protocol, noop=True)
        print(f"{key} (mode {mode}): " + ", ".join(f"{a:g}-{b:g}" for a, b in scores)
              + f"; side 1 wins {w1}, side 2 wins {w2}, draws {d}; side 1's share {share:.2f}"
              + f"; NOOP vs NOOP {noop[0]:g}-{noop[1]:g}", flush=True)


if __name__ == "__main__":
    main()
