"""What each track and slice is for: device or host side, work or a restatement, and why.

Every number of the summary, the Ops pane and the headless commands stands on two questions:
which side a slice ran on, and whether it is an operator at all. Both are answered here, once.

Side, per track, by the first rule that decides:
1. the categories of its slices (Kineto ``kernel``, ``gpu_memcpy`` ... are device;
   ``cpu_op``, ``python_function``, ``cuda_runtime`` ... host), by majority of slices;
2. its process name (msprof and torch_npu: ``Ascend Hardware``, ``HCCL`` ... are device;
   ``Python``, ``CANN`` ... host);
3. its process labels (``GPU 0``, ``NPU 0`` device; ``CPU`` host);
4. its thread name (``stream 7``: a GPU stream in a trace without labels);
5. otherwise host.
Real Kineto traces put the host process at the pid of GPU 0 or 1, and some exports have no
metadata at all, which is why the categories come first and the labels only third.

Role, per track: ``work`` (its slices are operators), ``derived`` (a view computed from other
tracks: msprof's ``Overlap Analysis`` and ``Step Trace``) or ``copy`` (the HCCL ``Plane``
threads, which repeat the communication tasks of the device streams). Derived and copied
tracks stay on the timeline but are never counted.

Per slice, an operator is a slice on a work track that is not a marker (step annotations,
``Iteration N``, Kineto's whole-capture ``PyTorch Profiler`` span, user annotations) and not a
communication task that a collective on the same rank already stands for.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

import numpy as np

from proftui.core.model.index import TRACK_KINDS, TraceIndex

SIDE_RULES = ("categories", "process name", "process labels", "thread name", "default")
TRACK_ROLES = ("work", "derived", "copy")

# Kineto ActivityType names (and their 2021 and Paddle spellings) by the side they run on.
DEVICE_CATEGORIES = frozenset({
    "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset",
    "mtia_ccp_events"})
HOST_CATEGORIES = frozenset({
    "cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver",
    "cpu_instant_event", "overhead", "external_correlation", "xpu_runtime", "xpu_driver",
    "privateuse1_runtime", "privateuse1_driver", "mtia_runtime", "Operator", "Runtime", "Trace",
    "Python", "enqueue", "dequeue", "Dataloader", "ProfileStep", "CudaRuntime", "UserDefined",
    "OperatorInner", "Forward", "Backward", "Optimization", "PythonOp", "PythonUserDefined"})
# msprof / torch_npu / MindSpore process names (lower case).
DEVICE_PROCESSES = frozenset({
    "ascend hardware", "hccl", "communication", "overlap analysis", "step trace",
    "ai core freq", "task scheduler", "ai core op", "aicpu op", "ai cpu op", "hccl op"})
HOST_PROCESSES = frozenset({"python", "cann", "python gc", "pid name", "cpu op", "cpu usage"})
DERIVED_PROCESSES = frozenset({"overlap analysis", "step trace"})
COLLECTIVE_PROCESSES = frozenset({"hccl", "communication"})
_DEVICE_LABEL = re.compile(r"\b(?:gpu|npu|tpu|xpu|mlu|device)\b", re.IGNORECASE)
_HOST_LABEL = re.compile(r"^\s*cpu\b", re.IGNORECASE)
_STREAM_THREAD = re.compile(r"^\s*(?:thread\s+)?stream\s+\d+", re.IGNORECASE)
_STEP_TRACE_THREAD = re.compile(r"^Step Trace")
_PLANE_THREAD = re.compile(r"^Plane \d+$")

# Slices that mark time rather than do work.
MARKER_CATEGORIES = frozenset({
    "user_annotation", "gpu_user_annotation", "Trace", "ProfileStep", "UserDefined",
    "PythonUserDefined", "Forward", "Backward", "Optimization"})
_MARKER_NAME = re.compile(
    r"^(?:Profil(?:er|e)Step#\d+(?:\[[^\]]*\])?|Iteration \d+|FP_BP Time \d+"
    r"|Iteration Refresh \d+|PyTorch Profiler \(\d+\))$")
# HCCL's tasks on the device streams and their copies on the Plane threads (names folded to
# lower case with "_" for " "): a collective stands for them where there is one.
COMM_TASKS = frozenset({
    "notify_wait", "notify_record", "write_value", "sdma", "rdma", "reduce_inline",
    "reduce_async", "reduce_async_v2", "memcpy", "notify_wait_v2", "notify_record_v2",
    "local_copy", "inline_reduce"})
_COMM_NEEDLES = tuple(n for stem in ("otify", "rite", "dma", "educe", "emcpy", "opy")
                      for n in (stem, stem.upper()))
_COLLECTIVE_NAME = re.compile(r"^hcom_")

_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Roles:
    """Per track: `device` (bool), `side_rule` (index into SIDE_RULES: which rule decided),
    `role` (index into TRACK_ROLES); per slice: `op` (bool: counted as an operator),
    `collective` (bool: a collective communication op)."""

    device: np.ndarray
    side_rule: np.ndarray
    role: np.ndarray
    op: np.ndarray
    collective: np.ndarray

    def describe(self, track: int) -> dict[str, str]:
        """How one track was classified, as `info` prints it."""
        return {"side": "device" if self.device[track] else "host",
                "side_by": SIDE_RULES[int(self.side_rule[track])],
                "role": TRACK_ROLES[int(self.role[track])]}


def roles(index: TraceIndex) -> Roles:
    """The roles of `index`'s tracks and slices: computed once per index and kept beside the
    cached index (the first frame orders tracks by side; classifying 10 M slices takes
    about half a second)."""
    found = _memo.get(index)
    if found is None:
        from proftui.core.cache import indexes as cache

        def fits(arrays: dict[str, np.ndarray]) -> bool:
            return (all(len(arrays[k]) == index.n_tracks for k in _TRACK_FIELDS)
                    and all(len(arrays[k]) == index.n_slices for k in _SLICE_FIELDS))

        arrays = cache.derived(index, ROLES_KIND, lambda: vars(_classify(index)), fits)
        found = _memo[index] = Roles(**{k: arrays[k] for k in _TRACK_FIELDS + _SLICE_FIELDS})
    return found


ROLES_KIND = "roles1"  # bump when the rules or the stored arrays change
_TRACK_FIELDS = ("device", "side_rule", "role")
_SLICE_FIELDS = ("op", "collective")


def device_tracks(index: TraceIndex) -> np.ndarray:
    """Boolean per track: True for device-side tracks (see the module docstring)."""
    return roles(index).device


def op_slices(index: TraceIndex) -> np.ndarray:
    """Indices of the slices that are operators (see the module docstring)."""
    return np.flatnonzero(roles(index).op)


# -- tracks -------------------------------------------------------------------------------------


def _classify(index: TraceIndex) -> Roles:
    a, s = index.arrays, index.strings
    n_tracks = index.n_tracks
    track = a["slices.track"]
    cat = a["slices.cat"]
    proc_name = [s[i].strip().lower() for i in a["processes.name"].tolist()]
    proc_labels = [s[i] for i in a["processes.labels"].tolist()]
    track_proc = a["tracks.process"].astype(np.int64)
    has_proc = track_proc >= 0
    safe_proc = np.maximum(track_proc, 0)

    def per_track(values: list[bool]) -> np.ndarray:
        out = np.zeros(n_tracks, bool)
        if values:
            out[has_proc] = np.array(values, bool)[safe_proc[has_proc]]
        return out

    # 1. categories, by majority of the track's slices
    cat_side = np.zeros(len(s), np.int8)
    for texts, side in ((DEVICE_CATEGORIES, 1), (HOST_CATEGORIES, -1)):
        for text in texts:
            if (sid := s.find(text)) >= 0:
                cat_side[sid] = side
    vote = cat_side[cat]
    device_votes = np.bincount(track, weights=vote == 1, minlength=n_tracks)
    host_votes = np.bincount(track, weights=vote == -1, minlength=n_tracks)
    by_cat = (device_votes + host_votes) > 0
    # 2. process name; 3. process labels
    name_device = per_track([n in DEVICE_PROCESSES for n in proc_name])
    name_host = per_track([n in HOST_PROCESSES for n in proc_name])
    label_device = per_track([bool(_DEVICE_LABEL.search(t)) for t in proc_labels])
    label_host = per_track([bool(_HOST_LABEL.match(t)) for t in proc_labels])
    # 4. thread name
    thread = a["tracks.kind"] == TRACK_KINDS.index("thread")
    names = a["tracks.name"]
    stream = matching(s, ("stream", "Stream", "STREAM"), _STREAM_THREAD.match)[names] & thread

    rule = np.full(n_tracks, SIDE_RULES.index("default"), np.int8)
    device = np.zeros(n_tracks, bool)
    undecided = np.ones(n_tracks, bool)
    for code, decides, is_device in (
            (0, by_cat, device_votes > host_votes),
            (1, name_device | name_host, name_device),
            (2, label_device | label_host, label_device),
            (3, stream, stream)):
        take = undecided & decides
        device[take] = is_device[take]
        rule[take] = code
        undecided &= ~take

    role = np.zeros(n_tracks, np.int8)
    derived = per_track([n in DERIVED_PROCESSES for n in proc_name])
    derived |= matching(s, ("Step Trace",), _STEP_TRACE_THREAD.match)[names] & thread
    collective_proc = per_track([n in COLLECTIVE_PROCESSES for n in proc_name])
    copy = collective_proc & matching(s, ("Plane ",), _PLANE_THREAD.match)[names] & thread
    role[derived] = TRACK_ROLES.index("derived")
    role[copy & ~derived] = TRACK_ROLES.index("copy")

    op, collective = _op_slices(index, device, role, collective_proc & ~copy & ~derived)
    return Roles(device, rule, role, op, collective)


def matching(strings, needles: tuple[str, ...], test) -> np.ndarray:
    """Boolean per string id: the string holds one of `needles` and passes `test` (the needles
    narrow by one scan of the string table; the test runs on those strings only)."""
    hits = np.zeros(len(strings), bool)
    for needle in needles:
        for sid in strings.ids_containing(needle):
            hits[sid] = bool(test(strings[sid]))
    return hits


# -- slices -------------------------------------------------------------------------------------


def _op_slices(index: TraceIndex, device: np.ndarray, role: np.ndarray,
               collective_track: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per slice: whether it is an operator, and whether it is a collective."""
    a, s = index.arrays, index.strings
    track, names, cats = a["slices.track"], a["slices.name"], a["slices.cat"]
    marker = matching(s, ("Step#", "Iteration ", "FP_BP Time ", "PyTorch Profiler"),
                      _MARKER_NAME.match)
    marker_cat = np.zeros(len(s), bool)
    for text in MARKER_CATEGORIES:
        if (sid := s.find(text)) >= 0:
            marker_cat[sid] = True
    op = (role[track] == TRACK_ROLES.index("work")) & ~marker[names] & ~marker_cat[cats]

    collective_name = matching(s, ("hcom_",), _COLLECTIVE_NAME.match)
    collective = op & (collective_track[track] | collective_name[names])
    comm_task = matching(s, _COMM_NEEDLES, lambda text: _folded(text) in COMM_TASKS)
    # A communication task on a device stream is part of the collective that issued it, when
    # the rank's timeline has the collectives: count the collective, not its tasks again.
    group = slice_groups(index)
    with_collectives = np.zeros(len(s), bool)
    with_collectives[np.unique(group[collective])] = True
    part = comm_task[names] & device[track] & ~collective & with_collectives[group]
    return op & ~part, collective


def _folded(text: str) -> str:
    return re.sub(r"[\s_]+", "_", text.strip().lower())


def track_groups(index: TraceIndex, none: int = -1) -> np.ndarray:
    """Per track, the string id of its process's group (rank or device); `none` for a track
    of no process."""
    proc = index.col("tracks.process").astype(np.int64)
    groups = index.col("processes.group").astype(np.int64)
    # int32 (string ids): slice_groups keeps one per slice as long as the index
    return np.where(proc >= 0, groups[np.maximum(proc, 0)] if len(groups) else none,
                    none).astype(np.int32)


def slice_groups(index: TraceIndex) -> np.ndarray:
    """Per slice, the string id of its group (rank or device; "" for none)."""
    empty = index.strings.find("")
    return track_groups(index, max(empty, 0))[index.arrays["slices.track"]]


def device_kind(index: TraceIndex) -> tuple[str, int]:
    """The kind of device (NPU, GPU, or none) and how many device processes did work."""
    a, s = index.arrays, index.strings
    r = roles(index)
    track = a["slices.track"][r.op & r.device[a["slices.track"]]]
    procs = np.unique(a["tracks.process"][np.unique(track)]) if len(track) else []
    names = " ".join(s[a["processes.name"][p]] + " " + s[a["processes.labels"][p]]
                     for p in np.asarray(procs).tolist() if p >= 0).lower()
    if not len(track):
        return "none", 0
    kind = "NPU" if ("ascend" in names or "npu" in names) else "GPU"
    groups = a["processes.group"][[p for p in np.asarray(procs).tolist() if p >= 0]]
    return kind, max(1, len(set(groups.tolist())))
