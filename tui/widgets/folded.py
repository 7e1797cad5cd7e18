"""The timeline's folded view: steps side by side, each a band of rows drawn from its own start.

A band holds the rows of its group's chosen tracks (:func:`fold_tracks`), the same lines the
timeline draws, each drawn `shift` ns earlier: its step's start. The painter asks each line
for its shift as it asks a rank's aligned tracks for theirs, so the slices are painted by the
same code. The window is then in time from each step's start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from proftui.core.model.index import TraceIndex
from proftui.core.ops.fold import Band, Fold
from proftui.core.ops.roles import device_tracks
from proftui.core.query.rows import RowIndex
from proftui.tui.text.format import fmt_duration
from proftui.tui.widgets.lines import _S, Lines


@dataclass(frozen=True)
class SavedView:
    """The normal view folding left: window, cursor, lines scrolled and focused."""

    start_ns: int
    end_ns: int
    cursor_ns: int
    top_line: int
    focus_line: int


@dataclass(frozen=True)
class Folded:
    """A fold shown: its bands, their lines, per line its shift (ns) and band, per band its
    first line, and the view to go back to."""

    fold: Fold
    lines: Lines
    shift: np.ndarray
    band: np.ndarray
    first: np.ndarray
    saved: SavedView

    def band_of(self, line: int) -> Band | None:
        if not 0 <= line < len(self.band):
            return None
        return self.fold.bands[int(self.band[line])]


def group_of_tracks(index: TraceIndex) -> np.ndarray:
    """Each track's group name (rank or device; "" for a track of no process)."""
    a = index.arrays
    process = a["tracks.process"].astype(np.int64)
    groups = np.array([index.strings[g] for g in a["processes.group"]] or [""], dtype=object)
    return np.where(process >= 0, groups[np.maximum(process, 0)], "")


def fold_tracks(index: TraceIndex, rows: RowIndex, group: str, order: Sequence[int] = (),
                pinned: Sequence[int] = (), hidden: Sequence[int] = ()) -> list[int]:
    """The tracks a band of `group` shows: its pinned tracks when some are, else its device
    tracks, else all its tracks with slices; hidden ones left out, in the order of `order`
    (the timeline's), then by id."""
    n_rows = np.diff(rows.track_first_row.astype(np.int64))
    mine = (group_of_tracks(index) == group) & (n_rows > 0)
    mine[list(hidden)] = False
    chosen = np.zeros_like(mine)
    chosen[[t for t in pinned if mine[t]]] = True
    if not chosen.any():
        chosen = mine & device_tracks(index)
    if not chosen.any():
        chosen = mine
    place = {t: k for k, t in enumerate(dict.fromkeys(order))}
    return sorted(np.flatnonzero(chosen).tolist(), key=lambda t: (place.get(t, len(place)), t))


def fold_lines(index: TraceIndex, rows: RowIndex, fold: Fold,
               tracks: dict[str, list[int]]) -> tuple[Lines, np.ndarray, np.ndarray, np.ndarray]:
    """The lines of the bands (each its group's `tracks`, every row of each), with per line
    its shift and band, and per band its first line."""
    first_row = rows.track_first_row.astype(np.int64)
    track_process = index.arrays["tracks.process"].astype(np.int64)
    track, item, titled, band, firsts = [], [], [], [], []
    for k, b in enumerate(fold.bands):
        firsts.append(len(item))
        for t in tracks.get(b.group, []):
            n = int(first_row[t + 1] - first_row[t])
            track += [t] * n
            item += range(int(first_row[t]), int(first_row[t]) + n)
            titled += [True] + [False] * (n - 1)
            band += [k] * n
    track_a = np.array(track, np.int64)
    lines = Lines(index, np.full(len(track), _S, np.int8), track_process[track_a], track_a,
                  np.array(item, np.int64), np.array(titled, bool))
    band_a = np.array(band, np.int64)
    starts = np.array([b.start_ns for b in fold.bands], np.int64)
    return lines, starts[band_a] if len(band_a) else band_a, band_a, np.array(firsts, np.int64)


def band_label_forms(band: Band, named: bool) -> list[str]:
    """A band's label, fullest first: its group (`named`: when the fold has several), its step,
    its length, how far from its group's median, and its mark; then shorter."""
    who = f"{band.group} " if named and band.group else ""
    dur = fmt_duration(band.dur_ns)
    vs = "" if math.isnan(band.vs_median) else f" ({band.vs_median:+.0f}%)"
    mark = f" {band.mark}" if band.mark else ""
    short_mark = f" {band.mark.split(',')[0]}" if band.mark else ""
    forms = [f"{who}#{band.number} {dur}{vs}{mark}", f"{who}#{band.number} {dur}{vs}{short_mark}",
             f"{who}#{band.number} {dur}{vs}", f"{who}#{band.number} {dur}",
             f"#{band.number} {dur}", f"#{band.number}"]
    return list(dict.fromkeys(forms))


def fold_sentence(fold: Fold) -> str:
    """What the status line says on folding: which steps, how many left out, the keys."""
    if fold.number is not None:
        what = f"step {fold.number} of {len(fold.bands)} ranks"
    else:
        who = f" of {fold.group}" if fold.group else ""
        what = f"{len(fold.bands)} steps{who}"
    rest = (f" ({fold.left_out} more not shown: the slowest, the median and the furthest from "
            f"it are)" if fold.left_out else "")
    return f"Folded: {what}, each from its own start{rest}. Enter opens a step, Esc goes back."
