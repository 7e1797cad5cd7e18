"""msprof-analyze's cluster_communication.json and cluster_communication_matrix.json as
summary tables (the Tables pane, `proftui table`): one row per rank of each op, per transport
of each op and rank, and per link of each op type.

The files' layout (see :mod:`.cluster_output`): ``rank set -> step -> "<op>@<group hash>" ->
...``. In cluster_communication.json each op (and ``Total Op Info``, the rank's ops summed)
holds, per global rank, its ``Communication Time Info`` and ``Communication Bandwidth Info``
per transport; in cluster_communication_matrix.json each op type and sample
(``allreduce-total``, and ``Total Op Info``) holds its ``"<src>-<dst>"`` links.

Headers are the files' own keys; the keys of the layout get names of their own (``Rank Set``,
``Step``, ``Op Name``, ``Group Name``, ``Rank ID``; the matrix's ``Op Type``, ``Src Rank``,
``Dst Rank``). ``Start Timestamp(us)`` becomes exact integer ns; the other figures stay in
the unit their header says. An entry of another shape is skipped and a figure that is no
number left empty, each counted in the table's diagnostics; the rest is shown.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from proftui.core.importers.ascend_comm import (
    US,
    Problems,
    exact,
    load_json,
    number,
    split_key,
    step_number,
)
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.errors import ProftuiError
from proftui.core.model.table import Column, Table, split_unit, text_column

COMMUNICATION = "cluster_communication"
BANDWIDTH = "cluster_communication_bandwidth"
MATRIX = "cluster_communication_matrix"
# Each file -> the tables made of it.
FILE_TABLES = {"cluster_communication.json": (COMMUNICATION, BANDWIDTH),
               "cluster_communication_matrix.json": (MATRIX,)}
KINDS = frozenset(kind for kinds in FILE_TABLES.values() for kind in kinds)

_TIME_INFO = ("Elapse Time(ms)", "Transit Time(ms)", "Wait Time(ms)",
              "Synchronization Time(ms)", "Idle Time(ms)", "Wait Time Ratio",
              "Synchronization Time Ratio")
_TRANSPORT = ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Large Packet Ratio")
_LINK = ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)")
_MISSING_TS = np.iinfo(np.int64).min
# The sentences of the problems counted (kept in the table's diagnostics).
BAD_ENTRY = "json_bad_entry"
BAD_VALUE = "json_bad_value"


def read_cluster_table(path: str, kind: str, group: str = "") -> Table:
    """The table `kind` (one of KINDS) of the msprof-analyze file at `path`; raises
    ProftuiError when the file cannot be read or is no such JSON object."""
    data, error = load_json(path)
    if error:
        raise ProftuiError(error)
    problems = Problems()
    if kind == MATRIX:
        rows, figures = _links(data, problems), _LINK
        keys = ["Rank Set", "Step", "Op Type", "Group Name", "Src Rank", "Dst Rank",
                "Transport Type", "Op Name"]
    elif kind == BANDWIDTH:
        rows, figures = _transports(data, problems), _TRANSPORT
        keys = ["Rank Set", "Step", "Op Name", "Group Name", "Rank ID", "Transport Type"]
    elif kind == COMMUNICATION:
        rows, figures = _times(data, problems), ("Start Timestamp(us)", *_TIME_INFO)
        keys = ["Rank Set", "Step", "Op Name", "Group Name", "Rank ID"]
    else:
        raise ProftuiError(f"{os.path.basename(path)}: no table of kind {kind}.")
    listed = list(rows)
    columns = [_key_column(k, [r[0][i] for r in listed]) for i, k in enumerate(keys)]
    columns += [_figure_column(h, [r[1][i] for r in listed]) for i, h in enumerate(figures)]
    diagnostics = Diagnostics()
    for name, count in problems.counts.items():
        diagnostics.add(BAD_ENTRY if name == "comm_bad_entry" else BAD_VALUE, count)
    # ("Total Op Info" rows sum the ops beside them, the matrix's samples overlap its totals:
    # the rows do not add up)
    return Table(kind, path, columns, len(listed), diagnostics, group, additive=False)


def tables_of(name: str) -> tuple[str, ...]:
    """The kinds of table made of a file called `name` (none for any other file)."""
    return FILE_TABLES.get(name, ())


# -- rows: (key cells, figure cells) ------------------------------------------------------------

Row = tuple[list[Any], list[Any]]


def _ops(data: Any, problems: Problems) -> Iterator[tuple[str, Any, str, str, dict]]:
    """(rank set, step, op name, group hash, entry) of every op of a cluster file."""
    for rank_set, by_step in data.items():
        if not isinstance(by_step, dict):
            problems.add("comm_bad_entry")
            continue
        for label, ops in by_step.items():
            if not isinstance(ops, dict):
                problems.add("comm_bad_entry")
                continue
            step = step_number(label)
            for key, entry in ops.items():
                if not isinstance(entry, dict):
                    problems.add("comm_bad_entry")
                    continue
                name, group_hash = split_key(str(key))
                yield str(rank_set), step, name, group_hash, entry


def _ranks(data: Any, problems: Problems) -> Iterator[tuple[list[Any], dict]]:
    """(keys, entry) of every rank of every op of cluster_communication.json."""
    for rank_set, step, name, group_hash, entry in _ops(data, problems):
        for rank, value in entry.items():
            if not (str(rank).isdigit() and isinstance(value, dict)):
                problems.add("comm_bad_entry")
                continue
            yield [rank_set, step, name, group_hash, int(rank)], value


def _times(data: Any, problems: Problems) -> Iterator[Row]:
    for keys, value in _ranks(data, problems):
        times = value.get("Communication Time Info")
        if not isinstance(times, dict):
            problems.add("comm_bad_entry")
            continue
        yield keys, [exact(times.get("Start Timestamp(us)"), US, problems),
                     *(number(times.get(h), problems) for h in _TIME_INFO)]


def _transports(data: Any, problems: Problems) -> Iterator[Row]:
    for keys, value in _ranks(data, problems):
        bandwidth = value.get("Communication Bandwidth Info")
        if not isinstance(bandwidth, dict):
            if bandwidth is not None:
                problems.add("comm_bad_entry")
            continue
        for transport, info in bandwidth.items():
            if not isinstance(info, dict):
                problems.add("comm_bad_entry")
                continue
            figures = [number(info.get(h), problems) for h in _TRANSPORT]
            if figures[0] or figures[1]:  # the transports it did not use are padding
                yield [*keys, str(transport)], figures


def _links(data: Any, problems: Problems) -> Iterator[Row]:
    for rank_set, step, name, group_hash, entry in _ops(data, problems):
        for pair, link in entry.items():
            src, dash, dst = str(pair).partition("-")
            if not (dash and src.isdigit() and dst.isdigit() and isinstance(link, dict)):
                problems.add("comm_bad_entry")
                continue
            yield ([rank_set, step, name, group_hash, int(src), int(dst),
                    str(link.get("Transport Type", "")), str(link.get("Op Name", ""))],
                   [number(link.get(h), problems) for h in _LINK])


# -- columns ------------------------------------------------------------------------------------


def _key_column(header: str, values: list[Any]) -> Column:
    """Step and ranks as numbers (a step not numbered, empty), the rest as text."""
    if header in ("Step", "Rank ID", "Src Rank", "Dst Rank"):
        return Column(header, header, "", "number", np.array(
            [math.nan if v is None else v for v in values], np.float64))
    return text_column(header, values)


def _figure_column(header: str, values: list[Any]) -> Column:
    """A figure in its header's unit; the start timestamps as integer ns."""
    name, unit = split_unit(header)
    if header == "Start Timestamp(us)":
        return Column(header, name, "ns", "timestamp", np.array(
            [_MISSING_TS if v is None else v for v in values], np.int64))
    return Column(header, name, unit, "number", np.array(
        [math.nan if v is None else v for v in values], np.float64))
