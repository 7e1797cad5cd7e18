"""`proftui breakdown`: where each step's time goes, on the device and on the host."""

from __future__ import annotations

import math
import sys

from proftui.tui.commands.common import (
    BATCH_SIZE,
    EXIT_OK,
    TRACE,
    WINDOW,
    json_option,
    load,
    ops_window,
    print_json,
    print_table,
    print_warning,
    profile_iterations,
    window_text,
    with_warnings,
)
from proftui.tui.commands.spec import Command
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe

SPEC = Command(
    "breakdown", "where each step's time goes, device and host",
    "Break each step (or one range) down into device compute by kind, communication exposed "
    "and overlapped, exposed copies and idle time (host-bound, waiting, unexplained), and the "
    "host's data loading, synchronisations and launches. Computed from the tracks themselves; "
    "on Ascend it equals step_trace_time.csv. Device parts are over the step's device window "
    "(its first to last device operator), as the profilers count them.",
    (*TRACE, WINDOW, BATCH_SIZE, json_option("all times in integer ns")),
    ("proftui breakdown run.pt.trace.json",
     "proftui breakdown --iteration 7 PROF_000001_...",
     "proftui breakdown --range 10ms:40ms --json trace.json | jq '.total'"))


def cmd_breakdown(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    from proftui.core.analysis.breakdown import breakdown_table
    from proftui.core.analysis.speed import speed_text
    from proftui.core.ops.iterations import capture_start_ns

    index = load(args)
    if args.json:
        print_json(json_answer(args, index))
        return EXIT_OK
    iterations, window, found, speeds = _answer(args, index)
    print_warning(index)  # the damage said first, before the answer
    if not found.steps and not found.total:
        sys.stdout.write("nothing to break down: no slices in this profile\n")
        return EXIT_OK
    several = len({b.group for b in found.total}) > 1
    hidden = set() if several else {"Group"}
    if window is not None:
        title = f"breakdown of the {window_text('range', *window, capture_start_ns(index))}"
        rows = found.steps
    else:
        title = ("no steps: the whole capture" if not found.steps else
                 plural(len(found.steps), 'step') if not any(b.timed for b in found.steps)
                 else f"{plural(len(found.steps), 'step')} from {safe(iterations.source)}")
        rows = found.steps or found.total
    table = breakdown_table(rows)
    if not any(b.timed for b in rows):  # a step table's: the parts it does not split, left out
        hidden |= {c.name for c in table.columns[3:] if all(map(math.isnan, c.values))}
    columns = [i for i, c in enumerate(table.columns) if c.name not in hidden]
    print_table(table, columns, range(table.n_rows), title + "; " + source_text(rows))
    if found.steps and window is None:
        total = breakdown_table(found.total)
        print_table(total, columns, range(total.n_rows), "total, " + (
            "first step start to last step end; device parts of the work the steps launched "
            "(--range over the span takes every kernel in it)"
            if all(b.timed for b in found.steps) else "the steps added up"))
    for entry in speeds:
        if text := speed_text(entry):
            group = f" of {safe(entry['group'])}" if entry["group"] else ""
            sys.stdout.write(f"speed{group}: {text}\n")
    return EXIT_OK


def _answer(args, index) -> tuple:
    """(the iterations, the --range window or None, the breakdown, the speeds) `args` ask for."""
    window = None
    if args.range is not None:
        lo, hi, _ = ops_window(args, index)
        window = (lo, hi)
    elif args.iteration is not None:
        ops_window(args, index)  # the same sentence for an iteration that is not there
    found, speeds = breakdown_answer(index, args.iteration, window, args.batch_size)
    return profile_iterations(index), window, found, speeds


def json_answer(args, index) -> dict:
    """What `breakdown --json` prints of the loaded `index` (`proftui mcp` answers it too)."""
    _, _, found, speeds = _answer(args, index)
    return breakdown_json(found, speeds, index)


def breakdown_answer(index, number: int | None = None, window: tuple[int, int] | None = None,
                     batch_size: int | None = None):
    """(the breakdown, each group's speed) of `index`: of step `number`, of `window`
    (start_ns, end_ns), else of every step (and only then the speeds)."""
    from proftui.core.analysis.breakdown import breakdown
    from proftui.core.analysis.overview import read_overview

    _, tables, iterations = read_overview(index)
    found = breakdown(index, iterations, tables, number=number, window=window)
    speeds = (_speeds(iterations, found, batch_size)
              if window is None and number is None else [])
    return found, speeds


def breakdown_json(found, speeds: list[dict], index) -> dict:
    """What `proftui breakdown --json` prints of an answer (see :func:`breakdown_answer`)."""
    return with_warnings({**found.to_json(), "speed": speeds}, index)


def _speeds(iterations, found, batch_size: int | None) -> list[dict]:
    """Each group's speed, as `summary` gives it: steps a second at the median step,
    samples a second, data loading's share (see proftui.core.analysis.speed)."""
    from proftui.core.analysis.advise import steps_by_group
    from proftui.core.analysis.summary import iteration_summary

    summary = iteration_summary(iterations, steps_by_group(found), batch_size)
    keys = ("group", "median_ns", "steps_per_s", "samples_per_s", "batch_size", "reader_ratio")
    return [{k: g.get(k) for k in keys} for g in (summary or {}).get("groups", [])
            if "median_ns" in g]


def source_text(steps) -> str:
    """Where the parts of `steps` come from, in the words the JSON's `source` uses."""
    from proftui.core.analysis.breakdown import TIMELINE

    sources = list(dict.fromkeys(b.source for b in steps))
    words = []
    if TIMELINE in sources:
        words.append("device parts over each step's device window (source: timeline)")
    tables = [s for s in sources if s != TIMELINE]
    if tables:
        words.append(f"source: {', '.join(safe(s) for s in tables)} (no timeline: the "
                     "profiler's own parts, Free holding idle time and exposed copies)")
    return "; ".join(words)
