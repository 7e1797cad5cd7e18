"""Decoded Chrome trace events, pushed into a format-agnostic builder by phase group."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from itertools import repeat
from typing import Any

import msgspec
import numpy as np

from proftui.core.build.builder import SCOPE_GLOBAL, SCOPE_PROCESS, SCOPE_THREAD, TraceBuilder
from proftui.core.build.flows import flow_ids
from proftui.core.build.tracks import token
from proftui.core.importers.chrome.decode import DECODER, Event, event_args
from proftui.core.importers.chrome.native import Columns
from proftui.core.importers.kineto_memory import (
    MEMORY_EVENT,
    MEMORY_TOTALS,
    Totals,
    memory_samples,
    sample_columns,
)
from proftui.core.model.strings import json_text
from proftui.core.model.timeconv import MAX_SLICE_US, one_us_to_ns, us_to_ns

# Phase groups; each phase letter maps to one.
X, B, E, INSTANT, COUNTER, META, FLOW, ASYNC, LEGACY_ASYNC, OTHER, UNKNOWN, MISSING = range(12)
_GROUP = {
    "X": X, "B": B, "E": E, "i": INSTANT, "I": INSTANT, "R": INSTANT, "C": COUNTER, "M": META,
    "s": FLOW, "t": FLOW, "f": FLOW, "b": ASYNC, "n": ASYNC, "e": ASYNC,
    "S": LEGACY_ASYNC, "T": LEGACY_ASYNC, "p": LEGACY_ASYNC, "F": LEGACY_ASYNC,
    "N": OTHER, "O": OTHER, "D": OTHER, "P": OTHER, "v": OTHER, "V": OTHER,
    "(": OTHER, ")": OTHER, "c": OTHER, "": MISSING,
}
_SCOPES = {"g": SCOPE_GLOBAL, "p": SCOPE_PROCESS}
_FLOW_PHASE = {"s": 0, "t": 1, "f": 2}  # the letters of the flow group


def _scope_of(s: Any) -> int:
    """An instant's scope by its `s` field: global, process, else thread."""
    return _SCOPES.get(s, SCOPE_THREAD) if isinstance(s, str) else SCOPE_THREAD


def _is_e(bp: Any) -> bool:
    return bp == "e"


class _PhaseGroups(dict):
    def __missing__(self, key: object) -> int:
        return MISSING if key is None else UNKNOWN


_group_of = _PhaseGroups(_GROUP)


class ChromeEvents:
    """The event sink of :class:`~proftui.core.importers.chrome.read.ChromeJsonReader` for one
    builder: each batch is split by phase group, its fields turned into columns (times in
    ns on the shared clock, interned labels, track ids) and pushed through the builder's
    typed methods. Problems of single events are counted at the batch's byte offset.

    A batch comes decoded by the Python path (a list of events) or by the native reader
    (:class:`~proftui.core.importers.chrome.native.Columns`); both are read through the same
    steps here, so that the index cannot tell which reader read it.

    Keep one per builder: it remembers the label combinations seen (see :class:`_Labels`).
    """

    def __init__(self, builder: TraceBuilder) -> None:
        self.builder = builder
        self._complete_labels = _Labels(
            lambda evs: [(e.cname, e.pid, e.tid, e.name, e.cat) for e in evs],
            ("cname", "track", "name", "cat"), (0, 1, 2, 3, 4))
        self._be_labels = _Labels(lambda evs: [(e.pid, e.tid, e.name, e.cat) for e in evs],
                                  ("track", "name", "cat"), (1, 2, 3, 4))
        self._flow_labels = _Labels(lambda evs: [(e.pid, e.tid, e.cat, e.name) for e in evs],
                                    ("track", "cat", "name"), (1, 2, 4, 3))

    def add_events(self, events: list[Event] | Columns, first_ordinal: int,
                   offset: int) -> None:
        """Add one batch of events; `first_ordinal` numbers the first of them."""
        view = _Native(events) if isinstance(events, Columns) else _Listed(events)
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

    def _add_group(self, group: int, view: _Listed | _Native, refs: np.ndarray, offset: int,
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
            for ev, ref, ts in zip(view.events(), refs.tolist(), view.each_time(builder, times)):
                self._add_counter(ev, ref, offset, ts)
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

    def _add_complete(self, view: _Listed | _Native, refs: np.ndarray, offset: int,
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

    def _add_instants(self, view: _Listed | _Native, refs: np.ndarray,
                      times: tuple[np.ndarray, np.ndarray]) -> None:
        builder = self.builder
        ts, ok = times
        n = len(view)
        scopes = view.codes("s", _scope_of)
        tracks = np.empty(n, np.int32)
        pids = view.field("pid")
        on_thread = np.flatnonzero(scopes == SCOPE_THREAD).tolist()
        if len(on_thread) == n:
            tracks[:] = builder.thread_tracks(pids, view.field("tid"))
        else:
            tids = view.field("tid")
            tracks[on_thread] = builder.thread_tracks([pids[i] for i in on_thread],
                                                      [tids[i] for i in on_thread])
        for i in np.flatnonzero(scopes != SCOPE_THREAD).tolist():
            tracks[i] = (builder.global_track_id() if scopes[i] == SCOPE_GLOBAL
                         else builder.process_track_id(token(pids[i])))
        names = view.field("name")
        builder.add_instants(ts, tracks, builder.intern(names),
                             builder.intern(view.field("cat")), refs, scopes, keep=ok)
        memory = [i for i, name in enumerate(names) if name == MEMORY_EVENT and ok[i]]
        if memory:  # PyTorch's allocator events: also the memory counters they carry
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

    def _add_flows(self, view: _Listed | _Native, refs: np.ndarray,
                   times: tuple[np.ndarray, np.ndarray]) -> None:
        ts, ok = times
        id_num, id_str = flow_ids(view.first_of("id", "id2"), self.builder.intern)
        phase = view.codes("ph", _FLOW_PHASE.__getitem__)
        # s and t bind to the enclosing slice; f too with bp "e", else to the next slice.
        enclosing = (phase != 2) | view.codes("bp", _is_e).astype(bool)
        track, cat, name = view.label_ids(self._flow_labels, self.builder)
        self.builder.add_flow_points(ts, track, cat, name, id_num, id_str, phase, enclosing,
                                     refs, keep=ok)

    def _add_counter(self, ev: Event, ref: int, offset: int, ts: int | None) -> None:
        """One counter event; `ts` its time on the shared clock (None: unusable)."""
        builder = self.builder
        args = event_args(ev)
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


class _Labels:
    """The ids of events' labels (a track and strings) by the distinct combinations of
    their fields: one dictionary lookup an event where the fields one by one take a pass
    each. A trace repeats few combinations (its kernels and operators on their threads).

    `key` gives each event's fields as a tuple and `parts` names what they become, in order:
    "track" takes two fields (pid, tid), any other part one string. New combinations are
    numbered in the order the columns one by one would number them (every new string of the
    first part, then of the second ..., each in event order), so the ids are the same.
    `combo` places the key's fields in the native reader's combinations (native.COMBO).
    """

    LIMIT = 1 << 20  # combinations kept; past it, forgotten (the ids stay in the interners)

    def __init__(self, key: Callable[[list[Event]], list[tuple]], parts: tuple[str, ...],
                 combo: tuple[int, ...]) -> None:
        self.key = key
        self.parts = parts
        self.combo = combo
        self.forget(None)

    def forget(self, group: Any) -> None:
        self.rows: dict[tuple, int] = {}
        self.ids = np.zeros((len(self.parts), 0), np.int32)
        self.group = group

    def knows(self, builder: TraceBuilder, keys: list[tuple]) -> bool:
        """Whether :meth:`of` would find every key of `keys` known (and number none)."""
        return (builder.tracks.group == self.group and len(self.rows) <= self.LIMIT
                and all(map(self.rows.__contains__, keys)))

    def of(self, builder: TraceBuilder, keys: list[tuple]) -> np.ndarray | None:
        """Per part a row of ids, per key a column; None if a field is unhashable."""
        if builder.tracks.group != self.group or len(self.rows) > self.LIMIT:
            self.forget(builder.tracks.group)  # a new file's pids are another group's
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


class _Listed:
    """A batch the Python path decoded: a list of events (see ChromeEvents)."""

    reader = "python"

    def __init__(self, events: list[Event], phs: list[Any] | None = None) -> None:
        self.evs = events
        self.phs = phs
        self.dur_us = getattr(events, "dur_us", None)  # durations the decoder converted

    def __len__(self) -> int:
        return len(self.evs)

    def groups(self) -> np.ndarray:
        """Each event's phase group (its phase letters kept for counting)."""
        phs = [e.ph for e in self.evs]
        try:
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        except TypeError:  # an unhashable ph (a list or object)
            phs = [p if isinstance(p, str) else json_text(p) for p in phs]
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        self.phs = phs
        return groups

    def times(self) -> tuple[np.ndarray, np.ndarray]:
        return us_to_ns([e.ts for e in self.evs])

    def sub(self, idx: np.ndarray, group: int) -> _Listed:
        pick = _picker(idx.tolist())
        part = _Listed(pick(self.evs), pick(self.phs) if self.phs is not None else None)
        part.dur_us = self.dur_us[idx] if self.dur_us is not None and group == X else None
        return part

    def field(self, name: str) -> list[Any]:
        if name == "ph" and self.phs is not None:
            return self.phs
        return list(map(operator.attrgetter(name), self.evs))

    def codes(self, name: str, of: Callable[[Any], int]) -> np.ndarray:
        """Per event `of` its field `name`, as int8."""
        return np.fromiter(map(of, self.field(name)), np.int8, len(self.evs))

    def memory_totals(self, positions: list[int]) -> None:
        return None  # read event by event (memory_samples), the reference

    def events(self, positions: list[int] | None = None) -> list[Event]:
        return self.evs if positions is None else [self.evs[i] for i in positions]

    def count_phases(self, builder: TraceBuilder) -> None:
        builder.count_phases(self.field("ph"))

    def each_time(self, builder: TraceBuilder, times: tuple[np.ndarray, np.ndarray],
                  ) -> list[int | None]:
        """Each event's time on the shared clock (None: unusable), read from the event by
        one_us_to_ns, which differs from the batch's conversion on odd values (a bool is no
        time to it)."""
        return [builder.shared_clock_one(one_us_to_ns(e.ts)) for e in self.evs]

    def first_of(self, name: str, other: str) -> list[Any]:
        """Per event field `name`, or `other` where `name` is absent (None)."""
        return [a if a is not None else b
                for a, b in zip(self.field(name), self.field(other))]

    def durations(self) -> tuple[np.ndarray, np.ndarray]:
        if self.dur_us is not None:
            return _float_durations_ns(self.dur_us)
        return _durations_ns([e.dur for e in self.evs])

    def binds(self) -> list[Any]:
        return [e.bind_id for e in self.evs]

    def label_ids(self, labels: _Labels, builder: TraceBuilder) -> list[np.ndarray]:
        """The ids of each of `labels`' parts, per event."""
        ids = labels.of(builder, labels.key(self.evs))
        # None: a field that cannot be a dictionary key (a list, an object)
        return list(ids) if ids is not None else _one_at_a_time(self, labels, builder)


class _Native:
    """A batch the native reader read (:class:`Columns`), or the events `idx` of one."""

    reader = "native"

    def __init__(self, cols: Columns, idx: np.ndarray | None = None) -> None:
        self.cols = cols
        self.idx = idx

    def __len__(self) -> int:
        return self.cols.n if self.idx is None else len(self.idx)

    def groups(self) -> np.ndarray:
        return self.codes("ph", _group_of.__getitem__)  # JSON scalars: all hashable

    def codes(self, name: str, of: Callable[[Any], int]) -> np.ndarray:
        """Per event `of` its field `name`, as int8: `of` called once per distinct value."""
        ids = self._ids(name)
        tokens = _present(ids, len(self.cols.values))
        by_token = np.zeros(len(self.cols.values), np.int8)
        by_token[tokens] = np.fromiter(map(of, self.cols.values[tokens].tolist()), np.int8,
                                       len(tokens))
        return by_token[ids]

    def times(self) -> tuple[np.ndarray, np.ndarray]:
        return self.cols.ts, self.cols.ts_ok

    def sub(self, idx: np.ndarray, group: int) -> _Native:
        return _Native(self.cols, idx if self.idx is None else self.idx[idx])

    def _ids(self, name: str) -> np.ndarray:
        ids = self.cols.ids(name)
        return ids if self.idx is None else ids[self.idx]

    def field(self, name: str) -> list[Any]:
        return self.cols.values[self._ids(name)].tolist()

    def count_phases(self, builder: TraceBuilder) -> None:
        values = self.cols.values
        counts = np.bincount(self._ids("ph") % len(values), minlength=len(values))  # -1: None
        ids = np.flatnonzero(counts)
        for value, n in zip(values[ids].tolist(), counts[ids].tolist()):
            builder.count_phase(value, n)

    def each_time(self, builder: TraceBuilder, times: tuple[np.ndarray, np.ndarray],
                  ) -> list[int | None]:
        """Each event's time on the shared clock (None: unusable): the reader's, which reads
        only what one_us_to_ns reads alike."""
        return [t if ok else None for t, ok in zip(times[0].tolist(), times[1].tolist())]

    def first_of(self, name: str, other: str) -> list[Any]:
        ids = self._ids(name)
        return self.cols.values[np.where(ids >= 0, ids, self._ids(other))].tolist()

    def events(self, positions: list[int] | None = None) -> list[Event]:
        """The events themselves, decoded from their bytes by the Python path (for the few
        kinds that need more than columns: counters, metadata, async, allocator events)."""
        return DECODER.decode(self._array_of(positions))  # one decode for them all

    def memory_totals(self, positions: list[int]) -> list[Totals | None] | None:
        """The Totals of the ``[memory]`` events at `positions`, in one typed decode of
        their bytes; None when it refuses them (they are read event by event then)."""
        try:
            return [e.args for e in MEMORY_TOTALS.decode(self._array_of(positions))]
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            return None

    def _array_of(self, positions: list[int] | None) -> bytes:
        """The events at `positions` (None: all) as the text of a JSON array."""
        rows = np.arange(self.cols.n) if self.idx is None else self.idx
        if positions is not None:
            rows = rows[positions]
        view = memoryview(self.cols.data)
        return b"[" + b",".join([view[a:b] for a, b in self.cols.bounds[rows].tolist()]) + b"]"

    def durations(self) -> tuple[np.ndarray, np.ndarray]:
        if self.idx is None:
            return self.cols.dur.copy(), self.cols.dur_ok.copy()
        return self.cols.dur[self.idx], self.cols.dur_ok[self.idx]

    def binds(self) -> None:
        return None  # the native reader declines batches with flow v2 keys

    def label_ids(self, labels: _Labels, builder: TraceBuilder) -> list[np.ndarray]:
        """The ids of each of `labels`' parts, per event: looked up once per distinct
        combination, the combinations taken in the order the events first show them (so
        that new labels are numbered as the Python path numbers them)."""
        cols = self.cols
        if self.idx is None:  # the reader numbered them in that order already
            distinct, inverse = np.arange(len(cols.combos)), cols.combo
        else:
            combo = cols.combo[self.idx]
            distinct = _present(combo, len(cols.combos))
            keys = self._keys(labels, distinct)
            if labels.knows(builder, keys):  # none new (the usual case after a file's first
                # batches): the order they are looked up in cannot matter, no sort is needed
                position = np.empty(len(cols.combos), np.int64)
                position[distinct] = np.arange(len(distinct))
                return list(labels.of(builder, keys)[:, position[combo]])
            distinct, inverse = _first_appearance(combo)
        ids = labels.of(builder, self._keys(labels, distinct))
        return list(ids[:, inverse]) if ids is not None else _one_at_a_time(self, labels, builder)

    def _keys(self, labels: _Labels, combos: np.ndarray) -> list[tuple]:
        """The label keys of the reader's combinations `combos`."""
        parts = self.cols.combos[combos]
        values = self.cols.values
        return list(zip(*(values[parts[:, j]].tolist() for j in labels.combo)))


def _first_appearance(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `ids` in the order they first appear, and per item the
    position of its value among them."""
    uniq, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return uniq[order], rank[inverse]


def _present(ids: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of `ids` (in 0..size-1, or -1 for size-1), ascending, without a
    sort."""
    seen = np.zeros(size, bool)
    seen[ids] = True
    return np.flatnonzero(seen)


def _one_at_a_time(view: _Listed | _Native, labels: _Labels, builder: TraceBuilder,
                   ) -> list[np.ndarray]:
    """The ids of each of `labels`' parts, per event, the fields taken one at a time."""
    return [builder.thread_tracks(view.field("pid"), view.field("tid")) if part == "track"
            else builder.intern(view.field(part)) for part in labels.parts]


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


def _picker(positions: list[int]) -> Callable[[list[Any]], list[Any]]:
    """The items at `positions` of a list, as a list (an itemgetter: no Python loop)."""
    if len(positions) == 1:
        return lambda items: [items[positions[0]]]
    get = operator.itemgetter(*positions)
    return lambda items: list(get(items))


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
    ok = np.abs(us) < MAX_SLICE_US  # longer is damage; False for NaN
    return np.rint(np.where(ok, us, 0.0) * 1000.0).astype(np.int64), ok
