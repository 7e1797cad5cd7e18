"""Opening a trace: from the cache when it is current, else by indexing the file."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numpy as np
from proftui.core import cache
from proftui.core.build import TraceBuilder
from proftui.core.diagnostics import Diagnostics
from proftui.core.importers.chrome_json import BATCH_BYTES, ChromeJsonReader
from proftui.core.index import TraceIndex
from proftui.core.sources import ByteSource

Progress = Callable[[int, int, int], None]  # (bytes read, bytes total, events so far)

_KEPT_METADATA = ("displayTimeUnit", "baseTimeNanoseconds", "schemaVersion", "traceName",
                  "distributedInfo", "span_indx", "trace_id")


def load_trace(path: str, *, use_cache: bool = True, progress: Progress | None = None,
               cancelled: Callable[[], bool] | None = None,
               batch_bytes: int = BATCH_BYTES) -> TraceIndex:
    """Index the Chrome-trace JSON file at `path` (plain or gzip), or reopen it from the cache.

    Raises :class:`~proftui.core.errors.ProftuiError` (with a readable message) for a file
    that cannot be read or is not a trace, and :class:`~proftui.core.errors.Cancelled` when
    `cancelled` returns True during indexing.
    """
    source = ByteSource(path)
    identities = [source.identity]
    if use_cache:
        try:
            index = cache.load(identities)
            index.meta["from_cache"] = True
            return index
        except cache.CacheMiss:
            pass
    index = index_file(source, progress=progress, cancelled=cancelled, batch_bytes=batch_bytes)
    if use_cache:
        try:
            index.meta["cache_path"] = str(cache.store(index, identities))
        except OSError as exc:
            index.meta["cache_error"] = f"could not write the cache: {exc.strerror or exc}"
    return index


def index_file(source: ByteSource, *, progress: Progress | None = None,
               cancelled: Callable[[], bool] | None = None,
               batch_bytes: int = BATCH_BYTES) -> TraceIndex:
    """Index one trace file, without the cache."""
    diagnostics = Diagnostics()
    reader = ChromeJsonReader(source, diagnostics, batch_bytes=batch_bytes)
    builder = TraceBuilder(diagnostics)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # no reference cycles are made while indexing; the collector only costs time
    try:
        reader.read(builder.add_events, progress=progress, cancelled=cancelled)
        metadata: dict[str, Any] = {k: reader.metadata[k] for k in _KEPT_METADATA
                                    if k in reader.metadata}
        metadata["format"] = reader.metadata.get("format")
        metadata["sources"] = [{"path": source.identity.path, "size": source.size,
                                "compressed": source.compressed}]
        b = reader.batches
        batches = {
            "file": np.zeros(len(b), np.int32),
            "start": np.array([r.start for r in b], np.int64),
            "end": np.array([r.end for r in b], np.int64),
            "first_ordinal": np.array([r.first_ordinal for r in b], np.int64),
            "final": np.array([r.final for r in b], np.bool_),
        }
        return builder.build(metadata, batches)
    finally:
        if gc_was_enabled:
            gc.enable()
