"""Replay public-harness runs through `workstation run` and compare turn by turn.

For each harness run directory given (summary.json + turns.jsonl; no harness data is
kept in this repository), a loopback OpenAI-compatible stand-in (tests/fake_provider.py
on 127.0.0.1) answers turn N with ``thought: ...`` / ``move: [the actions the harness
executed in turn N]``. The real CLI plays against it:

    workstation run --game G --agent compat:standin --base-url http://127.0.0.1:PORT/v1 --frames F

and the recording is compared with the harness's run: per turn the start frame, the
executed actions, and per action the end frame, reward and life loss (and the game
over), then the totals (turns, score, lives lost, frames). Prints "identical" or the
first difference per run, and the wall time of the run against the harness-free
baseline (the same actions through `--agent replay:` of the first recording).

Usage: .venv/bin/python bench/harness_replay.py RUN_DIR [RUN_DIR ...]
Exit status: 0 when every run is identical, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_provider import FakeProvider, FakeUsage, Step
from workstation.game.games import get_game
from workstation.run.importers.atari_bench import first_difference, protocol_of
from workstation.run.importers.harness_run import game_key_of, read_run
from workstation.store.recording import Recording
from workstation.store.records import Summary

WORKSTATION = [sys.executable, "-m", "workstation"]


def _run_cli(args: list[str]) -> tuple[Path, float]:
    t0 = time.perf_counter()
    out = subprocess.run([*WORKSTATION, "run", "--quiet", *args], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"workstation run failed ({out.returncode}): {out.stderr.strip().splitlines()[-1:]}")
    return Path(out.stdout.strip().splitlines()[-1]), dt


def replay(run_dir: Path, fake: FakeProvider, tmp: Path) -> tuple[str, float, float]:
    run = read_run(run_dir)
    game = get_game(game_key_of(run) or "breakout")
    frames = protocol_of(run).frames
    fake.reset()
    for t in run.turns:
        names = ", ".join(game.action_name(a.action_id) for a in t.actions) or "noop"
        fake.push(Step(text=f"thought: harness turn {t.index}\nmove: [{names}]", usage=FakeUsage()))
    rec_path, dt = _run_cli(["--game", game.key, "--agent", "compat:standin", "--base-url", fake.url("compat"),
                             "--frames", str(frames), "--out", str(tmp)])
    rec = Recording(rec_path)
    summary = Summary.from_json(json.loads((rec_path / "summary.json").read_text()))
    diff = first_difference(rec.turns, summary, len(rec.frames), run, game)
    # baseline: the same actions with no HTTP at all (replay of our own recording)
    _, base = _run_cli(["--game", game.key, "--agent", f"replay:{rec_path}", "--frames", str(frames),
                        "--out", str(tmp)])
    return diff or "identical", dt, base


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-2])
        return 2
    fake = FakeProvider()
    status = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for d in argv:
                line, dt, base = replay(Path(d), fake, Path(tmp))
                status |= line != "identical"
                print(f"{d}: {line}  (run {dt:.2f} s through the stand-in, {base:.2f} s replayed without HTTP, "
                      f"ratio {dt / base:.2f}x)", flush=True)
    finally:
        fake.close()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
