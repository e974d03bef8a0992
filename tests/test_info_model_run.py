"""`workstation info` of a model run: calls, tokens, cost and latency (a real SDK over HTTP to the fake server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.fake_provider import KEYS, SPECS, FakeProvider, fake_server  # noqa: F401
from workstation.store.recording import Recording


def test_info_of_a_model_run_shows_calls_tokens_cost_and_latency(fake_server: FakeProvider, tmp_path):  # noqa: F811
    fake_server.reset()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS)
    r = subprocess.run(
        [sys.executable, "-m", "workstation", "run", "--game", "breakout", "--agent", SPECS["openai"],
         "--base-url", fake_server.url("openai"), "--seed", "0", "--frames", "60", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.splitlines()[0])
    rec = Recording(path)
    s = rec.summary_record
    info = subprocess.run([sys.executable, "-m", "workstation", "info", str(path)], capture_output=True, text=True,
                          timeout=60, env=env)
    assert info.returncode == 0, info.stderr
    line = next(x for x in info.stdout.splitlines() if x.startswith("calls"))
    n_in = sum(s.usage.get(k, 0) for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens"))
    assert f"{s.calls} calls" in line and f"{n_in:,} in / {s.usage['output_tokens']:,} out tokens" in line
    assert (f"${s.cost_usd:.4f}" in line) if s.cost_usd is not None else "cost unknown" in line
    lat = [t.latency_s for t in rec.turn_records]
    mean = re.search(r"latency mean ([0-9.]+) s, median ([0-9.]+) s, max ([0-9.]+) s", line)
    assert mean and abs(float(mean.group(1)) - sum(lat) / len(lat)) < 0.006 and abs(float(mean.group(3)) - max(lat)) < 0.006
    assert all(k not in info.stdout for k in KEYS.values())
    random_info = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--frames", "30",
                                  "--out", str(tmp_path / "r"), "--quiet"], capture_output=True, text=True, timeout=60)
    assert random_info.returncode == 0
    rpath = next((tmp_path / "r").iterdir())
    out = subprocess.run([sys.executable, "-m", "workstation", "info", str(rpath)], capture_output=True, text=True,
                         timeout=60).stdout
    assert not any(x.startswith("calls") for x in out.splitlines())  # a built-in agent makes no calls
