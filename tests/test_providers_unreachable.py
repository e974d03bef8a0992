"""Provider failures that cannot heal by waiting stop the run at once with one line naming the
URL and what to check; N turns in a row lost to provider errors stop it too. Real SDKs over
HTTP (the fake provider, a closed port, a plain-HTTP port spoken to as https), and the CLI."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import httpx2
import openai
import pytest

from tests.fake_provider import KEYS, SPECS, Step, closed_port, wait_until
from workstation.cli import main
from workstation.engine.calls import FatalAgentError, TurnContext
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.game.games import get_game
from workstation.run.providers import ProviderOptions, make_provider_agent
from workstation.run.providers.retry import classify
from workstation.store.recording import Recording

CTX = TurnContext(get_game("breakout"), turn=0, max_actions=10, frame=0)
ALL_KEYS = tuple(KEYS.values())
PATHS = {"openai": "/v1/responses", "compat": "/v1/chat/completions", "anthropic": "/v1/messages",
         "gemini": "/v1/models/"}


def prompt(frames) -> Prompt:
    return Prompt([Message("system", [TextPart("You play Breakout.")]),
                   Message("user", [TextPart("Now:"), ImagePart(2), TextPart("Move?")])], frames)


def fatal_line(spec: str, base_url: str, frames) -> FatalAgentError:
    agent = make_provider_agent(spec, ProviderOptions(base_url=base_url, timeout=10.0, max_wait_s=120.0))
    try:
        started = time.monotonic()
        with pytest.raises(FatalAgentError) as caught:
            agent.act(prompt(frames), CTX)
        assert time.monotonic() - started < 10  # one try, no backoff
    finally:
        agent.close()
    err = caught.value
    text = str(err)
    assert "\n" not in text and not any(k in text for k in ALL_KEYS)
    assert err.reply is not None and len(err.reply.attempts) == 1 and err.reply.attempts[0].error_class == "fatal"
    return err


@pytest.mark.parametrize("provider", list(SPECS))
def test_connection_refused_is_fatal_and_names_the_url(keys, frames, provider):
    root = f"http://127.0.0.1:{closed_port()}"
    base = root + "/v1" if provider in ("openai", "compat") else root
    text = str(fatal_line(SPECS[provider], base, frames))
    assert f"{SPECS[provider]}: nothing answers at {root}{PATHS[provider]}" in text
    assert "Connection refused" in text and "check that the model server is running there and --base-url" in text


def test_tls_failure_is_fatal(keys, fake, frames):
    base = f"https://127.0.0.1:{fake.port}/v1"  # the fake speaks plain HTTP
    text = str(fatal_line(SPECS["openai"], base, frames))
    assert text.startswith(f"openai:gpt-5.2: TLS failed with {base}/responses; check http:// versus https://")


def test_unknown_host_is_fatal(keys, frames):
    host = "no-such-host.invalid"  # RFC 6761: never resolves
    try:
        socket.getaddrinfo(host, 80)
        pytest.skip("this resolver answers for .invalid names")
    except socket.gaierror as e:
        if e.errno == socket.EAI_AGAIN:
            pytest.skip("no name server here to say the host does not exist")
    text = str(fatal_line(SPECS["anthropic"], f"http://{host}", frames))
    assert text.startswith(f"anthropic:claude-sonnet-4-6: unknown host in http://{host}/v1/messages; check --base-url")


def test_a_temporary_name_failure_and_a_reset_may_heal():
    request = httpx2.Request("POST", "http://h/v1/x")

    def wrapped(cause: BaseException) -> Exception:
        try:
            try:
                raise cause
            except OSError as e:
                raise httpx2.ConnectError(str(e), request=request) from e
        except httpx2.ConnectError as e:
            try:
                raise openai.APIConnectionError(request=request) from e
            except openai.APIConnectionError as outer:
                return outer

    assert classify(wrapped(ConnectionRefusedError(111, "Connection refused"))).error_class == "fatal"
    assert classify(wrapped(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))).error_class == "fatal"
    assert classify(wrapped(socket.gaierror(socket.EAI_AGAIN, "Temporary failure"))).error_class == "transient"
    assert classify(wrapped(ConnectionResetError(104, "Connection reset by peer"))).error_class == "transient"


@pytest.mark.parametrize("status, body, words", [
    (404, {"error": {"message": "model 'qwen9' not found", "type": "not_found_error", "code": "model_not_found"}},
     "unknown model or endpoint at {url}; check the model name and --base-url"),
    (401, {"error": {"message": f"bad key {KEYS['OPENAI_API_KEY']}", "type": "invalid_api_key"}},
     "the provider refused the API key at {url}; check OPENAI_API_KEY"),
])
def test_status_failures_name_the_url(agents, fake, frames, status, body, words):
    fake.push(Step("status", status, {}, body))
    with pytest.raises(FatalAgentError) as caught:
        agents.get("compat").act(prompt(frames), CTX)
    text = str(caught.value)
    assert words.format(url=fake.url("compat") + "/chat/completions") in text
    assert not any(k in text for k in ALL_KEYS) and len(fake.seen) == 1


# -- through the command line --------------------------------------------------------------------

def cli(*args: str, here=None, **popen) -> subprocess.CompletedProcess | SimpleNamespace:
    """``workstation run --game breakout ARGS`` in its own process, or in this one when ``here`` is
    (capsys, monkeypatch): the same exit code and output, without seconds of SDK imports."""
    if here is not None:
        capsys, monkeypatch = here
        for k in [k for k in os.environ if k.endswith("_API_KEY")]:
            monkeypatch.delenv(k)
        for k, v in KEYS.items():
            monkeypatch.setenv(k, v)
        try:
            code = main(["run", "--game", "breakout", *args])
        except SystemExit as e:
            code = e.code
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS)
    return subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", *args],
                          capture_output=True, text=True, timeout=180, env=env, **popen)


def test_cli_closed_port_exits_quickly_with_one_line(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    r = cli("--agent", "compat:m", "--base-url", url, "--frames", "30", "--out", str(tmp_path))
    assert time.monotonic() - started < 60  # seconds: it used to retry for minutes
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"workstation: run stopped: compat:m: nothing answers at {url}/chat/completions")
    summary = Recording(Path(r.stdout.splitlines()[0])).summary_record
    assert summary.complete is False and summary.calls == 1 and summary.stopped_call["turn"] == 0


def test_cli_unknown_model_exits_with_one_line(fake, tmp_path, capsys, monkeypatch):
    fake.push(Step("status", 404, {}, {"error": {"message": "The model `nope` does not exist",
                                                 "type": "invalid_request_error", "code": "model_not_found"}}))
    r = cli("--agent", "compat:nope", "--base-url", fake.url("compat"), "--frames", "30", "--out", str(tmp_path),
            here=(capsys, monkeypatch))
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert f"unknown model or endpoint at {fake.url('compat')}/chat/completions" in line and len(fake.seen) == 1


def overloaded(n: int) -> list[Step]:
    return [Step("status", 503, {"retry-after-ms": "1"}, {"error": {"message": "overloaded"}}) for _ in range(n)]


def test_cli_three_lost_turns_in_a_row_stop_the_run(fake, tmp_path, capsys, monkeypatch):
    fake.push(*overloaded(3 * 6))  # six tries per turn (the default), three turns
    r = cli("--agent", "compat:m", "--base-url", fake.url("compat"), "--frames", "300", "--out", str(tmp_path),
            "--quiet", here=(capsys, monkeypatch))  # no progress lines: the stop is the one line
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert "3 turns in a row lost to provider errors (--max-failed-turns 3)" in line and "503" in line
    rec = Recording(Path(r.stdout.splitlines()[0]))
    assert rec.summary_record.failed_turns == 3 and len(rec.turn_records) == 3 and len(fake.seen) == 18


def test_cli_a_run_that_never_played_is_not_a_success(fake, tmp_path, capsys, monkeypatch):
    fake.push(*overloaded(400))
    r = cli("--agent", "compat:m", "--base-url", fake.url("compat"), "--frames", "30", "--max-failed-turns", "0",
            "--out", str(tmp_path), "--quiet", here=(capsys, monkeypatch))
    rec = Recording(Path(r.stdout.splitlines()[0]))
    assert rec.complete and rec.summary_record.failed_turns == rec.summary_record.turns > 3
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert "did not really play" in line


def test_cli_negative_max_failed_turns_is_bad_input(tmp_path, capsys, monkeypatch):
    r = cli("--agent", "compat:m", "--base-url", "http://127.0.0.1:9/v1", "--max-failed-turns", "-1",
            "--out", str(tmp_path), here=(capsys, monkeypatch))
    assert r.returncode == 2 and "--max-failed-turns" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def _ctrl_c_as_a_terminal_gives_it() -> None:
    """The child gets SIGINT as a shell in a terminal would give it: handled and unblocked. A child
    inherits an ignored or blocked SIGINT from its parent, and the test process's state depends on
    what ran in it before (threads and libraries of other tests); a user at a terminal has neither."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_cli_ctrl_c_during_a_60s_backoff_stops_at_once(fake, tmp_path):
    fake.push(Step("status", 429, {"retry-after": "60"}, {"error": {"message": "slow", "type": "rate_limit_error"}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS)
    proc = subprocess.Popen([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--agent", "compat:m",
                             "--base-url", fake.url("compat"), "--out", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_ctrl_c_as_a_terminal_gives_it)
    try:
        wait_until(lambda: len(fake.seen) >= 1, 120)
        time.sleep(0.3)  # inside the 60 s wait
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert time.monotonic() - sent < 10  # far below the 60 s backoff, with room for a loaded machine
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    summary = json.loads((Path(out.splitlines()[0]) / "summary.json").read_text())
    assert summary["stopped"] == "interrupted" and len(fake.seen) == 1
