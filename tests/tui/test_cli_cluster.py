"""`proftui cluster` on inline folders of ranks: JSON schema and values, text, the strip."""

from __future__ import annotations

import json

import pytest
from cluster_inputs import rank_folders as ranks
from cluster_output_inputs import write_cluster_output, write_ranks
from tui_support import run_cli

from proftui.core.analysis.cluster import Cluster, Collectives, RankStep, RankSummary
from proftui.tui.commands.cluster import RAMP, SLOWEST, step_strip

US = 1000



def test_json_schema_and_values(capsys, tmp_path):
    # step 1 (warm-up): rank 1 late by 50 µs; steps 2 and 3: rank 0 late by 30 and 10 µs
    path = ranks(tmp_path, [[110, 140, 120], [160, 110, 110]])
    code, out, err = run_cli(capsys, "cluster", "--json", "--top", "1", path)
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"source", "ranks", "slowest", "spread", "collectives",
                         "last_arrivals", "wait_ns", "waits_for", "slow_rank",
                         "ranks_without_timeline", "missing_ranks", "communication",
                         "profiler", "warnings"}
    assert data["source"] == "timeline"
    assert data["communication"] is None and data["profiler"] is None  # no HCCL summaries
    r0, r1 = data["ranks"]
    assert (r0["rank"], r0["group"]) == (0, "rank 0")
    assert [s["iteration"] for s in r0["steps"]] == [1, 2, 3]
    assert [s["warmup"] for s in r0["steps"]] == [True, False, False]
    assert set(r0["steps"][0]) == {"iteration", "step_ns", "compute_ns", "comm_exposed_ns",
                                   "free_ns", "warmup", "source"}
    assert r0["source"] == "timeline" and r0["steps"][0]["source"] == "timeline"
    assert r0["median"]["step_ns"] == 200 * US and r1["median"]["step_ns"] == 210 * US
    assert r0["median"]["compute_ns"] == 100 * US
    assert data["slowest"] == {"rank": 1, "group": "rank 1", "iteration": 2, "step_ns": 210 * US}
    assert data["spread"] == pytest.approx(10 / 205)
    c = data["collectives"]
    assert c["matched_by"] == "hccl_name" and c["matched"] == 3
    assert c["unmatched"] == {"count": 0, "instances": []}
    [top] = c["instances"]  # --top 1: the warm-up's 50 µs
    assert (top["name"], top["group"], top["sequence"], top["skew_ns"], top["last_rank"],
            top["warmup"]) == ("hcom_allReduce__7_0_1", "7", 0, 50 * US, "rank 1", True)
    assert top["per_rank"]["rank 0"] == {"start_ns": 110 * US, "wait_ns": 50 * US,
                                         "transfer_ns": 20 * US}
    assert data["last_arrivals"] == {"rank 0": 2, "rank 1": 0}
    assert data["wait_ns"] == {"rank 0": 0, "rank 1": 40 * US}
    assert data["waits_for"] == {"rank 1": {"rank 0": 40 * US}}


def test_text_tables_strip_and_who_waits(capsys, tmp_path):
    path = ranks(tmp_path, [[110, 140, 120], [160, 110, 110]], missing={(1, 2)})
    code, out, err = run_cli(capsys, "cluster", path)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "2 ranks, steps from ProfilerStep#N annotations"
    header = lines.index(next(line for line in lines if line.startswith("Rank ")))
    assert lines[header].split()[:3] == ["Rank", "Steps", "Step"]
    assert lines[header + 1].split()[:4] == ["rank", "0", "3", "200"]
    assert "slowest step: rank 1, iteration 2 (210 us)" in lines
    assert "warm-up, left out of medians, the slowest and the waits: iteration 1" in lines
    strip = lines.index("iteration  1") + 1
    # rank 0's steps are all 200 µs, the bottom of the scale; rank 1's 210 µs, the slowest
    assert lines[strip] == f"rank 0     {RAMP[0] * 3}"
    assert lines[strip + 1] == f"rank 1     {RAMP[-1]}{SLOWEST}{RAMP[-1]}"
    assert "collectives: 2 matched across ranks by HCCL op name" in out
    assert "unmatched (missing on some rank of their group): 1" in out
    assert "  hcom_allReduce__7_2_1: not on rank 1" in out
    assert "  arrived last: rank 0 1 of 1" in out
    assert "  rank 1 waited 30 us for rank 0" in out
    assert max(len(line) for line in lines) <= 120


def test_one_rank_is_one_sentence_and_its_steps(capsys, tmp_path):
    path = ranks(tmp_path, [[110, 120, 130]])
    code, out, _ = run_cli(capsys, "cluster", path)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].startswith("one rank (") and "nothing to compare across ranks" in lines[0]
    assert lines[2].split() == ["Iteration", "Step", "Compute", "Comm", "exposed", "Free",
                                "Note"]
    assert lines[3].split()[-1] == "warm-up" and len(lines) == 6


def test_one_iteration_and_usage_errors(capsys, tmp_path):
    path = ranks(tmp_path, [[110, 140, 120], [160, 110, 110]])
    code, out, _ = run_cli(capsys, "cluster", "--json", "--iteration", "3", path)
    data = json.loads(out)
    assert code == 0 and [s["iteration"] for s in data["ranks"][0]["steps"]] == [3]
    assert [i["sequence"] for i in data["collectives"]["instances"]] == [2]
    code, _, err = run_cli(capsys, "cluster", "--iteration", "9", path)
    assert code == 2 and "Iteration 9 is not in this profile" in err
    code, _, err = run_cli(capsys, "cluster", "--top", "0", path)
    assert code == 2 and "--top wants 1 or more" in err


def test_the_strip_fits_120_columns_however_many_iterations():
    def rank(name, base):
        return RankSummary(name, [RankStep(n, base + n, None, None, None, n == 1)
                                  for n in range(1, 501)], {})
    found = Cluster([rank("rank 0", 1000), rank("a very long rank name indeed, longer", 0)],
                    ("rank 0", 500, 1500), None, Collectives(), {}, {}, {}, [])
    lines = step_strip(found)
    assert all(len(line.rstrip("\n")) <= 120 for line in lines)
    # the long name cut to 24 characters leaves 94 columns: 84 cells of 6 iterations
    assert "(6 iterations a cell, their slowest)" in lines[0]
    rows = [line for line in lines if line.startswith(("rank 0", "a very"))]
    assert rows[1].startswith("a very long rank name i…  ")
    assert [len(row.rstrip("\n")) for row in rows] == [26 + 84, 26 + 84]
    assert rows[0].rstrip("\n").endswith(SLOWEST)  # iteration 500, in the last cell
    assert rows[1][26] == RAMP[0]  # the shortest step of all, at the bottom of the scale
    assert lines[1].startswith("iteration") and lines[1].split()[1:3] == ["1", "61"]


def test_on_a_terminal_short_text_columns_leave_their_room_to_long_ones(capsys, tmp_path,
                                                                          monkeypatch):
    from proftui.tui.commands.common import share_widths

    # a 23-character collective name beside three short columns, 60 columns to share
    assert share_widths([23, 3, 6, 6], 60) == [23, 3, 6, 6]
    assert share_widths([23, 3, 6, 6], 30) == [15, 3, 6, 6]  # the long one gets what is left
    assert share_widths([30, 30], 40) == [20, 20]
    path = ranks(tmp_path, [[110, 140, 120], [160, 110, 110]])
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _ = run_cli(capsys, "cluster", path)
    assert code == 0 and "│ hcom_allReduce__7_0_1 │" in out  # whole, not cut


def test_strip_shades_the_part_asked_for(capsys, tmp_path):
    path = ranks(tmp_path, [[110, 140, 120], [160, 110, 110]])
    code, out, _ = run_cli(capsys, "cluster", "--strip", "comm", path)
    assert code == 0
    line = next(line for line in out.splitlines() if "per rank and iteration" in line)
    assert line.startswith("exposed communication per rank and iteration: ")
    assert f"{SLOWEST} marks the largest exposed communication" in out
    code, _, err = run_cli(capsys, "cluster", "--strip", "idle", path)
    assert code == 2 and "invalid choice" in err


def test_ops_and_export_of_an_iteration_take_each_ranks_own_window(capsys, tmp_path):
    path = ranks(tmp_path, [[110, 140, 120], [160, 110, 110]])
    code, out, _ = run_cli(capsys, "ops", "--iteration", "2", "--json", path)
    window = json.loads(out)["window"]
    # ProfilerStep#2 runs from 1000 µs for 200 µs on rank 0, 210 µs on rank 1
    assert window["groups"] == {"rank 0": {"start_ns": 1_000_000, "end_ns": 1_200_000},
                                "rank 1": {"start_ns": 1_000_000, "end_ns": 1_210_000}}
    assert (window["start_ns"], window["end_ns"]) == (1_000_000, 1_210_000)
    code, out, _ = run_cli(capsys, "ops", "--iteration", "2", path)
    assert code == 0 and out.startswith("ops of iteration 2 of 2 groups, each in its own window")
    out_file = tmp_path / "events.csv"
    code, _, _ = run_cli(capsys, "export", "--iteration", "2", "-o", str(out_file), path)
    rows = out_file.read_text().splitlines()[1:]
    steps = sorted(r.split(",")[0] for r in rows if r.startswith("ProfilerStep"))
    assert code == 0 and steps == ["ProfilerStep#2", "ProfilerStep#2"]


def test_absent_ranks_and_rank_folders_without_a_trace_are_reported(capsys, tmp_path):
    import shutil

    path = ranks(tmp_path, [[110, 140, 120]] * 4)
    shutil.rmtree(tmp_path / "rank1_ascend_pt")  # rank 1 absent
    (tmp_path / "rank2_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    code, out, _ = run_cli(capsys, "cluster", "--json", path)
    data = json.loads(out)
    assert code == 0 and [r["rank"] for r in data["ranks"]] == [0, 3]
    assert (data["ranks_without_timeline"], data["missing_ranks"]) == ([2], [1])
    code, out, _ = run_cli(capsys, "cluster", path)
    assert out.splitlines()[:2] == [
        "warning: no timeline for rank 2 (its folder holds no readable trace)",
        "warning: rank 1 absent (the others are numbered 0 to 3)"]
    code, out, _ = run_cli(capsys, "info", path)
    assert "warning    rank 1 absent (the others are numbered 0 to 3)" in out
    code, out, _ = run_cli(capsys, "cluster", "--json",
                        ranks(tmp_path / "whole", [[110, 140, 120]] * 2))
    assert (json.loads(out)["ranks_without_timeline"], json.loads(out)["missing_ranks"]) == (
        [], [])


def test_export_parquet_from_the_command_line(capsys, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    path = ranks(tmp_path / "in", [[110, 140, 120], [160, 110, 110]])
    out = tmp_path / "pq"
    code, _, err = run_cli(capsys, "export", "--iteration", "2", "--format", "parquet", "-o",
                        str(out), path)
    assert code == 0 and "steps in 2 rank partitions" in err
    assert sorted(p.name for p in (out / "steps").iterdir()) == ["rank=0", "rank=1"]
    code, _, err = run_cli(capsys, "export", "--all", "--format", "parquet", path)
    assert code == 2 and "name it with -o DIR" in err
    code, _, err = run_cli(capsys, "export", "--all", "--format", "parquet", "-o", str(out), path)
    assert code == 1 and "already exists; --force" in err
    import builtins

    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    code, _, err = run_cli(capsys, "export", "--all", "--format", "parquet", "-o",
                        str(tmp_path / "other"), path)
    assert code == 2 and err == ("proftui: Parquet export needs pyarrow: pip install "
                                 "'proftui[parquet]'.\n")


def test_communication_and_profiler_output_in_json(capsys, tmp_path):
    write_ranks(tmp_path)
    write_cluster_output(tmp_path, free_us_rank1=52.0)
    code, out, err = run_cli(capsys, "cluster", "--json", str(tmp_path))
    assert code == 0, err
    data = json.loads(out)
    comm = data["communication"]
    assert comm["slow_ratio"] == 0.8 and "median" in comm["slow"]
    assert set(comm["link_types"][0]) == {"rank", "group", "step", "transport", "size_bytes",
                                          "time_ns", "bandwidth_gbps", "median_gbps", "slow",
                                          "judged"}
    assert [(t["rank"], t["transport"], t["bandwidth_gbps"], t["slow"])
            for t in comm["link_types"]] == [
        (0, "HCCS", 20.0, False), (0, "SDMA", 20.0, False),
        (1, "HCCS", 10.0, True), (1, "SDMA", 10.0, True)]
    assert comm["slow_links"] == 1 and comm["links_not_judged"] == 0
    [slow] = [c for c in comm["matrix"] if c["slow"]]
    assert slow == {"step": 1, "src": "rank 1", "dst": "rank 0", "transport": "HCCS",
                    "size_bytes": 10_000_000, "time_ns": 1_000_000, "bandwidth_gbps": 10.0,
                    "median_gbps": 20.0, "peers": 3, "slow": True, "judged": True}
    profiler = data["profiler"]
    assert [p.rsplit("/", 1)[1] for p in profiler["files"]] == [
        "cluster_step_trace_time.csv", "cluster_communication.json",
        "cluster_communication_matrix.json", "communication_group.json"]
    assert profiler["tolerance"] == {"relative": 0.001,
                                     "floors": {"ns": 1000, "bytes": 1000, "GB/s": 0.001}}
    assert (profiler["compared"], profiler["differ"]) == (55, 3)
    assert [(c["key"], c["figure"], c["profiler"], c["proftui"]) for c in profiler["checks"]
            if c["differs"]] == [(f"rank 1, step {n}", "Free", 52_000, 50_000)
                                 for n in (1, 2, 3)]


def test_communication_and_profiler_output_in_text(capsys, tmp_path):
    write_ranks(tmp_path)
    write_cluster_output(tmp_path, free_us_rank1=52.0)
    code, out, err = run_cli(capsys, "cluster", str(tmp_path))
    assert code == 0, err
    assert "bandwidth per link type and rank" in out
    assert "slow: under 80% of the median bandwidth" in out
    lines = out.splitlines()
    header = lines.index("  step 1, HCCS")
    assert lines[header + 1].split() == [
        "rank", "0", "rank", "1", "local", "2"]
    assert lines[header + 3].split() == ["rank", "1", "10.00!", "20.00"]
    assert ("slow link: step 1: rank 1 -> rank 0 HCCS 10.00 GB/s, 50% of the median of its "
            "3 links (20.00 GB/s)") in lines
    assert any(line.startswith("msprof-analyze's cluster_analysis_output") and
               "55 compared, 3 differ" in line for line in lines)
    assert "differing figures: the first 3 of 3" in out
    code, out, err = run_cli(capsys, "cluster", "--iteration", "2", str(tmp_path))
    assert code == 0 and "link matrix: no links" in out  # the summaries hold step 1 only


def test_a_damaged_cluster_output_file_is_one_warning(capsys, tmp_path):
    write_ranks(tmp_path)
    out = write_cluster_output(tmp_path)
    (out / "cluster_communication.json").write_text('{"(0, 1)": {"step1": ')
    (out / "communication_group.json").write_text('{"collective": "not a list"}')
    code, text, err = run_cli(capsys, "cluster", str(tmp_path))
    assert code == 0 and "Traceback" not in err
    assert ("warning: cluster_communication.json is not valid JSON at byte 21 (damaged or cut "
            "short).") in text.splitlines()
    data = json.loads(run_cli(capsys, "cluster", "--json", str(tmp_path))[1])["profiler"]
    assert data["groups"] == {} and len(data["errors"]) == 1
    # the totals are gone: proftui's communication figures stand alone and differ
    assert {c["table"] for c in data["checks"] if c["differs"]} == {"communication"}
