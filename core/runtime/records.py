"""Typed, versioned records that cross a process or a file; another version is refused."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

R = TypeVar("R", bound="Record")


class Record:
    """A typed record that crosses a process or a file: a dataclass with a `version` field
    that defaults to its class' VERSION (bumped whenever its fields change shape), so that a
    record made by another version of the program is recognised and refused."""

    VERSION: ClassVar[int] = 0
    version: int


class StaleRecord(ValueError):
    """A record of another type or version than expected (refused, never used)."""


def checked(record: Any, expected: type[R]) -> R:
    """`record` when it is an `expected` of this program's version; else StaleRecord."""
    if not isinstance(record, expected):
        raise StaleRecord(f"a {type(record).__name__} where a {expected.__name__} was expected")
    version = getattr(record, "version", None)
    if version != expected.VERSION:
        raise StaleRecord(f"a {expected.__name__} of version {version!r}, "
                          f"not {expected.VERSION}")
    return record
