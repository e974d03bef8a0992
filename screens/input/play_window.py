"""An optional pygame window for human play: true key state, gamepads and the game's sound.

A terminal reports no key release (see ``screens.input.keys``); a window does. The
window runs in its own process (pygame must own its main thread on macOS and
Windows): it receives frames through a queue (dropped when it falls behind) and
each frame's sound samples through another (never dropped, in frame order), and
sends back the buttons held, keyboard and gamepads together (``screens.input.gamepad``),
in press order, whenever they change, and its notices (no audio device...).
The sound (``screens.input.sound``) plays in time with the frames at the pace's
frame rate; ``m`` in the window (or in the terminal) mutes it. pygame and
sounddevice are optional (the ``window`` extra): without pygame, or without a
display, ``window_unavailable`` says why and play stays in the terminal; without
sound the window says so once and plays silent.
"""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import queue
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from textual.notifications import SeverityLevel

SCALE = 3  # window pixels per Atari pixel (both ways; the TV's wider pixels are not imitated)
MUTE = "mute"  # on the sound queue: toggle mute


def window_unavailable() -> str | None:
    """Why a play window cannot open here, or None when it can (``SDL_VIDEODRIVER`` set counts as a display)."""
    needs_display = sys.platform not in ("darwin", "win32") and not os.environ.get("SDL_VIDEODRIVER")
    if needs_display and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return "no play window: no display (DISPLAY and WAYLAND_DISPLAY are unset); playing in the terminal"
    if importlib.util.find_spec("pygame") is None:
        return ("no play window: pygame is not installed (pip install 'atari-workstation[window]'); "
                "playing in the terminal")
    return None


@contextmanager
def _real_stderr() -> Iterator[None]:
    """Put the process's own stderr back for a while.

    The TUI swaps ``sys.stderr`` for an object without a file descriptor, and
    multiprocessing hands ``sys.stderr.fileno()`` to the helper processes it
    starts (its resource tracker).
    """
    saved = sys.stderr
    sys.stderr = sys.__stderr__ or saved
    try:
        yield
    finally:
        sys.stderr = saved


class PlayWindow:
    """The window process, seen from the game's side (one thread sends frames and reads keys).

    ``fps``: the pace's frame rate, to play the sound at; None for no sound.
    """

    def __init__(self, title: str, height: int, fps: int | None = None) -> None:
        self.sound = fps is not None
        with _real_stderr():
            ctx = mp.get_context("spawn")
            self._frames: mp.Queue[Any] = ctx.Queue(maxsize=2)
            self._audio: mp.Queue[Any] = ctx.Queue()
            self._keys, keys_out = ctx.Pipe(duplex=False)
            self._stop = ctx.Event()
            self._process = ctx.Process(target=_window_main,
                                        args=(title, height, fps, self._frames, self._audio, keys_out, self._stop),
                                        name="workstation-play-window", daemon=True)
            self._process.start()
        self._held: tuple[str, ...] = ()
        self._notices: list[tuple[str, SeverityLevel]] = []

    @property
    def is_open(self) -> bool:
        return self._process.is_alive()

    def send_frame(self, rgb: np.ndarray, audio: np.ndarray | None = None) -> None:
        """Offer a frame (dropped when the window has not drawn the previous ones yet) and
        queue its sound samples (never dropped)."""
        if audio is not None and self.sound and self.is_open:  # a closed window reads no more
            self._audio.put(audio.tobytes())
        try:
            self._frames.put_nowait(rgb)
        except queue.Full:
            pass

    def toggle_mute(self) -> None:
        if self.sound:
            self._audio.put(MUTE)

    def _drain(self) -> None:
        try:
            while self._keys.poll():
                message = self._keys.recv()
                if isinstance(message, dict):
                    self._notices.append((message["notice"], message.get("severity", "warning")))
                else:
                    self._held = message
        except (EOFError, OSError):
            self._held = ()

    def held(self) -> tuple[str, ...]:
        """Buttons held now, oldest press first (empty once the window is closed)."""
        self._drain()
        return self._held if self.is_open else ()

    def notices(self) -> list[tuple[str, SeverityLevel]]:
        """What the window had to say since the last call, as (text, severity)."""
        self._drain()
        out, self._notices = self._notices, []
        return out

    def close(self) -> None:
        self._stop.set()
        self._process.join(timeout=1.0)
        if self._process.is_alive():
            self._process.terminate()
        for q in (self._frames, self._audio):  # what the window did not read is dropped: without this the
            q.cancel_join_thread()             # queue's feeder blocks exit on a full pipe nobody reads
            q.close()


def _window_main(title: str, height: int, fps: int | None, frames: Any, audio: Any, keys_out: Any,
                 stop: Any) -> None:  # pragma: no cover - its own process
    quiet = os.open(os.devnull, os.O_WRONLY)  # the terminal belongs to the TUI: no greetings or SDL warnings
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    window = WindowLoop(title, height, fps, keys_out.send)
    try:
        while not stop.is_set() and window.step(frames, audio):
            window.tick()
    finally:
        window.close()


class WindowLoop:
    """The window's work, one pass at a time (in the window process; in-process in tests).

    ``send`` gets the buttons held (a tuple) whenever they change, and notices as
    ``{"notice": text, "severity": ...}``. ``open_stream`` opens the audio output
    (``screens.input.sound.open_output_stream``; tests pass a fake).
    """

    def __init__(self, title: str, height: int, fps: int | None, send: Any, open_stream: Any = None) -> None:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        import pygame

        from screens.input.gamepad import Gamepads
        from screens.input.sound import GameSound, open_output_stream

        self._pg = pygame
        pygame.display.init()  # not pygame.init(): its mixer would take the audio device
        pygame.joystick.init()
        self.title = title
        self.size = (160 * SCALE, height * SCALE)
        self.screen = pygame.display.set_mode(self.size)
        self._send = send
        self.key_buttons = {pygame.K_UP: "up", pygame.K_w: "up", pygame.K_DOWN: "down", pygame.K_s: "down",
                            pygame.K_LEFT: "left", pygame.K_a: "left", pygame.K_RIGHT: "right",
                            pygame.K_d: "right", pygame.K_SPACE: "fire"}
        self.pads = Gamepads()
        self.pads.open_all()
        self._order: list[str] = []  # keyboard buttons, oldest press first
        self._sent: tuple[str, ...] | None = None
        self.sound = (GameSound(fps, self._notice, open_stream or open_output_stream) if fps else None)
        self._caption()
        self._tick = pygame.time.Clock()

    def _notice(self, text: str, severity: str = "warning") -> None:
        self._send({"notice": text, "severity": severity})

    def _caption(self) -> None:
        sound = self.sound is not None and self.sound.playing
        tail = ("  [muted: m]" if self.sound is not None and self.sound.muted else "  (m mutes)") if sound else ""
        self._pg.display.set_caption(self.title + tail)

    def toggle_mute(self) -> None:
        if self.sound is not None and self.sound.playing:
            muted = self.sound.toggle_mute()
            self._caption()
            self._notice("sound muted (m turns it back on)" if muted else "sound on", "information")

    def pump(self) -> bool:
        """Handle the window's events; False once it is closed."""
        pg = self._pg
        for event in pg.event.get():
            if event.type == pg.QUIT:
                return False
            if self.pads.handle(event):
                continue
            if event.type == pg.KEYDOWN and event.key == pg.K_m:
                self.toggle_mute()
                continue
            button = self.key_buttons.get(getattr(event, "key", -1))
            if button and button in self._order:
                self._order.remove(button)
            if button and event.type == pg.KEYDOWN:
                self._order.append(button)
        return True

    def held(self) -> tuple[str, ...]:
        """Keys, then pad buttons not already held on the keyboard."""
        return tuple(self._order) + tuple(b for b in self.pads.held() if b not in self._order)

    def play(self, item: Any) -> None:
        """One item from the sound queue: a frame's samples (bytes) or ``MUTE``."""
        if item == MUTE:
            self.toggle_mute()
        elif self.sound is not None:
            self.sound.frame(np.frombuffer(item, dtype=np.uint8))

    def show(self, frame: np.ndarray) -> None:
        pg = self._pg
        surface = pg.surfarray.make_surface(np.ascontiguousarray(frame.swapaxes(0, 1)))
        self.screen.blit(pg.transform.scale(surface, self.size), (0, 0))
        pg.display.flip()

    def step(self, frames: Any, audio: Any) -> bool:
        """One pass: events, held buttons out, all queued sound, the newest frame. False once closed."""
        if not self.pump():
            return False
        held = self.held()
        if held != self._sent:
            self._send(held)
            self._sent = held
        for item in _drain_queue(audio):
            self.play(item)
        frame = None
        for frame in _drain_queue(frames):  # noqa: B007 - keep the last
            pass
        if frame is not None:
            self.show(frame)
        return True

    def tick(self) -> None:
        self._tick.tick(120)

    def close(self) -> None:
        if self.sound is not None:
            self.sound.close()
        self._pg.quit()


def _drain_queue(q: Any) -> list[Any]:
    out = []
    try:
        while True:
            out.append(q.get_nowait())
    except queue.Empty:
        pass
    return out
