"""The details pane's text for the selected slice."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from proftui.core.discover.clock import file_offsets
from proftui.core.model.index import TraceIndex
from proftui.core.ops.iterations import FROM_CAPTURE_START, capture_start_ns
from proftui.core.query.slice_info import SliceInfo
from proftui.tui.text.format import fmt_duration
from proftui.tui.text.safe import safe

if TYPE_CHECKING:
    from proftui.core.perf.instances import Behind

MAX_ARGS_CHARS = 2000
MAX_NAME_CHARS = 2000  # a name can be megabytes long: the pane shows its start
MAX_COUNTERS = 12  # a row's counters shown (an aic_metrics row has about 30)


def details_lines(index: TraceIndex, info: SliceInfo, args: str,
                  behind: Behind | None = None) -> list[str]:
    """The details pane's text for one slice (trace text escaped), with the profiler's row
    behind it where there is one."""
    rel = info.start_ns - capture_start_ns(index)
    # as the file writes it, as `proftui export --time absolute` does
    ref = np.array([index.arrays["slices.ref"][info.slice]], np.int64)
    own = info.start_ns - int(file_offsets(index, ref)[0])
    lines = [
        f"{_cut(info.name)}" + (f"   [{_cut(info.category)}]" if info.category else ""),
        f"track  {_cut(info.process)}{' / ' if info.process else ''}{_cut(info.track)}"
        f"   depth {info.depth}",
        f"start  {fmt_duration(rel)} {FROM_CAPTURE_START} ({own} ns, profiler clock)"
        f"   duration "
        f"{fmt_duration(info.dur_ns)}   self {fmt_duration(info.self_ns)}",
    ]
    if info.parents:
        chain = " < ".join(_cut(index.slice_name(p), 200) for p in info.parents[:6])
        more = f" < ... ({len(info.parents) - 6} more)" if len(info.parents) > 6 else ""
        lines.append(f"parents {chain}{more}")
    if info.n_flows_out or info.n_flows_in:
        def names(slices: list[int]) -> str:
            return ", ".join(_cut(index.slice_name(s), 200) for s in slices[:3]) + (
                " ..." if len(slices) > 3 else "")
        lines.append(f"flows  out {info.n_flows_out} -> {names(info.flows_out)}   in "
                     f"{info.n_flows_in} <- {names(info.flows_in)}   (> / < jump)")
    lines.append(f"args   {_cut(args, MAX_ARGS_CHARS)}")
    if behind is not None:
        lines += behind_lines(behind)
    return lines


def behind_lines(behind: Behind) -> list[str]:
    """The profiler's row behind a device slice (its source, shapes, dtypes, counters and
    the host op that launched it), or the device tasks a host op launched."""
    lines = []
    if behind.source:
        kind = f"  type {_cut(behind.op_type, 200)}" if behind.op_type else ""
        lines.append(f"row    {_cut(behind.source, 200)}{kind}")
    if behind.inputs or behind.dtypes:
        lines.append(f"shapes {_cut(shapes_text(behind.inputs), 400)}"
                     + (f" -> {_cut(shapes_text(behind.outputs), 200)}" if behind.outputs
                        else ""))
        lines.append(f"dtypes {_cut(', '.join(behind.dtypes) or '-', 400)}")
    if behind.counters:
        shown = ", ".join(f"{k} {v:g}" for k, v in list(behind.counters.items())[:MAX_COUNTERS])
        more = len(behind.counters) - MAX_COUNTERS
        lines.append(f"counts {_cut(shown, 1000)}" + (f" ... ({more} more)" if more > 0 else ""))
    if behind.host is not None:
        name, shapes, dtypes = behind.host
        said = (_cut(shapes_text(shapes), 400) if shapes
                else "(no shapes: torch.profiler's record_shapes=True records them)")
        lines.append(f"host   {_cut(name, 200)}  {said}"
                     + (f"  {_cut(', '.join(dtypes), 300)}" if dtypes else ""))
    if behind.launched:
        total = sum(dur for _, _, dur in behind.launched)
        names = ", ".join(_cut(name, 80) for _, name, _ in behind.launched[:3])
        more = " ..." if len(behind.launched) > 3 else ""
        n = len(behind.launched)
        lines.append(f"device {n} task{'s' if n != 1 else ''} launched, "
                     f"{fmt_duration(total)} in all: {names}{more}")
    return lines


def shapes_text(shapes: list) -> str:
    """Shapes as `[32x9216, 4096x9216, -]` (- for an entry with no tensor shape)."""
    return "[" + ", ".join("x".join(map(str, s)) if s else "-" for s in shapes) + "]"


def _cut(text: str, limit: int = MAX_NAME_CHARS) -> str:
    """`text` escaped, its first `limit` characters when it is longer (then " ...")."""
    return safe(text) if len(text) <= limit else safe(text[:limit]) + " ..."
