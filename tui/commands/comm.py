"""`proftui comm`: each collective's times, bandwidth per transport and link, slow links and
small packets, from HCCL's communication summaries."""

from __future__ import annotations

import sys

from proftui.tui.commands.common import (
    EXIT_FAILURE,
    EXIT_OK,
    TRACE,
    json_option,
    print_json,
    print_whole_table,
    rank_keys,
    top_option,
    warning,
    warning_line,
)
from proftui.tui.commands.spec import Command
from proftui.tui.text.safe import safe

SPEC = Command(
    "comm", "collectives' times, bandwidth per transport and link",
    "How the ranks communicate, from HCCL's own summaries (communication.json and "
    "communication_matrix.json of a torch_npu or msprof export, or the communication tables "
    "of analysis.db): per rank and step the collectives' elapse, transit, wait, "
    "synchronisation and idle time and wait ratio; per transport (HCCS, PCIE, SIO, SDMA, "
    "RDMA) size, time, bandwidth, packets; the links between ranks with their bandwidth; slow "
    "links (under 0.8 of the median of their peers), slow transports (under 0.8 of the ranks' "
    "median) and small packets flagged.",
    (*TRACE,
     top_option("the K collectives with the longest elapse and the K slowest links (default "
                "10; --json gives every link)", default=10),
     json_option("times in integer ns, sizes in bytes")),
    ("proftui comm cluster_run/                   # a folder of rank*_ascend_pt dirs",
     "proftui comm rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
     "proftui comm --top 20 cluster_run/",
     "proftui comm --json cluster_run/ | jq '.flags'"))


def _json_keys(data: dict) -> dict:
    """The report's JSON with each rank named as in every --json: `rank` its number and
    `group` its label; the communication group a collective or link belongs to, which the
    report calls `group`, is `comm_group`."""
    for key in ("sources", "ranks", "collectives", "links", "flags"):
        rows = []
        for row in data.get(key) or []:
            if "group" in row:
                row = {**row, "comm_group": row["group"]}
                del row["group"]
            rows.append(rank_keys(row))
        data[key] = rows
    return data


def cmd_comm(argv: list[str]) -> int:
    _, args = SPEC.parse(argv)
    report = _report(args)
    errors = _errors(report)
    if errors:
        for error in errors:
            sys.stderr.write(f"proftui: {safe(error)}\n")
        return EXIT_FAILURE
    warnings = _warnings(report)
    if args.json:
        print_json(_json(report, args.top))
        return EXIT_OK
    line = warning_line(warnings, 0)  # (no time in them)
    if line:
        sys.stdout.write(line + "\n")
    if report.empty:
        sys.stdout.write(f"{safe(args.path)} has no communication data (no communication.json, "
                         "communication_matrix.json or analysis.db communication tables "
                         "with rows).\n")
        return EXIT_OK
    print_comm(report, args.top)
    return EXIT_OK


def _report(args):
    """The communication report of `args.path` (run `args.run`)."""
    from proftui.core.analysis.comm import communication
    from proftui.core.load.comm_sources import profile_entries, read_sources

    data, unused = read_sources(profile_entries(args.path, args.run))
    return communication(data, unused)


def _errors(report) -> list[str]:
    """Why none of HCCL's files could be read, when none could (else nothing)."""
    return [s.error for s in report.sources if s.error] if report.empty else []


def _json(report, top: int) -> dict:
    return {**_json_keys(report.to_json(top)), "warnings": _warnings(report)}


def json_answer(args) -> dict:
    """What `comm --json` prints of `args.path` (`proftui mcp` answers it too); where no
    file could be read, their errors as one ProftuiError."""
    from proftui.core.model.errors import ProftuiError

    report = _report(args)
    errors = _errors(report)
    if errors:
        raise ProftuiError(" ".join(errors))
    return _json(report, args.top)


def _warnings(report) -> list[dict]:
    """What of HCCL's files could not be read, or was left out, as --json `warnings`."""
    from proftui.core.importers.ascend_comm import PROBLEMS

    out = []
    for s in report.sources:
        where = f"{s.rank}: " if s.rank else ""
        if s.error:
            out.append(warning("unreadable_file", where + s.error))
        out += [warning(kind, where + PROBLEMS.get(kind, kind), count)
                for kind, count in s.problems.items()]
    return out


def print_comm(report, top: int) -> None:
    """The report as text: its tables rich on a terminal, plain when piped."""
    from proftui.core.analysis.comm_tables import (
        collective_table,
        flag_text,
        link_table,
        not_judged_text,
        problem_texts,
        rank_table,
        slowest_links,
        transport_table,
    )

    out = sys.stdout
    n = len(report.sources)
    forms = " and ".join(sorted({"the SQLite export" if s.form == "db" else "the text export"
                                 for s in report.sources}))
    out.write(f"communication of {n} rank{'' if n == 1 else 's'}, from {forms}\n")
    if report.ranks:
        print_whole_table(rank_table(report), "per rank and step: the ops' times summed (Wait % "
                          "= wait / (wait + transit), Sync % likewise)")
        print_whole_table(transport_table(report), "per transport: bandwidth = size / time; SDMA "
                          "sums HCCS, PCIE and SIO")
        shown = report.collectives[:top]
        print_whole_table(collective_table(shown), f"collectives: {len(report.collectives)} in "
                          f"all; top {len(shown)} by elapse")
    links = slowest_links(report.links)
    if links:
        shown = links[:top]
        print_whole_table(link_table(shown), f"links between ranks: {len(links)} judged (LOCAL "
                          f"copies left out); the {len(shown)} slowest against their peers")
    lines = [safe(flag_text(f)) + "\n" for f in report.flags]
    if report.links_not_judged:
        lines.append(not_judged_text(report.links_not_judged) + "\n")
    if not lines:
        lines.append("flags: none (no slow link or transport, no small packets)\n")
    lines += [safe(line) + "\n" for line in problem_texts(report)]
    out.write("".join(lines))


