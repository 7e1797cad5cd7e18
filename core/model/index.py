"""TraceIndex: the frozen, column-oriented index of one trace (numpy arrays and a string table).

Tables, each a set of equally long columns:

- ``slices``: start, dur (int64 ns), track, name, cat (int32), ref (uint32: the event's ordinal
  in the profile, to read its `args` later), depth (int16 row within the track). Sorted by
  track, then start.
- ``tracks`` in display order: kind, process, pid, tid, name, sort_index, rows, first_slice,
  slice_count. ``processes``: pid, name, labels, sort_index.
- ``instants``: ts, track, name, cat, ref, scope. ``counters``: one series per (process, name,
  key) with samples sorted by series then time. ``flows``: one edge per consecutive pair of
  points of a flow, with the slices they bind to (-1 when unbound).
- ``batches``: byte ranges of the decoded batches, to re-read one event's `args`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.strings import StringTable

TRACK_KINDS = ("thread", "async", "process", "global")


# Tracks described by `TraceIndex.summary` unless asked for all of them.
LISTED_TRACKS = 200


class TraceIndex:
    """An indexed trace. Columns are read-only numpy arrays, possibly memory-mapped."""

    def __init__(self, arrays: dict[str, np.ndarray], strings: StringTable,
                 meta: dict[str, Any], diagnostics: Diagnostics) -> None:
        self.arrays = arrays
        self.strings = strings
        self.meta = meta
        self.diagnostics = diagnostics

    @classmethod
    def from_columns(cls, *, strings: StringTable, meta: dict[str, Any],
                     diagnostics: Diagnostics, **tables: dict) -> TraceIndex:
        arrays: dict[str, np.ndarray] = {}

        def add(prefix: str, table: dict) -> None:
            for key, value in table.items():
                if isinstance(value, dict):
                    add(key, value)
                else:
                    arrays[f"{prefix}.{key}"] = np.ascontiguousarray(value)

        for name, table in tables.items():
            add(name, table)
        return cls(arrays, strings, meta, diagnostics)

    def col(self, name: str) -> np.ndarray:
        """One column by its table-qualified name, e.g. ``"slices.start"``."""
        return self.arrays[name]

    # -- sizes and span -------------------------------------------------------------------------

    @property
    def n_slices(self) -> int:
        return len(self.arrays["slices.start"])

    @property
    def n_tracks(self) -> int:
        return len(self.arrays["tracks.kind"])

    @property
    def n_processes(self) -> int:
        return len(self.arrays["processes.pid"])

    @property
    def start_ns(self) -> int:
        return int(self.meta.get("start_ns", 0))

    @property
    def end_ns(self) -> int:
        return int(self.meta.get("end_ns", 0))

    @property
    def display_time_unit(self) -> str:
        unit = self.meta.get("displayTimeUnit")
        return unit if unit in ("ms", "ns", "us") else "ms"

    # -- names ----------------------------------------------------------------------------------

    def process_label(self, p: int, *, group: bool = True, pid: bool = True,
                      labels: bool = True) -> str:
        """`rank 0: python (41207) [CPU]`; shorter forms leave out the group, the pid (of a
        named process) or the labels."""
        s = self.strings
        pid_text = s[self.arrays["processes.pid"][p]]
        name = s[self.arrays["processes.name"][p]]
        label_text = s[self.arrays["processes.labels"][p]] if labels else ""
        group_text = s[self.arrays["processes.group"][p]] if group else ""
        if name:
            text = f"{name} ({pid_text})" if pid and pid_text else name
        else:
            text = f"Process {pid_text}" if pid_text else "(no pid)"
        text = f"{group_text}: {text}" if group_text else text
        return f"{text} [{label_text}]" if label_text else text

    def track_label(self, t: int) -> str:
        s = self.strings
        name = s[self.arrays["tracks.name"][t]]
        kind = TRACK_KINDS[int(self.arrays["tracks.kind"][t])]
        if kind == "thread":
            tid = s[self.arrays["tracks.tid"][t]]
            if name and tid and tid not in name:
                return f"{name} ({tid})"
            return name or f"Thread {tid}"
        return f"{name} ({kind})" if kind == "async" else name

    def slice_name(self, i: int) -> str:
        return self.strings[self.arrays["slices.name"][i]]

    # -- args -----------------------------------------------------------------------------------

    # -- summaries ------------------------------------------------------------------------------

    def summary(self, listed_tracks: int | None = LISTED_TRACKS) -> dict[str, Any]:
        """What the trace holds, as plain data (the `info` command prints it).

        Tracks are described up to `listed_tracks` of them in all (None: every one), in
        process order; each process says how many it has (a trace may have 10^6 threads).
        """
        a = self.arrays
        s = self.strings
        processes = []
        track_proc = a["tracks.process"].astype(np.int64)
        order = np.argsort(track_proc, kind="stable")  # tracks by process, others first
        bounds = np.searchsorted(track_proc[order], np.arange(-1, len(a["processes.pid"]) + 1))
        per_proc = [order[bounds[i]: bounds[i + 1]] for i in range(len(bounds) - 1)]
        left = self.n_tracks if listed_tracks is None else listed_tracks
        self._instant_counts = np.bincount(a["instants.track"], minlength=self.n_tracks)
        self._series_counts = np.bincount(a["counters.series_track"], minlength=self.n_tracks)

        def described(tracks: np.ndarray) -> list[dict[str, Any]]:
            nonlocal left
            listed = tracks[:max(left, 0)].tolist()
            left -= len(listed)
            return [self._track_summary(t) for t in listed]

        for p, tracks in enumerate(per_proc[1:]):
            processes.append({
                "group": s[a["processes.group"][p]],
                "pid": s[a["processes.pid"][p]],
                "name": s[a["processes.name"][p]],
                "labels": s[a["processes.labels"][p]],
                "sort_index": int(a["processes.sort_index"][p]),
                "n_tracks": len(tracks),
                "tracks": described(tracks),
            })
        others = described(per_proc[0])
        return {
            "sources": self.meta.get("sources", []),
            "format": self.meta.get("format"),
            # batches read by the native reader and by the Python path (Chrome JSON only)
            "reader": self.meta.get("reader"),
            "display_time_unit": self.display_time_unit,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "duration_ns": self.end_ns - self.start_ns,
            "events": int(sum(self.meta.get("phase_counts", {}).values())),
            "phase_counts": self.meta.get("phase_counts", {}),
            "slices": self.n_slices,
            "instants": len(a["instants.ts"]),
            "counter_series": len(a["counters.series_track"]),
            "counter_samples": len(a["counters.sample_ts"]),
            "flow_edges": len(a["flows.src_slice"]),
            "processes": processes,
            "other_tracks": others,
            "n_tracks": self.n_tracks,
            "n_other_tracks": len(per_proc[0]),
            "diagnostics": self.diagnostics.to_list(),
            "profile": self.meta.get("profile"),
        }

    def _track_summary(self, t: int) -> dict[str, Any]:
        a = self.arrays
        return {
            "track": t,
            "name": self.track_label(t),
            "kind": TRACK_KINDS[int(a["tracks.kind"][t])],
            "tid": self.strings[a["tracks.tid"][t]],
            "slices": int(a["tracks.slice_count"][t]),
            "rows": int(a["tracks.rows"][t]),
            "instants": int(self._instant_counts[t]),
            "counter_series": int(self._series_counts[t]),
        }
