"""Default places on disk: where recordings, batches and question sets go unless told otherwise."""

from __future__ import annotations

from pathlib import Path

RECORDINGS = "recordings"  # one directory per run
BATCHES = "batches"  # one directory per batch: runs/, results.csv, results.jsonl
QA = "qa"  # question sets and their evaluations


def default_pack_dir() -> Path:
    """The default prompt pack: an installed copy ``workstation/_prompts`` if present, else the repo's ``prompts/``."""
    package = Path(__file__).resolve().parent.parent  # workstation/, above base/
    installed = package / "_prompts"
    if (installed / "template.toml").is_file():
        return installed
    return package.parent / "prompts"
