"""What the provider agents send through the real SDKs, and what they make of the reply."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from PIL import Image

from tests.fake_provider import DEFAULT_TEXT, KEYS, SPECS, _b64_any, sent_messages
from workstation.engine.calls import Attempt, TurnContext, Usage
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.game.games import get_game
from workstation.run.providers import ProviderOptions, describe_request, make_provider_agent
from workstation.run.providers.adapter import redacted_image

CTX = TurnContext(get_game("breakout"), turn=3, max_actions=10, frame=30)
PROVIDERS = list(SPECS)


def structured(frames) -> Prompt:
    return Prompt([
        Message("system", [TextPart("You play Breakout. Answer with a thought line and a move list.")]),
        Message("user", [TextPart("Recent history. Start:"), ImagePart(0, "start"), TextPart(" after fire:"),
                         ImagePart(4), TextPart(" after left:"), ImagePart(8),
                         TextPart("\nCurrent frame at 0.37s:"), ImagePart(11, "current"), TextPart("\nYour move?")]),
    ], frames)


def append_only(frames) -> Prompt:
    return Prompt([
        Message("system", [TextPart("You play Breakout. Answer with a thought line and a move list.")]),
        Message("user", [TextPart("First frame:"), ImagePart(0)]),
        Message("assistant", [TextPart("thought: serve first\nmove: [fire]")]),
        Message("user", [ImagePart(4), TextPart("Feedback: nothing happened."), ImagePart(8)]),
        Message("assistant", [TextPart("thought: go left\nmove: [left, left]")]),
        Message("user", [TextPart("Now:"), ImagePart(11)]),
    ], frames)


def expected(prompt: Prompt) -> list:
    return [(m.role, [("text", p.text) if isinstance(p, TextPart) else ("image", prompt.png(p)) for p in m.parts])
            for m in prompt.messages]


@pytest.mark.parametrize("build", [structured, append_only])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_text_and_images_go_out_in_prompt_order(agents, fake, frames, provider, build):
    prompt = build(frames)
    agent = agents.get(provider)
    agent.act(prompt, CTX)
    assert len(fake.seen) == 1
    sent = sent_messages(fake.seen[0])
    assert sent == expected(prompt)
    images = [v for _, items in sent for kind, v in items if kind == "image"]
    assert len(images) == len(prompt.images)
    for png, part in zip(images, prompt.images):
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")), frames.rgb(part.frame))


COST = {"openai": (700 * 1.75 + 200 * 0.175 + 100 * 1.75 + 50 * 14.0) / 1e6, "compat": None,
        "anthropic": (700 * 3.0 + 200 * 0.30 + 100 * 3.75 + 50 * 15.0) / 1e6,
        "gemini": (700 * 0.50 + 200 * 0.05 + 50 * 3.0) / 1e6}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_streamed_reply_usage_and_cost(agents, frames, provider):
    deltas: list[str] = []
    reply = agents.get(provider).act(structured(frames), CTX, on_text=deltas.append)
    assert reply.text == DEFAULT_TEXT == "".join(deltas)
    assert len(deltas) == 3  # streamed, not one lump
    cache_write = 0 if provider == "gemini" else 100  # Gemini reports no cache writes
    assert reply.usage == Usage(input_tokens=700, cache_read_tokens=200, cache_write_tokens=cache_write,
                                output_tokens=50, reasoning_tokens=20)
    assert reply.cost_usd == (None if COST[provider] is None else pytest.approx(COST[provider]))
    assert reply.attempts == [Attempt(ok=True, status=200)]
    assert reply.error is None and reply.latency_s > 0
    assert reply.request_id and reply.model
    assert reply.finish_reason in ("completed", "stop", "end_turn", "STOP")


def _body(fake):
    return _swap_images(fake.seen[-1].body)  # Gemini's wire mixes camel and snake case


@pytest.mark.parametrize("provider, spec, opts, check", [
    ("openai", "openai:gpt-5.2", {"effort": "high", "max_output_tokens": 900},
     lambda b: b["reasoning"] == {"effort": "high"} and b["max_output_tokens"] == 900 and "temperature" not in b),
    ("openai", "openai:gpt-4.1", {"temperature": 0.3}, lambda b: b["temperature"] == 0.3 and "reasoning" not in b),
    ("compat", "compat:qwen3-vl", {"effort": "low", "max_output_tokens": 300, "temperature": 0.7},
     lambda b: b["reasoning_effort"] == "low" and b["max_tokens"] == 300 and b["temperature"] == 0.7),
    ("anthropic", "anthropic:claude-sonnet-4-6", {"effort": "medium"},
     lambda b: b["thinking"] == {"type": "adaptive"} and b["output_config"] == {"effort": "medium"}
     and b["max_tokens"] == 8192),
    ("anthropic", "anthropic:claude-opus-4-7", {"effort": "xhigh"},
     lambda b: b["output_config"] == {"effort": "xhigh"}),
    ("anthropic", "anthropic:claude-haiku-4-5", {"effort": "low"},
     lambda b: b["thinking"] == {"type": "enabled", "budget_tokens": 2048} and b["max_tokens"] == 2048 + 4096),
    ("anthropic", "anthropic:claude-sonnet-4-6", {"effort": "none", "temperature": 0.2, "max_output_tokens": 500},
     lambda b: b["thinking"] == {"type": "disabled"} and b["temperature"] == 0.2 and b["max_tokens"] == 500),
    ("gemini", "gemini:gemini-3-flash-preview", {"effort": "high", "temperature": 0.5},
     lambda b: b["generation_config"]["thinking_config"] == {"thinking_level": "HIGH"}
     and b["generation_config"]["temperature"] == 0.5),
    ("gemini", "gemini:gemini-2.5-flash", {"effort": "none", "max_output_tokens": 256},
     lambda b: b["generation_config"]["thinking_config"] == {"thinking_budget": 0}
     and b["generation_config"]["max_output_tokens"] == 256),
])
def test_options_mapped_on_the_wire(agents, fake, frames, provider, spec, opts, check):
    agents.get(provider, spec, **opts).act(structured(frames), CTX)
    assert check(_body(fake)), json.dumps(_body(fake))[:400]


def _cache_marks(body: dict) -> list[str]:
    marks = ["system" for blk in body.get("system", []) if "cache_control" in blk]
    for i, m in enumerate(body["messages"]):
        marks += [f"{m['role']}{i}:{blk['type']}" for blk in m["content"] if "cache_control" in blk]
    return marks


def test_anthropic_cache_marks(agents, fake, frames):
    agent = agents.get("anthropic")
    agent.act(structured(frames), CTX)
    assert _cache_marks(_body(fake)) == ["system"]  # the single user turn changes every call
    agent.act(append_only(frames), CTX)
    assert _cache_marks(_body(fake)) == ["system", "user2:image", "user4:image"]


def _swap_images(node):
    """The recorded body with each base64 PNG replaced as the dump does, and keys in snake case."""
    if isinstance(node, dict):
        return {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): _swap_images(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_swap_images(v) for v in node]
    if isinstance(node, str) and (node.startswith("data:image/png;base64,") or node.startswith("iVBOR")):
        return redacted_image(_b64_any(node.removeprefix("data:image/png;base64,")))
    return node


@pytest.mark.parametrize("provider", PROVIDERS)
def test_payload_dump_is_the_sent_request(agents, fake, frames, provider):
    prompt = append_only(frames)
    agent = agents.get(provider, effort="low")
    dump = describe_request(prompt, SPECS[provider], agent.options)
    agent.act(prompt, CTX)
    seen = fake.seen[-1]
    text = json.dumps(dump)
    assert not any(k in text for k in KEYS.values())
    assert "base64," not in text and "iVBOR" not in text  # no image bytes in the dump
    auth = [h for h, v in dump["headers"].items() if "[redacted]" in v]
    var = {"gemini": "GEMINI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}.get(provider, "OPENAI_API_KEY")
    assert len(auth) == 1 and KEYS[var] in seen.headers[auth[0].lower()]  # the header the SDK really sends
    assert dump["url"].removeprefix(f"http://127.0.0.1:{fake.port}") == seen.path
    images = text.count('"png_bytes"')
    assert images == len(prompt.images)
    if provider == "gemini":  # the dump is the SDK's input form; the SDK reshapes the config
        assert _swap_images(dump["body"]["contents"]) == _swap_images(seen.body["contents"])
        assert _swap_images(seen.body["generationConfig"]["thinkingConfig"]) == {"thinking_level": "LOW"}
        return
    assert dump["body"] == _swap_images(seen.body)


def test_payload_dump_needs_no_key(frames, monkeypatch):
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    dump = describe_request(structured(frames), "anthropic:claude-opus-4-7", ProviderOptions(effort="max"))
    assert dump["url"] == "https://api.anthropic.com/v1/messages"
    assert dump["body"]["output_config"] == {"effort": "max"}
    images = [b["source"]["data"] for b in dump["body"]["messages"][0]["content"] if b["type"] == "image"]
    assert [d["png_bytes"] for d in images] == [len(frames.png(i)) for i in (0, 4, 8, 11)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_describe_names_provider_without_secrets(agents, fake, provider):
    agent = agents.get(provider, effort="low" if provider != "anthropic" else "high")
    info = agent.describe()
    assert info["provider"] == provider and info["model"] == SPECS[provider].split(":", 1)[1]
    assert info["base_url"] == fake.url(provider) and info["options"]["effort"] in ("low", "high")
    assert not any(k in json.dumps(info) for k in KEYS.values())
    assert (info["price_per_mtok"] is None) == (provider == "compat")
    assert (info["price_note"] is None) == (provider != "compat")


def test_compat_without_key_sends_a_dummy(fake, frames, keys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = make_provider_agent("compat:llava", ProviderOptions(base_url=fake.url("compat")))
    reply = agent.act(structured(frames), CTX)
    agent.close()
    assert reply.text == DEFAULT_TEXT
    assert fake.seen[-1].headers["authorization"] == "Bearer not-needed"


def test_fake_speaks_plain_replies_too(fake, keys):
    """The non-streamed forms parse in the real SDKs (keeps the fake honest)."""
    import anthropic
    import openai
    from google import genai
    from google.genai import types

    oc = openai.OpenAI(api_key="k", base_url=fake.url("openai"), max_retries=0)
    assert oc.responses.create(model="gpt-5.2", input="hi").output_text == DEFAULT_TEXT
    chat = oc.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert chat.choices[0].message.content == DEFAULT_TEXT and chat.usage.prompt_tokens == 1000
    ac = anthropic.Anthropic(api_key="k", base_url=fake.url("anthropic"), max_retries=0)
    msg = ac.messages.create(model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert msg.content[0].text == DEFAULT_TEXT and msg.usage.cache_read_input_tokens == 200
    gc = genai.Client(api_key="k", vertexai=False, http_options=types.HttpOptions(base_url=fake.url("gemini")))
    got = gc.models.generate_content(model="gemini-3-flash-preview", contents="hi")
    assert got.text == DEFAULT_TEXT and got.usage_metadata.thoughts_token_count == 20
    assert [s.api for s in fake.seen] == ["responses", "chat", "messages", "gemini"]


def test_compat_takes_a_whole_completion_from_a_server_that_does_not_stream(agents, fake, frames):
    """An OpenAI-compatible server that ignores ``"stream": true`` and answers with the whole JSON
    completion: the same reply, usage and finish as a streamed one, in one piece."""
    from tests.fake_provider import Step

    fake.push(Step(kind="plain"))
    deltas: list[str] = []
    reply = agents.get("compat").act(structured(frames), CTX, on_text=deltas.append)
    assert fake.seen[-1].body.get("stream") is True  # it was asked to stream
    assert reply.error is None and reply.text == DEFAULT_TEXT == "".join(deltas) and len(deltas) == 1
    assert reply.usage == Usage(input_tokens=700, cache_read_tokens=200, cache_write_tokens=100,
                                output_tokens=50, reasoning_tokens=20)
    assert reply.finish_reason == "stop" and reply.attempts == [Attempt(ok=True, status=200)]
