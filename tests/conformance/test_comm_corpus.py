"""Conformance of the communication question on torch_npu_2rank/text_level1 and db_level1
(one two-rank job captured twice, as text and as SQLite) and ascend/torch_npu_rank_0 (an
older torch_npu export with p2p ops): every figure agrees with the file's own, and the two
captures name the same collectives and move the same bytes.

Runs only where ../shared/corpus exists.
"""

from __future__ import annotations

import json
import re
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from proftui.core.analysis.comm import communication, ratio, transport_stats
from proftui.core.load.comm_sources import profile_entries, read_sources

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
TEXT, DB = "torch_npu_2rank/text_level1", "torch_npu_2rank/db_level1"
OLD = "ascend/torch_npu_rank_0"
RANKS = {"rank 0": "rank0_ascend_pt", "rank 1": "rank1_ascend_pt"}


def _read(folder: str):
    data, unused = read_sources(profile_entries(str(CORPUS / folder)))
    assert not unused and all(not d.error and not d.problems for d in data)
    return data


def _ns(ms) -> int:
    return int((Decimal(str(ms)) * 1_000_000).to_integral_value())


def _output(folder: str, rank: str) -> Path:
    return CORPUS / folder / (RANKS[rank] if rank else "") / "ASCEND_PROFILER_OUTPUT"


@pytest.mark.parametrize("folder", [TEXT, OLD])
def test_sums_agree_with_the_files_total_op_info(folder: str) -> None:
    data = _read(folder)
    assert [d.rank for d in data] == (list(RANKS) if folder == TEXT else [""])
    for d in data:
        raw = json.loads((_output(folder, d.rank) / "communication.json").read_text())
        for label, kinds in raw.items():
            for kind, ops in kinds.items():
                if not ops:
                    continue
                mine = [c for c in d.collectives if f"step{c.step}" == label and c.kind == kind]
                assert sorted(c.name for c in mine) == sorted(
                    k.split("@")[0] for k in ops if k != "Total Op Info")
                total = ops["Total Op Info"]
                times = total["Communication Time Info"]
                for key, attr in (("Elapse", "elapse"), ("Transit", "transit"),
                                  ("Wait", "wait"), ("Synchronization", "sync"),
                                  ("Idle", "idle")):
                    summed = sum(getattr(c, f"{attr}_ns") for c in mine)
                    # each op's ms rounded to the ns: within one ns an op of the file's total
                    assert abs(summed - _ns(times[f"{key} Time(ms)"])) <= len(mine)
                wait = sum(c.wait_ns for c in mine)
                sync = sum(c.sync_ns for c in mine)
                transit = sum(c.transit_ns for c in mine)
                assert round(ratio(wait, transit) or 0, 4) == times["Wait Time Ratio"]
                assert round(ratio(sync, transit) or 0, 4) == times[
                    "Synchronization Time Ratio"]
                stats = {t.transport: t for t in transport_stats(mine)}
                for transport, info in total["Communication Bandwidth Info"].items():
                    size = int(Decimal(str(info["Transit Size(MB)"])) * 1_000_000)
                    stat = stats.get(transport)
                    if not size:
                        assert stat is None or stat.size_bytes == 0
                        continue
                    assert abs(stat.size_bytes - size) <= len(mine)
                    assert abs(stat.time_ns - _ns(info["Transit Time(ms)"])) <= len(mine)
                    assert stat.packets == sum(n for n, _ in info["Size Distribution"].values())


@pytest.mark.parametrize("folder", [TEXT, DB, OLD])
def test_each_ops_ratios_bandwidth_and_large_packets_agree(folder: str) -> None:
    report = communication(_read(folder))
    assert report.collectives
    for stat in report.collectives:
        c = stat.op
        for t, mine in zip(c.transports, stat.transports):
            assert t.transport == mine.transport
            if t.bandwidth_gbps and mine.bandwidth_gbps is not None:
                assert abs(round(mine.bandwidth_gbps, 4) - t.bandwidth_gbps) <= 1.5e-4
            if mine.packets:  # msprof's threshold: 32 MB on HCCS, PCIE, SIO; 0.5 MB on RDMA
                assert round(mine.large_packet_ratio or 0, 4) == t.large_packet_ratio
    if folder != DB:  # the text gives the ratios (the SQLite export does not store them)
        for d in _read(folder):
            raw = json.loads((_output(folder, d.rank) / "communication.json").read_text())
            info = {k.split("@")[0]: v["Communication Time Info"] for kinds in raw.values()
                    for ops in kinds.values() for k, v in ops.items()}
            for stat in (s for s in report.collectives if s.rank == d.rank):
                times = info[stat.op.name]
                assert round(stat.wait_ratio or 0, 4) == times["Wait Time Ratio"]
                assert round(stat.sync_ratio or 0, 4) == times["Synchronization Time Ratio"]


@pytest.mark.parametrize("folder", [TEXT, DB])
def test_the_matrix_totals_move_what_the_transports_moved(folder: str) -> None:
    report = communication(_read(folder))
    assert not report.flags  # a healthy job: every HCCS link within 3.1 % of the median
    for rank in report.ranks:
        links = [x for x in report.links if x.rank == rank.rank and x.transport == "HCCS"]
        assert len(links) == 7 and {x.src for x in links} == {rank.rank[-1]}
        hccs = next(t for t in rank.transports if t.transport == "HCCS")
        assert sum(x.size_bytes for x in links) == hccs.size_bytes == 427_596_096
        assert abs(sum(x.time_ns for x in links) - hccs.time_ns) <= 8
        for x in links:
            assert x.peers == 14 and 0.968 < x.bandwidth_gbps / x.peer_median_gbps < 1.025


def test_the_db_reads_its_tables_figures() -> None:
    for d in _read(DB):
        path = _output(DB, d.rank) / "analysis.db"
        conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        rows = conn.execute("SELECT hccl_op_name, transport_type, transit_size, count "
                            "FROM CommAnalyzerBandwidth").fetchall()
        n_matrix = conn.execute("SELECT count(*) FROM CommAnalyzerMatrix").fetchone()[0]
        conn.close()
        mine = {(c.name, t.transport): t for c in d.collectives for t in c.transports}
        assert {(op, tt) for op, tt, _, _ in rows} == set(mine)
        for op, transport, size, count in rows:
            t = mine[(op, transport)]
            assert t.size_bytes == round(Decimal(repr(size)) * 1_000_000)
            assert sum(p.count for p in t.packets) == sum(
                n for o, tt, _, n in rows if (o, tt) == (op, transport))
        assert len(d.links) == n_matrix


def _normal(name: str, group: str) -> str:
    """hcom_allReduce__586_0_1 of group ...586 as hcom_allReduce__G_0_1: the number after
    the double underscore is the last three digits of the group's hash."""
    found = re.match(r"^(hcom_\w+?)__(\d+)_(\d+_\d+)$", name)
    assert found and group.endswith(found.group(2)), (name, group)
    return f"{found.group(1)}__G_{found.group(3)}"


def test_the_text_and_db_captures_name_the_same_collectives() -> None:
    text, db = _read(TEXT), _read(DB)
    assert [d.rank for d in text] == [d.rank for d in db] == list(RANKS)
    for a, b in zip(text, db):
        mine = [[(c.step, c.kind, _normal(c.name, c.group)) for c in d.collectives]
                for d in (a, b)]
        assert mine[0] == mine[1] and len(mine[0]) == 4
        # the same job: each op moved the same bytes in the same packets, in either capture
        for x, y in zip(a.collectives, b.collectives):
            assert [(t.transport, t.size_bytes, [(p.size_bytes, p.count) for p in t.packets])
                    for t in x.transports] == [
                (t.transport, t.size_bytes, [(p.size_bytes, p.count) for p in t.packets])
                for t in y.transports]
        # the per-type totals (the samples are the ops of the best, middle ... bandwidth,
        # which differ between captures)
        totals = [[(x.op_type, x.src, x.dst, x.transport, x.size_bytes) for x in d.links
                   if x.sample == "total"] for d in (a, b)]
        assert totals[0] == totals[1] and len(totals[0]) == 8
