"""Real Atari frames for the frame view's benchmark and tests: a game played at random in the ALE."""

from __future__ import annotations

import numpy as np
from ale_py import ALEInterface, LoggerMode, roms


def random_frames(rom: str, count: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` RGB frames of ``rom`` played at random, one every second emulator frame (30 fps)."""
    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setInt("random_seed", seed)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(roms.get_rom_path(rom))
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(seed)
    frames = []
    for _ in range(count):
        if ale.game_over():
            ale.reset_game()
        action = actions[rng.integers(len(actions))]
        ale.act(action)
        ale.act(action)
        frames.append(ale.getScreenRGB())
    return frames
