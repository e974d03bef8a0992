"""The turn engine on the real emulator: phases, step-mode controls, branching, recordings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.agents_for_tests import FatalAgentError, ScriptedAgent
from workstation.engine.calls import Reply
from workstation.engine.turn_engine import Phase, PlanParsed, PromptReady, ReplyReceived, TextDelta, TurnEnded
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, branch_run, start_run
from workstation.run.verify import verify
from workstation.store.recording import Recording


def turns_of(path) -> list[dict]:
    return [json.loads(line) for line in (path / "turns.jsonl").read_text().splitlines()]


def test_random_smoke_run_is_complete_and_reproducible(tmp_path):
    e = start_run(RunSpec(game="breakout", agent="random", seed=3, out=str(tmp_path)))
    s = drive(e)
    e.close()
    assert s.complete and s.frames == 900 and s.invalid_turns == 0
    rec = Recording(e.writer.path)
    assert len(rec.frames) == 901 and rec.complete
    assert all(1 <= len(t.actions) <= 3 for t in rec.turn_records)
    assert s.turns == len(rec.turn_records) and 100 < s.turns < 300
    e2 = start_run(RunSpec(game="breakout", agent="random", seed=3, out=str(tmp_path)))
    drive(e2)
    assert [t.actions for t in Recording(e2.writer.path).turn_records] == [t.actions for t in rec.turn_records]
    e3 = start_run(RunSpec(game="breakout", agent="random", seed=4, out=str(tmp_path)))
    drive(e3)
    assert [t.actions for t in Recording(e3.writer.path).turn_records] != [t.actions for t in rec.turn_records]
    assert verify(rec).ok


def test_phases_and_events(tmp_path):
    events = []
    agent = ScriptedAgent(["thought: serve it\nmove: [fire, right]"])
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=30)), [events.append], agent=agent)
    assert isinstance(e.step(), PromptReady) and e.phase is Phase.PROMPT
    assert isinstance(e.step(), ReplyReceived) and e.phase is Phase.REPLY
    assert any(isinstance(x, TextDelta) for x in events), "streamed text reaches observers"
    ev = e.step()
    assert isinstance(ev, PlanParsed) and ev.plan == ["fire", "right"] and e.phase is Phase.PLAN
    e.step()
    assert e.phase is Phase.ACTING and e.clock.frame == 3
    e.step_frame()
    assert e.clock.frame == 4
    e.step()
    assert e.phase is Phase.READY and e.turn == 1
    rec = turns_of(e.writer.path)[0]
    assert rec["actions"] == ["fire", "right"] and rec["thought"] == "serve it" and rec["action_frames"] == [3, 6]
    drive(e)
    assert e.summary.complete and any(isinstance(x, TurnEnded) for x in events)


def test_invalid_reply_becomes_one_noop_and_keeps_raw(tmp_path):
    agent = ScriptedAgent(["I think we should jump!\nmove: [jump, left]", "move: [left]"])
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=6)), agent=agent)
    drive(e)
    t0, t1 = turns_of(e.writer.path)
    assert t0["valid"] is False and t0["actions"] == ["noop"] and t0["rule"] == "unknown_action"
    assert "jump" in t0["raw"] and t0["end_frame"] == 3 and any("jump" in x for x in t0["errors"])
    assert t1["valid"] and e.summary.invalid_turns == 1


def test_step_mode_edit_resend_override_and_current_only_land_in_the_recording(tmp_path):
    agent = ScriptedAgent(["move: [left]"])
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=18)), agent=agent)
    e.step()  # prompt ready
    e.set_prompt(e.pending.prompt.with_text(e.pending.prompt.render_text() + "\nPlease serve."))
    e.step()  # reply
    assert agent.prompts[-1].messages[-1].text().endswith("Please serve.")
    e.resend()
    assert e.phase is Phase.PROMPT
    e.step()
    e.override_plan(["fire", "right", "right"])
    e.run_turn()
    e.step()  # next prompt
    e.use_current_frame_only()
    assert e.pending.prompt.image_frames == [e.clock.frame]
    drive(e)
    t0, t1 = turns_of(e.writer.path)[:2]
    assert t0["prompt"]["variant"] == "edited" and "Please serve." in json.dumps(t0["prompt"]["messages"])
    assert t0["overridden"] and t0["actions"] == ["fire", "right", "right"] and t0["planned"] == ["left"]
    assert len(t0["discarded_replies"]) == 1
    assert t1["prompt"]["variant"] == "current_only" and t1["prompt"]["images"] == [t1["start_frame"]]
    with pytest.raises(ValueError, match="jump"):
        e2 = start_run(RunSpec(game="breakout", out=str(tmp_path)), agent=ScriptedAgent(["move: [left]"]))
        e2.step(), e2.step()
        e2.override_plan(["jump"])


def test_rewind_and_branch_gives_identical_frames_up_to_the_branch(tmp_path):
    e = start_run(RunSpec(game="seaquest", agent="random", seed=1, out=str(tmp_path), protocol=Protocol(frames=150)))
    for _ in range(12):
        e.run_turn()
    parent_path = e.writer.path
    branch_at = 5
    start_frame = turns_of(parent_path)[branch_at]["start_frame"]
    path = branch_run(e, branch_at)
    assert e.turn == branch_at and e.clock.frame == start_frame
    drive(e)
    parent, child = Recording(parent_path), Recording(path)
    assert not parent.complete and child.complete
    assert child.manifest_record.parent["turn"] == branch_at and child.manifest_record.parent["path"] == str(parent_path)
    for i in range(start_frame + 1):
        assert np.array_equal(parent.frames.indices(i), child.frames.indices(i))
        assert np.array_equal(parent.frames.ram(i), child.frames.ram(i))
    # the random agent's stream was rewound too: the branch replays the parent's turns exactly
    n = len(parent.turn_records)
    assert [t.actions for t in child.turn_records[:n]] == [t.actions for t in parent.turn_records]
    assert verify(child).ok


def test_latency_clock_runs_noops_for_the_thinking_time(tmp_path):
    agent = ScriptedAgent(["move: [right]"], latency_s=0.5)
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=60, clock="latency")), agent=agent)
    drive(e)
    t = turns_of(e.writer.path)
    assert t[0]["noop_frames"] == 15 and t[0]["end_frame"] == 18
    assert e.summary.frames == 60
    assert verify(Recording(e.writer.path)).ok


def test_fatal_error_stops_the_run_and_keeps_the_recording(tmp_path):
    agent = ScriptedAgent(["move: [fire]", "move: [left]", FatalAgentError("bad key: set OPENAI_API_KEY")])
    e = start_run(RunSpec(game="breakout", out=str(tmp_path)), agent=agent)
    s = drive(e)
    assert not s.complete and "bad key" in s.stopped and s.turns == 2
    rec = Recording(e.writer.path)
    assert rec.summary_record.complete is False and len(rec.turn_records) == 2 and len(rec.frames) == 1 + 3 + 3


def test_max_cost_stops_cleanly(tmp_path):
    agent = ScriptedAgent(["move: [left]"], cost=0.01)
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), max_cost=0.025), agent=agent)
    s = drive(e)
    assert s.turns == 3 and "cost cap" in s.stopped and abs(s.cost_usd - 0.03) < 1e-9
    assert turns_of(e.writer.path)[0]["usage"]["input_tokens"] == 100


def test_verify_catches_a_tampered_frame_and_tampered_actions(tmp_path):
    e = start_run(RunSpec(game="breakout", agent="random", out=str(tmp_path), protocol=Protocol(frames=120)))
    drive(e)
    path = e.writer.path
    assert verify(Recording(path)).ok
    lines = (path / "turns.jsonl").read_text().splitlines()
    t = json.loads(lines[10])
    t["actions"] = ["left" if a != "left" else "right" for a in t["actions"]]
    lines[10] = json.dumps(t)
    (path / "turns.jsonl").write_text("\n".join(lines) + "\n")
    res = verify(Recording(path))
    assert not res.ok and t["start_frame"] < res.first_mismatch <= 120


def test_verify_reports_a_damaged_frame_block(tmp_path):
    e = start_run(RunSpec(game="breakout", agent="random", out=str(tmp_path), protocol=Protocol(frames=60)))
    drive(e)
    path = e.writer.path
    data = bytearray((path / "frames.bin").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (path / "frames.bin").write_bytes(bytes(data))
    assert not verify(Recording(path)).ok


def test_replay_agent_reproduces_a_recording(tmp_path):
    e = start_run(RunSpec(game="qbert", agent="random", seed=2, out=str(tmp_path), protocol=Protocol(frames=300)))
    src = drive(e)
    r = start_run(RunSpec(game="qbert", agent=f"replay:{e.writer.path}", seed=2, out=str(tmp_path),
                          protocol=Protocol(frames=300)))
    again = drive(r)
    assert again.total_reward == src.total_reward and again.turns == src.turns
    a, b = Recording(e.writer.path), Recording(r.writer.path)
    assert [t.actions for t in a.turn_records] == [t.actions for t in b.turn_records]
    assert all(np.array_equal(a.frames.indices(i), b.frames.indices(i)) for i in range(0, 301, 25))
    assert b.manifest_record.agent["kind"] == "replay"


def test_run_identity_ignores_transport_but_not_generation():
    from workstation.game.games import get_game
    from workstation.run.start import run_identity

    g, p = get_game("breakout"), Protocol()
    base = {"spec": "openai:gpt-5.2", "options": {"effort": "low", "timeout": 60, "base_url": None}, "sdk": "openai 3.57"}
    same = {"spec": "openai:gpt-5.2", "options": {"effort": "low", "timeout": 5, "base_url": "http://x"}, "sdk": "openai 9"}
    other = {"spec": "openai:gpt-5.2", "options": {"effort": "high"}}
    assert run_identity(g, p, 0, base, "d") == run_identity(g, p, 0, same, "d")
    assert run_identity(g, p, 0, base, "d") != run_identity(g, p, 0, other, "d")
    assert run_identity(g, p, 0, base, "d") != run_identity(g, p, 1, base, "d")
    assert run_identity(g, p, 0, base, "d") != run_identity(g, Protocol(max_actions=5), 0, base, "d")


def test_a_headless_engine_keeps_no_snapshots_and_says_so(tmp_path):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=30)), rewindable=False)
    drive(e)
    assert e.turns_available == []
    with pytest.raises(ValueError, match="cannot branch at turn 2: this engine keeps no rewind points"):
        branch_run(e, 2)


def test_stopping_mid_action_records_the_cut_turn_so_the_recording_verifies(tmp_path):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=60)),
                  agent=ScriptedAgent(["move: [fire, right, left]"]))
    e.run_turn()
    e.step(), e.step(), e.step()  # prompt, reply, plan of turn 1
    e.step()  # fire
    e.step_frame()  # one frame of right
    e.stop()
    t = turns_of(e.writer.path)
    assert [x["actions"] for x in t] == [["fire", "right", "left"], ["fire", "right"]]
    assert t[1]["action_frames"] == [12, 13] and t[1]["end_frame"] == 13
    assert e.summary.turns == 2 and e.summary.frames == 13 and e.summary.stopped == "stopped by the user"
    assert verify(Recording(e.writer.path)).ok


def test_stopping_during_latency_noops_records_the_noops_run(tmp_path):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=90, clock="latency")),
                  agent=ScriptedAgent(["move: [right]"], latency_s=0.5))
    e.step(), e.step(), e.step()
    for _ in range(4):
        e.step_frame()
    e.stop()
    (t,) = turns_of(e.writer.path)
    assert t["noop_frames"] == 4 and t["actions"] == [] and t["end_frame"] == 4
    assert verify(Recording(e.writer.path)).ok


def test_latency_noops_cut_by_the_budget_record_only_the_frames_run(tmp_path):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=20, clock="latency")),
                  agent=ScriptedAgent(["move: [right]"], latency_s=1.0))  # 30 NOOP frames asked, 20 left
    s = drive(e)
    (t,) = turns_of(e.writer.path)
    assert s.complete and t["noop_frames"] == 20 and t["actions"] == [] and t["end_frame"] == 20
    assert verify(Recording(e.writer.path)).ok


def test_an_agent_crash_closes_the_recording_as_stopped_and_raises(tmp_path):
    agent = ScriptedAgent(["move: [fire]", "move: [left]", RuntimeError("provider bug\nsecond line")])
    e = start_run(RunSpec(game="breakout", out=str(tmp_path)), agent=agent)
    with pytest.raises(RuntimeError, match="provider bug"):
        drive(e)
    rec = Recording(e.writer.path)
    assert rec.summary_record.stopped == "RuntimeError: provider bug" and rec.summary_record.complete is False
    assert len(rec.turn_records) == 2 and verify(rec).ok


class _FailingAgent(ScriptedAgent):
    """Answers every turn with no usable text, as a provider does after its retries."""

    def __init__(self, error: str):
        super().__init__([])
        self.error = error

    def act(self, prompt, ctx, on_text=None):
        return Reply("", error=self.error)


@pytest.mark.parametrize("error, line", [
    ("no usable reply after 3 attempt(s): 503 service unavailable",
     "no usable reply after 3 attempt(s): 503 service unavailable"),
    ("timed out after 60 s", "no usable reply: timed out after 60 s"),
])
def test_a_failed_reply_records_the_agents_one_line_error(tmp_path, error, line):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=3)), agent=_FailingAgent(error))
    drive(e)
    (t,) = turns_of(e.writer.path)
    assert t["errors"] == [line] and t["actions"] == ["noop"] and t["valid"] is False and t["error"] == error


def test_append_only_prompts_match_a_fresh_rebuild_every_turn(tmp_path):
    from workstation.run.request import rebuild_prompt

    agent = ScriptedAgent(["move: [fire, left]", "move: [right]", "move: [noop, noop, left]"])
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=60, memory="append")),
                  agent=agent)
    drive(e)
    rec = Recording(e.writer.path)
    assert len(agent.prompts) == len(rec.turn_records) > 5
    for turn, asked in enumerate(agent.prompts):
        assert asked.to_json() == rebuild_prompt(rec, turn).to_json()
    assert len(agent.prompts[-1].messages) == 2 + 2 * (len(rec.turn_records) - 1)


@pytest.mark.parametrize("memory", ["structured", "append"])
def test_latency_clock_tells_the_model_the_game_ran_on(tmp_path, memory):
    agent = ScriptedAgent(["move: [right]"], latency_s=0.5)
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=60, clock="latency", memory=memory)),
                  agent=agent)
    drive(e)
    first, second = agent.prompts[0].render_text(), agent.prompts[1].render_text()
    assert "ran on for" not in first
    assert "ran on for 0.5 s" in second
    paused = ScriptedAgent(["move: [right]"], latency_s=0.5)
    drive(start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=30, memory=memory)), agent=paused))
    assert all("ran on for" not in p.render_text() for p in paused.prompts)
    from workstation.run.request import rebuild_prompt

    rec = Recording(e.writer.path)
    assert rebuild_prompt(rec, 1).digest() == rec.turn_records[1].prompt_digest
