"""`proftui summary`: print a one-screen report of a trace or profile."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from proftui.tui.commands.common import (
    BATCH_SIZE,
    EXIT_OK,
    TRACE,
    diagnostic_lines,
    json_option,
    load,
    print_json,
    print_warning,
    print_whole_table,
    with_warnings,
)
from proftui.tui.commands.spec import Command
from proftui.tui.commands.watch import FOLLOW, WATCH, follow_summary
from proftui.tui.text.format import fmt_duration, plural, shorten_apart
from proftui.tui.text.safe import safe

if TYPE_CHECKING:
    from proftui.core.model.table import Table

SPEC = Command(
    "summary", "one screen: step time, top op types, busy ratios",
    "Print a one-screen report: step time over the iterations and its breakdown, top device "
    "op types and host ops by share, host and device busy ratios, import problems, and the "
    "files and tables read.",
    (*TRACE, BATCH_SIZE, json_option(), WATCH, *FOLLOW),
    ("proftui summary PROF_000001_...",
     "proftui summary run.pt.trace.json | less",
     "proftui summary --json torch_npu_ascend_pt/ | jq .busy",
     "proftui summary ./prof_out --watch   (a line per new rank or step, until Ctrl-C)"))


def finding_text(finding: dict, origin_ns: int | None) -> str:
    """One finding of the report's JSON as two lines: what, what it costs, where first (from
    the capture start, `origin_ns`; not said without a timeline, `origin_ns` None)."""
    group = f" [{safe(finding['group'])}]" if finding["group"] else ""
    first = finding["evidence"][0] if finding["evidence"] else None
    where = (f", first at {fmt_duration(first['start_ns'] - origin_ns)}"
             if first and origin_ns is not None else "")
    return (f"  {finding['severity'].upper()} {finding['rule']}{group}: "
            f"{safe(finding['title'])}\n    loses {fmt_duration(finding['time_lost_ns'])} "
            f"per step ({finding['share'] * 100:.1f} % of the median step){where}\n")


def fit_names(table: Table, width: int, boxed: bool = False) -> Table:
    """`table` with its first column (names) shortened in the middle so that its rows fit
    `width` characters beside the other columns (as printed: two spaces between columns, or
    a rich table's rules on a terminal); at least 24 characters of a name are kept."""
    import numpy as np

    from proftui.core.model.table import Table
    from proftui.core.tables.query import rows_text

    cells = rows_text(table, range(table.n_rows), range(len(table.columns)))
    others = sum(max([len(table.columns[c].header), *(len(r[c]) for r in cells)])
                 for c in range(1, len(table.columns)))
    room = width - others - (3 * len(table.columns) + 1 if boxed
                             else 2 * (len(table.columns) - 1))
    first = table.columns[0]
    if first.kind != "text" or not any(len(r[0]) > max(room, 24) for r in cells):
        return table
    names = np.empty(table.n_rows, dtype=object)
    names[:] = shorten_apart([r[0] for r in cells], max(room, 24))
    return Table(table.kind, table.path, [replace(first, values=names), *table.columns[1:]],
                 table.n_rows)


def json_answer(args, index) -> dict:
    """What `summary --json` prints of the loaded `index` (`proftui mcp` answers it too)."""
    return summary_json(index, args.batch_size)


def summary_json(index, batch_size: int | None = None) -> dict:
    """What `proftui summary --json` prints."""
    from proftui.core.analysis.summary import summary_report

    return with_warnings(summary_report(index, batch_size), index)


def cmd_summary(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    if args.watch:
        return follow_summary(args)
    from proftui.core.analysis.summary import report_tables
    from proftui.core.ops.iterations import capture_start_ns

    index = load(args)
    report = summary_json(index, args.batch_size)
    if args.json:
        print_json(report)
        return EXIT_OK
    print_warning(index)  # the damage said first, before the answer
    files = report["files"]
    tables = ", ".join(sorted({safe(t["kind"]) for t in report["tables"]}))
    what = (f"span {fmt_duration(report['span_ns'])}, {plural(report['slices'], 'slice')} "
            f"from {plural(len(files), 'timeline')}" if files
            else "no timeline: summarised from its tables")
    sys.stdout.write(f"summary of {safe(report['path'])}\n{what}"
                     + (f"; tables: {tables}" if tables else "") + "\n")
    if report["iterations"] is None:
        sys.stdout.write("iterations none found\n")
    width = shutil.get_terminal_size().columns  # COLUMNS, else the terminal, else 80
    for title, table in report_tables(report):
        table = fit_names(table, width, boxed=sys.stdout.isatty())
        print_whole_table(table, title)
    if report["findings"]:
        sys.stdout.write("top findings (proftui advise for all, with evidence):\n"
                         + "".join(finding_text(f, capture_start_ns(index) if files else None)
                                   for f in report["findings"]))
    sys.stdout.write("\n".join(diagnostic_lines(
        [{"kind": kind, "count": n} for kind, n in report["diagnostics"].items()])) + "\n")
    return EXIT_OK
