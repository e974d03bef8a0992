"""Run the judge over the sampled turns: ask, check, record, resume, cap the cost.

``DIR/judge.json`` says what the judging is (judge spec, prompt digest, sampling, the samples,
the calibration); ``DIR/verdicts.jsonl`` gets one line per judged turn, appended as it is
answered; ``DIR/summary.json`` is rewritten from all the lines at the end. A turn with a line
is never asked again; a turn the provider gave no reply for gets no line and is asked on the next
run. The judge is a provider agent (``workstation.providers``): the same SDK adapters, retries,
adaptive limiter and price table as a run.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from workstation.errors import UserError
from workstation.judge.evidence import Blinder, judge_request, with_retry_note
from workstation.judge.sample import Sample, choose, read_sources
from workstation.judge.verdict import (
    CATEGORIES,
    JudgePrompt,
    VerdictError,
    parse_verdict,
)
from workstation.store.recording import Recording
from workstation.store.records import add_usage

FORMAT = "atari-workstation-judge/1"
META, VERDICTS, SUMMARY = "judge.json", "verdicts.jsonl", "summary.json"


@dataclass
class JudgeJob:
    sources: list[str]
    judge: str
    out: Path
    prompt: JudgePrompt
    options: object = None  # ProviderOptions
    turns: int = 5
    gap: int = 5
    seed: int = 0
    max_cost: float | None = None
    groups: tuple[list[str], list[str]] | None = None
    calibration: dict | None = None
    concurrency: int = 1  # turns in flight at once (1: asked in order, the cap exact)
    progress: object = None  # callable(done, total) or None
    notes: list[str] = field(default_factory=list)


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_lines(path: Path) -> list[dict]:
    """The JSON lines of a file; a line cut off by a kill is skipped (that item is asked again)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def _append(path: Path):
    sink = open(path, "a", encoding="utf-8")
    if sink.tell() and not path.read_bytes().endswith(b"\n"):
        sink.write("\n")  # end a line a kill cut off, so the next record starts its own
    return sink


def make_judge_agent(spec: str, options):
    """The judge as a provider agent; UserError for a spec that is no model or cannot be made."""
    from workstation.agents import AgentSpecError, parse_agent
    from workstation.providers import (
        ProviderConfigError,
        ProviderOptions,
        make_provider_agent,
    )

    try:
        ref = parse_agent(spec)
    except AgentSpecError as e:
        raise UserError(f"--judge: {e}") from None
    if not ref.is_model:
        raise UserError(f"--judge {spec!r} is not a model; use openai:M, compat:M, anthropic:M or gemini:M")
    try:
        return make_provider_agent(spec, options or ProviderOptions())
    except ProviderConfigError as e:
        raise UserError(f"--judge: {e}") from None


def ask(agent, prompt, ctx, jp: JudgePrompt) -> dict:
    """One verdict: ask, read; on an unreadable answer ask once more with what was wrong; never guess."""
    from workstation.calls import FatalAgentError

    usage, cost, calls, raws, problem = None, 0.0, 0, [], None
    priced = True
    for attempt in range(2):
        try:
            reply = agent.act(prompt, ctx)
        except FatalAgentError as e:
            raise UserError(f"the judge failed for good: {e}; verdicts so far are kept, run the same command "
                            "again to resume") from None
        calls += 1
        if reply.usage is not None:
            usage = add_usage(usage, reply.usage.to_json())
            if reply.cost_usd is None:
                priced = False
            cost += reply.cost_usd or 0.0
        if reply.error:
            return {"error": reply.error, "usage": usage, "cost_usd": cost if priced else None, "calls": calls}
        raws.append(reply.text)
        try:
            v = parse_verdict(reply.text)
        except VerdictError as e:
            problem = str(e)
            if attempt == 0:
                prompt = with_retry_note(prompt, jp, reply.text, problem)
            continue
        return {**v.to_json(), "parsed": True, "raw": reply.text, "usage": usage,
                "cost_usd": round(cost, 8) if priced and usage else None, "calls": calls,
                "retried": attempt == 1}
    return {"failure": None, "category": None, "group": None, "subtype": None, "evidence": None,
            "text_cue_followed": None, "parsed": False, "problem": problem, "raw": raws[-1] if raws else None,
            "raw_first": raws[0] if raws else None, "usage": usage,
            "cost_usd": round(cost, 8) if priced and usage else None, "calls": calls, "retried": True}


def _meta(job: JudgeJob, samples: list[Sample]) -> dict:
    options = job.options.to_json() if job.options is not None else None
    prompt = {"name": job.prompt.name, "digest": job.prompt.digest, "path": job.prompt.path}
    return {"format": FORMAT, "judge": job.judge, "options": options, "prompt": prompt, "sources": job.sources,
            "turns": job.turns, "gap": job.gap, "seed": job.seed, "samples": [s.to_json() for s in samples],
            "calibration": job.calibration}


def check_meta(out: Path, judge: str, digest: str, sampling: dict | None = None) -> dict | None:
    """What an earlier judging in ``out`` was (None for a new directory); UserError when ``out`` is
    something else (a file, a recording, a batch, another judging) that must not be written into."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; name a directory for the verdicts")
    path = out / META
    if not path.is_file():
        for name, what in (("manifest.json", "a recording"), ("results.csv", "a batch"), (SUMMARY, "another result")):
            if (out / name).exists():
                raise UserError(f"--out {out} holds {what} ({name}); name a new directory for the verdicts")
        return None
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        raise UserError(f"{path}: not readable; choose another --out") from None
    if old.get("format") != FORMAT:
        raise UserError(f"{out} is not a judge directory (its {META} is something else); choose another --out")
    if old.get("judge") != judge or (old.get("prompt") or {}).get("digest") != digest:
        raise UserError(f"{out} holds verdicts of {old.get('judge')} with prompt {(old.get('prompt') or {}).get('digest')}; "
                        "a different judge or prompt needs another --out")
    if sampling is not None and {k: old.get(k) for k in sampling} != sampling:
        flags = " ".join(f"--{k} {old.get(k)}" for k in sampling)
        raise UserError(f"{out} was sampled with {flags}; resume with the same or choose another --out")
    return old


def run_judge(job: JudgeJob) -> dict:
    out = job.out
    old = check_meta(out, job.judge, job.prompt.digest, {"turns": job.turns, "gap": job.gap, "seed": job.seed})
    from workstation.agents.registry import is_model

    runs = read_sources(job.sources)
    if not runs:
        raise UserError("the sources hold no runs")
    others = sorted({r.setting for r in runs if not is_model(r.agent)})
    runs = [r for r in runs if is_model(r.agent)]  # a baseline (random, replay, human) has no reasoning to judge
    if others:
        job.notes.append(f"not judged (not a model): {', '.join(others)}")
    if not runs:
        raise UserError("the sources hold no model runs (only " + ", ".join(others) + "); the judge judges models")
    samples = choose(runs, job.turns, job.gap, job.seed)
    if not samples:
        raise UserError("no setting x game has a complete run nobody changed by hand; nothing to judge")
    if job.calibration is None and old:
        job.calibration = old.get("calibration")
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / META, _meta(job, samples))
    done = {(v["run_id"], v["turn"]): v for v in read_lines(out / VERDICTS)}
    todo = [(s, t) for s in samples for t in s.turns if (s.run.run_id, t) not in done]
    spent = sum(v.get("cost_usd") or 0.0 for v in done.values())
    state = {"spent": spent, "stopped": None, "asked": 0}
    if todo:
        recs = {s.run.run_id: Recording(s.run.path) for s in samples}
        blind = Blinder.for_runs(list(recs.values()), [s.run.setting for s in samples])
        lock = threading.Lock()
        local = threading.local()
        made: list = []

        def agent():  # one judge agent per thread, as `qa eval` does
            a = getattr(local, "agent", None)
            if a is None:
                a = local.agent = make_judge_agent(job.judge, job.options)
                with lock:
                    made.append(a)
            return a

        def one(item) -> None:
            s, t = item
            with lock:
                if job.max_cost is not None and state["spent"] >= job.max_cost:
                    state["stopped"] = "max cost"
                    return
            line = judge_turn(agent(), recs[s.run.run_id], s, t, job.prompt, blind)
            with lock:
                state["spent"] += line.get("cost_usd") or 0.0
                state["asked"] += 1
                if line.get("error"):
                    job.notes.append(f"{s.run.run_id} turn {t}: {line['error']}")
                    return
                sink.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
                sink.flush()
                done[(s.run.run_id, t)] = line
                if job.progress:
                    job.progress(state["asked"], len(todo))

        sink = _append(out / VERDICTS)
        try:
            if job.concurrency <= 1:
                for item in todo:
                    one(item)
                    if state["stopped"]:
                        break
            else:
                with ThreadPoolExecutor(max_workers=job.concurrency) as pool:
                    list(pool.map(one, todo))
        finally:
            sink.close()
            for a in made:
                a.close()
    stopped = state["stopped"]
    wanted = {(s.run.run_id, t) for s in samples for t in s.turns}
    summary = summarise(list(done.values()), job, samples, complete=wanted <= set(done), stopped=stopped)
    write_json(out / SUMMARY, summary)
    return summary


def judge_turn(agent, rec: Recording, s: Sample, turn: int, jp: JudgePrompt, blind: Blinder) -> dict:
    from workstation.calls import TurnContext
    from workstation.game.games import get_game
    from workstation.judge.truth import check

    t = rec.turn_records[turn]
    prompt = judge_request(rec, turn, jp, blind)
    ctx = TurnContext(game=get_game(s.run.game), turn=turn, max_actions=1, frame=t.start_frame)
    got = ask(agent, prompt, ctx, jp)
    line = {"run_id": s.run.run_id, "setting": s.run.setting, "game": s.run.game, "seed": s.run.seed, "turn": turn}
    if got.get("error"):
        return {**line, **got}
    agrees, claims = (check(rec, turn, got["evidence"]) if got.get("parsed") else ("unknown", []))
    return {**line, **got, "truth_agrees": agrees, "truth_claims": claims, "prompt_digest": jp.digest,
            "request_digest": prompt.digest()}


def summarise(verdicts: list[dict], job: JudgeJob, samples: list[Sample], complete: bool, stopped: str | None) -> dict:
    settings = sorted({v["setting"] for v in verdicts} | {s.run.setting for s in samples})
    counts: dict[str, Counter] = {st: Counter() for st in settings}  # category as the judge wrote it
    groups = {st: {c: 0 for c in CATEGORIES} for st in settings}  # the five, zeros included
    per: dict[str, Counter] = {st: Counter() for st in settings}
    truth = Counter()
    usage, cost = None, 0.0
    for v in verdicts:
        st = v["setting"]
        p = per[st]
        p["turns_judged"] += 1
        if not v.get("parsed"):
            p["unparsed"] += 1
        elif v.get("failure"):
            p["failures"] += 1
            counts[st][v["category"]] += 1
            groups[st][v.get("group") or v["category"]] += 1
        if v.get("text_cue_followed") is not None:
            p["text_cue_asked"] += 1
            p["text_cue_followed"] += bool(v["text_cue_followed"])
        truth[str(v.get("truth_agrees", "unknown")).lower()] += 1
        usage = add_usage(usage, v.get("usage"))
        cost += v.get("cost_usd") or 0.0
    checked = truth["true"] + truth["false"]
    keys = ("turns_judged", "failures", "unparsed", "text_cue_asked", "text_cue_followed")
    summary = {
        "format": FORMAT, "judge": job.judge, "prompt_digest": job.prompt.digest, "complete": complete,
        "stopped": stopped, "turns_judged": len(verdicts),
        "failures": sum(p["failures"] for p in per.values()), "unparsed": sum(p["unparsed"] for p in per.values()),
        "counts": {st: dict(sorted(c.items())) for st, c in counts.items()}, "categories": groups,
        "per_setting": {st: {k: per[st][k] for k in keys} for st in settings},
        "truth": {"true": truth["true"], "false": truth["false"], "unknown": truth["unknown"],
                  "agreement_rate": None if not checked else round(truth["true"] / checked, 4)},
        "usage": usage or add_usage(None, None), "cost_usd": round(cost, 6), "calibration": job.calibration,
        "samples": len(samples),
    }
    if job.groups:
        from workstation.judge.overreliance import compare_groups

        summary["overreliance"] = compare_groups(summary["per_setting"], *job.groups)
    return summary
