"""Run the judge over the sampled turns: ask, check, record, resume, cap the cost.

``DIR/judge.json`` says what the judging is (judge spec, prompt digest, sampling, the samples,
the calibration); ``DIR/verdicts.jsonl`` gets one line per judged turn, appended as it is
answered; ``DIR/summary.json`` is rewritten from all the lines at the end. A turn with a line
is never asked again; a turn the provider gave no reply for gets no line and is asked on the next
run. The judge is a provider agent (``workstation.run.providers``): the same SDK adapters, retries,
adaptive limiter and price table as a run.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError
from workstation.store.ledger import Ledger, write_json
from workstation.store.recording import Recording
from workstation.store.records import add_usage
from workstation.store.seal import SEAL, seal
from workstation.studies.judge.evidence import Blinder, judge_request, with_retry_note
from workstation.studies.judge.records import (
    FORMAT,
    KIND,
    JudgeAnswer,
    JudgeSummary,
    Overreliance,
    SettingCounts,
    StudyMeta,
    TruthCounts,
    VerdictLine,
    check_study,
    read_file,
)
from workstation.studies.judge.sample import Sample, choose, read_sources
from workstation.studies.judge.verdict import CATEGORIES, JudgePrompt, VerdictError, parse_verdict

if TYPE_CHECKING:
    from workstation.engine.calls import TurnContext
    from workstation.engine.prompt import Prompt
    from workstation.run.providers import ProviderOptions
    from workstation.run.providers.agent import ProviderAgent

META, VERDICTS, SUMMARY = "judge.json", "verdicts.jsonl", "summary.json"
REQUERY_LINES = "requery.jsonl"  # appended to by `judge requery`; kept appendable in the seal


@dataclass
class JudgeJob:
    sources: list[str]
    judge: str
    out: Path
    prompt: JudgePrompt
    options: ProviderOptions | None = None
    turns: int = 5
    gap: int = 5
    seed: int = 0
    max_cost: float | None = None
    groups: tuple[list[str], list[str]] | None = None
    calibration: dict[str, Any] | None = None
    concurrency: int = 1  # turns in flight at once (1: asked in order, the cap exact)
    progress: Callable[[int, int], None] | None = None
    notes: list[str] = field(default_factory=list)


def seal_study(out: Path) -> None:
    """Seal a judge study: every file's digest; the JSONL ledgers may grow (a resume appends)."""
    seal(out, KIND, skip=["calibration"], appendable=[VERDICTS, REQUERY_LINES])


def verdict_ledger(out: Path) -> Ledger[VerdictLine]:
    """The verdicts of a study, each checked (a bad line: the study is damaged, exit 1)."""
    return Ledger(out / VERDICTS, VerdictLine.from_json, lambda v: v.key,
                  cost=lambda v: v.answer.cost_usd or 0.0, what="judge verdicts")


def read_meta(out: Path) -> StudyMeta:
    return read_file(out / META, StudyMeta.read, study=out)


def read_summary(out: Path) -> JudgeSummary:
    return read_file(out / SUMMARY, JudgeSummary.read, study=out)


def read_study(out: Path) -> tuple[StudyMeta, JudgeSummary]:
    """A finished judge study, checked (seal, judge.json, summary.json); UserError when it is none."""
    if not (out / META).is_file() or not (out / SUMMARY).is_file():
        raise UserError(f"{out} is not a judge directory (no {META} and {SUMMARY}); make one with "
                        "`workstation judge SOURCE --judge SPEC --out DIR`", file=out)
    check_study(out)
    meta, summary = read_meta(out), read_summary(out)
    verdict_ledger(out)  # every verdict reads, or the study is damaged (its counts could not be trusted)
    return meta, summary


def make_judge_agent(spec: str, options: ProviderOptions | None) -> ProviderAgent:
    """The judge as a provider agent; UserError for a spec that is no model or cannot be made."""
    from workstation.run.agents import AgentSpecError, parse_agent
    from workstation.run.providers import ProviderConfigError, ProviderOptions, make_provider_agent

    try:
        ref = parse_agent(spec)
    except AgentSpecError as e:
        raise UserError(f"--judge: {e}", "judge") from None
    if not ref.is_model:
        raise UserError(f"--judge {spec!r} is not a model; use openai:M, compat:M, anthropic:M or gemini:M", "judge")
    try:
        return make_provider_agent(spec, options or ProviderOptions())
    except ProviderConfigError as e:
        raise UserError(f"--judge: {e}", "judge") from None


def ask(agent: ProviderAgent, prompt: Prompt, ctx: TurnContext, jp: JudgePrompt) -> JudgeAnswer:
    """One verdict: ask, read; on an unreadable answer ask once more with what was wrong; never guess."""
    from workstation.engine.calls import FatalAgentError

    usage: dict[str, Any] | None = None
    cost, calls, raws, problem = 0.0, 0, list[str](), None
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
            return JudgeAnswer(False, usage=usage, cost_usd=cost if priced else None, calls=calls, error=reply.error)
        raws.append(reply.text)
        try:
            v = parse_verdict(reply.text)
        except VerdictError as e:
            problem = str(e)
            if attempt == 0:
                prompt = with_retry_note(prompt, jp, reply.text, problem)
            continue
        return JudgeAnswer.of(v, reply.text, usage, round(cost, 8) if priced and usage else None, calls, attempt == 1)
    return JudgeAnswer(False, None, None, None, None, None, None, raws[-1] if raws else None, usage,
                       round(cost, 8) if priced and usage else None, calls, True, problem,
                       raws[0] if raws else None)


def _meta(job: JudgeJob, samples: list[Sample]) -> dict[str, Any]:
    options = job.options.to_json() if job.options is not None else None
    prompt = {"name": job.prompt.name, "digest": job.prompt.digest, "path": job.prompt.path}
    return {"format": FORMAT, "judge": job.judge, "options": options, "prompt": prompt, "sources": job.sources,
            "turns": job.turns, "gap": job.gap, "seed": job.seed, "samples": [s.to_json() for s in samples],
            "calibration": job.calibration}


def check_meta(out: Path, judge: str, digest: str, sampling: dict[str, int] | None = None) -> StudyMeta | None:
    """What an earlier judging in ``out`` was (None for a new directory); UserError when ``out`` is
    something else (a file, a recording, a batch, another judging) that must not be written into;
    DamagedArtifact (exit 1) when it is a judging that fails its check."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; name a directory for the verdicts", "out", file=out)
    path = out / META
    if not path.is_file():
        if path.exists():
            raise UserError(f"--out {out}: its {META} is not a file; name a new directory for the verdicts", "out",
                            file=out)
        for name, what in (("manifest.json", "a recording"), ("results.csv", "a batch"), (SUMMARY, "another result"),
                           (VERDICTS, "verdicts without their judge.json"), ("set.json", "a QA set"),
                           ("seal.json", "another sealed result")):
            if (out / name).exists():
                raise UserError(f"--out {out} holds {what} ({name}); name a new directory for the verdicts", "out",
                                file=out)
        return None
    if (out / SEAL).exists():
        check_study(out)  # a sealed judging edited by hand is damaged (exit 1) whatever was edited
    try:
        ident = read_file(path, lambda f: (f.text("format"), f.text("judge"), f.sub("prompt").text("digest")))
    except UserError:
        ident = None
    if ident is None or ident[0] != FORMAT:
        raise UserError(f"{out} is not a judge directory (its {META} is something else); choose another --out",
                        "out", file=out)
    if ident[1] != judge or ident[2] != digest:
        raise UserError(f"{out} holds verdicts of {ident[1]} with prompt {ident[2]}; "
                        "a different judge or prompt needs another --out", "out", file=out)
    check_study(out)
    old = read_meta(out)
    verdict_ledger(out)  # its lines read, or the study is damaged
    if sampling is not None:
        was = {"turns": old.turns, "gap": old.gap, "seed": old.seed}
        if {k: was[k] for k in sampling} != sampling:
            flags = " ".join(f"--{k} {was[k]}" for k in sampling)
            raise UserError(f"{out} was sampled with {flags}; resume with the same or choose another --out", "out",
                            file=out)
    return old


def is_model_run(agent: str) -> bool:
    from workstation.run.agents.registry import is_model

    return bool(is_model(agent))


def plan_judge(job: JudgeJob) -> list[Sample]:
    """Everything checked before the first write and the first paid call: the output directory, the sources,
    the samples and the groups. The samples to judge."""
    check_meta(job.out, job.judge, job.prompt.digest, {"turns": job.turns, "gap": job.gap, "seed": job.seed})
    runs = read_sources(job.sources)
    if not runs:
        raise UserError("the sources hold no runs")
    others = sorted({r.setting for r in runs if not is_model_run(r.agent)})
    runs = [r for r in runs if is_model_run(r.agent)]  # a baseline (random, replay, human) has no reasoning to judge
    if others:
        job.notes.append(f"not judged (not a model): {', '.join(others)}")
    if not runs:
        raise UserError("the sources hold no model runs (only " + ", ".join(others) + "); the judge judges models")
    samples = choose(runs, job.turns, job.gap, job.seed)
    if not samples:
        raise UserError("no setting x game has a complete run nobody changed by hand; nothing to judge")
    if job.groups:
        from workstation.studies.judge.overreliance import check_groups

        check_groups(sorted({s.run.setting for s in samples}), *job.groups)
    return samples


def run_judge(job: JudgeJob, samples: list[Sample] | None = None) -> JudgeSummary:
    out = job.out
    if samples is None:
        samples = plan_judge(job)
    old = check_meta(out, job.judge, job.prompt.digest, {"turns": job.turns, "gap": job.gap, "seed": job.seed})
    if job.calibration is None and old:
        job.calibration = old.calibration
    out.mkdir(parents=True, exist_ok=True)
    (out / SEAL).unlink(missing_ok=True)  # checked above; sealed again when this run ends
    meta = _meta(job, samples)
    if old is None or old.data != meta:
        write_json(out / META, meta)
    ledger = verdict_ledger(out)
    todo = [(s, t) for s in samples for t in s.turns if not ledger.is_done((s.run.run_id, t))]
    state: dict[str, Any] = {"spent": ledger.spent, "stopped": None, "asked": 0}
    if todo:
        recs = {s.run.run_id: Recording(s.run.path) for s in samples}
        blind = Blinder.for_runs(list(recs.values()), [s.run.setting for s in samples])
        lock = threading.Lock()
        local = threading.local()
        made: list[ProviderAgent] = []

        def agent() -> ProviderAgent:  # one judge agent per thread, as `qa eval` does
            a: ProviderAgent | None = getattr(local, "agent", None)
            if a is None:
                a = make_judge_agent(job.judge, job.options)
                local.agent = a
                with lock:
                    made.append(a)
            return a

        def one(item: tuple[Sample, int]) -> None:
            s, t = item
            with lock:
                if job.max_cost is not None and state["spent"] >= job.max_cost:
                    state["stopped"] = "max cost"
                    return
            line = judge_turn(agent(), recs[s.run.run_id], s, t, job.prompt, blind)
            with lock:
                state["spent"] += line.answer.cost_usd or 0.0
                state["asked"] += 1
                if line.answer.error is not None:
                    job.notes.append(f"{s.run.run_id} turn {t}: {line.answer.error}")
                    return
                ledger.append(line, line.to_json())
                if job.progress:
                    job.progress(state["asked"], len(todo))

        try:
            if job.concurrency <= 1:
                for item in todo:
                    one(item)
                    if state["stopped"]:
                        break
            else:
                with ThreadPoolExecutor(max_workers=job.concurrency) as pool:
                    list(pool.map(one, todo))
        except BaseException:
            seal_study(out)  # stopped by an error: what was written is whole, sealed for the next reader
            raise
        finally:
            for a in made:
                a.close()
    stopped = state["stopped"]
    wanted = {(s.run.run_id, t) for s in samples for t in s.turns}
    verdicts = list(ledger.done.values())
    summary = summarise(verdicts, job, samples, complete=wanted <= set(ledger.done), stopped=stopped)
    write_json(out / SUMMARY, summary.to_json())
    seal_study(out)
    return summary


def judge_turn(agent: ProviderAgent, rec: Recording, s: Sample, turn: int, jp: JudgePrompt,
               blind: Blinder) -> VerdictLine:
    from workstation.engine.calls import TurnContext
    from workstation.game.games import get_game
    from workstation.studies.judge.truth import check

    t = rec.turn_records[turn]
    prompt = judge_request(rec, turn, jp, blind)
    ctx = TurnContext(game=get_game(s.run.game), turn=turn, max_actions=1, frame=t.start_frame)
    got = ask(agent, prompt, ctx, jp)
    if got.error is not None:
        return VerdictLine(s.run.run_id, s.run.setting, s.run.game, s.run.seed, turn, got)
    agrees, claims = (check(rec, turn, got.evidence or "") if got.parsed else ("unknown", []))
    return VerdictLine(s.run.run_id, s.run.setting, s.run.game, s.run.seed, turn, got, agrees, claims, jp.digest,
                       prompt.digest())


def summarise(verdicts: list[VerdictLine], job: JudgeJob, samples: list[Sample], complete: bool,
              stopped: str | None) -> JudgeSummary:
    settings = sorted({v.setting for v in verdicts} | {s.run.setting for s in samples})
    counts: dict[str, Counter[str]] = {st: Counter() for st in settings}  # category as the judge wrote it
    groups = {st: {c: 0 for c in CATEGORIES} for st in settings}  # the five, zeros included
    per: dict[str, Counter[str]] = {st: Counter() for st in settings}
    truth: Counter[str] = Counter()
    usage: dict[str, Any] | None = None
    cost = 0.0
    for v in verdicts:
        a = v.answer
        p = per[v.setting]
        p["turns_judged"] += 1
        if not a.parsed:
            p["unparsed"] += 1
        elif a.failure:
            p["failures"] += 1
            counts[v.setting][a.category or ""] += 1
            groups[v.setting][a.group or a.category or ""] += 1
        if a.text_cue_followed is not None:
            p["text_cue_asked"] += 1
            p["text_cue_followed"] += bool(a.text_cue_followed)
        truth[v.truth] += 1
        usage = add_usage(usage, a.usage)
        cost += a.cost_usd or 0.0
    per_setting = {st: SettingCounts(*(per[st][k] for k in ("turns_judged", "failures", "unparsed", "text_cue_asked",
                                                             "text_cue_followed"))) for st in settings}
    over: Overreliance | None = None
    if job.groups:
        from workstation.studies.judge.overreliance import compare_groups

        over = compare_groups(per_setting, *job.groups)
    return JudgeSummary(
        judge=job.judge, prompt_digest=job.prompt.digest, complete=complete, stopped=stopped,
        turns_judged=len(verdicts), failures=sum(p.failures for p in per_setting.values()),
        unparsed=sum(p.unparsed for p in per_setting.values()),
        counts={st: dict(sorted(c.items())) for st, c in counts.items()}, categories=groups, per_setting=per_setting,
        truth=TruthCounts(truth["true"], truth["false"], truth["unknown"]), usage=usage or add_usage(None, None),
        cost_usd=round(cost, 6), calibration=job.calibration, samples=len(samples), overreliance=over)
