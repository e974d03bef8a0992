"""``workstation judge``: why a model failed (failure attribution), re-query, over-reliance, stuck stretches.

    workstation judge SOURCE... --judge SPEC [--base-url URL] --out DIR     judge sampled turns
    workstation judge requery DIR [--model-base-url URL]                     Figure 14's re-query study
    workstation judge overreliance DIR --groups A,B/C,D                     Table 9's Fisher test
    workstation judge stuck SOURCE... [--min-turns N]                        stalls from the RAM (no judge)

One parser: a first SOURCE equal to requery, overreliance or stuck picks that mode (a directory
of that name is written ./requery).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError
from workstation.game.seed import SEED_MAX
from workstation.run.options import MODEL_CLI, RUN_SETTING, add_argument

if TYPE_CHECKING:
    from workstation.run.providers import ProviderOptions
    from workstation.studies.judge.records import JudgeSummary

STUDIES = ("requery", "overreliance", "stuck")  # the judge studies (`judge requery ...`)
TRANSPORT = ("base_url", "effort", "temperature", "max_output_tokens", "timeout")
# each mode's own help (`judge stuck --help`): its line and the options it reads
MODE_HELP = {
    "stuck": ("SOURCE...", "Stuck stretches from the RAM (no judge needed): at least --min-turns turns in a row "
              "that score nothing and do not move the player (or repeat the last turn's actions on an unchanged "
              "screen), per setting of the batches, CSVs or recordings given; with --judge, the judge reads the "
              "thoughts and decides which stretches the player was aware of (baseline runs are never sent to it). "
              "--out DIR writes the report, sealed, to DIR/stuck.json.",
              ("min_turns", "json", "out", "judge", "judge_prompt", *TRANSPORT)),
    "requery": ("DIR", "Figure 14's re-query study on a judge directory: each judged failure asked again of the "
                "model that played, with its full prompt and with the current frame only, each answer judged again "
                "(exact McNemar test). Writes DIR/requery.jsonl and DIR/requery.json.", ("model_base_url", "judge", "max_cost", *TRANSPORT)),
    "overreliance": ("DIR", "Table 9's over-reliance test on a judge directory: how often each group of settings "
                     "followed an earlier text cue the frames contradicted (Fisher's exact test between the two "
                     "groups). Writes DIR/overreliance.json.", ("groups",)),
}


class _ModeHelp(argparse.Action):
    """``-h``: the help of the mode named first (``judge stuck --help``), else the whole command's."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, default: Any = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        source = getattr(namespace, "source", None) or []
        mode: str | None = source[0] if source and source[0] in MODE_HELP else None
        if mode is None:
            parser.print_help()
            parser.exit()
        args, text, dests = MODE_HELP[mode]
        mini = argparse.ArgumentParser(prog=f"{parser.prog} {mode}", description=text, add_help=False,
                                       usage=f"%(prog)s {args} [options]")
        for action in parser._actions:  # the main parser's own declarations, not a second copy of them
            if action.dest in dests:
                mini._add_action(action)
        mini.print_help()
        parser.exit()


# bounds of every number the command takes (named in the message)
BOUNDS: dict[str, tuple[float, float]] = {
    "turns": (1, 1000), "gap": (1, 100_000), "seed": (0, SEED_MAX), "max_cost": (0, 1_000_000),
    "concurrency": (1, 256), "min_turns": (2, 1_000_000), "calibrate_repeats": (1, 100),
}


def register(sub: Any) -> None:
    p = sub.add_parser("judge", add_help=False,
                       help="why a model failed: a blinded judge model attributes sampled failures",
                       description="Judge sampled turns of a batch with a model (the paper's failure attribution, "
                       "appendix D.2): per setting x game the complete run closest to the median score, TURNS "
                       "turns GAP apart; the judge sees each turn as the player did, blinded to model and "
                       "setting. Writes DIR/verdicts.jsonl and DIR/summary.json; run it again to resume. Other "
                       "modes: `judge requery DIR`, `judge overreliance DIR --groups A,B/C,D`, "
                       "`judge stuck SOURCE...`.")
    p.add_argument("-h", "--help", action=_ModeHelp, help="show this help (after a mode, e.g. `judge stuck "
                   "--help`: that mode's)")
    p.add_argument("source", nargs="+", metavar="SOURCE",
                   help="batch directories, results CSVs or recordings (or a mode: requery DIR, overreliance DIR, "
                   "stuck SOURCE...)")
    p.add_argument("--judge", metavar="SPEC", help="the judge model: openai:M | compat:M | anthropic:M | gemini:M")
    p.add_argument("--out", metavar="DIR", help="where verdicts go (required to judge; with stuck: where "
                   "stuck.json goes)")
    p.add_argument("--turns", type=int, default=5, metavar="N", help="turns judged per sampled run (default 5)")
    p.add_argument("--gap", type=int, default=5, metavar="N", help="least distance between them in turns (default 5)")
    p.add_argument("--seed", type=int, default=0, help=f"seed of the turn sampling, 0..{SEED_MAX} (default 0)")
    p.add_argument("--concurrency", type=int, default=1, metavar="N",
                   help="turns in flight at once (default 1: in order; more may pass --max-cost by N-1 calls)")
    p.add_argument("--calibrate", metavar="QA_SET", help="first score the judge on this QA set (qa eval) and record it")
    p.add_argument("--calibrate-repeats", type=int, default=1, metavar="N", help="repeats per question (default 1)")
    p.add_argument("--judge-prompt", metavar="FILE", help="the judge's prompt file (default the packaged one)")
    p.add_argument("--groups", metavar="A,B/C,D", help="two groups of settings for the over-reliance test")
    g = p.add_argument_group("the judge model's transport")
    for name in MODEL_CLI:  # the shared declarations of `run` and `batch`
        if name == "max_cost":
            add_argument(g, RUN_SETTING[name], help="stop asking past this judge spend in US dollars (>= 0)")
        else:
            add_argument(g, RUN_SETTING[name])
    r = p.add_argument_group("judge requery DIR")
    r.add_argument("--model-base-url", default=None, metavar="URL",
                   help="where the model that played answers now (default the URL its runs used)")
    s = p.add_argument_group("judge stuck SOURCE... (with --judge, the judge decides which stretches are aware)")
    s.add_argument("--min-turns", type=int, default=8, metavar="N", help="least live turns of a stuck stretch (default 8)")
    s.add_argument("--json", action="store_true", help="print the stuck report as JSON")
    p.set_defaults(func=run)


def _options(a: argparse.Namespace) -> ProviderOptions:
    from workstation.run.options import Generation, Transport, provider_options_of

    try:
        options: ProviderOptions = provider_options_of(Generation(a.effort, a.temperature, a.max_output_tokens),
                                                       Transport(a.base_url, a.timeout))
        return options
    except UserError:
        raise
    except ValueError as e:
        raise UserError(str(e)) from None


def _check_counts(a: argparse.Namespace) -> None:
    for name, (lo, hi) in BOUNDS.items():
        value = getattr(a, name)
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if not math.isfinite(value):
            raise UserError(f"{flag} must be a finite number (got {value})", name)
        if value < lo:
            word = "0 or more dollars" if name == "max_cost" else f"at least {_n(lo)}"
            raise UserError(f"{flag} must be {word} (got {_n(value)})", name)
        if value > hi:
            raise UserError(f"{flag} must be at most {_n(hi)} (got {_n(value)})", name)


def _n(x: float) -> str:
    """A number as written: whole numbers in full (4294967295, not 4.29497e+09)."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _inside(out: Path, sources: list[str]) -> str | None:
    """The first source directory ``out`` is or is inside, or None: a command never writes inside its inputs."""
    try:
        o = out.expanduser().resolve()
    except OSError:
        return None
    for text in sources:
        try:
            src = Path(text).expanduser().resolve()
        except OSError:
            continue
        if src.is_dir() and (o == src or o.is_relative_to(src)):
            return text
    return None


def run(a: argparse.Namespace) -> int:
    _check_counts(a)
    mode = a.source[0] if a.source[0] in STUDIES else None
    if mode == "stuck":
        return _stuck(a, a.source[1:])
    if mode in ("requery", "overreliance"):
        if len(a.source) != 2:
            raise UserError(f"judge {mode} takes one judge directory (got {len(a.source) - 1})")
        return _requery(a, Path(a.source[1])) if mode == "requery" else _overreliance(a, Path(a.source[1]))
    return _judge(a)


def _judge(a: argparse.Namespace) -> int:
    from workstation.run.job_exit import job_exit
    from workstation.store.local_paths import refuse_inside_artifacts, refuse_uri
    from workstation.studies.judge.overreliance import parse_groups
    from workstation.studies.judge.records import KIND
    from workstation.studies.judge.run import JudgeJob, check_meta, make_judge_agent, plan_judge, run_judge
    from workstation.studies.judge.verdict import load_judge_prompt

    if not a.judge:
        raise UserError("--judge SPEC is required: the judge model, e.g. --judge openai:gpt-5.2", "judge")
    if not a.out:
        raise UserError("--out DIR is required: where the verdicts go", "out")
    refuse_uri(a.out, "--out", "judge writes its verdicts to a local directory")
    groups = parse_groups(a.groups) if a.groups else None
    options = _options(a)
    jp = load_judge_prompt(a.judge_prompt)
    out = Path(a.out)
    check_meta(out, a.judge, jp.digest, {"turns": a.turns, "gap": a.gap, "seed": a.seed})
    inside = _inside(out, a.source)
    if inside is not None:
        raise UserError(f"--out {out} is inside the source {inside}; the judge never writes into its "
                        "inputs: name a directory elsewhere", "out", file=out)
    refuse_inside_artifacts(out, "--out", "judge", own=KIND)  # another batch, study, IDC... (its own study resumes)
    make_judge_agent(a.judge, options).close()  # a bad spec or key is one line before anything is read
    if a.calibrate and not Path(a.calibrate).is_dir():
        raise UserError(f"--calibrate {a.calibrate}: no such QA set directory (make one with `workstation qa gen`)",
                        "calibrate")
    job = JudgeJob(sources=a.source, judge=a.judge, out=out, prompt=jp, options=options, turns=a.turns, gap=a.gap,
                   seed=a.seed, max_cost=a.max_cost, groups=groups, concurrency=a.concurrency, progress=_progress)
    samples = plan_judge(job)  # sources, samples and groups checked before anything is paid or written
    if a.calibrate:
        job.calibration = _calibrate(a, out, options)
    summary = run_judge(job, samples)
    print(out)
    print(table(summary))
    for note in job.notes[:5]:
        sys.stderr.write(f"workstation: judge: {note}\n")
    return job_exit(summary.stopped, summary.complete, summary.cost_usd,
                    "some turns got no reply from the judge; run the same command again")


def _progress(done: int, total: int) -> None:
    """A line on stderr every 10 turns and at the last, so a long judging can be followed in a log."""
    if done % 10 == 0 or done == total:
        sys.stderr.write(f"workstation: judge: {done}/{total} turns asked\n")


def _calibrate(a: argparse.Namespace, out: Path, options: ProviderOptions) -> dict[str, Any]:
    from workstation.studies.qa.evaluate import run_eval

    qa = Path(a.calibrate)
    s = run_eval(qa, a.judge, out / "calibration", repeats=a.calibrate_repeats, provider_options=options,
                 max_cost=a.max_cost, concurrency=a.concurrency)
    return s.calibration(str(qa))


def table(summary: JudgeSummary) -> str:
    from workstation.base.text_table import text_table
    from workstation.studies.judge.verdict import CATEGORIES

    rows: list[list[object]] = [["setting", "judged", "failures", "unparsed", *CATEGORIES]]
    for st, p in summary.per_setting.items():
        rows.append([st, p.turns_judged, p.failures, p.unparsed, *(summary.categories[st][c] for c in CATEGORIES)])
    lines = text_table(rows)
    t = summary.truth
    rate = "-" if t.agreement_rate is None else f"{100 * t.agreement_rate:.0f}%"
    lines.append(f"truth: {t.true} agree, {t.false} disagree, {t.unknown} unknown (agreement {rate})")
    acc = summary.calibration_accuracy
    if acc is not None:
        answers = (summary.calibration or {})["answers"] if "answers" in (summary.calibration or {}) else "?"
        lines.append(f"judge calibration: {100 * acc:.1f}% on {answers} QA answers")
    o = summary.overreliance
    if o:
        fp = o.fisher.p
        lines.append(f"over-reliance: {o.group_a.followed}/{o.group_a.asked} vs "
                     f"{o.group_b.followed}/{o.group_b.asked}, Fisher p = "
                     f"{'-' if fp is None else f'{fp:.4f}'}")
    return "\n".join(lines)


def _overreliance(a: argparse.Namespace, d: Path) -> int:
    from dataclasses import replace

    from workstation.store.ledger import write_json
    from workstation.store.seal import SEAL
    from workstation.studies.judge.overreliance import compare_groups, parse_groups
    from workstation.studies.judge.run import read_study, seal_study

    if not a.groups:
        raise UserError("judge overreliance needs --groups A,B/C,D (two groups of setting labels)", "groups")
    groups = parse_groups(a.groups)
    _meta, summary = read_study(d)
    result = compare_groups(summary.per_setting, *groups)
    result = replace(result, per_setting={k: (v.text_cue_followed, v.text_cue_asked)
                                          for k, v in summary.per_setting.items()})
    (d / SEAL).unlink(missing_ok=True)  # checked above; sealed again with the result
    write_json(d / "overreliance.json", result.to_json())
    seal_study(d)
    for k, (followed, asked) in (result.per_setting or {}).items():
        print(f"{k}: {followed}/{asked}")
    p = result.fisher.p
    ga, gb = result.group_a, result.group_b
    print(f"{','.join(ga.settings)}: {ga.followed}/{ga.asked}  vs  {','.join(gb.settings)}: {gb.followed}/{gb.asked}"
          f"  Fisher's exact p = {'-' if p is None else f'{p:.4f}'}")
    return 0


def _requery(a: argparse.Namespace, d: Path) -> int:
    from workstation.studies.judge.requery import run_requery
    from workstation.studies.judge.run import read_study

    read_study(d)
    result = run_requery(d, judge=a.judge, options=_options(a) if (a.judge or a.base_url) else None,
                         model_base_url=a.model_base_url, max_cost=a.max_cost)
    m = result.mcnemar
    print(d / "requery.json")
    print(f"pairs {result.pairs}: errors with full history {result.errors_full}, current frame only "
          f"{result.errors_current}; discordant {m.b} vs {m.c}")
    if m.p is not None:
        lo, hi = m.ci95

        def f(x: float | None) -> str:
            return "inf" if x is None else f"{x:.2f}"

        print(f"exact McNemar p = {m.p:.4f}; odds ratio (current only vs full) {f(m.odds_ratio)} "
              f"[{f(lo)}, {f(hi)}]")
    if result.stopped:
        sys.stderr.write("workstation: stopped at the cost cap; run again with a higher --max-cost to finish\n")
        return 1
    return 0 if result.complete else 1


def _stuck(a: argparse.Namespace, sources: list[str]) -> int:
    from workstation.studies.judge.stuck import STUCK_FILE, report, stuck_table, write_report

    if not sources:
        raise UserError("judge stuck needs SOURCE...: batch directories, results CSVs or recordings")
    if not a.judge:
        given = [f"--{k.replace('_', '-')}" for k in TRANSPORT if getattr(a, k) is not None]
        if given:
            raise UserError(f"judge stuck: {given[0]} is for the judge model; add --judge SPEC or leave it out",
                            given[0][2:].replace("-", "_"))
    out = Path(a.out) if a.out else None
    if out is not None:
        from workstation.store.local_paths import refuse_inside_artifacts, refuse_uri

        refuse_uri(a.out, "--out", "judge stuck writes its report to a local directory")
        inside = _inside(out, sources)
        if inside is not None:
            raise UserError(f"--out {out} is inside the source {inside}; name a directory elsewhere",
                            "out", file=out)
        from workstation.studies.judge.stuck import STUCK_KIND

        refuse_inside_artifacts(out, "--out", "judge stuck", own=STUCK_KIND)  # an earlier report of its own: replaced
        if out.exists() and (not out.is_dir() or any(p.name != STUCK_FILE and p.name != "seal.json"
                                                       for p in out.iterdir())):
            raise UserError(f"--out {out} is not an empty directory (nor an earlier stuck report); name a new one",
                            "out", file=out)
        if out.is_dir() and (out / "seal.json").exists():  # an earlier report is replaced only when it is sound
            from workstation.store.seal import check_seal

            check_seal(out, STUCK_KIND, what="stuck report (--out)")
    ask = None
    if a.judge:
        from workstation.studies.judge.run import make_judge_agent
        from workstation.studies.judge.stuck_judge import StuckJudge
        from workstation.studies.judge.verdict import load_judge_prompt

        jp = load_judge_prompt(a.judge_prompt)
        if not jp.stuck:
            raise UserError(f"{jp.path} has no stuck question; add one (see the packaged judge prompt)")
        ask = StuckJudge(make_judge_agent(a.judge, _options(a)), jp, [])
    try:
        result = report(sources, a.min_turns, ask)
    finally:
        if ask is not None:
            ask.agent.close()
    if ask is not None:
        result = result.with_judge(a.judge, ask.usage_calls, round(ask.cost_usd, 6))
    if out is not None:
        write_report(out, result)
    print(json.dumps(result.to_json(), indent=1) if a.json else stuck_table(result))
    if result.left_out:
        sys.stderr.write(f"workstation: judge stuck: {result.left_out} baseline run(s) (random, replay, human) were "
                         "not sent to the judge; their stretches are decided by the word rule\n")
    return 0
