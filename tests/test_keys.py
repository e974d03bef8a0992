"""The held-key model and key -> action mapping, with explicit timestamps."""

from __future__ import annotations

import pytest

from screens.input.keys import (
    FIRST_LINGER_S,
    REPEAT_LINGER_S,
    HeldKeys,
    PlanQueue,
    action_for,
    button_for_key,
    chord_name,
)
from workstation.game.games import GAMES, get_game


def test_a_single_press_is_held_for_the_first_linger_then_released():
    keys = HeldKeys()
    keys.press("left", 10.0)
    assert keys.held(10.0) == ("left",)
    assert keys.held(10.0 + FIRST_LINGER_S - 0.01) == ("left",)
    assert keys.held(10.0 + FIRST_LINGER_S) == ()


def test_auto_repeat_keeps_a_key_held_and_release_shows_after_the_repeat_linger():
    keys = HeldKeys()
    keys.press("right", 0.0)
    t = 0.5  # first repeat after the keyboard's delay, then every 40 ms
    while t < 2.0:
        keys.press("right", t)
        assert keys.held(t + 0.039) == ("right",)
        t += 0.04
    last = t - 0.04
    assert keys.held(last + REPEAT_LINGER_S - 0.01) == ("right",)
    assert keys.held(last + REPEAT_LINGER_S) == ()


def test_a_key_pressed_again_after_it_expired_is_a_first_press():
    keys = HeldKeys()
    keys.press("up", 0.0)
    keys.press("up", 1.0)  # long after the linger: a new press, not a repeat
    assert keys.held(1.0 + FIRST_LINGER_S - 0.01) == ("up",)


def test_a_chord_stays_held_while_its_newest_key_repeats():
    keys = HeldKeys()
    keys.press("up", 0.0)
    keys.press("up", 0.5)  # up repeats...
    keys.press("left", 0.52)  # ...until left goes down: the terminal now repeats only left
    assert keys.held(0.52) == ("up", "left")
    for i in range(20):
        keys.press("left", 1.02 + 0.04 * i)
    assert keys.held(1.80) == ("up", "left")
    assert keys.held(1.78 + REPEAT_LINGER_S) == ()


def test_keys_pressed_together_stay_a_chord_while_the_newest_repeats():
    keys = HeldKeys()
    keys.press("up", 0.0)
    keys.press("left", 0.03)  # within the chord window
    for i in range(15):
        keys.press("left", 0.53 + 0.04 * i)
    assert keys.held(1.0) == ("up", "left")


def test_a_tapped_key_does_not_join_a_later_key():
    keys = HeldKeys()
    keys.press("fire", 0.0)  # tapped to serve
    keys.press("right", 0.3)  # then right is held
    assert keys.held(0.54) == ("fire", "right")
    assert keys.held(0.56) == ("right",)  # fire lasted only its own linger
    for i in range(10):
        keys.press("right", 0.8 + 0.04 * i)
    assert keys.held(1.1) == ("right",)


def test_pressing_a_direction_releases_its_opposite():
    keys = HeldKeys()
    keys.press("left", 0.0)
    keys.press("fire", 0.1)
    keys.press("right", 0.2)
    assert keys.held(0.3) == ("fire", "right")


def test_unknown_button_is_refused():
    with pytest.raises(ValueError, match="unknown button"):
        HeldKeys().press("jump", 0.0)


def test_terminal_keys_map_to_buttons():
    assert [button_for_key(k) for k in ("up", "w", "W", "a", "s", "d", "space", "shift+left", "x", "enter")] == [
        "up", "up", "up", "left", "down", "right", "fire", "left", None, None]


def test_chords_are_named_in_ale_order():
    assert chord_name(["left", "up"]) == "upleft"
    assert chord_name(["fire", "right", "down"]) == "downrightfire"
    assert chord_name([]) == "noop"


def test_diagonals_and_fire_in_a_full_action_game():
    seaquest = get_game("seaquest")
    assert action_for(("up", "left"), seaquest) == "upleft"
    assert action_for(("left", "up", "fire"), seaquest) == "upleftfire"
    assert action_for(("fire",), seaquest) == "fire"
    assert action_for((), seaquest) == "noop"


def test_breakout_keeps_the_closest_allowed_subset():
    breakout = get_game("breakout")  # noop, fire, right, left
    assert action_for(("up", "left"), breakout) == "left"
    assert action_for(("down",), breakout) == "noop"
    assert action_for(("left", "fire"), breakout) == "fire"  # the newest button wins a tie
    assert action_for(("fire", "left"), breakout) == "left"


def test_assault_fires_upward_and_freeway_only_moves_vertically():
    assault = get_game("assault")  # its fire is the ALE UP action
    assert action_for(("fire",), assault) == "up"
    assert action_for(("left", "fire"), assault) == "leftfire"
    freeway = get_game("freeway")
    assert action_for(("up", "fire"), freeway) == "up"
    assert action_for(("left",), freeway) == "noop"


def test_qbert_diagonals_use_the_games_own_hop_actions():
    qbert = get_game("qbert")  # UP hops up-right, LEFT hops up-left...
    assert action_for(("up", "right"), qbert) == "up"
    assert action_for(("down", "left"), qbert) == "down"


@pytest.mark.parametrize("key", sorted(GAMES))
def test_every_chord_maps_to_an_allowed_action(key):
    game = GAMES[key]
    buttons = ["up", "down", "left", "right", "fire"]
    for mask in range(32):
        chord = tuple(b for i, b in enumerate(buttons) if mask >> i & 1)
        assert action_for(chord, game) in game.action_names


def test_plan_queue_adds_joins_removes_and_caps():
    queue = PlanQueue(get_game("seaquest"), max_actions=3)
    assert queue.add("up")
    assert queue.combine()
    assert queue.add("left")
    assert queue.add("fire")
    assert queue.names == ["upleft", "fire"]
    assert queue.noop()
    assert queue.full and not queue.add("down")
    queue.pop()
    queue.combine()
    queue.add("down")  # joins "fire"
    assert queue.take() == ["upleft", "downfire"]
    assert queue.names == [] and not queue.combine()


def test_plan_queue_maps_to_the_games_actions():
    queue = PlanQueue(get_game("breakout"), max_actions=10)
    for button in ("up", "fire", "left"):
        queue.add(button)
    queue.combine()
    queue.add("right")  # replaces its opposite
    assert queue.names == ["noop", "fire", "right"]


def test_the_plan_keys_f1_lists_are_the_ones_plan_control_reads():
    from screens.input.keys import PLAN_KEY_HELP, PLAN_KEYS, plan_control

    assert set(PLAN_KEY_HELP) == set(PLAN_KEYS)
    for what, keys in PLAN_KEYS.items():
        for key in keys:
            name = {"+": "plus", "=": "equals_sign", ".": "full_stop"}.get(key, key)
            assert plan_control(name, key if len(key) == 1 else None) == (what, ""), key
