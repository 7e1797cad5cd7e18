"""A tiny communication summary, written in the test as torch_npu writes it: as
communication.json and communication_matrix.json, and as analysis.db's tables, the same
figures in both.

Rank 0, step 3, group G:
- hcom_allReduce__123_0_1 starts at 1e12 µs + 0.5 µs; elapse 2.5 ms, transit 1.0000005 ms
  (rounds up to 1,000,001 ns), wait 0.25 ms, sync 0.2 ms, idle 1.2499995 ms (1,250,000 ns);
  HCCS and SDMA 40 MB in 2 ms (20 GB/s), packets of 32.5 MB (large: over 32 MB) and 7.5 MB
  (1.5 ms and 0.5 ms); RDMA and PCIE listed with zeros (padding).
- hcom_allGather__123_1_1 starts 3 ms later; elapse 1 ms, transit 0.5 ms, wait `wait`
  (default "n/a": not a number), sync 0, idle 0.5 ms; RDMA 0.6 MB in 0.1 ms (6 GB/s), two
  packets of 0.3 MB (small: under 0.5 MB).
Matrix: allreduce-total links 0-0 LOCAL 40 MB in 0.1 ms, 0-1 and 0-2 HCCS 10 MB in 0.5 ms
(20 GB/s), 0-3 HCCS 10 MB in 1 ms (10 GB/s: slow); an allreduce-top1 sample 0-1 naming its op.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

GROUP = "9000000000000000123"
AR, AG = "hcom_allReduce__123_0_1", "hcom_allGather__123_1_1"
ZERO = {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
        "Large Packet Ratio": 0, "Size Distribution": {}}


def comm_json(wait: Any = "n/a", step: str = "step3") -> dict:
    """communication.json of rank 0 (see the module docstring)."""
    hccs = {"Transit Size(MB)": 40.0, "Transit Time(ms)": 2.0, "Bandwidth(GB/s)": 20.0,
            "Large Packet Ratio": 0.5, "Size Distribution": {"32.5": [1, 1.5],
                                                             "7.5": [1, 0.5]}}
    return {step: {"p2p": {}, "collective": {
        f"{AR}@{GROUP}": {
            "Communication Time Info": {
                "Start Timestamp(us)": 1000000000000.5, "Elapse Time(ms)": 2.5,
                "Transit Time(ms)": 1.0000005, "Wait Time(ms)": 0.25,
                "Synchronization Time(ms)": 0.2, "Idle Time(ms)": 1.2499995,
                "Wait Time Ratio": 0.2, "Synchronization Time Ratio": 0.1667},
            "Communication Bandwidth Info": {
                "RDMA": ZERO, "HCCS": hccs, "PCIE": ZERO,
                "SDMA": {**hccs, "Large Packet Ratio": 0, "Size Distribution": {}}}},
        f"{AG}@{GROUP}": {
            "Communication Time Info": {
                "Start Timestamp(us)": 1000000003000, "Elapse Time(ms)": 1.0,
                "Transit Time(ms)": 0.5, "Wait Time(ms)": wait,
                "Synchronization Time(ms)": 0, "Idle Time(ms)": 0.5},
            "Communication Bandwidth Info": {
                "RDMA": {"Transit Size(MB)": 0.6, "Transit Time(ms)": 0.1,
                         "Bandwidth(GB/s)": 6.0, "Large Packet Ratio": 0.0,
                         "Size Distribution": {"0.3": [2, 0.1]}},
                "HCCS": ZERO}},
        "Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 999}}}}}


def link(transport: str, size: float, ms: float, bandwidth: float, op: str = "") -> dict:
    out = {"Transport Type": transport, "Transit Size(MB)": size, "Transit Time(ms)": ms,
           "Bandwidth(GB/s)": bandwidth}
    return {**out, "Op Name": op} if op else out


def matrix_json(step: str = "step3", src: int = 0, slow_ms: float = 1.0) -> dict:
    """communication_matrix.json of rank `src` (see the module docstring)."""
    s = str(src)
    return {step: {"p2p": {}, "collective": {
        f"allreduce-top1@{GROUP}": {f"{s}-1": link("HCCS", 10, 0.5, 20.0, AR)},
        f"allreduce-total@{GROUP}": {
            f"{s}-{s}": link("LOCAL", 40, 0.1, 400.0),
            f"{s}-1": link("HCCS", 10, 0.5, 20.0), f"{s}-2": link("HCCS", 10, 0.5, 20.0),
            f"{s}-3": link("HCCS", 10, slow_ms, round(10 / slow_ms, 4))}}}}


def write_text(out: Path, comm: Any = None, matrix: Any = None) -> Path:
    """communication.json and communication_matrix.json in `out` (None: the defaults; a
    str: written as it is)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in (("communication.json", comm_json() if comm is None else comm),
                       ("communication_matrix.json", matrix_json() if matrix is None
                        else matrix)):
        (out / name).write_text(data if isinstance(data, str) else json.dumps(data))
    return out / "communication.json"


TIME_SQL = ("hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, "
            "transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, "
            "idle_time NUMERIC, step TEXT, type TEXT")
BANDWIDTH_SQL = ("hccl_op_name TEXT, group_name TEXT, transport_type TEXT, transit_size "
                 "NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, large_packet_ratio NUMERIC, "
                 "package_size NUMERIC, count NUMERIC, total_duration NUMERIC, step TEXT, "
                 "type TEXT")
MATRIX_SQL = ("hccl_op_name TEXT, group_name TEXT, src_rank TEXT, dst_rank TEXT, "
              "transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth "
              "NUMERIC, step TEXT, type TEXT, op_name TEXT")


def analysis_tables(wait: Any = "n/a") -> dict[str, tuple[str, list[tuple]]]:
    """The same figures as analysis.db's tables (as the SQLite export writes them)."""
    c = ("step3", "collective")
    return {
        "CommAnalyzerTime": (TIME_SQL, [
            (AR, GROUP, 1000000000000.5, 2.5, 1.0000005, 0.25, 0.2, 1.2499995, *c),
            (AG, GROUP, 1000000003000, 1.0, 0.5, wait, 0, 0.5, *c)]),
        "CommAnalyzerBandwidth": (BANDWIDTH_SQL, [
            (AR, GROUP, "HCCS", 40.0, 2.0, 20.0, 0.5, 32.5, 1, 1.5, *c),
            (AR, GROUP, "HCCS", 40.0, 2.0, 20.0, 0.5, 7.5, 1, 0.5, *c),
            (AR, GROUP, "SDMA", 40.0, 2.0, 20.0, 0, 0, 0, 0, *c),
            (AG, GROUP, "RDMA", 0.6, 0.1, 6.0, 0.0, 0.3, 2, 0.1, *c)]),
        "CommAnalyzerMatrix": (MATRIX_SQL, [
            ("allreduce-top1", GROUP, "0", "1", "HCCS", 10, 0.5, 20.0, *c, AR),
            ("allreduce-total", GROUP, "0", "0", "LOCAL", 40, 0.1, 400.0, *c, ""),
            ("allreduce-total", GROUP, "0", "1", "HCCS", 10, 0.5, 20.0, *c, ""),
            ("allreduce-total", GROUP, "0", "2", "HCCS", 10, 0.5, 20.0, *c, ""),
            ("allreduce-total", GROUP, "0", "3", "HCCS", 10, 1.0, 10.0, *c, "")]),
    }


def write_analysis_db(path: Path, tables: dict[str, tuple[str, list[tuple]]] | None = None
                      ) -> Path:
    """analysis.db at `path` holding `tables` (default: :func:`analysis_tables`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    for name, (columns, rows) in (analysis_tables() if tables is None else tables).items():
        conn.execute(f'CREATE TABLE "{name}" ({columns})')
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            conn.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
    conn.commit()
    conn.close()
    return path
