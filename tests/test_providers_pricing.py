"""The price table: versioned, overridable, and unknown models cost None (not an error)."""

from __future__ import annotations

import pytest

from workstation.engine.calls import Usage
from workstation.run.providers import ProviderConfigError, cost_usd, default_prices, load_prices

U = Usage(input_tokens=1_000_000, cache_read_tokens=2_000_000, cache_write_tokens=100_000,
          output_tokens=300_000, reasoning_tokens=200_000)


@pytest.fixture(autouse=True)
def no_override(monkeypatch):
    monkeypatch.delenv("WORKSTATION_PRICES", raising=False)


def test_shipped_table_is_versioned_and_covers_the_main_models():
    table = load_prices()
    assert table.version == "1" and table.as_of.startswith("20")
    for provider, model in [("openai", "gpt-5.2"), ("openai", "gpt-5.5"), ("openai", "gpt-5-mini"),
                            ("anthropic", "claude-sonnet-4-6"), ("anthropic", "claude-opus-4-7"),
                            ("anthropic", "claude-haiku-4-5"), ("gemini", "gemini-3.1-pro-preview"),
                            ("gemini", "gemini-2.5-flash"), ("gemini", "gemini-3-flash-preview")]:
        price = table.lookup(provider, model)
        assert price is not None and price.output > price.input >= price.cache_read > 0


def test_cost_of_each_token_kind():
    # claude-sonnet-4-6: 3 in, 0.30 cache read, 3.75 cache write, 15 out (USD per million)
    assert cost_usd(U, "anthropic", "claude-sonnet-4-6") == pytest.approx(3.0 + 0.60 + 0.375 + 4.5)
    # reasoning is part of output, never charged twice
    assert cost_usd(Usage(output_tokens=1000, reasoning_tokens=900), "openai", "gpt-5.2") == pytest.approx(0.014)


def test_paper_footprint_at_table_prices():
    """AtariBench's Gemini 3.1 Pro footprint (140.8M input, 2.85M output + 17.2M thinking) cost about $522."""
    usage = Usage(input_tokens=140_800_000, output_tokens=2_850_000 + 17_200_000, reasoning_tokens=17_200_000)
    assert cost_usd(usage, "gemini", "gemini-3.1-pro-preview") == pytest.approx(522, abs=1)


def test_dated_and_prefixed_names_resolve():
    table = load_prices()
    assert table.lookup("anthropic", "claude-haiku-4-5-20251001") == table.lookup("anthropic", "claude-haiku-4-5")
    assert table.lookup("openai", "gpt-5-2025-08-07") == table.lookup("openai", "gpt-5")
    assert table.lookup("gemini", "models/gemini-2.5-pro") == table.lookup("gemini", "gemini-2.5-pro")
    assert table.lookup("openai", "gpt-5-mini") != table.lookup("openai", "gpt-5")  # no prefix guessing


def test_unknown_model_costs_none_with_a_note():
    assert cost_usd(U, "compat", "llava:13b") is None
    assert cost_usd(None, "openai", "gpt-5.2") is None
    note = default_prices().note("compat", "llava:13b")
    assert "llava:13b" in note and "WORKSTATION_PRICES" in note
    assert default_prices().note("openai", "gpt-5.2") is None


OVERRIDE = """
version = "lab-3"
as_of = "2026-12-01"
[compat."llava:13b"]
input = 0.10
output = 0.20
[openai."gpt-5.2"]
input = 1.0
cache_read = 0.1
output = 10.0
"""


def test_override_by_env_var_and_by_path(tmp_path, monkeypatch):
    path = tmp_path / "prices.toml"
    path.write_text(OVERRIDE)
    explicit = load_prices(path)
    assert explicit.version == "lab-3" and explicit.as_of == "2026-12-01"
    assert explicit.lookup("compat", "llava:13b").cache_read == 0.10  # defaults to the input price
    assert explicit.lookup("anthropic", "claude-haiku-4-5") is not None  # shipped entries stay
    monkeypatch.setenv("WORKSTATION_PRICES", str(path))
    assert cost_usd(Usage(input_tokens=1_000_000, output_tokens=1_000_000), "compat", "llava:13b") == pytest.approx(0.3)
    assert cost_usd(Usage(output_tokens=1_000_000), "openai", "gpt-5.2") == pytest.approx(10.0)


@pytest.mark.parametrize("content", ["[openai.\"x\"]\ninput = 1.0\n", "not = [toml"])
def test_bad_price_file_is_one_clear_line(tmp_path, content):
    path = tmp_path / "bad.toml"
    path.write_text(content)
    with pytest.raises(ProviderConfigError) as caught:
        load_prices(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
