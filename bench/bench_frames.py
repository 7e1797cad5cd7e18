"""Benchmark of frame times in a Pilot-driven session: zoom, pan and select on a big trace.

A cached trace is opened in the app under Textual's Pilot (`app.run_test`, headless) and a
scripted session is played with real key presses: zoom-ins (w) down to a few microseconds
with pans (a/d) and line moves (up/down) on the way, Enter on a slice, slice steps
(left/right), then zoom-outs (s) with pans back to the whole trace. The same session runs on
a small trace (the baseline: 40 MB, about 0.1 M slices, by default) in the same run, rounds
alternated, so that the ratio shows how frame time grows with the trace.

A *frame* is the work the app's UI thread (its event loop) does from the moment a key event
is handed to the driver (as Pilot presses keys) to the end of the first screen update that
repainted the timeline after it: the key's binding and action, the messages it posts (window
changed, slice selected, the details pane ...), the compositor's update (every dirty line of the
timeline queried and painted) and turning that update into the bytes a terminal would be sent
(Textual's headless driver skips this; the benchmark does it, as a real driver would). It is
counted in CPU time of that thread (`time.thread_time`), so that other jobs on a shared machine
do not inflate it; the wall latency (Textual's 60 fps update timer and any preemption included)
is printed beside it. Pilot's own waits for every widget are outside the timed window. The
`paint` column is the part spent in `Timeline.render_line` (query and paint of its lines).

    python bench/bench_frames.py --mb 4000          # ~10 M slices (generating takes ~10 min)
    python bench/bench_frames.py --trace BIG --base-trace SMALL
    python bench/bench_frames.py --quick            # 200 MB against 40 MB: a smoke run
    python bench/bench_frames.py --profile zoom_in  # + cProfile of that action's key handling

Nothing fails: the figures are printed beside the targets of ../shared/PERF.md (a frame
<= 16 ms typical, <= 33 ms worst at 10 M intervals).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "tui"))
from bench_reopen import generated_trace  # noqa: E402
from tui_support import settle  # noqa: E402  (the app tests' wait for workers)


def session(mode: str = "") -> list[tuple[str, str]]:
    """The scripted session: (action kind, key) pairs; `mode` "flows": F first (every flow in
    view drawn for the rest of it); "folded": z first (the steps folded), and lines moved
    where the normal session selects slices (Enter, arrows and Esc would leave the fold)."""
    keys: list[tuple[str, str]] = {"flows": [("flows", "F")], "folded": [("fold", "z")]}.get(
        mode, [])
    for i in range(20):  # down to ~1/3300 of the trace
        keys.append(("zoom_in", "w"))
        if i % 4 == 3:
            keys += [("pan", "d"), ("pan", "d"), ("pan", "a")]
        if i % 5 == 4:
            keys += [("line", "down"), ("line", "up")]
    if mode != "folded":
        keys.append(("enter", "enter"))
        keys += [("step", "right")] * 4 + [("step", "left")] * 2
    keys += [("line", "down"), ("line", "down"), ("line", "up")]
    if mode != "folded":
        keys.append(("escape", "escape"))
    for i in range(20):
        keys.append(("zoom_out", "s"))
        if i % 4 == 1:
            keys += [("pan", "a"), ("pan", "d")]
    return keys


# -- the child: one session in the app, frames timed ---------------------------------------------


async def _run_session(path: str, size: tuple[int, int], profile_kind: str,
                       mode: str = "") -> dict:
    import asyncio

    import numpy as np
    from textual.app import App

    from proftui.tui.app import ProftuiApp
    from proftui.tui.widgets.timeline import Timeline

    collecting = [0.0, 0.0]  # when the running collection started; seconds collecting

    def on_gc(phase, info):
        if phase == "start":
            collecting[0] = time.thread_time()
        else:
            collecting[1] += time.thread_time() - collecting[0]

    gc.callbacks.append(on_gc)
    painted = [0, 0.0]  # timeline lines painted, seconds spent painting them
    render_line = Timeline.render_line

    def timed_render_line(self, y):
        t = time.thread_time()
        try:
            return render_line(self, y)
        finally:
            painted[0] += 1
            painted[1] += time.thread_time() - t

    Timeline.render_line = timed_render_line  # type: ignore[method-assign]

    # Each screen update: (end, its thread CPU time, timeline lines so far, their paint time
    # so far).
    displays: list[tuple[float, float, int, float]] = []
    updated = asyncio.Event()
    display = App._display

    def timed_display(self, screen, renderable):
        display(self, screen, renderable)
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)  # what a real driver would write
        displays.append((time.perf_counter(), time.thread_time(), painted[0], painted[1]))
        updated.set()

    App._display = timed_display  # type: ignore[method-assign]

    app = ProftuiApp(path)
    frames: list[dict] = []
    async with app.run_test(size=size) as pilot:
        while app.first_paint_s is None and app.error is None:
            await pilot.pause(0.01)
        while app.summary is None and app.error is None:  # the overview, read after
            await pilot.pause(0.01)
        await settle(app, pilot)
        if app.error is not None:
            raise SystemExit(app.error)
        tl = app.query_one(Timeline)
        # Work on the busiest track, as one looks at where the work is.
        counts = app.index.arrays["tracks.slice_count"]
        busiest = int(np.argmax(counts))
        tl.show_track(busiest)
        tl.top_line = max(tl.focus_line - 2, 0)
        tl.refresh()
        await pilot.pause()
        await pilot.pause()
        profiler = None
        if profile_kind:
            import cProfile

            profiler = cProfile.Profile()
        for kind, key in session(mode):
            before = (time.thread_time(), painted[0], painted[1], collecting[1])
            if profiler is not None and kind == profile_kind:
                profiler.enable()
            t0 = time.perf_counter()
            # As Pilot presses a key (the event handed to the driver), but without Pilot's
            # waits for every widget inside the timed window: they are the harness's work.
            pressing = asyncio.create_task(app._press_keys([key]))
            end = None
            while end is None and time.perf_counter() - t0 < 5:
                updated.clear()
                try:
                    await asyncio.wait_for(updated.wait(), 1)
                except asyncio.TimeoutError:
                    break
                end = next((d for d in displays if d[0] > t0 and d[2] > before[1]), None)
            if profiler is not None and kind == profile_kind:
                profiler.disable()
            await pressing
            await pilot.pause()
            if end is None:  # nothing of the timeline repainted (a step at the trace's end)
                frames.append({"kind": kind, "key": key, "busy": None})
                continue
            # the first update after the key that repainted the timeline: lines and paint
            # time counted up to it
            at, cpu, lines, paint = end
            frames.append({"kind": kind, "key": key, "busy": cpu - before[0],
                           "latency": at - t0, "lines": lines - before[1],
                           "paint": paint - before[2], "gc": collecting[1] - before[3],
                           "window_ns": tl.view_end - tl.view_start})
        t = time.thread_time()
        gc.collect()
        out = {"frames": frames, "slices": app.index.n_slices, "cells": tl.cells,
               "body_lines": tl.body_height, "gc_objects": len(gc.get_objects()),
               "full_gc": time.thread_time() - t}
        if profiler is not None:
            import io
            import pstats

            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(35)
            out["profile"] = text.getvalue()
    return out


def child(path: str, size: str, profile_kind: str, mode: str = "") -> None:
    import asyncio

    width, height = (int(v) for v in size.split("x"))
    print(json.dumps(asyncio.run(_run_session(path, (width, height), profile_kind, mode))))


# -- the parent ------------------------------------------------------------------------------


def run_child(path: Path, size: str, env: dict[str, str], profile_kind: str = "",
              mode: str = "") -> dict:
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(path),
                           "--size", size, "--profile", profile_kind]
                          + ([f"--{mode}"] if mode else []),
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def stats(rounds: list[dict]) -> dict[str, dict[str, float]]:
    """Per action kind, median, p90 and max frame (ms), each the best over the rounds."""
    kinds = list(dict.fromkeys(f["kind"] for f in rounds[0]["frames"]))
    out: dict[str, dict[str, float]] = {}
    for kind in [*kinds, "all"]:
        per_round = []
        for r in rounds:
            ms = [f["busy"] * 1000 for f in r["frames"]
                  if f["busy"] is not None and kind in (f["kind"], "all")]
            mine = [f for f in r["frames"]
                    if f["busy"] is not None and kind in (f["kind"], "all")]
            ms = [f["busy"] * 1000 for f in mine]
            if ms:
                per_round.append({"n": len(ms), "median": statistics.median(ms),
                                  "p90": percentile(ms, 0.9), "max": max(ms),
                                  "paint": statistics.median(f["paint"] * 1000 for f in mine),
                                  "lat_med": statistics.median(f["latency"] * 1000
                                                               for f in mine)})
        if per_round:
            out[kind] = {k: min(r[k] for r in per_round) for k in per_round[0]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--trace", help="the big trace (default: generated, --mb MB)")
    parser.add_argument("--base-trace", help="the baseline trace (default: generated)")
    parser.add_argument("--mb", type=int, default=4000, help="big trace size (~10 M slices)")
    parser.add_argument("--base-mb", type=int, default=40, help="baseline size (~0.1 M slices)")
    parser.add_argument("--quick", action="store_true", help="200 MB against 40 MB")
    parser.add_argument("--dir", default="/tmp/proftui-bench")
    parser.add_argument("--cache", help="reuse this cache directory (skips indexing)")
    parser.add_argument("--size", default="200x50", help="terminal size (app, not timeline)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is kept")
    parser.add_argument("--profile", default="", metavar="KIND",
                        help="cProfile one more session's key handling of KIND (e.g. zoom_in)")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--flows", action="store_true",
                        help="press F first: every flow in view drawn in every frame")
    parser.add_argument("--folded", action="store_true",
                        help="press z first: the steps folded side by side in every frame")
    args = parser.parse_args()
    mode = "flows" if args.flows else "folded" if args.folded else ""
    if args.child:
        child(args.child, args.size, args.profile, mode)
        return
    root = Path(args.dir)
    big = Path(args.trace) if args.trace else generated_trace(root, 200 if args.quick else args.mb)
    base = Path(args.base_trace) if args.base_trace else generated_trace(root, args.base_mb)
    cache = Path(args.cache or tempfile.mkdtemp(prefix="proftui-bench-frames-"))
    env = {**os.environ, "PROFTUI_CACHE_DIR": str(cache)}
    for trace in (base, big):
        t = time.monotonic()
        subprocess.run([sys.executable, "-m", "proftui", "index", str(trace)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        run_child(trace, args.size, env)  # builds and caches the rows; warms the page cache
        print(f"{trace}: indexed and opened once in {time.monotonic() - t:.1f} s", flush=True)

    runs: dict[str, list[dict]] = {"base": [], "big": []}
    for _ in range(args.repeat):  # alternated, so that drift hits both alike
        runs["base"].append(run_child(base, args.size, env, mode=mode))
        runs["big"].append(run_child(big, args.size, env, mode=mode))
    figures = {name: stats(rounds) for name, rounds in runs.items()}
    first = runs["big"][0]
    print(f"\nframe = UI-thread CPU time from the key press to the repainted timeline "
          f"(best of {args.repeat} sessions of {len(session(mode))} keys; timeline "
          f"{first['cells']} cells x {first['body_lines']} lines)")
    print(f"big: {first['slices']:,} slices ({big.name}); baseline: "
          f"{runs['base'][0]['slices']:,} slices ({base.name})")
    print(f"  {'action':<9} {'n':>3} {'median ms':>10} {'p90 ms':>8} {'max ms':>8} "
          f"{'paint med':>9} {'base med':>9} {'base max':>9} {'x base med':>11} "
          f"{'x base max':>11} {'wall med':>9}")
    for kind, big_k in figures["big"].items():
        base_k = figures["base"].get(kind)
        if base_k is None:
            continue
        print(f"  {kind:<9} {big_k['n']:>3.0f} {big_k['median']:>10.2f} {big_k['p90']:>8.2f} "
              f"{big_k['max']:>8.2f} {big_k['paint']:>9.2f} {base_k['median']:>9.2f} "
              f"{base_k['max']:>9.2f} {big_k['median'] / base_k['median']:>11.2f} "
              f"{big_k['max'] / base_k['max']:>11.2f} {big_k['lat_med']:>9.2f}")
    print("  targets: <= 16 ms typical (median), <= 33 ms worst (max)")
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "runs": runs}, indent=1))
    if args.profile:
        print(run_child(big, args.size, env, args.profile, mode).get("profile", ""))
    if not args.cache:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
