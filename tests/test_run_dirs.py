"""Run folders are named by run id and claimed atomically: runs started together never collide."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

from workstation.game.games import get_game
from workstation.run.start import new_run_dir
from workstation.store.recording import Recording

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def _claim(out: str, barrier, queue) -> None:
    barrier.wait()  # every process asks for the same name at the same moment
    queue.put(str(new_run_dir(Path(out), get_game("breakout"), "random", 0, run_id="0123456789abcdef")))


def test_folders_claimed_at_the_same_moment_are_all_different(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    n = 6
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_claim, args=(str(tmp_path), barrier, queue)) for _ in range(n)]
    for p in procs:
        p.start()
    paths = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(set(paths)) == n
    names = sorted(Path(p).name for p in paths)
    assert names[0] == "breakout-random-s0-01234567"
    assert set(names[1:]) == {f"breakout-random-s0-01234567-{i}" for i in range(2, n + 1)}
    assert all(Path(p).is_dir() and not any(Path(p).iterdir()) for p in paths)


def test_two_runs_of_one_spec_started_together_both_succeed(tmp_path):
    cmd = [sys.executable, "-m", "workstation", "run", "--game", "breakout", "--seed", "0", "--frames", "30",
           "--out", str(tmp_path), "--quiet"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    paths = [Path(o.strip().splitlines()[0]) for o, _ in outs]
    assert paths[0] != paths[1]
    recs = [Recording(p) for p in paths]
    run_id = recs[0].manifest_record.run_id
    assert recs[1].manifest_record.run_id == run_id  # the same spec: the same run id
    assert all(r.complete and run_id[:8] in r.path.name for r in recs)
    assert all(r.path.name.startswith("breakout-random-s0-") for r in recs)


def test_a_replay_and_a_branch_name_say_what_they_are(tmp_path):
    game = get_game("pacman")
    a = new_run_dir(tmp_path, game, "replay:/some/long/path/to/a/recording", 3, run_id="feedfacecafebeef")
    b = new_run_dir(tmp_path, game, "openai:gpt-5.1-branch-t4", 3, run_id="feedfacecafebeef")
    assert a.name == "pacman-replay-s3-feedface" and b.name == "pacman-openai-gpt-5.1-branch-t4-s3-feedface"
