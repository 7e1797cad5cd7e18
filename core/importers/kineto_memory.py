"""PyTorch profiler memory events (``profile_memory=True``) as counter samples.

Kineto writes each allocation and free of the caching allocator as an instant event named
``[memory]`` (ph ``i``, cat ``cpu_instant_event``) on the allocating thread, with args
``Device Type`` (c10::DeviceType: 0 CPU, 1 CUDA ...), ``Device Id`` (-1 for the CPU),
``Addr``, ``Bytes`` (negative for a free) and, since PyTorch 1.10, ``Total Allocated`` and
``Total Reserved`` (bytes, the allocator's totals after the event). The totals become the
series ``{device} Total Allocated(MB)`` and ``{device} Total Reserved(MB)`` on the process'
counter track, named and scaled as the Ascend memory series are (see
:mod:`.memory_csv`), so that one memory question answers for both. Events without the totals
(older PyTorch) give no samples: a running sum of ``Bytes`` would start at an unknown level.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np

MEMORY_EVENT = "[memory]"
_MB = 1024.0 * 1024.0
# c10::DeviceType numbers -> the names Kineto's device processes and people use.
# PrivateUse1 (20) is how torch_npu registers the NPU.
_DEVICE_TYPES = {0: "CPU", 1: "GPU", 6: "GPU", 9: "XLA", 12: "XPU", 13: "MPS", 15: "HPU",
                 19: "MTIA", 20: "NPU"}
_TOTALS = (("Total Allocated", "Allocated"), ("Total Reserved", "Reserved"))


def device_name(device_type: Any, device_id: Any) -> str:
    """"GPU 0", "NPU 1", "CPU" from a memory event's Device Type and Device Id."""
    kind = _DEVICE_TYPES.get(device_type, f"Device type {device_type}") if isinstance(
        device_type, int) and not isinstance(device_type, bool) else "Device"
    if isinstance(device_id, int) and not isinstance(device_id, bool) and device_id >= 0:
        return f"{kind} {device_id}"
    return kind


def memory_samples(args: Any) -> list[tuple[str, float]]:
    """(series name, value in MB) of one ``[memory]`` event's args; none without totals."""
    if not isinstance(args, dict):
        return []
    names = _series_names(args.get("Device Type"), args.get("Device Id"))
    out = []
    for (key, _), name in zip(_TOTALS, names):
        value = args.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            out.append((name, float(value) / _MB))
    return out


_NAMES: dict[tuple, tuple[str, ...]] = {}  # a profile has a device or few: named once each


def _series_names(device_type: Any, device_id: Any) -> tuple[str, ...]:
    """The series names of the totals (_TOTALS' order) of a device's memory events."""
    key = (type(device_type), device_type, type(device_id), device_id)  # 1, 1.0, True apart
    try:
        return _NAMES[key]
    except (KeyError, TypeError):  # new, or a value no dictionary takes
        device = device_name(device_type, device_id)
        names = tuple(f"{device} Total {measure}(MB)" for _, measure in _TOTALS)
        if len(_NAMES) < 256:
            try:
                _NAMES[key] = names
            except TypeError:
                pass
        return names


class Totals(msgspec.Struct, gc=False):
    """The fields of a ``[memory]`` event's args that give samples, typed: a batch whose
    args hold anything else there (a string, a bool, a number beyond float) is refused by
    MEMORY_TOTALS, and read event by event through :func:`memory_samples` instead."""

    device_type: Any = msgspec.field(name="Device Type", default=None)
    device_id: Any = msgspec.field(name="Device Id", default=None)
    allocated: float | None = msgspec.field(name="Total Allocated", default=None)
    reserved: float | None = msgspec.field(name="Total Reserved", default=None)


class _MemoryEvent(msgspec.Struct, gc=False):
    args: Totals | None = None


# A JSON array of ``[memory]`` events -> their Totals (None: no args); every other field skipped.
MEMORY_TOTALS = msgspec.json.Decoder(list[_MemoryEvent])


def sample_columns(totals: list[Totals | None], pids: list[Any],
                   ) -> tuple[list[tuple[Any, str]], np.ndarray, np.ndarray, np.ndarray] | None:
    """The samples of many ``[memory]`` events (their Totals and pids) as columns, as
    :func:`memory_samples` gives them one event at a time: the distinct (pid, series name)
    in the order samples first use them, and per sample its event, its series' number among
    those and its value in MB; None when a pid or device is no dictionary key (a list)."""
    keys = [None if t is None else (type(pid), pid, type(t.device_type), t.device_type,
                                    type(t.device_id), t.device_id)
            for t, pid in zip(totals, pids)]
    combos: dict[tuple, int] = {}  # numbered as first met
    try:
        code = np.fromiter([-1 if k is None else combos.setdefault(k, len(combos))
                            for k in keys], np.int64, len(keys))
    except TypeError:
        return None
    named = [(k[1], _series_names(k[3], k[5])) for k in combos]
    nan = math.nan
    values = np.array([[nan if t is None or t.allocated is None else t.allocated
                        for t in totals],
                       [nan if t is None or t.reserved is None else t.reserved
                        for t in totals]], np.float64)
    # Series are numbered as they are first used, event by event, allocated before reserved.
    event, measure = np.nonzero(~np.isnan(values.T))  # samples in that order
    pair = code[event] * 2 + measure
    pairs, first = np.unique(pair, return_index=True)
    series: list[tuple[Any, str]] = []
    number: dict[tuple[Any, str], int] = {}
    slot = np.zeros(2 * max(len(named), 1), np.int64)
    for p in pairs[np.argsort(first)].tolist():
        pid, names = named[p // 2]
        key = (type(pid), pid, names[p % 2])
        if key not in number:
            number[key] = len(series)
            series.append((pid, names[p % 2]))
        slot[p] = number[key]
    return series, event, slot[pair], values[measure, event] / _MB
