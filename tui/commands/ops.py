"""`proftui ops`: print operator statistics of a window."""

from __future__ import annotations

import sys

from proftui.tui.commands.common import (
    EXIT_OK,
    TRACE,
    WINDOW,
    by_option,
    group_windows,
    grouping_tables,
    json_key,
    json_option,
    json_value,
    load,
    ops_window,
    print_json,
    print_table,
    print_warning,
    side_option,
    top_option,
    window_text,
    with_warnings,
)
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.format import fmt_count, fmt_duration, plural

DEFAULT_TOP = 50  # rows of ops printed as text unless --top says otherwise

SPEC = Command(
    "ops", "operator statistics of a window",
    "Print operator statistics for the whole trace, one iteration or a time range: count, "
    "total and self time (clipped to the window), average, min and max of whole instances, "
    "Window(%) (the op's time on a track over the window, averaged over the tracks it ran on: "
    "at most 100) and Busy(%) (its self time over the self time of all rows shown: they sum "
    "to 100). Step markers, user annotations and derived tracks (Overlap Analysis, HCCL "
    "planes) are not operators.",
    (*TRACE, WINDOW,
     by_option("group operators by name (default), category, operator type (Ascend: the OP "
               "Type op_summary gives each op instance) or engine (AI_CORE, AI_VECTOR_CORE, "
               "AI_CPU, HCCL ...; kernel, Triton, NCCL, memcpy, memset; host: the category)"),
     side_option(),
     Arg("--sort", metavar="COL", help="sort by this column (numbers largest first, text A to "
                                       "Z; default Total)"),
     top_option(f"print the first K rows (default {DEFAULT_TOP} as text, all as JSON; 0 for "
                "all)", least=0),
     Arg("--efficiency", action="store_true",
         help="per op and input shapes: FLOPs and bytes of a call (the perf models), the "
              "TFLOP/s and TB/s reached, FLOP per byte, the bound (compute or memory) and "
              "Roof(%%), the share of the roof reached; from the device tasks the profiler "
              "gives shapes for (Ascend kernel_details, Kineto host ops with Input Dims)"),
     Arg("--roofline", action="store_true",
         help="with --efficiency: draw the ops on a roofline (log-log, the mark sized by "
              "the time each costs) after the table"),
     Arg("--device", metavar="NAME",
         help="judge against this device's peaks (a name of the peaks table, e.g. H100 SXM, "
              "Ascend 910B2) rather than the one the profile names"),
     Arg("--peaks", metavar="FILE", files=True,
         help="a CSV of device peaks with the columns of the bundled table"),
     Arg("--peak-tflops", type=float, metavar="X",
         help="the matrix peak in TFLOP/s (overrides the table's)"),
     Arg("--peak-tbps", type=float, metavar="X",
         help="the memory bandwidth in TB/s (overrides the table's)"),
     json_option()),
    ("proftui ops trace.json",
     "proftui ops --iteration 3 --side device PROF_000001_...",
     "proftui ops --range 12.5ms:40ms --by category trace.json.gz",
     "proftui ops --sort Count --top 10 trace.json",
     "proftui ops --json trace.json | jq '.rows[0]'",
     "proftui ops --efficiency --roofline PROF_000001_...",
     "proftui ops --efficiency --device 'H100 SXM' --json trace.json"))


def cmd_ops(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    from proftui.core.ops.iterations import FROM_CAPTURE_START, capture_start_ns

    index = load(args)
    if args.json:
        print_json(json_answer(args, index))
        return EXIT_OK
    if args.efficiency or args.roofline:
        from proftui.tui.commands.ops_efficiency import print_efficiency

        return print_efficiency(args, index)
    lo, hi, label, groups, table, rows = _ops(args, index)
    origin = capture_start_ns(index)
    top = DEFAULT_TOP if args.top is None else args.top
    shown = rows[:top] if top else rows
    n_slices = _slices(table)
    print_warning(index)  # the damage said first, before the answer
    where = (window_text(label, lo, hi, origin) if groups is None else
             f"{label}, each in its own window ({fmt_duration(lo - origin)} to "
             f"{fmt_duration(hi - origin)} {FROM_CAPTURE_START} in all)")
    title = (f"ops of {where}, by {args.by}, "
             f"{args.side} tracks: {plural(table.n_rows, 'op')}, {plural(n_slices, 'slice')}")
    columns = [i for i, c in enumerate(table.columns) if c.name != "name_id"]
    print_table(table, columns, shown, title, blank="(none)")
    if len(shown) < len(rows):
        sys.stdout.write(f"... and {fmt_count(len(rows) - len(shown))} more ops "
                         "(--top 0 prints all)\n")
    return EXIT_OK


def _ops(args, index):
    """(start_ns, end_ns, label, group windows, the ops table, its rows in --sort's order)
    of the window and grouping `args` ask for."""
    from proftui.core.ops.aggregate import aggregate_ops
    from proftui.core.tables.query import column_index, sort_order

    lo, hi, label = ops_window(args, index)
    groups = group_windows(args, index)
    table = aggregate_ops(index, start_ns=lo, end_ns=hi, by=args.by, side=args.side,
                          tables=grouping_tables(index, args.by), groups=groups)
    rows = list(range(table.n_rows))
    if args.sort:
        c = column_index(table, args.sort)
        rows = sort_order(table, c, table.columns[c].kind != "text").tolist()
    return lo, hi, label, groups, table, rows


def _slices(table) -> int:
    counts = table.find("Count")
    return int(counts.values.sum()) if counts is not None else 0


def json_answer(args, index) -> dict:
    """What `ops --json` prints of the loaded `index` (`proftui mcp` answers it too): the
    first --top rows, all without it; with --efficiency, the op efficiency's."""
    from proftui.core.ops.iterations import capture_start_ns

    if args.efficiency or args.roofline:
        from proftui.tui.commands.ops_efficiency import efficiency_json

        return efficiency_json(args, index)

    lo, hi, label, groups, table, rows = _ops(args, index)
    origin = capture_start_ns(index)
    shown = rows[:args.top] if args.top else rows
    result = {
        "window": {"label": label, "start_ns": lo, "end_ns": hi,
                   "from_trace_start_ns": [lo - origin, hi - origin],
                   "groups": None if groups is None else {
                       g: {"start_ns": a, "end_ns": b} for g, (a, b) in groups.items()}},
        "by": args.by, "side": args.side, "ops": table.n_rows, "slices": _slices(table),
        "rows": [{json_key(c): json_value(c, c.values[r]) for c in table.columns}
                 for r in shown]}
    return with_warnings(result, index)
