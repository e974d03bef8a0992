"""What ``export --inspect`` reads: recordings, batch directories and session directories, as runs grouped
by setting and game. Every run is opened and checked (the fast integrity check) before anything is written;
a run changed by hand is left out unless asked for, and then kept in a group of its own, marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workstation.base.errors import UserError
from workstation.store.recording import DamagedRecording, Recording

CHANGED = "changed by hand"


@dataclass
class FoundRun:
    rec: Recording
    setting: str
    source: str


@dataclass
class Found:
    """The runs to export, and the changed ones left out (paths) when ``--include-changed`` was not given."""

    runs: list[FoundRun] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def groups(self) -> dict[tuple[str, str], list[FoundRun]]:
        """Runs by (setting, game), each group in seed order then path; a changed run's setting is marked."""
        out: dict[tuple[str, str], list[FoundRun]] = {}
        for r in self.runs:
            setting = r.setting + (f" [{CHANGED}]" if r.rec.interventions else "")
            out.setdefault((setting, str(r.rec.manifest_record.game)), []).append(r)
        for runs in out.values():
            runs.sort(key=lambda r: (r.rec.manifest_record.seed or 0, str(r.rec.path)))
        return out


def _loose_setting(rec: Recording) -> str:
    """A recording's setting when no batch or session names one: its agent spec, then what its protocol changes
    from the paper's and its prompt pack when not the default, as a batch labels them (``gpt|feedback=false``)."""
    from workstation.game.protocol import Protocol, ProtocolError

    m = rec.manifest_record
    label = m.agent_spec or "unknown"
    try:
        changed = Protocol.from_json(m.protocol).changed()
    except (ProtocolError, TypeError, ValueError):
        changed = {}
    parts = [label, *(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in changed.items())]
    if m.prompt_pack.get("name") not in (None, "default"):
        parts.append(f"pack={m.prompt_pack.get('name')}")
    return "|".join(parts)


def _batch(path: Path) -> list[tuple[Path, str]]:
    from workstation.studies.batch import results
    from workstation.studies.batch.grid import load_grid
    from workstation.studies.batch.jobs import jobs_of

    jobs = jobs_of(load_grid(path / "grid.toml"))
    rows = results.collect(path, jobs)  # nothing is written into an input
    out = []
    for row in rows:
        stored = str(row.get("path") or "")
        if str(row.get("stopped") or "").startswith("unreadable:"):
            raise DamagedRecording(f"damaged recording {stored} in batch {path}: "
                                   f"{row['stopped'][len('unreadable: '):]}")
        out.append((Path(stored), str(row.get("setting"))))
    if not out:
        raise UserError(f"{path}: the batch has no recordings under runs/ yet; run it first (workstation batch)")
    return out


def _session(path: Path) -> list[tuple[Path, str]]:
    from workstation.store.records import check_fields, read_json
    from workstation.studies.session import SESSION_FIELDS, SESSION_FILE, STEP_FIELDS, SessionStep

    f = path / SESSION_FILE
    try:
        data = check_fields(read_json(f), SESSION_FIELDS, str(f))
        steps = [SessionStep(**check_fields(st, STEP_FIELDS, f"{f} step {i}")) for i, st in enumerate(data["steps"])]
    except (ValueError, KeyError, TypeError) as e:
        raise UserError(f"{f} cannot be read as a session ({e})") from None
    participant = str((data.get("settings") or {}).get("participant") or "?")
    out = [(path / st.recording, f"human:{participant}") for st in steps
           if st.done and not st.practice and st.recording]
    if not out:
        raise UserError(f"{path}: the session has no finished scored runs yet; nothing to export")
    return out


def _folder(path: Path) -> list[tuple[Path, str]]:
    from workstation.store.index import Index

    entries = Index(path).entries()  # nothing is written into an input (the index cache is the user's)
    if not entries:
        raise UserError(f"{path}: no recording, batch or session here (no manifest.json, grid.toml, session.json, "
                        "nor recordings under it); pass one of those")
    return [(path / e.path, "") for e in entries]


def find(sources: list[str], include_changed: bool = False) -> Found:
    """Every run the sources name, opened and checked; a damaged one raises (exit 1), naming it."""
    from workstation.store.local_paths import refuse_uri

    seen: set[Path] = set()
    found = Found()
    for text in sources:
        refuse_uri(text, "", "export reads local recordings, batches and sessions")
        p = Path(text)
        if not p.exists():
            raise UserError(f"{p}: no such recording, batch or session directory")
        if (p / "manifest.json").is_file() or p.is_file():
            pairs = [(p, "")]
        elif (p / "grid.toml").is_file() and (p / "runs").is_dir():
            pairs = _batch(p)
        elif (p / "session.json").is_file():
            pairs = _session(p)
        else:
            pairs = _folder(p)
        for path, setting in pairs:
            key = path.resolve()
            if key in seen:
                continue
            seen.add(key)
            rec = Recording(path).require_sound()  # a damaged recording: named, exit 1, nothing written
            if rec.manifest_record.kind == "match":
                raise UserError(f"{path} is a two-player match: matches are not exported as Inspect logs (one log "
                                "names one model; docs/inspect.md); pass one-player recordings, batches or sessions")
            if rec.interventions and not include_changed:
                found.left_out.append(str(path))
                continue
            found.runs.append(FoundRun(rec, setting or _loose_setting(rec), text))
    if not found.runs:
        n = len(found.left_out)
        runs = "the one run was changed by hand" if n == 1 else f"all {n} runs were changed by hand"
        why = f"{runs}; add --include-changed to export {'it' if n == 1 else 'them'}, marked" if n else "no runs found"
        raise UserError(f"nothing to export: {why}")
    return found
