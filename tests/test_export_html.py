"""The exported HTML page in a real headless Chromium: loads offline, scrubs, draws the frame and the turn's text.

Needs Debian's ``chromium`` (``./test`` installs it when run as root) and the
``playwright`` Python package (never ``playwright install``: the system browser is used).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workstation.store.recording import Recording
from workstation.studies.export.timeline import build_timeline

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _browser() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        if name and (shutil.which(name) or Path(name).is_file()):
            return shutil.which(name) or name
    return None


sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install playwright)")
BROWSER = _browser()
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium found (apt-get install chromium, or set CHROMIUM=path)")


def export(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "run.html"
    r = subprocess.run([sys.executable, "-m", "workstation", "export", str(SAMPLE), "-o", str(out), *args],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=BROWSER, args=ARGS)
        yield b
        b.close()


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    requests: list[str] = []

    def only_the_file(route):
        requests.append(route.request.url)
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", only_the_file)
    page.goto(path.as_uri())
    page.wait_for_function("document.body.dataset.ready", timeout=30000)
    assert page.evaluate("document.body.dataset.ready") == "1", page.inner_text("body")[:300]
    return page, problems, requests


def scrub(page, frame: int) -> None:
    page.evaluate("f => { const s = document.getElementById('scrub'); s.value = f; s.dispatchEvent(new Event('input')); }", frame)


def pixel(page, run: int, x: int, y: int) -> tuple[int, int, int]:
    return tuple(page.evaluate(
        "([r, x, y]) => Array.from(document.getElementById('frame-' + r).getContext('2d').getImageData(x, y, 1, 1).data)",
        [run, x, y])[:3])


def distinct_pixel(rec: Recording, k: int) -> tuple[int, int]:
    a, b = rec.frames.rgb(k).astype(int), rec.frames.rgb(k - 1).astype(int)
    ys, xs = (abs(a - b).sum(2) > 60).nonzero()
    assert len(ys), f"frame {k} equals frame {k - 1}"
    return int(xs[0]), int(ys[0])


def test_page_loads_offline_scrubs_and_shows_frame_thought_plan_and_prompt(tmp_path, browser):
    out = export(tmp_path)
    assert out.stat().st_size < 2_000_000
    rec = Recording(SAMPLE)
    tl = build_timeline(rec)
    page, problems, requests = open_page(browser, out)
    assert all(u.startswith("file:") for u in requests), requests
    k = 302  # turn 50, first action: the frame after the ball was lost
    x, y = distinct_pixel(rec, k)
    scrub(page, k)
    assert pixel(page, 0, x, y) == tuple(rec.frames.rgb(k)[y, x])
    turn = rec.turn_records[int(tl.turn[k])]
    assert f"frame {k}/900" in page.inner_text("#clock-0") and f"turn {turn.turn}" in page.inner_text("#clock-0")
    assert page.inner_text("#thought-0") == turn.thought
    assert page.inner_text("#plan-0 li.now") == turn.actions[int(tl.action[k])]
    assert f"score {tl.score[k]:g}" in page.inner_text("#score-0")
    assert f"prompt of turn {turn.turn}" in page.inner_text("#prompt-0")
    images = len(turn.prompt["images"])
    assert page.locator("#prompt-0 canvas").count() == images
    page.keyboard.press("ArrowRight")  # one frame on, by key
    assert page.evaluate("window.shownFrame") == k + 1
    assert pixel(page, 0, x, y) == tuple(rec.frames.rgb(k + 1)[y, x])
    scrub(page, 0)
    assert pixel(page, 0, x, y) == tuple(rec.frames.rgb(0)[y, x])
    page.keyboard.press("Space")  # play: the frame moves on (how fast is not checked)
    page.wait_for_function("window.shownFrame > 3", timeout=30000)
    page.keyboard.press("Space")
    stopped = page.evaluate("window.shownFrame")
    page.wait_for_timeout(200)
    assert page.evaluate("window.shownFrame") == stopped
    assert problems == []


def test_comparison_page_shows_the_runs_side_by_side_within_the_range(tmp_path, browser):
    out = export(tmp_path, "--compare", str(SAMPLE), "--from", "100", "--to", "400")
    page, problems, _ = open_page(browser, out)
    assert page.locator("canvas.frame").count() == 2
    assert page.evaluate("[+document.getElementById('scrub').min, +document.getElementById('scrub').max]") == [100, 399]
    rec = Recording(SAMPLE)
    x, y = distinct_pixel(rec, 350)
    scrub(page, 350)
    want = tuple(rec.frames.rgb(350)[y, x])
    assert pixel(page, 0, x, y) == want and pixel(page, 1, x, y) == want
    box0, box1 = page.locator("#frame-0").bounding_box(), page.locator("#frame-1").bounding_box()
    assert box1["x"] >= box0["x"] + box0["width"]  # side by side
    assert problems == []
