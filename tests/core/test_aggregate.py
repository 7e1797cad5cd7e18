"""Ops of a window (counts, clipped totals, self time, shares), their instances, histograms,
the iterations table, and the op_statistic CSVs of the samples against their timelines."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from proftui.core import load_trace
from proftui.core.cache.tables import read_table
from proftui.core.model.errors import ProftuiError
from proftui.core.ops.aggregate import aggregate_ops, op_instances
from proftui.core.ops.grouping import op_types
from proftui.core.ops.instances import (
    duration_histogram,
    instances_table,
    iteration_of,
    iterations_table,
)
from proftui.core.ops.iterations import Iteration, Iterations
from proftui.core.ops.roles import device_tracks, track_groups
from proftui.core.query.parents import find_parents, slice_parents
from proftui.core.query.rows import build_rows
from proftui.core.query.self_time import self_times
from proftui.core.query.slice_info import describe_slice

from helpers import load, slice_names, write_trace, x

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
US = 1_000  # ns per µs: the trace below is written in µs


# host: forward [0,100) holds conv [10,40) (which holds relu [15,20)) and conv [50,70);
# a zero-length mark at 100. device (GPU 0, stream 7): conv_kernel [20,60) holding conv
# [30,35), conv_kernel [70,120). The trace spans [0, 120) µs.
EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
    {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "CPU"}},
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python"}},
    {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    x("forward", 0, 100),
    x("conv", 10, 30),
    x("relu", 15, 5),
    x("conv", 50, 20),
    x("mark", 100, 0),
    x("conv_kernel", 20, 40, tid=7, pid=0, cat="kernel"),
    x("conv", 30, 5, tid=7, pid=0, cat="kernel"),
    x("conv_kernel", 70, 50, tid=7, pid=0, cat="kernel"),
]


@pytest.fixture
def index(tmp_path):
    return load(write_trace(tmp_path / "t.json", EVENTS))


def _rows(table) -> dict[str, tuple]:
    """{key: (Count, Total, Self, Avg, Min, Max, Window, Busy)} with exact ns."""
    out = {}
    for r in range(table.n_rows):
        values = [c.values[r] for c in table.columns]
        out[values[0]] = (int(values[1]), *(int(v) for v in values[2:4]), float(values[4]),
                          *(int(v) for v in values[5:7]), round(float(values[7]), 6),
                          round(float(values[8]), 6))
    return out


def test_whole_trace_by_name_counts_totals_and_self_time(index) -> None:
    table = aggregate_ops(index)
    assert table.kind == "ops"
    assert [c.header for c in table.columns] == [
        "Name", "Count", "Total", "Self", "Avg", "Min", "Max", "Window(%)", "Busy(%)",
        "name_id"]
    assert [c.unit for c in table.columns[2:9]] == ["ns"] * 5 + ["%", "%"]
    names = list(table.columns[0].values)
    assert names == ["forward", "conv_kernel", "conv", "relu", "mark"]  # by Total
    # Window: time on a track over 120 µs, averaged over the tracks (conv ran on two);
    # Busy: Self over the 190 µs of self time of all rows.
    assert _rows(table) == {
        "forward": (1, 100 * US, 50 * US, 100 * US, 100 * US, 100 * US, 83.333333, 26.315789),
        "conv_kernel": (2, 90 * US, 85 * US, 45 * US, 40 * US, 50 * US, 75.0, 44.736842),
        "conv": (3, 55 * US, 50 * US, 55 * US / 3, 5 * US, 30 * US, 22.916667, 26.315789),
        "relu": (1, 5 * US, 5 * US, 5 * US, 5 * US, 5 * US, 4.166667, 2.631579),
        "mark": (1, 0, 0, 0, 0, 0, 0.0, 0.0),
    }
    assert sum(table.find("Busy").values) == pytest.approx(100.0)
    ids = table.find("name_id").values.astype(int)
    assert [index.strings[i] for i in ids] == names


def test_window_clips_total_and_self_but_not_min_max(index) -> None:
    origin = index.start_ns
    table = aggregate_ops(index, start_ns=origin + 30 * US, end_ns=origin + 80 * US)
    assert list(table.columns[0].values) == ["forward", "conv_kernel", "conv"]
    assert _rows(table) == {
        # forward [0,100) -> [30,80): 50; its children inside: conv 10 + 20 -> self 20
        "forward": (1, 50 * US, 20 * US, 100 * US, 100 * US, 100 * US, 100.0, 22.222222),
        # [30,60) and [70,80); the device conv [30,35) inside the first
        "conv_kernel": (2, 40 * US, 35 * US, 45 * US, 40 * US, 50 * US, 80.0, 38.888889),
        # [30,40) of the first (its relu [15,20) lies outside), [30,35), [50,70)
        "conv": (3, 35 * US, 35 * US, 55 * US / 3, 5 * US, 30 * US, 35.0, 38.888889),
    }


def test_window_edges_are_half_open_and_zero_length_slices_count_inside(index) -> None:
    origin = index.start_ns
    before = aggregate_ops(index, start_ns=origin, end_ns=origin + 10 * US)
    assert list(before.columns[0].values) == ["forward"]  # conv starts at 10: not inside
    at_end = aggregate_ops(index, start_ns=origin + 100 * US, end_ns=origin + 120 * US)
    assert _rows(at_end) == {
        "conv_kernel": (1, 20 * US, 20 * US, 50 * US, 50 * US, 50 * US, 100.0, 100.0),
        "mark": (1, 0, 0, 0, 0, 0, 0.0, 0.0)}  # forward ends at 100: not in [100, 120)
    empty = aggregate_ops(index, start_ns=origin + 200 * US, end_ns=origin + 300 * US)
    assert empty.n_rows == 0 and [len(c.values) for c in empty.columns] == [0] * 10
    with pytest.raises(ProftuiError, match="ends"):
        aggregate_ops(index, start_ns=origin + 5, end_ns=origin)


def test_sides_and_tracks(index) -> None:
    device = device_tracks(index)
    labels = {index.track_label(t): bool(device[t]) for t in range(index.n_tracks)}
    assert labels == {"stream 7": True, "Thread 1": False}
    dev = aggregate_ops(index, side="device")
    assert _rows(dev) == {
        "conv_kernel": (2, 90 * US, 85 * US, 45 * US, 40 * US, 50 * US, 75.0, 94.444444),
        "conv": (1, 5 * US, 5 * US, 5 * US, 5 * US, 5 * US, 4.166667, 5.555556)}
    host = aggregate_ops(index, side="host")
    assert list(host.columns[0].values) == ["forward", "conv", "relu", "mark"]
    assert _rows(host)["conv"] == (2, 50 * US, 45 * US, 25 * US, 20 * US, 30 * US,
                                   41.666667, 45.0)
    host_track = [t for t, d in enumerate(device) if not d]
    assert _rows(aggregate_ops(index, tracks=host_track)) == _rows(host)
    assert aggregate_ops(index, tracks=host_track, side="device").n_rows == 0
    with pytest.raises(ProftuiError, match="Unknown side"):
        aggregate_ops(index, side="gpu")


def test_by_category(index) -> None:
    table = aggregate_ops(index, by="category")
    assert table.columns[0].header == "Category"
    assert _rows(table) == {
        # forward 100, conv 30 + 20, relu 5, mark 0; the children's 55 are not self time
        "cpu_op": (5, 155 * US, 100 * US, 31 * US, 0, 100 * US, 83.333333, 52.631579),
        # conv_kernel [20,60) loses the nested conv [30,35), also a kernel
        "kernel": (3, 95 * US, 90 * US, 95 * US / 3, 5 * US, 50 * US, 75.0, 47.368421),
    }
    with pytest.raises(ProftuiError, match="grouping"):
        aggregate_ops(index, by="track")


def test_instances_by_start_across_tracks_with_iterations(index) -> None:
    conv = index.strings.find("conv")
    found = op_instances(index, conv)
    a = index.arrays
    assert [(int(a["slices.start"][i]) - index.start_ns) // US for i in found] == [10, 30, 50]
    assert list(op_instances(index, conv, side="device")) == [found[1]]
    origin = index.start_ns
    windowed = op_instances(index, conv, start_ns=origin + 36 * US, end_ns=origin + 60 * US)
    assert list(windowed) == [found[0], found[2]]
    kernels = op_instances(index, index.strings.find("kernel"), by="category")
    assert [int(a["slices.dur"][i]) // US for i in kernels] == [40, 5, 50]
    steps = [Iteration("", 1, origin, origin + 30 * US),
             Iteration("", 2, origin + 50 * US, origin + 110 * US)]
    table = instances_table(index, found, Iterations("test", steps))
    assert [c.header for c in table.columns] == ["Start (from capture start)", "Duration",
                                                 "Track", "Iteration", "Slice"]
    assert list(table.columns[0].values) == [10 * US, 30 * US, 50 * US]
    assert list(table.columns[1].values) == [30 * US, 5 * US, 20 * US]
    assert list(table.columns[2].values) == ["python: Thread 1", "python: stream 7",
                                             "python: Thread 1"]
    iterations = table.columns[3].values
    assert iterations[0] == 1 and math.isnan(iterations[1]) and iterations[2] == 2
    assert list(table.columns[4].values.astype(int)) == list(found)
    assert np.isnan(instances_table(index, found).columns[3].values).all()  # no iterations


def test_iteration_of_matches_groups() -> None:
    """With iterations of several groups, a slice takes those of its own process group."""
    class Fake:  # the columns iteration_of reads
        strings = type("S", (), {"find": staticmethod(lambda g: {"a": 1, "b": 2}[g])})()

        def col(self, name):
            return {"slices.start": np.array([5, 5, 15]), "slices.track": np.array([0, 1, 1]),
                    "tracks.process": np.array([0, 1]),
                    "processes.group": np.array([1, 2])}[name]

    items = [Iteration("a", 1, 0, 10), Iteration("b", 7, 0, 4), Iteration("b", 8, 10, 20)]
    out = iteration_of(Fake(), np.array([0, 1, 2]), items)  # type: ignore[arg-type]
    assert out[0] == 1 and math.isnan(out[1]) and out[2] == 8


def test_self_times_agree_with_the_details_pane_on_the_samples() -> None:
    for path in ("kineto_demo.pt.trace.json", "torch_npu", "ascend_old_layout"):
        index = load_trace(str(SAMPLES / path), use_cache=False)
        rows = build_rows(index)
        mine = self_times(index)
        expected = [describe_slice(index, rows, i).self_ns for i in range(index.n_slices)]
        assert mine.tolist() == expected
        start, dur = index.col("slices.start"), index.col("slices.dur")
        assert (find_parents(start, dur, rows, composite=False) ==
                find_parents(start, dur, rows)).all()
        assert (slice_parents(index) >= 0).any()


def test_overlapping_slices_on_lanes_have_no_parent_they_overflow(tmp_path) -> None:
    # b overlaps a without nesting: the packer puts c (inside a) on row 1 and b on row 2,
    # where nothing in the row above (c) contains it.
    events = [x("a", 0, 10, cat=""), x("b", 5, 10, cat=""), x("c", 6, 2, cat="")]
    index = load(write_trace(tmp_path / "lanes.json", events))
    names = slice_names(index)
    depth = dict(zip(names, index.col("slices.depth").tolist()))
    parents = dict(zip(names, slice_parents(index).tolist()))
    assert depth == {"a": 0, "c": 1, "b": 2}
    assert parents["a"] == -1 and parents["b"] == -1
    assert names[parents["c"]] == "a"
    assert _rows(aggregate_ops(index)) == {
        # a owns [0,5), b [5,6) and [8,15), c [6,8): 15 µs in all, the thread's busy time
        "a": (1, 10 * US, 5 * US, 10 * US, 10 * US, 10 * US, 66.666667, 33.333333),
        "b": (1, 10 * US, 8 * US, 10 * US, 10 * US, 10 * US, 66.666667, 53.333333),
        "c": (1, 2 * US, 2 * US, 2 * US, 2 * US, 2 * US, 13.333333, 13.333333)}


def test_duration_histogram_linear_log_and_degenerate() -> None:
    counts, edges = duration_histogram(np.array([1, 2, 3, 4, 5]), bins=4)
    assert counts.tolist() == [1, 1, 1, 2] and edges.tolist() == [1, 2, 3, 4, 5]
    counts, edges = duration_histogram(np.array([10, 100, 1_000, 10_000]), bins=3)
    assert np.allclose(edges, [10, 100, 1_000, 10_000]) and counts.tolist() == [1, 1, 2]
    counts, edges = duration_histogram(np.array([10, 100, 1_000]), bins=2)  # 2 decades: linear
    assert np.allclose(edges, [10, 505, 1_000]) and counts.tolist() == [2, 1]
    counts, edges = duration_histogram(np.array([7, 7, 7]), bins=5)
    assert counts.sum() == 3 and edges[0] < 7 < edges[-1]
    counts, edges = duration_histogram(np.array([], np.int64), bins=4)
    assert counts.tolist() == [0, 0, 0, 0] and len(edges) == 5


MS = 1_000_000


def test_iterations_table_marks_slowest_and_outliers_per_group() -> None:
    durations = {"rank 0": [100, 110, 90, 200, 105, 140], "rank 1": [100, 120]}
    items = []
    for group, lengths in durations.items():
        t = 1_000 * MS
        for n, length in enumerate(lengths, 1):
            parts = {"FP+BP": length * MS // 2} if n % 2 else {"iteration refresh": 5 * MS}
            items.append(Iteration(group, n, t, t + length * MS, parts))
            t += length * MS
    items.append(Iteration("rank 2", 1, length_ns=50 * MS))
    table = iterations_table(Iterations("test", items), 1_000 * MS)
    assert table.kind == "iterations" and table.n_rows == 9
    headers = [c.header for c in table.columns]
    assert headers == ["Group", "Iteration", "Start (us, profiler clock)",
                       "Start (ms, capture)", "Duration", "FP+BP",
                       "iteration refresh", "vs median(%)", "Mark"]
    mark = table.find("Mark").values.tolist()
    # rank 0: its warm-up (100 ms) left out, median 110 ms, 1.2 x = 132 ms: 200 (the
    # slowest) and 140 stand out; rank 1's two steps have no warm-up
    assert mark == ["warm-up", "", "", "slowest, outlier", "", "outlier", "", "slowest", ""]
    vs = table.find("vs median").values
    assert vs[3] == pytest.approx((200 / 110 - 1) * 100)
    assert vs[0] == pytest.approx((100 / 110 - 1) * 100)  # the warm-up against it too
    assert vs[7] == pytest.approx((120 / 110 - 1) * 100) and vs[8] == 0.0
    dur = table.find("Duration").values
    assert dur[0] == 100 * MS and dur[8] == 50 * MS
    start = table.find("Start").values
    assert start[0] == 1_000 * MS and start[8] == np.iinfo(np.int64).min
    relative = table.find("Start from capture").values  # ms, as its header says
    assert relative[1] == 100 and relative[6] == 0 and math.isnan(relative[8])
    fp_bp = table.find("FP+BP").values
    assert fp_bp[0] == 50 * MS and math.isnan(fp_bp[1])
    shifted = iterations_table(items, origin_ns=900 * MS + 1)  # a plain list works too
    assert shifted.find("Start from capture").values[0] == 99.999999


def test_one_iteration_is_not_the_slowest() -> None:
    table = iterations_table([Iteration("", 1, 0, 10)], 0)
    assert table.find("Mark").values.tolist() == [""]
    assert table.find("vs median").values.tolist() == [0.0]


# -- the summary CSVs against the timeline ------------------------------------------------------


def _table(index, kind):
    entry = next(t for t in index.meta["profile"]["tables"] if t["kind"] == kind)
    return read_table(entry["path"], kind)


def _device_counts(index) -> dict[str, int]:
    ops = aggregate_ops(index, side="device")
    return {name: int(n) for name, n in zip(ops.columns[0].values, ops.find("Count").values)}


def _statistic(index) -> dict[str, tuple[int, float]]:
    stat = _table(index, "op_statistic")
    return {t: (int(n), float(us)) for t, n, us in zip(
        stat.find("OP Type").values, stat.find("Count").values, stat.find("Total Time").values)}


def test_op_statistic_counts_match_torch_npu_device_slices() -> None:
    """torch_npu names device slices by op type: counts and totals match op_statistic
    (totals to the µs the CSV rounds to)."""
    index = load_trace(str(SAMPLES / "torch_npu"), use_cache=False)
    stat = _statistic(index)
    ops = aggregate_ops(index, side="device")
    mine = {name: (int(n), float(total) / 1_000) for name, n, total in zip(
        ops.columns[0].values, ops.find("Count").values, ops.find("Total").values)}
    assert set(mine) == set(stat)
    for name, (count, total_us) in stat.items():
        assert mine[name][0] == count
        assert mine[name][1] == pytest.approx(total_us, abs=0.002)


@pytest.mark.parametrize("sample", ["ascend_cann8", "ascend_old_layout"])
def test_op_statistic_counts_match_msprof_device_slices_by_op_type(sample) -> None:
    """msprof names device slices by Op Name (Default/network/Conv2D-op100), one per task:
    op_statistic's Count per OP Type is the number of device slices whose names op_summary
    gives that type; no device op slice is left without a type."""
    index = load_trace(str(SAMPLES / sample), use_cache=False)
    summary = _table(index, "op_summary")
    type_of = dict(zip(summary.find("Op Name").values, summary.find("OP Type").values))
    counts = _device_counts(index)
    by_type: dict[str, int] = {}
    for name, n in counts.items():
        if name in type_of:
            by_type[type_of[name]] = by_type.get(type_of[name], 0) + n
    assert by_type == {t: n for t, (n, _) in _statistic(index).items()}
    assert sum(by_type.values()) == summary.n_rows
    # The step trace rows (Iteration N, FP_BP Time N, ...) of the old layout are markers on
    # a derived track, not device ops: every device op has a type.
    assert {n for n in counts if n not in type_of} == set()


@pytest.mark.parametrize("sample", ["ascend_cann8", "ascend_old_layout"])
def test_grouped_by_type_the_ops_are_op_statistic(sample) -> None:
    """By type (op_summary's OP Type of each op instance), the device ops of the timeline
    are op_statistic itself: the same types, counts and totals (to its rounding)."""
    index = load_trace(str(SAMPLES / sample), use_cache=False)
    types = op_types(index, [_table(index, "op_summary")])
    ops = aggregate_ops(index, side="device", by="type", types=types)
    assert ops.columns[0].header == "Type"
    mine = {t: (int(n), float(total) / 1_000) for t, n, total in zip(
        ops.columns[0].values, ops.find("Count").values, ops.find("Total").values)}
    for op_type, (count, total_us) in _statistic(index).items():
        assert mine[op_type][0] == count
        # The CSV's durations are rounded to the ns: up to half a ns per instance.
        assert mine[op_type][1] == pytest.approx(total_us, abs=0.0005 * count + 0.001)
    # Instances of a type are the slices whose names op_summary gives it.
    row = list(ops.columns[0].values).index("DropOutDoMask")
    found = op_instances(index, int(ops.find("name_id").values[row]), by="type",
                         types=types, side="device")
    assert len(found) == _statistic(index)["DropOutDoMask"][0]
    assert all("DropOutDoMask" in index.slice_name(int(i)) for i in found)


def test_types_without_tables_come_from_scoped_names(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", [
        x("Default/network/Conv2D-op12", 0, 10, cat=""),
        x("Default/net/Conv2D-op7", 20, 5, cat=""),
        x("aten::conv2d", 0, 4, tid=2, pid=2),
        x("Gradients/a-b/MatMul-op3", 40, 1, cat="")])
    index = load(path)
    types = op_types(index)
    labels = {index.strings[i]: types.labels[types.of_name[i]]
              for i in np.unique(index.col("slices.name")).tolist()}
    assert labels == {"Default/network/Conv2D-op12": "Conv2D",
                      "Default/net/Conv2D-op7": "Conv2D", "aten::conv2d": "aten::conv2d",
                      "Gradients/a-b/MatMul-op3": "MatMul"}
    ops = aggregate_ops(index, by="type")
    assert _rows(ops)["Conv2D"][:2] == (2, 15_000)
    with pytest.raises(ProftuiError, match="name, category, type, engine"):
        aggregate_ops(index, by="colour")


def test_a_window_says_which_columns_are_clipped_and_which_are_whole(tmp_path: Path) -> None:
    index = load(write_trace(tmp_path / "t.json", [x("step", 0, 100), x("tail", 100, 20)]))
    whole = aggregate_ops(index)
    assert [c.header for c in whole.columns[2:7]] == ["Total", "Self", "Avg", "Min", "Max"]
    cut = aggregate_ops(index, start_ns=90 * US, end_ns=110 * US)  # 10 µs of each 100/20 µs op
    at = list(cut.columns[0].values).index("step")
    row = {c.name: c.values[at] for c in cut.columns}
    assert row["Total"] == 10 * US and row["Avg"] > row["Total"]  # hence the headers:
    assert [c.header for c in cut.columns[2:7]] == [
        "Total", "Self", "Avg (whole)", "Min (whole)", "Max (whole)"]
    assert [c.name for c in cut.columns[2:7]] == ["Total", "Self", "Avg", "Min", "Max"]


def test_op_totals_never_wrap_negative(tmp_path: Path) -> None:
    from proftui.core.ops.aggregate import sums_ns

    big = np.full(6, 2 * 10**18, np.int64)  # 1.2e19 ns in all: past int64
    keys = np.array([0, 0, 0, 0, 0, 1])
    assert sums_ns(keys, big, 3).tolist() == [np.iinfo(np.int64).max, 2 * 10**18, 0]
    # B/E pairs 54 years long (X events that long are refused as they are read): damage
    events = [e for tid in range(40) for e in (
        {"ph": "B", "name": "big", "pid": 1, "tid": tid, "ts": 0},
        {"ph": "E", "pid": 1, "tid": tid, "ts": 1.7e15})] + [x("ok", 0, 5)]
    index = load(write_trace(tmp_path / "t.json", events))
    assert {p.kind: p.count for p in index.diagnostics} == {"too_long": 40}
    table = aggregate_ops(index)
    total = table.columns[2].values
    assert total.min() >= 0 and list(table.columns[0].values) == ["ok", "big"]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_ops_in_chunks_are_the_ops_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         chunk: int) -> None:
    """Every column, the slices taken a few at a time (the Window (%) column's busy time with
    a track's (key, track) pairs going on from one chunk to the next), is the one taken over
    all slices at once: in the whole trace, a window and each group's own window."""
    import random

    from proftui.core.ops import aggregate

    rng = random.Random(chunk)
    events = [x(rng.choice("abcd"), rng.randrange(0, 500), rng.randrange(1, 60),
                tid=rng.randrange(1, 4), pid=rng.randrange(1, 3)) for _ in range(300)]
    index = load(write_trace(tmp_path / "t.json", events))
    groups = {str(index.strings[g]): (100, 400) for g in np.unique(track_groups(index))
              if g >= 0}
    asked = [{}, {"start_ns": 120_000, "end_ns": 333_000}, {"groups": groups or None},
             {"side": "host", "by": "category"}]
    whole = [aggregate_ops(index, **kw) for kw in asked]
    monkeypatch.setattr(aggregate, "AGGREGATE_CHUNK", chunk)
    for kw, table in zip(asked, whole):
        chunked = aggregate_ops(index, **kw)
        assert [c.name for c in table.columns] == [c.name for c in chunked.columns]
        for a, b in zip(table.columns, chunked.columns):
            assert np.array_equal(np.asarray(a.values), np.asarray(b.values),
                                  equal_nan=a.kind != "text"), (kw, a.name)
