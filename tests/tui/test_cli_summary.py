"""`proftui summary` of what a newcomer opens first: kernel names longer than the screen,
and a profile of summary tables without a timeline."""

from __future__ import annotations

import json
from pathlib import Path

from tui_support import run_cli

from proftui.tui.text.format import shorten_apart, shorten_middle

# Two instantiations of one template: they differ in the middle only.
HEAD = "void at::native::vectorized_elementwise_kernel<4, at::native::"
TAIL = ", at::detail::Array<char*, 3> >(int, " + "float, " * 30 + "float)"
LONG_A = HEAD + "threshold_kernel_impl<float>" + TAIL
LONG_B = HEAD + "AddFunctor<float>" + TAIL


def _kernel(name, ts, dur):
    return {"ph": "X", "name": name, "cat": "kernel", "pid": 0, "tid": 7, "ts": ts, "dur": dur}


def test_shortening_keeps_both_ends_and_tells_apart_what_differs() -> None:
    assert shorten_middle("abcdefghij", 10) == "abcdefghij"
    assert shorten_middle("abcdefghijklmnopqrstuvwxyz", 11) == "abcdef…wxyz"
    short = shorten_apart([LONG_A, LONG_B, "relu"], 50)
    assert all(len(s) <= 50 for s in short) and short[2] == "relu"
    assert len(set(short)) == 3
    assert "threshold" in short[0] and short[0].startswith("void at::nat")


def test_summary_cuts_long_names_in_the_middle_to_the_width(capsys, tmp_path,
                                                            monkeypatch) -> None:
    """At 80 columns every line of the op tables fits, each name keeps its start and end,
    the two that differ in the middle are told apart; --json has the names whole."""
    events = [{"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "pid": 1,
               "tid": 1, "ts": 0, "dur": 100},
              _kernel(LONG_A, 10, 40), _kernel(LONG_B, 50, 30), _kernel("relu", 80, 5)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    monkeypatch.setenv("COLUMNS", "80")
    status, out, _ = run_cli(capsys, "summary", "--no-cache", str(path))
    assert status == 0
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("top device op types"))
    rows = lines[at + 2:at + 5]
    assert all(len(line) <= 80 for line in lines[at:at + 5])
    names = [row.rsplit(None, 4)[0] for row in rows]
    assert names[2] == "relu" and len(set(names)) == 3
    assert all(n.startswith("void at::nat") and n.endswith(")") and "…" in n
               for n in names[:2])
    status, out, _ = run_cli(capsys, "summary", "--json", str(path))
    whole = {r["name"] for r in json.loads(out)["top_device_types"]["rows"]}
    assert {LONG_A, LONG_B} <= whole


OP_STATISTIC = (
    "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
    "Add,AI_VECTOR_CORE,10,50,4,5,6,10\n"
    "MatMul,AI_CORE,4,400,90,100,110,80\n"
    "Cast,AI_VECTOR_CORE,20,50,2,2.5,3,10\n")
# torch_npu's step_trace_time.csv of one step (µs): Stage 136581 = Computing +
# Communication(Not Overlapped) + Free; Preparing before it.
STEP_TRACE_TIME = (
    "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
    "Communication(Not Overlapped and Exclude Receive),Preparing\n"
    "50,8873.756,101963.203,4028.675,105991.878,25744.05,136581.0,0,101963.203,17902.5\n")


def test_summary_of_a_profile_of_tables_only(capsys, tmp_path) -> None:
    """No timeline: the step from step_trace_time.csv (as long as its disjoint parts), the
    op types from op_statistic by their share, and no empty busy table."""
    out_dir = tmp_path / "worker_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out_dir.mkdir(parents=True)
    (out_dir / "op_statistic.csv").write_text(OP_STATISTIC)
    (out_dir / "step_trace_time.csv").write_text(STEP_TRACE_TIME)
    status, out, _ = run_cli(capsys, "summary", "--no-cache", str(tmp_path / "worker_ascend_pt"))
    assert status == 0
    lines = out.splitlines()
    assert lines[1].startswith("no timeline: summarised from its tables")
    assert ["step", "time", "(median)", "154.484", "ms"] in [line.split() for line in lines]
    at = next(n for n, line in enumerate(lines) if line.startswith("top device op types"))
    assert lines[at].endswith("(from op_statistic)")
    assert [line.split()[:2] for line in lines[at + 2:at + 5]] == [
        ["MatMul", "(AI_CORE)"], ["Add", "(AI_VECTOR_CORE)"], ["Cast", "(AI_VECTOR_CORE)"]]
    assert lines[at + 2].split()[-1] == "80.00%"  # op_statistic's own Ratio(%)
    assert "busy time" not in out
    status, out, _ = run_cli(capsys, "summary", "--json", str(tmp_path / "worker_ascend_pt"))
    report = json.loads(out)
    (group,) = report["iterations"]["groups"]
    assert group["length_from"] == "parts" and group["timed"] == 0
    assert group["median_ns"] == 17_902_500 + 8_873_756 + 101_963_203 + 25_744_050
    top = report["top_device_types"]
    assert top["table"] == "op_statistic" and top["time_ns"] == 500_000
    assert [(r["name"], r["count"], r["time_ns"], r["ratio"]) for r in top["rows"]] == [
        ("MatMul (AI_CORE)", 4, 400_000, 0.8), ("Add (AI_VECTOR_CORE)", 10, 50_000, 0.1),
        ("Cast (AI_VECTOR_CORE)", 20, 50_000, 0.1)]


def test_info_and_summary_give_the_same_median_step(capsys, tmp_path) -> None:
    # ms: the warm-up (5 ms) left out, an even count: the median is 25 ms, as info says
    steps = [(0, 5), (5, 10), (15, 20), (35, 30), (65, 50)]
    events = [{"ph": "X", "name": f"ProfilerStep#{n}", "cat": "user_annotation", "pid": 1,
               "tid": 1, "ts": ts * 1000, "dur": dur * 1000}
              for n, (ts, dur) in enumerate(steps, 1)]
    events += [_kernel("k", ts * 1000 + 1, dur * 1000 - 2) for ts, dur in steps]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    status, out, _ = run_cli(capsys, "info", path)
    assert status == 0 and "median 25 ms, slowest #5 50 ms (warm-up left out)" in out, out
    status, out, _ = run_cli(capsys, "summary", "--json", path)
    groups = json.loads(out)["iterations"]["groups"]
    assert [g["median_ns"] for g in groups] == [25_000_000]


def test_summary_says_steps_and_samples_a_second(capsys, tmp_path) -> None:
    events = [{"ph": "X", "name": f"ProfilerStep#{n}", "cat": "user_annotation", "pid": 1,
               "tid": 1, "ts": n * 40_000, "dur": 40_000} for n in range(3)]  # 40 ms steps
    events += [_kernel("k", n * 40_000 + 1, 100) for n in range(3)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    status, out, _ = run_cli(capsys, "summary", path, "--batch-size", "64")
    assert status == 0 and "; 25 steps/s, 1,600 samples/s (batch 64)" in out, out
    status, out, _ = run_cli(capsys, "summary", "--json", path)
    group = json.loads(out)["iterations"]["groups"][0]
    assert group["steps_per_s"] == 25.0 and group["samples_per_s"] is None
    status, _, err = run_cli(capsys, "summary", path, "--batch-size", "0")
    assert status == 2 and "--batch-size wants 1 or more" in err


def test_breakdown_gives_the_speed_summary_gives(capsys) -> None:
    sample = Path(__file__).resolve().parents[2] / "samples" / "cluster_2rank"
    _, out, _ = run_cli(capsys, "summary", "--json", sample, "--batch-size", "16")
    said = {g["group"]: g for g in json.loads(out)["iterations"]["groups"]}
    _, out, _ = run_cli(capsys, "breakdown", "--json", sample, "--batch-size", "16")
    speed = json.loads(out)["speed"]
    assert [s["group"] for s in speed] == ["rank 0", "rank 1"]
    for entry in speed:
        for key in ("median_ns", "steps_per_s", "samples_per_s", "reader_ratio"):
            assert entry[key] == said[entry["group"]][key], key
    _, out, _ = run_cli(capsys, "breakdown", sample, "--batch-size", "16")
    assert "speed of rank 0: 91.2 steps/s, 1,460 samples/s (batch 16)" in out
