"""A shared clock across the files of a profile: start_info offsets and Kineto base times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.discover.runs import SeveralRunsError
from proftui.core.load.indexing import index_file
from proftui.core.load.split import index_in_parts as _index_parallel
from proftui.core.source.streams import ByteSource

from helpers import columns_equal, problems, write_trace

# Wall µs and monotonic ns of the same instant, as in a real start_info.0.
BEGIN_US, RAW_NS = 1692340024324979, 56579931060630
OFFSET0 = BEGIN_US * 1000 - RAW_NS  # 1692283444393918370


def _device(root: Path, prof: str, device: int, events: list[dict],
            start_info: str | None) -> Path:
    """An old-layout PROF dir with one device: its timeline and, if given, start_info."""
    path = root / prof / f"device_{device}"
    (path / "timeline").mkdir(parents=True)
    write_trace(path / "timeline" / f"msprof_{device}_1_1.json", events, wrapper=False)
    if start_info is not None:
        (path / f"start_info.{device}").write_text(start_info)
    return path


def _info(begin_us: int, raw_ns: int) -> str:
    return json.dumps({"collectionDateBegin": "2023-08-18 14:27:04.324979",
                       "collectionTimeBegin": str(begin_us), "clockMonotonicRaw": str(raw_ns)})


def _by_name(index) -> dict[str, int]:
    a = index.arrays
    return {index.slice_name(i): int(a["slices.start"][i]) for i in range(index.n_slices)}


# Every kind of timestamp the index keeps: slices (X, B/E, async), instants, counters, flows.
def _events(tag: str, ts_us: float) -> list[dict]:
    return [
        {"ph": "X", "name": f"op{tag}", "pid": 3, "tid": 2, "ts": ts_us, "dur": 10.5},
        {"ph": "B", "name": f"be{tag}", "pid": 3, "tid": 5, "ts": ts_us + 1},
        {"ph": "E", "pid": 3, "tid": 5, "ts": ts_us + 2},
        {"ph": "b", "name": f"async{tag}", "cat": "c", "id": 1, "pid": 3, "ts": ts_us + 3},
        {"ph": "e", "name": f"async{tag}", "cat": "c", "id": 1, "pid": 3, "ts": ts_us + 4},
        {"ph": "i", "name": f"mark{tag}", "pid": 3, "tid": 2, "ts": ts_us + 5},
        {"ph": "C", "name": "freq", "pid": 3, "ts": ts_us + 6, "args": {"MHz": 1800}},
        {"ph": "s", "id": "d1", "name": "flow", "cat": "f", "pid": 3, "tid": 2, "ts": ts_us + 7},
        {"ph": "t", "id": "d1", "name": "flow", "cat": "f", "pid": 3, "tid": 2, "ts": ts_us + 8},
    ]


def test_old_layout_devices_meet_on_the_wall_clock(tmp_path) -> None:
    # Device 1's monotonic clock reads 5 s more than device 0's at the same wall instant.
    _device(tmp_path, "PROF_000001_20230818142704322_AAAA", 0,
            _events("0", 56635864652.490), _info(BEGIN_US, RAW_NS))
    _device(tmp_path, "PROF_000001_20230818142704322_BBBB", 1,
            _events("1", 56640864652.490), _info(BEGIN_US, RAW_NS + 5_000_000_000))
    index = load_trace(str(tmp_path), use_cache=False)
    starts = _by_name(index)
    wall = 56635864652490 + OFFSET0  # exact: the float text's ns plus the integer offset
    assert starts["op0"] == starts["op1"] == wall == 1692340080258570860
    assert starts["be0"] == starts["be1"] == wall + 1000
    assert starts["async0"] == starts["async1"] == wall + 3000
    a = index.arrays
    assert sorted(a["instants.ts"].tolist()) == [wall + 5000] * 2
    assert a["counters.sample_ts"].tolist() == [wall + 6000] * 2
    assert len(a["flows.src_slice"]) == 2
    sources = index.meta["sources"]
    assert [s["clock"] for s in sources] == ["monotonic -> wall via device_0/start_info.0",
                                             "monotonic -> wall via device_1/start_info.1"]
    assert [s["offset_ns"] for s in sources] == [OFFSET0, OFFSET0 - 5_000_000_000]
    assert problems(index) == {}
    assert index.start_ns == wall


@pytest.mark.parametrize("start_info,why", [
    (None, "device_1/start_info.1 is missing"),
    ("{not json", "device_1/start_info.1 is not valid JSON"),
    ('{"collectionTimeBegin": "soon", "clockMonotonicRaw": "1"}',
     "lacks integer collectionTimeBegin"),
    ('{"collectionTimeBegin": "1692", "clockMonotonicRaw": "1"}', "is not epoch µs"),
    # found by the fuzzer: an offset beyond int64 overflowed when the times were moved
    ('{"collectionTimeBegin": "1692283444393918", "clockMonotonicRaw": "99999999999999999999"}',
     "clockMonotonicRaw 99999999999999999999 is out of range"),
])
def test_a_device_without_a_usable_start_info_keeps_its_clock(tmp_path, start_info,
                                                              why) -> None:
    # One PROF dir, one capture: its devices are one run even on clocks of different kinds.
    _device(tmp_path, "PROF_A", 0, _events("0", 100.0), _info(BEGIN_US, RAW_NS))
    _device(tmp_path, "PROF_A", 1, _events("1", 100.0), start_info)
    index = load_trace(str(tmp_path), use_cache=False)
    starts = _by_name(index)
    assert starts["op1"] == 100_000  # its own clock, untouched
    assert starts["op0"] == 100_000 + OFFSET0
    assert index.diagnostics.count("clock_unaligned") == 1
    problem = next(p for p in index.diagnostics if p.kind == "clock_unaligned")
    assert why in problem.detail and problem.detail.startswith("msprof_1_1_1.json: ")
    assert index.meta["sources"][1]["clock"].startswith("own clock: ")


def test_prof_dirs_on_clocks_of_different_kinds_are_two_runs(tmp_path) -> None:
    _device(tmp_path, "PROF_A", 0, _events("0", 100.0), _info(BEGIN_US, RAW_NS))
    _device(tmp_path, "PROF_B", 1, _events("1", 100.0), None)
    with pytest.raises(SeveralRunsError, match=r"holds 2 separate runs \(clocks of different "
                                               r"kinds\)"):
        load_trace(str(tmp_path), use_cache=False)
    assert _by_name(load_trace(str(tmp_path), run=2, use_cache=False))["op1"] == 100_000


def test_a_lone_device_without_start_info_is_noted_not_counted(tmp_path) -> None:
    _device(tmp_path, "PROF_A", 0, _events("0", 100.0), None)
    index = load_trace(str(tmp_path), use_cache=False)
    assert _by_name(index)["op0"] == 100_000
    assert problems(index) == {}  # nothing to misalign with
    assert index.meta["sources"][0]["clock"] == (
        "own clock: device_0/start_info.0 is missing (monotonic clock kept)")


def test_a_start_info_garbled_for_a_lone_device_is_counted(tmp_path) -> None:
    _device(tmp_path, "PROF_A", 0, _events("0", 100.0), "[1, 2")
    index = load_trace(str(tmp_path), use_cache=False)
    assert _by_name(index)["op0"] == 100_000
    assert index.diagnostics.count("clock_unaligned") == 1


def test_an_old_layout_file_already_on_the_wall_clock_is_left_alone(tmp_path) -> None:
    # CANN 8 style string timestamps in an old-layout place: epoch µs already.
    events = [{"ph": "X", "name": "op0", "pid": 3, "tid": 2, "ts": "1692340080258570.860",
               "dur": 1}]
    _device(tmp_path, "PROF_A", 0, events, _info(BEGIN_US, RAW_NS))
    index = load_trace(str(tmp_path), use_cache=False)
    assert _by_name(index)["op0"] == 1692340080258570860
    assert index.meta["sources"][0]["offset_ns"] == 0
    assert "already wall clock" in index.meta["sources"][0]["clock"]


def _kineto(path: Path, base: object, events: list[dict]) -> Path:
    """A Kineto-like trace: top-level keys first, baseTimeNanoseconds before traceEvents."""
    head = {"schemaVersion": 1, "displayTimeUnit": "ms"}
    if base is not None:
        head["baseTimeNanoseconds"] = base
    text = json.dumps(head)[:-1] + ', "traceEvents": ' + json.dumps(events) + "}"
    path.write_text(text)
    return path


def test_kineto_workers_share_the_clock_of_their_base_times(tmp_path) -> None:
    # The same wall instant, written relative to two different base times.
    _kineto(tmp_path / "w0.pt.trace.json", 1743521598000000000,
            [{"ph": "X", "name": "step0", "pid": 1, "tid": 1, "ts": "2000.125", "dur": 1}])
    _kineto(tmp_path / "w1.pt.trace.json", 1743521598000500000,
            [{"ph": "X", "name": "step1", "pid": 1, "tid": 1, "ts": "1500.125", "dur": 1},
             {"ph": "C", "name": "mem", "pid": 1, "ts": 1500, "args": {"MB": 3}}])
    index = load_trace(str(tmp_path), use_cache=False)
    starts = _by_name(index)
    assert starts["step0"] == starts["step1"] == 1743521598002000125
    assert index.arrays["counters.sample_ts"].tolist() == [1743521598002000000]
    assert [s["clock"] for s in index.meta["sources"]] == [
        "relative -> wall via baseTimeNanoseconds"] * 2


def test_a_single_kineto_file_gets_its_base_time_too(tmp_path) -> None:
    path = _kineto(tmp_path / "t.pt.trace.json", 1000000000,
                   [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": 1}])
    index = load_trace(str(path), use_cache=False)
    assert _by_name(index) == {"a": 1_000_005_000}
    assert index.meta["sources"][0]["offset_ns"] == 1000000000


@pytest.mark.parametrize("base", ["soon", -5, 1.5e18, 2**64])
def test_a_garbled_base_time_is_reported_and_ignored(tmp_path, base) -> None:
    path = _kineto(tmp_path / "t.pt.trace.json", base,
                   [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": 1}])
    index = load_trace(str(path), use_cache=False)
    assert _by_name(index) == {"a": 5_000}
    assert index.diagnostics.count("clock_unaligned") == 1


def test_base_time_inside_an_event_is_not_the_trace_base(tmp_path) -> None:
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": 1,
               "args": {"baseTimeNanoseconds": 77}}]
    path = write_trace(tmp_path / "t.pt.trace.json", events)
    assert _by_name(load_trace(str(path), use_cache=False)) == {"a": 5_000}


def test_a_shift_beyond_int64_drops_the_event(tmp_path) -> None:
    base = 9_000_000_000_000_000_000
    path = _kineto(tmp_path / "t.pt.trace.json", base, [
        {"ph": "X", "name": "fits", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
        {"ph": "X", "name": "beyond", "pid": 1, "tid": 1, "ts": 900000000000000, "dur": 1},
        {"ph": "C", "name": "beyond", "pid": 1, "ts": 900000000000000, "args": {"v": 1}}])
    index = load_trace(str(path), use_cache=False)
    assert _by_name(index) == {"fits": base + 1000}
    assert index.diagnostics.count("bad_timestamp") == 2


def test_the_cache_follows_the_start_info(tmp_path, cache_dir) -> None:
    device = _device(tmp_path, "PROF_A", 0, _events("0", 100.0), _info(BEGIN_US, RAW_NS))
    first = load_trace(str(tmp_path))
    assert _by_name(first)["op0"] == 100_000 + OFFSET0
    assert load_trace(str(tmp_path)).meta["from_cache"] is True
    (device / "start_info.0").write_text(_info(BEGIN_US + 1, RAW_NS))
    moved = load_trace(str(tmp_path))
    assert "from_cache" not in moved.meta
    assert _by_name(moved)["op0"] == 100_000 + OFFSET0 + 1000


def test_both_halves_of_a_file_get_the_offset(tmp_path) -> None:
    events = [{"ph": "X", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5,
               "args": {"i": i}} for i in range(3000)]
    events += [{"ph": "C", "name": "mem", "pid": 1, "ts": 29995, "args": {"MB": 1}},
               {"ph": "b", "name": "r", "cat": "c", "id": 1, "pid": 1, "ts": 29996},
               {"ph": "e", "name": "r", "cat": "c", "id": 1, "pid": 1, "ts": 29997}]
    path = write_trace(tmp_path / "t.json", events)
    serial = index_file(ByteSource(str(path)), workers=1, batch_bytes=4096, offset_ns=OFFSET0)
    parallel = _index_parallel(ByteSource(str(path)), None, None, 4096, OFFSET0)
    assert parallel is not None and columns_equal(serial, parallel)
    assert int(parallel.col("slices.start").min()) == OFFSET0
    assert parallel.col("counters.sample_ts").tolist() == [29995000 + OFFSET0]
