"""The row behind a slice: Ascend's kernel_details rows matched to their device slices by
stream, start and task id (never by name), the SQLite export's COMPUTE_TASK_INFO, and Kineto
kernels with the shapes of the op that launched them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from proftui.core import load_trace
from proftui.core.perf.device import device_name
from proftui.core.perf.instances import op_instances, row_behind
from tests.core.ascend_db_helpers import TABLES, T, write_db
from tests.core.helpers import load, write_trace

HW_PID, CPU_PID = 800, 4242
# A device task's start as torch_npu writes it (µs, 3 decimals, a string) and in ns.
TS = "1736408883704903.918"
TS_NS = 1736408883704903918
KD_HEADER = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
             "Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,"
             "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
             "Output Formats,Context ID,aic_mac_ratio,aic_mte2_ratio,cube_utilization(%)")


def _task(name: str, ts: str, dur: float, stream: int, task_id: int) -> dict:
    return {"ph": "X", "name": name, "pid": HW_PID, "tid": stream, "ts": ts, "dur": dur,
            "args": {"Model Id": 4294967295, "Task Type": "AI_CORE",
                     "Physic Stream Id": stream, "Task Id": task_id, "Batch Id": 0}}


def _ascend_profile(root: Path) -> Path:
    """A torch_npu rank folder: trace_view.json with two MatMul tasks on stream 2, a
    same-named one on stream 3 (same task id), the torch op that launched the first (its
    async_npu flow), and kernel_details.csv rows for them."""
    out = root / "node_1_20250101_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    later = "1736408883705903.918"
    events = [
        {"ph": "M", "name": "process_name", "pid": HW_PID, "args": {"name": "Ascend Hardware"}},
        {"ph": "M", "name": "process_labels", "pid": HW_PID, "args": {"labels": "NPU 0"}},
        {"ph": "M", "name": "thread_name", "pid": HW_PID, "tid": 2, "args": {"name": "Stream 2"}},
        {"ph": "M", "name": "thread_name", "pid": HW_PID, "tid": 3, "args": {"name": "Stream 3"}},
        {"ph": "M", "name": "process_name", "pid": CPU_PID, "args": {"name": "Python"}},
        {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": CPU_PID, "tid": 1,
         "ts": "1736408883704800.000", "dur": 50.0,
         "args": {"Input Dims": "32,9216;\r\n9216,4096", "Input type": "float;\r\nfloat"}},
        _task("MatMul1", TS, 313.886, 2, 11053),
        _task("MatMul1", later, 100.0, 2, 11060),
        _task("MatMul1", "1736408883706903.918", 100.0, 3, 11053),
        {"ph": "s", "id": TS_NS, "cat": "async_npu", "name": "torch_to_npu", "pid": CPU_PID,
         "tid": 1, "ts": "1736408883704800.000", "bp": "e"},
        {"ph": "f", "id": TS_NS, "cat": "async_npu", "name": "torch_to_npu", "pid": HW_PID,
         "tid": 2, "ts": TS, "bp": "e"},
    ]
    (out / "trace_view.json").write_text(json.dumps(events))
    rows = [
        # the first task: exact stream, start and task id
        f'50,4294967295,11053,2,MatMul1,MatMulV2,dynamic,AI_CORE,"{TS}\t",313.886,0,16,0,NO,'
        '"""32,9216;9216,4096""",FLOAT;FLOAT,ND;ND,"""32,4096""",FLOAT,ND,N/A,0.519,0.913,66.3',
        # same task id, other stream (3 has a task at another time only): no match
        f'50,4294967295,11053,3,MatMul1,MatMulV2,dynamic,AI_CORE,"{TS}\t",313.886,0,16,0,NO,'
        '"""1,1""",FLOAT,ND,"""1""",FLOAT,ND,N/A,0.1,0.1,1',
        # same name, a time where no task starts: no match
        '50,4294967295,11060,2,MatMul1,MatMulV2,dynamic,AI_CORE,"1736408883705903.919\t",'
        '100,0,16,0,NO,"""2,2""",FLOAT,ND,"""2""",FLOAT,ND,N/A,0.2,0.2,2',
    ]
    (out / "kernel_details.csv").write_text(KD_HEADER + "\n" + "\n".join(rows) + "\n")
    return out.parent


def test_kernel_details_rows_match_their_slice_exactly(tmp_path) -> None:
    index = load_trace(str(_ascend_profile(tmp_path)), use_cache=False)
    found = op_instances(index)
    assert found.source == "kernel_details.csv"
    assert len(found) == 3
    first = index.arrays["slices.start"] == TS_NS
    want = int(np.flatnonzero(first & (index.arrays["slices.dur"] == 313_886))[0])
    assert found.slice_rows.tolist() == [want, -1, -1]
    assert found.start_ns.tolist()[0] == TS_NS
    assert found.inputs[0] == [(32, 9216), (9216, 4096)]
    assert found.outputs[0] == [(32, 4096)]
    assert found.dtypes[0] == ["FLOAT", "FLOAT"]
    assert found.op_types[0] == "MatMulV2"
    assert found.counters[0]["aic_mac_ratio"] == 0.519
    assert found.counters[0]["cube_utilization(%)"] == 66.3
    assert found.counters[0]["Block Dim"] == 16
    assert found.hosts[0] == "aten::mm"
    assert found.groups == ["", "", ""]


def test_row_behind_a_device_slice_and_its_host_op(tmp_path) -> None:
    index = load_trace(str(_ascend_profile(tmp_path)), use_cache=False)
    task = int(op_instances(index).slice_rows[0])
    behind = row_behind(index, task)
    assert behind is not None and behind.source == "kernel_details.csv"
    assert behind.row["Task ID"] == "11053"
    assert behind.row["Start Time(us)"] == TS.strip()
    assert behind.row["Input Shapes"] == '"32,9216;9216,4096"'
    assert behind.host == ("aten::mm", [(32, 9216), (9216, 4096)], ["float", "float"])
    # the second task on stream 2 has no row (the row at its time is 1 ns later)
    other = int(np.flatnonzero(index.arrays["slices.dur"] == 100_000)[0])
    assert row_behind(index, other) is None
    host = int(np.flatnonzero([index.slice_name(i) == "aten::mm"
                               for i in range(index.n_slices)])[0])
    launched = row_behind(index, host)
    assert launched is not None and launched.launched == [(task, "MatMul1", 313_886)]
    assert launched.inputs == [(32, 9216), (9216, 4096)]


def test_op_instances_window_and_names(tmp_path) -> None:
    index = load_trace(str(_ascend_profile(tmp_path)), use_cache=False)
    assert len(op_instances(index, start_ns=TS_NS + 1)) == 1  # only the row 1 s later
    assert len(op_instances(index, end_ns=TS_NS + 1)) == 2
    assert len(op_instances(index, names={"MatMulV2"})) == 3
    assert len(op_instances(index, names={"Conv2D"})) == 0


def _kineto_events() -> list[dict]:
    return [
        {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 100,
         "dur": 60, "args": {"External id": 7, "Input Dims": [[64, 1024], [4096, 1024], [4096]],
                             "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 110,
         "dur": 40, "args": {"External id": 8, "Input Dims": [[4096], [64, 1024], [1024, 4096],
                                                                 [], []],
                             "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16",
                                            "Scalar", "Scalar"],
                             "Concrete Inputs": ["", "", "", "1", "1"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 120, "dur": 5, "args": {"External id": 8, "correlation": 42}},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7,
         "ts": 130, "dur": 25, "args": {"External id": 8, "correlation": 42, "stream": 7,
                                        "grid": [32, 2, 1], "block": [128, 1, 1],
                                        "registers per thread": 168, "shared memory": 98304,
                                        "est. achieved occupancy %": 12}},
        # a kernel whose External id names no op around its launch: no host
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 140, "dur": 5, "args": {"External id": 99, "correlation": 43}},
        {"ph": "X", "cat": "kernel", "name": "other_kernel", "pid": 0, "tid": 7, "ts": 160,
         "dur": 5, "args": {"External id": 99, "correlation": 43}},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 42, "pid": 1, "tid": 1, "ts": 120},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 42, "pid": 0, "tid": 7, "ts": 130,
         "bp": "e"},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 43, "pid": 1, "tid": 1, "ts": 140},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 43, "pid": 0, "tid": 7, "ts": 160,
         "bp": "e"},
    ]


def test_kineto_kernel_gets_its_host_ops_shapes(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", _kineto_events(),
                             deviceProperties=[{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]))
    found = op_instances(index)
    assert found.source == "trace"
    assert found.names == ["sm90_xmma_gemm_bf16", "other_kernel"]
    assert found.hosts == ["aten::addmm", ""]  # by External id, not the outer aten::linear
    assert found.op_types[0] == "aten::addmm"
    assert found.inputs[0] == [(4096,), (64, 1024), (1024, 4096), None, None]
    assert found.dtypes[0][:3] == ["c10::BFloat16"] * 3
    assert found.concrete[0] == ["", "", "", "1", "1"]
    assert found.counters[0] == {"grid": 64.0, "block": 128.0, "registers per thread": 168.0,
                                 "shared memory": 98304.0, "est. achieved occupancy %": 12.0}
    assert found.inputs[1] == [] and found.start_ns.tolist() == [130_000, 160_000]
    kernel = int(found.slice_rows[0])
    behind = row_behind(index, kernel)
    assert behind is not None and behind.row["correlation"] == "42"
    assert behind.host is not None and behind.host[0] == "aten::addmm"
    linear = int(np.flatnonzero([index.slice_name(i) == "aten::linear"
                                 for i in range(index.n_slices)])[0])
    launched = row_behind(index, linear)
    assert launched is not None
    assert [t[1] for t in launched.launched] == ["sm90_xmma_gemm_bf16", "other_kernel"]
    assert device_name(index) == "NVIDIA H100 80GB HBM3"


def test_sqlite_compute_task_info_rows(tmp_path) -> None:
    tables = dict(TABLES)
    tables["COMPUTE_TASK_INFO"] = (
        "name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockDim INTEGER, "
        "mixBlockDim INTEGER, taskType INTEGER, opType INTEGER, inputShapes INTEGER, "
        "inputDataTypes INTEGER, waitNs INTEGER", [(2, 1, 8, 0, 4, 3, 90, 91, 0)])
    strings = dict(tables["STRING_IDS"][1])
    strings.update({90: '"4,8;4,8"', 91: "FLOAT16;FLOAT16", 92: "aic_mac_ratio"})
    tables["STRING_IDS"] = (tables["STRING_IDS"][0], sorted(strings.items()))
    tables["TASK_PMU_INFO"] = (tables["TASK_PMU_INFO"][0], [(1, 92, 0.25)])
    folder = tmp_path / "w_1_ascend_pt"
    write_db(folder / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db", tables)
    index = load_trace(str(folder), use_cache=False)
    found = op_instances(index)
    assert found.source == "COMPUTE_TASK_INFO"
    assert found.names == ["aclnnMuls_MulAiCore_Mul"] and found.op_types == ["Mul"]
    assert found.start_ns.tolist() == [T + 1000] and found.dur_ns.tolist() == [500]
    assert found.inputs == [[(4, 8), (4, 8)]] and found.dtypes == [["FLOAT16", "FLOAT16"]]
    assert found.counters == [{"Block Dim": 8.0, "Mix Block Dim": 0.0, "aic_mac_ratio": 0.25}]
    i = int(found.slice_rows[0])
    assert index.slice_name(i) == "aclnnMuls_MulAiCore_Mul"
    assert int(index.arrays["slices.start"][i]) == T + 1000
    behind = row_behind(index, i)
    assert behind is not None and behind.row["taskId"] == "10"
    assert behind.row["aic_mac_ratio"] == "0.25"
    assert device_name(index) == "Ascend910B"
