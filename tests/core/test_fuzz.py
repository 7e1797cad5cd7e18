"""Bounded random-mutation loops over every importer: nothing but readable errors may escape.

Chrome JSON traces, summary CSVs and whole profile directories (the bundled samples) are
mutated with a fixed seed; the cases of the last two come from the offline fuzzer
(bench/fuzz.py), which runs the same mutations and checks for as long as one likes.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import random
import sys
from pathlib import Path

from proftui.core import ProftuiError, load_trace
from proftui.core.analysis.overview import overview
from proftui.core.cache.tables import read_table
from proftui.core.discover.profile import discover
from proftui.core.ops.grouping import op_types
from proftui.core.ops.iterations import find_iterations
from proftui.core.query.args import slice_args
from proftui.core.tables.query import sort_order, totals

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
TOKENS = [b'"', b"{", b"}", b"[", b"]", b",", b":", b"NaN", b"-1e400", b"null", b'"ph":"B"',
          b'"ph":"E"', b'"ph":"s"', b'"ph":"f"', b'"ph":"C"', b'"ph":"M"', b'"ph":"b"',
          b'"ph":"e"', b"\xff", b"\x00", b'"ts":"1.5e3"', b'"dur":-5', b'"tid":[1]',
          b'"id":{"local":1}', b'"args":{"name":5}', b'"s":"g"', b'"bp":"e"',
          b"99999999999999999999999", b'"ts":"99999999999999999999999.5"']
# Fixed seeds, so that a failure names cases that run again the same way: csv_cases(seed, n,
# dir) and profile_cases(seed, n, dir) below take any seed (ten seeds from these pass).
CSV_SEED = 20261123
PROFILE_SEED = 20261123


def _load_fuzzer():
    spec = importlib.util.spec_from_file_location("proftui_bench_fuzz", ROOT / "bench" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fuzz = _load_fuzzer()
mutations = importlib.import_module("fuzz_mutations")  # beside fuzz.py, which put it on the path


def _seeds() -> list[bytes]:
    inline = json.dumps([
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
        {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 2, "dur": 3, "args": {"a": [1]}},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 9},
        {"ph": "s", "id": 7, "cat": "c", "name": "n", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "f", "id": 7, "cat": "c", "name": "n", "pid": 1, "tid": 2, "ts": 4, "bp": "e"},
        {"ph": "C", "name": "mem", "pid": 1, "ts": 5, "args": {"v": 1}},
        {"ph": "b", "cat": "io", "id": 1, "name": "r", "pid": 1, "ts": 1},
        {"ph": "e", "cat": "io", "id": 1, "name": "r", "pid": 1, "ts": 6},
    ]).encode()
    kineto = (SAMPLES / "kineto_demo.pt.trace.json").read_bytes()[:12000]
    msprof = next((SAMPLES / "ascend_cann8").rglob("msprof_slice_0_*.json")).read_bytes()[:12000]
    return [inline, kineto, msprof]


def test_mutated_traces_never_crash(tmp_path) -> None:
    rng = random.Random(20261122)
    seeds = _seeds()
    path = tmp_path / "case.json"
    for case in range(250):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(data) + 1)
            op = rng.random()
            if op < 0.3:
                del data[at: at + rng.randint(1, 20)]
            elif op < 0.7:
                data[at:at] = rng.choice(TOKENS)
            else:
                data[at: at + 1] = bytes([rng.randrange(256)])
        raw = gzip.compress(bytes(data)) if rng.random() < 0.1 else bytes(data)
        path.write_bytes(raw)
        try:
            index = load_trace(str(path), use_cache=False,
                               batch_bytes=rng.choice([7, 64, 4096, 1 << 20]))
        except ProftuiError:
            continue  # refused with a readable sentence
        overview(index)
        for i in range(min(3, index.n_slices)):
            slice_args(index, i)
        assert index.end_ns >= index.start_ns, case


def _sample_tables() -> list:
    return [t for profile in ("ascend_cann8", "ascend_old_layout", "torch_npu")
            for t in discover(str(next((SAMPLES / profile).iterdir()))).tables]


def csv_cases(seed: int, n_cases: int, work: Path) -> tuple[list[str], dict[str, int]]:
    """Run `n_cases` mutated sample CSVs; returns the failures and the outcome counts."""
    rng = random.Random(seed)
    sources = _sample_tables()
    index = load_trace(str(next((SAMPLES / "torch_npu").iterdir())), use_cache=False)
    failures: list[str] = []
    counts = {"read": 0, "refused": 0, "problems": 0}
    for case in range(n_cases):
        source = rng.choice(sources)
        data = Path(source.path).read_bytes()
        whats = []
        for _ in range(rng.randint(1, 3)):
            data, what = mutations.mutate_csv(rng, data, heavy=False)
            whats.append(what)
        path = work / Path(source.path).name
        path.write_bytes(data)
        try:
            table = read_table(str(path), source.kind, source.group)
        except ProftuiError:
            counts["refused"] += 1
            continue
        except Exception as exc:
            failures.append(f"seed {seed} case {case} {source.kind} {whats}: "
                            f"{fuzz.signature(exc)}")
            continue
        counts["read"] += 1
        counts["problems"] += sum(p.count for p in table.diagnostics)
        try:
            if not all(len(c.values) == table.n_rows for c in table.columns):
                raise fuzz.InvariantBroken("columns", "not all as long as the table")
            find_iterations(index, [table])
            op_types(index, [table])
            totals(table)
            for c in range(min(len(table.columns), 50)):
                sort_order(table, c)
        except ProftuiError:
            pass
        except Exception as exc:
            failures.append(f"seed {seed} case {case} {source.kind} {whats}: "
                            f"{fuzz.signature(exc)}")
    return failures, counts


def profile_cases(seed: int, n_cases: int, work: Path) -> tuple[list[str], dict[str, int]]:
    """Run `n_cases` mutated sample profiles; returns the failures and the outcome counts
    ("kept": loaded cases whose timelines were left alone, checked against the seed's)."""
    rng = random.Random(seed)
    seeds = [s for s in fuzz.find_seeds(SAMPLES, corpus=None) if s.kind == "profile"]
    scratch = work / "scratch"
    scratch.mkdir(exist_ok=True)
    baselines = fuzz.Baselines(scratch)
    assert all(baselines(s) is not None for s in seeds) and not baselines.failed
    failures: list[str] = []
    counts = {"loaded": 0, "refused": 0, "failed": 0, "kept": 0}
    for number in range(n_cases):
        case = fuzz.make_case(rng, number, rng.choice(seeds), work / "case", heavy=False)
        outcome = fuzz.run_case(case, rng, baselines, scratch)
        counts[outcome.status] += 1
        counts["kept"] += outcome.status == "loaded" and case.oracle == "same"
        failures += [f"seed {seed} case {number} ({case.seed.path.name}: {case.mutations}): "
                     f"{signature}" for signature in outcome.failures]
    return failures, counts


def test_mutated_summary_csvs(tmp_path) -> None:
    """Every mutated CSV reads into whole columns or is refused; iterations, op types and
    the table queries take whatever it reads."""
    failures, counts = csv_cases(CSV_SEED, 200, tmp_path)
    assert not failures, "\n".join(failures)
    assert counts["read"] > 150 and counts["problems"] > 0, counts  # not all refused


def test_mutated_profile_directories(tmp_path, cache_dir) -> None:
    """Mutated copies of the sample profiles load or are refused readably, every consumer
    takes what loads, and a mutation that leaves the timelines alone (a broken CSV or
    start_info, a dangling link, a junk file) loses no slice and no other table."""
    failures, counts = profile_cases(PROFILE_SEED, 60, tmp_path)
    assert not failures, "\n".join(failures)
    assert counts["loaded"] > 40 and counts["kept"] > 15, counts
