"""Improvement rounds against a local stand-in: what the rounds cost beyond playing their episodes.

A local OpenAI-compatible server (this process, a thread) answers player calls with a fixed
reply and tool-offering calls with a scripted reflection (list_dir, write_notebook,
submit_diagnosis, submit_skill), each after a fixed latency L. Measured in one run:

1. ``workstation idc`` (the real CLI, its own process): R rounds after round 0 of K episodes.
2. The baseline: ``workstation batch`` of the same (R + 1) x K episodes in one grid (no
   reflections, no rounds), at the same concurrency.

Printed: both wall times, the ratio, the reflector's calls, and the time a reflection takes
beyond its L-second calls (the IDC's own bookkeeping: random baseline, curve, transcripts).

    .venv/bin/python bench/idc_rounds.py [--latency 0.2] [--rounds 2] [--episodes 4] [--frames 300]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYER = "thought: go\nmove: [" + ", ".join(["up"] * 10) + "]"
SCRIPT = [("list_dir", {"path": "."}), ("write_notebook", {"text": "notes"}),
          ("submit_diagnosis", {"diagnosis": "slow"}), ("submit_skill", {"skill": "Move up when the lane is clear."})]


def serve(latency: float) -> tuple[ThreadingHTTPServer, dict]:
    counts = {"player": 0, "reflector": 0}
    step = itertools.count()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            time.sleep(latency)
            with lock:
                kind = "reflector" if body.get("tools") else "player"
                counts[kind] += 1
                n = next(step) % 4 if kind == "reflector" else 0
            if kind == "reflector":
                name, args = SCRIPT[n]
                delta = {"role": "assistant", "tool_calls": [{"index": 0, "id": f"c{n}", "type": "function",
                                                              "function": {"name": name, "arguments": json.dumps(args)}}]}
                finish = "tool_calls"
            else:
                delta, finish = {"role": "assistant", "content": PLAYER}, "stop"
            head = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": body["model"]}
            chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                      {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
            raw = ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, counts


def timed(args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "workstation", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({r.returncode}): {r.stderr or r.stdout[-500:]}")
    return time.monotonic() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--frames", type=int, default=300)
    a = p.parse_args()
    server, counts = serve(a.latency)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        idc_s = timed(["idc", "--game", "freeway", "--player", "compat:p", "--base-url", url, "--rounds",
                       str(a.rounds), "--episodes", str(a.episodes), "--frames", str(a.frames), "--out",
                       f"{tmp}/idc"])
        reflector_calls, player_calls = counts["reflector"], counts["player"]
        n = (a.rounds + 1) * a.episodes
        grid = Path(tmp) / "grid.toml"
        grid.write_text(textwrap.dedent(f"""\
            name = "idc-baseline"
            games = ["freeway"]
            seeds = "0..{n - 1}"
            [[settings]]
            label = "p"
            spec = "compat:p"
            base_url = "{url}"
            [protocol]
            frames = {a.frames}
            start = "noops:30"
            """))
        batch_s = timed(["batch", str(grid), "--out", f"{tmp}/batch", "--plain", "--concurrency", "8"])
    server.shutdown()
    print(f"idc: {a.rounds} rounds after round 0 x {a.episodes} episodes, {a.frames} frames, latency {a.latency:g} s")
    print(f"  idc   {idc_s:6.2f} s  ({player_calls} player calls, {reflector_calls} reflector calls)")
    print(f"  batch {batch_s:6.2f} s  (the same {n} episodes in one grid)")
    print(f"  ratio {idc_s / batch_s:6.2f}  (rounds run one after another, each waits for its slowest episode)")
    own = idc_s - batch_s - reflector_calls * a.latency
    print(f"  beyond the reflector's {reflector_calls} x {a.latency:g} s calls: {own:+.2f} s "
          "(round barriers, random baseline, curve, transcripts, one start-up per round's batch)")


if __name__ == "__main__":
    main()
