"""`workstation export` round trips: decode what was written and compare it with the recording."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from workstation.store.recording import Recording

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"
SCALE = 3  # a single run's frame is scaled 3x


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workstation", "export", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def decode(path: Path) -> tuple[list[np.ndarray], av.video.stream.VideoStream]:
    with av.open(str(path)) as c:
        st = c.streams.video[0]
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
        return frames, (st.average_rate, st.codec_context.name, st.codec_context.pix_fmt, st.frames)


def known_pixel(rec: Recording, lo: int, hi: int) -> tuple[int, int, int]:
    """(frame, y, x): a pixel inside a uniform 3x3 patch whose colour differs from frame ``lo``'s there."""
    base = rec.frames.rgb(lo).astype(int)
    for k in range(hi - 1, lo, -7):
        now = rec.frames.rgb(k).astype(int)
        idx = rec.frames.indices(k)
        diff = np.abs(now - base).sum(2) > 60
        for y, x in zip(*np.nonzero(diff)):
            if 1 <= y < idx.shape[0] - 1 and 1 <= x < idx.shape[1] - 1 and (idx[y - 1:y + 2, x - 1:x + 2] == idx[y, x]).all():
                return k, int(y), int(x)
    raise AssertionError("no distinctive pixel found")


def test_mp4_decodes_to_the_run_frame_count_at_paper_pace_with_the_frames_drawn(tmp_path):
    out = tmp_path / "run.mp4"
    r = cli(str(SAMPLE), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == str(out) and "900 frames" in r.stdout
    rec = Recording(SAMPLE)
    frames, (rate, codec, pix_fmt, _) = decode(out)
    assert len(frames) == rec.summary_record.frames == 900
    assert rate == 30 and codec == "h264" and pix_fmt == "yuv420p"
    h, w = rec.frames.height, rec.frames.width
    assert frames[0].shape[0] == h * SCALE and frames[0].shape[1] > w * SCALE  # the panel sits beside the frame
    k, y, x = known_pixel(rec, 0, 900)
    got = frames[k][y * SCALE + 1, x * SCALE + 1].astype(int)
    assert np.abs(got - rec.frames.rgb(k)[y, x]).max() <= 8, (k, y, x, got, rec.frames.rgb(k)[y, x])
    assert np.abs(got - rec.frames.rgb(0)[y, x]).max() > 20  # frame k, not a stale frame
    # the whole frame area matches on average (H.264 is lossy, so not to the bit)
    area = frames[450][: h * SCALE, : w * SCALE].reshape(h, SCALE, w, SCALE, 3)[:, 1, :, 1].astype(int)
    assert np.abs(area - rec.frames.rgb(450)).mean() < 1.5


def test_native_pace_and_a_frame_range(tmp_path):
    out = tmp_path / "part.mp4"
    r = cli(str(SAMPLE), "-o", str(out), "--pace", "native", "--from", "300", "--to", "420", "--overlay", "score")
    assert r.returncode == 0, r.stderr
    frames, (rate, *_rest) = decode(out)
    assert len(frames) == 120 and rate == 60
    rec = Recording(SAMPLE)
    k, y, x = known_pixel(rec, 300, 420)
    got = frames[k - 300][y * SCALE + 1, x * SCALE + 1].astype(int)
    assert np.abs(got - rec.frames.rgb(k)[y, x]).max() <= 8


def test_gif_holds_every_frame_of_the_range_exactly(tmp_path):
    out = tmp_path / "clip.gif"
    r = cli(str(SAMPLE), "-o", str(out), "--from", "100", "--to", "190")
    assert r.returncode == 0, r.stderr
    rec = Recording(SAMPLE)
    k, y, x = known_pixel(rec, 100, 190)
    with Image.open(out) as im:
        assert im.n_frames == 90
        durations = []
        for i in range(3):
            im.seek(i)
            durations.append(im.info["duration"])
        assert sum(durations) == 100  # 3 frames per 1/10 s: 30 fps
        im.seek(k - 100)
        assert im.convert("RGB").getpixel((x * SCALE + 1, y * SCALE + 1)) == tuple(rec.frames.rgb(k)[y, x])
        for f in (101, 150, 189):  # every frame drawn whole, to the bit, from the changed rectangles
            im.seek(f - 100)
            h, w = rec.frames.height, rec.frames.width
            area = np.asarray(im.convert("RGB"))[: h * SCALE, : w * SCALE]
            assert (area == np.repeat(np.repeat(rec.frames.rgb(f), SCALE, 0), SCALE, 1)).all()


def test_compare_puts_runs_side_by_side(tmp_path):
    out = tmp_path / "both.mp4"
    r = cli(str(SAMPLE), "-o", str(out), "--compare", str(SAMPLE), "--to", "60")
    assert r.returncode == 0, r.stderr
    frames, _ = decode(out)
    assert len(frames) == 60
    rec = Recording(SAMPLE)
    w = rec.frames.width * SCALE
    left, right = frames[30][:, :w].astype(int), frames[30][:, w + 8:2 * w + 8].astype(int)
    assert np.abs(left - right).mean() < 1.0  # the same run twice: both columns show the same picture


@pytest.mark.parametrize("args, needle", [
    (["/nonexistent/rec", "-o", "{tmp}/x.mp4"], "no recording at /nonexistent/rec"),
    ([str(SAMPLE), "-o", "{tmp}/x.mp4", "--from", "50", "--to", "10"], "bad frame range --from 50 --to 10"),
    ([str(SAMPLE), "-o", "{tmp}/x.mp4", "--to", "5000"], "bad frame range"),
    ([str(SAMPLE), "-o", "{tmp}/x.mp4", "--from", "-3"], "bad frame range"),
    ([str(SAMPLE), "-o", "{tmp}/x.avi"], "must end in .mp4, .gif or .html"),
    ([str(SAMPLE), "-o", "{tmp}/no/such/dir/x.mp4"], "does not exist"),
    ([str(SAMPLE), "-o", "{tmp}/afile/x.gif"], "cannot write"),
    ([str(SAMPLE), "-o", "{tmp}"], "must end in"),
    ([str(SAMPLE), "-o", "{tmp}/x.mp4", "--overlay", "thought,mood"], "bad --overlay mood"),
    ([str(SAMPLE), "-o", "{tmp}/x.mp4", "--pace", "fast"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, needle):
    (tmp_path / "afile").write_text("not a directory")
    r = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not list(tmp_path.glob("*.mp4")) and not list(tmp_path.glob(".*part*"))


def test_native_gif_uses_the_shortest_delay_players_honour(tmp_path):
    out = tmp_path / "fast.gif"
    r = cli(str(SAMPLE), "-o", str(out), "--to", "12", "--pace", "native", "--quiet")
    assert r.returncode == 0 and r.stdout.strip() == str(out), r.stderr
    with Image.open(out) as im:
        assert im.n_frames == 12
        im.seek(5)
        assert im.info["duration"] == 20
