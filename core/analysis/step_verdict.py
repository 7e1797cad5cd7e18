"""Is the new step faster, slower, the same, or can the steps not tell: the diff's verdict.

The steps of each side are two small samples (a handful of steps, with a hiccup now and then),
so the test makes no assumption about their distribution:

- Outlier steps (longer than 1.2 x their side's median, as `iterations` marks them) are
  listed and left out of the test, so that one hiccup cannot decide it.
- The test is Mann-Whitney U on the step times, two-sided, exact (its null distribution
  counted over every way to split the pooled steps, ties at their mid-ranks) up to
  :data:`EXACT_UP_TO` steps in all, by the normal approximation beyond.
- The effect is the Hodges-Lehmann shift of the log step times (the median of the ratios
  new / base over every pair of steps, as a percentage), and its confidence interval is the
  distribution-free one of those ratios' order statistics (Moses), at least 95 %.

The outcome: "faster" or "slower" when p <= :data:`ALPHA` and the interval leaves out 0;
else "no change" when the whole interval lies within +-:data:`SAME_PCT` %; else
"inconclusive". The same steps give the same answer: nothing is drawn at random.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proftui.core.ops.instances import OUTLIER_RATIO

ALPHA = 0.05  # the test's level; the interval covers at least 1 - ALPHA
SAME_PCT = 2.0  # an interval within +-this % is "no change"
EXACT_UP_TO = 100  # pooled steps up to which the null distribution is counted exactly
_Z = 1.959963984540054  # the normal quantile of 1 - ALPHA / 2


@dataclass(frozen=True)
class StepVerdict:
    """The outcome of comparing two sides' steps, with its evidence."""

    outcome: str  # "faster", "slower", "no change" or "inconclusive"
    reason: str  # why inconclusive ("" otherwise)
    base_n: int = 0  # steps tested a side (outliers left out)
    new_n: int = 0
    method: str = ""  # "Mann-Whitney U, exact" or "..., normal approximation"
    u: float | None = None  # pairs (base, new) with the new step longer, ties counting half
    p_value: float | None = None
    shift_pct: float | None = None  # Hodges-Lehmann: new / base - 1, in %
    ci_pct: tuple[float, float] | None = None
    confidence: float | None = None  # the interval's own coverage (>= 1 - ALPHA)
    outliers_base: list[int] = field(default_factory=list)  # positions in the steps given
    outliers_new: list[int] = field(default_factory=list)

    @property
    def conclusive(self) -> bool:
        return self.outcome != "inconclusive"

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method or None, "outcome": self.outcome,
                "reason": self.reason, "alpha": ALPHA, "base_n": self.base_n,
                "new_n": self.new_n, "u": self.u, "p_value": self.p_value,
                "shift_pct": self.shift_pct,
                "ci_pct": list(self.ci_pct) if self.ci_pct else None,
                "confidence": self.confidence}


def outliers(steps: Sequence[int]) -> list[int]:
    """Positions of the steps longer than OUTLIER_RATIO x their median. Only long ones: a
    hiccup makes a step longer, never shorter (and a step cut short by the capture's end is
    left out as an edge step before this); two-sided trimming of plain noise would also
    make a difference out of nothing more often than the test's level says."""
    if len(steps) < 3:  # two steps have no majority to call the other an outlier
        return []
    median = float(np.median(steps))
    return [i for i, s in enumerate(steps) if s > median * OUTLIER_RATIO]


def judge_steps(base: Sequence[int], new: Sequence[int]) -> StepVerdict:
    """Compare the step times (ns) of two sides (see the module docstring)."""
    out_b, out_n = outliers(base), outliers(new)
    b = np.array([s for i, s in enumerate(base) if i not in out_b], np.float64)
    n = np.array([s for i, s in enumerate(new) if i not in out_n], np.float64)
    listed = {"outliers_base": out_b, "outliers_new": out_n}
    if len(base) and list(base) == list(new):  # the same steps: nothing changed, certainly
        return StepVerdict("no change", "", len(b), len(n), shift_pct=0.0, **listed)
    if len(b) < 2 or len(n) < 2 or (b <= 0).any() or (n <= 0).any():
        return StepVerdict("inconclusive", "fewer than two steps on a side", len(b), len(n),
                           **listed)
    exact = len(b) + len(n) <= EXACT_UP_TO
    u, p = _mann_whitney(b, n, exact)
    shift, ci, confidence = _hodges_lehmann(b, n, exact)
    evidence = {"base_n": len(b), "new_n": len(n), "u": u, "p_value": p,
                "method": "Mann-Whitney U, " + ("exact" if exact else "normal approximation"),
                "shift_pct": shift, "ci_pct": ci, "confidence": confidence, **listed}
    if ci is None:
        return StepVerdict("inconclusive", f"too few steps ({len(b)} and {len(n)}) for a rank "
                        f"test at {100 * (1 - ALPHA):.0f} %", **evidence)
    if p <= ALPHA and (ci[0] > 0 or ci[1] < 0):
        return StepVerdict("slower" if shift > 0 else "faster", "", **evidence)
    if -SAME_PCT <= ci[0] and ci[1] <= SAME_PCT:
        return StepVerdict("no change", "", **evidence)
    return StepVerdict("inconclusive", f"the steps overlap too much to tell (p={p:.2g})",
                       **evidence)


def _mann_whitney(base: np.ndarray, new: np.ndarray, exact: bool) -> tuple[float, float]:
    """U of the new steps and the two-sided p-value."""
    pooled = np.concatenate([base, new])
    ranks = _mid_ranks(pooled)
    m, total = len(new), len(pooled)
    rank_sum = float(ranks[len(base):].sum())
    u = rank_sum - m * (m + 1) / 2
    expected = m * (total + 1) / 2
    if exact:
        doubled = np.rint(2 * ranks).astype(np.int64)  # mid-ranks are halves at most
        counts = _rank_sum_counts(doubled, m)
        sums = np.arange(len(counts))
        far = np.abs(sums - 2 * expected) >= abs(2 * rank_sum - 2 * expected) - 1e-9
        return u, min(1.0, float(counts[far].sum() / counts.sum()))
    ties = np.unique(pooled, return_counts=True)[1]
    n_b = len(base)
    variance = n_b * m / 12 * ((total + 1) - float((ties ** 3 - ties).sum())
                               / (total * (total - 1)))
    if variance <= 0:
        return u, 1.0
    z = abs(rank_sum - expected) / math.sqrt(variance)
    return u, min(1.0, math.erfc(z / math.sqrt(2)))


def _mid_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, tied values sharing the mean of their ranks."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    unique, inverse = np.unique(values, return_inverse=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / np.bincount(inverse))[inverse]


def _rank_sum_counts(doubled: np.ndarray, m: int) -> np.ndarray:
    """How many of the ways to choose `m` of the items give each sum of `doubled` ranks
    (floats: the counts outgrow int64, and only their ratios matter)."""
    ways = np.zeros((m + 1, int(doubled.sum()) + 1))
    ways[0, 0] = 1.0
    for r in doubled.tolist():  # each item in or out, the sizes counted from the top down
        ways[1:, r:] = ways[1:, r:] + ways[:-1, :len(ways[0]) - r]
    return ways[m]


def _critical(n_b: int, m: int, exact: bool) -> tuple[int, float] | None:
    """The largest c with P(U <= c) <= ALPHA / 2 without ties, and the coverage 1 - 2 P(U <= c)
    of the interval it gives; None when even P(U = 0) is larger."""
    if not exact:
        c = int(math.floor(n_b * m / 2 - _Z * math.sqrt(n_b * m * (n_b + m + 1) / 12)))
        return (c, 1 - ALPHA) if c >= 0 else None
    counts = _rank_sum_counts(np.arange(1, n_b + m + 1, dtype=np.int64), m)
    low = m * (m + 1) // 2  # the least rank sum: U = 0
    cumulative = np.cumsum(counts[low:]) / counts.sum()
    below = np.flatnonzero(cumulative <= ALPHA / 2)
    if not len(below):
        return None
    c = int(below[-1])
    return c, float(1 - 2 * cumulative[c])


def _hodges_lehmann(base: np.ndarray, new: np.ndarray, exact: bool
                    ) -> tuple[float, tuple[float, float] | None, float | None]:
    """The shift of new over base in % (exp of the median log-ratio over all pairs, less 1)
    and its interval with its coverage (None when the steps are too few for one)."""
    ratios = np.sort((np.log(new)[None, :] - np.log(base)[:, None]).ravel())
    shift = _pct(float(np.median(ratios)))
    found = _critical(len(base), len(new), exact)
    if found is None:
        return shift, None, None
    c, confidence = found
    return shift, (_pct(ratios[c]), _pct(ratios[len(ratios) - 1 - c])), confidence


def _pct(log_ratio: float) -> float:
    return round(math.expm1(log_ratio) * 100.0, 6)
