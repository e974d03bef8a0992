"""`workstation ls [DIR]`: the recordings under a directory as a table, filtered, newest first."""

from __future__ import annotations

import argparse
import json
from typing import Any

from workstation.base.errors import UserError
from workstation.base.locations import RECORDINGS
from workstation.base.text_table import text_table

COLUMNS = ("game", "agent", "seed", "score", "turns", "state", "changed", "date", "run id", "path")
AGENT_WIDTH = 32


def register(sub: Any) -> None:
    p = sub.add_parser("ls", help="list the recordings under a directory (game, agent, seed, score, state, run id)",
                       description=f"""List the recordings under DIR (nested ones too), newest first, as a table.
                                   Filters combine; an index cache of yours (never inside DIR: $XDG_CACHE_HOME/
                                   workstation/index) keeps later listings fast and is checked against every
                                   recording's files, so it is never out of date. A recording edited since it was written
                                   (its manifest or turns against their digests, its summary against its turns) is
                                   listed as damaged, never complete; the frames are not read (`workstation verify`
                                   checks them). The 'changed' column
                                   marks runs a person changed (counts per kind: {_legend()}); a changed run has its
                                   own run id.""")
    p.add_argument("dir", nargs="?", default=RECORDINGS, metavar="DIR",
                   help=f"directory holding recordings (default {RECORDINGS}/)")
    p.add_argument("--game", default=None, help="only this game (key, e.g. breakout)")
    p.add_argument("--agent", default=None, help="only this agent: a spec (openai:gpt-5.1) or a kind (openai, random)")
    p.add_argument("--seed", type=int, default=None, help="only this seed")
    p.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                   help="only runs whose protocol has this setting, e.g. frames=900 or memory=append (repeatable)")
    p.add_argument("--id", default=None, metavar="PREFIX", help="only runs whose run id starts with PREFIX")
    state = p.add_mutually_exclusive_group()
    state.add_argument("--complete", action="store_true", help="only complete runs")
    state.add_argument("--incomplete", action="store_true", help="only runs that stopped, were killed or still run")
    state.add_argument("--changed", action="store_true", help="only runs changed by hand")
    state.add_argument("--plain", action="store_true", help="only runs not changed by hand")
    state.add_argument("--state", choices=["complete", "stopped", "unfinished", "damaged", "unreadable"],
                       default=None, help="only runs in this state (damaged: its manifest or turns differ from their "
                       "digests, or its summary contradicts its turns; `workstation verify` checks the frames too)")
    p.add_argument("--json", action="store_true", help="one JSON object per recording instead of the table")
    p.set_defaults(func=run)


def _legend() -> str:
    from workstation.store.changes import legend

    return legend()


def _settings(pairs: list[str]) -> dict[str, str]:
    from workstation.game.protocol import SETTING

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--setting {pair!r} is not KEY=VALUE; e.g. --setting frames=900")
        key = key.strip().replace("-", "_")  # max-actions as the flag spells it is max_actions
        if key not in SETTING:  # a key no manifest has would list nothing, silently
            raise UserError(f"--setting {pair!r}: unknown protocol setting {key!r}; known: {', '.join(SETTING)}")
        out[key] = value.strip()
    return out


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _plays_its_agents_plans(path: object) -> bool:
    from workstation.run.hand_check import counts_as_plain
    from workstation.store.recording import Recording
    from workstation.store.records import RecordingError

    try:
        return counts_as_plain(Recording(str(path)))
    except RecordingError:
        return False


def run(args: argparse.Namespace) -> int:
    from workstation.game.seed import check_seed
    from workstation.store.changes import mark
    from workstation.store.index import Index, select
    from workstation.store.records import RecordingError

    settings = _settings(args.setting)  # every filter checked before the index cache is touched
    if args.seed is not None:
        check_seed(args.seed)
    try:
        index = Index(args.dir)
    except RecordingError as e:
        raise UserError(f"{e}; pass a directory of recordings") from None
    complete = True if args.complete else False if args.incomplete else None
    entries = select(index.entries(), game=args.game, agent=args.agent, seed=args.seed,
                     settings=settings, state=args.state, complete=complete, run_id=args.id)
    if args.incomplete:  # stopped, killed or still running: a damaged or unreadable run is none of these
        entries = [e for e in entries if e.state in ("stopped", "unfinished")]
    if args.changed or args.plain:
        entries = [e for e in entries if e.changed == bool(args.changed) and (args.changed or e.error is None)]
    if args.plain:  # plain only when each turn played its agent's plan (workstation.run.hand_check)
        entries = [e for e in entries if _plays_its_agents_plans(index.path_of(e))]
    if args.json:
        for entry in entries:
            print(json.dumps({**entry.to_json(), "path": str(index.path_of(entry))}))
        return 0
    rows = [COLUMNS]
    for entry in entries:
        agent = entry.agent or "-"
        if len(agent) > AGENT_WIDTH:
            agent = agent[: AGENT_WIDTH - 1] + "…"
        rows.append((_cell(entry.game), agent, _cell(entry.seed), _cell(entry.score), _cell(entry.turns), entry.state,
                     mark(entry.changes), entry.date or "-", (entry.run_id or "-")[:16], str(index.path_of(entry))))
    print("\n".join(text_table(rows, rules=[0])))
    print(f"{len(entries)} recording{'s' if len(entries) != 1 else ''}")
    return 0
