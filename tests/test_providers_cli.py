"""`workstation run` with each provider against the fake server, first answer a 429."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fake_provider import KEYS, SPECS, FakeProvider, Step
from workstation.cli import main
from workstation.store.recording import Recording


def cli(args: list[str], env: dict[str, str], own_process: bool, capsys, monkeypatch) -> SimpleNamespace:
    """The CLI in its own process, or in this one (the same exit code and output without seconds of SDK imports)."""
    if own_process:
        return subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True,
                              timeout=120, env=env)
    for k in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(k)
    for k, v in KEYS.items():
        monkeypatch.setenv(k, v)
    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


@pytest.mark.parametrize("provider", ["openai", "compat", "anthropic", "gemini"])
def test_cli_run_completes_through_a_429(provider, fake_server: FakeProvider, tmp_path, capsys, monkeypatch):
    fake_server.reset()
    fake_server.push(Step(kind="status", status=429, headers={"retry-after": "1"},
                          error={"error": {"message": "slow down", "type": "rate_limit_error"}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS)
    own = provider == "openai"  # one provider runs the real command in its own process; the others in this one
    r = cli(["run", "--game", "breakout", "--agent", SPECS[provider], "--base-url", fake_server.url(provider),
             "--seed", "0", "--frames", "90", "--out", str(tmp_path)], env, own, capsys, monkeypatch)
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.splitlines()[0])
    rec = Recording(path)
    assert rec.complete and rec.summary_record.frames == 90
    first = rec.turn_records[0]
    assert [a["error_class"] for a in first.attempts][:1] == ["rate_limit"] and first.attempts[-1]["ok"]
    assert first.attempts[0]["wait_s"] >= 1.0, "retry-after was honoured"
    assert first.actions == ["left", "left", "fire"] and first.usage["output_tokens"] > 0
    assert rec.summary_record.calls >= len(rec.turn_records) + 1
    # the key never lands on disk or in what the user saw
    blob = "".join(p.read_text(errors="replace") for p in path.iterdir() if p.suffix in (".json", ".jsonl"))
    for secret in KEYS.values():
        assert secret not in blob and secret not in r.stdout + r.stderr
    req = cli(["request", str(path), "--turn", "1"], env, own, capsys, monkeypatch)
    assert req.returncode == 0, req.stderr
    assert "png_bytes" in req.stdout and all(s not in req.stdout for s in KEYS.values())
    assert "base64" not in req.stdout.lower() or "png_bytes" in req.stdout


def test_cli_missing_key_is_one_line_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    r = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--agent", "openai:gpt-5.2",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "OPENAI_API_KEY" in r.stderr
    assert not any(tmp_path.iterdir()), "nothing is written for a run that cannot start"


def test_cli_fatal_error_stops_with_one_line_and_incomplete_recording(fake_server: FakeProvider, tmp_path):
    fake_server.reset()
    fake_server.push(Step(), Step(kind="status", status=401, error={"error": {"message": "invalid api key sk-test-SECRET-openai-0123456789"}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS)
    r = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--agent", SPECS["openai"],
                        "--base-url", fake_server.url("openai"), "--frames", "90", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and all(s not in r.stderr + r.stdout for s in KEYS.values())
    rec = Recording(Path(r.stdout.splitlines()[0]))
    assert rec.summary_record.complete is False and len(rec.turn_records) == 1
    assert json.loads((rec.path / "summary.json").read_text())["stopped"]
