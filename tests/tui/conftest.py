"""Shared fixtures of the TUI and command-line tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The inline inputs the core tests build (tiny databases, folders of ranks) serve here too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    """Every test remembers column choices in a config folder of its own (never the user's)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture(autouse=True)
def _settle_heap_by_freezing_only(request, monkeypatch):
    """The app settles its heap once a trace is shown: a full collection, then a freeze. In a
    test worker that collection walks the whole suite's heap (pytest, every test module, what
    earlier tests left): 0.1-0.2 s of CPU each time, ~10 % of the app tests' CPU. Here the app
    only freezes; the tests marked `settle_heap` run the real one."""
    if request.node.get_closest_marker("settle_heap") is None:
        import gc

        from proftui.tui.app import shell
        monkeypatch.setattr(shell, "settle_heap", gc.freeze)
