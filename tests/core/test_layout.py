"""Slice layout through the importer: nesting depth, extra rows for overlaps, track rows;
and layout_tracks against a copy of the algorithm it replaced, on random crowded tracks.

Overlapping slices that do not nest (Ascend hardware streams, torch_npu) must end on rows of
their own: no two slices on one row of a track may overlap, and a slice properly inside
another sits one row below it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from proftui.core import TraceIndex
from proftui.core.build import lanes
from proftui.core.build.lanes import (
    _nested_depths,
    _rows_and_lanes,
    layout_tracks,
    sort_slices,
)

from helpers import BATCH_SIZES, load, problems, slices, write_trace


def x(name: str, ts: float, dur: float, tid: int = 1, pid: int = 1) -> dict:
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def depth_of(index: TraceIndex) -> dict[str, int]:
    return {s[0]: s[4] for s in slices(index)}


def assert_rows_never_overlap(index: TraceIndex) -> None:
    """No two slices on the same row of a track overlap; rows and counts are consistent."""
    a = index.arrays
    track, start, depth = a["slices.track"], a["slices.start"], a["slices.depth"]
    end = start + a["slices.dur"]
    key = np.lexsort((start, track))
    assert np.array_equal(key, np.arange(len(key))), "slices sorted by track, then start"
    for t in range(index.n_tracks):
        on = np.flatnonzero(track == t)
        assert int(a["tracks.slice_count"][t]) == len(on)
        if len(on):
            assert int(a["tracks.first_slice"][t]) == on[0]
        assert int(a["tracks.rows"][t]) == (int(depth[on].max()) + 1 if len(on) else 0)
        for d in np.unique(depth[on]).tolist():
            row = on[depth[on] == d]  # in start order
            overlapping = start[row][1:] < end[row][:-1]
            assert not overlapping.any(), (t, d, [index.slice_name(i) for i in row])


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_overlaps_that_do_not_nest_go_to_extra_rows(tmp_path, batch) -> None:
    path = write_trace(tmp_path / "t.json", [
        x("A", 0, 10),
        x("B overlaps A", 5, 10),  # [5, 15): neither inside A nor around it
        x("C in A and B", 6, 2),
        x("D in B only", 12, 2),
        x("E", 20, 10),
        x("F in E", 25, 1),
        x("G elsewhere", 5, 10, tid=2),
    ])
    index = load(path, batch)
    assert_rows_never_overlap(index)
    # the properly nested slices keep their rows; B and D go below them, D inside B
    assert depth_of(index) == {"A": 0, "C in A and B": 1, "E": 0, "F in E": 1,
                               "B overlaps A": 2, "D in B only": 3, "G elsewhere": 0}
    assert index.col("tracks.rows").tolist() == [4, 1]
    assert problems(index) == {}


def test_proper_children_sit_one_row_below_their_parent(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", [
        x("root", 0, 100),
        x("child 1", 0, 40),  # starts with its parent: the longer one is the parent
        x("grandchild", 0, 10),
        x("great-grandchild", 5, 5),  # ends with its parent
        x("child 2", 40, 60),  # touches child 1 and ends with root
        x("zero at start", 40, 0),
        x("zero at end", 100, 0),  # an instant at the root's end is not inside it
        x("after", 100, 5),
        {"ph": "B", "name": "b/e inside", "pid": 1, "tid": 1, "ts": 50},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 60},
    ])
    index = load(path)
    assert_rows_never_overlap(index)
    assert [(s[0], s[4]) for s in slices(index)] == [
        ("root", 0), ("child 1", 1), ("grandchild", 2), ("great-grandchild", 3),
        ("child 2", 1), ("zero at start", 2), ("b/e inside", 2), ("after", 0),
        ("zero at end", 1)]
    assert index.col("tracks.rows").tolist() == [4]


def test_duplicate_and_adjacent_slices(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", [
        x("one", 0, 10), x("two", 10, 10), x("three", 20, 10),  # back to back: one row
        x("dup", 40, 5), x("dup", 40, 5),  # the same event twice stacks, never overlaps
    ])
    index = load(path)
    assert_rows_never_overlap(index)
    assert [s[4] for s in slices(index)] == [0, 0, 0, 0, 1]


def test_staircase_of_overlaps(tmp_path) -> None:
    # every slice overlaps the next without nesting: rows are reused, not one per slice
    path = write_trace(tmp_path / "t.json", [x(f"s{i}", 10 * i, 15) for i in range(10)])
    index = load(path)
    assert_rows_never_overlap(index)
    # (two rows would do; the first slice keeps the nested row to itself, then two lanes)
    assert index.col("tracks.rows").tolist()[0] <= 3


@pytest.mark.parametrize("seed", range(6))
def test_random_overlaps_never_share_a_row(tmp_path, seed) -> None:
    rng = random.Random(seed)
    events = [x(f"e{i}", rng.randrange(0, 2000), rng.choice([0, 1, 5, 50, 300]),
                tid=rng.randrange(3)) for i in range(400)]
    events += [x("b/e", 0, 0)]  # keep a name on every track
    index = load(write_trace(tmp_path / "t.json", events))
    assert_rows_never_overlap(index)
    assert index.n_slices == len(events)


def _tree(rng: random.Random, start: int, end: int, level: int, out: list[tuple]) -> None:
    """Properly nested intervals inside [start, end), none equal to its parent, touching
    its parent's edges or its siblings at times: (start, dur, level)."""
    pos = start
    while level < 6 and end - pos > 1 and (level == 0 or rng.random() < 0.8):
        s = pos if rng.random() < 0.3 else rng.randrange(pos, end - 1)
        e = end if rng.random() < 0.3 else rng.randrange(s + 1, end + 1)
        if level and (s, e) == (start, end):
            e -= 1  # a child as long as its parent is a duplicate, not a child
        out.append((s, e - s, level))
        _tree(rng, s, e, level + 1, out)
        pos = e


@pytest.mark.parametrize("seed", range(6))
def test_random_proper_nesting_depth_is_the_number_of_ancestors(tmp_path, seed) -> None:
    rng = random.Random(100 + seed)
    intervals: list[tuple] = []
    _tree(rng, 0, 10_000, 0, intervals)
    assert len(intervals) > 5
    rng.shuffle(intervals)  # file order must not matter
    events = [x(f"n{i}", s, d) for i, (s, d, _) in enumerate(intervals)]
    index = load(write_trace(tmp_path / "t.json", events))
    assert_rows_never_overlap(index)
    got = depth_of(index)
    assert got == {f"n{i}": level for i, (_, _, level) in enumerate(intervals)}


def test_flow_points_bind_on_extra_rows(tmp_path) -> None:
    path = write_trace(tmp_path / "t.json", [
        x("A", 0, 10), x("B overlaps A", 5, 10), x("D in B only", 12, 2),
        x("target", 0, 100, tid=2),
        {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 13},
        {"ph": "f", "id": 1, "pid": 1, "tid": 2, "ts": 50, "bp": "e"},
    ])
    index = load(path)
    src = int(index.col("flows.src_slice")[0])
    assert index.slice_name(src) == "D in B only"  # the deepest slice around ts 13
    assert depth_of(index)["D in B only"] == 2


# --- layout_tracks against the algorithm it replaced --------------------------------------
# The reference below recomputes every round from scratch over the whole tracks that still
# hold an overflowing slice; layout_tracks corrects the depths of the previous round instead.
# Both must give the same numbers for every input.


def _reference_layout(track, start, dur, n_tracks):
    """layout_tracks (and its helpers below) as it was before the rounds corrected depths,
    step for step; it also returns how many rounds it ran."""
    n = len(track)
    rows = np.zeros(n_tracks, np.int32)
    s2 = start * 2
    e2 = (start + dur) * 2 + (dur == 0)
    first = np.searchsorted(track, np.arange(n_tracks + 1))
    depth = np.zeros(n, np.int64)
    parent = np.full(n, -1, np.int64)
    nested = np.ones(n, bool)
    todo = np.arange(n)
    rounds = 0
    for _ in range(8):
        rounds += 1
        sub = todo[nested[todo]]
        d, p = _reference_nested_depths(track[sub], s2[sub], e2[sub], n_tracks)
        has_parent = p >= 0
        bad = (has_parent & (e2[sub] > e2[sub][np.maximum(p, 0)])) | (d < 0)
        depth[sub] = d
        parent[sub] = np.where(has_parent, sub[np.maximum(p, 0)], -1)
        if not bad.any():
            break
        nested[sub[bad]] = False
        redo = np.unique(track[sub[bad]])
        todo = np.concatenate([np.arange(first[t], first[t + 1]) for t in redo.tolist()])
    else:
        nested[todo] = False
    # (packing what is not nested did not change: the same code)
    return (*_rows_and_lanes(track, start, dur, depth, parent, nested, rows), rounds)


def _reference_nested_depths(track, s2, e2, n_tracks):
    depth, _ = _nested_depths(track, s2, e2)  # (counting the depths did not change)
    return depth, _reference_parents(track, depth, len(track))


def _reference_parents(track, depth, n):
    cand = np.full(n, -1, np.int64)
    if n == 0 or depth.min() < 0:
        return cand
    small = depth.max() < np.iinfo(np.int16).max
    by_depth = np.argsort(depth.astype(np.int16) if small else depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2))
    for level in range(len(bounds) - 2):
        above = by_depth[bounds[level]: bounds[level + 1]]
        below = by_depth[bounds[level + 1]: bounds[level + 2]]
        pos = np.searchsorted(above, below) - 1
        cand[below] = np.where(pos >= 0, above[np.maximum(pos, 0)], -1)
    safe = np.maximum(cand, 0)
    ok = (cand >= 0) & (track[safe] == track)
    return np.where(ok, cand, -1)


def _onion(rng: random.Random, at: int, layers: int) -> list[tuple[int, int]]:
    """A slice and `layers` slices each inside the one before, all overflowing the first:
    each round of layout finds only the outermost layer left (start, dur)."""
    base = rng.randrange(2, 8)
    out = [(at, base)]
    for j in range(layers):
        s = at + rng.randrange(1, base) + j
        out.append((s, at + 4 * base + 2 * layers - j - s))
    return out


def _random_slices(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Small crowded tracks: ties, zero-length, duplicate, nested and overflowing slices."""
    rng = random.Random(seed)
    n_tracks = rng.randrange(1, 5)
    events = []  # (track, start, dur)
    for t in range(n_tracks):
        span = rng.choice([20, 60, 300])
        for _ in range(rng.randrange(0, 60)):
            s = rng.randrange(span)
            events.append((t, s, rng.choice([0, 0, 1, 2, 3, 5, 8, 13, span // 2, span])))
        for _ in range(rng.randrange(0, 3)):  # peeled one layer per round, up to giving up
            events += [(t, s, d) for s, d in _onion(rng, rng.randrange(span),
                                                   rng.randrange(1, 11))]
        if events and rng.random() < 0.3:
            events.append(rng.choice(events))  # a duplicate
    if seed % 10 == 0:  # times too far apart for one composite key
        events.append((n_tracks - 1, 1 << 60, 5))
    if not events:
        events.append((0, 0, 0))
    track, start, dur = (np.array(c, np.int64) for c in zip(*events))
    order = sort_slices(track.astype(np.int32), start, dur)
    return track.astype(np.int32)[order], start[order], dur[order], n_tracks


def test_layout_matches_the_algorithm_it_replaced() -> None:
    rounds_seen = []
    for seed in range(400):
        track, start, dur, n_tracks = _random_slices(seed)
        want_depth, want_parent, want_rows, rounds = _reference_layout(track, start, dur,
                                                                       n_tracks)
        depth, parent, rows = layout_tracks(track, start, dur, n_tracks)
        assert depth.tolist() == want_depth.tolist(), seed
        assert parent.tolist() == want_parent.tolist(), seed
        assert rows.tolist() == want_rows.tolist(), seed
        rounds_seen.append(rounds)
    # the inputs reach every path: nested at once, a few rounds, giving up after 8
    assert {1, 2, 3, 8} <= set(rounds_seen)
    assert sum(r == 8 for r in rounds_seen) >= 20


def test_two_threads_cut_a_busy_track_where_nothing_is_open(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Laid out in two threads, the slices are cut where every slice before has ended, inside
    one busy track too (training steps one after another): the same depths, parents and rows
    as in one, overflowing, given-up and far-apart slices included."""
    monkeypatch.setattr(lanes, "SPLIT_SLICES", 1)
    cuts_inside = 0
    for seed in range(120):
        rng = random.Random(seed)
        events = []
        for step in range(rng.randrange(1, 9)):  # crowded steps of track 0, 1000 apart
            track, start, dur, _ = _random_slices(seed * 31 + step)
            events += [(0, 1000 * step + s, d) for t, s, d in
                       zip(track.tolist(), start.tolist(), dur.tolist()) if t == 0]
            if rng.random() < 0.2:  # a slice across the next step's start: no cut there
                events.append((0, 1000 * step + 900, 300))
        events += [(1, rng.randrange(5000), rng.randrange(50)) for _ in range(rng.randrange(3))]
        if seed % 10 == 0:
            events.append((0, 1 << 60, 5))  # times too far apart for one composite key
        track, start, dur = (np.array(c, np.int64) for c in zip(*events))
        order = sort_slices(track.astype(np.int32), start, dur)
        track, start, dur = track.astype(np.int32)[order], start[order], dur[order]
        one = layout_tracks(track, start, dur, 2)
        two = layout_tracks(track, start, dur, 2, threads=2)
        for a, b in zip(one, two):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), seed
        if seed % 10 == 0:
            continue  # (too far apart to double: laid out in one piece)
        s2, e2 = lanes._doubled(start, dur)
        cut = lanes._clean_cut(track, start, dur, int(start.min()))
        if 0 < cut and track[cut - 1] == track[cut]:
            cuts_inside += 1
            assert e2[:cut][track[:cut] == track[cut]].max() <= s2[cut]
    assert cuts_inside >= 60  # (the inputs reach the path)


def test_negative_durations_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        layout_tracks(np.zeros(2, np.int32), np.array([0, 5]), np.array([10, -1]), 1)
