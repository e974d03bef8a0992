"""Instruction levels (issue 30): ``--guide visual | steps | goal`` next to the pack's full and short guides.

Real parts: the default pack's files, copies of it on disk, the real emulator, and a real OpenAI SDK client
talking to the local fake provider.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_provider import SPECS, FakeProvider, fake, fake_server, keys  # noqa: F401
from workstation.base.locations import default_pack_dir
from workstation.commands import prompts as packs_command
from workstation.engine.promptpack import GUIDE_CHOICES, LEVELS, PromptPackError, level_digest, load_pack
from workstation.game.games import GAMES
from workstation.game.protocol import SETTING, Protocol
from workstation.run.drive import drive
from workstation.run.options import RunSpec, SpecError, preflight
from workstation.run.start import start_run
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parents[1]
COLOURS = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "white", "black", "grey", "brown",
           "tan", "teal", "lilac", "amber")


def test_the_levels_are_declared_once():
    assert SETTING["guide"].choices == GUIDE_CHOICES == packs_command.GUIDE_CHOICES
    assert packs_command.LEVELS == LEVELS == ("visual", "steps", "goal")


def test_default_digest_and_existing_run_ids_did_not_change():
    assert load_pack().digest == "b12d14683dbd5977"
    assert RunSpec(game="breakout").identity() == "aa9b4dc7e9bfe4be"
    assert RunSpec(game="qbert", protocol=Protocol(guide="short")).identity() == "49cf58ab73a6a7f9"


@pytest.mark.parametrize("key", list(GAMES))
def test_each_game_has_three_levels_goal_shortest_visual_longest(key):
    pack = load_pack()
    goal, steps, visual = (pack.guide(key, lv) for lv in ("goal", "steps", "visual"))
    assert len(goal) < len(steps) < len(visual)
    assert visual.startswith(steps.rstrip()) and "What you see on screen:" in visual
    assert len(re.findall(r"[.!?](\s|$)", goal)) <= 2, goal
    assert "`" not in goal, "the goal level names no action"
    game = pack.game(key)
    missing = [a for a in game.action_names if not re.search(rf"(?<![a-z]){a}(?![a-z])", steps)]
    if key == "journey_escape":
        missing.remove("downleftfire")  # as its full guide: "...fire move the same way but fast"
    assert not missing, f"{key} steps never names {missing}"
    said = [c for c in COLOURS if re.search(rf"\b{c}\b", steps.lower())]
    assert not said, f"{key} steps describe appearance: {said}"
    looks = visual[len(steps.rstrip()):].lower()
    assert sum(bool(re.search(rf"\b{c}\b", looks)) for c in COLOURS) >= 2, f"{key} visual names too few colours"


def test_visual_descriptions_agree_with_the_qa_ram_maps():
    """Where the QA truth names an object's colour, the visual level says the same."""
    pack = load_pack()
    for key, words in {"boxing": ("white boxer", "black boxer"), "breakout": ("red bar", "red square"),
                       "freeway": ("yellow bird",), "fishing_derby": ("yellow", "black shape"),
                       "riverraid": ("yellow plane",), "name_this_game": ("green diver", "grey fish"),
                       "qbert": ("orange figure",), "pacman": ("pale yellow",)}.items():
        text = pack.guide(key, "visual")
        for w in words:
            assert w in text, f"{key}: {w!r}"


def test_pong_guide_tells_the_serve_rule():
    text = (ROOT / "prompts/twoplayer/pong.md").read_text()
    guide, short = text.split("## guide")[1].split("## short")
    assert "120 frames" in guide and "serve" in guide.lower() and "loses a point" in guide
    assert "120 frames" in short.split("## side")[0]


def _copy_pack(tmp_path: Path) -> Path:
    dest = tmp_path / "pack"
    shutil.copytree(default_pack_dir(), dest)
    return dest


def test_level_files_are_outside_the_digest_but_inside_the_run_id(tmp_path):
    dest = _copy_pack(tmp_path)
    base = load_pack(dest)
    spec = RunSpec(game="freeway", prompts=str(dest), protocol=Protocol(guide="steps"))
    before, before_full = spec.identity(), RunSpec(game="freeway", prompts=str(dest)).identity()
    f = dest / "games/freeway.steps.md"
    f.write_text(f.read_text() + "One more line.\n")
    after = load_pack(dest)
    assert after.digest == base.digest  # the pack's digest (and every full/short run id) is as before
    assert RunSpec(game="freeway", prompts=str(dest)).identity() == before_full
    assert spec.identity() != before  # but the steps run is another run
    assert level_digest(after, "freeway", "full") is None


def test_a_pack_with_some_level_files_is_refused_naming_the_missing_one(tmp_path):
    dest = _copy_pack(tmp_path)
    (dest / "games/qbert.looks.md").unlink()
    with pytest.raises(PromptPackError, match=r"games/qbert\.looks\.md is missing"):
        load_pack(dest)
    (dest / "games/qbert.looks.md").write_text("  \n")
    with pytest.raises(PromptPackError, match=r"games/qbert\.looks\.md is empty"):
        load_pack(dest)


def _pack_without_levels(tmp_path: Path) -> Path:
    dest = _copy_pack(tmp_path)
    for f in (dest / "games").glob("*.md"):
        if f.name.count(".") == 2 and not f.name.endswith(".short.md"):
            f.unlink()
    return dest


def test_a_pack_without_levels_says_so_and_a_level_run_is_refused_before_anything_is_written(tmp_path):
    dest = _pack_without_levels(tmp_path)
    pack = load_pack(dest)
    assert pack.levels == ()
    assert "lacks the instruction levels visual, steps, goal" in packs_command.levels_line(pack)
    out = tmp_path / "runs"
    with pytest.raises(SpecError) as e:
        preflight(RunSpec(game="breakout", prompts=str(dest), out=str(out), protocol=Protocol(guide="visual")))
    assert e.value.field == "guide" and "has no instruction levels" in str(e.value)
    r = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--guide", "goal",
                        "--prompts", str(dest), "--frames", "30", "--out", str(out)],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "--guide goal" in r.stderr
    assert not out.exists()


def test_prompts_show_each_level(capsys):
    lengths = {}
    for level in GUIDE_CHOICES:
        ns = type("A", (), {"pack": "default", "game": "seaquest", "guide": level})()
        assert packs_command._show(ns) == 0
        out = capsys.readouterr().out
        assert f"guide {level} (" in out and "instruction levels: visual, steps, goal" in out
        lengths[level] = len(out)
    assert lengths["goal"] < lengths["steps"] < lengths["visual"]


def test_prompts_show_refuses_a_level_the_pack_lacks(tmp_path):
    dest = _pack_without_levels(tmp_path)
    r = subprocess.run([sys.executable, "-m", "workstation", "prompts", "show", str(dest), "--game", "pacman",
                        "--guide", "steps"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2 and "prompts show --guide steps" in r.stderr and "Traceback" not in r.stderr


def test_the_same_run_at_three_levels_sends_three_prompts(fake: FakeProvider, keys, tmp_path):  # noqa: F811
    """The hidden check's shape: visual, steps, goal -> three different first prompts (goal shortest, visual
    longest), each level in the recorded protocol and its own run id."""
    sent, ids = {}, {}
    for level in LEVELS:
        fake.reset()
        spec = RunSpec(game="breakout", agent=SPECS["openai"], out=str(tmp_path / level),
                       protocol=Protocol(frames=30, guide=level)).with_values(base_url=fake.url("openai"))
        e = start_run(spec)
        try:
            drive(e)
        finally:
            e.close()
        rec = Recording(e.writer.path)
        assert rec.manifest_record.protocol["guide"] == level
        assert rec.manifest_record.run_id == spec.identity()
        ids[level] = rec.manifest_record.run_id
        assert fake.seen, "the model was asked"
        sent[level] = str(fake.seen[0].body)
    assert len(set(sent.values())) == 3 and len(set(ids.values())) == 3
    assert len(sent["goal"]) < len(sent["steps"]) < len(sent["visual"])
    assert "What you see on screen" in sent["visual"] and "What you see on screen" not in sent["steps"]


def test_a_match_refuses_a_level_before_anything_is_written(tmp_path, capsys):
    from workstation.cli import main

    out = tmp_path / "matches"
    try:
        code = main(["match", "--game", "pong", "--p1", "random", "--p2", "random", "--guide", "steps", "--frames",
                     "30", "--out", str(out), "--quiet"])
    except SystemExit as e:
        code = e.code
    assert code == 2 and "two-player games have the guides full and short only" in capsys.readouterr().err
    assert not out.exists()
