"""Two-player matches: the lockstep clock, the padding rule, prompts per side, recording, verify, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.fake_provider import KEYS, SPECS, FakeProvider, fake_server  # noqa: F401
from workstation.cli import main
from workstation.engine.calls import Reply
from workstation.engine.match_engine import MatchAction, MatchEngine, MatchTurnEnded
from workstation.engine.promptpack import load_pack
from workstation.game.protocol import Protocol
from workstation.game.twoplayer import TWO_PLAYER_GAMES, TwoPlayerClock, emulator_seed, get_two_player_game
from workstation.run.match_sides import load_match_text
from workstation.run.match_start import MatchSpec, side_builders, start_match
from workstation.run.match_verify import verify_match
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parents[1]


class Script:
    """Answers each turn with the next scripted plan; records the prompts it saw."""

    reads_prompt = True

    def __init__(self, plans: list[str], barrier: threading.Barrier | None = None) -> None:
        self.spec, self.plans, self.barrier, self.prompts = "script", list(plans), barrier, []

    def act(self, prompt, ctx, on_text=None) -> Reply:
        self.prompts.append(prompt)
        if self.barrier is not None:
            self.barrier.wait()  # both sides must be asked at once, or this times out
        return Reply(f"thought: t\nmove: [{self.plans[ctx.turn % len(self.plans)]}]")

    def close(self) -> None:
        pass

    def describe(self) -> dict:
        return {"kind": "script", "spec": self.spec}


def _engine(p1: list[str], p2: list[str], game: str = "boxing", frames: int = 30, **kw) -> MatchEngine:
    tp = get_two_player_game(game)
    pack = load_pack(None)
    protocol = Protocol(frames=frames)
    return MatchEngine(tp, protocol, (Script(p1, kw.pop("barrier", None)), Script(p2, kw.pop("barrier2", None))),
                       0, side_builders(tp, protocol, pack, load_match_text(pack, tp.key), None), **kw)


def test_lockstep_both_actions_in_the_same_three_frames():
    tp = get_two_player_game("boxing")
    seen = []
    a = TwoPlayerClock(tp, Protocol(), 0, sink=lambda screen, rgb, ram: seen.append(ram.copy()))
    b = TwoPlayerClock(tp, Protocol(), 0)
    a.start(), b.start()
    right, left = tp.game.vocabulary["right"], tp.game.vocabulary["left"]
    out = a.act(right, left)
    assert out.frames == 3 and a.frame == 3 and len(seen) == 4  # frame 0, then one per frame
    for _ in range(3):  # the same as the two ALE actions given together on each of the 3 frames
        b.step_frame((tp.ale_action(right), tp.ale_action(left)))
    assert np.array_equal(a.ram(), b.ram())
    c = TwoPlayerClock(tp, Protocol(), 0)
    c.start()
    c.act(right, None)  # side 2 held still: a different state, so side 2's action did act
    assert not np.array_equal(c.ram(), a.ram())


def test_budget_cuts_the_last_action():
    clock = TwoPlayerClock(get_two_player_game("pong"), Protocol(frames=4), 0)
    clock.start()
    assert clock.act(0, 0).frames == 3
    assert clock.act(0, 0).frames == 1 and clock.done and clock.remaining == 0


def test_shorter_plan_is_padded_with_noop_and_the_turn_ends_when_both_are_spent():
    engine = _engine(["up, up, fire"], ["left"], frames=30)
    engine.start()
    records = []
    engine.observers.append(lambda ev: records.append(ev.record.to_json()) if isinstance(ev, MatchTurnEnded) else None)
    engine.play_turn()
    engine.play_turn()
    first = records[0]
    p1, p2 = first["players"]
    assert p1["actions"] == ["up", "up", "fire"] and p1["padded"] == 0
    assert p2["actions"] == ["left", "noop", "noop"] and p2["padded"] == 2 and p2["planned"] == ["left"]
    assert first["lockstep_frames"] == [3, 6, 9] and first["end_frame"] == 9
    assert records[1]["start_frame"] == 9  # the next turn starts where both plans ended
    engine.close()


def test_each_side_is_told_its_sprite_and_its_own_score():
    engine = _engine(["fire"], ["fire"], frames=9)
    engine.run()
    one, two = (p.agent.prompts[-1].render_text() for p in engine.players)
    assert "white boxer" in one.split("opponent is")[0] and "black boxer" in two.split("opponent is")[0]
    assert "player 1 of two" in one and "player 2 of two" in two
    assert "Score so far: you" in one and "Score so far: you" in two
    engine.close()


def test_both_model_calls_are_made_at_once():
    barrier = threading.Barrier(2, timeout=10)
    engine = _engine(["fire"], ["left"], frames=9, barrier=barrier, barrier2=barrier)
    summary = engine.run()  # one call at a time would leave the first waiting at the barrier, then break it
    assert summary["complete"] and summary["turns"] == 3
    engine.close()


def _match(tmp_path: Path, game: str, seed: int = 3, frames: int = 900) -> Path:
    engine = start_match(MatchSpec(game, "random", "random", seed, Protocol(frames=frames), str(tmp_path)))
    try:
        engine.run()
    finally:
        engine.close()
    return engine.writer.path


@pytest.mark.parametrize("game", ["boxing", "pong"])
def test_match_is_zero_sum_verifies_and_repeats(tmp_path, game):
    a, b = _match(tmp_path / "a", game), _match(tmp_path / "b", game)
    ra, rb = Recording(a), Recording(b)
    sa, sb = ra.summary_record, rb.summary_record
    assert ra.manifest_record.run_id == rb.manifest_record.run_id and a.name == b.name
    scores = [p["score"] for p in sa.players]
    assert scores == [p["score"] for p in sb.players]
    assert scores[1] == -scores[0] and scores != [0, 0]  # both games are zero-sum; seed 3 scores
    assert [p["side"] for p in sa.players] == [1, 2] and sa.winner == (1 if scores[0] > 0 else 2)
    assert [p["agent"]["spec"] for p in ra.manifest_record.players] == ["random", "random"]
    assert verify_match(ra).ok and ra.damage() is None


def test_verify_finds_a_changed_action(tmp_path):
    path = _match(tmp_path, "pong", frames=60)
    lines = (path / "turns.jsonl").read_text().splitlines()
    t = json.loads(lines[2])
    side = t["players"][1]
    side["actions"][0] = "fire" if side["actions"][0] != "fire" else "left"
    if side["padded"] == len(side["actions"]):
        side["padded"] -= 1
    lines[2] = json.dumps(t)
    (path / "turns.jsonl").write_text("\n".join(lines) + "\n")
    res = verify_match(Recording(path))
    assert not res.ok and res.first_mismatch is not None and res.first_mismatch > 0


def test_match_cli_verify_and_summary(tmp_path, capsys):
    assert main(["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--seed", "3", "--frames", "60",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    rec = Path(out[0])
    assert "side 1 (random)" in out[1]
    assert main(["verify", str(rec)]) == 0
    assert capsys.readouterr().out.startswith("OK: 61 frames identical")
    assert main(["info", str(rec)]) == 0
    assert "players    side 1 random" in capsys.readouterr().out
    summary = json.loads((rec / "summary.json").read_text())
    assert {"side", "agent", "score", "lives_lost"} <= set(summary["players"][0]) and "winner" in summary


def test_a_model_plays_a_side_through_the_fake_provider(fake_server: FakeProvider, tmp_path):  # noqa: F811
    fake_server.reset()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "workstation", "match", "--game", "boxing", "--p1", SPECS["compat"],
                        "--p2", "random", "--base-url", fake_server.url("compat"), "--frames", "30",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert r.returncode == 0, r.stderr
    rec = Recording(Path(r.stdout.splitlines()[0]))
    first = rec.match_turns[0].players[0]
    assert first.planned == ["left", "left", "fire"] and first.usage["output_tokens"] > 0
    assert rec.summary_record.players[0]["calls"] >= 1 and rec.summary_record.players[1]["calls"] == 0
    sent = json.dumps(fake_server.seen[0].body)
    assert "white boxer" in sent and "Score so far: you 0" in sent and "black boxer, starting" in sent


def test_every_two_player_game_has_its_side_texts():
    pack = load_pack(None)
    for key in TWO_PLAYER_GAMES:
        text = load_match_text(pack, key)
        assert text.guide(1, "full") != text.guide(2, "full")


BAD = [
    (["match", "--game", "breakout", "--p1", "random", "--p2", "random"],
     "one-player game here; the two-player games are boxing"),
    (["match", "--game", "nosuch", "--p1", "random", "--p2", "random"], "the two-player games are"),
    (["match", "--game", "boxing", "--p1", "human", "--p2", "human"], "play --game G --vs human"),
    (["match", "--game", "boxing", "--p1", "human", "--p2", "random"], "workstation play --game G --vs"),
    (["match", "--game", "boxing", "--p1", "bogus", "--p2", "random"], "--p1: unknown agent"),
    (["match", "--game", "boxing", "--p1", "random", "--p2", "replay:/nonexistent"], "--p2: no recording"),
    (["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--clock", "latency"], "paused clock"),
    (["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--seed", "-1"], "--seed must be 0"),
    (["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--frames", "0"], "--frames must be"),
    (["match", "--game", "boxing", "--p1", "random"], "--p2"),
    (["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--effort", "low"],
     "--effort applies to model agents, and neither side is one"),
    (["match", "--game", "pong", "--p1", "random", "--p2", "random", "--game-mode", "1"],
     "--game-mode 1: pong's two-player modes are 3, 4"),
    (["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--p3", "random"], "unrecognized arguments"),
]


@pytest.mark.parametrize("argv,needle", BAD, ids=[" ".join(c[0][1:5]) + f" #{i}" for i, c in enumerate(BAD)])
def test_bad_match_input_is_one_line_exit_2(argv, needle, tmp_path, capsys):
    try:
        code = main([*argv, "--out", str(tmp_path / "out")])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_start_is_the_same_in_every_emulator_even_for_seed_0():
    # the emulator's own seed 0 gives a varying start (about 1 reset in 20): a match seed never becomes it
    assert [emulator_seed(s) for s in (0, 1, 2**31 - 2, 2**32 - 1)] == [1, 2, 2**31 - 1, 2]
    tp = get_two_player_game("boxing")
    starts = {TwoPlayerClock(tp, Protocol(), seed).ram().tobytes() for seed in (0, 0, 1, 7, 2**32 - 1)}
    assert len(starts) == 1  # and every seed starts the same (sticky actions off)


class Failing(Script):
    def act(self, prompt, ctx, on_text=None) -> Reply:
        return Reply("", error="HTTP 500 after 3 tries")


def test_a_side_whose_calls_keep_failing_stops_the_match_after_three_turns():
    tp = get_two_player_game("pong")
    pack = load_pack(None)
    protocol = Protocol(frames=300)
    engine = MatchEngine(tp, protocol, (Script(["left"]), Failing([])), 0,
                         side_builders(tp, protocol, pack, load_match_text(pack, tp.key), None))
    s = engine.run()
    engine.close()
    assert s["turns"] == 3 and not s["complete"] and s["stopped"].startswith("side 2: 3 turns in a row lost")
    assert s["players"][1]["failed_turns"] == 3 and s["players"][0]["failed_turns"] == 0


def test_a_match_interrupted_mid_turn_keeps_a_recording_that_verifies(tmp_path):
    engine = start_match(MatchSpec("pong", "random", "random", 1, Protocol(frames=300), str(tmp_path)))

    def interrupt(ev) -> None:
        if isinstance(ev, MatchAction) and ev.turn == 2:
            raise KeyboardInterrupt

    engine.observers.append(interrupt)
    with pytest.raises(KeyboardInterrupt):
        engine.run()
    engine.close()
    rec = Recording(engine.writer.path)
    assert rec.summary_record.complete is False and rec.summary_record.stopped == "interrupted"
    assert len(rec.match_turns) == 2
    res = verify_match(rec)
    assert res.ok and res.unchecked_frames == 3 and res.turns_checked == 2


def test_the_quick_check_and_info_take_verify_s_rule_for_an_interrupted_match(tmp_path, capsys):
    from workstation.store.integrity import interrupted_tail

    engine = start_match(MatchSpec("pong", "random", "random", 1, Protocol(frames=300), str(tmp_path)))

    def interrupt(ev) -> None:
        if isinstance(ev, MatchAction) and ev.turn == 2:
            raise KeyboardInterrupt

    engine.observers.append(interrupt)
    with pytest.raises(KeyboardInterrupt):
        engine.run()
    engine.close()
    path = engine.writer.path
    rec = Recording(path)
    tail = verify_match(rec).unchecked_frames
    assert tail > 0 and interrupted_tail(rec) == tail and rec.problems() == []
    for args in (["verify", str(path)], ["verify", "--quick", str(path)], ["info", str(path)]):
        assert main(args) == 0, args
        captured = capsys.readouterr()
        assert "DAMAGED" not in captured.out + captured.err, args
    assert main(["verify", "--quick", str(path)]) == 0
    assert f"the last {tail} frames belong to a turn interrupted" in capsys.readouterr().out
    # the rule is narrow: a complete match, or more frames than one turn makes, is still a mismatch
    summary = json.loads((path / "summary.json").read_text())
    summary["complete"] = True
    (path / "summary.json").write_text(json.dumps(summary))
    assert "; the last turn ends at frame" in "; ".join(Recording(path).problems())
    summary.update(complete=False, frames=summary["frames"] + 40)
    (path / "summary.json").write_text(json.dumps(summary))
    assert interrupted_tail(Recording(path)) == 0 and Recording(path).problems()


def test_every_side_prompt_of_a_match_is_rebuilt_exactly(tmp_path, capsys):
    from workstation.run.match_request import rebuild_side_prompt

    path = _match(tmp_path, "boxing", seed=3, frames=150)
    rec = Recording(path)
    for turn in range(len(rec.match_turns)):
        for side in (1, 2):  # the recorded digest is checked: a different prompt raises
            prompt = rebuild_side_prompt(rec, turn, side)
    assert "Score so far" in prompt.render_text()
    assert main(["request", str(path), "--turn", "3", "--side", "2"]) == 0
    out = capsys.readouterr().out
    assert "side 2" in out and "black boxer, who starts" in out


def test_both_random_boxers_can_land_punches_with_the_one_player_baseline_s_draw(tmp_path):
    from workstation.game.games import GAMES
    from workstation.run.agents.random_agent import RandomAgent
    from workstation.run.match_players import make_side_agent

    tp = get_two_player_game("boxing")
    agent = make_side_agent("random", tp, 3, 1)
    assert isinstance(agent, RandomAgent) and agent.max_per_turn == 3  # n uniform in 1..3, then n uniform actions
    assert agent._names == GAMES["boxing"].action_names and len(agent._names) == 18
    landed = {}
    for seed in (2, 3):  # measured: seed 2 side 1 wins 1-0, seed 3 side 2 wins (0..9: six of ten score)
        rec = Recording(_match(tmp_path / str(seed), "boxing", seed=seed))
        landed[seed] = [sum(1 for t in rec.match_turns for r in t.players[k].action_rewards if r > 0) for k in (0, 1)]
    assert landed[2][0] > 0 and landed[3][1] > 0


def test_a_match_whose_summary_seats_another_agent_is_damaged(tmp_path):
    import json as _json
    import shutil as _shutil

    from workstation.cli import main as _main
    from workstation.store.integrity import match_problems
    from workstation.store.recording import Recording

    assert _main(["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--seed", "0", "--frames", "30",
                  "--out", str(tmp_path / "m")]) == 0
    (rec,) = [p for p in (tmp_path / "m").iterdir() if p.is_dir()]
    assert match_problems(Recording(rec)) == []
    forged = tmp_path / "forged"
    _shutil.copytree(rec, forged)
    s = _json.loads((forged / "summary.json").read_text())
    s["players"][0]["agent"] = "openai:x"
    (forged / "summary.json").write_text(_json.dumps(s))
    assert match_problems(Recording(forged)) == ["the summary's side 1 agent 'openai:x' is not the manifest's 'random'"]
