"""The export dialog: events of the selected range, a pane as shown, asking before
overwriting, and what the status line reports."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import Input, RadioSet, Select
from tui_support import settle

from proftui.core.ops.window import slices_in_window
from proftui.tui.app import ProftuiApp
from proftui.tui.screens.export_dialog import ExportDialog, free_name
from proftui.tui.widgets.table import TableView
from proftui.tui.widgets.timeline import Timeline

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kineto_demo.pt.trace.json"


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    """Exports named without a folder land in the test's own."""
    monkeypatch.chdir(tmp_path)




def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


async def _export(app, pilot, path: Path, what: str = "events", clock: str = "relative"
                  ) -> None:
    await pilot.press("e")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, ExportDialog)
    if what != "events":
        radios = dialog.query_one(RadioSet)
        button = next(b for b in radios.query("RadioButton") if b.name == what)
        button.value = True
    dialog.query_one("#export-clock", Select).value = clock
    field = dialog.query_one("#export-path", Input)
    field.value = str(path)
    await pilot.click("#export-go")
    await settle(app, pilot)


async def test_the_dialog_in_one_session(tmp_path) -> None:
    """One session, checks in turn: at 80x24 the dialog opens on the choice and arrows leave
    the file name (Esc cancels it); then at 120x44 an existing file is overwritten only when
    confirmed (the whole trace: nothing selected yet), a slice selected exports the whole
    trace with times from the capture start or on the profiler's clock, the Ops pane is
    exported as shown, and last the events of a selected range."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await _the_dialog_opens_on_the_choice_and_arrows_leave_the_file_name(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ExportDialog), "Esc did not cancel the dialog"
        assert not list(tmp_path.glob("*.csv")), "a cancelled dialog wrote a file"
        await pilot.resize_terminal(120, 44)
        await pilot.press("1")
        await settle(app, pilot)
        assert app.focused is app.query_one(Timeline)
        await _an_existing_file_is_overwritten_only_when_confirmed(app, pilot, tmp_path)
        await _times_from_the_capture_start_or_on_the_profilers_clock(app, pilot, tmp_path)
        await _the_ops_pane_as_shown(app, pilot, tmp_path)
        await pilot.press("1")
        assert app.focused is app.query_one(Timeline)
        await _events_of_the_range_are_written_and_reported(app, pilot, tmp_path)


async def _events_of_the_range_are_written_and_reported(app, pilot, tmp_path) -> None:
    timeline = app.query_one(Timeline)
    await pilot.press("enter", "r")  # the range of a ProfilerStep
    lo, hi = timeline.range
    target = tmp_path / "range.csv"
    await _export(app, pilot, target)
    rows = _read(target)
    expected = slices_in_window(app.index, lo, hi)
    assert len(rows) - 1 == len(expected)
    names = sorted(r[0] for r in rows[1:])
    assert names == sorted(app.index.slice_name(int(i)) for i in expected)
    status = str(app.query_one("#status").render())
    # the window named where the line has room (here the test's long folder takes it)
    assert app._status_text.startswith(f"Wrote {len(expected)} rows (range ")
    assert status.startswith(f"Wrote {len(expected)} rows") and "range.csv" in status


async def _times_from_the_capture_start_or_on_the_profilers_clock(app, pilot, tmp_path):
    from proftui.core.ops.iterations import capture_start_ns

    await pilot.press("enter")  # a slice selected: the window is the whole trace
    await _export(app, pilot, tmp_path / "relative.csv")
    await _export(app, pilot, tmp_path / "absolute.csv", clock="absolute")
    relative, absolute = _read(tmp_path / "relative.csv"), _read(tmp_path / "absolute.csv")
    assert relative[0][4] == "start_from_capture(us)"
    assert absolute[0][4] == "start_profiler_clock(us)"
    assert len(relative) == len(absolute) > 1
    start_us = capture_start_ns(app.index) / 1000  # this trace's clock is the file's
    for before, after in zip(relative[1:], absolute[1:]):
        assert float(after[4]) == pytest.approx(float(before[4]) + start_us)


async def _an_existing_file_is_overwritten_only_when_confirmed(app, pilot, tmp_path) -> None:
    target = tmp_path / "mine.csv"
    target.write_text("precious\n")
    await pilot.press("e")
    await pilot.pause()
    dialog = app.screen
    dialog.query_one("#export-path", Input).value = str(target)
    await pilot.click("#export-go")
    await pilot.pause()
    assert isinstance(app.screen, ExportDialog)  # still asking
    assert "exists" in str(dialog.query_one("#export-warning").render())
    assert target.read_text() == "precious\n"
    await pilot.pause(0.5)  # a button ignores a second press while it shows the first
    await pilot.click("#export-go")  # the second press confirms
    await settle(app, pilot)
    assert not isinstance(app.screen, ExportDialog)
    assert target.read_text() != "precious\n"
    # No range: the whole trace, its slices and its instant events.
    events = app.index.n_slices + len(app.index.arrays["instants.ts"])
    assert len(_read(target)) - 1 == events


async def _the_ops_pane_as_shown(app, pilot, tmp_path) -> None:
    await pilot.press("2")
    await settle(app, pilot)
    await pilot.press("slash", *"Count>=16", "enter")
    view = app.query_one("#ops-table", TableView)
    target = tmp_path / "ops.csv"
    await _export(app, pilot, target, what="pane")
    rows = _read(target)
    assert rows[0] == [view.table.columns[i].header for i in view.shown_columns]
    shown = [view.table.columns[0].values[r] for r in view.order]
    assert [r[0] for r in rows[1:]] == shown
    counts = np.array([float(r[1]) for r in rows[1:]])
    assert len(counts) and (counts >= 16).all()


async def _the_dialog_opens_on_the_choice_and_arrows_leave_the_file_name(app, pilot) -> None:
    """The dialog opens with the focus on what to export: arrows and Enter choose there, the
    file name stays as it was; Tab reaches the file name."""
    await pilot.press("2")  # a pane with a table: three choices
    await settle(app, pilot)
    await pilot.press("e")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, ExportDialog)
    radios = dialog.query_one("#export-what", RadioSet)
    path = dialog.query_one("#export-path", Input)
    name = path.value
    assert app.focused is radios and name
    await pilot.press("down", "down", "enter", "up")
    await pilot.pause()
    assert radios.pressed_button is not None and radios.pressed_button.name == "pane"
    assert path.value == name and app.focused is radios
    for _ in range(6):  # Tab goes on through the fields to the file name
        if app.focused is path:
            break
        await pilot.press("tab")
    assert app.focused is path and path.value == name


def test_free_name_never_picks_an_existing_file(tmp_path) -> None:
    (tmp_path / "proftui-export.csv").write_text("")
    (tmp_path / "proftui-export-1.csv").write_text("")
    assert free_name("proftui-export.csv") == "proftui-export-2.csv"



async def test_at_80x24_the_dialog_shows_whole_and_the_status_keeps_the_file_name(
        tmp_path) -> None:
    """On a short screen the fields drop their borders, so that the title and every choice
    show without scrolling; after the export the status line gives up the window and the
    folders before the file's name."""
    app = ProftuiApp(str(SAMPLE.parent / "torch_npu"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")  # the Tables pane: the third choice names its table
        await settle(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportDialog)
        box = dialog.query_one("Vertical")
        assert box.max_scroll_y == 0 and box.outer_size.height <= 24
        title = dialog.query_one("Label")
        assert str(title.render()).startswith("Export to CSV: ")
        for button in dialog.query("RadioButton"):
            label = str(button.label)
            assert button.content_region.width >= len(label) + 4, label
        assert str(list(dialog.query("RadioButton"))[-1].label).startswith(
            "The pane's table as shown: kernel_details")
        await pilot.press("escape")
        await pilot.pause()
        folder = tmp_path / "a-folder-with-a-long-name-to-say-where-exports-are-kept"
        folder.mkdir()
        await _export(app, pilot, folder / "events-of-the-whole-trace.csv")
        status = str(app.query_one("#status").render())
        assert status.rstrip().endswith("events-of-the-whole-trace.csv"), status
        assert status.strip().startswith("Wrote ")
