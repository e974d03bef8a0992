"""The ``workstation`` command. Headless commands never import Textual."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from workstation import session_command
from workstation.analysis import command as report_command
from workstation.analysis import compare_command
from workstation.arena import command as arena_command
from workstation.batch import command as batch_command
from workstation.doctor import command as doctor_command
from workstation.errors import DamagedArtifact, UserError
from workstation.export import command as export_command
from workstation.idc import command as idc_command
from workstation.judge import command as judge_command
from workstation.launch import SCREENS, HomeLaunch, Launch, MatchLaunch, OpenLaunch, PlayLaunch, WatchLaunch
from workstation.packs import command as packs_command
from workstation.qa import command as qa_command
from workstation.runs import ls_command
from workstation.runs.importers import command as import_command
from workstation.store.framestore import FrameStoreError
from workstation.store.recording import DamagedRecording, RecordingWriteError
from workstation.tui import open_tui

if TYPE_CHECKING:
    from workstation.options import RunSpec
    from workstation.providers import ProviderOptions
    from workstation.store.recording import Recording

EXIT_BAD_INPUT = 2

# Commands that live in their own modules. Each module has ``register(sub)``, which adds
# its subparser and sets ``func=<callable(args) -> int>`` as a default. Import it above and
# add it here (one line each). A command that opens a screen calls ``args.open_tui(Launch(...))``.
COMMAND_MODULES = (
    ls_command,
    report_command,
    import_command,
    batch_command,
    compare_command,
    session_command,
    export_command,
    qa_command,
    packs_command,
    judge_command,
    idc_command,
    arena_command,
    doctor_command,
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no usage dump
        sys.stderr.write(f"workstation: error: {message} (see `{self.prog} --help`)\n")
        sys.exit(EXIT_BAD_INPUT)

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """As argparse's, but an unknown argument is refused by the (sub)command it was given to, so the
        line points to that command's own help (`workstation run --help`), not the whole program's."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            _chosen(self, parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        assert isinstance(parsed, argparse.Namespace)
        return parsed


def _chosen(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest subcommand parser the parsed line chose (`qa gen`), else ``parser`` itself."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(parsed, subs[0].dest, None) if subs else None
        if not subs or name not in subs[0].choices:
            return parser
        parser = subs[0].choices[name]


def _run_args(p: argparse.ArgumentParser, agent: bool = True) -> None:
    """The run's own arguments, generated from the spec's declarations (workstation.options)."""
    from workstation.options import RUN_SETTING, add_argument

    add_argument(p, RUN_SETTING["game"], required=True)
    if agent:
        add_argument(p, RUN_SETTING["agent"])
    add_argument(p, RUN_SETTING["seed"])
    add_argument(p, RUN_SETTING["out"])


def _spec(a: argparse.Namespace, agent: str | None = None) -> RunSpec:
    """The checked run spec of a run/watch/play command line (SpecError names the flag; nothing written)."""
    from workstation.options import preflight, spec_from_args

    spec = spec_from_args(a, agent=agent)
    preflight(spec, command=getattr(a, "cmd", None))
    from workstation.store.local_paths import refuse_inside_artifacts

    refuse_inside_artifacts(spec.out, "--out", getattr(a, "cmd", None) or "run")  # a batch's runs/, a study...
    return spec


def _provider_args(p: argparse.ArgumentParser) -> None:
    """The model agents' arguments (--base-url, --effort, ..., --max-cost), for commands in their own modules."""
    from workstation.options import add_model_arguments

    add_model_arguments(p)


def _provider_options(a: argparse.Namespace) -> ProviderOptions | None:
    """``ProviderOptions`` from those arguments when ``a.agent`` is a model (None otherwise); SpecError names the flag."""
    from workstation.options import provider_options_from_args

    return provider_options_from_args(a)


def _version_text() -> str:
    from importlib import metadata

    try:
        return f"workstation {metadata.version('atari-workstation')}"
    except metadata.PackageNotFoundError:
        return "workstation (development copy)"


def build_parser() -> argparse.ArgumentParser:
    from workstation.options import (
        add_experience_arguments,
        add_model_arguments,
        add_play_arguments,
        add_protocol_arguments,
    )

    p = _Parser(prog="workstation", description="Atari VLM workstation (AtariBench protocol). "
                "`workstation` alone opens the TUI's home screen; the commands below do one thing each.")
    p.add_argument("--version", action="version", version=_version_text())
    p.set_defaults(open_tui=open_tui)  # the door to the TUI, for the commands that open a screen
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser, metavar="COMMAND")
    rec_help = "a recording directory (one run: manifest.json, turns.jsonl, frames, summary.json)"

    r = sub.add_parser("run", help="play one recorded run headless", description="Play one run without the TUI "
                       "and record it; prints the recording's path and a summary line (exit 0, or 1 if it stopped).")
    _run_args(r)
    r.add_argument("--quiet", action="store_true", help="print only the recording path (no progress on stderr, "
                   "no summary line)")
    add_protocol_arguments(r)
    add_model_arguments(r)
    add_experience_arguments(r)
    r.add_argument("--max-failed-turns", type=int, default=3, metavar="N", help="stop the run after N turns in "
                   "a row lost to provider errors (no usable reply after every retry; default 3, 0 = never)")

    gm = sub.add_parser("games", help="list the 21 games", description="List the 21 games: key, ALE name, genre, "
                   "skill, actions, warm-up and frame size.")
    gm.add_argument("--variants", action="store_true", help="also list each game's ALE modes and difficulties "
                    "(for --game-mode / --game-difficulty; reads every ROM, about 2 s)")

    v = sub.add_parser("verify", help="re-execute a recording and check every frame",
                       description="Re-execute a recording's actions and check them against what it holds "
                       "(exit 0 identical, 1 mismatch).")
    v.add_argument("recording", metavar="RECORDING", help=rec_help)
    v.add_argument("--quick", action="store_true", help="no re-execution: check each file against the size and "
                   "digest in the summary, and the summary against the turns and frames")
    i = sub.add_parser("info", help="describe a recording", description="What a recording is and how it ended.")
    i.add_argument("recording", metavar="RECORDING", help=rec_help)
    i.add_argument("--json", action="store_true", help="print the manifest, the summary and the size as JSON")

    q = sub.add_parser("request", help="print the exact request sent for one turn (images elided, keys redacted)",
                       description="The exact request a model got on one turn, rebuilt from the recording "
                       "(images as size and digest, keys redacted); the neutral prompt for other agents.")
    q.add_argument("recording", metavar="RECORDING", help=rec_help)
    q.add_argument("--turn", type=int, required=True, metavar="N",
                   help="the turn, counted from 0 as in the recording and the TUI")
    q.add_argument("--json", action="store_true",
                   help="print the neutral request as JSON: messages of text and image parts (image = budget frame)")
    q.add_argument("--side", type=int, default=1, metavar="1|2", help="a two-player match: the side (default 1)")

    w = sub.add_parser("watch", help="watch an agent play live (TUI)", description="Watch an agent play live in "
                       "the TUI, with the exact prompt it was sent; --step holds before each prompt and reply.")
    _run_args(w)
    w.add_argument("--step", action="store_true", help="start in step mode")
    add_protocol_arguments(w)
    add_model_arguments(w)
    add_experience_arguments(w)


    pl = sub.add_parser("play", help="play yourself, recorded like a model run (TUI)",
                        description="Play a game yourself in the TUI; the run is recorded with agent human.")
    add_play_arguments(pl)

    o = sub.add_parser("open", help="replay a recording in the TUI",
                       description="Replay a recording turn by turn in the TUI.")
    o.add_argument("recording", metavar="RECORDING", help=rec_help)

    for module in COMMAND_MODULES:
        module.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code = _main(args)
    # the process's own command line (not a caller's), and no profiler or debugger waiting for the normal end
    if argv is None and getattr(args, "quick_exit", False) and sys.getprofile() is None and sys.gettrace() is None:
        quick_exit(code)
    return code


def quick_exit(code: int) -> None:
    """End the process now that the command is done: the exit handlers run (multiprocessing's among them,
    which release the batch's semaphores), the output is flushed, and the interpreter's teardown of every
    object is skipped: after a batch of hundreds of runs that teardown alone took ~0.5 s."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _main(args: argparse.Namespace) -> int:
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        sys.stderr.write("workstation: interrupted\n")
        return 130
    except BrokenPipeError:  # `workstation ls | head`: the reader left; say nothing more
        try:
            sys.stdout = open(os.devnull, "w")  # so the interpreter's final flush stays quiet
        except OSError:
            pass
        return 0
    except (DamagedRecording, DamagedArtifact, FrameStoreError) as e:  # a damaged recording (before UserError, which it is): exit 1, as `verify`
        text = str(e) if "damaged" in str(e) else f"damaged recording: {e}"
        sys.stderr.write(f"workstation: error: {_one_line(text)}\n")
        return 1
    except UserError as e:  # every error a user can cause: one line, exit 2
        sys.stderr.write(f"workstation: error: {e}\n")
        return EXIT_BAD_INPUT
    except RecordingWriteError as e:  # the run stopped; its recording says so where it could
        sys.stderr.write(f"workstation: error: {e}\n")
        return 1
    except OSError as e:
        if e.filename is None:  # not the user's doing: keep its traceback
            raise
        # the user's file system said no (a directory where a file should be, a file where a directory
        # should be, no permission, a name too long, a full disk): one line naming the path.
        sys.stderr.write(f"workstation: error: {os_error_line(e)}\n")
        return EXIT_BAD_INPUT


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def os_error_line(e: OSError) -> str:
    """One line for an OSError about a path: what the system said, the path, and what to do."""
    import errno

    where = f"{e.filename}" + (f" -> {e.filename2}" if getattr(e, "filename2", None) else "")
    hint = {errno.EACCES: "check its permissions", errno.EPERM: "check its permissions",
            errno.EISDIR: "it is a directory; give a file", errno.ENOTDIR: "a part of the path is a file; give a "
            "directory", errno.ENAMETOOLONG: "use a shorter name", errno.ENOSPC: "free some space",
            errno.EROFS: "choose a writable place", errno.EEXIST: "it already exists; choose another name",
            errno.ELOOP: "a link there points to itself", errno.ENOENT: "check the path"}.get(e.errno or 0, "check the path")
    return _one_line(f"cannot use {where}: {e.strerror or e} ({hint})")


def _dispatch(a: argparse.Namespace) -> int:
    if getattr(a, "func", None) is not None:
        return int(a.func(a))
    if a.cmd is None:
        return _tui(["home"], a)
    if a.cmd == "games":
        return _games(a.variants)
    if a.cmd == "run":
        return _run(a)
    if a.cmd == "verify":
        return _verify(a)
    if a.cmd == "info":
        return _info(a)
    if a.cmd == "request":
        return _request(a)
    return _tui([a.cmd], a)


def _games(variants: bool = False) -> int:
    from workstation.game.games import GAMES

    if variants:
        from workstation.game.clock import game_variants
        from workstation.text_table import text_table

        table: list[tuple[str, str, str]] = [("key", "modes", "difficulties")]
        for key in GAMES:
            modes, difficulties = game_variants(key)
            table.append((key, " ".join(map(str, modes)), " ".join(map(str, difficulties))))
        print("\n".join(text_table(table, rules=[0])))
        print("\nWithout --game-mode / --game-difficulty a game plays its default variant (the paper's); "
              "a grid's [protocol] table sets them as mode / difficulty.")
        return 0
    rows = [("key", "ALE name", "genre", "primary skill", "actions", "warm-up", "HxW", "in the paper")]
    for g in GAMES.values():
        rows.append((g.key, g.ale_name, g.genre, g.skill, str(len(g.allowed)), f"{g.warmup_seconds} s",
                     f"{g.height}x160", "yes" if g.in_paper else "no (not in the paper's 20)"))
    from workstation.text_table import text_table

    print("\n".join(text_table(rows, rules=[0])))
    print("\nSticky actions are off (the paper): every seed starts from the same state; use --start noops:30 or sticky:0.25 for seeds that differ.")
    return 0


def _run(a: argparse.Namespace) -> int:
    from workstation.runs.drive import drive
    from workstation.runs.start import start_run

    spec = _spec(a)
    if a.max_failed_turns < 0:
        raise UserError(f"--max-failed-turns must be 0 (never stop) or more (got {a.max_failed_turns})")
    engine = start_run(spec, rewindable=False, max_failed_turns=a.max_failed_turns)
    if engine.replay_note:
        sys.stderr.write(f"workstation: warning: {engine.replay_note} (recorded in manifest.json)\n")
    if not a.quiet:
        from workstation.runs.progress import RunProgress

        engine.observers.append(RunProgress(engine))
    try:
        summary = drive(engine)
    except KeyboardInterrupt:  # run() has already closed the recording as "interrupted"
        print(engine.recording_path)
        raise
    finally:
        engine.close()
    print(engine.recording_path)
    if summary is None:  # drive returns only when the run has ended; an ended run has its summary
        raise RuntimeError("the run ended without a summary")
    if not a.quiet:
        print(_summary_line(summary.to_json()))
    idled = getattr(engine.agent, "idled", 0)
    if idled:  # a replay under a longer budget than its source's: say it, the recording says it turn by turn
        sys.stderr.write(f"workstation: note: the replayed recording had {getattr(engine.agent, 'source_turns', '?')} turns; the "
                         f"{idled} turn{'s' if idled != 1 else ''} after them played noop\n")
    if summary.stopped and not summary.complete:
        sys.stderr.write(f"workstation: run stopped: {summary.stopped}\n")
        return 1
    if summary.turns and (summary.failed_turns or 0) >= summary.turns:
        sys.stderr.write(f"workstation: the run did not really play: all {summary.turns} turns were lost "
                         "to provider errors (see `workstation info`)\n")
        return 1
    return 0


def _summary_line(s: dict[str, Any], damage: str | None = None) -> str:
    from workstation.store.series import summary_line

    return summary_line(s, damage)


def _open(path: str) -> Recording:
    from workstation.store.recording import Recording

    return Recording(Path(path))


def _verify(a: argparse.Namespace) -> int:
    from workstation.analysis.artifacts import is_artifact, verify_artifact
    from workstation.runs.verify import verify

    if is_artifact(a.recording):  # a judge study, IDC rounds, a QA set or eval, a batch, a session ...
        ok, line = verify_artifact(a.recording, quick=a.quick)
        print(line)
        return 0 if ok else 1
    rec = _open(a.recording)
    if rec.manifest_record.kind == "match":  # a two-player match has its own rule (workstation.arena.verify)
        from workstation.arena.verify import verify_match as verify
    from workstation.runs.hand_check import replan_problems

    if a.quick:
        from workstation.store.integrity import quick_verdict

        ok, line = quick_verdict(rec)
        if ok and (replanned := replan_problems(rec)):  # a run changed by hand that claims to be plain
            ok, line = False, f"DAMAGED: {replanned[0]} ({rec.path})"
        print(line)
        return 0 if ok else 1
    damage = rec.problems()
    if not damage and (replanned := replan_problems(rec)):
        print(f"DAMAGED: {replanned[0]} ({rec.path})")
        return 1
    if damage:  # a file differs from its digest: re-executing would compare against something else than was written
        from workstation.store.integrity import quick_verdict

        print(quick_verdict(rec)[1])
        return 1
    res = verify(rec)
    if res.ok:
        note = (f"; the last {res.unchecked_frames} frames belong to a turn the killed run never recorded"
                if res.unchecked_frames else "")
        from workstation.store.series import plural

        print(f"OK: {plural(res.frames_checked, 'frame')} identical, {plural(res.turns_checked, 'turn')} and the "
              "totals agree "
              f"({rec.path}){note}")
        return 0
    print(f"MISMATCH: first differing frame {res.first_mismatch}: {res.detail}")
    return 1


def _info(a: argparse.Namespace) -> int:
    from workstation.runs.hand_check import replan_problems

    rec = _open(a.recording)
    # changed by hand or plain is the one thing info cannot leave open (other damage is shown with the rest)
    if rec.manifest_record.kind == "match":  # a match is read only whole: both sides, scores and result
        from workstation.store.integrity import match_problems

        found = match_problems(rec)
    else:
        found = rec.hand.problems or ([] if rec.damage() else replan_problems(rec))
    if found:
        raise DamagedRecording(f"damaged recording {rec.path}: {found[0]}; `workstation verify --quick "
                               f"{rec.path}` says more")
    s = rec.summary_or_partial()
    damage = rec.damage()  # the fast integrity check: a damaged recording is never called complete
    if a.json:
        print(json.dumps({"manifest": rec.manifest, "summary": s, "size_bytes": rec.size_bytes(),
                          "damage": damage, "run_id": rec.run_id, "plain_run_id": rec.plain_run_id,
                          "interventions": rec.interventions}, indent=2))
        if damage:
            sys.stderr.write(f"workstation: {damage}\n")
        return 1 if damage else 0
    m = rec.manifest_record  # typed: a field of the wrong type was already one line
    from workstation.game.protocol import Protocol

    changed = Protocol.from_json(m.protocol if isinstance(m.protocol, dict) else {}).changed()
    print(f"recording  {rec.path}")
    print(f"game       {m.game} ({m.env_id})   seed {m.seed}   run id {rec.run_id}")
    print(f"agent      {m.agent_spec}")
    print(f"protocol   {'paper defaults' if not changed else ', '.join(f'{k}={v}' for k, v in changed.items())}")
    print(f"prompts    {m.prompt_pack.get('name')} ({m.prompt_pack.get('digest')})")
    if m.parent is not None:
        print(f"branch of  {m.parent.get('path')} at turn {m.parent.get('turn')}")
    print(f"result     {_summary_line(s, damage and rec.problems()[0])}")
    if rec.manifest_record.kind == "match" and s.get("players"):  # score= above is side 1's
        print("players    " + ", ".join(f"side {p['side']} {p['agent']} {p['score']:g}" for p in s["players"])
              + f"; {s.get('result', '')}")
    from workstation.runs.info import calls_line, hand_line

    print(hand_line(rec))
    if (line := calls_line(rec, rec.outcome())) is not None:
        print(line)
    print(f"size       {rec.size_bytes() / 1e6:.2f} MB, {len(rec.frames)} frame{'s' if len(rec.frames) != 1 else ''}")
    if damage:
        sys.stderr.write(f"workstation: {damage}\n")
    return 1 if damage else 0


def _request(a: argparse.Namespace) -> int:
    from workstation.runs.request import dump_request, request_json

    rec = _open(a.recording).require_sound()
    if rec.manifest_record.kind == "match":  # each side was asked its own prompt (workstation.arena.request)
        from workstation.arena.request import dump_side_request, side_request_json

        if a.json:
            print(json.dumps(side_request_json(rec, a.turn, a.side), ensure_ascii=False))
            return 0
        print(dump_side_request(rec, a.turn, a.side))
        return 0
    if a.side != 1:  # one player: there is no other side's prompt to show
        raise UserError(f"this recording has one player; --side {a.side} is for two-player match recordings "
                        "(drop --side)")
    if a.json:
        print(json.dumps(request_json(rec, a.turn), ensure_ascii=False))
        return 0
    print(dump_request(rec, a.turn))
    return 0


def _tui(which: list[str], a: argparse.Namespace) -> int:
    screen = which[0]
    if screen == "play" and getattr(a, "vs", None):  # a person against a model: a two-player match
        from workstation.arena.command import play_vs

        return int(a.open_tui(MatchLaunch(**play_vs(a))))
    launch: Launch = HomeLaunch()
    if screen == "watch":
        launch = WatchLaunch(_spec(a), step=bool(getattr(a, "step", False)))
    elif screen == "play":
        launch = PlayLaunch(_spec(a, agent="human"), window=bool(getattr(a, "window", False)))
    elif screen == "open":
        _open(a.recording)  # a missing or unreadable recording is one line before any screen
        launch = OpenLaunch(a.recording)
    elif screen != "home":
        raise ValueError(f"unknown screen {screen!r}: use {', '.join(SCREENS)}")
    return int(a.open_tui(launch))


if __name__ == "__main__":
    sys.exit(main())
