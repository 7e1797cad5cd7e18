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
from proftui.core.analysis.overview import read_overview
from proftui.core.analysis.summary import report_tables, summary_report
from proftui.core.export.to_csv import UNITS, export_events
from proftui.core.model.index import TraceIndex
from proftui.core.ops.aggregate import SIDES, aggregate_ops
from proftui.core.ops.grouping import op_types
from proftui.core.ops.instances import iterations_table
from proftui.core.ops.iterations import capture_start_ns
from proftui.core.query.args import args_of, slice_args
from proftui.core.query.rows import paint_cells, rows_for
from proftui.core.query.slice_info import describe_slice
from proftui.core.tables.query import default_sort, format_cell, sort_order, totals

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_mutations import (  # noqa: E402  (beside this file)
    edit_json,
    mutate_bytes,
    mutate_profile,
    mutate_whole_json,
)

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
                data, what = edit_json(rng, data, 0.6, heavy)
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
