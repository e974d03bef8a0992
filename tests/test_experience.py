"""The experience library (issue 30): edits, bounds, storage under a seal, a run that updates it, replay, verify.

Real parts: real files, the real emulator, and a real OpenAI SDK client against the local fake provider,
whose replies end with an ``add: RULE`` line, as the hidden check's stand-in does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_provider import SPECS, FakeProvider, Step, fake, fake_server, keys  # noqa: F401
from workstation.base.errors import DamagedArtifact
from workstation.engine.experience import (
    MAX_EDITS,
    MAX_RULE_CHARS,
    MAX_RULES,
    UPDATES,
    apply_edits,
    digest,
    library_dir,
    parse_edits,
    read_library,
    write_library,
)
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.options import RunSpec, SpecError, preflight
from workstation.run.request import rebuild_prompt
from workstation.run.start import start_run
from workstation.run.verify import verify
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parents[1]
RULE = "Serve with fire as soon as the ball is gone."
REPLY = f"thought: the ball is gone\nmove: [fire, left]\nadd: {RULE}"


# -- edits and bounds -------------------------------------------------------------------------------------------
def test_parse_edits_reads_the_four_kinds_and_names_malformed_lines():
    edits, bad = parse_edits("thought: hm\n- add: Stay low\nmodify 2: Fire early\ndelete 1\nkeep\n"
                             "modify two: nope\ndelete\nsome prose")
    assert [(e.op, e.index, e.rule) for e in edits] == [("add", None, "Stay low"), ("modify", 2, "Fire early"),
                                                        ("delete", 1, None), ("keep", None, None)]
    assert [b["line"] for b in bad] == ["modify two: nope", "delete"]


def test_apply_edits_refers_to_the_library_shown_and_skips_what_breaks_a_bound():
    before = ["a", "b", "c"]
    edits, _ = parse_edits("delete 1\nmodify 3: C\nadd: d\ndelete 9")
    after, applied, skipped = apply_edits(before, edits)
    assert after == ["b", "C", "d"] and len(applied) == 3
    assert skipped[0]["why"].startswith("there is no rule 9")
    edits, _ = parse_edits("\n".join(f"add: r{i}" for i in range(MAX_EDITS + 2)))
    after, applied, skipped = apply_edits([], edits)
    assert len(after) == MAX_EDITS and all("more than" in s["why"] for s in skipped) and len(skipped) == 2
    long, _ = parse_edits("add: " + "x" * (MAX_RULE_CHARS + 1))
    assert apply_edits([], long)[0] == [] and "characters" in apply_edits([], long)[2][0]["why"]
    full = [f"rule {i}" for i in range(MAX_RULES)]
    edits, _ = parse_edits("add: one more\ndelete 1\nadd: one more")
    after, _, skipped = apply_edits(full, edits)
    assert len(after) == MAX_RULES and after[-1] == "one more" and "full" in skipped[0]["why"]


def test_a_library_edited_by_hand_is_damaged(tmp_path):
    write_library(tmp_path, "openai:gpt-5.2", "breakout", ["a rule"], 1, None)
    assert read_library(tmp_path, "openai:gpt-5.2", "breakout") == ["a rule"]
    f = library_dir(tmp_path, "openai:gpt-5.2", "breakout") / "library.json"
    f.write_text(f.read_text().replace("a rule", "b rule"))
    with pytest.raises(DamagedArtifact, match="experience library .* is damaged: library.json was changed"):
        read_library(tmp_path, "openai:gpt-5.2", "breakout")


# -- the spec ---------------------------------------------------------------------------------------------------
def test_bad_experience_settings_are_refused_naming_the_flag(tmp_path, keys):  # noqa: F811
    with pytest.raises(SpecError, match="--reflect-every applies with --experience"):
        RunSpec(game="breakout", agent=SPECS["openai"], reflect_every=3)
    with pytest.raises(SpecError, match="needs a model agent"):
        RunSpec(game="breakout", experience=str(tmp_path / "lib"))
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "manifest.json").write_text("{}")
    RunSpec(game="breakout", agent=SPECS["openai"], experience=str(rec / "lib"))  # a manifest alone: no recording
    (rec / "turns.jsonl").write_text("")
    with pytest.raises(SpecError, match="is inside the recording"):
        RunSpec(game="breakout", agent=SPECS["openai"], experience=str(rec / "lib"))
    with pytest.raises(SpecError) as e:
        RunSpec(game="breakout", agent=SPECS["openai"], experience=str(tmp_path / "lib"), reflect_every=0)
    assert e.value.field == "reflect_every"
    assert RunSpec(game="breakout", agent=SPECS["openai"], experience=str(tmp_path / "lib")).reflect_every == 5


def test_cli_refuses_a_dir_inside_a_recording_and_a_damaged_library(tmp_path):
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "manifest.json").write_text("{}")
    (rec / "frames.idx").write_text("")
    base = [sys.executable, "-m", "workstation", "run", "--game", "breakout", "--agent", SPECS["compat"],
            "--base-url", "http://127.0.0.1:9/v1", "--frames", "30", "--out", str(tmp_path / "runs")]
    r = subprocess.run([*base, "--experience", str(rec / "lib")], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    assert r.returncode == 2 and "inside the recording" in r.stderr and "Traceback" not in r.stderr
    write_library(tmp_path / "lib", SPECS["compat"], "breakout", ["x"], 1, None)
    (library_dir(tmp_path / "lib", SPECS["compat"], "breakout") / "library.json").write_text("{}")
    r = subprocess.run([*base, "--experience", str(tmp_path / "lib")], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 1 and "is damaged" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists()


# -- a run -------------------------------------------------------------------------------------------------------
def _run(fake: FakeProvider, out: Path, lib: Path | None, frames: int = 450, agent: str | None = None) -> Recording:  # noqa: F811
    values = {"base_url": fake.url("openai")} if agent is None else {}
    spec = RunSpec(game="breakout", agent=agent or SPECS["openai"], out=str(out),
                   protocol=Protocol(frames=frames), experience=str(lib) if lib else None,
                   reflect_every=5 if lib else None)
    if values:
        spec = spec.with_values(**values)
    preflight(spec)
    expected = spec.identity()  # from the spec alone, before the run: the library as it stands now
    e = start_run(spec)
    try:
        drive(e)
    finally:
        e.close()
    rec = Recording(e.writer.path)
    assert rec.manifest_record.run_id == expected
    return rec


def test_a_run_with_a_library_learns_a_rule_records_it_and_verifies(fake: FakeProvider, keys, tmp_path):  # noqa: F811
    fake.responder = lambda seen: Step(text=REPLY)
    lib = tmp_path / "lib"
    plain = _run(fake, tmp_path / "plain", None)
    fake.seen.clear()
    rec = _run(fake, tmp_path / "runs", lib)
    turns = len(rec.turn_records)
    assert turns >= 10
    # the rule is in DIR, sealed
    assert read_library(lib, SPECS["openai"], "breakout") == [RULE]
    # each update recorded: before/after, request and reply, usage and cost
    updates = [json.loads(x) for x in (rec.path / UPDATES).read_text().splitlines()]
    assert [u["turns"] for u in updates] == list(range(5, turns + 1, 5))
    assert updates[0]["before"] == [] and updates[0]["after"] == [RULE]
    assert all(u["after"] == [RULE] for u in updates[1:])
    assert updates[1]["skipped"] and "already has" in updates[1]["skipped"][0]["why"]
    assert updates[0]["reply"] == REPLY and updates[0]["usage"] and "request" in updates[0]
    assert "Now answer with your edits" in json.dumps(updates[0]["request"])
    assert "What you are told about Breakout when you play" in json.dumps(updates[0]["request"])
    # one extra request per update, counted in the summary
    assert rec.summary_record.calls == turns + len(updates)
    # the rule is in a later turn's prompt, not in an earlier one
    bodies = [json.dumps(s.body) for s in fake.seen]
    assert RULE not in bodies[0] and any(RULE in b for b in bodies[7:])
    assert RULE in rebuild_prompt(rec, 6).render_text() and RULE not in rebuild_prompt(rec, 4).render_text()
    # its own setting: another run id than the same run without the library; the start digest is recorded
    assert rec.manifest_record.run_id != plain.manifest_record.run_id
    assert rec.manifest_record.experience.start_digest == digest([])
    assert verify(rec).ok
    # the next run starts from the rule: another run id again, and the rule is in its first prompt
    fake.seen.clear()
    nxt = _run(fake, tmp_path / "next", lib, frames=60)
    assert nxt.manifest_record.experience.rules == [RULE]
    assert nxt.manifest_record.run_id not in (rec.manifest_record.run_id, plain.manifest_record.run_id)
    assert RULE in json.dumps(fake.seen[0].body)


def test_verify_catches_an_update_edited_by_hand_and_replay_needs_no_model(fake: FakeProvider, keys, tmp_path):  # noqa: F811
    fake.responder = lambda seen: Step(text=REPLY + "\nmodify seven: nothing")
    rec = _run(fake, tmp_path / "runs", tmp_path / "lib", frames=240)
    updates = (rec.path / UPDATES).read_text().splitlines()
    first = json.loads(updates[0])
    assert first["malformed"][0]["line"] == "modify seven: nothing" and first["after"] == [RULE]
    # a replay into a fresh library takes each update's reply from the recording: no request is made
    fake.seen.clear()
    rep = _run(fake, tmp_path / "replay", tmp_path / "lib2", frames=240, agent=f"replay:{rec.path}")
    assert not fake.seen
    assert read_library(tmp_path / "lib2", f"replay:{rec.path}", "breakout") == [RULE]
    assert all(json.loads(x)["replayed"] for x in (rep.path / UPDATES).read_text().splitlines())
    assert verify(rep).ok
    # an update edited by hand: verify names it
    first["after"] = ["something else"]
    (rec.path / UPDATES).write_text("\n".join([json.dumps(first), *updates[1:]]) + "\n")
    result = verify(rec)
    assert not result.ok and "experience.jsonl update 1" in result.detail


def test_the_pack_slot_places_the_library_and_counts_in_the_run_id(tmp_path, keys):  # noqa: F811
    import shutil

    from workstation.base.locations import default_pack_dir
    from workstation.engine.promptpack import PromptPackError, load_pack

    pack_dir = tmp_path / "pack"
    shutil.copytree(default_pack_dir(), pack_dir)
    t = pack_dir / "template.toml"
    base = load_pack(pack_dir)
    spec = RunSpec(game="breakout", agent=SPECS["openai"], prompts=str(pack_dir), experience=str(tmp_path / "lib"))
    before = spec.identity()
    t.write_text(t.read_text().replace("(your experience library); follow them where they fit:",
                                       "LEARNED RULES:"))
    pack = load_pack(pack_dir)
    assert pack.digest == base.digest and "LEARNED RULES:" in pack.render_experience(pack.game("breakout"), ["x"])
    assert spec.identity() != before
    t.write_text(t.read_text().replace("{rules}", "{rulez}"))
    with pytest.raises(PromptPackError, match=r"\[experience\] slot must use \{rules\}"):
        load_pack(pack_dir)


def test_run_and_watch_take_the_flags_and_a_grid_setting_takes_the_keys(tmp_path):
    from workstation.cli import build_parser
    from workstation.studies.batch.grid import parse_grid

    for cmd in ("run", "watch"):
        a = build_parser().parse_args([cmd, "--game", "breakout", "--agent", SPECS["compat"], "--experience",
                                       str(tmp_path / "lib"), "--reflect-every", "7"])
        assert (a.experience, a.reflect_every) == (str(tmp_path / "lib"), 7)
    grid = f'''
name = "exp"
games = ["breakout"]
seeds = [0]
[[settings]]
label = "lib"
spec = "{SPECS['compat']}"
base_url = "http://127.0.0.1:9/v1"
experience = "{tmp_path / 'lib'}"
reflect_every = 3
'''
    from workstation.studies.batch.grid import GridError

    with pytest.raises(GridError) as e:  # refused in a batch, naming the key: its run ids cannot be planned
        parse_grid(grid, out=str(tmp_path / "batch"))
    assert "experience library is not played in a batch yet" in str(e.value) and "experience" in str(e.value)
    assert not (tmp_path / "batch").exists()
    spec = RunSpec(game="breakout", agent=SPECS["openai"], experience=str(tmp_path / "lib"), reflect_every=3)
    plain = RunSpec(game="breakout", agent=SPECS["openai"])
    assert spec.identity() != plain.identity()
    assert RunSpec.from_json(spec.to_json()) == spec and "experience" not in plain.to_json()


def test_a_failed_update_is_recorded_and_the_run_goes_on(fake: FakeProvider, keys, tmp_path):  # noqa: F811
    def respond(seen):
        if "Now answer with your edits" in json.dumps(seen.body):
            return Step(kind="status", status=401, error={"error": {"message": "bad key", "type": "auth"}})
        return Step(text=REPLY)

    fake.responder = respond
    rec = _run(fake, tmp_path / "runs", tmp_path / "lib", frames=120)
    updates = [json.loads(x) for x in (rec.path / UPDATES).read_text().splitlines()]
    assert updates and all(u["error"] and u["after"] == [] for u in updates)
    assert rec.summary_record.complete and read_library(tmp_path / "lib", SPECS["openai"], "breakout") == []
    assert verify(rec).ok


def test_an_update_line_of_the_wrong_shape_names_the_file_line_and_field(tmp_path):
    from workstation.engine.experience import UPDATES, read_updates

    good = {"turns": 5, "before": [], "after": [RULE], "reply": "add: x", "error": None, "usage": None}
    (tmp_path / UPDATES).write_text(json.dumps(good) + "\n")
    (u,) = read_updates(tmp_path)
    assert (u.turns, u.before, u.after, u.reply, u.error) == (5, [], [RULE], "add: x", None)
    for bad, field in (({"after": "x"}, "'after'"), ({"after": [1]}, "'after'"), ({"reply": 3}, "'reply'")):
        (tmp_path / UPDATES).write_text(json.dumps(good) + "\n" + json.dumps({**good, **bad}) + "\n")
        with pytest.raises(DamagedArtifact, match=f"line 2.*{field}"):
            read_updates(tmp_path)
