"""Packs built from a harness-shaped checkout (tests/harness_shape.py, our own words): reader, words, assembly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fake_provider import Step, fake, fake_server  # noqa: F401  (fixtures)
from tests.harness_shape import COMMON, SPECIAL, TERMINATION, guide_text, make_harness
from workstation.cli import main
from workstation.engine.parser import parse_reply
from workstation.engine.promptpack import load_pack
from workstation.game.games import GAMES, get_game
from workstation.game.vocabulary import default_pack_dir
from workstation.studies.packs.from_atari_bench import literals, read_harness


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _ns(text: str) -> dict:
    ns: dict = {}
    exec(text, ns)  # our own test templates, to compute what the harness would send
    return ns


@pytest.fixture
def pack(tmp_path, capsys) -> Path:
    root = make_harness(tmp_path / "harness")
    code, out, err = run_cli(capsys, "prompts", "from-atari-bench", str(root), "--out", str(tmp_path / "pack"))
    assert code == 0, err
    assert "every file of the harness was read" in out
    assert "pacman: the pack's warm-up is 3 s, the game table's 4 s; the pack's is used" in out
    assert "lacks the instruction levels visual, steps, goal" in out  # the harness has one guide a game
    return tmp_path / "pack"


def test_a_harness_pack_keeps_its_guide_as_full_and_refuses_a_level(pack, tmp_path, capsys):
    p = load_pack(pack)
    assert p.levels == () and p.guide("breakout", "full") == guide_text("breakout")
    code, out, err = run_cli(capsys, "prompts", "show", str(pack), "--game", "breakout", "--guide", "visual")
    assert code == 2 and "has no instruction levels" in err
    code, out, err = run_cli(capsys, "run", "--game", "breakout", "--prompts", str(pack), "--guide", "steps",
                             "--frames", "30", "--out", str(tmp_path / "runs"))
    assert code == 2 and "--guide steps" in err and not (tmp_path / "runs").exists()
    code, out, err = run_cli(capsys, "run", "--game", "breakout", "--prompts", str(pack), "--agent",
                             "compat:qwen2.5-vl-7b", "--base-url", "http://127.0.0.1:9/v1", "--experience",
                             str(tmp_path / "lib"), "--frames", "30", "--out", str(tmp_path / "runs"))
    assert code == 2 and "document pack" in err and not (tmp_path / "runs").exists()
    assert not (tmp_path / "lib").exists()


def test_reader_takes_literals_and_runs_nothing(tmp_path):
    root = make_harness(tmp_path / "h")
    (root / "games/prompts/breakout.py").write_text(
        (root / "games/prompts/breakout.py").read_text() + "import os\nos.system('touch SHOULD_NOT_EXIST')\n"
        "EXTRA = compute()\n")
    values = literals(root / "games/prompts/breakout.py")
    assert "EXTRA" not in values and isinstance(values["ACTION_MAP"], dict)
    h = read_harness(root)
    assert not (Path.cwd() / "SHOULD_NOT_EXIST").exists()
    assert h.unread == [] and h.guides["breakout"] == guide_text("breakout")
    assert h.strings["feedback_positive"] == "Points up.\n" and h.strings["reset_note"] == "\nNOTE: a new game began.\n"
    assert h.strings["clip_reset_note"] == "That game ended here.\n"
    assert "{guide}{skill}" in h.strings["structured"] and "{{like these}}" in h.strings["structured"]


def test_ids_are_kept_as_the_harness_maps_them(pack):
    p = load_pack(pack)
    je = p.game("journey_escape")
    # index 11 of the minimal set is DOWNFIRE: the pack plays what the harness played, not what the word says
    assert je.action_name(je.vocabulary.lookup("fastupright")) == "downfire"
    assert je.vocabulary.lookup("fastright") == 9 and je.matching == "harness"
    qb = p.game("qbert")
    assert [qb.vocabulary.lookup(w) for w in SPECIAL["qbert"]] == list(SPECIAL["qbert"].values())
    assert qb.vocabulary.lookup("Top-Right") == 2 and qb.vocabulary.lookup("top_right") is None  # the harness's rule
    assert p.game("assault").vocabulary.lookup("Move_Left") == 4
    assert p.game("pacman").warmup_seconds == 3 and p.game("beam_rider").warmup_seconds == 8
    assert p.game("breakout").vocabulary.lookup("rightleft") is None


def test_harness_matching_refuses_what_the_harness_refuses(pack):
    g = load_pack(pack).game("breakout")
    assert parse_reply("thought: go\nmove: [left, RIGHT, 'noop']", g).actions == [3, 2, 0]
    for reply in ("move: [left]", "thought: x\nmove: [left x3]", "thought: x\nmove: [left left]",
                  "thought: x\nmove: [" + ", ".join(["left"] * 11) + "]", "thought: x\nmove: []"):
        r = parse_reply(reply, g)
        assert not r.valid and r.actions == [0], reply
    assert parse_reply("move: [left]", g).rule == "no_thought_line"


def _messages(capsys, rec: Path, turn: int) -> list[dict]:
    code, out, err = run_cli(capsys, "request", str(rec), "--turn", str(turn), "--json")
    assert code == 0, err
    return json.loads(out)["messages"]


def _joined(message: dict) -> tuple[str, list[int]]:
    text = "".join(c["text"] if c["type"] == "text" else "IMG_HOLDER" for c in message["content"])
    return text, [c["frame"] for c in message["content"] if c["type"] == "image"]


def _run(capsys, fake, tmp_path, pack, replies, memory="structured", frames="60"):  # noqa: F811
    fake.push(*[Step(text=t) for t in replies])
    out = tmp_path / "runs"
    code, _, err = run_cli(capsys, "run", "--game", "breakout", "--agent", "compat:m", "--base-url",
                           fake.url("compat"), "--prompts", str(pack), "--frames", frames, "--memory", memory,
                           "--out", str(out))
    assert code == 0, err
    (rec,) = [p for p in out.rglob("manifest.json")]
    return rec.parent


REPLIES = ["thought: serve\nmove: [fire, right]", "thought: oops\nmove: [jump]",
           "thought: go\nmove: [LEFT, left, noop]"] + ["thought: wait\nmove: [noop]"] * 30


def test_request_holds_the_harness_prompt_exactly(capsys, fake, tmp_path, pack):  # noqa: F811
    rec = _run(capsys, fake, tmp_path, pack, REPLIES)
    common, term = _ns(COMMON), _ns(TERMINATION)
    first = _messages(capsys, rec, 0)
    assert [m["role"] for m in first] == ["user"]  # one user message, no system message
    text, images = _joined(first[0])
    expected = common["SINGLE_TURN_PROMPT_TEMPLATE"].format(
        GAME_PROMPT=guide_text("breakout"), GAME_OVER_PROMPT=term["MAX_TIME_PROMPT"].format(MAX_TIME=2),
        LIST_OF_REWARD_CLIPS_TEMPLATE="", LIST_OF_CLIPS_TEMPLATE="", CURRENT_TIME="0.00s")
    assert text == expected and images == [0]

    third, images = _joined(_messages(capsys, rec, 2)[0])
    clip = common["SINGLE_TURN_CLIP_TEMPLATE"]
    step = common["STATE_REWARD_TEMPLATE"]
    clip0 = clip.format(START_TIME="0.00s", END_TIME="0.20s", ACTIONS_STR="['fire', 'right']",
                        LIST_OF_STATE_REWARD_TEMPLATE=step.format(TIME="0.10s") + step.format(TIME="0.20s"))
    clip1 = clip.format(START_TIME="0.20s", END_TIME="0.30s", ACTIONS_STR="['noop']",  # the refused reply
                        LIST_OF_STATE_REWARD_TEMPLATE=step.format(TIME="0.30s"))
    assert clip0 + clip1 in third and "Now, at 0.30s:" in third
    assert images == [0, 3, 6, 6, 9, 9]


def test_append_mode_is_a_chat_of_the_harness_messages(capsys, fake, tmp_path, pack):  # noqa: F811
    rec = _run(capsys, fake, tmp_path, pack, REPLIES, memory="append")
    common, term = _ns(COMMON), _ns(TERMINATION)
    msgs = _messages(capsys, rec, 2)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    opening, images = _joined(msgs[0])
    assert opening == common["APPEND_ONLY_HEADER_TEMPLATE"].format(
        GAME_PROMPT=guide_text("breakout"), GAME_OVER_PROMPT=term["MAX_TIME_PROMPT"].format(MAX_TIME=2)
    ) + common["APPEND_ONLY_INITIAL_USER_TEMPLATE"].format(CURRENT_TIME="0.00s")
    assert images == [0] and _joined(msgs[1])[0] == REPLIES[0]
    update, images = _joined(msgs[4])
    assert update.startswith("\nWhat happened:\n\n<turn from=\"0.20s\" to=\"0.30s\">") and images == [6, 9]


def test_show_prints_the_prompt_and_words(capsys, pack):
    code, out, _ = run_cli(capsys, "prompts", "show", str(pack), "--game", "qbert")
    assert code == 0
    assert "=== user ===" in out and "=== system ===" not in out and "qbert guide in test words." in out
    assert "  top-right -> up (2)" in out and "harness matching" in out and "warm-up: 0 s" in out and "the game table's 4 s" in out


def test_diff_names_words_warmup_and_text(capsys, pack):
    code, out, _ = run_cli(capsys, "prompts", "diff", "default", str(pack))
    assert code == 1
    assert "layout: turns | document" in out
    assert "qbert word 'top-right': up | up" not in out  # same meaning is no difference
    assert "journey_escape word 'fastupright': uprightfire | downfire" in out
    assert "pacman warm-up: 4 s | 3 s" in out and "breakout full guide: differs" in out
    code, out, _ = run_cli(capsys, "prompts", "diff", str(pack), str(pack))
    assert code == 0 and "are the same" in out


def test_an_unreadable_game_is_named_in_one_line(tmp_path, capsys):
    root = make_harness(tmp_path / "h", skip=("tennis",))
    broken = root / "games/prompts/freeway.py"
    broken.write_text(broken.read_text().replace("ACTION_MAP = ", "ACTION_MAP = dict() or "))
    code, out, err = run_cli(capsys, "prompts", "from-atari-bench", str(root), "--out", str(tmp_path / "p"))
    assert code == 0, err
    lines = [x for x in out.splitlines() if x.startswith("could not read:")]
    assert lines == ["could not read: freeway ACTION_MAP; tennis.py (missing)"]
    assert load_pack(tmp_path / "p").game("freeway").action_names == ("noop",)


def test_every_game_loads_and_builds(pack):
    p = load_pack(pack)
    assert p.layout == "document" and p.strings.get("system") is None
    for key in GAMES:
        g = p.game(key)
        assert g.allowed and 0 in g.allowed
        assert p.guide(key) == guide_text(key)


# --- bad input: one line, exit 2, nothing written -------------------------------------------


def _damaged(tmp_path: Path, name: str, file: str, edit) -> Path:
    """A copy of the default pack with one file edited."""
    pack = tmp_path / name
    shutil.copytree(default_pack_dir(), pack)
    target = pack / file
    target.write_text(edit(target.read_text(encoding="utf-8")), encoding="utf-8")
    return pack


SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"


def _cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    harness = make_harness(tmp_path / "h")
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("keep me")
    plain = tmp_path / "plain"
    plain.mkdir()
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    broken = make_harness(tmp_path / "broken")
    (broken / "games/prompts/common_prompt.py").write_text("TEMPLATE = (\n")
    bad_toml = _damaged(tmp_path, "bad_toml", "vocabulary.toml", lambda t: t + "\nmatching = [\n")
    bad_template = _damaged(tmp_path, "bad_template", "template.toml", lambda t: t + "\nlayout = \n")
    lacks = _damaged(tmp_path, "lacks", "vocabulary.toml",
                     lambda t: t.replace("[breakout]\n", "[breakout]\njump = \"upfire\"\n", 1))
    no_game = _damaged(tmp_path, "no_game", "vocabulary.toml", lambda t: t + "\n[zork]\nnoop = \"noop\"\n")
    taught = _damaged(tmp_path, "taught", "vocabulary.toml", lambda t: t + '\n[taught]\nbreakout = ["jump"]\n')
    run = ["run", "--game", "breakout", "--frames", "30", "--out", str(tmp_path / "o"), "--prompts"]
    return [
        (["prompts", "from-atari-bench", str(tmp_path / "nope"), "--out", str(tmp_path / "o")], "no such directory"),
        (["prompts", "from-atari-bench", str(plain), "--out", str(tmp_path / "o")],
         "is not a checkout of the public AtariBench harness"),
        (["prompts", "from-atari-bench", str(harness), "--out", str(full)], "is not an empty directory"),
        (["prompts", "from-atari-bench", str(harness)], "--out"),
        (["prompts", "show", str(tmp_path / "nope"), "--game", "breakout"], "no such pack directory"),
        (["prompts", "show", "default", "--game", "zork"], "unknown game 'zork'"),
        (["prompts", "show", str(plain), "--game", "breakout"], "template.toml is missing"),
        (["prompts", "diff", "default", str(tmp_path / "nope")], "no such pack directory"),
        (["prompts", "diff", "default"], "required"),
        (["prompts"], "required"),
        # a file where a directory belongs
        (["prompts", "from-atari-bench", str(afile), "--out", str(tmp_path / "o")], "is a file"),
        (["prompts", "from-atari-bench", str(harness), "--out", str(afile)], "is not an empty directory"),
        (["prompts", "show", str(afile), "--game", "breakout"], "is a file"),
        (["prompts", "diff", str(afile), "default"], "is a file"),
        (["prompts", "diff", str(plain), "default"], "template.toml is missing"),
        # a checkout whose shared templates do not parse
        (["prompts", "from-atari-bench", str(broken), "--out", str(tmp_path / "o")], "cannot be parsed"),
        # damaged packs: the same line from show, diff and run
        (["prompts", "show", str(bad_toml), "--game", "breakout"], "vocabulary.toml: not valid TOML"),
        (["prompts", "diff", "default", str(bad_toml)], "vocabulary.toml: not valid TOML"),
        ([*run, str(bad_toml)], "vocabulary.toml: not valid TOML"),
        (["prompts", "show", str(bad_template), "--game", "breakout"], "template.toml is not valid TOML"),
        ([*run, str(bad_template)], "template.toml is not valid TOML"),
        (["prompts", "show", str(lacks), "--game", "breakout"], "jump = 'upfire': the meaning must be one of"),
        ([*run, str(lacks)], "jump = 'upfire': the meaning must be one of"),
        (["prompts", "show", str(no_game), "--game", "breakout"], "[zork] is not a game key"),
        (["prompts", "show", str(taught), "--game", "breakout"], "[taught] breakout lists 'jump'"),
        (["prompts", "show", "default", "--game", ""], "unknown game"),
        # request --json
        (["request", str(SAMPLE), "--turn", "9999", "--json"], "no turn 9999"),
        (["request", str(SAMPLE), "--turn", "-1", "--json"], "no turn -1"),
        (["request", str(SAMPLE), "--turn", "x", "--json"], "invalid int value"),
        (["request", str(SAMPLE), "--json"], "--turn"),
        (["request", str(tmp_path / "nope"), "--turn", "0", "--json"], "does not exist"),
        (["request", str(afile), "--turn", "0", "--json"], "is a file"),
        (["request", str(plain), "--turn", "0", "--json"], "no manifest.json"),
    ]


@pytest.mark.parametrize("index", range(33))
def test_bad_input(index, tmp_path, capsys):
    args, expected = _cases(tmp_path)[index]
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and expected in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert out == ""
    assert (tmp_path / "full" / "x").read_text() == "keep me" and not (tmp_path / "o").exists()
    assert afile_intact(tmp_path)


def afile_intact(tmp_path: Path) -> bool:
    return (tmp_path / "afile").read_text() == "not a directory"


def test_the_corpus_is_all_parametrised(tmp_path):
    assert len(_cases(tmp_path)) == 33


def test_request_json_bad_turn(capsys):
    sample = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"
    code, _, err = run_cli(capsys, "request", str(sample), "--turn", "9999", "--json")
    assert code == 2 and "no turn 9999" in err and len(err.strip().splitlines()) == 1


def test_request_json_of_the_default_pack(capsys):
    sample = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"
    msgs = _messages(capsys, sample, 1)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert {c["type"] for c in msgs[1]["content"]} == {"text", "image"}
    assert all(isinstance(c["frame"], int) for c in msgs[1]["content"] if c["type"] == "image")
    assert get_game("breakout").vocabulary.lookup("start") == 1
