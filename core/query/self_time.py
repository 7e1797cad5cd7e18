"""Self time: the part of a slice's time that no slice inside it takes.

Every instant of a track's busy time belongs to exactly one slice: the innermost one there,
which is the covering slice that started last (on equal starts the track order puts the
longer first, so the shorter is inner). A slice's self time is the time it owns: its
duration less the union of the slices that start inside it, clipped to it. So on every track
self times sum to the track's busy time, and 0 <= self <= duration.

Where a track's slices nest properly (each one inside its parent one row up) that is the
duration less the children's durations, computed for all such tracks at once. Tracks where
nesting breaks (slices overlapping without nesting: the layout puts them on extra lanes, and
they have no parent) have their slices cut where a later one takes over for good, so that they
nest (vectorised); a sweep in start order with a stack is the fallback.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.query.parents import slice_parents

TABLE_BUDGET_BYTES = 512 << 20  # range-max table of the vectorised sweep; else the loop
SELF_KIND = "self1"  # bump when the stored self-time array changes meaning
_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_broken_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def broken_tracks(index: TraceIndex) -> np.ndarray:
    """Boolean per track: some slice of it below the top row has no parent (overlapping
    slices that do not nest)."""
    found = _broken_memo.get(index)
    if found is None:
        orphan = (index.col("slices.depth") > 0) & (slice_parents(index) < 0)
        found = np.zeros(index.n_tracks, bool)
        found[index.col("slices.track")[orphan]] = True
        _broken_memo[index] = found
    return found


def self_times(index: TraceIndex) -> np.ndarray:
    """Self time (int64 ns) of every slice: computed once per index and kept beside the
    cached index (the sweep of broken tracks is a Python loop)."""
    found = _memo.get(index)
    if found is not None:
        return found
    from proftui.core.cache import indexes as cache

    found = cache.derived(index, SELF_KIND, lambda: {"self": compute_self_times(index)},
                          lambda got: len(got["self"]) == index.n_slices)["self"]
    _memo[index] = found
    return found


def compute_self_times(index: TraceIndex) -> np.ndarray:
    """:func:`self_times` without the caches."""
    start = index.col("slices.start")
    end = start + index.col("slices.dur")
    return window_self(index, np.arange(index.n_slices), int(start.min(initial=0)),
                       int(end.max(initial=0)))


def window_self(index: TraceIndex, slices: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    """Per slice of `slices` (indices, ascending), the self time it owns inside [lo, hi):
    the bounds are scalars, or arrays of one bound per slice of the index (a window per
    track; a parent and its children share a track, so the time they share is one window's)."""
    return window_own(index, lo, hi)[np.asarray(slices, np.int64)]


def window_own(index: TraceIndex, lo: Any, hi: Any) -> np.ndarray:
    """:func:`window_self` of every slice of the index (0 outside the window)."""
    start_all = index.col("slices.start")
    dur_all = index.col("slices.dur")
    low = lo if np.ndim(lo) else np.int64(lo)
    high = hi if np.ndim(hi) else np.int64(hi)
    # Every slice overlapping the window takes its time from its parent, whether asked for
    # or not: a child that is no operator still owns its time.
    end_all = start_all + dur_all
    inside = np.flatnonzero((start_all < high) & (end_all > low))
    if np.ndim(low):
        low, high = low[inside], high[inside]
    clipped = np.maximum(np.minimum(end_all[inside], high) - np.maximum(start_all[inside], low),
                         0)
    parents = slice_parents(index)[inside].astype(np.int64)
    taken = np.zeros(index.n_slices, np.int64)
    has = parents >= 0
    np.add.at(taken, parents[has], clipped[has])
    own = np.zeros(index.n_slices, np.int64)
    own[inside] = clipped - taken[inside]
    track = index.col("slices.track")[inside]
    sweep = inside[broken_tracks(index)[track]]
    # One stable sort groups the broken tracks' slices, each in index order (by start, longer
    # first on equal starts): no pass over all slices per broken track.
    sweep = sweep[np.argsort(index.col("slices.track")[sweep], kind="stable")]
    sweep_track = index.col("slices.track")[sweep]
    if np.ndim(low):  # sweep holds slices of `inside`: their bounds by position there
        where = np.searchsorted(inside, sweep)
        low, high = low[where], high[where]
    sweep_start = np.maximum(start_all[sweep], low)
    sweep_end = np.minimum(end_all[sweep], high)
    found = owned_by_track(sweep_track, sweep_start, sweep_end)
    if found is not None:
        own[sweep] = found
    else:  # times or tracks too wide for one key, or too many slices for the table
        bounds = np.flatnonzero(np.diff(sweep_track)) + 1
        for mine in np.split(np.arange(len(sweep)), bounds) if len(sweep) else []:
            own[sweep[mine]] = owned(sweep_start[mine], sweep_end[mine])
    return own


def owned_by_track(track: np.ndarray, start_ns: np.ndarray, end_ns: np.ndarray
                   ) -> np.ndarray | None:
    """:func:`owned` of every track at once, vectorised: slices grouped by track, each track
    in start order. None when the (track, time) keys do not fit 63 bits or the range-max
    table would pass TABLE_BUDGET_BYTES.

    A slice owns nothing from the start of the first later slice that also covers its end:
    that one (or one started later still) covers every instant from there on. Cut there, the
    slices nest, and own their duration less their children's.
    """
    n = len(start_ns)
    if n == 0:
        return np.zeros(0, np.int64)
    t_lo = int(start_ns.min())
    span_bits = max(1, (int(end_ns.max()) - t_lo).bit_length())
    rank = np.concatenate([[0], np.cumsum(track[1:] != track[:-1])])
    if span_bits + max(1, int(rank[-1]).bit_length()) > 62:
        return None
    start_key = (rank << span_bits) | (start_ns - t_lo)
    end_key = (rank << span_bits) | (end_ns - t_lo)
    # The candidates of slice i are i+1 .. before_end-1 (later ones of its track starting
    # before its end); the first of them ending at or after it is found by binary lifting
    # over maxima of ends in runs of 2**level slices.
    before_end = np.searchsorted(start_key, end_key, side="left")
    pos = np.arange(1, n + 1)
    longest = int((before_end - pos).max(initial=0))
    run_max = [end_ns]
    while (1 << len(run_max)) <= longest:
        if (len(run_max) + 1) * n * 8 > TABLE_BUDGET_BYTES:
            return None
        prev, width = run_max[-1], 1 << (len(run_max) - 1)
        nxt = prev.copy()
        np.maximum(prev[:-width], prev[width:], out=nxt[:-width])
        run_max.append(nxt)
    for level in range(len(run_max) - 1, -1, -1):
        step = 1 << level
        can = np.flatnonzero(pos + step <= before_end)
        skip = can[run_max[level][pos[can]] < end_ns[can]]  # none of those covers the end
        pos[skip] += step
    cut_ns = np.where(pos < before_end, start_ns[np.minimum(pos, n - 1)], end_ns)
    keep = np.flatnonzero(cut_ns > start_ns)
    dur_ns = cut_ns[keep] - start_ns[keep]
    # Depth as in proftui.core.build.lanes: slices started before less those ended; the parent is
    # the last earlier slice one level up (tracks are contiguous, so it is on the same one).
    closed = np.searchsorted(np.sort((rank[keep] << span_bits) | (cut_ns[keep] - t_lo)),
                             start_key[keep], side="right")
    m = len(keep)
    depth = np.arange(m) - closed
    by_depth = np.sort(depth * (m + 1) + np.arange(m))
    child = np.flatnonzero(depth > 0)
    at = np.searchsorted(by_depth, (depth[child] - 1) * (m + 1) + child) - 1
    own = dur_ns.copy()
    np.subtract.at(own, by_depth[at] % (m + 1), dur_ns[child])
    out = np.zeros(n, np.int64)
    out[keep] = own
    return out


def owned(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The time each interval owns when every instant goes to the covering interval that
    started last; the intervals come in start order (inner last on equal starts).

    A stack in start order: its top is the latest started; one that has ended is popped when
    the next interval starts (lazily), after taking the time from `upto` to its end.
    """
    ends = end.tolist()
    own = [0] * len(ends)
    stack: list[int] = []
    upto = int(start[0]) if len(start) else 0  # time attributed so far
    for i, s in enumerate(start.tolist()):
        while stack and ends[stack[-1]] <= s:
            top = stack.pop()
            if ends[top] > upto:
                own[top] += ends[top] - upto
                upto = ends[top]
        if stack and s > upto:
            own[stack[-1]] += s - upto
        upto = max(upto, s)
        stack.append(i)
    while stack:
        top = stack.pop()
        if ends[top] > upto:
            own[top] += ends[top] - upto
            upto = ends[top]
    return np.array(own, np.int64)
