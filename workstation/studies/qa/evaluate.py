"""Score an agent on a question set (``workstation qa eval``).

Each question goes out as the paper asks it: the question and its lettered
choices, then the frames, each after its paper-clock timestamp; a
``decision-long`` question first gets the game's guide from the prompt pack. It
goes through the same agents as a run (``make_agent``: providers, limiter,
retries, cost accounting). Every (question, repeat) is one line of
``answers.jsonl`` in the output directory, appended as it completes; a rerun
skips what is done (a call that failed without a reply is tried again), so an
interrupted eval resumes. ``summary.json`` is rewritten at the end.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from workstation.base.errors import UserError
from workstation.base.text_table import text_table
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.store.atomic import write_atomic
from workstation.store.ledger import Ledger
from workstation.store.seal import SEAL, check_seal, seal
from workstation.studies.qa.answers import lettered, parse_choice
from workstation.studies.qa.qset import GROUPS, QA_CATEGORIES, read_set

ANSWERS = "answers.jsonl"
EVAL_FILE = "eval.json"
SUMMARY = "summary.json"
FORMAT = "atari-workstation-qa-eval/1"
EVAL_KIND = "qa-eval"

if TYPE_CHECKING:
    from workstation.engine.agent import Agent
    from workstation.engine.calls import Reply
    from workstation.game.games import Game
    from workstation.run.providers import ProviderOptions


class SetFrames:
    """A FrameSource over a question's PNG files, by budget frame index."""

    def __init__(self, root: Path, q: dict[str, Any]) -> None:
        self._files = {f["index"]: root / f["file"] for f in q["frames"]}

    def png(self, index: int) -> bytes:
        data: bytes = self._files[index].read_bytes()
        return data

    def rgb(self, index: int) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(self.png(index))).convert("RGB"))


def build_prompt(root: Path, q: dict[str, Any], guide: str | None = None) -> Prompt:
    parts: list[Any] = []
    if guide:
        parts.append(TextPart(f"About the game:\n{guide.strip()}\n\n"))
    parts.append(TextPart(f"{q['question']}\nChoices: {lettered(q['choices'])}\n"
                          "Reply with one of the choices.\n"))
    for f in q["frames"]:
        parts.append(TextPart(f"\nFrame at {f['t']}:\n"))
        parts.append(ImagePart(f["index"]))
    return Prompt([Message("user", parts)], SetFrames(root, q))


@dataclass
class RandomChooser:
    """The ``random`` baseline: a uniformly random choice, seeded per question and repeat."""

    seed: int = 0
    spec: str = "random"

    def answer(self, q: dict[str, Any], repeat: int) -> str:
        digest = hashlib.sha256(f"{self.seed}:{q['id']}:{repeat}".encode()).digest()
        return str(q["choices"][int.from_bytes(digest[:4], "little") % len(q["choices"])])


def set_digest(qs: list[dict[str, Any]]) -> str:
    h = hashlib.sha256()
    for q in qs:
        h.update(json.dumps([q["id"], q["question"], q["choices"], q["answer"], q["frames"]], sort_keys=True).encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Answer:
    """One line of answers.jsonl: a question asked once (one repeat) and what came back."""

    id: str
    repeat: int
    game: str
    category: str
    answer: str
    reply: str | None
    parsed: str | None
    correct: bool
    call: dict[str, Any] | None = None  # error, cost_usd, latency_s, usage, model, attempts (a model's answer)

    @property
    def key(self) -> tuple[str, int]:
        return self.id, self.repeat

    @property
    def error(self) -> str | None:
        e = (self.call or {})["error"] if "error" in (self.call or {}) else None
        return e if isinstance(e, str) and e else None

    @property
    def cost_usd(self) -> float:
        c = (self.call or {})["cost_usd"] if "cost_usd" in (self.call or {}) else None
        return float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else 0.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "repeat": self.repeat, "game": self.game, "category": self.category,
                               "answer": self.answer, "reply": self.reply, "parsed": self.parsed,
                               "correct": self.correct}
        if self.call is not None:
            out.update(self.call)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> Answer:
        from workstation.store.records import check_fields

        d = check_fields(data, ANSWER_FIELDS, where)
        unknown = sorted(k for k in d if k not in ANSWER_FIELDS and k not in CALL_KEYS)
        if unknown:
            from workstation.store.records import RecordFileError

            raise RecordFileError(f"{where}: field {unknown[0]!r} is not a field of an answer")
        call = {k: v for k, v in d.items() if k in CALL_KEYS} or None
        return cls(d["id"], int(d["repeat"]), d["game"], d["category"], d["answer"], d["reply"] if "reply" in d else None,
                   d["parsed"] if "parsed" in d else None, d["correct"], call)


ANSWER_FIELDS: dict[str, tuple[Any, ...]] = {
    "id": ("str", False), "repeat": ("int", False, 0, 10**6), "game": ("str", False), "category": ("str", False),
    "answer": ("str", False), "reply": ("str", True), "parsed": ("str", True), "correct": ("bool", False),
    "error": ("str", True), "cost_usd": ("num", True, 0, 1e9), "latency_s": ("num", True, 0, 1e9)}
CALL_KEYS = ("error", "cost_usd", "latency_s", "usage", "model", "attempts")


def answer_ledger(out: Path) -> Ledger[Answer]:
    """The answers of an eval; a call that failed without a reply is asked again (``redo``)."""
    return Ledger(out / ANSWERS, Answer.from_json, lambda r: r.key, cost=lambda r: r.cost_usd,
                  redo=lambda r: r.error is not None, what="QA answers")


EVAL_FIELDS: dict[str, tuple[Any, ...]] = {
    "format": ("str", False), "set": ("str", False), "set_digest": ("str", False), "agent": ("str", False),
    "seed": ("seed", False), "repeats": ("int", False, 1, 10**6), "statuses": ("list", False)}


def check_eval(out: Path) -> None:
    """An eval directory's seal holds (one written before seals passes), and, whatever the seal says, every
    record has its type: eval.json an object with its fields, every line of answers.jsonl an answer. A
    record that fails is damage (``DamagedArtifact``, exit 1): the eval is named and never counted."""
    from workstation.base.errors import DamagedArtifact
    from workstation.store.records import RecordFileError, check_fields, read_json
    from workstation.studies.qa.qset import readable

    out = Path(out)
    readable(out)
    check_seal(out, EVAL_KIND, what="QA eval", missing_ok=True)
    meta = out / EVAL_FILE
    if meta.exists():
        try:
            with open(meta, "rb"):
                pass
        except OSError as e:  # a directory, no permission: not damage
            raise UserError(f"{meta} cannot be read ({e.strerror or e}); give an eval directory whose {EVAL_FILE} "
                            "is a readable file", file=meta) from None
        try:
            data = read_json(meta)
            check_fields(data, EVAL_FIELDS, str(meta))
            if data["format"] != FORMAT:
                raise RecordFileError(f"{meta}: field 'format' is {data['format']!r}, not {FORMAT!r}")
            if not all(isinstance(x, str) for x in data["statuses"]):
                raise RecordFileError(f"{meta}: field 'statuses' holds something other than text")
        except RecordFileError as e:
            raise DamagedArtifact(f"QA eval {out} is damaged: {e}; it is left as it is and not counted",
                                  file=meta) from None
    answer_ledger(out)  # every line an answer (a line that is not is damage, named)


def default_out(set_dir: Path, agent_spec: str) -> Path:
    """Where an eval goes without --out: beside its set, ``<SET>-evals/<agent>`` (a set is an input, and an
    eval is never written inside it; ``qa table SET-evals/*`` finds the evals of one set together)."""
    import re

    set_dir = Path(set_dir)
    if set_dir.name in ("", ".", ".."):  # `qa eval .`: beside the directory it names
        set_dir = set_dir.resolve()
    return set_dir.parent / f"{set_dir.name or 'set'}-evals" / re.sub(r"[^A-Za-z0-9._-]+", "-", agent_spec.strip())


def check_out_outside(out: Path, set_dir: Path, prompts: str | None = None) -> None:
    """An eval's --out is neither its question set nor the prompt pack, nor anywhere inside one (an eval never
    writes inside its inputs), nor inside another sealed artifact (a batch, an arena...: its own earlier eval
    resumes); checked before anything is asked or written."""
    from workstation.store.local_paths import refuse_inside_artifacts

    try:
        target = Path(out).expanduser().resolve()
    except (OSError, RuntimeError):
        return
    for flag, path in (("the question set", set_dir), ("--prompts", prompts)):
        if path is None:
            continue
        root = Path(path).expanduser().resolve()
        if target == root or root in target.parents:
            raise UserError(f"--out {out} is inside {flag} {path}, an input; an eval is never written inside it: "
                            f"choose a directory outside it (the default is {default_out(set_dir, 'AGENT')})",
                            "out", file=out)
    refuse_inside_artifacts(out, "--out", "qa eval", own=EVAL_KIND)


def summary_problem(summary: EvalSummary, out: Path) -> str | None:
    """What in an eval's summary its own answers contradict, or None. The summary's figures must add up
    (each accuracy its correct over answers, each group the sum of its categories), and no category may
    count more answers, or more correct ones, than answers.jsonl holds for the summary's questions and
    repeats (it may count fewer: a summary from before a resume that was stopped)."""
    ids = {q.id for q in summary.per_question}
    repeats = summary.meta["repeats"] if isinstance(summary.meta.get("repeats"), int) else None
    last = {r.key: r for r in answer_ledger(out).records}
    held: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (qid, rep), rec in last.items():
        if qid in ids and (repeats is None or rep < repeats):
            held[rec.category][0] += bool(rec.correct)
            held[rec.category][1] += 1

    def off(value: float | None, c: int, n: int) -> bool:
        share = _share(c, n)
        return (value is None) != (share is None) or (value is not None and share is not None
                                                      and abs(value - share) > 1e-9)

    cats = summary.accuracy.categories
    for c, v in cats.items():
        if v.correct > v.answers or off(v.accuracy, v.correct, v.answers):
            return f"accuracy.{c} is not its correct over its answers"
        if v.answers > held[c][1] or v.correct > held[c][0]:
            return (f"accuracy.{c} counts {v.correct} correct of {v.answers}; answers.jsonl holds "
                    f"{held[c][0]} of {held[c][1]}")
    for g in GROUP_KEYS:
        members = [c for c in QA_CATEGORIES if c in cats and (g == "overall" or _group(c) == g)]
        c_sum, n_sum = sum(cats[c].correct for c in members), sum(cats[c].answers for c in members)
        if len(members) == sum(1 for c in QA_CATEGORIES if g == "overall" or _group(c) == g):
            if off(summary.accuracy.group(g), c_sum, n_sum):
                return f"accuracy.{g} is not the share of its categories' correct answers"
            if g in summary.counts and summary.counts[g] != n_sum:
                return f"counts.{g} is {summary.counts[g]}, its categories hold {n_sum}"
    return None


def run_eval(set_dir: Path, agent_spec: str, out: Path, repeats: int = 5, concurrency: int = 1,
             statuses: tuple[str, ...] = ("proposed", "accepted", "edited"),
             provider_options: ProviderOptions | None = None, prompts: str | None = None, seed: int = 0,
             progress: Callable[[int, int], None] | None = None, max_cost: float | None = None) -> EvalSummary:
    set_dir = Path(set_dir)
    qs = [q for q in read_set(set_dir) if q["status"] in statuses]
    if not qs:
        raise UserError(f"{set_dir} has no questions with status {', '.join(statuses)}")
    from workstation.studies.qa.qset import check_frames

    check_frames(set_dir, qs)  # a damaged frame is refused before anything is asked or written
    out = Path(out)
    check_out_outside(out, set_dir, prompts)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; choose a directory", "out", file=out)
    if (out / EVAL_FILE).exists() and not (out / EVAL_FILE).is_file():
        raise UserError(f"{out / EVAL_FILE} is not a file; choose another --out", "out", file=out)
    meta = {"format": FORMAT, "set": str(set_dir), "set_digest": set_digest(qs), "agent": agent_spec, "seed": seed,
            "repeats": repeats, "statuses": list(statuses)}
    meta_path = out / EVAL_FILE
    old: dict[str, Any] | None = None
    if meta_path.is_file():
        from workstation.store.ledger import identity_problem
        from workstation.store.records import read_json

        check_eval(out)
        old = read_json(meta_path)
        identity = ("set_digest", "agent")
        problem = identity_problem({k: old[k] for k in identity if k in old}, {k: meta[k] for k in identity})
        if problem:
            raise UserError(f"{out} holds an eval on another set or agent ({problem}); choose another --out", "out",
                            file=out)
    elif out.is_dir() and any(out.iterdir()):
        if (out / SUMMARY).exists() or (out / ANSWERS).exists() or (out / "manifest.json").exists():
            raise UserError(f"--out {out} holds something that is not a QA eval; choose another --out", "out",
                            file=out)
    ledger = answer_ledger(out)  # every line read and checked before anything is asked
    todo = [(q, r) for q in qs for r in range(repeats) if not ledger.is_done((q["id"], r))]
    guides = _guides(qs, prompts)
    out.mkdir(parents=True, exist_ok=True)
    (out / SEAL).unlink(missing_ok=True)  # checked above; sealed again when this run ends
    if old != meta:
        write_atomic(meta_path, json.dumps(meta, indent=1) + "\n")
    lock = threading.Lock()

    ask: Callable[[dict[str, Any], int], Answer]
    closers: list[Callable[[], None]]
    if agent_spec.strip().lower() == "random":
        chooser = RandomChooser(seed)

        def ask(q: dict[str, Any], r: int) -> Answer:
            return _record(q, r, chooser.answer(q, r), None)

        closers = []
    else:
        ask, closers = _model_asker(set_dir, agent_spec, provider_options, guides)

    spent = [ledger.spent]

    def one(item: tuple[dict[str, Any], int]) -> None:
        q, r = item
        if max_cost is not None and spent[0] >= max_cost:
            return  # past the cost cap: the rest stays to do (a rerun with a higher cap resumes)
        rec = ask(q, r)
        with lock:
            spent[0] += rec.cost_usd
        ledger.append(rec, rec.to_json())
        if progress:
            progress(len(ledger.done), len(qs) * repeats)

    try:
        if concurrency <= 1:
            for item in todo:
                one(item)
        else:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                list(pool.map(one, todo))
    except BaseException:
        seal(out, EVAL_KIND, appendable=[ANSWERS])  # stopped by an error: the answers so far are whole
        raise
    finally:
        for close in closers:
            close()
    last = {r.key: r for r in ledger.records}  # the latest line of each (question, repeat), failed calls too
    summary = summarise(qs, last, repeats, meta)
    stopped = "max cost" if max_cost is not None and spent[0] >= max_cost and not summary.complete else None
    summary = replace(summary, stopped=stopped)
    write_atomic(out / SUMMARY, json.dumps(summary.to_json(), indent=1) + "\n")
    seal(out, EVAL_KIND, appendable=[ANSWERS])
    return summary


def _guides(qs: list[dict[str, Any]], prompts: str | None) -> dict[str, str]:
    need = sorted({q["game"] for q in qs if q["category"] == "decision-long"})
    if not need:
        return {}
    from workstation.engine.promptpack import load_pack

    pack = load_pack(prompts)
    return {g: pack.guide(g, "full") for g in need}


def _record(q: dict[str, Any], repeat: int, reply_text: str | None, reply: Reply | None) -> Answer:
    parsed = parse_choice(reply_text, q["choices"]) if reply_text is not None else None
    call = None
    if reply is not None:
        call = {"error": reply.error, "cost_usd": reply.cost_usd, "latency_s": round(reply.latency_s, 3),
                "usage": reply.usage.to_json() if reply.usage else None, "model": reply.model,
                "attempts": [a.to_json() for a in reply.attempts]}
    return Answer(q["id"], repeat, q["game"], q["category"], q["answer"], reply_text, parsed, parsed == q["answer"],
                  call)


def _model_asker(set_dir: Path, spec: str, options: ProviderOptions | None, guides: dict[str, str]
                 ) -> tuple[Callable[[dict[str, Any], int], Answer], list[Callable[[], None]]]:
    from workstation.engine.calls import FatalAgentError, TurnContext
    from workstation.game.games import get_game
    from workstation.run.agents import AgentSpecError, make_agent

    local = threading.local()
    made: list[Agent] = []
    made_lock = threading.Lock()

    def agent_for(game: Game) -> Agent:
        agent: Agent | None = getattr(local, "agent", None)
        if agent is None:
            try:
                agent = make_agent(spec, game, 0, options)
            except AgentSpecError as e:
                raise UserError(str(e)) from None
            local.agent = agent
            with made_lock:
                made.append(agent)
        return agent

    def ask(q: dict[str, Any], r: int) -> Answer:
        game = get_game(q["game"])
        prompt = build_prompt(set_dir, q, guides.get(q["game"]) if q["category"] == "decision-long" else None)
        ctx = TurnContext(game=game, turn=r, max_actions=1, frame=q["frames"][-1]["index"])
        try:
            reply = agent_for(game).act(prompt, ctx)
        except FatalAgentError as e:  # a bad key, an unknown model: every question would fail alike
            raise UserError(f"the agent {spec} failed for good on {q['id']}: {e}; answers so far are kept, "
                            "run the same command again to resume") from None
        return _record(q, r, reply.text if not reply.error else (reply.text or None), reply)

    def close_all() -> None:
        for a in made:
            try:
                a.close()
            except Exception:  # closing is best effort
                pass

    return ask, [close_all]


def _share(correct: float, n: int) -> float | None:
    return None if n == 0 else correct / n


GROUP_KEYS = ("perception", "motion", "decision", "overall")
META_KEYS = ("format", "set", "set_digest", "agent", "seed", "repeats", "statuses")
SUMMARY_FIELDS: dict[str, tuple[Any, ...]] = {
    "agent": ("str", False), "set": ("str", True), "set_digest": ("str", True), "seed": ("seed", True),
    "repeats": ("int", True, 1, 10**6), "questions": ("int", True, 0, 10**9), "answers": ("int", True, 0, 10**9),
    "errors": ("int", True, 0, 10**9), "complete": ("bool", True), "accuracy": ("dict", False),
    "counts": ("dict", False), "agreement": ("num", True, 0, 1), "cost_usd": ("num", True, 0, 1e9),
    "per_question": ("list", True), "stopped": ("str", True)}


@dataclass(frozen=True)
class CategoryAccuracy:
    accuracy: float | None
    correct: int
    answers: int

    def to_json(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "correct": self.correct, "answers": self.answers}


@dataclass(frozen=True)
class Accuracy:
    """Accuracy per group and overall (None without answers), and per category."""

    perception: float | None
    motion: float | None
    decision: float | None
    overall: float | None
    categories: dict[str, CategoryAccuracy]

    def group(self, key: str) -> float | None:
        return {"perception": self.perception, "motion": self.motion, "decision": self.decision,
                "overall": self.overall}[key]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: self.group(k) for k in GROUP_KEYS}
        out.update({c: v.to_json() for c, v in self.categories.items()})
        return out


@dataclass(frozen=True)
class QuestionTally:
    id: str
    category: str
    repeats: int
    correct: int
    agreement: float | None
    answers: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "category": self.category, "repeats": self.repeats, "correct": self.correct,
                "agreement": self.agreement, "answers": self.answers}


@dataclass(frozen=True)
class EvalSummary:
    """summary.json of a QA eval: the eval's identity (eval.json), then accuracy per group and category."""

    meta: dict[str, Any]  # format, set, set_digest, agent, seed, repeats, statuses
    questions: int
    answers: int
    errors: int
    complete: bool
    accuracy: Accuracy
    counts: dict[str, int]
    agreement: float | None
    cost_usd: float
    per_question: list[QuestionTally]
    stopped: str | None = None
    dir: str | None = None  # where it was read from (a row's label names it; never written)

    @property
    def agent(self) -> str:
        return str(self.meta["agent"]) if "agent" in self.meta else "?"

    def meta_text(self, key: str) -> str | None:
        v = self.meta[key] if key in self.meta else None
        return None if v is None else str(v)

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str, directory: str | None = None) -> EvalSummary:
        """A summary.json, checked field by field (one line naming ``where`` and the field)."""
        from workstation.store.records import RecordFileError, check_fields

        check_fields(data, SUMMARY_FIELDS, where)
        acc = data["accuracy"]
        if not isinstance(acc, dict):
            raise RecordFileError(f"{where}: field 'accuracy' is not an object")
        missing = [g for g in GROUP_KEYS if g not in acc]
        if missing:
            raise RecordFileError(f"{where}: field 'accuracy.{missing[0]}' is missing; run `workstation qa eval` again")
        check_fields(acc, {g: ("num", True, 0, 1) for g in GROUP_KEYS}, f"{where} accuracy")
        cats = {}
        for c in QA_CATEGORIES:
            if c in acc:
                if not isinstance(acc[c], dict):
                    raise RecordFileError(f"{where}: field 'accuracy.{c}' is not an object")
                v = check_fields(acc[c], {"accuracy": ("num", True, 0, 1), "correct": ("int", False, 0, 10**9),
                                          "answers": ("int", False, 0, 10**9)}, f"{where} accuracy.{c}")
                cats[c] = CategoryAccuracy(v["accuracy"] if "accuracy" in v else None, int(v["correct"]),
                                           int(v["answers"]))
        counts = data["counts"]
        bad = [k for k, n in counts.items() if isinstance(n, bool) or not isinstance(n, int) or n < 0]
        if bad:
            raise RecordFileError(f"{where}: field 'counts.{bad[0]}' is not a whole number of 0 or more")
        tallies = []
        for i, q in enumerate(data["per_question"] if "per_question" in data else []):
            if not isinstance(q, dict):
                raise RecordFileError(f"{where}: field 'per_question[{i}]' is not an object")
            t = check_fields(q, {"id": ("str", False), "category": ("str", False), "repeats": ("int", False, 0, 10**6),
                                 "correct": ("int", False, 0, 10**6), "agreement": ("num", True, 0, 1),
                                 "answers": ("dict", False)}, f"{where} per_question[{i}]")
            tallies.append(QuestionTally(t["id"], t["category"], int(t["repeats"]), int(t["correct"]),
                                         t["agreement"] if "agreement" in t else None, dict(t["answers"])))
        meta = {k: data[k] for k in META_KEYS if k in data}

        def opt(key: str, default: Any = None) -> Any:
            return data[key] if key in data else default

        group = [acc[g] for g in GROUP_KEYS]
        return cls(meta, int(opt("questions", 0)), int(opt("answers", 0)), int(opt("errors", 0)),
                   bool(opt("complete", False)), Accuracy(group[0], group[1], group[2], group[3], cats),
                   dict(counts), opt("agreement"), float(opt("cost_usd", 0.0)), tallies, opt("stopped"), directory)

    @property
    def set_digest(self) -> str | None:
        d = self.meta["set_digest"] if "set_digest" in self.meta else None
        return d if isinstance(d, str) else None

    def calibration(self, qa_set: str) -> dict[str, Any]:
        """What a judge study records of the eval it was calibrated by."""
        a = self.accuracy
        return {"set": qa_set, "set_digest": self.set_digest, "accuracy": a.overall, "answers": self.answers,
                "complete": self.complete, "by_group": {"perception": a.perception, "motion": a.motion,
                                                        "decision": a.decision}}

    def to_json(self) -> dict[str, Any]:
        return {**self.meta, "questions": self.questions, "answers": self.answers, "errors": self.errors,
                "complete": self.complete, "accuracy": self.accuracy.to_json(), "counts": self.counts,
                "agreement": self.agreement, "cost_usd": self.cost_usd,
                "per_question": [p.to_json() for p in self.per_question], "stopped": self.stopped}


def summarise(qs: list[dict[str, Any]], done: dict[tuple[str, int], Answer], repeats: int,
              meta: dict[str, Any]) -> EvalSummary:
    """Accuracy per group and category (the paper's Table 2 layout) and agreement per question."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # key -> [correct, answers]
    per_question = []
    cost = 0.0
    errors = sum(1 for q in qs for r in range(repeats) if (q["id"], r) in done and done[(q["id"], r)].error)
    for q in qs:
        recs = [done[(q["id"], r)] for r in range(repeats) if (q["id"], r) in done]
        for rec in recs:
            for key in (q["category"], _group(q["category"]), "overall"):
                tally[key][0] += bool(rec.correct)
                tally[key][1] += 1
            cost += rec.cost_usd
        given = Counter(rec.parsed for rec in recs)
        top = given.most_common(1)[0][1] if recs else 0
        per_question.append(QuestionTally(q["id"], q["category"], len(recs), sum(bool(r.correct) for r in recs),
                                          # agreement among repeats: none with fewer than two answers
                                          _share(top, len(recs)) if len(recs) > 1 else None,
                                          {str(k): v for k, v in given.items()}))
    cats = {}
    for cat in QA_CATEGORIES:
        c, n = tally[cat]
        cats[cat] = CategoryAccuracy(_share(c, n), c, n)
    p, m, d, o = (_share(*tally[k]) for k in GROUP_KEYS)
    accuracy = Accuracy(p, m, d, o, cats)
    agreements = [p.agreement for p in per_question if p.agreement is not None]
    return EvalSummary(
        meta=meta, questions=len(qs), answers=tally["overall"][1], errors=errors,
        complete=tally["overall"][1] == len(qs) * repeats and errors == 0, accuracy=accuracy,
        counts={k: tally[k][1] for k in (*GROUP_KEYS, *QA_CATEGORIES)},
        agreement=_share(sum(agreements), len(agreements)) if agreements else None, cost_usd=round(cost, 6),
        per_question=per_question)


def _group(cat: str) -> str:
    return next(g for g, cats in GROUPS.items() if cat in cats)


def wilson(correct: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson interval of ``correct`` of ``n`` (scipy), or None without answers."""
    if not n:
        return None
    from scipy.stats import binomtest

    ci = binomtest(int(correct), int(n)).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def row_label(s: EvalSummary) -> str:
    """An eval's row: its directory, the set and (for the random agent) the seed, besides the agent."""
    where = [Path(s.dir).name] if s.dir else []
    qa_set = s.meta_text("set")
    if qa_set:
        where.append(f"set {Path(qa_set).name}")
    seed = s.meta_text("seed")
    if s.agent.lower() == "random" and seed is not None:
        where.append(f"seed {seed}")
    return f"{s.agent} ({', '.join(where)})" if where else s.agent


def table(summaries: list[EvalSummary]) -> str:
    """The paper's Table 2 layout: per eval, accuracy [95% Wilson interval] (answers) per group and overall."""
    head = ["eval", "perception", "motion", "decision", "overall", "agreement"]
    rows = [head]

    def share(v: float | None, n: int | None) -> str:
        if v is None or not n:
            return "-"
        ci = wilson(round(v * n), n)
        assert ci is not None
        return f"{100 * v:.1f}% [{100 * ci[0]:.1f}-{100 * ci[1]:.1f}] ({n})"

    for s in summaries:
        ag = s.agreement
        rows.append([row_label(s), *[share(s.accuracy.group(k), s.counts[k] if k in s.counts else None)
                                     for k in GROUP_KEYS],
                     "-" if ag is None else f"{100 * ag:.0f}%"])
    lines = text_table(rows)
    lines.append("(accuracy [95% Wilson interval] (answers))")
    for s in summaries:
        cells = [f"{c} {share(v.accuracy, v.answers)}" for c, v in s.accuracy.categories.items()]
        lines.append(f"{row_label(s)}: " + ", ".join(cells))
    return "\n".join(lines)
