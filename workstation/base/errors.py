"""The one base class of every error a user can cause: the CLI prints it as one line and exits 2.

A ``UserError`` carries what it names, so a form can mark the field and a message can name the
file, without anyone reading the message text or the class name:

- ``field``: the setting at fault (``"max_actions"``, ``"agent"``, ``"effort"``), or None;
- ``file``: the file or directory at fault (a grid, a recording, a prompt pack), or None.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar


class UserError(Exception):
    """Bad input: printed as one line (what is wrong, what to do), exit status 2."""

    def __init__(self, message: str, field: str | None = None, *, file: str | Path | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.file = file

    def __reduce__(self) -> tuple[Any, ...]:  # survives pickling (process and Ray executors) whatever the __init__
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


_ITS_OWN = "\0its own"  # FieldedError's default: the class's FIELD (None stays None when given)


class FieldedError(UserError):
    """A UserError whose ``field``, unless given, is the class's own ``FIELD``."""

    FIELD: ClassVar[str | None] = None

    def __init__(self, message: str, field: str | None = _ITS_OWN, *, file: str | Path | None = None) -> None:
        super().__init__(message, self.FIELD if field == _ITS_OWN else field, file=file)


def _rebuild(cls: type[UserError], args: tuple[Any, ...], state: dict[str, Any]) -> UserError:
    e = cls.__new__(cls)
    e.args = args
    e.__dict__.update(state)
    return e


class DamagedArtifact(UserError):
    """An artifact the workstation wrote that reads but fails its check (a seal, a digest, a line that is no
    record): one line naming it, exit status 1, as ``verify`` for a damaged recording. The reader sets it aside
    and never counts it."""
