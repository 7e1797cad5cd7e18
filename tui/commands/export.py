"""`proftui export`: write the events or the ops table of a window as CSV."""

from __future__ import annotations

import os
import sys
from typing import Any

from proftui.core.model.errors import ProftuiError
from proftui.tui.commands.common import (
    EXIT_FAILURE,
    EXIT_OK,
    TRACE,
    WINDOW_OR_ALL,
    TerminalText,
    by_option,
    group_windows,
    grouping_tables,
    load,
    ops_window,
    print_warning,
    side_option,
)
from proftui.tui.commands.spec import Arg, Command
from proftui.tui.text.format import plural
from proftui.tui.text.safe import safe

SPEC = Command(
    "export", "the events or ops of a window as CSV",
    "Write the events of a window as CSV (one row per slice or instant: name, category, "
    "process, thread, start, end and duration, depth, kind, and chosen args), or its ops "
    "table. Starts and ends are exact decimals, from the capture start (the profile's earliest "
    "timestamp) or, with --time absolute, on the profiler's own clock as the file writes it; "
    "the headers say which. CSV as RFC 4180, UTF-8, a header row; cells a spreadsheet would "
    "run as a formula (=, +, -, @) get a leading ' unless --raw. An existing file is never "
    "overwritten without --force; a failed export leaves no file. Written to a terminal, "
    "control characters and escape sequences in cells are shown escaped (\\x1b, \\r, "
    "\\u202e) and lines end in LF, so that a trace cannot take over the terminal; into a pipe "
    "or a file the CSV is written exactly.",
    (*TRACE, WINDOW_OR_ALL,
     Arg("--tracks", metavar="PATTERN", help='only tracks whose "process / track" label '
                                             "contains PATTERN (ignoring case), or matches "
                                             "/regex/"),
     side_option(),
     Arg("--what", choices=("events", "ops"), default="events",
         help="the events (default) or the ops table of the window"),
     by_option("with --what ops: group by name (default), category, type or engine"),
     Arg("--args", metavar="KEY,...", help="args keys to add as columns (events only), e.g. "
                                           "'Input Dims,External id'"),
     Arg("--shapes", action="store_true",
         help="add input_shapes and input_dtypes columns (events only): a device task's from "
              "the profiler's row behind it (kernel_details, the op that launched a Kineto "
              "kernel), a host op's from its own Input Dims"),
     Arg("--unit", choices=("ns", "us", "ms", "s"), default=None,
         help="time unit of the columns (events: default us; ops: default ns)"),
     Arg("--time", choices=("relative", "absolute"), default=None,
         help="events' start and end: relative (default), from the capture start, headers "
              "start_from_capture(UNIT) ...; or absolute, the profiler's clock as in the "
              "source file (to join rows with other tools), headers "
              "start_profiler_clock(UNIT) ..."),
     Arg("--raw", action="store_true", help="keep cells that look like formulas as they are "
                                            "(no leading ')"),
     Arg("--format", choices=("csv", "parquet"), default="csv",
         help="csv (default), or parquet: the window's slices and the steps' breakdown as "
              "Parquet datasets under the directory -o names, partitioned by rank (needs pip "
              "install 'proftui[parquet]')"),
     Arg("--bom", action="store_true",
         help="start the file with a UTF-8 byte-order mark (for Excel)"),
     Arg("--force", action="store_true", help="overwrite an existing file"),
     Arg("-o", "--output", metavar="FILE", default="-", files=True,
         help="where to write (default -, stdout; escaped on a terminal)")),
    ("proftui export trace.json --all -o events.csv",
     "proftui export trace.json --range 12.5ms:40ms --tracks 'stream 7'",
     "proftui export PROF_000001_... --iteration 3 --args 'Input Dims,grid' --unit ns",
     "proftui export trace.json --iteration 2 --what ops --by category -o ops.csv --force",
     "proftui export trace.json --all --tracks '/^python.*thread/' | head",
     "proftui export trace.json --iteration 2 --time absolute --unit ns"))


def cmd_export(argv: list[str]) -> int:
    parser, args = SPEC.parse(argv)
    if args.args is not None and args.what != "events":
        parser.error("--args applies to --what events only")
    if args.shapes and (args.what != "events" or args.format != "csv"):
        parser.error("--shapes applies to the events' CSV only")
    if args.time is not None and (args.what != "events" or args.format != "csv"):
        parser.error("--time applies to the events' CSV only (Parquet's start_ns are "
                     "always absolute)")
    keys = [k.strip() for k in (args.args or "").split(",") if k.strip()]
    if args.args is not None and not keys:
        parser.error("--args wants one or more keys, e.g. --args 'Input Dims,grid'")
    from proftui.core.export.to_csv import ExportError, ExportExists

    if args.format == "parquet":
        if args.output == "-":
            parser.error("--format parquet writes a directory: name it with -o DIR")
        if args.what != "events" or args.args is not None or args.unit or args.bom:
            parser.error("--format parquet writes the slices and steps: --what, --args, "
                         "--unit and --bom do not apply")
        from proftui.core.export.to_parquet import require_pyarrow

        require_pyarrow()  # before indexing: say at once that pyarrow is missing
    elif args.output != "-":  # refuse before indexing a large trace (core checks again)
        where = os.path.abspath(args.output)
        if os.path.isdir(where):
            raise ExportError(f"{where} is a directory; give a file name.")
        if not args.force and os.path.lexists(where):
            raise ExportExists(f"{where} already exists.")
    index = load(args)
    lo, hi, _label = ops_window(args, index)
    groups = group_windows(args, index)
    try:
        tracks = chosen_tracks(args, index)
    except NoTrackMatches as exc:
        sys.stderr.write(f"proftui: {safe(exc)}\n")
        return EXIT_FAILURE
    if args.format == "parquet":
        return _parquet(args, index, tracks, None if args.all else (lo, hi), groups)
    target: Any = args.output
    if target == "-" and sys.stdout.isatty():
        target = TerminalText(sys.stdout)
    result = write_csv(args, index, (lo, hi, groups), tracks, keys, target)
    print_warning(index, sys.stderr)  # with what was written (stdout may be the CSV)
    if result.path != "-":
        sys.stderr.write(f"wrote {plural(result.rows, 'row')} to {safe(result.path)}\n")
    if result.keys_absent:  # an empty column said, with the keys there are
        held = ", ".join(safe(k) for k in result.keys_held[:12])
        more = ", ..." if len(result.keys_held) > 12 else ""
        sys.stderr.write(f"no event written has the args {', '.join(map(safe, result.keys_absent))}"
                         f" (their columns are empty); the events' args keys: "
                         f"{held + more if held else 'none'}\n")
    return EXIT_OK


class NoTrackMatches(ProftuiError):
    """--tracks names no track."""


def chosen_tracks(args, index):
    """The track ids --tracks and --side keep (None: every track); NoTrackMatches where
    --tracks matches none."""
    import numpy as np

    from proftui.core.export.to_csv import select_tracks
    from proftui.core.ops.roles import device_tracks

    tracks = None
    if args.tracks is not None:
        tracks = select_tracks(index, args.tracks)
        if not len(tracks):
            raise NoTrackMatches(f'no track matches "{args.tracks}" (see proftui info for the '
                                 "tracks).")
    if args.side != "all":
        device = device_tracks(index)
        side = np.flatnonzero(device if args.side == "device" else ~device)
        tracks = side if tracks is None else np.intersect1d(tracks, side)
    return tracks


def write_csv(args, index, window: tuple, tracks, keys: list[str], target: Any):
    """The events (with the args `keys`) or the ops table of `window` (start_ns, end_ns and
    each group's own window or None, as ops_window and group_windows give them), of `tracks`,
    written as CSV to `target` (a path, "-" or a text stream; `proftui mcp` gives one): the
    export's result."""
    from proftui.core.export.to_csv import export_events, export_table
    from proftui.core.ops.aggregate import aggregate_ops

    lo, hi, groups = window
    common = {"neutralize": not args.raw, "overwrite": args.force, "bom": args.bom}
    if args.what == "events":
        window = {} if args.all else {"start_ns": lo, "end_ns": hi}
        return export_events(index, target, tracks=tracks, args_keys=keys,
                             unit=args.unit or "us", groups=groups,
                             clock=args.time or "relative", shapes=args.shapes, **window,
                             **common)
    table = aggregate_ops(index, start_ns=lo, end_ns=hi, tracks=tracks, by=args.by,
                          tables=grouping_tables(index, args.by), groups=groups)
    shown = [i for i, c in enumerate(table.columns) if c.name != "name_id"]
    return export_table(table, target, columns=shown, unit=args.unit or "ns", **common)


def _parquet(args, index, tracks, window: tuple[int, int] | None,
             groups: dict[str, tuple[int, int]] | None) -> int:
    """The window's slices and the breakdown of the steps it holds, as Parquet datasets."""
    from proftui.core.analysis.breakdown import breakdown
    from proftui.core.analysis.overview import read_overview
    from proftui.core.export.to_parquet import export_parquet

    _, tables, iterations = read_overview(index)
    steps = breakdown(index, iterations, tables).steps
    if args.iteration is not None:
        steps = [s for s in steps if s.iteration == args.iteration]
    elif window is not None:
        steps = [s for s in steps if s.start_ns < window[1] and s.end_ns > window[0]]
    lo, hi = window if window is not None else (None, None)
    result = export_parquet(index, args.output, iterations=iterations.items, steps=steps,
                            start_ns=lo, end_ns=hi, tracks=tracks, groups=groups,
                            overwrite=args.force)
    print_warning(index, sys.stderr)
    sys.stderr.write(f"wrote {plural(result.slices, 'slice')} and {plural(result.steps, 'step')} "
                     f"in {plural(result.partitions, 'rank partition')} to {safe(result.path)}\n")
    return EXIT_OK
