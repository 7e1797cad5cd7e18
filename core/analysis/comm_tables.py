"""The communication report (:mod:`.comm`) as tables: what `proftui comm` prints and the
Communication pane shows, from the same rows."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from proftui.core.analysis.comm import (
    MIN_JUDGED_BYTES,
    CollectiveStat,
    CommReport,
    Flag,
    LinkStat,
)
from proftui.core.analysis.summary import rows_table
from proftui.core.model.table import Table

_TIMES = ("Elapse", "Transit", "Wait", "Sync", "Idle")
FLAG_NAMES = {"slow_link": "slow link", "slow_transport": "slow transport",
              "small_packets": "small packets"}


def flag_text(flag: Flag) -> str:
    """A flag as one line: "slow link: rank 0, step 50: 0 -> 3 HCCS ..." (unescaped)."""
    where = ", ".join(([flag.rank] if flag.rank else [])
                      + ([f"step {flag.step}"] if flag.step is not None else []))
    return f"{FLAG_NAMES.get(flag.kind, flag.kind)}: {where + ': ' if where else ''}{flag.title}"


def _mb(size_bytes: int | None) -> float | None:
    return None if size_bytes is None else size_bytes / 1e6  # msprof's MB


def _flag(*marks: tuple[bool, str]) -> str:
    return ", ".join(text for on, text in marks if on)


def not_judged_text(count: int) -> str:
    """What the links too small to judge are, and that they were left out ("" for none)."""
    if not count:
        return ""
    return (f"{count} link{'' if count == 1 else 's'} between ranks moved under "
            f"{MIN_JUDGED_BYTES / 1e6:g} MB in a step: {'its' if count == 1 else 'their'} time "
            "is latency, not bandwidth, so they were left out (never slow, no one's peer)")


def rank_table(report: CommReport) -> Table:
    """Per rank and step: its ops' times summed, the ratios of the sums, bytes moved."""
    rows = [(r.rank or "(all)", r.step, r.ops,
             *(r.times_ns[k.lower()] for k in _TIMES), r.wait_ratio, r.sync_ratio,
             _mb(r.moved_bytes)) for r in report.ranks]
    return rows_table(["Rank", "Step", "Ops", *_TIMES, "Wait %", "Sync %", "Moved(MB)"],
                      ["text", "", "", *["ns"] * len(_TIMES), "%", "%", "MB"], rows)


def transport_table(report: CommReport) -> Table:
    """Per rank, step and transport: size, time, bandwidth against the ranks' median,
    packets and small ops, and the flags."""
    rows = []
    for r in report.ranks:
        for t in r.transports:
            rows.append((r.rank or "(all)", r.step, t.transport, _mb(t.size_bytes),
                         t.time_ns, t.bandwidth_gbps, t.peer_median_gbps, t.packets,
                         t.large_packet_ratio, _mb(t.avg_packet_bytes), t.ops, t.small_ops,
                         _flag((t.slow, "slow"), (t.small_packets, "small packets"))))
    table = rows_table(["Rank", "Step", "Transport", "Size(MB)", "Time", "Bandwidth(GB/s)",
                        "Ranks median(GB/s)", "Packets", "Large packets %", "Avg packet(MB)",
                        "Ops", "Small ops", "Flag"],
                       ["text", "", "text", "MB", "ns", "GB/s", "GB/s", "", "%", "MB", "", "",
                        "text"], rows)
    return dataclasses.replace(table, kind="comm_transports", additive=False)  # SDMA repeats


def collective_table(stats: Sequence[CollectiveStat]) -> Table:
    """The ops given, one row each: their times, ratios and bytes moved."""
    rows = [(s.rank or "(all)", s.op.step, s.op.kind, s.op.name,
             s.op.elapse_ns, s.op.transit_ns, s.op.wait_ns, s.op.sync_ns, s.op.idle_ns,
             s.wait_ratio, s.sync_ratio, _mb(s.moved_bytes)) for s in stats]
    table = rows_table(["Rank", "Step", "Kind", "Collective", *_TIMES, "Wait %", "Sync %",
                        "Moved(MB)"],
                       ["text", "", "text", "text", *["ns"] * len(_TIMES), "%", "%", "MB"],
                       rows)
    return dataclasses.replace(table, kind="comm_collectives")


def link_table(links: Sequence[LinkStat]) -> Table:
    """The links given, one row each: size, time, bandwidth against its peers' median."""
    rows = [(x.rank or "(all)", x.step, x.op_type, x.src, x.dst, x.transport,
             _mb(x.size_bytes), x.time_ns, x.bandwidth_gbps, x.peer_median_gbps, x.peers,
             "slow" if x.slow else "" if x.judged else "too small") for x in links]
    table = rows_table(["Rank", "Step", "Op type", "Src", "Dst", "Transport", "Size(MB)",
                        "Time", "Bandwidth(GB/s)", "Peers median(GB/s)", "Peers", "Flag"],
                       ["text", "", "text", "text", "text", "text", "MB", "ns", "GB/s",
                        "GB/s", "", "text"], rows)
    return dataclasses.replace(table, kind="comm_links", additive=False)


def slowest_links(links: Sequence[LinkStat], top: int | None = None) -> list[LinkStat]:
    """Links between ranks large enough to judge (LOCAL copies and links under
    MIN_JUDGED_BYTES left out), the slowest against their peers first (then by bandwidth)."""
    def share(x: LinkStat) -> float:
        if x.bandwidth_gbps is None or not x.peer_median_gbps:
            return float("inf")
        return x.bandwidth_gbps / x.peer_median_gbps

    found = [x for x in links if x.judged]
    found.sort(key=lambda x: (share(x), x.bandwidth_gbps if x.bandwidth_gbps is not None
                              else float("inf")))
    return found[:top]


def problem_texts(report: CommReport) -> list[str]:
    """What was wrong in each rank's files, and the files not read, one line each
    (unescaped)."""
    from proftui.core.importers.ascend_comm import PROBLEMS

    out = []
    for s in report.sources:
        where = f"{s.rank}: " if s.rank else ""
        if s.error:
            out.append(f"{where}{s.error}")
        name = os.path.basename(s.path)
        out += [f"{where}{name}: {count} x {PROBLEMS.get(kind, kind)}"
                for kind, count in s.problems.items()]
    out += [f"not used: {path} ({why})" for path, why in report.unused]
    return out
