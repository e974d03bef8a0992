"""`workstation report DIR|results.csv`: the paper's analysis of a batch, or of any results CSV;
`workstation report EVAL_DIR...`: several `qa eval` results side by side (workstation.studies.qa.report)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("report", help="analyse a batch's results (means, ranks, separability, ablations, cost)",
                       description="The paper's analysis of a batch (or any results CSV, or several joined): mean "
                       "scores, ranks, separability, paired-bootstrap ablations and cost; or several `qa eval` "
                       "results side by side; --json / --md also write it.")
    p.add_argument("results", metavar="DIR|results.csv", nargs="+",
                   help="a batch directory (its results.csv and runs/), a batch's --out URI (s3://bucket/prefix: its "
                        "results.csv) or any CSV with setting, game, seed, score; "
                        "or several `qa eval` result directories, put side by side")
    p.add_argument("--baseline", default="random", help="the baseline setting's label (default random)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the report as JSON")
    p.add_argument("--md", default=None, metavar="FILE", help="also write the report as Markdown")
    p.add_argument("--plots", default=None, metavar="DIR", help="write rank_heatmap.png and scores.png (needs matplotlib)")
    p.add_argument("--include-changed", action="store_true",
                   help="count runs changed by hand (overridden plans, edited prompts, branches; the by_hand "
                        "column); by default they are left out and the report says how many")
    p.add_argument("--bootstrap-seed", type=int, default=0, metavar="N", help="seed of the ablation bootstrap (default 0)")
    p.add_argument("--paper", action="store_true", help="the paper's tables and figures from a batch plus any "
                   "qa eval, judge and stuck results (Markdown; PNGs with --plots); see workstation/studies/analysis/paper.py")
    p.set_defaults(func=run, intermixed_positional="results")  # `report BATCH --paper EVAL judged/`: paths anywhere


def run(args: argparse.Namespace) -> int:
    from workstation.base.errors import UserError
    from workstation.studies.analysis import report
    from workstation.studies.analysis.report_paths import check_report_args
    from workstation.studies.qa import report as qa_report

    check_report_args(args)  # every number and output path, before anything is read, computed or printed
    if args.paper:
        from workstation.studies.analysis.paper import paper

        print(paper(args.results, args.md, args.plots, args.baseline, args.bootstrap_seed), end="")
        return 0
    from workstation.studies.idc.report import is_idc_dir
    from workstation.studies.idc.report import report as idc_report

    if len(args.results) == 1 and is_idc_dir(args.results[0]):  # an IDC directory: its curve and transfer
        return idc_report(args.results[0], args.json, args.md)
    evals = [qa_report.is_eval_dir(p) for p in args.results]
    if any(evals):
        if not all(evals):
            other = args.results[evals.index(False)]
            raise UserError(f"{other} is not a `qa eval` result directory (no summary.json with accuracy); "
                            "report either eval directories side by side or one batch, not a mix")
        if args.plots:
            raise UserError("--plots is for batch reports; eval results have no plots")
        return qa_report.report(args.results, args.json, args.md)
    import sys

    from workstation.studies.analysis.table import load_many, mixed_conditions
    from workstation.studies.batch.out_uri import fetch_results, is_remote

    sources = [fetch_results(p) if is_remote(p) else p for p in args.results]  # a batch's URI: its results.csv
    results = load_many(sources, include_changed=args.include_changed)  # batches, sessions and CSVs joined
    r = report.build(results, baseline=args.baseline, bootstrap_seed=args.bootstrap_seed)
    for line in mixed_conditions(results)[:2]:
        sys.stderr.write(f"workstation: warning: {line}\n")
    if args.plots:  # before printing, so a missing matplotlib fails with one line and nothing else
        from workstation.studies.analysis.plots import write_plots

        written = write_plots(r, args.plots)
    else:
        written = []
    report.write(r, args.json, args.md)
    print(report.render(r), end="")
    for path in [args.json, args.md, *map(str, written)]:
        if path:
            print(f"wrote {path}")
    return 0
