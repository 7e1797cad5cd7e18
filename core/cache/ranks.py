"""One trace file of a profile of several (a rank), as read into a builder of its own, kept in
the cache: a reopen after one rank changed re-reads that rank and merges the others from here.

The whole profile's index (``<key>.idx``,
:mod:`proftui.core.cache.indexes`) is keyed by every file's
identity, so any change re-indexes it. Beside it, each trace file read for a profile of
several is stored as an entry of its own (``<key>.rnk``: counted under the size cap, listed by
``proftui cache`` as kind ``rank``, removed least recently used first like the others): what a
worker sends back for it (a :class:`~proftui.core.importers.chrome.file_read.FileRead`: the
builder's state, the batches, the metadata, the event count, a gzip file's seek points), its
ordinals numbered from 0, so that it merges at any place in the file order. The key is the
file's identity, its group (how its pids are qualified), its clock offset, the batch size
(batches are recorded in the index), and the versions of the records, of the cache format and
of the program.

The record's columns (its builder state's tables) are the entry's arrays; the rest of the
record is one pickled byte array, checksummed like the others. It is unpickled by a loader that
makes only the classes a record holds (:class:`~proftui.core.importers.chrome.file_read.FileRead`,
:class:`~proftui.core.build.state.BuilderState`, :class:`~proftui.core.build.tracks.Meta` and
:class:`~proftui.core.importers.chrome.read.BatchRecord`) and builtin containers: an entry
naming anything else is refused, not run. A record of another version, like an entry that
is missing, damaged or inconsistent with the builder's tables, is a miss: the file is read
afresh, never trusted. An entry is stored only when the file was unchanged from a time-stamp
tick before its reading began until it was read (see
:func:`proftui.core.cache.indexes.check_unchanged`).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from proftui import __version__
from proftui.core.cache import indexes as cache
from proftui.core.cache.file import CacheMiss
from proftui.core.cache.seeks import PARTS
from proftui.core.runtime.records import checked
from proftui.core.source.gzip_seek import SeekPoints
from proftui.core.source.streams import FileIdentity

if TYPE_CHECKING:
    from proftui.core.build.state import BuilderState
    from proftui.core.importers.chrome.file_read import FileRead

SUFFIX = "rnk"
# The records an entry holds are imported when one is read or written (they bring the parser),
# not to reopen a profile from its whole index.
_CLASSES = {("proftui.core.build.tracks", "Meta"),
            ("proftui.core.build.state", "BuilderState"),
            ("proftui.core.importers.chrome.read", "BatchRecord"),
            ("proftui.core.importers.chrome.file_read", "FileRead")}


def _versions() -> list[int]:
    """The versions of the records an entry holds: an entry of others is another key."""
    from proftui.core.build.state import BuilderState
    from proftui.core.importers.chrome.file_read import FileRead

    return [FileRead.VERSION, BuilderState.VERSION]


@dataclass(frozen=True)
class Key:
    """What a file's entry is for: this version of the file, read with this group (None:
    pids unqualified), clock offset and batch size."""

    identity: FileIdentity
    group: str | None
    offset_ns: int
    batch_bytes: int

    def header(self) -> dict[str, Any]:
        """As the header of its entry holds it."""
        return {"state_version": _versions(),
                "sources": cache.identity_list([self.identity]), "group": self.group,
                "offset_ns": self.offset_ns, "batch_bytes": self.batch_bytes}

    def path(self) -> Path:
        """Where its entry is kept."""
        text = cache.json_bytes(["rank", self.header(), cache.FORMAT_VERSION, __version__])
        return cache.cache_dir() / f"{hashlib.sha256(text).hexdigest()[:40]}.{SUFFIX}"


def store(key: Key, result: FileRead, read_start_ns: int) -> bool:
    """Keep `result` (the file of `key` read into a builder of its own) unless the file
    changed since a tick before `read_start_ns` (see cache.settle). Whether it was stored;
    errors writing are ignored (it is a shortcut)."""
    try:
        cache.check_unchanged([key.identity], read_start_ns)
    except cache.CacheNotWritten:
        return False
    state = result.state
    arrays = {f"{table}.{column}": values for table, columns in state.chunks.items()
              for column, values in columns.items()}
    points = result.seek_points
    if points is not None:
        arrays.update({f"seek.{part}": getattr(points, part) for part in PARTS})
    # the arrays are kept beside it: not pickled twice
    rest = replace(result, state=replace(state, chunks={}), seek_points=None)
    arrays["rest"] = np.frombuffer(pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL),
                                   np.uint8)
    try:
        cache.write_file(key.path(), {"version": cache.FORMAT_VERSION, "program": __version__,
                                      "id": os.urandom(16).hex(), **key.header()}, arrays)
    except OSError:
        return False
    return True


def load(key: Key) -> FileRead | None:
    """What :func:`store` kept for `key` (its columns memory-mapped); None when the cache
    holds no current, whole entry for it (a record of another version included)."""
    from proftui.core.build.state import BuilderState
    from proftui.core.importers.chrome.file_read import FileRead

    try:
        header, arrays = cache.read_file(key.path())
        if any(header.get(name) != value for name, value in key.header().items()):
            return None
        rest = checked(_Loader(io.BytesIO(arrays.pop("rest"))).load(), FileRead)
        checked(rest.state, BuilderState)
        points = None
        if "seek.out" in arrays:
            points = SeekPoints(*(arrays.pop(f"seek.{part}") for part in PARTS))
            if not points.valid(key.identity.size):
                return None
        chunks: dict[str, dict[str, np.ndarray]] = {}
        for name, values in arrays.items():
            table, column = name.split(".", 1)
            chunks.setdefault(table, {})[column] = values
        state = replace(rest.state, chunks=chunks)
        if not _consistent(state):
            return None
        return replace(rest, state=state, seek_points=points)
    except Exception:  # noqa: BLE001 - CacheMiss, StaleRecord, any damage at all: "not trusted"
        return None


class _Loader(pickle.Unpickler):
    """Unpickles builtin values and the classes an entry holds; refuses anything else."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _CLASSES:
            raise CacheMiss(f"an entry may not name {module}.{name}")
        return super().find_class(module, name)


def _consistent(state: BuilderState) -> bool:
    """Whether the state has the builder's tables, columns and types, and its string and
    track ids are in range (so that merging it cannot fail half way)."""
    from proftui.core.build.builder import TEXT_COLUMNS, TraceBuilder
    from proftui.core.model.diagnostics import Diagnostics

    expected = TraceBuilder(Diagnostics()).state().chunks
    if state.chunks.keys() != expected.keys():
        return False
    n_texts, n_tracks = len(state.texts), len(state.tracks)
    for table, columns in expected.items():
        got = state.chunks[table]
        if got.keys() != columns.keys() or len({len(v) for v in got.values()}) > 1:
            return False
        for column, values in got.items():
            if values.dtype != columns[column].dtype or values.ndim != 1:
                return False
            bound = (n_texts if column in TEXT_COLUMNS
                     else n_tracks if column == "track" else None)
            if bound is not None and len(values) and not 0 <= values.min() <= values.max() < bound:
                return False
    return True
