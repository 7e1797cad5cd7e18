"""Conformance tests read the corpus afresh: whatever they cache (summary tables) goes to a
cache directory of the test's own, never the user's."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
