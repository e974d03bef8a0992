"""The judge's records, typed, and the one checked way to read and write them.

A judge study is a directory (``workstation judge --out DIR``):

- ``judge.json``: what the judging is (``StudyMeta``);
- ``verdicts.jsonl``: one ``VerdictLine`` per judged turn (the answer of the judge, ``JudgeAnswer``,
  with the turn it is about and what the RAM says of its evidence);
- ``summary.json``: the counts (``JudgeSummary``);
- ``requery.jsonl`` / ``requery.json``: the re-query study (``RequeryLine``, ``RequeryResult``);
- ``overreliance.json``: the over-reliance test (``Overreliance``);
- ``seal.json``: the digests of all of them (``workstation.store.seal``, kind ``judge-study``).

A verdict has this one shape from the judge's reply to the report: ``parse_verdict`` reads the reply
into a ``Verdict`` (``workstation.studies.judge.verdict``: its one rule), ``ask`` returns it as a
``JudgeAnswer`` (``JudgeAnswer.of``), the line written is a ``VerdictLine`` and the line read back is held
to the same ``Verdict`` rule; the summary counts ``VerdictLine`` s, the report reads a ``JudgeSummary``
and the open screen gets the ``VerdictLine`` s themselves (``lookup.verdicts_for``). Every reader goes through ``Fields``: a field missing, of the wrong
type or out of range is one line naming the file, the line and the field. A study directory that
fails its seal or holds a record that does not read is damaged (``DamagedArtifact``, exit 1): it is
named and set aside, never counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Self, TypeVar

from workstation.base.errors import DamagedArtifact, UserError
from workstation.game.seed import SEED_MAX, is_seed
from workstation.store.seal import check_seal
from workstation.studies.judge.verdict import CATEGORIES, Verdict, VerdictError

FORMAT = "atari-workstation-judge/1"
KIND = "judge-study"
UNKNOWN = "unknown"
T = TypeVar("T")


class FieldError(UserError):
    """A record with a field missing or of the wrong type: one line naming where and the field."""


def _kind(value: object) -> str:
    return {"str": "text", "int": "an integer", "float": "a number", "bool": "true/false", "list": "a list",
            "dict": "an object", "NoneType": "null"}.get(type(value).__name__, type(value).__name__)


class Fields:
    """One JSON object read from ``where`` (a file, or a file and line): each field taken with its type checked."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise FieldError(f"{where} holds {_kind(data)}, not a JSON object")
        self.data: dict[str, Any] = data
        self.where = where

    def _bad(self, key: str, what: str) -> FieldError:
        return FieldError(f"{self.where}: field {key!r} {what}")

    def _take(self, key: str, optional: bool) -> Any:
        if key not in self.data:
            if optional:
                return None
            raise self._bad(key, "is missing")
        return self.data[key]

    def _of(self, key: str, kind: type[T], what: str) -> T:
        v = self._take(key, False)
        if not isinstance(v, kind):
            raise self._bad(key, f"is {_kind(v)}, not {what}")
        return v

    def _of_or_none(self, key: str, kind: type[T], what: str) -> T | None:
        v = self._take(key, True)
        if v is not None and not isinstance(v, kind):
            raise self._bad(key, f"is {_kind(v)}, not {what} or null")
        return v

    def text(self, key: str) -> str:
        return self._of(key, str, "text")

    def text_or_none(self, key: str) -> str | None:
        return self._of_or_none(key, str, "text")

    def whole(self, key: str, lo: int = 0, hi: int | None = None) -> int:
        v = self._take(key, False)
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self._bad(key, f"is {_kind(v)}, not an integer")
        if v < lo or (hi is not None and v > hi):
            raise self._bad(key, f"is {v}, outside {lo}..{'' if hi is None else hi}")
        return v

    def seed(self, key: str) -> int:
        """A seed, by the one seed rule (``workstation.game.seed``)."""
        value = self.whole(key)
        if not is_seed(value):
            raise self._bad(key, f"is {value}, not a seed (0..{SEED_MAX})")
        return value

    def num_or_none(self, key: str, lo: float | None = 0.0, hi: float | None = None) -> float | None:
        v = self._take(key, True)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self._bad(key, f"is {_kind(v) if not isinstance(v, float) else v}, not a finite number")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self._bad(key, f"is {v:g}, outside {'' if lo is None else f'{lo:g}'}..{'' if hi is None else f'{hi:g}'}")
        return float(v)

    def num(self, key: str, lo: float | None = 0.0, hi: float | None = None) -> float:
        v = self.num_or_none(key, lo, hi)
        if v is None:
            raise self._bad(key, "is missing" if key not in self.data else "is null, not a number")
        return v

    def boolean(self, key: str) -> bool:
        return self._of(key, bool, "true/false")

    def bool_or_none(self, key: str) -> bool | None:
        return self._of_or_none(key, bool, "true/false")

    def obj(self, key: str) -> dict[str, Any]:
        return self._of(key, dict, "an object")

    def obj_or_none(self, key: str) -> dict[str, Any] | None:
        return self._of_or_none(key, dict, "an object")

    def items(self, key: str) -> list[Any]:
        return self._of(key, list, "a list")

    def format(self, want: str) -> None:
        if self.text("format") != want:
            raise self._bad("format", f"is {self.data['format']!r}, not {want!r}")

    def sub(self, key: str) -> Fields:
        return Fields(self.obj(key), f"{self.where}: field {key!r}")

    def sub_or_none(self, key: str) -> Fields | None:
        v = self.obj_or_none(key)
        return None if v is None else Fields(v, f"{self.where}: field {key!r}")

    def each(self, key: str) -> list[Fields]:
        return [Fields(x, f"{self.where}: field {key!r} item {i}") for i, x in enumerate(self.items(key))]

    def counts(self, key: str) -> dict[str, int]:
        f = self.sub(key)
        return {k: f.whole(k) for k in f.data}

    def ints(self, key: str) -> list[int]:
        out = []
        for i, v in enumerate(self.items(key)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise self._bad(key, f"item {i} is {_kind(v)}, not a whole number of 0 or more")
            out.append(v)
        return out


# -- reading files --------------------------------------------------------------------
def _damaged(study: Path, why: str) -> DamagedArtifact:
    return DamagedArtifact(f"judge study {study} is damaged: {why}; it is left as it is (run the judge again "
                           "into a new --out)", file=study)


def read_file(path: Path, make: Callable[[Fields], T], study: Path | None = None) -> T:
    """One record file, typed; one line naming the file and field when it does not read (DamagedArtifact
    naming the study when it is part of one)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise UserError(f"{path} cannot be read ({e.strerror or e})", file=path) from None
    except UnicodeDecodeError:
        why = f"{path.name} is not UTF-8 text"
        raise (_damaged(study, why) if study else UserError(f"{path}: not UTF-8 text", file=path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        why = f"{path.name} is not valid JSON ({e.msg} at line {e.lineno})"
        raise (_damaged(study, why) if study else UserError(f"{path}: {why}", file=path)) from None
    try:
        return make(Fields(data, path.name if study else str(path)))
    except UserError as e:
        raise (_damaged(study, str(e)) if study else UserError(str(e), file=path)) from None


def check_study(study: Path) -> None:
    """A study's seal holds (a study written before seals, with none, passes; its records are still checked)."""
    from workstation.studies.qa.qset import readable

    readable(study)
    check_seal(study, KIND, what="judge study", missing_ok=True)


class _JsonLine:
    """A record that is one line of a JSONL file: ``from_json`` checks it field by field."""

    @classmethod
    def read(cls, f: Fields) -> Self:
        raise NotImplementedError

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> Self:
        return cls.read(Fields(data, where))


# -- one answer of the judge -----------------------------------------------------------
@dataclass(frozen=True)
class JudgeAnswer:
    """What the judge answered on one turn: a verdict (parsed), a reply it could not read twice (not parsed),
    or no reply at all (``error``; never written).

    A parsed answer is a ``Verdict`` (``verdict``) with the call's account: made by ``of`` from the parsed
    reply, or read back from a line, it is held to the one rule of ``Verdict`` (a ``VerdictError``), and its
    ``group`` is the verdict's own."""

    parsed: bool
    failure: bool | None = None
    category: str | None = None  # as the judge wrote it
    group: str | None = None  # which of the five
    subtype: str | None = None
    evidence: str | None = None
    text_cue_followed: bool | None = None
    raw: str | None = None
    usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    calls: int = 0
    retried: bool = False
    problem: str | None = None  # why it was not parsed
    raw_first: str | None = None
    error: str | None = None  # the provider gave no reply

    def __post_init__(self) -> None:
        verdict = self.verdict
        if verdict is not None and self.group != verdict.group:
            raise VerdictError(f"group {self.group!r} is not the category's ({verdict.group!r})", "group")

    @property
    def verdict(self) -> Verdict | None:
        """The verdict of a parsed answer (checked by ``Verdict``'s one rule), None for any other."""
        if not self.parsed:
            return None
        failure: Any = self.failure  # true or false, or Verdict says which it is not
        return Verdict(failure, self.category, self.subtype, self.evidence, self.text_cue_followed)

    @classmethod
    def of(cls, verdict: Verdict, raw: str | None, usage: dict[str, Any] | None, cost_usd: float | None,
           calls: int, retried: bool) -> JudgeAnswer:
        """A parsed answer: the verdict and the call's account."""
        return cls(True, verdict.failure, verdict.category, verdict.group, verdict.subtype, verdict.evidence,
                   verdict.text_cue_followed, raw, usage, cost_usd, calls, retried)

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error, "usage": self.usage, "cost_usd": self.cost_usd, "calls": self.calls}
        out: dict[str, Any] = {"failure": self.failure, "category": self.category, "group": self.group,
                               "subtype": self.subtype, "evidence": self.evidence,
                               "text_cue_followed": self.text_cue_followed, "parsed": self.parsed}
        if not self.parsed:
            out.update(problem=self.problem, raw=self.raw, raw_first=self.raw_first)
        else:
            out["raw"] = self.raw
        out.update(usage=self.usage, cost_usd=self.cost_usd, calls=self.calls, retried=self.retried)
        return out

    @classmethod
    def read(cls, f: Fields) -> JudgeAnswer:
        try:
            return cls(f.boolean("parsed"), f.bool_or_none("failure"), f.text_or_none("category"),
                       f.text_or_none("group"), f.text_or_none("subtype"), f.text_or_none("evidence"),
                       f.bool_or_none("text_cue_followed"), f.text_or_none("raw"), f.obj_or_none("usage"),
                       f.num_or_none("cost_usd"), f.whole("calls") if "calls" in f.data else 0,
                       f.bool_or_none("retried") or False, f.text_or_none("problem"), f.text_or_none("raw_first"))
        except VerdictError as e:  # a parsed line that is no verdict: the rule ``ask`` made it by
            raise f._bad(e.key, f"does not make a verdict: {e}") from None


# -- a judged turn -------------------------------------------------------------------------
@dataclass(frozen=True)
class VerdictLine(_JsonLine):
    """One line of verdicts.jsonl: the turn, the judge's answer, and what the RAM says of its evidence."""

    run_id: str
    setting: str
    game: str
    seed: int
    turn: int
    answer: JudgeAnswer
    truth_agrees: bool | str = UNKNOWN  # True | False | "unknown"
    truth_claims: list[dict[str, Any]] = field(default_factory=list)
    prompt_digest: str | None = None
    request_digest: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.run_id, self.turn

    @property
    def truth(self) -> str:
        """"true", "false" or "unknown"."""
        return str(self.truth_agrees).lower()

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "setting": self.setting, "game": self.game, "seed": self.seed,
                "turn": self.turn, **self.answer.to_json(), "truth_agrees": self.truth_agrees,
                "truth_claims": self.truth_claims, "prompt_digest": self.prompt_digest,
                "request_digest": self.request_digest}

    @classmethod
    def read(cls, f: Fields) -> VerdictLine:
        agrees: Any = f.data["truth_agrees"] if "truth_agrees" in f.data else UNKNOWN
        if agrees not in (True, False, UNKNOWN):
            raise f._bad("truth_agrees", f"is {agrees!r}, not true, false or \"unknown\"")
        claims = f.items("truth_claims") if "truth_claims" in f.data else []
        if not all(isinstance(c, dict) for c in claims):
            raise f._bad("truth_claims", "holds something that is not an object")
        return cls(f.text("run_id"), f.text("setting"), f.text("game"), f.seed("seed"), f.whole("turn"),
                   JudgeAnswer.read(f), agrees, claims, f.text_or_none("prompt_digest"),
                   f.text_or_none("request_digest"))


# -- judge.json ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SampleRef:
    """A sampled run as judge.json keeps it."""

    run_id: str
    setting: str
    game: str
    path: str
    turns: list[int]
    data: dict[str, Any]  # the whole entry, written back as it was

    @classmethod
    def read(cls, f: Fields) -> SampleRef:
        return cls(f.text("run_id"), f.text("setting"), f.text("game"), f.text("path"), f.ints("turns"), f.data)


@dataclass(frozen=True)
class StudyMeta:
    """judge.json: what a judging is."""

    judge: str
    prompt_digest: str
    prompt_path: str
    turns: int
    gap: int
    seed: int
    samples: list[SampleRef]
    options: dict[str, Any] | None
    calibration: dict[str, Any] | None
    data: dict[str, Any]  # the whole file

    @classmethod
    def read(cls, f: Fields) -> StudyMeta:
        f.format(FORMAT)
        prompt = f.sub("prompt")
        return cls(f.text("judge"), prompt.text("digest"), prompt.text("path"), f.whole("turns", 1), f.whole("gap", 1),
                   f.seed("seed"), [SampleRef.read(s) for s in f.each("samples")], f.obj_or_none("options"),
                   f.obj_or_none("calibration"), f.data)


# -- summary.json ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SettingCounts:
    turns_judged: int = 0
    failures: int = 0
    unparsed: int = 0
    text_cue_asked: int = 0
    text_cue_followed: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def read(cls, f: Fields) -> SettingCounts:
        c = cls(*(f.whole(k.name) for k in fields(cls)))
        if c.text_cue_followed > c.text_cue_asked:
            raise f._bad("text_cue_followed", f"is {c.text_cue_followed}, more than text_cue_asked")
        return c


@dataclass(frozen=True)
class TruthCounts:
    true: int = 0
    false: int = 0
    unknown: int = 0

    @property
    def checked(self) -> int:
        return self.true + self.false

    @property
    def agreement_rate(self) -> float | None:
        """The share of checkable verdicts whose evidence the RAM agrees with (4 places)."""
        return None if not self.checked else round(self.true / self.checked, 4)

    def to_json(self) -> dict[str, Any]:
        return {"true": self.true, "false": self.false, "unknown": self.unknown, "agreement_rate": self.agreement_rate}

    @classmethod
    def read(cls, f: Fields) -> TruthCounts:
        t = cls(f.whole("true"), f.whole("false"), f.whole("unknown"))
        got = f.num_or_none("agreement_rate", 0.0, 1.0)
        if got != t.agreement_rate:
            raise f._bad("agreement_rate", f"is {got!r}, but the counts give {t.agreement_rate!r}")
        return t


@dataclass(frozen=True)
class GroupCounts:
    settings: list[str]
    followed: int
    asked: int

    @property
    def share(self) -> float | None:
        return None if self.asked == 0 else self.followed / self.asked

    def to_json(self) -> dict[str, Any]:
        return {"settings": self.settings, "followed": self.followed, "asked": self.asked, "share": self.share}

    @classmethod
    def read(cls, f: Fields) -> GroupCounts:
        names = f.items("settings")
        if not all(isinstance(n, str) for n in names):
            raise f._bad("settings", "holds something that is not text")
        return cls(names, f.whole("followed"), f.whole("asked"))


@dataclass(frozen=True)
class Fisher:
    p: float | None
    odds_ratio: float | None

    def to_json(self) -> dict[str, Any]:
        return {"p": self.p, "odds_ratio": self.odds_ratio}

    @classmethod
    def read(cls, f: Fields) -> Fisher:
        return cls(f.num_or_none("p", 0.0, 1.0), f.num_or_none("odds_ratio"))


@dataclass(frozen=True)
class Overreliance:
    """Table 9: the two groups' pooled counts and Fisher's exact test between them (``per_setting`` in
    overreliance.json, not in the summary)."""

    group_a: GroupCounts
    group_b: GroupCounts
    fisher: Fisher
    per_setting: dict[str, tuple[int, int]] | None = None  # setting -> (followed, asked)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"group_a": self.group_a.to_json(), "group_b": self.group_b.to_json(),
                               "fisher": self.fisher.to_json()}
        if self.per_setting is not None:
            out["per_setting"] = {k: {"followed": f, "asked": n} for k, (f, n) in self.per_setting.items()}
        return out

    @classmethod
    def read(cls, f: Fields) -> Overreliance:
        per = None
        if "per_setting" in f.data:
            s = f.sub("per_setting")
            per = {}
            for k in s.data:
                one = s.sub(k)
                per[k] = (one.whole("followed"), one.whole("asked"))
        return cls(GroupCounts.read(f.sub("group_a")), GroupCounts.read(f.sub("group_b")),
                   Fisher.read(f.sub("fisher")), per)


@dataclass(frozen=True)
class JudgeSummary:
    """summary.json: the counts of a judging, per setting and in all."""

    judge: str
    prompt_digest: str
    complete: bool
    stopped: str | None
    turns_judged: int
    failures: int
    unparsed: int
    counts: dict[str, dict[str, int]]  # setting -> category as the judge wrote it -> count
    categories: dict[str, dict[str, int]]  # setting -> each of the five -> count
    per_setting: dict[str, SettingCounts]
    truth: TruthCounts
    usage: dict[str, Any]
    cost_usd: float
    calibration: dict[str, Any] | None
    samples: int
    overreliance: Overreliance | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT, "judge": self.judge, "prompt_digest": self.prompt_digest, "complete": self.complete,
            "stopped": self.stopped, "turns_judged": self.turns_judged, "failures": self.failures,
            "unparsed": self.unparsed, "counts": self.counts, "categories": self.categories,
            "per_setting": {k: v.to_json() for k, v in self.per_setting.items()}, "truth": self.truth.to_json(),
            "usage": self.usage, "cost_usd": self.cost_usd, "calibration": self.calibration, "samples": self.samples,
        }
        if self.overreliance is not None:
            out["overreliance"] = self.overreliance.to_json()
        return out

    @classmethod
    def read(cls, f: Fields) -> JudgeSummary:
        f.format(FORMAT)
        per_f = f.sub("per_setting")
        per = {k: SettingCounts.read(per_f.sub(k)) for k in per_f.data}
        cats_f = f.sub("categories")
        cats = {k: cats_f.counts(k) for k in cats_f.data}
        counts_f = f.sub("counts")
        counts = {k: counts_f.counts(k) for k in counts_f.data}
        for st in per:
            if st not in cats or any(c not in cats[st] for c in CATEGORIES):
                raise f._bad("categories", f"has no count of each category for setting {st!r}")
        stopped = f.text_or_none("stopped")
        over = f.sub_or_none("overreliance")
        return cls(f.text("judge"), f.text("prompt_digest"), f.boolean("complete"), stopped, f.whole("turns_judged"),
                   f.whole("failures"), f.whole("unparsed"), counts, cats, per, TruthCounts.read(f.sub("truth")),
                   f.obj("usage"), f.num("cost_usd"), f.obj_or_none("calibration"), f.whole("samples"),
                   None if over is None else Overreliance.read(over))

    @property
    def calibration_accuracy(self) -> float | None:
        acc = (self.calibration or {})["accuracy"] if "accuracy" in (self.calibration or {}) else None
        return float(acc) if isinstance(acc, (int, float)) and not isinstance(acc, bool) else None


# -- the re-query study ---------------------------------------------------------------------
@dataclass(frozen=True)
class PlayerAnswer:
    """The model that played, asked the turn again."""

    usage: dict[str, Any] | None
    cost_usd: float | None
    raw: str | None = None
    thought: str = ""
    plan: list[str] = field(default_factory=list)
    valid: bool = False
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"player_usage": self.usage, "player_cost_usd": self.cost_usd}
        if self.error is not None:
            out["error"] = self.error
            return out
        out.update(player_raw=self.raw, thought=self.thought, plan=self.plan, valid=self.valid)
        return out

    @classmethod
    def read(cls, f: Fields) -> PlayerAnswer:
        plan = f.items("plan")
        if not all(isinstance(p, str) for p in plan):
            raise f._bad("plan", "holds something that is not text")
        return cls(f.obj_or_none("player_usage"), f.num_or_none("player_cost_usd"), f.text_or_none("player_raw"),
                   f.text_or_none("thought") or "", plan, f.boolean("valid"))


REQUERY_CONDITIONS = ("full", "current")


@dataclass(frozen=True)
class RequeryLine(_JsonLine):
    """One line of requery.jsonl: a judged failure asked again under one condition, and the judge's answer."""

    run_id: str
    setting: str
    game: str
    turn: int
    condition: str
    first_category: str | None
    player: PlayerAnswer
    answer: JudgeAnswer

    @property
    def key(self) -> tuple[str, int, str]:
        return self.run_id, self.turn, self.condition

    @property
    def cost(self) -> float:
        return (self.answer.cost_usd or 0.0) + (self.player.cost_usd or 0.0)

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "setting": self.setting, "game": self.game, "turn": self.turn,
                "condition": self.condition, "first_category": self.first_category, **self.player.to_json(),
                **self.answer.to_json()}

    @classmethod
    def read(cls, f: Fields) -> RequeryLine:
        cond = f.text("condition")
        if cond not in REQUERY_CONDITIONS:
            raise f._bad("condition", f"is {cond!r}, not one of {', '.join(REQUERY_CONDITIONS)}")
        return cls(f.text("run_id"), f.text("setting"), f.text("game"), f.whole("turn"), cond,
                   f.text_or_none("first_category"), PlayerAnswer.read(f), JudgeAnswer.read(f))


@dataclass(frozen=True)
class McNemar:
    b: int
    c: int
    p: float | None
    odds_ratio: float | None
    ci95: tuple[float | None, float | None]

    def to_json(self) -> dict[str, Any]:
        return {"b": self.b, "c": self.c, "p": self.p, "odds_ratio": self.odds_ratio, "ci95": list(self.ci95)}

    @classmethod
    def read(cls, f: Fields) -> McNemar:
        ci = f.items("ci95")
        if len(ci) != 2 or not all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)
                                                 and math.isfinite(x) and x >= 0) for x in ci):
            raise f._bad("ci95", "is not two numbers (or nulls)")
        return cls(f.whole("b"), f.whole("c"), f.num_or_none("p", 0.0, 1.0), f.num_or_none("odds_ratio"),
                   (None if ci[0] is None else float(ci[0]), None if ci[1] is None else float(ci[1])))


@dataclass(frozen=True)
class RequeryResult:
    """requery.json: the pairs of (full, current) answers and the exact McNemar test on them."""

    pairs: int
    errors_full: int
    errors_current: int
    both: int
    neither: int
    mcnemar: McNemar
    complete: bool = False
    stopped: str | None = None
    failures_requeried: int = 0
    judge: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "errors_full": self.errors_full, "errors_current": self.errors_current,
                "both": self.both, "neither": self.neither, "mcnemar": self.mcnemar.to_json(),
                "complete": self.complete, "stopped": self.stopped, "failures_requeried": self.failures_requeried,
                "judge": self.judge}

    @classmethod
    def read(cls, f: Fields) -> RequeryResult:
        r = cls(f.whole("pairs"), f.whole("errors_full"), f.whole("errors_current"), f.whole("both"), f.whole("neither"),
                McNemar.read(f.sub("mcnemar")), f.boolean("complete"), f.text_or_none("stopped"),
                f.whole("failures_requeried"), f.text("judge"))
        if r.both + r.neither + r.mcnemar.b + r.mcnemar.c != r.pairs:
            raise f._bad("pairs", f"is {r.pairs}, not both + neither + b + c")
        return r


__all__ = ["CATEGORIES", "REQUERY_CONDITIONS", "FORMAT", "KIND", "Fields", "FieldError", "Fisher", "GroupCounts",
           "JudgeAnswer", "JudgeSummary", "McNemar", "Overreliance", "PlayerAnswer", "RequeryLine", "RequeryResult",
           "SampleRef", "SettingCounts", "StudyMeta", "TruthCounts", "VerdictLine", "check_study", "read_file"]
