"""Gamepads in the play window: pygame's joystick events to the buttons a keyboard has.

Every pad's state is kept from its events (so events posted with ``pygame.event.post``
work as a real pad's do): the first hat, else the left stick (axes 0 and 1, past
``STICK_THRESHOLD``), gives the directions; any of the face buttons (``FIRE_BUTTONS``)
is fire. The buttons come out in press order, like the keyboard's, and the play screen
maps them to the game's action with the same ``screens.input.keys.action_for`` (so up +
left + fire is ``upleftfire`` where the game has it, and the nearest action where not).

Only the window process imports this module (it imports pygame).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pygame

STICK_THRESHOLD = 0.5  # a stick counts as pushed past this deflection
FIRE_BUTTONS = frozenset({0, 1, 2, 3})  # the face buttons (A B X Y on most pads); shoulders and start do nothing

PAD_EVENTS = frozenset({pygame.JOYAXISMOTION, pygame.JOYHATMOTION, pygame.JOYBUTTONDOWN, pygame.JOYBUTTONUP,
                        pygame.JOYDEVICEADDED, pygame.JOYDEVICEREMOVED})


@dataclass
class _Pad:
    axes: dict[int, float] = field(default_factory=dict)
    hat: tuple[int, int] = (0, 0)
    buttons: set[int] = field(default_factory=set)

    def held(self) -> set[str]:
        x, y = float(self.hat[0]), float(-self.hat[1])  # a hat's y is +1 for up
        if x == 0 and y == 0:
            x, y = self.axes.get(0, 0.0), self.axes.get(1, 0.0)  # a stick's y is -1 for up
        out = set()
        if y < -STICK_THRESHOLD:
            out.add("up")
        elif y > STICK_THRESHOLD:
            out.add("down")
        if x < -STICK_THRESHOLD:
            out.add("left")
        elif x > STICK_THRESHOLD:
            out.add("right")
        if self.buttons & FIRE_BUTTONS:
            out.add("fire")
        return out


class Gamepads:
    """The buttons held on all pads together, oldest press first."""

    def __init__(self) -> None:
        self._pads: dict[int, _Pad] = {}
        self._opened: dict[int, object] = {}  # SDL sends a pad's events only while it is open
        self._order: list[str] = []

    def open_all(self) -> None:
        for i in range(pygame.joystick.get_count()):
            self._open(i)

    def _open(self, device_index: int) -> None:
        try:
            pad = pygame.joystick.Joystick(device_index)
            self._opened[pad.get_instance_id()] = pad
        except pygame.error:  # gone again already
            pass

    def handle(self, event: Any) -> bool:
        """Take one event; True if it was a gamepad's."""
        if event.type not in PAD_EVENTS:
            return False
        if event.type == pygame.JOYDEVICEADDED:
            self._open(event.device_index)
            return True
        pid = getattr(event, "instance_id", getattr(event, "joy", 0))
        if event.type == pygame.JOYDEVICEREMOVED:
            self._pads.pop(pid, None)
            self._opened.pop(pid, None)
        else:
            pad = self._pads.setdefault(pid, _Pad())
            if event.type == pygame.JOYAXISMOTION:
                pad.axes[event.axis] = float(event.value)
            elif event.type == pygame.JOYHATMOTION:
                if event.hat == 0:
                    pad.hat = tuple(event.value)
            elif event.type == pygame.JOYBUTTONDOWN:
                pad.buttons.add(event.button)
            else:
                pad.buttons.discard(event.button)
        now: set[str] = set().union(*(p.held() for p in self._pads.values())) if self._pads else set()
        self._order = [b for b in self._order if b in now] + [b for b in ("up", "down", "left", "right", "fire")
                                                             if b in now and b not in self._order]
        return True

    def held(self) -> tuple[str, ...]:
        return tuple(self._order)
