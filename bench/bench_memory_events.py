#!/usr/bin/env python3
"""Indexing a Kineto trace taken with ``profile_memory=True``: one ``[memory]`` instant an
allocation, each carrying the allocator's totals that become counter samples.

Writes (once, deterministic) a trace of N host ops each followed by an allocator event, then
indexes it cold in fresh processes, in one process, with each event reader side by side
(PROFTUI_NATIVE=1 and 0, alternating), and prints medians, the ratio and the peak RSS. With
``--baseline DIR`` it also times the native reader of the proftui package under DIR (another
checkout: the code before a change). A benchmark, not a test.

    python bench/bench_memory_events.py                     # 250,000 allocations, ~100 MB
    python bench/bench_memory_events.py --events 1000000 --repeat 5 --baseline /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, resource, sys, time
from proftui.core.load.indexing import index_file
from proftui.core.source.streams import ByteSource
t0 = time.perf_counter()
index = index_file(ByteSource(sys.argv[1]), workers=1)
print(json.dumps({"seconds": time.perf_counter() - t0,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "samples": int(index.arrays["counters.sample_ts"].size)}))
"""


def write_trace(path: Path, n: int) -> None:
    """N host ops on one thread, each followed by an allocation or a free on the GPU."""
    rng = random.Random(0)
    ts, allocated = 1723826443391361.742, 0
    with open(path, "w") as out:
        out.write('{"schemaVersion": 1, "traceEvents": [\n')
        out.write(json.dumps({"ph": "M", "name": "process_name", "pid": 1,
                              "args": {"name": "python"}}))
        for i in range(n):
            ts += 1.25
            change = rng.choice([512, 1024, 4096, -512, -1024])
            allocated = max(0, allocated + change)
            op = {"ph": "X", "cat": "cpu_op", "name": f"aten::op{i % 50}", "pid": 1, "tid": 1,
                  "ts": round(ts, 3), "dur": 0.8, "args": {"External id": i}}
            memory = {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                      "pid": 1, "tid": 1, "ts": round(ts + 0.1, 3),
                      "args": {"Total Reserved": 16 << 20, "Total Allocated": allocated,
                               "Bytes": change, "Addr": 140_000_000_000 + i, "Device Id": 0,
                               "Device Type": 1}}
            out.write(",\n" + json.dumps(op) + ",\n" + json.dumps(memory))
        out.write("\n]}\n")


def run(path: Path, native: bool, pythonpath: str | None = None) -> dict:
    env = {**os.environ, "PROFTUI_NATIVE": "1" if native else "0"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=250_000, help="allocations (and ops)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/proftui-bench")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also time the native reader of the proftui package under DIR")
    args = parser.parse_args(argv)
    path = Path(args.dir) / f"memory_events_{args.events}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        write_trace(partial, args.events)
        os.replace(partial, path)
    runs: dict[str, list[dict]] = {"native": [], "python": []}
    if args.baseline:
        runs["baseline native"] = []
    for _ in range(args.repeat):
        runs["native"].append(run(path, True))
        runs["python"].append(run(path, False))
        if args.baseline:
            runs["baseline native"].append(run(path, True, args.baseline))
    size = path.stat().st_size
    print(f"{path.name}: {size / 1e6:.1f} MB, {args.events:,} allocations, one process, "
          f"medians of {args.repeat}")
    native = statistics.median(r["seconds"] for r in runs["native"])
    for name, found in runs.items():
        seconds = statistics.median(r["seconds"] for r in found)
        peak = max(r["peak"] for r in found)
        print(f"  {name:16} {seconds:7.3f} s  {seconds / native:5.2f}x native's time  "
              f"peak {peak / 2**20:6.0f} MiB ({peak / size:.2f}x the file)  "
              f"samples {found[0]['samples']:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
