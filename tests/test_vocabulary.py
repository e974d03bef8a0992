"""Action vocabularies as pack data: the default pack's words, the matching rules, and the digest."""

from __future__ import annotations

import itertools
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workstation.engine.parser import parse_reply
from workstation.engine.promptpack import PromptPackError, default_pack_dir, load_pack
from workstation.game.games import GAMES, get_game
from workstation.game.vocabulary import normal_name

# The words the public harness's prompts teach (protocol, "Action words the harness's prompts teach"),
# each with the ALE meaning the default pack must give it.
HARNESS_WORDS = {
    "assault": {"fire up": "up", "move right": "right", "move left": "left", "fire right": "rightfire",
                "fire left": "leftfire", "noop": "noop"},
    "boxing": {"punch": "fire", "uppunch": "upfire", "rightpunch": "rightfire", "leftpunch": "leftfire",
               "downpunch": "downfire", "uprightpunch": "uprightfire", "upleftpunch": "upleftfire",
               "downrightpunch": "downrightfire", "downleftpunch": "downleftfire"},
    "ice_hockey": {"shoot": "fire", "upshoot": "upfire", "rightshoot": "rightfire", "leftshoot": "leftfire",
                   "downshoot": "downfire", "uprightshoot": "uprightfire", "upleftshoot": "upleftfire",
                   "downrightshoot": "downrightfire", "downleftshoot": "downleftfire"},
    "gopher": {"bonk": "fire", "rightbonk": "rightfire", "leftbonk": "leftfire"},
    "qbert": {"top-right": "up", "bottom-right": "right", "top-left": "left", "bottom-left": "down"},
    "breakout": {"start": "fire"},
    "tennis": {"serve": "fire"},
    "journey_escape": {"fastnoop": "noop", "fastup": "up", "fastright": "rightfire", "fastleft": "leftfire",
                       "fastdown": "downfire", "fastupright": "uprightfire", "fastupleft": "upleftfire",
                       "fastdownright": "downrightfire", "fastdownleft": "downleftfire"},
}


@pytest.mark.parametrize("key", sorted(HARNESS_WORDS))
def test_default_pack_plays_every_harness_word_by_its_meaning(key):
    game = get_game(key)
    for word, meaning in HARNESS_WORDS[key].items():
        r = parse_reply(f"thought: t\nmove: [{word}]", game)
        assert r.valid and r.names == [meaning], (word, r.errors)


def test_journey_escape_offers_all_sixteen_actions():
    game = get_game("journey_escape")
    assert game.allowed == tuple(range(16)) and game.action_name(15) == "downleftfire"


def test_default_words_keep_todays_meanings():
    assert get_game("boxing").vocabulary.lookup("punch_up") == 10
    assert get_game("gopher").vocabulary.lookup("bonk_right") == 6
    assert get_game("assault").vocabulary.lookup("fire") == 2
    assert get_game("breakout").vocabulary.lookup("serve") == 1
    assert get_game("qbert").vocabulary.lookup("hop up right") == 2


_PARTS = st.tuples(st.sampled_from(["", "up", "down"]), st.sampled_from(["", "left", "right"]),
                   st.sampled_from(["", "fire", "punch", "shoot"]))


@settings(max_examples=200, deadline=None)
@given(parts=_PARTS, data=st.data())
def test_normal_form_ignores_order_case_and_separators(parts, data):
    words = [p for p in parts if p]
    if not words:
        return
    order = data.draw(st.permutations(words))
    seps = data.draw(st.lists(st.sampled_from(["", "_", "-", " "]), min_size=len(order), max_size=len(order)))
    written = "".join(w + s for w, s in zip(order, seps)).strip("_- ")
    written = data.draw(st.sampled_from([written, written.upper(), written.title()]))
    assert normal_name(written) == "".join(words)


@settings(max_examples=200, deadline=None)
@given(game=st.sampled_from(list(GAMES.values())), data=st.data())
def test_every_word_of_a_game_resolves_however_it_is_cased_and_separated(game, data):
    word = data.draw(st.sampled_from(list(game.aliases)))
    shaped = data.draw(st.sampled_from([word, word.upper(), word.replace(" ", "_"), word.replace(" ", "-"),
                                        word.replace("-", " ")]))
    assert game.vocabulary.lookup(shaped) == game.aliases[word]


@settings(max_examples=100, deadline=None)
@given(parts=_PARTS)
def test_harness_rule_reorders_compounds_with_their_suffix_last(parts):
    from dataclasses import replace

    from workstation.game.games import Game

    words = [p for p in parts if p]
    if len(words) < 2:
        return
    canonical = "".join(words)
    g = replace(get_game("boxing"), aliases={canonical: 5}, matching="harness")
    for order in itertools.permutations(words[:-1] if parts[2] else words):
        written = "".join(order) + (parts[2] or "")
        assert g.vocabulary.lookup(written) == 5
        assert g.vocabulary.lookup(written.upper()) == 5
    assert isinstance(g, Game)


def test_default_digest_did_not_move_and_a_copy_keeps_it(tmp_path):
    assert load_pack().digest == "b12d14683dbd5977"  # the digest before vocabularies were data
    copy = tmp_path / "copy"
    shutil.copytree(default_pack_dir(), copy)
    assert load_pack(copy).digest == load_pack().digest and load_pack(copy).vocabulary is None


def test_changed_words_change_the_digest(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(default_pack_dir(), copy)
    text = (copy / "vocabulary.toml").read_text()
    (copy / "vocabulary.toml").write_text(text.replace('start = "fire"', 'start = "noop"'))
    pack = load_pack(copy)
    assert pack.digest != load_pack().digest
    assert pack.game("breakout").vocabulary.lookup("start") == 0


@pytest.mark.parametrize("edit, message", [
    (('start = "fire"', 'start = "jump"'), "the meaning must be one of breakout's actions"),
    (("[tennis]", "[tenis]"), "[tenis] is not a game key"),
    (('matching = "normal"', 'matching = "fuzzy"'), "matching = 'fuzzy' is unknown"),
    (('matching = "normal"', "matching = = 1"), "not valid TOML"),
])
def test_bad_vocabulary_is_one_line(tmp_path, edit, message):
    copy = tmp_path / "copy"
    shutil.copytree(default_pack_dir(), copy)
    text = (copy / "vocabulary.toml").read_text()
    (copy / "vocabulary.toml").write_text(text.replace(*edit, 1))
    with pytest.raises(PromptPackError, match=r".*") as info:
        load_pack(copy)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_warmup_in_a_pack_is_checked_and_used(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(default_pack_dir(), copy)
    (copy / "warmup.toml").write_text("pacman = 2.5\nbreakout = 0\n")
    pack = load_pack(copy)
    assert pack.game("pacman").warmup_frames == 75 and pack.digest != load_pack().digest
    assert pack.warmup_notes() == ["pacman: the pack's warm-up is 2.5 s, the game table's 4 s; the pack's is used"]
    (copy / "warmup.toml").write_text("pacman = 'soon'\n")
    with pytest.raises(PromptPackError, match="give the seconds as a number"):
        load_pack(copy)
