"""A two-rank torch_npu sample for samples/make_samples.py: samples/cluster_2rank.

Two ranks of one data-parallel job (a two-layer MLP, four steps), one `rankN_ascend_pt` each,
laid out as the corpus job torch_npu_2rank: profiler_info_N.json, profiler_metadata.json and
ASCEND_PROFILER_OUTPUT with trace_view.json (the torch ops, their CANN calls, the tasks of the
"Ascend Hardware" streams, the all-reduces on HCCL's "Group 0 Communication" track with their
tasks on "Plane 0", msprof's Overlap Analysis), kernel_details.csv, op_statistic.csv,
step_trace_time.csv (from the same intervals as the timeline), communication.json and
communication_matrix.json. Connection ids count per rank, as torch_npu's do, so the two ranks
share flow ids.

Its story: in step 3 rank 1's NonZero, an AI CPU op whose time follows the data, runs 4.2 ms
instead of 0.1, so rank 0 waits that long at the first all-reduce of the step; and rank 1's
HCCS link to rank 0 runs at about half the bandwidth of the other direction, so every
all-reduce takes about twice as long as it should.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from ascend_samples import _ns_text, _op_statistic, _write_csv

US = 1_000  # ns
CLUSTER_BASE_NS = 1_767_268_800_000_000_000  # 2026-01-01 12:00:00 UTC
CLUSTER_STEPS = (1, 2, 3, 4)
STRAGGLER = (1, 3, 4_200 * US)  # rank 1's NonZero in step 3 runs 4.2 ms on the AI CPU
GROUP_HASH = "8263115900419723586"  # HCCL names its ops by the hash's last three digits
HCCS_GBPS = {0: 18.4, 1: 9.6}  # each rank's HCCS link to the other (GB/s = bytes a ns)
LOCAL_GBPS = 450.0
STREAM, COMM_STREAM = 2, 4
NO_MODEL = 4294967295
# (torch op, device op as the trace names it, OP Type, Accelerator Core, µs, input shapes,
# output shapes) of a two-layer MLP's forward and backward; DDP starts an all-reduce after
# each of the two groups of backward ops (its gradient buckets, of BUCKETS bytes).
FORWARD_BACKWARD = [
    [("aten::linear", "aclnnMm_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", 1150,
      "8192,1024;1024,4096", "8192,4096"),
     ("aten::gelu", "aclnnGelu_GeluAiCore_Gelu", "Gelu", "AI_VECTOR_CORE", 180, "8192,4096",
      "8192,4096"),
     ("aten::linear", "aclnnMm_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", 1100,
      "8192,4096;4096,1024", "8192,1024"),
     ("aten::native_layer_norm", "aclnnLayerNorm_LayerNormV3AiCore_LayerNormV3", "LayerNormV3",
      "AI_VECTOR_CORE", 140, "8192,1024;1024;1024", "8192,1024"),
     ("aten::nonzero", "aclnnNonzero_NonZeroAiCpu_NonZero", "NonZero", "AI_CPU", 90, "8192",
      "8192,1"),
     ("aten::log_softmax", "aclnnLogSoftmax_LogSoftmaxAiCore_LogSoftmaxV2", "LogSoftmaxV2",
      "AI_VECTOR_CORE", 160, "8192,1024", "8192,1024"),
     ("aten::native_layer_norm_backward", "aclnnLayerNormBackward_LayerNormGradAiCore_"
      "LayerNormGrad", "LayerNormGrad", "AI_VECTOR_CORE", 170, "8192,1024;8192,1024",
      "8192,1024"),
     ("aten::mm", "aclnnMm_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", 1050,
      "1024,8192;8192,4096", "1024,4096"),
     ("aten::mm", "aclnnMm_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", 1080,
      "8192,1024;1024,4096", "8192,4096")],
    [("aten::gelu_backward", "aclnnGeluBackward_GeluGradAiCore_GeluGrad", "GeluGrad",
      "AI_VECTOR_CORE", 190, "8192,4096;8192,4096", "8192,4096"),
     ("aten::mm", "aclnnMm_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", 1020,
      "4096,8192;8192,1024", "4096,1024")]]
BUCKETS = (26_214_400, 20_971_520)  # 25 and 20 MiB
OPTIMIZER = [
    ("aten::_foreach_mul_", "aclnnForeachMulScalar_ForeachMulScalarAiCore_ForeachMulScalar",
     "ForeachMulScalar", "AI_VECTOR_CORE", 260, "5248000", "5248000"),
    ("aten::_foreach_add_", "aclnnForeachAddList_ForeachAddListAiCore_ForeachAddList",
     "ForeachAddList", "AI_VECTOR_CORE", 420, "5248000;5248000", "5248000")]


@dataclass
class DeviceOp:
    """A compute task of one rank."""

    step: int
    spec: tuple
    task_id: int
    start_ns: int
    dur_ns: int

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.dur_ns

    @property
    def op_type(self) -> str:
        return self.spec[2]

    @property
    def task_type(self) -> str:
        return self.spec[3]

    @property
    def dur_us(self) -> float:
        return self.dur_ns / US


@dataclass
class Allreduce:
    """One rank's part of an all-reduce: from its arrival (start) through the wait for the
    last rank to the end of the transfer."""

    step: int
    index: int  # the collective's number in its group
    size: int  # bytes, each way over the link
    start_ns: int
    link_ns: int  # the rank's own transfer over its link
    end_ns: int = 0
    last_ns: int = 0  # the last rank's arrival

    @property
    def name(self) -> str:
        return f"hcom_allReduce__{GROUP_HASH[-3:]}_{self.index}_1"


class SimRank:
    """One rank of the simulated job: its host clock, its streams, and the events it writes."""

    def __init__(self, rank: int, rng: random.Random) -> None:
        self.rank, self.rng = rank, rng
        self.pid = 2811937 + rank
        # pid << 10 | sort index << 5 | device id, as torch_npu packs them
        self.hw, self.hccl, self.cann, self.overlap = (
            (self.pid << 10) | (sort << 5) | rank for sort in (13, 15, 7, 23))
        self.host = CLUSTER_BASE_NS + rank * 37 * US  # the host's next free moment
        self.free = self.comm_free = self.host  # the compute and communication streams'
        self.events: list[dict] = []
        self.ops: list[DeviceOp] = []
        self.allreduces: list[Allreduce] = []
        self.steps: list[tuple[int, int, int]] = []  # (number, start, end) of ProfilerStep
        self.step = self.step_start = self.conn = self.seq = 0
        self.task_id = 1000

    def jitter(self, ns: int, spread: float = 0.03) -> int:
        """`ns` give or take `spread` of it."""
        return round(ns * (1 - spread + 2 * spread * self.rng.random()))

    def x(self, name: str, pid: int, tid: int, start: int, dur: int, cat: str = "",
          args: dict | None = None) -> None:
        """A complete slice, as torch_npu writes one (ts µs text, dur float µs)."""
        event = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": _ns_text(start),
                 "dur": dur / US}
        if cat:
            event["cat"] = cat
        if args:
            event["args"] = args
        self.events.append(event)

    def flows(self, start: int, dst: tuple[int, int, int], conn_id: str) -> None:
        """torch_to_npu from the torch op at `start`, HostToDevice from the CANN call that
        follows it, both into the device task `dst` (pid, tid, start)."""
        pid, tid, ts = dst
        for name, cat, flow_id, src in (("torch_to_npu", "async_npu", ts, (self.pid, start)),
                                        (f"HostToDevice{conn_id}", "HostToDevice", conn_id,
                                         (self.cann, start + 8 * US))):
            self.events.append({"ph": "s", "bp": "e", "name": name, "cat": cat, "id": flow_id,
                                "pid": src[0], "tid": self.pid, "ts": _ns_text(src[1])})
            self.events.append({"ph": "f", "bp": "e", "name": name, "cat": cat, "id": flow_id,
                                "pid": pid, "tid": tid, "ts": _ns_text(ts)})

    def task(self, name: str, tid: int, start: int, dur: int, task_type: str,
             subtask: int = NO_MODEL) -> None:
        self.x(name, self.hw, tid, start, dur, args={
            "Model Id": NO_MODEL, "Task Type": task_type, "Physic Stream Id": tid,
            "Task Id": self.task_id, "Batch Id": 0, "Subtask Id": subtask,
            "connection_id": self.conn})

    def begin(self, step: int) -> None:
        self.step, self.step_start = step, self.host
        self.host += 30 * US

    def launch(self, spec: tuple) -> None:
        """A torch op, its CANN call and its task on the compute stream."""
        host_op, name, op_type, core, us = spec[:5]
        h, host_dur = self.host, self.jitter(42 * US, 0.2)
        self.seq += 1
        self.conn += 1
        self.task_id += 1
        self.x(host_op, self.pid, self.pid, h, host_dur, "cpu_op", {"Sequence number": self.seq})
        self.x("AscendCL@" + name.split("_")[0], self.cann, self.pid, h + 8 * US, 22 * US,
               args={"Thread Id": self.pid, "Mode": "ACL_OP", "level": "acl",
                     "connection_id": self.conn})
        dur = (STRAGGLER[2] if (self.rank, self.step, op_type) == (*STRAGGLER[:2], "NonZero")
               else self.jitter(us * US))
        start = max(h + 55 * US, self.free + self.jitter(1500, 0.5))
        self.task(name, STREAM, start, dur, "AI_CPU" if core == "AI_CPU" else "AI_CORE")
        self.flows(h, (self.hw, STREAM, start), str(self.conn))
        self.ops.append(DeviceOp(self.step, spec, self.task_id, start, dur))
        self.free, self.host = start + dur, h + host_dur + 6 * US

    def launch_allreduce(self, index: int, size: int) -> Allreduce:
        """DDP's hook: c10d::allreduce_ on the host; the collective on the communication
        stream once the gradients (the compute stream's last task) are there."""
        h = self.host
        self.conn += 1
        self.task_id += 1
        self.x("c10d::allreduce_", self.pid, self.pid, h, 60 * US, "cpu_op")
        self.x("HcclAllreduce", self.pid, self.pid, h + 20 * US, 14 * US, "cpu_op",
               {"Input Dims": str(size // 4), "Input type": "float"})
        self.x("AscendCL@hcom_allReduce_", self.cann, self.pid, h + 28 * US, 31 * US,
               args={"Thread Id": self.pid, "Mode": "HOST_HCCL", "level": "acl",
                     "connection_id": self.conn})
        start = max(h + 60 * US, self.comm_free, self.free + 3 * US)
        self.flows(h + 20 * US, (self.hccl, 0, start), str((self.conn << 32) - 1))
        self.host = h + 66 * US
        link_ns = self.jitter(round(size / HCCS_GBPS[self.rank]), 0.01)
        found = Allreduce(self.step, index, size, start, link_ns)
        self.allreduces.append(found)
        return found

    def finish_allreduce(self, ar: Allreduce, last_ns: int, transfer_ns: int) -> None:
        """The collective once every rank arrived: its slice, its tasks, their HCCL copies."""
        ar.last_ns, ar.end_ns = last_ns, last_ns + transfer_ns + self.jitter(2 * US, 0.5)
        self.x(ar.name, self.hccl, 0, ar.start_ns, ar.end_ns - ar.start_ns, args={
            "connection_id": self.conn, "model id": NO_MODEL, "data_type": "FP32",
            "alg_type": "MESH-RING", "count": ar.size // 4})
        wait_end = last_ns + 6 * US
        copy = (wait_end + US, ar.link_ns)
        other = 1 - self.rank
        for subtask, (name, start, dur, task_type, args) in enumerate((
                ("Notify_Wait", ar.start_ns + US, wait_end - ar.start_ns - US,
                 "Notify Wait", {"src rank": other, "dst rank": self.rank, "size(Byte)": 0,
                                 "link type": "INVALID_TYPE", "bandwidth(GB/s)": 0.0}),
                ("Memcpy", *copy, "SDMA",
                 {"src rank": self.rank, "dst rank": other, "size(Byte)": ar.size,
                  "link type": "HCCS", "bandwidth(GB/s)": round(ar.size / ar.link_ns, 4)}))):
            self.task(task_type, COMM_STREAM, start, dur, task_type, subtask)
            self.x(name, self.hccl, 1, start, dur, args={
                "stream id": COMM_STREAM, "task id": self.task_id, "task type": name,
                "transport type": "SDMA", **args, "model id": NO_MODEL})
        self.task("EVENT_RECORD", COMM_STREAM, ar.end_ns, 20, "EVENT_RECORD_SQE")
        self.comm_free = ar.end_ns

    def optimizer_step(self) -> None:
        """The compute stream waits for the last all-reduce; then SGD's update."""
        if self.comm_free > self.free:
            self.task("EVENT_WAIT", STREAM, self.free, self.comm_free - self.free,
                      "EVENT_WAIT_SQE")
            self.free = self.comm_free
        h = self.host
        for spec in OPTIMIZER:
            self.launch(spec)
        self.x("Optimizer.step#SGD.step", self.pid, self.pid, h - 2 * US,
               self.host - h, "user_annotation")

    def end_step(self) -> None:
        """loss.item() waits for the device; ProfilerStep#N ends just after."""
        h = self.host
        synced = max(self.free, self.comm_free) + 12 * US
        self.x("aten::item", self.pid, self.pid, h, synced + 20 * US - h, "cpu_op")
        self.x("aten::_local_scalar_dense", self.pid, self.pid, h + 5 * US,
               synced + 12 * US - h, "cpu_op")
        self.x("AscendCL@aclrtSynchronizeStreamWithTimeout", self.cann, self.pid, h + 10 * US,
               synced - h - 10 * US, args={"Thread Id": self.pid, "Mode": "ACL_RTS",
                                           "level": "acl"})
        end = synced + 40 * US
        self.x(f"ProfilerStep#{self.step}", self.pid, self.pid, self.step_start,
               end - self.step_start, "cpu_op")
        self.steps.append((self.step, self.step_start, end))
        self.host = end + 8 * US


def simulate_cluster(seed: int = 21) -> list[SimRank]:
    """Both ranks step by step; each all-reduce ends a transfer after the last one arrives."""
    rng = random.Random(seed)
    ranks = [SimRank(r, rng) for r in (0, 1)]
    index = 0
    for step in CLUSTER_STEPS:
        for r in ranks:
            r.begin(step)
        for specs, size in zip(FORWARD_BACKWARD, BUCKETS):
            for r in ranks:
                for spec in specs:
                    r.launch(spec)
            arrived = [r.launch_allreduce(index, size) for r in ranks]
            last = max(a.start_ns for a in arrived)
            transfer = max(a.link_ns for a in arrived) + 15 * US
            for r, a in zip(ranks, arrived):
                r.finish_allreduce(a, last, transfer)
            index += 1
        for r in ranks:
            r.optimizer_step()
            r.end_step()
    return ranks


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _minus(spans: list[tuple[int, int]], cut: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The merged `spans` less the merged `cut`."""
    out = []
    for lo, hi in spans:
        for c_lo, c_hi in cut:
            if c_hi <= lo or c_lo >= hi:
                continue
            if c_lo > lo:
                out.append((lo, c_lo))
            lo = max(lo, c_hi)
        if lo < hi:
            out.append((lo, hi))
    return out


def _overlap(rank: SimRank, step: int, start: int) -> tuple[list, list[dict]]:
    """torch_npu's step_trace_time.csv row of a step and its Overlap Analysis slices: over the
    device window, compute, communication, the part of it under no compute, and free time."""
    ops = [(o.start_ns, o.end_ns) for o in rank.ops if o.step == step]
    comm = [(a.start_ns, a.end_ns) for a in rank.allreduces if a.step == step]
    lo, hi = min(s for s, _ in ops + comm), max(e for _, e in ops + comm)
    computing, communication = _merge(ops), _merge(comm)
    exposed = _minus(communication, computing)
    free = _minus([(lo, hi)], _merge(ops + comm))
    events, totals = [], []
    for tid, (name, spans) in enumerate((("Computing", computing),
                                         ("Communication", communication),
                                         ("Communication(Not Overlapped)", exposed),
                                         ("Free", free))):
        events += [{"ph": "X", "name": name, "pid": rank.overlap, "tid": tid,
                    "ts": _ns_text(s), "dur": (e - s) / US} for s, e in spans]
        totals.append(sum(e - s for s, e in spans) / US)
    compute_us, comm_us, exposed_us, free_us = totals
    row = [step, compute_us, exposed_us, round(comm_us - exposed_us, 3), comm_us, free_us,
           (hi - lo) / US, 0, exposed_us, (lo - start) / US]
    return row, events


def _metadata(rank: SimRank) -> list[dict]:
    out = []
    for pid, name, labels, sort, threads in (
            (rank.pid, "Python", "CPU", 0, {rank.pid: f"Thread {rank.pid}"}),
            (rank.hw, "Ascend Hardware", "NPU", 13,
             {s: f"Stream {s}" for s in (STREAM, COMM_STREAM)}),
            (rank.hccl, "HCCL", "NPU", 15, {0: "Group 0 Communication", 1: "Plane 0"}),
            (rank.cann, "CANN", "CPU", 7, {rank.pid: f"Thread {rank.pid}"}),
            (rank.overlap, "Overlap Analysis", "NPU", 23,
             dict(enumerate(("Computing", "Communication", "Communication(Not Overlapped)",
                             "Free"))))):
        out += [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                 "args": {"name": name}},
                {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0,
                 "args": {"labels": labels}},
                {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                 "args": {"sort_index": sort}}]
        for tid, thread in threads.items():
            out += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                     "args": {"name": thread}},
                    {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                     "args": {"sort_index": tid}}]
    return out


def _kernel_rows(rank: SimRank) -> list[list]:
    """kernel_details.csv: every compute task and collective, by start."""
    rows = []
    free = {}
    for o in rank.ops:
        inputs = o.spec[5].count(";") + 1
        wait = o.start_ns - free.get(STREAM, o.start_ns)
        free[STREAM] = o.end_ns
        rows.append((o.start_ns, [
            o.step, NO_MODEL, o.task_id, STREAM, o.spec[1], o.op_type, "dynamic", o.task_type,
            _ns_text(o.start_ns), o.dur_ns / US, wait / US, 0 if o.task_type == "AI_CPU" else 24,
            0, "NO", f'"{o.spec[5]}"', ";".join(["FLOAT16"] * inputs),
            ";".join(["ND"] * inputs), f'"{o.spec[6]}"', "FLOAT16", "ND", "N/A"]))
    for a in rank.allreduces:
        rows.append((a.start_ns, [a.step, NO_MODEL, "N/A", "N/A", a.name, "hcom_allReduce_",
                                  "N/A", "HCCL", _ns_text(a.start_ns),
                                  (a.end_ns - a.start_ns) / US, 0, 0] + ["N/A"] * 9))
    return [row for _, row in sorted(rows, key=lambda r: r[0])]


def _bandwidth(size: int, ns: int) -> dict:
    return {"Transit Size(MB)": size / 1e6, "Transit Time(ms)": ns / 1e6,
            "Bandwidth(GB/s)": round(size / ns, 4)}


def _communication(rank: SimRank) -> tuple[dict, dict]:
    """communication.json and communication_matrix.json: per step, each all-reduce's times
    and transports, and the links (the rank's HCCS link to the other, its LOCAL copy)."""
    times, matrix = {}, {}
    none = {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
            "Large Packet Ratio": 0, "Size Distribution": {}}
    me, other = rank.rank, 1 - rank.rank
    for step in CLUSTER_STEPS:
        ops, total = {}, {"Elapse Time(ms)": 0.0, "Transit Time(ms)": 0.0,
                          "Wait Time(ms)": 0.0, "Synchronization Time(ms)": 0.0,
                          "Idle Time(ms)": 0.0}
        links: dict[str, list] = {f"{me}-{me}": [], f"{me}-{other}": []}
        mine = [a for a in rank.allreduces if a.step == step]
        for a in mine:
            sync = a.last_ns - a.start_ns
            wait = sync + 6 * US
            elapse = a.end_ns - a.start_ns
            info = {"Start Timestamp(us)": a.start_ns / US, "Elapse Time(ms)": elapse / 1e6,
                    "Transit Time(ms)": a.link_ns / 1e6, "Wait Time(ms)": wait / 1e6,
                    "Synchronization Time(ms)": sync / 1e6,
                    "Idle Time(ms)": (elapse - a.link_ns - wait) / 1e6,
                    "Wait Time Ratio": round(wait / (wait + a.link_ns), 4),
                    "Synchronization Time Ratio": round(sync / (sync + a.link_ns), 4)}
            for key in total:
                total[key] += info[key]
            hccs = {**_bandwidth(a.size, a.link_ns), "Large Packet Ratio": 0.0,
                    "Size Distribution": {"1.048576": [a.size // 1_048_576,
                                                       a.link_ns / 1e6]}}
            ops[f"{a.name}@{GROUP_HASH}"] = {
                "Communication Time Info": info, "Communication Bandwidth Info": {
                    "RDMA": none, "HCCS": hccs, "PCIE": none,
                    "SDMA": {**hccs, "Large Packet Ratio": 0, "Size Distribution": {}},
                    "SIO": none}}
            local = a.size // 2
            links[f"{me}-{me}"].append(("LOCAL", local, round(local / LOCAL_GBPS), a.name))
            links[f"{me}-{other}"].append(("HCCS", a.size, a.link_ns, a.name))
        wait, sync, transit = (total[f"{k} Time(ms)"] for k in ("Wait", "Synchronization",
                                                                 "Transit"))
        total["Wait Time Ratio"] = round(wait / (wait + transit), 4)
        total["Synchronization Time Ratio"] = round(sync / (sync + transit), 4)
        ops["Total Op Info"] = {"Communication Time Info": total}
        times[f"step{step}"] = {"p2p": {}, "collective": ops}
        samples: dict[str, dict] = {}
        for link, found in links.items():
            ranked = sorted(found, key=lambda x: -x[1] / x[2])
            for sample, x in (("top1", ranked[0]), ("middle", ranked[len(ranked) // 2]),
                              ("bottom1", ranked[-1])):
                samples.setdefault(f"allreduce-{sample}@{GROUP_HASH}", {})[link] = {
                    "Transport Type": x[0], **_bandwidth(x[1], x[2]), "Op Name": x[3]}
            size, ns = sum(x[1] for x in found), sum(x[2] for x in found)
            samples.setdefault(f"allreduce-total@{GROUP_HASH}", {})[link] = {
                "Transport Type": found[0][0], **_bandwidth(size, ns)}
        matrix[f"step{step}"] = {"p2p": {}, "collective": samples}
    return times, matrix


def cluster_2rank(root: Path) -> None:
    """Write the two ranks under `root` (see the module docstring)."""
    for rank in simulate_cluster():
        out = root / f"rank{rank.rank}_ascend_pt"
        prof = out / "ASCEND_PROFILER_OUTPUT"
        prof.mkdir(parents=True, exist_ok=True)
        rows, overlap = [], []
        for number, start, _ in rank.steps:
            row, events = _overlap(rank, number, start)
            rows.append(row)
            overlap += events
        with open(prof / "trace_view.json", "w", encoding="utf-8") as f:
            events = _metadata(rank) + rank.events + overlap
            f.write("[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]\n")
        _write_csv(prof / "kernel_details.csv",
                   ["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State",
                    "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)",
                    "Block Dim", "Mix Block Dim", "HF32 Eligible", "Input Shapes",
                    "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
                    "Output Formats", "Context ID"], _kernel_rows(rank), tab=(8,))
        _write_csv(prof / "op_statistic.csv",
                   ["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)",
                    "Avg Time(us)", "Max Time(us)", "Ratio(%)"],
                    _op_statistic(rank.ops))
        _write_csv(prof / "step_trace_time.csv",
                   ["Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
                    "Communication", "Free", "Stage", "Bubble",
                    "Communication(Not Overlapped and Exclude Receive)", "Preparing"], rows)
        times, matrix = _communication(rank)
        for name, data in (("communication.json", times), ("communication_matrix.json", matrix)):
            with open(prof / name, "w", encoding="utf-8") as f:
                json.dump(data, f)
        first, end = rank.steps[0][1], rank.steps[-1][2]
        start_monotonic = 172_163_581_670_080 + rank.rank * 1_234_567
        info = {"config": {
            "common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"],
                              "schedule": {"wait": 0, "active": len(CLUSTER_STEPS), "warmup": 1,
                                           "repeat": 1, "skip_first": 0},
                              "record_shapes": True, "profile_memory": False,
                              "with_stack": False, "with_flops": False, "with_modules": False},
            "experimental_config": {"_profiler_level": "Level1",
                                    "_aic_metrics": "ACL_AICORE_NONE", "_l2_cache": False,
                                    "_export_type": "text"}},
            "start_info": {"syscnt_enable": True, "freq": 100, "start_monotonic":
                           start_monotonic},
            "end_info": {"collectionTimeEnd": end + 3_000 * US,
                         "MonotonicTimeEnd": start_monotonic + end - first + 8_000 * US},
            "rank_id": rank.rank}
        with open(out / f"profiler_info_{rank.rank}.json", "w", encoding="utf-8") as f:
            json.dump(info, f, indent=4)
        with open(out / "profiler_metadata.json", "w", encoding="utf-8") as f:
            json.dump({"ENV_VARIABLES": {"ASCEND_GLOBAL_LOG_LEVEL": "", "HCCL_RDMA_TC": ""},
                       "distributed_args": {"backend": "hccl", "rank": rank.rank,
                                            "world_size": 2}}, f, indent=4)
