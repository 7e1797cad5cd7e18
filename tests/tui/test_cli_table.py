"""`proftui table`: the summary tables listed, and one printed as text, JSON or CSV."""

from __future__ import annotations

import json

import pytest
from tui_support import run_cli

from proftui.core.cache.tables import read_table
from proftui.core.tables.by_name import stack
from proftui.tui.cli import main
from proftui.tui.commands.common import share_widths
from proftui.tui.commands.table import fit_columns

OP_STATISTIC_0 = (
    "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
    "Add,AI_VECTOR_CORE,10,50,4,5,6,10.5\n"
    "MatMul,AI_CORE,4,400,90,100,110,80\n"
    "Cast,AI_VECTOR_CORE,20,45.5,2,2.275,3,9.5\n")
OP_STATISTIC_1 = (
    "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
    "Add,AI_VECTOR_CORE,10,60,5,6,7,12\n"
    "MatMul,AI_CORE,4,440,100,110,120,88\n")
KERNEL_DETAILS = (
    "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\n"
    "1,add_1,Add,AI_VECTOR_CORE,1736408883704643.212\t,5.5,0\n"
    "1,matmul_1,MatMul,AI_CORE,1736408883704801.156\t,100.25,1\n")
# msprof names its files with the export's time stamp; the kind leaves it out.
OP_SUMMARY = (
    "Device_id,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)\n"
    "0,conv1,Conv2D,AI_CORE,1780676244000133.500\t,181.506\n"
    "0,bn1,BNTrainingUpdate,AI_VECTOR_CORE,1780676244000320.000\t,45.049\n"
    "0,drop1,DropOutDoMask,AI_CPU,1780676244000522.250\t,949.449\n")
AICPU = (
    "Device_id,Timestamp(us),Node,Compute_time(us),Memcpy_time(us),Task_time(us),"
    "Dispatch_time(us),Total_time(us),Stream ID,Task ID\n"
    "0,1780676244000522.250\t,DropOutDoMask-op104,759.559,94.945,901.976,12.5,949.449,3,4\n"
    "0,1780676244001947.250\t,DropOutDoMask-op109,698.139,87.267,829.04,12.5,2872.673,3,9\n"
    "0,1780676244003000.000\t,Cast-op7,8,1,9,12.5,21.5,3,11\n")


@pytest.fixture
def ranks(tmp_path) -> str:
    """Two ranks' summary CSVs (op_statistic both, kernel_details on rank 0 only)."""
    for rank, text in (("rank_0", OP_STATISTIC_0), ("rank_1", OP_STATISTIC_1)):
        (tmp_path / "ranks" / rank).mkdir(parents=True)
        (tmp_path / "ranks" / rank / "op_statistic.csv").write_text(text)
    (tmp_path / "ranks" / "rank_0" / "kernel_details.csv").write_text(KERNEL_DETAILS)
    return str(tmp_path / "ranks")


@pytest.fixture
def device(tmp_path) -> str:
    """One device's msprof summaries, named with their time stamp."""
    out = tmp_path / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA" / (
        "mindstudio_profiler_output")
    out.mkdir(parents=True)
    (out / "op_summary_20260605161737.csv").write_text(OP_SUMMARY)
    (out / "aicpu_20260605161737.csv").write_text(AICPU)
    return str(out.parent)


def test_list_tables(ranks, capsys) -> None:
    status, out, err = run_cli(capsys, "table", ranks)
    assert status == 0 and err == ""
    assert out.splitlines() == [
        f"3 summary tables in {ranks}",
        "Kind            Group   Rows  Columns  File",
        "kernel_details  rank 0     2        7  rank_0/kernel_details.csv",
        "op_statistic    rank 0     3        8  rank_0/op_statistic.csv",
        "op_statistic    rank 1     2        8  rank_1/op_statistic.csv",
    ]
    status, out, _ = run_cli(capsys, "table", ranks, "--json")
    listing = json.loads(out)
    assert status == 0 and listing["root"] == ranks
    assert listing["tables"][2] == {
        "kind": "op_statistic", "group": "rank 1", "name": "op_statistic.csv",
        "path": f"{ranks}/rank_1/op_statistic.csv", "n_rows": 2, "n_columns": 8,
        "error": None}


def test_list_a_trace_without_tables(tmp_path, capsys) -> None:
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, '
                     '"ts": 0, "dur": 5}]}')
    status, out, _ = run_cli(capsys, "table", str(trace))
    assert status == 0 and out == f"{trace} holds no summary tables.\n"


def test_op_statistic_of_several_ranks_by_ratio(ranks, capsys) -> None:
    status, out, err = run_cli(capsys, "table", ranks, "op_statistic")
    assert status == 0 and err == ""
    assert out.splitlines() == [
        "op_statistic of rank 0, rank 1: 5 rows, by Ratio(%) descending",
        "Group   OP Type  Core Type       Count  Total Time(us)  Min "
        "Time(us)  Avg Time(us)  Max Time(us)  Ratio(%)",
        "rank 1  MatMul   AI_CORE             4          440 us      "
        "  100 us        110 us        120 us    88.00%",
        "rank 0  MatMul   AI_CORE             4          400 us      "
        "   90 us        100 us        110 us    80.00%",
        "rank 1  Add      AI_VECTOR_CORE     10           60 us      "
        "    5 us          6 us          7 us    12.00%",
        "rank 0  Add      AI_VECTOR_CORE     10           50 us      "
        "    4 us          5 us          6 us    10.50%",
        "rank 0  Cast     AI_VECTOR_CORE     20         45.5 us      "
        "    2 us      2.275 us          3 us     9.50%",
    ]


@pytest.mark.parametrize(("name", "first_column", "order"), [
    ("op_summary", "Op Name", ["drop1", "conv1", "bn1"]),  # Task Duration descending
    ("aicpu", "Node", ["DropOutDoMask-op109", "DropOutDoMask-op104", "Cast-op7"]),
])
def test_default_sorts(device, capsys, name, first_column, order) -> None:
    status, out, _ = run_cli(capsys, "table", device, name, "--json")
    result = json.loads(out)
    names = [c["header"] for c in result["columns"]]
    assert status == 0 and result["groups"] == [""]
    assert [row[names.index(first_column)] for row in result["rows"]] == order
    expected = {"op_summary": "Task Duration(us)", "aicpu": "Total_time(us)"}[name]
    assert result["sort"] == {"column": expected, "descending": True}
    status, out, _ = run_cli(capsys, "table", device, name)
    assert f"by {expected} descending" in out.splitlines()[0]


def test_where_sort_asc_columns_and_top(ranks, capsys) -> None:
    status, out, _ = run_cli(capsys, "table", ranks, "op_stat", "--where",
                          "Core Type~vector Count>=10", "--sort", "Total Time", "--asc",
                          "--columns", "op type,Total Time")
    assert status == 0
    assert out.splitlines() == [
        "op_statistic of rank 0, rank 1: 5 rows, 3 matching Core Type~vector Count>=10, by "
        "Total Time(us) ascending",
        "Group   OP Type  Total Time(us)",
        "rank 0  Cast            45.5 us",
        "rank 0  Add               50 us",
        "rank 1  Add               60 us",
    ]
    # Text sorts A to Z unless --desc; --top keeps the first K and says how many are left.
    status, out, _ = run_cli(capsys, "table", ranks, "op_statistic", "--sort", "OP Type",
                          "--columns", "Group,OP Type", "--top", "2")
    assert out.splitlines()[1:] == [
        "Group   OP Type", "rank 0  Add", "rank 1  Add", "... and 3 more rows (--top 0 prints all)"]
    status, out, _ = run_cli(capsys, "table", ranks, "op_statistic", "--sort", "OP Type", "--desc",
                          "--columns", "OP Type,Group", "--top", "1")
    assert out.splitlines()[1:3] == ["OP Type  Group", "MatMul   rank 0"]


def test_group_picks_one_rank(ranks, capsys) -> None:
    status, out, _ = run_cli(capsys, "table", ranks, "op_statistic", "--group", "rank 1",
                          "--columns", "OP Type,Ratio")
    assert status == 0
    assert out.splitlines() == [
        "op_statistic of rank 1: 2 rows, by Ratio(%) descending",
        "OP Type  Ratio(%)", "MatMul     88.00%", "Add        12.00%"]
    status, _, err = run_cli(capsys, "table", ranks, "op_statistic", "--group", "rank 3")
    assert status == 2
    assert err == ('proftui: op_statistic has no group "rank 3"; its groups are "rank 0", '
                   '"rank 1".\n')


def test_json_schema_with_integer_ns(ranks, capsys) -> None:
    status, out, err = run_cli(capsys, "table", ranks, "kernel_details", "--json",
                            "--where", "Duration>1us")
    assert status == 0 and err == ""
    assert json.loads(out) == {
        "kind": "kernel_details",
        "groups": ["rank 0"],
        "columns": [
            {"name": "Step Id", "header": "Step Id", "unit": "", "kind": "number"},
            {"name": "Name", "header": "Name", "unit": "", "kind": "text"},
            {"name": "Type", "header": "Type", "unit": "", "kind": "text"},
            {"name": "Accelerator Core", "header": "Accelerator Core", "unit": "",
             "kind": "text"},
            {"name": "Start Time", "header": "Start Time(us)", "unit": "ns",
             "kind": "timestamp"},
            {"name": "Duration", "header": "Duration(us)", "unit": "ns", "kind": "number"},
            {"name": "Wait Time", "header": "Wait Time(us)", "unit": "ns", "kind": "number"},
        ],
        "rows": [
            [1, "matmul_1", "MatMul", "AI_CORE", 1736408883704801156, 100250, 1000],
            [1, "add_1", "Add", "AI_VECTOR_CORE", 1736408883704643212, 5500, 0],
        ],
        "n_rows": 2,
        "sort": {"column": "Duration(us)", "descending": True},
        "where": "Duration>1us", "warnings": [],
    }
    # n_rows counts the matching rows; rows holds the first --top; missing cells are null.
    status, out, _ = run_cli(capsys, "table", ranks, "op_statistic", "--json", "--top", "1",
                          "--columns", "OP Type,Total Time")
    result = json.loads(out)
    assert result["n_rows"] == 5 and result["rows"] == [["rank 1", "MatMul", 440000]]
    assert [c["name"] for c in result["columns"]] == ["Group", "OP Type", "Total Time"]


def test_json_missing_cells_are_null(tmp_path, capsys) -> None:
    (tmp_path / "op_statistic.csv").write_text(
        "OP Type,Count,Total Time(us),Ratio(%)\nAdd,N/A,,5\nN/A,2,1.5,N/A\n")
    status, out, _ = run_cli(capsys, "table", str(tmp_path), "op_statistic", "--json")
    assert status == 0
    assert json.loads(out)["rows"] == [["Add", None, None, 5], [None, 2, 1500, None]]


def test_csv_to_stdout_and_to_a_file(ranks, tmp_path, capsys) -> None:
    status, out, err = run_cli(capsys, "table", ranks, "op_statistic", "--csv", "--top", "2")
    assert status == 0 and err == ""
    assert out == ("Group,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
                   "Max Time(us),Ratio(%)\r\n"
                   "rank 1,MatMul,AI_CORE,4,440,100,110,120,88\r\n"
                   "rank 0,MatMul,AI_CORE,4,400,90,100,110,80\r\n")
    target = tmp_path / "k.csv"
    status, _, err = run_cli(capsys, "table", ranks, "kernel_details", "--csv", "-o", str(target),
                          "--columns", "Name,Start Time,Duration")
    assert status == 0 and err == f"wrote 2 rows to {target}\n"
    assert target.read_text() == ("Name,Start Time(us),Duration(us)\n"
                                  "matmul_1,1736408883704801.156,100.25\n"
                                  "add_1,1736408883704643.212,5.5\n")
    # An existing file is never overwritten without --force.
    target.write_text("mine")
    status, _, err = run_cli(capsys, "table", ranks, "op_statistic", "--csv", "-o", str(target))
    assert status == 1 and target.read_text() == "mine"
    assert err == f"proftui: {target} already exists; --force overwrites it.\n"
    status, _, _ = run_cli(capsys, "table", ranks, "op_statistic", "--csv", "-o", str(target),
                        "--force")
    assert status == 0 and target.read_text().startswith("Group,OP Type,")


def test_unknown_name_and_bad_filter_are_one_sentence(ranks, capsys) -> None:
    status, out, err = run_cli(capsys, "table", ranks, "nope")
    assert status == 2 and out == ""
    assert err == ('proftui: No table "nope" in this profile; its tables are kernel_details, '
                   "op_statistic.\n")
    status, out, err = run_cli(capsys, "table", ranks, "op_statistic", "--where", "Count>>3")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith('proftui: Cannot read ">3" as a number')
    status, _, err = run_cli(capsys, "table", ranks, "op_statistic", "--where", "OP Type>3")
    assert status == 2
    assert err == 'proftui: Column "OP Type" holds text: use OP Type~text or OP Type=text.\n'
    status, _, err = run_cli(capsys, "table", ranks, "op_statistic", "--sort", "Colour")
    assert status == 2 and err.startswith('proftui: Unknown column "Colour" (known: Group, ')


@pytest.mark.parametrize(("argv", "says"), [
    (["--where", "x"], "--where needs a table NAME"),
    (["op_statistic", "-o", "x.csv"], "-o, --force and --raw apply to --csv only"),
    (["op_statistic", "--top", "-1"], "--top wants a count of 0 or more"),
    (["op_statistic", "--json", "--csv"], "not allowed with argument"),
    (["op_statistic", "--columns", ","], "--columns wants one or more column names"),
])
def test_bad_usage_exits_2(ranks, capsys, argv, says) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["table", ranks, *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and says in err and "see proftui table --help" in err


def test_no_usual_order_to_turn_round(ranks, capsys) -> None:
    with open(f"{ranks}/rank_0/step_trace_time.csv", "w") as f:
        f.write("Step,Computing\n1,5\n")
    status, _, err = run_cli(capsys, "table", ranks, "step_trace_time", "--desc")
    assert status == 2
    assert err == ("proftui: step_trace_time has no usual order to turn round: name a column "
                   "with --sort.\n")


def test_help_has_examples(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["table", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and "examples:\n  proftui table " in out
    assert '"n_rows", "sort": {"column", "descending"}' in out


def test_file_base_name_picks_one_file(device, capsys) -> None:
    status, out, _ = run_cli(capsys, "table", device, "aicpu_20260605161737.csv", "--columns",
                          "Node", "--top", "1")
    assert status == 0 and out.splitlines()[1:] == [
        "Node", "DropOutDoMask-op109", "... and 2 more rows (--top 0 prints all)"]


def test_fit_columns_on_a_narrow_terminal(ranks) -> None:
    tables = [read_table(f"{ranks}/rank_{n}/op_statistic.csv", "op_statistic", f"rank {n}")
              for n in (0, 1)]
    table = stack(tables)
    rows = list(range(table.n_rows))
    everything = list(range(len(table.columns)))
    assert fit_columns(table, everything, rows, 200, (8, True)) == everything
    # Group and the sorted column stay; the others fill from the left while they fit.
    assert fit_columns(table, everything, rows, 48, (8, True)) == [0, 1, 2, 8]
    assert fit_columns(table, everything, rows, 10, (4, False)) == [0, 4]


def test_text_columns_share_a_terminal_by_need() -> None:
    # A narrow column keeps its width and leaves the rest to the wide ones (a long file path
    # in the listing is not cut to a third of the terminal).
    assert share_widths([16, 56, 6], 90) == [16, 56, 6]
    assert share_widths([40, 40, 5], 50) == [22, 23, 5]
    assert share_widths([30, 30], 4) == [8, 8]  # never below 8


def test_problems_reading_a_table_are_noted_on_stderr(tmp_path, capsys) -> None:
    (tmp_path / "op_statistic.csv").write_text(
        "OP Type,Count,Ratio(%)\nAdd,1,40\nMul,2\nCast,x,60\n")
    status, out, err = run_cli(capsys, "table", str(tmp_path), "op_statistic", "--json")
    assert status == 0 and json.loads(out)["rows"] == [["Cast", "x", 60], ["Add", "1", 40],
                                                        ["Mul", "2", None]]
    assert err == ("proftui: note: op_statistic: 1 CSV row with more or fewer cells than its "
                   "header (padded or cut): rows without 3 cells\n")


def test_the_step_tables_times_are_said_in_their_unit(ranks, capsys) -> None:
    with open(f"{ranks}/rank_0/step_trace_time.csv", "w") as f:  # µs, its headers say not
        f.write("Step,Computing,Communication(Not Overlapped),Free\n1,2723.013,210,147.77\n")
    status, out, _ = run_cli(capsys, "table", ranks, "step_trace_time")
    assert status == 0 and "2.723 ms" in out and "210 us" in out and "147.77 us" in out
    table = read_table(f"{ranks}/rank_0/step_trace_time.csv", "step_trace_time")
    assert [c.unit for c in table.columns] == ["", "us", "us", "us"]
    assert table.columns[1].values.tolist() == [2723.013]  # still the file's µs
