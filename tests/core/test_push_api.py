"""The builder's typed push API: an importer of another format pushes typed columns and gets
the index they describe, the one the Chrome importer builds from the same events; a builder
state of another version is refused before anything of it is merged."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from proftui.core.build.builder import SCOPE_THREAD, TraceBuilder
from proftui.core.build.flows import flow_ids
from proftui.core.importers.chrome.read import batch_table as _batch_table
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.index import TraceIndex
from proftui.core.runtime.records import StaleRecord

from helpers import columns_equal, load, problems, slices, write_trace

# A made-up format: one tuple per event, times in ns. Each becomes one Chrome event below.
RECORDS: list[tuple] = [
    ("process", 1, "trainer"),
    ("thread", 1, 7, "main"),
    ("slice", 1, 7, "step", "user", 1_000, 9_000),
    ("slice", 1, 7, "matmul", "cpu_op", 2_000, 3_500),
    ("begin", 1, 8, "load", "io", 1_500),
    ("end", 1, 8, "load", "io", 4_250),
    ("instant", 1, 7, "mark", "user", 2_500),
    ("flow", 1, 7, "s", 5, "ac2g", "launch", 2_100),
    ("slice", 2, 3, "kernel", "kernel", 6_000, 1_000),
    ("flow", 2, 3, "f", 5, "ac2g", "launch", 6_000),
    ("counter", 1, "mem", 1_000, 3.0),
    ("counter", 1, "mem", 5_000, 7.5),
    ("async", 1, "b", "net", "fetch", "0x1", 1_200),
    ("async", 1, "e", "net", "fetch", "0x1", 8_800),
]


def _one(values: list[Any], dtype: Any) -> np.ndarray:
    return np.array(values, dtype)


def push(builder: TraceBuilder, records: list[tuple]) -> None:
    """An importer of the made-up format: each record through the typed push API, numbered
    by its position (as the Chrome importer numbers events)."""
    for ref, rec in enumerate(records):
        kind, pid = rec[0], rec[1]
        refs = _one([ref], np.int64)
        if kind == "process":
            builder.count_phase("M", 1)
            builder.process_meta(pid).name = rec[2]
        elif kind == "thread":
            builder.count_phase("M", 1)
            builder.thread_meta(pid, rec[2]).name = rec[3]
        elif kind == "slice":
            _, _, tid, name, cat, start, dur = rec
            builder.count_phase("X", 1)
            ts, ok = builder.shared_clock(_one([start], np.int64), _one([True], bool))
            builder.add_slices(ts, _one([dur], np.int64), builder.thread_tracks([pid], [tid]),
                               builder.intern([name]), builder.intern([cat]), refs,
                               _one([0], np.int32), keep=ok)
        elif kind in ("begin", "end"):
            _, _, tid, name, cat, t = rec
            builder.count_phase("B" if kind == "begin" else "E", 1)
            ts, ok = builder.shared_clock(_one([t], np.int64), _one([True], bool))
            builder.add_begin_ends(ts, _one([kind == "begin"], bool),
                                   builder.thread_tracks([pid], [tid]), builder.intern([name]),
                                   builder.intern([cat]), refs, keep=ok)
        elif kind == "instant":
            _, _, tid, name, cat, t = rec
            builder.count_phase("i", 1)
            ts, ok = builder.shared_clock(_one([t], np.int64), _one([True], bool))
            builder.add_instants(ts, builder.thread_tracks([pid], [tid]), builder.intern([name]),
                                 builder.intern([cat]), refs, _one([SCOPE_THREAD], np.int8),
                                 keep=ok)
        elif kind == "flow":
            _, _, tid, phase, ident, cat, name, t = rec
            builder.count_phase(phase, 1)
            ts, ok = builder.shared_clock(_one([t], np.int64), _one([True], bool))
            id_num, id_str = flow_ids([ident], builder.intern)
            builder.add_flow_points(ts, builder.thread_tracks([pid], [tid]),
                                    builder.intern([cat]), builder.intern([name]), id_num,
                                    id_str, _one([0 if phase == "s" else 2], np.int8),
                                    _one([True], bool), refs, keep=ok)
        elif kind == "counter":
            _, _, series, t, value = rec
            builder.count_phase("C", 1)
            builder.add_counter_sample(builder.process_track_id(pid), series,
                                       builder.shared_clock_one(t), value, ref)
        elif kind == "async":
            _, _, phase, cat, name, ident, t = rec
            builder.count_phase(phase, 1)
            builder.add_async_event(builder.shared_clock_one(t), ref, phase, pid, cat, name,
                                    ident, None, 0)


def chrome_events(records: list[tuple]) -> list[dict]:
    """The same events as Chrome trace events (µs)."""
    out: list[dict] = []
    for rec in records:
        kind, pid = rec[0], rec[1]
        if kind == "process":
            out.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": rec[2]}})
        elif kind == "thread":
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": rec[2],
                        "args": {"name": rec[3]}})
        elif kind == "slice":
            _, _, tid, name, cat, start, dur = rec
            out.append({"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat,
                        "ts": start / 1000, "dur": dur / 1000})
        elif kind in ("begin", "end"):
            _, _, tid, name, cat, t = rec
            out.append({"ph": "B" if kind == "begin" else "E", "pid": pid, "tid": tid,
                        "name": name, "cat": cat, "ts": t / 1000})
        elif kind == "instant":
            _, _, tid, name, cat, t = rec
            out.append({"ph": "i", "s": "t", "pid": pid, "tid": tid, "name": name, "cat": cat,
                        "ts": t / 1000})
        elif kind == "flow":
            _, _, tid, phase, ident, cat, name, t = rec
            out.append({"ph": phase, "bp": "e", "pid": pid, "tid": tid, "id": ident,
                        "cat": cat, "name": name, "ts": t / 1000})
        elif kind == "counter":
            _, _, series, t, value = rec
            out.append({"ph": "C", "pid": pid, "name": series, "ts": t / 1000,
                        "args": {"value": value}})
        elif kind == "async":
            _, _, phase, cat, name, ident, t = rec
            out.append({"ph": phase, "pid": pid, "tid": 0, "cat": cat, "name": name,
                        "id": ident, "ts": t / 1000})
    return out


def build(builder: TraceBuilder) -> TraceIndex:
    return builder.build({}, _batch_table([]))


def test_an_importer_of_another_format_builds_the_index_it_pushed(tmp_path: Path) -> None:
    builder = TraceBuilder(Diagnostics())
    push(builder, RECORDS)
    pushed = build(builder)
    assert slices(pushed) == [
        ("step", 1_000, 9_000, "main (7)", 0),
        ("matmul", 2_000, 3_500, "main (7)", 1),
        ("load", 1_500, 2_750, "Thread 8", 0),
        ("fetch", 1_200, 7_600, "net (async)", 0),
        ("kernel", 6_000, 1_000, "Thread 3", 0),
    ]
    a = pushed.arrays
    assert [pushed.strings[i] for i in a["processes.name"]] == ["trainer", ""]
    assert a["instants.ts"].tolist() == [2_500]
    assert a["counters.sample_ts"].tolist() == [1_000, 5_000]
    assert a["counters.sample_value"].tolist() == [3.0, 7.5]
    assert [pushed.strings[i] for i in a["counters.series_name"]] == ["mem"]
    # the flow from matmul (the slice around its start) to the kernel
    names = [pushed.slice_name(i) for i in range(pushed.n_slices)]
    assert [(names[s], names[d]) for s, d in zip(a["flows.src_slice"], a["flows.dst_slice"])
            ] == [("matmul", "kernel")]
    assert problems(pushed) == {}
    # the Chrome importer builds the same index from the same events
    chrome = load(write_trace(tmp_path / "t.json", chrome_events(RECORDS)))
    assert columns_equal(pushed, chrome)
    assert pushed.meta["phase_counts"] == chrome.meta["phase_counts"]


def test_pushed_times_move_to_the_shared_clock() -> None:
    builder = TraceBuilder(Diagnostics())
    builder.time_offset_ns = 10**9
    push(builder, RECORDS)
    shifted = build(builder)
    builder = TraceBuilder(Diagnostics())
    push(builder, RECORDS)
    plain = build(builder)
    assert (shifted.arrays["slices.start"] - plain.arrays["slices.start"]).tolist() == \
        [10**9] * plain.n_slices
    assert (shifted.arrays["counters.sample_ts"] - 10**9).tolist() == \
        plain.arrays["counters.sample_ts"].tolist()
    builder.time_offset_ns = 2**63 - 1_000  # past int64: unusable, so dropped
    ts, ok = builder.shared_clock(np.array([500, 5_000], np.int64), np.ones(2, bool))
    assert ok.tolist() == [True, False] and ts[1] == 0
    assert builder.shared_clock_one(5_000) is None


def test_a_state_merged_gives_the_index_of_one_builder() -> None:
    whole = TraceBuilder(Diagnostics())
    push(whole, RECORDS)
    part = TraceBuilder(Diagnostics())
    push(part, RECORDS[5:])
    merged = TraceBuilder(Diagnostics())
    push(merged, RECORDS[:5])
    merged.merge(part.state(), 5)
    assert columns_equal(build(whole), build(merged))


def test_a_state_of_another_version_is_refused_before_anything_is_merged() -> None:
    part = TraceBuilder(Diagnostics())
    push(part, RECORDS)
    state = part.state()
    old = dataclasses.replace(state, version=state.VERSION - 1)
    builder = TraceBuilder(Diagnostics())
    with pytest.raises(StaleRecord):
        builder.merge(old, 0)
    with pytest.raises(StaleRecord):
        builder.merge({"texts": state.texts}, 0)  # type: ignore[arg-type]  # the old dict
    assert builder.strings.texts == TraceBuilder(Diagnostics()).strings.texts
    assert not builder.phase_counts and build(builder).n_slices == 0
