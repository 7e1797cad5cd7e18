"""Is an op slow, or just big: per op and shape, the work it does (FLOPs and bytes, from the
perf models), the rate it reached (TFLOP/s, TB/s), its arithmetic intensity, the roof it is
under (compute or memory) and the share of that roof it reached.

The rows are the device tasks the profiler describes with shapes (core.perf.instances): an op
is one row per distinct (op, input shapes, dtypes), as TraceLens and msprof-analyze group
them, because one op name run at two shapes is two different amounts of work. A Kineto host op
that launched several kernels is one call whose time is its kernels' device time. An op no
model covers is still listed, with the reason, and its time is counted apart: the coverage
line says how much of the device time the FLOPs speak for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Column, Table, text_column
from proftui.core.ops.instances import instances_table
from proftui.core.ops.iterations import Iteration, Iterations
from proftui.core.perf.device import device_name
from proftui.core.perf.dtypes import canonical_dtype
from proftui.core.perf.hardware import Peaks, PeaksError, load_peaks, match_device, with_overrides
from proftui.core.perf.instances import OpInstances
from proftui.core.perf.models import NoModel, Work, op_work
from proftui.core.perf.roofline import rate
from proftui.core.perf.shapes import Shape

# The number columns and their units: Total and Avg are device time, GFLOP and MB one call's
# work, TFLOP/s and TB/s the rates reached, FLOP/B the intensity, Roof the share of the roof.
NUMBERS = {"Count": "", "Total": "ns", "Avg": "ns", "GFLOP": "", "MB": "", "TFLOP/s": "",
           "TB/s": "", "FLOP/B": "", "Roof": "%"}


@dataclass(frozen=True)
class OpGroup:
    """One op at one set of input shapes and dtypes: its calls and what one call does."""

    op: str
    inputs: tuple[Shape | None, ...]
    dtypes: tuple[str, ...]
    calls: int
    total_ns: int
    work: Work | NoModel
    rows: list[int] = field(default_factory=list)  # each call's first task (an instance row)
    call_ns: list[int] = field(default_factory=list)  # each call's device time
    call_slices: list[int] = field(default_factory=list)  # its first task's slice, or -1
    counters: dict[str, float] = field(default_factory=dict)  # each counter's mean over calls

    @property
    def slices(self) -> list[int]:
        """The calls' slices found on the timeline."""
        return [s for s in self.call_slices if s >= 0]


@dataclass(frozen=True)
class RoofPoint:
    """One op shape on the roofline: intensity (FLOP/byte), the rate reached (FLOP/s), the
    time it costs (ns) and its name for the legend."""

    intensity: float
    flops_per_s: float
    time_ns: int
    label: str


@dataclass(frozen=True)
class Roof:
    """The roof drawn: the matrix peak of the dtype most of the modelled time runs in, and the
    memory bandwidth (FLOP/s and bytes/s; None where unknown), with a line saying so."""

    flops: float | None
    bandwidth: float | None
    text: str


@dataclass(frozen=True)
class Efficiency:
    """The efficiency table of a window and what it rests on."""

    table: Table
    groups: list[OpGroup]
    peaks: Peaks | None
    source: str
    modelled_ns: int  # device time of the calls a model covers
    total_ns: int  # device time of every call with shapes
    unshaped_ns: int = 0  # device time of the tasks the rows give no shapes for (left out)
    notes: tuple[str, ...] = ()  # what the profile lacks and how to capture it, a sentence each


def subset_instances(found: OpInstances, rows: np.ndarray) -> OpInstances:
    """The instances at `rows` (their order), every column alike."""
    pick = np.asarray(rows, np.int64)
    fields = {}
    for name, value in vars(found).items():
        if isinstance(value, np.ndarray):
            fields[name] = value[pick]
        elif isinstance(value, list):
            fields[name] = [value[i] for i in pick.tolist()]
        else:
            fields[name] = value
    return type(found)(**fields)


SHAPES_SHOWN = 4  # inputs named in the Shapes column (a foreach op has hundreds)


def shapes_text(shapes: tuple[Shape | None, ...]) -> str:
    """`(32, 9216), None, (4096,)` -> "32x9216, -, 4096"; past SHAPES_SHOWN inputs, how many
    more ("... +60")."""
    text = ", ".join("x".join(map(str, s)) if s else "-" for s in shapes[:SHAPES_SHOWN])
    return text + (f", ... +{len(shapes) - SHAPES_SHOWN}" if len(shapes) > SHAPES_SHOWN else "")


OP_SHOWN = 60  # characters of an op's name in the table (a kernel's runs to hundreds)


def _cut(name: str) -> str:
    return name if len(name) <= OP_SHOWN else name[:OP_SHOWN - 3] + "..."


def _dtype_text(dtypes: tuple[str, ...]) -> str:
    """The distinct dtypes of the tensor inputs, in order: "bf16", "fp32,int64" (a scalar's
    "Scalar" or an absent input's "" are none)."""
    return ",".join(dict.fromkeys(name for d in dtypes if (name := canonical_dtype(d))))


def _calls(found: OpInstances) -> dict[int, list[int]]:
    """Instances grouped into calls: the Kineto kernels one host op launched are one call
    (the host op's slice row is its key: the kernels carry its shapes, not their own); an
    Ascend task is a call alone (its row is an op of its own, with its own shapes, whatever
    torch op launched it beside others)."""
    calls: dict[int, list[int]] = defaultdict(list)
    for i, (host, source) in enumerate(zip(found.host_slices.tolist(), found.sources)):
        calls[host if host >= 0 and source == "trace" else -(i + 2)].append(i)
    return calls


def _mean_counters(rows: list[dict[str, float]]) -> dict[str, float]:
    """Each counter's mean over the rows that have it."""
    sums: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        for name, value in row.items():
            if value == value:  # not NaN
                sums[name].append(float(value))
    return {name: sum(v) / len(v) for name, v in sums.items()}


def op_groups(found: OpInstances) -> list[OpGroup]:
    """Calls grouped by (op, input shapes, dtypes), costliest first."""
    keyed: dict[tuple, list[list[int]]] = defaultdict(list)
    for tasks in _calls(found).values():
        i = tasks[0]
        op = found.op_types[i] or found.names[i]
        keyed[(op, tuple(found.inputs[i]), tuple(found.dtypes[i]))].append(tasks)
    groups = []
    for (op, inputs, dtypes), calls in keyed.items():
        i = calls[0][0]
        work = op_work(found.names[i], inputs, dtypes, outputs=found.outputs[i],
                       op_type=found.op_types[i], concrete=found.concrete[i])
        call_ns = [int(sum(int(found.dur_ns[t]) for t in tasks)) for tasks in calls]
        firsts = [tasks[0] for tasks in calls]
        groups.append(OpGroup(op, inputs, dtypes, len(calls), sum(call_ns), work, firsts,
                              call_ns, [int(found.slice_rows[t]) for t in firsts],
                              _mean_counters([found.counters[t] for t in firsts])))
    groups.sort(key=lambda g: (-g.total_ns, g.op))
    return groups


def efficiency(found: OpInstances, peaks: Peaks | None) -> Efficiency:
    """The efficiency table of these instances against these peaks (None: rates only). A
    call no input shape is known for (a collective's row, a kernel whose launching op was
    not found or recorded no shapes) cannot be judged: it is left out of the table, and its
    time said apart (`unshaped_ns`)."""
    everything = op_groups(found)
    groups = [g for g in everything if any(g.inputs)]
    n = len(groups)
    number = {name: np.full(n, np.nan) for name in NUMBERS}
    bound, model = [""] * n, [""] * n
    for r, g in enumerate(groups):
        number["Count"][r], number["Total"][r] = g.calls, g.total_ns
        number["Avg"][r] = g.total_ns / g.calls
        if isinstance(g.work, NoModel):
            model[r] = f"none: {g.work.reason}"
            continue
        model[r] = g.work.model
        number["GFLOP"][r], number["MB"][r] = g.work.flops / 1e9, g.work.bytes / 1e6
        got = rate(g.work, round(g.total_ns / g.calls), peaks)
        share = None if got.roof_share is None else 100 * got.roof_share
        for name, value in (("TFLOP/s", got.tflops), ("TB/s", got.tbps),
                            ("FLOP/B", got.intensity), ("Roof", share)):
            number[name][r] = np.nan if value is None else value
        bound[r] = got.bound or ""
    columns = [text_column("Op", [_cut(g.op) for g in groups]),
               text_column("Shapes", [shapes_text(g.inputs) for g in groups]),
               text_column("Dtypes", [_dtype_text(g.dtypes) for g in groups])]
    for name, unit in NUMBERS.items():
        header = f"{name} ({unit})" if unit else name
        columns.append(Column(header, name, unit, "number", number[name]))
        if name == "FLOP/B":
            columns.append(text_column("Bound", bound))
    columns.append(text_column("Model", model))
    modelled = sum(g.total_ns for g in groups if not isinstance(g.work, NoModel))
    shaped = sum(g.total_ns for g in groups)
    return Efficiency(Table("efficiency", found.source, columns, n), groups, peaks,
                      found.source, modelled, shaped,
                      sum(g.total_ns for g in everything) - shaped, missing(found))


# What to capture, by where the rows come from (Kineto's trace; Ascend's tables and export).
_NO_SHAPES = {
    "trace": "No op in the trace recorded its input shapes: profile with "
             "torch.profiler.profile(record_shapes=True).",
    "ascend": "The profiler's rows give no input shapes: profile with "
              "torch_npu.profiler.profile(record_shapes=True).",
}
_NO_COUNTERS = ("The profiler's rows give no pipe counters (aic_mac_ratio, aiv_vec_ratio ...): "
                "capture with experimental_config aic_metrics=PipeUtilization.")
_NO_ROWS = ("The profile holds no device task the op efficiency can read: no GPU kernel, and no "
            "kernel_details.csv, op_summary or SQLite COMPUTE_TASK_INFO.")


def missing(found: OpInstances) -> tuple[str, ...]:
    """What the rows lack that the op efficiency reads, and how to capture it, a sentence
    each: no rows at all; no input shapes on any; on Ascend, no pipe counters on any."""
    if not len(found.names):
        return (_NO_ROWS,)
    out = []
    if not any(any(shapes) for shapes in found.inputs):
        out.append(_NO_SHAPES["trace" if found.source == "trace" else "ascend"])
    ascend = found.source != "trace"
    if ascend and not any(name.startswith(("aic_", "aiv_")) for row in found.counters
                          for name in row):
        out.append(_NO_COUNTERS)
    return tuple(out)


def roofline_points(found: Efficiency) -> tuple[list[RoofPoint], Roof | None]:
    """The modelled op shapes as points, and the roof to draw them under (None without
    peaks): the matrix peak of the dtype that most of the modelled matrix time runs in."""
    points, by_dtype = [], defaultdict(int)
    for g in found.groups:
        if isinstance(g.work, NoModel) or g.total_ns <= 0 or g.work.bytes <= 0:
            continue
        points.append(RoofPoint(g.work.flops / g.work.bytes,
                                g.work.flops * g.calls / (g.total_ns / 1e9), g.total_ns,
                                f"{g.op} {shapes_text(g.inputs)} {_dtype_text(g.dtypes)}"))
        if g.work.unit == "matrix":
            by_dtype[g.work.dtype] += g.total_ns
    peaks = found.peaks
    if peaks is None:
        return points, None
    dtype = max(by_dtype, key=by_dtype.get) if by_dtype else None
    flops = peaks.matrix.get(dtype) if dtype else None
    bandwidth = peaks.bandwidth or None
    text = (f"{peaks.device}, {dtype or 'no matrix op'}"
            + (f" matrix peak {flops / 1e12:g} TFLOP/s" if flops else " (no peak for it)")
            + (f", {bandwidth / 1e12:g} TB/s" if bandwidth else ""))
    return points, Roof(flops, bandwidth, text)


def calls_table(index: TraceIndex, group: OpGroup, peaks: Peaks | None,
                iterations: Iterations | Sequence[Iteration] | None = None) -> Table:
    """The calls of one op shape found on the timeline, as the Ops pane's instances (Start,
    Duration, Track, Iteration, Slice), each with the rate it reached: TFLOP/s, TB/s and
    Roof(%); Duration is the call's device time (all its kernels)."""
    found = [(s, ns) for s, ns in zip(group.call_slices, group.call_ns) if s >= 0]
    table = instances_table(index, np.array([s for s, _ in found], np.int64), iterations)
    n = len(found)
    tflops, tbps, share = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    if not isinstance(group.work, NoModel):
        for r, (_, ns) in enumerate(found):
            got = rate(group.work, ns, peaks)
            tflops[r] = np.nan if got.tflops is None else got.tflops
            tbps[r] = np.nan if got.tbps is None else got.tbps
            share[r] = np.nan if got.roof_share is None else 100 * got.roof_share
    table.find("Duration").values = np.array([ns for _, ns in found], np.float64)
    slice_column = table.columns.pop()  # Slice stays last, to jump to
    table.columns += [Column("TFLOP/s", "TFLOP/s", "", "number", tflops),
                      Column("TB/s", "TB/s", "", "number", tbps),
                      Column("Roof (%)", "Roof", "%", "number", share), slice_column]
    return table


def profile_peaks(index: TraceIndex, *, device: str | None = None, peaks_file: str | None = None,
                  tflops: float | None = None, tbps: float | None = None
                  ) -> tuple[Peaks | None, str]:
    """The peaks to judge the profile's ops by, and a phrase saying where they come from:
    the device named by `device` (else by the profile) looked up in `peaks_file`'s rows (a
    file of one row needs no name), then in the shipped table; `tflops` and `tbps` override
    the figures (and make a row where none is found)."""
    rows = None
    if peaks_file:
        try:
            rows = load_peaks(peaks_file)
        except PeaksError as exc:
            raise ProftuiError(str(exc)) from None
    named = device or device_name(index)
    by = "--device" if device else "the profile"
    peaks = match_device(named, rows) if named and rows else None
    peaks = peaks or (match_device(named) if named else None)
    if peaks is None and rows is not None and len(rows) == 1:
        peaks, by = rows[0], peaks_file
    if peaks is not None:
        said = f"{peaks.device} (named by {by})" if by != peaks_file else f"{peaks.device} ({by})"
    elif named:
        said = (f"{by} names {named}, which the peaks table does not hold: give --device, "
                "--peaks FILE or --peak-tflops/--peak-tbps")
    else:
        said = ("the profile does not name its device: give --device, --peaks FILE or "
                "--peak-tflops/--peak-tbps")
    given = with_overrides(peaks, tflops=tflops, tbps=tbps, device=named or "")
    if given is not peaks:
        said = f"{given.device} ({given.source})"
    return given, said
