"""Indexing a file's halves in two processes gives the same index as one process."""

from __future__ import annotations

from proftui.core.load import _index_parallel, index_file
from proftui.core.sources import ByteSource

from helpers import columns_equal, problems, write_trace


def _events() -> list[dict]:
    events: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 7, "args": {"name": "main"}},
    ]
    for i in range(1500):
        ts = i * 20
        events += [
            {"ph": "X", "name": f"step{i % 5}", "cat": "cpu_op", "pid": 1, "tid": 7, "ts": ts,
             "dur": 15, "args": {"i": i}},
            {"ph": "X", "name": "kernel", "cat": "kernel", "pid": 0, "tid": 3,
             "ts": f"{ts + 5}.250", "dur": 4.5},
            {"ph": "s", "id": 2**60 + i, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 7,
             "ts": ts + 1},
            {"ph": "f", "id": 2**60 + i, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 3,
             "ts": ts + 6, "bp": "e"},
            {"ph": "C", "name": "mem", "pid": 0, "ts": ts, "args": {"MB": i % 17}},
        ]
        if i % 50 == 0:
            events += [{"ph": "B", "name": "phase", "pid": 1, "tid": 8, "ts": ts},
                       {"ph": "b", "cat": "io", "id": i, "name": "req", "pid": 1, "ts": ts},
                       {"ph": "e", "cat": "io", "id": i, "name": "req", "pid": 1, "ts": ts + 30},
                       {"ph": "i", "name": "mark", "pid": 1, "tid": 7, "ts": ts, "s": "p"}]
        if i % 50 == 49:
            events.append({"ph": "E", "pid": 1, "tid": 8, "ts": ts})
    events.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": 3,
                   "args": {"name": "stream 3"}})  # metadata at the end, in the second half
    return events


def test_two_halves_equal_one_pass(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", _events(), displayTimeUnit="ns")
    serial = index_file(ByteSource(str(path)), workers=1, batch_bytes=4096)
    parallel = _index_parallel(ByteSource(str(path)), None, None, 4096)
    assert parallel is not None  # the split was found and the worker answered
    assert columns_equal(serial, parallel)
    assert parallel.meta["phase_counts"] == serial.meta["phase_counts"]
    assert parallel.meta["displayTimeUnit"] == "ns"
    assert problems(parallel) == problems(serial) == {}
    assert len(parallel.col("flows.src_slice")) == 1500
    last = parallel.n_slices - 1
    assert parallel.slice_args(last) == serial.slice_args(last)
    labels = {parallel.track_label(t) for t in range(parallel.n_tracks)}
    assert {"main (7)", "stream 3"} <= labels
