"""``workstation export SOURCE... --inspect OUT``: check everything, build every log in memory, then write.

Bad input (no such source, OUT a file or inside a source, an unknown format) is one line and exit 2; a
damaged recording is named and exit 1; in both cases nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workstation.errors import UserError
from workstation.export.inspect_log.log import FORMATS, Log, eval_bytes, json_bytes, make_log
from workstation.export.inspect_log.sample import make_sample
from workstation.export.inspect_log.sources import Found, find
from workstation.store.atomic import write_atomic


@dataclass
class Written:
    paths: list[Path] = field(default_factory=list)
    runs: int = 0
    left_out: list[str] = field(default_factory=list)
    bytes: int = 0


def check_out_dir(out: Path, sources: list[str]) -> Path:
    """OUT as a directory to write logs into: not a file, not inside (or equal to) any source."""
    from workstation.store.local_paths import refuse_uri

    refuse_uri(out, "--inspect", "export writes Inspect logs to a local directory")
    if out.exists() and not out.is_dir():
        raise UserError(f"--inspect {out}: it is a file; give a directory for the logs (it is made if missing)",
                        file=str(out))
    target = out.resolve()
    for s in sources:
        src = Path(s).resolve()
        if target == src or src in target.parents:
            raise UserError(f"--inspect {out} is inside the input {s}; write the logs somewhere else", file=str(out))
    probe = target
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise UserError(f"--inspect {out}: {probe} is a file, not a directory; choose another place", file=str(out))
    return out


def baselines(found: Found) -> dict[str, tuple[float | None, float | None]]:
    """Per game, the mean score of the plain random runs and of the human runs (agent ``human``, or a session's
    setting ``human:ID``, as ``report`` takes them) among those exported."""
    by: dict[str, dict[str, list[float]]] = {}
    for r in found.runs:
        if r.rec.interventions:
            continue
        spec = (r.rec.manifest_record.agent_spec or "").split(":", 1)[0]
        kind = "human" if spec == "human" or r.setting.lower().startswith("human") else spec
        if kind in ("random", "human"):
            by.setdefault(str(r.rec.manifest_record.game), {}).setdefault(kind, []).append(r.rec.outcome().total_reward)
    return {g: (sum(d["random"]) / len(d["random"]) if d.get("random") else None,
                sum(d["human"]) / len(d["human"]) if d.get("human") else None) for g, d in by.items()}


def build(found: Found) -> list[Log]:
    base = baselines(found)
    logs = []
    for (setting, game), runs in found.groups().items():
        outs = [make_sample(r.rec, game, i, setting, base.get(game, (None, None))) for i, r in enumerate(runs, 1)]
        logs.append(make_log(game, setting, outs, {"changed_by_hand": any(r.rec.interventions for r in runs)}))
    return logs


def export_inspect(sources: list[str], out: Path, fmt: str = "eval", include_changed: bool = False) -> Written:
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r} is unknown for --inspect: use {' or '.join(FORMATS)}")
    if not sources:
        raise UserError("give at least one recording, batch or session directory to export")
    out = check_out_dir(Path(out), sources)
    found = find(sources, include_changed)
    logs = build(found)
    data = [(log, eval_bytes(log) if fmt == "eval" else json_bytes(log)) for log in logs]
    done = Written(runs=len(found.runs), left_out=found.left_out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for log, blob in data:
            path = out / f"{log.name}.{fmt}"
            write_atomic(path, blob)
            done.paths.append(path)
            done.bytes += len(blob)
    except PermissionError as e:
        raise UserError(f"cannot write to {out}: {e.strerror}; choose another --inspect directory") from None
    for r in found.runs:
        r.rec.close()
    return done
