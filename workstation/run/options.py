"""The run spec: one frozen, typed description of a run, its one validation, and its identity.

Every entry point makes a ``RunSpec`` (the CLI from its arguments, the home
form from its fields, a batch grid from its cells) and every check happens in
one place: ``RunSpec.__post_init__`` (values and how they fit together) and
``preflight`` (the files: the output place, the prompt pack, a replayed
recording), before anything is written. A bad value raises ``SpecError``
naming the *field* (``e.field``, e.g. ``max_actions``) with a one-line message
that names its command-line flag (``--max-actions``).

Settings are declared once (``workstation.game.protocol.SETTINGS`` for the
protocol, ``RUN_SETTINGS`` here for the rest); the CLI's arguments and the
home screen's form are generated from the declarations.

``RunSpec.identity()`` is the run id: a hash of what determines the outcome,
computed from the spec alone (no agent built, no key read). It equals what
``run_identity`` gives for the built agent's ``describe()``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workstation.run.agents.registry import AgentRef
    from workstation.run.providers import ProviderOptions

from workstation.base.errors import UserError
from workstation.base.locations import RECORDINGS
from workstation.game.games import GAMES, MODES, PACES, UnknownGame, get_game
from workstation.game.protocol import SETTING, SETTINGS, Protocol, ProtocolError, Setting
from workstation.game.seed import SEED_MAX, seed_problem
from workstation.run.agents.registry import SPEC_HELP, AgentSpecError, parse_agent

# The one --effort scale (workstation.run.providers.spec.EFFORTS; a test keeps the two equal).
# Each provider then accepts its own subset per model, checked when the spec is made.
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
TEST_PACES = ("instant",)  # no waiting at all: tests only, never offered on the command line
GENERATION_KEYS = ("effort", "temperature", "max_output_tokens")  # provider options that change replies
TRANSPORT_KEYS = ("base_url", "timeout")  # provider options that do not


class SpecError(ProtocolError, UserError):
    """A run setting with a bad value. ``field`` names it; the message names its flag and the fix.

    A ``UserError`` too: the CLI prints it as one line and exits 2.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, field)


def _games_help() -> str:
    return "the game: " + ", ".join(GAMES) + " (see `workstation games`)"


RUN_SETTINGS: tuple[Setting, ...] = (
    Setting("game", str, None, _games_help(), metavar="GAME"),
    Setting("seed", int, 0, f"run seed, 0..{SEED_MAX}: seeds the agent, and the start with --start noops/sticky "
            "(default 0)", lo=0, hi=SEED_MAX, metavar="N"),
    Setting("agent", str, "random", f"who plays: {SPEC_HELP} (default random)", metavar="SPEC"),
    Setting("out", str, RECORDINGS, f"parent directory of the recording (default {RECORDINGS}/)", metavar="DIR"),
    Setting("prompts", str, None, "prompt pack directory (default: the built-in pack)", metavar="DIR"),
    Setting("max_cost", float, None, "stop the run cleanly past this cost in US dollars (> 0)", label="max cost $",
            metavar="USD"),
    Setting("effort", str, None, f"model thinking effort: {'|'.join(EFFORTS)} (each model takes its own subset)",
            choices=EFFORTS),
    Setting("temperature", float, None, "sampling temperature, 0..2", lo=0, hi=2),
    Setting("max_output_tokens", int, None, "cap on a reply's output tokens (thinking included)", lo=1,
            label="max tokens", metavar="N"),
    Setting("base_url", str, None, "SDK base URL (http://host:port/v1 for openai/compat servers)", label="base URL",
            metavar="URL"),
    Setting("timeout", float, None, "seconds per model call (> 0; default 60)", label="timeout s", metavar="S"),
    Setting("mode", str, None, "realtime: the game never waits; paused: it waits for your plan",
            choices=MODES),
    Setting("pace", str, None, "paper: 0.1 s per action (900 frames in 30 s); native: the Atari's 60 Hz",
            choices=tuple(PACES)),
    Setting("experience", str, None, "keep an experience library for each model and game in DIR: every K turns "
            "the model edits a list of rules that its prompt carries, in this run and the next "
            "(docs/experience.md)", metavar="DIR", form=False),
    Setting("reflect_every", int, None, "with --experience: the turns between the model's updates of its "
            "library, 1..1000 (default 5)", lo=1, hi=1000, metavar="K", form=False),
    Setting("skill", str, None, "a skill for the player's prompt (its text; a Path is read as its file), as "
            "improvement rounds write them", metavar="TEXT", cli=False, form=False),
)
SKILL_MAX_CHARS = 4_800  # about 1,200 tokens at 4 characters a token (the paper's cap on a skill)
RUN_SETTING = {s.name: s for s in RUN_SETTINGS}
ALL_SETTINGS = {**SETTING, **RUN_SETTING}
MODEL_ONLY = GENERATION_KEYS + TRANSPORT_KEYS


def flag(name: str) -> str:
    """The command-line flag of a spec field (``max_actions`` -> ``--max-actions``)."""
    s = ALL_SETTINGS.get(name)
    return s.flag if s else f"--{name.replace('_', '-')}"


@dataclass(frozen=True)
class Generation:
    """Provider options that change the replies (so they count in the run id)."""

    effort: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.effort, str):
            object.__setattr__(self, "effort", self.effort.strip().lower())
        _floats_checked(self, "temperature", GENERATION_KEYS)


def _floats_checked(options: object, number: str, keys: Iterable[str]) -> None:
    """A frozen options object's ``number`` field as a float when given as an int, then each of ``keys``
    checked against its setting (SpecError naming the first that is wrong)."""
    value = getattr(options, number)
    if isinstance(value, int) and not isinstance(value, bool):
        object.__setattr__(options, number, float(value))
    for name in keys:
        why = RUN_SETTING[name].problem(getattr(options, name))
        if why:
            raise SpecError(name, why)


@dataclass(frozen=True)
class Transport:
    """Provider options that do not change the replies: where and how long to wait."""

    base_url: str | None = None
    timeout: float | None = None  # None: the provider default (60 s)

    def __post_init__(self) -> None:
        _floats_checked(self, "timeout", TRANSPORT_KEYS)
        if self.timeout is not None and not self.timeout > 0:
            raise SpecError("timeout", f"--timeout must be more than 0 seconds (got {self.timeout:g})")
        if self.base_url is not None and not self.base_url.strip():
            raise SpecError("base_url", "--base-url is empty; give a URL such as http://localhost:11434/v1")
        if self.base_url is not None and self.base_url.strip():
            from workstation.run.providers.spec import base_url_problem

            why = base_url_problem(self.base_url)
            if why:
                raise SpecError("base_url", why)


@dataclass(frozen=True)
class RunSpec:
    """What determines a run's outcome, plus where it is written. Frozen; checked when made."""

    game: str
    agent: str = "random"
    seed: int = 0
    protocol: Protocol = field(default_factory=Protocol)
    prompts: str | None = None  # prompt pack directory (None = the built-in pack)
    out: str = RECORDINGS
    max_cost: float | None = None
    generation: Generation = field(default_factory=Generation)
    transport: Transport = field(default_factory=Transport)
    mode: str | None = None  # human play only
    pace: str | None = None  # human play only
    skill: str | None = None  # the skill text the player's prompt carries (None: no skill; the run id is as before)
    experience: str | None = None  # the experience library's directory (workstation.engine.experience)
    reflect_every: int | None = None  # with experience: K turns between updates (default 5)

    def __post_init__(self) -> None:
        try:
            game = get_game(self.game) if isinstance(self.game, str) else None
        except UnknownGame as e:
            raise SpecError("game", str(e)) from None
        if game is None:
            raise SpecError("game", f"--game must be a game name such as breakout (got {self.game!r})")
        object.__setattr__(self, "game", game.key)
        for name in ("out", "prompts"):  # a Path is fine; the spec keeps text
            if isinstance(getattr(self, name), Path):
                object.__setattr__(self, name, str(getattr(self, name)))
        why = seed_problem(self.seed)  # the one seed rule (workstation.game.seed)
        if why:
            raise SpecError("seed", why)
        for name in ("max_cost", "prompts", "out"):
            why = RUN_SETTING[name].problem(getattr(self, name))
            if why:
                raise SpecError(name, why)
        if isinstance(self.max_cost, int):
            object.__setattr__(self, "max_cost", float(self.max_cost))
        self._check_skill()
        self._check_experience()
        if self.max_cost is not None and not self.max_cost > 0:
            raise SpecError("max_cost", f"--max-cost must be more than 0 dollars (got {self.max_cost:g})")
        if not str(self.out).strip():
            raise SpecError("out", "--out is empty; name the directory recordings go in")
        if not isinstance(self.protocol, Protocol):
            raise SpecError("protocol", f"protocol must be a Protocol (got {type(self.protocol).__name__})")
        for name, kind in (("generation", Generation), ("transport", Transport)):
            if not isinstance(getattr(self, name), kind):
                raise SpecError(name, f"{name} must be a {kind.__name__}")
        try:
            ref = parse_agent(self.agent)
        except AgentSpecError as e:
            raise SpecError("agent", str(e)) from None
        if not ref.is_model:
            for name in MODEL_ONLY:
                if self._option(name) is not None:
                    raise SpecError(name, f"{flag(name)} applies to model agents (openai:, compat:, anthropic:, "
                                          f"gemini:); the {ref.kind} agent takes none: drop {flag(name)}")
        for name in ("mode", "pace"):
            value = getattr(self, name)
            if value is None:
                continue
            if ref.kind != "human":
                raise SpecError(name, f"{flag(name)} applies to human play (workstation play); drop it for the "
                                      f"{ref.kind} agent")
            allowed = MODES if name == "mode" else (*PACES, *TEST_PACES)
            if value not in allowed:
                shown = MODES if name == "mode" else tuple(PACES)
                raise SpecError(name, f"{flag(name)} must be {' or '.join(shown)} (got {value!r})")
        if ref.is_model:
            self._check_provider()

    def _check_skill(self) -> None:
        skill = self.skill
        if isinstance(skill, Path):
            try:
                skill = skill.expanduser().read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                why = getattr(e, "strerror", None) or "not UTF-8 text"
                raise SpecError("skill", f"cannot read the skill file {self.skill} ({why}); give a UTF-8 text file")\
                    from None
        if skill is None:
            return
        if not isinstance(skill, str):
            raise SpecError("skill", f"a skill is text (got {type(skill).__name__})")
        skill = skill.strip()
        if not skill:
            raise SpecError("skill", "the skill is empty; give its text, or no skill at all")
        if len(skill) > SKILL_MAX_CHARS:
            raise SpecError("skill", f"the skill is {len(skill)} characters; at most {SKILL_MAX_CHARS} "
                                     "(about 1,200 tokens) go in a prompt: shorten it")
        object.__setattr__(self, "skill", skill)

    def _check_experience(self) -> None:
        if isinstance(self.experience, Path):
            object.__setattr__(self, "experience", str(self.experience))
        why = RUN_SETTING["reflect_every"].problem(self.reflect_every)
        if why:
            raise SpecError("reflect_every", why)
        if self.experience is None:
            if self.reflect_every is not None:
                raise SpecError("reflect_every", "--reflect-every applies with --experience DIR; add --experience "
                                                 "or drop --reflect-every")
            return
        if not isinstance(self.experience, str):
            raise SpecError("experience", f"--experience is a directory (got {type(self.experience).__name__})")
        from workstation.engine.experience import DEFAULT_EVERY, dir_problem

        why = dir_problem(self.experience)
        if why:
            raise SpecError("experience", why)
        if self.reflect_every is None:
            object.__setattr__(self, "reflect_every", DEFAULT_EVERY)
        try:
            ref = parse_agent(self.agent)
        except AgentSpecError:
            return  # named below
        if not ref.is_model and ref.kind != "replay":
            raise SpecError("experience", f"--experience needs a model agent (openai:, compat:, anthropic:, "
                                          f"gemini:) or replay:REC; the {ref.kind} agent writes no rules")

    def _option(self, name: str) -> Any:
        return getattr(self.generation if name in GENERATION_KEYS else self.transport, name)

    def _check_provider(self) -> None:
        """The provider's own rules (an effort this model does not take, ...), without a key or a client."""
        from workstation.run.providers import ProviderConfigError
        from workstation.run.providers.agent import make_adapter

        options = self.provider_options
        if options is None:  # not a model: nothing of a provider's to check
            return
        try:
            make_adapter(self.agent, options)
        except ProviderConfigError as e:  # the provider names the setting at fault
            raise SpecError(e.field or "agent", str(e)) from None

    # -- what the parts of the workstation need from a spec ------------------
    @property
    def agent_ref(self) -> AgentRef:
        return parse_agent(self.agent)

    @property
    def provider_options(self) -> ProviderOptions | None:
        """``ProviderOptions`` for a model agent (None for the built-in agents)."""
        if not self.agent_ref.is_model:
            return None
        return provider_options_of(self.generation, self.transport, self.protocol.clock_source)

    def agent_identity(self) -> dict[str, Any]:
        """The part of an agent's ``describe()`` the run id hashes, from the spec alone."""
        ref = self.agent_ref
        desc: dict[str, Any] = {"spec": ref.canonical}
        if ref.kind == "human":
            desc["mode"], desc["pace"] = self.mode or "paused", self.pace  # HumanAgent's own defaults
        if ref.is_model:
            desc["options"] = {k: getattr(self.generation, k) for k in GENERATION_KEYS}
        return desc

    def identity(self, pack_digest: str | None = None) -> str:
        """The run id (16 hex digits). Reads the prompt pack when no digest is given; never a key."""
        if pack_digest is None:
            from workstation.engine.promptpack import load_pack

            pack_digest = load_pack(self.prompts).digest
        return run_identity(get_game(self.game), self.protocol, self.seed, self.agent_identity(), pack_digest,
                            self.skill_digest(), self.identity_extras())

    def identity_extras(self) -> dict[str, Any] | None:
        """What a guide level and an experience library add to the run id (None for a plain run)."""
        if self.protocol.guide in ("full", "short") and self.experience is None:
            return None
        from workstation.engine.promptpack import identity_extras, load_pack

        return identity_extras(load_pack(self.prompts), self.game, self.protocol.guide, self.experience_identity())

    def experience_identity(self) -> dict[str, Any] | None:
        """The library's part of the run id: its digest now (at the run's start) and K; None without one."""
        if self.experience is None or self.reflect_every is None:
            return None
        from workstation.engine.experience import identity_part, read_library
        from workstation.engine.promptpack import load_pack

        return identity_part(read_library(self.experience, self.agent_ref.canonical, self.game), self.reflect_every,
                             load_pack(self.prompts).experience_slot)

    def skill_digest(self) -> str | None:
        """The skill's part of the run id: its text with the pack's skill slot (None without a skill)."""
        if self.skill is None:
            return None
        from workstation.engine.promptpack import load_pack, skill_digest

        return skill_digest(load_pack(self.prompts), self.skill)

    # -- JSON ------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game, "agent": self.agent, "seed": self.seed, "protocol": self.protocol.to_json(),
            "prompts": self.prompts, "out": self.out, "max_cost": self.max_cost,
            "generation": {k: getattr(self.generation, k) for k in GENERATION_KEYS},
            "transport": {k: getattr(self.transport, k) for k in TRANSPORT_KEYS},
            "mode": self.mode, "pace": self.pace, **({"skill": self.skill} if self.skill is not None else {}),
            **({"experience": self.experience, "reflect_every": self.reflect_every}
               if self.experience is not None else {}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunSpec:
        """The spec ``to_json`` wrote; an unknown key or a bad value is a ``SpecError`` naming it."""
        if not isinstance(d, dict):
            raise SpecError("spec", f"a run spec is a JSON object (got {type(d).__name__})")
        known = {f.name for f in fields(cls)}
        for key in d:
            if key not in known:
                raise SpecError(key, f"unknown run setting {key!r}; known: {', '.join(sorted(known))}")
        if "game" not in d:
            raise SpecError("game", "a run spec needs a game (--game)")
        kw = dict(d)
        kw["protocol"] = _part(Protocol, kw.get("protocol") or {}, "protocol")
        kw["generation"] = _part(Generation, kw.get("generation") or {}, "generation")
        kw["transport"] = _part(Transport, kw.get("transport") or {}, "transport")
        return cls(**kw)

    def with_values(self, **values: Any) -> RunSpec:
        """A copy with flat field values changed (``frames=30``, ``effort="low"``), checked again."""
        return spec_from_values({**flat_values(self), **values})


def _part(kind: type, d: Any, name: str) -> Any:
    if not isinstance(d, dict):
        raise SpecError(name, f"{name} must be a JSON object (got {type(d).__name__})")
    known = {f.name for f in fields(kind)}
    for key in d:
        if key not in known:
            raise SpecError(key, f"unknown {name} setting {key!r}; known: {', '.join(sorted(known))}")
    if kind is Protocol:
        return Protocol.from_json(d)
    return kind(**d)


def flat_values(spec: RunSpec) -> dict[str, Any]:
    """Every field of a spec by its flat name (``frames``, ``effort``, ``seed``...): what forms and grids key by."""
    values = {f.name: getattr(spec, f.name) for f in fields(RunSpec) if f.name not in
              ("protocol", "generation", "transport")}
    values.update({s.name: getattr(spec.protocol, s.name) for s in SETTINGS})
    values.update({k: getattr(spec.generation, k) for k in GENERATION_KEYS})
    values.update({k: getattr(spec.transport, k) for k in TRANSPORT_KEYS})
    return values


def spec_from_values(values: dict[str, Any]) -> RunSpec:
    """A spec from flat field values; a string for a number is read as typed text (a form, a grid cell).

    Raises ``SpecError`` naming the first field at fault.
    """
    v = dict(values)
    for name in list(v):
        if name not in ALL_SETTINGS:
            raise SpecError(name, f"unknown run setting {name!r}; known: {', '.join(ALL_SETTINGS)}")
        s = ALL_SETTINGS[name]
        if isinstance(v[name], str) and s.type is not str:
            try:
                v[name] = s.from_text(v[name])
            except ProtocolError as e:
                raise SpecError(name, str(e)) from None
    proto: dict[str, Any] = {}
    for s in SETTINGS:
        if s.name in v:
            proto[s.name] = v.pop(s.name)
    try:
        protocol = Protocol(**proto)
    except ProtocolError as e:
        raise SpecError(e.field or "protocol", str(e)) from None
    gen = Generation(**{k: v.pop(k) for k in GENERATION_KEYS if k in v})
    trans = Transport(**{k: v.pop(k) for k in TRANSPORT_KEYS if k in v})
    if "game" not in v or v["game"] is None:
        raise SpecError("game", "a run needs a game: --game GAME (see `workstation games`)")
    return RunSpec(protocol=protocol, generation=gen, transport=trans, **v)


def run_identity(game: Any, protocol: Protocol, seed: int, agent_desc: dict[str, Any], pack_digest: str,
                 skill_digest: str | None = None, extras: dict[str, Any] | None = None) -> str:
    """Hash of what determines the outcome, so a re-run finds finished work.

    A skill (``skill_digest``) counts only when there is one, so every run made
    without a skill keeps the id it always had.

    The agent counts by its spec and generation settings only: transport
    (base URL, timeout, retries), SDK version and prices do not change a run.
    ``agent_desc`` is a built agent's ``describe()`` or ``RunSpec.agent_identity()``.
    """
    options = agent_desc.get("options") or {}
    agent = {"spec": agent_desc.get("spec"), "mode": agent_desc.get("mode"), "pace": agent_desc.get("pace"),
             **{k: options.get(k) for k in GENERATION_KEYS}}
    parts: list[Any] = [game.key, protocol.to_json(), seed, agent, pack_digest]
    if skill_digest is not None:
        parts.append({"skill": skill_digest})
    if extras:  # a guide level's text, an experience library's start (workstation.engine.promptpack.identity_extras)
        parts.append(extras)
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# -- files, checked before anything is written ---------------------------------
def preflight(spec: RunSpec, out: bool = True, command: str | None = None) -> None:
    """Check what the run will read and write: the output place, the prompt pack, a replayed recording.

    Raises ``SpecError`` (one line naming the field and the path) and leaves nothing behind. ``out=False``:
    the caller checks the output place itself (a session's runs go into its own directory, not ``spec.out``).
    ``command`` (``run``) names the command in a refusal of an object-store URI.
    """
    if out:
        check_out(spec.out, command)
    from workstation.store.local_paths import LocalPathError, refuse_uri

    try:
        refuse_uri(spec.prompts, "--prompts", "a prompt pack is read from a local directory")
    except LocalPathError as e:
        raise SpecError("prompts", str(e)) from None
    from workstation.game.clock import variant_problem

    why = variant_problem(spec.game, spec.protocol.game_mode, spec.protocol.game_difficulty)
    if why:
        raise SpecError("game_mode" if why.startswith("--game-mode") else "game_difficulty", why)
    from workstation.engine.promptpack import PromptPackError, load_pack

    try:
        problem = load_pack(spec.prompts).level_problem(spec.protocol.guide)
    except PromptPackError as e:
        raise SpecError("prompts", str(e)) from None
    except OSError as e:
        raise SpecError("prompts", f"--prompts {spec.prompts}: cannot read the prompt pack ({e.strerror or e})") from None
    if problem:
        raise SpecError("guide", problem)
    if spec.experience is not None:
        if load_pack(spec.prompts).layout == "document":
            raise SpecError("experience", f"--experience: prompt pack {spec.prompts} is a document pack (the "
                                          "harness's layout), which has no place for a library; use the default pack")
        spec.experience_identity()  # a damaged library stops here (DamagedArtifact, exit 1), before anything is written
    ref = spec.agent_ref
    if ref.kind == "replay":
        from workstation.store.recording import DamagedRecording, Recording
        from workstation.store.records import RecordingError

        try:
            source = Recording(Path(ref.arg))
            source_game = source.manifest_record.game
        except DamagedRecording as e:  # it reads, but is damaged: exit 1, named
            raise DamagedRecording(f"--agent replay: {e}", file=ref.arg) from None
        except (RecordingError, LocalPathError) as e:
            raise SpecError("agent", f"--agent replay: {e}") from None
        if source_game != spec.game:
            raise SpecError("agent", f"the replayed recording is a {source_game} run but --game is {spec.game}; "
                                     f"replay it with --game {source_game}")


def check_out(out: str | Path, command: str | None = None) -> None:
    """``SpecError("out", ...)`` unless recordings can be made under ``out`` (it may not exist yet).

    Refused too: an object-store URI (``s3://b/p`` would be the local folder ``s3:``; ``command`` names who
    writes locally), and an existing recording (the new run would be written inside it).
    """
    from workstation.store.local_paths import LocalPathError, refuse_uri

    try:
        refuse_uri(out, "--out", f"{command} writes to a local directory" if command else
                   "recordings are written to a local directory")
    except LocalPathError as e:
        raise SpecError("out", str(e)) from None
    path = Path(out).expanduser()
    if (path / "manifest.json").is_file():
        raise SpecError("out", f"--out {out} is a recording; choose the directory that holds recordings")
    probe = path
    while not probe.exists() and probe.parent != probe:
        if probe.is_symlink():
            raise SpecError("out", f"--out {out}: {probe} is a broken link; choose another directory")
        probe = probe.parent
    if not probe.is_dir():
        where = "is a file" if probe == path else f"is inside {probe}, which is a file"
        raise SpecError("out", f"--out {out} {where}, not a directory; choose a directory")
    try:
        fd, name = tempfile.mkstemp(prefix=".workstation-probe-", dir=probe)
        os.close(fd)
        os.unlink(name)
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise SpecError("out", f"--out {out}: cannot write in {probe} ({reason}); choose a writable directory") \
            from None


# -- the command line, generated from the declarations --------------------------
PROTOCOL_CLI = tuple(s for s in SETTINGS if s.cli)
MODEL_CLI = ("base_url", "effort", "temperature", "max_output_tokens", "timeout", "max_cost")


def add_argument(group: Any, s: Setting, **overrides: Any) -> None:
    """One declared setting as an argparse argument (``dest`` = the field name)."""
    kw: dict[str, Any] = {"dest": s.name, "help": s.help}
    if s.type is bool:
        kw.update(action="store_false" if s.default is True else "store_true", default=s.default)
    else:
        kw["default"] = str(s.default) if s.type not in (int, float, str) and s.default is not None else s.default
        if s.type in (int, float):
            kw["type"] = s.type
        if s.choices:
            kw["choices"] = s.choices
            kw["metavar"] = "|".join(s.choices)
        elif s.metavar:
            kw["metavar"] = s.metavar
    kw.update(overrides)
    group.add_argument(s.flag, **kw)


def add_protocol_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("protocol (defaults = the paper)")
    for s in PROTOCOL_CLI:
        add_argument(g, s)
    add_argument(g, RUN_SETTING["prompts"])


def add_experience_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("experience library (docs/experience.md)")
    add_argument(g, RUN_SETTING["experience"])
    add_argument(g, RUN_SETTING["reflect_every"])


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model agents (openai:, compat:, anthropic:, gemini:)")
    for name in MODEL_CLI:
        add_argument(g, RUN_SETTING[name])


def provider_options_from_args(a: Any) -> ProviderOptions | None:
    """``ProviderOptions`` from a namespace with the model arguments, checked like a spec's (None: not a model)."""
    agent = getattr(a, "agent", None) or "random"
    try:
        ref = parse_agent(agent)
    except AgentSpecError as e:
        raise SpecError("agent", str(e)) from None
    if not ref.is_model:
        return None
    values = {k: getattr(a, k, None) for k in GENERATION_KEYS + TRANSPORT_KEYS}
    gen = Generation(**{k: values[k] for k in GENERATION_KEYS})
    trans = Transport(**{k: values[k] for k in TRANSPORT_KEYS})
    return provider_options_of(gen, trans)


def provider_options_of(gen: Generation, trans: Transport, clock: str = "wall") -> ProviderOptions:
    from workstation.run.providers import ProviderOptions

    extra: dict[str, Any] = {} if trans.timeout is None else {"timeout": trans.timeout}
    if clock != "wall":  # --clock latency:server: the agent charges the server's inference time
        extra["clock"] = clock
    return ProviderOptions(base_url=trans.base_url, effort=gen.effort, temperature=gen.temperature,
                           max_output_tokens=gen.max_output_tokens, **extra)


def spec_from_args(a: Any, agent: str | None = None) -> RunSpec:
    """The spec an argparse namespace (or anything with those attributes) describes.

    Missing attributes take their declared defaults, so a partial namespace works.
    """
    values: dict[str, Any] = {}
    for name, s in ALL_SETTINGS.items():
        if not s.cli:
            continue
        value = getattr(a, name, None)
        if name == "feedback":
            value = getattr(a, "feedback", None)
            if value is None and hasattr(a, "no_feedback"):
                value = not a.no_feedback
        if value is not None:
            values[name] = value
    values["agent"] = agent or values.get("agent") or "random"
    if "start" in values and not isinstance(values["start"], str):
        values["start"] = str(values["start"])
    return spec_from_values(values)


__all__ = ["ALL_SETTINGS", "EFFORTS", "GENERATION_KEYS", "Generation", "RUN_SETTINGS", "RunSpec",
           "SpecError", "Transport", "add_model_arguments", "add_protocol_arguments", "check_out", "flag",
           "flat_values", "preflight", "run_identity", "spec_from_args", "spec_from_values"]


def add_play_arguments(pl: argparse.ArgumentParser) -> None:
    """`workstation play`'s arguments (the CLI's and the home screen's match form's one declaration)."""
    add_argument(pl, RUN_SETTING["game"], required=True)
    add_argument(pl, RUN_SETTING["seed"])
    add_argument(pl, RUN_SETTING["out"])
    add_argument(pl, RUN_SETTING["mode"], default="realtime")
    add_argument(pl, RUN_SETTING["pace"], default="paper")
    pl.add_argument("--window", action="store_true", help="play in a pygame window (needs a display)")
    pl.add_argument("--vs", metavar="SPEC", help="play a two-player game against this agent (workstation.studies.arena)")
    pl.add_argument("--side", type=int, default=1, metavar="1|2", help="with --vs: the side you play (default 1)")
    add_argument(pl, RUN_SETTING["base_url"])  # --vs compat:MODEL on a server of your own
    add_protocol_arguments(pl)
