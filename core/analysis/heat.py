"""The rank x iteration grid of a cluster: one value per rank and step, shaded on one scale.

The text strip of ``proftui cluster`` and the Cluster pane's heat strip both draw this grid, so
they mark the same slowest cell and shade on the same scale: from the shortest to the longest
value of the steps that are not warm-up (a warm-up step is drawn, clipped to that scale).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proftui.core.analysis.cluster import Cluster, RankStep

METRICS = {  # key of RankStep -> what it is called
    "step_ns": "step time",
    "compute_ns": "compute",
    "comm_exposed_ns": "exposed communication",
    "free_ns": "free time",
}


@dataclass(frozen=True)
class HeatGrid:
    """`values[r, k]`: rank `ranks[r]`'s `metric` at iteration `iterations[k]` (NaN: no such
    step, or no device part); `warmup[r, k]` marks the cells left out of the scale."""

    metric: str
    ranks: list[str]
    iterations: list[int]
    values: np.ndarray  # float64, (ranks, iterations), ns
    warmup: np.ndarray  # bool, same shape
    lo_ns: int  # the scale: shortest and longest value outside warm-up
    hi_ns: int
    worst: tuple[int, int] | None  # (row, column) of the largest value outside warm-up

    def share(self, row: int, column: int) -> float | None:
        """Where a cell lies on the scale, 0 to 1 (clipped); None for an empty cell."""
        value = self.values[row, column]
        if not np.isfinite(value):
            return None
        if self.hi_ns <= self.lo_ns:
            return 0.5
        return min(max((float(value) - self.lo_ns) / (self.hi_ns - self.lo_ns), 0.0), 1.0)


def heat_grid(found: Cluster, metric: str = "step_ns") -> HeatGrid:
    """The grid of `metric` (a key of :data:`METRICS`) over the ranks and numbered steps of
    `found`. For step time the worst cell is the cluster's slowest step."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}")
    numbers = sorted({s.iteration for r in found.ranks for s in r.steps
                      if s.iteration is not None})
    column = {n: k for k, n in enumerate(numbers)}
    values = np.full((len(found.ranks), len(numbers)), np.nan)
    warm = np.zeros(values.shape, bool)
    for row, rank in enumerate(found.ranks):
        for s in rank.steps:
            value = getattr(s, metric)
            if s.iteration is None or value is None:
                continue
            values[row, column[s.iteration]] = value
            warm[row, column[s.iteration]] = s.warmup
    kept = np.where(warm, np.nan, values)
    if np.isfinite(kept).any():
        lo, hi = int(np.nanmin(kept)), int(np.nanmax(kept))
        worst = _worst(found, metric, kept, numbers)
    else:
        lo = hi = 0
        worst = None
    return HeatGrid(metric, [r.rank for r in found.ranks], numbers, values, warm, lo, hi, worst)


def _worst(found: Cluster, metric: str, kept: np.ndarray,
           numbers: list[int]) -> tuple[int, int] | None:
    if metric == "step_ns" and found.slowest is not None:
        rank, iteration, _ = found.slowest
        if iteration is not None:
            return ([r.rank for r in found.ranks].index(rank), numbers.index(iteration))
    # The largest; among equals the first rank, then the first iteration (as `_slowest`).
    flat = np.where(np.isfinite(kept), kept, -np.inf)
    row, col = np.unravel_index(int(np.argmax(flat)), flat.shape)
    return int(row), int(col)


@dataclass(frozen=True)
class CellFacts:
    """One rank's step, as the Cluster pane describes the cell under its cursor: the step's
    parts and the rank's waits at that step's matched collectives."""

    rank: str
    iteration: int
    step: RankStep | None
    collectives: int  # matched instances of that step the rank took part in
    wait_ns: int  # its waits at them (from its own start to the last arrival)
    arrived_last: int  # how many of them it arrived last at


def cell_facts(found: Cluster, rank: str, iteration: int) -> CellFacts:
    """The facts of the cell (`rank`, `iteration`) of :func:`heat_grid`."""
    summary = next((r for r in found.ranks if r.rank == rank), None)
    step = (next((s for s in summary.steps if s.iteration == iteration), None)
            if summary is not None else None)
    mine = [i for i in found.collectives.instances
            if i.iteration == iteration and rank in i.per_rank]
    return CellFacts(rank, iteration, step, len(mine),
                     sum(i.per_rank[rank].wait_ns for i in mine),
                     sum(1 for i in mine if i.last_rank == rank))
