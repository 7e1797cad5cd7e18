"""The advisor's rules on how well ops use the device: large matmuls far under their roof, and
many tiny kernels of one kind.

`under_roof` reads the op efficiency (core.perf.efficiency): the matrix ops (GEMM, batched
GEMM, convolution, attention) that do at least `min_gflop` a call and reach under
`max_roof_share` of their roof, against the device's peaks. Its cost is the time they would
save at that share: t x (1 - share / max_roof_share). Each op's evidence says what usually
causes it where the shapes show it: dims that are not multiples of the matrix units' tile,
dims too small to fill it, and fp32 where the device's bf16 peak is several times higher.

`tiny_kernels` reads the timeline: device compute slices of one name shorter than `max_us`,
at least `min_per_step` of them a step: a fusion candidate. Its cost is their device time per
step; the launches they take are counted, with the host's median launch call where the trace
holds the launch calls (cudaLaunchKernel, hipLaunchKernel, aclnn/ACL launches).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from proftui.core.analysis import activity as act
from proftui.core.analysis.findings import (
    Context,
    Evidence,
    Finding,
    Rule,
    Skip,
    make_finding,
    need_device,
    need_timeline,
    slice_evidence,
    slices_in_steps,
    steps_of,
)
from proftui.core.model.words import plural
from proftui.core.perf.efficiency import (
    Efficiency,
    OpGroup,
    efficiency,
    profile_peaks,
    shapes_text,
    subset_instances,
)
from proftui.core.perf.instances import kernels_to_read, op_instances
from proftui.core.perf.models import MATRIX_OPS, NoModel

TILE = 16  # elements: the cube's and tensor cores' fp16/bf16 tile edge
SMALL_DIM = 128  # a GEMM dim under this cannot fill the matrix units
FP32_GAP = 2.0  # the bf16 matrix peak over fp32's from which fp32 is flagged
_LAUNCH = re.compile(r"(cuda|hip)LaunchKernel|cuLaunchKernel|aclnn\w*|LaunchKernel|"
                     r"aclopCompileAndExecute", re.IGNORECASE)

_memo: dict[tuple, tuple[Any, Any]] = {}


def _peaks(ctx: Context):
    """The profile's peaks as asked for (ctx.peaks), found once per index and asking."""
    key = (id(ctx.index), tuple(sorted(ctx.peaks.items())))
    if key not in _memo or _memo[key][0] is not ctx.index:
        _memo.clear()
        _memo[key] = (ctx.index, profile_peaks(ctx.index, **ctx.peaks))
    return _memo[key][1]


def group_efficiency(ctx: Context, group: str, max_kernels: float) -> Efficiency:
    """The op efficiency of `group`'s matrix calls (those a matrix model covers) that start in
    its considered steps: the other ops' args are not read, and over `max_kernels` Kineto
    kernels to read (a large trace: seconds a hundred thousand) the rule says so rather than
    making the advice wait."""
    lo = min(b.extent()[0] for b in ctx.steps[group])
    hi = max(b.extent()[1] for b in ctx.steps[group])
    n = kernels_to_read(ctx.index, start_ns=lo, end_ns=hi, names=MATRIX_OPS)
    if n > max_kernels:
        raise Skip(f"{plural(n, 'matrix kernel')} in the steps considered, more than max_kernels "
                   f"({max_kernels:,.0f}) whose args this rule reads: proftui ops --efficiency "
                   "rates every op shape (or --set under_roof.max_kernels=N)")
    found = op_instances(ctx.index, start_ns=lo, end_ns=hi, names=MATRIX_OPS)
    groups = np.asarray(found.groups, dtype=object)
    keep = groups == group
    start = found.start_ns
    inside = np.zeros(len(start), bool)
    for b in ctx.steps[group]:
        lo, hi = b.extent()
        inside |= (start >= lo) & (start < hi)
    return efficiency(subset_instances(found, np.flatnonzero(keep & inside)), _peaks(ctx)[0])


def _dims(g: OpGroup) -> list[int]:
    """The last two dims of the first two inputs (a GEMM's M, K, N)."""
    return [d for shape in g.inputs[:2] if shape for d in shape[-2:]]


def hints(g: OpGroup, peaks) -> list[str]:
    """What in an op's shapes and dtype usually keeps it under its roof."""
    out = []
    dims = _dims(g)
    odd = sorted({d for d in dims if d % TILE})
    if odd:
        out.append(f"dims not multiples of {TILE} (the matrix units' tile): "
                   + ", ".join(map(str, odd[:4])))
    small = sorted({d for d in dims if d < SMALL_DIM})
    if small:
        out.append(f"dims too small to fill the matrix units: {', '.join(map(str, small[:4]))}")
    work = g.work
    if not isinstance(work, NoModel) and work.dtype == "fp32" and peaks is not None:
        bf16, fp32 = peaks.matrix.get("bf16"), peaks.matrix.get("fp32")
        if bf16 and (not fp32 or bf16 >= FP32_GAP * fp32):
            gap = f"{bf16 / fp32:.0f} x" if fp32 else "far above"
            out.append(f"runs in fp32; the device's bf16 matrix peak is {gap} its fp32 one")
    return out


def under_roof(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    peaks, said = _peaks(ctx)
    if peaks is None:
        raise Skip(f"no peaks to judge by: {said}")
    found = group_efficiency(ctx, group, p["max_kernels"])
    if not found.groups:
        raise Skip("no device task with input shapes (record_shapes, kernel_details.csv)")
    n_steps = max(1, len(ctx.steps[group]))
    median = ctx.median_step_ns(group)
    slow, lost, evidence = [], 0.0, []
    for r, g in enumerate(found.groups):
        share = found.table.find("Roof").values[r] / 100
        if (isinstance(g.work, NoModel) or g.work.unit != "matrix" or share != share
                or g.work.flops < p["min_gflop"] * 1e9 or share >= p["max_roof_share"]):
            continue
        per_step = g.total_ns / n_steps
        if per_step < p["min_share"] * median:
            continue
        lost += per_step * (1 - share / p["max_roof_share"])
        slow.append({"op": g.op, "shapes": [list(s) if s else None for s in g.inputs],
                     "dtypes": list(g.dtypes), "calls_per_step": g.calls / n_steps,
                     "time_ns_per_step": int(per_step), "roof_pct": 100 * share,
                     "tflops": float(found.table.find("TFLOP/s").values[r]),
                     "hints": hints(g, peaks)})
        label = f"{g.op} {shapes_text(g.inputs)}: {100 * share:.0f}% of its roof"
        evidence += [(s, ns, label) for s, ns in zip(g.call_slices, g.call_ns) if s >= 0]
    if not slow:
        return None
    start = ctx.index.col("slices.start")
    evidence.sort(key=lambda e: -e[1])
    chosen = evidence[:20]
    steps = steps_of(ctx, group, [int(start[s]) for s, _, _ in chosen])
    return make_finding(ctx, EFFICIENCY_RULES_BY_ID["under_roof"], group,
                    f"{plural(len(slow), 'large matrix op shape')} "
                    f"reach{'es' if len(slow) == 1 else ''} under "
                    f"{100 * p['max_roof_share']:.0f}% of the roof",
                    lost, {"ops": slow, "device": peaks.device, "source": found.source},
                    [Evidence(int(start[s]), int(start[s]) + ns, label, group, step, int(s))
                     for (s, ns, label), step in zip(chosen, steps)])


def _launch_ns(ctx: Context, group: str, host: np.ndarray) -> float | None:
    """The median duration of the kernel launch calls of `group` in its steps (`host`: a
    bool per slice, the host's), or None. The launches are picked by name before the steps
    are: a few hundred thousand of millions of host slices."""
    names = ctx.index.col("slices.name")
    named = np.zeros(len(ctx.index.strings), bool)
    named[names[host]] = True
    ids = [k for k in np.flatnonzero(named).tolist() if _LAUNCH.search(ctx.index.strings[k])]
    picked = slices_in_steps(ctx, group, host & np.isin(names, ids))
    if not len(picked):
        return None
    return float(np.median(ctx.index.col("slices.dur")[picked]))


def tiny_kernels(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    need_timeline(ctx, group, "kernel durations are on the timeline only")
    need_device(ctx, group)
    found = act.activity(ctx.index, ctx.tables)
    compute = np.isin(found.device_kind, act.COMPUTE_KINDS)
    rows = slices_in_steps(ctx, group, compute)
    dur = ctx.index.col("slices.dur")[rows]
    tiny = rows[dur < p["max_us"] * 1000]
    n_steps = max(1, len(ctx.steps[group]))
    names = ctx.index.col("slices.name")[tiny]
    ids, counts = np.unique(names, return_counts=True)
    many = ids[counts / n_steps >= p["min_per_step"]]
    if not len(many):
        return None
    mask = np.isin(names, many)
    chosen, chosen_names = tiny[mask], names[mask]
    durations = ctx.index.col("slices.dur")[chosen]
    kinds = []
    for k in many.tolist():
        mine = durations[chosen_names == k]
        kinds.append({"name": ctx.index.strings[k], "per_step": len(mine) / n_steps,
                      "avg_ns": int(mine.mean()), "time_ns_per_step": int(mine.sum() / n_steps)})
    kinds.sort(key=lambda k: -k["time_ns_per_step"])
    lost = float(durations.sum()) / n_steps
    launch = _launch_ns(ctx, group, ~found.device)
    per_step = len(chosen) / n_steps
    numbers = {"kernels_per_step": per_step, "time_in_them_ns_per_step": int(lost),
               "kinds": kinds[:5],
               "launch_ns": None if launch is None else int(launch),
               "launch_ns_per_step": None if launch is None else int(launch * per_step)}
    return make_finding(ctx, EFFICIENCY_RULES_BY_ID["tiny_kernels"], group,
                    f"{per_step:g} kernels a step shorter than {p['max_us']:g} µs, "
                    f"{len(many)} kind{'s' if len(many) > 1 else ''} of them: fusion candidates",
                    lost, numbers, slice_evidence(ctx, chosen, group))


EFFICIENCY_RULES: tuple[Rule, ...] = (
    Rule("under_roof", "matrix ops (GEMM, batched GEMM, convolution, attention) of min_gflop "
         "a call or more that reach under max_roof_share of their roof against the device's "
         "peaks, each op shape over min_share of the step; cost: the time they would save at "
         "max_roof_share; skipped over max_kernels Kineto kernels to read",
         {"min_gflop": 1, "max_roof_share": 0.3, "min_share": 0.01, "max_kernels": 20000},
         "Make the shapes tile well (dims multiples of 16, better 64 or 128; batch small "
         "GEMMs together), run them in bf16/fp16 where fp32 was not meant (autocast), and "
         "check the evidence's hints; proftui ops --efficiency shows every op shape's rate.",
         under_roof),
    Rule("tiny_kernels", "device compute kernels of one name shorter than max_us, at least "
         "min_per_step of them a step (fusion candidates); cost: their device time, with the "
         "host's launch calls counted", {"max_us": 10, "min_per_step": 100},
         "Fuse them: torch.compile, a fused kernel or op (fused optimizers, fused norms and "
         "activations), or larger tensors per call; capture graphs (CUDA graphs, aclgraph) to "
         "cut the launch cost.", tiny_kernels),
)
EFFICIENCY_RULES_BY_ID = {r.id: r for r in EFFICIENCY_RULES}
