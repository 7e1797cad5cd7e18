"""Benchmark of opening a folder of ranks: cold index in one process and on all cores, cached
reopen to the first frame's data, reopen from the ranks' own cache entries (the folder's entry
gone; then one rank touched, so that it alone is indexed again), beside `orjson.loads` of the
same files, as ratios.

    python bench/bench_cluster.py               # 64 ranks of ~50 MB (3.2 GB in /tmp)
    python bench/bench_cluster.py --ranks 8 --mb 10     # a quick run

The ranks are Kineto traces from ../shared/bench/gen_trace.py (one generated file, copied
with each rank's number in its distributedInfo). Each measurement runs in a fresh process
(so that peak RSS is its own and no cache is warm in memory but the OS's page cache, which
every run shares alike: the files are read once before the first measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

GEN = Path(__file__).resolve().parents[2] / "shared" / "bench" / "gen_trace.py"

_RUN = """
import json, resource, sys, time
mode, root, cache, n_cached = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import os
os.environ["PROFTUI_CACHE_DIR"] = cache
t0 = time.perf_counter()
if mode == "orjson":
    import orjson
    from pathlib import Path
    events = 0
    for path in sorted(Path(root).glob("*.json")):
        events += len(orjson.loads(path.read_bytes())["traceEvents"])
    n = events
else:
    from proftui.core.load import indexing, split
    from proftui.core.load import loader as loading
    if mode == "serial":
        indexing.worker_count = split.worker_count = lambda n: 1
    index = loading.load_trace(root, use_cache=mode != "pool" and mode != "serial")
    if mode == "reopen":  # what the first frame needs besides the index
        from proftui.core.analysis.overview import read_overview
        from proftui.core.query.rows import rows_for
        rows_for(index)
        read_overview(index)
    n = index.n_slices
    if mode in ("ranks", "touched"):
        assert index.meta["ranks_cached"] == n_cached, index.meta.get("ranks_cached")
seconds = time.perf_counter() - t0
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
print(json.dumps({"seconds": seconds, "n": n, "peak": peak}))
"""


def make_ranks(root: Path, ranks: int, mb: float) -> int:
    """Write `ranks` Kineto rank files under `root`; returns their total size."""
    root.mkdir(parents=True, exist_ok=True)
    first = root / "rank-0.pt.trace.json"
    if not first.exists():
        subprocess.run([sys.executable, str(GEN), "--mb", str(mb), "-o", str(first)],
                       check=True)
    data = first.read_bytes()
    tail = data.rfind(b'"distributedInfo"')
    for rank in range(1, ranks):
        path = root / f"rank-{rank}.pt.trace.json"
        if not path.exists():
            fixed = re.sub(rb'"rank": 0,', f'"rank": {rank},'.encode(), data[tail:], count=1)
            path.write_bytes(data[:tail] + fixed)
    return sum(p.stat().st_size for p in root.glob("*.json"))


def run(mode: str, root: Path, cache: Path, n_cached: int = 0) -> dict:
    """One measurement in a fresh process; `n_cached`: the ranks it must find in the cache
    (modes "ranks" and "touched")."""
    out = subprocess.run([sys.executable, "-c", _RUN, mode, str(root), str(cache),
                          str(n_cached)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mb", type=float, default=50.0, help="size of a rank's trace")
    parser.add_argument("--dir", default="/tmp/proftui-bench-cluster")
    args = parser.parse_args()
    root = Path(args.dir) / f"{args.ranks}x{args.mb:g}MB"
    size = make_ranks(root, args.ranks, args.mb)
    cache = Path(args.dir) / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    for path in root.glob("*.json"):  # into the page cache, for every run alike
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{args.ranks} ranks, {size / 1e6:,.0f} MB in all, {cores} cores")
    base = run("orjson", root, cache)
    print(f"baseline orjson.loads of every rank, one process: {base['seconds']:7.2f} s "
          f"({size / 1e6 / base['seconds']:5.0f} MB/s), peak RSS {base['peak'] / 1e6:,.0f} MB")
    ranks = len(list(root.glob("*.json")))
    for mode, label in (("serial", "cold index, one process"),
                        ("pool", "cold index, all cores"),
                        ("store", "cold index, all cores, cache stored"),
                        ("reopen", "cached reopen to first-frame data"),
                        ("ranks", "folder's entry gone: ranks' entries"),
                        ("touched", "one rank touched: it alone indexed")):
        if mode == "ranks":  # the folder's index is gone; every rank's own entry is there
            for path in cache.glob("*.idx*"):
                path.unlink()
        elif mode == "touched":
            os.utime(root / "rank-1.pt.trace.json")
        got = run(mode, root, cache, ranks - (mode == "touched"))
        s = got["seconds"]
        print(f"{label:36s} {s:7.2f} s  {size / 1e6 / s:7.0f} MB/s  {s / base['seconds']:6.2f} x "
              f"orjson  peak RSS {got['peak'] / 1e6:7,.0f} MB ({got['peak'] / size:4.2f} x "
              f"the files)  {got['n']:,} slices")
        if mode == "serial":
            serial = s
        elif mode == "pool":
            print(f"{'':36s} {serial / s:7.2f} x faster than one process")


if __name__ == "__main__":
    main()
