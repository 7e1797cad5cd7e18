"""What every test shares: a cache directory of its own, never the user's."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def _keep_bytecode() -> None:
    """Where writing bytecode is off (PYTHONDONTWRITEBYTECODE, as on these machines), every
    process the suite starts (xdist workers, index workers, CLI runs, the wheel's venv) would
    compile the package and the tests anew: ~10 % of the suite's CPU. Writing is turned back
    on, for the processes started from here too, into the usual __pycache__ folders (ignored
    by git). Not into a folder of the tests' own (PYTHONPYCACHEPREFIX): Python then looks for
    no other bytecode, so on a fresh clone every worker compiled all of textual, numpy and
    the rest again, though their installs come with theirs (~5 % more CPU on a first run)."""
    if not sys.dont_write_bytecode:
        return
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_keep_bytecode()


def _compile_once() -> None:
    """The package's and the tests' bytecode written once, here, before the xdist workers
    start: else on a fresh clone the workers, and the CLI and index processes the tests
    start, each compile the same modules at the same time before any has written them
    (measured on a fresh clone: ~170-200 s of the suite's CPU against ~150 s). Once written,
    this only compares times (~0.5 s)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker: the controller did it
    import compileall

    root = Path(__file__).resolve().parents[1]
    for part in ("core", "tui", "themes", "tests"):
        compileall.compile_dir(root / part, quiet=2, workers=0)


_compile_once()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown without it (-p no:xdist)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`pytest -n auto`: two workers a core. The app's tests spend most of their wall time
    waiting for the screen to settle (a key press: ~100 ms of wall for ~18 ms of CPU), which a
    second worker fills. Measured on 2 cores, whole suite: 2 workers 163-172 s, 4 workers
    124-127 s, 6 workers 151 s."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * (cores or 1)


@pytest.fixture(autouse=True, scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The cache of what fixtures wider than one test open (a module's corpus profile): they
    are set up before any test's own cache_dir is named."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        path = tmp_path_factory.mktemp("cache")
        monkeypatch.setenv("PROFTUI_CACHE_DIR", str(path))
        monkeypatch.delenv("PROFTUI_CACHE_MAX", raising=False)
        yield path


@pytest.fixture
def environment_kept() -> Iterator[None]:
    """Fails a test that leaves proftui's environment variables other than it found them
    (checked once monkeypatch has undone what it set): a PROFTUI_NATIVE=0 left behind had
    every later test of its worker read with the Python path."""
    before = {k: v for k, v in os.environ.items() if k.startswith("PROFTUI_")}
    yield
    after = {k: v for k, v in os.environ.items() if k.startswith("PROFTUI_")}
    assert after == before, f"the test left {sorted(set(after.items()) ^ set(before.items()))}"


@pytest.fixture(autouse=True)
def cache_dir(environment_kept: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache directory of the test's own, named by PROFTUI_CACHE_DIR (for every
    test: opening a trace or reading a summary table caches it), with no size cap from the
    environment. (The environment is checked after the test: see environment_kept.)"""
    path = tmp_path / "cache"
    monkeypatch.setenv("PROFTUI_CACHE_DIR", str(path))
    monkeypatch.delenv("PROFTUI_CACHE_MAX", raising=False)
    return path
