"""`proftui BASE NEW`: two timelines aligned at an iteration, locked together, and the op
deltas with their instances on both sides."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static
from tui_support import settle

from proftui.core.analysis.diff import normalise
from proftui.tui.cli import main
from proftui.tui.compare_app import CompareApp
from proftui.tui.widgets.table import TableView

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
BEFORE = str(SAMPLES / "diff_before.pt.trace.json")
AFTER = str(SAMPLES / "diff_after.pt.trace.json")




def _offsets(app) -> list[tuple[int, int]]:
    """Each timeline's window as offsets from its alignment origin."""
    return [(t.view_start - t.origin_ns, t.view_end - t.origin_ns) for t in app.timelines()]


def _iteration_start(side, number: int) -> int:
    return min(it.start_ns for it in side.iterations.items if it.number == number)


async def test_the_two_samples_compared_in_one_session() -> None:
    """One session (two profiles to load), checks in turn: both open aligned at the first
    compared iteration with the verdict; Enter on an op shows its instances on both sides;
    the window keys move the timelines from a pane; the lock moves both and off lets each go
    its own way; g aligns both at another iteration. Each step checks moves relative to
    where the last one left the windows, with the lock on."""
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        _both_open_aligned_at_the_first_compared_iteration_with_the_verdict(app)
        await _enter_on_an_op_shows_its_instances_on_both_sides(app, pilot)
        await _the_window_keys_move_the_timelines_from_a_pane(app, pilot)
        await _the_lock_moves_both_and_off_lets_each_go_its_own_way(app, pilot)
        await _the_two_rulers_share_the_cursor_while_locked(app, pilot)
        await _g_aligns_both_at_another_iteration(app, pilot)


def _both_open_aligned_at_the_first_compared_iteration_with_the_verdict(app) -> None:
    assert app.error is None and app.found is not None
    verdict = str(app.query_one("#verdict", Static).render())
    assert "step -54.6 %" in verdict  # the warm-up and the capture's last step left out
    assert "new is faster by 54.5 % (95.9 % CI 54.0-55.2 %)" in verdict
    assert app.align == 2  # iteration 1 is the warm-up diff leaves out
    for side, timeline in zip(app.sides, app.timelines()):
        assert timeline.origin_ns == _iteration_start(side, 2)
    base, new = _offsets(app)
    assert base == new and base[0] < 0 < base[1]
    ops = app.query_one("#diff-ops", TableView).table
    assert ops.n_rows == len(app.found.ops)
    assert ops.columns[0].values[0] == "enumerate(DataLoader)"


async def _the_lock_moves_both_and_off_lets_each_go_its_own_way(app, pilot) -> None:
    base, new = app.timelines()
    app.screen.set_focus(new)
    await pilot.press("w", "w", "d")
    await pilot.pause()
    before = _offsets(app)
    assert before[0] == before[1]
    await pilot.press("l")
    assert not app.locked
    await pilot.press("d")
    await pilot.pause()
    moved = _offsets(app)
    assert moved[1] != before[1] and moved[0] == before[0]  # the base stayed
    await pilot.press("l")  # on again: the base catches up with the focused side
    await pilot.pause()
    caught = _offsets(app)
    assert caught[0] == caught[1] == moved[1]


def _cursors(app) -> list[int]:
    """Each timeline's cursor as an offset from its alignment origin."""
    return [t.cursor_ns - t.origin_ns for t in app.timelines()]


def _ruler_head(timeline) -> str:
    """The ruler's gutter: "@ " and the cursor's time from the origin."""
    return "".join(s.text for s in timeline.render_line(0))[:timeline.gutter_width].strip()


async def _the_two_rulers_share_the_cursor_while_locked(app, pilot) -> None:
    base, new = app.timelines()
    assert app.locked
    app.screen.set_focus(base)
    await pilot.press("full_stop", "full_stop", "full_stop")
    await pilot.pause()
    moved = _cursors(app)
    assert moved[0] == moved[1]
    assert base.cell_of(base.cursor_ns) == new.cell_of(new.cursor_ns)
    assert _ruler_head(base) == _ruler_head(new) and _ruler_head(base).startswith("@ ")
    # a click on the new side's first line moves its cursor there; the base's follows
    await pilot.click("#new", offset=(new.gutter_width + 10, new.body_top))
    await pilot.pause()
    clicked = _cursors(app)
    assert clicked[0] == clicked[1] != moved[1]
    app.screen.set_focus(new)
    await pilot.press("comma")
    await pilot.pause()
    assert _cursors(app)[0] == _cursors(app)[1] != clicked[1]
    await pilot.press("l")  # off: each cursor its own
    await pilot.press("comma", "comma")
    await pilot.pause()
    apart = _cursors(app)
    assert apart[0] != apart[1]
    await pilot.press("l")  # on again: the base's catches up with the focused side's
    await pilot.pause()
    assert _cursors(app) == [apart[1], apart[1]]


async def _the_window_keys_move_the_timelines_from_a_pane(app, pilot) -> None:
    await pilot.press("1")  # the ops pane's table has the focus
    await pilot.pause()
    focused = app.focused
    assert focused is not None and focused not in app.timelines()
    before = _offsets(app)
    await pilot.press("w", "d")  # not the table's: the base zooms and pans, new follows
    await pilot.pause()
    after = _offsets(app)
    assert after[0] == after[1]
    assert after[0][1] - after[0][0] < before[0][1] - before[0][0]
    assert app.focused is focused  # the focus stayed in the pane


async def _g_aligns_both_at_another_iteration(app, pilot) -> None:
    await pilot.press("g", "5", "enter")
    await pilot.pause()
    assert app.align == 5
    for side, timeline in zip(app.sides, app.timelines()):
        assert timeline.origin_ns == _iteration_start(side, 5)
        assert timeline.view_start < timeline.origin_ns < timeline.view_end
    await pilot.press("g", "9", "9", "enter")
    await pilot.pause()
    assert app.align == 5
    assert "Iteration 99 has no time window" in str(app.query_one("#status").render())


async def _enter_on_an_op_shows_its_instances_on_both_sides(app, pilot) -> None:
    await pilot.press("1", "enter")  # the top change: the data loader
    await pilot.pause()
    view = app.query_one("#diff-instances", TableView)
    sides = view.table.find("Side").values.tolist()
    # 6 steps a side: the warm-up and the capture's last step left out
    assert sides.count("base") == sides.count("new") == 6
    for side, timeline in zip(app.sides, app.timelines()):
        name = timeline.index.slice_name(timeline.selected)
        assert normalise(name) == "enumerate(DataLoader)"
        start = int(timeline.index.arrays["slices.start"][timeline.selected])
        assert start - _iteration_start(side, 2) < 1_000_000  # the one of iteration 2
        assert timeline.view_start <= start < timeline.view_end
    base, new = _offsets(app)
    assert base == new  # one window holding both, still locked
    status = str(app.query_one("#status").render())
    assert "enumerate(DataLoader): base the first, new the first shown" in status
    # Enter on the new side's third instance shows it on the new timeline
    order = view.order.tolist()
    row = [r for r in order if sides[r] == "new"][2]
    view.cursor = order.index(row)
    await pilot.press("enter")
    await pilot.pause()
    wanted = int(view.table.find("Slice").values[row])
    assert app.timelines()[1].selected == wanted
    status = str(app.query_one("#status").render())
    assert status.strip().startswith("new: enumerate(DataLoader)") and " at " in status


async def test_an_unreadable_side_is_named_in_one_sentence(tmp_path) -> None:
    notes = tmp_path / "notes.csv"
    notes.write_text("a,b\n1,2\n")
    app = CompareApp(BEFORE, str(notes))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.error is not None and app.error.startswith("the new profile: ")
        assert "Cannot compare: the new profile" in str(app.query_one("#status").render())
        assert notes.read_text() == "a,b\n1,2\n"


def test_the_command_line_checks_both_paths_first(tmp_path, capsys) -> None:
    assert main([BEFORE, str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert "missing.json: no such file or directory" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_:
        main([BEFORE, AFTER, "--run", "1"])
    assert exit_.value.code == 2
    assert "--run opens one run of one profile" in capsys.readouterr().err
