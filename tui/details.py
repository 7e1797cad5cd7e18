"""The details pane's text for the selected slice."""

from __future__ import annotations

from proftui.core.index import TraceIndex
from proftui.core.slice_info import SliceInfo
from proftui.tui.format import fmt_duration
from proftui.tui.safe import safe

MAX_ARGS_CHARS = 2000


def details_lines(index: TraceIndex, info: SliceInfo, args: str) -> list[str]:
    """The details pane's text for one slice (trace text escaped)."""
    rel = info.start_ns - index.start_ns
    lines = [
        f"{safe(info.name)}" + (f"   [{safe(info.category)}]" if info.category else ""),
        f"track  {safe(info.process)}{' / ' if info.process else ''}{safe(info.track)}"
        f"   depth {info.depth}",
        f"start  {fmt_duration(rel)} (at {info.start_ns} ns)   duration "
        f"{fmt_duration(info.dur_ns)}   self {fmt_duration(info.self_ns)}",
    ]
    if info.parents:
        chain = " < ".join(safe(index.slice_name(p)) for p in info.parents[:6])
        more = f" < ... ({len(info.parents) - 6} more)" if len(info.parents) > 6 else ""
        lines.append(f"parents {chain}{more}")
    if info.n_flows_out or info.n_flows_in:
        def names(slices: list[int]) -> str:
            return ", ".join(safe(index.slice_name(s)) for s in slices[:3]) + (
                " ..." if len(slices) > 3 else "")
        lines.append(f"flows  out {info.n_flows_out} -> {names(info.flows_out)}   in "
                     f"{info.n_flows_in} <- {names(info.flows_in)}   (> / < jump)")
    text = args if len(args) <= MAX_ARGS_CHARS else args[:MAX_ARGS_CHARS] + " ..."
    lines.append(f"args   {safe(text)}")
    return lines
