"""The Improvement Dynamics Curve: round scores, normalisation, the best skill, rollback, transfer gain.

Pure functions over plain data, plus the one reader and atomic writer of
``DIR/curve.json``, and the IDC's ledger ``DIR/rounds.jsonl`` (``store/ledger.Ledger``): one line a step
done (a round played, the reflection after a round, a transfer played), what the driver resumes from;
curve.json is the summary written from it after every step. Scores are normalised per game against the random
baseline (``score - random``), so a random player is 0 and negative-score games
work; the rollback rule compares normalised means.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.base.text_table import text_table
from workstation.game.seed import SEED_MAX, is_seed
from workstation.store.atomic import write_atomic
from workstation.store.ledger import Ledger, dumps, write_json
from workstation.store.records import FLAT, RecordFileError, check_fields, json_fields, ranged, read_json, record_of
from workstation.store.seal import check_seal, seal

CURVE = "curve.json"
MAX_ROUND_DIRS = 21  # round_0 .. round_20 (MAX_ROUNDS after round 0)


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


def rollbacks(normalised: list[float]) -> tuple[list[bool], int | None]:
    """Each round's rollback and the best round, from the rounds' normalised means in order.

    Round 0 is the first best and never rolls back. A later round rolls back when it scores below half
    the BEST round so far (``rolls_back``), not the round before it; a round that does not roll back and
    scores above the best becomes the best (a tie keeps the earlier round)."""
    rolled: list[bool] = []
    best: int | None = None
    for r, n in enumerate(normalised):
        if best is None:
            rolled.append(False)
            best = r
        elif rolls_back(n, normalised[best]):
            rolled.append(True)
        else:
            rolled.append(False)
            if n > normalised[best]:
                best = r
    return rolled, best


def transfer_gain(best: float | None, none: float | None) -> tuple[float | None, float | None]:
    """The paper's Table 5: best skill minus no skill, raw and in % of no skill's |score|."""
    if best is None or none is None:
        return None, None
    gain = best - none
    pct = None if none == 0 else 100.0 * gain / abs(none)
    return gain, pct


def best_vs_final(curve: dict[str, Any] | Curve) -> dict[str, Any] | None:
    """The gap between the best round and the last one played (normalised and raw)."""
    c = curve if isinstance(curve, Curve) else Curve.from_json(curve, CURVE)
    rounds = [r for r in c.rounds if r.score.mean is not None]
    if not rounds or c.best_round is None:
        return None
    best = next((r for r in rounds if r.round == c.best_round), None)
    if best is None or best.score.mean is None:
        return None
    final = rounds[-1]
    assert final.score.mean is not None
    return {"best_round": best.round, "final_round": final.round,
            "gap": best.score.mean - final.score.mean,
            "gap_normalised": (best.normalised or 0.0) - (final.normalised or 0.0)}


# -- the typed curve: one checked reader, one writer ---------------------------------------------------------------

Fields = dict[str, tuple[Any, ...]]


def _objects(items: list[Any], fields: Fields, where: str) -> list[dict[str, Any]]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise RecordFileError(f"{where} item {i} is not a JSON object")
        out.append(check_fields(item, fields, f"{where} item {i}"))
    return out


# Each record below is the one declaration of its JSON object: its fields' checks come from their annotations
# (``json_fields``), and a mean with its standard error is a ``Mean`` stored flat (``score_mean``, ``score_se``).
@dataclass(frozen=True)
class Mean:
    """A mean over episodes and its standard error."""

    mean: float | None = None
    se: float | None = None


@dataclass(frozen=True, kw_only=True)
class Episode:
    """One episode of a round (or of a transfer arm): its recording and score."""

    run_id: str | None = None
    score: float | None = None
    seed: int | None = None
    recording: str | None = None
    in_dir: str | None = None
    cost_usd: float | None = None
    arm: str | None = None
    summary_sha256: str | None = None  # the recording's summary.json when it was verified and counted


@dataclass(frozen=True, kw_only=True)
class Reflection:
    """What the reflection after a round did (submitted, skipped, no_skill, ...)."""

    status: str | None = None
    why: str | None = None
    tool_calls: int | None = None
    cost_usd: float | None = None
    transcript: str | None = None


@dataclass(frozen=True, kw_only=True)
class Round:
    """One round of the curve."""

    round: int = ranged(0, 10_000)
    skill: str | None = None
    skill_round: int | None = None
    skill_file: str | None = None
    score: Mean = field(default=Mean(), metadata=FLAT)
    normalised: float | None = None
    episodes: tuple[Episode, ...] = ()
    rolled_back: bool = False
    diagnosis: str | None = None
    reflection: Reflection | None = None  # None: not reflected on yet
    notebook: str | None = None
    next_skill: str | None = None


@dataclass(frozen=True, kw_only=True)
class Transfer:
    """The best skill and no skill on one held-out variant."""

    mode: int | None = None
    difficulty: int | None = None
    best_round: int | None = None
    no_skill: Mean = field(default=Mean(), metadata=FLAT)
    best: Mean = field(default=Mean(), metadata=FLAT)
    gain: float | None = None
    gain_pct: float | None = None
    note: str | None = None
    episodes: tuple[Episode, ...] = ()
    cost_usd: float | None = None


@dataclass(frozen=True, kw_only=True)
class Curve:
    """DIR/curve.json, checked: every field's type (and the file and field named when one is wrong)."""

    game: str | None = None
    player: str | None = None
    reflector: str | None = None
    validator: str | None = None
    identity: dict[str, Any] | None = None
    rounds: tuple[Round, ...]
    best_round: int | None = None
    transfer: tuple[Transfer, ...] = ()
    rounds_planned: int | None = None
    seeds: list[Any] | None = None
    random_mean: float | None = None
    random_scores: list[Any] | None = None
    best_vs_final: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: Any, where: str) -> Curve:
        if not isinstance(data, dict):
            raise RecordFileError(f"{where} holds {type(data).__name__}, not a JSON object")
        c = check_fields(data, CURVE_FIELDS, where)
        for i, seeds in enumerate(c.get("seeds") or []):  # each round's episode seeds, as a resume plays them
            if not isinstance(seeds, list) or not all(is_seed(s) for s in seeds):
                raise RecordFileError(f"{where}: field 'seeds' item {i} is not a list of seeds (0..{SEED_MAX})")
        rounds = []
        for i, r in enumerate(_objects(c["rounds"], ROUND_FIELDS, f"{where} rounds")):
            at = f"{where} rounds item {i}"
            eps = _episodes(r, f"{at} episodes")
            ref = r.get("reflection")
            reflection = None if ref is None else record_of(
                Reflection, check_fields(ref, REFLECTION_FIELDS, f"{at} reflection"))
            rounds.append(record_of(Round, r, episodes=eps, reflection=reflection))
        transfer = [record_of(Transfer, t, episodes=_episodes(t, f"{where} transfer episodes"))
                    for t in _objects(c.get("transfer") or [], TRANSFER_FIELDS, f"{where} transfer")]
        for i, played in enumerate(rounds):
            if played.round != i:
                raise RecordFileError(f"{where} rounds item {i}: field 'round' is {played.round}, not {i}")
        best = c.get("best_round")
        if best is not None and not 0 <= best < max(1, len(rounds)):
            raise RecordFileError(f"{where}: field 'best_round' is {best}, but the curve holds {len(rounds)} rounds")
        return record_of(cls, c, rounds=tuple(rounds), transfer=tuple(transfer))


def _episodes(entry: dict[str, Any], where: str) -> tuple[Episode, ...]:
    """The episodes of a checked round or transfer, each checked."""
    return tuple(record_of(Episode, e) for e in _objects(entry.get("episodes") or [], EPISODE_FIELDS, where))


EPISODE_FIELDS = json_fields(Episode)
REFLECTION_FIELDS = json_fields(Reflection)
ROUND_FIELDS = json_fields(Round)
TRANSFER_FIELDS = json_fields(Transfer)
CURVE_FIELDS = json_fields(Curve)


# -- the ledger of steps: what a resume reads back --------------------------------------------------------------------

STEPS = "rounds.jsonl"
REFLECTED = ("reflection", "diagnosis", "notebook", "next_skill")  # what a reflection adds to its round's entry
# a reflection step: its round and what it added, the reflection itself required
REFLECTED_FIELDS: Fields = {"round": ROUND_FIELDS["round"], "reflection": ("dict", False),
                            **{k: ROUND_FIELDS[k] for k in REFLECTED[1:]}}
STEP_KINDS = ("round", "reflection", "transfer")


@dataclass(frozen=True)
class Step:
    """One line of DIR/rounds.jsonl: a round played (its curve entry), the reflection after a round (what it adds
    to that entry), or a transfer played (its curve entry); each checked with the curve's own fields."""

    step: str
    data: dict[str, Any]

    @property
    def key(self) -> tuple[Any, ...]:
        if self.step == "transfer":
            return ("transfer", self.data.get("mode"), self.data.get("difficulty"))
        return (self.step, self.data["round"])

    @property
    def cost_usd(self) -> float:
        if self.step == "reflection":
            return float(self.data["reflection"].get("cost_usd") or 0.0)
        if self.step == "transfer":
            return float(self.data.get("cost_usd") or 0.0)
        return float(sum(e.get("cost_usd") or 0.0 for e in self.data.get("episodes") or []))

    @classmethod
    def from_json(cls, d: dict[str, Any], where: str) -> Step:
        step = d.get("step")
        data = {k: v for k, v in d.items() if k != "step"}
        if step == "round":
            check_fields(data, ROUND_FIELDS, where)
            _objects(data.get("episodes") or [], EPISODE_FIELDS, f"{where} episodes")
        elif step == "reflection":
            check_fields(data, REFLECTED_FIELDS, where)
            check_fields(data["reflection"], REFLECTION_FIELDS, f"{where} reflection")
        elif step == "transfer":
            check_fields(data, TRANSFER_FIELDS, where)
            _objects(data.get("episodes") or [], EPISODE_FIELDS, f"{where} episodes")
        else:
            raise RecordFileError(f"{where}: field 'step' is {step!r}, not one of {', '.join(STEP_KINDS)}")
        return cls(str(step), data)

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, **self.data}


def steps(out: Path) -> Ledger[Step]:
    """The IDC's ledger (every line read and checked; a damaged one is DamagedArtifact, exit 1)."""
    return Ledger(Path(out) / STEPS, Step.from_json, lambda st: st.key, cost=lambda st: st.cost_usd,
                  what="IDC ledger")


def apply_steps(curve: dict[str, Any], done: list[Step]) -> None:
    """The rounds and transfers of ``curve`` as the ledger's steps, in order, made them (the driver's state)."""
    rounds: list[dict[str, Any]] = []
    transfer: list[dict[str, Any]] = []
    for st in done:
        if st.step == "round":
            r = st.data["round"]
            entry = dict(st.data)
            if r < len(rounds):
                rounds[r] = entry
            elif r == len(rounds):
                rounds.append(entry)
            else:
                raise RecordFileError(f"{STEPS}: round {r} comes before round {len(rounds)}")
        elif st.step == "reflection":
            r = st.data["round"]
            if r >= len(rounds):
                raise RecordFileError(f"{STEPS}: a reflection after round {r}, which was not played")
            rounds[r].update({k: v for k, v in st.data.items() if k != "round"})
        else:
            transfer.append(dict(st.data))
    curve["rounds"], curve["transfer"] = rounds, transfer


def reflected_step(entry: dict[str, Any]) -> Step:
    """The step of the reflection after the round ``entry``: what it added to the entry, as it added it."""
    return Step("reflection", {"round": entry["round"], **{k: entry[k] for k in REFLECTED if k in entry}})


def steps_of(curve: dict[str, Any]) -> list[Step]:
    """The steps a curve from before the ledger holds (its rounds, reflections and transfers), to start its ledger."""
    out: list[Step] = []
    for r in curve.get("rounds") or []:
        out.append(Step("round", {k: v for k, v in r.items() if k not in REFLECTED}))
        if r.get("reflection") is not None:
            out.append(reflected_step(r))
    out += [Step("transfer", dict(t)) for t in curve.get("transfer") or []]
    return out


def adopted_ledger(out: Path) -> bytes | None:
    """The ledger an IDC from before the ledger starts with: a line for each step its curve.json holds, exactly as
    ``start_ledger`` writes it (None: no curve.json of that shape)."""
    try:
        data = json.loads((Path(out) / CURVE).read_text(encoding="utf-8"))
        found = steps_of(data)
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError, KeyError):
        return None
    return "".join(dumps(st.to_json()) + "\n" for st in found).encode("utf-8")


def start_ledger(out: Path) -> None:
    """Start the ledger of an IDC (a new one, or one from before the ledger, its curve.json saved and sealed first):
    DIR/rounds.jsonl written whole from curve.json, in one rename. Until the IDC is sealed again, the seal lets
    exactly those bytes stand (``adopting``), so a kill in between leaves an IDC that reads and resumes."""
    write_atomic(Path(out) / STEPS, adopted_ledger(out) or b"")


def adopting(out: Path) -> dict[str, Callable[[], bytes | None]]:
    """The file the seal of an IDC may not name yet: its ledger, as ``start_ledger`` made it from curve.json."""
    return {STEPS: lambda: adopted_ledger(out)}


SEAL_KIND = "idc"
# what the IDC writes itself (curve.json, skills/, reflections/, notebook.md) is sealed; the rounds and transfers
# are batch directories whose recordings carry digests of their own
SEAL_SKIP = tuple(f"round_{r}" for r in range(MAX_ROUND_DIRS)) + ("transfer",)


def load(out: Path) -> dict[str, Any] | None:
    """DIR/curve.json, checked (seal, then every field), as stored; None when there is none.

    A curve.json that is not a file, not JSON, or of the wrong shape is one line naming the file and
    field (exit 2); a sealed IDC whose files were changed by hand is DamagedArtifact (exit 1)."""
    path = Path(out) / CURVE
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        raise UserError(f"{path} is not a file; move it aside to start this IDC afresh, or choose another --out",
                        file=path)
    check_seal(out, SEAL_KIND, what="the IDC", missing_ok=True, added_ok=adopting(out))
    data = read_json(path)
    if not isinstance(data.get("rounds"), list):
        raise UserError(f"{path} is not an IDC curve (no list of rounds); choose another --out", file=path)
    Curve.from_json(data, str(path))
    return dict(data)


def load_checked(out: Path) -> dict[str, Any] | None:
    """DIR/curve.json checked as ``load`` does, and the IDC's ledger too (every line of DIR/rounds.jsonl): what
    ``verify`` and a resume check, so a reader (``report``) never shows the curve of a damaged IDC."""
    data = load(out)
    if data is not None:
        steps(out)  # a damaged line: DamagedArtifact naming it (exit 1)
    return data


def load_curve(out: Path) -> Curve | None:
    """The typed curve of DIR (checked as ``load``), or None."""
    data = load(out)
    return None if data is None else Curve.from_json(data, str(Path(out) / CURVE))


def save(out: Path, curve: dict[str, Any]) -> None:
    """Write DIR/curve.json (checked first, written whole or not at all) and seal what the IDC wrote."""
    Curve.from_json(curve, str(Path(out) / CURVE))
    write_json(Path(out) / CURVE, curve)
    seal(out, SEAL_KIND, skip=SEAL_SKIP, appendable=[STEPS])


def write_file(out: Path, rel: str, text: str) -> None:
    """A small file of the IDC (a skill, a transcript, the notebook), whole or not at all; the IDC sealed again."""
    path = Path(out) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    if (Path(out) / CURVE).is_file():
        seal(out, SEAL_KIND, skip=SEAL_SKIP, appendable=[STEPS])


def write_text(path: Path, text: str) -> None:
    """A file outside the IDC (a report's --json or --md), whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


def table_text(curve: dict[str, Any] | Curve) -> str:
    """The curve, the best-vs-final gap and the transfer table as plain text (``report`` prints it).

    A round's note says what the reflection before it did: the note belongs to the round whose skill
    that reflection produced (a reflection that kept the skill shows on the next round's row)."""
    c = curve if isinstance(curve, Curve) else Curve.from_json(curve, CURVE)
    lines = [f"IDC {c.game}  player {c.player}  reflector {c.reflector}  random baseline {_num(c.random_mean)}"]
    rows: list[list[object]] = [["round", "skill", "mean", "se", "norm", "note"]]
    for i, r in enumerate(c.rounds):
        skill = "none" if r.skill_round is None else f"round {r.skill_round}"
        note = []
        if r.round == c.best_round:
            note.append("best")
        if r.rolled_back:
            note.append("rolled back: next round plays the best skill")
        before = c.rounds[i - 1].reflection if i > 0 else None
        if before is not None and before.status not in (None, "submitted", "skipped"):
            note.append(f"kept previous skill (round {i - 1}'s reflection: {before.status})")
        rows.append([r.round, skill, _num(r.score.mean), _num(r.score.se), _num(r.normalised), "; ".join(note)])
    lines += text_table(rows, right=(0, 2, 3, 4))
    gap = best_vs_final(c)
    if gap:
        lines.append(f"best round {gap['best_round']} vs final round {gap['final_round']}: gap {_num(gap['gap'])} "
                     f"(normalised {_num(gap['gap_normalised'])})")
    if c.transfer:
        lines.append("transfer (held-out variants):")
        table: list[list[object]] = [["variant", "no skill", "best", "gain", "gain %"]]
        for t in c.transfer:
            pct = "n/a" if t.gain_pct is None else f"{t.gain_pct:.1f}%"
            table.append([f"mode={t.mode},difficulty={t.difficulty}", _num(t.no_skill.mean), _num(t.best.mean),
                          _num(t.gain), pct])
        lines += ["  " + line for line in text_table(table, right=(1, 2, 3, 4))]
    return "\n".join(lines)


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


__all__ = ["CURVE", "Curve", "Episode", "Round", "Transfer", "best_vs_final", "load", "load_checked", "load_curve", "mean_se",
           "normalised", "rollbacks", "rolls_back", "save", "start_ledger", "table_text", "transfer_gain", "write_file",
           "write_text"]
