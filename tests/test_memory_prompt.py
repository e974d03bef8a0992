"""Memory selection and prompt assembly: which clips, in what order, how many images."""

from __future__ import annotations

from workstation.engine.memory import Clip, Step, select_structured
from workstation.engine.prompt import ImagePart, TextPart
from workstation.engine.prompt_builder import PromptBuilder
from workstation.engine.promptpack import load_pack
from workstation.game.games import get_game
from workstation.game.protocol import Protocol


def clip(turn: int, start: int, n: int, reward_at: int | None = None, lost_at: int | None = None) -> Clip:
    steps = [Step("left", start + 3 * (i + 1), 1.0 if i == reward_at else 0.0, i == lost_at) for i in range(n)]
    return Clip(turn, start, steps, raw=f"move: [{', '.join(['left'] * n)}]")


def history(pattern: str) -> list[Clip]:
    """'r' = rewarded turn, 'l' = life lost, '.' = nothing; every turn has 2 actions."""
    return [clip(i, 6 * i, 2, 0 if c == "r" else None, 1 if c == "l" else None) for i, c in enumerate(pattern)]


def test_structured_selection_takes_last_r_eventful_and_last_k_recent():
    clips = history("r.l.r.r...")
    rewarded, recent = select_structured(clips, 3, 3)
    assert [c.turn for c in rewarded] == [2, 4, 6]
    assert [c.turn for c in recent] == [7, 8, 9]


def test_a_turn_may_be_in_both_lists_and_zero_disables():
    clips = history("..r")
    rewarded, recent = select_structured(clips, 3, 3)
    assert [c.turn for c in rewarded] == [2] and [c.turn for c in recent] == [0, 1, 2]
    assert select_structured(clips, 0, 0) == ([], [])
    assert select_structured([], 3, 3) == ([], [])


def builder(**kw) -> PromptBuilder:
    return PromptBuilder(get_game("breakout"), Protocol(**kw), load_pack())


def test_structured_prompt_order_and_image_count():
    clips = history("r.l.r.r...")
    p = builder().build(clips, frame=60)
    assert [m.role for m in p.messages] == ["system", "user"]
    frames = p.image_frames
    # 3 reward clips + 3 recent clips, each 1 start + 2 action frames, then the current frame
    assert len(frames) == 6 * 3 + 1
    assert frames[:3] == [12, 15, 18]  # reward history first (turn 2), oldest first
    assert frames[9:12] == [42, 45, 48]  # then recent history (turn 7)
    assert frames[-1] == 60
    text = p.render_text()
    assert text.index("Earlier turns") < text.index("most recent turns") < text.index("The screen now")
    assert "Allowed actions: noop, fire, right, left" in text
    assert "0.1 s" in text and "1 to 10" in text


def test_first_turn_has_one_image_and_the_no_history_note():
    p = builder().build([], frame=0)
    assert p.image_frames == [0]
    assert "No turns have been played yet" in p.render_text()


def test_feedback_notices_switch_off():
    clips = history("rl")
    on = builder().build(clips, 12).render_text()
    off = builder(feedback=False).build(clips, 12).render_text()
    assert "Feedback: points gained" in on and "lost a life" in on
    assert "Feedback" not in off


def test_append_only_is_a_real_chat():
    clips = history("...")
    p = builder(memory="append").build(clips, 18)
    assert [m.role for m in p.messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert p.messages[2].text() == clips[0].raw
    # first user message: the first frame; each later user message: the action frames
    assert p.image_frames == [0, 3, 6, 9, 12, 15, 18]


def test_max_actions_and_short_guide_reach_the_text():
    full = builder().build([], 0).render_text()
    short = builder(max_actions=5, guide="short").build([], 0).render_text()
    assert "1 to 5" in short and len(short) < len(full)


def test_render_text_round_trips_through_with_text():
    p = builder().build(history("r.."), 18)
    again = p.with_text(p.render_text())
    assert again.render_text() == p.render_text()
    assert again.image_frames == p.image_frames and again.edited
    edited = p.with_text(p.render_text().replace("The screen now", "LOOK HERE"))
    assert "LOOK HERE" in edited.messages[-1].text() and edited.digest() != p.digest()
    assert all(isinstance(x, (TextPart, ImagePart)) for m in edited.messages for x in m.parts)


def test_every_alias_maps_to_an_allowed_action_of_the_right_meaning():
    from workstation.game.games import GAMES

    for g in GAMES.values():
        for word, action in g.aliases.items():
            assert action in g.allowed, (g.key, word)
            meaning = g.action_name(action)
            for direction in ("right", "left"):
                if word.endswith(direction) and "turn" not in word and g.key != "qbert":
                    assert direction in meaning, (g.key, word, meaning)
