"""How operators are grouped: by name, category, operator type, or the engine that ran them.

Each grouping gives every slice a group number and every group a label. Names are grouped
as written, except that Paddle's duration suffix (``matmul[114.000 us]``) and the instance
number of numbered annotations (``Dataloader#3``, ``ProfilerStep#7``, msprof ``Iteration 7``)
are dropped, so that one op is one row however many times it ran.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Table
from proftui.core.ops.roles import matching, roles

GROUP_BY = {"name": "Name", "category": "Category", "type": "Type", "engine": "Engine"}
# MindSpore/msprof device slices are named by op instance, with their scope:
# "Default/network/DropOutDoMask-op152" is an instance of the type DropOutDoMask.
_SCOPED_OP = re.compile(r"^(?:.*/)?([^/]+?)-op\d+$")
_DURATION_SUFFIX = re.compile(r"\s*\[\s*[-+0-9.eE]+\s*(?:ns|us|µs|ms|s)\s*\]$")
_NUMBERED = re.compile(r"^(Profil(?:er|e)Step|Dataloader|Iteration(?: Refresh)?|FP_BP Time)"
                       r"(?:#| )\d+$")
_NAME_NEEDLES = ("]", "#", "Iteration ", "FP_BP Time ")
# Engines of device work without a table to say (Kineto, Paddle, msprof task types).
_NCCL = re.compile(r"nccl", re.IGNORECASE)
_TRITON = re.compile(r"^triton_", re.IGNORECASE)
_TASK_TYPE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")  # EVENT_WAIT, MEMCPY_ASYNC
_DEVICE_CATEGORY_ENGINE = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy",
                           "Memcpy": "memcpy", "gpu_memset": "memset", "Memset": "memset"}
_names_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_engines_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Labels(Sequence):
    """Group labels: the string table's texts, with some groups renamed."""

    def __init__(self, base: Sequence[str], renamed: dict[int, str]) -> None:
        self.base, self.renamed = base, renamed

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, k):  # type: ignore[override]
        return self.renamed.get(k) if k in self.renamed else self.base[k]


@dataclass(frozen=True)
class OpTypes:
    """Groups of slice names: `of_name[name id]` numbers the group in `labels` (-1 for
    strings that name no slice).

    For operator types: device slices of Ascend profiles are named by op instance;
    op_summary (kernel_details for torch_npu) says each one's OP Type, which op_statistic
    aggregates by. Names the tables do not list fall back to the instance name without its
    scope and "-opN" suffix, else to the name itself (a Kineto kernel or aten op is its own
    type).
    """

    labels: Sequence[str]
    of_name: np.ndarray


def op_name(text: str) -> str:
    """The op a slice name is an instance of: without a duration suffix or instance number."""
    text = _DURATION_SUFFIX.sub("", text)
    m = _NUMBERED.match(text)
    return m.group(1) if m else text


def name_groups(index: TraceIndex) -> OpTypes:
    """Slice names grouped by :func:`op_name` (computed once per index)."""
    found = _names_memo.get(index)
    if found is not None:
        return found
    s = index.strings
    of_name = np.arange(len(s), dtype=np.int64)
    renamed: dict[int, str] = {}
    first: dict[str, int] = {}
    changed = matching(s, _NAME_NEEDLES, lambda text: op_name(text) != text)
    for sid in np.flatnonzero(changed).tolist():
        name = op_name(s[sid])
        same = s.find(name)
        if same >= 0:
            of_name[sid] = same
        else:
            of_name[sid] = first.setdefault(name, sid)
            renamed[of_name[sid]] = name
    found = _names_memo[index] = OpTypes(Labels(s, renamed), of_name)
    return found


def op_types(index: TraceIndex, tables: Sequence[Table] = ()) -> OpTypes:
    """The operator type of every slice name of `index`, from the op tables where present."""
    declared = _declared(tables, ("OP Type", "Type"))
    seen = np.zeros(len(index.strings), bool)
    seen[index.col("slices.name")] = True  # (np.bincount would copy the column to int64)
    used = np.flatnonzero(seen)
    of_name = np.full(len(index.strings), -1, np.int64)
    numbers: dict[str, int] = {}
    for i in used.tolist():
        text = op_name(index.strings[i])
        m = _SCOPED_OP.match(text)
        label = declared.get(text) or (m.group(1) if m else text)
        of_name[i] = numbers.setdefault(label, len(numbers))
    return OpTypes(list(numbers), of_name)


def _declared(tables: Sequence[Table], columns: tuple[str, ...]) -> dict[str, str]:
    """Op name -> the value of the first of `columns` in the op tables (op_summary,
    kernel_details) that name it."""
    declared: dict[str, str] = {}
    for table in tables:
        if table.kind not in ("op_summary", "kernel_details"):
            continue
        name, kind = table.find("Op Name", "Name"), table.find(*columns)
        if name is None or kind is None or name.kind != "text" or kind.kind != "text":
            continue
        for op, value in zip(name.values.tolist(), kind.values.tolist()):
            if op and value and value != "N/A":
                declared.setdefault(str(op), str(value))
    return declared


@dataclass(frozen=True)
class Engines:
    """The engine of each (name, category, side) in use: `keys` (sorted), each one's engine
    (`codes`, into `labels`). Kept per key, not per slice (an int32 a slice)."""

    keys: np.ndarray
    codes: np.ndarray
    labels: list[str]

    def of(self, index: TraceIndex, rows: np.ndarray | slice) -> np.ndarray:
        """The engine of each slice of `rows` (indices, a mask or a slice), int32."""
        return self.codes[np.searchsorted(self.keys, _engine_keys(index, rows))]


def engines(index: TraceIndex, tables: Sequence[Table] = ()) -> Engines:
    """The engine that ran each slice (see :class:`Engines`), and the engines' labels.

    Device: the Task Type (op_summary) or Accelerator Core (kernel_details) of Ascend ops
    (AI_CORE, AI_VECTOR_CORE, MIX_AIC, AI_CPU ...); collectives are HCCL (Ascend) or NCCL;
    msprof task types are themselves (EVENT_WAIT, MEMCPY_ASYNC); Kineto and Paddle work is
    kernel, Triton, NCCL, memcpy or memset. Host: the slice's category, else (CANN) the
    layer its name starts with (AscendCL@..., Runtime@...), else "host".
    """
    key = tuple(t.path for t in tables)
    memo = _engines_memo.setdefault(index, {})
    if key not in memo:
        memo[key] = _engines(index, tables)
    return memo[key]


# Slices taken at a time by _engines: its temporaries stay a few MB (np.unique of all the
# (name, category, side) keys at once: ~7 arrays of 8 bytes a slice, 130 MB at 2.4 M slices).
ENGINE_CHUNK = 1 << 18


def _engines(index: TraceIndex, tables: Sequence[Table]) -> Engines:
    s = index.strings
    r = roles(index)
    declared = _declared(tables, ("Task Type", "Accelerator Core"))
    labels: dict[str, int] = {}
    # One label per distinct (name, category, side) in use, numbered in the keys' order.
    chunks = [slice(a, a + ENGINE_CHUNK) for a in range(0, index.n_slices, ENGINE_CHUNK)]
    uniq = np.unique(np.concatenate([np.zeros(0, np.int64)]
                                    + [np.unique(_engine_keys(index, rows)) for rows in chunks]))
    collective_pairs = np.zeros(len(uniq), bool)
    for rows in chunks:
        at = np.searchsorted(uniq, _engine_keys(index, rows)[r.collective[rows]])
        collective_pairs[at] = True
    codes = np.empty(len(uniq), np.int32)
    for k, key in enumerate(uniq.tolist()):
        on_device, rest = key & 1, key >> 1
        name, cat = s[rest // len(s)], s[rest % len(s)]
        if on_device:
            label = _device_engine(name, cat, declared, bool(collective_pairs[k]))
        else:
            label = cat or (name.split("@", 1)[0] if "@" in name else "host")
        codes[k] = labels.setdefault(label, len(labels))
    return Engines(uniq, codes, list(labels))


def _engine_keys(index: TraceIndex, rows: np.ndarray | slice) -> np.ndarray:
    """The (name, category, side) key of each slice of `rows` (int64)."""
    a = index.arrays
    device = roles(index).device[a["slices.track"][rows]]
    return (a["slices.name"][rows].astype(np.int64) * len(index.strings)
            + a["slices.cat"][rows]) * 2 + device


def _device_engine(name: str, cat: str, declared: dict[str, str], collective: bool) -> str:
    if name in declared:
        return declared[name]
    if collective:
        return "NCCL" if _NCCL.search(name) else "HCCL"
    engine = _DEVICE_CATEGORY_ENGINE.get(cat)
    if engine == "kernel":
        return "NCCL" if _NCCL.search(name) else "Triton" if _TRITON.match(name) else "kernel"
    if engine:
        return engine
    if _TASK_TYPE.match(name):
        return name
    return cat or "other"


class SliceKeys:
    """The slices' group numbers (by name, category, type or engine), for the slices asked
    (a chunk at a time: by name or type, every slice's would be an int64 a slice), and the
    groups' `labels`."""

    def __init__(self, index: TraceIndex, by: str, types: OpTypes | None = None,
                 tables: Sequence[Table] = ()) -> None:
        if by not in GROUP_BY:
            raise ProftuiError(f'Unknown grouping "{by}": use {", ".join(GROUP_BY)}.')
        self.of_id: np.ndarray | None = None  # a column's value -> its group number
        self.engines: Engines | None = None  # by engine: from each slice's key
        if by == "type":
            types = types if types is not None else op_types(index, tables)
            self.column, self.of_id, self.labels = (index.col("slices.name"), types.of_name,
                                                    types.labels)
        elif by == "engine":
            self.engines, self.index = engines(index, tables), index
            self.labels = self.engines.labels
        elif by == "category":
            self.column, self.labels = index.col("slices.cat"), index.strings  # type: ignore[assignment]
        else:
            groups = name_groups(index)
            self.column, self.of_id, self.labels = (index.col("slices.name"), groups.of_name,
                                                    groups.labels)

    def of(self, rows: np.ndarray | slice) -> np.ndarray:
        """The group number of each slice of `rows` (indices, a mask or a slice)."""
        if self.engines is not None:
            return self.engines.of(self.index, rows)
        return self.column[rows] if self.of_id is None else self.of_id[self.column[rows]]
