"""`proftui ops`: print operator statistics of a window."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    peaks_options,
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

if TYPE_CHECKING:
    from proftui.core.model.table import Table

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
     *peaks_options(),
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
    index = load(args)
    if args.json:
        print_json(json_answer(args, index))
        return EXIT_OK
    if args.efficiency or args.roofline:
        from proftui.tui.commands.ops_efficiency import print_efficiency

        return print_efficiency(args, index)
    from proftui.core.ops.iterations import FROM_CAPTURE_START

    found = ops_answer(args, index)
    print_warning(index)  # the damage said first, before the answer
    table, rows, shown = found.table, found.rows, found.shown
    lo, hi, origin, groups = found.start_ns, found.end_ns, found.origin_ns, found.groups
    where = (window_text(found.label, lo, hi, origin) if groups is None else
             f"{found.label}, each in its own window ({fmt_duration(lo - origin)} to "
             f"{fmt_duration(hi - origin)} {FROM_CAPTURE_START} in all)")
    title = (f"ops of {where}, by {found.by}, {found.side} tracks: "
             f"{plural(table.n_rows, 'op')}, {plural(found.slices, 'slice')}")
    columns = [i for i, c in enumerate(table.columns) if c.name != "name_id"]
    print_table(table, columns, shown, title, blank="(none)")
    if len(shown) < len(rows):
        sys.stdout.write(f"... and {fmt_count(len(rows) - len(shown))} more ops "
                         "(--top 0 prints all)\n")
    return EXIT_OK


@dataclass(frozen=True)
class OpsAnswer:
    """The ops table of a window, its rows in order and the first `--top` of them."""

    table: Table
    rows: list[int]
    shown: list[int]
    start_ns: int
    end_ns: int
    label: str
    origin_ns: int
    groups: dict[str, tuple[int, int]] | None
    by: str
    side: str

    @property
    def slices(self) -> int:
        counts = self.table.find("Count")
        return int(counts.values.sum()) if counts is not None else 0


def ops_answer(args: argparse.Namespace, index) -> OpsAnswer:
    """The ops of `index` as `args` asks (iteration, range, by, side, sort, top, json)."""
    from proftui.core.ops.aggregate import aggregate_ops
    from proftui.core.ops.iterations import capture_start_ns
    from proftui.core.tables.query import column_index, sort_order

    lo, hi, label = ops_window(args, index)
    groups = group_windows(args, index)
    table = aggregate_ops(index, start_ns=lo, end_ns=hi, by=args.by, side=args.side,
                          tables=grouping_tables(index, args.by), groups=groups)
    rows = list(range(table.n_rows))
    if args.sort:
        c = column_index(table, args.sort)
        rows = sort_order(table, c, table.columns[c].kind != "text").tolist()
    top = args.top if args.top is not None else (0 if args.json else DEFAULT_TOP)
    return OpsAnswer(table, rows, rows[:top] if top else rows, lo, hi, label,
                     capture_start_ns(index), groups, args.by, args.side)


def json_answer(args: argparse.Namespace, index) -> dict:
    """What `ops --json` prints of the loaded `index` (`proftui mcp` answers it too); with
    --efficiency, the op efficiency's (see ops_efficiency)."""
    if args.efficiency or args.roofline:
        from proftui.tui.commands.ops_efficiency import efficiency_json

        return efficiency_json(args, index)
    return ops_json(ops_answer(args, index), index)


def ops_json(found: OpsAnswer, index) -> dict:
    """What `proftui ops --json` prints of `found` (see :func:`ops_answer`)."""
    lo, hi, origin, groups, table = (found.start_ns, found.end_ns, found.origin_ns,
                                     found.groups, found.table)
    result = {
        "window": {"label": found.label, "start_ns": lo, "end_ns": hi,
                   "from_trace_start_ns": [lo - origin, hi - origin],
                   "groups": None if groups is None else {
                       g: {"start_ns": a, "end_ns": b} for g, (a, b) in groups.items()}},
        "by": found.by, "side": found.side, "ops": table.n_rows,
        "slices": found.slices,
        "rows": [{json_key(c): json_value(c, c.values[r]) for c in table.columns}
                 for r in found.shown]}
    return with_warnings(result, index)
