"""The Cluster pane: the heat strip of a folder of ranks, its metrics, and Enter opening a
rank's step on the timeline."""

from __future__ import annotations

from pathlib import Path

from cluster_inputs import rank_folders
from textual.widgets import Static, TabbedContent
from tui_support import settle

from proftui.core.analysis.heat import heat_grid
from proftui.tui.app import ProftuiApp
from proftui.tui.panes.cluster import RAMP, WORST, ClusterPane, HeatStrip
from proftui.tui.widgets.table import TableView
from proftui.tui.widgets.timeline import Timeline

US = 1000
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _line(strip: HeatStrip, y: int) -> str:
    return "".join(segment.text for segment in strip.render_line(y))


def _cell(app: ProftuiApp) -> str:
    return str(app.query_one("#cluster-cell", Static).render())


async def test_two_ranks_in_one_session_the_strip_its_metrics_and_g(tmp_path) -> None:
    """One session on two ranks, checks in turn: v switches the strip's metric and Enter on
    a rank opens its worst step; the strip marks the slowest step and Enter opens it; g
    scopes the ops to each rank's own step."""
    # Rank 0's steps last 200 µs, rank 1's 210 µs; step 1 is warm-up (left off the scale), so
    # the slowest is rank 1's step 2 (its step 3 ties, the first one counts).
    path = rank_folders(tmp_path, [[110, 140, 120], [160, 110, 110]])
    app = ProftuiApp(path)
    async with app.run_test(size=(120, 32)) as pilot:  # the tracks do not all fit
        await settle(app, pilot)
        await _v_switches_the_metric_and_enter_on_a_rank_opens_its_worst_step(app, pilot)
        await _the_strip_marks_the_slowest_step_and_enter_opens_it(app, pilot)
        await _g_scopes_the_ops_to_each_ranks_own_step(app, pilot)


async def _the_strip_marks_the_slowest_step_and_enter_opens_it(app, pilot) -> None:
    await pilot.press("7")
    await settle(app, pilot)
    assert app.query_one(TabbedContent).active == "pane-cluster"
    strip = app.query_one(HeatStrip)
    assert app.focused is strip
    grid = strip.grid
    assert grid.ranks == ["rank 0", "rank 1"] and grid.iterations == [1, 2, 3]
    assert (grid.lo_ns, grid.hi_ns) == (200 * US, 210 * US)
    assert strip.cursor == grid.worst == (1, 1)
    assert _line(strip, 0).split()[:2] == ["iteration", "1"]
    rank0, rank1 = _line(strip, 1), _line(strip, 2)
    # after the labels (as wide as "iteration", and two spaces), two characters a step
    assert rank0.startswith("rank 0") and rank0[11:].rstrip() == RAMP[0] * 6
    # warm-up step 1 clipped to the top of the scale, the slowest marked
    assert rank1[11:].rstrip() == RAMP[-1] * 2 + WORST + " " + RAMP[-1] * 2
    title = str(app.query_one("#cluster-title", Static).render())
    assert title.startswith("2 ranks; spread 4.9 %; slowest: rank 1 step 2 (210 us)")
    assert _cell(app).startswith("rank 1, iteration 2: step 210 us")
    await pilot.press("left")
    assert "iteration 1 (warm-up)" in _cell(app)
    await pilot.press("enter")
    await settle(app, pilot)
    timeline = app.query_one(Timeline)
    # rank 1's step 1 runs from 0 to 210 µs; the window adds a fiftieth either side
    assert timeline.view_start <= 0 and timeline.view_end >= 210 * US
    assert timeline.view_end - timeline.view_start < 300 * US
    assert "iteration 1 of rank 1" in app._status_text
    header = timeline.lines[timeline.focus_line]
    assert header.process == timeline.first_process_of("rank 1")
    # its tracks at the top, as far as the lines below let them (here all fit on screen)
    assert timeline.top_line == max(min(timeline.focus_line,
                                        len(timeline.lines) - timeline.body_height), 0)
    assert timeline.focus_line in timeline.state.visible_lines()


async def _v_switches_the_metric_and_enter_on_a_rank_opens_its_worst_step(app, pilot):
    await pilot.press("7")
    await settle(app, pilot)
    strip = app.query_one(HeatStrip)
    await pilot.press("v")
    assert strip.metric == "compute_ns" and strip.cursor == (1, 1)  # the same cell
    assert "strip: compute" in str(app.query_one("#cluster-title", Static).render())
    expected = heat_grid(app.query_one(ClusterPane).found, "compute_ns")
    assert (strip.grid.values == expected.values).all()
    await pilot.press("v", "v", "v")
    assert strip.metric == "step_ns"
    await pilot.press("tab")
    assert isinstance(app.focused, TableView) and app.focused.id == "cluster-ranks"
    await pilot.press("enter")  # rank 0: its steps 2 and 3 tie at 200 µs; the first
    await settle(app, pilot)
    assert "iteration 2 of rank 0" in app._status_text
    assert app.query_one(Timeline).view_start < 1000 * US < app.query_one(
        Timeline).view_end


async def test_one_rank_says_there_is_nothing_to_compare_nor_to_align() -> None:
    """One session on one rank, two checks: the Cluster pane says there is nothing to
    compare, and A (align the ranks) that there is nothing to align."""
    from textual.widgets import Input

    from proftui.core.ops.rank_offsets import ONE_RANK

    app = ProftuiApp(str(SAMPLES / "kineto_demo.pt.trace.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("A")
        assert not app.query_one("#prompt", Input).display, "A asked for an iteration"
        assert app._status_text == ONE_RANK
        assert app.query_one(Timeline).alignment is None
        await pilot.press("7")
        await settle(app, pilot)
        title = str(app.query_one("#cluster-title", Static).render())
        assert title.startswith("one rank: nothing to compare across ranks")
        strip = app.query_one(HeatStrip)
        assert len(strip.grid.ranks) == 1 and strip.grid.iterations


async def _g_scopes_the_ops_to_each_ranks_own_step(app, pilot) -> None:
    from proftui.core.ops.aggregate import aggregate_ops
    from proftui.tui.panes.ops import OpsPane

    await pilot.press("g", "2", "enter")
    await settle(app, pilot)
    ops = app.query_one(OpsPane)
    assert ops.window.groups == {"rank 0": (1_000 * US, 1_200 * US),
                                 "rank 1": (1_000 * US, 1_210 * US)}
    assert app._status_text.startswith("iteration 2 of 2 ranks, each its own: 200 us to "
                                       "210 us")
    await pilot.press("2")
    await settle(app, pilot)
    expected = aggregate_ops(app.index, groups=ops.window.groups)
    assert ops.ops is not None
    assert list(ops.ops.find("Count").values) == list(expected.find("Count").values)
    # one rank's iteration (as the Iterations pane or the Cluster pane open it): its own
    found = [it for it in app.iterations if (it.group, it.number) == ("rank 1", 3)]
    app.show_iteration(found[0])
    assert ops.window.groups == {"rank 1": (2_000 * US, 2_210 * US)}
    await settle(app, pilot)  # its recount done before the app closes


async def test_link_types_matrix_and_the_profilers_figures_switch_in(tmp_path) -> None:
    from cluster_output_inputs import write_cluster_output, write_ranks

    write_ranks(tmp_path)
    write_cluster_output(tmp_path, free_us_rank1=52.0)
    app = ProftuiApp(str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        pane = app.query_one(ClusterPane)
        view = app.query_one("#cluster-ranks", TableView)
        assert pane.views == ["ranks", "link types", "link matrix", "vs msprof-analyze"]
        assert view.table.columns[0].name == "Rank" and view.table.n_rows == 2
        comm = str(app.query_one("#cluster-comm", Static).render())
        assert comm.splitlines()[0].startswith("Links: 5, 1 slow; link types slow on a rank: 2")
        assert ("slow link: step 1: rank 1 -> rank 0 HCCS 10.00 GB/s (median 20.00 GB/s)"
                in comm)
        assert "msprof-analyze's cluster output: 55 figures compared, 3 differ" in comm
        await pilot.press("right_square_bracket")
        assert pane.view_name == "link types" and view.table.kind == "cluster_link_types"
        bandwidth = view.table.find("Bandwidth(GB/s)")
        assert list(bandwidth.values) == [20.0, 20.0, 10.0, 10.0]
        title = str(app.query_one("#cluster-title", Static).render())
        assert title.startswith("ranks  [link types]  link matrix  vs msprof-analyze")
        await pilot.press("right_square_bracket")
        flags = view.table.find("Flag")
        assert view.table.kind == "cluster_link_matrix" and list(flags.values).count("slow") == 1
        await pilot.press("right_square_bracket")
        assert view.table.kind == "cluster_profiler_checks"
        first = [view.table.columns[k].values[0] for k in range(4)]
        assert first == ["step_trace", "rank 1, step 1", "Free", "0.052000 ms"]
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        assert pane.view_name == "ranks" and view.table.n_rows == 2
