"""Every pairing of a few players, on both sides, for N seeds: resumable, limited, under a cost guard.

A match is finished when its directory holds a complete recording with the same
run id (the same game, protocol, seed, the two agents on the same sides and the
same words): such a match is never played again, so an interrupted arena picks
up where it stopped. Each match played is a line of the arena's ledger, and the
directory is sealed (``arena/played.py``): a match changed or gone since is named
and played again. ``--max-matches`` caps the new matches of one call,
``--workers`` plays that many at once, and ``--max-cost`` is the dollars the
whole call may spend: refused before anything starts when the paper-based
estimate is above it (unless --yes), and each match runs with what is left.
"""

from __future__ import annotations

import argparse
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError
from workstation.run.agents import parse_agent
from workstation.run.agents.registry import AgentSpecError
from workstation.store.records import Summary
from workstation.studies.arena.report import scan_matches

if TYPE_CHECKING:
    from workstation.studies.arena.played import PlayedMatch
    from workstation.studies.arena.report import FinishedMatch

# the paper's footprint (Gemini 3.1 Pro, 200 runs of 900 frames): ~140 calls a run, ~5.0k input and
# ~718 output tokens (thinking included) a call; each side of a match makes about as many as a run
CALLS_PER_900, INPUT_PER_CALL, OUTPUT_PER_CALL = 27_938 / 200, 140.8e6 / 27_938, (2.85e6 + 17.2e6) / 27_938


MAX_SEEDS = 1000  # seeds a pairing and side: 2,000 matches a pair already
MAX_PLAYERS = 50
MAX_BOOTSTRAP = 100_000  # resamples: each is one Bradley-Terry fit
MAX_MATCHES = 1_000_000
MAX_WORKERS = 64


@dataclass(frozen=True)
class Pairing:
    p1: str
    p2: str
    seed: int


def pairings(players: list[str], seeds: int) -> list[Pairing]:
    """Each pair on both sides (A as side 1 against B, then B as side 1 against A), for seeds 0..N-1."""
    return [Pairing(x, y, s) for a, b in combinations(players, 2) for s in range(seeds) for x, y in ((a, b), (b, a))]


def check_arena_players(players: list[str], seeds: int) -> None:
    if len(players) < 2:
        raise UserError(f"--players needs two or more agents, comma-separated (got {len(players)})")
    if len(players) > MAX_PLAYERS:
        raise UserError(f"--players names {len(players)} agents; an arena takes at most {MAX_PLAYERS}")
    dup = next((p for p in players if players.count(p) > 1), None)
    if dup:
        raise UserError(f"--players names {dup} twice; name each agent once (both sides are played anyway)")
    for p in players:
        try:
            ref = parse_agent(p)
        except AgentSpecError as e:
            raise UserError(f"--players: {e}") from None
        if ref.kind == "human":
            raise UserError("--players: a person cannot play a whole arena; use `workstation play --vs SPEC`")
    if not 1 <= seeds <= MAX_SEEDS:
        raise UserError(f"--seeds must be 1..{MAX_SEEDS} (got {seeds}): seeds 0..N-1 for each pairing and side",
                        field="seeds")


def check_arena_numbers(a: argparse.Namespace) -> None:
    """Every number the arena takes, in its bounds, before anything is played or written."""
    if not 0 <= a.bootstrap <= MAX_BOOTSTRAP:
        raise UserError(f"--bootstrap must be 0..{MAX_BOOTSTRAP} (got {a.bootstrap}): resamples for the rating "
                        "intervals (0: none)", field="bootstrap")
    if a.max_matches is not None and not 0 <= a.max_matches <= MAX_MATCHES:
        raise UserError(f"--max-matches must be 0..{MAX_MATCHES} (got {a.max_matches})", field="max_matches")
    if not 1 <= a.workers <= MAX_WORKERS:
        raise UserError(f"--workers must be 1..{MAX_WORKERS} (got {a.workers})", field="workers")


def player_base_urls(given: list[str] | str | None, players: list[str]) -> dict[str, str | None]:
    """Each player's base URL from ``--base-url [SPEC=]URL`` (repeatable): its own, else the bare one.

    A bare URL (``http://...``) serves every model player not named; a SPEC must be one of the players,
    a model, named once; at most one bare URL.
    """
    from workstation.run.agents.registry import is_model
    from workstation.run.providers.spec import base_url_problem

    items = [given] if isinstance(given, str) else list(given or [])
    own: dict[str, str] = {}
    bare: str | None = None
    for item in items:
        left, sep, right = item.partition("=")
        named = bool(sep) and "://" not in left
        spec, url = (left.strip(), right.strip()) if named else (None, item.strip())
        if not url:
            raise UserError(f"--base-url {item!r} has no URL; give SPEC=URL (e.g. compat:a=http://localhost:8000/v1)"
                            " or a bare URL for every model player", field="base_url")
        why = base_url_problem(url)
        if why:
            raise UserError(why, field="base_url")
        if spec is None:
            if bare is not None:
                raise UserError(f"--base-url is given twice without a player ({bare} and {url}); name the player "
                                "of each: --base-url SPEC=URL", field="base_url")
            bare = url
            continue
        if spec not in players:
            raise UserError(f"--base-url {spec}=...: {spec} is not one of --players ({', '.join(players)})",
                            field="base_url")
        if not is_model(spec):
            raise UserError(f"--base-url {spec}=...: {spec} is not a model player; a base URL is for model players",
                            field="base_url")
        if spec in own:
            raise UserError(f"--base-url names {spec} twice; give each player one URL", field="base_url")
        own[spec] = url
    if bare is not None and not any(is_model(p) for p in players):
        raise UserError("--base-url applies to model players, and none of --players is one (e.g. compat:MODEL)",
                        field="base_url")
    return {p: own.get(p, bare) if is_model(p) else None for p in players}


def estimate_cost(player: str, protocol: Any) -> float | None:
    """Dollars one side of one match may cost (paper footprint); 0 for built-in agents, None unpriced."""
    ref = parse_agent(player)
    if not ref.is_model:
        return 0.0
    from workstation.engine.calls import Usage
    from workstation.run.providers.pricing import default_prices
    from workstation.run.providers.spec import parse_spec

    provider, model = parse_spec(player)
    price = default_prices().lookup(provider, model)
    if price is None:
        return None
    calls = CALLS_PER_900 * protocol.frames / 900
    return float(calls * price.cost(Usage(input_tokens=round(INPUT_PER_CALL), output_tokens=round(OUTPUT_PER_CALL))))


def play_arena(a: argparse.Namespace, players: list[str]) -> dict[str, int]:
    from workstation.run.match_args import match_spec
    from workstation.run.match_start import prepare_match, start_match

    check_arena_numbers(a)
    check_arena_players(players, a.seeds)
    urls = player_base_urls(a.base_url, players)
    specs = [match_spec(argparse.Namespace(**{**vars(a), "base_url": None, "p1_base_url": urls[p.p1],
                                              "p2_base_url": urls[p.p2]}), p.p1, p.p2, p.seed)
             for p in pairings(players, a.seeds)]
    from workstation.game.twoplayer import get_two_player_game
    from workstation.store.seal import is_sealed
    from workstation.studies.arena.played import (
        check_identity,
        has_ledger,
        identity,
        open_ledger,
        record,
        reseal,
        start_ledger,
        write_identity,
    )

    game = get_two_player_game(a.game).key
    finished, damaged = scan_matches(a.out, game)  # the arena's seal and ledger checked first (exit 1 if damaged)
    book = open_ledger(a.out)
    wanted = identity(game, specs[0].protocol.to_json())  # every match of one call has the one protocol
    check_identity(a.out, wanted)  # another game or protocol than the arena's: refused, nothing written (exit 2)
    done_ids = {m.run_id for m in finished}  # a damaged match is not finished: it is played again, elsewhere
    todo = []
    for spec in specs:
        prep = prepare_match(spec)
        if prep.run_id in done_ids:
            for agent in prep.agents:
                agent.close()
            continue
        todo.append((spec, prep))
    skipped, later = len(specs) - len(todo), 0
    if a.max_matches is not None:
        later = max(0, len(todo) - a.max_matches)
        for _, prep in todo[a.max_matches:]:
            for agent in prep.agents:
                agent.close()
        todo = todo[: a.max_matches]
    costs = [estimate_cost(s.p1, s.protocol) for s, _ in todo] + [estimate_cost(s.p2, s.protocol) for s, _ in todo]
    known = sum(c for c in costs if c is not None)
    if a.max_cost is not None and known > a.max_cost and not a.yes:
        raise UserError(f"the {len(todo)} matches to play may cost about ${known:.2f} (the paper's footprint), more "
                        f"than --max-cost ${a.max_cost:g}; raise it, play fewer (--max-matches), or pass --yes "
                        "(the cap still stops the arena)")
    for d in damaged:
        sys.stderr.write(f"arena: left out a damaged match ({d.path}: {d.why}); it is played again in a new folder\n")
    sys.stderr.write(f"arena: {len(specs)} matches, {skipped} already finished, {len(todo)} to play now"
                     + (f", {later} left for later (--max-matches)" if later else "")
                     + (f", estimated ${known:.2f}" if known else "") + "\n")
    if todo or (has_ledger(a.out) and not is_sealed(a.out)):  # the checks passed: its directory, ledger and seal
        from pathlib import Path

        Path(a.out).mkdir(parents=True, exist_ok=True)
        if not has_ledger(a.out):  # a new arena (empty), or an older one adopting what it holds: whole, one rename
            start_ledger(a.out, [_adopted(a.out, fm, game) for fm in finished])
            book = open_ledger(a.out)
        write_identity(a.out, wanted)  # its game and protocol, pinned for every resume
        reseal(a.out)  # (a kill before it: the whole ledger and no seal yet, read with it, sealed on the next run)
    spent = [0.0]
    lock = threading.Lock()
    counts = {"played": 0, "skipped": skipped, "stopped": 0, "later": later}

    def one(item: tuple[Any, Any]) -> None:
        spec, prep = item
        with lock:
            left = None if a.max_cost is None else a.max_cost - spent[0]
            if left is not None and left <= 0:
                counts["stopped"] += 1  # the budget is spent: not started
                return
        from dataclasses import replace

        engine = start_match(replace(spec, max_cost=left), prepared=prep)
        try:
            s = engine.run()
        finally:
            engine.close()
        with lock:
            if engine.writer is not None:
                record(book, a.out, engine.writer.path, prep.run_id, game, (spec.p1, spec.p2), spec.seed,
                       Summary.from_json(s))
            spent[0] += s.get("cost_usd") or 0.0
            counts["played"] += 1
            p1, p2 = s["players"]
            why = "" if s["complete"] else f" (stopped: {s.get('stopped') or 'incomplete'})"  # the reason, not a draw
            sys.stderr.write(f"  [{counts['played']}/{len(todo)}] seed {s['seed']}: {p1['agent']} {p1['score']:g} - "
                             f"{p2['score']:g} {p2['agent']}{why}\n")

    try:
        with ThreadPoolExecutor(max_workers=a.workers) as pool:
            list(pool.map(one, todo))
    finally:
        if todo:
            reseal(a.out)
    return counts


def _adopted(out: str, fm: FinishedMatch, game: str) -> PlayedMatch:
    """The ledger line of a sound, complete match of an arena from before its ledger, as the match is now."""
    from workstation.store.recording import Recording
    from workstation.studies.arena.played import played

    rec = Recording(fm.path)
    return played(out, fm.path, fm.run_id, game, (fm.sides[0].agent, fm.sides[1].agent),
                  int(rec.manifest_record.seed or 0), rec.summary_record)
