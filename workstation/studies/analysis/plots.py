"""PNG figures for the report: the rank heatmap and score bars (matplotlib, an optional extra)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError

if TYPE_CHECKING:
    from workstation.studies.analysis.report import Report


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UserError("--plots needs matplotlib, which is not installed; "
                        "run `.venv/bin/pip install -e '.[plots]'` in the checkout (or drop --plots)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_plots(report: Report, directory: str | Path) -> list[Path]:
    plt = _pyplot()
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot make {out} ({e.strerror}); pick a writable --plots directory") from None
    settings = sorted(report.results.settings, key=lambda s: (report.average_rank[s][0], s))
    games = report.results.games
    return [_heatmap(plt, report, settings, games, out / "rank_heatmap.png"),
            _bars(plt, report, settings, games, out / "scores.png")]


def _heatmap(plt: Any, report: Report, settings: list[str], games: list[str], path: Path) -> Path:
    import numpy as np

    grid = np.array([[report.ranks[g].get(s, np.nan) for s in settings] for g in games], dtype=float)
    # wide enough for the title and the labels whatever the count (one setting clipped the title)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 + 0.9 * len(settings)), max(2.4, 1.2 + 0.38 * len(games))))
    im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(len(settings)), [f"{s}\n(avg {report.average_rank[s][0]:.2f})" for s in settings],
                  rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(games)), games, fontsize=8)
    for i in range(len(games)):
        for j in range(len(settings)):
            if not math.isnan(grid[i, j]):
                light = grid[i, j] <= (np.nanmin(grid) + np.nanmax(grid)) / 2  # yellow end of viridis_r
                ax.text(j, i, f"{grid[i, j]:g}", ha="center", va="center", fontsize=7,
                        color="black" if light else "white")
    fig.colorbar(im, ax=ax, label="rank (1 = best)")
    ax.set_title("Rank per game (settings by average rank)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _bars(plt: Any, report: Report, settings: list[str], games: list[str], path: Path) -> Path:
    cols = min(4, len(games))
    rows = math.ceil(len(games) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows), squeeze=False)
    for k, g in enumerate(games):
        ax = axes[k // cols][k % cols]
        here = [report.cells[(s, g)] if (s, g) in report.cells else None for s in settings]
        means = [c.mean if c else 0 for c in here]
        errs = [0 if c is None or math.isnan(c.se) else c.se for c in here]
        colors = ["0.6" if s == report.baseline else f"C{i % 10}" for i, s in enumerate(settings)]
        ax.bar(range(len(settings)), means, yerr=errs, color=colors, capsize=2)
        ax.set_title(f"{g} ({report.separability[g].label})", fontsize=9)
        ax.set_xticks(range(len(settings)), settings, rotation=45, ha="right", fontsize=6)
        ax.tick_params(axis="y", labelsize=7)
    for k in range(len(games), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle("Mean score +- SE per game (grey = baseline; title = separability)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
