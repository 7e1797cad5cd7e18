#!/usr/bin/env python3
"""Regenerate the bundled sample profiles (deterministic): `python samples/make_samples.py`.

ascend_cann8/, ascend_old_layout/ and torch_npu/ come from ascend_samples.py (one simulated
run in the layouts msprof and torch_npu write).

kineto_demo.pt.trace.json: a PyTorch-profiler (Kineto) style trace of a small training run:
eight ProfilerStep#N iterations on the main thread with nested cpu_op / cuda_runtime slices, a
backward pass on the autograd thread, GPU kernels on two streams joined to their launches by
ac2g flows, a memory counter, and one slow step whose dataloader starves the GPU.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
PID, MAIN_TID, BWD_TID = 41207, 41207, 41388
COMPUTE_STREAM, COMM_STREAM = 7, 13
BASE_US = 1_717_990_000_000_000  # epoch microseconds, as older Kineto writes them

FORWARD = [("aten::conv2d", "void cudnn::cnn::conv2d_fprop_kernel<float>", 380),
           ("aten::batch_norm", "void at::native::batch_norm_collect_statistics_kernel", 90),
           ("aten::relu_", "void at::native::vectorized_elementwise_kernel<4, relu>", 35),
           ("aten::linear", "ampere_sgemm_128x64_tn", 260),
           ("aten::dropout", "void at::native::fused_dropout_kernel_vec<float>", 140),
           ("aten::cross_entropy_loss", "void at::native::nll_loss_forward_reduce_cuda_kernel", 60)]


def _x(name: str, cat: str, ts: float, dur: float, tid: int, pid: int = PID, **args) -> dict:
    event = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
             "ts": round(ts, 3), "dur": round(dur, 3)}
    if args:
        event["args"] = args
    return event


def kineto_demo() -> dict:
    rng = random.Random(7)
    events: list[dict] = []
    meta = [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": PID, "tid": 0, "args": {"labels": "CPU"}},
        {"ph": "M", "name": "process_sort_index", "pid": PID, "tid": 0,
         "args": {"sort_index": PID}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": MAIN_TID,
         "args": {"name": "thread 41207 (python)"}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": BWD_TID,
         "args": {"name": "thread 41388 (pt_autograd_0)"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "M", "name": "process_sort_index", "pid": 0, "tid": 0,
         "args": {"sort_index": 5000000}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": COMPUTE_STREAM,
         "args": {"name": "stream 7"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": COMM_STREAM,
         "args": {"name": "stream 13 (nccl)"}},
    ]
    correlation = 1000
    ts = 0.0
    gpu_free = 0.0
    memory = 1800.0
    for step in range(1, 9):
        step_start = ts
        slow = step == 6  # the starved step: the dataloader takes most of it
        ops: list[dict] = []
        load = 4200.0 if slow else 350.0 + rng.random() * 60
        ops.append(_x("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                      "user_annotation", ts + 5, load, MAIN_TID))
        cursor = ts + 10 + load
        kernels: list[tuple[str, float, float, int]] = []
        for op, kernel, kdur in FORWARD:
            kdur *= 0.9 + rng.random() * 0.2
            op_dur = 40 + rng.random() * 30
            ops.append(_x(op, "cpu_op", cursor, op_dur, MAIN_TID,
                          **{"External id": correlation, "Input Dims": [[32, 3, 224, 224]]}))
            launch = cursor + op_dur * 0.4
            ops.append(_x("cudaLaunchKernel", "cuda_runtime", launch, 8.5, MAIN_TID,
                          correlation=correlation))
            kstart = max(gpu_free, launch + 12)
            kernels.append((kernel, kstart, kdur, correlation))
            events.append({"ph": "s", "id": correlation, "pid": PID, "tid": MAIN_TID,
                           "ts": round(launch, 3), "cat": "ac2g", "name": "ac2g"})
            events.append({"ph": "f", "id": correlation, "pid": 0, "tid": COMPUTE_STREAM,
                           "ts": round(kstart, 3), "cat": "ac2g", "name": "ac2g", "bp": "e"})
            gpu_free = kstart + kdur
            correlation += 1
            cursor += op_dur + 5
        backward_start = cursor + 10
        bwd = _x("autograd::engine::evaluate_function: ConvolutionBackward0", "cpu_op",
                 backward_start, 900 + rng.random() * 80, BWD_TID)
        ops.append(bwd)
        bstart = max(gpu_free, backward_start + 20)
        kernels.append(("void cudnn::cnn::wgrad_alg0_engine<float, 128, 6>", bstart, 1400, 0))
        gpu_free = bstart + 1400
        allreduce = gpu_free - 700
        kernels.append(("ncclDevKernel_AllReduce_Sum_f32_RING_LL", allreduce, 650, -1))
        ops.append(_x("Optimizer.step#SGD.step", "user_annotation", bwd["ts"] + bwd["dur"] + 20,
                      180, MAIN_TID))
        step_end = max(gpu_free, bwd["ts"] + bwd["dur"] + 220) + 30
        events.append(_x(f"ProfilerStep#{step}", "user_annotation", step_start,
                         step_end - step_start, MAIN_TID))
        events.extend(ops)
        for name, kstart, kdur, corr in kernels:
            stream = COMM_STREAM if corr == -1 else COMPUTE_STREAM
            args = {"correlation": corr, "stream": stream, "grid": [128, 1, 1],
                    "block": [256, 1, 1]} if corr > 0 else {"stream": stream}
            events.append(_x(name, "kernel", kstart, kdur, stream, pid=0, **args))
        events.append(_x(f"ProfilerStep#{step}", "gpu_user_annotation", step_start + 20,
                         step_end - step_start - 40, COMPUTE_STREAM, pid=0))
        memory += rng.random() * 40 - 15
        events.append({"ph": "C", "name": "GPU 0 Memory", "pid": 0, "ts": round(step_start, 3),
                       "args": {"Allocated (MB)": round(memory, 3)}})
        ts = step_end + 15
    events.append({"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "",
                   "ts": round(ts, 3)})
    for ev in events:
        if "ts" in ev:
            ev["ts"] = round(BASE_US + ev["ts"], 3)
    # Kineto writes CPU and GPU events in chunks, not in time order; metadata comes first.
    return {"schemaVersion": 1, "displayTimeUnit": "ms",
            "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
            "traceEvents": meta + events, "traceName": "kineto_demo.pt.trace.json"}


def write_all(out: Path) -> None:
    """Write every sample profile under `out`."""
    import shutil
    import sys

    sys.path.insert(0, str(HERE))
    import ascend_samples

    for name, write in (("ascend_cann8", ascend_samples.cann8),
                        ("ascend_old_layout", ascend_samples.old_layout),
                        ("torch_npu", ascend_samples.torch_npu)):
        shutil.rmtree(out / name, ignore_errors=True)
        write(out / name)
    trace = kineto_demo()
    with open(out / "kineto_demo.pt.trace.json", "w", encoding="utf-8") as f:
        f.write('{\n  "schemaVersion": 1,\n  "displayTimeUnit": "ms",\n')
        f.write(f'  "distributedInfo": {json.dumps(trace["distributedInfo"])},\n')
        f.write('  "traceEvents": [\n')
        f.write(",\n".join("  " + json.dumps(ev) for ev in trace["traceEvents"]))
        f.write(f'\n  ],\n  "traceName": {json.dumps(trace["traceName"])}\n}}\n')


def main() -> None:
    write_all(HERE)
    print(f"wrote the samples under {HERE}")


if __name__ == "__main__":
    main()
