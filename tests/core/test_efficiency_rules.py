"""The advisor's efficiency rules: large matrix ops far under their roof (with what in their
shapes and dtype keeps them there) and many tiny kernels of one kind; worked by hand on inline
Kineto traces."""

from __future__ import annotations

from proftui.core.analysis.advise import advise
from proftui.core.ops.iterations import find_iterations
from tests.core.helpers import load, write_trace
from tests.core.perf_inputs import BF16, H100, call


def _finding(advice, rule: str):
    return next((f for f in advice.findings if f.rule == rule), None)


def _skipped(advice, rule: str) -> str:
    return dict(advice.skipped).get(rule, "")


def _advice(tmp_path, events, device=H100):
    top = {"deviceProperties": device} if device else {}
    index = load(write_trace(tmp_path / "t.json", events, **top))
    return advise(index, find_iterations(index), ())


def test_a_large_gemm_far_under_its_roof(tmp_path) -> None:
    # [4096, 4096] x [4096, 4100]: 2 * 4096 * 4096 * 4100 = 137.6 GFLOP in 1 ms = 137.6
    # TFLOP/s; intensity ~1366 FLOP/B, over the H100's ridge (295): the roof is 989.4, so
    # 13.9 % of it. Cost at 30 %: 1 ms x (1 - 0.139 / 0.3) = 0.536 ms. A second, fp32 one:
    # 4 x the bytes, the same FLOPs in 2 ms, under the fp32 roof of 66.9 TFLOP/s? 68.8 of it:
    # over 100 %, so not flagged.
    events = (call(1, "aten::mm", 1000, [[4096, 4096], [4096, 4100]], [BF16, BF16],
                   [("gemm_big", 1000)])
              + call(2, "aten::mm", 5000, [[4096, 4096], [4096, 4100]], ["float", "float"],
                     [("gemm_fp32", 2000)]))
    f = _finding(_advice(tmp_path, events), "under_roof")
    assert f is not None and f.numbers["device"].startswith("NVIDIA H100 SXM5")
    (op,) = f.numbers["ops"]
    assert op["shapes"] == [[4096, 4096], [4096, 4100]] and op["calls_per_step"] == 1
    flops = 2 * 4096 * 4096 * 4100
    share = flops / 1e-3 / 989.4e12
    assert abs(op["roof_pct"] - 100 * share) < 1e-9
    assert abs(f.time_lost_ns - 1e6 * (1 - share / 0.3)) <= 1
    assert op["hints"] == ["dims not multiples of 16 (the matrix units' tile): 4100"]
    assert [e.label for e in f.evidence] == [
        "aten::mm 4096x4096, 4096x4100: 14% of its roof"]


def test_under_roof_needs_the_device(tmp_path) -> None:
    events = call(1, "aten::mm", 1000, [[4096, 4096], [4096, 4096]], [BF16, BF16],
                  [("gemm", 1000)])
    advice = _advice(tmp_path, events, device=None)
    assert _finding(advice, "under_roof") is None
    assert _skipped(advice, "under_roof").startswith("no peaks to judge by")


def test_many_tiny_kernels_of_one_kind(tmp_path) -> None:
    # one step of 150 kernels "tiny_add" of 2 µs each (launched 1 µs each) and 20 of 50 µs
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1,
               "tid": 1, "ts": 0, "dur": 100_000}]
    for i in range(150):
        events += call(10 + i, "aten::add", 100 + 100 * i, [[8], [8]], [BF16, BF16],
                       [("tiny_add", 2)])
    for i in range(20):
        events += call(500 + i, "aten::mm", 40_000 + 1000 * i, [[8, 8], [8, 8]], [BF16, BF16],
                       [("gemm", 50)])
    advice = _advice(tmp_path, events)
    f = _finding(advice, "tiny_kernels")
    assert f is not None
    assert f.numbers["kernels_per_step"] == 150
    assert f.numbers["kinds"] == [{"name": "tiny_add", "per_step": 150, "avg_ns": 2000,
                                   "time_ns_per_step": 300_000}]
    assert f.numbers["launch_ns"] == 1000 and f.numbers["launch_ns_per_step"] == 150_000
    assert f.time_lost_ns == 300_000
    # the fused NPU APIs are torch_npu's: a GPU profile is not told to call them
    assert "ran on a GPU" in _skipped(advice, "fused_ops")


def test_under_roof_says_when_there_are_too_many_kernels_to_read(tmp_path) -> None:
    events = call(1, "aten::mm", 1000, [[4096, 4096], [4096, 4100]], [BF16, BF16],
                  [("gemm_big", 1000)])
    index = load(write_trace(tmp_path / "t.json", events, deviceProperties=H100))
    advice = advise(index, find_iterations(index), (), {"under_roof": {"max_kernels": 0}})
    assert _finding(advice, "under_roof") is None
    assert _skipped(advice, "under_roof").startswith(
        "1 matrix kernel in the steps considered, more than max_kernels (0)")


def test_under_roof_judges_by_the_peaks_asked_for(tmp_path) -> None:
    """`proftui advise --peak-tflops X --peak-tbps Y` where the profile names no device."""
    events = call(1, "aten::mm", 1000, [[4096, 4096], [4096, 4100]], [BF16, BF16],
                  [("gemm_big", 1000)])
    index = load(write_trace(tmp_path / "t.json", events))
    advice = advise(index, find_iterations(index), (), peaks={"tflops": 989.4, "tbps": 3.35})
    f = _finding(advice, "under_roof")
    assert f is not None and f.numbers["device"] == "unknown device"
    assert abs(f.numbers["ops"][0]["roof_pct"] - 100 * 2 * 4096 * 4096 * 4100 / 1e-3
               / 989.4e12) < 1e-9
