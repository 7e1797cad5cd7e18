"""The bundled samples: regenerated identically, and telling the story they are made for."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.iterations import find_iterations
from proftui.core.table_cache import read_table

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def test_samples_regenerate_identically(tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_all(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    shipped = sorted(p.relative_to(SAMPLES) for p in SAMPLES.rglob("*")
                     if p.is_file() and p.suffix in (".json", ".csv"))
    assert made == shipped
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (SAMPLES / rel).read_bytes(), rel


@pytest.mark.parametrize("name", ["ascend_cann8", "ascend_old_layout", "torch_npu",
                                  "kineto_demo.pt.trace.json"])
def test_sample_story(name) -> None:
    index = load_trace(str(SAMPLES / name), use_cache=False)
    assert len(index.diagnostics) == 0
    tables = [read_table(t["path"], t["kind"]) for t in index.meta["profile"]["tables"]]
    found = find_iterations(index, tables)
    steps = 8 if name.startswith("kineto") else 6
    assert len(found.items) == steps
    slowest = max(found.items, key=lambda it: it.dur_ns)
    assert slowest.number == (6 if name.startswith("kineto") else 4)  # the starved step
    statistic = [t for t in tables if t.kind == "op_statistic"]
    if statistic:  # the AI CPU op dominates, as in the DropOutDoMask story
        assert statistic[0].find("OP Type").values[0] == "DropOutDoMask"
        assert statistic[0].find("Core Type").values[0] == "AI_CPU"


def test_diff_pair_story() -> None:
    """The before/after pair for `proftui diff`: the loader fix more than halves the step."""
    medians = {}
    for side in ("before", "after"):
        index = load_trace(str(SAMPLES / f"diff_{side}.pt.trace.json"), use_cache=False)
        assert len(index.diagnostics) == 0
        found = find_iterations(index, [])
        assert len(found.items) == 8
        medians[side] = sorted(it.dur_ns for it in found.items)[3:5]
    assert sum(medians["after"]) < 0.6 * sum(medians["before"])
