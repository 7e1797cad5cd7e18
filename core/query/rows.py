"""Timeline rows: slices grouped by (track, depth), and what each cell of a row shows at a zoom.

Within one row slices never overlap (nested slices are on deeper rows, overflowing ones on extra
lanes), so a row is a run of disjoint intervals sorted by start, and therefore also by end. A
frame asks, for every visible row and every cell (a time bucket of ``ns_per_cell``):

- how much of the cell is busy, exactly: from prefix sums of durations and one binary search per
  cell boundary (the only slice that can straddle a boundary is the last one started before it);
- which slice owns the cell: the one covering its midpoint, else the longest slice starting in
  it (found through a pyramid of block maxima, so dense cells cost the same as sparse ones).

Cost per frame is O(rows x cells x log n) whatever the zoom; nothing per slice is visited. The
binary searches of all rows and cells run together, as one vectorised loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proftui.core.model.arrays import distinct
from proftui.core.model.index import TraceIndex

FENCE = 32  # slices of a row between two fence posts
FIRST_LEVEL = 3  # block maxima start at blocks of 8: shorter ranges are scanned directly
_FIELDS = ("order", "first", "count", "row_track", "row_depth", "track_first_row", "cum_dur",
           "fence_start", "fence_first")


@dataclass(frozen=True)
class RowIndex:
    """The slices of a trace ordered by row, and per-row bounds.

    ``order`` lists slice indices by (track, depth, start); row ``r`` is
    ``order[first[r]:first[r] + count[r]]``. Row ids of track ``t`` are
    ``track_first_row[t] + depth``. ``cum_dur[p]`` is the sum of the durations of
    ``order[:p]``. ``fence_start`` holds the start of every ``FENCE``-th slice of each row
    (row ``r``'s from ``fence_first[r]``), so that a search within a row reads a small
    contiguous array and then at most ``FENCE`` slices. ``block_max[j - FIRST_LEVEL][b]`` is
    the position (in ``order``) of the longest slice among positions
    ``[b * 2**j, (b + 1) * 2**j)``.
    """

    order: np.ndarray
    first: np.ndarray
    count: np.ndarray
    row_track: np.ndarray
    row_depth: np.ndarray
    track_first_row: np.ndarray
    cum_dur: np.ndarray
    fence_start: np.ndarray
    fence_first: np.ndarray
    block_max: tuple[np.ndarray, ...]

    @property
    def n_rows(self) -> int:
        return len(self.first)

    def arrays(self) -> dict[str, np.ndarray]:
        """The structure as named arrays (to cache it beside the index)."""
        out = {name: getattr(self, name) for name in _FIELDS}
        out.update({f"block_max.{j}": level for j, level in enumerate(self.block_max)})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> RowIndex:
        levels = sorted((int(k.split(".")[1]), v) for k, v in arrays.items()
                        if k.startswith("block_max."))
        return cls(*(arrays[name] for name in _FIELDS), block_max=tuple(v for _, v in levels))


def build_rows(index: TraceIndex) -> RowIndex:
    """Group the slices of `index` by row (about 0.3 s per 10 M slices)."""
    track = index.col("slices.track")
    depth = index.col("slices.depth")
    dur = index.col("slices.dur")
    rows_per_track = index.col("tracks.rows").astype(np.int64)
    track_first_row = np.concatenate([[0], np.cumsum(rows_per_track)]).astype(np.int64)
    n_rows = int(track_first_row[-1])
    n = len(track)
    pos_type = np.int32 if n < 2**31 else np.int64
    if n:
        row_of_slice = track_first_row[track] + depth
        # Slices are sorted by (track, start): a stable sort by row keeps starts in order.
        # numpy sorts 16-bit keys by radix, several times faster than 32- or 64-bit ones.
        key_type = np.uint16 if n_rows <= 1 << 16 else np.int64
        order = np.argsort(row_of_slice.astype(key_type), kind="stable").astype(pos_type)
        counts = np.bincount(row_of_slice, minlength=n_rows)
        del row_of_slice
    else:
        order = np.zeros(0, pos_type)
        counts = np.zeros(n_rows, np.int64)
    first = (np.cumsum(counts) - counts).astype(np.int64)  # one per row, none for none
    row_track = np.repeat(np.arange(len(rows_per_track), dtype=np.int32), rows_per_track)
    row_depth = np.arange(n_rows, dtype=np.int64) - track_first_row[row_track]
    ordered_dur = dur[order]
    cum_dur = np.zeros(n + 1, np.int64)
    np.cumsum(ordered_dur, out=cum_dur[1:])
    fences_per_row = -(-counts // FENCE)
    fence_first = np.concatenate([[0], np.cumsum(fences_per_row)]).astype(np.int64)
    fence_pos = (np.repeat(first - fence_first[:-1] * FENCE, fences_per_row)
                 + np.arange(int(fence_first[-1])) * FENCE)
    fence_start = index.col("slices.start")[order[fence_pos]]
    return RowIndex(order, first, counts.astype(np.int64), row_track,
                    row_depth.astype(np.int32), track_first_row, cum_dur, fence_start,
                    fence_first, _block_maxima(ordered_dur, pos_type))


def _block_maxima(values: np.ndarray, pos_type: type) -> tuple[np.ndarray, ...]:
    """Per level j >= FIRST_LEVEL, the position of the largest value in each whole block of
    2**j positions (the first on ties; a trailing partial block is left out)."""
    size = 1 << FIRST_LEVEL
    whole = len(values) // size * size
    if whole == 0:
        return ()
    blocks = values[:whole].reshape(-1, size)
    best = blocks.argmax(axis=1)
    pos = (np.arange(0, whole, size) + best).astype(pos_type)
    vals = blocks[np.arange(len(best)), best]
    levels = [pos]
    while len(vals) >= 2:
        even = len(vals) // 2 * 2
        pair = vals[:even].reshape(-1, 2)
        take = np.arange(0, even, 2) + (pair[:, 1] > pair[:, 0])
        pos, vals = pos[take], vals[take]
        levels.append(pos)
    return tuple(levels)


@dataclass(frozen=True)
class CellRows:
    """What each cell of some rows shows: ``owner`` slice index (-1 for none) and ``busy``
    fraction (0..1), each of shape (rows, cells); ``boundaries`` are the cells' edges (ns)."""

    owner: np.ndarray
    busy: np.ndarray
    boundaries: np.ndarray


def cell_boundaries(start_ns: int, end_ns: int, cells: int) -> np.ndarray:
    """The `cells + 1` edges (int64 ns) of `cells` equal buckets of [start_ns, end_ns)."""
    span = max(int(end_ns) - int(start_ns), 1)
    steps = np.rint(np.arange(cells + 1) * (span / max(cells, 1))).astype(np.int64)
    steps[-1] = span
    return np.int64(start_ns) + steps


def paint_cells(index: TraceIndex, rows: RowIndex, row_ids: np.ndarray, start_ns: int,
                end_ns: int, cells: int) -> CellRows:
    """Owners and busy fractions of `cells` cells spanning [start_ns, end_ns) on `row_ids`."""
    row_ids = np.asarray(row_ids, np.int64)
    edges = cell_boundaries(start_ns, end_ns, cells)
    n_rows = len(row_ids)
    if n_rows == 0 or cells <= 0:
        empty = np.zeros((n_rows, max(cells, 0)))
        return CellRows(empty.astype(np.int64) - 1, empty, edges)
    start = index.col("slices.start")
    dur = index.col("slices.dur")
    order = rows.order
    lo = rows.first[row_ids]
    hi = lo + rows.count[row_ids]

    def start_at(p: np.ndarray) -> np.ndarray:
        return start[order[p]]

    def end_at(p: np.ndarray) -> np.ndarray:
        q = order[p]
        return start[q] + dur[q]

    # k[r, j]: position (in `order`) of the first slice of row r that starts at or after edge
    # j. The fence posts narrow each search to FENCE slices; a binary search finishes it.
    k_lo = np.empty((n_rows, cells + 1), np.int64)
    for i, r in enumerate(row_ids.tolist()):
        fences = rows.fence_start[rows.fence_first[r]: rows.fence_first[r + 1]]
        j = np.searchsorted(fences, edges, side="left")
        k_lo[i] = lo[i] + np.maximum(j - 1, 0) * FENCE + (j > 0)
    k_hi = np.minimum(k_lo + FENCE, hi[:, None])
    k = _search(start_at, k_lo.ravel(), k_hi.ravel(), np.tile(edges, n_rows))
    k = k.reshape(n_rows, cells + 1)
    busy = _busy(rows, k, lo, edges, end_at)
    owner = _owners(rows, k, lo, edges, start_at, end_at, dur, order)
    return CellRows(owner, busy, edges)


def _search(key_at, lo: np.ndarray, hi: np.ndarray, q: np.ndarray,
            side: str = "left") -> np.ndarray:
    """Vectorised `np.searchsorted` within ranges: per query, lo plus the number of positions
    p in [lo, hi) with key(p) < q (side "left") or key(p) <= q (side "right"). Keys must be
    sorted within each range."""
    lo = lo.astype(np.int64, copy=True)
    hi = hi.astype(np.int64, copy=True)
    active = np.flatnonzero(lo < hi)
    while len(active):
        mid = (lo[active] + hi[active]) >> 1
        keys = key_at(mid)
        right = keys < q[active] if side == "left" else keys <= q[active]
        lo[active[right]] = mid[right] + 1
        hi[active[~right]] = mid[~right]
        active = active[lo[active] < hi[active]]
    return lo


def _busy(rows: RowIndex, k: np.ndarray, lo: np.ndarray, edges: np.ndarray,
          end_at) -> np.ndarray:
    """Exact busy time per cell: covered(edge) = durations of the slices started before it,
    less what the last of them still runs past it."""
    cum = rows.cum_dur[k]
    last = np.maximum(k - 1, 0)
    started = k > lo[:, None]
    overhang = np.where(started, np.maximum(end_at(last) - edges[None, :], 0), 0)
    covered = cum - overhang
    widths = np.diff(edges).astype(np.float64)
    return np.clip(np.diff(covered, axis=1) / np.maximum(widths, 1.0)[None, :], 0.0, 1.0)


def _owners(rows: RowIndex, k: np.ndarray, lo: np.ndarray, edges: np.ndarray, start_at,
            end_at, dur: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Per cell, the slice covering most of it among two candidates: the one started before
    the cell and running into it, and the longest starting inside it."""
    k0, k1 = k[:, :-1], k[:, 1:]
    cell_start, cell_end = edges[None, :-1], edges[None, 1:]
    before = np.maximum(k0 - 1, 0)
    runs_in = (k0 > lo[:, None]) & (end_at(before) > cell_start)
    cover_before = np.where(runs_in, np.minimum(end_at(before), cell_end) - cell_start, -1)
    inside = k1 > k0
    owner_pos = np.where(runs_in, before, -1)
    if inside.any():
        longest = _range_argmax(rows, k0[inside], k1[inside], dur, order)
        cover_inside = np.minimum(end_at(longest), np.broadcast_to(cell_end, k0.shape)[inside]
                                  ) - start_at(longest)
        # A zero-length slice still owns an otherwise empty cell (cover 0 beats -1).
        wins = cover_inside > cover_before[inside]
        chosen = np.where(wins, longest, owner_pos[inside])
        owner_pos[inside] = chosen
    out = np.full(owner_pos.shape, -1, np.int64)
    valid = owner_pos >= 0
    out[valid] = order[owner_pos[valid]]
    return out


def _range_argmax(rows: RowIndex, a: np.ndarray, b: np.ndarray, dur: np.ndarray,
                  order: np.ndarray) -> np.ndarray:
    """Per range [a, b) of positions: the position of the longest slice.

    Exact for ranges of up to 16 positions; longer ranges take the longest among the aligned
    blocks of the largest size that fits, which cover at least half of the range.
    """
    out = a.astype(np.int64, copy=True)
    if len(a) == 0:
        return out
    length = b - a
    short = length <= 16
    if short.any():
        sa, sl = a[short], length[short]
        offsets = np.arange(16)
        pos = sa[:, None] + offsets[None, :]
        ok = offsets[None, :] < sl[:, None]
        pos = np.where(ok, pos, sa[:, None])
        d = np.where(ok, dur[order[pos]], -1)
        out[short] = pos[np.arange(len(sa)), np.argmax(d, axis=1)]
    long_ = np.flatnonzero(~short)
    if len(long_):
        la, lb = a[long_], b[long_]
        level = np.floor(np.log2((lb - la).astype(np.float64))).astype(np.int64) - 1
        best = np.full(len(long_), -1, np.int64)
        best_dur = np.full(len(long_), -1, np.int64)
        for j in distinct(level).tolist():
            sel = np.flatnonzero(level == j)
            if j - FIRST_LEVEL >= len(rows.block_max):
                continue
            blocks = rows.block_max[j - FIRST_LEVEL]
            size = 1 << j
            first_block = -(-la[sel] // size)
            last_block = lb[sel] // size  # exclusive
            for step in range(4):  # a range of >= 2**(j+1) positions has 1 to 4 whole blocks
                blk = first_block + step
                ok = (blk < last_block) & (blk < len(blocks))
                cand = blocks[np.minimum(blk, len(blocks) - 1)].astype(np.int64)
                cdur = np.where(ok, dur[order[cand]], -1)
                better = cdur > best_dur[sel]
                best[sel[better]] = cand[better]
                best_dur[sel[better]] = cdur[better]
        out[long_] = best
    return out


def rows_for(index: TraceIndex) -> RowIndex:
    """The rows of `index`: from beside its cache file when they were stored there, else
    built (and stored there for the next time)."""
    from proftui.core.cache import indexes as cache

    def fits(arrays: dict[str, np.ndarray]) -> bool:
        rows = RowIndex.from_arrays(arrays)
        return (len(rows.track_first_row) == index.n_tracks + 1
                and len(rows.order) == index.n_slices
                and rows.n_rows == int(index.col("tracks.rows").sum()))

    return RowIndex.from_arrays(cache.derived(index, ROWS_KIND,
                                              lambda: build_rows(index).arrays(), fits))


ROWS_KIND = "rows1"  # bump when the layout of the stored arrays changes
