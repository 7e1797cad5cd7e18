"""The mutations of the offline fuzzer (bench/fuzz.py): bytes and JSON of a trace, the rows
and cells of a summary CSV, and the files of a profile directory.

Each takes a random generator and an input and returns the mutated input with a short label
of what was done (a profile directory's copy is edited in place and a DirEdit returned), so
that a failing case says how its input was made.
"""

from __future__ import annotations

import gzip
import os
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

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


def edit_json(rng: random.Random, data: bytes, p_json: float,
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
        data, what = edit_json(rng, path.read_bytes(), 0.7, heavy)
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
            data, what = edit_json(rng, data, 0.67, heavy)
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
