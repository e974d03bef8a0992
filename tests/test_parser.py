"""Tests of the reply parser against the real game registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workstation.engine.parser import PARSE_RULES, ParseResult, parse_reply
from workstation.game.games import GAMES, get_game

CORPUS = [json.loads(line) for line in (Path(__file__).parent / "data" / "parser_corpus.jsonl").open()]


def check_invariants(result: ParseResult, game, max_actions: int) -> None:
    """What holds for every result, whatever the input."""
    assert 1 <= len(result.actions) <= max_actions
    assert all(a in game.allowed for a in result.actions)
    assert result.names == [game.action_name(a) for a in result.actions]
    assert isinstance(result.thought, str)
    assert result.valid == (result.rule is None)
    if result.valid:
        assert result.errors == []
    else:
        assert result.rule in PARSE_RULES
        assert result.actions == [0] and result.names == ["noop"]
        assert result.errors and all(e and "\n" not in e for e in result.errors)


# --- the corpus ------------------------------------------------------------------------


def test_corpus_is_broad():
    assert len(CORPUS) >= 60
    assert len({c["game"] for c in CORPUS}) >= 6
    assert {c["rule"] for c in CORPUS} == {None, *PARSE_RULES} - {"no_thought_line"}  # that one: harness packs only


@pytest.mark.parametrize("case", CORPUS, ids=[c["note"] for c in CORPUS])
def test_corpus(case):
    game = get_game(case["game"])
    result = parse_reply(case["text"], game, case["max_actions"])
    assert (result.valid, result.names, result.rule) == (case["valid"], case["names"], case["rule"]), result.errors
    if "thought" in case:
        assert result.thought == case["thought"]
    check_invariants(result, game, case["max_actions"])


# --- each failure rule, with its message -------------------------------------------------

BREAKOUT = get_game("breakout")


def test_unknown_action_names_the_word_and_the_allowed_names():
    r = parse_reply("thought: jump over it\nmove: [left, jump]", BREAKOUT)
    assert r.rule == "unknown_action"
    assert r.errors == ["unknown action 'jump' (allowed: noop, fire, right, left)"]
    assert r.raw_moves == ["left", "jump"]
    assert r.thought == "jump over it"


def test_every_unknown_name_is_reported():
    r = parse_reply("move: [kick, left, duck]", BREAKOUT)
    assert [e.split("'")[1] for e in r.errors] == ["kick", "duck"]


def test_too_many_actions_says_how_many():
    r = parse_reply("move: [left, left, left, right, right, fire]", BREAKOUT, max_actions=5)
    assert r.rule == "too_many_actions"
    assert r.errors == ["6 actions but at most 5 allowed"]
    assert len(r.raw_moves) == 6


def test_repeat_counts_toward_the_maximum():
    assert parse_reply("move: left x10", BREAKOUT, 10).valid
    r = parse_reply("move: left x10, fire", BREAKOUT, 10)
    assert r.errors == ["11 actions but at most 10 allowed"]


def test_huge_repeat_is_rejected_without_building_it():
    r = parse_reply("move: left x999", BREAKOUT)
    assert r.errors == ["999 actions but at most 10 allowed"]


@pytest.mark.parametrize("text", ["move: []", "move:", "move: ``", "Move:\n\n", "move: [ , ]", "move: ```[]```"])
def test_empty_move_list(text):
    r = parse_reply(text, BREAKOUT)
    assert r.rule == "empty_move_list", r.errors
    assert "empty" in r.errors[0]


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n", "```\n```", "```json\n```"])
def test_empty_reply(text):
    assert parse_reply(text, BREAKOUT).rule == "empty_reply"


@pytest.mark.parametrize("text", ["thought: nothing", "Moving left seems good.", "{}", '{"thought": "x"}', "[unclosed"])
def test_no_move_line(text):
    r = parse_reply(text, BREAKOUT)
    assert r.rule == "no_move_line"
    assert "move: [" in r.errors[0]  # the message shows what a move line looks like


def test_no_move_line_keeps_the_thought():
    assert parse_reply("thought: I am unsure", BREAKOUT).thought == "I am unsure"


def test_unknown_wins_over_too_many_and_both_are_reported():
    r = parse_reply("move: [jump, left, left, left]", BREAKOUT, max_actions=3)
    assert r.rule == "unknown_action"
    assert r.errors[-1] == "4 actions but at most 3 allowed"


# --- choices worth pinning ---------------------------------------------------------------


def test_last_move_line_naming_an_action_wins():
    text = "move: [left]\nOn reflection:\nmove: [right]\nActions: these keep the paddle centred"
    assert parse_reply(text, BREAKOUT).names == ["right"]


def test_last_move_line_decides_when_none_is_valid():
    r = parse_reply("move: [jump]\nmove: [duck]", BREAKOUT)
    assert r.errors == ["unknown action 'duck' (allowed: noop, fire, right, left)"]


def test_fallback_thought_keeps_the_end_of_long_text():
    text = "start " + "word " * 300 + "the conclusion\nmove: [left]"
    thought = parse_reply(text, BREAKOUT).thought
    assert len(thought) <= 500 and thought.endswith("the conclusion") and thought.startswith("…")


def test_thought_is_stripped_of_markdown():
    r = parse_reply("## Thought\n> **ball** is `low`\n\nmove: [left]", BREAKOUT)
    assert r.thought == "ball is low"


def test_json_reply_with_string_move():
    r = parse_reply('{"reasoning": "go right", "actions": "right, right"}', BREAKOUT)
    assert (r.names, r.thought) == (["right", "right"], "go right")


def test_engine_style_override_round_trips_every_action_name():
    for game in GAMES.values():
        names = list(game.action_names)
        for start in range(0, len(names), 10):
            chunk = names[start : start + 10]
            r = parse_reply("move: [" + ", ".join(chunk) + "]", game, 10)
            assert r.names == chunk, (game.key, r.errors)


def test_non_str_is_a_type_error():
    with pytest.raises(TypeError):
        parse_reply(None, BREAKOUT)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_reply(b"move: [left]", BREAKOUT)  # type: ignore[arg-type]


def test_max_actions_below_one_is_a_value_error():
    with pytest.raises(ValueError):
        parse_reply("move: [left]", BREAKOUT, 0)


def test_typical_reply_parses_the_same_every_time():
    # how fast (about 20 us): bench/parser.py; no test depends on the machine's speed
    text = "thought: ball moving down-left toward the paddle\nmove: [left, left, noop]"
    first = parse_reply(text, BREAKOUT)
    for _ in range(200):
        again = parse_reply(text, BREAKOUT)
        assert again.actions == first.actions and again.thought == first.thought


@pytest.mark.parametrize(
    "text",
    [
        "x" * 1_000_000,
        "move: [" + "left," * 100_000 + "]",
        "[\n" * 50_000,
        "{" * 50_000 + "}" * 50_000,
        "move:" * 100_000,
        "move: left" + " " * 500_000 + "x",
        "thought: a\n" * 20_000 + "move: left",
    ],
    ids=["letters", "long list", "brackets", "deep braces", "labels", "spaces", "many thoughts"],
)
def test_large_inputs(text):
    result = parse_reply(text, BREAKOUT)
    check_invariants(result, BREAKOUT, 10)


# --- properties --------------------------------------------------------------------------

GAME_LIST = list(GAMES.values())


@settings(max_examples=300, deadline=None)
@given(text=st.text(), game=st.sampled_from(GAME_LIST), max_actions=st.integers(1, 10))
def test_any_text_gives_a_legal_plan(text, game, max_actions):
    check_invariants(parse_reply(text, game, max_actions), game, max_actions)


def _words(game) -> list[str]:
    """Surface forms a prompt could teach: canonical names and the game's aliases."""
    return list(game.action_names) + list(game.aliases)  # aliases: every word of the default pack


@st.composite
def near_valid(draw):
    """A well-formed reply in one of many styles, with the ids it must parse to."""
    game = draw(st.sampled_from(GAME_LIST))
    max_actions = draw(st.integers(1, 10))
    words = draw(st.lists(st.sampled_from(_words(game)), min_size=1, max_size=max_actions))
    expected = [game.vocabulary.lookup(w) for w in words]
    shaped = []
    for w in words:
        w = draw(st.sampled_from([w, w.upper(), w.title(), w.replace(" ", "_"), w.replace(" ", "-")]))
        shaped.append(draw(st.sampled_from([w, f'"{w}"', f"'{w}'", f"**{w}**", f"`{w}`"])))
    style = draw(st.sampled_from(["brackets", "json", "plain", "bullets", "numbered", "spaces"]))
    if style == "brackets":
        body = " [" + ", ".join(shaped) + "]"
    elif style == "json":
        body = " " + json.dumps([s.strip("\"'*`") for s in shaped])
    elif style == "plain":
        body = " " + ", ".join(shaped)
    elif style == "bullets":
        body = "".join(f"\n- {s}" for s in shaped)
    elif style == "numbered":
        body = "".join(f"\n{i}. {s}" for i, s in enumerate(shaped, 1))
    else:
        body = " " + " ; ".join(shaped)
    label = draw(st.sampled_from(["move:", "Move:", "MOVE:", "**Move:**", "moves:", "Actions:", "action -", "## Move"]))
    if label == "## Move" and style not in ("bullets", "numbered"):
        label = "## Move:"
    thought_text = draw(st.text(st.characters(whitelist_categories=("L", "N", "Zs")), max_size=60))
    thought = draw(st.sampled_from(["", f"thought: {thought_text}\n", f"**Thought:** {thought_text}\n\n"]))
    tail = draw(st.sampled_from(["", "\n", "\n\nThis should work.", "\n\nGood luck!"]))
    reply = thought + label + body + tail
    if draw(st.booleans()):
        reply = "```\n" + reply + "\n```"
    return game, max_actions, reply, expected


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid())
def test_well_formed_replies_parse_exactly(case):
    game, max_actions, reply, expected = case
    result = parse_reply(reply, game, max_actions)
    assert result.valid, (reply, result.errors)
    assert result.actions == expected, reply
    check_invariants(result, game, max_actions)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid(), st.text(max_size=20), st.integers(0, 10_000))
def test_damaged_replies_still_give_a_legal_plan(case, junk, where):
    game, max_actions, reply, _ = case
    where %= len(reply) + 1
    damaged = reply[:where] + junk + reply[where:]
    check_invariants(parse_reply(damaged, game, max_actions), game, max_actions)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(GAME_LIST), st.integers(1, 10), st.integers(1, 15))
def test_valid_iff_within_maximum(game, max_actions, n):
    result = parse_reply("move: [" + ", ".join(["noop"] * n) + "]", game, max_actions)
    assert result.valid == (n <= max_actions)
    assert result.actions == ([0] * n if n <= max_actions else [0])


# --- reasoning text: think blocks are the thought, never the plan ---------------------------------

LONG_THINK = "I weigh the options. " * 300 + "So: left."
# (note, text, rule, valid, names, thought or None)
THINK_CASES = [
    ("leading block", "<think>The ball is left.</think>\nmove: [left]", "leading", True, ["left"],
     "The ball is left."),
    ("moves inside the block are not the plan", "<think>maybe move: [fire, fire]</think>\nmove: [right]", "leading",
     True, ["right"], "maybe move: [fire, fire]"),
    ("block then a labelled thought", "<think>think</think>\nthought: go left\nmove: [left]", "leading", True,
     ["left"], "think go left"),
    ("block then a bare list", "<think>hmm</think>\n[left, fire]", "leading", True, ["left", "fire"], "hmm"),
    ("block then JSON", '<think>hmm {"move": ["fire"]}</think>{"move": ["left"], "thought": "x"}', "leading", True,
     ["left"], "hmm {\"move\": [\"fire\"]} x"),
    ("upper-case tags, spaces before", "\n  <THINK>a\nb</THINK>  move: [right]", "leading", True, ["right"], "a b"),
    ("empty block", "<think></think>\nthought: fine\nmove: [fire]", "leading", True, ["fire"], "fine"),
    ("block and nothing after", "<think>move: [left]</think>\n", "leading", False, ["noop"], "move: [left]"),
    ("leading rule: a lone closing tag is text", "I pick move: [fire, fire]</think>\nI think left.", "leading", True,
     ["fire", "fire"], None),
    ("think_tags: a lone closing tag ends the thinking", "I pick move: [fire, fire]</think>\nI think left.",
     "think_tags", False, ["noop"], "I pick move: [fire, fire] I think left."),
    ("think_tags: lone closing tag, then the move", "ball left\nmove: [fire]\n</think>\n\nmove: [left]", "think_tags",
     True, ["left"], "ball left move: [fire]"),
    ("leading rule: an unclosed leading block is all thinking", "<think>ball left, move: [left]", "leading", False,
     ["noop"], "ball left, move: [left]"),
    ("leading rule: unclosed after white space", "\n  <think>never closed move: [right]", "leading", False, ["noop"],
     "never closed move: [right]"),
    ("leading rule: a think tag further in is text", "thought: x\nmove: [left]\n<think>", "leading", True, ["left"],
     None),
    ("think_tags: an unclosed block is all thinking", "<think>ball left, move: [left]", "think_tags", False, ["noop"],
     "ball left, move: [left]"),
    ("think_tags: a block further in", "thought: x\n<think>move: [fire]</think>\nmove: [left]", "think_tags", True,
     ["left"], "move: [fire] x"),
    ("no tags at all", "thought: t\nmove: [left]", "think_tags", True, ["left"], "t"),
    ("<thinking> stays a thought label", "<thinking>ball left</thinking>\nmove: [left]", "leading", True, ["left"],
     "ball left"),
]


@pytest.mark.parametrize("case", THINK_CASES, ids=[c[0] for c in THINK_CASES])
def test_think_shapes(case):
    _, text, rule, valid, names, thought = case
    result = parse_reply(text, BREAKOUT, 10, reasoning=rule)
    assert (result.valid, result.names) == (valid, names), result.errors
    if thought is not None:
        assert result.thought == thought
    check_invariants(result, BREAKOUT, 10)


def test_all_thinking_says_so():
    r = parse_reply("<think>the ball</think>", BREAKOUT)
    assert r.rule == "no_move_line" and "all thinking" in r.errors[0] and r.thought == "the ball"


def test_long_thinking_keeps_its_end():
    r = parse_reply(f"<think>{LONG_THINK}</think>move: [left]", BREAKOUT)
    assert r.names == ["left"] and r.thought.startswith("…") and r.thought.endswith("So: left.")
    assert len(r.thought) == 4000


def test_unknown_reasoning_rule_is_a_value_error():
    with pytest.raises(ValueError):
        parse_reply("move: [left]", BREAKOUT, reasoning="tags")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(think=st.text(max_size=200), rule=st.sampled_from(["leading", "think_tags"]))
def test_any_thinking_never_becomes_the_plan(think, rule):
    think = think.replace("<", "(").replace(">", ")")  # no tags of its own inside
    r = parse_reply(f"<think>move: [fire] {think}</think>\nmove: [left]", BREAKOUT, reasoning=rule)
    assert r.names == ["left"]
    check_invariants(r, BREAKOUT, 10)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(think=st.text(max_size=200), lead=st.sampled_from(["", " ", "\n\n"]),
       rule=st.sampled_from(["leading", "think_tags"]))
def test_an_unclosed_leading_think_is_never_the_plan(think, lead, rule):
    think = think.replace("<", "(").replace(">", ")")
    r = parse_reply(f"{lead}<think>{think}\nmove: [right]", BREAKOUT, reasoning=rule)
    assert not r.valid and r.names == ["noop"] and r.rule == "no_move_line" and "never closed" in r.errors[0]
    check_invariants(r, BREAKOUT, 10)
