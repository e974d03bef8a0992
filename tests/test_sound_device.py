"""The play window's sound through a real PortAudio stream: ALSA's null device, no sound card.

In its own process (PortAudio reads the ALSA configuration once, when sounddevice is
imported), with ``HOME`` pointing at an ``.asoundrc`` whose default device is ``null``:
the real ``open_output_stream`` opens it, PortAudio's own thread calls our callback, and
every sample of the real emulator's frames is pulled, in order. (The null device pulls as
fast as it can, so the test waits for the queue to empty; no speed is asserted.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import json, time
    import numpy as np
    from screens.input.sound import FrameAudio, GameSound
    from workstation.game.clock import GameClock
    from workstation.game.games import get_game
    from workstation.game.protocol import Protocol

    class Counting(GameSound):
        pulled = []
        def _callback(self, outdata, frames, time, status):
            super()._callback(outdata, frames, time, status)
            if np.any(outdata):
                self.pulled.append(outdata[:, 0].copy())

    notes = []
    sound = Counting({fps}, notes.append)
    if not sound.playing:
        print(json.dumps({{"notes": notes}}))
        raise SystemExit(0)
    rate = sound._audio.rate
    reference = FrameAudio(rate, {fps})
    clock = GameClock(get_game("seaquest"), Protocol(), seed=0, sound=True)
    clock.start()
    expected = []
    for i in range(60):
        clock.step_frame((i // 3) % 6)
        samples = clock.audio()
        sound.frame(samples)
        expected.append(reference.convert(samples))
        if i % 3 == 2:  # one slot's frames, then the device plays them
            end = time.monotonic() + 10
            while len(sound._fifo) and time.monotonic() < end:
                time.sleep(0.001)
    played = np.concatenate(sound.pulled) if sound.pulled else np.zeros(0, np.float32)
    want = np.concatenate(expected)
    sound.close()
    print(json.dumps({{"notes": notes, "rate": rate, "left": len(sound._fifo),
                      "same": bool(np.array_equal(played[played != 0], want[want != 0])),
                      "nonzero": int(np.count_nonzero(want))}}))
""")


@pytest.mark.parametrize("fps", [60, 30])
def test_a_real_portaudio_stream_pulls_every_sample_in_order(tmp_path, fps):
    try:
        import sounddevice  # noqa: F401
    except ImportError:
        pytest.skip("sounddevice is not installed (the window extra)")
    except OSError:
        pytest.skip("the PortAudio library is missing (apt install libportaudio2)")
    (tmp_path / ".asoundrc").write_text("pcm.!default {\n    type null\n}\n")
    env = dict(os.environ, HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(fps=fps)], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result.get("rate") is None:
        pytest.skip(f"no ALSA null device here: {result['notes']}")
    assert result["notes"] == [] and result["left"] == 0
    assert result["nonzero"] > 1000 and result["same"]  # every sound sample, in frame order
