"""``workstation import atari-bench RUN_DIR... [--out DIR] [--game G]``.

One line per run: "identical" or the first difference, and the new recording.
Exit 0 when every run is identical, 1 when any differs, 2 on bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.base.locations import RECORDINGS


def register(sub: Any) -> None:
    p = sub.add_parser("import", help="import runs recorded by another harness (re-executed and compared)")
    kinds = p.add_subparsers(dest="import_kind", metavar="KIND")
    kinds.required = True
    a = kinds.add_parser("atari-bench", help="runs of the public AtariBench harness (summary.json + turns.jsonl)",
                         description="Re-execute runs of the public AtariBench harness (each directory's summary.json "
                         "and turns.jsonl) in the emulator, record each as a workstation recording and say per run "
                         "whether it is identical or where it first differs (exit 0 all identical, 1 any differs).")
    a.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="harness run directories")
    a.add_argument("--out", default=RECORDINGS, help=f"parent directory of the new recordings (default {RECORDINGS}/)")
    a.add_argument("--game", default=None, help="the game, when the run directory does not say (runs/<game>/...)")
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workstation.run.importers.atari_bench import check_run, import_run
    from workstation.run.options import check_out
    from workstation.store.local_paths import refuse_uri

    for d in args.run_dirs:
        refuse_uri(d, "", "import reads a local run directory")
    check_out(args.out, "import")  # a URI, a file, an existing recording: refused before anything is read
    from workstation.store.local_paths import refuse_inside_artifacts

    refuse_inside_artifacts(args.out, "--out", "import", holds_recordings=True)  # a batch's runs/, a QA set...: never written into
    for d in args.run_dirs:
        if _inside(Path(args.out), Path(d)):
            raise UserError(f"--out {args.out} is inside the run directory {d}, an input; import never writes into "
                            "what it reads: choose a directory outside it", file=args.out)
    dirs = [Path(d) for d in args.run_dirs]
    for d in dirs:  # refuse bad input (a run, its game, its settings) before importing anything
        check_run(d, args.game)
    status = 0
    for d in dirs:
        result = import_run(d, Path(args.out), args.game)
        print(result.line(), flush=True)
        if not result.identical:
            status = 1
    return status


def _inside(out: Path, source: Path) -> bool:
    """Whether ``out`` is ``source`` or lies inside it at any depth, symlinks and ``..`` resolved on both sides."""
    try:
        target, src = out.expanduser().resolve(), source.expanduser().resolve()
    except (OSError, RuntimeError):
        return False
    return src.is_dir() and (target == src or target.is_relative_to(src))
