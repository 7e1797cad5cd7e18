"""A batch of Chrome trace events as :class:`~proftui.core.importers.chrome.events.ChromeEvents`
reads it: the Python path's decoded events (:class:`Listed`) or the native reader's columns
(:class:`Native`) behind the same methods, so that the index cannot tell which reader read a
batch; and the ids of their labels by distinct combination (:class:`Labels`)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from itertools import repeat
from typing import Any

import msgspec
import numpy as np

from proftui.core.build.builder import TraceBuilder
from proftui.core.importers.chrome.decode import DECODER, Event
from proftui.core.importers.chrome.native import Columns
from proftui.core.importers.kineto_memory import MEMORY_TOTALS, Totals
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


class _PhaseGroups(dict):
    def __missing__(self, key: object) -> int:
        return MISSING if key is None else UNKNOWN


_group_of = _PhaseGroups(_GROUP)


class Labels:
    """The ids of events' labels (a track and strings) by the distinct combinations of
    their fields: one dictionary lookup an event where the fields one by one take a pass
    each. A trace repeats few combinations (its kernels and operators on their threads).

    `key` gives each event's fields as a tuple and `parts` names what they become, in order:
    "track" takes two fields (pid, tid), any other part one string. New combinations are
    numbered in the order the columns one by one would number them (every new string of the
    first part, then of the second ..., each in event order), so the ids are the same.
    `combo` places the key's fields in the native reader's combinations (native.COMBO).
    """

    LIMIT = 1 << 20  # combinations kept; past it, forgotten (the ids stay in the interners)

    def __init__(self, key: Callable[[list[Event]], list[tuple]], parts: tuple[str, ...],
                 combo: tuple[int, ...]) -> None:
        self.key = key
        self.parts = parts
        self.combo = combo
        self.forget(None)

    def forget(self, group: Any) -> None:
        self.rows: dict[tuple, int] = {}
        self.ids = np.zeros((len(self.parts), 0), np.int32)
        self.group = group

    def rows_of(self, builder: TraceBuilder, keys: list[tuple]) -> np.ndarray | None:
        """Per key its column of `ids` (-1: not numbered yet), or None when :meth:`of` must
        be asked (the builder reads another file's group, or a field is unhashable)."""
        if builder.tracks.group != self.group:
            return None
        try:
            return np.fromiter(map(self.rows.get, keys, repeat(-1)), np.int64, len(keys))
        except TypeError:
            return None

    def of(self, builder: TraceBuilder, keys: list[tuple]) -> np.ndarray | None:
        """Per part a row of ids, per key a column; None if a field is unhashable."""
        if builder.tracks.group != self.group or len(self.rows) > self.LIMIT:
            self.forget(builder.tracks.group)  # a new file's pids are another group's
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
        return self.ids.take(at, axis=1)  # (a third of what [:, at] takes)


class Listed:
    """A batch the Python path decoded: a list of events (see ChromeEvents)."""

    reader = "python"

    def __init__(self, events: list[Event], phs: list[Any] | None = None) -> None:
        self.evs = events
        self.phs = phs
        self.dur_us = getattr(events, "dur_us", None)  # durations the decoder converted

    def __len__(self) -> int:
        return len(self.evs)

    def groups(self) -> np.ndarray:
        """Each event's phase group (its phase letters kept for counting)."""
        phs = [e.ph for e in self.evs]
        try:
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        except TypeError:  # an unhashable ph (a list or object)
            phs = [p if isinstance(p, str) else json_text(p) for p in phs]
            groups = np.fromiter(map(_group_of.__getitem__, phs), np.int8, len(phs))
        self.phs = phs
        return groups

    def times(self) -> tuple[np.ndarray, np.ndarray]:
        return us_to_ns([e.ts for e in self.evs])

    def sub(self, idx: np.ndarray, group: int) -> Listed:
        pick = _picker(idx.tolist())
        part = Listed(pick(self.evs), pick(self.phs) if self.phs is not None else None)
        part.dur_us = self.dur_us[idx] if self.dur_us is not None and group == X else None
        return part

    def field(self, name: str) -> list[Any]:
        if name == "ph" and self.phs is not None:
            return self.phs
        return list(map(operator.attrgetter(name), self.evs))

    def codes(self, name: str, of: Callable[[Any], int]) -> np.ndarray:
        """Per event `of` its field `name`, as int8."""
        return np.fromiter(map(of, self.field(name)), np.int8, len(self.evs))

    def memory_totals(self, positions: list[int]) -> None:
        return None  # read event by event (memory_samples), the reference

    def events(self, positions: list[int] | None = None) -> list[Event]:
        return self.evs if positions is None else [self.evs[i] for i in positions]

    def count_phases(self, builder: TraceBuilder) -> None:
        builder.count_phases(self.field("ph"))

    def each_time(self, builder: TraceBuilder, times: tuple[np.ndarray, np.ndarray],
                  ) -> list[int | None]:
        """Each event's time on the shared clock (None: unusable), read from the event by
        one_us_to_ns, which differs from the batch's conversion on odd values (a bool is no
        time to it)."""
        return [builder.shared_clock_one(one_us_to_ns(e.ts)) for e in self.evs]

    def first_of(self, name: str, other: str) -> list[Any]:
        """Per event field `name`, or `other` where `name` is absent (None)."""
        return [a if a is not None else b
                for a, b in zip(self.field(name), self.field(other))]

    def durations(self) -> tuple[np.ndarray, np.ndarray]:
        if self.dur_us is not None:
            return _float_durations_ns(self.dur_us)
        return _durations_ns([e.dur for e in self.evs])

    def binds(self) -> list[Any]:
        return [e.bind_id for e in self.evs]

    def label_ids(self, labels: Labels, builder: TraceBuilder) -> list[np.ndarray]:
        """The ids of each of `labels`' parts, per event."""
        ids = labels.of(builder, labels.key(self.evs))
        # None: a field that cannot be a dictionary key (a list, an object)
        return list(ids) if ids is not None else _one_at_a_time(self, labels, builder)


class Native:
    """A batch the native reader read (:class:`Columns`), or the events `idx` of one."""

    reader = "native"

    def __init__(self, cols: Columns, idx: np.ndarray | None = None) -> None:
        self.cols = cols
        self.idx = idx

    def __len__(self) -> int:
        return self.cols.n if self.idx is None else len(self.idx)

    def groups(self) -> np.ndarray:
        return self.codes("ph", _group_of.__getitem__)  # JSON scalars: all hashable

    def codes(self, name: str, of: Callable[[Any], int]) -> np.ndarray:
        """Per event `of` its field `name`, as int8: `of` called once per distinct value."""
        ids = self._ids(name)
        tokens = _present(ids, len(self.cols.values))
        by_token = np.zeros(len(self.cols.values), np.int8)
        by_token[tokens] = np.fromiter(map(of, self.cols.values[tokens].tolist()), np.int8,
                                       len(tokens))
        return by_token[ids]

    def times(self) -> tuple[np.ndarray, np.ndarray]:
        return self.cols.ts, self.cols.ts_ok

    def sub(self, idx: np.ndarray, group: int) -> Native:
        return Native(self.cols, idx if self.idx is None else self.idx[idx])

    def _ids(self, name: str) -> np.ndarray:
        ids = self.cols.ids(name)
        return ids if self.idx is None else ids[self.idx]

    def field(self, name: str) -> list[Any]:
        return self.cols.values[self._ids(name)].tolist()

    def count_phases(self, builder: TraceBuilder) -> None:
        values = self.cols.values
        counts = np.bincount(self._ids("ph") % len(values), minlength=len(values))  # -1: None
        ids = np.flatnonzero(counts)
        for value, n in zip(values[ids].tolist(), counts[ids].tolist()):
            builder.count_phase(value, n)

    def each_time(self, builder: TraceBuilder, times: tuple[np.ndarray, np.ndarray],
                  ) -> list[int | None]:
        """Each event's time on the shared clock (None: unusable): the reader's, which reads
        only what one_us_to_ns reads alike."""
        return [t if ok else None for t, ok in zip(times[0].tolist(), times[1].tolist())]

    def first_of(self, name: str, other: str) -> list[Any]:
        ids = self._ids(name)
        return self.cols.values[np.where(ids >= 0, ids, self._ids(other))].tolist()

    def events(self, positions: list[int] | None = None) -> list[Event]:
        """The events themselves, decoded from their bytes by the Python path (for the few
        kinds that need more than columns: counters, metadata, async, allocator events)."""
        return DECODER.decode(self._array_of(positions))  # one decode for them all

    def memory_totals(self, positions: list[int]) -> list[Totals | None] | None:
        """The Totals of the ``[memory]`` events at `positions`, in one typed decode of
        their bytes; None when it refuses them (they are read event by event then)."""
        try:
            return [e.args for e in MEMORY_TOTALS.decode(self._array_of(positions))]
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            return None

    def _array_of(self, positions: list[int] | None) -> bytes:
        """The events at `positions` (None: all) as the text of a JSON array."""
        rows = np.arange(self.cols.n) if self.idx is None else self.idx
        if positions is not None:
            rows = rows[positions]
        view = memoryview(self.cols.data)
        return b"[" + b",".join([view[a:b] for a, b in self.cols.bounds[rows].tolist()]) + b"]"

    def durations(self) -> tuple[np.ndarray, np.ndarray]:
        if self.idx is None:
            return self.cols.dur.copy(), self.cols.dur_ok.copy()
        return self.cols.dur[self.idx], self.cols.dur_ok[self.idx]

    def binds(self) -> None:
        return None  # the native reader declines batches with flow v2 keys

    def label_ids(self, labels: Labels, builder: TraceBuilder) -> list[np.ndarray]:
        """The ids of each of `labels`' parts, per event: each combination of the batch looked
        up once for all its groups, the new ones numbered in the order the events first show
        them (as the Python path numbers them)."""
        cols = self.cols
        combo = cols.combo if self.idx is None else cols.combo[self.idx]
        if labels not in cols.known:
            cols.known[labels] = labels.rows_of(builder, self._all_keys(labels))
        known = cols.known[labels]
        if known is not None:
            at = known[combo]
            missing = np.flatnonzero(at < 0)
            if not len(missing):  # the usual case after a file's first batches
                return list(labels.ids.take(at, axis=1))
            # New combinations, in the order of their first events. (Known ones have every
            # string and track numbered already: looking them up numbers nothing.)
            new = np.fromiter(dict.fromkeys(combo[missing].tolist()), np.int64)
            keys, rows = self._keys(labels, new), labels.rows
            if labels.of(builder, keys) is not None and labels.rows is rows:
                known[new] = labels.rows_of(builder, keys)
                return list(labels.ids.take(known[combo], axis=1))
        # A field no dictionary takes, another file's group, or Labels forgot what it knew
        # (past its limit): all the group's combinations asked of `of` again.
        del cols.known[labels]
        distinct, inverse = _first_appearance(combo)
        ids = labels.of(builder, self._keys(labels, distinct))
        return (list(ids.take(inverse, axis=1)) if ids is not None
                else _one_at_a_time(self, labels, builder))

    def _all_keys(self, labels: Labels) -> list[tuple]:
        """The label keys of all the batch's combinations."""
        return list(map(operator.itemgetter(*labels.combo), self.cols.combo_values()))

    def _keys(self, labels: Labels, combos: np.ndarray) -> list[tuple]:
        """The label keys of the reader's combinations `combos`."""
        every = self.cols.combo_values()
        return list(map(operator.itemgetter(*labels.combo),
                        map(every.__getitem__, combos.tolist())))


def _first_appearance(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `ids` in the order they first appear, and per item the
    position of its value among them."""
    uniq, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return uniq[order], rank[inverse]


def _present(ids: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of `ids` (in 0..size-1, or -1 for size-1), ascending, without a
    sort."""
    seen = np.zeros(size, bool)
    seen[ids] = True
    return np.flatnonzero(seen)


def _one_at_a_time(view: Listed | Native, labels: Labels, builder: TraceBuilder,
                   ) -> list[np.ndarray]:
    """The ids of each of `labels`' parts, per event, the fields taken one at a time."""
    return [builder.thread_tracks(view.field("pid"), view.field("tid")) if part == "track"
            else builder.intern(view.field(part)) for part in labels.parts]


def _picker(positions: list[int]) -> Callable[[list[Any]], list[Any]]:
    """The items at `positions` of a list, as a list (an itemgetter: no Python loop)."""
    if len(positions) == 1:
        return lambda items: [items[positions[0]]]
    get = operator.itemgetter(*positions)
    return lambda items: list(get(items))


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
    us = us.astype(np.float64, copy=False)  # (the abs of int64's least is itself, negative)
    ok = np.abs(us) < MAX_SLICE_US  # longer is damage; False for NaN
    return np.rint(np.where(ok, us, 0.0) * 1000.0).astype(np.int64), ok
