"""Benchmark of the CSV export: events per second and MB/s, beside baselines run on the same
events in the same run (absolute times drift on shared machines):

- events of a window (1 M slices of a synthesised index, the one bench_ops.py uses):
  ``export.export_events`` against the obvious code, a ``csv.DictWriter`` over one dict per
  event with f-string times (pandas is not a dependency);
- the ops table of 1 M rows: ``export.export_table`` against ``csv.writer`` on the rows;
- args columns from a real trace file (200 k events, Kineto-like): ``export_events`` with two
  args keys (each batch of the file decoded once) against ``slice_args(index, i)`` per event
  (one batch decoded per event), the latter timed on 2,000 events and scaled.

    python bench/bench_export.py                  # 1 M events
    python bench/bench_export.py --events 200000  # smaller
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
import time

import numpy as np
from bench_ops import synth_index, synth_table  # noqa: I001 (run from bench/)

from proftui.core import load_trace
from proftui.core.export.to_csv import export_events, export_table
from proftui.core.query.args import slice_args


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def line(label: str, seconds: float, rows: int, path: str | None = None) -> None:
    size = f"{os.path.getsize(path) / 1e6 / seconds:7.1f} MB/s" if path else ""
    print(f"  {label:<52} {seconds * 1e3:9.0f} ms {rows / seconds:11,.0f} rows/s {size}")


def naive_events(index, path: str) -> None:
    """The obvious export: one dict per event, csv.DictWriter."""
    s = index.strings
    origin = index.start_ns
    start, dur = index.col("slices.start"), index.col("slices.dur")
    track, name, depth = index.col("slices.track"), index.col("slices.name"), \
        index.col("slices.depth")
    order = np.lexsort((depth, track, start))
    fields = ["name", "category", "process", "thread", "start_from_capture(us)",
              "end_from_capture(us)", "duration(us)", "depth"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        for i in order.tolist():
            t = int(track[i])
            b, d = int(start[i]) - origin, int(dur[i])
            e = b + d
            p = int(index.col("tracks.process")[t])
            writer.writerow({
                "name": s[name[i]], "category": s[index.col("slices.cat")[i]],
                "process": index.process_label(p) if p >= 0 else "",
                "thread": index.track_label(t),
                "start_from_capture(us)": f"{b // 1000}.{b % 1000:03d}",
                "end_from_capture(us)": f"{e // 1000}.{e % 1000:03d}",
                "duration(us)": f"{d // 1000}.{d % 1000:03d}", "depth": int(depth[i])})


def with_instants(index):
    """The synthesised index with an (empty) instants table, as every loaded index has."""
    index.arrays.update({"instants.ts": np.zeros(0, np.int64),
                         "instants.track": np.zeros(0, np.int32),
                         "instants.name": np.zeros(0, np.int32),
                         "instants.cat": np.zeros(0, np.int32),
                         "instants.ref": np.zeros(0, np.int64)})
    return index


def bench_events(n_events: int, folder: str) -> None:
    index = with_instants(synth_index(n_events))
    n = index.n_slices
    print(f"events: {n:,} slices on {index.n_tracks} tracks")
    ours, base = os.path.join(folder, "ours.csv"), os.path.join(folder, "naive.csv")
    t_ours = timed(lambda: export_events(index, ours, overwrite=True))
    line("export_events (us)", t_ours, n, ours)
    t_ns = timed(lambda: export_events(index, ours, unit="ns", overwrite=True))
    line("export_events (ns)", t_ns, n, ours)
    t_base = timed(lambda: naive_events(index, base))
    line("baseline: csv.DictWriter, a dict per event", t_base, n, base)
    print(f"  export_events is {t_base / t_ours:.1f}x the baseline's rate")


def bench_table(n_rows: int, folder: str) -> None:
    table = synth_table(n_rows)
    path, base = os.path.join(folder, "table.csv"), os.path.join(folder, "table_naive.csv")
    print(f"table: {n_rows:,} rows (op_summary-like)")
    t_ours = timed(lambda: export_table(table, path, overwrite=True))
    line("export_table", t_ours, n_rows, path)

    def naive() -> None:
        with open(base, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow([c.header for c in table.columns])
            writer.writerows(zip(*(c.values.tolist() for c in table.columns)))

    t_base = timed(naive)
    line("baseline: csv.writer on the rows (no neutralising)", t_base, n_rows, base)


def bench_args(n_events: int, folder: str) -> None:
    trace = os.path.join(folder, "args.json")
    rng = np.random.default_rng(0)
    events = [{"ph": "X", "name": f"aten::op{k % 50}", "cat": "cpu_op", "pid": 1,
               "tid": k % 4, "ts": k * 10, "dur": 5,
               "args": {"External id": k, "Input Dims": [[int(x) for x in rng.integers(1, 64, 3)]],
                        "Sequence number": k // 3}} for k in range(n_events)]
    with open(trace, "w") as f:
        json.dump({"traceEvents": events}, f)
    index = load_trace(trace, use_cache=False)
    n = index.n_slices
    print(f"args: {n:,} events, {os.path.getsize(trace) / 1e6:.0f} MB trace")
    path = os.path.join(folder, "args.csv")
    t_ours = timed(lambda: export_events(index, path, args_keys=["External id", "Input Dims"],
                                         overwrite=True))
    line("export_events with 2 args keys", t_ours, n, path)
    sample = min(2_000, n)
    t_one = timed(lambda: [slice_args(index, i) for i in range(sample)]) / sample * n
    line("baseline: slice_args(i) per event (scaled)", t_one, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--args-events", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bench_events(args.events, folder)
        bench_table(args.events, folder)
        bench_args(args.args_events, folder)


if __name__ == "__main__":
    main()
