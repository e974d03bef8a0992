"""The Improvement Dynamics Curve: round scores, normalisation, the best skill, rollback, transfer gain.

Pure functions over plain data, plus the one reader and atomic writer of
``DIR/curve.json``. Scores are normalised per game against the random
baseline (``score - random``), so a random player is 0 and negative-score games
work; the rollback rule compares normalised means.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from workstation.errors import UserError

CURVE = "curve.json"


def mean_se(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and standard error (sample SD / sqrt n; 0 for one value; None for none)."""
    if not values:
        return None, None
    n = len(values)
    m = sum(values) / n
    if n == 1:
        return m, 0.0
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    return m, math.sqrt(var / n)


def normalised(score_mean: float, random_mean: float) -> float:
    """A round's mean against the random baseline: 0 is random play."""
    return score_mean - random_mean


def rolls_back(score: float, best: float) -> bool:
    """The paper's rule, below 0.5 x S*, on normalised scores; equal never rolls back.

    For a best at or below the random baseline, half of it means nothing, so the
    rule reads as a drop of more than half of |S*|: ``score < S* - 0.5 |S*|``
    (the same as ``score < 0.5 S*`` whenever S* > 0).
    """
    return score < best - 0.5 * abs(best)


def transfer_gain(best: float | None, none: float | None) -> tuple[float | None, float | None]:
    """The paper's Table 5: best skill minus no skill, raw and in % of no skill's |score|."""
    if best is None or none is None:
        return None, None
    gain = best - none
    pct = None if none == 0 else 100.0 * gain / abs(none)
    return gain, pct


def best_vs_final(curve: dict) -> dict | None:
    """The gap between the best round and the last one played (normalised and raw)."""
    rounds = [r for r in curve.get("rounds", []) if r.get("score_mean") is not None]
    if not rounds or curve.get("best_round") is None:
        return None
    best = next(r for r in rounds if r["round"] == curve["best_round"])
    final = rounds[-1]
    return {"best_round": best["round"], "final_round": final["round"],
            "gap": best["score_mean"] - final["score_mean"],
            "gap_normalised": (best["normalised"] or 0.0) - (final["normalised"] or 0.0)}


def load(out: Path) -> dict | None:
    path = Path(out) / CURVE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: cannot read the curve ({e}); move it aside to start this IDC afresh") from None
    if not isinstance(data, dict) or not isinstance(data.get("rounds"), list):
        raise UserError(f"{path} is not an IDC curve; choose another --out")
    return data


def save(out: Path, curve: dict) -> None:
    """Write DIR/curve.json by atomic rename (a kill leaves the old one or the new one)."""
    path = Path(out) / CURVE
    tmp = path.with_name(f".{CURVE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(curve, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_text(path: Path, text: str) -> None:
    """Any small file of an IDC, by atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def table_text(curve: dict) -> str:
    """The curve, the best-vs-final gap and the transfer table as plain text (``report`` prints it)."""
    lines = [f"IDC {curve.get('game')}  player {curve.get('player')}  reflector {curve.get('reflector')}  "
             f"random baseline {_num(curve.get('random_mean'))}"]
    lines.append(f"{'round':>5}  {'skill':<9} {'mean':>8} {'se':>7} {'norm':>8}  note")
    for r in curve.get("rounds", []):
        skill = "none" if r.get("skill_round") is None else f"round {r['skill_round']}"
        note = []
        if r["round"] == curve.get("best_round"):
            note.append("best")
        if r.get("rolled_back"):
            note.append("rolled back: next round plays the best skill")
        if r.get("reflection", {}).get("status") not in (None, "submitted", "skipped"):
            note.append(f"kept previous skill ({r['reflection']['status']})")
        lines.append(f"{r['round']:>5}  {skill:<9} {_num(r.get('score_mean')):>8} {_num(r.get('score_se')):>7} "
                     f"{_num(r.get('normalised')):>8}  {'; '.join(note)}")
    gap = best_vs_final(curve)
    if gap:
        lines.append(f"best round {gap['best_round']} vs final round {gap['final_round']}: gap {_num(gap['gap'])} "
                     f"(normalised {_num(gap['gap_normalised'])})")
    if curve.get("transfer"):
        lines.append("transfer (held-out variants):")
        lines.append(f"  {'variant':<18} {'no skill':>9} {'best':>9} {'gain':>9} {'gain %':>8}")
        for t in curve["transfer"]:
            variant = f"mode={t.get('mode')},difficulty={t.get('difficulty')}"
            pct = "n/a" if t.get("gain_pct") is None else f"{t['gain_pct']:.1f}%"
            lines.append(f"  {variant:<18} {_num(t.get('no_skill_mean')):>9} {_num(t.get('best_mean')):>9} "
                         f"{_num(t.get('gain')):>9} {pct:>8}")
    return "\n".join(lines)


def _num(v) -> str:
    return "-" if v is None else f"{v:.2f}"


__all__ = ["CURVE", "best_vs_final", "load", "mean_se", "normalised", "rolls_back", "save", "table_text",
           "transfer_gain", "write_text"]
