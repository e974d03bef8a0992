"""`qa gen` proposes only questions whose answer can vary in the game, and the curator's templates fit it
(Freeway: the chicken only moves up and down, ten cars)."""

from __future__ import annotations

from workstation.cli import main
from workstation.studies.qa import templates
from workstation.studies.qa.qset import read_set


def test_freeway_never_asks_which_half_the_chicken_is_in(tmp_path, capsys):
    assert main(["run", "--game", "freeway", "--agent", "random", "--seed", "1", "--frames", "300", "--quiet",
                 "--out", str(tmp_path / "recs")]) == 0
    assert main(["qa", "gen", "--recordings", str(tmp_path / "recs"), "--out", str(tmp_path / "s"),
                 "--per-game", "30", "--categories", "perception"]) == 0
    qs = read_set(tmp_path / "s")
    assert qs  # the cars' questions are still there
    for q in qs:
        ask = q["truth"]["ask"]
        assert not (ask["kind"] == "half" and ask["axis"] == "x" and ask["object"]["name"] == "chicken"), q["question"]


def test_freeway_templates_fit_the_game():
    count = templates.fill("freeway", "perception-detection", "car", "chicken")
    assert count["choices"][-1] == "10"  # ten cars can be on screen
    moving = templates.fill("freeway", "motion-controlled", "chicken", "car")
    assert "left" not in moving["choices"] and "up" in moving["choices"]
    decide = templates.fill("freeway", "decision-short", "chicken", "car")
    assert decide["choices"] == ["up", "down"] and "left or right" not in decide["question"]
    assert templates.fill("breakout", "decision-short", "paddle", "ball")["choices"] == ["left", "right"]
