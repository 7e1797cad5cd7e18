"""The roofline: what an op achieved (TFLOP/s, TB/s) against the roof its arithmetic
intensity puts it under, min(peak FLOP/s, intensity x bandwidth).

The share of the roof is the ideal time over the real one, max(flops/peak, bytes/bandwidth)
/ duration: the same as achieved FLOP/s over the roof where there are FLOPs, and the share of
the bandwidth for an op with none (a copy). It is not clipped: above 1 means the model
counts more work than the op did (a masked attention counted dense, TF32 for fp32).
"""

from __future__ import annotations

from dataclasses import dataclass

from proftui.core.perf.hardware import Peaks, peak_flops
from proftui.core.perf.work import Work


@dataclass(frozen=True)
class Rate:
    tflops: float | None        # achieved TFLOP/s (flops / duration)
    tbps: float | None          # achieved TB/s
    intensity: float | None     # FLOP per byte
    bound: str | None           # "compute" or "memory", None without the peaks to say
    roof_share: float | None    # ideal time over real time (may exceed 1: see above)
    bandwidth_share: float | None = None  # achieved bytes/s over the device's bandwidth


NONE = Rate(None, None, None, None, None, None)


def _ideal(amount: int, peak: float | None) -> float | None:
    """Seconds `amount` takes at `peak`; 0 for nothing to do; None without a peak."""
    if amount == 0:
        return 0.0
    return amount / peak if peak else None


def rate(work: Work, dur_ns: int, peaks: Peaks | None) -> Rate:
    if dur_ns <= 0:
        return NONE
    seconds = dur_ns / 1e9
    intensity = work.flops / work.bytes if work.bytes > 0 else None
    tflops, tbps = work.flops / seconds / 1e12, work.bytes / seconds / 1e12
    if peaks is None:
        return Rate(tflops, tbps, intensity, None, None, None)
    bandwidth = peaks.bandwidth or None
    compute = _ideal(work.flops, peak_flops(peaks, work))
    memory = _ideal(work.bytes, bandwidth)
    bw_share = work.bytes / seconds / bandwidth if bandwidth else None
    if compute is None or memory is None or compute == memory == 0:
        return Rate(tflops, tbps, intensity, None, None, bw_share)
    bound = "compute" if compute >= memory else "memory"
    return Rate(tflops, tbps, intensity, bound, max(compute, memory) / seconds, bw_share)


def ridge(peaks: Peaks, work: Work) -> float | None:
    """The intensity (FLOP/byte) where the roofs meet for this work's unit and dtype."""
    peak = peak_flops(peaks, work)
    return peak / peaks.bandwidth if peak and peaks.bandwidth else None
