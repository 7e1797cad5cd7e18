"""Ascend sample profiles for samples/make_samples.py: CANN 8 and old-layout msprof, torch_npu.

One simulated training run (six iterations of a small network on one NPU) is written in the
three layouts users open. Its story: DropOutDoMask runs on the AI CPU and dominates every
iteration (the well-known fix is to move it to the AI Core), and iteration 4 is slow because
the host starves the device (a long gap before its forward pass).
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

# (op type, task type, stream, duration µs) per forward/backward pass
OPS = [("Conv2D", "AI_CORE", 2, 180.0), ("BNTrainingUpdate", "AI_VECTOR_CORE", 2, 45.0),
       ("Relu", "AI_VECTOR_CORE", 2, 12.0), ("MatMulV2", "AI_CORE", 2, 140.0),
       ("DropOutDoMask", "AI_CPU", 3, 910.0), ("Cast", "AI_VECTOR_CORE", 2, 8.0),
       ("SoftmaxCrossEntropyWithLogits", "AI_CORE", 2, 60.0),
       ("Conv2DBackpropFilter", "AI_CORE", 2, 240.0), ("MatMulV2", "AI_CORE", 2, 150.0),
       ("DropOutDoMask", "AI_CPU", 3, 880.0), ("ApplyMomentum", "AI_VECTOR_CORE", 2, 30.0)]
STEPS = 6
SLOW_STEP = 4


@dataclass
class Task:
    step: int
    index: int
    op_type: str
    task_type: str
    stream: int
    start_us: float  # device time, µs since the run's start
    dur_us: float
    launch_us: float  # host time of the launch

    @property
    def name(self) -> str:
        return f"Default/network/{self.op_type}-op{100 + self.index}"


@dataclass
class Step:
    number: int
    start_us: float
    fp_start_us: float
    bp_end_us: float
    end_us: float


def simulate(seed: int = 11) -> tuple[list[Task], list[Step]]:
    rng = random.Random(seed)
    tasks, steps = [], []
    now = 0.0
    for number in range(1, STEPS + 1):
        start = now
        now += 2600.0 if number == SLOW_STEP else 120.0 + rng.random() * 30  # data wait
        fp_start = now
        for op_type, task_type, stream, dur in OPS:
            dur *= 0.93 + rng.random() * 0.14
            launch = now - 40.0 - rng.random() * 20
            tasks.append(Task(number, len(tasks), op_type, task_type, stream, now, dur, launch))
            now += dur + 3.0 + rng.random() * 4
        bp_end = now
        hccl = Task(number, len(tasks), "hcom_allReduce_", "HCCL", 13, now, 210.0, now - 30)
        tasks.append(hccl)
        now += 230.0
        steps.append(Step(number, start, fp_start, bp_end, now))
        now += 15.0
    return tasks, steps


def _us(value: float) -> str:
    """µs with exactly three decimals, as msprof and torch_npu write timestamps."""
    return f"{value:.3f}"


def _ns_text(ns: int) -> str:
    """Epoch ns as torch_npu writes a timestamp: µs with the ns as three decimals."""
    return f"{ns // 1000}.{ns % 1000:03d}"


def _write_csv(path: Path, header: list[str], rows: list[list], tab: tuple[int, ...] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row in rows:
            writer.writerow([f"{v}\t" if i in tab else v for i, v in enumerate(row)])


def _op_statistic(tasks: list[Task]) -> list[list]:
    by_type: dict[tuple[str, str], list[float]] = {}
    for t in tasks:
        by_type.setdefault((t.op_type, t.task_type), []).append(t.dur_us)
    total = sum(t.dur_us for t in tasks)
    rows = [[op, core, len(d), round(sum(d), 3), round(min(d), 3), round(sum(d) / len(d), 3),
             round(max(d), 3), round(100 * sum(d) / total, 3)]
            for (op, core), d in by_type.items()]
    return sorted(rows, key=lambda r: -r[3])


def cann8(root: Path, base_us: float = 1780676244000000.0) -> None:
    """PROF dir of CANN 8: sliced msprof JSON and the summary CSVs."""
    tasks, steps = simulate()
    out = root / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA" / "mindstudio_profiler_output"
    out.mkdir(parents=True, exist_ok=True)
    host_pid, hw_pid = 2717763839, 2717764000
    meta = [
        {"ph": "M", "name": "process_name", "pid": host_pid, "tid": 0, "args": {"name": "CANN"}},
        {"ph": "M", "name": "process_labels", "pid": host_pid, "tid": 0, "args": {"labels": "CPU"}},
        {"ph": "M", "name": "process_sort_index", "pid": host_pid, "tid": 0,
         "args": {"sort_index": 7}},
        {"ph": "M", "name": "thread_name", "pid": host_pid, "tid": 2654066,
         "args": {"name": "Thread 2654066"}},
        {"ph": "M", "name": "process_name", "pid": hw_pid, "tid": 0,
         "args": {"name": "Ascend Hardware"}},
        {"ph": "M", "name": "process_labels", "pid": hw_pid, "tid": 0,
         "args": {"labels": "NPU 0"}},
        {"ph": "M", "name": "process_sort_index", "pid": hw_pid, "tid": 0,
         "args": {"sort_index": 13}},
    ] + [{"ph": "M", "name": "thread_name", "pid": hw_pid, "tid": s,
          "args": {"name": f"Stream {s}"}} for s in (2, 3, 13)]
    events = []
    for t in tasks:
        conn = 141733920768 + t.index
        events.append({"ph": "X", "name": "AscendCL@aclopCompileAndExecute", "pid": host_pid,
                       "tid": 2654066, "ts": _us(base_us + t.launch_us), "dur": 18.5,
                       "args": {"Thread Id": 2654066, "Mode": "ACL_OP", "level": "acl"}})
        events.append({"ph": "X", "name": t.name, "pid": hw_pid, "tid": t.stream,
                       "ts": _us(base_us + t.start_us), "dur": round(t.dur_us, 3),
                       "args": {"Model Id": 2, "Task Type": t.task_type,
                                "Physic Stream Id": t.stream, "Task Id": t.index,
                                "connection_id": t.index}})
        events.append({"ph": "s", "cat": "HostToDevice", "id": str(conn),
                       "name": f"HostToDevice{conn}", "pid": host_pid, "tid": 2654066,
                       "ts": _us(base_us + t.launch_us + 1)})
        events.append({"ph": "f", "bp": "e", "cat": "HostToDevice", "id": str(conn),
                       "name": f"HostToDevice{conn}", "pid": hw_pid, "tid": t.stream,
                       "ts": _us(base_us + t.start_us)})
    half = len(events) // 2
    for number, part in enumerate((meta + events[:half], events[half:])):
        with open(out / f"msprof_slice_{number}_20260605161734.json", "w") as f:
            json.dump(part, f, indent=1)
    _write_csv(out / "op_summary_20260605161737.csv",
               ["Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type",
                "OP State", "Task Type", "Task Start Time(us)", "Task Duration(us)",
                "Task Wait Time(us)", "Block Dim", "Mix Block Dim", "HF32 Eligible",
                "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
                "Output Data Types", "Output Formats", "Context ID", "aicore_time(us)"],
               [[0, 2, t.index, t.stream, t.name, t.op_type, "static", t.task_type,
                 _us(base_us + t.start_us), round(t.dur_us, 3), 0,
                 32 if t.task_type == "AI_CORE" else 0, 0, "NO", '"32,3,224,224"', "FLOAT16",
                 "NCHW", '"32,64,112,112"', "FLOAT16", "NC1HWC0", "N/A",
                 round(t.dur_us * 0.9, 3) if t.task_type.startswith("AI_") else "N/A"]
                for t in tasks], tab=(8,))
    _write_csv(out / "op_statistic_20260605161737.csv",
               ["Device_id", "OP Type", "Core Type", "Count", "Total Time(us)",
                "Min Time(us)", "Avg Time(us)", "Max Time(us)", "Ratio(%)"],
               [[0, *r] for r in _op_statistic(tasks)])
    _write_csv(out / "aicpu_20260605161737.csv",
               ["Device_id", "Timestamp(us)", "Node", "Compute_time(us)", "Memcpy_time(us)",
                "Task_time(us)", "Dispatch_time(us)", "Total_time(us)", "Stream ID", "Task ID"],
               [[0, _us(base_us + t.start_us), t.name, round(t.dur_us * 0.8, 3),
                 round(t.dur_us * 0.1, 3), round(t.dur_us * 0.95, 3), 12.5,
                 round(t.dur_us, 3), t.stream, t.index]
                for t in tasks if t.task_type == "AI_CPU"], tab=(1,))
    _write_csv(out / "step_trace_20260605161737.csv",
               ["Device_id", "Iteration ID", "FP Start(us)", "BP End(us)", "Iteration End(us)",
                "Iteration Time(us)", "FP to BP Time(us)", "Iteration Refresh(us)",
                "Data Aug Bound(us)", "Model ID", "Reduce Start(us)", "Reduce Duration(us)"],
               [[0, s.number, _us(base_us + s.fp_start_us), _us(base_us + s.bp_end_us),
                 _us(base_us + s.end_us), round(s.end_us - s.start_us, 3),
                 round(s.bp_end_us - s.fp_start_us, 3), round(s.end_us - s.bp_end_us, 3),
                 "N/A" if i == 0 else round(s.fp_start_us - steps[i - 1].end_us, 3), 2,
                 _us(base_us + s.bp_end_us), 210.0]
                for i, s in enumerate(steps)], tab=(2, 3, 4))


def old_layout(root: Path, base_us: float = 56635864386.8) -> None:
    """PROF dir of CANN 6 and before: one msprof JSON per iteration, float µs timestamps."""
    tasks, steps = simulate(seed=12)
    device = root / "PROF_000001_20230818142704322_COJGGGCANRMICFBC" / "device_0"
    timeline = device / "timeline"
    timeline.mkdir(parents=True, exist_ok=True)
    for s in steps:
        events = [{"name": "process_name", "pid": 3, "tid": 0, "args": {"name": "Ascend Hardware"},
                   "ph": "M"},
                  {"name": "thread_name", "pid": 3, "tid": 10036,
                   "args": {"name": "Step Trace(Model ID:1)"}, "ph": "M"}]
        events += [{"name": "thread_name", "pid": 3, "tid": st, "args": {"name": f"Stream {st}"},
                    "ph": "M"} for st in (2, 3, 13)]
        for t in tasks:
            if t.step == s.number:
                events.append({"name": t.name, "pid": 3, "tid": t.stream,
                               "ts": round(base_us + t.start_us, 6), "dur": round(t.dur_us, 3),
                               "args": {"Task Type": t.task_type, "Stream Id": t.stream,
                                        "Task Id": t.index}, "ph": "X"})
        events += [
            {"name": f"Iteration {s.number}", "pid": 3, "tid": 10036,
             "ts": round(base_us + s.start_us, 3), "dur": round(s.end_us - s.start_us, 3),
             "ph": "X", "cat": "Iteration Time",
             "args": {"Iteration ID": s.number,
                      "Iteration Time(ns)": round((s.end_us - s.start_us) * 1000, 1)}},
            {"name": f"FP_BP Time {s.number}", "pid": 3, "tid": 10036,
             "ts": round(base_us + s.fp_start_us, 3), "dur": round(s.bp_end_us - s.fp_start_us, 3),
             "ph": "X", "cat": "FP_BP Time"},
            {"name": f"Iteration Refresh {s.number}", "pid": 3, "tid": 10036,
             "ts": round(base_us + s.bp_end_us, 3), "dur": round(s.end_us - s.bp_end_us, 3),
             "ph": "X", "cat": "Iteration Refresh"},
        ]
        with open(timeline / f"msprof_0_1_{s.number}.json", "w") as f:
            json.dump(events, f)
    summary = device / "summary"
    _write_csv(summary / "op_summary_0_1_1.csv",
               ["Model Name", "Model ID", "Task ID", "Stream ID", "Infer ID", "Op Name",
                "OP Type", "Task Type", "Task Start Time", "Task Duration(us)",
                "Task Wait Time(us)", "Block Dim"],
               [["resnet", 1, t.index, t.stream, t.step, t.name, t.op_type, t.task_type,
                 round(base_us + t.start_us, 3), round(t.dur_us, 3), 0, 32] for t in tasks])
    _write_csv(summary / "op_statistic_0_1_1.csv",
               ["Model Name", "OP Type", "Core Type", "Count", "Total Time(us)",
                "Min Time(us)", "Avg Time(us)", "Max Time(us)", "Ratio(%)"],
               [["resnet", *r] for r in _op_statistic(tasks)])


def torch_npu(root: Path, base_ns: int = 1704161511420289011) -> None:
    """A torch_npu `*_ascend_pt` output: trace_view.json with the CSVs beside it."""
    tasks, steps = simulate(seed=13)
    out = root / "node1_437675_20260101120000000_ascend_pt"
    prof = out / "ASCEND_PROFILER_OUTPUT"
    prof.mkdir(parents=True, exist_ok=True)
    pid, cann, hw = 437675, 43767502, 800

    def ts(us: float) -> str:
        return _ns_text(base_ns + round(us * 1000))

    names = ((pid, "Python", 0), (cann, "CANN", 7), (hw, "Ascend Hardware", 13))
    events = [{"ph": "M", "name": "process_name", "pid": p, "tid": 0, "args": {"name": n}}
              for p, n, _ in names]
    events += [{"ph": "M", "name": "process_sort_index", "pid": p, "tid": 0,
                "args": {"sort_index": i}} for p, _, i in names]
    events += [{"ph": "M", "name": "thread_name", "pid": hw, "tid": st,
                "args": {"name": f"Stream {st}"}} for st in (2, 3, 13)]
    for s in steps:
        events.append({"ph": "X", "name": f"ProfilerStep#{s.number}", "cat": "user_annotation",
                       "pid": pid, "tid": pid, "ts": ts(s.start_us - 60),
                       "dur": round(s.end_us - s.start_us + 50, 3)})
    for t in tasks:
        flow_id = base_ns + round(t.start_us * 1000)  # the device task's ts in ns (> 2^53)
        events += [
            {"ph": "X", "name": f"aten::{t.op_type.lower()}", "cat": "cpu_op", "pid": pid,
             "tid": pid, "ts": ts(t.launch_us - 5), "dur": 25.0,
             "args": {"Sequence number": t.index}},
            {"ph": "X", "name": f"aclnn{t.op_type}", "cat": "cann", "pid": cann, "tid": pid,
             "ts": ts(t.launch_us), "dur": 15.0},
            {"ph": "X", "name": t.op_type, "pid": hw, "tid": t.stream, "ts": ts(t.start_us),
             "dur": round(t.dur_us, 3), "args": {"Task Type": t.task_type,
                                                 "Physic Stream Id": t.stream}},
            {"ph": "s", "bp": "e", "name": "torch_to_npu", "cat": "async_npu", "id": flow_id,
             "pid": pid, "tid": pid, "ts": ts(t.launch_us - 4)},
            {"ph": "f", "bp": "e", "name": "torch_to_npu", "cat": "async_npu", "id": flow_id,
             "pid": hw, "tid": t.stream, "ts": ts(t.start_us)},
        ]
    with open(prof / "trace_view.json", "w") as f:
        json.dump(events, f)
    _write_csv(prof / "kernel_details.csv",
               ["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type",
                "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)",
                "Block Dim"],
               [[t.step, 4294967295, t.index, t.stream, t.op_type, t.op_type, t.task_type,
                 ts(t.start_us), round(t.dur_us, 3), 0, 24] for t in tasks], tab=(7,))
    _write_csv(prof / "op_statistic.csv",
               ["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)",
                "Avg Time(us)", "Max Time(us)", "Ratio(%)"], _op_statistic(tasks))
    _write_csv(prof / "step_trace_time.csv",
               ["Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
                "Communication", "Free", "Stage", "Bubble"],
               [[s.number, round(s.bp_end_us - s.fp_start_us, 3), 210.0, 0, 210.0,
                 round(s.fp_start_us - s.start_us + 20, 3), 0, 0] for s in steps])
    with open(out / "profiler_info_0.json", "w") as f:
        json.dump({"config": {"common_config": {"activities": ["CPU", "NPU"]}}, "rank_id": 0}, f)
