#!/usr/bin/env python3
"""The native event reader under AddressSanitizer and UndefinedBehaviorSanitizer.

Builds core/importers/chrome/_native.c with ``-fsanitize=address,undefined`` into a temporary
folder (gcc and the Python headers found by sysconfig; no setuptools), then runs in a child
interpreter, with gcc's libasan preloaded and Python's allocator off (``PYTHONMALLOC=malloc``,
so that every buffer has ASan's red zones around it), the fuzz cases of bench/fuzz.py's trace
seeds: the bundled samples' traces mutated by bench/fuzz_mutations.py (one edit of the whole
file, or one to six byte and JSON edits), as bench/fuzz.py makes them. Each case is handed to
``read_batch`` as a buffer of exactly its size:

- the whole file, ``read_batch(data, 0, len(data))``;
- the inside of its event array (from the first ``[`` to the last ``]``), the shape of the
  batches the reader cuts;
- ``--slices`` random ranges of it, and one range that is not inside it (negative, reversed
  or past the end), which must be refused or declined, never read.

A case's result is counted as accepted (a tuple), declined (None) or refused (an exception).
A sanitizer report ends the child: the case is a crash, its input is written to ``--out``,
the report's head printed, and the run goes on from the next case. Exit status 1 on any
crash or on an out-of-range call that was accepted, else 0.

Every case is made from its own seed (``--seed`` and its number), so ``--first N --cases 1``
runs case N again alone.

    python bench/native_sanitize.py                  # 10,000 cases, a few minutes
    python bench/native_sanitize.py --cases 500 --slices 2
    python bench/native_sanitize.py --first 4711 --cases 1   # one case again
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "core" / "importers" / "chrome" / "_native.c"
SAMPLES = REPO / "samples"
SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1"]
ASAN_OPTIONS = "detect_leaks=0"
UBSAN_OPTIONS = "halt_on_error=1:print_stacktrace=1"
REPORT_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: UndefinedBehavior")
WHOLE_FILE_EDITS = 0.15  # as bench/fuzz.py's make_case
MAX_CRASHES = 20


# -- the parent: build, run, count -------------------------------------------------------------
def build(source: Path, folder: Path) -> Path:
    """The module built with the sanitizers into `folder`; exits with a sentence on failure."""
    paths = sysconfig.get_paths()
    target = folder / ("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    command = ["gcc", "-shared", "-fPIC", "-std=c11", "-Wall", *SANITIZE,
               "-I", paths["include"], "-I", paths["platinclude"], str(source), "-o", str(target)]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("gcc not found: the sanitizers need it")
    if done.returncode != 0:
        sys.exit(f"building {source} failed:\n{done.stderr}")
    if done.stderr:
        print(done.stderr, file=sys.stderr)
    return target


def libasan() -> str:
    found = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                           text=True).stdout.strip()
    if not os.path.isabs(found) or not os.path.exists(found):
        sys.exit("gcc's libasan.so not found (install gcc's AddressSanitizer runtime)")
    return found


def child_env(asan: str) -> dict[str, str]:
    return {**os.environ, "LD_PRELOAD": asan, "ASAN_OPTIONS": ASAN_OPTIONS,
            "UBSAN_OPTIONS": UBSAN_OPTIONS, "PYTHONMALLOC": "malloc"}


def run_children(module: Path, args: argparse.Namespace) -> dict[str, int]:
    """Run every case, a new child after each crash; the totals."""
    totals = {"cases": 0, "accepted": 0, "declined": 0, "refused": 0, "crashes": 0,
              "bad_range_accepted": 0, "exact_buffer": 0}
    first, end = args.first, args.first + args.cases
    env = child_env(libasan())
    while first < end:
        command = [sys.executable, __file__, "--child", str(module), "--seed", str(args.seed),
                   "--first", str(first), "--cases", str(end - first),
                   "--slices", str(args.slices)] + (["--heavy"] if args.heavy else [])
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        started = None
        for line in done.stdout.splitlines():
            word, _, rest = line.partition(" ")
            if word == "start":
                started = int(rest)
            elif word == "done":
                counts = json.loads(rest)
                for key, value in counts.items():
                    totals[key] += value
                totals["cases"] += 1
                started = None
        if done.returncode == 0 and started is None:
            break
        if started is None:  # died outside a case: nothing to go on from
            sys.exit(f"the child failed ({done.returncode}):\n{done.stderr[-3000:]}")
        totals["cases"] += 1
        totals["crashes"] += 1
        report_crash(started, args, done.stderr)
        if totals["crashes"] >= MAX_CRASHES:
            print(f"stopping after {MAX_CRASHES} crashes", file=sys.stderr)
            break
        first = started + 1
    return totals


def report_crash(number: int, args: argparse.Namespace, stderr: str) -> None:
    data, what = make_case(args.seed, number, seeds(), args.heavy)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"case-{number}.json"
    path.write_bytes(data)
    lines = stderr.splitlines()
    at = next((i for i, line in enumerate(lines) if any(m in line for m in REPORT_MARKS)), 0)
    print(f"\ncrash in case {number} ({'; '.join(what)[:200]}), input {path}; again: "
          f"python {Path(__file__).name} --first {number} --cases 1 --seed {args.seed}",
          file=sys.stderr)
    print("\n".join(lines[at:at + 25]), file=sys.stderr)


# -- the cases ---------------------------------------------------------------------------------
def seeds() -> list[Path]:
    """The bundled samples' traces (their JSON files with events): Kineto's, torch_npu's and
    msprof's (string timestamps), bench/fuzz.py's trace seeds and the other samples'."""
    return [p for p in sorted(SAMPLES.rglob("*.json")) if b'"ph"' in p.read_bytes()]


def make_case(seed: int, number: int, files: list[Path], heavy: bool) -> tuple[bytes, list[str]]:
    """Case `number`: a sample's bytes, mutated as bench/fuzz.py mutates a trace."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fuzz_mutations import edit_json, mutate_whole_json

    rng = random.Random(f"{seed}:{number}")
    source = rng.choice(files)
    data, what = source.read_bytes(), [str(source.relative_to(SAMPLES))]
    if rng.random() < WHOLE_FILE_EDITS:
        data, edit, _ = mutate_whole_json(rng, data)
        what.append(edit)
    else:
        for _ in range(rng.randint(1, 6)):
            data, edit = edit_json(rng, data, 0.6, heavy)
            what.append(edit)
    return data, what


def ranges(rng: random.Random, data: bytes, slices: int) -> list[tuple[int, int]]:
    """The ranges read of one case: whole, the event array's inside, random slices."""
    n = len(data)
    found = [(0, n)]
    first, last = data.find(b"["), data.rfind(b"]")
    if 0 <= first < last:
        found.append((first + 1, last))
    for _ in range(slices):
        start = rng.randrange(n + 1)
        found.append((start, rng.randint(start, n)))
    return found


def outside(rng: random.Random, n: int) -> tuple[int, int]:
    """A range that is not inside a buffer of `n` bytes."""
    return rng.choice([(-1, n), (0, n + 1), (n, n - 1),
                       (n + 1, n + 2), (-(1 << 40), 1), (0, 1 << 62), (1 << 62, 1 << 62)])


# -- the child: every call under the sanitizers ------------------------------------------------
def exact_buffer(data: bytes):
    """A copy of `data` in a buffer of exactly its size (a bytes object keeps a NUL after
    its last byte, which would hide a read one past the end)."""
    import ctypes

    return (ctypes.c_char * len(data)).from_buffer_copy(data) if data else b""


def call(read_batch, buffer, start: int, end: int) -> str:
    try:
        result = read_batch(buffer, start, end)
    except Exception:
        return "refused"
    if result is None:
        return "declined"
    if not isinstance(result, tuple):
        raise SystemExit(f"read_batch returned {type(result).__name__}, not a tuple or None")
    return "accepted"


def child(args: argparse.Namespace) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_native", args.child)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    read_batch = module.read_batch
    files = seeds()
    exact = True
    for number in range(args.first, args.first + args.cases):
        data, _ = make_case(args.seed, number, files, args.heavy)
        rng = random.Random(f"{args.seed}:{number}:ranges")
        print(f"start {number}", flush=True)
        buffer = exact_buffer(data) if exact else data
        if exact and call(read_batch, buffer, 0, len(data)) == "refused" \
                and call(read_batch, data, 0, len(data)) != "refused":
            exact, buffer = False, data  # the module takes bytes only: hand it bytes
        counts = {"accepted": 0, "declined": 0, "refused": 0, "bad_range_accepted": 0,
                  "exact_buffer": int(exact)}
        for start, end in ranges(rng, data, args.slices):
            counts[call(read_batch, buffer, start, end)] += 1
        if call(read_batch, buffer, *outside(rng, len(data))) == "accepted":
            counts["bad_range_accepted"] += 1
        print(f"done {json.dumps(counts)}", flush=True)


# ----------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases to run (10000)")
    parser.add_argument("--first", type=int, default=0, help="number of the first case (0)")
    parser.add_argument("--seed", type=int, default=20261202, help="the fixed seed")
    parser.add_argument("--slices", type=int, default=4,
                        help="random ranges read of each case, beside the whole (4)")
    parser.add_argument("--heavy", action="store_true",
                        help="also the edits that make a case MBs larger (slow)")
    parser.add_argument("--source", default=str(SOURCE), help="the C source (_native.c)")
    parser.add_argument("--out", default="/tmp/proftui-sanitize",
                        help="where the inputs of crashes are written")
    parser.add_argument("--child", metavar="MODULE", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        child(args)
        return 0
    source = Path(args.source)
    if not source.is_file():
        sys.exit(f"{source} not found")
    with tempfile.TemporaryDirectory(prefix="proftui-sanitize-") as folder:
        module = build(source, Path(folder))
        totals = run_children(module, args)
    calls = totals["accepted"] + totals["declined"] + totals["refused"]
    print(f"cases {totals['cases']:,}; calls {calls:,}: accepted {totals['accepted']:,}, "
          f"declined {totals['declined']:,}, refused {totals['refused']:,}; "
          f"crashes {totals['crashes']}; out-of-range calls accepted "
          f"{totals['bad_range_accepted']}")
    if totals["exact_buffer"] < totals["cases"] - totals["crashes"]:
        print("note: the module refused exact-size buffers; it was handed bytes objects, "
              "whose trailing NUL hides a read one byte past the end")
    return 1 if totals["crashes"] or totals["bad_range_accepted"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
