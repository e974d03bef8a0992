"""A real two-node Ray cluster on one machine with no shared batch directory: recordings come home.

A Ray head (this mount namespace) and a second node started inside its own mount namespace
(``unshare -m``) with a private, empty tmpfs over the batch root, so a run played on the second
node cannot write into the driver's batch directory. ``workstation batch --executor ray
--ray-address`` (the real CLI, its own process) must still end with every recording in DIR/runs/,
every row in results.csv (naming both nodes), every recording passing ``verify --quick``; then the
second node is killed mid-batch and the batch resumed. Skipped, saying why, where root, ``unshare``
or the ``ray`` command is missing. Timeouts are generous and nothing is timed.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (the optional extra: pip install -e '.[ray]')")

from workstation.store.integrity import quick_verdict
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parent.parent
RAY = Path(sys.executable).with_name("ray")


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (unshare -m and mount -t tmpfs)"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    if not RAY.exists():
        return f"needs the ray command beside {sys.executable}"
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        return "unshare -m is not permitted here (no CAP_SYS_ADMIN)"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ports() -> list[str]:
    """Ports of a node's own services, so two nodes on one host never collide."""
    return ["--node-manager-port", str(free_port()), "--object-manager-port", str(free_port()),
            "--dashboard-agent-listen-port", str(free_port()), "--dashboard-agent-grpc-port", str(free_port()),
            "--metrics-export-port", str(free_port()), "--runtime-env-agent-port", str(free_port()),
            "--min-worker-port", "0", "--max-worker-port", "0"]


class Node:
    """One ``ray start --block`` in its own process group (killed by that group's id, nothing else)."""

    def __init__(self, argv: list[str], env: dict, log: Path) -> None:
        self.log = open(log, "w")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=60)
        try:  # what the node started in its group (raylet, workers) goes with it
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.log.close()


def head_ip() -> str:
    from ray._private.services import get_node_ip_address

    return get_node_ip_address()


def node_count(address: str, env: dict) -> int:
    code = (f"import ray; ray.init(address={address!r}, log_to_driver=False); "
            "print(sum(1 for n in ray.nodes() if n['Alive']))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    try:
        return int(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return 0


@pytest.fixture
def cluster(tmp_path):
    batch_root = tmp_path / "batches"
    batch_root.mkdir()
    # a throwaway cluster: no token (the nodes and the driver share this environment)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled",
           "WORKSTATION_SCRATCH": str(tmp_path / "head-scratch")}
    port = free_port()
    # the head on the host's own address (what a driver on this host resolves to); the second node on
    # the loopback address, so the two raylets of one host have addresses of their own
    host = head_ip()
    address = f"{host}:{port}"
    nodes = [Node([str(RAY), "start", "--head", "--block", "--port", str(port), "--node-ip-address", host,
                   "--num-cpus", "1", "--include-dashboard", "false", "--disable-usage-stats",
                   *ports()], env, tmp_path / "head.log")]
    private = {**env, "WORKSTATION_SCRATCH": str(batch_root / "scratch")}  # inside the node's own tmpfs
    worker = " ".join([str(RAY), "start", "--block", "--address", address, "--node-ip-address", "127.0.0.1",
                       "--num-cpus", "1", "--disable-usage-stats", *ports()])
    try:
        deadline = time.monotonic() + 120
        while "Ray runtime started" not in (tmp_path / "head.log").read_text():
            assert time.monotonic() < deadline and nodes[0].proc.poll() is None, \
                (tmp_path / "head.log").read_text()[-3000:]
            time.sleep(0.5)
        nodes.append(Node(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           f"mount -t tmpfs tmpfs {batch_root} && exec {worker}"], private, tmp_path / "worker.log"))
        while node_count(address, env) < 2:
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(1)
        yield address, batch_root, env, nodes
    finally:
        for n in reversed(nodes):
            n.kill()
        current = Path("/tmp/ray/ray_current_cluster")  # a killed head leaves it; a later ray.init() would join it
        try:
            if current.read_text().strip() == address:
                current.unlink()
        except OSError:
            pass


def batch(grid: Path, out: Path, address: str, env: dict, wait: bool = True):
    argv = [sys.executable, "-m", "workstation", "batch", str(grid), "--out", str(out), "--executor", "ray",
            "--ray-address", address, "--concurrency", "2", "--plain", "--every", "30"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if wait:
        out_text, err = proc.communicate(timeout=300)
        return proc.returncode, out_text, err
    return proc


def rows_of(out: Path) -> list[dict]:
    return list(csv.DictReader(open(out / "results.csv")))


def all_home(out: Path, n: int) -> list[dict]:
    rows = rows_of(out)
    assert len(rows) == n and all(r["complete"] == "true" for r in rows), rows
    recs = [p for p in (out / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(recs) == n, sorted(p.name for p in recs)
    for p in recs:
        ok, line = quick_verdict(Recording(p))
        assert ok, line
    assert all(r["executor"] == "ray" and r["node_id"] for r in rows), rows
    return rows


def grid_file(tmp: Path, name: str, seeds: int, frames: int) -> Path:
    g = tmp / f"{name}.toml"
    g.write_text(textwrap.dedent(f"""\
        name = "{name}"
        games = ["breakout", "seaquest"]
        seeds = "0..{seeds - 1}"
        [protocol]
        frames = {frames}
        [[settings]]
        label = "random"
        spec = "random"
        """))
    return g


def test_runs_on_a_node_without_the_batch_directory_come_home_then_a_dead_node_is_resumed(cluster, tmp_path):
    address, batch_root, env, nodes = cluster
    out = batch_root / "two-nodes"
    code, text, err = batch(grid_file(tmp_path, "two-nodes", 3, 60), out, address, env)
    assert code == 0, text + err
    rows = all_home(out, 6)
    assert len({r["node_id"] for r in rows}) == 2, [(r["run_id"][:8], r["node_id"][:8]) for r in rows]
    assert not any((tmp_path / "head-scratch").iterdir())  # scratch removed once the recording left

    # the worker node dies while runs are under way on it; the batch says so, and a resume completes it
    out = batch_root / "node-dies"
    grid = grid_file(tmp_path, "node-dies", 6, 900)
    proc = batch(grid, out, address, env, wait=False)
    ledger = out / "placement.jsonl"
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline:
        if ledger.exists() and len(ledger.read_text().splitlines()) >= 2:
            break
        time.sleep(0.2)
    nodes.pop().kill()
    text, err = proc.communicate(timeout=300)
    done = [r for r in rows_of(out) if r["complete"] == "true"]
    for r in done:  # what it claims is there
        (path,) = (out / "runs").glob(f"*-{r['run_id'][:8]}")
        assert quick_verdict(Recording(path))[0]
    if proc.returncode != 0:
        assert "have no complete recording in the batch directory" in text, text + err
    code, text, err = batch(grid, out, address, env)
    assert code == 0, text + err
    all_home(out, 12)
