"""Speed in the users' own words: steps a second beside the step time, samples a second when
the batch size is known, and the share of the step spent loading data.

Paddle's profiler summary speaks of ips, ``batch_cost`` (the mean step time), ``reader_cost``
(the mean time a step waits for its batch) and ``Reader Ratio`` = reader_cost / batch_cost,
and calls an input pipeline over 5 % a bottleneck; torch users count samples a second. Here:

- ``steps_per_s`` = 1 s / the median step time printed beside it (a mean, as Paddle's, would
  let one slow step move it);
- ``samples_per_s`` = batch size x steps_per_s, where the batch size is given;
- ``reader_ratio`` = the data loading of the steps over their time, summed over the steps
  (Paddle's mean reader_cost over mean batch_cost); data loading is the host's DataLoader /
  Dataloader slices inside the step (:mod:`proftui.core.analysis.breakdown`'s
  ``dataloader_ns``); None where no step marks any.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proftui.core.analysis.breakdown import StepBreakdown

NS_PER_S = 1_000_000_000


def steps_per_s(step_ns: int | None) -> float | None:
    """Steps a second at a step time of `step_ns` (None for none or a zero step)."""
    return NS_PER_S / step_ns if step_ns else None


def reader_ratio(steps: Sequence[StepBreakdown]) -> float | None:
    """The steps' data loading over their time (a step marking none counts as 0 loading);
    None where no step marks any, or the steps take no time."""
    loading = [s.host.get("dataloader_ns") for s in steps if s.iteration is not None]
    if not any(v is not None for v in loading):
        return None
    total = sum(s.step_ns for s in steps if s.iteration is not None)
    return sum(v or 0 for v in loading) / total if total > 0 else None


def speed(step_ns: int | None, steps: Sequence[StepBreakdown] = (),
          batch_size: int | None = None) -> dict[str, Any]:
    """The speed of one group whose median step is `step_ns`, `steps` its steps' breakdowns:
    steps_per_s, samples_per_s (None without `batch_size`), batch_size and reader_ratio."""
    rate = steps_per_s(step_ns)
    return {"steps_per_s": rate,
            "samples_per_s": rate * batch_size if rate is not None and batch_size else None,
            "batch_size": batch_size,
            "reader_ratio": reader_ratio(steps)}


def speed_text(entry: dict[str, Any]) -> str:
    """"6.45 steps/s, 413 samples/s (batch 64), data loading 23.1 %" (what is known of it),
    for the text outputs."""
    parts = []
    if entry.get("steps_per_s") is not None:
        parts.append(f"{rate_text(entry['steps_per_s'])} steps/s")
    if entry.get("samples_per_s") is not None:
        parts.append(f"{rate_text(entry['samples_per_s'])} samples/s (batch "
                     f"{entry['batch_size']})")
    if entry.get("reader_ratio") is not None:
        parts.append(f"data loading {entry['reader_ratio'] * 100:.1f} %")
    return ", ".join(parts)


def rate_text(value: float) -> str:
    """Three significant digits, and thousands apart: 6.45, 354, 11,300."""
    return f"{value:.3g}" if value < 1000 else f"{float(f'{value:.3g}'):,.0f}"
