"""The ``workstation`` command. Headless commands never import Textual."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from workstation.base.errors import DamagedArtifact, UserError
from workstation.commands import arena as arena_command
from workstation.commands import batch as batch_command
from workstation.commands import compare as compare_command
from workstation.commands import doctor as doctor_command
from workstation.commands import export as export_command
from workstation.commands import idc as idc_command
from workstation.commands import import_runs as import_command
from workstation.commands import judge as judge_command
from workstation.commands import ls as ls_command
from workstation.commands import prompts as packs_command
from workstation.commands import qa as qa_command
from workstation.commands import recording as recording_command
from workstation.commands import report as report_command
from workstation.commands import run as run_command
from workstation.commands import screen as screen_command
from workstation.commands import session as session_command
from workstation.run.launch import HomeLaunch
from workstation.store.framestore import FrameStoreError
from workstation.store.recording import DamagedRecording, RecordingWriteError
from workstation.tui import open_tui

EXIT_BAD_INPUT = 2
# a subcommand's default naming its positional list (nargs "+") that takes the paths given after its options too
# (argparse alone fills a positional list from the first run of paths only)
INTERMIXED = "intermixed_positional"

# Commands that live in their own modules. Each module has ``register(sub)``, which adds
# its subparser and sets ``func=<callable(args) -> int>`` as a default. Import it above and
# add it here (one line each). A command that opens a screen calls ``args.open_tui(Launch(...))``.
COMMAND_MODULES = (
    run_command,  # run, games
    recording_command,  # verify, info, request
    screen_command,  # watch, play, open
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
        more = getattr(parsed, INTERMIXED, None)  # a command whose list of paths may go on after its options
        if extras and more and not any(x.startswith("-") for x in extras):
            getattr(parsed, more).extend(extras)  # `report b2 --paper judged/`: judged/ is one of the paths
            extras = []
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


def _version_text() -> str:
    from importlib import metadata

    try:
        return f"workstation {metadata.version('atari-workstation')}"
    except metadata.PackageNotFoundError:
        return "workstation (development copy)"


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="workstation", description="Atari VLM workstation (AtariBench protocol). "
                "`workstation` alone opens the TUI's home screen; the commands below do one thing each.")
    p.add_argument("--version", action="version", version=_version_text())
    p.set_defaults(open_tui=open_tui)  # the door to the TUI, for the commands that open a screen
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser, metavar="COMMAND")
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
    if a.cmd is None:  # `workstation` alone: the home screen
        return int(a.open_tui(HomeLaunch()))
    return int(a.func(a))


if __name__ == "__main__":
    sys.exit(main())
