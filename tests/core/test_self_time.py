"""Self time where nesting breaks: every instant of a thread's busy time belongs to one slice
(the covering one that started last), so self times sum to the busy time."""

from __future__ import annotations

import numpy as np
import pytest

from proftui.core import load_trace
from proftui.core.ops.aggregate import aggregate_ops, union_ns
from proftui.core.query import self_time
from proftui.core.query.rows import build_rows
from proftui.core.query.self_time import SELF_KIND, owned, owned_by_track, self_times
from proftui.core.query.slice_info import describe_slice

from helpers import load, write_trace

US = 1_000


def _x(name, ts, dur, tid=1):
    return {"ph": "X", "name": name, "cat": "python_function", "pid": 1, "tid": tid, "ts": ts,
            "dur": dur}


def _selfs(index) -> dict[str, int]:
    found = self_times(index)
    return {index.slice_name(i): int(found[i]) for i in range(index.n_slices)}


def test_owned_by_the_latest_started() -> None:
    assert owned(np.array([0, 5]), np.array([10, 15])).tolist() == [5, 10]
    assert owned(np.array([0, 5, 6]), np.array([10, 15, 8])).tolist() == [5, 8, 2]
    assert owned(np.array([0, 0, 2]), np.array([10, 4, 3])).tolist() == [6, 3, 1]
    assert owned(np.array([0, 20]), np.array([10, 30])).tolist() == [10, 10]  # a gap
    assert owned(np.array([0, 3, 3]), np.array([10, 3, 3])).tolist() == [10, 0, 0]
    assert owned(np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []


def test_owned_by_track_vectorised_equals_the_sweep() -> None:
    """Slices cut where a later one takes over nest, and own what the stack sweep gives them:
    on tracks as the index orders them, and clipped to a window (ties at its start stay in
    start order, whatever their clipped lengths)."""
    rng = np.random.default_rng(5)
    for trial in range(400):
        n = int(rng.integers(1, 120))
        track = np.sort(rng.integers(0, 3, n))
        start = rng.integers(0, 200, n)
        dur = rng.integers(0, 50, n) * (rng.random(n) > 0.1)
        order = np.lexsort((-dur, start, track))
        track, start, end = track[order], start[order], start[order] + dur[order]
        if trial % 2:
            inside = (start < 150) & (end > 50)
            track, start, end = (track[inside], np.maximum(start[inside], 50),
                                 np.minimum(end[inside], 150))
        want = [owned(start[track == t], end[track == t]) for t in np.unique(track)]
        assert owned_by_track(track, start, end).tolist() == \
            np.concatenate([np.zeros(0, np.int64), *want]).tolist()
    assert owned_by_track(np.array([0, 0, 0]), np.array([0, 5, 6]),
                          np.array([10, 15, 8])).tolist() == [5, 8, 2]


def test_the_sweep_loop_when_the_table_would_be_too_big(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(self_time, "TABLE_BUDGET_BYTES", 0)
    events = [_x(f"f{k % 3}", k, 3) for k in range(20)] + [_x("g", 0, 5, tid=2),
                                                          _x("h", 2, 5, tid=2)]
    index = load(write_trace(tmp_path / "t.json", events))
    assert owned_by_track(np.zeros(20, np.int64), np.arange(20), np.arange(20) + 3) is None
    assert _selfs(index)["g"] == 2 * US and _selfs(index)["h"] == 5 * US
    assert_self_sums_to_busy(index)


def test_overlap_without_nesting_is_never_more_than_the_slice(tmp_path) -> None:
    """A run_action of 4.8 µs showed 32.8 ms of self time: overlapping Python frames."""
    index = load(write_trace(tmp_path / "t.json", [
        _x("step", 0, 100), _x("run_action", 10, 30), _x("callback", 20, 50),
        _x("inner", 25, 5), _x("later", 60, 40)]))
    selfs = _selfs(index)
    # [0,10) step, [10,20) run_action, [20,25) callback, [25,30) inner, [30,60) callback
    # (the latest started of the three covering it), [60,100) later.
    assert selfs == {"step": 10 * US, "run_action": 10 * US, "callback": 35 * US,
                     "inner": 5 * US, "later": 40 * US}
    assert sum(selfs.values()) == 100 * US  # the thread's busy time
    dur = index.col("slices.dur")
    assert (self_times(index) <= dur).all() and (self_times(index) >= 0).all()
    rows = build_rows(index)
    assert [describe_slice(index, rows, i).self_ns for i in range(index.n_slices)] == \
        self_times(index).tolist()


def test_nested_tracks_keep_duration_less_children(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", [
        _x("a", 0, 100), _x("b", 10, 50), _x("c", 20, 10), _x("d", 70, 20),
        _x("z", 0, 0, tid=2)]))
    assert _selfs(index) == {"a": 30 * US, "b": 40 * US, "c": 10 * US, "d": 20 * US, "z": 0}


def test_two_overlapping_slices_split_the_thread(tmp_path) -> None:
    """A [0,10) and B [5,15): B, started last, owns [5,15); the sum is the busy 15 µs."""
    index = load(write_trace(tmp_path / "t.json", [_x("A", 0, 10), _x("B", 5, 10)]))
    assert _selfs(index) == {"A": 5 * US, "B": 10 * US}


def test_a_slice_inside_the_overlap_takes_from_the_later_one(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", [_x("a", 0, 10), _x("b", 5, 10),
                                                   _x("c", 6, 2)]))
    # [0,5) a, [5,6) b, [6,8) c, [8,15) b
    assert _selfs(index) == {"a": 5 * US, "b": 8 * US, "c": 2 * US}


def test_equal_starts_on_a_broken_track_make_the_shorter_inner(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", [_x("B", 0, 4), _x("A", 0, 10),
                                                   _x("C", 2, 4)]))
    # [0,2) B (inside A), [2,6) C (overflows B), [6,10) A
    assert _selfs(index) == {"A": 4 * US, "B": 2 * US, "C": 4 * US}


def test_zero_length_slices_own_nothing_on_a_broken_track(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", [
        _x("a", 0, 10), _x("b", 5, 10), _x("z0", 0, 0), _x("z7", 7, 0), _x("z15", 15, 0)]))
    assert _selfs(index) == {"a": 5 * US, "b": 10 * US, "z0": 0, "z7": 0, "z15": 0}


def test_whole_trace_self_times_are_kept_beside_the_cached_index(tmp_path, cache_dir,
                                                                 monkeypatch) -> None:
    trace = write_trace(tmp_path / "t.json", [_x("a", 0, 10), _x("b", 5, 10)])
    assert self_times(load_trace(str(trace))).tolist() == [5 * US, 10 * US]
    mapped = load_trace(str(trace))
    assert mapped.meta["from_cache"] is True
    assert len(list(cache_dir.glob(f"*.{SELF_KIND}"))) == 1

    def recompute(index):
        raise AssertionError("recomputed")

    monkeypatch.setattr(self_time, "compute_self_times", recompute)
    assert self_times(mapped).tolist() == [5 * US, 10 * US]


def test_window_through_a_broken_track(tmp_path) -> None:
    index = load(write_trace(tmp_path / "t.json", [_x("a", 0, 10), _x("b", 5, 10),
                                                   _x("c", 6, 2)]))
    origin = index.start_ns
    table = aggregate_ops(index, start_ns=origin + 4 * US, end_ns=origin + 12 * US)
    selfs = dict(zip(table.columns[0].values, table.find("Self").values.astype(int)))
    # [4,5) a, [5,6) b, [6,8) c, [8,12) b
    assert selfs == {"a": 1 * US, "b": 5 * US, "c": 2 * US}


def test_self_times_sum_to_each_threads_busy_time(tmp_path) -> None:
    rng = np.random.default_rng(3)
    events = [_x(f"f{k % 7}", int(s), int(d), tid=int(k % 3))
              for k, (s, d) in enumerate(zip(rng.integers(0, 10_000, 400),
                                             rng.integers(0, 700, 400)))]
    index = load(write_trace(tmp_path / "t.json", events))
    assert_self_sums_to_busy(index)


def assert_self_sums_to_busy(index) -> None:
    found = self_times(index)
    start, dur, track = (index.col("slices.start"), index.col("slices.dur"),
                         index.col("slices.track"))
    assert (found >= 0).all() and (found <= dur).all()
    for t in np.unique(track).tolist():
        mine = track == t
        assert int(found[mine].sum()) == union_ns(start[mine], start[mine] + dur[mine]), t


@pytest.mark.parametrize("n", [1, 2, 50])
def test_chains_of_partial_overlaps(tmp_path, n) -> None:
    index = load(write_trace(tmp_path / "t.json", [_x(f"s{k}", k, 3) for k in range(n)]))
    assert_self_sums_to_busy(index)
