"""The details pane's text for the selected slice."""

from __future__ import annotations

import numpy as np

from proftui.core.discover.clock import file_offsets
from proftui.core.model.index import TraceIndex
from proftui.core.ops.iterations import FROM_CAPTURE_START, capture_start_ns
from proftui.core.query.slice_info import SliceInfo
from proftui.tui.text.format import fmt_duration
from proftui.tui.text.safe import safe

MAX_ARGS_CHARS = 2000
MAX_NAME_CHARS = 2000  # a name can be megabytes long: the pane shows its start


def details_lines(index: TraceIndex, info: SliceInfo, args: str) -> list[str]:
    """The details pane's text for one slice (trace text escaped)."""
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
    return lines


def _cut(text: str, limit: int = MAX_NAME_CHARS) -> str:
    """`text` escaped, its first `limit` characters when it is longer (then " ...")."""
    return safe(text) if len(text) <= limit else safe(text[:limit]) + " ..."
