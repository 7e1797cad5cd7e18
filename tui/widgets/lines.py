"""The timeline's lines: process headers, slice rows, counters and instants, in display order.

Built once per change of the view's layout (a group collapsed, a track pinned or hidden), not
per frame. Pinned tracks come first, then each process with its tracks, rank by rank (or
device by device) as the index orders them; within a rank, by default, the processes with
device work (the streams) before the others, so that the first screen shows where the device
time goes even below Python stacks 40 deep (`t` on the timeline gives the trace's own order);
hidden tracks are left out; a collapsed process keeps its header line only. A pinned
track's label names its rank and process where the profile has several, since it is no longer
under its process's header.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proftui.core.model.arrays import distinct
from proftui.core.model.index import TraceIndex
from proftui.core.ops.roles import device_tracks
from proftui.core.query.rows import RowIndex

PROCESS, SLICES, COUNTER, INSTANTS = "process", "slices", "counter", "instants"


@dataclass(frozen=True)
class Line:
    """One line of the timeline. `item` is the row id (slices), the counter series id
    (counter) or the track id (instants); -1 for a process header."""

    kind: str
    process: int
    track: int
    item: int
    label: str


@dataclass
class TrackChoices:
    """What the user chose about the tracks: collapsed, pinned, hidden, device work first."""

    collapsed: set[int]
    pinned: list[int]
    hidden: set[int]
    device_first: bool = True  # processes with device work first in their rank

    @classmethod
    def empty(cls) -> TrackChoices:
        return cls(set(), [], set())


_KINDS = (PROCESS, SLICES, COUNTER, INSTANTS)
_P, _S, _C, _I = range(4)


class Lines:
    """The lines of one layout as columns: a trace of 10^6 threads costs arrays, not objects.

    `lines[n]` makes the `Line` (with its label) on demand; `find` locates a line without a
    Python loop over all of them.
    """

    def __init__(self, index: TraceIndex | None, kind: np.ndarray, process: np.ndarray,
                 track: np.ndarray, item: np.ndarray, titled: np.ndarray,
                 n_pinned: int = 0) -> None:
        self.index = index
        self.kind, self.process, self.track, self.item = kind, process, track, item
        self.titled = titled
        self.n_pinned = n_pinned  # the first lines, those of the pinned tracks
        procs = index.arrays["processes.group"] if index is not None else np.zeros(0, np.int64)
        self.several_processes = len(procs) > 1
        self.several_groups = bool(len(procs)) and bool((procs != procs[0]).any())
        self._made: dict[int, Line] = {}  # each line is asked for several times a frame

    @classmethod
    def empty(cls) -> Lines:
        none = np.zeros(0, np.int64)
        return cls(None, none.astype(np.int8), none, none, none, none.astype(bool))

    def __len__(self) -> int:
        return len(self.kind)

    def __getitem__(self, n: int) -> Line:
        if not -len(self) <= n < len(self):
            raise IndexError(n)
        n %= len(self)
        made = self._made.get(n)
        if made is None:
            made = self._made[n] = self._make(n)
        return made

    def _make(self, n: int) -> Line:
        kind, process = int(self.kind[n]), int(self.process[n])
        track, item = int(self.track[n]), int(self.item[n])
        index = self.index
        assert index is not None
        if kind == _P or (self.titled[n] and n < self.n_pinned):
            label = self.label_forms(n)[0]
        elif kind == _C:
            label = index.strings[index.arrays["counters.series_name"][item]]
        elif self.titled[n]:
            label = index.track_label(track)
        else:
            label = "  instants" if kind == _I else ""
        return Line(_KINDS[kind], process, track, item, label)

    def label_forms(self, n: int) -> list[str]:
        """The label of a process header or a pinned track's first line, fullest first, then
        shorter forms for a narrow gutter (see :func:`~proftui.tui.text.widths.first_fitting`):
        a header gives up its pid, then its labels; a pinned track its process's labels, its
        process, then its rank."""
        index = self.index
        assert index is not None
        process = int(self.process[n])
        if self.kind[n] == _P:
            return [index.process_label(process), index.process_label(process, pid=False),
                    index.process_label(process, pid=False, labels=False)]
        track = index.track_label(int(self.track[n]))
        if process < 0:
            return [track]
        group = index.strings[index.arrays["processes.group"][process]] \
            if self.several_groups else ""
        names = ([index.process_label(process, group=False, pid=False),
                  index.process_label(process, group=False, pid=False, labels=False)]
                 if self.several_processes else [])
        forms = [" · ".join(p for p in (group, name, track) if p) for name in names]
        forms += [f"{group} · {track}" if group else track, track]
        return list(dict.fromkeys(forms))  # in order, without repeats

    def __iter__(self):
        return (self[n] for n in range(len(self)))

    def find(self, kind: str | None = None, process: int | None = None,
             track: int | None = None, item: int | None = None) -> int | None:
        """The first line with all the given values, or None."""
        hit = np.ones(len(self), bool)
        for column, value in ((self.kind, None if kind is None else _KINDS.index(kind)),
                              (self.process, process), (self.track, track),
                              (self.item, item)):
            if value is not None:
                hit &= column == value
        n = int(np.argmax(hit)) if len(hit) else 0
        return n if len(hit) and hit[n] else None


def build_lines(index: TraceIndex, rows: RowIndex, state: TrackChoices) -> Lines:
    """All lines of the timeline for this layout state, vectorised over tracks."""
    a = index.arrays
    n_tracks = index.n_tracks
    track_process = a["tracks.process"].astype(np.int64)
    shown = np.ones(n_tracks, bool)
    shown[list(state.hidden)] = False
    pinned = [t for t in state.pinned if t not in state.hidden]
    shown[pinned] = False
    # Entries in display order: a process header (track -1) or a track.
    in_proc = np.flatnonzero(shown & (track_process >= 0))
    headers = distinct(track_process[in_proc])
    in_proc = in_proc[~np.isin(track_process[in_proc], list(state.collapsed))]
    proc_entries = np.concatenate([np.full(len(headers), -1), in_proc])
    proc_of = np.concatenate([headers, track_process[in_proc]])
    first_row = rows.track_first_row.astype(np.int64)
    n_rows = np.diff(first_row)
    place = _process_places(index, n_rows, state.device_first)
    order = np.lexsort((proc_entries, place[proc_of]))  # by process, its header (-1) first
    entry_track = np.concatenate([np.array(pinned, np.int64), proc_entries[order],
                                  np.flatnonzero(shown & (track_process < 0))])
    entry_proc = np.concatenate([track_process[pinned], proc_of[order],
                                 np.full(len(entry_track) - len(pinned) - len(order), -1)])
    # Lines of a track: its rows, an instants line if it has instants, one per counter series.
    has_instants = (np.bincount(a["instants.track"], minlength=n_tracks) > 0).astype(np.int64)
    series_track = a["counters.series_track"].astype(np.int64)
    series_order = np.argsort(series_track, kind="stable")
    n_series = np.bincount(series_track, minlength=n_tracks)
    series_first = np.concatenate([[0], np.cumsum(n_series)])
    is_header = entry_track < 0
    t = np.where(is_header, 0, entry_track)
    per_entry = np.where(is_header, 1, n_rows[t] + has_instants[t] + n_series[t])
    line_entry = np.repeat(np.arange(len(entry_track)), per_entry)
    j = np.arange(len(line_entry)) - np.repeat(np.cumsum(per_entry) - per_entry, per_entry)
    track = entry_track[line_entry]
    tt = t[line_entry]
    rows_here = n_rows[tt]
    kind = np.where(j < rows_here, _S,
                    np.where(j < rows_here + has_instants[tt], _I, _C)).astype(np.int8)
    kind[track < 0] = _P
    k = np.clip(j - rows_here - has_instants[tt], 0, None)
    series = series_order[np.minimum(series_first[tt] + k, max(len(series_order) - 1, 0))] \
        if len(series_order) else np.zeros(len(j), np.int64)
    item = np.select([kind == _S, kind == _I, kind == _C], [first_row[tt] + j, tt, series], -1)
    titled = ((kind == _S) & (j == 0)) | ((kind == _I) & (rows_here == 0))
    n_pinned = int(np.count_nonzero(line_entry < len(pinned)))
    return Lines(index, kind, entry_proc[line_entry], track, item, titled, n_pinned)


def _process_places(index: TraceIndex, n_rows: np.ndarray, device_first: bool) -> np.ndarray:
    """Each process's place in display order: the index's order, or with `device_first` in
    each group (rank or device) the processes with slices on a device track first."""
    n_processes = len(index.arrays["processes.group"])
    if not device_first:
        return np.arange(n_processes)
    group = index.arrays["processes.group"].astype(np.int64)
    _, group_first = np.unique(group, return_index=True)  # a group's place: its first process
    group_place = np.zeros(int(group.max(initial=0)) + 1, np.int64)
    group_place[group[group_first]] = group_first
    track_process = index.arrays["tracks.process"].astype(np.int64)
    works = device_tracks(index) & (n_rows > 0) & (track_process >= 0)
    host = np.ones(n_processes, bool)
    host[track_process[works]] = False
    places = np.empty(n_processes, np.int64)
    places[np.lexsort((np.arange(n_processes), host, group_place[group]))] = \
        np.arange(n_processes)
    return places
