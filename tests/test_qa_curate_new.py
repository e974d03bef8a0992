"""A new question written by hand in the curator, from a template named with the game's objects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from screens.app import make_app
from tests.tui_helpers import run_async
from workstation.base.errors import UserError
from workstation.run.launch import QaCurateLaunch
from workstation.studies.qa import curate, templates
from workstation.studies.qa.qset import QA_CATEGORIES, QUESTIONS, read_set

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "qa-sample"


@pytest.fixture
def root(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "s")
    return tmp_path / "s"


def test_templates_name_the_game_and_its_objects():
    assert templates.object_names("freeway") == ["chicken", "car"]
    assert templates.object_names("qbert") == ["Q*bert"]
    q = templates.fill("freeway", "perception-detection", *templates.default_objects("freeway", "perception-detection"))
    assert q["question"] == "In Freeway, how many cars are visible?" and q["answer"] in q["choices"]
    q = templates.fill("breakout", "perception-spatial", "ball", "paddle")
    assert q["question"] == "In Breakout, is the ball to the left or to the right of the paddle?"
    assert q["choices"] == ["left", "right"]
    for cat in QA_CATEGORIES:
        for game in ("breakout", "pacman", "fishing_derby"):
            t = templates.fill(game, cat, *templates.default_objects(game, cat))
            assert t["question"].startswith("In ") and len(set(t["choices"])) == len(t["choices"]) >= 2
    assert "the object you control" in templates.fill("boxing", "motion-controlled", "white boxer", "black boxer")["question"]


def test_add_on_frames_appends_a_human_question(root):
    base = read_set(root)[0]
    before = len((root / QUESTIONS).read_text().splitlines())
    q = curate.add_on_frames(root, base["id"], "perception-spatial", "In Assault, is the cannon left?",
                             ["left", "right"], "left", status="edited")
    assert q["truth"] == "human" and q["status"] == "edited" and q["frames"] == base["frames"]
    assert q["source"]["from_question"] == base["id"] and q["id"] == "assault-h001"
    assert read_set(root)[-1] == q and len((root / QUESTIONS).read_text().splitlines()) == before + 1
    with pytest.raises(UserError):
        curate.add_on_frames(root, base["id"], "perception-spatial", "?", ["left", "right"], "left", status="proposed")


@run_async
async def test_write_a_new_question_from_a_template(root):
    qs = read_set(root)
    base = next(q for q in qs if q["game"] == "freeway" and q["category"] == "perception-spatial")
    app = make_app(QaCurateLaunch(root))
    async with app.run_test(size=(220, 70)) as pilot:
        cur = app.screen  # the curator: a screen of the one app
        cur.index = qs.index(base)
        cur._load()
        await pilot.press("w")
        question = cur.query_one("#qa-question")
        assert question.value == "In Freeway, is the car to the left or to the right of the chicken?"
        assert "the game's objects: chicken, car" in str(cur.query_one("#qa-meta").render())
        await pilot.press("1")  # object A: the next of the game's names
        assert question.value == "In Freeway, is the chicken to the left or to the right of the chicken?"
        await pilot.press("1", "c")  # back to the car; the next template: motion-target
        assert cur.draft["category"] == "motion-target"
        assert question.value == "In Freeway, across these frames, in which direction is the car moving?"
        cur.query_one("#qa-answer").value = "sideways"
        await pilot.press("a")
        assert "not saved" in str(cur.query_one("#qa-status").render()) and len(read_set(root)) == len(qs)
        cur.query_one("#qa-answer").value = "left"
        await pilot.press("ctrl+s")
        new = read_set(root)[-1]
        assert new["id"] == "freeway-h001" and new["category"] == "motion-target" and new["answer"] == "left"
        assert new["truth"] == "human" and new["status"] == "accepted" and new["frames"] == base["frames"]
        assert cur.question["id"] == "freeway-h001" and cur.draft is None
        # an edited template text is saved as edited; enter walks the fields and saves from the answer
        await pilot.press("w")
        cur.query_one("#qa-question").focus()
        await pilot.press("end", *" Look at the top lane.", "enter", "enter")
        assert cur.focused.id == "qa-answer"
        await pilot.press("enter")
        new = read_set(root)[-1]
        assert new["id"] == "freeway-h002" and new["status"] == "edited" and new["question"].endswith("top lane.")
        # esc out of a field, then esc again drops a draft and saves nothing
        await pilot.press("escape", "w")
        assert cur.draft is not None
        await pilot.press("escape")
        assert cur.draft is None and len(read_set(root)) == len(qs) + 2


@run_async
async def test_curator_opens_at_the_first_proposed_question(root, tmp_path):
    from tests.tui_helpers import record
    from workstation.studies.qa.curate import propose_from_recording

    rec = record(tmp_path / "recs", frames=30)
    q = propose_from_recording(root, rec.path, [3, 4, 5])
    app = make_app(QaCurateLaunch(root))
    async with app.run_test(size=(220, 70)) as pilot:
        cur = app.screen  # the curator: a screen of the one app
        assert cur.question["id"] == q["id"] and cur.index == len(read_set(root)) - 1
        cur.query_one("#qa-answer").value = "still"
        cur.query_one("#qa-answer").focus()
        await pilot.press("enter")
        done = read_set(root)[-1]
        assert done["id"] == q["id"] and done["answer"] == "still" and done["status"] == "edited"
