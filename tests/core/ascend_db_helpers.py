"""A tiny torch_npu SQLite export, written in the test: every table proftui maps, a few rows
each, times as the profiler writes them (PYTORCH_API's as TEXT)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

T = 1_700_000_000_123_450_000  # ns; PYTORCH_API's "1700000000123456789" is T + 6789
NA = 4294967295
PID, MAIN, WORKER = 4242, 4242, 4243


def gtid(tid: int, pid: int = PID) -> int:
    return (pid << 32) | tid


STRINGS = {
    1: "KERNEL_AIVEC", 2: "aclnnMuls_MulAiCore_Mul", 3: "Mul", 4: "AI_VECTOR_CORE",
    5: "MEMCPY_ASYNC", 6: "Notify Wait", 7: "Notify_Wait", 8: "hcom_allReduce__1_0_1",
    9: "group-a", 10: "launch", 11: "aclrtMemcpy", 12: "hcom_allReduce_", 13: "AI_CORE",
    14: "app", 15: "read",
    268435456: "ProfilerStep#7", 268435457: "aten::mul", 268435458: "Enqueue",
    268435459: "Dequeue@aclnnMuls", 268435460: "aten::mul_backward", 268435461: "my range",
    268435462: "aten::exact", 536870913: "PTA",
}

TABLES: dict[str, tuple[str, list[tuple]]] = {
    "STRING_IDS": ("id INTEGER PRIMARY KEY, value TEXT", sorted(STRINGS.items())),
    "ENUM_API_TYPE": ("id INTEGER PRIMARY KEY, name TEXT", [
        (5000, "runtime"), (5500, "hccl"), (10000, "node"), (15000, "model"), (20000, "acl"),
        (50001, "op"), (50002, "queue"), (50003, "trace"), (50004, "mstx")]),
    "ENUM_MODULE": ("id INTEGER PRIMARY KEY, name TEXT", [(3, "HCCL")]),
    "NPU_INFO": ("id INTEGER, name TEXT", [(0, "Ascend910B")]),
    "SESSION_TIME_INFO": ("startTimeNs INTEGER, endTimeNs INTEGER", [(T, T + 20000)]),
    "META_DATA": ("name TEXT, value TEXT", [("SCHEMA_VERSION", "1.0.0")]),
    "TASK": ("startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, "
             "globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, "
             "streamId INTEGER, taskId INTEGER, modelId INTEGER, mystery INTEGER", [
                 (T + 1000, T + 1500, 0, 100, 1, PID, 1, NA, 2, 10, NA, 0),
                 (T + 2000, T + 2600, 0, 101, 2, PID, 5, NA, 2, 11, NA, 0),
                 (T + 3000, T + 9000, 0, 102, 3, PID, 13, NA, 4, 20, NA, 0),  # FFTS+ parent
                 (T + 3100, T + 3200, 0, 102, 4, PID, 6, 0, 4, 20, NA, 0)]),
    "COMPUTE_TASK_INFO": ("name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockDim INTEGER, "
                          "mixBlockDim INTEGER, taskType INTEGER, opType INTEGER, "
                          "inputShapes INTEGER, waitNs INTEGER", [(2, 1, 8, 0, 4, 3, None, 0)]),
    "COMMUNICATION_TASK_INFO": ("name INTEGER, globalTaskId INTEGER, taskType INTEGER, "
                                "planeId INTEGER, groupName INTEGER, opId INTEGER",
                                [(8, 4, 7, 0, 9, 1)]),
    "COMMUNICATION_OP": ("opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER, "
                         "groupName INTEGER, opId INTEGER PRIMARY KEY, opType INTEGER",
                         [(8, T + 3000, T + 9000, 102, 9, 1, 12)]),
    "CANN_API": ("startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER, "
                 "connectionId INTEGER PRIMARY KEY, name INTEGER", [
                     (T + 500, T + 900, 10000, gtid(WORKER), 100, 10),
                     (T + 1900, T + 1990, 20000, gtid(WORKER), 101, 11),
                     (T + 2900, T + 2990, 10000, gtid(WORKER), 102, 10)]),
    "PYTORCH_API": ("startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, "
                    "name INTEGER, sequenceNumber INTEGER, type INTEGER", [
                        (str(T), str(T + 10000), gtid(MAIN), None, 268435456, -1, 50001),
                        (str(T + 400), str(T + 1000), gtid(MAIN), 0, 268435457, 1, 50001),
                        (str(T + 450), str(T + 470), gtid(MAIN), 1, 268435458, None, 50002),
                        (str(T + 480), str(T + 950), gtid(WORKER), 2, 268435459, None, 50002),
                        ("1700000000123456789", str(T + 6900), gtid(MAIN), None, 268435462,
                         None, 50001),
                        (str(T + 7000), str(T + 8000), gtid(MAIN), 3, 268435460, 1, 50001)]),
    "CONNECTION_IDS": ("id INTEGER, connectionId INTEGER",
                       [(0, 100), (0, 5000), (1, 6000), (2, 6000), (3, 5000)]),
    "STEP_TIME": ("id INTEGER, startNs INTEGER, endNs INTEGER", [(7, T, T + 10000)]),
    "MSTX_EVENTS": ("startNs INTEGER, endNs INTEGER, eventType INTEGER, rangeId INTEGER, "
                    "category INTEGER, message INTEGER, globalTid INTEGER, "
                    "endGlobalTid INTEGER, domainId INTEGER, connectionId INTEGER",
                    [(T + 5000, T + 5500, 2, 1, 0, 268435461, gtid(MAIN), gtid(MAIN), 0,
                      None)]),
    "NPU_MEM": ("type INTEGER, ddr NUMERIC, hbm NUMERIC, timestampNs INTEGER, deviceId INTEGER",
                [(14, 2048, 4096, T + 100, 0), (14, 1024, 1024, T + 200, 0)]),
    "HBM": ("deviceId INTEGER, timestampNs INTEGER, bandwidth NUMERIC, hbmId INTEGER, "
            "type INTEGER", [(0, T + 100, 2 * 1048576, 0, 15)]),
    "MEMORY_RECORD": ("component INTEGER, timestamp INTEGER, totalAllocated INTEGER, "
                      "totalReserved INTEGER, totalActive INTEGER, streamPtr INTEGER, "
                      "deviceId INTEGER", [(536870913, T + 300, 1048576, 2097152, 1048576, 1,
                                            0)]),
    "NPU_MODULE_MEM": ("moduleId INTEGER, timestampNs INTEGER, totalReserved NUMERIC, "
                       "deviceId INTEGER", [(3, T + 300, 1048576, 0)]),
    "OP_MEMORY": ("name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER, "
                  "activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER, "
                  "allocationTotalAllocated INTEGER, allocationTotalReserved INTEGER, "
                  "allocationTotalActive INTEGER, releaseTotalAllocated INTEGER, "
                  "releaseTotalReserved INTEGER, releaseTotalActive INTEGER, "
                  "streamPtr INTEGER, deviceId INTEGER",
                  [(268435457, 2048, T + 400, T + 900, None, 500, None, 1048576, 2097152,
                    1048576, None, None, None, 1, 0)]),
    "TASK_PMU_INFO": ("globalTaskId INTEGER, name INTEGER, value NUMERIC", [(1, 3, 0.5)]),
    "FOO_UNKNOWN": ("a INTEGER", [(1,)]),
}

ANALYSIS = {
    "StepTraceTime": (
        "step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, "
        "overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, "
        "bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, "
        "preparing NUMERIC", [("7", 0.5, 5.9, 0.1, 6.0, 1.5, 8.0, 0, 5.9, 1.0)]),
    "CommAnalyzerTime": ("hccl_op_name TEXT", []),
}


def write_db(path: Path, tables: dict[str, tuple[str, list[tuple]]],
             journal: str = "DELETE") -> Path:
    """A database holding `tables` ({name: (column definitions, rows)})."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode={journal}")
    for name, (columns, rows) in tables.items():
        conn.execute(f'CREATE TABLE "{name}" ({columns})')
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            conn.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
    conn.commit()
    conn.close()
    return path


def write_rank(root: Path, rank: int = 0, tables: dict[str, Any] | None = None,
               analysis: bool = True) -> Path:
    """A `rank{N}_ascend_pt` dir holding the db export only; returns the .db path."""
    run = root / f"rank{rank}_ascend_pt"
    out = run / "ASCEND_PROFILER_OUTPUT"
    db = write_db(out / f"ascend_pytorch_profiler_{rank}.db", TABLES if tables is None else tables)
    if analysis:
        write_db(out / "analysis.db", ANALYSIS)
    (run / f"profiler_info_{rank}.json").write_text(f'{{"rank_id": {rank}}}')
    return db
