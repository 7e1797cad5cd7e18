"""Filtering slices to a time window or an iteration."""

from __future__ import annotations

import json

from proftui.core import load_trace
from proftui.core.ops.iterations import find_iterations
from proftui.core.ops.window import slices_in_window, slices_of_iteration


def test_window_and_iteration_filters(tmp_path) -> None:
    events = [{"ph": "X", "name": f"ProfilerStep#{n}", "cat": "user_annotation", "pid": 1,
               "tid": 1, "ts": n * 100, "dur": 100} for n in (1, 2)]
    events += [{"ph": "X", "name": f"op{n}", "pid": 1, "tid": 1, "ts": n * 100 + 10, "dur": 20}
               for n in (1, 2)]
    events.append({"ph": "X", "name": "zero", "pid": 1, "tid": 2, "ts": 200, "dur": 0})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    index = load_trace(str(path), use_cache=False)

    def names(rows):
        return sorted(index.slice_name(int(i)) for i in rows)

    assert names(slices_in_window(index, 115_000, 125_000)) == ["ProfilerStep#1", "op1"]
    assert names(slices_in_window(index, 100_000, 200_000, whole=True)) == [
        "ProfilerStep#1", "op1"]
    assert names(slices_in_window(index, 200_000, 201_000)) == ["ProfilerStep#2", "zero"]
    second = find_iterations(index).items[1]
    assert names(slices_of_iteration(index, second)) == ["ProfilerStep#2", "op2", "zero"]
