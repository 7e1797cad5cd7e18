"""Operator statistics of a window: slices grouped by name or category, and the slices of
one op (listed, with their iterations, by :mod:`.instances`).

Everything is vectorised over the index columns (no Python object per slice): a window over
ten million slices is a few masks, ``np.bincount`` and ``np.add.at`` / ``np.minimum.at`` on the
string ids, in integer nanoseconds so that totals are exact.

Self time: the time a slice owns, see :mod:`proftui.core.query.self_time` (where slices nest, its
duration less its children's; parents from :mod:`proftui.core.query.parents`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from proftui.core.model.errors import ProftuiError
from proftui.core.model.index import TraceIndex
from proftui.core.model.table import Column, Table, text_column
from proftui.core.ops.grouping import GROUP_BY, OpTypes, SliceKeys
from proftui.core.ops.roles import roles, track_groups
from proftui.core.query.self_time import self_times, window_own

SIDES = ("all", "device", "host")


# -- which slices -------------------------------------------------------------------------------


def _track_filter(index: TraceIndex, tracks: Sequence[int] | np.ndarray | None,
                  side: str) -> np.ndarray | None:
    """Boolean per track of the tracks asked for, or None for all of them."""
    if side not in SIDES:
        raise ProftuiError(f'Unknown side "{side}": use one of {", ".join(SIDES)}.')
    keep = None
    if tracks is not None:
        keep = np.zeros(index.n_tracks, bool)
        keep[np.asarray(tracks, np.int64)] = True
    if side != "all":
        device = roles(index).device
        side_keep = device if side == "device" else ~device
        keep = side_keep if keep is None else keep & side_keep
    return keep


def _window(index: TraceIndex, start_ns: int | None, end_ns: int | None) -> tuple[int, int]:
    lo = index.start_ns if start_ns is None else int(start_ns)
    hi = index.end_ns if end_ns is None else int(end_ns)
    if hi < lo:
        raise ProftuiError(f"The window ends ({hi} ns) before it starts ({lo} ns).")
    return lo, hi


GroupWindows = Mapping[str, tuple[int, int]]  # group (rank or device) -> its own [lo, hi)
Bound = Any  # np.int64, or an int64 array of one bound per slice of the index


def group_bounds(index: TraceIndex, windows: GroupWindows
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each group's own window as bounds per track (lo, hi; int64 ns) and the tracks of the
    groups named (bool per track; the others are left out)."""
    track_group = track_groups(index)
    track_lo = np.zeros(index.n_tracks, np.int64)
    track_hi = np.zeros(index.n_tracks, np.int64)
    keep = np.zeros(index.n_tracks, bool)
    for name, (lo, hi) in windows.items():
        if hi < lo:
            raise ProftuiError(f"The window of {name} ends ({hi} ns) before it starts ({lo} ns).")
        sid = index.strings.find(name)
        mine = track_group == sid if sid >= 0 else np.zeros(index.n_tracks, bool)
        track_lo[mine], track_hi[mine] = lo, hi
        keep |= mine
    return track_lo, track_hi, keep


def _bounds(index: TraceIndex, lo: int, hi: int, groups: GroupWindows | None
            ) -> tuple[Bound, Bound, np.ndarray | None, np.ndarray | None]:
    """The window's bounds (the scalars, or with `groups` one per slice), the tracks they
    keep (None: all) and each track's window length (None: hi - lo for all)."""
    if groups is None:
        return lo, hi, None, None
    track_lo, track_hi, keep = group_bounds(index, groups)
    track = index.col("slices.track")
    return track_lo[track], track_hi[track], keep, track_hi - track_lo


def _at(bound: Bound, rows: np.ndarray) -> Bound:
    """A bound for the slices `rows`: the scalar itself, or their entries."""
    return bound[rows] if np.ndim(bound) else np.int64(bound)


def _selection(index: TraceIndex, lo: Bound, hi: Bound, keep_track: np.ndarray | None,
               rows: slice = slice(None)) -> np.ndarray:
    """Indices of the operator slices (see :mod:`proftui.core.ops.roles`) overlapping [lo, hi)
    on the kept tracks (bounds: scalars, or one per slice of the index), among the index's
    `rows` (all of them by default).

    A slice overlaps when it starts before `hi` and ends after `lo`; a zero-length slice
    when it lies in [lo, hi) (as :func:`proftui.core.ops.window.slices_in_window`)."""
    start = index.col("slices.start")[rows]
    mask = roles(index).op[rows].copy()
    if np.ndim(lo) or not (lo <= index.start_ns and hi >= index.end_ns):
        dur = index.col("slices.dur")[rows]
        low, high = _at(lo, rows), _at(hi, rows)
        end = start + dur
        mask &= (start < high) & ((end > low) | ((dur == 0) & (start >= low)))
    if keep_track is not None:
        mask &= keep_track[index.col("slices.track")[rows]]
    return np.flatnonzero(mask) + (rows.start or 0)


# -- ops of a window ----------------------------------------------------------------------------


def aggregate_ops(index: TraceIndex, *, start_ns: int | None = None, end_ns: int | None = None,
                  tracks: Sequence[int] | np.ndarray | None = None, by: str = "name",
                  side: str = "all", types: OpTypes | None = None,
                  tables: Sequence[Table] = (), groups: GroupWindows | None = None) -> Table:
    """The operators overlapping the window [start_ns, end_ns), grouped; with `groups`, those
    of each group named there inside that group's own window instead (a folder of ranks'
    iteration N: each rank's own step, as their clocks and steps do not line up).

    Operators are the slices :mod:`proftui.core.ops.roles` calls so (no step markers, derived
    tracks or repeated communication tasks). None for a bound means the trace's start or end.
    `tracks` (track ids) and `side` ("all", "device" or "host") narrow them. `by` groups by
    name (:func:`~proftui.core.ops.grouping.op_name`), category, type (`types`, see
    :func:`~proftui.core.ops.grouping.op_types`) or engine (from `tables`).

    A slice counts when it overlaps the window; its Total and Self are clipped to the window
    (the part inside it, self time being the time it owns inside the window), while Avg, Min and
    Max describe whole instances (Avg = sum of whole durations / Count): an instance cut by the
    window's edge can make Avg exceed Total, so in a window narrower than the trace the headers
    of Avg, Min and Max say "(whole)".

    Two shares: Window(%) is the op's time on a track over the window length, averaged over the
    tracks it ran on (nested instances of the op count once, so at most 100 on one stream or
    thread); Busy(%) is its Self over the Self of all rows, the share of the busy time of the
    slices counted (summing to 100 over the rows). Rows are ordered by Total, longest first;
    the hidden "name_id" column holds the group's number for :func:`op_instances`.

    Columns (times int64-valued ns in float64 arrays): Name|Category|Type|Engine, Count,
    Total, Self, Avg, Min, Max, Window (%), Busy (%), name_id.
    """
    slice_key = SliceKeys(index, by, types, tables)  # a chunk's at a time
    key_labels = slice_key.labels
    key_header = GROUP_BY[by]
    lo, hi = _window(index, start_ns, end_ns)
    lo_at, hi_at, keep, track_span = _bounds(index, lo, hi, groups)
    keep_track = _kept_tracks(index, tracks, side, keep)
    n_keys = len(key_labels)
    # Self: the time each slice owns in the window (see proftui.core.query.self_time).
    whole_trace = groups is None and lo <= index.start_ns and hi >= index.end_ns
    own = self_times(index) if whole_trace else window_own(index, lo_at, hi_at)
    sums = _Sums(n_keys, index.n_tracks)
    for rows in _chunks(index):
        sel = _selection(index, lo_at, hi_at, keep_track, rows)
        clipped_start, clipped_end = _clip(index, lo_at, hi_at, sel)
        keys = slice_key.of(sel)
        sums.add(keys, clipped_end - clipped_start, index.col("slices.dur")[sel], own[sel])
        sums.occupancy(keys, index.col("slices.track")[sel], clipped_start, clipped_end,
                       hi - lo, track_span, int(index.col("slices.track")[rows.stop - 1]))
    count, total, whole, owned, low, high = sums.totals()
    occupied, spans = sums.occupied, sums.spans
    present = np.flatnonzero(count)
    present = present[np.argsort(-total[present], kind="stable")]
    cnt = count[present]
    tot = total[present]
    self_ns = owned[present]
    self_sum = float(self_ns.sum())
    whole_ = "" if whole_trace else " (whole)"
    columns = [
        text_column(key_header, [key_labels[k] for k in present.tolist()]),
        Column("Count", "Count", "", "number", cnt.astype(np.float64)),
        Column("Total", "Total", "ns", "number", tot.astype(np.float64)),
        Column("Self", "Self", "ns", "number", self_ns.astype(np.float64)),
        Column("Avg" + whole_, "Avg", "ns", "number", whole[present] / np.maximum(cnt, 1)),
        Column("Min" + whole_, "Min", "ns", "number", low[present].astype(np.float64)),
        Column("Max" + whole_, "Max", "ns", "number", high[present].astype(np.float64)),
        Column("Window(%)", "Window", "%", "number",
               np.divide(occupied[present] * 100.0, spans[present],
                         out=np.full(len(present), np.nan), where=spans[present] > 0)),
        Column("Busy(%)", "Busy", "%", "number",
               self_ns / self_sum * 100.0 if self_sum > 0 else np.full(len(present), np.nan)),
        Column("name_id", "name_id", "", "number", present.astype(np.float64)),
    ]
    return Table("ops", "", columns, len(present))


def op_totals(index: TraceIndex, *, start_ns: int | None = None, end_ns: int | None = None,
              by: str = "name", side: str = "all", types: OpTypes | None = None,
              tables: Sequence[Table] = (), groups: GroupWindows | None = None
              ) -> tuple[Sequence[str], np.ndarray, np.ndarray]:
    """Per group of :func:`aggregate_ops` that ran in the window (or in `groups`' own
    windows): its label, Total (clipped to the window, ns) and Count, as aggregate_ops counts
    them, without the self times and shares (what a comparison of two profiles needs, at a
    fraction of the cost)."""
    slice_key = SliceKeys(index, by, types, tables)
    labels = slice_key.labels
    lo, hi = _window(index, start_ns, end_ns)
    lo_at, hi_at, keep, _ = _bounds(index, lo, hi, groups)
    sel, clipped_start, clipped_end = _clipped(index, lo_at, hi_at, None, side, keep)
    keys = slice_key.of(sel)
    counts, totals = _count_total(keys, clipped_end - clipped_start,
                                  int(keys.max()) + 1 if len(keys) else 0)
    present = np.flatnonzero(counts)
    return [labels[int(k)] for k in present], totals[present], counts[present]


def _kept_tracks(index: TraceIndex, tracks: Sequence[int] | np.ndarray | None, side: str,
                 keep: np.ndarray | None) -> np.ndarray | None:
    """Boolean per track of the tracks asked for and in `keep`, or None for all."""
    keep_track = _track_filter(index, tracks, side)
    if keep is not None:
        keep_track = keep if keep_track is None else keep_track & keep
    return keep_track


def _clipped(index: TraceIndex, lo: Bound, hi: Bound,
             tracks: Sequence[int] | np.ndarray | None, side: str,
             keep: np.ndarray | None = None, rows: slice = slice(None),
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The operator slices overlapping [lo, hi) on the tracks asked for (and `keep`), among
    the index's `rows`, and their starts and ends clipped to the window."""
    sel = _selection(index, lo, hi, _kept_tracks(index, tracks, side, keep), rows)
    return (sel, *_clip(index, lo, hi, sel))


def _clip(index: TraceIndex, lo: Bound, hi: Bound, sel: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """The starts and ends of the slices `sel` clipped to [lo, hi)."""
    start = index.col("slices.start")[sel]
    end = start + index.col("slices.dur")[sel]
    clipped_start = np.maximum(start, _at(lo, sel))
    return clipped_start, np.maximum(np.minimum(end, _at(hi, sel)), clipped_start)


def sums_ns(keys: np.ndarray, ns: np.ndarray, n_keys: int) -> np.ndarray:
    """Per key, the sum of its `ns` (int64), saturated at the int64 maximum rather than
    wrapped to a negative: past 2^63 ns (292 years) only a hostile file gets, with thousands
    of slices each as long as the importers allow."""
    total = np.zeros(n_keys, np.int64)
    np.add.at(total, keys, ns)
    approx = np.bincount(keys, weights=ns, minlength=n_keys)  # float64: never wraps
    total[approx >= _INT64_LIMIT] = np.iinfo(np.int64).max
    return total


_INT64_LIMIT = float(2**63) * (1 - 2**-20)  # under 2^63 by more than float64 sums err


def _count_total(keys: np.ndarray, clipped: np.ndarray, n_keys: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per key: how many slices, and their summed clipped time (int64 ns)."""
    count = np.bincount(keys, minlength=n_keys)
    total = sums_ns(keys, clipped, n_keys)
    return count, total


# Slices of the index taken at a time by aggregate_ops: its temporaries stay under 10 MB
# however many slices the trace holds (all at once, ~10 arrays of 8 bytes a slice: 190 MB at
# 2.4 M slices; 1 << 18 at a time, 37 MB, and no faster).
AGGREGATE_CHUNK = 1 << 16
_NO_FLOOR = np.iinfo(np.int64).min


def _chunks(index: TraceIndex) -> list[slice]:
    """The index's slices as ranges of AGGREGATE_CHUNK rows."""
    n = index.n_slices
    return [slice(a, min(a + AGGREGATE_CHUNK, n)) for a in range(0, n, AGGREGATE_CHUNK)]


class _Sums:
    """The per-key sums of :func:`aggregate_ops`, added a chunk of slices at a time: counts;
    clipped, whole and self times (int64, saturated as :func:`sums_ns` does once all are
    added); whole min and max; and the occupancy (see :meth:`occupancy`)."""

    def __init__(self, n_keys: int, n_tracks: int) -> None:
        self.n_keys, self.n_tracks = n_keys, n_tracks
        self.count = np.zeros(n_keys, np.int64)
        self.sums = np.zeros((3, n_keys), np.int64)  # clipped total, whole, self
        self.approx = np.zeros((3, n_keys))  # the same in float64, which never wraps
        self.low = np.full(n_keys, np.iinfo(np.int64).max)
        self.high = np.full(n_keys, -1, np.int64)
        self.occupied = np.zeros(n_keys, np.int64)
        self.spans = np.zeros(n_keys, np.int64)
        # The pairs (key * n_tracks + track, sorted) of the track a chunk ended in, and the
        # latest end of each so far: that track goes on in the next chunk.
        self.carry_track = -1
        self.carry_codes = np.zeros(0, np.int64)
        self.carry_reach = np.zeros(0, np.int64)

    def add(self, keys: np.ndarray, clipped: np.ndarray, whole: np.ndarray,
            own: np.ndarray) -> None:
        self.count += np.bincount(keys, minlength=self.n_keys)
        for i, ns in enumerate((clipped, whole, own)):
            np.add.at(self.sums[i], keys, ns)
            self.approx[i] += np.bincount(keys, weights=ns, minlength=self.n_keys)
        np.minimum.at(self.low, keys, whole)
        np.maximum.at(self.high, keys, whole)

    def totals(self) -> tuple[np.ndarray, ...]:
        """count, clipped total, whole total, self, min, max: per key."""
        sums = self.sums.copy()
        sums[self.approx >= _INT64_LIMIT] = np.iinfo(np.int64).max
        return self.count, sums[0], sums[1], sums[2], self.low, self.high

    def occupancy(self, keys: np.ndarray, track: np.ndarray, start: np.ndarray,
                  end: np.ndarray, span: int, track_span: np.ndarray | None,
                  edge_track: int) -> None:
        """Add one chunk's slices to each key's union of its intervals on each track (nested
        or overlapping instances of one op on one track count once) and to the window length
        of the tracks it ran on (`span` each, or each track's own `track_span`), once per
        (key, track) pair.

        The slices are ordered by (key, track, start); each pair's intervals are shifted onto a
        range of their own, so that one running maximum of the ends finds the stretches of
        every pair at once. A pair of the track a chunk ends in may go on in the next: its
        latest end is carried, and the next chunk's intervals count only past it (every
        earlier interval of the pair started before them, so anything under that end is
        already covered). The intervals must come ordered by track, then start."""
        if len(keys):
            order = _stable_order(keys)
            k, t = keys[order], track[order]
            firsts = np.flatnonzero(np.concatenate([[True], (k[1:] != k[:-1])
                                                    | (t[1:] != t[:-1])]))
            code = k[firsts].astype(np.int64) * self.n_tracks + t[firsts]
            floor = np.full(len(firsts), _NO_FLOOR)
            at = np.minimum(np.searchsorted(self.carry_codes, code),
                            max(len(self.carry_codes) - 1, 0))
            seen = (self.carry_codes[at] == code if len(self.carry_codes)
                    else np.zeros(len(code), bool))
            floor[seen] = self.carry_reach[at[seen]]
            new = firsts[~seen]
            np.add.at(self.spans, k[new], span if track_span is None else track_span[t[new]])
            reach = _occupied_chunk(self.occupied, k, start[order], end[order], firsts, floor)
            mine = t[firsts] == edge_track
            self._carry(edge_track, code[mine], reach[mine])
        else:
            self._carry(edge_track, np.zeros(0, np.int64), np.zeros(0, np.int64))

    def _carry(self, track: int, codes: np.ndarray, reach: np.ndarray) -> None:
        if track == self.carry_track:  # the track goes on: keep its pairs not seen here
            codes = np.concatenate([self.carry_codes, codes])
            reach = np.concatenate([self.carry_reach, reach])
        order = np.lexsort((-reach, codes))  # by code, the latest reach first
        codes, reach = codes[order], reach[order]
        first = np.concatenate([[True], codes[1:] != codes[:-1]]) if len(codes) else []
        self.carry_track = track
        self.carry_codes, self.carry_reach = codes[first], reach[first]


def _occupied_chunk(occupied: np.ndarray, k: np.ndarray, s: np.ndarray, e: np.ndarray,
                    firsts: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Add to `occupied` the union of each pair's intervals past its `floor` (`firsts`: where
    each pair begins); returns each pair's latest end."""
    marks = np.zeros(len(k), np.int64)
    marks[firsts] = 1
    pair = np.cumsum(marks) - 1
    s, e = np.maximum(s, floor[pair]), np.maximum(e, floor[pair])
    del marks
    pair_lo = s[firsts]
    pair_hi = np.maximum.reduceat(e, firsts)
    width = pair_hi - pair_lo + 1
    shift = np.concatenate([[0], np.cumsum(width)[:-1]]) - pair_lo
    if float(width.astype(np.float64).sum()) >= 2.0 ** 62:  # beyond int64: pair by pair
        for f, lst in zip(firsts.tolist(), np.append(firsts[1:], len(k)).tolist()):
            occupied[k[f]] += union_ns(s[f:lst], e[f:lst])
        return pair_hi
    s2, e2 = s + shift[pair], e + shift[pair]
    reach = np.maximum.accumulate(e2)
    begins = np.flatnonzero(np.concatenate([[True], s2[1:] > reach[:-1]]))
    finish = reach[np.concatenate([begins[1:] - 1, [len(s2) - 1]])]
    np.add.at(occupied, k[begins], finish - s2[begins])
    return pair_hi


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """np.argsort(keys, kind="stable") for keys in [0, 2**32), as two 16-bit radix passes
    (numpy sorts 16-bit integers by radix: linear, where int64 keys take a merge sort)."""
    keys = keys.astype(np.int64, copy=False)
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    if not len(keys) or int(keys.max()) < 1 << 16:
        return low
    high = np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")
    return low[high]


def union_ns(start: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of the intervals [start, end) (int64 ns), by one sort and a
    running maximum of the ends."""
    if not len(start):
        return 0
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    # A new stretch of busy time begins where a slice starts after everything before ended.
    begins = np.flatnonzero(np.concatenate([[True], s[1:] > reach[:-1]]))
    finish = reach[np.concatenate([begins[1:] - 1, [len(s) - 1]])]
    return int((finish - s[begins]).sum())


def op_instances(index: TraceIndex, key_id: int, *, by: str = "name",
                 start_ns: int | None = None, end_ns: int | None = None,
                 tracks: Sequence[int] | np.ndarray | None = None, side: str = "all",
                 types: OpTypes | None = None, tables: Sequence[Table] = (),
                 groups: GroupWindows | None = None) -> np.ndarray:
    """Indices of the slices of one op (its "name_id" in :func:`aggregate_ops`) counted for
    the same window and tracks, ordered by start (then index)."""
    sel, keys, _ = window_slices(index, start_ns=start_ns, end_ns=end_ns, by=by, tracks=tracks,
                                 side=side, types=types, tables=tables, groups=groups)
    return by_start(index, sel[keys == key_id])


def window_slices(index: TraceIndex, *, start_ns: int | None = None, end_ns: int | None = None,
                  by: str = "name", tracks: Sequence[int] | np.ndarray | None = None,
                  side: str = "all", types: OpTypes | None = None, tables: Sequence[Table] = (),
                  groups: GroupWindows | None = None
                  ) -> tuple[np.ndarray, np.ndarray, Sequence[str]]:
    """The operator slices :func:`aggregate_ops` counts for a window (or `groups`' windows)
    and tracks, each one's group number, and the groups' labels."""
    keys = SliceKeys(index, by, types, tables)
    lo, hi = _window(index, start_ns, end_ns)
    lo_at, hi_at, keep, _ = _bounds(index, lo, hi, groups)
    sel, _, _ = _clipped(index, lo_at, hi_at, tracks, side, keep)
    return sel, keys.of(sel), keys.labels


def by_start(index: TraceIndex, slices: np.ndarray) -> np.ndarray:
    """The slices ordered by start (then as given), as int64."""
    starts = index.col("slices.start")[slices]
    return slices[np.argsort(starts, kind="stable")].astype(np.int64)
