"""Reading a reply as one choice: a corpus of real-looking replies, and it never raises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workstation.studies.qa.answers import lettered, parse_choice

DIRS = ["up", "down", "left", "right", "still"]
DIAG = ["up-left", "up-right", "down-left", "down-right", "still"]
HALF = ["left half", "right half"]
LR = ["left", "right"]
COUNT = ["0", "1", "2", "3"]

CORPUS = [
    ("left", DIRS, "left"),
    ("Left.", DIRS, "left"),
    ("Answer: left", DIRS, "left"),
    ("answer - RIGHT", DIRS, "right"),
    ("**Answer:** down", DIRS, "down"),
    ("## Final answer\n\n**up**", DIRS, "up"),
    ("`still`", DIRS, "still"),
    ("The ball is moving to the left.", DIRS, "left"),
    ("Comparing the frames, the paddle has not moved: it is not moving.", DIRS, "still"),
    ("The object moves upward between 3.40s and 3.67s.", DIRS, "up"),
    ("B", DIRS, "down"),
    ("(C)", DIRS, "left"),
    ("D) right", DIRS, "right"),
    ("Final answer: (E)", DIRS, "still"),
    ("The answer is B.", LR, "right"),
    ("It moves up-left across the frames.", DIAG, "up-left"),
    ("down-right", DIAG, "down-right"),
    ("The ball travels down and to the right. Answer: down-right", DIAG, "down-right"),
    ("It is in the left half of the screen.", HALF, "left half"),
    ("right", HALF, "right half"),
    ("There are 3 enemies.", COUNT, "3"),
    ("Answer: 2", COUNT, "2"),
    ("The chicken should wait for the car.", ["up", "wait"], "wait"),
    ("Step up now.", ["up", "wait"], "up"),
    ("It is below the paddle.", ["above", "below"], "below"),
    ("Thinking... the ball could go left or right; I'd say the answer is right.", LR, "right"),
    # no answer, or two without a marked one: wrong, and kept
    ("The ball is moving left, not right.", LR, None),
    ("I cannot tell from these frames.", DIRS, None),
    ("", DIRS, None),
    ("Z", LR, None),
    ("Answer: sideways", DIRS, None),
]


@pytest.mark.parametrize("reply,choices,expected", CORPUS)
def test_corpus(reply, choices, expected):
    assert parse_choice(reply, choices) == expected


def test_odd_inputs():
    assert parse_choice(None, LR) is None
    assert parse_choice("left", []) is None
    assert lettered(LR) == "(A) left  (B) right"


@settings(max_examples=300, deadline=None)
@given(st.text(), st.lists(st.text(min_size=0, max_size=12), max_size=6))
def test_never_raises(reply, choices):
    got = parse_choice(reply, choices)
    assert got is None or got in choices


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DIRS + DIAG), st.sampled_from(["{}", "Answer: {}", "**{}**", "I think it is {}."]))
def test_a_stated_choice_is_read_back(choice, form):
    choices = DIAG if "-" in choice else DIRS
    assert parse_choice(form.format(choice), choices) == choice
