"""Uploading a batch to object storage: recordings a second through ``RemoteOut.push_recordings``.

Plays a small random batch into a local directory once (the recordings to upload), then, against
moto's S3 server on 127.0.0.1 in its own process (the stand-in the tests use; a real endpoint is
further away), uploads every recording the way the driver does (files, then the marker): one at a
time, as runs trickle in, and all in one bulk put, as when several finished while the last went
up; then brings them down again the way a resume on another machine does (one bulk download).
The baseline, measured in the same run: copying the same folders on the local disk
(``shutil.copytree``). Printed: recordings and MB a second for each, and the time against the
baseline's. One uploader thread keeping up with N recordings a second is what lets a batch
finishing N runs a second never wait for its uploads.

    .venv/bin/python bench/object_store.py [--runs 16] [--frames 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SERVER = ("import sys, time; from moto.server import ThreadedMotoServer; "
          "ThreadedMotoServer(ip_address='127.0.0.1', port=int(sys.argv[1]), verbose=False).start(); time.sleep(1e6)")


def recordings(tmp: Path, runs: int, frames: int) -> list[Path]:
    seeds = list(range(max(1, runs // 2)))
    grid = tmp / "grid.toml"
    grid.write_text(textwrap.dedent(f"""\
        name = "bench-upload"
        games = ["breakout", "seaquest"]
        seeds = {seeds}

        [protocol]
        frames = {frames}

        [[settings]]
        label = "random"
        spec = "random"
        """), encoding="utf-8")
    out = tmp / "local"
    subprocess.run([sys.executable, "-m", "workstation", "batch", str(grid), "--out", str(out), "--plain",
                    "--every", "600"], cwd=ROOT, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return sorted(p for p in (out / "runs").iterdir() if p.is_dir() and not p.name.startswith("."))


def size_mb(paths: list[Path]) -> float:
    return sum(f.stat().st_size for p in paths for f in p.rglob("*") if f.is_file()) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    host = "127.0.0.1"
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # its own process, as a real endpoint would be
    for _ in range(200):
        try:
            socket.create_connection((host, port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench-secret", AWS_DEFAULT_REGION="us-east-1",
                      AWS_ENDPOINT_URL=f"http://{host}:{port}", NO_PROXY="127.0.0.1,localhost")
    import boto3

    boto3.client("s3").create_bucket(Bucket="bench")
    from workstation.studies.batch.remote_out import RemoteOut

    with tempfile.TemporaryDirectory(prefix="bench-upload-") as tmp_s:
        tmp = Path(tmp_s)
        os.environ["WORKSTATION_OUT_STAGE"] = str(tmp / "stages")
        recs = recordings(tmp, a.runs, a.frames)
        mb = size_mb(recs)
        print(f"{len(recs)} recordings of {a.frames} frames, {mb:.2f} MB in all ({mb / len(recs) * 1000:.0f} KB each)")
        copy, up, bulk, down = [], [], [], []
        for i in range(a.repeat):
            t = time.perf_counter()
            for p in recs:
                shutil.copytree(p, tmp / f"copy{i}" / p.name)
            copy.append(time.perf_counter() - t)
            out = RemoteOut.open(f"s3://bench/r{i}")
            try:
                t = time.perf_counter()
                assert all(out.push_recording(p) for p in recs)
                up.append(time.perf_counter() - t)
            finally:
                out.close()
            out = RemoteOut.open(f"s3://bench/b{i}")
            try:
                t = time.perf_counter()
                assert out.push_recordings(recs) == len(recs)
                bulk.append(time.perf_counter() - t)
            finally:
                out.close()
            other = tmp / f"elsewhere{i}"
            os.environ["WORKSTATION_OUT_STAGE"] = str(other)
            again = RemoteOut.open(f"s3://bench/r{i}")
            try:
                t = time.perf_counter()
                assert again.pull() == len(recs)
                down.append(time.perf_counter() - t)
            finally:
                again.close()
            os.environ["WORKSTATION_OUT_STAGE"] = str(tmp / "stages")
    server.kill()
    server.wait()
    n = len(recs)
    base = statistics.median(copy)
    for label, times in (("local copy (baseline)", copy), ("upload one at a time", up),
                         ("upload in one bulk", bulk), ("bring down (bulk)", down)):
        s = statistics.median(times)
        print(f"{label:26s} {n / s:8.1f} recordings/s {mb / s:8.1f} MB/s   x{s / base:6.1f} the baseline's time")


if __name__ == "__main__":
    main()
