"""Grid files (TOML): games x settings x seeds x protocol variants, expanded and checked up front.

Pure: ``load_grid(path)`` / ``parse_grid(text)`` read a grid and return a ``Grid`` whose
``cells`` list one run each (setting label, game, seed, agent spec, options, protocol fields,
and the checked ``RunSpec``). Nothing is written and nothing runs. Every error is a
``GridError`` (a ``UserError``: one line, exit 2) naming the file, the line and the key.

    name = "feedback-ablation"
    games = ["breakout", "pong"]        # or "paper20" (the paper's 20) or "all" (all 21)
    seeds = "0..9"                      # or a list [0, 1, 2]

    [[settings]]
    label = "gpt-5.4-mini"
    spec = "openai:gpt-5.4-mini"        # any --agent spec
    effort = "low"                      # any of: effort, temperature, max_output_tokens, timeout, base_url

    [protocol]                          # any protocol field; a list expands into a cross product
    feedback = [true, false]
    max_actions = [1, 5, 10]
    mode = 0                            # the ALE game mode / difficulty (held-out variants)

    [limits]                            # concurrent runs per provider
    openai = 4

A grid is bounded: at most ``MAX_CELLS`` (100 000) runs, counted before anything is expanded (a
``seeds = "0..4294967295"`` is refused in one line, ``--dry-run`` too); split a bigger study into grids.

Expanded labels say what varies: ``gpt-5.4-mini|feedback=false|max_actions=5`` (only the
protocol keys given as lists of two or more values appear).
"""

from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError

TOP_KEYS = ("name", "games", "seeds", "settings", "protocol", "limits")
OPTION_KEYS = ("effort", "temperature", "max_output_tokens", "timeout", "base_url",
               "experience", "reflect_every")  # the last two: an experience library (docs/experience.md)
SETTING_KEYS = ("label", "spec") + OPTION_KEYS
ALE_KEYS = ("mode", "difficulty")  # the game variant: the protocol's game_mode / game_difficulty
ALE_FIELDS = {"mode": "game_mode", "difficulty": "game_difficulty"}
ALE_KEY_OF = {v: k for k, v in ALE_FIELDS.items()}
MAX_CELLS = 100_000  # runs in one grid; counted before the grid is expanded


def _too_many(n: int) -> str:
    return (f"the grid has {n:,} cells (runs), past the cap of {MAX_CELLS:,} a grid may hold; split it into "
            "several grids (fewer seeds, games or protocol values)")


class GridError(UserError):
    """A bad grid: names the file, the line and the key."""

    def __init__(self, message: str, key: str = "", line: int | None = None) -> None:
        super().__init__(message)
        self.key, self.line = key, line


@dataclass(frozen=True)
class GridSetting:
    label: str
    spec: str
    options: dict[str, Any]


@dataclass(frozen=True)
class GridCell:
    """One run of the batch."""

    setting: str  # expanded label: base|key=value for each protocol key that varies
    base: str  # the [[settings]] label
    game: str
    seed: int
    agent: str  # the agent spec
    options: dict[str, Any]  # generation and transport options given for the setting
    protocol: dict[str, Any]  # every protocol field the grid sets, at this cell's values
    varied: dict[str, Any]  # the protocol fields that vary across the grid, at this cell's values
    ale: dict[str, int]  # ALE mode / difficulty when the grid sets them
    spec: Any = None  # the checked workstation.run.options.RunSpec


@dataclass
class Grid:
    name: str
    games: list[str]
    seeds: list[int]
    settings: list[GridSetting]
    axes: dict[str, list[Any]]  # protocol key -> its values (one value = fixed)
    limits: dict[str, int]
    cells: list[GridCell] = field(default_factory=list)
    source: str = "<grid>"

    @property
    def varied(self) -> list[str]:
        return [k for k, v in self.axes.items() if len(v) > 1]


# -- where each key is ----------------------------------------------------------
_ARRAY = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]")
_TABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\"-]+)\s*\]")
_KEY = re.compile(r"^\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+)\s*=")


def key_lines(text: str) -> dict[tuple[Any, ...], int]:
    """The line of each key (``("settings", 1, "effort")``) and table (``("protocol",)``)."""
    lines: dict[tuple[Any, ...], int] = {}
    counts: dict[str, int] = {}
    current: tuple[Any, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        if m := _ARRAY.match(line):
            name = m.group(1)
            current = (name, counts.get(name, 0))
            counts[name] = counts.get(name, 0) + 1
            lines.setdefault(current, number)
        elif m := _TABLE.match(line):
            current = tuple(m.group(1).strip('"').split("."))
            lines.setdefault(current, number)
        elif m := _KEY.match(line):
            lines.setdefault(current + (m.group(1).strip("\"'"),), number)
    return lines


class _Where:
    def __init__(self, source: str, text: str) -> None:
        self.source, self.lines = source, key_lines(text)

    def line(self, path: tuple[Any, ...]) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None

    def error(self, path: tuple[Any, ...], message: str) -> GridError:
        key = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")
        line = self.line(path)
        at = f"line {line}: " if line else ""
        return GridError(f"{self.source} {at}{key}: {message}", key, line)


# -- reading --------------------------------------------------------------------
def load_grid(path: str | Path, out: str | None = None) -> Grid:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GridError(f"{p}: no such grid file; pass a TOML grid (see docs/batches.md)") from None
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise GridError(f"{p}: cannot read the grid ({reason})") from None
    return parse_grid(text, source=str(p), out=out)


def parse_grid(text: str, source: str = "<grid>", out: str | None = None) -> Grid:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        raise GridError(f"{source}: not valid TOML: {e}", "", int(m.group(1)) if m else None) from None
    w = _Where(source, text)
    for key in data:
        if key not in TOP_KEYS:
            raise w.error((key,), f"unknown key; a grid has {', '.join(TOP_KEYS)}")
    for key in ("name", "games", "seeds", "settings"):
        if key not in data:
            raise GridError(f"{source}: missing {key!r}; a grid needs name, games, seeds and [[settings]]", key)
    name = data["name"]
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise w.error(("name",), f"{name!r} must be a name of letters, digits, '.', '_' or '-' (it names batches/<name>/)")
    grid = Grid(name, _games(data["games"], w), _seeds(data["seeds"], w), _settings(data["settings"], w),
                _axes(data.get("protocol", {}), w), _limits(data.get("limits", {}), w), source=source)
    n = len(grid.games) * len(grid.seeds) * len(grid.settings)
    for values in grid.axes.values():
        n *= len(values)
    if n > MAX_CELLS:
        raise GridError(f"{source}: {_too_many(n)}", "seeds")
    grid.cells = _expand(grid, w, out)
    return grid


def _games(value: Any, w: _Where) -> list[str]:
    from workstation.game.games import GAMES, UnknownGame, get_game, paper_games

    if value == "paper20":
        return [g.key for g in paper_games()]
    if value == "all":
        return list(GAMES)
    if not isinstance(value, list) or not value:
        raise w.error(("games",), f"{value!r} must be a non-empty list of games, \"paper20\" or \"all\"")
    out: list[str] = []
    for i, g in enumerate(value):
        if not isinstance(g, str):
            raise w.error(("games",), f"item {i} ({g!r}) is not a game name")
        try:
            key = get_game(g).key
        except UnknownGame as e:
            raise w.error(("games",), str(e)) from None
        if key in out:
            raise w.error(("games",), f"{g!r} is listed twice")
        out.append(key)
    return out


def _seeds(value: Any, w: _Where) -> list[int]:
    from workstation.game.seed import SEED_MAX, is_seed

    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*\.\.\s*(\d+)\s*", value)
        if not m or int(m.group(1)) > int(m.group(2)):
            raise w.error(("seeds",), f"{value!r} must be a range A..B with A <= B (e.g. \"0..9\") or a list of seeds")
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi > SEED_MAX:
            raise w.error(("seeds",), f"{value!r}: {hi} is not a seed (an integer 0..{SEED_MAX})")
        if hi - lo + 1 > MAX_CELLS:  # counted, never listed
            raise w.error(("seeds",), f"{value!r}: {_too_many(hi - lo + 1)}")
        seeds = list(range(lo, hi + 1))
    elif isinstance(value, list) and value:
        if len(value) > MAX_CELLS:
            raise w.error(("seeds",), _too_many(len(value)))
        seeds = value
    else:
        raise w.error(("seeds",), f"{value!r} must be a list of seeds such as [0, 1, 2] or a range such as \"0..9\"")
    for s in seeds:
        if not is_seed(s):
            raise w.error(("seeds",), f"{s!r} is not a seed (an integer 0..{SEED_MAX})")
    if len(set(seeds)) != len(seeds):
        raise w.error(("seeds",), "a seed is listed twice")
    return list(seeds)


def _settings(value: Any, w: _Where) -> list[GridSetting]:
    if not isinstance(value, list) or not value or not all(isinstance(s, dict) for s in value):
        raise w.error(("settings",), "must be one or more [[settings]] tables, each with a label and a spec")
    out: list[GridSetting] = []
    for i, s in enumerate(value):
        for key in s:
            if key not in SETTING_KEYS:
                raise w.error(("settings", i, key), f"unknown key; a setting has {', '.join(SETTING_KEYS)} "
                              "(protocol fields go in [protocol])")
        for key in ("label", "spec"):
            if not isinstance(s.get(key), str) or not s[key].strip():
                raise w.error(("settings", i, key) if key in s else ("settings", i),
                              f"{'missing' if key not in s else repr(s[key]) + ' is not a'} "
                              f"{'label (text naming the setting)' if key == 'label' else 'agent spec such as openai:gpt-5.4-mini or random'}")
        label = s["label"].strip()
        if "|" in label or "=" in label:
            raise w.error(("settings", i, "label"), f"{label!r}: '|' and '=' are kept for the varying fields in expanded labels")
        if any(o.label == label for o in out):
            raise w.error(("settings", i, "label"), f"{label!r} is used by another setting; labels must differ")
        for key in ("experience", "reflect_every"):
            if key in s:  # each run's id names the library it starts from, which the cells before it change
                raise w.error(("settings", i, key), "an experience library is not played in a batch yet: a cell's "
                              "run id is fixed when the grid is planned, but the library it starts from is changed "
                              "by the cells before it; play such runs with `workstation run --experience DIR` "
                              "(docs/experience.md)")
        out.append(GridSetting(label, s["spec"].strip(), {k: s[k] for k in OPTION_KEYS if k in s}))
    return out


def _axes(value: Any, w: _Where) -> dict[str, list[Any]]:
    from workstation.game.protocol import SETTING

    if not isinstance(value, dict):
        raise w.error(("protocol",), "must be a table: [protocol] with one key per protocol field")
    axes: dict[str, list[Any]] = {}
    known = [*SETTING, *[k for k in ALE_KEYS if k not in SETTING]]
    for key, v in value.items():
        if key not in known:
            raise w.error(("protocol", key), f"unknown protocol field; known: {', '.join(known)}")
        values = v if isinstance(v, list) else [v]
        if not values:
            raise w.error(("protocol", key), "an empty list; give one value or a list of values")
        for item in values:
            if isinstance(item, (list, dict)):
                raise w.error(("protocol", key), f"{item!r}: each value must be a number, text or true/false")
        if len({repr(x) for x in values}) != len(values):
            raise w.error(("protocol", key), "a value is listed twice")
        if key in ALE_KEYS and key not in SETTING:
            for item in values:
                if not isinstance(item, int) or isinstance(item, bool) or item < 0:
                    raise w.error(("protocol", key), f"{item!r}: the ALE {key} is a whole number 0 or more")
        axes[key] = values
    return axes


def _limits(value: Any, w: _Where) -> dict[str, int]:
    from workstation.run.agents.registry import PROVIDER_KINDS

    if not isinstance(value, dict):
        raise w.error(("limits",), "must be a table: [limits] with provider = runs at once")
    for key, v in value.items():
        if key not in PROVIDER_KINDS:
            raise w.error(("limits", key), f"unknown provider; known: {', '.join(PROVIDER_KINDS)}")
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise w.error(("limits", key), f"{v!r} must be a whole number of runs at once, 1 or more")
    return dict(value)


# -- expanding --------------------------------------------------------------------
def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _spec_value(key: str, value: Any) -> Any:
    from workstation.game.protocol import SETTING

    s = SETTING.get(key)
    if s is not None and s.type is not str and s.type not in (int, float, bool) and not isinstance(value, str):
        return str(value)
    return value


def ale_variants(game: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ALE modes and difficulties a game's ROM offers (read from the ROM, nothing run)."""
    from workstation.game.clock import game_variants

    return game_variants(game)


def _expand(grid: Grid, w: _Where, out: str | None) -> list[GridCell]:
    from workstation.game.protocol import SETTING
    from workstation.run.options import SpecError, spec_from_values

    for key in ALE_KEYS:
        if key in grid.axes and key not in SETTING:
            for game in grid.games:
                offered = ale_variants(game)[ALE_KEYS.index(key)]
                bad = [v for v in grid.axes[key] if v not in offered]
                if bad:
                    raise w.error(("protocol", key), f"{game} has no {key} {bad[0]}; it offers "
                                  f"{', '.join(map(str, offered))}")
    keys = list(grid.axes)
    combos = [dict(zip(keys, c)) for c in itertools.product(*(grid.axes[k] for k in keys))]
    varied = grid.varied
    cells: list[GridCell] = []
    for i, setting in enumerate(grid.settings):
        for combo in combos:
            proto = {ALE_FIELDS.get(k, k): v for k, v in combo.items() if ALE_FIELDS.get(k, k) in SETTING}
            values = {"agent": setting.spec, "game": grid.games[0], "seed": grid.seeds[0],
                      **setting.options, **{k: _spec_value(k, v) for k, v in proto.items()}}
            if out is not None:
                values["out"] = out
            try:
                base_spec = spec_from_values(values)
            except SpecError as e:
                f = e.field or ""
                f = ALE_KEY_OF.get(f, f)
                path = (("protocol", f) if f in proto or f in ALE_KEYS else ("settings", i, f) if f in setting.options
                        else ("settings", i, "spec") if f == "agent" else ("settings", i))
                others = [f"{k}={_text(combo[k])}" for k in varied if k != f]
                shown = f" (with {', '.join(others)})" if path[0] == "protocol" and others else ""
                raise w.error(path, f"{e}{shown}") from None
            label = setting.label + "".join(f"|{k}={_text(combo[k])}" for k in varied)
            for game in grid.games:
                for seed in grid.seeds:
                    spec = replace(base_spec, game=game, seed=seed)
                    cells.append(GridCell(label, setting.label, game, seed, setting.spec, dict(setting.options),
                                      dict(combo), {k: combo[k] for k in varied},
                                      {k: combo[k] for k in ALE_KEYS if k in combo and k not in SETTING}, spec))
    return cells
