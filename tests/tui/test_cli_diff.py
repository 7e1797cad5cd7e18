"""`proftui diff`: text, JSON, CSV, the gate's exit statuses and bad inputs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from proftui.tui.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
KINETO = str(SAMPLES / "kineto_demo.pt.trace.json")


def _trace(path: Path, step_us: list[int], kernel_us: int = 100) -> str:
    events, at = [], 0
    for n, length in enumerate(step_us, 1):
        events += [{"ph": "X", "name": f"ProfilerStep#{n}", "ts": at, "dur": length, "pid": 1,
                    "tid": 1, "cat": "user_annotation"},
                   {"ph": "X", "name": "sgemm", "ts": at + 10, "dur": kernel_us, "pid": 0,
                    "tid": 7, "cat": "kernel"}]
        at += length + 5
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_profile_against_itself_is_no_change_and_passes_the_gate(capsys):
    code, out, _ = _run(capsys, "diff", "--gate", "1", KINETO, KINETO)
    assert code == 0 and "no change" in out
    code, out, _ = _run(capsys, "diff", "--json", KINETO, KINETO)
    data = json.loads(out)
    assert data["step"]["delta_ns"] == 0 and data["comparable"] and data["verdict"] == "no change"
    assert {"base_total_ns", "new_total_ns", "delta_ns", "base_count", "new_count",
            "status"} <= set(data["ops"][0])


def test_the_gate(capsys, tmp_path):
    base = _trace(tmp_path / "base.json", [500, 500, 510, 505, 495])
    slower = _trace(tmp_path / "slow.json", [700, 700, 710, 705, 695], kernel_us=300)
    noisy = _trace(tmp_path / "noisy.json", [500, 490, 515, 500, 500])
    assert _run(capsys, "diff", "--gate", "10", base, slower)[0] == 1  # +40 %, conclusive
    assert _run(capsys, "diff", "--gate", "50", base, slower)[0] == 0  # under the threshold
    assert _run(capsys, "diff", "--gate", "10", slower, base)[0] == 0  # faster
    assert _run(capsys, "diff", "--gate", "10", base, noisy)[0] == 3  # inconclusive
    assert _run(capsys, "diff", base, noisy)[0] == 0  # no gate: the comparison is the result


def test_csv_of_every_op_and_no_overwrite(capsys, tmp_path):
    base = _trace(tmp_path / "base.json", [500] * 4)
    new = _trace(tmp_path / "new.json", [600] * 4, kernel_us=200)
    target = tmp_path / "ops.csv"
    assert _run(capsys, "diff", "--csv", str(target), base, new)[0] == 0
    rows = list(csv.DictReader(target.open()))
    assert rows[0]["key"] == "sgemm" and int(rows[0]["delta_ns"]) == 100_000
    code, _, err = _run(capsys, "diff", "--csv", str(target), base, new)
    assert code == 2 and "exists; --force overwrites it" in err


def test_an_unreadable_side_is_named_with_exit_2(capsys, tmp_path):
    base = _trace(tmp_path / "base.json", [500] * 4)
    code, out, err = _run(capsys, "diff", base, str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json" in err and not out
    with pytest.raises(SystemExit) as stop:  # bad usage: argparse's exit
        main(["diff", "--iterations", "5:2", base, base])
    assert stop.value.code == 2 and "ends before it starts" in capsys.readouterr().err
