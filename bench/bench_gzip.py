#!/usr/bin/env python3
"""gzip benchmark: indexing a `.json.gz` beside merely inflating it, and `args` on click.

Generates a Kineto-like trace of --mb MB (uncompressed) compressed with gzip -6
(../shared/bench/gen_trace.py, kept in --dir and reused while its stamp matches), or takes
--trace, then prints, every figure the best of --repeat fresh processes run in alternation:

(a) the time to just inflate the file: Python's zlib, the system zlib through ctypes keeping
    seek points (what proftui indexes with), and each optional inflater installed in this
    interpreter (isal, zlib-ng, rapidgzip with one thread per core, indexed_gzip building its
    own seek points every 4 MiB); the fastest of them;
(b) proftui's index time, `load_trace(use_cache=True)` into an empty cache (what `proftui
    index` does: seek points stored too), with seek points and without (Python's zlib or isal,
    as before), each as a ratio of the zlib and of the fastest inflate; with --plain, also
    `index_file(workers=1)` of the same JSON uncompressed (the parse alone);
(c) `args` of one event on click (`TraceIndex.event_args`) at the start, middle and end of the
    file, in a process that opened the index from the cache, from the nearest seek point
    and without the seek points (inflated from the file's start, as before).

    python bench/bench_gzip.py                       # 1000 MB (generating takes minutes)
    python bench/bench_gzip.py --mb 100 --repeat 1   # a smoke run
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import DEFAULT_GENERATOR, decompressed_size, generate, log  # noqa: E402

MB = 10**6
INFLATERS = ("zlib", "system zlib + seek points", "isal", "zlib-ng", "rapidgzip",
             "indexed_gzip + seek points")

INFLATE_CHILD = """
import json, sys, time
path, which = sys.argv[1], sys.argv[2]
CHUNK = 1 << 20
n = 0
try:
    if which == "zlib":
        import zlib as mod
    elif which == "isal":
        from isal import isal_zlib as mod
    elif which == "zlib-ng":
        from zlib_ng import zlib_ng as mod
    elif which == "rapidgzip":
        import rapidgzip
    elif which.startswith("indexed_gzip"):
        import indexed_gzip
    else:
        from proftui.core.source import gzip_seek
        if not gzip_seek.available():
            raise ImportError("no system zlib")
except ImportError:
    print(json.dumps(None))
    sys.exit()
t0 = time.perf_counter()
if which == "rapidgzip":
    import os
    with rapidgzip.open(path, parallelization=len(os.sched_getaffinity(0))) as f:
        while data := f.read(4 * CHUNK):
            n += len(data)
elif which.startswith("indexed_gzip"):
    with indexed_gzip.IndexedGzipFile(path, spacing=4 << 20) as f:
        while data := f.read(4 * CHUNK):
            n += len(data)
elif which.startswith("system"):
    with open(path, "rb") as f:
        for data in gzip_seek.inflate(f, CHUNK, lambda k: None, []):
            n += len(data)
else:
    d = mod.decompressobj(31)
    with open(path, "rb") as f:
        while data := f.read(1 << 18):
            while data:
                n += len(d.decompress(data, 4 * CHUNK))
                data = d.unconsumed_tail
print(json.dumps({"seconds": time.perf_counter() - t0, "bytes": n}))
"""

INDEX_CHILD = """
import json, sys, time
path, seek = sys.argv[1], sys.argv[2] == "1"
from proftui.core.source import gzip_seek
from proftui.core.source import streams as sources
from proftui.core.load.loader import load_trace
if not seek:
    gzip_seek._library = lambda: None  # as before seek points: Python zlib (or isal) from the start
t0 = time.perf_counter()
ix = load_trace(path, use_cache=True)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "slices": ix.n_slices, "inflater": sources._zlib.__name__,
                  "cache_error": ix.meta.get("cache_error")}))
"""

PLAIN_CHILD = """
import json, sys, time
from proftui.core.load.indexing import index_file
from proftui.core.source.streams import ByteSource
t0 = time.perf_counter()
ix = index_file(ByteSource(sys.argv[1]), workers=1)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""

ARGS_CHILD = """
import glob, json, os, sys, time
path, repeat = sys.argv[1], int(sys.argv[2])
from proftui.core.cache import indexes as cache
from proftui.core.load.loader import load_trace
from proftui.core.query.args import args_of
ix = load_trace(path, use_cache=True)
assert ix.meta.get("from_cache"), "not from the cache"
seek_file = ix.meta["cache_path"] + ".seek"
refs = ix.col("slices.ref")
order = refs.argsort()
where = {"start": int(refs[order[0]]), "middle": int(refs[order[len(order) // 2]]),
         "end": int(refs[order[-1]])}
out = {"points": len(cache.load_derived(ix, "seek")["0.out"])}
args_of(ix, where["start"])  # the first call imports the decoder
for mode in ("seek", "start"):
    if mode == "start":
        os.rename(seek_file, seek_file + ".off")  # gone: inflated from the file's start
    got = {}
    for label, ref in where.items():
        best = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            args = args_of(ix, ref)
            ms = (time.perf_counter() - t0) * 1000
            best = ms if best is None else min(best, ms)
        got[label] = {"ms": best, "args": args}
    out[mode] = got
os.rename(seek_file + ".off", seek_file)
out["same"] = all(out["seek"][k]["args"] == out["start"][k]["args"] for k in where)
print(json.dumps({k: v if k != "seek" and k != "start" else
                  {label: d["ms"] for label, d in v.items()} for k, v in out.items()}))
"""


def run_child(code: str, *args: str, env: dict[str, str] | None = None) -> Any:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def best(runs: list[dict]) -> float:
    return min(r["seconds"] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=1000, help="uncompressed size (default 1000)")
    ap.add_argument("--trace", type=Path, help="a .json.gz to use instead of generating one")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gz-bench"),
                    help="where the generated trace is kept (default /tmp/gz-bench)")
    ap.add_argument("--gen", type=Path, default=DEFAULT_GENERATOR)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each figure, best kept")
    ap.add_argument("--plain", action="store_true",
                    help="also index the same JSON uncompressed (written beside the trace)")
    args = ap.parse_args()
    if args.trace is None:
        args.dir.mkdir(parents=True, exist_ok=True)
        args.trace = generate(args.gen, args.dir, "kineto", args.mb, gz=True)
    path = str(args.trace)
    data_bytes = decompressed_size(args.trace)
    inflate: dict[str, list[dict]] = {name: [] for name in INFLATERS}
    index: dict[str, list[dict]] = {"seek": [], "zlib": []}
    plain: list[dict] = []
    plain_path = args.trace.with_name(args.trace.name.removesuffix(".gz") + ".plain")
    if args.plain:
        with gzip.open(args.trace) as src, open(plain_path, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    caches = tempfile.mkdtemp(prefix="gz-cache-")
    try:
        for round_ in range(1, args.repeat + 1):
            log(f"round {round_}/{args.repeat}: inflate, index with and without seek points")
            for name in list(inflate):
                got = run_child(INFLATE_CHILD, path, name)
                if got is None:
                    del inflate[name]  # not installed here
                else:
                    assert got["bytes"] == data_bytes, (name, got["bytes"], data_bytes)
                    inflate[name].append(got)
            for mode in index:
                cache_dir = os.path.join(caches, f"{mode}-{round_}")
                env = {**os.environ, "PROFTUI_CACHE_DIR": cache_dir}
                index[mode].append(run_child(INDEX_CHILD, path, "1" if mode == "seek" else "0",
                                             env=env))
                if mode == "zlib" or round_ < args.repeat:
                    shutil.rmtree(cache_dir)
            if args.plain:
                plain.append(run_child(PLAIN_CHILD, str(plain_path)))
        log("args on click")
        env = {**os.environ, "PROFTUI_CACHE_DIR": os.path.join(caches, f"seek-{args.repeat}")}
        clicks = run_child(ARGS_CHILD, path, str(args.repeat), env=env)
    finally:
        shutil.rmtree(caches, ignore_errors=True)
        if args.plain:
            plain_path.unlink(missing_ok=True)

    zlib_s = best(inflate["zlib"])
    fastest = min(inflate, key=lambda name: best(inflate[name]))
    fastest_s = best(inflate[fastest])
    print(f"{args.trace.name}: {os.path.getsize(path) / MB:.1f} MB gzip, "
          f"{data_bytes / MB:.1f} MB of JSON; best of {args.repeat}, fresh processes")
    print("\nJust inflating:")
    for name, runs in inflate.items():
        s = best(runs)
        print(f"  {name:28} {s:7.2f} s  {data_bytes / s / MB:6.0f} MB/s  x{s / zlib_s:.2f} zlib")
    print(f"  fastest: {fastest}")
    print("\nIndex (load_trace into an empty cache):")
    before = f"before: {index['zlib'][0]['inflater']}"
    for mode, label in (("zlib", before), ("seek", "after: keeping seek points")):
        s = best(index[mode])
        print(f"  {label:28} {s:7.2f} s  {data_bytes / s / MB:6.0f} MB/s  "
              f"x{s / zlib_s:.2f} zlib inflate, x{s / fastest_s:.2f} fastest inflate"
              + (f", x{s / best(plain):.2f} the plain file's" if plain else ""))
    if plain:
        s = best(plain)
        print(f"  {'the JSON uncompressed, 1p':28} {s:7.2f} s  {data_bytes / s / MB:6.0f} MB/s  "
              f"(index_file, no cache: parsing alone)")
    print(f"\nargs on click (best of {args.repeat}), {clicks['points']} seek points:")
    print(f"  {'':8} {'from a seek point':>18} {'from the start (before)':>24}")
    for label in ("start", "middle", "end"):
        print(f"  {label:8} {clicks['seek'][label]:15.1f} ms {clicks['start'][label]:21.1f} ms")
    print(f"  same args both ways: {clicks['same']}")


if __name__ == "__main__":
    main()
