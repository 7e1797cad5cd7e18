#!/usr/bin/env python3
"""Deterministic generator of large, realistic summary CSVs: kernel_details.csv (torch_npu,
2025 header) and op_summary_*.csv (msprof, CANN 8.5 header), as ../shared/FORMATS.md gives them.

Rows cycle through a few dozen kernel kinds (MatMul, Conv2D, TransData, HCCL all-reduce,
AI CPU ops ...) with their own shapes, dtypes and formats; start times are epoch µs with three
decimals and the trailing TAB msprof writes (quoted in kernel_details, as torch_npu quotes
it), shapes are in doubled quotes as torch_npu writes them, and cells a kind lacks are N/A,
as in the corpus. Used by bench_tables.py; also a script:

    python bench/gen_tables.py --mb 128 --kind kernel_details -o /tmp/kernel_details.csv
"""

from __future__ import annotations

import argparse
import random

KERNEL_DETAILS = (
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
    "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,"
    "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,"
    "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
    "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),"
    "aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,"
    "aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,"
    "cube_utilization(%)")
OP_SUMMARY = (
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
    "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,"
    "HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
    "Output Formats,Context ID" + KERNEL_DETAILS[KERNEL_DETAILS.index(",aicore_time(us)"):])
HEADERS = {"kernel_details": KERNEL_DETAILS, "op_summary": OP_SUMMARY}

# (name, type, core, input shapes, input dtypes, input formats, output shapes, ...)
_KINDS = [
    ("aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", "4096,1024;1024,4096",
     "FLOAT16;FLOAT16", "ND;ND", "4096,4096", "FLOAT16", "ND"),
    ("Conv2D{n}", "Conv2D", "AI_CORE", "32,4,56,56,16;64,4,16,16", "FLOAT16;FLOAT16",
     "NC1HWC0;FRACTAL_Z", "32,4,56,56,16", "FLOAT16", "NC1HWC0"),
    ("Conv2DBackpropFilter{n}", "Conv2DBackpropFilter", "AI_CORE", "32,4,56,56,16;4",
     "FLOAT16;INT32", "NC1HWC0;ND", "64,4,16,16", "FLOAT", "FRACTAL_Z"),
    ("trans_TransData_{n}", "TransData", "AI_VECTOR_CORE", "32,3,224,224", "FLOAT", "NCHW",
     "32,1,224,224,8", "FLOAT", "NC1HWC0"),
    ("aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", "32,4096;32,4096", "FLOAT;FLOAT",
     "ND;ND", "32,4096", "FLOAT", "ND"),
    ("aclnnMul_MulAiCore_Mul", "Mul", "AI_VECTOR_CORE", "32,4096;1", "FLOAT;FLOAT", "ND;ND",
     "32,4096", "FLOAT", "ND"),
    ("aclnnReluGrad_ReluGradAiCore_ReluGrad", "ReluGrad", "AI_VECTOR_CORE",
     "32,4,56,56,16;32,4,56,56,16", "FLOAT16;FLOAT16", "NC1HWC0;NC1HWC0", "32,4,56,56,16",
     "FLOAT16", "NC1HWC0"),
    ("aclnnSoftmax_SoftmaxV2AiCore_SoftmaxV2", "SoftmaxV2", "AI_VECTOR_CORE", "32,12,512,512",
     "FLOAT16", "ND", "32,12,512,512", "FLOAT16", "ND"),
    ("aclnnLayerNorm_LayerNormV3_LayerNormV3", "LayerNormV3", "MIX_AIV", "32,512,1024;1024",
     "FLOAT16;FLOAT16", "ND;ND", "32,512,1024;32,512,1", "FLOAT16;FLOAT", "ND;ND"),
    ("aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore",
     "FlashAttentionScore", "MIX_AIC", "32,512,1024;32,512,1024;32,512,1024", "BF16;BF16;BF16",
     "ND;ND;ND", "32,512,1024", "BF16", "ND"),
    ("DropOutDoMask", "DropOutDoMask", "AI_CPU", "32,4096;524288;1", "FLOAT;UINT8;FLOAT",
     "ND;ND;ND", "32,4096", "FLOAT", "ND"),
    ("hcom_allReduce__{g}_{n}_1", "hcom_allReduce_", "HCCL", "", "", "", "", "", ""),
    ("MemSet", "MemSet", "AI_VECTOR_CORE", "4096", "FLOAT", "ND", "4096", "FLOAT", "ND"),
    ("aclnnInplaceCopy_TensorMove_TensorMove", "TensorMove", "AI_VECTOR_CORE", "1024,1024",
     "BF16", "ND", "1024,1024", "BF16", "ND"),
    ("EVENT_WAIT", "EVENT_WAIT", "EVENT", "", "", "", "", "", ""),
    ("aclnnCast_CastAiCore_Cast", "Cast", "AI_VECTOR_CORE", "32,1024", "FLOAT16", "ND",
     "32,1024", "FLOAT", "ND"),
]


def _fmt(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") or "0"


def generate(path: str, target_bytes: int, kind: str = "kernel_details", seed: int = 7) -> int:
    """Write about `target_bytes` of a `kind` CSV to `path`; returns the number of rows."""
    rng = random.Random(seed)
    header = HEADERS[kind]
    start_us = 1_736_408_883_704_643_212  # ns, as the text of a 2025 capture
    rows = 0
    written = 0
    with open(path, "w", newline="") as f:
        f.write(header + "\n")
        written += len(header) + 1
        lines: list[str] = []
        while written < target_bytes:
            name, type_, core, ishape, idtype, ifmt, oshape, odtype, ofmt = rng.choice(_KINDS)
            name = name.format(n=rng.randrange(40), g=rng.choice((586, 912)))
            dur = rng.lognormvariate(2.5, 1.4)
            wait = rng.expovariate(1 / 20) if rng.random() < 0.7 else 0.0
            start_us += int((dur + wait) * 1000) + rng.randrange(1000)
            stamp = f"{start_us // 1000}.{start_us % 1000:03d}\t"
            quoted_stamp = f'"{stamp}"' if kind == "kernel_details" else stamp
            cube = core in ("AI_CORE", "MIX_AIC")
            vec = core in ("AI_VECTOR_CORE", "MIX_AIV", "MIX_AIC")
            na = "N/A"
            shapes = [f'"""{s}"""' if s else na for s in (ishape, oshape)]
            metrics = []
            for present, count in ((cube, 13), (vec, 11)):
                for m in range(count):
                    if not present:
                        metrics.append(na if core in ("HCCL", "EVENT", "AI_CPU") else "0")
                    elif m == 1:
                        metrics.append(str(int(dur * 1800 * rng.random())))
                    elif m % 2 == 0:
                        metrics.append(_fmt(dur * rng.random()))
                    else:
                        metrics.append(_fmt(rng.random()))
            lead = (["50"] if kind == "kernel_details" else ["0"]) + ["4294967295"]
            cells = lead + [
                str(rows % 60000), str(rng.choice((2, 3, 8))), name, type_,
                "dynamic" if core not in ("HCCL", "EVENT") else na, core, quoted_stamp,
                _fmt(dur), _fmt(wait), str(rng.choice((1, 8, 16, 24, 32, 48))),
                "0" if core.startswith("MIX") else na, rng.choice(("NO", "YES", na)),
                shapes[0], idtype or na, ifmt or na, shapes[1], odtype or na, ofmt or na,
                "0" if core.startswith("MIX") else na, *metrics,
                _fmt(100 * rng.random()) if cube else "0"]
            line = ",".join(cells) + "\n"
            lines.append(line)
            written += len(line)
            rows += 1
            if len(lines) >= 4096:
                f.write("".join(lines))
                lines.clear()
        f.write("".join(lines))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=128, help="size in MB (10**6 bytes)")
    parser.add_argument("--kind", choices=sorted(HEADERS), default="kernel_details")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-o", "--out", required=True)
    args = parser.parse_args()
    rows = generate(args.out, int(args.mb * 1e6), args.kind, args.seed)
    print(f"{args.out}: {rows} rows")


if __name__ == "__main__":
    main()
