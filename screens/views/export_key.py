"""The export key of the open and compare screens: write recordings as one MP4 in a thread worker,
with a notice when it starts and one when it is done (or failed); the screen never blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.screen import Screen

from workstation.base.words import plural


def export_in_background(screen: Screen[Any], paths: list[Path], out: Path) -> None:
    """Export ``paths`` (side by side when several) to ``out``; failures are a notice, never a crash."""
    runs = f"{len(paths)} runs side by side " if len(paths) > 1 else ""
    screen.notify(f"exporting {runs}to {out} ...")

    def work() -> None:
        from workstation.studies.export.files import export

        try:
            n, _, _ = export(list(paths), out)
        except Exception as e:  # any failure is a notice, never a crash of the view
            screen.app.call_from_thread(screen.notify, f"export failed: {e}", severity="error")
            return
        of = f" of {len(paths)} runs" if len(paths) > 1 else ""
        screen.app.call_from_thread(screen.notify, f"exported {plural(n, 'frame')}{of} to {out}")

    screen.run_worker(work, thread=True, group="export")
