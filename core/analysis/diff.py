"""Did the fix help: two opened profiles compared step for step, part for part, op for op.

Steps: per side, each iteration's time is its slowest group's (rank's). The capture's edges
are left out: the first `skip` steps (warm-up) and the last one, which the profiler's stop
cuts or slows, while two steps or more remain (with `iterations` named, exactly those are
kept). The step verdict is :mod:`.step_verdict`'s: a rank test of the two sides' steps with
the shift's confidence interval, outlier steps listed and left out of the test; "faster",
"slower", "no change" or "inconclusive" with the reason.

Parts: the means over the steps kept of the breakdown (:mod:`.breakdown`) on both sides.

Ops: the operators inside each side's steps kept, each step's window that of every group
(rank) of its own (:func:`~proftui.core.ops.iterations.group_windows`, the windows `ops
--iteration N` counts in: a slice counts when it overlaps one, its time clipped to it), summed
over the steps and divided by their number; grouped by name, category or type and
matched by a normalised key: names that differ only by generated
parts (Triton ordinals, template arguments, HCCL op ordinals, hex addresses and hashes, the
scope and instance number of MindSpore's "Default/network/Conv2D-op12", the data loader's
iterator class) are one op; an op map
(regex -> canonical name) merges the rest. Ops on one side only are "added" or "removed".

Ranks: with several ranks (or devices) a side, each rank's median step against its partner's
(:mod:`.rank_diff`), and the slowest rank of each side.

Summary tables: each kind both sides have (op_statistic, kernel_details, ...) compared by its
key over the whole capture (:mod:`.table_diff`).

Before any number, a comparability check: same kind of profile, same device kind and count,
same ranks, op sets overlapping; each mismatch is a warning, and some make the profiles not
comparable. The evidence and the tables that print a comparison are :mod:`.diff_report`'s.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tomllib

from proftui.core.analysis.breakdown import StepBreakdown, breakdown
from proftui.core.analysis.rank_diff import RankComparison, compare_ranks
from proftui.core.analysis.speed import rate_text, steps_per_s
from proftui.core.analysis.step_verdict import StepVerdict, judge_steps
from proftui.core.analysis.table_diff import (
    KeyDelta,
    TableDelta,
    compare_tables,
)
from proftui.core.analysis.work_diff import (
    MAX_KERNELS,
    WorkDelta,
    modelled_per_step,
    too_many_kernels,
    work_deltas,
)
from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.model.words import duration_text
from proftui.core.ops.aggregate import (
    by_start,
    op_totals,
    window_slices,
)
from proftui.core.ops.grouping import op_name, op_types
from proftui.core.ops.iterations import Iterations, group_windows
from proftui.core.ops.roles import device_kind

MIN_OP_OVERLAP = 0.5  # below this share of time in ops both sides have, not comparable
UNCHANGED_SHARE = 0.02  # a part that moved less than this share of the base step is unchanged
# (pattern, replacement) applied in order to a name to get its key
_GENERATED = (
    (re.compile(r"\bobject at 0x[0-9a-fA-F]+"), "object at 0x"),
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x"),
    (re.compile(r"(?<=[A-Za-z])_?[0-9a-f]{12,}\b"), ""),  # hashes glued to a name
    (re.compile(r"^(hcom_\w+?_)_\d+(?:_\d+)*$"), r"\1"),  # hcom_allReduce__586_0_1
    (re.compile(r"^(triton_\w+?)_\d+$"), r"\1"),  # triton_poi_fused_add_relu_0
    (re.compile(r"^(?:.*/)?([^/]+?)-op\d+$"), r"\1"),  # Default/network/DropOutDoMask-op152
    # the loader's iterator class changes with num_workers: it is still the data loader
    (re.compile(r"^enumerate\(DataLoader\)#.*$"), "enumerate(DataLoader)"),
)
# template arguments after a name, once those inside them are "<>" (not "<built-in ...>")
_TEMPLATE = re.compile(r"(?<=[\w:])<(?:[^<>]|<>)+>")
PART_KEYS = (
    ("device", "compute_ns"), ("device", "comm_exposed_ns"), ("device", "overlapped_ns"),
    ("device", "memcpy_exposed_ns"), ("device", "idle_ns"), ("device", "host_bound_ns"),
    ("device", "wait_ns"), ("device", "prepare_ns"), ("device", "span_ns"),
    ("host", "dataloader_ns"), ("host", "dataloader_exposed_ns"), ("host", "sync_ns"),
    ("host", "sync_count"), ("host", "launch_count"))


@dataclass(frozen=True)
class Opened:
    """One side: a label (its path), the index, its summary tables and iterations."""

    label: str
    index: TraceIndex
    tables: Sequence[Table]
    iterations: Iterations


def normalise(name: str, op_map: Sequence[tuple[re.Pattern, str]] = ()) -> str:
    """The key an op name is matched by across two profiles."""
    for pattern, canonical in op_map:
        if pattern.search(name):
            return canonical
    key = op_name(name)
    for pattern, replacement in _GENERATED:
        key = pattern.sub(replacement, key)
    while True:  # template arguments, innermost first: kernel<4, F<float> > is kernel<>
        shorter = _TEMPLATE.sub("<>", key)
        if shorter == key:
            return key
        key = shorter


def read_op_map(path: str) -> list[tuple[re.Pattern, str]]:
    """An op map file: CSV rows `regex,canonical name`, or TOML `[map]` (or top-level)
    `"regex" = "canonical name"`. A bad file raises ProftuiError."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ProftuiError(f"{path}: cannot read the op map ({exc.strerror}).") from None
    pairs: list[tuple[str, str]] = []
    try:
        if path.endswith(".toml"):
            table = tomllib.loads(data.decode())
            table = table.get("map", table)
            pairs = [(str(k), str(v)) for k, v in table.items()]
        else:
            for row in csv.reader(data.decode().splitlines()):
                if len(row) >= 2 and row[0].strip() and not row[0].startswith("#"):
                    pairs.append((row[0].strip(), row[1].strip()))
        return [(re.compile(pattern), canonical) for pattern, canonical in pairs]
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, re.error, AttributeError) as exc:
        raise ProftuiError(f"{path}: not an op map (regex,name rows or TOML): {exc}.") from None


@dataclass(frozen=True)
class SideSummary:
    """What one side is: its kind, devices, ranks, the steps kept and their times."""

    label: str
    kind: str
    device_kind: str
    devices: int
    groups: list[str]
    iterations: list[int]
    step_ns: list[int]  # per iteration kept: its slowest group's step
    per_group_ns: dict[str, int]  # median step per group
    window_ns: tuple[int, int] = (0, 0)  # the first step's start to the last one's end
    left_out: list[tuple[int, str]] = field(default_factory=list)  # (iteration, why)
    outliers: list[int] = field(default_factory=list)  # iterations kept but not tested

    @property
    def median_ns(self) -> int | None:
        return int(np.median(self.step_ns)) if self.step_ns else None

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind, "device_kind": self.device_kind,
                "devices": self.devices, "groups": self.groups, "iterations": self.iterations,
                "step_ns": self.step_ns, "median_step_ns": self.median_ns,
                "spread_ns": [min(self.step_ns), max(self.step_ns)] if self.step_ns else None,
                "median_step_ns_per_group": self.per_group_ns,
                "left_out": [{"iteration": n, "why": why} for n, why in self.left_out],
                "outliers": self.outliers}


@dataclass(frozen=True)
class Diff:
    """The comparison of two profiles (see the module docstring)."""

    base: SideSummary
    new: SideSummary
    warnings: list[str]
    comparable: bool
    test: StepVerdict
    parts: dict[str, tuple[float | None, float | None]]  # field -> (base, new) means
    ops: list[KeyDelta]
    by: str
    side: str
    verdict: str = ""
    op_overlap: float = 1.0
    ranks: RankComparison = RankComparison()
    tables: list[TableDelta] = field(default_factory=list)
    work: dict[str, WorkDelta] = field(default_factory=dict)  # by name: FLOPs and rate per op

    @property
    def conclusive(self) -> bool:
        return self.test.conclusive

    @property
    def reason(self) -> str:
        """Why the steps cannot tell ("" when they can)."""
        return self.test.reason

    @property
    def step(self) -> dict[str, Any]:
        b, n = self.base.median_ns, self.new.median_ns
        delta = n - b if b is not None and n is not None else None
        return {"base_ns": b, "new_ns": n, "delta_ns": delta,
                "delta_pct": (delta / b * 100.0) if delta is not None and b else None,
                "base_steps_per_s": steps_per_s(b), "new_steps_per_s": steps_per_s(n),
                "conclusive": self.conclusive, "reason": self.reason,
                "outcome": self.test.outcome, "test": self.test.to_json()}

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        return {
            "comparable": self.comparable, "warnings": self.warnings,
            "base": self.base.to_json(), "new": self.new.to_json(), "step": self.step,
            "verdict": self.verdict, "op_overlap": self.op_overlap, "by": self.by,
            "side": self.side,
            "breakdown": {k: {"base": b, "new": n,
                              "delta": (n - b) if b is not None and n is not None else None}
                          for k, (b, n) in self.parts.items()},
            # each op named by its grouping, as `ops --json` names it ("key": the old name)
            "ops": [{self.by: o.key, **o.to_json(),
                     "work": self.work[o.key].to_json() if o.key in self.work else None}
                    for o in self.ops[:top]],
            "ranks": [r.to_json() for r in self.ranks.rows],
            "ranks_matched_by": self.ranks.matched_by,
            "slowest": {"base": self.ranks.slowest_base.to_json(),
                        "new": self.ranks.slowest_new.to_json()},
            "tables": [t.to_json(top) for t in self.tables]}


def compare(base: Opened, new: Opened, *, by: str = "name", side: str = "all", skip: int = 1,
            numbers: tuple[int, int] | None = None,
            op_map: Sequence[tuple[re.Pattern, str]] = ()) -> Diff:
    """Compare `new` with `base` (see the module docstring)."""
    # The two sides' breakdowns are independent, and numpy's sorts leave the GIL: one thread
    # each.
    with ThreadPoolExecutor(max_workers=2) as pool:
        kept = list(pool.map(lambda o: _kept_steps(o, skip, numbers), (base, new)))
    (b_steps, b_out), (n_steps, n_out) = kept
    b_sum, n_sum = _summary(base, b_steps, b_out), _summary(new, n_steps, n_out)
    parts = {key: (_mean(b_steps, s, key), _mean(n_steps, s, key)) for s, key in PART_KEYS}
    b_ops = _ops(base, b_sum.iterations, by, side, op_map)
    n_ops = _ops(new, n_sum.iterations, by, side, op_map)
    ops = [KeyDelta(k, int(round(b_ops.get(k, (0, 0))[0])), int(round(n_ops.get(k, (0, 0))[0])),
                   b_ops.get(k, (0, 0))[1], n_ops.get(k, (0, 0))[1])
           for k in set(b_ops) | set(n_ops)]
    ops.sort(key=lambda o: (-abs(o.delta_ns), o.key))
    overlap = _overlap(b_ops, n_ops)
    warnings, comparable = _check(b_sum, n_sum, overlap)
    test = judge_steps(b_sum.step_ns, n_sum.step_ns)
    b_sum = dataclasses.replace(b_sum, outliers=[b_sum.iterations[i] for i in test.outliers_base])
    n_sum = dataclasses.replace(n_sum, outliers=[n_sum.iterations[i] for i in test.outliers_new])
    ranks = compare_ranks(b_sum.groups, b_sum.per_group_ns, n_sum.groups, n_sum.per_group_ns)
    tables = compare_tables(base.tables, new.tables, lambda name: normalise(name, op_map))
    warnings += _capture_lengths(base, new, tables)
    work = {}
    many = [too_many_kernels(o.index) for o in (base, new)] if by == "name" else []
    if any(many):
        warnings.append(f"the ops' work and speed are not compared: {max(many):,} kernels' "
                        f"args to read, over {MAX_KERNELS:,}; proftui ops --efficiency rates "
                        "each side's ops")
    elif by == "name":  # the models' FLOPs are per task name, as the name key is
        def key(name: str) -> str:
            return normalise(name, op_map)

        work = work_deltas(
            modelled_per_step(base.index, step_windows(base, b_sum.iterations), key),
            modelled_per_step(new.index, step_windows(new, n_sum.iterations), key))
    diff = Diff(b_sum, n_sum, warnings, comparable, test, parts, ops, by, side,
                op_overlap=overlap, ranks=ranks, tables=tables, work=work)
    return Diff(**{**diff.__dict__, "verdict": verdict(diff)})


WARM_UP = "warm-up"
LAST = "the capture's last step"


def _kept_steps(opened: Opened, skip: int, numbers: tuple[int, int] | None
                ) -> tuple[list[StepBreakdown], list[tuple[int, str]]]:
    """The breakdowns of the steps compared, and the steps left out at the capture's edges
    (iteration, why)."""
    items = [it for it in opened.iterations.items if it.start_ns >= 0 <= it.end_ns]
    left_out = []
    if numbers is not None:
        items = [it for it in items if numbers[0] <= it.number <= numbers[1]]
    else:
        order = sorted({it.number for it in items})
        if len(order) > skip:
            left_out = [(n, WARM_UP) for n in order[:skip]]
            order = order[skip:]
        if len(order) > 2:  # the profiler's stop cuts or slows the last step
            left_out.append((order[-1], LAST))
        dropped = {n for n, _ in left_out}
        items = [it for it in items if it.number not in dropped]
    return breakdown(opened.index, items, opened.tables).steps, left_out


def _summary(opened: Opened, steps: list[StepBreakdown],
             left_out: list[tuple[int, str]]) -> SideSummary:
    per_number: dict[int, int] = {}
    per_group: dict[str, list[int]] = {}
    for b in steps:
        per_number[b.iteration] = max(per_number.get(b.iteration, 0), b.step_ns)  # type: ignore
        per_group.setdefault(b.group, []).append(b.step_ns)
    index = opened.index
    kind_of_device, devices = device_kind(index)
    layouts = (index.meta.get("profile") or {}).get("layouts") or []
    kinds = sorted({str(t.get("kind")) for t in
                    (index.meta.get("profile") or {}).get("timelines", [])})
    groups = sorted({s.group for s in opened.iterations.items} | set(per_group))
    return SideSummary(
        opened.label, ", ".join(map(str, layouts)) or ", ".join(kinds) or "trace",
        kind_of_device, devices, groups, sorted(per_number), [per_number[k] for k in
                                                           sorted(per_number)],
        {g: int(np.median(v)) for g, v in sorted(per_group.items())},
        steps_window(index, steps), left_out)


def _mean(steps: list[StepBreakdown], side: str, key: str) -> float | None:
    values = [getattr(b, side)[key] for b in steps
              if getattr(b, side) is not None and getattr(b, side).get(key) is not None]
    return float(np.mean(values)) if values else None


def steps_window(index: TraceIndex, steps: list[StepBreakdown]) -> tuple[int, int]:
    """From the first step's start to the last one's end, device windows included (the whole
    trace without steps)."""
    if not steps:
        return index.start_ns, index.end_ns
    return min(b.extent()[0] for b in steps), max(b.extent()[1] for b in steps)


Window = tuple[int | None, int | None, dict[str, tuple[int, int]] | None]


def step_windows(opened: Opened, numbers: Sequence[int]) -> list[Window]:
    """The windows whose ops are compared, one per step kept: (start, end, None) where one
    group ran it, (None, None, each group's own window) where several did; the whole trace
    without steps."""
    out: list[Window] = []
    for number in numbers:
        own = group_windows(opened.iterations.items, number)
        if len(own) == 1:
            (lo, hi), = own.values()
            out.append((lo, hi, None))
        elif own:
            out.append((None, None, own))
    return out or [(None, None, None)]


def _ops(opened: Opened, numbers: Sequence[int], by: str, side: str,
         op_map: Sequence[tuple[re.Pattern, str]]) -> dict[str, tuple[float, float]]:
    """Per key: (total ns, count) per step kept (the whole trace as one step without any)."""
    index = opened.index
    types = op_types(index, opened.tables) if by == "type" else None
    windows = step_windows(opened, numbers)
    out: dict[str, tuple[float, float]] = {}
    for lo, hi, groups in windows:
        names, totals, counts = op_totals(index, start_ns=lo, end_ns=hi, by=by, side=side,
                                          types=types, tables=opened.tables, groups=groups)
        for name, total, count in zip(names, totals.tolist(), counts.tolist()):
            key = normalise(str(name), op_map) if by == "name" else str(name)
            t, c = out.get(key, (0.0, 0.0))
            out[key] = (t + total, c + count)
    return {k: (t / len(windows), c / len(windows)) for k, (t, c) in out.items()}


def op_slices(opened: Opened, key: str, numbers: Sequence[int], *, by: str = "name",
              side: str = "all", op_map: Sequence[tuple[re.Pattern, str]] = ()) -> np.ndarray:
    """The slices of one op of a comparison (its key as :func:`compare` matched it) that ran
    in the steps `numbers` (their windows as :func:`compare` counts in) on one side, ordered
    by start."""
    index = opened.index
    types = op_types(index, opened.tables) if by == "type" else None
    found = []
    for lo, hi, groups in step_windows(opened, numbers):
        sel, keys, labels = window_slices(index, start_ns=lo, end_ns=hi, by=by, side=side,
                                          types=types, tables=opened.tables, groups=groups)
        match = [k for k in np.unique(keys).tolist()
                 if (normalise(str(labels[k]), op_map) if by == "name" else str(labels[k]))
                 == key]
        found.append(sel[np.isin(keys, match)])
    return by_start(index, np.unique(np.concatenate(found)))


def _overlap(b_ops: dict[str, tuple[float, float]], n_ops: dict[str, tuple[float, float]]
             ) -> float:
    """The smaller of the two sides' shares of op time in keys the other side has too."""
    shares = []
    for mine, other in ((b_ops, n_ops), (n_ops, b_ops)):
        total = sum(t for t, _ in mine.values())
        if total > 0:
            shares.append(sum(t for k, (t, _) in mine.items() if k in other) / total)
    return min(shares) if shares else 1.0


def _check(b: SideSummary, n: SideSummary, overlap: float) -> tuple[list[str], bool]:
    warnings = []
    comparable = True
    if b.kind != n.kind:
        warnings.append(f"different kinds of profile: {b.kind} and {n.kind}")
    if b.device_kind != n.device_kind:
        warnings.append(f"different devices: {b.device_kind} and {n.device_kind}")
        comparable &= "none" not in (b.device_kind, n.device_kind)
    elif b.devices != n.devices:
        warnings.append(f"different device counts: {b.devices} and {n.devices}")
    if len(b.groups) != len(n.groups):
        warnings.append(f"different ranks: {len(b.groups)} and {len(n.groups)}")
        comparable = False
    elif b.groups != n.groups:
        warnings.append("the ranks are named differently: compared in order")
    if overlap < MIN_OP_OVERLAP:
        warnings.append(f"the op sets overlap little: {overlap * 100:.0f} % of op time is in "
                        "ops both sides ran")
        comparable = False
    for s in (b, n):
        if not s.step_ns:
            warnings.append(f"{s.label}: no steps to compare (no iterations with a window, "
                            "after the warm-up)")
    return warnings, comparable


def _capture_lengths(base: Opened, new: Opened, tables: list[TableDelta]) -> list[str]:
    """A warning when summary tables were compared over captures of different lengths."""
    if not any(t.skipped is None for t in tables):
        return []
    b, n = ({it.number for it in o.iterations.items} for o in (base, new))
    if not b or not n or len(b) == len(n):
        return []
    return [f"the sides captured {len(b)} and {len(n)} steps: the summary tables' "
            "whole-capture totals differ by that too"]


_PART_LABELS = {"compute_ns": "compute", "comm_exposed_ns": "exposed communication",
                "memcpy_exposed_ns": "exposed copies", "idle_ns": "device idle",
                "prepare_ns": "prepare", "dataloader_ns": "dataloader",
                "sync_ns": "syncs", "host_bound_ns": "host-bound idle"}


def verdict(diff: Diff) -> str:
    """One line: the step change and the parts that moved most ("step -31 %: dataloader
    -46 ms, compute unchanged")."""
    step = diff.step
    if step["delta_ns"] is None:
        return "no steps to compare on a side"
    b = step["base_ns"] or 0
    moved = []
    for key, label in _PART_LABELS.items():
        base, new = diff.parts.get(key, (None, None))
        if base is not None and new is not None:
            moved.append((new - base, label))
    moved.sort(key=lambda m: -abs(m[0]))
    said = [f"{label} {'+' if d >= 0 else '-'}{duration_text(abs(int(d)))}"
            for d, label in moved[:2] if b and abs(d) >= UNCHANGED_SHARE * b]
    compute = diff.parts.get("compute_ns", (None, None))
    if compute[0] is not None and compute[1] is not None and b and \
            abs(compute[1] - compute[0]) < UNCHANGED_SHARE * b:
        said.append("compute unchanged")
    if step["delta_ns"] == 0 and not any(o.delta_ns for o in diff.ops) and all(
            b_part == n_part for b_part, n_part in diff.parts.values()) and not any(
            r.delta_ns for t in diff.tables for r in t.rows):
        return "no change"
    pct = step["delta_pct"] or 0.0
    rates = (f", {rate_text(step['base_steps_per_s'])} steps/s -> "
             f"{rate_text(step['new_steps_per_s'])} steps/s"
             if step["base_steps_per_s"] and step["new_steps_per_s"] else "")
    head = (f"step {pct:+.1f} % ({duration_text(b)} -> {duration_text(step['new_ns'] or 0)}"
            f"{rates})")
    tail = "" if diff.conclusive else f"; inconclusive: {diff.reason}"
    return head + (": " + ", ".join(said) if said else "") + tail
