"""Conformance of memory: the peaks `proftui memory` finds equal the highest rows of the
profiler's own memory_record.csv and MEMORY_RECORD, its top allocators equal operator_memory
summed by name, and the text and SQLite captures of one job give the same counter series.

Runs only where ../shared/corpus exists. Folders checked: torch_npu_2rank/text_level1
(rank{0,1}_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv, npu_module_mem.csv,
operator_memory.csv) and torch_npu_2rank/db_level1 (ascend_pytorch_profiler_N.db: MEMORY_RECORD,
NPU_MODULE_MEM, OP_MEMORY; rank 0's with the -wal a reader left, read here through a copy so
that SQLite applies it). The expected values are computed here from the rows, not by proftui.
"""

from __future__ import annotations

import csv
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.analysis.memory import memory
from proftui.core.analysis.overview import read_overview

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
TEXT = CORPUS / "torch_npu_2rank" / "text_level1"
DB = CORPUS / "torch_npu_2rank" / "db_level1"
RANKS = {"rank 0": "rank0_ascend_pt", "rank 1": "rank1_ascend_pt"}
MB = 1 << 20


@pytest.fixture(scope="module")
def reports():
    out = {}
    for name, path in (("text", TEXT), ("db", DB)):
        index = load_trace(str(path), use_cache=False)
        _, tables, _ = read_overview(index)
        out[name] = (index, memory(index, tables))
    return out


def _peaks(report) -> dict[tuple[str, str, str], tuple[int, int]]:
    return {(p.group, p.component, p.measure): (p.bytes, p.at_ns) for p in report.peaks}


def _highest(rows: list[tuple[str, int, int | None, int | None]]
             ) -> dict[tuple[str, str], tuple[int, int]]:
    """Per (component, measure): the largest value and the earliest time it was reached,
    from (component, ts ns, allocated bytes, reserved bytes) rows."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for component, ts, allocated, reserved in rows:
        for measure, value in (("allocated", allocated), ("reserved", reserved)):
            if value is None:
                continue
            best = out.get((component, measure))
            if best is None or value > best[0] or (value == best[0] and ts < best[1]):
                out[(component, measure)] = (value, ts)
    return out


def _us_text_to_ns(text: str) -> int:
    return int(Decimal(text.strip()) * 1000)


def _mb_to_bytes(text: str) -> int | None:
    return None if not text.strip() else int(Decimal(text) * MB)


def test_text_peaks_are_the_highest_memory_record_rows(reports) -> None:
    found = _peaks(reports["text"][1])
    expected = {}
    for rank, folder in RANKS.items():
        path = TEXT / folder / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
        with open(path, newline="", encoding="utf-8") as f:
            rows = [(r["Component"], _us_text_to_ns(r["Timestamp(us)"]),
                     _mb_to_bytes(r["Total Allocated(MB)"]), _mb_to_bytes(r["Total Reserved(MB)"]))
                    for r in csv.DictReader(f) if r["Component"] != "APP"]
        expected.update({(rank, c, m): v for (c, m), v in _highest(rows).items()})
    assert found == expected
    assert found[("rank 0", "PTA", "allocated")][0] == 1245688832  # 1187.98 MB
    assert len(found) == 12  # 2 ranks x PTA, GE, PTA+GE x allocated, reserved


def test_db_peaks_are_the_highest_memory_record_rows(reports, tmp_path) -> None:
    found = _peaks(reports["db"][1])
    expected = {}
    for rank, folder in RANKS.items():
        out = DB / folder / "ASCEND_PROFILER_OUTPUT"
        n = folder[4]
        for source in out.glob(f"ascend_pytorch_profiler_{n}.db*"):  # with its -wal
            shutil.copy(source, tmp_path / source.name)
        conn = sqlite3.connect(tmp_path / f"ascend_pytorch_profiler_{n}.db")
        try:
            rows = conn.execute(
                "SELECT s.value, m.timestamp, m.totalAllocated, m.totalReserved "
                "FROM MEMORY_RECORD m JOIN STRING_IDS s ON s.id = m.component").fetchall()
        finally:
            conn.close()
        expected.update({(rank, c, m): v for (c, m), v in _highest(rows).items()})
    assert found == expected


def test_both_captures_give_the_same_series_and_close_peaks(reports) -> None:
    def named(index):
        a, s = index.arrays, index.strings
        process = a["tracks.process"][a["counters.series_track"]]
        return {(s[a["processes.group"][p]], s[a["processes.name"][p]],
                 s[a["processes.labels"][p]], s[n])
                for p, n in zip(process.tolist(), a["counters.series_name"].tolist())
                if s[a["processes.name"][p]] in ("Memory", "NPU Module Memory", "NPU MEM")}

    text, db = named(reports["text"][0]), named(reports["db"][0])
    assert text == db
    assert ("rank 1", "Memory", "CPU", "PTA+GE Total Allocated(MB)") in text
    assert ("rank 0", "NPU Module Memory", "NPU", "HCCL Total Reserved(MB)") in text
    peaks_text, peaks_db = _peaks(reports["text"][1]), _peaks(reports["db"][1])
    assert peaks_text.keys() == peaks_db.keys()
    for key, (value, _) in peaks_text.items():  # two captures of one job: close, not equal
        assert abs(value - peaks_db[key][0]) <= 0.1 * value, key
    for _, report in reports.values():  # the allocator's peak falls in a torch op
        for p in report.peaks:
            if (p.component, p.measure) == ("PTA", "allocated"):
                assert p.host_op is not None and p.host_op.name.startswith("aten::"), p


def test_top_allocators_are_operator_memory_summed_by_name(reports) -> None:
    expected = []
    for rank, folder in RANKS.items():
        path = TEXT / folder / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
        totals: dict[str, list[int]] = {}
        with open(path, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                size = int(Decimal(r["Size(KB)"]) * 1024)
                if size > 0:
                    entry = totals.setdefault(r["Name"], [0, 0, 0])
                    entry[0] += 1
                    entry[1] += size
                    entry[2] = max(entry[2], size)
        expected += sorted(((rank, n, c, t, m) for n, (c, t, m) in totals.items()),
                           key=lambda e: (-e[3], e[1]))
    found = [(o.group, o.name, o.count, o.total_bytes, o.max_bytes)
             for o in reports["text"][1].top_ops]
    assert found == expected and found[0][1] == "aten::mm"
