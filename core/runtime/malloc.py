"""Memory settings while indexing: glibc malloc tuned and trimmed, the cyclic GC paused."""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_libc: ctypes.CDLL | None = None
_tuned = False


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            _libc = ctypes.CDLL("libc.so.6")
        except OSError:
            return None
    return _libc


def tune_malloc() -> None:
    """Keep glibc from mapping and unmapping every ~1 MB batch buffer (10-19 % of the time).

    Batch-sized blocks come from the heap and are reused; big numpy arrays stay mapped (and go
    back to the system when freed).
    """
    global _tuned
    libc = _glibc()
    if _tuned or libc is None:
        return
    _tuned = True
    try:
        libc.mallopt(-3, 4 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 32 << 20)  # M_TRIM_THRESHOLD
    except AttributeError:
        pass


def release_free_memory() -> None:
    """Hand freed heap pages back to the system; per-batch arrays leave many behind."""
    libc = _glibc()
    if libc is not None:
        try:
            libc.malloc_trim(0)
        except AttributeError:
            pass


@contextmanager
def indexing() -> Iterator[None]:
    """Settings for the length of an indexing run: tuned malloc, no cyclic garbage collector.

    Indexing makes no reference cycles, so the collector would only cost time.
    """
    tune_malloc()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
