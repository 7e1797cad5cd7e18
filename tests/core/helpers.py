"""Small helpers for core tests: write inline traces, load them, read columns as lists."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proftui.core import TraceIndex, load_trace

BATCH_SIZES = [1, 7, 64, 1 << 20]


def write_trace(path: Path, events: list[dict] | None = None, *, raw: bytes | None = None,
                wrapper: bool = True, gz: bool = False, **top: Any) -> Path:
    """Write events (or raw bytes) as a trace file; object form unless `wrapper` is False."""
    if raw is None:
        body: Any = {"traceEvents": events, **top} if wrapper else events
        raw = json.dumps(body, indent=1).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def x(name: str, ts: float, dur: float, tid: Any = 1, pid: Any = 1,
      cat: str = "cpu_op") -> dict[str, Any]:
    """A complete (X) event, times in µs: a host op on pid 1, thread 1, unless told."""
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "cat": cat}


def load(path: Path, batch_bytes: int = 1 << 20) -> TraceIndex:
    return load_trace(str(path), use_cache=False, batch_bytes=batch_bytes)


def slices(index: TraceIndex) -> list[tuple[str, int, int, str, int]]:
    """(name, start_ns, dur_ns, track label, depth) per slice, in index order."""
    a = index.arrays
    return [(index.slice_name(i), int(a["slices.start"][i]), int(a["slices.dur"][i]),
             index.track_label(int(a["slices.track"][i])), int(a["slices.depth"][i]))
            for i in range(index.n_slices)]


def slice_names(index: TraceIndex) -> list[str]:
    """Each slice's name, in index order."""
    return [index.slice_name(i) for i in range(index.n_slices)]


def problems(index: TraceIndex) -> dict[str, int]:
    return {p.kind: p.count for p in index.diagnostics}


def columns_equal(a: TraceIndex, b: TraceIndex) -> bool:
    """Same tables, same values (string ids compared by their text)."""
    if a.arrays.keys() != b.arrays.keys():
        return False
    for key in a.arrays:
        if key.startswith("batches."):
            continue
        x, y = a.arrays[key], b.arrays[key]
        if key.split(".")[-1] in ("name", "cat", "pid", "tid", "labels", "group", "cname",
                                  "series_name", "flow_name", "flow_cat", "flow_id_str"):
            if [a.strings[i] for i in x] != [b.strings[i] for i in y]:
                return False
        elif x.tolist() != y.tolist():
            return False
    return problems(a) == problems(b)


def assert_same_index(a: TraceIndex, b: TraceIndex, drop_meta: tuple[str, ...] = ()) -> None:
    """Two indexes alike: every array (values and dtype), the string table, the problems
    (kind, count, where the first is) and the metadata, but the cache's keys and `drop_meta`."""
    import numpy as np

    assert a.arrays.keys() == b.arrays.keys()
    for key in a.arrays:
        assert np.array_equal(a.arrays[key], b.arrays[key]), key
        assert a.arrays[key].dtype == b.arrays[key].dtype, key
    assert [a.strings[i] for i in range(len(a.strings))] == \
        [b.strings[i] for i in range(len(b.strings))]
    assert [(p.kind, p.count, p.first_offset) for p in a.diagnostics] == \
        [(p.kind, p.count, p.first_offset) for p in b.diagnostics]
    drop = ("cache_path", "cache_id", *drop_meta)
    assert {k: v for k, v in a.meta.items() if k not in drop} == \
        {k: v for k, v in b.meta.items() if k not in drop}


def kineto_rank_file(folder: Path, rank: int, events: list[dict]) -> Path:
    """A Kineto trace of rank `rank` (``rank-N.pt.trace.json``, with its distributedInfo)."""
    path = folder / f"rank-{rank}.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": rank},
                                "traceEvents": events}))
    return path


def kineto_ranks(folder: Path, events: Callable[[int], list[dict]], ranks: int = 3) -> Path:
    """`folder` made, holding a Kineto trace per rank of the `events(rank)`."""
    folder.mkdir()
    for rank in range(ranks):
        kineto_rank_file(folder, rank, events(rank))
    return folder


def launches(n: int, every_us: int = 100, delay_us: int = 30) -> list[dict[str, Any]]:
    """`n` runtime launches of 5 µs on a host thread (pid 1), each with its kernel of 10 µs
    starting `delay_us` after it on a device stream (pid 0, tid 7), joined by ac2g flows as
    Kineto writes them."""
    events: list[dict[str, Any]] = []
    for k in range(n):
        ts = 1000 + k * every_us
        events += [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": ts, "dur": 5},
            {"ph": "X", "cat": "kernel", "name": f"kernel_{k}", "pid": 0, "tid": 7,
             "ts": ts + delay_us, "dur": 10},
            {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": k + 1, "pid": 1, "tid": 1, "ts": ts},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": k + 1, "pid": 0, "tid": 7,
             "ts": ts + delay_us, "bp": "e"}]
    return events
