#!/usr/bin/env python3
"""Indexing benchmark: proftui's streaming index against `orjson.loads`, side by side.

Generates Kineto-like and msprof-like traces with ../shared/bench/gen_trace.py (kept between
runs), then measures each in fresh processes: index throughput on one core and on two, peak
memory, the cache's size per slice and the time to reopen it, and the same file through
`orjson.loads` as the baseline. Figures are printed as ratios against that baseline, measured in
the same run, because absolute times drift on shared machines. A benchmark, not a test.

    python bench/bench_index.py                 # 100 MB and 1 GB (generating takes minutes)
    python bench/bench_index.py --quick         # 20 MB, a smoke run
    python bench/bench_index.py --sizes 100 --json figures.json
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

REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO.parent / "shared" / "bench" / "gen_trace.py"

# PERF.md targets, for the table.
TARGETS = {"kineto": "≥200 (1 core) / ≥280 (2) MB/s", "msprof": "≥140 / ≥200 MB/s",
           "gzip": "≥150 MB/s decompressed"}

# Child programs; each prints one JSON object. Peak RSS is the whole process (ru_maxrss).
_RSS = ("import resource; "
        "peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024; "
        "kids = lambda: resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024; ")
ORJSON = _RSS + """
import gzip, json, sys, time, orjson
path = sys.argv[1]
base = peak()
t = time.perf_counter()
with open(path, "rb") as f:
    data = f.read()
if data[:2] == b"\\x1f\\x8b":
    data = gzip.decompress(data)
doc = orjson.loads(data)
elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed, "peak": peak(), "base": base, "bytes": len(data)}))
"""
INDEX = _RSS + """
import json, sys, time
from proftui.core.load import index_file
from proftui.core.sources import ByteSource
path, workers = sys.argv[1], int(sys.argv[2])
base = peak()
t = time.perf_counter()
index = index_file(ByteSource(path), workers=workers)
elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed, "peak": peak(), "children": kids(), "base": base,
                  "slices": index.n_slices}))
"""
BUILD_CACHE = """
import json, os, sys
from proftui.core import load_trace
index = load_trace(sys.argv[1])
print(json.dumps({"path": index.meta["cache_path"], "slices": index.n_slices,
                  "intervals": index.n_slices + len(index.col("instants.ts"))
                  + len(index.col("flows.src_slice")),
                  "size": os.path.getsize(index.meta["cache_path"])}))
"""
REOPEN = """
import json, sys, time
from proftui.core import load_trace
t = time.perf_counter()
index = load_trace(sys.argv[1])
elapsed = time.perf_counter() - t
assert index.meta.get("from_cache")
print(json.dumps({"seconds": elapsed}))
"""


def run_child(code: str, *args: str, env: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def generate(generator: Path, workdir: Path, kind: str, mb: int, gz: bool = False) -> Path:
    name = f"{kind}_{mb}mb.json" + (".gz" if gz else "")
    path = workdir / name
    if not path.exists():
        cmd = [sys.executable, str(generator), "--mb", str(mb), "-o", str(path)]
        if kind == "msprof":
            cmd.append("--msprof")
        if gz:
            cmd.append("--gzip")
        print(f"generating {name} ...", file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return path


def median_run(code: str, *args: str, repeat: int) -> dict:
    """The run with the median time of `repeat` runs (shared machines are noisy)."""
    runs = sorted((run_child(code, *args) for _ in range(repeat)), key=lambda r: r["seconds"])
    return runs[len(runs) // 2]


def measure(path: Path, label: str, baseline: bool, repeat: int) -> dict:
    size = path.stat().st_size
    fig: dict = {"file": path.name, "kind": label, "size": size}
    one = median_run(INDEX, str(path), "1", repeat=repeat)
    two = median_run(INDEX, str(path), "2", repeat=repeat)
    ref = run_child(ORJSON, str(path)) if baseline else None
    data_bytes = ref["bytes"] if ref else _decompressed_size(path)
    fig.update({
        "bytes": data_bytes,
        "slices": one["slices"],
        "mb_s_1": data_bytes / one["seconds"] / 1e6,
        "mb_s_2": data_bytes / two["seconds"] / 1e6,
        "peak_1": one["peak"],
        "peak_2": two["peak"],
        "peak_2_worker": two["children"],
        "base_rss": one["base"],
    })
    if ref:
        fig.update({
            "orjson_mb_s": data_bytes / ref["seconds"] / 1e6,
            "orjson_peak": ref["peak"],
            "speed_vs_orjson_1": ref["seconds"] / one["seconds"],
            "speed_vs_orjson_2": ref["seconds"] / two["seconds"],
            "memory_vs_orjson": one["peak"] / ref["peak"],
        })
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PROFTUI_CACHE_DIR": cache}
        built = run_child(BUILD_CACHE, str(path), env=env)
        reopen = [run_child(REOPEN, str(path), env=env)["seconds"] for _ in range(5)]
    fig.update({
        "cache_bytes_per_slice": built["size"] / max(built["slices"], 1),
        "cache_bytes_per_interval": built["size"] / max(built["intervals"], 1),
        "reopen_ms": statistics.median(reopen) * 1e3,
    })
    return fig


def _decompressed_size(path: Path) -> int:
    if path.read_bytes()[:2] != b"\x1f\x8b":
        return path.stat().st_size
    import gzip
    with gzip.open(path, "rb") as f:
        return sum(len(chunk) for chunk in iter(lambda: f.read(1 << 24), b""))


def print_table(figures: list[dict]) -> None:
    head = (f"{'file':<22}{'MB':>6}{'slices':>10}{'MB/s 1c':>9}{'MB/s 2c':>9}{'orjson':>8}"
            f"{'x orjson':>10}{'peak/size':>10}{'mem/orjson':>11}{'B/slice':>9}"
            f"{'B/item':>8}{'reopen':>9}")
    print(head)
    print("-" * len(head))
    for f in figures:
        ref = "orjson_mb_s" in f
        print(f"{f['file']:<22}{f['bytes'] / 1e6:>6.0f}{f['slices']:>10,}{f['mb_s_1']:>9.0f}"
              f"{f['mb_s_2']:>9.0f}"
              f"{(format(f['orjson_mb_s'], '.0f') if ref else '-'):>8}"
              f"{(format(f['speed_vs_orjson_1'], '.1f') + 'x' if ref else '-'):>10}"
              f"{f['peak_1'] / f['bytes']:>9.2f}x"
              f"{(format(f['memory_vs_orjson'], '.2f') + 'x' if ref else '-'):>11}"
              f"{f['cache_bytes_per_slice']:>9.1f}{f['cache_bytes_per_interval']:>8.1f}"
              f"{f['reopen_ms']:>7.1f}ms")
    print()
    print("MB/s: decompressed JSON bytes per second of index_file, median of --repeat runs (1c:")
    print("one process; 2c: the file's halves in two processes). x orjson: orjson.loads time /")
    print("our 1-core time.")
    print("peak/size: whole-process peak RSS of the 1-core run / file bytes (2-core runs: see")
    print("--json, parent and worker separately). mem/orjson: our peak / orjson.loads' peak.")
    print("B/slice: cache file bytes per slice; B/item: per slice, instant and flow edge.")
    print("reopen: median of 5 load_trace calls from the cache, after imports (the arrays are")
    print("memory-mapped, so this does not grow with the number of slices).")
    print("Targets (../shared/PERF.md): " + "; ".join(f"{k} {v}" for k, v in TARGETS.items())
          + "; peak <= 0.6x at >= 1 GB; >= 4x orjson at <= 1/10 its memory; reopen <= 20 ms"
          " per 10 M; cache <= 40 B per interval.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000", help="sizes in MB (default 100,1000)")
    parser.add_argument("--dir", default="/tmp/proftui-bench", help="where traces are kept")
    parser.add_argument("--gen", default=str(GENERATOR), help="path of gen_trace.py")
    parser.add_argument("--quick", action="store_true", help="20 MB only")
    parser.add_argument("--no-baseline", action="store_true", help="skip orjson.loads")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each index measurement; the median is kept (default 3)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    generator = Path(args.gen)
    if not generator.exists():
        parser.error(f"{generator} not found (pass --gen)")
    workdir = Path(args.dir)
    workdir.mkdir(parents=True, exist_ok=True)
    sizes = [20] if args.quick else [int(s) for s in args.sizes.split(",")]
    figures = []
    for mb in sizes:
        for kind in ("kineto", "msprof"):
            path = generate(generator, workdir, kind, mb)
            baseline = not args.no_baseline and path.stat().st_size <= 1.5e9
            figures.append(measure(path, kind, baseline, args.repeat))
            print(f"measured {path.name}", file=sys.stderr, flush=True)
    gz = generate(generator, workdir, "kineto", min(sizes), gz=True)
    figures.append(measure(gz, "gzip", not args.no_baseline, args.repeat))
    print_table(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
