"""Steps folded: iterations side by side, each from its own start, for the timeline's folded view.

A fold is either one group's (rank's or device's) steps, or every group's step N. Each step is
a band whose times are drawn less its own start, so that the same work of every step lines up
and a slow step's extra work stands out. At most `limit` bands are kept: the slowest step and
the one nearest the median always, then the steps furthest from the median (the slowest and
the fastest first), shown in step order (group order for a step of every group). The marks and
the "vs median" of each band are the Iterations pane's (:func:`.instances.iterations_table`):
against its own group's median, warm-up left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from proftui.core.model.naming import natural_key
from proftui.core.model.stats import median_ns
from proftui.core.ops.iterations import Iteration

MAX_BANDS = 16
NO_STEPS = ("This profile has no iterations with a time window (no ProfilerStep#N or step "
            "trace), so there are no steps to fold.")


@dataclass(frozen=True)
class Band:
    """One step of a fold: its own window on its group's clock, how much longer (+) or shorter
    (-) than its group's median it is (percent, NaN when unknown) and its mark ("warm-up",
    "slowest", "outlier", "slowest, outlier" or "")."""

    group: str
    number: int
    start_ns: int
    end_ns: int
    vs_median: float = math.nan
    mark: str = ""

    @property
    def dur_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class Fold:
    """The bands shown, in order, and how many steps of the fold there were in all."""

    bands: tuple[Band, ...]
    total: int
    group: str | None = None  # one group's steps
    number: int | None = None  # every group's step `number`

    @property
    def left_out(self) -> int:
        return self.total - len(self.bands)

    @property
    def longest_ns(self) -> int:
        return max((b.dur_ns for b in self.bands), default=0)


def fold_steps(items: Sequence[Iteration], group: str | None = None,
               number: int | None = None, limit: int = MAX_BANDS) -> Fold:
    """The steps of `group` (every step of it), or with `number` every group's step `number`,
    as bands; at most `limit` of them (see the module docstring). Steps without a time window
    are left out; an empty fold has no bands."""
    from proftui.core.ops.instances import iterations_table  # (not needed to draw a first frame)

    timed = [it for it in items if it.start_ns >= 0 <= it.end_ns and it.end_ns > it.start_ns]
    table = iterations_table(timed, 0)
    vs, marks = table.find("vs median").values, table.find("Mark").values  # type: ignore[union-attr]
    bands = [Band(it.group, it.number, it.start_ns, it.end_ns, float(vs[k]), str(marks[k]))
             for k, it in enumerate(timed)
             if (number is not None and it.number == number)
             or (number is None and it.group == (group or ""))]
    bands.sort(key=lambda b: (natural_key(b.group), b.number))
    kept = _kept(bands, limit)
    return Fold(tuple(b for b in bands if id(b) in kept), len(bands),
                None if number is not None else (group or ""), number)


def _kept(bands: list[Band], limit: int) -> set[int]:
    """The ids of the bands kept: the slowest and the median (warm-up left out when there is
    more), then the furthest from the median."""
    if len(bands) <= limit:
        return {id(b) for b in bands}
    judged = [b for b in bands if b.mark != "warm-up"] or bands
    median = median_ns(b.dur_ns for b in judged) or 0
    slowest = max(judged, key=lambda b: b.dur_ns)
    middle = min(judged, key=lambda b: (abs(b.dur_ns - median), b.number))
    rest = sorted((b for b in bands if b is not slowest and b is not middle),
                  key=lambda b: (-abs(b.dur_ns - median), b.number))
    chosen = [slowest, middle, *rest][:max(limit, 2)]
    return {id(b) for b in chosen}
