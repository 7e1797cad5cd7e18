#!/usr/bin/env python3
"""Indexing benchmark: proftui's index against `orjson.loads` of the same file, side by side.

Generates Kineto-like and msprof-like Chrome traces with ../shared/bench/gen_trace.py (kept in
the work directory and reused while the generator and its arguments are unchanged), plus a
gzip variant of the 100 MB Kineto-like trace (of the smallest size when 100 is not among
--sizes), then measures every file in fresh processes:

(a) `index_file(ByteSource(path))` cold (no cache), in one process and with the default
    workers (one process per core, up to 8, for large plain files: two on two cores): wall time,
    MB/s of decompressed JSON, whole-process peak RSS (`ru_maxrss`) and the RSS right after
    imports;
(b) the baseline `orjson.loads(open(path, "rb").read())` (gzip: decompressed first): time and
    peak RSS, and our speed and memory as ratios against it (skipped above 1.5 GB);
(c) the cache: built by `load_trace(use_cache=True)` into a temporary PROFTUI_CACHE_DIR, its
    size per slice, and the `load_trace` call that reopens it in a fresh process (median of 5).

With --readers native,python every index run of (a) is made once per event reader,
PROFTUI_NATIVE=1 and =0 side by side, and a last table gives the ratios issue 32 asks for:
native against orjson.loads and against the Python reader (1p and default), default against
1p, peak RSS against the file, and (.json.gz) against inflating the file alone.

Absolute times drift on shared machines, so the table gives ratios against the baseline
measured in the same run, next to the targets of ../shared/PERF.md. A benchmark, not a test.

    python bench/bench_index.py                  # 100 MB and 1000 MB (generating takes minutes)
    python bench/bench_index.py --quick          # 20 MB only, a smoke run
    python bench/bench_index.py --sizes 100 --no-baseline --json figures.json
    python bench/bench_index.py --sizes 100,1000 --readers native,python
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
DEFAULT_GENERATOR = REPO.parent / "shared" / "bench" / "gen_trace.py"
DEFAULT_DIR = "/tmp/proftui-bench"
MB = 10**6
MiB = 1 << 20
BASELINE_LIMIT = 1.5e9  # decompressed bytes; orjson.loads needs ~7.5x the file in memory
REOPEN_RUNS = 5
PER_INTERVALS = 10_000_000

# --------------------------------------------------------------------------------------------
# Child programs. Each runs in a fresh interpreter and prints one JSON object on its last line.
# Peak RSS is the whole process: ru_maxrss (KiB on Linux), nothing subtracted.
# --------------------------------------------------------------------------------------------
_PRELUDE = """
import json, resource, sys, time
def rss(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss * 1024
"""

INDEX_CHILD = _PRELUDE + """
from proftui.core.importers.chrome import native
from proftui.core.load.indexing import index_file
from proftui.core.source.streams import ByteSource
path, workers = sys.argv[1], sys.argv[2]
after_imports = rss()
t0 = time.perf_counter()
ix = index_file(ByteSource(path), workers=None if workers == "default" else int(workers))
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak": rss(), "after_imports": after_imports,
                  "worker_peak": rss(resource.RUSAGE_CHILDREN), "slices": ix.n_slices,
                  "reader": native.reader_name(), "batches": ix.meta.get("reader")}))
"""

# The floor of proftui's way of reading: every batch cut and decoded by the typed decoder
# (args skipped), the events then dropped; no index is built.
DECODE_CHILD = _PRELUDE + """
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.importers.chrome.read import ChromeJsonReader
from proftui.core.source.streams import ByteSource
t0 = time.perf_counter()
ChromeJsonReader(ByteSource(sys.argv[1]), Diagnostics()).read(lambda events, first, at: None)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""

ORJSON_CHILD = _PRELUDE + """
import gzip, orjson
path = sys.argv[1]
after_imports = rss()
t0 = time.perf_counter()
with open(path, "rb") as f:
    data = f.read()
if data[:2] == b"\\x1f\\x8b":
    data = gzip.decompress(data)
doc = orjson.loads(data)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak": rss(), "after_imports": after_imports}))
"""

# Inflating a .json.gz alone, in bounded memory (stdlib zlib): what reading it cannot beat.
INFLATE_CHILD = _PRELUDE + """
import zlib
t0 = time.perf_counter()
inflater = zlib.decompressobj(31)
with open(sys.argv[1], "rb") as f:
    while piece := f.read(1 << 20):
        inflater.decompress(piece)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""

BUILD_CACHE_CHILD = _PRELUDE + """
import os
from proftui.core.load.loader import load_trace
ix = load_trace(sys.argv[1], use_cache=True)
path = ix.meta.get("cache_path")
if path is None:
    raise SystemExit("no cache written: " + str(ix.meta.get("cache_error")))
slice_bytes = sum(a.nbytes for k, a in ix.arrays.items() if k.startswith("slices."))
print(json.dumps({"path": path, "size": os.path.getsize(path), "slices": ix.n_slices,
                  "slice_column_bytes": slice_bytes}))
"""

REOPEN_CHILD = _PRELUDE + """
from proftui.core.load.loader import load_trace
t0 = time.perf_counter()
ix = load_trace(sys.argv[1], use_cache=True)
seconds = time.perf_counter() - t0
if not ix.meta.get("from_cache"):
    raise SystemExit("the index was not reopened from the cache")
print(json.dumps({"seconds": seconds}))
"""


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------
@dataclass
class IndexRun:
    seconds: float
    peak: int  # bytes, whole process
    after_imports: int  # bytes, ru_maxrss right after imports
    worker_peak: int  # bytes, the second process (0 when none ran)
    slices: int
    together: int = 0  # bytes, the process and its workers at one moment (sampled; 0: not)
    reader: str = ""  # the event reader the child had: "native" or "python"
    batches: dict[str, int] | None = None  # the index's meta["reader"]: batches per reader

    @property
    def two(self) -> bool:
        """Whether it ran in two processes (a worker's peak was recorded)."""
        return self.worker_peak > 0

    @property
    def peak_all(self) -> int:
        """The peak of the process and its workers together: as sampled when it was, else
        the sum of their peaks (an upper bound: the worker is gone when the parent builds)."""
        if self.together:  # (never below the parent's own peak, which no sampling misses)
            return max(self.together, self.peak)
        return self.peak + self.worker_peak


@dataclass
class Baseline:
    seconds: float
    peak: int
    after_imports: int


@dataclass
class CacheFigures:
    path: str
    size: int
    slices: int
    slice_column_bytes: int
    reopen_seconds: list[float] = field(default_factory=list)

    @property
    def bytes_per_slice(self) -> float:
        return self.size / max(self.slices, 1)

    @property
    def reopen_ms(self) -> float:
        return statistics.median(self.reopen_seconds) * 1e3

    @property
    def reopen_ms_per_10m(self) -> float:
        """Linear extrapolation to 10 M intervals (pessimistic: the arrays are mmapped)."""
        return self.reopen_ms * PER_INTERVALS / max(self.slices, 1)


@dataclass
class FileFigures:
    name: str
    kind: str  # "kineto", "msprof" or "gzip"
    disk_bytes: int
    data_bytes: int  # decompressed
    one: IndexRun  # workers=1
    default: IndexRun  # workers=None (what the app uses)
    baseline: Baseline | None
    cache: CacheFigures
    run_seconds: dict[str, list[float]] = field(default_factory=dict)  # every run, for spread
    decode_seconds: float = 0.0  # DECODE_CHILD, median
    # --readers: the median runs of each reader ("native", "python"): {"one": ..., "default": ...}
    readers: dict[str, dict[str, IndexRun]] = field(default_factory=dict)
    inflate_seconds: float | None = None  # INFLATE_CHILD, median (--readers, .json.gz only)

    def mb_s(self, run: IndexRun) -> float:
        return self.data_bytes / run.seconds / MB

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["mb_s_one"] = self.mb_s(self.one)
        out["mb_s_default"] = self.mb_s(self.default)
        out["one_over_decode_only"] = self.one.seconds / self.decode_seconds
        out["peak_over_size_one"] = self.one.peak / self.data_bytes
        out["peak_over_size_default"] = self.default.peak_all / self.data_bytes
        if self.baseline:
            out["orjson_mb_s"] = self.data_bytes / self.baseline.seconds / MB
            out["x_faster_than_orjson_one"] = self.baseline.seconds / self.one.seconds
            out["x_faster_than_orjson_default"] = self.baseline.seconds / self.default.seconds
            out["peak_over_orjson_peak"] = self.one.peak / self.baseline.peak
        out["cache"]["bytes_per_slice"] = self.cache.bytes_per_slice
        out["cache"]["reopen_ms"] = self.cache.reopen_ms
        out["cache"]["reopen_ms_per_10m"] = self.cache.reopen_ms_per_10m
        out["reader_ratios"] = reader_ratios(self)
        return out


# --------------------------------------------------------------------------------------------
# Running things
# --------------------------------------------------------------------------------------------
def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_child(code: str, *args: str, env: dict[str, str] | None = None,
              sample: bool = False) -> dict[str, Any]:
    """What the child program printed last; with `sample`, also "together": the peak of its
    resident memory and its children's at one moment (see TreeSampler)."""
    # numpy's BLAS in one thread, as the command line has it: then the index's workers are
    # forks of the process, as they are for `proftui index` (see core/runtime/workers.py)
    env = {**(os.environ if env is None else env), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    sampler = TreeSampler(proc.pid) if sample else None
    out, err = proc.communicate()
    together = sampler.stop() if sampler is not None else None
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {err.strip()[-2000:]}")
    got = json.loads(out.strip().splitlines()[-1])
    return got if together is None else {**got, "together": together}


class TreeSampler:
    """The largest sum of VmRSS over a process and its descendants, read from /proc every
    SAMPLE_SECONDS in a thread of this process until stopped (0 where /proc has no such
    files). Each process's own peak (ru_maxrss) comes at its own moment: a forked worker's
    while it reads, the parent's as it builds, after the worker is gone; their sum is an
    upper bound, this is what the machine held at once (within the sampling)."""

    SAMPLE_SECONDS = 0.005

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak

    def _run(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, sum(map(_rss_now, _tree(self.pid))))
            time.sleep(self.SAMPLE_SECONDS)


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, as /proc lists them now."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += map(int, f.read().split())
        except OSError:
            pass
    return out


def _rss_now(pid: int) -> int:
    """The resident bytes of process `pid` now (0 if gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


R = TypeVar("R", IndexRun, Baseline)


def median(runs: list[R]) -> R:
    """The run with the median time (shared machines are noisy)."""
    return sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]


def measure_cache(path: Path) -> CacheFigures:
    with tempfile.TemporaryDirectory(prefix="proftui-bench-cache-") as cache_dir:
        env = {**os.environ, "PROFTUI_CACHE_DIR": cache_dir}
        figures = CacheFigures(**run_child(BUILD_CACHE_CHILD, str(path), env=env))
        figures.reopen_seconds = [run_child(REOPEN_CHILD, str(path), env=env)["seconds"]
                                  for _ in range(REOPEN_RUNS)]
    return figures


def decompressed_size(path: Path) -> int:
    """Bytes of JSON in the file, inflated in bounded pieces (keeps this process small)."""
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return path.stat().st_size
    total = 0
    with gzip.open(path, "rb") as f:
        while piece := f.read(MiB):
            total += len(piece)
    return total


def reader_env(reader: str) -> dict[str, str]:
    return {**os.environ, "PROFTUI_NATIVE": "1" if reader == "native" else "0"}


def measure(path: Path, kind: str, repeat: int, baseline: bool,
            readers: list[str] | None = None) -> FileFigures:
    """All figures of one file. Index and baseline runs alternate, so drift hits both; with
    `readers`, each index run is made once per reader (PROFTUI_NATIVE=1 / 0), side by side,
    their order swapped every round."""
    data_bytes = decompressed_size(path)
    baseline = baseline and data_bytes <= BASELINE_LIMIT
    envs: dict[str, dict[str, str] | None] = \
        {r: reader_env(r) for r in readers} if readers else {"": None}
    runs: dict[str, dict[str, list[IndexRun]]] = {r: {"one": [], "default": []} for r in envs}
    refs: list[Baseline] = []
    decode: list[float] = []
    inflate: list[float] = []
    for round_ in range(1, repeat + 1):
        log(f"{path.name}: round {round_}/{repeat}: index_file 1p, default"
            + (f" ({' and '.join(envs)} readers)" if readers else "") + ", decode only"
            + (", orjson.loads" if baseline else ""))
        order = list(envs) if round_ % 2 else list(reversed(envs))
        for workers, key in (("1", "one"), ("default", "default")):
            for reader in order:
                runs[reader][key].append(
                    IndexRun(**run_child(INDEX_CHILD, str(path), workers, env=envs[reader],
                                         sample=True)))
        decode.append(run_child(DECODE_CHILD, str(path))["seconds"])
        if baseline:
            refs.append(Baseline(**run_child(ORJSON_CHILD, str(path))))
        if readers and kind == "gzip":
            inflate.append(run_child(INFLATE_CHILD, str(path))["seconds"])
    log(f"{path.name}: cache build and reopen")
    cache = measure_cache(path)
    first = runs[next(iter(envs))]
    seconds = {"one": [r.seconds for r in first["one"]],
               "default": [r.seconds for r in first["default"]],
               "orjson": [r.seconds for r in refs], "decode": decode}
    for reader in readers or []:
        for key in ("one", "default"):
            seconds[f"{reader}_{key}"] = [r.seconds for r in runs[reader][key]]
    figures = FileFigures(path.name, kind, path.stat().st_size, data_bytes,
                          median(first["one"]), median(first["default"]),
                          median(refs) if refs else None, cache, seconds,
                          statistics.median(decode))
    figures.readers = {r: {k: median(v) for k, v in runs[r].items()} for r in readers or []}
    figures.inflate_seconds = statistics.median(inflate) if inflate else None
    return figures


# --------------------------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------------------------
def generator_args(kind: str, mb: int, gz: bool) -> list[str]:
    return ["--mb", str(mb)] + (["--msprof"] if kind == "msprof" else []) \
        + (["--gzip"] if gz else [])


def generate(generator: Path, workdir: Path, kind: str, mb: int, gz: bool = False) -> Path:
    """The trace file, generated once; reused while the generator and arguments match."""
    path = workdir / (f"{kind}_{mb}mb.json" + (".gz" if gz else ""))
    stamp_path = path.with_name(path.name + ".gen")
    stamp = json.dumps({"generator_sha256": hashlib.sha256(generator.read_bytes()).hexdigest(),
                        "args": generator_args(kind, mb, gz)})
    if path.exists() and stamp_path.exists() and stamp_path.read_text() == stamp:
        return path
    log(f"generating {path.name} ...")
    partial = path.with_name(path.name + ".partial")
    subprocess.run([sys.executable, str(generator), *generator_args(kind, mb, gz),
                    "-o", str(partial)], check=True, stdout=subprocess.DEVNULL)
    os.replace(partial, path)  # replaces a stale file (or symlink) only once complete
    stamp_path.write_text(stamp)
    return path


def workloads(generator: Path, workdir: Path, sizes: list[int]) -> list[tuple[Path, str]]:
    files = [(generate(generator, workdir, kind, mb), kind)
             for mb in sizes for kind in ("kineto", "msprof")]
    gz_mb = 100 if 100 in sizes else min(sizes)
    files.append((generate(generator, workdir, "kineto", gz_mb, gz=True), "gzip"))
    return files


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------
SPEED_TARGET = {"kineto": ">=200 / >=280", "msprof": ">=200 / -", "gzip": ">=150"}


def peak_target(data_bytes: int) -> str:
    if data_bytes >= 1e9:
        return "<=0.50x"
    if data_bytes <= 1.2e8:
        return f"<=120 MB ({120e6 / data_bytes:.2f}x)" if data_bytes >= 9e7 else "-"
    return "-"


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def mib(n: float) -> str:
    return f"{n / MiB:.0f}"


def indexing_table(figs: list[FileFigures]) -> str:
    rows = []
    for f in figs:
        two = f.default.worker_peak > 0
        rows.append([
            f.name, f"{f.data_bytes / MB:.0f}", f"{f.one.slices:,}",
            f"{f.one.seconds:.2f}", f"{f.mb_s(f.one):.0f}",
            f"{f.default.seconds:.2f}", f"{f.mb_s(f.default):.0f}" + ("" if two else "*"),
            SPEED_TARGET[f.kind],
            mib(f.one.after_imports), mib(f.one.peak), f"{f.one.peak / f.data_bytes:.2f}x",
            (f"{mib(f.default.peak)}+{mib(f.default.worker_peak)}" if two else "-"),
            mib(f.default.peak_all),
            peak_target(f.data_bytes),
        ])
    return table(["file", "MB", "slices", "1p s", "1p MB/s", "dflt s", "dflt MB/s",
                  "target MB/s 1p/2p", "imports MiB", "1p peak MiB", "1p peak/size",
                  "2p peak MiB", "dflt together MiB", "target peak"], rows)


def baseline_table(figs: list[FileFigures]) -> str:
    rows = []
    for f in figs:
        b = f.baseline
        floor = [f"{f.data_bytes / f.decode_seconds / MB:.0f}",
                 f"{f.one.seconds / f.decode_seconds:.2f}x"]
        if b is None:
            rows.append([f.name] + ["skipped"] + ["-"] * 7 + floor)
            continue
        rows.append([
            f.name, f"{b.seconds:.2f}", f"{f.data_bytes / b.seconds / MB:.0f}",
            mib(b.after_imports), mib(b.peak), f"{b.peak / f.data_bytes:.2f}x",
            f"{b.seconds / f.one.seconds:.1f}x", f"{b.seconds / f.default.seconds:.1f}x",
            f"{f.one.peak / b.peak:.3f}", *floor,
        ])
    return table(["file", "orjson s", "orjson MB/s", "imports MiB", "peak MiB", "peak/size",
                  "x faster 1p", "x faster dflt", "our/orjson peak", "decode-only MB/s",
                  "1p / decode-only"], rows) \
        + "\n  target: >= 6x faster with <= 0.100 of its peak memory" \
        + "\n  decode-only: the batches cut and decoded (args skipped), no index built: the " \
        "floor of this way of reading"


def cache_table(figs: list[FileFigures]) -> str:
    rows = []
    for f in figs:
        c = f.cache
        rows.append([
            f.name, f"{c.slices:,}", f"{c.size / MB:.1f}", f"{c.bytes_per_slice:.1f}",
            f"{c.slice_column_bytes / max(c.slices, 1):.1f}", f"{c.reopen_ms:.2f}",
            f"{c.reopen_ms_per_10m:.1f}",
        ])
    return table(["file", "slices", "cache MB", "B/slice", "slice cols B/slice",
                  "reopen ms", "reopen ms/10M"], rows) \
        + "\n  target: <= 40 B per interval (+ level-of-detail <= 50 % of that);" \
        " reopen <= 20 ms for 10 M intervals"


INDEXING_NOTE = """\
Indexing: index_file(ByteSource(path)), cold, no cache; fresh processes, median of --repeat.
1p = workers=1; dflt = default workers (* = it ran in one process: the file is compressed or
below the split threshold). MB = 10**6 decompressed bytes. Peak = whole-process ru_maxrss;
2p peak = parent's + worker's, each at its own moment; together = the most both held at one
moment (their VmRSS summed every 5 ms). 'imports' = ru_maxrss right after the imports."""

BASELINE_NOTE = """\
Baseline: orjson.loads(open(path,'rb').read()) (gzip: gzip.decompress first); fresh processes,
median of --repeat runs alternating with ours; skipped above 1.5 GB or with --no-baseline.
x faster = orjson time / our time; our/orjson peak = our 1p peak / orjson peak."""

CACHE_NOTE = f"""\
Cache: built by load_trace(use_cache=True); B/slice = cache file bytes / slices. Reopen =
the load_trace call only, fresh process after imports, median of {REOPEN_RUNS}; ms/10M = linear
extrapolation to 10 M intervals (pessimistic: the arrays are memory-mapped)."""


def reader_ratios(f: FileFigures) -> dict[str, float]:
    """The ratios issue 32 asks for, from the --readers runs (empty without them)."""
    out: dict[str, float] = {}
    for reader, got in f.readers.items():
        one, dflt = got["one"], got["default"]
        out[f"{reader}_default_over_one"] = one.seconds / dflt.seconds
        out[f"{reader}_peak_over_size_one"] = one.peak / f.data_bytes
        out[f"{reader}_peak_over_size_default"] = dflt.peak_all / f.data_bytes
        if f.baseline:
            out[f"{reader}_x_orjson_one"] = f.baseline.seconds / one.seconds
            out[f"{reader}_x_orjson_default"] = f.baseline.seconds / dflt.seconds
        if f.inflate_seconds:
            out[f"{reader}_default_over_inflate"] = dflt.seconds / f.inflate_seconds
    if {"native", "python"} <= set(f.readers):
        for key in ("one", "default"):
            out[f"native_x_python_{key}"] = \
                f.readers["python"][key].seconds / f.readers["native"][key].seconds
    return out


def batches_text(run: IndexRun) -> str:
    """The index's own count of batches per reader: "native/python" ("-" when not kept)."""
    b = run.batches or {}
    return f"{b['native']}/{b['python']}" if "native" in b and "python" in b else "-"


def readers_table(figs: list[FileFigures]) -> str:
    rows = []
    for f in figs:
        for reader, got in f.readers.items():
            one, dflt = got["one"], got["default"]
            r = reader_ratios(f)
            x = [r.get(f"{reader}_x_orjson_{k}") for k in ("one", "default")]
            vs = [r.get(f"native_x_python_{k}") if reader == "native" else None
                  for k in ("one", "default")]
            inflate = r.get(f"{reader}_default_over_inflate")
            rows.append([
                f.name, reader + ("" if one.reader == reader else f" ({one.reader}!)"),
                f"{one.seconds:.2f}", f"{dflt.seconds:.2f}" + ("" if dflt.two else "*"),
                *(f"{v:.1f}x" if v else "-" for v in x), *(f"{v:.2f}x" if v else "-" for v in vs),
                f"{one.seconds / dflt.seconds:.2f}x", f"{one.peak / f.data_bytes:.2f}x",
                f"{dflt.peak_all / f.data_bytes:.2f}x", f"{inflate:.2f}x" if inflate else "-",
                batches_text(one),
            ])
    return table(["file", "reader", "1p s", "dflt s", "x orjson 1p", "x orjson dflt",
                  "x python 1p", "x python dflt", "dflt/1p speed", "1p peak/size",
                  "dflt peak/size", "dflt/inflate", "batches n/p"], rows) + "\n" + READERS_TARGETS


READERS_NOTE = """\
Readers: each index run above made once per reader, side by side (PROFTUI_NATIVE=1 native,
0 python), the order swapped every round; medians. x orjson = orjson time / this reader's;
x python = the Python reader's time / the native reader's (same workers); dflt/1p speed = 1p
time / default time (* = the default ran in one process); peak/size = whole-process peak RSS
(dflt: parent and worker together, at one moment) / decompressed bytes; dflt/inflate =
default time / inflating the .gz alone (stdlib zlib, streamed); batches n/p = the index's
meta["reader"] counts (native/python).
'(python!)' after native: the child had no native reader (not built, or turned off)."""

READERS_TARGETS = (
    "  targets (issue 32): 1 GB Kineto-like dflt >= 15x orjson and >= 4x python, 1p >= 4x "
    "python;\n  msprof-like >= 3x python; dflt >= 1.7x 1p; peak <= 0.5x the file; .json.gz "
    "dflt <= 1.3x inflating")


def report(figs: list[FileFigures]) -> str:
    floor = (f"This benchmark's own process peaked at {mib(own_peak())} MiB: on Linux a child's "
             "ru_maxrss\nstarts from the RSS of the process that spawned it, a floor for the "
             "peaks above.")
    parts = [INDEXING_NOTE, indexing_table(figs), BASELINE_NOTE, baseline_table(figs),
             CACHE_NOTE, cache_table(figs)]
    if any(f.readers for f in figs):
        parts += [READERS_NOTE, readers_table(figs)]
    return "\n\n".join(parts + [floor])


def own_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000",
                        help="comma-separated sizes in MB (default 100,1000)")
    parser.add_argument("--quick", action="store_true", help="20 MB only: a smoke run")
    parser.add_argument("--dir", default=DEFAULT_DIR, help=f"work directory ({DEFAULT_DIR})")
    parser.add_argument("--gen", default=str(DEFAULT_GENERATOR), help="path of gen_trace.py")
    parser.add_argument("--no-baseline", action="store_true", help="skip orjson.loads")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds of fresh-process index and orjson runs, medians kept (3)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    parser.add_argument("--readers", metavar="LIST", default="",
                        help="event readers to run side by side, e.g. native,python "
                             "(PROFTUI_NATIVE=1 / 0); the first one's runs fill the tables")
    args = parser.parse_args(argv)
    args.readers = [r.strip() for r in args.readers.split(",") if r.strip()]
    unknown = set(args.readers) - {"native", "python"}
    if unknown:
        parser.error(f"--readers takes native and python, not {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    generator = Path(args.gen)
    if not generator.is_file():
        sys.exit(f"{generator} not found (pass --gen)")
    workdir = Path(args.dir)
    workdir.mkdir(parents=True, exist_ok=True)
    sizes = [20] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    figs = [measure(path, kind, args.repeat, not args.no_baseline, args.readers)
            for path, kind in workloads(generator, workdir, sizes)]
    print(report(figs))
    if args.json:
        Path(args.json).write_text(json.dumps([f.to_json() for f in figs], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
