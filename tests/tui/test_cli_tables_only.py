"""Profiles of the profiler's tables with no timeline: breakdown, cluster and advise read the
tables (step_trace_time.csv, kernel_details.csv, op_statistic.csv, communication.json,
msprof-analyze's cluster_analysis_output), each block saying which source it came from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tui_support import run_cli

sys.path.insert(0, str(Path(__file__).parents[1] / "core"))
from cluster_output_inputs import write_cluster_output  # noqa: E402

MS = 1_000_000
STEP_TRACE = ("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,"
              "Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n")
OP_STATISTIC = ("OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
                "Max Time(us),Ratio(%)\n")
KERNEL_DETAILS = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
                  "Start Time(us),Duration(us),Wait Time(us),Block Dim\n")
# Per rank: Computing, Communication(Not Overlapped), Overlapped, Free, Preparing (ms) of
# steps 1, 2 and 3; rank 3 computes longest. Exposed communication 52-55 % of the step.
RANKS = {0: (10.0, 55.0, 4.0, 25.0, 10.0), 1: (10.5, 54.0, 4.0, 25.5, 10.0),
         2: (10.2, 53.0, 4.0, 26.8, 10.0), 3: (14.0, 52.0, 4.0, 24.0, 10.0)}


def _step_rows(computing, exposed, overlapped, free, preparing) -> str:
    stage = computing + exposed + free
    return "".join(f"{n},{computing * 1000},{exposed * 1000},{overlapped * 1000},"
                   f"{(exposed + overlapped) * 1000},{free * 1000},{stage * 1000},0,"
                   f"{exposed * 1000},{preparing * 1000}\n" for n in (1, 2, 3))


def _comm(n_small: int) -> dict:
    ops = {f"hcom_allReduce__123_{k}_1@9000000000000000123": {"Communication Time Info": {
        "Start Timestamp(us)": 1000.0 + k, "Elapse Time(ms)": 0.05, "Transit Time(ms)": 0.04,
        "Wait Time(ms)": 0.01, "Synchronization Time(ms)": 0, "Idle Time(ms)": 0},
        "Communication Bandwidth Info": {}} for k in range(n_small)}
    return {f"step{n}": {"p2p": {}, "collective": ops} for n in (1, 2, 3)}


def write_four_ranks(root: Path) -> Path:
    """Four rank folders as a colleague's copy of ASCEND_PROFILER_OUTPUT: no trace_view.json,
    no SQLite timeline."""
    for rank, parts in RANKS.items():
        folder = root / f"rank{rank}_ascend_pt"
        out = folder / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True)
        (folder / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
        (out / "step_trace_time.csv").write_text(STEP_TRACE + _step_rows(*parts))
        (out / "op_statistic.csv").write_text(
            OP_STATISTIC + "MatMul,AI_CORE,30,30000.0,900.0,1000.0,1100.0,100.0\n")
        (out / "kernel_details.csv").write_text(KERNEL_DETAILS + "".join(
            f"{n},4294967295,{n},2,MatMul_{n},MatMul,dynamic,AI_CORE,"
            f"\"17364088837{n}0000.000\t\",1000.0,0,8\n" for n in (1, 2, 3)))
        (out / "communication.json").write_text(json.dumps(_comm(25)))
    return root


def test_breakdown_of_ranks_without_a_timeline_comes_from_step_trace_time(capsys, tmp_path):
    path = write_four_ranks(tmp_path)
    code, out, err = run_cli(capsys, "breakdown", "--json", path)
    assert code == 0, err
    data = json.loads(out)
    assert len(data["iterations"]) == 12 and len(data["total"]) == 4
    first = data["iterations"][0]
    assert (first["group"], first["iteration"], first["source"]) == ("rank 0", 1,
                                                                     "step_trace_time.csv")
    assert first["start_ns"] is None and first["step_ns"] == 100 * MS  # 10+55+25, +10
    device = first["device"]
    assert (device["compute_ns"], device["comm_exposed_ns"], device["overlapped_ns"],
            device["comm_ns"], device["free_ns"], device["span_ns"], device["prepare_ns"]) == (
        10 * MS, 55 * MS, 4 * MS, 59 * MS, 25 * MS, 90 * MS, 10 * MS)
    assert device["idle_ns"] is None and device["memcpy_exposed_ns"] is None
    assert all(v is None for v in first["host"].values())
    assert data["total"][3]["step_ns"] == 3 * 100 * MS
    code, out, _ = run_cli(capsys, "breakdown", path)
    assert "source: step_trace_time.csv" in out.splitlines()[0]


def test_cluster_and_advise_of_ranks_without_a_timeline(capsys, tmp_path):
    path = write_four_ranks(tmp_path)
    code, out, err = run_cli(capsys, "cluster", "--json", path)
    assert code == 0, err
    data = json.loads(out)
    assert [r["group"] for r in data["ranks"]] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    assert data["source"] == "step_trace_time.csv"
    assert data["ranks"][3]["median"]["compute_ns"] == 14 * MS
    assert data["ranks"][3]["collectives"] is None
    assert data["slowest"] == {"rank": 0, "group": "rank 0", "iteration": 2, "step_ns": 100 * MS}
    assert data["spread"] == 0.0  # every step waits for the slowest rank at the collectives
    assert [f["group"] for f in data["slow_rank"]] == ["rank 3"]  # 14 ms of 10.2 ms
    code, out, _ = run_cli(capsys, "cluster", path)
    assert "4 ranks, steps from step_trace_time.csv" in out
    assert "collectives: not matched: no timeline" in out

    code, out, err = run_cli(capsys, "advise", "--json", path)
    assert code == 0, err
    data = json.loads(out)
    exposed = [f for f in data["findings"] if f["rule"] == "exposed_comm"]
    assert [f["group"] for f in exposed] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    assert exposed[0]["time_lost_ns"] == 55 * MS and exposed[0]["share"] == 0.55
    assert exposed[0]["source"] == "step_trace_time.csv"
    small = [f for f in data["findings"] if f["rule"] == "small_collectives"]
    assert len(small) == 4 and small[0]["numbers"]["small_per_step"] == 25
    skipped = {s["rule"]: s["reason"] for s in data["skipped"]}
    assert skipped["host_bound"].startswith("no timeline (only step_trace_time.csv)")
    assert {"sync", "gc", "input_pipeline", "exposed_memcpy"} <= set(skipped)


def test_ai_cpu_from_kernel_details_alone(capsys, tmp_path):
    out_dir = tmp_path / "ASCEND_PROFILER_OUTPUT"
    out_dir.mkdir()
    durations = (74.0, 90.5, 120.0, 131.25, 150.0, 175.0, 198.0)
    rows = "".join(f"1,4294967295,{k},3,Cast_{k},Cast,dynamic,AI_CPU,"
                   f"\"1736408883{k}00000.000\t\",{d},0,1\n" for k, d in enumerate(durations))
    (out_dir / "kernel_details.csv").write_text(KERNEL_DETAILS + rows)
    code, out, err = run_cli(capsys, "advise", "--json", tmp_path)
    assert code == 0, err
    finding, dynamic = json.loads(out)["findings"]  # every task dynamic: dynamic_shapes too
    assert dynamic["rule"] == "dynamic_shapes" and dynamic["time_lost_ns"] == 0
    assert finding["rule"] == "ai_cpu" and finding["source"] == "kernel_details.csv"
    assert finding["numbers"]["ops"] == 7 and finding["numbers"]["over_threshold"] == 7
    assert finding["time_lost_ns"] == round(sum(durations) * 1000)
    assert finding["evidence"][0]["label"] == "Cast_6"
    assert finding["evidence"][0]["end_ns"] - finding["evidence"][0]["start_ns"] == 198_000
    code, out, _ = run_cli(capsys, "summary", "--json", tmp_path)  # the same finding there
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["ai_cpu", "dynamic_shapes"]
    code, out, _ = run_cli(capsys, "advise", tmp_path)  # times from the tables' first task
    assert out.startswith("no timeline: evidence times are from the first task")
    assert "   at 600 ms: Cast_6 (198 us)\n" in out


def test_cluster_analysis_output_alone_gives_its_ranks(capsys, tmp_path):
    write_cluster_output(tmp_path)
    code, out, err = run_cli(capsys, "cluster", "--json", tmp_path)
    assert code == 0, err
    data = json.loads(out)
    assert [r["group"] for r in data["ranks"]] == ["rank 0", "rank 1"]
    assert data["source"] == "cluster_step_trace_time.csv"
    assert data["ranks"][1]["median"]["free_ns"] == 50_000
    assert data["profiler"] is None or not any(
        c["table"] == "step_trace" for c in data["profiler"]["checks"])  # not with itself
    code, out, _ = run_cli(capsys, "breakdown", "--json", tmp_path)
    assert len(json.loads(out)["iterations"]) == 6


def test_the_rank_the_others_wait_for_is_named(tmp_path, capsys, monkeypatch) -> None:
    # ranks 0 and 1 compute alike; rank 1 comes late to the collectives, so rank 0 waits:
    # 12 ms more exposed communication a step, 12 % of the 100 ms step (over the 5 %)
    monkeypatch.setitem(RANKS, 0, (10.0, 52.0, 4.0, 28.0, 10.0))
    monkeypatch.setitem(RANKS, 1, (10.0, 40.0, 4.0, 40.0, 10.0))
    for rank in (2, 3):
        monkeypatch.delitem(RANKS, rank)
    write_four_ranks(tmp_path)
    status, out, _ = run_cli(capsys, "advise", "--json", tmp_path)
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "waited_for"]
    assert [(f["group"], f["time_lost_ns"]) for f in found] == [("rank 1", 12 * MS)]
    assert found[0]["numbers"]["most_waiting"] == "rank 0"
    # a gap under 5 % of the step is the ranks' noise, not a rank to wait for
    monkeypatch.setitem(RANKS, 1, (10.0, 48.0, 4.0, 32.0, 10.0))
    other = tmp_path / "near"
    other.mkdir()
    write_four_ranks(other)
    status, out, _ = run_cli(capsys, "advise", "--json", other)
    assert not [f for f in json.loads(out)["findings"] if f["rule"] == "waited_for"]


def test_the_steps_of_ranks_without_a_timeline_export_with_no_times(tmp_path, capsys) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    write_four_ranks(tmp_path / "in")
    status, _, _ = run_cli(capsys, "export", tmp_path / "in", "--format", "parquet",
                           "-o", tmp_path / "out", "--all")
    assert status == 0
    steps = pq.read_table(tmp_path / "out" / "steps" / "rank=0" / "part-0.parquet").to_pydict()
    assert steps["iteration"] == [1, 2, 3]
    assert steps["start_ns"] == [None] * 3 and steps["end_ns"] == [None] * 3  # no window
    assert steps["step_ns"] == [100 * MS] * 3  # the sum of its parts
