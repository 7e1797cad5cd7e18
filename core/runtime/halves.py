"""Work over n items done in two halves at once, one in a thread: numpy lets go of the GIL in
its sorts, searches, gathers and ufuncs over large arrays, so two halves take two cores."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

A = TypeVar("A")
B = TypeVar("B")

# Below this many items a half takes a few ms at most: not worth a thread.
LEAST = 1 << 18


def at_once(first: Callable[[], A], second: Callable[[], B], threads: int = 2) -> tuple[A, B]:
    """(first(), second()): first() here and second() in a thread at the same time, with
    `threads` >= 2; else one after the other. An exception in either is raised here (the
    thread ended first)."""
    if threads < 2:
        return first(), second()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = second()
        except BaseException as exc:  # raised where it is waited for
            box["error"] = exc

    thread = threading.Thread(target=run, name="proftui-half", daemon=True)
    thread.start()
    try:
        value = first()
    finally:
        thread.join()
    if "error" in box:
        raise box["error"]
    return value, box["value"]


def in_halves(work: Callable[[int, int], None], n: int, threads: int = 2) -> None:
    """work(0, n), or with `threads` >= 2 and at least LEAST items, work(0, n // 2) and
    work(n // 2, n) at once (see at_once). `work` writes its part's results in place (its
    own slice of arrays made beforehand)."""
    if threads < 2 or n < LEAST:
        work(0, n)
        return
    half = n // 2
    at_once(lambda: work(0, half), lambda: work(half, n))


def taken(values: np.ndarray, order: np.ndarray, threads: int = 2) -> np.ndarray:
    """values[order] (positions in range), its two halves gathered at once (see in_halves).
    (take's "clip" writes into `out` directly; "raise" would gather into a buffer first.)"""
    out = np.empty(len(order), values.dtype)
    in_halves(lambda a, b: np.take(values, order[a:b], out=out[a:b], mode="clip"), len(order),
              threads)
    return out
