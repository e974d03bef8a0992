"""Check a prompt pack's template strings: format strings with plain ``{name}`` placeholders only.

Both pack layouts (the default one in ``promptpack``, whole documents in ``document_pack``)
check each ``template.toml`` string here; every failure is one line naming the key.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable
from typing import Any


def placeholders(text: str) -> set[str]:
    """Names of the ``{name}`` fields in a format string; ValueError for anything else."""
    names: set[str] = set()
    for _, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        if not name.isidentifier():
            raise ValueError(f"{{{name}}} is not a plain placeholder name")
        if spec or conversion:
            raise ValueError(f"{{{name}}} has a format spec or conversion; values arrive as ready text")
        names.add(name)
    return names


def placeholder_list(names: Iterable[str]) -> str:
    """``{a}, {b}`` (sorted), or ``no placeholders``."""
    return ", ".join(f"{{{n}}}" for n in sorted(names)) or "no placeholders"


def template_string(data: dict[str, Any], key: str, allowed: Iterable[str], where: str,
                    error: Callable[[str], Exception]) -> str:
    """``data[key]``, checked: present, text, a valid format string, only ``allowed`` placeholders.

    ``where`` names the pack; ``error`` is the exception class to raise.
    """
    if key not in data:
        raise error(f"{where}: template.toml lacks key {key!r}; add it (placeholders: {placeholder_list(allowed)})")
    value = data[key]
    if not isinstance(value, str):
        raise error(f"{where}: template.toml key {key!r} must be a string, not {type(value).__name__}")
    try:
        used = placeholders(value)
    except ValueError as exc:
        raise error(f"{where}: template.toml key {key!r} is not a valid format string ({exc}); "
                    "write {{ and }} for literal braces") from None
    bad = sorted(used - set(allowed))
    if bad:
        raise error(f"{where}: template.toml key {key!r} uses unknown placeholder {{{bad[0]}}}; "
                    f"allowed there: {placeholder_list(allowed)} (write {{{{ and }}}} for literal braces)")
    return value
