"""Decoded Chrome trace events, pushed into a format-agnostic builder by phase group."""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec
import numpy as np

from proftui.core.build.builder import SCOPE_GLOBAL, SCOPE_PROCESS, SCOPE_THREAD, TraceBuilder
from proftui.core.build.flows import flow_ids
from proftui.core.build.tracks import token
from proftui.core.importers.chrome.decode import Event, event_args
from proftui.core.importers.chrome.native import Columns
from proftui.core.importers.chrome.views import (
    ASYNC,
    COUNTER,
    FLOW,
    INSTANT,
    LEGACY_ASYNC,
    META,
    MISSING,
    UNKNOWN,
    B,
    E,
    Labels,
    Listed,
    Native,
    X,
)
from proftui.core.importers.kineto_memory import MEMORY_EVENT, memory_samples, sample_columns
from proftui.core.model.strings import json_text

_SCOPES = {"g": SCOPE_GLOBAL, "p": SCOPE_PROCESS}
_FLOW_PHASE = {"s": 0, "t": 1, "f": 2}  # the letters of the flow group


def _scope_of(s: Any) -> int:
    """An instant's scope by its `s` field: global, process, else thread."""
    return _SCOPES.get(s, SCOPE_THREAD) if isinstance(s, str) else SCOPE_THREAD


def _is_e(bp: Any) -> bool:
    return bp == "e"


def _is_memory(name: Any) -> bool:
    return name == MEMORY_EVENT


class ChromeEvents:
    """The event sink of :class:`~proftui.core.importers.chrome.read.ChromeJsonReader` for one
    builder: each batch is split by phase group, its fields turned into columns (times in
    ns on the shared clock, interned labels, track ids) and pushed through the builder's
    typed methods. Problems of single events are counted at the batch's byte offset.

    A batch comes decoded by the Python path (a list of events) or by the native reader
    (:class:`~proftui.core.importers.chrome.native.Columns`); both are read through the same
    steps here, so that the index cannot tell which reader read it.

    Keep one per builder: it remembers the label combinations seen (see :class:`Labels`).
    """

    def __init__(self, builder: TraceBuilder) -> None:
        self.builder = builder
        self._complete_labels = Labels(
            lambda evs: [(e.cname, e.pid, e.tid, e.name, e.cat) for e in evs],
            ("cname", "track", "name", "cat"), (0, 1, 2, 3, 4))
        self._be_labels = Labels(lambda evs: [(e.pid, e.tid, e.name, e.cat) for e in evs],
                                  ("track", "name", "cat"), (1, 2, 3, 4))
        self._flow_labels = Labels(lambda evs: [(e.pid, e.tid, e.cat, e.name) for e in evs],
                                    ("track", "cat", "name"), (1, 2, 4, 3))

    def add_events(self, events: list[Event] | Columns, first_ordinal: int,
                   offset: int) -> None:
        """Add one batch of events; `first_ordinal` numbers the first of them."""
        view = Native(events) if isinstance(events, Columns) else Listed(events)
        self.builder.batches_read[view.reader] += 1
        groups = view.groups()
        ref0 = self.builder.ref_base + first_ordinal
        times = self.builder.shared_clock(*view.times())  # one conversion a batch
        if len(groups) and groups.min() == groups.max():
            self._add_group(int(groups[0]), view, np.arange(len(view)) + ref0, offset, times)
            return
        order = np.argsort(groups, kind="stable")
        bounds = np.searchsorted(groups[order], np.arange(MISSING + 2))
        for g in range(MISSING + 1):
            lo, hi = bounds[g], bounds[g + 1]
            if lo == hi:
                continue
            idx = order[lo:hi]
            self._add_group(g, view.sub(idx, g), idx + ref0, offset,
                            (times[0][idx], times[1][idx]))

    def _add_group(self, group: int, view: Listed | Native, refs: np.ndarray, offset: int,
                   times: tuple[np.ndarray, np.ndarray]) -> None:
        builder = self.builder
        if group == X:  # the bulk of most traces: no need to look at each
            builder.count_phase("X", len(view))
        else:
            view.count_phases(builder)
        if group in (X, B, E, INSTANT, FLOW, UNKNOWN):
            bad = len(view) - int(np.count_nonzero(times[1]))
            if bad:
                builder.diagnostics.add("bad_timestamp", bad, offset)
        if group == X:
            self._add_complete(view, refs, offset, times)
        elif group in (B, E):
            ts, ok = times
            track, name, cat = view.label_ids(self._be_labels, builder)
            builder.add_begin_ends(ts, np.full(len(view), group == B), track, name, cat, refs,
                                   keep=ok)
        elif group == INSTANT:
            self._add_instants(view, refs, times)
        elif group == FLOW:
            self._add_flows(view, refs, times)
        elif group == COUNTER:
            evs = view.events()
            for ev, args, ref, ts in zip(evs, _all_args(evs), refs.tolist(),
                                         view.each_time(builder, times)):
                self._add_counter(ev, args, ref, offset, ts)
        elif group == META:
            for ev in view.events():
                self._add_metadata(ev, offset)
        elif group in (ASYNC, LEGACY_ASYNC):
            for ev, ref, ts in zip(view.events(), refs.tolist(), view.each_time(builder, times)):
                self._add_async(ev, ref, offset, ts)
        elif group == UNKNOWN:  # kept, as instants: a later version of the format's, or a
            # tool's own; what it is for is unknown, where and when it happened is not
            for ph in view.field("ph"):
                builder.diagnostics.add("unknown_phase", 1, offset, json_text(ph)[:40])
            self._add_instants(view, refs, times)
        elif group == MISSING:
            for ev in view.events():
                if ev.name is None and ev.ts is None and ev.pid is None:
                    builder.add_empty_events(1)  # `{}`, as Paddle ends its arrays
                else:
                    builder.diagnostics.add("missing_phase", 1, offset, json_text(ev.name)[:40])

    def _add_complete(self, view: Listed | Native, refs: np.ndarray, offset: int,
                      times: tuple[np.ndarray, np.ndarray]) -> None:
        ts, ok = times
        dur, dok = view.durations()
        bad_dur = ok & ~dok
        if bad_dur.any():
            self.builder.diagnostics.add("bad_duration", int(bad_dur.sum()), offset)
        negative = dur < 0
        if negative.any():
            self.builder.diagnostics.add("negative_duration", int(negative.sum()), offset)
            dur[negative] = 0
        cname, track, name, cat = view.label_ids(self._complete_labels, self.builder)
        self.builder.add_slices(ts, dur, track, name, cat, refs, cname, keep=ok)
        binds = view.binds()
        if binds is not None and binds.count(None) != len(binds):
            self._add_bound_flows(view.events(), refs, binds)

    def _add_bound_flows(self, evs: list[Event], refs: np.ndarray, binds: list[Any]) -> None:
        """Flow events v2: X slices carrying `bind_id` with `flow_out` / `flow_in`."""
        rows = [(i, 0) for i, e in enumerate(evs) if binds[i] is not None and e.flow_out]
        rows += [(i, 2) for i, e in enumerate(evs) if binds[i] is not None and e.flow_in]
        idx = np.array([r[0] for r in rows], np.int64)
        id_num, id_str = flow_ids([binds[i] for i in idx.tolist()], self.builder.intern)
        self.builder.add_bound_flow_ends(refs[idx], id_num, id_str, [r[1] for r in rows],
                                         np.zeros(len(idx), np.int32),
                                         np.zeros(len(idx), np.int32))

    def _add_instants(self, view: Listed | Native, refs: np.ndarray,
                      times: tuple[np.ndarray, np.ndarray]) -> None:
        builder = self.builder
        ts, ok = times
        n = len(view)
        scopes = view.codes("s", _scope_of)
        on_thread = np.flatnonzero(scopes == SCOPE_THREAD).tolist()
        if len(on_thread) == n:  # the usual case: labelled as B/E events are
            tracks, names, cats = view.label_ids(self._be_labels, builder)
        else:
            pids, tids = view.field("pid"), view.field("tid")
            tracks = np.empty(n, np.int32)
            tracks[on_thread] = builder.thread_tracks([pids[i] for i in on_thread],
                                                      [tids[i] for i in on_thread])
            for i in np.flatnonzero(scopes != SCOPE_THREAD).tolist():
                tracks[i] = (builder.global_track_id() if scopes[i] == SCOPE_GLOBAL
                             else builder.process_track_id(token(pids[i])))
            names = builder.intern(view.field("name"))
            cats = builder.intern(view.field("cat"))
        builder.add_instants(ts, tracks, names, cats, refs, scopes, keep=ok)
        memory = np.flatnonzero(view.codes("name", _is_memory).view(bool) & ok).tolist()
        if memory:  # PyTorch's allocator events: also the memory counters they carry
            pids = view.field("pid")
            pids = [pids[i] for i in memory]
            totals = view.memory_totals(memory)
            columns = sample_columns(totals, pids) if totals is not None else None
            if columns is not None:
                self._add_sample_columns(columns, ts[memory], refs[memory])
            else:
                self._add_memory_samples(pids, _all_args(view.events(memory)), ts[memory],
                                         refs[memory])

    def _add_sample_columns(self, columns: tuple, ts: np.ndarray, refs: np.ndarray) -> None:
        """The samples of :func:`~proftui.core.importers.kineto_memory.sample_columns` (of
        events at `ts`, `refs`)."""
        builder = self.builder
        series, event, number, values = columns
        ids = np.array([builder.series_id(builder.process_track_id(token(pid)), name)
                        for pid, name in series], np.int64)
        builder.add_counter_samples(ids[number], ts[event], values, refs[event])

    def _add_memory_samples(self, pids: list[Any], args: list[Any], ts: np.ndarray,
                            refs: np.ndarray) -> None:
        """The allocator totals of Kineto ``[memory]`` events (their pids and decoded args) as
        counter samples on their process, event by event (see
        :mod:`proftui.core.importers.kineto_memory`)."""
        builder = self.builder
        for pid, event_args_, t, ref in zip(pids, args, ts.tolist(), refs.tolist()):
            samples = memory_samples(event_args_)
            if not samples:
                continue
            track = builder.process_track_id(token(pid))
            for series_name, value in samples:
                builder.add_counter_sample(track, series_name, t, value, ref)

    def _add_flows(self, view: Listed | Native, refs: np.ndarray,
                   times: tuple[np.ndarray, np.ndarray]) -> None:
        ts, ok = times
        id_num, id_str = flow_ids(view.first_of("id", "id2"), self.builder.intern)
        phase = view.codes("ph", _FLOW_PHASE.__getitem__)
        # s and t bind to the enclosing slice; f too with bp "e", else to the next slice.
        enclosing = (phase != 2) | view.codes("bp", _is_e).astype(bool)
        track, cat, name = view.label_ids(self._flow_labels, self.builder)
        self.builder.add_flow_points(ts, track, cat, name, id_num, id_str, phase, enclosing,
                                     refs, keep=ok)

    def _add_counter(self, ev: Event, args: Any, ref: int, offset: int, ts: int | None,
                     ) -> None:
        """One counter event, its decoded `args`; `ts` its time on the shared clock (None:
        unusable)."""
        builder = self.builder
        if ts is None:
            builder.diagnostics.add("bad_timestamp", 1, offset)
            return
        values = [(k, x) for k, v in args.items() if (x := _counter_value(v)) is not None
                  ] if isinstance(args, dict) else []
        if not values:
            builder.diagnostics.add("bad_counter", 1, offset, json_text(ev.name)[:40])
            return
        name = json_text(ev.name)
        if ev.id is not None:
            name = f"{name}[{json_text(ev.id)}]"
        track = builder.process_track_id(token(ev.pid))
        for key, value in values:
            # by the key alone: a series keeps its name whatever else an event carries
            series_name = name if key in ("value", name) else f"{name} {key}"
            builder.add_counter_sample(track, series_name, ts, value, ref)

    def _add_metadata(self, ev: Event, offset: int) -> None:
        args = event_args(ev)
        kind = ev.name
        if not isinstance(args, dict):
            self.builder.diagnostics.add("bad_metadata", 1, offset, json_text(kind)[:40])
            return
        if kind in ("process_name", "process_labels", "process_sort_index"):
            meta = self.builder.process_meta(ev.pid)
        elif kind in ("thread_name", "thread_sort_index"):
            meta = self.builder.thread_meta(ev.pid, ev.tid)
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
                self.builder.diagnostics.add("bad_metadata", 1, offset,
                                             f"{kind}: {json_text(value)[:30]}")

    def _add_async(self, ev: Event, ref: int, offset: int, ts: int | None) -> None:
        if ts is None:
            self.builder.diagnostics.add("bad_timestamp", 1, offset)
            return
        ident = ev.id if ev.id is not None else ev.id2
        self.builder.add_async_event(ts, ref, ev.ph, ev.pid, ev.cat, ev.name, ident, ev.scope,
                                     offset)


def _all_args(evs: list[Event]) -> list[Any]:
    """The decoded `args` of events (as :func:`event_args` gives them), in one decode when
    they all decode (the usual case)."""
    raws = [e.args for e in evs]
    if all(isinstance(r, msgspec.Raw) for r in raws):
        try:
            return msgspec.json.decode(b"[" + b",".join(raws) + b"]")
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            pass
    return [event_args(e) for e in evs]


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


def _sort_index(value: Any) -> int | None:
    """An M event's sort_index (a number or integer text) as int64, or None if unusable."""
    if isinstance(value, str) and _INT_TEXT.fullmatch(value):
        value = int(value)
    elif isinstance(value, float) and math.isfinite(value):
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in _INT64:
        return value
    return None
