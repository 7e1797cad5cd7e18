"""The malformed-input corpus (cases/, written by make_cases.py): each case's exact outcome.

Inputs that are not a trace get one sentence and status 2; damaged ones load what is readable
and count the damage by kind; every headless command runs on every case without a traceback
and without a raw control character reaching the terminal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from proftui.core import load_trace
from proftui.core.query.args import slice_args
from proftui.tui.cli import main

CASES = Path(__file__).resolve().parent / "cases"
NOT_JSON = "{path} is not a JSON trace (it does not start with [ or {{)."

REFUSED = {
    "empty.json": "{path} is empty.",
    "blank.json": "{path} is empty.",
    "text.txt": NOT_JSON,
    "csv_named_json.json": NOT_JSON,
    "png_header.json": NOT_JSON,
    "nul_bytes.json.gz": NOT_JSON,
    "other_schema.json": "{path} is JSON but not a Chrome trace (no traceEvents array).",
    # the rest of the sentence is zlib's own words, which differ between its versions
    "corrupt_gzip_header.json.gz": "{path} cannot be read: corrupt gzip data near byte 31: ",
    "empty_dir": "{path} holds no trace or profiler output proftui recognises "
                 "(1 file looked at).",
    "unrelated_dir": "{path} holds no trace or profiler output proftui recognises "
                     "(2 files looked at).",
}

GOOD_NAMES = {"step", "matmul", "relu"}
# case: (slice names, problems counted by kind)
LOADED = {
    "bom.json": (GOOD_NAMES, {}),
    "no_closing_bracket.json": (GOOD_NAMES, {}),
    "trailing_comma.json": (GOOD_NAMES, {}),
    "duplicate_keys.json": (GOOD_NAMES, {}),  # the last of two keys counts, as in JSON.parse
    "years_apart.json": (GOOD_NAMES | {"epoch", "far"}, {}),
    "invalid_utf8_name.json": ({"step", "matmul", "re\ufffd\ufffdlu"}, {}),
    "escape_sequences.json": (GOOD_NAMES | {"\x1b]0;pwned\x07\x1b[2J"}, {}),
    "truncated_mid_event.json": ({"step", "matmul"}, {"truncated": 1}),
    # the cut event and the gzip stream that ends early: one cut, counted once
    "truncated_gzip.json.gz": ({"step", "matmul"}, {"truncated": 1}),
    "garbage_between_events.json": ({"step", "relu"}, {"bad_json": 1}),
    "nan_and_infinity.json": (GOOD_NAMES | {"inf"}, {"bad_timestamp": 1, "bad_duration": 1}),
    "negative_duration.json": (GOOD_NAMES | {"backwards"}, {"negative_duration": 1}),
    "deep_args.json": (GOOD_NAMES | {"deep"}, {"too_deep": 1}),
    "unmatched_begin_end.json": (GOOD_NAMES | {"open"}, {"unmatched_end": 1, "unclosed_begin": 1}),
    "wrong_types.json": (GOOD_NAMES | {"pid_object", "12345", "dur_text"},
                         {"bad_timestamp": 1, "bad_duration": 1, "bad_field": 1,
                          "unknown_phase": 1}),
    "prof_missing_columns": (GOOD_NAMES, {}),
    "prof_non_numeric": (GOOD_NAMES, {}),
    "prof_ragged_rows": (GOOD_NAMES, {}),
}
# profile directories: (op_statistic rows, columns, its problems by kind)
TABLES = {
    "prof_missing_columns": (1, 3, {}),
    "prof_non_numeric": (2, 9, {}),
    "prof_ragged_rows": (3, 9, {"ragged_row": 2}),
}
# export into a pipe writes the data as it is (escaped only on a terminal): not checked here
COMMANDS = [["info"], ["info", "--json"], ["ops"], ["ops", "--json"], ["iterations"],
            ["summary"], ["summary", "--json"], ["export", "--all", "-o", "-"]]
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_the_corpus_is_what_make_cases_writes() -> None:
    from make_cases import cases

    for rel, content in cases().items():
        assert (CASES / rel).read_bytes() == content, rel
    tops = {rel.split("/")[0] for rel in cases()}
    assert tops == set(REFUSED) | set(LOADED) and not set(REFUSED) & set(LOADED)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_one_sentence_and_status_2(case, capsys) -> None:
    path = str(CASES / case)
    assert main(["info", path]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("proftui: " + REFUSED[case].format(path=path)), err
    assert err.count("\n") == 1


@pytest.mark.parametrize("case", sorted(LOADED))
def test_loaded_with_the_damage_counted(case) -> None:
    index = load_trace(str(CASES / case), use_cache=False)
    names, problems = LOADED[case]
    assert {index.slice_name(i) for i in range(index.n_slices)} == names
    assert {p.kind: p.count for p in index.diagnostics} == problems


@pytest.mark.parametrize("case", sorted(TABLES))
def test_summary_tables_with_their_problems(case, capsys) -> None:
    assert main(["info", "--json", str(CASES / case)]) == 0
    (table,) = json.loads(capsys.readouterr().out)["profile"]["tables"]
    rows, columns, problems = TABLES[case]
    assert (table["rows"], len(table["columns"])) == (rows, columns)
    assert {d["kind"]: d["count"] for d in table["diagnostics"]} == problems


def test_what_survives_inside_damaged_events() -> None:
    deep = load_trace(str(CASES / "deep_args.json"), use_cache=False)
    i = next(i for i in range(deep.n_slices) if deep.slice_name(i) == "deep")
    value, lists = slice_args(deep, i)["a"], 0
    while isinstance(value, list) and value:
        value, lists = value[0], lists + 1
    # the event is level 1, its args 2, the lists 3 to 100 are kept, then null
    assert value is None and lists == 98
    far = load_trace(str(CASES / "years_apart.json"), use_cache=False)
    assert far.end_ns == 4102444800000000000 + 1000  # 2100-01-01, to the ns
    back = load_trace(str(CASES / "negative_duration.json"), use_cache=False)
    durations = dict(zip(map(back.slice_name, range(back.n_slices)),
                         back.col("slices.dur").tolist()))
    assert durations["backwards"] == 0


@pytest.mark.parametrize("case", sorted(set(REFUSED) | set(LOADED)))
def test_every_command_on_every_case(case, capsys) -> None:
    for command in COMMANDS:
        status = main([command[0], str(CASES / case), *command[1:]])
        out, err = capsys.readouterr()
        assert status == (2 if case in REFUSED else 0), (command, err)
        assert "Traceback" not in err
        shown = err + ("" if command[0] == "export" else out)
        assert not RAW_CONTROL.search(shown.replace("\n", "")), (command, out, err)
        if status == 2:
            assert err.count("\n") == 1
