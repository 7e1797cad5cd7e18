"""Names of files to write: one that exists is never taken."""

from __future__ import annotations

import os


def free_name(name: str) -> str:
    """`name`, or name-1, name-2 ... the first that does not exist yet."""
    stem, dot, ext = name.rpartition(".")
    if not dot:  # no extension: the number goes at the end
        stem, ext = name, ""
    candidate, n = name, 0
    while os.path.exists(candidate):
        n += 1
        candidate = f"{stem}-{n}{dot}{ext}"
    return candidate
