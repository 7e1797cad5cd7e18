"""Every phase of the Trace Event Format, exact to the nanosecond, at every batch size."""

from __future__ import annotations

import pytest

from helpers import BATCH_SIZES, load, problems, slices, write_trace

pytestmark = pytest.mark.parametrize("batch", BATCH_SIZES)


def test_complete_events_exact_times(tmp_path, batch) -> None:
    raw = b"""{"traceEvents": [
      {"ph": "X", "name": "epoch", "pid": 1, "tid": 2, "ts": 1780676244313289.125, "dur": 1.5},
      {"ph": "X", "name": "string ts", "pid": 1, "tid": 2, "ts": "1780676244313289.000",
       "dur": 0.001},
      {"ph": "X", "name": "kineto", "pid": 1, "tid": 3, "ts": 5836443391361.742, "dur": 12},
      {"ph": "X", "name": "int", "pid": 1, "tid": 3, "ts": 5836443391370, "dur": "2.5"},
      {"ph": "X", "name": "double text", "pid": 1, "tid": 4, "ts": 1698316426434084.2,
       "dur": 1}
    ]}"""
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    assert slices(index) == [
        ("string ts", 1780676244313289000, 1, "Thread 2", 0),
        ("epoch", 1780676244313289125, 1500, "Thread 2", 0),
        ("kineto", 5836443391361742, 12000, "Thread 3", 0),
        ("int", 5836443391370000, 2500, "Thread 3", 1),  # inside "kineto"
        # a double's shortest text at epoch magnitude means that double (...084.25)
        ("double text", 1698316426434084250, 1000, "Thread 4", 0),
    ]
    assert index.start_ns == 5836443391361742
    assert index.end_ns == 1780676244313290625
    assert problems(index) == {}


def test_begin_end_pairs_per_track(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
        {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12},
        {"ph": "B", "name": "other", "pid": 1, "tid": 2, "ts": 13},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 15},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 21},  # no B left: dropped, counted
        {"ph": "X", "name": "later", "pid": 1, "tid": 2, "ts": 30, "dur": 4},
    ])
    index = load(path, batch)
    assert slices(index) == [
        ("outer", 10_000, 10_000, "Thread 1", 0),
        ("inner", 12_000, 3_000, "Thread 1", 1),
        # never closed: ends at the last timestamp of its track (the X ending at 34 us)
        ("other", 13_000, 21_000, "Thread 2", 0),
        ("later", 30_000, 4_000, "Thread 2", 1),
    ]
    assert problems(index) == {"unmatched_end": 1, "unclosed_begin": 1}


def test_events_in_any_order_and_metadata_anywhere(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "b", "pid": 5, "tid": 9, "ts": 20, "dur": 1},
        {"ph": "X", "name": "a", "pid": 5, "tid": 9, "ts": 10, "dur": 30},
        {"ph": "X", "name": "gpu", "pid": 0, "tid": 7, "ts": 11, "dur": 2},
        {"ph": "M", "name": "thread_name", "pid": 5, "tid": 9, "args": {"name": "main"}},
        {"ph": "M", "name": "process_name", "pid": 5, "args": {"name": "python"}},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU"}},
        {"ph": "M", "name": "process_sort_index", "pid": 0, "args": {"sort_index": -1}},
        {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 5, "tid": 9, "args": {"sort_index": 3}},
    ])
    index = load(path, batch)
    assert slices(index) == [
        ("gpu", 11_000, 2_000, "Thread 7", 0),
        ("a", 10_000, 30_000, "main (9)", 0),
        ("b", 20_000, 1_000, "main (9)", 1),
    ]
    assert [index.process_label(p) for p in range(2)] == ["GPU (0) [GPU 0]", "python (5)"]


def test_instants_with_scopes(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "i", "name": "thread", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "I", "name": "legacy", "pid": 1, "tid": 1, "ts": 2, "s": "t"},
        {"ph": "i", "name": "proc", "pid": 1, "tid": 1, "ts": 3, "s": "p"},
        {"ph": "R", "name": "mark", "pid": 1, "tid": 1, "ts": 4},
        {"ph": "i", "name": "everyone", "pid": 1, "tid": 1, "ts": 5, "s": "g"},
    ])
    index = load(path, batch)
    a = index.arrays
    got = sorted((index.strings[a["instants.name"][i]], int(a["instants.ts"][i]),
                  index.track_label(int(a["instants.track"][i])), int(a["instants.scope"][i]))
                 for i in range(len(a["instants.ts"])))
    assert got == [("everyone", 5000, "global", 2), ("legacy", 2000, "Thread 1", 0),
                   ("mark", 4000, "Thread 1", 0), ("proc", 3000, "process-wide", 1),
                   ("thread", 1000, "Thread 1", 0)]


def test_counters_one_series_per_name_and_key(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "C", "name": "mem", "pid": 1, "ts": 1, "args": {"alloc": 5, "reserved": 8.5}},
        {"ph": "C", "name": "mem", "pid": 1, "ts": 2, "args": {"alloc": 6, "reserved": 9}},
        {"ph": "C", "name": "freq", "pid": 1, "ts": 1, "args": {"value": 1800}},
        {"ph": "C", "name": "q", "id": 3, "pid": 2, "ts": 1, "args": {"depth": 4}},
        {"ph": "C", "name": "bad", "pid": 1, "ts": 1, "args": {"text": "x"}},
    ])
    index = load(path, batch)
    a = index.arrays
    series = {}
    for i in range(len(a["counters.sample_ts"])):
        name = index.strings[a["counters.series_name"][a["counters.sample_series"][i]]]
        series.setdefault(name, []).append((int(a["counters.sample_ts"][i]),
                                            float(a["counters.sample_value"][i])))
    assert series == {"mem alloc": [(1000, 5.0), (2000, 6.0)],
                      "mem reserved": [(1000, 8.5), (2000, 9.0)],
                      "freq": [(1000, 1800.0)], "q[3] depth": [(1000, 4.0)]}
    assert problems(index) == {"bad_counter": 1}


def test_flows_bind_to_slices(tmp_path, batch) -> None:
    big = 1704161511422904204  # torch_npu flow ids exceed 2^53
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "launch", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
        {"ph": "X", "name": "child", "pid": 1, "tid": 1, "ts": 12, "dur": 2},
        {"ph": "X", "name": "kernel", "pid": 2, "tid": 7, "ts": 30, "dur": 5},
        {"ph": "X", "name": "next", "pid": 2, "tid": 8, "ts": 40, "dur": 5},
        {"ph": "s", "id": big, "cat": "async_npu", "name": "torch_to_npu", "pid": 1, "tid": 1,
         "ts": 13},
        {"ph": "f", "id": big, "cat": "async_npu", "name": "torch_to_npu", "pid": 2, "tid": 7,
         "ts": 31, "bp": "e"},
        {"ph": "s", "id": "7", "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 15},
        {"ph": "t", "id": "7", "cat": "c", "name": "n", "pid": 2, "tid": 7, "ts": 32},
        {"ph": "f", "id": "7", "cat": "c", "name": "n", "pid": 2, "tid": 8, "ts": 36},
        {"ph": "f", "id": 99, "cat": "c", "name": "n", "pid": 2, "tid": 8, "ts": 36},
    ])
    index = load(path, batch)
    a = index.arrays

    def name(i: int) -> str:
        return index.slice_name(int(i)) if i >= 0 else "-"

    edges = sorted((name(s), name(d)) for s, d in zip(a["flows.src_slice"], a["flows.dst_slice"]))
    # s binds to the deepest enclosing slice; f without bp to the next slice that begins.
    assert edges == [("child", "kernel"), ("kernel", "next"), ("launch", "kernel")]
    assert big in a["flows.flow_id_num"].tolist()
    assert problems(index) == {"flow_orphan": 1}


def test_async_spans(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "b", "cat": "io", "id": "0x1", "name": "req", "pid": 1, "tid": 1, "ts": 10},
        {"ph": "b", "cat": "io", "id": "0x1", "name": "part", "pid": 1, "tid": 1, "ts": 12},
        {"ph": "n", "cat": "io", "id": "0x1", "name": "tick", "pid": 1, "tid": 1, "ts": 13},
        {"ph": "e", "cat": "io", "id": "0x1", "name": "part", "pid": 1, "tid": 1, "ts": 14},
        {"ph": "e", "cat": "io", "id": "0x1", "name": "req", "pid": 1, "tid": 1, "ts": 20},
        {"ph": "b", "cat": "io", "id": "0x2", "name": "req", "pid": 1, "tid": 1, "ts": 11},
        {"ph": "e", "cat": "io", "id": "0x2", "name": "req", "pid": 1, "tid": 1, "ts": 19},
        {"ph": "S", "cat": "old", "id": 5, "name": "load", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "T", "cat": "old", "id": 5, "name": "load", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "F", "cat": "old", "id": 5, "name": "load", "pid": 3, "tid": 1, "ts": 4},
        {"ph": "e", "cat": "io", "id": "0x9", "name": "lost", "pid": 1, "tid": 1, "ts": 5},
    ])
    index = load(path, batch)
    got = sorted(slices(index), key=lambda s: (s[3], s[1]))
    assert got == [
        # the second id overlaps the first in time: its own lane, never nested under it
        ("req", 11_000, 8_000, "io #2 (async)", 0),
        ("req", 10_000, 10_000, "io (async)", 0),
        ("part", 12_000, 2_000, "io (async)", 1),
        ("load", 2_000, 2_000, "old (async)", 0),
    ]
    assert len(index.col("instants.ts")) == 2  # n and T
    assert problems(index) == {"unmatched_async_end": 1}


def test_other_phases_are_counted_not_fatal(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "N", "id": "0x1", "name": "obj", "pid": 1, "ts": 1},
        {"ph": "O", "id": "0x1", "name": "obj", "pid": 1, "ts": 2, "args": {"snapshot": {}}},
        {"ph": "D", "id": "0x1", "name": "obj", "pid": 1, "ts": 3},
        {"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 4, "sf": 7},
        {"ph": "Q", "name": "what", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "X", "name": "kept", "pid": 1, "tid": 1, "ts": 6, "dur": 1},
    ])
    index = load(path, batch)
    assert index.meta["phase_counts"] == {"D": 1, "N": 1, "O": 1, "P": 1, "Q": 1, "X": 1}
    assert [s[0] for s in slices(index)] == ["kept"]
    assert problems(index) == {"unknown_phase": 1}
    # The event of an unknown phase is kept where and when it happened, as an instant.
    a = index.arrays
    assert [(index.strings[a["instants.name"][i]], int(a["instants.ts"][i]))
            for i in range(len(a["instants.ts"]))] == [("what", 5000)]


def test_args_are_read_lazily(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
         "args": {"External id": 3, "shape": [[1, 2]], "ratio": 0.25}},
        {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
    ])
    index = load(path, batch)
    assert index.slice_args(0) == {"External id": 3, "shape": [[1, 2]], "ratio": 0.25}
    assert index.slice_args(1) is None
