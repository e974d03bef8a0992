"""``Forward``: a read-only attribute that is an attribute of one of the object's own fields.

``game = Forward[str]("cell")`` on a job makes ``job.game`` read ``job.cell.game``; a second name
reads another attribute (``label = Forward[str]("cell", "setting")``). Typed as a property is.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Forward(Generic[T]):
    def __init__(self, via: str, name: str = "") -> None:
        self.via, self.name = via, name

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    @overload
    def __get__(self, obj: None, owner: type) -> Forward[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.via), self.name)

    def __set__(self, obj: object, value: T) -> None:
        raise AttributeError(f"{self.name} is read from {self.via}; it cannot be set")
