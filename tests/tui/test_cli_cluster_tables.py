"""msprof-analyze's cluster JSON files as tables: `proftui table` lists and prints them (its
--json with integer ns), and the Tables pane shows the same rows."""

from __future__ import annotations

import json

from cluster_output_inputs import write_cluster_output, write_ranks
from textual.widgets import TabbedContent
from tui_support import run_cli, settle

from proftui.tui.app import ProftuiApp
from proftui.tui.panes.tables import TablesPane


def _job(tmp_path):
    root = tmp_path / "job"
    root.mkdir()
    write_ranks(root)
    write_cluster_output(root)
    return root


def test_table_lists_and_prints_the_cluster_files(tmp_path, capsys) -> None:
    root = _job(tmp_path)
    code, out, _ = run_cli(capsys, "table", root, "--json")
    assert code == 0
    listed = {e["kind"]: e for e in json.loads(out)["tables"]}
    assert listed["cluster_communication"]["n_rows"] == 4
    assert listed["cluster_communication_bandwidth"]["n_rows"] == 8
    assert listed["cluster_communication_matrix"]["name"] == "cluster_communication_matrix.json"
    code, out, _ = run_cli(capsys, "table", root, "cluster_communication_matrix", "--json",
                           "--where", "Src Rank = 1", "--sort", "Transit Time", "--asc")
    assert code == 0
    data = json.loads(out)
    headers = [c["header"] for c in data["columns"]]
    time = headers.index("Transit Time(ms)")
    assert data["columns"][time]["unit"] == "ns"
    rows = data["rows"]
    assert [row[time] for row in rows] == [100_000, 100_000, 1_000_000, 1_000_000]
    assert {row[headers.index("Dst Rank")] for row in rows} == {0, 1}
    code, out, _ = run_cli(capsys, "table", root, "cluster_communication")
    assert code == 0 and "Elapse Time(ms)" in out and "Total Op Info" in out


async def test_the_tables_pane_shows_them(tmp_path) -> None:
    app = ProftuiApp(str(_job(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.query_one(TabbedContent).active = "pane-tables"
        await pilot.pause()
        pane = app.query_one(TablesPane)
        kinds = [t.kind for t in pane.tables]
        assert kinds[:3] == ["cluster_communication", "cluster_communication_bandwidth",
                             "cluster_communication_matrix"]
        pane.query_one("TableView").focus()
        await pilot.pause()
        for _ in range(2):  # the third table
            await pilot.press("right_square_bracket")
        title = str(app.query_one("#tables-title").render())
        assert title.startswith("[cluster_communication_matrix] 3/")
        assert pane.tables[pane.current].n_rows == 9
