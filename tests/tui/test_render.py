"""Painters: cells to strips (labels, shades, selection, cursor), sparklines, the ruler."""

from __future__ import annotations

import json
import random

import numpy as np
from textual.strip import Strip

from proftui.core import load_trace
from proftui.core.ops.roles import device_tracks
from proftui.core.query.rows import build_rows
from proftui.themes import CONTRAST, DARK, LIGHT, THEMES, luminance
from proftui.tui.widgets.lines import TrackChoices, build_lines
from proftui.tui.widgets.render import (
    FULL,
    IDLE,
    MARK,
    StyleCache,
    cell_classes,
    fmt_tick,
    nice_step,
    paint_counter,
    paint_instants,
    paint_slice_rows,
    ruler_text,
)
from proftui.tui.widgets.render import (
    LIGHT as LIGHT_CELL,
)

NAMES = {0: "alpha", 1: "beta_kernel_with_a_long_name", 2: "\x1b[31mred\x07"}


def _paint(owner, busy, **kw):
    owner = np.array(owner, np.int64)
    busy = np.array(busy, float)
    marked = kw.pop("marked", None)
    row = paint_slice_rows(owner[None], busy[None], (np.maximum(owner, 0) % len(DARK.slices))[None],
                           NAMES.__getitem__, DARK, StyleCache(),
                           marked=None if marked is None else marked[None], **kw)[0]
    return Strip(row, len(owner))


def _bg(segment) -> str:
    return segment.style.bgcolor.triplet.hex if segment.style.bgcolor else ""


def test_cell_classes_follow_busy_fraction() -> None:
    owner = np.array([-1, 3, 3, 3, 3, 3])
    busy = np.array([0.0, 0.0, 0.01, 0.2, 0.8, 1.0])
    assert cell_classes(owner, busy).tolist() == [IDLE, MARK, MARK, LIGHT_CELL, FULL, FULL]


def test_full_runs_are_labelled_once_per_slice() -> None:
    strip = _paint([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, -1, -1], [1.0] * 12 + [0, 0])
    assert strip.text == " alpha   be…  "
    assert strip.cell_length == 14
    first = next(iter(strip))
    assert _bg(first) == DARK.slices[0]


def test_partial_cells_show_shades_in_the_owner_colour() -> None:
    strip = _paint([-1, 0, 0, 0, 1, -1], [0, 0.1, 0.3, 0.6, 0.01, 0])
    assert strip.text == " ░▒▓▏ "
    colours = [seg.style.color.triplet.hex for seg in strip if seg.text.strip()]
    assert colours == [DARK.slices[0]] * 3 + [DARK.slices[1]]


def test_selection_cursor_and_matches() -> None:
    strip = _paint([0] * 6 + [1] * 6, [1.0] * 12, selected=1, cursor_cell=2,
                   marked=np.array([True] * 6 + [False] * 6))
    assert strip.text == " alpha beta…"
    segments = list(strip)
    # The cursor's cell keeps its letter but takes the cursor colour as background.
    cursor = [s for s in segments if _bg(s) == DARK.cursor]
    assert [s.text for s in cursor] == ["l"]
    assert all(s.style.underline for s in segments[:3])  # the match is underlined
    assert _bg(segments[-1]) == DARK.selection and segments[-1].style.bold


def test_trace_text_is_escaped() -> None:
    strip = _paint([2] * 30, [1.0] * 30)
    assert "\x1b" not in strip.text and "\x07" not in strip.text
    assert "\\x1b[31mred\\x07" in strip.text


def test_sparkline_and_instants() -> None:
    values = np.array([0.0, 5.0, 10.0, np.nan])
    assert paint_counter(values, 0.0, 10.0, DARK, StyleCache()).text == "▁▅█ "
    assert paint_instants(np.array([0, 1, 3]), DARK, StyleCache()).text == " │◆"


def test_ruler_steps_and_labels() -> None:
    assert nice_step(1.0) == 20 and nice_step(1000.0, 10) == 10_000
    labels, ticks = ruler_text(0, 100_000_000, 100, 0)  # 100 ms on 100 cells: 20 ms steps
    assert labels.startswith("0") and "20 ms" in labels and "80 ms" in labels
    assert ticks.count("┬") == 5 and len(labels) == len(ticks) == 100
    # 1 us on 50 cells, relative to an origin 500 ns before: steps of 500 ns.
    labels, _ = ruler_text(1_000_500, 1_001_500, 50, 1_000_000)
    assert labels.startswith("500 ns") and "1 us" in labels
    # Ticks far from the origin keep enough digits to differ.
    labels, _ = ruler_text(162_994_000_000, 162_995_000_000, 100, 0)
    assert "162.9942 s" in labels and "162.9944 s" in labels
    assert fmt_tick(1_500_000, 500_000) == "1.5 ms" and fmt_tick(40_000_000, 20_000_000) == "40 ms"
    # A range's label keeps its cells: no tick label is cut by it ("300 m[141 ms]")
    labels, _ = ruler_text(0, 100_000_000, 100, 0, keep_clear=(18, 30))
    assert labels[18:30].strip() == "" and "20 ms" not in labels and "40 ms" in labels


def test_palettes_keep_slice_colours_apart_and_labels_readable() -> None:
    for palette in (DARK, LIGHT, CONTRAST):
        assert len(set(palette.slices)) == len(palette.slices) >= 10
        for colour in palette.slices:
            label = palette.label_colour(colour)
            assert abs(luminance(label) - luminance(colour)) > 0.35
        # Slices stand out from the background in every theme.
        assert min(abs(luminance(c) - luminance(palette.background))
                   for c in palette.slices) > 0.15
    assert set(THEMES) == {"proftui-dark", "proftui-light", "proftui-contrast"}
    assert DARK.colour_index("aten::conv2d") == DARK.colour_index("aten::conv2d")
    good = DARK.reserved_index("good")
    assert good is not None and DARK.colour_at(good) == "#007d00"


def test_lines_follow_layout_state(tmp_path) -> None:
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}},
              {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
              {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": 5},
              {"ph": "X", "name": "k", "pid": 2, "tid": 9, "ts": 0, "dur": 3},
              {"ph": "C", "name": "mem", "pid": 2, "ts": 0, "args": {"MB": 1}},
              {"ph": "i", "name": "mark", "pid": 2, "tid": 9, "ts": 2, "s": "t"}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    index = load_trace(str(path), use_cache=False)
    rows = build_rows(index)
    state = TrackChoices.empty()
    kinds = [(line.kind, line.label) for line in build_lines(index, rows, state)]
    assert kinds == [("process", "host (1)"), ("slices", "Thread 1"), ("slices", ""),
                     ("process", "Process 2"), ("slices", "Thread 9"),
                     ("instants", "  instants"), ("counter", "mem MB")] or kinds[:3] == [
        ("process", "host (1)"), ("slices", "Thread 1"), ("slices", "")]
    state.collapsed.add(0)
    lines = build_lines(index, rows, state)
    assert [line.kind for line in lines if line.process == 0] == ["process"]
    k_track = int(index.arrays["slices.track"][2])
    state.pinned.append(k_track)
    assert build_lines(index, rows, state)[0].track == k_track
    state.hidden.add(k_track)
    assert all(line.track != k_track for line in build_lines(index, rows, state))


def _reference_lines(index, rows, state) -> list[tuple]:
    """The lines by a plain loop over tracks (what `build_lines` computes vectorised)."""
    a = index.arrays
    out: list[tuple] = []

    several = len(a["processes.pid"]) > 1

    def track_lines(t: int, p: int, pinned: bool = False) -> None:
        label = index.track_label(t)
        if pinned and several and p >= 0:  # no longer under its header: it names its process
            label = f"{index.process_label(p, pid=False)} · {label}"
        n_rows = int(rows.track_first_row[t + 1] - rows.track_first_row[t])
        for depth in range(n_rows):
            out.append(("slices", p, t, int(rows.track_first_row[t]) + depth,
                        label if depth == 0 else ""))
        if (a["instants.track"] == t).any():
            out.append(("instants", p, t, t, label if n_rows == 0 else "  instants"))
        for series in np.flatnonzero(a["counters.series_track"] == t).tolist():
            out.append(("counter", p, t, series,
                        index.strings[a["counters.series_name"][series]]))

    track_process = a["tracks.process"].tolist()
    for t in state.pinned:
        if t not in state.hidden:
            track_lines(t, track_process[t], pinned=True)
    processes = list(range(len(a["processes.pid"])))
    if state.device_first:  # those with device work first (one group here)
        works = [track_process[t] for t in np.flatnonzero(device_tracks(index)).tolist()
                 if rows.track_first_row[t + 1] > rows.track_first_row[t]]
        processes.sort(key=lambda p: p not in works)
    for p in processes:
        tracks = [t for t in range(index.n_tracks) if track_process[t] == p
                  and t not in state.hidden and t not in state.pinned]
        if tracks:
            out.append(("process", p, -1, -1, index.process_label(p)))
            if p not in state.collapsed:
                for t in tracks:
                    track_lines(t, p)
    for t in range(index.n_tracks):
        if track_process[t] < 0 and t not in state.hidden and t not in state.pinned:
            track_lines(t, -1)
    return out


def test_lines_match_a_loop_over_tracks(tmp_path) -> None:
    rng = random.Random(5)
    events = [{"ph": "X", "name": f"n{i}", "pid": rng.randint(1, 4), "tid": rng.randint(1, 5),
               "ts": rng.randint(0, 50), "dur": rng.randint(1, 30)} for i in range(300)]
    events += [{"ph": "C", "name": f"c{i}", "pid": rng.randint(1, 4), "ts": i,
                "args": {"a": i, "b": 2}} for i in range(6)]
    events += [{"ph": "i", "name": "m", "pid": rng.randint(1, 5), "tid": rng.randint(1, 7),
                "ts": i, "s": rng.choice("tpg")} for i in range(20)]
    events += [{"ph": "b", "name": "io", "cat": "a", "id": i, "pid": 3, "ts": i}
               for i in range(3)]
    events += [{"ph": "X", "name": f"k{i}", "cat": "kernel", "pid": 4, "tid": 9, "ts": 10 * i,
                "dur": 5} for i in range(3)]  # a device stream in the last process
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    index = load_trace(str(path), use_cache=False)
    rows = build_rows(index)
    for _ in range(40):
        tracks, procs = list(range(index.n_tracks)), list(range(len(index.arrays["processes.pid"])))
        state = TrackChoices(set(rng.sample(procs, rng.randint(0, 2))),
                            rng.sample(tracks, rng.randint(0, 3)),
                            set(rng.sample(tracks, rng.randint(0, 3))), rng.random() < 0.7)
        lines = build_lines(index, rows, state)
        got = [(ln.kind, ln.process, ln.track, ln.item, ln.label) for ln in lines]
        assert got == _reference_lines(index, rows, state), state
        for n, want in enumerate(got):
            kind, process, track, item, _ = want
            assert lines.find(kind, process, track, item) == got.index(want)


def test_range_cells_take_the_range_background() -> None:
    strip = _paint([-1, -1, -1, -1, 0, 0], [0, 0, 0, 0, 0.3, 0.3], range_cells=(1, 5))
    backgrounds = []
    for seg in strip:
        backgrounds += [_bg(seg)] * len(seg.text)
    assert backgrounds == [DARK.background, DARK.range, DARK.range, DARK.range, DARK.range,
                           DARK.background]


def test_rows_painted_together_are_painted_as_each_alone() -> None:
    """Slice rows painted in one call (as a frame paints its lines) come out as each row
    painted alone: a slice filling the end of a row and the start of the next is labelled
    in each, and the cursor, range, selection and marks apply to every row."""
    rng = np.random.default_rng(7)
    owner = np.where(rng.random((6, 40)) < 0.2, -1, rng.integers(0, 3, (6, 40)))
    owner[0, 30:] = owner[1, :12] = 1  # one slice across the end of a row and the next
    owner[2] = 2
    busy = np.where(rng.random((6, 40)) < 0.6, 1.0, rng.random((6, 40)))
    busy[0, 30:] = busy[1, :12] = 1.0
    colours = np.maximum(owner, 0) % len(DARK.slices)
    marked = owner == 0
    for kw in ({}, {"cursor_cell": 5, "range_cells": (3, 33), "selected": 2},
               {"cursor_cell": 35, "selected": 1}):
        together = paint_slice_rows(owner, busy, colours, NAMES.__getitem__, DARK,
                                    StyleCache(), marked=marked, **kw)
        for row in range(len(owner)):
            alone = _paint(owner[row], busy[row], marked=marked[row], **kw)
            assert together[row] == list(alone)
        assert "".join(s.text for s in together[1]).startswith(" beta_kerne")


def test_the_rulers_last_label_is_whole() -> None:
    """A label that would run past the window's edge ends at it, whole, beside its tick (at
    200 columns "400" was left of "400 ms")."""
    from proftui.tui.widgets.render import ruler_text

    for width in range(150, 176):
        for start in (0, -8_000_000, -15_000_000):
            labels, ticks = ruler_text(start, start + 415_919_000, width, 0)
            assert len(labels) == width
            words = labels.split()
            assert words[0] == "0" and all(unit == "ms" for unit in words[2::2]), labels
            assert all(word.isdigit() for word in words[1::2]), labels
    labels, ticks = ruler_text(-15_000_000, 400_919_000, 170, 0)  # was "…  4"
    assert labels.endswith("400 ms") and ticks.rindex("┬") > 170 - len("400 ms")
