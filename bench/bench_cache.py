#!/usr/bin/env python3
"""Cache benchmark: what verifying the checksums costs a reopen, beside the reopen without.

Indexes a trace (default: a 1 GB Kineto-like one from ../shared/bench/gen_trace.py) into a
cache directory with its timeline rows, then, in fresh processes, alternately:

- reopens it (`load_trace` + `rows_for`, as the app does before its first frame) with the
  checksums verified (as proftui does) and without (the baseline), warm page cache, median
  of --repeat; the same with the cache files' pages dropped first (posix_fadvise), when the
  system allows it;
- the candidate checks over the same bytes in one process: proftui's (64-bit sums of 4 KiB
  pages in numpy, weighted by their place), zlib.crc32 (one and two threads, as before),
  adler32, SHA-1, BLAKE2b, and one page in 64 sampled, as GB/s;
- what marking an entry as used costs (one utime call) beside a stat of the file.

    python bench/bench_cache.py --trace /tmp/k1g.json          # reuse a trace
    python bench/bench_cache.py --mb 4100                       # ~10 M slices
    python bench/bench_cache.py --quick                         # 100 MB smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN = HERE.parent.parent / "shared" / "bench" / "gen_trace.py"

REOPEN = r"""
import json, os, sys, time
t0 = time.perf_counter()
from proftui.core.cache import file as cache_file
if sys.argv[2] == "off":
    real = cache_file.read
    cache_file.read = lambda path, expect=None, verify=True: real(path, expect, False)
if sys.argv[3] == "cold":
    for name in os.listdir(os.environ["PROFTUI_CACHE_DIR"]):
        fd = os.open(os.path.join(os.environ["PROFTUI_CACHE_DIR"], name), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
from proftui.core.load.loader import load_trace
from proftui.core.query.rows import rows_for
t1 = time.perf_counter()
index = load_trace(sys.argv[1])
rows_for(index)
t2 = time.perf_counter()
assert index.meta.get("from_cache"), "not reopened from the cache"
print(json.dumps({"seconds": t2 - t1, "slices": index.n_slices}))
"""

CHECKS = r"""
import hashlib, json, mmap, os, sys, time, zlib
from concurrent.futures import ThreadPoolExecutor
files = sys.argv[1:]
maps = []
for name in files:
    with open(name, "rb") as f:
        maps.append(memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)))
total = sum(len(m) for m in maps)
for m in maps:
    zlib.crc32(m)  # the pages in memory, as on a warm reopen
BLOCK = 16 << 20
blocks = [m[i:i + BLOCK] for m in maps for i in range(0, len(m), BLOCK)]
def best(fn, n=3):
    out = []
    for _ in range(n):
        t = time.perf_counter(); fn(); out.append(time.perf_counter() - t)
    return min(out)
def two_threads():
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(zlib.crc32, blocks))
def sampled():
    for m in maps:
        for i in range(0, len(m), 64 * 4096):
            zlib.crc32(m[i:i + 4096])
import numpy as np
from proftui.core.cache.file import checksum
pages = [np.frombuffer(m, np.uint8) for m in maps]
checks = {
    "page sums (proftui)": lambda: [checksum(p) for p in pages],
    "zlib.crc32": lambda: [zlib.crc32(b) for b in blocks],
    "zlib.crc32, 2 threads": two_threads,
    "zlib.adler32": lambda: [zlib.adler32(b) for b in blocks],
    "hashlib.sha1": lambda: [hashlib.sha1(b).digest() for b in blocks],
    "hashlib.blake2b": lambda: [hashlib.blake2b(b).digest() for b in blocks],
    "crc32 of 1 page in 64": sampled,
}
result = {name: best(fn) for name, fn in checks.items()}
t = time.perf_counter()
for _ in range(1000):
    os.utime(files[0])
utime = (time.perf_counter() - t) / 1000
t = time.perf_counter()
for _ in range(1000):
    os.stat(files[0])
stat = (time.perf_counter() - t) / 1000
print(json.dumps({"bytes": total, "checks": result, "utime_s": utime, "stat_s": stat}))
"""


def run(code: str, *args: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def can_drop_pages() -> bool:
    return hasattr(os, "posix_fadvise")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="a trace to index (default: generate one)")
    parser.add_argument("--mb", type=int, default=1024, help="size of the generated trace")
    parser.add_argument("--quick", action="store_true", help="a 100 MB trace")
    parser.add_argument("--dir", default="/tmp/proftui-bench")
    parser.add_argument("--cache", help="cache directory to use (default: a new one)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    mb = 100 if args.quick else args.mb
    trace = Path(args.trace) if args.trace else Path(args.dir) / f"k{mb}.json"
    if not trace.exists():
        trace.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {trace} ({mb} MB) ...", flush=True)
        subprocess.run([sys.executable, str(GEN), "--mb", str(mb), "-o", str(trace)],
                       check=True)
    cache = args.cache or tempfile.mkdtemp(prefix="proftui-bench-cache-")
    env = dict(os.environ, PROFTUI_CACHE_DIR=cache)
    print(f"indexing {trace} into {cache} (with its rows) ...", flush=True)
    first = run(REOPEN.replace('assert index.meta.get("from_cache"), "not reopened from '
                               'the cache"', ""), str(trace), "on", "warm", env=env)
    files = sorted(str(p) for p in Path(cache).iterdir() if not p.name.startswith("."))
    size = sum(os.path.getsize(f) for f in files)
    print(f"  {first['slices']:,} slices; cache {size / 1e6:,.0f} MB in {len(files)} files")

    rounds: dict[tuple[str, str], list[float]] = {}
    temps = ["warm"] + (["cold"] if can_drop_pages() else [])
    for _ in range(args.repeat):  # alternate, so drift hits both alike
        for temp in temps:
            for verify in ("off", "on"):
                got = run(REOPEN, str(trace), verify, temp, env=env)
                rounds.setdefault((verify, temp), []).append(got["seconds"])
    print(f"\nreopen = load_trace + rows_for in a fresh process (median of {args.repeat}); "
          "baseline = the same without the checksums")
    for temp in temps:
        off = statistics.median(rounds[("off", temp)])
        on = statistics.median(rounds[("on", temp)])
        print(f"  {temp:5s} page cache: verified {on * 1e3:8.1f} ms   unverified "
              f"{off * 1e3:8.1f} ms   +{(on - off) * 1e3:.1f} ms   ratio {on / off:.2f}x")

    checks = run(CHECKS, *files, env=env)
    print(f"\ncandidate checks over the cache's {checks['bytes'] / 1e6:,.0f} MB (warm, one "
          "process, best of 3):")
    for name, seconds in checks["checks"].items():
        print(f"  {name:24s} {seconds * 1e3:8.1f} ms  {checks['bytes'] / seconds / 1e9:6.2f} GB/s")
    print(f"\nmarking an entry used: utime {checks['utime_s'] * 1e6:.1f} us beside a stat "
          f"{checks['stat_s'] * 1e6:.1f} us")


if __name__ == "__main__":
    main()
