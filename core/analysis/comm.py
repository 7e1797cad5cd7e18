"""How the ranks communicate: each collective's times, the bandwidth of each transport and
link, and the slow links and small packets, from HCCL's own communication summaries
(communication.json and communication_matrix.json, or analysis.db's tables: see
:mod:`proftui.core.importers.ascend_comm`).

Per rank and step, per communication op (as HCCL measured it): elapse, transit, wait,
synchronisation and idle time; wait ratio = wait / (wait + transit) and sync ratio = sync /
(sync + transit), as msprof computes them (its file rounds them to 4 decimals); the bytes it
moved (RDMA plus the intra-node SDMA, which msprof makes the sum of HCCS, PCIE and SIO, so
those are not added again). The rank's totals are the sums, ratios of the sums (msprof's
"Total Op Info").

Per rank, step and transport: size and time summed over the ops, bandwidth = size / time
(GB/s = bytes per ns; msprof's MB / ms), packets from the size distributions, large packets
those over msprof's message size threshold (32 MB on HCCS, PCIE and SIO, 0.5 MB on RDMA),
the average packet; the ops that used it and the small ones among them.

Links: the communication matrix's src -> dst links of each op type (torch_npu's
``<type>-total`` entries, all that type's ops summed; msprof's per-op entries are summed the
same way here), with size, time and bandwidth.

Bandwidth is judged only where the size makes it mean something: a link (its size in the
step, its ops summed) or a rank's transport (any one op on it) moving at least
MIN_JUDGED_BYTES (1 MB). Under that a transfer's time is its latency: on the corpus a 100-byte
HCCS transfer takes 1.2 to 1.8 µs whatever the link, "0.06 GB/s". 1 MB is msprof-analyze's smallest
RDMA transfer that is not a small packet (packet.yaml min_rdma_size); at 1 MB and 19 GB/s the
1.7 µs is 3 % of the time, far inside the 20 % a slow link must lose. msprof itself blames
small packets, not the link, when a transport is slow with under 80 % large packets
(LARGE_MESSAGE_RATE). Links and transports under it are neither peers nor slow (`judged`
false) and are counted as left out.

Flags:

- slow link: a link under SLOW_RATIO (0.8, msprof's BANDWIDTH_THRESHOLD) of the median
  bandwidth of its peers, the links of the same step, op type, group and transport on every
  rank (LOCAL copies left out). msprof compares the slowest link of an op with 0.8 of the
  mean; the median here is not dragged down by the slow link itself, and every slow link is
  named, not only the slowest.
- slow transport: a rank whose bandwidth on a transport in a step is under SLOW_RATIO of the
  ranks' median (msprof-analyze's slow-link analysis compares the ranks' SDMA and RDMA
  bandwidths by their spread, (max - min) / mean, and names the extremes).
- small packets: as msprof-analyze's packet rule: more than SMALL_OP_SHARE (20 %) of the ops
  on SDMA (or HCCS, PCIE, SIO where the summary has no SDMA) moved under 16 MB, or of those
  on RDMA under 1 MB. The large-packet ratio (msprof's own per-packet figure, which its rule
  weighs only with the bandwidth against the chip's theoretical one) is shown, not flagged.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proftui.core.importers.ascend_comm import Collective, CommData, Transport
from proftui.core.model.index import TraceIndex
from proftui.core.model.naming import natural_key
from proftui.core.ops.roles import roles, slice_groups
from proftui.core.query.search import find_slices

SLOW_RATIO = 0.8
SMALL_OP_SHARE = 0.2
SMALL_OP_BYTES = {"RDMA": 1_000_000}  # packet.yaml min_rdma_size (MB)
SMALL_OP_BYTES_SDMA = 16_000_000  # packet.yaml min_sdma_size, for the intra-node types
LARGE_PACKET_BYTES = {"RDMA": 500_000}  # msprof MessageSizeThreshold (MB)
LARGE_PACKET_BYTES_OTHER = 32_000_000  # HCCS, PCIE, SIO
MIN_JUDGED_BYTES = 1_000_000  # under it a transfer's time is latency (module docstring)
INTRA = ("HCCS", "PCIE", "SIO")  # what SDMA sums
_HCOM = re.compile(r"^hcom_([A-Za-z0-9]+)")


def ratio(part: int | None, other: int | None) -> float | None:
    """part / (part + other), msprof's wait and sync ratios; None when undefined."""
    if part is None or other is None or part + other == 0:
        return None
    return part / (part + other)


def bandwidth(size_bytes: int | None, time_ns: int | None) -> float | None:
    """GB/s (10^9 bytes a second: bytes per ns); None without a time."""
    if size_bytes is None or not time_ns:
        return None
    return size_bytes / time_ns


def not_judged(links: Iterable[Any]) -> int:
    """How many of `links` (each with a transport and `judged`) are between ranks (LOCAL
    copies aside) and too small to judge their bandwidth."""
    return sum(x.transport != "LOCAL" and not x.judged for x in links)


def sized_for_bandwidth(transport: str, size_bytes: int | None) -> bool:
    """Whether a transfer of `size_bytes` is large enough for its bandwidth to say anything of
    the link (see the module docstring); LOCAL copies never are compared."""
    return transport != "LOCAL" and (size_bytes or 0) >= MIN_JUDGED_BYTES


def moved_bytes(transports: Iterable[Transport]) -> int:
    """What an op moved: every transport but SDMA when the types it sums are listed."""
    found = list(transports)
    intra = any(t.transport in INTRA for t in found)
    return sum(t.size_bytes or 0 for t in found if not (intra and t.transport == "SDMA"))


@dataclass(frozen=True)
class TransportStat:
    """One transport over some ops: totals, bandwidth, packets, small ops; `slow` and
    `small_packets` are the flags (see the module docstring)."""

    transport: str
    size_bytes: int
    time_ns: int
    bandwidth_gbps: float | None
    packets: int
    large_packets: int
    ops: int
    small_ops: int
    peer_median_gbps: float | None = None
    slow: bool = False
    small_packets: bool = False
    judged: bool = False  # some op on it moved MIN_JUDGED_BYTES or more

    @property
    def large_packet_ratio(self) -> float | None:
        return self.large_packets / self.packets if self.packets else None

    @property
    def avg_packet_bytes(self) -> float | None:
        return self.size_bytes / self.packets if self.packets else None

    def to_json(self) -> dict[str, Any]:
        return {"transport": self.transport, "size_bytes": self.size_bytes,
                "time_ns": self.time_ns, "bandwidth_gbps": self.bandwidth_gbps,
                "packets": self.packets, "large_packets": self.large_packets,
                "large_packet_ratio": self.large_packet_ratio,
                "avg_packet_bytes": self.avg_packet_bytes, "ops": self.ops,
                "small_ops": self.small_ops, "peer_median_gbps": self.peer_median_gbps,
                "slow": self.slow, "small_packets": self.small_packets,
                "judged": self.judged}


def transport_stats(collectives: Sequence[Collective]) -> list[TransportStat]:
    """Per transport (in name order), the totals over `collectives`."""
    totals: dict[str, list[int]] = {}
    for c in collectives:
        for t in c.transports:
            size = t.size_bytes or 0
            threshold = LARGE_PACKET_BYTES.get(t.transport, LARGE_PACKET_BYTES_OTHER)
            small = SMALL_OP_BYTES.get(t.transport, SMALL_OP_BYTES_SDMA)
            row = totals.setdefault(t.transport, [0, 0, 0, 0, 0, 0, 0])
            row[0] += size
            row[1] += t.time_ns or 0
            row[2] += sum(p.count for p in t.packets)
            row[3] += sum(p.count for p in t.packets if p.size_bytes > threshold)
            row[4] += 1 if size else 0
            row[5] += 1 if 0 < size < small else 0
            row[6] += 1 if sized_for_bandwidth(t.transport, size) else 0
    return [TransportStat(name, s, ns, bandwidth(s, ns), n, large, ops, small, judged=big > 0)
            for name, (s, ns, n, large, ops, small, big) in sorted(totals.items())]


@dataclass(frozen=True)
class CollectiveStat:
    """One communication op of one rank, with its ratios and transports."""

    rank: str
    op: Collective
    wait_ratio: float | None
    sync_ratio: float | None
    moved_bytes: int
    transports: list[TransportStat]

    def to_json(self) -> dict[str, Any]:
        c = self.op
        return {"rank": self.rank, "step": c.step, "kind": c.kind, "name": c.name,
                "group": c.group, "start_ns": c.start_ns, "elapse_ns": c.elapse_ns,
                "transit_ns": c.transit_ns, "wait_ns": c.wait_ns, "sync_ns": c.sync_ns,
                "idle_ns": c.idle_ns, "wait_ratio": self.wait_ratio,
                "sync_ratio": self.sync_ratio, "moved_bytes": self.moved_bytes,
                "transports": [t.to_json() for t in self.transports]}


@dataclass(frozen=True)
class RankStep:
    """One rank's step: its ops' times summed (ratios of the sums) and its transports."""

    rank: str
    step: int | None
    ops: int
    times_ns: dict[str, int]  # elapse, transit, wait, sync, idle
    wait_ratio: float | None
    sync_ratio: float | None
    moved_bytes: int
    transports: list[TransportStat]

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "step": self.step, "ops": self.ops,
                **{f"{k}_ns": v for k, v in self.times_ns.items()},
                "wait_ratio": self.wait_ratio, "sync_ratio": self.sync_ratio,
                "moved_bytes": self.moved_bytes,
                "transports": [t.to_json() for t in self.transports]}


@dataclass(frozen=True)
class LinkStat:
    """One src -> dst link of an op type in a rank's step."""

    rank: str
    step: int | None
    kind: str
    op_type: str
    group: str
    src: str
    dst: str
    transport: str
    size_bytes: int
    time_ns: int
    bandwidth_gbps: float | None
    peer_median_gbps: float | None = None
    peers: int = 0
    slow: bool = False
    judged: bool = False  # between ranks and of MIN_JUDGED_BYTES or more

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # every field, by its name


@dataclass(frozen=True)
class Flag:
    """Something to look at: a slow link or transport, or small packets."""

    kind: str  # "slow_link", "slow_transport", "small_packets"
    rank: str
    step: int | None
    title: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rank": self.rank, "step": self.step, "title": self.title}


@dataclass(frozen=True)
class Source:
    """Where a rank's summary came from, what was wrong in it."""

    rank: str
    path: str
    form: str
    problems: dict[str, int]
    error: str

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "path": self.path, "format": self.form,
                "problems": self.problems, "error": self.error or None}


@dataclass(frozen=True)
class CommReport:
    """The answer: per rank and step, the ops (largest elapse first), transports, links and
    the flags; the sources and the files not read."""

    sources: list[Source]
    ranks: list[RankStep]
    collectives: list[CollectiveStat]
    links: list[LinkStat]
    flags: list[Flag]
    unused: list[tuple[str, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.collectives and not self.links

    @property
    def links_not_judged(self) -> int:
        """Links between ranks (LOCAL copies aside) too small to judge their bandwidth."""
        return not_judged(self.links)

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        return {"sources": [s.to_json() for s in self.sources],
                "not_used": [{"path": p, "why": why} for p, why in self.unused],
                "thresholds": {"slow_ratio": SLOW_RATIO, "small_op_share": SMALL_OP_SHARE,
                               "small_op_bytes": {"RDMA": SMALL_OP_BYTES["RDMA"],
                                                  "SDMA": SMALL_OP_BYTES_SDMA},
                               "large_packet_bytes": {"RDMA": LARGE_PACKET_BYTES["RDMA"],
                                                      "other": LARGE_PACKET_BYTES_OTHER},
                               "min_judged_bytes": MIN_JUDGED_BYTES},
                "ranks": [r.to_json() for r in self.ranks],
                "n_collectives": len(self.collectives),
                "collectives": [c.to_json() for c in self.collectives[:top]],
                "links": [x.to_json() for x in self.links],
                "links_not_judged": self.links_not_judged,
                "flags": [f.to_json() for f in self.flags]}


# -- the analysis -------------------------------------------------------------------------------


def communication(found: Sequence[CommData],
                  unused: Sequence[tuple[str, str]] = ()) -> CommReport:
    """The report over the ranks' summaries (see the module docstring)."""
    sources = [Source(d.rank, d.source, d.form, dict(d.problems), d.error) for d in found]
    collectives: list[CollectiveStat] = []
    ranks: list[RankStep] = []
    for data in found:
        by_step: dict[int | None, list[Collective]] = {}
        for c in data.collectives:
            by_step.setdefault(c.step, []).append(c)
            collectives.append(CollectiveStat(
                data.rank, c, ratio(c.wait_ns, c.transit_ns), ratio(c.sync_ns, c.transit_ns),
                moved_bytes(c.transports), transport_stats([c])))
        for step, ops in by_step.items():
            ranks.append(_rank_step(data.rank, step, ops))
    ranks = _flag_transports(ranks)
    collectives.sort(key=lambda s: (-(s.op.elapse_ns or 0), natural_key(s.rank), s.op.name))
    links = _flag_links([x for data in found for x in _links(data)])
    flags = _flags(ranks, links)
    return CommReport(sources, ranks, collectives, links, flags, list(unused))


def _rank_step(rank: str, step: int | None, ops: list[Collective]) -> RankStep:
    def total(attr: str) -> int:
        return sum(getattr(c, attr) or 0 for c in ops)

    times = {k: total(f"{k}_ns") for k in ("elapse", "transit", "wait", "sync", "idle")}
    return RankStep(rank, step, len(ops), times, ratio(times["wait"], times["transit"]),
                    ratio(times["sync"], times["transit"]),
                    sum(moved_bytes(c.transports) for c in ops), transport_stats(ops))


def _median_of(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _flag_transports(ranks: list[RankStep]) -> list[RankStep]:
    """Each rank's transports compared with the other ranks' (same step and transport);
    small packets by the ops on SDMA and RDMA (see the module docstring)."""
    peers: dict[tuple, list[float]] = {}
    for r in ranks:
        for t in r.transports:
            if t.bandwidth_gbps is not None and t.judged:
                peers.setdefault((r.step, t.transport), []).append(t.bandwidth_gbps)
    out = []
    for r in ranks:
        names = {t.transport for t in r.transports if t.ops}
        checked = {"RDMA", "SDMA"} | (set() if "SDMA" in names else set(INTRA))
        stats = []
        for t in r.transports:
            mine = peers.get((r.step, t.transport), [])
            median = _median_of(mine) if len(mine) > 1 else None
            slow = (median is not None and t.bandwidth_gbps is not None and t.judged
                    and t.bandwidth_gbps < SLOW_RATIO * median)
            small = (t.transport in checked and t.ops > 0
                     and t.small_ops / t.ops > SMALL_OP_SHARE)
            stats.append(_replace(t, peer_median_gbps=median, slow=slow, small_packets=small))
        out.append(_replace(r, transports=stats))
    return out


def _replace(item: Any, **changes: Any) -> Any:
    return dataclasses.replace(item, **changes)


def op_type(name: str) -> str:
    """"allreduce" of "hcom_allReduce__586_0_1", as torch_npu names its matrix entries."""
    found = _HCOM.match(name)
    return found.group(1).lower() if found else name


def _links(data: CommData) -> list[LinkStat]:
    """A rank's links per step: the producer's per-type totals, else its per-op links summed
    per op type."""
    totals = {x.step for x in data.links if x.sample == "total"}
    summed: dict[tuple, list] = {}
    for x in data.links:
        if (x.step in totals and x.sample != "total") or (x.step not in totals
                                                           and x.sample != "op"):
            continue  # samples are single ops the totals hold already
        kind_of_op = x.op_type if x.sample == "total" else op_type(x.op_type)
        key = (x.step, x.kind, kind_of_op, x.group, x.src, x.dst)
        row = summed.setdefault(key, [x.transport, 0, 0])
        row[1] += x.size_bytes or 0
        row[2] += x.time_ns or 0
    return [LinkStat(data.rank, step, kind, op, group, src, dst, transport, size, ns,
                     bandwidth(size, ns))
            for (step, kind, op, group, src, dst), (transport, size, ns) in summed.items()]


def _flag_links(links: list[LinkStat]) -> list[LinkStat]:
    """Each link against its peers: same step, kind, op type, group and transport."""
    def key(x: LinkStat) -> tuple:
        return (x.step, x.kind, x.op_type, x.group, x.transport)

    peers: dict[tuple, list[float]] = {}
    for x in links:
        if sized_for_bandwidth(x.transport, x.size_bytes) and x.bandwidth_gbps is not None:
            peers.setdefault(key(x), []).append(x.bandwidth_gbps)
    out = []
    for x in links:
        mine = peers.get(key(x), []) if x.transport != "LOCAL" else []
        median = _median_of(mine) if len(mine) > 1 else None
        sized = sized_for_bandwidth(x.transport, x.size_bytes)
        slow = (median is not None and x.bandwidth_gbps is not None and sized
                and x.bandwidth_gbps < SLOW_RATIO * median)
        out.append(_replace(x, peer_median_gbps=median, peers=len(mine), slow=slow,
                            judged=sized))
    out.sort(key=lambda x: (natural_key(x.rank), -1 if x.step is None else x.step, x.kind,
                            x.op_type, x.group, natural_key(x.src), natural_key(x.dst)))
    return out


def _flags(ranks: list[RankStep], links: list[LinkStat]) -> list[Flag]:
    out = []
    for x in links:
        if x.slow and x.bandwidth_gbps is not None and x.peer_median_gbps:
            out.append(Flag("slow_link", x.rank, x.step, (
                f"{x.src} -> {x.dst} {x.transport} ({x.op_type}) runs at "
                f"{x.bandwidth_gbps:.2f} GB/s, {x.bandwidth_gbps / x.peer_median_gbps:.0%} of "
                f"the median of its {x.peers} peers ({x.peer_median_gbps:.2f} GB/s)")))
    for r in ranks:
        for t in r.transports:
            if t.slow and t.bandwidth_gbps is not None and t.peer_median_gbps:
                out.append(Flag("slow_transport", r.rank, r.step, (
                    f"{t.transport} runs at {t.bandwidth_gbps:.2f} GB/s, "
                    f"{t.bandwidth_gbps / t.peer_median_gbps:.0%} of the ranks' median "
                    f"({t.peer_median_gbps:.2f} GB/s)")))
            if t.small_packets:
                limit = SMALL_OP_BYTES.get(t.transport, SMALL_OP_BYTES_SDMA) / 1e6
                out.append(Flag("small_packets", r.rank, r.step, (
                    f"{t.small_ops} of {t.ops} ops on {t.transport} moved under {limit:g} MB "
                    f"each (over {SMALL_OP_SHARE:.0%} of them)")))
    return out


def find_on_timeline(index: TraceIndex, rank: str, name: str) -> int | None:
    """The slice of op `name` of `rank` (a group of the profile, "" for one rank) on the
    timeline: the first on a device track, else the first anywhere; None if not there."""
    rows = find_slices(index, re.compile(f"^{re.escape(name)}$"))
    if not len(rows):
        return None
    s = index.strings
    groups = slice_groups(index)[rows]
    mine = rows[np.array([s[g] == rank for g in groups.tolist()], bool)]
    if not len(mine):
        return None
    device = roles(index).device[index.col("slices.track")[mine]]
    chosen = mine[device] if device.any() else mine
    return int(chosen[0])  # find_slices orders by start
