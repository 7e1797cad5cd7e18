"""The format-agnostic trace builder: typed columns pushed by importers, built into an index.

Importers (Chrome JSON, SQLite exports, CSVs) turn their format into typed columns and push
them through :class:`TraceBuilder`'s methods (slices, begin/end points, instants, flow points,
bound flow ends, counter samples, async events, process and thread metadata), as Perfetto's
importers push typed events into trackers that know no format. The builder keeps per-batch
numpy columns (no Python object per event survives a batch) and, at the end, pairs B/E and
async events, lays slices out on lanes, binds flows and hands frozen arrays to
:class:`~proftui.core.model.index.TraceIndex`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from proftui.core.build import lanes as layout
from proftui.core.build.chunks import Chunks, Samples
from proftui.core.build.flows import flow_edges
from proftui.core.build.pairing import pair_async, pair_begin_end
from proftui.core.build.state import BuilderState
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
from proftui.core.model.diagnostics import Diagnostics
from proftui.core.model.index import TraceIndex
from proftui.core.model.strings import StringInterner, json_text
from proftui.core.model.timeconv import MAX_SLICE_NS
from proftui.core.runtime.halves import taken
from proftui.core.runtime.malloc import release_before, reused_arrays
from proftui.core.runtime.records import checked

# Scopes of instant events.
SCOPE_THREAD, SCOPE_PROCESS, SCOPE_GLOBAL = 0, 1, 2


@dataclass
class _Counters:
    series: dict[tuple, int] = field(default_factory=dict)
    series_track: list[int] = field(default_factory=list)
    series_name: list[int] = field(default_factory=list)


class TraceBuilder:
    """Accumulates what importers push, batch by batch, and builds a :class:`TraceIndex`.

    The typed push API, one method per table: :meth:`add_slices`, :meth:`add_begin_ends`,
    :meth:`add_instants`, :meth:`add_flow_points`, :meth:`add_bound_flow_ends`,
    :meth:`add_counter_sample`, :meth:`add_async_event`, :meth:`process_meta` and
    :meth:`thread_meta`; labels and tracks through :meth:`intern`, :meth:`thread_tracks`,
    :meth:`process_track_id` and :meth:`global_track_id`; times through :meth:`shared_clock`;
    what the index counts through :meth:`count_phase` and :meth:`add_empty_events`. Importers
    that read tables push whole columns on the file's clock instead (:meth:`add_slice_columns`,
    :meth:`add_instant_columns`, :meth:`add_flow_pairs`, :meth:`add_counter_columns`,
    :meth:`declare_process`, :meth:`declare_thread`). :meth:`state` and :meth:`merge` carry
    it to another process or to the rank cache as a :class:`BuilderState`.
    """

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
        # Batches with events, by the reader that read them ("native", "python"): said by
        # `proftui info`, so that a user knows which reader built the index.
        self.batches_read: Counter[str] = Counter()
        self._slices = Chunks(start=np.int64, dur=np.int64, track=np.int32, name=np.int32,
                               cat=np.int32, ref=np.int64, cname=np.int32)
        self._be = Chunks(ts=np.int64, track=np.int32, name=np.int32, cat=np.int32,
                           ref=np.int64, begin=np.bool_)
        self._instants = Chunks(ts=np.int64, track=np.int32, name=np.int32, cat=np.int32,
                                 ref=np.int64, scope=np.int8)
        # Flow points; a flow is keyed by (cat, name, id), the id numeric or an interned string.
        self._flows = Chunks(ts=np.int64, track=np.int32, cat=np.int32, name=np.int32,
                              id_num=np.int64, id_str=np.int32, phase=np.int8,
                              enclosing=np.bool_, ref=np.int64)
        # Flow ends bound to a slice by its ordinal: flow v2 (X events with bind_id; no
        # category or name) and importers that know both ends (SQLite exports).
        self._bound = Chunks(ref=np.int64, id_num=np.int64, id_str=np.int32,
                              phase=np.int8, cat=np.int32, name=np.int32)
        self._counters = _Counters()
        self._samples = Samples()
        self._async_events: list[tuple] = []
        self._flow_count = 0  # flows added by add_flow_pairs (their ids)

    # -- typed push API: what importers add, whatever the format ----------------------------
    #
    # Times are int64 ns on the shared clock (see :meth:`shared_clock`); labels are string ids
    # (see :meth:`intern`) and track ids (see :meth:`thread_tracks`); `ref` numbers each event
    # in its file from `ref_base` (args are read back by it); `keep`, when given, says which
    # rows to keep (the others are dropped, counted by the importer).

    def shared_clock(self, ts_ns: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Timestamps of the file being read (ns, `ok` where usable) moved to the shared clock
        by `time_offset_ns`; one the move would overflow becomes unusable (0, not ok)."""
        offset = self.time_offset_ns
        if not offset:
            return ts_ns, ok
        room = (ts_ns <= _INT64_MAX - offset) if offset > 0 else (ts_ns >= _INT64_MIN - offset)
        ok = ok & room
        # offset * ok: nothing is added where the sum would overflow (those are dropped)
        return np.where(ok, ts_ns + np.int64(offset) * ok, 0), ok

    def shared_clock_one(self, ts_ns: int | None) -> int | None:
        """One timestamp of the file being read on the shared clock, None if unusable."""
        if ts_ns is None:
            return None
        ts_ns += self.time_offset_ns
        return ts_ns if _INT64_MIN <= ts_ns <= _INT64_MAX else None

    def count_phase(self, phase: str, n: int) -> None:
        """Count `n` events of `phase` (a Chrome phase letter: what the index's phase counts
        show)."""
        self.phase_counts[phase] += n

    def count_phases(self, phases: list[Any]) -> None:
        """Count one event of each phase in `phases`."""
        self.phase_counts.update(phases)

    def add_empty_events(self, n: int) -> None:
        """Count `n` empty entries (``{}``): neither kept nor damage."""
        self.empty_events += n

    def intern(self, values: list[Any]) -> np.ndarray:
        """String ids of label values: text, numbers and None as they are; a value of another
        JSON type (a list, an object) as its JSON text, counted as a bad field."""
        try:
            return np.fromiter(map(self.strings.__getitem__, values), np.int32, len(values))
        except TypeError:  # unhashable values: lists or objects where text was expected
            fixed = [v if v is None or isinstance(v, (str, int, float)) else json_text(v)
                     for v in values]
            self.diagnostics.add("bad_field", len(values) - sum(a is b for a, b in
                                                                 zip(fixed, values)))
            return np.fromiter(map(self.strings.__getitem__, fixed), np.int32, len(values))

    def thread_tracks(self, pids: list[Any], tids: list[Any]) -> np.ndarray:
        """The thread track of each (pid, tid) of the file being read; a pid or tid of an
        unexpected JSON type is keyed by its text and counted as a bad field."""
        keys = zip(pids, tids)
        try:
            return np.fromiter(map(self.tracks.__getitem__, keys), np.int32, len(pids))
        except TypeError:
            fixed = [(token(p), token(t)) for p, t in zip(pids, tids)]
            self.diagnostics.add("bad_field", sum(1 for p, t in zip(pids, tids)
                                                  if not (hashable(p) and hashable(t))))
            return np.fromiter(map(self.tracks.__getitem__, fixed), np.int32, len(pids))

    def global_track_id(self) -> int:
        """The track of global-scope instants."""
        return self.tracks[(GLOBAL_TRACK, None, None)]

    def add_slices(self, start_ns: np.ndarray, dur_ns: np.ndarray, track: np.ndarray,
                   name: np.ndarray, cat: np.ndarray, ref: np.ndarray, cname: np.ndarray,
                   keep: np.ndarray | None = None) -> None:
        """Complete slices: start and duration (≥ 0) in ns; `cname` a colour's string id (0:
        none)."""
        self._slices.append(keep, start=start_ns, dur=dur_ns, track=track, name=name, cat=cat,
                            ref=ref, cname=cname)

    def add_begin_ends(self, ts_ns: np.ndarray, begin: np.ndarray, track: np.ndarray,
                       name: np.ndarray, cat: np.ndarray, ref: np.ndarray,
                       keep: np.ndarray | None = None) -> None:
        """Begin (`begin` True) and end points of slices, paired per track when the index is
        built."""
        self._be.append(keep, ts=ts_ns, track=track, name=name, cat=cat, ref=ref, begin=begin)

    def add_instants(self, ts_ns: np.ndarray, track: np.ndarray, name: np.ndarray,
                     cat: np.ndarray, ref: np.ndarray, scope: np.ndarray,
                     keep: np.ndarray | None = None) -> None:
        """Instant events; `scope` SCOPE_THREAD, SCOPE_PROCESS or SCOPE_GLOBAL (the track
        given is the thread's, the process track or the global track accordingly)."""
        self._instants.append(keep, ts=ts_ns, track=track, name=name, cat=cat, ref=ref,
                              scope=scope)

    def add_flow_points(self, ts_ns: np.ndarray, track: np.ndarray, cat: np.ndarray,
                        name: np.ndarray, id_num: np.ndarray, id_str: np.ndarray,
                        phase: np.ndarray, enclosing: np.ndarray, ref: np.ndarray,
                        keep: np.ndarray | None = None) -> None:
        """Flow points bound to a slice by time: a flow is keyed by (cat, name, id), the id a
        number (`id_num`, `id_str` 0) or an interned text (see
        :func:`~proftui.core.build.flows.flow_ids`); `phase` 0 start, 1 step, 2 end;
        `enclosing` binds to the slice around the point, else to the next one."""
        self._flows.append(keep, ts=ts_ns, track=track, cat=cat, name=name, id_num=id_num,
                           id_str=id_str, phase=phase, enclosing=enclosing, ref=ref)

    def add_bound_flow_ends(self, ref: np.ndarray, id_num: np.ndarray, id_str: np.ndarray,
                            phase: Any, cat: np.ndarray, name: np.ndarray) -> None:
        """Flow ends bound to a slice by its ordinal `ref` (keyed and phased as flow points)."""
        self._bound.append(ref=ref, id_num=id_num, id_str=id_str, phase=phase, cat=cat,
                           name=name)

    def add_counter_samples(self, series: np.ndarray, ts: np.ndarray, value: np.ndarray,
                            ref: np.ndarray) -> None:
        """Counter samples as columns: series ids (from :meth:`series_id`), ts in ns on the
        shared clock, values and event ordinals."""
        self._samples.append(series=series, ts=ts, value=value, ref=ref)

    def add_counter_sample(self, track: int, series_name: str, ts_ns: int, value: float,
                           ref: int) -> None:
        """One sample of the counter series `series_name` of a (process-wide) track."""
        self._samples.add(self.series_id(track, series_name), ts_ns, value, ref)

    def add_async_event(self, ts_ns: int, ref: int, phase: str, pid: Any, cat: Any, name: Any,
                        ident: Any, scope: Any, offset: int | None) -> None:
        """An async event, kept for pairing when the index is built, when all are known and in
        time order: `phase` a Chrome async letter (b n e, S T p F), `ident` its id, `offset`
        where it was read (for the problems pairing counts)."""
        self._async_events.append((ts_ns, ref, phase, self.tracks.pid(pid),
                                   self.strings[token(cat)], self.strings[token(name)],
                                   id_token(ident), token(scope), offset))

    def process_meta(self, pid: Any) -> Meta:
        """The name, labels and sort index of a process of the file being read, to fill in
        (made empty on first use)."""
        return self.processes.setdefault(self.tracks.pid(pid), Meta())

    def thread_meta(self, pid: Any, tid: Any) -> Meta:
        """As :meth:`process_meta`, of a thread (which then has a track, events or not)."""
        key = (self.tracks.pid(pid), norm_id(tid))
        meta = self.threads.setdefault(key, Meta())
        self.tracks.of_full((THREAD, *key))
        return meta

    # -- columns on the file's clock (importers that read tables, not events) --------------

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
        ts, ok = self.shared_clock(start, np.ones(len(start), bool))
        dur = end - start
        negative = dur < 0
        if negative.any():
            self.diagnostics.add("negative_duration", int(negative.sum()))
            dur = np.where(negative, 0, dur)
        self.phase_counts["X"] += len(start)
        self.add_slices(ts, dur, track, name, cat, ref, np.zeros(len(start), np.int32), keep=ok)
        return int(ok.sum())

    def add_instant_columns(self, ts: np.ndarray, track: np.ndarray, name: np.ndarray,
                            cat: np.ndarray, ref: np.ndarray) -> None:
        """Thread-scoped instant events given as columns."""
        ts, ok = self.shared_clock(np.asarray(ts, np.int64), np.ones(len(ts), bool))
        self.phase_counts["i"] += len(ts)
        self.add_instants(ts, track, name, cat, ref, np.full(len(ts), SCOPE_THREAD, np.int8),
                          keep=ok)

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
        self.add_bound_flow_ends(np.concatenate([src_ref, dst_ref]),
                                 np.concatenate([ids, ids]), np.zeros(2 * n, np.int32),
                                 np.repeat(np.array([0, 2], np.int8), n),
                                 np.full(2 * n, cat_id, np.int32),
                                 np.full(2 * n, name_id, np.int32))

    def series_id(self, track: int, series_name: str) -> int:
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
        ts, ok = self.shared_clock(np.asarray(ts, np.int64), np.ones(len(ts), bool))
        ok &= ~np.isnan(values)
        if (~ok).any():
            self.diagnostics.add("bad_counter", int((~ok).sum()), None, series_name[:40])
        self.phase_counts["C"] += len(ts)
        self._samples.append(series=np.full(len(ts), self.series_id(track, series_name)),
                             ts=ts, value=values, ref=ref, keep=ok)

    # -- parallel parts -----------------------------------------------------------------------

    def state(self) -> BuilderState:
        """Everything added so far, as a record (to merge into another builder); the tables'
        parts are handed over (this builder's are empty afterwards)."""
        c = self._counters
        return BuilderState(
            texts=self.strings.texts,
            tracks=self.tracks.keys_in_order,
            phase_counts=dict(self.phase_counts),
            processes=self.processes,
            threads=self.threads,
            empty_events=self.empty_events,
            chunks={name: getattr(self, name).concat() for name in CHUNK_TABLES},
            counter_series=c.series,
            async_events=self._async_events,
            diagnostics=self.diagnostics.to_list(),
            batches_read=dict(self.batches_read),
        )

    def merge(self, state: BuilderState, ordinal_offset: int) -> None:
        """Add another builder's `state`; its event ordinals are shifted by `ordinal_offset`.
        Raises :class:`~proftui.core.runtime.records.StaleRecord`, before adding anything, for
        a record of another version."""
        checked(state, BuilderState)
        smap = np.fromiter(map(self.strings.__getitem__, state.texts), np.int32,
                           len(state.texts))
        tracks = [(k, p, smap[x] if k == ASYNC_TRACK else x) for k, p, x in state.tracks]
        tmap = np.fromiter(map(self.tracks.of_full, tracks), np.int32, len(tracks))
        self.phase_counts.update(state.phase_counts)
        for pid, meta in state.processes.items():
            fill_meta(self.processes.setdefault(pid, Meta()), meta)
        for key, meta in state.threads.items():
            fill_meta(self.threads.setdefault(key, Meta()), meta)
        self.empty_events += state.empty_events
        self.batches_read.update(state.batches_read)
        series = np.zeros(len(state.counter_series), np.int64)
        for (track, series_name), sid in state.counter_series.items():
            series[sid] = self.series_id(int(tmap[track]), series_name)
        for name in CHUNK_TABLES:
            cols = dict(state.chunks[name])
            for col in cols:
                if col in TEXT_COLUMNS:
                    cols[col] = smap[cols[col]]
                elif col == "track":
                    cols[col] = tmap[cols[col]]
                elif col == "series":
                    cols[col] = series[cols[col]]
                elif col == "ref":
                    cols[col] = cols[col] + ordinal_offset
            getattr(self, name).append(**cols)
        self._async_events += [(ts, ref + ordinal_offset, ph, pid, int(smap[cat]),
                                int(smap[name]), ident, scope, offset)
                               for ts, ref, ph, pid, cat, name, ident, scope, offset
                               in state.async_events]
        for item in state.diagnostics:
            self.diagnostics.add(item["kind"], item["count"], item["first_offset"],
                                 item["detail"])

    # -- finish -------------------------------------------------------------------------------

    def build(self, metadata: dict[str, Any], batches: np.ndarray, threads: int = 1,
              ) -> TraceIndex:
        """Pair, sort and lay out everything added; return the finished index. With
        `threads` 2, the slices' tracks are laid out in two halves at once (the same index)."""
        with reused_arrays():
            return self._build(metadata, batches, threads)

    def _build(self, metadata: dict[str, Any], batches: np.ndarray, threads: int,
               ) -> TraceIndex:
        """(build, its arrays reused)"""
        latest_ts = self._latest_ts()
        slices = self._slices.concat(threads)
        release_before(slices["start"].nbytes)  # the per-batch parts just freed
        async_spans, async_instants = pair_async(self._async_events, latest_ts, self.tracks,
                                                 self.diagnostics)
        for ts, track, name, cat, ref in async_instants:
            self._instants.append(ts=[ts], track=[track], name=[name], cat=[cat], ref=[ref],
                                  scope=[SCOPE_THREAD])
        extra = [pair_begin_end(self._be.concat(), slices, self.diagnostics), async_spans]
        for paired in extra:
            too_long = paired["dur"] > MAX_SLICE_NS
            if too_long.any():
                self.diagnostics.add("too_long", int(too_long.sum()))
                paired["dur"][too_long] = 0
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

        order = layout.sort_slices(slices["track"], slices["start"], slices["dur"], threads)
        for key in list(slices):  # one column at a time: one copy alive, not all (two at a
            # time in two threads took a tenth less time and 0.05x the file more memory;
            # a column's two halves at a time, as much as one)
            slices[key] = taken(slices[key], order, threads)
        del order
        slices["depth"], parent, track_rows = layout.layout_tracks(
            slices["track"], slices["start"], slices["dur"], len(track_order), threads)
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
        # What the layout and the tables' concatenations freed, handed back: kept for reuse
        # (see reused_arrays), the flows' peak would sit on it (msprof-like 1 GB in two
        # parts: 0.52x -> 0.48x the file).
        release_before(slices["start"].nbytes)
        flows = flow_edges(points, self._bound.concat(), slices, parent, self.diagnostics,
                           track_group, threads)
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
                **({"reader": {k: self.batches_read[k] for k in ("native", "python")}}
                   if self.batches_read else {}),
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
        self._samples.flush()
        for chunks, key in ((self._be, "ts"), (self._instants, "ts"), (self._flows, "ts"),
                            (self._samples, "ts")):
            for part in chunks.parts[key]:
                if len(part):
                    ends.append(int(part.max()))
        s, d = self._slices.parts["start"], self._slices.parts["dur"]
        for a, b in zip(s, d):
            if len(a):
                ends.append(int((a + b).max()))
        ends += [event[0] for event in self._async_events]
        return max(ends)

    def _counter_columns(self) -> dict[str, np.ndarray]:
        c = self._counters
        samples = self._samples.concat()
        order = np.lexsort((samples["ts"], samples["series"]))
        series = samples["series"][order]
        return {
            "series_track": np.asarray(c.series_track, np.int32),
            "series_name": np.asarray(c.series_name, np.int32),
            "series_first": np.searchsorted(series, np.arange(len(c.series_track))
                                            ).astype(np.int64),
            "sample_series": series,
            "sample_ts": samples["ts"][order],
            "sample_value": samples["value"][order],
            "sample_ref": samples["ref"][order],
        }


# The tables of a builder's state and their columns that hold string ids.
CHUNK_TABLES = ("_slices", "_be", "_instants", "_flows", "_bound", "_samples")
TEXT_COLUMNS = ("name", "cat", "cname", "id_str")
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


_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


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



