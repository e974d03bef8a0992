"""The arena's report: the matches a directory holds, as a win-rate table and ratings (or team scores)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from workstation.arena.ratings import (
    Result,
    bootstrap,
    bradley_terry,
    non_transitive,
    win_rates,
    wins_matrix,
)
from workstation.errors import UserError
from workstation.store.index import find_recordings
from workstation.store.recording import Recording, RecordingError

SHADES = " ░▒▓█"


def finished_matches(out: str | Path, game: str | None = None) -> list[dict[str, Any]]:
    """Complete match recordings under ``out``: their manifest and summary."""
    found = []
    for path in find_recordings(Path(out)):
        try:
            rec = Recording(path)
        except RecordingError:
            continue
        m, s = rec.manifest, rec.summary
        if m.get("kind") != "match" or not rec.complete or s is None or (game and m.get("game") != game):
            continue
        found.append({"path": str(path), "run_id": m.get("run_id"), "manifest": m, "summary": s})
    return found


def arena_report(out: str | Path, game: str, resamples: int = 1000) -> dict[str, Any]:
    from workstation.game.twoplayer import TwoPlayerGameError, get_two_player_game

    try:
        tp = get_two_player_game(game)
    except TwoPlayerGameError as e:
        raise UserError(str(e)) from None
    matches = finished_matches(out, tp.key)
    if not matches:
        raise UserError(f"{out} holds no finished {tp.key} matches; play some with `workstation arena --game "
                        f"{tp.key} --players A,B --out {out}`")
    names: list[str] = []
    for mt in matches:
        for p in mt["summary"]["players"]:
            if p["agent"] not in names:
                names.append(p["agent"])
    index = {name: i for i, name in enumerate(names)}
    report: dict[str, Any] = {"game": tp.key, "matches": len(matches), "players": names, "team": tp.team}
    if tp.team:
        return {**report, **_team(matches, names, index)}
    results = []
    for mt in matches:
        p1, p2 = mt["summary"]["players"]
        share = 1.0 if p1["score"] > p2["score"] else 0.0 if p1["score"] < p2["score"] else 0.5
        results.append(Result(index[p1["agent"]], index[p2["agent"]], share))
    n = len(names)
    w = wins_matrix(results, n)
    rate = win_rates(w)
    strength = bradley_terry(w)
    low, high = bootstrap(results, n, resamples) if resamples > 0 else (strength, strength)
    order = sorted(range(n), key=lambda i: -strength[i])
    report["win_rate"] = [[None if math.isnan(v) else round(float(v), 4) for v in row] for row in rate]
    boot = resamples > 0
    report["ratings"] = [{"agent": names[i], "strength": round(float(strength[i]), 4),
                          "low": round(float(low[i]), 4) if boot else None,
                          "high": round(float(high[i]), 4) if boot else None,
                          "games": int((w[i] + w[:, i]).sum())} for i in order]
    report["non_transitive"] = [[names[a], names[b], names[c]] for a, b, c in non_transitive(rate)]
    return report


def _team(matches: list[dict[str, Any]], names: list[str], index: dict[str, int]) -> dict[str, Any]:
    """Co-operative games: the team's score for each pair, and each player's mean over its teams."""
    pairs: dict[tuple[str, str], list[float]] = {}
    per: dict[str, list[float]] = {name: [] for name in names}
    for mt in matches:
        s = mt["summary"]
        a, b = (p["agent"] for p in s["players"])
        team = float(s.get("team_score", sum(p["score"] for p in s["players"])))
        pairs.setdefault(tuple(sorted((a, b), key=index.__getitem__)), []).append(team)  # type: ignore[arg-type]
        per[a].append(team)
        if b != a:
            per[b].append(team)
    return {"teams": [{"players": list(k), "mean_team_score": round(sum(v) / len(v), 4), "matches": len(v)}
                      for k, v in pairs.items()],
            "player_team_score": [{"agent": k, "mean_team_score": round(sum(v) / len(v), 4) if v else None}
                                  for k, v in per.items()]}


def render_report(r: dict[str, Any]) -> str:
    lines = [f"{r['game']}: {r['matches']} finished matches, {len(r['players'])} players"]
    if r["team"]:
        lines.append("co-operative: the team's score (both players' points together)")
        for t in r["teams"]:
            lines.append(f"  {' + '.join(t['players'])}: mean team score {t['mean_team_score']:g} "
                         f"over {t['matches']} matches")
        return "\n".join(lines)
    names = r["players"]
    width = max(len(n) for n in names)
    lines.append("\nwin rate of the row against the column (both sides, draws half):")
    lines.append(" " * (width + 2) + "  ".join(f"{i + 1:>6}" for i in range(len(names))))
    for i, row in enumerate(r["win_rate"]):
        cells = ["     -" if v is None else f"{SHADES[min(4, int(v * 5))]}{v:5.2f}" for v in row]
        lines.append(f"{i + 1}. {names[i]:<{width}}" + "  ".join(cells))
    lines.append("\nBradley-Terry strength (log-odds, mean 0; 95% bootstrap interval):")
    for k in r["ratings"]:
        interval = "(no bootstrap)" if k["low"] is None else f"[{k['low']:+.3f}, {k['high']:+.3f}]"
        lines.append(f"  {k['agent']:<{width}}  {k['strength']:+7.3f}  {interval}  {k['games']} games")
    if r["non_transitive"]:
        for a, b, c in r["non_transitive"]:
            lines.append(f"non-transitive: {a} beats {b}, {b} beats {c}, {c} beats {a}")
    else:
        lines.append("no non-transitive triples")
    return "\n".join(lines)
