"""Memory: the text export's memory CSVs and PyTorch's [memory] events as counter series (named
as the SQLite export's), and core.analysis.memory's peaks, ops at the peak and top allocators,
all on inline inputs with hand-computed values."""

from __future__ import annotations

import json

import ascend_db_helpers as dbh
import pytest
from memory_helpers import MB, PID, T, series, write_text_rank

from proftui.core import load_trace
from proftui.core.analysis.memory import memory, memory_series, series_peak
from proftui.core.analysis.overview import read_overview
from proftui.core.build.builder import TraceBuilder
from proftui.core.load.memory_csv import add_memory_csvs
from proftui.core.model.diagnostics import Diagnostics

from helpers import BATCH_SIZES, load, problems, write_trace

US = 1000


def _report(path, lo=None, hi=None):
    index = load_trace(str(path), use_cache=False)
    _, tables, _ = read_overview(index)
    return index, memory(index, tables, lo, hi)


# -- text CSVs as counters -----------------------------------------------------------------------


def test_memory_csvs_become_series_per_component(tmp_path) -> None:
    run = write_text_rank(tmp_path)
    index = load_trace(str(run), use_cache=False)
    found = series(index)
    memory_keys = sorted(k[2] for k in found if k[1] == "Memory")
    # no APP (NPU MEM shows it), no GE Total Active (empty cells)
    assert memory_keys == ["GE Total Allocated(MB)", "GE Total Reserved(MB)",
                           "PTA Total Active(MB)", "PTA Total Allocated(MB)",
                           "PTA Total Reserved(MB)"]
    assert found[("", "Memory", "PTA Total Allocated(MB)")] == [
        (T + 100 * US, 1.0), (T + 200_500, 3.5), (T + 300 * US, 2.0)]
    assert found[("", "Memory", "GE Total Reserved(MB)")] == [(T + 150 * US, 1.0)]
    # SLOG reserves nothing: no series
    assert [k[2] for k in found if k[1] == "NPU Module Memory"] == ["HCCL Total Reserved(MB)"]
    assert found[("", "NPU Module Memory", "HCCL Total Reserved(MB)")] == [
        (T + 100 * US, 404.0625), (T + 300 * US, 404.0625)]
    a, s = index.arrays, index.strings
    procs = {s[n]: (s[p], s[lab]) for n, p, lab in zip(a["processes.name"], a["processes.pid"],
                                                        a["processes.labels"])}
    # packed from the Python process' pid as torch_npu packs its own: pid << 10 | sort << 5
    assert procs["Memory"] == (str((PID << 10) | (24 << 5)), "CPU")
    assert procs["NPU Module Memory"] == (str((PID << 10) | (25 << 5)), "NPU")
    assert "bad_counter" not in problems(index)  # empty cells are no problem


def test_kb_columns_of_msprof_are_converted(tmp_path) -> None:
    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    write_trace(out / "trace_view.json", [{"ph": "X", "name": "a", "ts": 1, "dur": 1,
                                           "pid": 1, "tid": 1}], wrapper=False)
    (out / "memory_record.csv").write_text(
        "Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device\n"
        "GE,1700000000000001.5,2048,4096,0\n")
    found = series(load_trace(str(out.parent), use_cache=False))
    assert found[("", "Memory", "GE Total Allocated(MB)")] == [(1_700_000_000_000_001_500, 2.0)]
    assert found[("", "Memory", "GE Total Reserved(MB)")] == [(1_700_000_000_000_001_500, 4.0)]


def test_text_and_db_exports_give_the_same_series(tmp_path) -> None:
    """The db helper's MEMORY_RECORD row (PTA: 1 MB allocated, 2 reserved, 1 active at
    T + 300 ns) and NPU_MODULE_MEM row (HCCL 1 MB), written as the text export writes them."""
    dbh.write_rank(tmp_path / "db")
    text = tmp_path / "text" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    text.mkdir(parents=True)
    write_trace(text / "trace_view.json", [{"ph": "X", "name": "a", "ts": "1", "dur": 1,
                                            "pid": 1, "tid": 1}], wrapper=False)
    stamp = f"{dbh.T // 1000}.{dbh.T % 1000 + 300:03d}\t"
    (text / "memory_record.csv").write_text(
        "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
        f"Stream Ptr,Device Type\nPTA,{stamp},1.0,2.0,1.0,1,NPU:0\n")
    (text / "npu_module_mem.csv").write_text(
        f"Component,Timestamp(us),Total Reserved(MB),Device\nHCCL,{stamp},1.0,NPU:0\n")

    def memory_of(path):
        return {k[1:]: v for k, v in series(load_trace(str(path), use_cache=False)).items()
                if k[1] in ("Memory", "NPU Module Memory")}

    from_db, from_text = memory_of(tmp_path / "db"), memory_of(tmp_path / "text")
    assert from_db == from_text == {
        ("Memory", "PTA Total Allocated(MB)"): [(dbh.T + 300, 1.0)],
        ("Memory", "PTA Total Reserved(MB)"): [(dbh.T + 300, 2.0)],
        ("Memory", "PTA Total Active(MB)"): [(dbh.T + 300, 1.0)],
        ("NPU Module Memory", "HCCL Total Reserved(MB)"): [(dbh.T + 300, 1.0)]}


def test_db_export_beside_its_csvs_gives_the_series_once(tmp_path) -> None:
    """A rank read from its SQLite export keeps its own MEMORY_RECORD series; memory CSVs
    beside it do not add a second set."""
    db = dbh.write_rank(tmp_path)
    write_text_rank(tmp_path / "other")  # only to borrow its CSV
    csv = tmp_path / "other" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    (db.parent / "memory_record.csv").write_bytes(csv.read_bytes())
    found = series(load_trace(str(tmp_path / "rank0_ascend_pt"), use_cache=False))
    assert sorted(k[2] for k in found if k[1] == "Memory") == [
        "PTA Total Active(MB)", "PTA Total Allocated(MB)", "PTA Total Reserved(MB)"]


def test_memory_csv_that_is_not_one_or_cannot_be_read(tmp_path) -> None:
    run = write_text_rank(tmp_path)
    (run / "ASCEND_PROFILER_OUTPUT" / "npu_module_mem.csv").write_bytes(b"Comp\x00onent\n")
    index = load_trace(str(run), use_cache=False)
    found = series(index)
    assert ("", "Memory", "PTA Total Allocated(MB)") in found  # the rest loads
    assert not [k for k in found if k[1] == "NPU Module Memory"]
    diagnostics = Diagnostics()  # one gone between discovery and reading: counted
    add_memory_csvs(TraceBuilder(diagnostics), [str(tmp_path / "gone.csv")], diagnostics)
    assert [(p.kind, p.count) for p in diagnostics] == [("unreadable_file", 1)]


def test_changed_memory_csv_is_read_again(tmp_path) -> None:
    run = write_text_rank(tmp_path)
    first = series(load_trace(str(run)))[("", "Memory", "PTA Total Reserved(MB)")]
    csv = run / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    csv.write_bytes(csv.read_bytes().replace(b",4.0,3.5,", b",8.0,3.5,"))
    again = series(load_trace(str(run)))[("", "Memory", "PTA Total Reserved(MB)")]
    assert [v for _, v in first] == [2.0, 4.0, 4.0] and [v for _, v in again] == [2.0, 8.0, 4.0]


# -- Kineto [memory] events ----------------------------------------------------------------------


def _mem(ts_us, tid, bytes_, allocated=None, reserved=None, device=(1, 0)):
    args = {"Device Type": device[0], "Device Id": device[1], "Addr": 1, "Bytes": bytes_}
    if allocated is not None:
        args.update({"Total Allocated": allocated, "Total Reserved": reserved})
    return {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7,
            "tid": tid, "ts": ts_us, "args": args}


KINETO = [
    {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 7, "tid": 1, "ts": 100,
     "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 7, "tid": 1, "ts": 110,
     "dur": 20},
    # a later-starting op on another thread covers the peak too; the event's thread wins
    {"ph": "X", "cat": "cpu_op", "name": "aten::other", "pid": 7, "tid": 2, "ts": 115,
     "dur": 50},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 118, "dur": 10},
    _mem(112, 1, 1 * MB, 1 * MB, 2 * MB),
    _mem(120, 1, 3 * MB, 4 * MB, 4 * MB),
    _mem(150, 1, -3 * MB, 1 * MB, 4 * MB),
    _mem(160, 1, 4, 16, 2 * MB, device=(0, -1)),
    _mem(170, 1, 8),  # PyTorch < 1.10: no totals, no sample
]


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_kineto_memory_events_become_series_per_device(tmp_path, batch) -> None:
    index = load(write_trace(tmp_path / "k.pt.trace.json", KINETO), batch_bytes=batch)
    found = series(index)
    assert found[("", "python", "GPU 0 Total Allocated(MB)")] == [
        (112 * US, 1.0), (120 * US, 4.0), (150 * US, 1.0)]
    assert found[("", "python", "GPU 0 Total Reserved(MB)")] == [
        (112 * US, 2.0), (120 * US, 4.0), (150 * US, 4.0)]
    assert found[("", "python", "CPU Total Allocated(MB)")] == [(160 * US, 16 / MB)]
    assert len(found) == 4
    assert len(index.arrays["instants.ts"]) == 5  # the events stay instants too
    assert "bad_counter" not in problems(index)


def test_kineto_peak_takes_the_op_of_the_events_thread(tmp_path) -> None:
    index, found = _report(write_trace(tmp_path / "k.pt.trace.json", KINETO))
    gpu = {p.measure: p for p in found.peaks if p.component == "GPU 0"}
    assert (gpu["allocated"].bytes, gpu["allocated"].at_ns) == (4 * MB, 120 * US)
    assert gpu["allocated"].host_op.name == "aten::empty"  # thread 1, not aten::other
    assert gpu["allocated"].device_op.name == "gemm"
    assert (gpu["reserved"].bytes, gpu["reserved"].at_ns) == (4 * MB, 120 * US)  # the first
    cpu = {p.measure: p for p in found.peaks if p.component == "CPU"}
    assert cpu["allocated"].bytes == 16 and cpu["allocated"].host_op.name == "aten::linear"
    assert cpu["allocated"].device_op is None
    assert found.top_ops == () and found.op_tables == 0 and found.has_data


# -- the question --------------------------------------------------------------------------------


def test_peaks_ops_at_the_peak_and_top_allocators(tmp_path) -> None:
    index, found = _report(write_text_rank(tmp_path))
    peaks = {(p.component, p.measure): p for p in found.peaks}
    assert set(peaks) == {("PTA", "allocated"), ("PTA", "reserved"), ("GE", "allocated"),
                          ("GE", "reserved")}
    pta = peaks[("PTA", "allocated")]
    assert (pta.bytes, pta.at_ns, pta.samples) == (int(3.5 * MB), T + 200_500, 3)
    assert (pta.group, pta.process) == ("", "Memory")
    # aten::mm (180-240 µs) is the innermost torch op at 200.5 µs; MatMul runs on the device
    assert (pta.host_op.name, pta.host_op.start_ns, pta.host_op.dur_ns) == (
        "aten::mm", T + 180 * US, 60 * US)
    assert pta.device_op.name == "MatMul" and pta.device_op.track == "Stream 2"
    # reserved is 4.0 from 200.5 µs on: the first of the equal highs
    assert (peaks[("PTA", "reserved")].bytes, peaks[("PTA", "reserved")].at_ns) == (
        4 * MB, T + 200_500)
    ge = peaks[("GE", "allocated")]
    assert (ge.bytes, ge.at_ns) == (MB // 2, T + 150 * US)
    assert ge.host_op.name == "aten::linear" and ge.device_op is None
    # allocations by name: aten::add 3 MB once, aten::mm 1 MB twice; size 0 is no allocation
    assert [(o.name, o.count, o.total_bytes, o.max_bytes) for o in found.top_ops] == [
        ("aten::add", 1, 3 * MB, 3 * MB), ("aten::mm", 2, 2 * MB, MB)]
    assert found.op_tables == 1 and found.has_data


def test_window_limits_peaks_and_allocations(tmp_path) -> None:
    # 250-700 µs: PTA's last sample only; aten::mm at 600 and aten::add at 400
    _, found = _report(write_text_rank(tmp_path), T + 250 * US, T + 700 * US)
    peaks = {(p.component, p.measure): p for p in found.peaks}
    assert set(peaks) == {("PTA", "allocated"), ("PTA", "reserved")}
    assert (peaks[("PTA", "allocated")].bytes, peaks[("PTA", "allocated")].samples) == (
        2 * MB, 1)
    assert peaks[("PTA", "allocated")].host_op.name == "main.py(10): train"  # no torch op
    assert [(o.name, o.count) for o in found.top_ops] == [("aten::add", 1), ("aten::mm", 1)]
    json_form = found.to_json(1)
    assert [o["name"] for o in json_form["top_ops"]] == ["aten::add"]
    assert json_form["start_ns"] == T + 250 * US and json_form["end_ns"] == T + 700 * US


def test_json_schema(tmp_path) -> None:
    _, found = _report(write_text_rank(tmp_path))
    data = json.loads(json.dumps(found.to_json(10)))
    assert set(data) == {"start_ns", "end_ns", "peaks", "top_ops", "op_tables",
                         "ranks_without_data"}
    peak = data["peaks"][0]
    assert set(peak) == {"group", "process", "component", "measure", "bytes", "at_ns",
                         "samples", "host_op", "device_op"}
    assert isinstance(peak["bytes"], int) and isinstance(peak["at_ns"], int)
    assert set(peak["host_op"]) == {"name", "start_ns", "dur_ns", "track"}
    assert set(data["top_ops"][0]) == {"group", "name", "count", "total_bytes", "max_bytes"}


def test_series_peak_and_memory_series(tmp_path) -> None:
    index = load_trace(str(write_text_rank(tmp_path)), use_cache=False)
    by_name = {(m.component, m.measure): m for m in memory_series(index)}
    assert ("HCCL", "reserved") not in by_name  # CANN modules are not an allocator
    pta = by_name[("PTA", "allocated")]
    assert series_peak(index, pta.series)[:2] == (T + 200_500, 3.5)
    assert series_peak(index, pta.series, T + 250 * US, T + 260 * US) is None


def test_profile_without_memory_data(tmp_path) -> None:
    _, found = _report(write_text_rank(tmp_path, memory=False, ops=False))
    assert not found.has_data and found.peaks == () and found.top_ops == ()
    _, found = _report(write_text_rank(tmp_path / "b", memory=False))
    assert found.has_data and found.peaks == () and found.op_tables == 1


def test_db_export_peaks_and_top_ops(tmp_path) -> None:
    """The db helper: PTA 1 MB allocated at T + 300 ns, when only ProfilerStep#7 runs on the
    host (aten::mul starts at T + 400); OP_MEMORY: aten::mul 2048 bytes (bytes in the db)."""
    index, found = _report(dbh.write_rank(tmp_path).parents[1])
    [alloc, reserved] = [p for p in found.peaks if p.component == "PTA"]
    assert (alloc.measure, alloc.bytes, alloc.at_ns) == ("allocated", MB, dbh.T + 300)
    assert (reserved.measure, reserved.bytes) == ("reserved", 2 * MB)
    assert alloc.host_op.name == "ProfilerStep#7"  # a marker: taken when nothing else runs
    assert [(o.name, o.count, o.total_bytes) for o in found.top_ops] == [("aten::mul", 1, 2048)]


def test_memory_csvs_join_a_file_indexed_in_two_halves(tmp_path) -> None:
    from memory_helpers import trace_view, x

    from proftui.core.load.indexing import index_file
    from proftui.core.load.split import index_in_parts as _index_parallel
    from proftui.core.source.streams import ByteSource

    run = write_text_rank(tmp_path)
    out = run / "ASCEND_PROFILER_OUTPUT"
    many = trace_view() + [x(f"aten::op{i % 7}", 1000 + i, 0.5, PID, PID, "cpu_op")
                           for i in range(3000)]
    (out / "trace_view.json").write_text(json.dumps(many))
    files = [str(out / "memory_record.csv"), str(out / "npu_module_mem.csv")]
    source = str(out / "trace_view.json")
    serial = index_file(ByteSource(source), workers=1, batch_bytes=4096, memory_files=files)
    parallel = _index_parallel(ByteSource(source), None, None, 4096, 0, files)
    assert parallel is not None  # the split was found and the worker answered
    assert series(parallel) == series(serial)
    assert series(serial)[("", "Memory", "PTA Total Allocated(MB)")][1] == (T + 200_500, 3.5)


@pytest.mark.parametrize("device_type, device_id, named", [
    (1, 0, "GPU 0"), (1.0, 0, "Device 0"), (True, 0, "Device 0"), (20, 1, "NPU 1"),
    (0, -1, "CPU"), ([1], 0, "Device 0"), (1, [0], "GPU"), (99, 2, "Device type 99 2")])
def test_memory_series_are_named_by_device_alike_however_often(device_type, device_id,
                                                             named) -> None:
    """Names are kept per device (by value and type: 1, 1.0 and True apart), and a device no
    dictionary takes (a list) is named each time, the same."""
    from proftui.core.importers.kineto_memory import memory_samples

    args = {"Device Type": device_type, "Device Id": device_id, "Total Allocated": MB,
            "Total Reserved": float("nan")}
    for _ in range(2):
        assert memory_samples(args) == [(f"{named} Total Allocated(MB)", 1.0)]
