"""Core tests import their helpers from this folder; fixtures shared by the core tests."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache directory of the test's own, named by PROFTUI_CACHE_DIR (for every
    test: reading a summary table caches it, and never in the user's cache)."""
    path = tmp_path / "cache"
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(path))
    monkeypatch.delenv("PROFTUI_CACHE_MAX", raising=False)
    return path
