"""Summary tables of two profiles compared by key, on small CSVs written in the test."""

from __future__ import annotations

from proftui.core.analysis.diff import Opened, compare, normalise
from proftui.core.analysis.diff_report import diff_tables
from proftui.core.analysis.table_diff import compare_tables, delta_tables
from proftui.core.cache.tables import read_table
from proftui.core.ops.iterations import find_iterations

from helpers import load, write_trace

OP_STATISTIC = "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Ratio(%)\n"
KERNEL_DETAILS = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"


def table(tmp_path, name, kind, text, group=""):
    path = tmp_path / f"{group or 'one'}_{name}"
    path.write_text(text)
    return read_table(str(path), kind, group)


def by_key(delta):
    return {r.key: (r.base_total_ns, r.new_total_ns, r.base_count, r.new_count, r.status)
            for r in delta.rows}


def test_op_statistic_by_op_and_core_type_summed_over_ranks(tmp_path):
    base = [table(tmp_path, "a.csv", "op_statistic", OP_STATISTIC +
                  "MatMul,AI_CORE,2,100.5,50,50.25,60\n"
                  "Add,AI_VECTOR_CORE,3,30,10,10,20\n"
                  "Cast,AI_VECTOR_CORE,1,7.25,7.25,7.25,5\n", "rank 0"),
            table(tmp_path, "a.csv", "op_statistic", OP_STATISTIC +
                  "MatMul,AI_CORE,2,99.5,50,50.25,60\n"
                  "MatMul,AI_VECTOR_CORE,1,4,4,4,1\n", "rank 1")]
    new = [table(tmp_path, "b.csv", "op_statistic", OP_STATISTIC +
                 "MatMul,AI_CORE,4,150.25,30,37.5,60\n"
                 "Add,AI_VECTOR_CORE,3,30,10,10,20\n"
                 "Gelu,AI_VECTOR_CORE,5,12.001,2,2.4,5\n"
                 "MatMul,AI_VECTOR_CORE,1,4,4,4,1\n")]
    [delta] = compare_tables(base, new)
    assert (delta.kind, delta.key, delta.scope, delta.skipped) == (
        "op_statistic", "OP Type (Core Type)", "whole capture", None)
    assert delta.base_groups == ["rank 0", "rank 1"] and delta.new_groups == [""]
    assert by_key(delta) == {
        "MatMul (AI_CORE)": (200_000, 150_250, 4, 4, "changed"),  # both ranks' rows summed
        "Add (AI_VECTOR_CORE)": (30_000, 30_000, 3, 3, "unchanged"),
        "Cast (AI_VECTOR_CORE)": (7_250, 0, 1, 0, "removed"),
        "Gelu (AI_VECTOR_CORE)": (0, 12_001, 0, 5, "added"),
        "MatMul (AI_VECTOR_CORE)": (4_000, 4_000, 1, 1, "unchanged")}
    # by |delta|, then key
    assert [r.key for r in delta.rows] == [
        "MatMul (AI_CORE)", "Gelu (AI_VECTOR_CORE)", "Cast (AI_VECTOR_CORE)",
        "Add (AI_VECTOR_CORE)", "MatMul (AI_VECTOR_CORE)"]
    assert delta.rows[0].delta_ns == -49_750
    assert delta.to_json(top=2)["rows"][1] == {
        "key": "Gelu (AI_VECTOR_CORE)", "base_total_ns": 0, "new_total_ns": 12_001,
        "delta_ns": 12_001, "base_count": 0, "new_count": 5, "status": "added"}
    assert delta.to_json()["n_rows"] == 5


def test_kernel_names_are_matched_as_the_op_deltas_match_them(tmp_path):
    base = [table(tmp_path, "a.csv", "kernel_details", KERNEL_DETAILS +
                  '1,triton_poi_fused_add_0,Add,AI_CORE,"1000.000\t",10.5\n'
                  '1,triton_poi_fused_add_1,Add,AI_CORE,"1020.000\t",11.5\n'
                  '1,hcom_allReduce__586_0_1,hcom,HCCL,"1040.000\t",N/A\n')]
    new = [table(tmp_path, "b.csv", "kernel_details", KERNEL_DETAILS +
                 '1,triton_poi_fused_add_7,Add,AI_CORE,"1000.000\t",20\n'
                 '1,hcom_allReduce__12_0_1,hcom,HCCL,"1040.000\t",40.001\n')]
    [delta] = compare_tables(base, new, normalise)
    assert by_key(delta) == {
        "triton_poi_fused_add": (22_000, 20_000, 2, 1, "changed"),  # one call a row
        "hcom_allReduce_": (0, 40_001, 1, 1, "changed")}  # N/A: a call of no known time
    [plain] = compare_tables(base, new)  # without the op deltas' matching, names as written
    assert len(plain.rows) == 5


def test_kinds_on_one_side_or_without_a_needed_column_are_listed_not_compared(tmp_path):
    api = table(tmp_path, "api.csv", "api_statistic",
                "Level,API Name,Time(us),Count\nacl,aclrtMemcpy,868.59,3\n")
    summary = table(tmp_path, "s.csv", "op_summary",
                    "Op Name,OP Type,Task Duration(us)\nMatMul_1,MatMul,5\n")
    no_time = table(tmp_path, "s2.csv", "op_summary",
                    "Op Name,OP Type,Task Wait Time(us)\nMatMul_1,MatMul,5\n", "device 1")
    no_unit = table(tmp_path, "o.csv", "operator_details",
                    "Name,Device Total Duration\naten::mm,5\n")
    found = {d.kind: d for d in compare_tables([api, summary, no_unit], [no_time, no_unit])}
    assert found["api_statistic"].skipped == "only the base profile has api_statistic tables"
    assert found["op_summary"].skipped == (
        'new: device 1_s2.csv [device 1] has no "Task Duration" column')
    assert found["operator_details"].skipped == (
        'base: one_o.csv: "Device Total Duration" is not a duration with a time unit')
    assert all(not d.rows for d in found.values())
    assert "kernel_details" not in found  # on neither side: not listed
    [(title, reasons)] = delta_tables(list(found.values()))
    assert title == "summary tables not compared" and reasons.n_rows == 3


def test_a_table_that_changed_is_a_change_though_the_trace_is_the_same(tmp_path):
    events = [{"ph": "X", "name": f"ProfilerStep#{n}", "ts": n * 100, "dur": 90, "pid": 1,
               "tid": 1, "cat": "user_annotation"} for n in range(1, 5)]
    index = load(write_trace(tmp_path / "t.json", events))
    iterations = find_iterations(index)
    stat = [table(tmp_path, f"{n}.csv", "op_statistic", OP_STATISTIC + f"MatMul,AI_CORE,2,{n},"
                  "1,1,100\n") for n in (10, 12)]
    same = compare(Opened("a", index, stat[:1], iterations), Opened("b", index, stat[:1],
                                                                    iterations))
    assert same.verdict == "no change" and same.tables[0].rows[0].delta_ns == 0
    changed = compare(Opened("a", index, stat[:1], iterations),
                      Opened("b", index, stat[1:], iterations))
    assert changed.verdict != "no change"
    assert changed.to_json()["tables"][0]["rows"][0]["delta_ns"] == 2_000
    titles = [title for title, _ in diff_tables(changed)]
    assert titles[-1] == "op_statistic by OP Type (Core Type): whole capture (1 in all)"


def test_captures_of_different_lengths_are_warned_about_when_tables_are_compared(tmp_path):
    def side(name, steps):
        events = [{"ph": "X", "name": f"ProfilerStep#{n}", "ts": n * 100, "dur": 90, "pid": 1,
                   "tid": 1, "cat": "user_annotation"} for n in range(1, steps + 1)]
        index = load(write_trace(tmp_path / name, events))
        stat = table(tmp_path, name + ".csv", "op_statistic",
                     OP_STATISTIC + "MatMul,AI_CORE,2,10,1,1,100\n")
        return Opened(name, index, [stat], find_iterations(index)), Opened(
            name, index, [], find_iterations(index))

    (four, four_bare), (six, six_bare) = side("a.json", 4), side("b.json", 6)
    warned = [w for w in compare(four, six).warnings if "captured" in w]
    assert warned == ["the sides captured 4 and 6 steps: the summary tables' whole-capture "
                      "totals differ by that too"]
    assert not [w for w in compare(four_bare, six_bare).warnings if "captured" in w]
