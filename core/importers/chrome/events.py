"""Decoded Chrome trace events, pushed into a format-agnostic builder by phase group."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from itertools import repeat
from typing import Any

import numpy as np

from proftui.core.build.builder import SCOPE_GLOBAL, SCOPE_PROCESS, SCOPE_THREAD, TraceBuilder
from proftui.core.build.flows import flow_ids
from proftui.core.build.tracks import token
from proftui.core.importers.chrome.decode import Event, event_args
from proftui.core.importers.kineto_memory import MEMORY_EVENT, memory_samples
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


class _PhaseGroups(dict):
    def __missing__(self, key: object) -> int:
        return MISSING if key is None else UNKNOWN


_group_of = _PhaseGroups(_GROUP)


class ChromeEvents:
    """The event sink of :class:`~proftui.core.importers.chrome.read.ChromeJsonReader` for one
    builder: each batch is split by phase group, its fields turned into columns (times in
    ns on the shared clock, interned labels, track ids) and pushed through the builder's
    typed methods. Problems of single events are counted at the batch's byte offset.

    Keep one per builder: it remembers the label combinations seen (see :class:`_Labels`).
    """

    def __init__(self, builder: TraceBuilder) -> None:
        self.builder = builder
        self._complete_labels = _Labels(
            lambda evs: [(e.cname, e.pid, e.tid, e.name, e.cat) for e in evs],
            ("cname", "track", "name", "cat"))
        self._be_labels = _Labels(lambda evs: [(e.pid, e.tid, e.name, e.cat) for e in evs],
                                  ("track", "name", "cat"))
        self._flow_labels = _Labels(lambda evs: [(e.pid, e.tid, e.cat, e.name) for e in evs],
                                    ("track", "cat", "name"))

    def add_events(self, events: list[Event], first_ordinal: int, offset: int) -> None:
        """Add one batch of decoded events; `first_ordinal` numbers the first of them."""
        phs = [e.ph for e in events]
        try:
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        except TypeError:  # an unhashable ph (a list or object)
            phs = [p if isinstance(p, str) else json_text(p) for p in phs]
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        ref0 = self.builder.ref_base + first_ordinal
        # one conversion a batch
        times = self.builder.shared_clock(*us_to_ns([e.ts for e in events]))
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

    def _count_phases(self, group: int, phs: list[Any]) -> None:
        if group == X:  # the bulk of most traces: no need to look at each
            self.builder.count_phase("X", len(phs))
        else:
            self.builder.count_phases(phs)

    def _add_group(self, group: int, evs: list[Event], refs: np.ndarray, offset: int,
                   times: tuple[np.ndarray, np.ndarray], dur_us: np.ndarray | None = None,
                   ) -> None:
        builder = self.builder
        if group in (X, B, E, INSTANT, FLOW, UNKNOWN):
            bad = len(evs) - int(np.count_nonzero(times[1]))
            if bad:
                builder.diagnostics.add("bad_timestamp", bad, offset)
        if group == X:
            self._add_complete(evs, refs, offset, times, dur_us)
        elif group in (B, E):
            ts, ok = times
            track, name, cat = self._labels_of(self._be_labels, evs)
            builder.add_begin_ends(ts, np.full(len(evs), group == B), track, name, cat, refs,
                                   keep=ok)
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
                builder.diagnostics.add("unknown_phase", 1, offset, json_text(ev.ph)[:40])
            self._add_instants(evs, refs, times)
        elif group == MISSING:
            for ev in evs:
                if ev.name is None and ev.ts is None and ev.pid is None:
                    builder.add_empty_events(1)  # `{}`, as Paddle ends its arrays
                else:
                    builder.diagnostics.add("missing_phase", 1, offset, json_text(ev.name)[:40])

    def _labels_of(self, labels: _Labels, evs: list[Event]) -> list[np.ndarray]:
        """The ids of each of `labels`' parts, per event."""
        ids = labels.of(self.builder, evs)
        if ids is not None:
            return list(ids)
        # a field that cannot be a dictionary key (a list, an object): one at a time
        return [self._thread_tracks(evs) if part == "track"
                else self.builder.intern([getattr(e, part) for e in evs])
                for part in labels.parts]

    def _thread_tracks(self, evs: list[Event]) -> np.ndarray:
        return self.builder.thread_tracks([e.pid for e in evs], [e.tid for e in evs])

    def _add_complete(self, evs: list[Event], refs: np.ndarray, offset: int,
                      times: tuple[np.ndarray, np.ndarray],
                      dur_us: np.ndarray | None = None) -> None:
        ts, ok = times
        dur, dok = (_durations_ns([e.dur for e in evs]) if dur_us is None
                    else _float_durations_ns(dur_us))
        bad_dur = ok & ~dok
        if bad_dur.any():
            self.builder.diagnostics.add("bad_duration", int(bad_dur.sum()), offset)
        negative = dur < 0
        if negative.any():
            self.builder.diagnostics.add("negative_duration", int(negative.sum()), offset)
            dur[negative] = 0
        cname, track, name, cat = self._labels_of(self._complete_labels, evs)
        self.builder.add_slices(ts, dur, track, name, cat, refs, cname, keep=ok)
        binds = [e.bind_id for e in evs]
        if binds.count(None) != len(binds):
            self._add_bound_flows(evs, refs, binds)

    def _add_bound_flows(self, evs: list[Event], refs: np.ndarray, binds: list[Any]) -> None:
        """Flow events v2: X slices carrying `bind_id` with `flow_out` / `flow_in`."""
        rows = [(i, 0) for i, e in enumerate(evs) if binds[i] is not None and e.flow_out]
        rows += [(i, 2) for i, e in enumerate(evs) if binds[i] is not None and e.flow_in]
        idx = np.array([r[0] for r in rows], np.int64)
        id_num, id_str = flow_ids([binds[i] for i in idx.tolist()], self.builder.intern)
        self.builder.add_bound_flow_ends(refs[idx], id_num, id_str, [r[1] for r in rows],
                                         np.zeros(len(idx), np.int32),
                                         np.zeros(len(idx), np.int32))

    def _add_instants(self, evs: list[Event], refs: np.ndarray,
                      times: tuple[np.ndarray, np.ndarray]) -> None:
        builder = self.builder
        ts, ok = times
        scopes = np.fromiter((_SCOPES.get(e.s, SCOPE_THREAD) if isinstance(e.s, str)
                              else SCOPE_THREAD for e in evs), np.int8, len(evs))
        tracks = np.empty(len(evs), np.int32)
        on_thread = np.flatnonzero(scopes == SCOPE_THREAD)
        tracks[on_thread] = self._thread_tracks([evs[i] for i in on_thread.tolist()])
        for i in np.flatnonzero(scopes != SCOPE_THREAD).tolist():
            tracks[i] = (builder.global_track_id() if scopes[i] == SCOPE_GLOBAL
                         else builder.process_track_id(token(evs[i].pid)))
        builder.add_instants(ts, tracks, builder.intern([e.name for e in evs]),
                             builder.intern([e.cat for e in evs]), refs, scopes, keep=ok)
        memory = [i for i, e in enumerate(evs) if e.name == MEMORY_EVENT and ok[i]]
        if memory:  # PyTorch's allocator events: also the memory counters they carry
            self._add_memory_samples([evs[i] for i in memory], ts[memory], refs[memory])

    def _add_memory_samples(self, evs: list[Event], ts: np.ndarray, refs: np.ndarray) -> None:
        """The allocator totals of Kineto ``[memory]`` events as counter samples on their
        process (see :mod:`proftui.core.importers.kineto_memory`)."""
        builder = self.builder
        for ev, t, ref in zip(evs, ts.tolist(), refs.tolist()):
            samples = memory_samples(event_args(ev))
            if not samples:
                continue
            track = builder.process_track_id(token(ev.pid))
            for series_name, value in samples:
                builder.add_counter_sample(track, series_name, t, value, ref)

    def _add_flows(self, evs: list[Event], refs: np.ndarray,
                   times: tuple[np.ndarray, np.ndarray]) -> None:
        ts, ok = times
        id_num, id_str = flow_ids([e.id if e.id is not None else e.id2 for e in evs],
                                  self.builder.intern)
        letters = [e.ph for e in evs]
        phase = np.fromiter(map(_FLOW_PHASE.__getitem__, letters), np.int8, len(evs))
        # s and t bind to the enclosing slice; f too with bp "e", else to the next slice.
        enclosing = (phase != 2) | np.fromiter(map(operator.eq, [e.bp for e in evs],
                                                   repeat("e")), bool, len(evs))
        track, cat, name = self._labels_of(self._flow_labels, evs)
        self.builder.add_flow_points(ts, track, cat, name, id_num, id_str, phase, enclosing,
                                     refs, keep=ok)

    def _add_counter(self, ev: Event, ref: int, offset: int) -> None:
        builder = self.builder
        ts = builder.shared_clock_one(one_us_to_ns(ev.ts))
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

    def _add_async(self, ev: Event, ref: int, offset: int) -> None:
        ts = self.builder.shared_clock_one(one_us_to_ns(ev.ts))
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
