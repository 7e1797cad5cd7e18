"""Index the same traces with two versions of proftui, side by side, and print the ratios.

Each version is a folder holding a `proftui` package (`git archive REV --prefix=proftui/ | tar
-x -C DIR`; the current checkout's parent folder for this one). Runs alternate between the two
(the order swapped every round, so that machine drift hits both):

- cold: `index_file(ByteSource(path), workers=1)` in a fresh process (imports excluded, the
  first touch of the code included), median of the rounds;
- warm: the best of 3 in a process after one run, median of the rounds (CPU time).

    python bench/ab_index.py --before /tmp/base --after .. --repeat 7 k100.json m100.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CODE = """
import gc, sys, time
try:
    from proftui.core.load.indexing import index_file
    from proftui.core.source.streams import ByteSource
except ImportError:  # before the sub-packages
    from proftui.core.load import index_file
    from proftui.core.sources import ByteSource
t = time.perf_counter()
index_file(ByteSource(sys.argv[1]), workers=1)
cold = time.perf_counter() - t
warm = []
for _ in range(3):
    gc.collect()
    t = time.process_time()
    index_file(ByteSource(sys.argv[1]), workers=1)
    warm.append(time.process_time() - t)
print(cold, min(warm))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="folder holding the baseline proftui")
    parser.add_argument("--after", required=True, help="folder holding the proftui measured")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    sides = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    with tempfile.TemporaryDirectory() as cache:
        for trace in args.traces:
            got: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
            for i in range(args.repeat):
                order = list(sides.items())
                for side, path in order if i % 2 == 0 else order[::-1]:
                    env = dict(os.environ, PYTHONPATH=path, PROFTUI_CACHE_DIR=cache)
                    out = subprocess.run([sys.executable, "-c", CODE, trace], env=env,
                                         capture_output=True, text=True, check=True).stdout
                    cold, warm = map(float, out.split())
                    got[side].append((cold, warm))
            (cb, wb), (ca, wa) = ((statistics.median(x[0] for x in got[s]),
                                   statistics.median(x[1] for x in got[s])) for s in sides)
            print(f"{os.path.basename(trace)}: cold {cb:.3f} -> {ca:.3f} s ({ca / cb:.3f}x), "
                  f"warm {wb:.3f} -> {wa:.3f} s ({wa / wb:.3f}x)", flush=True)


if __name__ == "__main__":
    main()
