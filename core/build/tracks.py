"""Tracks: their keys (pid, tid or async lane), the metadata named for them, display order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from proftui.core.model.index import TRACK_KINDS
from proftui.core.model.naming import natural_key
from proftui.core.model.strings import StringInterner, json_text

THREAD, ASYNC_TRACK, PROCESS_TRACK, GLOBAL_TRACK = (TRACK_KINDS.index(k) for k in
                                                    ("thread", "async", "process", "global"))


@dataclass
class Meta:
    """What M events said of a process or thread."""

    name: str | None = None
    labels: str | None = None
    sort_index: int | None = None


def fill_meta(meta: Meta, other: Meta) -> None:
    """Take `other`'s fields where `meta` has none."""
    meta.name = meta.name if meta.name is not None else other.name
    meta.labels = meta.labels if meta.labels is not None else other.labels
    meta.sort_index = meta.sort_index if meta.sort_index is not None else other.sort_index


class TrackIds(dict):
    """Event keys (pid, tid) or (kind, pid, key) -> track id, adding unseen tracks.

    pids and tids are normalised first: "1890023232" and 1890023232 name the same thread (as
    they do in Chrome, where they become the same object key). When a profile joins several
    files, each file's pids are qualified by its group (rank or device): ``(group, pid)``.
    The dict itself caches event keys of the current file; `full` holds the tracks' keys.
    """

    def __init__(self) -> None:
        super().__init__()
        self.full: dict[tuple, int] = {}
        self.keys_in_order: list[tuple] = []
        self.group: str | None = None

    def set_group(self, group: str | None) -> None:
        """Qualify the pids of the events that follow with `group`."""
        self.group = group
        self.clear()

    def pid(self, value: Any) -> Any:
        """A pid as tracks and metadata are keyed: normalised, qualified by the group."""
        pid = norm_id(value)
        return pid if self.group is None or pid is None else (self.group, pid)

    def __missing__(self, key: tuple) -> int:
        if len(key) == 2:  # (pid, tid): a thread track
            full = (THREAD, self.pid(key[0]), norm_id(key[1]))
        else:
            full = (key[0], self.pid(key[1]), key[2])
        value = self[key] = self.of_full(full)
        return value

    def of_full(self, full: tuple) -> int:
        """The id of the track with this full key (pids already qualified)."""
        value = self.full.get(full)
        if value is None:
            value = self.full[full] = len(self.keys_in_order)
            self.keys_in_order.append(full)
        return value


def track_table(tracks: TrackIds, processes: dict[Any, Meta], threads: dict[tuple, Meta],
                strings: StringInterner) -> tuple[np.ndarray, dict]:
    """Tracks in display order (processes by sort index, then threads, async lanes, ...).

    Returns the order (display position -> track id) and the track and process columns.
    """
    keys = tracks.keys_in_order
    n = len(keys)
    s = strings
    kind = np.array([k[0] for k in keys], np.int8)
    pid_text = [json_text(split_pid(k[1])[1]) for k in keys]
    sub = [k[2] for k in keys]
    proc_meta = {pid: m for pid, m in processes.items()}
    rows = []
    for t, (knd, pid, key) in enumerate(keys):
        pmeta = proc_meta.get(pid, Meta())
        psort = pmeta.sort_index if pmeta.sort_index is not None else 0
        if knd == THREAD:
            tmeta = threads.get((pid, key), Meta())
            tsort = tmeta.sort_index if tmeta.sort_index is not None else 0
            name = tmeta.name if tmeta.name is not None else default_thread_name(key)
            order_key: tuple = (tsort, sort_token(key))
        elif knd == ASYNC_TRACK:
            cat, lane = key
            name = s.texts[cat] or "async"
            order_key = (name, lane)
            if lane:
                name = f"{name} #{lane + 1}"
        elif knd == PROCESS_TRACK:
            name, order_key = "process-wide", ()
        else:
            name, order_key = "global", ()
        group, inner = split_pid(pid)
        rows.append((knd == GLOBAL_TRACK, natural_key(group), psort, sort_token(inner), knd,
                     order_key, t, name))
    rows.sort()
    order = np.array([r[6] for r in rows], np.int64).reshape(-1)
    pids = sorted({k[1] for k in keys if k[0] != GLOBAL_TRACK},
                  key=lambda p: (natural_key(split_pid(p)[0]),
                                 (proc_meta.get(p) or Meta()).sort_index or 0,
                                 sort_token(split_pid(p)[1])))
    pindex = {p: i for i, p in enumerate(pids)}
    process_columns = {
        "pid": np.array([s[json_text(split_pid(p)[1])] for p in pids], np.int32),
        "group": np.array([s[split_pid(p)[0]] for p in pids], np.int32),
        "name": np.array([s[(proc_meta.get(p) or Meta()).name or ""] for p in pids],
                         np.int32),
        "labels": np.array([s[(proc_meta.get(p) or Meta()).labels or ""] for p in pids],
                           np.int32),
        "sort_index": np.array([(proc_meta.get(p) or Meta()).sort_index or 0
                                for p in pids], np.int64),
    }
    track_columns = {
        "kind": kind[order] if n else np.zeros(0, np.int8),
        "process": np.array([pindex.get(keys[t][1], -1) for t in order], np.int32),
        "pid": np.array([s[pid_text[t]] for t in order], np.int32),
        "tid": np.array([s[json_text(sub[t])] if kind[t] == THREAD else 0 for t in order],
                        np.int32),
        "name": np.array([s[r[7]] for r in rows], np.int32),
        "sort_index": np.array([_thread_sort(threads, keys[r[6]]) for r in rows], np.int64),
        "processes": process_columns,
    }
    return order, track_columns


def split_pid(pid: Any) -> tuple[str, Any]:
    """(group, pid) of a track's pid ("" when the profile has a single group)."""
    if isinstance(pid, tuple):
        return pid[0], pid[1]
    return "", pid


def _thread_sort(threads: dict[tuple, Meta], key: tuple) -> int:
    meta = threads.get(key[1:]) if key[0] == THREAD else None
    return meta.sort_index if meta is not None and meta.sort_index is not None else 0


def norm_id(value: Any) -> Any:
    """A pid or tid as a key: integers as int (also when written as a decimal string)."""
    # ASCII only: str.isdigit() also accepts digits int() refuses ("²").
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20 and (
            value == "0" or value[0] != "0"):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return token(value)


def hashable(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float))


def token(value: Any) -> Any:
    """A pid/tid/name value usable as a key: JSON scalars as they are, others as text."""
    return value if hashable(value) else json_text(value)


def id_token(value: Any) -> str:
    """Flow and async ids keyed by their exact text (ints beyond 2^53 stay exact)."""
    if isinstance(value, dict):  # {"local": x} / {"global": x}
        return "|".join(f"{k}:{json_text(v)}" for k, v in sorted(value.items()))
    return json_text(value)


def sort_token(value: Any) -> tuple:
    """Numbers before text, numbers numerically."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    text = json_text(value)
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0, text)


def default_thread_name(tid: Any) -> str:
    return "" if tid is None else f"Thread {json_text(tid)}"
