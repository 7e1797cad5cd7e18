"""Iterations from step annotations, the msprof step trace and the step CSVs."""

from __future__ import annotations

import json

from proftui.core import load_trace
from proftui.core.importers.csv_summary import read_table
from proftui.core.iterations import find_iterations


def _load(tmp_path, events):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return load_trace(str(path), use_cache=False)


def test_profiler_steps_prefer_the_cpu_annotation(tmp_path) -> None:
    index = _load(tmp_path, [
        {"ph": "X", "name": "ProfilerStep#3", "cat": "user_annotation", "pid": 1, "tid": 1,
         "ts": 100, "dur": 50},
        {"ph": "X", "name": "ProfilerStep#3", "cat": "gpu_user_annotation", "pid": 0, "tid": 7,
         "ts": 90, "dur": 70},
        {"ph": "X", "name": "ProfileStep#4[12.5 ms]", "cat": "ProfileStep", "pid": 1, "tid": 1,
         "ts": 150, "dur": 12500},
    ])
    found = find_iterations(index)
    assert [(it.number, it.start_ns, it.dur_ns) for it in found.items] == [
        (3, 100_000, 50_000), (4, 150_000, 12_500_000)]


def test_msprof_iterations_with_parts_and_step_csv(tmp_path) -> None:
    index = _load(tmp_path, [
        {"ph": "X", "name": "Iteration 1", "pid": 9, "tid": 2, "ts": 0, "dur": 100},
        {"ph": "X", "name": "FP_BP Time 1", "pid": 9, "tid": 2, "ts": 10, "dur": 60},
        {"ph": "X", "name": "Iteration Refresh 1", "pid": 9, "tid": 2, "ts": 70, "dur": 30},
    ])
    found = find_iterations(index)
    assert found.source == "msprof step trace"
    assert found.items[0].parts == {"FP+BP": 60_000.0, "iteration refresh": 30_000.0}
    csv = tmp_path / "step_trace_time.csv"
    csv.write_text("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
                   "1,50.5,20,5,25,4.5\n")
    joined = find_iterations(index, [read_table(str(csv), "step_trace_time")])
    assert joined.items[0].parts["computing"] == 50_500.0
    assert joined.items[0].parts["free"] == 4_500.0


def test_msprof_step_trace_csv_alone(tmp_path) -> None:
    csv = tmp_path / "step_trace.csv"
    csv.write_text("Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),"
                   "Iteration Time(us),FP to BP Time(us),Iteration Refresh(us),"
                   "Data Aug Bound(us),Model ID\n"
                   "0,1,1000.5,1400,1500,600,399.5,100,N/A,2\n"
                   "0,2,1600,2000,2100,600,400,100,100,2\n")
    index = _load(tmp_path, [{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 0, "dur": 1}])
    found = find_iterations(index, [read_table(str(csv), "step_trace")])
    assert found.source == "step_trace CSV"
    assert [(it.number, it.start_ns, it.end_ns) for it in found.items] == [
        (1, 900_000, 1_500_000), (2, 1_500_000, 2_100_000)]
    assert "data aug bound" not in found.items[0].parts
    assert found.items[1].parts["data aug bound"] == 100_000.0
