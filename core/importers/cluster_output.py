"""msprof-analyze's cluster_analysis_output (``msprof-analyze cluster -d DIR``) as records:
cluster_communication.json, cluster_communication_matrix.json and communication_group.json.
(Its cluster_step_trace_time.csv is a summary table: discovery lists it with the others.)

cluster_communication.json holds, per communication group (``"(0, 1)"``: its ranks) and step
(``"step50"``), each op ``"<name>@<group hash>"`` per global rank (``"0"``) in the entry shape
of a rank's communication.json, and ``"Total Op Info@<group hash>"``: per rank, its ops summed
(times, and per transport size, time and bandwidth; no ratios of packets).
cluster_communication_matrix.json holds, per group and step, the links of each op type and
sample (``"allreduce-total@<hash>"``) and ``"Total Op Info@<hash>"`` (all op types summed),
``"<src>-<dst>"`` in *global* ranks (msprof-analyze maps each rank's local ids by its
``k-k`` LOCAL link and drops the links it cannot map). communication_group.json lists the
groups' ranks: ``{"collective": [[0, 1]], "p2p": [], "comm_group_parallel_info": [...]}``.

Figures are read as :mod:`.ascend_comm` reads a rank's files (integer ns and bytes, problems
counted); a file that cannot be read gives one sentence in `errors`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from proftui.core.importers.ascend_comm import (
    Collective,
    Link,
    Problems,
    kind_of,
    load_json,
    read_collective,
    read_links,
    split_key,
    step_number,
)

TOTAL = "Total Op Info"


@dataclass(frozen=True)
class RankTotal:
    """One rank's ops of one group and step summed by msprof-analyze ("Total Op Info")."""

    rank: int
    group: str  # the group's hash
    total: Collective


@dataclass(frozen=True)
class ClusterOutput:
    """What a cluster_analysis_output folder holds (see the module docstring)."""

    folder: str
    files: dict[str, str] = field(default_factory=dict)  # kind -> path
    totals: tuple[RankTotal, ...] = ()
    ops: int = 0  # per-rank op entries (not totals)
    links: tuple[Link, ...] = ()  # src, dst: global ranks
    groups: dict[str, list[list[int]]] = field(default_factory=dict)
    problems: dict[str, int] = field(default_factory=dict)
    errors: tuple[str, ...] = ()


def read_cluster_output(files: dict[str, str]) -> ClusterOutput:
    """Read the files given (kind -> path: cluster_communication,
    cluster_communication_matrix, communication_group; any may be missing)."""
    problems = Problems()
    errors: list[str] = []
    totals: list[RankTotal] = []
    links: list[Link] = []
    ops = 0
    groups: dict[str, list[list[int]]] = {}

    def load(kind: str) -> Any:
        if kind not in files:
            return None
        data, error = load_json(files[kind])
        if error:
            errors.append(error)
        return data

    for step, key, entry in _steps(load("cluster_communication"), problems):
        name, group = split_key(key)
        for rank, value in entry.items():
            if not (str(rank).isdigit() and isinstance(value, dict)):
                problems.add("comm_bad_entry")
                continue
            if name == TOTAL:
                totals.append(RankTotal(int(rank), group, read_collective(
                    step, "collective", key, value, problems)))
            else:
                ops += 1
    for step, key, entry in _steps(load("cluster_communication_matrix"), problems):
        op_type = split_key(key)[0]
        links += read_links(step, kind_of(op_type), key, entry, problems)
    found = load("communication_group")
    for kind in ("collective", "p2p"):
        value = found.get(kind) if isinstance(found, dict) else None
        if isinstance(value, list):
            groups[kind] = [[int(r) for r in g if isinstance(r, int)] for g in value
                            if isinstance(g, list)]
    folder = os.path.dirname(next(iter(files.values()), ""))
    return ClusterOutput(folder, dict(files), tuple(totals), ops, tuple(links), groups,
                         problems.counts, tuple(errors))


def _steps(data: Any, problems: Problems):
    """(step, key, entry) of every ``group -> step -> key -> entry`` of a cluster file."""
    if not isinstance(data, dict):
        return
    for by_step in data.values():
        if not isinstance(by_step, dict):
            problems.add("comm_bad_entry")
            continue
        for label, entries in by_step.items():
            if not isinstance(entries, dict):
                problems.add("comm_bad_entry")
                continue
            step = step_number(label)
            for key, entry in entries.items():
                if isinstance(entry, dict):
                    yield step, key, entry
                else:
                    problems.add("comm_bad_entry")


def cluster_files(entries: list[dict]) -> dict[str, str]:
    """The cluster_analysis_output files among a profile's communication entries
    (``meta["profile"]["comm"]``): kind -> path, the first of each kind."""
    kinds = ("cluster_communication", "cluster_communication_matrix", "communication_group")
    out: dict[str, str] = {}
    for entry in entries:
        if entry.get("kind") in kinds:
            out.setdefault(entry["kind"], entry["path"])
    return out
