"""Built-in agents answer in the pack's words: random and replay under a harness-shaped pack (our own words)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness_shape import make_harness
from workstation.cli import main
from workstation.engine.promptpack import load_pack
from workstation.game.games import GAMES, MINIMAL_SETS, get_game
from workstation.game.vocabulary import Vocabulary, parse_vocabulary
from workstation.store.recording import Recording
from workstation.studies.packs.from_atari_bench import listed_actions

QBERT_LISTED = ["noop", "top-left", "bottom-right"]  # a guide may list fewer words than its map, in its own order


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pack(tmp_path, capsys) -> Path:
    root = make_harness(tmp_path / "harness")
    module = root / "games/prompts/qbert.py"
    block = "Available actions:\n" + "".join(f"- {w}: a move in test words\n" for w in QBERT_LISTED) + "\nYour Task:\n"
    module.write_text(module.read_text().replace("Trailing spaces kept.", block + "Trailing spaces kept.", 1))
    code, _, err = run_cli(capsys, "prompts", "from-atari-bench", str(root), "--out", str(tmp_path / "pack"))
    assert code == 0, err
    return tmp_path / "pack"


def said(t) -> list[str]:
    """The words a reply said (its move list)."""
    return [w.strip() for w in t.raw.split("move: [", 1)[1].rstrip("]").split(",")]


def _run(capsys, tmp_path: Path, *args: str) -> Recording:
    code, out, err = run_cli(capsys, "run", "--quiet", "--frames", "90", "--out", str(tmp_path / "runs"), *args)
    assert code == 0, err
    return Recording(Path(out.strip().splitlines()[-1]))


def test_listed_actions_reads_the_block_and_stops_at_the_next_heading():
    guide = "Intro.\nAvailable actions:\n- noop: idle\n-  fire up : shoot\nnot an item\nControls:\n- left: no\n"
    assert listed_actions(guide) == ["noop", "fire up"]
    assert listed_actions("no block here\n- noop: idle\n") == []


def test_the_pack_keeps_the_listed_words_and_the_default_offers_ale_names(pack):
    p = load_pack(pack)
    assert p.vocabulary.taught == {"qbert": tuple(QBERT_LISTED)}
    assert p.game("qbert").offered_words == tuple(QBERT_LISTED)
    assert p.game("assault").offered_words == ("noop", "fire up", "move right", "move left", "fire right", "fire left")
    assert get_game("qbert").offered_words == get_game("qbert").action_names  # the default pack: unchanged


def test_taught_is_in_the_digest_and_round_trips():
    games = {k: {g.action_name(a): g.action_name(a) for a in g.allowed} for k, g in GAMES.items()}
    plain = Vocabulary(games, "harness")
    taught = Vocabulary(games, "harness", {"breakout": ("noop", "left")})
    assert plain.canonical() != taught.canonical()
    again = parse_vocabulary(taught.to_toml(), MINIMAL_SETS, "t")
    assert again.taught == {"breakout": ("noop", "left")} and again.canonical() == taught.canonical()


def test_random_under_a_harness_pack_says_only_offered_words_and_none_is_refused(pack, tmp_path, capsys):
    for game, offered in (("qbert", QBERT_LISTED), ("assault", None)):
        rec = _run(capsys, tmp_path, "--game", game, "--prompts", str(pack), "--seed", "3")
        words = offered or list(load_pack(pack).game(game).offered_words)
        turns = rec.turn_records
        assert turns and all(t.valid for t in turns), [t.errors for t in turns if not t.valid][:2]
        assert json.loads((rec.path / "summary.json").read_text())["invalid_turns"] == 0
        g = load_pack(pack).game(game)
        for t in turns:
            assert 1 <= len(said(t)) <= 3 and all(w in words for w in said(t)), t.raw
            assert t.planned == [g.action_name(g.vocabulary.lookup(w)) for w in said(t)]
        assert len({w for t in turns for w in said(t)}) > 1


def test_a_replay_under_a_harness_pack_plays_the_same_ids_in_its_words(pack, tmp_path, capsys):
    source = _run(capsys, tmp_path, "--game", "qbert", "--seed", "5")  # the default pack: ALE names
    replay = _run(capsys, tmp_path, "--game", "qbert", "--prompts", str(pack), "--agent", f"replay:{source.path}")
    assert all(t.valid for t in replay.turn_records)
    assert [t.actions for t in replay.turn_records] == [t.actions for t in source.turn_records]
    assert any(w in ("top-right", "bottom-left", "top-left", "bottom-right") for t in replay.turn_records
               for w in said(t))


def test_show_names_what_built_in_agents_say(pack, capsys):
    code, out, _ = run_cli(capsys, "prompts", "show", str(pack), "--game", "qbert")
    assert code == 0 and "# built-in agents say: noop, top-left, bottom-right" in out
    code, out, _ = run_cli(capsys, "prompts", "show", "default", "--game", "qbert")
    assert code == 0 and "# built-in agents say: noop, up, right, left, down" in out
