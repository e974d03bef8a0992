"""Game over as the public AtariBench harness plays it (rule 2), on the real emulator.

The sequence below was found with the engine itself: a Breakout plan of a serve
then nine NOOPs, repeated, loses the last ball on budget frame 577, one frame
into the third action of turn 19 (turn 19 starts at 570: fire 571-573, noop
574-576, noop cut at 577).
"""

from __future__ import annotations

import json

import pytest

from tests.agents_for_tests import ScriptedAgent
from workstation.game.protocol import Protocol
from workstation.run.agents.human_agent import HumanAgent
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.run.verify import verify
from workstation.store.recording import Recording

PLAN = ["fire"] + ["noop"] * 9
REPLY = "move: [" + ", ".join(PLAN) + "]"
OVER_TURN, OVER_START, OVER_FRAME = 19, 570, 577


def turns_of(path) -> list[dict]:
    return [json.loads(line) for line in (path / "turns.jsonl").read_text().splitlines()]


def run(tmp_path, frames=900, agent=None, **protocol):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=frames, **protocol)),
                  agent=agent or ScriptedAgent([REPLY]), rewindable=False)
    summary = drive(e)
    e.close()
    return e, summary, turns_of(e.writer.path)


def test_the_terminal_frame_cuts_the_action_and_the_plan(tmp_path):
    e, s, turns = run(tmp_path)
    t = turns[OVER_TURN]
    assert [x["turn"] for x in turns if x["game_over"]] == [OVER_TURN], "one game over in the run"
    assert t["start_frame"] == OVER_START
    assert t["actions"] == ["fire", "noop", "noop"] and t["action_frames"] == [573, 576, OVER_FRAME]
    assert t["cut_frames"] == 1, "the action in progress stops on the terminal frame"
    assert t["dropped"] == ["noop"] * 7, "the rest of the plan is dropped"
    assert t["end_frame"] == OVER_FRAME
    assert t["action_life_lost"] == [False, False, True] and t["lives_lost"] == 1, "the last life counts"
    assert t["action_reset"] == [False, False, True]
    assert t["reset_frame"] == OVER_FRAME + 1, "the new game's first frame is a budget frame of its own"
    nxt = turns[OVER_TURN + 1]
    assert nxt["start_frame"] == OVER_FRAME + 1 and not nxt["game_over"]
    assert sum(x["lives_lost"] for x in turns[: OVER_TURN + 1]) == 5, "all five lives of the first game"
    assert s.lives_lost == sum(x["lives_lost"] for x in turns) and s.lives_lost > 5
    assert s.games_ended == 1 and s.complete and s.frames == 900
    assert len(Recording(e.writer.path).frames) == 901
    assert verify(Recording(e.writer.path)).ok


def test_the_next_prompt_carries_the_reset_notice(tmp_path):
    agent = ScriptedAgent([REPLY])
    run(tmp_path, agent=agent)
    notice = "the game ended and restarted"
    text = lambda p: " ".join(part.text for m in p.messages for part in m.parts if hasattr(part, "text"))
    assert notice not in text(agent.prompts[OVER_TURN])
    assert notice in text(agent.prompts[OVER_TURN + 1]), "the turn after the game over says the game restarted"


def test_the_terminal_frame_itself_is_recorded(tmp_path):
    e, _, _ = run(tmp_path)
    frames = Recording(e.writer.path).frames
    # the game-over screen and the new game's first frame are different frames
    assert (frames.indices(OVER_FRAME) != frames.indices(OVER_FRAME + 1)).any()
    # Breakout keeps its lives count in RAM byte 57: 0 on the game-over screen, 5 in the new game
    assert frames.ram(OVER_FRAME)[57] == 0 and frames.ram(OVER_FRAME + 1)[57] == 5


def test_a_game_over_on_the_last_budget_frame_ends_the_run(tmp_path):
    e, s, turns = run(tmp_path, frames=OVER_FRAME)
    t = turns[-1]
    assert t["turn"] == OVER_TURN and t["game_over"] and t["reset_frame"] is None
    assert s.frames == OVER_FRAME and s.complete and s.games_ended == 1 and s.lives_lost == 5
    assert len(Recording(e.writer.path).frames) == OVER_FRAME + 1, "no reset frame past the budget"
    assert verify(Recording(e.writer.path)).ok


def test_a_reset_frame_that_uses_up_the_budget_ends_the_run(tmp_path):
    e, s, turns = run(tmp_path, frames=OVER_FRAME + 1)
    assert turns[-1]["turn"] == OVER_TURN and turns[-1]["reset_frame"] == OVER_FRAME + 1
    assert s.frames == OVER_FRAME + 1 and s.turns == OVER_TURN + 1 and s.complete
    assert verify(Recording(e.writer.path)).ok


@pytest.mark.parametrize("frames, cut", [(574, 1), (575, 2)])
def test_the_budget_cuts_the_last_action_by_frames(tmp_path, frames, cut):
    e, s, turns = run(tmp_path, frames=frames)
    t = turns[-1]
    assert t["end_frame"] == frames and t["cut_frames"] == cut and not t["game_over"]
    assert t["dropped"] == ["noop"] * 8
    assert s.frames == frames and s.complete
    assert verify(Recording(e.writer.path)).ok


def test_a_paused_human_run_is_cut_the_same_way(tmp_path):
    human = HumanAgent(lambda ctx: list(PLAN), mode="paused")
    e, s, turns = run(tmp_path, agent=human)
    t = turns[OVER_TURN]
    assert t["start_frame"] == OVER_START and t["end_frame"] == OVER_FRAME and t["cut_frames"] == 1
    assert t["dropped"] == ["noop"] * 7 and t["reset_frame"] == OVER_FRAME + 1
    assert turns[OVER_TURN + 1]["start_frame"] == OVER_FRAME + 1
    assert sum(x["lives_lost"] for x in turns[: OVER_TURN + 1]) == 5 and s.games_ended == 1
    assert verify(Recording(e.writer.path)).ok


def test_the_latency_clock_shifts_the_game_over_but_keeps_the_rule(tmp_path):
    e, s, turns = run(tmp_path, agent=ScriptedAgent([REPLY], latency_s=0.1), clock="latency")
    (t,) = [x for x in turns if x["game_over"]]
    assert t["reset_frame"] == t["end_frame"] + 1
    assert turns[t["turn"] + 1]["start_frame"] == t["reset_frame"]
    assert s.games_ended == 1 and sum(x["lives_lost"] for x in turns[: t["turn"] + 1]) == 5
    assert verify(Recording(e.writer.path)).ok


def test_rewind_to_before_the_game_over_and_branch_plays_it_again(tmp_path):
    from workstation.run.start import branch_run

    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=700)),
                  agent=ScriptedAgent([REPLY]))
    drive(e)
    branch = branch_run(e, OVER_TURN - 1)
    drive(e)
    e.close()
    turns = turns_of(branch)
    t = turns[OVER_TURN]
    assert t["game_over"] and t["end_frame"] == OVER_FRAME and t["reset_frame"] == OVER_FRAME + 1
    assert verify(Recording(branch)).ok


def test_recordings_made_under_rule_1_still_verify(tmp_path):
    from workstation.run import start

    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=700)),
                  agent=ScriptedAgent([REPLY]), rewindable=False)
    e.clock.rules = 1  # the old rule: reset inside the terminal step, the plan goes on
    drive(e)
    e.close()
    path = e.writer.path
    manifest = json.loads((path / "manifest.json").read_text())
    del manifest["rules"]  # made before the rule was versioned
    (path / "manifest.json").write_text(json.dumps(manifest))
    turns = turns_of(path)
    assert not any(len(t["actions"]) < len(PLAN) for t in turns[:-1]), "rule 1 never cut a plan"
    assert verify(Recording(path)).ok
    manifest["rules"] = 2  # claiming the new rule for an old recording is caught
    (path / "manifest.json").write_text(json.dumps(manifest))
    assert not verify(Recording(path)).ok
    assert start.GAME_OVER_RULE == 2


def test_an_unknown_rule_is_one_line(tmp_path):
    from workstation.store.recording import RecordingError

    e, _, _ = run(tmp_path, frames=30)
    m = json.loads((e.writer.path / "manifest.json").read_text())
    m["rules"] = 99
    (e.writer.path / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(RecordingError, match="game-over rule 99"):
        verify(Recording(e.writer.path))


def test_verify_knows_a_killed_runs_last_turn_from_missing_turns(tmp_path):
    import shutil

    e, _, _ = run(tmp_path / "run", frames=300)
    killed = tmp_path / "killed"
    shutil.copytree(e.writer.path, killed)
    (killed / "summary.json").unlink()
    lines = (killed / "turns.jsonl").read_text().splitlines(keepends=True)
    (killed / "turns.jsonl").write_text("".join(lines[:-1]))  # the last turn never written: one turn's frames
    res = verify(Recording(killed))
    assert res.ok and 0 < res.unchecked_frames <= 31
    (killed / "turns.jsonl").write_text("".join(lines[:-5]))  # five turns gone: not a kill, damage
    res = verify(Recording(killed))
    assert not res.ok and "turns are missing" in res.detail
