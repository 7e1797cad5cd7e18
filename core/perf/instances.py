"""The row behind a slice: for every device task, the profiler's own row (shapes, dtypes,
counters) and the host op that launched it; for one selected slice, that row as the file has
it, or, for a host op, the device tasks it launched.

Ascend: kernel_details.csv / op_summary rows matched to their slices (stream, start to the ns,
task id where those do not decide: :mod:`proftui.core.perf.ascend_rows`), or the SQLite
export's COMPUTE_TASK_INFO joined to the TASK row each slice is. Kineto: each kernel with the
`Input Dims` of its host op (:mod:`proftui.core.perf.kineto_rows`). The Ascend rows cost no
args and are kept per index; Kineto's cost reading the args of the kernels asked for and of
their ops (5.6 s for all 74,000 kernels of a 200 MB trace, about 28 s a GB; kept per index
once read), so ask for a window or names when the trace is large.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.perf.ascend_rows import Rows, ascend_rows, slice_task_id
from proftui.core.perf.kineto_rows import host_fields, kernel_slices, kineto_rows
from proftui.core.perf.launch import (
    MAX_DEPTH,
    host_ops,
    is_host_op,
    launched_by,
    launches,
    op_chain,
)
from proftui.core.perf.shapes import Shape
from proftui.core.query.args import read_args, slice_args
from proftui.core.query.parents import slice_parents

_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KEPT_WINDOWS = 8  # Kineto answers kept per index
_HOST_WALK = 8  # ops walked up from the launching op to find one with shapes


@dataclass(frozen=True)
class OpInstances:
    """One row per device task (Ascend: a kernel_details / op_summary row or a
    COMPUTE_TASK_INFO task; Kineto: a GPU kernel) with the shapes of the op it ran, by
    start."""

    source: str  # kernel_details.csv, op_summary.csv, COMPUTE_TASK_INFO, trace (", " if mixed)
    names: list[str]  # the task's name as the timeline shows it
    op_types: list[str]  # Ascend's Type; Kineto: the launching host op's name; "" unknown
    hosts: list[str]  # the host op that launched it; "" unknown
    groups: list[str]  # the rank or device (the processes' group)
    start_ns: np.ndarray  # int64, the timeline's clock
    dur_ns: np.ndarray  # int64, the task's device time
    inputs: list[list[Shape | None]]
    outputs: list[list[Shape | None]]
    dtypes: list[list[str]]  # the profiler's dtype text, one per input
    concrete: list[list[str]]  # Kineto's Concrete Inputs, [] elsewhere
    counters: list[dict[str, float]]
    slice_rows: np.ndarray  # int64: the slice each task is (-1: not on the timeline)
    host_slices: np.ndarray  # int64: the host op's slice (-1: unknown)
    sources: list[str]  # per row, where it comes from

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class Behind:
    """What the profiler says of one slice beyond its own args."""

    source: str  # where the row comes from ("" for a host op: its own args)
    row: dict[str, str]  # the profiler's row, column -> text
    inputs: list[Shape | None]
    outputs: list[Shape | None]
    dtypes: list[str]
    counters: dict[str, float]
    host: tuple[str, list, list] | None  # (name, input shapes, dtypes) of the launching op
    launched: list[tuple[int, str, int]]  # a host op's device tasks: (slice, name, dur_ns)
    op_type: str = ""
    concrete: tuple[str, ...] = ()


# -- every task ---------------------------------------------------------------------------------


def op_instances(index: TraceIndex, *, start_ns: int | None = None, end_ns: int | None = None,
                 names: Collection[str] | None = None,
                 tables: Sequence[Table] | None = None) -> OpInstances:
    """Every device task with a row the profile holds, starting in [start_ns, end_ns), by
    start; with `names`, only tasks whose name, op type or host op is one of them. `tables`:
    the profile's summary tables when the caller has read them already."""
    lo = -(2**63) if start_ns is None else int(start_ns)
    hi = 2**63 - 1 if end_ns is None else int(end_ns)
    wanted = frozenset(names) if names is not None else None
    parts = [_take(rows, hosts, lo, hi, wanted) for rows, hosts in _ascend(index, tables)]
    parts.append(_kineto(index, lo, hi, wanted))
    return _joined(index, [p for p in parts if p is not None])


def kernels_to_read(index: TraceIndex, *, start_ns: int | None = None,
                    end_ns: int | None = None, names: Collection[str] | None = None) -> int:
    """How many Kineto kernels :func:`op_instances` would read the args of (with their
    launches' and ops') for this window and these names: its cost, found from the index
    alone (Ascend's rows come from tables, at no such cost)."""
    kernels = kernel_slices(index)
    starts = index.arrays["slices.start"][kernels]
    keep = np.ones(len(kernels), bool)
    if start_ns is not None:
        keep &= starts >= start_ns
    if end_ns is not None:
        keep &= starts < end_ns
    kernels = kernels[keep]
    if names is not None and len(kernels):
        kernels = kernels[_named(index, kernels, frozenset(names))]
    return len(kernels)


def _ascend(index: TraceIndex, tables: Sequence[Table] | None) -> list[tuple[Rows, np.ndarray]]:
    memo = _memo.setdefault(index, {})
    if "ascend" not in memo:
        found = ascend_rows(index, _op_tables(index) if tables is None else tables)
        memo["ascend"] = [(rows, _hosts_of(index, rows.slice_rows)) for rows in found]
    return memo["ascend"]


def _hosts_of(index: TraceIndex, slices: np.ndarray) -> np.ndarray:
    out = np.full(len(slices), -1, np.int64)
    on = slices >= 0
    out[on] = host_ops(index, slices[on])
    return out


def _op_tables(index: TraceIndex) -> list[Table]:
    """The profile's kernel_details / op_summary CSVs (the SQLite exports are read apart)."""
    from proftui.core.cache.tables import read_table
    from proftui.core.perf.ascend_rows import TABLE_KINDS

    tables = []
    for entry in (index.meta.get("profile") or {}).get("tables", []):
        if entry.get("kind") in TABLE_KINDS and not entry.get("source"):
            tables.append(read_table(entry["path"], entry["kind"], entry.get("group", ""),
                                     use_cache=not index.meta.get("no_cache")))
    return tables


def _kineto(index: TraceIndex, lo: int, hi: int, wanted: frozenset | None
            ) -> tuple[Rows, np.ndarray] | None:
    memo = _memo.setdefault(index, {})
    windows = memo.setdefault("kineto", {})
    whole = windows.get((None, None, None))
    if whole is not None:
        return _take(*whole, lo, hi, wanted)
    key = (lo, hi, wanted)
    if key not in windows:
        kernels = kernel_slices(index)
        starts = index.arrays["slices.start"][kernels]
        kernels = kernels[(starts >= lo) & (starts < hi)]
        if wanted is not None:
            kernels = kernels[_named(index, kernels, wanted)]
        if not len(kernels):
            return None
        if len(windows) >= _KEPT_WINDOWS:
            windows.clear()
        everything = len(kernels) == len(kernel_slices(index))
        windows[(None, None, None) if everything else key] = kineto_rows(index, kernels)
        key = (None, None, None) if everything else key
    return _take(*windows[key], lo, hi, wanted)


def _named(index: TraceIndex, kernels: np.ndarray, wanted: frozenset) -> np.ndarray:
    """Whether each kernel, or a host op around its launch (the launch itself or a parent),
    is named in `wanted` (read from the index, before any args): the parents walked for all
    kernels at once, a level at a time."""
    s, names = index.strings, index.arrays["slices.name"]
    ids = [i for i in (s.find(name) for name in wanted) if i >= 0]
    named = np.zeros(len(s), bool)
    named[ids] = True
    op_cat, cats = is_host_op(index), index.arrays["slices.cat"]
    keep = named[names[kernels]]
    at = launches(index, kernels)
    parents = slice_parents(index)
    for _ in range(MAX_DEPTH):
        live = at >= 0
        if not live.any():
            break
        up = at[live]  # a host op named in `wanted`: of the slices reached only
        keep[live] |= op_cat[cats[up]] & named[names[up]]
        at[live] = parents[up]
    return keep


def _take(rows: Rows, hosts: np.ndarray, lo: int, hi: int, wanted: frozenset | None
          ) -> tuple[Rows, np.ndarray, np.ndarray] | None:
    """The rows of a part starting in [lo, hi) and named in `wanted`: (rows, hosts, which)."""
    keep = (rows.start_ns >= lo) & (rows.start_ns < hi)
    if wanted is not None:
        keep &= np.array([n in wanted or t in wanted for n, t in zip(rows.names, rows.op_types)],
                         bool)
    which = np.flatnonzero(keep)
    return (rows, hosts, which) if len(which) else None


def _joined(index: TraceIndex, parts: list) -> OpInstances:
    """The parts' rows as one table, by start."""
    s, a = index.strings, index.arrays
    picks = [(rows, hosts, k) for rows, hosts, which in parts for k in which.tolist()]
    start = np.array([int(r.start_ns[k]) for r, _, k in picks], np.int64)
    picks = [picks[j] for j in np.argsort(start, kind="stable").tolist()]

    def column(get) -> list:
        return [get(r, k) for r, _, k in picks]

    host_slices = np.array([int(h[k]) for _, h, k in picks], np.int64)
    sources = column(lambda r, k: r.source)
    return OpInstances(
        source=", ".join(dict.fromkeys(sources)),
        names=column(lambda r, k: r.names[k]), op_types=column(lambda r, k: r.op_types[k]),
        hosts=[s[a["slices.name"][h]] if h >= 0 else "" for h in host_slices.tolist()],
        groups=column(lambda r, k: r.groups[k]),
        start_ns=np.array(column(lambda r, k: int(r.start_ns[k])), np.int64),
        dur_ns=np.array(column(lambda r, k: int(r.dur_ns[k])), np.int64),
        inputs=column(lambda r, k: r.inputs[k]), outputs=column(lambda r, k: r.outputs[k]),
        dtypes=column(lambda r, k: r.dtypes[k]),
        concrete=column(lambda r, k: r.concrete[k] if r.concrete else []),
        counters=column(lambda r, k: r.counters[k]),
        slice_rows=np.array(column(lambda r, k: int(r.slice_rows[k])), np.int64),
        host_slices=host_slices, sources=sources)


# -- one slice ----------------------------------------------------------------------------------


def row_behind(index: TraceIndex, slice_row: int,
               tables: Sequence[Table] | None = None) -> Behind | None:
    """The profiler's row behind slice `slice_row` (a device task), or the device tasks a
    host op launched; None when the profile holds neither."""
    i = int(slice_row)
    for rows, hosts in _ascend(index, tables):
        at = np.flatnonzero(rows.slice_rows == i)
        if len(at):
            return _ascend_behind(index, rows, int(at[0]), int(hosts[at[0]]))
    if i in set(kernel_slices(index).tolist()):
        rows, hosts = kineto_rows(index, np.array([i], np.int64))
        return _behind(rows, 0, _host(index, int(hosts[0])))
    return _host_behind(index, i)


def _ascend_behind(index: TraceIndex, rows: Rows, k: int, host: int) -> Behind | None:
    # The one slice asked about is checked by its task id too, where both say one.
    said = slice_task_id(slice_args(index, int(rows.slice_rows[k])))
    if said is not None and rows.task_ids[k] >= 0 and said != int(rows.task_ids[k]):
        return None
    return _behind(rows, k, _host(index, host))


def _behind(rows: Rows, k: int, host: tuple[str, list, list] | None) -> Behind:
    return Behind(source=rows.source, row=rows.text(k), inputs=rows.inputs[k],
                  outputs=rows.outputs[k], dtypes=rows.dtypes[k], counters=rows.counters[k],
                  host=host, launched=[], op_type=rows.op_types[k],
                  concrete=tuple(rows.concrete[k]) if rows.concrete else ())


def _host(index: TraceIndex, host: int) -> tuple[str, list, list] | None:
    """The launching op's (name, shapes, dtypes): the op itself, or where it records no
    shapes (torch_npu's `Conv2D` under `aten::_convolution`) the nearest op around it that
    does."""
    if host < 0:
        return None
    chain = op_chain(index, host)[:_HOST_WALK]
    found = read_args(index, index.arrays["slices.ref"][chain])
    for op, args in zip(chain, found):
        shapes, dtypes, _ = host_fields(args)
        if shapes or dtypes:
            return index.slice_name(op), shapes, dtypes
    return index.slice_name(host), [], []


def _host_behind(index: TraceIndex, i: int) -> Behind | None:
    """A host op: its own shapes, and the device tasks it (or an op or call in it)
    launched."""
    a = index.arrays
    tasks = launched_by(index, i)
    if not tasks and not is_host_op(index)[a["slices.cat"][i]]:
        return None
    shapes, dtypes, concrete = host_fields(read_args(index, a["slices.ref"][[i]])[0])
    return Behind(source="", row={}, inputs=shapes, outputs=[], dtypes=dtypes, counters={},
                  host=None, launched=[(t, index.slice_name(t), int(a["slices.dur"][t]))
                                       for t in tasks], concrete=tuple(concrete))
