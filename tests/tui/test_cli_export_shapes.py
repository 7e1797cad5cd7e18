"""`proftui export --shapes`: each event's input shapes and dtypes, a device task's from the
profiler's row behind it, a host op's from its own args."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

from tui_support import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.core.perf_inputs import gemm_trace  # noqa: E402
from tests.core.test_perf_instances import _ascend_profile  # noqa: E402


def _rows(out: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(out)))


def test_kineto_kernels_take_their_host_ops_shapes(tmp_path, capsys) -> None:
    code, out, _ = run_cli(capsys, "export", "--all", "--shapes", gemm_trace(tmp_path / "t.json"))
    assert code == 0
    rows = {(r["name"], r["start_from_capture(us)"]): r for r in _rows(out)}
    first = rows[("gemm_a", "200.000")]
    assert first["input_shapes"] == "64x1024;1024x4096"
    assert first["input_dtypes"] == "c10::BFloat16;c10::BFloat16"
    host = rows[("aten::mm", "0.000")]
    assert host["input_shapes"] == "64x1024;1024x4096"
    assert rows[("cudaLaunchKernel", "1.000")]["input_shapes"] == ""  # no shapes: empty
    assert rows[("aten::index_select", "3000.000")]["input_shapes"] == "64x1024;-;8"
    assert rows[("aten::cat", "4000.000")]["input_shapes"] == "-;-"


def test_ascend_tasks_take_their_kernel_details_row(tmp_path, capsys) -> None:
    code, out, _ = run_cli(capsys, "export", "--all", "--shapes", _ascend_profile(tmp_path))
    assert code == 0
    tasks = [r for r in _rows(out) if r["name"] == "MatMul1"]
    # the task with a row, then the two without (one on another stream, one 1 ns off)
    assert [r["input_shapes"] for r in tasks] == ["32x9216;9216x4096", "", ""]
    assert tasks[0]["input_dtypes"] == "FLOAT;FLOAT"


def test_shapes_is_for_the_events_csv(tmp_path, capsys) -> None:
    code, _, err = run_cli(capsys, "export", "--all", "--what", "ops", "--shapes",
                           gemm_trace(tmp_path / "t.json"))
    assert code == 2 and "--shapes applies to the events' CSV only" in err
