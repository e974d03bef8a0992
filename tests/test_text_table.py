"""The one plain-text table (workstation.base.text_table)."""

from workstation.base.text_table import text_table


def test_columns_pad_to_the_widest_cell_numbers_right_rules_where_asked():
    lines = text_table([("game", "runs", "note"), ("breakout", 12, ""), ("pong", 3, "new")],
                       right={1}, rules=[0])
    assert lines == ["game      runs  note",
                     "--------  ----  ----",
                     "breakout    12",
                     "pong         3  new"]
    assert text_table([]) == []
