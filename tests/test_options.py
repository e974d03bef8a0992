"""The run spec: round trip, one validation naming each bad field, and the identity computed from the spec alone."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from workstation.base.errors import UserError
from workstation.engine.promptpack import load_pack
from workstation.game.games import get_game
from workstation.game.protocol import SETTINGS, Protocol, ProtocolError, StartOption
from workstation.run.agents import make_agent
from workstation.run.agents.human_agent import HumanAgent
from workstation.run.agents.registry import KINDS, PROVIDER_KINDS, AgentSpecError, parse_agent
from workstation.run.options import (
    ALL_SETTINGS,
    EFFORTS,
    Generation,
    RunSpec,
    SpecError,
    Transport,
    flag,
    flat_values,
    preflight,
    run_identity,
    spec_from_values,
)

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"
DUMMY_KEYS = {"OPENAI_API_KEY": "sk-dummy-openai", "ANTHROPIC_API_KEY": "sk-dummy-anthropic",
              "GEMINI_API_KEY": "dummy-gemini"}


@pytest.fixture
def no_keys(monkeypatch):
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)


def test_round_trip_of_every_part():
    spec = RunSpec("Beam_Rider", agent="compat:qwen2.5vl:7b", seed=7,
                   protocol=Protocol(frames=300, max_actions=4, memory="append", history=5, reward_history=0,
                                     feedback=False, clock="latency", start=StartOption.parse("noops:30"),
                                     guide="short"),
                   prompts=None, out="elsewhere", max_cost=2.5, generation=Generation("LOW", 0.5, 4000),
                   transport=Transport("http://127.0.0.1:9/v1", 12))
    assert spec.game == "beam_rider" and spec.generation.effort == "low" and spec.transport.timeout == 12.0
    again = RunSpec.from_json(spec.to_json())
    assert again == spec and again.to_json() == spec.to_json()
    assert spec_from_values(flat_values(spec)) == spec
    human = RunSpec("qbert", agent="human", mode="paused", pace="native")
    assert RunSpec.from_json(human.to_json()) == human
    with pytest.raises(AttributeError):
        spec.seed = 3  # frozen


def test_protocol_json_is_unchanged():
    assert Protocol().to_json() == {"frames": 900, "repeat": 3, "max_actions": 10, "memory": "structured",
                                    "history": 3, "reward_history": 3, "feedback": True, "clock": "paused",
                                    "start": "fixed", "guide": "full"}


@pytest.mark.parametrize("values, field, needle", [
    ({"seed": -1}, "seed", "--seed must be 0..4294967295"),
    ({"seed": 2**70}, "seed", "--seed must be 0..4294967295"),
    ({"seed": "x"}, "seed", "--seed must be a whole number"),
    ({"frames": 0}, "frames", "--frames must be 1..108000"),
    ({"frames": 10**12}, "frames", "--frames must be 1..108000"),
    ({"max_actions": 11}, "max_actions", "--max-actions must be 1..10"),
    ({"history": 51}, "history", "--history must be 0..50"),
    ({"reward_history": -1}, "reward_history", "--reward-history must be 0..50"),
    ({"memory": "all"}, "memory", "--memory must be structured or append"),
    ({"clock": "wall"}, "clock", "--clock must be paused or latency"),
    ({"guide": "long"}, "guide", "--guide must be one of full, short, visual, steps, goal"),
    ({"start": "noops:100000"}, "start", "N must be a whole number 0..1000"),
    ({"start": "sticky:1.5"}, "start", "bad --start"),
    ({"feedback": "maybe"}, "feedback", "--no-feedback"),
    ({"max_cost": -1}, "max_cost", "--max-cost must be more than 0"),
    ({"max_cost": 0}, "max_cost", "--max-cost must be more than 0"),
    ({"agent": "gpt"}, "agent", "unknown agent 'gpt'"),
    ({"agent": "replay:"}, "agent", "replay needs a recording"),
    ({"agent": "openai:"}, "agent", "needs a model name"),
    ({"effort": "low"}, "effort", "--effort applies to model agents"),
    ({"temperature": 0.3}, "temperature", "--temperature applies to model agents"),
    ({"max_output_tokens": 100}, "max_output_tokens", "--max-output-tokens applies to model agents"),
    ({"base_url": "http://x/v1"}, "base_url", "--base-url applies to model agents"),
    ({"timeout": 5}, "timeout", "--timeout applies to model agents"),
    ({"timeout": -1}, "timeout", "--timeout must be more than 0"),
    ({"effort": "bogus", "agent": "openai:gpt-5.1"}, "effort", "--effort must be one of none, minimal"),
    ({"effort": "low", "agent": "openai:gpt-4o"}, "effort", "takes no effort"),
    ({"effort": "minimal", "agent": "anthropic:claude-sonnet-4-6"}, "effort", "does not take effort 'minimal'"),
    ({"temperature": 3.0, "agent": "compat:m"}, "temperature", "--temperature must be 0..2"),
    ({"max_output_tokens": 0, "agent": "compat:m"}, "max_output_tokens", "--max-output-tokens must be at least 1"),
    ({"temperature": 0.5, "effort": "low", "agent": "anthropic:claude-sonnet-4-6"}, "temperature",
     "allows only temperature 1"),
    ({"mode": "paused"}, "mode", "--mode applies to human play"),
    ({"mode": "turbo", "agent": "human"}, "mode", "--mode must be realtime or paused"),
    ({"pace": "warp", "agent": "human"}, "pace", "--pace must be paper or native"),
    ({"game": "pong"}, "game", "unknown game 'pong'"),
    ({"out": ""}, "out", "--out is empty"),
    ({"colour": "red"}, "colour", "unknown run setting 'colour'"),
], ids=lambda v: str(v) if not isinstance(v, dict) else ",".join(f"{k}={v[k]}" for k in v))
def test_each_bad_field_is_named(values, field, needle, no_keys):
    with pytest.raises(SpecError) as e:
        spec_from_values({"game": "breakout", **values})
    assert e.value.field == field, str(e.value)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)
    assert isinstance(e.value, UserError) and isinstance(e.value, ValueError)
    if field in ALL_SETTINGS:
        assert flag(field) in str(e.value) or field in ("game", "agent", "start", "effort")


def test_from_json_names_unknown_and_bad_keys():
    good = RunSpec("breakout").to_json()
    for broken, field in ((dict(good, seeds=3), "seeds"), (dict(good, protocol={"frame": 3}), "frame"),
                          (dict(good, generation={"effort": "x"}), "effort"), (dict(good, seed=-4), "seed"),
                          ({k: v for k, v in good.items() if k != "game"}, "game")):
        with pytest.raises(SpecError) as e:
            RunSpec.from_json(broken)
        assert e.value.field == field


def test_protocol_errors_name_their_field_too():
    with pytest.raises(ProtocolError) as e:
        Protocol(max_actions=11)
    assert e.value.field == "max_actions" and "--max-actions must be 1..10" in str(e.value)
    with pytest.raises(ProtocolError) as e:
        StartOption("noops", 5000)
    assert e.value.field == "start"


def test_the_declaration_covers_the_protocol_and_the_cli_flags():
    assert [s.name for s in SETTINGS] == list(Protocol.__dataclass_fields__)
    assert flag("max_actions") == "--max-actions" and flag("feedback") == "--no-feedback"
    assert flag("max_output_tokens") == "--max-output-tokens"


def test_the_registry_is_the_one_list_of_kinds():
    from workstation.run.providers.agent import ADAPTERS
    from workstation.run.providers.spec import EFFORTS as PROVIDER_EFFORTS
    from workstation.run.providers.spec import PROVIDERS

    assert set(PROVIDER_KINDS) == set(PROVIDERS) == set(ADAPTERS)
    assert EFFORTS == PROVIDER_EFFORTS
    assert [k.name for k in KINDS][:3] == ["random", "replay", "human"]
    assert parse_agent(" Random ").canonical == "random"
    assert parse_agent("replay:./a/b/").canonical == "replay:a/b"
    assert parse_agent("OpenAI:gpt-5.1").canonical == "OpenAI:gpt-5.1"  # as a provider agent names itself
    with pytest.raises(AgentSpecError):
        parse_agent("human:me")


# -- identity ------------------------------------------------------------------------
_DESCRIBED: dict = {}


def _old_identity(spec: RunSpec, pack_digest: str) -> str:
    """Today's way: build the agent and hash its describe() (one build per agent and options)."""
    game = get_game(spec.game)
    key = (spec.agent, spec.generation, spec.transport, spec.mode, spec.pace)
    if not spec.agent_ref.is_model:  # a model's describe() does not depend on the game or the seed
        key += (spec.game, spec.seed)
    if key not in _DESCRIBED:
        if spec.agent_ref.kind == "human":
            agent = HumanAgent(lambda ctx: [], mode=spec.mode or "paused", pace=spec.pace)
        else:
            agent = make_agent(spec.agent, game, spec.seed, spec.provider_options)
        try:
            _DESCRIBED[key] = agent.describe()
        finally:
            agent.close()
    return run_identity(game, spec.protocol, spec.seed, _DESCRIBED[key], pack_digest)


def _specs():
    protocols = [Protocol(), Protocol(frames=30), Protocol(max_actions=3, memory="append"),
                 Protocol(start=StartOption.parse("noops:30"), clock="latency"),
                 Protocol(feedback=False, guide="short", history=0)]
    agents = [("random", {}), (f"replay:{SAMPLE}", {}), ("human", {"mode": "paused", "pace": "paper"}),
              ("human", {"mode": "realtime", "pace": "native"}), ("human", {}),
              ("openai:gpt-5.1", {"effort": "low"}), ("openai:gpt-5.1", {"effort": "HIGH", "timeout": 9}),
              ("compat:qwen2.5vl:7b", {"temperature": 0.2, "base_url": "http://127.0.0.1:9/v1"}),
              ("anthropic:claude-sonnet-4-6", {"effort": "medium", "max_output_tokens": 20000}),
              ("anthropic:claude-sonnet-4-6", {}), ("gemini:gemini-2.5-flash", {"effort": "none"}),
              ("gemini:gemini-3-pro-preview", {"effort": "low"})]
    for (agent, opts), protocol, seed, game in itertools.product(agents, protocols, (0, 5), ("breakout", "qbert")):
        if agent.startswith("replay") and game != "breakout":
            continue
        yield spec_from_values({"game": game, "agent": agent, "seed": seed, **opts,
                                **{s.name: getattr(protocol, s.name) for s in SETTINGS}})


def test_identity_equals_the_old_one_on_many_specs(monkeypatch):
    for name, value in DUMMY_KEYS.items():
        monkeypatch.setenv(name, value)
    digest = load_pack(None).digest
    specs = list(_specs())
    assert len(specs) > 200
    ids = set()
    for spec in specs:
        new = spec.identity(digest)
        assert new == _old_identity(spec, digest), spec
        ids.add(new)
    assert spec.identity() == spec.identity(digest)  # the digest is read from the pack when not given
    # transport is not identity; generation, seed, protocol and agent are
    base = RunSpec("breakout", agent="openai:gpt-5.1", generation=Generation("low"))
    assert base.identity(digest) == base.with_values(base_url="http://h/v1", timeout=5).identity(digest)
    assert base.identity(digest) != base.with_values(effort="high").identity(digest)
    assert len(ids) > 150


def test_identity_needs_no_key_and_builds_no_agent(no_keys, monkeypatch):
    import workstation.run.agents as agents

    def refuse(*a, **k):
        raise AssertionError("an agent was built")

    monkeypatch.setattr(agents, "make_agent", refuse)
    for spec in ("openai:gpt-5.1", "anthropic:claude-sonnet-4-6", "gemini:gemini-2.5-flash", "compat:m"):
        rid = RunSpec("breakout", agent=spec, generation=Generation("low"),
                      transport=Transport("http://127.0.0.1:9/v1")).identity()
        assert len(rid) == 16
    with pytest.raises(SpecError) as e:
        RunSpec("breakout", agent="compat:m")
    assert e.value.field == "base_url" and "needs --base-url" in str(e.value)
    assert not any(k.endswith("_API_KEY") for k in os.environ)


def test_preflight_checks_files_before_anything_is_written(tmp_path):
    file = tmp_path / "file"
    file.write_text("x")
    before = sorted(tmp_path.rglob("*"))
    cases = [(dict(out=str(file)), "out", "is a file"), (dict(out=str(file / "sub")), "out", "which is a file"),
             (dict(prompts=str(tmp_path / "nope")), "prompts", "prompt pack"),
             (dict(agent=f"replay:{tmp_path / 'nothing'}"), "agent", "replay"),
             (dict(game="qbert", agent=f"replay:{SAMPLE}"), "agent", "--game breakout")]
    for kw, field, needle in cases:
        with pytest.raises(SpecError) as e:
            preflight(RunSpec(**{"game": "breakout", "out": str(tmp_path / "rec"), **kw}))
        assert e.value.field == field and needle in str(e.value), str(e.value)
    bad_pack = tmp_path / "pack"
    bad_pack.mkdir()
    (bad_pack / "template.toml").write_text("this is = = not toml")
    with pytest.raises(SpecError) as e:
        preflight(RunSpec("breakout", prompts=str(bad_pack), out=str(tmp_path / "rec")))
    assert e.value.field == "prompts"
    assert sorted(tmp_path.rglob("*")) == sorted(before + [bad_pack, bad_pack / "template.toml"])
    preflight(RunSpec("breakout", out=str(tmp_path / "a" / "b")))  # a place that does not exist yet is fine
    assert not (tmp_path / "a").exists()


def test_an_unwritable_out_is_refused(tmp_path):
    target = Path("/proc/1/workstation-out")  # /proc refuses new files, even for root
    with pytest.raises(SpecError) as e:
        preflight(RunSpec("breakout", out=str(target)))
    assert e.value.field == "out" and "cannot write" in str(e.value)


def test_the_sample_recording_keeps_its_run_id(no_keys):
    import json

    m = json.loads((SAMPLE / "manifest.json").read_text())
    spec = RunSpec(m["game"], agent=m["agent"]["spec"], seed=m["seed"], protocol=Protocol.from_json(m["protocol"]))
    assert spec.identity() == m["run_id"] == "aa9b4dc7e9bfe4be"
