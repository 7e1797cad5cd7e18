"""Clock offsets that put the timelines of one profile on a shared clock (epoch nanoseconds).

Most producers already write wall-clock epoch times (CANN 7/8 msprof, torch_npu, old Kineto).
Two do not, and each leaves what is needed to convert:

- the old CANN layout (`PROF_*/device_N/timeline/*.json`) writes CLOCK_MONOTONIC_RAW µs; the
  device's `start_info.N` holds the same instant on both clocks (`collectionTimeBegin`, wall
  µs, and `clockMonotonicRaw`, ns), so wall ns = monotonic ns + (begin µs * 1000 - raw ns);
- Kineto traces with `baseTimeNanoseconds` write `ts` relative to it.

The offset of a file is found before it is indexed (the builder adds it to every timestamp)
and is part of the cache key. What cannot be aligned keeps its own clock, with the reason.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from proftui.core.source.streams import ByteSource, FileIdentity

if TYPE_CHECKING:
    from proftui.core.model.index import TraceIndex

# µs: timestamps at or beyond this (2001-09-09) are already epoch wall clock.
EPOCH_US = 10**15
WALL_CLOCK, OWN_CLOCK = "wall clock", "own clock"  # epoch; zero-based or monotonic
_HEAD_BYTES = 1 << 20
_FIRST_BYTES = 1 << 16  # enough for the first timestamps of any producer's file
_INT64_MAX = 2**63 - 1
_BASE_TIME = re.compile(rb'"baseTimeNanoseconds"\s*:\s*("?[^,}\s]*)')
_TS = re.compile(rb'"ts"\s*:\s*"?(-?[0-9]+)')
_DEVICE_DIR = re.compile(r"^device_(\d+)$")


@dataclass(frozen=True)
class ClockOffset:
    """What to add to a file's timestamps (ns), how it was found, and any problem."""

    offset_ns: int = 0
    how: str = ""  # e.g. "monotonic -> wall via start_info.0"; "" when nothing was done
    problem: str = ""  # why a file that needed aligning keeps its own clock
    reference_missing: bool = False  # the problem is only that there is no start_info

    def describe(self) -> dict[str, Any]:
        """Plain data for a source's entry in the index metadata ({} when nothing to say)."""
        if self.problem:
            return {"clock": f"own clock: {self.problem}", "offset_ns": 0}
        return {"clock": self.how, "offset_ns": self.offset_ns} if self.how else {}


def offset_for(path: str, kind: str, source: ByteSource) -> ClockOffset:
    """The clock offset of one timeline file of kind `kind` (as discovery named it)."""
    parent = os.path.dirname(path)
    if os.path.basename(parent) == "timeline" and kind in ("msprof", "step_trace",
                                                           "task_time", "hccl"):
        device = os.path.dirname(parent)
        if _DEVICE_DIR.match(os.path.basename(device)):
            return _start_info_offset(device, source)
    if kind in ("kineto", "chrome", "trace"):
        return _kineto_offset(source)
    return ClockOffset()


def _start_info_offset(device_dir: str, source: ByteSource) -> ClockOffset:
    number = _DEVICE_DIR.match(os.path.basename(device_dir)).group(1)  # type: ignore[union-attr]
    name = f"start_info.{number}"
    where = f"{os.path.basename(device_dir)}/{name}"
    try:
        with open(os.path.join(device_dir, name), "rb") as f:
            info = orjson.loads(f.read(1 << 16))
    except FileNotFoundError:
        return ClockOffset(problem=f"{where} is missing (monotonic clock kept)",
                           reference_missing=True)
    except OSError as exc:
        return ClockOffset(problem=f"{where} cannot be read ({exc.strerror or exc})")
    except orjson.JSONDecodeError:
        return ClockOffset(problem=f"{where} is not valid JSON")
    begin_us = _digits(info.get("collectionTimeBegin") if isinstance(info, dict) else None)
    raw_ns = _digits(info.get("clockMonotonicRaw") if isinstance(info, dict) else None)
    if begin_us is None or raw_ns is None:
        return ClockOffset(problem=f"{where} lacks integer collectionTimeBegin and "
                                   "clockMonotonicRaw")
    if not EPOCH_US <= begin_us < 9 * EPOCH_US:  # 2001 to 2255; keeps the offset in int64
        return ClockOffset(problem=f"{where}: collectionTimeBegin {begin_us} is not epoch µs")
    if _already_epoch(source):
        return ClockOffset(how=f"already wall clock ({where} not needed)")
    offset = begin_us * 1000 - raw_ns
    if not -_INT64_MAX <= offset <= _INT64_MAX:  # a clockMonotonicRaw of 20 digits
        return ClockOffset(problem=f"{where}: clockMonotonicRaw {raw_ns} is out of range")
    return ClockOffset(offset, f"monotonic -> wall via {where}")


# Offsets found by _kineto_offset, by the identity of the file read: discovery (finding the
# runs of a folder) and loading both ask, and reading a head costs a few ms a file.
_KINETO_OFFSETS: dict[FileIdentity, ClockOffset] = {}


def _kineto_offset(source: ByteSource) -> ClockOffset:
    found = _KINETO_OFFSETS.get(source.identity)
    if found is None:
        found = _KINETO_OFFSETS[source.identity] = _read_kineto_offset(source)
    return found


def _read_kineto_offset(source: ByteSource) -> ClockOffset:
    head = _head(source)
    events_at = head.find(b'"traceEvents"')
    # Kineto writes its top-level keys before traceEvents; only those count (not an arg).
    m = _BASE_TIME.search(head, 0, events_at if events_at >= 0 else len(head))
    if m is None:
        return ClockOffset()
    text = m.group(1).decode("ascii", "replace")
    base = _digits(text)
    if base is None or base > _INT64_MAX:
        return ClockOffset(problem=f"baseTimeNanoseconds {text[:30]} is not an integer of "
                                   "nanoseconds")
    if base and _already_epoch(source, head):
        return ClockOffset(how="already wall clock (baseTimeNanoseconds not needed)")
    return ClockOffset(base, "relative -> wall via baseTimeNanoseconds")


def first_ts_ns(source: ByteSource, offset_ns: int = 0) -> int | None:
    """The earliest positive timestamp among the first ones of a file, plus the offset it
    gets (ns); None when its head holds none. A cheap look, not the trace's start."""
    head = _head(source, _FIRST_BYTES)
    values = []
    for m in _TS.finditer(head):
        if m.end() == len(head) or len(values) == 1000:
            break  # a number cut by the end of the head would read smaller than it is
        values.append(int(m.group(1)))
    positive = [v for v in values if v > 0]  # metadata events often sit at ts 0
    return min(positive) * 1000 + offset_ns if positive else None


def clock_of(first_ns: int | None) -> str:
    """WALL_CLOCK for an epoch time (ns), OWN_CLOCK for a zero-based or monotonic one."""
    if first_ns is None:
        return ""
    return WALL_CLOCK if first_ns >= EPOCH_US * 1000 else OWN_CLOCK


def _digits(value: Any) -> int | None:
    """A non-negative integer from a JSON integer or a string of ASCII digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None


def _head(source: ByteSource, size: int = _HEAD_BYTES) -> bytes:
    try:
        return source.read_range(0, size)
    except OSError:
        return b""  # the indexer reports the unreadable file


def _already_epoch(source: ByteSource, head: bytes | None = None) -> bool:
    """True if the first timestamps of the file already look like epoch µs."""
    if head is None:
        head = _head(source)
    # The first thousand only: a head of megabytes holds hundreds of thousands.
    values = [int(m.group(1)) for m in itertools.islice(_TS.finditer(head), 1000)]
    return bool(values) and max(values) >= EPOCH_US


def file_offsets(index: TraceIndex, refs: np.ndarray) -> np.ndarray:
    """Per event (by its ordinal `ref`), the offset (ns) its file's timestamps got to put
    the files of a profile on one clock (its source's `offset_ns` in the index metadata; 0
    for most): a time less its offset is the time as its file writes it."""
    sources = index.meta.get("sources", [])
    offsets = np.array([int(s.get("offset_ns", 0)) for s in sources] + [0], np.int64)
    if not len(refs) or not offsets.any():
        return np.zeros(len(refs), np.int64)
    batch = np.searchsorted(index.col("batches.first_ordinal"), refs, side="right") - 1
    files = np.where(batch >= 0, index.col("batches.file")[np.maximum(batch, 0)], -1)
    return offsets[np.where((files >= 0) & (files < len(sources)), files, len(sources))]
