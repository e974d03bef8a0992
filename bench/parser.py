"""How long the reply parser takes on typical and messy replies (the turn loop's parse cost).

Prints microseconds per parse for each reply and the ratio to a bare `str.split` of the same
text measured in the same run. Usage: python bench/parser.py [--n 5000]
"""

from __future__ import annotations

import argparse
import time

from workstation.engine.parser import parse_reply
from workstation.game.games import get_game

REPLIES = {
    "typical": "thought: ball moving down-left toward the paddle\nmove: [left, left, noop]",
    "fenced": "```\nThought: the ball is high\nMove: [Right, right, FIRE]\n```",
    "ten actions": "thought: sweep\nmove: [left, left, left, right, right, right, noop, noop, fire, fire]",
    "invalid": "I think I should go left and then maybe jump over the ball",
}


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    a = ap.parse_args()
    game = get_game("breakout")
    print(f"{'reply':<14}{'parse us':>10}{'split us':>10}{'ratio':>8}")
    for name, text in REPLIES.items():
        parse = per_call(lambda: parse_reply(text, game), a.n)
        split = per_call(lambda: text.split(","), a.n)
        print(f"{name:<14}{parse * 1e6:>10.1f}{split * 1e6:>10.2f}{parse / split:>8.0f}")


if __name__ == "__main__":
    main()
