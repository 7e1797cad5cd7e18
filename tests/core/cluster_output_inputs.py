"""A folder of two ranks with HCCL's communication summaries and msprof-analyze's
cluster_analysis_output, written in the test with the exact file names, headers and keys
msprof-analyze 26.2.0 (``msprof-analyze cluster -d DIR -m all``) wrote for torch_npu_2rank.

Timelines (:func:`cluster_inputs.rank_folders`, arrivals 150 and 160 µs): three steps a rank;
per step rank 0 computes 100 µs, all-reduces from 150 to 180 µs (30 µs exposed), is free
40 µs (device span 10 .. 180 µs); rank 1: 100, 20 (160 .. 180) and 50 µs.

Communication, step 1, group G, one all-reduce a rank:
- rank 0: elapse 0.03 ms, transit 0.02 ms, wait 0.01 ms, sync 0, idle 0; HCCS (and SDMA)
  40 MB in 2 ms (20 GB/s).
- rank 1: elapse 0.02 ms, transit 0.02 ms, wait 0, sync 0, idle 0; HCCS (and SDMA) 40 MB in
  4 ms (10 GB/s).
Matrices (allreduce-total; allgather-total on rank 0): rank 0: 0-0 LOCAL 40 MB in 0.1 ms,
0-1 HCCS 10 MB in 0.5 ms, allgather 0-1 HCCS 10 MB in 0.5 ms (0 -> 1: 20 MB in 1 ms,
20 GB/s); rank 1: 1-1 LOCAL 40 MB in 0.1 ms, 1-0 HCCS 10 MB in 1 ms (10 GB/s), 1-2 HCCS 10 MB
in 0.5 ms (20 GB/s; local 2 is no rank of the profile). HCCS links: 20, 10, 20 GB/s, median
20: 1 -> 0 is under 0.8 x 20 = 16 GB/s, slow.
"""

from __future__ import annotations

import json
from pathlib import Path

from cluster_inputs import rank_folders

GROUP = "9000000000000000123"
OP = "hcom_allReduce__123_0_1"
STEP_TRACE_HEADER = ("Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,"
                     "Communication,Free,Stage,Bubble,Communication(Not Overlapped and "
                     "Exclude Receive),Preparing\n")


def bandwidth_info(size_mb: float, ms: float, gbps: float) -> dict:
    used = {"Transit Size(MB)": size_mb, "Transit Time(ms)": ms, "Bandwidth(GB/s)": gbps,
            "Large Packet Ratio": 0.0, "Size Distribution": {str(size_mb): [1, ms]}}
    zero = {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
            "Large Packet Ratio": 0, "Size Distribution": {}}
    return {"RDMA": zero, "HCCS": used, "PCIE": zero,
            "SDMA": {**used, "Size Distribution": {}}, "SIO": zero}


def op_entry(times: tuple, hccs: tuple, start_us: float | None = 1000.0) -> dict:
    elapse, transit, wait, sync, idle = times
    info = {"Elapse Time(ms)": elapse, "Transit Time(ms)": transit, "Wait Time(ms)": wait,
            "Synchronization Time(ms)": sync, "Idle Time(ms)": idle}
    if start_us is not None:
        info = {"Start Timestamp(us)": start_us, **info}
    return {"Communication Time Info": info,
            "Communication Bandwidth Info": bandwidth_info(*hccs)}


RANK_OPS = {0: ((0.03, 0.02, 0.01, 0, 0), (40.0, 2.0, 20.0)),
            1: ((0.02, 0.02, 0, 0, 0), (40.0, 4.0, 10.0))}


def link(transport: str, size: float, ms: float, gbps: float) -> dict:
    return {"Transport Type": transport, "Transit Size(MB)": size, "Transit Time(ms)": ms,
            "Bandwidth(GB/s)": gbps}


RANK_MATRIX = {
    0: {f"allreduce-total@{GROUP}": {"0-0": link("LOCAL", 40, 0.1, 400.0),
                                     "0-1": link("HCCS", 10, 0.5, 20.0)},
        f"allgather-total@{GROUP}": {"0-1": link("HCCS", 10, 0.5, 20.0)}},
    1: {f"allreduce-total@{GROUP}": {"1-1": link("LOCAL", 40, 0.1, 400.0),
                                     "1-0": link("HCCS", 10, 1.0, 10.0),
                                     "1-2": link("HCCS", 10, 0.5, 20.0)}},
}


def write_ranks(root: Path) -> Path:
    """The two ranks' timelines and communication summaries."""
    rank_folders(root, [[150, 150, 150], [160, 160, 160]])
    for rank, (times, hccs) in RANK_OPS.items():
        out = root / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        (out / "communication.json").write_text(json.dumps({"step1": {"p2p": {}, "collective": {
            f"{OP}@{GROUP}": op_entry(times, hccs)}}}))
        (out / "communication_matrix.json").write_text(json.dumps(
            {"step1": {"p2p": {}, "collective": RANK_MATRIX[rank]}}))
    return root


def write_cluster_output(root: Path, free_us_rank1: float = 50.0,
                         total_transit_ms_rank1: float = 0.02) -> Path:
    """cluster_analysis_output as msprof-analyze writes it for the ranks above; rank 1's
    Free and Total Op Info transit time may be given other values (to differ)."""
    out = root / "cluster_analysis_output"
    out.mkdir()
    (out / "cluster_step_trace_time.csv").write_text(
        STEP_TRACE_HEADER
        + "".join(f"{n},rank,0,100.0,30.0,0.0,30.0,40.0,170.0,0.0,30.0,0\n"
                  for n in (1, 2, 3))
        + "".join(f"{n},rank,1,100.0,20.0,0.0,20.0,{free_us_rank1},170.0,0.0,20.0,0\n"
                  for n in (1, 2, 3)))
    totals = {}
    for rank, (times, hccs) in RANK_OPS.items():
        if rank == 1:
            times = (times[0], total_transit_ms_rank1, *times[2:])
        total = op_entry(times, hccs, start_us=None)
        for info in total["Communication Bandwidth Info"].values():
            info.pop("Large Packet Ratio", None)  # msprof-analyze's totals have none
        totals[str(rank)] = total
    (out / "cluster_communication.json").write_text(json.dumps({"(0, 1)": {"step1": {
        f"{OP}@{GROUP}": {str(r): op_entry(*RANK_OPS[r]) for r in RANK_OPS},
        f"Total Op Info@{GROUP}": totals}}}))
    mapped = {"0-0": link("LOCAL", 40, 0.1, 400.0), "0-1": link("HCCS", 10, 0.5, 20.0),
              "1-1": link("LOCAL", 40, 0.1, 400.0), "1-0": link("HCCS", 10, 1.0, 10.0)}
    (out / "cluster_communication_matrix.json").write_text(json.dumps({"(0, 1)": {"step1": {
        f"allreduce-total@{GROUP}": {k: {**v, "Op Name": ""} for k, v in mapped.items()},
        f"allgather-total@{GROUP}": {"0-1": {**link("HCCS", 10, 0.5, 20.0), "Op Name": ""}},
        f"Total Op Info@{GROUP}": mapped}}}))
    (out / "communication_group.json").write_text(json.dumps(
        {"collective": [[0, 1]], "p2p": [], "comm_group_parallel_info": [
            {"type": "collective", "rank_set": [0, 1], "group_name": GROUP, "group_id": "",
             "pg_name": ""}]}))
    return out
