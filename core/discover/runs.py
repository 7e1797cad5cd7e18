"""Runs in a folder: which rank and device folders were captured together, and which not.

A folder may hold several separate captures side by side: two jobs' `rank0_ascend_pt` dirs,
PROF dirs of different days, a zero-based MindSpore timeline beside an epoch msprof one.
Opened as one profile they would share one time axis (56 years wide) and name rank 0 twice.
So the capture folders of a profile (a `PROF_*` or `*_ascend_pt` dir, a dir holding
`profiler_info*.json` or `ASCEND_PROFILER_OUTPUT`; outside them a whole trace is one of its
own and other files count by their directory) are put into runs: two folders are one run
unless they hold the same rank (or device), their capture times are far apart, or their
clocks are of different kinds (wall against zero-based or monotonic). A path of several runs
opens one of them by number. Within one capture folder clocks may still differ: loading
counts that (`mixed_clocks`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import orjson

from proftui.core.discover.clock import (
    EPOCH_US,
    OWN_CLOCK,
    WALL_CLOCK,
    clock_of,
    first_ts_ns,
    offset_for,
)
from proftui.core.discover.profile import ProfileLayout, discover, group_of, rank_dirs
from proftui.core.model.errors import ProftuiError
from proftui.core.model.naming import natural_key
from proftui.core.source.streams import ByteSource

# Ranks of one job start their profilers within seconds; two captures of a job to compare
# are minutes apart (the real torch_npu pair in the corpus: 28 minutes).
RUN_GAP_NS = 5 * 60 * 10**9
_EPOCH_NS = (EPOCH_US * 1000, 9 * EPOCH_US * 1000)  # 2001 to 2255
_OUTPUT_DIR = "ASCEND_PROFILER_OUTPUT"
_PROF_STAMP = re.compile(r"^PROF_\d+_(\d{17})_")
_WORKER_STAMP = re.compile(r"_(\d{17})_ascend_(?:pt|ms)$")
_ID = re.compile(r"^(rank|device) \d+$")
_WHOLE = ("kineto", "chrome", "trace_view", "mindspore", "trace")
MIXED = "mixed clocks"


@dataclass(frozen=True)
class Run:
    """One capture: its folders, the ranks or devices in them, when and on which clock."""

    number: int  # 1, 2, ... in order of capture time
    folders: tuple[str, ...]  # absolute paths of its capture folders
    groups: tuple[str, ...]  # "rank 0", "device 1", ... (empty when none is named)
    start_ns: int | None  # wall clock (epoch ns) when known
    stamp_ns: int | None  # the local time in its folder names, read as if UTC
    clock: str  # WALL_CLOCK, OWN_CLOCK, MIXED or "" when it has no timeline

    def where(self, root: str, others: Sequence[Run] = ()) -> str:
        """Its folders relative to `root`: the one folder holding all of them and nothing of
        another run when there is one, else the folders themselves."""
        rel = [os.path.relpath(f, root) for f in self.folders]
        common = os.path.commonpath(self.folders)
        foreign = [f for r in others if r is not self for f in r.folders]
        if len(rel) > 1 and common != root and not any(
                f == common or f.startswith(common + os.sep) for f in foreign):
            return f"{os.path.relpath(common, root)}{os.sep}"
        shown = ", ".join(rel[:4])
        return shown + (f" and {len(rel) - 4} more" if len(rel) > 4 else "")

    def when(self) -> str:
        """When it was captured, as far as it is known."""
        if self.start_ns is not None:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.start_ns // 10**9))
            return f"captured {stamp} UTC"
        if self.stamp_ns is not None:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.stamp_ns // 10**9))
            own = "; own clock (zero-based or monotonic)" if self.clock == OWN_CLOCK else ""
            return f"captured {stamp} (local time, from its folder name){own}"
        if self.clock == OWN_CLOCK:
            return "own clock (zero-based or monotonic), no date"
        return "time unknown"

    def line(self, root: str, others: Sequence[Run] = ()) -> str:
        """One line for a list of runs: number, folders, ranks, time."""
        groups = ", ".join(self.groups[:8]) + (", ..." if len(self.groups) > 8 else "")
        return (f"{self.number:>3}  {self.where(root, others)}"
                + (f": {groups}" if groups else "") + f"; {self.when()}")


class SeveralRunsError(ProftuiError):
    """A path holds several separate runs and none was chosen; `runs` lists them."""

    def __init__(self, path: str, root: str, runs: list[Run], reasons: list[str]) -> None:
        self.path, self.root, self.runs, self.reasons = path, root, runs, reasons
        why = f" ({', '.join(reasons)})" if reasons else ""
        super().__init__(f"{path} holds {len(runs)} separate runs{why}; pick one with "
                         "--run N, or open its folder.")

    def lines(self) -> list[str]:
        """The runs, one line each."""
        return [run.line(self.root, self.runs) for run in self.runs]


def open_run(path: str, run: int | None = None,
             keep: Callable[[str], bool] | None = None) -> ProfileLayout:
    """Discover `path` (the files `keep` accepts, all when None: see discover), narrowed to
    its run number `run` when it holds several.

    Raises :class:`SeveralRunsError` when it holds several and `run` is None, and
    :class:`ProftuiError` when there is no run of that number.
    """
    layout = discover(path, keep)
    runs, reasons = find_runs(layout)
    if run is not None and not 1 <= run <= len(runs):
        held = "one run" if len(runs) == 1 else f"{len(runs)} runs (1 to {len(runs)})"
        raise ProftuiError(f"{path} holds {held}; there is no run {run}.")
    if len(runs) == 1:
        return layout
    if run is None:
        raise SeveralRunsError(path, layout.root, runs, reasons)
    chosen = runs[run - 1]
    captures, whole = _captures(layout), _whole_traces(layout)
    folders = set(chosen.folders)
    narrowed = discover(path, keep=lambda p: (keep is None or keep(p)) and _folder_of(
        layout.root, p, captures, whole) in folders)
    narrowed.run = {"number": run, "of": len(runs), "where": chosen.where(layout.root, runs),
                    "folders": list(chosen.folders), "groups": list(chosen.groups),
                    "clock": chosen.clock}
    return narrowed


def find_runs(layout: ProfileLayout) -> tuple[list[Run], list[str]]:
    """The runs of a discovered profile, in order of capture time, and why there are several
    ("rank 0 twice", "capture times far apart", ...; empty for one run)."""
    captures, whole = _captures(layout), _whole_traces(layout)
    members: dict[str, list[tuple[str, str]]] = {}  # folder -> (path, timeline kind or "")
    for t in layout.timelines:
        members.setdefault(_folder_of(layout.root, t.path, captures, whole), []).append(
            (t.path, t.kind))
    for c in layout.tables:
        members.setdefault(_folder_of(layout.root, c.path, captures, whole), []).append(
            (c.path, ""))
    if len(members) <= 1:
        return [Run(1, tuple(members), (), None, None, "")], []
    ranks = rank_dirs(layout.run_info)
    info: dict[str, list[str]] = {}
    for p in layout.run_info:
        info.setdefault(_folder_of(layout.root, p, captures, whole), []).append(p)
    folders = [_Folder.of(layout.root, f, files, info.get(f, []), ranks)
               for f, files in members.items()]
    folders.sort(key=lambda f: (f.order_ns(), natural_key(f.path)))
    runs: list[_Gathered] = []
    reasons: list[str] = []
    for folder in folders:
        conflicts = [gathered.conflict(folder) for gathered in runs]
        fits = [g for g, why in zip(runs, conflicts) if why is None]
        if fits:
            min(fits, key=lambda g: g.distance(folder)).add(folder)
            continue
        runs.append(_Gathered([folder]))
        reasons += [why for why in dict.fromkeys(conflicts) if why and why not in reasons]
    return [g.run(n) for n, g in enumerate(runs, 1)], reasons


def _captures(layout: ProfileLayout) -> set[str]:
    """Capture folders known by what they hold: profiler_info files, ASCEND_PROFILER_OUTPUT.
    (PROF_* and *_ascend_pt dirs are known by their names.)"""
    found = {os.path.dirname(p) for p in layout.run_info
             if os.path.basename(p).startswith("profiler_info")}
    for item in (*layout.timelines, *layout.tables):
        parts = Path(item.path).parts
        if _OUTPUT_DIR in parts:
            found.add(str(Path(*parts[:parts.index(_OUTPUT_DIR)])))
    return found


def _whole_traces(layout: ProfileLayout) -> set[str]:
    """Timelines that are a whole trace each (Kineto, Chrome, trace_view, MindSpore), unlike
    msprof's, which are one device's timeline in slices or iterations."""
    return {t.path for t in layout.timelines if t.kind in _WHOLE}


def _is_capture(path: str, captures: set[str]) -> bool:
    name = os.path.basename(path)
    return (name.startswith("PROF_") or name.endswith(("_ascend_pt", "_ascend_ms"))
            or path in captures)


def _folder_of(root: str, path: str, captures: set[str], whole: set[str]) -> str:
    """The capture folder of a file: the outermost one from `root` down; else a whole trace
    is a capture of its own (unrelated Kineto traces lie side by side), other files count
    by their directory."""
    here = root
    if _is_capture(here, captures):
        return here
    for part in Path(os.path.relpath(path, root)).parts[:-1]:
        here = os.path.join(here, part)
        if _is_capture(here, captures):
            return here
    return path if path in whole else os.path.dirname(path)


@dataclass
class _Folder:
    """What one capture folder tells of its run."""

    path: str
    labels: set[str]  # ranks if it names any, else devices
    ids: set[str] = field(default_factory=set)  # the labels that may not be in a run twice
    lo_ns: int | None = None  # wall-clock window
    hi_ns: int | None = None
    stamp_ns: int | None = None  # from the folder names (local time)
    clock: str = ""
    home: str = ""  # the directory it is (or a whole trace is in)

    @classmethod
    def of(cls, root: str, path: str, files: list[tuple[str, str]], info: list[str],
           ranks: dict[str, str]) -> _Folder:
        labels = {part for file, _ in files for part in group_of(root, file, ranks).split(" / ")
                  if _ID.match(part)}
        named = {x for x in labels if x.startswith("rank ")}
        folder = cls(path, named or labels, home=path if os.path.isdir(path)
                     else os.path.dirname(path))
        times = [t for p in info for t in _info_times(p)]
        clocks = set()
        for file, kind in files:
            if kind:
                first = _first_ns(file, kind)
                clocks.add(clock_of(first))
                if first is not None and _EPOCH_NS[0] <= first < _EPOCH_NS[1]:
                    times.append(first)
        clocks.discard("")
        folder.clock = MIXED if len(clocks) > 1 else (clocks.pop() if clocks else "")
        if times:
            folder.lo_ns, folder.hi_ns = min(times), max(times)
            # Dated on the wall clock (summary tables only): not a run for own-clock traces.
            folder.clock = folder.clock or WALL_CLOCK
        stamps = [s for file, _ in files for part in Path(os.path.relpath(file, root)).parts
                  if (s := _stamp_ns(part)) is not None]
        folder.stamp_ns = min(stamps) if stamps else None
        if times or stamps or any(kind for _, kind in files):
            # Summary tables with nothing to date them go with the timeline of their rank
            # beside them (a MindSpore profiler/ dir, a folder of ranks): no conflict.
            folder.ids = folder.labels
        return folder

    def order_ns(self) -> float:
        known = self.lo_ns if self.lo_ns is not None else self.stamp_ns
        return float("inf") if known is None else known


@dataclass
class _Gathered:
    """The folders of one run as it is being gathered."""

    folders: list[_Folder]
    ids: set[str] = field(default_factory=set)
    labels: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.ids = set().union(*(f.ids for f in self.folders))
        self.labels = set().union(*(f.labels for f in self.folders))

    def add(self, folder: _Folder) -> None:
        self.folders.append(folder)
        self.ids |= folder.ids
        self.labels |= folder.labels

    @property
    def clock(self) -> str:
        return next((f.clock for f in self.folders if f.clock), "")

    def wall_ns(self) -> tuple[int, int] | None:
        """The wall-clock window of its folders that know theirs."""
        known = [(f.lo_ns, f.hi_ns) for f in self.folders
                 if f.lo_ns is not None and f.hi_ns is not None]
        return (min(k[0] for k in known), max(k[1] for k in known)) if known else None

    def stamps_ns(self) -> tuple[int, int] | None:
        """The first and last time in its folder names."""
        known = [f.stamp_ns for f in self.folders if f.stamp_ns is not None]
        return (min(known), max(known)) if known else None

    def gap_ns(self, folder: _Folder) -> int | None:
        """How far apart in time (0 when the windows meet; None when not comparable).

        Wall-clock times are compared with wall-clock times, folder-name times (local) with
        folder-name times only.
        """
        for mine, lo, hi in ((self.wall_ns(), folder.lo_ns, folder.hi_ns),
                             (self.stamps_ns(), folder.stamp_ns, folder.stamp_ns)):
            if mine is not None and lo is not None and hi is not None:
                return max(lo - mine[1], mine[0] - hi, 0)
        return None

    def conflict(self, folder: _Folder) -> str | None:
        """Why `folder` cannot be of this run, or None if it can."""
        if MIXED in (self.clock, folder.clock) or (
                self.clock and folder.clock and self.clock != folder.clock):
            return "clocks of different kinds"
        gap = self.gap_ns(folder)
        if gap is not None and gap > RUN_GAP_NS:
            return "capture times far apart"
        twice = self.ids & folder.ids
        if twice:
            return f"{min(twice, key=natural_key)} twice"
        return None

    def distance(self, folder: _Folder) -> tuple[int, bool, bool]:
        """Closer in time first, then a run with a folder in the same directory, then one
        beside it (summary tables without a time go with the trace beside them)."""
        gap = self.gap_ns(folder)
        return (RUN_GAP_NS if gap is None else gap,
                all(f.home != folder.home for f in self.folders),
                all(os.path.dirname(f.home) != os.path.dirname(folder.home)
                    for f in self.folders))

    def run(self, number: int) -> Run:
        window = self.wall_ns()
        stamps = self.stamps_ns()
        folders = sorted((f.path for f in self.folders), key=natural_key)
        return Run(number, tuple(folders), tuple(sorted(self.labels, key=natural_key)),
                   window[0] if window else None, stamps[0] if stamps else None, self.clock)


def _first_ns(path: str, kind: str) -> int | None:
    """The first wall-clock or own-clock time of a timeline (ns), None if it has none."""
    try:
        source = ByteSource(path)
        return first_ts_ns(source, offset_for(path, kind, source).offset_ns)
    except (OSError, ProftuiError):
        return None  # loading reports the unreadable file


def _info_times(path: str) -> list[int]:
    """Wall-clock times (ns) a profiler_info, start_info or end_info file gives."""
    try:
        with open(path, "rb") as f:
            data = orjson.loads(f.read(1 << 20))
    except (OSError, orjson.JSONDecodeError):
        return []
    if not isinstance(data, dict):
        return []
    name = os.path.basename(path)
    if name.startswith("profiler_info"):  # ns: the end, and the start by the monotonic clock
        end_info = data.get("end_info") if isinstance(data.get("end_info"), dict) else {}
        start_info = data.get("start_info") if isinstance(data.get("start_info"), dict) else {}
        end = _int(end_info.get("collectionTimeEnd"))
        if end is None or not _EPOCH_NS[0] <= end < _EPOCH_NS[1]:
            return []
        raw_end = _int(end_info.get("MonotonicTimeEnd"))
        raw_start = _int(start_info.get("start_monotonic"))
        if raw_end is not None and raw_start is not None and 0 <= raw_end - raw_start < end:
            return [end - (raw_end - raw_start), end]
        return [end]
    key = "collectionTimeBegin" if name.startswith("start_info") else "collectionTimeEnd"
    us = _int(data.get(key))  # msprof's start_info / end_info: µs
    return [us * 1000] if us is not None and _EPOCH_NS[0] <= us * 1000 < _EPOCH_NS[1] else []


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 25:
        return int(value)
    return None


def _stamp_ns(name: str) -> int | None:
    """The time in a PROF_{n}_{YYYYMMDDhhmmssmmm}_ or {worker}_{stamp}_ascend_pt name (local
    time, read as if UTC: comparable with other such names only)."""
    m = _PROF_STAMP.match(name) or _WORKER_STAMP.search(name)
    if m is None:
        return None
    try:
        moment = datetime.strptime(m.group(1)[:14], "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return ((moment - datetime(1970, 1, 1)) // timedelta(milliseconds=1)
            + int(m.group(1)[14:])) * 10**6
