"""Default places on disk: where recordings, batches and question sets go unless told otherwise."""

from __future__ import annotations

RECORDINGS = "recordings"  # one directory per run
BATCHES = "batches"  # one directory per batch: runs/, results.csv, results.jsonl
QA = "qa"  # question sets and their evaluations
