"""`proftui breakdown` and `proftui advise` on the bundled samples: text, JSON, errors."""

from __future__ import annotations

import json
from pathlib import Path

from tui_support import run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
KINETO = str(SAMPLES / "kineto_demo.pt.trace.json")
TORCH_NPU = str(SAMPLES / "torch_npu")


def test_breakdown_json_has_one_entry_per_step_in_integer_ns(capsys):
    code, out, _ = run_cli(capsys, "breakdown", "--json", KINETO)
    data = json.loads(out)
    assert code == 0 and [s["iteration"] for s in data["iterations"]] == list(range(1, 9))
    step = data["iterations"][0]
    assert {"start_ns", "step_ns", "device", "host"} <= set(step)
    assert all(isinstance(v, int) for k, v in step["device"].items() if k.endswith("_ns"))
    assert step["device"]["compute_ns"] > 0 and data["total"][0]["iteration"] is None


def test_breakdown_of_one_iteration_and_of_a_range(capsys):
    code, out, _ = run_cli(capsys, "breakdown", "--iteration", "6", "--json", KINETO)
    assert code == 0 and [s["iteration"] for s in json.loads(out)["iterations"]] == [6]
    code, out, _ = run_cli(capsys, "breakdown", "--range", "0:5ms", KINETO)
    assert code == 0 and "breakdown of the range" in out and "Compute" in out
    code, _, err = run_cli(capsys, "breakdown", "--iteration", "99", KINETO)
    assert code == 2 and "Iteration 99 is not in this profile" in err


def test_advise_text_and_json_agree(capsys):
    code, text, _ = run_cli(capsys, "advise", TORCH_NPU)
    assert code == 0 and text.startswith("1. HIGH ai_cpu")
    code, out, _ = run_cli(capsys, "advise", "--json", TORCH_NPU)
    data = json.loads(out)
    assert data["version"] == 2 and data["findings"][0]["rule"] == "ai_cpu"
    first = data["findings"][0]
    assert isinstance(first["time_lost_ns"], int) and first["evidence"][0]["end_ns"] > \
        first["evidence"][0]["start_ns"]
    assert {s["rule"] for s in data["skipped"]} >= {"slow_rank"}


def test_advise_settings_and_rules(capsys):
    code, out, _ = run_cli(capsys, "advise", "--json", "--set", "ai_cpu.min_op_us=5000",
                        "--set", "ai_cpu.max_share=0.9", TORCH_NPU)
    assert code == 0 and "ai_cpu" not in {f["rule"] for f in json.loads(out)["findings"]}
    code, _, err = run_cli(capsys, "advise", "--set", "ai_cpu.nope=1", TORCH_NPU)
    assert code == 2 and "Unknown setting" in err
    code, out, _ = run_cli(capsys, "advise", "--rules", "--json")
    rules = json.loads(out)["rules"]
    assert code == 0 and {"ai_cpu", "exposed_comm", "sync"} <= {r["rule"] for r in rules}


def test_summary_shows_the_top_findings(capsys):
    code, out, _ = run_cli(capsys, "summary", TORCH_NPU)
    assert code == 0 and "top findings" in out and "HIGH ai_cpu" in out
    code, out, _ = run_cli(capsys, "summary", "--json", TORCH_NPU)
    assert len(json.loads(out)["findings"]) <= 3
