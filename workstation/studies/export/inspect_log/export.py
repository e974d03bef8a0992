"""``workstation export SOURCE... --inspect OUT``: check everything, build every log in memory, then write.

Bad input (no such source, OUT a file or inside a source, an unknown format) is one line and exit 2; a
damaged recording is named and exit 1; in both cases nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.game.protocol import Protocol
from workstation.store.atomic import write_atomic
from workstation.store.recording import Recording
from workstation.studies.export.inspect_log.log import FORMATS, Log, eval_bytes, json_bytes, make_log
from workstation.studies.export.inspect_log.sample import make_sample
from workstation.studies.export.inspect_log.sources import Found, find
from workstation.studies.export.outside import check_outside

SUFFIXES = tuple(f".{f}" for f in FORMATS)


@dataclass
class Written:
    paths: list[Path] = field(default_factory=list)
    runs: int = 0
    left_out: list[str] = field(default_factory=list)
    bytes: int = 0


def check_out(out: Path, sources: list[str]) -> Path:
    """OUT as a directory to write logs into (or one ``.eval``/``.json`` file): not inside (or equal to) any
    source; a directory not a file, a file not a directory."""
    from workstation.store.local_paths import check_out_file, refuse_uri

    refuse_uri(out, "--inspect", "export writes Inspect logs to a local directory")
    single = out.suffix.lower() in SUFFIXES
    if single:
        check_out_file(out, "--inspect", "export writes an Inspect log to a local file")
    elif out.exists() and not out.is_dir():
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
    from workstation.store.local_paths import refuse_file_inside_artifacts, refuse_inside_artifacts

    if single:  # a batch, a QA set, a session...: never written into
        refuse_file_inside_artifacts(out, "--inspect", "export")
    else:
        refuse_inside_artifacts(out, "--inspect", "export")
    return out


# the protocol settings that decide the game played and the scale of its score: a baseline counts only for runs
# that agree on all of them (a 90-frame run is not measured against 600-frame random runs). The others (memory,
# history, feedback, guide, max actions, clock) change what a model is told or how it plans, not the game
BASELINE_PROTOCOL = ("frames", "repeat", "start", "game_mode", "game_difficulty")
BaselineKey = tuple[str, tuple[tuple[str, Any], ...]]


def baseline_key(rec: Recording) -> BaselineKey:
    """The game and the protocol settings a run's baseline must share with it (``BASELINE_PROTOCOL``)."""
    m = rec.manifest_record
    proto = m.protocol if isinstance(m.protocol, dict) else {}
    paper = Protocol().to_json()
    return str(m.game), tuple((k, proto.get(k, paper.get(k))) for k in BASELINE_PROTOCOL)


def baselines(found: Found) -> dict[BaselineKey, tuple[float | None, float | None]]:
    """Per game and protocol (``baseline_key``), the mean score of the plain random runs and of the human runs
    (agent ``human``, or a session's setting ``human:ID``, as ``report`` takes them) among those exported."""
    by: dict[BaselineKey, dict[str, list[float]]] = {}
    for r in found.runs:
        if r.rec.interventions:
            continue
        spec = (r.rec.manifest_record.agent_spec or "").split(":", 1)[0]
        kind = "human" if spec == "human" or r.setting.lower().startswith("human") else spec
        if kind in ("random", "human"):
            by.setdefault(baseline_key(r.rec), {}).setdefault(kind, []).append(r.rec.outcome().total_reward)
    return {key: (sum(d["random"]) / len(d["random"]) if d.get("random") else None,
                  sum(d["human"]) / len(d["human"]) if d.get("human") else None) for key, d in by.items()}


def build(found: Found) -> Iterator[Log]:
    """The logs, one setting and game at a time (each run's frame file closed once its sample is made)."""
    base = baselines(found)
    for (setting, game), runs in found.groups().items():
        outs = []
        for i, r in enumerate(runs, 1):
            outs.append(make_sample(r.rec, game, i, setting, base.get(baseline_key(r.rec), (None, None))))
            r.rec.close()
        yield make_log(game, setting, outs, {"changed_by_hand": any(r.rec.interventions for r in runs)})


def export_inspect(sources: list[str], out: Path, fmt: str | None = None, include_changed: bool = False) -> Written:
    """Write the logs of ``sources`` into the directory ``out`` (made if missing), or into the one file ``out``
    when it ends in .eval or .json (the sources must then make one log). ``fmt``: eval (default) or json."""
    out = Path(out)
    suffix = out.suffix.lower()
    single = suffix in SUFFIXES
    if fmt is not None and fmt not in FORMATS:
        raise UserError(f"--format {fmt!r} is unknown for --inspect: use {' or '.join(FORMATS)}")
    if single and fmt is not None and f".{fmt}" != suffix:
        raise UserError(f"--inspect {out} ends in {suffix} but --format says {fmt}; make them agree")
    fmt = suffix[1:] if single else (fmt or "eval")
    if not sources:
        raise UserError("give at least one recording, batch or session directory to export")
    out = check_out(out, sources)
    found = find(sources, include_changed)
    # a batch or session may hold (or link to) recordings elsewhere: OUT is inside none of them either
    check_outside(out, [*(r.rec.path for r in found.runs), *found.left_out], "--inspect")
    n_logs = len(found.groups())
    if single and n_logs != 1:
        raise UserError(f"--inspect {out}: these runs make {n_logs} logs (one per setting and game); give a "
                        "directory for them")
    # every log made (each prompt rebuilt and checked) before anything is written; only the written bytes are
    # kept, so memory grows with the compressed logs, not with their JSON
    data = [(log.name, eval_bytes(log) if fmt == "eval" else json_bytes(log)) for log in build(found)]
    done = Written(runs=len(found.runs), left_out=found.left_out)
    try:
        if not single:
            out.mkdir(parents=True, exist_ok=True)
        for name, blob in data:
            path = out if single else out / f"{name}.{fmt}"
            write_atomic(path, blob)
            done.paths.append(path)
            done.bytes += len(blob)
    except PermissionError as e:
        raise UserError(f"cannot write to {out}: {e.strerror}; choose another --inspect directory") from None
    return done
