"""Hostile input at full size: gzip bombs and random bytes, time and peak memory.

    python bench/bench_hostile.py [--gb 2] [--dir /tmp/proftui-hostile]

Each case is indexed in a fresh interpreter (`load_trace`, no cache), which reports its wall
time and peak RSS. Baselines run side by side on the same file: the time to merely read it
(inflating a gzip file with zlib into nothing), and the peak RSS of an interpreter that only
imports proftui.core. The ceiling the test suite checks (tests/core/test_memory.py) is 256 MB.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np

MB = 1 << 20
PROBE = """
import resource, sys, time
t = time.perf_counter()
from proftui.core import ProftuiError, load_trace
try:
    index = load_trace(sys.argv[1], use_cache=False)
    what = f"{index.n_slices} slices, {index.diagnostics.total} problems"
except ProftuiError as exc:
    what = "refused"
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, what)
"""
BARE = ("import resource; import proftui.core; "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")


def bomb(path: Path, head: bytes, block: bytes, tail: bytes, size: int) -> Path:
    """A gzip file of `head`, `block` repeated up to `size` bytes, and `tail`, written in
    pieces (kept if it exists; tests/core/test_memory.py makes its bombs with this too)."""
    if not path.exists():
        z = zlib.compressobj(1, zlib.DEFLATED, 31)
        with open(path, "wb") as f:
            f.write(z.compress(head))
            for _ in range(size // len(block)):
                f.write(z.compress(block))
            f.write(z.compress(tail) + z.flush())
    return path


def _garbage(path: Path, size: int) -> Path:
    if not path.exists():
        rng = np.random.default_rng(1)
        with open(path, "wb") as f:
            f.write(b"[")
            for _ in range(size // (16 * MB)):
                f.write(rng.integers(0, 256, 16 * MB, dtype=np.uint8).tobytes())
    return path


def _read_time(path: Path) -> float:
    t = time.perf_counter()
    with open(path, "rb") as f:
        if path.suffix == ".gz":
            z = zlib.decompressobj(31)
            while data := f.read(MB):
                while data:
                    z.decompress(data, 4 * MB)
                    data = z.unconsumed_tail
        else:
            while f.read(16 * MB):
                pass
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gb", type=float, default=2.0, help="size of the bombs (inflated)")
    parser.add_argument("--dir", default="/tmp/proftui-hostile")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    size = int(args.gb * 1024) * MB
    cases = {
        "gzip bomb: blanks": bomb(folder / "blanks.json.gz", b"[", b" " * MB, b"]", size),
        "gzip bomb: one endless string": bomb(
            folder / "string.json.gz", b'[{"ph":"X","name":"', b"A" * MB, b'"}]', size),
        "gzip bomb: endless nesting": bomb(
            folder / "nesting.json.gz", b'[{"ph":"X","args":', b'[{"a":' * (MB // 6), b"", size),
        "gzip bomb: NUL bytes": bomb(folder / "nul.json.gz", b"", b"\0" * MB, b"", size),
        "random bytes after [": _garbage(folder / "garbage.json", size // 2),
    }
    bare = int(subprocess.run([sys.executable, "-c", BARE], capture_output=True, text=True,
                              check=True).stdout)
    print(f"peak RSS of an interpreter importing proftui.core: {bare} MB")
    print(f"{'case':32} {'inflated':>9} {'on disk':>9} {'index':>8} {'read':>7} {'x read':>7} "
          f"{'peak RSS':>9} {'x bare':>7}  outcome")
    for name, path in cases.items():
        inflated = size // 2 if path.suffix != ".gz" else size
        run = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True,
                             text=True, check=True)
        seconds, peak, outcome = run.stdout.split(maxsplit=2)
        read = _read_time(path)
        print(f"{name:32} {inflated / MB:>7.0f}MB {path.stat().st_size / MB:>7.1f}MB "
              f"{float(seconds):>7.1f}s {read:>6.1f}s {float(seconds) / read:>6.1f}x "
              f"{int(peak):>7}MB {int(peak) / bare:>6.1f}x  {outcome.strip()}")


if __name__ == "__main__":
    main()
