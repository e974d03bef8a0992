"""The committed sample still reads, re-executes and rebuilds its prompts (format compatibility)."""

from __future__ import annotations

from pathlib import Path

from workstation.run.request import rebuild_prompt
from workstation.run.verify import verify
from workstation.store.recording import Recording

SAMPLE = Path(__file__).resolve().parent.parent / "recordings" / "sample" / "breakout-random-s0"


def test_sample_recording_verifies_and_rebuilds_prompts():
    rec = Recording(SAMPLE)
    assert rec.complete and rec.summary_record.frames == 900 and len(rec.frames) == 901
    assert verify(rec).ok
    for turn in (0, 5, len(rec.turn_records) - 1):
        prompt = rebuild_prompt(rec, turn)
        assert prompt.digest() == rec.turn_records[turn].prompt["digest"]
        assert prompt.image_frames == rec.turn_records[turn].prompt["images"]


RULE1 = Path(__file__).resolve().parent / "data" / "rule1-breakout-random-s0"


def test_a_recording_made_under_game_over_rule_1_still_verifies():
    """The sample as committed before rule 2 (no `rules` in its manifest; no game over in it):
    verify reads it as rule 1 and re-executes it. tests/test_game_over.py checks rule 1 on a
    run that does end a game."""
    rec = Recording(RULE1)
    assert rec.manifest_record.rules is None and rec.manifest_record.rule_version == 1
    assert verify(rec).ok
    new = Recording(SAMPLE)
    assert new.manifest_record.rules == 2 and new.manifest_record.run_id == rec.manifest_record.run_id
