"""Bad command lines: one line naming the flag, exit 2, no traceback, nothing written. And the help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workstation.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _bad_pack(root: Path) -> Path:
    pack = root / "badpack"
    pack.mkdir()
    (pack / "template.toml").write_text("not = = toml")
    return pack


CASES = [
    (["run", "--seed", "-1"], "--seed must be 0..4294967295"),
    (["run", "--seed", str(2**70)], "--seed must be 0..4294967295"),
    (["watch", "--seed", "-1"], "--seed must be 0..4294967295"),
    (["play", "--seed", "-1"], "--seed must be 0..4294967295"),
    (["run", "--frames", "1000000000000"], "--frames must be 1..108000"),
    (["run", "--frames", "0"], "--frames must be 1..108000"),
    (["run", "--start", "noops:100000"], "N must be a whole number 0..1000"),
    (["run", "--start", "sticky:2"], "bad --start"),
    (["run", "--max-cost", "-1"], "--max-cost must be more than 0"),
    (["run", "--max-cost", "0"], "--max-cost must be more than 0"),
    (["run", "--max-cost", "nan"], "--max-cost must be a number"),
    (["run", "--effort", "bogus"], "invalid choice: 'bogus'"),
    (["run", "--effort", "low"], "--effort applies to model agents"),
    (["run", "--timeout", "-1"], "--timeout must be more than 0"),
    (["run", "--timeout", "5"], "--timeout applies to model agents"),
    (["watch", "--base-url", "http://127.0.0.1:9/v1"], "--base-url applies to model agents"),
    (["run", "--temperature", "0.5", "--agent", f"replay:{SAMPLE}"], "--temperature applies to model agents"),
    (["run", "--max-output-tokens", "0", "--agent", "openai:gpt-5.1"], "--max-output-tokens must be at least 1"),
    (["run", "--agent", "openai:gpt-4o", "--effort", "low"], "takes no effort"),
    (["run", "--agent", "anthropic:claude-sonnet-4-6", "--effort", "minimal"], "does not take effort"),
    (["run", "--agent", "compat:m"], "needs --base-url"),
    (["run", "--agent", "human"], "plays in the TUI"),
    (["run", "--agent", "replay:/nonexistent/rec"], "no recording at /nonexistent/rec"),
    (["run", "--history", "1000"], "--history must be 0..50"),
    (["run", "--reward-history", "-1"], "--reward-history must be 0..50"),
    (["run", "--max-actions", "0"], "--max-actions must be 1..10"),
    (["run", "--out", "{file}"], "is a file, not a directory"),
    (["watch", "--out", "{file}/sub"], "which is a file"),
    (["run", "--out", "/proc/1/recordings"], "cannot write in /proc/1"),
    (["play", "--prompts", "{tmp}/missing-pack"], "prompt pack"),
    (["play", "--prompts", "{badpack}"], "template.toml"),
    (["watch", "--prompts", "{badpack}"], "template.toml"),
    (["play", "--mode", "turbo"], "invalid choice: 'turbo'"),
]


@pytest.mark.parametrize("args, needle", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_line_exit_2_nothing_written(args, needle, tmp_path, capsys, monkeypatch):
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    file = tmp_path / "file"
    file.write_text("x")
    badpack = _bad_pack(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    words = [a.format(file=file, tmp=tmp_path, badpack=badpack) for a in args]
    code, out, err = run_cli(capsys, words[0], "--game", "breakout", "--out", str(tmp_path / "rec"), *words[1:])
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err and out == ""
    assert sorted(tmp_path.rglob("*")) == before, "nothing is written"


def test_help_says_what_every_argument_is(capsys):
    def helptext(*args: str) -> str:
        code, out, _ = run_cli(capsys, *args, "--help")
        assert code == 0
        return " ".join(out.split())

    top = helptext()
    assert "`workstation` alone opens the TUI" in top and "--version" in top
    run = helptext("run")
    assert "breakout" in run and "time_pilot" in run and "run seed, 0..4294967295" in run
    assert "1..108000" in run and "noops:N (N 0..1000)" in run and "--no-feedback" in run
    assert "model thinking effort: none|minimal|low" in run and "> 0" in run
    watch = helptext("watch")
    assert "who plays: random | replay:PATH | human | openai:MODEL" in watch
    assert "a recording directory" in helptext("info") and "as JSON" in helptext("info")
    request = helptext("request")
    assert "--turn N" in request and "counted from 0" in request
    assert "a recording directory" in helptext("verify") and "a recording directory" in helptext("open")
    play = helptext("play")
    assert "realtime: the game never waits" in play and "--agent" not in play
    assert "--effort" not in play


def test_every_command_describes_itself_and_a_judge_mode_has_its_own_help(capsys):
    def description(*args: str) -> str:
        code, out, _ = run_cli(capsys, *args, "--help")
        assert code == 0
        usage, _, rest = out.partition("\n\n")  # the usage, then the description (if any) before the arguments
        first = rest.split("\n\n")[0]
        assert not first.startswith(("positional arguments", "options")), f"{args}: no description"
        return " ".join(out.split())

    assert "MP4 or GIF" in description("export")
    assert "qa eval" in description("report")
    assert "RAM" in description("qa", "gen") and "per capability" in description("qa", "eval")
    assert "accept" in description("qa", "curate") and "side by side" in description("qa", "table")
    assert "identical" in description("import", "atari-bench")
    stuck = description("judge", "stuck")
    assert "workstation judge stuck SOURCE..." in stuck and "--min-turns" in stuck and "--turns N" not in stuck
    requery = description("judge", "requery")
    assert "--model-base-url" in requery and "--min-turns" not in requery
    assert "--turns N" in description("judge")  # the whole command's help without a mode


def test_version(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.startswith("workstation ")


def test_a_bad_watch_never_starts_the_tui(tmp_path):
    code = ("import sys; from workstation.cli import main; "
            f"r = main(['watch','--game','breakout','--seed','-1','--out',{str(tmp_path)!r}]); "
            "bad=[m for m in sys.modules if m.split('.')[0] in ('textual','screens')]; print('EXIT', r, bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "EXIT 2 []" in r.stdout, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "--seed" in r.stderr
