"""Flows: flow ids kept exact, flow points bound to slices and chained into edges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from proftui.core.build import lanes as layout
from proftui.core.build.tracks import id_token
from proftui.core.model.diagnostics import Diagnostics


def flow_ids(ids: list[Any], intern: Callable[[list[Any]], np.ndarray],
             ) -> tuple[np.ndarray, np.ndarray]:
    """Flow ids as (number, 0) when integral, else (0, interned text); exact beyond 2^53.

    A JSON integer or a string of ASCII digits inside int64 is a number. Each id is
    classified on its own, never by what else its batch holds: the points of one flow are
    matched across batches, so the same id must get the same key in all of them.
    """
    n = len(ids)
    if n and isinstance(ids[0], str):
        try:  # the usual string ids ("141733920768"): digits only, parsed in one go
            joined = "".join(ids)
            if joined.isascii() and joined.isdigit():
                lengths = list(map(len, ids))
                if min(lengths) and max(lengths) < 19:  # none empty, all inside int64
                    return (np.fromstring(" ".join(ids), np.int64, sep=" "),  # 1/3 the time
                            np.zeros(n, np.int32))
                return np.array(ids, dtype=np.int64), np.zeros(n, np.int32)
        except (TypeError, ValueError, OverflowError):
            pass
    try:
        arr = np.array(ids)
    except (OverflowError, ValueError, TypeError):
        arr = None
    if arr is not None and arr.ndim == 1:
        if arr.dtype.kind == "i":  # integers only
            return arr.astype(np.int64), np.zeros(n, np.int32)
        # Strings only (numbers mixed in would have been turned into text here).
        if arr.dtype.kind == "U" and all(type(i) is str for i in ids):
            try:
                ascii_ids = arr.astype("S")
            except UnicodeEncodeError:  # other scripts' digits are not numbers: one by one
                pass
            else:
                return _string_ids(ascii_ids, ids, intern)
    num = np.zeros(n, np.int64)
    text = np.zeros(n, np.int32)
    rest = []
    for i, value in enumerate(ids):
        number = _id_number(value)
        if number is None:
            rest.append(i)
        else:
            num[i] = number
    if rest:
        text[rest] = intern([ids[i] if isinstance(ids[i], str) else id_token(ids[i])
                             for i in rest])
    return num, text


def _string_ids(arr: np.ndarray, ids: list[str], intern: Callable[[list[Any]], np.ndarray],
                ) -> tuple[np.ndarray, np.ndarray]:
    """flow_ids of ASCII strings (`arr`, a bytes array of `ids`), vectorised."""
    digits = np.char.str_len(arr)
    numeric = np.char.isdigit(arr) & ((digits <= 18) | (
        (digits == 19) & (arr <= b"9223372036854775807")))  # inside int64
    num = np.zeros(len(ids), np.int64)
    num[numeric] = arr[numeric].astype(np.int64)
    text = np.zeros(len(ids), np.int32)
    rest = np.flatnonzero(~numeric)
    if len(rest):
        text[rest] = intern([ids[i] for i in rest.tolist()])
    return num, text


def _id_number(value: Any) -> int | None:
    """One id as a number (an integer or ASCII digits inside int64), else None."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63:
        return value
    return None


def _chain_order(by_key: np.ndarray, flow_no: np.ndarray, new_key: np.ndarray,
                 group: np.ndarray, primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """np.lexsort((secondary, primary, group)), from `by_key` (the points of a flow together,
    in the file's order; `flow_no` and `new_key` per position of it): most flows' points are
    in their chain's order there already (an s before its f), and only the flows with a point
    out of order are sorted (1 GB msprof-like: 37 ms for the whole lexsort). `by_key` is
    reordered in place."""
    if len(by_key) < 2:
        return by_key
    p, s = primary[by_key], secondary[by_key]
    out_of_order = ~new_key[1:] & ((p[:-1] > p[1:]) | ((p[:-1] == p[1:]) & (s[:-1] > s[1:])))
    del p, s
    if not out_of_order.any():
        return by_key
    unsorted = np.zeros(int(flow_no[-1]) + 1, bool)
    unsorted[flow_no[1:][out_of_order]] = True
    slots = np.flatnonzero(unsorted[flow_no])
    members = by_key[slots]  # by flow, each in the file's order: lexsort keeps it among ties
    by_key[slots] = members[np.lexsort((secondary[members], primary[members], group[members]))]
    return by_key


def flow_edges(f: dict[str, np.ndarray], bound: dict[str, np.ndarray],
               slices: dict[str, np.ndarray], parent: np.ndarray,
               diagnostics: Diagnostics, track_group: np.ndarray | None = None,
               threads: int = 1) -> dict[str, np.ndarray]:
    """Bind flow points to slices and chain the points of each flow into edges.

    `f` holds the s/t/f points (tracks in display order), `bound` the flow ends bound to a
    slice by its ordinal (v2 flows carried by X events with `bind_id`, and the flows of
    importers that know both ends), `slices` the sorted slices and `parent` their parents.
    `track_group` (per track, its group's string id) keeps each flow within one rank or
    device: their profilers count ids per process (torch_npu's connection and correlation
    ids), so two ranks reuse the same (cat, name, id) for flows that have nothing in common.
    With `threads` 2, the points are bound in two halves at once.
    """
    slice_of = layout.bind_points(slices["track"], slices["start"], slices["dur"], parent,
                                  f["track"], f["ts"], f["enclosing"], threads)
    if track_group is None:
        track_group = np.zeros(max(int(slices["track"].max(initial=-1)),
                                   int(f["track"].max(initial=-1))) + 1, np.int64)
    scope = track_group[f["track"]]
    unbound = int((slice_of < 0).sum())
    if unbound:
        diagnostics.add("flow_unbound", unbound)
    if len(bound["ref"]) and len(slices["ref"]):
        ref_order = np.argsort(slices["ref"])
        pos = np.searchsorted(slices["ref"], bound["ref"], sorter=ref_order)
        pos = ref_order[np.minimum(pos, len(ref_order) - 1)]
        # An end whose slice was dropped (no usable time) binds to nothing.
        missing = slices["ref"][pos] != bound["ref"]
        if missing.any():
            diagnostics.add("flow_unbound", int(missing.sum()))
        for key, extra in (("cat", bound["cat"]), ("name", bound["name"]),
                           ("id_num", bound["id_num"]),
                           ("id_str", bound["id_str"]), ("phase", bound["phase"]),
                           ("ts", slices["start"][pos])):
            f[key] = np.concatenate([f[key], extra])
        slice_of = np.concatenate([slice_of, np.where(missing, -1, pos)])
        scope = np.concatenate([scope, track_group[slices["track"][pos]]])
    # Points of one flow chain up: its s, then its t steps, then its f. Host and device
    # clocks can disagree, so a lone s links to its f even when the f is earlier; when an
    # id is reused (several s), the points chain in time order instead.
    # The peak of indexing a file can be here: the keys are compared a column at a time and
    # each temporary is deleted once done with (msprof-like, 1 GB: 0.48x the file, was 0.63x).
    by_key = np.lexsort((f["id_str"], f["id_num"], f["name"], f["cat"], scope))
    new_key = np.zeros(len(by_key), bool)
    for column in (scope, f["cat"], f["name"], f["id_num"], f["id_str"]):
        ordered = column[by_key]
        new_key[1:] |= ordered[1:] != ordered[:-1]
    del ordered
    new_key[:1] = True
    flow_no = np.cumsum(new_key) - 1  # each point's flow, in key order
    group = np.empty(len(by_key), np.int64)
    group[by_key] = flow_no
    starts_per_group = np.bincount(group[f["phase"] == 0], minlength=int(group.max(initial=0)) + 1)
    time_first = starts_per_group[group] > 1
    del starts_per_group
    primary = np.where(time_first, f["ts"], f["phase"])
    secondary = np.where(time_first, f["phase"], f["ts"])
    del time_first
    order = _chain_order(by_key, flow_no, new_key, group, primary, secondary)
    del primary, secondary, group
    phase, ts, slice_of = f["phase"][order], f["ts"][order], slice_of[order]
    # A new `s` with an already-open id starts a new chain rather than linking back.
    src = np.flatnonzero(~new_key[1:] & (phase[1:] != 0))  # (order moved points within flows)
    del phase
    dst = src + 1
    edge_flow = flow_no[src]  # non-decreasing: count its distinct values linearly
    del flow_no
    n_with_edges = int(np.count_nonzero(np.diff(edge_flow))) + 1 if len(src) else 0
    singles = int(new_key.sum()) - n_with_edges
    if singles > 0:
        diagnostics.add("flow_orphan", singles)
    first = order[new_key]
    return {
        "flow": edge_flow.astype(np.int32),
        "src_slice": slice_of[src].astype(np.int32),
        "dst_slice": slice_of[dst].astype(np.int32),
        "src_ts": ts[src],
        "dst_ts": ts[dst],
        "flow_name": f["name"][first],
        "flow_cat": f["cat"][first],
        "flow_id_num": f["id_num"][first],
        "flow_id_str": f["id_str"][first],
    }
