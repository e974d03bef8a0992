"""`workstation qa gen` on fresh random-agent recordings: a valid, deterministic, balanced set
whose answers agree with the pixels of the frames it stores."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from workstation.base.errors import UserError
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.studies.qa.qset import FORMAT, QA_CATEGORIES, paper_time, read_set

GAMES = ("breakout", "freeway", "boxing", "gopher")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("recs")
    for game in GAMES:
        engine = start_run(RunSpec(game=game, agent="random", seed=1, protocol=Protocol(frames=450), out=str(out)),
                           rewindable=False)
        try:
            drive(engine)
        finally:
            engine.close()
    return out


@pytest.fixture(scope="module")
def other_recordings(tmp_path_factory) -> Path:
    """The other six QA games, for the pixel check over all ten."""
    out = tmp_path_factory.mktemp("recs_more")
    for game in ("assault", "fishing_derby", "name_this_game", "pacman", "qbert", "riverraid"):
        engine = start_run(RunSpec(game=game, agent="random", seed=1, protocol=Protocol(frames=450), out=str(out)),
                           rewindable=False)
        try:
            drive(engine)
        finally:
            engine.close()
    return out


def gen(recordings: Path, out: Path, *extra: str) -> int:
    return main(["qa", "gen", "--recordings", str(recordings), "--out", str(out), "--per-game", "10", *extra])


def _made(recordings: Path, out: Path, *extra: str) -> tuple[Path, str]:
    """A set made once for the module (the tests that only read it share it): its directory and what gen printed."""
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert gen(recordings, out, *extra) == 0
    return out, printed.getvalue()


@pytest.fixture(scope="module")
def set3(recordings, tmp_path_factory) -> tuple[Path, str]:
    return _made(recordings, tmp_path_factory.mktemp("set3") / "s", "--seed", "3")


@pytest.fixture(scope="module")
def set4(recordings, tmp_path_factory) -> tuple[Path, str]:
    return _made(recordings, tmp_path_factory.mktemp("set4") / "s", "--seed", "4")


def test_gen_makes_a_valid_set(set3):
    root, printed = set3
    assert json.loads((root / "set.json").read_text())["format"] == FORMAT
    qs = read_set(root)
    assert {q["game"] for q in qs} == set(GAMES)
    assert {q["category"] for q in qs} >= {"perception-detection", "perception-spatial", "motion-target",
                                          "motion-controlled", "decision-short"}
    titles = {"breakout": "Breakout (", "freeway": "Freeway (", "boxing": "Boxing (", "gopher": "Gopher ("}
    texts = {}
    for q in qs:
        assert q["question"].startswith(titles[q["game"]]) and q["frames"][0]["t"] in q["question"]
        assert texts.setdefault(q["question"], q["answer"]) == q["answer"]  # a text has one answer
        assert q["status"] == "proposed" and q["answer"] in q["choices"]
        assert [f["index"] for f in q["frames"]] == q["source"]["frames"]
        assert all(f["t"] == paper_time(f["index"]) for f in q["frames"])
        assert q["truth"]["ram"] and all(u["values"] for u in q["truth"]["ram"])
    assert paper_time(102) == "3.40s"
    assert "questions from 4 recording(s)" in printed


def test_gen_is_deterministic_for_a_seed(recordings, set3, set4, tmp_path):
    assert gen(recordings, tmp_path / "b", "--seed", "3") == 0
    a, b, c = ((root / "questions.jsonl").read_text() for root in (set3[0], tmp_path / "b", set4[0]))
    assert a == b
    assert a.replace(str(set3[0]), "") != c.replace(str(set4[0]), "")


def test_answers_are_balanced(set3, set4):
    for root, _ in (set3, set4):
        per = defaultdict(Counter)
        for q in read_set(root):
            per[(q["game"], q["category"])][q["answer"]] += 1
        for key, counts in per.items():
            assert max(counts.values()) - min(counts.values()) <= 1, (root, key, counts)


def _pixels(root: Path, q: dict, frame: int, colour) -> np.ndarray:
    f = next(f for f in q["frames"] if f["index"] == frame)
    rgb = np.asarray(Image.open(root / f["file"]).convert("RGB"))
    return (rgb == np.array(colour, np.uint8)).all(-1)


def _centre(mask: np.ndarray, box) -> tuple[float, float]:
    """Centre of the coloured pixels near a box (x0, y0, x1, y1), read from the PNG alone."""
    x0, y0, x1, y1 = box
    sub = mask[max(0, y0):y1, max(0, x0):x1]
    ys, xs = np.nonzero(sub)
    assert len(xs), "the object's colour is not where the truth says"
    return xs.mean() + max(0, x0), ys.mean() + max(0, y0)


def test_breakout_answers_agree_with_the_pixels(recordings, tmp_path):
    """A pixel reading: the paddle is the red run in rows 189-192, the ball the red pixels
    near where the set says it is; motion and sides from those pixels alone."""
    assert gen(recordings, tmp_path / "s", "--categories", "perception-spatial", "motion") == 0
    root = tmp_path / "s"
    red = (200, 72, 72)
    checked = 0
    for q in read_set(root):
        if q["game"] != "breakout":
            continue
        idx = [f["index"] for f in q["frames"]]
        if any(u["name"] == "ball" and u["y"] < 64 for u in q["truth"]["ram"]):
            continue  # among the red bricks this reading cannot tell the ball from a brick
        if q["category"] in ("perception-spatial", "motion-target"):  # red pixels within 3 px of the box
            boxes = {u["frame"]: u for u in q["truth"]["ram"] if u["name"] == "ball"}
            ball = [_centre(_pixels(root, q, i, red), (boxes[i]["x"] - 3, boxes[i]["y"] - 3, boxes[i]["x"] + 5,
                                                       boxes[i]["y"] + 7)) for i in idx]
        paddle = [_centre(_pixels(root, q, i, red), (8, 189, 152, 193)) for i in idx]
        if q["category"] == "perception-spatial" and "left or to the right" in q["question"]:
            first_ball = q["question"].index("ball") < q["question"].index("paddle")
            dx = (ball[0][0] - paddle[0][0]) * (1 if first_ball else -1)
            assert q["answer"] == ("left" if dx < 0 else "right"), q
        elif q["category"] == "motion-target":
            dx, dy = ball[-1][0] - ball[0][0], ball[-1][1] - ball[0][1]
            assert q["answer"] == f"{'up' if dy < 0 else 'down'}-{'left' if dx < 0 else 'right'}", q
        elif q["category"] == "motion-controlled":
            dx = paddle[-1][0] - paddle[0][0]
            assert q["answer"] == ("still" if dx == 0 else "left" if dx < 0 else "right"), q
        else:
            continue
        checked += 1
    assert checked >= 4


def test_categories_option_and_bad_input(recordings, tmp_path):
    assert gen(recordings, tmp_path / "s", "--categories", "decision") == 0
    assert {q["category"] for q in read_set(tmp_path / "s")} <= {"decision-short", "decision-long"}
    assert gen(recordings, tmp_path / "s") == 2  # the set exists: refuse, one line
    assert gen(recordings, tmp_path / "t", "--categories", "vibes") == 2
    assert main(["qa", "gen", "--recordings", str(tmp_path / "nothing"), "--out", str(tmp_path / "u")]) == 2
    assert len(QA_CATEGORIES) == 6


def test_malformed_set_is_one_line(set3, tmp_path):
    shutil.copytree(set3[0], tmp_path / "s")
    path = tmp_path / "s" / "questions.jsonl"
    lines = path.read_text().splitlines()
    q = json.loads(lines[0])
    from workstation.base.errors import DamagedArtifact

    path.write_text("\n".join([json.dumps(dict(q, answer=q["choices"][-1]))] + lines[1:]) + "\n")
    with pytest.raises(DamagedArtifact, match="question set .* is damaged: questions.jsonl was changed"):
        read_set(tmp_path / "s")  # a sealed set edited by hand, even into a well-formed line
    (tmp_path / "s" / "seal.json").unlink()  # unsealed: each line is still checked, field by field
    for broken, needle in ((dict(q, answer="sideways"), "answer"), (dict(q, category="vibes"), "category"),
                           ({k: v for k, v in q.items() if k != "truth"}, "truth"),
                           (dict(q, frames=[dict(q["frames"][0], t="1s")]), "frames")):
        path.write_text("\n".join([json.dumps(broken)] + lines[1:]) + "\n")
        with pytest.raises(UserError) as e:
            read_set(tmp_path / "s")
        assert needle in str(e.value) and "line 1" in str(e.value) and "\n" not in str(e.value)
    path.write_text("{not json\n")
    with pytest.raises(UserError):
        read_set(tmp_path / "s")
    (tmp_path / "s" / "set.json").write_text('{"format": "other/9"}')
    with pytest.raises(UserError) as e:
        read_set(tmp_path / "s")
    assert "other/9" in str(e.value)


def test_a_later_line_replaces_an_earlier_one(set3, tmp_path):
    shutil.copytree(set3[0], tmp_path / "s")
    path = tmp_path / "s" / "questions.jsonl"
    first = json.loads(path.read_text().splitlines()[0])
    with open(path, "a") as f:
        f.write(json.dumps(dict(first, status="accepted")) + "\n")
    qs = read_set(tmp_path / "s")
    assert qs[0]["id"] == first["id"] and qs[0]["status"] == "accepted"
    assert len([q for q in qs if q["id"] == first["id"]]) == 1


def _component_centre(rgb: np.ndarray, colours, box, region=None) -> tuple[float, float] | None:
    """Centre of the same-coloured blob that overlaps a box most, found in the PNG alone."""
    from scipy import ndimage

    mask = np.zeros(rgb.shape[:2], bool) if colours else (rgb != 0).any(-1)
    for c in colours:
        mask |= (rgb == np.array(c, np.uint8)).all(-1)
    if region:
        keep = np.zeros_like(mask)
        keep[region[1]:region[3], region[0]:region[2]] = True
        mask &= keep
    labels, n = ndimage.label(mask, structure=np.ones((3, 3)))
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    inside = labels[max(0, y0):y1, max(0, x0):x1]
    ids, counts = np.unique(inside[inside > 0], return_counts=True)
    if not len(ids):
        return None
    # the object may be drawn in several blobs (a multi-coloured sprite): take every blob it touches
    ys, xs = np.nonzero(np.isin(labels, ids))
    return (xs.min() + xs.max() + 1) / 2, (ys.min() + ys.max() + 1) / 2


def test_answers_agree_with_blobs_in_the_frames(recordings, other_recordings, tmp_path):
    """Over the ten QA games, every left/right, above/below, which-half and motion answer,
    recomputed from the coloured blobs of the stored PNGs (not from RAM), agrees with the set's."""
    from workstation.studies.qa.truth import direction, load_map

    assert main(["qa", "gen", "--recordings", str(recordings), str(other_recordings), "--out", str(tmp_path / "s"),
                 "--per-game", "30", "--categories", "perception", "motion"]) == 0
    root = tmp_path / "s"
    checked = 0
    for q in read_set(root):
        if q["category"] == "perception-detection" and q["question"].find("How many") >= 0:
            continue
        spec_of = {s.name: s for s in load_map(q["game"]).specs}
        centres = []
        for u in q["truth"]["ram"]:
            f = next(f for f in q["frames"] if f["index"] == u["frame"])
            rgb = np.asarray(Image.open(root / f["file"]).convert("RGB"))
            spec = spec_of[u["name"]]
            centres.append(_component_centre(rgb, spec.colour_of(u["index"]),
                                             (u["x"], u["y"], u["x"] + u["w"], u["y"] + u["h"]), spec.region))
        assert all(c is not None for c in centres), q["id"]
        a = q["answer"]
        if q["category"] == "perception-detection":
            h = np.asarray(Image.open(root / q["frames"][0]["file"])).shape[0]
            cx, cy = centres[0]
            got = {"left": cx < 80, "right": cx > 80, "top": cy < h / 2, "bottom": cy > h / 2}[a]
        elif q["category"] == "perception-spatial":
            (ax, ay), (bx, by) = centres
            got = {"left": ax < bx, "right": ax > bx, "above": ay < by, "below": ay > by}[a]
        else:
            (x0, y0), (x1, y1) = centres[0], centres[-1]
            got = (a == "still" and abs(x1 - x0) <= 1.5 and abs(y1 - y0) <= 1.5) or direction(x1 - x0, y1 - y0, 2) == a
        assert got, (q["id"], q["question"], a, centres)
        checked += 1
    assert checked >= 100
