"""The built wheel holds every package: built, installed in a fresh virtual environment and run
on a bundled sample, outside this checkout (the editable install the other tests use would
hide a package missing from the wheel)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from proftui.core.importers.chrome import native

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "kineto_demo.pt.trace.json"


def _run(*cmd: str | Path, cwd: Path, env: dict | None = None) -> str:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd,
                            env=env, timeout=300)
    assert result.returncode == 0, f"{cmd}: {result.stdout}\n{result.stderr}"
    return result.stdout


def test_the_wheel_installs_and_runs_a_command(tmp_path: Path) -> None:
    tree = tmp_path / "tree"  # built from a copy: building writes build/ and egg-info
    left_out = {".git", ".pytest_cache", ".ruff_cache", "__pycache__", "samples", "tests",
                "bench", "build", "dist"}
    shutil.copytree(ROOT, tree, ignore=lambda folder, names: [
        n for n in names if n == "__pycache__" or n.endswith(".so")  # (built in place)
        or folder == str(ROOT) and (n in left_out or n.endswith(".egg-info"))])
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, tree,
         cwd=tmp_path)
    wheel = next(dist.glob("proftui-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    packages = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("[ct][ouh]*/**/__init__.py")}
    for package in packages:  # core/..., tui/..., themes
        assert f"proftui/{package}/__init__.py" in names, package
    assert not any(n.startswith(("proftui/tests/", "proftui/bench/", "proftui/samples/"))
                   for n in names)
    assert "proftui/setup.py" not in names and "proftui/__main__.py" in names
    assert "proftui/core/perf/peaks.csv" in names  # package data: the hardware peaks
    if native.MODULE is not None:  # a compiler here: the wheel carries the native reader
        assert any(n.startswith("proftui/core/importers/chrome/_native") for n in names)

    venv = tmp_path / "venv"  # the project's dependencies come from this interpreter's site;
    # this pip installs into it (a pip of the venv's own would cost seconds to set up)
    _run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv,
         cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
         "-q", wheel, cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PROFTUI_CACHE_DIR"] = str(tmp_path / "cache")
    where = _run(python, "-c", "import proftui.core.load.loader as m; print(m.__file__)",
                 cwd=tmp_path, env=env)
    assert where.startswith(str(venv)), where  # the wheel's copy, not this checkout
    out = _run(venv / "bin" / "proftui", "summary", "--json", SAMPLE, cwd=tmp_path, env=env)
    assert json.loads(out)["slices"] == 200
