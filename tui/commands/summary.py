"""`proftui summary`: print a one-screen report of a trace or profile."""

from __future__ import annotations

import sys

from proftui.tui.commands.common import (
    EXIT_OK,
    diagnostic_lines,
    load,
    new_parser,
    print_json,
    print_table,
)
from proftui.tui.format import fmt_count, fmt_duration
from proftui.tui.safe import safe


def finding_text(finding: dict, origin_ns: int) -> str:
    """One finding of the report's JSON as two lines: what, what it costs, where first."""
    group = f" [{safe(finding['group'])}]" if finding["group"] else ""
    first = finding["evidence"][0] if finding["evidence"] else None
    where = (f", first at {fmt_duration(first['start_ns'] - origin_ns)}" if first else "")
    return (f"  {finding['severity'].upper()} {finding['rule']}{group}: "
            f"{safe(finding['title'])}\n    loses {fmt_duration(finding['time_lost_ns'])} "
            f"per step ({finding['share'] * 100:.1f} % of the median step){where}\n")


def cmd_summary(argv: list[str]) -> int:
    parser = new_parser("summary", "Print a one-screen report: step time over the iterations "
                        "and its breakdown, top device op types and host ops by share, host and "
                        "device busy ratios, import problems, and the files and tables read.",
                        "  proftui summary PROF_000001_...\n"
                        "  proftui summary run.pt.trace.json | less\n"
                        "  proftui summary --json torch_npu_ascend_pt/ | jq .busy")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    args = parser.parse_args(argv)
    from proftui.core.report import report_tables, summary_report

    report = summary_report(load(args))
    if args.json:
        print_json(report)
        return EXIT_OK
    files = report["files"]
    tables = ", ".join(sorted({safe(t["kind"]) for t in report["tables"]}))
    sys.stdout.write(f"summary of {safe(report['path'])}\n"
                     f"span {fmt_duration(report['span_ns'])}, "
                     f"{fmt_count(report['slices'])} slices from {len(files)} "
                     f"timeline{'s' if len(files) != 1 else ''}"
                     + (f"; tables: {tables}" if tables else "") + "\n")
    if report["iterations"] is None:
        sys.stdout.write("iterations none found\n")
    for title, table in report_tables(report):
        print_table(table, list(range(len(table.columns))), range(table.n_rows), title)
    if report["findings"]:
        sys.stdout.write("top findings (proftui advise for all, with evidence):\n"
                         + "".join(finding_text(f, report["start_ns"])
                                   for f in report["findings"]))
    sys.stdout.write("\n".join(diagnostic_lines(
        [{"kind": kind, "count": n} for kind, n in report["diagnostics"].items()])) + "\n")
    return EXIT_OK
