"""The native event parser alone: `_native.read_batch` over the batches of a trace.

Each trace is read once by ChromeJsonReader into a sink that does nothing, with the native
reader's `read_batch` wrapped to keep a copy of every batch it is given; the batches are then
held in memory, one after the other, and `read_batch` alone is timed over all of them: MB/s
(1 MB = 10**6 bytes) and ns per event of the median of `--passes` passes, in CPU time of the
calling thread, the one the parse runs in (numpy's idle BLAS threads are not counted). Nothing
else of the index runs, so the figures are the parser's own.

With `--baseline REV`, the `_native.c` of git revision REV (or the C file at path REV) is
compiled into a temporary directory with the flags setup.py uses (sysconfig's CFLAGS, then
``-O2 -std=c11``, ``-fPIC -shared``), both modules are loaded in this process and take turns
batch by batch; the ratio ours / baseline's time is printed twice: of the passes' medians, and
of the sums of each batch's best time over the passes (the steadier figure on a shared
machine, where a pass can take 1.5x another for nothing). Every batch's result is compared
too (the tuples must be equal, declines alike), so that a faster parser is shown to give the
same columns.

    python bench/bench_native_parse.py                            # the 100 MB traces
    python bench/bench_native_parse.py --baseline HEAD --passes 7
    python bench/bench_native_parse.py /tmp/proftui-bench/kineto_1000mb.json --baseline main
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SOURCE = "core/importers/chrome/_native.c"
DEFAULT = ["/tmp/proftui-bench/kineto_100mb.json", "/tmp/proftui-bench/msprof_100mb.json"]


def batches(path: str) -> tuple[bytes, list[tuple[int, int]]]:
    """The batches the native reader is given when `path` is read, as one bytes object and
    the (start, end) of each batch in it."""
    from proftui.core.importers.chrome import native
    from proftui.core.importers.chrome.read import ChromeJsonReader
    from proftui.core.model.diagnostics import Diagnostics
    from proftui.core.source.streams import ByteSource

    module = native.MODULE
    if module is None:
        sys.exit("the native reader is not built")
    pieces: list[bytes] = []

    def record(data, start, end):
        pieces.append(bytes(memoryview(data)[start:end]))
        return module.read_batch(data, start, end)

    os.environ["PROFTUI_NATIVE"] = "1"
    native.MODULE = types.SimpleNamespace(read_batch=record)
    try:
        ChromeJsonReader(ByteSource(path), Diagnostics()).read(lambda *args: None)
    finally:
        native.MODULE = module
    ranges, at = [], 0
    for piece in pieces:
        ranges.append((at, at + len(piece)))
        at += len(piece)
    return b"".join(pieces), ranges


def build(rev: str, out: Path) -> types.ModuleType:
    """The `_native` module of git revision `rev` (or of the C file at path `rev`), compiled
    into `out` as setup.py would."""
    src = out / "_native.c"
    if os.path.isfile(rev):  # a _native.c of one's own, to compare two drafts
        src.write_bytes(Path(rev).read_bytes())
    else:
        src.write_bytes(subprocess.run(["git", "show", f"{rev}:{SOURCE}"], cwd=HERE,
                                       check=True, capture_output=True).stdout)
    so = out / ("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = sysconfig.get_config_var("CC").split()
    flags = sysconfig.get_config_var("CFLAGS").split()
    subprocess.run([*cc, *flags, "-fPIC", "-I", sysconfig.get_paths()["include"], "-O2",
                    "-std=c11", "-shared", str(src), "-o", str(so)], check=True)
    spec = importlib.util.spec_from_file_location("_native", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(modules: list, data: bytes, ranges: list[tuple[int, int]], passes: int,
          ) -> tuple[list[list[list[float]]], int]:
    """CPU seconds of each module's read of each batch in each pass ([module][pass][batch]),
    the modules taking turns batch by batch (who goes first alternates), and the events read."""
    times = [[[0.0] * len(ranges) for _ in range(passes)] for _ in modules]
    events = 0
    clock = time.thread_time
    for k in range(passes):
        for b, (start, end) in enumerate(ranges):
            order = range(len(modules)) if (k + b) % 2 == 0 else reversed(range(len(modules)))
            for m in order:
                t = clock()
                result = modules[m].read_batch(data, start, end)
                times[m][k][b] = clock() - t
                if m == 0 and k == 0 and result is not None:
                    events += result[0]
    return times, events


def same_results(ours, base, data: bytes, ranges: list[tuple[int, int]]) -> int:
    """How many batches the two modules read differently (result tuples or declines)."""
    return sum(ours.read_batch(data, s, e) != base.read_batch(data, s, e) for s, e in ranges)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=DEFAULT, help="traces (default: 100 MB)")
    parser.add_argument("--passes", type=int, default=5, help="timed passes per module")
    parser.add_argument("--baseline", metavar="REV",
                        help="compare with REV's _native.c (or a C file's)")
    args = parser.parse_args(argv)
    from proftui.core.importers.chrome import native

    ours = native.MODULE
    with tempfile.TemporaryDirectory() as tmp:
        base = build(args.baseline, Path(tmp)) if args.baseline else None
        print(f"ours: {ours.__file__}")
        differ = 0
        for path in args.paths:
            data, ranges = batches(path)
            mb = len(data) / 1e6
            names = ["ours", "base"] if base is not None else ["ours"]
            modules = [ours, base] if base is not None else [ours]
            times, events = timed(modules, data, ranges, args.passes)
            print(f"{Path(path).name}: {len(ranges)} batches, {mb:.0f} MB, {events} events")
            medians, mins = [], []
            for name, per_pass in zip(names, times):
                totals = [sum(batch) for batch in per_pass]
                medians.append(statistics.median(totals))
                mins.append(sum(min(column) for column in zip(*per_pass)))
                t = medians[-1]
                print(f"  {name}: {t:.3f} s  {mb / t:7.1f} MB/s  {t * 1e9 / events:6.1f} "
                      f"ns/event; best of each batch {mins[-1]:.3f} s "
                      f"(passes: {' '.join(f'{x:.3f}' for x in totals)})")
            if base is not None:
                changed = same_results(ours, base, data, ranges)
                differ += changed
                print(f"  ours/base time: {medians[0] / medians[1]:.3f} (medians), "
                      f"{mins[0] / mins[1]:.3f} (best of each batch); "
                      f"batches that differ: {changed}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
