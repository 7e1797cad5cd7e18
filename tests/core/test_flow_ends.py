"""Flows as a view draws them: source ends, target starts, the edges nearest a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proftui.core.build.flows import _chain_order
from proftui.core.query.flows import FlowEnds
from tests.core.helpers import launches, load, write_trace


def test_ends_are_the_sources_end_and_the_targets_start(tmp_path: Path) -> None:
    index = load(write_trace(tmp_path / "t.json", launches(3)))
    ends = FlowEnds(index)
    assert len(ends) == 3
    names = [index.slice_name(int(i)) for i in ends.dst]
    assert names == ["kernel_0", "kernel_1", "kernel_2"]
    k = names.index("kernel_1")
    a = index.arrays
    assert ends.src_end[k] == a["slices.start"][ends.src[k]] + 5_000
    assert ends.dst_start[k] == a["slices.start"][ends.dst[k]]
    assert ends.gap[k] == 25_000  # launched at +0, ended at +5 µs, the kernel at +30 µs
    assert ends.of_slice(int(ends.dst[k])).tolist() == [k]
    assert ends.of_slice(int(ends.src[k])).tolist() == [k]


def test_shifted_tracks_move_the_ends_but_not_the_gap(tmp_path: Path) -> None:
    index = load(write_trace(tmp_path / "t.json", launches(2)))
    plain = FlowEnds(index)
    shift = np.zeros(index.n_tracks, np.int64)
    shift[int(index.arrays["slices.track"][plain.dst[0]])] = 7_000
    moved = FlowEnds(index, shift)
    assert (moved.dst_start == plain.dst_start - 7_000).all()
    assert (moved.src_end == plain.src_end).all() and (moved.gap == plain.gap).all()


def test_the_window_gives_the_nearest_edges_and_counts_every_one_overlapping(
        tmp_path: Path) -> None:
    index = load(write_trace(tmp_path / "t.json", launches(200)))
    ends = FlowEnds(index)
    t0 = index.start_ns
    # a window over launches 50..149 (each flow spans 5..30 µs after its launch)
    start, end = t0 + 50 * 100_000, t0 + 150 * 100_000
    found = ends.in_window(start, end, near_ns=t0 + 100 * 100_000, n=10)
    assert found.total == 100
    kernels = sorted(int(index.slice_name(int(ends.dst[e])).split("_")[1]) for e in found.edges)
    assert kernels == list(range(95, 105))  # the ten nearest the time, launch 100's among them
    first = index.slice_name(int(ends.dst[found.edges[0]]))
    assert first == "kernel_100"  # nearest first: its midpoint is 17.5 µs after the time
    # near one end of the window, none outside it is taken
    edge = ends.in_window(start, end, near_ns=start, n=10)
    assert len(edge.edges) <= 10 and edge.total == 100
    assert all(ends.dst_start[e] >= start for e in edge.edges)
    assert ends.in_window(t0 - 10**9, t0 - 1, t0, 10).total == 0


def test_a_trace_without_flows_has_no_ends(tmp_path: Path) -> None:
    index = load(write_trace(tmp_path / "t.json", [{"ph": "X", "name": "a", "ts": 1, "dur": 1,
                                                     "pid": 1, "tid": 1}]))
    ends = FlowEnds(index)
    assert len(ends) == 0 and ends.in_window(0, 10**12, 0, 64).total == 0


@pytest.mark.parametrize("n", [0, 1, 2, 500])
@pytest.mark.parametrize("kept_share", [1.0, 0.9, 0.0])
def test_chain_order_is_the_lexsort_of_the_flows_points(n: int, kept_share: float) -> None:
    """Points put in chain order from their key order (by flow, each flow's points in file
    order), only the flows out of order sorted: numpy's lexsort of (flow, primary,
    secondary), ties in file order, whether no flow, some or all are out of order."""
    rng = np.random.default_rng(n)
    flows = max(1, n // 3)
    group = rng.integers(0, flows, n)
    primary, secondary = rng.integers(0, 3, n), rng.integers(0, 5, n)
    # The file: the kept flows' points in their chain order, the others' shuffled.
    keep = rng.random(flows) < kept_share
    place = np.empty(n)
    place[np.lexsort((secondary, primary, group))] = np.arange(n)
    in_file = np.argsort(np.where(keep[group], place, rng.permutation(n)), kind="stable")
    group, primary, secondary = group[in_file], primary[in_file], secondary[in_file]
    by_key = np.argsort(group, kind="stable")
    new_key = np.ones(n, bool)
    new_key[1:] = group[by_key][1:] != group[by_key][:-1]
    flow_no = np.cumsum(new_key) - 1
    expected = np.lexsort((secondary, primary, group))
    got = _chain_order(by_key, flow_no, new_key, group, primary, secondary)
    assert np.array_equal(got, expected)
