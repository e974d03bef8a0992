"""``workstation qa eval SET --agent A``: score an agent on a question set."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any


def register(qsub: Any) -> None:
    from workstation.run.options import add_model_arguments

    e = qsub.add_parser("eval", help="ask an agent every question (repeated), score per capability",
                        description="Ask an agent every question of a set (--repeats times each), score the answers "
                        "per capability and write them to --out; run it again to resume.")
    e.add_argument("set", metavar="SET", help="question-set directory (from `workstation qa gen`)")
    e.add_argument("--agent", required=True, help="random | openai:M | compat:M | anthropic:M | gemini:M (not replay: or human)")
    e.add_argument("--repeats", type=int, default=5, help="times each question is asked (default 5, the paper)")
    e.add_argument("--concurrency", type=int, default=1, metavar="N", help="questions in flight at once (default 1)")
    e.add_argument("--out", default=None, metavar="DIR", help="results directory, never inside SET (default <SET>-evals/<agent>, "
                   "beside the set)")
    e.add_argument("--status", default="proposed,accepted,edited",
                   help="which questions to ask, by status (default proposed,accepted,edited)")
    e.add_argument("--prompts", default=None, metavar="DIR", help="prompt pack for the decision-long guides")
    e.add_argument("--seed", type=int, default=0, help="seed of the random agent")
    add_model_arguments(e)  # --base-url, --effort, ..., --max-cost: declared once, in workstation.run.options
    e.set_defaults(qa_func=_eval)

    t = qsub.add_parser("table", help="several evals side by side (the paper's Table 2 layout)",
                        description="Print the accuracy of several `qa eval` results side by side, per capability "
                        "(the paper's Table 2 layout).")
    t.add_argument("evals", nargs="+", metavar="DIR", help="directories written by `workstation qa eval`")
    t.add_argument("--json", action="store_true", help="print the accuracy objects as JSON")
    t.set_defaults(qa_func=_table)


def _table(a: argparse.Namespace) -> int:
    import json

    from workstation.store.local_paths import refuse_uri
    from workstation.studies.qa.evaluate import table
    from workstation.studies.qa.report import as_json, load, note_mixed_sets

    for d in a.evals:
        refuse_uri(d, "", "qa table reads local eval directories")
    summaries = load(a.evals)
    if a.json:
        print(json.dumps(as_json(summaries), indent=1))
    else:
        note_mixed_sets(summaries)
        print(table(summaries))
    return 0


def _eval(a: argparse.Namespace) -> int:
    from workstation.base.errors import UserError
    from workstation.run.job_exit import job_exit
    from workstation.studies.qa.evaluate import default_out, run_eval, table
    from workstation.studies.qa.qset import STATUSES

    if a.repeats < 1 or a.concurrency < 1:
        raise UserError("--repeats and --concurrency must be at least 1")
    for name, hi in (("repeats", 1000), ("concurrency", 256)):
        if getattr(a, name) > hi:
            raise UserError(f"--{name} must be at most {hi} (got {getattr(a, name)})", name)
    from workstation.game.seed import check_seed

    check_seed(a.seed)
    from workstation.store.local_paths import refuse_uri

    refuse_uri(a.set, "", "qa eval reads a local question set")
    refuse_uri(a.out, "--out", "qa eval writes to a local directory")
    statuses = tuple(s.strip() for s in a.status.split(",") if s.strip())
    bad = [s for s in statuses if s not in STATUSES]
    if bad or not statuses:
        raise UserError(f"unknown status {bad[0] if bad else a.status!r}: use {', '.join(STATUSES)}")
    check_agent(a)
    if a.max_cost is not None and not 0 <= a.max_cost < float("inf"):
        raise UserError(f"--max-cost must be a finite number of dollars, 0 or more (got {a.max_cost})", "max_cost")
    from workstation.run.options import provider_options_from_args

    options = provider_options_from_args(a)  # None for the built-in agents; a bad value names its flag
    out = Path(a.out) if a.out else default_out(Path(a.set), a.agent)
    # the old default place, inside the set: an eval there is still read (qa table, report) but never written to
    legacy = Path(a.set) / "evals" / re.sub(r"[^A-Za-z0-9._-]+", "-", a.agent)
    if not a.out and (legacy / "eval.json").is_file():
        raise UserError(f"{legacy} holds an eval of {a.agent} inside the set (the old default place); an eval is "
                        f"no longer written inside its set: move it to {out} and run the same command to resume it")
    summary = run_eval(Path(a.set), a.agent, out, repeats=a.repeats, concurrency=a.concurrency, statuses=statuses,
                       provider_options=options, prompts=a.prompts, seed=a.seed,
                       max_cost=a.max_cost)
    print(out)
    print(table([summary]))
    return job_exit(summary.stopped, summary.complete, summary.cost_usd,
                    "some calls failed; run the same command again to retry them")


MODEL_FLAGS = (("base_url", "--base-url"), ("effort", "--effort"), ("temperature", "--temperature"),
               ("max_output_tokens", "--max-output-tokens"), ("timeout", "--timeout"), ("max_cost", "--max-cost"))


def check_agent(a: argparse.Namespace) -> None:
    """The random agent or a model; a model's flags only with a model (nothing written before this)."""
    from workstation.base.errors import UserError
    from workstation.run.agents.registry import PROVIDER_KINDS

    spec = a.agent.strip()
    kind = spec.split(":", 1)[0].lower()
    if spec.lower() == "random":
        given = [flag for name, flag in MODEL_FLAGS if getattr(a, name, None) is not None]
        if given:
            raise UserError(f"{given[0]} applies to model agents; the random agent takes no model options "
                            "(drop it, or give --agent openai:M ...)")
        return
    if kind not in PROVIDER_KINDS or ":" not in spec or not spec.split(":", 1)[1].strip():
        raise UserError(f"qa eval asks random or a model ({', '.join(k + ':MODEL' for k in PROVIDER_KINDS)}), "
                        f"not {spec!r}" + (" (a replay or a human cannot answer questions)"
                                           if kind in ("replay", "human") else ""))
