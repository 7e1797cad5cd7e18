"""What the advisor is made of: a rule, the finding it makes with its evidence, what the
rules read (:class:`Context`), and the helpers the rules of :mod:`.advise` and
:mod:`.op_rules` share (a finding's cost and severity, the steps a time is in)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proftui.core.analysis import activity as act
from proftui.core.analysis.breakdown import TIMELINE, StepBreakdown
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.iterations import Iteration, steps_at

RULES_VERSION = 2
MAX_EVIDENCE = 20
HIGH_SHARE, MEDIUM_SHARE = 0.05, 0.01


@dataclass(frozen=True)
class Evidence:
    """A time range on the timeline that shows a finding, and what it holds."""

    start_ns: int
    end_ns: int
    label: str
    group: str = ""
    iteration: int | None = None
    slice: int | None = None  # the slice it is, where it is one (its row in the index)

    def to_json(self) -> dict[str, Any]:
        return {"start_ns": self.start_ns, "end_ns": self.end_ns, "label": self.label,
                "group": self.group, "iteration": self.iteration, "slice": self.slice}


@dataclass(frozen=True)
class Finding:
    """One problem found: its rule, cost per step, the numbers behind it and its evidence."""

    rule: str
    group: str
    title: str
    time_lost_ns: int
    share: float
    numbers: dict[str, Any]
    evidence: list[Evidence]
    suggestion: str
    source: str = TIMELINE  # where its numbers come from: "timeline", or the tables read

    @property
    def severity(self) -> str:
        return ("high" if self.share >= HIGH_SHARE else
                "medium" if self.share >= MEDIUM_SHARE else "low")

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "group": self.group, "severity": self.severity,
                "title": self.title, "time_lost_ns": self.time_lost_ns, "share": self.share,
                "numbers": self.numbers, "evidence": [e.to_json() for e in self.evidence],
                "suggestion": self.suggestion, "source": self.source}


@dataclass
class Context:
    """What the rules read: the index, its tables, and per group the steps considered."""

    index: TraceIndex
    tables: Sequence[Table]
    steps: dict[str, list[StepBreakdown]]  # per group, warm-up left out
    # How the device's peaks were asked for (profile_peaks' keywords: device, peaks_file,
    # tflops, tbps); none: the device the profile names.
    peaks: dict[str, Any] = field(default_factory=dict)

    def median_step_ns(self, group: str) -> float:
        return float(np.median([b.step_ns for b in self.steps[group]]))

    def mean(self, group: str, side: str, key: str) -> float:
        values = [getattr(b, side)[key] for b in self.steps[group]
                  if getattr(b, side) is not None and getattr(b, side)[key] is not None]
        return float(np.mean(values)) if values else 0.0


class Skip(Exception):
    """A rule cannot run on this profile; the message says why."""


Check = Callable[[Context, str, dict[str, float]], "Finding | None"]


@dataclass(frozen=True)
class Rule:
    """One advisor rule: `check(context, group, params)` returns a finding or None, or raises
    Skip."""

    id: str
    measures: str
    params: dict[str, float]
    suggestion: str
    check: Check = field(repr=False)

    def to_json(self, params: dict[str, float] | None = None) -> dict[str, Any]:
        return {"rule": self.id, "measures": self.measures,
                "thresholds": params if params is not None else self.params,
                "suggestion": self.suggestion}


@dataclass(frozen=True)
class Advice:
    """Findings sorted by time lost, and the rules skipped with the reason."""

    findings: list[Finding]
    skipped: list[tuple[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"version": RULES_VERSION, "findings": [f.to_json() for f in self.findings],
                "skipped": [{"rule": r, "reason": why} for r, why in self.skipped]}




def make_finding(ctx: Context, rule: Rule, group: str, title: str, lost: float,
             numbers: dict[str, Any], evidence: list[Evidence]) -> Finding:
    median = ctx.median_step_ns(group)
    share = lost / median if median > 0 else 0.0
    evidence = sorted(evidence, key=lambda e: e.start_ns - e.end_ns)[:MAX_EVIDENCE]
    source = numbers.pop("source", None) or source_of(ctx, group)
    return Finding(rule.id, group, title, int(round(lost)), share, numbers, evidence,
                   rule.suggestion, source)


def from_tables(ctx: Context, group: str) -> bool:
    """Whether `group` has no timeline: its steps come from its tables."""
    return not any(b.timed for b in ctx.steps[group])


def source_of(ctx: Context, group: str) -> str:
    return ", ".join(dict.fromkeys(b.source for b in ctx.steps[group]))


def need_timeline(ctx: Context, group: str, what: str) -> None:
    if from_tables(ctx, group):
        raise Skip(f"no timeline (only {source_of(ctx, group)}): {what}")


def step_numbers(ctx: Context, group: str) -> set[int] | None:
    """The numbers of the steps considered, None for a whole capture."""
    numbers = {b.iteration for b in ctx.steps[group]}
    return None if None in numbers else numbers  # type: ignore[return-value]


def need_device(ctx: Context, group: str) -> None:
    if not any(b.device for b in ctx.steps[group]):
        raise Skip("no device work in this profile")


def slices_in_steps(ctx: Context, group: str, mask: np.ndarray) -> np.ndarray:
    """The slices of `group` in `mask` that start inside one of its considered steps (the
    step's window widened to its device window)."""
    found = act.activity(ctx.index, ctx.tables)
    gid = ctx.index.strings.find(group)
    rows = np.flatnonzero(mask & found.in_group(gid))
    start = ctx.index.col("slices.start")[rows]
    keep = np.zeros(len(rows), bool)
    for b in ctx.steps[group]:
        lo, hi = b.extent()
        keep |= (start >= lo) & (start < hi)
    return rows[keep]


def slice_evidence(ctx: Context, rows: np.ndarray, group: str) -> list[Evidence]:
    start, dur = ctx.index.col("slices.start"), ctx.index.col("slices.dur")
    top = rows[np.argsort(-dur[rows], kind="stable")[:MAX_EVIDENCE]]
    steps = steps_of(ctx, group, start[top])
    return [Evidence(int(start[i]), int(start[i] + dur[i]), ctx.index.slice_name(int(i)), group,
                     step, int(i)) for i, step in zip(top.tolist(), steps)]


def steps_of(ctx: Context, group: str, times_ns: Sequence[int] | np.ndarray
              ) -> list[int | None]:
    """The number of the considered step of `group` that each time is in, by the one rule
    (:func:`~proftui.core.ops.iterations.steps_at`: the step whose window holds it, as the
    ruler shows), not by the device windows, which reach into the next step."""
    windows = [Iteration(group, b.iteration, b.start_ns, b.end_ns)
               for b in ctx.steps[group] if b.iteration is not None]
    numbers, _ = steps_at(windows, np.asarray(times_ns, np.int64))
    return [None if n != n else int(n) for n in numbers.tolist()]  # (NaN: in none)


def top_names(ctx: Context, rows: np.ndarray, n: int = 5) -> list[dict[str, Any]]:
    strings = ctx.index.strings
    names, dur = ctx.index.col("slices.name")[rows], ctx.index.col("slices.dur")[rows]
    return top_by_total(((strings[k], 1, d) for k, d in zip(names.tolist(), dur.tolist())), n)


def top_by_total(items: Iterable[tuple[str, int, float]], n: int = 5) -> list[dict[str, Any]]:
    """The `n` names whose (count, time) items add up to the most time, most first."""
    totals: dict[str, list[float]] = {}
    for name, count, ns in items:
        entry = totals.setdefault(name, [0, 0])
        entry[0] += count
        entry[1] += ns
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][1])[:n]
    return [{"name": k, "count": int(c), "total_ns": int(round(t))} for k, (c, t) in ranked]

