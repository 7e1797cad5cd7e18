"""Benchmark of the questions: the breakdown of every step and the advisor, on a cached trace.

Each figure is printed beside baselines measured in the same run, as ratios (absolute times
drift on shared machines): opening the trace from its cache, and the Ops pane's aggregation of
the whole trace (``aggregate_ops``), the heaviest thing a user already waits for.

- breakdown, cold: classifying every slice, building each group's interval coverage, then
  every step (what the first `proftui breakdown` or the Insights pane pays once per process);
- breakdown, warm: every step again from the built coverage;
- advise: every rule on every group (the breakdown warm);
- utilisation: 250 buckets over the whole capture (one repaint of the utilisation lines).

    python ../shared/bench/gen_trace.py --mb 1024 -o /tmp/k1g.json
    proftui index /tmp/k1g.json
    python bench/bench_analysis.py /tmp/k1g.json
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from proftui.core import load_trace
from proftui.core.analysis import activity, breakdown
from proftui.core.analysis.advise import advise
from proftui.core.analysis.overview import read_overview
from proftui.core.analysis.utilisation import utilisation
from proftui.core.ops.aggregate import aggregate_ops


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    """Best wall time of `repeat` runs, seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) if repeat > 1 else statistics.fmean(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    open_s = timed(lambda: load_trace(args.path), args.repeat)
    index = load_trace(args.path)
    _, tables, iterations = read_overview(index)
    ops_s = timed(lambda: aggregate_ops(index), args.repeat)

    def cold() -> None:
        activity._memo.pop(index, None)
        breakdown._memo.pop(index, None)
        breakdown.breakdown(index, iterations, tables)

    cold_s = timed(cold, args.repeat)
    warm_s = timed(lambda: breakdown.breakdown(index, iterations, tables), args.repeat)
    advise_s = timed(lambda: advise(index, iterations, tables), args.repeat)
    util_s = timed(lambda: utilisation(index, index.start_ns, index.end_ns, 250, tables),
                   args.repeat)
    print(f"{args.path}: {index.n_slices:,} slices, {len(iterations.items)} steps")
    print(f"baselines: open from cache {open_s * 1e3:8.1f} ms, "
          f"ops of the whole trace {ops_s * 1e3:8.1f} ms")
    for label, s in (("breakdown, cold", cold_s), ("breakdown, warm", warm_s),
                     ("advise (all rules)", advise_s), ("utilisation, 250 buckets", util_s)):
        print(f"{label:26s} {s * 1e3:9.1f} ms  {s / open_s:6.2f} x open  "
              f"{s / ops_s:6.2f} x ops")


if __name__ == "__main__":
    main()
