"""Kineto's kernels with the shapes of the host op that launched each one.

A kernel's args carry its `correlation` (that of its runtime launch, `cudaLaunchKernel`, to
which its `ac2g` flow leads back) and its `External id`, which is the `External id` of the op
that was running when it was launched. So the host op is, of the ops around the launch on its
thread, the one whose External id the kernel carries (the innermost op when neither says).
Its args hold `Input Dims`, `Input type` and `Concrete Inputs` (with `record_shapes=True`).
Reading args costs a pass over the trace's bytes where the events are: only the kernels asked
for, and their ops, are read.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.ops.roles import roles, slice_groups
from proftui.core.perf.ascend_rows import Rows
from proftui.core.perf.launch import launches, op_chain
from proftui.core.perf.shapes import Shape, ascend_list, ascend_shapes, kineto_list, kineto_shapes
from proftui.core.query.args import read_args

KERNEL_CATEGORIES = ("kernel", "Kernel")
# Kernel args kept as counters (numbers as they are; grid and block as their products).
_KERNEL_COUNTERS = ("registers per thread", "shared memory", "blocks per SM", "warps per SM",
                    "est. achieved occupancy %")


def kernel_slices(index: TraceIndex) -> np.ndarray:
    """The slices of device tracks whose category is a kernel's, by slice number."""
    cats = [index.strings.find(c) for c in KERNEL_CATEGORIES]
    a = index.arrays
    mask = np.isin(a["slices.cat"], [c for c in cats if c >= 0])
    mask &= roles(index).device[a["slices.track"]]
    return np.flatnonzero(mask)


def external_id(args: Any) -> int | None:
    """An event's `External id` (older traces: `external id`); 0 means none."""
    if not isinstance(args, dict):
        return None
    value = args.get("External id", args.get("external id"))
    return value if isinstance(value, int) and not isinstance(value, bool) and value else None


def host_fields(args: Any) -> tuple[list[Shape | None], list[str], list[str]]:
    """(input shapes, dtypes, concrete inputs) of a host op's args: Kineto's JSON lists, or
    torch_npu's `;`-separated text (its SQLite export's inputShapes / inputDtypes)."""
    if not isinstance(args, dict):
        return [], [], []
    dims = args.get("Input Dims", args.get("inputShapes"))
    types = args.get("Input type", args.get("inputDtypes"))
    concrete = kineto_list(args.get("Concrete Inputs"))
    if isinstance(dims, str) and isinstance(types, str) and _dims_text(types) and not any(
            ascend_shapes(dims)):
        dims, types = types, dims  # some torch_npu SQLite exports swap the two columns
    shapes = ascend_shapes(dims) if isinstance(dims, str) else kineto_shapes(dims)
    dtypes = ascend_list(types) if isinstance(types, str) else kineto_list(types)
    return shapes, dtypes, concrete


def _dims_text(text: str) -> bool:
    """Whether `;`-separated text holds dims (digits and commas) rather than type names."""
    entries = [e.strip() for e in text.split(";")]
    return any(entries) and all(not e or e.replace(",", "").isdigit() for e in entries)


def kernel_counters(args: Any) -> dict[str, float]:
    """A kernel's launch figures: grid and block (their products: blocks, threads per
    block), registers, shared memory, occupancy ..."""
    if not isinstance(args, dict):
        return {}
    out: dict[str, float] = {}
    for key in ("grid", "block"):
        dims = args.get(key)
        if isinstance(dims, list) and dims and all(isinstance(d, int) for d in dims):
            out[key] = float(math.prod(dims))
    for key in _KERNEL_COUNTERS:
        value = args.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(value)
    return out


def pick_host(chain: list[int], kernel_args: Any, launch_args: Any,
              op_args: dict[int, Any]) -> int:
    """Of the ops around a launch (innermost first), the one whose External id the kernel
    (else its launch) carries; the innermost when no External id is known; -1 when the ids
    disagree with every op."""
    wanted = external_id(kernel_args) or external_id(launch_args)
    if not chain:
        return -1
    if wanted is None or all(external_id(op_args.get(op)) is None for op in chain):
        return chain[0]
    return next((op for op in chain if external_id(op_args.get(op)) == wanted), -1)


def kineto_rows(index: TraceIndex, kernels: np.ndarray) -> tuple[Rows, np.ndarray]:
    """The rows of `kernels` (slice numbers) and, per kernel, its host op's slice (-1)."""
    a, s = index.arrays, index.strings
    kernels = np.asarray(kernels, np.int64)
    launch = launches(index, kernels)
    chains = {int(x): op_chain(index, int(x)) for x in np.unique(launch).tolist() if x >= 0}
    ops = sorted({op for chain in chains.values() for op in chain})
    wanted = np.unique(np.concatenate([kernels, launch[launch >= 0],
                                       np.array(ops, np.int64)]))
    got = dict(zip(wanted.tolist(), read_args(index, a["slices.ref"][wanted])))
    hosts = np.array([pick_host(chains.get(int(x), []), got.get(int(k)), got.get(int(x)), got)
                      for k, x in zip(kernels.tolist(), launch.tolist())], np.int64)
    fields = [host_fields(got.get(int(h))) if h >= 0 else ([], [], []) for h in hosts.tolist()]
    groups = slice_groups(index)[kernels]
    host_names = [s[a["slices.name"][h]] if h >= 0 else "" for h in hosts.tolist()]
    kernel_args = [got.get(int(k)) for k in kernels.tolist()]

    def text(k: int) -> dict[str, str]:
        args = kernel_args[k]
        return {str(key): str(v) for key, v in args.items()} if isinstance(args, dict) else {}

    rows = Rows(
        source="trace", names=[s[a["slices.name"][k]] for k in kernels.tolist()],
        op_types=host_names, groups=[s[g] for g in groups.tolist()],
        start_ns=a["slices.start"][kernels].astype(np.int64),
        dur_ns=a["slices.dur"][kernels].astype(np.int64),
        inputs=[f[0] for f in fields], outputs=[[] for _ in fields],
        dtypes=[f[1] for f in fields], counters=[kernel_counters(x) for x in kernel_args],
        slice_rows=kernels, task_ids=np.full(len(kernels), -1, np.int64), text=text,
        concrete=[f[2] for f in fields])
    return rows, hosts
