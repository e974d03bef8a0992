"""The three records of a recording, typed: Manifest, TurnRecord and Summary.

Each keeps the JSON keys the recording has always had (``to_json`` writes them
in the same order; keys it does not know are kept in ``extra`` and written
back, so a newer writer's additions survive a read and a write; a summary's
unknown key is named as damage by the fast check, ``store/integrity.summary_problems``). ``from_json``
checks the type of every field it knows and fails with one line naming the
field, so a damaged or forged record never reaches a reader as garbage.

Game-over handling (rule version 2) added ``game_over``, ``cut_frames``,
``dropped`` and ``reset_frame`` to turn records, ``games_ended`` to the
summary and ``rules`` to the manifest; records written before have the
defaults (rule 1, no game over recorded).

``read_json`` / ``read_jsonl`` / ``read_record`` / ``check_fields`` are the one way JSON files are read
(recordings, sessions, question sets, evals, imported runs): every failure is one line naming the file, the
line and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, is_dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, get_args, get_origin, get_type_hints

from workstation.base.errors import UserError
from workstation.game.seed import SEED_MAX, is_seed

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_R = TypeVar("_R", bound="DataclassInstance")

FORMAT = "atari-workstation/1"
READABLE_FORMATS = ("atari-workstation/1",)
FORMAT_PREFIX = "atari-workstation/"


class RecordError(UserError, ValueError):
    """A record whose fields have the wrong types (one line; the reader adds the file)."""


class RecordingError(UserError):
    """A recording that is missing, damaged, or written to wrongly (one-line message; ``file`` names it
    where the raiser knows it). Defined here, below the recording and its integrity check, which both raise it."""


# -- field checks -----------------------------------------------------------------
TYPE_WORDS = {"str": "text", "int": "an integer", "float": "a number", "bool": "true/false", "list": "a list",
         "dict": "an object", "NoneType": "null"}


def _kind(value: Any) -> str:
    name = type(value).__name__
    return TYPE_WORDS.get(name, name)


Check = Callable[..., Any]  # (name, value, *, optional=False) -> the value, or RecordError


def _of_type(types: tuple[type, ...], word: str) -> Check:
    """A check that ``value`` is one of ``types`` (a bool is never taken for a number), or null where allowed."""

    def check(name: str, value: Any, *, optional: bool = False) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise RecordError(f"field {name!r} is {_kind(value)}, not {word}")
        return value

    return check


_number = _of_type((int, float), "a number")
_str = _of_type((str,), "text")
_bool = _of_type((bool,), "true/false")
_dict = _of_type((dict,), "an object")
_whole = _of_type((int,), "an integer")
_plain_list = _of_type((list,), "a list")


def _int(name: str, value: Any, *, optional: bool = False) -> Any:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return _whole(name, value, optional=optional)


def _seed(name: str, value: Any, *, optional: bool = False) -> Any:
    """A seed, by the one seed rule (``workstation.game.seed``): a whole number 0..SEED_MAX."""
    value = _int(name, value, optional=optional)
    if value is not None and not is_seed(value):
        raise RecordError(f"field {name!r} is {value}, outside 0..{SEED_MAX}")
    return value


def _list(name: str, value: Any, item: Any = None, *, optional: bool = False) -> Any:
    value = _plain_list(name, value, optional=optional)
    if item is not None and value is not None:
        return [item(f"{name}[{i}]", v) for i, v in enumerate(value)]
    return value


def _any(name: str, value: Any, *, optional: bool = False) -> Any:
    return value


FIELD_CHECKS = {"num": _number, "int": _int, "seed": _seed, "str": _str, "bool": _bool, "dict": _dict, "list": _list, "any": _any}


class _Record:
    """Shared from_json / to_json: ``spec()`` names each JSON key's check and whether null is allowed."""

    ORDER: ClassVar[tuple[str, ...]] = ()  # the JSON's keys in order, where that is not the fields' own order
    ITEMS: ClassVar[dict[str, Any]] = {}  # list fields whose items are checked
    OMIT_EMPTY: ClassVar[tuple[str, ...]] = ()  # written only when not empty / not None
    OMIT_NONE: ClassVar[tuple[str, ...]] = ()  # written only when not None (an empty list or object is kept)

    extra: dict[str, Any]

    @classmethod
    def spec(cls) -> dict[str, tuple[str, bool]]:
        """Each JSON key's check (from its field's annotation) and whether null is allowed, in the order
        ``to_json`` writes them: ``ORDER``, else the record's own fields, then those it inherits (``extra`` aside)."""
        if cls not in _SPECS:
            assert is_dataclass(cls), f"{cls.__name__} is a dataclass"
            hints = get_type_hints(cls)
            own = vars(cls).get("__annotations__", {})
            names = [f.name for f in dataclass_fields(cls) if f.name != "extra"]
            order = cls.ORDER or sorted(names, key=lambda k: k not in own)
            assert sorted(order) == sorted(names), f"{cls.__name__}.ORDER names each field once"
            _SPECS[cls] = {k: _hint_check(hints[k], k) for k in order}
        return _SPECS[cls]

    @classmethod
    def from_json(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise RecordError(f"holds {_kind(data)}, not a JSON object")
        values: dict[str, Any] = {}
        spec = cls.spec()
        for key, (check, optional) in spec.items():
            if key not in data:
                continue
            value = data[key]
            if check == "list":
                value = _list(key, value, cls.ITEMS.get(key), optional=optional)
            else:
                value = FIELD_CHECKS[check](key, value, optional=optional)
            values[key] = value
        extra = {k: v for k, v in data.items() if k not in spec}
        return cls(**values, extra=extra)  # type: ignore[call-arg]  # every record dataclass has ``extra``

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in self.spec():
            value = getattr(self, key)
            if key in self.OMIT_EMPTY and not value and value != 0 or key in self.OMIT_NONE and value is None:
                continue
            if isinstance(value, _Record):
                value = value.to_json()
            elif isinstance(value, list) and value and isinstance(value[0], _Record):
                value = [v.to_json() for v in value]
            out[key] = value
        out.update(self.extra)
        return out


_SPECS: dict[type, dict[str, tuple[str, bool]]] = {}


def _hint_check(hint: Any, name: str = "") -> tuple[str, bool]:
    """The check of a field ``name`` annotated ``hint`` and whether it may be null (``Any`` may be anything, null
    too). A whole-number field named ``seed`` is a seed: the one seed rule (``workstation.game.seed``)."""
    args = get_args(hint) if isinstance(hint, UnionType) else (hint,)
    kinds = [a for a in args if a is not type(None)]
    word = _check_word(kinds[0])
    return "seed" if word == "int" and name == "seed" else word, len(kinds) < len(args) or hint is Any


# -- usage -------------------------------------------------------------------------
def usage_totals(usage: dict[str, Any] | None) -> tuple[int, int]:
    """(input tokens counting cache reads and writes, output tokens) of a usage object, (0, 0) if none."""
    if not usage:
        return 0, 0
    n_in = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens"))
    return n_in, int(usage.get("output_tokens") or 0)


USAGE_KEYS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")


def add_usage(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    """The sum of two usage objects (missing counts as zero), with every key present."""
    a, b = a or {}, b or {}
    return {k: int(a.get(k) or 0) + int(b.get(k) or 0) for k in USAGE_KEYS}


# -- manifest ----------------------------------------------------------------------
@dataclass
class Manifest(_Record):
    """What a run is: written first, never changed."""

    format: str = FORMAT
    rules: int | None = None  # game-over rule version; absent = 1
    run_id: str | None = None
    game: str | None = None
    env_id: str | None = None
    in_paper: bool | None = None
    seed: int | None = None
    protocol: dict[str, Any] = field(default_factory=dict[str, Any])  # Protocol.to_json(); Protocol.from_json checks it
    agent: dict[str, Any] = field(default_factory=dict[str, Any])
    prompt_pack: dict[str, Any] = field(default_factory=dict[str, Any])
    versions: dict[str, Any] = field(default_factory=dict[str, Any])
    created: str | None = None
    frame_shape: list[Any] = field(default_factory=lambda: [210, 160])
    clock: str | None = None
    seed_note: str | None = None
    parent: dict[str, Any] | None = None  # a rewind-and-branch: the run it left and the turn
    branch: dict[str, Any] | None = None  # the frames and turns copied from the parent
    kind: str | None = None  # "match" for a two-player match; absent for a one-player run
    skill: dict[str, Any] | None = None  # the skill text the prompt carried (digest, text, slot)
    changes: Any = None  # changes made by hand (workstation.store.changes.verdict checks them); None: untracked
    plain_run_id: str | None = None  # a run changed by hand: the id of the same spec played untouched
    source: Any = None  # an imported run: the harness run it came from
    players: Any = None  # a match: its two sides (workstation.store.integrity.match_problems checks them)
    team: bool | None = None  # a match whose sides play as one team
    replay_note: str | None = None  # a replay on another start than its source's
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    ITEMS: ClassVar = {"frame_shape": _int}
    OMIT_EMPTY: ClassVar = ("rules", "seed_note", "parent", "branch")
    OMIT_NONE: ClassVar = ("kind", "skill", "changes", "plain_run_id", "source", "players", "team", "replay_note")

    @classmethod
    def from_json(cls, data: Any) -> Manifest:
        if isinstance(data, dict):
            check_format(data.get("format", FORMAT))
        manifest: Manifest = super().from_json(data)
        _ = manifest.experience  # checked here, so a reader never meets a malformed one
        return manifest

    @property
    def experience(self) -> ExperienceStart | None:
        """The experience library the run started from (None: the run had none). Kept in ``extra`` as stored
        (``to_json`` writes it back unchanged); this is the checked, typed view of it."""
        return ExperienceStart.from_json(self.extra.get("experience"))

    @property
    def rule_version(self) -> int:
        return 1 if self.rules is None else self.rules

    @property
    def is_match(self) -> bool:
        return self.kind == "match"

    @property
    def imported(self) -> bool:
        """Imported from a harness run (its overrides replay the harness's actions)."""
        return isinstance(self.source, dict)

    @property
    def parent_turn(self) -> Any:
        """The turn a branch left its parent at (None: not a branch, or not said)."""
        return (self.parent or {}).get("turn")

    @property
    def parent_run_id(self) -> Any:
        return (self.parent or {}).get("run_id")

    @property
    def agent_spec(self) -> str | None:
        spec = self.agent.get("spec")
        return spec if isinstance(spec, str) else None

    @property
    def budget(self) -> int | None:
        frames = self.protocol.get("frames") if isinstance(self.protocol, dict) else None
        return frames if isinstance(frames, int) and not isinstance(frames, bool) else None


@dataclass(frozen=True)
class ExperienceStart:
    """A manifest's ``experience`` (``workstation.engine.experience`` writes it): the library a run started from,
    the digest it was stored with, K (``--reflect-every``) and the prompt pack's slot that placed it. A key
    that is missing reads as empty (rules) or None; one of the wrong type is a ``RecordError`` naming it."""

    rules: list[str]
    every: int | None
    start_digest: str | None
    slot: str | None

    @classmethod
    def from_json(cls, data: Any) -> ExperienceStart | None:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise RecordError(f"field 'experience' is {_kind(data)}, not an object")
        rules = data.get("rules")
        rules = [] if rules is None else _list("experience.rules", rules, _str)
        return cls(rules, _whole("experience.every", data.get("every"), optional=True),
                   _str("experience.start_digest", data.get("start_digest"), optional=True),
                   _str("experience.slot", data.get("slot"), optional=True))


def check_format(value: Any) -> None:
    """A format this version reads; else one line saying what it is and what to do."""
    if value in READABLE_FORMATS:
        return
    if isinstance(value, str) and value.startswith(FORMAT_PREFIX):
        raise RecordError(f"format {value!r} is newer than this workstation reads ({', '.join(READABLE_FORMATS)}); "
                          "upgrade the workstation to read it")
    raise RecordError(f"unknown format {value!r} (this workstation reads {', '.join(READABLE_FORMATS)})")


# -- turn record -------------------------------------------------------------------
@dataclass
class _Played(_Record):
    """What a player's turn (one-player, or one side of a match) played and what its reply cost."""

    reward: float = 0.0
    action_rewards: list[Any] = field(default_factory=list[Any])
    action_life_lost: list[Any] = field(default_factory=list[Any])
    lives_lost: int = 0
    score: float = 0.0
    lives: int = 0
    prompt: dict[str, Any] = field(default_factory=dict[str, Any])
    usage: dict[str, Any] | None = None
    latency_s: float = 0.0
    cost_usd: float | None = None
    attempts: list[Any] = field(default_factory=list[Any])
    error: str | None = None


@dataclass
class TurnRecord(_Played):
    """One line of turns.jsonl: the reply, the plan, what ran and what happened."""

    turn: int = 0
    start_frame: int = 0
    end_frame: int = 0
    raw: str = ""
    thought: str = ""
    planned: list[Any] = field(default_factory=list[Any])
    actions: list[Any] = field(default_factory=list[Any])
    valid: bool = True
    rule: str | None = None
    errors: list[Any] = field(default_factory=list[Any])
    overridden: bool = False
    action_reset: list[Any] = field(default_factory=list[Any])
    action_frames: list[Any] = field(default_factory=list[Any])
    noop_frames: int = 0
    finish_reason: str | None = None
    game_over: bool = False  # the game ended during this turn
    cut_frames: int | None = None  # frames the cut action ran, or None if none was cut
    dropped: list[Any] = field(default_factory=list[Any])  # planned actions dropped (budget or game over)
    reset_frame: int | None = None  # budget frame of the new game's first frame
    discarded_replies: list[Any] = field(default_factory=list[Any])  # step mode: replies discarded by a re-send
    human_plan: bool | None = None  # step mode: a person typed the plan; the agent was not asked
    current_only: bool | None = None  # step mode: asked the current-frame-only prompt, then edited it
    override_source: str | None = None  # "import": an importer's override replays the harness's actions
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    ORDER: ClassVar = ("turn", "start_frame", "end_frame", "raw", "thought", "planned", "actions", "valid", "rule",
                        "errors", "overridden", "reward", "action_rewards", "action_life_lost", "action_reset",
                        "action_frames", "lives_lost", "noop_frames", "score", "lives", "prompt", "usage", "latency_s",
                        "cost_usd", "attempts", "error", "finish_reason", "game_over", "cut_frames", "dropped",
                        "reset_frame", "discarded_replies", "human_plan", "current_only", "override_source")
    ITEMS: ClassVar = {"planned": _str, "actions": _str, "errors": _str, "action_rewards": _number,
                       "action_life_lost": _bool, "action_reset": _bool, "action_frames": _int, "dropped": _str}
    OMIT_EMPTY: ClassVar = ("discarded_replies",)
    OMIT_NONE: ClassVar = ("human_plan", "current_only", "override_source")

    @classmethod
    def from_json(cls, data: Any) -> TurnRecord:
        rec = super().from_json(data)
        n = len(rec.actions)
        for key in ("action_rewards", "action_life_lost", "action_frames"):
            if key in data and len(getattr(rec, key)) != n:
                raise RecordError(f"field {key!r} has {len(getattr(rec, key))} items for {n} actions")
        if "action_reset" not in data:  # written before resets were recorded per action
            rec.action_reset = [False] * n
        record: TurnRecord = rec
        return record

    @property
    def tokens(self) -> tuple[int, int]:
        """(input, output) tokens of this turn's reply."""
        return usage_totals(self.usage)

    @property
    def calls(self) -> int:
        """Requests sent for this turn, as the engine counts them (failed ones included)."""
        return len(self.attempts) or (1 if self.usage is not None else 0)

    @property
    def reset(self) -> bool:
        """The game ended and restarted during this turn."""
        return self.game_over or any(self.action_reset)

    @property
    def last_frame(self) -> int:
        """The last budget frame this turn made: the new game's first frame after a game over, else its end."""
        return self.reset_frame if self.reset_frame is not None else self.end_frame

    @property
    def prompt_digest(self) -> Any:
        return self.prompt.get("digest")

    @property
    def variant(self) -> str:
        return str(self.prompt.get("variant", "standard"))

    @property
    def shown_plan(self) -> list[str]:
        """The plan to show: what ran when it is not the parsed plan (overridden or invalid)."""
        executed = self.overridden or not self.valid
        return list((self.actions if executed else self.planned) or self.actions)


# -- a two-player match's turn ---------------------------------------------------------
@dataclass
class SideTurn(_Played):
    """One side's part of a match turn: its reply, plan, what it played (padding included) and its score."""

    side: int = 1
    raw: str = ""
    thought: str = ""
    planned: list[Any] = field(default_factory=list[Any])
    actions: list[Any] = field(default_factory=list[Any])
    padded: int = 0  # NOOPs added after the plan while the other side's went on
    dropped: list[Any] = field(default_factory=list[Any])
    valid: bool = True
    rule: str | None = None
    errors: list[Any] = field(default_factory=list[Any])
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    ITEMS: ClassVar = {"planned": _str, "actions": _str, "dropped": _str, "errors": _str,
                       "action_rewards": _number, "action_life_lost": _bool}

    @classmethod
    def from_json(cls, data: Any) -> SideTurn:
        side: SideTurn = super().from_json(data)
        return side


@dataclass
class MatchTurn(_Record):
    """One line of a match's turns.jsonl: both sides' plans played in lockstep. ``reward``, ``score`` and
    ``lives`` are side 1's (what a one-player reader reads); ``players`` holds both sides."""

    turn: int = 0
    start_frame: int = 0
    end_frame: int = 0
    reward: float = 0.0
    score: float = 0.0
    lives: int = 0
    lives_lost: int = 0
    game_over: bool = False
    reset_frame: int | None = None
    lockstep_frames: list[Any] = field(default_factory=list[Any])
    players: list[SideTurn] = field(default_factory=list[SideTurn])
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    ITEMS: ClassVar = {"lockstep_frames": _int, "players": lambda name, value: _side(name, value)}

    @classmethod
    def from_json(cls, data: Any) -> MatchTurn:
        turn: MatchTurn = super().from_json(data)
        if len(turn.players) != 2 or [p.side for p in turn.players] != [1, 2]:
            raise RecordError("field 'players' does not hold sides 1 and 2")
        return turn


def _side(name: str, value: Any) -> SideTurn:
    try:
        return SideTurn.from_json(value)
    except RecordError as e:
        raise RecordError(f"{name}: {e}") from None


# -- summary -----------------------------------------------------------------------
@dataclass
class Summary(_Record):
    """How a run ended: written last, by atomic rename. A stopped run's has the same fields."""

    complete: bool = False
    game: str | None = None
    seed: int | None = None
    agent: str | None = None
    total_reward: float = 0.0
    frames: int = 0
    turns: int = 0
    lives_lost: int = 0
    invalid_turns: int = 0
    failed_turns: int | None = None  # turns lost to provider errors (written since the engine counts them)
    episodes_ended: int | None = None  # rule 1's name for the games that ended
    games_ended: int | None = None  # rule 2: games that ended in a game over
    calls: int = 0
    usage: dict[str, Any] = field(default_factory=lambda: add_usage(None, None))
    cost_usd: float | None = 0.0
    wall_s: float | None = None
    stopped: str | None = None
    files: dict[str, Any] | None = None  # name -> {"sha256", "bytes"}: the fast integrity check
    interventions: dict[str, Any] | None = None  # changes made by hand, per kind (workstation.store.changes)
    stopped_call: dict[str, Any] | None = None  # the call a cancel or a fatal failure ended: its account
    changed_by_hand: bool | None = None  # written (true) with interventions
    overridden_turns: int | None = None  # turns whose plan a person chose, written with interventions
    kind: str | None = None  # "match": a two-player match's summary, with the fields below
    players: Any = None  # a match: each side's agent, score, lives lost, calls, cost (integrity checks them)
    winner: Any = None  # a match: 1 or 2, None for a draw or a team
    result: Any = None  # a match: "side N wins" | "draw" | "team"
    team_score: Any = None  # a co-operative match: the sides' scores added
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    OMIT_EMPTY: ClassVar = ("failed_turns", "episodes_ended", "games_ended", "files", "interventions", "stopped_call",
                            "changed_by_hand", "overridden_turns")
    OMIT_NONE: ClassVar = ("kind", "players", "winner", "result", "team_score")
    # what every summary has had, whatever wrote it; a stored summary missing any is filled in from the turns
    CORE: ClassVar = ("complete", "game", "seed", "agent", "total_reward", "frames", "turns", "lives_lost",
                      "invalid_turns", "calls", "usage", "cost_usd", "stopped")

    @property
    def games(self) -> int:
        """Games that ended inside the budget (either rule's name for it)."""
        return self.games_ended if self.games_ended is not None else (self.episodes_ended or 0)

    @property
    def tokens(self) -> tuple[int, int]:
        return usage_totals(self.usage)

    @property
    def state(self) -> str:
        """complete | stopped | unfinished (no summary: killed or still running; rebuilt from the turns)."""
        if self.complete:
            return "complete"
        return "unfinished" if self.extra.get("rebuilt") else "stopped"


def rebuild_summary(manifest: Manifest, turns: list[TurnRecord], why: str | None) -> Summary:
    """The summary of a run that wrote none (killed), from its turn records: every field a finished one has."""
    usage: dict[str, Any] = add_usage(None, None)
    cost, priced = 0.0, True
    for t in turns:
        if t.usage is not None:
            usage = add_usage(usage, t.usage)
            if t.cost_usd is None:
                priced = False
        if t.cost_usd is not None:
            cost += t.cost_usd
    last = turns[-1] if turns else None
    games = sum(1 for t in turns if t.game_over)
    return Summary(
        complete=False, game=manifest.game, seed=manifest.seed, agent=manifest.agent_spec,
        total_reward=sum(t.reward for t in turns),
        frames=last.last_frame if last else 0, turns=len(turns),
        lives_lost=sum(t.lives_lost for t in turns),
        invalid_turns=sum(1 for t in turns if not t.valid and not t.overridden),
        failed_turns=sum(1 for t in turns if t.error is not None and not t.overridden and not t.extra.get("cancelled")),
        episodes_ended=sum(1 for t in turns if any(t.action_reset)) if manifest.rule_version < 2 else None,
        games_ended=games if manifest.rule_version >= 2 else None,
        calls=sum(t.calls for t in turns), usage=usage,
        cost_usd=round(cost, 6) if priced else None, wall_s=None, stopped=why,
        extra={"rebuilt": True},
    )


# -- the one checked reader of JSON files --------------------------------------------
class RecordFileError(UserError):
    """A JSON file that cannot be read, or holds a field of the wrong type or out of range: one line naming the
    file and the field (exit 2)."""


def _text(path: Path) -> str:
    """The UTF-8 text of ``path``; a file that cannot be read, or is not UTF-8, is one line naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise RecordFileError(f"{path} cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise RecordFileError(f"{path} is not UTF-8 text") from None


def _parsed(text: str, where: str, kind: type, what: str, *, error_line: bool) -> Any:
    """``text`` (the file, or a line of it, ``where``) as JSON, which must be a ``kind`` (``what``); a failure is
    one line naming ``where`` (and, with ``error_line``, the line of the JSON error)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        at = f" at line {e.lineno}" if error_line else ""
        raise RecordFileError(f"{where} is not valid JSON ({e.msg}{at})") from None
    if not isinstance(data, kind):
        raise RecordFileError(f"{where} holds {_kind(data)}, not {what}")
    return data


def read_json(path: Path | str, kind: type = dict) -> Any:
    """The JSON in ``path``, which must be a ``kind`` (an object by default); every failure one line naming it."""
    path = Path(path)
    return _parsed(_text(path), str(path), kind, TYPE_WORDS.get(kind.__name__, kind.__name__), error_line=True)


def read_jsonl(path: Path | str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of ``path``; a line that is not a JSON object is one line."""
    path = Path(path)
    return [(number, _parsed(line, f"{path} line {number}", dict, "a JSON object", error_line=False))
            for number, line in enumerate(_text(path).splitlines(), 1) if line.strip()]


def check_fields(data: dict[str, Any], fields: dict[str, tuple[Any, ...]], where: str) -> dict[str, Any]:
    """Check the fields of a JSON object read from ``where`` (a file, or a file and line).

    ``fields`` maps a key to ``(check, optional)`` or ``(check, optional, low, high)``, the checks those of the
    records above (num, int, seed, str, bool, dict, list, any). A number must be finite and, with a range, inside it.
    """
    for key, spec in fields.items():
        check, optional = spec[0], spec[1]
        if key not in data:
            if not optional:
                raise RecordFileError(f"{where}: field {key!r} is missing")
            continue
        value = data[key]
        try:
            FIELD_CHECKS[check](key, value, optional=optional)
        except RecordError as e:
            raise RecordFileError(f"{where}: {e}") from None
        if value is None or check not in ("num", "int"):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise RecordFileError(f"{where}: field {key!r} is {value}, not a finite number")
        if len(spec) == 4:
            lo, hi = spec[2], spec[3]
            if not lo <= value <= hi:
                raise RecordFileError(f"{where}: field {key!r} is {_bound(value)}, outside {_bound(lo)}..{_bound(hi)}")
    return data


# -- typed records declared once: their JSON checks from their annotations ------------------------------------------
FLAT: dict[str, Any] = {"flat": True}  # a part stored flat, as ``<name>_<field>`` keys of the record


def ranged(low: float, high: float) -> Any:
    """A required number field that ``check_fields`` holds inside ``low..high``."""
    return field(metadata={"range": (low, high)})


def _check_word(hint: Any) -> str:
    """The ``check_fields`` check of an annotation (None taken out): a nested record or a mapping is an object,
    a tuple or a list a list."""
    origin = get_origin(hint) or hint
    if is_dataclass(origin) or origin is dict:
        return "dict"
    if origin in (list, tuple):
        return "list"
    return {str: "str", int: "int", float: "num", bool: "bool"}.get(origin, "any")


def _flat_part(f: Field[Any]) -> type[DataclassInstance]:
    """The record class of a ``FLAT`` field (its default is an instance)."""
    part = f.default
    assert is_dataclass(part) and not isinstance(part, type), f"{f.name}: a flat part needs a record as its default"
    return type(part)


def json_fields(cls: type[DataclassInstance]) -> dict[str, tuple[Any, ...]]:
    """The fields of the typed record ``cls`` (a dataclass) as ``check_fields`` takes them, in its order: each
    field's check from its annotation, optional (missing or null) where it may be None or has a default, its
    range from ``ranged``; a ``FLAT`` part is its own fields under ``<name>_<field>``. So a record's fields and
    their checks are declared once, in the record."""
    hints = get_type_hints(cls)
    out: dict[str, tuple[Any, ...]] = {}
    for f in dataclass_fields(cls):
        if f.metadata.get("flat"):
            out.update({f"{f.name}_{k}": v for k, v in json_fields(_flat_part(f)).items()})
            continue
        check, nullable = _hint_check(hints[f.name], f.name)
        optional = nullable or f.default is not MISSING or f.default_factory is not MISSING
        out[f.name] = (check, optional, *f.metadata.get("range", ()))
    return out


def record_of(cls: type[_R], data: dict[str, Any], **parts: Any) -> _R:
    """The typed record ``cls`` from a JSON object checked with ``json_fields(cls)``: each field as stored (a key
    missing or null: the field's default), a ``FLAT`` part from its keys, ``parts`` (nested records) as given."""
    values: dict[str, Any] = dict(parts)
    for f in dataclass_fields(cls):
        if f.name in parts:
            continue
        if f.metadata.get("flat"):
            part = _flat_part(f)
            values[f.name] = record_of(part, {p.name: data.get(f"{f.name}_{p.name}") for p in dataclass_fields(part)})
        elif data.get(f.name) is not None:
            values[f.name] = data[f.name]
    return cls(**values)


def _bound(x: float) -> str:
    """A bound as written: whole numbers in full (4294967295, not 4.29497e+09), others short."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e18 else f"{x:g}"


def read_record(path: Path | str, cls: type[_Record] | None = None,
                fields: dict[str, tuple[Any, ...]] | None = None) -> Any:
    """A JSON object from ``path``, checked: typed as ``cls`` (Manifest, Summary, ...) or by ``fields``."""
    data = read_json(path)
    if fields:
        check_fields(data, fields, str(path))
    if cls is None:
        return data
    try:
        return cls.from_json(data)
    except RecordError as e:
        raise RecordFileError(f"{path}: {e}") from None
