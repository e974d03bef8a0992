"""Grid files: expansion into runs, and every error naming its key and line before anything runs."""

import textwrap

import pytest

from workstation.base.errors import UserError
from workstation.game.games import GAMES, paper_games
from workstation.studies.batch.grid import GridError, key_lines, load_grid, parse_grid

BASE = """\
name = "demo"
games = ["breakout", "seaquest"]
seeds = "0..2"

[[settings]]
label = "random"
spec = "random"

[[settings]]
label = "gpt-5.4-mini"
spec = "openai:gpt-5.4-mini"
effort = "low"
temperature = 0.5

[protocol]
feedback = [true, false]
max_actions = [1, 5, 10]
start = "noops:30"

[limits]
openai = 2
"""


def grid(text: str = BASE):
    return parse_grid(textwrap.dedent(text), source="g.toml")


def test_expansion_is_the_cross_product_with_labels_saying_what_varies():
    g = grid()
    assert g.name == "demo" and g.seeds == [0, 1, 2] and g.games == ["breakout", "seaquest"]
    assert g.varied == ["feedback", "max_actions"] and g.limits == {"openai": 2}
    assert len(g.cells) == 2 * 6 * 2 * 3  # settings x protocol combos x games x seeds
    labels = {c.setting for c in g.cells}
    assert len(labels) == 12 and "gpt-5.4-mini|feedback=false|max_actions=5" in labels
    cell = next(c for c in g.cells if c.setting == "gpt-5.4-mini|feedback=false|max_actions=5"
                and c.game == "seaquest" and c.seed == 2)
    assert cell.base == "gpt-5.4-mini" and cell.agent == "openai:gpt-5.4-mini"
    assert cell.options == {"effort": "low", "temperature": 0.5}
    assert cell.protocol == {"feedback": False, "max_actions": 5, "start": "noops:30"}
    assert cell.varied == {"feedback": False, "max_actions": 5}
    s = cell.spec
    assert (s.game, s.seed, s.agent, s.protocol.feedback, s.protocol.max_actions, str(s.protocol.start)) == \
           ("seaquest", 2, "openai:gpt-5.4-mini", False, 5, "noops:30")
    assert s.generation.effort == "low" and s.generation.temperature == 0.5
    assert len({c.spec.identity("pack") for c in g.cells}) == len(g.cells)  # every cell is its own run


def test_named_game_sets_seed_lists_and_out():
    g = parse_grid('name = "x"\ngames = "paper20"\nseeds = [3, 7]\n[[settings]]\nlabel = "r"\nspec = "random"\n',
                   out="batches/x/runs")
    assert g.games == [x.key for x in paper_games()] and len(g.games) == 20
    assert {c.seed for c in g.cells} == {3, 7} and {c.setting for c in g.cells} == {"r"}
    assert all(c.spec.out == "batches/x/runs" for c in g.cells)
    assert parse_grid('name = "x"\ngames = "all"\nseeds = "0..0"\n[[settings]]\nlabel = "r"\nspec = "random"\n').games == list(GAMES)


def test_a_single_value_or_one_item_list_does_not_vary():
    g = grid(BASE.replace("feedback = [true, false]", "feedback = [false]").replace("max_actions = [1, 5, 10]", "max_actions = 4"))
    assert g.varied == [] and {c.setting for c in g.cells} == {"random", "gpt-5.4-mini"}
    assert all(c.spec.protocol.max_actions == 4 and c.spec.protocol.feedback is False for c in g.cells)


def test_ale_mode_and_difficulty_are_checked_against_the_rom():
    one = BASE.replace('games = ["breakout", "seaquest"]', 'games = ["breakout"]')
    g = grid(one.replace('start = "noops:30"', "mode = [0, 4]\ndifficulty = 1"))
    assert {c.setting for c in g.cells if c.base == "random"} == {
        f"random|feedback={f}|max_actions={m}|mode={mode}" for f in ("true", "false") for m in (1, 5, 10) for mode in (0, 4)}
    assert {(c.ale["mode"], c.ale["difficulty"]) for c in g.cells} == {(0, 1), (4, 1)}
    with pytest.raises(GridError) as e:
        grid(BASE.replace('start = "noops:30"', "mode = [0, 3]"))
    assert "line 18: protocol.mode:" in str(e.value) and "breakout has no mode 3" in str(e.value)
    with pytest.raises(GridError, match="seaquest has no mode 4; it offers 0"):
        grid(BASE.replace('start = "noops:30"', "mode = [0, 4]"))


def test_key_lines():
    lines = key_lines(BASE)
    assert lines[("name",)] == 1 and lines[("settings", 1)] == 9 and lines[("settings", 1, "effort")] == 12
    assert lines[("protocol", "max_actions")] == 17 and lines[("limits", "openai")] == 21


@pytest.mark.parametrize("change, where, words", [
    (("seeds = \"0..2\"", "seeds = \"0..2\"\nbatch = 3"), "line 4: batch:", "unknown key"),
    (('games = ["breakout", "seaquest"]', 'games = ["breakout", "pong"]'), "line 2: games:", "unknown game 'pong'"),
    (('games = ["breakout", "seaquest"]', 'games = ["breakout", "Breakout"]'), "line 2: games:", "listed twice"),
    (('games = ["breakout", "seaquest"]', "games = []"), "line 2: games:", "non-empty list"),
    (('seeds = "0..2"', 'seeds = "5..2"'), "line 3: seeds:", "A <= B"),
    (('seeds = "0..2"', "seeds = [0, 1, 1]"), "line 3: seeds:", "listed twice"),
    (('seeds = "0..2"', "seeds = [0, -1]"), "line 3: seeds:", "not a seed"),
    (('name = "demo"', 'name = "a b"'), "line 1: name:", "must be a name"),
    (('spec = "openai:gpt-5.4-mini"\n', ""), "line 9: settings[1]:", "missing agent spec"),
    (('effort = "low"', 'effort = "huge"'), "line 12: settings[1].effort:", "--effort"),
    (('effort = "low"', 'reasoning = "low"'), "line 12: settings[1].reasoning:", "unknown key"),
    (('spec = "random"', 'spec = "random"\ntemperature = 0.2'), "line 8: settings[0].temperature:", "model agents"),
    (('spec = "random"', 'spec = "nobody"'), "line 7: settings[0].spec:", "nobody"),
    (('label = "gpt-5.4-mini"', 'label = "random"'), "line 10: settings[1].label:", "used by another setting"),
    (('label = "gpt-5.4-mini"', 'label = "a|b"'), "line 10: settings[1].label:", "'|'"),
    (("max_actions = [1, 5, 10]", "max_actions = [1, 5, 11]"), "line 17: protocol.max_actions:", "1..10"),
    (("max_actions = [1, 5, 10]", "max_actions = [1, 5, 5]"), "line 17: protocol.max_actions:", "listed twice"),
    (('start = "noops:30"', 'start = "sometimes"'), "line 18: protocol.start:", "noops:N"),
    (('start = "noops:30"', "speed = 2"), "line 18: protocol.speed:", "unknown protocol field"),
    (('start = "noops:30"', "difficulty = -1"), "line 18: protocol.difficulty:", "0 or more"),
    (("openai = 2", "opneai = 2"), "line 21: limits.opneai:", "unknown provider"),
    (("openai = 2", "openai = 0"), "line 21: limits.openai:", "1 or more"),
    (('feedback = [true, false]', 'feedback = [true, "maybe"]'), "line 16: protocol.feedback:", "maybe"),
])
def test_errors_name_the_key_and_line(change, where, words):
    old, new = change
    assert old in BASE
    with pytest.raises(GridError) as e:
        grid(BASE.replace(old, new, 1))
    msg = str(e.value)
    assert isinstance(e.value, UserError) and "\n" not in msg
    assert msg.startswith("g.toml " + where), msg
    assert words in msg, msg


def test_missing_keys_and_bad_toml():
    with pytest.raises(GridError, match="missing 'seeds'"):
        grid("name = 'x'\ngames = 'all'\n[[settings]]\nlabel = 'r'\nspec = 'random'\n")
    with pytest.raises(GridError) as e:
        grid(BASE.replace("max_actions = [1, 5, 10]", "max_actions = [1, 5"))
    assert "not valid TOML" in str(e.value) and e.value.line is not None


def test_load_grid_reads_a_file(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text(BASE)
    assert len(load_grid(path).cells) == 72
    with pytest.raises(GridError, match="no such grid file"):
        load_grid(tmp_path / "missing.toml")


@pytest.mark.parametrize("args", [["games"], ["games", "--variants"]])
def test_games_heads_every_column(args, capsys):
    """`games` and `games --variants` (the grid's game keys, modes and difficulties): every column the rule
    under the head marks has a heading, and every row fits the columns."""
    import re

    from workstation.cli import main

    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    head, rule = lines[0], lines[1]
    spans = [m.span() for m in re.finditer(r"-+", rule)]
    assert len(spans) >= 3 and set(rule) <= {"-", " "}
    for a, b in spans:
        assert head[a:b].strip(), f"column {a}..{b} has no heading: {head!r}"
    body = [ln for ln in lines[2:] if ln.strip() and not ln.startswith(("Sticky", "Without"))][:21]
    assert len(body) == 21 and all(len(ln) <= len(rule) for ln in body)
    if args == ["games"]:
        assert head.split()[-3:] == ["in", "the", "paper"]
        assert sum(ln.endswith("  yes") for ln in body) == 20  # the paper's 20 games; one more is not
