"""What every slice does for the breakdown: the kind of device work, the host phase, syncs.

Device operators (see :mod:`proftui.core.ops.roles`) are one of: matrix compute (cube, tensor
cores: matmul, convolution, attention), vector compute (the rest of AI Core / AI Vector Core
and GPU kernels), AI CPU, other compute (DSA and engines the profile names no further),
communication (collectives, NCCL kernels), memory (memcpy, memset) and waits (stream
synchronisation tasks such as msprof's ``EVENT_WAIT`` and ``EVENT_RECORD``, which hold a stream
without doing work; msprof's own Overlap Analysis does not count them as computing either).

Host slices may mark a phase of the step (data loading, forward, backward, optimizer), a
synchronisation with the device (``cudaStreamSynchronize``, ``aclrtSynchronizeStream``,
``aten::item`` ...) or a garbage-collection pause.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.grouping import engines
from proftui.core.ops.roles import roles, track_groups

# Device kinds, in the order of DEVICE_KINDS (0: not a device operator).
DEVICE_KINDS = ("none", "matrix", "vector", "ai_cpu", "other", "comm", "memory", "wait")
NONE, MATRIX, VECTOR, AI_CPU, OTHER, COMM, MEMORY, WAIT = range(len(DEVICE_KINDS))
COMPUTE_KINDS = (MATRIX, VECTOR, AI_CPU, OTHER)
# Host phases, in the order of HOST_PHASES (0: none).
HOST_PHASES = ("none", "dataloader", "forward", "backward", "optimizer")

_ENGINE_KIND = {
    "AI_CPU": AI_CPU, "KERNEL_AICPU": AI_CPU, "AICPU": AI_CPU,
    "AI_VECTOR_CORE": VECTOR, "MIX_AIV": VECTOR, "AIV": VECTOR, "KERNEL_AIVEC": VECTOR,
    "MIX_AIC": MATRIX, "AIC": MATRIX,
    "HCCL": COMM, "NCCL": COMM, "COMMUNICATION": COMM,
    "memcpy": MEMORY, "memset": MEMORY}
# Engines whose ops are matrix or vector work by what they compute (their name).
_SPLIT_BY_NAME = frozenset({"AI_CORE", "KERNEL_AICORE", "FFTS_PLUS", "kernel", "Triton"})
_MATRIX_NAME = re.compile(
    r"mat_?mul|gemm|conv|bmm|attention|xmma|cutlass|cublas|hmma|wgmma|dgrad|wgrad|fprop|"
    r"implicit_convolve|grouped_?mm", re.IGNORECASE)
# msprof task types that hold a stream without computing (the rest are work).
_WAIT_TASK = re.compile(r"^(?:EVENT|NOTIFY|PROFILING|BARRIER|WAIT)_[A-Z0-9_]*$")
_MEMORY_NAME = re.compile(r"^(?:MEMCPY|MEMSET|Memcpy|Memset|memcpy|memset)")

# Host: where the step spends its time, when the profile marks it.
_PHASE_CATEGORIES = {"Dataloader": 1, "Forward": 2, "Backward": 3, "Optimization": 4}
_PHASE_NAMES = (
    (1, re.compile(r"^enumerate\(DataLoader\)|^DataLoader|^Dataloader|^data_?loader", re.I)),
    (2, re.compile(r"^(?:## )?forward(?: ##)?$|^Forward$", re.I)),
    (3, re.compile(r"^autograd::engine::evaluate_function|^(?:## )?backward(?: ##)?$", re.I)),
    (4, re.compile(r"^Optimizer\.(?:step|zero_grad)#|^(?:## )?optimi[sz](?:er|ation)"
                   r"(?: ##)?$", re.I)))
_PHASE_NEEDLES = ("oader", "orward", "utograd::engine", "ackward", "ptimi")
# Calls that make the host wait for the device (the CANN layer prefix "AscendCL@" dropped).
SYNC_CALLS = frozenset({
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
    "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize",
    "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize",
    "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeDevice",
    "aclrtSynchronizeDeviceWithTimeout", "aclrtSynchronizeEvent",
    "aten::item", "aten::_local_scalar_dense"})
_SYNC_NEEDLES = ("ynchronize", "aten::item", "_local_scalar_dense")
_GC_NAME = re.compile(r"^(?:GC|gc|Python GC|gc\.collect|<built-in function collect>)$")
_GC_PROCESSES = frozenset({"python gc"})

_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Activity:
    """Per slice: `device_kind` (index into DEVICE_KINDS), `host_phase` (index into
    HOST_PHASES), `sync` and `gc` (bool); `device` per slice, for convenience. Each slice's
    group (string id of the rank or device) is its track's (`track_group`, by `track`, the
    index's column: not kept per slice)."""

    device_kind: np.ndarray
    host_phase: np.ndarray
    sync: np.ndarray
    gc: np.ndarray
    device: np.ndarray
    track_group: np.ndarray
    track: np.ndarray

    def in_group(self, gid: int) -> np.ndarray:
        """Per slice, whether it is of the group `gid`."""
        return (self.track_group == gid)[self.track]

    def groups_of(self, rows: np.ndarray) -> np.ndarray:
        """The group of each slice of `rows`."""
        return self.track_group[self.track[rows]]


def activity(index: TraceIndex, tables: Sequence[Table] = ()) -> Activity:
    """The activity of every slice of `index` (computed once per index and tables)."""
    key = tuple(t.path for t in tables)
    memo = _memo.setdefault(index, {})
    if key not in memo:
        memo[key] = _classify(index, tables)
    return memo[key]


def _classify(index: TraceIndex, tables: Sequence[Table]) -> Activity:
    r = roles(index)
    device = r.device[index.arrays["slices.track"]]
    return Activity(_device_kinds(index, tables, device & r.op, r.collective),
                    _host_phases(index, ~device), _sync(index, ~device & r.op),
                    _gc(index), device, track_groups(index, max(index.strings.find(""), 0)),
                    index.arrays["slices.track"])


def _device_kinds(index: TraceIndex, tables: Sequence[Table], work: np.ndarray,
                  collective: np.ndarray) -> np.ndarray:
    s = index.strings
    names = index.arrays["slices.name"]
    found = engines(index, tables)
    labels = found.labels
    kind = np.zeros(index.n_slices, np.int8)
    rows = np.flatnonzero(work)
    if not len(rows):
        return kind
    # One decision per distinct (engine, name) in use.
    pair = found.of(index, rows).astype(np.int64) * len(s) + names[rows]
    uniq, inverse = np.unique(pair, return_inverse=True)
    decided = np.array([_device_kind(labels[int(p // len(s))], s[int(p % len(s))])
                        for p in uniq.tolist()], np.int8)
    kind[rows] = decided[inverse.reshape(-1)]
    kind[collective] = COMM
    return kind


def _device_kind(engine: str, name: str) -> int:
    known = _ENGINE_KIND.get(engine)
    if known is not None:
        return known
    lowered = name.lower()
    if "aicpu" in lowered or "ai_cpu" in lowered:
        return AI_CPU
    if engine in _SPLIT_BY_NAME:
        return MATRIX if _MATRIX_NAME.search(name) else VECTOR
    if _MEMORY_NAME.match(engine) or _MEMORY_NAME.match(name):
        return MEMORY
    if _WAIT_TASK.match(engine) or _WAIT_TASK.match(name):
        return WAIT
    if "aicore" in lowered or "aivec" in lowered:
        return MATRIX if _MATRIX_NAME.search(name) else VECTOR
    return MATRIX if _MATRIX_NAME.search(name) else OTHER


def _host_phases(index: TraceIndex, host: np.ndarray) -> np.ndarray:
    s = index.strings
    by_string = np.zeros(len(s), np.int8)
    for needle in _PHASE_NEEDLES:
        for sid in s.ids_containing(needle):
            for phase, pattern in _PHASE_NAMES:
                if pattern.search(s[sid]):
                    by_string[sid] = phase
                    break
    by_cat = np.zeros(len(s), np.int8)
    for text, phase in _PHASE_CATEGORIES.items():
        if (sid := s.find(text)) >= 0:
            by_cat[sid] = phase
    a = index.arrays
    phase = np.where(by_cat[a["slices.cat"]] > 0, by_cat[a["slices.cat"]],
                     by_string[a["slices.name"]])
    return np.where(host, phase, 0).astype(np.int8)


def sync_call(text: str) -> bool:
    """Whether a host slice of this name makes the host wait for the device."""
    return text.rsplit("@", 1)[-1].strip() in SYNC_CALLS


def _sync(index: TraceIndex, host_op: np.ndarray) -> np.ndarray:
    s = index.strings
    hits = np.zeros(len(s), bool)
    for needle in _SYNC_NEEDLES:
        for sid in s.ids_containing(needle):
            hits[sid] = sync_call(s[sid])
    return hits[index.arrays["slices.name"]] & host_op


def _gc(index: TraceIndex) -> np.ndarray:
    s, a = index.strings, index.arrays
    by_name = np.zeros(len(s), bool)
    for needle in ("GC", "gc", "collect"):
        for sid in s.ids_containing(needle):
            by_name[sid] = bool(_GC_NAME.match(s[sid]))
    proc_names = [s[i].strip().lower() for i in a["processes.name"].tolist()]
    gc_proc = np.array([n in _GC_PROCESSES for n in proc_names] + [False], bool)
    proc = a["tracks.process"].astype(np.int64)
    gc_track = gc_proc[np.where(proc >= 0, proc, len(proc_names))]
    return by_name[a["slices.name"]] | gc_track[a["slices.track"]]
