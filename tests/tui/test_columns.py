"""Column layouts: the name first by default, a chosen order and hidden columns applied to a
table (new columns where the file puts them), remembered in a settings file that may be
damaged or not writable."""

from __future__ import annotations

import json

import numpy as np

from proftui.core.model.table import Column, Table
from proftui.tui.text.widths import fit_widths, share_widths
from proftui.tui.widgets.columns import (
    ColumnLayout,
    ColumnSettings,
    arrange,
    column_keys,
    layout_of,
    settings_path,
    shown_columns,
)


def _table(kind: str, headers: list[str]) -> Table:
    columns = [Column(h, h, "", "text" if "Name" in h or "Type" in h else "number",
                      np.zeros(1)) for h in headers]
    return Table(kind, "t.csv", columns, 1)


OP_SUMMARY = ["Device_id", "Task ID", "Op Name", "OP Type", "Task Duration(us)", "Ratio"]


def test_the_name_column_comes_first_and_program_columns_stay_hidden() -> None:
    table = _table("op_summary", OP_SUMMARY)
    assert arrange(table) == [2, 0, 1, 3, 4, 5]
    assert arrange(table, program_hidden={"Task ID"}) == [2, 0, 3, 4, 5]
    other = _table("memory_record", ["Component", "Timestamp(us)"])  # no name known: as is
    assert arrange(other) == [0, 1]


def test_a_layout_orders_and_hides_and_places_new_columns_after_their_neighbour() -> None:
    table = _table("op_summary", OP_SUMMARY)
    layout = ColumnLayout(("Op Name", "Task Duration(us)", "OP Type", "Device_id"),
                          frozenset({"Device_id"}))
    order = arrange(table, (), layout)
    # Task ID (not named) follows Device_id as by default; Ratio follows Task Duration.
    assert order == [2, 4, 5, 3, 0, 1]
    assert shown_columns(table, order, layout) == [2, 4, 5, 3, 1]
    # The same choice, said back: the layout of what is shown.
    again = layout_of(table, order, {0})
    assert again is not None and again.hidden == {"Device_id"}
    assert arrange(table, (), again) == order
    # The default order with nothing hidden is no layout at all.
    assert layout_of(table, arrange(table), set()) is None
    # Everything hidden: one column stays.
    everything = ColumnLayout(tuple(OP_SUMMARY), frozenset(OP_SUMMARY))
    assert shown_columns(table, arrange(table, (), everything), everything) == [0]


def test_repeated_headers_get_keys_of_their_own() -> None:
    table = _table("x", ["A", "B", "A", "A"])
    assert column_keys(table) == ["A", "B", "A #2", "A #3"]


def test_settings_are_written_read_back_and_merged(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    path = settings_path()
    assert path == tmp_path / "cfg" / "proftui" / "columns.json"
    first = ColumnSettings.load()
    assert first.layouts == {} and first.note is None
    other = ColumnSettings.load()  # a second app, started before the first chose
    assert first.put("op_summary", ColumnLayout(("Op Name", "Ratio"), frozenset({"Ratio"})))\
        is None
    assert other.put("ops", ColumnLayout(("Name", "Total"))) is None
    data = json.loads(path.read_text())
    assert data == {"version": 1, "tables": {
        "op_summary": {"order": ["Op Name", "Ratio"], "hidden": ["Ratio"]},
        "ops": {"order": ["Name", "Total"], "hidden": []}}}
    again = ColumnSettings.load()
    assert again.get("op_summary") == ColumnLayout(("Op Name", "Ratio"), frozenset({"Ratio"}))
    assert again.put("op_summary", None) is None  # back to the default: forgotten
    assert set(json.loads(path.read_text())["tables"]) == {"ops"}
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".columns.")]


def test_a_damaged_or_unreadable_settings_file_is_ignored_with_a_note(tmp_path) -> None:
    path = tmp_path / "columns.json"
    for text in ("{not json", "[1, 2]", '{"tables": {"ops": {"order": "Name"}}}',
                 '{"tables": {"ops": 3}}', "\udcff"):
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        settings = ColumnSettings.load(path)
        assert settings.layouts == {} and "are damaged (" in settings.note, text
    # Choosing again replaces the damaged file.
    assert settings.put("ops", ColumnLayout(("Name",))) is None
    assert ColumnSettings.load(path).get("ops") == ColumnLayout(("Name",))
    folder = tmp_path / "a_folder.json"
    folder.mkdir()
    settings = ColumnSettings.load(folder)
    assert settings.layouts == {} and "not read (" in settings.note


def test_a_settings_file_that_cannot_be_written_keeps_the_choice_for_the_session(
        tmp_path) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    settings = ColumnSettings.load(blocker / "proftui" / "columns.json")
    problem = settings.put("ops", ColumnLayout(("Name",)))
    assert problem is not None and "this session only" in problem
    assert settings.get("ops") == ColumnLayout(("Name",))


def test_widths_fit_share_or_scroll() -> None:
    assert share_widths([16, 56, 6], 90) == [16, 56, 6]
    # All that they need when that fits.
    assert fit_widths([40, 10, 10], [False, True, True], 80) == [40, 10, 10]
    # Numbers keep theirs, the text shares what is left when that makes it fit.
    assert fit_widths([70, 10, 10], [False, True, True], 60) == [40, 10, 10]
    assert fit_widths([70, 30, 10, 10], [False, False, True, True], 60) == [20, 20, 10, 10]
    # Not when the name would get less than a quarter of the room: 46 columns of a
    # kernel_details at 250 cells cut the names to 13.
    many = [40] + [20] * 10 + [5] * 20
    assert fit_widths(many, [False] * 11 + [True] * 20, 250)[0] == 40
    # Else it scrolls: the first column at most a third, other text at most 48 (+1).
    assert fit_widths([90, 80] + [11] * 10, [False, False] + [True] * 10, 90) == (
        [30, 49] + [11] * 10)
    assert fit_widths([9, 80] + [11] * 10, [True, False] + [True] * 10, 90) == (
        [9, 49] + [11] * 10)
