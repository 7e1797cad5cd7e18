"""`proftui iterations`: print one line per iteration, its breakdown and outliers."""

from __future__ import annotations

import sys

from proftui.tui.commands.common import (
    EXIT_OK,
    TRACE,
    json_option,
    load,
    print_json,
    print_table,
    print_warning,
    profile_iterations,
    with_warnings,
)
from proftui.tui.commands.spec import Command
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe

SPEC = Command(
    "iterations", "iterations, their breakdown, slowest and outliers",
    "Print one line per iteration (training step): its start in ms from the capture start "
    "(the profile's earliest timestamp), duration, breakdown (FP+BP, iteration refresh, data "
    "aug bound; or computing, communication, free ...), how it compares with the median of "
    "its rank or device, and the slowest and outliers (longer than 1.2 x the median) marked.",
    (*TRACE, json_option()),
    ("proftui iterations run.pt.trace.json",
     "proftui iterations PROF_000001_...",
     "proftui iterations --json torch_npu_ascend_pt/ | jq '.items[0]'"))


def cmd_iterations(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    index = load(args)
    if args.json:
        print_json(json_answer(args, index))
        return EXIT_OK
    found, origin, table = _iterations(index)
    from proftui.core.ops.iterations import FROM_CAPTURE_START

    print_warning(index)  # the damage said first, before the answer
    if not found.items:
        sys.stdout.write("no iterations found (no ProfilerStep#N or msprof step trace in the "
                         "timeline, no step CSVs)\n")
        return EXIT_OK
    hidden = {"Start"} | ({"Group"} if not any(it.group for it in found.items) else set())
    columns = [i for i, c in enumerate(table.columns) if c.name not in hidden]
    title = (f"{plural(len(found.items), 'iteration')} from {safe(found.source)}; starts "
             f"{FROM_CAPTURE_START}; outliers are longer than 1.2 x their group's median")
    print_table(table, columns, range(table.n_rows), title)
    for note in found.notes:
        sys.stdout.write(f"note: {safe(note)}\n")
    return EXIT_OK


def _iterations(index):
    """(the iterations of `index`, the capture start, their table)."""
    from proftui.core.ops.instances import iterations_table
    from proftui.core.ops.iterations import capture_start_ns

    found = profile_iterations(index)
    origin = capture_start_ns(index, found)
    return found, origin, iterations_table(found, origin)


def json_answer(args, index) -> dict:
    """What `iterations --json` prints of the loaded `index` (`proftui mcp` answers it
    too)."""
    from proftui.core.model.stats import whole_ns

    found, origin, table = _iterations(index)
    vs = table.find("vs median")
    marks = table.find("Mark")
    items = []
    for n, it in enumerate(found.items):
        vs_n = float(vs.values[n])  # type: ignore[union-attr]
        items.append({
            "group": it.group, "iteration": it.number, "number": it.number,
            "start_ns": it.start_ns if it.start_ns >= 0 else None,
            "end_ns": it.end_ns if it.end_ns >= 0 else None,
            "dur_ns": it.dur_ns if it.dur_ns >= 0 else None,
            "relative_start_ns": it.start_ns - origin if it.start_ns >= 0 else None,
            "parts_ns": {k: whole_ns(v) for k, v in it.parts.items()},
            "vs_median_pct": vs_n if vs_n == vs_n else None,
            "mark": marks.values[n]})  # type: ignore[union-attr]
    result = {"source": found.source if found.items else None, "notes": found.notes,
              "capture_start_ns": origin, "iterations": items,
              "items": items}  # `items` and `number`: the old names, for one release
    return with_warnings(result, index)
