"""`proftui diff`: text, JSON, CSV, the gate's exit statuses and bad inputs."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from tui_support import run_cli

from proftui.tui.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
KINETO = str(SAMPLES / "kineto_demo.pt.trace.json")


def _trace(path: Path, step_us: list[float], kernel_us: int = 100, kernel: str = "sgemm"
           ) -> str:
    events, at = [], 0
    for n, length in enumerate(step_us, 1):
        events += [{"ph": "X", "name": f"ProfilerStep#{n}", "ts": at, "dur": length, "pid": 1,
                    "tid": 1, "cat": "user_annotation"},
                   {"ph": "X", "name": kernel, "ts": at + 10, "dur": kernel_us, "pid": 0,
                    "tid": 7, "cat": "kernel"}]
        at += length + 5
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def test_a_profile_against_itself_is_no_change_and_passes_the_gate(capsys):
    code, out, _ = run_cli(capsys, "diff", "--gate", "1", KINETO, KINETO)
    assert code == 0 and "no change" in out
    code, out, _ = run_cli(capsys, "diff", "--json", KINETO, KINETO)
    data = json.loads(out)
    assert data["step"]["delta_ns"] == 0 and data["comparable"] and data["verdict"] == "no change"
    assert {"base_total_ns", "new_total_ns", "delta_ns", "base_count", "new_count",
            "status"} <= set(data["ops"][0])


def test_the_gate(capsys, tmp_path):
    base = _trace(tmp_path / "base.json", [500, 500, 510, 505, 495, 502, 498])
    slower = _trace(tmp_path / "slow.json", [700, 700, 710, 705, 695, 702, 698], kernel_us=300)
    noisy = _trace(tmp_path / "noisy.json", [500, 490, 515, 500, 500, 496, 508])
    assert run_cli(capsys, "diff", "--gate", "10", base, slower)[0] == 1  # +40 %, conclusive
    assert run_cli(capsys, "diff", "--gate", "50", base, slower)[0] == 0  # under the threshold
    assert run_cli(capsys, "diff", "--gate", "10", slower, base)[0] == 0  # faster
    assert run_cli(capsys, "diff", "--gate", "10", base, noisy)[0] == 3  # inconclusive
    assert run_cli(capsys, "diff", base, noisy)[0] == 0  # no gate: the comparison is the result


def test_csv_of_every_op_and_no_overwrite(capsys, tmp_path):
    base = _trace(tmp_path / "base.json", [500] * 4)
    new = _trace(tmp_path / "new.json", [600] * 4, kernel_us=200)
    target = tmp_path / "ops.csv"
    assert run_cli(capsys, "diff", "--csv", str(target), base, new)[0] == 0
    rows = list(csv.DictReader(target.open()))
    assert rows[0]["key"] == "sgemm" and int(rows[0]["delta_ns"]) == 100_000
    code, _, err = run_cli(capsys, "diff", "--csv", str(target), base, new)
    assert code == 2 and "exists; --force overwrites it" in err


def test_an_unreadable_side_is_named_with_exit_2(capsys, tmp_path):
    base = _trace(tmp_path / "base.json", [500] * 4)
    code, out, err = run_cli(capsys, "diff", base, str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json" in err and not out
    with pytest.raises(SystemExit) as stop:  # bad usage: argparse's exit
        main(["diff", "--iterations", "5:2", base, base])
    assert stop.value.code == 2 and "ends before it starts" in capsys.readouterr().err


def _npu_rank(root: Path, rank: int, step_us: int, matmul_us: int) -> str:
    """A torch_npu rank dir: three steps (the first the warm-up) and an op_statistic.csv."""
    out = root / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    (out / "trace_view.json").write_text(json.dumps([
        {"ph": "X", "name": f"ProfilerStep#{n}", "ts": n * 1000, "dur": step_us, "pid": 7,
         "tid": 7, "cat": "user_annotation"} for n in (1, 2, 3)]))
    (out / "op_statistic.csv").write_text(
        f"OP Type,Core Type,Count,Total Time(us)\nMatMul,AI_CORE,2,{matmul_us}\n")
    return str(root)


def test_ranks_slowest_and_summary_tables_in_json_and_text(capsys, tmp_path):
    for rank in (0, 1):
        base = _npu_rank(tmp_path / "base", rank, 500 + 100 * rank, 10)
        new = _npu_rank(tmp_path / "new", rank, 400 + 300 * rank, 15)
    code, out, _ = run_cli(capsys, "diff", "--json", base, new)
    data = json.loads(out)
    assert code == 0 and {"ranks", "slowest", "tables", "ops", "step"} <= set(data)
    assert data["ranks"][1] == {"base_group": "rank 1", "new_group": "rank 1",
                                "base_ns": 600_000, "new_ns": 700_000, "delta_ns": 100_000,
                                "delta_pct": pytest.approx(100 / 6)}
    assert data["slowest"]["new"] == {"group": "rank 1", "step_ns": 700_000}
    [stat] = data["tables"]
    assert (stat["kind"], stat["scope"], stat["skipped"]) == ("op_statistic", "whole capture",
                                                              None)
    assert stat["rows"] == [{"key": "MatMul (AI_CORE)", "base_total_ns": 20_000,
                             "new_total_ns": 30_000, "delta_ns": 10_000, "base_count": 4,
                             "new_count": 4, "status": "changed"}]
    code, out, _ = run_cli(capsys, "diff", base, new)
    assert "slowest rank: base rank 1 (600 us), new rank 1 (700 us)\n" in out
    assert "ranks: median step per rank, matched by name\nRank" in out
    assert re.search(r"\nrank 1 +600 us +700 us +100 us +16\.67%\n", out)
    assert "op_statistic by OP Type (Core Type): whole capture, 2 ranks summed (1 in all)" in out


# ResNet-50 with 0 and 4 data-loader workers: a warm-up step, then steps 6 to 10 (ms)
RESNET_BASE = [159.2, 150.8, 141.3, 161.0, 148.5, 167.7]
RESNET_NEW = [130.0, 118.1, 108.4, 124.1, 115.0, 152.1]


def test_a_clear_improvement_passes_the_gate_with_its_evidence(capsys, tmp_path,
                                                               monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the sentences whole, not wrapped
    base = _trace(tmp_path / "base.json", [s * 1000 for s in RESNET_BASE])
    new = _trace(tmp_path / "new.json", [s * 1000 for s in RESNET_NEW])
    code, out, _ = run_cli(capsys, "diff", "--gate", "5", base, new)
    assert code == 0
    assert "new is faster by 22.7 % (97.1 % CI 12.2-32.7 %), Mann-Whitney p=0.029, 4 vs 4 " \
        "steps\n" in out
    assert "left out on each side: step 1 (warm-up), 6 (the capture's last step)\n" in out
    assert run_cli(capsys, "diff", "--gate", "5", new, base)[0] == 1  # the other way round
    code, out, _ = run_cli(capsys, "diff", "--json", base, new)
    data = json.loads(out)
    test = data["step"]["test"]
    assert data["step"]["outcome"] == "faster" and test["p_value"] == pytest.approx(2 / 70)
    assert (test["method"], test["base_n"], test["new_n"]) == ("Mann-Whitney U, exact", 4, 4)
    assert test["ci_pct"] == [pytest.approx(-32.67, abs=0.01), pytest.approx(-12.17, abs=0.01)]
    assert data["base"]["left_out"] == [{"iteration": 1, "why": "warm-up"},
                                        {"iteration": 6, "why": "the capture's last step"}]
    assert data["new"]["outliers"] == []


def test_an_outlier_step_is_named_and_not_tested(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the sentences whole, not wrapped
    base = _trace(tmp_path / "base.json", [500, 500, 510, 505, 495, 502, 498])
    new = _trace(tmp_path / "new.json", [400, 400, 410, 650, 395, 402, 398])
    code, out, _ = run_cli(capsys, "diff", "--json", base, new)
    data = json.loads(out)
    assert data["new"]["outliers"] == [4] and data["step"]["test"]["new_n"] == 4
    code, out, _ = run_cli(capsys, "diff", base, new)
    assert "new step 4 is an outlier (1.62 x its median), not tested" in out


def test_rows_fit_the_terminal_with_long_names(capsys, tmp_path, monkeypatch):
    name = "autograd::engine::evaluate_function: " + "ConvolutionBackward0_" * 10 + "end"
    base = _trace(tmp_path / "base.json", [500, 500, 510, 505, 495], kernel=name)
    new = _trace(tmp_path / "new.json", [400, 400, 410, 405, 395], kernel=name)
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run_cli(capsys, "diff", base, new)
    assert code == 0 and len(name) > 240 and "autograd::engine::e…Backward0_end" in out
    rows = out[out.index("step and breakdown"):].splitlines()  # the tables
    assert max(len(line) for line in rows) <= 100


def test_the_verdict_gives_steps_a_second_on_both_sides(capsys) -> None:
    samples = Path(__file__).resolve().parents[2] / "samples"
    base, new = samples / "diff_before.pt.trace.json", samples / "diff_after.pt.trace.json"
    _, out, _ = run_cli(capsys, "diff", "--json", base, new)
    step = json.loads(out)["step"]
    assert step["base_steps_per_s"] == pytest.approx(1e9 / step["base_ns"])
    assert step["new_steps_per_s"] == pytest.approx(1e9 / step["new_ns"])
    _, out, _ = run_cli(capsys, "diff", base, new)
    assert "95.2 steps/s -> 210 steps/s)" in out.splitlines()[2]


def test_the_verdicts_sentences_wrap_to_the_terminal(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    base = _trace(tmp_path / "base.json", [s * 1000 for s in RESNET_BASE])
    new = _trace(tmp_path / "new.json", [s * 1000 for s in RESNET_NEW])
    _, out, _ = run_cli(capsys, "diff", base, new)
    said = out.split("step and breakdown")[0].splitlines()[2:]  # after the two file lines
    assert said and all(len(line) <= 60 for line in said), said
    assert any(line.startswith("  ") for line in said)  # a sentence went on, indented
    assert "Mann-Whitney" in " ".join(said)


def test_ops_are_named_as_the_ops_command_names_them(capsys) -> None:
    samples = Path(__file__).resolve().parents[2] / "samples"
    base, new = samples / "diff_before.pt.trace.json", samples / "diff_after.pt.trace.json"
    for by, key in (("name", "name"), ("type", "type")):
        _, out, _ = run_cli(capsys, "diff", "--json", "--by", by, base, new)
        ops = json.loads(out)["ops"]
        assert ops and all(o[key] == o["key"] for o in ops)  # the old name kept one release
        _, out, _ = run_cli(capsys, "ops", "--json", "--by", by, new)
        assert {r[key] for r in json.loads(out)["rows"]} & {o[key] for o in ops}
