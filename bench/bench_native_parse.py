"""The native event parser alone: `_native.read_batch` over the batches of a trace.

Each trace is read once by ChromeJsonReader into a sink that does nothing, with the native
reader's `read_batch` wrapped to keep a copy of every batch it is given; the batches are then
held in memory, one after the other, and `read_batch` alone is timed over all of them: MB/s
(1 MB = 10**6 bytes) and ns per event, the median of `--passes` passes (CPU time of this
process). Nothing else of the index runs, so the figures are the parser's own.

With `--baseline REV`, the `_native.c` of git revision REV is compiled into a temporary
directory with the flags setup.py uses (sysconfig's CFLAGS, then ``-O2 -std=c11``, ``-fPIC
-shared``), both modules are loaded in this process and their passes alternate; the ratio of
the medians (ours / baseline's time) is printed, and every batch's result is compared (the
tuples must be equal, declines alike), so that a faster parser is also shown to give the same
columns. On a shared machine only such ratios of alternating passes mean anything.

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
    """The `_native` module of git revision `rev`, compiled into `out` as setup.py would."""
    src = out / "_native.c"
    src.write_bytes(subprocess.run(["git", "show", f"{rev}:{SOURCE}"], cwd=HERE, check=True,
                                   capture_output=True).stdout)
    so = out / ("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = sysconfig.get_config_var("CC").split()
    flags = sysconfig.get_config_var("CFLAGS").split()
    subprocess.run([*cc, *flags, "-fPIC", "-I", sysconfig.get_paths()["include"], "-O2",
                    "-std=c11", "-shared", str(src), "-o", str(so)], check=True)
    spec = importlib.util.spec_from_file_location("_native", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_pass(module, data: bytes, ranges: list[tuple[int, int]]) -> tuple[float, int]:
    """CPU seconds of reading every batch, and the events read."""
    events = 0
    t = time.process_time()
    for start, end in ranges:
        result = module.read_batch(data, start, end)
        if result is not None:
            events += result[0]
    return time.process_time() - t, events


def same_results(ours, base, data: bytes, ranges: list[tuple[int, int]]) -> int:
    """How many batches the two modules read differently (result tuples or declines)."""
    return sum(ours.read_batch(data, s, e) != base.read_batch(data, s, e) for s, e in ranges)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=DEFAULT, help="traces (default: 100 MB)")
    parser.add_argument("--passes", type=int, default=5, help="timed passes per module")
    parser.add_argument("--baseline", metavar="REV", help="compare with REV's _native.c")
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
            times: dict[str, list[float]] = {"ours": [], "base": []}
            events = 0
            for _ in range(args.passes):
                for name, module in (("ours", ours), ("base", base)):
                    if module is not None:
                        seconds, events = one_pass(module, data, ranges)
                        times[name].append(seconds)
            line = f"{Path(path).name}: {len(ranges)} batches, {mb:.0f} MB, {events} events"
            print(line)
            for name in ("ours", "base"):
                if times[name]:
                    t = statistics.median(times[name])
                    print(f"  {name}: {t:.3f} s  {mb / t:7.1f} MB/s  {t * 1e9 / events:6.1f} "
                          f"ns/event   (passes: {' '.join(f'{x:.3f}' for x in times[name])})")
            if base is not None:
                ratio = statistics.median(times["ours"]) / statistics.median(times["base"])
                changed = same_results(ours, base, data, ranges)
                differ += changed
                print(f"  ours/base time: {ratio:.3f}; batches that differ: {changed}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
