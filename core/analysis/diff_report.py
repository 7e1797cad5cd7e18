"""The comparison of two profiles (:mod:`.diff`) told: the evidence under its verdict and the
tables printed (the step and its parts, the ranks, the ops that changed most, the summary
tables), and the instances of one op on both sides."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import numpy as np

from proftui.core.analysis.diff import Diff, Opened, op_slices
from proftui.core.analysis.rank_diff import rank_table
from proftui.core.analysis.step_verdict import SAME_PCT, StepVerdict
from proftui.core.analysis.table_diff import delta_tables
from proftui.core.analysis.work_diff import WorkDelta
from proftui.core.model.table import Column, Table, text_column
from proftui.core.model.words import plural
from proftui.core.ops.instances import iteration_at, track_titles


def evidence(diff: Diff) -> list[str]:
    """The verdict's evidence in one or two lines: the test and the shift's interval, then
    the steps left out at the capture's edges and the outlier steps not tested."""
    t = diff.test
    lines = []
    if t.method:
        lines.append(f"{_shift_text(t)}, Mann-Whitney p={t.p_value:.2g}, {t.base_n} vs "
                     f"{t.new_n} steps")
    aside = [_left_out_text(diff.base.left_out, diff.new.left_out)]
    aside += [f"{side} step {n} is an outlier ({steps[n] / median:.2f} x its median), not "
              "tested"
              for side, s in (("base", diff.base), ("new", diff.new))
              for steps, median in [(dict(zip(s.iterations, s.step_ns)), s.median_ns or 1)]
              for n in s.outliers]
    aside = [a for a in aside if a]
    if aside:
        lines.append("; ".join(aside))
    return lines


def _shift_text(t: StepVerdict) -> str:
    """"new is faster by 21.7 % (96.8 % CI 14.1-27.3 %)", or the signed shift and interval
    when the steps do not tell ("inconclusive: new +1.2 % (CI -3.0 to +5.1 %)")."""
    shift = t.shift_pct or 0.0
    lo, hi = t.ci_pct or (None, None)
    level = f"{t.confidence * 100:.1f} % CI" if t.confidence else ""
    if t.outcome in ("faster", "slower") and lo is not None and hi is not None:
        sign = -1 if t.outcome == "faster" else 1
        a, b = sorted((sign * lo, sign * hi))
        return f"new is {t.outcome} by {sign * shift:.1f} % ({level} {a:.1f}-{b:.1f} %)"
    head = (f"no change beyond {SAME_PCT:g} %: new" if t.outcome == "no change"
            else "inconclusive: new")
    ci = f" ({level} {lo:+.1f} to {hi:+.1f} %)" if lo is not None and hi is not None else ""
    return f"{head} {shift:+.1f} %{ci}"


def _left_out_text(base: list[tuple[int, str]], new: list[tuple[int, str]]) -> str:
    """"left out: base step 5 (warm-up), 10 (the capture's last step); new ..."."""
    def said(items: list[tuple[int, str]]) -> str:
        return ", ".join(f"{n} ({why})" for n, why in items)

    if not base and not new:
        return ""
    if base == new:
        return f"left out on each side: step {said(base)}"
    return "left out: " + "; ".join(f"{side} step {said(items)}"
                                    for side, items in (("base", base), ("new", new)) if items)


_TEXT_PARTS = ("compute_ns", "comm_exposed_ns", "overlapped_ns", "memcpy_exposed_ns", "idle_ns",
               "host_bound_ns", "wait_ns", "prepare_ns", "dataloader_ns",
               "dataloader_exposed_ns", "sync_ns")


def diff_tables(diff: Diff, top: int | None = 20) -> list[tuple[str, Table]]:
    """The comparison as (title, table) pairs for printing: the step and its parts, the ranks
    (with several a side), the ops that changed most, then each kind of summary table
    compared and the kinds that were not."""
    n_b, n_n = len(diff.base.step_ns), len(diff.new.step_ns)
    side = "" if diff.side == "all" else f", {diff.side} side"
    out = [(f"step and breakdown: {plural(n_b, 'base step')}, {plural(n_n, 'new step')} "
            "compared",
            step_table(diff)),
           (f"ops by {diff.by}{side}, per step, largest change first ({len(diff.ops)} in all)",
            ops_table(diff, top))]
    ranks = rank_table(diff.ranks)
    if ranks is not None:
        out.insert(1, ranks)
    return out + delta_tables(diff.tables, top)


def step_table(diff: Diff) -> Table:
    """The median step and the means of its parts, base and new, with their change."""
    from proftui.core.analysis.summary import rows_table

    def row(label: str, base: float | None, new: float | None) -> tuple:
        delta = new - base if base is not None and new is not None else None
        share = delta / base if delta is not None and base else None
        return (label, base, new, delta, share)

    step = diff.step
    rows = [row("step (median)", step["base_ns"], step["new_ns"])]
    rows += [row(f"  {key[:-3].replace('_', ' ')} (mean)", *diff.parts[key])
             for key in _TEXT_PARTS if diff.parts.get(key, (None, None)) != (None, None)]
    table = rows_table(["Measure", "Base", "New", "Delta", "Delta(%)"],
                       ["text", "ns", "ns", "ns", "%"], rows)
    return dataclasses.replace(table, additive=False)  # the parts overlap: no sum


def ops_table(diff: Diff, top: int | None = None) -> Table:
    """The op deltas per step, largest change first (the first `top`; all with None)."""
    from proftui.core.analysis.summary import rows_table

    ops = [(o.key, o.base_total_ns, o.new_total_ns, o.delta_ns,
            o.delta_ns / o.base_total_ns if o.base_total_ns else None, o.base_count,
            o.new_count, o.status) for o in diff.ops[:top]]
    headers = [diff.by.capitalize(), "Base", "New", "Delta", "Delta(%)", "Count base",
               "Count new", "Status"]
    kinds = ["text", "ns", "ns", "ns", "%", "", "", "text"]
    if diff.work:  # the cause only where a model saw the op on both sides
        ops = [(*row, _cause_text(diff.work.get(o.key))) for row, o in zip(ops, diff.ops)]
        headers, kinds = headers + ["Why"], kinds + ["text"]
    return rows_table(headers, kinds, ops)


def _cause_text(work: WorkDelta | None) -> str:
    """"work +12%", "speed -8%" (FLOP/s), "both", "same": what changed of a modelled op."""
    if work is None or not work.cause:
        return ""
    flops = f"work {100 * (work.new_flops / work.base_flops - 1):+.0f}%"
    rate = f"speed {100 * (work.new_rate / work.base_rate - 1):+.0f}%"
    return {"work": flops, "speed": rate, "both": f"{flops}, {rate}",
            "same": "same work and speed"}[work.cause]


def instances_table(diff: Diff, base: Opened, new: Opened, key: str,
                    op_map: Sequence[tuple[re.Pattern, str]] = ()) -> Table:
    """Both sides' instances of one op of the comparison in the windows compared, base's
    first, each by start: Side, Iteration, Start in step (ns from its iteration's start),
    Duration, Track and Slice (the slice's index on its side)."""
    sides, iteration, into, dur, track, slices = [], [], [], [], [], []
    for label, opened, summary in (("base", base, diff.base), ("new", new, diff.new)):
        found = op_slices(opened, key, summary.iterations, by=diff.by, side=diff.side,
                          op_map=op_map)
        numbers, starts = iteration_at(opened.index, found, opened.iterations)
        begin = opened.index.col("slices.start")[found]
        sides += [label] * len(found)
        iteration.append(numbers)
        into.append(np.where(starts >= 0, begin - starts, np.nan))
        dur.append(opened.index.col("slices.dur")[found].astype(np.float64))
        track.append(track_titles(opened.index, opened.index.col("slices.track")[found]))
        slices.append(found.astype(np.float64))
    columns = [text_column("Side", sides),
               Column("Iteration", "Iteration", "", "number", np.concatenate(iteration)),
               Column("Start in step", "Start in step", "ns", "number", np.concatenate(into)),
               Column("Duration", "Duration", "ns", "number", np.concatenate(dur)),
               Column("Track", "Track", "", "text", np.concatenate(track)),
               Column("Slice", "Slice", "", "number", np.concatenate(slices))]
    return Table("instances", "", columns, len(sides))
