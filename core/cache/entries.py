"""The entries of the cache directory: what each holds, its size and last use; the size cap
(``PROFTUI_CACHE_MAX``, default 10 GiB) kept by removing the least recently used entries
first; emptying it.

An entry is a main file (``<key>.idx``: a trace's index, ``<key>.tbl``: a summary table,
``<key>.lay``: what discovery found in a folder, see :mod:`proftui.core.cache.discovery`,
``<key>.rnk``: one trace file of a profile of several as it was read, see
:mod:`proftui.core.cache.ranks`) with the derived files stored beside it
(``<key>.idx.rows1`` ...); they are counted and removed together. An entry's last use is the
latest modification time among its files: loading a file sets its time to now
(:func:`mark_used`), and writing one does. Only files named as proftui names them and starting
with its MAGIC are counted, listed or removed: anything else a person put in the directory is
left alone.

Removing an entry another process has mapped is safe on Linux and other POSIX systems: the
file's name goes, but its pages stay valid in that process until it unmaps them (it may then
store derived arrays beside an entry that is gone; those orphans are the first to be removed).
On Windows a mapped file cannot be removed; it is then skipped.
"""

from __future__ import annotations

import errno
import json
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from proftui.core.cache.file import (
    MAGIC,
    PREFIX,
    CacheMiss,
    is_ours,
    read_header,
    sweep_temporaries,
)
from proftui.core.source.streams import file_size

DEFAULT_MAX_BYTES = 10 << 30
MAX_ENV = "PROFTUI_CACHE_MAX"
_NAME = re.compile(r"^([0-9a-f]{40})\.(idx|tbl|lay|rnk)(?:\.([A-Za-z0-9_]+))?$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_HEADER_PEEK = 1 << 16  # most headers fit in the first read
_HEADER_MAX = 256 << 20  # a longer header is damage


def parse_size(text: str) -> int:
    """Bytes of a size such as ``10G``, ``500M``, ``1.5T``, ``750MiB`` or ``123456``
    (K, M, G, T are powers of 1024); raises ValueError with one sentence."""
    found = _SIZE.match(text)
    if not found:
        raise ValueError(f"{MAX_ENV}={text!r} is not a size (for example 10G, 500M or a "
                         "number of bytes)")
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


def max_bytes() -> int:
    """The cap on the cache's size: $PROFTUI_CACHE_MAX, else 10 GiB; raises ValueError for a
    value that is not a size."""
    text = os.environ.get(MAX_ENV, "").strip()
    return parse_size(text) if text else DEFAULT_MAX_BYTES


def fmt_bytes(n: int) -> str:
    """A size for a person: 1.5 GiB, 300 MiB, 12 KiB, 80 B."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


@dataclass(frozen=True)
class Entry:
    """One entry of the cache: a main file and the derived files beside it."""

    key: str  # the 40 hex digits its files are named by
    main: str | None  # path of the main file; None for derived files whose main is gone
    files: tuple[str, ...]  # every file, main first
    size: int  # bytes of all its files
    last_used_ns: int  # latest modification time of its files


def mark_used(path: str | Path) -> None:
    """Note that `path` was used now (for least-recently-used removal); a cache that is not
    ours to write is read all the same."""
    try:
        os.utime(path)
    except OSError:
        pass


def entries(directory: Path) -> list[Entry]:
    """The entries of the cache directory (files of other programs left out), least recently
    used first; an empty list when it does not exist."""
    files: dict[str, list[tuple[str, bool, int, int]]] = {}  # key -> (path, main, size, mtime)
    try:
        with os.scandir(directory) as listing:
            for item in listing:
                found = _NAME.match(item.name)
                if not found:
                    continue
                try:
                    st = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not item.is_file(follow_symlinks=False):
                    continue
                files.setdefault(found.group(1), []).append(
                    (item.path, found.group(3) is None, st.st_size, st.st_mtime_ns))
    except OSError:
        return []
    found_entries = []
    for key, members in files.items():
        members.sort(key=lambda m: (not m[1], m[0]))  # the main file first
        main = members[0][0] if members[0][1] else None
        found_entries.append(Entry(key, main, tuple(m[0] for m in members),
                                   sum(m[2] for m in members), max(m[3] for m in members)))
    found_entries.sort(key=lambda e: (e.main is not None, e.last_used_ns, e.key))
    return found_entries


def remove(entry: Entry) -> int:
    """Remove the files of `entry` that are proftui's; returns the bytes freed."""
    freed = 0
    for path in entry.files:
        try:
            size = os.stat(path, follow_symlinks=False).st_size
            if is_ours(path):
                os.unlink(path)
                freed += size
        except OSError:  # gone already, or in use (Windows): skipped
            pass
    return freed


def make_room(path: Path, nbytes: int) -> None:
    """Before `nbytes` are written to `path` in the cache: remove the least recently used
    entries (never `path`'s own) until the cache with the new file fits under the cap.

    Raises OSError (its strerror one sentence) when the cap is not a size, or the file alone
    is larger than the cap.
    """
    try:
        cap = max_bytes()
    except ValueError as exc:
        raise OSError(errno.EINVAL, str(exc)) from None
    if nbytes > cap:
        raise OSError(errno.EFBIG, f"{fmt_bytes(nbytes)} is more than the cache may hold "
                                   f"({fmt_bytes(cap)}, {MAX_ENV})")
    own_key = path.name[:40]
    found = entries(path.parent)
    total = sum(e.size for e in found) - file_size(path)  # the file replaced frees its bytes
    for entry in found:
        if total + nbytes <= cap:
            break
        if entry.key != own_key:
            total -= remove(entry)


@dataclass(frozen=True)
class Described:
    """An entry as `proftui cache` lists it."""

    entry: Entry
    kind: str  # "index", "table", "layout", "rank", "derived only" (the main file is gone)
    # or "unreadable"
    sources: list[str]  # the files it was made from
    sources_exist: list[bool]
    problem: str  # why it cannot be used, or ""


def describe(entry: Entry, version: int, program: str) -> Described:
    """What an entry holds, read from its main file's header (its arrays are not read)."""
    if entry.main is None:
        return Described(entry, "derived only", [], [], "its index is gone")
    try:
        header = _header(entry.main)
    except CacheMiss as exc:
        return Described(entry, "unreadable", [], [], str(exc))
    kind = {".tbl": "table", ".lay": "layout", ".rnk": "rank"}.get(entry.main[-4:], "index")
    sources = [str(s[0]) for s in header.get("sources", []) if isinstance(s, list) and s]
    problem = ""
    if header.get("version") != version or header.get("program") != program:
        problem = "written by another version"
    return Described(entry, kind, sources, [os.path.exists(s) for s in sources], problem)


def _header(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            data = f.read(_HEADER_PEEK)
            start = len(MAGIC) + PREFIX.size
            if data[: len(MAGIC)] == MAGIC and len(data) >= start:
                needed = start + PREFIX.unpack_from(data, len(MAGIC))[0]
                if len(data) < needed <= _HEADER_MAX:  # a long header: read the rest of it
                    data += f.read(needed - len(data))
            try:
                return read_header(data)[0]
            except CacheMiss:
                return _old_header(data)
    except OSError as exc:
        raise CacheMiss(str(exc.strerror or exc)) from None
    except CacheMiss:
        raise
    except Exception as exc:  # any damage at all
        raise CacheMiss(f"damaged header: {exc}") from None


def _old_header(data: bytes) -> dict:
    """The header of a file of format 2 and before (no checksum of the header: its JSON
    follows the length at once), to name its version; raises CacheMiss."""
    start = len(MAGIC) + 8
    (length,) = struct.unpack_from("<Q", data, len(MAGIC))
    try:
        header = json.loads(data[start: start + length])
    except ValueError:
        raise CacheMiss("damaged header") from None
    if not isinstance(header, dict) or "version" not in header:
        raise CacheMiss("damaged header")
    return header


def clear(directory: Path) -> tuple[int, int]:
    """Remove every entry and every stale temporary file proftui wrote in `directory`;
    returns (files removed, bytes freed). Files of other programs, and temporary files a
    running proftui is writing, are left."""
    removed = freed = 0
    for entry in entries(directory):
        before = sum(os.path.exists(p) for p in entry.files)
        freed += remove(entry)
        removed += before - sum(os.path.exists(p) for p in entry.files)
    swept, swept_bytes = sweep_temporaries(directory)
    return removed + swept, freed + swept_bytes
