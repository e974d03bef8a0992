"""Improvement rounds (``workstation idc``) end to end against the fake provider: real SDKs, real ALE, real files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fake_provider import Step, tool_step
from workstation.cli import main
from workstation.studies.idc import curve as C

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "workstation"]
PLAYER = "thought: cross the road\nmove: [" + ", ".join(["up"] * 10) + "]"  # 30 frames a turn: 3 turns in 90
SKILLS = ["SKILL-ONE: hold up and wait for gaps.", "SKILL-TWO: time crossings between cars."]
NOTE = "NOTEBOOK-PRIVATE: lanes 3 and 7 are fast."


def reflection_script(skill: str, note: str = NOTE) -> list[Step]:
    return [tool_step("list_dir", path="."), tool_step("write_notebook", text=note),
            tool_step("submit_diagnosis", diagnosis="the chicken stops in lane 3"),
            tool_step("submit_skill", skill=skill)]


pytestmark = pytest.mark.usefixtures("keys")  # the fake provider (`fake`, tests/conftest.py) with its keys set


def idc_args(fake, out: Path, *extra: str) -> list[str]:
    return ["idc", "--game", "freeway", "--player", "compat:p", "--reflector", "compat:r",
            "--base-url", fake.url("compat"), "--rounds", "2", "--episodes", "2", "--frames", "90",
            "--out", str(out), *extra]


def in_process(capsys, args: list[str]) -> SimpleNamespace:
    """The CLI run in this process (what a subprocess would give, without its seconds of imports): exit code and
    output. The tests that kill or interrupt the command keep their own process."""
    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


def player_text(seen) -> str:
    return json.dumps(seen.body["messages"])


def test_two_rounds_play_reflect_and_carry_the_skill(fake, tmp_path, capsys):
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]), *reflection_script(SKILLS[1], NOTE + " v2"))
    out = tmp_path / "idc"
    assert main(idc_args(fake, out)) == 0, capsys.readouterr()
    curve = json.loads((out / "curve.json").read_text())
    rounds = curve["rounds"]
    assert [r["round"] for r in rounds] == [0, 1, 2] and all(len(r["episodes"]) == 2 for r in rounds)
    assert rounds[0]["skill"] is None and rounds[1]["skill"] == SKILLS[0] and rounds[2]["skill"] == SKILLS[1]
    seeds = [e["seed"] for r in rounds for e in r["episodes"]]
    assert len(set(seeds)) == 6
    from workstation.studies.idc.starts import noop_start

    assert len({noop_start(s, 30) for s in seeds}) == 6  # every episode its own start
    players = [s for s in fake.seen if not s.offers_tools]
    reflectors = [s for s in fake.seen if s.offers_tools]
    assert len(reflectors) == 8 and len(players) == 3 * 2 * 3  # 3 rounds, 2 episodes, 3 turns each
    # the skill reaches every player prompt after the first reflection and none before; the notebook none
    first_reflection = fake.seen.index(reflectors[0])
    for i, s in enumerate(fake.seen):
        if s.offers_tools:
            continue
        text = player_text(s)
        assert "NOTEBOOK-PRIVATE" not in text
        assert (SKILLS[0] in text or SKILLS[1] in text) == (i > first_reflection)
    # tool results go back to the reflector, as role "tool" messages naming their call
    second = reflectors[1].body["messages"]
    tool_msgs = [m for m in second if m["role"] == "tool"]
    assert tool_msgs and tool_msgs[0]["tool_call_id"] and tool_msgs[0]["content"].startswith(".:\nfreeway-")
    # outputs
    assert (out / "skills" / "round_1.md").read_text().strip() == SKILLS[0]
    assert (out / "skills" / "round_2.md").read_text().strip() == SKILLS[1]
    notebook = (out / "notebook.md").read_text()
    assert "After round 0" in notebook and "After round 1" in notebook and "v2" in notebook
    t = json.loads((out / "reflections" / "round_0.json").read_text())
    assert t["status"] == "submitted" and t["tool_calls"] == 4 and t["usage"]["output_tokens"] > 0
    assert [e["call"]["name"] for e in t["events"] if e["kind"] == "tool"] == \
        ["list_dir", "write_notebook", "submit_diagnosis", "submit_skill"]
    assert rounds[0]["diagnosis"] == "the chicken stops in lane 3"
    from workstation.run.verify import verify
    from workstation.store.recording import Recording

    episodes = [e for r in rounds for e in r["episodes"]]
    v = subprocess.run([*CLI, "verify", episodes[-1]["recording"]], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert v.returncode == 0 and v.stdout.startswith("OK"), v.stdout + v.stderr
    for e in episodes:
        assert verify(Recording(Path(e["recording"]))).ok, e
    assert len({Recording(Path(e["recording"])).frames.png(0) for e in episodes}) == 6  # six different first frames
    # the run ids differ by skill, and a run without a skill keeps its id
    manifest = json.loads((out / rounds[1]["episodes"][0]["recording"] / "manifest.json").read_text())
    assert manifest["skill"]["text"] == SKILLS[0]
    from workstation.run.request import rebuild_prompt

    rebuilt = rebuild_prompt(Recording(Path(rounds[1]["episodes"][0]["recording"])), 1)  # digest-checked
    assert SKILLS[0] in rebuilt.render_text()
    m0 = json.loads((out / rounds[0]["episodes"][0]["recording"] / "manifest.json").read_text())
    assert "skill" not in m0
    # a second run of the same command replays nothing
    n = len(fake.seen)
    assert main(idc_args(fake, out)) == 0
    assert len(fake.seen) == n
    assert "round" in C.table_text(curve)


def test_a_reflector_that_never_submits_keeps_the_previous_skill(fake, tmp_path, capsys):
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]), *[tool_step("list_dir", path=".")] * 3,
                    Step(text="I will not use tools"), *[tool_step("read_text", path="../../curve.json")] * 3)
    out = tmp_path / "idc"
    assert main(idc_args(fake, out, "--tool-calls", "6")) == 0, capsys.readouterr()
    curve = json.loads((out / "curve.json").read_text())
    r1 = curve["rounds"][1]
    assert r1["reflection"]["status"] == "no_skill" and "budget of 6" in r1["reflection"]["why"]
    assert curve["rounds"][2]["skill"] == SKILLS[0]  # the previous skill stays
    t = json.loads((out / r1["reflection"]["transcript"]).read_text())
    outside = [e for e in t["events"] if e["kind"] == "tool" and e["call"]["name"] == "read_text"]
    assert outside and all(e["result"]["is_error"] and "outside" in e["result"]["text"] for e in outside)


def test_a_validator_that_rejects_five_times_keeps_the_previous_skill(fake, tmp_path, capsys):
    fake.push(*[Step(text=PLAYER)] * 200)
    reject = [Step(text="REJECT: frame-timed script")] * 5
    fake.push_tools(*reflection_script(SKILLS[0])[:3], tool_step("submit_skill", skill="at 1.2s press up"),
                    *[tool_step("submit_skill", skill=f"try {i}") for i in range(4)])
    # the validator's calls offer no tools: they take the plain script, after the player's first round
    out = tmp_path / "idc"
    args = idc_args(fake, out, "--validator", "compat:judge", "--rounds", "1")
    fake.script.clear()
    fake.push(*[Step(text=PLAYER)] * 6, *reject, *[Step(text=PLAYER)] * 100)
    assert main(args) == 0, capsys.readouterr()
    curve = json.loads((out / "curve.json").read_text())
    r0 = curve["rounds"][0]
    assert r0["reflection"]["status"] == "rejected" and r0["reflection"]["rejections"] == 5
    assert curve["rounds"][1]["skill"] is None


def test_resume_after_kill_plays_each_episode_once(fake, tmp_path, capsys):
    out = tmp_path / "idc"
    fake.push(*[Step(text=PLAYER)] * 3, Step(kind="hang", hang_s=60))  # episode 0 finishes; episode 1 hangs
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*CLI, *idc_args(fake, out, "--concurrency", "1", "--timeout", "120")], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        end = time.monotonic() + 120
        runs = out / "round_0" / "runs"
        while not (runs.is_dir() and len(list(runs.glob("*/summary.json"))) == 1 and len(fake.seen) >= 4):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "episode 0 never finished"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    first = next(runs.glob("*/summary.json")).parent
    fake.reset()
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]), *reflection_script(SKILLS[1]))
    r = in_process(capsys, idc_args(fake, out))
    assert r.returncode == 0, r.stdout + r.stderr
    curve = json.loads((out / "curve.json").read_text())
    assert [len(x["episodes"]) for x in curve["rounds"]] == [2, 2, 2]
    assert str(first.resolve()) in [e["recording"] for e in curve["rounds"][0]["episodes"]]
    assert str(first.relative_to(out)) in [e["in_dir"] for e in curve["rounds"][0]["episodes"]]
    players = [s for s in fake.seen if not s.offers_tools]
    assert len(players) == 3 * 5  # episode 1 of round 0 and both of rounds 1, 2: 3 turns each, none replayed
    assert (runs / ".incomplete").is_dir()  # the killed episode's partial recording is kept aside


def test_transfer_plays_best_and_no_skill_on_a_held_out_variant(fake, tmp_path, capsys):
    fake.push(*[Step(text=PLAYER)] * 300)
    fake.push_tools(*reflection_script(SKILLS[0]))
    out = tmp_path / "idc"
    assert main(idc_args(fake, out, "--rounds", "1", "--transfer", "mode=1,difficulty=1")) == 0, capsys.readouterr()
    curve = json.loads((out / "curve.json").read_text())
    (t,) = curve["transfer"]
    assert (t["mode"], t["difficulty"]) == (1, 1)
    arms = {e["arm"] for e in t["episodes"]}
    best = curve["best_round"]
    assert arms == ({"no-skill", "best-skill"} if best == 1 else {"no-skill"})
    for e in t["episodes"]:
        m = json.loads((out / e["recording"] / "manifest.json").read_text())
        assert m["protocol"]["game_mode"] == 1 and m["protocol"]["game_difficulty"] == 1
    gain, pct = C.transfer_gain(t["best_mean"], t["no_skill_mean"])
    assert t["gain"] == gain and t["gain_pct"] == pct
    text = C.table_text(curve)
    assert "mode=1,difficulty=1" in text and "transfer" in text


BAD = [
    (["--rounds", "0"], "--rounds must be 1..20"),
    (["--rounds", "21"], "--rounds must be 1..20"),
    (["--episodes", "0"], "--episodes must be 1..50"),
    (["--episodes", "51"], "--episodes must be 1..50"),
    (["--tool-calls", "0"], "--tool-calls"),
    (["--transfer", "mode=99"], "offers modes"),
    (["--transfer", "level=2"], "mode=M,difficulty=D"),
    (["--max-cost", "-1"], "--max-cost"),
    (["--frames", "0"], "--frames"),
    (["--start", "noops:x"], "--start"),
    (["--concurrency", "0"], "--concurrency"),
]


@pytest.mark.parametrize("extra,needle", BAD, ids=[" ".join(b[0]) for b in BAD])
def test_bad_input_is_one_line_exit_2(fake, tmp_path, extra, needle, capsys):
    out = tmp_path / "idc"
    r = in_process(capsys, idc_args(fake, out, *extra))
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and not (out / "round_0").exists()


def test_bad_specs_and_places(fake, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    (tmp_path / "abatch" / "runs").mkdir(parents=True)
    (tmp_path / "abatch" / "results.csv").write_text("run_id\n")
    cases = [
        (["--out", str(tmp_path / "file")], "not a directory"),
        (["--out", str(tmp_path / "abatch")], "no IDC (curve.json)"),  # a batch is not written into
        (["--player", "random"], "need a model"),
        (["--reflector", "nope:x"], "--reflector"),
        (["--game", "nogame"], "nogame"),
    ]
    for extra, needle in cases:
        r = in_process(capsys, idc_args(fake, tmp_path / "idc", *extra))
        assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, (extra, r.stderr)
        assert "Traceback" not in r.stderr
    assert sorted(p.name for p in (tmp_path / "abatch").iterdir()) == ["results.csv", "runs"]
    # an IDC directory resumed with other settings is refused, and nothing in it changes
    out = tmp_path / "idc"
    out.mkdir()
    (out / "curve.json").write_text(json.dumps({"rounds": [], "identity": {"game": "pong"}}))
    r = in_process(capsys, idc_args(fake, out))
    assert r.returncode == 2 and "another game" in r.stderr, r.stderr
    assert json.loads((out / "curve.json").read_text())["identity"] == {"game": "pong"}
    # the same settings, and one more that this version does not know: another IDC too, named in one line
    from workstation.cli import build_parser
    from workstation.commands.idc import make_config

    ident = make_config(build_parser().parse_args(idc_args(fake, out))).identity()
    (out / "curve.json").write_text(json.dumps({"rounds": [], "identity": {**ident, "judge": "compat:j"}}))
    r = in_process(capsys, idc_args(fake, out))
    assert r.returncode == 2 and "another judge ('compat:j', not None)" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_round_below_half_the_best_rolls_back_to_the_best_skill(fake, tmp_path, capsys):
    up = Step(text=PLAYER)
    noop = Step(text="thought: wait\nmove: [" + ", ".join(["noop"] * 10) + "]")
    fake.push(*[up] * 40, *[noop] * 40, *[up] * 40)  # 20 turns an episode at 600 frames
    fake.push_tools(*reflection_script(SKILLS[0]))
    out = tmp_path / "idc"
    args = idc_args(fake, out, "--frames", "600")
    assert main(args) == 0, capsys.readouterr()
    curve = json.loads((out / "curve.json").read_text())
    r0, r1, r2 = curve["rounds"]
    assert r0["score_mean"] > r1["score_mean"] and r0["normalised"] > 0
    assert C.rolls_back(r1["normalised"], r0["normalised"])
    assert r1["rolled_back"] and r1["reflection"]["status"] == "skipped" and "best" in r1["reflection"]["why"]
    assert not r0["rolled_back"] and not r2["rolled_back"]
    assert r1["skill"] == SKILLS[0] and r2["skill"] is None  # m* was round 0's no skill
    assert curve["best_round"] in (0, 2) and curve["rounds"][curve["best_round"]]["skill"] is None
    assert "rolled back" in C.table_text(curve)
    assert len([s for s in fake.seen if s.offers_tools]) == 4  # no reflection after the dropped round


@pytest.mark.parametrize("score,best,rolls", [(0.4, 1.0, True), (0.5, 1.0, False), (1.0, 1.0, False),
                                              (-1.6, -1.0, True), (-1.4, -1.0, False), (-0.1, 0.0, True),
                                              (0.0, 0.0, False), (2.0, 1.0, False)])
def test_the_rollback_rule(score, best, rolls):
    assert C.rolls_back(score, best) is rolls


def test_transfer_gain_and_the_curve_statistics():
    assert C.transfer_gain(12.0, 8.0) == (4.0, 50.0)
    assert C.transfer_gain(-6.0, -8.0) == (2.0, 25.0)
    assert C.transfer_gain(3.0, 0.0) == (3.0, None)
    m, se = C.mean_se([1.0, 3.0])
    assert m == 2.0 and se == pytest.approx(1.0)
    assert C.mean_se([]) == (None, None) and C.mean_se([5.0]) == (5.0, 0.0)
    curve = {"rounds": [{"round": 0, "score_mean": 2.0, "normalised": 1.0},
                        {"round": 1, "score_mean": 5.0, "normalised": 4.0},
                        {"round": 2, "score_mean": 3.0, "normalised": 2.0}], "best_round": 1}
    assert C.best_vs_final(curve) == {"best_round": 1, "final_round": 2, "gap": 2.0, "gap_normalised": 2.0}


def test_report_shows_the_curve_gap_and_transfer(tmp_path, capsys):
    out = tmp_path / "idc"
    out.mkdir()
    curve = {"game": "freeway", "player": "compat:p", "reflector": "compat:r", "random_mean": 0.0,
             "best_round": 1, "rounds": [
                 {"round": 0, "skill": None, "skill_round": None, "score_mean": 1.0, "score_se": 0.5,
                  "normalised": 1.0, "rolled_back": False, "episodes": []},
                 {"round": 1, "skill": "s", "skill_round": 1, "score_mean": 4.0, "score_se": 0.5,
                  "normalised": 4.0, "rolled_back": False, "episodes": []},
                 {"round": 2, "skill": "t", "skill_round": 2, "score_mean": 1.5, "score_se": 0.5,
                  "normalised": 1.5, "rolled_back": True, "episodes": []}],
             "transfer": [{"mode": 1, "difficulty": 0, "no_skill_mean": 2.0, "best_mean": 3.0, "gain": 1.0,
                           "gain_pct": 50.0}]}
    C.save(out, curve)
    r = in_process(capsys, ["report", str(out), "--json", str(tmp_path / "r.json")])
    assert r.returncode == 0, r.stderr
    assert "best round 1 vs final round 2: gap 2.50" in r.stdout and "rolled back" in r.stdout
    assert "mode=1,difficulty=0" in r.stdout and "50.0%" in r.stdout
    assert json.loads((tmp_path / "r.json").read_text())["best_vs_final"]["gap"] == 2.5


@pytest.mark.parametrize("args,needle", [(["idc", "--view", "nowhere"], "no IDC there"),
                                         (["idc", "--game", "freeway"], "idc needs --player, --out")])
def test_view_and_missing_flags_are_one_line_exit_2(tmp_path, args, needle, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = in_process(capsys, args)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


def test_ctrl_c_during_a_reflection_records_no_reflection_and_resumes(fake, tmp_path, capsys):
    out = tmp_path / "idc"
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(tool_step("list_dir", path="."), Step(kind="hang", hang_s=60))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*CLI, *idc_args(fake, out, "--rounds", "1", "--timeout", "120")], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 120
    while len([s for s in fake.seen if s.offers_tools]) < 2:
        assert proc.poll() is None and time.monotonic() < end, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "stopped during round 0's reflection" in stdout, stdout + stderr
    assert "Traceback" not in stderr
    curve = json.loads((out / "curve.json").read_text())
    assert len(curve["rounds"]) == 1 and "reflection" not in curve["rounds"][0]
    fake.reset()
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]))
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    assert r.returncode == 0, r.stdout + r.stderr
    curve = json.loads((out / "curve.json").read_text())
    assert curve["rounds"][1]["skill"] == SKILLS[0]
    assert len([s for s in fake.seen if not s.offers_tools]) == 2 * 3  # round 0 was not played again


# -- pinned rules, trust (issue 26) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("norms,rolled,best", [
    ([1.0], [False], 0),
    ([4.0, 2.5, 1.5], [False, False, True], 0),  # 1.5 is below half the BEST (4.0), not of the previous (2.5)
    ([1.0, 4.0, 2.5], [False, False, False], 1),
    ([1.0, 4.0, 1.9], [False, False, True], 1),
    ([2.0, 2.0, 3.0], [False, False, False], 2),  # a tie keeps the earlier best; a higher round takes it
    ([2.0, 0.5, 3.0, 1.4], [False, True, False, True], 2),  # a rolled-back round never becomes the best
    ([-1.0, -1.6, -1.4], [False, True, False], 0),
    ([0.0, 5.0, -0.5], [False, False, True], 1),
])
def test_rollbacks_are_measured_against_the_best_round_so_far(norms, rolled, best):
    assert C.rollbacks(norms) == (rolled, best)


def test_the_small_rules_of_the_curve():
    assert C.normalised(5.0, 2.0) == 3.0 and C.normalised(-1.0, 2.0) == -3.0
    assert C.rollbacks([2.0, 2.0]) == ([False, False], 0)  # a tie keeps the earlier best
    assert C.transfer_gain(None, 3.0) == (None, None) and C.transfer_gain(3.0, None) == (None, None)
    assert C.best_vs_final({"rounds": [], "best_round": None}) is None
    assert C.best_vs_final({"rounds": [{"round": 0, "score_mean": 1.0, "normalised": 1.0}], "best_round": None}) is None
    assert C.best_vs_final({"rounds": [{"round": 0, "score_mean": None}, {"round": 1, "score_mean": 2.0}],
                            "best_round": 0}) is None


def test_a_rolled_back_round_below_an_old_best_cannot_become_best():
    # 0.4 rolls back against 1.0; were it compared with the previous round (0.5), it would not
    assert C.rollbacks([1.0, 0.5, 0.4]) == ([False, False, True], 0)
    assert C.rollbacks([]) == ([], None)


def test_the_table_puts_a_reflection_note_on_the_round_it_produced():
    curve = {"rounds": [
        {"round": 0, "score_mean": 1.0, "normalised": 1.0, "reflection": {"status": "no_skill"}},
        {"round": 1, "score_mean": 2.0, "normalised": 2.0, "reflection": {"status": "submitted"}},
        {"round": 2, "score_mean": 2.0, "normalised": 2.0, "reflection": {"status": "failed"}}], "best_round": 1}
    rows = {line.split()[0]: line for line in C.table_text(curve).splitlines()[2:5]}
    assert "kept previous skill" not in rows["0"]
    assert "kept previous skill (round 0's reflection: no_skill)" in rows["1"]
    assert "kept previous skill" not in rows["2"] and "best" in rows["1"]


def _made_idc(fake, tmp_path, capsys) -> Path:
    fake.push(*[Step(text=PLAYER)] * 200)
    fake.push_tools(*reflection_script(SKILLS[0]))
    out = tmp_path / "idc"
    r = in_process(capsys, idc_args(fake, out, "--rounds", "1"))
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_sealed_idc_edited_by_hand_is_named_and_left_as_it_is(fake, tmp_path, capsys):
    out = _made_idc(fake, tmp_path, capsys)
    assert (out / "seal.json").is_file()
    original = (out / "curve.json").read_bytes()
    curve = json.loads(original)
    curve["rounds"][1]["score_mean"] += 10
    (out / "curve.json").write_text(json.dumps(curve))
    before = _tree(out)
    for args in (["report", str(out)], idc_args(fake, out, "--rounds", "1")):
        r = in_process(capsys, args)
        assert r.returncode == 1 and "is damaged: curve.json" in r.stderr and str(out) in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert _tree(out) == before
    (out / "curve.json").write_bytes(original)
    assert in_process(capsys, ["report", str(out)]).returncode == 0
    (out / "skills" / "round_1.md").write_text("another skill")  # a skill edited by hand: named too
    r = in_process(capsys, ["report", str(out)])
    assert r.returncode == 1 and "skills/round_1.md" in r.stderr


def test_a_damaged_episode_stops_a_resume_and_never_reaches_the_curve(fake, tmp_path, capsys):
    out = _made_idc(fake, tmp_path, capsys)
    ep = Path(json.loads((out / "curve.json").read_text())["rounds"][0]["episodes"][0]["recording"])
    s = json.loads((ep / "summary.json").read_text())
    s["total_reward"] += 50
    (ep / "summary.json").write_text(json.dumps(s))
    before, asked = _tree(out), len(fake.seen)
    r = in_process(capsys, idc_args(fake, out, "--rounds", "2"))
    assert r.returncode == 1 and "an episode is damaged" in r.stderr and str(ep) in r.stderr, r.stderr
    assert _tree(out) == before and len(fake.seen) == asked


def test_an_episode_damaged_before_its_round_is_in_the_curve_is_set_aside_and_played_again(fake, tmp_path, capsys):
    out = tmp_path / "idc"
    fake.push(*[Step(text=PLAYER)] * 3, Step(kind="hang", hang_s=60))  # episode 0 finishes; episode 1 hangs
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*CLI, *idc_args(fake, out, "--concurrency", "1", "--timeout", "120")], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        end = time.monotonic() + 120
        runs = out / "round_0" / "runs"
        while not (runs.is_dir() and len(list(runs.glob("*/summary.json"))) == 1 and len(fake.seen) >= 4):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "episode 0 never finished"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    first = next(runs.glob("*/summary.json")).parent
    s = json.loads((first / "summary.json").read_text())
    s["total_reward"] += 50
    (first / "summary.json").write_text(json.dumps(s))
    fake.reset()
    fake.push(*[Step(text=PLAYER)] * 200)
    r = in_process(capsys, idc_args(fake, out))
    said = [line for line in r.stdout.splitlines() if "set aside a damaged episode" in line]
    assert r.returncode == 0 and len(said) == 1 and first.name in said[0] and "total_reward" in said[0], r.stdout
    kept = runs / ".damaged" / first.name  # kept whole, never written into, never counted
    assert json.loads((kept / "summary.json").read_text())["total_reward"] == s["total_reward"]
    curve = json.loads((out / "curve.json").read_text())
    scores = [e["score"] for e in curve["rounds"][0]["episodes"]]
    assert s["total_reward"] not in scores and len(scores) == 2  # the episode was played again


def test_a_curve_json_that_is_a_directory_is_refused_before_anything_is_written(fake, tmp_path, capsys):
    out = tmp_path / "idc"
    (out / "curve.json").mkdir(parents=True)
    r = in_process(capsys, idc_args(fake, out))
    assert r.returncode == 2 and "curve.json is not a file" in r.stderr, r.stderr
    assert sorted(p.name for p in out.rglob("*")) == ["curve.json"] and not fake.seen


@pytest.mark.parametrize("text,needle", [
    ("[1, 2]", "holds a list, not an object"),
    ('{"rounds": {"a": 1}}', "not an IDC curve"),
    ('{"rounds": [{"round": 0, "score_mean": "ten"}]}', "'score_mean'"),
    ('{"rounds": [{"score_mean": 1.0}]}', "field 'round' is missing"),
    ('{"rounds": [{"round": 0, "episodes": [1]}]}', "episodes item 0 is not a JSON object"),
    ('{"rounds": [{"round": 1}]}', "field 'round' is 1, not 0"),
    ('{"rounds": [], "best_round": 3}', "field 'best_round' is 3"),
    ('{"rounds": [], "random_mean": "x"}', "'random_mean'"),
    ('{"rounds": [], "transfer": [{"gain": "big"}]}', "'gain'"),
    (b"\xff\xfe{", "not UTF-8"),
    ("{not json", "not valid JSON"),
])
def test_a_hand_edited_curve_is_one_line_naming_the_field(tmp_path, capsys, monkeypatch, text, needle):
    out = tmp_path / "idc"
    out.mkdir()
    path = out / "curve.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = _tree(out)
    for args in (["report", str(out)], ["idc", "--view", str(out)]):
        monkeypatch.chdir(tmp_path)
        r = in_process(capsys, args)
        assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    assert _tree(out) == before


def test_a_report_is_never_written_inside_the_idc(tmp_path, capsys):
    out = tmp_path / "idc"
    out.mkdir()
    C.save(out, {"rounds": [{"round": 0, "score_mean": 1.0, "normalised": 1.0}], "best_round": 0})
    C.write_file(out, "skills/round_1.md", "skill")
    before = _tree(out)
    for flag, target in (("--json", out / "skills" / "round_1.md"), ("--md", out / "report.md")):
        r = in_process(capsys, ["report", str(out), flag, str(target)])
        assert r.returncode == 2 and "inside the report's input" in r.stderr, r.stderr
    assert _tree(out) == before


def test_mean_se_is_the_sample_sd_over_root_n_and_best_vs_final_needs_a_best_round():
    import math as _math

    from workstation.studies.idc.curve import best_vs_final, mean_se

    m, se = mean_se([1.0, 2.0, 3.0])  # sample variance 1 (n - 1 = 2), SE sqrt(1 / 3)
    assert m == 2.0 and se is not None and _math.isclose(se, _math.sqrt(1 / 3))
    assert mean_se([4.0]) == (4.0, 0.0) and mean_se([]) == (None, None)
    played = {"rounds": [{"round": 0, "score_mean": 1.0, "normalised": 1.0}], "best_round": None}
    assert best_vs_final(played) is None  # rounds but no best round: no gap to tell
    assert best_vs_final({"rounds": [], "best_round": 0}) is None  # a best round but nothing played
    assert best_vs_final({**played, "best_round": 0}) is not None


def test_the_ledger_steps_rebuild_the_rounds_and_count_their_cost():
    ep = lambda cost: {"run_id": "r", "score": 1.0, "cost_usd": cost}  # an episode: its cost only
    played = [C.Step("round", {"round": 0, "score_mean": 1.0, "episodes": [ep(0.25), ep(0.5), ep(None)]}),
              C.Step("reflection", {"round": 0, "reflection": {"status": "submitted", "cost_usd": 0.125},
                                    "next_skill": "s1"}),
              C.Step("round", {"round": 1, "score_mean": 2.0, "episodes": [ep(1.0)]}),
              C.Step("round", {"round": 1, "score_mean": 3.0, "episodes": []}),  # round 1 played again: it replaces
              C.Step("transfer", {"mode": 1, "difficulty": 0, "cost_usd": 2.0})]
    assert [st.cost_usd for st in played] == [0.75, 0.125, 1.0, 0.0, 2.0]  # an episode without a cost counts 0
    assert C.Step("reflection", {"round": 0, "reflection": {"cost_usd": None}}).cost_usd == 0.0
    assert C.Step("transfer", {"mode": 1, "difficulty": 0}).cost_usd == 0.0
    curve: dict = {}
    C.apply_steps(curve, played)
    assert [(r["round"], r["score_mean"], r.get("next_skill")) for r in curve["rounds"]] == [(0, 1.0, "s1"),
                                                                                               (1, 3.0, None)]
    assert curve["rounds"][0]["reflection"] == {"status": "submitted", "cost_usd": 0.125}
    assert curve["transfer"] == [{"mode": 1, "difficulty": 0, "cost_usd": 2.0}]
    with pytest.raises(C.RecordFileError, match="round 2 comes before round 1"):
        C.apply_steps({}, [played[0], C.Step("round", {"round": 2})])
    with pytest.raises(C.RecordFileError, match="a reflection after round 1, which was not played"):
        C.apply_steps({}, [played[0], C.Step("reflection", {"round": 1, "reflection": {}})])


def test_the_small_rules_of_the_table_and_the_gap():
    rnd = lambda r, skill, mean, se, rolled=False: {  # a round: what the table shows of it
        "round": r, "skill_round": skill, "score_mean": mean, "score_se": se, "normalised": mean - 1.0,
        "rolled_back": rolled, "episodes": []}
    curve = {"game": "freeway", "player": "compat:p", "reflector": "compat:r", "random_mean": 1.0, "best_round": 1,
             "rounds": [rnd(0, None, 1.0, 0.5), rnd(1, 1, 14.0, 0.25), rnd(2, 2, 1.0, 10.5, rolled=True)],
             "transfer": [{"mode": 1, "difficulty": 0, "no_skill_mean": 2.0, "best_mean": 13.0, "gain": 11.0,
                           "gain_pct": None}]}
    assert C.table_text(curve).splitlines()[6:] == ["transfer (held-out variants):",
                                                    "  variant              no skill   best   gain  gain %",
                                                    "  mode=1,difficulty=0      2.00  13.00  11.00     n/a"]
    assert C.table_text(curve).splitlines()[:6] == [
        "IDC freeway  player compat:p  reflector compat:r  random baseline 1.00",
        "round  skill     mean     se   norm  note",
        "    0  none      1.00   0.50   0.00",  # round 0 plays no skill; the numbers to the right
        "    1  round 1  14.00   0.25  13.00  best",
        "    2  round 2   1.00  10.50   0.00  rolled back: next round plays the best skill",
        "best round 1 vs final round 2: gap 13.00 (normalised 13.00)"]  # the final round's normalised 0 is 0
    flat = {"best_round": 0, "rounds": [rnd(0, None, 1.0, 0.0), rnd(1, 0, -2.0, 0.0)]}  # the best at random level
    assert C.best_vs_final(flat) == {"best_round": 0, "final_round": 1, "gap": 3.0, "gap_normalised": 3.0}
