"""Opt-in: a real model server that no one here wrote (vLLM, llama.cpp's llama-server, Ollama,
`transformers serve`), serving a vision-language model, end to end: `doctor`, then a full 900-frame
`compat:` run with images, verified. See docs/local-models.md for serving a tiny VLM with random weights.

Skips unless WORKSTATION_REAL_SERVER names the server's /v1 URL; WORKSTATION_REAL_MODEL names the
model (default: the one the server lists first); WORKSTATION_REAL_FRAMES shortens the run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workstation.cli import main
from workstation.store.recording import Recording

URL = os.environ.get("WORKSTATION_REAL_SERVER", "")
pytestmark = pytest.mark.skipif(not URL, reason="no real model server: set WORKSTATION_REAL_SERVER=http://HOST:PORT/v1 "
                                "(and WORKSTATION_REAL_MODEL) to run it (docs/local-models.md)")


def served_model() -> str:
    name = os.environ.get("WORKSTATION_REAL_MODEL")
    if name:
        return name
    import openai

    client = openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "none", base_url=URL, max_retries=0)
    try:
        return str(next(iter(client.models.list())).id)
    finally:
        client.close()


def test_doctor_then_a_full_run_with_images(tmp_path, capsys):
    model = served_model()
    code = main(["doctor", "--base-url", URL, "--model", model, "--history", "1", "--reward-history", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ok    image:" in out
    frames = os.environ.get("WORKSTATION_REAL_FRAMES", "900")
    code = main(["run", "--game", "breakout", "--agent", f"compat:{model}", "--base-url", URL, "--frames", frames,
                 "--history", "1", "--reward-history", "1", "--max-output-tokens", "200", "--timeout", "600",
                 "--max-failed-turns", "0", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    rec = Recording(Path(out.splitlines()[0]))
    assert rec.complete and rec.summary_record.frames == int(frames)
    assert all(t.attempts and t.attempts[-1]["ok"] for t in rec.turn_records)  # every call answered (noise or not)
    assert main(["verify", str(rec.path)]) == 0
