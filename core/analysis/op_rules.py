"""The advisor's rules about single ops, after msprof-analyze's advisor: cube ops whose
shapes are not aligned, dynamic shapes, vector ops bound by a pipe, and host op sequences
that have a fused NPU API; and the input dtypes of the ops that fall back to AI CPU.

The device rules read kernel_details.csv (a task a row: op type, OP State, core, input
shapes, dtypes and formats, the pipe ratios with ``aic_metrics=PipeUtilization``) and
api_statistic.csv; the fusion rule reads the timeline's ``aten::`` host ops. Each says why
it cannot run where the profile lacks what it reads. Their thresholds and where they differ
from msprof-analyze's are in docs/definitions.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from proftui.core.analysis import activity as act
from proftui.core.analysis import table_rules
from proftui.core.analysis.findings import (
    MAX_EVIDENCE,
    Context,
    Evidence,
    Finding,
    Rule,
    Skip,
    make_finding,
    need_timeline,
    slice_evidence,
    slices_in_steps,
    step_numbers,
    steps_of,
)
from proftui.core.analysis.table_rules import KernelRows
from proftui.core.model.words import plural
from proftui.core.ops.roles import device_kind
from proftui.core.perf.dtypes import canonical_dtype, dtype_bytes
from proftui.core.perf.shapes import ascend_list, ascend_shapes

KERNEL_DETAILS = "kernel_details.csv"
CUBE_TYPE = re.compile(r"mat_?mul|conv|gemm", re.IGNORECASE)
CUBE_CORES = ("AI_CORE", "MIX_AIC")
VECTOR_CORES = ("AI_VECTOR_CORE", "MIX_AIV")
ND_FORMATS = ("ND", "FORMAT_ND", "")  # any other (NC1HWC0, FRACTAL_Z/NZ) pads itself
COMPILE_API, COMPILE_TIME_API = "aclopCompileAndExecute", "opCompile"
# Input dtypes msprof-analyze's aicpu rules name as the cause of an AI CPU fallback: double
# (its "double_suggestion") and those outside CANN 8.0's AI Core list for all op types.
AI_CORE_DTYPES = frozenset({"fp32", "fp16", "bf16", "fp64", "bool", "int32", "int64", "int8",
                            "uint8", "int16", "complex64", "complex128"})


def _kernels(ctx: Context, group: str, what: str) -> KernelRows:
    rows = table_rules.kernel_rows(ctx.tables, group, step_numbers(ctx, group))
    if rows is None:
        raise Skip(f"no kernel_details table: {what}")
    if not len(rows.rows):
        raise Skip("kernel_details lists no task of the steps considered "
                   f"({', '.join(map(str, sorted(step_numbers(ctx, group) or [])))})")
    return rows


def _short(shapes: str, limit: int = 60) -> str:
    text = shapes.strip('"')
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _per_step(ctx: Context, group: str, ns: float) -> float:
    return ns / max(1, len(ctx.steps[group]))


def _evidence(ctx: Context, group: str, kernels: KernelRows, picked: Sequence[int],
              labels: dict[int, str]) -> list[Evidence]:
    """The longest tasks of `picked` (indexes into `kernels`) with a start, as evidence: the
    step from the table's Step Id, else the step whose window holds it."""
    timed = [i for i in picked if kernels.start_ns[i] >= 0]
    top = sorted(timed, key=lambda i: -kernels.dur_ns[i])[:MAX_EVIDENCE]
    found = steps_of(ctx, group, [int(kernels.start_ns[i]) for i in top]) if top else []
    out = []
    for i, step in zip(top, found):
        start = int(kernels.start_ns[i])
        own = kernels.steps[i]
        out.append(Evidence(start, start + int(round(kernels.dur_ns[i])), labels[i], group,
                            int(own) if own == own else step))
    return out


def _by_signature(kernels: KernelRows, picked: Sequence[int]) -> list[dict[str, Any]]:
    """The tasks of `picked` grouped by op type, input shapes and dtypes: count and time,
    most time first."""
    groups: dict[tuple[str, str, str], list[float]] = {}
    for i in picked:
        key = (kernels.types[i], kernels.shapes[i].strip('"'), kernels.dtypes[i])
        entry = groups.setdefault(key, [0, 0.0])
        entry[0] += 1
        entry[1] += kernels.dur_ns[i]
    ranked = sorted(groups.items(), key=lambda kv: -kv[1][1])
    return [{"type": t, "shapes": s, "dtypes": d, "count": int(c), "total_ns": int(round(ns))}
            for (t, s, d), (c, ns) in ranked]


# -- shapes not aligned ---------------------------------------------------------------------


def unaligned_inputs(shapes: str, dtypes: str, formats: str, align_bytes: float) -> list[str]:
    """Why a cube op's inputs tile badly: of its first two inputs (the matrices) in ND
    layout, each whose inner axis (last dim) is not a multiple of `align_bytes` in bytes."""
    dims, types, layouts = ascend_shapes(shapes), ascend_list(dtypes), ascend_list(formats)
    out = []
    for i, shape in enumerate(dims[:2]):
        layout = layouts[i].upper() if i < len(layouts) else ""
        size = dtype_bytes(types[i]) if i < len(types) else None
        if shape is None or len(shape) < 2 or layout not in ND_FORMATS or not size:
            continue
        elements = align_bytes / size
        if shape[-1] % elements:
            out.append(f"input {i} inner axis {shape[-1]} not a multiple of {elements:g} "
                       f"({canonical_dtype(types[i])})")
    return out


def _unaligned(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    kernels = _kernels(ctx, group, "no op shapes to read")
    if not any(kernels.shapes):
        raise Skip("kernel_details has no Input Shapes column (a profiler_level of Level1 "
                   "or above writes it)")
    why = {}
    for i, (kind, core) in enumerate(zip(kernels.types, kernels.cores)):
        if core in CUBE_CORES and CUBE_TYPE.search(kind):
            reasons = unaligned_inputs(kernels.shapes[i], kernels.dtypes[i],
                                       kernels.formats[i], p["align_bytes"])
            if reasons:
                why[i] = "; ".join(reasons)
    time = float(sum(kernels.dur_ns[i] for i in why))
    if not why or kernels.all_ns <= 0 or time / kernels.all_ns < p["min_share"]:
        return None
    ops = _by_signature(kernels, list(why))
    reason = {(kernels.types[i], kernels.shapes[i].strip('"'), kernels.dtypes[i]): r
              for i, r in why.items()}
    for op in ops:
        op["why"] = reason[(op["type"], op["shapes"], op["dtypes"])]
    labels = {i: f"{kernels.types[i]} {_short(kernels.shapes[i])}: {r}"
              for i, r in why.items()}
    return make_finding(ctx, OP_RULES_BY_ID["unaligned_shapes"], group,
                        f"{plural(len(why), 'cube op')} with inputs not aligned to "
                        f"{p['align_bytes']:g} bytes, {ops[0]['type']} the longest in total",
                        _per_step(ctx, group, time),
                        {"ops": ops[:10], "tasks": len(why),
                         "time_in_them_ns_per_step": int(_per_step(ctx, group, time)),
                         "share_of_device": time / kernels.all_ns, "source": KERNEL_DETAILS},
                        _evidence(ctx, group, kernels, list(why), labels))


# -- dynamic shapes -------------------------------------------------------------------------


def _dynamic(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    kernels = table_rules.kernel_rows(ctx.tables, group, step_numbers(ctx, group))
    compiles = table_rules.api_calls(ctx.tables, group, COMPILE_API)
    states = [s.lower() for s in kernels.states] if kernels is not None else []
    known = [i for i, s in enumerate(states) if s in ("static", "dynamic")]
    if not known and compiles is None:
        raise Skip("neither kernel_details' OP State nor api_statistic's "
                   f"{COMPILE_API} count: no op states to read")
    dynamic = [i for i in known if states[i] == "dynamic"]
    all_dynamic = bool(known) and len(dynamic) == len(known)
    many_compiles = compiles is not None and compiles[0] >= p["min_compiles"]
    if not (all_dynamic or many_compiles):
        return None
    compile_time = table_rules.api_calls(ctx.tables, group, COMPILE_TIME_API)
    lost = _per_step(ctx, group, compile_time[1]) if compile_time else 0.0
    types = _shapes_by_type(kernels, dynamic) if kernels is not None else []
    first = {}
    for i in dynamic:
        first.setdefault(kernels.types[i], i)  # type: ignore[union-attr]
    labels = {i: f"{t['type']}: {plural(t['shapes'], 'input shape')}, "
                 f"{plural(t['count'], 'task')}" for t in types for i in [first[t["type"]]]}
    evidence = _evidence(ctx, group, kernels, list(labels), labels) if kernels else []
    title = (f"every op ran with a dynamic shape ({plural(len(dynamic), 'task')})"
             if all_dynamic else f"{plural(compiles[0], 'op compilation')} "  # type: ignore
             f"({COMPILE_API})")
    return make_finding(ctx, OP_RULES_BY_ID["dynamic_shapes"], group, title, lost,
                        {"dynamic_tasks": len(dynamic), "static_tasks": len(known) - len(dynamic),
                         "compiles": compiles[0] if compiles else None,
                         "compile_ns_per_step": int(lost) if compile_time else None,
                         "types": types[:10], "source": _dynamic_source(known, compiles)},
                        evidence)


def _shapes_by_type(kernels: KernelRows, picked: Sequence[int]) -> list[dict[str, Any]]:
    """Per op type of `picked`: its distinct input shapes, task count and time; the types
    with the most shapes first."""
    seen: dict[str, tuple[set[str], list[float]]] = {}
    for i in picked:
        shapes, totals = seen.setdefault(kernels.types[i], (set(), [0, 0.0]))
        shapes.add(kernels.shapes[i])
        totals[0] += 1
        totals[1] += kernels.dur_ns[i]
    ranked = sorted(seen.items(), key=lambda kv: (-len(kv[1][0]), -kv[1][1][1]))
    return [{"type": t, "shapes": len(s), "count": int(c), "total_ns": int(round(ns))}
            for t, (s, (c, ns)) in ranked]


def _dynamic_source(known: list[int], compiles: tuple[int, float] | None) -> str:
    names = ([KERNEL_DETAILS] if known else []) + (["api_statistic.csv"] if compiles else [])
    return ", ".join(names)


# -- vector ops bound by a pipe -------------------------------------------------------------

VECTOR_RATIOS = ("aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio")


def pipe_bound(vec: float, mte2: float, mte3: float, p: dict[str, float]) -> str:
    """msprof-analyze's bound of a vector op from its mean pipe ratios: all three pipes
    together over `total`, else the first of mte2, mte3, vec over its threshold; "" when
    none is."""
    if vec + mte2 + mte3 >= p["total"]:
        return "vec_mte2_mte3"
    for name, ratio in (("mte2", mte2), ("mte3", mte3), ("vec", vec)):
        if ratio >= p[name]:
            return name
    return ""


def _vector_bound(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    kernels = _kernels(ctx, group, "no pipe counters to read")
    ratios = [kernels.counter(name) for name in VECTOR_RATIOS]
    vector = [i for i, core in enumerate(kernels.cores) if core in VECTOR_CORES]
    if any(r is None for r in ratios) or not any(
            np.isfinite(r[i]) and r[i] > 0 for r in ratios for i in vector):  # type: ignore
        raise Skip("kernel_details has no vector pipe counters (aiv_vec_ratio ...): capture "
                   "with aic_metrics=PipeUtilization")
    by_type: dict[str, float] = {}
    for i in vector:
        by_type[kernels.types[i]] = by_type.get(kernels.types[i], 0.0) + kernels.dur_ns[i]
    heavy = {t for t, ns in by_type.items()  # msprof-analyze: 1 % of the time, or 1 s
             if ns >= p["min_type_share"] * kernels.all_ns or ns >= 1e9}
    groups: dict[tuple[str, str], list[int]] = {}
    for i in vector:
        if kernels.types[i] in heavy:
            groups.setdefault((kernels.names[i], kernels.shapes[i].strip('"')), []).append(i)
    ops, picked, labels = [], [], {}
    for (name, shapes), rows in groups.items():
        means = [float(np.nanmean(r[rows])) for r in ratios]  # type: ignore[index]
        bound = pipe_bound(*means, p)
        if not bound:
            continue
        total = float(sum(kernels.dur_ns[i] for i in rows))
        ops.append({"name": name, "type": kernels.types[rows[0]], "shapes": shapes,
                    "dtypes": kernels.dtypes[rows[0]], "count": len(rows),
                    "total_ns": int(round(total)), "bound": bound,
                    **{k.removesuffix("_ratio"): round(m, 3) for k, m in zip(VECTOR_RATIOS,
                                                                              means)}})
        picked += rows
        labels.update({i: f"{kernels.types[i]} {_short(shapes)}: {bound} bound" for i in rows})
    if not ops:
        return None
    ops.sort(key=lambda o: -o["total_ns"])
    time = float(sum(kernels.dur_ns[i] for i in picked))
    return make_finding(ctx, OP_RULES_BY_ID["vector_bound"], group,
                        f"{plural(len(picked), 'vector task')} bound by their pipes, "
                        f"{ops[0]['type']} ({ops[0]['bound']}) the longest in total",
                        _per_step(ctx, group, time),
                        {"ops": ops[:10], "tasks": len(picked),
                         "time_in_them_ns_per_step": int(_per_step(ctx, group, time)),
                         "share_of_device": time / kernels.all_ns if kernels.all_ns else None,
                         "source": KERNEL_DETAILS},
                        _evidence(ctx, group, kernels, picked, labels))


# -- host op sequences with a fused NPU API -------------------------------------------------

# msprof-analyze's rules/timeline_fusion_ops.yaml (its newest set, with what it inherits):
# a fused API and the aten op sequences it replaces, "-" between ops, "(a){m,n}" optional.
FUSED_APIS: dict[str, tuple[str, ...]] = {
    "torch_npu.npu_confusion_transpose": tuple(
        f"({a})-(contiguous){{0,1}}-({b})" for a, b in (
            ("permute", "reshape"), ("permute", "view"), ("transpose", "reshape"),
            ("transpose", "view"), ("reshape", "permute"), ("reshape", "transpose"),
            ("view", "permute"), ("view", "transpose"))),
    "torch_npu.fast_gelu": ("gelu",),
    "torch_npu.npu_scaled_masked_softmax": ("softmax-(mul){0,1}-(masked_fill_)",
                                            "softmax-(mul){0,1}-(add)"),
    "optimizer.clip_grad_norm_fused_": ("add-reciprocal-mul",),
    "torch_npu.npu_fusion_attention": (
        "matmul-(add){0,1}-(mul){0,1}-(masked_fill_){0,1}-softmax-(dropout){0,1}-matmul",
        "matmul-(add){0,1}-(mul){0,1}-(add){0,1}-softmax-(dropout){0,1}-matmul"),
    "torch_npu.npu_rotary_mul": ("(chunk)-neg-cat-(mul){0,2}-add",
                                 "(slice)-neg-cat-(mul){0,2}-add"),
    "torch_npu.npu_rms_norm": ("(pow){0,1}-(mean){0,1}-(add){0,1}-rsqrt-mul-(type_as){0,1}",),
    "torch_npu.npu_swiglu": tuple(f"({s})-{rest}" for s in ("slice", "chunk") for rest in (
        "silu-mul", "mul-silu", "sigmoid-mul-mul", "mul-sigmoid-mul", "mul-mul-sigmoid")),
    "torch_npu.npu_geglu": tuple(f"({s})-{rest}" for s in ("slice", "chunk")
                                 for rest in ("gelu-mul", "mul-gelu")),
    "torch_npu.npu_group_norm_silu": ("group_norm-silu",),
    "torch.addmm": ("mul-mul-add",),
    "torch_npu.npu_add_layer_norm": ("add-layer_norm",),
    "mindspeed.ops.npu_matmul_add": ("matmul-add",),
    "mindspeed.ops.npu_moe_token_permute": ("argsort-argsort-index_select",),
    "mindspeed.ops.npu_moe_token_unpermute": ("index_select-mul-reduce_sum",),
}
# An optimizer's step run op by op, and the fused NPU optimizer that replaces it.
FUSED_OPTIMIZERS = {f"{name}.step": f"torch_npu.optim.NpuFused{name}" for name in (
    "AdamW", "SGD", "Adadelta", "Lamb", "AdamP", "BertAdam", "RMSprop", "RMSpropTF", "Adam")}
OPTIMIZER_PREFIX = "Optimizer.step#"
_TOKEN = re.compile(r"^\(([\w|]+)\)(\{\d+,\d+\}|[*+?])?$")


def sequence_pattern(rule: str) -> re.Pattern[str]:
    """msprof-analyze's op sequence ("(pow){0,1}-rsqrt-mul") as a regex over op names
    written "-name-" one after another."""
    parts = []
    for token in rule.split("-"):
        m = _TOKEN.match(token)
        names, repeat = (m.group(1).split("|"), m.group(2) or "") if m else ([token], "")
        parts.append("(?:" + "|".join(f"-{re.escape(n)}-" for n in names) + ")" + repeat)
    return re.compile("".join(parts))


_PATTERNS = [(api, rule, sequence_pattern(rule)) for api, rules in FUSED_APIS.items()
             for rule in rules]


def _outer_aten(ctx: Context, group: str) -> list[np.ndarray]:
    """Per host track of `group`, its aten:: ops that no other aten:: op holds (the calls
    the Python code made), in time order, of the steps considered."""
    s, a = ctx.index.strings, ctx.index.arrays
    is_aten = np.zeros(len(s), bool)
    is_aten[[i for i in s.ids_containing("aten::") if s[i].startswith("aten::")]] = True
    found = act.activity(ctx.index, ctx.tables)
    rows = slices_in_steps(ctx, group, is_aten[a["slices.name"]] & ~found.device)
    out = []
    start, dur, track = a["slices.start"], a["slices.dur"], a["slices.track"]
    for t in np.unique(track[rows]).tolist():
        mine = rows[track[rows] == t]
        mine = mine[np.lexsort((-dur[mine], start[mine]))]
        keep, end = [], -1
        for r in mine.tolist():
            if start[r] >= end:
                keep.append(r)
                end = int(start[r] + dur[r])
        out.append(np.array(keep, np.int64))
    return out


def fused_matches(names: list[str]) -> list[tuple[str, str, int, int]]:
    """(api, rule, first op, op count) of each sequence of `names` (aten ops without their
    prefix, in call order) that a fused API replaces."""
    text = "".join(f"-{n}-" for n in names)
    offsets = np.cumsum([0] + [len(n) + 2 for n in names])
    found = []
    for api, rule, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            first = int(np.searchsorted(offsets, m.start()))
            last = int(np.searchsorted(offsets, m.end()))
            if last > first:
                found.append((api, rule, first, last - first))
    return found


def _fused_ops(ctx: Context, group: str, p: dict[str, float]) -> Finding | None:
    need_timeline(ctx, group, "host ops are on the timeline only")
    if device_kind(ctx.index)[0] == "GPU":
        raise Skip("the fused APIs are torch_npu's, and this profile ran on a GPU")
    s, a = ctx.index.strings, ctx.index.arrays
    tracks = _outer_aten(ctx, group)
    optimizers = _optimizer_steps(ctx, group)
    if not any(len(t) for t in tracks) and not len(optimizers):
        raise Skip("the trace records no aten:: host ops (profile the CPU activity)")
    start, end = a["slices.start"], a["slices.start"] + a["slices.dur"]
    counts: dict[tuple[str, str], list[float]] = {}
    evidence = []
    for rows in tracks:
        names = [s[k].removeprefix("aten::") for k in a["slices.name"][rows].tolist()]
        for api, rule, first, n in fused_matches(names):
            lo, hi = int(start[rows[first]]), int(end[rows[first:first + n]].max())
            entry = counts.setdefault((api, rule), [0, 0.0])
            entry[0] += 1
            entry[1] += hi - lo
            evidence.append(Evidence(lo, hi, f"{' > '.join(names[first:first + n])} "
                                     f"-> {api}", group))
    for r in optimizers.tolist():
        api = FUSED_OPTIMIZERS[s[int(a["slices.name"][r])].removeprefix(OPTIMIZER_PREFIX)]
        entry = counts.setdefault((api, "optimizer step op by op"), [0, 0.0])
        entry[0] += 1
        entry[1] += float(a["slices.dur"][r])
    evidence += slice_evidence(ctx, optimizers, group)
    matches = sum(int(c) for c, _ in counts.values())
    if matches < p["min_count"]:
        return None
    time = sum(ns for _, ns in counts.values())
    found = sorted(({"replacement": api, "pattern": rule, "count": int(c),
                     "host_ns": int(round(ns))} for (api, rule), (c, ns) in counts.items()),
                   key=lambda f: -f["host_ns"])
    evidence = [e if e.iteration is not None else _in_step(ctx, group, e)
                for e in sorted(evidence, key=lambda e: e.start_ns - e.end_ns)[:MAX_EVIDENCE]]
    return make_finding(ctx, OP_RULES_BY_ID["fused_ops"], group,
                        f"{plural(matches, 'op sequence')} with a fused NPU API, "
                        f"{found[0]['replacement']} the most host time",
                        _per_step(ctx, group, time),
                        {"matches": found[:20], "host_ns_per_step":
                         int(_per_step(ctx, group, time))}, evidence)


def _in_step(ctx: Context, group: str, e: Evidence) -> Evidence:
    return Evidence(e.start_ns, e.end_ns, e.label, e.group, steps_of(ctx, group, [e.start_ns])[0],
                    e.slice)


def _optimizer_steps(ctx: Context, group: str) -> np.ndarray:
    """The host slices of an optimizer step that a fused NPU optimizer replaces."""
    s = ctx.index.strings
    wanted = np.zeros(len(s), bool)
    for i in s.ids_containing(OPTIMIZER_PREFIX):
        wanted[i] = s[i].removeprefix(OPTIMIZER_PREFIX) in FUSED_OPTIMIZERS
    found = act.activity(ctx.index, ctx.tables)
    return slices_in_steps(ctx, group, wanted[ctx.index.arrays["slices.name"]] & ~found.device)


# -- the input dtypes of AI CPU ops ---------------------------------------------------------


def ai_cpu_dtypes(ctx: Context, group: str) -> list[dict[str, Any]] | None:
    """Per AI CPU op type in kernel_details: its input dtypes (canonical names), task count,
    time, and the dtypes msprof-analyze names as a cause (double, or one AI Core kernels do
    not take); None where kernel_details (or its Input Data Types) is not there."""
    kernels = table_rules.kernel_rows(ctx.tables, group, step_numbers(ctx, group))
    if kernels is None or not any(ascend_list(d) for d in kernels.dtypes):
        return None
    seen: dict[tuple[str, tuple[str, ...]], tuple[set[str], list[float]]] = {}
    for i, core in enumerate(kernels.cores):
        if core == table_rules.AI_CPU_CORE:
            types = tuple(canonical_dtype(t) or t for t in ascend_list(kernels.dtypes[i]))
            names, entry = seen.setdefault((kernels.types[i], types), (set(), [0, 0.0]))
            names.add(kernels.names[i])
            entry[0] += 1
            entry[1] += kernels.dur_ns[i]
    out = [{"type": t, "names": sorted(names), "input_dtypes": list(d), "count": int(c),
            "total_ns": int(round(ns)),
            "suspect": sorted({x for x in d if x == "fp64" or x not in AI_CORE_DTYPES})}
           for (t, d), (names, (c, ns)) in seen.items()]
    return sorted(out, key=lambda o: -o["total_ns"])


def dtype_label(dtypes: list[dict[str, Any]], name: str) -> str:
    """The task `name` with its input dtypes, where kernel_details gives them."""
    for op in dtypes:
        if name in op["names"] and op["input_dtypes"]:
            return f"{name} ({', '.join(op['input_dtypes'])})"
    return name


OP_RULES: tuple[Rule, ...] = (
    Rule("unaligned_shapes", "time in cube ops (MatMul, Conv, GEMM on AI_CORE or MIX_AIC) "
         "whose first two inputs in ND layout have an inner axis (last dim) that is not a "
         "multiple of align_bytes (32 bytes: 16 fp16/bf16 elements, 8 fp32), from "
         "kernel_details; flagged over min_share of the device time",
         {"align_bytes": 32, "min_share": 0.01},
         "Pad the dims to the cube's tile (multiples of 16 elements for fp16/bf16, better "
         "256 as msprof-analyze advises: --set unaligned_shapes.align_bytes=512), or choose "
         "model sizes (hidden, vocabulary, heads) that are multiples of it.", _unaligned),
    Rule("dynamic_shapes", "ops run with dynamic shapes: every task kernel_details lists is "
         "OP State dynamic (msprof-analyze's test), or api_statistic counts min_compiles "
         f"{COMPILE_API} calls or more (its dispatch rule); cost: opCompile time",
         {"min_compiles": 20},
         "Fix the shapes (pad inputs to a few buckets) and use the prebuilt binary kernels: "
         "torch_npu.npu.set_compile_mode(jit_compile=False), "
         "torch_npu.npu.config.allow_internal_format=False.", _dynamic),
    Rule("vector_bound", "vector tasks (AI_VECTOR_CORE, MIX_AIV) of op types over "
         "min_type_share of the device time, grouped by name and shapes, whose mean pipe "
         "ratios reach msprof-analyze's bounds: vec+mte2+mte3 over total, or mte2, mte3 or "
         "vec over its own; cost: the time in them",
         {"min_type_share": 0.01, "total": 0.9, "vec": 0.7, "mte2": 0.7, "mte3": 0.7},
         "A vec-bound op computes at the vector unit's peak: do less of it (fuse it with its "
         "neighbours, a lower-precision dtype); an mte2/mte3-bound op waits for memory: "
         "fuse it to keep data on chip, avoid layout changes (TransData) and small tiles.",
         _vector_bound),
    Rule("fused_ops", "host aten:: op sequences (the outermost calls, in order) and "
         "optimizer steps that a fused NPU API replaces, after msprof-analyze's "
         "timeline_fusion_ops rules; flagged from min_count matches; cost: their host time",
         {"min_count": 1},
         "Call the fused API named in the evidence (torch_npu.npu_rms_norm, "
         "npu_rotary_mul, npu_fusion_attention, npu_swiglu, a torch_npu.optim.NpuFused* "
         "optimizer ...) in place of the op sequence.", _fused_ops),
)
OP_RULES_BY_ID = {r.id: r for r in OP_RULES}
