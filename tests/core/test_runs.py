"""Separate runs in one folder: found (same rank twice, days apart, clocks of different kinds),
refused unless one is chosen, and never mixed on one axis without saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.discover.profile import discover
from proftui.core.discover.runs import SeveralRunsError, find_runs

from helpers import problems, slice_names

DAY1_NS = 1736408883_000_000_000  # 2025-01-09 07:48:03 UTC
DAY2_NS = DAY1_NS + 86400 * 10**9
RAW_NS = 50_000_000_000_000  # a device's monotonic clock at its capture start


def torch_npu(folder: Path, rank: int, start_ns: int) -> Path:
    """A torch_npu rank dir: profiler_info_N.json (a 3 s capture from start_ns - 1 s) and a
    trace_view.json with one step at start_ns."""
    out = folder / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    ts = f"{start_ns // 1000}.{start_ns % 1000:03d}"
    (out / "trace_view.json").write_text(json.dumps([
        {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Python"}},
        {"ph": "X", "name": f"{folder.parent.name}/{folder.name}", "pid": 7, "tid": 7,
         "ts": ts, "dur": 100.0}]))
    (out / "op_statistic.csv").write_text("OP Type,Count\nMatMul,1\n")
    (folder / f"profiler_info_{rank}.json").write_text(json.dumps({
        "config": {}, "start_info": {"start_monotonic": 1_000_000_000},
        "end_info": {"collectionTimeEnd": start_ns + 2_000_000_000,
                     "MonotonicTimeEnd": 4_000_000_000},
        "rank_id": rank}))
    return folder


def old_prof(prof: Path, device: int, begin_ns: int) -> Path:
    """An old-layout PROF dir's device: a monotonic timeline and the start_info that puts
    it on the wall clock (its first event 10 µs after begin_ns), end_info 60 s later."""
    path = prof / f"device_{device}"
    (path / "timeline").mkdir(parents=True)
    (path / "timeline" / f"msprof_{device}_1_1.json").write_text(json.dumps([
        {"ph": "X", "name": f"{prof.name}/{device}", "pid": 3, "tid": 2,
         "ts": RAW_NS // 1000 + 10, "dur": 5}]))
    (path / f"start_info.{device}").write_text(json.dumps(
        {"collectionTimeBegin": str(begin_ns // 1000), "clockMonotonicRaw": str(RAW_NS)}))
    (path / f"end_info.{device}").write_text(json.dumps(
        {"collectionTimeEnd": str(begin_ns // 1000 + 60_000_000)}))
    return prof


def _runs(root: Path):
    runs, reasons = find_runs(discover(str(root)))
    return [(tuple(str(Path(f).relative_to(root)) for f in r.folders), r.groups, r.start_ns,
             r.clock) for r in runs], reasons


def _timelines(index, root: Path) -> list[str]:
    return [str(Path(t["path"]).relative_to(root)) for t in index.meta["profile"]["timelines"]]


@pytest.fixture
def same_rank_twice(tmp_path) -> Path:
    """Two jobs of two ranks each, captured at the same time: only rank 0 twice tells them."""
    for job in ("job_a", "job_b"):
        for rank in (0, 1):
            torch_npu(tmp_path / job / f"rank{rank}_ascend_pt", rank, DAY1_NS)
    return tmp_path


def test_the_same_rank_twice_is_two_runs(same_rank_twice) -> None:
    runs, reasons = _runs(same_rank_twice)
    wall = "wall clock"
    assert runs == [
        (("job_a/rank0_ascend_pt", "job_a/rank1_ascend_pt"), ("rank 0", "rank 1"),
         DAY1_NS - 10**9, wall),
        (("job_b/rank0_ascend_pt", "job_b/rank1_ascend_pt"), ("rank 0", "rank 1"),
         DAY1_NS - 10**9, wall)]
    assert reasons == ["rank 0 twice"]


def test_several_runs_are_refused_in_one_sentence_with_their_list(same_rank_twice) -> None:
    with pytest.raises(SeveralRunsError) as caught:
        load_trace(str(same_rank_twice), use_cache=False)
    assert str(caught.value) == (f"{same_rank_twice} holds 2 separate runs (rank 0 twice); "
                                 "pick one with --run N, or open its folder.")
    assert caught.value.lines() == [
        "  1  job_a/: rank 0, rank 1; captured 2025-01-09 07:48:02 UTC",
        "  2  job_b/: rank 0, rank 1; captured 2025-01-09 07:48:02 UTC"]


def test_run_2_opens_only_the_second_runs_ranks(same_rank_twice) -> None:
    index = load_trace(str(same_rank_twice), run=2, use_cache=False)
    profile = index.meta["profile"]
    assert _timelines(index, same_rank_twice) == [
        "job_b/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        "job_b/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"]
    assert profile["groups"] == ["rank 0", "rank 1"]  # named by rank: once each in the run
    assert [Path(t["path"]).parts[-4] for t in profile["tables"]] == ["job_b", "job_b"]
    assert {s["path"] for s in profile["skipped"]} == {
        str(same_rank_twice / f"job_b/rank{r}_ascend_pt/profiler_info_{r}.json")
        for r in (0, 1)}
    assert profile["run"]["number"] == 2 and profile["run"]["of"] == 2
    assert profile["run"]["where"] == "job_b/"
    assert sorted(slice_names(index)) == [
        "job_b/rank0_ascend_pt", "job_b/rank1_ascend_pt"]


def test_a_run_number_beyond_the_runs_is_one_sentence(same_rank_twice, tmp_path) -> None:
    with pytest.raises(Exception, match=r"holds 2 runs \(1 to 2\); there is no run 3\.$"):
        load_trace(str(same_rank_twice), run=3, use_cache=False)
    lone = torch_npu(tmp_path / "lone" / "rank0_ascend_pt", 0, DAY1_NS)
    assert load_trace(str(lone), run=1, use_cache=False).n_slices == 1
    with pytest.raises(Exception, match=r"holds one run; there is no run 2\.$"):
        load_trace(str(lone), run=2, use_cache=False)


def test_prof_dirs_of_different_days_are_two_runs(tmp_path) -> None:
    old_prof(tmp_path / "PROF_000001_20250109154803000_AAAAAAAAAAAAAAAA", 0, DAY1_NS)
    old_prof(tmp_path / "PROF_000001_20250109154803500_CCCCCCCCCCCCCCCC", 1,
             DAY1_NS + 500_000_000)
    old_prof(tmp_path / "PROF_000002_20250110154803000_BBBBBBBBBBBBBBBB", 0, DAY2_NS)
    old_prof(tmp_path / "PROF_000002_20250110154803500_DDDDDDDDDDDDDDDD", 1,
             DAY2_NS + 500_000_000)
    runs, reasons = _runs(tmp_path)
    assert runs == [
        (("PROF_000001_20250109154803000_AAAAAAAAAAAAAAAA",
          "PROF_000001_20250109154803500_CCCCCCCCCCCCCCCC"), ("device 0", "device 1"),
         DAY1_NS, "wall clock"),
        (("PROF_000002_20250110154803000_BBBBBBBBBBBBBBBB",
          "PROF_000002_20250110154803500_DDDDDDDDDDDDDDDD"), ("device 0", "device 1"),
         DAY2_NS, "wall clock")]
    assert reasons == ["capture times far apart"]
    index = load_trace(str(tmp_path), run=1, use_cache=False)
    assert index.start_ns == DAY1_NS + 10_000  # both devices on one day's axis
    assert index.end_ns == DAY1_NS + 500_000_000 + 15_000
    assert index.meta["profile"]["groups"] == [
        "PROF_000001_20250109154803000_AAAAAAAAAAAAAAAA / device 0",
        "PROF_000001_20250109154803500_CCCCCCCCCCCCCCCC / device 1"]


def test_a_zero_based_timeline_beside_an_epoch_one_is_two_runs(tmp_path) -> None:
    # MindSpore 1.x: its own zero-based timeline, the msprof PROF dir of the same job inside.
    profiler = tmp_path / "profiler"
    profiler.mkdir()
    (profiler / "ascend_timeline_display_0.json").write_text(json.dumps([
        {"ph": "X", "name": "ms op", "pid": 1, "tid": "0", "ts": 12.5, "dur": 3}]))
    old_prof(profiler / "PROF_000001_20250109154803000_AAAAAAAAAAAAAAAA", 0, DAY1_NS)
    runs, reasons = _runs(profiler)
    assert runs == [
        (("PROF_000001_20250109154803000_AAAAAAAAAAAAAAAA",), ("device 0",), DAY1_NS,
         "wall clock"),
        (("ascend_timeline_display_0.json",), ("rank 0",), None, "own clock")]
    assert reasons == ["clocks of different kinds"]
    with pytest.raises(SeveralRunsError) as caught:
        load_trace(str(profiler), use_cache=False)
    assert caught.value.lines()[1] == (
        "  2  ascend_timeline_display_0.json: rank 0; own clock (zero-based or monotonic), "
        "no date")
    index = load_trace(str(profiler), run=2, use_cache=False)
    assert (index.start_ns, index.end_ns) == (12_500, 15_500)  # not 56 years wide
    assert _timelines(index, profiler) == ["ascend_timeline_display_0.json"]


def test_ranks_of_one_job_are_one_run(tmp_path) -> None:
    # Ranks start their profilers seconds apart; their folders hold nothing else.
    torch_npu(tmp_path / "node1_1_20250109154803000_ascend_pt", 1, DAY1_NS + 3 * 10**9)
    torch_npu(tmp_path / "node0_1_20250109154803000_ascend_pt", 0, DAY1_NS)
    runs, reasons = _runs(tmp_path)
    assert [r[0] for r in runs] == [("node0_1_20250109154803000_ascend_pt",
                                     "node1_1_20250109154803000_ascend_pt")]
    assert reasons == []
    index = load_trace(str(tmp_path), use_cache=False)
    assert index.meta["profile"]["groups"] == ["rank 0", "rank 1"]
    assert index.meta["profile"]["run"] is None


def test_kineto_traces_of_different_years_side_by_side_are_two_runs(tmp_path) -> None:
    for name, start_us in (("old.pt.trace.json", 1610366662254282),
                           ("new.pt.trace.json", 1672876799198729)):
        (tmp_path / name).write_text(json.dumps({"traceEvents": [
            {"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": start_us, "dur": 5}]}))
    runs, reasons = _runs(tmp_path)
    assert [(r[0], r[2]) for r in runs] == [(("old.pt.trace.json",), 1610366662254282000),
                                            (("new.pt.trace.json",), 1672876799198729000)]
    assert reasons == ["capture times far apart"]


def test_mixed_clocks_in_one_capture_folder_are_said(tmp_path) -> None:
    run = torch_npu(tmp_path / "rank0_ascend_pt", 0, DAY1_NS)
    (run / "extra").mkdir()
    (run / "extra" / "worker.pt.trace.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "zero-based", "pid": 1, "tid": 1, "ts": 40, "dur": 5}]}))
    index = load_trace(str(run), use_cache=False)
    assert problems(index) == {"mixed_clocks": 1}
    problem = next(iter(index.diagnostics))
    assert problem.detail == "worker.pt.trace.json: own clock beside 1 on the wall clock"
    clocks = {Path(s["path"]).name: s.get("clock") for s in index.meta["sources"]}
    assert clocks == {"trace_view.json": None, "worker.pt.trace.json":
                      "own clock (zero-based or monotonic), not the others' wall clock"}


def test_own_clock_traces_do_not_join_a_dated_folder_of_tables(tmp_path) -> None:
    # Summary tables dated by their profiler_info are on the wall clock, like their times.
    tables_only = torch_npu(tmp_path / "tables_rank_0", 0, DAY1_NS)
    (tables_only / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    torch_npu(tmp_path / "later_ascend_pt", 0, DAY2_NS)
    for name in ("a.json", "b.json"):
        (tmp_path / "chrome").mkdir(exist_ok=True)
        (tmp_path / "chrome" / name).write_text(json.dumps([
            {"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": 5, "dur": 1}]))
    runs, reasons = _runs(tmp_path)
    assert [(r[0], r[3]) for r in runs] == [
        (("tables_rank_0",), "wall clock"), (("later_ascend_pt",), "wall clock"),
        (("chrome/a.json", "chrome/b.json"), "own clock")]
    assert reasons == ["capture times far apart", "clocks of different kinds"]  # each once
