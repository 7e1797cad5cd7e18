"""Conformance: the Tables pane on the 2-rank torch_npu capture of ../shared/corpus
(torch_npu_2rank/text_level1): each table's title names its rank, and kernel_details (46
columns) scrolls sideways to its last column with the kernel names kept on screen.

Runs only where the corpus exists."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from proftui.core.tables.query import format_cell
from proftui.tui.app import ProftuiApp
from proftui.tui.panes.tables import TablesPane

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
TEXT = CORPUS / "torch_npu_2rank" / "text_level1"
pytestmark = pytest.mark.skipif(not TEXT.is_dir(), reason="../shared/corpus not present")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tui"))


async def test_kernel_details_of_rank_1_scrolls_to_its_last_column(tmp_path, monkeypatch):
    from tui_support import press_until, settle

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    app = ProftuiApp(str(TEXT))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        pane = app.query_one(TablesPane)
        assert {t.group for t in pane.tables} == {"rank 0", "rank 1"}
        await press_until(app, pilot, "right_square_bracket", lambda: (
            pane.tables[pane.current].kind, pane.tables[pane.current].group) == (
                "kernel_details", "rank 1"))
        title = str(app.query_one("#tables-title").render())
        assert title.startswith("[kernel_details rank 1]")
        assert "next: l2_cache rank 1" in title
        view = pane.table_view()
        table = view.table
        assert len(table.columns) == 46
        # a page of columns a key press (> or shift+right)
        await press_until(app, pilot, "greater_than_sign",
                          lambda: view.column == len(view.shown_columns) - 1,
                          limit=len(table.columns))
        await pilot.press("right")  # past the last: stays
        last = table.columns[view.shown_columns[-1]]
        assert view.column == len(view.shown_columns) - 1
        header = view.render_line(0).text
        assert header.startswith("Name ") and header.rstrip().endswith(last.header)
        await pilot.press("S")  # by it: the rows with a value first
        read = 0
        for y in range(1, view.body_height + 1):
            row = int(view.order[view.top + y - 1])
            line = view.render_line(y).text
            assert line.startswith(str(table.find("Name").values[row])[:10])
            cell = format_cell(last, last.values[row]).strip()
            if cell:
                assert line.rstrip().endswith(" " + cell)
                read += 1
        assert read == view.body_height >= 3
