"""The play window's sound: the real emulator's samples through the window loop to an output stream.

The window loop runs in-process under SDL's dummy drivers; the output stream is a fake
(the one fake here: there is no audio device on a test machine) that pulls samples
through the callback exactly as PortAudio would.
"""

from __future__ import annotations

import os
import queue
import sys

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pytest

from screens.input.sound import (
    MAX_LAG_S,
    SAMPLES_PER_FRAME,
    FrameAudio,
    SampleFifo,
    SoundUnavailable,
    native_rate,
    open_output_stream,
)
from workstation.game.clock import GameClock
from workstation.game.games import FPS_NATIVE, FPS_PAPER, get_game
from workstation.game.protocol import Protocol

pygame = pytest.importorskip("pygame")

from screens.input.play_window import MUTE, PlayWindow, WindowLoop
from screens.views.play import PlayScreen
from tests.test_tui_play import ManualPacer, PlayApp, actions_of
from tests.tui_helpers import run_async, wait_until
from workstation.run.verify import verify
from workstation.store.recording import Recording


@pytest.fixture(autouse=True)
def dummy_sdl(monkeypatch):
    """SDL's dummy video and audio drivers, for these tests only (other tests need no display)."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


RATE = 48000


class FakeStream:
    """Stands in for sounddevice.OutputStream: the test plays the device, pulling through the callback."""

    def __init__(self, rate: int = RATE) -> None:
        self.rate = rate
        self.callback = None
        self.played: list[np.ndarray] = []
        self.closed = False

    def open(self, callback):
        self.callback = callback
        return self, self.rate

    def pull(self, n: int) -> np.ndarray:
        out = np.full((n, 1), np.nan, dtype=np.float32)
        self.callback(out, n, None, None)
        self.played.append(out[:, 0].copy())
        return self.played[-1]

    def stop(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def game_sound(frames: int, game: str = "seaquest") -> list[np.ndarray]:
    """Each budget frame's samples from the real emulator (frame 0 too), under a fixed action pattern."""
    clock = GameClock(get_game(game), Protocol(), seed=0, sound=True)
    clock.start()
    out = [clock.audio().copy()]
    n = len(clock.game.action_names)
    for i in range(frames - 1):
        clock.step_frame((i // 3) % n)
        out.append(clock.audio().copy())
    clock.close()
    return out


@pytest.fixture(scope="module")
def seaquest() -> list[np.ndarray]:
    return game_sound(90)


def window(fps, sent, stream=None, opener=None) -> WindowLoop:
    return WindowLoop("test", 210, fps, sent.append, open_stream=opener or (stream.open if stream else None))


def test_the_clock_makes_512_samples_a_frame_and_the_same_frames():
    frames = {}
    for sound in (False, True):
        seen = []
        clock = GameClock(get_game("seaquest"), Protocol(frames=60), seed=0,
                          sink=lambda screen, rgb, ram: seen.append((screen.copy(), bytes(ram))), sound=sound)
        if sound:
            assert clock.audio() is not None
        clock.start()
        while not clock.done:
            clock.act(clock.frame % 6)
            audio = clock.audio()
            if sound:
                assert audio.shape == (SAMPLES_PER_FRAME,) and audio.dtype == np.uint8
            else:
                assert audio is None
        frames[sound] = seen
        clock.close()
    assert len(frames[True]) == len(frames[False]) == 61
    assert all((a[0] == b[0]).all() and a[1] == b[1] for a, b in zip(frames[False], frames[True]))


def test_enable_sound_before_start_gives_the_same_samples(seaquest):
    clock = GameClock(get_game("seaquest"), Protocol(), seed=0)
    assert clock.audio() is None
    clock.enable_sound()
    clock.start()
    assert (clock.audio() == seaquest[0]).all()
    clock.close()


def test_each_frame_fills_its_own_time_at_either_pace():
    assert native_rate() == 30720  # 512 samples in 1/60 s
    for rate, fps, n in [(48000, FPS_NATIVE, 800), (48000, FPS_PAPER, 1600), (44100, FPS_NATIVE, 735),
                         (44100, FPS_PAPER, 1470)]:
        audio = FrameAudio(rate, fps)
        assert [len(audio.convert(np.full(512, 128, np.uint8))) for _ in range(5)] == [n] * 5
    odd = FrameAudio(22050, FPS_NATIVE)  # 367.5 a frame: the carry keeps a second exactly a second
    counts = [len(odd.convert(np.full(512, 128, np.uint8))) for _ in range(FPS_NATIVE)]
    assert set(counts) == {367, 368} and sum(counts) == 22050


def test_paper_pace_plays_each_frame_twice_at_its_pitch(seaquest):
    # Played at the native rate, each half of a paper-pace frame is the frame's own samples.
    native, paper = FrameAudio(native_rate(), FPS_NATIVE), FrameAudio(native_rate(), FPS_PAPER)
    for samples in seaquest[:10]:
        once, twice = native.convert(samples), paper.convert(samples)
        expected = (samples.astype(np.float32) - 128) / 128
        assert np.allclose(once, expected, atol=1e-6)
        assert np.allclose(twice[:512], expected, atol=1e-6) and np.allclose(twice[512:], expected, atol=1e-6)


@pytest.mark.parametrize("fps", [FPS_NATIVE, FPS_PAPER])
def test_samples_reach_the_stream_in_frame_order(seaquest, fps):
    stream, sent = FakeStream(), []
    loop = window(fps, sent, stream)
    per_frame = RATE // fps
    audio_q, frames_q = queue.Queue(), queue.Queue()
    try:
        for start in range(0, len(seaquest), 3):  # as a real-time slot sends them: one action's 3 frames
            for samples in seaquest[start:start + 3]:
                audio_q.put(samples.tobytes())
            assert loop.step(frames_q, audio_q)
            stream.pull(3 * per_frame)  # the device plays the slot's time
    finally:
        loop.close()
    played = np.concatenate(stream.played)
    reference = FrameAudio(RATE, fps)
    expected = [reference.convert(s) for s in seaquest]
    assert [len(e) for e in expected] == [per_frame] * len(seaquest)
    assert len(played) == per_frame * len(seaquest)
    assert np.array_equal(played, np.concatenate(expected))
    # and in order: each frame's stretch of output carries that frame's own sound level
    levels = [float(np.mean(s.astype(np.float32) - 128) / 128) for s in seaquest]
    heard = [float(np.mean(played[k * per_frame:(k + 1) * per_frame])) for k in range(len(seaquest))]
    assert np.allclose(heard, levels, atol=0.01)
    assert len(set(np.round(levels, 3))) > 10  # the sound changes, so a shuffled order would show
    assert not [m for m in sent if isinstance(m, dict)]  # a device: nothing to say


def test_the_device_gets_silence_when_the_game_waits(seaquest):
    stream = FakeStream()
    loop = window(FPS_NATIVE, [], stream)
    try:
        audio_q = queue.Queue()
        audio_q.put(seaquest[5].tobytes())
        loop.step(queue.Queue(), audio_q)
        first = stream.pull(1600)  # one frame's sound, then nothing queued
        assert np.any(first[:800] != 0) and not np.any(first[800:])
    finally:
        loop.close()


def test_sound_never_lags_the_picture_by_more_than_the_limit(seaquest):
    fifo = SampleFifo(limit=1000)
    for k in range(10):
        fifo.push(np.full(300, k, dtype=np.float32))
    assert len(fifo) == 1000
    kept = fifo.pull(1200)
    assert kept[0] == 6 and kept[999] == 9 and not kept[1000:].any()  # the newest 1000 samples, in order
    stream = FakeStream()
    loop = window(FPS_NATIVE, [], stream)
    try:
        audio_q = queue.Queue()
        for samples in seaquest:  # 1.5 s of sound at once: the oldest goes
            audio_q.put(samples.tobytes())
        loop.step(queue.Queue(), audio_q)
        assert len(loop.sound._fifo) == int(RATE * MAX_LAG_S)
    finally:
        loop.close()


def test_m_mutes_at_once_and_again_turns_it_back_on(seaquest):
    stream, sent = FakeStream(), []
    loop = window(FPS_NATIVE, sent, stream)
    audio_q, frames_q = queue.Queue(), queue.Queue()
    try:
        for samples in seaquest[:3]:
            audio_q.put(samples.tobytes())
        loop.step(frames_q, audio_q)
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_m, mod=0, unicode="m", scancode=0))
        for samples in seaquest[3:9]:
            audio_q.put(samples.tobytes())
        loop.step(frames_q, audio_q)  # m comes first: what was queued goes, and these frames too
        assert not stream.pull(9 * 800).any()
        assert loop.sound.muted and "muted" in pygame.display.get_caption()[0]
        assert {"notice": "sound muted (m turns it back on)", "severity": "information"} in sent
        audio_q.put(MUTE)  # the terminal's m comes this way
        for samples in seaquest[9:12]:
            audio_q.put(samples.tobytes())
        loop.step(frames_q, audio_q)
        back = stream.pull(3 * 800)
        reference = FrameAudio(RATE, FPS_NATIVE)
        expected = [reference.convert(s) for s in seaquest[:12]][9:]
        assert np.array_equal(back, np.concatenate(expected))  # in step: frame 9's sound where frame 9 is
        assert not loop.sound.muted
    finally:
        loop.close()


def test_no_device_says_so_once_and_play_goes_on(seaquest):
    sent = []

    def no_device(callback):
        raise SoundUnavailable("no sound: no audio output device (Error querying device -1); playing silent")

    loop = window(FPS_PAPER, sent, opener=no_device)
    audio_q, frames_q = queue.Queue(), queue.Queue()
    try:
        for k in range(0, 30, 3):
            for samples in seaquest[k:k + 3]:
                audio_q.put(samples.tobytes())
            frames_q.put(np.zeros((210, 160, 3), np.uint8))
            assert loop.step(frames_q, audio_q)
        audio_q.put(MUTE)
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_LEFT, mod=0, unicode="", scancode=0))
        assert loop.step(frames_q, audio_q)
    finally:
        loop.close()
    notices = [m for m in sent if isinstance(m, dict)]
    assert notices == [{"notice": "no sound: no audio output device (Error querying device -1); playing silent",
                        "severity": "warning"}]
    assert sent[-1] == ("left",)  # the keys still work


def test_the_real_opener_says_what_is_missing_in_one_line():
    try:
        stream, rate = open_output_stream(lambda *a: None)
    except SoundUnavailable as e:
        text = str(e)
        assert text.startswith("no sound: ") and text.endswith("playing silent") and "\n" not in text
    else:  # a machine with a sound card
        stream.stop()
        stream.close()
        assert rate > 0


def test_the_window_process_plays_silent_after_one_notice(seaquest):
    """The real window process under the dummy drivers, with the real opener."""
    try:
        stream, _ = open_output_stream(lambda *a: None)
    except SoundUnavailable as e:
        reason = str(e)
    else:
        stream.close()
        pytest.skip("this machine has an audio device: the no-device notice cannot happen")
    win = PlayWindow("test", 210, fps=FPS_NATIVE)
    try:
        notices = []
        for samples in seaquest[:30]:
            win.send_frame(np.zeros((210, 160, 3), np.uint8), samples)
        win.toggle_mute()
        for _ in range(600):  # until the process has started and spoken (no speed asserted)
            notices += win.notices()
            if notices or not win.is_open:
                break
            win._process.join(0.05)
        win._process.join(0.5)
        notices += win.notices()
        assert notices == [(reason, "warning")]
        assert win.is_open and win.held() == ()
    finally:
        win.close()
    assert not win.is_open


@run_async
async def test_play_with_the_window_says_no_sound_once_and_the_recording_verifies(tmp_path):
    """The play screen in the real app with the real window process (dummy drivers), no audio device."""
    try:
        stream, _ = open_output_stream(lambda *a: None)
    except SoundUnavailable as e:
        reason = str(e)
    else:
        stream.close()
        pytest.skip("this machine has an audio device: the no-device notice cannot happen")
    pacer = ManualPacer()
    screen = PlayScreen("freeway", 0, "realtime", "native", str(tmp_path), Protocol(frames=30),
                        countdown=0, window=True, pacer=pacer)
    app = PlayApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        assert await pacer._worker_idle(screen)
        await wait_until(pilot, lambda: screen._window is not None and screen._engine is not None, what="the window")
        assert screen._window.sound and screen._engine.clock.sound  # the emulator makes sound for the window
        await pilot.press("up")
        await pacer.advance_to(0.16, screen)  # 3 slots of 3 frames, their sound sent along
        # The window process says so once it has failed to open its sound, and the screen reads what the window
        # says when it sends a frame: on a loaded machine the notice may come after the last frame sent so far.
        # The worker waits for the next slot (nothing else reads the window's pipe now): wait for the notice,
        # then one more slot carries it to the screen.
        window = screen._window

        def said() -> bool:
            window._drain()
            return any(reason in n for n in app.notes) or any(reason in t for t, _ in window._notices)

        await wait_until(pilot, said, what="the window's no-sound notice")
        await pacer.advance_to(0.21, screen)
        await wait_until(pilot, lambda: any(reason in n for n in app.notes), what="the no-sound notice")
        await pilot.press("m")  # goes to the window; nothing to mute there
        await pacer.advance_to(1.0, screen)
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        path = screen.recording
        await pilot.press("escape")
    assert sum(1 for n in app.notes if n.startswith("no sound")) == 1
    assert actions_of(path)[:3] == ["up"] * 3
    rec = Recording(path)
    assert rec.complete and verify(rec).ok  # played with sound on, re-executed without: the same frames


def test_without_sounddevice_it_says_how_to_add_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # what an install without the window extra sees
    with pytest.raises(SoundUnavailable, match=r"^no sound: sounddevice is not installed \(pip install "
                                                r"'atari-workstation\[window\]'\); playing silent$"):
        open_output_stream(lambda *a: None)
