"""The `args` of events, read again from the trace files when they are asked for: the index
keeps no args (they are most of a trace's bytes), only where each batch of events was read
(:mod:`proftui.core.importers.chrome.read`) or which database row an event is."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from proftui.core.model.index import TraceIndex


def read_args(index: TraceIndex, refs: np.ndarray) -> list[Any]:
    """The decoded `args` of the events numbered `refs` (None where absent), reading each
    recorded batch of the trace once, files front to back (a gzip file is inflated once)."""
    from proftui.core.cache.seeks import open_source
    from proftui.core.importers.chrome.decode import event_args

    refs = np.asarray(refs, np.int64)
    out: list[Any] = [None] * len(refs)
    if not len(refs):
        return out
    firsts = index.col("batches.first_ordinal")
    batch = np.searchsorted(firsts, refs, side="right") - 1
    order = np.argsort(batch, kind="stable")
    wanted, first_at = np.unique(batch[order], return_index=True)
    bounds = [*first_at.tolist(), len(order)]
    members = {int(b): order[bounds[k]:bounds[k + 1]] for k, b in enumerate(wanted.tolist())}
    sources = index.meta.get("sources", [])
    files = index.col("batches.file")
    for f, source in enumerate(sources):
        mine = [b for b in members if b >= 0 and int(files[b]) == f]
        if not mine:
            continue
        if source.get("sqlite"):  # rows of a SQLite export, read again
            from proftui.core.importers.ascend_db.args import db_args

            positions = np.concatenate([members[b] for b in mine])
            for pos, value in zip(positions.tolist(), db_args(
                    source["path"], source["sqlite"]["refs"], refs[positions].tolist())):
                out[pos] = value
            continue
        mine.sort(key=lambda b: int(index.col("batches.start")[b]))
        ranges = [(int(index.col("batches.start")[b]), int(index.col("batches.end")[b]))
                  for b in mine]
        for b, data in zip(mine, open_source(index, f).read_ranges(ranges)):
            wanted_events = _events(data, bool(index.col("batches.final")[b]))
            base = int(firsts[b])
            for pos in members[b].tolist():
                ev = wanted_events(int(refs[pos]) - base)
                if ev is not None:
                    out[pos] = event_args(ev)
    return out


def args_of(index: TraceIndex, ref: int) -> Any:
    """The `args` of the event numbered `ref` (None where absent)."""
    return read_args(index, np.array([ref], np.int64))[0]


def slice_args(index: TraceIndex, i: int) -> Any:
    """The `args` of slice `i` (None where absent)."""
    return args_of(index, int(index.arrays["slices.ref"][i]))


def _events(data: bytes, final: bool) -> Callable[[int], Any]:
    """The k-th event of a recorded batch (None past its end), as the batch's typed decode
    gives it: where the native reader takes the batch, its bounds find the event and that
    event alone is decoded (reading a 4 MB batch natively takes a fifth of the time of its
    decode); else, or should that one not decode, the batch is decoded as the Python path
    reads it. Both number a batch's events alike (what the index counted)."""
    from proftui.core.importers.chrome import native
    from proftui.core.importers.chrome.decode import decode_fast, decode_piece

    @functools.cache
    def decoded() -> list[Any]:  # (once, when an event is asked of it)
        return decode_piece(data, final).events

    def whole(k: int) -> Any:
        events = decoded()
        return events[k] if 0 <= k < len(events) else None

    columns = None if final else native.read_batch(data, 0, len(data))
    if columns is None:
        return whole
    bounds = columns.bounds

    def event(k: int) -> Any:
        if not 0 <= k < len(bounds):
            return None
        start, end = bounds[k].tolist()
        one = decode_fast(b"[" + data[start:end] + b"]")
        return one[0] if one else whole(k)

    return event
