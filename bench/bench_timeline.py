"""Benchmark of the timeline screen: first paint from a warm cache, frame times, memory.

Prints each figure beside a baseline measured in the same run, as a ratio:

- launch to first painted timeline (fresh process, warm cache) against launching an empty
  Textual app in the same harness;
- a frame (query + paint of every line) at zoom levels from the whole trace down to a few
  microseconds, after zoom and pan keys, against finding the window's slices by scanning the
  raw columns (what a frame costs without the row structure);
- resident memory with the trace open against the size of the memory-mapped cache files.

    python bench/bench_timeline.py --mb 3300        # ~10 M slices (generating takes a while)
    python bench/bench_timeline.py --trace FILE     # any trace
    python bench/bench_timeline.py --quick          # 100 MB smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN = HERE.parent.parent / "shared" / "bench" / "gen_trace.py"

FIRST_PAINT = r"""
import time, sys, json
t0 = time.monotonic()
from proftui.tui.app import ProftuiApp
import asyncio

async def main():
    app = ProftuiApp(sys.argv[1])
    async with app.run_test(size=(SIZE)) as pilot:
        while app.first_paint_s is None and app.error is None:
            await pilot.pause(0.005)
        painted = time.monotonic() - t0
        import resource
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"first_paint_s": painted, "slices": app.index.n_slices,
                          "peak_rss": rss, "cache": app.index.meta.get("cache_path")}))
asyncio.run(main())
"""

EMPTY_APP = r"""
import time, json
t0 = time.monotonic()
from textual.app import App
from textual.widgets import Static
import asyncio

class Empty(App):
    def compose(self):
        yield Static("hello")

async def main():
    app = Empty()
    async with app.run_test(size=(SIZE)) as pilot:
        await pilot.pause()
        print(json.dumps({"first_paint_s": time.monotonic() - t0}))
asyncio.run(main())
"""

FRAMES = r"""
import time, sys, json, statistics, asyncio, resource
import numpy as np
from proftui.tui.app import ProftuiApp
from proftui.tui.widgets.timeline import Timeline
from proftui.core.ops.window import slices_in_window

def frame(timeline):
    timeline._cells_key = None
    t = time.perf_counter()
    for y in range(timeline.size.height):
        timeline.render_line(y)
    return time.perf_counter() - t

async def main():
    app = ProftuiApp(sys.argv[1])
    async with app.run_test(size=(SIZE)) as pilot:
        while app.first_paint_s is None:
            await pilot.pause(0.005)
        tl = app.query_one(Timeline)
        index = app.index
        # Show the busiest lines: scroll to the track with the most slices.
        counts = index.arrays["tracks.slice_count"]
        busiest = int(np.argmax(counts))
        tl.focus_line = next(n for n, l in enumerate(tl.lines) if l.track == busiest)
        tl.top_line = max(tl.focus_line - 2, 0)
        levels = []
        for level in range(int(sys.argv[2])):
            times, scans = [], []
            for action in ("pan_right", "pan_left", "pan_right", "pan_left", "pan_right"):
                getattr(tl, "action_" + action)()
                times.append(frame(tl))
            for _ in range(2):
                t = time.perf_counter()
                slices_in_window(index, tl.view_start, tl.view_end)
                scans.append(time.perf_counter() - t)
            levels.append({"window_ns": tl.view_end - tl.view_start,
                           "frames": times, "scan": statistics.median(scans)})
            for _ in range(4):
                tl.action_zoom_in()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"levels": levels, "lines": tl.size.height, "cells": tl.cells,
                          "peak_rss": rss, "rss_now": _rss_now()}))

def _rss_now():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

asyncio.run(main())
"""


def run(code: str, *args: str, env: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="a trace to open (default: generate one)")
    parser.add_argument("--mb", type=int, default=3300, help="size of the generated trace")
    parser.add_argument("--quick", action="store_true", help="a 100 MB trace")
    parser.add_argument("--dir", default="/tmp/proftui-bench")
    parser.add_argument("--size", default="230x52", help="terminal size (timeline ~200x50)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--levels", type=int, default=8, help="zoom levels (x5 each)")
    parser.add_argument("--cache", help="reuse this cache directory (skips indexing)")
    args = parser.parse_args()
    mb = 100 if args.quick else args.mb
    trace = Path(args.trace) if args.trace else Path(args.dir) / f"k{mb}.json"
    if not trace.exists():
        trace.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {trace} ({mb} MB) ...", flush=True)
        subprocess.run([sys.executable, str(GEN), "--mb", str(mb), "--layout", "compact",
                        "-o", str(trace)], check=True)
    width, height = (int(v) for v in args.size.split("x"))
    size = f"{width}, {height}"
    env = dict(os.environ)
    cache = args.cache or tempfile.mkdtemp(prefix="proftui-bench-cache-")
    env["PROFTUI_CACHE_DIR"] = cache
    print(f"indexing {trace} into {cache} ...", flush=True)
    t = time.monotonic()
    subprocess.run([sys.executable, "-m", "proftui", "index", str(trace)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    print(f"  indexed (or found in the cache) in {time.monotonic() - t:.1f} s")
    first = run(FIRST_PAINT.replace("SIZE", size), str(trace), env=env)  # builds the rows
    print(f"  first open (rows built and cached): {first['first_paint_s']:.2f} s, "
          f"{first['slices']:,} slices")

    paints, empties = [], []
    for _ in range(args.repeat):  # alternate, so drift hits both alike
        paints.append(run(FIRST_PAINT.replace("SIZE", size), str(trace), env=env))
        empties.append(run(EMPTY_APP.replace("SIZE", size), env=env))
    paint = statistics.median(p["first_paint_s"] for p in paints)
    empty = statistics.median(e["first_paint_s"] for e in empties)
    print(f"\nlaunch -> first painted timeline, warm cache (median of {args.repeat}):")
    print(f"  proftui {paint:.3f} s   empty Textual app {empty:.3f} s   ratio "
          f"{paint / empty:.2f}x   (target <= 1 s)")

    frames = run(FRAMES.replace("SIZE", size), str(trace), str(args.levels), env=env)
    print(f"\nframe = query + paint of {frames['lines']} lines x {frames['cells']} cells; "
          "baseline = scanning the raw columns for the window's slices")
    print(f"  {'window':>12} {'median ms':>10} {'worst ms':>9} {'scan ms':>8} {'x scan':>7}")
    all_frames = []
    for level in frames["levels"]:
        ms = [f * 1000 for f in level["frames"]]
        all_frames += ms
        med = statistics.median(ms)
        print(f"  {level['window_ns'] / 1e6:>10.4f}ms {med:>10.2f} {max(ms):>9.2f} "
              f"{level['scan'] * 1000:>8.1f} {med / (level['scan'] * 1000):>7.3f}")
    print(f"  all levels: median {statistics.median(all_frames):.2f} ms, worst "
          f"{max(all_frames):.2f} ms   (targets <= 16 typical, <= 33 worst)")
    cache_bytes = sum(p.stat().st_size for p in Path(cache).iterdir())
    print(f"\nmemory with the trace open: RSS {frames['rss_now'] / 1e6:,.0f} MB, peak "
          f"{frames['peak_rss'] / 1e6:,.0f} MB; cache files (mapped) {cache_bytes / 1e6:,.0f} MB"
          f"; RSS / cache {frames['rss_now'] / cache_bytes:.2f}x")


if __name__ == "__main__":
    main()
