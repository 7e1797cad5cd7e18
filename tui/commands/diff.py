"""`proftui diff`: did the fix help; two profiles compared step, part and op."""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import textwrap

from proftui.tui.commands.common import (
    EXIT_FAILURE,
    EXIT_OK,
    by_option,
    damage_warnings,
    index_warning_line,
    json_option,
    load,
    print_json,
    print_whole_table,
    side_option,
    top_option,
    warning,
)
from proftui.tui.commands.spec import Arg, Command, Parser
from proftui.tui.commands.summary import fit_names
from proftui.tui.text.safe import safe

EXIT_INCONCLUSIVE = 3
DEFAULT_TOP = 20


SPEC = Command(
    "diff", "did the fix help: step, parts and ops compared",
    "Compare a new profile with a base one: the steps (warm-up and the capture's last step "
    "left out) by a rank test, with the shift's confidence interval and the outlier steps "
    "named, the breakdown's parts, and the ops inside the steps compared, per step, "
    "matched by name (generated parts of kernel names ignored), with the ones added and "
    "removed; with several ranks a side, rank against rank and the slowest of each; and the "
    "summary tables both have (op_statistic, kernel_details, ...) by key over the whole "
    "capture. Mismatches (kind of profile, devices, ranks, ops) are warned about first.",
    (Arg("base", files=True, help="the baseline: a trace file or a profile directory"),
     Arg("new", files=True, help="the profile to compare with it"),
     by_option("match ops by name (default), category or type", leave_out=("engine",)),
     side_option("the ops of device tracks, host tracks, or all (default)"),
     top_option(f"ops, and rows of each summary table, shown (default {DEFAULT_TOP}; every "
                "op in --csv)", default=DEFAULT_TOP, least=None),
     Arg("--skip", type=int, default=1, metavar="N",
         help="warm-up steps left out on each side (default 1)"),
     Arg("--iterations", metavar="A:B",
         help="compare iterations A to B (by number) on each side instead"),
     Arg("--op-map", metavar="FILE", files=True,
         help="regex -> canonical op name (CSV rows or TOML) for renamed ops"),
     Arg("--gate", type=float, metavar="PCT",
         help="for CI: exit 1 when the steps are conclusively slower by more than PCT %% "
              "(the shift the test estimates), 3 when inconclusive or not comparable"),
     json_option("times in integer ns"),
     Arg("--csv", metavar="FILE", files=True, help="write every op's change as CSV"),
     Arg("--force", action="store_true", help="overwrite the --csv file"),
     Arg("--no-cache", action="store_true", help="index afresh; do not read or write the "
                                                 "cache")),
    ("proftui diff before.pt.trace.json after.pt.trace.json",
     "proftui diff --by type --side device PROF_base/ PROF_new/",
     "proftui diff --gate 5 --json base/ new/ > diff.json   # in CI"),
    notes="exit status: 0 done (with --gate: faster, no change, or slower by PCT or less), 1 "
    "with --gate: conclusively slower by more than PCT, 2 bad usage or an unreadable input, "
    "3 with --gate: inconclusive or not comparable.")


def cmd_diff(argv: list[str]) -> int:
    parser, args = SPEC.parse(argv)
    from proftui.core.model.errors import ProftuiError

    _checked(parser, args)
    if args.csv and os.path.exists(args.csv) and not args.force:
        raise ProftuiError(f"{args.csv} exists; --force overwrites it.")
    from proftui.core.analysis.diff_report import diff_tables, evidence
    from proftui.core.analysis.rank_diff import slowest_text

    found, sides = _compared(parser, args, lambda path: load(
        argparse.Namespace(path=path, run=None, no_cache=args.no_cache)))
    if args.csv:
        _write_csv(args.csv, found)
    if args.json:
        print_json(diff_json(found, sides, args.top))
    else:
        out = [f"base {safe(args.base)}: {safe(found.base.kind)}, {found.base.device_kind}\n",
               f"new  {safe(args.new)}: {safe(found.new.kind)}, {found.new.device_kind}\n"]
        out += [f"warning: {safe(w)}\n" for w in found.warnings]
        out += [f"warning: {side}: {line.removeprefix('warning: ')}\n" for side, line in (
            ("base", index_warning_line(sides[0].index)),
            ("new", index_warning_line(sides[1].index))) if line]
        if not found.comparable:
            out.append("not comparable: the numbers below compare unlike profiles\n")
        width = shutil.get_terminal_size().columns  # COLUMNS, else the terminal, else 80
        said = [found.verdict, *evidence(found)]
        if found.ranks.rows and slowest_text(found.ranks):
            said.append(slowest_text(found.ranks))
        out += [f"{line}\n" for text in said  # wrapped to the terminal, as the tables fit it
                for line in textwrap.wrap(safe(text), width, subsequent_indent="  ",
                                          break_on_hyphens=False)]
        sys.stdout.write("".join(out))
        for title, table in diff_tables(found, args.top):
            print_whole_table(_fitted(table, width, sys.stdout.isatty()), title)
    return _gate(found, args.gate)


def opened(path: str, no_cache: bool = False, index=None):
    """One side of a comparison: the profile of `path` (loaded, unless its `index` is
    given), its tables and iterations."""
    from proftui.core.analysis.diff import Opened
    from proftui.core.analysis.overview import read_overview

    if index is None:
        index = load(argparse.Namespace(path=path, run=None, no_cache=no_cache))
    _, tables, iterations = read_overview(index)
    return Opened(path, index, tables, iterations)


def _checked(parser: Parser, args: argparse.Namespace) -> tuple[int, int] | None:
    """The numbers of --iterations (None without it), --top and --skip checked."""
    if args.top < 0 or args.skip < 0:
        parser.error("--top and --skip are 0 or more")
    return _numbers(parser, args.iterations) if args.iterations else None


def _compared(parser: Parser, args: argparse.Namespace, open_index):
    """(the comparison, the two sides) of args.base and args.new, each opened by
    `open_index(path)`."""
    from proftui.core.analysis.diff import compare, read_op_map

    numbers = _checked(parser, args)
    op_map = read_op_map(args.op_map) if args.op_map else []
    sides = [opened(path, index=open_index(path)) for path in (args.base, args.new)]
    found = compare(sides[0], sides[1], by=args.by, side=args.side, skip=args.skip,
                    numbers=numbers, op_map=op_map)
    return found, sides


def json_answer(parser: Parser, args: argparse.Namespace, open_index) -> dict:
    """What `diff --json` prints (`proftui mcp` answers it too), each side opened by
    `open_index(path)`."""
    found, sides = _compared(parser, args, open_index)
    return diff_json(found, sides, args.top)


def diff_json(found, sides, top: int) -> dict:
    """What `proftui diff --json` prints of `found`, the comparison of `sides`."""
    return {**found.to_json(top=top), "warnings": [
        warning("mismatch", w) for w in found.warnings] + _side_warnings(sides)}


def _fitted(table, width: int, boxed: bool):
    """`table` with its names shortened as summary's are, to fit `width`; where its rows are
    wider even so, without its Status column (the counts say it too: none on a side is
    added or removed)."""
    from proftui.core.model.table import Table
    from proftui.core.tables.query import rows_text

    fitted = fit_names(table, width, boxed)
    cells = rows_text(fitted, range(fitted.n_rows), range(len(fitted.columns)))
    widest = sum(max([len(c.header), *(len(r[i]) for r in cells)])
                 for i, c in enumerate(fitted.columns)) + 2 * (len(fitted.columns) - 1)
    if widest <= width or fitted.columns[-1].name != "Status":
        return fitted
    rest = Table(table.kind, table.path, table.columns[:-1], table.n_rows)
    return fit_names(rest, width, boxed)


def _side_warnings(sides) -> list[dict]:
    """The damage of each side as --json `warnings`, each message saying which side."""
    return [{**w, "message": f"{name}: {w['message']}"}
            for name, opened in zip(("base", "new"), sides)
            for w in damage_warnings(opened.index)]


def _numbers(parser: Parser, text: str) -> tuple[int, int]:
    first, sep, last = text.partition(":")
    try:
        lo, hi = int(first), int(last if sep else first)
    except ValueError:
        parser.error(f"--iterations wants A:B (iteration numbers), not {text!r}")
    if hi < lo:
        parser.error(f"--iterations {text} ends before it starts")
    return lo, hi


def _gate(found, pct: float | None) -> int:
    if pct is None:
        return EXIT_OK
    if found.verdict == "no change":
        return EXIT_OK
    if not found.comparable or not found.conclusive:
        return EXIT_INCONCLUSIVE
    test = found.test
    slower = test.outcome == "slower" and (test.shift_pct or 0.0) > pct
    return EXIT_FAILURE if slower else EXIT_OK


def _write_csv(path: str, found) -> None:
    from proftui.core.model.errors import ProftuiError

    try:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["key", "base_total_ns", "new_total_ns", "delta_ns", "base_count",
                             "new_count", "status"])
            for o in found.ops:
                writer.writerow([o.key, o.base_total_ns, o.new_total_ns, o.delta_ns,
                                 o.base_count, o.new_count, o.status])
    except OSError as exc:
        raise ProftuiError(f"{path}: cannot write ({exc.strerror}).") from None
