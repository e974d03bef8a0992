"""Reasoning text per model: think tags and reasoning_content kept as the thought, never the plan.

The rule table and the folding (workstation.run.providers.reasoning), then whole runs through the CLI with
the real openai SDK against the fake provider: replies that open with a think block, a server that
sends the reasoning apart (vLLM-like), a Qwen3-style reply with only the closing tag; each verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_provider import Step, vllm_like
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.options import RunSpec, Transport
from workstation.run.providers.reasoning import fold, rule_for
from workstation.store.recording import Recording


@pytest.mark.parametrize("model, rule", [
    ("Qwen/Qwen3-VL-8B-Thinking", "think_tags"), ("qwen3:8b", "think_tags"), ("Qwen/QwQ-32B", "think_tags"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "think_tags"), ("deepseek-r1:14b", "think_tags"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "leading"), ("llava:13b", "leading"), ("gpt-4o", "leading"),
])
def test_rule_by_model_id(model, rule):
    assert rule_for(model)[0] == rule


def test_fold_makes_one_leading_block():
    assert fold("move: [left]", "ball is left", "leading") == "<think>ball is left</think>\nmove: [left]"
    assert fold("<think>a</think>move: [left]", "b", "leading") == "<think>a</think>move: [left]"  # already there
    assert fold("a</think>\nmove: [left]", "", "think_tags") == "<think>a</think>\nmove: [left]"
    assert fold("a</think>\nmove: [left]", "", "leading") == "a</think>\nmove: [left]"  # only the table's models
    # an unclosed leading block: every rule reads it as all thinking already, so it is kept as sent
    assert fold("<think>never closed move: [fire]", "", "think_tags") == "<think>never closed move: [fire]"
    assert fold("x\n<think>never closed move: [fire]", "", "think_tags") == "<think>never closed move: [fire]</think>\nx\n"
    assert fold("move: [left]", "", "think_tags") == "move: [left]"
    with pytest.raises(ValueError):
        fold("x", "", "tags")


# -- whole runs through the CLI ---------------------------------------------------------

def run(fake, tmp_path: Path, capsys, monkeypatch, model: str = "qwen2.5-vl-7b", *extra: str) -> Recording:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["run", "--game", "breakout", "--agent", f"compat:{model}", "--base-url", fake.url("compat"),
                 "--frames", "60", "--out", str(tmp_path), *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    rec = Recording(Path(out.splitlines()[0]))
    assert rec.complete
    assert main(["verify", str(rec.path)]) == 0, capsys.readouterr()
    capsys.readouterr()
    return rec


THINKS = ["The ball falls left. move: [fire, fire]", "Right this time.\nmove: [right]", "Serve: fire first."]
PLANS = [["left", "left"], ["right"], ["fire", "left"]]


def test_replies_opening_with_think_are_parsed_after_it(fake, tmp_path, capsys, monkeypatch):
    n = [0]

    def reply(seen):
        i = n[0] % 3
        n[0] += 1
        return Step(text=f"<think>{THINKS[i]}</think>\nmove: [{', '.join(PLANS[i])}]")

    fake.responder = reply
    rec = run(fake, tmp_path, capsys, monkeypatch)
    assert len(rec.turn_records) >= 3
    for i, turn in enumerate(rec.turn_records):
        assert turn.valid, turn.errors
        assert turn.planned == PLANS[i % 3]  # never the moves written inside the think block
        assert turn.thought == " ".join(THINKS[i % 3].split())
        assert turn.raw.startswith("<think>")
    assert rec.manifest_record.agent["reasoning"] == {"rule": "leading", "matched": "default"}
    # a replay of it plays the same plans (its thoughts carry the moves written while thinking)
    assert main(["run", "--game", "breakout", "--agent", f"replay:{rec.path}", "--frames", "60",
                 "--out", str(tmp_path / "replay")]) == 0
    again = Recording(Path(capsys.readouterr().out.splitlines()[0]))
    assert [t.actions for t in again.turn_records] == [t.actions for t in rec.turn_records]
    assert [t.thought for t in again.turn_records] == [t.thought for t in rec.turn_records]


def test_an_unclosed_think_is_never_played_under_the_default_rule(fake, tmp_path, capsys, monkeypatch):
    fake.responder = lambda seen: Step(text="<think>never closed move: [right]")
    rec = run(fake, tmp_path, capsys, monkeypatch, "m1")
    assert rec.manifest_record.agent["reasoning"]["rule"] == "leading"
    assert rec.turn_records
    for turn in rec.turn_records:
        assert not turn.valid and "right" not in turn.planned and turn.actions == ["noop"], turn
        assert turn.thought == "never closed move: [right]" and "never closed" in turn.errors[0]


def test_reasoning_content_is_the_thought(fake, tmp_path, capsys, monkeypatch):
    fake.shape = vllm_like(image_limit=None, models=["m"], thinking="thinking apart: move: [fire]")
    fake.responder = lambda seen: Step(text="move: [left]")
    rec = run(fake, tmp_path, capsys, monkeypatch, "m")
    for turn in rec.turn_records:
        assert turn.planned == ["left"]
        assert turn.thought == "thinking apart: move: [fire]"
        assert turn.raw == "<think>thinking apart: move: [fire]</think>\nmove: [left]"


def test_qwen3_reply_with_only_the_closing_tag(fake, tmp_path, capsys, monkeypatch):
    fake.responder = lambda seen: Step(text="the template opened it; move: [fire, fire]\n</think>\n\nmove: [right]")
    rec = run(fake, tmp_path, capsys, monkeypatch, "Qwen/Qwen3-VL-8B-Thinking")
    assert rec.manifest_record.agent["reasoning"] == {"rule": "think_tags", "matched": "qwen3"}
    for turn in rec.turn_records:
        assert turn.planned == ["right"]
        assert turn.thought == "the template opened it; move: [fire, fire]"
        assert turn.raw.startswith("<think>the template opened it")


def test_plain_run_id_is_unchanged(fake, tmp_path, capsys, monkeypatch):
    rec = run(fake, tmp_path, capsys, monkeypatch)
    assert rec.manifest_record.run_id == "8826b4d76f08a29c"  # the id this spec had before reasoning rules and clocks
    assert "clock" not in rec.manifest_record.agent["options"] and "clock_source" not in rec.manifest_record.protocol
    t = Transport(base_url="http://127.0.0.1:1/v1")
    ids = {c: RunSpec(game="breakout", agent="compat:qwen2.5-vl-7b", protocol=Protocol(frames=60, clock=c),
                      transport=t).identity() for c in ("paused", "latency", "latency:server")}
    assert ids["paused"] == "8826b4d76f08a29c" and ids["latency"] == "6f2e5355071e8aff"
    assert ids["latency:server"] not in (ids["paused"], ids["latency"])


# -- one call, streamed and whole ------------------------------------------------------------

def test_reasoning_field_streamed_and_whole(agents, fake, frames):
    from tests.fake_provider import DEFAULT_TEXT
    from workstation.engine.calls import TurnContext
    from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
    from workstation.game.games import get_game

    prompt = Prompt([Message("system", [TextPart("You play Breakout.")]),
                     Message("user", [TextPart("Now:"), ImagePart(2)])], frames)
    ctx = TurnContext(get_game("breakout"), turn=0, max_actions=10, frame=0)
    fake.shape = vllm_like(image_limit=None, models=None, thinking="apart")
    deltas: list[str] = []
    reply = agents.get("compat").act(prompt, ctx, on_text=deltas.append)
    assert reply.text == f"<think>apart</think>\n{DEFAULT_TEXT}" == "".join(deltas)  # live text = recorded text
    fake.push(Step(kind="plain"))
    assert agents.get("compat").act(prompt, ctx).text == f"<think>apart</think>\n{DEFAULT_TEXT}"
    fake.push(*[Step(kind="empty")] * 6)  # thinking but no answer: still an empty reply, tried again
    empty = agents.get("compat", max_attempts=2).act(prompt, ctx)
    assert empty.error and "no text" in empty.error and [a.error_class for a in empty.attempts] == ["empty"] * 2
