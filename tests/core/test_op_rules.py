"""The advisor's op rules (core/analysis/op_rules.py), each worked by hand from inline
kernel_details rows (the header torch_npu writes) or inline trace events."""

from __future__ import annotations

import csv
import io

import pytest

from proftui.core import load_trace
from proftui.core.analysis.advise import advise, parse_overrides
from proftui.core.analysis.op_rules import fused_matches, pipe_bound, unaligned_inputs
from proftui.core.analysis.overview import read_overview
from proftui.core.ops.iterations import find_iterations

from helpers import load, write_trace, x

HEADER = (
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
    "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,"
    "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,"
    "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
    "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),"
    "aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,"
    "aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,"
    "cube_utilization(%)").split(",")
T0 = 1736413971558972.912  # µs, as the corpus' first task


def task(type_, core, start_us, dur_us, shapes="", dtypes="", formats="", state="dynamic",
         name=None, vec=0.0, mte2=0.0, mte3=0.0):
    """One kernel_details row as torch_npu writes it (shapes in literal quotes, the start
    with a trailing tab); the columns not given are zero or N/A."""
    row = dict.fromkeys(HEADER, "0")
    row.update({"Step Id": "3", "Model ID": "4294967295", "Name": name or f"aclnn{type_}",
                "Type": type_, "OP State": state, "Accelerator Core": core,
                "Start Time(us)": f"{T0 + start_us:.3f}\t", "Duration(us)": str(dur_us),
                "Input Shapes": f'"{shapes}"' if shapes else "N/A",
                "Input Data Types": dtypes or "N/A", "Input Formats": formats or "N/A",
                "Output Shapes": "N/A", "Output Data Types": "N/A", "Output Formats": "N/A",
                "Context ID": "N/A", "aiv_vec_ratio": str(vec), "aiv_mte2_ratio": str(mte2),
                "aiv_mte3_ratio": str(mte3)})
    return row


def profile(tmp_path, rows, api_statistic=None):
    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    text = io.StringIO()
    writer = csv.DictWriter(text, HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (out / "kernel_details.csv").write_text(text.getvalue())
    if api_statistic is not None:
        (out / "api_statistic.csv").write_text(
            "Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n" + api_statistic)
    return out.parent


def advise_on(path, **overrides):
    index = load_trace(str(path), use_cache=False)
    _, tables, iterations = read_overview(index)
    settings = parse_overrides([f"{k.replace('__', '.')}={v}" for k, v in overrides.items()])
    return advise(index, iterations, tables, settings)


def finding(advice, rule):
    found = [f for f in advice.findings if f.rule == rule]
    return found[0] if found else None


# -- shapes not aligned ---------------------------------------------------------------------


def test_the_inner_axis_of_each_matrix_in_bytes():
    # bf16: 32 bytes are 16 elements; 15365 % 16 = 5; the second input's 4096 is aligned.
    assert unaligned_inputs('"8192,15365;8192,4096"', "DT_BF16;DT_BF16", "ND;ND", 32) == [
        "input 0 inner axis 15365 not a multiple of 16 (bf16)"]
    # fp32: 8 elements; 1000 = 125 x 8 is aligned, but not to 512 bytes (128 elements).
    assert unaligned_inputs('"32,1000;1000,4096"', "FLOAT;FLOAT", "FORMAT_ND;FORMAT_ND",
                            32) == []
    assert unaligned_inputs('"32,1000;1000,4096"', "FLOAT;FLOAT", "FORMAT_ND;FORMAT_ND",
                            512) == ["input 0 inner axis 1000 not a multiple of 128 (fp32)"]
    # a private layout pads itself; a bias (1-D) is no matrix
    assert unaligned_inputs('"32,1,224,224,8;121,4,16,8;64"', "FLOAT;FLOAT;FLOAT",
                            "NC1HWC0;FRACTAL_Z;NCHW", 32) == []


def test_unaligned_cube_ops_over_a_hundredth_of_device_time(tmp_path):
    rows = [task("MatMulV3", "AI_CORE", 0, 500, "8192,15365;8192,4096", "DT_BF16;DT_BF16",
                 "ND;ND"),
            task("MatMulV2", "AI_CORE", 600, 200, "81920,4096;8192,512", "DT_BF16;DT_BF16",
                 "ND;ND"),
            task("MatMulV2", "AI_CORE", 900, 100, "32,1000;1000,4096", "FLOAT;FLOAT",
                 "FORMAT_ND;FORMAT_ND"),
            task("Add", "AI_VECTOR_CORE", 1100, 200, "8192,15365;8192,15365",
                 "DT_BF16;DT_BF16", "ND;ND")]  # no cube op: not checked
    f = finding(advise_on(profile(tmp_path, rows)), "unaligned_shapes")
    assert f.time_lost_ns == 500_000 and f.numbers["tasks"] == 1
    assert f.numbers["share_of_device"] == pytest.approx(500 / 1000)
    assert f.numbers["ops"] == [{"type": "MatMulV3", "shapes": "8192,15365;8192,4096",
                                 "dtypes": "DT_BF16;DT_BF16", "count": 1, "total_ns": 500_000,
                                 "why": "input 0 inner axis 15365 not a multiple of 16 (bf16)"}]
    (e,) = f.evidence
    assert e.end_ns - e.start_ns == 500_000 and e.iteration == 3 and "15365" in e.label
    # msprof-analyze's 256 elements (512 bytes of bf16): the fp32 1000 fails too (128 of fp32)
    wide = finding(advise_on(profile(tmp_path / "b", rows), unaligned_shapes__align_bytes=512),
                   "unaligned_shapes")
    assert wide.numbers["tasks"] == 2 and wide.time_lost_ns == 600_000
    # 500 of 100 000 µs is 0.5 %: under min_share
    small = rows[:1] + [task("MatMulV2", "AI_CORE", 600, 99_500, "81920,4096;8192,512",
                             "DT_BF16;DT_BF16", "ND;ND")]
    assert finding(advise_on(profile(tmp_path / "c", small)), "unaligned_shapes") is None


# -- dynamic shapes -------------------------------------------------------------------------


def test_dynamic_shapes_when_no_op_is_static_or_ops_compile_twenty_times(tmp_path):
    rows = [task("MatMulV2", "AI_CORE", 0, 100, "32,4096;4096,4096", "FLOAT;FLOAT"),
            task("MatMulV2", "AI_CORE", 200, 100, "32,1000;1000,4096", "FLOAT;FLOAT"),
            task("Add", "AI_VECTOR_CORE", 400, 10, "32,4096;32,4096", "FLOAT;FLOAT")]
    compiles = "acl,aclopCompileAndExecute,14049.23,19,739.433,63.29,1773.7,0\n" \
               "acl,opCompile,372.94,19,19.628,7.73,47.05,82.71\n"
    f = finding(advise_on(profile(tmp_path, rows, compiles)), "dynamic_shapes")
    assert f.numbers["dynamic_tasks"] == 3 and f.numbers["static_tasks"] == 0
    assert f.numbers["compiles"] == 19 and f.time_lost_ns == 372_940  # opCompile, one window
    assert f.numbers["types"][0] == {"type": "MatMulV2", "shapes": 2, "count": 2,
                                     "total_ns": 200_000}
    assert f.evidence[0].label == "MatMulV2: 2 input shapes, 2 tasks"
    # one static op: not every op is dynamic, and 19 compilations are under 20
    mixed = rows[:2] + [task("Add", "AI_VECTOR_CORE", 400, 10, state="static")]
    assert finding(advise_on(profile(tmp_path / "b", mixed, compiles)),
                   "dynamic_shapes") is None
    twenty = compiles.replace(",19,739", ",20,739")
    f = finding(advise_on(profile(tmp_path / "c", mixed, twenty)), "dynamic_shapes")
    assert f.title == "20 op compilations (aclopCompileAndExecute)"
    no_state = [{**r, "OP State": "N/A"} for r in rows]
    advice = advise_on(profile(tmp_path / "d", no_state))
    assert "no op states to read" in dict(advice.skipped)["dynamic_shapes"]


# -- vector ops bound by a pipe -------------------------------------------------------------


def test_msprof_analyze_vector_bounds():
    p = {"total": 0.9, "vec": 0.7, "mte2": 0.7, "mte3": 0.7}
    assert pipe_bound(0.5, 0.3, 0.1, p) == "vec_mte2_mte3"  # 0.9 together
    assert pipe_bound(0.72, 0.1, 0.05, p) == "vec"
    assert pipe_bound(0.75, 0.1, 0.0, p) == "vec"  # 0.85: not all three
    assert pipe_bound(0.1, 0.75, 0.0, p) == "mte2"  # mte2 is tried before vec
    assert pipe_bound(0.3, 0.3, 0.2, p) == ""


def test_vector_bound_ops_grouped_by_name_and_shapes(tmp_path):
    rows = [task("Add", "AI_VECTOR_CORE", 0, 300, "4096;4096", "FLOAT;FLOAT",
                 vec=0.72, mte2=0.1, mte3=0.05),
            task("Add", "AI_VECTOR_CORE", 400, 100, "4096;4096", "FLOAT;FLOAT",
                 vec=0.68, mte2=0.1, mte3=0.05),  # the group's mean: vec 0.70
            task("Mul", "MIX_AIV", 600, 200, "8,8;8,8", "FLOAT;FLOAT", vec=0.05, mte2=0.8),
            task("Cast", "AI_VECTOR_CORE", 900, 390, "8,8", "FLOAT", vec=0.2, mte2=0.2,
                 mte3=0.2),
            task("Relu", "AI_VECTOR_CORE", 1300, 9, "8,8", "FLOAT", vec=0.95)]  # 0.9 %
    f = finding(advise_on(profile(tmp_path, rows)), "vector_bound")
    assert [(o["type"], o["bound"], o["count"], o["total_ns"]) for o in f.numbers["ops"]] == [
        ("Add", "vec", 2, 400_000), ("Mul", "mte2", 1, 200_000)]
    assert f.numbers["ops"][0]["aiv_vec"] == pytest.approx(0.70)
    assert f.time_lost_ns == 600_000 and f.numbers["tasks"] == 3
    assert f.numbers["share_of_device"] == pytest.approx(600 / 999)
    assert f.evidence[0].label == "Add 4096;4096: vec bound"
    no_counters = [{**r, "aiv_vec_ratio": "0", "aiv_mte2_ratio": "0", "aiv_mte3_ratio": "0"}
                   for r in rows]
    advice = advise_on(profile(tmp_path / "b", no_counters))
    assert "aic_metrics=PipeUtilization" in dict(advice.skipped)["vector_bound"]


# -- fused NPU APIs -------------------------------------------------------------------------


def test_op_sequences_a_fused_api_replaces():
    rms = ["to", "pow", "mean", "add", "rsqrt", "mul", "type_as", "linear"]
    assert ("torch_npu.npu_rms_norm", 1, 6) in [(a, f, n) for a, _, f, n in fused_matches(rms)]
    rotary = ["chunk", "neg", "cat", "mul", "mul", "add"]
    assert [(a, f, n) for a, _, f, n in fused_matches(rotary)
            if a == "torch_npu.npu_rotary_mul"] == [("torch_npu.npu_rotary_mul", 0, 6)]
    assert fused_matches(["neg", "mul", "cat"]) == []
    # a name that only ends like a pattern's op is not that op
    assert fused_matches(["my_gelu"]) == []


def test_fused_ops_from_the_outermost_host_ops_and_the_optimizer(tmp_path):
    def step(at, _):
        return [x("aten::pow", at + 10, 5), x("aten::mean", at + 20, 5),
                x("aten::add", at + 30, 5), x("aten::rsqrt", at + 40, 5),
                x("aten::mul", at + 41, 2),  # inside rsqrt: not a call of its own
                x("aten::mul", at + 50, 5),
                x("Optimizer.step#AdamW.step", at + 100, 300, cat="python_function"),
                x("aten::matmul", at + 500, 10)]

    events = []
    for i in range(3):
        events.append(x(f"ProfilerStep#{i + 1}", i * 1000, 1000, cat="user_annotation"))
        events += step(i * 1000, i + 1)
    index = load(write_trace(tmp_path / "t.json", events))
    advice = advise(index, find_iterations(index), ())
    f = finding(advice, "fused_ops")
    # steps 2 and 3 are considered (the first is a warm-up): per step, one rms norm (10..55:
    # 45 µs) and one AdamW step (300 µs)
    assert {(m["replacement"], m["count"], m["host_ns"]) for m in f.numbers["matches"]} == {
        ("torch_npu.npu_rms_norm", 2, 90_000), ("torch_npu.optim.NpuFusedAdamW", 2, 600_000)}
    assert f.time_lost_ns == 345_000
    assert {e.iteration for e in f.evidence} == {2, 3}
    assert "pow > mean > add > rsqrt > mul -> torch_npu.npu_rms_norm" in {
        e.label for e in f.evidence}
    plain = [x("ProfilerStep#1", 0, 1000, cat="user_annotation"), x("aten::matmul", 10, 5)]
    index = load(write_trace(tmp_path / "u.json", plain))
    assert finding(advise(index, find_iterations(index), ()), "fused_ops") is None


# -- AI CPU ops and their input dtypes ------------------------------------------------------


def test_ai_cpu_ops_name_their_input_dtypes(tmp_path):
    rows = [task("Cast", "AI_CPU", 0, 120, "1024", "DOUBLE", name="aclnnCast_CastAiCpu_Cast"),
            task("Cast", "AI_CPU", 200, 30, "1024", "DOUBLE", name="aclnnCast_CastAiCpu_Cast"),
            task("Index", "AI_CPU", 300, 25, "8;8", "INT64;UINT64"),
            task("MatMulV2", "AI_CORE", 400, 100, "8,16;16,16", "FLOAT16;FLOAT16")]
    f = finding(advise_on(profile(tmp_path, rows)), "ai_cpu")
    assert f.numbers["input_dtypes"] == [
        {"type": "Cast", "names": ["aclnnCast_CastAiCpu_Cast"], "input_dtypes": ["fp64"],
         "count": 2, "total_ns": 150_000, "suspect": ["fp64"]},
        {"type": "Index", "names": ["aclnnIndex"], "input_dtypes": ["int64", "uint64"],
         "count": 1, "total_ns": 25_000, "suspect": ["uint64"]}]
    assert f.evidence[0].label == "aclnnCast_CastAiCpu_Cast (fp64)"
