"""Every --json says one thing by one name: the schema of docs/json.md's shared keys (kept
here, in SCHEMA), checked on every command's output of the bundled samples and of damaged
inputs written inline; and the damage is said first where the answer is given."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from tui_support import run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# The keys every --json shares, each with the types its value may have, wherever it is.
SCHEMA: dict[str, tuple[type, ...]] = {
    "iteration": (int, type(None)),  # a step's number (never `number`, but the alias below)
    "rank": (int, type(None)),  # a rank's number; its label is `group`
    "group": (str,),
}
WARNING: dict[str, tuple[type, ...]] = {
    "kind": (str,), "count": (int,), "message": (str,), "first_offset": (int, type(None)),
    "end_ns": (int, type(None))}
# Old names kept for one release (docs/json.md says so), beside the new ones.
ALIASES = {"number": "iteration", "items": "iterations"}
# Times that are means and documented as floats, left to their own modules.
FLOAT_TIMES = {"diff.breakdown"}  # diff's parts are means over the steps
# Commands whose keys name something else (documented): none since comm's communication
# group became `comm_group`.
OTHER_MEANING: set[str] = set()


def _walk(value: Any, path: str, problems: list[str], command: str) -> None:
    if isinstance(value, list):
        for item in value:
            _walk(item, path + "[]", problems, command)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        where = f"{path}.{key}"
        # (a run's number is no step's; info's `iterations` object lists its `items`)
        if key in ALIASES and ALIASES[key] not in value and not (
                key == "number" and path.endswith(".run")) and not (
                key == "items" and path == ".iterations"):
            problems.append(f"{where}: an old name without {ALIASES[key]} beside it")
        if key in SCHEMA and command not in OTHER_MEANING and \
                not isinstance(item, SCHEMA[key]) and not where.endswith(".iterations.groups"):
            problems.append(f"{where}: {type(item).__name__}, not {SCHEMA[key]}")
        if key.endswith("_ns") and not any(f"{command}{where}".startswith(f) for f in
                                           FLOAT_TIMES):
            _check_times(item, where, problems)
        _walk(item, where, problems, command)


def _check_times(value: Any, where: str, problems: list[str]) -> None:
    """Times are integer ns (or null), alone or in a list or an object of them."""
    items = (value if isinstance(value, list) else
             list(value.values()) if isinstance(value, dict) else [value])
    for item in items:
        if isinstance(item, dict):
            continue  # (an object of windows: its own keys say `_ns`)
        if not isinstance(item, (int, type(None))) or isinstance(item, bool):
            problems.append(f"{where}: a time of {type(item).__name__}, not integer ns")


def schema_problems(command: str, data: dict[str, Any]) -> list[str]:
    """Where `data`, the --json of `command`, breaks SCHEMA (empty when it keeps it)."""
    problems: list[str] = []
    warnings = data.get("warnings")
    if not isinstance(warnings, list):
        return ["no warnings list"]
    for w in warnings:
        for key, types in WARNING.items():
            if key not in w or not isinstance(w[key], types):
                problems.append(f"warnings[].{key}: {w.get(key)!r}")
    _walk(data, "", problems, command)
    return problems


RUNS = {
    "info": ["info", SAMPLES / "torch_npu"],
    "summary": ["summary", SAMPLES / "torch_npu"],
    "ops": ["ops", SAMPLES / "torch_npu"],
    "iterations": ["iterations", SAMPLES / "cluster_2rank"],
    "breakdown": ["breakdown", SAMPLES / "cluster_2rank"],
    "advise": ["advise", SAMPLES / "torch_npu"],
    "diff": ["diff", SAMPLES / "diff_before.pt.trace.json", SAMPLES / "diff_after.pt.trace.json"],
    "table": ["table", SAMPLES / "torch_npu", "op_statistic"],
    "table list": ["table", SAMPLES / "torch_npu"],
    "cluster": ["cluster", SAMPLES / "cluster_2rank"],
    "memory": ["memory", SAMPLES / "torch_npu"],
    "comm": ["comm", SAMPLES / "cluster_2rank"],
    "cache": ["cache"],
}


@pytest.mark.parametrize("name", RUNS)
def test_every_json_keeps_the_schema(name: str, capsys) -> None:
    argv = RUNS[name]
    status, out, err = run_cli(capsys, argv[0], "--json", *argv[1:])
    assert status == 0, err
    assert schema_problems(argv[0], json.loads(out)) == []


def test_the_checker_finds_what_breaks_the_schema() -> None:
    found = schema_problems("cluster", {"warnings": [{"kind": "truncated", "count": 1}],
                                        "ranks": [{"rank": "rank 0", "number": 3}],
                                        "mean_ns": 1.5})
    assert found == ["warnings[].message: None", "warnings[].first_offset: None",
                     "warnings[].end_ns: None", ".ranks[].rank: str, not (<class 'int'>, "
                     "<class 'NoneType'>)", ".ranks[].number: an old name without iteration "
                     "beside it", ".mean_ns: a time of float, not integer ns"]


def _trace(n_steps: int = 4) -> str:
    """A Kineto-shaped trace: host steps first, then the GPU kernels (as Kineto writes them:
    a file cut part-way loses its device events)."""
    events = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1,
               "tid": 1, "ts": i * 1000, "dur": 900} for i in range(n_steps)]
    events += [{"ph": "X", "cat": "kernel", "name": f"gemm_{i}", "pid": 0, "tid": 7,
                "ts": i * 100 + 10, "dur": 60} for i in range(n_steps * 10)]
    return json.dumps({"traceEvents": events})


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("command", ["summary", "ops", "iterations", "breakdown", "advise",
                                     "cluster", "memory", "info"])
def test_a_cut_trace_is_said_first_and_in_every_json(tmp_path, capsys, command: str,
                                                     gz: bool) -> None:
    text = _trace().encode()
    cut = text[:len(text) * 2 // 3]
    path = tmp_path / ("cut.json.gz" if gz else "cut.json")
    path.write_bytes(gzip.compress(text)[:len(gzip.compress(text)) * 2 // 3] if gz else cut)
    status, out, _ = run_cli(capsys, command, "--no-cache", path)
    assert status == 0
    first = out.splitlines()[0]
    assert first.startswith("warning: damaged input, the numbers below lack what was lost: "
                            "the file ends early, inside an event or before its event "
                            "array closes (truncated) at byte ")
    assert "the profile stops at " in first and "from the capture start" in first
    status, out, _ = run_cli(capsys, command, "--json", "--no-cache", path)
    data = json.loads(out)
    assert [(w["kind"], w["count"]) for w in data["warnings"]] == [("truncated", 1)]
    assert data["warnings"][0]["end_ns"] is not None
    assert schema_problems(command, data) == []


def test_an_intact_trace_has_no_warning(tmp_path, capsys) -> None:
    path = tmp_path / "whole.json"
    path.write_text(_trace())
    status, out, _ = run_cli(capsys, "breakdown", "--no-cache", path)
    assert status == 0 and not out.startswith("warning")
    status, out, _ = run_cli(capsys, "breakdown", "--json", "--no-cache", path)
    assert json.loads(out)["warnings"] == []


@pytest.mark.parametrize("command", ["info", "summary", "ops", "iterations", "breakdown",
                                     "advise", "cluster", "memory", "export"])
@pytest.mark.parametrize("text", ['{"traceEvents": [', '{"traceEvents": []}', "[\n"])
def test_a_trace_of_no_events_says_so_and_fails(tmp_path, capsys, command: str,
                                                text: str) -> None:
    path = tmp_path / "nothing.json"
    path.write_text(text)
    extra = ["--all", "-o", str(tmp_path / "out.csv")] if command == "export" else []
    status, out, err = run_cli(capsys, command, *extra, path)
    assert status == 2 and out == ""
    assert err == (f"proftui: {path} has no events (its event array is empty, or the file "
                   "ends before the first event).\n")


def test_iterations_and_cluster_use_the_shared_names(capsys) -> None:
    _, out, _ = run_cli(capsys, "iterations", "--json", SAMPLES / "cluster_2rank")
    data = json.loads(out)
    first = data["iterations"][0]
    assert first["iteration"] == first["number"] and data["items"] == data["iterations"]
    assert all(isinstance(v, int) for v in first["parts_ns"].values())
    _, out, _ = run_cli(capsys, "cluster", "--json", SAMPLES / "cluster_2rank")
    data = json.loads(out)
    assert [(r["rank"], r["group"]) for r in data["ranks"]] == [(0, "rank 0"), (1, "rank 1")]
    assert data["slowest"]["rank"] == 1 and data["slowest"]["group"] == "rank 1"
