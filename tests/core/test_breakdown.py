"""The breakdown of a step, on small inline traces whose every number is worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from proftui.core.analysis import activity as act
from proftui.core.analysis.breakdown import breakdown
from proftui.core.analysis.coverage import Coverage, merge
from proftui.core.ops.iterations import find_iterations

from helpers import load, write_trace, x

US = 1000


def flow(n, ts_src, ts_dst, tid_dst, pid=1):
    return [{"ph": "s", "id": n, "ts": ts_src, "pid": pid, "tid": 1, "cat": "ac2g",
             "name": "ac2g"},
            {"ph": "f", "id": n, "ts": ts_dst, "pid": 0, "tid": tid_dst, "cat": "ac2g",
             "name": "ac2g", "bp": "e"}]


def kineto_step() -> list[dict]:
    """One step of 1000 µs: data loading, four launches, a synchronize; on the GPU a matmul,
    an elementwise kernel, an NCCL all-reduce partly under it, a copy under the all-reduce and
    a last kernel after a stretch of idle time."""
    return [
        x("ProfilerStep#1", 0, 1000, cat="user_annotation"),
        x("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 200),
        x("aten::mm", 200, 60), x("cudaLaunchKernel", 210, 10, cat="cuda_runtime"),
        x("aten::add", 260, 40), x("cudaLaunchKernel", 270, 10, cat="cuda_runtime"),
        x("cudaLaunchKernel", 290, 5, cat="cuda_runtime"),
        x("cudaMemcpyAsync", 296, 3, cat="cuda_runtime"),
        x("cudaStreamSynchronize", 650, 300, cat="cuda_runtime"),
        x("cudaLaunchKernel", 955, 5, cat="cuda_runtime"),
        x("volta_sgemm_128x64_nn", 300, 200, pid=0, tid=7, cat="kernel"),
        x("vectorized_elementwise_kernel", 500, 60, pid=0, tid=7, cat="kernel"),
        x("ncclKernel_AllReduce_RING_LL_Sum_float", 540, 160, pid=0, tid=8, cat="kernel"),
        x("Memcpy HtoD (Pageable -> Device)", 600, 20, pid=0, tid=9, cat="gpu_memcpy"),
        x("relu_kernel", 960, 20, pid=0, tid=7, cat="kernel"),
        *flow(1, 210, 300, 7), *flow(2, 270, 500, 7), *flow(3, 290, 540, 8),
        *flow(4, 296, 600, 9), *flow(5, 955, 960, 7),
    ]


def _one(tmp_path, events, name="t.json"):
    index = load(write_trace(tmp_path / name, events))
    found = breakdown(index, find_iterations(index))
    return index, found


def test_every_part_of_a_kineto_step(tmp_path):
    _, found = _one(tmp_path, kineto_step())
    (step,) = found.steps
    d = {k: v // US for k, v in step.device.items() if k.endswith("_ns")}
    assert d == {
        "start_ns": 300, "end_ns": 980, "span_ns": 680, "prepare_ns": 300,
        "compute_ns": 280, "compute_matrix_ns": 200, "compute_vector_ns": 80,
        "compute_ai_cpu_ns": 0, "compute_other_ns": 0,
        "comm_ns": 160, "comm_exposed_ns": 140, "overlapped_ns": 20,
        "memcpy_ns": 20, "memcpy_exposed_ns": 0, "busy_ns": 420, "idle_ns": 260,
        "wait_ns": 250, "host_bound_ns": 5, "idle_other_ns": 5, "free_ns": 260}
    assert (step.device["ops"], step.device["small_ops"]) == (3, 0)
    h = step.host
    assert (h["dataloader_ns"], h["dataloader_exposed_ns"]) == (200 * US, 200 * US)
    assert h["forward_ns"] is None and h["backward_ns"] is None
    assert (h["sync_ns"], h["sync_count"]) == (300 * US, 1)
    assert (h["launch_count"], h["launch_ns"]) == (4, 30 * US)
    # latencies 80, 220, 245 and 0 µs from the end of each launch to its kernel's start
    assert (h["launch_latency_p50_ns"], h["launch_latency_p95_ns"]) == (150 * US, 241250)
    assert step.step_ns == 1000 * US
    shares = step.shares()
    assert shares["comm_exposed"] == pytest.approx(140 / 680)
    assert shares["host_dataloader"] == pytest.approx(0.2)


def test_steps_measured_together_are_each_measured_alone(tmp_path):
    """The steps of a group and its total, measured together (a name's stretches made once
    for all of them, a name or two held at a time), are each step's breakdown on its own."""
    def shifted(k):  # step k + 1, its kernels 7k µs longer
        return [{**e, "ts": e["ts"] + 1000 * k, "name": e["name"].replace("#1", f"#{k + 1}"),
                 **({"id": e["id"] + 10 * k} if "id" in e else {}),
                 **({"dur": e["dur"] + 7 * k} if e.get("cat") == "kernel" else {})}
                for e in kineto_step()]

    index = load(write_trace(tmp_path / "t.json", [e for k in range(3) for e in shifted(k)]))
    items = find_iterations(index).items
    together = breakdown(index, items)
    assert len({b.device["compute_ns"] for b in together.steps}) == 3
    for it, step in zip(items, together.steps):
        assert breakdown(index, [it]).steps[0].to_json() == step.to_json()
    assert breakdown(index, items[:1]).total[0].to_json() != together.total[0].to_json()


def test_device_parts_add_up_to_the_window(tmp_path):
    _, found = _one(tmp_path, kineto_step())
    d = found.steps[0].device
    assert d["compute_ns"] + d["comm_exposed_ns"] + d["memcpy_exposed_ns"] + d["idle_ns"] \
        == d["span_ns"]
    assert d["host_bound_ns"] + d["wait_ns"] + d["idle_other_ns"] == d["idle_ns"]
    assert d["overlapped_ns"] + d["comm_exposed_ns"] == d["comm_ns"]


def test_without_flows_the_step_takes_the_device_work_that_starts_in_it(tmp_path):
    events = [e for e in kineto_step() if e["ph"] == "X"]
    _, found = _one(tmp_path, events)
    d = found.steps[0].device
    assert (d["start_ns"], d["end_ns"]) == (300 * US, 980 * US)
    assert found.steps[0].host["launch_count"] == 0
    assert found.steps[0].host["launch_latency_p50_ns"] is None


def test_a_range_counts_device_time_inside_it_only(tmp_path):
    index = load(write_trace(tmp_path / "t.json", kineto_step()))
    found = breakdown(index, find_iterations(index), window=(400 * US, 600 * US))
    (w,) = found.steps
    assert w.iteration is None and (w.device["start_ns"], w.device["end_ns"]) == (
        400 * US, 600 * US)
    assert w.device["compute_ns"] == 160 * US  # sgemm 400-500, elementwise 500-560
    assert w.device["comm_exposed_ns"] == 40 * US  # 560-600


def test_waits_on_a_stream_are_not_busy_and_ai_cpu_is_its_own_kind(tmp_path):
    """msprof tasks: EVENT_WAIT holds a stream without work; an AI CPU op is compute."""
    events = [
        {"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "Ascend Hardware"}},
        {"ph": "M", "name": "thread_name", "pid": 9, "tid": 2, "args": {"name": "Stream 2"}},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Python"}},
        x("ProfilerStep#3", 0, 500),
        x("EVENT_WAIT", 100, 200, pid=9, tid=2, cat=None),
        x("aclnnMatmul_MatMulV3_MatMulV3", 300, 50, pid=9, tid=2, cat=None),
        x("DropOutDoMask_AiCpu", 350, 30, pid=9, tid=2, cat=None),
        x("aclnnAdd_AddAiCore_Add", 380, 20, pid=9, tid=2, cat=None),
    ]
    for e in events:
        if e.get("cat") is None:
            e.pop("cat", None)
    index, found = _one(tmp_path, events)
    kinds = act.activity(index).device_kind
    by_name = {index.slice_name(i): act.DEVICE_KINDS[k] for i, k in enumerate(kinds)}
    assert by_name["EVENT_WAIT"] == "wait"
    assert by_name["DropOutDoMask_AiCpu"] == "ai_cpu"
    assert by_name["aclnnMatmul_MatMulV3_MatMulV3"] == "matrix"
    assert by_name["aclnnAdd_AddAiCore_Add"] == "vector"
    d = found.steps[0].device
    assert (d["start_ns"], d["end_ns"]) == (300 * US, 400 * US)  # the wait does not open it
    assert (d["compute_ai_cpu_ns"], d["busy_ns"], d["idle_ns"]) == (30 * US, 100 * US, 0)


def test_ranks_are_broken_down_apart(tmp_path):
    """A folder of two workers' traces: each rank gets its own step and totals."""
    for rank in (0, 1):
        write_trace(tmp_path / f"host_{rank}.1.pt.trace.json", [
            x("ProfilerStep#1", 0, 100),
            x("sgemm", 10, 40 + 20 * rank, pid=0, tid=7, cat="kernel")],
            distributedInfo={"rank": rank})
    index = load(tmp_path)
    found = breakdown(index, find_iterations(index))
    computed = {b.group: b.device["compute_ns"] for b in found.steps}
    assert len(computed) == 2 and sorted(computed.values()) == [40 * US, 60 * US]
    assert {b.group for b in found.total} == set(computed)


def test_sync_stretches_count_once_however_deeply_nested(tmp_path):
    events = [x("ProfilerStep#1", 0, 100),
              x("aten::item", 10, 30), x("aten::_local_scalar_dense", 11, 28),
              x("cudaStreamSynchronize", 12, 26, cat="cuda_runtime"),
              x("aten::item", 60, 10), x("aten::_local_scalar_dense", 61, 8),
              x("sgemm", 0, 5, pid=0, tid=7, cat="kernel")]
    _, found = _one(tmp_path, events)
    assert (found.steps[0].host["sync_count"], found.steps[0].host["sync_ns"]) == (2, 40 * US)


def _brute(sets, predicate, lo, hi):
    t = np.arange(lo, hi)
    bits = {k: np.zeros(len(t), bool) for k in sets}
    for k, (s, e) in sets.items():
        for a, b in zip(s, e):
            bits[k] |= (t >= a) & (t < b)
    return int(predicate(bits).sum())


def test_coverage_equals_counting_instant_by_instant():
    rng = np.random.default_rng(5)
    for _ in range(30):
        sets = {}
        for name in ("a", "b", "c"):
            start = rng.integers(0, 200, rng.integers(0, 12))
            sets[name] = (start, start + rng.integers(0, 40, len(start)))
        c = Coverage(sets)
        c.define("a_not_b", lambda b: b["a"] & ~b["b"])
        c.define("any", lambda b: b["a"] | b["b"] | b["c"])
        for lo, hi in ((0, 250), (30, 90), (100, 101), (-10, 400)):
            for name, pred in (("a", lambda b: b["a"]), ("a_not_b", lambda b: b["a"] & ~b["b"]),
                               ("any", lambda b: b["a"] | b["b"] | b["c"])):
                assert int(c.measure(name, lo, hi)) == _brute(sets, pred, lo, hi)


def test_merge_drops_empty_intervals_and_joins_touching_ones():
    s, e = merge(np.array([5, 0, 10, 20]), np.array([10, 3, 12, 20]))
    assert s.tolist() == [0, 5] and e.tolist() == [3, 12]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 18])
def test_slices_merged_in_chunks_are_merged_whole(monkeypatch, chunk):
    """merge_slices, a few slices at a time (nested, touching, empty and unsorted ones
    crossing the chunks' edges), is merge of all the slices in the mask at once."""
    from proftui.core.analysis import coverage

    rng = np.random.default_rng(chunk)
    monkeypatch.setattr(coverage, "MERGE_CHUNK", chunk)
    for n in (0, 1, 5, 40, 200):
        start = np.sort(rng.integers(0, 300, n)) if n % 2 else rng.integers(0, 300, n)
        dur = rng.integers(0, 30, n)
        for mask in (np.ones(n, bool), rng.random(n) < 0.5, np.zeros(n, bool)):
            s, e = coverage.merge_slices(start, dur, mask)
            want_s, want_e = merge(start[mask], start[mask] + dur[mask])
            assert s.tolist() == want_s.tolist() and e.tolist() == want_e.tolist()
            assert s.dtype == e.dtype == np.int64


def test_a_trace_without_device_work_has_no_device_part_and_no_device_advice(tmp_path):
    from proftui.core.analysis.advise import advise

    events = [x("ProfilerStep#1", 0, 100), x("aten::mm", 10, 50), x("aten::add", 70, 20)]
    index, found = _one(tmp_path, events)
    assert found.steps[0].device is None and found.total[0].device is None
    assert found.steps[0].host["busy_ns"] == 70 * US
    advice = advise(index, find_iterations(index))
    assert not advice.findings
    assert dict(advice.skipped)["host_bound"] == "no device work in this profile"


def test_two_threads_asking_at_once_build_the_groups_once(tmp_path, monkeypatch):
    """The app's utilisation and insights workers start together on a freshly opened trace."""
    import threading
    import time

    from proftui.core.analysis import breakdown as bd

    index = load(write_trace(tmp_path / "t.json", kineto_step()))
    built = []
    real = bd._build_groups

    def slow(*args):
        built.append(1)
        time.sleep(0.2)
        return real(*args)

    monkeypatch.setattr(bd, "_build_groups", slow)
    results = []
    threads = [threading.Thread(target=lambda: results.append(bd.group_coverage(index)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1 and results[0] is not results[1]
    assert results[0][""] is results[1][""]
