"""Each slice's parent: the slice one row up on its track that contains it.

Found once for the whole index, by one binary search in the row above, and kept beside the
cached index (self time, details and the advisor's callers stand on it).
"""

from __future__ import annotations

import weakref

import numpy as np

from proftui.core.model.index import TraceIndex

PARENTS_KIND = "parents1"  # bump when the stored parent array changes meaning
_parents_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def slice_parents(index: TraceIndex) -> np.ndarray:
    """Per slice, the slice one row up on its track that contains it, else -1.

    Within a row slices are disjoint and sorted by start, so the only candidate is the last
    slice of the row above starting at or before the child; it is the parent when it also
    ends at or after the child's end. On tracks laid out on extra lanes (overlapping slices
    that do not nest) a slice whose would-be parent does not contain it has none.
    """
    memo = _parents_memo.get(index)
    if memo is not None:
        return memo
    from proftui.core.cache import indexes as cache
    from proftui.core.query.rows import rows_for

    parents = cache.derived(
        index, PARENTS_KIND,
        lambda: {"parent": find_parents(index.col("slices.start"), index.col("slices.dur"),
                                        rows_for(index))},
        lambda got: len(got["parent"]) == index.n_slices)["parent"]
    _parents_memo[index] = parents
    return parents


def find_parents(start: np.ndarray, dur: np.ndarray, rows, composite: bool = True
                 ) -> np.ndarray:
    """The parent array of :func:`slice_parents` from the columns and their RowIndex.

    With `composite` the searches of all rows run as one ``np.searchsorted`` on a
    (row, start) key; without it (or when the key does not fit 63 bits) row by row.
    """
    n = len(start)
    pos_type = np.int32 if n < 2**31 else np.int64
    parents = np.full(n, -1, pos_type)
    order = rows.order
    if n == 0:
        return parents
    deep = np.flatnonzero((rows.row_depth > 0) & (rows.count > 0))
    if not len(deep):
        return parents
    o_start = start[order]
    o_end = o_start + dur[order]
    row_of_pos = np.repeat(np.arange(rows.n_rows, dtype=np.int64), rows.count)
    t_lo, t_hi = int(o_start.min()), int(o_start.max())
    span_bits = max(1, (t_hi - t_lo).bit_length())
    row_bits = max(1, int(rows.n_rows).bit_length())
    child_pos = np.flatnonzero(rows.row_depth[row_of_pos] > 0)
    if composite and span_bits + row_bits <= 62:
        key = (row_of_pos << span_bits) | (o_start - t_lo)
        query = ((row_of_pos[child_pos] - 1) << span_bits) | (o_start[child_pos] - t_lo)
        cand = np.searchsorted(key, query, side="right") - 1
    else:
        cand = np.empty(len(child_pos), np.int64)
        at = 0
        for r in deep.tolist():
            lo, k = int(rows.first[r]), int(rows.count[r])
            plo, pk = int(rows.first[r - 1]), int(rows.count[r - 1])
            found = np.searchsorted(o_start[plo:plo + pk], o_start[lo:lo + k], side="right")
            cand[at:at + k] = plo + found - 1
            at += k
    parent_row = row_of_pos[child_pos] - 1
    ok = (cand >= 0) & (row_of_pos[np.maximum(cand, 0)] == parent_row)
    ok &= o_end[np.maximum(cand, 0)] >= o_end[child_pos]
    parents[order[child_pos[ok]]] = order[cand[ok]]
    return parents
