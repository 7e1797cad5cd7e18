#!/usr/bin/env python3
"""Indexing benchmark: an Ascend SQLite export beside a text export of a similar event count.

Generates (once; kept in --dir and reused while the arguments are unchanged):
- a synthetic but schema-faithful torch_npu export, `rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/
  ascend_pytorch_profiler_0.db`: TASK (--tasks rows on 8 streams), COMPUTE_TASK_INFO (70 % of
  the tasks), COMMUNICATION_TASK_INFO and COMMUNICATION_OP (10 %), CANN_API (a call per task,
  a third of them launches that flow to their task), PYTORCH_API (a torch op per two tasks,
  times as TEXT as torch_npu writes them, flowing to a launched task where there is one),
  CONNECTION_IDS, STRING_IDS, STEP_TIME and the small tables;
- an msprof-like text timeline of about as many events with ../shared/bench/gen_trace.py
  --msprof.

Then indexes each, cold (no cache), in fresh processes, --repeat times (medians kept): the db
through `load_trace` (one process), the text through `index_file` with one process and with
the default workers. Printed: seconds, rows (db rows read; JSON events) per second, slices
per second, MB/s of the file and peak RSS, and the db's figures as ratios of the text's.
A benchmark, not a test.

    python bench/bench_ascend_db.py                 # 2 M tasks (~5 M rows), ~1 GB of text
    python bench/bench_ascend_db.py --quick         # 200 k tasks, a smoke run
    python bench/bench_ascend_db.py --tasks 5000000 --repeat 1 --json figures.json
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_GENERATOR = REPO.parent / "shared" / "bench" / "gen_trace.py"
DEFAULT_DIR = "/tmp/proftui-bench"
MB = 10**6
EVENTS_PER_MB = 4370  # gen_trace.py --msprof writes about this many events per MB
T0 = 1_736_410_576_000_000_000
NA = 4294967295
PID = 3136493

_PRELUDE = """
import json, resource, sys, time
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
"""
DB_CHILD = _PRELUDE + """
from proftui.core import load_trace
path = sys.argv[1]
t0 = time.perf_counter()
ix = load_trace(path, use_cache=False)
seconds = time.perf_counter() - t0
rows = sum(r[2] for s in ix.meta["sources"] for r in s["sqlite"]["refs"])
print(json.dumps({"seconds": seconds, "peak": rss(), "rows": rows, "slices": ix.n_slices,
                  "flows": len(ix.col("flows.src_slice"))}))
"""
TEXT_CHILD = _PRELUDE + """
from proftui.core.load.indexing import index_file
from proftui.core.source.streams import ByteSource
path, workers = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
ix = index_file(ByteSource(path), workers=None if workers == "default" else int(workers))
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak": rss(), "rows": sum(ix.meta["phase_counts"].values()),
                  "slices": ix.n_slices, "flows": len(ix.col("flows.src_slice"))}))
"""


# -- the synthetic database ---------------------------------------------------------------------

_TASK_TYPES = ["KERNEL_AIVEC", "KERNEL_AICORE", "MEMCPY_ASYNC", "EVENT_RECORD", "EVENT_WAIT",
               "Notify Wait", "Write Value", "SDMA"]
_CORES = ["AI_VECTOR_CORE", "AI_CORE", "MIX_AIV", "MIX_AIC"]
_OPS = [f"aclnn{k}_{k}AiCore_{k}" for k in ("Muls", "Add", "MatMul", "Conv2D", "Relu", "Cast",
                                            "ReduceSum", "Transpose", "Softmax", "LayerNorm")]
_TORCH = ["aten::mul", "aten::add", "aten::mm", "aten::conv2d", "aten::relu", "aten::to",
          "aten::sum", "aten::transpose", "aten::softmax", "aten::layer_norm"]


def generate_db(path: Path, n_tasks: int, seed: int = 0) -> None:
    """Write the synthetic export (see the module docstring) to `path`."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    strings = {s: i for i, s in enumerate(_TASK_TYPES + _CORES + _OPS + ["launch", "acl",
                                                                       "hcom_allReduce_",
                                                                       "group0", "Notify_Wait"])}
    torch_ids = {s: 268435456 + i for i, s in enumerate(_TORCH + ["Enqueue", "ProfilerStep#1"])}

    def table(name: str, columns: str, rows) -> None:
        conn.execute(f"CREATE TABLE {name} ({columns})")
        marks = ", ".join("?" * (columns.count(",") + 1))
        conn.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)

    table("STRING_IDS", "id INTEGER PRIMARY KEY, value TEXT",
          [(i, s) for s, i in strings.items()] + [(i, s) for s, i in torch_ids.items()])
    table("ENUM_API_TYPE", "id INTEGER PRIMARY KEY, name TEXT",
          [(5000, "runtime"), (10000, "node"), (20000, "acl"), (50001, "op"), (50002, "queue")])
    table("NPU_INFO", "id INTEGER, name TEXT", [(0, "Ascend910B")])
    table("META_DATA", "name TEXT, value TEXT", [("SCHEMA_VERSION", "1.0.0")])
    n = n_tasks
    # Device tasks: 8 streams, each a run of back-to-back tasks; a launch on the host ~30 µs
    # before each; compute 70 %, communication 10 %, the rest copies and events.
    stream = rng.integers(0, 8, n)
    gap = rng.integers(1_000, 20_000, n)
    start = T0 + np.cumsum(gap)
    dur = rng.integers(500, 50_000, n)
    kind = rng.choice(8, n, p=[0.45, 0.25, 0.08, 0.06, 0.06, 0.04, 0.03, 0.03])
    compute = kind < 2
    comm = kind >= 5
    # Half the compute tasks are launched by a CANN call that says so (their connection id
    # is the call's); a torch op per such launch: flows for about 27 % of the slices, about
    # as in the corpus and in the text generator's output (33 %).
    launched = np.flatnonzero(compute & (np.arange(n) % 2 == 0))
    conn_id = np.arange(n, dtype=np.int64) + 1  # the CANN calls' (one per task)
    task_conn = np.full(n, 0, np.int64)
    task_conn[launched] = conn_id[launched]
    table("TASK", "startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
          "globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, "
          "streamId INTEGER, taskId INTEGER, modelId INTEGER",
          zip(start.tolist(), (start + dur).tolist(), [0] * n, task_conn.tolist(), range(n),
              [PID] * n, [strings[_TASK_TYPES[k]] for k in kind.tolist()],
              np.where(comm, 0, NA).tolist(), stream.tolist(), range(n), [NA] * n))
    op = rng.integers(0, len(_OPS), n)
    table("COMPUTE_TASK_INFO", "name INTEGER, globalTaskId INTEGER PRIMARY KEY, "
          "blockDim INTEGER, mixBlockDim INTEGER, taskType INTEGER, opType INTEGER, "
          "inputShapes INTEGER, waitNs INTEGER",
          ((strings[_OPS[o]], g, 32, 0, strings[_CORES[o % 4]], strings[_OPS[o]], None, 0)
           for g, o in zip(np.flatnonzero(compute).tolist(), op[compute].tolist())))
    comm_rows = np.flatnonzero(comm)
    op_of = comm_rows // 1000  # a collective per thousand tasks
    table("COMMUNICATION_TASK_INFO", "name INTEGER, globalTaskId INTEGER, taskType INTEGER, "
          "planeId INTEGER, groupName INTEGER, opId INTEGER",
          ((strings["hcom_allReduce_"], int(g), strings["Notify_Wait"], int(g % 8),
            strings["group0"], int(o)) for g, o in zip(comm_rows, op_of)))
    ops = np.unique(op_of)
    table("COMMUNICATION_OP", "opName INTEGER, startNs INTEGER, endNs INTEGER, "
          "connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, opType INTEGER",
          ((strings["hcom_allReduce_"], int(start[o * 1000]), int(start[o * 1000] + 10**6),
            None, strings["group0"], int(o), strings["hcom_allReduce_"]) for o in ops))
    # Host: a CANN launch per task on one of two threads; a torch op per two tasks.
    tid = 4000 + (np.arange(n) % 2)
    table("CANN_API", "startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER, "
          "connectionId INTEGER PRIMARY KEY, name INTEGER",
          zip((start - 30_000).tolist(), (start - 25_000).tolist(), [10000] * n,
              ((PID << 32) | tid).tolist(), conn_id.tolist(), [strings["launch"]] * n))
    m = n // 2
    table("PYTORCH_API", "startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, "
          "name INTEGER, sequenceNumber INTEGER, type INTEGER",
          zip(map(str, (start[::2][:m] - 40_000).tolist()),
              map(str, (start[::2][:m] - 20_000).tolist()), [(PID << 32) | PID] * m,
              range(m), [torch_ids[_TORCH[k % len(_TORCH)]] for k in range(m)], [-1] * m,
              [50001] * m))
    table("CONNECTION_IDS", "id INTEGER, connectionId INTEGER",
          zip(range(len(launched[:m])), conn_id[launched[:m]].tolist()))
    table("STEP_TIME", "id INTEGER, startNs INTEGER, endNs INTEGER",
          [(1, int(start[0] - 50_000), int(start[-1] + dur[-1]))])
    conn.commit()
    conn.close()
    os.replace(tmp, path)


# -- measuring ----------------------------------------------------------------------------------


def _child(program: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO.parent))}
    out = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict]) -> dict:
    best = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    best["seconds"] = statistics.median(r["seconds"] for r in runs)
    return best


def _stamped(path: Path, stamp: str) -> bool:
    mark = path.with_name(path.name + ".gen")
    return path.exists() and mark.exists() and mark.read_text() == stamp


def _stamp(path: Path, stamp: str) -> None:
    path.with_name(path.name + ".gen").write_text(stamp)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2_000_000, help="TASK rows (default 2 M)")
    parser.add_argument("--quick", action="store_true", help="200 k tasks")
    parser.add_argument("--dir", default=DEFAULT_DIR, help=f"work directory ({DEFAULT_DIR})")
    parser.add_argument("--gen", default=str(DEFAULT_GENERATOR), help="gen_trace.py")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (medians kept)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    n_tasks = 200_000 if args.quick else args.tasks
    work = Path(args.dir)
    folder = work / f"ascend_db_{n_tasks}"
    db = folder / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    stamp = f"v2 tasks={n_tasks}"
    if not _stamped(db, stamp):
        print(f"generating {db} ...", file=sys.stderr)
        generate_db(db, n_tasks)
        _stamp(db, stamp)
    with sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True) as conn:
        rows = sum(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for (t,) in
                   conn.execute("SELECT name FROM sqlite_master WHERE type='table'"))
    mb = max(1, round(rows / EVENTS_PER_MB))
    text = work / f"msprof_like_{mb}mb.json"
    text_stamp = f"--msprof --mb {mb}"
    if not _stamped(text, text_stamp):
        print(f"generating {text} ({mb} MB) ...", file=sys.stderr)
        subprocess.run([sys.executable, args.gen, "--msprof", "--mb", str(mb), "-o", str(text)],
                       check=True, stdout=subprocess.DEVNULL)
        _stamp(text, text_stamp)
    figures = {}
    for label, program, target, extra in (
            ("db", DB_CHILD, str(folder), ()), ("text 1p", TEXT_CHILD, str(text), ("1",)),
            ("text default", TEXT_CHILD, str(text), ("default",))):
        runs = [_child(program, target, *extra) for _ in range(args.repeat)]
        best = _median(runs)
        size = db.stat().st_size if label == "db" else text.stat().st_size
        best.update(mb=size / MB, rows_per_s=best["rows"] / best["seconds"],
                    slices_per_s=best["slices"] / best["seconds"],
                    mb_per_s=size / MB / best["seconds"])
        figures[label] = best
    print(f"db: {db} ({rows:,} rows in all); text: {text}")
    print(f"{'':14}{'seconds':>9}{'rows':>12}{'rows/s':>12}{'slices':>11}{'slices/s':>12}"
          f"{'MB':>8}{'MB/s':>8}{'peak MB':>9}")
    for label, f in figures.items():
        print(f"{label:14}{f['seconds']:9.2f}{f['rows']:12,.0f}{f['rows_per_s']:12,.0f}"
              f"{f['slices']:11,.0f}{f['slices_per_s']:12,.0f}{f['mb']:8.0f}"
              f"{f['mb_per_s']:8.1f}{f['peak'] / MB:9.0f}")
    for other in ("text 1p", "text default"):
        d, t = figures["db"], figures[other]
        print(f"db / {other}: rows/s x{d['rows_per_s'] / t['rows_per_s']:.2f}, slices/s "
              f"x{d['slices_per_s'] / t['slices_per_s']:.2f}, MB/s "
              f"x{d['mb_per_s'] / t['mb_per_s']:.2f}, peak x{d['peak'] / t['peak']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
