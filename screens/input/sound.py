"""The game's sound in the play window: ale-py's samples, frame by frame, to an audio device.

What the emulator gives (``GameClock(sound=True)``, ale-py 0.12's ``sound_obs``): for
every emulated frame, ``SAMPLES_PER_FRAME`` (512) unsigned 8-bit mono samples, 128 being
silence, made by the TIA sound chip at its ``freq`` setting (``TIA_HZ``, 31400 Hz).

How they are played, so that the sound stays in time with the frames at either pace:

- Each frame's samples fill exactly the time that frame is on screen, no more, no less:
  ``rate / fps`` output samples per frame at the device's rate (800 at 48 kHz native, with a
  fractional carry for rates that do not divide), so the sound never drifts from the game.
- Native pace (60 fps): 512 samples per 1/60 s is 30720 Hz, 2.2% below the chip's 31400 Hz,
  so tones come out 0.4 semitone flat. That is the price of never drifting.
- Paper pace (30 fps; 900 frames in 30 s): a frame is on screen twice as long, and its 512
  samples are played twice over (a time stretch in one-frame grains): tones keep their pitch
  and last twice as long, as the game itself is slowed. Playing them at half speed instead
  would put every sound an octave low. The seam between the two copies can add a faint
  30 Hz roughness to a held tone.
- Resampling to the device's rate is linear interpolation (numpy).
- In real time an action's frames are emulated at the start of its slot and the window
  shows the last one at once, while their sound fills the slot: the picture leads the sound
  by up to ``repeat - 1`` frames, plus the device's own latency.

The chunks go through ``SampleFifo`` to the output stream's callback (PortAudio's thread),
which plays silence when the game waits (paused mode, a late slot). The fifo holds at most
``MAX_LAG_S``: past that the oldest samples go, so the sound never lags the picture.

No audio device, no PortAudio library or no ``sounddevice`` module: ``GameSound`` says so
once (``notify``) and plays nothing; the game goes on. ``toggle_mute`` silences it at once.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from workstation.game.games import FPS_NATIVE

SAMPLES_PER_FRAME = 512  # ale-py's sound observation: one buffer per emulated frame
TIA_HZ = 31400  # the rate the emulator's TIA sound makes them at (its `freq` setting)
DEFAULT_RATE = 48000  # when the device does not say
MAX_LAG_S = 0.25  # the most sound queued ahead of the device
SILENCE = 128

Callback = Callable[..., None]  # sounddevice's (outdata, frames, time, status)
StreamOpener = Callable[[Callback], tuple[object, int]]  # callback -> (started stream, its rate)


class SoundUnavailable(Exception):
    """No sound here; the message is the one line the player sees."""


def native_rate() -> int:
    """The rate that plays a frame's samples in one native frame's time (30720 Hz)."""
    return SAMPLES_PER_FRAME * FPS_NATIVE


class FrameAudio:
    """Turns each frame's samples into exactly one frame's time of output at ``rate``."""

    def __init__(self, rate: int, fps: int) -> None:
        if fps <= 0 or rate <= 0:
            raise ValueError(f"sound needs a positive rate and frame rate (got {rate} Hz, {fps} fps)")
        self.rate, self.fps = rate, fps
        self.repeats = max(1, round(FPS_NATIVE / fps))  # paper pace: each frame's samples twice over
        self._frames = 0  # frames converted, for the fractional carry

    def count(self, index: int) -> int:
        """Output samples for the ``index``-th frame converted (they sum to ``rate / fps`` per frame)."""
        return (index + 1) * self.rate // self.fps - index * self.rate // self.fps

    def convert(self, samples: np.ndarray) -> np.ndarray:
        """One frame's uint8 samples -> float32 in [-1, 1), ``count(next index)`` long."""
        n = self.count(self._frames)
        self._frames += 1
        x = (np.asarray(samples, dtype=np.float32) - SILENCE) / SILENCE
        if self.repeats > 1:
            x = np.tile(x, self.repeats)
        at = (np.arange(n, dtype=np.float64) + 0.5) * (len(x) / n) - 0.5  # output sample centres
        return np.interp(at, np.arange(len(x)), x).astype(np.float32)


class SampleFifo:
    """Samples between the game and the device's callback (thread-safe, bounded by ``limit``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: deque[np.ndarray] = deque()
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._size

    def push(self, chunk: np.ndarray) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size > self.limit:  # behind the picture: the oldest sound goes
                drop = min(len(self._chunks[0]), self._size - self.limit)
                head = self._chunks[0]
                if drop == len(head):
                    self._chunks.popleft()
                else:
                    self._chunks[0] = head[drop:]
                self._size -= drop

    def pull(self, n: int) -> np.ndarray:
        """The next ``n`` samples; silence where there are none."""
        out = np.zeros(n, dtype=np.float32)
        got = 0
        with self._lock:
            while got < n and self._chunks:
                head = self._chunks[0]
                take = min(n - got, len(head))
                out[got:got + take] = head[:take]
                got += take
                if take == len(head):
                    self._chunks.popleft()
                else:
                    self._chunks[0] = head[take:]
            self._size -= got
        return out

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()
            self._size = 0


def open_output_stream(callback: Callback) -> tuple[object, int]:
    """A started mono float32 ``sounddevice.OutputStream`` pulling from ``callback``, and its rate."""
    try:
        import sounddevice as sd
    except ImportError:
        raise SoundUnavailable("no sound: sounddevice is not installed "
                               "(pip install 'atari-workstation[window]'); playing silent") from None
    except OSError:  # the module is there, the PortAudio library is not
        raise SoundUnavailable("no sound: the PortAudio library is missing "
                               "(apt install libportaudio2); playing silent") from None
    try:
        rate = int(sd.query_devices(kind="output")["default_samplerate"] or DEFAULT_RATE)
        stream = sd.OutputStream(samplerate=rate, channels=1, dtype="float32", latency="low", callback=callback)
        stream.start()
    except Exception as e:  # PortAudioError, or ValueError for no such device
        raise SoundUnavailable(f"no sound: no audio output device ({e}); playing silent") from None
    return stream, rate


class GameSound:
    """Plays frames' samples in time at ``fps``; silent, after one notice, when there is no device."""

    def __init__(self, fps: int, notify: Callable[[str], None], open_stream: StreamOpener = open_output_stream):
        self.fps = fps
        self.muted = False
        self._stream: Any = None
        self._fifo = SampleFifo(0)
        self._audio: FrameAudio | None = None
        try:
            self._stream, rate = open_stream(self._callback)
        except SoundUnavailable as e:
            notify(str(e))
            return
        self._audio = FrameAudio(rate, fps)
        self._fifo.limit = int(rate * MAX_LAG_S)

    @property
    def playing(self) -> bool:
        """There is a device to play on (muted or not)."""
        return self._stream is not None

    def frame(self, samples: np.ndarray) -> None:
        """The next frame's samples (frames in order, one call each)."""
        if self._audio is None:
            return
        chunk = self._audio.convert(samples)  # converted even when muted: the carry stays in step
        if not self.muted:
            self._fifo.push(chunk)

    def toggle_mute(self) -> bool:
        """Mute (at once: what is queued goes too) or unmute; returns ``muted``."""
        self.muted = not self.muted
        if self.muted:
            self._fifo.clear()
        return self.muted

    def _callback(self, outdata: Any, frames: int, time: Any, status: Any) -> None:
        outdata[:, 0] = self._fifo.pull(frames)

    def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception:  # a device gone mid-play: nothing left to stop
                pass
