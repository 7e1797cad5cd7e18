"""Utilisation over time: per bucket of a window, how busy the device and the host were.

The "GPU utilisation" view engineers know from TensorBoard, for every profile and at every
zoom: each bucket's share of time with device work (compute, communication or copies), with
compute, with communication alone (exposed) and under compute (overlapped), and with the host
busy. Per group (rank or
device), from the same interval sets as the breakdown (:mod:`.breakdown`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.analysis.breakdown import group_coverage
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table

SERIES = {"device busy": "busy", "compute": "compute", "comm exposed": "comm_exposed",
          "comm overlapped": "overlapped", "host busy": "host"}


@dataclass(frozen=True)
class Utilisation:
    """`edges_ns` (n + 1 bucket edges) and, per series name (see SERIES), n fractions in
    [0, 1]."""

    group: str
    edges_ns: np.ndarray
    series: dict[str, np.ndarray]


def utilisation(index: TraceIndex, start_ns: int, end_ns: int, buckets: int,
                tables: Sequence[Table] = (), groups: Collection[str] | None = None
                ) -> list[Utilisation]:
    """Per group (those of `groups` only, when given), the share of each of `buckets` equal
    parts of [start_ns, end_ns) that each series held. Costs a binary search per bucket and
    series, at any zoom."""
    buckets = max(1, int(buckets))
    edges = np.linspace(start_ns, end_ns, buckets + 1).round().astype(np.int64)
    width = np.maximum(np.diff(edges), 1).astype(np.float64)
    out = []
    for name, coverage in sorted(group_coverage(index, tables).items()):
        if groups is not None and name not in groups:
            continue
        series = {label: np.clip(coverage.measure(key, edges[:-1], edges[1:]) / width, 0, 1)
                  for label, key in SERIES.items()}
        out.append(Utilisation(name, edges, series))
    return out
