"""The native event reader against the Python path: the same index, byte for byte.

Each input is indexed twice, with ``PROFTUI_NATIVE=1`` and ``PROFTUI_NATIVE=0``, without the
cache, and a hash of every array of the index, of its string table, of its metadata (but the
`reader` counts, which say which reader ran) and of its diagnostics is compared. Prints one line
per input with the batches each reader read, and exits 1 if any index differs.

    python bench/native_parity.py                       # the bundled samples and the corpus
    python bench/native_parity.py /tmp/proftui-bench/*.json*   # any traces (gen_trace.py's)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import same_answers  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
CORPUS = HERE.parent / "shared" / "corpus"


def index_hashes(path: str, native: bool, batch_bytes: int | None = None,
                 ) -> tuple[dict[str, str], dict[str, int]]:
    """The hashes of the index of `path` read with or without the native reader (those of
    same_answers.py, but the `reader` counts, which say which reader ran), and the batches
    each reader read."""
    from proftui.core import load_trace

    os.environ["PROFTUI_NATIVE"] = "1" if native else "0"
    try:
        index = load_trace(path, use_cache=False, batch_bytes=batch_bytes)
    except Exception as exc:  # a refusal is an answer too, and must be the same
        return {"error": f"{type(exc).__name__}: {exc}"}, {}
    return same_answers.index_hashes(index, drop_meta=("reader",)), \
        dict(index.meta.get("reader", {}))


def default_inputs() -> list[Path]:
    """Every bundled sample trace and profile, and every Chrome trace of the corpus."""
    paths = sorted((HERE / "samples").iterdir())
    if CORPUS.is_dir():
        paths += sorted(p for p in CORPUS.rglob("*")
                        if p.is_file() and (p.name.endswith((".json", ".json.gz"))))
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="traces or profiles (default: samples, corpus)")
    parser.add_argument("--batch-bytes", type=int, default=None,
                        help="cut batches this small (default: the reader's 1 MiB); small "
                             "batches put the native reader to work on small files too")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.paths] or default_inputs()
    differ = native_batches = python_batches = 0
    for path in paths:
        native, read = index_hashes(str(path), True, args.batch_bytes)
        python, _ = index_hashes(str(path), False, args.batch_bytes)
        changed = sorted(k for k in set(native) | set(python) if native.get(k) != python.get(k))
        native_batches += read.get("native", 0)
        python_batches += read.get("python", 0)
        state = "SAME" if not changed else "DIFFERS in " + ", ".join(changed)
        print(f"{state:8} native {read.get('native', 0):6} python {read.get('python', 0):6}"
              f"  {path}")
        differ += bool(changed)
    print(f"{len(paths)} inputs, {differ} differ; batches read natively {native_batches}, "
          f"by the Python path {python_batches}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
