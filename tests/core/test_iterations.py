"""Iterations from step annotations, the msprof step trace and the step CSVs."""

from __future__ import annotations

import json

import numpy as np

from proftui.core import load_trace
from proftui.core.cache.tables import read_table
from proftui.core.discover.profile import discover
from proftui.core.ops.iterations import find_iterations


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


# -- per rank or device, from the CSVs of a profile directory ----------------------------------


def _iterations(path):
    from proftui.core.analysis.overview import overview

    return overview(load_trace(str(path), use_cache=False))["iterations"]


def _mindspore_profiler(root, rank: int, rows: list[str]) -> None:
    """A MindSpore 1.x-2.2 `profiler/` dir's files of one rank."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"ascend_timeline_display_{rank}.json").write_text(json.dumps(
        [{"name": f"Conv2D-op{rank}", "ph": "X", "pid": 9000, "tid": "519", "ts": 1.5,
          "dur": 2}]))
    (root / f"step_trace_raw_{rank}_detail_time.csv").write_text(
        "step_num,start_point,end_point,total,fp_point,bp_point,iteration_interval,fp_and_bp,"
        "tail,stream_5_parallel_0_start_point,stream_5_parallel_0_end_point,"
        "stream_5_parallel_0\n" + "\n".join(rows) + "\n")
    (root / f"framework_raw_{rank}.csv").write_text("task_id,stream_id,op_name\n1,5,Conv2D\n")


def test_mindspore_raw_step_trace_per_rank(tmp_path) -> None:
    profiler = tmp_path / "profiler"
    _mindspore_profiler(profiler, 0, [
        "1,1000,3000,2000,1100,2800,100,1700,200,2000,2050,50",
        "2,3000,5500,2500,3100,5300,100,2200,200,4000,4060,60",
        "-,2000,4250,2250,2100,4050,100,1950,200,3000,3055,55"])  # MindSpore's average row
    _mindspore_profiler(profiler, 1, ["1,7,9007,9000,8,9000,1,8992,7,,,"])
    layout = discover(str(tmp_path))
    assert layout.groups == ["rank 0", "rank 1"]
    assert sorted((t.kind, t.group) for t in layout.tables) == [
        ("framework_raw", "rank 0"), ("framework_raw", "rank 1"),
        ("step_trace_raw_detail_time", "rank 0"), ("step_trace_raw_detail_time", "rank 1")]
    found = _iterations(tmp_path)
    assert found["source"] == "step_trace_raw CSV (MindSpore)"
    items = [(it["group"], it["number"], it["start_ns"], it["dur_ns"]) for it in found["items"]]
    # 10 ns ticks; the windows are device counter ticks on no shared clock: unknown
    assert items == [("rank 0", 1, -1, 20_000), ("rank 0", 2, -1, 25_000),
                     ("rank 1", 1, -1, 90_000)]
    assert found["items"][1]["parts_ns"] == {
        "iteration interval": 1_000.0, "FP+BP": 22_000.0, "tail": 2_000.0,
        "stream_5_parallel_0": 600.0}
    assert found["items"][2]["parts_ns"] == {
        "iteration interval": 10.0, "FP+BP": 89_920.0, "tail": 70.0}


STEP_TRACE_HEADER = ("Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),"
                     "Iteration Time(us),FP to BP Time(us),Iteration Refresh(us),"
                     "Data Aug Bound(us),Model ID\n")


def test_step_csv_only_for_devices_the_timeline_has_no_steps_for(tmp_path) -> None:
    # device 0's timeline has its step trace; device 1's has none: its CSV gives the steps,
    # moved to the wall clock like its timeline (start_info), an N/A end leaving no window.
    for device, events in ((0, [{"ph": "X", "name": "Iteration 1", "pid": 3, "tid": 9,
                                 "ts": 50, "dur": 40}]),
                           (1, [{"ph": "X", "name": "op", "pid": 3, "tid": 2, "ts": 50,
                                 "dur": 1}])):
        dev = tmp_path / f"PROF_{device}" / f"device_{device}"
        (dev / "timeline").mkdir(parents=True)
        (dev / "summary").mkdir()
        (dev / "timeline" / f"msprof_{device}_1_1.json").write_text(json.dumps(events))
        (dev / f"start_info.{device}").write_text(json.dumps(
            {"collectionTimeBegin": "1692340024000000", "clockMonotonicRaw": "1000"}))
        (dev / "summary" / f"step_trace_{device}_1_1.csv").write_text(
            STEP_TRACE_HEADER + f"{device},1,10,20,30,25,10,10,N/A,1\n"
                                f"{device},2,40,50,N/A,25,10,10,10,1\n")
    offset = 1692340024000000 * 1000 - 1000
    found = _iterations(tmp_path)
    assert found["source"] == "msprof step trace, step_trace CSV"
    assert [(it["group"], it["number"], it["start_ns"], it["dur_ns"])
            for it in found["items"]] == [
        ("PROF_0 / device 0", 1, 50_000 + offset, 40_000),
        ("PROF_1 / device 1", 1, 5_000 + offset, 25_000),
        ("PROF_1 / device 1", 2, None, None)]  # no window: no times
    assert found["items"][2]["parts_ns"]["data aug bound"] == 10_000.0


CLUSTER_HEADER = ("Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,"
                  "Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude "
                  "Receive)\n")


def _torch_npu_rank(root, rank: int, steps: list[tuple[int, int]]) -> None:
    out = root / f"node_{100 + rank}_2024_ascend_pt"
    (out / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (out / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(
        [{"ph": "X", "name": f"ProfilerStep#{n}", "cat": "user_annotation", "pid": 7,
          "tid": 7, "ts": ts, "dur": 100} for n, ts in steps]))


def test_cluster_step_trace_joins_each_rank(tmp_path) -> None:
    _torch_npu_rank(tmp_path, 0, [(1, "1000.000"), (2, "1100.000")])
    _torch_npu_rank(tmp_path, 1, [(1, "1000.500"), (2, "1100.500")])
    cluster = tmp_path / "cluster_analysis_output"
    cluster.mkdir()
    (cluster / "cluster_step_trace_time.csv").write_text(
        CLUSTER_HEADER +
        "1,rank,0,60,20,5,25,15,100,0,20\n"
        "1,rank,1,70,10,5,15,15,100,0,10\n"
        "2,rank,1,71,10,5,15,14,100,0,10\n"
        "1,stage,0,70,20,5,25,15,100,0,20\n"  # a maximum over ranks: no one's iteration
        ",rank,0,500,1,1,2,3,,0,1\n")  # no step division for this row
    assert discover(str(tmp_path)).groups == ["rank 0", "rank 1"]
    found = _iterations(tmp_path)
    assert found["source"] == "ProfilerStep#N annotations"
    got = {(it["group"], it["number"]): it for it in found["items"]}
    assert sorted(got) == [("rank 0", 1), ("rank 0", 2), ("rank 1", 1), ("rank 1", 2)]
    assert got[("rank 0", 1)]["parts_ns"]["computing"] == 60_000.0
    assert got[("rank 1", 1)]["parts_ns"]["computing"] == 70_000.0
    assert got[("rank 1", 2)]["parts_ns"]["free"] == 14_000.0
    assert got[("rank 0", 2)]["parts_ns"] == {}
    assert got[("rank 1", 1)]["start_ns"] == 1_000_500  # the window is the timeline's
    assert found["notes"] == ["cluster_step_trace_time.csv: 1 row without a step number "
                              "(the whole collection), not taken as iterations"]


def test_cluster_step_trace_alone_gives_iterations_per_rank(tmp_path) -> None:
    (tmp_path / "cluster_step_trace_time.csv").write_text(
        CLUSTER_HEADER + "3,rank,0,60,20,5,25,15,100,0,20\n3,rank,4,61,20,5,25,15,100,0,20\n")
    found = _iterations(tmp_path)
    assert found["source"] == "cluster_step_trace_time.csv"
    assert [(it["group"], it["number"], it["dur_ns"]) for it in found["items"]] == [
        ("rank 0", 3, None), ("rank 4", 3, None)]


def test_capture_start_is_the_earliest_timestamp_of_the_profile(tmp_path) -> None:
    """One zero for every relative time: the earliest slice, instant or counter sample,
    before any step starts; without a timeline, the earliest known step start."""
    from proftui.core.ops.iterations import Iteration, Iterations, capture_start_ns

    index = _load(tmp_path, [
        {"ph": "X", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 500, "dur": 100},
        {"ph": "C", "name": "mem", "pid": 1, "ts": 120.5, "args": {"v": 1}},
        {"ph": "X", "name": "early", "pid": 1, "tid": 1, "ts": 130, "dur": 10},
    ])
    found = find_iterations(index)
    assert found.items[0].start_ns == 500_000
    assert capture_start_ns(index) == capture_start_ns(index, found) == 120_500
    empty = _load(tmp_path, [])
    steps = [Iteration("", 2, 9_000, 10_000), Iteration("", 1, -1, -1, length_ns=5),
             Iteration("", 3, 7_000, 8_000)]
    assert capture_start_ns(empty, Iterations("step_trace", steps)) == 7_000
    assert capture_start_ns(empty, steps) == 7_000
    assert capture_start_ns(empty) == 0


def test_a_time_is_in_the_step_whose_window_holds_it_the_latest_where_they_overlap() -> None:
    from proftui.core.ops.iterations import Iteration, step_at, steps_at

    items = [Iteration("rank 0", 7, 100, 205), Iteration("rank 0", 8, 200, 300),
             Iteration("rank 1", 7, 1000, 1100)]
    mine = items[:2]
    numbers, starts = steps_at(mine, np.array([99, 100, 199, 200, 204, 299, 300]))
    assert numbers[1:6].tolist() == [7, 7, 8, 8, 8]  # 204: the #8 the ruler marks last
    assert np.isnan(numbers[[0, 6]]).all() and starts.tolist() == [-1, 100, 100, 200, 200,
                                                                    200, -1]
    assert step_at(items, 1050, "rank 1") == 7 and step_at(items, 1050, "rank 0") is None
    assert step_at(items, 250) == 8
