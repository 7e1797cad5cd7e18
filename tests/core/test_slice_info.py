"""Slice details (self time, parents, flows), slices at a time, neighbours, name search."""

from __future__ import annotations

import json

import numpy as np
import pytest

from proftui.core import ProftuiError, load_trace
from proftui.core.query.rows import FENCE, build_rows
from proftui.core.query.search import compile_pattern, find_slices
from proftui.core.query.slice_info import (
    describe_slice,
    nearest_slice,
    neighbour,
    row_of,
    slice_at,
)


@pytest.fixture
def traced(tmp_path):
    # A step (0-1000 us) holding two ops, one with a kernel launch inside; a long row of
    # 3 * FENCE short slices on another thread; a flow from the launch to a kernel.
    events = [{"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
              {"ph": "X", "name": "opA", "pid": 1, "tid": 1, "ts": 100, "dur": 300},
              {"ph": "X", "name": "launch", "pid": 1, "tid": 1, "ts": 150, "dur": 50,
               "args": {"correlation": 7}},
              {"ph": "X", "name": "opB", "pid": 1, "tid": 1, "ts": 500, "dur": 200},
              {"ph": "s", "id": 7, "pid": 1, "tid": 1, "ts": 160, "name": "f", "cat": "c"},
              {"ph": "f", "id": 7, "pid": 2, "tid": 9, "ts": 400, "name": "f", "cat": "c",
               "bp": "e"},
              {"ph": "X", "name": "Kernel", "pid": 2, "tid": 9, "ts": 390, "dur": 40}]
    events += [{"ph": "X", "name": f"tick{i}", "pid": 1, "tid": 2, "ts": 10 * i, "dur": 5}
               for i in range(3 * FENCE)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    index = load_trace(str(path), use_cache=False)
    return index, build_rows(index)


def _find(index, name: str) -> int:
    return int(np.flatnonzero(index.col("slices.name") == index.strings.find(name))[0])


def test_describe_self_time_parents_and_flows(traced) -> None:
    index, rows = traced
    step, op_a, launch, kernel = (_find(index, n) for n in ("step", "opA", "launch", "Kernel"))
    info = describe_slice(index, rows, step)
    assert (info.dur_ns, info.self_ns, info.depth) == (1_000_000, 500_000, 0)
    info = describe_slice(index, rows, op_a)
    assert info.self_ns == 250_000 and info.parents == [step]
    info = describe_slice(index, rows, launch)
    assert info.parents == [op_a, step] and info.flows_out == [kernel]
    assert info.n_flows_out == 1 and info.n_flows_in == 0
    assert describe_slice(index, rows, kernel).flows_in == [launch]


def test_slice_at_nearest_and_neighbours_across_fence_posts(traced) -> None:
    index, rows = traced
    tick = _find(index, "tick0")
    row = row_of(rows, index, tick)
    assert rows.count[row] == 3 * FENCE
    for i in (0, FENCE - 1, FENCE, FENCE + 1, 3 * FENCE - 1):
        t = i * 10_000
        assert index.slice_name(slice_at(index, rows, row, t + 2_000)) == f"tick{i}"
        assert slice_at(index, rows, row, t + 7_000) == -1  # in the gap after it
        assert index.slice_name(nearest_slice(index, rows, row, t + 6_000)) == f"tick{i}"
        assert index.slice_name(nearest_slice(index, rows, row, t + 9_000)) == (
            f"tick{min(i + 1, 3 * FENCE - 1)}")
    assert slice_at(index, rows, row, -5) == -1
    here = _find(index, f"tick{FENCE - 1}")
    assert index.slice_name(neighbour(rows, index, here, 1)) == f"tick{FENCE}"
    assert index.slice_name(neighbour(rows, index, here, -1)) == f"tick{FENCE - 2}"
    assert neighbour(rows, index, tick, -1) == -1
    assert neighbour(rows, index, _find(index, f"tick{3 * FENCE - 1}"), 1) == -1


def test_search_by_substring_and_regex(traced) -> None:
    index, _ = traced
    found = find_slices(index, compile_pattern("OP"))
    assert [index.slice_name(int(i)) for i in found] == ["opA", "opB"]  # by start
    found = find_slices(index, compile_pattern(r"^tick1\d$", regex=True))
    assert len(found) == 10
    assert len(find_slices(index, compile_pattern("nothing here"))) == 0
    with pytest.raises(ProftuiError, match="not a valid regular expression"):
        compile_pattern("([", regex=True)
