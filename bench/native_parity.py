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
import hashlib
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CORPUS = HERE.parent / "shared" / "corpus"


def index_hashes(path: str, native: bool, batch_bytes: int | None = None,
                 ) -> tuple[dict[str, str], dict[str, int]]:
    """The hashes of the index of `path` read with or without the native reader, and the
    batches each reader read."""
    import numpy as np

    from proftui.core import load_trace

    os.environ["PROFTUI_NATIVE"] = "1" if native else "0"
    try:
        index = load_trace(path, use_cache=False, batch_bytes=batch_bytes)
    except Exception as exc:  # a refusal is an answer too, and must be the same
        return {"error": f"{type(exc).__name__}: {exc}"}, {}
    out = {}
    for name in sorted(index.arrays):
        array = np.ascontiguousarray(index.arrays[name])
        out[name] = _hash(str(array.dtype).encode() + array.tobytes())
    texts = "\x00".join(index.strings[i] for i in range(len(index.strings)))
    out["strings"] = _hash(texts.encode("utf-8", "surrogatepass"))
    meta = {k: v for k, v in index.meta.items() if k not in ("cache_path", "cache_id", "reader")}
    out["meta"] = _hash(json.dumps(meta, sort_keys=True, default=repr).encode())
    out["diagnostics"] = _hash(repr([vars(p) if hasattr(p, "__dict__") else repr(p)
                                    for p in index.diagnostics]).encode())
    return out, dict(index.meta.get("reader", {}))


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24]


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
