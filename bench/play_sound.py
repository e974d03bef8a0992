"""What the play window's sound costs: the emulator with and without ``sound_obs``, and the conversion.

1. 900 budget frames of Seaquest through ``GameClock.step_frame`` (the runs' path), sound
   off (the baseline, what every run does) against sound on with ``audio()`` read each frame
   (what ``play --window`` does), best of ``--repeats``; frames a second and the ratio.
2. ``FrameAudio.convert`` per frame at 48 kHz, native and paper pace, against the frame's
   time on screen (1/60 s, 1/30 s): the share of real time the conversion takes.

    .venv/bin/python bench/play_sound.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from screens.input.sound import FrameAudio
from workstation.game.clock import GameClock
from workstation.game.games import FPS_NATIVE, FPS_PAPER, get_game
from workstation.game.protocol import Protocol

FRAMES = 900


def emulate(sound: bool) -> tuple[float, list]:
    clock = GameClock(get_game("seaquest"), Protocol(frames=FRAMES), seed=0, sound=sound)
    clock.start()
    samples = []
    t = time.perf_counter()
    for i in range(FRAMES):
        if clock.game_over:
            clock.new_game()
        if clock.done:
            break
        clock.step_frame((i // 3) % 6)
        if sound:
            samples.append(clock.audio())
    dt = time.perf_counter() - t
    clock.close()
    return dt, samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    off = min(emulate(False)[0] for _ in range(args.repeats))
    runs = [emulate(True) for _ in range(args.repeats)]
    on = min(r[0] for r in runs)
    samples = runs[0][1]
    print(f"emulator, {FRAMES} frames: sound off {FRAMES / off:,.0f} frames/s (baseline), "
          f"sound on + audio() {FRAMES / on:,.0f} frames/s, ratio {on / off:.2f}x the time")
    for name, fps in (("native", FPS_NATIVE), ("paper", FPS_PAPER)):
        audio = FrameAudio(48000, fps)
        t = time.perf_counter()
        for s in samples:
            audio.convert(s)
        per = (time.perf_counter() - t) / len(samples)
        print(f"convert at 48 kHz, {name} pace: {per * 1e6:.0f} us a frame = {per * fps:.2%} of the frame's "
              f"{1000 / fps:.1f} ms on screen")


if __name__ == "__main__":
    main()
