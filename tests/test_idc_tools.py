"""The reflector's tool loop on all four provider paths (real SDKs over HTTP to the fake), and its tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fake_provider import Step, agent_cache, agents, fake, fake_server, frames, keys, tool_step  # noqa: F401
from workstation.engine.calls import ToolCall
from workstation.run.drive import drive
from workstation.studies.idc.reflector import reflect
from workstation.studies.idc.tools import NOTEBOOK_MAX_CHARS, Workbench


@pytest.fixture(scope="module")
def round_root(tmp_path_factory) -> Path:
    """A round's root holding one real recording (random agent, 30 frames)."""
    from workstation.game.protocol import Protocol
    from workstation.run.options import RunSpec
    from workstation.run.start import start_run

    root = tmp_path_factory.mktemp("round") / "runs"
    engine = start_run(RunSpec("freeway", protocol=Protocol(frames=30), out=str(root)), rewindable=False)
    drive(engine)
    engine.close()
    return root


def script(rec: str) -> list[Step]:
    return [tool_step("list_dir", path="."), tool_step("read_text", path=f"{rec}/manifest.json"),
            tool_step("read_image", path=rec, frame=0), tool_step("grep", pattern="freeway", path=rec),
            tool_step("write_notebook", text="private notes"), tool_step("submit_diagnosis", diagnosis="too slow"),
            tool_step("submit_skill", skill="Move up when the lane is clear.")]


def results_in(seen) -> list[str]:
    """The tool results a request carried back, in its provider's own shape (their text)."""
    b = seen.body
    if seen.api == "chat":
        return [m["content"] for m in b["messages"] if m["role"] == "tool" and m.get("tool_call_id")]
    if seen.api == "responses":
        out = []
        for item in b["input"]:
            if item.get("type") == "function_call_output" and item.get("call_id"):
                o = item["output"]
                out.append(o if isinstance(o, str) else "".join(c.get("text", "") for c in o))
        return out
    if seen.api == "messages":
        return ["".join(c.get("text", "") for c in blk["content"]) for m in b["messages"] if m["role"] == "user"
                for blk in m["content"] if blk.get("type") == "tool_result" and blk.get("tool_use_id")]
    return [p["functionResponse"]["response"].get("result", "") for c in b["contents"] for p in c["parts"]
            if "functionResponse" in p]


def images_in(seen) -> int:
    text = str(seen.body)
    return text.count("image/png") + text.count("'inlineData'")


@pytest.mark.parametrize("provider", ["openai", "compat", "anthropic", "gemini"])
def test_the_tool_loop_on_each_provider(provider, agents, fake, round_root):  # noqa: F811
    rec = next(p.name for p in round_root.iterdir() if p.is_dir())
    fake.push(*script(rec))
    bench = Workbench(round_root)
    out = reflect(agents.get(provider), bench, "Round 0 is over.", budget=20)
    assert out.status == "submitted" and out.skill == "Move up when the lane is clear."
    assert out.diagnosis == "too slow" and out.notebook == "private notes" and out.tool_calls == 7
    assert out.requests == 7 and out.usage.output_tokens == 7 * 50
    assert all(s.offers_tools for s in fake.seen)
    last = fake.seen[-1]
    back = results_in(last)
    assert len(back) == 6, back  # every earlier call's result went back, in order
    assert rec in back[0] and '"game": "freeway"' in back[1] and "frame 0" in back[2]
    assert "manifest.json" in back[3] and "notebook saved" in back[4]
    assert images_in(last) >= 1  # read_image's frame went back as an image
    if provider == "anthropic":  # thinking blocks go back with the calls they led to
        first = next(m for m in last.body["messages"] if m["role"] == "assistant")
        assert first["content"][0] == {"type": "thinking", "thinking": "which tool?", "signature": "sig-anthropic"}
    if provider == "gemini":  # and Gemini's thought signatures
        assert "thoughtSignature" in str(last.body["contents"])
    kinds = [e["kind"] for e in out.events]
    assert kinds.count("tool") == 7 and kinds.count("reply") == 7


def test_calls_in_one_reply_are_all_answered_and_sent_back(agents, fake, round_root):  # noqa: F811
    fake.push(Step(text="", tool_calls=[
        {"name": "list_dir", "arguments": {"path": "."}},
        {"name": "submit_diagnosis", "arguments": {"text": "slow"}},
        {"name": "submit_skill", "arguments": {"content": "Go up."}}]), Step(text="done"))
    out = reflect(agents.get("compat"), Workbench(round_root), "go", budget=10)
    assert out.status == "submitted" and out.skill == "Go up." and out.requests == 2
    assert len(results_in(fake.seen[-1])) == 3


def test_the_tools_stay_inside_the_round_and_cap_what_they_return(round_root, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("key")
    link = round_root / "escape"
    if not link.exists():
        os.symlink(secret, link)
    bench = Workbench(round_root)

    def call(name, **args):
        return bench.call(ToolCall("c", name, args))

    for bad in (call("read_text", path="../secret.txt"), call("read_text", path="escape"),
                call("read_text", path=str(secret)), call("list_dir", path="/"), call("grep", pattern="key", path="..")):
        assert bad.is_error and "outside" in bad.text, bad.text
    assert call("grep", pattern="key").text == "no matches"  # the link is not followed
    rec = next(p.name for p in round_root.iterdir() if p.is_dir())
    assert call("read_image", path=rec, frame=10**6).is_error
    img = call("read_image", path=rec, frame=1)
    assert not img.is_error and img.images[0][:8] == b"\x89PNG\r\n\x1a\n"
    assert "binary" in call("read_text", path=f"{rec}/frames.ram").text
    assert call("write_notebook", text="x" * (NOTEBOOK_MAX_CHARS + 1)).is_error
    assert call("submit_skill", skill="go").is_error and "diagnosis first" in call("submit_skill", skill="go").text
    assert call("nope").is_error and call("validate_skill", skill="x").is_error  # no validator: no such tool
    assert not call("submit_diagnosis", summary="s", diagnosis_text="the real one").is_error
    assert bench.diagnosis == "the real one"
    assert not call("submit_skill", title="t", skill_markdown="the skill").is_error and bench.skill == "the skill"
    assert call("write_notebook", count=3).is_error
    bad_args = bench.call(ToolCall("c", "list_dir", {}, error="the arguments are not valid JSON"))
    assert bad_args.is_error and "JSON" in bad_args.text
    link.unlink()
