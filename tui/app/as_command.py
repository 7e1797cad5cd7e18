""""View as a command": the headless `proftui` command that prints what a pane shows.

What is found in the TUI can then go in a script or a bug report. The window is written as
`proftui ops` reads it (:func:`proftui.tui.commands.common.ops_window`): `--iteration N` where
that gives exactly the pane's window (and, on several ranks, each rank's own step), else
`--range T0:T1` from the capture start (core.iterations.capture_start_ns), in times that
parse back to the same nanoseconds.
What a command cannot say (a filter on the ops, pinned tracks, one rank's step of several)
is returned as notes, so that nobody mistakes the command for the pane.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from proftui.core.ops.iterations import Iteration, group_windows

# `proftui ops` prints this many rows as text unless told (tui/commands/ops.py DEFAULT_TOP).
OPS_TOP = 50


@dataclass(frozen=True)
class ViewCommand:
    """A command line and what it leaves out of the view it stands for."""

    line: str
    notes: tuple[str, ...] = ()


def exact_time(ns: int) -> str:
    """`ns` (>= 0) as a time `parse_time_ns` reads back exactly: 0, 2s, 1.5ms, 12.000000345s,
    250ns (in the largest unit it reaches; at most 15 digits, well within a double's)."""
    if ns == 0:
        return "0"
    for unit, digits in (("s", 9), ("ms", 6), ("us", 3)):
        whole, part = divmod(ns, 10**digits)
        if whole:
            fraction = f"{part:0{digits}d}".rstrip("0")
            return f"{whole}.{fraction}{unit}" if fraction else f"{whole}{unit}"
    return f"{ns}ns"


def _iteration_windows(iterations: Sequence[Iteration]) -> dict[
        int, tuple[int, int, dict[str, tuple[int, int]] | None]]:
    """Per iteration number, the window and group windows `proftui ops --iteration N` uses."""
    found = {}
    for number in {it.number for it in iterations if it.start_ns >= 0 <= it.end_ns}:
        groups = group_windows(iterations, number)
        found[number] = (min(lo for lo, _ in groups.values()),
                         max(hi for _, hi in groups.values()), groups if len(groups) > 1 else None)
    return found


def window_args(trace_start_ns: int, trace_end_ns: int, iterations: Sequence[Iteration],
                start_ns: int | None, end_ns: int | None,
                groups: dict[str, tuple[int, int]] | None) -> tuple[list[str], list[str]]:
    """The window options giving the same window as the pane's, and notes where they
    cannot (a window of some groups only)."""
    if start_ns is None or end_ns is None:
        return [], []
    for number, window in sorted(_iteration_windows(iterations).items()):
        if window == (start_ns, end_ns, groups):
            return ["--iteration", str(number)], []
    notes = []
    if groups:
        notes.append(f"the pane counts only {', '.join(sorted(groups))}; the command counts "
                     "every track over that time")
    # Nothing starts before the trace or ends after it: clamping changes no number.
    first = exact_time(start_ns - trace_start_ns) if start_ns > trace_start_ns else ""
    last = exact_time(end_ns - trace_start_ns) if end_ns < trace_end_ns else ""
    return (["--range", f"{first}:{last}"] if first or last else []), notes


def ops_command(path: str, run: int | None, trace_start_ns: int, trace_end_ns: int,
                iterations: Sequence[Iteration], start_ns: int | None, end_ns: int | None,
                groups: dict[str, tuple[int, int]] | None, by: str, side: str,
                sort: tuple[str, bool, bool] | None = None, rows: int = 0,
                filter_text: str = "", pinned_tracks: int = 0) -> ViewCommand:
    """`proftui ops` for the ops pane's window, grouping and side. `sort` is (column name,
    descending, numeric) when the pane is not in its first order; `rows` how many the pane
    lists (more than the command's default: all of them)."""
    words = ["proftui", "ops", path]
    if run is not None:
        words += ["--run", str(run)]
    window, notes = window_args(trace_start_ns, trace_end_ns, iterations, start_ns, end_ns,
                                groups)
    words += window + ["--by", by, "--side", side]
    if sort is not None:
        name, descending, numeric = sort
        words += ["--sort", name]
        if descending != numeric:  # the command sorts numbers largest first, text A to Z
            notes.append(f"the pane sorts {name} the other way")
    if rows > OPS_TOP:
        words += ["--top", "0"]
    if filter_text:
        notes.append(f"the pane's filter ({filter_text}) is not applied")
    if pinned_tracks:
        notes.append(f"the pane counts only {pinned_tracks} pinned tracks")
    return ViewCommand(shlex.join(words), tuple(notes))


def table_command(path: str, run: int | None, name: str, group: str = "", where: str = "",
                  sort: tuple[str, bool] | None = None) -> ViewCommand:
    """`proftui table` for a summary table (of one rank or device: `group`) with the pane's
    filter and sort."""
    words = ["proftui", "table", path, name]
    if run is not None:
        words += ["--run", str(run)]
    if group:
        words += ["--group", group]
    if where:
        words += ["--where", where]
    if sort is not None:
        words += ["--sort", sort[0], "--desc" if sort[1] else "--asc"]
    return ViewCommand(shlex.join(words))


def profile_command(verb: str, path: str, run: int | None) -> ViewCommand:
    """A command about the whole profile (`iterations`, `advise`, `cluster`)."""
    words = ["proftui", verb, path] + (["--run", str(run)] if run is not None else [])
    return ViewCommand(shlex.join(words))
