"""Which side each track is on, which slices are operators, how they are grouped and shared:
the numbers of the summary, the Ops pane and `proftui ops` on traces shaped as real ones."""

from __future__ import annotations

import numpy as np
import pytest

from proftui.core.analysis.overview import overview
from proftui.core.analysis.summary import summary_report
from proftui.core.cache.tables import read_table
from proftui.core.ops.aggregate import aggregate_ops, union_ns
from proftui.core.ops.grouping import op_name
from proftui.core.ops.roles import device_tracks, op_slices, roles

from helpers import load, slice_names, write_trace

US = 1_000


def _x(name, cat, pid, tid, ts, dur, **more):
    event = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, **more}
    if cat is not None:
        event["cat"] = cat
    return event


def _meta(pid, name=None, labels=None, threads=()):
    out = []
    if name is not None:
        out.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}})
    if labels is not None:
        out.append({"ph": "M", "name": "process_labels", "pid": pid, "args": {"labels": labels}})
    for tid, thread in threads:
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": thread}})
    return out


def _sides(index) -> dict[str, tuple[str, str]]:
    r = roles(index)
    return {index.track_label(t): (r.describe(t)["side"], r.describe(t)["side_by"])
            for t in range(index.n_tracks) if index.col("tracks.slice_count")[t]}


def _ops(table) -> dict[str, tuple[int, int]]:
    """{label: (Count, Total ns)}"""
    return {str(k): (int(n), int(t)) for k, n, t in zip(
        table.columns[0].values, table.find("Count").values, table.find("Total").values)}


# -- item 3: the side of a track ----------------------------------------------------------------


def test_kineto_host_at_the_pid_of_gpu_0_is_host(tmp_path) -> None:
    """Kineto writes the host process at pid 0 beside GPU 0 (also pid 0): the host thread's
    cpu_op and python_function slices are host time, the stream's kernels device time."""
    events = [*_meta(0, "python", "GPU 0", [(7, "stream 7"), (100, "thread 100 (python)")]),
              _x("train.py(10): step", "python_function", 0, 100, 0, 100),
              _x("aten::mm", "cpu_op", 0, 100, 10, 50),
              _x("cudaLaunchKernel", "cuda_runtime", 0, 100, 20, 5),
              _x("sgemm", "kernel", 0, 7, 30, 4),
              _x("Memcpy HtoD", "gpu_memcpy", 0, 7, 40, 2)]
    index = load(write_trace(tmp_path / "t.json", events))
    assert _sides(index) == {"stream 7": ("device", "categories"),
                             "thread 100 (python)": ("host", "categories")}
    report = summary_report(index)
    busy = report["busy"][0]
    assert busy["device_busy_ns"] == 6 * US  # the kernel and the copy, not the host's 100
    assert busy["host_busy_ns"] == 100 * US
    assert [r["name"] for r in report["top_device_types"]["rows"]] == ["sgemm", "Memcpy HtoD"]


def test_without_metadata_kernels_are_device(tmp_path) -> None:
    """vLLM, SGLang and B200 exports have no M events at all."""
    events = [_x("aten::add", "cpu_op", 4321, 4321, 0, 10),
              _x("add_kernel", "kernel", 1, 7, 5, 3),
              _x("ncclDevKernel_AllReduce", "kernel", 1, 20, 5, 8)]
    index = load(write_trace(tmp_path / "t.json", events))
    assert _sides(index) == {"Thread 4321": ("host", "categories"),
                             "Thread 7": ("device", "categories"),
                             "Thread 20": ("device", "categories")}
    assert _ops(aggregate_ops(index, side="device")) == {
        "ncclDevKernel_AllReduce": (1, 8 * US), "add_kernel": (1, 3 * US)}
    info = overview(index)
    assert info["sides"] == {"device by categories": 2, "host by categories": 1}
    tracks = {t["name"]: t for p in info["processes"] for t in p["tracks"]}
    assert tracks["Thread 7"]["side"] == "device" and tracks["Thread 7"]["role"] == "work"


def test_ascend_sides_by_process_name_then_labels_then_stream_names(tmp_path) -> None:
    events = [*_meta(1, "Python", "CPU", [(1, "Thread 1")]),
              *_meta(2, "CANN", "CPU", [(1, "Thread 1")]),
              *_meta(3, "Ascend Hardware", "NPU 0", [(5, "Stream 5")]),
              *_meta(4, "mystery", "NPU 1", [(1, "worker")]),
              *_meta(5, "other", None, [(9, "stream 9")]),
              _x("aten::add", None, 1, 1, 0, 10),
              _x("AscendCL@aclnnAdd", None, 2, 1, 1, 5),
              _x("Add", None, 3, 5, 8, 2),
              _x("task", None, 4, 1, 8, 2),
              _x("k", None, 5, 9, 8, 2),
              _x("plain", None, 6, 1, 8, 2)]
    index = load(write_trace(tmp_path / "t.json", events, wrapper=False))
    assert _sides(index) == {
        "Thread 1": ("host", "default"),  # pid 6: no sign of a device
        "Stream 5": ("device", "process name"), "worker (1)": ("device", "process labels"),
        "stream 9": ("device", "thread name")}
    by_process = {index.process_label(int(index.col("tracks.process")[t])).split(" (")[0]:
                  bool(device_tracks(index)[t]) for t in range(index.n_tracks)
                  if index.col("tracks.slice_count")[t]}
    assert by_process == {"Python": False, "CANN": False, "Ascend Hardware": True,
                          "mystery": True, "other": True, "Process 6": False}


# -- item 4: markers ----------------------------------------------------------------------------


def test_the_capture_span_and_step_markers_are_not_ops(tmp_path) -> None:
    """Kineto's "PyTorch Profiler (0)" (category Trace) covers the whole capture: it stays on
    the timeline but is no operator and no busy time."""
    events = [*_meta(0, "python", "GPU 0", [(7, "stream 7")]),
              _x("PyTorch Profiler (0)", "Trace", "Spans", "PyTorch Profiler", 0, 1000),
              _x("ProfilerStep#3", "user_annotation", 10, 10, 100, 400),
              _x("aten::mm", "cpu_op", 10, 10, 150, 100),
              _x("ProfilerStep#3", "gpu_user_annotation", 0, 7, 160, 300),
              _x("sgemm", "kernel", 0, 7, 200, 50)]
    index = load(write_trace(tmp_path / "t.json", events))
    assert index.n_slices == 5
    assert sorted(index.slice_name(int(i)) for i in op_slices(index)) == ["aten::mm", "sgemm"]
    report = summary_report(index)
    busy = report["busy"][0]
    assert (busy["host_busy_ns"], busy["device_busy_ns"]) == (100 * US, 50 * US)
    assert [r["name"] for r in report["top_host_ops"]["rows"]] == ["aten::mm"]
    assert _ops(aggregate_ops(index)) == {"aten::mm": (1, 100 * US), "sgemm": (1, 50 * US)}


# -- item 6: Ascend device tasks counted once ---------------------------------------------------


def _torch_npu_like() -> list[dict]:
    """A torch_npu trace_view in small: compute and HCCL tasks on the streams, the collective
    on the HCCL group thread, the same tasks again on the HCCL planes, the Overlap Analysis
    view and a Step Trace thread."""
    return [
        *_meta(1, "Python", "CPU", [(1, "Thread 1")]),
        *_meta(2, "Ascend Hardware", "NPU", [(2, "Stream 2"), (4, "Stream 4"),
                                             (9, "Step Trace(Model ID:2)")]),
        *_meta(3, "HCCL", "NPU", [(0, "Group 0 Communication"), (1, "Plane 0")]),
        *_meta(4, "Overlap Analysis", "NPU", [(0, "Computing"), (1, "Communication"),
                                              (2, "Free")]),
        _x("ProfilerStep#1", "cpu_op", 1, 1, 0, 100),
        _x("aten::mm", "cpu_op", 1, 1, 5, 10),
        _x("aclnnMm_MatMulCommon_MatMulV2", None, 2, 2, 10, 20),
        _x("aclnnAdd_AddAiCore_Add", None, 2, 2, 40, 5),
        _x("EVENT_WAIT", None, 2, 2, 50, 10),
        _x("hcom_allReduce__1_0_1", None, 3, 0, 30, 40),
        _x("Notify Wait", None, 2, 4, 30, 15),
        _x("SDMA", None, 2, 4, 45, 20),
        _x("Write Value", None, 2, 4, 65, 1),
        _x("Notify_Wait", None, 3, 1, 30, 15),
        _x("Memcpy", None, 3, 1, 45, 20),
        _x("Computing", None, 4, 0, 10, 20),
        _x("Computing", None, 4, 0, 40, 5),
        _x("Communication", None, 4, 1, 30, 40),
        _x("Free", None, 4, 2, 70, 30),
        _x("Iteration 1", "Iteration Time", 2, 9, 0, 100),
    ]


def test_ascend_device_tasks_count_once(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", _torch_npu_like(), wrapper=False))
    r = roles(index)
    role = {index.track_label(t): r.describe(t)["role"] for t in range(index.n_tracks)
            if index.col("tracks.slice_count")[t]}
    assert role["Plane 0 (1)"] == "copy"
    assert role["Computing (0)"] == role["Free (2)"] == "derived"
    assert role["Step Trace(Model ID:2) (9)"] == "derived"
    assert role["Stream 2"] == role["Stream 4"] == role["Group 0 Communication"] == "work"
    device = aggregate_ops(index, side="device")
    # The collective stands for its tasks (Notify Wait, SDMA, Write Value); the planes' copies,
    # the overlap view and the iteration marker are not ops.
    assert _ops(device) == {
        "hcom_allReduce__1_0_1": (1, 40 * US), "aclnnMm_MatMulCommon_MatMulV2": (1, 20 * US),
        "EVENT_WAIT": (1, 10 * US), "aclnnAdd_AddAiCore_Add": (1, 5 * US)}
    assert device.find("Busy").values.sum() == pytest.approx(100.0)
    # The summary counts the same ops as the Ops pane.
    report = summary_report(index)
    assert report["top_device_types"]["groups"] == aggregate_ops(
        index, side="device", by="type").n_rows == 4
    busy = report["busy"][0]
    assert busy["device_busy_ns"] == union_ns(np.array([10, 30]) * US, np.array([70, 70]) * US)
    assert busy["host_busy_ns"] == 10 * US  # ProfilerStep#1 is a marker, aten::mm is work


def test_without_a_collective_the_stream_tasks_are_the_communication(tmp_path) -> None:
    events = [e for e in _torch_npu_like() if not e.get("name", "").startswith("hcom_")]
    index = load(write_trace(tmp_path / "t.json", events, wrapper=False))
    names = set(_ops(aggregate_ops(index, side="device")))
    assert {"Notify Wait", "SDMA", "Write Value"} <= names
    assert "Notify_Wait" not in names and "Computing" not in names


def test_sum_of_op_totals_per_stream_within_its_span(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", _torch_npu_like(), wrapper=False))
    device = np.flatnonzero(device_tracks(index))
    for t in device.tolist():
        ops = aggregate_ops(index, tracks=[t])
        if not ops.n_rows:
            continue
        mine = op_slices(index)[index.col("slices.track")[op_slices(index)] == t]
        start = index.col("slices.start")[mine]
        end = start + index.col("slices.dur")[mine]
        assert ops.find("Total").values.sum() <= end.max() - start.min()


# -- item 7: engines ----------------------------------------------------------------------------


def test_engines_from_kernel_details_and_kineto_kinds(tmp_path) -> None:
    events = _torch_npu_like()
    index = load(write_trace(tmp_path / "t.json", events, wrapper=False))
    csv = tmp_path / "kernel_details.csv"
    csv.write_text("Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
                   "1,aclnnMm_MatMulCommon_MatMulV2,MatMulV2,AI_CORE,10,20\n"
                   "1,aclnnAdd_AddAiCore_Add,Add,AI_VECTOR_CORE,40,5\n"
                   "1,hcom_allReduce__1_0_1,hcom_allReduce_,HCCL,30,40\n")
    table = read_table(str(csv), "kernel_details")
    assert _ops(aggregate_ops(index, side="device", by="engine", tables=[table])) == {
        "HCCL": (1, 40 * US), "AI_CORE": (1, 20 * US), "EVENT_WAIT": (1, 10 * US),
        "AI_VECTOR_CORE": (1, 5 * US)}
    host = aggregate_ops(index, side="host", by="engine", tables=[table])
    assert _ops(host) == {"cpu_op": (1, 10 * US)}
    kineto = [*_meta(0, "python", "GPU 0", [(7, "stream 7")]),
              _x("triton_poi_fused_add_0", "kernel", 0, 7, 0, 4),
              _x("ncclDevKernel_AllGather_RING_LL", "kernel", 0, 7, 10, 8),
              _x("void gemm<float>", "kernel", 0, 7, 20, 2),
              _x("Memcpy DtoH", "gpu_memcpy", 0, 7, 30, 1),
              _x("Memset (Device)", "gpu_memset", 0, 7, 40, 3)]
    index = load(write_trace(tmp_path / "k.json", kineto))
    assert _ops(aggregate_ops(index, by="engine")) == {
        "NCCL": (1, 8 * US), "Triton": (1, 4 * US), "memset": (1, 3 * US),
        "kernel": (1, 2 * US), "memcpy": (1, 1 * US)}


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_engines_in_chunks_are_the_engines_whole(tmp_path, monkeypatch, chunk) -> None:
    """Each slice's engine and the labels' order, the (name, category, side) keys taken a
    few slices at a time (a collective's key among them), are those of all slices at once."""
    from proftui.core.ops import grouping

    events = [*_meta(0, "python", "GPU 0", [(7, "stream 7")]),
              *[_x(name, cat, pid, 7 if pid == 0 else 1, ts, 2) for ts, (name, cat, pid) in
                enumerate([("ncclDevKernel_AllGather_RING_LL", "kernel", 0),
                           ("aten::mm", "cpu_op", 1), ("void gemm<float>", "kernel", 0),
                           ("Memcpy DtoH", "gpu_memcpy", 0), ("aten::mm", "cpu_op", 1),
                           ("triton_poi_fused_add_0", "kernel", 0),
                           ("cudaLaunchKernel", "cuda_runtime", 1),
                           ("void gemm<float>", "kernel", 0)] * 3)]]
    index = load(write_trace(tmp_path / "t.json", events))
    whole = grouping._engines(index, ())
    monkeypatch.setattr(grouping, "ENGINE_CHUNK", chunk)
    found = grouping._engines(index, ())
    assert found.labels == whole.labels
    codes = found.of(index, slice(None))
    assert codes.dtype == np.int32 and codes.tolist() == whole.of(index, slice(None)).tolist()
    assert {found.labels[c] for c in codes.tolist()} >= {
        "NCCL", "Triton", "kernel", "memcpy", "cpu_op", "cuda_runtime"}


# -- item 12: Paddle names ----------------------------------------------------------------------


def test_op_names_drop_paddle_durations_and_instance_numbers() -> None:
    assert op_name("matmul_kernel[114.000 us]") == "matmul_kernel"
    assert op_name("ProfileStep#3[12.345 ms]") == "ProfileStep"
    assert op_name("Dataloader#0[2.000 ms]") == "Dataloader"
    assert op_name("Iteration 12") == "Iteration"
    assert op_name("aten::index[1]") == "aten::index[1]"  # not a duration
    assert op_name("tensor#x") == "tensor#x"


def test_paddle_trace_aggregates_one_row_per_op(tmp_path) -> None:
    events = [*_meta(0, "Deivce 0 (GPU)", None, [(7, "stream 7")]),
              _x("ProfileStep#1[40.000 ms]", "ProfileStep", 1, "1(Python)", 0, 40),
              _x("Dataloader#1[2.000 ms]", "Dataloader", 1, "1(Python)", 0, 2),
              _x("matmul[10.000 us]", "Operator", 1, "1(Python)", 5, 10),
              _x("ProfileStep#2[50.000 ms]", "ProfileStep", 1, "1(Python)", 40, 50),
              _x("Dataloader#2[3.000 ms]", "Dataloader", 1, "1(Python)", 40, 3),
              _x("matmul[12.000 us]", "Operator", 1, "1(Python)", 45, 12),
              _x("matmul_kernel[7.000 us]", "Kernel", 0, 7, 10, 7),
              _x("matmul_kernel[9.000 us]", "Kernel", 0, 7, 50, 9), {}]
    index = load(write_trace(tmp_path / "p.json", events, schemaVersion="1.0.0"))
    assert _ops(aggregate_ops(index, side="host")) == {
        "matmul": (2, 22 * US), "Dataloader": (2, 5 * US)}
    assert _ops(aggregate_ops(index, side="device")) == {"matmul_kernel": (2, 16 * US)}
    raw = set(slice_names(index))
    assert "matmul[10.000 us]" in raw  # the timeline keeps the names as written


# -- item 13: shares ----------------------------------------------------------------------------


def test_shares_of_parallel_streams_stay_within_100(tmp_path) -> None:
    """Two streams each busy 80 of 100 µs with one kernel name: 80 % of the window per track,
    not 160 %; nested instances of a name on one track count once."""
    events = [*_meta(0, "python", "GPU 0", [(1, "stream 1"), (2, "stream 2")]),
              _x("k", "kernel", 0, 1, 0, 80), _x("k", "kernel", 0, 2, 20, 80),
              _x("f", "python_function", 9, 9, 0, 60), _x("f", "python_function", 9, 9, 10, 30),
              _x("g", "python_function", 9, 9, 60, 40)]
    index = load(write_trace(tmp_path / "t.json", events))
    table = aggregate_ops(index)
    window = dict(zip(table.columns[0].values, table.find("Window").values))
    assert window == {"k": 80.0, "f": 60.0, "g": 40.0}
    busy = dict(zip(table.columns[0].values, table.find("Busy").values))
    # self: k 160, f 60 (the inner f is the outer's child), g 40: of 260
    assert busy == pytest.approx({"k": 1600 / 26, "f": 600 / 26, "g": 400 / 26})
    assert sum(busy.values()) == pytest.approx(100.0)


def test_roles_are_kept_beside_the_cached_index(tmp_path, cache_dir, monkeypatch) -> None:
    from proftui.core.load.loader import load_trace
    from proftui.core.ops import roles as roles_module

    trace = write_trace(tmp_path / "t.json", _torch_npu_like(), wrapper=False)
    first = roles(load_trace(str(trace)))
    assert len(list(cache_dir.glob(f"*.{roles_module.ROLES_KIND}"))) == 1

    def reclassify(index):
        raise AssertionError("classified again")

    monkeypatch.setattr(roles_module, "_classify", reclassify)
    mapped = load_trace(str(trace))
    assert mapped.meta["from_cache"] is True
    again = roles(mapped)
    for field in ("device", "side_rule", "role", "op", "collective"):
        assert getattr(again, field).tolist() == getattr(first, field).tolist()
    assert again.op.any() and again.collective.any() and again.device.any()
