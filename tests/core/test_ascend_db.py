"""Ascend SQLite exports: each table's mapping, exact times, degraded and damaged files, files
left untouched, discovery and the cache."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ascend_db_helpers import ANALYSIS, NA, PID, TABLES, WORKER, T, gtid, write_db, write_rank

from proftui.core import NotATraceError, load_trace
from proftui.core.analysis.overview import read_overview
from proftui.core.discover.profile import discover
from proftui.core.model.errors import ProftuiError
from proftui.core.ops.iterations import find_iterations
from proftui.core.query.args import slice_args
from proftui.core.source import dbfile

from helpers import problems, slice_names


def _load(path: Path, **kw):
    return load_trace(str(path), use_cache=False, **kw)


def _by_track(index) -> dict[str, list[tuple[str, int, int]]]:
    """Track "process / thread" -> (name, start - T, dur) of its slices."""
    out: dict[str, list] = {}
    a = index.arrays
    for i in range(index.n_slices):
        t = int(a["slices.track"][i])
        p = int(a["tracks.process"][t])
        key = f"{index.strings[a['processes.name'][p]]} / {index.track_label(t)}"
        out.setdefault(key, []).append((index.slice_name(i), int(a["slices.start"][i]) - T,
                                        int(a["slices.dur"][i])))
    return out


def _flows(index) -> set[tuple[str, str, str]]:
    """(category, source slice, destination slice) of every flow edge."""
    a, s = index.arrays, index.strings
    return {(s[a["flows.flow_cat"][f]], index.slice_name(src), index.slice_name(dst))
            for f, src, dst in zip(a["flows.flow"].tolist(), a["flows.src_slice"].tolist(),
                                   a["flows.dst_slice"].tolist())}


@pytest.fixture
def rank(tmp_path: Path) -> Path:
    write_rank(tmp_path)
    return tmp_path / "rank0_ascend_pt"


@pytest.mark.parametrize("chunk_rows", [1, 2, 5, 1 << 19])
def test_each_table_maps_to_the_tracks_the_text_export_has(rank: Path, chunk_rows: int,
                                                           monkeypatch) -> None:
    monkeypatch.setattr(dbfile, "_CHUNK_ROWS", chunk_rows)  # every rowid range cut
    index = _load(rank)
    tracks = _by_track(index)
    # TASK: compute named by COMPUTE_TASK_INFO, the rest by task type; the FFTS+ parent of the
    # communication task is not shown (msprof's timeline shows its subtasks only).
    assert tracks["Ascend Hardware / Stream 2"] == [("aclnnMuls_MulAiCore_Mul", 1000, 500),
                                                   ("MEMCPY_ASYNC", 2000, 600)]
    assert tracks["Ascend Hardware / Stream 4"] == [("Notify Wait", 3100, 100)]
    # HCCL: the collective on its group's thread, the task again on its plane.
    assert tracks["HCCL / Group 0 Communication"] == [("hcom_allReduce__1_0_1", 3000, 6000)]
    assert tracks["HCCL / Plane 0 (1)"] == [("Notify_Wait", 3100, 100)]
    # PYTORCH_API on its threads (TEXT times), CANN_API as "Level@name".
    assert tracks[f"Python / Thread {WORKER}"] == [("Dequeue@aclnnMuls", 480, 470)]
    assert [n for n, _, _ in tracks[f"Python / Thread {PID}"]] == [
        "ProfilerStep#7", "aten::mul", "Enqueue", "aten::exact", "aten::mul_backward"]
    assert tracks[f"CANN / Thread {WORKER}"] == [
        ("Node@launch", 500, 400), ("AscendCL@aclrtMemcpy", 1900, 90), ("Node@launch", 2900, 90)]
    assert tracks[f"MSTX / Thread {PID}"] == [("my range", 5000, 500)]
    # The pids are the text export's: (pid << 10) | (sort index << 5) | device.
    procs = {index.strings[n]: index.strings[p] for n, p in
             zip(index.col("processes.name"), index.col("processes.pid"))}
    assert procs["Ascend Hardware"] == str((PID << 10) | (13 << 5))
    assert procs["CANN"] == str((PID << 10) | (7 << 5)) and procs["Python"] == str(PID)
    cats = {index.slice_name(i): index.strings[index.col("slices.cat")[i]]
            for i in range(index.n_slices)}
    assert (cats["aten::mul"], cats["Enqueue"], cats["Dequeue@aclnnMuls"], cats["my range"]) == (
        "cpu_op", "enqueue", "dequeue", "user_annotation")
    assert problems(index) == {}


def test_text_timestamps_are_read_exactly(rank: Path) -> None:
    index = _load(rank)
    (i,) = [i for i in range(index.n_slices) if index.slice_name(i) == "aten::exact"]
    assert int(index.col("slices.start")[i]) == 1700000000123456789  # beyond 2**53, exact
    assert int(index.col("slices.dur")[i]) == T + 6900 - 1700000000123456789


def test_a_timestamp_that_is_no_integer_is_rounded_and_counted(tmp_path: Path) -> None:
    rows = list(TABLES["PYTORCH_API"][1])
    rows[4] = ("1700000000123456789.6", *rows[4][1:])  # a decimal: the exact slow path
    rows.append(("not a time", str(T), gtid(PID), None, 268435462, None, 50001))
    write_rank(tmp_path, tables={**TABLES, "PYTORCH_API": (TABLES["PYTORCH_API"][0], rows)})
    index = _load(tmp_path)
    starts = [int(index.col("slices.start")[i]) for i in range(index.n_slices)
              if index.slice_name(i) == "aten::exact"]
    assert starts == [1700000000123456790]  # rounded half up at the ns, never via a float
    assert problems(index) == {"db_inexact_value": 2, "bad_timestamp": 1}


def test_flows_from_connection_ids(rank: Path) -> None:
    index = _load(rank)
    assert _flows(index) == {
        ("HostToDevice", "Node@launch", "aclnnMuls_MulAiCore_Mul"),
        ("HostToDevice", "AscendCL@aclrtMemcpy", "MEMCPY_ASYNC"),
        ("HostToDevice", "Node@launch", "hcom_allReduce__1_0_1"),  # the collective, not its
        ("async_npu", "aten::mul", "aclnnMuls_MulAiCore_Mul"),  # tasks on the streams
        ("async_task_queue", "Enqueue", "Dequeue@aclnnMuls"),
        ("fwdbwd", "aten::mul", "aten::mul_backward")}


def test_steps_breakdown_and_tables(rank: Path) -> None:
    index = _load(rank)
    summary, tables, found = read_overview(index)
    (step,) = found.items
    assert (step.number, step.start_ns, step.end_ns) == (7, T, T + 10000)
    # analysis.db StepTraceTime joins as step_trace_time.csv would (µs -> ns)
    assert step.parts["computing"] == 500.0 and step.parts["preparing"] == 1000.0
    kinds = {t.kind: t for t in tables}
    assert set(kinds) == {"step_trace_time", "kernel_details", "operator_memory",
                          "memory_record", "npu_module_mem"}
    kernel = kinds["kernel_details"]
    assert list(kernel.find("Name").values) == ["aclnnMuls_MulAiCore_Mul",
                                                "hcom_allReduce__1_0_1"]
    assert list(kernel.find("Accelerator Core").values) == ["AI_VECTOR_CORE", "HCCL"]
    assert kernel.find("Start Time").kind == "timestamp"
    assert int(kernel.find("Start Time").values[0]) == T + 1000
    assert list(kernel.find("Step Id").values) == [7.0, 7.0]
    memory = kinds["operator_memory"]
    assert (memory.find("Name").values[0], memory.find("Size(KB)").values[0],
            memory.find("Allocation Total Allocated(MB)").values[0]) == ("aten::mul", 2.0, 1.0)
    assert kinds["npu_module_mem"].find("Component").values[0] == "HCCL"


def test_counters(rank: Path) -> None:
    index = _load(rank)
    s = index.strings
    series = {s[n]: k for k, n in enumerate(index.col("counters.series_name"))}
    first = index.col("counters.series_first")
    values = index.col("counters.sample_value")
    ts = index.col("counters.sample_ts")

    def samples(name: str) -> list[tuple[int, float]]:
        k = series[name]
        end = first[k + 1] if k + 1 < len(first) else len(values)
        return [(int(t) - T, float(v)) for t, v in zip(ts[first[k]:end], values[first[k]:end])]

    assert samples("APP/DDR KB") == [(100, 2.0), (200, 1.0)]
    assert samples("APP/Memory KB") == [(100, 6.0), (200, 2.0)]
    assert samples("HBM 0/Read Read(MB/s)") == [(100, 2.0)]
    assert samples("PTA Total Allocated(MB)") == [(300, 1.0)]
    assert samples("HCCL Total Reserved(MB)") == [(300, 1.0)]


def test_args_are_the_row_read_again(rank: Path) -> None:
    index = _load(rank)
    names = slice_names(index)
    task = slice_args(index, names.index("aclnnMuls_MulAiCore_Mul"))
    assert (task["globalTaskId"], task["opType"], task["Task Type"], task["taskType"]) == (
        1, "Mul", "AI_VECTOR_CORE", "KERNEL_AIVEC")
    assert slice_args(index, names.index("AscendCL@aclrtMemcpy"))["type"] == "acl"
    assert slice_args(index, names.index("aten::exact"))["startNs"] == "1700000000123456789"


def test_missing_tables_degrade_with_a_diagnostic(tmp_path: Path) -> None:
    write_rank(tmp_path, tables={"TASK": TABLES["TASK"]}, analysis=False)
    index = _load(tmp_path)
    # No STRING_IDS: names are the ids; no COMPUTE_TASK_INFO: the task type's id names it.
    assert sorted(set(slice_names(index))) == ["1", "5", "6"]
    assert problems(index) == {"db_missing_table": 2, "db_unknown_string": 4}
    details = {d["detail"] for d in index.diagnostics.to_list()}
    assert "STRING_IDS (names: shown as their numbers)" in details


def test_a_table_without_a_needed_column_is_skipped_and_counted(tmp_path: Path) -> None:
    tables = dict(TABLES)
    tables["CANN_API"] = ("startNs INTEGER, endNs INTEGER, name INTEGER", [(T, T + 5, 10)])
    write_rank(tmp_path, tables=tables)
    index = _load(tmp_path)
    assert not any(index.slice_name(i).endswith("launch") for i in range(index.n_slices))
    assert problems(index) == {"db_missing_column": 1}


def test_unknown_tables_and_columns_are_listed_as_not_used(rank: Path) -> None:
    layout = discover(str(rank))
    skipped = {os.path.relpath(p, rank): why for p, why in layout.skipped}
    db = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    assert skipped[f"{db}: FOO_UNKNOWN"] == "a table proftui does not know (not read)"
    assert skipped[f"{db}: TASK: modelId, mystery"].startswith("columns not used for the "
                                                               "timeline")
    assert skipped[f"{db}: TASK_PMU_INFO"] == "per-task PMU metrics (not a timeline)"
    assert skipped["ASCEND_PROFILER_OUTPUT/analysis.db: CommAnalyzerTime"].startswith(
        "communication analysis")


def test_text_export_beside_the_db_is_preferred(rank: Path) -> None:
    out = rank / "ASCEND_PROFILER_OUTPUT"
    (out / "trace_view.json").write_text('[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,'
                                         '"dur":1}]')
    (out / "step_trace_time.csv").write_text("Step,Computing\n7,1\n")
    layout = discover(str(rank))
    assert [os.path.basename(t.path) for t in layout.timelines] == ["trace_view.json"]
    skipped = dict(layout.skipped)
    assert "text export beside it" in skipped[str(out / "ascend_pytorch_profiler_0.db")]
    assert skipped[f"{out / 'analysis.db'}: StepTraceTime"] == (
        "step_trace_time.csv beside it is read")


def test_a_folder_of_db_ranks_opens_both_as_groups(tmp_path: Path) -> None:
    write_rank(tmp_path, 0)
    write_rank(tmp_path, 1)
    index = _load(tmp_path)
    assert (index.meta.get("profile") or {})["groups"] == ["rank 0", "rank 1"]
    found = find_iterations(index)
    assert [(it.group, it.number) for it in found.items] == [("rank 0", 7), ("rank 1", 7)]
    assert index.n_slices == 2 * _load(tmp_path / "rank0_ascend_pt").n_slices


# -- damaged, locked, untouched -----------------------------------------------------------------


@pytest.mark.parametrize("damage, sentence", [
    (lambda p: p.write_bytes(b""), "is empty"),
    (lambda p: p.write_bytes(b"PK\x03\x04 not sqlite at all" * 20), "is not a SQLite database"),
    (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "is truncated"),
    (lambda p: p.write_bytes(p.read_bytes()[:4096] + b"\xff" * (len(p.read_bytes()) - 4096)),
     "is a damaged SQLite database"),
])
def test_a_damaged_db_is_one_sentence(tmp_path: Path, damage, sentence, capsys) -> None:
    db = write_rank(tmp_path, analysis=False)
    damage(db)
    with pytest.raises(ProftuiError, match=sentence) as caught:
        _load(tmp_path)
    assert "\n" not in str(caught.value)
    from proftui.tui.cli import main

    assert main(["info", "--no-cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert sentence in err and "Traceback" not in err and err.count("\n") == 1


def test_a_db_a_program_is_writing_is_refused(tmp_path: Path) -> None:
    db = write_rank(tmp_path, analysis=False)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
         "c.execute('BEGIN IMMEDIATE'); c.execute('DELETE FROM TASK')\n"
         "print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(ProftuiError, match="is locked by a program writing to it"):
            _load(tmp_path)
    finally:
        holder.stdin.close()
        holder.wait(10)
    assert _load(tmp_path).n_slices > 0  # and readable once it has finished


def _state(folder: Path) -> dict[str, tuple[str, int]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.iterdir())}


def _wal_copy(folder: Path) -> Path:
    """A WAL-mode db whose -wal holds a committed TASK row the db file lacks (copied while
    its writer still had it open: the -wal as a crash or a running writer leaves it)."""
    live = write_db(folder / "live" / "ascend_pytorch_profiler_0.db", TABLES, journal="WAL")
    conn = sqlite3.connect(live)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                 (T + 9500, T + 9600, 0, None, 99, PID, 5, NA, 3, 30, NA, 0))
    conn.commit()
    out = folder / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    for suffix in ("", "-wal", "-shm"):
        shutil.copy2(str(live) + suffix, out / ("ascend_pytorch_profiler_0.db" + suffix))
    conn.close()
    shutil.rmtree(folder / "live")
    return out / "ascend_pytorch_profiler_0.db"


@pytest.mark.parametrize("kind", ["rollback", "wal, empty -wal and -shm", "wal holding data"])
def test_reading_changes_no_byte_and_no_time_stamp(tmp_path: Path, kind: str,
                                                   cache_dir: Path, monkeypatch) -> None:
    monkeypatch.setattr(dbfile, "_COPIES", {})
    if kind == "wal holding data":
        db = _wal_copy(tmp_path)
        assert os.path.getsize(str(db) + "-wal") > 4096
    else:
        db = write_rank(tmp_path, analysis=False)
        if kind.startswith("wal"):
            conn = sqlite3.connect(db)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.close()  # leaves a WAL-mode file; then the corpus's empty -wal and a -shm
            Path(str(db) + "-wal").write_bytes(b"")
            Path(str(db) + "-shm").write_bytes(b"\0" * 32768)
    os.chmod(db.parent, 0o555)  # as the corpus is (root ignores it: the hashes decide)
    before = _state(db.parent)
    try:
        index = load_trace(str(tmp_path))
        names = slice_names(index)
        opened = index.meta["sources"][0]["sqlite"]["opened"]
        load_trace(str(tmp_path))  # from the cache
    finally:
        os.chmod(db.parent, 0o755)
    assert _state(db.parent) == before
    if kind == "wal holding data":
        assert opened.startswith("private copy") and "MEMCPY_ASYNC" in names
        assert len(dbfile._COPIES) == 1  # made once, for discovery, indexing and tables
        assert sum(n == "MEMCPY_ASYNC" for n in names) == 2  # the row only the -wal holds
    else:
        assert opened == "immutable"


def test_a_changed_db_or_a_new_wal_is_indexed_again(tmp_path: Path, cache_dir: Path) -> None:
    db = write_rank(tmp_path, analysis=False)
    first = load_trace(str(tmp_path))
    assert not first.meta.get("from_cache")
    assert load_trace(str(tmp_path)).meta.get("from_cache")
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM CANN_API")
    conn.commit()
    conn.close()
    os.utime(db, ns=(os.stat(db).st_atime_ns, os.stat(db).st_mtime_ns - 10**9))  # settled
    again = load_trace(str(tmp_path))
    assert not again.meta.get("from_cache") and again.n_slices == first.n_slices - 3
    Path(str(db) + "-wal").write_bytes(b"")  # a -wal appears: another identity
    assert not load_trace(str(tmp_path)).meta.get("from_cache")


def test_exact_int_never_goes_through_a_float() -> None:
    assert dbfile.exact_int("1700000000123456789") == 1700000000123456789
    assert dbfile.exact_int(" 1700000000123456789 ") == 1700000000123456789
    assert dbfile.exact_int("1700000000123456788.5") == 1700000000123456789
    assert dbfile.exact_int("9223372036854775808") is None
    assert dbfile.exact_int("x") is None and dbfile.exact_int(None) is None


def test_integer_columns_read_in_bulk_equal_sqlite_s_own_values(tmp_path: Path,
                                                                monkeypatch) -> None:
    monkeypatch.setattr(dbfile, "_CHUNK_ROWS", 7)
    rng = np.random.default_rng(0)
    rows = [(int(a), int(b), None if k % 5 == 0 else int(c)) for k, (a, b, c) in enumerate(
        zip(rng.integers(-2**62, 2**62, 100), rng.integers(0, 10, 100),
            rng.integers(0, 2**40, 100)))]
    db = write_db(tmp_path / "x.db", {"X": ("a INTEGER, b INTEGER, c INTEGER", rows)})
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM X WHERE rowid % 9 = 0")  # gaps in the rowids
    conn.commit()
    expected = conn.execute("SELECT a, b, c FROM X ORDER BY rowid").fetchall()
    conn.close()
    with dbfile.open_db(str(db)) as opened:
        cols = dbfile.read_ints(opened, "X", ["a", "b", "c"])
    assert cols.rowid_first is None and cols.inexact == 0
    got = list(zip(cols["a"].tolist(), cols["b"].tolist(), cols["c"].tolist()))
    assert got == [(a, b, dbfile.NULL if c is None else c) for a, b, c in expected]


def test_analysis_db_alone_is_a_step_table(tmp_path: Path) -> None:
    write_db(tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "analysis.db", ANALYSIS)
    layout = discover(str(tmp_path))
    assert [(t.kind, t.source) for t in layout.tables] == [("step_trace_time", "StepTraceTime")]
    assert layout.timelines == []


def test_host_tables_read_by_a_second_process_give_the_same_index(rank: Path,
                                                                  monkeypatch) -> None:
    from proftui.core.importers.ascend_db import timeline as ascend_db

    alone = _load(rank)
    monkeypatch.setattr(ascend_db, "PREFETCH_MIN_ROWS", 0)
    delivered = []

    class Spy(ascend_db.Prefetch):
        def get(self, table, columns):
            found = super().get(table, columns)
            if found is not None:
                delivered.append(table)
            return found

    monkeypatch.setattr(ascend_db, "Prefetch", Spy)
    both = _load(rank)
    assert sorted(delivered) == ["CANN_API", "CONNECTION_IDS", "PYTORCH_API"]
    for column in ("slices.start", "slices.dur", "slices.name", "slices.track", "slices.ref",
                   "flows.src_slice", "flows.dst_slice"):
        assert np.array_equal(alone.col(column), both.col(column)), column


def test_ffts_parents_are_dropped_when_the_rowids_have_gaps(tmp_path: Path) -> None:
    db = write_rank(tmp_path, analysis=False)
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM TASK WHERE globalTaskId = 2")  # a gap before the parent
    conn.commit()
    conn.close()
    tracks = _by_track(_load(tmp_path))
    assert tracks["Ascend Hardware / Stream 4"] == [("Notify Wait", 3100, 100)]
    assert tracks["Ascend Hardware / Stream 2"] == [("aclnnMuls_MulAiCore_Mul", 1000, 500)]


def test_several_devices_are_processes_of_their_own(tmp_path: Path) -> None:
    tables = dict(TABLES)
    tables["NPU_INFO"] = (TABLES["NPU_INFO"][0], [(0, "Ascend910B"), (1, "Ascend910B")])
    tables["TASK"] = (TABLES["TASK"][0], TABLES["TASK"][1] + [
        (T + 1200, T + 1300, 1, None, 5, PID, 1, NA, 2, 10, NA, 0),  # device 1, compute
        (T + 3150, T + 3250, 1, 102, 6, PID, 6, 0, 4, 20, NA, 0)])  # device 1, HCCL task
    tables["COMPUTE_TASK_INFO"] = (TABLES["COMPUTE_TASK_INFO"][0],
                                   TABLES["COMPUTE_TASK_INFO"][1] + [(2, 5, 8, 0, 4, 3, None, 0)])
    tables["COMMUNICATION_TASK_INFO"] = (TABLES["COMMUNICATION_TASK_INFO"][0],
                                         TABLES["COMMUNICATION_TASK_INFO"][1] + [
                                             (8, 6, 7, 3, 9, 1)])
    write_rank(tmp_path, tables=tables, analysis=False)
    index = _load(tmp_path)
    s = index.strings
    procs = sorted((s[n], s[lab]) for n, lab in zip(index.col("processes.name"),
                                                    index.col("processes.labels"))
                   if s[n] in ("Ascend Hardware", "HCCL"))
    assert procs == [("Ascend Hardware", "NPU 0"), ("Ascend Hardware", "NPU 1"),
                     ("HCCL", "NPU 0"), ("HCCL", "NPU 1")]
    by_label = {}
    for i in range(index.n_slices):
        t = int(index.col("slices.track")[i])
        p = int(index.col("tracks.process")[t])
        key = (s[index.col("processes.labels")[p]], s[index.col("processes.name")[p]],
               index.track_label(t))
        by_label.setdefault(key, []).append(index.slice_name(i))
    assert by_label[("NPU 1", "Ascend Hardware", "Stream 2")] == ["aclnnMuls_MulAiCore_Mul"]
    assert by_label[("NPU 1", "HCCL", "Plane 3 (4)")] == ["Notify_Wait"]
    assert by_label[("NPU 0", "HCCL", "Group 0 Communication")] == ["hcom_allReduce__1_0_1"]


def test_an_msprof_db_in_a_prof_dir_opens_unless_its_json_is_there(tmp_path: Path) -> None:
    prof = tmp_path / "PROF_000001_20250101120000000_ABCDEFGHIJKLMNOP"
    device_side = {k: v for k, v in TABLES.items() if k not in (
        "PYTORCH_API", "CONNECTION_IDS", "STEP_TIME", "MEMORY_RECORD", "OP_MEMORY")}
    write_db(prof / "msprof_20250101120500.db", device_side)
    write_db(prof / "msprof_20250101120400.db", device_side)  # an older export
    layout = discover(str(tmp_path))
    assert layout.layouts == ["msprof (CANN 8 msprof_*.db)"]
    assert [os.path.basename(t.path) for t in layout.timelines] == ["msprof_20250101120500.db"]
    assert dict(layout.skipped)[str(prof / "msprof_20250101120400.db")] == (
        "an older export of the same timeline")
    index = _load(tmp_path)
    assert set(slice_names(index)) >= {
        "aclnnMuls_MulAiCore_Mul", "Node@launch", "hcom_allReduce__1_0_1"}
    out = prof / "mindstudio_profiler_output"
    out.mkdir()
    (out / "msprof_20250101120500.json").write_text(
        '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"1700000000000000.000","dur":1}]')
    layout = discover(str(tmp_path))
    assert [os.path.basename(t.path) for t in layout.timelines] == ["msprof_20250101120500.json"]
    assert "msprof_*.json timeline of this PROF dir" in dict(layout.skipped)[
        str(prof / "msprof_20250101120500.db")]


def test_a_lone_database_file_opens_as_its_folder(tmp_path: Path) -> None:
    db = write_rank(tmp_path)
    from_file = load_trace(str(db), use_cache=False)
    from_folder = load_trace(str(db.parent), use_cache=False)
    assert from_file.n_slices == from_folder.n_slices > 0
    assert from_file.summary()["events"] == from_folder.summary()["events"]
    other = write_db(tmp_path / "notes.db", {"notes": ("text TEXT", [("hello",)])})
    with pytest.raises(NotATraceError, match="notes.db is a SQLite database"):
        load_trace(str(other), use_cache=False)
