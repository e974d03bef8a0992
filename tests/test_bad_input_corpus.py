"""The second bad-input corpus (issue 16): file-system edges, damaged content, absurd grids, silent yeses and
screens that would open for bad input, against batch, report, compare, export, import, session, qa and
ls/info/verify/request.

Every case runs the real CLI in-process on a small world of real files (``bad_input_world``: one pristine world
for the test process, copied once for the module, put back as it was from a pristine copy after every case), then checks: a non-zero exit (2 for bad
input; 1 or 2 for a damaged recording, whose reading fails as bad input or whose check fails as damage), at most 3 lines on stderr, no traceback, no screen opened, and every file of the
world byte for byte and mode for mode as it was.

The tests run as root, and root reads a mode-000 file anyway: an unreadable path is then simulated by making
``open``/``os.open``/``os.scandir`` raise ``PermissionError`` for it (what a non-root user gets), on top of the
real ``chmod 000``.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import workstation.cli as cli
import workstation.tui as tui
from tests.bad_input_world import copy_world, edit_json, pristine_world, restore, snapshot

BAD, DAMAGED = (2,), (1, 2)


@dataclass
class Case:
    id: str
    args: list[str]
    setup: Callable[[Path], None] | None = None
    codes: tuple[int, ...] = BAD
    says: str | None = None
    deny: tuple[str, ...] = ()  # world paths made unreadable
    silent: bool = False  # refused before anything is printed on stdout
    extra_files: Callable[[Path], list[Path]] = field(default=lambda w: [])


# -- damage --------------------------------------------------------------------------------------------------
def random_bytes(rel: str):
    def f(w: Path) -> None:
        p = w / rel
        p.write_bytes(os.urandom(p.stat().st_size))
    return f


def truncate(rel: str, keep: int):
    def f(w: Path) -> None:
        p = w / rel
        p.write_bytes(p.read_bytes()[:keep])
    return f


def make_dir(rel: str):
    def f(w: Path) -> None:
        p = w / rel
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
        p.mkdir()
        (p / "x").write_text("x")
    return f


def write(rel: str, text: str):
    def f(w: Path) -> None:
        (w / rel).write_text(text, encoding="utf-8")
    return f


def set_json(rel: str, **fields):
    def f(w: Path) -> None:
        edit_json(w / rel, lambda d: {**d, **fields})
    return f


def first_line(rel: str, text: str, line: int = 0):
    def f(w: Path) -> None:
        p = w / rel
        lines = p.read_text(encoding="utf-8").splitlines()
        lines[line] = text
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


def loop(rel: str):
    def f(w: Path) -> None:
        p = w / rel
        p.unlink()
        p.symlink_to(p.name)  # a link to itself: every open is ELOOP
    return f


def both(*fs):
    def f(w: Path) -> None:
        for g in fs:
            g(w)
    return f


RECORDING_DAMAGE = {
    "frames-random-bytes": random_bytes("rec/frames.bin"),
    "frames-truncated": truncate("rec/frames.bin", 1000),
    "frames-empty": truncate("rec/frames.bin", 0),
    "frames-dir": make_dir("rec/frames.bin"),
    "frames-idx-random": random_bytes("rec/frames.idx"),
    "frames-link-loop": loop("rec/frames.bin"),
    "manifest-protocol-string": set_json("rec/manifest.json", protocol="fast"),
    "manifest-protocol-list": set_json("rec/manifest.json", protocol=[1, 2]),
    "manifest-protocol-bad-frames": set_json("rec/manifest.json", protocol={"frames": "many"}),
    "manifest-list": write("rec/manifest.json", "[1, 2, 3]"),
    "manifest-not-json": write("rec/manifest.json", "{not json"),
    "manifest-seed-string": set_json("rec/manifest.json", seed="zero"),
    "manifest-unknown-game": set_json("rec/manifest.json", game="nosuchgame"),
    "manifest-agent-string": set_json("rec/manifest.json", agent="random"),
    "manifest-frame-shape": set_json("rec/manifest.json", frame_shape=[1, 1]),
    "manifest-dir": make_dir("rec/manifest.json"),
    "turns-line-list": first_line("rec/turns.jsonl", "[1, 2, 3]"),
    "turns-line-garbage": first_line("rec/turns.jsonl", "{garbage"),
    "turns-line-number": first_line("rec/turns.jsonl", "42", line=3),
    "turns-actions-bogus": first_line("rec/turns.jsonl", json.dumps(
        {"turn": 0, "start_frame": 0, "end_frame": 3, "actions": ["FLY"], "planned": ["FLY"],
         "action_rewards": [0], "action_life_lost": [False], "action_frames": [3]})),
    "turns-dir": make_dir("rec/turns.jsonl"),
    "summary-list": write("rec/summary.json", "[]"),
    "summary-reward-string": set_json("rec/summary.json", total_reward="lots"),
    "summary-frames-huge": set_json("rec/summary.json", frames=1e308),
    "summary-dir": make_dir("rec/summary.json"),
}
RECORDING_DENY = {"rec-unreadable": "rec", "frames-unreadable": "rec/frames.bin",
                  "turns-unreadable": "rec/turns.jsonl", "summary-unreadable": "rec/summary.json",
                  "manifest-unreadable": "rec/manifest.json"}
RECORDING_COMMANDS = {
    "verify": ["verify", "{w}/rec"],
    "verify-quick": ["verify", "--quick", "{w}/rec"],
    "info": ["info", "{w}/rec"],
    "info-json": ["info", "--json", "{w}/rec"],
    "request": ["request", "{w}/rec", "--turn", "0"],
    "compare-text": ["compare", "--text", "{w}/rec", "{w}/rec1"],
    "export-gif": ["export", "{w}/rec", "-o", "{w}/out.gif", "--to", "30"],
    "export-html": ["export", "{w}/rec", "-o", "{w}/out.html", "--to", "30"],
    "qa-gen": ["qa", "gen", "--recordings", "{w}/rec", "--out", "{w}/newset", "--per-game", "2"],
}
# verify re-executes every frame: a damage it would only find frames later is checked by the quicker commands
SLOW = {"verify"}

CASES: list[Case] = []
for dname, damage in RECORDING_DAMAGE.items():
    for cname, args in RECORDING_COMMANDS.items():
        if cname in SLOW and not (dname.startswith("frames") or dname.startswith("manifest")):
            continue
        CASES.append(Case(f"{cname}:{dname}", args, damage, DAMAGED))
for dname, rel in RECORDING_DENY.items():
    for cname, args in RECORDING_COMMANDS.items():
        CASES.append(Case(f"{cname}:{dname}", args, None, DAMAGED, deny=(rel,)))


# -- ls / info / verify / request: bad paths and numbers -----------------------------------------------------
CASES += [
    Case("ls:unreadable-dir", ["ls", "{w}/recs"], deny=("recs",), says="cannot read"),
    Case("ls:missing-dir", ["ls", "{w}/nowhere"]),
    Case("ls:a-file", ["ls", "{w}/grid.toml"]),
    Case("ls:seed-negative", ["ls", "{w}/recs", "--seed", "-1"]),
    Case("ls:setting-not-pair", ["ls", "{w}/recs", "--setting", "frames"]),
    Case("info:missing", ["info", "{w}/nowhere"]),
    Case("info:a-file", ["info", "{w}/grid.toml"]),
    Case("info:a-batch", ["info", "{w}/batch"]),
    Case("verify:missing", ["verify", "{w}/nowhere"]),
    Case("verify:a-file", ["verify", "--quick", "{w}/grid.toml"]),
    Case("request:turn-too-big", ["request", "{w}/rec", "--turn", "99999"]),
    Case("request:turn-negative", ["request", "{w}/rec", "--turn", "-1"]),
    Case("request:missing", ["request", "{w}/nowhere", "--turn", "0"]),
    Case("request:side-2-one-player", ["request", "{w}/rec", "--turn", "1", "--side", "2"], says="one player"),
    Case("request:side-2-one-player-json", ["request", "{w}/rec", "--turn", "1", "--side", "2", "--json"],
         says="one player"),
    Case("ls:setting-unknown-key", ["ls", "{w}/recs", "--setting", "foo=1"], says="known: frames"),
]


# -- compare -------------------------------------------------------------------------------------------------
CASES += [
    Case("compare:different-games", ["compare", "--text", "{w}/rec", "{w}/other"], says="game"),
    Case("compare:one-recording", ["compare", "--text", "{w}/rec"]),
    Case("compare:five-recordings", ["compare", "--text", *["{w}/rec"] * 5]),
    Case("compare:missing", ["compare", "--text", "{w}/rec", "{w}/nowhere"]),
    Case("compare:a-file", ["compare", "--text", "{w}/rec", "{w}/grid.toml"]),
    Case("compare:tui-without-terminal", ["compare", "{w}/rec", "{w}/rec1"], says="terminal"),
]

# -- export --------------------------------------------------------------------------------------------------
CASES += [
    Case("export:damaged-digest", ["export", "{w}/rec", "-o", "{w}/out.gif"],
         both(truncate("rec/frames.bin", 40000)), DAMAGED, says="damaged"),
    Case("export:compare-different-games", ["export", "{w}/rec", "--compare", "{w}/other", "-o", "{w}/out.gif",
                                            "--to", "30"], says="game"),
    Case("export:out-is-a-dir", ["export", "{w}/rec", "-o", "{w}/recs", "--to", "30"]),
    Case("export:out-dir-named-gif", ["export", "{w}/rec", "-o", "{w}/d.gif", "--to", "30"], make_dir("d.gif")),
    Case("export:out-inside-a-file", ["export", "{w}/rec", "-o", "{w}/grid.toml/out.gif", "--to", "30"]),
    Case("export:out-parent-missing", ["export", "{w}/rec", "-o", "{w}/no/such/out.gif", "--to", "30"]),
    Case("export:out-unwritable", ["export", "{w}/rec", "-o", "/proc/1/out.gif", "--to", "30"]),
    Case("export:out-parent-unwritable", ["export", "{w}/rec", "-o", "{w}/ro/out.gif", "--to", "30"],
         lambda w: (w / "ro").mkdir(), deny=("ro",)),
    Case("export:bad-extension", ["export", "{w}/rec", "-o", "{w}/out.txt"]),
    Case("export:from-after-to", ["export", "{w}/rec", "-o", "{w}/out.gif", "--from", "50", "--to", "10"]),
    Case("export:to-past-end", ["export", "{w}/rec", "-o", "{w}/out.gif", "--to", "99999"]),
    Case("export:overlay-bogus", ["export", "{w}/rec", "-o", "{w}/out.gif", "--overlay", "sparkles"]),
    Case("export:missing", ["export", "{w}/nowhere", "-o", "{w}/out.gif"]),
    Case("export:compare-damaged", ["export", "{w}/rec", "--compare", "{w}/rec1", "-o", "{w}/out.gif", "--to",
                                    "30"], random_bytes("rec1/frames.bin"), DAMAGED),
]

# -- batch ---------------------------------------------------------------------------------------------------
GRID_HEAD = 'name = "g"\ngames = ["breakout"]\n'
SETTING = '\n[[settings]]\nlabel = "random"\nspec = "random"\n'


def grid(text: str, name: str = "g.toml"):
    return write(name, text)


CASES += [
    Case("batch:absurd-seeds", ["batch", "{w}/g.toml", "--out", "{w}/b2"],
         grid(GRID_HEAD + 'seeds = "0..4294967295"\n' + SETTING), says="cells"),
    Case("batch:absurd-seeds-dry-run", ["batch", "{w}/g.toml", "--out", "{w}/b2", "--dry-run"],
         grid(GRID_HEAD + 'seeds = "0..4294967295"\n' + SETTING), says="cells"),
    Case("batch:absurd-product", ["batch", "{w}/g.toml", "--dry-run", "--out", "{w}/b2"],
         grid('name = "g"\ngames = "all"\nseeds = "0..9999"\n[protocol]\nhistory = [0,1,2,3,4,5,6,7,8,9]\n'
              'max_actions = [1,2,3,4,5,6,7,8,9,10]\n' + SETTING), says="cells"),
    Case("batch:seeds-reversed", ["batch", "{w}/g.toml", "--dry-run", "--out", "{w}/b2"],
         grid(GRID_HEAD + 'seeds = "9..0"\n' + SETTING)),
    Case("batch:seeds-past-range", ["batch", "{w}/g.toml", "--dry-run", "--out", "{w}/b2"],
         grid(GRID_HEAD + 'seeds = "4294967290..4294967300"\n' + SETTING)),
    Case("batch:resume-other-seeds", ["batch", "{w}/g.toml", "--out", "{w}/batch"],
         grid(GRID_HEAD.replace('"g"', '"tiny"') + 'seeds = [0, 1]\n[protocol]\nframes = 30\n' + SETTING),
         says="seeds"),
    Case("batch:resume-other-frames", ["batch", "{w}/g.toml", "--out", "{w}/batch"],
         grid(GRID_HEAD.replace('"g"', '"tiny"') + 'seeds = [0]\n[protocol]\nframes = 60\n' + SETTING),
         says="frames"),
    Case("batch:resume-other-grid-dry-run", ["batch", "{w}/g.toml", "--out", "{w}/batch", "--dry-run"],
         grid(GRID_HEAD.replace('"g"', '"tiny"') + 'seeds = [0]\n[protocol]\nframes = 60\n' + SETTING),
         says="frames"),
    Case("batch:resume-grid-toml-is-dir", ["batch", "{w}/grid.toml", "--out", "{w}/batch"], make_dir("batch/grid.toml")),
    Case("batch:resume-grid-toml-garbage", ["batch", "{w}/grid.toml", "--out", "{w}/batch"],
         write("batch/grid.toml", "= = =")),
    Case("batch:results-csv-is-dir", ["batch", "{w}/grid.toml", "--out", "{w}/batch"], make_dir("batch/results.csv")),
    Case("batch:results-jsonl-is-dir", ["batch", "{w}/grid.toml", "--out", "{w}/batch"],
         make_dir("batch/results.jsonl")),
    Case("batch:runs-is-a-file", ["batch", "{w}/grid.toml", "--out", "{w}/b3"],
         lambda w: ((w / "b3").mkdir(), (w / "b3" / "runs").write_text("x"))),
    Case("batch:out-is-a-file", ["batch", "{w}/grid.toml", "--out", "{w}/grid.toml"]),
    Case("batch:out-inside-a-file", ["batch", "{w}/grid.toml", "--out", "{w}/grid.toml/b"]),
    Case("batch:out-unwritable", ["batch", "{w}/grid.toml", "--out", "/proc/1/b"]),
    Case("batch:out-parent-unwritable", ["batch", "{w}/grid.toml", "--out", "{w}/ro/b"],
         lambda w: (w / "ro").mkdir(), deny=("ro",)),
    Case("batch:out-unreadable", ["batch", "{w}/grid.toml", "--out", "{w}/batch"], deny=("batch",)),
    Case("batch:grid-is-dir", ["batch", "{w}/recs"]),
    Case("batch:grid-unreadable", ["batch", "{w}/grid.toml", "--out", "{w}/b2"], deny=("grid.toml",)),
    Case("batch:grid-missing", ["batch", "{w}/nowhere.toml"], says="docs/batches.md"),
    Case("batch:grid-binary", ["batch", "{w}/rec/frames.bin", "--out", "{w}/b2"]),
    Case("batch:concurrency-zero", ["batch", "{w}/grid.toml", "--out", "{w}/b2", "--concurrency", "0"]),
    Case("batch:max-cost-negative", ["batch", "{w}/grid.toml", "--out", "{w}/b2", "--max-cost", "-1"]),
    Case("batch:every-zero", ["batch", "{w}/grid.toml", "--out", "{w}/b2", "--plain", "--every", "0"]),
]

# -- report --------------------------------------------------------------------------------------------------
CASES += [
    Case("report:missing", ["report", "{w}/nowhere"]),
    Case("report:results-csv-is-dir", ["report", "{w}/batch"], make_dir("batch/results.csv")),
    Case("report:csv-unreadable", ["report", "{w}/batch/results.csv"], deny=("batch/results.csv",)),
    Case("report:batch-unreadable", ["report", "{w}/batch"], deny=("batch",)),
    Case("report:csv-binary", ["report", "{w}/x.csv"], lambda w: (w / "x.csv").write_bytes(os.urandom(500))),
    Case("report:csv-no-columns", ["report", "{w}/x.csv"], write("x.csv", "a,b\n1,2\n")),
    Case("report:csv-score-text", ["report", "{w}/x.csv"], write("x.csv", "setting,game,seed,score\nr,breakout,0,lots\n")),
    Case("report:csv-score-nan", ["report", "{w}/x.csv"], write("x.csv", "setting,game,seed,score\nr,breakout,0,nan\n")),
    Case("report:csv-score-inf", ["report", "{w}/x.csv"], write("x.csv", "setting,game,seed,score\nr,breakout,0,1e999\n")),
    Case("report:baseline-missing", ["report", "{w}/batch", "--baseline", "nosuch"]),
    Case("report:json-inside-a-file", ["report", "{w}/batch", "--json", "{w}/grid.toml/r.json"]),
    Case("report:json-is-dir", ["report", "{w}/batch", "--json", "{w}/recs"]),
    Case("report:md-unwritable", ["report", "{w}/batch", "--md", "/proc/1/r.md"]),
    Case("report:plots-is-a-file", ["report", "{w}/batch", "--plots", "{w}/grid.toml"]),
    Case("report:a-recording", ["report", "{w}/rec"]),
    Case("report:session-json-list", ["report", "{w}/session"], write("session/session.json", "[]"), DAMAGED,
         says="session.json"),  # the session's seal names the file edited by hand
    Case("report:empty-dir", ["report", "{w}/empty"], lambda w: (w / "empty").mkdir()),
]

# -- report: every number and output path checked before anything is read, computed or printed --------------
R = ["report", "{w}/batch"]
RCSV = ["report", "{w}/batch/results.csv"]
CASES += [
    Case("report:bootstrap-seed-negative", R + ["--bootstrap-seed", "-1"], says="--bootstrap-seed", silent=True),
    Case("report:bootstrap-seed-negative-baseline", R + ["--baseline", "rand|max_actions=10", "--bootstrap-seed",
                                                         "-1"], says="--bootstrap-seed", silent=True),
    Case("report:bootstrap-seed-huge", R + ["--bootstrap-seed", str(2**64)], says="--bootstrap-seed", silent=True),
    Case("report:paper-bootstrap-seed-negative", R + ["--paper", "--bootstrap-seed", "-1"], says="--bootstrap-seed",
         silent=True),
    Case("report:json-parent-missing", R + ["--json", "{w}/no/such/r.json"], says="does not exist", silent=True),
    Case("report:md-parent-missing", RCSV + ["--md", "{w}/no/r.md"], says="does not exist", silent=True),
    Case("report:paper-md-parent-missing", R + ["--paper", "--md", "{w}/no/r.md"], says="does not exist",
         silent=True),
    Case("report:md-is-dir-csv", RCSV + ["--md", "{w}/recs"], says="directory", silent=True),
    Case("report:md-is-the-batch-grid", R + ["--md", "{w}/batch/grid.toml"], says="the batch's grid", silent=True),
    Case("report:md-is-a-grid", R + ["--md", "{w}/grid.toml"], says="grid", silent=True),
    Case("report:json-is-the-input-csv", RCSV + ["--json", "{w}/batch/results.csv"], says="input", silent=True),
    Case("report:json-is-the-batch-jsonl", R + ["--json", "{w}/batch/results.jsonl"], says="input", silent=True),
    Case("report:json-and-md-same-file", R + ["--json", "{w}/r.out", "--md", "{w}/r.out"], says="same file",
         silent=True),
    Case("report:plots-parent-missing", R + ["--plots", "{w}/no/such/plots"], says="does not exist", silent=True),
    Case("report:json-uri", R + ["--json", "s3://b/r.json"], says="object storage", silent=True),
    Case("report:paper-json", R + ["--paper", "--json", "{w}/r.json"], says="--json", silent=True),
]

# -- import --------------------------------------------------------------------------------------------------
H = "harness/runs/breakout/random/0101_000000_cfg_001_run_001"
IMPORT = ["import", "atari-bench", "{w}/" + H, "--out", "{w}/imported"]
CASES += [
    Case("import:seed-negative", IMPORT, set_json(H + "/summary.json", seed=-1), says="seed"),
    Case("import:seed-huge", IMPORT, set_json(H + "/summary.json", seed=2**40), says="seed"),
    Case("import:seed-string", IMPORT, set_json(H + "/summary.json", seed="one"), says="seed"),
    Case("import:duration-huge", IMPORT,
         lambda w: edit_json(w / H / "summary.json", lambda d: {**{k: v for k, v in d.items() if k != "frame_count"},
                                                               "duration_seconds": 1e308}), says="duration"),
    Case("import:duration-negative", IMPORT,
         lambda w: edit_json(w / H / "summary.json", lambda d: {**{k: v for k, v in d.items() if k != "frame_count"},
                                                               "duration_seconds": -5}), says="duration"),
    Case("import:frame-count-huge", IMPORT, set_json(H + "/summary.json", frame_count=10**30)),
    Case("import:frame-count-string", IMPORT, set_json(H + "/summary.json", frame_count="900")),
    Case("import:history-huge", IMPORT, set_json(H + "/summary.json", history_clips=10**9)),
    Case("import:summary-list", IMPORT, write(H + "/summary.json", "[]")),
    Case("import:summary-dir", IMPORT, make_dir(H + "/summary.json")),
    Case("import:turns-dir", IMPORT, make_dir(H + "/turns.jsonl")),
    Case("import:turn-line-list", IMPORT, first_line(H + "/turns.jsonl", "[1]")),
    Case("import:turn-line-garbage", IMPORT, first_line(H + "/turns.jsonl", "{x")),
    Case("import:turns-unreadable", IMPORT, deny=(H + "/turns.jsonl",)),
    Case("import:run-unreadable", IMPORT, deny=(H,)),
    Case("import:out-is-a-file", ["import", "atari-bench", "{w}/" + H, "--out", "{w}/grid.toml"]),
    Case("import:out-inside-a-file", ["import", "atari-bench", "{w}/" + H, "--out", "{w}/grid.toml/x"]),
    Case("import:out-unwritable", ["import", "atari-bench", "{w}/" + H, "--out", "/proc/1/x"]),
    Case("import:missing", ["import", "atari-bench", "{w}/nowhere", "--out", "{w}/imported"]),
    Case("import:a-recording", ["import", "atari-bench", "{w}/rec", "--out", "{w}/imported"]),
]

# -- session -------------------------------------------------------------------------------------------------
S = ["session", "--games", "breakout", "--seeds", "0"]
SP = S + ["--participant", "p1", "--out", "{w}/session"]
CASES += [
    Case("session:participant-dotdot", S + ["--participant", ".."], says="--participant"),
    Case("session:participant-dot", S + ["--participant", "."], says="--participant"),
    Case("session:participant-slash", S + ["--participant", "a/../../b"], says="--participant"),
    Case("session:participant-too-long", S + ["--participant", "p" * 300], says="--participant"),
    Case("session:participant-too-long-out", S + ["--participant", "p" * 300, "--out", "{w}/s2"]),
    Case("session:participant-newline", S + ["--participant", "a\nb"], says="--participant"),
    Case("session:participant-nul", S + ["--participant", "a\x00b", "--out", "{w}/s2"]),
    Case("session:game-mode-99", S + ["--participant", "p2", "--game-mode", "99", "--out", "{w}/s2"], says="mode"),
    Case("session:game-difficulty-99", S + ["--participant", "p2", "--game-difficulty", "99", "--out", "{w}/s2"]),
    Case("session:prompts-missing", S + ["--participant", "p2", "--prompts", "{w}/nopack", "--out", "{w}/s2"],
         says="prompt"),
    Case("session:prompts-a-file", S + ["--participant", "p2", "--prompts", "{w}/grid.toml", "--out", "{w}/s2"]),
    Case("session:countdown-negative", S + ["--participant", "p2", "--countdown", "-1", "--out", "{w}/s2"]),
    Case("session:practice-negative", S + ["--participant", "p2", "--practice", "-1", "--out", "{w}/s2"]),
    Case("session:practice-huge", S + ["--participant", "p2", "--practice", "100000", "--out", "{w}/s2"]),
    Case("session:frames-zero", S + ["--participant", "p2", "--frames", "0", "--out", "{w}/s2"]),
    Case("session:out-is-a-file", S + ["--participant", "p2", "--out", "{w}/grid.toml"]),
    Case("session:out-inside-a-file", S + ["--participant", "p2", "--out", "{w}/grid.toml/s"]),
    Case("session:out-unwritable", S + ["--participant", "p2", "--out", "/proc/1/s"]),
    Case("session:out-unreadable", SP, deny=("session",)),
    Case("session:json-list", SP, write("session/session.json", "[]")),
    Case("session:json-not-json", SP, write("session/session.json", "{")),
    Case("session:json-settings-string", SP, set_json("session/session.json", settings="p1")),
    Case("session:json-steps-string", SP, set_json("session/session.json", steps="all")),
    Case("session:json-steps-garbage", SP, set_json("session/session.json", steps=[[1, 2]])),
    Case("session:json-dir", SP, make_dir("session/session.json")),
    Case("session:other-settings", S[:3] + ["0,1", "--participant", "p1", "--out", "{w}/session"], says="seeds"),
    Case("session:new-without-terminal", S + ["--participant", "p3", "--out", "{w}/s3"], says="terminal"),
    Case("session:resume-without-terminal", SP, says="terminal"),
]

# -- play / watch / open: no terminal ------------------------------------------------------------------------
CASES += [
    Case("play:without-terminal", ["play", "--game", "breakout", "--out", "{w}/p"], says="terminal"),
    Case("watch:without-terminal", ["watch", "--game", "breakout", "--agent", "random", "--out", "{w}/p"],
         says="terminal"),
    Case("watch-step:without-terminal", ["watch", "--game", "breakout", "--step", "--out", "{w}/p"], says="terminal"),
    Case("open:without-terminal", ["open", "{w}/rec"], says="terminal"),
    Case("open:missing", ["open", "{w}/nowhere"]),
    Case("open:damaged", ["open", "{w}/rec"], set_json("rec/manifest.json", protocol="x"), DAMAGED),
    Case("play:out-inside-a-file", ["play", "--game", "breakout", "--out", "{w}/grid.toml/p"]),
    Case("watch:replay-missing", ["watch", "--game", "breakout", "--agent", "replay:{w}/nowhere", "--out", "{w}/p"]),
]

# -- qa ------------------------------------------------------------------------------------------------------
GEN = ["qa", "gen", "--recordings", "{w}/recs", "--out", "{w}/newset", "--per-game", "2"]
EVAL = ["qa", "eval", "{w}/qaset", "--agent", "random", "--repeats", "1", "--out", "{w}/ev2"]


def damage_pngs(w: Path) -> None:
    for p in sorted((w / "qaset" / "frames").iterdir())[:5]:
        p.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(64))


CASES += [
    Case("qa-gen:out-exists", GEN[:4] + ["{w}/qaset"] + GEN[5:]),
    Case("qa-gen:out-is-a-file", GEN[:4] + ["{w}/grid.toml"] + GEN[5:]),
    Case("qa-gen:out-inside-a-file", GEN[:4] + ["{w}/grid.toml/s"] + GEN[5:]),
    Case("qa-gen:out-unwritable", GEN[:4] + ["/proc/1/s"] + GEN[5:]),
    Case("qa-gen:recordings-missing", ["qa", "gen", "--recordings", "{w}/nowhere", "--out", "{w}/newset"]),
    Case("qa-gen:recordings-unreadable", GEN, deny=("recs",)),
    Case("qa-gen:recordings-empty-dir", ["qa", "gen", "--recordings", "{w}/empty", "--out", "{w}/newset"],
         lambda w: (w / "empty").mkdir()),
    Case("qa-gen:per-game-zero", GEN[:-1] + ["0"]),
    Case("qa-gen:per-game-negative", GEN[:-1] + ["-3"]),
    Case("qa-gen:categories-bogus", GEN + ["--categories", "astrology"]),
    Case("qa-gen:recs-frames-random-bytes", GEN, random_bytes("recs/breakout-random-s0/frames.bin"), DAMAGED),
    Case("qa-gen:recs-frames-ram-truncated", GEN, truncate("recs/breakout-random-s0/frames.ram", 10), DAMAGED),
    Case("qa-curate:damaged-pngs", ["qa", "curate", "{w}/qaset"], damage_pngs, DAMAGED, says="PNG"),
    Case("qa-curate:png-missing", ["qa", "curate", "{w}/qaset"],
         lambda w: sorted((w / "qaset" / "frames").iterdir())[0].unlink(), DAMAGED),
    Case("qa-curate:missing", ["qa", "curate", "{w}/nowhere"]),
    Case("qa-curate:a-recording", ["qa", "curate", "{w}/rec"]),
    Case("qa-curate:questions-line-list", ["qa", "curate", "{w}/qaset"], first_line("qaset/questions.jsonl", "[1]"),
         DAMAGED),
    Case("qa-curate:set-json-list", ["qa", "curate", "{w}/qaset"], write("qaset/set.json", "[]"), DAMAGED),
    Case("qa-curate:questions-dir", ["qa", "curate", "{w}/qaset"], make_dir("qaset/questions.jsonl"), DAMAGED),
    Case("qa-curate:without-terminal", ["qa", "curate", "{w}/qaset"], says="terminal"),
    Case("qa-curate:unreadable", ["qa", "curate", "{w}/qaset"], deny=("qaset",)),
    Case("qa-eval:random-temperature", EVAL + ["--temperature", "0.5"], says="--temperature"),
    Case("qa-eval:random-base-url", EVAL + ["--base-url", "http://127.0.0.1:9/v1"], says="--base-url"),
    Case("qa-eval:random-effort", EVAL + ["--effort", "low"], says="--effort"),
    Case("qa-eval:random-max-output-tokens", EVAL + ["--max-output-tokens", "10"]),
    Case("qa-eval:random-timeout", EVAL + ["--timeout", "5"]),
    Case("qa-eval:replay", ["qa", "eval", "{w}/qaset", "--agent", "replay:{w}/rec", "--out", "{w}/ev2"],
         says="replay"),
    Case("qa-eval:replay-empty", ["qa", "eval", "{w}/qaset", "--agent", "replay:", "--out", "{w}/ev2"]),
    Case("qa-eval:human", ["qa", "eval", "{w}/qaset", "--agent", "human", "--out", "{w}/ev2"]),
    Case("qa-eval:unknown-agent", ["qa", "eval", "{w}/qaset", "--agent", "bogus:x", "--out", "{w}/ev2"]),
    Case("qa-eval:repeats-zero", EVAL[:6] + ["0"] + EVAL[7:]),
    Case("qa-eval:concurrency-zero", EVAL + ["--concurrency", "0"]),
    Case("qa-eval:status-bogus", EVAL + ["--status", "maybe"]),
    Case("qa-eval:out-is-a-file", EVAL[:-1] + ["{w}/grid.toml"]),
    Case("qa-eval:out-inside-a-file", EVAL[:-1] + ["{w}/grid.toml/e"]),
    Case("qa-eval:set-missing", ["qa", "eval", "{w}/nowhere", "--agent", "random", "--out", "{w}/ev2"]),
    Case("qa-eval:questions-line-list", EVAL, first_line("qaset/questions.jsonl", "[1]"), DAMAGED),
    Case("qa-eval:questions-line-number", EVAL, first_line("qaset/questions.jsonl", "7"), DAMAGED),
    Case("qa-eval:set-json-list", EVAL, write("qaset/set.json", "[]"), DAMAGED),
    Case("qa-eval:set-json-dir", EVAL, make_dir("qaset/set.json"), DAMAGED),
    Case("qa-eval:damaged-pngs", EVAL, damage_pngs, DAMAGED),
    Case("qa-eval:existing-eval-json-list", EVAL[:-1] + ["{w}/qaeval"], write("qaeval/eval.json", "[]"), DAMAGED),
    Case("qa-table:not-an-eval", ["qa", "table", "{w}/recs"]),
    Case("qa-table:missing", ["qa", "table", "{w}/nowhere"]),
    Case("qa-table:summary-list", ["qa", "table", "{w}/qaeval"], write("qaeval/summary.json", "[]"), DAMAGED),
    Case("qa-table:summary-dir", ["qa", "table", "{w}/qaeval"], make_dir("qaeval/summary.json"), DAMAGED),
    Case("qa-table:summary-garbage", ["qa", "table", "{w}/qaeval"], write("qaeval/summary.json", "{"), DAMAGED),
    Case("qa-table:summary-fields-wrong", ["qa", "table", "{w}/qaeval"],
         set_json("qaeval/summary.json", accuracy={"overall": "high"}), DAMAGED),
    Case("qa-table:unreadable", ["qa", "table", "{w}/qaeval"], deny=("qaeval",)),
]

# -- object-store URIs where a command works on local paths: refused, nothing made (no local folder `s3:`) ----
RUN = ["run", "--game", "breakout", "--frames", "30"]
MATCH = ["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--frames", "30"]
URI = "object storage is for"
CASES += [
    Case("run:out-s3", RUN + ["--out", "s3://b/p"], says="run writes to a local directory"),
    Case("run:out-gs", RUN + ["--out", "gs://b/p"], says=URI),
    Case("run:out-file-uri", RUN + ["--out", "file:///nowhere/p"], says="file:// URI"),
    Case("run:prompts-s3", RUN + ["--prompts", "s3://b/pack", "--out", "{w}/p"], says=URI),
    Case("run:replay-s3", RUN + ["--agent", "replay:s3://b/rec", "--out", "{w}/p"], says=URI),
    Case("watch:out-s3", ["watch", "--game", "breakout", "--out", "s3://b/p"], says=URI),
    Case("play:out-s3", ["play", "--game", "breakout", "--out", "s3://b/p"], says=URI),
    Case("match:out-gs", MATCH + ["--out", "gs://x/y"], says="match writes to a local directory"),
    Case("session:out-s3", S + ["--participant", "p2", "--out", "s3://x/s"], says=URI),
    Case("info:s3", ["info", "s3://nonexistent/x"], says="s3://nonexistent/x"),
    Case("verify:s3", ["verify", "--quick", "s3://b/x"], says=URI),
    Case("request:s3", ["request", "s3://b/x", "--turn", "0"], says=URI),
    Case("open:s3", ["open", "s3://b/x"], says=URI),
    Case("compare:s3", ["compare", "--text", "{w}/rec", "s3://b/x"], says=URI),
    Case("ls:s3", ["ls", "s3://bucket/x"], says="s3://bucket/x"),
    Case("export:out-s3", ["export", "{w}/rec", "-o", "s3://bucket/x.mp4"], says=URI),
    Case("export:recording-s3", ["export", "s3://bucket/rec", "-o", "{w}/out.gif"], says=URI),
    Case("export:compare-s3", ["export", "{w}/rec", "--compare", "s3://b/r", "-o", "{w}/out.gif"], says=URI),
    Case("qa-gen:out-s3", ["qa", "gen", "--recordings", "{w}/recs", "--out", "s3://x/set"], says=URI),
    Case("qa-gen:recordings-s3", ["qa", "gen", "--recordings", "s3://x/recs", "--out", "{w}/newset"], says=URI),
    Case("qa-eval:set-s3", ["qa", "eval", "s3://x/set", "--agent", "random", "--out", "{w}/ev2"], says=URI),
    Case("qa-eval:out-s3", ["qa", "eval", "{w}/qaset", "--agent", "random", "--out", "s3://x/ev"], says=URI),
    Case("qa-curate:s3", ["qa", "curate", "s3://x/set"], says=URI),
    Case("qa-table:s3", ["qa", "table", "s3://x/ev"], says=URI),
    Case("import:out-s3", ["import", "atari-bench", "{w}/" + H, "--out", "s3://x/o"], says=URI),
    Case("import:run-s3", ["import", "atari-bench", "s3://x/run", "--out", "{w}/imported"], says=URI),
    Case("batch:grid-s3", ["batch", "s3://x/grid.toml", "--out", "{w}/b2"], says=URI),
    Case("judge:out-s3", ["judge", "{w}/batch", "--judge", "openai:gpt-5.2", "--out", "s3://x/j"], says=URI),
]

# -- --out into an existing recording: the new run would land inside it -------------------------------------
CASES += [
    Case("run:out-is-a-recording", RUN + ["--out", "{w}/rec"], says="is a recording"),
    Case("match:out-is-a-recording", MATCH + ["--out", "{w}/rec"], says="is a recording"),
    Case("import:out-is-a-recording", ["import", "atari-bench", "{w}/" + H, "--out", "{w}/rec"],
         says="is a recording"),
]

# -- messages that point to what works -----------------------------------------------------------------------
CASES += [
    Case("match:two-humans", ["match", "--game", "boxing", "--p1", "human", "--p2", "human", "--out", "{w}/m"],
         says="play --game G --vs human"),
    Case("run:unknown-flag", RUN + ["--bogus"], says="`workstation run --help`"),
    Case("qa-gen:unknown-flag", GEN + ["--bogus"], says="`workstation qa gen --help`"),
    Case("qa:no-subcommand", ["qa"], says="gen, curate, eval, table"),
    Case("home:without-terminal", [], says="`workstation` opens the TUI"),
]

IDS = [c.id for c in CASES]
assert len(IDS) == len(set(IDS)), [i for i in IDS if IDS.count(i) > 1]


# -- the harness ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Iterator[tuple[Path, Path, dict[str, tuple]]]:
    """The world every case runs in, the pristine copy it is put back from, and the pristine world's snapshot."""
    pristine = pristine_world(tmp_path_factory)  # built once per process, shared with every corpus module
    clean = snapshot(pristine)
    world = copy_world(pristine, tmp_path_factory.mktemp("shared") / "w")
    assert snapshot(world) == clean
    yield world, pristine, clean
    assert snapshot(pristine) == clean, "a case changed the pristine world"


def deny_paths(monkeypatch, paths: list[Path]) -> None:
    """``open``, ``os.open``, ``os.scandir`` and ``os.listdir`` raise PermissionError on these paths (and, for a
    directory, everything in it), as for a user without the right to read them."""
    denied = [os.path.realpath(p) for p in paths]

    def hit(p) -> bool:
        if isinstance(p, int):
            return False
        try:
            rp = os.path.abspath(os.fsdecode(os.fspath(p)))
        except TypeError:
            return False
        return any(rp == d or rp.startswith(d + os.sep) for d in denied)

    def guard(real):
        def fake(path, *a, **k):
            if hit(path):
                raise PermissionError(13, "Permission denied", os.fsdecode(os.fspath(path)))
            return real(path, *a, **k)
        return fake

    fake_open = guard(builtins.open)
    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(os, "open", guard(os.open))
    monkeypatch.setattr(os, "scandir", guard(os.scandir))
    monkeypatch.setattr(os, "listdir", guard(os.listdir))


def run_case(case: Case, world: Path, capsys, monkeypatch) -> tuple[int, str, str]:
    screens: list = []
    monkeypatch.setattr(tui, "_launch", lambda launch: screens.append(launch.screen) or 0)
    code: int | None
    try:
        code = cli.main([a.replace("{w}", str(world)) for a in case.args])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert not screens, f"a screen opened: {screens}"
    return code, out, err


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_input_is_refused_in_few_lines_and_changes_nothing(case: Case, shared, capsys, monkeypatch):
    world, pristine, clean = shared
    for name in list(os.environ):
        if name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(world)
    after: dict[str, tuple] | None = None
    try:
        if case.setup:
            case.setup(world)
        before = snapshot(world) if case.setup else clean
        if case.deny:
            targets = [world / rel for rel in case.deny]
            for t in targets:
                t.chmod(0)
            deny_paths(monkeypatch, targets)
        try:
            code, out, err = run_case(case, world, capsys, monkeypatch)
        finally:
            monkeypatch.undo()
            for rel in case.deny:  # put the modes back as they were for the comparison
                os.chmod(world / rel, before[rel][1])
        after = snapshot(world)
    finally:  # the next case gets the pristine world, whatever this one did
        restore(world, pristine, after if after is not None else snapshot(world), clean)
    assert "Traceback" not in err and "Traceback" not in out, err
    lines = err.strip().splitlines()
    assert code in case.codes and code != 0 or (0 in case.codes and code == 0), (code, out, err)
    assert len(lines) <= 3 and (lines or out.strip() or code == 0), err
    if case.says:
        assert case.says.lower() in err.lower(), err
    if case.silent:
        assert not out.strip(), out
    assert after == before, "the command changed files on disk"
