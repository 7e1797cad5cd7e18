"""Conformance of the Ascend SQLite export: the same job's db export opens as its text export
does, and its breakdown equals the profiler's own analysis.db StepTraceTime.

Runs only where ../shared/corpus exists. Folders checked: torch_npu_2rank/db_level1 (both
ranks, ascend_pytorch_profiler_N.db and analysis.db; rank 0's db has the -wal and -shm files
a reader left) against torch_npu_2rank/text_level1 (the same job captured a second time as
text: not the same events, so counts may differ by a few).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from proftui.core import load_trace
from proftui.core.analysis.breakdown import breakdown
from proftui.core.ops.iterations import find_iterations
from proftui.core.ops.roles import roles

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
DB = "torch_npu_2rank/db_level1"
TEXT = "torch_npu_2rank/text_level1"
RANKS = {"rank 0": "rank0_ascend_pt", "rank 1": "rank1_ascend_pt"}
# analysis.db StepTraceTime column -> breakdown field (device), µs
COLUMNS = {"computing": "compute_ns", "communication_not_overlapped": "comm_exposed_ns",
           "overlapped": "overlapped_ns", "communication": "comm_ns", "free": "free_ns",
           "stage": "span_ns", "preparing": "prepare_ns"}


def _output(rank: str) -> Path:
    return CORPUS / DB / RANKS[rank] / "ASCEND_PROFILER_OUTPUT"


def _query(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def db_index():
    return load_trace(str(CORPUS / DB), use_cache=False)


@pytest.fixture(scope="module")
def text_index():
    return load_trace(str(CORPUS / TEXT), use_cache=False)


def test_breakdown_from_tasks_equals_step_trace_time(db_index) -> None:
    """From TASK and the communication tables alone (no table given to the breakdown; the
    Overlap Analysis track is a derived view it never counts): within 2 %."""
    found = breakdown(db_index, find_iterations(db_index, []))
    assert {b.group for b in found.steps} == set(RANKS)
    for step in found.steps:
        (row,) = _query(_output(step.group) / "analysis.db",
                        f"SELECT {', '.join(COLUMNS)} FROM StepTraceTime WHERE step = ?",
                        (str(step.iteration),))
        for (column, key), theirs_us in zip(COLUMNS.items(), row):
            mine_us = step.device[key] / 1000
            assert abs(mine_us - theirs_us) <= max(2.0, 0.02 * abs(theirs_us)), (
                step.group, column, mine_us, theirs_us)
        assert step.device["comm_exposed_ns"] > 0.6 * step.device["span_ns"]  # not by luck


def test_compute_task_counts_per_name_equal_compute_task_info(db_index) -> None:
    a, s = db_index.arrays, db_index.strings
    for rank in RANKS:
        db = _output(rank) / next(p.name for p in _output(rank).glob("ascend_pytorch_*.db"))
        theirs = dict(_query(db, "SELECT s.value, count(*) FROM COMPUTE_TASK_INFO c "
                                 "JOIN STRING_IDS s ON s.id = c.name GROUP BY s.value"))
        procs = [p for p in range(len(a["processes.name"]))
                 if s[a["processes.name"][p]] == "Ascend Hardware"
                 and s[a["processes.group"][p]] == rank]
        rows = np.isin(a["tracks.process"][a["slices.track"]], procs)
        mine = Counter(s[n] for n in a["slices.name"][rows].tolist())
        assert {name: mine[name] for name in theirs} == theirs


def test_the_db_and_the_text_export_agree(db_index, text_index) -> None:
    """Same op names per process, same device streams and host threads, same step; counts
    per name within a few (the two exports are two captures of the job)."""
    def ops(index) -> Counter:
        a, s = index.arrays, index.strings
        out: Counter = Counter()
        for i in np.flatnonzero(roles(index).op).tolist():
            p = a["tracks.process"][a["slices.track"][i]]
            # collectives carry a per-capture id (hcom_allReduce__586_0_1); addresses too
            name = re.sub(r"__\d+_", "__N_", re.sub(r"0x[0-9a-f]+", "0x", index.slice_name(i)))
            out[(s[a["processes.group"][p]], s[a["processes.name"][p]], name)] += 1
        return out

    def tracks(index) -> set:
        a, s = index.arrays, index.strings
        out = set()
        for t in np.flatnonzero(a["tracks.slice_count"] > 0).tolist():
            p = a["tracks.process"][t]
            process = s[a["processes.name"][p]]
            label = index.track_label(t)
            if process in ("Python", "CANN"):  # threads: the ids differ between captures
                label = f"{a['tracks.slice_count'][t] // 100} hundred slices"
            out.add((s[a["processes.group"][p]], process, label))
        return out

    db_ops, text_ops = ops(db_index), ops(text_index)
    assert set(db_ops) == set(text_ops)
    assert all(abs(db_ops[k] - text_ops[k]) <= 3 for k in db_ops)
    only_text = tracks(text_index) - tracks(db_index)
    # rank 1's db has no OVERLAP_ANALYSIS table (only rank 0's was opened in MindStudio
    # Insight, which adds it): its Overlap Analysis threads are the one difference
    assert only_text == {("rank 1", "Overlap Analysis", t) for t in (
        "Computing (0)", "Communication (1)", "Communication(Not Overlapped) (2)", "Free (3)")}
    assert tracks(db_index) - tracks(text_index) == set()
    steps = {(it.group, it.number) for it in find_iterations(db_index).items}
    assert steps == {(it.group, it.number) for it in find_iterations(text_index).items}
    assert steps == {("rank 0", 50), ("rank 1", 50)}


def test_reading_the_corpus_changes_none_of_its_files(db_index) -> None:
    before = {p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
              for p in sorted((CORPUS / DB).rglob("*")) if p.is_file()}
    index = load_trace(str(CORPUS / DB), use_cache=False)
    assert index.meta["sources"][0]["sqlite"]["opened"] == "immutable"  # its -wal is empty
    after = {p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
             for p in sorted((CORPUS / DB).rglob("*")) if p.is_file()}
    assert after == before
