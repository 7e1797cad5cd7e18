"""Conformance of the cluster question on torch_npu_2rank/text_level1 (two ranks, one step):
each rank's step numbers equal its step_trace_time.csv, and its collectives, matched across
the two ranks, are those of its kernel_details.csv.

Runs only where ../shared/corpus exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.analysis.cluster import cluster
from proftui.core.analysis.overview import read_overview
from proftui.core.cache.tables import read_table

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
TEXT_2RANK = "torch_npu_2rank/text_level1"
RANKS = {"rank 0": "rank0_ascend_pt", "rank 1": "rank1_ascend_pt"}
# step_trace_time.csv column (µs) -> the cluster's step field (ns)
COLUMNS = {"Computing": "compute_ns", "Communication(Not Overlapped)": "comm_exposed_ns",
           "Free": "free_ns"}
TOLERANCE_NS = 20  # the CSVs' µs with three decimals, rounded


@pytest.fixture(scope="module")
def found():
    index = load_trace(str(CORPUS / TEXT_2RANK), use_cache=False)
    _, tables, iterations = read_overview(index)
    return cluster(index, iterations, tables)


def _output(rank: str) -> Path:
    return CORPUS / TEXT_2RANK / RANKS[rank] / "ASCEND_PROFILER_OUTPUT"


def test_each_ranks_steps_equal_its_step_trace_time_csv(found) -> None:
    assert [r.rank for r in found.ranks] == list(RANKS)
    for rank in found.ranks:
        table = read_table(str(_output(rank.rank) / "step_trace_time.csv"), "step_trace_time")
        events = json.loads((_output(rank.rank) / "trace_view.json").read_text())
        for step in rank.steps:
            row = list(table.find("Step").values).index(step.iteration)
            for column, key in COLUMNS.items():
                theirs = float(table.find(column).values[row]) * 1000
                assert abs(getattr(step, key) - theirs) <= TOLERANCE_NS, (rank.rank, column)
            # the step itself: its ProfilerStep annotation, which the CSV does not hold
            (annotation,) = [e for e in events if e.get("name") == f"ProfilerStep#"
                             f"{step.iteration}"]
            assert abs(step.step_ns - float(annotation["dur"]) * 1000) <= TOLERANCE_NS
        assert [s.iteration for s in rank.steps] == [50] and rank.median["step_ns"] == \
            rank.steps[0].step_ns
    # not by luck: the ranks differ, and the slowest is the longer step
    assert found.slowest == ("rank 0", 50, 155_985_800)
    assert found.spread == pytest.approx((155_985_800 - 153_888_390) / 154_937_095)


def test_the_collectives_match_across_the_two_ranks(found) -> None:
    c = found.collectives
    assert c.matched_by == "hccl_name"
    assert c.count == {"rank 0": 4, "rank 1": 4} and not c.unmatched
    assert sorted(i.name for i in c.instances) == [f"hcom_allReduce__586_{n}_1"
                                                   for n in range(4)]
    assert {i.group for i in c.instances} == {"586"} and {i.iteration for i in c.instances} \
        == {50}
    # each rank's start of each instance is its kernel_details.csv's (HCCL rows)
    for rank in RANKS:
        table = read_table(str(_output(rank) / "kernel_details.csv"), "kernel_details")
        starts = {str(n): int(s) for n, s in zip(table.find("Name").values,
                                                 table.find("Start Time(us)").values)
                  if str(n).startswith("hcom_")}
        assert len(starts) == 4
        for inst in c.instances:
            assert abs(inst.per_rank[rank].start_ns - starts[inst.name]) <= TOLERANCE_NS
    first = c.instances[0]  # the largest skew: rank 1 reaches the first all-reduce late
    assert (first.name, first.last_rank, first.skew_ns) == ("hcom_allReduce__586_0_1",
                                                            "rank 1", 5_607_716)
    # HCCL's own count of rank 0's wait there (communication.json's Synchronization Time,
    # from its notify waits) is within 1 % of the arrival skew
    comm = json.loads((_output("rank 0") / "communication.json").read_text())
    sync_ms = [v["Communication Time Info"]["Synchronization Time(ms)"]
               for k, v in comm["step50"]["collective"].items()
               if k.startswith("hcom_allReduce__586_0_1@")]
    assert first.per_rank["rank 0"].wait_ns == pytest.approx(sync_ms[0] * 1e6, rel=0.01)
    assert found.last_arrivals == {"rank 0": 3, "rank 1": 1}
    assert found.waits_for == {"rank 0": {"rank 1": 5_607_716}, "rank 1": {"rank 0": 28_828}}
