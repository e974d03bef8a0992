"""`inspect view` (Inspect's own viewer, served on 127.0.0.1) opens a log `export --inspect` wrote, in the
headless Chromium the HTML export test uses: the task, the run's input and the frames the model saw, drawn.

Needs inspect-ai (the `inspect` extra), the playwright package and Debian's chromium (see test_export_html.py).
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workstation.store.recording import Recording

pytest.importorskip("inspect_ai")
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _browser() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        if name and (shutil.which(name) or Path(name).is_file()):
            return shutil.which(name) or name
    return None


BROWSER = _browser()
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium found (apt-get install chromium, or set CHROMIUM=path)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_inspect_view_shows_an_exported_run_and_its_frames(tmp_path):
    r = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--seed", "0", "--frames",
                        "60", "--out", str(tmp_path / "recs"), "--quiet"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    rec = Recording(r.stdout.split()[0])
    logs = tmp_path / "logs"
    r = subprocess.run([sys.executable, "-m", "workstation", "export", str(rec.path), "--inspect", str(logs)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    name = next(logs.iterdir()).name
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(logs), "--host",
                               "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "inspect view did not start"
                time.sleep(0.2)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=BROWSER, args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                problems: list[str] = []
                page.on("pageerror", lambda e: problems.append(str(e)))
                page.goto(f"http://127.0.0.1:{port}/#/logs/{name}")
                drawn = ("Array.from(document.images).some(i => i.src.startsWith('data:image/png') && i.complete "
                         "&& i.naturalWidth > 0)")
                until = time.monotonic() + 60  # polled: the viewer's CSP forbids wait_for_function's eval
                while not page.evaluate(drawn):
                    assert time.monotonic() < until, page.inner_text("body")[:500]
                    page.wait_for_timeout(200)
                body = page.inner_text("body")
                assert "atari_workstation/atari" in body and "none/random" in body
                assert f"run {rec.run_id}" in body  # the sample's input
                assert "total_reward" in body and "MODEL CALL" in body.upper()
                shown = page.evaluate("Array.from(document.images).filter(i => i.naturalWidth > 0 && "
                                      "i.getBoundingClientRect().height > 0).map(i => [i.src, i.naturalWidth, "
                                      "i.naturalHeight])")
                first = rec.turn_records[0].prompt["images"][0]  # the frame the model saw on turn 1, as it saw it
                png = "data:image/png;base64," + base64.b64encode(rec.frames.png(first)).decode()
                assert [png, 160, 210] in shown
                assert not problems, problems
            finally:
                browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
