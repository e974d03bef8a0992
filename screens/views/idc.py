"""The IDC screen (``workstation idc --view DIR``): improvement rounds as they stand on disk.

The curve (each round's normalised mean as a bar, the best round and rollbacks
marked), and for the round under the cursor: the skill it played and its diff
from the round before, the diagnosis written after it, the reflector's
notebook, how the reflection ended, and its episodes; ``enter`` on an episode
(or on a round, then on an episode) opens its recording. ``r`` reads the directory again (an IDC still running).
Nothing here plays or reflects: ``workstation.studies.idc.rounds`` does.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from screens.views.run_layout import leave
from workstation.studies.idc import curve as C

BAR = 24  # characters of the longest bar


def skill_diff(before: str | None, after: str | None) -> str:
    """A unified diff of two skills ("" when they are the same)."""
    if (before or "") == (after or ""):
        return ""
    lines = difflib.unified_diff((before or "").splitlines(), (after or "").splitlines(), "previous", "this round",
                                 lineterm="", n=1)
    return "\n".join(lines)


def bars(rounds: list[dict[str, Any]]) -> list[str]:
    """Each round's normalised mean as a bar, scaled to the largest magnitude."""
    values = [r.get("normalised") or 0.0 for r in rounds]
    top = max((abs(v) for v in values), default=0.0) or 1.0
    return [("-" if v < 0 else "") + "█" * max(0, round(BAR * abs(v) / top)) for v in values]


class IdcScreen(Screen[None]):
    BINDINGS = [
        Binding("enter,o", "open_episode", "Open episode"),
        Binding("r", "reload", "Reload"),
        Binding("q,escape", "leave", "Back"),
    ]
    DEFAULT_CSS = """
    IdcScreen #idc-head { height: 3; padding: 0 1; }
    IdcScreen #idc-body { height: 1fr; }
    IdcScreen #idc-left { width: 3fr; }
    IdcScreen #rounds { height: 2fr; }
    IdcScreen #episodes { height: 1fr; }
    IdcScreen #idc-detail { width: 2fr; padding: 0 1; border-left: solid $primary-darken-2; }
    """

    def __init__(self, out: str | Path, can_go_back: bool = True) -> None:
        super().__init__()
        self.out = Path(out)
        self.can_go_back = can_go_back
        self.curve = C.load(self.out) or {"rounds": []}

    @classmethod
    def of_dir(cls, out: str | Path, can_go_back: bool = True) -> IdcScreen:
        from workstation.base.errors import UserError

        if C.load(Path(out)) is None:
            raise UserError(f"{out} holds no IDC (curve.json); run `workstation idc ... --out {out}` first")
        return cls(out, can_go_back)

    def compose(self) -> ComposeResult:
        yield Static("", id="idc-head")
        with Horizontal(id="idc-body"):
            with Vertical(id="idc-left"):
                rounds: DataTable[str | Text] = DataTable(id="rounds", cursor_type="row", zebra_stripes=True)
                rounds.add_columns("round", "skill", "mean", "se", "norm", "curve", "note")
                yield rounds
                episodes: DataTable[str] = DataTable(id="episodes", cursor_type="row", zebra_stripes=True)
                episodes.add_columns("seed", "score", "run id", "recording")
                yield episodes
            with VerticalScroll(id="idc-detail"):
                yield Static("", id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.fill()
        self.query_one("#rounds", DataTable).focus()

    # -- drawing -----------------------------------------------------------------
    def head_text(self) -> str:
        c = self.curve
        gap = C.best_vs_final(c)
        best = f"best round {c.get('best_round')}" if c.get("best_round") is not None else "no round yet"
        gap_text = f" · best vs final gap {gap['gap']:.2f}" if gap else ""
        return (f"IDC {c.get('game')} · player {c.get('player')} · reflector {c.get('reflector')}\n"
                f"{len(c['rounds'])} of {(c.get('rounds_planned') or 0) + 1} rounds · random baseline "
                f"{c.get('random_mean') or 0:.2f} · {best}{gap_text}\n{self.out}")

    def fill(self) -> None:
        self.query_one("#idc-head", Static).update(self.head_text())
        table = self.query_one("#rounds", DataTable)
        keep = table.cursor_row
        table.clear()
        rounds = self.curve["rounds"]
        for i, (r, bar) in enumerate(zip(rounds, bars(rounds))):
            notes = []
            if r["round"] == self.curve.get("best_round"):
                notes.append("best")
            if r.get("rolled_back"):
                notes.append("↩ rolled back")
            # a round's reflection comes after it and decides the NEXT round's skill: its note goes there
            before = rounds[i - 1] if i > 0 else {}
            status = (before.get("reflection") or {}).get("status")
            if status not in (None, "submitted", "skipped"):
                notes.append(f"kept skill ({status} after round {before.get('round')})")
            skill = "none" if r.get("skill") is None else f"from {r.get('skill_round')}"
            table.add_row(str(r["round"]), skill, _num(r.get("score_mean")), _num(r.get("score_se")),
                          _num(r.get("normalised")), Text(bar, style="red" if r.get("rolled_back") else "green"),
                          ", ".join(notes), key=str(r["round"]))
        if rounds:
            table.move_cursor(row=min(max(keep, 0), len(rounds) - 1))
        self.show_round()

    def selected(self) -> dict[str, Any] | None:
        table = self.query_one("#rounds", DataTable)
        rounds = self.curve["rounds"]
        if not rounds or table.cursor_row is None or not 0 <= table.cursor_row < len(rounds):
            return None
        chosen: dict[str, Any] = rounds[table.cursor_row]
        return chosen

    def detail_text(self, r: dict[str, Any]) -> str:
        rounds = self.curve["rounds"]
        before = rounds[r["round"] - 1].get("skill") if r["round"] > 0 else None
        ref = r.get("reflection") or {}
        parts = [f"Round {r['round']}", "", "Skill played:", r.get("skill") or "(none)"]
        diff = skill_diff(before, r.get("skill"))
        parts += ["", "Diff from the round before:", diff or "(unchanged)"]
        parts += ["", "Diagnosis after this round:", r.get("diagnosis") or "(none)"]
        if ref:
            parts += ["", f"Reflection after this round: {ref.get('status')} — {ref.get('why')}",
                      f"{ref.get('tool_calls', 0)} tool calls, ${ref.get('cost_usd') or 0:.4f}"
                      + (f", transcript {ref['transcript']}" if ref.get("transcript") else "")]
        if "notebook" in r:
            parts += ["", "Notebook after this round (the player never sees it):", r.get("notebook") or "(empty)"]
        return "\n".join(parts)

    def show_round(self) -> None:
        r = self.selected()
        detail = self.query_one("#detail", Static)
        episodes = self.query_one("#episodes", DataTable)
        episodes.clear()
        if r is None:
            detail.update("no round has finished yet")
            return
        detail.update(Text(self.detail_text(r)))
        for e in r.get("episodes", []):
            episodes.add_row(str(e.get("seed")), _num(e.get("score")), str(e.get("run_id") or "")[:8],
                             str(e.get("in_dir") or e.get("recording")), key=str(e.get("recording")))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "rounds":
            self.show_round()

    # -- actions -----------------------------------------------------------------
    def action_open_episode(self, row: int | None = None) -> None:
        from screens.views.replay_view import ReplayScreen
        from workstation.store.recording import Recording
        from workstation.store.records import RecordingError

        table = self.query_one("#episodes", DataTable)
        r = self.selected()
        if r is None or not r.get("episodes"):
            self.notify("this round has no episodes", severity="warning")
            return
        if row is None:
            row = table.cursor_row if self.focused is table else 0
        episode = r["episodes"][min(max(row, 0), len(r["episodes"]) - 1)]
        try:
            self.app.push_screen(ReplayScreen(Recording(self.out / episode["recording"])))
        except RecordingError as e:
            self.notify(str(e), title="cannot open", severity="error")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "episodes":
            self.action_open_episode(event.cursor_row)
        else:
            self.query_one("#episodes", DataTable).focus()

    def action_reload(self) -> None:
        self.curve = C.load(self.out) or {"rounds": []}
        self.fill()

    def action_leave(self) -> None:
        leave(self, self.can_go_back)


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"
