"""The slowest test files and tests: run the given test files one at a time, each in its own pytest process.

    python bench/test_durations.py tests/test_batch.py tests/test_bad_input_corpus.py
    python bench/test_durations.py --top 15 tests/test_*.py      # every file (minutes; not on a shared machine)

Each file runs alone (``pytest -n 0 -q --durations=N``) so that its wall time is its own: the file's total
(collection and module fixtures included) and its slowest phases (setup, call, teardown of single tests),
then the files sorted slowest first. Measure on idle cores: the figures are wall-clock time.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DURATION = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S+)")
RESULT = re.compile(r"(\d+) (passed|failed|skipped|errors?)")


def run_file(path: str, top: int) -> tuple[float, int, list[tuple[float, str, str]], str]:
    """(wall seconds, exit code, [(seconds, phase, test id)], pytest's last line) of one file."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "pytest", path, "-n", "0", "-o", "addopts=-rfEs -p no:cacheprovider", "-q",
           f"--durations={top}", "--durations-min=0"]  # one -q (the project's addopts has another): a summary
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    slow = []
    for line in done.stdout.splitlines():
        m = DURATION.match(line)
        if m:
            slow.append((float(m.group(1)), m.group(2), m.group(3)))
    last = next((ln.strip("= ") for ln in reversed(done.stdout.splitlines()) if RESULT.search(ln)), "")
    return wall, done.returncode, slow, last


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="test files (tests/test_x.py)")
    ap.add_argument("--top", type=int, default=5, help="slowest tests shown per file (default 5)")
    a = ap.parse_args(argv)
    totals: list[tuple[float, str, str]] = []
    for f in a.files:
        wall, code, slow, last = run_file(f, a.top)
        totals.append((wall, f, last))
        print(f"\n{f}: {wall:.1f} s wall ({last}){'' if code in (0, 5) else f'; exit {code}'}")
        for secs, phase, test in slow[:a.top]:
            print(f"  {secs:7.2f} s  {phase:<8} {test.split('::', 1)[-1]}")
    print("\nslowest files")
    for wall, f, last in sorted(totals, reverse=True):
        print(f"  {wall:7.1f} s  {f}  ({last})")
    print(f"  {sum(w for w, _, _ in totals):7.1f} s  in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
