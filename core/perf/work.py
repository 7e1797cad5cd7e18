"""What one call of an op does, as a perf model states it (FLOPs and bytes moved), or why no
model can say; and the call as the models read it (shapes, canonical dtypes, concrete args).

Each model module (gemm, conv, attention, vector) turns a `Call` into `Work` or `NoModel`;
`models.op_work` picks the model by the op's name or type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from proftui.core.perf.dtypes import SIZES, canonical_dtype
from proftui.core.perf.shapes import Shape


@dataclass(frozen=True)
class Work:
    flops: int      # floating point operations of one call (a multiply-add is 2)
    bytes: int      # bytes one call moves to/from device memory, as the model assumes
    model: str      # the model's id in models.MODELS
    unit: str       # "matrix" or "vector": which peak bounds it
    dtype: str      # canonical dtype the FLOPs run in: picks the peak


@dataclass(frozen=True)
class NoModel:
    reason: str     # one plain sentence


@dataclass(frozen=True)
class Call:
    """One op call as the models read it. `dtypes` and `output_dtypes` are canonical (None
    where the profiler's text names no element type); `concrete` holds Kineto's Concrete
    Inputs, `formats` Ascend's Input Formats."""
    label: str                          # the name or type the model was picked by
    inputs: tuple[Shape | None, ...]
    dtypes: tuple[str | None, ...]
    outputs: tuple[Shape | None, ...] = ()
    output_dtypes: tuple[str | None, ...] = ()
    concrete: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()

    def shape(self, i: int) -> Shape | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def dtype(self, i: int) -> str | None:
        return self.dtypes[i] if i < len(self.dtypes) else None

    def out(self, i: int) -> Shape | None:
        return self.outputs[i] if i < len(self.outputs) else None

    def out_dtype(self, i: int) -> str | None:
        return self.output_dtypes[i] if i < len(self.output_dtypes) else None

    def arg(self, i: int) -> str:
        return self.concrete[i].strip() if i < len(self.concrete) else ""


def canonical_all(texts: Sequence[str]) -> tuple[str | None, ...]:
    return tuple(canonical_dtype(t) if isinstance(t, str) else None for t in texts)


def size(dtype: str) -> float:
    return SIZES[dtype]


def numel(shape: Shape | None) -> int:
    return prod(shape) if shape else 0


def nbytes(shape: Shape | None, dtype: str | None) -> float:
    """Bytes of a tensor; 0 for no tensor (a scalar, an absent optional input)."""
    if shape is None or dtype is None:
        return 0
    return numel(shape) * SIZES[dtype]


def work(flops: float, moved: float, model: str, unit: str, dtype: str) -> Work:
    return Work(flops=int(round(flops)), bytes=int(round(moved)), model=model, unit=unit,
                dtype=dtype)


def need(call: Call, count: int, what: str = "input shapes") -> NoModel | None:
    """NoModel when the first `count` inputs are not all tensors with a shape."""
    got = sum(1 for s in call.inputs[:count] if s is not None)
    if got < count:
        return NoModel(f"{call.label} needs {count} {what}, got {got}")
    return None


def need_dtype(call: Call, i: int) -> str | NoModel:
    dtype = call.dtype(i)
    if dtype is None:
        return NoModel(f"{call.label}: no known dtype for input {i}")
    return dtype


def broadcast(a: Shape, b: Shape) -> Shape | None:
    """NumPy broadcasting of two shapes; None when they do not broadcast."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def flag(text: str) -> bool | None:
    """A Concrete Inputs boolean: True, False, or None when it is not given."""
    low = text.strip().lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    return None


def int_list(text: str) -> tuple[int, ...] | None:
    """A Concrete Inputs int list ("[2, 2]", "2", "[]") -> (2, 2); None when not given."""
    body = text.strip().strip("[]() ")
    if not text.strip():
        return None
    if not body:
        return ()
    try:
        return tuple(int(p) for p in body.split(",") if p.strip())
    except ValueError:
        return None
