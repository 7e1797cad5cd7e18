"""How many cores this process may use: a leaf the cache, the file pool and the SQLite
reader ask alike (the cache must not import the pool, which imports the builder)."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
