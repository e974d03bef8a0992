"""The ``workstation`` command. Headless commands never import Textual."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXIT_BAD_INPUT = 2


from workstation.errors import UserError

# Commands that live in their own modules. Each module has ``register(sub)``, which adds
# its subparser and sets ``func=<callable(args) -> int>`` as a default. Add one line here.
COMMAND_MODULES: tuple[str, ...] = (
    "workstation.analysis.command",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        sys.stderr.write(f"workstation: error: {message} (see `{self.prog} --help`)\n")
        sys.exit(EXIT_BAD_INPUT)


def _protocol_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("protocol (defaults = the paper)")
    g.add_argument("--frames", type=int, default=900, help="frame budget (default 900 = 30 s on the paper clock)")
    g.add_argument("--max-actions", type=int, default=10, help="1..10 actions per reply (default 10)")
    g.add_argument("--memory", choices=["structured", "append"], default="structured")
    g.add_argument("--history", type=int, default=3, help="K recent clips (default 3)")
    g.add_argument("--reward-history", type=int, default=3, help="R reward/life-loss clips (default 3)")
    g.add_argument("--no-feedback", action="store_true", help="turn the textual feedback notices off")
    g.add_argument("--clock", choices=["paused", "latency"], default="paused")
    g.add_argument("--start", default="fixed", help="fixed (the paper) | noops:N | sticky:P")
    g.add_argument("--guide", choices=["full", "short"], default="full", help="full game guide or goal only")
    g.add_argument("--prompts", default=None, metavar="DIR", help="prompt pack directory (default: built-in)")


def _provider_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model providers")
    g.add_argument("--base-url", default=None, help="SDK base URL (http://host:port/v1 for openai/compat)")
    g.add_argument("--effort", default=None, help="none|minimal|low|medium|high|xhigh|max")
    g.add_argument("--temperature", type=float, default=None)
    g.add_argument("--max-output-tokens", type=int, default=None)
    g.add_argument("--timeout", type=float, default=60.0, help="seconds per call (default 60)")
    g.add_argument("--max-cost", type=float, default=None, metavar="USD", help="stop the run cleanly past this cost")


def _protocol_from(a: argparse.Namespace):
    from workstation.game.protocol import Protocol, StartOption

    return Protocol(frames=a.frames, max_actions=a.max_actions, memory=a.memory, history=a.history,
                    reward_history=a.reward_history, feedback=not a.no_feedback, clock=a.clock,
                    start=StartOption.parse(a.start), guide=a.guide)


def _provider_options(a: argparse.Namespace):
    from workstation.agents import PROVIDER_KINDS

    if a.agent.split(":", 1)[0].strip().lower() not in PROVIDER_KINDS:
        return None
    from workstation.providers import ProviderOptions

    return ProviderOptions(base_url=a.base_url, effort=a.effort, temperature=a.temperature,
                           max_output_tokens=a.max_output_tokens, timeout=a.timeout)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="workstation", description="Atari VLM workstation (AtariBench protocol).")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser)

    r = sub.add_parser("run", help="play one recorded run headless")
    r.add_argument("--game", required=True)
    r.add_argument("--agent", default="random", help="random | replay:PATH | openai:M | compat:M | anthropic:M | gemini:M")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", default="recordings", help="parent directory of the recording (default recordings/)")
    r.add_argument("--quiet", action="store_true", help="print only the recording path")
    _protocol_args(r)
    _provider_args(r)

    sub.add_parser("games", help="list the 21 games")

    v = sub.add_parser("verify", help="re-execute a recording and check every frame")
    v.add_argument("recording")
    i = sub.add_parser("info", help="describe a recording")
    i.add_argument("recording")
    i.add_argument("--json", action="store_true")

    q = sub.add_parser("request", help="print the exact request sent for one turn (images elided, keys redacted)")
    q.add_argument("recording")
    q.add_argument("--turn", type=int, required=True)

    w = sub.add_parser("watch", help="watch an agent play live (TUI)")
    w.add_argument("--game", required=True)
    w.add_argument("--agent", default="random")
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--out", default="recordings")
    w.add_argument("--step", action="store_true", help="start in step mode")
    _protocol_args(w)
    _provider_args(w)

    pl = sub.add_parser("play", help="play yourself, recorded like a model run (TUI)")
    pl.add_argument("--game", required=True)
    pl.add_argument("--seed", type=int, default=0)
    pl.add_argument("--mode", choices=["realtime", "paused"], default="realtime")
    pl.add_argument("--pace", choices=["paper", "native"], default="paper")
    pl.add_argument("--out", default="recordings")
    pl.add_argument("--window", action="store_true", help="play in a pygame window (needs a display)")
    _protocol_args(pl)

    o = sub.add_parser("open", help="replay a recording in the TUI")
    o.add_argument("recording")

    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        sys.stderr.write("workstation: interrupted\n")
        return 130
    except UserError as e:
        sys.stderr.write(f"workstation: error: {e}\n")
        return EXIT_BAD_INPUT
    except Exception as e:  # noqa: BLE001 - map known user errors to one line
        from workstation.errors import user_error_types

        if isinstance(e, user_error_types()):
            sys.stderr.write(f"workstation: error: {e}\n")
            return EXIT_BAD_INPUT
        raise


def _dispatch(a: argparse.Namespace) -> int:
    if getattr(a, "func", None) is not None:
        return a.func(a)
    if a.cmd is None:
        return _tui(["home"], a)
    if a.cmd == "games":
        return _games()
    if a.cmd == "run":
        return _run(a)
    if a.cmd == "verify":
        return _verify(a)
    if a.cmd == "info":
        return _info(a)
    if a.cmd == "request":
        return _request(a)
    return _tui([a.cmd], a)


def _games() -> int:
    from workstation.game.games import GAMES

    rows = [("key", "ALE name", "genre", "primary skill", "actions", "warm-up", "HxW", "")]
    for g in GAMES.values():
        rows.append((g.key, g.ale_name, g.genre, g.skill, str(len(g.allowed)), f"{g.warmup_seconds} s",
                     f"{g.height}x160", "" if g.in_paper else "not in the paper's 20"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for n, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths[:-1]))
    print("\nSticky actions are off (the paper): every seed starts from the same state; use --start noops:30 or sticky:0.25 for seeds that differ.")
    return 0


def _run(a: argparse.Namespace) -> int:
    from workstation.game.games import get_game
    from workstation.runs.start import RunSpec, start_run

    get_game(a.game)  # fail fast on a bad name
    spec = RunSpec(game=a.game, agent=a.agent, seed=a.seed, protocol=_protocol_from(a), prompts=a.prompts,
                   out=a.out, max_cost=a.max_cost, provider_options=_provider_options(a))
    engine = start_run(spec, rewindable=False)
    try:
        summary = engine.run()
    except KeyboardInterrupt:  # run() has already closed the recording as "interrupted"
        print(engine.writer.path)
        raise
    finally:
        engine.close()
    print(engine.writer.path)
    if not a.quiet:
        print(_summary_line(summary))
    if summary.get("stopped") and not summary.get("complete"):
        sys.stderr.write(f"workstation: run stopped: {summary['stopped']}\n")
        return 1
    return 0


def _summary_line(s: dict) -> str:
    cost = s.get("cost_usd")
    cost_txt = f" cost=${cost:.4f}" if cost else ""
    state = "complete" if s.get("complete") else f"INCOMPLETE ({s.get('stopped') or 'killed'})"
    return (f"{s.get('game')} seed={s.get('seed')} agent={s.get('agent')} score={s.get('total_reward', 0):g} "
            f"frames={s.get('frames')} turns={s.get('turns')} lives_lost={s.get('lives_lost')} "
            f"invalid={s.get('invalid_turns')}{cost_txt} {state}")


def _open(path: str):
    from workstation.store.recording import Recording

    return Recording(Path(path))


def _verify(a: argparse.Namespace) -> int:
    from workstation.runs.verify import verify

    rec = _open(a.recording)
    res = verify(rec)
    if res.ok:
        print(f"OK: {res.frames_checked} frames identical ({rec.path})")
        return 0
    print(f"MISMATCH: first differing frame {res.first_mismatch}: {res.detail}")
    return 1


def _info(a: argparse.Namespace) -> int:
    rec = _open(a.recording)
    s = rec.summary_or_partial()
    if a.json:
        print(json.dumps({"manifest": rec.manifest, "summary": s, "size_bytes": rec.size_bytes()}, indent=2))
        return 0
    m = rec.manifest
    from workstation.game.protocol import Protocol

    changed = Protocol.from_json(m.get("protocol", {})).changed()
    print(f"recording  {rec.path}")
    print(f"game       {m.get('game')} ({m.get('env_id')})   seed {m.get('seed')}   run id {m.get('run_id')}")
    print(f"agent      {m.get('agent', {}).get('spec')}")
    print(f"protocol   {'paper defaults' if not changed else ', '.join(f'{k}={v}' for k, v in changed.items())}")
    print(f"prompts    {m.get('prompt_pack', {}).get('name')} ({m.get('prompt_pack', {}).get('digest')})")
    if "parent" in m:
        print(f"branch of  {m['parent'].get('path')} at turn {m['parent'].get('turn')}")
    print(f"result     {_summary_line(s)}")
    print(f"size       {rec.size_bytes() / 1e6:.2f} MB, {len(rec.frames)} frames")
    return 0


def _request(a: argparse.Namespace) -> int:
    from workstation.runs.request import dump_request

    print(dump_request(_open(a.recording), a.turn))
    return 0


def _tui(which: list[str], a: argparse.Namespace) -> int:
    try:
        from screens.app import run_app
    except ImportError as e:  # pragma: no cover - textual is a declared dependency
        raise UserError(f"the TUI cannot start ({e}); reinstall with `pip install -e .`") from e
    return run_app(which[0], a)


if __name__ == "__main__":
    sys.exit(main())
