"""Keys across the app: the timeline's window keys from the panes, the command palette, and
"view as a command"."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TabbedContent
from tui_support import settle

from proftui.tui.app import ProftuiApp
from proftui.tui.panes.ops import OpsPane
from proftui.tui.widgets.table import TableView
from proftui.tui.widgets.timeline import ZOOM_STEP, Timeline

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SAMPLE = SAMPLES / "kineto_demo.pt.trace.json"


def _width(timeline: Timeline) -> int:
    return timeline.view_end - timeline.view_start


def _footer(app) -> str:
    """The footer's keys and the descriptions of its groups (w s Zoom), in order."""
    return " ".join(str(key.render()).strip() for key in app.query("FooterKey, FooterLabel"))


async def test_timeline_keys_work_from_a_pane_but_not_from_a_text_box() -> None:
    """w a s d 0 f move the timeline whenever it is on screen, even from a table (whose sort
    is S) or the Ops pane (whose whole trace is W); a text box keeps its letters. The footer
    shows those keys wherever they work (the priority bindings that take w s f from the panes
    once hid the timeline's own from it: a newcomer's first screen did not say how to zoom)."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        timeline = app.query_one(Timeline)
        assert app.focused is timeline
        assert all(key in _footer(app) for key in ("w s Zoom", "f Fit"))
        width0 = _width(timeline)
        await pilot.press("2")
        await settle(app, pilot)
        view = app.query_one("#ops-table", TableView)
        assert app.focused is view
        # the Ops pane: the keys still move the timeline, and the footer says so
        assert all(key in _footer(app) for key in ("w s Zoom", "f Fit"))
        await pilot.press("w")  # the table has no w: the timeline zooms in
        assert _width(timeline) == pytest.approx(width0 / ZOOM_STEP, rel=1e-6)
        start = timeline.view_start
        await pilot.press("d")
        assert timeline.view_start > start
        await pilot.press("0")
        assert _width(timeline) == width0
        # s and a reach the timeline from the table too: it zooms out and pans, the sort
        # stays; S sorts (shown in the footer), W is the ops pane's whole trace.
        sort_before = view.sort
        await pilot.press("right", "s")
        assert view.sort == sort_before
        assert _width(timeline) == pytest.approx(width0 * ZOOM_STEP, rel=1e-6)
        start = timeline.view_start
        await pilot.press("a")
        assert timeline.view_start < start
        await pilot.press("S")
        assert view.sort is not None and view.sort != sort_before
        assert "S Sort" in _footer(app)
        ops = app.query_one(OpsPane)
        await pilot.press("g", "3", "enter", "2")
        await settle(app, pilot)
        assert ops.window.label != "whole trace"
        await pilot.press("W")
        await settle(app, pilot)
        assert ops.window.label == "whole trace"
        # The details pane has nothing to focus: the timeline takes the focus, all its keys.
        await pilot.press("0", "1")
        assert app.focused is timeline
        await pilot.press("s")
        assert _width(timeline) == pytest.approx(width0 * ZOOM_STEP, rel=1e-6)
        # A text box keeps its letters.
        await pilot.press("2", "slash", "w", "d", "0")
        assert app.query_one(OpsPane).query_one("FilterBox").value == "wd0"
        assert _width(timeline) == pytest.approx(width0 * ZOOM_STEP, rel=1e-6)
        await pilot.press("escape")
        # Hidden behind the overview, the timeline does not move, and the footer has no
        # zoom key.
        await pilot.press("o", "w")
        assert _width(timeline) == pytest.approx(width0 * ZOOM_STEP, rel=1e-6)
        assert app.query_one(TabbedContent).active == "pane-ops"
        await settle(app, pilot)
        assert "Zoom" not in _footer(app)


async def _colon_opens_the_palette_listing_every_key(app, pilot) -> None:
    from textual.command import CommandPalette

    from proftui.tui.app.key_commands import own_bindings

    await pilot.press("2")
    await settle(app, pilot)
    commands = list(app.get_system_commands(app.screen))
    helps = {c.title: c.help for c in commands}
    # Every key of the app, the timeline and the ops pane is there, with its key.
    timeline = app.query_one(Timeline)
    for node in (app, timeline, app.query_one(OpsPane)):
        for binding in own_bindings(node):
            if binding.action in ("cancel_load", "command_palette") or \
                    binding.action.startswith("timeline("):
                continue
            shown = app.get_key_display(binding)
            assert any(help_text.endswith(f"key {shown})") or f"key {shown} or" in help_text
                       or f"or {shown})" in help_text for help_text in helps.values()), \
                binding
    assert helps["Zoom in"] == "Zoom the timeline in around the cursor (key w)"
    assert helps["Ops: Whole trace"].endswith("(key W)")
    assert helps["Table: Sort"].endswith("(key S)")
    assert "Cluster: Metric" in helps and "Quit" in helps
    assert {"Zoom in", "Zoom out", "Fit selection", "Search", "Go to iteration",
            "Next theme", "Diagnostics"} <= set(helps)
    # A command runs its action where it belongs: zoom in from the palette.
    width0 = _width(timeline)
    await pilot.press("colon")
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    await pilot.press(*"zoom in")
    await settle(app, pilot)  # the palette's search is a worker
    await pilot.press("enter")
    await settle(app, pilot)
    assert _width(timeline) == pytest.approx(width0 / ZOOM_STEP, rel=1e-6)
    # A pane's command shows its pane first.
    await pilot.press("1")
    await app.run_action("command_palette")
    await pilot.pause()
    await pilot.press(*"ops: side")
    await settle(app, pilot)
    side = app.query_one(OpsPane).side
    await pilot.press("enter")
    await settle(app, pilot)
    assert app.query_one(TabbedContent).active == "pane-ops"
    assert app.query_one(OpsPane).side != side


async def test_bang_copies_the_command_of_the_pane_then_colon_lists_every_key() -> None:
    """One session, two checks in turn: ! shows and copies the command of the pane (which
    leaves the Iterations pane shown), then : opens the palette listing every key, whose
    commands run where they belong."""
    app = ProftuiApp(str(SAMPLE))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        await _bang_shows_and_copies_the_command_of_the_pane(app, pilot)
        await _colon_opens_the_palette_listing_every_key(app, pilot)


async def _bang_shows_and_copies_the_command_of_the_pane(app, pilot) -> None:
    from textual.widgets import Static

    await pilot.press("g", "3", "enter", "2")
    await settle(app, pilot)
    await pilot.press("v", "v")  # host tracks
    await settle(app, pilot)
    await pilot.press("exclamation_mark")
    expected = f"proftui ops {SAMPLE} --iteration 3 --by name --side host"
    assert app.clipboard == expected
    assert expected in str(app.query_one("#status", Static).render())
    await pilot.press("slash", *"Count>1", "enter", "exclamation_mark")
    assert "not in it: the pane's filter (Count>1) is not applied" in str(
        app.query_one("#status", Static).render())
    await pilot.press("4", "exclamation_mark")
    assert app.clipboard == f"proftui iterations {SAMPLE}"


def _bound_keys() -> set[str]:
    """Every key a proftui screen or widget binds (letters and digits as typed)."""
    import inspect
    import pkgutil
    from importlib import import_module

    from textual.binding import Binding

    import proftui.tui as tui

    keys: set[str] = set()
    for info in pkgutil.walk_packages(tui.__path__, "proftui.tui."):
        module = import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and "BINDINGS" in cls.__dict__:
                for binding in Binding.make_bindings(cls.__dict__["BINDINGS"]):
                    keys.add(binding.key)
    return keys


def test_every_letter_key_the_readme_and_the_help_name_is_bound() -> None:
    """The key tables of the README and docs/tui.md (the README's key block once listed an
    unbound `i`) and the help overlay name only keys that something binds: every lone letter
    or digit in their key columns. (tests/docs/test_docs.py checks every other key too.)"""
    import re

    from proftui.tui.screens.help import KEYS_HELP

    root = Path(__file__).resolve().parents[2]
    columns = []
    for doc in (root / "README.md", root / "docs" / "tui.md"):
        rows = [line.split("|")[1] for line in doc.read_text().splitlines()
                if line.startswith("| `")]
        assert rows, f"{doc.name} has no key table"
        columns += rows
    keys = " ".join(re.findall(r"`([^`]+)`", "\n".join(columns)))
    help_keys = [line[:15] for line in KEYS_HELP.splitlines() if line.startswith("  ")]
    named = set(re.findall(r"(?<!\S)([A-Za-z0-9])(?!\S)", keys + "\n" + "\n".join(help_keys)))
    assert {"w", "s", "1", "o", "D", "b"} <= named
    assert named <= _bound_keys(), named - _bound_keys()


def test_help_says_what_b_groups_by() -> None:
    from proftui.tui.panes.ops import OpsPane
    from proftui.tui.screens.help import KEYS_HELP

    assert "  b            group by name, category, type or engine" in KEYS_HELP.splitlines()
    toggles = [b for b in OpsPane.BINDINGS if b.key == "b"]
    assert toggles and toggles[0].action == "toggle_by"


def _footer(app) -> str:
    """The footer's keys and the descriptions of its groups (w s Zoom), in order."""
    return " ".join(str(key.render()).strip() for key in app.query("FooterKey, FooterLabel"))
