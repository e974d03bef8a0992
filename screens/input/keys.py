"""Keys to game actions for human play: the held-key model and the action queue.

A terminal reports key presses and auto-repeats but never a release. So a key
counts as held until its auto-repeat goes quiet for a while:

- after a first press, for ``FIRST_LINGER_S`` (0.55 s): keyboards wait about
  0.5 s before they start repeating, so a key still down sends its first repeat
  within that time;
- after a repeat, for ``REPEAT_LINGER_S`` (0.12 s): repeats come every 30-50 ms,
  so two or three missed repeats mean the key is up.

A terminal repeats only the key pressed last: holding up and then pressing
left stops up's repeats. So a key joins a chord with the keys pressed after
it when it was already repeating (it was surely down) or was pressed at most
``CHORD_WINDOW_S`` (0.15 s) before them (pressed together); a chord stays held
as long as its newest key keeps repeating. A key tapped and let go before
another key is pressed is not in the chord: it lasts its own linger. Pressing
a direction releases its opposite at once (left releases right). What no
terminal shows: a chord key let go while the newest one is still held stays
held, and a key still held after the newest one is let go looks released
(its repeats do not resume); press it again.

A chord of buttons maps to the nearest action the game allows: the chord's
own name if the game's vocabulary knows it (``up`` + ``left`` + ``fire`` ->
``upleftfire``; Assault's ``fire`` is its ``up``), else the largest sub-chord
it knows, dropping the buttons pressed longest ago first, else ``noop``.

No Textual here: times are explicit arguments, so tests need no wall clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

from workstation.game.games import Game
from workstation.game.vocabulary import normal_name

FIRST_LINGER_S = 0.55  # a key counts as held this long after its first press
REPEAT_LINGER_S = 0.12  # ... and this long after each auto-repeat
CHORD_WINDOW_S = 0.15  # keys pressed this close together were pressed as one chord

BUTTONS = ("up", "down", "left", "right", "fire")
OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}

# terminal key name (as Textual reports it) -> button
KEY_BUTTONS: dict[str, str] = {
    "up": "up", "w": "up",
    "down": "down", "s": "down",
    "left": "left", "a": "left",
    "right": "right", "d": "right",
    "space": "fire",
}


# paused mode: what each plan key does (plan_control reads the same keys; F1 lists them from here)
PLAN_KEYS: dict[str, tuple[str, ...]] = {"join": ("+", "="), "noop": ("n", "."), "remove": ("backspace",),
                                         "commit": ("enter",)}
PLAN_KEY_HELP = {"join": "join the next key to the last action", "noop": "queue a noop",
                 "remove": "remove the last action", "commit": "commit the plan"}


def button_for_key(key: str) -> str | None:
    """The button a terminal key stands for (arrows, WASD in either case, space), or None."""
    k = key.lower()
    if k.startswith("shift+"):
        k = k[len("shift+"):]
    return KEY_BUTTONS.get(k)


def stops_or_leaves(key: str, finished: bool) -> bool:
    """Whether a key stops the game or leaves its screen: escape always; enter and q once it is over."""
    return key == "escape" or (finished and key in ("enter", "q"))


def plan_control(key: str, character: str | None) -> tuple[str, str] | None:
    """What a paused-mode key does to the plan, as ``(what, button)``: ``("move", button)`` for a game key,
    ``"join"`` (+ or =), ``"noop"`` (n or .), ``"remove"`` (backspace), ``"commit"`` (enter); None for any other key."""
    button = button_for_key(key)
    if button is not None:
        return "move", button
    if character in ("+", "="):
        return "join", ""
    if key == "n" or character == ".":
        return "noop", ""
    if key == "backspace":
        return "remove", ""
    if key == "enter":
        return "commit", ""
    return None


def play_key(key: str, character: str | None, finished: bool, realtime: bool) -> tuple[str, str] | None:
    """What a key does on a play screen, as ``(what, button)``: ``("leave", "")`` stops a running game or
    leaves a finished one; once it is over nothing else counts; in real time ``("hold", button)`` for a
    game key; paused, :func:`plan_control`'s answer. None for any other key."""
    if stops_or_leaves(key, finished):
        return "leave", ""
    if finished:
        return None
    if realtime:
        button = button_for_key(key)
        return None if button is None else ("hold", button)
    return plan_control(key, character)


def take_play_key(key: str, character: str | None, finished: bool, realtime: bool, *, stop: Callable[[], object],
                  leave: Callable[[], None], hold: Callable[[str], None], plan: Callable[[str, str], None]) -> bool:
    """A play screen's key through :func:`play_key`: ``stop`` (the event's), then ``leave()``, ``hold(button)``
    or ``plan(what, button)``. False when the key is none of these (nothing called)."""
    found = play_key(key, character, finished, realtime)
    if found is None:
        return False
    stop()
    what, button = found
    if what == "leave":
        leave()
    elif what == "hold":
        hold(button)
    else:
        plan(what, button)
    return True


def commit_refusal(ready: bool, queue: PlanQueue, busy: str) -> str | None:
    """Why a plan cannot be committed now (``busy`` while the game is not waiting for one, or an empty
    queue), or None when it can."""
    if not ready:
        return busy
    if not queue.items:
        return "queue at least one action first (n queues a noop)"
    return None


def chord_name(buttons: list[str] | tuple[str, ...] | set[str]) -> str:
    """ALE-style name of a chord: vertical, horizontal, then fire (``upleftfire``); ``noop`` if empty."""
    b = set(buttons)
    name = "".join(x for x in ("up", "down", "left", "right", "fire") if x in b)
    return name or "noop"


def action_for(buttons: list[str] | tuple[str, ...], game: Game) -> str:
    """The allowed action (lower-case ALE name) nearest to a chord.

    ``buttons`` are in press order, oldest first. Tries the whole chord, then
    ever smaller sub-chords (among equal sizes, the one keeping the newest
    buttons first), then gives ``noop``.
    """
    vocab = game.vocabulary
    held = list(dict.fromkeys(buttons))  # unique, order kept
    for size in range(len(held), 0, -1):
        subsets = sorted(combinations(range(len(held)), size), key=lambda kept: sorted(kept, reverse=True),
                         reverse=True)
        for kept in subsets:
            action = vocab.get(normal_name(chord_name([held[i] for i in kept])))
            if action is not None:
                return game.action_name(action)
    return game.action_name(vocab["noop"]) if "noop" in vocab else "noop"


@dataclass
class _Key:
    pressed_at: float
    until: float
    repeated: bool = False
    chorded: bool = False  # kept alive by the presses of newer keys


@dataclass
class HeldKeys:
    """Which buttons are held, from presses and repeats alone (no releases).

    Safe across threads: the UI thread presses while the game's worker reads what is held.
    """

    first_linger: float = FIRST_LINGER_S
    repeat_linger: float = REPEAT_LINGER_S
    chord_window: float = CHORD_WINDOW_S
    _keys: dict[str, _Key] = field(default_factory=dict, init=False, repr=False)  # in press order
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def press(self, button: str, now: float) -> None:
        """A press or auto-repeat of ``button`` at time ``now`` (seconds, any monotonic origin)."""
        if button not in BUTTONS:
            raise ValueError(f"unknown button {button!r}; buttons are {', '.join(BUTTONS)}")
        with self._lock:
            self._press(button, now)

    def _press(self, button: str, now: float) -> None:
        self._expire(now)
        self._keys.pop(OPPOSITE.get(button, ""), None)
        key = self._keys.get(button)
        if key is not None:  # an auto-repeat
            key.until, key.repeated = now + self.repeat_linger, True
        else:
            for other in self._keys.values():
                if other.repeated or now - other.pressed_at <= self.chord_window:
                    other.chorded = True
            key = self._keys[button] = _Key(pressed_at=now, until=now + self.first_linger)
        for other in self._keys.values():
            if other.chorded:
                other.until = max(other.until, key.until)

    def held(self, now: float) -> tuple[str, ...]:
        """Buttons held at ``now``, oldest press first."""
        with self._lock:
            return tuple(b for b, k in self._keys.items() if k.until > now)

    def release_all(self) -> None:
        with self._lock:
            self._keys.clear()

    def _expire(self, now: float) -> None:
        for b in [b for b, k in self._keys.items() if k.until <= now]:
            del self._keys[b]


@dataclass
class QueuedAction:
    buttons: tuple[str, ...]
    name: str  # the allowed action the buttons map to


class PlanQueue:
    """The paused-mode plan: 1..max_actions actions built from keys, committed as one turn.

    A key appends an action (its button mapped to the game); after ``combine()``
    the next key joins the last action instead (``up``, ``+``, ``left`` ->
    ``upleft``). ``noop()`` appends a wait.
    """

    def __init__(self, game: Game, max_actions: int) -> None:
        self.game = game
        self.max_actions = max_actions
        self.items: list[QueuedAction] = []
        self.combining = False

    @property
    def names(self) -> list[str]:
        return [item.name for item in self.items]

    @property
    def full(self) -> bool:
        return len(self.items) >= self.max_actions

    def add(self, button: str) -> bool:
        """Append ``button`` as an action (or join it to the last one after ``combine``); False if full."""
        if self.combining and self.items:
            self.combining = False
            last = self.items[-1]
            buttons = tuple(b for b in last.buttons if b not in (button, OPPOSITE.get(button))) + (button,)
            self.items[-1] = QueuedAction(buttons, action_for(buttons, self.game))
            return True
        self.combining = False
        if self.full:
            return False
        self.items.append(QueuedAction((button,), action_for((button,), self.game)))
        return True

    def noop(self) -> bool:
        self.combining = False
        if self.full:
            return False
        self.items.append(QueuedAction((), "noop"))
        return True

    def combine(self) -> bool:
        """Make the next key join the last action; False when the queue is empty."""
        self.combining = bool(self.items)
        return self.combining

    def edit(self, what: str, button: str = "") -> bool:
        """Apply a plan control other than commit (``plan_control``'s names); False when a move finds the queue full."""
        if what == "move":
            return self.add(button)
        if what == "join":
            self.combine()
        elif what == "noop":
            self.noop()
        elif what == "remove":
            self.pop()
        else:
            raise ValueError(f"unknown plan control {what!r}")
        return True

    def pop(self) -> None:
        self.combining = False
        if self.items:
            self.items.pop()

    def listing(self, label: str) -> str:
        """``LABEL n/max: 1.a 2.b`` (``(empty)`` when nothing is queued), as the plan panels show it."""
        items = " ".join(f"{i + 1}.{n}" for i, n in enumerate(self.names)) or "(empty)"
        return f"{label} {len(self.items)}/{self.max_actions}: {items}"

    def take(self) -> list[str]:
        """The queued action names, emptying the queue."""
        names = self.names
        self.items.clear()
        self.combining = False
        return names
