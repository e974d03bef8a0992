"""How fast a model call stops: cancel during a 60 s retry-after backoff, cancel while a reply
hangs, and a refused connection, each against one normal call measured in the same run.

Real SDKs over HTTP to the fake provider of the tests (127.0.0.1). Before the cancel token a
cancel waited the backoff out (60 s) and a refused connection was retried 6 times per turn
(about 31 s of backoff per turn, minutes per run); those figures are printed as the old cost.

    .venv/bin/python bench/call_stop.py
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fake_provider import KEYS, SPECS, AleFrames, FakeProvider, Step, closed_port
from workstation.engine.calls import CancelToken, FatalAgentError, TurnContext
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.game.games import get_game
from workstation.run.providers import ProviderOptions, make_provider_agent

REPEATS = 5
CTX = TurnContext(get_game("breakout"), 0, 10, 0)


def main() -> None:
    os.environ.update(KEYS)
    fake, frames = FakeProvider(), AleFrames(4)
    prompt = Prompt([Message("system", [TextPart("You play Breakout.")]),
                     Message("user", [TextPart("Now:"), ImagePart(2), TextPart("Move?")])], frames)
    print(f"{'provider':10} {'normal call':>12} {'cancel in 60 s backoff':>23} {'cancel in hang':>15} "
          f"{'refused conn.':>14}")
    for provider, spec in SPECS.items():
        agent = make_provider_agent(spec, ProviderOptions(base_url=fake.url(provider), max_wait_s=120.0))
        normal, backoff, hang = [], [], []
        for _ in range(REPEATS):
            t = time.monotonic()
            agent.act(prompt, CTX, cancel=CancelToken())
            normal.append(time.monotonic() - t)
            for step, out in ((Step("status", 429, {"retry-after": "60"}, {"error": {"message": "slow"}}), backoff),
                              (Step("hang", hang_s=30), hang)):
                fake.reset()
                fake.push(step)
                token, at = CancelToken(), {}

                def cancel_soon() -> None:
                    while not fake.seen:
                        time.sleep(0.005)
                    time.sleep(0.1)
                    at["t"] = time.monotonic()
                    token.cancel("bench")

                threading.Thread(target=cancel_soon, daemon=True).start()
                assert agent.act(prompt, CTX, cancel=token).cancelled
                out.append(time.monotonic() - at["t"])
        agent.close()
        root = f"http://127.0.0.1:{closed_port()}"
        refused = make_provider_agent(spec, ProviderOptions(base_url=root + ("/v1" if provider in ("openai", "compat")
                                                                              else "")))
        t = time.monotonic()
        try:
            refused.act(prompt, CTX, cancel=CancelToken())
        except FatalAgentError:
            pass
        refused_s = time.monotonic() - t
        refused.close()
        n, b, h = (statistics.median(x) for x in (normal, backoff, hang))
        print(f"{provider:10} {n * 1000:10.1f}ms {b * 1000:9.1f}ms ({b / n:5.2f}x normal) "
              f"{h * 1000:9.1f}ms {refused_s * 1000:10.1f}ms ({refused_s / n:.1f}x normal)")
    fake.close()
    print(f"\nmedians of {REPEATS}; cancel figures are from the cancel to the return. Before: a cancel waited the "
          "60 s out, and a refused connection cost 6 tries and ~31 s of backoff per turn.")


if __name__ == "__main__":
    main()
