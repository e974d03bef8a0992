"""Where the CPU of one model call goes, end to end: build prompt, encode images, SDK request, response parse,
engine step, record.

Runs ``compat:fake`` batch runs one after another in this process (``execute``, as a batch
thread does: shared client, shared emulators, lean caches) against the local server of
bench/batch_throughput.py answering at once, so every millisecond is this process's CPU.
First unprofiled (CPU ms a call, all threads, from ``time.process_time``), then under
cProfile with the SDK call made in the profiled thread; each stage's share of the profile
is scaled to the unprofiled total. The baseline in the same run: the SDK's own
``chat.completions.create`` (which re-walks the body against its typed params), in place of
the adapter's ``client.post``.

    .venv/bin/python bench/call_profile.py [--runs 6] [--frames 180]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import batch_throughput as bt  # the slow server, here at latency 0

# stage -> (file suffix, function name) whose cumulative time is the stage's
STAGES = [
    ("build prompt", [("engine/prompt_builder.py", "build")]),
    ("encode images", [("store/framestore.py", "png"), ("run/providers/adapter.py", "png_data_url")]),
    ("SDK request", [("openai/_base_client.py", "request")]),
    ("response parse", [("openai/_streaming.py", "__stream__")]),
    ("engine step", [("game/clock.py", "step_frame"), ("studies/batch/envpool.py", "acquire"),
                     ("studies/batch/envpool.py", "release")]),
    ("record", [("store/recording.py", "add_turn"), ("store/recording.py", "add_frame"),
                ("store/recording.py", "close")]),
]


def cells(port: int, runs: int, frames: int, d: str):
    from workstation.studies.batch.grid import load_grid
    from workstation.studies.batch.jobs import jobs_of

    g = os.path.join(d, "g.toml")
    Path(g).write_text(f"""name = "p"
games = ["breakout"]
seeds = "0..{runs}"
[protocol]
frames = {frames}
max_actions = 1
[[settings]]
label = "fake"
spec = "compat:fake"
base_url = "http://127.0.0.1:{port}/v1"
timeout = 120
""")
    return jobs_of(load_grid(g, out=os.path.join(d, "runs")))


def play(cs, hooks) -> int:
    from workstation.studies.batch.execute import execute

    return sum(execute(c.spec.to_json(), c.run_id, hooks)["calls"] for c in cs)


def inline_calls() -> None:
    """The SDK call in the calling thread (no helper thread), so cProfile sees it."""
    import workstation.run.providers.agent as agent

    agent.ProviderAgent._complete = lambda self, body, on_text, cancel, deadline: self.adapter.complete(body, on_text)


def sdk_create() -> None:
    """The baseline: the SDK's own path, as the adapter once used it: the typed ``create`` (which
    re-walks the body against its typed parameters), typed chunks read by attribute, and the SDK's
    stream stopping at ``[DONE]`` (so a new connection a call)."""
    import workstation.run.providers.openai_chat as chat
    from workstation.run.providers.adapter import Completion, judge
    from workstation.run.providers.openai_responses import openai_usage

    def complete(self, body, on_text):
        text, finish, usage, rid, model = [], None, None, None, None
        with self.client.chat.completions.create(**body) as stream:
            for chunk in stream:
                rid, model = chunk.id or rid, chunk.model or model
                if chunk.choices:
                    delta = chunk.choices[0].delta.content if chunk.choices[0].delta else None
                    if delta:
                        text.append(delta)
                    finish = chunk.choices[0].finish_reason or finish
                if chunk.usage is not None:
                    usage = openai_usage(chunk.usage.prompt_tokens or 0, 0, 0, chunk.usage.completion_tokens or 0, 0)
        full = "".join(text)
        return Completion(full, usage, finish, rid, model, judge(full, False, finish == "length"))

    chat.OpenAIChat.complete = complete


def measure(cs, hooks) -> float:
    t0 = time.process_time()
    n = play(cs, hooks)
    return 1000 * (time.process_time() - t0) / n


def stages(cs, hooks) -> tuple[dict[str, float], float]:
    pr = cProfile.Profile()
    pr.enable()
    n = play(cs, hooks)
    pr.disable()
    st = pstats.Stats(pr).stats
    total = sum(v[2] for v in st.values())  # tottime of everything
    out = {}
    for name, keys in STAGES:
        out[name] = sum(v[3] for (f, _, fn), v in st.items() if any(f.endswith(s) and fn == k for s, k in keys))
    return {k: v / total for k, v in out.items()}, total / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--frames", type=int, default=180, help="frames a run (one-action turns: 3 frames a call)")
    a = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    os.environ["BENCH_ONE_WRITE"] = "1"  # no delayed-ACK wait inside a call: the stages are CPU, not waits
    server, port = bt.start_server(0.0)
    try:
        from workstation.run.providers.limiter import AdaptiveLimiter
        from workstation.studies.batch.envpool import EnvPool
        from workstation.studies.batch.execute import Hooks, SharedClients

        with tempfile.TemporaryDirectory(prefix="call-profile-") as d:
            cs = cells(port, a.runs, a.frames, d)
            hooks = Hooks(limiter=AdaptiveLimiter(initial=8, minimum=1, maximum=8), clients=SharedClients(),
                          envs=EnvPool())
            play(cs[:1], hooks)  # warm: imports, the client, the emulator
            import workstation.run.providers.openai_chat as chat

            ours = chat.OpenAIChat.complete
            now = measure(cs[1:], hooks)
            sdk_create()
            before = measure(cs[1:], hooks)
            chat.OpenAIChat.complete = ours
            inline_calls()
            share, _ = stages(cs[1:], hooks)
        print(f"one call, end to end: {now:.2f} ms CPU (this process, all threads; median of one pass, "
              f"{a.runs} runs x {a.frames // 3} calls)")
        print(f"baseline in the same run, the SDK's typed create(): {before:.2f} ms -> {100 * now / before:.0f}%")
        print(f"{'stage':<16} {'share':>6} {'ms/call':>8}")
        for name, s in share.items():
            print(f"{name:<16} {100 * s:>5.0f}% {s * now:>8.2f}")
        rest = 1 - sum(share.values())
        print(f"{'the rest':<16} {100 * rest:>5.0f}% {rest * now:>8.2f}   (retries, limiter, threads, the loop)")
        print(f"ceiling of one process: ~{1000 / now:.0f} calls/s; of {os.cpu_count()} cores "
              f"(minus the server's share): ~{os.cpu_count() * 1000 / now:.0f} calls/s")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
