"""The ranks' communication in the cluster view and msprof-analyze's cluster output compared
(see cluster_output_inputs for the figures and their hand computation)."""

from __future__ import annotations

import json

from cluster_output_inputs import GROUP, RANK_MATRIX, link, write_cluster_output, write_ranks

from proftui.core.analysis.cluster import cluster
from proftui.core.analysis.cluster_comm import differs, link_matrix, read_communication
from proftui.core.analysis.comm import communication
from proftui.core.analysis.overview import read_overview
from proftui.core.importers.cluster_output import cluster_files, read_cluster_output
from proftui.core.load.comm_sources import profile_entries, read_sources
from proftui.core.load.loader import load_trace


def _report(root):
    return communication(*read_sources(profile_entries(str(root))))


def test_link_matrix_maps_local_ids_and_flags_the_slow_link(tmp_path) -> None:
    cells = link_matrix(_report(write_ranks(tmp_path)).links)
    got = [(c.step, c.src, c.dst, c.transport, c.size_bytes, c.time_ns, c.bandwidth_gbps,
            c.median_gbps, c.peers, c.slow) for c in cells]
    assert got == [
        (1, "rank 0", "rank 0", "LOCAL", 40_000_000, 100_000, 400.0, None, 0, False),
        # allreduce and allgather summed: 20 MB in 1 ms
        (1, "rank 0", "rank 1", "HCCS", 20_000_000, 1_000_000, 20.0, 20.0, 3, False),
        (1, "rank 1", "rank 0", "HCCS", 10_000_000, 1_000_000, 10.0, 20.0, 3, True),
        (1, "rank 1", "rank 1", "LOCAL", 40_000_000, 100_000, 400.0, None, 0, False),
        (1, "rank 1", "local 2", "HCCS", 10_000_000, 500_000, 20.0, 20.0, 3, False)]


def test_a_link_that_moved_too_little_to_judge_is_counted_not_flagged(tmp_path) -> None:
    root = write_ranks(tmp_path)
    matrix = dict(RANK_MATRIX[1])  # rank 1 also broadcasts 96 bytes to local 3, in 1.7 µs
    matrix[f"broadcast-total@{GROUP}"] = {"1-3": link("HCCS", 0.000096, 0.0017, 0.0565)}
    (root / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json"
     ).write_text(json.dumps({"step1": {"p2p": {}, "collective": matrix}}))
    cells = {(c.src, c.dst): c for c in link_matrix(_report(root).links)}
    tiny = cells[("rank 1", "local 3")]
    assert (tiny.judged, tiny.slow, tiny.median_gbps, tiny.peers) == (False, False, 20.0, 3)
    # the other links, and the one slow one, are as before: the tiny link is no one's peer
    assert [(k, c.slow, c.peers) for k, c in cells.items() if c.transport == "HCCS"
            and c.judged] == [(("rank 0", "rank 1"), False, 3), (("rank 1", "rank 0"), True, 3),
                              (("rank 1", "local 2"), False, 3)]
    from proftui.core.analysis.cluster_comm import ClusterComm

    assert ClusterComm([], list(cells.values())).to_json()["links_not_judged"] == 1


def test_cluster_output_is_read_with_msprof_analyze_keys(tmp_path) -> None:
    out = write_cluster_output(tmp_path)
    files = {p.name.removesuffix(".json"): str(p) for p in out.glob("*.json")}
    found = read_cluster_output(files)
    assert found.errors == () and found.problems == {}
    assert found.ops == 2 and found.groups == {"collective": [[0, 1]], "p2p": []}
    totals = {t.rank: t.total for t in found.totals}
    assert totals[0].transit_ns == 20_000 and totals[0].wait_ns == 10_000
    assert [(t.transport, t.size_bytes, t.time_ns) for t in totals[1].transports] == [
        ("HCCS", 40_000_000, 4_000_000), ("SDMA", 40_000_000, 4_000_000)]
    totals_links = sorted((x.op_type, x.src, x.dst, x.time_ns) for x in found.links
                          if x.sample == "total")
    assert totals_links == [("allgather", "0", "1", 500_000), ("allreduce", "0", "0", 100_000),
                            ("allreduce", "0", "1", 500_000), ("allreduce", "1", "0", 1_000_000),
                            ("allreduce", "1", "1", 100_000)]
    assert {x.group for x in found.links} == {GROUP}


def _compared(root):
    index = load_trace(str(root), use_cache=False)
    _, tables, iterations = read_overview(index)
    found = cluster(index, iterations, tables)
    return read_communication(index.meta["profile"]["comm"], tables, found)


def test_profiler_figures_agree_with_proftuis(tmp_path) -> None:
    write_ranks(tmp_path)
    write_cluster_output(tmp_path)
    comm, profiler = _compared(tmp_path)
    assert comm is not None and sum(c.slow for c in comm.matrix) == 1
    assert profiler is not None and profiler.differing == []
    by = {(c.table, c.key, c.figure): c for c in profiler.checks}
    # 3 steps x 2 ranks x 3 figures; 2 ranks x (5 times + 2 transports x 3); 5 links x 3
    assert [sum(c.table == t for c in profiler.checks)
            for t in ("step_trace", "communication", "matrix")] == [18, 22, 15]
    free = by[("step_trace", "rank 1, step 2", "Free")]
    assert (free.profiler, free.proftui) == (50_000, 50_000)
    exposed = by[("step_trace", "rank 0, step 1", "Communication(Not Overlapped)")]
    assert (exposed.profiler, exposed.proftui) == (30_000, 30_000)
    speed = by[("communication", "rank 1, step 1, HCCS", "Bandwidth")]
    assert (speed.profiler, speed.proftui) == (10.0, 10.0)
    link = by[("matrix", "step 1, allgather, 0 -> 1", "Transit Size")]
    assert (link.profiler, link.proftui) == (10_000_000, 10_000_000)


def test_profiler_figures_that_differ_are_flagged(tmp_path) -> None:
    write_ranks(tmp_path)
    write_cluster_output(tmp_path, free_us_rank1=52.0, total_transit_ms_rank1=0.03)
    _, profiler = _compared(tmp_path)
    got = [(c.table, c.key, c.figure, c.profiler, c.proftui) for c in profiler.differing]
    assert got == [("step_trace", f"rank 1, step {n}", "Free", 52_000, 50_000)
                   for n in (1, 2, 3)] + [
        ("communication", "rank 1, step 1", "Transit Time", 30_000, 20_000)]


def test_no_cluster_output_no_comparison(tmp_path) -> None:
    write_ranks(tmp_path)
    comm, profiler = _compared(tmp_path)
    assert profiler is None
    assert [(r.rank, t.transport, t.bandwidth_gbps, t.peer_median_gbps, t.slow)
            for r in comm.ranks for t in r.transports] == [
        ("rank 0", "HCCS", 20.0, 15.0, False), ("rank 0", "SDMA", 20.0, 15.0, False),
        ("rank 1", "HCCS", 10.0, 15.0, True), ("rank 1", "SDMA", 10.0, 15.0, True)]
    assert cluster_files(profile_entries(str(tmp_path))) == {}


def test_differs_needs_both_the_share_and_the_floor() -> None:
    assert not differs(100_000_000, 100_050_000, "ns")  # 0.05 %
    assert differs(100_000_000, 100_200_000, "ns")  # 0.2 %
    assert not differs(500, 900, "ns")  # 80 % but under 1 µs
    assert differs(None, 5, "bytes") and not differs(None, None, "GB/s")
