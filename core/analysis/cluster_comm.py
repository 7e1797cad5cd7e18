"""The ranks' communication in the cluster view: bandwidth per link type and rank, the
rank x rank link matrix with its slow links, and msprof-analyze's cluster_analysis_output
compared with proftui's own numbers.

Link types: per rank and step, each transport (SDMA, RDMA, HCCS, PCIE, SIO) of the rank's
ops summed, as :func:`proftui.core.analysis.comm.communication` computes them (size, time,
bandwidth = size / time, the ranks' median, slow when under SLOW_RATIO of it).

Matrix: per step, each src -> dst link of the ranks' communication matrices, every op type
and group summed (size, time; bandwidth = size / time). A link's ids are local to its group:
a rank's own ``k-k`` LOCAL link says that local k is that rank (msprof-analyze maps them the
same way); a dst no rank of the profile names stays ``local k`` (msprof-analyze drops it).
Slow link: a link under SLOW_RATIO (0.8) of the median bandwidth of the step's links of the
same transport (LOCAL copies left out; two links at least), among the links that moved
MIN_JUDGED_BYTES or more in the step: a smaller one's time is latency, so it is neither a peer
nor slow, only counted (``judged`` false; see :mod:`.comm`). msprof-analyze's cluster
analysis flags no link: its advisor's "slow link" rule compares the ranks' summed SDMA and
RDMA bandwidths by their spread, (max - min) / mean over 5 %, and names the fastest and the
slowest rank; the median here names every slow link, and one slow link does not drag its own
yardstick down.

Profiler compared: cluster_step_trace_time.csv's Computing, Communication(Not Overlapped)
and Free per rank and step against proftui's breakdown of the timeline (compute, exposed
communication, free); cluster_communication.json's "Total Op Info" per rank and step
(elapse, transit, wait, synchronisation, idle; per transport size, time, bandwidth) against
the sums of the ranks' ops; cluster_communication_matrix.json's ``<type>-total`` links
against the ranks' matrices (mapped links only, as msprof-analyze keeps). Two figures differ
when they are more than TOLERANCE (0.1 %) of the larger apart, and more than the unit's floor
(1 µs, 1 kB, 0.001 GB/s); a figure on one side only differs.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from proftui.core.analysis.cluster import Cluster
from proftui.core.analysis.comm import (
    MIN_JUDGED_BYTES,
    SLOW_RATIO,
    CommReport,
    LinkStat,
    RankStep,
    bandwidth,
    communication,
    not_judged,
    sized_for_bandwidth,
)
from proftui.core.analysis.summary import rows_table
from proftui.core.importers.cluster_output import ClusterOutput
from proftui.core.model.naming import natural_key
from proftui.core.model.table import Table

TOLERANCE = 0.001
FLOORS = {"ns": 1000, "bytes": 1000, "GB/s": 0.001}
_RANK = re.compile(r"(?:^| / )rank (\d+)$")
_LOCAL = "local "
SLOW_DEFINITION = (f"slow: under {SLOW_RATIO:.0%} of the median bandwidth of the step's links "
                   "(or ranks) of the same transport, LOCAL copies left out, and those that "
                   f"moved under {MIN_JUDGED_BYTES / 1e6:g} MB (latency, not bandwidth)")
# cluster_step_trace_time.csv columns (µs) and the breakdown's figures they are compared with
STEP_FIELDS = (("Computing", "compute_ns"), ("Communication(Not Overlapped)", "comm_exposed_ns"),
               ("Free", "free_ns"))
TIME_FIELDS = ("elapse", "transit", "wait", "sync", "idle")


@dataclass(frozen=True)
class MatrixCell:
    """One src -> dst link of a step, every op type and group summed."""

    step: int | None
    src: str
    dst: str
    transport: str
    size_bytes: int
    time_ns: int
    bandwidth_gbps: float | None
    median_gbps: float | None = None
    peers: int = 0
    slow: bool = False
    judged: bool = False  # between ranks and of MIN_JUDGED_BYTES or more

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # every field, by its name


@dataclass(frozen=True)
class ClusterComm:
    """Per rank and step its transports (from the comm report), and the link matrix."""

    ranks: list[RankStep]
    matrix: list[MatrixCell]

    def only_step(self, step: int) -> ClusterComm:
        """The same, of one step alone."""
        return ClusterComm([r for r in self.ranks if r.step == step],
                           [c for c in self.matrix if c.step == step])

    def to_json(self) -> dict[str, Any]:
        return {"slow_ratio": SLOW_RATIO, "slow": SLOW_DEFINITION,
                "link_types": [{"rank": r.rank, "step": r.step, "transport": t.transport,
                                "size_bytes": t.size_bytes, "time_ns": t.time_ns,
                                "bandwidth_gbps": t.bandwidth_gbps,
                                "median_gbps": t.peer_median_gbps, "slow": t.slow,
                                "judged": t.judged}
                               for r in self.ranks for t in r.transports],
                "matrix": [c.to_json() for c in self.matrix],
                "slow_links": sum(c.slow for c in self.matrix),
                "links_not_judged": self.links_not_judged}

    @property
    def links_not_judged(self) -> int:
        """Links between ranks (LOCAL copies aside) too small to judge their bandwidth."""
        return not_judged(self.matrix)


def cluster_comm(report: CommReport) -> ClusterComm | None:
    """The link types and matrix of `report`; None when it holds no communication."""
    if report.empty:
        return None
    return ClusterComm(report.ranks, link_matrix(report.links))


def local_ranks(links: Sequence[LinkStat]) -> dict[tuple[str, str], str]:
    """(group, local id) -> the rank whose matrix holds that id's LOCAL self link."""
    out: dict[tuple[str, str], str] = {}
    for x in links:
        if x.src == x.dst and x.transport == "LOCAL":
            out.setdefault((x.group, x.src), x.rank)
    return out


def link_matrix(links: Sequence[LinkStat]) -> list[MatrixCell]:
    """The links summed per step, src, dst and transport, with the slow ones flagged."""
    names = local_ranks(links)
    summed: dict[tuple, list[int]] = {}
    for x in links:
        src = names.get((x.group, x.src), x.rank)
        dst = names.get((x.group, x.dst), _LOCAL + x.dst)
        row = summed.setdefault((x.step, src, dst, x.transport), [0, 0])
        row[0] += x.size_bytes
        row[1] += x.time_ns
    peers: dict[tuple, list[float]] = {}
    for (step, _, _, transport), (size, ns) in summed.items():
        speed = bandwidth(size, ns)
        if sized_for_bandwidth(transport, size) and speed is not None:
            peers.setdefault((step, transport), []).append(speed)
    cells = []
    for (step, src, dst, transport), (size, ns) in summed.items():
        speed = bandwidth(size, ns)
        mine = peers.get((step, transport), []) if transport != "LOCAL" else []
        median = statistics.median(mine) if len(mine) > 1 else None
        sized = sized_for_bandwidth(transport, size)
        slow = (median is not None and speed is not None and sized
                and speed < SLOW_RATIO * median)
        cells.append(MatrixCell(step, src, dst, transport, size, ns, speed, median, len(mine),
                                slow, sized))
    cells.sort(key=lambda c: (-1 if c.step is None else c.step, endpoint_key(c.src),
                              endpoint_key(c.dst), c.transport))
    return cells


def endpoint_key(label: str) -> tuple:
    """Ranks in natural order, then the local ids no rank names."""
    return (label.startswith(_LOCAL), natural_key(label))


def read_communication(entries: list[dict], tables: Sequence[Table], found: Cluster
                       ) -> tuple[ClusterComm | None, ProfilerComparison | None]:
    """The communication of a profile's ranks and, where msprof-analyze's cluster output is
    there, that output compared: from its communication entries (``meta["profile"]["comm"]``),
    its summary tables and its ranks compared (`found`)."""
    from proftui.core.importers.cluster_output import cluster_files, read_cluster_output
    from proftui.core.load.comm_sources import read_sources

    report = communication(*read_sources(entries))
    files = cluster_files(entries)
    output = read_cluster_output(files) if files else None
    step_trace = next((t for t in tables if t.kind == "cluster_step_trace_time"), None)
    steps = {r.rank: {s.iteration: {"compute_ns": s.compute_ns,
                                    "comm_exposed_ns": s.comm_exposed_ns,
                                    "free_ns": s.free_ns} for s in r.steps
                 if s.source != "cluster_step_trace_time.csv"}  # not that file with itself
             for r in found.ranks}
    if not any(steps.values()):
        step_trace = None  # the steps are that file's own: nothing of proftui's to compare
    return cluster_comm(report), compare_profiler(
        output, step_trace, steps, None if report.empty else report)


# -- msprof-analyze's output compared -----------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One figure of the profiler's cluster output beside proftui's."""

    table: str  # "step_trace", "communication", "matrix"
    key: str  # "rank 0, step 50", "rank 0, step 50, HCCS", "step 50, allreduce, 0 -> 1"
    figure: str  # the profiler's name for it: "Computing", "Transit Time", ...
    unit: str  # "ns", "bytes", "GB/s"
    profiler: float | None
    proftui: float | None
    differs: bool

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "key": self.key, "figure": self.figure,
                "unit": self.unit, "profiler": self.profiler, "proftui": self.proftui,
                "differs": self.differs}


@dataclass(frozen=True)
class ProfilerComparison:
    """msprof-analyze's cluster_analysis_output beside proftui's numbers."""

    files: list[str]
    checks: list[Check]
    groups: dict[str, list[list[int]]] = field(default_factory=dict)
    problems: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[Check]:
        return [c for c in self.checks if c.differs]

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files,
                "tolerance": {"relative": TOLERANCE, "floors": FLOORS},
                "compared": len(self.checks), "differ": len(self.differing),
                "checks": [c.to_json() for c in self.checks], "groups": self.groups,
                "problems": self.problems, "errors": self.errors}


def differs(a: float | None, b: float | None, unit: str) -> bool:
    """Whether two figures differ (see the module docstring); one missing differs."""
    if a is None or b is None:
        return a is not b
    gap = abs(a - b)
    return gap > TOLERANCE * max(abs(a), abs(b)) and gap > FLOORS[unit]


def rank_number(label: str) -> int | None:
    """3 of "rank 3" (or "node / rank 3"); None of a label without a rank."""
    found = _RANK.search(label)
    return int(found.group(1)) if found else None


def compare_profiler(output: ClusterOutput | None, step_trace: Table | None,
                     steps: dict[str, dict[int | None, dict[str, int | None]]],
                     report: CommReport | None) -> ProfilerComparison | None:
    """The profiler's cluster output beside proftui's figures: `steps` per rank label and
    iteration the breakdown's compute_ns, comm_exposed_ns and free_ns; `report` the ranks'
    communication. None when there is no cluster output at all."""
    if output is None and step_trace is None:
        return None
    checks: list[Check] = []
    if step_trace is not None:
        checks += _step_checks(step_trace, steps)
    if output is not None and report is not None:
        checks += _total_checks(output, report.ranks)
        checks += _matrix_checks(output, report.links)
    files = ([step_trace.path] if step_trace is not None else []) + (
        list(output.files.values()) if output is not None else [])
    return ProfilerComparison(files, checks, output.groups if output else {},
                              dict(output.problems) if output else {},
                              list(output.errors) if output else [])


def _check(table: str, key: str, figure: str, unit: str, a: float | None,
           b: float | None) -> Check:
    return Check(table, key, figure, unit, a, b, differs(a, b, unit))


def _by_rank_number(labels: Sequence[str]) -> dict[int, str]:
    out = {n: label for label in labels if (n := rank_number(label)) is not None}
    if not out and len(labels) == 1:
        out = {0: labels[0]}  # one rank, its folder unnamed
    return out


def _step_checks(table: Table, steps: dict[str, dict[int | None, dict[str, int | None]]]
                 ) -> list[Check]:
    step, kind, index = table.find("Step"), table.find("Type"), table.find("Index")
    if step is None or index is None:
        return []
    labels = _by_rank_number(list(steps))
    out = []
    for row in range(table.n_rows):
        if kind is not None and str(kind.values[row]).strip().lower() != "rank":
            continue  # stage rows: a maximum over a group
        number, rank = _whole(step.values[row]), _whole(index.values[row])
        if rank is None:
            continue
        mine = steps.get(labels.get(rank, ""), {}).get(number)
        key = f"rank {rank}" + (f", step {number}" if number is not None else "")
        for name, attr in STEP_FIELDS:
            column = table.find(name)
            if column is None or column.kind != "number":
                continue
            value = float(column.values[row])
            theirs = round(value * 1000) if value == value else None  # µs -> ns
            out.append(_check("step_trace", key, name, "ns", theirs,
                              mine.get(attr) if mine else None))
    return out


def _whole(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number == number and number == int(number) else None


def _total_checks(output: ClusterOutput, ranks: Sequence[RankStep]) -> list[Check]:
    theirs: dict[tuple[int, int | None], list] = {}
    for t in output.totals:
        theirs.setdefault((t.rank, t.total.step), []).append(t.total)
    numbers = {label: n for n, label in _by_rank_number([r.rank for r in ranks]).items()}
    mine = {(numbers[r.rank], r.step): r for r in ranks if r.rank in numbers}
    out = []
    for rank, step in sorted(set(theirs) | set(mine), key=lambda k: (k[0], k[1] or -1)):
        key = f"rank {rank}" + (f", step {step}" if step is not None else "")
        totals, own = theirs.get((rank, step), []), mine.get((rank, step))
        for name in TIME_FIELDS:
            attr = f"{name}_ns"
            value = (sum(getattr(c, attr) or 0 for c in totals) if totals else None)
            out.append(_check("communication", key, _TIME_LABEL[name], "ns", value,
                              own.times_ns[name] if own else None))
        by_transport: dict[str, list] = {}
        for c in totals:
            for t in c.transports:
                by_transport.setdefault(t.transport, []).append(t)
        own_transports = {t.transport: t for t in (own.transports if own else [])}
        for transport in sorted(set(by_transport) | set(own_transports)):
            found = by_transport.get(transport, [])
            size = sum(t.size_bytes or 0 for t in found) if found else None
            ns = sum(t.time_ns or 0 for t in found) if found else None
            speed = (found[0].bandwidth_gbps if len(found) == 1 else bandwidth(size, ns))
            t_own = own_transports.get(transport)
            where = f"{key}, {transport}"
            out += [_check("communication", where, "Transit Size", "bytes", size,
                           t_own.size_bytes if t_own else None),
                    _check("communication", where, "Transit Time", "ns", ns,
                           t_own.time_ns if t_own else None),
                    _check("communication", where, "Bandwidth", "GB/s", speed,
                           t_own.bandwidth_gbps if t_own else None)]
    return out


_TIME_LABEL = {"elapse": "Elapse Time", "transit": "Transit Time", "wait": "Wait Time",
               "sync": "Synchronization Time", "idle": "Idle Time"}


def _matrix_checks(output: ClusterOutput, links: Sequence[LinkStat]) -> list[Check]:
    theirs = {(x.step, x.op_type, x.group, x.src, x.dst): x for x in output.links
              if x.sample == "total"}
    names = local_ranks(links)
    mine: dict[tuple, LinkStat] = {}
    for x in links:
        src, dst = names.get((x.group, x.src)), names.get((x.group, x.dst))
        a, b = rank_number(src or ""), rank_number(dst or "")
        if a is not None and b is not None:  # mapped links only, as msprof-analyze keeps
            mine[(x.step, x.op_type, x.group, str(a), str(b))] = x
    out = []
    for key in sorted(set(theirs) | set(mine), key=lambda k: (
            k[0] or -1, k[1], k[2], natural_key(k[3]), natural_key(k[4]))):
        step, op_type, _, src, dst = key
        where = (f"step {step}, " if step is not None else "") + f"{op_type}, {src} -> {dst}"
        a, b = theirs.get(key), mine.get(key)
        out += [_check("matrix", where, "Transit Size", "bytes",
                       a.size_bytes if a else None, b.size_bytes if b else None),
                _check("matrix", where, "Transit Time", "ns", a.time_ns if a else None,
                       b.time_ns if b else None),
                _check("matrix", where, "Bandwidth", "GB/s", a.bandwidth_gbps if a else None,
                       b.bandwidth_gbps if b else None)]
    return out


# -- as tables ---------------------------------------------------------------------------------


def _mb(size_bytes: int | float | None) -> float | None:
    return None if size_bytes is None else size_bytes / 1e6  # msprof's MB


def link_type_table(found: ClusterComm) -> Table:
    """Per rank, step and transport: size, time, bandwidth against the ranks' median."""
    rows = [(r.rank or "(all)", r.step, t.transport, _mb(t.size_bytes), t.time_ns,
             t.bandwidth_gbps, t.peer_median_gbps, "slow" if t.slow else "")
            for r in found.ranks for t in r.transports]
    table = rows_table(["Rank", "Step", "Transport", "Size(MB)", "Time", "Bandwidth(GB/s)",
                        "Ranks median(GB/s)", "Flag"],
                       ["text", "", "text", "MB", "ns", "GB/s", "GB/s", "text"], rows)
    return dataclasses.replace(table, kind="cluster_link_types", additive=False)


def matrix_table(cells: Sequence[MatrixCell]) -> Table:
    """The matrix's links, one row each."""
    rows = [(c.step, c.src or "(all)", c.dst or "(all)", c.transport, _mb(c.size_bytes),
             c.time_ns, c.bandwidth_gbps, c.median_gbps,
             "slow" if c.slow else "" if c.judged or c.transport == "LOCAL" else "too small")
            for c in cells]
    table = rows_table(["Step", "Src", "Dst", "Transport", "Size(MB)", "Time",
                        "Bandwidth(GB/s)", "Median(GB/s)", "Flag"],
                       ["", "text", "text", "text", "MB", "ns", "GB/s", "GB/s", "text"], rows)
    return dataclasses.replace(table, kind="cluster_link_matrix", additive=False)


def check_table(checks: Sequence[Check]) -> Table:
    """The figures compared, one row each: the profiler's, proftui's, and whether they
    differ (units as text: the rows mix ns, bytes and GB/s)."""
    def shown(value: float | None, unit: str) -> str:
        if value is None:
            return "-"
        if unit == "ns":
            return f"{value / 1e6:,.6f} ms"
        if unit == "bytes":
            return f"{value / 1e6:,.6f} MB"
        return f"{value:,.4f} GB/s"

    rows = [(c.table, c.key, c.figure, shown(c.profiler, c.unit), shown(c.proftui, c.unit),
             "differs" if c.differs else "") for c in checks]
    table = rows_table(["Table", "Key", "Figure", "msprof-analyze", "proftui", "Flag"],
                       ["text"] * 6, rows)
    return dataclasses.replace(table, kind="cluster_profiler_checks", additive=False)
