"""`proftui ops --efficiency` (and `--roofline`): per op and input shapes, the work of a call,
the rates reached and the share of the roof; the Ops pane's `e` view shows the same table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from proftui.tui.commands.common import (
    EXIT_OK,
    ops_window,
    peaks_asked,
    print_table,
    print_warning,
    window_text,
    with_warnings,
)
from proftui.tui.text.format import fmt_count, fmt_duration, plural
from proftui.tui.text.roofline import roofline_lines

DEFAULT_TOP = 50


def _peaks_json(peaks) -> dict[str, Any] | None:
    if peaks is None:
        return None
    return {"device": peaks.device, "matrix_tflops": {k: v / 1e12 for k, v in peaks.matrix.items()},
            "vector_tflops": {k: v / 1e12 for k, v in peaks.vector.items()},
            "bandwidth_tbps": peaks.bandwidth / 1e12 if peaks.bandwidth else None,
            "source": peaks.source}


def _number(value: float) -> float | None:
    return None if value != value else float(value)


def _row_json(found, r: int) -> dict[str, Any]:
    """One op shape: the JSON keys of docs/json.md, times in integer ns."""
    from proftui.core.perf.models import NoModel

    g, column = found.groups[r], found.table.find
    modelled = not isinstance(g.work, NoModel)
    share = _number(column("Roof").values[r])
    return {
        "op": g.op, "shapes": [list(s) if s else None for s in g.inputs],
        "dtypes": list(g.dtypes), "count": g.calls, "total_ns": g.total_ns,
        "avg_ns": round(g.total_ns / g.calls),
        "flops": g.work.flops if modelled else None,
        "bytes": g.work.bytes if modelled else None,
        "tflops": _number(column("TFLOP/s").values[r]),
        "tbps": _number(column("TB/s").values[r]),
        "flop_per_byte": _number(column("FLOP/B").values[r]),
        "bound": column("Bound").values[r], "roof_pct": share,
        "model": g.work.model if modelled else None,
        "no_model": None if modelled else g.work.reason,
        "counters": g.counters, "slices": g.slices[:8],
    }


def _found(args: argparse.Namespace, index):
    """(window, its label, the peaks and how they were chosen, the efficiency)."""
    from proftui.core.ops.iterations import capture_start_ns
    from proftui.core.perf.efficiency import efficiency, profile_peaks
    from proftui.core.perf.instances import op_instances

    lo, hi, label = ops_window(args, index)
    peaks, said = profile_peaks(index, **peaks_asked(args))
    found = efficiency(op_instances(index, start_ns=lo, end_ns=hi), peaks)
    return (lo, hi), window_text(label, lo, hi, capture_start_ns(index)), said, found


def efficiency_json(args: argparse.Namespace, index) -> dict[str, Any]:
    """What `ops --efficiency --json` prints (docs/json.md): the first --top rows, all
    without it."""
    (lo, hi), _, said, found = _found(args, index)
    shown = range(found.table.n_rows)[:args.top or None]
    result = {"window": {"start_ns": lo, "end_ns": hi}, "source": found.source,
              "peaks": _peaks_json(found.peaks), "peaks_from": said,
              "modelled_ns": found.modelled_ns, "total_ns": found.total_ns,
              "unshaped_ns": found.unshaped_ns, "notes": list(found.notes),
              "ops": found.table.n_rows, "rows": [_row_json(found, r) for r in shown]}
    return with_warnings(result, index)


def print_efficiency(args: argparse.Namespace, index) -> int:
    """`ops --efficiency` as text (the JSON is :func:`efficiency_json`'s)."""
    from proftui.core.perf.efficiency import roofline_points

    _, where, said, found = _found(args, index)
    table = found.table
    top = DEFAULT_TOP if args.top is None else args.top
    shown = list(range(table.n_rows))[:top or None]
    print_warning(index)
    title = (f"op efficiency of {where}: {plural(table.n_rows, 'op shape')} from "
             f"{found.source or 'no table with shapes'}; peaks: {said}")
    print_table(table, list(range(len(table.columns))), shown, title, blank="(none)")
    if len(shown) < table.n_rows:
        sys.stdout.write(f"... and {fmt_count(table.n_rows - len(shown))} more op shapes "
                         "(--top 0 prints all)\n")
    if found.total_ns:
        sys.stdout.write(f"the models cover {fmt_duration(found.modelled_ns)} of "
                         f"{fmt_duration(found.total_ns)} device time with shapes "
                         f"({100 * found.modelled_ns / found.total_ns:.1f}%)\n")
    if found.unshaped_ns:
        sys.stdout.write(f"left out: {fmt_duration(found.unshaped_ns)} of device tasks with no "
                         "input shapes (collectives, kernels whose op recorded none)\n")
    for note in found.notes:
        sys.stdout.write(f"note: {note}\n")
    if args.roofline:
        points, roof = roofline_points(found)
        if roof is not None:
            sys.stdout.write(f"\nroofline: {roof.text}\n")
        sys.stdout.write("\n".join(roofline_lines(
            points, roof.flops if roof else None, roof.bandwidth if roof else None)) + "\n")
    return EXIT_OK
