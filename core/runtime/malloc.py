"""Memory settings while indexing: glibc malloc tuned and trimmed, the cyclic GC paused."""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_libc: ctypes.CDLL | None = None
_tuned = False
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # mallopt's parameters
MMAP_THRESHOLD, TRIM_THRESHOLD = 16 << 20, 32 << 20  # while indexing (see tune_malloc)


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            _libc = ctypes.CDLL("libc.so.6")
        except OSError:
            return None
    return _libc


def tune_malloc() -> None:
    """Keep glibc from mapping and unmapping every batch's read buffer (10-19 % of the time):
    the reader's buffers (two ~4 MB batches a read, and what was left of the last) stay below
    the threshold.

    Batch-sized blocks come from the heap and are reused; big numpy arrays stay mapped (and go
    back to the system when freed). Threads made from then on share the one heap: what the
    build's threads free (see core/runtime/halves.py) is reused by the rest of it, not kept
    in a heap of their own (the parent of a two-part 1 GB msprof-like index peaked at 0.50x
    the file, 0.47x in one heap).
    """
    global _tuned
    libc = _glibc()
    if _tuned or libc is None:
        return
    _tuned = True
    try:
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        libc.mallopt(M_ARENA_MAX, 1)
    except AttributeError:
        pass


@contextmanager
def reused_arrays() -> Iterator[None]:
    """While building an index from tuned malloc (see tune_malloc): arrays up to 32 MB
    (glibc's most) come from the heap and, freed, stay there for the next one, instead of
    being mapped afresh, a page fault per 4 kB, each time (1 GB Kineto-like trace, 2.4 M
    slices of 19 MB columns: a third of the build's time). They go back to the system at
    the end."""
    libc = _glibc()
    if not _tuned or libc is None or not hasattr(libc, "mallopt"):
        yield
        return
    try:
        libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
        yield
    finally:
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        release_free_memory()


def release_free_memory() -> None:
    """Hand freed heap pages back to the system; per-batch arrays leave many behind."""
    libc = _glibc()
    if libc is not None:
        try:
            libc.malloc_trim(0)
        except AttributeError:
            pass


def release_before(array_bytes: int) -> None:
    """release_free_memory, when the arrays to be made next (of `array_bytes` each) are mapped
    apart from the heap (MMAP_THRESHOLD and up): the heap's free pages would sit idle beside
    them. Smaller arrays are made on those pages, and handing them back first would only have
    the system zero them again (100 MB Kineto-like: 0.9x the time, the same peak)."""
    if array_bytes >= MMAP_THRESHOLD:
        release_free_memory()


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
