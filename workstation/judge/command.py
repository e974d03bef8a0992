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
import sys
from pathlib import Path

from workstation.errors import UserError

MODES = ("requery", "overreliance", "stuck")
TRANSPORT = ("base_url", "effort", "temperature", "max_output_tokens", "timeout")
# each mode's own help (`judge stuck --help`): its line and the options it reads
MODE_HELP = {
    "stuck": ("SOURCE...", "Stuck stretches from the RAM (no judge needed): at least --min-turns turns in a row "
              "that score nothing and do not move the player (or repeat the last turn's actions on an unchanged "
              "screen), per setting of the batches, CSVs or recordings given; with --judge, the judge reads the "
              "thoughts and decides which stretches the player was aware of.",
              ("min_turns", "json", "judge", "judge_prompt", *TRANSPORT)),
    "requery": ("DIR", "Figure 14's re-query study on a judge directory: each judged failure asked again of the "
                "model that played, with its full prompt and with the current frame only, each answer judged again "
                "(exact McNemar test). Writes DIR/requery.jsonl and DIR/requery.json.", ("model_base_url", "judge", "max_cost", *TRANSPORT)),
    "overreliance": ("DIR", "Table 9's over-reliance test on a judge directory: how often each group of settings "
                     "followed an earlier text cue the frames contradicted (Fisher's exact test between the two "
                     "groups). Writes DIR/overreliance.json.", ("groups",)),
}


class _ModeHelp(argparse.Action):
    """``-h``: the help of the mode named first (``judge stuck --help``), else the whole command's."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        source = getattr(namespace, "source", None) or []
        mode = source[0] if source and source[0] in MODE_HELP else None
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


def register(sub) -> None:
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
    p.add_argument("--out", metavar="DIR", help="where verdicts go (required to judge)")
    p.add_argument("--turns", type=int, default=5, metavar="N", help="turns judged per sampled run (default 5)")
    p.add_argument("--gap", type=int, default=5, metavar="N", help="least distance between them in turns (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the turn sampling (default 0)")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD", help="stop asking past this judge spend")
    p.add_argument("--concurrency", type=int, default=1, metavar="N",
                   help="turns in flight at once (default 1: in order; more may pass --max-cost by N-1 calls)")
    p.add_argument("--calibrate", metavar="QA_SET", help="first score the judge on this QA set (qa eval) and record it")
    p.add_argument("--calibrate-repeats", type=int, default=1, metavar="N", help="repeats per question (default 1)")
    p.add_argument("--judge-prompt", metavar="FILE", help="the judge's prompt file (default the packaged one)")
    p.add_argument("--groups", metavar="A,B/C,D", help="two groups of settings for the over-reliance test")
    g = p.add_argument_group("the judge model's transport")
    g.add_argument("--base-url", default=None, help="SDK base URL (http://host:port/v1 for openai/compat)")
    g.add_argument("--effort", default=None, help="none|minimal|low|medium|high|xhigh|max")
    g.add_argument("--temperature", type=float, default=None)
    g.add_argument("--max-output-tokens", type=int, default=None)
    g.add_argument("--timeout", type=float, default=60.0, help="seconds per call (default 60)")
    r = p.add_argument_group("judge requery DIR")
    r.add_argument("--model-base-url", default=None, metavar="URL",
                   help="where the model that played answers now (default the URL its runs used)")
    s = p.add_argument_group("judge stuck SOURCE... (with --judge, the judge decides which stretches are aware)")
    s.add_argument("--min-turns", type=int, default=8, metavar="N", help="least live turns of a stuck stretch (default 8)")
    s.add_argument("--json", action="store_true", help="print the stuck report as JSON")
    p.set_defaults(func=run)


def _options(a: argparse.Namespace):
    from workstation.providers import ProviderConfigError, ProviderOptions

    try:
        return ProviderOptions(base_url=a.base_url, effort=a.effort, temperature=a.temperature,
                               max_output_tokens=a.max_output_tokens, timeout=a.timeout)
    except (ProviderConfigError, ValueError) as e:
        raise UserError(str(e)) from None


def _check_counts(a: argparse.Namespace) -> None:
    if a.turns < 1:
        raise UserError(f"--turns must be at least 1 (got {a.turns})")
    if a.gap < 1:
        raise UserError(f"--gap must be at least 1 (got {a.gap})")
    if a.max_cost is not None and not a.max_cost >= 0:
        raise UserError(f"--max-cost must be 0 or more dollars (got {a.max_cost})")
    if a.min_turns < 2:
        raise UserError(f"--min-turns must be at least 2 (got {a.min_turns})")
    if a.concurrency < 1:
        raise UserError(f"--concurrency must be at least 1 (got {a.concurrency})")
    if a.calibrate_repeats < 1:
        raise UserError(f"--calibrate-repeats must be at least 1 (got {a.calibrate_repeats})")


def run(a: argparse.Namespace) -> int:
    _check_counts(a)
    mode = a.source[0] if a.source[0] in MODES else None
    if mode == "stuck":
        return _stuck(a, a.source[1:])
    if mode in ("requery", "overreliance"):
        if len(a.source) != 2:
            raise UserError(f"judge {mode} takes one judge directory (got {len(a.source) - 1})")
        return _requery(a, Path(a.source[1])) if mode == "requery" else _overreliance(a, Path(a.source[1]))
    return _judge(a)


def _judge(a: argparse.Namespace) -> int:
    from workstation.judge.overreliance import parse_groups
    from workstation.judge.run import JudgeJob, run_judge
    from workstation.judge.verdict import load_judge_prompt
    from workstation.runs.job_exit import job_exit

    if not a.judge:
        raise UserError("--judge SPEC is required: the judge model, e.g. --judge openai:gpt-5.2")
    if not a.out:
        raise UserError("--out DIR is required: where the verdicts go")
    from workstation.store.local_paths import refuse_uri

    refuse_uri(a.out, "--out", "judge writes its verdicts to a local directory")
    groups = parse_groups(a.groups) if a.groups else None
    options = _options(a)
    jp = load_judge_prompt(a.judge_prompt)
    out = Path(a.out)
    from workstation.judge.run import check_meta, make_judge_agent

    check_meta(out, a.judge, jp.digest, {"turns": a.turns, "gap": a.gap, "seed": a.seed})
    make_judge_agent(a.judge, options).close()  # a bad spec or key is one line before anything is read
    calibration = _calibrate(a, out, options) if a.calibrate else None
    job = JudgeJob(sources=a.source, judge=a.judge, out=out, prompt=jp, options=options, turns=a.turns, gap=a.gap,
                   seed=a.seed, max_cost=a.max_cost, groups=groups, calibration=calibration,
                   concurrency=a.concurrency)
    job.progress = _progress
    summary = run_judge(job)
    print(out)
    print(table(summary))
    for note in job.notes[:5]:
        sys.stderr.write(f"workstation: judge: {note}\n")
    return job_exit(summary, "some turns got no reply from the judge; run the same command again")


def _progress(done: int, total: int) -> None:
    """A line on stderr every 10 turns and at the last, so a long judging can be followed in a log."""
    if done % 10 == 0 or done == total:
        sys.stderr.write(f"workstation: judge: {done}/{total} turns asked\n")


def _calibrate(a: argparse.Namespace, out: Path, options) -> dict:
    from workstation.qa.evaluate import run_eval

    qa = Path(a.calibrate)
    if not qa.is_dir():
        raise UserError(f"--calibrate {qa}: no such QA set directory (make one with `workstation qa gen`)")
    s = run_eval(qa, a.judge, out / "calibration", repeats=a.calibrate_repeats, provider_options=options,
                 max_cost=a.max_cost, concurrency=a.concurrency)
    return {"set": str(qa), "set_digest": s.get("set_digest"), "accuracy": s["accuracy"]["overall"],
            "answers": s["answers"], "complete": s["complete"], "by_group": {k: s["accuracy"][k] for k in
                                                                             ("perception", "motion", "decision")}}


def table(summary: dict) -> str:
    from workstation.judge.verdict import CATEGORIES

    head = ["setting", "judged", "failures", "unparsed", *CATEGORIES]
    rows = [head]
    for st, p in summary["per_setting"].items():
        rows.append([st, str(p["turns_judged"]), str(p["failures"]), str(p["unparsed"]),
                     *(str(summary["categories"][st][c]) for c in CATEGORIES)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    t = summary["truth"]
    rate = "-" if t["agreement_rate"] is None else f"{100 * t['agreement_rate']:.0f}%"
    lines.append(f"truth: {t['true']} agree, {t['false']} disagree, {t['unknown']} unknown (agreement {rate})")
    cal = summary.get("calibration")
    if cal and cal.get("accuracy") is not None:
        lines.append(f"judge calibration: {100 * cal['accuracy']:.1f}% on {cal['answers']} QA answers")
    o = summary.get("overreliance")
    if o:
        p = o["fisher"]["p"]
        lines.append(f"over-reliance: {o['group_a']['followed']}/{o['group_a']['asked']} vs "
                     f"{o['group_b']['followed']}/{o['group_b']['asked']}, Fisher p = "
                     f"{'-' if p is None else f'{p:.4f}'}")
    return "\n".join(lines)


def _judge_dir(d: Path) -> dict:
    from workstation.judge.run import META, SUMMARY

    if not (d / META).is_file() or not (d / SUMMARY).is_file():
        raise UserError(f"{d} is not a judge directory (no {META} and {SUMMARY}); make one with "
                        "`workstation judge SOURCE --judge SPEC --out DIR`")
    try:
        return json.loads((d / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"{d / SUMMARY}: not readable ({e}); run the judge again to rewrite it") from None


def _overreliance(a: argparse.Namespace, d: Path) -> int:
    from workstation.judge.overreliance import compare_groups, parse_groups
    from workstation.judge.run import write_json

    if not a.groups:
        raise UserError("judge overreliance needs --groups A,B/C,D (two groups of setting labels)")
    summary = _judge_dir(d)
    result = compare_groups(summary["per_setting"], *parse_groups(a.groups))
    result["per_setting"] = {k: {"followed": v["text_cue_followed"], "asked": v["text_cue_asked"]}
                             for k, v in summary["per_setting"].items()}
    write_json(d / "overreliance.json", result)
    for k, v in result["per_setting"].items():
        print(f"{k}: {v['followed']}/{v['asked']}")
    p = result["fisher"]["p"]
    print(f"{','.join(result['group_a']['settings'])}: {result['group_a']['followed']}/{result['group_a']['asked']}"
          f"  vs  {','.join(result['group_b']['settings'])}: {result['group_b']['followed']}/{result['group_b']['asked']}"
          f"  Fisher's exact p = {'-' if p is None else f'{p:.4f}'}")
    return 0


def _requery(a: argparse.Namespace, d: Path) -> int:
    from workstation.judge.requery import run_requery

    _judge_dir(d)
    result = run_requery(d, judge=a.judge, options=_options(a) if (a.judge or a.base_url) else None,
                         model_base_url=a.model_base_url, max_cost=a.max_cost)
    m = result["mcnemar"]
    print(d / "requery.json")
    print(f"pairs {result['pairs']}: errors with full history {result['errors_full']}, current frame only "
          f"{result['errors_current']}; discordant {m['b']} vs {m['c']}")
    if m["p"] is not None:
        lo, hi = m["ci95"]
        f = (lambda x: "inf" if x is None else f"{x:.2f}")
        print(f"exact McNemar p = {m['p']:.4f}; odds ratio (current only vs full) {f(m['odds_ratio'])} "
              f"[{f(lo)}, {f(hi)}]")
    if result.get("stopped"):
        sys.stderr.write("workstation: stopped at the cost cap; run again with a higher --max-cost to finish\n")
        return 1
    return 0 if result["complete"] else 1


def _stuck(a: argparse.Namespace, sources: list[str]) -> int:
    from workstation.judge.stuck import report, stuck_table

    if not sources:
        raise UserError("judge stuck needs SOURCE...: batch directories, results CSVs or recordings")
    ask = None
    if a.judge:
        from workstation.judge.run import make_judge_agent
        from workstation.judge.stuck_judge import StuckJudge
        from workstation.judge.verdict import load_judge_prompt

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
        result["judge"] = {"spec": a.judge, "calls": ask.usage_calls, "cost_usd": round(ask.cost_usd, 6)}
    print(json.dumps(result, indent=1) if a.json else stuck_table(result))
    return 0
