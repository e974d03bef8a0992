"""Held-out game variants (the ALE mode and difficulty): a run plays them, records them, verifies them,
and refuses ones the ROM does not have; runs without them keep their run ids."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.options import RunSpec
from workstation.run.start import start_run
from workstation.run.verify import verify
from workstation.store.recording import Recording


def _run(tmp_path, **protocol):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=120, **protocol)),
                  rewindable=False)
    drive(e)
    e.close()
    return Recording(e.writer.path)


def test_a_mode_changes_the_game_and_is_recorded_and_verified(tmp_path):
    default = _run(tmp_path / "a")
    variant = _run(tmp_path / "b", game_mode=4, game_difficulty=1)
    assert variant.manifest_record.protocol["game_mode"] == 4 and variant.manifest_record.protocol["game_difficulty"] == 1
    assert "game_mode" not in default.manifest_record.protocol, "runs without a variant keep their protocol (and id)"
    assert variant.manifest_record.run_id != default.manifest_record.run_id
    differ = any(not np.array_equal(default.frames.ram(i), variant.frames.ram(i)) for i in range(len(default.frames)))
    assert differ, "mode 4 with difficulty 1 is another game than the default"
    assert verify(variant).ok


def test_a_mode_the_rom_lacks_is_one_line_and_writes_nothing(tmp_path):
    p = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--game-mode", "99",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "--game-mode 99: breakout offers modes 0, 4" in p.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_grid_expands_mode_and_difficulty(tmp_path):
    from workstation.studies.batch.grid import load_grid

    grid = tmp_path / "g.toml"
    grid.write_text('name = "variants"\ngames = ["breakout"]\nseeds = [0]\n'
                    '[[settings]]\nlabel = "random"\nspec = "random"\n'
                    '[protocol]\nframes = 30\nmode = [0, 4]\n')
    cells = load_grid(grid).cells
    assert [c.spec.protocol.game_mode for c in cells] == [0, 4]
    assert [c.setting for c in cells] == ["random|mode=0", "random|mode=4"]
    bad = tmp_path / "bad.toml"
    bad.write_text(grid.read_text().replace("[0, 4]", "[0, 99]"))
    from workstation.base.errors import UserError

    with pytest.raises(UserError, match=r"line 9: protocol.mode: breakout has no mode 99"):
        load_grid(bad)
