"""Memory ceiling: hostile input of any size is indexed in bounded memory and can be cancelled.

Each case runs in a fresh interpreter that reports its own peak resident set size. The inputs
are several times larger than the largest entry the reader buffers (ENTRY_LIMIT, 32 MB), so a
reader that kept them whole would pass the ceiling. Offline, the same cases at 2 GB
(gzip bombs) and 1 GB (random bytes) stay under it too (see bench/README.md).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from proftui.core import Cancelled, load_trace
from proftui.core.importers.chrome.read import ENTRY_LIMIT

_spec = importlib.util.spec_from_file_location(
    "proftui_bench_hostile", Path(__file__).resolve().parents[2] / "bench" / "bench_hostile.py")
_bench = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_bench)  # type: ignore[union-attr]
bomb = _bench.bomb  # the benchmark's bombs, at test size

CEILING_MB = 256  # peak RSS of the whole process, interpreter and numpy included (~50 MB)
MB = 1 << 20
SIZE = 5 * ENTRY_LIMIT

PROBE = """
import resource, sys
from proftui.core import ProftuiError, load_trace
try:
    index = load_trace(sys.argv[1], use_cache=False)
    print(index.n_slices, index.diagnostics.total)
except ProftuiError as exc:
    print("refused", exc)
# VmHWM is this program's own peak; ru_maxrss keeps the parent's at the fork (a big pytest)
try:
    with open("/proc/self/status") as status:
        print(next(int(x.split()[1]) for x in status if x.startswith("VmHWM:")) // 1024)
except (OSError, StopIteration):
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _peak(path: Path) -> tuple[str, int]:
    run = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    outcome, peak = run.stdout.strip().rsplit("\n", 1)
    return outcome, int(peak)


CASES = {
    # name: (head, repeated block, tail, expected outcome: slices and problems)
    "blanks": (b"[", b" " * MB, b"]", "0 0"),
    "endless string": (b'[{"ph":"X","name":"', b"A" * MB,
                       b'","ts":1,"dur":1,"pid":1,"tid":1}]', "0 1"),
    "endless nesting": (b'[{"ph":"X","args":', b'[{"a":' * (MB // 6), b"", "0 1"),
    "nul bytes": (b"", b"\0" * MB, b"", "refused"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_gzip_bombs_stay_under_the_ceiling(tmp_path, case) -> None:
    head, block, tail, expected = CASES[case]
    path = bomb(tmp_path / "bomb.json.gz", head, block, tail, SIZE)
    assert path.stat().st_size < SIZE // 100
    outcome, peak = _peak(path)
    assert outcome.startswith(expected), outcome
    assert peak < CEILING_MB, f"{case}: peak {peak} MB"


def test_random_bytes_stay_under_the_ceiling(tmp_path) -> None:
    path = tmp_path / "garbage.json"
    rng = np.random.default_rng(20261123)
    with open(path, "wb") as f:
        f.write(b"[")
        for _ in range(3 * ENTRY_LIMIT // (8 * MB)):
            f.write(rng.integers(0, 256, 8 * MB, dtype=np.uint8).tobytes())
    outcome, peak = _peak(path)
    slices, problems = map(int, outcome.split())
    assert slices == 0 and problems > 0
    assert peak < CEILING_MB, f"peak {peak} MB"


def test_a_bomb_reports_progress_and_can_be_cancelled(tmp_path) -> None:
    """Inside one endless entry, progress still moves (in file bytes) and cancel is heard."""
    path = bomb(tmp_path / "bomb.json.gz", b'[{"name":"', b"A" * MB, b'"}]', 8 * ENTRY_LIMIT)
    seen: list[int] = []

    def progress(done: int, total: int, events: int) -> None:
        assert done <= total == path.stat().st_size
        seen.append(done)

    with pytest.raises(Cancelled):
        load_trace(str(path), use_cache=False, progress=progress,
                   cancelled=lambda: len(seen) > 4)
    assert seen == sorted(seen) and 0 < seen[-1] < path.stat().st_size
