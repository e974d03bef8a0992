"""``workstation qa``: diagnostic question sets (gen, eval)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError


def register(sub: Any) -> None:
    qa = sub.add_parser("qa", help="diagnostic QA: question sets from recordings, scored on models")
    qsub = qa.add_subparsers(dest="qa_cmd", parser_class=type(qa))

    g = qsub.add_parser("gen", help="propose questions with answers from RAM",
                        description="Propose diagnostic questions about frames of recordings, each answered from "
                        "the game's RAM, and write them as a new question set (status proposed, for `qa curate`).")
    g.add_argument("--recordings", nargs="+", required=True, metavar="DIR", help="recordings, or directories holding them")
    g.add_argument("--out", required=True, metavar="SET", help="new question-set directory")
    g.add_argument("--per-game", type=int, default=12, metavar="N", help="questions per game, 1..10000 (default 12)")
    g.add_argument("--categories", nargs="+", default=None,
                   help="categories (comma or space separated; perception, motion, decision name their pairs)")
    g.add_argument("--seed", type=int, default=0, help="seed of the choice of questions, 0..4294967295 (default 0)")
    g.set_defaults(qa_func=_gen)

    c = qsub.add_parser("curate", help="look at each question's frames; accept, reject or edit it (TUI)",
                        description="Open a question set in the TUI: look at each question's frames and accept, "
                        "reject or edit it; each decision is saved in the set as it is made.")
    c.add_argument("set", metavar="SET", help="question-set directory")
    c.set_defaults(qa_func=_curate)

    qa.set_defaults(func=lambda a: a.qa_func(a) if getattr(a, "qa_func", None) else _no_subcommand(qsub))
    try:
        from workstation.commands import qa_eval
    except ImportError:
        return
    qa_eval.register(qsub)


def _no_subcommand(qsub: Any) -> int:
    raise UserError(f"qa needs a subcommand: {', '.join(qsub.choices)} (see `workstation qa --help`)")


def _curate(a: argparse.Namespace) -> int:
    from workstation.store.local_paths import refuse_uri
    from workstation.studies.qa.qset import check_frames, read_set

    refuse_uri(a.set, "", "qa curate reads a local question set")
    check_frames(Path(a.set), read_set(Path(a.set)))  # a malformed set or frame is one line before any screen
    from workstation.run.launch import QaCurateLaunch

    code: int = a.open_tui(QaCurateLaunch(a.set))
    return code


MAX_PER_GAME = 10_000  # questions per game
# what marks a directory as an artifact (a recording, anything sealed, an IDC, a batch, a set): a new set is never
# written inside one
ARTIFACT_MARKS = (("manifest.json",), ("seal.json",), ("curve.json",), ("placement.jsonl",), ("results.csv", "runs"),
                  ("set.json", "questions.jsonl"))


def _check_gen_out(out: Path, recordings: list[str]) -> None:
    """A new set's directory is new (or empty), outside every --recordings input and every other artifact, at any
    depth: one line before anything is read or written."""
    target = out.expanduser().resolve()
    for d in recordings:
        root = Path(d).expanduser().resolve()
        if target == root or root in target.parents:
            raise UserError(f"--out {out} is inside --recordings {d}, an input; choose a directory outside it", "out")
    for above in target.parents:
        mark = next((" and ".join(m) for m in ARTIFACT_MARKS if all((above / n).exists() for n in m)), None)
        if mark is not None:
            raise UserError(f"--out {out} is inside {above} (it holds {mark}); a question set is never written "
                            "inside another artifact: choose a directory outside it", "out")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; choose a new directory", "out")
    if out.is_dir() and any(out.iterdir()):
        raise UserError(f"--out {out} is not empty; a question set goes into a new or empty directory", "out")


def _gen(a: argparse.Namespace) -> int:
    from workstation.game.seed import check_seed
    from workstation.studies.qa.gen import generate, parse_categories, write
    from workstation.studies.qa.qset import QUESTIONS, SetWriter
    from workstation.studies.qa.scene import open_scenes

    if not 1 <= a.per_game <= MAX_PER_GAME:
        raise UserError(f"--per-game must be 1..{MAX_PER_GAME} (got {a.per_game})", "per_game")
    check_seed(a.seed)
    cats = parse_categories(a.categories)
    from workstation.store.local_paths import refuse_uri

    refuse_uri(a.out, "--out", "qa gen writes a question set to a local directory")
    for d in a.recordings:
        refuse_uri(d, "--recordings", "qa gen reads local recordings")
    out = Path(a.out)
    if (out / QUESTIONS).exists():
        raise UserError(f"{out} already holds a question set; choose a new --out directory")
    _check_gen_out(out, a.recordings)
    scenes, skipped = open_scenes(a.recordings)
    for note in skipped:
        sys.stderr.write(f"workstation: skipped {note}\n")
    if not scenes:
        raise UserError("none of the recordings is of a game with a RAM map; "
                        "record one of: assault, boxing, breakout, fishing_derby, freeway, gopher, name_this_game, pacman, qbert, riverraid")
    chosen = generate(scenes, a.per_game, cats, a.seed)
    meta = {"made_by": "workstation qa gen", "seed": a.seed, "per_game": a.per_game, "categories": cats,
            "recordings": sorted({s.run_id for s in scenes})}
    with SetWriter(out, meta) as w:
        qs = write(chosen, w)
    print(out)
    by = Counter((q["game"], q["category"]) for q in qs)
    games = sorted({g for g, _ in by})
    for g in games:
        row = ", ".join(f"{c} {by[(g, c)]}" for c in cats if by[(g, c)])
        print(f"  {g}: {sum(by[(g, c)] for c in cats)} ({row})")
    print(f"{len(qs)} questions from {len(scenes)} recording(s)")
    return 0
