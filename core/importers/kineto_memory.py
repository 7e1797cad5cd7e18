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

from typing import Any

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
    device = device_name(args.get("Device Type"), args.get("Device Id"))
    out = []
    for key, measure in _TOTALS:
        value = args.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            out.append((f"{device} Total {measure}(MB)", float(value) / _MB))
    return out
