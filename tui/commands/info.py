"""`proftui info`: print what a trace or profile holds."""

from __future__ import annotations

import sys
from typing import Any

from proftui.tui.commands.common import (
    EXIT_OK,
    TRACE,
    diagnostic_lines,
    json_option,
    load,
    print_json,
    print_warning,
    with_warnings,
)
from proftui.tui.commands.spec import Command
from proftui.tui.text.format import fmt_count, fmt_duration, track_contents
from proftui.tui.text.safe import safe

MAX_FILES_SHOWN = 20

SPEC = Command(
    "info", "what it holds: tracks, iterations, tables, problems",
    "Print what a trace or profile holds: processes, threads, event counts by phase, time "
    "span, iterations, summary tables, files not used and import diagnostics.",
    (*TRACE, json_option()),
    ("proftui info trace.json",
     "proftui info PROF_000001_20260605161708478_FRJKORBPFMHQMGLA",
     "proftui info --json run.pt.trace.json.gz | jq .slices"))


def cmd_info(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    from proftui.core.analysis.overview import overview

    index = load(args)
    if args.json:
        print_json(json_answer(args, index))
    else:
        print_warning(index)  # the damage said first, before the answer
        sys.stdout.write("\n".join(info_lines(overview(index))) + "\n")
    return EXIT_OK


def json_answer(args, index) -> dict[str, Any]:
    """What `info --json` prints of the loaded `index` (`proftui mcp` answers it too)."""
    from proftui.core.analysis.overview import overview

    return with_warnings(overview(index), index)


def rank_gap_lines(profile: dict[str, Any]) -> list[str]:
    """What a folder of ranks lacks: ranks without a timeline, rank numbers absent."""
    gaps = profile.get("ranks") or {}
    lines = []
    if gaps.get("without_timeline"):
        lines.append("warning    no timeline for rank " + ", ".join(
            map(str, gaps["without_timeline"])) + " (its folder holds no readable trace)")
    if gaps.get("missing"):
        lines.append(f"warning    rank {', '.join(map(str, gaps['missing']))} absent (the "
                     f"others are numbered 0 to {gaps['highest']})")
    return lines


def info_lines(summary: dict[str, Any]) -> list[str]:
    """The `info` report as plain lines (all trace text escaped)."""
    lines = []
    profile = summary.get("profile") or {}
    if profile and profile.get("layouts") != ["trace file"]:
        lines.append(f"profile    {safe(profile['root'])}")
        if profile.get("run"):
            run = profile["run"]
            lines.append(f"run        {run['number']} of {run['of']}: {safe(run['where'])}")
        lines.append(f"found      {safe(', '.join(profile['layouts'])) or 'nothing recognised'}")
        if profile["groups"] and profile["groups"] != [""]:
            lines.append(f"groups     {', '.join(safe(g) or '(top)' for g in profile['groups'])}")
        lines += rank_gap_lines(profile)
    for n, src in enumerate(summary["sources"]):
        if n == MAX_FILES_SHOWN:
            lines.append(f"           ... and {len(summary['sources']) - n} more (see --json)")
            break
        gz = ", gzip" if src.get("compressed") else ""
        group = f" [{safe(src['group'])}]" if src.get("group") else ""
        lines.append(f"trace      {safe(src['path'])} ({fmt_count(src['size'])} bytes{gz}){group}")
        if src.get("clock"):
            lines.append(f"  clock    {safe(src['clock'])}")
        if src.get("sqlite"):
            lines.append(f"  sqlite   {safe(_sqlite_line(src['sqlite']))}")
    if summary["sources"]:
        form = ("SQLite tables" if summary["format"] == "sqlite"
                else f"{safe(summary['format'])} form")
        lines.append(f"format     {form}, display unit {safe(summary['display_time_unit'])}")
        if summary.get("reader"):
            lines.append(f"reader     {reader_text(summary['reader'])}")
        lines += _timeline_lines(summary)
    if "iterations" in summary:
        lines += _iteration_lines(summary["iterations"])
    if profile.get("tables"):
        lines.append(f"tables     {len(profile['tables'])}")
        for table in profile["tables"]:
            group = f" [{safe(table['group'])}]" if table["group"] else ""
            rows = "row " if table.get("rows") == 1 else "rows"  # aligned: the numbers line up
            shape = (f"{fmt_count(table['rows']):>9} {rows} x {len(table['columns']):<3}"
                     if "rows" in table else safe(table.get("error", "")))
            lines.append(f"  {safe(table['kind']):<22} {shape} "
                         f"{safe(_short(table['path'], profile))}{group}")
            for problem in table.get("diagnostics", []):
                lines.append(f"  {'':<22} {fmt_count(problem['count']):>9} "
                             f"{safe(problem['message'])}")
    if profile.get("skipped"):
        lines.append(f"not used   {len(profile['skipped'])}")
        for item in profile["skipped"]:
            lines.append(f"  {safe(_short(item['path'], profile))}: {safe(item['why'])}")
    lines += diagnostic_lines(summary["diagnostics"])
    return lines


def reader_text(reader: dict[str, int]) -> str:
    """Which reader read the trace's batches: "native (1,021 batches; 3 by the Python path)"."""
    native, python = reader.get("native", 0), reader.get("python", 0)

    def batches(n: int) -> str:
        return f"{fmt_count(n)} batch" + ("" if n == 1 else "es")

    if not native:
        return f"python ({batches(python)})"
    return f"native ({batches(native)}" + (f"; {fmt_count(python)} by the Python path)"
                                           if python else ")")


def _sqlite_line(db: dict[str, Any]) -> str:
    """How a SQLite export was read and what it says of itself."""
    opened = db.get("opened", "")
    parts = ["read in place, unchanged" if opened == "immutable" else f"read through a "
             f"{opened}" if opened else ""]
    parts += [f"{label} {db[key]}" for key, label in (
        ("schema_version", "schema"), ("chip", "chip"), ("host", "host"), ("rank", "rank"))
        if db.get(key) not in (None, "")]
    return "; ".join(p for p in parts if p)


def _timeline_lines(summary: dict[str, Any]) -> list[str]:
    lines: list[str] = []

    lines.append(f"span       {fmt_duration(summary['duration_ns'])} "
                 f"(from {summary['start_ns']} ns to {summary['end_ns']} ns)")
    phases = ", ".join(f"{safe(k) or '(none)'} {fmt_count(v)}"
                       for k, v in summary["phase_counts"].items())
    lines.append(f"events     {fmt_count(summary['events'])}" + (f" ({phases})" if phases else ""))
    lines.append(f"slices     {fmt_count(summary['slices'])}; instants "
                 f"{fmt_count(summary['instants'])}; counters {summary['counter_series']} series, "
                 f"{fmt_count(summary['counter_samples'])} samples; flow edges "
                 f"{fmt_count(summary['flow_edges'])}")
    lines.append(f"processes  {len(summary['processes'])}")
    listed = 0
    for proc in summary["processes"]:
        label = safe(proc["name"]) or "Process"
        if proc.get("group"):
            label = f"{safe(proc['group'])}: {label}"
        extra = f" [{safe(proc['labels'])}]" if proc["labels"] else ""
        lines.append(f"  {label} (pid {safe(proc['pid']) or '-'}){extra}")
        lines += [f"    {_track_line(track)}" for track in proc["tracks"]]
        listed += len(proc["tracks"])
    lines += [f"  {_track_line(track)}" for track in summary["other_tracks"]]
    listed += len(summary["other_tracks"])
    if summary["n_tracks"] > listed:
        lines.append(f"  ... and {fmt_count(summary['n_tracks'] - listed)} more tracks")
    return lines


def _iteration_lines(iterations: dict[str, Any]) -> list[str]:
    items = iterations["items"]
    if not items:
        return ["iterations none found"]
    from proftui.core.model.stats import median_ns
    from proftui.core.ops.iterations import warmup

    line = f"iterations {len(items)} (from {safe(iterations['source'])})"
    timed = []  # each group's timed steps but its warm-up, as every command counts them
    for group in dict.fromkeys(it["group"] for it in items):
        mine = [it for it in items if it["group"] == group and it["dur_ns"] is not None]
        timed += mine[warmup(len(mine)):]
    if timed:
        median = median_ns(it["dur_ns"] for it in timed)
        slowest = max(timed, key=lambda it: it["dur_ns"])
        group = f" of {safe(slowest['group'])}" if slowest["group"] else ""
        line += (f"; median {fmt_duration(median)}, slowest "
                 f"#{slowest['iteration']}{group} {fmt_duration(slowest['dur_ns'])} "
                 "(warm-up left out)")
    return [line]


def _short(path: str, profile: dict[str, Any]) -> str:
    """A path relative to the profile's root."""
    root = profile.get("root") or ""
    return path[len(root) + 1:] if root and path.startswith(root + "/") else path


def _track_line(track: dict[str, Any]) -> str:
    line = f"{safe(track['name']):<40} {safe(track['kind']):<8} {track_contents(track)}"
    if "side" in track and track["slices"]:
        role = {"derived": "; derived view, not counted",
                "copy": "; repeats the device streams' tasks, not counted"}.get(track["role"], "")
        line += f"  [{track['side']} by {track['side_by']}{role}]"
    return line
