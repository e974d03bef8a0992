"""Bad input an adversarial tester found (issue 26): export, prompt packs and imports never write inside their
inputs, at any depth (symlinks and ``..`` resolved), and refuse in one line, exit 2, before anything is written.

Real files: a run and a two-player match played on the real emulator, a harness checkout shaped like the public
one, a harness run directory to import.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.bad_input_world import call, refused


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("trust_b")
    for args in (["run", "--game", "breakout", "--agent", "random", "--frames", "30", "--out", "recs"],
                 ["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--frames", "30", "--out",
                  "matches"]):
        code, text = call([*args, "--quiet"], base)
        assert code == 0, text
    return base


@pytest.fixture
def world(pristine, tmp_path) -> Path:
    w = tmp_path / "w"
    shutil.copytree(pristine, w, symlinks=True)
    return w


def rec_of(world: Path) -> str:
    (rec,) = (world / "recs").iterdir()
    return f"recs/{rec.name}"


def match_of(world: Path) -> str:
    (m,) = (world / "matches").iterdir()
    return f"matches/{m.name}"


# ---------------------------------------------------------------------------------------------------- export

@pytest.mark.parametrize("name", ["x.gif", "x.mp4", "x.html", "turns.html", "sub/../x.gif"])
def test_export_never_writes_inside_the_recording(world, name):
    rec = rec_of(world)
    if name.startswith("sub/"):
        (world / rec / "sub").mkdir()
    refused(world, ["export", rec, "-o", f"{rec}/{name}"], says="is inside the input")


def test_export_never_writes_inside_a_match(world):
    m = match_of(world)
    refused(world, ["export", m, "--out", f"{m}/x.html"], says="is inside the input")


def test_export_sees_through_symlinks_and_dotdot(world):
    rec = rec_of(world)
    os.symlink(rec, world / "lnk")
    refused(world, ["export", rec, "-o", "lnk/x.gif"], says="is inside the input")
    refused(world, ["export", "lnk", "-o", f"{rec}/x.gif"], says="is inside the input")
    refused(world, ["export", rec, "-o", f"recs/../{rec}/x.gif"], says="is inside the input")


def test_export_never_writes_inside_a_compared_run(world):
    rec = rec_of(world)
    other = world / "other"
    shutil.copytree(world / rec, other)
    refused(world, ["export", "other", "--compare", rec, "-o", f"{rec}/ab.html"], says="is inside the input")


def test_export_outside_its_inputs_still_writes(world):
    code, text = call(["export", rec_of(world), "-o", "x.html", "--quiet"], world)
    assert code == 0, text
    assert (world / "x.html").is_file()


def test_export_function_the_screens_call_refuses_too(world):
    from workstation.base.errors import UserError
    from workstation.studies.export.files import export

    rec = world / rec_of(world)
    with pytest.raises(UserError, match="is inside the input"):
        export([rec], rec / "x.mp4")
    assert not (rec / "x.mp4").exists()


def test_inspect_never_writes_inside_a_source_nor_through_a_link_to_one(world):
    rec = rec_of(world)
    refused(world, ["export", rec, "--inspect", f"{rec}/logs"], says="is inside the input")
    os.symlink(rec, world / "lnk")
    refused(world, ["export", rec, "--inspect", "lnk/logs"], says="is inside the input")


# ---------------------------------------------------------------------------------------------------- packs

def test_a_harness_with_none_of_the_game_modules_is_refused_not_made_a_pack_of_no_guides(world):
    from tests.harness_shape import make_harness
    from workstation.game.games import GAMES

    make_harness(world / "hnone", skip=tuple(GAMES))
    refused(world, ["prompts", "from-atari-bench", "hnone", "--out", "pk"], says="GAME.py")
    refused(world, ["prompts", "from-atari-bench", "hnone", "--out", "a/b/pk"], says="no readable game prompt")


@pytest.mark.parametrize("out", ["hfull/games/pk", "hl/pk", "recs/../hfull/pk"])
def test_a_pack_is_never_written_inside_the_harness_checkout(world, out):
    from tests.harness_shape import make_harness

    make_harness(world / "hfull")
    os.symlink("hfull/games", world / "hl")
    os.symlink("hfull", world / "checkout")
    refused(world, ["prompts", "from-atari-bench", "hfull", "--out", out], says="is inside the harness checkout")
    refused(world, ["prompts", "from-atari-bench", "checkout", "--out", "hfull/pk"], says="is inside the harness")


def test_a_pack_outside_the_checkout_is_still_made_with_its_directories(world):
    from tests.harness_shape import make_harness

    make_harness(world / "hfull")
    code, text = call(["prompts", "from-atari-bench", "hfull", "--out", "a/b/pk"], world)
    assert code == 0, text
    assert "21 game guides" in text and (world / "a/b/pk/template.toml").is_file()



@pytest.mark.parametrize("name", ["vocabulary.toml", "warmup.toml"])
def test_prompts_show_and_diff_refuse_a_pack_whose_optional_file_is_a_directory(world, name):
    """Not taken for absent (the default words or warm-up used in silence)."""
    from tests.harness_shape import make_harness

    make_harness(world / "hfull")
    code, text = call(["prompts", "from-atari-bench", "hfull", "--out", "pk"], world)
    assert code == 0, text
    (world / "pk" / name).unlink()
    (world / "pk" / name).mkdir()
    refused(world, ["prompts", "show", "pk", "--game", "breakout"], says=f"{name} is not a file")
    refused(world, ["prompts", "diff", "default", "pk"], says=f"{name} is not a file")

# ---------------------------------------------------------------------------------------------------- import

HARNESS_RUN = "hrun/runs/breakout/random/0101_000000_cfg_001_run_001"


@pytest.fixture
def harness_world(world) -> Path:
    from tests.test_import_atari_bench import write_harness_run
    from workstation.store.recording import Recording

    made = write_harness_run(Recording(world / rec_of(world)), world / "hrun", png_frames=(0, 15))
    assert made == world / HARNESS_RUN
    return world


@pytest.mark.parametrize("out", [f"{HARNESS_RUN}/imp", f"{HARNESS_RUN}/frames", HARNESS_RUN, "hl/imp",
                                 f"recs/../{HARNESS_RUN}/x", "hrun/runs/breakout"])
def test_import_never_writes_inside_a_run_directory(harness_world, out):
    os.symlink(HARNESS_RUN, harness_world / "hl")
    if out == "hrun/runs/breakout":  # a directory above the run is outside it: that one is imported
        code, text = call(["import", "atari-bench", HARNESS_RUN, "--out", out], harness_world)
        assert code == 0, text
        return
    refused(harness_world, ["import", "atari-bench", HARNESS_RUN, "--out", out], says="is inside the run directory")


def test_import_default_out_inside_the_run_directory_is_refused(harness_world):
    refused(harness_world / HARNESS_RUN, ["import", "atari-bench", "."], says="is inside the run directory")


def test_import_checks_every_run_before_importing_the_first(harness_world):
    import json

    other = harness_world / "other-run"
    shutil.copytree(harness_world / HARNESS_RUN, other)
    summary = json.loads((other / "summary.json").read_text())
    summary["game"] = "nosuchgame"
    (other / "summary.json").write_text(json.dumps(summary))
    refused(harness_world, ["import", "atari-bench", HARNESS_RUN, "other-run", "--out", "imp"], says="nosuchgame")
    assert not (harness_world / "imp").exists()


@pytest.mark.parametrize("damage", ["file", "empty", "garbage", "list", "turns"])
def test_import_refuses_a_run_directory_it_cannot_read(harness_world, damage):
    run = harness_world / HARNESS_RUN
    target = {"file": f"{HARNESS_RUN}/summary.json", "empty": "empty"}.get(damage, HARNESS_RUN)
    if damage == "empty":
        (harness_world / "empty").mkdir()
    elif damage == "garbage":
        (run / "summary.json").write_bytes(b"\xff not json")
    elif damage == "list":
        (run / "summary.json").write_text("[]")
    elif damage == "turns":
        (run / "turns.jsonl").write_text("[1, 2]\n42\n")
    refused(harness_world, ["import", "atari-bench", target, "--out", "imp"])
