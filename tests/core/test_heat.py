"""The rank x iteration grid the cluster strip and pane draw."""

from __future__ import annotations

import math

import pytest

from proftui.core.analysis.cluster import (
    Arrival,
    Cluster,
    Collectives,
    Instance,
    RankStep,
    RankSummary,
)
from proftui.core.analysis.heat import cell_facts, heat_grid


def _found() -> Cluster:
    a = RankSummary("rank 0", [RankStep(1, 500, 50, 5, 1, warmup=True),
                               RankStep(2, 100, 60, 30, 10), RankStep(3, 120, 70, 20, 30)], {})
    b = RankSummary("rank 1", [RankStep(2, 130, 40, None, None), RankStep(4, 90, 30, 10, 40)], {})
    instance = Instance("hcom_allReduce__7_0_1", "7", 0, 2, False, 9, "rank 1",
                        {"rank 0": Arrival(0, 9, 4), "rank 1": Arrival(9, 0, 4)})
    return Cluster([a, b], ("rank 1", 2, 130), None, Collectives("hccl_name", [instance]),
                   {}, {}, {}, [])


def test_the_grid_holds_each_ranks_steps_and_its_scale_leaves_warm_up_out():
    grid = heat_grid(_found())
    assert grid.ranks == ["rank 0", "rank 1"] and grid.iterations == [1, 2, 3, 4]
    assert grid.values[0, :3].tolist() == [500, 100, 120]
    assert math.isnan(grid.values[0, 3]) and math.isnan(grid.values[1, 0])
    assert grid.warmup[0].tolist() == [True, False, False, False]
    assert (grid.lo_ns, grid.hi_ns) == (90, 130)  # 500 is warm-up
    assert grid.worst == (1, 1)  # the cluster's slowest step
    assert grid.share(0, 0) == 1.0  # clipped to the scale
    assert grid.share(0, 2) == pytest.approx(30 / 40) and grid.share(1, 0) is None


def test_other_metrics_mark_their_largest_and_skip_missing_parts():
    grid = heat_grid(_found(), "free_ns")
    assert math.isnan(grid.values[1, 1])  # rank 1's step 2 ran nothing on a device
    assert (grid.lo_ns, grid.hi_ns, grid.worst) == (10, 40, (1, 3))
    comm = heat_grid(_found(), "comm_exposed_ns")
    assert (comm.lo_ns, comm.hi_ns, comm.worst) == (10, 30, (0, 1))
    with pytest.raises(ValueError):
        heat_grid(_found(), "idle_ns")


def test_cell_facts_sum_the_ranks_waits_at_that_steps_collectives():
    facts = cell_facts(_found(), "rank 0", 2)
    assert (facts.step.step_ns, facts.collectives, facts.wait_ns, facts.arrived_last) == (
        100, 1, 9, 0)
    facts = cell_facts(_found(), "rank 1", 2)
    assert (facts.wait_ns, facts.arrived_last) == (0, 1)
    assert cell_facts(_found(), "rank 1", 3).step is None
