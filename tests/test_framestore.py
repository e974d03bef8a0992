"""The frame store against real emulator frames: exact round trips, random access, crashes."""

from __future__ import annotations

import io
import random
import threading
from functools import cache
from pathlib import Path

import ale_py
import gymnasium
import numpy as np
import pytest
from PIL import Image

from workstation.store.framestore import (
    DATA_FILE,
    DELTA,
    INDEX_FILE,
    KEY,
    PALETTE_FILE,
    RAM_FILE,
    SAME,
    SMALL_DELTA,
    FrameReader,
    FrameStoreError,
    FrameWriter,
)

gymnasium.register_envs(ale_py)

Frame = tuple[np.ndarray, np.ndarray, np.ndarray]  # screen, rgb, ram


@cache
def play(game: str, n: int = 300, seed: int = 0) -> tuple[Frame, ...]:
    """``n`` frames of a random game: palette values, RGB observation and RAM of each."""
    env = gymnasium.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0, full_action_space=False)
    ale = env.unwrapped.ale
    rng = random.Random(seed)
    obs, _ = env.reset(seed=seed)
    frames = [(ale.getScreen(), obs, ale.getRAM())]
    while len(frames) < n:
        obs, _, terminated, truncated, _ = env.step(rng.randrange(env.action_space.n))
        if terminated or truncated:
            obs, _ = env.reset()
        frames.append((ale.getScreen(), obs, ale.getRAM()))
    env.close()
    return tuple(frames)


def write(directory: Path, frames: tuple[Frame, ...]) -> FrameWriter:
    writer = FrameWriter(directory, frames[0][0].shape[0])
    for screen, rgb, ram in frames:
        writer.append(screen, rgb, ram)
    return writer


def same_as(store, frames: tuple[Frame, ...], every: int = 1) -> None:
    assert len(store) == len(frames)
    for i in range(0, len(frames), every):
        screen, rgb, ram = frames[i]
        assert np.array_equal(store.indices(i), screen), f"frame {i}"
        assert np.array_equal(store.rgb(i), rgb), f"frame {i}"
        assert np.array_equal(store.ram(i), ram), f"frame {i}"


def decode_png(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


@pytest.mark.parametrize("game", ["Breakout", "Pacman", "Riverraid"])
def test_round_trip_is_exact(tmp_path, game):
    frames = play(game)
    writer = write(tmp_path, frames)
    same_as(writer, frames)  # the live writer serves every frame written so far
    writer.close()
    reader = FrameReader(tmp_path)
    assert (reader.height, reader.width) == frames[0][0].shape
    same_as(reader, frames)
    for i in (0, 1, 77, 150, len(frames) - 1):
        assert np.array_equal(decode_png(reader.png(i)), frames[i][1])
        assert reader.png(i) == writer.png(i)


def test_palette_is_learned_from_the_observations(tmp_path):
    frames = play("Riverraid")
    write(tmp_path, frames).close()
    values = np.concatenate([screen.ravel() for screen, _, _ in frames])
    colours = np.concatenate([rgb.reshape(-1, 3) for _, rgb, _ in frames])
    lut = np.zeros((256, 3), np.uint8)
    lut[values] = colours
    assert np.array_equal(lut[values], colours)  # ALE maps each value to one colour
    expected = {int(v): tuple(int(c) for c in lut[v]) for v in np.unique(values)}
    assert FrameReader(tmp_path).palette() == expected
    assert (tmp_path / PALETTE_FILE).stat().st_size == 4 * len(expected)  # each value stored once


def test_random_access_decodes_every_frame_from_its_keyframe(tmp_path):
    # how fast: bench/framestore.py (no test depends on the machine's speed)
    frames = play("Breakout")
    write(tmp_path, frames).close()
    reader = FrameReader(tmp_path)
    order = list(range(len(frames)))
    random.Random(1).shuffle(order)
    for i in order:
        reader._frames.clear()  # every read decodes from its keyframe
        assert np.array_equal(reader.indices(i), frames[i][0])


@pytest.mark.parametrize("game, bytes_per_frame", [("Breakout", 150), ("Pacman", 200)])
def test_frames_are_compact_and_keyframes_periodic(tmp_path, game, bytes_per_frame):
    frames = play(game)
    writer = write(tmp_path, frames)
    writer.close()
    assert (tmp_path / DATA_FILE).stat().st_size < bytes_per_frame * len(frames)  # raw: 33,600+ per frame
    assert (tmp_path / RAM_FILE).stat().st_size == 128 * len(frames)
    kinds = writer._kinds
    assert kinds[0] == KEY and SMALL_DELTA in kinds and SAME in kinds
    assert game != "Pacman" or DELTA in kinds
    deltas_since_key = 0
    for kind in kinds:
        deltas_since_key = 0 if kind == KEY else deltas_since_key + (kind in (DELTA, SMALL_DELTA))
        assert deltas_since_key <= 30


def test_identical_frames_cost_nothing(tmp_path):
    screen, rgb, ram = play("Breakout")[100]
    writer = FrameWriter(tmp_path, 210)
    for _ in range(200):
        writer.append(screen, rgb, ram)
    writer.flush()
    assert writer._kinds[1:] == [SAME] * 199
    assert (tmp_path / DATA_FILE).stat().st_size < 2_000  # one keyframe
    assert writer.png(3) is writer.png(150)  # same content, one cached encoding
    writer.close()
    assert np.array_equal(FrameReader(tmp_path).rgb(199), rgb)


def test_writer_keeps_memory_bounded(tmp_path):
    frames = play("Riverraid")
    writer = write(tmp_path, frames)
    assert len(writer._frames) <= 64
    same_as(writer, frames, every=7)  # older frames come back from disk
    writer.close()


def test_writer_copies_the_screen(tmp_path):
    screen, rgb, ram = play("Breakout")[50]
    buffer = screen.copy()
    writer = FrameWriter(tmp_path, 210)
    writer.append(buffer, rgb, ram)
    buffer[:] = 0
    assert np.array_equal(writer.indices(0), screen)


def test_killed_writer_leaves_a_readable_prefix(tmp_path):
    frames = play("Breakout")
    write(tmp_path, frames).close()
    index = (tmp_path / INDEX_FILE).read_bytes()
    data = (tmp_path / DATA_FILE).read_bytes()
    ram = (tmp_path / RAM_FILE).read_bytes()
    reader = FrameReader(tmp_path)
    cut = next(i for i in range(200, 260) if reader._kinds[i] in (DELTA, SMALL_DELTA))
    offset, length = reader._spans[cut]
    (tmp_path / DATA_FILE).write_bytes(data[: offset + length // 2])  # mid-block
    (tmp_path / INDEX_FILE).write_bytes(index[: 16 + 16 * 280 + 7])  # mid-record
    (tmp_path / RAM_FILE).write_bytes(ram[: 128 * 290 + 5])
    reader = FrameReader(tmp_path)
    assert len(reader) == cut
    same_as(reader, frames[:cut])
    (tmp_path / RAM_FILE).write_bytes(ram[: 128 * 100 + 64])  # RAM shorter still
    assert reader.refresh() == 100


def test_reader_sees_frames_flushed_later(tmp_path):
    frames = play("Breakout")
    writer = FrameWriter(tmp_path, 210)
    assert len(FrameReader(tmp_path)) == 0
    for screen, rgb, ram in frames[:120]:
        writer.append(screen, rgb, ram)
    writer.flush()
    reader = FrameReader(tmp_path)
    assert len(reader) == 120
    for screen, rgb, ram in frames[120:]:
        writer.append(screen, rgb, ram)
    writer.flush()
    assert reader.refresh() == len(frames)
    same_as(reader, frames, every=11)
    writer.close()


def test_branch_copies_the_prefix(tmp_path):
    frames = play("Pacman")
    write(tmp_path / "parent", frames).close()
    parent = FrameReader(tmp_path / "parent")
    child = FrameWriter.branch(tmp_path / "child", parent, 123)
    assert len(child) == 123
    other = play("Pacman", seed=5)
    for screen, rgb, ram in other[:40]:
        child.append(screen, rgb, ram)
    child.close()
    same_as(FrameReader(tmp_path / "child"), frames[:123] + other[:40])
    with pytest.raises(FrameStoreError, match="holds 300"):
        FrameWriter.branch(tmp_path / "bad", parent, 301)


def test_errors(tmp_path):
    with pytest.raises(FrameStoreError, match="does not exist"):
        FrameReader(tmp_path / "nowhere")
    assert len(FrameReader(tmp_path)) == 0  # no index yet: an empty store
    writer = FrameWriter(tmp_path, 210)
    with pytest.raises(FrameStoreError, match="already holds a frame store"):
        FrameWriter(tmp_path, 210)
    screen, rgb, ram = play("Breakout")[0]
    with pytest.raises(ValueError, match="210x160"):
        writer.append(screen[:200], rgb, ram)
    with pytest.raises(ValueError, match="128"):
        writer.append(screen, rgb, ram[:64])
    writer.append(screen, rgb, ram)
    with pytest.raises(IndexError, match="holds 1 frames"):
        writer.rgb(1)
    writer.close()
    with pytest.raises(FrameStoreError, match="closed"):
        writer.append(screen, rgb, ram)
    (tmp_path / INDEX_FILE).write_bytes(b"PNG!" + bytes(12))
    with pytest.raises(FrameStoreError, match="not a frame index"):
        FrameReader(tmp_path)


def test_reads_from_another_thread_while_appending(tmp_path):
    frames = play("Riverraid")
    writer = FrameWriter(tmp_path, 210)
    errors: list[str] = []
    done = threading.Event()

    def reader() -> None:
        rng = random.Random(2)
        while not done.is_set():
            n = len(writer)
            if n:
                i = rng.randrange(n)
                if not np.array_equal(decode_png(writer.png(i)), frames[i][1]):
                    errors.append(f"png {i}")
                if not np.array_equal(writer.ram(i), frames[i][2]):
                    errors.append(f"ram {i}")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for k, (screen, rgb, ram) in enumerate(frames):
            writer.append(screen, rgb, ram)
            if k % 3 == 2:
                writer.flush()
    finally:
        done.set()
        thread.join()
    assert errors == []
    writer.close()


def test_damaged_block_is_a_clear_error(tmp_path):
    frames = play("Pacman")
    write(tmp_path, frames).close()
    data = bytearray((tmp_path / DATA_FILE).read_bytes())
    data[5:40] = bytes(35)  # inside the first keyframe
    (tmp_path / DATA_FILE).write_bytes(bytes(data))
    with pytest.raises(FrameStoreError, match="frame 3 is damaged"):
        FrameReader(tmp_path).indices(3)


def test_a_new_screen_is_stored_as_a_keyframe(tmp_path):
    breakout, riverraid = play("Breakout")[150], play("Riverraid")[150]
    writer = FrameWriter(tmp_path, 210)
    for screen, rgb, ram in (breakout, riverraid, breakout):
        writer.append(screen, rgb, ram)
    assert writer._kinds == [KEY, KEY, KEY]
    assert np.array_equal(writer.rgb(1), riverraid[1])


def test_a_cached_png_is_not_decoded_again(tmp_path, monkeypatch):
    """A prompt's history images come from the PNG cache without decoding their frames again."""
    frames = play("Breakout", 60)
    writer = write(tmp_path, frames)
    writer.limit_caches(frames=1, pngs=16)  # a batch run's lean caches: the decoded frame is long gone
    first = [writer.png(i) for i in range(40, 50)]
    decoded = []
    real = type(writer)._indices
    monkeypatch.setattr(type(writer), "_indices", lambda self, i: decoded.append(i) or real(self, i))
    assert [writer.png(i) for i in range(40, 50)] == first and decoded == []
    assert np.array_equal(decode_png(writer.png(55)), frames[55][1]) and decoded == [55]  # new: decoded once
    writer.close()
