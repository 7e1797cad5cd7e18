"""Benchmark of reopening a cached trace or folder of ranks: `proftui PATH` to the first painted
timeline, wall time from the command, beside baselines measured in the same run, as ratios.

Every figure is a fresh process, timed from just before it is started (interpreter start and
imports included) to the moment the app's timeline is first painted:

- `proftui PATH`, from a warm cache (the real command line: `proftui.tui.cli.main`, with
  Textual's headless driver so that no terminal is needed);
- an empty Textual app in the same harness (what any Textual program costs to show a frame);
- the viewer's first frame in bare Textual: an app of the same widgets (status line, progress
  bar, a timeline-sized Static, the room kept for the tabs and the footer, the prompt's
  Input), numpy imported, no proftui code: what the screen itself costs;
- a bare numpy reopen: the interpreter, `import numpy` and every array of the entry's cache
  files mapped with `np.frombuffer` (no checks, no app): the floor of reading the cache.

- with `--baseline DIR`, `proftui PATH` of another copy of proftui (DIR holds its `proftui`
  package, e.g. `git archive main --prefix=proftui/ | tar -x -C DIR`), to compare two versions
  of the code side by side; it indexes into a cache directory of its own (`--baseline-cache`
  to keep one between runs), as the versions' cache files may differ.

Rounds alternate them so that drift on a shared machine hits each alike; the best and the
median of `--repeat` are printed. `--profile N` adds the top N functions of one more
`proftui PATH` run sampled by py-spy (every thread, imports included), by samples inside them
and by samples of their own.

    python bench/bench_reopen.py --trace FILE                 # any trace or profile folder
    python bench/bench_reopen.py --mb 3300                    # ~10 M slices, generated
    python bench/bench_reopen.py --ranks 64 --rank-mb 50      # a folder of 64 ranks of 50 MB
    python bench/bench_reopen.py --quick                      # a 100 MB trace
    python bench/bench_reopen.py --trace FILE --baseline /tmp/base   # this code against another
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN = HERE.parent.parent / "shared" / "bench" / "gen_trace.py"

# `proftui PATH` as typed, with an import hook that notes when the timeline is first painted
# and ends the process there (the hook patches the app class as its module is first imported,
# so that nothing is imported earlier than the command itself imports it).
OPEN = r"""
import importlib.abc, importlib.util, json, os, sys, time

class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "proftui.tui.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            painted = module.ProftuiApp._painted

            def _painted(app):
                painted(app)
                now = time.time()
                index = app.index
                with open(os.environ["BENCH_OUT"], "w") as out:
                    json.dump({"painted": now, "first_paint_s": app.first_paint_s,
                               "from_cache": bool(index.meta.get("from_cache")),
                               "slices": index.n_slices}, out)
                os._exit(0)  # now: what runs after the first frame is not measured

            module.ProftuiApp._painted = _painted

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Hook())
from proftui.tui.cli import main
main(sys.argv[1:])
"""

EMPTY = r"""
import json, os, time
from textual.app import App
from textual.widgets import Static

class Empty(App):
    def compose(self):
        yield Static("hello")

    def on_mount(self):
        self.call_after_refresh(self.done)

    def done(self):
        with open(os.environ["BENCH_OUT"], "w") as out:
            json.dump({"painted": time.time()}, out)
        self.exit()

Empty().run()
"""

# The viewer's first frame (tui/app/shell.py's compose: the tabs and the footer come after it,
# in the room kept for them) in bare Textual, with numpy imported: the share of the first
# frame that is the screen's, not proftui's.
SCREEN = r"""
import json, os, time
import numpy
from textual.app import App
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, ProgressBar, Static

class Screen(App):
    CSS = "#room { height: 2fr; min-height: 7; } #main { height: 3fr; } #footer { height: 1; }"
    BINDINGS = [Binding(key, "bell", key) for key in "abcdefghi"]

    def compose(self):
        yield Static("status")
        yield ProgressBar(show_eta=True)
        yield Static("")
        with Vertical(id="main"):
            yield Static("timeline\n" * 30)
        yield Static("", id="room")
        yield Static("")
        yield Input()
        yield Static("", id="footer")

    def on_mount(self):
        self.query_one(ProgressBar).display = False
        self.call_after_refresh(self.done)

    def done(self):
        with open(os.environ["BENCH_OUT"], "w") as out:
            json.dump({"painted": time.time()}, out)
        self.exit()

Screen().run()
"""

# The floor: the cache files' arrays mapped with numpy and nothing else.
NUMPY = r"""
import json, mmap, os, struct, sys, time
import numpy as np
arrays = 0
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    length = struct.unpack_from("<Q", mm, 12)[0]  # after the 12-byte MAGIC (see cache_file)
    header = json.loads(bytes(mm[28:28 + length]))
    start = -(-(28 + length) // 64) * 64
    for entry in header["arrays"]:
        dtype = np.dtype(entry["dtype"])
        np.frombuffer(mm, dtype, entry["nbytes"] // dtype.itemsize, start + entry["offset"])
        arrays += 1
with open(os.environ["BENCH_OUT"], "w") as out:
    json.dump({"painted": time.time(), "arrays": arrays}, out)
"""

def timed(code: str, args: list[str], env: dict[str, str]) -> dict:
    """Run `code` in a fresh interpreter; its result, with `wall_s` from just before the
    start to the moment it noted."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**env, "BENCH_OUT": out.name}
        started = time.time()
        done = subprocess.run([sys.executable, "-c", code, *args], env=env, check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        text = Path(out.name).read_text()
    if done.returncode != 0 or not text:
        raise SystemExit(f"benchmark step failed:\n{done.stderr[-3000:]}")
    result = json.loads(text)
    result["wall_s"] = result["painted"] - started
    return result


def profile(path: Path, env: dict[str, str], top: int) -> None:
    """The top functions of one `proftui PATH` run to its first frame, sampled by py-spy."""
    if shutil.which("py-spy") is None:
        print("\n--profile needs py-spy (pip install py-spy)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.txt"
        env = {**env, "BENCH_OUT": str(Path(tmp) / "out.json")}
        subprocess.run(["py-spy", "record", "--rate", "1000", "--format", "raw", "--threads",
                        "-o", str(raw), "--", sys.executable, "-c", OPEN, str(path)],
                       env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        inside: Counter[str] = Counter()
        own: Counter[str] = Counter()
        total = 0
        for line in raw.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
            total += int(count)
            own[frames[-1]] += int(count)
            for frame in set(frames[1:]):  # the first is the thread
                inside[frame] += int(count)
    for title, counts in (("inside (inclusive)", inside), ("own (self)", own)):
        print(f"\npy-spy, {total} samples at 1 kHz, top {top} by samples {title}:")
        for frame, n in counts.most_common(top):
            print(f"  {n:6d} {100 * n / total:5.1f}%  {frame[:110]}")


def make_trace(args: argparse.Namespace) -> Path:
    """The trace or folder to open: given, or generated (and kept for the next run)."""
    if args.trace:
        return Path(args.trace)
    root = Path(args.dir)
    if args.ranks:
        sys.path.insert(0, str(HERE))
        from bench_cluster import make_ranks

        folder = root / f"{args.ranks}x{args.rank_mb:g}MB"
        make_ranks(folder, args.ranks, args.rank_mb)
        return folder
    return generated_trace(root, 100 if args.quick else args.mb)


def generated_trace(root: Path, mb: int) -> Path:
    """`root`/k`mb`.json, generated by gen_trace.py (compact layout) unless it is there."""
    trace = root / f"k{mb}.json"
    if not trace.exists():
        root.mkdir(parents=True, exist_ok=True)
        print(f"generating {trace} ({mb} MB) ...", flush=True)
        subprocess.run([sys.executable, str(GEN), "--mb", str(mb), "--layout", "compact",
                        "-o", str(trace)], check=True)
    return trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="a trace or profile folder (default: generate)")
    parser.add_argument("--mb", type=int, default=3300, help="generated trace size (MB)")
    parser.add_argument("--quick", action="store_true", help="a 100 MB trace")
    parser.add_argument("--ranks", type=int, default=0, help="a folder of this many ranks")
    parser.add_argument("--rank-mb", type=float, default=50.0, help="size of a rank (MB)")
    parser.add_argument("--dir", default="/tmp/proftui-bench")
    parser.add_argument("--cache", help="reuse this cache directory (skips indexing)")
    parser.add_argument("--size", default="200x50", help="terminal size")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", metavar="DIR",
                        help="also time `proftui PATH` with the proftui package under DIR")
    parser.add_argument("--baseline-cache", metavar="DIR",
                        help="the baseline's own cache directory, reused (default: a new one; "
                        "two versions may not read each other's cache files)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also print cProfile's top N entries of the reopen")
    args = parser.parse_args()
    path = make_trace(args)
    width, height = args.size.split("x")
    cache = Path(args.cache or tempfile.mkdtemp(prefix="proftui-bench-reopen-"))
    # Bytecode is written and used, as an installed package has it compiled.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = {**env, "PROFTUI_CACHE_DIR": str(cache), "COLUMNS": width, "LINES": height,
           "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver"}
    t = time.monotonic()
    subprocess.run([sys.executable, "-m", "proftui", "index", str(path)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    print(f"indexed {path} into {cache} (or found it there) in {time.monotonic() - t:.1f} s")
    first = timed(OPEN, [str(path)], env)  # stores what a first open derives (rows)
    print(f"first open: {first['wall_s']:.2f} s, {first['slices']:,} slices")
    files = sorted(str(p) for p in cache.iterdir() if ".idx" in p.name)
    rounds: dict[str, list[dict]] = {"open": [], "empty": [], "screen": [], "numpy": []}
    if args.baseline:
        rounds["baseline"] = []
        base_cache = Path(args.baseline_cache or tempfile.mkdtemp(prefix="proftui-bench-base-"))
        base_env = {**env, "PROFTUI_CACHE_DIR": str(base_cache), "PYTHONPATH": os.pathsep.join(
            [args.baseline] + [p for p in [env.get("PYTHONPATH")] if p])}
        subprocess.run([sys.executable, "-m", "proftui", "index", str(path)], env=base_env,
                       check=True, stdout=subprocess.DEVNULL)
        timed(OPEN, [str(path)], base_env)  # its bytecode compiled, its derived files stored
    for _ in range(args.repeat):
        rounds["open"].append(timed(OPEN, [str(path)], env))
        if args.baseline:
            rounds["baseline"].append(timed(OPEN, [str(path)], base_env))
        rounds["empty"].append(timed(EMPTY, [], env))
        rounds["screen"].append(timed(SCREEN, [], env))
        rounds["numpy"].append(timed(NUMPY, files, env))
    best = {k: min(r["wall_s"] for r in v) for k, v in rounds.items()}
    median = {k: statistics.median(r["wall_s"] for r in v) for k, v in rounds.items()}
    opened = min(rounds["open"], key=lambda r: r["wall_s"])
    assert all(r["from_cache"] for k in ("open", "baseline") for r in rounds.get(k, [])), \
        "the timed opens did not come from the cache"
    size = sum(os.path.getsize(f) for f in files)
    print(f"\ncommand -> first painted timeline, warm cache, best and median of {args.repeat} "
          f"({opened['slices']:,} slices; cache {size / 1e6:,.0f} MB in {len(files)} files):")

    def line(name: str, key: str, note: str = "") -> None:
        print(f"  {name:22s} {best[key]:6.3f} s  {median[key]:6.3f} s  {note}")

    line("proftui PATH", "open", f"(app's own first_paint_s {opened['first_paint_s']:.3f} s)")
    for name, key in (("empty Textual app", "empty"), ("the screen, numpy", "screen")):
        line(name, key, f"proftui - it {best['open'] - best[key]:+.3f} s best, "
                        f"{median['open'] - median[key]:+.3f} s median")
    line("numpy maps the arrays", "numpy", f"proftui / it {best['open'] / best['numpy']:5.2f}x")
    if args.baseline:
        base = min(rounds["baseline"], key=lambda r: r["wall_s"])
        line("baseline proftui PATH", "baseline",
             f"proftui / it {best['open'] / best['baseline']:5.2f}x best, "
             f"{median['open'] / median['baseline']:5.2f}x median (its first_paint_s "
             f"{base['first_paint_s']:.3f} s)")
    print("  all runs (s): " + "; ".join(
        k + " " + " ".join(f"{r['wall_s']:.3f}" for r in v) for k, v in rounds.items()))
    if args.profile:
        profile(path, env, args.profile)
    for given, directory in ((args.cache, cache),
                             (args.baseline_cache, base_cache if args.baseline else None)):
        if not given and directory is not None:
            shutil.rmtree(directory)


if __name__ == "__main__":
    main()
