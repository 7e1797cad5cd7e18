"""`proftui memory`: the peak memory of each rank or device, when, during which op, and the
operators that allocated most."""

from __future__ import annotations

import sys

from proftui.tui.commands.common import (
    EXIT_OK,
    TRACE,
    WINDOW,
    group_windows,
    json_option,
    load,
    ops_window,
    print_json,
    print_warning,
    print_whole_table,
    top_option,
    window_text,
    with_warnings,
)
from proftui.tui.commands.spec import Command
from proftui.tui.text.safe import safe

NO_DATA = ("no memory data in this profile: no allocator counters (memory_record.csv, "
           "MEMORY_RECORD, PyTorch [memory] events with totals) and no operator_memory table "
           "(capture with profile_memory=True)\n")


SPEC = Command(
    "memory", "peak memory per rank and when; top allocating ops",
    "The peak of the memory allocated and reserved, per rank or device and allocator "
    "component (torch_npu's PTA, GE, PTA+GE; PyTorch's per device), when it happened, the host "
    "op and the device op running then, and the operators that allocated most "
    "(operator_memory.csv or the SQLite export's OP_MEMORY: allocations by operator name, "
    "sizes summed). A profile without memory data says so and exits 0.",
    (*TRACE, WINDOW,
     top_option("the K operators of each rank that allocated most (default 10)", default=10),
     json_option("bytes and times as integers")),
    ("proftui memory rank0_ascend_pt/",
     "proftui memory --iteration 50 --top 5 cluster_run/",
     "proftui memory --json run.pt.trace.json | jq '.peaks[0]'"))


def cmd_memory(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    from proftui.core.ops.iterations import capture_start_ns

    index = load(args)
    if args.json:
        print_json(json_answer(args, index))
        return EXIT_OK
    lo, hi, label, found = _memory(args, index)
    print_warning(index)  # the damage said first, before the answer
    if not found.has_data:
        sys.stdout.write(NO_DATA)
        return EXIT_OK
    origin = capture_start_ns(index)
    print_memory(found, args.top, window_text(label, lo, hi, origin), origin)
    return EXIT_OK


def _memory(args, index):
    """(start_ns, end_ns, label, the memory answer) of the window `args` ask for."""
    from proftui.core.analysis.memory import memory
    from proftui.core.analysis.overview import read_overview

    _, tables, _ = read_overview(index)
    lo, hi, label = ops_window(args, index)
    groups = group_windows(args, index)  # a folder of ranks: each rank's own step
    return lo, hi, label, memory(index, tables, lo, hi, groups)


def json_answer(args, index) -> dict:
    """What `memory --json` prints of the loaded `index` (`proftui mcp` answers it too)."""
    _, _, label, found = _memory(args, index)
    return with_warnings({"window": label, **found.to_json(args.top)}, index)


def print_memory(found, top: int, window: str, origin_ns: int) -> None:
    """The answer as text: the peaks, then the top allocating operators."""
    from proftui.core.analysis.memory import peak_table, top_table

    sys.stdout.write(f"memory in the {safe(window)}\n")
    if found.peaks:
        table = peak_table(found, origin_ns)
        print_whole_table(table, "peaks: the highest sample of each allocator series (the "
                                 "innermost host op and device op running then)")
    else:
        sys.stdout.write("peaks: no allocator counters in this window\n")
    ops = found.top(top)
    if ops:
        table = top_table(ops)
        print_whole_table(table, f"top {top} allocating operators per rank (operator_memory: "
                                 "allocations in the window by operator name, sizes summed)")
    elif found.op_tables:
        sys.stdout.write("allocating operators: none in this window\n")
    else:
        sys.stdout.write("allocating operators: no operator_memory table in this profile\n")
    if found.without_data:
        names = ", ".join(safe(g) for g in found.without_data)
        sys.stdout.write(f"no memory data for {names} (no allocator counters nor "
                         "operator_memory: captured without profile_memory=True?)\n")
