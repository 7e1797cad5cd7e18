"""Write the malformed-input corpus beside this script (run it again after changing a case).

Each case is a small file or profile directory that real, broken or hostile profiler output
looks like; tests/malformed/test_malformed_corpus.py states what proftui must make of each.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
GOOD = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "trainer"}},
    {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
    {"ph": "X", "name": "matmul", "pid": 1, "tid": 1, "ts": 110, "dur": 20},
    {"ph": "X", "name": "relu", "pid": 1, "tid": 2, "ts": 120, "dur": 5},
]
OP_STATISTIC = ("Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
                "Max Time(us),Ratio(%)\n")


def _events(*extra: dict) -> bytes:
    return json.dumps(GOOD + list(extra)).encode()


def _profile(name: str, csv_text: str) -> dict[str, bytes]:
    """A PROF directory with one timeline and an op_statistic CSV."""
    out = f"{name}/PROF_000001_20260101000000000_AAAAAAAAAAAAAAAA/mindstudio_profiler_output"
    return {f"{out}/msprof_slice_0_20260101000000.json": _events(),
            f"{out}/op_statistic_20260101000000.csv": csv_text.encode()}


def cases() -> dict[str, bytes]:
    """Relative path -> content."""
    good = _events()
    out: dict[str, bytes] = {
        # Not a trace at all: one sentence, status 2.
        "empty.json": b"",
        "blank.json": b" \n\t \r\n",
        "text.txt": b"hello, this is not a trace\n",
        "other_schema.json": b'{"spans": [{"name": "x"}], "version": 2}',
        "csv_named_json.json": b"a,b,c\n1,2,3\n",
        "png_header.json": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
        "nul_bytes.json.gz": gzip.compress(b"\x00" * 4096, mtime=0),
        "corrupt_gzip_header.json.gz": b"\x1f\x8b\x08\x00garbage that is not deflate",
        # Damaged: what is readable is shown, the damage counted.
        "truncated_mid_event.json": good[: good.index(b'"relu"') + 10],
        "truncated_gzip.json.gz": gzip.compress(good, mtime=0)[:-12],
        "no_closing_bracket.json": good[:-1],
        "trailing_comma.json": good[:-1] + b",]",
        "garbage_between_events.json": good.replace(
            b'}, {"ph": "X", "name": "matmul"', b'}, @@garbage@@, {"ph": "X", "name": "matmul"'),
        "bom.json": b"\xef\xbb\xbf" + good,
        "invalid_utf8_name.json": good.replace(b'"relu"', b'"re\xff\xfelu"'),
        "nan_and_infinity.json": good[:-1] + b', {"ph": "X", "name": "nan", "pid": 1, "tid": 3, '
                                 b'"ts": NaN, "dur": 1}, {"ph": "X", "name": "inf", "pid": 1, '
                                 b'"tid": 3, "ts": 5, "dur": Infinity}]',
        "wrong_types.json": _events(
            {"ph": "X", "name": "ts_list", "pid": 1, "tid": 4, "ts": [1], "dur": 1},
            {"ph": "X", "name": "dur_text", "pid": 1, "tid": 4, "ts": 1, "dur": "abc"},
            {"ph": "X", "name": "pid_object", "pid": {"a": 1}, "tid": 4, "ts": 2, "dur": 1},
            {"ph": "X", "name": 12345, "pid": 1, "tid": None, "ts": 3, "dur": 1},
            {"ph": 7, "name": "phase_number", "pid": 1, "tid": 4, "ts": 4}),
        "negative_duration.json": _events(
            {"ph": "X", "name": "backwards", "pid": 1, "tid": 5, "ts": 200, "dur": -30}),
        "years_apart.json": _events(
            {"ph": "X", "name": "epoch", "pid": 2, "tid": 1, "ts": 1.7e15, "dur": 10},
            {"ph": "X", "name": "far", "pid": 2, "tid": 1, "ts": "4102444800000000", "dur": 1}),
        "duplicate_keys.json": good.replace(b'"name": "relu"', b'"name": "first", "name": "relu"'),
        "deep_args.json": _events({"ph": "X", "name": "deep", "pid": 1, "tid": 6, "ts": 1,
                                   "dur": 1, "args": {"a": 0}}).replace(
            b'{"a": 0}', b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"),
        "unmatched_begin_end.json": _events(
            {"ph": "B", "name": "open", "pid": 1, "tid": 7, "ts": 10},
            {"ph": "E", "pid": 1, "tid": 8, "ts": 12}),
        "escape_sequences.json": _events(
            {"ph": "X", "name": "\x1b]0;pwned\x07\x1b[2J", "cat": "\x9b31m", "pid": 1, "tid": 9,
             "ts": 1, "dur": 1, "args": {"\x1b[5m": "\u202eevil"}}),
        # Profile directories.
        "empty_dir/.keep": b"",
        "unrelated_dir/notes.txt": b"nothing to see\n",
        "unrelated_dir/data.bin": bytes(range(256)),
    }
    out.update(_profile("prof_missing_columns", "Device_id,OP Type,Count\n0,MatMul,3\n"))
    out.update(_profile("prof_ragged_rows", OP_STATISTIC
                        + "0,MatMul,AI_CORE,3,30,9,10,11,75\n0,Relu,AI_CORE\n"
                        + "0,Add,AI_CORE,1,10,10,10,10,25,extra,cells\n"))
    out.update(_profile("prof_non_numeric", OP_STATISTIC
                        + "0,MatMul,AI_CORE,three,30,9,10,11,75\n"
                        + "0,Relu,AI_CORE,1,N/A,1,1,1,25\n"))
    return out


def main() -> None:
    shutil.rmtree(CASES, ignore_errors=True)
    for rel, content in cases().items():
        path = CASES / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    print(f"wrote {len(cases())} files under {CASES}")


if __name__ == "__main__":
    main()
