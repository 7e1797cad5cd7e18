"""Inline folders of ranks for the cluster tests (core, command line and pane)."""

from __future__ import annotations

import json


def x(name, ts, dur, pid, tid, cat=""):
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "cat": cat}


def meta(pid, process, tid, thread):
    return [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": process}},
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
             "args": {"name": thread}}]


def rank_folders(root, arrivals_us, missing=(), clock_us=(), no_step=()):
    """torch_npu ranks with three 200 µs steps 1000 µs apart: a 100 µs matmul at 10 µs, then
    all-reduce n of group 7 from the rank's arrival to 20 µs after the last one's; (rank, n)
    in `missing` is left out. `clock_us[rank]` moves every time of that rank (a host clock
    that is not synchronised); (rank, n) in `no_step` has no ProfilerStep annotation."""
    for rank, arrivals in enumerate(arrivals_us):
        shift = clock_us[rank] if rank < len(clock_us) else 0
        out = root / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
        events = (meta(1, "Python", 1, "Thread 1") + meta(2, "Ascend Hardware", 3, "Stream 3")
                  + meta(4, "HCCL", 5, "Group 0 Communication"))
        for n, arrival in enumerate(arrivals):
            at = 1000 * n + shift
            end = max(a[n] for a in arrivals_us) + 20
            if (rank, n) not in no_step:
                events.append(x(f"ProfilerStep#{n + 1}", at, 200 + 10 * rank, 1, 1, "cpu_op"))
            events.append(x("MatMulV3", at + 10, 100, 2, 3))
            if (rank, n) not in missing:
                events.append(x(f"hcom_allReduce__7_{n}_1", at + arrival, end - arrival, 4,
                                5))
        (out / "trace_view.json").write_text(json.dumps(events))
    return str(root)
