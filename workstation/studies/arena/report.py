"""The arena's report: the matches a directory holds, as a win-rate table and ratings (or team scores).

Only sound, complete matches are counted. Each match is checked first (the recording's fast
integrity check: every file against its digest, the summary against the turns and frames; then
each side's score in summary.json against its turns); a damaged one is left out of every figure,
named in the report, and not counted as finished, so a resume plays it again into a new folder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workstation.base.errors import DamagedArtifact, UserError
from workstation.store.index import find_recordings
from workstation.store.recording import Recording
from workstation.store.records import RecordFileError, RecordingError, check_fields
from workstation.studies.arena.ratings import Result, bootstrap, bradley_terry, non_transitive, win_rates, wins_matrix

SHADES = " ░▒▓█"
SHADE_KEY = "shade: ' ' under 0.2, ░ 0.2-0.4, ▒ 0.4-0.6, ▓ 0.6-0.8, █ 0.8 and over"


@dataclass(frozen=True)
class MatchSide:
    """One side of a finished match, as the arena reads it."""

    agent: str
    score: float


@dataclass(frozen=True)
class FinishedMatch:
    """A complete, sound match recording: what the arena counts."""

    path: str
    run_id: str
    game: str
    sides: tuple[MatchSide, MatchSide]
    team_score: float | None = None

    @property
    def share(self) -> float:
        """Side 1's share of the win: 1, 0.5 (equal scores) or 0."""
        s1, s2 = self.sides[0].score, self.sides[1].score
        return 1.0 if s1 > s2 else 0.0 if s1 < s2 else 0.5


@dataclass(frozen=True)
class DamagedMatch:
    """A match recording left out: where, and the first thing found wrong."""

    path: str
    why: str


SIDE_FIELDS: dict[str, tuple[Any, ...]] = {"agent": ("str", False), "score": ("num", False)}
SUMMARY_FIELDS: dict[str, tuple[Any, ...]] = {"players": ("list", False), "team_score": ("num", True)}
MANIFEST_FIELDS: dict[str, tuple[Any, ...]] = {"run_id": ("str", False), "game": ("str", False)}


def score_problems(rec: Recording) -> list[str]:
    """Where summary.json's sides disagree with the turns: each side's score against its last turn's score and
    the sum of its rewards (the recording's own check reads side 1 only)."""
    players = rec.summary_record.players if rec.summary_record is not None else None
    if not isinstance(players, list) or len(players) != 2:
        return ["summary.json does not hold two players"]
    try:
        turns = rec.match_turns  # typed: a turn without its two sides, or a side's score not a number, is named
    except RecordingError as e:
        return [str(e)]
    found = []
    for k, p in enumerate(players):
        check_fields(p, SIDE_FIELDS, f"{rec.path / 'summary.json'} player {k + 1}")
        rewards = [t.players[k].reward for t in turns]
        last = turns[-1].players[k].score if turns else 0.0
        if abs(p["score"] - last) > 1e-6 or abs(p["score"] - sum(rewards)) > 1e-6:
            found.append(f"summary.json side {k + 1} score {p['score']:g} contradicts its turns ({last:g})")
    return found


def read_match(rec: Recording) -> FinishedMatch:
    """The typed match (RecordFileError names the file and field)."""
    where = str(rec.path / "summary.json")
    m, s = rec.manifest_record, rec.summary_record  # typed; the fields a match needs are checked here
    check_fields(_given({"run_id": m.run_id, "game": m.game}), MANIFEST_FIELDS, str(rec.path / "manifest.json"))
    players: Any = None if s is None else s.players
    team: Any = None if s is None else s.team_score
    check_fields(_given({"players": players, "team_score": team}), SUMMARY_FIELDS, where)
    if len(players) != 2 or not all(isinstance(p, dict) for p in players):
        raise RecordFileError(f"{where}: field 'players' must hold two objects")
    sides = tuple(MatchSide(str(check_fields(p, SIDE_FIELDS, f"{where} player {k + 1}")["agent"]),
                            float(p["score"])) for k, p in enumerate(players))
    return FinishedMatch(str(rec.path), str(m.run_id), str(m.game), (sides[0], sides[1]),
                         None if team is None else float(team))


def _given(fields: dict[str, Any]) -> dict[str, Any]:
    """The typed fields a record holds (a field absent or null is left out: ``check_fields`` calls it missing)."""
    return {k: v for k, v in fields.items() if v is not None}


def scan_matches(out: str | Path, game: str | None = None) -> tuple[list[FinishedMatch], list[DamagedMatch]]:
    """(sound complete matches, damaged ones) under ``out``; unfinished matches are neither (nor is a match the
    arena did not play: ``scan_arena``)."""
    found, damaged, _ = scan_arena(out, game)
    return found, damaged


def scan_arena(out: str | Path, game: str | None = None) -> tuple[list[FinishedMatch], list[DamagedMatch], list[str]]:
    """(sound complete matches, damaged ones, the folders of sound matches the arena did not play) under ``out``.

    An arena directory with a ledger (``arena/played.py``) is checked against it first (its seal, every line:
    ``DamagedArtifact``, exit 1), a match the ledger pins is counted only as it was pinned, and a match it does not
    hold (played by hand into the directory, copied in) is not the arena's: left out of every figure, named apart.
    A folder of matches without a ledger (an arena from before it) counts every sound, complete match, as before."""
    from workstation.studies.arena.played import has_ledger, open_ledger

    found, damaged = _scan(out, game)
    if not has_ledger(out):
        return found, damaged, []
    return _against_ledger(Path(out), game, open_ledger(out).records, found, damaged)


def _against_ledger(out: Path, game: str | None, played: list[Any], found: list[FinishedMatch],
                    damaged: list[DamagedMatch]) -> tuple[list[FinishedMatch], list[DamagedMatch], list[str]]:
    """Each match the arena recorded (the last line of each run id) as it was pinned: a changed summary, a second
    copy elsewhere and a folder gone are named and left out (a resume plays them again); a match whose run id the
    ledger does not hold is not the arena's own, left out and named apart."""
    from workstation.store.integrity import sha256_of

    last = {m.run_id: m for m in played if m.complete}
    where = {m.run_id: (out / m.path).resolve() for m in last.values()}
    keep: list[FinishedMatch] = []
    foreign: list[str] = []
    for fm in found:
        pinned = last.get(fm.run_id)
        if pinned is None:  # not the arena's own: played by hand into it, or copied in
            foreign.append(fm.path)
        elif Path(fm.path).resolve() != where[fm.run_id]:
            damaged.append(DamagedMatch(fm.path, f"a second copy of run id {fm.run_id}, which the arena recorded at "
                                                 f"{out / pinned.path} (arena.jsonl)"))
        elif pinned.summary_sha256 is not None and sha256_of(Path(fm.path) / "summary.json") != pinned.summary_sha256:
            damaged.append(DamagedMatch(fm.path, "its summary.json is not the one the arena recorded when the match "
                                                 "ended (arena.jsonl)"))
        else:
            keep.append(fm)
    for m in last.values():
        if (game is None or m.game == game) and not (out / m.path).is_dir():
            damaged.append(DamagedMatch(str(out / m.path), "the arena recorded this match (arena.jsonl), and its "
                                                           "folder is gone"))
    return keep, damaged, foreign


def _scan(out: str | Path, game: str | None = None) -> tuple[list[FinishedMatch], list[DamagedMatch]]:
    found: list[FinishedMatch] = []
    damaged: list[DamagedMatch] = []
    for path in find_recordings(Path(out)):
        try:
            rec = Recording(path)
            m = rec.manifest_record
            if not m.is_match or (game and m.game != game):
                continue
            if not rec.complete:
                continue  # stopped or still running: not finished, not counted (a resume plays it again)
            why = rec.damage() or next(iter(score_problems(rec)), None)
            if why is None:
                found.append(read_match(rec))
                continue
        except (RecordingError, RecordFileError) as e:
            why = str(e)
        damaged.append(DamagedMatch(str(path), why))
    return found, damaged


def finished_matches(out: str | Path, game: str | None = None) -> list[FinishedMatch]:
    """Complete, sound match recordings under ``out`` (a damaged one is never counted as finished)."""
    return scan_matches(out, game)[0]


def arena_report(out: str | Path, game: str, resamples: int = 1000) -> dict[str, Any]:
    from workstation.game.twoplayer import TwoPlayerGameError, get_two_player_game

    try:
        tp = get_two_player_game(game)
    except TwoPlayerGameError as e:
        raise UserError(str(e)) from None
    matches, damaged, foreign = scan_arena(out, tp.key)
    if not matches and damaged:
        more = f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else ""
        raise DamagedArtifact(f"{out} holds no sound {tp.key} match: {len(damaged)} damaged, left out: "
                              f"{damaged[0].path}: {damaged[0].why}{more}", file=damaged[0].path)
    if not matches:
        raise UserError(f"{out} holds no finished {tp.key} matches{_not_own_note(foreign)}; play some with "
                        f"`workstation arena --game {tp.key} --players A,B --out {out}`", file=out)
    names: list[str] = []
    for mt in matches:
        for side in mt.sides:
            if side.agent not in names:
                names.append(side.agent)
    index = {name: i for i, name in enumerate(names)}
    report: dict[str, Any] = {"game": tp.key, "matches": len(matches), "players": names, "team": tp.team}
    if damaged:
        report["damaged"] = [{"path": d.path, "why": d.why} for d in damaged]
    if foreign:
        report["not_own"] = foreign
    if tp.team:
        return {**report, **_team(matches, names, index)}
    results = [Result(index[mt.sides[0].agent], index[mt.sides[1].agent], mt.share) for mt in matches]
    n = len(names)
    w = wins_matrix(results, n)
    rate = win_rates(w)
    strength = bradley_terry(w)
    low, high = bootstrap(results, n, resamples) if resamples > 0 else (strength, strength)
    order = sorted(range(n), key=lambda i: (-round(float(strength[i]), 4), names[i]))  # equal strengths: by name
    report["win_rate"] = [[None if math.isnan(v) else round(float(v), 4) for v in row] for row in rate]
    boot = resamples > 0
    report["ratings"] = [{"agent": names[i], "strength": round(float(strength[i]), 4),
                          "low": round(float(low[i]), 4) if boot else None,
                          "high": round(float(high[i]), 4) if boot else None,
                          "games": int((w[i] + w[:, i]).sum())} for i in order]
    report["non_transitive"] = [[names[a], names[b], names[c]] for a, b, c in non_transitive(rate)]
    return report


def team_score(mt: FinishedMatch) -> float:
    """A co-operative match's team score: the SUM of both players' scores (as the match recorded it)."""
    return mt.team_score if mt.team_score is not None else sum(s.score for s in mt.sides)


def _team(matches: list[FinishedMatch], names: list[str], index: dict[str, int]) -> dict[str, Any]:
    """Co-operative games: the team's score for each pair, and each player's mean over its teams."""
    pairs: dict[tuple[str, str], list[float]] = {}
    per: dict[str, list[float]] = {name: [] for name in names}
    for mt in matches:
        a, b = mt.sides[0].agent, mt.sides[1].agent
        team = team_score(mt)
        x, y = sorted((a, b), key=index.__getitem__)
        pairs.setdefault((x, y), []).append(team)
        per[a].append(team)
        if b != a:
            per[b].append(team)
    return {"teams": [{"players": list(k), "mean_team_score": round(sum(v) / len(v), 4), "matches": len(v)}
                      for k, v in pairs.items()],
            "player_team_score": [{"agent": k, "mean_team_score": round(sum(v) / len(v), 4) if v else None}
                                  for k, v in per.items()]}


def _damaged_lines(r: dict[str, Any]) -> list[str]:
    damaged = r.get("damaged") or []
    if not damaged:
        return []
    lines = [f"left out {len(damaged)} damaged match{'es' if len(damaged) != 1 else ''} (not rated; a resume plays "
             "each again into a new folder):"]
    return lines + [f"  {d['path']}: {d['why']}" for d in damaged]


def _not_own_note(foreign: list[str]) -> str:
    if not foreign:
        return ""
    n = len(foreign)
    return f" (and {n} match{'es' if n != 1 else ''} it did not play, not counted)"


def not_own_line(foreign: list[str]) -> str:
    """The one line naming the matches in an arena's directory that the arena did not play (left out)."""
    n = len(foreign)
    more = f" (and {n - 1} more)" if n > 1 else ""
    return (f"left out {n} match{'es' if n != 1 else ''} the arena did not play (not in its ledger arena.jsonl: "
            f"played by hand into its folder, or copied in; not rated): {foreign[0]}{more}")


def render_report(r: dict[str, Any]) -> str:
    from workstation.base.text_table import text_table

    lines = [f"{r['game']}: {r['matches']} finished matches, {len(r['players'])} players"]
    if r.get("not_own"):
        lines.append(not_own_line(r["not_own"]))
    lines += _damaged_lines(r)
    if r["team"]:
        lines.append("co-operative: the team's score (both players' points together)")
        for t in r["teams"]:
            lines.append(f"  {' + '.join(t['players'])}: mean team score {t['mean_team_score']:g} "
                         f"over {t['matches']} matches")
        return "\n".join(lines)
    names = r["players"]
    lines.append("\nwin rate of the row against the column (both sides, draws half):")
    lines.append(SHADE_KEY)
    head = ["", *(str(i + 1) for i in range(len(names)))]
    rows = [[f"{i + 1}. {names[i]}", *("-" if v is None else f"{SHADES[min(4, int(v * 5))]}{v:5.2f}" for v in row)]
            for i, row in enumerate(r["win_rate"])]
    lines += text_table([head, *rows], right=range(1, len(names) + 1))
    lines.append("\nBradley-Terry strength (log-odds, mean 0; 95% bootstrap interval; equal strengths in name order):")
    table = [[k["agent"], f"{k['strength']:+.3f}",
              "(no bootstrap)" if k["low"] is None else f"[{k['low']:+.3f}, {k['high']:+.3f}]", f"{k['games']} games"]
             for k in r["ratings"]]
    lines += ["  " + line for line in text_table(table, right=(1,))]
    if r["non_transitive"]:
        for a, b, c in r["non_transitive"]:
            lines.append(f"non-transitive: {a} beats {b}, {b} beats {c}, {c} beats {a}")
    else:
        lines.append("no non-transitive triples")
    return "\n".join(lines)
