"""`proftui memory` on an inline torch_npu rank: JSON schema and values, text, windows, a
profile without memory data, bad usage."""

from __future__ import annotations

import json

from memory_helpers import MB, T, write_text_rank
from tui_support import run_cli

US = 1000



def test_json(capsys, tmp_path) -> None:
    code, out, err = run_cli(capsys, "memory", "--json", str(write_text_rank(tmp_path)))
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"window", "start_ns", "end_ns", "peaks", "top_ops", "op_tables",
                         "ranks_without_data", "warnings"}
    assert data["ranks_without_data"] == []
    assert data["window"] == "whole trace" and data["start_ns"] == T
    pta = next(p for p in data["peaks"] if (p["component"], p["measure"]) == ("PTA",
                                                                             "allocated"))
    assert pta == {"group": "", "process": "Memory", "component": "PTA",
                   "measure": "allocated", "bytes": 3670016, "at_ns": T + 200_500,
                   "samples": 3,
                   "host_op": {"name": "aten::mm", "start_ns": T + 180 * US,
                               "dur_ns": 60 * US, "track": "Thread 4242"},
                   "device_op": {"name": "MatMul", "start_ns": T + 190 * US,
                                 "dur_ns": 20 * US, "track": "Stream 2"}}
    assert [(p["component"], p["measure"]) for p in data["peaks"]] == [
        ("GE", "allocated"), ("GE", "reserved"), ("PTA", "allocated"), ("PTA", "reserved")]
    assert data["top_ops"] == [
        {"group": "", "name": "aten::add", "count": 1, "total_bytes": 3 * MB,
         "max_bytes": 3 * MB},
        {"group": "", "name": "aten::mm", "count": 2, "total_bytes": 2 * MB, "max_bytes": MB}]


def test_text_and_range(capsys, tmp_path) -> None:
    path = str(write_text_rank(tmp_path))
    code, out, err = run_cli(capsys, "memory", path)
    assert code == 0, err
    assert "memory in the whole trace" in out
    pta = next(line for line in out.splitlines() if "PTA" in line and "allocated" in line)
    assert "3.5" in pta and "200.5 us" in pta and "aten::mm" in pta and "MatMul" in pta
    assert "aten::add" in out and "top 10 allocating operators" in out
    code, out, err = run_cli(capsys, "memory", "--range", "250us:700us", "--top", "1", "--json",
                          path)
    data = json.loads(out)
    assert data["window"] == "range" and data["start_ns"] == T + 250 * US
    assert {p["bytes"] for p in data["peaks"]} == {2 * MB, 4 * MB}
    assert [o["name"] for o in data["top_ops"]] == ["aten::add"]
    code, out, err = run_cli(capsys, "memory", "--iteration", "1", path)
    assert code == 0 and "iteration 1" in out


def test_a_rank_without_memory_data_is_named(capsys, tmp_path) -> None:
    write_text_rank(tmp_path, 0)
    run = write_text_rank(tmp_path, 1, memory=False, ops=False)  # without profile_memory
    trace = run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())  # 7 µs later: a trace of its own, not a copy
    for e in events:
        if "ts" in e:
            e["ts"] = str(float(e["ts"]) + 7) if isinstance(e["ts"], str) else e["ts"] + 7
    trace.write_text(json.dumps(events))
    code, out, err = run_cli(capsys, "memory", "--json", str(tmp_path))
    assert code == 0, err
    data = json.loads(out)
    assert data["ranks_without_data"] == ["rank 1"]
    assert {p["group"] for p in data["peaks"]} == {"rank 0"}
    code, out, err = run_cli(capsys, "memory", str(tmp_path))
    assert code == 0 and "no memory data for rank 1 (no allocator counters" in out


def test_profile_without_memory_data_says_so(capsys, tmp_path) -> None:
    path = str(write_text_rank(tmp_path, memory=False, ops=False))
    code, out, err = run_cli(capsys, "memory", path)
    assert code == 0 and err == ""
    assert out.startswith("no memory data in this profile") and out.count("\n") == 1
    code, out, _ = run_cli(capsys, "memory", "--json", path)
    assert json.loads(out)["peaks"] == [] and json.loads(out)["op_tables"] == 0
    code, out, _ = run_cli(capsys, "memory", str(write_text_rank(tmp_path / "b", memory=False)))
    assert "peaks: no allocator counters in this window" in out and "aten::add" in out


def test_bad_usage(capsys, tmp_path) -> None:
    path = str(write_text_rank(tmp_path))
    assert run_cli(capsys, "memory", "--top", "0", path)[0] == 2
    code, _, err = run_cli(capsys, "memory", "--iteration", "9", path)
    assert code == 2 and "Iteration 9 is not in this profile" in err
    code, _, err = run_cli(capsys, "memory", str(tmp_path / "nothing"))
    assert code == 2 and "no such file" in err
