"""The Chrome JSON importer, phase by phase and container by container, exact to the ns.

Every test runs at batch sizes down to one byte, so that the importer cuts the event array at
every event boundary (and tries every other place), and must give the same columns each time.
"""

from __future__ import annotations

import json

import pytest

from proftui.core import TraceIndex
from proftui.core.query.args import slice_args

from helpers import BATCH_SIZES, columns_equal, load, problems, slices, write_trace

pytestmark = pytest.mark.parametrize("batch", BATCH_SIZES)


def instants(index: TraceIndex) -> list[tuple[str, int, str, int]]:
    """(name, ts, track label, scope) per instant, in index order."""
    a = index.arrays
    return [(index.strings[a["instants.name"][i]], int(a["instants.ts"][i]),
             index.track_label(int(a["instants.track"][i])), int(a["instants.scope"][i]))
            for i in range(len(a["instants.ts"]))]


def counter_series(index: TraceIndex) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """{(pid, series name): [(ts, value), ...]}."""
    a = index.arrays
    out: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for i in range(len(a["counters.sample_ts"])):
        s = int(a["counters.sample_series"][i])
        key = (index.strings[a["tracks.pid"][a["counters.series_track"][s]]],
               index.strings[a["counters.series_name"][s]])
        out.setdefault(key, []).append((int(a["counters.sample_ts"][i]),
                                        float(a["counters.sample_value"][i])))
    return out


def flow_edges(index: TraceIndex) -> list[tuple[str, str, int, int]]:
    """(source slice, destination slice, src ts, dst ts) per flow edge, sorted."""
    a = index.arrays

    def name(i: int) -> str:
        return index.slice_name(i) if i >= 0 else "-"

    return sorted((name(int(s)), name(int(d)), int(st), int(dt)) for s, d, st, dt in zip(
        a["flows.src_slice"], a["flows.dst_slice"], a["flows.src_ts"], a["flows.dst_ts"]))


def tracks(index: TraceIndex) -> list[str]:
    return [index.track_label(t) for t in range(index.n_tracks)]


# -- containers --------------------------------------------------------------------------------

EVENTS = [
    {"ph": "X", "name": "step", "pid": 7, "tid": 1, "ts": 1.5, "dur": 10},
    {"ph": "X", "name": "op", "pid": 7, "tid": 1, "ts": 2, "dur": 2.25},
    {"ph": "X", "name": "kernel", "pid": 0, "tid": 3, "ts": "1780676244313289.000", "dur": 1},
]
EXPECTED = [
    ("kernel", 1780676244313289000, 1000, "Thread 3", 0),
    ("step", 1500, 10000, "Thread 1", 0),
    ("op", 2000, 2250, "Thread 1", 1),
]


def _body(events: list[dict]) -> str:
    return ",\n".join(json.dumps(e) for e in events)


@pytest.mark.parametrize("container", [
    "object", "object-compact", "array", "array-unclosed", "array-trailing-comma",
    "array-unclosed-trailing-comma", "paddle-sentinel", "object-sentinel-unclosed", "bom",
    "whitespace-around",
])
def test_containers_give_the_same_slices(tmp_path, batch, container) -> None:
    body = _body(EVENTS)
    raw = {
        "object": f'{{"schemaVersion": 1, "traceEvents": [{body}], "traceName": "t"}}',
        "object-compact": json.dumps({"traceEvents": EVENTS}, separators=(",", ":")),
        "array": f"[{body}]",
        "array-unclosed": f"[{body}",
        "array-trailing-comma": f"[{body},]",
        "array-unclosed-trailing-comma": f"[{body},\n",
        "paddle-sentinel": f'{{"schemaVersion": "1.0.0", "displayTimeUnit": "ms", '
                           f'"traceEvents": [{body},\n{{}}\n], "ExtraInfo": {{}}}}',
        "object-sentinel-unclosed": f'{{"traceEvents": [{body}, {{}}',
        "bom": f"\ufeff[{body}]",
        "whitespace-around": f"\n\t  [ {body} ]  \n\n",
    }[container].encode()
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    assert slices(index) == EXPECTED
    got = problems(index)
    if container == "object-sentinel-unclosed":
        assert set(got) <= {"truncated"}  # the object is never closed: may be reported
    else:
        assert got == {}
    assert index.meta["phase_counts"]["X"] == 3
    assert index.meta["format"] == ("object" if container.startswith(("object", "paddle"))
                                    else "array")


def test_gzip_and_plain_agree(tmp_path, batch) -> None:
    plain = load(write_trace(tmp_path / "t.json", EVENTS, displayTimeUnit="ns"), batch)
    packed = load(write_trace(tmp_path / "t.json.gz", EVENTS, gz=True,
                              displayTimeUnit="ns"), batch)
    # gzip is recognised by its magic bytes, not by the name
    odd = load(write_trace(tmp_path / "trace.bin", EVENTS, gz=True, displayTimeUnit="ns"),
               batch)
    assert slices(packed) == slices(odd) == EXPECTED
    assert columns_equal(plain, packed) and columns_equal(plain, odd)
    assert packed.meta["sources"][0]["compressed"] is True
    assert packed.meta["displayTimeUnit"] == "ns"


@pytest.mark.parametrize("where", ["before", "after"])
def test_display_time_unit_kept_but_times_stay_microseconds(tmp_path, batch, where) -> None:
    raw = (f'{{"displayTimeUnit": "ns", "traceEvents": [{_body(EVENTS)}]}}' if where == "before"
           else f'{{"traceEvents": [{_body(EVENTS)}], "displayTimeUnit": "ns", '
                f'"otherData": {{"a": [1, 2]}}}}')
    index = load(write_trace(tmp_path / "t.json", raw=raw.encode()), batch)
    assert index.meta["displayTimeUnit"] == "ns"
    assert index.display_time_unit == "ns"
    assert slices(index) == EXPECTED  # ts is µs whatever the display unit


def test_string_pids_and_tids(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "a", "pid": "12(C++)", "tid": "12(Python)", "ts": 1, "dur": 1},
        {"ph": "X", "name": "b", "pid": 5, "tid": "3004819264", "ts": 2, "dur": 1},
        {"ph": "X", "name": "c", "pid": "5", "tid": 3004819264, "ts": 3, "dur": 1},  # the same
        {"ph": "X", "name": "d", "pid": "Spans", "tid": "", "ts": 4, "dur": 1},
        {"ph": "X", "name": "e", "pid": "", "tid": "Traces", "ts": 5, "dur": 1},
        {"ph": "X", "name": "f", "pid": "007", "tid": 1, "ts": 6, "dur": 1},  # text, not 7
        {"ph": "X", "name": "g", "pid": 7, "tid": 1, "ts": 7, "dur": 1},
        {"ph": "M", "name": "process_name", "pid": "12(C++)", "args": {"name": "host"}},
    ])
    index = load(path, batch)
    a = index.arrays
    pids = [index.strings[a["tracks.pid"][t]] for t in range(index.n_tracks)]
    tids = [index.strings[a["tracks.tid"][t]] for t in range(index.n_tracks)]
    # numbers first (numerically, "007" after 7), then text
    assert list(zip(pids, tids)) == [("5", "3004819264"), ("7", "1"), ("007", "1"),
                                     ("", "Traces"), ("12(C++)", "12(Python)"), ("Spans", "")]
    assert [s[0] for s in slices(index)] == ["b", "c", "g", "f", "e", "a", "d"]
    assert [index.process_label(p) for p in range(len(a["processes.pid"]))] == [
        "Process 5", "Process 7", "Process 007", "(no pid)", "host (12(C++))", "Process Spans"]


# -- complete (X) events and time precision ----------------------------------------------------

def test_complete_events_exact_to_the_ns(tmp_path, batch) -> None:
    raw = b"""[
      {"ph": "X", "name": "us float", "pid": 1, "tid": 1, "ts": 1.5, "dur": 0.001},
      {"ph": "X", "name": "str ts", "pid": 1, "tid": 2, "ts": "1780676244313289.000", "dur": 3},
      {"ph": "X", "name": "str ns", "pid": 1, "tid": 2, "ts": "1780676244313289.007",
       "dur": "0.5"},
      {"ph": "X", "name": "kineto", "pid": 1, "tid": 3, "ts": 5836443391361.742, "dur": 12.5},
      {"ph": "X", "name": "int", "pid": 1, "tid": 3, "ts": 5836443391362, "dur": 0},
      {"ph": "X", "name": "exp", "pid": 1, "tid": 4, "ts": 1.5e3, "dur": 1e-3},
      {"ph": "X", "name": "tab", "pid": 1, "tid": 4, "ts": "2000.25\\t", "dur": 1}
    ]"""
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    assert slices(index) == [
        ("us float", 1500, 1, "Thread 1", 0),
        ("str ts", 1780676244313289000, 3000, "Thread 2", 0),
        ("str ns", 1780676244313289007, 500, "Thread 2", 1),
        ("kineto", 5836443391361742, 12500, "Thread 3", 0),
        ("int", 5836443391362000, 0, "Thread 3", 1),
        ("exp", 1500000, 1, "Thread 4", 0),
        ("tab", 2000250, 1000, "Thread 4", 0),
    ]
    assert index.col("slices.start").dtype.name == "int64"
    assert index.start_ns == 1500
    assert index.end_ns == 1780676244313292000
    assert problems(index) == {}


def test_events_out_of_order(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "late", "pid": 1, "tid": 1, "ts": 50, "dur": 5},
        {"ph": "X", "name": "child", "pid": 1, "tid": 1, "ts": 12, "dur": 3},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 40},
        {"ph": "X", "name": "parent", "pid": 1, "tid": 1, "ts": 10, "dur": 20},
        {"ph": "B", "name": "begin", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "i", "name": "tick", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "i", "name": "tock", "pid": 1, "tid": 1, "ts": 1},
    ])
    index = load(path, batch)
    assert slices(index) == [
        ("begin", 5000, 35000, "Thread 1", 0),
        ("parent", 10000, 20000, "Thread 1", 1),
        ("child", 12000, 3000, "Thread 1", 2),
        ("late", 50000, 5000, "Thread 1", 0),
    ]
    assert [i[:2] for i in instants(index)] == [("tock", 1000), ("tick", 3000)]
    assert problems(index) == {}


def test_complete_events_at_epoch_magnitude(tmp_path, batch) -> None:
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


# -- duration events (B/E) ---------------------------------------------------------------------

def test_begin_end_matched_per_track(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "E", "pid": 1, "tid": 1, "ts": 1},  # nothing open yet: dropped
        {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10, "cat": "py"},
        {"ph": "B", "name": "other thread", "pid": 1, "tid": 2, "ts": 11},
        {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 13},  # closes "other thread", not "inner"
        {"ph": "E", "name": "inner", "pid": 1, "tid": 1, "ts": 15},
        {"ph": "B", "name": "zero", "pid": 1, "tid": 1, "ts": 16},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 16},
        {"ph": "E", "name": "not outer", "pid": 1, "tid": 1, "ts": 20},  # pairs, counted
        {"ph": "E", "pid": 1, "tid": 1, "ts": 21},  # nothing open: dropped
        {"ph": "B", "name": "other process", "pid": 2, "tid": 1, "ts": 14},
        {"ph": "E", "pid": 2, "tid": 1, "ts": 18},
    ])
    index = load(path, batch)
    assert slices(index) == [
        ("outer", 10000, 10000, "Thread 1", 0),
        ("inner", 12000, 3000, "Thread 1", 1),
        ("zero", 16000, 0, "Thread 1", 1),
        ("other thread", 11000, 2000, "Thread 2", 0),
        ("other process", 14000, 4000, "Thread 1", 0),
    ]
    assert index.strings[index.col("slices.cat")[0]] == "py"
    assert problems(index) == {"unmatched_end": 2, "end_name_mismatch": 1}


def test_unclosed_begin_ends_at_its_tracks_last_timestamp(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "B", "name": "open", "pid": 1, "tid": 1, "ts": 10},
        {"ph": "B", "name": "open inner", "pid": 1, "tid": 1, "ts": 11},
        {"ph": "B", "name": "closed", "pid": 1, "tid": 1, "ts": 12},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 14},
        {"ph": "X", "name": "last x", "pid": 1, "tid": 1, "ts": 20, "dur": 7},  # ends at 27
        {"ph": "B", "name": "alone", "pid": 1, "tid": 2, "ts": 5},  # its track ends at 5
        {"ph": "X", "name": "elsewhere", "pid": 1, "tid": 3, "ts": 100, "dur": 1},
    ])
    index = load(path, batch)
    assert slices(index) == [
        ("open", 10000, 17000, "Thread 1", 0),
        ("open inner", 11000, 16000, "Thread 1", 1),
        ("closed", 12000, 2000, "Thread 1", 2),
        ("last x", 20000, 7000, "Thread 1", 2),
        ("alone", 5000, 0, "Thread 2", 0),
        ("elsewhere", 100000, 1000, "Thread 3", 0),
    ]
    assert problems(index) == {"unclosed_begin": 3}


def test_unmatched_end_and_unclosed_begin_on_two_tracks(tmp_path, batch) -> None:
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


# -- instants ----------------------------------------------------------------------------------

def test_instants_and_their_scopes(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "i", "name": "default", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "i", "name": "thread", "pid": 1, "tid": 2, "ts": 2, "s": "t"},
        {"ph": "I", "name": "legacy", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "i", "name": "process", "pid": 1, "tid": 1, "ts": 4, "s": "p"},
        {"ph": "i", "name": "other process", "pid": 2, "tid": 1, "ts": 5, "s": "p"},
        {"ph": "i", "name": "global", "pid": 2, "tid": 1, "ts": 6, "s": "g"},
        {"ph": "R", "name": "mark", "pid": 1, "tid": 1, "ts": "7.5"},
        {"ph": "i", "name": "bad scope", "pid": 1, "tid": 1, "ts": 8, "s": "x"},
        {"ph": "I", "name": "Record Window End", "pid": "", "tid": "", "ts": 9, "s": "g"},
    ])
    index = load(path, batch)
    assert instants(index) == [
        ("default", 1000, "Thread 1", 0),
        ("legacy", 3000, "Thread 1", 0),
        ("mark", 7500, "Thread 1", 0),
        ("bad scope", 8000, "Thread 1", 0),
        ("thread", 2000, "Thread 2", 0),
        ("process", 4000, "process-wide", 1),
        ("other process", 5000, "process-wide", 1),
        ("global", 6000, "global", 2),
        ("Record Window End", 9000, "global", 2),
    ]
    a = index.arrays
    assert [index.strings[a["tracks.pid"][a["instants.track"][i]]] for i in (5, 6)] == ["1", "2"]
    assert tracks(index)[-1] == "global"  # the global track comes last
    assert index.n_slices == 0 and problems(index) == {}


def test_legacy_and_mark_instants_take_their_scopes(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "i", "name": "thread", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "I", "name": "legacy", "pid": 1, "tid": 1, "ts": 2, "s": "t"},
        {"ph": "i", "name": "proc", "pid": 1, "tid": 1, "ts": 3, "s": "p"},
        {"ph": "R", "name": "mark", "pid": 1, "tid": 1, "ts": 4},
        {"ph": "i", "name": "everyone", "pid": 1, "tid": 1, "ts": 5, "s": "g"},
    ])
    index = load(path, batch)
    assert sorted(instants(index)) == [
        ("everyone", 5000, "global", 2), ("legacy", 2000, "Thread 1", 0),
        ("mark", 4000, "Thread 1", 0), ("proc", 3000, "process-wide", 1),
        ("thread", 1000, "Thread 1", 0)]


# -- counters ----------------------------------------------------------------------------------

def test_counters_one_series_per_name_and_key(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "C", "name": "memory", "pid": 1, "ts": 1, "args": {"alloc": 5, "reserved": 8.5}},
        {"ph": "C", "name": "memory", "pid": 1, "ts": 3, "args": {"alloc": 7}},
        {"ph": "C", "name": "memory", "pid": 1, "ts": 2, "args": {"reserved": 9, "note": "x"}},
        {"ph": "C", "name": "memory", "pid": 2, "ts": 1, "args": {"alloc": 1}},  # other process
        {"ph": "C", "name": "freq", "pid": 1, "ts": 1, "args": {"value": 1800}},
        # a series keeps its name when an event carries more keys
        {"ph": "C", "name": "freq", "pid": 1, "ts": 2, "args": {"value": 1900, "temp": 60}},
        {"ph": "C", "name": "queue", "id": 3, "pid": 1, "ts": "4.5", "args": {"depth": -2}},
        {"ph": "C", "name": "empty", "pid": 1, "ts": 1, "args": {}},
        {"ph": "C", "name": "texts", "pid": 1, "ts": 1, "args": {"a": "1", "b": True}},
        {"ph": "C", "name": "no ts", "pid": 1, "args": {"a": 1}},
    ])
    index = load(path, batch)
    assert counter_series(index) == {
        ("1", "memory alloc"): [(1000, 5.0), (3000, 7.0)],
        ("1", "memory reserved"): [(1000, 8.5), (2000, 9.0)],
        ("2", "memory alloc"): [(1000, 1.0)],
        ("1", "freq"): [(1000, 1800.0), (2000, 1900.0)],
        ("1", "freq temp"): [(2000, 60.0)],
        ("1", "queue[3] depth"): [(4500, -2.0)],
    }
    a = index.arrays
    assert len(a["counters.series_track"]) == 6
    assert {index.track_label(int(t)) for t in a["counters.series_track"]} == {"process-wide"}
    assert problems(index) == {"bad_counter": 2, "bad_timestamp": 1}


def test_counters_with_an_id_and_a_text_value(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "C", "name": "mem", "pid": 1, "ts": 1, "args": {"alloc": 5, "reserved": 8.5}},
        {"ph": "C", "name": "mem", "pid": 1, "ts": 2, "args": {"alloc": 6, "reserved": 9}},
        {"ph": "C", "name": "freq", "pid": 1, "ts": 1, "args": {"value": 1800}},
        {"ph": "C", "name": "q", "id": 3, "pid": 2, "ts": 1, "args": {"depth": 4}},
        {"ph": "C", "name": "bad", "pid": 1, "ts": 1, "args": {"text": "x"}},
    ])
    index = load(path, batch)
    assert counter_series(index) == {("1", "mem alloc"): [(1000, 5.0), (2000, 6.0)],
                                     ("1", "mem reserved"): [(1000, 8.5), (2000, 9.0)],
                                     ("1", "freq"): [(1000, 1800.0)],
                                     ("2", "q[3] depth"): [(1000, 4.0)]}
    assert problems(index) == {"bad_counter": 1}


# -- metadata ----------------------------------------------------------------------------------

def test_metadata_names_and_orders_tracks(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "a", "pid": 10, "tid": 1, "ts": 1, "dur": 1},
        {"ph": "X", "name": "b", "pid": 10, "tid": 2, "ts": 1, "dur": 1},
        {"ph": "X", "name": "c", "pid": 10, "tid": 3, "ts": 1, "dur": 1},
        {"ph": "X", "name": "d", "pid": 20, "tid": 1, "ts": 1, "dur": 1},
        {"ph": "X", "name": "e", "pid": 30, "tid": 1, "ts": 1, "dur": 1},
        # all metadata after the events, as Kineto and msprof write it
        {"ph": "M", "name": "process_name", "pid": 10, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": 10, "args": {"labels": "rank 0"}},
        {"ph": "M", "name": "process_sort_index", "pid": 30, "args": {"sort_index": -1}},
        {"ph": "M", "name": "process_name", "pid": 30, "args": {"name": "GPU 0"}},
        {"ph": "M", "name": "process_sort_index", "pid": 20, "args": {"sort_index": "5"}},
        {"ph": "M", "name": "thread_name", "pid": 10, "tid": 1, "args": {"name": "main"}},
        {"ph": "M", "name": "thread_name", "pid": 10, "tid": 3, "args": {"name": "loader"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 10, "tid": 3, "args": {"sort_index": -2}},
        {"ph": "M", "name": "thread_sort_index", "pid": 10, "tid": 2, "args": {"sort_index": 9}},
        # a named thread without events still gets its (empty) track
        {"ph": "M", "name": "thread_name", "pid": "20", "tid": "4", "args": {"name": "idle"}},
        {"ph": "M", "name": "num_cpus", "pid": 10, "args": {"number": 8}},  # counted only
        {"ph": "M", "name": "thread_name", "pid": 10, "tid": 5, "args": "oops"},
        {"ph": "M", "name": "process_sort_index", "pid": 10, "args": {"sort_index": "x"}},
    ])
    index = load(path, batch)
    a = index.arrays
    assert [index.process_label(p) for p in range(len(a["processes.pid"]))] == [
        "GPU 0 (30)", "python (10) [rank 0]", "Process 20"]
    assert a["processes.sort_index"].tolist() == [-1, 0, 5]
    assert tracks(index) == ["Thread 1", "loader (3)", "main (1)", "Thread 2", "Thread 1",
                             "idle (4)"]
    assert a["tracks.sort_index"].tolist() == [0, -2, 0, 9, 0, 0]
    assert a["tracks.process"].tolist() == [0, 1, 1, 1, 2, 2]
    assert a["tracks.slice_count"].tolist() == [1, 1, 1, 1, 1, 0]
    assert [s[0] for s in slices(index)] == ["e", "c", "a", "b", "d"]
    assert index.meta["phase_counts"] == {"M": 13, "X": 5}
    assert problems(index) == {"bad_metadata": 2}


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


# -- flows -------------------------------------------------------------------------------------

def test_flows_bind_to_slices(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "launch", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
        {"ph": "X", "name": "launch child", "pid": 1, "tid": 1, "ts": 12, "dur": 2},
        {"ph": "X", "name": "kernel", "pid": 2, "tid": 7, "ts": 30, "dur": 5},
        {"ph": "X", "name": "kernel child", "pid": 2, "tid": 7, "ts": 31, "dur": 1},
        {"ph": "X", "name": "after", "pid": 2, "tid": 7, "ts": 40, "dur": 5},
        # s binds to the deepest slice enclosing it; f with bp "e" too
        {"ph": "s", "id": 1, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 1, "ts": 13},
        {"ph": "f", "id": 1, "cat": "ac2g", "name": "ac2g", "pid": 2, "tid": 7, "ts": 33,
         "bp": "e"},
        # f without bp binds to the next slice beginning at or after it, not the enclosing
        {"ph": "s", "id": 2, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 19},
        {"ph": "f", "id": 2, "cat": "c", "name": "n", "pid": 2, "tid": 7, "ts": 33},
        # s, t, f chain into two edges
        {"ph": "s", "id": "x", "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 11},
        {"ph": "t", "id": "x", "cat": "c", "name": "n", "pid": 2, "tid": 7, "ts": 31.5},
        {"ph": "f", "id": "x", "cat": "c", "name": "n", "pid": 2, "tid": 7, "ts": 40,
         "bp": "e"},
    ])
    index = load(path, batch)
    assert flow_edges(index) == [
        ("kernel child", "after", 31500, 40000),
        ("launch", "after", 19000, 33000),
        ("launch", "kernel child", 11000, 31500),
        ("launch child", "kernel", 13000, 33000),
    ]
    assert problems(index) == {}


def test_flow_ids_beyond_2_53_are_exact(tmp_path, batch) -> None:
    big = 2**53 + 1  # a float64 would make it 2**53, the id of another flow
    raw = ("[" + ",\n".join([
        '{"ph": "X", "name": "host", "pid": 1, "tid": 1, "ts": 0, "dur": 100}',
        '{"ph": "X", "name": "dev a", "pid": 2, "tid": 1, "ts": 10, "dur": 10}',
        '{"ph": "X", "name": "dev b", "pid": 2, "tid": 2, "ts": 10, "dur": 10}',
        '{"ph": "X", "name": "dev c", "pid": 2, "tid": 3, "ts": 10, "dur": 10}',
        f'{{"ph": "s", "id": {big}, "cat": "async_npu", "name": "torch_to_npu", "pid": 1, '
        f'"tid": 1, "ts": 1}}',
        f'{{"ph": "f", "id": {big}, "cat": "async_npu", "name": "torch_to_npu", "pid": 2, '
        f'"tid": 1, "ts": 11, "bp": "e"}}',
        f'{{"ph": "s", "id": {big - 1}, "cat": "async_npu", "name": "torch_to_npu", "pid": 1, '
        f'"tid": 1, "ts": 2}}',
        f'{{"ph": "f", "id": {big - 1}, "cat": "async_npu", "name": "torch_to_npu", "pid": 2, '
        f'"tid": 2, "ts": 12, "bp": "e"}}',
        # beyond int64: kept as its exact text
        '{"ph": "s", "id": 18446744073709551621, "cat": "c", "name": "n", "pid": 1, "tid": 1,'
        ' "ts": 3}',
        '{"ph": "f", "id": 18446744073709551621, "cat": "c", "name": "n", "pid": 2, "tid": 3,'
        ' "ts": 13, "bp": "e"}',
    ]) + "]").encode()
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    assert flow_edges(index) == [("host", "dev a", 1000, 11000), ("host", "dev b", 2000, 12000),
                                 ("host", "dev c", 3000, 13000)]
    a = index.arrays
    ids = sorted(int(a["flows.flow_id_num"][f]) or int(index.strings[a["flows.flow_id_str"][f]])
                 for f in range(len(a["flows.flow_id_num"])))
    assert ids == [big - 1, big, 18446744073709551621]
    assert problems(index) == {}


def test_flow_ids_keyed_the_same_in_every_batch(tmp_path, batch) -> None:
    """An id's key must not depend on the other ids of its batch (ints next to objects,
    negative numbers next to text, digit strings next to integers)."""
    events = [
        {"ph": "X", "name": "src", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "name": "dst", "pid": 1, "tid": 2, "ts": 20, "dur": 10},
        {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 1},
        {"ph": "s", "id": {"local": "0x1"}, "pid": 1, "tid": 1, "ts": 2},
        {"ph": "f", "id": 5, "pid": 1, "tid": 2, "ts": 21, "bp": "e"},
        {"ph": "f", "id": {"local": "0x1"}, "pid": 1, "tid": 2, "ts": 22, "bp": "e"},
        {"ph": "s", "id": -3, "pid": 1, "tid": 1, "ts": 3},
        {"ph": "s", "id": "q", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "f", "id": -3, "pid": 1, "tid": 2, "ts": 23, "bp": "e"},
        {"ph": "s", "id": "77", "pid": 1, "tid": 1, "ts": 4},
        {"ph": "s", "id": "\u00b2", "pid": 1, "tid": 1, "ts": 4},  # a digit int() refuses
        {"ph": "f", "id": 77, "pid": 1, "tid": 2, "ts": 24, "bp": "e"},
        {"ph": "f", "id": "\u00b2", "pid": 1, "tid": 2, "ts": 24, "bp": "e"},
    ]
    raw = json.dumps(events, separators=(",", ":")).encode()  # small: several per batch
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    assert flow_edges(index) == [
        ("src", "dst", 1000, 21000), ("src", "dst", 2000, 22000), ("src", "dst", 3000, 23000),
        ("src", "dst", 4000, 24000), ("src", "dst", 4000, 24000)]
    assert problems(index) == {"flow_orphan": 1}  # "q"


def test_flows_stay_within_their_rank(tmp_path, batch) -> None:
    """Two ranks reuse one connection id (torch_npu counts them per process): each rank's
    launch links to its own task, never to the other rank's."""
    for rank, (host_ts, task_ts) in enumerate(((0, 20), (5, 40))):
        out = tmp_path / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
        write_trace(out / "trace_view.json", [
            {"ph": "X", "name": f"launch {rank}", "pid": 1, "tid": 1, "ts": host_ts, "dur": 10},
            {"ph": "X", "name": f"task {rank}", "pid": 2, "tid": 2, "ts": task_ts, "dur": 10},
            {"ph": "s", "id": "7", "cat": "HostToDevice", "name": "HostToDevice7", "pid": 1,
             "tid": 1, "ts": host_ts + 1},
            {"ph": "f", "id": "7", "cat": "HostToDevice", "name": "HostToDevice7", "pid": 2,
             "tid": 2, "ts": task_ts, "bp": "e"}], wrapper=False)
    index = load(tmp_path, batch)
    assert flow_edges(index) == [("launch 0", "task 0", 1000, 20000),
                                 ("launch 1", "task 1", 6000, 40000)]
    assert problems(index) == {}


def test_flow_imbalance_is_counted(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "s", "id": 1, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 1},  # orphan
        {"ph": "f", "id": 2, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 2, "bp": "e"},
        {"ph": "f", "id": 2, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 3, "bp": "e"},
        {"ph": "s", "id": 3, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 50},
        {"ph": "f", "id": 3, "cat": "c", "name": "n", "pid": 1, "tid": 9, "ts": 51},
    ])
    index = load(path, batch)
    # the s at 50 encloses nothing and its f has no slice after it: an edge between nothing
    assert flow_edges(index) == [("-", "-", 50000, 51000), ("a", "a", 2000, 3000)]
    assert problems(index) == {"flow_orphan": 1, "flow_unbound": 2}


def test_flow_chain_and_a_torch_npu_id_bind_to_slices(tmp_path, batch) -> None:
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
    # s binds to the deepest enclosing slice; f without bp to the next slice that begins.
    assert [edge[:2] for edge in flow_edges(index)] == [
        ("child", "kernel"), ("kernel", "next"), ("launch", "kernel")]
    assert big in index.col("flows.flow_id_num").tolist()
    assert problems(index) == {"flow_orphan": 1}


# -- async -------------------------------------------------------------------------------------

def test_nestable_async(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "b", "cat": "io", "id": "0x1", "name": "request", "pid": 1, "tid": 1, "ts": 10,
         "args": {"url": "/a"}},
        {"ph": "b", "cat": "io", "id": "0x1", "name": "read", "pid": 1, "tid": 2, "ts": 12},
        {"ph": "n", "cat": "io", "id": "0x1", "name": "progress", "pid": 1, "tid": 1, "ts": 13},
        {"ph": "e", "cat": "io", "id": "0x1", "name": "read", "pid": 1, "tid": 3, "ts": 14},
        {"ph": "e", "cat": "io", "id": "0x1", "name": "request", "pid": 1, "tid": 1, "ts": 20},
        # another id overlapping in time: its own lane, never nested under the first
        {"ph": "b", "cat": "io", "id2": {"local": "0x2"}, "name": "request", "pid": 1,
         "ts": 11},
        {"ph": "e", "cat": "io", "id2": {"local": "0x2"}, "name": "request", "pid": 1,
         "ts": 19},
        # a later id reuses the first lane
        {"ph": "b", "cat": "io", "id": 3, "name": "request", "pid": 1, "ts": 30},
        {"ph": "e", "cat": "io", "id": 3, "pid": 1, "ts": 31},  # e may omit the name
        {"ph": "e", "cat": "io", "id": "0x9", "name": "lost", "pid": 1, "ts": 5},
        {"ph": "b", "cat": "net", "id": 1, "name": "never ends", "pid": 1, "ts": 15},
    ])
    index = load(path, batch)
    assert slices(index) == [
        ("request", 10000, 10000, "io (async)", 0),
        ("read", 12000, 2000, "io (async)", 1),
        ("request", 30000, 1000, "io (async)", 0),
        ("request", 11000, 8000, "io #2 (async)", 0),
        ("never ends", 15000, 16000, "net (async)", 0),  # to the trace's end (31 µs)
    ]
    assert instants(index) == [("progress", 13000, "io (async)", 0)]
    assert slice_args(index, 0) == {"url": "/a"}
    assert problems(index) == {"unmatched_async_end": 1, "unclosed_async": 1}


def test_legacy_async(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "S", "cat": "load", "id": 5, "name": "fetch", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "T", "cat": "load", "id": 5, "name": "fetch", "pid": 1, "tid": 1, "ts": 3,
         "args": {"step": "headers"}},
        {"ph": "p", "cat": "load", "id": 5, "name": "fetch", "pid": 1, "tid": 1, "ts": 4},
        {"ph": "F", "cat": "load", "id": 5, "name": "fetch", "pid": 3, "tid": 1, "ts": 6},
        {"ph": "F", "cat": "load", "id": 6, "name": "fetch", "pid": 1, "tid": 1, "ts": 7},
        {"ph": "S", "cat": "load", "id": 5, "name": "other name", "pid": 1, "tid": 1, "ts": 8},
        {"ph": "F", "cat": "load", "id": 5, "name": "other name", "pid": 1, "tid": 1,
         "ts": 9.5},
    ])
    index = load(path, batch)
    assert slices(index) == [("fetch", 2000, 4000, "load (async)", 0),
                             ("other name", 8000, 1500, "load (async)", 0)]
    assert [i[:3] for i in instants(index)] == [("fetch", 3000, "load (async)"),
                                                ("fetch", 4000, "load (async)")]
    assert problems(index) == {"unmatched_async_end": 1}


def test_nestable_and_legacy_async_in_one_trace(tmp_path, batch) -> None:
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


# -- other and unknown phases ------------------------------------------------------------------

def test_other_phases_counted_unknown_ones_reported(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "N", "id": "0x1", "name": "obj", "pid": 1, "ts": 1},
        {"ph": "O", "id": "0x1", "name": "obj", "pid": 1, "ts": 2, "args": {"snapshot": {}}},
        {"ph": "O", "id": "0x1", "name": "obj", "pid": 1, "ts": 3, "args": {"snapshot": {}}},
        {"ph": "D", "id": "0x1", "name": "obj", "pid": 1, "ts": 4},
        {"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 5, "sf": 7},
        {"ph": "v", "name": "dump", "pid": 1, "ts": 6, "args": {"dumps": {}}},
        {"ph": "c", "name": "clock_sync", "pid": 1, "ts": 6, "args": {"sync_id": "a"}},
        {"ph": "Q", "name": "what", "pid": 1, "tid": 1, "ts": 7},
        {"ph": "XX", "name": "what", "pid": 1, "tid": 1, "ts": 7},
        {"ph": 5, "name": "number", "pid": 1, "tid": 1, "ts": 7},
        {"name": "no phase", "pid": 1, "tid": 1, "ts": 8},
        {"ph": "X", "name": "kept", "pid": 1, "tid": 1, "ts": 9, "dur": 1},
    ])
    index = load(path, batch)
    assert index.meta["phase_counts"] == {
        "O": 2, "": 1, "5": 1, "D": 1, "N": 1, "P": 1, "Q": 1, "X": 1, "XX": 1, "c": 1, "v": 1}
    assert slices(index) == [("kept", 9000, 1000, "Thread 1", 0)]
    assert problems(index) == {"unknown_phase": 3, "missing_phase": 1}


def test_an_unknown_phase_is_kept_as_an_instant(tmp_path, batch) -> None:
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
    assert [i[:2] for i in instants(index)] == [("what", 5000)]


# -- args --------------------------------------------------------------------------------------

@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_args_read_lazily(tmp_path, batch, gz) -> None:
    events = [
        {"ph": "X", "name": "kernel", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
         "args": {"External id": 3, "grid": [1, 2, 3], "occupancy": 0.25,
                  "name": "void gemm<float, 128>(\"x\")\r\n", "big": 2**60}},
        {"ph": "X", "name": "no args", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
        {"ph": "B", "name": "begin", "pid": 1, "tid": 2, "ts": 1, "args": {"side": "B"}},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 2, "args": {"side": "E"}},
        {"ph": "X", "name": "stripped", "pid": 1, "tid": 1, "ts": 7, "dur": 1,
         "args": "__stripped__"},
    ]
    index = load(write_trace(tmp_path / ("t.json.gz" if gz else "t.json"), events, gz=gz),
                 batch)
    by_name = {index.slice_name(i): slice_args(index, i) for i in range(index.n_slices)}
    assert by_name == {
        "kernel": {"External id": 3, "grid": [1, 2, 3], "occupancy": 0.25,
                   "name": "void gemm<float, 128>(\"x\")\r\n", "big": 2**60},
        "no args": None,
        "begin": {"side": "B"},  # a B/E slice shows its B's args
        "stripped": "__stripped__",
    }


@pytest.mark.parametrize("nan", [False, True], ids=["valid", "with-nan"])
def test_boundaries_inside_strings_and_nested_args(tmp_path, batch, nan) -> None:
    """`},{` inside strings (JSON text in args) and lists of objects are no event boundaries,
    also where a batch does not decode as a whole (NaN, accepted by the lenient path)."""
    text = json.dumps([{"shape": [i]} for i in range(12)], separators=(",", ":"))
    events = [{"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": 10 * i, "dur": 1,
               "args": {"json": text, "objects": [{"i": j} for j in range(8)],
                        "escapes": 'a\\"},{"\\', "v": 1}}
              for i in range(6)]
    raw = json.dumps(events).encode()
    if nan:
        raw = raw.replace(b'"v": 1', b'"v": NaN')
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch)
    assert slices(index) == [(f"e{i}", 10000 * i, 1000, "Thread 1", 0) for i in range(6)]
    assert problems(index) == {}
    expected = dict(events[3]["args"], v=None if nan else 1)
    assert slice_args(index, 3) == expected


def test_nested_list_args_read_lazily(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
         "args": {"External id": 3, "shape": [[1, 2]], "ratio": 0.25}},
        {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
    ])
    index = load(path, batch)
    assert slice_args(index, 0) == {"External id": 3, "shape": [[1, 2]], "ratio": 0.25}
    assert slice_args(index, 1) is None


# -- the same index whatever the batch size ----------------------------------------------------

MIXED = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}},
    {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": "100.125", "dur": 50, "cname": "good"},
    {"ph": "B", "name": "fwd", "pid": 1, "tid": 1, "ts": 101},
    {"ph": "X", "name": "op,{\"x\"}", "pid": 1, "tid": 1, "ts": 102, "dur": 3,
     "args": {"s": "},{"}},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 110},
    {"ph": "X", "name": "lane", "pid": 1, "tid": 1, "ts": 140, "dur": 30},  # overflows step
    {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 105, "s": "p"},
    {"ph": "C", "name": "mem", "pid": 1, "ts": 104, "args": {"a": 1, "b": 2.5}},
    {"ph": "s", "id": 9007199254740993, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 1,
     "ts": 103},
    {"ph": "X", "name": "kernel", "pid": 2, "tid": 7, "ts": 120, "dur": 4, "cname": "bad"},
    {"ph": "f", "id": 9007199254740993, "cat": "ac2g", "name": "ac2g", "pid": 2, "tid": 7,
     "ts": 121, "bp": "e"},
    {"ph": "b", "cat": "io", "id": 1, "name": "req", "pid": 1, "ts": 100},
    {"ph": "e", "cat": "io", "id": 1, "name": "req", "pid": 1, "ts": 160},
    {"ph": "X", "name": "bad", "pid": 1, "tid": 1, "ts": "NaN here", "dur": 1},
    {"ph": "M", "name": "thread_name", "pid": 2, "tid": 7, "args": {"name": "stream 7"}},
    {},
]


def test_identical_columns_at_every_batch_size(tmp_path, batch) -> None:
    raw = json.dumps({"traceEvents": MIXED}).replace('"NaN here"', "NaN").encode()
    path = write_trace(tmp_path / "t.json", raw=raw)
    reference = load(path, 1 << 30)
    index = load(path, batch)
    assert columns_equal(index, reference)
    assert [slice_args(index, i) for i in range(index.n_slices)] == [
        slice_args(reference, i) for i in range(reference.n_slices)]
    assert slices(index) == [
        ("step", 100125, 50000, "Thread 1", 0),
        ("fwd", 101000, 9000, "Thread 1", 1),
        ("op,{\"x\"}", 102000, 3000, "Thread 1", 2),
        ("lane", 140000, 30000, "Thread 1", 3),
        ("req", 100000, 60000, "io (async)", 0),
        ("kernel", 120000, 4000, "stream 7", 0),  # the name shows the tid already
    ]
    assert flow_edges(index) == [("op,{\"x\"}", "kernel", 103000, 121000)]
    assert problems(index) == {"bad_timestamp": 1}
    assert index.meta["empty_events"] == 1


@pytest.mark.parametrize("lenient", [False, True])
def test_times_with_digits_below_the_ns_are_exact(tmp_path, batch, lenient) -> None:
    """ts and dur, as JSON numbers or strings, however many decimals: rounded from their text
    (half away from zero), not through a float; the same where a NaN in the batch sends it
    down the lenient decoder (its durations went through float: 1.0005 us was 1000 ns)."""
    events = [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1.0005, "dur": 0.0005},
        {"ph": "X", "name": "b", "pid": 1, "tid": 2, "ts": "2.0004999", "dur": "1.23456789"},
        {"ph": "X", "name": "c", "pid": 1, "tid": 3, "ts": 3, "dur": 0.0025},
        {"ph": "X", "name": "d", "pid": 1, "tid": 4, "ts": 4, "dur": 2.9999999},
        {"ph": "X", "name": "e", "pid": 1, "tid": 5, "ts": 5.25, "dur": 12.345},
        {"ph": "X", "name": "f", "pid": 1, "tid": 6, "ts": "1700000000000000.1234567",
         "dur": "1.0005"},
        {"ph": "X", "name": "g", "pid": 1, "tid": 7, "ts": "7.0015", "dur": 1.0005},
        {"ph": "X", "name": "h", "pid": 1, "tid": 8, "ts": 8, "dur": 1.00049999999999999999},
        {"ph": "X", "name": "i", "pid": 1, "tid": 9, "ts": 9, "dur": "0.0025"},
    ]
    if lenient:
        events.append({"ph": "X", "name": "bad", "pid": 1, "tid": 10, "ts": "NaN here", "dur": 1})
    raw = json.dumps({"traceEvents": events}).replace('"NaN here"', "NaN").encode()
    # Numbers no float64 holds, written as JSON text.
    raw = raw.replace(b'"ts": 3,', b'"ts": 1700000000000000.1234567,')
    raw = raw.replace(b'"ts": 8, "dur": 1.0005', b'"ts": 8, "dur": 1.00049999999999999999')
    assert raw.count(b"1.00049999999999999999") == 1
    index = load(write_trace(tmp_path / "t.json", raw=raw), batch_bytes=batch)
    got = {index.slice_name(i): (int(index.col("slices.start")[i]),
                                 int(index.col("slices.dur")[i]))
           for i in range(index.n_slices)}
    assert got == {"a": (1001, 1), "b": (2000, 1235), "c": (1700000000000000123, 3),
                   "d": (4000, 3000), "e": (5250, 12345), "f": (1700000000000000123, 1001),
                   "g": (7002, 1001), "h": (8000, 1000), "i": (9000, 3)}
    assert problems(index) == ({"bad_timestamp": 1} if lenient else {})
