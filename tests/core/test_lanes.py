"""Slice layout: nesting depth, lanes for overlaps that do not nest, flow binding."""

from __future__ import annotations

import numpy as np
import pytest

from proftui.core.build import lanes
from proftui.core.build.lanes import bind_points, layout_tracks, sort_slices, stable_argsort
from proftui.core.runtime import halves


def _layout(intervals):
    track = np.array([t for t, _, _ in intervals], np.int32)
    start = np.array([s for _, s, _ in intervals], np.int64)
    dur = np.array([d for _, _, d in intervals], np.int64)
    order = sort_slices(track, start, dur)
    track, start, dur = track[order], start[order], dur[order]
    depth, parent, rows = layout_tracks(track, start, dur, int(track.max()) + 1)
    return track, start, dur, depth, parent, rows


def _check_rows_do_not_overlap(track, start, dur, depth) -> None:
    for t in np.unique(track):
        for d in np.unique(depth[track == t]):
            sel = (track == t) & (depth == d)
            s, e = start[sel], start[sel] + dur[sel]
            assert np.all(s[1:] >= e[:-1]), (t, d)


def test_nesting_and_ties() -> None:
    _, start, dur, depth, parent, rows = _layout([
        (0, 0, 100), (0, 10, 20), (0, 10, 5), (0, 40, 0), (0, 100, 10), (1, 5, 1)])
    assert list(zip(start.tolist(), dur.tolist(), depth.tolist())) == [
        (0, 100, 0), (10, 20, 1), (10, 5, 2), (40, 0, 1), (100, 10, 0), (5, 1, 0)]
    assert parent.tolist() == [-1, 0, 1, 0, -1, -1]
    assert rows.tolist() == [3, 1]


def test_times_too_far_apart_to_double_lay_out_as_near_ones() -> None:
    near = [(0, 0, 100), (0, 10, 20), (0, 10, 5), (0, 40, 0), (0, 100, 10), (0, 104, 20),
            (1, 5, 1)]
    far = 5 * 10**18  # ns: a hostile file's time stamp, 158 years after the others
    shifted = [(t, s + far if s >= 100 else s, d) for t, s, d in near]
    *_, depth, parent, rows = _layout(near)
    *_, far_depth, far_parent, far_rows = _layout(shifted)  # an int64 overflow, doubled
    assert far_depth.tolist() == depth.tolist() and far_parent.tolist() == parent.tolist()
    assert far_rows.tolist() == rows.tolist()


def test_overlaps_that_do_not_nest_go_to_extra_lanes() -> None:
    track, start, dur, depth, parent, rows = _layout([
        (0, 0, 10), (0, 5, 10), (0, 6, 2), (0, 12, 10), (0, 30, 5), (0, 31, 1)])
    _check_rows_do_not_overlap(track, start, dur, depth)
    by_start = dict(zip(start.tolist(), depth.tolist()))
    assert by_start[0] == 0 and by_start[30] == 0 and by_start[31] == 1
    assert by_start[5] >= 2 and by_start[12] >= 2  # below the nested rows, not under [0,10)
    child = start.tolist().index(6)  # [6, 8) nests properly under [0, 10)
    assert depth[child] == 1 and start[parent[child]] == 0
    assert rows[0] == max(depth) + 1


@pytest.mark.parametrize("seed", range(5))
def test_random_intervals_never_share_a_row(seed) -> None:
    rng = np.random.default_rng(seed)
    n = 400
    intervals = list(zip(rng.integers(0, 3, n).tolist(), rng.integers(0, 1000, n).tolist(),
                         rng.integers(0, 80, n).tolist()))
    track, start, dur, depth, parent, rows = _layout(intervals)
    _check_rows_do_not_overlap(track, start, dur, depth)
    has = parent >= 0
    # a slice's parent contains it and sits one row up in the same lane block
    assert np.all(start[parent[has]] <= start[has])
    assert np.all(start[parent[has]] + dur[parent[has]] >= start[has] + dur[has])


@pytest.mark.parametrize("seed", range(6))
def test_tracks_laid_out_in_two_halves_at_once_are_laid_out_the_same(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A track's layout depends on its own slices only: the halves of the tracks laid out
    in two threads give the layout of the whole, times far apart in one half, overflows
    in both, and the extra lanes included."""
    rng = np.random.default_rng(seed)
    n = 3000
    intervals = list(zip(rng.integers(0, 1 + seed, n).tolist(),
                         rng.integers(0, 5000, n).tolist(), rng.integers(0, 300, n).tolist()))
    if seed % 2:
        intervals.append((seed, 5 * 10**18, 10))  # the last track's times too far apart
    track, start, dur, depth, parent, rows = _layout(intervals)
    monkeypatch.setattr(lanes, "SPLIT_SLICES", 1)
    two = layout_tracks(track, start, dur, len(rows), threads=2)
    for whole, in_two in zip((depth, parent, rows), two):
        assert whole.dtype == in_two.dtype and np.array_equal(whole, in_two)


def test_bind_points() -> None:
    track, start, dur, depth, parent, rows = _layout([(0, 0, 100), (0, 10, 20), (1, 50, 5)])
    got = bind_points(track, start, dur, parent, np.array([0, 0, 0, 1, 1], np.int32),
                      np.array([15, 50, 200, 40, 60], np.int64),
                      np.array([True, True, True, False, False]))
    assert got.tolist() == [1, 0, -1, 2, -1]


@pytest.mark.parametrize("seed", range(4))
def test_points_bound_in_two_halves_at_once_bind_the_same(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Points bound in two threads (their searches, and the walks up the parents) bind to
    the slices they bind to in one: enclosing points and following ones, on every track,
    before, inside and after the slices."""
    rng = np.random.default_rng(seed)
    n = 2000
    track, start, dur, depth, parent, rows = _layout(list(zip(
        rng.integers(0, 3, n).tolist(), rng.integers(0, 10**6, n).tolist(),
        rng.integers(0, 10**5, n).tolist())))
    q = 5000 + seed  # an odd number of points too
    q_track = rng.integers(0, 4, q).astype(np.int32)  # (track 3 has no slice)
    q_ts = rng.integers(-10**4, 12 * 10**5, q)
    enclosing = rng.random(q) < 0.7
    one = bind_points(track, start, dur, parent, q_track, q_ts, enclosing)
    monkeypatch.setattr(halves, "LEAST", 1)
    monkeypatch.setattr(lanes, "_MANY_QUERIES", 1)
    two = bind_points(track, start, dur, parent, q_track, q_ts, enclosing, threads=2)
    assert (one >= 0).any() and (one < 0).any()
    assert np.array_equal(one, two)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 5000])
@pytest.mark.parametrize("high", [1, 3, 1 << 20, 1 << 50, 1 << 62])
@pytest.mark.parametrize("threads", [1, 2])
def test_stable_argsort_is_numpys_stable_argsort(n: int, high: int, threads: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Packed into one value sort where key and position fit 64 bits (ties in position
    order), into one per digit of the keys, least significant first, where they do not;
    with two threads, the one sort of two halves at once, then their merge."""
    monkeypatch.setattr(halves, "LEAST", 1)
    key = np.random.default_rng(n + high).integers(0, high, n)
    got = stable_argsort(key, threads)
    assert got.dtype == np.int64
    assert np.array_equal(got, np.argsort(key, kind="stable"))


@pytest.mark.parametrize("spread", [1 << 52, 1000, 64, 3])
@pytest.mark.parametrize("threads", [1, 2])
def test_stable_argsort_of_keys_a_few_bits_too_long(spread: int, threads: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys that fit beside their positions but for their lowest 1 to 4 bits are sorted
    without those bits, and the runs of keys equal without them put in order after: a few
    runs where the keys lie far apart, nearly every key where they lie close (true ties too)."""
    monkeypatch.setattr(halves, "LEAST", 1)
    rng = np.random.default_rng(spread + threads)
    for top in (51, 52, 53, 54):  # 5000 positions take 13 bits: 1 to 4 bits too long
        key = (1 << top) + rng.integers(0, min(spread, 1 << top), 5000)
        assert int(key.max()).bit_length() + 13 - 64 == top - 50
        got = stable_argsort(key, threads)
        assert got.dtype == np.int64
        assert np.array_equal(got, np.argsort(key, kind="stable")), top


def test_slices_sorted_in_two_halves_at_once_sort_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """(track, start, longer first): ties of track and start across the halves included."""
    rng = np.random.default_rng(7)
    n = 4001
    track = rng.integers(0, 3, n).astype(np.int32)
    start = rng.integers(0, 500, n)
    dur = rng.integers(0, 50, n)
    one = sort_slices(track, start, dur)
    monkeypatch.setattr(halves, "LEAST", 1)
    assert np.array_equal(sort_slices(track, start, dur, threads=2), one)
