"""`workstation report`'s numbers and output paths, checked before anything is read, computed or printed.

A bad ``--bootstrap-seed`` would otherwise surface as numpy's error after the tables are built, and a bad
``--md`` after the whole report was printed. An output file is refused when its directory does not exist
(none is made: the check ``export -o`` uses, ``workstation.store.local_paths``), when it is a directory or a
batch's grid, and when it is one of the report's inputs or anywhere inside one, at any depth
(``refuse_inside_inputs``: writing there would change what was reported on).
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

from workstation.base.errors import UserError
from workstation.game.seed import check_seed
from workstation.store.local_paths import (
    check_out_file,
    refuse_file_inside_artifacts,
    refuse_inside_artifacts,
    refuse_inside_inputs,
    refuse_uri,
)


def check_report_args(args: argparse.Namespace) -> None:
    check_seed(args.bootstrap_seed, "--bootstrap-seed")
    if args.paper and args.json:
        raise UserError("--paper writes Markdown (--md) and PNGs (--plots), no JSON: drop --json")
    inputs = _input_files(args.results)
    files: dict[Path, str] = {}
    for flag in ("--json", "--md"):
        path = getattr(args, flag[2:])
        if path is None:
            continue
        out = check_out_file(path, flag, "report writes a local file").resolve()
        if out in files:
            raise UserError(f"{files[out]} and {flag} name the same file {path}; give each its own")
        files[out] = flag
        if out.is_file() and _is_grid(out):
            whose = "the batch's grid" if out in inputs else "a batch grid"
            raise UserError(f"{flag} {path} is {whose}; choose another file")
        refuse_inside_inputs(path, args.results, flag, "the report")  # any input, at any depth, links resolved
        refuse_file_inside_artifacts(path, flag, "report")  # a batch, a QA set, a session...: never written into
    if args.plots is not None:
        _check_plots_dir(args.plots)
        refuse_inside_inputs(args.plots, args.results, "--plots", "the report")
        refuse_inside_artifacts(args.plots, "--plots", "report")


def _input_files(results: list[str]) -> set[Path]:
    """The files the report reads or sits on: a CSV given, and every file at the top of a directory given."""
    from workstation.studies.batch.out_uri import is_remote

    found: set[Path] = set()
    for given in results:
        if is_remote(given):
            continue
        p = Path(given).expanduser()
        try:
            if p.is_file():
                found.add(p.resolve())
            elif p.is_dir():
                found.update(q.resolve() for q in p.iterdir() if q.is_file())
        except OSError:  # an unreadable input is the reader's to report, with its own line
            continue
    return found


def _is_grid(path: Path) -> bool:
    if path.suffix.lower() != ".toml":
        return False
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return "settings" in data or "games" in data


def _check_plots_dir(plots: str) -> None:
    refuse_uri(plots, "--plots", "report writes its PNGs to a local directory")
    p = Path(plots).expanduser()
    if p.exists() and not p.is_dir():
        raise UserError(f"--plots {plots} is a file; give a directory for rank_heatmap.png and scores.png")
    parent = p.parent if str(p.parent) else Path(".")
    if not p.exists() and not parent.is_dir():
        raise UserError(f"cannot make --plots {plots}: the directory {parent} does not exist; make it first or "
                        "choose another place")
