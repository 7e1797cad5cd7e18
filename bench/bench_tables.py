#!/usr/bin/env python3
"""Summary-table benchmark: parsing a large kernel_details.csv / op_summary.csv cold and
reopening it from the cache, each as a ratio against a bare `csv.reader` pass over the same
file measured in the same run.

Generates (bench/gen_tables.py, deterministic; kept in --dir and reused) a torch_npu
kernel_details.csv and an msprof op_summary CSV of --mb MB each, with the headers of
../shared/FORMATS.md. Then, in fresh processes, alternating so that drift hits all alike:

- bare: `for row in csv.reader(f): pass` (the file opened as read_table opens it);
- cold: `read_table(path, use_cache=False)`, the parse alone (target <= 2x the bare pass);
- cold + store: `read_table(path)` into an empty cache (what a first open costs);
- reopen: `read_table(path)` from the cache (target <= 0.3x the bare pass).

Times are CPU seconds of the measured call (`time.process_time`: steadier than wall time on
a shared machine; the calls do no waiting) and MB/s of the file (1 MB = 10**6 bytes).

    python bench/bench_tables.py                 # 128 MB each
    python bench/bench_tables.py --quick         # 16 MB each, a smoke run
    python bench/bench_tables.py --profile       # also cProfile's top entries of a cold parse
    python bench/bench_tables.py --best --compare /work/pkgs/main  # another checkout's cold
                                                 # parse beside ours (a directory holding a
                                                 # proftui package), best of the rounds
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_tables import generate  # noqa: E402

CHILD = r"""
import csv, json, sys, time
path, what = sys.argv[1], sys.argv[2]
from proftui.core.cache.tables import read_table
t = time.process_time()
if what == "bare":
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        for row in csv.reader(f):
            pass
    rows = None
else:
    table = read_table(path, "kernel_details", use_cache=what != "cold")
    rows = table.n_rows
    if what == "reopen":
        assert not table.columns[-1].values.flags.writeable or table.columns[-1].kind == "text"
print(json.dumps({"seconds": time.process_time() - t, "rows": rows}))
"""

PROFILE = r"""
import cProfile, pstats, sys
from proftui.core.cache.tables import read_table
cProfile.run("read_table(sys.argv[1], use_cache=False)", sys.argv[2])
pstats.Stats(sys.argv[2]).sort_stats("tottime").print_stats(int(sys.argv[3]))
"""


def run(code: str, *args: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def workload(directory: Path, kind: str, mb: float) -> Path:
    """The generated CSV of `kind` and size, generated unless a file of that size is kept."""
    path = directory / f"{kind}_{mb:g}mb.csv"
    stamp = path.with_suffix(".gen")
    wanted = json.dumps([kind, mb, (HERE / "gen_tables.py").stat().st_size])
    if not path.exists() or not stamp.exists() or stamp.read_text() != wanted:
        directory.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} ...", flush=True)
        rows = generate(str(path), int(mb * 1e6), kind)
        print(f"  {rows:,} rows", flush=True)
        stamp.write_text(wanted)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=128, help="size of each CSV (MB)")
    parser.add_argument("--quick", action="store_true", help="16 MB files")
    parser.add_argument("--dir", default="/tmp/proftui-bench")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true",
                        help="print cProfile's top entries of a cold parse of each file")
    parser.add_argument("--compare", metavar="DIR",
                        help="also time the cold parse of the proftui package in DIR")
    parser.add_argument("--best", action="store_true",
                        help="the best of the rounds instead of their median")
    args = parser.parse_args()
    pick = min if args.best else statistics.median
    mb = 16 if args.quick else args.mb
    files = [workload(Path(args.dir), kind, mb) for kind in ("kernel_details", "op_summary")]
    print(f"\nCPU seconds in fresh processes, {'best' if args.best else 'median'} of "
          f"{args.repeat}; ratio = against the bare csv.reader pass of the same file")
    print(f"  {'file':28s} {'rows':>9s} {'bare':>7s} {'cold':>7s} {'x bare':>7s} {'MB/s':>6s}"
          f" {'+store':>7s} {'x bare':>7s} {'reopen':>7s} {'x bare':>7s}"
          + (f" {'compared':>8s} {'x bare':>7s}" if args.compare else ""))
    for path in files:
        size_mb = path.stat().st_size / 1e6
        times: dict[str, list[float]] = {}
        rows = 0
        for _ in range(args.repeat):
            cache = tempfile.mkdtemp(prefix="proftui-bench-tables-")
            env = dict(os.environ, PROFTUI_CACHE_DIR=cache)
            try:
                for what in ("bare", "cold", "store", "reopen"):
                    got = run(CHILD, str(path), what, env=env)
                    times.setdefault(what, []).append(got["seconds"])
                    rows = got["rows"] or rows
                if args.compare:
                    other = dict(env, PYTHONPATH=args.compare)
                    times.setdefault("compared", []).append(
                        run(CHILD, str(path), "cold", env=other)["seconds"])
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        med = {k: pick(v) for k, v in times.items()}
        bare = med["bare"]
        print(f"  {path.name:28s} {rows:>9,} {bare:>6.2f}s {med['cold']:>6.2f}s "
              f"{med['cold'] / bare:>6.2f}x {size_mb / med['cold']:>6.0f} "
              f"{med['store']:>6.2f}s {med['store'] / bare:>6.2f}x {med['reopen']:>6.3f}s "
              f"{med['reopen'] / bare:>6.3f}x"
              + (f" {med['compared']:>7.2f}s {med['compared'] / bare:>6.2f}x"
                 if args.compare else ""))
    print("  targets: cold <= 2x the bare pass (>= 60 MB/s), reopen <= 0.3x")
    if args.profile:
        for path in files:
            print(f"\ncProfile of a cold parse of {path.name}, by own time:")
            out = subprocess.run([sys.executable, "-c", PROFILE, str(path),
                                  tempfile.mktemp(prefix="proftui-prof-"), "12"],
                                 capture_output=True, text=True, check=True)
            print(out.stdout[out.stdout.find("   ncalls"):].rstrip())


if __name__ == "__main__":
    main()
