"""The export and summary commands, and the conventions every command keeps: --help with
examples, --version, exit statuses, one-sentence errors on stderr, output on stdout."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from tui_support import run_cli

from proftui.tui.cli import COMMANDS

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _x(name, cat, pid, tid, ts, dur, args=None):
    event = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args is not None:
        event["args"] = args
    return event


# Two steps on the host; kernels on a GPU stream. Span [0, 100) µs.
TRACE = {"traceEvents": [
    {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    _x("ProfilerStep#1", "user_annotation", 1, 1, 0, 40),
    _x("=conv", "cpu_op", 1, 1, 5, 10, {"Input Dims": [[1, 2]], "id": 3}),
    _x("ProfilerStep#2", "user_annotation", 1, 1, 40, 60),
    _x("-conv", "cpu_op", 1, 1, 45, 30, {"id": -4}),
    _x("kernel", "kernel", 0, 7, 10, 20),
    _x("kernel", "kernel", 0, 7, 50, 50),
]}


@pytest.fixture
def trace(tmp_path) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(TRACE))
    return str(path)


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_export_to_stdout(trace, capsys) -> None:
    status, out, err = run_cli(capsys, "export", trace, "--range", "4us:30us")
    assert status == 0 and err == ""
    rows = _rows(out)
    assert rows[0][:7] == ["name", "category", "process", "thread", "start_from_capture(us)",
                           "end_from_capture(us)", "duration(us)"]
    assert [(r[0], r[4], r[6]) for r in rows[1:]] == [
        ("ProfilerStep#1", "0.000", "40.000"), ("'=conv", "5.000", "10.000"),
        ("kernel", "10.000", "20.000")]


def test_export_iteration_tracks_args_units_raw(trace, capsys) -> None:
    status, out, _ = run_cli(capsys, "export", trace, "--iteration", "2", "--tracks", "thread 1",
                          "--args", "id,Input Dims", "--unit", "ns", "--raw")
    assert status == 0
    rows = _rows(out)
    assert rows[0][-2:] == ["args.id", "args.Input Dims"]
    assert [(r[0], r[4], r[6], r[-2]) for r in rows[1:]] == [
        ("ProfilerStep#2", "40000", "60000", ""), ("-conv", "45000", "30000", "-4")]
    status, out, _ = run_cli(capsys, "export", trace, "--all", "--side", "device", "-o", "-")
    assert status == 0 and {r[0] for r in _rows(out)[1:]} == {"kernel"}


def test_export_ops(trace, capsys) -> None:
    status, out, _ = run_cli(capsys, "export", trace, "--all", "--what", "ops", "--by",
                          "category", "--unit", "us")
    assert status == 0
    # The ProfilerStep#N annotations (user_annotation) are markers, not operators.
    assert _rows(out) == [
        ["Category", "Count", "Total(us)", "Self(us)", "Avg(us)", "Min(us)", "Max(us)",
         "Window(%)", "Busy(%)"],
        ["kernel", "2", "70.000", "70.000", "35.000", "20.000", "50.000", "70",
         repr(70 / 110 * 100)],
        ["cpu_op", "2", "40.000", "40.000", "20.000", "10.000", "30.000", "40",
         repr(40 / 110 * 100)]]


def test_export_to_a_file_refuses_to_overwrite(trace, tmp_path, capsys) -> None:
    target = tmp_path / "out.csv"
    status, out, err = run_cli(capsys, "export", trace, "--all", "-o", str(target))
    assert status == 0 and out == ""
    assert err == f"wrote 6 rows to {target}\n"
    before = target.read_bytes()
    status, out, err = run_cli(capsys, "export", trace, "--all", "--unit", "ms", "-o", str(target))
    assert status == 1 and out == ""
    assert err == f"proftui: {target} already exists; --force overwrites it.\n"
    assert target.read_bytes() == before
    status, _, err = run_cli(capsys, "export", trace, "--all", "--unit", "ms", "--force",
                          "-o", str(target))
    assert status == 0 and b"start_from_capture(ms)" in target.read_bytes()
    status, _, err = run_cli(capsys, "export", trace, "--all", "-o", str(tmp_path))
    assert status == 1 and "is a directory" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, status, message", [
    ([], 2, "one of the arguments --iteration --range --all is required"),
    (["--all", "--range", "1:2"], 2, "not allowed with argument"),
    (["--all", "--what", "ops", "--args", "id"], 2, "--args applies to --what events only"),
    (["--all", "--unit", "min"], 2, "invalid choice"),
    (["--all", "--tracks", "nothing"], 1, 'no track matches "nothing"'),
    (["--all", "--tracks", "/(/"], 2, "not a valid regular expression"),
    (["--range", "9:x"], 2, 'Cannot read "x" as a number'),
    (["--iteration", "9"], 2, "Iteration 9 is not in this profile"),
])
def test_export_errors(trace, capsys, argv, status, message) -> None:
    got, out, err = run_cli(capsys, "export", trace, *argv)
    assert (got, out) == (status, "")
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_summary_plain_text_and_json(capsys) -> None:
    sample = str(SAMPLES / "ascend_cann8")
    status, out, err = run_cli(capsys, "summary", "--no-cache", sample)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"summary of {sample}"
    assert "\x1b" not in out  # piped: no colours, no box drawing
    at = lines.index("top device op types (device side) by total, of 10")
    assert lines[at + 2].split() == ["DropOutDoMask", "12", "10.937", "ms", "62.98%"]
    assert lines[-1] == "diagnostics none"
    status, out, _ = run_cli(capsys, "summary", "--json", sample)
    data = json.loads(out)
    assert data["top_device_types"]["rows"][0]["name"] == "DropOutDoMask"
    assert 0 < data["busy"][0]["device_ratio"] < 1


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help_with_examples_and_version(command, capsys) -> None:
    status, out, err = run_cli(capsys, command, "--help")
    assert status == 0 and err == "" and "examples:" in out and f"proftui {command}" in out
    status, out, _ = run_cli(capsys, command, "--version")
    assert status == 0 and out.startswith("proftui ")


def test_top_level_conventions(tmp_path, capsys) -> None:
    status, out, err = run_cli(capsys)
    assert status == 2 and out == "" and "usage: proftui PATH" in err
    status, out, err = run_cli(capsys, "--help")
    assert status == 0 and "proftui export PATH" in out and "proftui summary PATH" in out
    status, out, err = run_cli(capsys, str(tmp_path / "nope.json"))
    assert status == 2 and out == "" and "no such file or directory" in err
    assert err.count("\n") == 1


def test_an_existing_output_is_refused_before_the_trace_is_read(tmp_path, capsys) -> None:
    target = tmp_path / "out.csv"
    target.write_text("keep")
    status, _, err = run_cli(capsys, "export", str(tmp_path / "never.json"), "--all",
                          "-o", str(target))
    assert status == 1 and "already exists" in err and target.read_text() == "keep"


def test_export_time_relative_or_absolute_on_the_files_own_clock(tmp_path, capsys) -> None:
    """--time relative (the default) counts from the capture start; --time absolute writes
    each file's own timestamps as it wrote them, exactly (no float noise at epoch µs), also
    where a base time moved a worker onto the shared clock; the headers say which."""
    epoch = tmp_path / "epoch.json"
    epoch.write_text(json.dumps({"traceEvents": [
        _x("a", "cpu_op", 1, 1, "1780676244313289.123", "2.5"),
        _x("b", "cpu_op", 1, 1, "1780676244313290.001", 1)]}))
    status, out, _ = run_cli(capsys, "export", str(epoch), "--all")
    rows = _rows(out)
    assert status == 0 and rows[0][4:7] == ["start_from_capture(us)", "end_from_capture(us)",
                                            "duration(us)"]
    assert [r[4:7] for r in rows[1:]] == [["0.000", "2.500", "2.500"],
                                          ["0.878", "1.878", "1.000"]]
    status, out, _ = run_cli(capsys, "export", str(epoch), "--all", "--time", "absolute")
    rows = _rows(out)
    assert status == 0 and rows[0][4:7] == ["start_profiler_clock(us)",
                                            "end_profiler_clock(us)", "duration(us)"]
    assert [r[4:6] for r in rows[1:]] == [["1780676244313289.123", "1780676244313291.623"],
                                          ["1780676244313290.001", "1780676244313291.001"]]
    status, out, _ = run_cli(capsys, "export", str(epoch), "--all", "--time", "absolute",
                          "--unit", "ns")
    assert [r[4] for r in _rows(out)[1:]] == ["1780676244313289123", "1780676244313290001"]
    # Two Kineto workers written relative to their base times: in the app one axis, here
    # each row back on its file's clock.
    workers = tmp_path / "workers"
    workers.mkdir()
    for name, base, ts in (("w0", 1743521598000000000, "2000.125"),
                           ("w1", 1743521598000500000, "1500.5")):
        head = json.dumps({"schemaVersion": 1, "baseTimeNanoseconds": base})[:-1]
        events = json.dumps([_x(f"step {name}", "", 1, 1, ts, 1)])
        (workers / f"{name}.pt.trace.json").write_text(f'{head}, "traceEvents": {events}}}')
    status, out, _ = run_cli(capsys, "export", str(workers), "--all", "--time", "absolute")
    assert status == 0
    assert sorted((r[0], r[4]) for r in _rows(out)[1:]) == [("step w0", "2000.125"),
                                                           ("step w1", "1500.500")]
    status, out, _ = run_cli(capsys, "export", str(workers), "--all")
    assert sorted((r[0], r[4]) for r in _rows(out)[1:]) == [("step w0", "0.000"),
                                                           ("step w1", "0.375")]


def test_export_time_applies_to_the_events_csv_only(trace, capsys) -> None:
    status, _, err = run_cli(capsys, "export", trace, "--all", "--what", "ops", "--time",
                          "absolute")
    assert status == 2 and "--time applies to the events' CSV only" in err
    status, _, err = run_cli(capsys, "export", trace, "--all", "--time", "sideways")
    assert status == 2 and "invalid choice" in err
    status, out, _ = run_cli(capsys, "export", "--help")
    assert "--time {relative,absolute}" in out and "profiler's clock" in out


def test_args_no_event_holds_are_said_with_the_keys_there_are(tmp_path, capsys) -> None:
    out = tmp_path / "it4.csv"
    status, _, err = run_cli(capsys, "export", SAMPLES / "torch_npu", "--iteration", "4",
                             "--tracks", "stream", "--args", "correlation,Task Type",
                             "-o", out)
    assert status == 0
    assert ("no event written has the args correlation (their columns are empty); the "
            "events' args keys: Physic Stream Id, Task Type") in err
    rows = list(csv.DictReader(out.open()))
    assert rows and all(r["args.correlation"] == "" for r in rows)
    assert all(r["args.Task Type"] for r in rows)
    status, _, err = run_cli(capsys, "export", SAMPLES / "torch_npu", "--iteration", "4",
                             "--args", "Task Type", "-o", tmp_path / "b.csv")
    assert status == 0 and "no event written" not in err
