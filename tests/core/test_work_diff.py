"""diff says whether a changed op's work (its FLOPs) or its speed (its FLOP/s) changed, where a
perf model covers its calls on both sides; worked by hand on inline Kineto traces."""

from __future__ import annotations

import json
from pathlib import Path

from proftui.core.analysis.work_diff import WorkDelta
from proftui.tui.cli import main
from tests.core.helpers import write_trace
from tests.core.perf_inputs import BF16, H100, call


def _trace(path: Path, m: int, kernel_us: int) -> Path:
    """Four steps, each one aten::mm [m, 1024] x [1024, 4096] in bf16, its kernel `gemm`
    taking `kernel_us`."""
    events = []
    for step in range(4):
        at = step * 10_000
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 1, "tid": 1, "ts": at, "dur": 9_000})
        events += call(step + 1, "aten::mm", at + 100, [[m, 1024], [1024, 4096]], [BF16, BF16],
                       [("gemm", kernel_us)])
    return write_trace(path, events, deviceProperties=H100)


def _work(capsys, base: Path, new: Path) -> dict:
    assert main(["diff", "--json", str(base), str(new)]) in (0, 1, 3)
    found = json.loads(capsys.readouterr().out)
    return next(o["work"] for o in found["ops"] if o["name"] == "gemm")


def test_the_same_work_done_faster_is_speed(tmp_path, capsys) -> None:
    work = _work(capsys, _trace(tmp_path / "a.json", 64, 30), _trace(tmp_path / "b.json", 64, 15))
    flops = 2 * 64 * 1024 * 4096  # per step: one call
    assert (work["base_flops"], work["new_flops"]) == (flops, flops)
    assert abs(work["base_tflops"] - flops / 30e-6 / 1e12) < 1e-9
    assert abs(work["new_tflops"] - flops / 15e-6 / 1e12) < 1e-9
    assert work["cause"] == "speed"


def test_twice_the_work_at_the_same_rate_is_work(tmp_path, capsys) -> None:
    work = _work(capsys, _trace(tmp_path / "a.json", 64, 30), _trace(tmp_path / "b.json", 128, 60))
    assert work["new_flops"] == 2 * work["base_flops"] and work["cause"] == "work"


def test_causes() -> None:
    assert WorkDelta("k", 100.0, 100.0, 10.0, 10.0).cause == "same"
    assert WorkDelta("k", 100.0, 150.0, 10.0, 10.0).cause == "both"  # more work, faster
    assert WorkDelta("k", 100.0, 0.0, 10.0, 0.0).cause == ""  # no modelled call on one side


def test_too_many_kernels_to_read_is_said_not_waited_for(tmp_path, capsys, monkeypatch) -> None:
    from proftui.core.analysis import work_diff

    monkeypatch.setattr(work_diff, "MAX_KERNELS", 3)  # each side has 4 modelled kernels
    base, new = _trace(tmp_path / "a.json", 64, 30), _trace(tmp_path / "b.json", 64, 15)
    assert main(["diff", "--json", str(base), str(new)]) in (0, 1, 3)
    found = json.loads(capsys.readouterr().out)
    assert all(o["work"] is None for o in found["ops"])
    assert any(w["message"].startswith("the ops' work and speed are not compared: 4 kernels'")
               for w in found["warnings"])
