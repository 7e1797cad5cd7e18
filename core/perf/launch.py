"""Which host op launched a device task, and which device tasks a host op launched, from the
index's flows and parents alone (no args read).

A flow from a host slice to a device slice is a launch: Kineto's `ac2g` (the runtime call,
`cudaLaunchKernel`, to its kernel), torch_npu's `async_npu` (the torch op to its NPU task).
The host op is the flow's source when that is an op itself, else the innermost op around the
runtime call on its thread (`aten::addmm` around `cudaLaunchKernel`).
"""

from __future__ import annotations

import weakref

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.ops.roles import roles
from proftui.core.query.parents import slice_parents

HOST_OP_CATEGORIES = ("cpu_op", "Operator")  # Kineto (2021: Operator), torch_npu, SQLite
MAX_DEPTH = 64  # parents walked up from a runtime call to find its op
_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def is_host_op(index: TraceIndex) -> np.ndarray:
    """Per string id: whether a slice of that category is a host op."""
    mask = np.zeros(len(index.strings), bool)
    for cat in HOST_OP_CATEGORIES:
        sid = index.strings.find(cat)
        if sid >= 0:
            mask[sid] = True
    return mask


def launches(index: TraceIndex, slices: np.ndarray) -> np.ndarray:
    """Per slice of `slices`, the host slice whose flow leads to it when it is on a device
    track (-1: none); a source that is a host op wins over another (torch_npu's CANN
    `Node@launch`)."""
    dst, src = launch_pairs(index)
    slices = np.asarray(slices, np.int64)
    at = np.minimum(np.searchsorted(dst, slices), max(len(dst) - 1, 0))
    if not len(dst):
        return np.full(len(slices), -1, np.int64)
    return np.where(dst[at] == slices, src[at], -1)


def launch_pairs(index: TraceIndex) -> tuple[np.ndarray, np.ndarray]:
    """The device slices a flow from the host leads to, sorted, and each one's launching host
    slice (int64; see :func:`launches`): kept as pairs, not as an array of every slice."""
    found = _memo.get(index)
    if found is not None:
        return found
    a = index.arrays
    src, dst = a["flows.src_slice"].astype(np.int64), a["flows.dst_slice"].astype(np.int64)
    device = roles(index).device
    track = a["slices.track"]
    ok = (src >= 0) & (dst >= 0)
    src, dst = src[ok], dst[ok]
    ok = device[track[dst]] & ~device[track[src]]
    src, dst = src[ok], dst[ok]
    op = is_host_op(index)[a["slices.cat"][src]]
    # Of several flows into one slice, the last of (sources that are not ops, then ops, each
    # in the flows' order) wins: an op's.
    order = np.argsort(op, kind="stable")
    src, dst = src[order], dst[order]
    order = np.argsort(dst, kind="stable")
    src, dst = src[order], dst[order]
    last = np.concatenate([dst[1:] != dst[:-1], [True]]) if len(dst) else np.zeros(0, bool)
    found = _memo[index] = (dst[last], src[last])
    return found


def op_chain(index: TraceIndex, launch: int) -> list[int]:
    """The host ops at `launch` (a flow's source), innermost first: itself when it is an op,
    then the ops around it on its thread."""
    if launch < 0:
        return []
    parents = slice_parents(index)
    op = is_host_op(index)
    cats = index.arrays["slices.cat"]
    chain, at = [], launch
    for _ in range(MAX_DEPTH):
        if at < 0:
            break
        if op[cats[at]]:
            chain.append(at)
        at = int(parents[at])
    return chain


def host_ops(index: TraceIndex, tasks: np.ndarray) -> np.ndarray:
    """Per device slice of `tasks`, the innermost host op that launched it (-1: none)."""
    src = launches(index, tasks)
    out = np.full(len(src), -1, np.int64)
    memo: dict[int, int] = {}
    for k, s in enumerate(src.tolist()):
        if s >= 0:
            if s not in memo:
                chain = op_chain(index, s)
                memo[s] = chain[0] if chain else -1
            out[k] = memo[s]
    return out


def launched_by(index: TraceIndex, host: int) -> list[int]:
    """The device slices launched by host slice `host` or by the slices nested in it on its
    track, by start."""
    a = index.arrays
    tasks, src = launch_pairs(index)
    if not len(tasks):
        return []
    start, end = int(a["slices.start"][host]), int(a["slices.start"][host] + a["slices.dur"][host])
    inside = ((a["slices.track"][src] == a["slices.track"][host])
              & (a["slices.start"][src] >= start)
              & (a["slices.start"][src] + a["slices.dur"][src] <= end)
              & (a["slices.depth"][src] >= a["slices.depth"][host]))
    found = tasks[inside]
    return found[np.argsort(a["slices.start"][found], kind="stable")].tolist()
