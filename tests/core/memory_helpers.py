"""A small torch_npu rank with memory data, written in the test: trace_view.json with torch
ops and a device op, memory_record.csv, npu_module_mem.csv and operator_memory.csv, as the
profiler writes them (timestamps ending in a TAB, empty cells, CRLF)."""

from __future__ import annotations

import json
from pathlib import Path

T_US = 1_700_000_000_000_000  # the capture's start, µs
T = T_US * 1000  # ns
PID = 4242
HARDWARE = (PID << 10) | (13 << 5)
MB = 1 << 20


def ts(us: float) -> str:
    """A torch_npu timestamp string, `us` µs after T."""
    whole = int(round(us * 1000))
    return f"{T_US + whole // 1000}.{whole % 1000:03d}"


def x(name: str, start_us: float, dur_us: float, pid: int, tid: int, cat: str = "") -> dict:
    return {"ph": "X", "name": name, "ts": ts(start_us), "dur": dur_us, "pid": pid,
            "tid": tid, "cat": cat, "args": {}}


def trace_view() -> list[dict]:
    """Host: ProfilerStep#1 (0-1000 µs) over a Python frame, aten::linear (150-260) holding
    aten::mm (180-240); device: MatMul on stream 2 (190-210)."""
    meta = [{"ph": "M", "name": "process_name", "pid": PID, "tid": 0,
             "args": {"name": "Python"}},
            {"ph": "M", "name": "process_name", "pid": HARDWARE, "tid": 0,
             "args": {"name": "Ascend Hardware"}},
            {"ph": "M", "name": "thread_name", "pid": HARDWARE, "tid": 2,
             "args": {"name": "Stream 2"}}]
    return meta + [
        x("ProfilerStep#1", 0, 1000, PID, PID, "cpu_op"),
        x("main.py(10): train", 0, 1000, PID, PID, "python_function"),
        x("aten::linear", 150, 110, PID, PID, "cpu_op"),
        x("aten::mm", 180, 60, PID, PID, "cpu_op"),
        x("MatMul", 190, 20, HARDWARE, 2, "")]


MEMORY_RECORD = [  # (component, µs after T, allocated, reserved, active) in MB; None: empty
    ("APP", 100, None, 2048.0, None),
    ("PTA", 100, 1.0, 2.0, 1.0),
    ("GE", 150, 0.5, 1.0, None),
    ("PTA", 200.5, 3.5, 4.0, 3.5),
    ("PTA", 300, 2.0, 4.0, 2.0),
]
MODULES = [("SLOG", 100, 0.0), ("HCCL", 100, 404.0625), ("HCCL", 300, 404.0625)]
OPERATOR_MEMORY = [  # (name, size KB, allocation µs after T)
    ("aten::mm", 1024.0, 190), ("aten::mm", 1024.0, 600), ("aten::add", 3072.0, 400),
    ("aten::empty", 0.0, 500)]


def _cell(value: float | None) -> str:
    return "" if value is None else repr(value)


def write_text_rank(root: Path, rank: int = 0, memory: bool = True, ops: bool = True) -> Path:
    """A `rank{N}_ascend_pt` dir of the text export; returns it."""
    run = root / f"rank{rank}_ascend_pt"
    out = run / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (run / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    (out / "trace_view.json").write_text(json.dumps(trace_view()))
    if memory:
        lines = ["Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),"
                 "Total Active(MB),Stream Ptr,Device Type"]
        lines += [f"{c},{ts(t)}\t,{_cell(a)},{_cell(r)},{_cell(act)},"
                  f"{'' if c in ('APP', 'GE') else 7},NPU:{rank}"
                  for c, t, a, r, act in MEMORY_RECORD]
        (out / "memory_record.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
        lines = ["Component,Timestamp(us),Total Reserved(MB),Device"]
        lines += [f"{c},{ts(t)}\t,{r!r},NPU:{rank}" for c, t, r in MODULES]
        (out / "npu_module_mem.csv").write_text("\n".join(lines) + "\n")
    if ops:
        lines = ["Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),"
                 "Allocation Total Allocated(MB),Allocation Total Reserved(MB),Device Type"]
        lines += [f"{n},{size!r},{ts(t)}\t,,,1.0,2.0,NPU:{rank}"
                  for n, size, t in OPERATOR_MEMORY]
        (out / "operator_memory.csv").write_text("\n".join(lines) + "\n")
    return run


def series(index) -> dict[tuple[str, str, str], list[tuple[int, float]]]:
    """{(group, process name, series name): [(ts, value), ...]} of every counter series."""
    a, s = index.arrays, index.strings
    first = a["counters.series_first"].tolist() + [len(a["counters.sample_ts"])]
    out = {}
    for sid, (track, name) in enumerate(zip(a["counters.series_track"].tolist(),
                                            a["counters.series_name"].tolist())):
        p = int(a["tracks.process"][track])
        key = (s[a["processes.group"][p]], s[a["processes.name"][p]], s[name])
        lo, hi = first[sid], first[sid + 1]
        out[key] = list(zip(a["counters.sample_ts"][lo:hi].tolist(),
                            a["counters.sample_value"][lo:hi].tolist()))
    return out
