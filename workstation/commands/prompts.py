"""`workstation prompts ...`: build a pack from the public harness, show a game's prompt, compare two packs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workstation.engine.promptpack import PromptPack

import argparse
import difflib
import shutil
import sys
import tempfile
from pathlib import Path

from workstation.base.errors import UserError

GUIDE_CHOICES = ("full", "short", "visual", "steps", "goal")  # workstation.engine.promptpack.GUIDE_CHOICES (a test)
LEVELS = GUIDE_CHOICES[2:]


def register(sub: Any) -> None:
    p = sub.add_parser("prompts", help="prompt packs: build one from the AtariBench harness, show, diff",
                       description="Prompt packs hold every word a model is sent and the action words it may "
                       "answer with. PACK is a pack directory, or `default` for the built-in pack.")
    ps = p.add_subparsers(dest="prompts_cmd", metavar="COMMAND", required=True)
    f = ps.add_parser("from-atari-bench", help="build a pack with the paper's exact prompts from your harness checkout",
                      description="Read the prompt modules of your own checkout of the public AtariBench harness "
                      "(github.com/mignonjia/AtariBench) as data, never running them, and write a pack that "
                      "reproduces its prompts, action words and warm-up; then run with --prompts PACK.")
    f.add_argument("harness", metavar="HARNESS_DIR", help="the directory of the harness checkout")
    f.add_argument("--out", required=True, metavar="PACK", help="the pack directory to write (must not exist, or be empty)")
    f.set_defaults(func=_from_atari_bench)
    s = ps.add_parser("show", help="print one game's first prompt and its action words",
                      description="The first turn's prompt of a game as PACK writes it (images as markers), "
                      "then the words it accepts and the actions they play, and the warm-up.")
    s.add_argument("pack", metavar="PACK")
    s.add_argument("--game", required=True, metavar="G", help="game key, e.g. breakout")
    s.add_argument("--guide", default="full", choices=GUIDE_CHOICES, metavar="|".join(GUIDE_CHOICES),
                   help="the guide or instruction level to show (default full)")
    s.set_defaults(func=_show)
    d = ps.add_parser("diff", help="where two packs differ: action words, warm-up, text",
                      description="Compare two packs: layout, how each plays every action word either teaches "
                      "(an ALE action, or refused), each game's warm-up, the template's strings and the guides. "
                      "Exit 0 when they are the same, 1 when they differ.")
    d.add_argument("a", metavar="A")
    d.add_argument("b", metavar="B")
    d.set_defaults(func=_diff)


def _load(arg: str) -> PromptPack:
    from workstation.engine.promptpack import load_pack

    if arg == "default":
        return load_pack(None)
    path = Path(arg).expanduser()
    if path.is_file():
        raise UserError(f"{arg} is a file; give a pack directory (template.toml, games/) or `default`")
    if not path.is_dir():
        raise UserError(f"{arg}: no such pack directory; give a pack directory or `default`")
    for name in ("vocabulary.toml", "warmup.toml"):  # optional files: absent is fine, anything but a file is not
        part = path / name
        if (part.exists() or part.is_symlink()) and not part.is_file():
            raise UserError(f"prompt pack {arg}: {name} is not a file; make it a file or remove it", file=str(part))
    return load_pack(path)


def _from_atari_bench(a: argparse.Namespace) -> int:
    from workstation.engine.promptpack import PromptPackError, load_pack
    from workstation.studies.packs.from_atari_bench import read_harness, write_pack

    root = Path(a.harness).expanduser()
    out = Path(a.out).expanduser()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"--out {a.out}: already exists and is not an empty directory; choose a new pack directory")
    inside = _inside(out, root)
    if inside:
        raise UserError(f"--out {a.out} is inside the harness checkout {a.harness}, the input; the pack is never "
                        "written into it: choose a directory outside it")
    harness = read_harness(root)
    made = [p for p in (out.parent, *out.parent.parents) if not p.exists()]  # removed again if the pack fails
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".pack-", dir=out.parent))
    try:
        write_pack(harness, tmp, root.resolve())
        pack = load_pack(tmp)  # checked in full before it is put where asked
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except PromptPackError as exc:
        _undo(tmp, made)
        raise UserError(f"the pack made from {root} does not load ({exc}); is the checkout complete?") from None
    except BaseException:
        _undo(tmp, made)
        raise
    pack = load_pack(out)
    n_words = sum(len(w) for w in harness.words.values())
    print(f"wrote {out}: {len(harness.guides)} game guides, {n_words} action words, digest {pack.digest}")
    print("could not read: " + "; ".join(harness.unread) if harness.unread else "every file of the harness was read")
    for note in pack.warmup_notes():
        print(f"warm-up {note}")
    print(levels_line(pack))
    print(f"play with it: workstation run --game breakout --prompts {out} ...")
    return 0


def _inside(out: Path, root: Path) -> bool:
    """Whether ``out`` is ``root`` or lies inside it at any depth, symlinks and ``..`` resolved on both sides."""
    try:
        target, src = out.resolve(), root.resolve()
    except (OSError, RuntimeError):
        return False
    return src.is_dir() and (target == src or target.is_relative_to(src))


def _undo(tmp: Path, made: list[Path]) -> None:
    """Remove the half-made pack and the directories made for it (innermost first), leaving nothing behind."""
    shutil.rmtree(tmp, ignore_errors=True)
    for p in made:
        try:
            p.rmdir()
        except OSError:
            break


def _show(a: argparse.Namespace) -> int:
    from workstation.engine.prompt_builder import PromptBuilder
    from workstation.game.games import get_game
    from workstation.game.protocol import Protocol

    pack = _load(a.pack)
    game = pack.game(get_game(a.game))
    problem = pack.level_problem(a.guide)
    if problem:
        raise UserError(problem.replace("--guide", "prompts show --guide", 1))
    prompt = PromptBuilder(game, Protocol(guide=a.guide), pack).build([], 0)
    print(f"# {game.key} in pack {pack.name} ({pack.path}, digest {pack.digest}, layout {pack.layout}), "
          f"guide {a.guide} ({len(pack.guide(game, a.guide))} characters)")
    print(f"# {levels_line(pack)}")
    print(prompt.render_text())
    print(f"\n# action words ({game.matching} matching): word -> action (id)")
    for word, action in game.aliases.items():
        print(f"  {word} -> {game.action_name(action)} ({action})")
    print(f"# offered actions: {', '.join(game.action_names)}")
    print(f"# built-in agents say: {', '.join(game.offered_words)}")
    print(f"# warm-up: {game.warmup_seconds:g} s")
    for note in pack.warmup_notes():
        if note.startswith(game.key + ":"):
            print(f"# {note}")
    return 0


def _diff(a: argparse.Namespace) -> int:
    from workstation.game.games import GAMES

    pa, pb = _load(a.a), _load(a.b)
    out: list[str] = []
    if pa.layout != pb.layout:
        out.append(f"layout: {pa.layout} | {pb.layout}")
    for key in GAMES:
        ga, gb = pa.game(key), pb.game(key)
        if ga.matching != gb.matching:
            out.append(f"{key} matching: {ga.matching} | {gb.matching}")
        for w in sorted(set(ga.aliases) | set(gb.aliases)):  # how each pack plays each word either one teaches
            ia, ib = ga.vocabulary.lookup(w), gb.vocabulary.lookup(w)
            if ia != ib:
                na = "refused" if ia is None else ga.action_name(ia)
                nb = "refused" if ib is None else gb.action_name(ib)
                out.append(f"{key} word {w!r}: {na} | {nb}")
        if ga.warmup_seconds != gb.warmup_seconds:
            out.append(f"{key} warm-up: {ga.warmup_seconds:g} s | {gb.warmup_seconds:g} s")
        for variant in ("full", "short", *(v for v in LEVELS if v in pa.levels and v in pb.levels)):
            if pa.guide(key, variant) != pb.guide(key, variant):
                out.append(f"{key} {variant} guide: differs")
    if pa.levels != pb.levels:
        out.append(f"instruction levels: {', '.join(pa.levels) or 'none'} | {', '.join(pb.levels) or 'none'}")
    for key in sorted(set(pa.strings) | set(pb.strings)):
        sa, sb = pa.strings.get(key), pb.strings.get(key)
        if sa == sb:
            continue
        if sa is None or sb is None:
            out.append(f"template {key}: {'only in ' + a.b if sa is None else 'only in ' + a.a}")
            continue
        out.append(f"template {key}:")
        for line in list(difflib.unified_diff(sa.splitlines(), sb.splitlines(), lineterm="", n=0))[2:12]:
            out.append("  " + line)
    if not out:
        print(f"{a.a} and {a.b} are the same (digests {pa.digest}, {pb.digest})")
        return 0
    print(f"# {a.a} (digest {pa.digest}) | {a.b} (digest {pb.digest})")
    sys.stdout.write("\n".join(out) + "\n")
    return 1


def levels_line(pack: PromptPack) -> str:
    """Which guides a pack has: the full and short guides always, the instruction levels when it has them."""
    short = "short" if pack.layout != "document" else "short (= full: the harness has one guide a game)"
    if pack.levels:
        return f"guides: full, {short}; instruction levels: {', '.join(pack.levels)}"
    return (f"guides: full, {short}; lacks the instruction levels {', '.join(LEVELS)} "
            "(a run with --guide at one of them is refused)")
