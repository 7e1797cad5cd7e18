"""Fingerprint everything a user sees, to prove a refactor changed no number.

For every bundled sample and named corpus folder: a hash of the index (every array, the
string table, the meta and the diagnostics) and of the output of every headless command
(`--json` where it has one, the CSV of `export`, the text of the rest), with its exit status.
Run it on two versions of the code and compare the manifests:

    git archive BASE --prefix=proftui/ | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base python bench/same_answers.py -o /tmp/before.json
    python bench/same_answers.py -o /tmp/after.json --compare /tmp/before.json

The code measured is whichever `proftui` is first on sys.path (PYTHONPATH wins over the
editable install). Each run uses an empty cache directory of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CORPUS = HERE.parent / "shared" / "corpus"

SAMPLES = ["kineto_demo.pt.trace.json", "diff_before.pt.trace.json", "diff_after.pt.trace.json",
           "ascend_cann8", "ascend_old_layout", "cluster_2rank", "torch_npu"]
CORPUS_PATHS = [
    "kineto/step_based_trace_2543932.json.gz", "kineto/resnet50_num_workers_0.pt.trace.json.gz",
    "chrome/big_trace.json", "chrome/google_cloud_trace.json", "chrome/flow_simple.json",
    "chrome/main_thread_has_unclosed_slices.json", "chrome/instant_events.json",
    "chrome/x_event_trace.json", "chrome/nanoseconds.json", "chrome/simple_trace.json",
    "chrome/nestable_async.json", "chrome/async_begin_end.json",
    "ascend/torch_npu_rank_0", "ascend/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA",
    "ascend/PROF_000001_20230818142704322_COJGGGCANRMICFBC", "ascend/torch_npu_trace_view",
    "torch_npu_2rank/text_level1", "torch_npu_2rank/db_level1",
    "torch_npu_2rank/text_level1/rank0_ascend_pt", "torch_npu_2rank/db_level1/rank1_ascend_pt",
]
COMMANDS = [
    ["info", "--json"], ["summary", "--json"], ["ops", "--json"],
    ["ops", "--json", "--by", "type", "--side", "device"], ["iterations", "--json"],
    ["breakdown", "--json"], ["advise", "--json"], ["cluster", "--json"], ["memory", "--json"],
    ["comm", "--json"], ["table", "--json"], ["export", "--all", "-o", "-"],
    ["export", "--all", "--what", "ops", "-o", "-"], ["info"], ["summary"], ["ops"],
    ["iterations"], ["breakdown"], ["advise"], ["cluster"], ["comm"], ["memory"], ["table"],
]
PAIRS = [("samples/diff_before.pt.trace.json", "samples/diff_after.pt.trace.json"),
         ("corpus/torch_npu_2rank/text_level1", "corpus/torch_npu_2rank/db_level1")]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24]


def index_digest(path: str) -> dict[str, str]:
    from proftui.core import load_trace

    try:
        index = load_trace(path)
    except Exception as exc:  # a refusal is an answer too
        return {"error": f"{type(exc).__name__}: {exc}"}
    return index_hashes(index)


def index_hashes(index, drop_meta: tuple[str, ...] = ()) -> dict[str, str]:
    """A hash of each array of `index`, of its string table, of its metadata (but the random
    cache keys and `drop_meta`) and of its diagnostics."""
    import numpy as np

    out = {}
    for name in sorted(index.arrays):
        array = np.ascontiguousarray(index.arrays[name])
        out[name] = digest(str(array.dtype).encode() + array.tobytes())
    out["strings"] = digest("\x00".join(index.strings[i] for i in range(len(index.strings)))
                            .encode("utf-8", "surrogatepass"))
    meta = {k: v for k, v in index.meta.items()
            if k not in ("cache_path", "cache_id", *drop_meta)}  # (the cache keys: random)
    out["meta"] = digest(json.dumps(meta, sort_keys=True, default=repr).encode())
    out["diagnostics"] = digest(repr([vars(p) if hasattr(p, "__dict__") else repr(p)
                                     for p in index.diagnostics]).encode())
    return out


def run(argv: list[str]) -> dict[str, str]:
    from proftui.tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:
            status = exc.code
    return {"status": str(status), "stdout": digest(out.getvalue().encode()),
            "stderr": digest(err.getvalue().encode()), "bytes": str(len(out.getvalue()))}


def manifest() -> dict[str, dict]:
    paths = {f"samples/{p}": str(HERE / "samples" / p) for p in SAMPLES}
    paths.update({f"corpus/{p}": str(CORPUS / p) for p in CORPUS_PATHS if (CORPUS / p).exists()})
    result: dict[str, dict] = {}
    for label, path in paths.items():
        entry: dict[str, object] = {"index": index_digest(path)}
        for argv in COMMANDS:
            entry[" ".join(argv)] = run([argv[0], path, *argv[1:]])
        result[label] = entry
        print(label, file=sys.stderr)
    for base, new in PAIRS:
        if base in paths and new in paths:
            result[f"diff {base} {new}"] = {
                "json": run(["diff", paths[base], paths[new], "--json"]),
                "text": run(["diff", paths[base], paths[new]])}
    return result


def compare(now: dict, before: dict) -> int:
    changed = 0
    for label in sorted(set(now) | set(before)):
        a, b = before.get(label, {}), now.get(label, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                changed += 1
                print(f"CHANGED {label} :: {key}\n  before {a.get(key)}\n  now    {b.get(key)}")
    answers = sum(len(v) for v in now.values())
    print(f"{len(now)} inputs, {answers} answers compared, {changed} changed")
    return 1 if changed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--compare", metavar="BEFORE.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["PROFTUI_CACHE_DIR"] = cache
        os.environ.pop("PROFTUI_CACHE_MAX", None)
        result = manifest()
    import proftui

    print(f"proftui from {Path(proftui.__file__).parent}", file=sys.stderr)
    Path(args.output).write_text(json.dumps(result, indent=1, sort_keys=True))
    if args.compare:
        return compare(result, json.loads(Path(args.compare).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
