"""Slice layout through the importer: nesting depth, extra rows for overlaps, track rows.

Overlapping slices that do not nest (Ascend hardware streams, torch_npu) must end on rows of
their own: no two slices on one row of a track may overlap, and a slice properly inside
another sits one row below it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from proftui.core import TraceIndex

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
