"""Bad input for matches, arenas and improvement rounds (issues 26 and 27): each case is refused in one line
(exit 2; 1 for a damaged artifact, named), at most 3 lines, no traceback, nothing written, played or paid.

The world: an arena of two finished Pong matches (random against a replay of a short match) and an IDC
directory holding a sealed curve, built once; each case works on a fresh copy and may damage it first.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bad_input_world import edit_json, snapshot
from workstation.cli import main
from workstation.studies.idc import curve as C

URL = "http://127.0.0.1:9/v1"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    from workstation.game.protocol import Protocol
    from workstation.run.match_start import MatchSpec, start_match

    base = tmp_path_factory.mktemp("tp-world")
    engine = start_match(MatchSpec("pong", "random", "random", 5, Protocol(frames=30), str(base / "src")))
    engine.run()
    engine.close()
    assert engine.writer is not None
    src = engine.writer.path
    assert main(["arena", "--game", "pong", "--players", f"random,replay:{src}", "--frames", "30",
                 "--bootstrap", "0", "--out", str(base / "arena")]) == 0
    idc = base / "idc"
    idc.mkdir()
    C.save(idc, {"game": "freeway", "player": "compat:p", "reflector": "compat:p", "best_round": 0,
                 "rounds": [{"round": 0, "skill": None, "score_mean": 1.0, "score_se": 0.0, "normalised": 1.0,
                             "rolled_back": False, "episodes": []}], "transfer": []})
    C.write_file(idc, "skills/round_1.md", "a skill\n")
    (base / "empty").mkdir()
    return base


@pytest.fixture
def world(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "w", symlinks=True))


PROMPTS = Path(__file__).resolve().parents[1] / "prompts"


def _src(w: Path) -> Path:
    return next((w / "src").iterdir())


def _only_damaged(w: Path) -> None:
    for rec in sorted(p for p in (w / "arena").iterdir() if p.is_dir()):  # beside them: arena.jsonl, seal.json
        edit_json(rec / "summary.json", lambda s: {**s, "players": [{**s["players"][0], "score": 9}, s["players"][1]]})


def _curve(text: str | bytes) -> Callable[[Path], None]:
    def damage(w: Path) -> None:
        (w / "idc" / "curve.json").write_bytes(text if isinstance(text, bytes) else text.encode())
        (w / "idc" / "seal.json").unlink()  # an IDC from before seals: the checked reader still names the field
    return damage


def _edit_sealed_curve(w: Path) -> None:
    edit_json(w / "idc" / "curve.json", lambda c: {**c, "best_round": None})


def _curve_dir(w: Path) -> None:
    (w / "idc" / "curve.json").unlink()
    (w / "idc" / "curve.json").mkdir()


def _idc(w: Path, *extra: str) -> list[str]:
    return ["idc", "--game", "freeway", "--player", "compat:p", "--base-url", URL, "--rounds", "1",
            "--episodes", "1", "--frames", "30", "--out", str(w / "idc"), *extra]


def _arena(w: Path, *extra: str) -> list[str]:
    return ["arena", "--game", "pong", "--players", "random,compat:m", "--frames", "30", "--out",
            str(w / "new"), *extra]


def _match(w: Path, *extra: str) -> list[str]:
    return ["match", "--game", "pong", "--p1", "random", "--p2", "compat:m", "--frames", "30", "--out",
            str(w / "new"), *extra]


NOTHING = None
CASES: list[tuple[str, Callable[[Path], None] | None, Callable[[Path], list[str]], int, str]] = [
    # bounds, checked before anything is played or written
    ("arena-seeds-huge", NOTHING, lambda w: _arena(w, "--seeds", "1000000000000"), 2, "--seeds must be 1..1000"),
    ("arena-bootstrap-huge", NOTHING, lambda w: _arena(w, "--bootstrap", "1000000000"), 2, "0..100000"),
    ("arena-bootstrap-negative", NOTHING, lambda w: _arena(w, "--bootstrap", "-1"), 2, "--bootstrap must be"),
    ("arena-report-bootstrap-negative", NOTHING,
     lambda w: ["arena", "--game", "pong", "--report", "--out", str(w / "arena"), "--bootstrap", "-1"], 2,
     "--bootstrap must be"),
    ("arena-workers-zero", NOTHING, lambda w: _arena(w, "--workers", "0"), 2, "--workers must be 1..64"),
    ("arena-workers-huge", NOTHING, lambda w: _arena(w, "--workers", "10000"), 2, "--workers must be 1..64"),
    ("arena-max-matches-negative", NOTHING, lambda w: _arena(w, "--max-matches", "-1"), 2, "--max-matches"),
    ("arena-too-many-players", NOTHING,
     lambda w: ["arena", "--game", "pong", "--players", ",".join(f"compat:m{i}" for i in range(51)),
                "--out", str(w / "new")], 2, "at most 50"),
    ("match-seed-2**64", NOTHING, lambda w: _match(w, "--seed", str(2**64)), 2, "--seed must be 0..4294967295"),
    ("match-seed-2**32", NOTHING, lambda w: _match(w, "--seed", str(2**32)), 2, "--seed must be 0..4294967295"),
    ("match-seed-negative", NOTHING, lambda w: _match(w, "--seed", "-1"), 2, "--seed must be 0..4294967295"),
    ("play-vs-seed-2**64", NOTHING,
     lambda w: ["play", "--game", "boxing", "--vs", "random", "--seed", str(2**64)], 2, "4294967295"),
    # one URL per player
    ("arena-url-not-a-player", NOTHING, lambda w: _arena(w, "--base-url", f"compat:z={URL}"), 2,
     "compat:z is not one of --players"),
    ("arena-url-not-a-model", NOTHING, lambda w: _arena(w, "--base-url", f"random={URL}"), 2,
     "random is not a model player"),
    ("arena-url-bad-scheme", NOTHING, lambda w: _arena(w, "--base-url", "compat:m=ftp://x"), 2,
     "not an http:// or https:// URL"),
    ("arena-url-empty", NOTHING, lambda w: _arena(w, "--base-url", "compat:m="), 2, "has no URL"),
    ("arena-url-twice", NOTHING, lambda w: _arena(w, "--base-url", f"compat:m={URL}", "--base-url",
                                                 f"compat:m={URL}"), 2, "names compat:m twice"),
    ("arena-two-bare-urls", NOTHING, lambda w: _arena(w, "--base-url", URL, "--base-url", URL), 2,
     "twice without a player"),
    ("match-p1-url-for-random", NOTHING, lambda w: _match(w, "--p1-base-url", URL), 2,
     "--p1-base-url applies to a model agent"),
    ("match-p2-url-not-a-url", NOTHING, lambda w: _match(w, "--p2-base-url", "localhost:8000"), 2,
     "--p2-base-url 'localhost:8000' is not an http"),
    ("match-p2-url-empty", NOTHING, lambda w: _match(w, "--p2-base-url", " "), 2, "--p2-base-url is empty"),
    # never write inside an input
    ("match-out-inside-the-replayed-match", NOTHING,
     lambda w: ["match", "--game", "pong", "--p1", "random", "--p2", f"replay:{_src(w)}", "--frames", "30",
                "--out", str(_src(w) / "sub")], 2, "is inside the replayed recording"),
    ("arena-out-is-the-replayed-match", NOTHING,
     lambda w: ["arena", "--game", "pong", "--players", f"random,replay:{_src(w)}", "--frames", "30",
                "--out", str(_src(w))], 2, "is inside the replayed recording"),
    ("match-out-inside-the-prompts", lambda w: shutil.copytree(PROMPTS, w / "pack"),
     lambda w: _match(w)[:-2] + ["--prompts", str(w / "pack"), "--out", str(w / "pack" / "twoplayer" / "x")], 2,
     "is inside --prompts"),
    # damaged matches and arenas
    ("arena-report-nothing", NOTHING, lambda w: ["arena", "--game", "pong", "--report", "--out", str(w / "empty")],
     2, "holds no finished pong matches"),
    ("arena-report-only-damaged", _only_damaged,
     lambda w: ["arena", "--game", "pong", "--report", "--out", str(w / "arena")], 1, "2 damaged, left out"),
    # improvement rounds: hand-edited, damaged and misplaced
    ("idc-curve-is-a-directory", _curve_dir, lambda w: _idc(w), 2, "curve.json is not a file"),
    ("idc-curve-edited-resume", _edit_sealed_curve, lambda w: _idc(w), 1, "is damaged: curve.json"),
    ("idc-curve-edited-report", _edit_sealed_curve, lambda w: ["report", str(w / "idc")], 1,
     "is damaged: curve.json"),
    ("idc-curve-edited-view", _edit_sealed_curve, lambda w: ["idc", "--view", str(w / "idc")], 1,
     "is damaged: curve.json"),
    ("idc-skill-edited", lambda w: (w / "idc" / "skills" / "round_1.md").write_text("my skill"),
     lambda w: ["report", str(w / "idc")], 1, "skills/round_1.md was changed"),
    ("idc-file-added", lambda w: (w / "idc" / "notes.txt").write_text("x"),
     lambda w: ["report", str(w / "idc")], 1, "notes.txt was added"),
    ("idc-curve-a-list", _curve("[]"), lambda w: ["report", str(w / "idc")], 2, "holds a list, not an object"),
    ("idc-curve-rounds-text", _curve('{"rounds": "many"}'), lambda w: ["report", str(w / "idc")], 2,
     "not an IDC curve"),
    ("idc-curve-text-for-number", _curve('{"rounds": [{"round": 0, "normalised": "high"}]}'),
     lambda w: ["report", str(w / "idc")], 2, "'normalised'"),
    ("idc-curve-round-missing", _curve('{"rounds": [{"score_mean": 1}]}'), lambda w: ["report", str(w / "idc")], 2,
     "field 'round' is missing"),
    ("idc-curve-round-a-list", _curve('{"rounds": [[0, 1]]}'), lambda w: ["report", str(w / "idc")], 2,
     "rounds item 0 is not a JSON object"),
    ("idc-curve-episode-text", _curve('{"rounds": [{"round": 0, "episodes": [{"score": "7"}]}]}'),
     lambda w: ["report", str(w / "idc")], 2, "'score'"),
    ("idc-curve-reflection-a-list", _curve('{"rounds": [{"round": 0, "reflection": []}]}'),
     lambda w: ["report", str(w / "idc")], 2, "'reflection'"),
    ("idc-curve-best-out-of-range", _curve('{"rounds": [], "best_round": 7}'), lambda w: ["report", str(w / "idc")],
     2, "'best_round' is 7"),
    ("idc-curve-infinite", _curve('{"rounds": [], "random_mean": Infinity}'), lambda w: ["report", str(w / "idc")],
     2, "not a finite number"),
    ("idc-curve-non-utf8", _curve(b"\xff\xfe\x00"), lambda w: ["report", str(w / "idc")], 2, "not UTF-8"),
    ("idc-curve-not-json", _curve("{rounds"), lambda w: ["report", str(w / "idc")], 2, "not valid JSON"),
    ("idc-curve-list-resume", _curve("[]"), lambda w: _idc(w), 2, "holds a list, not an object"),
    ("idc-view-non-utf8", _curve(b"\xff"), lambda w: ["idc", "--view", str(w / "idc")], 2, "not UTF-8"),
    ("idc-report-json-into-a-skill", NOTHING,
     lambda w: ["report", str(w / "idc"), "--json", str(w / "idc" / "skills" / "round_1.md")], 2,
     "inside the report's input"),
    ("idc-report-md-into-the-idc", NOTHING, lambda w: ["report", str(w / "idc"), "--md", str(w / "idc" / "r.md")], 2,
     "inside the report's input"),
]


@pytest.mark.parametrize("damage,argv,code,needle", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_in_one_line_and_nothing_written(world, damage, argv, code, needle, capsys, monkeypatch):
    monkeypatch.chdir(world)
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    if damage is not None:
        damage(world)
    before = snapshot(world)
    try:
        got = main(argv(world))
    except SystemExit as e:
        got = e.code
    out, err = capsys.readouterr()
    assert got == code and needle in err, (got, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3, err
    assert snapshot(world) == before  # nothing written, nothing changed, no temp file left


def test_the_corpus_world_is_sound(pristine, capsys):
    assert main(["arena", "--game", "pong", "--report", "--out", str(pristine / "arena"), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["matches"] == 2 and "damaged" not in r
    assert main(["report", str(pristine / "idc")]) == 0
