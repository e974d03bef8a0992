"""The skill slot: a run spec's skill, its place in the player's prompt, and run ids with and without one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workstation.engine.prompt_builder import PromptBuilder
from workstation.engine.promptpack import (
    DEFAULT_SKILL_SLOT,
    PromptPackError,
    default_pack_dir,
    load_pack,
    without_table,
)
from workstation.game.games import get_game
from workstation.game.protocol import Protocol
from workstation.run.options import SKILL_MAX_CHARS, RunSpec, SpecError

SKILL = "Hold up; stop before a fast lane {not a placeholder}."


@pytest.fixture
def pack_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "mypack"
    shutil.copytree(default_pack_dir(), dest)
    return dest


def test_the_skill_goes_in_the_instructions_between_the_guide_and_the_reply_format():
    pack = load_pack()
    game = get_game("freeway")
    plain = PromptBuilder(game, Protocol(), pack).system_text
    skilled = PromptBuilder(game, Protocol(), pack, skill=SKILL).system_text
    assert SKILL not in plain and SKILL in skilled
    assert skilled.index("Allowed actions") < skilled.index(SKILL) < skilled.index("Answer with exactly two lines")
    assert "A skill for Freeway" in skilled
    assert skilled.replace(pack.render_skill(game, SKILL) + "\n\n", "") == plain


def test_run_ids_change_with_a_skill_only():
    base = RunSpec("freeway", agent="openai:gpt-5.2", seed=3)
    same = RunSpec("freeway", agent="openai:gpt-5.2", seed=3, skill=None)
    a, b = base.with_values(skill=SKILL), base.with_values(skill=SKILL + " More.")
    assert base.identity() == same.identity()
    assert len({base.identity(), a.identity(), b.identity()}) == 3
    assert RunSpec.from_json(a.to_json()) == a and "skill" not in base.to_json()


def test_the_pack_digest_leaves_the_slot_out_and_a_changed_slot_changes_skilled_runs(pack_copy):
    default = load_pack()
    text = (pack_copy / "template.toml").read_text()
    (pack_copy / "template.toml").write_text(text.replace("Use it where it helps:", "Follow it:"))
    changed = load_pack(pack_copy)
    assert changed.digest == default.digest and "Follow it:" in changed.skill_slot
    plain = RunSpec("freeway", agent="openai:gpt-5.2", prompts=str(pack_copy))
    assert plain.identity() == RunSpec("freeway", agent="openai:gpt-5.2").identity()
    assert plain.with_values(skill=SKILL).identity() != RunSpec("freeway", agent="openai:gpt-5.2", skill=SKILL).identity()
    # a pack without the table gets the default slot
    (pack_copy / "template.toml").write_text(without_table(text, "skill"))
    assert load_pack(pack_copy).skill_slot == DEFAULT_SKILL_SLOT


@pytest.mark.parametrize("slot,needle", [('slot = "no placeholder"', "must use {skill}"),
                                         ('slot = "{skill} {turn}"', "must use {skill}"),
                                         ('slot = 3', "needs slot"),
                                         ('slot = "{skill}"\nextra = "x"', "unknown key 'extra'")])
def test_a_bad_slot_is_one_clear_line(pack_copy, slot, needle):
    text = without_table((pack_copy / "template.toml").read_text(), "skill")
    (pack_copy / "template.toml").write_text(text + f"\n[skill]\n{slot}\n")
    with pytest.raises(PromptPackError, match="skill") as e:
        load_pack(pack_copy)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_a_bad_skill_is_a_spec_error_naming_it(tmp_path):
    for skill, needle in (("   ", "empty"), ("x" * (SKILL_MAX_CHARS + 1), "at most"), (7, "is text")):
        with pytest.raises(SpecError) as e:
            RunSpec("freeway", agent="openai:gpt-5.2", skill=skill)
        assert e.value.field == "skill" and needle in str(e.value)
    f = tmp_path / "skill.md"
    f.write_text("  from a file  \n")
    assert RunSpec("freeway", agent="openai:gpt-5.2", skill=f).skill == "from a file"
    with pytest.raises(SpecError, match="cannot read the skill file"):
        RunSpec("freeway", agent="openai:gpt-5.2", skill=tmp_path / "missing.md")
