"""The one seed rule: a seed is a whole number 0..SEED_MAX, the emulator's 32-bit unsigned seed.

Every seed the house takes is held to it here and nowhere else: a run's (``RunSpec``), a match's and its
sides', a grid's seeds, the judge's and QA's sampling seeds, ``ls --seed``, and a recording's manifest
and summary as they are read back (``workstation.store.records``). A seed is an ``int`` from the
command line to the recording and back; only a directory name and a CSV cell write it as text.
"""

from __future__ import annotations

from workstation.base.errors import UserError

SEED_MAX = 2**32 - 1  # the emulator's seed is a 32-bit unsigned integer


def is_seed(value: object) -> bool:
    """Whether ``value`` is a seed: an int (never a bool) in 0..SEED_MAX."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= SEED_MAX


def seed_problem(value: object, flag: str = "--seed") -> str | None:
    """Why ``value`` is no seed (one line naming ``flag``), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{flag} must be a whole number (got {value!r})"
    if not is_seed(value):
        return f"{flag} must be 0..{SEED_MAX} (got {value})"
    return None


def check_seed(value: object, flag: str = "--seed") -> int:
    """``value`` as a seed, or a ``UserError`` (exit 2) naming ``flag``; its field is the flag's name."""
    why = seed_problem(value, flag)
    if why:
        raise UserError(why, flag.lstrip("-").replace("-", "_"))
    assert isinstance(value, int)
    return value


__all__ = ["SEED_MAX", "check_seed", "is_seed", "seed_problem"]
