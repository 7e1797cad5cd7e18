"""The bundled samples: regenerated identically, and telling the story they are made for."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.analysis.breakdown import breakdown
from proftui.core.analysis.cluster import cluster
from proftui.core.analysis.comm import communication
from proftui.core.analysis.overview import read_overview
from proftui.core.cache.tables import read_table
from proftui.core.load.comm_sources import profile_entries, read_sources
from proftui.core.ops.iterations import find_iterations

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CLUSTER = SAMPLES / "cluster_2rank"
RANKS = {"rank 0": "rank0_ascend_pt", "rank 1": "rank1_ascend_pt"}


def _sample_module(name: str, monkeypatch):
    monkeypatch.syspath_prepend(str(SAMPLES))  # the generators import one another
    return importlib.import_module(name)


def _assert_same_files(made: Path, shipped: Path) -> None:
    mine = sorted(p.relative_to(made) for p in made.rglob("*") if p.is_file())
    theirs = sorted(p.relative_to(shipped) for p in shipped.rglob("*")
                    if p.is_file() and p.suffix in (".json", ".csv"))
    assert mine == theirs
    for rel in mine:
        assert (made / rel).read_bytes() == (shipped / rel).read_bytes(), rel


def test_samples_regenerate_identically(tmp_path, monkeypatch) -> None:
    _sample_module("make_samples", monkeypatch).write_all(tmp_path)
    _assert_same_files(tmp_path, SAMPLES)


def test_cluster_sample_regenerates_identically(tmp_path, monkeypatch) -> None:
    _sample_module("ascend_cluster", monkeypatch).cluster_2rank(tmp_path)
    _assert_same_files(tmp_path, CLUSTER)


@pytest.mark.parametrize("name", ["ascend_cann8", "ascend_old_layout", "torch_npu",
                                  "kineto_demo.pt.trace.json"])
def test_sample_story(name) -> None:
    index = load_trace(str(SAMPLES / name), use_cache=False)
    assert len(index.diagnostics) == 0
    tables = [read_table(t["path"], t["kind"]) for t in index.meta["profile"]["tables"]]
    found = find_iterations(index, tables)
    steps = 8 if name.startswith("kineto") else 6
    assert len(found.items) == steps
    slowest = max(found.items, key=lambda it: it.dur_ns)
    assert slowest.number == (6 if name.startswith("kineto") else 4)  # the starved step
    statistic = [t for t in tables if t.kind == "op_statistic"]
    if statistic:  # the AI CPU op dominates, as in the DropOutDoMask story
        assert statistic[0].find("OP Type").values[0] == "DropOutDoMask"
        assert statistic[0].find("Core Type").values[0] == "AI_CPU"


def test_diff_pair_story() -> None:
    """The before/after pair for `proftui diff`: the loader fix more than halves the step."""
    medians = {}
    for side in ("before", "after"):
        index = load_trace(str(SAMPLES / f"diff_{side}.pt.trace.json"), use_cache=False)
        assert len(index.diagnostics) == 0
        found = find_iterations(index, [])
        assert len(found.items) == 8
        medians[side] = sorted(it.dur_ns for it in found.items)[3:5]
    assert sum(medians["after"]) < 0.6 * sum(medians["before"])


# -- cluster_2rank: two ranks of one torch_npu job ---------------------------------------------


@pytest.fixture(scope="module")
def cluster_sample():
    index = load_trace(str(CLUSTER), use_cache=False)
    _, tables, iterations = read_overview(index)
    return index, tables, iterations


def _csv(rank: str) -> dict[int, dict[str, float]]:
    """The rank's step_trace_time.csv: per step, each column in ns."""
    path = CLUSTER / RANKS[rank] / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    table = read_table(str(path), "step_trace_time")
    steps = [int(v) for v in table.find("Step").values]
    return {step: {c.header: float(c.values[row]) * 1000 for c in table.columns}
            for row, step in enumerate(steps)}


def test_cluster_sample_opens_as_one_run_of_two_ranks(cluster_sample) -> None:
    index, tables, iterations = cluster_sample
    assert len(index.diagnostics) == 0
    assert index.meta["profile"]["groups"] == list(RANKS)
    assert {t.kind for t in tables} >= {"kernel_details", "op_statistic", "step_trace_time"}
    found = cluster(index, iterations, tables)
    assert [r.rank for r in found.ranks] == list(RANKS)
    assert all([s.iteration for s in r.steps] == [1, 2, 3, 4] for r in found.ranks)


def test_cluster_sample_steps_equal_its_step_trace_time_csv(cluster_sample) -> None:
    """As the corpus conformance checks torch_npu_2rank: each rank's steps, computed from its
    streams, equal its own step_trace_time.csv; and so do the parts of its Overlap Analysis
    track (read with no table)."""
    index, tables, iterations = cluster_sample
    found = cluster(index, iterations, tables)
    by_step = {(b.group, b.iteration): b for b in breakdown(index, iterations, tables).steps}
    for rank in found.ranks:
        csv = _csv(rank.rank)
        assert sorted(csv) == [s.iteration for s in rank.steps]
        for step in rank.steps:
            theirs = csv[step.iteration]
            device = by_step[(rank.rank, step.iteration)].device
            for column, mine in (("Computing", step.compute_ns),
                                 ("Communication(Not Overlapped)", step.comm_exposed_ns),
                                 ("Free", step.free_ns), ("Overlapped", device["overlapped_ns"]),
                                 ("Communication", device["comm_ns"]),
                                 ("Stage", device["span_ns"]),
                                 ("Preparing", device["prepare_ns"])):
                assert abs(mine - theirs[column]) <= 1, (rank.rank, step.iteration, column)
    for it in find_iterations(index, []).items:  # the timeline alone
        theirs = _csv(it.group)[it.number]
        for part in ("Computing", "Communication(Not Overlapped)", "Overlapped",
                     "Communication", "Free"):
            assert abs(it.parts[part.lower()] - theirs[part]) <= 1, (it.group, it.number, part)
    # not by luck: the parts differ between the ranks, and the slow step is slow on both
    assert _csv("rank 1")[3]["Computing"] > _csv("rank 0")[3]["Computing"] + 4_000_000
    assert _csv("rank 0")[3]["Communication(Not Overlapped)"] > 2 * _csv("rank 0")[2][
        "Communication(Not Overlapped)"]


def test_cluster_sample_rank_0_waits_for_rank_1_at_step_3(cluster_sample) -> None:
    index, tables, iterations = cluster_sample
    found = cluster(index, iterations, tables)
    c = found.collectives
    assert c.matched_by == "hccl_name" and not c.unmatched
    assert c.count == {"rank 0": 8, "rank 1": 8}
    first = c.instances[0]  # the largest skew
    assert (first.name, first.iteration, first.last_rank) == ("hcom_allReduce__586_4_1", 3,
                                                              "rank 1")
    assert 4_000_000 < first.skew_ns < 4_200_000 and c.instances[1].skew_ns < 200_000
    # HCCL's own count of rank 0's wait there is the arrival skew
    comm = json.loads((CLUSTER / RANKS["rank 0"] / "ASCEND_PROFILER_OUTPUT" /
                       "communication.json").read_text())
    (info,) = [v["Communication Time Info"] for k, v in comm["step3"]["collective"].items()
               if k.startswith(f"{first.name}@")]
    assert round(info["Synchronization Time(ms)"] * 1e6) == first.per_rank["rank 0"].wait_ns
    assert found.waits_for["rank 0"]["rank 1"] > 4_000_000 > found.waits_for["rank 1"]["rank 0"]
    assert found.slowest[:2] == ("rank 1", 3)
    (slow,) = found.slow_rank
    assert slow.group == "rank 1"


def test_cluster_sample_flags_the_slow_link() -> None:
    """Rank 1's HCCS link to rank 0 runs at about half the bandwidth of rank 0's to rank 1:
    flagged in every step, as rank 1's transport is; nothing else is."""
    report = communication(*read_sources(profile_entries(str(CLUSTER))))
    assert {(r.rank, r.step) for r in report.ranks} == {(r, s) for r in RANKS
                                                        for s in (1, 2, 3, 4)}
    assert {(f.rank, f.step, f.kind) for f in report.flags} == {
        (r, s, kind) for r, kind in (("rank 1", "slow_link"), ("rank 1", "slow_transport"))
        for s in (1, 2, 3, 4)}
    hccs = {(x.step, x.src, x.dst): x for x in report.links if x.transport == "HCCS"}
    assert sorted(hccs) == sorted((s, a, b) for s in (1, 2, 3, 4) for a, b in (("0", "1"),
                                                                               ("1", "0")))
    for step in (1, 2, 3, 4):
        slow, fast = hccs[(step, "1", "0")], hccs[(step, "0", "1")]
        assert slow.slow and not fast.slow
        assert 0.45 < slow.bandwidth_gbps / fast.bandwidth_gbps < 0.6
