"""Offline fuzzer of every importer: mutated traces, summary CSVs and profile directories.

Each case copies one seed (a trace file or a whole profile directory) into a scratch folder,
mutates it, opens it with ``load_trace`` and drives the consumers over it the way the app and
the CLI do: ``read_overview`` (summary CSVs, iterations), ``aggregate_ops`` by name, category
and type, ``rows_for`` + ``paint_cells`` over the whole span and a random window,
``slice_args`` / ``describe_slice`` of a few slices, ``summary_report``, the table queries
behind the table panes, and ``export_events`` to a file.

A case fails when

- anything but :class:`proftui.core.ProftuiError` escapes (a readable refusal is fine);
- it takes longer than ``--case-seconds`` (30 s): a SIGALRM watchdog interrupts it;
- an invariant of the result breaks: slices inside the trace's span with non-negative
  durations, painted cells owned by real slices, one exported row per slice and instant;
- something readable did not load: a mutation that leaves every timeline file alone (a broken
  CSV, start_info, a dangling link, a junk file) must still give the seed's slices and the
  untouched tables with their rows; a trace given a byte-order mark or line breaks between
  its values must give the seed's slices; cut anywhere past its middle or without its closing
  brackets it must still load.

Failures are deduplicated by (exception type, innermost frame in proftui's code); the first
few inputs of each signature are saved under ``--out`` with their traceback. At the end a
summary prints cases tried by kind of seed, failures by signature and cases per second.

    python bench/fuzz.py --minutes 25          # samples + ../shared/corpus when it is there
    python bench/fuzz.py --minutes 5 --seed 7 --out /tmp/fz --samples-only
    python bench/fuzz.py --replay /tmp/proftui-fuzz/<signature>/case-12/<input>

The CI test (tests/core/test_fuzz.py) runs these mutations and checks, seeded and bounded, on
the samples, without the edits that make an input MBs larger (``heavy=False``).
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import proftui
from proftui.core import ProftuiError, load_trace
from proftui.core.aggregate import SIDES, aggregate_ops, iterations_table
from proftui.core.args import args_of, slice_args
from proftui.core.export import UNITS, export_events
from proftui.core.grouping import op_types
from proftui.core.index import TraceIndex
from proftui.core.iterations import capture_start_ns
from proftui.core.overview import read_overview
from proftui.core.report import report_tables, summary_report
from proftui.core.rows import paint_cells, rows_for
from proftui.core.slice_info import describe_slice
from proftui.core.table_query import default_sort, format_cell, sort_order, totals

PACKAGE_ROOT = Path(proftui.__file__).resolve().parent
SAMPLES = PACKAGE_ROOT / "samples"
CORPUS = PACKAGE_ROOT.parent / "shared" / "corpus"
BATCH_CHOICES = (7, 64, 4096, 1 << 16, 1 << 20)
CASE_SECONDS = 30
SAVED_PER_SIGNATURE = 3

# -- seeds --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """One input to mutate: a trace file or a profile directory."""

    path: Path
    kind: str  # "trace" (one file) or "profile" (a directory)
    label: str  # where it came from, for the summary
    weight: float = 1.0  # big inputs are picked less often (they are slow to mutate)


def find_seeds(samples: Path = SAMPLES, corpus: Path | None = CORPUS) -> list[Seed]:
    """The bundled samples and, when the folder exists, the real files of the corpus."""
    seeds = [Seed(samples / "kineto_demo.pt.trace.json", "trace", "samples: kineto json")]
    for layout in ("ascend_cann8", "ascend_old_layout", "torch_npu"):
        base = samples / layout
        if not base.is_dir():
            continue
        for profile in sorted(p for p in base.iterdir() if p.is_dir()):
            seeds.append(Seed(profile, "profile", f"samples: {layout} dir"))
        for path in sorted(base.rglob("*.json")):
            seeds.append(Seed(path, "trace", f"samples: {layout} json", 0.3))
    if corpus is None or not corpus.is_dir():
        return seeds
    for path in sorted((corpus / "chrome").glob("*.json")):
        seeds.append(Seed(path, "trace", "corpus: chrome json", 0.4))
    for path in sorted((corpus / "kineto").glob("*.gz")):
        big = path.stat().st_size > 200_000  # 26 MB inflated: a second per case
        seeds.append(Seed(path, "trace", "corpus: kineto json.gz", 0.1 if big else 1.0))
    ascend = corpus / "ascend"
    if ascend.is_dir():
        for profile in sorted(p for p in ascend.iterdir() if p.is_dir()):
            seeds.append(Seed(profile, "profile", "corpus: ascend dir"))
        for name in ("msprof_0_2_1.json", "step_trace_0_2_1.json", "trace_view.json",
                     "msprof_20260605161734.json"):
            for path in sorted(ascend.rglob(name)):
                seeds.append(Seed(path, "trace", "corpus: ascend json", 0.5))
    return seeds


# -- byte and JSON mutations --------------------------------------------------------------------

_DEEP = 5000
HOSTILE_VALUES = [
    b"NaN", b"Infinity", b"-Infinity", b"-1e400", b"1e400", b"1e308", b"-1", b"0", b"-0.0",
    b"1.5", b"99999999999999999999999", b"18446744073709551616", b"9223372036854775807",
    b"-9223372036854775808", b"-9223372036854775809", b"4.9e-324", b"1e-400", b'"1.5e3"',
    b'""', b'"abc"', b'"\\u001b[2J"', b'"\x1b[2J\x1b]0;title\x07"', b"null", b"true", b"false",
    b"[]", b"{}", b"[1,2]", b'{"a":1}', b'"\\ud800"', b'"\\u0000"', b'"\xff\xfe"', b'"\xc3"',
    b'"9999999999999999999999.999"', b'"-5"', b'" 12 "', b'"0x10"', b'"1780676244313289.000"',
    b'"1780676244313289.000\t"', b'"-1780676244313289.000"', b"1780676244313289.123",
    b'"' + b"A" * 100_000 + b'"', b"[" * 300 + b"]" * 300, b"[" * _DEEP + b"]" * _DEEP,
    b'{"a":' * 300 + b"1" + b"}" * 300, b"[" * _DEEP,
]
FIELDS = [b"ts", b"dur", b"pid", b"tid", b"ph", b"name", b"cat", b"id", b"args", b"bp", b"s",
          b"tts", b"id2", b"scope", b"displayTimeUnit", b"traceEvents", b"baseTimeNanoseconds",
          b"sort_index", b"labels", b"Task Type", b"connection_id"]
PHASES = [b"B", b"E", b"X", b"i", b"I", b"C", b"M", b"s", b"t", b"f", b"b", b"e", b"n", b"S",
          b"T", b"F", b"P", b"O", b"N", b"D", b"R", b"(", b")", b"", b"XX", b"\xff"]
TOKENS = [b'"', b"{", b"}", b"[", b"]", b",", b":", b"\\", b"\x00", b"\xff", b"\xef\xbb\xbf",
          b"\x1b[2J", b"\r\n", b" " * 70_000, b"/*", b"//", b"'"]
_KEY = re.compile(rb'"(' + b"|".join(re.escape(f) for f in FIELDS) + rb')"\s*:\s*')
_EVENT_GAP = re.compile(rb"\}\s*,\s*\{")
_STRING_OR_COMMA = re.compile(rb'"(?:[^"\\]|\\.)*"|,')  # a newline in a string is not JSON


def _value_end(data: bytes, at: int) -> int:
    """Where the JSON value starting at `at` ends (a rough scan; good enough to replace it)."""
    if at >= len(data):
        return at
    first = data[at:at + 1]
    if first == b'"':
        i = at + 1
        while i < len(data):
            if data[i] == 0x5C:  # backslash
                i += 2
                continue
            if data[i] == 0x22:
                return i + 1
            i += 1
        return len(data)
    if first in (b"{", b"["):
        depth, i, in_string = 0, at, False
        while i < len(data):
            c = data[i]
            if in_string:
                if c == 0x5C:
                    i += 1
                elif c == 0x22:
                    in_string = False
            elif c == 0x22:
                in_string = True
            elif c in (0x7B, 0x5B):
                depth += 1
            elif c in (0x7D, 0x5D):
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return len(data)
    m = re.compile(rb"[,}\]\s]").search(data, at)
    return m.start() if m else len(data)


def _hostile_event(rng: random.Random) -> bytes:
    fields = {b"ph": b'"' + rng.choice(PHASES) + b'"', b"name": b'"n"', b"pid": b"1",
              b"tid": b"1", b"ts": b"10", b"dur": b"5", b"id": b"1", b"cat": b'"c"'}
    for key in rng.sample(list(fields), rng.randint(1, 3)):
        fields[key] = rng.choice(HOSTILE_VALUES)
    if rng.random() < 0.3:
        fields[b"args"] = rng.choice(HOSTILE_VALUES)
    return b"{" + b",".join(b'"' + k + b'":' + v for k, v in fields.items()) + b"}"


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One blind edit: delete, insert, replace, flip, duplicate or truncate bytes."""
    out = bytearray(data)
    at = rng.randrange(len(out) + 1)
    op = rng.randrange(6)
    if op == 0:
        n = rng.randint(1, 64)
        del out[at:at + n]
        return bytes(out), f"delete {n} bytes at {at}"
    if op == 1:
        chunk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        out[at:at] = chunk
        return bytes(out), f"insert {chunk!r} at {at}"
    if op == 2 and out:
        at = min(at, len(out) - 1)
        out[at] = rng.randrange(256)
        return bytes(out), f"replace byte at {at}"
    if op == 3 and out:
        at = min(at, len(out) - 1)
        out[at] ^= 1 << rng.randrange(8)
        return bytes(out), f"flip a bit at {at}"
    if op == 4 and out:
        a = rng.randrange(len(out))
        b = min(len(out), a + rng.randint(1, 4096))
        out[at:at] = out[a:b] * rng.randint(1, 4)
        return bytes(out), f"duplicate bytes {a}:{b} at {at}"
    return bytes(out[:at]), f"truncate at {at} of {len(data)}"


def mutate_json(rng: random.Random, data: bytes, heavy: bool = True) -> tuple[bytes, str]:
    """One JSON-aware edit: a hostile value for a known field, a hostile event, a token.

    `heavy` allows edits that make the file MBs larger (thousands of copies of an event).
    """
    op = rng.random()
    keys = list(_KEY.finditer(data)) if op < 0.75 else []
    if keys and op < 0.45:
        m = rng.choice(keys)
        end = _value_end(data, m.end())
        value = (b'"' + rng.choice(PHASES) + b'"' if m.group(1) == b"ph" and rng.random() < 0.5
                 else rng.choice(HOSTILE_VALUES))
        return (data[:m.end()] + value + data[end:],
                f"{m.group(1).decode()} at {m.start()} := {value[:40]!r}")
    if keys and op < 0.6:
        m = rng.choice(keys)
        end = _value_end(data, m.end())
        tail = end + 1 if data[end:end + 1] == b"," else end
        return data[:m.start()] + data[tail:], f"drop field {m.group(1).decode()} at {m.start()}"
    if keys and op < 0.75:
        m = rng.choice(keys)
        new = rng.choice(FIELDS)
        return (data[:m.start()] + b'"' + new + b'":' + data[m.end():],
                f"rename field {m.group(1).decode()} at {m.start()} to {new.decode()}")
    gaps = list(_EVENT_GAP.finditer(data, 0, 1 << 20))
    if gaps and op < 0.9:
        m = rng.choice(gaps)
        events = b",".join(_hostile_event(rng) for _ in range(rng.randint(1, 3)))
        if heavy and rng.random() < 0.03:  # many copies of one event: bounded time and memory?
            copies = min(rng.randint(100, 3000), (64 << 20) // len(events))
            events = b",".join([events] * copies)
        at = m.start() + 1
        return data[:at] + b"," + events + data[at:], f"insert events at {at}: {events[:80]!r}"
    at = rng.randrange(len(data) + 1)
    token = rng.choice(TOKENS + HOSTILE_VALUES)
    return data[:at] + token + data[at:], f"insert token {token[:40]!r} at {at}"


def _edit_json(rng: random.Random, data: bytes, p_json: float,
               heavy: bool) -> tuple[bytes, str]:
    """A JSON-aware edit with probability `p_json`, else a blind one."""
    return mutate_json(rng, data, heavy) if rng.random() < p_json else mutate_bytes(rng, data)


def mutate_whole_json(rng: random.Random, data: bytes) -> tuple[bytes, str, str]:
    """An edit of the file as a whole; returns (data, what, oracle) where oracle names what
    must still hold ("same" slices, "loads", or "" for nothing)."""
    op = rng.randrange(9)
    if op == 0:
        at = rng.randint(len(data) // 2, max(len(data) - 1, 0))
        return data[:at], f"cut at {at} of {len(data)} (past the middle)", "loads"
    if op == 1:
        return b"\xef\xbb\xbf" + data, "byte-order mark", "same"
    if op == 2:
        return _STRING_OR_COMMA.sub(lambda m: b",\r\n  " if m.group() == b"," else m.group(),
                                    data), "CRLF and blanks after commas", "same"
    if op == 3:
        return b"", "empty file", ""
    if op == 4:
        return data.rstrip().rstrip(b"]}").rstrip(), "closing brackets removed", "loads"
    if op == 5:
        garbage = rng.choice([b"\x00" * 64, b"garbage", b"]]]", b"\xff\xfe", b"{}" * 10])
        return data + garbage, f"trailing {garbage[:20]!r}", ""
    if op == 6:
        return rng.choice([b"[", b"{", b"{}", b"[]", b"null", b"5", b'"x"', b'{"traceEvents":5}',
                           b'{"traceEvents":{}}', b'{"traceEvents":[1,2,null]}',
                           b"[" * 100_000, b"\x1f\x8b"]), "replaced by a tiny document", ""
    if op == 7:
        return data.decode("utf-8", "replace").encode("utf-16"), "re-encoded as UTF-16", ""
    half = len(data) // 2
    return data[:half] + data[half:].replace(b'"ts"', b'"ts":"x","ts2"', 50), "ts renamed", ""


# -- CSV mutations ------------------------------------------------------------------------------

CSV_HEADERS = ["Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "OP Type",
               "Op Name", "Name", "Type", "Device_id", "Model ID", "Iteration ID",
               "Step", "Start Time(us)", "Duration(us)", "FP Start(us)", "BP End(us)",
               "Iteration End(us)", "Iteration Time(us)", "Computing", "Count", "Total Time(us)",
               "Reduce Start(us)", "Accelerator Core", "Ratio(%)", "(us)", "", "x(", "Time()",
               "timestamp(ns)", "Start_time(ns)", "\x1b[2J", "=cmd|' /C calc'!A0"]
CSV_CELLS = ["abc", "NaN", "nan", "inf", "-inf", "1e400", "-1e400", "1e20", "-1", "0", "",
             "N/A", "0x10", "1,000", '"1,000"', "99999999999999999999999", "1780676244313289.000\t",
             "-1780676244313289.000", "9223372036854775807", "1e308", "1.7976931348623157e308",
             "\x1b[2J", "\xff", "=1+1", "\t", " 12 ", "1780676244313289.999999999",
             "17806762443132890000000.000", "1.5e15", "4294967295"]


def _csv_rows(data: bytes) -> list[list[bytes]]:
    return [line.split(b",") for line in data.split(b"\n")]


def _csv_join(rows: list[list[bytes]]) -> bytes:
    return b"\n".join(b",".join(r) for r in rows)


def mutate_csv(rng: random.Random, data: bytes, heavy: bool = True) -> tuple[bytes, str]:
    """One edit of a summary CSV: its header, its rows, its cells or the file as a whole.

    `heavy` allows edits that make it MBs larger (a huge cell, 1000 times the rows, ...), to
    a file that is not that large already.
    """
    heavy = heavy and len(data) < 1 << 20
    rows = _csv_rows(data)
    width = len(rows[0])
    op = rng.randrange(16)
    col = rng.randrange(width)
    if op == 0:  # a column gone from the header only: every row is ragged
        del rows[0][col]
        return _csv_join(rows), f"header column {col} dropped"
    if op == 1:
        for r in rows:
            if len(r) > col:
                del r[col]
        return _csv_join(rows), f"column {col} dropped"
    if op == 2:
        name = rng.choice(CSV_HEADERS)
        for i, r in enumerate(rows):
            r.insert(min(col, len(r)), name.encode() if i == 0 else
                     rng.choice(CSV_CELLS).encode("utf-8", "surrogateescape"))
        return _csv_join(rows), f"column {name!r} added at {col}"
    if op == 3:
        name = rng.choice(CSV_HEADERS + [h.decode("utf-8", "replace") for h in rows[0]])
        rows[0][col] = name.encode()
        return _csv_join(rows), f"header {col} renamed {name!r}"
    if op == 4:
        for r in rng.sample(rows, min(len(rows), rng.randint(1, 5))):
            if rng.random() < 0.5 and r:
                del r[rng.randrange(len(r)):]
            else:
                r.extend([b"7"] * rng.randint(1, 5))
        return _csv_join(rows), "ragged rows"
    if op in (5, 6, 7) and len(rows) > 1:
        cells = []
        for _ in range(rng.randint(1, 6)):
            r = rows[rng.randrange(1, len(rows))]
            if r:
                cell = rng.choice(CSV_CELLS)
                r[rng.randrange(len(r))] = cell.encode("utf-8")
                cells.append(cell)
        return _csv_join(rows), f"cells set to {cells!r}"
    if op == 8:
        return b"", "empty file"
    if op == 9:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096))), "binary garbage"
    if op == 10 and len(rows) > 1:
        r = rows[rng.randrange(1, len(rows))]
        r[min(col, len(r) - 1)] = b"9" * rng.choice([100_000, 3_000_000] if heavy else [1000])
        return _csv_join(rows), "huge cell"
    if op == 11:
        return _csv_join(rows[:1]), "header only"
    if op == 12:
        at = rng.randrange(len(data) + 1)
        token = rng.choice([b'"', b'"\n', b"\x00", b"\r", b"\xff\xfe", b"\xef\xbb\xbf", b"\n\n"])
        return data[:at] + token + data[at:], f"insert {token!r} at {at}"
    if op == 13:
        return data.replace(b",", rng.choice([b";", b"\t", b", "])), "other delimiter"
    if op == 14 and len(rows) > 1:
        times = rng.choice([10, 1000] if heavy else [10])
        return _csv_join(rows + rows[1:] * times), f"rows repeated {times} times"
    if op == 15:
        many = [b"c%d" % i for i in range(rng.choice([300, 20_000] if heavy else [300]))]
        return _csv_join([rows[0] + many] + rows[1:]), f"{len(many)} more header columns"
    return mutate_bytes(rng, data)


# -- profile directories ------------------------------------------------------------------------

_TIMELINE_NAME = re.compile(r"\.json(\.gz)?$|\.gz$")
_RUN_INFO = re.compile(r"^(start_info|end_info|info\.json|sample\.json|profiler_info)")


def _is_timeline(rel: str) -> bool:
    name = os.path.basename(rel)
    return bool(_TIMELINE_NAME.search(name)) and not _RUN_INFO.match(name) and name not in (
        "communication.json", "communication_matrix.json")


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and not p.is_symlink())


def _dirs(root: Path) -> list[Path]:
    return [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]


@dataclass
class DirEdit:
    """What one mutation of a profile directory did."""

    what: str
    preserving: bool  # timelines untouched: the seed's slices must all load
    touched: str = ""  # relative path of a file it changed ("" for none)


def mutate_profile(rng: random.Random, root: Path, heavy: bool = True) -> DirEdit:
    """One edit of the copy of a profile directory at `root` (`heavy` as in mutate_csv)."""
    files = _files(root)
    tables = [f for f in files if f.endswith(".csv")]
    run_info = [f for f in files if _RUN_INFO.match(os.path.basename(f))]
    timelines = [f for f in files if _is_timeline(f)]
    op = rng.random()
    if tables and op < 0.35:
        rel = rng.choice(tables)
        path = root / rel
        data, what = mutate_csv(rng, path.read_bytes(), heavy)
        path.write_bytes(data)
        return DirEdit(f"{rel}: {what}", True, rel)
    if run_info and op < 0.42:
        rel = rng.choice(run_info)
        path = root / rel
        data, what = _edit_json(rng, path.read_bytes(), 0.7, heavy)
        path.write_bytes(data)
        return DirEdit(f"{rel}: {what}", True, rel)
    if timelines and op < 0.62:
        rel = rng.choice(timelines)
        path = root / rel
        raw = path.read_bytes()
        packed = raw[:2] == b"\x1f\x8b"
        data = gzip.decompress(raw) if packed else raw
        whats = []
        for _ in range(rng.randint(1, 3)):
            data, what = _edit_json(rng, data, 0.67, heavy)
            whats.append(what)
        path.write_bytes(gzip.compress(data, 1) if packed else data)
        return DirEdit(f"{rel}: {'; '.join(whats)}", False, rel)
    if op < 0.68 and files:
        rel = rng.choice(files)
        (root / rel).unlink()
        return DirEdit(f"{rel} deleted", not _is_timeline(rel), rel)
    if op < 0.74 and files:
        rel = rng.choice(files)
        where = (root / rel).parent
        name = rng.choice([os.path.basename(rel), "op_summary_20260605161738.csv",
                           "msprof_slice_9_20260605161734.json", "trace_view.json",
                           "kernel_details.csv", "start_info.0", "x.pt.trace.json"])
        link = where / f"dangling_{rng.randrange(1000)}_{name}"
        os.symlink(where / "no-such-target", link)
        return DirEdit(f"dangling link {link.relative_to(root)}", True)
    if op < 0.77:
        where = rng.choice(_dirs(root))
        if not os.path.lexists(where / "loop"):
            os.symlink("..", where / "loop")
            return DirEdit(f"link {where.relative_to(root)}/loop -> ..", True)
    if op < 0.81:
        where = rng.choice(_dirs(root))
        name = rng.choice(["junk.bin", "notes.txt", "README.txt", "junk.db", "\x1b[2J.txt",
                           "weird\nname.txt", "latin-\udce9.txt"])
        (where / name).write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(0, 999))))
        return DirEdit(f"junk file {name!r} in {where.relative_to(root)}", True)
    if op < 0.84 and tables:
        rel = rng.choice(tables)
        target = root / rel
        target.unlink()
        target.mkdir()
        return DirEdit(f"{rel} replaced by a directory", True, rel)
    if op < 0.87 and timelines:
        rel = rng.choice(timelines)
        path = root / rel
        raw = path.read_bytes()
        if raw[:2] != b"\x1f\x8b":
            path.with_name(path.name + ".gz").write_bytes(gzip.compress(raw, 1))
            path.unlink()
            return DirEdit(f"{rel} gzipped (renamed .gz)", False, rel)
    if op < 0.9 and files:
        rel = rng.choice(files)
        path = root / rel
        new = rng.choice(["msprof_slice_7_20260605161734.json", "msprof_0_1_99.json",
                          "trace_view.json", "op_summary_0_1_1.csv", "step_trace_time.csv",
                          "kernel_details.csv", "start_info.0", "x.pt.trace.json.gz",
                          "ascend_timeline_display_0.json", "step_trace_raw_0_detail_time.csv"])
        if not (path.parent / new).exists():
            path.rename(path.parent / new)
            return DirEdit(f"{rel} renamed {new}", False, rel)
    if op < 0.93 and files:
        rel = rng.choice(files)
        path = root / rel
        copy = path.parent / (f"copy_{path.name}" if rng.random() < 0.5 else
                              path.name.replace("0", "1", 1))
        if not copy.exists():
            shutil.copyfile(path, copy)
            return DirEdit(f"{rel} copied to {copy.name}", False)
    if op < 0.95:
        levels = rng.choice([3, 12, 40] if heavy else [3, 12])
        deep = root.joinpath(*[f"device_{i}" for i in range(levels)])
        deep.mkdir(parents=True, exist_ok=True)
        if timelines:
            shutil.copyfile(root / rng.choice(timelines), deep / "msprof_0_1_1.json")
        return DirEdit(f"deep copy at {deep.relative_to(root)}", False)
    if op < 0.97:
        rel = rng.choice(files) if files else ""
        where = (root / rel).parent if rel else root
        name = rng.choice(["trace_view.json", "op_summary_1.csv", "x.pt.trace.json",
                           "msprof_slice_0_20260605161734.json"])
        target = rng.choice(["/dev/null", "/dev/zero"])
        if name.endswith(".csv") and rng.random() > 0.02:
            target = "/dev/null"  # a CSV linked to /dev/zero is read forever: known, and slow
        if not (where / name).exists():
            os.symlink(target, where / name)
            return DirEdit(f"{where.relative_to(root)}/{name} -> {target}", False)
    dirs = sorted({str(Path(f).parent) for f in files if Path(f).parent != Path(".")})
    if dirs:
        rel = rng.choice(dirs)
        shutil.rmtree(root / rel)
        return DirEdit(f"directory {rel} deleted", False, rel)
    return DirEdit("nothing", True)


# -- cases --------------------------------------------------------------------------------------


@dataclass
class Case:
    """One mutated input, ready to run."""

    number: int
    seed: Seed
    path: Path
    mutations: list[str]
    oracle: str  # "same" (slices and untouched tables as the seed's), "loads", or ""
    touched: set[str] = field(default_factory=set)
    batch_bytes: int = 1 << 20


def make_case(rng: random.Random, number: int, seed: Seed, work: Path,
              heavy: bool = True) -> Case:
    """Copy `seed` into `work` and mutate it (`heavy` as in mutate_csv)."""
    if work.exists():
        _remove(work)
    work.mkdir(parents=True)
    if seed.kind == "profile":
        root = work / seed.path.name
        shutil.copytree(seed.path, root, symlinks=True)
        edits = [mutate_profile(rng, root, heavy) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        oracle = "same" if all(e.preserving for e in edits) else ""
        case = Case(number, seed, root, [e.what for e in edits], oracle,
                    {e.touched for e in edits if e.touched})
    else:
        raw = seed.path.read_bytes()
        packed = raw[:2] == b"\x1f\x8b"
        data = gzip.decompress(raw) if packed else raw
        mutations: list[str] = []
        oracle = ""
        choice = rng.random()
        if choice < 0.15:
            data, what, oracle = mutate_whole_json(rng, data)
            mutations.append(what)
        else:
            for _ in range(rng.randint(1, 6)):
                data, what = _edit_json(rng, data, 0.6, heavy)
                mutations.append(what)
        raw = data
        if packed or rng.random() < 0.1:
            raw = gzip.compress(data, 1)
            mutations.append("gzipped")
            if rng.random() < 0.1:
                raw, what = mutate_bytes(rng, raw)
                mutations.append(f"gzip stream: {what}")
                oracle = ""
        name = seed.path.name if seed.path.name.endswith((".json", ".gz")) else "trace.json"
        path = work / name
        path.write_bytes(raw)
        case = Case(number, seed, path, mutations, oracle)
    case.batch_bytes = rng.choice(BATCH_CHOICES)
    size = _size(case.path)
    if case.batch_bytes < 4096 and size > 300_000 or size > 4_000_000:
        # A few bytes per batch over MBs is a benchmark, not a fuzz case.
        case.batch_bytes = rng.choice(BATCH_CHOICES[-2:])
    return case


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _remove(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(path)


# -- running a case -----------------------------------------------------------------------------


class InvariantBroken(AssertionError):
    """A result that loaded but is wrong (an oracle of the fuzzer, not a crash)."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"{check}: {detail}")
        self.check = check


class CaseTimeout(BaseException):
    """Raised by the watchdog in the middle of a case (BaseException: no `except Exception`
    in the code under test can swallow it)."""


@dataclass
class Loaded:
    """What a case that loaded gave, for comparing with its seed."""

    n_slices: int
    tables: dict[str, int] | None  # relative path -> rows of the tables read (None: the
    # overview itself failed)
    errors: list[Exception]  # crashes of the consumers and broken invariants


class _Stages:
    """Runs the consumers one at a time: a crash in one is kept and the others still run."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ProftuiError:
            return None  # a readable refusal of one question is fine
        except Exception as exc:
            self.errors.append(exc)
            return None


def exercise(path: Path, rng: random.Random, batch_bytes: int, scratch: Path) -> Loaded:
    """Load `path` (a ProftuiError refusing it propagates) and drive every consumer over it.

    Crashes of the consumers and broken invariants are collected in `Loaded.errors`.
    """
    index = load_trace(str(path), use_cache=False, batch_bytes=batch_bytes)
    run = _Stages()
    run(_check_index, index)
    overview = run(read_overview, index)
    summary, tables, found = overview or ({}, [], None)
    if found is not None:
        run(iterations_table, found, capture_start_ns(index, found))
    types = run(op_types, index, tables)
    for by in ("name", "category", "type"):
        run(_ops, index, rng, by, types)
    rows = run(rows_for, index)
    if rows is not None:
        run(_paint, index, rows, rng)
        run(_details, index, rows, rng)
    run(_instant_args, index)
    run(lambda: report_tables(summary_report(index)))
    for table in tables:
        run(_table_queries, table, rng)
    run(_export, index, rng, scratch)
    if found is not None:
        run(_analysis, index, found, tables, rng)
    profile = summary.get("profile") or {}
    root = profile.get("root") or str(path)
    read = {os.path.relpath(t["path"], root): t.get("rows", -1)
            for t in profile.get("tables", []) if "error" not in t}
    return Loaded(index.n_slices, read if overview else None, run.errors)


def _analysis(index: TraceIndex, found: Any, tables: Any, rng: random.Random) -> None:
    """Breakdown, advice and utilisation: every part non-negative and adding up."""
    from proftui.core.analysis.advise import advise
    from proftui.core.analysis.breakdown import breakdown
    from proftui.core.analysis.utilisation import utilisation

    window = _window(rng, index.start_ns, index.end_ns)
    for result in (breakdown(index, found, tables),
                   breakdown(index, found, tables, window=tuple(window.values()))):
        for b in result.steps + result.total:
            d = b.device
            if d is None:
                continue
            if min(v for k, v in d.items() if k not in ("start_ns", "end_ns", "prepare_ns")) < 0:
                raise InvariantBroken("breakdown", f"negative part in {d}")
            parts = d["compute_ns"] + d["comm_exposed_ns"] + d["memcpy_exposed_ns"] + d["idle_ns"]
            idle = d["host_bound_ns"] + d["wait_ns"] + d["idle_other_ns"]
            if parts != d["span_ns"] or idle != d["idle_ns"]:
                raise InvariantBroken("breakdown", f"parts do not add up: {d}")
    advice = advise(index, found, tables)
    if any(f.time_lost_ns < 0 or len(f.evidence) > 20 for f in advice.findings):
        raise InvariantBroken("advise", "negative time lost or too much evidence")
    for u in utilisation(index, index.start_ns, index.end_ns, rng.choice([1, 7, 300]), tables):
        for values in u.series.values():
            if values.size and not ((values >= 0) & (values <= 1)).all():
                raise InvariantBroken("utilisation", "fraction outside [0, 1]")


def _ops(index: TraceIndex, rng: random.Random, by: str, types: Any) -> None:
    window = {} if rng.random() < 0.5 else _window(rng, index.start_ns, index.end_ns)
    ops = aggregate_ops(index, by=by, types=types if by == "type" else None,
                        side=rng.choice(SIDES), **window)
    counts = ops.columns[1].values
    if len(counts) and (np.isnan(counts).any() or counts.min() < 1):
        raise InvariantBroken("ops", f"counts {counts[:5]}")
    if len(counts) and (ops.columns[2].values < 0).any():
        raise InvariantBroken("ops", "negative total")


def _paint(index: TraceIndex, rows: Any, rng: random.Random) -> None:
    lo, hi = index.start_ns, index.end_ns
    row_ids = np.arange(min(rows.n_rows, 2000))
    for start, end in [(lo, hi), tuple(_window(rng, lo, hi).values())]:
        cells = paint_cells(index, rows, row_ids, start, end, rng.choice([1, 13, 120, 400]))
        owner = cells.owner
        if owner.size and (owner.min() < -1 or owner.max() >= index.n_slices):
            raise InvariantBroken("cells", f"owner out of range {owner.min()}..{owner.max()}")
        if cells.busy.size and not ((cells.busy >= -1e-9) & (cells.busy <= 1 + 1e-9)).all():
            raise InvariantBroken("cells", "busy fraction outside [0, 1]")


def _details(index: TraceIndex, rows: Any, rng: random.Random) -> None:
    n = index.n_slices
    for i in sorted({0, n - 1, *(rng.randrange(n) for _ in range(3))}) if n else []:
        slice_args(index, i)
        describe_slice(index, rows, i)


def _instant_args(index: TraceIndex) -> None:
    refs = index.col("instants.ref")
    for j in ({0, len(refs) - 1} if len(refs) else set()):
        args_of(index, int(refs[j]))


def _table_queries(table: Any, rng: random.Random) -> None:
    totals(table)
    default_sort(table)
    for c in range(min(len(table.columns), 50)):
        order = sort_order(table, c, descending=rng.random() < 0.5)
        for r in order[:3].tolist():
            format_cell(table.columns[c], table.columns[c].values[r])


def _export(index: TraceIndex, rng: random.Random, scratch: Path) -> None:
    keys = rng.choice([(), ("name",), ("Task Type", "size(B)", "Input Dims")])
    result = export_events(index, scratch / "export.csv", overwrite=True,
                           unit=rng.choice(list(UNITS)), args_keys=keys, bom=rng.random() < 0.2)
    n, n_instants = index.n_slices, len(index.col("instants.ts"))
    if result.rows != n + n_instants:
        raise InvariantBroken("export", f"{result.rows} rows for {n} slices + {n_instants} "
                                        "instants")


def _window(rng: random.Random, lo: int, hi: int) -> dict[str, int]:
    span = max(hi - lo, 1)
    a = lo + int(span * rng.uniform(-0.2, 1.1))
    b = a + max(int(span * rng.uniform(0, 0.6)), 1)
    return {"start_ns": a, "end_ns": b}


def _check_index(index: TraceIndex) -> None:
    start, dur = index.col("slices.start"), index.col("slices.dur")
    if index.end_ns < index.start_ns:
        raise InvariantBroken("span", f"end {index.end_ns} before start {index.start_ns}")
    if not len(start):
        return
    if dur.min() < 0:
        raise InvariantBroken("slices", f"negative duration {dur.min()}")
    with np.errstate(over="ignore"):
        end = start + dur
    if (end < start).any():
        raise InvariantBroken("slices", "start + duration overflows int64")
    if start.min() < index.start_ns or end.max() > index.end_ns:
        raise InvariantBroken("slices", f"a slice outside the trace's span: {start.min()}.."
                                        f"{end.max()} in {index.start_ns}..{index.end_ns}")


def signature(exc: BaseException) -> str:
    """(exception type, innermost frame in proftui's code): failures with one cause share it."""
    if isinstance(exc, InvariantBroken):
        return f"InvariantBroken[{exc.check}]"
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f.filename.startswith(str(PACKAGE_ROOT))
            and "/bench/" not in f.filename and "/tests/" not in f.filename]
    where = ""
    if ours:
        f = ours[-1]
        where = f" at {os.path.relpath(f.filename, PACKAGE_ROOT)}:{f.lineno} in {f.name}"
    return f"{'Timeout' if isinstance(exc, CaseTimeout) else type(exc).__name__}{where}"


@dataclass
class Outcome:
    """How a case ended: "loaded", "refused" (a ProftuiError) or "failed"."""

    status: str
    seconds: float
    failures: dict[str, str] = field(default_factory=dict)  # signature -> traceback
    detail: str = ""  # the message of a refusal


def run_case(case: Case, rng: random.Random, baseline: Callable[[Seed], Loaded | None],
             scratch: Path, seconds: int = CASE_SECONDS) -> Outcome:
    """Run one case under a watchdog and judge it against its oracle."""
    began = time.perf_counter()

    def expire(_signum: int, _frame: object) -> None:
        raise CaseTimeout(f"more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire) if seconds else None
    if seconds:
        signal.alarm(seconds)
    errors: list[BaseException]
    try:
        try:
            loaded = exercise(case.path, rng, case.batch_bytes, scratch)
        finally:
            if seconds:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
        errors = [*loaded.errors, *_judge(case, loaded, baseline(case.seed))]
    except ProftuiError as exc:
        if not (case.oracle and baseline(case.seed) is not None):
            return Outcome("refused", time.perf_counter() - began, detail=str(exc))
        errors = [InvariantBroken("refused", f"a {case.oracle!r} case was refused: {exc}")]
    except (Exception, CaseTimeout) as exc:
        errors = [exc]
    seconds_taken = time.perf_counter() - began
    if not errors:
        return Outcome("loaded", seconds_taken)
    failures = {}
    for exc in errors:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        failures.setdefault(signature(exc), text)
    return Outcome("failed", seconds_taken, failures)


def _judge(case: Case, loaded: Loaded, seed: Loaded | None) -> list[Exception]:
    if seed is None or case.oracle != "same":
        return []
    if loaded.n_slices != seed.n_slices:
        return [InvariantBroken("lost", f"{loaded.n_slices} slices, the seed has "
                                        f"{seed.n_slices}")]
    if loaded.tables is None or seed.tables is None:
        return []  # the overview failed, and that is reported already
    return [InvariantBroken("lost", f"untouched table {rel}: {loaded.tables.get(rel)} rows, "
                                    f"the seed's has {n_rows}")
            for rel, n_rows in seed.tables.items()
            if rel not in case.touched and loaded.tables.get(rel) != n_rows][:1]


class Baselines:
    """What each unmutated seed gives (None when it is itself refused), computed once."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.known: dict[Path, Loaded | None] = {}
        self.failed: dict[Path, list[str]] = {}  # seeds that fail unmutated, and how

    def __call__(self, seed: Seed) -> Loaded | None:
        if seed.path not in self.known:
            try:
                loaded = exercise(seed.path, random.Random(0), 1 << 20, self.scratch)
            except ProftuiError:
                loaded = None
            except Exception as exc:  # the seed itself fails to load: its cases will say why
                loaded = None
                self.failed[seed.path] = [signature(exc)]
            if loaded is not None and loaded.errors:  # a consumer fails on the seed itself
                self.failed[seed.path] = sorted({signature(e) for e in loaded.errors})
            self.known[seed.path] = loaded
        return self.known[seed.path]


# -- the offline run ----------------------------------------------------------------------------


@dataclass
class Tally:
    """Figures of a run."""

    began: float = field(default_factory=time.perf_counter)
    cases: Counter = field(default_factory=Counter)  # (seed label, status) -> count
    kinds: Counter = field(default_factory=Counter)  # seed kind -> count
    unmade: int = 0  # cases the fuzzer failed to make (its own problem, not proftui's)
    failures: dict[str, list[str]] = field(default_factory=dict)  # signature -> saved dirs
    counts: Counter = field(default_factory=Counter)  # signature -> count
    slowest: tuple[float, str] = (0.0, "")

    def add(self, case: Case, outcome: Outcome, saved: dict[str, str]) -> None:
        self.cases[(case.seed.label, outcome.status)] += 1
        self.kinds[case.seed.kind] += 1
        if outcome.seconds > self.slowest[0]:
            self.slowest = (outcome.seconds, f"case {case.number} ({case.seed.label})")
        for sig in outcome.failures:
            self.counts[sig] += 1
            self.failures.setdefault(sig, [])
            if saved.get(sig):
                self.failures[sig].append(saved[sig])

    @property
    def total(self) -> int:
        return sum(self.cases.values())

    def line(self) -> str:
        elapsed = time.perf_counter() - self.began
        status = Counter()
        for (_, s), n in self.cases.items():
            status[s] += n
        return (f"[{elapsed / 60:5.1f} min] {self.total} cases, {status['loaded']} loaded, "
                f"{status['refused']} refused, {status['failed']} failed "
                f"({len(self.counts)} distinct), {self.total / max(elapsed, 1e-9):.1f} cases/s")

    def report(self) -> str:
        elapsed = time.perf_counter() - self.began
        out = [self.line(), "", "cases by seed:"]
        labels = sorted({label for label, _ in self.cases})
        for label in labels:
            parts = {s: self.cases[(label, s)] for s in ("loaded", "refused", "failed")}
            out.append(f"  {label:32} {sum(parts.values()):6} tried: {parts['loaded']} loaded, "
                       f"{parts['refused']} refused, {parts['failed']} failed")
        out.append("  by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items())))
        out.append(f"slowest case: {self.slowest[0]:.1f} s, {self.slowest[1]}")
        if self.unmade:
            out.append(f"cases the fuzzer could not make: {self.unmade}")
        out.append(f"minutes: {elapsed / 60:.1f}; cases/s: {self.total / max(elapsed, 1e-9):.2f}")
        out.append(f"failures: {sum(self.counts.values())} in {len(self.counts)} signatures")
        for sig, n in self.counts.most_common():
            where = self.failures[sig][0] if self.failures[sig] else "(not saved)"
            out.append(f"  {n:5} x {sig}\n          e.g. {where}")
        return "\n".join(out)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:120]


def save_failure(out: Path, case: Case, sig: str, text: str) -> str:
    """Keep a failing input with its traceback; returns where it went."""
    where = out / _slug(sig) / f"case-{case.number}"
    if where.exists():
        _remove(where)
    where.mkdir(parents=True)
    target = where / case.path.name
    if case.path.is_dir():
        shutil.copytree(case.path, target, symlinks=True)
    else:
        shutil.copyfile(case.path, target)
    (where / "traceback.txt").write_text(
        f"seed: {case.seed.path}\nbatch_bytes: {case.batch_bytes}\noracle: {case.oracle!r}\n"
        "mutations:\n" + "".join(f"  - {m}\n" for m in case.mutations) + "\n" + text,
        errors="backslashreplace")
    return str(target)


def _watchdog(stamp: list[float], limit: float, out: Path) -> None:
    """Last resort when SIGALRM cannot interrupt (a hang inside C code): dump and exit."""
    while True:
        time.sleep(5)
        if stamp[0] and time.perf_counter() - stamp[0] > limit:
            frames = sys._current_frames()
            text = "".join(traceback.format_stack(frames[threading.main_thread().ident]))
            (out / "hang.txt").write_text(text)
            print(f"\nHANG: a case ran for more than {limit:.0f} s; stack in {out}/hang.txt "
                  "(the input is the case dir under the scratch folder)", flush=True)
            os._exit(3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="how long to run")
    parser.add_argument("--seed", type=int, default=1, help="random seed")
    parser.add_argument("--out", default="/tmp/proftui-fuzz", help="where failures are saved")
    parser.add_argument("--cases", type=int, default=0, help="stop after this many cases")
    parser.add_argument("--samples-only", action="store_true", help="leave out the corpus")
    parser.add_argument("--case-seconds", type=int, default=CASE_SECONDS)
    parser.add_argument("--memory-gb", type=float, default=6.0, help="address-space limit")
    parser.add_argument("--replay", help="run one saved input (file or directory) and exit")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    limit = int(args.memory_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    scratch = Path(tempfile.mkdtemp(prefix="proftui-fuzz-"))
    os.environ["PROFTUI_CACHE_DIR"] = str(scratch / "cache")
    if args.replay:
        loaded = exercise(Path(args.replay), random.Random(args.seed), 1 << 20, scratch)
        print(f"loaded: {loaded.n_slices} slices, tables {loaded.tables}")
        for exc in loaded.errors:
            traceback.print_exception(type(exc), exc, exc.__traceback__)
        return 1 if loaded.errors else 0
    seeds = find_seeds(corpus=None if args.samples_only else CORPUS)
    print(f"{len(seeds)} seeds ({sum(s.kind == 'profile' for s in seeds)} profile dirs); "
          f"seed {args.seed}; {args.minutes} min; failures to {out}; scratch {scratch}",
          flush=True)
    rng = random.Random(args.seed)
    baselines = Baselines(scratch)
    for seed in seeds:
        base = baselines(seed)
        what = (f"{base.n_slices} slices, {len(base.tables)} tables" if base else
                "refused")
        if seed.path in baselines.failed:
            what += f"; FAILS UNMUTATED: {', '.join(baselines.failed[seed.path])}"
        print(f"  {seed.label:32} {seed.path.name}: {what}")
    tally = Tally()
    stamp = [0.0]
    threading.Thread(target=_watchdog, args=(stamp, args.case_seconds * 4 + 30, out),
                     daemon=True).start()
    deadline = time.perf_counter() + args.minutes * 60
    last_print = time.perf_counter()
    weights = [s.weight for s in seeds]
    number = 0
    try:
        while time.perf_counter() < deadline and (not args.cases or number < args.cases):
            number += 1
            seed = rng.choices(seeds, weights)[0]
            try:
                case = make_case(rng, number, seed, scratch / "case")
            except Exception as exc:  # the fuzzer's own trouble (e.g. memory): say so, go on
                print(f"case {number}: could not be made ({type(exc).__name__}: {exc})")
                tally.unmade += 1
                continue
            stamp[0] = time.perf_counter()
            outcome = run_case(case, rng, baselines, scratch, args.case_seconds)
            stamp[0] = 0.0
            saved = {}
            for sig, text in outcome.failures.items():
                if len(tally.failures.get(sig, [])) < SAVED_PER_SIGNATURE:
                    saved[sig] = save_failure(out, case, sig, text)
                if tally.counts[sig] == 0:
                    print(f"NEW FAILURE {sig} (case {number}, {seed.label}: "
                          f"{'; '.join(case.mutations)[:200]!r})", flush=True)
            tally.add(case, outcome, saved)
            if time.perf_counter() - last_print > 30:
                print(tally.line(), flush=True)
                last_print = time.perf_counter()
    except KeyboardInterrupt:
        print("interrupted")
    report = tally.report()
    print("\n" + report)
    (out / f"summary-seed{args.seed}.txt").write_text(report + "\n")
    _remove(scratch)
    return 1 if tally.counts else 0


if __name__ == "__main__":
    sys.exit(main())
