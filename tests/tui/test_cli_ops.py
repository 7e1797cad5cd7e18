"""The headless ops and iterations commands: plain text when piped, JSON, windows, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tui_support import run_cli

from proftui.tui.cli import main

from helpers import x

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


# Two steps on the host, each holding one conv; kernels on a GPU stream. Span [0, 100) µs.
TRACE = {"traceEvents": [
    {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    x("ProfilerStep#1", 0, 40, cat="user_annotation"),
    x("conv", 5, 10),
    x("ProfilerStep#2", 40, 60, cat="user_annotation"),
    x("conv", 45, 30),
    x("bad\x1b[31mname", 90, 2),
    x("kernel", 10, 20, tid=7, pid=0, cat="kernel"),
    x("kernel", 50, 50, tid=7, pid=0, cat="kernel"),
]}


@pytest.fixture
def trace(tmp_path) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(TRACE))
    return str(path)


def test_ops_plain_text_when_piped(trace, capsys) -> None:
    status, out, err = run_cli(capsys, "ops", trace)
    assert status == 0 and err == ""
    # The ProfilerStep#N annotations mark time: they are not operators.
    assert out.splitlines() == [
        "ops of whole trace (0 ns to 100 us from the capture start, 100 us), by name, all "
        "tracks: 3 ops, 5 slices",
        "Name             Count  Total   Self    Avg    Min    Max  Window(%)  Busy(%)",
        "kernel               2  70 us  70 us  35 us  20 us  50 us     70.00%   62.50%",
        "conv                 2  40 us  40 us  20 us  10 us  30 us     40.00%   35.71%",
        "bad\\x1b[31mname      1   2 us   2 us   2 us   2 us   2 us      2.00%    1.79%",
    ]
    assert "\x1b" not in out


def test_ops_of_an_iteration_a_range_a_side(trace, capsys) -> None:
    status, out, _ = run_cli(capsys, "ops", "--iteration", "2", "--side", "device", trace)
    lines = out.splitlines()
    assert status == 0
    assert lines[0] == ("ops of iteration 2 (40 us to 100 us from the capture start, 60 us), by "
                        "name, device tracks: 1 op, 1 slice")
    assert lines[2].split() == ["kernel", "1", "50", "us", "50", "us", "50", "us", "50", "us",
                                "50", "us", "83.33%", "100.00%"]
    status, out, _ = run_cli(capsys, "ops", "--range", "12us:0.05ms", "--by", "category", trace)
    lines = out.splitlines()
    assert lines[0].startswith("ops of range (12 us to 50 us from the capture start, 38 us), "
                               "by category, all tracks: 2 ops, 3 slices")
    # kernel [12,30) 18 of 38 us; conv [12,15) 3 + [45,50) 5 = 8 on one thread; busy of 26
    assert [line.split() for line in lines[2:]] == [
        ["kernel", "1", "18", "us", "18", "us", "20", "us", "20", "us", "20", "us", "47.37%",
         "69.23%"],
        ["cpu_op", "2", "8", "us", "8", "us", "20", "us", "10", "us", "30", "us", "21.05%",
         "30.77%"]]
    status, out, _ = run_cli(capsys, "ops", "--range", "90:", trace)  # bare numbers are µs
    assert "range (90 us to 100 us from the capture start, 10 us)" in out


def test_ops_by_engine(trace, capsys) -> None:
    status, out, _ = run_cli(capsys, "ops", "--by", "engine", trace)
    assert status == 0
    assert [line.split()[:3] for line in out.splitlines()[1:]] == [
        ["Engine", "Count", "Total"], ["kernel", "2", "70"], ["cpu_op", "3", "42"]]


def test_ops_sort_and_top(trace, capsys) -> None:
    status, out, _ = run_cli(capsys, "ops", "--sort", "count", "--top", "1", trace)
    lines = out.splitlines()
    assert status == 0
    assert [line.split()[0] for line in lines[2:3]] == ["kernel"]
    assert lines[3] == "... and 2 more ops (--top 0 prints all)"
    status, out, _ = run_cli(capsys, "ops", "--sort", "Name", "--top", "0", trace)
    assert [line.split()[0] for line in out.splitlines()[2:]] == [
        "bad\\x1b[31mname", "conv", "kernel"]


def test_ops_json(trace, capsys) -> None:
    status, out, _ = run_cli(capsys, "ops", "--json", "--range", "0:40", trace)
    data = json.loads(out)
    assert status == 0
    assert data["window"]["from_trace_start_ns"] == [0, 40_000]
    assert data["window"]["end_ns"] - data["window"]["start_ns"] == 40_000
    assert (data["by"], data["side"], data["ops"], data["slices"]) == ("name", "all", 2, 2)
    assert data["rows"][0] == {"name": "kernel", "count": 1, "total_ns": 20_000,
                               "self_ns": 20_000, "avg_ns": 20_000, "min_ns": 20_000,
                               "max_ns": 20_000, "window_pct": 50.0,
                               "busy_pct": pytest.approx(200 / 3),
                               "name_id": data["rows"][0]["name_id"]}
    assert [r["name"] for r in data["rows"]] == ["kernel", "conv"]
    assert data["rows"][1]["total_ns"] == 10_000 and data["rows"][1]["window_pct"] == 25.0


@pytest.mark.parametrize("argv,message", [
    (["--range", "5ms"], "--range wants T0:T1 (e.g. 12.5ms:20ms), not \"5ms\"."),
    (["--range", "50:10"], "--range 50:10 ends before it starts."),
    (["--range", "a:b"], 'Cannot read "a" as a number'),
    (["--iteration", "9"], "Iteration 9 is not in this profile (it has iterations 1 to 2)."),
    (["--sort", "Foo"], 'Unknown column "Foo" (known: Name, Count, Total,'),
])
def test_ops_errors_are_one_sentence_and_status_2(trace, capsys, argv, message) -> None:
    status, out, err = run_cli(capsys, "ops", *argv, trace)
    assert status == 2 and out == ""
    assert err.startswith(f"proftui: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--iteration", "1", "--range", "0:5"], ["--top", "-1"],
                                  ["--by", "track"], ["--side", "gpu"]])
def test_ops_bad_usage_exits_2(trace, capsys, argv) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["ops", *argv, trace])
    assert exc.value.code == 2
    assert "see proftui ops --help" in capsys.readouterr().err


def test_help_has_examples(capsys) -> None:
    for command in ("ops", "iterations"):
        with pytest.raises(SystemExit) as exc:
            main([command, "--help"])
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert f"examples:\n  proftui {command} " in out


def test_iterations_text_and_json_on_a_sample(capsys) -> None:
    sample = str(SAMPLES / "torch_npu")
    status, out, _ = run_cli(capsys, "iterations", "--no-cache", sample)
    lines = out.splitlines()
    assert status == 0
    assert lines[0].startswith("6 iterations from ProfilerStep#N annotations; starts from "
                               "the capture start")
    assert lines[1].startswith("Iteration  Start (ms, capture)  ")
    assert len(lines) == 8
    assert lines[5].rstrip().endswith("slowest, outlier") and lines[5].split()[0] == "4"
    assert sum("outlier" in line for line in lines[2:]) == 1
    status, out, _ = run_cli(capsys, "iterations", "--json", sample)
    data = json.loads(out)
    assert data["source"] == "ProfilerStep#N annotations" and len(data["items"]) == 6
    fourth = data["items"][3]
    assert fourth["number"] == 4 and fourth["mark"] == "slowest, outlier"
    assert data["items"][0]["mark"] == "warm-up"  # left out of the median
    durations = sorted(it["dur_ns"] for it in data["items"][1:])
    median = durations[2]
    assert fourth["vs_median_pct"] == pytest.approx((fourth["dur_ns"] / median - 1) * 100)
    assert fourth["end_ns"] - fourth["start_ns"] == fourth["dur_ns"]
    assert fourth["parts_ns"]["computing"] > 0


def test_iterations_of_a_trace_without_steps(tmp_path, capsys) -> None:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"traceEvents": [x("a", 0, 5, cat="")]}))
    status, out, _ = run_cli(capsys, "iterations", str(path))
    assert status == 0 and out.startswith("no iterations found")
    status, out, _ = run_cli(capsys, "iterations", "--json", str(path))
    assert json.loads(out) == {"source": None, "notes": [], "capture_start_ns": 0,
                               "iterations": [], "items": [], "warnings": []}


# The first step starts 25 µs after the capture (its earliest event, a kernel at 100 µs).
LATE_STEPS = {"traceEvents": [
    x("kernel", 100, 5, tid=7, pid=0, cat="kernel"),
    x("ProfilerStep#1", 125, 40, tid=1, pid=1, cat="user_annotation"),
    x("conv", 130, 10, tid=1, pid=1, cat="cpu_op"),
    x("ProfilerStep#2", 165.5, 60, tid=1, pid=1, cat="user_annotation"),
]}


def test_every_command_counts_relative_times_from_the_capture_start(tmp_path, capsys) -> None:
    """One zero everywhere: iterations (text and JSON), ops --range and export agree on
    where step 2 starts (65.5 µs after the earliest event, not 40.5 after step 1)."""
    path = tmp_path / "late.json"
    path.write_text(json.dumps(LATE_STEPS))
    status, out, _ = run_cli(capsys, "iterations", str(path))
    assert status == 0
    assert out.splitlines()[0].startswith("2 iterations from ProfilerStep#N annotations; "
                                          "starts from the capture start;")
    assert [line.split()[:2] for line in out.splitlines()[2:]] == [["1", "0.025"],
                                                                   ["2", "0.066"]]
    status, out, _ = run_cli(capsys, "iterations", "--json", str(path))
    data = json.loads(out)
    assert data["capture_start_ns"] == 100_000
    assert [it["relative_start_ns"] for it in data["items"]] == [25_000, 65_500]
    status, out, _ = run_cli(capsys, "ops", str(path), "--range", "65.5us:")
    assert out.startswith("ops of range (65.5 us to 125.5 us from the capture start, 60 us)")
    status, out, _ = run_cli(capsys, "export", str(path), "--range", "65.5us:", "--unit", "ns")
    assert out.splitlines()[1].split(",")[:5] == ["ProfilerStep#2", "user_annotation",
                                                  "Process 1", "Thread 1", "65500"]


def test_one_iteration_is_said_in_the_singular(tmp_path, capsys) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"traceEvents": [x("ProfilerStep#7", 0, 5, cat="")]}))
    status, out, _ = run_cli(capsys, "iterations", str(path))
    assert status == 0 and out.startswith("1 iteration from ProfilerStep#N annotations;")



def test_on_a_narrow_terminal_the_last_columns_are_left_out_rather_than_names_cut(
        capsys, monkeypatch):
    # at 80 columns the kineto sample's kernel names were cut to 6 characters
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(capsys, "ops", "--top", "3", str(SAMPLES / "kineto_demo.pt.trace.json"))
    lines = re.sub(r"\x1b\[[0-9;]*m", "", out).splitlines()  # without the colours
    assert code == 0 and all(len(line) <= 80 for line in lines)
    header = next(line for line in lines if line.startswith("Name"))
    assert header.split()[:3] == ["Name", "Count", "Total"] and "Busy(%)" not in header
    assert any(line.startswith("void cudnn::cnn::wgrad_al") for line in lines)  # 24+ cells
    note = next(line for line in lines if line.startswith("not shown at this width: "))
    assert note.split(": ")[1].split(" (")[0].endswith("Window(%), Busy(%)")
    monkeypatch.setenv("COLUMNS", "250")
    code, out, _ = run_cli(capsys, "ops", "--top", "3", str(SAMPLES / "kineto_demo.pt.trace.json"))
    assert "Busy(%)" in out and "not shown" not in out
