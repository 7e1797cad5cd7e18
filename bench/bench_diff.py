"""Benchmark of `proftui diff` on two cached traces: the whole comparison beside opening both
from their caches and beside one side's whole-trace ops (the heaviest part a user already waits
for), as ratios.

    python ../shared/bench/gen_trace.py --mb 1024 -o /tmp/k1g.json
    python ../shared/bench/gen_trace.py --mb 1024 --seed 2 -o /tmp/k1g_b.json
    proftui index /tmp/k1g.json && proftui index /tmp/k1g_b.json
    python bench/bench_diff.py /tmp/k1g.json /tmp/k1g_b.json
"""

from __future__ import annotations

import argparse
import time

from proftui.core import load_trace
from proftui.core.analysis.diff import Opened, compare
from proftui.core.analysis.overview import read_overview
from proftui.core.ops.aggregate import aggregate_ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    args = parser.parse_args()
    t0 = time.perf_counter()
    indexes = [load_trace(p) for p in (args.base, args.new)]
    open_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    aggregate_ops(indexes[0])
    ops_s = time.perf_counter() - t0
    runs = []
    for _ in range(2):  # cold (first, as the command runs), then warm
        fresh = [load_trace(p) for p in (args.base, args.new)]
        t0 = time.perf_counter()
        sides = []
        for path, index in zip((args.base, args.new), fresh):
            _, tables, iterations = read_overview(index)
            sides.append(Opened(path, index, tables, iterations))
        found = compare(sides[0], sides[1])
        runs.append(time.perf_counter() - t0)
    print(f"{args.base} ({indexes[0].n_slices:,} slices) vs {args.new} "
          f"({indexes[1].n_slices:,} slices): {found.verdict}")
    print(f"baselines: open both from cache {open_s * 1e3:8.1f} ms, one side's whole-trace "
          f"ops {ops_s * 1e3:8.1f} ms")
    for label, s in (("diff, first in the process", runs[0]), ("diff, again", runs[1])):
        print(f"{label:28s} {s * 1e3:9.1f} ms  {s / open_s:7.1f} x open  {s / ops_s:6.2f} x ops")


if __name__ == "__main__":
    main()
