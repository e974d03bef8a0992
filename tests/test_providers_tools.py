"""Tool specs and tool messages in each provider's request body (the payload dump; no key, no connection)."""

from __future__ import annotations

import json

from workstation.engine.calls import ToolCall, ToolSpec, parse_arguments
from workstation.engine.prompt import Message, Prompt, TextPart
from workstation.run.providers import ProviderOptions, describe_request

SPEC = ToolSpec("grep", "search", {"type": "object", "properties": {"pattern": {"type": "string"}}})
CALL = ToolCall("c1", "grep", {"pattern": "x"})


def prompt() -> Prompt:
    return Prompt([Message("system", [TextPart("sys")]), Message("user", [TextPart("go")]),
                   Message("assistant", [], tool_calls=[CALL]),
                   Message("tool", [TextPart("no matches")], answers=CALL, is_error=False)], tools=[SPEC])


def test_each_provider_carries_tools_calls_and_results_in_its_own_shape():
    chat = describe_request(prompt(), "compat:m", ProviderOptions(base_url="http://127.0.0.1:1/v1"))["body"]
    assert chat["tools"] == [{"type": "function", "function": {"name": "grep", "description": "search",
                                                               "parameters": SPEC.parameters}}]
    assert chat["messages"][2]["tool_calls"][0]["function"] == {"name": "grep", "arguments": '{"pattern": "x"}'}
    assert chat["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "no matches"}

    resp = describe_request(prompt(), "openai:gpt-5.2")["body"]
    assert resp["tools"][0]["name"] == "grep" and resp["tools"][0]["type"] == "function"
    assert resp["input"][1] == {"type": "function_call", "call_id": "c1", "name": "grep", "arguments": '{"pattern": "x"}'}
    assert resp["input"][2] == {"type": "function_call_output", "call_id": "c1", "output": "no matches"}

    anth = describe_request(prompt(), "anthropic:claude-sonnet-4-6")["body"]
    assert anth["tools"] == [{"name": "grep", "description": "search", "input_schema": SPEC.parameters}]
    assert anth["messages"][1]["content"] == [{"type": "tool_use", "id": "c1", "name": "grep", "input": {"pattern": "x"}}]
    result = anth["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "c1"
    assert result["content"][0]["text"] == "no matches"

    gem = describe_request(prompt(), "gemini:gemini-3-flash-preview")["body"]
    assert gem["config"]["tools"][0]["function_declarations"][0]["name"] == "grep"
    assert gem["contents"][1]["parts"] == [{"function_call": {"name": "grep", "args": {"pattern": "x"}, "id": "c1"}}]
    assert gem["contents"][2]["parts"] == [{"function_response": {"name": "grep", "response": {"result": "no matches"},
                                                                  "id": "c1"}}]


def test_prompts_without_tools_are_sent_as_before():
    plain = Prompt([Message("system", [TextPart("sys")]), Message("user", [TextPart("go")])])
    for spec, opts in (("compat:m", ProviderOptions(base_url="http://127.0.0.1:1/v1")), ("openai:gpt-5.2", None),
                       ("anthropic:claude-sonnet-4-6", None), ("gemini:gemini-3-flash-preview", None)):
        body = describe_request(plain, spec, opts)["body"]
        assert "tools" not in body and "tools" not in body.get("config", {})


def test_arguments_that_are_not_a_json_object_are_named():
    assert parse_arguments('{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments("") == ({}, None)
    assert "not valid JSON" in parse_arguments("{oops")[1]
    assert "JSON object" in parse_arguments("[1]")[1]
    assert parse_arguments(json.dumps(json.dumps({"skill": "s"}))) == ({"skill": "s"}, None)  # encoded twice
    assert "JSON object" in parse_arguments(json.dumps("just text"))[1]
