"""Cost of recording: a 900-frame random Breakout run, bare and recorded.

Run: ``.venv/bin/python bench/framestore.py [--game Breakout] [--frames 900] [--seed 0]``.
Prints stepping time bare and with the frame store (wall clock and this
process's CPU time, which holds steadier when other work shares the machine),
their ratio, ``append`` alone, bytes on disk, random-access read time and PNG
encode time. Each figure is the best of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import ale_py
import gymnasium
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from workstation.store.framestore import (
    DATA_FILE,
    INDEX_FILE,
    PALETTE_FILE,
    RAM_FILE,
    FrameReader,
    FrameWriter,
    encode_png,
)


def make_env(game: str) -> gymnasium.Env:
    gymnasium.register_envs(ale_py)
    return gymnasium.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0, full_action_space=False)


def run(env: gymnasium.Env, frames: int, seed: int, writer: FrameWriter | None) -> tuple[float, float]:
    """Step ``frames`` random frames, recording each into ``writer`` if given; (wall, CPU) seconds."""
    rng = random.Random(seed)
    n_actions = env.action_space.n
    ale = env.unwrapped.ale
    obs, _ = env.reset(seed=seed)
    wall, cpu = time.perf_counter(), time.process_time()
    if writer is not None:
        writer.append(ale.getScreen(), obs, ale.getRAM())
    for step in range(frames):
        obs, _, terminated, truncated, _ = env.step(rng.randrange(n_actions))
        if terminated or truncated:
            obs, _ = env.reset()
        if writer is not None:
            writer.append(ale.getScreen(), obs, ale.getRAM())
            if step % 3 == 2:  # the engine flushes once per turn; a turn has at least one 3-frame action
                writer.flush()
    if writer is not None:
        writer.close()
    return time.perf_counter() - wall, time.process_time() - cpu


def collect(env: gymnasium.Env, frames: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The (screen, rgb, ram) of every frame of the same run, for timing ``append`` alone."""
    rng = random.Random(seed)
    ale = env.unwrapped.ale
    obs, _ = env.reset(seed=seed)
    out = [(ale.getScreen(), obs, ale.getRAM())]
    for _ in range(frames):
        obs, _, terminated, truncated, _ = env.step(rng.randrange(env.action_space.n))
        if terminated or truncated:
            obs, _ = env.reset()
        out.append((ale.getScreen(), obs, ale.getRAM()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="Breakout")
    ap.add_argument("--frames", type=int, default=900)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    env = make_env(args.game)
    height = env.observation_space.shape[0]
    frames = args.frames + 1
    bare, recorded, append = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            bare.append(run(env, args.frames, args.seed, None))
            recorded.append(run(env, args.frames, args.seed, FrameWriter(Path(tmp) / f"r{r}", height)))
        run_frames = collect(env, args.frames, args.seed)
        for r in range(args.repeats):
            writer = FrameWriter(Path(tmp) / f"a{r}", height)
            t = time.perf_counter()
            for screen, rgb, ram in run_frames:
                writer.append(screen, rgb, ram)
            append.append(time.perf_counter() - t)
            writer.close()

        store = Path(tmp) / "r0"
        sizes = {name: (store / name).stat().st_size for name in (INDEX_FILE, DATA_FILE, PALETTE_FILE, RAM_FILE)}
        reader = FrameReader(store)
        n = len(reader)
        order = [int(i) for i in np.random.default_rng(1).permutation(n)]
        t = time.perf_counter()
        for i in order:
            reader._frames.clear()  # no cache hits: every read decodes from its keyframe
            reader.indices(i)
        read_ms = (time.perf_counter() - t) / n * 1e3
        t = time.perf_counter()
        for i in order[:200]:
            reader.rgb(i)
        rgb_ms = (time.perf_counter() - t) / 200 * 1e3
        decoded = [reader.indices(i) for i in order[:200]]
        t = time.perf_counter()
        pngs = [encode_png(f, reader._lut) for f in decoded]
        png_ms = (time.perf_counter() - t) / 200 * 1e3

    def best(runs: list, k: int) -> float:
        return min(r[k] for r in runs)

    print(f"{args.game}: {frames} frames, best of {args.repeats}; times are wall clock / CPU time of this process")
    for label, runs in (("bare stepping       ", bare), ("stepping + recording", recorded)):
        w, c = best(runs, 0), best(runs, 1)
        print(f"  {label} {w * 1e3:6.1f} / {c * 1e3:6.1f} ms  ({w / frames * 1e6:.0f} / {c / frames * 1e6:.0f} us/frame)")
    print(f"  ratio                {best(recorded, 0) / best(bare, 0):6.2f} / {best(recorded, 1) / best(bare, 1):6.2f}x")
    extra = [(best(recorded, k) - best(bare, k)) / frames * 1e6 for k in (0, 1)]
    print(f"  recording per frame  {extra[0]:6.1f} / {extra[1]:6.1f} us  (getScreen + getRAM + append + flushes)")
    print(f"  append alone         {min(append) / frames * 1e6:6.1f} us/frame (same frames, tight loop)")
    print(f"  frames on disk       {sizes[DATA_FILE] + sizes[INDEX_FILE] + sizes[PALETTE_FILE]:7d} bytes"
          f"  (data {sizes[DATA_FILE]}, index {sizes[INDEX_FILE]}, palette {sizes[PALETTE_FILE]})")
    print(f"  ram on disk          {sizes[RAM_FILE]:7d} bytes")
    print(f"  total                {sum(sizes.values()):7d} bytes")
    print(f"  random access read   {read_ms:7.3f} ms/frame (palette values, cold cache)")
    print(f"  rgb from store       {rgb_ms:7.3f} ms/frame")
    print(f"  png encode           {png_ms:7.3f} ms/frame ({sum(map(len, pngs)) // len(pngs)} bytes each)")


if __name__ == "__main__":
    main()
