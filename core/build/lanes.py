"""Slice layout per track: sort order, nesting depth, lanes for overlaps, flow binding points.

Slices of a track are sorted by start (longer first on ties). Depth is counted, vectorised:
the slices of the track sorted before a slice minus those already ended at its start, that is
those before it still open there. A slice's parent is the last earlier slice of its track one
level up. Zero-length slices count as ending just after their start (so they nest under a
slice that starts at the same time, and not under one that ends there).

A slice that overflows its parent (ends after it) is taken off the nested rows, and the rest
laid out again, for up to 8 rounds (then a track still overflowing is packed whole); the slices
taken off are packed on extra lanes below the nested rows by a greedy packer, so no slice is
drawn under a parent it overflows. A round does not count again from scratch, as nearly all
slices of a trace share a few big tracks: taking slices out makes a kept slice shallower by
the number of them before it still open at its start (two binary searches over the few taken
out), so only slices that start inside one of them can change. A kept slice whose depth did
not change keeps its parent: the slices before it open at its start are its ancestors and
come no later than its parent (each brings its own ancestors along), none was taken out, so
every slice between the parent and it still has them all open at its own start, and stays at
least as deep. So a round looks for the parents of the changed slices alone, and only those
can overflow anew. Durations must not be negative.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from proftui.core.model.arrays import distinct
from proftui.core.runtime.halves import at_once, in_halves

MAX_DEPTH = np.iinfo(np.int16).max


def sort_slices(track: np.ndarray, start: np.ndarray, dur: np.ndarray, threads: int = 1,
                ) -> np.ndarray:
    """Order of slices by (track, start ascending, duration descending); with `threads` 2,
    sorted in two halves at once, then merged."""
    key = _track_time_key(track, start, threads=threads)
    if key is None:
        return np.lexsort((-dur, start, track))
    order = stable_argsort(key, threads)
    ordered = key[order]
    tied = np.flatnonzero(ordered[1:] == ordered[:-1])
    del ordered
    if len(tied):  # equal (track, start): the longer slice first (the parent)
        tie = np.zeros(len(order), bool)  # the tied positions, in order (no sort needed)
        tie[tied] = True
        tie[tied + 1] = True
        slots = np.flatnonzero(tie)
        members = order[slots]
        order[slots] = members[np.lexsort((-dur[members], key[members]))]
    return order


def stable_argsort(key: np.ndarray, threads: int = 1) -> np.ndarray:
    """np.argsort(key, kind="stable") of non-negative int64 keys, as sorts of values: numpy
    sorts values with SIMD and orders (argsort) without it, ~5x slower on millions of keys.
    Each key and its position are packed in 64 bits and sorted as one value. Where they do not
    fit by a few bits (a capture of minutes in ns, millions of slices), the keys' lowest bits
    are left out of that sort, and the few runs of keys equal without them are put in order
    after it; by more, one sort per digit of the keys, the least significant first. With
    `threads` 2, the one sort is of two halves at once, then of the two sorted runs (a
    merge)."""
    n = len(key)
    if n < 2 or int(key.min()) < 0:
        return np.argsort(key, kind="stable")
    bits = (n - 1).bit_length()
    key_bits = max(1, int(key.max()).bit_length())
    dropped = max(0, key_bits + bits - 64)  # the keys' lowest bits left out of the one sort
    if dropped <= _MOST_DROPPED:
        packed = np.empty(n, np.uint64)

        def pack(a: int, b: int) -> None:
            part = packed[a:b]
            np.right_shift(key[a:b].view(np.uint64), np.uint64(dropped), out=part)
            part <<= np.uint64(bits)
            part |= np.arange(a, b, dtype=np.uint64)

        in_halves(pack, n, threads)
        in_halves(lambda a, b: packed[a:b].sort(), n, threads)
        if threads >= 2:
            packed.sort(kind="stable")  # (timsort: the two sorted halves merged)
        # neighbours whose keys are equal without their lowest bits: their higher bits agree
        tied = np.flatnonzero(np.bitwise_xor(packed[1:], packed[:-1]) < np.uint64(1 << bits)
                              ) if dropped else np.zeros(0, np.int64)
        in_halves(lambda a, b: np.bitwise_and(packed[a:b], np.uint64((1 << bits) - 1),
                                              out=packed[a:b]), n, threads)
        order = packed.view(np.int64)
        if len(tied):  # keys equal but for their lowest bits: in order of key, then position
            tie = np.zeros(n, bool)
            tie[tied] = True
            tie[tied + 1] = True
            slots = np.flatnonzero(tie)
            members = order[slots]
            order[slots] = members[np.lexsort((members, key[members]))]
        return order
    positions = np.arange(n, dtype=np.uint64)
    order = None
    for shift in range(0, key_bits, 64 - bits):  # a digit at a time, the least first
        packed = (key if order is None else key[order]).view(np.uint64) >> shift
        packed <<= bits  # (the digit's higher bits fall off)
        packed |= positions
        packed.sort()
        packed &= (1 << bits) - 1
        packed = packed.view(np.int64)
        order = packed if order is None else order[packed]
    return order


# Keys longer by more bits than this beside their positions are sorted a digit at a time: left
# out of the one sort, they could leave most keys tied.
_MOST_DROPPED = 4


def _track_time_key(track: np.ndarray, time: np.ndarray, lo: int | None = None,
                    hi: int | None = None, threads: int = 1, out: np.ndarray | None = None,
                    ) -> np.ndarray | None:
    """One int64 key ordering by (track, time), or None if the two do not fit in 62 bits.

    Keys built with the same `lo` and `hi` (bounds of all times involved) compare together.
    With `threads` 2, made in two halves at once; into `out` if given.
    """
    if len(track) == 0:
        return np.zeros(0, np.int64)
    lo = int(time.min()) if lo is None else lo
    hi = int(time.max()) if hi is None else hi
    span_bits = max(1, (hi - lo).bit_length())
    track_bits = max(1, int(track.max()).bit_length())
    if span_bits + track_bits > 62:
        return None
    key = np.empty(len(track), np.int64) if out is None else out

    def make(a: int, b: int) -> None:  # (in place: one array, not four)
        part = key[a:b]
        np.left_shift(track[a:b], span_bits, out=part, dtype=np.int64)
        part += time[a:b]  # (time - lo fits span_bits: adding is or-ing; a wrap cancels)
        part -= lo

    in_halves(make, len(track), threads)
    return key


# From this many queries, a search is of the queries in order.
_MANY_QUERIES = 1 << 16


def _grouped_searchsorted(group: np.ndarray, value: np.ndarray, q_group: np.ndarray,
                          q_value: np.ndarray, side: Literal["left", "right"],
                          threads: int = 1) -> np.ndarray:
    """searchsorted over arrays sorted by (group, value); positions are global. With
    `threads` 2, the queries are searched in two halves at once."""
    if len(group) == 0:
        return np.zeros(len(q_group), np.int64)
    lo = min(int(value.min()), int(q_value.min()) if len(q_value) else 0)
    hi = max(int(value.max()), int(q_value.max()) if len(q_value) else 0)
    span_bits = max(1, (hi - lo).bit_length())
    group_bits = max(1, int(max(group.max(), q_group.max() if len(q_group) else 0)).bit_length())
    out = np.empty(len(q_group), np.int64)
    if span_bits + group_bits <= 62:
        key = (group.astype(np.int64) << span_bits) | (value - lo)

        def search(a: int, b: int) -> None:
            qkey = (q_group[a:b].astype(np.int64) << span_bits) | (q_value[a:b] - lo)
            if len(qkey) < _MANY_QUERIES:
                out[a:b] = np.searchsorted(key, qkey, side=side)
                return
            # Many queries: searched in order, the searches share their first steps (flow
            # points of 1 GB msprof-like: 115 -> 90 ms with the sort)
            order = stable_argsort(qkey)
            out[a:b][order] = np.searchsorted(key, qkey[order], side=side)

        in_halves(search, len(q_group), threads)
        return out
    bounds = np.searchsorted(group, np.arange(int(group.max()) + 2))
    for g in distinct(q_group).tolist():
        mask = q_group == g
        if g > group.max():
            out[mask] = len(group)
            continue
        a, b = bounds[g], bounds[g + 1]
        out[mask] = a + np.searchsorted(value[a:b], q_value[mask], side=side)
    return out


# Below this many slices the layout takes tens of ms: not worth a thread.
SPLIT_SLICES = 1 << 20


def layout_tracks(track: np.ndarray, start: np.ndarray, dur: np.ndarray, n_tracks: int,
                  threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(depth, parent index or -1, rows per track) for slices sorted by :func:`sort_slices`.

    Slices that overflow their parent are taken out (a few rounds, vectorised, each
    changing only the slices that start inside the ones taken out) and packed on extra
    lanes below the properly nested rows of their track. Durations must not be negative
    (the importers clamp them).

    With `threads` 2, the slices are nested in two halves at once, cut where nothing before
    the cut is open (see :func:`_clean_cut`); numpy lets go of the GIL for most of it. The
    extra lanes and the rows are then found for the whole, as without threads.
    """
    n = len(track)
    rows = np.zeros(n_tracks, np.int32)
    if n == 0:
        return np.zeros(0, np.int16), np.zeros(0, np.int64), rows
    if dur.min() < 0:
        raise ValueError("slice durations must not be negative")
    lo = int(start.min())
    # Each half doubles its own times (from the same earliest start, so that they compare):
    # the whole's doubled times were not held meanwhile (0.02x the file at the build's peak,
    # msprof-like 1 GB). Times too far apart to double are laid out in one piece.
    cut = (_clean_cut(track, start, dur, lo)
           if threads >= 2 and n >= SPLIT_SLICES and _doubling_fits(start, dur, lo) else 0)
    if cut:
        def nest(part: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, set[int]]:
            return _nest(track[part], *_doubled_at(start[part], dur[part], lo))

        (depth, parent, nested, packed), (depth2, parent2, nested2, packed2) = at_once(
            lambda: nest(slice(0, cut)), lambda: nest(slice(cut, n)))
        parent2[parent2 >= 0] += cut
        depth, parent = np.concatenate([depth, depth2]), np.concatenate([parent, parent2])
        nested, packed = np.concatenate([nested, nested2]), packed | packed2
    else:
        s2, e2 = _doubled(start, dur)
        depth, parent, nested, packed = _nest(track, s2, e2)
        del s2, e2
    if packed:  # still overflowing after 8 rounds: give up nesting, pack those tracks whole
        first = np.searchsorted(track, np.arange(n_tracks + 1))
        for t in sorted(packed):
            nested[first[t]: first[t + 1]] = False
    return _rows_and_lanes(track, start, dur, depth, parent, nested, rows)


def _clean_cut(track: np.ndarray, start: np.ndarray, dur: np.ndarray, lo: int) -> int:
    """A position near the middle before which every slice of its track has ended (doubled
    times from `lo`) by the start of the slice there: slices on either side of it nest (and
    overflow) independently. Between two tracks is always one; within a track, between two
    top-level slices that do not overlap (a training step and the next). 0 if there is none
    but the first."""
    n = len(track)
    middle = n // 2
    t = track[middle]
    first, last = (int(x) for x in np.searchsorted(track, [t, t + 1]))
    candidates = [c for c in (first, last) if 0 < c < n]  # where another track starts
    # Inside the track, in a window about the middle widened until a cut is found: the
    # latest end so far (from the track's first slice on) no later than the next start.
    half = 1 << 12
    while True:
        a, b = max(first + 1, middle - half), min(last, middle + half)
        if a < b:
            s2, e2 = _doubled_at(start[a - 1: b], dur[a - 1: b], lo)
            ended = np.maximum.accumulate(e2[:-1])
            if a - 1 > first:
                before = _doubled_at(start[first: a - 1], dur[first: a - 1], lo)[1].max()
                np.maximum(ended, before, out=ended)
            cuts = np.flatnonzero(ended <= s2[1:]) + a
            if len(cuts):
                candidates.append(int(cuts[np.argmin(np.abs(cuts - middle))]))
                break
        if a == first + 1 and b == last:
            break
        half *= 4
    return min(candidates, key=lambda c: (abs(c - middle), c), default=0)


def _nest(track: np.ndarray, s2: np.ndarray, e2: np.ndarray,
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, set[int]]:
    """(depth, parent, nested, tracks to pack whole) of sorted slices (doubled times): the
    depths and parents of the properly nested slices, those taken off the rows (`nested`
    False) for overflowing their parents, and the tracks that still overflowed after 8
    rounds."""
    depth, parent = _nested_depths(track, s2, e2)
    nested = np.ones(len(track), bool)
    bad = np.flatnonzero(_overflows(e2, e2, parent))
    for _ in range(7):  # at most 8 rounds in all
        if not len(bad):
            break
        nested[bad] = False
        changed, levels = _shallower(track, s2, e2, bad, nested)
        depth[changed] -= levels
        parent[changed] = _parents_of(np.where(nested, depth, -1), changed)
        bad = changed[_overflows(e2, e2[changed], parent[changed])]
    return depth, parent, nested, set(distinct(track[bad]).tolist())


def _doubled(start: np.ndarray, dur: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends as doubled times, a zero-length slice's end one after its start (so
    that it ends after it starts, and before a slice starting at its time ends), from the
    earliest start. Times too far apart to double in 63 bits (a hostile file: ~73 years) are
    replaced by their ranks among all starts and ends, which keeps every comparison."""
    lo = int(start.min())
    if _doubling_fits(start, dur, lo):
        return _doubled_at(start, dur, lo)
    _, ranks = np.unique(np.concatenate([start, start + dur]), return_inverse=True)
    s_rank, e_rank = ranks[:len(start)].astype(np.int64), ranks[len(start):].astype(np.int64)
    return s_rank * 2, e_rank * 2 + (dur == 0)


def _doubling_fits(start: np.ndarray, dur: np.ndarray, lo: int) -> bool:
    """Whether the times, doubled from `lo`, fit in 63 bits."""
    return int(start.max()) - lo + int(dur.max()) < 1 << 61


def _doubled_at(start: np.ndarray, dur: np.ndarray, lo: int) -> tuple[np.ndarray, np.ndarray]:
    """(_doubled from `lo`, the times known to fit)"""
    s2 = start - lo
    e2 = s2 + dur
    s2 <<= 1
    e2 <<= 1
    e2 += dur == 0
    return s2, e2


def _rows_and_lanes(track: np.ndarray, start: np.ndarray, dur: np.ndarray, depth: np.ndarray,
                    parent: np.ndarray, nested: np.ndarray, rows: np.ndarray,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Given the `nested` slices' depths and parents: each track's rows of those, then the
    other slices packed on lanes below them; (depth, parent, rows) as layout_tracks returns."""
    if nested.any():
        kept_track = track[nested]
        bounds = np.flatnonzero(np.diff(kept_track)) + 1
        starts = np.concatenate([[0], bounds])
        rows[kept_track[starts]] = np.maximum.reduceat(depth[nested], starts) + 1
    extra = np.flatnonzero(~nested)
    if len(extra):
        bounds = np.searchsorted(track[extra], np.arange(len(rows) + 1))
        for t in distinct(track[extra]).tolist():
            idx = extra[bounds[t]: bounds[t + 1]]
            d, p = _pack_lanes(*_doubled(start[idx], dur[idx]))
            depth[idx] = rows[t] + d
            parent[idx] = np.where(p >= 0, idx[np.maximum(p, 0)], -1)
            rows[t] += int(d.max()) + 1
    if depth.max(initial=0) > MAX_DEPTH:
        depth = np.minimum(depth, MAX_DEPTH)
    return depth.astype(np.int16), parent, rows


def _overflows(e2: np.ndarray, e2_self: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Mask of slices (their doubled ends, their parents as positions in `e2`) that end
    after their parent."""
    return (parent >= 0) & (e2_self > e2[np.maximum(parent, 0)])


def _nested_depths(track: np.ndarray, s2: np.ndarray, e2: np.ndarray,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Depth by counting (started before - ended before) and the parent that implies."""
    n = len(track)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lo = min(int(s2.min()), int(e2.min()))
    hi = max(int(s2.max()), int(e2.max()))
    keys = np.empty(2 * n, np.int64)  # the ends' keys, then the starts'
    if _track_time_key(track, e2, lo, hi, out=keys[:n]) is not None:
        # One sort of composite keys, no per-track work: the slices closed before a start
        # are the ends before it among ends and starts in order, a start after the ends at
        # its time (timsort: in start order, ends come in ascending runs, the starts in one)
        _track_time_key(track, s2, lo, hi, out=keys[n:])
        keys <<= 1  # (keys fit 62 bits)
        keys[n:] |= 1
        keys.sort(kind="stable")
        np.bitwise_and(keys, 1, out=keys)
        closed = np.flatnonzero(keys)  # each start's place among ends and starts
        del keys
        closed -= np.arange(n)
    else:
        del keys
        e_order = np.lexsort((e2, track))
        closed = _grouped_searchsorted(track[e_order], e2[e_order], track, s2, "right")
    # depth = (started before, in the track) - (ended before, in the track); both counts
    # are positions in whole-trace order, so the track's first position cancels out.
    depth = np.arange(n, dtype=np.int64)
    depth -= closed
    del closed
    return depth, _parents(depth)


def _shallower(track: np.ndarray, s2: np.ndarray, e2: np.ndarray, removed: np.ndarray,
               kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the `kept` slices that get shallower once `removed` (sorted positions)
    are taken out, and by how many levels: the removed slices before them in their track
    still open at their start."""
    # Only slices starting after a removed one and before it ends: the union of those runs.
    stop = _grouped_searchsorted(track, s2, track[removed], e2[removed], "left")
    lo, hi = removed + 1, np.maximum.accumulate(stop)
    new_run = np.concatenate([[True], lo[1:] > hi[:-1]])
    run_lo = lo[new_run]
    run_hi = hi[np.append(np.flatnonzero(new_run)[1:] - 1, len(lo) - 1)]
    size = run_hi - run_lo  # never negative: a slice ends after it starts
    near = np.repeat(run_lo - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
    near = near[kept[near]]
    # (removed before) - (removed ended by the start); both counts are positions over all
    # tracks, so the removed slices of earlier tracks cancel out, and no removed slice
    # after a slice has ended by its start.
    by_end = removed[np.lexsort((e2[removed], track[removed]))]
    ended = _grouped_searchsorted(track[by_end], e2[by_end], track[near], s2[near], "right")
    levels = np.searchsorted(removed, near) - ended
    moved = levels > 0
    return near[moved], levels[moved]


def _parents(depth: np.ndarray) -> np.ndarray:
    """For each slice (sorted, none taken off the rows), the last earlier slice of its track
    one level up, or -1."""
    # A track starts at depth 0 and rises by at most one level from a slice to the next. So
    # the last slice one level up is the one just before the last slice that rose to the
    # child's level (nothing between them is shallower than the child): per level, in
    # order, the last riser carried forward. A level's first slice rose to it, so the
    # carrying never crosses levels.
    parent = np.empty(len(depth), np.int64)
    if not len(depth):
        return parent
    small = depth.max() <= np.iinfo(np.int16).max
    by_depth = np.argsort(depth.astype(np.int16) if small else depth, kind="stable")  # radix
    rose = np.zeros(len(depth), bool)
    rose[1:] = depth[1:] == depth[:-1] + 1
    riser = np.where(rose[by_depth], np.arange(len(depth)), 0)
    del rose
    np.maximum.accumulate(riser, out=riser)
    up = by_depth[riser]  # in by_depth's order: in order within each level
    del riser
    up -= 1  # the slice before the riser (in its track: a riser is not a track's first)
    up[:np.count_nonzero(depth == 0)] = -1  # the top level comes first
    parent[by_depth] = up
    return parent


def _parents_of(depth: np.ndarray, which: np.ndarray) -> np.ndarray:
    """The parents (as :func:`_parents`) of the slices at sorted positions `which`, when some
    slices are taken off the rows (at depth -1): the last earlier slice one level up."""
    key = depth + 1  # 0: taken off
    small = key.max(initial=0) <= np.iinfo(np.int16).max
    # Slices grouped by depth, in order within each group (a radix sort for small depths);
    # those at depth d are by_depth[bounds[d]: bounds[d + 1]]. A child's parent is its
    # predecessor among the slices one level up (in its track: see _parents).
    by_depth = np.argsort(key.astype(np.int16) if small else key, kind="stable")
    bounds = np.cumsum(np.bincount(key))  # (the ones taken off come first)
    asked = depth[which]
    parent = np.full(len(which), -1, np.int64)
    for level in distinct(asked[asked > 0]).tolist():
        above = by_depth[bounds[level - 1]: bounds[level]]
        below = asked == level
        parent[below] = above[np.searchsorted(above, which[below]) - 1]
    return parent


def _pack_lanes(s2: np.ndarray, e2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy lane packing of one track (doubled times); returns (row, parent-in-track)."""
    lanes: list[list[tuple[int, int]]] = []  # per lane: stack of (end, index)
    lane_rows: list[int] = []
    where = []
    parent = np.full(len(s2), -1, np.int64)
    for i, (s, e) in enumerate(zip(s2.tolist(), e2.tolist())):
        for lane, stack in enumerate(lanes):
            while stack and stack[-1][0] <= s:
                stack.pop()
            if not stack or stack[-1][0] >= e:
                break
        else:
            lane, stack = len(lanes), []
            lanes.append(stack)
            lane_rows.append(0)
        if stack:
            parent[i] = stack[-1][1]
        d = len(stack)
        stack.append((e, i))
        lane_rows[lane] = max(lane_rows[lane], d + 1)
        where.append((lane, d))
    offsets = np.concatenate([[0], np.cumsum(lane_rows)])
    rows = np.array([offsets[lane] + d for lane, d in where], np.int64)
    return rows, parent


def bind_points(track: np.ndarray, start: np.ndarray, dur: np.ndarray, parent: np.ndarray,
                q_track: np.ndarray, q_ts: np.ndarray, enclosing: np.ndarray,
                threads: int = 1) -> np.ndarray:
    """The slice each flow point binds to, or -1.

    An enclosing point binds to the deepest slice of its track that contains it; another
    (a flow end without ``bp: "e"``) to the first slice of its track that begins at or after it.
    With `threads` 2, the points are bound in two halves at once.
    """
    n = len(track)
    if n == 0 or len(q_ts) == 0:
        return np.full(len(q_ts), -1, np.int64)
    out = _grouped_searchsorted(track, start, q_track, q_ts, "right", threads)
    out -= 1  # (in place, as the walks: this is a peak of indexing a file)

    def deepest(a: int, b: int) -> None:  # the last started, up its parents to one open
        p, qt, qts = out[a:b], q_track[a:b], q_ts[a:b]
        p[(p >= 0) & (track[np.maximum(p, 0)] != qt)] = -1
        active = p >= 0
        while active.any():
            idx = np.flatnonzero(active)
            cur = p[idx]
            contains = start[cur] + dur[cur] >= qts[idx]
            p[idx[~contains]] = parent[cur[~contains]]
            active[idx[contains]] = False
            active &= p >= 0

    in_halves(deepest, len(q_ts), threads)
    following = np.flatnonzero(~enclosing)  # (often none: Kineto's flows all enclose)
    if len(following):
        q_track = q_track[following]
        nxt = _grouped_searchsorted(track, start, q_track, q_ts[following], "left", threads)
        ok = (nxt < n) & (track[np.minimum(nxt, n - 1)] == q_track)
        out[following] = np.where(ok, nxt, -1)
    return out
