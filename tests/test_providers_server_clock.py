"""--clock latency:server: the latency clock charges the inference time the server reports (llama.cpp's
``timings``), falls back to wall time for a reply without it, and the recording says which was charged.
Whole runs through the CLI with the real openai SDK against the fake provider; each one verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_provider import ServerShape, llamacpp_like
from workstation.cli import main
from workstation.game.protocol import Protocol, ProtocolError
from workstation.run.options import spec_from_values
from workstation.store.recording import Recording


def run(fake, tmp_path: Path, capsys, monkeypatch, clock: str) -> Recording:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["run", "--game", "breakout", "--agent", "compat:local", "--base-url", fake.url("compat"),
                 "--frames", "120", "--clock", clock, "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    rec = Recording(Path(out.splitlines()[0]))
    assert rec.complete
    assert main(["verify", str(rec.path)]) == 0
    capsys.readouterr()
    return rec


def test_server_time_is_charged(fake, tmp_path, capsys, monkeypatch):
    fake.shape = llamacpp_like(prompt_ms=300.0, predicted_ms=400.5)  # 0.7005 s: 21 NOOP frames on the paper clock
    rec = run(fake, tmp_path, capsys, monkeypatch, "latency:server")
    assert rec.manifest_record.protocol["clock"] == "latency:server"
    assert rec.manifest_record.agent["options"]["clock"] == "server"
    assert rec.turn_records
    for turn in rec.turn_records:
        last = turn.attempts[-1]
        assert last["server_s"] == pytest.approx(0.7005) and last["charged"] == "server" and last["wall_s"] >= 0
        assert turn.latency_s == pytest.approx(0.7005)
        assert turn.noop_frames == 21 or turn is rec.turn_records[-1]  # the budget may cut the last turn's NOOPs


def test_no_timings_falls_back_to_wall_time_and_says_so(fake, tmp_path, capsys, monkeypatch):
    fake.shape = ServerShape()
    rec = run(fake, tmp_path, capsys, monkeypatch, "latency:server")
    for turn in rec.turn_records:
        last = turn.attempts[-1]
        assert last["charged"] == "wall" and "server_s" not in last
        assert turn.latency_s == pytest.approx(last["wall_s"], abs=1e-3)


def test_wall_clock_records_server_time_without_charging_it(fake, tmp_path, capsys, monkeypatch):
    fake.shape = llamacpp_like()
    rec = run(fake, tmp_path, capsys, monkeypatch, "latency")
    assert rec.manifest_record.protocol["clock"] == "latency" and "clock" not in rec.manifest_record.agent["options"]
    last = rec.turn_records[0].attempts[-1]
    assert last["server_s"] == pytest.approx(0.5008, abs=1e-4) and "charged" not in last and "wall_s" not in last


def test_protocol_keeps_latency_server_as_two_fields():
    p = Protocol(clock="latency:server")
    assert (p.clock, p.clock_source) == ("latency", "server")
    assert p.to_json()["clock"] == "latency:server" and "clock_source" not in p.to_json()
    assert Protocol.from_json(p.to_json()) == p
    assert "clock_source" not in Protocol(clock="latency").to_json()
    assert Protocol(clock="paused", clock_source="server").clock_source == "wall"  # only latency charges time
    assert p.changed() == {"clock": "latency:server"}
    with pytest.raises(ProtocolError) as e:
        Protocol(clock="server")
    assert e.value.field == "clock" and "latency:server" in str(e.value)


def test_spec_round_trip_and_agent_options():
    spec = spec_from_values({"game": "breakout", "agent": "compat:m", "base_url": "http://127.0.0.1:1/v1",
                             "clock": "latency:server"})
    assert spec.provider_options.clock == "server"
    assert spec.with_values(frames=30).protocol.clock_source == "server"
    assert spec.with_values(clock="paused").provider_options.clock == "wall"
    plain = spec_from_values({"game": "breakout", "agent": "compat:m", "base_url": "http://127.0.0.1:1/v1"})
    assert plain.provider_options.to_json() == {k: v for k, v in spec.provider_options.to_json().items()
                                                if k != "clock"}


def test_bad_clock_is_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "--game", "breakout", "--clock", "latency:gpu"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.splitlines()) == 1 and "latency:server" in err
