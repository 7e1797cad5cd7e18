"""What to fix first: rules over the breakdown, each finding with its cost and its evidence.

The rules are a table (:data:`RULES`): an id, what the rule measures, its thresholds (which
``--set RULE.KEY=VALUE`` overrides) and the fix to try. Each rule reads the breakdown of the
steps (:mod:`.breakdown`) and returns findings, or the reason it cannot run on this profile.

A finding's cost is the time it loses per step, averaged over the steps considered (all but
the first of each group, a warm-up, when there are three or more), and its share of the
median step; severity is high from 5 % of the step, medium from 1 %, else low. Its evidence is
up to 20 time ranges on the timeline, largest first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from proftui.core.analysis import activity as act
from proftui.core.analysis import efficiency_rules, op_rules, table_rules
from proftui.core.analysis.breakdown import (
    HOST_FIELDS,
    SMALL_KERNEL_NS,
    Breakdown,
    StepBreakdown,
    breakdown,
    group_coverage,
)
from proftui.core.analysis.findings import (  # noqa: F401 (Advice ... are used by importers)
    HIGH_SHARE,
    MAX_EVIDENCE,
    MEDIUM_SHARE,
    RULES_VERSION,
    Advice,
    Check,
    Context,
    Evidence,
    Finding,
    Rule,
    Skip,
    from_tables,
    make_finding,
    need_device,
    need_timeline,
    slice_evidence,
    slices_in_steps,
    source_of,
    step_numbers,
    steps_of,
    top_by_total,
    top_names,
)
from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.model.words import duration_text, plural
from proftui.core.ops.iterations import Iterations, warmup


def _stretch_evidence(ctx: Context, group: str, name: str, label: str,
                      from_step_start: bool = False) -> list[Evidence]:
    coverage = group_coverage(ctx.index, ctx.tables)[group]
    spans: list[tuple[int, int]] = []
    for b in ctx.steps[group]:
        lo, hi = b.device_window()
        if from_step_start:
            lo = min(lo, b.start_ns)
        starts, ends = coverage.stretches(name, lo, hi)
        spans += zip(starts.tolist(), ends.tolist())
    steps = steps_of(ctx, group, [s for s, _ in spans])  # all labelled at once
    return [Evidence(int(s), int(e), label, group, step) for (s, e), step in zip(spans, steps)]


def _ai_cpu(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    if from_tables(ctx, group):
        return _ai_cpu_from_tables(ctx, group, p)
    need_device(ctx, group)
    found = act.activity(ctx.index, ctx.tables)
    rows = slices_in_steps(ctx, group, found.device_kind == act.AI_CPU)
    if not len(rows):
        return None
    dur = ctx.index.col("slices.dur")[rows]
    device = ctx.mean(group, "device", "compute_ns") + ctx.mean(group, "device", "comm_ns")
    ai_cpu = ctx.mean(group, "device", "compute_ai_cpu_ns")
    long_ops = rows[dur > p["min_op_us"] * 1000]
    if not len(long_ops) and not (device > 0 and ai_cpu / device > p["max_share"]):
        return None
    names = top_names(ctx, rows)
    return make_finding(ctx, RULES_BY_ID["ai_cpu"], group,
                    f"{plural(len(rows), 'op')} ran on AI CPU, {names[0]['name']} the longest "
                    "in total",
                    ai_cpu, {"ops": len(rows), "over_threshold": len(long_ops),
                             "ai_cpu_ns_per_step": int(ai_cpu),
                             "share_of_device": ai_cpu / device if device else None,
                             "top": names, **_dtypes(op_rules.ai_cpu_dtypes(ctx, group))},
                    slice_evidence(ctx, rows, group))


def _ai_cpu_from_tables(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    """The ai_cpu rule on kernel_details' AI CPU tasks (else op_statistic's op types): the
    longest over min_op_us, or their time over max_share of all the rows' time."""
    ops = table_rules.ai_cpu_ops(ctx.tables, group, step_numbers(ctx, group))
    if ops is None:
        raise Skip(f"no timeline (only {source_of(ctx, group)}) and no kernel_details or "
                   "op_statistic table: no ops to read")
    if not len(ops.names):
        return None
    n_steps = max(1, len(ctx.steps[group]))
    ai_cpu = float(ops.total_ns.sum()) / n_steps
    share = float(ops.total_ns.sum()) / ops.all_ns if ops.all_ns > 0 else None
    over = ops.max_ns > p["min_op_us"] * 1000
    if not over.any() and not (share is not None and share > p["max_share"]):
        return None
    top = top_by_total(zip(ops.names, ops.counts.tolist(), ops.total_ns.tolist()))
    dtypes = op_rules.ai_cpu_dtypes(ctx, group)
    evidence = [Evidence(int(s), int(s + round(d)), op_rules.dtype_label(dtypes or [], name),
                         group, None)
                for name, s, d in zip(ops.names, ops.start_ns.tolist(), ops.total_ns.tolist())
                if s >= 0]
    return make_finding(ctx, RULES_BY_ID["ai_cpu"], group,
                    f"{plural(int(ops.counts.sum()), 'op')} ran on AI CPU, {top[0]['name']} "
                    "the longest in total", ai_cpu,
                    {"ops": int(ops.counts.sum()), "over_threshold": int(over.sum()),
                     "ai_cpu_ns_per_step": int(ai_cpu), "share_of_device": share,
                     "top": top, **_dtypes(dtypes), "source": ops.source}, evidence)


def _dtypes(found: list[dict] | None) -> dict[str, list[dict]]:
    """The ai_cpu finding's input_dtypes, only where kernel_details gives them."""
    return {"input_dtypes": found} if found is not None else {}


def _host_bound(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    need_timeline(ctx, group, "host activity is on the timeline only")
    need_device(ctx, group)
    lost = ctx.mean(group, "device", "host_bound_ns")
    span = ctx.mean(group, "device", "span_ns")
    if span <= 0 or lost / span < p["min_share"]:
        return None
    ops, small = ctx.mean(group, "device", "ops"), ctx.mean(group, "device", "small_ops")
    latency = ctx.mean(group, "host", "launch_latency_p50_ns")
    launch_bound = ops > 0 and small / ops >= p["small_op_share"]
    title = ("device idle while the host launches many small ops (launch-bound)"
             if launch_bound else "device idle while the host is busy (host-bound)")
    return make_finding(ctx, RULES_BY_ID["host_bound"], group, title, lost,
                    {"host_bound_ns_per_step": int(lost), "share_of_device_span": lost / span,
                     "ops_per_step": ops, "small_ops_per_step": small,
                     "small_op_us": SMALL_KERNEL_NS // 1000, "launch_latency_p50_ns": int(latency),
                     "launch_bound": launch_bound},
                    _stretch_evidence(ctx, group, "host_bound", "device idle, host busy"))


def _input_pipeline(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    need_timeline(ctx, group, "data loading is on the timeline only")
    if all(b.host["dataloader_ns"] is None for b in ctx.steps[group]):
        raise Skip("the profile marks no data loading (no DataLoader or Dataloader slices)")
    loading = ctx.mean(group, "host", "dataloader_ns")
    median = ctx.median_step_ns(group)
    if loading < p["min_ms"] * 1e6 and (median <= 0 or loading / median < p["min_share"]):
        return None
    exposed = ctx.mean(group, "host", "dataloader_exposed_ns")
    found = act.activity(ctx.index, ctx.tables)
    rows = slices_in_steps(ctx, group, found.host_phase == 1)
    return make_finding(ctx, RULES_BY_ID["input_pipeline"], group,
                    "the step waits for its input data", exposed if exposed else loading,
                    {"dataloader_ns_per_step": int(loading),
                     "device_idle_while_loading_ns_per_step": int(exposed),
                     "share_of_step": loading / median if median else None},
                    slice_evidence(ctx, rows, group))


def _sync(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    need_timeline(ctx, group, "synchronisations are on the timeline only")
    count = ctx.mean(group, "host", "sync_count")
    if count < p["min_per_step"]:
        return None
    found = act.activity(ctx.index, ctx.tables)
    rows = slices_in_steps(ctx, group, found.sync)
    outer = _outermost(ctx, rows)
    coverage = group_coverage(ctx.index, ctx.tables)[group]
    lost = float(np.mean([int(coverage.measure("sync_idle", *b.device_window()))
                          for b in ctx.steps[group]]))
    return make_finding(ctx, RULES_BY_ID["sync"], group,
                    f"{count:g} host-device synchronisation{'' if count == 1 else 's'} per step",
                    lost, {"syncs_per_step": count,
                           "sync_ns_per_step": int(ctx.mean(group, "host", "sync_ns")),
                           "device_idle_in_sync_ns_per_step": int(lost),
                           "calls": top_names(ctx, rows), "outermost": top_names(ctx, outer),
                           "called_from": top_names(ctx, _parents(ctx, outer))},
                    slice_evidence(ctx, outer, group))


def _parents(ctx: Context, rows: np.ndarray) -> np.ndarray:
    """The slices that called `rows` (their parents on the timeline), where they have one."""
    from proftui.core.query.parents import slice_parents

    parents = slice_parents(ctx.index)[rows]
    return parents[parents >= 0].astype(np.int64)


def _outermost(ctx: Context, rows: np.ndarray) -> np.ndarray:
    """Of overlapping sync slices (aten::item around aclrtSynchronizeStream), the longest."""
    if not len(rows):
        return rows
    start = ctx.index.col("slices.start")[rows]
    end = start + ctx.index.col("slices.dur")[rows]
    order = np.lexsort((start - end, start))
    rows, start, end = rows[order], start[order], end[order]
    reach = np.maximum.accumulate(end)
    new = np.concatenate([[True], start[1:] >= reach[:-1]])
    return rows[new]


def _exposed(rule_id: str, what: str, stretch: str, from_step_start: bool) -> Check:
    """A rule on device time where `stretch` (a coverage predicate) holds: per step over its
    device window, or from the step's start when `from_step_start` (copies of the input
    happen before the first kernel, outside the device window)."""
    def check(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
        if from_tables(ctx, group):
            return _exposed_from_tables(ctx, group, p, rule_id, what, stretch)
        need_device(ctx, group)
        coverage = group_coverage(ctx.index, ctx.tables)[group]
        before, inside, span = [], [], []
        for b in ctx.steps[group]:
            if b.device is None:
                continue
            lo, hi = b.device_window()
            early = min(lo, b.start_ns) if from_step_start else lo
            before.append(int(coverage.measure(stretch, early, lo)) if early < lo else 0)
            inside.append(int(coverage.measure(stretch, lo, hi)))
            span.append(hi - early)
        mean_lost = float(np.mean(before)) + float(np.mean(inside))
        mean_span = float(np.mean(span))
        if mean_span <= 0 or mean_lost / mean_span < p["min_share"]:
            return None
        evidence = _stretch_evidence(ctx, group, stretch, what, from_step_start)
        numbers = {f"{stretch}_ns_per_step": int(mean_lost),
                   "share_of_device_span": mean_lost / mean_span}
        title = what
        if from_step_start:  # the breakdown's two parts it spans, said as the breakdown says
            numbers["before_device_window_ns_per_step"] = int(np.mean(before))
            numbers["in_device_window_ns_per_step"] = int(np.mean(inside))
            title += (f": {duration_text(int(np.mean(before)))} a step before the first "
                      f"kernel (breakdown's Prepare), {duration_text(int(np.mean(inside)))} "
                      "in the device window (breakdown's Memcpy exposed)")
        return make_finding(ctx, RULES_BY_ID[rule_id], group, title, mean_lost, numbers, evidence)
    return check


def _exposed_from_tables(ctx: Context, group: str, p: dict[str, float], rule_id: str,
                         what: str, stretch: str) -> Finding | None:
    """An exposed-time rule on the step table's parts: `stretch`_ns over the device span
    (torch_npu's Communication(Not Overlapped) over Stage); Skip where the table does not
    split that part out (copies are inside its Free)."""
    steps = [b for b in ctx.steps[group] if b.device is not None]
    lost = [b.device.get(f"{stretch}_ns") for b in steps]  # type: ignore[union-attr]
    span = [b.device.get("span_ns") for b in steps]  # type: ignore[union-attr]
    if not steps or any(v is None for v in lost + span):
        raise Skip(f"no timeline (only {source_of(ctx, group)}), which does not split out "
                   f"{what}")
    mean_lost, mean_span = float(np.mean(lost)), float(np.mean(span))
    if mean_span <= 0 or mean_lost / mean_span < p["min_share"]:
        return None
    return make_finding(ctx, RULES_BY_ID[rule_id], group, what, mean_lost,
                    {f"{stretch}_ns_per_step": int(mean_lost),
                     "share_of_device_span": mean_lost / mean_span,
                     "source": source_of(ctx, group)}, [])


def _slow_iterations(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    steps = ctx.steps[group]
    if len(steps) < 2:
        raise Skip("fewer than two steps to compare (warm-up left out)")
    median = ctx.median_step_ns(group)
    slow = [b for b in steps if b.step_ns > p["ratio"] * median]
    if not slow:
        return None
    lost = sum(b.step_ns - median for b in slow) / len(steps)
    return make_finding(ctx, RULES_BY_ID["slow_iterations"], group,
                    f"{len(slow)} of {len(steps)} steps over {p['ratio']:g} x the median",
                    lost, {"median_step_ns": int(median),
                           "slow": [{"iteration": b.iteration, "step_ns": b.step_ns}
                                    for b in slow]},
                    [Evidence(b.start_ns, b.end_ns, f"step {b.iteration}", group, b.iteration)
                     for b in slow if b.timed])


def _gc(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    need_timeline(ctx, group, "garbage collection is on the timeline only")
    found = act.activity(ctx.index, ctx.tables)
    if not found.gc.any():
        raise Skip("no garbage-collection events in this profile")
    lost = ctx.mean(group, "host", "gc_ns")
    if lost < p["min_ms"] * 1e6:
        return None
    rows = slices_in_steps(ctx, group, found.gc)
    return make_finding(ctx, RULES_BY_ID["gc"], group, "Python garbage collection pauses the step",
                    lost, {"gc_ns_per_step": int(lost),
                           "pauses_per_step": ctx.mean(group, "host", "gc_count")},
                    slice_evidence(ctx, rows, group))


def _small_collectives(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    if from_tables(ctx, group):
        return _small_collectives_from_tables(ctx, group, p)
    need_device(ctx, group)
    found = act.activity(ctx.index, ctx.tables)
    rows = slices_in_steps(ctx, group, found.device_kind == act.COMM)
    if not len(rows):
        raise Skip("no collective communication in this profile")
    small = rows[ctx.index.col("slices.dur")[rows] < p["max_us"] * 1000]
    per_step = len(small) / max(1, len(ctx.steps[group]))
    if per_step < p["min_per_step"]:
        return None
    lost = float(ctx.index.col("slices.dur")[small].sum()) / max(1, len(ctx.steps[group]))
    return make_finding(ctx, RULES_BY_ID["small_collectives"], group,
                    f"{per_step:g} collective{'' if per_step == 1 else 's'} per step shorter than "
                    f"{p['max_us']:g} µs",
                    lost, {"small_per_step": per_step, "time_in_them_ns_per_step": int(lost),
                           "top": top_names(ctx, small)},
                    slice_evidence(ctx, small, group))


def _small_collectives_from_tables(ctx: Context, group: str, p: dict[str, float]
                                   ) -> Finding | None:
    """small_collectives on HCCL's summaries: each op's elapse (communication.json or
    analysis.db), those of the steps considered."""
    entries = (ctx.index.meta.get("profile") or {}).get("comm", [])
    ops, source = table_rules.collective_elapses(entries, group, step_numbers(ctx, group))
    if not ops:
        raise Skip(f"no timeline (only {source_of(ctx, group)}) and no collectives in HCCL's "
                   "summaries (communication.json, analysis.db)")
    n_steps = max(1, len(ctx.steps[group]))
    small = [(name, ns) for name, ns in ops if ns < p["max_us"] * 1000]
    per_step = len(small) / n_steps
    if per_step < p["min_per_step"]:
        return None
    lost = sum(ns for _, ns in small) / n_steps
    top = top_by_total((name, 1, ns) for name, ns in small)
    return make_finding(ctx, RULES_BY_ID["small_collectives"], group,
                    f"{per_step:g} collective{'' if per_step == 1 else 's'} per step shorter than "
                    f"{p['max_us']:g} µs",
                    lost, {"small_per_step": per_step, "time_in_them_ns_per_step": int(lost),
                           "top": top, "source": source}, [])


def _slow_rank(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    groups = [g for g in ctx.steps if any(b.device for b in ctx.steps[g])]
    if len(groups) < 2:
        raise Skip("one rank or device: no other to compare with")

    def own(g: str) -> float:  # time the rank spends on its own, not waiting for the others
        return (ctx.mean(g, "device", "compute_ns") + ctx.mean(g, "device", "memcpy_exposed_ns")
                + ctx.mean(g, "device", "host_bound_ns"))

    others = float(np.median([own(g) for g in groups if g != group]))
    mine = own(group)
    if others <= 0 or mine < p["ratio"] * others:
        return None
    return make_finding(ctx, RULES_BY_ID["slow_rank"], group,
                    f"{group or 'this rank'} works {mine / others:.2f} x longer than the others",
                    mine - others, {"own_ns_per_step": int(mine),
                                    "others_median_ns_per_step": int(others),
                                    "source": source_of(ctx, group)},
                    [Evidence(b.device["start_ns"], b.device["end_ns"],
                              f"step {b.iteration}", group, b.iteration)
                     for b in ctx.steps[group] if b.device and b.timed])


def _waited_for(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    """The rank the others wait for: the one with the least communication not overlapped
    (it arrives last at the collectives, so its own wait is the shortest), flagged when the
    ranks' exposed communication differs by over max_share of their mean step, as
    msprof-analyze's slow-rank advice compares ranks ("the max difference of Communication
    time has reached ... ms"), and its own longer work (slow_rank) does not already say
    why. The time lost is that difference, per step."""
    groups = [g for g in ctx.steps if any(b.device for b in ctx.steps[g])]
    if len(groups) < 2:
        raise Skip("one rank or device: no other to wait for")
    exposed = {g: ctx.mean(g, "device", "comm_exposed_ns") for g in groups}
    late = min(groups, key=lambda g: exposed[g])
    if group != late:
        return None
    waiting = max(groups, key=lambda g: exposed[g])
    gap = exposed[waiting] - exposed[late]
    step = float(np.mean([ctx.median_step_ns(g) for g in groups]))
    if step <= 0 or gap <= p["max_share"] * step:
        return None
    if _slow_rank(ctx, group, RULES_BY_ID["slow_rank"].params) is not None:
        return None  # its own longer work is why they wait: slow_rank says so, once
    return make_finding(ctx, RULES_BY_ID["waited_for"], group,
                    f"the other ranks wait for {group or 'this rank'}: {waiting} has "
                    f"{duration_text(int(gap))} more communication not overlapped a step",
                    gap, {"exposed_comm_ns_per_step": int(exposed[late]),
                          "most_exposed_comm_ns_per_step": int(exposed[waiting]),
                          "most_waiting": waiting, "mean_step_ns": int(step)},
                    [Evidence(b.device["start_ns"], b.device["end_ns"],
                              f"step {b.iteration} of {waiting}", waiting, b.iteration)
                     for b in ctx.steps[waiting] if b.device and b.timed])


RULES: tuple[Rule, ...] = (
    Rule("ai_cpu", "device time in ops on AI CPU; flagged when one op runs over min_op_us or "
         "AI CPU holds over max_share of device time", {"min_op_us": 20, "max_share": 0.05},
         "Find why the op falls back to AI CPU (an unsupported dtype such as int64 or float64, "
         "a dynamic shape, an op with no AI Core kernel): cast its inputs, fix the shape, or "
         "use an equivalent op that has an AI Core kernel.", _ai_cpu),
    Rule("host_bound", "device idle while the host is busy and not waiting, as a share of the "
         "device span; launch-bound when over small_op_share of the ops are under 10 µs",
         {"min_share": 0.05, "small_op_share": 0.5},
         "The host cannot feed the device: fuse small ops (torch.compile, fused optimizers, "
         "larger batches), move Python work out of the step, or capture graphs (CUDA graphs, "
         "torch_npu graph mode / aclgraph) to cut launch overhead.", _host_bound),
    Rule("input_pipeline", "data loading time per step (flagged over min_share of the step or "
         "min_ms); cost: the device idle while loading", {"min_share": 0.05, "min_ms": 10},
         "Load data ahead of the step: DataLoader(num_workers>0, pin_memory=True, "
         "prefetch_factor, persistent_workers=True), lighter transforms, or data on local "
         "disk.", _input_pipeline),
    Rule("sync", "host-device synchronisations per step (aten::item, .cpu(), stream or device "
         "synchronize); cost: the device idle during them", {"min_per_step": 1},
         "Avoid reading device values in the step: keep losses and metrics on the device and "
         "read them every N steps, drop explicit synchronize calls, use non_blocking copies.",
         _sync),
    Rule("exposed_comm", "communication with no computation at the same time, as a share of "
         "the device span", {"min_share": 0.10},
         "Overlap communication with computation: gradient bucketing (DDP bucket_cap_mb), "
         "communication on its own stream, FSDP/ZeRO prefetch; fewer, larger collectives; check "
         "the slowest rank, whose lateness the others wait for.",
         _exposed("exposed_comm", "communication not overlapped", "comm_exposed", False)),
    Rule("exposed_memcpy", "copies (memcpy, memset) with neither computation nor "
         "communication at the same time, from the step's start (input copies come before "
         "its first kernel) to its device window's end, as a share of that time",
         {"min_share": 0.01},
         "Hide host-device copies: pinned memory with non_blocking=True, prefetch the next "
         "batch on a side stream, keep tensors on the device between steps.",
         _exposed("exposed_memcpy", "copies not overlapped", "memcpy_exposed", True)),
    Rule("slow_iterations", "steps longer than ratio x the median of their group (warm-up "
         "left out); cost: their excess spread over all steps", {"ratio": 1.2},
         "Look at what the slow steps do that the others do not: checkpointing, evaluation, "
         "logging, recompilation, garbage collection, a slow rank.", _slow_iterations),
    Rule("gc", "Python garbage collection time per step (flagged over min_ms)", {"min_ms": 1},
         "Call gc.freeze() after setup, raise gc thresholds, or disable gc in the step and "
         "collect every N steps.", _gc),
    Rule("small_collectives", "collectives shorter than max_us, flagged from min_per_step a "
         "step; cost: the time in them", {"max_us": 100, "min_per_step": 20},
         "Bucket small collectives into larger ones (DDP bucket_cap_mb, coalescing), or "
         "communicate less often.", _small_collectives),
    Rule("slow_rank", "a rank's own work (compute, exposed copies, host-bound idle) over "
         "ratio x the other ranks' median; the others wait for it", {"ratio": 1.1},
         "Balance the work: check data sharding and sequence lengths, pipeline stage sizes, "
         "and that rank's host (CPU binding, other processes).", _slow_rank),
    Rule("waited_for", "the rank the others wait for: the ranks' communication not "
         "overlapped differs by over max_share of their mean step (msprof-analyze's slow-rank "
         "advice: 5 %)", {"max_share": 0.05},
         "Find what makes that rank late to the collectives: its compute (see slow_rank), "
         "its data loading or host, or an uneven split of the work; the ranks that wait are "
         "only as fast as it.", _waited_for),
)
RULES += op_rules.OP_RULES  # the rules about single ops: shapes, dtypes, pipes, fusions
RULES += efficiency_rules.EFFICIENCY_RULES  # how well ops use the device: roofs, tiny kernels
RULES_BY_ID = {r.id: r for r in RULES}


def parse_overrides(items: Sequence[str]) -> dict[str, dict[str, float]]:
    """``RULE.KEY=VALUE`` settings as {rule: {key: value}}; a bad one raises ProftuiError."""
    out: dict[str, dict[str, float]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        rule_id, dot, key = target.partition(".")
        rule = RULES_BY_ID.get(rule_id)
        if not sep or not dot or rule is None or key not in rule.params:
            known = ", ".join(f"{r.id}.{k}" for r in RULES for k in r.params)
            raise ProftuiError(f'Unknown setting "{item}": use RULE.KEY=VALUE with one of '
                               f"{known}.")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise ProftuiError(f'"{item}": the value must be a number.')
        out.setdefault(rule_id, {})[key] = number
    return out


def steps_by_group(found: Breakdown) -> dict[str, list[StepBreakdown]]:
    """Per group, all its steps in order; a group without steps is one window, its whole
    capture (iteration None)."""
    out: dict[str, list[StepBreakdown]] = {}
    for b in found.steps:
        out.setdefault(b.group, []).append(b)
    for b in found.total:
        out.setdefault(b.group, [replace(b, iteration=None)])
    return out


def considered(all_steps: dict[str, list[StepBreakdown]]) -> dict[str, list[StepBreakdown]]:
    """Per group, the steps averages are taken over: the warm-up left out."""
    return {g: s[warmup(len(s)):] for g, s in all_steps.items()}


def advice_steps(index: TraceIndex, tables: Sequence[Table],
                 all_steps: dict[str, list[StepBreakdown]]) -> dict[str, list[StepBreakdown]]:
    """Per group, the steps the rules read: those of `all_steps` (:func:`steps_by_group`)
    considered, and a rank known only by its op tables as one window, its capture."""
    steps = considered(all_steps)
    for group in table_rules.table_groups(tables):
        if group not in steps and (window := _capture(index, tables, group)) is not None:
            steps[group] = [window]
    return steps


def advise(index: TraceIndex, iterations: Iterations, tables: Sequence[Table] = (),
           overrides: dict[str, dict[str, float]] | None = None,
           peaks: dict[str, Any] | None = None) -> Advice:
    """Run every rule on every group of the profile (`peaks`: how the device's peaks were
    asked for, see Context)."""
    all_steps = steps_by_group(breakdown(index, iterations, tables))
    return run_rules(index, tables, advice_steps(index, tables, all_steps), RULES, overrides,
                     peaks)


def _capture(index: TraceIndex, tables: Sequence[Table], group: str) -> StepBreakdown | None:
    """A rank known only by its op tables, with no steps: one window, its capture from
    kernel_details' first task to its last (length 0 where no table has times)."""
    if index.n_slices:
        return None  # a rank of a timeline profile without a timeline of its own: as before
    lo, hi, source = table_rules.capture_window(tables, group) or (0, 0, "")
    return StepBreakdown(group, None, -1, -1, None, dict.fromkeys(HOST_FIELDS),
                         source or "op_statistic.csv", hi - lo)


def run_rules(index: TraceIndex, tables: Sequence[Table], steps: dict[str, list[StepBreakdown]],
              rules: Sequence[Rule] = RULES,
              overrides: dict[str, dict[str, float]] | None = None,
              peaks: dict[str, Any] | None = None) -> Advice:
    """Run `rules` on every group of `steps` (per group, the steps considered)."""
    overrides = overrides or {}
    ctx = Context(index, tables, steps, dict(peaks or {}))
    findings: list[Finding] = []
    skipped: dict[str, str] = {}
    for rule in rules:
        params = {**rule.params, **overrides.get(rule.id, {})}
        reasons = []
        for group in sorted(steps):
            try:
                finding = rule.check(ctx, group, params)
            except Skip as why:
                reasons.append(str(why))
                continue
            if finding is not None:
                findings.append(finding)
        if reasons and len(reasons) == len(steps):
            skipped[rule.id] = reasons[0]
    findings.sort(key=lambda f: -f.time_lost_ns)
    return Advice(findings, list(skipped.items()))
