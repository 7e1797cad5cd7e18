"""The roofline arithmetic, worked by hand."""

from __future__ import annotations

import pytest

from proftui.core.perf.hardware import Peaks, match_device
from proftui.core.perf.roofline import rate, ridge
from proftui.core.perf.work import Work

H100 = match_device("NVIDIA H100 80GB HBM3")
# a bf16 4096^3 GEMM: 2*4096^3 FLOPs; three 4096^2 bf16 matrices moved
GEMM = Work(137_438_953_472, 100_663_296, "gemm", "matrix", "bf16")


def test_a_gemm_in_one_millisecond_on_h100() -> None:
    r = rate(GEMM, 1_000_000, H100)
    # 137,438,953,472 FLOP / 1e-3 s = 137.44 TFLOP/s; 100,663,296 B / 1e-3 s = 0.1007 TB/s
    assert r.tflops == pytest.approx(137.438953472)
    assert r.tbps == pytest.approx(0.100663296)
    # intensity 137,438,953,472 / 100,663,296 = 1365.33 FLOP/B; ridge 989.4e12 / 3.35e12
    # = 295.3: far right of it, compute bound; share 137.44 / 989.4 = 0.1389
    assert r.intensity == pytest.approx(4096 / 3)
    assert ridge(H100, GEMM) == pytest.approx(295.343, rel=1e-5)
    assert r.bound == "compute"
    assert r.roof_share == pytest.approx(137.438953472 / 989.4)
    assert r.bandwidth_share == pytest.approx(0.100663296 / 3.35)


def test_a_memory_bound_add() -> None:
    add = Work(1_048_576, 12_582_912, "elementwise", "vector", "fp32")  # 3 fp32 1M tensors
    r = rate(add, 5_000, H100)
    # 12,582,912 B in 5 us = 2.5166 TB/s; the roof at 1/12 FLOP/B is 3.35e12/12 FLOP/s,
    # so the share is the bandwidth's: 2.5166 / 3.35 = 0.7512
    assert r.bound == "memory"
    assert r.roof_share == pytest.approx(2.5165824 / 3.35)
    assert r.roof_share == pytest.approx(r.bandwidth_share)


def test_over_the_roof_is_said_not_clipped() -> None:
    r = rate(GEMM, 100_000, H100)  # 1374 TFLOP/s: more than the 989.4 peak
    assert r.roof_share == pytest.approx(1374.38953472 / 989.4) and r.roof_share > 1


def test_a_copy_has_no_flops_but_a_share() -> None:
    copy = Work(0, 8_000_000, "copy", "vector", "fp32")
    r = rate(copy, 4_000, H100)
    # 8 MB in 4 us = 2 TB/s of 3.35
    assert (r.tflops, r.intensity, r.bound) == (0.0, 0.0, "memory")
    assert r.roof_share == pytest.approx(2 / 3.35)


def test_without_peaks_or_duration() -> None:
    assert rate(GEMM, 0, H100).tflops is None and rate(GEMM, -5, H100).bound is None
    r = rate(GEMM, 1_000_000, None)
    assert r.tflops == pytest.approx(137.438953472) and r.bound is None
    assert r.roof_share is None
    only_bandwidth = Peaks("x", {}, {}, 1e12, "")
    r = rate(GEMM, 1_000_000, only_bandwidth)  # no bf16 peak: the bound cannot be said
    assert r.bound is None and r.bandwidth_share == pytest.approx(0.100663296)
    assert ridge(only_bandwidth, GEMM) is None
