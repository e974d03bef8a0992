"""Bad input an adversarial tester found: an output never lands inside another sealed artifact or a recording.

``run``, ``match``, ``arena``, ``batch``, ``judge`` and ``judge stuck`` given an ``--out`` inside a batch (its
``runs/`` folder, at any depth), a judge study, a stuck report or a recording, none of which is their input:
refused in one line, exit 2, before anything is written (``store/local_paths.refuse_inside_artifacts``). A
command's own artifact (a batch, a study, an arena resumed in place) stays its to write.

Real files: a batch of two random runs, a stuck report and a two-player match played on the real emulator.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bad_input_world import GRID, call, refused


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("trust_c")
    (base / "grid.toml").write_text(GRID)
    for args in (["batch", "grid.toml", "--out", "batch", "--plain", "--concurrency", "1"],
                 ["judge", "stuck", "batch", "--out", "stuck"],
                 ["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--frames", "30", "--out",
                  "matches", "--quiet"]):
        code, text = call(args, base)
        assert code == 0, text
    shutil.copytree(base / "batch", base / "source")  # what judge reads
    shutil.copytree(base / "matches", base / "replayed")  # what arena replays
    return base


@pytest.fixture
def world(pristine, tmp_path) -> Path:
    w = tmp_path / "w"
    shutil.copytree(pristine, w, symlinks=True)
    return w


def match_of(world: Path) -> str:
    (m,) = (world / "matches").iterdir()
    return f"matches/{m.name}"


def replayed(world: Path) -> str:
    (m,) = (world / "replayed").iterdir()
    return f"replayed/{m.name}"


RUN = ["run", "--game", "breakout", "--agent", "random", "--frames", "30"]
MATCH = ["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--frames", "30"]
ARENA = ["arena", "--game", "boxing", "--frames", "30", "--bootstrap", "0"]
PLACES = ["batch/runs", "batch/runs/deep/er", "batch/elsewhere", "stuck/x", "{match}/sub"]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("command", ["run", "match", "arena", "batch", "judge", "judge stuck"])
def test_an_output_inside_another_sealed_artifact_or_a_recording_is_refused(world, command, place):
    out = place.format(match=match_of(world))
    argv = {"run": RUN, "match": MATCH, "arena": [*ARENA, "--players", f"random,replay:{replayed(world)}"],
            "batch": ["batch", "grid.toml", "--plain"], "judge stuck": ["judge", "stuck", "source"],
            "judge": ["judge", "source", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1"]}[command]
    text = refused(world, [*argv, "--out", out], says=f"--out {out}")
    assert "never writes inside another artifact" in text, text


@pytest.mark.parametrize("command", [RUN, MATCH])
def test_a_new_recording_never_goes_into_a_sealed_artifact_itself(world, command):
    for out in ("batch", "stuck"):
        refused(world, [*command, "--out", out], says=f"--out {out} is a sealed ")


def test_a_command_resumes_and_replaces_its_own_artifact_and_writes_beside_others(world):
    assert call(["batch", "grid.toml", "--out", "batch", "--plain"], world)[0] == 0  # resumed: nothing to play
    assert call(["judge", "stuck", "batch", "--out", "stuck"], world)[0] == 0  # its own earlier report
    for argv in ([*RUN, "--out", "recs", "--quiet"], [*MATCH, "--out", "matches", "--quiet"]):
        code, text = call(argv, world)
        assert code == 0, text


def test_a_manifest_or_seal_of_something_else_above_the_output_refuses_nothing(world):
    """A web project's manifest.json, or a seal.json that is no seal of this workstation, marks no artifact."""
    project = world / "project"
    project.mkdir()
    (project / "manifest.json").write_text('{"name": "a web app"}')
    (project / "seal.json").write_text('{"sealed": true}')
    code, text = call([*RUN, "--out", "project/recordings", "--quiet"], world)
    assert code == 0, text


@pytest.mark.parametrize("command", ["arena", "batch", "judge", "judge stuck"])
def test_an_output_that_is_another_kind_of_sealed_artifact_is_refused(world, command):
    """A command resumes (or replaces) its own kind of artifact in place, never another kind: an arena, a batch, a
    study or a stuck report given as --out of another command is bad input (exit 2), not a damaged artifact."""
    out = "stuck" if command != "judge stuck" else "batch"
    argv = {"arena": [*ARENA, "--players", f"random,replay:{replayed(world)}"],
            "batch": ["batch", "grid.toml", "--plain"], "judge stuck": ["judge", "stuck", "source"],
            "judge": ["judge", "source", "--judge", "compat:j", "--base-url", "http://127.0.0.1:9/v1"]}[command]
    text = refused(world, [*argv, "--out", out], says=f"--out {out} ")
    assert "sealed" in text, text
