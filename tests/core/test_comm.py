"""Communication summaries: communication.json / communication_matrix.json and analysis.db's
tables read into the same records (exact ns and bytes), the damage counted, and the analysis's
ratios, transports, links and flags on hand-computed figures (see comm_helpers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ascend_db_helpers import write_rank
from comm_helpers import (
    AG,
    AR,
    GROUP,
    analysis_tables,
    comm_json,
    link,
    matrix_json,
    write_analysis_db,
    write_text,
)

from proftui.core.analysis.comm import communication, find_on_timeline, ratio
from proftui.core.discover.profile import discover
from proftui.core.importers.ascend_comm import (
    Collective,
    Link,
    PacketSize,
    Transport,
    read_text,
)
from proftui.core.importers.ascend_db.comm import read_db
from proftui.core.load.comm_sources import profile_entries, read_sources

AR_RECORD = Collective(
    3, "collective", AR, GROUP, 1_000_000_000_000_500, 2_500_000, 1_000_001, 250_000,
    200_000, 1_250_000, (
        Transport("HCCS", 40_000_000, 2_000_000, 20.0, 0.5, (
            PacketSize(7_500_000, 1, 500_000), PacketSize(32_500_000, 1, 1_500_000))),
        Transport("SDMA", 40_000_000, 2_000_000, 20.0, 0.0, ())))
AG_RECORD = Collective(
    3, "collective", AG, GROUP, 1_000_000_003_000_000, 1_000_000, 500_000, None, 0, 500_000,
    (Transport("RDMA", 600_000, 100_000, 6.0, 0.0, (PacketSize(300_000, 2, 100_000),)),))


def _link(dst: str, transport: str, size: int, ns: int, gbps: float, sample: str = "total",
          op: str = "") -> Link:
    return Link(3, "collective", "allreduce", sample, GROUP, "0", dst, transport, size, ns,
                gbps, op)


LINKS = (_link("0", "LOCAL", 40_000_000, 100_000, 400.0),
         _link("1", "HCCS", 10_000_000, 500_000, 20.0),
         _link("2", "HCCS", 10_000_000, 500_000, 20.0),
         _link("3", "HCCS", 10_000_000, 1_000_000, 10.0),
         _link("1", "HCCS", 10_000_000, 500_000, 20.0, "top1", AR))


def test_the_text_export_reads_to_exact_records(tmp_path: Path) -> None:
    found = read_text("rank 0", str(write_text(tmp_path)),
                      str(tmp_path / "communication_matrix.json"))
    assert found.error == "" and found.form == "text"
    # the padding transports (RDMA and PCIE of zeros) and "Total Op Info" are left out
    assert found.collectives == (AR_RECORD, AG_RECORD)
    assert found.links == LINKS
    assert found.problems == {"comm_bad_value": 1}  # AG's wait "n/a"


def test_the_sqlite_export_reads_to_the_same_records(tmp_path: Path) -> None:
    found = read_db("rank 0", str(write_analysis_db(tmp_path / "analysis.db")))
    assert found.error == "" and found.form == "db"
    assert found.collectives == (AR_RECORD, AG_RECORD)
    assert found.links == LINKS
    assert found.problems == {"comm_bad_value": 1}


def test_damaged_figures_are_counted_and_left_out(tmp_path: Path) -> None:
    data = comm_json(wait=-0.5)
    ops = data["step3"]["collective"]
    ops[f"{AR}@{GROUP}"]["Communication Time Info"]["Elapse Time(ms)"] = True
    ops[f"{AR}@{GROUP}"]["Communication Bandwidth Info"]["HCCS"]["Size Distribution"] = {
        "big": [1, 1.0], "7.5": [1, 0.5], "32.5": [1, 1.5]}
    ops["broken@1"] = ["not", "an", "object"]
    data["step3"]["unknown_kind"] = {"x": 1}  # ignored
    text = json.dumps(data).replace('"Idle Time(ms)": 0.5', '"Idle Time(ms)": NaN')
    found = read_text("", str(write_text(tmp_path, comm=text)), None)
    ar, ag = found.collectives
    assert ar.elapse_ns is None and ar.transit_ns == 1_000_001
    assert [p.size_bytes for p in ar.transports[0].packets] == [7_500_000, 32_500_000]
    assert ag.wait_ns is None and ag.idle_ns is None
    assert found.problems == {"comm_bad_value": 4, "comm_bad_entry": 1}


@pytest.mark.parametrize(("content", "sentence"), [
    ('{"step3": {"collective": {"a@1": {"Communication', "is not valid JSON at byte"),
    ("[1, 2]", "is not a communication summary (not a JSON object)."),
    ("", "is not valid JSON at byte 0")])
def test_a_damaged_file_gives_one_sentence(tmp_path: Path, content: str, sentence: str) -> None:
    found = read_text("", str(write_text(tmp_path, comm=content)), None)
    assert sentence in found.error and found.error.startswith("communication.json ")
    assert found.error.endswith(".") and not found.collectives


def test_a_damaged_database_gives_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "analysis.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x01" * 50)
    found = read_db("", str(path))
    assert found.error and "\n" not in found.error and not found.collectives


def test_db_tables_without_their_columns_are_counted(tmp_path: Path) -> None:
    tables = analysis_tables()
    tables["CommAnalyzerMatrix"] = ("hccl_op_name TEXT", [("x",)])
    time_sql, rows = tables["CommAnalyzerTime"]
    tables["CommAnalyzerTime"] = (time_sql, rows[:1])  # AG's bandwidth has no op now
    found = read_db("", str(write_analysis_db(tmp_path / "analysis.db", tables)))
    assert [c.name for c in found.collectives] == [AR] and not found.links
    assert found.problems == {"comm_missing_column": 1, "comm_unmatched": 1}


def test_msprof_flat_layout_and_older_distributions(tmp_path: Path) -> None:
    # msprof's own analyze output: the ops at the top, no steps; sizes as {MB: count}
    times = {"Start Timestamp(us)": 5, "Elapse Time(ms)": 1, "Transit Time(ms)": 1,
             "Wait Time(ms)": 0, "Synchronization Time(ms)": 0, "Idle Time(ms)": 0}
    rdma = {"Transit Size(MB)": 40, "Transit Time(ms)": 2, "Size Distribution": {"20": 2}}
    data = {"hcom_send__1_0@7": {"Communication Time Info": times,
                                 "Communication Bandwidth Info": {"RDMA": rdma}},
            "hcom_allReduce__1_1@7": {"Communication Time Info": times},
            "Total Op Info": {"Communication Time Info": times}}
    matrix = {"hcom_send__1_0@7": {"0-8": {"Transport Type": "RDMA", "Transit Size(MB)": 40,
                                           "Transit Time(ms)": 2}}}
    found = read_text("", str(write_text(tmp_path, comm=data, matrix=matrix)),
                      str(tmp_path / "communication_matrix.json"))
    assert [(c.step, c.kind, c.name, c.group) for c in found.collectives] == [
        (None, "collective", "hcom_allReduce__1_1", "7"), (None, "p2p", "hcom_send__1_0", "7")]
    assert found.collectives[1].transports[0].packets == (PacketSize(20_000_000, 2, None),)
    assert found.links == (Link(None, "p2p", "hcom_send__1_0", "op", "7", "0", "8", "RDMA",
                                40_000_000, 2_000_000, None),)
    report = communication([found])
    (x,) = report.links  # per-op links summed per op type
    assert (x.op_type, x.size_bytes, x.bandwidth_gbps) == ("send", 40_000_000, 20.0)
    assert not found.problems


def _report(tmp_path: Path):
    return communication([read_text("", str(write_text(tmp_path)),
                                     str(tmp_path / "communication_matrix.json"))])


def test_ratios_and_totals_per_rank_and_step(tmp_path: Path) -> None:
    report = _report(tmp_path)
    (rank,) = report.ranks
    assert (rank.step, rank.ops) == (3, 2)
    assert rank.times_ns == {"elapse": 3_500_000, "transit": 1_500_001, "wait": 250_000,
                             "sync": 200_000, "idle": 1_750_000}
    assert rank.wait_ratio == 250_000 / 1_750_001 and rank.sync_ratio == 200_000 / 1_700_001
    assert rank.moved_bytes == 40_600_000  # HCCS and RDMA; SDMA repeats HCCS
    ar, ag = report.collectives  # the longest elapse first
    assert (ar.op.name, ar.wait_ratio, ar.moved_bytes) == (AR, 250_000 / 1_250_001, 40_000_000)
    assert ag.wait_ratio is None and ag.sync_ratio == 0.0
    assert ratio(0, 0) is None


def test_transports_packets_and_small_ops(tmp_path: Path) -> None:
    (rank,) = _report(tmp_path).ranks
    stats = {t.transport: t for t in rank.transports}
    assert list(stats) == ["HCCS", "RDMA", "SDMA"]
    hccs, rdma, sdma = stats["HCCS"], stats["RDMA"], stats["SDMA"]
    assert (hccs.size_bytes, hccs.time_ns, hccs.bandwidth_gbps) == (40_000_000, 2_000_000, 20.0)
    # 32.5 MB is over HCCS's 32 MB threshold, 7.5 MB is not
    assert (hccs.packets, hccs.large_packets, hccs.large_packet_ratio) == (2, 1, 0.5)
    assert hccs.avg_packet_bytes == 20_000_000 and not hccs.small_packets
    # 0.3 MB packets are under RDMA's 0.5 MB; the one op moved 0.6 MB, under 1 MB: small
    assert (rdma.bandwidth_gbps, rdma.large_packet_ratio) == (6.0, 0.0)
    assert (rdma.ops, rdma.small_ops, rdma.small_packets) == (1, 1, True)
    assert (sdma.packets, sdma.large_packet_ratio, sdma.small_packets) == (0, None, False)
    assert not any(t.slow for t in rank.transports)  # one rank: nothing to compare with


def test_slow_links_against_their_peers(tmp_path: Path) -> None:
    report = _report(tmp_path)
    links = {(x.dst, x.transport): x for x in report.links}
    assert len(report.links) == 4  # the totals only: the top1 sample is one of their ops
    slow = links[("3", "HCCS")]
    assert (slow.bandwidth_gbps, slow.peer_median_gbps, slow.peers, slow.slow) == (
        10.0, 20.0, 3, True)
    assert not links[("1", "HCCS")].slow and not links[("0", "LOCAL")].slow
    assert links[("0", "LOCAL")].peer_median_gbps is None
    assert [(f.kind, f.title) for f in report.flags] == [
        ("slow_link", "0 -> 3 HCCS (allreduce) runs at 10.00 GB/s, 50% of the median of its "
                      "3 peers (20.00 GB/s)"),
        ("small_packets", "1 of 1 ops on RDMA moved under 1 MB each (over 20% of them)")]


def test_a_rank_slower_than_the_others_on_a_transport(tmp_path: Path) -> None:
    found = []
    for rank, hccs_ms in ((0, 2.0), (1, 4.0)):
        data = comm_json(wait=0)
        info = data["step3"]["collective"][f"{AR}@{GROUP}"]["Communication Bandwidth Info"]
        info["HCCS"]["Transit Time(ms)"] = info["SDMA"]["Transit Time(ms)"] = hccs_ms
        out = write_text(tmp_path / str(rank), comm=data, matrix=matrix_json(src=rank,
                                                                             slow_ms=0.5))
        found.append(read_text(f"rank {rank}", str(out), None))
    report = communication(found)
    slow = [(r.rank, t.transport, t.peer_median_gbps) for r in report.ranks
            for t in r.transports if t.slow]
    # 10 GB/s against the median of 20 and 10: 15; 10 < 0.8 x 15
    assert slow == [("rank 1", "HCCS", 15.0), ("rank 1", "SDMA", 15.0)]
    assert [f.title for f in report.flags if f.kind == "slow_transport"] == [
        "HCCS runs at 10.00 GB/s, 67% of the ranks' median (15.00 GB/s)",
        "SDMA runs at 10.00 GB/s, 67% of the ranks' median (15.00 GB/s)"]


def _trace_view(out: Path, names: list[str], at_us: int = 10) -> None:
    events = [{"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "HCCL"}},
              {"ph": "M", "name": "thread_name", "pid": 9, "tid": 1,
               "args": {"name": "Group 0 Communication"}}]
    events += [{"ph": "X", "name": n, "pid": 9, "tid": 1, "ts": at_us + 100 * k,
                "dur": 50}
               for k, n in enumerate(names)]
    (out / "trace_view.json").write_text(json.dumps(events))


def test_discovery_finds_each_ranks_summary(tmp_path: Path) -> None:
    for rank in (0, 1):
        out = tmp_path / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        write_text(out)
        _trace_view(out, [AR], at_us=10 + rank)  # not the same file twice
        (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    layout = discover(str(tmp_path))
    assert [(c.group, c.kind) for c in layout.comm] == [
        ("rank 0", "communication"), ("rank 0", "communication_matrix"),
        ("rank 1", "communication"), ("rank 1", "communication_matrix")]
    assert layout.groups == ["rank 0", "rank 1"]  # the timelines' groups are unchanged
    data, unused = read_sources(profile_entries(str(tmp_path)))
    assert [d.rank for d in data] == ["rank 0", "rank 1"] and not unused


def test_the_db_export_is_read_where_there_is_no_text(tmp_path: Path) -> None:
    write_rank(tmp_path, 0)
    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    (out / "analysis.db").unlink()
    write_analysis_db(out / "analysis.db", {**analysis_tables(), "StepTraceTime": (
        "step TEXT, computing NUMERIC", [("3", 1.0)])})
    (data,), unused = read_sources(profile_entries(str(tmp_path)))
    assert data.form == "db" and data.collectives == (AR_RECORD, AG_RECORD) and not unused
    write_text(out)  # a text summary beside it is preferred
    (data,), unused = read_sources(profile_entries(str(tmp_path)))
    assert data.form == "text" and unused == [(str(out / "analysis.db"),
                                               "the communication.json of this rank is read")]


def test_a_summary_file_is_read_on_its_own(tmp_path: Path) -> None:
    path = write_text(tmp_path)
    entries = profile_entries(str(tmp_path / "communication_matrix.json"))
    assert {e["kind"] for e in entries} == {"communication", "communication_matrix"}
    (data,), _ = read_sources(entries)
    assert data.source == str(path) and data.collectives == (AR_RECORD, AG_RECORD)


def test_a_collective_is_found_on_its_ranks_timeline(tmp_path: Path) -> None:
    from proftui.core import load_trace

    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    _trace_view(out, [AG, AR])
    index = load_trace(str(out.parent), use_cache=False)
    found = find_on_timeline(index, "", AR)
    assert found is not None and index.slice_name(found) == AR
    assert index.col("slices.start")[found] == 110_000
    assert find_on_timeline(index, "rank 5", AR) is None
    assert find_on_timeline(index, "", "hcom_allReduce__123_9_1") is None


def test_a_link_that_moved_too_little_to_judge_is_never_slow(tmp_path: Path) -> None:
    # As on the corpus: a 96-byte HCCS transfer takes 1.7 µs whatever the link (0.06 GB/s),
    # beside links that moved 20 MB at 19 GB/s; its time is latency, not bandwidth.
    matrix = {"step3": {"p2p": {}, "collective": {f"allgather-total@{GROUP}": {
        "0-0": link("LOCAL", 40, 0.1, 400.0),
        "0-1": link("HCCS", 20, 1.05, 19.0476), "0-2": link("HCCS", 20, 1.05, 19.0476),
        "0-3": link("HCCS", 0.000096, 0.0017, 0.0565)}}}}
    out = write_text(tmp_path, comm=comm_json(wait=0), matrix=matrix)
    report = communication([read_text("", str(out), str(tmp_path / "communication_matrix.json"))])
    links = {x.dst: x for x in report.links}
    small = links["3"]
    assert (small.judged, small.slow, small.peers) == (False, False, 2)
    assert all(links[d].judged and not links[d].slow for d in "12")
    assert links["1"].peer_median_gbps == pytest.approx(20 / 1.05)
    assert not [f for f in report.flags if f.kind == "slow_link"]
    assert report.links_not_judged == 1 and report.to_json()["links_not_judged"] == 1
    from proftui.core.analysis.comm_tables import not_judged_text, slowest_links

    assert [x.dst for x in slowest_links(report.links)] == ["1", "2"]
    assert not_judged_text(1).startswith("1 link between ranks moved under 1 MB in a step")


def test_a_transport_whose_ops_all_moved_too_little_is_never_slow(tmp_path: Path) -> None:
    found = []
    for rank, size_mb, ms in ((0, 40.0, 2.0), (1, 0.0001, 0.0017), (2, 40.0, 2.0)):
        data = comm_json(wait=0)
        info = data["step3"]["collective"][f"{AR}@{GROUP}"]["Communication Bandwidth Info"]
        for name in ("HCCS", "SDMA"):
            info[name] = {**info[name], "Transit Size(MB)": size_mb, "Transit Time(ms)": ms,
                          "Size Distribution": {}}
        out = write_text(tmp_path / str(rank), comm=data, matrix=matrix_json(src=rank))
        found.append(read_text(f"rank {rank}", str(out), None))
    report = communication(found)
    tiny = {t.transport: t for r in report.ranks if r.rank == "rank 1" for t in r.transports}
    assert not tiny["HCCS"].judged and not tiny["HCCS"].slow
    assert not [f for f in report.flags if f.kind == "slow_transport"]
