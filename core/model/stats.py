"""Statistics of durations in whole ns, one definition for every command and pane."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def median_ns(durations: Iterable[int]) -> int | None:
    """The median (of an even count, the mean of the middle two), rounded to the ns; None
    when there is none. `info`, `summary` and the Iterations pane print this one."""
    values = np.fromiter(durations, np.float64)
    return int(round(float(np.median(values)))) if len(values) else None


def whole_ns(value: float) -> int | None:
    """A time in float ns (a mean, a profile's own step part) as the integer ns every --json
    has; None for NaN or inf, a time not known."""
    return round(value) if value - value == 0 else None
