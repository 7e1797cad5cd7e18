"""A bounded random-mutation loop over small traces: nothing but readable errors may escape."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from proftui.core import ProftuiError, load_trace
from proftui.core.overview import overview

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TOKENS = [b'"', b"{", b"}", b"[", b"]", b",", b":", b"NaN", b"-1e400", b"null", b'"ph":"B"',
          b'"ph":"E"', b'"ph":"s"', b'"ph":"f"', b'"ph":"C"', b'"ph":"M"', b'"ph":"b"',
          b'"ph":"e"', b"\xff", b"\x00", b'"ts":"1.5e3"', b'"dur":-5', b'"tid":[1]',
          b'"id":{"local":1}', b'"args":{"name":5}', b'"s":"g"', b'"bp":"e"',
          b"99999999999999999999999", b'"ts":"99999999999999999999999.5"']


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
            index.slice_args(i)
        assert index.end_ns >= index.start_ns, case
