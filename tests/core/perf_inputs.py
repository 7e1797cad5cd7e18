"""A Kineto trace with shapes, for the op efficiency's tests: host ops with `Input Dims`, each
launching its kernels (runtime launch, ac2g flow, External id), on an H100 by its
deviceProperties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.core.helpers import write_trace

H100 = [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]
BF16 = "c10::BFloat16"


def call(ext: int, name: str, ts: int, dims: list, types: list, kernels: list[tuple[str, int]]
         ) -> list[dict[str, Any]]:
    """One host op at `ts` µs, its `kernels` (name, dur µs) launched one after the other."""
    events: list[dict[str, Any]] = [
        {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 20,
         "args": {"External id": ext, "Input Dims": dims, "Input type": types}}]
    at = ts + 200
    for k, (kernel, dur) in enumerate(kernels):
        corr = ext * 10 + k
        events += [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": ts + 1 + k, "dur": 1, "args": {"External id": ext, "correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": at,
             "dur": dur, "args": {"External id": ext, "correlation": corr, "stream": 7}},
            {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 1,
             "ts": ts + 1 + k},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": 7,
             "ts": at, "bp": "e"}]
        at += dur
    return events


def gemm_trace(path: Path, device: list | None = H100) -> Path:
    """Two aten::mm of [64, 1024] x [1024, 4096] bf16 (the first: a GEMM kernel of 20 µs and
    a reduction of 10 µs; the second: one kernel of 30 µs), one aten::mm of another shape
    (10 µs), an aten::index_select, which no model covers (5 µs), and an aten::cat of two
    tensor lists, whose shapes Kineto does not give (5 µs)."""
    dims, types = [[64, 1024], [1024, 4096]], [BF16, BF16]
    events = (call(1, "aten::mm", 1000, dims, types, [("gemm_a", 20), ("splitk_reduce", 10)])
              + call(2, "aten::mm", 2000, dims, types, [("gemm_a", 30)])
              + call(3, "aten::mm", 3000, [[4096, 4096], [4096, 4096]], types,
                     [("gemm_b", 10)])
              + call(4, "aten::index_select", 4000, [[64, 1024], [], [8]],
                     [BF16, "Scalar", "long int"], [("index_kernel", 5)])
              + call(5, "aten::cat", 5000, [[], []], ["", ""], [("cat_kernel", 5)]))
    top = {"deviceProperties": device} if device else {}
    return write_trace(path, events, **top)
