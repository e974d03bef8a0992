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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from workstation.errors import UserError
from workstation.qa.answers import lettered, parse_choice
from workstation.qa.qset import CATEGORIES, GROUPS, read_set
from workstation.store.atomic import write_atomic
from workstation.text_table import text_table
from workstation.turn.prompt import ImagePart, Message, Prompt, TextPart

ANSWERS = "answers.jsonl"
EVAL_FILE = "eval.json"
SUMMARY = "summary.json"
FORMAT = "atari-workstation-qa-eval/1"


class SetFrames:
    """A FrameSource over a question's PNG files, by budget frame index."""

    def __init__(self, root: Path, q: dict) -> None:
        self._files = {f["index"]: root / f["file"] for f in q["frames"]}

    def png(self, index: int) -> bytes:
        return self._files[index].read_bytes()

    def rgb(self, index: int) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(self.png(index))).convert("RGB"))


def build_prompt(root: Path, q: dict, guide: str | None = None) -> Prompt:
    parts: list = []
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

    def answer(self, q: dict, repeat: int) -> str:
        digest = hashlib.sha256(f"{self.seed}:{q['id']}:{repeat}".encode()).digest()
        return q["choices"][int.from_bytes(digest[:4], "little") % len(q["choices"])]


def set_digest(qs: list[dict]) -> str:
    h = hashlib.sha256()
    for q in qs:
        h.update(json.dumps([q["id"], q["question"], q["choices"], q["answer"], q["frames"]], sort_keys=True).encode())
    return h.hexdigest()[:16]


def _read_answers(path: Path) -> dict[tuple[str, int], dict]:
    done: dict[tuple[str, int], dict] = {}
    if not path.is_file():
        return done
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:  # a line cut off by a kill: that answer is asked again
            continue
        done[(r["id"], int(r["repeat"]))] = r
    return done


def run_eval(set_dir: Path, agent_spec: str, out: Path, repeats: int = 5, concurrency: int = 1,
             statuses: tuple[str, ...] = ("proposed", "accepted", "edited"), provider_options=None,
             prompts: str | None = None, seed: int = 0, progress=None, max_cost: float | None = None) -> dict:
    set_dir = Path(set_dir)
    qs = [q for q in read_set(set_dir) if q["status"] in statuses]
    if not qs:
        raise UserError(f"{set_dir} has no questions with status {', '.join(statuses)}")
    from workstation.qa.qset import check_frames

    check_frames(set_dir, qs)  # a damaged frame is refused before anything is asked or written
    if (Path(out) / EVAL_FILE).exists() and not (Path(out) / EVAL_FILE).is_file():
        raise UserError(f"{Path(out) / EVAL_FILE} is not a file; choose another --out")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "set": str(set_dir), "set_digest": set_digest(qs), "agent": agent_spec, "seed": seed,
            "repeats": repeats, "statuses": list(statuses)}
    meta_path = out / EVAL_FILE
    if meta_path.is_file():
        from workstation.store.records import read_json

        old = read_json(meta_path)
        for key in ("set_digest", "agent"):
            if old.get(key) != meta[key]:
                raise UserError(f"{out} holds an eval of {old.get('agent')} on another set or agent "
                                f"({key} differs); choose another --out")
    write_atomic(meta_path, json.dumps(meta, indent=1) + "\n")

    done = _read_answers(out / ANSWERS)
    todo = [(q, r) for q in qs for r in range(repeats)
            if (q["id"], r) not in done or done[(q["id"], r)].get("error")]
    guides = _guides(qs, prompts)
    lock = threading.Lock()
    sink = open(out / ANSWERS, "a", encoding="utf-8")
    if sink.tell() and not (out / ANSWERS).read_bytes().endswith(b"\n"):
        sink.write("\n")  # end a line cut off by a kill, so the next record starts a line of its own

    if agent_spec.strip().lower() == "random":
        chooser = RandomChooser(seed)
        ask = lambda q, r: _record(q, r, chooser.answer(q, r), None)  # noqa: E731
        closers: list = []
    else:
        ask, closers = _model_asker(set_dir, agent_spec, provider_options, guides)

    spent = [sum(r.get("cost_usd") or 0.0 for r in done.values())]

    def one(item):
        q, r = item
        if max_cost is not None and spent[0] >= max_cost:
            return  # past the cost cap: the rest stays to do (a rerun with a higher cap resumes)
        rec = ask(q, r)
        with lock:
            spent[0] += rec.get("cost_usd") or 0.0
            sink.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
            sink.flush()
            done[(q["id"], r)] = rec
            if progress:
                progress(len(done), len(qs) * repeats)

    try:
        if concurrency <= 1:
            for item in todo:
                one(item)
        else:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                list(pool.map(one, todo))
    finally:
        sink.close()
        for close in closers:
            close()
    summary = summarise(qs, done, repeats, meta)
    summary["stopped"] = "max cost" if max_cost is not None and spent[0] >= max_cost and not summary["complete"] else None
    write_atomic(out / SUMMARY, json.dumps(summary, indent=1) + "\n")
    return summary


def _guides(qs: list[dict], prompts: str | None) -> dict[str, str]:
    need = sorted({q["game"] for q in qs if q["category"] == "decision-long"})
    if not need:
        return {}
    from workstation.turn.promptpack import load_pack

    pack = load_pack(prompts)
    return {g: pack.guide(g, "full") for g in need}


def _record(q: dict, repeat: int, reply_text: str | None, reply) -> dict:
    parsed = parse_choice(reply_text, q["choices"]) if reply_text is not None else None
    rec = {"id": q["id"], "repeat": repeat, "game": q["game"], "category": q["category"],
           "answer": q["answer"], "reply": reply_text, "parsed": parsed, "correct": parsed == q["answer"]}
    if reply is not None:
        rec.update({
            "error": reply.error, "cost_usd": reply.cost_usd, "latency_s": round(reply.latency_s, 3),
            "usage": reply.usage.to_json() if reply.usage else None, "model": reply.model,
            "attempts": [a.to_json() for a in reply.attempts],
        })
    return rec


def _model_asker(set_dir: Path, spec: str, options, guides: dict[str, str]):
    from workstation.agents import AgentSpecError, make_agent
    from workstation.calls import FatalAgentError, TurnContext
    from workstation.game.games import get_game

    local = threading.local()
    made: list = []
    made_lock = threading.Lock()

    def agent_for(game):
        agent = getattr(local, "agent", None)
        if agent is None:
            try:
                agent = make_agent(spec, game, 0, options)
            except AgentSpecError as e:
                raise UserError(str(e)) from None
            local.agent = agent
            with made_lock:
                made.append(agent)
        return agent

    def ask(q: dict, r: int) -> dict:
        game = get_game(q["game"])
        prompt = build_prompt(set_dir, q, guides.get(q["game"]) if q["category"] == "decision-long" else None)
        ctx = TurnContext(game=game, turn=r, max_actions=1, frame=q["frames"][-1]["index"])
        try:
            reply = agent_for(game).act(prompt, ctx)
        except FatalAgentError as e:  # a bad key, an unknown model: every question would fail alike
            raise UserError(f"the agent {spec} failed for good on {q['id']}: {e}; answers so far are kept, "
                            "run the same command again to resume") from None
        return _record(q, r, reply.text if not reply.error else (reply.text or None), reply)

    def close_all():
        for a in made:
            try:
                a.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass

    return ask, [close_all]


def _share(correct: int, n: int) -> float | None:
    return None if n == 0 else correct / n


def summarise(qs: list[dict], done: dict[tuple[str, int], dict], repeats: int, meta: dict) -> dict:
    """Accuracy per group and category (the paper's Table 2 layout) and agreement per question."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # key -> [correct, answers]
    per_question = []
    cost = 0.0
    errors = sum(1 for q in qs for r in range(repeats) if done.get((q["id"], r), {}).get("error"))
    for q in qs:
        recs = [done[(q["id"], r)] for r in range(repeats) if (q["id"], r) in done]
        for rec in recs:
            for key in (q["category"], _group(q["category"]), "overall"):
                tally[key][0] += bool(rec["correct"])
                tally[key][1] += 1
            cost += rec.get("cost_usd") or 0.0
        given = Counter(rec["parsed"] for rec in recs)
        top = given.most_common(1)[0][1] if recs else 0
        per_question.append({"id": q["id"], "category": q["category"], "repeats": len(recs),
                             "correct": sum(bool(r["correct"]) for r in recs),
                             # agreement among repeats: none with fewer than two answers (one always agrees)
                             "agreement": _share(top, len(recs)) if len(recs) > 1 else None,
                             "answers": {str(k): v for k, v in given.items()}})
    accuracy: dict = {}
    for key in ("perception", "motion", "decision", "overall"):
        accuracy[key] = _share(*tally[key])
    for cat in CATEGORIES:
        c, n = tally[cat]
        accuracy[cat] = {"accuracy": _share(c, n), "correct": c, "answers": n}
    agreements = [p["agreement"] for p in per_question if p["agreement"] is not None]
    return {
        **meta,
        "questions": len(qs),
        "answers": tally["overall"][1],
        "errors": errors,
        "complete": tally["overall"][1] == len(qs) * repeats and errors == 0,
        "accuracy": accuracy,
        "counts": {k: tally[k][1] for k in ("perception", "motion", "decision", "overall", *CATEGORIES)},
        "agreement": _share(sum(agreements), len(agreements)) if agreements else None,
        "cost_usd": round(cost, 6),
        "per_question": per_question,
    }


def _group(cat: str) -> str:
    return next(g for g, cats in GROUPS.items() if cat in cats)


def wilson(correct: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson interval of ``correct`` of ``n`` (scipy), or None without answers."""
    if not n:
        return None
    from scipy.stats import binomtest

    ci = binomtest(int(correct), int(n)).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def row_label(s: dict) -> str:
    """An eval's row: its directory, the set and (for the random agent) the seed, besides the agent."""
    from pathlib import Path

    where = [Path(s["_dir"]).name] if s.get("_dir") else []
    if s.get("set"):
        where.append(f"set {Path(str(s['set'])).name}")
    if str(s.get("agent", "")).lower() == "random" and s.get("seed") is not None:
        where.append(f"seed {s['seed']}")
    return f"{s['agent']} ({', '.join(where)})" if where else str(s["agent"])


def table(summaries: list[dict]) -> str:
    """The paper's Table 2 layout: per eval, accuracy [95% Wilson interval] (answers) per group and overall."""
    head = ["eval", "perception", "motion", "decision", "overall", "agreement"]
    rows = [head]

    def share(v, n) -> str:
        if v is None or not n:
            return "-"
        ci = wilson(round(v * n), n)
        return f"{100 * v:.1f}% [{100 * ci[0]:.1f}-{100 * ci[1]:.1f}] ({n})"

    for s in summaries:
        ag = s.get("agreement")
        rows.append([row_label(s), *[share(s["accuracy"][k], s["counts"].get(k)) for k in
                                     ("perception", "motion", "decision", "overall")],
                     "-" if ag is None else f"{100 * ag:.0f}%"])
    lines = text_table(rows)
    lines.append("(accuracy [95% Wilson interval] (answers))")
    for s in summaries:
        cells = []
        for c in CATEGORIES:
            v = s["accuracy"].get(c)
            if not isinstance(v, dict):
                continue
            cells.append(f"{c} {share(v.get('accuracy'), v.get('answers'))}")
        lines.append(f"{row_label(s)}: " + ", ".join(cells))
    return "\n".join(lines)
