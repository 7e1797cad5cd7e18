"""Which rank is slow, who waits for whom: folders of ranks written inline, every number worked
out by hand (µs in the traces, ns in the answers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cluster_inputs import meta, rank_folders, x

from proftui.core.analysis.cluster import HCCL_NAME, cluster, match_collectives
from proftui.core.analysis.overview import read_overview

from helpers import load, write_trace

US = 1000
# Per rank and step (1, 2, 3): the matmul's length and the gap after it before the
# all-reduce starts; rank 2 ends each step 30 µs later (a host tail).
COMPUTE = {0: [100, 100, 100], 1: [500, 150, 130], 2: [100, 100, 100]}
GAP = {0: [0, 10, 10], 1: [0, 0, 0], 2: [0, 5, 5]}
TAIL = {0: 0, 1: 0, 2: 30}
TRANSFER = 20


def npu_rank(root, rank, steps, drop=()):
    """A torch_npu rank dir: steps of (start µs, matmul µs, gap µs, all-reduce start µs,
    all-reduce end µs, step end µs); all-reduce k of group 123 is hcom_allReduce__123_k_1,
    left out for the k in `drop`."""
    out = root / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    events = (meta(1, "Python", 1, "Thread 1") + meta(2, "Ascend Hardware", 3, "Stream 3")
              + meta(4, "HCCL", 5, "Group 0 Communication"))
    for n, (start, matmul, _, comm_start, comm_end, end) in enumerate(steps):
        events += [x(f"ProfilerStep#{n + 1}", start, end - start, 1, 1, "cpu_op"),
                   x("aclnnMatmul_MatMulV3_MatMulV3", start + 10, matmul, 2, 3)]
        if n not in drop:
            events.append(x(f"hcom_allReduce__123_{n}_1", comm_start, comm_end - comm_start,
                            4, 5))
    write_trace(out / "trace_view.json", events, wrapper=False)


def three_ranks(root):
    """Three ranks, three steps 1000 µs apart: each all-reduce ends TRANSFER after the last
    rank arrives, and each step 10 µs (plus the rank's tail) after that."""
    arrivals = {r: [1000 * n + 10 + COMPUTE[r][n] + GAP[r][n] for n in range(3)]
                for r in COMPUTE}
    ends = [max(arrivals[r][n] for r in COMPUTE) + TRANSFER for n in range(3)]
    for r in COMPUTE:
        npu_rank(root, r, [(1000 * n, COMPUTE[r][n], GAP[r][n], arrivals[r][n], ends[n],
                            ends[n] + 10 + TAIL[r]) for n in range(3)])
    return root


def opened(root, **kw):
    index = load(root)
    _, tables, iterations = read_overview(index)
    return cluster(index, iterations, tables, **kw)


def test_steps_medians_spread_and_the_slowest_with_the_warm_up_left_out(tmp_path):
    found = opened(three_ranks(tmp_path))
    assert [r.rank for r in found.ranks] == ["rank 0", "rank 1", "rank 2"]
    r0, r1, r2 = found.ranks
    # step 2 of rank 0: the all-reduce 120..180 µs of the step, the device window 10..180
    assert [(s.iteration, s.step_ns, s.compute_ns, s.comm_exposed_ns, s.free_ns, s.warmup)
            for s in r0.steps] == [(1, 540 * US, 100 * US, 420 * US, 0, True),
                                   (2, 190 * US, 100 * US, 60 * US, 10 * US, False),
                                   (3, 170 * US, 100 * US, 40 * US, 10 * US, False)]
    assert r0.median == {"step_ns": 180 * US, "compute_ns": 100 * US,
                         "comm_exposed_ns": 50 * US, "free_ns": 10 * US}
    assert r1.median == {"step_ns": 180 * US, "compute_ns": 140 * US,
                         "comm_exposed_ns": 20 * US, "free_ns": 0}
    assert r2.median == {"step_ns": 210 * US, "compute_ns": 100 * US,
                         "comm_exposed_ns": 55 * US, "free_ns": 5 * US}
    # the warm-up step of rank 2 (570 µs) is longer, but left out
    assert found.slowest == ("rank 2", 2, 220 * US)
    assert found.spread == pytest.approx(30 / 190)
    # rank 2's steps are the longest, yet rank 1 is the one that works longer
    assert [(f.rule, f.group) for f in found.slow_rank] == [("slow_rank", "rank 1")]
    assert found.source == "ProfilerStep#N annotations"


def test_collectives_matched_by_hccl_name_skew_wait_transfer_and_who_waits(tmp_path):
    found = opened(three_ranks(tmp_path))
    c = found.collectives
    assert c.matched_by == "hccl_name" and not c.unmatched
    assert c.count == {"rank 0": 3, "rank 1": 3, "rank 2": 3}
    # by skew: the warm-up's 400 µs, then step 2's 45 µs and step 3's 25 µs
    assert [(i.name, i.group, i.sequence, i.iteration, i.warmup, i.skew_ns, i.last_rank)
            for i in c.instances] == [
        ("hcom_allReduce__123_0_1", "123", 0, 1, True, 400 * US, "rank 1"),
        ("hcom_allReduce__123_1_1", "123", 1, 2, False, 45 * US, "rank 1"),
        ("hcom_allReduce__123_2_1", "123", 2, 3, False, 25 * US, "rank 1")]
    step2 = c.instances[1].per_rank
    assert {r: (a.start_ns, a.wait_ns, a.transfer_ns) for r, a in step2.items()} == {
        "rank 0": (1120 * US, 40 * US, 20 * US), "rank 1": (1160 * US, 0, 20 * US),
        "rank 2": (1115 * US, 45 * US, 20 * US)}
    # totals leave the warm-up's collective out
    assert found.last_arrivals == {"rank 0": 0, "rank 1": 2, "rank 2": 0}
    assert found.wait_ns == {"rank 0": 60 * US, "rank 1": 0, "rank 2": 70 * US}
    assert found.waits_for == {"rank 0": {"rank 1": 60 * US}, "rank 2": {"rank 1": 70 * US}}


def test_one_iteration_alone(tmp_path):
    found = opened(three_ranks(tmp_path), number=3)
    assert [[s.iteration for s in r.steps] for r in found.ranks] == [[3], [3], [3]]
    assert [r.median["step_ns"] for r in found.ranks] == [170 * US, 170 * US, 200 * US]
    assert [i.sequence for i in found.collectives.instances] == [2]
    assert found.wait_ns == {"rank 0": 20 * US, "rank 1": 0, "rank 2": 25 * US}
    assert found.slowest == ("rank 2", 3, 200 * US)


def test_a_collective_missing_on_a_rank_is_counted_unmatched(tmp_path):
    steps = [(0, 100, 0, 110, 200, 210), (1000, 100, 0, 1110, 1200, 1210),
             (2000, 100, 0, 2110, 2200, 2210)]
    npu_rank(tmp_path, 0, steps)
    npu_rank(tmp_path, 1, [(a, b, c, d + 7, e, f) for a, b, c, d, e, f in steps], drop=(1,))
    found = opened(tmp_path)
    c = found.collectives
    assert c.count == {"rank 0": 3, "rank 1": 2}
    assert [(u.name, u.sequence, u.iteration, u.ranks, u.missing) for u in c.unmatched] == [
        ("hcom_allReduce__123_1_1", 1, 2, ["rank 0"], ["rank 1"])]
    assert [(i.sequence, i.skew_ns, i.last_rank) for i in c.instances] == [
        (0, 7 * US, "rank 1"), (2, 7 * US, "rank 1")]
    data = found.to_json()["collectives"]
    assert data["unmatched"]["count"] == 1 and data["matched"] == 2


def test_hccl_names_carry_the_group_and_its_index():
    m = HCCL_NAME.match("hcom_allReduce__586_0_1")
    assert m and (m.group(1), m.group(2), m.group(3)) == ("hcom_allReduce", "586", "0")
    m = HCCL_NAME.match("hcom_allGather_AicpuKernel_503_483_1")
    assert m and (m.group(1), m.group(2), m.group(3)) == ("hcom_allGather_AicpuKernel", "503",
                                                          "483")
    assert HCCL_NAME.match("hcom_allReduce_") is None  # the host's name: no ordinals


# -- NCCL: by args, by the launching record_param_comms, else by order --------------------------


def k(name, ts, dur, args=None):
    event = x(name, ts, dur, 0, 7, "kernel")
    if args is not None:
        event["args"] = args
    return event


def kineto_rank(root, rank, events, step=True):
    (root / f"rank{rank}").mkdir(parents=True)
    marks = [x("ProfilerStep#1", 0, 1000, 1, 1, "user_annotation")] if step else []
    write_trace(root / f"rank{rank}" / "worker.pt.trace.json", [*marks, *events],
                distributedInfo={"rank": rank})


NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def pg(seq):
    return {"Process Group Name": "0", "Collective name": "allreduce", "Seq": seq}


def test_nccl_kernels_are_matched_by_their_sequence_number_not_their_order(tmp_path):
    """Rank 1's capture misses collective 5: by order its 6 would pair with rank 0's 5."""
    kineto_rank(tmp_path, 0, [k(NCCL, 100, 50, pg(5)), k(NCCL, 300, 50, pg(6))])
    kineto_rank(tmp_path, 1, [k(NCCL, 330, 20, pg(6))])
    index = load(tmp_path)
    c = match_collectives(index)
    assert c.matched_by == "nccl_args"
    [inst] = c.instances
    assert (inst.name, inst.group, inst.sequence, inst.skew_ns, inst.last_rank) == (
        "allreduce", "0", 6, 30 * US, "rank 1")
    assert inst.per_rank["rank 0"].wait_ns == 30 * US
    assert inst.per_rank["rank 0"].transfer_ns == 20 * US
    assert [(u.sequence, u.missing) for u in c.unmatched] == [(5, ["rank 1"])]


def test_nccl_args_of_the_launching_record_param_comms(tmp_path):
    """Kernels without args: the record_param_comms op around their launch names them."""
    def rank_events(at, seq):
        return [x("record_param_comms", at - 40, 30, 1, 1, "cpu_op") | {"args": pg(seq)},
                x("cudaLaunchKernel", at - 30, 10, 1, 1, "cuda_runtime"),
                {"ph": "s", "id": seq, "ts": at - 25, "pid": 1, "tid": 1, "cat": "ac2g",
                 "name": "ac2g"},
                {"ph": "f", "id": seq, "ts": at, "pid": 0, "tid": 7, "cat": "ac2g",
                 "name": "ac2g", "bp": "e"},
                k(NCCL, at, 100)]
    kineto_rank(tmp_path, 0, rank_events(200, 3) + rank_events(600, 4))
    kineto_rank(tmp_path, 1, rank_events(640, 4))
    c = match_collectives(load(tmp_path))
    assert c.matched_by == "nccl_args"
    assert [(i.sequence, i.skew_ns) for i in c.instances] == [(4, 40 * US)]
    assert [u.sequence for u in c.unmatched] == [3]


def test_without_args_the_kth_collective_of_a_name_is_matched_in_order(tmp_path):
    kineto_rank(tmp_path, 0, [k(NCCL, 100, 50), k(NCCL, 300, 50)])
    kineto_rank(tmp_path, 1, [k(NCCL, 110, 40), k(NCCL, 320, 30), k(NCCL, 500, 30)])
    c = match_collectives(load(tmp_path))
    assert c.matched_by == "order"
    assert [(i.sequence, i.skew_ns, i.last_rank) for i in c.instances] == [
        (1, 20 * US, "rank 1"), (0, 10 * US, "rank 1")]
    assert [(u.sequence, u.ranks, u.missing) for u in c.unmatched] == [
        (2, ["rank 1"], ["rank 0"])]


def test_one_rank_has_nothing_to_match(tmp_path):
    kineto_rank(tmp_path, 0, [k(NCCL, 100, 50), k("sgemm", 200, 100)])
    index = load(tmp_path)
    _, tables, iterations = read_overview(index)
    found = cluster(index, iterations, tables)
    assert len(found.ranks) == 1 and found.ranks[0].steps[0].step_ns == 1000 * US
    assert found.collectives.instances == [] and found.collectives.unmatched == []
    assert found.spread is None and found.slow_rank == []
    assert found.slowest == (found.ranks[0].rank, 1, 1000 * US)


def test_ranks_without_steps_are_their_whole_capture_and_every_collective_counts(tmp_path):
    kineto_rank(tmp_path, 0, [k("sgemm", 0, 100), k(NCCL, 100, 50)], step=False)
    kineto_rank(tmp_path, 1, [k("sgemm", 0, 130), k(NCCL, 130, 20)], step=False)
    found = opened(tmp_path)
    assert [[(s.iteration, s.step_ns, s.compute_ns, s.warmup) for s in r.steps]
            for r in found.ranks] == [[(None, 150 * US, 100 * US, False)],
                                      [(None, 150 * US, 130 * US, False)]]
    assert found.slowest == ("rank 0", None, 150 * US) and found.spread == 0.0
    [inst] = found.collectives.instances
    assert (inst.iteration, inst.warmup, inst.skew_ns) == (None, False, 30 * US)
    assert found.last_arrivals == {"rank 0": 0, "rank 1": 1}
    assert found.wait_ns == {"rank 0": 30 * US, "rank 1": 0}


def test_ops_of_each_ranks_own_window_add_up_to_each_rank_alone(tmp_path):
    """aggregate_ops with a window per rank equals each rank's ops in its own window."""
    from proftui.core.ops.aggregate import aggregate_ops

    index = load(Path(rank_folders(tmp_path, [[110, 140, 120], [160, 110, 110]])))
    tracks = {g: [t for t in range(index.n_tracks)
                  if index.strings[index.arrays["processes.group"][
                      index.arrays["tracks.process"][t]]] == g] for g in ("rank 0", "rank 1")}
    t0 = int(index.start_ns)
    # rank 0: its step 2 (1000 to 1200 µs); rank 1: from 1050 µs into its step 2
    windows = {"rank 0": (t0 + 1_000_000, t0 + 1_200_000),
               "rank 1": (t0 + 1_050_000, t0 + 1_210_000)}
    both = aggregate_ops(index, groups=windows)
    alone = [aggregate_ops(index, start_ns=lo, end_ns=hi, tracks=tracks[g])
             for g, (lo, hi) in windows.items()]

    def rows(table):
        cols = [table.find(c).values for c in ("Name", "Count", "Total", "Self")]
        return {n: (c, t, s) for n, c, t, s in zip(*cols)}

    a, b = rows(alone[0]), rows(alone[1])
    expected = {n: tuple(x + y for x, y in zip(a.get(n, (0, 0, 0)), b.get(n, (0, 0, 0))))
                for n in a.keys() | b.keys()}
    assert rows(both) == expected
    # MatMulV3 (100 µs at 10 µs into the step): whole on rank 0; on rank 1 it ran 1010 to
    # 1110 µs, so 60 µs of it are inside its window
    assert expected["MatMulV3"] == (2, 160_000, 160_000)
    window = dict(zip(both.find("Name").values, both.find("Window(%)").values))
    assert window["MatMulV3"] == pytest.approx(160 / (200 + 160) * 100)
    # a group no window names is left out; the scalar window is then ignored
    only = aggregate_ops(index, groups={"rank 1": windows["rank 1"]})
    assert rows(only) == b
