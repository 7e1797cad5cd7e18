"""The one-screen summary of a trace or profile (`proftui summary`), as plain data.

Like the profilers' own summaries: the step time over the iterations and its breakdown, the
operator types that take the device's time (and the host ops that take the host's), how
busy the host and the device are, what went wrong reading the files, and what files and
tables the profile has.

Busy time is the union of the side's operator slices over the trace span, so nested and
overlapping slices count once. Which slices are operators, and on which side, is
:mod:`proftui.core.ops.roles`'s to say: step and user annotations mark time rather than work,
msprof's "Overlap Analysis" rows restate it and the HCCL planes repeat the streams' tasks, so
none of them counts as busy time or as an op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from proftui.core.analysis.coverage import merge_slices
from proftui.core.model.index import TraceIndex
from proftui.core.model.naming import natural_key
from proftui.core.model.table import Column, Table, text_column
from proftui.core.ops.iterations import Iterations
from proftui.core.ops.roles import roles, track_groups
from proftui.core.runtime.malloc import release_free_memory

if TYPE_CHECKING:
    from proftui.core.analysis.breakdown import StepBreakdown

TOP_OPS = 10
TOP_FINDINGS = 3


def summary_report(index: TraceIndex, batch_size: int | None = None) -> dict[str, Any]:
    """Plain data: source files and tables, span, iterations per group (with their speed,
    samples a second where `batch_size` is given), top device op types and host ops, busy
    ratios per group and side, import diagnostics counted by kind (all of them; and apart,
    the damage and the notes)."""
    from proftui.core.analysis.advise import steps_by_group
    from proftui.core.analysis.breakdown import breakdown
    from proftui.core.analysis.overview import read_overview

    summary, tables, found = read_overview(index)
    steps = steps_by_group(breakdown(index, found, tables))
    # Each part's temporaries leave freed pages in the heap, which glibc keeps: handed back
    # before the next part (on a 1 GB trace ~40 MB, the parts' peaks adding up otherwise).
    release_free_memory()
    work = roles(index).op  # per slice: an operator
    device = roles(index).device
    has_device = bool(np.any(device[index.col("slices.track")[work]]))
    top_device = _top_ops(index, "device", "type", tables, "Total") if has_device else None
    if top_device is None and not summary["sources"]:  # tables only: what they say
        top_device = table_top_types(tables)
    top_host = _top_ops(index, "host" if has_device else "all", "name", (), "Self")
    release_free_memory()
    busy = busy_ratios(index, work, device)
    release_free_memory()
    profile = summary.get("profile") or {}
    return {
        "path": profile.get("root") or (summary["sources"][0]["path"]
                                        if summary["sources"] else ""),
        "files": [{"path": s["path"], "size": s["size"], "group": s.get("group", "")}
                  for s in summary["sources"]],
        "tables": [{"kind": t["kind"], "path": t["path"], "group": t.get("group", ""),
                    "rows": t.get("rows"), "error": t.get("error")}
                   for t in profile.get("tables", [])],
        "start_ns": index.start_ns,
        "end_ns": index.end_ns,
        "span_ns": index.end_ns - index.start_ns,
        "slices": index.n_slices,
        "iterations": iteration_summary(found, steps, batch_size),
        "top_device_types": top_device,
        "top_host_ops": top_host,
        "busy": busy,
        "findings": _top_findings(index, tables, steps),
        "diagnostics": {p.kind: p.count for p in index.diagnostics},
        "damage": {p.kind: p.count for p in index.diagnostics if p.severity == "damage"},
        "notes": {p.kind: p.count for p in index.diagnostics if p.severity == "note"},
    }


def _top_findings(index: TraceIndex, tables: Any, steps: dict[str, list[StepBreakdown]]
                  ) -> list[dict[str, Any]]:
    """The advisor's TOP_FINDINGS findings that lose the most time per step."""
    from proftui.core.analysis.advise import advice_steps, run_rules

    advice = run_rules(index, tables, advice_steps(index, tables, steps))
    return [f.to_json() for f in advice.findings[:TOP_FINDINGS]]


# -- iterations ---------------------------------------------------------------------------------


def iteration_summary(found: Iterations, steps: dict[str, list[StepBreakdown]] | None = None,
                      batch_size: int | None = None) -> dict[str, Any] | None:
    """Per group: count, the warm-up steps left out of the rest (:func:`~proftui.core.ops.
    iterations.warmup`), median, mean and slowest step time, its speed
    (:func:`~proftui.core.analysis.speed.speed`, the data loading from `steps`, the group's
    step breakdowns), and the mean of each breakdown part with its share of the step time
    (over the iterations that have the part).

    A step known only by its parts (a step CSV without a timeline) is as long as its
    disjoint parts (:func:`~proftui.core.analysis.step_parts.step_parts`: for torch_npu
    preparing + computing + communication(not overlapped) + free); `length_from` says
    "window" (the timeline's step), "parts" or "window and parts"."""
    from proftui.core.analysis.speed import speed
    from proftui.core.analysis.step_parts import step_parts
    from proftui.core.model.stats import median_ns, whole_ns
    from proftui.core.ops.iterations import warmup

    if not found.items:
        return None
    groups = []
    for group in dict.fromkeys(it.group for it in found.items):
        mine = [it for it in found.items if it.group == group]
        timed = [it for it in mine if it.dur_ns >= 0]
        lengths = {id(it): it.dur_ns for it in timed}
        for it in mine:
            if it.dur_ns < 0 and (parts_of := step_parts(it)) is not None:
                lengths[id(it)] = parts_of.step_ns
        known = [it for it in mine if id(it) in lengths]
        entry: dict[str, Any] = {"group": group, "count": len(mine), "timed": len(timed)}
        warm = warmup(len(known))  # left out of the figures, as in every command
        entry["warmup"] = [it.number for it in known[:warm]]
        known = known[warm:]
        if known:
            durations = np.array([lengths[id(it)] for it in known], np.int64)
            slowest = known[int(np.argmax(durations))]
            median = median_ns(durations.tolist())
            broken_down = (steps or {}).get(group, [])
            # times in integer ns, as in every --json; `number` is `iteration`'s old name
            entry.update(median_ns=median,
                         **speed(median, broken_down[warmup(len(broken_down)):], batch_size),
                         mean_ns=round(float(durations.mean())),
                         slowest={"iteration": slowest.number, "number": slowest.number,
                                  "dur_ns": lengths[id(slowest)]},
                         length_from=("window" if all(it.dur_ns >= 0 for it in known)
                                      else "parts" if not timed else "window and parts"))
            parts: dict[str, list[tuple[float, int]]] = {}
            for it in known:
                for part, ns in it.parts.items():
                    parts.setdefault(part, []).append((float(ns), lengths[id(it)]))
            entry["parts"] = [{
                "name": part, "iterations": len(pairs),
                "mean_ns": whole_ns(sum(p for p, _ in pairs) / len(pairs)),
                "share": (sum(p for p, _ in pairs) / total
                          if (total := sum(d for _, d in pairs)) > 0 else None)}
                for part, pairs in parts.items()]
        groups.append(entry)
    return {"source": found.source, "groups": groups, "notes": found.notes}


# -- ops ----------------------------------------------------------------------------------------


def _top_ops(index: TraceIndex, side: str, by: str, tables: Any, rank_by: str
             ) -> dict[str, Any]:
    """The TOP_OPS operators of one side by `rank_by` (Total or Self), from the same table
    as the Ops pane and `proftui ops`, with their Busy share as the ratio.

    On the device side, groups made only of stream waits (msprof's EVENT_WAIT: a stream held
    while it waits for another, no work; the profiler's own kernel_details and op_statistic
    do not list them) are left out of the rows, their time said in `waits_ns`."""
    from proftui.core.ops.aggregate import aggregate_ops

    table = aggregate_ops(index, by=by, side=side, tables=tables)
    labels = table.columns[0].values
    value = table.find(rank_by).values  # type: ignore[union-attr]
    count = table.find("Count").values  # type: ignore[union-attr]
    busy = table.find("Busy").values  # type: ignore[union-attr]
    order = np.argsort(-value, kind="stable")
    waits = _wait_groups(index, by, tables)[table.find("name_id").values.astype(np.int64)] \
        if side == "device" else np.zeros(table.n_rows, bool)  # type: ignore[union-attr]
    rows = [{"name": str(labels[k]), "count": int(count[k]), "time_ns": int(value[k]),
             "ratio": float(busy[k]) / 100.0 if busy[k] == busy[k] else None}
            for k in order[~waits[order]][:TOP_OPS].tolist()]
    return {"side": side, "by": by, "ranked_by": rank_by.lower(), "groups": table.n_rows,
            "time_ns": int(value.sum()), "waits_ns": int(value[waits].sum()), "rows": rows}


def _wait_groups(index: TraceIndex, by: str, tables: Any) -> np.ndarray:
    """Per group (of `by`), whether its device operators are all stream waits."""
    from proftui.core.analysis.activity import WAIT, activity
    from proftui.core.ops.grouping import SliceKeys

    keys = SliceKeys(index, by, None, tables)
    kind = activity(index, tables).device_kind
    work = np.bincount(keys.of(kind > 0), minlength=len(keys.labels))
    waits = np.bincount(keys.of(kind == WAIT), minlength=len(keys.labels))
    return (waits > 0) & (waits == work)


# (kind, type column, core column, count column or None, time column): the summary tables
# that say which op types take the device's time, the aggregate first.
_TYPE_TABLES = (("op_statistic", "OP Type", "Core Type", "Count", "Total Time"),
                ("kernel_details", "Type", "Accelerator Core", None, "Duration"),
                ("op_summary", "OP Type", "Task Type", None, "Task Duration"))


def table_top_types(tables: Any) -> dict[str, Any] | None:
    """For a profile of tables only: the TOP_OPS op types by total device time, from its
    op_statistic (its rows of every rank or device added up), else its kernel_details or
    op_summary (one row a task); "MatMul (AI_CORE)" as `proftui diff` names them, `ratio`
    their share of all the rows' time (op_statistic's Ratio(%) for one rank). In the shape
    of the timeline's top device op types, with `table` saying which kind it came from."""
    from proftui.core.tables.query import TIME_UNITS

    for kind, type_name, core_name, count_name, time_name in _TYPE_TABLES:
        found = [t for t in tables if t.kind == kind]
        totals: dict[str, list[float]] = {}
        for table in found:
            kinds, cores = table.find(type_name), table.find(core_name)
            times = table.find(time_name)
            counts = table.find(count_name) if count_name else None
            if kinds is None or times is None or times.unit not in TIME_UNITS:
                continue
            scale = TIME_UNITS[times.unit]
            for row in range(table.n_rows):
                ns = float(times.values[row]) * scale
                if not ns == ns:  # a missing time (N/A) counts for nothing
                    continue
                core = str(cores.values[row]).strip() if cores is not None else ""
                name = str(kinds.values[row]) + (f" ({core})" if core else "")
                n = float(counts.values[row]) if counts is not None else 1.0
                total = totals.setdefault(name, [0.0, 0.0])
                total[0] += n if n == n else 0.0
                total[1] += ns
        if not totals:
            continue
        all_ns = sum(t[1] for t in totals.values())
        order = sorted(totals, key=lambda k: -totals[k][1])
        rows = [{"name": name, "count": int(totals[name][0]), "time_ns": int(round(
            totals[name][1])), "ratio": totals[name][1] / all_ns if all_ns > 0 else None}
            for name in order[:TOP_OPS]]
        return {"side": "device", "by": "type", "ranked_by": "total", "groups": len(totals),
                "time_ns": int(round(all_ns)), "rows": rows, "table": kind}
    return None


# -- busy ---------------------------------------------------------------------------------------


def busy_ratios(index: TraceIndex, work: np.ndarray, device: np.ndarray) -> list[dict[str, Any]]:
    """Per group (rank or device; one entry when there is one), the busy time of its host and
    device work slices (`work`: a mask per slice) and its ratio to the trace span (None for a
    side with no slices)."""
    s = index.strings
    span = index.end_ns - index.start_ns
    slice_track = index.col("slices.track")
    track_group = track_groups(index, none=0)
    in_use = np.unique(track_group[np.unique(slice_track[work])])
    out = []
    for gid in sorted(in_use.tolist() or [0], key=lambda g: natural_key(s[g])):
        entry: dict[str, Any] = {"group": s[gid], "span_ns": span}
        for side, on_side in (("host", ~device), ("device", device)):
            # a mask per slice, merged a chunk of slices at a time: no copy of every work
            # slice's times lives at once
            rows = work & (on_side & (track_group == gid))[slice_track]
            busy = None
            if rows.any():
                lo, hi = merge_slices(index.col("slices.start"), index.col("slices.dur"), rows)
                busy = int((hi - lo).sum())
            entry[f"{side}_busy_ns"] = busy
            entry[f"{side}_ratio"] = busy / span if busy is not None and span > 0 else None
        out.append(entry)
    return out


# -- as tables ----------------------------------------------------------------------------------


def report_tables(report: dict[str, Any]) -> list[tuple[str, Table]]:
    """The report's sections as (title, table) pairs for printing: iterations, top device
    op types, top host ops, busy ratios."""
    from proftui.core.analysis.speed import speed_text
    from proftui.core.model.words import duration_text

    out: list[tuple[str, Table]] = []
    iterations = report["iterations"]
    if iterations:
        several = len(iterations["groups"]) > 1
        for g in iterations["groups"]:
            title = (f"iterations{' of ' + g['group'] if several and g['group'] else ''}: "
                     f"{g['count']} from {iterations['source']}")
            if "median_ns" not in g:
                continue
            if g["length_from"] != "window":
                title += " (a step without a window: the sum of its disjoint parts)"
            if g["warmup"]:
                title += f" (warm-up #{', #'.join(map(str, g['warmup']))} left out)"
            if rate := speed_text(g):
                title += f"; {rate}"
            rows = [("step time (median)", g["median_ns"], None),
                    ("step time (mean)", g["mean_ns"], 1.0),
                    (f"slowest (#{g['slowest']['iteration']})", g["slowest"]["dur_ns"], None)]
            rows += [(f"  {p['name']} (mean)", p["mean_ns"], p["share"]) for p in g["parts"]]
            out.append((title, rows_table(["Part", "Time", "Share of step(%)"],
                                      ["text", "ns", "%"], rows)))
    for key, title in (("top_device_types", "top device op types"),
                       ("top_host_ops", "top host ops")):
        ops = report[key]
        if ops and ops["rows"]:
            header = "Type" if ops["by"] == "type" else "Name"
            what = "total" if ops["ranked_by"] == "total" else "self time"
            side = "" if ops["side"] == "all" else f" ({ops['side']} side)"
            rows = [(r["name"], r["count"], r["time_ns"], r["ratio"]) for r in ops["rows"]]
            source = f" (from {ops['table']})" if ops.get("table") else ""
            if ops.get("waits_ns"):
                source += f"; stream waits left out ({duration_text(ops['waits_ns'])})"
            out.append((f"{title}{side} by {what}, of {ops['groups']}{source}",
                        rows_table([header, "Count", what.capitalize(), "Ratio(%)"],
                               ["text", "", "ns", "%"], rows)))
    if not report["files"]:  # no timeline: no busy time to tell
        return out
    rows = [(b["group"] or "(all)", b["host_busy_ns"], b["host_ratio"], b["device_busy_ns"],
             b["device_ratio"]) for b in report["busy"]]
    out.append(("busy time over the trace span",
                rows_table(["Group", "Host busy", "Host(%)", "Device busy", "Device(%)"],
                       ["text", "ns", "%", "ns", "%"], rows)))
    return out


def rows_table(headers: list[str], units: list[str], rows: list[tuple]) -> Table:
    """A small table from rows of plain values: unit "text", "ns", "" (a number) or "%" (a
    fraction, shown as a percentage); None is a blank."""
    columns = []
    for k, (header, unit) in enumerate(zip(headers, units)):
        values = [row[k] for row in rows]
        if unit == "text":
            columns.append(text_column(header, values))
            continue
        scale = 100.0 if unit == "%" else 1.0
        numbers = np.array([np.nan if v is None else float(v) * scale for v in values])
        name = header.split("(")[0]
        columns.append(Column(header, name, unit, "number", numbers))
    return Table("summary", "", columns, len(rows))
