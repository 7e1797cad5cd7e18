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
