"""Benchmark of the ops panes: sorting and filtering a table of 1 M rows, aggregating the
slices of a window over a 10 M-slice index.

Each figure is printed beside a baseline measured in the same run, as a ratio (absolute times
drift on shared machines):

- sort 1 M rows by a number and by text: ``table_query.sort_order`` against Python's
  ``sorted()`` on the same keys;
- filter 1 M rows (substring on a text column, a numeric comparison with a unit):
  ``table_query.filter_mask`` against a Python list comprehension over the values;
- ops of the whole trace and of a window (a tenth of it), 10 M slices:
  ``aggregate.aggregate_ops`` (count, total, self, avg, min, max, share) against a pure-numpy
  group-by of count and total alone (``np.unique(return_inverse=True)`` + ``np.bincount``).

The index is synthesised with numpy (nested slices on host and device tracks) and laid out by
the same code as the indexer; finding every slice's parent (once per index, then kept beside
the cached index) is timed separately.

    python bench/bench_ops.py                 # 1 M rows, 10 M slices
    python bench/bench_ops.py --slices 2000000 --rows 200000   # smaller
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from proftui.core.build.lanes import layout_tracks, sort_slices
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.index import TraceIndex
from proftui.core.model.strings import StringTable
from proftui.core.model.table import Column, Table
from proftui.core.ops.aggregate import aggregate_ops
from proftui.core.query.parents import slice_parents
from proftui.core.tables.query import filter_mask, sort_order

N_NAMES = 2_000


def timed(fn, repeat: int = 3) -> float:
    """Median wall time of `fn()` in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def synth_table(n_rows: int, seed: int = 0) -> Table:
    """An op_summary-like table: Op Name (text, 5 k distinct), Task Duration (µs, some NaN)."""
    rng = np.random.default_rng(seed)
    names = np.array([f"Default/network/Op{k % 97}_{k}" for k in range(5_000)], dtype=object)
    name_col = names[rng.integers(0, len(names), n_rows)]
    dur = rng.lognormal(3.0, 1.5, n_rows)
    dur[rng.random(n_rows) < 0.01] = np.nan
    return Table("op_summary", "", [
        Column("Op Name", "Op Name", "", "text", name_col),
        Column("Task Duration(us)", "Task Duration", "us", "number", dur)], n_rows)


def synth_index(n_slices: int, n_tracks: int = 64, seed: int = 0) -> TraceIndex:
    """Tracks of back-to-back 1 ms parents, each holding three children (a fifth of which
    hold a grandchild); the second half of the tracks belongs to a "GPU 0" process."""
    rng = np.random.default_rng(seed)
    per_parent = 4.2  # parent, three children, and one in five a grandchild
    n_parents = max(int(n_slices / per_parent / n_tracks), 1)
    track = np.repeat(np.arange(n_tracks, dtype=np.int32), n_parents)
    p_start = np.tile(np.arange(n_parents, dtype=np.int64) * 1_000_000, n_tracks)
    p_start += track.astype(np.int64) * 7  # tracks not in lockstep
    p_dur = np.full(len(p_start), 900_000, np.int64)
    starts, durs, tracks = [p_start], [p_dur], [track]
    for k in range(3):
        starts.append(p_start + 100_000 + k * 260_000)
        durs.append(rng.integers(50_000, 250_000, len(p_start)))
        tracks.append(track)
    deep = rng.random(len(p_start)) < 0.2
    starts.append(p_start[deep] + 120_000)
    durs.append(np.full(int(deep.sum()), 20_000, np.int64))
    tracks.append(track[deep])
    start = np.concatenate(starts)
    dur = np.concatenate(durs)
    trk = np.concatenate(tracks).astype(np.int32)
    order = sort_slices(trk, start, dur)
    start, dur, trk = start[order], dur[order], trk[order]
    depth, _, rows = layout_tracks(trk, start, dur, n_tracks)
    n = len(start)
    texts = ["", "python", "CPU", "GPU 0", "0", "1"] + [f"op{k}" for k in range(N_NAMES)] + [
        f"thread {t}" for t in range(n_tracks)]
    strings = StringTable.from_strings(texts)
    name = (6 + rng.integers(0, N_NAMES, n)).astype(np.int32)
    first = np.searchsorted(trk, np.arange(n_tracks))
    half = n_tracks // 2
    return TraceIndex.from_columns(
        strings=strings, diagnostics=Diagnostics(),
        meta={"start_ns": int(start.min()), "end_ns": int((start + dur).max())},
        slices={"start": start, "dur": dur, "track": trk, "name": name,
                "cat": np.zeros(n, np.int32), "ref": np.arange(n, dtype=np.uint32),
                "depth": depth},
        tracks={"kind": np.zeros(n_tracks, np.int8),
                "process": (np.arange(n_tracks) >= half).astype(np.int32),
                "pid": np.where(np.arange(n_tracks) >= half, 4, 5).astype(np.int32),
                "tid": np.zeros(n_tracks, np.int32),
                "name": (6 + N_NAMES + np.arange(n_tracks)).astype(np.int32),
                "sort_index": np.zeros(n_tracks, np.int64), "rows": rows,
                "first_slice": first, "slice_count": np.diff(np.append(first, n))},
        processes={"pid": np.array([5, 4], np.int32), "name": np.array([1, 1], np.int32),
                   "labels": np.array([2, 3], np.int32), "sort_index": np.zeros(2, np.int64),
                   "group": np.zeros(2, np.int32)},
    )


def report(label: str, ours: float, baseline: float, what: str) -> None:
    ratio = baseline / ours
    verdict = f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"
    print(f"  {label:<44} {ours * 1e3:9.1f} ms   {what:<34} {baseline * 1e3:9.1f} ms"
          f"   {verdict}")


def bench_table(n_rows: int) -> None:
    table = synth_table(n_rows)
    names = table.columns[0].values
    dur = table.columns[1].values
    names_list, dur_list = names.tolist(), dur.tolist()
    print(f"table of {n_rows:,} rows ({len(set(names_list)):,} distinct names)")
    filter_mask(table, "x")  # factorise the text column once, as the widget's first filter does

    def py_sort_numbers():
        sorted(range(n_rows), key=lambda i: (math.isnan(dur_list[i]), -dur_list[i]))

    def py_sort_text():
        sorted(range(n_rows), key=lambda i: names_list[i].lower())

    report("sort by number, descending", timed(lambda: sort_order(table, 1, True)),
           timed(py_sort_numbers, 1), "sorted() on the same keys")
    report("sort by text", timed(lambda: sort_order(table, 0)), timed(py_sort_text, 1),
           "sorted() on lower-cased names")
    report('filter "op4" (substring, all text)', timed(lambda: filter_mask(table, "op4")),
           timed(lambda: [("op4" in s.lower()) for s in names_list], 1),
           "list comprehension")
    report('filter "Task Duration>100us"',
           timed(lambda: filter_mask(table, "Task Duration>100us")),
           timed(lambda: [v > 100 for v in dur_list], 1), "list comprehension")
    fresh = synth_table(n_rows, seed=1)
    report("filter text, first time (factorising)", timed(lambda: filter_mask(fresh, "op4"), 1),
           timed(lambda: [("op4" in s.lower()) for s in fresh.columns[0].values.tolist()], 1),
           "list comprehension")


def numpy_groupby(index: TraceIndex, lo: int, hi: int) -> None:
    """The baseline: count and clipped total per name with np.unique and np.bincount."""
    start, dur = index.col("slices.start"), index.col("slices.dur")
    keep = np.flatnonzero((start < hi) & (start + dur > lo))
    names = index.col("slices.name")[keep]
    s, e = start[keep], start[keep] + dur[keep]
    clipped = np.minimum(e, hi) - np.maximum(s, lo)
    uniq, inverse = np.unique(names, return_inverse=True)
    np.bincount(inverse, minlength=len(uniq))
    np.bincount(inverse, weights=clipped, minlength=len(uniq))


def bench_aggregate(n_slices: int) -> None:
    t0 = time.perf_counter()
    index = synth_index(n_slices)
    print(f"index of {index.n_slices:,} slices, {index.n_tracks} tracks, {N_NAMES:,} names "
          f"(synthesised in {time.perf_counter() - t0:.1f} s)")
    t0 = time.perf_counter()
    slice_parents(index)
    print(f"  parents of every slice (once per index)    {(time.perf_counter() - t0) * 1e3:9.1f}"
          " ms")
    lo, hi = index.start_ns, index.end_ns
    tenth_lo = lo + (hi - lo) * 4 // 10
    tenth_hi = lo + (hi - lo) * 5 // 10
    report("ops of the whole trace", timed(lambda: aggregate_ops(index)),
           timed(lambda: numpy_groupby(index, lo, hi)), "np.unique group-by (count, total)")
    report("ops of a tenth of it", timed(
        lambda: aggregate_ops(index, start_ns=tenth_lo, end_ns=tenth_hi)),
        timed(lambda: numpy_groupby(index, tenth_lo, tenth_hi)),
        "np.unique group-by (count, total)")
    report("ops of the whole trace, device side", timed(
        lambda: aggregate_ops(index, side="device")),
        timed(lambda: numpy_groupby(index, lo, hi)), "np.unique group-by (count, total)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the table")
    parser.add_argument("--slices", type=int, default=10_000_000, help="slices of the index")
    args = parser.parse_args()
    bench_table(args.rows)
    bench_aggregate(args.slices)


if __name__ == "__main__":
    main()
