"""Results rows for the report: a batch's results.csv, or any CSV with setting, game, seed, score.

Only complete runs are analysed: a row whose ``complete`` column is false is counted and left
out. Columns beyond the known ones that name a protocol field (a ``Protocol`` field, the ALE
``mode`` / ``difficulty``, or any ``protocol.*`` column) describe the setting; the report uses
them to find ablation pairs.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field, fields
from pathlib import Path

from workstation.base.errors import UserError

REQUIRED = ("setting", "game", "seed", "score")
COUNTS = ("lives_lost", "turns", "invalid_turns", "failed_turns", "calls",
          "input_tokens", "output_tokens", "reasoning_tokens")
NUMBERS = COUNTS + ("cost_usd", "wall_s", "stagnation")
CONDITIONS = ("budget", "start", "prompt_pack")  # what a setting was played under; compared across sources
KNOWN = set(REQUIRED) | set(NUMBERS) | {"run_id", "complete", "by_hand", "budget", "prompt_pack"}
PLAIN_MARKS = ("", "-", "false", "no", "0")  # a ``by_hand`` cell of a run nobody changed


def protocol_names() -> set[str]:
    from workstation.game.protocol import Protocol

    return {f.name for f in fields(Protocol)} | {"mode", "difficulty"}


@dataclass
class Row:
    line: int
    setting: str
    game: str
    seed: str
    score: float
    run_id: str = ""
    values: dict[str, float] = field(default_factory=dict)  # optional numeric columns present
    protocol: dict[str, str] = field(default_factory=dict)  # protocol-field columns present
    conditions: dict[str, str] = field(default_factory=dict)  # budget, start, prompt_pack when given


@dataclass
class Results:
    source: Path
    rows: list[Row]
    columns: list[str]
    incomplete: int = 0  # rows left out because complete is false
    batch_dir: Path | None = None  # the batch directory, when one was given
    changed: int = 0  # rows left out because a person changed the run by hand (``by_hand`` column)
    damaged: int = 0  # rows left out because their recording fails ``verify --quick``

    def has(self, column: str) -> bool:
        return column in self.columns

    @property
    def settings(self) -> list[str]:
        return sorted({r.setting for r in self.rows})

    @property
    def games(self) -> list[str]:
        return sorted({r.game for r in self.rows})


def _truth(text: str) -> bool | None:
    t = text.strip().lower()
    if t in ("true", "1", "yes"):
        return True
    if t in ("false", "0", "no"):
        return False
    return None


def _number(name: str, text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{where}: {name} {text!r} is not a number; fix or remove that row") from None
    if not math.isfinite(value):
        raise UserError(f"{where}: {name} {text!r} is not a finite number; fix or remove that row")
    return value


def _check_seed_and_game(seed: str, game: str, where: str) -> None:
    """A row's seed by the one seed rule (``workstation.game.seed``) and its game one of the games; else one line
    naming the CSV line (exit 2). The seed stays the CSV's text (the rows' keys and messages keep it as written)."""
    from workstation.game.games import is_atari_game
    from workstation.game.seed import seed_problem

    why = seed_problem(int(seed) if seed.lstrip("+-").isdigit() else seed, "seed")
    if why:
        raise UserError(f"{where}: {why}; fix or remove that row")
    if not is_atari_game(game):
        raise UserError(f"{where}: unknown game {game!r}, no Atari game (`workstation games` lists the workstation's, "
                        "e.g. breakout); fix or remove that row")


def resolve(path: str | Path) -> tuple[Path, Path | None]:
    """The CSV to read and the batch directory (when a directory was given)."""
    p = Path(path)
    if p.is_dir():
        csv_path = p / "results.csv"
        if not csv_path.is_file():
            raise UserError(f"{p} has no results.csv; pass a batch directory or a results CSV file")
        return csv_path, p
    if not p.exists():
        raise UserError(f"{p} does not exist; pass a batch directory or a results CSV file")
    return p, (p.parent if (p.parent / "runs").is_dir() else None)


def load_results(path: str | Path, include_changed: bool = False) -> Results:
    """The complete runs of a results CSV; runs changed by hand are left out (and counted) unless included."""
    csv_path, batch_dir = resolve(path)
    try:
        text = csv_path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise UserError(f"{csv_path} cannot be read ({reason}); pass a results CSV file") from None
    try:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise UserError(f"{csv_path} is empty; a results CSV needs a header with {', '.join(REQUIRED)}")
        header = [h.strip() for h in header]
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise UserError(f"{csv_path} line 1: missing column(s) {', '.join(missing)}; "
                            f"a results CSV needs at least {', '.join(REQUIRED)}")
        dupes = sorted({h for h in header if header.count(h) > 1 and h})
        if dupes:
            raise UserError(f"{csv_path} line 1: column(s) {', '.join(dupes)} appear more than once")
        proto_cols = [h for h in header if h not in KNOWN and (h in protocol_names() or h.startswith("protocol."))]
        # `frames` is both a result (frames played) and a protocol field (the budget); it is
        # used as a setting descriptor only when constant within each setting (see ablation)
        if "frames" in header and "frames" not in proto_cols:
            proto_cols.append("frames")
        rows: list[Row] = []
        incomplete = changed = 0
        seen: dict[tuple[str, str, str], int] = {}
        for values in reader:
            line = reader.line_num
            if not any(v.strip() for v in values):
                continue
            where = f"{csv_path} line {line}"
            if len(values) != len(header):
                raise UserError(f"{where}: {len(values)} fields where the header has {len(header)}")
            rec = dict(zip(header, (v.strip() for v in values)))
            if "complete" in rec:
                done = _truth(rec["complete"])
                if done is None:
                    raise UserError(f"{where}: complete {rec['complete']!r} is not true or false")
                if not done:
                    incomplete += 1
                    continue
            if not include_changed and rec.get("by_hand", "").lower() not in PLAIN_MARKS:
                changed += 1
                continue
            for c in ("setting", "game", "seed"):
                if not rec[c]:
                    raise UserError(f"{where}: {c} is empty")
            _check_seed_and_game(rec["seed"], rec["game"], where)
            key = (rec["setting"], rec["game"], rec["seed"])
            if key in seen:
                raise UserError(f"{where}: setting {key[0]!r} game {key[1]!r} seed {key[2]!r} also on line "
                                f"{seen[key]}; each run may appear once")
            seen[key] = line
            row = Row(line, rec["setting"], rec["game"], rec["seed"], _number("score", rec["score"], where),
                      run_id=rec.get("run_id", ""))
            for c in NUMBERS:
                if c in rec and rec[c] != "":
                    row.values[c] = _number(c, rec[c], where)
            for c in proto_cols:
                row.protocol[c] = rec[c]
            for c in CONDITIONS:
                if rec.get(c):
                    row.conditions[c] = rec[c]
            rows.append(row)
    except csv.Error as e:
        raise UserError(f"{csv_path} is not a readable CSV ({e})") from None
    damaged = 0
    if batch_dir is not None:
        check_source_seal(batch_dir)
        rows, damaged, by_hand = _checked_rows(batch_dir, rows, include_changed)
        changed += by_hand
    if not rows:
        extra = f" ({incomplete} incomplete rows left out)" if incomplete else ""
        if damaged:
            extra += f" ({damaged} damaged run{'s' if damaged != 1 else ''} left out)"
        if changed:
            extra += (f" ({changed} run{'s' if changed != 1 else ''} changed by hand left out; "
                      "--include-changed counts them)")
        raise UserError(f"{csv_path} has no complete runs{extra}; nothing to report")
    return Results(csv_path, rows, header, incomplete, batch_dir=batch_dir, changed=changed, damaged=damaged)


def check_source_seal(directory: Path) -> None:
    """A batch or session directory edited by hand since it was sealed: ``DamagedArtifact`` naming the file
    (exit 1). One written before seals (no seal.json) is read as it is."""
    from workstation.store.seal import check_seal

    kind = "session" if (directory / "session.json").exists() else "batch"
    check_seal(directory, kind, what=f"the {kind}", missing_ok=True)


def _checked_rows(batch_dir: Path, rows: list[Row], include_changed: bool) -> tuple[list[Row], int, int]:
    """The rows whose recording under DIR/runs/ is sound, (kept, damaged, changed by hand): a recording that
    fails ``verify --quick`` is left out, as is one whose own record says it was changed by hand (whatever the
    CSV says) unless changed runs are included. A row with no recording there is kept (the CSV is the source)."""
    from workstation.store.integrity import quick_verdict
    from workstation.store.recording import Recording
    from workstation.store.records import RecordingError

    wanted = {r.run_id for r in rows if r.run_id}
    found: dict[str, Recording | None] = {}  # run id -> its recording (None: it cannot be read)
    unreadable: list[str] = []  # the run-id prefixes of recordings whose manifest cannot be read
    runs = batch_dir / "runs"
    for d in sorted(runs.iterdir()) if runs.is_dir() and wanted else []:  # read only: no index cache written
        if d.name.startswith(".") or not (d / "manifest.json").is_file():
            continue
        try:
            rec = Recording(d)
        except RecordingError:  # a batch names a recording GAME-AGENT-sSEED-<the run id's first 8 characters>
            unreadable.append(d.name.rsplit("-", 1)[-1])
            continue
        if rec.run_id in wanted and rec.run_id not in found:
            found[rec.run_id] = rec
    for prefix in unreadable:
        for run_id in wanted:
            if run_id.startswith(prefix) and run_id not in found:
                found[run_id] = None
    kept: list[Row] = []
    damaged = changed = 0
    for row in rows:
        if row.run_id not in found:
            kept.append(row)
            continue
        kept_rec = found[row.run_id]
        try:
            sound = kept_rec is not None and quick_verdict(kept_rec)[0]
        except RecordingError:
            sound = False
        if not sound:
            damaged += 1
        elif kept_rec is not None and kept_rec.interventions and not include_changed:
            changed += 1
        else:
            kept.append(row)
    return kept, damaged, changed


def load_many(paths: list[str | Path], include_changed: bool = False) -> Results:
    """Several sources (batches, sessions, CSVs) as one table; a run may appear in only one of them."""
    resolved = [resolve(p)[0].resolve() for p in paths]
    for i, p in enumerate(resolved):
        if p in resolved[:i]:
            raise UserError(f"{paths[i]} is given twice (as {p}); give each source once")
    parts = [load_results(p, include_changed=include_changed) for p in paths]
    if len(parts) == 1:
        return parts[0]
    rows: list[Row] = []
    seen: dict[tuple[str, str, str], Path] = {}
    columns: list[str] = []
    for part in parts:
        for c in part.columns:
            if c not in columns:
                columns.append(c)
        for r in part.rows:
            key = (r.setting, r.game, r.seed)
            if key in seen:
                raise UserError(f"setting {key[0]!r} game {key[1]!r} seed {key[2]!r} is in both {seen[key]} and "
                                f"{part.source}; report each run once")
            seen[key] = part.source
            rows.append(r)
    dirs = [p.batch_dir for p in parts if p.batch_dir is not None]
    return Results(Path(" + ".join(str(p.source) for p in parts)), rows, columns,
                   sum(p.incomplete for p in parts), batch_dir=dirs[0] if len(dirs) == 1 else None,
                   changed=sum(p.changed for p in parts), damaged=sum(p.damaged for p in parts))


def mixed_conditions(results: Results) -> list[str]:
    """One line per condition (budget, start, prompt pack) under which the settings were not all played alike."""
    out = []
    for c in CONDITIONS:
        by: dict[str, set[str]] = {}
        for r in results.rows:
            if c in r.conditions:
                by.setdefault(r.setting, set()).add(r.conditions[c])
        if len({v for vs in by.values() for v in vs}) > 1:
            shown = "; ".join(f"{s}: {', '.join(sorted(v))}" for s, v in sorted(by.items()))
            name = {"prompt_pack": "prompt packs"}.get(c, c + "s")
            out.append(f"the settings were played under different {name} ({shown}); their scores may not compare")
    return out
