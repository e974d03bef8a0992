"""Regenerate docs/export.png and docs/export_compare.png: one frame of `workstation export` videos.

Exports the committed sample run (and, for the comparison, a second random run started
with `--start noops:30`), decodes the MP4s with PyAV and saves frame 302 of each.

    .venv/bin/python docs/make_export_frame.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import av

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample" / "breakout-random-s0"
FRAME = 302


def ws(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "workstation", *args], check=True, capture_output=True, text=True,
                          cwd=ROOT).stdout


def save_frame(mp4: Path, png: Path) -> None:
    with av.open(str(mp4)) as c:
        for i, frame in enumerate(c.decode(video=0)):
            if i == FRAME:
                frame.to_image().save(png, optimize=True)
                return


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ws("export", str(SAMPLE), "-o", str(tmp / "one.mp4"), "--quiet")
        save_frame(tmp / "one.mp4", ROOT / "docs" / "export.png")
        other = ws("run", "--game", "breakout", "--agent", "random", "--seed", "1", "--start", "noops:30",
                   "--out", str(tmp), "--quiet").strip().splitlines()[0]
        ws("export", str(SAMPLE), "--compare", other, "-o", str(tmp / "two.mp4"), "--quiet")
        save_frame(tmp / "two.mp4", ROOT / "docs" / "export_compare.png")
    print("wrote docs/export.png and docs/export_compare.png")


if __name__ == "__main__":
    main()
