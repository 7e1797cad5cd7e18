"""Turning decoded events into index columns: interning, pairing, counters and metadata.

The builder takes batches of events from an importer, keeps per-batch numpy columns (no Python
object per event survives a batch) and, at the end, pairs B/E and async events, lays slices out
on lanes, binds flows and hands frozen arrays to :class:`~proftui.core.model.index.TraceIndex`.
"""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np

from proftui.core.build import lanes as layout
from proftui.core.build.flows import flow_edges, flow_ids
from proftui.core.build.pairing import pair_async, pair_begin_end
from proftui.core.build.tracks import (
    ASYNC_TRACK,
    GLOBAL_TRACK,
    PROCESS_TRACK,
    THREAD,
    Meta,
    TrackIds,
    fill_meta,
    hashable,
    id_token,
    norm_id,
    token,
    track_table,
)
from proftui.core.importers.chrome_json import Event, event_args
from proftui.core.importers.kineto_memory import MEMORY_EVENT, memory_samples
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.index import TraceIndex
from proftui.core.model.strings import StringInterner, json_text
from proftui.core.model.timeconv import one_us_to_ns, us_to_ns
from proftui.core.runtime.malloc import release_free_memory

# Phase groups; each phase letter maps to one.
X, B, E, INSTANT, COUNTER, META, FLOW, ASYNC, LEGACY_ASYNC, OTHER, UNKNOWN, MISSING = range(12)
_GROUP = {
    "X": X, "B": B, "E": E, "i": INSTANT, "I": INSTANT, "R": INSTANT, "C": COUNTER, "M": META,
    "s": FLOW, "t": FLOW, "f": FLOW, "b": ASYNC, "n": ASYNC, "e": ASYNC,
    "S": LEGACY_ASYNC, "T": LEGACY_ASYNC, "p": LEGACY_ASYNC, "F": LEGACY_ASYNC,
    "N": OTHER, "O": OTHER, "D": OTHER, "P": OTHER, "v": OTHER, "V": OTHER,
    "(": OTHER, ")": OTHER, "c": OTHER, "": MISSING,
}
SCOPE_THREAD, SCOPE_PROCESS, SCOPE_GLOBAL = 0, 1, 2
_SCOPES = {"g": SCOPE_GLOBAL, "p": SCOPE_PROCESS}


class _PhaseGroups(dict):
    def __missing__(self, key: object) -> int:
        return MISSING if key is None else UNKNOWN


_group_of = _PhaseGroups(_GROUP)


class _Chunks:
    """Per-batch numpy arrays of one table, concatenated once at the end."""

    def __init__(self, **dtypes: Any) -> None:
        self.dtypes = dtypes
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in dtypes}

    def append(self, keep: np.ndarray | None = None, **cols: Any) -> None:
        """Add one batch of rows; with `keep`, only the rows where it is True."""
        if keep is not None and keep.all():
            keep = None
        for key, dtype in self.dtypes.items():
            col = np.asarray(cols[key], dtype=dtype)
            self.parts[key].append(col if keep is None else col[keep])

    def concat(self) -> dict[str, np.ndarray]:
        """One array per column; the parts are released (the table is empty afterwards)."""
        out = {}
        for key, parts in self.parts.items():
            out[key] = np.concatenate(parts) if parts else np.zeros(0, self.dtypes[key])
            parts.clear()
        return out


@dataclass
class _Counters:
    series: dict[tuple, int] = field(default_factory=dict)
    series_track: list[int] = field(default_factory=list)
    series_name: list[int] = field(default_factory=list)
    sample_series: list[int] = field(default_factory=list)
    sample_ts: list[int] = field(default_factory=list)
    sample_value: list[float] = field(default_factory=list)
    sample_ref: list[int] = field(default_factory=list)


class TraceBuilder:
    """Accumulates events batch by batch and builds a :class:`TraceIndex`."""

    def __init__(self, diagnostics: Diagnostics, first_ordinal: int = 0) -> None:
        self.diagnostics = diagnostics
        self.ref_base = first_ordinal  # events of later files of a profile number on
        # Added to every timestamp of the file being read: puts it on the profile's shared
        # clock (see proftui.core.discover.clock). Set before the file's first batch.
        self.time_offset_ns = 0
        self.strings = StringInterner()
        self.tracks = TrackIds()
        self.phase_counts: Counter[str] = Counter()
        self.processes: dict[Any, Meta] = {}
        self.threads: dict[tuple, Meta] = {}
        self.empty_events = 0
        self._slices = _Chunks(start=np.int64, dur=np.int64, track=np.int32, name=np.int32,
                               cat=np.int32, ref=np.int64, cname=np.int32)
        self._be = _Chunks(ts=np.int64, track=np.int32, name=np.int32, cat=np.int32,
                           ref=np.int64, begin=np.bool_)
        self._instants = _Chunks(ts=np.int64, track=np.int32, name=np.int32, cat=np.int32,
                                 ref=np.int64, scope=np.int8)
        # Flow points; a flow is keyed by (cat, name, id), the id numeric or an interned string.
        self._flows = _Chunks(ts=np.int64, track=np.int32, cat=np.int32, name=np.int32,
                              id_num=np.int64, id_str=np.int32, phase=np.int8,
                              enclosing=np.bool_, ref=np.int64)
        # Flow ends bound to a slice by its ordinal: flow v2 (X events with bind_id; no
        # category or name) and importers that know both ends (SQLite exports).
        self._bound = _Chunks(ref=np.int64, id_num=np.int64, id_str=np.int32,
                              phase=np.int8, cat=np.int32, name=np.int32)
        self._counters = _Counters()
        self._complete_labels = _Labels(
            lambda evs: [(e.cname, e.pid, e.tid, e.name, e.cat) for e in evs],
            ("cname", "track", "name", "cat"))
        self._be_labels = _Labels(lambda evs: [(e.pid, e.tid, e.name, e.cat) for e in evs],
                                  ("track", "name", "cat"))
        self._flow_labels = _Labels(lambda evs: [(e.pid, e.tid, e.cat, e.name) for e in evs],
                                    ("track", "cat", "name"))
        self._async_events: list[tuple] = []
        self._flow_count = 0  # flows added by add_flow_pairs (their ids)

    # -- ingest -------------------------------------------------------------------------------

    def add_events(self, events: list[Event], first_ordinal: int, offset: int) -> None:
        """Add one batch of decoded events; `first_ordinal` numbers the first of them."""
        phs = [e.ph for e in events]
        try:
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        except TypeError:  # an unhashable ph (a list or object)
            phs = [p if isinstance(p, str) else json_text(p) for p in phs]
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        ref0 = self.ref_base + first_ordinal
        times = self._shift(*us_to_ns([e.ts for e in events]))  # one conversion a batch
        dur_us = getattr(events, "dur_us", None)  # durations the decoder converted already
        if len(groups) and groups.min() == groups.max():
            self._count_phases(int(groups[0]), phs)
            self._add_group(int(groups[0]), events, np.arange(len(events)) + ref0, offset, times,
                            dur_us)
            return
        order = np.argsort(groups, kind="stable")
        bounds = np.searchsorted(groups[order], np.arange(MISSING + 2))
        for g in range(MISSING + 1):
            lo, hi = bounds[g], bounds[g + 1]
            if lo == hi:
                continue
            idx = order[lo:hi]
            pick = _picker(idx.tolist())
            self._count_phases(g, pick(phs))
            self._add_group(g, pick(events), idx + ref0, offset,
                            (times[0][idx], times[1][idx]),
                            dur_us[idx] if dur_us is not None and g == X else None)

    def _shift(self, ts: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Timestamps moved to the shared clock; one the move would overflow is unusable."""
        offset = self.time_offset_ns
        if not offset:
            return ts, ok
        room = (ts <= _INT64_MAX - offset) if offset > 0 else (ts >= _INT64_MIN - offset)
        ok = ok & room
        # offset * ok: nothing is added where the sum would overflow (those are dropped)
        return np.where(ok, ts + np.int64(offset) * ok, 0), ok

    def _one_ns(self, value: Any) -> int | None:
        """One timestamp in ns on the shared clock, or None if unusable."""
        ts = one_us_to_ns(value)
        if ts is None:
            return None
        ts += self.time_offset_ns
        return ts if _INT64_MIN <= ts <= _INT64_MAX else None

    def _count_phases(self, group: int, phs: list[Any]) -> None:
        if group == X:  # the bulk of most traces: no need to look at each
            self.phase_counts["X"] += len(phs)
        else:
            self.phase_counts.update(phs)

    def _add_group(self, group: int, evs: list[Event], refs: np.ndarray, offset: int,
                   times: tuple[np.ndarray, np.ndarray], dur_us: np.ndarray | None = None,
                   ) -> None:
        if group in (X, B, E, INSTANT, FLOW, UNKNOWN):
            bad = len(evs) - int(np.count_nonzero(times[1]))
            if bad:
                self.diagnostics.add("bad_timestamp", bad, offset)
        if group == X:
            self._add_complete(evs, refs, offset, times, dur_us)
        elif group in (B, E):
            ts, ok = times
            track, name, cat = self._labels_of(self._be_labels, evs)
            self._be.append(ok, ts=ts, track=track, name=name, cat=cat, ref=refs,
                            begin=np.full(len(evs), group == B))
        elif group == INSTANT:
            self._add_instants(evs, refs, times)
        elif group == FLOW:
            self._add_flows(evs, refs, times)
        elif group == COUNTER:
            for ev, ref in zip(evs, refs.tolist()):
                self._add_counter(ev, ref, offset)
        elif group == META:
            for ev in evs:
                self._add_metadata(ev, offset)
        elif group in (ASYNC, LEGACY_ASYNC):
            for ev, ref in zip(evs, refs.tolist()):
                self._add_async(ev, ref, offset)
        elif group == UNKNOWN:  # kept, as instants: a later version of the format's, or a
            # tool's own; what it is for is unknown, where and when it happened is not
            for ev in evs:
                self.diagnostics.add("unknown_phase", 1, offset, json_text(ev.ph)[:40])
            self._add_instants(evs, refs, times)
        elif group == MISSING:
            for ev in evs:
                if ev.name is None and ev.ts is None and ev.pid is None:
                    self.empty_events += 1  # `{}`, as Paddle ends its arrays
                else:
                    self.diagnostics.add("missing_phase", 1, offset, json_text(ev.name)[:40])

    def _intern(self, values: list[Any]) -> np.ndarray:
        try:
            return np.fromiter(map(self.strings.__getitem__, values), np.int32, len(values))
        except TypeError:  # unhashable values: lists or objects where text was expected
            fixed = [v if v is None or isinstance(v, (str, int, float)) else json_text(v)
                     for v in values]
            self.diagnostics.add("bad_field", len(values) - sum(a is b for a, b in
                                                                 zip(fixed, values)))
            return np.fromiter(map(self.strings.__getitem__, fixed), np.int32, len(values))

    def _labels_of(self, labels: _Labels, evs: list[Event]) -> list[np.ndarray]:
        """The ids of each of `labels`' parts, per event."""
        ids = labels.of(self, evs)
        if ids is not None:
            return list(ids)
        # a field that cannot be a dictionary key (a list, an object): one at a time
        return [self._thread_tracks(evs) if part == "track"
                else self._intern([getattr(e, part) for e in evs]) for part in labels.parts]

    def _thread_tracks(self, evs: list[Event]) -> np.ndarray:
        keys = zip([e.pid for e in evs], [e.tid for e in evs])
        try:
            return np.fromiter(map(self.tracks.__getitem__, keys), np.int32, len(evs))
        except TypeError:
            fixed = [(token(e.pid), token(e.tid)) for e in evs]
            self.diagnostics.add("bad_field", sum(1 for e in evs if not (hashable(e.pid) and
                                                                         hashable(e.tid))))
            return np.fromiter(map(self.tracks.__getitem__, fixed), np.int32, len(evs))

    def _add_complete(self, evs: list[Event], refs: np.ndarray, offset: int,
                      times: tuple[np.ndarray, np.ndarray],
                      dur_us: np.ndarray | None = None) -> None:
        ts, ok = times
        dur, dok = (_durations_ns([e.dur for e in evs]) if dur_us is None
                    else _float_durations_ns(dur_us))
        bad_dur = ok & ~dok
        if bad_dur.any():
            self.diagnostics.add("bad_duration", int(bad_dur.sum()), offset)
        negative = dur < 0
        if negative.any():
            self.diagnostics.add("negative_duration", int(negative.sum()), offset)
            dur[negative] = 0
        cname, track, name, cat = self._labels_of(self._complete_labels, evs)
        self._slices.append(ok, start=ts, dur=dur, track=track, name=name, cat=cat, ref=refs,
                            cname=cname)
        binds = [e.bind_id for e in evs]
        if binds.count(None) != len(binds):
            self._add_bound_flows(evs, refs, binds)

    def _add_bound_flows(self, evs: list[Event], refs: np.ndarray, binds: list[Any]) -> None:
        """Flow events v2: X slices carrying `bind_id` with `flow_out` / `flow_in`."""
        rows = [(i, 0) for i, e in enumerate(evs) if binds[i] is not None and e.flow_out]
        rows += [(i, 2) for i, e in enumerate(evs) if binds[i] is not None and e.flow_in]
        idx = np.array([r[0] for r in rows], np.int64)
        id_num, id_str = flow_ids([binds[i] for i in idx.tolist()], self._intern)
        self._bound.append(ref=refs[idx], id_num=id_num, id_str=id_str,
                           phase=[r[1] for r in rows], cat=np.zeros(len(idx), np.int32),
                           name=np.zeros(len(idx), np.int32))

    def _add_instants(self, evs: list[Event], refs: np.ndarray,
                      times: tuple[np.ndarray, np.ndarray]) -> None:
        ts, ok = times
        scopes = np.fromiter((_SCOPES.get(e.s, SCOPE_THREAD) if isinstance(e.s, str)
                              else SCOPE_THREAD for e in evs), np.int8, len(evs))
        tracks = np.empty(len(evs), np.int32)
        on_thread = np.flatnonzero(scopes == SCOPE_THREAD)
        tracks[on_thread] = self._thread_tracks([evs[i] for i in on_thread.tolist()])
        for i in np.flatnonzero(scopes != SCOPE_THREAD).tolist():
            tracks[i] = (self.tracks[(GLOBAL_TRACK, None, None)] if scopes[i] == SCOPE_GLOBAL
                         else self.tracks[(PROCESS_TRACK, token(evs[i].pid), None)])
        self._instants.append(ok, ts=ts, track=tracks,
                              name=self._intern([e.name for e in evs]),
                              cat=self._intern([e.cat for e in evs]), ref=refs,
                              scope=scopes)
        memory = [i for i, e in enumerate(evs) if e.name == MEMORY_EVENT and ok[i]]
        if memory:  # PyTorch's allocator events: also the memory counters they carry
            self._add_memory_samples([evs[i] for i in memory], ts[memory], refs[memory])

    def _add_memory_samples(self, evs: list[Event], ts: np.ndarray, refs: np.ndarray) -> None:
        """The allocator totals of Kineto ``[memory]`` events as counter samples on their
        process (see :mod:`proftui.core.importers.kineto_memory`)."""
        c = self._counters
        for ev, t, ref in zip(evs, ts.tolist(), refs.tolist()):
            samples = memory_samples(event_args(ev))
            if not samples:
                continue
            track = self.tracks[(PROCESS_TRACK, token(ev.pid), None)]
            for series_name, value in samples:
                c.sample_series.append(self._series_id(track, series_name))
                c.sample_ts.append(t)
                c.sample_value.append(value)
                c.sample_ref.append(ref)

    def _add_flows(self, evs: list[Event], refs: np.ndarray,
                   times: tuple[np.ndarray, np.ndarray]) -> None:
        ts, ok = times
        id_num, id_str = flow_ids([e.id if e.id is not None else e.id2 for e in evs],
                                  self._intern)
        letters = [e.ph for e in evs]
        phase = np.fromiter(map(_FLOW_PHASE.__getitem__, letters), np.int8, len(evs))
        # s and t bind to the enclosing slice; f too with bp "e", else to the next slice.
        enclosing = (phase != 2) | np.fromiter(map(operator.eq, [e.bp for e in evs],
                                                   repeat("e")), bool, len(evs))
        track, cat, name = self._labels_of(self._flow_labels, evs)
        self._flows.append(ok, ts=ts, track=track, cat=cat, name=name, id_num=id_num,
                           id_str=id_str, phase=phase, enclosing=enclosing, ref=refs)

    def _add_counter(self, ev: Event, ref: int, offset: int) -> None:
        ts = self._one_ns(ev.ts)
        args = event_args(ev)
        if ts is None:
            self.diagnostics.add("bad_timestamp", 1, offset)
            return
        values = [(k, x) for k, v in args.items() if (x := _counter_value(v)) is not None
                  ] if isinstance(args, dict) else []
        if not values:
            self.diagnostics.add("bad_counter", 1, offset, json_text(ev.name)[:40])
            return
        name = json_text(ev.name)
        if ev.id is not None:
            name = f"{name}[{json_text(ev.id)}]"
        c = self._counters
        track = self.tracks[(PROCESS_TRACK, token(ev.pid), None)]
        for key, value in values:
            # by the key alone: a series keeps its name whatever else an event carries
            series_name = name if key in ("value", name) else f"{name} {key}"
            c.sample_series.append(self._series_id(track, series_name))
            c.sample_ts.append(ts)
            c.sample_value.append(value)
            c.sample_ref.append(ref)

    def _add_metadata(self, ev: Event, offset: int) -> None:
        args = event_args(ev)
        kind = ev.name
        if not isinstance(args, dict):
            self.diagnostics.add("bad_metadata", 1, offset, json_text(kind)[:40])
            return
        pid = self.tracks.pid(ev.pid)
        if kind in ("process_name", "process_labels", "process_sort_index"):
            meta = self.processes.setdefault(pid, Meta())
        elif kind in ("thread_name", "thread_sort_index"):
            meta = self.threads.setdefault((pid, norm_id(ev.tid)), Meta())
            self.tracks.of_full((THREAD, pid, norm_id(ev.tid)))  # the thread exists
        else:
            return  # other metadata (num_cpus, TraceConfig, ...) is counted in phase_counts
        if kind.endswith("_name"):
            value = args.get("name")
            if value is not None:
                meta.name = json_text(value)
        elif kind == "process_labels":
            value = args.get("labels")
            if value is not None:
                meta.labels = json_text(value)
        else:
            value = args.get("sort_index")
            sort_index = _sort_index(value)
            if sort_index is not None:
                meta.sort_index = sort_index
            else:
                self.diagnostics.add("bad_metadata", 1, offset, f"{kind}: {json_text(value)[:30]}")

    def _add_async(self, ev: Event, ref: int, offset: int) -> None:
        """Keep an async event for pairing at the end, when all are known and in time order."""
        ts = self._one_ns(ev.ts)
        if ts is None:
            self.diagnostics.add("bad_timestamp", 1, offset)
            return
        ident = ev.id if ev.id is not None else ev.id2
        self._async_events.append((ts, ref, ev.ph, self.tracks.pid(ev.pid),
                                   self.strings[token(ev.cat)],
                                   self.strings[token(ev.name)], id_token(ident),
                                   token(ev.scope), offset))

    # -- columns (importers that read tables, not events) --------------------------------------

    def declare_process(self, pid: Any, name: str, labels: str | None = None,
                        sort_index: int | None = None) -> None:
        """Name a process of the file being read (as process_name, _labels, _sort_index do)."""
        meta = self.processes.setdefault(self.tracks.pid(pid), Meta())
        meta.name, meta.labels, meta.sort_index = name, labels, sort_index

    def declare_thread(self, pid: Any, tid: Any, name: str,
                       sort_index: int | None = None) -> int:
        """Name a thread of the file being read; returns its track id."""
        key = (self.tracks.pid(pid), norm_id(tid))
        meta = self.threads.setdefault(key, Meta())
        meta.name, meta.sort_index = name, sort_index
        return self.tracks.of_full((THREAD, *key))

    def thread_track_ids(self, pids: np.ndarray, tids: np.ndarray) -> np.ndarray:
        """The thread track of each (pid, tid) pair of two integer columns."""
        codes, first = distinct_rows(pids, tids)
        ids = np.array([self.tracks[(int(p), int(t))] for p, t in
                        zip(pids[first].tolist(), tids[first].tolist())], np.int32)
        return ids[codes] if len(first) else np.zeros(0, np.int32)

    def process_track_id(self, pid: Any) -> int:
        """The process-wide track of a process of the file being read (counters live there)."""
        return self.tracks[(PROCESS_TRACK, pid, None)]

    def intern_texts(self, texts: list[str]) -> np.ndarray:
        """String ids of `texts`."""
        return np.fromiter(map(self.strings.__getitem__, texts), np.int32, len(texts))

    def add_slice_columns(self, start: np.ndarray, end: np.ndarray, track: np.ndarray,
                          name: np.ndarray, cat: np.ndarray, ref: np.ndarray) -> int:
        """Complete slices given as columns (ns on the file's clock; interned names and
        categories; track ids; ordinals). A slice without a usable start or end (`ok`
        False: see :func:`usable_times`) is dropped and counted; one ending before it
        starts is clamped to 0. Returns how many were kept."""
        start = np.asarray(start, np.int64)
        end = np.asarray(end, np.int64)
        ts, ok = self._shift(start, np.ones(len(start), bool))
        dur = end - start
        negative = dur < 0
        if negative.any():
            self.diagnostics.add("negative_duration", int(negative.sum()))
            dur = np.where(negative, 0, dur)
        self.phase_counts["X"] += len(start)
        self._slices.append(ok, start=ts, dur=dur, track=track, name=name, cat=cat, ref=ref,
                            cname=np.zeros(len(start), np.int32))
        return int(ok.sum())

    def add_instant_columns(self, ts: np.ndarray, track: np.ndarray, name: np.ndarray,
                            cat: np.ndarray, ref: np.ndarray) -> None:
        """Thread-scoped instant events given as columns."""
        ts, ok = self._shift(np.asarray(ts, np.int64), np.ones(len(ts), bool))
        self.phase_counts["i"] += len(ts)
        self._instants.append(ok, ts=ts, track=track, name=name, cat=cat, ref=ref,
                              scope=np.full(len(ts), SCOPE_THREAD, np.int8))

    def add_flow_pairs(self, src_ref: np.ndarray, dst_ref: np.ndarray, cat: str,
                       name: str) -> None:
        """Flows from the slice numbered `src_ref` to the one numbered `dst_ref`, one per
        pair (each gets an id of its own)."""
        n = len(src_ref)
        if not n:
            return
        ids = _DB_FLOW_IDS + self._flow_count + np.arange(n, dtype=np.int64)
        self._flow_count += n
        self.phase_counts["s"] += n
        self.phase_counts["f"] += n
        cat_id, name_id = self.strings[cat], self.strings[name]
        self._bound.append(ref=np.concatenate([src_ref, dst_ref]),
                           id_num=np.concatenate([ids, ids]),
                           id_str=np.zeros(2 * n, np.int32),
                           phase=np.repeat(np.array([0, 2], np.int8), n),
                           cat=np.full(2 * n, cat_id, np.int32),
                           name=np.full(2 * n, name_id, np.int32))

    def _series_id(self, track: int, series_name: str) -> int:
        """The id of a counter series (a track and a name), made at its first sample."""
        c = self._counters
        sid = c.series.get((track, series_name))
        if sid is None:
            sid = c.series[(track, series_name)] = len(c.series_track)
            c.series_track.append(track)
            c.series_name.append(self.strings[series_name])
        return sid

    def add_counter_columns(self, track: int, series_name: str, ts: np.ndarray,
                            values: np.ndarray, ref: np.ndarray) -> None:
        """Samples of one counter series (on a process-wide track), given as columns; NaN
        values are left out and counted."""
        ts, ok = self._shift(np.asarray(ts, np.int64), np.ones(len(ts), bool))
        ok &= ~np.isnan(values)
        if (~ok).any():
            self.diagnostics.add("bad_counter", int((~ok).sum()), None, series_name[:40])
        self.phase_counts["C"] += len(ts)
        c = self._counters
        sid = self._series_id(track, series_name)
        kept = int(ok.sum())
        c.sample_series += [sid] * kept
        c.sample_ts += ts[ok].tolist()
        c.sample_value += np.asarray(values, np.float64)[ok].tolist()
        c.sample_ref += np.asarray(ref, np.int64)[ok].tolist()

    # -- parallel parts -----------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Everything added so far, as picklable data (to merge into another builder)."""
        c = self._counters
        return {
            "texts": self.strings.texts,
            "tracks": self.tracks.keys_in_order,
            "phase_counts": dict(self.phase_counts),
            "processes": self.processes,
            "threads": self.threads,
            "empty_events": self.empty_events,
            "chunks": {name: getattr(self, name).concat() for name in _CHUNK_TABLES},
            "counters": (c.series, c.sample_series, c.sample_ts, c.sample_value, c.sample_ref),
            "async": self._async_events,
            "diagnostics": self.diagnostics.to_list(),
        }

    def merge(self, state: dict[str, Any], ordinal_offset: int) -> None:
        """Add another builder's `state`; its event ordinals are shifted by `ordinal_offset`."""
        smap = np.fromiter(map(self.strings.__getitem__, state["texts"]), np.int32,
                           len(state["texts"]))
        tracks = [(k, p, smap[x] if k == ASYNC_TRACK else x) for k, p, x in state["tracks"]]
        tmap = np.fromiter(map(self.tracks.of_full, tracks), np.int32, len(tracks))
        self.phase_counts.update(state["phase_counts"])
        for pid, meta in state["processes"].items():
            fill_meta(self.processes.setdefault(pid, Meta()), meta)
        for key, meta in state["threads"].items():
            fill_meta(self.threads.setdefault(key, Meta()), meta)
        self.empty_events += state["empty_events"]
        for name in _CHUNK_TABLES:
            cols = dict(state["chunks"][name])
            for col in cols:
                if col in ("name", "cat", "cname", "id_str"):
                    cols[col] = smap[cols[col]]
                elif col == "track":
                    cols[col] = tmap[cols[col]]
                elif col == "ref":
                    cols[col] = cols[col] + ordinal_offset
            getattr(self, name).append(**cols)
        series, sample_series, sample_ts, sample_value, sample_ref = state["counters"]
        c = self._counters
        new_ids = np.zeros(len(series), np.int64)
        for (track, series_name), sid in series.items():
            new_ids[sid] = self._series_id(int(tmap[track]), series_name)
        c.sample_series += new_ids[np.asarray(sample_series, np.int64)].tolist()
        c.sample_ts += sample_ts
        c.sample_value += sample_value
        c.sample_ref += [r + ordinal_offset for r in sample_ref]
        self._async_events += [(ts, ref + ordinal_offset, ph, pid, int(smap[cat]),
                                int(smap[name]), ident, scope, offset)
                               for ts, ref, ph, pid, cat, name, ident, scope, offset
                               in state["async"]]
        for item in state["diagnostics"]:
            self.diagnostics.add(item["kind"], item["count"], item["first_offset"],
                                 item["detail"])

    # -- finish -------------------------------------------------------------------------------

    def build(self, metadata: dict[str, Any], batches: np.ndarray) -> TraceIndex:
        """Pair, sort and lay out everything added; return the finished index."""
        latest_ts = self._latest_ts()
        slices = self._slices.concat()
        release_free_memory()  # the per-batch parts just freed
        async_spans, async_instants = pair_async(self._async_events, latest_ts, self.tracks,
                                                 self.diagnostics)
        for ts, track, name, cat, ref in async_instants:
            self._instants.append(ts=[ts], track=[track], name=[name], cat=[cat], ref=[ref],
                                  scope=[SCOPE_THREAD])
        extra = [pair_begin_end(self._be.concat(), slices, self.diagnostics), async_spans]
        if any(len(x["start"]) for x in extra):
            slices = {k: np.concatenate([slices[k]] + [x[k] for x in extra]) for k in slices}
        instants = self._instants.concat()
        counters = self._counter_columns()

        track_order, tracks = track_table(self.tracks, self.processes, self.threads,
                                          self.strings)
        remap = np.empty(len(track_order), np.int32)
        remap[track_order] = np.arange(len(track_order), dtype=np.int32)
        for table in (slices, instants):
            table["track"] = remap[table["track"]]
        counters["series_track"] = remap[counters["series_track"]]

        order = layout.sort_slices(slices["track"], slices["start"], slices["dur"])
        for key in list(slices):  # one column at a time: one copy alive, not all
            slices[key] = slices[key][order]
        del order
        slices["depth"], parent, track_rows = layout.layout_tracks(
            slices["track"], slices["start"], slices["dur"], len(track_order))
        tracks["rows"] = track_rows
        tracks["first_slice"] = np.searchsorted(slices["track"], np.arange(len(track_order)))
        tracks["slice_count"] = np.diff(np.append(tracks["first_slice"], len(slices["start"])))
        iorder = np.lexsort((instants["ts"], instants["track"]))
        instants = {k: v[iorder] for k, v in instants.items()}

        points = self._flows.concat()
        points["track"] = remap[points["track"]]
        process = tracks["process"].astype(np.int64)
        group = tracks["processes"]["group"].astype(np.int64)
        track_group = np.where(process >= 0, group[np.maximum(process, 0)] if len(group) else -1,
                               -1)
        flows = flow_edges(points, self._bound.concat(), slices, parent, self.diagnostics,
                           track_group)
        cname_rows = np.flatnonzero(slices["cname"])
        span = _span(slices, instants, counters)
        return TraceIndex.from_columns(
            strings=self.strings.freeze(),
            # ordinals fit 32 bits below 4 G events: then the cache holds 34 bytes a slice
            slices={k: (v.astype(np.uint32) if k == "ref" and v.max(initial=0) < 2**32
                        else v) for k, v in slices.items() if k != "cname"},
            slice_cname={"slice": cname_rows, "cname": slices["cname"][cname_rows]},
            tracks=tracks,
            instants=instants,
            counters=counters,
            flows=flows,
            batches=batches,
            meta={
                **metadata,
                "phase_counts": dict(sorted(((json_text(k), v) for k, v in
                                             self.phase_counts.items()),
                                            key=lambda kv: (-kv[1], kv[0]))),
                "empty_events": self.empty_events,
                "start_ns": span[0],
                "end_ns": span[1],
            },
            diagnostics=self.diagnostics,
        )

    def _latest_ts(self) -> int:
        ends = [0]
        for part in self._slices.parts["start"]:
            if len(part):
                ends.append(int(part.max()))
        for chunks, key in ((self._be, "ts"), (self._instants, "ts"), (self._flows, "ts")):
            for part in chunks.parts[key]:
                if len(part):
                    ends.append(int(part.max()))
        s, d = self._slices.parts["start"], self._slices.parts["dur"]
        for a, b in zip(s, d):
            if len(a):
                ends.append(int((a + b).max()))
        ends += [event[0] for event in self._async_events]
        if self._counters.sample_ts:
            ends.append(max(self._counters.sample_ts))
        return max(ends)

    def _counter_columns(self) -> dict[str, np.ndarray]:
        c = self._counters
        series = np.asarray(c.sample_series, np.int32)
        ts = np.asarray(c.sample_ts, np.int64)
        order = np.lexsort((ts, series))
        n_series = len(c.series_track)
        return {
            "series_track": np.asarray(c.series_track, np.int32),
            "series_name": np.asarray(c.series_name, np.int32),
            "series_first": np.searchsorted(series[order], np.arange(n_series)).astype(np.int64),
            "sample_series": series[order],
            "sample_ts": ts[order],
            "sample_value": np.asarray(c.sample_value, np.float64)[order],
            "sample_ref": np.asarray(c.sample_ref, np.int64)[order],
        }


class _Labels:
    """The ids of events' labels (a track and strings) by the distinct combinations of
    their fields: one dictionary lookup an event where the fields one by one take a pass
    each. A trace repeats few combinations (its kernels and operators on their threads).

    `key` gives each event's fields as a tuple and `parts` names what they become, in order:
    "track" takes two fields (pid, tid), any other part one string. New combinations are
    numbered in the order the columns one by one would number them (every new string of the
    first part, then of the second ..., each in event order), so the ids are the same.
    """

    LIMIT = 1 << 20  # combinations kept; past it, forgotten (the ids stay in the interners)

    def __init__(self, key: Callable[[list[Event]], list[tuple]], parts: tuple[str, ...]
                 ) -> None:
        self.key = key
        self.parts = parts
        self.forget(None)

    def forget(self, group: Any) -> None:
        self.rows: dict[tuple, int] = {}
        self.ids = np.zeros((len(self.parts), 0), np.int32)
        self.group = group

    def of(self, builder: TraceBuilder, evs: list[Event]) -> np.ndarray | None:
        """Per part a row of ids, per event a column; None if a field is unhashable."""
        if builder.tracks.group != self.group or len(self.rows) > self.LIMIT:
            self.forget(builder.tracks.group)  # a new file's pids are another group's
        keys = self.key(evs)
        rows = self.rows
        try:
            at = np.fromiter(map(rows.get, keys, repeat(-1)), np.int64, len(keys))
        except TypeError:
            return None
        missing = np.flatnonzero(at < 0)
        if len(missing):
            absent = [keys[i] for i in missing.tolist()]
            new = list(dict.fromkeys(absent))
            ids, k = [], 0  # k: where the part's fields begin in a key
            for part in self.parts:
                if part == "track":
                    ids.append([builder.tracks[key[k], key[k + 1]] for key in new])
                    k += 2
                else:
                    ids.append([builder.strings[key[k]] for key in new])
                    k += 1
            first = self.ids.shape[1]
            rows.update(zip(new, range(first, first + len(new))))
            self.ids = np.concatenate([self.ids, np.array(ids, np.int32)], axis=1)
            at[missing] = np.fromiter(map(rows.__getitem__, absent), np.int64, len(absent))
        return self.ids[:, at]


def _picker(positions: list[int]) -> Callable[[list[Any]], list[Any]]:
    """The items at `positions` of a list, as a list (an itemgetter: no Python loop)."""
    if len(positions) == 1:
        return lambda items: [items[positions[0]]]
    get = operator.itemgetter(*positions)
    return lambda items: list(get(items))


_FLOW_PHASE = {"s": 0, "t": 1, "f": 2}  # the letters of the flow group
_CHUNK_TABLES = ("_slices", "_be", "_instants", "_flows", "_bound")
# Ids of the flows importers add by pairs: far from the ids traces carry (connection ids,
# correlation ids, device timestamps), so that no trace flow of the same category and name
# is chained to them.
_DB_FLOW_IDS = 1 << 62


def distinct_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of equally long columns: per row the number of its distinct row,
    and a row of each in the order of those numbers (one 1-D unique per column: much faster
    than a unique over a 2-D array)."""
    n = len(columns[0])
    code = np.zeros(n, np.int64)
    for column in columns:
        if n and column.min() == column.max():
            continue  # one value (a pid, a device): nothing to tell apart
        values, inverse = np.unique(column, return_inverse=True)
        code = code * max(len(values), 1) + inverse.reshape(-1)
        _, code = np.unique(code, return_inverse=True)  # renumbered: never overflows
        code = code.reshape(-1)
    _, first = np.unique(code, return_index=True)
    return code, first


def _counter_value(value: Any) -> float | None:
    """A counter sample's value as float, or None if it is not a JSON number a float holds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer beyond float range
        return None


_INT_TEXT = re.compile(r"-?[0-9]+")
_INT64 = range(-2**63, 2**63)
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _sort_index(value: Any) -> int | None:
    """An M event's sort_index (a number or integer text) as int64, or None if unusable."""
    if isinstance(value, str) and _INT_TEXT.fullmatch(value):
        value = int(value)
    elif isinstance(value, float) and math.isfinite(value):
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in _INT64:
        return value
    return None


def _durations_ns(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Durations in µs (numbers, decimal text, None when missing) as int64 ns, exact however
    many decimals (half away from zero at the ns, as timestamps)."""
    try:
        us = np.array([math.nan if v is None else v for v in values] if None in values
                      else values)
    except (ValueError, TypeError, OverflowError):
        us = np.zeros(0)
    if us.dtype.kind in "fiu" and us.ndim == 1 and len(us) == len(values):
        # All numbers, the usual case, kept on the float path for speed: the decoder turned
        # every float with digits below the ns back into its text, so rint of these is exact.
        return _float_durations_ns(us)
    ns, ok = us_to_ns(values)  # some texts: read from the text
    ok &= np.abs(ns) < 2_250_000_000_000_000
    return np.where(ok, ns, 0), ok


def _float_durations_ns(us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Durations in µs as numbers (NaN when missing), none with digits below the ns, as
    int64 ns (see :func:`_durations_ns`)."""
    ok = np.abs(us) < 2.25e12  # 26 days: longer is damage; False for NaN
    return np.rint(np.where(ok, us, 0.0) * 1000.0).astype(np.int64), ok


def _span(slices: dict, instants: dict, counters: dict) -> tuple[int, int]:
    starts, ends = [], []
    if len(slices["start"]):
        starts.append(int(slices["start"].min()))
        ends.append(int((slices["start"] + slices["dur"]).max()))
    for arr in (instants["ts"], counters["sample_ts"]):
        if len(arr):
            starts.append(int(arr.min()))
            ends.append(int(arr.max()))
    if not starts:
        return 0, 0
    return min(starts), max(ends)



