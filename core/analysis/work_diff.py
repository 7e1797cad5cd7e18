"""Did an op change its work or its speed: the FLOPs behind a changed op, base and new.

An op's time is its work divided by its rate. Where the perf models cover an op's calls on
both sides (core.perf: FLOPs from the shapes the profiler gives), the change of its time
splits into the change of its FLOPs per step (bigger shapes, more calls: the work) and of
the FLOP/s its calls reached (a better kernel, another dtype, less contention: the speed).
Ops are matched by the diff's key (the normalised task name); the calls counted are those
that start in the steps the diff keeps, each rank's calls in its own step windows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from proftui.core.perf.efficiency import op_groups, subset_instances
from proftui.core.perf.instances import OpInstances, kernels_to_read, op_instances
from proftui.core.perf.models import RULES, NoModel

CHANGED_PCT = 5.0  # a change of the work or the rate under this is "the same"
MAX_KERNELS = 20_000  # Kineto kernels whose args a side may need (as advise's under_roof)
MODELLED = frozenset(RULES)  # the op names and types a perf model covers: the others unread


@dataclass(frozen=True)
class WorkDelta:
    """One op's modelled work and rate per step, base and new, and which of them changed."""

    key: str
    base_flops: float  # FLOPs per step of the calls a model covers
    new_flops: float
    base_ns: float  # their device time per step
    new_ns: float

    @property
    def base_rate(self) -> float | None:
        return self.base_flops / (self.base_ns / 1e9) if self.base_ns else None

    @property
    def new_rate(self) -> float | None:
        return self.new_flops / (self.new_ns / 1e9) if self.new_ns else None

    @property
    def cause(self) -> str:
        """"work" (its FLOPs changed, its rate did not), "speed" (the rate changed, not the
        FLOPs), "both", "same" (neither by CHANGED_PCT %), or "" where a side has no
        modelled call."""
        if not (self.base_flops and self.new_flops and self.base_rate and self.new_rate):
            return ""
        work = abs(self.new_flops / self.base_flops - 1) * 100 >= CHANGED_PCT
        speed = abs(self.new_rate / self.base_rate - 1) * 100 >= CHANGED_PCT
        return {(True, True): "both", (True, False): "work", (False, True): "speed",
                (False, False): "same"}[(work, speed)]

    def to_json(self) -> dict[str, Any]:
        def tflops(rate: float | None) -> float | None:
            return None if rate is None else rate / 1e12

        return {"base_flops": round(self.base_flops), "new_flops": round(self.new_flops),
                "base_tflops": tflops(self.base_rate), "new_tflops": tflops(self.new_rate),
                "cause": self.cause}


Window = tuple[int | None, int | None, dict[str, tuple[int, int]] | None]


def _in_windows(found: OpInstances, windows: Sequence[Window]) -> list[np.ndarray]:
    """Per window, the instances that start in it (each group's in its own window)."""
    out = []
    groups = np.asarray(found.groups, dtype=object)
    for lo, hi, own in windows:
        if own is None:
            keep = np.ones(len(found.names), bool)
            if lo is not None:
                keep &= found.start_ns >= lo
            if hi is not None:
                keep &= found.start_ns < hi
        else:
            keep = np.zeros(len(found.names), bool)
            for group, (a, b) in own.items():
                keep |= (groups == group) & (found.start_ns >= a) & (found.start_ns < b)
        out.append(np.flatnonzero(keep))
    return out


def too_many_kernels(index) -> int:
    """How many Kineto kernels of modelled ops the work needs the args of, where that is
    over MAX_KERNELS (reading them takes seconds a hundred thousand); 0 otherwise."""
    n = kernels_to_read(index, names=MODELLED)
    return n if n > MAX_KERNELS else 0


def modelled_per_step(index, windows: Sequence[Window], key: Callable[[str], str]
                      ) -> dict[str, tuple[float, float]]:
    """Per op key: (FLOPs, device ns) per window of the calls a model covers."""
    found = op_instances(index, names=MODELLED)
    out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for rows in _in_windows(found, windows):
        part = subset_instances(found, rows)
        for g in op_groups(part):
            if isinstance(g.work, NoModel):
                continue
            for first, ns in zip(g.rows, g.call_ns):
                totals = out[key(part.names[first])]
                totals[0] += g.work.flops
                totals[1] += ns
    return {k: (f / len(windows), t / len(windows)) for k, (f, t) in out.items()}


def work_deltas(base: dict[str, tuple[float, float]], new: dict[str, tuple[float, float]]
                ) -> dict[str, WorkDelta]:
    """The keys modelled on both sides, with their work and rate."""
    return {k: WorkDelta(k, base[k][0], new[k][0], base[k][1], new[k][1])
            for k in set(base) & set(new)}

