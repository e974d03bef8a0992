"""Agent specs, options, keys and the --effort mapping: every user mistake is one clear line."""

from __future__ import annotations

import pytest

from workstation.run.providers import EFFORTS, ProviderConfigError, ProviderOptions, make_provider_agent, parse_spec
from workstation.run.providers.agent import make_adapter
from workstation.run.providers.spec import COMPAT_DUMMY_KEY, api_key

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture
def no_keys(monkeypatch):
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


def one_line_error(fn) -> str:
    with pytest.raises(ProviderConfigError) as caught:
        fn()
    text = str(caught.value)
    assert "\n" not in text and len(text) < 200
    return text


def test_specs_parse():
    assert parse_spec("openai:gpt-5.2") == ("openai", "gpt-5.2")
    assert parse_spec("compat:meta-llama/Llama-4-Scout:latest") == ("compat", "meta-llama/Llama-4-Scout:latest")
    assert parse_spec(" Anthropic:claude-opus-4-7 ") == ("anthropic", "claude-opus-4-7")


@pytest.mark.parametrize("spec, words", [
    ("gpt-5.2", "PROVIDER:MODEL"), ("azure:gpt-5", "PROVIDER:MODEL"), ("gemini:", "names no model"),
])
def test_bad_specs(spec, words):
    assert words in one_line_error(lambda: parse_spec(spec))


@pytest.mark.parametrize("opts, words", [
    ({"effort": "extreme"}, "unknown effort"), ({"temperature": 3.0}, "temperature"),
    ({"timeout": 0}, "timeout"), ({"max_attempts": 0}, "attempts"), ({"max_output_tokens": 0}, "max output"),
])
def test_bad_options(opts, words):
    assert words in one_line_error(lambda: ProviderOptions(**opts))


def test_every_effort_is_a_valid_option():
    assert EFFORTS == ("none", "minimal", "low", "medium", "high", "xhigh", "max")
    for effort in EFFORTS:
        assert ProviderOptions(effort=effort).effort == effort
    assert ProviderOptions(effort=" High").effort == "high"


@pytest.mark.parametrize("spec, var", [
    ("openai:gpt-5.2", "OPENAI_API_KEY"), ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY"),
    ("gemini:gemini-2.5-flash", "GEMINI_API_KEY or GOOGLE_API_KEY"),
])
def test_missing_key_names_the_variable(no_keys, spec, var):
    assert f"set {var}" in one_line_error(lambda: make_provider_agent(spec))


def test_keys_come_from_the_environment(no_keys, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    assert api_key("gemini") == "g-key"
    monkeypatch.setenv("GEMINI_API_KEY", "gem-key")
    assert api_key("gemini") == "gem-key"  # GEMINI_API_KEY wins
    assert api_key("compat") == COMPAT_DUMMY_KEY
    monkeypatch.setenv("OPENAI_API_KEY", "o-key")
    assert api_key("compat") == "o-key"


def test_compat_needs_a_base_url(no_keys):
    assert "--base-url" in one_line_error(lambda: make_provider_agent("compat:llava"))


@pytest.mark.parametrize("spec, effort", [
    ("openai:gpt-5.2", "max"), ("openai:gpt-5.5", "none"), ("openai:o3", "high"),
    ("compat:qwen3", "minimal"),
    ("anthropic:claude-sonnet-4-6", "max"), ("anthropic:claude-opus-4-7", "xhigh"),
    ("anthropic:claude-opus-5", "low"), ("anthropic:claude-haiku-4-5", "high"),
    ("anthropic:claude-sonnet-4-5-20250929", "minimal"), ("anthropic:claude-haiku-4-5", "none"),
    ("gemini:gemini-3.1-pro-preview", "xhigh"), ("gemini:gemini-3-flash-preview", "minimal"),
    ("gemini:gemini-2.5-flash", "none"), ("gemini:gemini-2.5-pro", "high"),
])
def test_efforts_models_take(spec, effort):
    make_adapter(spec, ProviderOptions(effort=effort, base_url="http://127.0.0.1:9/v1"))


@pytest.mark.parametrize("spec, effort, words", [
    ("openai:gpt-4.1", "low", "not a reasoning model"),
    ("openai:gpt-5.3-chat-latest", "high", "not a reasoning model"),
    ("openai:gpt-5", "none", "use one of minimal, low, medium, high"),
    ("openai:gpt-5.1", "minimal", "use one of none, low, medium, high"),
    ("openai:o4-mini", "xhigh", "use one of low, medium, high"),
    ("anthropic:claude-sonnet-4-6", "minimal", "use none or one of low"),
    ("anthropic:claude-sonnet-4-6", "xhigh", "use high or max"),
    ("anthropic:claude-haiku-4-5", "max", "fixed thinking budget"),
    ("gemini:gemini-3.1-pro-preview", "none", "thinks by level"),
    ("gemini:gemini-3-flash-preview", "max", "thinks by level"),
    ("gemini:gemini-2.5-pro", "none", "cannot turn thinking off"),
    ("gemini:gemini-2.5-flash", "xhigh", "budget up to 24576"),
    ("gemini:gemini-2.0-flash", "low", "does not think"),
])
def test_efforts_models_do_not_take(spec, effort, words):
    text = one_line_error(lambda: make_adapter(spec, ProviderOptions(effort=effort)))
    assert words in text and spec.split(":")[1] in text


def test_anthropic_thinking_rules():
    assert "temperature 1" in one_line_error(
        lambda: make_adapter("anthropic:claude-sonnet-4-6", ProviderOptions(effort="high", temperature=0.2)))
    assert "raise it above 8192" in one_line_error(
        lambda: make_adapter("anthropic:claude-haiku-4-5", ProviderOptions(effort="medium", max_output_tokens=4000)))
    ok = make_adapter("anthropic:claude-haiku-4-5", ProviderOptions(effort="medium", max_output_tokens=9000))
    assert ok.fields["max_tokens"] == 9000 and ok.fields["thinking"]["budget_tokens"] == 8192


def test_options_round_trip_through_a_description(monkeypatch):
    from workstation.run.providers import options_from_description

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-SECRET-0123456789")
    options = ProviderOptions(base_url="http://127.0.0.1:9", effort="high", max_output_tokens=9000, timeout=12.5)
    agent = make_provider_agent("anthropic:claude-opus-4-7", options)
    description = agent.describe()
    agent.close()
    assert options_from_description(description) == options
    newer = {"options": {"effort": "low", "from_the_future": 1}}
    assert options_from_description(newer) == ProviderOptions(effort="low")


@pytest.mark.parametrize("url", ["notaurl", "localhost:8000/v1", "ftp://host/v1", "http://"])
def test_a_base_url_that_is_no_http_url_is_refused_at_once(url):
    from workstation.run.providers.spec import ProviderConfigError, ProviderOptions

    with pytest.raises(ProviderConfigError, match="not an http:// or https:// URL"):
        ProviderOptions(base_url=url)
    assert ProviderOptions(base_url="http://127.0.0.1:8000/v1").base_url
