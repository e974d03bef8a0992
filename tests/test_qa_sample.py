"""The committed sample QA set (recordings/qa-sample): it loads, every question is accepted,
it covers the ten QA games, and its answers agree with a pixels-only reading of the frames
it ships (the recordings it came from are not committed, so RAM cannot be recomputed)."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from workstation.studies.qa.pixels import blob_centre
from workstation.studies.qa.qset import FORMAT, read_set
from workstation.studies.qa.truth import Obj, direction, load_map, supported_games

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "qa-sample"
TEN = {"assault", "boxing", "breakout", "fishing_derby", "freeway", "gopher", "name_this_game",
       "pacman", "qbert", "riverraid"}


# decision rules of workstation/studies/qa/rules.py that only compare two objects: (mover, target, axis)
TOWARD = {"assault_aim": ("cannon", "enemy", 0), "gopher_chase": ("farmer", "gopher", 0),
          "name_this_game_shark": ("diver", "shark", 0), "boxing_line_up": ("white boxer", "black boxer", 1)}


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return read_set(SAMPLE)  # checks every line and that every frame file is in the set


def test_the_set_loads_with_only_accepted_questions_over_the_ten_games(questions):
    import json

    assert json.loads((SAMPLE / "set.json").read_text())["format"] == FORMAT
    assert 50 <= len(questions) <= 70
    assert {q["status"] for q in questions} == {"accepted"}
    assert {q["game"] for q in questions} == TEN <= set(supported_games())
    for game in TEN:
        assert sum(q["game"] == game for q in questions) >= 5, game
    assert len({q["id"] for q in questions}) == len(questions)
    assert len({q["question"] for q in questions}) == len(questions)


def test_the_set_ships_only_the_frames_it_uses(questions):
    used = {f["file"] for q in questions for f in q["frames"]}
    shipped = {f"frames/{p.name}" for p in (SAMPLE / "frames").iterdir()}
    assert shipped == used


def _centres(q: dict) -> dict[tuple[int, str, int], tuple[float, float] | None]:
    """Where the pixels put each object the answer was derived from, on each of its frames
    (the RAM box only says where to look; the centre comes from the PNG's coloured blobs)."""
    specs = {s.name: s for s in load_map(q["game"]).specs}
    out = {}
    for u in q["truth"]["ram"]:
        f = next(f for f in q["frames"] if f["index"] == u["frame"])
        rgb = np.asarray(Image.open(SAMPLE / f["file"]).convert("RGB"))
        obj = Obj(u["name"], "", u["index"], u["x"], u["y"], u["w"], u["h"], ())
        out[(u["frame"], u["name"], u["index"])] = blob_centre(specs[u["name"]], obj, rgb)
    return out


def test_answers_agree_with_the_pixels_of_the_shipped_frames(questions):
    checked = 0
    for q in questions:
        ask, a = q["truth"]["ask"], q["answer"]
        centres = _centres(q)
        assert all(c is not None for c in centres.values()), (q["id"], "an object of the answer is not drawn")
        if ask["kind"] == "count":
            assert int(a) == len(centres), q["id"]
        elif ask["kind"] == "half":
            h, w = np.asarray(Image.open(SAMPLE / q["frames"][0]["file"])).shape[:2]
            (cx, cy), = centres.values()
            got = {"left": cx < w / 2, "right": cx > w / 2, "top": cy < h / 2, "bottom": cy > h / 2}[a]
            assert got, (q["id"], a, cx, cy)
        elif ask["kind"] == "relation":
            i = q["frames"][0]["index"]
            (ax, ay) = centres[(i, ask["a"]["name"], ask["a"]["index"])]
            (bx, by) = centres[(i, ask["b"]["name"], ask["b"]["index"])]
            got = {"left": ax < bx, "right": ax > bx, "above": ay < by, "below": ay > by}[a]
            assert got, (q["id"], a, (ax, ay), (bx, by))
        elif ask["kind"] == "motion":
            o = ask["object"]
            first, last = q["frames"][0]["index"], q["frames"][-1]["index"]
            (x0, y0), (x1, y1) = centres[(first, o["name"], o["index"])], centres[(last, o["name"], o["index"])]
            if a == "still":
                assert abs(x1 - x0) <= 1.5 and abs(y1 - y0) <= 1.5, (q["id"], x1 - x0, y1 - y0)
            else:
                assert direction(x1 - x0, y1 - y0, 2) == a, (q["id"], a, x1 - x0, y1 - y0)
        elif ask["rule"] in TOWARD:  # move toward a target: the sign of target minus mover on the last frame
            mover, target, axis = TOWARD[ask["rule"]]
            at = {name: c for (_, name, _), c in centres.items()}
            d = at[target][axis] - at[mover][axis]
            assert abs(d) >= 8 and a == q["choices"][0 if d < 0 else 1], (q["id"], a, d)
        else:  # breakout_catch, freeway_cross need the track over frames: only that the objects are drawn
            assert ask["kind"] == "decision" and a in q["choices"], q["id"]
            continue
        checked += 1
    assert checked >= 45
