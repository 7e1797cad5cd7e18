"""The op efficiency table: calls grouped by op and shapes, each group's work and rates
against the device's peaks, worked by hand on an inline Kineto trace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from proftui.core.model.errors import ProftuiError
from proftui.core.perf.efficiency import (
    calls_table,
    efficiency,
    profile_peaks,
    roofline_points,
    shapes_text,
)
from proftui.core.perf.instances import op_instances
from tests.core.helpers import load
from tests.core.perf_inputs import gemm_trace

# [64, 1024] x [1024, 4096] in bf16: 2*64*1024*4096 FLOPs; bytes: A, B read and C written once,
# (64*1024 + 1024*4096 + 64*4096) * 2.
FLOPS = 2 * 64 * 1024 * 4096  # 536,870,912
BYTES = (64 * 1024 + 1024 * 4096 + 64 * 4096) * 2  # 9,043,968
H100_BF16, H100_BW = 989.4e12, 3.35e12  # dense bf16 FLOP/s, bytes/s (H100 SXM5 datasheet)


def _rows(found) -> dict[tuple[str, str], int]:
    table = found.table
    return {(table.find("Op").values[r], table.find("Shapes").values[r]): r
            for r in range(table.n_rows)}


def test_calls_grouped_by_op_and_shapes_with_their_rates(tmp_path) -> None:
    index = load(gemm_trace(tmp_path / "t.json"))
    peaks, said = profile_peaks(index)
    assert peaks is not None and "H100 SXM5" in peaks.device and "named by the profile" in said
    found = efficiency(op_instances(index), peaks)
    rows = _rows(found)
    r = rows[("aten::mm", "64x1024, 1024x4096")]
    col = found.table.find
    # two calls: 20 + 10 µs (two kernels, one call) and 30 µs
    assert col("Count").values[r] == 2 and col("Total").values[r] == 60_000
    assert col("Avg").values[r] == 30_000
    assert col("GFLOP").values[r] == FLOPS / 1e9 and col("MB").values[r] == BYTES / 1e6
    tflops = FLOPS / 30e-6 / 1e12  # one call's FLOPs in its mean time: 17.896 TFLOP/s
    assert math.isclose(col("TFLOP/s").values[r], tflops)
    assert math.isclose(col("TB/s").values[r], BYTES / 30e-6 / 1e12)
    intensity = FLOPS / BYTES  # 59.36 FLOP/B, under the ridge (989.4 / 3.35 = 295.3)
    assert math.isclose(col("FLOP/B").values[r], intensity)
    assert col("Bound").values[r] == "memory"
    # the roof at this intensity: 59.36 * 3.35 TB/s = 198.9 TFLOP/s; 17.9 of it is 9.0 %
    assert math.isclose(col("Roof").values[r], 100 * tflops * 1e12 / (intensity * H100_BW))
    assert col("Model").values[r] == "gemm" and col("Dtypes").values[r] == "bf16"
    index_select = rows[("aten::index_select", "64x1024, -, 8")]
    assert col("Model").values[index_select] == "none: no model for aten::index_select"
    assert np.isnan(col("TFLOP/s").values[index_select])
    # the time the models cover: the three aten::mm calls (60 + 10 µs) of 75 µs with shapes;
    # the aten::cat's 5 µs has none (a tensor list): no row, its time said apart
    assert (found.modelled_ns, found.total_ns, found.unshaped_ns) == (70_000, 75_000, 5_000)
    assert ("aten::cat", "-, -") not in rows
    # costliest first
    assert found.table.find("Total").values.tolist() == [60_000, 10_000, 5_000]


def test_a_calls_kernels_are_one_call(tmp_path) -> None:
    index = load(gemm_trace(tmp_path / "t.json"))
    found = efficiency(op_instances(index), None)
    group = next(g for g in found.groups if g.inputs == ((64, 1024), (1024, 4096)))
    assert group.calls == 2 and group.call_ns == [30_000, 30_000]
    table = calls_table(index, group, None)
    assert table.find("Duration").values.tolist() == [30_000, 30_000]
    assert [index.slice_name(int(s)) for s in table.find("Slice").values] == ["gemm_a"] * 2
    assert np.isnan(table.find("Roof").values).all()  # no peaks: no roof
    assert np.allclose(table.find("TFLOP/s").values, FLOPS / 30e-6 / 1e12)


def test_without_peaks_rates_but_no_roof(tmp_path) -> None:
    index = load(gemm_trace(tmp_path / "t.json", device=None))
    peaks, said = profile_peaks(index)
    assert peaks is None and "does not name its device" in said
    found = efficiency(op_instances(index), peaks)
    r = _rows(found)[("aten::mm", "64x1024, 1024x4096")]
    assert not np.isnan(found.table.find("TFLOP/s").values[r])
    assert found.table.find("Bound").values[r] == ""
    assert np.isnan(found.table.find("Roof").values[r])
    points, roof = roofline_points(found)
    assert roof is None and len(points) == 2


def test_peaks_chosen_by_device_file_or_figures(tmp_path) -> None:
    index = load(gemm_trace(tmp_path / "t.json", device=None))
    peaks, said = profile_peaks(index, device="NVIDIA A100-SXM4-80GB")
    assert peaks is not None and "A100" in peaks.device and "--device" in said
    peaks, said = profile_peaks(index, tflops=100, tbps=2)
    assert peaks.matrix["bf16"] == 100e12 and peaks.bandwidth == 2e12
    assert "--peak-tflops 100" in said
    bad = tmp_path / "peaks.csv"
    bad.write_text("device,nonsense\nx,1\n")
    with pytest.raises(ProftuiError):
        profile_peaks(index, peaks_file=str(bad))


def test_roof_of_the_dtype_most_matrix_time_runs_in(tmp_path) -> None:
    index = load(gemm_trace(tmp_path / "t.json"))
    found = efficiency(op_instances(index), profile_peaks(index)[0])
    points, roof = roofline_points(found)
    assert roof is not None and roof.flops == H100_BF16 and roof.bandwidth == H100_BW
    assert "bf16 matrix peak 989.4 TFLOP/s" in roof.text
    mm = next(p for p in points if p.label.startswith("aten::mm 64x1024"))
    assert mm.time_ns == 60_000 and math.isclose(mm.flops_per_s, 2 * FLOPS / 60e-6)


def test_shapes_text_names_the_first_inputs() -> None:
    assert shapes_text(((32, 9216), None, (4096,))) == "32x9216, -, 4096"
    assert shapes_text(tuple((i,) for i in range(1, 8))) == "1, 2, 3, 4, ... +3"


def test_what_to_capture_is_said_in_a_sentence(tmp_path) -> None:
    from tests.core.helpers import write_trace
    from tests.core.perf_inputs import call

    # kernels whose ops recorded no shapes (record_shapes off)
    bare = [dict(e, args={k: v for k, v in e.get("args", {}).items()
                          if k not in ("Input Dims", "Input type")})
            for e in call(1, "aten::mm", 100, [[4, 4], [4, 4]], ["float"] * 2, [("g", 5)])]
    found = efficiency(op_instances(load(write_trace(tmp_path / "a.json", bare))), None)
    assert found.table.n_rows == 0 and found.unshaped_ns == 5_000
    assert found.notes == ("No op in the trace recorded its input shapes: profile with "
                           "torch.profiler.profile(record_shapes=True).",)
    # no device task at all
    host = [{"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]
    found = efficiency(op_instances(load(write_trace(tmp_path / "b.json", host))), None)
    assert found.notes[0].startswith("The profile holds no device task")
    # shapes given: nothing to say
    assert efficiency(op_instances(load(gemm_trace(tmp_path / "c.json"))), None).notes == ()


def test_ascend_rows_without_counters_say_how_to_capture_them(tmp_path) -> None:
    from tests.core.test_perf_instances import _ascend_profile

    folder = _ascend_profile(tmp_path)
    details = next(folder.rglob("kernel_details.csv"))
    lines = details.read_text().splitlines()
    # the counters' three columns gone
    details.write_text("\n".join(",".join(line.split(",")[:-3]) for line in lines) + "\n")
    from proftui.core import load_trace

    found = efficiency(op_instances(load_trace(str(folder), use_cache=False)), None)
    assert found.table.n_rows == 3  # its three rows' shapes, all distinct
    assert found.notes == ("The profiler's rows give no pipe counters (aic_mac_ratio, "
                           "aiv_vec_ratio ...): capture with experimental_config "
                           "aic_metrics=PipeUtilization.",)


def test_ascend_tasks_of_one_torch_op_are_ops_of_their_own(tmp_path) -> None:
    """Two kernel_details rows launched by one torch op (aten::linear: a MatMulV2, then an
    Add for its bias) are two ops, each with its shapes and time: not one call of either."""
    from proftui.core import load_trace
    from tests.core.test_perf_instances import _ascend_profile

    folder = _ascend_profile(tmp_path)
    found = op_instances(load_trace(str(folder), use_cache=False))
    # the first and second rows: give both the first task's host op, as one launch would
    hosts = found.host_slices.copy()
    hosts[1] = hosts[0] = max(int(hosts[0]), 0)
    rows = efficiency(type(found)(**{**vars(found), "host_slices": hosts}), None)
    assert sorted(g.calls for g in rows.groups) == [1, 1, 1]
