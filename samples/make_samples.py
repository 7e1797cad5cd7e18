#!/usr/bin/env python3
"""Regenerate the bundled sample profiles (deterministic): `python samples/make_samples.py`.

ascend_cann8/, ascend_old_layout/ and torch_npu/ come from ascend_samples.py (one simulated
run in the layouts msprof and torch_npu write); cluster_2rank/ from ascend_cluster.py (two
ranks of a torch_npu job, one slow in one step, one link slow).

kineto_demo.pt.trace.json: a PyTorch-profiler (Kineto) style trace of a small training run:
eight ProfilerStep#N iterations on the main thread with nested cpu_op / cuda_runtime slices, a
backward pass on the autograd thread, GPU kernels on two streams joined to their launches by
ac2g flows, a memory counter, and one slow step whose dataloader starves the GPU.

diff_before.pt.trace.json and diff_after.pt.trace.json: the "did my fix help" pair for
`proftui diff`, the same small model for eight steps each, captured a day apart. Before is
input-bound: each step starts with a ~6 ms single-process DataLoader __next__ (the GPU idle)
and a pageable host-to-device copy (aten::to), then ~4 ms of kernels; step ~10.5 ms. After has
the loader fixed (workers, pinned memory: aten::pin_memory, a pinned copy, a ~0.2 ms __next__)
and the same kernels (±3 % jitter); step ~4.8 ms. Two kernel names differ only by a generated
part (a Triton kernel's suffix, a template argument), for name normalisation.
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


# What record_shapes=True writes for each forward op: Input Dims, Input type and the scalars
# (Concrete Inputs), so that the op efficiency has shapes to model (a ResNet-style stem).
SHAPES = {
    "aten::conv2d": ([[8, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []],
                     ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
                     ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"]),
    "aten::batch_norm": ([[8, 64, 56, 56], [64], [64], [64], [64], [], [], [], []],
                         ["float"] * 5 + ["Scalar"] * 4, ["", "", "", "", "", "True", "0.1",
                                                          "1e-05", "True"]),
    "aten::relu_": ([[8, 64, 56, 56]], ["float"], [""]),
    "aten::linear": ([[8, 2048], [1000, 2048], [1000]], ["float", "float", "float"],
                     ["", "", ""]),
    "aten::dropout": ([[8, 1000], [], []], ["float", "Scalar", "Scalar"], ["", "0.5", "True"]),
    "aten::cross_entropy_loss": ([[8, 1000], [8], [], [], [], []],
                                 ["float", "long int", "", "Scalar", "Scalar", "Scalar"],
                                 ["", "", "", "1", "-100", "0."]),
}


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
            dims, types, concrete = SHAPES[op]
            ops.append(_x(op, "cpu_op", cursor, op_dur, MAIN_TID,
                          **{"External id": correlation, "Input Dims": dims,
                             "Input type": types, "Concrete Inputs": concrete}))
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
    return {"schemaVersion": 1, "deviceProperties": DEVICE_PROPERTIES, "displayTimeUnit": "ms",
            "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
            "traceEvents": meta + events, "traceName": "kineto_demo.pt.trace.json"}


# The diff pair: one model, before and after fixing its input pipeline.
DIFF_PID, DIFF_MAIN_TID, DIFF_BWD_TID = 52114, 52114, 52301
DIFF_BASE_US = 1_718_604_000_000_000  # before; after is captured a day later
DAY_US = 86_400_000_000
DEVICE_PROPERTIES = [{
    "id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344,
    "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
    "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
    "sharedMemPerMultiprocessor": 167936, "numSms": 108, "sharedMemPerBlockOptin": 166912}]
# (host op, kernel, kernel µs); {dtype} and {triton} are the parts that differ between the two.
DIFF_FORWARD = [
    ("aten::zeros", "void at::native::vectorized_elementwise_kernel<4, "
                    "at::native::FillFunctor<{dtype}>>", 12),
    ("aten::conv2d", "void cudnn::cnn::conv2d_fprop_kernel<float>", 700),
    ("aten::batch_norm", "void at::native::batch_norm_collect_statistics_kernel", 140),
    ("aten::relu", "triton_poi_fused_add_relu_{triton}", 45),
    ("aten::linear", "ampere_sgemm_128x64_tn", 450),
    ("aten::cross_entropy_loss", "void at::native::nll_loss_forward_reduce_cuda_kernel", 55)]
DIFF_BACKWARD = [
    ("autograd::engine::evaluate_function: NllLossBackward0",
     "void at::native::nll_loss_backward_reduce_cuda_kernel", 40),
    ("autograd::engine::evaluate_function: AddmmBackward0", "ampere_sgemm_64x32_sliced1x4_nt",
     460),
    ("autograd::engine::evaluate_function: ReluBackward0",
     "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl>", 50),
    ("autograd::engine::evaluate_function: CudnnBatchNormBackward0",
     "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>", 180),
    ("autograd::engine::evaluate_function: ConvolutionBackward0",
     "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6>", 1500)]
DIFF_OPTIMIZER = [
    ("Optimizer.step#Adam.step", "void at::native::(anonymous namespace)::multi_tensor_apply_"
     "kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, "
     "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>", 660)]


def diff_pair(fixed: bool) -> dict:
    """diff_before (fixed=False) or diff_after (fixed=True): see the module docstring."""
    rng = random.Random(23 if fixed else 22)
    subs = {"dtype": "c10::Half" if fixed else "float", "triton": "1" if fixed else "0"}
    pid, main, bwd = DIFF_PID + fixed, DIFF_MAIN_TID + fixed, DIFF_BWD_TID + fixed
    name = "diff_after.pt.trace.json" if fixed else "diff_before.pt.trace.json"
    meta = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": main,
         "args": {"name": f"thread {main} (python)"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": bwd,
         "args": {"name": f"thread {bwd} (pt_autograd_0)"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": COMPUTE_STREAM,
         "args": {"name": f"stream {COMPUTE_STREAM}"}},
    ]
    host: list[dict] = []
    device: list[dict] = []
    flows: list[dict] = []
    state = {"corr": 800, "ext": 400, "gpu_free": 0.0}

    def jitter(us: float, spread: float = 0.03) -> float:
        return us * (1 - spread + rng.random() * 2 * spread)

    def op(label: str, ts: float, dur: float, tid: int, **args) -> dict:
        state["ext"] += 1
        event = _x(label, "cpu_op", ts, dur, tid, pid, **{"External id": state["ext"], **args})
        host.append(event)
        return event

    def launch(ts: float, tid: int, gpu_name: str, gpu_us: float, copy: int = 0) -> float:
        """A runtime call at ts launching one GPU op; returns the call's end."""
        corr = state["corr"] = state["corr"] + 1
        start = max(state["gpu_free"] + 1 + rng.random() * 2, ts + 9)  # kernels queue
        if copy:  # cudaMemcpyAsync: a pageable copy holds the host until it is done
            call = (start + gpu_us - ts + 4) if not fixed else 7.5
            host.append(_x("cudaMemcpyAsync", "cuda_runtime", ts, call, tid, pid,
                           cbid=41, correlation=corr))
            device.append(_x(gpu_name, "gpu_memcpy", start, gpu_us, COMPUTE_STREAM, 0,
                             device=0, context=1, stream=COMPUTE_STREAM, correlation=corr,
                             bytes=copy, **{"memory bandwidth (GB/s)":
                                            round(copy / gpu_us / 1e3, 3)}))
        else:
            call = jitter(6.5, 0.2)
            host.append(_x("cudaLaunchKernel", "cuda_runtime", ts, call, tid, pid,
                           cbid=211, correlation=corr))
            device.append(_x(gpu_name, "kernel", start, gpu_us, COMPUTE_STREAM, 0,
                             device=0, context=1, stream=COMPUTE_STREAM, correlation=corr,
                             grid=[216, 1, 1], block=[256, 1, 1]))
        flows.append({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": round(ts, 3),
                      "cat": "ac2g", "name": "ac2g"})
        flows.append({"ph": "f", "id": corr, "pid": 0, "tid": COMPUTE_STREAM,
                      "ts": round(start, 3), "cat": "ac2g", "name": "ac2g", "bp": "e"})
        state["gpu_free"] = start + gpu_us
        return ts + call

    def layer(label: str, kernel: str, kernel_us: float, ts: float, tid: int,
              **args) -> float:
        """A host op launching its kernel; returns where the next op may start."""
        before_launch = jitter(18, 0.3)
        end = launch(ts + before_launch, tid, kernel.format(**subs), jitter(kernel_us))
        dur = end - ts + jitter(6, 0.3)
        op(label, ts, dur, tid, **args)
        return ts + dur + jitter(9, 0.3)

    batch = [[64, 3, 64, 64], [64]]
    ts = 0.0
    for step in range(1, 9):
        step_start = ts
        cursor = ts + 4
        if fixed:  # workers load ahead: __next__ only takes a ready, pinned batch
            load = jitter(200, 0.1)
            op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", cursor, load,
               main)
            cursor += load + 3
            pin = jitter(38, 0.1)
            op("aten::pin_memory", cursor, pin, main, **{"Input Dims": batch})
            cursor += pin + 4
            copy_ts = cursor
            end = launch(copy_ts + 5, main, "Memcpy HtoD (Pinned -> Device)", jitter(150),
                         copy=3_145_728)
            op("aten::copy_", copy_ts, end - copy_ts + 3, main,
               **{"Input Dims": [[64, 3, 64, 64], [64, 3, 64, 64], []]})
            cursor = end + 8
        else:  # single process: decode and augment in the step, then a pageable copy
            load = jitter(5800)
            op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", cursor, load,
               main)
            cursor += load + 6
            copy_ts = cursor
            state["gpu_free"] = max(state["gpu_free"], copy_ts)
            end = launch(copy_ts + 12, main, "Memcpy HtoD (Pageable -> Device)", jitter(300),
                         copy=3_145_728)
            op("aten::to", copy_ts, end - copy_ts + 5, main,
               **{"Input Dims": [[64, 3, 64, 64], [], [], [], [], [], [], []]})
            op("aten::copy_", copy_ts + 6, end - copy_ts - 4, main,
               **{"Input Dims": [[64, 3, 64, 64], [64, 3, 64, 64], []]})
            cursor = end + 12
        for label, kernel, kernel_us in DIFF_FORWARD:
            cursor = layer(label, kernel, kernel_us, cursor, main, **{"Input Dims": batch[:1]})
        backward_ts = cursor + 15
        host.append(_x("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
                       "cpu_op", backward_ts - 12, 4, bwd, pid))
        cursor = backward_ts
        for label, kernel, kernel_us in DIFF_BACKWARD:
            # the autograd thread runs ahead of the GPU only as far as the caching allocator
            cursor = max(layer(label, kernel, kernel_us, cursor, bwd),
                         state["gpu_free"] - 900)
        cursor = max(cursor, state["gpu_free"] - 700) + 20
        for label, kernel, kernel_us in DIFF_OPTIMIZER:
            cursor = layer(label, kernel, kernel_us, cursor, main)
        step_end = max(state["gpu_free"], cursor) + jitter(40, 0.3)
        host.append(_x(f"ProfilerStep#{step}", "user_annotation", step_start,
                       step_end - step_start, main, pid))
        ts = step_end + 6
    events = meta + host + device + flows
    base = DIFF_BASE_US + (DAY_US if fixed else 0)
    for ev in events:
        if "ts" in ev:
            ev["ts"] = round(base + ev["ts"], 3)
    return {"schemaVersion": 1, "deviceProperties": DEVICE_PROPERTIES,
            "distributedInfo": {"rank": 0, "world_size": 1},
            "displayTimeUnit": "ms", "traceEvents": events, "traceName": name}


def write_all(out: Path) -> None:
    """Write every sample profile under `out`."""
    import shutil
    import sys

    sys.path.insert(0, str(HERE))
    import ascend_cluster
    import ascend_samples

    for name, write in (("ascend_cann8", ascend_samples.cann8),
                        ("ascend_old_layout", ascend_samples.old_layout),
                        ("torch_npu", ascend_samples.torch_npu),
                        ("cluster_2rank", ascend_cluster.cluster_2rank)):
        shutil.rmtree(out / name, ignore_errors=True)
        write(out / name)
    for trace in (kineto_demo(), diff_pair(fixed=False), diff_pair(fixed=True)):
        _write_trace(out / trace["traceName"], trace)


def _write_trace(path: Path, trace: dict) -> None:
    """One event a line, the other keys in their order: small diffs, readable by eye."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        for key, value in trace.items():
            if key == "traceEvents":
                f.write('  "traceEvents": [\n')
                f.write(",\n".join("  " + json.dumps(ev) for ev in value))
                f.write("\n  ]")
            else:
                f.write(f"  {json.dumps(key)}: {json.dumps(value)}")
            f.write(",\n" if key != list(trace)[-1] else "\n")
        f.write("}\n")


def main() -> None:
    write_all(HERE)
    print(f"wrote the samples under {HERE}")


if __name__ == "__main__":
    main()
