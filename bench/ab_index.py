"""Index the same traces with two versions of proftui, side by side, and print the ratios.

Each version is a folder holding a `proftui` package (`git archive REV --prefix=proftui/ | tar
-x -C DIR`; the current checkout's parent folder for this one). Runs alternate between the two
(the order swapped every round, so that machine drift hits both):

- cold: `index_file(ByteSource(path), workers=1)` in a fresh process (imports excluded, the
  first touch of the code included), median of the rounds, with the process's peak RSS (and
  its workers', with `--workers`) against the file's size;
- warm: the best of 3 in a process after one run, median of the rounds (CPU time).

Both versions are byte-compiled first: where PYTHONDONTWRITEBYTECODE is set (it is on this
machine), a tree without `__pycache__` compiles every module it imports lazily on each run,
~50 ms that would be counted against it.

`--workers default` indexes as `proftui index` does (a large file in parts, one process a
core); `--cold` leaves the warm runs out (for gigabyte traces).

    python bench/ab_index.py --before /tmp/base --after .. --repeat 7 k100.json m100.json
    python bench/ab_index.py --before /tmp/base --after .. --repeat 3 --workers default --cold \
        kineto_1000mb.json msprof_1000mb.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CODE = """
import gc, resource, sys, time
try:
    from proftui.core.load.indexing import index_file
    from proftui.core.source.streams import ByteSource
except ImportError:  # before the sub-packages
    from proftui.core.load import index_file
    from proftui.core.sources import ByteSource
workers = None if sys.argv[2] == "default" else int(sys.argv[2])
t = time.perf_counter()
index_file(ByteSource(sys.argv[1]), workers=workers)
cold = time.perf_counter() - t
peaks = [resource.getrusage(who).ru_maxrss * 1024
         for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
warm = []
for _ in range(3 if sys.argv[3] == "warm" else 0):
    gc.collect()
    t = time.process_time()
    index_file(ByteSource(sys.argv[1]), workers=workers)
    warm.append(time.process_time() - t)
print(cold, min(warm, default=0.0), *peaks)
"""
COMPILE = ("import compileall, os, proftui\n"
           "compileall.compile_dir(os.path.dirname(proftui.__file__), quiet=1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="folder holding the baseline proftui")
    parser.add_argument("--after", required=True, help="folder holding the proftui measured")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", default="1", help="1 (the default), N or default")
    parser.add_argument("--cold", action="store_true", help="the cold runs only")
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    sides = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    for path in sides.values():
        subprocess.run([sys.executable, "-c", COMPILE], env=dict(os.environ, PYTHONPATH=path),
                       check=True)
    with tempfile.TemporaryDirectory() as cache:
        for trace in args.traces:
            got: dict[str, list[list[float]]] = {k: [] for k in sides}
            for i in range(args.repeat):
                order = list(sides.items())
                for side, path in order if i % 2 == 0 else order[::-1]:
                    env = dict(os.environ, PYTHONPATH=path, PROFTUI_CACHE_DIR=cache,
                               OPENBLAS_NUM_THREADS="1")  # as the command line has it
                    out = subprocess.run([sys.executable, "-c", CODE, trace, args.workers,
                                          "cold" if args.cold else "warm"], env=env,
                                         capture_output=True, text=True, check=True).stdout
                    got[side].append([float(x) for x in out.split()])
            size = os.path.getsize(trace)
            (cb, wb, pb, kb), (ca, wa, pa, ka) = (
                [statistics.median(x[0] for x in got[s]), statistics.median(x[1] for x in got[s]),
                 max(x[2] for x in got[s]) / size, max(x[3] for x in got[s]) / size]
                for s in sides)
            warm = "" if args.cold else f", warm {wb:.3f} -> {wa:.3f} s ({wa / wb:.3f}x)"
            workers = f" (+ workers {kb:.2f}x -> {ka:.2f}x)" if args.workers != "1" else ""
            print(f"{os.path.basename(trace)}: cold {cb:.3f} -> {ca:.3f} s ({ca / cb:.3f}x){warm}; "
                  f"peak {pb:.2f}x -> {pa:.2f}x the file{workers}", flush=True)


if __name__ == "__main__":
    main()
