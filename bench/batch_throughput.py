"""Batch throughput: model runs against a slow local server, and random-agent runs against raw emulator stepping.

1. A local OpenAI-compatible server (its own process) answers every chat completion after
   a fixed latency L. For each concurrency C, ``workstation batch`` (the real CLI, its own
   process) plays C runs of ``compat:fake`` at ``--concurrency C``; the ideal is C/L calls
   a second. Printed: calls/s over the whole batch (start-up and tail included) and in the
   steady state (the server's own count between the 10th and 90th percentile of
   arrivals), each as a share of C/L, and the batch process's peak resident memory.
2. Random-agent batches (one process per core) against raw emulator stepping of the same
   runs on all cores (gym.make + reset + the same number of random steps, in a process
   pool): frames a second, and the ratio, with and without env creation in the baseline.

    .venv/bin/python bench/batch_throughput.py [--latency 1.0] [--levels 8,32,64] [--calls 40]
        [--random-runs 120] [--skip-model] [--skip-random] [--repeat N] [--actions 1|3] [--baseline CHECKOUT]

    BENCH_TIMELINE=1 also prints the calls that reached the server in each second of each batch.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
REPLIES = {1: "thought: keep the paddle under the ball\nmove: [left]",  # 1 action = 3 frames a turn
           3: "thought: keep the paddle under the ball\nmove: [left, right, fire]"}  # 3 actions = 9 frames a turn
REPLY = REPLIES[int(os.environ.get("BENCH_ACTIONS", "3"))]


# -- the slow server ------------------------------------------------------------------
def serve(port_file: str, latency: float) -> None:
    arrivals: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a) -> None:
            pass

        def do_GET(self) -> None:  # /arrivals: the arrival times so far (and reset)
            data = json.dumps(arrivals).encode()
            arrivals.clear()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            arrivals.append(time.monotonic())
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            time.sleep(latency)
            model = body.get("model", "fake")
            usage = {"prompt_tokens": 5000, "completion_tokens": 60, "total_tokens": 5060}
            if not body.get("stream"):
                self._send(json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": model,
                                       "choices": [{"index": 0, "finish_reason": "stop",
                                                    "message": {"role": "assistant", "content": REPLY}}],
                                       "usage": usage}).encode(), "application/json")
                return
            head = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model}
            chunks = [{**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY},
                                            "finish_reason": None}]},
                      {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                      {**head, "choices": [], "usage": usage}]
            data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self._send(data.encode(), "text/event-stream")

        def _send(self, data: bytes, ctype: str) -> None:
            self.send_response(200)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            if os.environ.get("BENCH_ONE_WRITE"):  # headers and body in one send, as real model servers do
                self._headers_buffer.append(b"\r\n" + data)
                self.flush_headers()
                return
            # http.server's way: headers, then the body in a second send; on a kept-alive connection the
            # second waits for the client's delayed ACK of the first (up to 40 ms a call)
            self.end_headers()
            self.wfile.write(data)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 512

    srv = Server(("127.0.0.1", 0), Handler)
    Path(port_file).write_text(str(srv.server_address[1]))
    srv.serve_forever(poll_interval=0.05)


def start_server(latency: float) -> tuple[subprocess.Popen, int]:
    port_file = tempfile.mktemp(prefix="batch-bench-port-")
    proc = subprocess.Popen([sys.executable, __file__, "--serve", port_file, "--latency", str(latency),
                             "--actions", os.environ.get("BENCH_ACTIONS", "3")])
    for _ in range(200):
        if os.path.exists(port_file) and Path(port_file).read_text():
            return proc, int(Path(port_file).read_text())
        time.sleep(0.05)
    raise SystemExit("the fake server did not start")


def arrivals(port: int) -> list[float]:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/arrivals") as r:
        return json.loads(r.read())


# -- running a batch and watching its memory ----------------------------------------------
def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (the batch's worker processes, if any)."""
    total = rss_mb(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(tree_rss_mb(int(c)) for c in children)


LAST_CPU_S = 0.0  # user + sys seconds of the last batch (load does not inflate it)


def run_batch(grid_text: str, out: Path, *args: str) -> tuple[float, float, int]:
    grid = out.with_suffix(".toml")
    grid.write_text(textwrap.dedent(grid_text))
    code = Path(os.environ.get("BENCH_CODE") or ROOT)  # --baseline: another checkout's workstation, same venv
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "PYTHONPATH": str(code)}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "workstation", "batch", str(grid), "--out", str(out), "--plain",
                             "--every", "30", *args], cwd=code, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while True:  # wait4: the batch's CPU time, its waited-for worker processes included
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        peak = max(peak, tree_rss_mb(proc.pid))
        time.sleep(0.2)
    wall = time.monotonic() - t0
    global LAST_CPU_S
    LAST_CPU_S = usage.ru_utime + usage.ru_stime
    if proc.returncode != 0:
        raise SystemExit(f"the batch failed ({proc.returncode}): {proc.stderr.read()[-2000:]}")
    return wall, peak, proc.returncode


def results(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]


def model_level(port: int, c: int, latency: float, calls: int, tmp: Path) -> dict:
    frames = calls * 3 * int(os.environ.get("BENCH_ACTIONS", "3"))  # one call per turn of N actions x 3 frames
    grid = f"""\
        name = "c{c}"
        games = ["breakout"]
        seeds = "0..{c - 1}"
        [protocol]
        frames = {frames}
        [limits]
        compat = {c}
        [[settings]]
        label = "fake"
        spec = "compat:fake"
        base_url = "http://127.0.0.1:{port}/v1"
        timeout = 120
        """
    arrivals(port)  # reset
    t0 = time.monotonic()
    wall, peak, _ = run_batch(grid, tmp / f"c{c}", "--concurrency", str(c))
    rows = results(tmp / f"c{c}")
    total = sum(r["calls"] for r in rows)
    seen = sorted(arrivals(port))
    if os.environ.get("BENCH_TIMELINE") and seen:  # calls arriving in each second of the batch
        per = [0] * (int(seen[-1] - t0) + 1)
        for x in seen:
            per[int(x - t0)] += 1
        print(f"  first call at {seen[0] - t0:.1f} s, last at {seen[-1] - t0:.1f} s, batch ended at {wall:.1f} s; "
              f"calls a second: {per}", flush=True)
    lo, hi = seen[len(seen) // 10], seen[(len(seen) * 9) // 10]
    steady = (len(seen) * 8 // 10) / (hi - lo) if hi > lo else 0.0
    ideal = c / latency
    return {"C": c, "calls": total, "wall_s": wall, "cpu_ms_call": 1000 * LAST_CPU_S / max(total, 1), "whole": total / wall, "steady": steady, "ideal": ideal,
            "rss_mb": peak, "complete": all(r["complete"] for r in rows)}


# -- random agents vs raw stepping -------------------------------------------------------------
def raw_run(args: tuple[str, int, int, bool]) -> tuple[int, float]:
    """One bare run: (make the env +) reset + ``frames`` random steps; returns (frames, seconds stepping)."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    env_id, frames, seed, _ = args
    t0 = time.perf_counter()
    env = gym.make(env_id, frameskip=1, repeat_action_probability=0.0)
    env.reset(seed=seed)
    rng = random.Random(seed)
    n = env.action_space.n
    t1 = time.perf_counter()
    for _ in range(frames):
        _, _, term, trunc, _ = env.step(rng.randrange(n))
        if term or trunc:
            env.reset()
    t2 = time.perf_counter()
    env.close()
    return frames, t2 - t1, t2 - t0


def raw_throughput(runs: int, frames: int, workers: int) -> tuple[float, float]:
    """Frames a second on ``workers`` cores: (stepping only, with env creation)."""
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(raw_run, [("ALE/Breakout-v5", 10, 0, False)] * workers))  # warm the workers
        t0 = time.monotonic()
        out = list(pool.map(raw_run, [("ALE/Breakout-v5", frames, s, False) for s in range(runs)]))
        wall = time.monotonic() - t0
    total = sum(f for f, _, _ in out)
    stepping = total / (sum(s for _, s, _ in out) / workers)
    return stepping, total / wall


def random_level(runs: int, frames: int, tmp: Path) -> dict:
    from workstation.studies.batch.executors import cores

    n = cores()
    grid = f"""\
        name = "rnd"
        games = ["breakout"]
        seeds = "0..{runs - 1}"
        [protocol]
        frames = {frames}
        [[settings]]
        label = "random"
        spec = "random"
        """
    wall, peak, _ = run_batch(grid, tmp / "rnd", "--concurrency", str(n))
    total = sum(r["frames"] for r in results(tmp / "rnd"))
    stepping, with_make = raw_throughput(runs, frames, n)
    return {"cores": n, "runs": runs, "frames": total, "wall_s": wall, "batch_fps": total / wall,
            "raw_step_fps": stepping, "raw_run_fps": with_make, "rss_mb": peak}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--levels", default="8,32,64")
    ap.add_argument("--calls", type=int, default=40, help="calls per model run")
    ap.add_argument("--repeat", type=int, default=1, help="batches per level (prints the median and spread)")
    ap.add_argument("--random-runs", type=int, default=120, help="random-agent runs (the batch's fixed start-up, "
                    "about 1-2 s for the CLI and its worker processes, is spread over them)")
    ap.add_argument("--actions", type=int, choices=(1, 3), default=3, help="actions a reply (1: the hidden check's "
                    "one-action turns)")
    ap.add_argument("--baseline", metavar="CHECKOUT", help="also run each model batch with another checkout's "
                    "code (e.g. a `git worktree` of an older commit), first, in the same conditions")
    ap.add_argument("--skip-model", action="store_true")
    ap.add_argument("--skip-random", action="store_true")
    a = ap.parse_args()
    os.environ["BENCH_ACTIONS"] = str(a.actions)  # the server process reads it too
    if a.serve:
        serve(a.serve, a.latency)
        return
    server, port = start_server(a.latency)
    try:
        with tempfile.TemporaryDirectory(prefix="batch-bench-") as d:
            tmp = Path(d)
            print(f"model runs: compat:fake against a local server answering after L = {a.latency:g} s; "
                  f"{a.calls} calls a run, C runs at --concurrency C")
            print(f"{'C':>4} {'calls':>6} {'wall s':>7} {'calls/s':>8} {'steady':>8} {'ideal C/L':>9} "
                  f"{'whole %':>8} {'steady %':>8} {'RSS MB':>7} {'CPU ms/call':>11}")
            for c in ([] if a.skip_model else [int(x) for x in a.levels.split(",")]):
                seen = []
                for i in range(a.repeat):
                    if a.baseline:  # the baseline checkout's batch first, in the same conditions
                        (tmp / f"b{i}").mkdir(exist_ok=True)
                        os.environ["BENCH_CODE"] = a.baseline
                        try:
                            r = model_level(port, c, a.latency, a.calls, tmp / f"b{i}")
                        finally:
                            os.environ.pop("BENCH_CODE")
                        print(f"{'base':>4} {r['calls']:>6} {r['wall_s']:>7.1f} {r['whole']:>8.1f} {r['steady']:>8.1f} "
                              f"{r['ideal']:>9.1f} {100 * r['whole'] / r['ideal']:>7.0f}% "
                              f"{100 * r['steady'] / r['ideal']:>7.0f}% {r['rss_mb']:>7.0f} {r['cpu_ms_call']:>11.2f}",
                              flush=True)
                    (tmp / f"r{i}").mkdir(exist_ok=True)
                    r = model_level(port, c, a.latency, a.calls, tmp / f"r{i}")
                    seen.append(r)
                    print(f"{r['C']:>4} {r['calls']:>6} {r['wall_s']:>7.1f} {r['whole']:>8.1f} {r['steady']:>8.1f} "
                          f"{r['ideal']:>9.1f} {100 * r['whole'] / r['ideal']:>7.0f}% {100 * r['steady'] / r['ideal']:>7.0f}% "
                          f"{r['rss_mb']:>7.0f} {r['cpu_ms_call']:>11.2f}" + ("" if r["complete"] else "  (not every run complete!)"), flush=True)
                if len(seen) > 1:  # the machine is shared: the median and the spread of the repeats
                    def pct(k):
                        v = sorted(100 * x[k] / x["ideal"] for x in seen)
                        return f"{statistics.median(v):.1f}% ({v[0]:.1f}-{v[-1]:.1f})"
                    rss = sorted(x["rss_mb"] for x in seen)
                    print(f"  C = {c}, {len(seen)} repeats: whole {pct('whole')}, steady {pct('steady')}, "
                          f"RSS {statistics.median(rss):.0f} MB ({rss[0]:.0f}-{rss[-1]:.0f})", flush=True)
            if not a.skip_random:
                r = random_level(a.random_runs, 900, tmp)
                print(f"\nrandom agent: {r['runs']} runs x 900 frames, one process per core ({r['cores']} cores)")
                print(f"  batch (recorded, whole CLI incl. start-up): {r['batch_fps']:.0f} frames/s, "
                      f"peak RSS {r['rss_mb']:.0f} MB (batch + workers)")
                print(f"  raw emulator stepping, same runs, all cores: {r['raw_step_fps']:.0f} frames/s stepping only "
                      f"-> batch {100 * r['batch_fps'] / r['raw_step_fps']:.0f}%; {r['raw_run_fps']:.0f} frames/s "
                      f"with env creation -> batch {100 * r['batch_fps'] / r['raw_run_fps']:.0f}%")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
