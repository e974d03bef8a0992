"""Gamepads in the play window: posted joystick events, through the window loop, to the game's actions.

The loop runs in-process under SDL's dummy drivers; the events are real pygame events
(``pygame.event.post``), so no pad is needed. The buttons held go through the same
chord -> action mapping as the keyboard's (``screens.input.keys.action_for``).
"""

from __future__ import annotations

import os
import queue

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pytest

from screens.input.keys import action_for
from workstation.game.games import get_game

pygame = pytest.importorskip("pygame")

from screens.input.play_window import WindowLoop


@pytest.fixture(autouse=True)
def dummy_sdl(monkeypatch):
    """SDL's dummy video and audio drivers, for these tests only (other tests need no display)."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


SEAQUEST, BREAKOUT = get_game("seaquest"), get_game("breakout")


@pytest.fixture
def loop():
    sent: list = []
    window = WindowLoop("test", 210, None, sent.append)  # no sound: fps None
    window.sent = sent
    yield window
    window.close()


def post(kind, pad=0, **kw):
    pygame.event.post(pygame.event.Event(kind, joy=pad, instance_id=pad, **kw))


def axis(n, value, pad=0):
    post(pygame.JOYAXISMOTION, pad, axis=n, value=value)


def hat(x, y, pad=0):
    post(pygame.JOYHATMOTION, pad, hat=0, value=(x, y))


def button(n, down=True, pad=0):
    post(pygame.JOYBUTTONDOWN if down else pygame.JOYBUTTONUP, pad, button=n)


def held(loop) -> tuple[str, ...]:
    assert loop.step(queue.Queue(), queue.Queue())
    return loop.sent[-1] if loop.sent else ()


def test_the_hat_moves_and_a_face_button_fires(loop):
    hat(-1, 0)
    assert held(loop) == ("left",) and action_for(held(loop), BREAKOUT) == "left"
    button(0)
    assert held(loop) == ("left", "fire")
    assert action_for(held(loop), SEAQUEST) == "leftfire"
    hat(0, 1)  # up on a hat is +1
    assert held(loop) == ("fire", "up") and action_for(held(loop), SEAQUEST) == "upfire"
    button(0, down=False)
    hat(0, 0)
    assert held(loop) == () and action_for(held(loop), SEAQUEST) == "noop"


def test_the_stick_past_half_way_gives_diagonals(loop):
    axis(1, -1.0)  # up on a stick is -1
    axis(0, -0.9)
    button(2)
    assert held(loop) == ("up", "left", "fire")
    assert action_for(held(loop), SEAQUEST) == "upleftfire"
    axis(0, 0.3)  # under the threshold: centred
    assert held(loop) == ("up", "fire") and action_for(held(loop), SEAQUEST) == "upfire"
    axis(1, 0.8)
    assert held(loop) == ("fire", "down") and action_for(held(loop), SEAQUEST) == "downfire"


def test_a_game_without_the_chord_gets_the_nearest_action(loop):
    axis(1, -1.0)
    button(1)
    assert held(loop) == ("up", "fire")
    assert action_for(held(loop), BREAKOUT) == "fire"  # Breakout has no up: the newest button stays


def test_the_hat_wins_over_the_stick(loop):
    axis(0, 1.0)
    hat(-1, 0)
    assert held(loop) == ("left",)
    hat(0, 0)
    assert held(loop) == ("right",)


def test_shoulder_and_start_buttons_do_not_fire(loop):
    for n in (4, 5, 6, 7):
        button(n)
    assert held(loop) == ()


def test_keys_and_pads_together_and_a_pad_unplugged(loop):
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_LEFT, mod=0, unicode="", scancode=0))
    button(3, pad=1)
    hat(0, -1, pad=2)
    assert held(loop) == ("left", "fire", "down")
    assert action_for(held(loop), SEAQUEST) == "downleftfire"
    pygame.event.post(pygame.event.Event(pygame.JOYDEVICEREMOVED, instance_id=1))
    assert held(loop) == ("left", "down") and action_for(held(loop), SEAQUEST) == "downleft"
    assert action_for(held(loop), BREAKOUT) == "left"


def test_the_window_sends_only_changes(loop):
    hat(1, 0)
    held(loop)
    held(loop)
    axis(3, 0.9)  # another axis moved: nothing changes
    held(loop)
    assert loop.sent == [("right",)]


def test_closing_the_window_ends_the_loop(loop):
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert loop.step(queue.Queue(), queue.Queue()) is False
