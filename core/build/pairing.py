"""Pairing: B/E events into slices per track, and async begin/end events into spans on lanes."""

from __future__ import annotations

from typing import Any

import numpy as np

from proftui.core.build.tracks import ASYNC_TRACK, TrackIds
from proftui.core.model.diagnostics import Diagnostics


def pair_begin_end(be: dict[str, np.ndarray], complete: dict[str, np.ndarray],
                    diagnostics: Diagnostics) -> dict:
    """Match B/E per track (E closes the most recent open B); unclosed B end at the track end.

    A track's end is its last B/E timestamp or the end of its last complete (X) slice.
    """
    order = np.lexsort((be["ref"], be["ts"], be["track"]))
    ts = be["ts"][order].tolist()
    track = be["track"][order].tolist()
    begin = be["begin"][order].tolist()
    names = be["name"][order].tolist()
    rows: list[tuple[int, int, int]] = []  # (index of B, start, end)
    stacks: dict[int, list[int]] = {}
    track_end: dict[int, int] = {}
    unmatched = mismatched = 0
    for i in range(len(ts)):
        t = track[i]
        track_end[t] = ts[i]
        stack = stacks.setdefault(t, [])
        if begin[i]:
            stack.append(i)
        elif stack:
            j = stack.pop()
            if names[i] and names[i] != names[j]:
                mismatched += 1
            rows.append((j, ts[j], ts[i]))
        else:
            unmatched += 1
    unclosed = 0
    open_tracks = [t for t, stack in stacks.items() if stack]
    if open_tracks and len(complete["start"]):
        on = np.isin(complete["track"], open_tracks)
        ends = complete["start"][on] + complete["dur"][on]
        for t, end in zip(complete["track"][on].tolist(), ends.tolist()):
            track_end[t] = max(track_end[t], end)
    for t in open_tracks:
        for j in stacks[t]:
            rows.append((j, ts[j], track_end[t]))
            unclosed += 1
    diagnostics.add("unmatched_end", unmatched)
    diagnostics.add("unclosed_begin", unclosed)
    diagnostics.add("end_name_mismatch", mismatched)
    idx = order[np.array([r[0] for r in rows], np.int64)] if rows else np.zeros(0, np.int64)
    start = np.array([r[1] for r in rows], np.int64)
    end = np.array([r[2] for r in rows], np.int64)
    return {"start": start, "dur": end - start, "track": be["track"][idx],
            "name": be["name"][idx], "cat": be["cat"][idx], "ref": be["ref"][idx],
            "cname": np.zeros(len(idx), np.int32)}


def pair_async(events: list[tuple], latest_ts: int, tracks: TrackIds,
               diagnostics: Diagnostics) -> tuple[dict[str, np.ndarray], list[tuple]]:
    """Async spans: b/e nest by (cat, id, scope), legacy S/F pair by (cat, id, name).

    Ids are global (a span may start in one process and finish in another). The spans and
    n/T/p instants of one id stay together and never nest under another id's: each id
    takes a lane (a track "cat (async)", "cat (async #2)", ...) of its begin's process and
    category, packed greedily so that ids that do not overlap in time share a lane.
    Returns the spans as slice columns and the instants as (ts, track, name, cat, ref).
    """
    open_spans: dict[tuple, list[tuple[int, int, int, int, Any]]] = {}
    spans: list[tuple[Any, int, int, int, int, int]] = []  # group, start, end, name, cat, ref
    points: list[tuple[Any, int, int, int, int, Any]] = []  # group, ts, name, cat, ref, pid
    unmatched = 0
    for ts, ref, ph, pid, cat, name, ident, scope, _ in sorted(events):
        legacy = ph in "STpF"
        key = ("S", cat, ident, name) if legacy else ("b", cat, ident, scope)
        group = (pid, cat, ident)
        if ph in ("b", "S"):
            open_spans.setdefault(key, []).append((ts, name, cat, ref, group))
        elif ph in ("n", "T", "p"):
            points.append((group, ts, name, cat, ref, pid))
        else:  # e, F: close the most recent open span (of the same name, for e)
            stack = open_spans.get(key, [])
            pos = len(stack) - 1
            if ph == "e" and name:
                while pos >= 0 and stack[pos][1] != name:
                    pos -= 1
            if pos < 0:
                unmatched += 1
                continue
            start, bname, bcat, bref, bgroup = stack.pop(pos)
            spans.append((bgroup, start, ts, bname, bcat, bref))
    diagnostics.add("unmatched_async_end", unmatched)
    unclosed = [span for stack in open_spans.values() for span in stack]
    if unclosed:
        diagnostics.add("unclosed_async", len(unclosed))
        spans += [(group, start, max(latest_ts, start), name, cat, ref)
                  for start, name, cat, ref, group in unclosed]
    lane = pack_async_groups([(g, s, e) for g, s, e, *_ in spans] +
                              [(g, t, t) for g, t, *_ in points])
    track_of = {g: tracks.of_full((ASYNC_TRACK, g[0], (g[1], lane[g]))) for g in lane}
    instants = [(ts, track_of[group], name, cat, ref) for group, ts, name, cat, ref, _ in points]
    arr = np.array([(track_of[g], s, e, name, cat, ref) for g, s, e, name, cat, ref in spans],
                   np.int64).reshape(-1, 6)
    return {"track": arr[:, 0].astype(np.int32), "start": arr[:, 1],
            "dur": arr[:, 2] - arr[:, 1], "name": arr[:, 3].astype(np.int32),
            "cat": arr[:, 4].astype(np.int32), "ref": arr[:, 5],
            "cname": np.zeros(len(arr), np.int32)}, instants


def pack_async_groups(extents: list[tuple[tuple, int, int]]) -> dict[tuple, int]:
    """Lane of each async id group ((pid, cat, id) -> 0, 1, ...): groups of one process and
    category that overlap in time get different lanes; the others share the lowest free one."""
    span: dict[tuple, list[int]] = {}
    for group, start, end in extents:
        if group in span:
            span[group][0] = min(span[group][0], start)
            span[group][1] = max(span[group][1], end)
        else:
            span[group] = [start, end]
    lane_ends: dict[tuple, list[int]] = {}  # (pid, cat) -> end of each lane's last group
    lanes: dict[tuple, int] = {}
    for group, (start, end) in sorted(span.items(), key=lambda kv: (kv[1][0], -kv[1][1])):
        ends = lane_ends.setdefault(group[:2], [])
        free = next((i for i, last in enumerate(ends) if last <= start), None)
        if free is None:
            free = len(ends)
            ends.append(end)
        ends[free] = end
        lanes[group] = free
    return lanes
