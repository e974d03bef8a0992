"""Reading one run directory of the public AtariBench harness (``summary.json``, ``turns.jsonl``).

Only what the import needs is read; anything missing or malformed is a
``UserError`` naming the file, the line and the field (one line, exit 2).

Per turn the harness writes ``turn_index`` (from 1), ``raw_response``,
``parsed_thought``, ``planned_action_strings``/``planned_action_ids``,
``parse_errors``, token counts, ``start_frame_index``, ``executed_frame_end``,
``reward_delta``, ``new_game_started`` (true on the turn whose last frame ended
a game) and ``action_records`` (``action_id``, ``action_name``,
``start_frame_index``, ``end_frame_index``, ``reward_delta``, ``lost_life``,
``end_info.lives``). Stored frames, when present, are ``frames/frame_NNNNNN.png``
numbered by budget frame.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.store.records import read_jsonl, read_record

_PNG = re.compile(r"^frame_(\d+)\.png$")
MAX_FRAMES = 108_000  # the emulator's episode cap, as --frames
# the summary fields the import reads, with their types and ranges (a seed -1 or a duration of 1e308 is refused)
SUMMARY_FIELDS = {
    "seed": ("seed", True), "duration_seconds": ("num", True, 1 / 30, MAX_FRAMES / 30),
    "frame_count": ("int", True, 2, MAX_FRAMES + 1), "frames_per_action": ("int", True, 1, 60),
    "history_clips": ("int", True, 0, 50), "non_zero_reward_clips": ("int", True, 0, 50),
    "total_reward": ("num", True), "total_lost_lives": ("int", True), "turn_count": ("int", True, 0, MAX_FRAMES),
    "game": ("str", True), "model_name": ("str", True), "prompt_mode": ("str", True),
}
# copied as they are into the imported run's manifest (``source.summary``): read, never checked
VERBATIM = ("stop_reason", "thinking_mode")


@dataclass(frozen=True)
class HarnessSummary:
    """The harness's ``summary.json``, as far as the import reads it: each field of ``SUMMARY_FIELDS`` checked
    (None: not written), ``run_dir`` as text ("" when not written) and the verbatim ones as written."""

    seed: int | None = None
    duration_seconds: float | None = None
    frame_count: int | None = None
    frames_per_action: int | None = None
    history_clips: int | None = None
    non_zero_reward_clips: int | None = None
    total_reward: float | None = None
    total_lost_lives: int | None = None
    turn_count: int | None = None
    game: str | None = None
    model_name: str | None = None
    prompt_mode: str | None = None
    run_dir: str = ""
    stop_reason: Any = None
    thinking_mode: Any = None

    @classmethod
    def read(cls, path: Path) -> HarnessSummary:
        """``path`` read and checked: a field of the wrong type or out of range is one line naming the file
        and the field (``workstation.store.records.read_record``)."""
        data = read_record(path, fields=SUMMARY_FIELDS)
        values = {k: data.get(k) for k in (*SUMMARY_FIELDS, *VERBATIM)}
        for k, (check, *_) in SUMMARY_FIELDS.items():  # a whole number written 3.0 passes the check: read as 3
            if check == "int" and isinstance(values[k], float):
                values[k] = int(values[k])
        return cls(**values, run_dir=str(data.get("run_dir") or ""))

    def source(self) -> dict[str, Any]:
        """What the imported run's manifest keeps of it (None where the harness wrote nothing)."""
        return {"total_reward": self.total_reward, "total_lost_lives": self.total_lost_lives,
                "turn_count": self.turn_count, "frame_count": self.frame_count, "stop_reason": self.stop_reason,
                "prompt_mode": self.prompt_mode, "thinking_mode": self.thinking_mode}


@dataclass
class HarnessAction:
    action_id: int
    name: str
    start: int
    end: int
    reward: float
    lost_life: bool
    lives: int | None


@dataclass
class HarnessTurn:
    index: int  # turn_index, from 1
    raw: str
    thought: str
    planned_ids: list[int]
    planned_names: list[str]
    parse_errors: list[str]
    tokens: dict[str, Any]  # input/output/total/thinking/cached as the harness wrote them (None = not reported)
    start: int
    end: int
    reward: float
    new_game: bool
    actions: list[HarnessAction]

    @property
    def executed_ids(self) -> list[int]:
        return [a.action_id for a in self.actions]


@dataclass
class HarnessRun:
    path: Path
    summary: HarnessSummary
    turns: list[HarnessTurn]
    pngs: dict[int, Path] = field(default_factory=dict)  # budget frame -> stored PNG

    @property
    def model(self) -> str:
        return self.summary.model_name or "unknown"


def _need(d: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in d:
        raise UserError(f"{where}: field {key!r} is missing; is this a public AtariBench harness run?")
    value = d[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise UserError(f"{where}: field {key!r} should be {getattr(kind, '__name__', kind)}, not {value!r}")
    return value


def _tokens(d: dict[str, Any]) -> dict[str, Any]:
    keys = ("input_tokens", "output_tokens", "total_tokens", "thinking_tokens", "cached_input_tokens")
    out = {}
    for k in keys:
        v = d.get(k)
        out[k] = v if isinstance(v, int) and not isinstance(v, bool) else None
    return out


def _action(d: object, where: str) -> HarnessAction:
    if not isinstance(d, dict):
        raise UserError(f"{where}: an action record should be an object, not {d!r}")
    info: dict[str, Any] = d["end_info"] if isinstance(d.get("end_info"), dict) else {}
    lives = info.get("lives")
    return HarnessAction(
        action_id=_need(d, "action_id", int, where),
        name=str(d.get("action_name", "")),
        start=_need(d, "start_frame_index", int, where),
        end=_need(d, "end_frame_index", int, where),
        reward=_need(d, "reward_delta", float, where),
        lost_life=bool(_need(d, "lost_life", bool, where)),
        lives=lives if isinstance(lives, int) else None,
    )


def _turn(d: object, where: str) -> HarnessTurn:
    if not isinstance(d, dict):
        raise UserError(f"{where}: a turn should be a JSON object")
    records = _need(d, "action_records", list, where)
    planned_ids = d.get("planned_action_ids") or []
    if not isinstance(planned_ids, list) or not all(isinstance(a, int) for a in planned_ids):
        raise UserError(f"{where}: field 'planned_action_ids' should be a list of action ids")
    return HarnessTurn(
        index=_need(d, "turn_index", int, where),
        raw=str(d.get("raw_response") or ""),
        thought=str(d.get("parsed_thought") or ""),
        planned_ids=list(planned_ids),
        planned_names=[str(s) for s in d.get("planned_action_strings") or []],
        parse_errors=[str(s) for s in d.get("parse_errors") or []],
        tokens=_tokens(d),
        start=_need(d, "start_frame_index", int, where),
        end=_need(d, "executed_frame_end", int, where),
        reward=_need(d, "reward_delta", float, where),
        new_game=bool(d.get("new_game_started", False)),
        actions=[_action(r, f"{where} action {i + 1}") for i, r in enumerate(records)],
    )


def read_run(path: Path) -> HarnessRun:
    """Read and check a harness run directory; UserError (one line) when it is not one."""
    path = Path(path)
    if not path.is_dir():
        raise UserError(f"{path}: not a directory; give a harness run directory holding summary.json and turns.jsonl")
    summary_path, turns_path = path / "summary.json", path / "turns.jsonl"
    for p in (summary_path, turns_path):
        if not p.is_file():
            raise UserError(f"{path}: no {p.name}; a public AtariBench harness run directory holds summary.json and turns.jsonl")
    summary = HarnessSummary.read(summary_path)
    turns: list[HarnessTurn] = []
    for n, d in read_jsonl(turns_path):
        turns.append(_turn(d, f"{turns_path} line {n}"))
    if not turns:
        raise UserError(f"{turns_path}: no turns")
    turns.sort(key=lambda t: t.index)
    expected = list(range(1, len(turns) + 1))
    if [t.index for t in turns] != expected:
        raise UserError(f"{turns_path}: turn_index should run 1..{len(turns)} without gaps")
    pngs: dict[int, Path] = {}
    frames_dir = path / "frames"
    if frames_dir.is_dir():
        for p in frames_dir.iterdir():
            m = _PNG.match(p.name)
            if m:
                pngs[int(m.group(1))] = p
    return HarnessRun(path, summary, turns, pngs)


def game_key_of(run: HarnessRun) -> str | None:
    """The game's key from the summary, or from the ``runs/<game>/<model>/<run>`` path layout."""
    if run.summary.game is not None:
        return run.summary.game
    for text in (run.summary.run_dir, str(run.path.resolve())):
        parts = Path(text).parts
        for i, part in enumerate(parts[:-2]):
            if part == "runs" and i + 2 < len(parts):
                return parts[i + 1]
    return None
