"""The communication summary of an Ascend SQLite export: analysis.db's ``CommAnalyzerTime``,
``CommAnalyzerBandwidth`` and ``CommAnalyzerMatrix``, read into the records of
:mod:`.ascend_comm` (the same as communication.json and communication_matrix.json give).

The tables hold what the JSON files hold, a row per figure set: CommAnalyzerTime one row per
op (``hccl_op_name``, ``group_name``, ``start_timestamp`` in µs, the times in ms, ``step``
such as "step50", ``type`` "collective" or "p2p"); CommAnalyzerBandwidth one row per op,
transport and packet size (the transport's ``transit_size`` MB, ``transit_time`` ms,
``bandwidth`` and ``large_packet_ratio`` repeated on each, then ``package_size`` MB, ``count``
and ``total_duration`` ms of that size; a transport without packets has one row of size 0 and
count 0); CommAnalyzerMatrix one row per link (``hccl_op_name`` "allreduce-total",
``src_rank``, ``dst_rank``, ``transport_type``, ``op_name``). The ratios of the JSON's time
info are not stored; the analysis computes them.
"""

from __future__ import annotations

from proftui.core.importers.ascend_comm import (
    MB,
    MS,
    US,
    Collective,
    CommData,
    Link,
    PacketSize,
    Problems,
    Transport,
    exact,
    kept,
    number,
    order_collectives,
    order_links,
    sample_of,
    step_number,
)
from proftui.core.model.errors import NotATraceError
from proftui.core.source.dbfile import DbFile, open_db

TIME, BANDWIDTH, MATRIX = "CommAnalyzerTime", "CommAnalyzerBandwidth", "CommAnalyzerMatrix"
TABLES = (TIME, BANDWIDTH, MATRIX)
_TIME_COLUMNS = ("hccl_op_name", "group_name", "start_timestamp", "elapse_time",
                 "transit_time", "wait_time", "synchronization_time", "idle_time", "step",
                 "type")
_BANDWIDTH_COLUMNS = ("hccl_op_name", "group_name", "transport_type", "transit_size",
                      "transit_time", "bandwidth", "large_packet_ratio", "package_size",
                      "count", "total_duration", "step", "type")
_MATRIX_COLUMNS = ("hccl_op_name", "group_name", "src_rank", "dst_rank", "transport_type",
                   "transit_size", "transit_time", "bandwidth", "step", "type")


def read_db(rank: str, path: str) -> CommData:
    """Read the communication tables of analysis.db at `path` (never written to)."""
    problems = Problems()
    try:
        with open_db(path) as db:
            times = _rows(db, TIME, _TIME_COLUMNS, problems)
            bandwidth = _rows(db, BANDWIDTH, _BANDWIDTH_COLUMNS, problems)
            matrix = _rows(db, MATRIX, _MATRIX_COLUMNS, problems,
                           optional=("op_name",))
    except NotATraceError as exc:
        return CommData(rank, path, "db", error=str(exc))
    transports = _transports(bandwidth, problems)
    collectives = []
    for row in times:
        key = _key(row)
        collectives.append(Collective(
            key[0], key[1], key[2], key[3], exact(row["start_timestamp"], US, problems),
            exact(row["elapse_time"], MS, problems), exact(row["transit_time"], MS, problems),
            exact(row["wait_time"], MS, problems),
            exact(row["synchronization_time"], MS, problems),
            exact(row["idle_time"], MS, problems), transports.pop(key, ())))
    problems.add("comm_unmatched", len(transports))
    links = []
    for row in matrix:
        op_type, sample = sample_of(str(row["hccl_op_name"] or ""))
        step, kind, _, group = _key(row)
        links.append(Link(step, kind, op_type, sample, group, str(row["src_rank"] or ""),
                          str(row["dst_rank"] or ""), str(row["transport_type"] or ""),
                          exact(row["transit_size"], MB, problems),
                          exact(row["transit_time"], MS, problems),
                          number(row["bandwidth"], problems), str(row.get("op_name") or "")))
    return CommData(rank, path, "db", order_collectives(collectives), order_links(links),
                    problems.counts)


def _rows(db: DbFile, table: str, columns: tuple[str, ...], problems: Problems,
          optional: tuple[str, ...] = ()) -> list[dict]:
    """The rows of `table` as dicts, in rowid order; none when it is missing, none (counted)
    when it lacks a column."""
    if table not in db.tables:
        return []
    if not db.has(table, *columns):
        problems.add("comm_missing_column")
        return []
    wanted = list(columns) + [c for c in optional if db.has(table, c)]
    names = ", ".join(f'"{c}"' for c in wanted)
    return [dict(zip(wanted, row)) for row in
            db.fetch(f'SELECT {names} FROM "{table}" ORDER BY rowid')]


def _key(row: dict) -> tuple[int | None, str, str, str]:
    """(step, kind, op name, group) of a row."""
    kind = str(row["type"] or "collective")
    return (step_number(row["step"]), kind, str(row["hccl_op_name"] or ""),
            str(row["group_name"] or ""))


def _transports(rows: list[dict], problems: Problems) -> dict[tuple, tuple[Transport, ...]]:
    """Per op key, its transports with their packet sizes (rows of one op and transport
    carry the transport's figures each; the first row's are taken)."""
    per_op: dict[tuple, dict[str, tuple[dict, list[PacketSize]]]] = {}
    for row in rows:
        transport = str(row["transport_type"] or "")
        first, packets = per_op.setdefault(_key(row), {}).setdefault(transport, (row, []))
        count = exact(row["count"], 1, problems)
        size = exact(row["package_size"], MB, problems)
        if count and size is not None:  # a transport without packets has one row of count 0
            packets.append(PacketSize(size, count, exact(row["total_duration"], MS, problems)))
    out = {}
    for key, by_transport in per_op.items():
        found = []
        for transport, (row, packets) in sorted(by_transport.items()):
            item = Transport(transport, exact(row["transit_size"], MB, problems),
                             exact(row["transit_time"], MS, problems),
                             number(row["bandwidth"], problems),
                             number(row["large_packet_ratio"], problems),
                             tuple(sorted(packets, key=lambda p: p.size_bytes)))
            if kept(item):
                found.append(item)
        out[key] = tuple(found)
    return out
