"""The app's first screen: loads in a worker, lists processes and tracks, reports problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static, Tree
from tui_support import settle

from proftui.tui.app import ProftuiApp
from proftui.tui.screens.help import HelpScreen

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kineto_demo.pt.trace.json"


def _labels(tree: Tree) -> list[str]:
    out = []

    def walk(node) -> None:
        out.append(str(node.label))
        for child in node.children:
            walk(child)

    walk(tree.root)
    return out


@pytest.mark.settle_heap
async def test_the_sample_opened_once_lists_tracks_then_details_then_the_overview() -> None:
    """One session on the demo trace, checks in turn: it opens and lists its tracks, the
    loaded heap is frozen (and released when the app is gone), Esc is no longer the load's,
    the details are laid out again only when their height may change, then the overview's
    Enter shows a track or an iteration."""
    import gc

    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        _sample_opens_and_lists_tracks(app)
        # The heap as loaded is frozen: no 50 ms full passes.
        assert app.summary is not None
        assert gc.get_freeze_count() > 0, "the opened trace is not kept out of collections"
        # Once loaded, Esc goes on to the focused widget.
        assert not app.check_action("cancel_load", ())
        await _the_details_are_laid_out_again_only_when_their_height_may_change(app, pilot)
        await _overview_enter_shows_a_track_or_iteration_and_esc_closes_it(app, pilot)
    assert gc.get_freeze_count() == 0, "the frozen heap is not released once the app is gone"


def _sample_opens_and_lists_tracks(app) -> None:
    assert app.index is not None and app.error is None
    labels = _labels(app.query_one(Tree))
    assert "thread 41207 (python)  120 slices in 3 rows" in labels
    assert "stream 7  64 slices in 4 rows" in labels
    status = str(app.query_one("#status", Static).render())
    assert "200 slices over 26.447 ms, 2 processes; no import problems" in status


async def test_problems_are_one_key_away(tmp_path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0,
                                 "dur": -4}, {"ph": "E", "pid": 1, "tid": 1, "ts": 9}]))
    app = ProftuiApp(str(path))
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.query_one("#diagnostics", Static)
        assert not panel.has_class("shown")
        await pilot.press("D")
        assert panel.has_class("shown")
        text = str(panel.render())
        assert "negative duration" in text and "E event without a matching B" in text


async def test_esc_cancels_loading_a_gzip_bomb(tmp_path) -> None:
    """Esc cancels a load even while the timeline has the focus."""
    import zlib

    bomb = tmp_path / "bomb.json.gz"
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    with open(bomb, "wb") as f:  # one endless string: 256 MB inflated
        f.write(z.compress(b'[{"name":"'))
        for _ in range(256):
            f.write(z.compress(b"A" * (1 << 20)))
        f.write(z.compress(b'"}]') + z.flush())
    app = ProftuiApp(str(bomb))
    async with app.run_test() as pilot:
        await pilot.pause(0.3)
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.index is None
        assert "Loading cancelled" in str(app.query_one("#status", Static).render())
    # Once loaded, Esc is the timeline's: checked in the sample's session above.


async def test_a_failure_while_reading_is_a_message_not_a_traceback(monkeypatch) -> None:
    """The cluster_step_trace_time.csv crash was a TypeError in a worker: whatever goes
    wrong while reading becomes one readable line, and the app stays up."""
    import proftui.tui.app.loading as app_module

    def broken(index):
        raise TypeError("must be real number, not str")

    monkeypatch.setattr(app_module, "read_overview", broken)
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.error == ("unexpected TypeError while reading it (must be real number, "
                             "not str); please report it")
        assert "Cannot open this trace: unexpected TypeError" in str(
            app.query_one("#status", Static).render())


def test_the_app_exits_2_on_unreadable_input(tmp_path, monkeypatch, capsys) -> None:
    """`proftui PATH` on what is no trace: the app says so, and on quitting the shell gets
    status 2 and the same sentence, as from the headless commands."""
    from proftui.tui import cli

    bad = tmp_path / "notes.txt"
    bad.write_text("hello")

    def run(self) -> None:  # the app as a person would see it: load, then quit
        async def go() -> None:
            async with self.run_test() as pilot:
                await self.workers.wait_for_complete()
                await pilot.pause()
                await pilot.press("q")

        import asyncio

        asyncio.run(go())

    monkeypatch.setattr(ProftuiApp, "run", run)
    assert cli.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("proftui: ") and "is not a JSON trace" in err
    assert cli.main([str(SAMPLE)]) == 0


async def _overview_enter_shows_a_track_or_iteration_and_esc_closes_it(app, pilot) -> None:
    from proftui.tui.widgets.timeline import Timeline

    tree = app.query_one(Tree)
    await pilot.press("o")
    assert tree.has_class("shown")
    app.screen.set_focus(tree)
    await pilot.press("escape")
    assert not tree.has_class("shown")
    timeline = app.query_one(Timeline)
    await pilot.press("o")
    app.screen.set_focus(tree)
    stream = next(n for n in _nodes(tree.root) if str(n.label).startswith("stream 7"))
    tree.move_cursor(stream)
    await pilot.press("enter")
    await pilot.pause()
    assert not tree.has_class("shown") and timeline.display and app.focused is timeline
    assert timeline.lines[timeline.focus_line].track == stream.data[1]
    await pilot.press("o")
    app.screen.set_focus(tree)
    third = next(n for n in _nodes(tree.root) if str(n.label).startswith("#3 "))
    tree.move_cursor(third)
    await pilot.press("enter")
    await pilot.pause()
    it = next(it for it in app.iterations if it.number == 3)
    assert timeline.cursor_ns == it.start_ns


async def _help_scrolls_when_it_does_not_fit(app, pilot) -> None:
    from textual.containers import ScrollableContainer

    await pilot.press("question_mark")
    await pilot.pause()
    box = app.screen.query_one(ScrollableContainer)
    assert box.max_scroll_y > 0 and app.focused is box
    assert box.max_scroll_x == 0  # the text wraps beside its keys, nothing is cut
    await pilot.press("pagedown")
    await pilot.pause()
    assert box.scroll_y > 0


def _nodes(node):
    yield node
    for child in node.children:
        yield from _nodes(child)


async def test_a_sqlite_export_opens_like_its_text_export(tmp_path) -> None:
    from ascend_db_helpers import write_rank  # the tiny torch_npu db of the core tests

    write_rank(tmp_path)
    app = ProftuiApp(str(tmp_path))
    async with app.run_test(size=(110, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.index is not None and app.error is None
        labels = _labels(app.query_one(Tree))
        assert "Stream 2  2 slices in 1 row" in labels
        assert "Iterations (1, from ProfilerStep#N annotations)" in labels
        assert any(label.startswith("kernel_details  2 rows") for label in labels)


async def test_not_a_trace_is_a_readable_message_read_whole_at_any_width(tmp_path) -> None:
    """A path the app cannot open (not a trace), longer than the screen is wide: a readable
    message; the status line wraps to show the whole sentence, and the diagnostics panel
    (D) keeps it."""
    folder = tmp_path / ("a_folder_name_long_enough_to_pass_the_right_edge_of_the_screen_" * 2)
    folder.mkdir()
    path = folder / "notes.csv"
    path.write_text("a,b\n1,2\n")
    app = ProftuiApp(str(path))
    async with app.run_test(size=(60, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.index is None
        assert "is not a JSON trace" in app.error
        sentence = f"Cannot open this trace: {app.error}"
        assert len(sentence) > 2 * 60
        status = app.query_one("#status", Static)
        shown = "".join(status.render_line(y).text for y in range(status.size.height))
        assert status.size.height >= 3
        assert "".join(shown.split()) == "".join(sentence.split())  # all of it, wrapped
        await pilot.press("D")
        await pilot.pause()
        panel = app.query_one("#diagnostics", Static)
        assert panel.has_class("shown") and "".join(sentence.split()) in "".join(
            str(panel.render()).split())


async def test_the_status_line_counts_damage_not_notes(tmp_path) -> None:
    """Flows without a partner are normal Kineto output: a note, listed under D, not an
    import problem on the status line; a dropped event is."""
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
              {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 1, "cat": "ac2g", "name": "f"},
              {"ph": "s", "id": 2, "pid": 1, "tid": 1, "ts": 2, "cat": "ac2g", "name": "f"}]
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps(events))
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(events + [{"ph": "E", "pid": 1, "tid": 1, "ts": 9}]))
    for path, said in ((notes, "; no import problems"), (damaged, "; 1 import problem (D)")):
        app = ProftuiApp(str(path))
        async with app.run_test(size=(120, 30)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert said in str(app.query_one("#status", Static).render())
            await pilot.press("D")
            panel = str(app.query_one("#diagnostics", Static).render())
            assert "flow with a single point" in panel.split("notes (")[1]
            damage = "damage 1" if path == damaged else "damage 0"
            assert f"diagnostics {damage}, notes 2" in panel


async def test_the_timeline_is_painted_before_the_overview_is_read(monkeypatch) -> None:
    """The first frame waits for the index and its rows only: the tracks' roles, the summary
    tables and the iterations are read once it is painted, then fill the panes and mark the
    iterations on the timeline; the overview of the profile directory lists its iterations
    and tables."""
    import threading

    from proftui.tui.app import loading as app_module
    from proftui.tui.widgets.timeline import Timeline

    release = threading.Event()
    real = app_module.read_overview

    def held_overview(index):
        assert release.wait(30), "the overview was never let through"
        return real(index)

    monkeypatch.setattr(app_module, "read_overview", held_overview)
    app = ProftuiApp(str(SAMPLE.parent / "ascend_cann8"))
    async with app.run_test(size=(110, 40)) as pilot:
        for _ in range(1000):
            if app.first_paint_s is not None:
                break
            await pilot.pause(0.01)
        timeline = app.query_one(Timeline)
        assert app.first_paint_s is not None and app.summary is None
        assert timeline.index is app.index and timeline.iterations == []
        status = str(app.query_one("#status", Static).render())
        assert "slices over" in status and "processes" in status
        await pilot.press("g")
        assert "still being found" in str(app.query_one("#status", Static).render())
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.summary is not None and len(timeline.iterations) == 6
        assert "op_statistic" in [table.kind for table in timeline.tables]
        assert "Iterations (6, from step_trace CSV)" in _labels(app.query_one(Tree))
        assert str(app.query_one("#status", Static).render()) == status
        # A profile directory lists its iterations and tables.
        labels = _labels(app.query_one(Tree))
        slow = [label for label in labels if label.endswith("<- slowest")]
        assert len(slow) == 1 and slow[0].startswith("#4  5.54 ms")
        assert "op_statistic  10 rows x 9 columns" in labels
        assert "Stream 3  12 slices in 1 row" in labels


async def test_an_index_read_from_the_cache_beforehand_is_shown_as_it_is(monkeypatch) -> None:
    """`proftui PATH` starts reading the cache before the app's modules are imported; the app
    shows what it read and loads nothing again. Without a current entry nothing is read (nor
    indexed) beforehand, and the app indexes the trace itself."""
    from proftui.core import load_trace
    from proftui.tui.app import loading as app_module
    from proftui.tui.launch import read_cached

    assert read_cached(str(SAMPLE), None).result(timeout=60) is None
    assert read_cached(str(SAMPLE.parent / "no-such.json"), None).result(timeout=60) is None
    load_trace(str(SAMPLE))
    cached = read_cached(str(SAMPLE), None)
    index, rows = cached.result(timeout=60)
    assert index.meta["from_cache"] is True

    def no_second_load(*args, **kwargs):
        raise AssertionError("loaded again")

    monkeypatch.setattr(app_module, "load_trace", no_second_load)
    app = ProftuiApp(str(SAMPLE), cached=cached)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.error is None and app.index is index and app.rows is rows
        status = str(app.query_one("#status", Static).render())
        assert "200 slices over 26.447 ms, 2 processes; no import problems" in status


async def test_the_panes_are_mounted_after_the_first_frame_and_keys_wait_for_them(
        monkeypatch) -> None:
    """Opened from the cache, the first frame is painted before the tabs, the panes' widgets
    and the footer are mounted, in the room they will take: the timeline keeps its size
    when they come. A key pressed before they are waits for them rather than find none."""
    from concurrent.futures import Future

    from textual.widgets import Footer, TabbedContent

    from proftui.core import load_trace
    from proftui.core.query.rows import rows_for
    from proftui.tui.panes.ops import OpsPane
    from proftui.tui.widgets.table import TableView
    from proftui.tui.widgets.timeline import Timeline

    first_frame = []
    painted = ProftuiApp._painted

    def _painted(app: ProftuiApp) -> None:
        first_frame.append((app.query_one(Timeline).size, len(app.query(TabbedContent)),
                            len(app.query(Footer))))
        painted(app)

    monkeypatch.setattr(ProftuiApp, "_painted", _painted)
    index = load_trace(str(SAMPLE), use_cache=False)
    read: Future = Future()
    read.set_result((index, rows_for(index)))
    app = ProftuiApp(str(SAMPLE), cached=read)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert first_frame == [(app.query_one(Timeline).size, 0, 0)]
        assert app.query(TabbedContent) and app.query(Footer) and app.query(OpsPane)

    cached: Future = Future()  # the cache read, held back until the key is pressed
    app = ProftuiApp(str(SAMPLE), cached=cached)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert not app.query(OpsPane) and app.first_paint_s is None
        await pilot.press("2")  # the Ops pane, before the index is there
        assert app.query_one("#panes").active == "pane-ops"
        assert isinstance(app.focused, TableView)
        cached.set_result((index, rows_for(index)))
        await settle(app, pilot)
        assert app.first_paint_s is not None and app.index is index
        assert len(app.query_one(OpsPane).table_view().order) > 0


async def test_indexing_a_folder_of_ranks_names_each_rank_on_the_status_line(
        tmp_path, monkeypatch) -> None:
    from cluster_inputs import rank_folders

    root = rank_folders(tmp_path, [[110, 140], [160, 110], [120, 120]])
    app = ProftuiApp(root)
    said: list[str] = []
    real_status = app._status
    monkeypatch.setattr(app, "_status", lambda text, *shorter: said.append(text)
                        or real_status(text, *shorter))
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.error is None and app.index is not None
    indexing = [text for text in said if text.startswith("Indexing")]
    for rank in range(3):
        assert any(f"rank {rank} (trace_view.json), {rank + 1} of 3 files; " in text
                   for text in indexing), indexing


async def test_at_80x24_the_status_line_leaves_out_the_ops_window_and_help_scrolls() -> None:
    """One session at 80x24, checks in turn: the status line leaves out the ops window rather
    than cut it (it ended "no import problems  (? keys)   [ops:"), the help scrolls, then
    at 140 columns the status line has room for the window."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        status = str(app.query_one("#status", Static).render())
        assert status.endswith("(? keys)") and "[ops" not in status
        await _help_scrolls_when_it_does_not_fit(app, pilot)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen), "Esc did not close the help"
        await pilot.resize_terminal(140, 30)
        await settle(app, pilot)
        status = str(app.query_one("#status", Static).render())
        assert status.endswith("(? keys)   [ops: whole trace]")


async def test_a_status_said_under_another_screen_or_late_is_no_traceback() -> None:
    """A status and an error said while another screen is on top (an export ending while the
    help is open) go to the app's status line; one said as the app closes (a message handled
    late, its screen emptied) goes nowhere: neither is a traceback."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        app._error("Export failed: disk full")
        await pilot.press("escape")
        status = app.query_one("#status", Static)
        assert "Export failed: disk full" in str(status.render()) and status.has_class("error")
    app._status("said as the app is gone")


async def test_an_analysis_ending_as_the_app_closes_is_no_traceback() -> None:
    """A worker's results (the steps, the advice, the ranks, the communication) that reach the
    app after its panes are gone go nowhere (a cluster's ranks did, and failed the worker)."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app._to_pane("cluster", "show_failure", "said while open")
    app._to_pane("cluster", "show_cluster", None)  # the pane is gone: not even called
    app._analysis_failed("said as the app is gone")


def test_settling_the_heap_collects_what_was_left_before_freezing() -> None:
    import gc
    import weakref

    from proftui.tui.app import settle_heap

    class Cycle:
        pass

    enabled = gc.isenabled()
    gc.disable()  # no collection but settle_heap's own
    try:
        left = Cycle()
        left.me = left  # garbage only a collection finds: what an earlier trace left
        gone = weakref.ref(left)
        del left
        settle_heap()
        assert gone() is None and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


async def _the_details_are_laid_out_again_only_when_their_height_may_change(app, pilot):
    """A step between slices whose details take as many unwrapped lines keeps the details'
    height: no layout of the whole screen. Where the height may change (more lines, or a
    line that wraps), it is laid out again, and the details are never cut."""
    details = app.query_one("#details", Static)
    layouts: list[bool] = []
    refresh = details.refresh

    def spy(*args, **kwargs):
        layouts.append(bool(kwargs.get("layout")))
        return refresh(*args, **kwargs)

    details.refresh = spy  # type: ignore[method-assign]
    kept = laid_out = 0
    before: tuple[int, bool] | None = None  # lines shown, all unwrapped
    for key in ("enter", "right", "right", "down", "right", "escape", "enter", "right"):
        layouts.clear()
        await pilot.press(key)
        await settle(app, pilot)
        lines = str(details.content).split("\n")
        fits = all(len(line) <= details.size.width for line in lines)
        if fits:
            assert details.size.height == len(lines)  # neither cut nor padded
        else:
            assert details.size.height > len(lines)
        if before == (len(lines), True) and fits:
            assert layouts and not any(layouts)
            kept += 1
        else:
            assert any(layouts)
            laid_out += 1
        before = (len(lines), fits)
    assert kept >= 2 and laid_out >= 3
