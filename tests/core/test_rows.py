"""Timeline rows and cells: checked against a brute-force evaluation of every cell."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from proftui.core.query.rows import build_rows, cell_boundaries, paint_cells

from helpers import load


def _random_trace(tmp_path, seed: int, n: int = 400, dense: bool = False):
    """Nested stacks on a few threads, plus a stream of overlapping (lane-packed) kernels."""
    rng = random.Random(seed)
    events = []
    for tid in (1, 2, 3):
        t = rng.randint(0, 50)
        while len(events) < n * tid // 3:
            top = rng.randint(1, 3000 if not dense else 40)
            events.append({"ph": "X", "name": f"top{rng.randint(0, 5)}", "pid": 1, "tid": tid,
                           "ts": t, "dur": top})
            inner = t
            while inner < t + top and rng.random() < 0.7:
                d = rng.randint(0, max(0, t + top - inner))
                events.append({"ph": "X", "name": f"in{rng.randint(0, 9)}", "pid": 1,
                               "tid": tid, "ts": inner, "dur": d})
                inner += d + rng.randint(0, 20)
            t += top + rng.choice([0, 0, 1, 5, 500])
    for _ in range(60):  # overlapping without nesting: extra lanes
        ts = rng.randint(0, 20000)
        events.append({"ph": "X", "name": "k", "pid": 2, "tid": 7, "ts": ts,
                       "dur": rng.randint(0, 900)})
    path = tmp_path / f"t{seed}.json"
    path.write_text(json.dumps(events))
    return load(path)


def _brute(index, rows, row, edges):
    """Per cell: busy fraction and the set of slices touching it (start < end of cell and
    end > start of cell; a zero-length slice touches the cell it lies in)."""
    members = rows.order[rows.first[row]: rows.first[row] + rows.count[row]]
    start = index.col("slices.start")[members]
    end = start + index.col("slices.dur")[members]
    busy, touching = [], []
    for a, b in zip(edges[:-1].tolist(), edges[1:].tolist()):
        overlap = np.clip(np.minimum(end, b) - np.maximum(start, a), 0, None)
        busy.append(overlap.sum() / max(b - a, 1))
        touch = (start < b) & ((end > a) | ((start >= a) & (end == start)))
        touching.append({int(members[i]): int(overlap[i]) for i in np.flatnonzero(touch)})
    return np.array(busy), touching


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cells", [1, 7, 80])
def test_cells_agree_with_brute_force(tmp_path, seed, cells) -> None:
    index = _random_trace(tmp_path, seed, dense=seed % 2 == 1)
    rows = build_rows(index)
    assert rows.count.sum() == index.n_slices
    span = index.end_ns - index.start_ns
    rng = random.Random(seed)
    windows = [(index.start_ns, index.end_ns)]
    for _ in range(4):
        a = index.start_ns + rng.randint(-span // 10, span)
        windows.append((a, a + rng.randint(1, span // 2 + 1)))
    all_rows = np.arange(rows.n_rows)
    for a, b in windows:
        got = paint_cells(index, rows, all_rows, a, b, cells)
        assert got.owner.shape == got.busy.shape == (rows.n_rows, cells)
        for r in range(rows.n_rows):
            busy, touching = _brute(index, rows, r, got.boundaries)
            np.testing.assert_allclose(got.busy[r], np.minimum(busy, 1.0), atol=1e-9)
            for c in range(cells):
                owner = int(got.owner[r, c])
                if not touching[c]:
                    assert owner == -1
                    continue
                assert owner in touching[c], (r, c)
                width = int(got.boundaries[c + 1] - got.boundaries[c])
                whole = [s for s, cover in touching[c].items() if cover == width]
                if whole:
                    assert owner == whole[0]


def test_rows_hold_disjoint_sorted_slices(tmp_path) -> None:
    index = _random_trace(tmp_path, 11)
    rows = build_rows(index)
    start = index.col("slices.start")
    end = start + index.col("slices.dur")
    for r in range(rows.n_rows):
        members = rows.order[rows.first[r]: rows.first[r] + rows.count[r]]
        assert (index.col("slices.track")[members] == rows.row_track[r]).all()
        assert (index.col("slices.depth")[members] == rows.row_depth[r]).all()
        assert (start[members][1:] >= end[members][:-1]).all()


def test_dense_cell_is_owned_by_its_longest_slice(tmp_path) -> None:
    """Thousands of slices in one cell: the longest owns it, and busy is exact."""
    durs = [3] * 5000
    durs[3777] = 9
    events, t = [], 0
    for i, d in enumerate(durs):
        events.append({"ph": "X", "name": f"s{i}", "pid": 1, "tid": 1, "ts": t, "dur": d})
        t += d + 1
    events.append({"ph": "X", "name": "far", "pid": 1, "tid": 1, "ts": 10 * t, "dur": 1})
    path = tmp_path / "dense.json"
    path.write_text(json.dumps(events))
    index = load(path)
    rows = build_rows(index)
    got = paint_cells(index, rows, np.array([0]), 0, 20 * t * 1000, 20)
    assert index.slice_name(int(got.owner[0, 0])) == "s3777"
    assert index.slice_name(int(got.owner[0, 10])) == "far"
    assert got.owner[0, 5] == -1 and got.busy[0, 5] == 0
    assert got.busy[0, 0] == pytest.approx(sum(durs) * 1000 / (t * 1000))


def test_boundaries_cover_the_window_exactly() -> None:
    edges = cell_boundaries(10, 1_000_000_000_010, 7)
    assert edges[0] == 10 and edges[-1] == 1_000_000_000_010 and (np.diff(edges) > 0).all()
    assert cell_boundaries(5, 5, 3).tolist()[-1] == 6  # an empty window still has width


def test_rows_round_trip_through_arrays(tmp_path) -> None:
    index = _random_trace(tmp_path, 3)
    rows = build_rows(index)
    again = type(rows).from_arrays(rows.arrays())
    a = paint_cells(index, rows, np.arange(rows.n_rows), index.start_ns, index.end_ns, 33)
    b = paint_cells(index, again, np.arange(rows.n_rows), index.start_ns, index.end_ns, 33)
    assert (a.owner == b.owner).all() and (a.busy == b.busy).all()
