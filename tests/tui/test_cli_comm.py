"""`proftui comm` on inline summaries: the JSON schema and values, the text, a profile
without communication data, damaged files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from comm_helpers import AG, AR, GROUP, write_analysis_db, write_text

from proftui.tui.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _rank(root: Path, rank: int = 0) -> Path:
    out = root / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write_text(out)
    (out / "kernel_details.csv").write_text("Name,Duration(us)\nMatMul,1\n")
    (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": rank}))
    return out


def test_json_schema_and_values(tmp_path: Path, capsys) -> None:
    _rank(tmp_path)
    assert main(["comm", "--json", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["sources", "not_used", "thresholds", "ranks", "n_collectives",
                          "collectives", "links", "links_not_judged", "flags", "warnings"]
    (source,) = data["sources"]
    assert source["format"] == "text" and source["problems"] == {"comm_bad_value": 1}
    assert source["error"] is None and source["path"].endswith("communication.json")
    (rank,) = data["ranks"]
    assert {k: rank[k] for k in ("rank", "group", "step", "ops", "elapse_ns", "transit_ns",
                                 "wait_ns", "sync_ns", "idle_ns", "moved_bytes")} == {
        "rank": None, "group": "", "step": 3, "ops": 2, "elapse_ns": 3_500_000,
        "transit_ns": 1_500_001, "wait_ns": 250_000, "sync_ns": 200_000, "idle_ns": 1_750_000,
        "moved_bytes": 40_600_000}
    hccs = rank["transports"][0]
    assert hccs == {"transport": "HCCS", "size_bytes": 40_000_000, "time_ns": 2_000_000,
                    "bandwidth_gbps": 20.0, "packets": 2, "large_packets": 1,
                    "large_packet_ratio": 0.5, "avg_packet_bytes": 20_000_000.0, "ops": 1,
                    "small_ops": 0, "peer_median_gbps": None, "slow": False,
                    "small_packets": False, "judged": True}
    assert data["n_collectives"] == 2
    first = data["collectives"][0]
    assert (first["name"], first["comm_group"], first["start_ns"], first["transit_ns"]) == (
        AR, GROUP, 1_000_000_000_000_500, 1_000_001)
    assert first["wait_ratio"] == pytest.approx(250_000 / 1_250_001)
    assert data["collectives"][1]["name"] == AG and data["collectives"][1]["wait_ns"] is None
    slow = [x for x in data["links"] if x["slow"]]
    assert [(x["src"], x["dst"], x["bandwidth_gbps"], x["peer_median_gbps"]) for x in slow] \
        == [("0", "3", 10.0, 20.0)]
    assert [f["kind"] for f in data["flags"]] == ["slow_link", "small_packets"]
    assert data["thresholds"]["slow_ratio"] == 0.8


def test_top_cuts_the_collectives(tmp_path: Path, capsys) -> None:
    _rank(tmp_path)
    assert main(["comm", "--json", "--top", "1", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_collectives"] == 2 and [c["name"] for c in data["collectives"]] == [AR]
    assert len(data["links"]) == 4  # every link


def test_text_output(tmp_path: Path, capsys) -> None:
    _rank(tmp_path)
    assert main(["comm", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # the figure left out said first, then the report
    warned, rest = out.split("\n", 1)
    assert warned == ("warning: damaged input, the numbers below lack what was lost: a "
                      "figure that is not a number, or is negative (left out)")
    assert rest.startswith("communication of 1 rank, from the text export\n")
    assert "collectives: 2 in all; top 2 by elapse" in out
    assert "links between ranks: 3 judged (LOCAL copies left out)" in out
    assert ("slow link: step 3: 0 -> 3 HCCS (allreduce) runs at 10.00 GB/s, 50% of the "
            "median of its 3 peers (20.00 GB/s)") in out
    assert "small packets: step 3: 1 of 1 ops on RDMA moved under 1 MB each" in out
    assert ("communication.json: 1 x a figure that is not a number, or is negative "
            "(left out)") in out
    line = next(x for x in out.splitlines() if AR in x)
    assert "2.5 ms" in line and "1 ms" in line and "40" in line


def test_the_sqlite_export_answers_the_same(tmp_path: Path, capsys) -> None:
    _rank(tmp_path / "text")
    out = tmp_path / "db" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write_analysis_db(out / "analysis.db")
    (out / "kernel_details.csv").write_text("Name,Duration(us)\nMatMul,1\n")
    answers = []
    for form in ("text", "db"):
        assert main(["comm", "--json", str(tmp_path / form)]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["sources"][0]["format"] == form
        answers.append({k: v for k, v in data.items() if k != "sources"})
    assert answers[0] == answers[1]


def test_no_communication_data_is_one_sentence(capsys) -> None:
    assert main(["comm", str(SAMPLES / "torch_npu")]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "has no communication data" in out
    assert main(["comm", "--json", str(SAMPLES / "torch_npu")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ranks"] == [] and data["collectives"] == [] and data["links"] == []


def test_a_damaged_summary_is_one_sentence_and_fails(tmp_path: Path, capsys) -> None:
    path = write_text(tmp_path, comm='{"step1": {"collective": {', matrix="[]")
    assert main(["comm", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("proftui: communication.json is not valid JSON at byte 26 "
                            "(damaged or cut short). communication_matrix.json is not a "
                            "communication summary (not a JSON object).\n")


def test_bad_usage(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["comm", "--top", "0", str(tmp_path)])
    assert info.value.code == 2
    assert "--top wants 1 or more" in capsys.readouterr().err
    assert main(["comm", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
