"""The one plain-text table: columns padded to their widest cell, two spaces apart.

Used by every command that prints a table (games, ls, report, compare, batch plans and
progress, qa eval). It stands at the bottom of the house (it imports nothing of ours), so
``workstation.commands.ls`` can use it as well as the commands above.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

GAP = "  "


def text_table(rows: Sequence[Sequence[object]], *, right: Collection[int] = (),
               rules: Collection[int] = ()) -> list[str]:
    """The lines of ``rows`` (the head first) as an aligned table, trailing spaces stripped.

    ``right``: the columns aligned to the right (numbers). ``rules``: the rows after which a
    line of dashes goes (0: under the head).
    """
    cells = [[str(c) for c in r] for r in rows]
    if not cells:
        return []
    widths = [max(len(r[i]) for r in cells if i < len(r)) for i in range(max(map(len, cells)))]
    rule = GAP.join("-" * w for w in widths)
    out = []
    for n, r in enumerate(cells):
        out.append(GAP.join(c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
        if n in rules:
            out.append(rule)
    return out


__all__ = ["text_table"]
