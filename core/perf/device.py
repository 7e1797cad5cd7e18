"""The device a profile ran on, by the name its profiler gives it: Kineto's top-level
`deviceProperties` ("NVIDIA H100 80GB HBM3"), an Ascend SQLite export's NPU_INFO
("Ascend910B"). The text exports of Ascend name no chip (device_N/info.json has only a
platform code), so they give None and the peaks must be given."""

from __future__ import annotations

from proftui.core.model.index import TraceIndex


def device_name(index: TraceIndex) -> str | None:
    """The name of the profile's first device, None when the profile names none."""
    props = index.meta.get("deviceProperties")
    if isinstance(props, list):
        for entry in props:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"]:
                return entry["name"].strip()
    for source in index.meta.get("sources", []):
        chip = (source.get("sqlite") or {}).get("chip")
        if isinstance(chip, str) and chip:
            return chip.split(",")[0].strip()
    return None
