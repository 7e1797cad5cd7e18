"""A slice found again in another opening of the same profile (the folder grew: a rank or a
cycle trace was added, and the slices were numbered afresh)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proftui.core.model.index import TraceIndex


@dataclass(frozen=True)
class SliceKey:
    """What stays the same of a slice while its profile grows: its times and its name."""

    start_ns: int
    dur_ns: int
    name: str

    @classmethod
    def of(cls, index: TraceIndex, i: int) -> SliceKey:
        """The key of slice `i` of `index`."""
        a = index.arrays
        return cls(int(a["slices.start"][i]), int(a["slices.dur"][i]),
                   index.strings[int(a["slices.name"][i])])


def find_slice(index: TraceIndex, key: SliceKey) -> int:
    """The first slice of `index` with this key; -1 when it has none."""
    a = index.arrays
    if "slices.start" not in a or not len(a["slices.start"]):
        return -1
    for i in np.flatnonzero((a["slices.start"] == key.start_ns)
                            & (a["slices.dur"] == key.dur_ns)):
        if index.strings[int(a["slices.name"][i])] == key.name:
            return int(i)
    return -1
