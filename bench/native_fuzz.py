"""Fuzz parity of the native event reader: mutated traces read by both readers agree.

Each case takes a seed trace (the bundled Chrome-trace samples, and any given), applies one to
three of the offline fuzzer's byte and JSON mutations (bench/fuzz_mutations.py), and indexes the
result twice, with ``PROFTUI_NATIVE=1`` and ``=0``, in small batches (so that the native reader
meets most of the file): the arrays, the string table, the diagnostics and the metadata (but
the `reader` counts) must be the same, or both must refuse the file with the same sentence.

    python bench/native_fuzz.py --cases 10000           # about 10 minutes on 2 cores
    python bench/native_fuzz.py --cases 200 --seed 7 extra_trace.json

Prints the cases, the batches each reader read, and every disagreement (with the mutations
that made its input); exits 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import same_answers  # noqa: E402
from fuzz_mutations import edit_json  # noqa: E402

SEEDS = ["kineto_demo.pt.trace.json", "diff_before.pt.trace.json", "diff_after.pt.trace.json"]
BATCHES = [256, 1024, 4096]


def fingerprint(path: str, native: bool, batch_bytes: int) -> tuple[str, dict[str, int]]:
    """A hash of everything the index of `path` holds (same_answers.py's hashes, but the
    `reader` counts), or of the sentence refusing it, and the batches each reader read."""
    from proftui.core import ProftuiError, load_trace

    os.environ["PROFTUI_NATIVE"] = "1" if native else "0"
    try:
        index = load_trace(path, use_cache=False, batch_bytes=batch_bytes)
    except ProftuiError as exc:
        return f"refused: {type(exc).__name__}: {exc}", {}
    hashes = same_answers.index_hashes(index, drop_meta=("reader",))
    return json.dumps(hashes, sort_keys=True), dict(index.meta.get("reader", {}))


@dataclass
class Tally:
    cases: int = 0
    native_batches: int = 0
    python_batches: int = 0
    disagreements: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"{self.cases} cases, {len(self.disagreements)} disagree; batches read "
                f"natively {self.native_batches}, by the Python path {self.python_batches}")


def run_case(rng: random.Random, seed: bytes, work: Path, tally: Tally) -> None:
    data, what = seed, []
    for _ in range(rng.randint(1, 3)):
        data, edit = edit_json(rng, data, p_json=0.7, heavy=False)
        what.append(edit)
    path = work / "case.json"
    path.write_bytes(data)
    batch = rng.choice(BATCHES)
    native, read = fingerprint(str(path), True, batch)
    python, _ = fingerprint(str(path), False, batch)
    tally.cases += 1
    tally.native_batches += read.get("native", 0)
    tally.python_batches += read.get("python", 0)
    if native != python:
        tally.disagreements.append(f"batch {batch}: " + "; ".join(what))


def run(cases: int, seed: int, extra: list[Path]) -> Tally:
    seeds = [(HERE.parent / "samples" / name).read_bytes() for name in SEEDS]
    seeds += [p.read_bytes() for p in extra]
    rng = random.Random(seed)
    tally = Tally()
    with tempfile.TemporaryDirectory() as work:
        for _ in range(cases):
            run_case(rng, rng.choice(seeds), Path(work), tally)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extra", nargs="*", type=Path, help="more seed traces")
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args(argv)
    from proftui.core.importers.chrome import native

    if native.MODULE is None:
        print("the native reader is not built here: nothing to compare", file=sys.stderr)
        return 2
    tally = run(args.cases, args.seed, args.extra)
    for line in tally.disagreements:
        print("DISAGREE", line)
    print(tally.line())
    return 1 if tally.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
